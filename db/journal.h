/*
 * journal.h - the training journal in PostgreSQL: every post learnt or
 * unlearnt, compressed, in the order it was journaled
 *
 * The journal is the source of truth for training; a list's token file
 * is a view of it that records the id of the last event it applied (its
 * journal position).  Writers of one list's events hold a per-list
 * advisory lock until they commit, so ids of one list become visible in
 * id order and a reader never skips an id that commits late.  This
 * module stores and fetches events; applying them (tokenizing,
 * learning) is gate/app/sync.c's work.  Every function returns -1 with a
 * message in err on failure; nothing here logs or exits.
 */
#ifndef LG_JOURNAL_H
#define LG_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

struct queue;

/*
 * Bulk writes: journal_begin opens a transaction and takes the list's
 * journal lock (writers of one list are serialised, so event ids commit
 * in id order and sync never skips one); journal_add appends one event
 * (the post compressed); journal_commit makes them durable together;
 * journal_rollback forgets them.  0, or -1 with err (roll back then).
 */
int journal_begin(struct queue *q, const char *list, char *err,
    size_t errsz);
int journal_add(struct queue *q, const char *list, int spam, int dir,
    const char *source, int64_t post_id, const unsigned char *raw,
    size_t len, char *err, size_t errsz);
int journal_commit(struct queue *q, char *err, size_t errsz);
void journal_rollback(struct queue *q);

/*
 * Whether list's journal holds a learning of the post raw (len bytes)
 * as class spam that no unlearning has undone: of the events of the
 * class whose stored post has exactly these bytes (read back; a damaged
 * or quarantined one left out, as sync leaves it), those learnt minus
 * those unlearnt, in *net_r.  Unlearning only a post above 0 keeps the
 * journal from taking a post's tokens from the counts of the posts that
 * were learnt, on every host and in every rebuild alike.  Under the
 * list's journal lock (journal_begin) it counts the batch's events too
 * (an unlearning goes to the server as it is added, not in the batch's
 * COPY); not once a learning was added to the batch.  0, or -1 with err.
 */
int journal_learnt(struct queue *q, const char *list, int spam,
    const unsigned char *raw, size_t len, long *net_r, char *err,
    size_t errsz);

/*
 * journal_add in two steps, for a writer that compresses its posts
 * ahead in other threads: a compressor (one per thread; NULL when out of
 * memory) compresses raw (len bytes, at most LG_MAX_POST_BYTES) into
 * *buf, grown with xrealloc (*cap its size; *zlen_r the bytes written),
 * and journal_add_z appends the event of a post of len bytes from its
 * compressed z.  0, or -1 with err.
 */
struct journal_z;
struct journal_z *journal_z_new(void);
void journal_z_free(struct journal_z *jz);
int journal_z_compress(struct journal_z *jz, const unsigned char *raw,
    size_t len, unsigned char **buf, size_t *cap, size_t *zlen_r,
    char *err, size_t errsz);
int journal_add_z(struct queue *q, const char *list, int spam, int dir,
    const char *source, int64_t post_id, size_t len, const unsigned char *z,
    size_t zlen, char *err, size_t errsz);

/*
 * An event's mark: the time its row was written, in microseconds since
 * 1970 (never 0), computed in integers (extract gives floating point
 * before PostgreSQL 14, and a mark must not change with an upgrade) and
 * in UTC (nor with the session's time zone).
 * A token file records the mark of the event at its position beside the
 * position, so that a database whose ids came round again (a failover to
 * a standby that lost the last commits, a restored backup), where the
 * same id names another event or none, is told from the one the file
 * was built from.
 */
#define JOURNAL_MARK_SQL(col) \
	"greatest(floor(extract(epoch FROM " col "))::int8 * 1000000 + " \
	"round(extract(microseconds FROM (" col ") AT TIME ZONE 'UTC'))" \
	"::int8 % 1000000, 1)"

/*
 * The mark of the journal's event id, of whichever list (site: of the
 * event the site feed's number id names), in *mark_r, or 0 when there
 * is no such event; when list_r is not NULL, the event's list in it
 * (listsz bytes; "" when there is no such event); when jid_r is not
 * NULL, the event's journal id in it (0 when none).  0, or -1 with err.
 */
int journal_event_mark(struct queue *q, int site, int64_t id,
    int64_t *mark_r, char *list_r, size_t listsz, int64_t *jid_r,
    char *err, size_t errsz);

/*
 * For a writer that also learns its events into the list's token file
 * (the trainer's follower): journal_begin, and, read under the lock
 * before any event of the batch, the list's newest event id (*last_r,
 * 0 when none) with its mark (*mark_r, 0 when none) and the day every
 * event of the batch is stamped with (*day_r, days since 1970-01-01 of
 * the transaction's start, as a fetch gives it).  journal_commit_last is
 * journal_commit that first reads the list's newest event id and its
 * mark again (*last_r, *mark_r: the batch's last).  Since every writer
 * of the list's events holds its journal lock, the batch's events are
 * then exactly the list's events after the first *last_r up to the
 * second.
 */
int journal_begin_at(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, uint32_t *day_r, char *err, size_t errsz);

/* journal_begin_at on a connection just opened, checking first that its
 * schema is the one this listgate uses (queue_check_schema, whose err a
 * schema that is not gets), in the same round trip */
int journal_check_begin_at(struct queue *q, const char *list,
    int64_t *last_r, int64_t *mark_r, uint32_t *day_r, char *err,
    size_t errsz);
int journal_commit_last(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, char *err, size_t errsz);
/* journal_commit_last in halves, for a writer with work to do while the
 * server commits (makes the WAL durable): the first sends the COMMIT
 * (*last_r known by then), the second waits for its answer; after the
 * first, call nothing but the second.  0, or -1 with err: the batch is
 * not journaled; JOURNAL_EUNKNOWN (also from journal_commit_last):
 * the connection broke before the answer came, and the batch may or may
 * not be journaled.  Either way, publish nothing that depends on it */
#define JOURNAL_EUNKNOWN	(-2)
int journal_commit_send(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, char *err, size_t errsz);
int journal_commit_wait(struct queue *q, char *err, size_t errsz);
/* before journal_commit_send (or journal_commit_last), for a writer
 * with work to do while the server stores the batch's last rows: end
 * the batch's stream of events without waiting for the server; add no
 * event after it.  A failure is kept for journal_commit_send (or
 * journal_commit_last) to report */
void journal_end_send(struct queue *q);

/* called with each list name by journal_lists; 0 to go on */
typedef int (*journal_name_fn)(const char *list, void *ctx);
/* every list that has journal events: 0, or -1 */
int journal_lists(struct queue *q, journal_name_fn fn, void *ctx,
    char *err, size_t errsz);

/* the id of list's newest event (0 when none): 0, or -1 */
int journal_last_id(struct queue *q, const char *list, int64_t *id_r,
    char *err, size_t errsz);

/* the id after which list's newest max events follow (0 when it has
 * max events or fewer): where a reader of only the recent history
 * starts journal_fetch_open.  0, or -1 */
int journal_window_start(struct queue *q, const char *list, unsigned max,
    int64_t *after_r, char *err, size_t errsz);

/* list's net training per class: posts learnt minus posts unlearnt, as
 * the token files count them (quarantined events left out), over its
 * events up to id upto (INT64_MAX: all of them).  0, or -1 */
int journal_net_counts(struct queue *q, const char *list, int64_t upto,
    int64_t *ham_r, int64_t *spam_r, char *err, size_t errsz);
/* what journal_fetch_next says of an event */
#define JOURNAL_APPLY		0	/* the post is in raw, len */
#define JOURNAL_DAMAGED		1	/* its stored message cannot be read
					 * back (why says how): quarantine it */
#define JOURNAL_QUARANTINED	2	/* quarantined before (why: the
					 * reason then); not read */

#define JOURNAL_SHA256_LEN	32

/* one event, as journal_fetch_next hands it out */
struct journal_event {
	int64_t id;			/* the journal's id (the site feed:
					 * the feed number) */
	int64_t event_id;		/* the journal's id, always */
	int64_t mark;			/* its mark (above) */
	int own;			/* the list's own event (the site
					 * feed: the site list's) */
	int spam;			/* learnt as: 1 spam, 0 ham */
	int dir;			/* +1 learn, -1 unlearn */
	uint32_t day;			/* days since 1970-01-01 when journaled */
	int state;			/* JOURNAL_APPLY, _DAMAGED, _QUARANTINED */
	int64_t size;			/* the post's recorded size */
	const unsigned char *raw;	/* JOURNAL_APPLY: the post's first len */
	size_t len;			/* bytes, decompressed (see below) */
	char why[256];			/* otherwise: why it is not applied */
	int has_sha;			/* a moderator's decision: */
	unsigned char sha[JOURNAL_SHA256_LEN];	/* the post's SHA-256 */
};

struct journal_fetch;

/*
 * Fetch at most max events of list with id > after, in id order, and no
 * more than a byte budget (16 MiB of stored bytes; the first event
 * always comes).  Each post is fetched and decompressed only as far as
 * tokenizing it with the scan limit scan looks: ev->raw holds its first
 * min(size, scan + 1) bytes (tok_post of those and of the whole post
 * give the same tokens), so memory stays bounded by scan, not by the
 * posts' sizes.  A stored message that comes whole (a small post, or
 * one that compresses well) is also checked to decompress to exactly
 * its size.  Each event is valid until the next journal_fetch_next or
 * journal_fetch_close.  open: 0, or -1 with err.  next: 1 with *ev
 * filled, 0 at the end, -1 with err (a database or memory failure).  An
 * event whose stored message is damaged is no failure: it comes with
 * state JOURNAL_DAMAGED, and one quarantined before comes with
 * JOURNAL_QUARANTINED (its message is not even fetched).  close may come
 * before the end (the rest is dropped).
 */
int journal_fetch_open(struct queue *q, const char *list, int64_t after,
    unsigned max, size_t scan, struct journal_fetch **f_r, char *err,
    size_t errsz);
int journal_fetch_next(struct journal_fetch *f, struct journal_event *ev,
    char *err, size_t errsz);
void journal_fetch_close(struct journal_fetch *f);

/*
 * Quarantine event id of list: mark it with the time and why (cut to
 * 1000 bytes), unless it is marked already, so every sync and rebuild
 * skips it from now on.  Not while a fetch is open on q.  0, or -1 with
 * err.
 */
int journal_quarantine(struct queue *q, const char *list, int64_t id,
    const char *why, char *err, size_t errsz);

/*
 * The site store's feed (migrations/0008_site_feed.sql): every list's
 * events, each given a feed number once, in the order the site store
 * applies them; the site store's token file records a feed number as
 * its position.
 *
 * journal_site_feed: in one transaction under the feed's lock, give the
 * next events of every list not yet fed (at most max, in id order, so
 * each list's stay in order) feed numbers from the journal's id
 * sequence.  *n_r: how many were fed; *nread_r: how many were read
 * after each list's last fed (call again while it is max: those fed
 * already, a list's events renamed to another list in SQL, are passed
 * over).  Needs the primary (it writes).  0, or -1 with err (nothing
 * fed).
 */
int journal_site_feed(struct queue *q, unsigned max, long *n_r,
    long *nread_r, char *err, size_t errsz);

/* the id of the newest event of any list (0 when none): 0, or -1 */
int journal_max_id(struct queue *q, int64_t *id_r, char *err,
    size_t errsz);

/* how many seconds ago the oldest event with an id above after was
 * written (its transaction began), 0 when there is none: 0, or -1 */
int journal_age_after(struct queue *q, int64_t after, int64_t *secs_r,
    char *err, size_t errsz);

/* the highest feed number (0 when none): 0, or -1 */
int journal_site_last(struct queue *q, int64_t *seq_r, char *err,
    size_t errsz);

/* whether pos is a feed number: *is_r 1 or 0; 0, or -1 */
int journal_site_is_feed(struct queue *q, int64_t pos, int *is_r,
    char *err, size_t errsz);

/* whether pos is the id of a journal event (of any list): *is_r 1 or
 * 0; 0, or -1 */
int journal_is_event(struct queue *q, int64_t pos, int *is_r, char *err,
    size_t errsz);

/* like journal_fetch_open, the fed events with feed numbers > after, in
 * feed order: each event's id is its feed number (event_id its journal
 * id), and a moderator's decision carries its digest only when it is of
 * site_list's own posts; a quarantined event is read and judged as any
 * other (never JOURNAL_QUARANTINED: the list's sync marked it by its
 * own max_scan_bytes, maybe after the site store learnt its head) */
int journal_site_fetch_open(struct queue *q, const char *site_list,
    int64_t after, unsigned max, size_t scan, struct journal_fetch **f_r,
    char *err, size_t errsz);

#endif
