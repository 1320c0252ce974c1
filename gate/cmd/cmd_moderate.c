/*
 * cmd_moderate.c - `listgate moderate`: the MTA's pipe command for the
 * moderation address
 *
 *   listgate [--config DIR] moderate [--mta qmail|postfix] [-f SENDER]
 *            [-- RECIPIENT]
 *
 * Reads one reply on standard input.  The action address
 * LOCAL{delim}ACTION-ID-COOKIE@DOMAIN comes from RECIPIENT (Postfix's
 * ${recipient}) or, under qmail, from $EXT@$HOST, $RECIPIENT or
 * $LOCAL@$HOST; it selects the list among the configured moderation
 * addresses (and its cookie, where lists share one).  A valid cookie
 * decides the post through the one decision path (decide_post: release,
 * journal, training), then the list's token file is synced; the
 * envelope sender gets a short answer when it is one of the list's
 * moderators, else the moderator the cookie was made for does (never an
 * address the reply chose; a refused address or cookie names none: then
 * no answer).
 * Everything from the MTA is hostile (gate/moderate/reply.c).
 *
 * Exit 0 once the reply is handled, accepted or refused (a refusal
 * changes nothing, says why in the answer and in the log); the
 * dialect's temporary failure (qmail 111, Postfix 75) when it cannot
 * work (configuration, secret, database, a failed release), so the MTA
 * retries.  A watchdog defers before the MTA's own limit.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/app/decide.h"
#include "gate/app/run.h"
#include "gate/app/settings.h"
#include "gate/cmd/cmd.h"
#include "gate/mail/spool.h"
#include "gate/moderate/cookie.h"
#include "gate/moderate/reply.h"
#include "gate/outcome.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/log.h"
#include "gate/util/sanitize.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

#define NAME	"moderate"

/* how long before the watchdog a release must end: time to set the
 * post back to held when it ran out (as filter's notices) */
#define RELEASE_MARGIN_MS	1000.0

/* the watchdog's exit code: defer until the decision is made, then 0
 * (75 until the dialect is known: settings_mta_fallback) */
static volatile sig_atomic_t wd_code = EXIT_EX_TEMPFAIL;
/* the outcome is decided: only the log line is left */
static volatile sig_atomic_t wd_decided;

static void
watchdog(int sig)
{
	static const char msg[] = "listgate moderate: timed out\n";
	static const char msg_log[] = "listgate moderate: timed out writing "
	    "the log line (is syslog stuck?); the reply's outcome stands\n";
	const char *m = wd_decided ? msg_log : msg;

	(void)sig;
	run_kill_active();
	if (write(STDERR_FILENO, m, strlen(m)) < 0)
		_exit(wd_code);
	_exit(wd_code);
}

/*
 * SIGTERM, SIGINT, SIGHUP: stop the release running now, if any, or
 * keep one from starting (decide_stop: a stop that came before it, the
 * approval waiting for its post's lock, let the release run to its end
 * afterwards), and let the reply end as a failed release does (the post
 * held again, the MTA told to retry); ending here could leave a post
 * 'releasing' with its release still running.  The watchdog bounds the
 * rest.
 */
static void
on_stop(int sig)
{
	decide_stop = sig;
	run_kill_active();
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] moderate [--mta qmail|postfix]\n"
	    "                [-f SENDER] [-- RECIPIENT]\n"
	    "\n"
	    "Read a reply to a hold notice's action address on standard input\n"
	    "and apply its decision (approve, reject, discard) when its cookie\n"
	    "is valid, and answer the sender when it is one of the list's\n"
	    "moderators, else the moderator the cookie was made for (a refused\n"
	    "address or cookie: nobody else).\n"
	    "The pipe command for the moderation address (Postfix pipe(8),\n"
	    "qmail .qmail-L-moderate-default).\n"
	    "\n"
	    "  -m, --mta M          qmail or postfix (default: mta in listgate.conf)\n"
	    "  -f, --sender SENDER  envelope sender (default $SENDER under qmail)\n"
	    "  RECIPIENT            the action address (Postfix ${recipient}; under\n"
	    "                       qmail $EXT@$HOST, $RECIPIENT or $LOCAL@$HOST)\n"
	    "  -h, --help           this help\n"
	    "\n"
	    "Exit status: 0 handled (accepted or refused); qmail 111 or\n"
	    "Postfix 75 when it cannot work now (the MTA retries).\n");
}

/* the one log line for this reply */
static void
log_reply(const struct reply *r, const char *result, const char *extra)
{
	char list[LG_MAX_LIST_NAME * 4 + 8], snd[300], by[300], why[1200];
	char ex[600];

	sanitize_str(list, sizeof(list), r->have_l ? r->l.name : "-",
	    r->have_l ? strlen(r->l.name) : 1, LG_MAX_LIST_NAME, SANITIZE_LOG,
	    0);
	sanitize_str(snd, sizeof(snd), r->sender ? r->sender : "",
	    r->sender ? strlen(r->sender) : 0, 200, SANITIZE_LOG, 0);
	sanitize_str(by, sizeof(by), r->from, strlen(r->from), 200,
	    SANITIZE_LOG, 0);
	sanitize_str(why, sizeof(why), r->why, strlen(r->why), 800,
	    SANITIZE_LOG, 0);
	sanitize_str(ex, sizeof(ex), extra ? extra : "", extra ?
	    strlen(extra) : 0, 400, SANITIZE_LOG, 0);
	log_info("moderate list=%s id=%lld action=%s result=%s by=<%s> "
	    "from=<%s> reason=\"%s\"%s%s%s", list, (long long)r->addr.id,
	    r->addr.id > 0 ? cookie_action_name(r->addr.action) : "-", result,
	    by, snd, why, ex[0] ? " answer=\"" : "", ex, ex[0] ? "\"" : "");
}

int
cmd_moderate(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "mta", required_argument, NULL, 'm' },
		{ "sender", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sigaction sa;
	struct listcfg_global g;
	struct spool sp;
	struct reply r;
	struct cookie_key *key = NULL;
	struct queue *q = NULL;
	struct buf extaddr = BUF_INIT(2 * COOKIE_MAX_ADDR),
	    localaddr = BUF_INIT(2 * COOKIE_MAX_ADDR);
	const char *cands[4], *ext, *host, *local, *sender = NULL;
	const char *rcpt = NULL, *result = "defer";
	char err[1024], kerr[1024], answer[1100] = "";
	enum mta mta = MTA_UNKNOWN;
	int ch, mta_known = 0, have_g = 0, have_sp = 0, rc, a, proven = 0;
	int help = 0, bad = 0, have_key = 0;
	enum outcome o = OUT_DEFER;

	memset(&r, 0, sizeof(r));
	memset(&sp, 0, sizeof(sp));
	sp.fd = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	alarm(LG_DEFAULT_TIMEOUT_S);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* a file size limit (ulimit -f, an MTA's) below a reply past the
	 * in-memory spool: the spool file's write fails with EFBIG and the
	 * reply is deferred with the reason, where SIGXFSZ killed us */
	sigaction(SIGXFSZ, &sa, NULL);
	log_setup("listgate", LOG_MAIL, 1);
	log_stderr(-1);

	while ((ch = getopt_long(argc, argv, "+m:f:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (mta_parse(optarg, &mta) < 0) {
				cmd_err(NAME, "bad --mta '%.40s' (want qmail or "
				    "postfix)", optarg);
				bad = 1;
				break;
			}
			mta_known = 1;
			wd_code = outcome_exit(OUT_DEFER, mta);
			break;
		case 'f':
			sender = optarg;
			break;
		case 'h':
			/* the options after it still give the dialect */
			help = 1;
			break;
		default:
			bad = 1;
			break;
		}
	}
	if (!help && optind < argc)
		rcpt = argv[optind++];
	if (!help && !bad && optind < argc) {
		cmd_err(NAME, "more than one recipient");
		bad = 1;
	}
	/* the dialect until listgate.conf gives it, and the watchdog's
	 * code with it: reading listgate.conf can hang (an NFS server
	 * away, a FIFO) */
	if (!mta_known)
		mta = settings_mta_fallback(ctx->refused_mta, sender != NULL ||
		    rcpt != NULL);
	wd_code = outcome_exit(OUT_DEFER, mta);
	if (help || bad) {
		/* the dialect, where no --mta gave it: listgate.conf's */
		if (!mta_known && listcfg_load_global(listcfg_dir(
		    ctx->config_dir), &g, err, sizeof(err)) == 0) {
			mta = settings_mta(&g);
			listcfg_free_global(&g);
		}
		usage(help ? stdout : stderr);
		alarm(0);
		/* 0 would tell an MTA the reply was handled */
		if (help && isatty(STDIN_FILENO))
			return EXIT_CMD_OK;
		return outcome_exit(OUT_DEFER, mta);
	}
	/* refused as root, or no listgate.conf: its mta setting is not
	 * known either (the dialect stays settings_mta_fallback's) */
	if (ctx->refused != NULL ||
	    listcfg_load_global(listcfg_dir(ctx->config_dir), &g, err,
	    sizeof(err)) < 0) {
		if (ctx->refused != NULL)
			snprintf(err, sizeof(err), "%s", ctx->refused);
		cmd_err(NAME, "%s", err);
		snprintf(r.why, sizeof(r.why), "%s", err);
		goto done;
	}
	have_g = 1;
	if (!mta_known)
		mta = settings_mta(&g);
	wd_code = outcome_exit(OUT_DEFER, mta);
	log_setup("listgate", g.log_facility, 1);
	alarm(g.timeout_s);
	if (g.timeout_s > 0)
		r.deadline = clock_now_ms() + g.timeout_s * 1000.0 -
		    RELEASE_MARGIN_MS;

	/* the envelope: options first, then qmail's environment */
	if (sender == NULL)
		sender = getenv("SENDER");
	r.sender = sender != NULL ? sender : "";
	/* no envelope sender at all is the pipe command's fault too
	 * (master.cf without -f ${sender}; a null sender is -f '' or
	 * pipe(8)'s MAILER-DAEMON, qmail's SENDER=''), not a bounce:
	 * taking it for one would ignore every reply, decisions lost */
	if (sender == NULL) {
		snprintf(r.why, sizeof(r.why), "no envelope sender: the "
		    "command line gives no -f and $SENDER is not set "
		    "(Postfix: give the pipe command of master.cf "
		    "-f ${sender}; qmail sets it itself)");
		goto done;
	}
	ext = getenv("EXT");
	host = getenv("HOST");
	local = getenv("LOCAL");
	if (ext != NULL && host != NULL && buf_adds(&extaddr, ext) == 0 &&
	    buf_addc(&extaddr, '@') == 0 && buf_adds(&extaddr, host) == 0)
		;
	else
		buf_reset(&extaddr);
	if (local != NULL && host != NULL && buf_adds(&localaddr, local) == 0 &&
	    buf_addc(&localaddr, '@') == 0 && buf_adds(&localaddr, host) == 0)
		;
	else
		buf_reset(&localaddr);
	cands[0] = rcpt;
	cands[1] = extaddr.len ? buf_str(&extaddr) : NULL;
	cands[2] = getenv("RECIPIENT");
	cands[3] = localaddr.len ? buf_str(&localaddr) : NULL;
	/* no recipient at all is the pipe command's fault (master.cf
	 * without -- ${recipient}), not a reply's: dropping it would drop
	 * every reply; the MTA keeps it until the command is mended */
	if ((rcpt == NULL || *rcpt == '\0') && cands[1] == NULL &&
	    (cands[2] == NULL || *cands[2] == '\0') && cands[3] == NULL) {
		snprintf(r.why, sizeof(r.why), "no recipient: the command "
		    "line gives none and neither do $EXT, $HOST, $RECIPIENT "
		    "and $LOCAL (Postfix: end the pipe command of master.cf "
		    "with -- ${recipient}; qmail sets them itself)");
		goto done;
	}

	if (spool_read(&sp, STDIN_FILENO, LG_MAX_SPOOL_MEM, LG_MAX_POST_BYTES,
	    err, sizeof(err)) < 0) {
		snprintf(r.why, sizeof(r.why), "reading the reply: %.900s", err);
		goto done;
	}
	have_sp = 1;
	r.msg = sp.data;
	r.len = sp.len;
	reply_headers(&r);

	/* the site's secret before routing: lists that share a moderation
	 * address are told apart by the cookie.  Not had, the reply is
	 * routed as without it, and deferred below where it needs it */
	if ((key = xcalloc(1, sizeof(*key))) == NULL)
		snprintf(kerr, sizeof(kerr), "out of memory");
	else if (cookie_load_key(g.secret_file, key, kerr, sizeof(kerr)) == 0)
		have_key = 1;
	rc = reply_route(&r, &g, have_key ? key : NULL, cands, 4);
	if (rc == REPLY_TEMP)
		goto done;
	if (rc == REPLY_REFUSED) {
		/* no list: nobody to answer from; a list's malformed action
		 * address: the answer says what is wrong */
		o = OUT_PASS;
		result = "refused";
		if (r.have_l && !reply_automatic(&r, err, sizeof(err)))
			goto answer;
		goto done;
	}
	if (reply_automatic(&r, err, sizeof(err))) {
		snprintf(r.why, sizeof(r.why), "%.900s never decides", err);
		o = OUT_PASS;
		result = "ignored";
		goto done;
	}
	if (!have_key) {
		snprintf(r.why, sizeof(r.why), "%s", kerr);
		goto done;
	}
	r.key = key;
	/* a bad cookie is refused before the database is asked (not an
	 * expired one: its post says whose notice it came from, and that
	 * moderator is told) */
	if ((rc = reply_check(&r, key, time(NULL))) != REPLY_DONE &&
	    !r.expired) {
		o = OUT_PASS;
		result = "refused";
		goto answer;
	}
	proven = 1;
	if (!queue_configured(g.conninfo)) {
		snprintf(r.why, sizeof(r.why), "no database configured "
		    "(database in listgate.conf)");
		goto done;
	}
	if (queue_open(g.conninfo, &q, err, sizeof(err)) < 0 ||
	    queue_check_schema(q, err, sizeof(err)) < 0) {
		snprintf(r.why, sizeof(r.why), "%s", err);
		goto done;
	}
	rc = reply_apply(&r, q, &g, key, time(NULL));
	if (rc == REPLY_TEMP)
		goto done;
	/* handled: from here on the MTA must not deliver it again */
	wd_code = outcome_exit(OUT_PASS, mta);
	o = OUT_PASS;
	result = rc == REPLY_DONE ? "decided" : "refused";
	if (rc == REPLY_DONE) {
		/* a restart during the release, which the approval rode
		 * out on its lock's connection, ended this one too */
		queue_revive(q, err, sizeof(err));
		cmd_sync_list(NAME, q, &g, r.l.name, 1);
		if (r.addr.action == COOKIE_REJECT) {
			a = reply_sender_notice(&r, q, &g, err, sizeof(err));
			if (a == 0)
				snprintf(answer, sizeof(answer), "sender "
				    "notified; ");
			else if (r.l.sender_notice)
				snprintf(answer, sizeof(answer), "sender not "
				    "notified: %.300s; ", err);
		}
	}
answer:
	wd_code = outcome_exit(OUT_PASS, mta);
	/* a refusal before the cookie proved anything goes to moderators
	 * only (so does one of its last characters, checked against the
	 * post and its moderator, or one whose post is gone); once it did
	 * (a post decided already, a release that failed), the sender is
	 * answered as for a decision */
	/* sealed as every message listgate sends: the refusal of a
	 * malformed action address comes before the key is loaded */
	if (r.key == NULL && key == NULL &&
	    (key = xcalloc(1, sizeof(*key))) == NULL)
		snprintf(err, sizeof(err), "out of memory");
	else if (r.key == NULL && cookie_load_key(g.secret_file, key, err,
	    sizeof(err)) == 0)
		r.key = key;
	if (r.key == NULL)
		a = -1;
	else
		a = reply_answer(&r, rc != REPLY_DONE && (!proven ||
		    r.cookie_refused), rc != REPLY_DONE ? &q : NULL, &g, err,
		    sizeof(err));
	{
		size_t n = strlen(answer);

		snprintf(answer + n, sizeof(answer) - n, "%.900s", a == 0 ?
		    "answered" : err);
	}
done:
	/* decided: the log line is left, still under the watchdog, which
	 * now answers with the outcome (a syslog that blocks held the
	 * answer until the MTA's own time limit: a bounce under Postfix) */
	wd_code = outcome_exit(o, mta);
	wd_decided = 1;
	log_reply(&r, o == OUT_DEFER ? "defer" : result, answer);
	if (o == OUT_DEFER && r.why[0] != '\0')
		cmd_err(NAME, "temporary failure: %s", r.why);
	if (q != NULL)
		queue_close(q);
	if (key != NULL) {
		memset(key, 0, sizeof(*key));
		xfree(key);
	}
	reply_free(&r);
	if (have_sp)
		spool_free(&sp);
	if (have_g)
		listcfg_free_global(&g);
	buf_free(&extaddr);
	buf_free(&localaddr);
	alarm(0);
	return outcome_exit(o, mta);
}
