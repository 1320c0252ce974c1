/*
 * decide.c - the one decision path for held posts: queue_decide with the
 * list's release command
 *
 * Trusts the configuration; the post is passed to `release` untouched
 * (handoff_post: a program through run_argv, no shell, its own process
 * group; or an LMTP server; within the list's timeout).
 * Failures return -1 or a QUEUE_* code with a message; nothing here
 * prints or exits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db/queue.h"
#include "gate/app/decide.h"
#include "gate/app/handoff.h"
#include "gate/util/clock.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

__thread volatile sig_atomic_t decide_releasing;
volatile sig_atomic_t decide_stop;

/* what release needs */
struct release_ctx {
	const struct listcfg_global *g;
	double deadline;	/* decide_req's (0: none) */
};

/* queue_decision's marking: the post's 'releasing' mark is about to
 * commit; a stop signal from here on must not end the process before
 * the approval ends, or the post would stay 'releasing' with nothing
 * released */
static void
marking(void *vctx)
{
	(void)vctx;
	decide_releasing = 1;
}

/* queue_decision's stopped: a stop came (decide_stop), so a wait for
 * the post's lock after its mark ends, the post held again, rather
 * than last as long as what holds the lock (a train of the list) */
static int
stopped(void *vctx)
{
	(void)vctx;
	return __atomic_load_n(&decide_stop, __ATOMIC_RELAXED) != 0;
}

/* queue_release_fn: run the list's release command with the post on
 * standard input, within the list's timeout and the deadline (-2 when
 * its LMTP server refused the post for good, or the program exited
 * with a permanent failure; -3 when its LMTP server got the whole post
 * and did not answer, or the program was killed after it had read the
 * whole post: the list may have it) */
static int
release(const struct queue_row *r, void *vctx, char *err, size_t errsz)
{
	const struct release_ctx *c = vctx;
	const struct listcfg_global *g = c->g;
	struct listcfg_list l;
	struct tmpl_vars v;
	char **argv = NULL, lerr[1024];
	double left;
	unsigned ms;
	int st, rc = -1;

	/* the post is 'releasing' (queue_decide committed it, marking
	 * set decide_releasing): a stop that came since ends the approval
	 * here, the post held again, rather than after a release that
	 * may run the list's whole timeout */
	if ((st = __atomic_load_n(&decide_stop, __ATOMIC_RELAXED)) != 0) {
		snprintf(err, errsz, "release command not run: stopped by "
		    "signal %d (%s)", st, strsignal(st));
		return -1;
	}

	if (listcfg_load_list(g, r->list, &l, lerr, sizeof(lerr)) < 0) {
		snprintf(err, errsz, "%s", lerr);
		return -1;
	}
	if (l.release == NULL || l.release[0] == NULL) {
		snprintf(err, errsz, "list %s has no release command: set "
		    "release in lists/%s.conf", r->list, r->list);
		goto out;
	}
	memset(&v, 0, sizeof(v));
	v.sender = r->env_sender;
	v.recipient = r->env_recipient;
	v.list = r->list;
	if ((st = tmpl_expand(l.release, &v, &argv)) < 0) {
		if (st == TMPL_EUNSAFE)
			snprintf(err, errsz, "release command not run: an "
			    "envelope value starting with '-' would begin an "
			    "argument that is not protected by `--' or an "
			    "option");
		else
			snprintf(err, errsz, "release command: cannot expand "
			    "the template (out of memory or an envelope "
			    "address over %u bytes)",
			    (unsigned)LG_MAX_ARG_BYTES);
		goto out;
	}
	ms = l.timeout_s * 1000u;
	if (c->deadline > 0) {
		/* whole seconds, as a program's time-out is rounded up to
		 * them: the caller's watchdog must not end the release */
		left = (c->deadline - clock_now_ms()) / 1000.0;
		if (left < 1.0) {
			snprintf(err, errsz, "release command not run: less "
			    "than a second left before the watchdog (timeout "
			    "in listgate.conf)");
			goto out;
		}
		if (ms == 0 || (unsigned)left * 1000u < ms)
			ms = (unsigned)left * 1000u;
	}
	/* a program's permanent failure as the site's MTA dialect has it
	 * (ezmlm-send's 100 under qmail) */
	st = handoff_post(argv, r->env_sender, r->raw, r->raw_len, -1, ms,
	    g->mta == LISTCFG_MTA_POSTFIX ? HANDOFF_EXITS_POSTFIX :
	    HANDOFF_EXITS_QMAIL, NULL, 0, lerr, sizeof(lerr));
	if (st == HANDOFF_OK)
		rc = 0;
	else {
		snprintf(err, errsz, "release %s%s", handoff_is_lmtp(argv) ?
		    "to " : "command ", lerr);
		/* an LMTP server's 5xx, a program's permanent exit: it
		 * will refuse the post again */
		if (st == HANDOFF_PERM)
			rc = -2;
		else if (st == HANDOFF_UNSURE)
			rc = -3;
	}
out:
	tmpl_free(argv);
	listcfg_free_list(&l);
	return rc;
}

int
decide_post(struct queue *q, const struct listcfg_global *g,
    const struct decide_req *rq, struct queue_decided *res, char *err,
    size_t errsz)
{
	struct queue_decision d;
	struct release_ctx c;
	int rc;

	memset(&d, 0, sizeof(d));
	d.id = rq->id;
	d.status = rq->status;
	d.by = rq->by;
	d.note = rq->note;
	d.flags = rq->flags;
	d.list = rq->list;
	d.raw_sha256 = rq->raw_sha256;
	if (strcmp(rq->status, "approved") == 0) {
		c.g = g;
		c.deadline = rq->deadline;
		d.release = release;
		d.marking = marking;
		/* a watchdog must not end the wait for the post's lock
		 * after its mark: the post would stay 'releasing' */
		d.deadline_ms = rq->lock_by > 0 ? rq->lock_by :
		    rq->deadline;
		d.stopped = stopped;
		d.ctx = &c;
	}
	if (rq->lock_by > 0) {
		/* the wait for the post's lock before anything changes
		 * ends there too, and at a stop */
		d.lock_by_ms = rq->lock_by;
		d.stopped = stopped;
	}
	rc = queue_decide(q, &d, res, err, errsz);
	decide_releasing = 0;
	return rc;
}

const char *
decide_status(const char *action)
{
	if (strcmp(action, "approve") == 0)
		return "approved";
	if (strcmp(action, "reject") == 0)
		return "rejected";
	if (strcmp(action, "discard") == 0)
		return "discarded";
	return NULL;
}
