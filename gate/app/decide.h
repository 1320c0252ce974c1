/*
 * decide.h - the one decision path for held posts: the CLI (approve,
 * reject, discard, expire), moderation by mail and the web page all
 * decide through decide_post
 *
 * An approval hands the post, byte for byte, to the list's `release`
 * command (argv template, no shell, the list's timeout or the caller's
 * deadline, whichever comes first); every decision
 * and its training commit in PostgreSQL (db/queue.h queue_decide).  The
 * token files follow with sync.  Returns -1 with a message in err;
 * nothing here prints or exits.
 */
#ifndef LG_DECIDE_H
#define LG_DECIDE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "db/queue.h"

struct listcfg_global;

/* a moderator's request */
struct decide_req {
	int64_t id;
	const char *status;	/* "approved", "rejected", "discarded",
				 * "expired" */
	const char *by;		/* who decides (recorded, never proof) */
	const char *note;	/* or NULL */
	int flags;		/* QUEUE_FORCE, QUEUE_MARK_ONLY */
	const char *list;	/* the list the post must be of, checked
				 * under the post's lock (QUEUE_OTHER_LIST);
				 * NULL: any */
	const unsigned char *raw_sha256;	/* the SHA-256 the post must
						 * have, checked with it
						 * (QUEUE_OTHER_POST); NULL:
						 * any */
	double deadline;	/* clock_now_ms() time a release must end
				 * by (a watchdog's, less a margin); 0: the
				 * list's timeout alone */
	double lock_by;		/* clock_now_ms() time by which the decision
				 * must have its post's lock, first (past it,
				 * or at a stop, decide_stop: nothing done,
				 * QUEUE_BUSY) and for an approval again
				 * after its mark (past it the post is held
				 * again, its release not run); 0: no limit
				 * to the first, deadline to the second (0
				 * too: none) */
};

/*
 * Non-zero from the moment decide_post commits a post's 'releasing'
 * mark (its release command runs after it) until decide_post returns,
 * its outcome recorded or not: a stop signal then must let the approval
 * end and be recorded (setting decide_stop), where before it nothing of
 * the post has changed and the process may end at once.  Ended between
 * the mark and the release, the post stayed 'releasing' with nothing
 * released.  For signal handlers of a single-threaded command (the
 * calling thread's: listgate web decides in threads at once).
 */
extern __thread volatile sig_atomic_t decide_releasing;

/*
 * Set by a signal handler to a stop signal (approve's: one that came
 * while decide_releasing; moderate's: any; web's stop: its signal, for
 * every request thread): a release command not
 * started yet is not started
 * (the post is held again, the decision fails with
 * "release command not run: stopped by signal N"); one running goes on
 * to its end.  The caller clears it before a run.  Read with
 * __atomic_load_n: web's request threads read it while its main
 * thread sets it.
 */
extern volatile sig_atomic_t decide_stop;

/*
 * Decide one post (lists' configuration from g).  Returns a QUEUE_*
 * result (res filled as queue_decide fills it), or -1 with err; err is
 * also set for QUEUE_RELEASE_FAILED and QUEUE_UNRECORDED.
 */
int decide_post(struct queue *q, const struct listcfg_global *g,
    const struct decide_req *rq, struct queue_decided *res, char *err,
    size_t errsz);

/* the status an action word records: "approve" -> "approved", "reject"
 * -> "rejected", "discard" -> "discarded"; NULL for anything else */
const char *decide_status(const char *action);

#endif
