/*
 * trainer.c - the two training back ends: the PostgreSQL journal, and a
 * token file learnt directly
 *
 * See trainer.h.  The direct back end changes a token file only inside
 * transactions, one per batch of posts; between batches the file is
 * closed so that filter processes waiting for its lock get in (an
 * in-memory store stays open: closing would drop it).  Many posts (and
 * a new file) go through tokdb's bulk mode instead: a private copy
 * without transactions, published when the run ends, while filters go
 * on reading the old file.  Past the first post, a pool of worker
 * threads (tokpool.h) tokenizes and compresses the posts ahead; the back
 * ends take them in order and learn and journal them in the program's
 * thread, the only one that touches the token file, the database and
 * the evidence.  Posts are hostile and reach only the bounded tokenizer.
 * Failures return -1 with a message; nothing here prints or exits.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/journal.h"
#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/posttok.h"
#include "gate/app/tokpool.h"
#include "gate/app/trainer.h"
#include "gate/tok.h"
#include "gate/toklist.h"
#include "gate/util/clock.h"
#include "gate/util/xalloc.h"

/* posts per transaction, and the longest a batch may hold the lock */
#define BATCH_POSTS	10000
#define BATCH_SECONDS	0.25
/* posts whose evidence asks anyone, gathered with the token file free,
 * then learnt in one go: at most this many, and this many bytes of
 * tokens */
#define DEFER_POSTS	64
#define DEFER_BYTES	(8u * 1024u * 1024u)
/* pause between batches, longer than a waiting reader's poll interval
 * (TOKDB_POLL_MAX_MS), so that filters waiting for the lock get in */
#define BATCH_PAUSE_MS	12
/*
 * Many posts learnt go into a private copy of the token file without
 * Kyoto Cabinet transactions (tokdb's bulk mode: the changes gather in
 * memory and are written once per token), published at the end: after
 * BULK_MIN_POSTS posts, or one post per BULK_BYTES_PER_POST bytes of the
 * file when that is more (copying and syncing a large file costs about
 * as much as learning that many posts in transactions).  A new file is
 * built that way from the start.
 */
#define BULK_MIN_POSTS		16
#define BULK_BYTES_PER_POST	65536

/* post: learn one post; pp its work done ahead (tokpool.h), or NULL */
struct trainer_ops {
	int (*post)(struct trainer *, const unsigned char *, size_t,
	    struct tokpool_post *, char *, size_t);
	int (*finish)(struct trainer *, char *, size_t);
	void (*abort)(struct trainer *);
};

struct trainer {
	const struct trainer_ops *ops;
	int spam, dir;
	struct trainer_stats st;
	int finished;
	/* journal */
	struct queue *q;
	char list[256];
	/* ... opened by a thread of its own (trainer_open_journal_conn)
	 * while the first posts are tokenized: running until joined */
	pthread_t opener;
	int opening;
	int own_q;			/* q is the trainer's to close */
	int follow_pending;		/* follow_open once it is open */
	const char *conninfo;
	int open_rc;			/* the opener's result: 0, or -1 */
	char open_err[1024];
	int64_t open_last, open_mark;
	/* the batch's last event and its mark, read in its commit (the
	 * follower's), once committed: trainer_committed_at */
	int64_t last, last_mark;
	int have_last;
	int learnt_along;		/* the token file learnt the posts
					 * as they were journaled */
	/* direct */
	char path[4200];		/* token file */
	char tmppath[4200];		/* the new file until its first
					 * commit, else "" */
	int create, memory;
	unsigned wait_ms;
	uint32_t day;
	struct tokdb *db;		/* open during a batch, else NULL */
	int intx;			/* a batch is open */
	int bulk;			/* ... in bulk mode (one for the run) */
	int want_bulk;			/* the next batch opens in bulk mode */
	unsigned long bulk_after;	/* posts after which to switch to it */
	struct toklist *tl;
	struct posttok *pt;
	unsigned long nbatch;
	double batch_start;
	char warn[1200];		/* the last warning, or "" */
	/* posts tokenized and compressed ahead (NULL until the second
	 * post, and when there are no workers) */
	struct tokpool *pool;
	int nopool;			/* none wanted, or it failed */
	unsigned long ntaken;		/* trainer_post calls */
	/* direct, with evidence that asks anyone (posttok_asks) into a
	 * file others use: posts' tokens gathered with the file free,
	 * learnt DEFER_POSTS at a time (defer_flush) */
	int defer;
	unsigned char *dbuf;		/* each post: its token count (4
					 * bytes), then a length byte and
					 * the bytes of each token */
	size_t dlen, dcap;
	unsigned long ndefer;		/* posts in dbuf */
	const char *name;		/* the post being learnt, or NULL */
};

/* the follower waits at most this long for the token file (it holds
 * the list's journal lock meanwhile; when the file is busy, sync applies
 * the posts afterwards) */
#define FOLLOW_WAIT_MS	1000
/* and holds it (and the journal lock) for tokenizing at most this long:
 * past it, the rest is left to sync (other writers wait for the file at
 * least 10 s, decisions for the journal lock) */
#define FOLLOW_MAX_SECONDS	2.0
/* the largest old token file the follower copies before the journal's
 * commit (follow_early) */
#define FOLLOW_EARLY_MAX	(8 * 1024 * 1024)

static int direct_tmpfile(struct trainer *, char *, size_t);

/* unlearning: the post being learnt was never learnt as the class, and
 * is left alone (counted in t->st, with its name) */
static void
not_learnt(struct trainer *t)
{
	if (t->st.nnotlearnt++ == 0)
		snprintf(t->st.first_notlearnt, sizeof(t->st.first_notlearnt),
		    "%s", t->name != NULL ? t->name : "");
}

/* --- journal ----------------------------------------------------------- */

/*
 * The follower: the journal back end learning its posts into the list's
 * token file as it journals them, so that the sync after it has nothing
 * left to do (it would fetch every post back, decompress and tokenize
 * it again: two thirds of training through the journal).  It follows
 * only when the file is exactly at the list's newest event (read under
 * the journal lock, which every writer of the list's events holds):
 * then the batch's events are the only ones between the file's position
 * and the batch's last event.  It learns into a private copy (tokdb's
 * bulk mode; a missing file, when the list has no events yet, into a new
 * file under a temporary name) that is published with that position only
 * after the journal has committed, learning as the file was built
 * (posttok_follow_file), as sync would.  Whatever fails, it stops following
 * and nothing of it is published: the posts are in the journal, and
 * sync applies them from there; a crash between the commit and the
 * publication leaves the file at its old position, as before.
 */

/* stop following: the private copy (or new file) goes away */
static void
follow_drop(struct trainer *t)
{
	char wal[4300];

	if (t->db != NULL) {
		tokdb_close(t->db);	/* bulk: nothing is published */
		t->db = NULL;
	}
	if (t->tmppath[0] != 0) {
		unlink(t->tmppath);
		snprintf(wal, sizeof(wal), "%s.wal", t->tmppath);
		unlink(wal);
		t->tmppath[0] = 0;
	}
}

/* begin following the token file at t->path, whose list's newest event
 * is last, with its mark (nothing done when the file is not there, or
 * at another position or event: sync says what is wrong with it).
 * fixed: the pool is tokenizing with t->pt as it is, so the file must
 * be built that way too */
static void
follow_open(struct trainer *t, int64_t last, int64_t mark, int fixed)
{
	char err[1024];
	int64_t pos, fmark;

	unsigned wait_ms = t->wait_ms < FOLLOW_WAIT_MS ? t->wait_ms :
	    FOLLOW_WAIT_MS;

	if (access(t->path, F_OK) == 0) {
		if (tokdb_open(t->path, TOKDB_WRITE | TOKDB_BULK, wait_ms,
		    &t->db, err, sizeof(err)) != 0) {
			t->db = NULL;
			return;
		}
	} else if (errno != ENOENT || last != 0) {
		return;		/* sync builds it from the journal */
	} else {
		t->create = 1;
		if (direct_tmpfile(t, err, sizeof(err)) < 0 ||
		    t->tmppath[0] == 0)
			return;
		if (tokdb_open(t->tmppath, TOKDB_WRITE | TOKDB_CREATE |
		    TOKDB_BULK, wait_ms, &t->db, err, sizeof(err)) != 0) {
			t->db = NULL;
			follow_drop(t);
			return;
		}
	}
	t->batch_start = clock_now_s();
	if (tokdb_get_pos_mark(t->db, &pos, &fmark) < 0 || pos != last ||
	    (fmark != 0 && fmark != mark) || tokdb_begin(t->db) < 0 ||
	    (fixed ? posttok_file_agrees(t->pt, t->db) != 1 :
	    posttok_follow_file(t->pt, t->db) < 0) ||
	    (t->tl = toklist_new(t->pt->to.max_tokens)) == NULL)
		follow_drop(t);
}

/* stop following after a failure (why): a warning, since sync applies
 * the posts */
static void
follow_failed(struct trainer *t, const char *why)
{
	follow_drop(t);
	snprintf(t->warn, sizeof(t->warn), "the token file did not learn the "
	    "posts with the journal (sync applies them): %s", why);
}

/* whether to write the private copy before the journal's commit, while
 * the list's journal lock is held (decisions on the list wait for it):
 * only a new file, or an old one small enough that copying it costs a
 * few milliseconds (copying grows with the file, not with the batch:
 * 10 posts over a 109 MB file held the lock 35 ms instead of 6) */
static int
follow_early(const struct trainer *t)
{
	struct stat st;

	return t->tmppath[0] != 0 || (stat(t->path, &st) == 0 &&
	    st.st_size <= FOLLOW_EARLY_MAX);
}

/* write what was learnt into the private copy, before its position is
 * known */
static void
follow_write(struct trainer *t)
{
	char err[1024];

	if (tokdb_bulk_write(t->db, err, sizeof(err)) < 0)
		follow_failed(t, err);
}

/* set down what was learnt, with last (and its mark) as its position,
 * while the journal commits up to there: the private copy is written out
 * and synced (both sides' fsyncs at once), not yet in place.  A failure
 * is a warning: sync applies the posts */
static void
follow_ready(struct trainer *t, int64_t last, int64_t mark)
{
	char err[1024];

	if (tokdb_set_pos_mark(t->db, last, mark) < 0 ||
	    tokdb_commit(t->db) < 0)
		snprintf(err, sizeof(err), "%s", tokdb_errmsg(t->db));
	else if (tokdb_publish_ready(t->db, err, sizeof(err)) == 0)
		return;
	follow_failed(t, err);
}

/* the journal has committed: put what follow_ready set down in place
 * (a failure is a warning: sync applies the posts) */
static void
follow_publish(struct trainer *t)
{
	char err[1024], why[1024];
	int r;

	r = tokdb_publish(t->db, err, sizeof(err));
	t->db = NULL;
	if (r < 0) {
		follow_failed(t, err);
		return;
	}
	if (t->tmppath[0] != 0) {
		/* a new file: in place, never over one that a sync made
		 * meanwhile (that one follows the journal by itself) */
		if (link(t->tmppath, t->path) < 0 && errno != EEXIST) {
			snprintf(err, sizeof(err), "cannot put the new file "
			    "in place: %s", strerror(errno));
			follow_failed(t, err);
			return;
		}
		follow_drop(t);
	}
	t->learnt_along = 1;
	if (tokdb_compact(t->path, t->wait_ms, 0, why, sizeof(why)) < 0)
		snprintf(t->warn, sizeof(t->warn), "the token file could not "
		    "be compacted (the posts are learnt): %s", why);
}

/* the tokens of a post to learn, from msg cut to toklen bytes when set
 * (tokenizer and evidence both: sync reads no more): the workers' (pp)
 * with the evidence added, or its own tokenizing into t->tl.  NULL when
 * out of memory */
static struct toklist *
post_tokens(struct trainer *t, const unsigned char *msg, size_t len,
    size_t toklen, struct tokpool_post *pp)
{
	if (toklen > 0 && len > toklen)
		len = toklen;
	if (pp != NULL && pp->tl != NULL)
		return posttok_evidence(t->pt, msg, len, NULL, pp->tl, NULL,
		    0) < 0 ? NULL : pp->tl;
	return posttok_post(t->pt, msg, len, NULL, t->tl, NULL, 0) < 0 ?
	    NULL : t->tl;
}

/* before the pool starts (the workers share t->pt): tokenize as the
 * token file to follow was built, its recorded word pairs, as the
 * follower would once open (posttok_follow_file); what it finds is
 * checked again then (posttok_file_agrees).  A file busy or unreadable
 * now: the list's setting */
static void
follow_peek(struct trainer *t)
{
	struct tokdb *db;
	char err[512];

	if (t->path[0] == 0 || access(t->path, F_OK) < 0 ||
	    tokdb_open(t->path, TOKDB_READ, 0, &db, err, sizeof(err)) != 0)
		return;
	(void)posttok_follow_file(t->pt, db);
	tokdb_close(db);
}

/*
 * The opener (trainer_open_journal_conn): connecting costs a process
 * about 8 ms before its first post (loading libpq and its libraries, the
 * server starting a backend, the round trips that check the schema and
 * begin the batch), which the pool's workers spend tokenizing the first
 * posts instead.  The thread touches nothing but its own connection and
 * its results in t, read only after it is joined.
 */
static void *
opener_main(void *arg)
{
	struct trainer *t = arg;
	struct queue *q = NULL;

	if (queue_open(t->conninfo, &q, t->open_err,
	    sizeof(t->open_err)) < 0 ||
	    journal_check_begin_at(q, t->list, &t->open_last, &t->open_mark,
	    &t->day, t->open_err, sizeof(t->open_err)) < 0) {
		queue_close(q);
		t->open_rc = -1;
		return NULL;
	}
	t->q = q;
	return NULL;
}

/* the opener's end, waited for: 0, or -1 with its err.  The follower
 * opens here, learning as the pool tokenizes (fixed) */
static int
opened(struct trainer *t, char *err, size_t errsz)
{
	if (t->opening) {
		pthread_join(t->opener, NULL);
		t->opening = 0;
		if (t->pool != NULL)
			tokpool_set_depth(t->pool, 0);
	}
	if (t->open_rc < 0) {
		snprintf(err, errsz, "%s", t->open_err);
		return -1;
	}
	if (t->follow_pending) {
		t->follow_pending = 0;
		if (t->path[0] != 0)
			follow_open(t, t->open_last, t->open_mark,
			    t->pool != NULL);
	}
	return 0;
}

static int
journal_post(struct trainer *t, const unsigned char *msg, size_t len,
    struct tokpool_post *pp, char *err, size_t errsz)
{
	struct toklist *tl;
	long net;

	if (opened(t, err, errsz) < 0)
		return -1;
	/* an unlearning of a post the journal holds no learning of as the
	 * class (the wrong class given, a post never trained or unlearnt
	 * already) would take, on every host's sync and in every rebuild,
	 * from the counts of the posts that were learnt: left out of the
	 * journal (the list's journal lock is held, so no other writer
	 * changes the answer before the commit) */
	if (t->dir < 0) {
		if (journal_learnt(t->q, t->list, t->spam, msg, len, &net, err,
		    errsz) < 0)
			return -1;
		if (net <= 0) {
			not_learnt(t);
			return 0;
		}
	}
	if ((pp != NULL && pp->z != NULL ? journal_add_z(t->q, t->list,
	    t->spam, t->dir, "manual", 0, len, pp->z, pp->zlen, err, errsz) :
	    journal_add(t->q, t->list, t->spam, t->dir, "manual", 0, msg, len,
	    err, errsz)) < 0)
		return -1;
	t->st.nposts++;
	/* as sync would learn the event (a class switched to unlearning
	 * is left to it); sync tokenizes the first max_scan + 1 bytes */
	if (t->db != NULL && (t->dir < 0 ||
	    clock_now_s() - t->batch_start > FOLLOW_MAX_SECONDS ||
	    (tl = post_tokens(t, msg, len, t->pt->to.lim.max_scan + 1,
	    pp)) == NULL ||
	    tokdb_learn(t->db, tl, t->spam, t->dir, t->day > 0 ? t->day :
	    tokdb_today()) < 0))
		follow_drop(t);
	else if (t->db != NULL)
		t->nbatch++;
	return 0;
}

static int
journal_finish(struct trainer *t, char *err, size_t errsz)
{
	int64_t last, mark;
	int r;

	if (opened(t, err, errsz) < 0)
		return -1;
	if (t->db == NULL) {
		if ((r = journal_commit(t->q, err, errsz)) < 0) {
			t->st.unknown = r == JOURNAL_EUNKNOWN;
			return -1;
		}
	} else {
		/* the server stores the batch's last rows while the
		 * private copy takes what was learnt: the server lagged
		 * 5 to 17 ms behind the last row on the bench's training,
		 * and the copy's writing took 7 to 15 */
		journal_end_send(t->q);
		if (t->nbatch > 0 && follow_early(t))
			follow_write(t);
		if (journal_commit_send(t->q, t->list, &last, &mark, err,
		    errsz) < 0) {
			t->warn[0] = 0;	/* nothing for sync to apply */
			return -1;
		}
		if (t->nbatch > 0 && t->db != NULL)
			follow_ready(t, last, mark);
		else
			follow_drop(t);	/* nothing learnt: no copy */
		if ((r = journal_commit_wait(t->q, err, errsz)) < 0) {
			t->st.unknown = r == JOURNAL_EUNKNOWN;
			t->warn[0] = 0;	/* the caller says what to do */
			return -1;	/* (abort drops the copy) */
		}
		t->last = last;
		t->last_mark = mark;
		t->have_last = 1;
		if (t->db != NULL)
			follow_publish(t);
	}
	t->st.ndone = t->st.nposts;
	return 0;
}

static void
journal_abort(struct trainer *t)
{
	char err[1024];

	/* the follower is not begun only to be dropped (it may wait a
	 * second for the file, and copy it) */
	t->follow_pending = 0;
	if (opened(t, err, sizeof(err)) < 0)
		return;
	follow_drop(t);
	journal_rollback(t->q);
}

static const struct trainer_ops journal_ops = {
	journal_post, journal_finish, journal_abort
};

/* a journal trainer with nothing open yet, or NULL with err */
static struct trainer *
journal_new(const char *list, int spam, int dir, const char *path,
    unsigned wait_ms, struct posttok *pt, char *err, size_t errsz)
{
	struct trainer *t;

	if ((t = xcalloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	t->ops = &journal_ops;
	snprintf(t->list, sizeof(t->list), "%s", list);
	t->spam = spam;
	t->dir = dir;
	t->wait_ms = wait_ms;
	t->pt = pt;
	/* t->path: the file to follow, or "" */
	if (path != NULL && dir > 0 && (size_t)snprintf(t->path,
	    sizeof(t->path), "%s", path) >= sizeof(t->path))
		t->path[0] = 0;
	return t;
}

int
trainer_open_journal(struct trainer **t_r, struct queue *q, const char *list,
    int spam, int dir, const char *path, unsigned wait_ms,
    struct posttok *pt, char *err, size_t errsz)
{
	struct trainer *t;

	if ((*t_r = t = journal_new(list, spam, dir, path, wait_ms, pt, err,
	    errsz)) == NULL)
		return -1;
	t->q = q;
	if (journal_begin_at(q, list, &t->open_last, &t->open_mark, &t->day,
	    err, errsz) < 0) {
		xfree(t);
		*t_r = NULL;
		return -1;
	}
	if (t->path[0] != 0)
		follow_open(t, t->open_last, t->open_mark, 0);
	return 0;
}

int
trainer_open_journal_conn(struct trainer **t_r, const char *conninfo,
    const char *list, int spam, int dir, const char *path,
    unsigned wait_ms, struct posttok *pt, char *err, size_t errsz)
{
	struct trainer *t;
	sigset_t all, old;
	int r;

	if ((*t_r = t = journal_new(list, spam, dir, path, wait_ms, pt, err,
	    errsz)) == NULL)
		return -1;
	t->own_q = 1;
	t->conninfo = conninfo;
	t->follow_pending = 1;
	/* without workers, nothing would go on meanwhile */
	if (tokpool_workers() > 0) {
		/* the opener takes no signal: the program's handlers stay
		 * in the program's thread */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = pthread_create(&t->opener, NULL, opener_main, t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (r == 0) {
			t->opening = 1;
			follow_peek(t);
			return 0;
		}
	}
	opener_main(t);
	if (opened(t, err, errsz) < 0) {
		trainer_free(t);
		*t_r = NULL;
		return -1;
	}
	return 0;
}

struct queue *
trainer_queue(struct trainer *t)
{
	char err[1024];

	return opened(t, err, sizeof(err)) < 0 ? NULL : t->q;
}

/* --- direct ------------------------------------------------------------ */

/* start a batch: open the token file (unless it stays open) and a
 * transaction: 0 or -1 */
static int
direct_begin(struct trainer *t, char *err, size_t errsz)
{
	int mode = TOKDB_WRITE | (t->create ? TOKDB_CREATE : 0) |
	    (t->want_bulk ? TOKDB_BULK : 0);
	struct stat st;

	if (!t->want_bulk && !t->memory && t->bulk_after == 0) {
		t->bulk_after = BULK_MIN_POSTS;
		if (stat(t->path, &st) == 0 &&
		    (unsigned long)(st.st_size / BULK_BYTES_PER_POST) >
		    t->bulk_after)
			t->bulk_after = (unsigned long)(st.st_size /
			    BULK_BYTES_PER_POST);
	}
	if (t->db == NULL && tokdb_open(t->tmppath[0] != 0 ? t->tmppath :
	    t->path, mode, t->wait_ms, &t->db, err, errsz) != 0) {
		t->db = NULL;
		return -1;
	}
	t->bulk = t->want_bulk;
	if (tokdb_begin(t->db) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(t->db));
		if (!t->memory) {
			tokdb_close(t->db);
			t->db = NULL;
		}
		return -1;
	}
	t->intx = 1;
	t->batch_start = clock_now_s();
	t->nbatch = 0;
	return 0;
}

/* end the current batch: commit and let go of the file: 0 or -1 */
static int
direct_flush(struct trainer *t, char *err, size_t errsz)
{
	char why[1024];
	int r = 0;

	if (!t->intx)
		return 0;
	t->intx = 0;
	if (tokdb_commit(t->db) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(t->db));
		r = -1;
	}
	if (t->bulk) {
		/* the private copy goes in place (or, failing, away) */
		if (r == 0 && tokdb_publish(t->db, err, errsz) < 0)
			r = -1;
		else if (r < 0)
			tokdb_close(t->db);
		t->db = NULL;
		t->bulk = 0;
	} else if (!t->memory) {
		tokdb_close(t->db);
		t->db = NULL;
	}
	if (r == 0 && t->tmppath[0] != 0) {
		/* the new file is complete: put it in place, never over a
		 * file another run created meanwhile */
		if (link(t->tmppath, t->path) < 0) {
			snprintf(err, errsz, "token file %s: %s (cannot put the "
			    "new file in place)", t->path, errno == EEXIST ?
			    "another run created it meanwhile; train again" :
			    strerror(errno));
			r = -1;
		} else {
			unlink(t->tmppath);
			t->tmppath[0] = 0;
		}
	}
	if (r == 0)
		t->st.ndone += t->nbatch;
	t->nbatch = 0;
	/* a file that has outgrown its hash table is rewritten between
	 * batches, while nothing of ours holds it.  The posts are durable
	 * by then: a failure here is a warning, not a failed training (a
	 * repeat would learn them twice), and the next batch or run tries
	 * again */
	if (r == 0 && !t->memory && tokdb_compact(t->path, t->wait_ms, 0, why,
	    sizeof(why)) < 0)
		snprintf(t->warn, sizeof(t->warn), "the token file could not "
		    "be compacted (the posts are learnt): %s", why);
	return r;
}

/* between batches: give readers polling for the lock their turn */
static void
direct_pause(void)
{
	clock_sleep_ms(BATCH_PAUSE_MS);
}

/*
 * Unlearning: was the post with tokens tl learnt as t's class?  Learning
 * adds one to the class's count of each of the post's tokens (distinct
 * in tl) and to the class's post count, and unlearning the same tokens
 * takes exactly that away; so a post of which a token has no count in
 * the class (or a class without posts) was never learnt as it, and
 * unlearning it would take from the counts of the posts that were (the
 * wrong class given, a post trained never or unlearnt already).  The
 * evidence's tokens (member:, dnsbl:) are others' answers, which may
 * have changed since the post was learnt: they do not count.  1 learnt,
 * 0 not (counted in t->st, with the post's name), -1 with err.
 */
static int
unlearn_known(struct trainer *t, const struct toklist *tl, char *err,
    size_t errsz)
{
	struct tokcount c;
	uint32_t ns, nh;
	const char *tok;
	size_t i, n, len;
	int r;

	if (tokdb_msgcounts(t->db, &ns, &nh) < 0)
		goto fail;
	r = (t->spam ? ns : nh) > 0;
	n = toklist_count(tl);
	for (i = 0; r && i < n; i++) {
		tok = toklist_get(tl, i, &len);
		if (len == 0 || (len > 7 && memcmp(tok, "member:", 7) == 0) ||
		    (len > 6 && memcmp(tok, "dnsbl:", 6) == 0))
			continue;
		if (tokdb_get(t->db, tok, len, &c) < 0)
			goto fail;
		if ((t->spam ? c.spam : c.ham) == 0)
			r = 0;
	}
	if (r)
		return 1;
	not_learnt(t);
	return 0;
fail:
	snprintf(err, errsz, "%s", tokdb_errmsg(t->db));
	return -1;
}

/* learn the posts gathered in t->dbuf, in transactions of at most
 * BATCH_SECONDS, the file let go of after each: 0, or -1 with err */
static int
defer_flush(struct trainer *t, char *err, size_t errsz)
{
	size_t i = 0, k, ntok, len;
	uint32_t c;
	long n;
	int known = 1;

	while (t->ndefer > 0) {
		if (!t->intx && direct_begin(t, err, errsz) < 0)
			return -1;
		memcpy(&c, t->dbuf + i, sizeof(c));
		i += sizeof(c);
		ntok = c;
		toklist_reset(t->tl);
		for (k = 0; k < ntok; k++) {
			len = t->dbuf[i];
			if (toklist_add_over(t->tl, t->dbuf + i + 1, len) < 0) {
				snprintf(err, errsz, "out of memory while "
				    "tokenizing");
				return -1;
			}
			i += 1 + len;
		}
		t->ndefer--;
		/* (a post's name is not kept with its tokens) */
		t->name = NULL;
		if (t->dir < 0 && (known = unlearn_known(t, t->tl, err,
		    errsz)) < 0)
			return -1;
		if (t->dir < 0 && known == 0)
			t->st.nposts--;	/* left alone (counted when taken) */
		else if ((n = tokdb_learn(t->db, t->tl, t->spam, t->dir,
		    t->day)) < 0) {
			snprintf(err, errsz, "%s", tokdb_errmsg(t->db));
			return -1;
		} else {
			t->st.nchanged += n;
			t->nbatch++;
		}
		if (t->ndefer == 0 || t->nbatch >= BATCH_POSTS ||
		    clock_now_s() - t->batch_start >= BATCH_SECONDS) {
			if (direct_flush(t, err, errsz) < 0)
				return -1;
			if (t->ndefer > 0)
				direct_pause();
		}
	}
	t->dlen = 0;
	return 0;
}

/* the direct back end with evidence that asks anyone: the post's tokens
 * (its evidence asked about with the token file free) kept for
 * defer_flush, which learns them once DEFER_POSTS are gathered: 0, or
 * -1 with err */
static int
defer_post(struct trainer *t, const unsigned char *msg, size_t len,
    struct tokpool_post *pp, char *err, size_t errsz)
{
	struct toklist *tl;
	size_t i, n, need, tlen;
	unsigned char *b;
	const char *tok;
	uint32_t c;

	if ((tl = post_tokens(t, msg, len, 0, pp)) == NULL) {
		snprintf(err, errsz, "out of memory while tokenizing");
		return -1;
	}
	n = toklist_count(tl);
	need = sizeof(c);
	for (i = 0; i < n; i++) {
		(void)toklist_get(tl, i, &tlen);
		need += 1 + tlen;
	}
	if (t->dcap - t->dlen < need) {
		size_t cap = t->dcap > 0 ? t->dcap : 65536;

		while (cap - t->dlen < need)
			cap *= 2;
		if ((b = xrealloc(t->dbuf, cap)) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		t->dbuf = b;
		t->dcap = cap;
	}
	c = (uint32_t)n;
	memcpy(t->dbuf + t->dlen, &c, sizeof(c));
	t->dlen += sizeof(c);
	for (i = 0; i < n; i++) {
		tok = toklist_get(tl, i, &tlen);
		t->dbuf[t->dlen++] = (unsigned char)tlen;	/* <= 255 */
		memcpy(t->dbuf + t->dlen, tok, tlen);
		t->dlen += tlen;
	}
	t->ndefer++;
	t->st.nposts++;
	if (t->ndefer >= DEFER_POSTS || t->dlen >= DEFER_BYTES)
		return defer_flush(t, err, errsz);
	return 0;
}

static int
direct_post(struct trainer *t, const unsigned char *msg, size_t len,
    struct tokpool_post *pp, char *err, size_t errsz)
{
	struct toklist *tl;
	long n;
	int r;

	if (t->defer)
		return defer_post(t, msg, len, pp, err, errsz);
	if (!t->intx && direct_begin(t, err, errsz) < 0)
		return -1;
	if ((tl = post_tokens(t, msg, len, 0, pp)) == NULL) {
		snprintf(err, errsz, "out of memory while tokenizing");
		return -1;
	}
	if (t->dir < 0 && (r = unlearn_known(t, tl, err, errsz)) <= 0)
		return r;	/* never learnt: left alone */
	if ((n = tokdb_learn(t->db, tl, t->spam, t->dir, t->day)) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(t->db));
		return -1;
	}
	t->st.nchanged += n;
	t->st.nposts++;
	t->nbatch++;
	if (t->bulk)
		return 0;	/* one private copy for the rest of the run */
	if (!t->memory && t->dir > 0 && t->st.nposts >= t->bulk_after) {
		/* many posts: the rest in bulk mode (learning only: there it
		 * counts the new tokens, not the removed ones) */
		t->want_bulk = 1;
		return direct_flush(t, err, errsz);
	}
	if (t->nbatch >= BATCH_POSTS ||
	    clock_now_s() - t->batch_start >= BATCH_SECONDS) {
		if (direct_flush(t, err, errsz) < 0)
			return -1;
		if (!t->memory)
			direct_pause();
	}
	return 0;
}

static int
direct_finish(struct trainer *t, char *err, size_t errsz)
{
	if (defer_flush(t, err, errsz) < 0)
		return -1;
	return direct_flush(t, err, errsz);
}

/* undo the current batch; remove a new token file that never got into
 * place */
static void
direct_abort(struct trainer *t)
{
	char wal[4300];

	t->ndefer = 0;		/* gathered, never learnt */
	t->dlen = 0;
	if (t->intx) {
		tokdb_abort(t->db);
		t->intx = 0;
		if (!t->memory) {
			tokdb_close(t->db);	/* a bulk copy: thrown away */
			t->db = NULL;
		}
		t->bulk = 0;
	}
	if (t->tmppath[0] == 0)
		return;
	unlink(t->tmppath);
	snprintf(wal, sizeof(wal), "%s.wal", t->tmppath);
	unlink(wal);
	t->tmppath[0] = 0;
}

static const struct trainer_ops direct_ops = {
	direct_post, direct_finish, direct_abort
};

/* a missing token file is to be created: build it under a temporary
 * name next to it (see trainer.h): 0, or -1 with err */
static int
direct_tmpfile(struct trainer *t, char *err, size_t errsz)
{
	t->tmppath[0] = 0;
	if (!t->create || t->memory || access(t->path, F_OK) == 0 ||
	    errno != ENOENT)
		return 0;
	/* a link to nothing: the new file would never go in its place
	 * (link() finds the name taken), and "train again" met it again */
	if (tokdb_dangling(t->path, err, errsz))
		return -1;
	if (tokdb_tmp_name(t->path, "new", (long)getpid(), t->tmppath,
	    sizeof(t->tmppath)) < 0) {
		t->tmppath[0] = 0;
		snprintf(err, errsz, "token file %s: path too long", t->path);
		return -1;
	}
	unlink(t->tmppath);	/* left by a killed run with this pid */
	return 0;
}

int
trainer_open_direct(struct trainer **t_r, const char *path, int create,
    unsigned wait_ms, struct posttok *pt, int spam, int dir,
    uint32_t day, char *err, size_t errsz)
{
	struct trainer *t;

	*t_r = NULL;
	if ((t = xcalloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	t->ops = &direct_ops;
	if ((size_t)snprintf(t->path, sizeof(t->path), "%s", path) >=
	    sizeof(t->path)) {
		snprintf(err, errsz, "token file %s: path too long", path);
		xfree(t);
		return -1;
	}
	t->memory = strcmp(path, ":") == 0;
	t->create = create;
	t->wait_ms = wait_ms;
	t->pt = pt;
	t->spam = spam;
	t->dir = dir;
	t->day = day;
	if ((t->tl = toklist_new(pt->to.max_tokens)) == NULL) {
		snprintf(err, errsz, "out of memory");
		xfree(t);
		return -1;
	}
	if (direct_tmpfile(t, err, errsz) < 0) {
		toklist_free(t->tl);
		xfree(t);
		return -1;
	}
	/* a new file is private until it is linked in place: no
	 * transactions needed */
	t->want_bulk = t->tmppath[0] != 0;
	/* a file others use is never held while the evidence asks (a new
	 * one is private, an in-memory store ours) */
	t->defer = !t->memory && t->tmppath[0] == 0 && posttok_asks(pt);
	*t_r = t;
	return 0;
}

/* --- either ------------------------------------------------------------ */

/* err = "name: err", unless it is the database's (trainer_open_journal_conn:
 * no post of its own; open_rc is the opener's until it is joined, and a
 * worker's failure can come before that) */
static void
name_err(const struct trainer *t, const char *name, char *err, size_t errsz)
{
	char e[1024];

	if (name == NULL || name[0] == 0 || (!t->opening && t->open_rc < 0))
		return;
	snprintf(e, sizeof(e), "%s", err);
	snprintf(err, errsz, "%s: %s", name, e);
}

/* learn the oldest post in the pool: 0, or -1 with err */
static int
pool_learn_oldest(struct trainer *t, char *err, size_t errsz)
{
	struct tokpool_post *pp = tokpool_take(t->pool);
	int r;

	if (pp == NULL)
		return 0;
	if (pp->rc < 0) {
		snprintf(err, errsz, "%s", pp->err);
		r = -1;
	} else {
		t->name = pp->name;
		r = t->ops->post(t, pp->msg, pp->len, pp, err, errsz);
		t->name = NULL;
	}
	if (r < 0)
		name_err(t, pp->name, err, errsz);
	tokpool_done(t->pool);
	return r;
}

/* learn every post in the pool: 0, or -1 with err */
static int
pool_drain(struct trainer *t, char *err, size_t errsz)
{
	int r = 0;

	while (r == 0 && t->pool != NULL && tokpool_pending(t->pool) > 0)
		r = pool_learn_oldest(t, err, errsz);
	return r;
}

/* learn every post in the pool, and end it: 0, or -1 with err */
static int
pool_end(struct trainer *t, char *err, size_t errsz)
{
	int r = pool_drain(t, err, errsz);

	tokpool_stop(t->pool);
	t->pool = NULL;
	return r;
}

/* start the pool at the second post (one post is not worth threads):
 * failing, the posts are learnt here */
static void
pool_begin(struct trainer *t)
{
	char err[256];
	unsigned n = tokpool_workers();
	int what;

	if (n == 0) {
		t->nopool = 1;
		return;
	}
	if (t->ops == &journal_ops)
		what = TOKPOOL_DEFLATE | (t->db != NULL || (t->opening &&
		    t->path[0] != 0) ? TOKPOOL_WORDS : 0);
	else
		what = TOKPOOL_WORDS;
	if (tokpool_start(&t->pool, t->pt, n, what, t->ops == &journal_ops ?
	    t->pt->to.lim.max_scan + 1 : 0, err, sizeof(err)) < 0) {
		t->pool = NULL;
		t->nopool = 1;
	} else if (t->opening)
		tokpool_set_depth(t->pool, TOKPOOL_DEPTH_MAX);
}

int
trainer_post(struct trainer *t, const char *name, const unsigned char *msg,
    size_t len, char *err, size_t errsz)
{
	if (t->pool == NULL && !t->nopool && (t->ntaken > 0 || t->opening))
		pool_begin(t);
	t->ntaken++;
	if (t->pool != NULL && len > TOKPOOL_POST_MAX) {
		/* a large post is not copied: learnt here, after the ones
		 * before it */
		if (pool_drain(t, err, errsz) < 0)
			return -1;
	} else if (t->pool != NULL) {
		while (!tokpool_room(t->pool, len))
			if (pool_learn_oldest(t, err, errsz) < 0)
				return -1;
		if (tokpool_put(t->pool, msg, len, name) == 0)
			return 0;
		/* out of memory: the rest here, in order */
		t->nopool = 1;
		if (pool_end(t, err, errsz) < 0)
			return -1;
	}
	t->name = name;
	if (t->ops->post(t, msg, len, NULL, err, errsz) < 0) {
		t->name = NULL;
		name_err(t, name, err, errsz);
		return -1;
	}
	t->name = NULL;
	return 0;
}

int
trainer_finish(struct trainer *t, char *err, size_t errsz)
{
	int r;

	if (t->finished)
		return 0;
	r = pool_end(t, err, errsz);
	if (r == 0)
		r = t->ops->finish(t, err, errsz);
	if (r < 0)
		t->ops->abort(t);
	t->finished = 1;
	/* the list's setting again (the follower may have taken the file's) */
	t->pt->to.bigrams = t->pt->list_bigrams;
	return r;
}

void
trainer_abort(struct trainer *t)
{
	tokpool_stop(t->pool);	/* what it holds is dropped */
	t->pool = NULL;
	if (!t->finished)
		t->ops->abort(t);
	t->finished = 1;
	t->pt->to.bigrams = t->pt->list_bigrams;
}

int
trainer_committed_at(const struct trainer *t, int64_t *last_r,
    int64_t *mark_r)
{
	if (!t->finished || !t->have_last)
		return 0;
	*last_r = t->last;
	*mark_r = t->last_mark;
	return 1;
}

int
trainer_learnt_along(const struct trainer *t)
{
	return t->finished && t->learnt_along;
}

void
trainer_stats(const struct trainer *t, struct trainer_stats *st)
{
	*st = t->st;
}

const char *
trainer_warning(const struct trainer *t)
{
	return t->warn[0] != 0 ? t->warn : NULL;
}

void
trainer_free(struct trainer *t)
{
	char err[1024];

	if (t == NULL)
		return;
	trainer_abort(t);
	(void)opened(t, err, sizeof(err));
	if (t->db != NULL)
		tokdb_close(t->db);
	toklist_free(t->tl);
	xfree(t->dbuf);
	if (t->own_q)
		queue_close(t->q);
	xfree(t);
}
