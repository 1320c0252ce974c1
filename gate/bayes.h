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
 * and ln(1 - I) are exact to rounding even when I is 1 - 1e-3000, and so
 * is ln |I - 0.5| = ln |qH - qS| - ln 2, taken from ln qH and ln qS,
 * even when both tails are 1e-3000 and I rounds to 0.5.  Then, with
 * E = BAYES_EDGE and phi(D) = 1 / (1 + ln(1 + D)) (phi(0) = 1, slope -1
 * at 0, strictly decreasing to 0 as D grows):
 *	score = 1 - E * phi(ln E - ln(1 - I))	if 1 - I <= E (spam side)
 *	score = E * phi(ln E - ln I)		if I <= E (ham side)
 *	score = 0.5 +- E * phi(ln E - ln |I - 0.5|)
 *				if 0 < |I - 0.5| <= E (middle; sign of
 *				qH - qS)
 *	score = 0.5				if qH = qS
 *	score = I				otherwise
 * The middle band is chosen by |I - 0.5| alone, however large the tails
 * (strong evidence both ways, or little either way).  Each squeezed band
 * meets score = I at its edge with equal value and slope 1, and the
 * middle tends to 0.5 as I tends to 0.5 (phi tends to 0), so the score
 * is continuous and strictly increasing in I: posts keep the order of
 * their exact Fisher indicator.
 * Within a band the order is that of its log input: ln(1 - I), ln I, or
 * the sign of qH - qS, then ln |qH - qS|.  Where two formulas meet they
 * read different inputs (ln I against ln(1 - I) or ln |qH - qS|), which
 * agree to a few units in the last place, as exp(ln I) agrees with I in
 * the plain band: the order holds up to that rounding.
 * Doubles bound the resolution.  The squeezed bands keep about 40
 * distinct scores per nat of evidence even at a million nats.  D cannot
 * pass 1.8e308, so no squeezed score comes nearer to 0, 0.5 or 1 than
 * E / 711: the score is never 0 or 1, and is 0.5 only when ln qH and
 * ln qS are equal doubles, which also happens when both lower tails are
 * below about 1e-308 (both upper tails then round to 1).  No tokens
 * voting gives 0.5.  Deterministic: tokens are summed in a fixed order
 * (by |f - 0.5|, then bytes).
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
	int vote_budget;	/* 1: the tail's votes scaled (below) */
};

/*
 * The vote budget.  A token past its text's budget (the tokenizer marks
 * it: TOK_PART_VOTES and TOK_BLOCK_VOTES in gate/tok.h) is in the post's
 * tail.  With vote_budget, when more than BAYES_TAIL_VOTES tail tokens
 * vote, their sums of ln f and ln (1 - f) are scaled to that many votes
 * (the chi-square's degrees of freedom with them): a long newsletter's
 * boilerplate and footers then weigh as a few tokens, not hundreds.
 * Off, every token votes in full, as without marks.
 */
#define BAYES_TAIL_VOTES	20

void bayes_params_default(struct bayes_params *p);

/* one token of a post, with its counts; f and used are filled in */
struct bayes_tok {
	const char *tok;
	size_t len;
	double spam, ham;	/* posts of each class that had the token */
	double f;		/* Robinson's f(w) */
	int used;		/* 1 if it voted */
	int tail;		/* 1: in the post's tail (vote_budget) */
};

struct bayes_result {
	double score;		/* 0 (ham) .. 1 (spam), strictly ordered */
	double log_qh;		/* ln of the chi-square tail for ham evidence */
	double log_qs;		/* ln of the chi-square tail for spam evidence */
	double log_i;		/* ln I (Fisher's indicator) */
	double log_1mi;		/* ln (1 - I) */
	unsigned nused;		/* tokens that voted */
};

/* Robinson's f(w) for a token seen in spam_w spam and ham_w ham posts
 * (doubles; negative or NaN counts read as 0) */
double bayes_f(const struct bayes_params *p, double nspam, double nham,
    double spam_w, double ham_w);

/*
 * A prior for one token other than robx: what another store (the site
 * store, gate/app/tokcounts.h) believes of it, f, counted as n posts.
 * n = 0 (or anything not a finite positive number, or f outside [0, 1])
 * means none: robx and robs as usual.
 */
struct bayes_prior {
	double f;
	double n;
};

/* Robinson's f(w) with the prior pr in place of robx and robs:
 * (pr->n pr->f + n p(w)) / (pr->n + n), n = spam_w + ham_w; the prior
 * alone when the counts say nothing.  pr NULL: bayes_f() */
double bayes_f_prior(const struct bayes_params *p, double nspam,
    double nham, double spam_w, double ham_w, const struct bayes_prior *pr);

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
int bayes_score(const struct bayes_params *p, double nspam, double nham,
    struct bayes_tok *toks, size_t n, struct bayes_result *r);

/* the same with a prior per token (priors[i] for toks[i]; NULL: none),
 * f(w) by bayes_f_prior */
int bayes_score_priors(const struct bayes_params *p, double nspam,
    double nham, struct bayes_tok *toks, const struct bayes_prior *priors,
    size_t n, struct bayes_result *r);

/* tokens of one post that share their counts (a tuner's compact form of
 * a post: most tokens of a post share a few count pairs) */
struct bayes_group {
	uint32_t spam, ham;	/* posts of each class that had the tokens */
	uint32_t n;		/* how many of the post's tokens have them */
	uint32_t tail;		/* 1: they are in the post's tail */
};

/*
 * Score a post given as groups of tokens with equal counts: the maths of
 * bayes_score, so the same score up to rounding (the sums run in
 * another order) and up to which of two equally extreme tokens votes
 * when max_tokens cuts between them (with the vote budget both take
 * the lower f first, then the head's token).  Returns 0, or -1 when out of
 * memory (only with max_tokens set and more than BAYES_GROUPS_STACK
 * groups that vote).
 */
#define BAYES_GROUPS_STACK	512
int bayes_score_groups(const struct bayes_params *p, uint32_t nspam,
    uint32_t nham, const struct bayes_group *g, size_t ng,
    struct bayes_result *r);

#endif
