/*
 * qview.c - read-only views of the moderation queue for the web page
 *
 * Trusts the server; list names were checked by the caller
 * (listcfg_name_ok) and travel as parameters, as do offsets and limits.
 * Text columns come back as the rows hold them (valid UTF-8, unmasked):
 * the caller sanitizes what it shows.  Failures return -1 with the
 * server's message; nothing here exits or logs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/queue.h"
#include "db/queue_int.h"
#include "db/qview.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"

/* a failed result into err; clears it; -1 */
static int
fail(struct queue *q, PGresult *res, char *err, size_t errsz)
{
	snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	PQclear(res);
	return -1;
}

int
qview_counts(struct queue *q, const char *const *only, size_t nonly,
    qview_count_fn fn, void *ctx, char *err, size_t errsz)
{
	struct buf set = BUF_INIT((2 * LG_MAX_LIST_NAME + 3) * 100000u);
	const char *vals[1], *c;
	PGresult *res;
	size_t i;
	int n, r = 0;

	vals[0] = NULL;
	if (only != NULL) {
		/* a text[] literal of the names, each quoted: unquoted, a
		 * list called "null" (a valid name) was the NULL element,
		 * which no list equals, and its count was always 0 */
		if (buf_addc(&set, '{') < 0)
			goto nomem;
		for (i = 0; i < nonly; i++) {
			if (buf_adds(&set, i ? ",\"" : "\"") < 0)
				goto nomem;
			for (c = only[i]; *c != '\0'; c++)
				if (((*c == '"' || *c == '\\') &&
				    buf_addc(&set, '\\') < 0) ||
				    buf_addc(&set, *c) < 0)
					goto nomem;
			if (buf_addc(&set, '"') < 0)
				goto nomem;
		}
		if (buf_addc(&set, '}') < 0)
			goto nomem;
		vals[0] = buf_str(&set);
	}
	res = PQexecParams(q->conn, "SELECT list, count(*) FROM held_posts "
	    "WHERE status = 'held' AND ($1::text[] IS NULL OR list = ANY "
	    "($1::text[])) GROUP BY list ORDER BY list COLLATE \"C\"", 1, NULL,
	    vals, NULL, NULL, 0);
	buf_free(&set);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return fail(q, res, err, errsz);
	n = PQntuples(res);
	for (i = 0; (int)i < n && r == 0; i++)
		r = fn(PQgetvalue(res, (int)i, 0),
		    strtoll(PQgetvalue(res, (int)i, 1), NULL, 10), ctx);
	PQclear(res);
	if (r < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	return 0;
nomem:
	buf_free(&set);
	snprintf(err, errsz, "out of memory");
	return -1;
}

/* the ORDER BY of each enum qview_sort: fixed texts, never input */
static const char *const orders[] = {
	[QVIEW_OLDEST] = "arrived_at, id",
	[QVIEW_NEWEST] = "arrived_at DESC, id DESC",
	[QVIEW_SCORE_DESC] = "score DESC, arrived_at, id",
	[QVIEW_SCORE_ASC] = "score, arrived_at, id",
};

void
qview_page_sql(enum qview_sort sort, char *sql, size_t size)
{
	if ((unsigned)sort >= sizeof(orders) / sizeof(orders[0]))
		sort = QVIEW_OLDEST;
	/* the waiting posts of one list come from held_posts_waiting
	 * (migration 0009), whatever the statistics say */
	snprintf(sql, size, "SELECT id, from_hdr, env_sender, subject, "
	    "left(clues, 400), score, "
	    "floor(extract(epoch FROM arrived_at))::int8, "
	    "count(*) OVER (), encode(raw_sha256, 'hex'), "
	    "verdict <> 'oversize' FROM held_posts "
	    "WHERE status = 'held' AND "
	    "list = $1 ORDER BY %s LIMIT $2::int8 OFFSET $3::int8",
	    orders[sort]);
}

int
qview_page(struct queue *q, const char *list, enum qview_sort sort,
    int64_t offset, int64_t limit, qview_row_fn fn, void *ctx,
    int64_t *total_r, char *err, size_t errsz)
{
	char sql[512], off[32], lim[32];
	const char *vals[3] = { list, lim, off };
	struct qview_row row;
	PGresult *res;
	int i, n, r = 0;

	*total_r = 0;
	snprintf(off, sizeof(off), "%lld", (long long)offset);
	snprintf(lim, sizeof(lim), "%lld", (long long)limit);
	qview_page_sql(sort, sql, sizeof(sql));
	res = PQexecParams(q->conn, sql, 3, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return fail(q, res, err, errsz);
	n = PQntuples(res);
	if (n > 0)
		*total_r = strtoll(PQgetvalue(res, 0, 7), NULL, 10);
	for (i = 0; i < n && r == 0; i++) {
		row.id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		row.from = PQgetvalue(res, i, 1);
		row.env_sender = PQgetvalue(res, i, 2);
		row.subject = PQgetvalue(res, i, 3);
		row.clues = PQgetvalue(res, i, 4);
		row.score = strtod(PQgetvalue(res, i, 5), NULL);
		row.arrived = (time_t)strtoll(PQgetvalue(res, i, 6), NULL, 10);
		row.sha_hex = PQgetvalue(res, i, 8);
		row.scored = strcmp(PQgetvalue(res, i, 9), "f") != 0;
		r = fn(&row, ctx);
	}
	PQclear(res);
	if (r < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if (n > 0 || offset == 0)
		return 0;
	/* past the end: the total alone */
	res = PQexecParams(q->conn, "SELECT count(*) FROM held_posts WHERE "
	    "status = 'held' AND list = $1", 1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return fail(q, res, err, errsz);
	*total_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

int
qview_daily(struct queue *q, const char *list, int ndays,
    struct qview_day *days, char *err, size_t errsz)
{
	char start[32];
	const char *vals[2] = { list, start };
	time_t now = time(NULL), first;
	PGresult *res;
	int i, n, k;

	if (ndays <= 0)
		return 0;
	first = now - now % 86400 - (time_t)(ndays - 1) * 86400;
	for (i = 0; i < ndays; i++) {
		memset(&days[i], 0, sizeof(days[i]));
		days[i].day = first + (time_t)i * 86400;
	}
	snprintf(start, sizeof(start), "%lld", (long long)first);
	/* held by arrival day; decisions by decision day; what the filter
	 * stored as discarded was never held */
	res = PQexecParams(q->conn,
	    "SELECT extract(epoch FROM date_trunc('day', arrived_at AT TIME "
	    "ZONE 'UTC'))::int8, 'held', count(*) FROM held_posts WHERE "
	    "list = $1 AND arrived_at >= to_timestamp($2::int8) AND "
	    "decided_by IS DISTINCT FROM '" QUEUE_FILTER_BY "' GROUP BY 1 "
	    "UNION ALL "
	    "SELECT extract(epoch FROM date_trunc('day', decided_at AT TIME "
	    "ZONE 'UTC'))::int8, status, count(*) FROM held_posts WHERE "
	    "list = $1 AND decided_at >= to_timestamp($2::int8) AND status IN "
	    "('approved', 'rejected', 'discarded') AND decided_by IS DISTINCT "
	    "FROM '" QUEUE_FILTER_BY "' GROUP BY 1, 2", 2, NULL, vals, NULL, NULL,
	    0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return fail(q, res, err, errsz);
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		time_t d = (time_t)strtoll(PQgetvalue(res, i, 0), NULL, 10);
		const char *what = PQgetvalue(res, i, 1);
		int64_t c = strtoll(PQgetvalue(res, i, 2), NULL, 10);

		if (d < first)
			continue;
		k = (int)((d - first) / 86400);
		if (k < 0 || k >= ndays)
			continue;
		if (strcmp(what, "held") == 0)
			days[k].held += c;
		else if (strcmp(what, "approved") == 0)
			days[k].approved += c;
		else
			days[k].rejected += c;
	}
	PQclear(res);
	return 0;
}
