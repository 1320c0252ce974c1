/*
 * bayes.h - Robinson's token probability, Fisher's chi-square combining
 *
 * Pure maths on counts: knows nothing of files or databases.  The chi-
 * square tails are computed in log form, so scores keep posts in strict
 * order however many tokens vote, and never collapse to exactly 0 or 1.
 */
#ifndef LG_BAYES_H
#define LG_BAYES_H

#include <stddef.h>
#include <stdint.h>

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
	unsigned nused;		/* tokens that voted */
};

/* Robinson's f(w) for a token seen in spam_w spam and ham_w ham posts */
double bayes_f(const struct bayes_params *p, uint32_t nspam, uint32_t nham,
    uint32_t spam_w, uint32_t ham_w);

/* ln Q(x2 | 2*nu): the upper tail of chi-square with an even number
 * (2*nu) of degrees of freedom, in log form (never underflows) */
double bayes_log_chi2q(double x2, unsigned nu);

/*
 * Score a post from its tokens' counts (nspam/nham: trained posts of
 * each class).  Fills toks[i].f and .used, reorders nothing.
 * Returns 0, or -1 when out of memory.
 */
int bayes_score(const struct bayes_params *p, uint32_t nspam, uint32_t nham,
    struct bayes_tok *toks, size_t n, struct bayes_result *r);

#endif
