/*
 * cmd_filter.c - `listgate filter`: the MTA's pipe command for one post
 *
 *   listgate [--config DIR] filter --list L [--mta qmail|postfix]
 *            [-f SENDER] [-- RECIPIENT]
 *
 * Reads one post on standard input, scores it against the list's token
 * file and passes it (qmail: exit 0 so the next .qmail line delivers;
 * Postfix: run the list's `deliver` command), holds it in PostgreSQL, or
 * stores it as discarded.  Everything from the MTA is untrusted: the
 * post, the envelope (-f, RECIPIENT, qmail's SENDER/RECIPIENT/LOCAL/HOST
 * environment) reach only argv words of `deliver` (never a shell), SQL
 * parameters and sanitized log text.  The list's identity comes only
 * from --list, checked before any path is built.
 *
 * Exit codes come only from outcome_exit().  Every failure, usage errors
 * and the watchdog included, is a temporary failure (qmail 111, Postfix
 * 75, and 75 while the dialect is not known: settings_mta_fallback); a
 * list's on_error = pass passes the post instead only when the
 * host failed it (database, lock, memory, spool, token file), never for
 * what the post itself chose (its size, an empty post).  A post over
 * max_post_bytes is a verdict, not an error: held unscored with the
 * verdict "oversize" (oversize = hold), or deferred.  A post is never
 * lost.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "gate/util/buf.h"
#include "gate/classify.h"
#include "gate/util/clock.h"
#include "gate/cmd/cmd.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"
#include "gate/util/log.h"
#include "gate/util/sanitize.h"
#include "gate/mail/mail.h"
#include "gate/outcome.h"
#include "db/queue.h"
#include "gate/app/handoff.h"
#include "gate/app/posttok.h"
#include "gate/app/run.h"
#include "gate/app/settings.h"
#include "gate/app/site.h"
#include "gate/verdict.h"
#include "gate/mail/spool.h"
#include "db/passcount.h"
#include "gate/holder/holder.h"
#include "gate/moderate/notice.h"
#include "gate/moderate/notify.h"
#include "db/tokdb.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"

#define NAME		"filter"
#define MAX_CLUES	20	/* deciding tokens stored with a held post */
#define MAX_CLUE_BYTES	(16u * 1024u)
#define MAX_HDR_BYTES	(8u * 1024u)	/* From/Subject/Message-ID kept */
/* milliseconds a hold waits for listgate holder's answer, at most */
#define HOLDER_WAIT_MS	5000u
/* below this, the holder is not asked (the filter holds the post) */
#define HOLDER_MIN_WAIT_MS	200.0
/* seconds a post about to pass waits for the database to say whether a
 * moderator decided it already */

/* the exit code the watchdog uses: the current dialect's "defer" (75
 * while it is not known: see mta_fallback),
 * "held" once the hold committed (only notices are left to send), or
 * "delivered" once `deliver` has (only the pass count is left) */
static volatile sig_atomic_t wd_code = EXIT_EX_TEMPFAIL;
static volatile sig_atomic_t wd_held, wd_delivered;
/* the outcome is decided and wd_code is its exit code: only the log
 * line and the MTA's reason are left */
static volatile sig_atomic_t wd_decided;
/* while `deliver` runs: the exit code should it have delivered
 * (handoff_last_ok) by the time the watchdog or a stop comes */
static volatile sig_atomic_t wd_delivering, wd_pass_code;

/* SIGALRM: too slow; SIGTERM, SIGINT, SIGHUP: told to stop (a service
 * stop, a person).  Either way, kill what we started (a `deliver` runs
 * in a process group of its own and would go on delivering a post the
 * MTA then retries) and leave the post to the MTA */
static void
watchdog(int sig)
{
	static const char *const msg[2][4] = {
		{ "listgate filter: timed out, deferring\n",
		  "listgate filter: timed out sending hold notices; the post "
		  "is held (`",
		  "listgate filter: timed out after the post was delivered\n",
		  "listgate filter: timed out writing the log line (is syslog "
		  "stuck?); the post's outcome stands\n" },
		{ "listgate filter: terminated by a signal, deferring\n",
		  "listgate filter: terminated by a signal while sending hold "
		  "notices; the post is held (`",
		  "listgate filter: terminated by a signal after the post was "
		  "delivered\n",
		  "listgate filter: terminated by a signal while writing the "
		  "log line; the post's outcome stands\n" },
	};
	/* after a held post's message: the command that sends the rest,
	 * naming the configuration in use (suggest_cmd) */
	static const char rest[] = " notify --pending` sends the rest)\n";
	const char *m, *c;
	int k;

	run_kill_active();
	if (wd_delivering && handoff_last_ok()) {
		/* it exited 0, or the LMTP server took the post, before
		 * we could note it: delivered */
		wd_code = wd_pass_code;
		wd_delivered = 1;
	}
	k = wd_decided ? 3 : wd_delivered ? 2 : wd_held ? 1 : 0;
	m = msg[sig != SIGALRM][k];
	c = suggest_cmd();
	if (write(STDERR_FILENO, m, strlen(m)) < 0 || (k == 1 &&
	    (write(STDERR_FILENO, c, strlen(c)) < 0 ||
	    write(STDERR_FILENO, rest, sizeof(rest) - 1) < 0)))
		_exit(wd_code);
	_exit(wd_code);
}

/* everything one run of the filter knows */
struct filter {
	enum mta mta;
	int mta_known;		/* from --mta or the configuration */
	struct listcfg_global g;
	struct listcfg_list l;
	int have_g, have_l;
	struct posttok pt;	/* the list's tokenizer settings and evidence
				 * (gate/app/posttok) */
	char evnote[256];	/* what the evidence asked and heard */
	struct bayes_params bp;
	const char *list;
	const char *sender, *recipient;
	struct spool sp;
	int have_spool;
	unsigned char sha[32];	/* the held post's SHA-256 (the notices'
				 * cookies are bound to it) */
	struct buf msgid, from, subject;
	double score;
	size_t ntok;
	unsigned nused;
	double site_w;		/* the site prior's weight, -1: not used */
	int scored;
	int64_t id;
	int count_failed;	/* the pass counter could not be updated */
	int held;		/* QUEUE_HELD_*: what the queue answered */
	int decided;		/* TOKDB_*: a moderator's earlier decision on
				 * these bytes, from the token file */
	int oversize;		/* larger than max_post_bytes */
	double t0;		/* clock_now_ms() at the start */
	char why[1024];		/* the failure, for the log and the MTA */
	struct queue *q;	/* open after a hold, for its notices */
	struct buf clues;	/* the deciding tokens stored with it */
	char notices[600];	/* what the notices did, for the log */
	int refused;		/* deliver's LMTP server refused the post
				 * for good (5xx): hold it */
	char refusal[1024];	/* why, stored with the held post */
	char dnote[400];	/* a delivery's note, for the log */
	char hnote[300];	/* what the holder did, for the log */
	int deliver_tried;	/* deliver ran (on_error = pass never
				 * runs it again) */
	int host_failed;	/* why is the host's failure (on_error may
				 * pass the post), not the post's doing */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] filter --list L [--mta qmail|postfix]\n"
	    "                [-f SENDER] [-- RECIPIENT]\n"
	    "\n"
	    "Read one post on standard input, score it and pass, hold or defer\n"
	    "it; the exit code speaks the MTA's dialect (qmail: 0 pass, 99 held,\n"
	    "111 retry; Postfix: 0 delivered or held, 75 retry).\n"
	    "\n"
	    "  -l, --list L         the list (its lists/L.conf and tokens/L.kch)\n"
	    "  -m, --mta M          qmail or postfix (default: mta in listgate.conf)\n"
	    "  -f, --sender SENDER  envelope sender (default $SENDER under qmail)\n"
	    "  RECIPIENT            envelope recipient (default $RECIPIENT)\n"
	    "  -h, --help           this help\n");
}

/* the envelope came as options (-f, RECIPIENT), as pipe(8) gives it */
static int
envelope_args(const struct filter *f)
{
	return f->sender != NULL || f->recipient != NULL;
}

/* set the dialect and the watchdog's exit code with it */
static void
set_mta(struct filter *f, enum mta m)
{
	f->mta = m;
	f->mta_known = 1;
	wd_code = outcome_exit(OUT_DEFER, m);
}

/* the dialect until listgate.conf gives it, if --mta did not
 * (settings_mta_fallback), and the watchdog's code with it: before
 * listgate.conf is read, which can hang (an NFS server away, a FIFO),
 * and before envelope_from_env, so f->sender and f->recipient come
 * from argv */
static void
mta_fallback(struct filter *f, const struct cmd_ctx *ctx)
{
	if (f->mta_known)
		return;
	f->mta = settings_mta_fallback(ctx->refused_mta, envelope_args(f));
	wd_code = outcome_exit(OUT_DEFER, f->mta);
}

/* (re)arm the watchdog */
static void
arm_watchdog(unsigned secs)
{
	alarm(secs);
}

/* milliseconds since the start */
static double
elapsed_ms(const struct filter *f)
{
	return clock_now_ms() - f->t0;
}

/* the one summary line for this post */
static void
log_summary(struct filter *f, const char *action)
{
	char list[LG_MAX_LIST_NAME * 4 + 8], mid[512], snd[512], why[600];
	char score[32] = "-", idbuf[32] = "", ms[32], ev[300], site[32] = "";

	/* each value masked and cut (the arrays bound the bytes, the whole
	 * fits the log's 2 KiB line) */
	sanitize_str(list, sizeof(list), f->list ? f->list : "-",
	    f->list ? strlen(f->list) : 1, LG_MAX_LIST_NAME, SANITIZE_LOG, 0);
	sanitize_str(mid, sizeof(mid), f->msgid.len ? f->msgid.data :
	    (const void *)"-", f->msgid.len ? f->msgid.len : 1, 200,
	    SANITIZE_LOG, 0);
	sanitize_str(snd, sizeof(snd), f->sender ? f->sender : "",
	    f->sender ? strlen(f->sender) : 0, 200, SANITIZE_LOG, 0);
	if (f->scored)
		snprintf(score, sizeof(score), "%.3f", f->score);
	/* the site prior's weight when the site store was used */
	if (f->scored && f->site_w >= 0)
		snprintf(site, sizeof(site), " site=%g", f->site_w);
	if (f->id > 0)
		snprintf(idbuf, sizeof(idbuf), " id=%lld", (long long)f->id);
	snprintf(ms, sizeof(ms), "%.1f", elapsed_ms(f));
	/* the evidence's note is ours, but names a zone from the
	 * configuration: masked all the same */
	ev[0] = '\0';
	if (f->evnote[0] != '\0') {
		char note[256];

		sanitize_str(note, sizeof(note), f->evnote, strlen(f->evnote),
		    200, SANITIZE_LOG, 0);
		snprintf(ev, sizeof(ev), " evidence=\"%s\"", note);
	}
	if (f->why[0] != '\0') {
		sanitize_str(why, sizeof(why), f->why, strlen(f->why), 400,
		    SANITIZE_LOG, 0);
		log_info("list=%s msgid=%s score=%s tokens=%zu used=%u%s "
		    "action=%s%s ms=%s from=<%s>%s%s%s%s reason=\"%s\"%s",
		    list, mid, score, f->ntok, f->nused, site, action, idbuf,
		    ms, snd, ev, f->hnote, f->notices, f->dnote, why,
		    f->count_failed ? " passcount=failed" : "");
	} else
		log_info("list=%s msgid=%s score=%s tokens=%zu used=%u%s "
		    "action=%s%s ms=%s from=<%s>%s%s%s%s%s", list, mid, score,
		    f->ntok, f->nused, site, action, idbuf, ms, snd, ev,
		    f->hnote, f->notices, f->dnote, f->count_failed ?
		    " passcount=failed" : "");
}

/* record why the filter cannot do its work: the host's failure
 * (database, lock, memory, spool, token file, configuration) */
static void __attribute__((format(printf, 2, 3)))
failure(struct filter *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	f->host_failed = 1;
}

/* record why the post itself is deferred (what its sender chose: size,
 * an empty post): on_error = pass never passes it */
static void __attribute__((format(printf, 2, 3)))
refusal(struct filter *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	f->host_failed = 0;
}

/*
 * A post about to pass: did a moderator decide these very bytes within
 * the list's window (the MTA retrying a post whose filter was killed
 * after its hold committed, which now scores as ham)?  sync records
 * every decision in the token file by the post's SHA-256, so this is
 * one lookup in the file open for scoring, and the pass path needs no
 * database.  Sets f->decided; a lookup that fails only says so in the
 * log line (a post that passes needs nothing more).
 */
static void
decided_here(struct filter *f, struct tokdb *db)
{
	struct sha256_ctx h;
	unsigned char sha[SHA256_DIGEST_SIZE];
	uint32_t day, today = tokdb_today();
	int state;

	sha256_init(&h);
	if (f->sp.len > 0)
		sha256_update(&h, f->sp.len, f->sp.data);
	sha256_digest(&h, sizeof(sha), sha);
	if (tokdb_get_decided(db, sha, &state, &day) < 0) {
		if (f->why[0] == '\0')
			snprintf(f->why, sizeof(f->why), "passed without "
			    "checking for an earlier decision: %s",
			    tokdb_errmsg(db));
		return;
	}
	if (state != TOKDB_UNDECIDED && day + f->l.hold_expiry_days >= today)
		f->decided = state;
}

/* answered from an earlier decision: 1 with f->held set, else 0 */
static int
decided_before(struct filter *f)
{
	if (f->decided == TOKDB_UNDECIDED)
		return 0;
	f->held = f->decided == TOKDB_RELEASED ? QUEUE_HELD_APPROVED :
	    QUEUE_HELD_REJECTED;
	return 1;
}

/*
 * Hand a passed post on, unless a moderator decided these very bytes
 * already (OUT_HELD: answered from that decision).  qmail: exit 0 and
 * the next .qmail line delivers (`deliver` is not used).  Postfix: run
 * the list's `deliver`: a program with the post on stdin, whose exit 0
 * is the delivery, or an LMTP server, whose 250 is; an LMTP 5xx sets
 * f->refused (the caller holds the post).
 */
static enum outcome
do_pass(struct filter *f, int *delivered_r)
{
	struct tmpl_vars v;
	char **argv = NULL;
	char err[1024], note[300], lnote[300];
	double left;
	int rc;

	*delivered_r = 0;
	if (decided_before(f))
		return OUT_HELD;
	if (f->mta == MTA_QMAIL)
		return OUT_PASS;
	if (!f->have_l || f->l.deliver == NULL) {
		failure(f, "list has no deliver command: cannot pass the post "
		    "under Postfix");
		return OUT_DEFER;
	}
	if (!f->have_spool) {
		failure(f, "post not read completely: cannot deliver it");
		return OUT_DEFER;
	}
	memset(&v, 0, sizeof(v));
	v.sender = f->sender ? f->sender : "";
	v.recipient = f->recipient ? f->recipient : "";
	v.list = f->list;
	if ((rc = tmpl_expand(f->l.deliver, &v, &argv)) < 0) {
		/* TMPL_EUNSAFE cannot come from a loaded template (the
		 * check at load refuses what could give it), so no sender
		 * can make a post defer for ever through it */
		if (rc == TMPL_EUNSAFE)
			failure(f, "deliver: not run: an envelope value "
			    "starting with '-' would begin an argument that "
			    "is not protected by `--' or an option");
		else
			failure(f, "deliver: cannot expand the template (out "
			    "of memory or an envelope address over %u bytes)",
			    (unsigned)LG_MAX_ARG_BYTES);
		return OUT_DEFER;
	}
	/* what is left before the watchdog, less a second: our own
	 * time-out then says why, where the watchdog would defer blindly */
	left = f->t0 + f->l.timeout_s * 1000.0 - 1000.0 - clock_now_ms();
	if (left < 1)
		left = 1;
	wd_pass_code = outcome_exit(OUT_PASS, f->mta);
	wd_delivering = 1;
	f->deliver_tried = 1;
	rc = handoff_post(argv, v.sender, f->sp.data, f->sp.len, f->sp.fd,
	    (unsigned)left, HANDOFF_EXITS_TEMP, note, sizeof(note), err,
	    sizeof(err));
	if (rc == HANDOFF_OK) {
		/* from here a watchdog or a signal must not make the MTA
		 * deliver it again */
		wd_code = outcome_exit(OUT_PASS, f->mta);
		wd_delivered = 1;
	}
	wd_delivering = 0;
	tmpl_free(argv);
	if (rc != HANDOFF_OK) {
		failure(f, "deliver: %s", err);
		if (rc == HANDOFF_PERM) {
			f->refused = 1;
			snprintf(f->refusal, sizeof(f->refusal), "deliver "
			    "refused the post: %.900s", err);
		}
		return OUT_DEFER;
	}
	if (note[0] != '\0')
		snprintf(f->dnote, sizeof(f->dnote), " deliver_note=\"%s\"",
		    sanitize_str(lnote, sizeof(lnote), note, strlen(note), 250,
		    SANITIZE_LOG, 0));
	*delivered_r = 1;
	return OUT_PASS;
}

/* the post's From, Subject and Message-ID (decoded, bounded): 0, or -1
 * with f->why when out of memory (a held post must carry them: defer) */
static int
read_headers(struct filter *f, size_t scan)
{
	struct buf tmp = BUF_INIT(LG_MAX_FIELD_BYTES);
	static const char *const names[] = { "Message-ID", "From", "Subject" };
	struct buf *dst[3];
	size_t i;
	int r, rc = 0;

	dst[0] = &f->msgid;
	dst[1] = &f->from;
	dst[2] = &f->subject;
	for (i = 0; i < 3 && rc == 0; i++) {
		buf_reset(&tmp);
		buf_reset(dst[i]);
		r = mail_header(f->sp.data, scan, names[i], &tmp);
		if (r < 0 || (r == 1 &&
		    buf_add_trunc(dst[i], tmp.data, tmp.len) < 0)) {
			failure(f, "out of memory reading the %s header field",
			    names[i]);
			rc = -1;
		}
	}
	buf_free(&tmp);
	return rc;
}

/* score the post; 0, or -1 with f->why.  The tokenizer gets the whole
 * post and stops at max_scan itself, as in train and score: it then
 * adds the token that says the post was cut */
static int
score_post(struct filter *f, struct classify *c)
{
	struct site_stores ss;
	struct classify_counts cc;
	char err[1024];
	double now, left;

	if (f->sp.len == 0) {
		/* the sender's doing, whatever else fails */
		refusal(f, "empty post");
		return -1;
	}
	/* the evidence within half of what is left before the watchdog,
	 * less a second: a list's timeout shorter than member_check_ms or
	 * dns_timeout_ms cuts the evidence short, and the post is still
	 * scored and passed or held, where the watchdog would defer it
	 * for as long as the check or the DNS server hangs */
	now = clock_now_ms();
	left = (f->t0 + f->l.timeout_s * 1000.0 - 1000.0 - now) / 2;
	f->pt.evidence_by = now + (left > 0 ? left : 0);
	/* the tokens and the evidence before the token file is opened: a
	 * member_check or a DNS answer never keeps a reader's lock */
	if (posttok_post(&f->pt, f->sp.data, f->sp.len,
	    f->sender, c->toks, f->evnote, sizeof(f->evnote)) < 0) {
		failure(f, "scoring: out of memory while tokenizing");
		return -1;
	}
	/* the list's token file, with the site store's when it applies */
	if (site_open(&f->g, &f->l, &ss, &cc, err, sizeof(err)) != 0) {
		failure(f, "%s", err);
		return -1;
	}
	f->site_w = ss.site != NULL ? ss.ts.weight : -1;
	if (classify_post(c, &cc, &f->bp, &f->pt.to, NULL, 0, err,
	    sizeof(err)) < 0) {
		failure(f, "scoring: %s", err);
		site_close(&ss);
		return -1;
	}
	f->score = c->r.score;
	f->nused = c->r.nused;
	f->ntok = toklist_count(c->toks);
	f->scored = 1;
	/* decisions are in the list's own file (none yet: nothing decided) */
	if (f->score < f->l.ham_cutoff && ss.own != NULL)
		decided_here(f, ss.own);
	site_close(&ss);
	return 0;
}

/*
 * Hand the post to listgate holder when holder_socket is set (and the
 * post is at most HOLDER_MAX_RAW bytes): 0 when the holder answered
 * that it is held, -1 when the filter holds it itself (no holder, no
 * answer in time, no time left, a holder not trusted, the holder's
 * error: noted for the log).  notify: the hold notices are to go out;
 * the holder sends them.
 */
static int
hold_by_holder(struct filter *f, const struct queue_post *qp, int notify)
{
	struct holder_req rq;
	struct holder_ans a;
	char err[600], clean[600], db[HOLDER_DATABASE_ID_LEN + 1];
	unsigned wait_ms = HOLDER_WAIT_MS;
	double left;

	if (f->g.holder_socket == NULL || qp->raw_len > HOLDER_MAX_RAW)
		return -1;
	/* a quarter of the watchdog's time at most, and half of what is
	 * left of it (less a second): the rest is the filter's own hold */
	if (wait_ms > f->l.timeout_s * 250u)
		wait_ms = f->l.timeout_s * 250u;
	left = (f->t0 + f->l.timeout_s * 1000.0 - 1000.0 - clock_now_ms()) / 2;
	if (left < HOLDER_MIN_WAIT_MS) {
		snprintf(f->hnote, sizeof(f->hnote), " holder_error=\"no time "
		    "left to wait for it\"");
		return -1;
	}
	if (left < wait_ms)
		wait_ms = (unsigned)left;
	memset(&rq, 0, sizeof(rq));
	rq.post = *qp;
	rq.notify = notify;
	/* the holder stores only in this database (that of another
	 * configuration's holder on the same socket is not ours) */
	holder_database_id(f->g.conninfo, db);
	rq.database = db;
	if (holder_hold(f->g.holder_socket, &rq, wait_ms, &a, err,
	    sizeof(err)) < 0) {
		snprintf(f->hnote, sizeof(f->hnote), " holder_error=\"%s\"",
		    sanitize_str(clean, sizeof(clean), err, strlen(err), 200,
		    SANITIZE_LOG, 0));
		return -1;
	}
	/* committed by the holder: the post is held whatever happens */
	wd_code = outcome_exit(OUT_HELD, f->mta);
	wd_held = 1;
	f->held = a.held;
	f->id = a.id;
	snprintf(f->hnote, sizeof(f->hnote), " holder=yes");
	if (a.notifying)
		snprintf(f->notices, sizeof(f->notices), " notices=holder");
	return 0;
}

/* store the post in the queue as status ("held" or "discarded"); c is
 * NULL for an oversize post (held unscored); notify: its hold notices
 * are to go out (the holder sends them; else the connection stays open
 * in f->q for send_notices) */
static int
hold_post(struct filter *f, struct classify *c, const char *status,
    int notify)
{
	struct buf *clues = &f->clues;
	struct queue_post qp;
	struct queue *q = NULL;
	char err[1024];
	int rc = -1;

	if (!queue_configured(f->g.conninfo)) {
		failure(f, "no database configured (database in "
		    "listgate.conf): cannot hold the post");
		return -1;
	}
	snprintf(err, sizeof(err), "oversize: %zu bytes, max_post_bytes %zu",
	    f->sp.len, f->l.max_post_bytes);
	if (c != NULL ? classify_clues(c, MAX_CLUES, clues) < 0 :
	    buf_adds(clues, err) < 0) {
		/* a held post always carries its deciding tokens */
		failure(f, "out of memory listing the deciding tokens");
		return -1;
	}
	memset(&qp, 0, sizeof(qp));
	qp.list = f->list;
	qp.env_sender = f->sender ? f->sender : "";
	qp.env_recipient = f->recipient ? f->recipient : "";
	qp.from = buf_str(&f->from);
	qp.subject = buf_str(&f->subject);
	qp.msgid = buf_str(&f->msgid);
	qp.raw = f->sp.data;
	qp.raw_len = f->sp.len;
	/* a spooled post is read from its file in chunks, never touched
	 * whole through the mapping */
	qp.raw_from_fd = f->sp.fd >= 0;
	qp.raw_fd = f->sp.fd;
	qp.score = c != NULL ? f->score : 0;
	qp.verdict = c == NULL ? "oversize" : verdict_name(verdict_of(
	    f->score, f->l.ham_cutoff, f->l.spam_cutoff));
	qp.clues = buf_str(clues);
	qp.status = status;
	qp.note = f->refusal;
	qp.remember_days = f->l.hold_expiry_days;
	/* its notices queued with it (not for a notice of listgate's: see
	 * notify_held) */
	if (notify && notify_ready(&f->l) && !notify_is_ours(&f->g, f->sp.data,
	    f->sp.len)) {
		qp.notify_mods = f->l.moderators;
		qp.notify_max_per_hour = f->l.notify_max_per_hour;
	}
	if (hold_by_holder(f, &qp, notify) == 0)
		return 0;
	/* (queue_hold checks the schema: no round trip of its own) */
	if (queue_open(f->g.conninfo, &q, err, sizeof(err)) < 0 ||
	    (f->held = queue_hold_sha(q, &qp, &f->id, f->sha, err,
	    sizeof(err))) < 0) {
		failure(f, "%s", err);
		goto out;
	}
	/* committed: from here on the post is held whatever happens */
	wd_code = outcome_exit(OUT_HELD, f->mta);
	wd_held = 1;
	f->q = q;
	q = NULL;
	rc = 0;
out:
	if (q != NULL)
		queue_close(q);
	return rc;
}

/* one more post passed, for `listgate stats` (tokens_dir/L.passed, see
 * db/passcount.h): never changes the outcome, a failure is only noted
 * in the log line */
static void
count_pass(struct filter *f)
{
	char path[4096], err[512];

	if (!f->have_g || f->list == NULL || !listcfg_name_ok(f->list) ||
	    listcfg_passcount_path(&f->g, f->list, path, sizeof(path)) < 0 ||
	    passcount_add(path, passcount_today(), err, sizeof(err)) < 0)
		f->count_failed = 1;
}

/*
 * The hold notices, after the hold committed: queued in the outbox and
 * sent within NOTIFY_WAIT_S (and well inside the watchdog).  Nothing
 * here changes the post's outcome; what did not go out stays in the
 * outbox for `notify --pending`.
 */
static void
send_notices(struct filter *f)
{
	struct notice_post p;
	struct notify_stats st;
	char err[1024];
	double now = clock_now_ms(), deadline, wd;

	if (f->q == NULL || !notify_ready(&f->l))
		return;
	deadline = now + NOTIFY_WAIT_S * 1000.0;
	/* the watchdog, less a second of margin, bounds it too */
	wd = f->t0 + f->l.timeout_s * 1000.0 - 1000.0;
	if (wd < deadline)
		deadline = wd;
	memset(&p, 0, sizeof(p));
	p.list = f->list;
	p.id = f->id;
	p.env_sender = f->sender ? f->sender : "";
	p.from = buf_str(&f->from);
	p.subject = buf_str(&f->subject);
	p.score = f->score;
	p.verdict = verdict_name(verdict_of(f->score, f->l.ham_cutoff,
	    f->l.spam_cutoff));
	p.clues = buf_str(&f->clues);
	p.note = f->refusal;
	if (f->oversize) {
		/* not scored: no tokens; the size is why it is held */
		p.verdict = "oversize";
		p.clues = "";
		p.note = buf_str(&f->clues);
	}
	p.raw = f->sp.data;
	p.raw_len = f->sp.len;
	p.arrived = time(NULL);
	p.raw_sha256 = f->sha;
	if (notify_held(f->q, &f->g, &f->l, &p, deadline, &st, err,
	    sizeof(err)) < 0) {
		snprintf(f->notices, sizeof(f->notices), " notices=failed "
		    "notice_error=\"%.300s\"", err);
		return;
	}
	if (st.ours)
		snprintf(f->notices, sizeof(f->notices), " notices=none "
		    "notice_error=\"the post is a notice of listgate's: a "
		    "moderator's address leads to a list (no notice of a "
		    "notice: it would loop)\"");
	else if (st.lasterr[0] != '\0')
		snprintf(f->notices, sizeof(f->notices), " notices=%u/%u "
		    "notice_error=\"%.300s\"", st.sent, st.queued, st.lasterr);
	else
		snprintf(f->notices, sizeof(f->notices), " notices=%u/%u%s",
		    st.sent, st.queued, st.waiting && st.sent == 0 ?
		    " notices_wait=digest" : "");
}

/* the decision for a post the filter could not judge */
static enum outcome
on_failure(struct filter *f, int *delivered_r)
{
	char why[sizeof(f->why)];
	enum outcome o;

	*delivered_r = 0;
	/* only the host's own failures: never a post the sender made fail
	 * (its size, an empty post), whatever failed after that; nor a
	 * post deliver refused for good (not offered again); nor one
	 * deliver failed to take: passing is delivering, and a second
	 * try in the same run would deliver twice a post the first one
	 * handed over before it failed (a time-out after the data) */
	if (!f->have_l || f->l.on_error != ON_ERROR_PASS || !f->host_failed ||
	    f->oversize || f->refused || f->deliver_tried)
		return OUT_DEFER;
	memcpy(why, f->why, sizeof(why));
	f->why[0] = '\0';
	o = do_pass(f, delivered_r);
	if (o == OUT_PASS)
		snprintf(f->why, sizeof(f->why), "on_error=pass: %.900s", why);
	return o;
}

/* parse options; 0, or -1 on a usage error (reason in f->why) */
static int
parse_args(struct filter *f, int argc, char **argv, int *help_r)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "mta", required_argument, NULL, 'm' },
		{ "sender", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum mta m;
	int ch, bad = 0;

	*help_r = 0;
	while ((ch = getopt_long(argc, argv, "+l:m:f:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			f->list = optarg;
			break;
		case 'm':
			if (mta_parse(optarg, &m) < 0) {
				failure(f, "usage: bad --mta '%.40s' (want qmail or "
				    "postfix)", optarg);
				bad = 1;
			} else
				set_mta(f, m);
			break;
		case 'f':
			f->sender = optarg;
			break;
		case 'h':
			/* the options after it still give the dialect */
			*help_r = 1;
			break;
		default:
			if (!bad)
				failure(f, "usage: unknown option");
			bad = 1;
			break;
		}
	}
	if (optind < argc)
		f->recipient = argv[optind++];
	if (*help_r)
		return 0;
	if (optind < argc && !bad) {
		failure(f, "usage: more than one recipient");
		bad = 1;
	}
	if (f->list == NULL && !bad) {
		failure(f, "usage: --list is required");
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* qmail's envelope from the environment, where options gave none */
static void
envelope_from_env(struct filter *f, struct buf *rcpt)
{
	const char *local, *host;

	if (f->sender == NULL)
		f->sender = getenv("SENDER");
	if (f->recipient == NULL) {
		f->recipient = getenv("RECIPIENT");
		if (f->recipient == NULL && (local = getenv("LOCAL")) != NULL &&
		    (host = getenv("HOST")) != NULL &&
		    buf_adds(rcpt, local) == 0 && buf_addc(rcpt, '@') == 0 &&
		    buf_adds(rcpt, host) == 0)
			f->recipient = buf_str(rcpt);
	}
}

int
cmd_filter(int argc, char **argv, const struct cmd_ctx *ctx)
{
	struct sigaction sa;
	struct filter f;
	struct classify c;
	struct buf rcpt = BUF_INIT(2 * LG_MAX_ARG_BYTES);
	char err[1024];
	const char *action;
	enum outcome o = OUT_DEFER;
	size_t scan;
	int help, cinit = 0, delivered = 0, overruled = 0, r;

	memset(&f, 0, sizeof(f));
	f.sp.fd = -1;
	buf_init(&f.msgid, MAX_HDR_BYTES);
	buf_init(&f.from, MAX_HDR_BYTES);
	buf_init(&f.subject, MAX_HDR_BYTES);
	buf_init(&f.clues, MAX_CLUE_BYTES);
	f.t0 = clock_now_ms();
	f.mta = MTA_UNKNOWN;
	wd_code = outcome_exit(OUT_DEFER, MTA_UNKNOWN);

	/* the watchdog first: nothing below may outlast the MTA's patience */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	arm_watchdog(LG_DEFAULT_TIMEOUT_S);
	/* a closed stderr or log socket must not kill us between the
	 * committed INSERT and the exit code that reports it */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* nor a file size limit (ulimit -f, an MTA's) below the post: the
	 * spool file's write then fails with EFBIG and the post is
	 * deferred with the reason, where SIGXFSZ killed us without one */
	sigaction(SIGXFSZ, &sa, NULL);
	log_setup("listgate", LOG_MAIL, 1);
	log_stderr(-1);

	r = parse_args(&f, argc, argv, &help);
	mta_fallback(&f, ctx);
	if (ctx->refused != NULL && (r < 0 || !help)) {
		/* started as root and may not stay: nothing is opened; the
		 * post stays with the MTA, in its dialect (--mta, else
		 * listgate.conf's, which main read: mta_fallback) */
		failure(&f, "%s", ctx->refused);
		goto decide;
	}
	if (r < 0) {
		/* the dialect may still come from the configuration */
		if (!f.mta_known && listcfg_load_global(
		    listcfg_dir(ctx->config_dir), &f.g, err, sizeof(err)) == 0) {
			set_mta(&f, settings_mta_filter(&f.g, envelope_args(&f),
			    &overruled));
			listcfg_free_global(&f.g);
		}
		fprintf(stderr, "listgate filter: %s\n", f.why);
		usage(stderr);
		goto decide;
	}
	if (help) {
		/* exit 0 would tell an MTA the post was delivered: only a
		 * person at a terminal gets it; else the defer of
		 * mta_fallback's dialect, which every MTA takes as
		 * temporary.  listgate.conf is not read for a better one:
		 * reading it can hang (an NFS server away, a FIFO), and
		 * did, with the watchdog already off, until the MTA's own
		 * time limit (which Postfix ends with a bounce) */
		usage(stdout);
		alarm(0);
		return outcome_exit(isatty(STDIN_FILENO) ? OUT_PASS : OUT_DEFER,
		    f.mta);
	}
	if (listcfg_load_global(listcfg_dir(ctx->config_dir), &f.g, err,
	    sizeof(err)) < 0) {
		failure(&f, "%s", err);
		/* its mta setting is not known either: mta_fallback's */
		goto decide;
	}
	f.have_g = 1;
	if (!f.mta_known)
		set_mta(&f, settings_mta_filter(&f.g, envelope_args(&f),
		    &overruled));
	log_setup("listgate", f.g.log_facility, 1);
	if (overruled)
		log_warn("filter: mta = qmail (listgate.conf's, or its "
		    "default), but the envelope came as options (-f, --) and "
		    "not from qmail-local: answering as Postfix, whose pipe(8) "
		    "this is (put --mta postfix on the command line, or mta = "
		    "postfix in listgate.conf)");
	arm_watchdog(f.g.timeout_s);
	if (!listcfg_name_ok(f.list)) {
		failure(&f, "bad list name '%.200s' (want [a-z0-9][a-z0-9._-]*, "
		    "at most %d bytes, no \"..\")", f.list, LG_MAX_LIST_NAME);
		f.list = "?";
		goto decide;
	}
	if (listcfg_load_list(&f.g, f.list, &f.l, err, sizeof(err)) < 0) {
		failure(&f, "%s", err);
		goto decide;
	}
	f.have_l = 1;
	if (posttok_init(&f.pt, &f.g, &f.l, err, sizeof(err)) < 0) {
		failure(&f, "%s", err);
		goto decide;
	}
	settings_bayes(&f.l, &f.bp);
	arm_watchdog(f.l.timeout_s);
	envelope_from_env(&f, &rcpt);

	/* to be held, an oversize post is kept whole: read up to the
	 * ceiling (the MTA's own size limit is the usual bound) */
	r = spool_read(&f.sp, STDIN_FILENO, LG_MAX_SPOOL_MEM,
	    f.l.oversize == OVERSIZE_HOLD ? LG_MAX_POST_BYTES :
	    f.l.max_post_bytes, err, sizeof(err));
	if (r == SPOOL_ETOOBIG) {
		f.oversize = 1;
		if (f.l.oversize == OVERSIZE_HOLD)
			refusal(&f, "oversize: %s, more than listgate ever "
			    "stores", err);
		else
			refusal(&f, "oversize (max_post_bytes %zu, oversize "
			    "= defer): %s", f.l.max_post_bytes, err);
		goto decide;
	}
	if (r < 0) {
		failure(&f, "%s", err);
		goto decide;
	}
	f.have_spool = 1;
	scan = spool_scan_len(&f.sp, f.pt.to.lim.max_scan);
	if (f.sp.len > f.l.max_post_bytes) {
		/* a verdict by size: held unscored, never passed */
		f.oversize = 1;
		if (read_headers(&f, scan) == 0 && hold_post(&f, NULL,
		    "held", 1) == 0) {
			o = OUT_HELD;
			snprintf(f.why, sizeof(f.why), "oversize: %zu bytes, "
			    "max_post_bytes %zu", f.sp.len, f.l.max_post_bytes);
			/* held for a moderator, who must hear of it (not
			 * for a retry answered from an earlier decision) */
			if (f.held < QUEUE_HELD_APPROVED)
				send_notices(&f);
		}
		goto decide;
	}
	if (read_headers(&f, scan) < 0)
		goto decide;

	if (classify_init(&c, LG_MAX_TOKENS_PER_POST) < 0) {
		failure(&f, "out of memory");
		goto decide;
	}
	cinit = 1;
	if (score_post(&f, &c) < 0)
		goto decide;
	if (f.score < f.l.ham_cutoff) {
		o = do_pass(&f, &delivered);
		/* refused for good by the LMTP server: held with the reason
		 * for a moderator, never bounced (nor deferred for days) */
		if (o == OUT_DEFER && f.refused) {
			if (hold_post(&f, &c, "held", 1) == 0) {
				o = OUT_HELD;
				failure(&f, "%s", f.refusal);
				if (f.held < QUEUE_HELD_APPROVED)
					send_notices(&f);
			} else {
				memcpy(err, f.why, sizeof(err));
				err[sizeof(err) - 1] = '\0';
				failure(&f, "%.500s; and it cannot be held: "
				    "%.400s", f.refusal, err);
			}
		}
	} else if (hold_post(&f, &c, f.score >= f.l.discard_cutoff ?
	    "discarded" : "held", f.score < f.l.discard_cutoff) == 0) {
		o = OUT_HELD;
		/* not for a retry answered from an earlier decision */
		if (f.score < f.l.discard_cutoff &&
		    f.held < QUEUE_HELD_APPROVED)
			send_notices(&f);
	} else
		o = OUT_DEFER;

decide:
	if (o == OUT_DEFER && f.why[0] != '\0')
		o = on_failure(&f, &delivered);
	if (o == OUT_PASS)
		count_pass(&f);
	/* decided: the log line and the MTA's reason are left, still under
	 * the watchdog, which now answers with the outcome.  A log socket
	 * that blocks (syslog stopped or stuck, its queue full) held the
	 * answer until the MTA's own time limit, which Postfix ends with a
	 * bounce */
	wd_code = outcome_exit(o, f.mta);
	wd_decided = 1;
	if (o == OUT_DEFER)
		action = "defer";
	else if (o == OUT_HELD && f.held >= QUEUE_HELD_APPROVED)
		/* a retry answered from the first decision */
		action = f.held == QUEUE_HELD_APPROVED ? "already-released" :
		    f.held == QUEUE_HELD_REJECTED ? "already-rejected" :
		    "already-discarded";
	else if (o == OUT_HELD)
		action = f.scored && f.score >= f.l.discard_cutoff ?
		    "discarded" : "held";
	else
		action = delivered ? "delivered" : "pass";
	log_summary(&f, action);
	if (o == OUT_DEFER && !isatty(STDERR_FILENO))
		/* the MTA's log or bounce: the reason may quote the post */
		fprintf(stderr, "listgate filter: temporary failure: %s\n",
		    sanitize_str(err, sizeof(err), f.why, strlen(f.why),
		    SANITIZE_NO_LIMIT, SANITIZE_TEXT, 0));
	if (cinit)
		classify_free(&c);
	if (f.have_spool)
		spool_free(&f.sp);
	if (f.have_l)
		listcfg_free_list(&f.l);
	if (f.have_g)
		listcfg_free_global(&f.g);
	buf_free(&f.msgid);
	buf_free(&f.from);
	buf_free(&f.subject);
	buf_free(&f.clues);
	buf_free(&rcpt);
	if (f.q != NULL)
		queue_close(f.q);
	alarm(0);
	return outcome_exit(o, f.mta);
}
