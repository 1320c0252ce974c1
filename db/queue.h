/*
 * queue.h - the moderation queue and training journal in PostgreSQL
 *
 * Values reach the server only as parameters (PQexecParams,
 * PQsendQueryParams) or as binary COPY fields (a training batch's
 * journal events, each field sent with its length); the one exception is
 * a compiled-in migration script run whole by queue_migrate.  Every
 * function returns -1 with a message in err on failure and never exits;
 * a hold is reported done only after its INSERT committed.  The schema
 * is migrations/NNNN_*.sql (held_posts, train_journal, decided_posts,
 * schema_migrations); a post's SHA-256 comes from GNU Nettle.
 */
#ifndef LG_QUEUE_H
#define LG_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/util/lglimits.h"

struct queue;

/* the migrations compiled in (generated from migrations/NNNN_*.sql by
 * db/gen_migrations.sh), ascending, ended by a NULL name */
struct queue_migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct queue_migration queue_migrations[];
/* the newest schema version this binary knows */
extern const int queue_schema_latest;

/* 1 if a database is configured: a conninfo, or libpq environment
 * variables (PGHOST, PGHOSTADDR, PGDATABASE, PGSERVICE, PGPORT, PGUSER) */
int queue_configured(const char *conninfo);

/*
 * 0 when libpq parses conninfo (a key=value list or a URI), else -1
 * with err saying why in libpq's words, each of its quoted pieces
 * masked: libpq quotes the offending text, which may be the password
 * (`invalid percent-encoded token: "secret%zz"`, or the whole URI).
 * A URI libpq parses, but with a raw '@' past its user part (in its
 * hosts or database name: a password holding a raw '@' or '/', of
 * which libpq makes a host, port or database name that its connection
 * errors quote), is refused too.
 */
int queue_conninfo_check(const char *conninfo, char *err, size_t errsz);

/* connect (conninfo may be NULL: libpq's environment then): 0 or -1;
 * a conninfo libpq cannot parse fails as queue_conninfo_check says; a
 * database name that is itself a connection string is masked in the
 * error (the server's FATAL quotes it) */
int queue_open(const char *conninfo, struct queue **q_r, char *err,
    size_t errsz);
/* the same, giving up after secs seconds (whatever the conninfo says)
 * when the server does not answer; secs 0: as queue_open */
int queue_open_within(const char *conninfo, unsigned secs,
    struct queue **q_r, char *err, size_t errsz);
void queue_close(struct queue *q);
/* 1 when q's connection still stands as far as can be told without a
 * round trip (what the server sent meanwhile is read, never waited
 * for: a restart's FATAL and the end of the stream show); else 0, and
 * q is fit only for queue_close */
int queue_alive(struct queue *q);
/* q's connection again when the server ended it while it was idle (a
 * restart, a failover that an approval's release rode out on its
 * lock's connection): 0 when it stands or stands again, -1 with err
 * (q then as it was).  Not inside a journal batch */
int queue_revive(struct queue *q, char *err, size_t errsz);

/* refuse a database whose schema is missing or newer than this binary
 * knows: 0 ok, -1 with err */
int queue_check_schema(struct queue *q, char *err, size_t errsz);

/* *standby_r = 1 when the server is a hot standby (in recovery: it reads
 * what its primary had some time ago, and refuses writes), else 0: 0,
 * or -1 with err */
int queue_in_recovery(struct queue *q, int *standby_r, char *err,
    size_t errsz);

/* which database q is connected to, as a physical (streaming) replica
 * shares it: the cluster's system identifier in *sysid_r and the
 * database's oid in *dboid_r (the same on a primary and every standby
 * of it, different for another cluster or another database of the
 * same one): 0, or -1 with err */
int queue_identity(struct queue *q, uint64_t *sysid_r, uint32_t *dboid_r,
    char *err, size_t errsz);

struct queue_post {
	const char *list;
	const char *env_sender, *env_recipient;	/* may be "" */
	const char *from, *subject, *msgid;	/* decoded, may be "" */
	const unsigned char *raw;		/* the post exactly as received */
	size_t raw_len;
	int raw_from_fd;			/* set: read the raw_len bytes
						 * from raw_fd instead, from
						 * offset 0 (a spool file: never
						 * mapped whole) */
	int raw_fd;
	double score;
	const char *verdict;			/* "unsure", "spam" */
	const char *clues;			/* deciding tokens, text */
	const char *status;			/* "held" or "discarded" */
	const char *note;			/* why, when it is not the
						 * score (NULL or ""): "deliver
						 * refused: ..." */
	unsigned remember_days;			/* answer a retry of a post a
						 * moderator decided less than
						 * this many days ago from
						 * that decision (0: never) */
	char *const *notify_mods;		/* set (NULL-terminated, not
						 * empty): a new held post's
						 * hold notices to these
						 * moderators are queued in
						 * the outbox (notice_outbox)
						 * by the same statement, so
						 * that no failure after the
						 * commit loses them */
	unsigned notify_max_per_hour;		/* with notify_mods: past
						 * this many posts noticed in
						 * the last hour (0: always),
						 * they wait for a digest */
};

/* who decided a post the filter stored as discarded (held_posts'
 * decided_by); no moderator may decide under this name */
#define QUEUE_FILTER_BY		"listgate filter"

/* what queue_hold and queue_decided found */
#define QUEUE_HELD_NEW		0	/* stored now */
#define QUEUE_HELD_PENDING	1	/* these bytes are held already (or
					 * being released) */
#define QUEUE_HELD_APPROVED	2	/* decided within remember_days: */
#define QUEUE_HELD_REJECTED	3	/* approved (released), rejected or */
#define QUEUE_HELD_DISCARDED	4	/* discarded; not stored again */

/*
 * Store a post (zlib-compressed, with its SHA-256), committed on return,
 * in a statement that also checks the schema (nothing is stored in a
 * database whose schema is not the one this binary needs: -1 with err
 * as queue_check_schema words it).
 * The post is read and compressed as a stream, in chunks: a post whose
 * compressed form fits in one chunk (1 MiB) goes in one statement, a
 * larger one through a PostgreSQL large object written chunk by chunk
 * in the same transaction (and dropped before it commits), so memory
 * stays a few MiB whatever the size.  A new post: QUEUE_HELD_NEW with
 * the new id in *id_r (and its notices queued with it, p->notify_mods).  The MTA retries a delivery whose filter was killed after its
 * INSERT committed, with the same bytes; such a retry is never stored
 * twice nor delivered twice: QUEUE_HELD_PENDING with the id of the row
 * that holds exactly these bytes for this list (held or being released;
 * never for a post stored as "discarded"), or, when a moderator decided that row
 * less than p->remember_days ago, QUEUE_HELD_APPROVED, _REJECTED or
 * _DISCARDED with its id (nothing stored: the first decision stands).
 * A post stored with status "discarded" whose bytes a filter already
 * stored as discarded for this list is not stored again either:
 * QUEUE_HELD_DISCARDED with that row's id.  -1 on failure.
 */
int queue_hold(struct queue *q, const struct queue_post *p, int64_t *id_r,
    char *err, size_t errsz);
/* queue_hold, and the post's SHA-256 into sha_r (32 bytes) once it is
 * read */
int queue_hold_sha(struct queue *q, const struct queue_post *p,
    int64_t *id_r, unsigned char *sha_r, char *err, size_t errsz);

/*
 * Was a post with exactly these bytes (raw, or when fd >= 0 the len
 * bytes of that file from offset 0) decided by a moderator for list less
 * than days ago?  QUEUE_HELD_APPROVED, _REJECTED or _DISCARDED with
 * the post's id, 0 when not, -1 on failure.  (filter asks before it
 * passes a post: a retry that now scores as ham is not delivered again.)
 */
int queue_decided(struct queue *q, const char *list,
    const unsigned char *raw, size_t len, int fd, unsigned days,
    int64_t *id_r, char *err, size_t errsz);

/* how long, by default, a migration waits for each table lock it needs
 * (lock_timeout): while it waits for an ACCESS EXCLUSIVE lock, every
 * other client of that table (the filter's pass path) queues behind it */
#define QUEUE_MIGRATE_LOCK_S	5
/* the longest wait migrate --lock-timeout takes */
#define QUEUE_MIGRATE_LOCK_MAX_S 3600

/*
 * Apply the migrations the database lacks, each in its own transaction
 * recorded in schema_migrations (created when missing) and holding an
 * advisory transaction lock, so two runs cannot race (through a pooler
 * in transaction mode too).  Past that lock, each lock a migration
 * takes is waited for at most lock_timeout_s seconds (0: the session's
 * lock_timeout); a migration that waited longer is rolled back and err
 * names the table and the session holding it.  *napplied_r gets how
 * many ran; when report is not NULL it is called with each one
 * applied.  Refuses (-1) a database whose schema is newer than this
 * binary knows.
 */
int queue_migrate(struct queue *q, unsigned lock_timeout_s, int *napplied_r,
    void (*report)(int version, const char *name, void *ctx), void *ctx,
    char *err, size_t errsz);

/* the applied schema version (0 when none): 0, or -1 */
int queue_schema_version(struct queue *q, int *version_r, char *err,
    size_t errsz);

/*
 * The applied schema version for `migrate --status`, as
 * queue_schema_version, but in a transaction of its own whose wait for
 * schema_migrations (another session holding it locked: a migration
 * running, an open transaction that locked it) lasts at most
 * lock_timeout_s seconds (0: the session's lock_timeout); then -1 and
 * err names the table and the session holding it, as queue_migrate's.
 */
int queue_schema_status(struct queue *q, unsigned lock_timeout_s,
    int *version_r, char *err, size_t errsz);

/* one held post as the moderator commands see it; strings are owned by
 * the row and freed with queue_row_free */
struct queue_row {
	int64_t id;
	char *list, *env_sender, *env_recipient, *from, *subject, *msgid;
	char *verdict, *clues, *status, *decided_by, *note;
	time_t arrived, decided;	/* decided 0 when undecided */
	int64_t size;
	double score;
	unsigned char raw_sha256[32];	/* the post's SHA-256 (a moderation
					 * cookie is bound to it) */
	unsigned char *raw;		/* decompressed post (queue_get only) */
	size_t raw_len;
};
void queue_row_free(struct queue_row *r);

/* called for each row by queue_list: 0 to go on, 1 to stop, -1 to stop
 * because it failed (out of memory: queue_list then fails) */
typedef int (*queue_row_fn)(const struct queue_row *r, void *ctx);

/* the posts with status ("held", "releasing", "approved", "rejected",
 * "discarded", "expired", or "pending": held or releasing) of list
 * (NULL: all lists), oldest first, without their raw bytes: 0, or -1
 * (also when fn returned -1).  The rows come one at a time, as the
 * server sends them: fn must not use q, whose query is still running */
int queue_list(struct queue *q, const char *status, const char *list,
    queue_row_fn fn, void *ctx, char *err, size_t errsz);

/* one post with its raw bytes decompressed and checked against the
 * stored SHA-256: 1 found, 0 no such id, -1 error */
int queue_get(struct queue *q, int64_t id, struct queue_row *r, char *err,
    size_t errsz);

/* queue_get with at most max bytes of the post (a page's view of a
 * post that may be 1 GiB): a longer post's compressed bytes are fetched
 * only as far as its first max bytes need, r->raw_len is then max
 * (below r->size) and its SHA-256 is not checked (it is when the whole
 * post was read).  1 found, 0 no such id, -1 error */
int queue_get_head(struct queue *q, int64_t id, size_t max,
    struct queue_row *r, char *err, size_t errsz);

/* the list and SHA-256 of post id (a moderation cookie's binding),
 * without its bytes: 1 found, 0 no such id, -1 error */
int queue_post_sha(struct queue *q, int64_t id, char *list, size_t listsz,
    unsigned char sha[32], char *err, size_t errsz);

/* --- decisions --------------------------------------------------------- */

/* the result of queue_decide */
#define QUEUE_DECIDED	0	/* recorded (and committed) */
#define QUEUE_NOENT	1	/* no such post */
#define QUEUE_ALREADY	2	/* already decided that way, or decided and
				 * no force: nothing changed (*old_r says) */
#define QUEUE_RELEASE_FAILED 3	/* the release callback failed: nothing
				 * recorded, the post is back as it was
				 * (unless err says it stays 'releasing');
				 * refused for good, a held post's note
				 * says why (QUEUE_RELEASE_REFUSED) */
#define QUEUE_INTERRUPTED 4	/* the post is 'releasing': an earlier
				 * approval started its release and never
				 * recorded the outcome, so it may be on the
				 * list already; nothing done */
#define QUEUE_NOT_INTERRUPTED 5	/* QUEUE_MARK_ONLY for a post that is not
				 * 'releasing': nothing done */
#define QUEUE_UNRECORDED 6	/* released, but recording the approval
				 * failed (err says why): the post stays
				 * 'releasing' */
#define QUEUE_OTHER_LIST 7	/* the post is not d->list's (its id was
				 * reused, say after a restore): nothing
				 * done */
#define QUEUE_OTHER_POST 8	/* the post's SHA-256 is not
				 * d->raw_sha256 (its id was reused):
				 * nothing done */
#define QUEUE_BUSY	9	/* the post's lock (or its list's journal
				 * lock) was not had by d->lock_by_ms, or a
				 * stop came while it was waited for
				 * (d->stopped): nothing done */

/* how the note of a post held again after the list refused its
 * release for good begins (the refusal follows) */
#define QUEUE_RELEASE_REFUSED	"release refused the post for good: "

/* flags of queue_decide */
#define QUEUE_FORCE	1	/* change an earlier decision; release a
				 * 'releasing' post again */
#define QUEUE_MARK_ONLY	2	/* approve a 'releasing' post without
				 * releasing it (it reached the list) */
#define QUEUE_LEARN_SPAM 4	/* with "expired": learn the post as spam
				 * (expire_action = discard-learn) */

/*
 * Called by queue_decide for an approval, with no transaction open and
 * the post marked 'releasing': hand r->raw to the list.  0 on success;
 * else fill err and return -1, or -2 when the list refused the post for
 * good (trying again would not help), or -3 when it is not known whether
 * the list has the post (the post then stays 'releasing', as after an
 * interrupted approval).
 */
typedef int (*queue_release_fn)(const struct queue_row *r, void *ctx,
    char *err, size_t errsz);

/* a decision on one held post */
struct queue_decision {
	int64_t id;
	const char *status;	/* "approved", "rejected", "discarded" or
				 * "expired" */
	const char *by;		/* who decides */
	const char *note;	/* kept with the decision, or NULL */
	int flags;		/* QUEUE_FORCE, QUEUE_MARK_ONLY,
				 * QUEUE_LEARN_SPAM */
	queue_release_fn release;	/* for an approval: hand the post to
					 * the list (NULL: record only) */
	void *ctx;		/* for release and marking */
	void (*marking)(void *ctx);	/* for an approval that releases:
					 * called just before its
					 * 'releasing' mark commits, from
					 * which on the process must not
					 * end before release is called
					 * (NULL: none) */
	double deadline_ms;	/* for an approval that releases: the
				 * clock_now_ms() time by which it must have
				 * taken its post's lock again after the mark
				 * (a watchdog's); past it the post is put
				 * back, not released (QUEUE_RELEASE_FAILED).
				 * 0: no limit */
	int (*stopped)(void *ctx);	/* for an approval that releases
					 * (NULL: none): non-zero when its
					 * wait for its post's lock after
					 * the mark must end (a stop
					 * signal came): the post is put
					 * back, as at deadline_ms */
	double lock_by_ms;	/* the clock_now_ms() time by which the
				 * decision must have its post's lock, before
				 * anything of the post changes: past it, or
				 * once stopped says so, nothing is done
				 * (QUEUE_BUSY).  0: no limit (stopped is
				 * then not asked before the mark) */
	const char *list;	/* the list the post must be of (NULL:
				 * any) */
	const unsigned char *raw_sha256;	/* the SHA-256 the post must
						 * have (NULL: any) */
};

/* what queue_decide found and did */
struct queue_decided {
	char list[LG_MAX_LIST_NAME + 1];	/* the post's list */
	char old[16];		/* its status before */
	char by[256];		/* who decided it before ("" if nobody) */
	time_t at;		/* and when (0 if never) */
	int refused;		/* QUEUE_RELEASE_FAILED: the release
				 * callback returned -2 (refused for good) */
	int unsure;		/* QUEUE_RELEASE_FAILED: the release
				 * callback returned -3 (the list may have
				 * the post): it stays 'releasing' */
};

/*
 * Decide post d->id.  Decisions on one post are serialised by an
 * advisory transaction lock (one in progress, release included, makes
 * the next wait; a waiter holds no connection's transaction open, and
 * a dead process's lock is gone with its connection); an approval with a
 * release callback commits 'releasing' under it and takes it again
 * across the release in a transaction of a second connection to the
 * same database (never two transactions at once, so approvals cannot
 * take a pooler's every server connection and wait for one more),
 * opened on first use and kept until queue_close, with the list's
 * journal lock, taken before the release (a training
 * run of the list, which holds it while it reads, is waited for while
 * the post is unchanged; the list's other decisions wait for the
 * release).
 * Nothing outlives a transaction, so every path works through a
 * connection pooler in transaction mode (pgbouncer).  With
 * the row locked (SELECT ... FOR UPDATE): a post of another list than
 * d->list (when set) is left alone (QUEUE_OTHER_LIST, *res says only
 * its list), and so is a post whose SHA-256 is not d->raw_sha256 (when
 * set: QUEUE_OTHER_POST); a decision that did not get the post's lock
 * by d->lock_by_ms (when set), or was stopped meanwhile, does nothing
 * (QUEUE_BUSY, err says which); a post already decided is left alone (QUEUE_ALREADY)
 * unless QUEUE_FORCE is set and the decision differs; a 'releasing' post gets QUEUE_INTERRUPTED unless flags say
 * QUEUE_FORCE or QUEUE_MARK_ONLY.  An approval with a release callback
 * commits 'releasing' first, then calls release, then commits the
 * approval with its training (release failed: the old state back,
 * QUEUE_RELEASE_FAILED; recording failed: QUEUE_UNRECORDED).  Other
 * decisions (and QUEUE_MARK_ONLY) commit in one transaction.  The
 * decision is recorded with by, note and the time, and its training
 * events go to the journal (approved: learn ham; rejected/discarded:
 * learn spam; expired: none, or spam with QUEUE_LEARN_SPAM; a forced
 * change first unlearns the old class).  *res says what the post was (list, old status, who decided it
 * before and when) whenever it was found.  Returns QUEUE_*, or -1 on
 * error (nothing changed); err says why for -1, QUEUE_RELEASE_FAILED
 * and QUEUE_UNRECORDED.
 */
int queue_decide(struct queue *q, const struct queue_decision *d,
    struct queue_decided *res, char *err, size_t errsz);

#endif
