/*
 * cmd_expire.c - `listgate expire`: each list's policy for posts held
 * too long
 *
 *   listgate [--config DIR] expire [--list L] [--older-than DAYS]
 *            [--by NAME] [--dry-run] [--quiet]
 *
 * For every list with held posts (or only L), the posts held for the
 * list's hold_expiry_days or more (--older-than DAYS for every list)
 * get the list's expire_action: discard (recorded 'expired', no
 * training), discard-learn (recorded 'expired' and learnt as spam), or
 * remind (the post stays held and its moderators are notified again
 * through the hold notices of moderation by mail, gate/moderate/notify.c;
 * again every hold_expiry_days).  Expiries go through the one decision path
 * (gate/app/decide.c); the lists whose training changed are synced
 * afterwards.  A post left 'releasing' for an hour or more (an approval
 * killed while its release command ran) is never expired: expire warns
 * of it, so that the daily run's mail tells the administrator what to
 * check.  SIGTERM, SIGINT or SIGHUP while a reminder is being sent
 * stops the run once it is sent and recorded (killed mid-send, the
 * reminder would be sent again by `notify --pending` once its claim
 * ran out); anywhere else the run ends at once, as the signal's default
 * does.  Meant for cron or a systemd timer, once a day.  Trusts
 * the configuration; list names from the database are checked before
 * a path is built.  Exit 0, 1 on any failure, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/expiry.h"
#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/app/decide.h"
#include "gate/cmd/cmd.h"
#include "gate/moderate/notify.h"
#include "gate/util/clock.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

#define NAME	"expire"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] expire [--list L] [--older-than DAYS]\n"
	    "                [--by NAME] [--dry-run] [--quiet]\n"
	    "\n"
	    "Apply each list's expiry policy to the posts it has held for\n"
	    "hold_expiry_days or more, as its expire_action says: discard (mark\n"
	    "them expired, no training), discard-learn (mark them expired and\n"
	    "learn them as spam) or remind (keep them held and notify the\n"
	    "moderators again, then again every hold_expiry_days).  Run it\n"
	    "daily from cron or a systemd timer (see listgate(1)).\n"
	    "\n"
	    "  -l, --list L            only this list\n"
	    "  -o, --older-than DAYS   this age instead of each list's\n"
	    "                          hold_expiry_days (0: every held post)\n"
	    "  -b, --by NAME           who expires (default $USER)\n"
	    "  -n, --dry-run           only say what would be done\n"
	    "  -q, --quiet             print only errors and warnings\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* a post releasing this long was left so by an approval that died */
#define STUCK_RELEASE_S	3600

/* queue_row_fn: warn of a post whose release was interrupted */
static int
stuck_release(const struct queue_row *r, void *vctx)
{
	unsigned long *nstuck = vctx;
	time_t now = time(NULL);
	char when[32];
	struct tm tm;

	if (r->decided == 0 || now - r->decided < STUCK_RELEASE_S)
		return 0;
	if (gmtime_r(&r->decided, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm) == 0)
		snprintf(when, sizeof(when), "?");
	(*nstuck)++;
	cmd_err(NAME, "warning: post %lld (list %s) has been releasing since "
	    "%s (approved by %s): the approval stopped while the release "
	    "command ran, so the post may or may not be on the list.  Check "
	    "the list's archive, then run `%s approve --mark-approved "
	    "%lld` if it is there, or `%s approve --force %lld` to "
	    "release it", (long long)r->id, r->list, when,
	    r->decided_by != NULL ? r->decided_by : "?", suggest_cmd(),
	    (long long)r->id, suggest_cmd(), (long long)r->id);
	return 0;
}

/* the names of the lists to expire */
struct names {
	char (*v)[LG_MAX_LIST_NAME + 1];
	size_t n, cap;
};

static int
add_name(const char *list, void *vctx)
{
	struct names *nm = vctx;

	if (!listcfg_name_ok(list))
		return 0;	/* the schema allows none; skipped */
	if (nm->n == nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 16;
		void *p = xrealloc(nm->v, nc * sizeof(*nm->v));

		if (p == NULL)
			return -1;
		nm->v = p;
		nm->cap = nc;
	}
	snprintf(nm->v[nm->n++], LG_MAX_LIST_NAME + 1, "%s", list);
	return 0;
}

/* 1 while a post's reminders are being sent (notify_send_post) */
static volatile sig_atomic_t reminding;

/* a stop: while reminders are being sent, taken after the one being sent
 * is sent and recorded (notify_stop), the run ending there; a second
 * stop ends it at once (SA_RESETHAND).  Anywhere else nothing is half
 * done that a later run would repeat: the run ends at once, as the
 * signal's default does */
static void
on_stop(int sig)
{
	static const char msg[] = "listgate expire: stopping after the "
	    "reminder being sent (once more: at once, which may send it "
	    "twice)\n";
	ssize_t n;

	if (!reminding) {
		/* the default action again (SA_RESETHAND), delivered when
		 * this handler returns */
		raise(sig);
		return;
	}
	notify_stop(sig);
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
}

/* the ids of one list's posts due, and their last reminders as seen */
struct ids {
	int64_t *v, *rem;
	size_t n, cap;
};

static int
add_id(int64_t id, int64_t reminded, void *vctx)
{
	struct ids *ids = vctx;

	if (ids->n == ids->cap) {
		size_t nc = ids->cap ? ids->cap * 2 : 64;
		int64_t *p = xrealloc(ids->v, nc * sizeof(*p));

		if (p == NULL)
			return -1;
		ids->v = p;
		if ((p = xrealloc(ids->rem, nc * sizeof(*p))) == NULL)
			return -1;
		ids->rem = p;
		ids->cap = nc;
	}
	ids->rem[ids->n] = reminded;
	ids->v[ids->n++] = id;
	return 0;
}

/*
 * Notify the moderators of held post id again, through the hold notices
 * of moderation by mail (gate/moderate/notify.c notify_remind: a
 * "remind" notice per moderator, queued in the outbox and sent within
 * NOTIFY_RUN_S; what does not go out stays there for `notify
 * --pending`).  The reminder is claimed (reminded_at) and queued in one
 * transaction, then sent: of two runs at once only one reminds, and a
 * run that dies before the commit leaves the post to the next.  1
 * sent (every reminder went out), 2 queued only (some did not: a failed
 * notify, a moderator's digest, the time up; `notify --pending` sends
 * them), 3 none: the post is a notice of listgate's (a moderator's
 * address led it back to a list; noticed, it would loop), 0 the post is
 * no longer held or another run reminds, -1 with err.
 */
static int
remind_post(struct queue *q, const struct listcfg_global *g,
    const char *list, int64_t id, unsigned days, int64_t reminded, char *err,
    size_t errsz)
{
	struct notify_stats st;
	char rb[256];
	int r;

	if ((r = expiry_claim_remind(q, id, days, reminded, err, errsz)) <= 0)
		return r;
	/* queued, nothing sent yet (no time given): sent after the commit */
	r = notify_remind(q, g, id, 1, clock_now_ms(), &st, err, errsz);
	if (r < 0) {
		expiry_claim_end(q, 0, rb, sizeof(rb));
		return -1;
	}
	if (expiry_claim_end(q, r == 0, err, errsz) < 0)
		return -1;
	if (r == 1)
		return 0;
	if (st.ours)
		/* nothing queued: not a reminder sent (claimed all the
		 * same, so that the next run does not try it again) */
		return 3;
	/* (kept to notify_max_per_hour as they go: filters and `notify
	 * --pending` may be sending the list's notices meanwhile) */
	reminding = 1;
	r = notify_send_post(q, g, id, 1, clock_now_ms() + NOTIFY_RUN_S *
	    1000.0, &st, err, errsz);
	reminding = 0;
	if (r < 0)
		return -1;
	if (r == 1)
		return 0;	/* decided meanwhile: its notices wait */
	if (st.failed > 0)
		/* queued: notify --pending sends it again */
		cmd_err(NAME, "warning: post %lld (list %s): a reminder "
		    "could not be sent yet (%s); `%s notify --pending` "
		    "retries it", (long long)id, list, st.lasterr,
		    suggest_cmd());
	return st.failed > 0 || st.waiting > 0 ? 2 : 1;
}

/* what one run did */
struct totals {
	unsigned long expired, learnt, reminded, queued;
	int nfail;
};

static const char *
action_name(int a)
{
	switch (a) {
	case LISTCFG_EXPIRE_DISCARD_LEARN:
		return "discard-learn";
	case LISTCFG_EXPIRE_REMIND:
		return "remind";
	default:
		return "discard";
	}
}

/* apply list's policy: failures counted in tot */
static void
expire_list(struct queue *q, const struct listcfg_global *g,
    const char *list, long older_than, const char *who, int dry, int quiet,
    struct cmd_touched *t, struct totals *tot)
{
	struct listcfg_list l;
	struct decide_req rq;
	struct ids ids;
	char err[1024], note[128], miss[64];
	unsigned days;
	size_t i;
	int r;

	memset(&ids, 0, sizeof(ids));
	if (listcfg_load_list(g, list, &l, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		tot->nfail++;
		return;
	}
	days = older_than >= 0 ? (unsigned)older_than : l.hold_expiry_days;
	/* (a dry run too: it would remind of nothing) */
	if (l.expire_action == LISTCFG_EXPIRE_REMIND && !notify_ready(&l)) {
		cmd_err(NAME, "list %s: expire_action = remind, but the list "
		    "cannot send notices: set %s in lists/%s.conf (its posts "
		    "stay held)", list, notify_missing(&l, miss, sizeof(miss)),
		    list);
		tot->nfail++;
		goto out;
	}
	if (expiry_due(q, list, days, l.expire_action == LISTCFG_EXPIRE_REMIND,
	    add_id, &ids, err, sizeof(err)) < 0) {
		/* (add_id stopped it: no memory for the ids) */
		cmd_err(NAME, "list %s: %s", list, strcmp(err, "stopped") == 0 ?
		    "out of memory" : err);
		tot->nfail++;
		goto out;
	}
	for (i = 0; i < ids.n && !notify_stopped(); i++) {
		if (dry) {
			printf("post %lld (list %s) held %u day%s or more: "
			    "would %s\n", (long long)ids.v[i], list, days,
			    days == 1 ? "" : "s", action_name(l.expire_action));
			continue;
		}
		if (l.expire_action == LISTCFG_EXPIRE_REMIND) {
			r = remind_post(q, g, list, ids.v[i], days, ids.rem[i],
			    err, sizeof(err));
			if (r == 0)
				continue;	/* decided, or another run's */
			if (r < 0) {
				cmd_err(NAME, "post %lld (list %s): %s",
				    (long long)ids.v[i], list, err);
				tot->nfail++;
				continue;
			}
			if (r == 3) {
				/* (not a failure: nothing to remind of) */
				cmd_err(NAME, "warning: post %lld (list %s) "
				    "is a notice of listgate's (a moderator's "
				    "address leads to a list): no reminder, it "
				    "would loop", (long long)ids.v[i], list);
				continue;
			}
			if (r == 2) {
				/* not (all) sent: not counted as sent */
				tot->queued++;
				if (!quiet)
					printf("post %lld: reminder queued, "
					    "not all sent yet (list %s)\n",
					    (long long)ids.v[i], list);
				continue;
			}
			tot->reminded++;
			if (!quiet)
				printf("post %lld: moderators reminded (list "
				    "%s)\n", (long long)ids.v[i], list);
			continue;
		}
		snprintf(note, sizeof(note), "held %u day%s or more: expired "
		    "(expire_action %s)", days, days == 1 ? "" : "s",
		    action_name(l.expire_action));
		memset(&rq, 0, sizeof(rq));
		rq.id = ids.v[i];
		rq.status = "expired";
		rq.by = who;
		rq.note = note;
		rq.flags = l.expire_action == LISTCFG_EXPIRE_DISCARD_LEARN ?
		    QUEUE_LEARN_SPAM : 0;
		rq.list = NULL;
		rq.deadline = 0;
		r = cmd_decide_one(NAME, q, g, &rq, t, quiet, 1);
		if (r < 0) {
			tot->nfail++;
			continue;
		}
		if (r == 1)
			continue;	/* decided meanwhile (a moderator, or
					 * another run): not counted */
		tot->expired++;
		if (rq.flags & QUEUE_LEARN_SPAM)
			tot->learnt++;
	}
out:
	xfree(ids.v);
	xfree(ids.rem);
	listcfg_free_list(&l);
}

int
cmd_expire(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "older-than", required_argument, NULL, 'o' },
		{ "by", required_argument, NULL, 'b' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	struct cmd_touched *t;
	struct names nm;
	struct totals tot;
	const char *list = NULL, *by = NULL;
	char err[1024], who[256];
	long older_than = -1;
	long long n;
	unsigned long nstuck = 0;
	size_t i;
	int ch, dry = 0, quiet = 0;

	while ((ch = getopt_long(argc, argv, "l:o:b:nqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'o':
			if (cmd_parse_num(optarg, 0, 100000, &n) < 0) {
				cmd_err(NAME, "bad --older-than '%s' (days)",
				    optarg);
				return EXIT_CMD_USAGE;
			}
			older_than = (long)n;
			break;
		case 'b':
			by = optarg;
			break;
		case 'n':
			dry = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (cmd_no_args(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_bad_list(NAME, list);
		return EXIT_CMD_USAGE;
	}
	memset(&nm, 0, sizeof(nm));
	memset(&tot, 0, sizeof(tot));
	if ((t = xcalloc(1, sizeof(*t))) == NULL) {
		cmd_err(NAME, "out of memory");
		return EXIT_CMD_FAIL;
	}
	if (cmd_connect(NAME, ctx, &g, &q, APP_CHECK_SCHEMA) < 0) {
		xfree(t);
		return EXIT_CMD_FAIL;
	}
	app_who(by, who, sizeof(who));
	if (list != NULL) {
		if (add_name(list, &nm) < 0)
			tot.nfail++;
		cmd_warn_unknown_list(NAME, q, &g, list, "expire");
	} else if (expiry_lists(q, add_name, &nm, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", strcmp(err, "stopped") == 0 ?
		    "out of memory" : err);
		tot.nfail++;
	}
	cmd_catch_stops(on_stop);
	for (i = 0; i < nm.n && !notify_stopped(); i++)
		expire_list(q, &g, nm.v[i], older_than, who, dry, quiet, t,
		    &tot);
	if (notify_stopped()) {
		/* (the lists' training waits for their next sync) */
		cmd_err(NAME, "stopped by signal %d (%s) after a reminder "
		    "was sent: the posts after it are left to the next run",
		    (int)notify_stopped(), strsignal(notify_stopped()));
		tot.nfail++;
	} else
		tot.nfail += cmd_sync_touched(NAME, q, &g, t, quiet);
	/* (warnings: with --quiet too, and they fail nothing) */
	if (queue_list(q, "releasing", list, stuck_release, &nstuck, err,
	    sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		tot.nfail++;
	}
	if (!quiet && !dry) {
		printf("%lu post%s expired (%lu learnt as spam), %lu "
		    "reminder%s sent", tot.expired, tot.expired == 1 ? "" :
		    "s", tot.learnt, tot.reminded, tot.reminded == 1 ? "" : "s");
		if (tot.queued > 0)
			printf(", %lu queued for `%s notify --pending`",
			    tot.queued, suggest_cmd());
		printf("\n");
	}
	/* a dry run's answer is what it prints: unwritten, it failed */
	if (cmd_stdout_done(NAME) < 0)
		tot.nfail++;
	xfree(nm.v);
	queue_close(q);
	listcfg_free_global(&g);
	xfree(t);
	return tot.nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
