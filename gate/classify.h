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

/* where the counts come from; each function returns 0 (get: 1 found, 0
 * absent with zero counts), or -1 with errmsg(ctx) saying why */
struct classify_counts {
	/* trained posts of each class */
	int (*msgcounts)(void *ctx, uint32_t *nspam_r, uint32_t *nham_r);
	/* posts of each class that had the token */
	int (*get)(void *ctx, const void *tok, size_t len, uint32_t *spam_r,
	    uint32_t *ham_r);
	const char *(*errmsg)(void *ctx);
	void *ctx;
};

struct classify {
	struct toklist *toks;	/* the post's tokens */
	struct bayes_tok *bt;	/* one per token, with counts, f and used */
	size_t nbt, capbt;
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
 * most max of them, into out: 0 or -1 */
int classify_clues(const struct classify *c, size_t max, struct buf *out);

#endif
