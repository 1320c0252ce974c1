/*
 * cmd_holder.c - `listgate holder [--socket PATH] [--workers N]`: store
 * the posts filter holds, over a Unix socket, with connections that
 * stay (gate/holder/)
 *
 * Each worker keeps one connection to the database of listgate.conf
 * (through pgbouncer or directly), opened at its first request; a
 * connection that failed once is closed, and the request tried once
 * more on a new one (queue_hold is idempotent on the post's bytes).
 * After the answer, the worker sends the hold notices the post asks
 * for, as filter would.  The list's configuration is read for each
 * request; listgate.conf again whenever it changed (a new database is
 * used from the next post on), but a new holder_socket, log_facility,
 * user or group needs a restart.
 * Exit 0 after SIGTERM or SIGINT, 1 when it cannot start, 2 on usage
 * errors.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/cmd/cmd.h"
#include "gate/holder/holder.h"
#include "gate/moderate/notify.h"
#include "gate/util/clock.h"
#include "gate/util/log.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

#define NAME		"holder"
#define DEF_WORKERS	2

/* one worker's state (each forked worker has its own copy) */
struct holder_ctx {
	struct listcfg_global g;
	const char *dir;		/* the configuration directory */
	struct stat gst;		/* listgate.conf as g was read from it */
	struct queue *q;		/* opened at the first request */
	struct listcfg_list l;		/* the list of the request */
	int have_l;
	unsigned char sha[32];		/* its post's SHA-256 (the notices'
					 * cookies are bound to it) */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] holder [--socket PATH] [--workers N]\n"
	    "\n"
	    "Store the posts filter holds, handed over the Unix socket\n"
	    "holder_socket of listgate.conf, through database connections that\n"
	    "stay open: a held post then costs filter no libpq and no new\n"
	    "connection.  filter holds a post itself whenever the holder does\n"
	    "not answer.  Runs until SIGTERM.\n"
	    "\n"
	    "  -s, --socket PATH  the socket (default: holder_socket)\n"
	    "  -w, --workers N    processes, each with its own connection,\n"
	    "                     each serving one post at a time (default %d)\n"
	    "  -h, --help         this help\n"
	    "\n"
	    "Exit status: 0 after SIGTERM or SIGINT, 1 when it cannot start,\n"
	    "2 usage error.\n", DEF_WORKERS);
}

/* listgate.conf of dir: stat(2) it into *st: 0, or -1 (missing, or
 * not to be looked at) */
static int
stat_global(const char *dir, struct stat *st)
{
	char path[PATH_MAX];

	memset(st, 0, sizeof(*st));
	if (snprintf(path, sizeof(path), "%s/listgate.conf", dir) >=
	    (int)sizeof(path) || stat(path, st) < 0) {
		memset(st, 0, sizeof(*st));
		return -1;
	}
	return 0;
}

static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Read listgate.conf again when it changed since h->g was read: 0, or
 * -1 with err (the request then fails and the filter, which reads the
 * same file, holds the post itself or says what is wrong).  The file is
 * read from the directory as given (not resolved: a symbolic link moved
 * to another directory is followed, as filter follows it).  A file that
 * is gone for a moment (an editor's rename) or that names no database
 * is refused, and the settings in use are kept: a holder never stores
 * in libpq's default database.
 */
static int
reload_global(struct holder_ctx *h, char *err, size_t errsz)
{
	struct listcfg_global ng;
	struct stat st;
	char e[900];

	if (stat_global(h->dir, &st) < 0) {
		snprintf(err, errsz, "%s/listgate.conf: %s", h->dir,
		    strerror(errno));
		return -1;
	}
	if (same_file(&st, &h->gst))
		return 0;
	if (listcfg_load_global(h->dir, &ng, e, sizeof(e)) < 0) {
		snprintf(err, errsz, "listgate.conf changed and does not load: "
		    "%s", e);
		return -1;
	}
	if (!queue_configured(ng.conninfo)) {
		snprintf(err, errsz, "listgate.conf changed and sets no "
		    "database");
		listcfg_free_global(&ng);
		return -1;
	}
	if ((ng.holder_socket == NULL) != (h->g.holder_socket == NULL) ||
	    (ng.holder_socket != NULL &&
	    strcmp(ng.holder_socket, h->g.holder_socket) != 0))
		log_warn("holder: holder_socket changed in %s/listgate.conf: "
		    "restart the holder to move its socket", h->dir);
	log_info("holder: %s/listgate.conf changed: read again", h->dir);
	listcfg_free_global(&h->g);
	h->g = ng;
	h->gst = st;
	/* the database may be another: connect again at first use */
	queue_close(h->q);
	h->q = NULL;
	return 0;
}

/* say so when filter will not trust a holder on path: it trusts root,
 * its own user and the owner of the socket's directory (holder_hold) */
static void
warn_untrusted_dir(char *path)
{
	char *slash = strrchr(path, '/');
	struct stat st;
	int r;

	if (geteuid() == 0 || slash == NULL)
		return;
	*slash = '\0';
	r = stat(slash == path ? "/" : path, &st);
	if (r == 0 && st.st_uid != geteuid())
		log_warn("holder: %s belongs to user %lu, not to this one "
		    "(%lu): only filters that run as user %lu will trust this "
		    "holder; give it a directory of its own", slash == path ?
		    "/" : path, (unsigned long)st.st_uid,
		    (unsigned long)geteuid(), (unsigned long)geteuid());
	*slash = '/';
}

/* store one request (holder_server's hold) */
static int
do_hold(const struct holder_req *rq, struct holder_ans *a, char *err,
    size_t errsz, void *arg)
{
	struct holder_ctx *h = arg;
	struct queue_post qp = rq->post;
	char db[HOLDER_DATABASE_ID_LEN + 1];
	int tries, r = -1;

	if (h->have_l) {
		listcfg_free_list(&h->l);
		h->have_l = 0;
	}
	if (!listcfg_name_ok(rq->post.list)) {
		snprintf(err, errsz, "bad list name");
		return -1;
	}
	if (reload_global(h, err, errsz) < 0)
		return -1;
	/* the filter's listgate.conf names another database: a filter of
	 * another configuration whose holder_socket is ours.  Stored here,
	 * its post would be where none of its moderators look */
	holder_database_id(h->g.conninfo, db);
	if (strcmp(rq->database, db) != 0) {
		snprintf(err, errsz, "not stored: this holder's "
		    "%s/listgate.conf names another database than the "
		    "filter's configuration (give each configuration a "
		    "holder_socket of its own)", h->dir);
		return -1;
	}
	/* the list must exist here too; its notices are sent from it */
	if (listcfg_load_list(&h->g, rq->post.list, &h->l, err, errsz) < 0)
		return -1;
	h->have_l = 1;
	/* its notices queued with it, as filter's own hold does */
	if (rq->notify && notify_ready(&h->l) && !notify_is_ours(&h->g, qp.raw,
	    qp.raw_len)) {
		qp.notify_mods = h->l.moderators;
		qp.notify_max_per_hour = h->l.notify_max_per_hour;
	}
	for (tries = 0; tries < 2 && r < 0; tries++) {
		if (h->q == NULL && queue_open(h->g.conninfo, &h->q, err,
		    errsz) < 0)
			break;
		if ((r = queue_hold_sha(h->q, &qp, &a->id, h->sha, err,
		    errsz)) < 0) {
			log_warn("holder: list %s: %s", rq->post.list, err);
			queue_close(h->q);
			h->q = NULL;
		}
	}
	if (r < 0)
		return -1;
	a->held = r;
	/* filter's rule: a post held now (not a retry answered from a
	 * decision), of a list that sends notices */
	a->notifying = rq->notify && r < QUEUE_HELD_APPROVED &&
	    notify_ready(&h->l);
	return 0;
}

/* after the answer: the hold notices (holder_server's after) */
static void
do_after(const struct holder_req *rq, const struct holder_ans *a,
    void *arg)
{
	struct holder_ctx *h = arg;
	struct notice_post p;
	struct notify_stats st;
	char err[1024];

	if (!a->notifying || h->q == NULL || !h->have_l)
		return;
	memset(&p, 0, sizeof(p));
	p.list = rq->post.list;
	p.id = a->id;
	p.env_sender = rq->post.env_sender;
	p.from = rq->post.from;
	p.subject = rq->post.subject;
	p.score = rq->post.score;
	p.verdict = rq->post.verdict;
	p.clues = rq->post.clues;
	p.note = rq->post.note;
	if (p.verdict != NULL && strcmp(p.verdict, "oversize") == 0) {
		/* not scored (filter's oversize post): its clues say why */
		p.clues = "";
		p.note = rq->post.clues;
	}
	p.raw = rq->post.raw;
	p.raw_len = rq->post.raw_len;
	p.arrived = time(NULL);
	p.raw_sha256 = h->sha;
	if (notify_held(h->q, &h->g, &h->l, &p, clock_now_ms() +
	    NOTIFY_WAIT_S * 1000.0, &st, err, sizeof(err)) < 0)
		log_warn("holder: list %s post %lld: notices: %s (`%s notify "
		    "--pending` sends them)", rq->post.list, (long long)a->id,
		    err, suggest_cmd());
	else if (st.ours)
		log_warn("holder: list %s post %lld: no notices: the post is a "
		    "notice of listgate's, so a moderator's address leads to a "
		    "list (a notice of it would loop)", rq->post.list,
		    (long long)a->id);
	else if (st.lasterr[0] != '\0')
		log_warn("holder: list %s post %lld: %u of %u notices sent: "
		    "%s (`%s notify --pending` sends the rest)", rq->post.list,
		    (long long)a->id, st.sent, st.queued, st.lasterr,
		    suggest_cmd());
}

int
cmd_holder(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct holder_server s;
	struct holder_ctx h;
	struct queue *q;
	const char *path = NULL;
	char err[1024], *spath;
	long workers = DEF_WORKERS;
	long long n;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "s:w:h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		case 'w':
			if (cmd_parse_num(optarg, 1, 64, &n) < 0) {
				cmd_err(NAME, "bad --workers '%.40s' (want 1 to 64)",
				    optarg);
				return EXIT_CMD_USAGE;
			}
			workers = (long)n;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if ((rc = cmd_no_args(NAME, argc, argv, usage)) != EXIT_CMD_OK)
		return rc;
	if (path != NULL && path[0] != '/') {
		cmd_err(NAME, "--socket wants an absolute path");
		return EXIT_CMD_USAGE;
	}
	/* the schema is checked once here: a holder that cannot store a
	 * post says so at the start, not at the first spam */
	memset(&h, 0, sizeof(h));
	/* (looked at before it is read: a change in between is read
	 * again at the first post) */
	h.dir = listcfg_dir(ctx->config_dir);
	stat_global(h.dir, &h.gst);
	if (cmd_connect(NAME, ctx, &h.g, &q, APP_CHECK_SCHEMA) < 0)
		return EXIT_CMD_FAIL;
	queue_close(q);
	if (path == NULL && (path = h.g.holder_socket) == NULL) {
		cmd_err(NAME, "no socket: set holder_socket in %s/listgate.conf "
		    "(or give --socket)", h.g.dir);
		listcfg_free_global(&h.g);
		return EXIT_CMD_FAIL;
	}
	log_setup("listgate", h.g.log_facility, !isatty(2));
	log_stderr(1);
	if ((spath = xstrdup(path)) == NULL) {
		cmd_err(NAME, "out of memory");
		listcfg_free_global(&h.g);
		return EXIT_CMD_FAIL;
	}
	warn_untrusted_dir(spath);
	memset(&s, 0, sizeof(s));
	s.path = spath;
	s.workers = (unsigned)workers;
	s.hold = do_hold;
	s.after = do_after;
	s.arg = &h;
	rc = holder_serve(&s, err, sizeof(err));
	if (rc < 0)
		cmd_err(NAME, "%s", err);
	xfree(spath);
	listcfg_free_global(&h.g);
	return rc < 0 ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
