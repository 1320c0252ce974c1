/*
 * journal.c - the training journal in PostgreSQL and its application to
 * a list's token file
 *
 * The journal is the source of truth for training; a token file is a
 * view of it that records how far it got (its journal position) in the
 * same Kyoto Cabinet transaction as the counts, so applying is exactly
 * once whatever is interrupted.  Writers of one list's events hold a
 * per-list advisory lock until they commit, so ids of one list become
 * visible in id order and a reader never skips an id that commits late.
 * Messages are hostile and go through the bounded tokenizer.  Failures
 * return -1 with a message; nothing here exits or logs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/util/clock.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "gate/tok.h"
#include "db/tokdb.h"
#include "gate/util/xalloc.h"

/* events fetched per token-file transaction, and the longest one may
 * hold the file's lock */
#define APPLY_BATCH	1024
#define APPLY_SECONDS	0.25
/* pause between batches, longer than a waiting reader's lock poll, so
 * filters waiting for the file get in */
#define APPLY_PAUSE_MS	(2 * TOKDB_POLL_MAX_MS + 2)
/* pipelined INSERTs in flight at most (their results are tiny, so the
 * socket buffers never fill and block both sides) */
#define PIPE_MAX	128

int
journal_begin(struct queue *q, const char *list, char *err, size_t errsz)
{
	char lockkey[16];
	const char *vals[2] = { lockkey, list };
	PGresult *res;

	if (q->intx) {
		snprintf(err, errsz, "journal: a batch is already open");
		return -1;
	}
	if (queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	snprintf(lockkey, sizeof(lockkey), "%d", QUEUE_LOCK_JOURNAL);
	res = PQexecParams(q->conn, "SELECT pg_advisory_xact_lock($1::int4, "
	    "hashtext($2))", 2, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		queue_cmd(q, "ROLLBACK", lockkey, sizeof(lockkey));
		return -1;
	}
	PQclear(res);
	q->intx = 1;
	q->npending = 0;
	q->perr[0] = 0;
	/* bulk INSERTs without a round trip each */
	q->pipe = PQenterPipelineMode(q->conn) == 1;
	return 0;
}

/*
 * Read back the results of the pipelined INSERTs; with sync, end the
 * pipeline (PQpipelineSync) and leave pipeline mode.  The first error is
 * kept in q->perr.  0 when every one succeeded, else -1.
 */
static int
pipe_drain(struct queue *q, int sync)
{
	PGresult *res;
	ExecStatusType st;
	int ok = 1;

	if (!q->pipe)
		return 0;
	if ((sync ? PQpipelineSync(q->conn) : PQsendFlushRequest(q->conn)) !=
	    1 || PQflush(q->conn) != 0) {
		snprintf(q->perr, sizeof(q->perr), "%s", queue_pgerr(q, NULL));
		q->pipe = 0;	/* the connection is unusable now */
		return -1;
	}
	while (q->npending > 0 || sync) {
		if ((res = PQgetResult(q->conn)) == NULL) {
			if (PQstatus(q->conn) != CONNECTION_OK) {
				snprintf(q->perr, sizeof(q->perr), "%s",
				    queue_pgerr(q, NULL));
				q->pipe = 0;
				return -1;
			}
			continue;	/* the end of one query's results */
		}
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (st != PGRES_COMMAND_OK) {
			if (q->perr[0] == 0)
				snprintf(q->perr, sizeof(q->perr), "%s",
				    queue_pgerr(q, res));
			ok = 0;
		}
		PQclear(res);
		if (q->npending > 0)
			q->npending--;
	}
	if (sync) {
		PQexitPipelineMode(q->conn);
		q->pipe = 0;
	}
	return ok && q->perr[0] == 0 ? 0 : -1;
}

#define JOURNAL_INSERT \
	"INSERT INTO train_journal (list, class, op, source, post_id, size, " \
	"message_z) VALUES ($1, $2, $3, $4, $5::int8, $6::int8, $7)"

int
journal_add(struct queue *q, const char *list, int spam, int dir,
    const char *source, int64_t post_id, const unsigned char *raw,
    size_t len, char *err, size_t errsz)
{
	const char *vals[7];
	int lens[7] = { 0 }, fmts[7] = { 0 };
	char sizebuf[32], idbuf[32];
	unsigned char *z;
	size_t zlen;
	PGresult *res;
	int r = -1;

	if (queue_deflate(raw, len, &z, &zlen, err, errsz) < 0)
		return -1;
	if (zlen > 0x7fffffff) {
		snprintf(err, errsz, "post too large for the journal");
		xfree(z);
		return -1;
	}
	snprintf(sizebuf, sizeof(sizebuf), "%zu", len);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)post_id);
	vals[0] = list;
	vals[1] = spam ? "spam" : "ham";
	vals[2] = dir < 0 ? "unlearn" : "learn";
	vals[3] = source;
	vals[4] = post_id > 0 ? idbuf : NULL;
	vals[5] = sizebuf;
	vals[6] = (const char *)z;
	lens[6] = (int)zlen;
	fmts[6] = 1;
	if (q->pipe) {
		if (PQsendQueryParams(q->conn, JOURNAL_INSERT, 7, NULL, vals,
		    lens, fmts, 0) != 1) {
			snprintf(err, errsz, "database: cannot journal the "
			    "post: %s", queue_pgerr(q, NULL));
			xfree(z);
			return -1;
		}
		xfree(z);
		if (++q->npending >= PIPE_MAX && pipe_drain(q, 0) < 0) {
			snprintf(err, errsz, "database: cannot journal the "
			    "post: %s", q->perr);
			return -1;
		}
		return 0;
	}
	res = PQexecParams(q->conn, JOURNAL_INSERT, 7, NULL, vals, lens, fmts,
	    0);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		snprintf(err, errsz, "database: cannot journal the post: %s",
		    queue_pgerr(q, res));
	else
		r = 0;
	PQclear(res);
	xfree(z);
	return r;
}

int
journal_commit(struct queue *q, char *err, size_t errsz)
{
	char e[8];

	if (pipe_drain(q, 1) < 0) {
		snprintf(err, errsz, "database: cannot journal the posts: %s",
		    q->perr);
		if (PQstatus(q->conn) == CONNECTION_OK)
			queue_cmd(q, "ROLLBACK", e, sizeof(e));
		q->intx = 0;
		return -1;
	}
	q->intx = 0;
	return queue_cmd(q, "COMMIT", err, errsz);
}

void
journal_rollback(struct queue *q)
{
	char e[8];

	pipe_drain(q, 1);
	if (q->intx && PQstatus(q->conn) == CONNECTION_OK)
		queue_cmd(q, "ROLLBACK", e, sizeof(e));
	q->intx = 0;
}

int
queue_journal_lists(struct queue *q, queue_name_fn fn, void *ctx,
    char *err, size_t errsz)
{
	PGresult *res;
	int i;

	res = PQexecParams(q->conn, "SELECT DISTINCT list FROM train_journal "
	    "ORDER BY list", 0, NULL, NULL, NULL, NULL, 0);
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

/* 1 (with err) when the token file claims events the journal does not
 * have: a token file from another or a restored database */
static int
ahead(struct queue *q, const char *list, int64_t pos, char *err,
    size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;
	long long max;
	int r = 0;

	res = PQexecParams(q->conn, "SELECT coalesce(max(id), 0) FROM "
	    "train_journal WHERE list = $1", 1, NULL, vals, NULL, NULL, 0);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK) {
		max = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		if (max < pos) {
			snprintf(err, errsz, "the token file is at journal "
			    "position %lld but the journal of list %s ends at "
			    "%lld: it was built from another (or a restored) "
			    "database; run `listgate rebuild --list %s`",
			    (long long)pos, list, max, list);
			r = 1;
		}
	}
	PQclear(res);
	return r;
}

/*
 * One batch: open the token file for writing, read its position, fetch
 * the next events after it and apply them with the new position in one
 * transaction.  Returns the number of events applied (0: up to date), or
 * -1 with err.
 */
static long
apply_batch(struct queue *q, const char *list, const char *path,
    int create, unsigned wait_ms, const struct tok_opts *to,
    struct toklist *tl, unsigned char **buf, size_t *cap,
    struct journal_stats *st, char *err, size_t errsz)
{
	char posbuf[32], limbuf[16];
	const char *vals[3] = { list, posbuf, limbuf };
	struct tokdb *db;
	PGresult *res = NULL;
	int64_t pos;
	long n = -1;
	int i, rows;
	double start = clock_now_s();

	if (tokdb_open(path, TOKDB_WRITE | (create ? TOKDB_CREATE : 0),
	    wait_ms, &db, err, errsz) != 0)
		return -1;
	if (tokdb_get_pos(db, &pos) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		goto out;
	}
	st->pos = pos;
	snprintf(posbuf, sizeof(posbuf), "%lld", (long long)pos);
	snprintf(limbuf, sizeof(limbuf), "%d", APPLY_BATCH);
	res = PQexecParams(q->conn, "SELECT id, class = 'spam', "
	    "CASE op WHEN 'learn' THEN 1 ELSE -1 END::int4, size, "
	    "(floor(extract(epoch FROM created_at) / 86400))::int8, message_z "
	    "FROM train_journal WHERE list = $1 AND id > $2::int8 "
	    "ORDER BY id LIMIT $3::int8", 3, NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		goto out;
	}
	rows = PQntuples(res);
	if (rows == 0) {
		n = 0;
		if (pos > 0 && st->nbatches == 0 && ahead(q, list, pos, err,
		    errsz))
			n = -1;
		goto out;
	}
	if (tokdb_begin(db) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		goto out;
	}
	for (i = 0; i < rows; i++) {
		int64_t id = queue_col_i64(res, i, 0);
		int spam = PQgetlength(res, i, 1) == 1 &&
		    *PQgetvalue(res, i, 1) != 0;
		int dir = (int)queue_col_i64(res, i, 2);
		int64_t size = queue_col_i64(res, i, 3);
		int64_t day = queue_col_i64(res, i, 4);

		if (queue_inflate((const unsigned char *)PQgetvalue(res, i, 5),
		    (size_t)PQgetlength(res, i, 5), size, buf, cap, err,
		    errsz) < 0) {
			/* say which event, keep the reason */
			char why[256];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errsz, "journal event %lld of list %s: %s",
			    (long long)id, list, why);
			tokdb_abort(db);
			goto out;
		}
		if (tok_post(*buf, (size_t)size, to, tl) < 0) {
			snprintf(err, errsz, "out of memory while tokenizing");
			tokdb_abort(db);
			goto out;
		}
		if (tokdb_learn(db, tl, spam, dir < 0 ? -1 : 1,
		    day > 0 && day < 0xffffffffLL ? (uint32_t)day :
		    tokdb_today()) < 0) {
			snprintf(err, errsz, "%s", tokdb_errmsg(db));
			tokdb_abort(db);
			goto out;
		}
		pos = id;
		/* the rest waits for the next batch: readers get in */
		if (clock_now_s() - start >= APPLY_SECONDS) {
			rows = i + 1;
			break;
		}
	}
	if (tokdb_set_pos(db, pos) < 0 || tokdb_commit(db) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		tokdb_abort(db);
		goto out;
	}
	st->pos = pos;
	st->nevents += (unsigned long)rows;
	st->nbatches++;
	n = rows;
out:
	PQclear(res);
	tokdb_close(db);
	return n;
}

int
journal_apply(struct queue *q, const char *list, const char *path,
    int create, unsigned wait_ms, const struct tok_opts *to,
    struct journal_stats *st, char *err, size_t errsz)
{
	struct toklist *tl;
	unsigned char *buf = NULL;
	size_t cap = 0;
	long n;

	memset(st, 0, sizeof(*st));
	if ((tl = toklist_new(to->max_tokens)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	while ((n = apply_batch(q, list, path, create, wait_ms, to, tl, &buf,
	    &cap, st, err, errsz)) > 0) {
		struct timespec ts = { 0, APPLY_PAUSE_MS * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	toklist_free(tl);
	xfree(buf);
	return n < 0 ? -1 : 0;
}
