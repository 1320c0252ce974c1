/*
 * qstats.c - a list's moderation figures per period, from held_posts
 * and train_journal
 *
 * See qstats.h.  Three grouped queries per call (arrivals, decisions
 * with their delays, reversed approvals), each bucketed by the server
 * with width_bucket over the bounds, so the cost does not grow with the
 * number of periods.  -1 with a message on every failure; never prints
 * or exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/qstats.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "gate/util/buf.h"

static int
fail(struct queue *q, PGresult *res, char *err, size_t errsz)
{
	snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	PQclear(res);
	return -1;
}

/* bounds as a PostgreSQL array literal of float8: "{1,2,3}" */
static int
bounds_text(const time_t *b, size_t n, struct buf *out)
{
	char num[32];
	size_t i;

	if (buf_addc(out, '{') < 0)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%s%lld", i ? "," : "",
		    (long long)b[i]);
		if (buf_adds(out, num) < 0)
			return -1;
	}
	return buf_addc(out, '}');
}

/* the period of a width_bucket value k (1 .. np), or -1 */
static long
period(const char *v, size_t np)
{
	long k = strtol(v, NULL, 10);

	return k >= 1 && (size_t)k <= np ? k - 1 : -1;
}

int
qstats_periods(struct queue *q, const char *list, const time_t *bounds,
    size_t np, struct qstats_period *out, char *err, size_t errsz)
{
	/* what the filter stored as discarded was never held */
	static const char arrivals[] =
	    "SELECT width_bucket(extract(epoch FROM arrived_at), $2::float8[]), "
	    "count(*) FILTER (WHERE decided_by IS DISTINCT FROM "
	    "'" QUEUE_FILTER_BY "'), count(*) FILTER (WHERE decided_by = "
	    "'" QUEUE_FILTER_BY "' AND status = 'discarded') FROM held_posts "
	    "WHERE list = $1 AND arrived_at >= to_timestamp($3::float8) AND "
	    "arrived_at < to_timestamp($4::float8) GROUP BY 1";
	/* a decision stamped before its post arrived (the server's clock
	 * set back between the two) took no time: a delay below 0 would
	 * read as "none" (-1) */
	static const char decisions[] =
	    "SELECT width_bucket(extract(epoch FROM decided_at), $2::float8[]), "
	    "count(*) FILTER (WHERE status = 'approved'), "
	    "count(*) FILTER (WHERE status = 'rejected'), "
	    "count(*) FILTER (WHERE status = 'discarded'), "
	    "count(*) FILTER (WHERE status = 'expired'), "
	    "count(*) FILTER (WHERE status <> 'expired'), "
	    "percentile_cont(0.5) WITHIN GROUP (ORDER BY greatest(extract("
	    "epoch FROM decided_at - arrived_at), 0)) FILTER (WHERE status "
	    "<> 'expired'), "
	    "percentile_cont(0.9) WITHIN GROUP (ORDER BY greatest(extract("
	    "epoch FROM decided_at - arrived_at), 0)) FILTER (WHERE status "
	    "<> 'expired') "
	    "FROM held_posts WHERE list = $1 AND decided_at >= "
	    "to_timestamp($3::float8) AND decided_at < to_timestamp($4::float8) "
	    "AND status IN ('approved', 'rejected', 'discarded', 'expired') AND "
	    "decided_by IS DISTINCT FROM '" QUEUE_FILTER_BY "' GROUP BY 1";
	/* an approval undone (its ham unlearnt) of a post now judged spam:
	 * counted when it was undone */
	static const char reversed[] =
	    "SELECT width_bucket(extract(epoch FROM j.created_at), "
	    "$2::float8[]), count(DISTINCT j.post_id) FROM train_journal j "
	    "JOIN held_posts h ON h.id = j.post_id WHERE j.list = $1 AND "
	    "j.class = 'ham' AND j.op = 'unlearn' AND j.source = 'moderation' "
	    "AND h.status IN ('rejected', 'discarded') AND j.created_at >= "
	    "to_timestamp($3::float8) AND j.created_at < "
	    "to_timestamp($4::float8) GROUP BY 1";
	struct buf arr = BUF_INIT(32 * (QSTATS_MAX_PERIODS + 2));
	char lo[32], hi[32];
	const char *vals[4];
	PGresult *res;
	size_t i;
	long k;
	int r;

	if (np == 0)
		return 0;
	if (np > QSTATS_MAX_PERIODS) {
		snprintf(err, errsz, "at most %u periods at once",
		    (unsigned)QSTATS_MAX_PERIODS);
		return -1;
	}
	memset(out, 0, np * sizeof(*out));
	for (i = 0; i < np; i++)
		out[i].delay_median_s = out[i].delay_p90_s = -1;
	if (bounds_text(bounds, np + 1, &arr) < 0) {
		buf_free(&arr);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	snprintf(lo, sizeof(lo), "%lld", (long long)bounds[0]);
	snprintf(hi, sizeof(hi), "%lld", (long long)bounds[np]);
	vals[0] = list;
	vals[1] = buf_str(&arr);
	vals[2] = lo;
	vals[3] = hi;

	res = PQexecParams(q->conn, arrivals, 4, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		goto bad;
	for (r = 0; r < PQntuples(res); r++) {
		if ((k = period(PQgetvalue(res, r, 0), np)) < 0)
			continue;
		out[k].held += strtoll(PQgetvalue(res, r, 1), NULL, 10);
		out[k].filter_discarded += strtoll(PQgetvalue(res, r, 2),
		    NULL, 10);
	}
	PQclear(res);

	res = PQexecParams(q->conn, decisions, 4, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		goto bad;
	for (r = 0; r < PQntuples(res); r++) {
		if ((k = period(PQgetvalue(res, r, 0), np)) < 0)
			continue;
		out[k].approved = strtoll(PQgetvalue(res, r, 1), NULL, 10);
		out[k].rejected = strtoll(PQgetvalue(res, r, 2), NULL, 10);
		out[k].discarded = strtoll(PQgetvalue(res, r, 3), NULL, 10);
		out[k].expired = strtoll(PQgetvalue(res, r, 4), NULL, 10);
		out[k].delays = strtoll(PQgetvalue(res, r, 5), NULL, 10);
		if (!PQgetisnull(res, r, 6))
			out[k].delay_median_s = strtod(PQgetvalue(res, r, 6),
			    NULL);
		if (!PQgetisnull(res, r, 7))
			out[k].delay_p90_s = strtod(PQgetvalue(res, r, 7),
			    NULL);
	}
	PQclear(res);

	res = PQexecParams(q->conn, reversed, 4, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		goto bad;
	for (r = 0; r < PQntuples(res); r++) {
		if ((k = period(PQgetvalue(res, r, 0), np)) < 0)
			continue;
		out[k].reversed = strtoll(PQgetvalue(res, r, 1), NULL, 10);
	}
	PQclear(res);
	buf_free(&arr);
	return 0;
bad:
	buf_free(&arr);
	return fail(q, res, err, errsz);
}

int
qstats_lists(struct queue *q, qstats_list_fn fn, void *ctx, char *err,
    size_t errsz)
{
	PGresult *res;
	int i, rc = 0;

	/* each table's lists by a walk down its index on (list, ...): one
	 * probe per list, where a plain UNION read every row of both (a
	 * journal of millions of posts, every night) */
	res = PQexecParams(q->conn, "WITH RECURSIVE "
	    QUEUE_LISTS_CTE("h", "held_posts") ", "
	    QUEUE_LISTS_CTE("j", "train_journal")
	    " SELECT l FROM h WHERE l IS NOT NULL UNION SELECT l FROM j "
	    "WHERE l IS NOT NULL ORDER BY 1", 0, NULL, NULL, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return fail(q, res, err, errsz);
	for (i = 0; i < PQntuples(res) && rc == 0; i++)
		rc = fn(PQgetvalue(res, i, 0), ctx);
	PQclear(res);
	if (rc < 0)
		snprintf(err, errsz, "stopped");
	return rc < 0 ? -1 : 0;
}

int
qstats_list_known(struct queue *q, const char *list, char *err,
    size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;
	int known;

	res = PQexecParams(q->conn, "SELECT EXISTS (SELECT 1 FROM held_posts "
	    "WHERE list = $1) OR EXISTS (SELECT 1 FROM train_journal WHERE "
	    "list = $1)", 1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1)
		return fail(q, res, err, errsz);
	known = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return known;
}
