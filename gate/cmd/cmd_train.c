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
 * hold, and how many read after them were rolled back).  Posts are
 * named FILE, DIR/NAME or FILE:N (post N of an mbox).
 * A post whose bytes (SHA-256) were already taken in this run (a file
 * named twice, a post saved twice in an mbox) is learnt once: the
 * others are counted and skipped.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/sync.h"
#include "gate/app/trainer.h"
#include "gate/cmd/cmd.h"
#include "gate/app/posttok.h"
#include "gate/mail/source.h"
#include "gate/tok.h"
#include "gate/util/clock.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "listcfg/listcfg.h"

#define NAME		"train"
/* progress line updates per second at most */
#define PROGRESS_HZ	4.0

/* the progress line is on the terminal */
static volatile sig_atomic_t progress_shown;

/* the signal that asked the run to stop (SIGINT, SIGTERM, SIGHUP), or 0 */
static volatile sig_atomic_t stop_sig;

/* what the run does when a stop comes: it decides what a stop does, and
 * what the message says */
enum stage {
	STAGE_READ,	/* reading and learning posts: stop before the next */
	STAGE_COMMIT,	/* the last batch is committed: that goes on */
	STAGE_SYNC,	/* the journal's posts go into the token file */
	STAGE_END	/* only the summary is left */
};
static volatile sig_atomic_t stage;

/* a stop: taken between posts, and then it rolls the unfinished batch
 * back.  Once the posts are being committed there is nothing left to
 * stop: the run finishes, and the message says so.  A second stop ends
 * the run at once */
static void
on_stop(int sig)
{
	static const char read_msg[] = "listgate train: stopping at the next "
	    "post (once more: at once)\n";
	static const char commit_msg[] = "listgate train: finishing the "
	    "commit of the posts read (once more: at once)\n";
	static const char sync_msg[] = "listgate train: the posts are "
	    "journaled; finishing the sync of the token file (once more: at "
	    "once; `";
	static const char sync_end[] = " sync` finishes it)\n";
	const char *msg;
	size_t len;
	ssize_t n;

	stop_sig = sig;
	switch (stage) {
	case STAGE_READ:
		msg = read_msg;
		len = sizeof(read_msg) - 1;
		break;
	case STAGE_COMMIT:
		msg = commit_msg;
		len = sizeof(commit_msg) - 1;
		break;
	case STAGE_SYNC:
		msg = sync_msg;
		len = sizeof(sync_msg) - 1;
		break;
	default:
		return;	/* the run ends anyway, as it would have */
	}
	/* (it may be waiting on an input: a terminal, a FIFO) */
	if (progress_shown) {
		n = write(STDERR_FILENO, "\r\033[K", 4);
		progress_shown = 0;
	}
	n = write(STDERR_FILENO, msg, len);
	if (msg == sync_msg) {
		/* the command with this run's configuration (strlen is
		 * async-signal-safe) */
		n = write(STDERR_FILENO, suggest_cmd(), strlen(suggest_cmd()));
		n = write(STDERR_FILENO, sync_end, sizeof(sync_end) - 1);
	}
	(void)n;
}

/* go on to stage s: 0, or the signal of a stop that came before (then
 * the stage is left as it was: the handler is spent, a second stop ends
 * the run at once).  The stop signals wait meanwhile, so that a stop is
 * either seen here or told of in the new stage's words.
 * LISTGATE_TEST_TRAIN_STOP=commit or sync (for tests only) sends the
 * run a SIGTERM as it starts that stage */
static int
stage_enter(enum stage s)
{
	static const char *const names[] = { "read", "commit", "sync", "end" };
	sigset_t block, old;
	const char *e;
	size_t i;
	int sig;

	sigemptyset(&block);
	for (i = 0; i < CMD_NSTOP_SIGS; i++)
		sigaddset(&block, cmd_stop_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	if ((sig = stop_sig) == 0)
		stage = s;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sig == 0 && (e = getenv("LISTGATE_TEST_TRAIN_STOP")) != NULL &&
	    strcmp(e, names[s]) == 0)
		raise(SIGTERM);
	return sig;
}

/* remember the post [p, p+len) in seen, a set of the first 16 bytes of
 * the SHA-256 of each post taken in this run: 1 taken before, 0 not, -1
 * out of memory */
#define SEEN_KEY	16
static int
seen_add(struct toklist *seen, const unsigned char *p, size_t len)
{
	struct sha256_ctx c;
	unsigned char d[SHA256_DIGEST_SIZE];
	int r;

	sha256_init(&c);
	sha256_update(&c, len, p);
	sha256_digest(&c, sizeof(d), d);
	if ((r = toklist_add(seen, d, SEEN_KEY)) < 0)
		return -1;
	return r == 0;
}

/* the tokens a journaled run added (removed when unlearning) */
static long
ntok_delta(int unlearn, long ntok0, long ntok1)
{
	if (unlearn)
		return ntok0 > ntok1 ? ntok0 - ntok1 : 0;
	return ntok1 > ntok0 ? ntok1 - ntok0 : 0;
}

/* the summary's noun for n tokens added or removed */
static const char *
tokens_noun(int unlearn, long n)
{
	if (unlearn)
		return n == 1 ? "token removed" : "tokens removed";
	return n == 1 ? "new token" : "new tokens";
}

/* the progress line on a terminal.  journal: the posts go into the
 * journal, and the token file learns them in the sync after it (or
 * along, unseen): no count of tokens until then (it said "0 tokens new"
 * for the whole run) */
static void
progress(const struct trainer *t, int dir, int journal, double start,
    int done)
{
	struct trainer_stats st;
	double dt = clock_now_s() - start;

	trainer_stats(t, &st);
	if (journal)
		fprintf(stderr, "\r%s %lu post%s through the journal, "
		    "%.0f posts/s\033[K", dir > 0 ? "trained" : "unlearned",
		    st.nposts, st.nposts == 1 ? "" : "s",
		    dt > 0 ? (double)st.nposts / dt : 0.0);
	else
		fprintf(stderr, "\r%s %lu post%s (%ld token%s %s), %.0f "
		    "posts/s\033[K", dir > 0 ? "trained" : "unlearned",
		    st.nposts, st.nposts == 1 ? "" : "s", st.nchanged,
		    st.nchanged == 1 ? "" : "s", dir > 0 ? "new" : "removed",
		    dt > 0 ? (double)st.nposts / dt : 0.0);
	progress_shown = !done;
	if (done)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

/* before a message: the progress line is cleared, so that the message
 * starts a line of its own (the progress is drawn again at its next
 * update) */
static void
progress_break(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		progress_shown = 0;
	}
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] train --list L (--spam|--ham) "
	    "[--unlearn]\n"
	    "                [--quiet] PATH...\n"
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

/* the tokens of the token file at path: 0 when there is none, -1 when
 * it cannot be read or another writer has it now (the summary then goes
 * without the count: it waits for no one) */
static long
file_tokens(const char *path)
{
	struct tokdb *db;
	char err[512];
	long n;

	if (access(path, F_OK) < 0)
		return errno == ENOENT ? 0 : -1;
	if (tokdb_open(path, TOKDB_READ, 0, &db, err, sizeof(err)) != 0)
		return -1;
	n = tokdb_ntokens(db);
	tokdb_close(db);
	return n;
}

/* sync the list after journaling, reporting what was skipped; the
 * token file that learnt the posts alongside is at the batch's last
 * event, which the commit read (t) */
static int
train_sync(struct queue *q, const struct trainer *t,
    const struct listcfg_global *g, const struct listcfg_list *l,
    struct sync_stats *ss, char *err, size_t errsz)
{
	int64_t last, mark;
	int r;

	if (trainer_committed_at(t, &last, &mark))
		r = sync_list_at(q, g, l, last, mark, ss, err, errsz);
	else
		r = sync_list(q, g, l, ss, err, errsz);
	cmd_sync_report(NAME, g, l->name, ss);
	return r;
}

/* the posts an unlearning left alone, never learnt as the class (spam
 * 1): what says so, the journal's (journal 1) or the token file's */
static void
not_learnt_err(const char *list, int spam, int journal,
    const struct trainer_stats *st)
{
	const char *cls = spam ? "spam" : "ham";
	int one = st->nnotlearnt == 1;
	char why[160];

	if (journal)
		snprintf(why, sizeof(why), "the journal has no learning of "
		    "%s bytes as %s left to undo", !one ? "their" :
		    st->first_notlearnt[0] != 0 ? "these" : "its", cls);
	else
		snprintf(why, sizeof(why), "some of %s tokens have no %s "
		    "count in the token file", one ? "its" : "their", cls);
	if (one && st->first_notlearnt[0] != 0)
		cmd_err(NAME, "list %s: %s: never learnt as %s (%s): skipped, "
		    "nothing unlearned for it", list, st->first_notlearnt, cls,
		    why);
	else
		cmd_err(NAME, "list %s: %lu post%s %s never learnt as %s "
		    "(%s%s%s): skipped, nothing unlearned for %s", list,
		    st->nnotlearnt,
		    one ? "" : "s", one ? "was" : "were", cls, why,
		    st->first_notlearnt[0] != 0 ? "; the first: " : "",
		    st->first_notlearnt, one ? "it" : "them");
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
	struct trainer *t = NULL;
	struct trainer_stats st;
	struct sync_stats ss;
	struct queue *q = NULL;
	struct source *src;
	struct source_post p;
	struct posttok pt;
	struct toklist *seen = NULL;
	const char *list = NULL;
	char err[1024], path[4096], firstdup[1024] = "";
	double start, last = 0;
	int ch, spam = -1, unlearn = 0, quiet = 0, tty, i, r, dir;
	int journal = 0;
	unsigned long nerr = 0, ndup = 0, ntaken = 0, notlearnt = 0;
	unsigned long nsynced = 0, others = 0;
	int synced = 0;
	long ntok0 = -1, ntok1 = -1;
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
	if (cmd_stdin_once(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if ((rc = cmd_load_list(NAME, ctx, list, &g, &l, path,
	    sizeof(path))) != EXIT_CMD_OK)
		return rc;
	dir = unlearn ? -1 : 1;
	if ((seen = toklist_new((size_t)-1)) == NULL) {
		cmd_err(NAME, "list %s: out of memory", list);
		fatal = 1;
		goto out;
	}
	if (posttok_init(&pt, &g, &l, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		fatal = 1;
		goto out;
	}
	if (queue_configured(g.conninfo)) {
		/* through the journal (one transaction), then sync the token
		 * file from it; the tokens directory first, so that the
		 * journal back end can learn the posts as it goes (if it
		 * cannot be made, sync says so after the journal's commit) */
		if (!unlearn)
			(void)sync_tokens_dir(&g, err, sizeof(err));
		journal = 1;
		/* the summary's new (or removed) tokens are the token file's
		 * change from now to after the sync (the file is free now:
		 * the trainer takes its lock once open) */
		if (!quiet)
			ntok0 = file_tokens(path);
		if (trainer_open_journal_conn(&t, g.conninfo, list, spam, dir,
		    sync_is_site(&g, &l) ? NULL : path, sync_writer_wait(&g),
		    &pt, err, sizeof(err)) < 0) {
			/* as when the thread's connection fails later */
			cmd_err(NAME, "list %s: %s", list, err);
			cmd_err(NAME, "list %s: stopped; none of the posts "
			    "were journaled", list);
			fatal = 1;
			goto out;
		}
	} else if ((!unlearn && sync_tokens_dir(&g, err, sizeof(err)) < 0) ||
	    trainer_open_direct(&t, path, !unlearn, sync_writer_wait(&g), &pt,
	    spam, dir, tokdb_today(), err, sizeof(err)) < 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		fatal = 1;
		goto out;
	}
	tty = !quiet && isatty(STDERR_FILENO);
	start = clock_now_s();
	/* stopped, the run ends as after a failure: the unfinished batch
	 * is rolled back and the message says what stays learnt (killed,
	 * it said nothing) */
	stop_sig = 0;
	stage = STAGE_READ;
	cmd_catch_stops(on_stop);
	for (i = optind; i < argc && !fatal; i++) {
		if (stop_sig != 0)
			break;
		if ((r = source_open(argv[i], &src, err, sizeof(err))) < 0) {
			progress_break();
			cmd_err(NAME, "list %s: %s", list, err);
			if (r == -2) {
				fatal = 1;	/* out of memory: stop */
				break;
			}
			nerr++;
			continue;
		}
		while (stop_sig == 0 &&
		    (r = source_next(src, &p, err, sizeof(err))) != 0) {
			if (stop_sig != 0)
				break;	/* not this post either */
			if (r == -2) {
				progress_break();
				cmd_err(NAME, "list %s: %s", list, err);
				fatal = 1;	/* out of memory: stop */
				break;
			}
			if (r < 0) {
				progress_break();
				cmd_err(NAME, "list %s: %s", list, err);
				nerr++;
				continue;
			}
			if (p.len == 0) {
				/* no post (a file left empty by a delivery
				 * that failed, an empty standard input): the
				 * filter refuses one, and learnt it would
				 * weigh in the list's counts as a post */
				progress_break();
				cmd_err(NAME, "list %s: %s: an empty post (0 "
				    "bytes): skipped", list, p.name);
				nerr++;
				continue;
			}
			if (journal && p.len > LG_MAX_POST_BYTES) {
				/* more than the journal keeps: this post
				 * only, not the run */
				progress_break();
				cmd_err(NAME, "list %s: %s: post of %zu bytes is "
				    "larger than the journal keeps (%u): "
				    "skipped", list, p.name, p.len,
				    LG_MAX_POST_BYTES);
				nerr++;
				continue;
			}
			/* the same post again (a path given twice): it
			 * would weigh twice in the list's counts */
			if ((r = seen_add(seen, p.data, p.len)) < 0) {
				progress_break();
				cmd_err(NAME, "list %s: out of memory", list);
				fatal = 1;
				break;
			}
			if (r == 1) {
				/* (a file's name, which whoever made the
				 * archive chose, for the summary on standard
				 * output: a terminal's escapes made harmless,
				 * as in every message) */
				if (ndup++ == 0)
					(void)sanitize_str(firstdup,
					    sizeof(firstdup), p.name,
					    strlen(p.name), SANITIZE_NO_LIMIT,
					    SANITIZE_TEXT, 0);
				continue;
			}
			ntaken++;
			if (trainer_post(t, p.name, p.data, p.len, err,
			    sizeof(err)) < 0) {
				progress_break();
				cmd_err(NAME, "list %s: %s", list, err);
				fatal = 1;
				break;
			}
			/* the file shrank while the post was copied: zeros
			 * in it, which must not be learnt (the unfinished
			 * batch is rolled back) */
			if (source_cut(src)) {
				progress_break();
				cmd_err(NAME, "list %s: %s: the file shrank while "
				    "the post was read: stopped before learning "
				    "a post cut short", list, p.name);
				fatal = 1;
				break;
			}
			if (tty && clock_now_s() - last >= 1.0 / PROGRESS_HZ) {
				last = clock_now_s();
				progress(t, dir, journal, start, 0);
			}
		}
		source_close(src);
	}
	progress_break();	/* finishing may have a message */
	if (!fatal && stage_enter(STAGE_COMMIT) != 0) {
		cmd_err(NAME, "list %s: signal %d (%s)", list, (int)stop_sig,
		    strsignal(stop_sig));
		fatal = 1;
	}
	/* from here a stop changes nothing: the run finishes */
	if (fatal)
		trainer_abort(t);
	else if (trainer_finish(t, err, sizeof(err)) < 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		fatal = 1;
	} else if (journal && (q = trainer_queue(t)) != NULL) {
		(void)stage_enter(STAGE_SYNC);
		if (train_sync(q, t, &g, &l, &ss, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			if (cmd_tokens_not_writable(&g, list))
				cmd_err(NAME, "list %s: the posts are in the "
				    "journal, but the token file is not yours "
				    "to write: its owner's `%s sync "
				    "--list %s` learns them (run train as that "
				    "user)", list, suggest_cmd(), list);
			else
				cmd_err(NAME, "list %s: the posts are in the "
				    "journal; run `%s sync --list %s`",
				    list, suggest_cmd(), list);
			fatal = 1;
		} else {
			synced = 1;
			nsynced = ss.nevents;
			if (!quiet && ntok0 >= 0)
				ntok1 = file_tokens(path);
		}
	}
	(void)stage_enter(STAGE_END);
	trainer_stats(t, &st);
	if (tty)
		progress(t, dir, journal, start, 1);
	if (trainer_warning(t) != NULL)
		cmd_err(NAME, "list %s: warning: %s", list, trainer_warning(t));
	/* unlearnt, they would have taken from the counts of the posts
	 * that were learnt (the wrong class given, a post never trained):
	 * left alone, and the run fails as for a post that cannot be read */
	if (st.nnotlearnt > 0)
		not_learnt_err(list, spam, journal, &st);
	notlearnt = st.nnotlearnt;
	if (ntaken >= notlearnt)
		ntaken -= notlearnt;	/* neither learnt nor rolled back */
	/* the journal events of others the sync applied with this run's
	 * (the token file behind the journal: another host's training, a
	 * decision, a file never synced): the file's change is not this
	 * run's then, and was told as its new tokens (1 post, 5340 new
	 * tokens on a host whose file was made by that sync) */
	if (synced)
		others = trainer_learnt_along(t) ? nsynced :
		    nsynced > st.nposts ? nsynced - st.nposts : 0;
	if (!quiet && !fatal && journal && others > 0)
		printf("%s %lu post%s as %s through the journal in %.2f s "
		    "(its sync also applied %lu other journal event%s: the "
		    "token file's change is not this run's alone)\n",
		    unlearn ? "unlearned" : "trained", st.nposts,
		    st.nposts == 1 ? "" : "s", spam ? "spam" : "ham",
		    clock_now_s() - start, others, others == 1 ? "" : "s");
	else if (!quiet && !fatal && journal && ntok1 >= 0)
		printf("%s %lu post%s as %s through the journal (%ld %s) in "
		    "%.2f s\n", unlearn ? "unlearned" : "trained", st.nposts,
		    st.nposts == 1 ? "" : "s", spam ? "spam" : "ham",
		    ntok_delta(unlearn, ntok0, ntok1),
		    tokens_noun(unlearn, ntok_delta(unlearn, ntok0, ntok1)),
		    clock_now_s() - start);
	else if (!quiet && !fatal && journal)
		printf("%s %lu post%s as %s through the journal in %.2f s\n",
		    unlearn ? "unlearned" : "trained", st.nposts,
		    st.nposts == 1 ? "" : "s", spam ? "spam" : "ham",
		    clock_now_s() - start);
	else if (!quiet && !fatal)
		printf("%s %lu post%s as %s (%ld %s) in %.2f s\n",
		    unlearn ? "unlearned" : "trained", st.nposts,
		    st.nposts == 1 ? "" : "s", spam ? "spam" : "ham",
		    st.nchanged, tokens_noun(unlearn, st.nchanged),
		    clock_now_s() - start);
	if (!quiet && !fatal && ndup > 0)
		printf("skipped %lu duplicate post%s (the same bytes as a post "
		    "before it in this run, %s once): %s%s\n", ndup,
		    ndup == 1 ? "" : "s", unlearn ? "unlearned" : "learnt",
		    firstdup, ndup > 1 ? ", ..." : "");
	if (fatal && journal && st.unknown)
		cmd_err(NAME, "list %s: stopped; the database did not answer "
		    "the commit, so the posts may or may not be journaled: "
		    "`%s sync --list %s` applies them if they are; "
		    "count the list's journal before training them again",
		    list, suggest_cmd(), list);
	else if (fatal && journal && st.ndone == 0)
		cmd_err(NAME, "list %s: stopped; none of the posts were "
		    "journaled", list);
	else if (fatal && !journal && ntaken > st.ndone)
		/* how many were not: past 16 posts the rest of the run is
		 * one batch (a private copy), and "the unfinished batch" was
		 * read as a few posts, not as 58984 of them */
		cmd_err(NAME, "list %s: stopped: %lu post%s %s; the %lu %s "
		    "read%s %s rolled back", list, st.ndone,
		    st.ndone == 1 ? "" : "s", unlearn ? "unlearned" : "learnt",
		    ntaken - st.ndone, ntaken - st.ndone == 1 ? "post" :
		    "posts", st.ndone > 0 ? " after them" : "",
		    ntaken - st.ndone == 1 ? "was" : "were");
	else if (fatal && !journal)
		cmd_err(NAME, "list %s: stopped: %lu post%s %s", list,
		    st.ndone, st.ndone == 1 ? "" : "s",
		    unlearn ? "unlearned" : "learnt");
	else if (nerr)
		cmd_err(NAME, "list %s: %lu input%s could not be read", list,
		    nerr, nerr == 1 ? "" : "s");
out:
	toklist_free(seen);
	trainer_free(t);	/* and its connection */
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return fatal || nerr || notlearnt > 0 ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}
