/*
 * notify.h - sending what moderation by mail writes, through the list's
 * `notify` command and the outbox
 *
 * A hold notice is queued in the outbox (db/moddb.h) for each moderator
 * with the held row (queue_post.notify_mods: the same statement), again
 * by notify_held (a no-op then), then sent within a deadline; a
 * notice that was not sent stays pending for `listgate notify
 * --pending`, which also sends the digests of lists past their
 * notify_max_per_hour.  A notice is built again from the held post
 * whenever it is sent (fresh cookies), and never for a post that is no
 * longer held.  The notify command runs without a shell (run_argv), in
 * its own process group, killed at the deadline.  Every function
 * returns -1 with a message in err; none prints, logs or exits.
 */
#ifndef LG_NOTIFY_H
#define LG_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/moderate/cookie.h"
#include "gate/moderate/notice.h"

struct buf;
struct listcfg_global;
struct listcfg_list;
struct queue;

/* seconds the filter spends on a held post's notices after the hold
 * committed: the MTA's delivery waits this long at most (the rest stays
 * in the outbox) */
#define NOTIFY_WAIT_S		20
/* seconds one notify command may take outside the filter */
#define NOTIFY_RUN_S		60
/* seconds a sender's claim on an outbox row outlasts its notify
 * command's time limit: no other sender takes the row meanwhile, and
 * one killed mid-send leaves it to the next run once the claim ran out */
#define NOTIFY_CLAIM_SLACK_S	60
/* outbox rows one `notify --pending` run handles per list */
#define NOTIFY_MAX_PENDING	5000
/* lists a `notify --pending` run reads the names of at once (it reads
 * them all, a page at a time) */
#define NOTIFY_LISTS_PAGE	1024

/* what was done */
struct notify_stats {
	unsigned queued;	/* outbox rows added */
	unsigned sent;		/* notices sent */
	unsigned digests;	/* digests sent */
	unsigned failed;	/* sends that failed (left pending) */
	unsigned dropped;	/* rows of posts decided or gone */
	unsigned waiting;	/* rows left for a digest or a later run
				 * (a post being released among them) */
	int ours;		/* the post is a message listgate wrote
				 * (notice_is_ours): nothing queued, or a
				 * moderator's address that leads back to
				 * the list would loop */
	char lasterr[512];	/* the last failure, "" if none */
	char lastat[512];	/* and where: "list L, post N", "list L,
				 * the digest to M" ("" if none) */
};

/*
 * Ask the sending under way to stop (a handler of SIGTERM, SIGINT,
 * SIGHUP: async-signal-safe): the notice or digest being sent is sent
 * and recorded, and no other is started; the rest stays pending.  A
 * run killed outright instead (SIGKILL, a crash, the database gone
 * before the send is recorded) leaves a notice its command sent
 * pending under its claim, and a run after the claim ran out (the
 * command's time limit plus NOTIFY_CLAIM_SLACK_S) sends it again: a
 * moderator may get it twice, never none.
 */
void notify_stop(int sig);

/* the signal given to notify_stop, or 0 */
int notify_stopped(void);

/* 1 when the list can send notices: moderators, moderation_address and
 * notify are set; else 0 */
int notify_ready(const struct listcfg_list *l);

/* the keys of those three the list lacks, for a message: "notify",
 * "moderators and notify", "moderators, moderation_address and notify"
 * ("" when none); returns out */
const char *notify_missing(const struct listcfg_list *l, char *out,
    size_t outsz);

/* the three action addresses of post id, whose SHA-256 is sha, for
 * moderator mod (its cookies decide no other post under that number,
 * and none once mod is no longer among l's moderators), valid for the
 * list's cookie_days from now: 0, or -1 (an address longer than the
 * COOKIE_MAX_ADDR bytes `listgate moderate' takes; listcfg refuses a
 * moderation_address that could make one) */
int notify_links(const struct cookie_key *key, const struct listcfg_list *l,
    int64_t id, const unsigned char sha[32], const char *mod, time_t now,
    struct notice_links *ln);

/*
 * Run the list's notify command with msg on its standard input, to
 * address to ({moderator}), for the held post id ({id}; 0: none) sent
 * by sender ({sender}), for at most timeout_s seconds.  0 when it
 * exited 0, else -1 with err.
 */
int notify_run(const struct listcfg_list *l, const char *to,
    const char *sender, int64_t id, const struct buf *msg,
    unsigned timeout_s, char *err, size_t errsz);

/* 1 if raw (len bytes) is a message listgate wrote: notice_is_ours
 * under the site's secret (g's secret_file; one that cannot be read:
 * 0, the notices wait in the outbox for it anyway) */
int notify_is_ours(const struct listcfg_global *g, const unsigned char *raw,
    size_t len);

/*
 * After post p of list l was held (the filter): queue its hold notices
 * (once per moderator), or leave them for a digest past
 * notify_max_per_hour, and send them until deadline_ms (clock_now_ms);
 * none for a post that is itself a notice, digest or answer of
 * listgate's (st->ours set; so for notify_remind).
 * Never touches the post.  0 (st says what happened; failed sends stay
 * pending), or -1 with err when the outbox could not be written.
 */
int notify_held(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const struct notice_post *p,
    double deadline_ms, struct notify_stats *st, char *err, size_t errsz);

/*
 * Notify the moderators of held post id again (a reminder, for
 * `expire_action = remind`): queue a "remind" notice per moderator and
 * send them until deadline_ms; hourly (expire's): past the list's
 * notify_max_per_hour they wait for the digest instead.  0 (1 when the post is not held: nothing
 * queued, err says why: "no post ID", or "post ID (list L) is approved,
 * not held"), or -1 with err.
 */
int notify_remind(struct queue *q, const struct listcfg_global *g,
    int64_t id, int hourly, double deadline_ms, struct notify_stats *st,
    char *err, size_t errsz);

/*
 * Send the pending notices of held post id (those queued by
 * notify_remind inside a transaction since committed) until
 * deadline_ms; hourly (expire's): each claimed against the list's
 * notify_max_per_hour with every other sender at once
 * (moddb_claim_counted), one past it left pending for the digest of
 * `notify --pending`.  0 (1 when the post is not held, err says why, as
 * for notify_remind), or -1 with err.
 */
int notify_send_post(struct queue *q, const struct listcfg_global *g,
    int64_t id, int hourly, double deadline_ms, struct notify_stats *st,
    char *err, size_t errsz);

/*
 * `notify --pending`: for list (NULL: every list with pending rows),
 * send the pending notices, drop those of posts decided (approved,
 * rejected, discarded, expired) or gone, keep those of a post being
 * released (it is held again if the release fails), and send each
 * moderator one digest of the rows waiting for one (and of
 * the notices past notify_max_per_hour); drop every row of a list
 * without moderators (or without a file).  0, or -1 with err (what was
 * done is in st; a list with moderators that cannot send is an error,
 * the others go on).
 */
int notify_pending(struct queue *q, const struct listcfg_global *g,
    const char *list, struct notify_stats *st, char *err, size_t errsz);

#endif
