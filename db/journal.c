/*
 * journal.c - the training journal in PostgreSQL: storing events in
 * bulk, fetching them in id order
 *
 * See journal.h.  Posts are stored compressed (zlib) with their size and
 * fetched one row at a time, each only as far as tokenizing looks (a
 * slice of its stored bytes), and a fetch only as many rows as fit a
 * byte budget: a sync holds one post's head in memory however large the
 * posts or the batch.  A stored message
 * that does not decompress to its size is the row's own damage, handed
 * out as such (never a failure, so it cannot block the rows after it);
 * a quarantined row's message is not fetched.  Failures return -1 with a
 * message; nothing here exits or logs.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "db/journal.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "gate/util/clock.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"

/* the list's newest event id and its mark, and the day of the
 * transaction ($1: the list; binary results) */
#define LAST_AND_DAY_SQL \
	"SELECT coalesce(l.id, 0)::int8, " \
	"(floor(extract(epoch FROM now()) / 86400))::int8, " \
	"coalesce(l.mark, 0)::int8 FROM (SELECT 1) o LEFT JOIN LATERAL " \
	"(SELECT id, " JOURNAL_MARK_SQL("created_at") " AS mark FROM " \
	"train_journal WHERE list = $1 ORDER BY id DESC LIMIT 1) l ON true"

/* LAST_AND_DAY_SQL's answer res (cleared by the caller): 0, or -1 with
 * err */
static int
last_and_day_res(struct queue *q, PGresult *res, int64_t *last_r,
    int64_t *mark_r, uint32_t *day_r, char *err, size_t errsz)
{
	int64_t day;

	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		return -1;
	}
	*last_r = queue_col_i64(res, 0, 0);
	if (mark_r != NULL)
		*mark_r = queue_col_i64(res, 0, 2);
	day = queue_col_i64(res, 0, 1);
	if (day_r != NULL)
		*day_r = day > 0 && day < 0xffffffffLL ? (uint32_t)day : 0;
	return 0;
}

/* the list's newest event id and its mark, and the day of the
 * transaction, inside it (not while a COPY is open): 0, or -1 with err */
static int
last_and_day(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, uint32_t *day_r, char *err, size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;
	int r;

	res = PQexecParams(q->conn, LAST_AND_DAY_SQL, 1, NULL, vals, NULL,
	    NULL, 1);
	r = last_and_day_res(q, res, last_r, mark_r, day_r, err, errsz);
	PQclear(res);
	return r;
}

int
journal_begin(struct queue *q, const char *list, char *err, size_t errsz)
{
	return journal_begin_at(q, list, NULL, NULL, NULL, err, errsz);
}

/* the statements that begin a batch, after (BQ_SCHEMA) the schema's
 * version: one pipeline */
enum { BQ_SCHEMA, BQ_BEGIN, BQ_NOTIMEOUT, BQ_LOCK, BQ_WAITED, BQ_FRESH,
    BQ_LAST, BQ_N };

/*
 * Begin a batch (journal_begin_at), first reading the schema's version
 * into *version_r when version_r is not NULL (0 when there is none).
 * The statements go to the server together in a pipeline and come back
 * in one round trip (one each cost a connecting trainer three more
 * before its first post, on a backend that had to start and warm its
 * caches meanwhile); the first to fail ends the pipeline, and the
 * transaction is rolled back.  The list's journal lock is only tried
 * for: 1 when another run or a decision has it (the transaction rolled
 * back), 0, or -1 with err.
 */
static int
begin_pipeline(struct queue *q, const char *list, int *version_r,
    int64_t *last_r, int64_t *mark_r, uint32_t *day_r, char *err,
    size_t errsz)
{
	char lockkey[16], e[64];
	const char *vals[2] = { lockkey, list };
	PGresult *rs[BQ_N] = { NULL }, *x;
	const char *state;
	int k, sent = 1, synced = 0, prev_null = 0, r = -1;

	if (q->intx) {
		snprintf(err, errsz, "journal: a batch is already open");
		return -1;
	}
	snprintf(lockkey, sizeof(lockkey), "%d", QUEUE_LOCK_JOURNAL);
	if (PQenterPipelineMode(q->conn) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, NULL));
		return -1;
	}
	/* the batch's COPY is one statement that lasts the run (reading,
	 * tokenizing, gathering evidence): a statement_timeout set for
	 * the filter's hold path (the conninfo's options) must not cut it,
	 * so the transaction has none (SET LOCAL): QUEUE_LOCK_WAIT_SQL
	 * before the lock's statement, QUEUE_LOCK_WAITED_SQL after it */
	if ((version_r != NULL && PQsendQueryParams(q->conn, QUEUE_SCHEMA_SQL,
	    0, NULL, NULL, NULL, NULL, 0) != 1) ||
	    PQsendQueryParams(q->conn, "BEGIN", 0, NULL, NULL, NULL, NULL,
	    0) != 1 ||
	    PQsendQueryParams(q->conn, QUEUE_LOCK_WAIT_SQL, 0, NULL, NULL,
	    NULL, NULL, 0) != 1 ||
	    PQsendQueryParams(q->conn, "SELECT pg_try_advisory_xact_lock("
	    "$1::int4, hashtext($2))", 2, NULL, vals, NULL, NULL, 0) != 1 ||
	    PQsendQueryParams(q->conn, QUEUE_LOCK_WAITED_SQL, 0, NULL, NULL,
	    NULL, NULL, 0) != 1 ||
	    PQsendQueryParams(q->conn, QUEUE_FRESH_IDS_SQL, 0, NULL, NULL,
	    NULL, NULL, 0) != 1 ||
	    (last_r != NULL && PQsendQueryParams(q->conn, LAST_AND_DAY_SQL, 1,
	    NULL, vals + 1, NULL, NULL, 1) != 1)) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, NULL));
		sent = 0;
	}
	/* the end of the pipeline (after a failure too: what was sent
	 * must be read back before the connection leaves pipeline mode) */
	if (PQpipelineSync(q->conn) != 1) {
		if (sent)
			snprintf(err, errsz, "database: %s",
			    queue_pgerr(q, NULL));
		sent = 0;
	} else {
		/* each statement's results end with a NULL; the statements
		 * not sent are skipped */
		k = version_r != NULL ? BQ_SCHEMA : BQ_BEGIN;
		for (;;) {
			if ((x = PQgetResult(q->conn)) == NULL) {
				if (prev_null)
					break;	/* nothing more comes */
				prev_null = 1;
				if (++k == BQ_LAST && last_r == NULL)
					k++;
				continue;
			}
			prev_null = 0;
			if (PQresultStatus(x) == PGRES_PIPELINE_SYNC) {
				PQclear(x);
				synced = 1;
				break;
			}
			if (k < BQ_N && rs[k] == NULL)
				rs[k] = x;
			else
				PQclear(x);
		}
	}
	while (!synced && PQstatus(q->conn) == CONNECTION_OK &&
	    (x = PQgetResult(q->conn)) != NULL)
		PQclear(x);
	if (PQexitPipelineMode(q->conn) != 1 && sent) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, NULL));
		sent = 0;
	}
	if (!sent)
		goto out;
	if (version_r != NULL) {
		/* as queue_schema_version: a missing table is version 0 */
		*version_r = 0;
		x = rs[BQ_SCHEMA];
		if (x != NULL && PQresultStatus(x) == PGRES_TUPLES_OK &&
		    PQntuples(x) == 1)
			*version_r = (int)strtol(PQgetvalue(x, 0, 0), NULL,
			    10);
		else if (x != NULL && (state = PQresultErrorField(x,
		    PG_DIAG_SQLSTATE)) != NULL &&
		    strcmp(state, QUEUE_SQLSTATE_UNDEFINED_TABLE) == 0) {
			snprintf(err, errsz, "database: no schema");
			goto out;
		} else {
			snprintf(err, errsz, "database: %s", queue_pgerr(q, x));
			goto out;
		}
	}
	if (rs[BQ_BEGIN] == NULL ||
	    PQresultStatus(rs[BQ_BEGIN]) != PGRES_COMMAND_OK) {
		snprintf(err, errsz, "database: %s",
		    queue_pgerr(q, rs[BQ_BEGIN]));
		goto out;
	}
	if (rs[BQ_NOTIMEOUT] == NULL ||
	    PQresultStatus(rs[BQ_NOTIMEOUT]) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s",
		    queue_pgerr(q, rs[BQ_NOTIMEOUT]));
		goto out;
	}
	if (rs[BQ_LOCK] == NULL ||
	    PQresultStatus(rs[BQ_LOCK]) != PGRES_TUPLES_OK ||
	    PQntuples(rs[BQ_LOCK]) != 1) {
		snprintf(err, errsz, "database: %s",
		    queue_pgerr(q, rs[BQ_LOCK]));
		goto out;
	}
	if (*PQgetvalue(rs[BQ_LOCK], 0, 0) != 't') {
		r = 1;		/* busy: tried again */
		goto out;
	}
	if (rs[BQ_WAITED] == NULL ||
	    PQresultStatus(rs[BQ_WAITED]) != PGRES_COMMAND_OK) {
		snprintf(err, errsz, "database: %s",
		    queue_pgerr(q, rs[BQ_WAITED]));
		goto out;
	}
	if (rs[BQ_FRESH] == NULL ||
	    PQresultStatus(rs[BQ_FRESH]) != PGRES_COMMAND_OK) {
		snprintf(err, errsz, "database: %s",
		    queue_pgerr(q, rs[BQ_FRESH]));
		goto out;
	}
	if (last_r != NULL && last_and_day_res(q, rs[BQ_LAST], last_r, mark_r,
	    day_r, err, errsz) < 0)
		goto out;
	r = 0;
out:
	for (k = 0; k < BQ_N; k++)
		PQclear(rs[k]);
	if (r != 0) {
		if (PQstatus(q->conn) == CONNECTION_OK &&
		    PQtransactionStatus(q->conn) != PQTRANS_IDLE)
			queue_cmd(q, "ROLLBACK", e, sizeof(e));
		return r;
	}
	q->intx = 1;
	q->copy = QCOPY_NONE;
	return 0;
}

/* the longest pause between two tries for a list's journal lock: longer
 * than a decision's (DECISION_LOCK_POLL_MAX_MS, 100), so that a decision
 * (a moderator waits for it, a reply by mail has its watchdog) tries
 * more often than a run (a batch) and gets more of the turns: with three
 * loops of `train` on one list, a reject took 0.2 to 0.7 s, where it took
 * 0.3 to 4.3 s with 100 ms */
#define JOURNAL_LOCK_POLL_MAX_MS	250

/*
 * begin_pipeline, tried again with a growing pause while the list's
 * journal lock is had by another: 0, or -1 with err.  No run waits in
 * the lock's queue, where it would get the lock the moment its holder
 * let go: a decision tries for it in short transactions (holding no
 * server connection of a pooler while it waits), and while runs queued
 * behind one another it never found the lock free (it waited for all
 * of them, for good while they went on).  Runs and decisions now take
 * turns.  Nor does a waiting run hold a server connection of the pool.
 */
static int
begin_waiting(struct queue *q, const char *list, int *version_r,
    int64_t *last_r, int64_t *mark_r, uint32_t *day_r, char *err,
    size_t errsz)
{
	long ms = 2;
	int r;

	while ((r = begin_pipeline(q, list, version_r, last_r, mark_r,
	    day_r, err, errsz)) == 1) {
		clock_sleep_ms(ms);
		if ((ms *= 2) > JOURNAL_LOCK_POLL_MAX_MS)
			ms = JOURNAL_LOCK_POLL_MAX_MS;
	}
	return r;
}

int
journal_begin_at(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, uint32_t *day_r, char *err, size_t errsz)
{
	return begin_waiting(q, list, NULL, last_r, mark_r, day_r, err,
	    errsz);
}

int
journal_check_begin_at(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, uint32_t *day_r, char *err, size_t errsz)
{
	char why[1024];
	int v = 0;

	if (begin_waiting(q, list, &v, last_r, mark_r, day_r, why,
	    sizeof(why)) == 0 && v == queue_schema_latest)
		return 0;
	if (q->intx)
		journal_rollback(q);
	/* a schema this listgate cannot use: queue_check_schema says
	 * what is wrong with it (and, should a migration have finished
	 * meanwhile, the batch is begun again) */
	if (queue_check_schema(q, err, errsz) < 0)
		return -1;
	if (v == queue_schema_latest) {
		snprintf(err, errsz, "%s", why);	/* not the schema */
		return -1;
	}
	return journal_begin_at(q, list, last_r, mark_r, day_r, err, errsz);
}

/*
 * A batch's events go to the server in one COPY (binary format), begun
 * at its first event: the server parses, plans and checks the statement
 * once and inserts the rows in groups as they stream in, while this
 * side makes the next (pipelined INSERTs cost the server three times as
 * much per row, and training waited for it).  A row the server refuses
 * fails the COPY, seen at the latest when it ends: the batch is rolled
 * back whole.
 */
#define JOURNAL_COPY \
	"COPY train_journal (list, class, op, source, post_id, size, " \
	"message_z) FROM STDIN (FORMAT binary)"
#define JOURNAL_COLUMNS	7

/* the binary format's header: signature, flags, no extension */
static const unsigned char copy_header[19] = {
	'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0,
	0, 0, 0, 0, 0, 0, 0, 0
};

static unsigned char *
put_be(unsigned char *b, uint64_t v, int n)
{
	while (n-- > 0)
		*b++ = (unsigned char)(v >> (8 * n));
	return b;
}

/* a field: its length (-1: NULL) and bytes */
static unsigned char *
put_field(unsigned char *b, const void *p, size_t n)
{
	b = put_be(b, (uint32_t)n, 4);
	memcpy(b, p, n);
	return b + n;
}

/*
 * The COPY's rows go to libpq COPY_CHUNK bytes at a time.  libpq sends
 * what it holds once it passes 8 KiB, so a row (a post compressed to a
 * few KiB) was a send, and a wake-up of the server, every few posts;
 * the server reads the stream 64 KiB at a time.
 */
#define COPY_CHUNK	(64u * 1024u)

/* hand the rows gathered to libpq: 0, or -1 with err */
static int
copy_flush(struct queue *q, char *err, size_t errsz)
{
	size_t n = q->clen;

	q->clen = 0;
	if (n > 0 && PQputCopyData(q->conn, (const char *)q->cbuf, (int)n) !=
	    1) {
		snprintf(err, errsz, "database: cannot journal the post: %s",
		    queue_pgerr(q, NULL));
		return -1;
	}
	return 0;
}

/* add n bytes at p to the COPY's stream: 0, or -1 with err */
static int
copy_put(struct queue *q, const void *p, size_t n, char *err, size_t errsz)
{
	unsigned char *b;

	if (q->clen + n > q->ccap && q->clen > 0 &&
	    copy_flush(q, err, errsz) < 0)
		return -1;
	if (n >= COPY_CHUNK) {
		/* (a large post: as it is) */
		if (PQputCopyData(q->conn, (const char *)p, (int)n) != 1) {
			snprintf(err, errsz, "database: cannot journal the "
			    "post: %s", queue_pgerr(q, NULL));
			return -1;
		}
		return 0;
	}
	if (q->ccap < COPY_CHUNK) {
		if ((b = xrealloc(q->cbuf, COPY_CHUNK)) == NULL)
			return copy_flush(q, err, errsz) < 0 ||
			    PQputCopyData(q->conn, (const char *)p, (int)n) !=
			    1 ? -1 : 0;
		q->cbuf = b;
		q->ccap = COPY_CHUNK;
	}
	memcpy(q->cbuf + q->clen, p, n);
	q->clen += n;
	return 0;
}

/* start the batch's COPY: 0, or -1 with err */
static int
copy_begin(struct queue *q, char *err, size_t errsz)
{
	PGresult *res = PQexec(q->conn, JOURNAL_COPY);

	if (res == NULL || PQresultStatus(res) != PGRES_COPY_IN) {
		snprintf(err, errsz, "database: cannot journal the post: %s",
		    queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	q->copy = QCOPY_OPEN;
	q->clen = 0;
	return copy_put(q, copy_header, sizeof(copy_header), err, errsz);
}

/* send the COPY's end, with abort (a reason) or without: 0, or -1 with
 * err */
static int
copy_end_send(struct queue *q, const char *abort, char *err, size_t errsz)
{
	static const unsigned char trailer[2] = { 0xff, 0xff };
	char e[8];

	if (abort != NULL)
		q->clen = 0;	/* dropped with the rest */
	else if (copy_put(q, trailer, sizeof(trailer), e, sizeof(e)) < 0 ||
	    copy_flush(q, e, sizeof(e)) < 0) {
		snprintf(err, errsz, "%s", queue_pgerr(q, NULL));
		return -1;
	}
	if (PQputCopyEnd(q->conn, abort) != 1) {
		snprintf(err, errsz, "%s", queue_pgerr(q, NULL));
		return -1;
	}
	return 0;
}

/* end the COPY, with abort (a reason) or without (its end may have been
 * sent: journal_end_send): 0 when the server stored every row, else -1
 * with err */
static int
copy_end(struct queue *q, const char *abort, char *err, size_t errsz)
{
	PGresult *res;
	int r = 0;

	if (q->copy == QCOPY_NONE)
		return 0;
	if (q->copy == QCOPY_OPEN)
		r = copy_end_send(q, abort, err, errsz);
	else if (q->copy == QCOPY_FAILED) {
		snprintf(err, errsz, "%s", q->copy_err);
		r = -1;
	}
	q->copy = QCOPY_NONE;
	while ((res = PQgetResult(q->conn)) != NULL) {
		if (PQresultStatus(res) == PGRES_COPY_IN) {
			/* the end could not be sent (libpq out of memory):
			 * the connection stays in the COPY, unusable */
			PQclear(res);
			if (r == 0)
				snprintf(err, errsz, "cannot end the COPY");
			return -1;
		}
		if (r == 0 && PQresultStatus(res) != PGRES_COMMAND_OK) {
			snprintf(err, errsz, "%s", queue_pgerr(q, res));
			r = -1;
		}
		PQclear(res);
	}
	if (r == 0 && PQstatus(q->conn) != CONNECTION_OK) {
		snprintf(err, errsz, "%s", queue_pgerr(q, NULL));
		r = -1;
	}
	return r;
}

void
journal_end_send(struct queue *q)
{
	if (q->copy != QCOPY_OPEN)
		return;
	q->copy = copy_end_send(q, NULL, q->copy_err, sizeof(q->copy_err)) <
	    0 ? QCOPY_FAILED : QCOPY_SENT;
}

/*
 * Posts are compressed for the journal (zlib's format, read back with
 * zlib) by libdeflate: 2.5 times zlib's speed at its level 1 and a
 * little smaller, on whole buffers, which is what a post is;
 * compressing was half of training through the journal.  One
 * compressor per thread (the trainer compresses ahead in its workers).
 */
struct journal_z {
	struct libdeflate_compressor *c;
};

struct journal_z *
journal_z_new(void)
{
	struct journal_z *jz;

	if ((jz = xcalloc(1, sizeof(*jz))) == NULL)
		return NULL;
	if ((jz->c = libdeflate_alloc_compressor(QUEUE_ZLEVEL_JOURNAL)) ==
	    NULL) {
		xfree(jz);
		return NULL;
	}
	return jz;
}

void
journal_z_free(struct journal_z *jz)
{
	if (jz == NULL)
		return;
	libdeflate_free_compressor(jz->c);
	xfree(jz);
}

int
journal_z_compress(struct journal_z *jz, const unsigned char *raw,
    size_t len, unsigned char **buf, size_t *cap, size_t *zlen_r,
    char *err, size_t errsz)
{
	unsigned char *b;
	size_t bound, n;

	if (len > LG_MAX_POST_BYTES) {
		snprintf(err, errsz, "post of %zu bytes is larger than %u",
		    len, LG_MAX_POST_BYTES);
		return -1;
	}
	bound = libdeflate_zlib_compress_bound(jz->c, len);
	if (*cap < bound) {
		if ((b = xrealloc(*buf, bound)) == NULL) {
			snprintf(err, errsz, "out of memory compressing %zu "
			    "bytes", len);
			return -1;
		}
		*buf = b;
		*cap = bound;
	}
	if ((n = libdeflate_zlib_compress(jz->c, raw, len, *buf, *cap)) ==
	    0) {
		snprintf(err, errsz, "cannot compress the post");
		return -1;
	}
	*zlen_r = n;
	return 0;
}

#define JOURNAL_INSERT \
	"INSERT INTO train_journal (list, class, op, source, post_id, size, " \
	"message_z) VALUES ($1, $2, $3, $4, $5::int8, $6::int8, $7)"

int
journal_add(struct queue *q, const char *list, int spam, int dir,
    const char *source, int64_t post_id, const unsigned char *raw,
    size_t len, char *err, size_t errsz)
{
	size_t zlen;

	if (q->jz == NULL && (q->jz = journal_z_new()) == NULL) {
		snprintf(err, errsz, "out of memory compressing %zu bytes",
		    len);
		return -1;
	}
	if (journal_z_compress(q->jz, raw, len, &q->jzbuf, &q->jzcap, &zlen,
	    err, errsz) < 0)
		return -1;
	return journal_add_z(q, list, spam, dir, source, post_id, len,
	    q->jzbuf, zlen, err, errsz);
}

int
journal_add_z(struct queue *q, const char *list, int spam, int dir,
    const char *source, int64_t post_id, size_t len, const unsigned char *z,
    size_t zlen, char *err, size_t errsz)
{
	const char *vals[JOURNAL_COLUMNS];
	int lens[JOURNAL_COLUMNS] = { 0 }, fmts[JOURNAL_COLUMNS] = { 0 };
	char sizebuf[32], idbuf[32];
	unsigned char row[2 + 4 * 4 + 4 * 64 + 3 * 12 + 4], *b;
	const char *cls = spam ? "spam" : "ham";
	const char *op = dir < 0 ? "unlearn" : "learn";
	PGresult *res;
	int r = -1;

	if (zlen > 0x7fffffff || len > LG_MAX_POST_BYTES) {
		snprintf(err, errsz, "post too large for the journal");
		return -1;
	}
	/* an unlearning goes as a statement of its own, not in the
	 * batch's COPY: journal_learnt asks about the next post on the
	 * connection, which cannot be done while a COPY is open (a batch
	 * of a trainer is all learnings or all unlearnings) */
	if (q->intx && (dir > 0 || q->copy != QCOPY_NONE)) {
		/* in a batch: a row of the COPY, with the length of its
		 * compressed post, then the post */
		if (strlen(list) > 64 || strlen(source) > 64) {
			snprintf(err, errsz, "database: cannot journal the "
			    "post: list or source name too long");
			return -1;
		}
		if (q->copy == QCOPY_NONE && copy_begin(q, err, errsz) < 0)
			return -1;
		if (q->copy != QCOPY_OPEN) {
			snprintf(err, errsz, "database: cannot journal the "
			    "post: the batch's events were ended");
			return -1;
		}
		b = put_be(row, JOURNAL_COLUMNS, 2);
		b = put_field(b, list, strlen(list));
		b = put_field(b, cls, strlen(cls));
		b = put_field(b, op, strlen(op));
		b = put_field(b, source, strlen(source));
		if (post_id > 0) {
			b = put_be(b, 8, 4);
			b = put_be(b, (uint64_t)post_id, 8);
		} else
			b = put_be(b, 0xffffffffu, 4);
		b = put_be(b, 8, 4);
		b = put_be(b, (uint64_t)len, 8);
		b = put_be(b, (uint32_t)zlen, 4);
		if (copy_put(q, row, (size_t)(b - row), err, errsz) < 0 ||
		    copy_put(q, z, zlen, err, errsz) < 0 ||
		    (q->clen >= COPY_CHUNK && copy_flush(q, err, errsz) < 0))
			return -1;
		return 0;
	}
	snprintf(sizebuf, sizeof(sizebuf), "%zu", len);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)post_id);
	vals[0] = list;
	vals[1] = cls;
	vals[2] = op;
	vals[3] = source;
	vals[4] = post_id > 0 ? idbuf : NULL;
	vals[5] = sizebuf;
	vals[6] = (const char *)z;
	lens[6] = (int)zlen;
	fmts[6] = 1;
	res = PQexecParams(q->conn, JOURNAL_INSERT, JOURNAL_COLUMNS, NULL,
	    vals, lens, fmts, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		snprintf(err, errsz, "database: cannot journal the post: %s",
		    queue_pgerr(q, res));
	else
		r = 0;
	PQclear(res);
	return r;
}

/* the events of a class of a list with posts of a size, and whether
 * each learnt ($1 the list, $2 the class, $3 the size; binary results) */
#define LEARNT_SQL \
	"SELECT (op = 'learn')::int4, message_z FROM train_journal " \
	"WHERE list = $1 AND class = $2 AND size = $3::int8 AND " \
	"quarantined_at IS NULL ORDER BY id"

int
journal_learnt(struct queue *q, const char *list, int spam,
    const unsigned char *raw, size_t len, long *net_r, char *err,
    size_t errsz)
{
	char sizebuf[32];
	const char *vals[3] = { list, spam ? "spam" : "ham", sizebuf };
	unsigned char *buf = NULL;
	PGresult *res;
	uLongf n;
	int i, rows, learnt;

	*net_r = 0;
	if (q->copy != QCOPY_NONE) {
		snprintf(err, errsz, "database: cannot look for the post in "
		    "the journal while its batch is being sent");
		return -1;
	}
	if (len > LG_MAX_POST_BYTES)
		return 0;	/* never journaled */
	snprintf(sizebuf, sizeof(sizebuf), "%zu", len);
	res = PQexecParams(q->conn, LEARNT_SQL, 3, NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: cannot look for the post in "
		    "the journal: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	rows = PQntuples(res);
	/* (one byte more: a stored post longer than its size is damaged) */
	if (rows > 0 && (buf = xmalloc(len + 1)) == NULL) {
		PQclear(res);
		snprintf(err, errsz, "out of memory reading the journal");
		return -1;
	}
	for (i = 0; i < rows; i++) {
		learnt = (int)queue_col_i64(res, i, 0) != 0;
		n = (uLongf)len + 1;
		/* a post of the same size with other bytes, or a damaged
		 * one (sync skips it): not this post */
		if (uncompress(buf, &n, (const Bytef *)PQgetvalue(res, i, 1),
		    (uLong)PQgetlength(res, i, 1)) != Z_OK || n != len ||
		    memcmp(buf, raw, len) != 0)
			continue;
		*net_r += learnt ? 1 : -1;
	}
	xfree(buf);
	PQclear(res);
	return 0;
}

int
journal_commit(struct queue *q, char *err, size_t errsz)
{
	return journal_commit_last(q, NULL, NULL, NULL, err, errsz);
}

int
journal_commit_last(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, char *err, size_t errsz)
{
	if (journal_commit_send(q, list, last_r, mark_r, err, errsz) < 0)
		return -1;
	return journal_commit_wait(q, err, errsz);
}

int
journal_commit_send(struct queue *q, const char *list, int64_t *last_r,
    int64_t *mark_r, char *err, size_t errsz)
{
	char e[512];

	if (copy_end(q, NULL, e, sizeof(e)) < 0) {
		snprintf(err, errsz, "database: cannot journal the posts: %s",
		    e);
		if (PQstatus(q->conn) == CONNECTION_OK)
			queue_cmd(q, "ROLLBACK", e, sizeof(e));
		q->intx = 0;
		return -1;
	}
	q->intx = 0;
	if (last_r != NULL && last_and_day(q, list, last_r, mark_r, NULL, err,
	    errsz) < 0) {
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
		return -1;
	}
	if (PQsendQueryParams(q->conn, "COMMIT", 0, NULL, NULL, NULL, NULL,
	    0) != 1) {
		snprintf(err, errsz, "database: COMMIT: %s",
		    queue_pgerr(q, NULL));
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
		return -1;
	}
	q->committing = 1;
	return 0;
}

int
journal_commit_wait(struct queue *q, char *err, size_t errsz)
{
	PGresult *res;
	int r = -1, got = 0;

	if (!q->committing) {
		snprintf(err, errsz, "database: no COMMIT was sent");
		return -1;
	}
	q->committing = 0;
	while ((res = PQgetResult(q->conn)) != NULL) {
		/* (a COMMIT of a failed transaction answers ROLLBACK) */
		if (!got && PQresultStatus(res) == PGRES_COMMAND_OK &&
		    strcmp(PQcmdStatus(res), "COMMIT") == 0)
			r = 0;
		else if (!got && PQresultStatus(res) == PGRES_COMMAND_OK)
			snprintf(err, errsz, "database: the transaction had "
			    "failed and was rolled back");
		else if (!got)
			snprintf(err, errsz, "database: COMMIT: %s",
			    queue_pgerr(q, res));
		got = 1;
		PQclear(res);
	}
	if (!got)
		snprintf(err, errsz, "database: COMMIT: %s",
		    queue_pgerr(q, NULL));
	/* no answer, or the connection broke meanwhile: the server may
	 * have committed */
	if (r < 0 && (!got || PQstatus(q->conn) != CONNECTION_OK))
		return JOURNAL_EUNKNOWN;
	return r;
}

void
journal_rollback(struct queue *q)
{
	char e[512];

	copy_end(q, "the batch was rolled back", e, sizeof(e));
	if (q->committing)
		(void)journal_commit_wait(q, e, sizeof(e));
	if (q->intx && PQstatus(q->conn) == CONNECTION_OK)
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
	q->intx = 0;
}

int
journal_lists(struct queue *q, journal_name_fn fn, void *ctx, char *err,
    size_t errsz)
{
	PGresult *res;
	int i;

	res = PQexecParams(q->conn, "WITH RECURSIVE " QUEUE_LISTS_CTE("j",
	    "train_journal") " SELECT l FROM j WHERE l IS NOT NULL ORDER BY 1",
	    0, NULL, NULL, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	for (i = 0; i < PQntuples(res); i++)
		if (fn(PQgetvalue(res, i, 0), ctx) != 0)
			break;
	PQclear(res);
	return 0;
}

int
journal_last_id(struct queue *q, const char *list, int64_t *id_r,
    char *err, size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;

	res = PQexecParams(q->conn, "SELECT coalesce(max(id), 0) FROM "
	    "train_journal WHERE list = $1", 1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	*id_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

int
journal_window_start(struct queue *q, const char *list, unsigned max,
    int64_t *after_r, char *err, size_t errsz)
{
	char maxbuf[16];
	const char *vals[2] = { list, maxbuf };
	PGresult *res;

	snprintf(maxbuf, sizeof(maxbuf), "%u", max);
	res = PQexecParams(q->conn, "SELECT coalesce(min(id) - 1, 0) FROM "
	    "(SELECT id FROM train_journal WHERE list = $1 ORDER BY id DESC "
	    "LIMIT $2::int8) w", 2, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	*after_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

int
journal_net_counts(struct queue *q, const char *list, int64_t upto,
    int64_t *ham_r, int64_t *spam_r, char *err, size_t errsz)
{
	char upbuf[24];
	const char *vals[2] = { list, upbuf };
	PGresult *res;

	snprintf(upbuf, sizeof(upbuf), "%lld", (long long)upto);
	res = PQexecParams(q->conn, "SELECT coalesce(sum(CASE op WHEN 'learn' "
	    "THEN 1 ELSE -1 END) FILTER (WHERE class = 'ham'), 0)::int8, "
	    "coalesce(sum(CASE op WHEN 'learn' THEN 1 ELSE -1 END) FILTER "
	    "(WHERE class = 'spam'), 0)::int8 FROM train_journal WHERE list = "
	    "$1 AND id <= $2::int8 AND quarantined_at IS NULL", 2, NULL, vals,
	    NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	*ham_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*spam_r = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	PQclear(res);
	return 0;
}
/* compressed bytes one fetch asks for at most (beyond its first row):
 * the rows come one at a time, so this bounds what a batch transfers
 * (and drops, when it stops early), not what is held at once */
#define FETCH_BUDGET	(16u * 1024u * 1024u)
/* a post's bytes are inflated through this much at a time past what
 * tokenizing keeps, to check its length */
#define SCRATCH		65536u

struct journal_fetch {
	struct queue *q;
	char what[96];		/* "of list L", or "of the site feed" */
	size_t scan;		/* tokenizing looks at this many bytes */
	size_t zwant;		/* compressed bytes fetched per post */
	PGresult *res;		/* the current row (single-row mode) */
	int done;		/* every result has been read */
	int tx;			/* the fetch opened a transaction of its
				 * own (ended by journal_fetch_close) */
	unsigned char *buf;	/* the current post's head, decompressed */
	size_t cap;
	unsigned char *scratch;	/* SCRATCH bytes */
	z_stream zs;		/* the decompressor, reset for each post */
	int zinit;		/* zs is initialized */
};

/* read what is left of the query, one row at a time, and drop it */
static void
fetch_drain(struct journal_fetch *f)
{
	PGresult *res;

	PQclear(f->res);
	f->res = NULL;
	if (f->done)
		return;
	while ((res = PQgetResult(f->q->conn)) != NULL)
		PQclear(res);
	f->done = 1;
}

/*
 * The compressed bytes that always hold a post's first k bytes: zlib
 * codes a byte in at most 15 bits (a match of 3 or more in at most 48),
 * plus a block header of a few hundred bytes per 16 Ki symbols and the
 * stream's own 6.
 */
static size_t
head_zbytes(size_t k)
{
	return 2 * k + k / 32 + 4096;
}

/*
 * The fetch query of both kinds: the rows of inner (a subquery with the
 * columns id, jid, spam, dir, size, day, message_z, q, reason, zlen,
 * raw_sha256, own, at most $3 of them, parameters $1 to $3 its own),
 * each post's first $4 compressed bytes, only as many rows as fit the
 * byte budget $5 (the first always comes).
 */
#define FETCH_SQL(inner) \
	"SELECT id, spam, dir, size, day, " \
	"CASE WHEN q THEN NULL ELSE substring(message_z FROM 1 FOR " \
	"($4::int8)::int4) END, q, reason, zlen, raw_sha256, jid, mark, " \
	"own " \
	"FROM (SELECT *, sum(CASE WHEN q " \
	"THEN 0 ELSE least(zlen, $4::int8) END) OVER (ORDER BY id) AS run " \
	"FROM (" inner ") l) w " \
	"WHERE run - CASE WHEN q THEN 0 ELSE least(zlen, $4::int8) END " \
	"< $5::int8 ORDER BY id"
/* the columns of one journal row j the inner queries give; q: whether
 * the row is passed as quarantined before, unread */
#define FETCH_COLS(q) \
	"j.class = 'spam' AS spam, CASE j.op WHEN 'learn' " \
	"THEN 1 ELSE -1 END::int4 AS dir, j.size, " \
	"(floor(extract(epoch FROM j.created_at) / 86400))::int8 AS day, " \
	"j.message_z, " q " AS q, " \
	"coalesce(j.quarantine_reason, '') AS reason, " \
	"octet_length(j.message_z)::int8 AS zlen, " \
	JOURNAL_MARK_SQL("j.created_at") " AS mark, "

/* open a fetch of sql with key ($1), after ($2) and max ($3): 0, or -1 */
static int
fetch_open(struct queue *q, const char *what, const char *sql,
    const char *key, int64_t after, unsigned max, size_t scan,
    struct journal_fetch **f_r, char *err, size_t errsz)
{
	char posbuf[32], limbuf[16], zbuf[32], budbuf[32];
	const char *vals[5] = { key, posbuf, limbuf, zbuf, budbuf };
	struct journal_fetch *f;

	*f_r = NULL;
	if (scan > LG_MAX_POST_BYTES)
		scan = LG_MAX_POST_BYTES;
	if ((f = xcalloc(1, sizeof(*f))) == NULL ||
	    (f->scratch = xmalloc(SCRATCH)) == NULL) {
		if (f != NULL)
			xfree(f);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	f->q = q;
	snprintf(f->what, sizeof(f->what), "%s", what);
	f->scan = scan;
	f->zwant = head_zbytes(scan + 1);
	snprintf(posbuf, sizeof(posbuf), "%lld", (long long)after);
	snprintf(limbuf, sizeof(limbuf), "%u", max);
	snprintf(zbuf, sizeof(zbuf), "%zu", f->zwant);
	snprintf(budbuf, sizeof(budbuf), "%u", FETCH_BUDGET);
	/*
	 * The query is one statement that lasts while the caller applies
	 * its rows (tokenizing, learning: the server waits to send the
	 * rest): a statement_timeout set for the filter's hold path (the
	 * conninfo's options) must not cut it, so it runs in a transaction
	 * of its own without one (SET LOCAL, a statement of its own: a
	 * timeout already runs for the statement that sets it)
	 */
	if (PQtransactionStatus(q->conn) == PQTRANS_IDLE) {
		if (queue_cmd(q, "BEGIN", err, errsz) < 0) {
			f->done = 1;
			journal_fetch_close(f);
			return -1;
		}
		f->tx = 1;
		if (queue_cmd(q, "SET LOCAL statement_timeout = 0", err,
		    errsz) < 0) {
			f->done = 1;
			journal_fetch_close(f);
			return -1;
		}
	}
	/*
	 * One row at a time (a batch of large posts never sits in memory
	 * at once), each post only as far as tokenizing it looks (the
	 * server sends a slice of the stored bytes), and only as many rows
	 * as fit the byte budget (the first always comes).  The window runs
	 * over the next max rows only.  A quarantined event's message is
	 * not even sent.
	 */
	if (PQsendQueryParams(q->conn, sql, 5, NULL, vals, NULL, NULL, 1) !=
	    1 || PQsetSingleRowMode(q->conn) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, NULL));
		f->done = 1;
		fetch_drain(f);
		journal_fetch_close(f);
		return -1;
	}
	*f_r = f;
	return 0;
}

int
journal_fetch_open(struct queue *q, const char *list, int64_t after,
    unsigned max, size_t scan, struct journal_fetch **f_r, char *err,
    size_t errsz)
{
	char what[96];

	snprintf(what, sizeof(what), "of list %s", list);
	return fetch_open(q, what, FETCH_SQL("SELECT j.id, j.id AS jid, "
	    FETCH_COLS("j.quarantined_at IS NOT NULL") "j.raw_sha256, "
	    "true AS own FROM "
	    "train_journal j WHERE j.list = $1 "
	    "AND j.id > $2::int8 ORDER BY j.id LIMIT $3::int8"), list, after,
	    max, scan, f_r, err, errsz);
}

int
journal_site_fetch_open(struct queue *q, const char *site_list,
    int64_t after, unsigned max, size_t scan, struct journal_fetch **f_r,
    char *err, size_t errsz)
{
	/* a decision's digest only for the site list's own posts: the
	 * token file answers its own filter's retries.  A quarantined
	 * event is read all the same: the list's sync judged it with the
	 * list's max_scan_bytes, and may do so after the site store learnt
	 * the head it reads with the site list's (a post damaged past
	 * it), so the site store judges every event by its own reading,
	 * and its syncs and rebuilds agree */
	return fetch_open(q, "of the site feed", FETCH_SQL("SELECT f.seq AS "
	    "id, j.id AS jid, " FETCH_COLS("false") "CASE WHEN j.list = $1 "
	    "THEN j.raw_sha256 END AS raw_sha256, j.list = $1 AS own "
	    "FROM site_feed f JOIN "
	    "train_journal j ON j.id = f.event_id WHERE f.seq > $2::int8 "
	    "ORDER BY f.seq LIMIT $3::int8"), site_list, after, max, scan,
	    f_r, err, errsz);
}

/*
 * Inflate the first min(size, scan + 1) bytes of a post from in (n
 * bytes: all of its compressed bytes when whole, else their head) into
 * f->buf; when whole, also check that it inflates to exactly size
 * bytes.  0 with *len_r; QUEUE_ECORRUPT with why (the row is damaged);
 * -1 with why (out of memory).
 */
static int
inflate_head(struct journal_fetch *f, const unsigned char *in, size_t n,
    int whole, int64_t size, size_t *len_r, char *why, size_t whysz)
{
	z_stream *zs = &f->zs;
	size_t want, need, got;
	uint64_t total;
	unsigned char *p;
	int zr;

	if (size < 0 || (uint64_t)size > LG_MAX_POST_BYTES) {
		snprintf(why, whysz, "stored size %lld out of range",
		    (long long)size);
		return QUEUE_ECORRUPT;
	}
	want = (uint64_t)size < f->scan + 1 ? (size_t)size : f->scan + 1;
	/* the head of a small post is all of it, and fits the slice */
	if (!whole && want == (size_t)size) {
		snprintf(why, whysz, "stored message is corrupt (larger than "
		    "a post of %lld bytes compresses to)", (long long)size);
		return QUEUE_ECORRUPT;
	}
	need = want + 1;	/* room for a NUL, and never 0 */
	if (f->cap < need) {
		if ((p = xrealloc(f->buf, need)) == NULL) {
			snprintf(why, whysz, "out of memory (%zu bytes)", need);
			return -1;
		}
		f->buf = p;
		f->cap = need;
	}
	/* one decompressor for the fetch, reset for each post (a new one
	 * each time was 39 KiB allocated and freed a post) */
	if (!f->zinit) {
		memset(zs, 0, sizeof(*zs));
		if (inflateInit(zs) != Z_OK) {
			snprintf(why, whysz, "out of memory decompressing");
			return -1;
		}
		f->zinit = 1;
	} else if (inflateReset(zs) != Z_OK) {
		snprintf(why, whysz, "cannot reset the decompressor");
		return -1;
	}
	zs->next_in = (unsigned char *)(uintptr_t)in;
	zs->avail_in = (uInt)n;
	zs->next_out = f->buf;
	zs->avail_out = (uInt)want;
	zr = want > 0 ? inflate(zs, Z_SYNC_FLUSH) : Z_OK;
	got = want - zs->avail_out;
	total = got;
	/* the rest of a whole message only counts: its size is checked */
	while (whole && got == want && zr == Z_OK) {
		zs->next_out = f->scratch;
		zs->avail_out = SCRATCH;
		zr = inflate(zs, Z_SYNC_FLUSH);
		total += SCRATCH - zs->avail_out;
		if (zs->avail_out == SCRATCH && zr == Z_OK)
			zr = Z_BUF_ERROR;	/* no progress: input ended */
	}
	if (zr == Z_MEM_ERROR) {
		snprintf(why, whysz, "out of memory decompressing");
		return -1;
	}
	if (got != want || (whole && (zr != Z_STREAM_END ||
	    total != (uint64_t)size)) || (zr != Z_OK && zr != Z_STREAM_END &&
	    zr != Z_BUF_ERROR)) {
		snprintf(why, whysz, "stored message is corrupt (does not "
		    "decompress to %lld bytes)", (long long)size);
		return QUEUE_ECORRUPT;
	}
	f->buf[want] = 0;
	*len_r = want;
	return 0;
}

int
journal_fetch_next(struct journal_fetch *f, struct journal_event *ev,
    char *err, size_t errsz)
{
	PGresult *res;
	int64_t size, day, zlen;
	size_t len;
	int r;

	PQclear(f->res);
	f->res = NULL;
	if (f->done)
		return 0;
	if ((res = PQgetResult(f->q->conn)) == NULL) {
		f->done = 1;
		return 0;
	}
	f->res = res;
	if (PQresultStatus(res) == PGRES_TUPLES_OK) {
		/* the end of the rows: the query's last result */
		fetch_drain(f);
		return 0;
	}
	if (PQresultStatus(res) != PGRES_SINGLE_TUPLE) {
		snprintf(err, errsz, "database: %s", queue_pgerr(f->q, res));
		fetch_drain(f);
		return -1;
	}
	ev->id = queue_col_i64(res, 0, 0);
	ev->spam = PQgetlength(res, 0, 1) == 1 && *PQgetvalue(res, 0, 1) != 0;
	ev->dir = queue_col_i64(res, 0, 2) < 0 ? -1 : 1;
	size = queue_col_i64(res, 0, 3);
	day = queue_col_i64(res, 0, 4);
	zlen = queue_col_i64(res, 0, 8);
	ev->day = day > 0 && day < 0xffffffffLL ? (uint32_t)day : 0;
	ev->event_id = queue_col_i64(res, 0, 10);
	ev->mark = queue_col_i64(res, 0, 11);
	ev->own = PQgetlength(res, 0, 12) == 1 && *PQgetvalue(res, 0, 12) != 0;
	ev->size = size;
	ev->raw = NULL;
	ev->len = 0;
	ev->why[0] = 0;
	/* a moderator's decision carries the post's digest */
	ev->has_sha = !PQgetisnull(res, 0, 9) &&
	    PQgetlength(res, 0, 9) == JOURNAL_SHA256_LEN;
	if (ev->has_sha)
		memcpy(ev->sha, PQgetvalue(res, 0, 9), JOURNAL_SHA256_LEN);
	if (PQgetlength(res, 0, 6) == 1 && *PQgetvalue(res, 0, 6) != 0) {
		ev->state = JOURNAL_QUARANTINED;
		snprintf(ev->why, sizeof(ev->why), "%.*s",
		    PQgetlength(res, 0, 7), PQgetvalue(res, 0, 7));
		return 1;
	}
	r = inflate_head(f, (const unsigned char *)PQgetvalue(res, 0, 5),
	    (size_t)PQgetlength(res, 0, 5),
	    zlen == (int64_t)PQgetlength(res, 0, 5), size, &len, ev->why,
	    sizeof(ev->why));
	if (r == QUEUE_ECORRUPT) {
		/* the row's own damage: the caller quarantines it */
		ev->state = JOURNAL_DAMAGED;
		return 1;
	}
	if (r < 0) {
		snprintf(err, errsz, "journal event %lld %s: %s",
		    (long long)ev->event_id, f->what, ev->why);
		return -1;
	}
	ev->state = JOURNAL_APPLY;
	ev->raw = f->buf;
	ev->len = len;
	return 1;
}

void
journal_fetch_close(struct journal_fetch *f)
{
	char e[8];

	if (f == NULL)
		return;
	fetch_drain(f);
	/* read only: a COMMIT of a failed one rolls it back */
	if (f->tx)
		queue_cmd(f->q, "COMMIT", e, sizeof(e));
	if (f->zinit)
		inflateEnd(&f->zs);
	xfree(f->buf);
	xfree(f->scratch);
	xfree(f);
}

int
journal_quarantine(struct queue *q, const char *list, int64_t id,
    const char *why, char *err, size_t errsz)
{
	char idbuf[32], whybuf[1001];
	const char *vals[3] = { idbuf, list, whybuf };
	PGresult *res;
	int r = 0;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	snprintf(whybuf, sizeof(whybuf), "%s", why);
	res = PQexecParams(q->conn, "UPDATE train_journal SET quarantined_at "
	    "= now(), quarantine_reason = $3 WHERE id = $1::int8 AND list = "
	    "$2 AND quarantined_at IS NULL", 3, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
		snprintf(err, errsz, "database: cannot quarantine journal "
		    "event %lld: %s", (long long)id, queue_pgerr(q, res));
		r = -1;
	}
	PQclear(res);
	return r;
}

/* --- the site store's feed --------------------------------------------- */

/* one int8 of a one-row text result: 0, or -1 with err */
static int
one_i64(struct queue *q, const char *sql, int n, const char *const *vals,
    int64_t *v_r, char *err, size_t errsz)
{
	PGresult *res;

	res = PQexecParams(q->conn, sql, n, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	*v_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* append "{a,b,...}" of n values to an array literal in *s (xmalloc'd):
 * 0, or -1 when out of memory */
static int
int8_array(const int64_t *v, size_t n, char **s_r)
{
	size_t i, len = 0, cap = n * 21 + 3;
	char *s;

	if ((s = xmalloc(cap)) == NULL)
		return -1;
	s[len++] = '{';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%lld",
		    i ? "," : "", (long long)v[i]);
	s[len++] = '}';
	s[len] = '\0';
	*s_r = s;
	return 0;
}

int
journal_site_feed(struct queue *q, unsigned max, long *n_r,
    long *nread_r, char *err, size_t errsz)
{
	char lockkey[16], limbuf[16], nbuf[32], *ids_s = NULL, *seqs_s = NULL;
	const char *vals[2];
	int64_t *ids = NULL, *seqs = NULL;
	PGresult *res = NULL;
	size_t i, n;
	char e[8], why[512];
	long nfed;
	int rc = -1;

	*n_r = *nread_r = 0;
	if (q->intx) {
		snprintf(err, errsz, "site feed: a journal batch is open");
		return -1;
	}
	/* the transaction waits for another feeder and reads the journal:
	 * a statement_timeout set for the filter's hold path (the
	 * conninfo's options) must not cut it, so it has none (SET LOCAL,
	 * a statement of its own: a timeout already runs for the statement
	 * that sets it), nor a lock_timeout the wait (queue_lock_wait) */
	if (queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	/* nor JIT: the planner's guess of the rows the lists may have puts
	 * the query past jit_above_cost, and compiling it took ten times
	 * as long as running it */
	if (queue_cmd(q, "SET LOCAL statement_timeout = 0", err, errsz) < 0 ||
	    queue_cmd(q, "SET LOCAL jit = off", err, errsz) < 0) {
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
		return -1;
	}
	/* one feeder at a time: each reads what the last one committed */
	snprintf(lockkey, sizeof(lockkey), "%d", QUEUE_LOCK_SITE);
	vals[0] = lockkey;
	if (queue_lock_wait(q, "SELECT pg_advisory_xact_lock($1::int4, 0)",
	    1, vals, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "database: cannot feed the site store: "
		    "%s", strncmp(why, "database: ", 10) == 0 ? why + 10 : why);
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
		return -1;
	}
	/* feed numbers after every one fed before (QUEUE_FRESH_IDS_SQL) */
	res = PQexecParams(q->conn, QUEUE_FRESH_IDS_SQL, 0, NULL, NULL, NULL,
	    NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		goto dberr;
	PQclear(res);
	/* each list's events after the last fed: visible in id order per
	 * list (the journal lock), so this takes a prefix of each.  The
	 * first max of them all are among each list's first max: the lists
	 * are found by skipping through the journal's (list, id) index,
	 * and each list's events after its last fed read through it, so a
	 * feed reads what is new and not the whole journal every time */
	snprintf(limbuf, sizeof(limbuf), "%u", max);
	vals[0] = limbuf;
	res = PQexecParams(q->conn, "WITH RECURSIVE ls (list) AS ("
	    "(SELECT list FROM train_journal ORDER BY list LIMIT 1) "
	    "UNION ALL SELECT (SELECT j.list FROM train_journal j "
	    "WHERE j.list > ls.list ORDER BY j.list LIMIT 1) FROM ls "
	    "WHERE ls.list IS NOT NULL) "
	    "SELECT e.id FROM ls LEFT JOIN site_fed p ON p.list = ls.list "
	    "CROSS JOIN LATERAL (SELECT j.id FROM train_journal j "
	    "WHERE j.list = ls.list AND j.id > coalesce(p.fed_to, 0) "
	    "ORDER BY j.id LIMIT $1::int8) e "
	    "WHERE ls.list IS NOT NULL ORDER BY e.id LIMIT $1::int8",
	    1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		goto dberr;
	n = (size_t)PQntuples(res);
	if (n == 0) {
		PQclear(res);
		return queue_cmd(q, "COMMIT", err, errsz);
	}
	if ((ids = xcalloc(n, sizeof(*ids))) == NULL ||
	    (seqs = xcalloc(n, sizeof(*seqs))) == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		ids[i] = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
	PQclear(res);
	/* n numbers from the journal's sequence, paired in order with the
	 * ids (sorted here: no reliance on the order rows come back in) */
	snprintf(nbuf, sizeof(nbuf), "%zu", n);
	vals[0] = nbuf;
	res = PQexecParams(q->conn, "SELECT nextval(pg_get_serial_sequence("
	    "'train_journal', 'id')) FROM generate_series(1, $1::int4)", 1,
	    NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    (size_t)PQntuples(res) != n)
		goto dberr;
	for (i = 0; i < n; i++)
		seqs[i] = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
	PQclear(res);
	res = NULL;
	qsort(seqs, n, sizeof(*seqs), cmp_i64);
	if (int8_array(seqs, n, &seqs_s) < 0 || int8_array(ids, n, &ids_s) < 0)
		goto oom;
	vals[0] = seqs_s;
	vals[1] = ids_s;
	/* an event fed already is passed over, never fed twice: one of
	 * another list's (its list renamed in SQL, an UPDATE of
	 * train_journal.list) comes after its new list's last fed, and
	 * stopped the feed for good on site_feed's unique event_id.  The
	 * list's last fed moves past it all the same (below) */
	res = PQexecParams(q->conn, "WITH f AS (INSERT INTO site_feed (seq, "
	    "event_id) SELECT * FROM unnest($1::int8[], $2::int8[]) "
	    "ON CONFLICT (event_id) DO NOTHING RETURNING 1) "
	    "SELECT count(*) FROM f", 2, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1)
		goto dberr;
	nfed = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	vals[0] = ids_s;
	res = PQexecParams(q->conn, "INSERT INTO site_fed (list, fed_to) "
	    "SELECT list, max(id) FROM train_journal WHERE id = ANY($1::int8[]) "
	    "GROUP BY list ON CONFLICT (list) DO UPDATE SET fed_to = "
	    "greatest(site_fed.fed_to, EXCLUDED.fed_to)", 1, NULL, vals, NULL,
	    NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		goto dberr;
	PQclear(res);
	res = NULL;
	if (queue_cmd(q, "COMMIT", err, errsz) < 0)
		goto out;
	*n_r = nfed;
	*nread_r = (long)n;
	rc = 0;
	goto out;
oom:
	snprintf(err, errsz, "out of memory");
	PQclear(res);
	res = NULL;
	queue_cmd(q, "ROLLBACK", e, sizeof(e));
	goto out;
dberr:
	snprintf(err, errsz, "database: cannot feed the site store: %s",
	    queue_pgerr(q, res));
	PQclear(res);
	res = NULL;
	queue_cmd(q, "ROLLBACK", e, sizeof(e));
out:
	xfree(ids);
	xfree(seqs);
	xfree(ids_s);
	xfree(seqs_s);
	return rc;
}

int
journal_max_id(struct queue *q, int64_t *id_r, char *err, size_t errsz)
{
	return one_i64(q, "SELECT coalesce(max(id), 0) FROM train_journal",
	    0, NULL, id_r, err, errsz);
}

int
journal_age_after(struct queue *q, int64_t after, int64_t *secs_r,
    char *err, size_t errsz)
{
	char abuf[32];
	const char *vals[1] = { abuf };

	snprintf(abuf, sizeof(abuf), "%lld", (long long)after);
	return one_i64(q, "SELECT coalesce(floor(extract(epoch FROM now() - "
	    "min(created_at))), 0)::int8 FROM train_journal WHERE id > "
	    "$1::int8", 1, vals, secs_r, err, errsz);
}

int
journal_site_last(struct queue *q, int64_t *seq_r, char *err, size_t errsz)
{
	return one_i64(q, "SELECT coalesce(max(seq), 0) FROM site_feed", 0,
	    NULL, seq_r, err, errsz);
}

/* *is_r: whether sql (a count with pos as $1) counts a row: 0, or -1 */
static int
has_row(struct queue *q, const char *sql, int64_t pos, int *is_r, char *err,
    size_t errsz)
{
	char posbuf[32];
	const char *vals[1] = { posbuf };
	int64_t v;

	snprintf(posbuf, sizeof(posbuf), "%lld", (long long)pos);
	if (one_i64(q, sql, 1, vals, &v, err, errsz) < 0)
		return -1;
	*is_r = v > 0;
	return 0;
}

int
journal_event_mark(struct queue *q, int site, int64_t id, int64_t *mark_r,
    char *list_r, size_t listsz, int64_t *jid_r, char *err, size_t errsz)
{
	char idbuf[32];
	const char *vals[1] = { idbuf };
	PGresult *res;
	size_t len;

	*mark_r = 0;
	if (jid_r != NULL)
		*jid_r = 0;
	if (list_r != NULL && listsz > 0)
		list_r[0] = '\0';
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	res = PQexecParams(q->conn, site ? "SELECT " JOURNAL_MARK_SQL(
	    "j.created_at") ", j.list, j.id FROM site_feed f JOIN "
	    "train_journal j ON j.id = f.event_id WHERE f.seq = $1::int8" :
	    "SELECT " JOURNAL_MARK_SQL("created_at") ", list, id FROM "
	    "train_journal WHERE id = $1::int8", 1, NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) > 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	if (PQntuples(res) == 1) {
		*mark_r = queue_col_i64(res, 0, 0);
		if (jid_r != NULL)
			*jid_r = queue_col_i64(res, 0, 2);
		/* a list name (the table's CHECK: at most 64 bytes of
		 * [a-z0-9._-]) */
		len = (size_t)PQgetlength(res, 0, 1);
		if (list_r != NULL && listsz > 0) {
			if (len >= listsz)
				len = listsz - 1;
			memcpy(list_r, PQgetvalue(res, 0, 1), len);
			list_r[len] = '\0';
		}
	}
	PQclear(res);
	return 0;
}

int
journal_site_is_feed(struct queue *q, int64_t pos, int *is_r, char *err,
    size_t errsz)
{
	return has_row(q, "SELECT count(*) FROM site_feed WHERE seq = $1::int8",
	    pos, is_r, err, errsz);
}

int
journal_is_event(struct queue *q, int64_t pos, int *is_r, char *err,
    size_t errsz)
{
	return has_row(q, "SELECT count(*) FROM train_journal WHERE id = "
	    "$1::int8", pos, is_r, err, errsz);
}
