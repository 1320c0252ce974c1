/*
 * cv.c - out-of-fold counts for every post, as groups, and scoring them
 *
 * See cv.h.  Counts are exact: a token's out-of-fold count is its count
 * over all posts less its count over the post's fold, what learning the
 * other folds into a fresh token file would store.  Bounded by the tset
 * (its posts and ids); -1 only when out of memory.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gate/tune/cv.h"
#include "gate/tune/tset.h"
#include "gate/util/xalloc.h"

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* room for need groups in cv->g: 0 or -1 */
static int
groups_room(struct cv *cv, size_t *capg, size_t need)
{
	struct bayes_group *ng;
	size_t nc = *capg ? *capg : 65536;

	if (need <= *capg)
		return 0;
	while (nc < need)
		nc *= 2;
	if ((ng = xrealloc(cv->g, nc * sizeof(*ng))) == NULL)
		return -1;
	cv->g = ng;
	*capg = nc;
	return 0;
}

/* a token's out-of-fold counts and whether it is in the tail, as one
 * sortable key (a count never reaches 2^31: tset bounds the posts) */
#define KEY_TAIL	((uint64_t)1 << 63)

/* one post's groups from its (tail | spam << 32 | ham) keys (sorted
 * here), written at g[at]: how many */
static uint32_t
make_groups(struct bayes_group *g, uint64_t *pairs, size_t n)
{
	size_t i;
	uint32_t k = 0;

	qsort(pairs, n, sizeof(*pairs), u64_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && pairs[i] == pairs[i - 1]) {
			g[k - 1].n++;
			continue;
		}
		g[k].spam = (uint32_t)((pairs[i] & ~KEY_TAIL) >> 32);
		g[k].ham = (uint32_t)pairs[i];
		g[k].n = 1;
		g[k].tail = (pairs[i] & KEY_TAIL) != 0;
		k++;
	}
	return k;
}

int
cv_build(struct cv *cv, const struct tset *ts, unsigned folds)
{
	uint32_t *cs = NULL, *ch = NULL, *fs = NULL, *fh = NULL;
	uint64_t *pairs = NULL;
	size_t i, j, m, maxn = 1, capg = 0, ng = 0, nt = ts->ntokens + 1;
	uint32_t tot_s = 0, tot_h = 0;
	unsigned f;
	int rc = -1;

	memset(cv, 0, sizeof(*cv));
	cv->n = ts->n;
	cv->folds = folds ? folds : 1;
	for (i = 0; i < ts->n; i++)
		if (ts->posts[i].n > maxn)
			maxn = ts->posts[i].n;
	cs = xcalloc(nt, sizeof(*cs));
	ch = xcalloc(nt, sizeof(*ch));
	fs = xcalloc(nt, sizeof(*fs));
	fh = xcalloc(nt, sizeof(*fh));
	pairs = xcalloc(maxn, sizeof(*pairs));
	cv->gofs = xcalloc(ts->n + 1, sizeof(*cv->gofs));
	cv->gcnt = xcalloc(ts->n + 1, sizeof(*cv->gcnt));
	cv->fold = xcalloc(ts->n + 1, sizeof(*cv->fold));
	cv->spam = xcalloc(ts->n + 1, sizeof(*cv->spam));
	cv->nspam = xcalloc(cv->folds, sizeof(*cv->nspam));
	cv->nham = xcalloc(cv->folds, sizeof(*cv->nham));
	if (cs == NULL || ch == NULL || fs == NULL || fh == NULL ||
	    pairs == NULL || cv->gofs == NULL || cv->gcnt == NULL ||
	    cv->fold == NULL || cv->spam == NULL || cv->nspam == NULL ||
	    cv->nham == NULL)
		goto out;
	/* learn every post once */
	for (i = 0; i < ts->n; i++) {
		const struct tset_post *p = &ts->posts[i];
		uint32_t *c = p->spam ? cs : ch;

		for (j = 0; j < p->n; j++)
			c[p->ids[j]]++;
		if (p->spam)
			tot_s++;
		else
			tot_h++;
		cv->fold[i] = p->fold % cv->folds;
		cv->spam[i] = p->spam;
	}
	/* fold by fold: the fold's own counts, so each of its posts sees
	 * the totals less them; then forget them */
	for (f = 0; f < cv->folds; f++) {
		cv->nspam[f] = tot_s;
		cv->nham[f] = tot_h;
		for (i = 0; i < ts->n; i++) {
			const struct tset_post *p = &ts->posts[i];

			if (cv->fold[i] != f)
				continue;
			for (j = 0; j < p->n; j++)
				(p->spam ? fs : fh)[p->ids[j]]++;
			if (p->spam)
				cv->nspam[f]--;
			else
				cv->nham[f]--;
		}
		for (i = 0; i < ts->n; i++) {
			const struct tset_post *p = &ts->posts[i];

			if (cv->fold[i] != f)
				continue;
			for (j = 0, m = 0; j < p->n; j++) {
				uint32_t id = p->ids[j];
				uint32_t s = cs[id] - fs[id], h = ch[id] - fh[id];

				/* a word pair the other folds never saw does
				 * not vote, as in classify */
				if (s == 0 && h == 0 && id < ts->npair &&
				    ts->pair[id])
					continue;
				pairs[m++] = (uint64_t)s << 32 | h |
				    (j >= p->nhead ? KEY_TAIL : 0);
			}
			if (groups_room(cv, &capg, ng + p->n + 1) < 0)
				goto out;
			cv->gofs[i] = ng;
			cv->gcnt[i] = make_groups(cv->g + ng, pairs, m);
			ng += cv->gcnt[i];
		}
		for (i = 0; i < ts->n; i++) {
			const struct tset_post *p = &ts->posts[i];

			if (cv->fold[i] != f)
				continue;
			for (j = 0; j < p->n; j++)
				fs[p->ids[j]] = fh[p->ids[j]] = 0;
		}
	}
	rc = 0;
out:
	xfree(cs);
	xfree(ch);
	xfree(fs);
	xfree(fh);
	xfree(pairs);
	if (rc < 0)
		cv_free(cv);
	return rc;
}

void
cv_free(struct cv *cv)
{
	xfree(cv->g);
	xfree(cv->gofs);
	xfree(cv->gcnt);
	xfree(cv->fold);
	xfree(cv->spam);
	xfree(cv->nspam);
	xfree(cv->nham);
	memset(cv, 0, sizeof(*cv));
}

int
cv_score(const struct cv *cv, const struct bayes_params *p, double *scores)
{
	struct bayes_result r;
	size_t i;

	for (i = 0; i < cv->n; i++) {
		unsigned f = cv->fold[i];

		if (bayes_score_groups(p, cv->nspam[f], cv->nham[f],
		    cv->g + cv->gofs[i], cv->gcnt[i], &r) < 0)
			return -1;
		scores[i] = r.score;
	}
	return 0;
}
