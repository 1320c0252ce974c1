/*
 * trainer.h - learn (or unlearn) posts as spam or ham, through one of
 * two back ends
 *
 *   journal: each post goes to the list's training journal in
 *            PostgreSQL, all in one transaction; the token file learns
 *            them alongside when it is up to date, else follows with
 *            sync (the journal is the source of truth when a database
 *            is configured);
 *   direct:  each post is tokenized and learnt into a token file in
 *            batches, one Kyoto Cabinet transaction each (standalone
 *            use, benchmarks, and scratch stores such as tune's folds;
 *            the path ":" is an in-memory store).
 *
 * Both take posts with trainer_post and end with trainer_finish (make
 * them durable) or trainer_abort (forget what is not yet durable).
 * Posts are hostile and reach only the bounded tokenizer.  Every
 * function returns -1 with a message in err; none prints or exits.
 */
#ifndef LG_TRAINER_H
#define LG_TRAINER_H

#include <stddef.h>
#include <stdint.h>

struct posttok;
struct queue;
struct tokdb;
struct trainer;

/* what a trainer has done so far */
struct trainer_stats {
	unsigned long nposts;	/* posts taken */
	int unknown;		/* journal: the commit's answer was lost (the
				 * posts may be journaled or not) */
	unsigned long ndone;	/* posts durable (direct: in committed
				 * batches; journal: after trainer_finish) */
	long nchanged;		/* direct: tokens new (learn) or removed */
	/* unlearning: posts left alone because the token file
	 * (trainer_open_direct) or the journal (the posts journaled with
	 * these bytes: trainer_open_journal) shows they were never learnt
	 * as the class, not counted in nposts; the first one's name (""
	 * when not known) */
	unsigned long nnotlearnt;
	char first_notlearnt[1024];
};

/*
 * The journal back end: list's posts go to q's journal with source
 * "manual" (q stays the caller's).  Opens the journal transaction.
 * With path (the list's token file; NULL for none, and for the site
 * store, which follows the site feed), posts learnt (dir > 0) are also
 * learnt into that file as they are journaled, through pt, and
 * published with the batch's last event as its position once the
 * journal has committed: only when the file is exactly at the list's
 * newest event when the batch begins (or missing, the list having no
 * events), for at most the first seconds of the run (the file's lock
 * and the journal lock are held meanwhile; the rest is left to sync),
 * and only if nothing fails on the way, else the file is left
 * as it was for sync to bring up to date (trainer_warning then says
 * why, when the file was being followed).  wait_ms bounds the waits
 * for the file's lock.  0, or -1 with err.
 */
int trainer_open_journal(struct trainer **t_r, struct queue *q,
    const char *list, int spam, int dir, const char *path, unsigned wait_ms,
    struct posttok *pt, char *err, size_t errsz);

/*
 * The same, connecting to conninfo itself (which must outlive the
 * trainer): a thread of its own opens the database, checks its schema
 * and begins the batch while the workers tokenize and compress the
 * first posts, and the first post learnt (or trainer_finish) waits for
 * it.  So a failure to connect may come from trainer_post or
 * trainer_finish, with the connection's err.  The connection is the
 * trainer's, closed by trainer_free.  0, or -1 with err.
 */
int trainer_open_journal_conn(struct trainer **t_r, const char *conninfo,
    const char *list, int spam, int dir, const char *path, unsigned wait_ms,
    struct posttok *pt, char *err, size_t errsz);

/* the journal trainer's connection, once open (waited for), or NULL when
 * it could not be opened; NULL for the direct back end */
struct queue *trainer_queue(struct trainer *t);

/* after trainer_finish of a journal trainer that followed the token
 * file: 1 with the list's newest event (the batch's last) and its mark,
 * as read in the batch's commit (see sync_list_at); else 0 */
int trainer_committed_at(const struct trainer *t, int64_t *last_r,
    int64_t *mark_r);

/* after trainer_finish of a journal trainer: 1 when the token file
 * learnt the posts as they were journaled (a sync after it applies only
 * the events of others), else 0 (the sync applies the posts) */
int trainer_learnt_along(const struct trainer *t);

/*
 * The direct back end: learn into the token file at path (":" for an
 * in-memory store), created when missing if create is
 * set: a missing file is built under a temporary name beside it
 * (.NAME.new-PID.kch) and linked into place when its first batch has
 * committed, so a failed run never leaves an empty or partial new token
 * file behind.  wait_ms bounds each wait for the file's lock; pt says
 * how posts become tokens (posttok_post: tokenizer and evidence; not
 * copied, it must outlive the trainer; evidence that asks anyone,
 * posttok_asks, is gathered with an existing file free: the posts'
 * tokens are kept and learnt 64 at a time, in transactions, never in
 * a private copy held for the run); day the last-seen day recorded.
 * 0, or -1 with err.
 */
int trainer_open_direct(struct trainer **t_r, const char *path, int create,
    unsigned wait_ms, struct posttok *pt, int spam, int dir,
    uint32_t day, char *err, size_t errsz);

/*
 * learn (or unlearn) one post, named name in messages (NULL: none): 0,
 * or -1 with err (then trainer_abort), which begins with the name of
 * the post that failed.  Past the first post, posts are tokenized and
 * compressed ahead by worker threads (gate/app/tokpool.h,
 * tokpool_workers() of them) and learnt a few calls later, in order;
 * so a failure may be a post given before this one, and trainer_stats
 * counts the posts learnt (or journaled) so far.
 */
int trainer_post(struct trainer *t, const char *name,
    const unsigned char *msg, size_t len, char *err, size_t errsz);

/* make every post taken durable: 0, or -1 with err (what was not made
 * durable is then rolled back) */
int trainer_finish(struct trainer *t, char *err, size_t errsz);

/* forget what is not durable yet */
void trainer_abort(struct trainer *t);

void trainer_stats(const struct trainer *t, struct trainer_stats *st);

/* the last thing that went wrong without failing the training (the
 * direct back end could not compact the token file), or NULL */
const char *trainer_warning(const struct trainer *t);

/* release it (trainer_abort first if not finished) */
void trainer_free(struct trainer *t);

#endif
