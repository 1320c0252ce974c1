/*
 * classify.c - tokenize a post, fetch its tokens' counts, score it
 *
 * Glue only: the post is hostile but reaches nothing here except the
 * bounded tokenizer; counts come through a struct classify_counts (the
 * list's token store, adapted in gate/app/tokcounts.c), so the core
 * knows nothing of storage.  Fails with -1 and a message (out of
 * memory, a count source error).  Never logs, never exits.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/classify.h"
#include "gate/util/buf.h"
#include "gate/util/xalloc.h"

int
classify_init(struct classify *c, size_t max_tokens)
{
	memset(c, 0, sizeof(*c));
	if ((c->toks = toklist_new(max_tokens)) == NULL)
		return -1;
	return 0;
}

void
classify_free(struct classify *c)
{
	toklist_free(c->toks);
	xfree(c->bt);
	memset(c, 0, sizeof(*c));
}

int
classify_post(struct classify *c, const struct classify_counts *cc,
    const struct bayes_params *bp, const struct tok_opts *to,
    const unsigned char *msg, size_t len, char *err, size_t errsz)
{
	uint32_t nspam, nham, spam, ham;
	size_t i, n;

	c->nbt = 0;
	memset(&c->r, 0, sizeof(c->r));
	if (msg != NULL && tok_post(msg, len, to, c->toks) < 0) {
		snprintf(err, errsz, "out of memory while tokenizing");
		return -1;
	}
	n = toklist_count(c->toks);
	if (n > c->capbt) {
		struct bayes_tok *nb;

		if ((nb = xrealloc(c->bt, n * sizeof(*nb))) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		c->bt = nb;
		c->capbt = n;
	}
	if (cc->msgcounts(cc->ctx, &nspam, &nham) < 0) {
		snprintf(err, errsz, "%s", cc->errmsg(cc->ctx));
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct bayes_tok *b = &c->bt[i];

		b->tok = toklist_get(c->toks, i, &b->len);
		if (cc->get(cc->ctx, b->tok, b->len, &spam, &ham) < 0) {
			snprintf(err, errsz, "%s", cc->errmsg(cc->ctx));
			return -1;
		}
		b->spam = spam;
		b->ham = ham;
		b->f = 0.5;
		b->used = 0;
	}
	c->nbt = n;
	if (bayes_score(bp, nspam, nham, c->bt, n, &c->r) < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	return 0;
}

/* most decisive first, then by token bytes */
static int
clue_cmp(const void *a, const void *b)
{
	const struct bayes_tok *x = *(const struct bayes_tok *const *)a;
	const struct bayes_tok *y = *(const struct bayes_tok *const *)b;
	double dx = fabs(x->f - 0.5), dy = fabs(y->f - 0.5);
	size_t n;
	int c;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	n = x->len < y->len ? x->len : y->len;
	if ((c = memcmp(x->tok, y->tok, n)) != 0)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int
classify_clues(const struct classify *c, size_t max, struct buf *out)
{
	const struct bayes_tok **v;
	size_t i, nv = 0;
	char num[96];
	int r, rc = 0;

	if (c->nbt == 0)
		return 0;
	if ((v = xcalloc(c->nbt, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < c->nbt; i++)
		if (c->bt[i].used)
			v[nv++] = &c->bt[i];
	qsort(v, nv, sizeof(*v), clue_cmp);
	for (i = 0; i < nv && i < max; i++) {
		r = snprintf(num, sizeof(num), " %.6f %u %u\n", v[i]->f,
		    (unsigned)v[i]->spam, (unsigned)v[i]->ham);
		if (buf_add(out, v[i]->tok, v[i]->len) < 0 ||
		    buf_add(out, num, (size_t)r) < 0) {
			rc = -1;
			break;
		}
	}
	xfree(v);
	return rc;
}
