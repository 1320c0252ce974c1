/*
 * qstats.h - a list's moderation figures per period, for `listgate
 * stats`: posts held, decisions, moderators' delay, approvals reversed
 *
 * Periods are given as ascending bounds in seconds since the epoch: the
 * period i is [bounds[i], bounds[i + 1]).  A post counts as held in the
 * period it arrived in (posts the filter stored as discarded at
 * discard_cutoff are counted apart, filter_discarded: they were never
 * held); a decision counts in the period it was made in; the delay is
 * from arrival to a moderator's decision (approve, reject, discard;
 * not an expiry).  Values reach the server only as parameters.  Every
 * function returns -1 with a message in err; nothing prints or exits.
 */
#ifndef LG_QSTATS_H
#define LG_QSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct queue;

/* most periods one call counts */
#define QSTATS_MAX_PERIODS	4000

struct qstats_period {
	int64_t held;		/* posts held (arrived in the period) */
	int64_t filter_discarded; /* posts the filter stored as discarded */
	int64_t approved, rejected, discarded, expired;	/* decided in it */
	int64_t delays;		/* moderators' decisions with a delay */
	double delay_median_s;	/* median delay, interpolated; -1: none */
	double delay_p90_s;	/* 90th percentile, interpolated; -1: none */
	int64_t reversed;	/* posts approved (released), then decided
				 * as spam in the period */
};

/*
 * The figures of list for the np periods of bounds (np + 1 values,
 * ascending) into out[np].  0, or -1.
 */
int qstats_periods(struct queue *q, const char *list, const time_t *bounds,
    size_t np, struct qstats_period *out, char *err, size_t errsz);

/* called with each list name: 0 to go on, -1 to stop (failure) */
typedef int (*qstats_list_fn)(const char *list, void *ctx);

/* every list with held posts or journal events: 0, or -1 */
int qstats_lists(struct queue *q, qstats_list_fn fn, void *ctx, char *err,
    size_t errsz);

/* whether list has any held post or journal event, whenever: 1 or 0,
 * or -1 (one look at each table's index on list) */
int qstats_list_known(struct queue *q, const char *list, char *err,
    size_t errsz);

#endif
