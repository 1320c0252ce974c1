/*
 * classify.h - score one post against a list's token store, and verdicts
 *
 * Glue between the tokenizer, the token store and the Bayes maths; used
 * by score, filter and show.  Never exits; -1 with a message on error.
 */
#ifndef LG_CLASSIFY_H
#define LG_CLASSIFY_H

#include <stddef.h>

#include "gate/bayes.h"
#include "gate/tok.h"
#include "db/tokdb.h"

enum verdict { VERDICT_HAM, VERDICT_UNSURE, VERDICT_SPAM };

/* ham below ham_cutoff, spam at or above spam_cutoff, unsure between */
enum verdict verdict_of(double score, double ham_cutoff, double spam_cutoff);
const char *verdict_name(enum verdict v);	/* "ham" "unsure" "spam" */

struct classify {
	struct toklist *toks;	/* the post's tokens */
	struct bayes_tok *bt;	/* one per token, with counts, f and used */
	size_t nbt, capbt;
	struct bayes_result r;
};

/* set up / release a reusable classifier state (batch mode reuses it) */
int classify_init(struct classify *c, size_t max_tokens);
void classify_free(struct classify *c);

/* tokenize msg and score it: 0, or -1 with err */
int classify_post(struct classify *c, struct tokdb *db,
    const struct bayes_params *bp, const struct tok_opts *to,
    const unsigned char *msg, size_t len, char *err, size_t errsz);

/* the voting tokens, most decisive first, as "tok f spam ham" lines, at
 * most max of them, into out: 0 or -1 */
int classify_clues(const struct classify *c, size_t max, struct buf *out);

#endif
