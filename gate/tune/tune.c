/*
 * tune.c - cross-validated search of a list's classifier parameters and
 * cutoffs
 *
 * See tune.h.  Works on the tset's token ids only (the posts were
 * tokenized once); every candidate costs one pass of bayes_score_groups
 * over the posts' count groups.  Deterministic: folds, the search order
 * and the bootstrap's generator are fixed.  -1 only when out of memory
 * or with too few posts.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/tune/cv.h"
#include "gate/tune/tset.h"
#include "gate/tune/tune.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"

/* the grids, after bogotune's: coarse values of each parameter */
static const double robs_grid[] = { 0.01, 0.03, 0.1, 0.3, 1, 3 };
static const double min_dev_grid[] = { 0, 0.05, 0.1, 0.2, 0.3, 0.4 };
static const double robx_grid[] = { 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65,
    0.7 };
static const unsigned max_tokens_grid[] = { 0, 15, 25, 50, 100, 200 };
/* the fine grid around the best: robs times these, min_dev and robx
 * plus these */
static const double robs_fine[] = { 0.5, 0.7, 1, 1.4, 2 };
static const double step_fine[] = { -0.025, 0, 0.025 };

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_SETTINGS	256	/* parameter sets remembered (no rescoring) */

/* a parameter set and how it rates at its best cutoff */
struct cand {
	struct bayes_params bp;
	struct cutoff_eval e;		/* at its best cutoff, these posts */
	struct cutoff_eval nest;	/* cutoffs chosen fold by fold on the
					 * other folds (cutoff_nested) */
	double cutoff;
	double roca;
	double tail;			/* cutoff_tail (-1: not a one-target
					 * goal) */
};

struct search {
	const struct cv *cv;
	const struct tune_opts *o;
	double *scores;		/* scratch, one per post */
	unsigned *part;		/* TUNE_PARTS partitions for cutoff_nested */
	struct cand seen[MAX_SETTINGS];
	unsigned nseen;
	unsigned done, total;	/* for progress */
};

int
tune_enough(size_t nham, size_t nspam, unsigned folds, char *why,
    size_t whysz)
{
	size_t need = folds > TUNE_MIN_POSTS ? folds : TUNE_MIN_POSTS;

	if (nham >= need && nspam >= need)
		return 1;
	snprintf(why, whysz, "needs more data: the journal has %zu ham and "
	    "%zu spam (each post counted once), tune needs at least %zu of "
	    "each: with fewer, one post judged wrongly moves a rate by more "
	    "than %d points, and each of the %u folds must hold both classes",
	    nham, nspam, need, (int)(100 / TUNE_MIN_POSTS), folds);
	return 0;
}

static int
same_params(const struct bayes_params *a, const struct bayes_params *b)
{
	return a->robs == b->robs && a->robx == b->robx &&
	    a->min_dev == b->min_dev && a->max_tokens == b->max_tokens &&
	    a->vote_budget == b->vote_budget;
}

/*
 * a - b: strictly better (<0), equal (0) or worse.  With one target, by
 * how the posts near it rank (cutoff_tail) first: the errors at one
 * cutoff rest on a post or two at a young list's edge, and choosing
 * among some 180 settings by them picks the luckiest (judged on the
 * training half's own lists, tests/bench/tunerule.py).
 */
static int
cand_cmp(const struct cand *a, const struct cand *b)
{
	int c;

	if (a->tail >= 0 && b->tail >= 0 && a->tail != b->tail)
		return a->tail < b->tail ? -1 : 1;
	c = cutoff_cmp(&a->nest, &b->nest);

	if (c != 0)
		return c;
	if (a->roca != b->roca)
		return a->roca < b->roca ? -1 : 1;
	return 0;
}

/* clamp a parameter set to the keys' ranges (listcfg/keys.c) and to
 * values a configuration file writes back exactly */
static void
clamp(struct bayes_params *p)
{
	char buf[32];

	if (p->robs < 0.001)
		p->robs = 0.001;
	if (p->robs > 1000)
		p->robs = 1000;
	if (p->robx < 0.01)
		p->robx = 0.01;
	if (p->robx > 0.99)
		p->robx = 0.99;
	if (p->min_dev < 0)
		p->min_dev = 0;
	if (p->min_dev > 0.49)
		p->min_dev = 0.49;
	if (p->max_tokens > LG_MAX_TOKENS_PER_POST)
		p->max_tokens = LG_MAX_TOKENS_PER_POST;
	snprintf(buf, sizeof(buf), "%.4g", p->robs);
	p->robs = strtod(buf, NULL);
	snprintf(buf, sizeof(buf), "%.4g", p->robx);
	p->robx = strtod(buf, NULL);
	snprintf(buf, sizeof(buf), "%.4g", p->min_dev);
	p->min_dev = strtod(buf, NULL);
}

/* score every post under bp and rate it at its best cutoff (remembered:
 * a set met again is not scored again); NULL out of memory */
static const struct cand *
rate(struct search *s, const struct bayes_params *bp0)
{
	struct bayes_params bp = *bp0;
	struct cutoff_set cs;
	struct cutoff_pick pk;
	struct cand *c;
	unsigned i;

	for (i = 0; i < s->nseen; i++)
		if (same_params(&s->seen[i].bp, &bp))
			return &s->seen[i];
	if (cv_score(s->cv, &bp, s->scores) < 0 ||
	    cutoff_set_init(&cs, s->scores, s->cv->spam, s->cv->n) < 0)
		return NULL;
	cutoff_best(&cs, &s->o->goal, s->o->ham_cutoff, &pk);
	c = &s->seen[s->nseen < MAX_SETTINGS ? s->nseen++ : MAX_SETTINGS - 1];
	c->bp = bp;
	c->e = pk.e;
	c->cutoff = pk.cutoff;
	c->roca = cutoff_roca(&cs);
	c->tail = cutoff_tail(&cs, &s->o->goal);
	cutoff_set_free(&cs);
	if (cutoff_nested(s->scores, s->cv->spam, s->cv->n, s->part,
	    TUNE_PARTS, s->cv->folds, &s->o->goal, &s->o->goal,
	    &c->nest) < 0)
		return NULL;
	s->done++;
	if (s->o->progress != NULL)
		s->o->progress(s->o->pctx, "scoring settings", s->done,
		    s->total > s->done ? s->total : s->done);
	return c;
}

/* rate bp; keep it in *best when it is strictly better: 0, or -1 */
static int
consider(struct search *s, struct bayes_params bp, struct cand *best)
{
	const struct cand *c;

	clamp(&bp);
	if ((c = rate(s, &bp)) == NULL)
		return -1;
	if (cand_cmp(c, best) < 0)
		*best = *c;
	return 0;
}

/*
 * The search, from the defaults (never from the current parameters, so
 * that it visits the same settings whatever a list has now, and its
 * answer, once applied, is found again) with the vote budget on or off:
 * the best candidate in *best.
 */
static int
search_one(struct search *s, int budget, struct cand *best)
{
	struct bayes_params bp;
	const struct cand *c;
	size_t i, j, k;

	bayes_params_default(&bp);
	bp.vote_budget = budget;
	if ((c = rate(s, &bp)) == NULL)
		return -1;
	*best = *c;
	/* coarse: robs by min_dev, then robx, then max_tokens */
	for (i = 0; i < NELEM(robs_grid); i++)
		for (j = 0; j < NELEM(min_dev_grid); j++) {
			bp.robs = robs_grid[i];
			bp.min_dev = min_dev_grid[j];
			if (consider(s, bp, best) < 0)
				return -1;
		}
	bp = best->bp;
	for (i = 0; i < NELEM(robx_grid); i++) {
		bp.robx = robx_grid[i];
		if (consider(s, bp, best) < 0)
			return -1;
	}
	bp = best->bp;
	for (i = 0; i < NELEM(max_tokens_grid); i++) {
		bp.max_tokens = max_tokens_grid[i];
		if (consider(s, bp, best) < 0)
			return -1;
	}
	/* fine, around the best so far */
	{
		struct bayes_params mid = best->bp;

		for (i = 0; i < NELEM(robs_fine); i++)
			for (j = 0; j < NELEM(step_fine); j++)
				for (k = 0; k < NELEM(step_fine); k++) {
					bp = mid;
					bp.robs = mid.robs * robs_fine[i];
					bp.min_dev = mid.min_dev + step_fine[j];
					bp.robx = mid.robx + step_fine[k];
					if (consider(s, bp, best) < 0)
						return -1;
				}
	}
	return 0;
}

/* the search without the vote budget and with it: the best of the two
 * (without it on a tie) */
static int
search(struct search *s, struct cand *best)
{
	struct cand with;

	if (search_one(s, 0, best) < 0 || search_one(s, 1, &with) < 0)
		return -1;
	if (cand_cmp(&with, best) < 0)
		*best = with;
	return 0;
}

/*
 * The goal to choose the final cutoff by.  A cutoff chosen to just meet
 * a target on these posts meets it on new posts less often (it sits at
 * the edge of what they allow), so the targets are tightened step by
 * step until cutoffs chosen by them fold by fold meet the real targets
 * on the folds left out (cutoff_nested); the cost alone needs nothing.
 * A tightened goal that no cutoff meets on all the posts (cs) is not
 * taken, nor any tighter: its cutoff would only come closest to it, and
 * could miss the real targets where another cutoff meets them.  *pick
 * gets the goal, *nest what it gave.  0, or -1 out of memory.
 */
static int
calibrate(const struct tune_opts *o, const struct cv *cv,
    const unsigned *part, const double *scores, const struct cutoff_set *cs,
    struct cutoff_goal *pick, struct cutoff_eval *nest)
{
	static const double tight[] = { 1, 0.8, 0.6, 0.4, 0.2, 0 };
	struct cutoff_goal g, bestg = o->goal;
	struct cutoff_eval e, beste;
	struct cutoff_pick pk;
	size_t i;

	for (i = 0; i < NELEM(tight); i++) {
		g = o->goal;
		if (g.max_spam_passed >= 0)
			g.max_spam_passed *= tight[i];
		if (g.max_ham_held >= 0)
			g.max_ham_held *= tight[i];
		if (i > 0) {
			cutoff_best(cs, &g, o->ham_cutoff, &pk);
			if (pk.e.excess > 0)
				break;
		}
		if (cutoff_nested(scores, cv->spam, cv->n, part, TUNE_PARTS,
		    cv->folds, &g, &o->goal, &e) < 0)
			return -1;
		if (i == 0 || e.excess < beste.excess) {
			bestg = g;
			beste = e;
		}
		if (e.excess == 0 || (o->goal.max_spam_passed < 0 &&
		    o->goal.max_ham_held < 0))
			break;
	}
	*pick = bestg;
	*nest = beste;
	return 0;
}

/* the errors of each post under scores and cutoff c: 1 misjudged */
static void
errors(const double *scores, const int *spam, size_t n, double c,
    unsigned char *err)
{
	size_t i;

	for (i = 0; i < n; i++)
		err[i] = spam[i] ? scores[i] < c : scores[i] >= c;
}

/* one feature family's posts: their folds' counts, the search over
 * them and its best */
struct fam {
	struct cv cv;
	int have_cv;
	struct search *s;
	struct cand best;
};

/* build f from ts and search it, progress counting on from done of
 * total: 0, or -1 out of memory (fam_free either way) */
static int
fam_search(struct fam *f, const struct tset *ts, const struct tune_opts *o,
    unsigned done, unsigned total)
{
	const struct cand *c;

	if ((f->s = xcalloc(1, sizeof(*f->s))) == NULL)
		return -1;
	if (o->progress != NULL)
		o->progress(o->pctx, "counting folds", 0, 1);
	if (cv_build(&f->cv, ts, o->folds) < 0)
		return -1;
	f->have_cv = 1;
	f->s->cv = &f->cv;
	f->s->o = o;
	f->s->done = done;
	f->s->total = total;
	if ((f->s->scores = xcalloc(ts->n + 1, sizeof(double))) == NULL ||
	    (f->s->part = xcalloc((size_t)TUNE_PARTS * ts->n + 1,
	    sizeof(*f->s->part))) == NULL ||
	    cutoff_partitions(f->cv.spam, ts->n, TUNE_PARTS, f->cv.folds,
	    f->s->part) < 0)
		return -1;
	/* the current parameters, and the search's best: it replaces them
	 * only when strictly better (on a tie they stay) */
	if ((c = rate(f->s, &o->cur)) == NULL)
		return -1;
	f->best = *c;
	if (o->search) {
		struct cand found;

		if (search(f->s, &found) < 0)
			return -1;
		if (cand_cmp(&found, &f->best) < 0)
			f->best = found;
	}
	return 0;
}

static void
fam_free(struct fam *f)
{
	if (f->have_cv)
		cv_free(&f->cv);
	if (f->s != NULL) {
		xfree(f->s->scores);
		xfree(f->s->part);
	}
	xfree(f->s);
	memset(f, 0, sizeof(*f));
}

int
tune_run(const struct tset *ts, const struct tune_opts *o,
    struct tune_result *r, char *err, size_t errsz)
{
	struct fam own, alt, *use = &own;
	struct cutoff_set cs;
	struct cutoff_pick pk;
	struct cand best;
	unsigned char *eo = NULL, *en = NULL;
	unsigned per, total;
	double lim;
	int have_cs = 0, rc = -1, try_alt;

	memset(r, 0, sizeof(*r));
	memset(&own, 0, sizeof(own));
	memset(&alt, 0, sizeof(alt));
	r->n = ts->n;
	r->goal = o->goal;
	r->nham = ts->nham;
	r->nspam = ts->nspam;
	if (!tune_enough(ts->nham, ts->nspam, o->folds, err, errsz))
		return -1;
	per = 1 + (o->search ? 2 * (1 + NELEM(robs_grid) *
	    NELEM(min_dev_grid) + NELEM(robx_grid) + NELEM(max_tokens_grid) +
	    NELEM(robs_fine) * NELEM(step_fine) * NELEM(step_fine)) : 0);
	try_alt = o->alt != NULL && tset_aligned(ts, o->alt);
	total = try_alt ? 2 * per : per;
	r->cur_scores = xcalloc(ts->n + 1, sizeof(double));
	r->rec_scores = xcalloc(ts->n + 1, sizeof(double));
	r->spam = xcalloc(ts->n + 1, sizeof(int));
	eo = xcalloc(ts->n + 1, 1);
	en = xcalloc(ts->n + 1, 1);
	if (r->cur_scores == NULL || r->rec_scores == NULL || r->spam == NULL ||
	    eo == NULL || en == NULL)
		goto oom;

	/* the list's own feature family, then the other one: it wins only
	 * when its best is strictly better (it costs a rebuild) */
	if (fam_search(&own, ts, o, 0, total) < 0)
		goto oom;
	memcpy(r->spam, own.cv.spam, ts->n * sizeof(int));
	r->nsettings = own.s->nseen;
	r->word_pairs = o->word_pairs;
	r->own_roca = own.best.roca;
	if (try_alt) {
		if (fam_search(&alt, o->alt, o, own.s->done, total) < 0)
			goto oom;
		r->nsettings += alt.s->nseen;
		r->alt_tried = 1;
		r->alt_roca = alt.best.roca;
		if (cand_cmp(&alt.best, &own.best) < 0) {
			use = &alt;
			r->word_pairs = !o->word_pairs;
			r->changed |= TUNE_WORD_PAIRS;
		}
	}
	best = use->best;

	/* the current setting as it stands */
	if (cv_score(&own.cv, &o->cur, r->cur_scores) < 0 ||
	    cutoff_set_init(&cs, r->cur_scores, own.cv.spam, ts->n) < 0)
		goto oom;
	r->cur.bp = o->cur;
	r->cur.ham_cutoff = o->ham_cutoff;
	r->cur.spam_cutoff = o->spam_cutoff;
	cutoff_at(&cs, &o->goal, o->ham_cutoff, &r->cur.e);
	r->cur.roca = cutoff_roca(&cs);
	cutoff_set_free(&cs);

	/* the recommendation: its scores, its cutoffs */
	if (cv_score(&use->cv, &best.bp, r->rec_scores) < 0 ||
	    cutoff_set_init(&cs, r->rec_scores, own.cv.spam, ts->n) < 0)
		goto oom;
	have_cs = 1;
	if (calibrate(o, &use->cv, use->s->part, r->rec_scores, &cs, &r->pick,
	    &r->nest) < 0)
		goto oom;
	cutoff_best(&cs, &r->pick, o->ham_cutoff, &pk);
	r->rec.bp = best.bp;
	r->rec.ham_cutoff = pk.cutoff;
	r->infeasible = pk.e.excess > 0;
	if (r->infeasible) {
		/* what meeting each target alone costs in the other: how far
		 * the administrator would have to loosen one */
		struct cutoff_goal g1 = o->goal;
		struct cutoff_pick p1;

		g1.max_ham_held = CUTOFF_NONE;
		cutoff_best(&cs, &g1, o->ham_cutoff, &p1);
		r->alone_spam = p1.e;
		g1 = o->goal;
		g1.max_spam_passed = CUTOFF_NONE;
		cutoff_best(&cs, &g1, o->ham_cutoff, &p1);
		r->alone_ham = p1.e;
	}
	/* ham_cutoff <= spam_cutoff <= discard_cutoff must still hold: a
	 * cutoff lowered to it holds more ham, and may miss a ham target
	 * the goal's cutoff met (missed says so) */
	lim = o->discard_cutoff <= 1 ? o->discard_cutoff : 1;
	r->limited_from = -1;
	if (r->rec.ham_cutoff > lim) {
		r->limited_from = r->rec.ham_cutoff;
		r->rec.ham_cutoff = lim;
	}
	cutoff_at(&cs, &o->goal, r->rec.ham_cutoff, &r->rec.e);
	/* (as cutoff_rate counts a target missed) */
	if (o->goal.max_ham_held >= 0 && (r->nham ? (double)r->rec.e.ham_held /
	    r->nham : 0) > o->goal.max_ham_held)
		r->missed |= TUNE_MISS_HAM;
	if (o->goal.max_spam_passed >= 0 && (r->nspam ?
	    (double)r->rec.e.spam_passed / r->nspam : 0) >
	    o->goal.max_spam_passed)
		r->missed |= TUNE_MISS_SPAM;
	r->rec.roca = cutoff_roca(&cs);
	/* spam_cutoff (a label): kept unless a ham scored at or above it
	 * or it is below the new ham_cutoff */
	r->rec.spam_cutoff = o->spam_cutoff;
	{
		double need = cutoff_above_ham(&cs, r->rec.ham_cutoff);

		/* (a spam_cutoff above every ham stays: need, chosen in the
		 * gap above the highest ham, may lie past it) */
		if (r->rec.spam_cutoff < need && cutoff_above_ham(&cs,
		    r->rec.spam_cutoff) > r->rec.spam_cutoff)
			r->rec.spam_cutoff = need;
		if (r->rec.spam_cutoff > lim)
			r->rec.spam_cutoff = lim;
		if (r->rec.spam_cutoff < r->rec.ham_cutoff)
			r->rec.spam_cutoff = r->rec.ham_cutoff;
	}
	if (o->discard_cutoff <= 1) {
		size_t i;

		for (i = 0; i < ts->n; i++)
			if (!r->spam[i] && r->rec_scores[i] >=
			    o->discard_cutoff)
				r->ham_discarded++;
	}
	if (best.bp.robs != o->cur.robs)
		r->changed |= TUNE_ROBS;
	if (best.bp.robx != o->cur.robx)
		r->changed |= TUNE_ROBX;
	if (best.bp.min_dev != o->cur.min_dev)
		r->changed |= TUNE_MIN_DEV;
	if (best.bp.max_tokens != o->cur.max_tokens)
		r->changed |= TUNE_MAX_TOKENS;
	if (best.bp.vote_budget != o->cur.vote_budget)
		r->changed |= TUNE_VOTE_BUDGET;

	/* how sure: resample the posts */
	if (o->progress != NULL)
		o->progress(o->pctx, "resampling", 0, 1);
	errors(r->cur_scores, r->spam, ts->n, r->cur.ham_cutoff, eo);
	errors(r->rec_scores, r->spam, ts->n, r->rec.ham_cutoff, en);
	if (cutoff_bootstrap(r->spam, eo, en, ts->n, &o->goal, TUNE_RESAMPLES,
	    TUNE_LEVEL, &r->boot) < 0)
		goto oom;
	rc = 0;
	goto out;
oom:
	snprintf(err, errsz, "out of memory");
out:
	if (have_cs)
		cutoff_set_free(&cs);
	fam_free(&own);
	fam_free(&alt);
	xfree(eo);
	xfree(en);
	if (rc < 0)
		tune_result_free(r);
	return rc;
}

void
tune_result_free(struct tune_result *r)
{
	xfree(r->cur_scores);
	xfree(r->rec_scores);
	xfree(r->spam);
	r->cur_scores = r->rec_scores = NULL;
	r->spam = NULL;
}

/*
 * The bounds are met in decimal, the intervals' ends are fractions k / n
 * of the journal's posts (or, with no error, 1 - 0.05^(1/n)), and their
 * differences and multiples are rounded in binary: 7/100 - 5/100 is
 * 0.020000000000000004, past 2 points, and 3 * 0.009 is
 * 0.026999999999999996, below 27/1000.  An end for at most
 * LG_MAX_TUNE_EVENTS posts that differs at all from a bound of a few
 * decimals differs by far more than this.
 */
#define RATING_SLACK	1e-9

/* how far an interval's upper end hi reaches past target t: 0 not past
 * it (or no target), 1 past it, 2 past TUNE_TARGET_LOW times it */
static int
past_target(double hi, double t)
{
	if (t < 0 || hi <= t)
		return 0;
	return hi > TUNE_TARGET_LOW * t + RATING_SLACK ? 2 : 1;
}

const char *
tune_rating(const struct tune_result *r)
{
	double w = r->boot.hh_hi - r->boot.hh_lo;
	int past = past_target(r->boot.sp_hi, r->goal.max_spam_passed), p;

	if ((p = past_target(r->boot.hh_hi, r->goal.max_ham_held)) > past)
		past = p;
	if (r->boot.sp_hi - r->boot.sp_lo > w)
		w = r->boot.sp_hi - r->boot.sp_lo;
	if (w <= 0.02 + RATING_SLACK && past == 0)
		return "high";
	if (w <= 0.05 + RATING_SLACK && past <= 1)
		return "medium";
	return "low";
}

const char *
tune_num(char *buf, size_t sz, double v)
{
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(buf, sz, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* one more change, a number */
static void
change_num(struct tune_change *c, const char *key, double v, double old)
{
	c->key = key;
	tune_num(c->value, sizeof(c->value), v);
	tune_num(c->old, sizeof(c->old), old);
}

size_t
tune_changes(const struct tune_result *r, struct tune_change *ch)
{
	size_t n = 0;

	if (r->rec.ham_cutoff != r->cur.ham_cutoff)
		change_num(&ch[n++], "ham_cutoff", r->rec.ham_cutoff,
		    r->cur.ham_cutoff);
	if (r->rec.spam_cutoff != r->cur.spam_cutoff)
		change_num(&ch[n++], "spam_cutoff", r->rec.spam_cutoff,
		    r->cur.spam_cutoff);
	if (r->changed & TUNE_ROBS)
		change_num(&ch[n++], "robs", r->rec.bp.robs, r->cur.bp.robs);
	if (r->changed & TUNE_ROBX)
		change_num(&ch[n++], "robx", r->rec.bp.robx, r->cur.bp.robx);
	if (r->changed & TUNE_MIN_DEV)
		change_num(&ch[n++], "min_dev", r->rec.bp.min_dev,
		    r->cur.bp.min_dev);
	if (r->changed & TUNE_MAX_TOKENS) {
		/* a whole number: never "1e+02" */
		ch[n].key = "max_tokens";
		snprintf(ch[n].value, sizeof(ch[n].value), "%u",
		    r->rec.bp.max_tokens);
		snprintf(ch[n].old, sizeof(ch[n].old), "%u",
		    r->cur.bp.max_tokens);
		n++;
	}
	if (r->changed & TUNE_VOTE_BUDGET) {
		ch[n].key = "vote_budget";
		snprintf(ch[n].value, sizeof(ch[n].value), "%s",
		    r->rec.bp.vote_budget ? "yes" : "no");
		snprintf(ch[n].old, sizeof(ch[n].old), "%s",
		    r->cur.bp.vote_budget ? "yes" : "no");
		n++;
	}
	if (r->changed & TUNE_WORD_PAIRS) {
		ch[n].key = "word_pairs";
		snprintf(ch[n].value, sizeof(ch[n].value), "%s",
		    r->word_pairs ? "yes" : "no");
		snprintf(ch[n].old, sizeof(ch[n].old), "%s",
		    r->word_pairs ? "no" : "yes");
		n++;
	}
	return n;
}
