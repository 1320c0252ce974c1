/*
 * cmd_decide.c - the moderator's decisions from a shell: `listgate
 * approve`, `reject`, `discard` and `expire`
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
 * Trusts the configuration; the post is passed through untouched.
 * Exit 0, 1 on any failure, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
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

/* lists touched in one run, to sync afterwards */
struct touched {
	char names[64][LG_MAX_LIST_NAME + 1];
	int n, overflow;
};

/* remember a list for the sync at the end */
static void
touch(struct touched *t, const char *list)
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
static int
not_writable(const struct listcfg_global *g, const char *list)
{
	char path[4096];

	if (listcfg_tokens_path(g, list, path, sizeof(path)) < 0)
		return 0;
	if (access(path, W_OK) == 0)
		return 0;
	if (errno == ENOENT)
		return access(g->tokens_dir, W_OK) < 0 && errno == EACCES;
	return errno == EACCES || errno == EROFS;
}

/* sync the touched lists (quiet: no note about lists left to their
 * token file's owner): number of failures */
static int
sync_touched(const char *name, struct queue *q,
    const struct listcfg_global *g, const struct touched *t, int quiet)
{
	int i, nfail = 0;

	for (i = 0; i < t->n; i++) {
		if (not_writable(g, t->names[i])) {
			if (!quiet)
				fprintf(stderr, "listgate %s: list %s: the "
				    "token file is not yours to write; its "
				    "owner's next `listgate sync` learns "
				    "from the decisions\n", name,
				    t->names[i]);
			continue;
		}
		if (cmd_sync_list(name, q, g, t->names[i], 1) < 0)
			nfail++;
	}
	if (t->overflow) {
		cmd_err(name, "more lists than one run syncs: run `listgate "
		    "sync`");
		nfail++;
	}
	return nfail;
}

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
	    "and learn them as spam." },
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
	    "[--force]%s ID...\n"
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

/* parse a post id: 0, or -1 */
static int
parse_id(const char *s, int64_t *id_r)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == 0 || *end != 0 || errno != 0 || v <= 0)
		return -1;
	*id_r = v;
	return 0;
}

/* decide one post and report: 0 done (or already so), -1 not done */
static int
decide_one(const char *name, struct queue *q, const struct listcfg_global *g,
    int64_t id, const char *status, const char *by, const char *note,
    int flags, struct touched *t, int quiet)
{
	struct decide_req rq;
	struct queue_decided res;
	char err[1024];
	const char *list = res.list, *old = res.old;
	int r;

	rq.id = id;
	rq.status = status;
	rq.by = by;
	rq.note = note;
	rq.flags = flags;
	r = decide_post(q, g, &rq, &res, err, sizeof(err));
	switch (r) {
	case QUEUE_DECIDED:
		touch(t, list);
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
		if (strcmp(old, status) == 0) {
			if (!quiet)
				printf("post %lld is already %s: nothing "
				    "changed\n", (long long)id, old);
			return 0;
		}
		cmd_err(name, "post %lld is already %s: nothing changed "
		    "(--force changes the decision)", (long long)id, old);
		return -1;
	case QUEUE_RELEASE_FAILED:
		if (strstr(err, "stays 'releasing'") != NULL)
			cmd_err(name, "post %lld: %s", (long long)id, err);
		else
			cmd_err(name, "post %lld: %s; the post stays %s",
			    (long long)id, err, old);
		return -1;
	case QUEUE_INTERRUPTED:
		if (strcmp(name, "approve") == 0)
			cmd_err(name, "post %lld was being released when a "
			    "previous approve was interrupted; check the list "
			    "archive, then use approve --force to release it "
			    "again or --mark-approved to record it without "
			    "releasing", (long long)id);
		else
			cmd_err(name, "post %lld was being released when a "
			    "previous approve was interrupted; check the list "
			    "archive, then use approve --mark-approved if it "
			    "reached the list, or %s --force", (long long)id,
			    name);
		return -1;
	case QUEUE_NOT_INTERRUPTED:
		cmd_err(name, "post %lld is %s, not 'releasing': "
		    "--mark-approved only records an interrupted release "
		    "(nothing changed)", (long long)id, old);
		return -1;
	case QUEUE_UNRECORDED:
		cmd_err(name, "post %lld was released, but the approval could "
		    "not be recorded: %s; it stays 'releasing': once the "
		    "database is back, run approve --mark-approved %lld",
		    (long long)id, err, (long long)id);
		return -1;
	default:
		cmd_err(name, "post %lld: %s", (long long)id, err);
		return -1;
	}
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
	struct touched *t;
	const char *note = NULL, *by = NULL;
	char who[256];
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
	for (i = optind; i < argc; i++) {
		parse_id(argv[i], &id);
		if (decide_one(d->name, q, &g, id, d->status, who, note, flags,
		    t, quiet) < 0)
			nfail++;
	}
	nfail += sync_touched(d->name, q, &g, t, quiet);
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

/* --- expire ---------------------------------------------------------------- */

static void
expire_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] expire [--list L] [--older-than DAYS]"
	    " [--by NAME]\n"
	    "\n"
	    "Mark held posts older than DAYS as expired (no training).  Without\n"
	    "--older-than, each list's hold_expiry_days (0: never).\n"
	    "\n"
	    "  -l, --list L          only this list\n"
	    "  -o, --older-than DAYS  age in days (0 expires every held post)\n"
	    "  -b, --by NAME         who expires (default $USER)\n"
	    "  -n, --dry-run         only say what would expire\n"
	    "  -q, --quiet           print only errors\n"
	    "  -h, --help            this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* what the expiry scan carries */
struct expire_ctx {
	const struct listcfg_global *g;
	long days;		/* -1: each list's own */
	time_t now;
	int64_t *ids;
	size_t n, cap;
	int nfail;
	char lastlist[LG_MAX_LIST_NAME + 1];
	long lastdays;
};

/* queue_row_fn: collect the held posts past their expiry */
static int
expire_row(const struct queue_row *r, void *vctx)
{
	struct expire_ctx *c = vctx;
	struct listcfg_list l;
	char err[1024];
	long days = c->days;
	int64_t *p;

	if (days < 0) {
		if (strcmp(c->lastlist, r->list) != 0) {
			if (listcfg_load_list(c->g, r->list, &l, err,
			    sizeof(err)) < 0) {
				cmd_err("expire", "%s", err);
				c->nfail++;
				return 0;
			}
			snprintf(c->lastlist, sizeof(c->lastlist), "%s",
			    r->list);
			c->lastdays = l.hold_expiry_days;
			listcfg_free_list(&l);
		}
		days = c->lastdays;
		if (days == 0)
			return 0;
	}
	if (r->arrived > c->now - (time_t)days * 86400)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;

		if ((p = xrealloc(c->ids, ncap * sizeof(*p))) == NULL) {
			cmd_err("expire", "out of memory");
			c->nfail++;
			return -1;
		}
		c->ids = p;
		c->cap = ncap;
	}
	c->ids[c->n++] = r->id;
	return 0;
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
	struct expire_ctx c;
	struct touched *t;
	const char *list = NULL, *by = NULL;
	char err[1024], who[256], *end;
	size_t i;
	int ch, dry = 0, quiet = 0;

	memset(&c, 0, sizeof(c));
	c.days = -1;
	while ((ch = getopt_long(argc, argv, "l:o:b:nqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'o':
			errno = 0;
			c.days = strtol(optarg, &end, 10);
			if (*optarg == 0 || *end != 0 || errno || c.days < 0 ||
			    c.days > 100000) {
				cmd_err("expire", "bad --older-than '%s' (days)",
				    optarg);
				return EXIT_CMD_USAGE;
			}
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
			expire_usage(stdout);
			return EXIT_CMD_OK;
		default:
			expire_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind < argc) {
		cmd_err("expire", "unexpected argument '%s'", argv[optind]);
		expire_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_err("expire", "bad list name '%s'", list);
		return EXIT_CMD_USAGE;
	}
	if ((t = xcalloc(1, sizeof(*t))) == NULL) {
		cmd_err("expire", "out of memory");
		return EXIT_CMD_FAIL;
	}
	if (cmd_connect("expire", ctx, &g, &q, APP_CHECK_SCHEMA) < 0) {
		xfree(t);
		return EXIT_CMD_FAIL;
	}
	app_who(by, who, sizeof(who));
	c.g = &g;
	c.now = time(NULL);
	if (queue_list(q, "held", list, expire_row, &c, err,
	    sizeof(err)) < 0) {
		cmd_err("expire", "%s", err);
		c.nfail++;
	}
	for (i = 0; i < c.n; i++) {
		if (dry) {
			printf("post %lld would expire\n", (long long)c.ids[i]);
			continue;
		}
		if (decide_one("expire", q, &g, c.ids[i], "expired", who, NULL,
		    0, t, quiet) < 0)
			c.nfail++;
	}
	if (!quiet && !dry)
		printf("%zu post%s expired\n", c.n, c.n == 1 ? "" : "s");
	xfree(c.ids);
	queue_close(q);
	listcfg_free_global(&g);
	xfree(t);
	return c.nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
