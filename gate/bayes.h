/*
 * bayes.h - Robinson's token probability, Fisher's chi-square combining
 *
 * Pure maths on counts: knows nothing of files or databases.  The chi-
 * square tails are computed in log form, so scores keep posts in strict
 * order however many tokens vote, and never collapse to exactly 0 or 1.
 *
 * The score.  With n voting tokens, qS = Q(-2 sum ln(1-f), 2n) and
 * qH = Q(-2 sum ln f, 2n), Fisher's indicator is
 *	I = (1 + qH - qS) / 2 = (qH + pS) / 2,	1 - I = (pH + qS) / 2
 * where pX = 1 - qX is the lower tail.  All four tails are computed in
 * log form (the lower tail by its own series when it is tiny), so ln I
 * and ln(1 - I) are exact to rounding even when I is 1 - 1e-3000.  Then,
 * with E = BAYES_EDGE and phi(D) = 1 / (1 + ln(1 + D)) (phi(0) = 1,
 * strictly decreasing to 0):
 *	score = I				if E < I < 1 - E
 *	score = 1 - E * phi(ln E - ln(1 - I))	if 1 - I <= E (spam side)
 *	score = E * phi(ln E - ln I)		if I <= E (ham side)
 *	score = 0.5 +- E * phi(ln E - ln |I - 0.5|)
 *				if |I - 0.5| <= E and qH, qS <= E
 * where I - 0.5 = (qH - qS) / 2 (sign of ln qH - ln qS), the case of
 * strong evidence both ways, where both tails vanish.  The score is
 * continuous at every join and strictly increasing in I, so posts keep
 * the order of their exact Fisher indicator, never reach 0 or 1, and
 * collapse to 0.5 only when qH = qS exactly (the logarithmic squeeze
 * keeps about 40 doubles per nat of evidence even at a million nats).
 * In each squeezed band the order is that of the log tails: by
 * ln(1 - I), ln I, or ln |qH - qS|.  No tokens voting gives 0.5.
 * Deterministic:
 * tokens are summed in a fixed order (by |f - 0.5|, then bytes).
 * Print scores with BAYES_SCORE_FMT: the squeezed ends need 17 digits.
 */
#ifndef LG_BAYES_H
#define LG_BAYES_H

#include <stddef.h>
#include <stdint.h>

/* width of the squeezed ends of the score range (see above) */
#define BAYES_EDGE	1e-6
/* enough digits to keep every distinct score distinct in text output */
#define BAYES_SCORE_FMT	"%.17g"

struct bayes_params {
	double robs;		/* Robinson's strength s of the prior */
	double robx;		/* Robinson's prior x for an unknown token */
	double min_dev;		/* tokens with |f - 0.5| < min_dev do not vote */
	unsigned max_tokens;	/* at most this many (most extreme) tokens vote; 0 = all */
};

void bayes_params_default(struct bayes_params *p);

/* one token of a post, with its counts; f and used are filled in */
struct bayes_tok {
	const char *tok;
	size_t len;
	uint32_t spam, ham;	/* posts of each class that had the token */
	double f;		/* Robinson's f(w) */
	int used;		/* 1 if it voted */
};

struct bayes_result {
	double score;		/* 0 (ham) .. 1 (spam), strictly ordered */
	double log_qh;		/* ln of the chi-square tail for ham evidence */
	double log_qs;		/* ln of the chi-square tail for spam evidence */
	double log_i;		/* ln I (Fisher's indicator) */
	double log_1mi;		/* ln (1 - I) */
	unsigned nused;		/* tokens that voted */
};

/* Robinson's f(w) for a token seen in spam_w spam and ham_w ham posts */
double bayes_f(const struct bayes_params *p, uint32_t nspam, uint32_t nham,
    uint32_t spam_w, uint32_t ham_w);

/* ln Q(x2 | 2*nu): the upper tail of chi-square with an even number
 * (2*nu) of degrees of freedom, in log form (never underflows) */
double bayes_log_chi2q(double x2, unsigned nu);
/* both tails at once, each accurate in log form: *lq = ln Q, *lp =
 * ln (1 - Q) (the lower tail, by its own series when Q is near 1) */
void bayes_log_chi2(double x2, unsigned nu, double *lq, double *lp);
/* the strictly ordered score from ln I, ln (1 - I), ln qH and ln qS
 * (formula above) */
double bayes_squeeze(double log_i, double log_1mi, double log_qh,
    double log_qs);

/*
 * Score a post from its tokens' counts (nspam/nham: trained posts of
 * each class).  Fills toks[i].f and .used, reorders nothing.
 * Returns 0, or -1 when out of memory.
 */
int bayes_score(const struct bayes_params *p, uint32_t nspam, uint32_t nham,
    struct bayes_tok *toks, size_t n, struct bayes_result *r);

#endif
