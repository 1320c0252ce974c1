/*
 * queue_int.h - what queue.c and journal.c share (not an interface)
 *
 * The connection handle, binary result accessors and the zlib helpers.
 * Each helper returns -1 with err on failure; none exits.
 */
#ifndef LG_QUEUE_INT_H
#define LG_QUEUE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

struct queue {
	PGconn *conn;
	char *conninfo;		/* as queue_open had it (NULL: libpq's
				 * environment) */
	struct queue *lockq;	/* a second connection: holds a post's
				 * decision lock across its release (opened
				 * when first needed) */
	int intx;		/* a journal transaction is open */
	int copy;		/* ... and its COPY of events (QCOPY_*) */
	int committing;		/* its COMMIT is sent, not yet read */
	/* the journal's compressor and its output, kept from post to post
	 * (a zlib stream made for each cost its 256 KiB of state in page
	 * faults and system calls) */
	struct journal_z *jz;	/* NULL until the first post */
	unsigned char *jzbuf;
	size_t jzcap;
	char copy_err[256];	/* why QCOPY_FAILED */
	/* the COPY's rows not yet handed to libpq (journal.c) */
	unsigned char *cbuf;
	size_t clen, ccap;
};

/* the state of a journal transaction's COPY (journal.c) */
/*
 * A recursive query's named part NAME(l): the distinct lists of TABLE,
 * one probe down its index on (list, ...) per list, where SELECT
 * DISTINCT list reads every row (a journal of millions of posts); the
 * last row is NULL.  For WITH RECURSIVE.
 */
#define QUEUE_LISTS_CTE(NAME, TABLE) \
	NAME "(l) AS (SELECT min(list) FROM " TABLE " UNION ALL SELECT " \
	"(SELECT min(list) FROM " TABLE " WHERE list > " NAME ".l) FROM " \
	NAME " WHERE " NAME ".l IS NOT NULL)"

#define QCOPY_NONE	0	/* none */
#define QCOPY_OPEN	1	/* rows are being sent */
#define QCOPY_SENT	2	/* its end is sent, its answer not read */
#define QCOPY_FAILED	3	/* sending its end failed (copy_err) */

/* why libpq could not be loaded (db/pqload.c), or NULL when it is */
const char *pq_load_error(void);

/* Advisory locks.  Every one is a transaction lock (pg_advisory_xact_
 * lock), never a session lock: a connection pooler in transaction mode
 * (pgbouncer) may run each transaction on another server connection,
 * where a session lock would outlive the client and bind the next one. */
/* class of the per-list journal writer lock ("LG") */
#define QUEUE_LOCK_JOURNAL	0x4c47
/* class of the decisions on one post ("LP"; the key is the post id's
 * low 32 bits), held across a release by a transaction of a second
 * connection */
#define QUEUE_LOCK_POST		0x4c50
/* class of a list's hourly budget of notices ("LN"; the key is
 * hashtext(list)): held for the one statement that counts it and claims
 * an outbox row against it (moddb_claim_counted) */
#define QUEUE_LOCK_NOTIFY	0x4c4e
/* class of the site store's feed ("LS", key 0): one feeder at a time
 * (journal_site_feed) */
#define QUEUE_LOCK_SITE		0x4c53
/* run right after taking QUEUE_LOCK_JOURNAL or QUEUE_LOCK_SITE, before
 * the transaction's first id of the journal's sequence: sync reads a
 * list's events (and the site feed's) in id order from a position, so
 * the ids taken under the lock must come after every id committed
 * before it.  A sequence with a CACHE above 1 (an administrator's, a
 * restored dump's) hands each session a block of its own, and a
 * session's old block would give ids below those another committed
 * meanwhile, which sync has passed for good; without its block the
 * session takes the next from the sequence itself.  (DISCARD ALL, not
 * this, is refused in a transaction.) */
#define QUEUE_FRESH_IDS_SQL	"DISCARD SEQUENCES"
/* the lock of migrate, held by each migration's transaction */
#define QUEUE_LOCK_MIGRATE	0x4c474d49
/*
 * The wait for one of these locks lasts as long as the run that holds
 * it (a train of the list, a decision's release, another sync's feed):
 * neither a statement_timeout nor a lock_timeout set for the filter's
 * hold path (the database conninfo's options) may cut it.  Before the
 * lock's statement, QUEUE_LOCK_WAIT_SQL lifts both for the transaction
 * (a statement of its own: a timeout already runs for the statement
 * that sets it); after it, QUEUE_LOCK_WAITED_SQL gives the transaction's
 * other statements the session's lock_timeout back (a table's lock
 * behind an administrator's VACUUM FULL is still bounded by it).
 */
#define QUEUE_LOCK_WAIT_SQL \
	"SELECT set_config('statement_timeout', '0', true), " \
	"set_config('lock_timeout', '0', true)"
#define QUEUE_LOCK_WAITED_SQL	"SET LOCAL lock_timeout TO DEFAULT"

/* the schema's version (queue_schema_version; journal.c sends it with
 * the statements that begin a batch); a missing table fails with
 * SQLSTATE undefined_table, which is version 0 */
#define QUEUE_SCHEMA_SQL \
	"SELECT coalesce(max(version), 0) FROM schema_migrations"
#define QUEUE_SQLSTATE_UNDEFINED_TABLE	"42P01"

/* the server's message for a failed result or connection, one line */
const char *queue_pgerr(struct queue *q, const PGresult *res);

/* run a parameterless command that returns no rows (BEGIN, COMMIT ...):
 * 0 or -1 */
int queue_cmd(struct queue *q, const char *sql, char *err, size_t errsz);

/* a parameterised statement (lens and fmts as PQexecParams', NULL for
 * text values) expecting success, a command or rows: 0, or -1 with err
 * ("database: " and the server's message) */
int queue_exec(struct queue *q, const char *sql, int n,
    const char *const *vals, const int *lens, const int *fmts, char *err,
    size_t errsz);

/* inside the open transaction on q, run sql (n parameters vals), which
 * takes an advisory lock, as QUEUE_LOCK_WAIT_SQL says: no
 * statement_timeout for the rest of the transaction, no lock_timeout
 * for the lock's wait.  0, or -1 with err */
int queue_lock_wait(struct queue *q, const char *sql, int n,
    const char *const *vals, char *err, size_t errsz);

/* binary result columns: NULL reads as 0 / "" */
int64_t queue_col_i64(const PGresult *res, int row, int col);
double queue_col_f64(const PGresult *res, int row, int col);
/* a text column as a new string (NULL only when out of memory) */
char *queue_col_str(const PGresult *res, int row, int col);

/* compression levels: a held post is stored once and read by people
 * (zlib); the training journal takes every trained post in bulk, where
 * zlib's level 6 cost as much as tokenizing (libdeflate's level 1, used
 * there, is 2.5 times as fast as zlib's level 1 and 3% smaller) */
#define QUEUE_ZLEVEL_HELD	6
#define QUEUE_ZLEVEL_JOURNAL	1

/* TCP keepalives every connection asks for unless its conninfo says
 * otherwise (queue_open_within): a server gone silent is given up on
 * about 30 s (15 + 3 x 5) after its last word */
#define QUEUE_KEEPALIVE_IDLE		"15"
#define QUEUE_KEEPALIVE_INTERVAL	"5"
#define QUEUE_KEEPALIVE_COUNT		"3"

/* decompress exactly size bytes (at most LG_MAX_POST_BYTES) into out
 * (grown with xrealloc; *cap_r its size): 0; QUEUE_ECORRUPT when the
 * stored bytes are damaged (size out of range, not zlib, not exactly
 * size bytes); -1 when out of memory */
#define QUEUE_ECORRUPT	(-2)
int queue_inflate(const unsigned char *in, size_t n, int64_t size,
    unsigned char **out, size_t *cap_r, char *err, size_t errsz);

#endif
