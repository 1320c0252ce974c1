/*
 * cmd_notify.c - `listgate notify`: the outbox of hold notices
 *
 *   listgate [--config DIR] notify --pending [--list L]
 *   listgate [--config DIR] notify --remind ID...
 *
 * --pending (a cron line) sends the notices the filter could not send,
 * drops those of posts decided, keeps those of a post being released
 * (a release that fails holds it again), and sends each moderator one
 * digest of the posts held past a list's notify_max_per_hour.
 * --remind notifies the moderators of held posts again.  Both go
 * through gate/moderate/notify.c.  SIGTERM, SIGINT or SIGHUP stops
 * the run once the notice being sent is sent and recorded (killed
 * mid-send, a run would leave it pending, and a later run would send it
 * again); a second one ends it at once.  Exit 0, 1 when anything failed
 * or a stop left notices pending, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/cmd/cmd.h"
#include "gate/moderate/notify.h"
#include "gate/util/clock.h"
#include "listcfg/listcfg.h"

#define NAME	"notify"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] notify --pending [--list L] [--quiet]\n"
	    "       listgate [--config DIR] notify --remind ID...\n"
	    "\n"
	    "--pending sends the hold notices still in the outbox (the filter\n"
	    "sends them at once; these failed or waited), drops those of posts\n"
	    "decided, keeps those of a post being released (until it is held\n"
	    "again or approved), and sends each moderator one digest of the\n"
	    "posts held past the list's notify_max_per_hour.  Run it from\n"
	    "cron.\n"
	    "--remind notifies the moderators of held posts again.\n"
	    "\n"
	    "  -p, --pending    send what the outbox holds\n"
	    "  -l, --list L     only this list\n"
	    "  -r, --remind     the arguments are post IDs to remind of\n"
	    "  -q, --quiet      print only errors\n"
	    "  -h, --help       this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 something failed (it stays pending), 2 usage.\n");
}

/* a stop: the notice being sent is sent and recorded first, then the
 * run ends (notify_stop); a second stop ends it at once (SA_RESETHAND) */
static void
on_stop(int sig)
{
	static const char msg[] = "listgate notify: stopping after the notice "
	    "being sent (once more: at once, which may send it twice)\n";
	ssize_t n;

	notify_stop(sig);
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
}

/* print what was done */
static void
report(const char *what, const struct notify_stats *st)
{
	printf("%s: %u notice%s sent, %u digest%s, %u failed, %u dropped, "
	    "%u waiting\n", what, st->sent, st->sent == 1 ? "" : "s",
	    st->digests, st->digests == 1 ? "" : "s", st->failed, st->dropped,
	    st->waiting);
}

int
cmd_notify(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "pending", no_argument, NULL, 'p' },
		{ "remind", no_argument, NULL, 'r' },
		{ "list", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct notify_stats st;
	struct queue *q;
	const char *list = NULL;
	char err[1024];
	long long id;
	int ch, pending = 0, remind = 0, quiet = 0, nfail = 0, i, r;

	while ((ch = getopt_long(argc, argv, "prl:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			pending = 1;
			break;
		case 'r':
			remind = 1;
			break;
		case 'l':
			list = optarg;
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
	if (pending == remind) {
		cmd_err(NAME, "%s", pending ? "--pending and --remind exclude "
		    "each other: give one of them" : "give --pending or "
		    "--remind");
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (pending && cmd_no_args(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if (remind && (optind >= argc || list != NULL)) {
		cmd_err(NAME, "--remind takes post IDs (and no --list)");
		return EXIT_CMD_USAGE;
	}
	for (i = optind; remind && i < argc; i++) {
		if (cmd_parse_num(argv[i], 1, INT64_MAX, &id) < 0) {
			cmd_err(NAME, "bad post ID '%s'", argv[i]);
			return EXIT_CMD_USAGE;
		}
	}
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_bad_list(NAME, list);
		return EXIT_CMD_USAGE;
	}
	if (cmd_connect(NAME, ctx, &g, &q, 1) < 0)
		return EXIT_CMD_FAIL;
	/* a misspelt --list (a cron line's) has nothing pending, as any
	 * quiet list has: say so, --quiet or not */
	if (list != NULL)
		cmd_warn_unknown_list(NAME, q, &g, list, "send");
	cmd_catch_stops(on_stop);
	if (pending) {
		if (notify_pending(q, &g, list, &st, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			nfail++;
		}
		if (st.failed) {
			cmd_err(NAME, "%u failed; the last (%s): %s",
			    st.failed, st.lastat, st.lasterr);
			nfail++;
		}
		if (!quiet)
			report(list != NULL ? list : "all lists", &st);
	}
	for (i = optind; remind && i < argc && !notify_stopped(); i++) {
		id = strtoll(argv[i], NULL, 10);
		/* (the posts named: not kept to notify_max_per_hour) */
		r = notify_remind(q, &g, (int64_t)id, 0, clock_now_ms() +
		    NOTIFY_RUN_S * 1000.0, &st, err, sizeof(err));
		if (r < 0) {
			cmd_err(NAME, "post %lld: %s", id, err);
			nfail++;
			continue;
		}
		if (r == 1) {
			/* no such post, or one decided or being released */
			cmd_err(NAME, "%s: no reminder", err);
			nfail++;
			continue;
		}
		if (st.ours)
			/* (not a failure: there is nothing to remind of) */
			cmd_err(NAME, "post %lld is a notice of listgate's (a "
			    "moderator's address leads to a list): no reminder, "
			    "it would loop", id);
		if (st.failed) {
			cmd_err(NAME, "post %lld: %s", id, st.lasterr);
			nfail++;
		}
		if (!quiet) {
			char what[64];

			snprintf(what, sizeof(what), "post %lld", id);
			report(what, &st);
		}
	}
	if (notify_stopped()) {
		cmd_err(NAME, "stopped by signal %d (%s): the notices not sent "
		    "stay pending", (int)notify_stopped(),
		    strsignal(notify_stopped()));
		nfail++;
	}
	queue_close(q);
	listcfg_free_global(&g);
	return nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
