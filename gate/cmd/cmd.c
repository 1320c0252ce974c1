/*
 * cmd.c - helpers shared by the subcommands: error messages, loading the
 * configuration of the list a command works on, connecting, syncing
 *
 * Trusts the configuration files only as far as listcfg does; list names
 * from the command line are checked before they reach a path.  Errors
 * are printed with cmd_err; nothing here exits.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "db/qstats.h"
#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/app.h"
#include "gate/app/decide.h"
#include "gate/app/sync.h"
#include "gate/cmd/cmd.h"
#include "gate/util/priv.h"
#include "gate/util/log.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

/* leave root for the configured user before anything else is opened */
/* the user cmd_leave_root became, "" when it stayed who it was */
static char became[256];

int
cmd_leave_root(const struct cmd_ctx *ctx, int *mta_r, char *err,
    size_t errsz)
{
	const char *dir = listcfg_dir(ctx->config_dir);
	char *user = NULL, *group = NULL, why[1024];
	int rc = -1;

	*mta_r = -1;
	if (!priv_is_root())
		return 0;
	if (listcfg_load_owner(dir, &user, &group, mta_r, why,
	    sizeof(why)) < 0)
		snprintf(err, errsz, "running as root: %s; listgate leaves "
		    "root only for the user set in listgate.conf (or stays "
		    "root with --allow-root)", why);
	else if (user == NULL)
		snprintf(err, errsz, "running as root, and %s/listgate.conf "
		    "sets no `user': set user (and group) to the unprivileged "
		    "account listgate runs as, or pass --allow-root to stay "
		    "root (tests, one-off administration)", dir);
	else if (priv_become(user, group, why, sizeof(why)) < 0)
		snprintf(err, errsz, "running as root: cannot become user %s "
		    "(user in %s/listgate.conf): %s", user, dir, why);
	else {
		snprintf(became, sizeof(became), "%s", user);
		rc = 0;
	}
	xfree(user);
	xfree(group);
	return rc;
}

/* print "listgate NAME: " and the message to stderr, sanitized (an
 * error may quote a post, a file name or the database); what stdout
 * holds goes out first, so that both in one file keep their order (a
 * failed write stays in stdout's error flag for cmd_stdout_done) */
void
cmd_err(const char *name, const char *fmt, ...)
{
	char raw[4096], msg[4096];
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* started as root, refused a file: say who was refused, or the
	 * administrator wonders how root could be */
	if (became[0] != '\0' && strstr(raw, strerror(EACCES)) != NULL) {
		size_t n = strlen(raw);

		snprintf(raw + n, sizeof(raw) - n, " (listgate left root for "
		    "user %s, the `user' of listgate.conf)", became);
	}
	(void)fflush(stdout);
	errno = e;
	fprintf(stderr, "listgate %s: %s\n", name, sanitize_str(msg,
	    sizeof(msg), raw, strlen(raw), SANITIZE_NO_LIMIT, SANITIZE_TEXT,
	    0));
}

/* say that list is no list name, and what one is */
void
cmd_bad_list(const char *name, const char *list)
{
	cmd_err(name, "bad list name '%.200s' (want [a-z0-9][a-z0-9._-]*, "
	    "at most %d bytes, no \"..\")", list, LG_MAX_LIST_NAME);
}

void
cmd_warn_unknown_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, const char *what)
{
	char conf[4096], tok[4096], pc[4096], err[256];

	if (listcfg_list_path(g, list, conf, sizeof(conf)) < 0 ||
	    listcfg_tokens_path(g, list, tok, sizeof(tok)) < 0 ||
	    listcfg_passcount_path(g, list, pc, sizeof(pc)) < 0 ||
	    access(conf, F_OK) == 0 || access(tok, F_OK) == 0 ||
	    access(pc, F_OK) == 0 ||
	    qstats_list_known(q, list, err, sizeof(err)) != 0)
		return;
	cmd_err(name, "warning: list %s has no %s, no token file or pass "
	    "counter in %s, and no held post or journal event: nothing to "
	    "%s (a misspelt list name?)", list, conf, g->tokens_dir, what);
}

/* print untrusted text sanitized, on one line */
void
cmd_put_clean(FILE *f, const void *s, size_t n, enum sanitize_enc enc)
{
	char out[CMD_PUT_MAX + 1];

	fputs(sanitize_str(out, sizeof(out), s, n, SANITIZE_NO_LIMIT, enc, 0),
	    f);
}

/* flush the standard output: 0, or -1 said (a full disk, a closed pipe),
 * once: main checks again after the command, which may have */
int
cmd_stdout_done(const char *name)
{
	static int said;
	int e;

	errno = 0;		/* (an earlier write's error has none left) */
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (said)
		return -1;
	said = 1;
	e = errno;
	cmd_err(name, "cannot write the standard output%s%s", e != 0 ?
	    ": " : "", e != 0 ? strerror(e) : "");
	return -1;
}

int
cmd_parse_num(const char *s, long long min, long long max, long long *v_r)
{
	long long v = 0;
	const char *p;

	if (*s == '\0')
		return -1;
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		/* (checked before it grows: no overflow, any length) */
		if (*p - '0' > max || v > (max - (*p - '0')) / 10)
			return -1;
		v = 10 * v + (*p - '0');
	}
	if (v < min)
		return -1;
	*v_r = v;
	return 0;
}

/* refuse arguments left after the options */
int
cmd_no_args(const char *name, int argc, char **argv, void (*usage)(FILE *))
{
	if (optind < argc) {
		cmd_err(name, "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	return EXIT_CMD_OK;
}

int
cmd_stdin_once(const char *name, int argc, char **argv, void (*usage)(FILE *))
{
	int i, n = 0;

	for (i = optind; i < argc; i++)
		if (strcmp(argv[i], "-") == 0 && n++ > 0) {
			cmd_err(name, "- (standard input) may be given only "
			    "once");
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	return EXIT_CMD_OK;
}

/* list's settings and token file path, errors reported */
int
cmd_list_config(const char *name, const struct listcfg_global *g,
    const char *list, struct listcfg_list *l, char *path, size_t pathsz)
{
	char err[1024];

	if (listcfg_load_list(g, list, l, err, sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		return -1;
	}
	if (listcfg_tokens_path(g, list, path, pathsz) < 0) {
		cmd_err(name, "list %s: token file path too long", list);
		listcfg_free_list(l);
		return -1;
	}
	return 0;
}

/* check list, load the global and the list's configuration */
int
cmd_load_list(const char *name, const struct cmd_ctx *ctx,
    const char *list, struct listcfg_global *g, struct listcfg_list *l,
    char *path, size_t pathsz)
{
	char err[1024];

	if (!listcfg_name_ok(list)) {
		cmd_bad_list(name, list);
		return EXIT_CMD_USAGE;
	}
	if (listcfg_load_global(listcfg_dir(ctx->config_dir), g, err,
	    sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		return EXIT_CMD_FAIL;
	}
	if (cmd_list_config(name, g, list, l, path, pathsz) < 0) {
		listcfg_free_global(g);
		return EXIT_CMD_FAIL;
	}
	return EXIT_CMD_OK;
}

/* connect with the configured database, errors reported */
int
cmd_connect(const char *name, const struct cmd_ctx *ctx,
    struct listcfg_global *g, struct queue **q_r, int flags)
{
	char err[1024];

	if (app_connect(ctx->config_dir, g, q_r, flags, err,
	    sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		return -1;
	}
	return 0;
}

void
cmd_journal_err(const char *name, const struct listcfg_global *g,
    int reads, const char *fmt, ...)
{
	char err[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, sizeof(err), fmt, ap);
	va_end(ap);
	if (reads && g->sync_conninfo != NULL && strstr(err, "database: "))
		cmd_err(name, "%s (the journal is read from sync_database in "
		    "%s/listgate.conf)", err, g->dir);
	else
		cmd_err(name, "%s", err);
}

/* sync one list, errors reported, the result printed unless quiet */
int
cmd_sync_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, int flags)
{
	struct listcfg_list l;
	struct sync_stats st;
	char err[1024], skip[64];
	int r, quiet = flags & CMD_SYNC_QUIET;

	if (!listcfg_name_ok(list)) {
		cmd_err(name, "bad list name in the journal; skipped");
		return -1;
	}
	if (listcfg_load_list(g, list, &l, err, sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		return -1;
	}
	r = sync_list(q, g, &l, &st, err, sizeof(err));
	cmd_sync_report(name, g, list, &st);
	if (r < 0)
		cmd_journal_err(name, g, flags & CMD_SYNC_READS, "%s", err);
	else if (!quiet && g->site_list != NULL &&
	    strcmp(g->site_list, list) == 0)
		printf("list %s (the site store): %lu event%s newly fed, %lu "
		    "applied%s, position %lld\n", list, st.nfed,
		    st.nfed == 1 ? "" : "s", st.nevents,
		    cmd_sync_skipped(&st, skip, sizeof(skip)),
		    (long long)st.pos);
	else if (!quiet)
		printf("list %s: %lu journal event%s applied%s, position "
		    "%lld\n", list, st.nevents, st.nevents == 1 ? "" : "s",
		    cmd_sync_skipped(&st, skip, sizeof(skip)),
		    (long long)st.pos);
	listcfg_free_list(&l);
	return r;
}

/* remember a list for the sync at the end */
void
cmd_touch(struct cmd_touched *t, const char *list)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->names[i], list) == 0)
			return;
	if (t->n < (int)(sizeof(t->names) / sizeof(t->names[0])))
		snprintf(t->names[t->n++], LG_MAX_LIST_NAME + 1, "%s", list);
	else
		t->overflow = 1;
}

/*
 * 1 when list's token file (or, while it is missing, the tokens
 * directory) is there but not ours to write: a moderator in the token
 * files' group reads them and decides, their owner's next sync applies
 * the decisions
 */
int
cmd_tokens_not_writable(const struct listcfg_global *g, const char *list)
{
	char path[4096];

	if (listcfg_tokens_path(g, list, path, sizeof(path)) < 0)
		return 0;
	/* root (--allow-root) writes no token file in a directory another
	 * user owns (tokdb_dir_foreign): that user's sync does */
	if (tokdb_dir_foreign(g->tokens_dir, NULL, NULL, 0))
		return 1;
	if (access(path, W_OK) == 0)
		return 0;
	if (errno == ENOENT)
		return access(g->tokens_dir, W_OK) < 0 && errno == EACCES;
	return errno == EACCES || errno == EROFS;
}

/* sync the touched lists (quiet: no note about lists left to their
 * token file's owner): number of failures */
int
cmd_sync_touched(const char *name, struct queue *q,
    const struct listcfg_global *g, const struct cmd_touched *t, int quiet)
{
	int i, nfail = 0;

	for (i = 0; i < t->n; i++) {
		if (cmd_tokens_not_writable(g, t->names[i])) {
			if (!quiet)
				fprintf(stderr, "listgate %s: list %s: the "
				    "token file is not yours to write; its "
				    "owner's next `%s sync` learns "
				    "from the decisions\n", name,
				    t->names[i], suggest_cmd());
			continue;
		}
		if (cmd_sync_list(name, q, g, t->names[i], 1) < 0)
			nfail++;
	}
	if (t->overflow) {
		cmd_err(name, "more lists than one run syncs: run `%s "
		    "sync`", suggest_cmd());
		nfail++;
	}
	return nfail;
}

/* decide one post and report: 0 done, 1 already so, -1 not done */
int
cmd_decide_one(const char *name, struct queue *q,
    const struct listcfg_global *g, const struct decide_req *rq,
    struct cmd_touched *t, int quiet, int meanwhile_ok)
{
	struct queue_decided res;
	char err[1024];
	const char *list = res.list, *old = res.old;
	const char *status = rq->status;
	int64_t id = rq->id;
	int flags = rq->flags;
	int r;

	r = decide_post(q, g, rq, &res, err, sizeof(err));
	switch (r) {
	case QUEUE_DECIDED:
		cmd_touch(t, list);
		if (!quiet) {
			if (flags & QUEUE_MARK_ONLY)
				printf("post %lld %s without releasing it "
				    "(list %s; was %s)\n", (long long)id,
				    status, list, old);
			else if (strcmp(old, "held") == 0)
				printf("post %lld %s (list %s)\n",
				    (long long)id, status, list);
			else
				printf("post %lld %s (list %s; was %s)\n",
				    (long long)id, status, list, old);
		}
		return 0;
	case QUEUE_NOENT:
		cmd_err(name, "no post %lld", (long long)id);
		return -1;
	case QUEUE_ALREADY:
		if (strcmp(old, status) == 0 || meanwhile_ok) {
			if (!quiet)
				printf("post %lld (list %s) is already %s: "
				    "nothing changed\n", (long long)id, list,
				    old);
			return 1;
		}
		cmd_err(name, "post %lld (list %s) is already %s: nothing "
		    "changed (--force changes the decision)", (long long)id,
		    list, old);
		return -1;
	case QUEUE_RELEASE_FAILED:
		if (res.unsure)
			/* approved again, it could reach the list twice */
			cmd_err(name, "post %lld (list %s): %s; check the list "
			    "archive, then run `%s approve --force %lld` to "
			    "release it again or `%s approve --mark-approved "
			    "%lld` to record it without releasing",
			    (long long)id, list, err, suggest_cmd(),
			    (long long)id, suggest_cmd(), (long long)id);
		else if (strstr(err, "stays 'releasing'") != NULL)
			cmd_err(name, "post %lld (list %s): %s",
			    (long long)id, list, err);
		else if (res.refused && strcmp(old, "held") == 0)
			/* trying again would be refused again */
			cmd_err(name, "post %lld (list %s): %s: the list "
			    "refused it for good; the post stays held, its "
			    "note saying why (%s show); reject or discard it, "
			    "or approve it once what refused it is fixed",
			    (long long)id, list, err, suggest_cmd());
		else if (res.refused)
			cmd_err(name, "post %lld (list %s): %s: the list "
			    "refused it for good; the post stays %s",
			    (long long)id, list, err, old);
		else
			cmd_err(name, "post %lld (list %s): %s; the post "
			    "stays %s", (long long)id, list, err, old);
		return -1;
	case QUEUE_INTERRUPTED:
		if (meanwhile_ok) {
			/* held when expire listed it: an approval took it
			 * since and runs its release command now (one that
			 * stays so an hour, expire warns of) */
			if (!quiet)
				printf("post %lld (list %s) is being released "
				    "by an approval: left to it\n",
				    (long long)id, list);
			return 1;
		}
		if (strcmp(name, "approve") == 0)
			cmd_err(name, "post %lld (list %s) was being released "
			    "when a previous approve was interrupted; check "
			    "the list archive, then run `%s approve --force "
			    "%lld` to release it again or `%s approve "
			    "--mark-approved %lld` to record it without "
			    "releasing", (long long)id, list, suggest_cmd(),
			    (long long)id, suggest_cmd(), (long long)id);
		else
			cmd_err(name, "post %lld (list %s) was being released "
			    "when a previous approve was interrupted; check "
			    "the list archive, then run `%s approve "
			    "--mark-approved %lld` if it reached the list, or "
			    "`%s %s --force %lld`", (long long)id, list,
			    suggest_cmd(), (long long)id, suggest_cmd(), name,
			    (long long)id);
		return -1;
	case QUEUE_NOT_INTERRUPTED:
		cmd_err(name, "post %lld (list %s) is %s, not 'releasing': "
		    "--mark-approved only records an interrupted release "
		    "(nothing changed)", (long long)id, list, old);
		return -1;
	case QUEUE_UNRECORDED:
		cmd_err(name, "post %lld (list %s) was released, but the "
		    "approval could not be recorded: %s; it stays "
		    "'releasing': once the database is back, run `%s "
		    "approve --mark-approved %lld`", (long long)id, list, err,
		    suggest_cmd(), (long long)id);
		return -1;
	default:
		cmd_err(name, "post %lld: %s", (long long)id, err);
		return -1;
	}
}

const char *
cmd_sync_skipped(const struct sync_stats *st, char *buf, size_t bufsz)
{
	if (st->nquarantined == 0)
		return "";
	snprintf(buf, bufsz, ", %lu quarantined and skipped",
	    st->nquarantined);
	return buf;
}

void
cmd_sync_report(const char *name, const struct listcfg_global *g,
    const char *list, const struct sync_stats *st)
{
	char line[1024], pw[400];
	unsigned i;

	if (st->nreported == 0 && !st->pairs_differ)
		return;
	/* the operator sees it now, the log keeps it */
	log_setup("listgate", g->log_facility, 1);
	log_stderr(1);
	if (sync_pairs_warning(st, list, pw, sizeof(pw)) != NULL)
		log_warn("%s: %s", name, pw);
	for (i = 0; i <= st->nreported; i++)
		if (sync_skipped_warning(st, i, list, line,
		    sizeof(line)) != NULL)
			log_warn("%s: %s", name, line);
	log_setup("listgate", g->log_facility, 0);
}

const int cmd_stop_sigs[CMD_NSTOP_SIGS] = { SIGINT, SIGTERM, SIGHUP };

void
cmd_catch_stops(void (*handler)(int))
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < CMD_NSTOP_SIGS; i++)
		if (sigaction(cmd_stop_sigs[i], &sa, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			sigaction(cmd_stop_sigs[i], &old, NULL);
}
