/*
 * qview.h - read-only views of the moderation queue for the web page:
 * held counts per list, one page of a list's held posts, a post's list,
 * decisions per day
 *
 * Values reach the server only as PQexecParams parameters; the ORDER BY
 * of a page is one of a few fixed texts chosen by enum.  Every function
 * returns -1 with a message in err on failure; nothing here exits or
 * logs.  (The counting behind the stats panel is qview_daily: when
 * `listgate stats` lands, the panel can take its figures from there.)
 */
#ifndef LG_QVIEW_H
#define LG_QVIEW_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct queue;

/* called per list by qview_counts: 0 to go on, -1 to stop (failure) */
typedef int (*qview_count_fn)(const char *list, int64_t held, void *ctx);

/*
 * The number of held posts (status 'held') per list, in byte order of the
 * list names (strcmp, whatever the collation of the database): of
 * the lists in only (nonly names, each passed listcfg_name_ok), or of
 * every list with a held post when only is NULL.  Lists of only without
 * a held post are not reported.  0, or -1.
 */
int qview_counts(struct queue *q, const char *const *only, size_t nonly,
    qview_count_fn fn, void *ctx, char *err, size_t errsz);

/* the orders of a page */
enum qview_sort {
	QVIEW_OLDEST,		/* arrival, oldest first (the default) */
	QVIEW_NEWEST,
	QVIEW_SCORE_DESC,	/* highest score first */
	QVIEW_SCORE_ASC
};

/* one row of a page; strings are the callback's for its duration */
struct qview_row {
	int64_t id;
	const char *from, *env_sender, *subject;
	const char *clues;	/* the first deciding-token lines */
	double score;
	time_t arrived;
	const char *sha_hex;	/* its SHA-256, 64 hex digits */
	int scored;		/* 0: held unscored (verdict oversize), its
				 * score a stored 0 that means nothing */
};

/* called per row by qview_page: 0 to go on, -1 to stop (failure) */
typedef int (*qview_row_fn)(const struct qview_row *r, void *ctx);

/*
 * The held posts of list in order sort, rows offset .. offset+limit-1,
 * and their number in *total_r.  0, or -1.
 */
int qview_page(struct queue *q, const char *list, enum qview_sort sort,
    int64_t offset, int64_t limit, qview_row_fn fn, void *ctx,
    int64_t *total_r, char *err, size_t errsz);

/* the statement of qview_page for sort, its parameters $1 the list, $2
 * the limit and $3 the offset (for a test of its plan) */
void qview_page_sql(enum qview_sort sort, char *sql, size_t size);

/* one day of qview_daily (UTC) */
struct qview_day {
	time_t day;		/* midnight UTC */
	int64_t held;		/* posts held that day (not those the filter
				 * stored as discarded) */
	int64_t approved;	/* approvals decided that day */
	int64_t rejected;	/* rejections and discards by moderators */
};

/*
 * The last ndays days of list, today included, oldest first, into days
 * (ndays entries; days without events are zero).  0, or -1.
 */
int qview_daily(struct queue *q, const char *list, int ndays,
    struct qview_day *days, char *err, size_t errsz);

#endif
