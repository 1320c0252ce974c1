/*
 * tune.h - a list's cutoffs and classifier parameters from its own
 * history: cross-validated scores, a search, an estimate and how sure
 * it is
 *
 * Every post of the tset is scored by counts from the other folds only
 * (gate/tune/cv.h), under the list's current parameters and under each
 * candidate of a search like bogotune's: a coarse grid of robs by
 * min_dev, then robx, then max_tokens, then a fine grid around the best,
 * once without the vote budget and once with it (gate/bayes.h).
 * With one target (max_spam_passed or max_ham_held alone), a candidate
 * is rated first by how it ranks the posts near the target
 * (cutoff_tail); then, and for the cost or both targets, by what
 * choosing a cutoff from its scores gives on posts the choice did not
 * see (cutoff_nested over TUNE_PARTS partitions), then by its 1-ROCA.
 * It replaces the current parameters only when it rates strictly
 * better, so ties keep them (with one target, a tie of cutoff_tail is
 * rare: the bootstrap's "better" says how sure a change is).  The final
 * cutoff is the goal's best over all posts, with the targets tightened
 * until choosing that way meets them on posts left out (tune.c
 * calibrate).  With o->alt (the posts tokenized with word_pairs the
 * other way) the whole search runs again over those; the other setting
 * wins only when its best rates strictly better.  The estimate's spread
 * and the chance that the recommendation is an improvement come from
 * bootstrap resamples of the posts (cutoff_bootstrap).  Memory is the cv's and a few arrays per
 * post; -1 only when out of memory.  Never prints.
 */
#ifndef LG_TUNE_H
#define LG_TUNE_H

#include <stddef.h>

#include "gate/bayes.h"
#include "gate/tune/cutoff.h"

struct tset;

/* below this many posts of a class tune gives no answer: one post more
 * or less judged wrongly would move its rate by over 5 points */
#define TUNE_MIN_POSTS		20
/* partitions of the posts over which the choice of a cutoff is tried
 * on posts it has not seen (cutoff_nested) */
#define TUNE_PARTS		8
/* bootstrap resamples and the level of the intervals */
#define TUNE_RESAMPLES		1000
#define TUNE_LEVEL		0.9
/* folds allowed */
#define TUNE_MAX_FOLDS		20

/* called as the work goes on: what (a phrase), done of total */
typedef void (*tune_progress_fn)(void *ctx, const char *what,
    unsigned done, unsigned total);

struct tune_opts {
	unsigned folds;			/* k of the k-fold cross-validation */
	struct cutoff_goal goal;
	struct bayes_params cur;	/* the list's parameters */
	double ham_cutoff, spam_cutoff;	/* the list's cutoffs */
	double discard_cutoff;		/* LG_OFF (above 1) when off */
	int search;			/* 1: search the parameters too */
	/* a feature family (word_pairs): the same posts tokenized with the
	 * list's setting flipped (a twin of the tset, tset_aligned), or
	 * NULL.  Searched as the list's own; it replaces the list's setting
	 * only when its best rates strictly better */
	const struct tset *alt;
	int word_pairs;			/* the list's setting now */
	tune_progress_fn progress;	/* or NULL */
	void *pctx;
};

/* one setting and what cross-validation says of it */
struct tune_setting {
	struct bayes_params bp;
	double ham_cutoff, spam_cutoff;
	struct cutoff_eval e;		/* errors at ham_cutoff */
	double roca;			/* 1-ROCA of its scores */
};

/* which targets the recommendation misses */
#define TUNE_MISS_HAM	0x1	/* max_ham_held */
#define TUNE_MISS_SPAM	0x2	/* max_spam_passed */

/* which parameters the recommendation changes */
#define TUNE_ROBS	0x1
#define TUNE_ROBX	0x2
#define TUNE_MIN_DEV	0x4
#define TUNE_MAX_TOKENS	0x8
#define TUNE_WORD_PAIRS	0x10
#define TUNE_VOTE_BUDGET	0x20

struct tune_result {
	size_t n, nham, nspam;
	struct cutoff_goal goal;		/* asked for (o->goal; a result
					 * zeroed by hand has targets of 0,
					 * not CUTOFF_NONE) */
	struct tune_setting cur, rec;
	double *cur_scores, *rec_scores;	/* n each, per post */
	int *spam;				/* n */
	struct cutoff_boot boot;
	unsigned nsettings;		/* parameter sets scored */
	int changed;			/* TUNE_* */
	int infeasible;			/* no cutoff meets the targets */
	struct cutoff_eval alone_spam;	/* infeasible: the best cutoff by
					 * the spam target alone (its ham
					 * held is the least that target
					 * allows) */
	struct cutoff_eval alone_ham;	/* and by the ham target alone */
	size_t ham_discarded;		/* ham at or above discard_cutoff */
	int missed;			/* TUNE_MISS_*: the targets of goal
					 * the recommended cutoff misses on
					 * the journal (with infeasible, or
					 * when it was limited) */
	double limited_from;		/* the cutoff that the goal chose,
					 * when rec.ham_cutoff had to be
					 * lowered to the list's
					 * discard_cutoff; else -1 */
	struct cutoff_goal pick;	/* the goal the cutoff was chosen by
					 * (targets tightened, see tune.c) */
	struct cutoff_eval nest;	/* cutoffs chosen by it on other folds,
					 * on each fold left out */
	int word_pairs;			/* the recommended setting */
	int alt_tried;			/* the other word_pairs was searched */
	double alt_roca, own_roca;	/* 1-ROCA of the best of each: the
					 * other setting's, the list's */
};

/*
 * 1 when ts has enough posts of each class for folds folds (at least
 * TUNE_MIN_POSTS and folds), else 0 with why (a sentence: how many
 * there are, how many are needed and why).
 */
int tune_enough(size_t nham, size_t nspam, unsigned folds, char *why,
    size_t whysz);

/* tune: 0 with r filled (free it with tune_result_free), or -1 with err
 * (out of memory, or too few posts: tune_enough) */
int tune_run(const struct tset *ts, const struct tune_opts *o,
    struct tune_result *r, char *err, size_t errsz);
void tune_result_free(struct tune_result *r);

/* one key a recommendation sets, as a configuration file writes it */
struct tune_change {
	const char *key;	/* "ham_cutoff", "robs", ... */
	char value[32];		/* the new value: reads back exactly */
	char old[32];		/* the value in effect now */
};
#define TUNE_MAX_CHANGES	8

/* the keys r changes (cutoffs first, then the parameters, vote_budget,
 * then word_pairs), into
 * ch[TUNE_MAX_CHANGES]: how many */
size_t tune_changes(const struct tune_result *r, struct tune_change *ch);

/* the shortest decimal text that reads back (strtod) as v, into buf */
const char *tune_num(char *buf, size_t sz, double v);

/*
 * "high", "medium" or "low": how sure r->boot is.  By the intervals'
 * widths: both within 2 points high, within 5 medium.  And by a target
 * of r->goal: when its class's interval reaches above it, at most
 * medium, and low past TUNE_TARGET_LOW times it (a young list's few
 * hundred spam cannot show a rate of 0.5%: one post more is 0.4%).
 */
#define TUNE_TARGET_LOW	3
const char *tune_rating(const struct tune_result *r);

#endif
