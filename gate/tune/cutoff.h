/*
 * cutoff.h - where to put ham_cutoff, given every post's cross-validated
 * score: the cost of each choice, the best one, how sure that is
 *
 * A post is held when its score is at or above the cutoff.  Ham held
 * and spam passed are counted as fractions of the ham and of the spam,
 * so the answer does not depend on how the journal's classes happen to
 * be mixed.  The moderators' cost of a cutoff is
 *	w_ham * (ham held fraction) + w_spam * (spam passed fraction)
 * (the defaults weigh a spam on the list five times a ham that waits).
 * Targets replace the cost: with max_spam_passed alone, the cutoff that
 * holds the least ham among those passing at most that fraction of
 * spam; with max_ham_held alone, the least spam passed among those
 * holding at most that much ham; with both, the least cost among those
 * meeting both (and, when none does, the least excess over them).  Pure
 * arithmetic on arrays; never fails except for memory; never prints.
 */
#ifndef LG_CUTOFF_H
#define LG_CUTOFF_H

#include <stddef.h>
#include <stdint.h>

/* no target */
#define CUTOFF_NONE	(-1.0)

struct cutoff_goal {
	double w_ham, w_spam;		/* cost of each error (fractions) */
	double max_ham_held;		/* targets (fractions), or CUTOFF_NONE */
	double max_spam_passed;
};

/* the errors at one cutoff and how the goal rates them; compare two
 * with cutoff_cmp */
struct cutoff_eval {
	size_t ham_held, spam_passed;
	double excess;		/* past the targets (0: met) */
	double primary;		/* what the goal minimises */
	double cost;		/* the weighted cost (ties) */
};

/* posts sorted by score, with their class */
struct cutoff_pt {
	double score;
	int spam;
	size_t idx;		/* the post's index in the arrays given */
};

struct cutoff_set {
	struct cutoff_pt *pt;	/* ascending */
	size_t n, nham, nspam;
};

/* the set of n posts (scores[i], spam[i]): 0, or -1 out of memory */
int cutoff_set_init(struct cutoff_set *cs, const double *scores,
    const int *spam, size_t n);
void cutoff_set_free(struct cutoff_set *cs);

/* rate hh ham held and sp spam passed out of nham and nspam */
void cutoff_rate(const struct cutoff_goal *g, size_t nham, size_t nspam,
    size_t hh, size_t sp, struct cutoff_eval *e);

/* <0 when a is better than b, 0 equal, >0 worse: less excess, then less
 * primary, then less cost */
int cutoff_cmp(const struct cutoff_eval *a, const struct cutoff_eval *b);

/* the errors at cutoff c */
void cutoff_at(const struct cutoff_set *cs, const struct cutoff_goal *g,
    double c, struct cutoff_eval *e);

/* the best cutoff */
struct cutoff_pick {
	double cutoff;		/* the one to use */
	double lo, hi;		/* every c in (lo, hi] gives the same errors
				 * (lo -1: below every score; hi 2: above) */
	struct cutoff_eval e;
	int kept;		/* 1: current was already among the best */
};

/*
 * The best cutoff for g.  Among equally good choices: current when it is
 * one of them (kept = 1); else the one passing the least spam, then the
 * widest.  Inside the chosen interval of scores the cutoff is the middle
 * on the log-odds scale, written with as few digits as stay inside it;
 * holding everything is 0, passing everything 1.
 */
void cutoff_best(const struct cutoff_set *cs, const struct cutoff_goal *g,
    double current, struct cutoff_pick *r);

/* the lowest c above every ham score (so no ham of this set scores at
 * or above it) and at least floor, with as few digits as stay between
 * the highest ham score and the next score above it */
double cutoff_above_ham(const struct cutoff_set *cs, double floor);

/* 1 - the area under the ROC curve: the fraction of (ham, spam) pairs
 * in which the ham scores higher, a tie counting one half (0: a perfect
 * ranking); 0 when a class is empty */
double cutoff_roca(const struct cutoff_set *cs);

/*
 * For a goal with one target, how well the posts near it are ranked:
 * 1-ROCA of the K posts of the target's class that are hardest to keep
 * within it against every post of the other class (0: perfect, a tie
 * counting one half).  With max_spam_passed t alone: the K lowest
 * scoring spam, each against every ham; with max_ham_held t alone: the
 * K highest scoring ham, each against every spam.  K is the larger of
 * CUTOFF_TAIL_MIN and CUTOFF_TAIL_MULT * t * (posts of the class),
 * rounded up, and at most all of them.  Unlike the errors at one
 * cutoff, which rest on the one or two posts next to it in a young
 * list, this counts every post in the target's neighbourhood.  -1 for
 * a goal with no target or with both; 0 when a class is empty.
 */
#define CUTOFF_TAIL_MIN		10
#define CUTOFF_TAIL_MULT	4
double cutoff_tail(const struct cutoff_set *cs, const struct cutoff_goal *g);

/* the value with fewest significant digits in (lo, hi] nearest want
 * (want must be in (lo, hi]) */
double cutoff_round(double lo, double hi, double want);

/*
 * The errors of choosing the cutoff from part of the posts, on the
 * rest: for each partition p of the nparts given (part[p * n + i] is
 * post i's fold in p, 0 .. folds - 1) and each fold f, the best cutoff
 * for g (cutoff_best) over the posts outside f, applied to the posts of
 * f; the counts summed and rated by rate_g (which may differ from g,
 * the goal the cutoffs are chosen by).  What the choice of a cutoff
 * gives on posts it has not seen, where the errors of the posts
 * themselves at their best cutoff flatter it; several partitions make
 * it depend less on which posts fell together.  0, or -1 out of memory.
 */
int cutoff_nested(const double *scores, const int *spam, size_t n,
    const unsigned *part, unsigned nparts, unsigned folds,
    const struct cutoff_goal *g, const struct cutoff_goal *rate_g,
    struct cutoff_eval *e);

/* nparts partitions of n posts into folds, each stratified by class and
 * drawn with a fixed seed, into part (nparts * n): 0, or -1 out of
 * memory */
int cutoff_partitions(const int *spam, size_t n, unsigned nparts,
    unsigned folds, unsigned *part);

/* bootstrap resamples of the posts */
struct cutoff_boot {
	unsigned resamples;
	double level;			/* of the intervals, e.g. 0.9 */
	double hh_lo, hh_hi;		/* ham held fraction at the new setting */
	double sp_lo, sp_hi;		/* spam passed fraction */
	double better;			/* share of resamples in which the new
					 * setting rates better than the old
					 * (a tie counts one half) */
};

/*
 * Resample the n posts with replacement, ham and spam separately, b
 * times (seeded: the same answer every run).  err_old[i] and err_new[i]
 * say whether post i is misjudged (ham held, spam passed) under the old
 * and the new setting.  The intervals hold level of the resampled
 * fractions; a class none (or all) of whose posts err_new misjudges
 * reaches 1 - ((1 - level) / 2)^(1/n) (or down to its complement), the
 * rate that would show no error so often.  0, or -1 out of memory.
 */
int cutoff_bootstrap(const int *spam, const unsigned char *err_old,
    const unsigned char *err_new, size_t n, const struct cutoff_goal *g,
    unsigned b, double level, struct cutoff_boot *out);

#endif
