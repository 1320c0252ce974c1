/*
 * journal.c - the training journal in PostgreSQL: storing events in
 * bulk, fetching them in id order
 *
 * See journal.h.  Posts are stored compressed (zlib) with their size and
 * fetched one row at a time, so a sync never holds more than one
 * compressed post in memory however large the batch.  Failures return
 * -1 with a message; nothing here exits or logs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/journal.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "gate/util/xalloc.h"

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
journal_lists(struct queue *q, journal_name_fn fn, void *ctx, char *err,
    size_t errsz)
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
journal_net_counts(struct queue *q, const char *list, int64_t *ham_r,
    int64_t *spam_r, char *err, size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;

	res = PQexecParams(q->conn, "SELECT coalesce(sum(CASE op WHEN 'learn' "
	    "THEN 1 ELSE -1 END) FILTER (WHERE class = 'ham'), 0)::int8, "
	    "coalesce(sum(CASE op WHEN 'learn' THEN 1 ELSE -1 END) FILTER "
	    "(WHERE class = 'spam'), 0)::int8 FROM train_journal WHERE list = "
	    "$1", 1, NULL, vals, NULL, NULL, 0);
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

struct journal_fetch {
	struct queue *q;
	const char *list;
	PGresult *res;		/* the current row (single-row mode) */
	int done;		/* every result has been read */
	unsigned char *buf;	/* the current post, decompressed */
	size_t cap;
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

int
journal_fetch_open(struct queue *q, const char *list, int64_t after,
    unsigned max, struct journal_fetch **f_r, char *err, size_t errsz)
{
	char posbuf[32], limbuf[16];
	const char *vals[3] = { list, posbuf, limbuf };
	struct journal_fetch *f;

	*f_r = NULL;
	if ((f = xcalloc(1, sizeof(*f))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	f->q = q;
	f->list = list;
	snprintf(posbuf, sizeof(posbuf), "%lld", (long long)after);
	snprintf(limbuf, sizeof(limbuf), "%u", max);
	/* one row at a time: a batch of large posts never sits in memory
	 * at once */
	if (PQsendQueryParams(q->conn, "SELECT id, class = 'spam', "
	    "CASE op WHEN 'learn' THEN 1 ELSE -1 END::int4, size, "
	    "(floor(extract(epoch FROM created_at) / 86400))::int8, message_z "
	    "FROM train_journal WHERE list = $1 AND id > $2::int8 "
	    "ORDER BY id LIMIT $3::int8", 3, NULL, vals, NULL, NULL, 1) != 1 ||
	    PQsetSingleRowMode(q->conn) != 1) {
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
journal_fetch_next(struct journal_fetch *f, struct journal_event *ev,
    char *err, size_t errsz)
{
	PGresult *res;
	int64_t size, day;
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
		return -2;
	}
	ev->id = queue_col_i64(res, 0, 0);
	ev->spam = PQgetlength(res, 0, 1) == 1 && *PQgetvalue(res, 0, 1) != 0;
	ev->dir = queue_col_i64(res, 0, 2) < 0 ? -1 : 1;
	size = queue_col_i64(res, 0, 3);
	day = queue_col_i64(res, 0, 4);
	ev->day = day > 0 && day < 0xffffffffLL ? (uint32_t)day : 0;
	if ((r = queue_inflate((const unsigned char *)PQgetvalue(res, 0, 5),
	    (size_t)PQgetlength(res, 0, 5), size, &f->buf, &f->cap, err,
	    errsz)) < 0) {
		/* say which event, keep the reason */
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errsz, "journal event %lld of list %s: %s",
		    (long long)ev->id, f->list, why);
		return r == -2 ? -2 : -1;
	}
	ev->raw = f->buf;
	ev->len = (size_t)size;
	return 1;
}

void
journal_fetch_close(struct journal_fetch *f)
{
	if (f == NULL)
		return;
	fetch_drain(f);
	xfree(f->buf);
	xfree(f);
}
