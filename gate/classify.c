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
	xfree(c->pri);
	memset(c, 0, sizeof(*c));
}

int
classify_post(struct classify *c, const struct classify_counts *cc,
    const struct bayes_params *bp, const struct tok_opts *to,
    const unsigned char *msg, size_t len, char *err, size_t errsz)
{
	double nspam, nham, snspam = 0, snham = 0;
	struct classify_count k;
	size_t i, j, n;

	c->nbt = 0;
	c->site = cc->site_msgcounts != NULL;
	memset(&c->r, 0, sizeof(c->r));
	if (msg != NULL && tok_post(msg, len, to, c->toks) < 0) {
		snprintf(err, errsz, "out of memory while tokenizing");
		return -1;
	}
	n = toklist_count(c->toks);
	if (n > c->capbt) {
		struct bayes_tok *nb;
		struct bayes_prior *np;

		if ((nb = xrealloc(c->bt, n * sizeof(*nb))) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		c->bt = nb;
		if ((np = xrealloc(c->pri, n * sizeof(*np))) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		c->pri = np;
		c->capbt = n;
	}
	if (cc->msgcounts(cc->ctx, &nspam, &nham) < 0 || (c->site &&
	    cc->site_msgcounts(cc->ctx, &snspam, &snham) < 0)) {
		snprintf(err, errsz, "%s", cc->errmsg(cc->ctx));
		return -1;
	}
	for (i = 0, j = 0; i < n; i++) {
		struct bayes_tok *b = &c->bt[j];

		b->tok = toklist_get(c->toks, i, &b->len);
		memset(&k, 0, sizeof(k));
		if (cc->get(cc->ctx, b->tok, b->len, &k) < 0) {
			snprintf(err, errsz, "%s", cc->errmsg(cc->ctx));
			return -1;
		}
		/* a word pair never seen does not vote (tok_is_pair) */
		if (k.spam == 0 && k.ham == 0 && k.site_spam == 0 &&
		    k.site_ham == 0 && tok_is_pair(b->tok, b->len))
			continue;
		b->spam = k.spam;
		b->ham = k.ham;
		/* the site's belief, where it has one, as the prior */
		c->pri[j].f = 0.5;
		c->pri[j].n = 0;
		if (c->site && k.site_spam + k.site_ham > 0) {
			c->pri[j].f = bayes_f(bp, snspam, snham, k.site_spam,
			    k.site_ham);
			c->pri[j].n = cc->site_weight;
		}
		b->f = 0.5;
		b->used = 0;
		b->tail = toklist_tail(c->toks, i);
		j++;
	}
	c->nbt = j;
	if (bayes_score_priors(bp, nspam, nham, c->bt, c->site ? c->pri :
	    NULL, j, &c->r) < 0) {
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

/* a count for people: whole as an integer, else with two decimals (at
 * most 22 bytes whatever v is) */
static int
put_count(char *p, size_t n, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
		return snprintf(p, n, " %.0f", v);
	if (isfinite(v) && fabs(v) < 1e12)
		return snprintf(p, n, " %.2f", v);
	return snprintf(p, n, " %.6g", v);
}

/* the clue lines, with the site's part when site is set */
static int
clues(const struct classify *c, size_t max, int site, struct buf *out)
{
	const struct bayes_tok **v;
	const struct bayes_prior *pr;
	size_t i, nv = 0, len;
	double own, share;
	char num[256];
	int rc = 0;

	if (c->nbt == 0)
		return 0;
	if ((v = xcalloc(c->nbt, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < c->nbt; i++)
		if (c->bt[i].used)
			v[nv++] = &c->bt[i];
	qsort(v, nv, sizeof(*v), clue_cmp);
	for (i = 0; i < nv && i < max; i++) {
		/* f, two counts and the site's part take under 100 bytes:
		 * num cannot fill */
		len = (size_t)snprintf(num, sizeof(num), " %.6f", v[i]->f);
		len += (size_t)put_count(num + len, sizeof(num) - len,
		    v[i]->spam);
		len += (size_t)put_count(num + len, sizeof(num) - len,
		    v[i]->ham);
		pr = site && c->site ? &c->pri[v[i] - c->bt] : NULL;
		if (pr != NULL && pr->n > 0) {
			/* as bayes_f_prior: the prior alone without counts */
			own = v[i]->spam + v[i]->ham;
			share = own > 0 ? pr->n / (pr->n + own) : 1;
			len += (size_t)snprintf(num + len, sizeof(num) - len,
			    " site %.6f %.2f", pr->f, share);
		} else if (pr != NULL)
			len += (size_t)snprintf(num + len, sizeof(num) - len,
			    " site - 0");
		len += (size_t)snprintf(num + len, sizeof(num) - len, "\n");
		if (buf_add(out, v[i]->tok, v[i]->len) < 0 ||
		    buf_add(out, num, len) < 0) {
			rc = -1;
			break;
		}
	}
	xfree(v);
	return rc;
}

int
classify_clues(const struct classify *c, size_t max, struct buf *out)
{
	return clues(c, max, 0, out);
}

int
classify_clues_site(const struct classify *c, size_t max, struct buf *out)
{
	return clues(c, max, 1, out);
}
