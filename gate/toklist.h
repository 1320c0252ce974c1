/*
 * toklist.h - a set of distinct tokens, kept in first-seen order
 *
 * What the tokenizer fills, the classifier scores and the token store
 * learns: the store needs only this header, not the tokenizer's.
 */
#ifndef LG_TOKLIST_H
#define LG_TOKLIST_H

#include <stddef.h>

/* longest token kept in a toklist (prefix and all); longer ones are refused */
#define TOKLIST_MAX_BYTES	255

struct toklist;

struct toklist *toklist_new(size_t max_tokens);	/* NULL when out of memory */
void toklist_free(struct toklist *tl);
void toklist_reset(struct toklist *tl);		/* empty, keep memory */
size_t toklist_count(const struct toklist *tl);
/* the i-th token (0 <= i < count); NUL-terminated; length in *len_r */
const char *toklist_get(const struct toklist *tl, size_t i, size_t *len_r);
/* add one token: 1 added, 0 already there, set full or token longer than
 * TOKLIST_MAX_BYTES, -1 out of memory */
int toklist_add(struct toklist *tl, const void *tok, size_t len);
/* the same, also when the set is full: for the few tokens of the
 * evidence beyond words (gate/evidence, which bounds their number), that
 * a post must not crowd out with words of its own */
int toklist_add_over(struct toklist *tl, const void *tok, size_t len);
/* the index of a token in the set, or -1 when absent */
long toklist_find(const struct toklist *tl, const void *tok, size_t len);

/*
 * The vote budget's mark (tok_post, gate/bayes.h): 1 when token i came
 * first past its text's budget (a long text's later tokens), else 0
 * (and for i out of range).  A token is added unmarked; set_tail marks
 * it (i out of range: nothing).  Learning ignores the mark.
 */
int toklist_tail(const struct toklist *tl, size_t i);
void toklist_set_tail(struct toklist *tl, size_t i);

/*
 * The mark token i would have without word pairs (tok_opts.bigrams off):
 * the budgets counted over the other tokens alone.  Tune's twin without
 * pairs takes a post as its twin with pairs tokenized it, less the
 * pairs (gate/tune/tset.c), and these marks with it.
 */
int toklist_tail_words(const struct toklist *tl, size_t i);
void toklist_set_tail_words(struct toklist *tl, size_t i);

#endif
