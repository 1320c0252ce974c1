/*
 * cv.h - k-fold cross-validation over a tset: each post scored with the
 * counts the posts of the other folds give, as a token file trained on
 * them alone would give them
 *
 * The counts are learnt once for all posts and unlearnt fold by fold
 * (never re-tokenized, no token file), and each post is kept as groups
 * of tokens sharing their out-of-fold counts (bayes_score_groups), so
 * scoring every post under another set of classifier parameters costs
 * a pass over a few groups per post.  -1 only when out of memory; never
 * prints, never exits.
 */
#ifndef LG_CV_H
#define LG_CV_H

#include <stddef.h>
#include <stdint.h>

#include "gate/bayes.h"

struct tset;

struct cv {
	size_t n;			/* posts (those of the tset) */
	unsigned folds;
	struct bayes_group *g;		/* every post's groups */
	size_t *gofs;			/* post i: g[gofs[i] .. + gcnt[i]) */
	uint32_t *gcnt;
	unsigned *fold;			/* post i's fold */
	int *spam;			/* post i's class */
	uint32_t *nspam, *nham;		/* per fold: posts outside it */
};

/* the groups of every post of ts (after tset_finish, which dealt the
 * folds): 0, or -1 when out of memory */
int cv_build(struct cv *cv, const struct tset *ts, unsigned folds);
void cv_free(struct cv *cv);

/* every post's out-of-fold score under p, into scores[cv->n]: 0, or -1
 * when out of memory */
int cv_score(const struct cv *cv, const struct bayes_params *p,
    double *scores);

#endif
