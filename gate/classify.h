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
	double spam, ham;	/* posts of each class that had the token
				 * (fractional when a site store's weighted
				 * counts are in them) */
	double site_spam, site_ham; /* the part of spam and ham that came
				 * from the site store (0 without one) */
};

/* where the counts come from; each function returns 0 (get: 1 found, 0
 * absent with zero counts), or -1 with errmsg(ctx) saying why */
struct classify_counts {
	/* trained posts of each class */
	int (*msgcounts)(void *ctx, double *nspam_r, double *nham_r);
	/* posts of each class that had the token */
	int (*get)(void *ctx, const void *tok, size_t len,
	    struct classify_count *c_r);
	const char *(*errmsg)(void *ctx);
	void *ctx;
	int site;		/* 1: counts combine a site store's (clues then
				 * say how much came from it) */
};

struct classify {
	struct toklist *toks;	/* the post's tokens */
	struct bayes_tok *bt;	/* one per token, with counts, f and used */
	struct classify_count *cnt; /* one per token: its counts and their
				 * site part */
	size_t nbt, capbt;
	int site;		/* the counts came with site parts */
	struct bayes_result r;
};

/* set up / release a reusable classifier state (batch mode reuses it) */
int classify_init(struct classify *c, size_t max_tokens);
void classify_free(struct classify *c);

/* tokenize msg and score it: 0, or -1 with err */
int classify_post(struct classify *c, const struct classify_counts *cc,
    const struct bayes_params *bp, const struct tok_opts *to,
    const unsigned char *msg, size_t len, char *err, size_t errsz);

/* the voting tokens, most decisive first, as "tok f spam ham" lines (with
 * a site store: "tok f spam ham site S H", S and H the parts of spam and
 * ham that came from it), at most max of them, into out: 0 or -1.
 * Whole counts print as integers, fractional ones with two decimals. */
int classify_clues(const struct classify *c, size_t max, struct buf *out);

#endif
