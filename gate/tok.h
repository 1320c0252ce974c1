/*
 * tok.h - turn a post into the set of tokens the classifier votes with
 *
 * Works on the events of mail_walk(): header fields tagged by name, body
 * words, URL and address pieces, CJK bigrams, anomaly tokens.  Bounded:
 * a word longer than max_token becomes a skip token, at most max_tokens
 * distinct tokens per post.  Never logs, never exits; -1 only when out
 * of memory.
 */
#ifndef LG_TOK_H
#define LG_TOK_H

#include <stddef.h>

#include "mail.h"

/* bump whenever the tokens for the same post change: token files record
 * it and refuse to be used by a tokenizer of another version */
#define TOK_VERSION 1

struct tok_opts {
	struct mail_limits lim;	/* parser limits (max_scan from the list) */
	size_t max_token;	/* LG_MAX_TOKEN_BYTES */
	size_t max_tokens;	/* LG_MAX_TOKENS_PER_POST */
};

void tok_opts_default(struct tok_opts *o);

/* a set of distinct tokens, kept in first-seen order */
struct toklist;

struct toklist *toklist_new(size_t max_tokens);	/* NULL when out of memory */
void toklist_free(struct toklist *tl);
void toklist_reset(struct toklist *tl);		/* empty, keep memory */
size_t toklist_count(const struct toklist *tl);
/* the i-th token (0 <= i < count); NUL-terminated; length in *len_r */
const char *toklist_get(const struct toklist *tl, size_t i, size_t *len_r);
/* add one token: 1 added, 0 already there or set full, -1 out of memory */
int toklist_add(struct toklist *tl, const void *tok, size_t len);

/* tokenize a whole post into out (which is reset first): 0, or -1 */
int tok_post(const unsigned char *msg, size_t len, const struct tok_opts *o,
    struct toklist *out);

#endif
