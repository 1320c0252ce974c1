/*
 * cmd_train.c - `listgate train`: learn (or unlearn) posts as spam or ham
 *
 * Trusts the configuration; posts are hostile and go through the
 * bounded tokenizer (at most the list's max_scan_bytes of each post are
 * looked at).  The token file is changed only inside transactions, one
 * per batch of posts; between batches the file is closed so that filter
 * processes waiting for the lock get in.  An input (or a directory
 * entry) that cannot be read is named and skipped; running out of
 * memory stops the run and rolls back the unfinished batch (the
 * committed batches stay, and the message says how many posts they
 * hold).  Posts are named FILE, DIR/NAME or FILE:N (post N of an mbox).
 * A missing token file is built under a temporary name in the same
 * directory (.NAME.new-PID.kch: a dot name no list can have, and the
 * extension tells Kyoto Cabinet the type) and linked into place when its first batch
 * has committed, so a failed run never leaves an empty or partial new
 * token file behind (filter then still defers on the missing file).
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

#include "gate/util/clock.h"
#include "gate/cmd/cmd.h"
#include "listcfg/listcfg.h"
#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/app/settings.h"
#include "gate/mail/source.h"
#include "gate/tok.h"
#include "db/tokdb.h"

#define NAME		"train"
/* posts per transaction, and the longest a batch may hold the lock */
#define BATCH_POSTS	10000
#define BATCH_SECONDS	0.25
/* pause between batches, longer than a waiting reader's poll interval
 * (TOKDB_POLL_MAX_MS), so that filters waiting for the lock get in */
#define BATCH_PAUSE_MS	12
/* progress line updates per second at most */
#define PROGRESS_HZ	4.0

/* one training run: the token file, the options, the counters */
struct trainer {
	const char *path;		/* token file */
	int create;			/* create it when missing */
	char tmppath[4200];		/* the new file until its first
					 * commit, else "" */
	unsigned wait_ms;
	struct tokdb *db;		/* open during a batch, else NULL */
	struct queue *q;		/* a database is configured: the
					 * posts go to its journal */
	const char *list;
	struct toklist *tl;
	struct tok_opts to;
	int spam, dir;
	uint32_t day;
	unsigned long nposts, nbatch;
	unsigned long ndone;		/* posts in committed batches */
	long nchanged;			/* tokens new (learn) or removed */
	double batch_start;
	char err[1024];
};

/* end the current batch: commit and let go of the file: 0 or -1 */
static int
trainer_flush(struct trainer *t)
{
	int r = 0;

	if (t->db == NULL)
		return 0;
	if (tokdb_commit(t->db) < 0) {
		snprintf(t->err, sizeof(t->err), "%s", tokdb_errmsg(t->db));
		r = -1;
	}
	tokdb_close(t->db);
	t->db = NULL;
	if (r == 0 && t->tmppath[0] != 0) {
		/* the new file is complete: put it in place, never over a
		 * file another run created meanwhile */
		if (link(t->tmppath, t->path) < 0) {
			snprintf(t->err, sizeof(t->err), "token file %s: %s "
			    "(cannot put the new file in place)", t->path,
			    errno == EEXIST ? "another run created it "
			    "meanwhile; train again" : strerror(errno));
			r = -1;
		} else {
			unlink(t->tmppath);
			t->tmppath[0] = 0;
		}
	}
	if (r == 0)
		t->ndone += t->nbatch;
	t->nbatch = 0;
	return r;
}

/* a missing token file is to be created: build it under a temporary
 * name next to it (see the file comment): 0, or -1 with t->err */
static int
trainer_tmpfile(struct trainer *t)
{
	const char *base;
	int n;

	t->tmppath[0] = 0;
	if (!t->create || access(t->path, F_OK) == 0 || errno != ENOENT)
		return 0;
	base = strrchr(t->path, '/');
	base = base != NULL ? base + 1 : t->path;
	n = snprintf(t->tmppath, sizeof(t->tmppath), "%.*s.%s.new-%ld.kch",
	    (int)(base - t->path), t->path, base, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(t->tmppath)) {
		t->tmppath[0] = 0;
		snprintf(t->err, sizeof(t->err), "token file %s: path too long",
		    t->path);
		return -1;
	}
	unlink(t->tmppath);	/* left by a killed run with this pid */
	return 0;
}

/* remove a new token file that never got into place */
static void
trainer_drop_tmp(struct trainer *t)
{
	char wal[4300];

	if (t->tmppath[0] == 0)
		return;
	unlink(t->tmppath);
	snprintf(wal, sizeof(wal), "%s.wal", t->tmppath);
	unlink(wal);
	t->tmppath[0] = 0;
}

/* between batches: give readers polling for the lock their turn */
static void
trainer_pause(void)
{
	struct timespec ts = { 0, BATCH_PAUSE_MS * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* undo the current batch (after a fatal error) */
static void
trainer_abort(struct trainer *t)
{
	if (t->db != NULL) {
		tokdb_abort(t->db);
		tokdb_close(t->db);
		t->db = NULL;
	}
}

/* start a batch: open the token file and a transaction: 0 or -1 */
static int
trainer_open(struct trainer *t)
{
	int mode = TOKDB_WRITE | (t->create ? TOKDB_CREATE : 0);

	if (tokdb_open(t->tmppath[0] != 0 ? t->tmppath : t->path, mode,
	    t->wait_ms, &t->db, t->err, sizeof(t->err)) != 0)
		return -1;
	if (tokdb_begin(t->db) < 0) {
		snprintf(t->err, sizeof(t->err), "%s", tokdb_errmsg(t->db));
		tokdb_close(t->db);
		t->db = NULL;
		return -1;
	}
	t->batch_start = clock_now_s();
	t->nbatch = 0;
	return 0;
}

/*
 * Train one post (the unit the journal will also record): tokenize at
 * most max_scan bytes and learn or unlearn the tokens.  0, or -1 with
 * t->err (the batch is then rolled back by the caller).
 */
static int
trainer_post(struct trainer *t, const unsigned char *msg, size_t len)
{
	long n;

	if (t->q != NULL) {
		/* the journal is the source of truth; sync applies it */
		if (journal_add(t->q, t->list, t->spam, t->dir, "manual", 0,
		    msg, len, t->err, sizeof(t->err)) < 0)
			return -1;
		t->nposts++;
		return 0;
	}
	if (t->db == NULL && trainer_open(t) < 0)
		return -1;
	if (tok_post(msg, len, &t->to, t->tl) < 0) {
		snprintf(t->err, sizeof(t->err), "out of memory while "
		    "tokenizing");
		return -1;
	}
	if ((n = tokdb_learn(t->db, t->tl, t->spam, t->dir, t->day)) < 0) {
		snprintf(t->err, sizeof(t->err), "%s", tokdb_errmsg(t->db));
		return -1;
	}
	t->nchanged += n;
	t->nposts++;
	t->nbatch++;
	if (t->nbatch >= BATCH_POSTS ||
	    clock_now_s() - t->batch_start >= BATCH_SECONDS) {
		if (trainer_flush(t) < 0)
			return -1;
		trainer_pause();
	}
	return 0;
}

/* the progress line on a terminal */
static void
progress(const struct trainer *t, double start, int done)
{
	double dt = clock_now_s() - start;

	fprintf(stderr, "\r%s %lu posts (%ld tokens %s), %.0f posts/s\033[K",
	    t->dir > 0 ? "trained" : "unlearned", t->nposts, t->nchanged,
	    t->dir > 0 ? "new" : "removed",
	    dt > 0 ? (double)t->nposts / dt : 0.0);
	if (done)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] train --list L (--spam|--ham) "
	    "[--unlearn] PATH...\n"
	    "\n"
	    "Learn posts as spam or ham into the list's token file (created\n"
	    "when missing).  PATH is a message file, an mbox (first line\n"
	    "\"From \"), a maildir (cur/ new/), a directory of message files,\n"
	    "or - for standard input.\n"
	    "\n"
	    "  -l, --list L     the list\n"
	    "  -s, --spam       learn the posts as spam\n"
	    "  -g, --ham        learn the posts as ham (good mail)\n"
	    "  -u, --unlearn    undo an earlier training of the same posts\n"
	    "  -q, --quiet      no progress line and no summary\n"
	    "  -h, --help       this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

int
cmd_train(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "spam", no_argument, NULL, 's' },
		{ "ham", no_argument, NULL, 'g' },
		{ "unlearn", no_argument, NULL, 'u' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct listcfg_list l;
	struct trainer t;
	struct source *src;
	struct source_post p;
	const char *list = NULL;
	char err[1024], path[4096];
	double start, last = 0;
	int ch, spam = -1, unlearn = 0, quiet = 0, tty, i, r;
	unsigned long nerr = 0;
	int fatal = 0, rc;

	while ((ch = getopt_long(argc, argv, "l:sguqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 's':
		case 'g':
			if (spam >= 0 && spam != (ch == 's')) {
				cmd_err(NAME, "--spam and --ham exclude each "
				    "other");
				return EXIT_CMD_USAGE;
			}
			spam = ch == 's';
			break;
		case 'u':
			unlearn = 1;
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
	if (list == NULL || spam < 0 || optind >= argc) {
		cmd_err(NAME, "%s", list == NULL ? "--list is required" :
		    spam < 0 ? "say --spam or --ham" : "no PATH given (- for "
		    "standard input)");
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if ((rc = cmd_load_list(NAME, ctx, list, &g, &l, path,
	    sizeof(path))) != EXIT_CMD_OK)
		return rc;
	if (!unlearn && qc_tokens_dir(NAME, &g) < 0) {
		fatal = 1;
		goto out;
	}

	memset(&t, 0, sizeof(t));
	t.path = path;
	t.create = !unlearn;
	t.wait_ms = qc_writer_wait(&g);
	settings_tok_opts(&l, &t.to);
	t.spam = spam;
	t.dir = unlearn ? -1 : 1;
	t.day = tokdb_today();
	if ((t.tl = toklist_new(t.to.max_tokens)) == NULL) {
		cmd_err(NAME, "out of memory");
		fatal = 1;
		goto out;
	}
	/* with a database, train through its journal (one transaction),
	 * then sync the token file from it */
	if (queue_configured(g.conninfo)) {
		t.list = list;
		if (queue_open(g.conninfo, &t.q, err, sizeof(err)) < 0 ||
		    queue_check_schema(t.q, err, sizeof(err)) < 0 ||
		    journal_begin(t.q, list, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			queue_close(t.q);
			toklist_free(t.tl);
			fatal = 1;
			goto out;
		}
	}
	if (t.q == NULL && trainer_tmpfile(&t) < 0) {
		cmd_err(NAME, "list %s: %s", list, t.err);
		toklist_free(t.tl);
		fatal = 1;
		goto out;
	}
	tty = !quiet && isatty(STDERR_FILENO);
	start = clock_now_s();
	for (i = optind; i < argc && !fatal; i++) {
		if ((r = source_open(argv[i], &src, err, sizeof(err))) < 0) {
			cmd_err(NAME, "list %s: %s", list, err);
			if (r == -2) {
				fatal = 1;	/* out of memory: stop */
				break;
			}
			nerr++;
			continue;
		}
		while ((r = source_next(src, &p, err, sizeof(err))) != 0) {
			if (r == -2) {
				cmd_err(NAME, "list %s: %s", list, err);
				fatal = 1;	/* out of memory: stop */
				break;
			}
			if (r < 0) {
				cmd_err(NAME, "list %s: %s", list, err);
				nerr++;
				continue;
			}
			if (trainer_post(&t, p.data, p.len) < 0) {
				cmd_err(NAME, "list %s: %s: %s", list, p.name,
				    t.err);
				fatal = 1;
				break;
			}
			if (tty && clock_now_s() - last >= 1.0 / PROGRESS_HZ) {
				last = clock_now_s();
				progress(&t, start, 0);
			}
		}
		source_close(src);
	}
	if (t.q != NULL) {
		if (fatal)
			journal_rollback(t.q);
		else if (journal_commit(t.q, err, sizeof(err)) < 0) {
			cmd_err(NAME, "list %s: %s", list, err);
			fatal = 1;
		} else if (qc_sync_list(NAME, t.q, &g, list, 1) < 0) {
			cmd_err(NAME, "list %s: the posts are in the journal; "
			    "run `listgate sync --list %s`", list, list);
			fatal = 1;
		}
		queue_close(t.q);
	}
	if (fatal)
		trainer_abort(&t);
	else if (trainer_flush(&t) < 0) {
		cmd_err(NAME, "list %s: %s", list, t.err);
		fatal = 1;
	}
	trainer_drop_tmp(&t);
	if (tty)
		progress(&t, start, 1);
	if (!quiet && !fatal && t.q != NULL)
		printf("%s %lu posts as %s through the journal in %.2f s\n",
		    unlearn ? "unlearned" : "trained", t.nposts,
		    spam ? "spam" : "ham", clock_now_s() - start);
	else if (!quiet && !fatal)
		printf("%s %lu posts as %s (%ld %s) in %.2f s\n",
		    unlearn ? "unlearned" : "trained", t.nposts,
		    spam ? "spam" : "ham",
		    t.nchanged, unlearn ? "tokens removed" : "new tokens",
		    clock_now_s() - start);
	if (fatal && t.q != NULL)
		cmd_err(NAME, "list %s: stopped; none of the posts were "
		    "journaled", list);
	else if (fatal)
		cmd_err(NAME, "list %s: stopped: %lu post%s %s, the unfinished "
		    "batch was rolled back", list, t.ndone,
		    t.ndone == 1 ? "" : "s",
		    unlearn ? "unlearned" : "learnt");
	else if (nerr)
		cmd_err(NAME, "list %s: %lu input%s could not be read", list,
		    nerr, nerr == 1 ? "" : "s");
	toklist_free(t.tl);
out:
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return fatal || nerr ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
