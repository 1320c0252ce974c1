/*
 * expiry.h - which held posts the expiry policy acts on, and the
 * reminders it sent
 *
 * `listgate expire` finds, list by list, the posts held longer than the
 * list's hold_expiry_days; it decides on them through the one decision
 * path (gate/app/decide.h), or, with expire_action = remind, notifies
 * the moderators again and records the reminder here (migration 0006:
 * held_posts.reminded_at), so the next run reminds again only
 * hold_expiry_days later (less half a day: a daily run's stamps).  Ages are the server's: now() against
 * arrived_at.  Values reach the server only as parameters.  Every
 * function returns -1 with a message in err; nothing prints or exits.
 */
#ifndef LG_EXPIRY_H
#define LG_EXPIRY_H

#include <stddef.h>
#include <stdint.h>

struct queue;

/* called with each list name: 0 to go on, -1 to stop (failure) */
typedef int (*expiry_list_fn)(const char *list, void *ctx);

/* every list with a held post, by name: 0, or -1 */
int expiry_lists(struct queue *q, expiry_list_fn fn, void *ctx, char *err,
    size_t errsz);

/* called with each post due and its last reminder as seen
 * (EXPIRY_NEVER: none; else microseconds since the epoch): 0 to go on,
 * -1 to stop (failure) */
typedef int (*expiry_post_fn)(int64_t id, int64_t reminded, void *ctx);

/* no reminder yet */
#define EXPIRY_NEVER	(-1)

/*
 * The posts of list held for days days or more (0: every held post),
 * oldest first; with reminders, only those not reminded of in the last
 * days days less half a day either.  0, or -1 (also when fn returned -1).
 */
int expiry_due(struct queue *q, const char *list, unsigned days,
    int reminders, expiry_post_fn fn, void *ctx, char *err, size_t errsz);

/*
 * Claim the reminder of post id: in a transaction begun here,
 * reminded_at set to now when the post is still held, not reminded of
 * in the last days days, and its last reminder still the one
 * expiry_due saw (reminded; the row stays locked), so that of two runs
 * at once only one reminds, whatever days (0 too).  1 claimed: the
 * caller queues the reminder in the same transaction and ends it with
 * expiry_claim_end, so that a run that dies in between leaves the post
 * as it was; 0 not (decided, or claimed by another run meanwhile; no
 * transaction left open); -1.
 */
int expiry_claim_remind(struct queue *q, int64_t id, unsigned days,
    int64_t reminded, char *err, size_t errsz);

/* end the claim's transaction: commit (the reminder queued) or roll it
 * back.  0, or -1 (then nothing of it is kept) */
int expiry_claim_end(struct queue *q, int commit, char *err, size_t errsz);

#endif
