/*
 * classify.h - score one post from its tokens' counts
 *
 * Glue between the tokenizer and the Bayes maths; the counts come from
 * whatever struct classify_counts points at (a list's token store in
 * practice, see gate/app/tokcounts.h), so the core never touches
 * storage.  Used by score, filter and show.  Never exits; -1 with a
 * message on error.
 */
#ifndef LG_CLASSIFY_H
#define LG_CLASSIFY_H

#include <stddef.h>

#include <stdint.h>

#include "gate/bayes.h"
#include "gate/tok.h"

struct buf;

/* one token's counts from a count source */
struct classify_count {
	double spam, ham;	/* the list's posts of each class that had
				 * the token */
	double site_spam, site_ham; /* the site store's (0 without one) */
};

/*
 * Where the counts come from; each function returns 0 (get: 1 found, 0
 * absent with zero counts), or -1 with errmsg(ctx) saying why.
 *
 * With a site store (site_msgcounts not NULL), a token the site store
 * has seen takes the site's f(w) (bayes_f on the site's counts) as its
 * prior, counted as site_weight posts, in place of robx and robs: the
 * site's say in a token fades as the list's own count of it grows
 * (listgate.conf(5), THE SITE STORE).
 */
struct classify_counts {
	/* trained posts of each class */
	int (*msgcounts)(void *ctx, double *nspam_r, double *nham_r);
	/* posts of each class that had the token */
	int (*get)(void *ctx, const void *tok, size_t len,
	    struct classify_count *c_r);
	const char *(*errmsg)(void *ctx);
	/* the site store's trained posts, or NULL: no site store */
	int (*site_msgcounts)(void *ctx, double *nspam_r, double *nham_r);
	double site_weight;	/* the site prior's strength, in posts */
	void *ctx;
};

struct classify {
	struct toklist *toks;	/* the post's tokens */
	struct bayes_tok *bt;	/* one per token, with counts, f and used */
	struct bayes_prior *pri; /* one per token: the site's f and weight
				 * (weight 0: none) */
	size_t nbt, capbt;
	int site;		/* a site store was asked */
	struct bayes_result r;
};

/* set up / release a reusable classifier state (batch mode reuses it) */
int classify_init(struct classify *c, size_t max_tokens);
void classify_free(struct classify *c);

/* tokenize msg and score it; msg NULL: score the tokens already in
 * c->toks (a caller that adds evidence tokens fills it first, see
 * gate/app/posttok.h).  0, or -1 with err */
int classify_post(struct classify *c, const struct classify_counts *cc,
    const struct bayes_params *bp, const struct tok_opts *to,
    const unsigned char *msg, size_t len, char *err, size_t errsz);

/* the voting tokens, most decisive first, as "tok f spam ham" lines, at
 * most max of them, into out: 0 or -1.  (The lines a held post keeps:
 * moderation reads them so.) */
int classify_clues(const struct classify *c, size_t max, struct buf *out);

/* the same, and with a site store each line goes on with "site F W": F
 * the site's f(w) for the token, W the share of the token's evidence
 * that came from the site (prior weight / (prior weight + the list's
 * own count), 1 when the list has none); "site - 0" when the site never
 * saw the token (score -v) */
int classify_clues_site(const struct classify *c, size_t max,
    struct buf *out);

#endif
