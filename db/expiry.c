/*
 * expiry.c - the held posts past their list's hold_expiry_days, and the
 * reminders sent for them
 *
 * See expiry.h.  Reads held_posts (the ids only: a post's bytes are
 * read by the decision path), writes only reminded_at.  -1 with a
 * message on every failure; never prints or exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "db/expiry.h"
#include "db/queue.h"
#include "db/queue_int.h"

int
expiry_lists(struct queue *q, expiry_list_fn fn, void *ctx, char *err,
    size_t errsz)
{
	PGresult *res;
	int i, rc = 0;

	res = PQexecParams(q->conn, "SELECT DISTINCT list FROM held_posts "
	    "WHERE status = 'held' ORDER BY list", 0, NULL, NULL, NULL, NULL,
	    0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	for (i = 0; i < PQntuples(res) && rc == 0; i++)
		rc = fn(PQgetvalue(res, i, 0), ctx);
	PQclear(res);
	if (rc < 0)
		snprintf(err, errsz, "stopped");
	return rc < 0 ? -1 : 0;
}

/* reminded_at as expiry_post_fn gives it: the same expression in the
 * claim compares equal to what expiry_due saw */
#define REMINDED_US	"coalesce((extract(epoch FROM reminded_at) * " \
	"1000000)::int8, -1)"

/* a reminder is due again once the last is hold_expiry_days old, less
 * half a day: the daily run stamps reminded_at as it claims each post,
 * seconds or minutes after the run began, and the next day's run,
 * beginning at the same time of day, would find it a little short of
 * the full days and put it off a day, every time (reminders every
 * hold_expiry_days + 1 days) */
#define REMIND_AGAIN	"reminded_at <= now() - make_interval(hours => " \
	"greatest(24 * $2::int4 - 12, 0))"

int
expiry_due(struct queue *q, const char *list, unsigned days, int reminders,
    expiry_post_fn fn, void *ctx, char *err, size_t errsz)
{
	char dbuf[16];
	const char *vals[3] = { list, dbuf, reminders ? "t" : "f" };
	PGresult *res;
	int i, rc = 0;

	snprintf(dbuf, sizeof(dbuf), "%u", days);
	/* days of 24 hours: make_interval(days => N) counts calendar days
	 * in the session's TimeZone (the server's), 23 or 25 hours across
	 * a DST change */
	res = PQexecParams(q->conn, "SELECT id, " REMINDED_US " FROM "
	    "held_posts WHERE list = $1 "
	    "AND status = 'held' AND arrived_at <= now() - make_interval(hours "
	    "=> 24 * $2::int4) AND (NOT $3::bool OR reminded_at IS NULL OR "
	    REMIND_AGAIN ") ORDER BY arrived_at, id", 3, NULL, vals, NULL,
	    NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	for (i = 0; i < PQntuples(res) && rc == 0; i++)
		rc = fn(strtoll(PQgetvalue(res, i, 0), NULL, 10),
		    strtoll(PQgetvalue(res, i, 1), NULL, 10), ctx);
	PQclear(res);
	if (rc < 0)
		snprintf(err, errsz, "stopped");
	return rc < 0 ? -1 : 0;
}

int
expiry_claim_remind(struct queue *q, int64_t id, unsigned days,
    int64_t reminded, char *err, size_t errsz)
{
	char idbuf[32], dbuf[16], rbuf[32];
	const char *vals[3] = { idbuf, dbuf, rbuf };
	char rb[256];
	PGresult *res;
	int n;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	snprintf(dbuf, sizeof(dbuf), "%u", days);
	snprintf(rbuf, sizeof(rbuf), "%lld", (long long)reminded);
	if (queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	/* the row lock makes a second run wait for the first's claim, then
	 * see its reminded_at: no longer the one it saw (with days 0 the
	 * age alone would let it remind again) */
	res = PQexecParams(q->conn, "UPDATE held_posts SET reminded_at = "
	    "now() WHERE id = $1::int8 AND status = 'held' AND (reminded_at "
	    "IS NULL OR " REMIND_AGAIN ") AND " REMINDED_US " = $3::int8 "
	    "RETURNING id", 3, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		queue_cmd(q, "ROLLBACK", rb, sizeof(rb));
		return -1;
	}
	n = PQntuples(res);
	PQclear(res);
	if (n == 0 && queue_cmd(q, "ROLLBACK", err, errsz) < 0)
		return -1;
	return n > 0;
}

int
expiry_claim_end(struct queue *q, int commit, char *err, size_t errsz)
{
	char rb[256];

	if (queue_cmd(q, commit ? "COMMIT" : "ROLLBACK", err, errsz) < 0) {
		if (commit)
			queue_cmd(q, "ROLLBACK", rb, sizeof(rb));
		return -1;
	}
	return 0;
}
