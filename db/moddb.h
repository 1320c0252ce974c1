/*
 * moddb.h - what moderation by mail keeps in PostgreSQL: the outbox of
 * notices (one row per held post and moderator) and the cookies already
 * used (migrations/0005_moderation.sql)
 *
 * Values reach the server only as PQexecParams parameters.  Every
 * function returns -1 with a message in err on failure; none logs or
 * exits.  The notices themselves are not stored: they are built again
 * from the held post whenever one is sent.
 */
#ifndef LG_MODDB_H
#define LG_MODDB_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/util/lglimits.h"

struct queue;

/* one outbox row */
struct moddb_notice {
	int64_t id;			/* the row */
	int64_t post_id;
	char list[LG_MAX_LIST_NAME + 1];
	char moderator[321];
	char kind[8];			/* "hold" or "remind" */
	int digest;			/* waits for a digest */
	int tries;			/* sending attempts so far */
	char post_status[16];		/* the held post's status now */
	char claim[64];			/* this run's claim (moddb_claim) */
};

/* called per row: 0 go on, 1 stop, -1 stop and fail */
typedef int (*moddb_notice_fn)(const struct moddb_notice *n, void *ctx);

struct buf;

/* the NULL-terminated strings a (NULL: none) as a PostgreSQL text[]
 * literal, each quoted, appended to arr: 0, or -1 (out of memory or
 * arr's max) */
int moddb_text_array(struct buf *arr, char *const *a);

/*
 * Queue a notice of kind ("hold" or "remind") about post_id of list for
 * each address of the NULL-terminated moderators, waiting for a digest
 * when digest is 1.  A "hold" notice is queued once per post and
 * moderator (a retried delivery adds nothing).  One statement: all the
 * rows or, on an error, none.  0, or -1.
 */
int moddb_queue(struct queue *q, const char *list, int64_t post_id,
    char *const *moderators, const char *kind, int digest, char *err,
    size_t errsz);

/* posts of list whose hold notice went out (not in a digest) during the
 * last hour, into *n_r: 0, or -1 */
int moddb_sent_last_hour(struct queue *q, const char *list, long *n_r,
    char *err, size_t errsz);

/*
 * The pending rows, those tried least first, then the oldest (a row
 * that keeps failing does not hold back the others): of post_id when
 * it is above 0, else of list (NULL: every list); at most max rows.  fn
 * is called for each after the result is read (it may run other
 * statements).  0, or -1 (also when fn returned -1).
 */
int moddb_pending(struct queue *q, const char *list, int64_t post_id,
    size_t max, moddb_notice_fn fn, void *ctx, char *err, size_t errsz);

/*
 * Claim pending row id for lease_s seconds before sending it: one
 * UPDATE that takes the row only if it is pending, no other sender's
 * lease on it is running (migrations/0011_outbox_claim.sql) and its
 * post is still held.  digest: the row goes into a digest, and is
 * marked as waiting for one (a claim of a notice of its own counts
 * against notify_max_per_hour in moddb_claim_counted; one for a digest
 * does not, and a digest that fails leaves it to the next).  1 claimed
 * (send it; the claim, for moddb_mark, into claim_r of claimsz bytes),
 * 0 not (sent, dropped, claimed by another, or the post decided since),
 * -1 error.
 */
int moddb_claim(struct queue *q, int64_t id, unsigned lease_s, int digest,
    char *claim_r, size_t claimsz, char *err, size_t errsz);

/*
 * moddb_claim kept to max posts of the row's list an hour (its
 * notify_max_per_hour): the row is claimed only when its post counts
 * already (a notice of it sent in the last hour, or one claimed by a
 * sender now) or fewer than max posts do.  Counted and claimed under
 * the list's lock (QUEUE_LOCK_NOTIFY), in a transaction of their own
 * (or the caller's, when one is open): senders at once (filters holding
 * posts of a flood, `notify --pending` runs, expire) keep to max
 * together, where each counted only the notices already sent and sent
 * its own.  1 claimed, 0 not (as moddb_claim), 2 not: the hour's budget
 * is spent (the row waits for a digest), -1 error.
 */
int moddb_claim_counted(struct queue *q, int64_t id, unsigned lease_s,
    unsigned max, char *claim_r, size_t claimsz, char *err, size_t errsz);

/* mark row id: state "sent", "digest" or "dropped" (why may be NULL),
 * or a failed try ("pending" with why); the claim is released.  A
 * failed try under claim (moddb_claim's; NULL: none) leaves the row
 * alone when that claim ran out and another sender holds the row now
 * (it is sending it).  0, or -1 */
int moddb_mark(struct queue *q, int64_t id, const char *state,
    const char *why, const char *claim, char *err, size_t errsz);

/* the lists with pending rows whose names sort after after (NULL: all),
 * each once, in order, into names (at most max, each LG_MAX_LIST_NAME + 1
 * bytes); *n_r gets how many (max: there may be more after the last):
 * 0, or -1 */
int moddb_pending_lists(struct queue *q, const char *after,
    char (*names)[LG_MAX_LIST_NAME + 1], size_t max, size_t *n_r, char *err,
    size_t errsz);

/*
 * Has this cookie (its SHA-256) been used?  1 with who used it and when
 * (by_r of bysz bytes, *at_r), 0 not yet, -1 error.
 */
int moddb_cookie_used(struct queue *q, const unsigned char sha256[32],
    char *by_r, size_t bysz, time_t *at_r, char *err, size_t errsz);

/* record that a cookie decided post_id of list by action: 0 recorded
 * (or already there), -1 error */
int moddb_cookie_use(struct queue *q, const unsigned char sha256[32],
    const char *list, int64_t post_id, const char *action, const char *by,
    char *err, size_t errsz);

/*
 * Count an answer to address (of list) to a reply that decided nothing,
 * unless address had max such answers in the last hour already
 * (addresses compared in any case; the rows past the hour, of every
 * address, deleted on the way).  One statement.  1 counted (*n_r: this
 * answer's number in the hour, 1 to max), 0 not: address had *n_r
 * (max or more) already, -1 error.
 */
int moddb_answer_take(struct queue *q, const char *address, const char *list,
    int max, int *n_r, char *err, size_t errsz);

#endif
