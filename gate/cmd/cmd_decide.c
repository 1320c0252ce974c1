/*
 * cmd_decide.c - the moderator's decisions from a shell: `listgate
 * approve`, `reject` and `discard` (`expire` is cmd_expire.c)
 *
 * Each goes through decide_post (gate/app/decide.c), the path that mail
 * and web moderation share: each decision and its training events
 * commit in one PostgreSQL transaction with the post's row locked.
 * Approval first commits the post as 'releasing', then hands its
 * original bytes (checked against their SHA-256) to the list's
 * `release` command (no shell, own process group, the list's timeout)
 * with the post on its standard input; only its exit status 0 lets the
 * approval be recorded (else the post goes back to held).  A post found 'releasing' was
 * approved by a run that died before it recorded the outcome: it is not
 * released again unless --force says so; --mark-approved records it.
 * Afterwards the lists decided on are synced to their token files.
 * SIGINT, SIGTERM and SIGHUP that come while a post's release runs stop
 * the run after it: the release runs to its end and its outcome is
 * recorded (ending the run there would leave the post 'releasing' while
 * the release went on); one that comes after the post's mark commits and
 * before its release starts holds the post again, its release not run
 * (ending the run there left it 'releasing' with nothing released); a
 * second one ends the run at once, and one that comes at any other time
 * (a wait for a post's lock) ends it at once.
 * Trusts the configuration; the post is passed through untouched.
 * Exit 0, 1 on any failure, 2 on usage errors.
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

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/app/decide.h"
#include "gate/cmd/cmd.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

/* the four commands differ in these */
struct decision {
	const char *name;	/* command name */
	const char *status;	/* status recorded */
	const char *what;	/* for --help */
};

static const struct decision decisions[] = {
	{ "approve", "approved", "Release held posts to the list through its "
	    "release command\nand learn them as ham." },
	{ "reject", "rejected", "Reject held posts (they are not delivered) "
	    "and learn them as spam.\nTheir senders are not told "
	    "(sender_notice is for a reject by mail\nor on the web page)." },
	{ "discard", "discarded", "Discard held posts silently and learn them "
	    "as spam." },
	{ NULL, NULL, NULL }
};

static void
decide_usage(FILE *f, const struct decision *d)
{
	int ap = strcmp(d->name, "approve") == 0;

	fprintf(f,
	    "usage: listgate [--config DIR] %s [--note TEXT] [--by NAME] "
	    "[--force]%s\n"
	    "                [--quiet] ID...\n"
	    "\n"
	    "%s\n"
	    "Each decision and its training commit together; the list's token\n"
	    "file is synced afterwards.  A post already decided is left alone\n"
	    "unless --force changes the decision (the old training is undone).\n",
	    d->name, ap ? " [--mark-approved]" : "", d->what);
	if (ap)
		fprintf(f,
		    "\n"
		    "The post is marked 'releasing' before the release command runs.\n"
		    "A post still 'releasing' afterwards (an approve that was killed\n"
		    "or lost its database connection) may be on the list already: it\n"
		    "is not released again.  Check the list archive, then use\n"
		    "--force to release it again or --mark-approved to record it.\n");
	fprintf(f,
	    "\n"
	    "  -n, --note TEXT  a note kept with the decision\n"
	    "  -b, --by NAME    who decides (default $USER)\n"
	    "  -f, --force      change an earlier decision%s\n",
	    ap ? "; release a 'releasing'\n"
	    "                   post again" : "");
	if (ap)
		fprintf(f,
		    "  -m, --mark-approved  record a 'releasing' post as approved\n"
		    "                   (and learn it) without releasing it\n");
	fprintf(f,
	    "  -q, --quiet      print only errors\n"
	    "  -h, --help       this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 any post not decided, 2 usage error.\n");
}

/* the signal that asked the run to stop (SIGINT, SIGTERM, SIGHUP), or 0 */
static volatile sig_atomic_t stop_sig;

/* what a stop says (on_stop's message, set before cmd_catch_stops) */
static char stop_msg[160];

/* a stop: while a post's release runs (decide_releasing), taken after
 * it, the release run to its end and its outcome recorded first (before
 * its release starts, decide_stop holds the post again instead); a
 * second stop ends the run at once (SA_RESETHAND).  Anywhere else
 * (waiting for a post's lock, between posts, syncing) nothing of a post
 * is half done: the run ends at once, as the signal's default does */
static void
on_stop(int sig)
{
	ssize_t n;

	if (!decide_releasing) {
		/* the default action again (SA_RESETHAND), delivered when
		 * this handler returns */
		raise(sig);
		return;
	}
	stop_sig = sig;
	decide_stop = sig;
	n = write(STDERR_FILENO, stop_msg, strlen(stop_msg));
	(void)n;
}

/* parse a post id: 0, or -1 */
static int
parse_id(const char *s, int64_t *id_r)
{
	long long v;

	if (cmd_parse_num(s, 1, INT64_MAX, &v) < 0)
		return -1;
	*id_r = v;
	return 0;
}

/* approve, reject, discard */
static int
cmd_decide(int argc, char **argv, const struct cmd_ctx *ctx,
    const struct decision *d)
{
	static const struct option opts[] = {
		{ "note", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ "mark-approved", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	struct cmd_touched *t;
	struct decide_req rq;
	const char *note = NULL, *by = NULL;
	char who[256], err[1024];
	int64_t id;
	int ch, i, flags = 0, quiet = 0, nfail = 0;
	int ap = strcmp(d->name, "approve") == 0;

	while ((ch = getopt_long(argc, argv, ap ? "n:b:fmqh" : "n:b:fqh", opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'n':
			note = optarg;
			break;
		case 'b':
			by = optarg;
			break;
		case 'f':
			flags |= QUEUE_FORCE;
			break;
		case 'm':
			if (!ap) {
				cmd_err(d->name, "--mark-approved is an option "
				    "of approve");
				decide_usage(stderr, d);
				return EXIT_CMD_USAGE;
			}
			flags |= QUEUE_MARK_ONLY;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			decide_usage(stdout, d);
			return EXIT_CMD_OK;
		default:
			decide_usage(stderr, d);
			return EXIT_CMD_USAGE;
		}
	}
	if ((flags & QUEUE_FORCE) && (flags & QUEUE_MARK_ONLY)) {
		cmd_err(d->name, "--force releases again, --mark-approved "
		    "does not: give one of them");
		return EXIT_CMD_USAGE;
	}
	if (optind >= argc) {
		cmd_err(d->name, "no post ID given");
		decide_usage(stderr, d);
		return EXIT_CMD_USAGE;
	}
	for (i = optind; i < argc; i++)
		if (parse_id(argv[i], &id) < 0) {
			cmd_err(d->name, "bad post ID '%s'", argv[i]);
			return EXIT_CMD_USAGE;
		}
	if ((t = xcalloc(1, sizeof(*t))) == NULL) {
		cmd_err(d->name, "out of memory");
		return EXIT_CMD_FAIL;
	}
	if (cmd_connect(d->name, ctx, &g, &q, APP_CHECK_SCHEMA) < 0) {
		xfree(t);
		return EXIT_CMD_FAIL;
	}
	app_who(by, who, sizeof(who));
	stop_sig = 0;
	decide_stop = 0;
	snprintf(stop_msg, sizeof(stop_msg), "listgate %s: stopping after the "
	    "post being decided (once more: at once%s)\n", d->name, ap ?
	    ", which may leave it 'releasing'" : "");
	cmd_catch_stops(on_stop);
	for (i = optind; i < argc; i++) {
		parse_id(argv[i], &id);
		if (stop_sig != 0) {
			/* the posts after a stop are left as they are */
			cmd_err(d->name, "post %lld: not decided: stopped by "
			    "signal %d (%s)", (long long)id, (int)stop_sig,
			    strsignal(stop_sig));
			nfail++;
			continue;
		}
		memset(&rq, 0, sizeof(rq));
		rq.id = id;
		rq.status = d->status;
		rq.by = who;
		rq.note = note;
		rq.flags = flags;
		rq.list = NULL;
		rq.deadline = 0;
		/* the server restarted during the last post's release,
		 * which recorded it on a connection of its own: this one
		 * is gone too, and failed every post after it and the
		 * sync though the database was back (a failure stays for
		 * the decision to report) */
		queue_revive(q, err, sizeof(err));
		if (cmd_decide_one(d->name, q, &g, &rq, t, quiet, 0) < 0)
			nfail++;
	}
	queue_revive(q, err, sizeof(err));
	nfail += cmd_sync_touched(d->name, q, &g, t, quiet);
	queue_close(q);
	listcfg_free_global(&g);
	xfree(t);
	return nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

int
cmd_approve(int argc, char **argv, const struct cmd_ctx *ctx)
{
	return cmd_decide(argc, argv, ctx, &decisions[0]);
}

int
cmd_reject(int argc, char **argv, const struct cmd_ctx *ctx)
{
	return cmd_decide(argc, argv, ctx, &decisions[1]);
}

int
cmd_discard(int argc, char **argv, const struct cmd_ctx *ctx)
{
	return cmd_decide(argc, argv, ctx, &decisions[2]);
}
