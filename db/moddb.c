/*
 * moddb.c - the outbox of hold notices and the used cookies in
 * PostgreSQL (migrations/0005_moderation.sql), and the answers to
 * replies that decided nothing (0013_moderation_answers.sql)
 *
 * Trusts the server; every value (list names, addresses from the
 * configuration, error text, who decided) goes to it as a PQexecParams
 * parameter, text made valid UTF-8 and bounded first.  Failures return
 * -1 with the server's message; nothing here logs or exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/moddb.h"
#include "db/queue_int.h"
#include "gate/util/buf.h"
#include "gate/util/sanitize.h"
#include "gate/util/xalloc.h"

/* longest error text kept with a row */
#define ERR_MAX		1000
/* the moderators of one post as a text[] literal: a list's fit in one
 * configuration value (4 KiB), quoted and escaped */
#define MODS_MAX	(1024u * 1024u)

/* s as valid UTF-8 of at most max bytes, into b (a C string); 0 or -1 */
static int
utf8_text(struct buf *b, const char *s)
{
	return buf_add(b, "", 0) < 0 || sanitize_utf8(b, s ? s : "",
	    s ? strlen(s) : 0) < 0 ? -1 : 0;
}

int
moddb_text_array(struct buf *arr, char *const *a)
{
	const char *s;
	size_t i;
	int r;

	r = buf_addc(arr, '{');
	for (i = 0; r == 0 && a != NULL && a[i] != NULL; i++) {
		r = buf_adds(arr, i > 0 ? ",\"" : "\"");
		for (s = a[i]; r == 0 && *s != '\0'; s++) {
			if (*s == '"' || *s == '\\')
				r = buf_addc(arr, '\\');
			if (r == 0)
				r = buf_addc(arr, *s);
		}
		if (r == 0)
			r = buf_addc(arr, '"');
	}
	return r < 0 || buf_addc(arr, '}') < 0 ? -1 : 0;
}

int
moddb_queue(struct queue *q, const char *list, int64_t post_id,
    char *const *moderators, const char *kind, int digest, char *err,
    size_t errsz)
{
	struct buf arr = BUF_INIT(MODS_MAX);
	char idbuf[32];
	const char *vals[5];
	int r;

	if (moderators == NULL || moderators[0] == NULL)
		return 0;
	/* the addresses as one text[] parameter: the rows go in with one
	 * statement, all or none */
	if (moddb_text_array(&arr, moderators) < 0) {
		snprintf(err, errsz, "out of memory (or moderators' addresses "
		    "past %u bytes)", MODS_MAX);
		buf_free(&arr);
		return -1;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)post_id);
	vals[0] = list;
	vals[1] = idbuf;
	vals[2] = buf_str(&arr);
	vals[3] = kind;
	vals[4] = digest ? "t" : "f";
	/* a reminder to a moderator whose notice of the post is still
	 * pending (its notify command failing, or waiting for the digest:
	 * expire reminds every hold_expiry_days, an administrator again
	 * and again) is that notice: one row each, or the moderator would
	 * get the post once per reminder when the command works again */
	r = queue_exec(q, "INSERT INTO notice_outbox (list, post_id, moderator, "
	    "kind, digest) SELECT $1, $2::int8, m.a, $4, $5::bool FROM "
	    "unnest($3::text[]) WITH ORDINALITY AS m (a, n) WHERE $4 <> "
	    "'remind' OR NOT EXISTS (SELECT 1 FROM notice_outbox o WHERE "
	    "o.post_id = $2::int8 AND lower(o.moderator) = lower(m.a) AND "
	    "o.state = 'pending') ORDER BY m.n "
	    "ON CONFLICT (post_id, moderator) WHERE kind = 'hold' DO NOTHING",
	    5, vals, NULL, NULL, err, errsz);
	buf_free(&arr);
	return r;
}

int
moddb_sent_last_hour(struct queue *q, const char *list, long *n_r,
    char *err, size_t errsz)
{
	const char *vals[1] = { list };
	PGresult *res;

	*n_r = 0;
	res = PQexecParams(q->conn, "SELECT count(DISTINCT post_id) FROM "
	    "notice_outbox WHERE list = $1 AND state = 'sent' AND done_at > "
	    "now() - interval '1 hour'", 1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	*n_r = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

int
moddb_pending(struct queue *q, const char *list, int64_t post_id,
    size_t max, moddb_notice_fn fn, void *ctx, char *err, size_t errsz)
{
	struct moddb_notice *rows;
	char idbuf[32], maxbuf[32];
	const char *vals[3];
	PGresult *res;
	int i, n, r = 0;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)post_id);
	snprintf(maxbuf, sizeof(maxbuf), "%zu", max);
	vals[0] = idbuf;
	vals[1] = list;
	vals[2] = maxbuf;
	res = PQexecParams(q->conn, "SELECT o.id, o.post_id, o.list, "
	    "o.moderator, o.kind, o.digest::int, o.tries, "
	    "coalesce(p.status, '') FROM notice_outbox o LEFT JOIN held_posts "
	    "p ON p.id = o.post_id WHERE o.state = 'pending' AND "
	    "($1::int8 <= 0 OR o.post_id = $1::int8) AND ($2::text IS NULL "
	    "OR o.list = $2::text) ORDER BY o.tries, o.id LIMIT $3::int8", 3,
	    NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	n = PQntuples(res);
	if (n == 0) {
		PQclear(res);
		return 0;
	}
	/* copied out first: fn may run statements on this connection */
	if ((rows = xcalloc((size_t)n, sizeof(*rows))) == NULL) {
		snprintf(err, errsz, "out of memory");
		PQclear(res);
		return -1;
	}
	for (i = 0; i < n; i++) {
		rows[i].id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		rows[i].post_id = strtoll(PQgetvalue(res, i, 1), NULL, 10);
		snprintf(rows[i].list, sizeof(rows[i].list), "%s",
		    PQgetvalue(res, i, 2));
		snprintf(rows[i].moderator, sizeof(rows[i].moderator), "%s",
		    PQgetvalue(res, i, 3));
		snprintf(rows[i].kind, sizeof(rows[i].kind), "%s",
		    PQgetvalue(res, i, 4));
		rows[i].digest = strcmp(PQgetvalue(res, i, 5), "1") == 0;
		rows[i].tries = (int)strtol(PQgetvalue(res, i, 6), NULL, 10);
		snprintf(rows[i].post_status, sizeof(rows[i].post_status),
		    "%s", PQgetvalue(res, i, 7));
	}
	PQclear(res);
	for (i = 0; i < n && r == 0; i++)
		r = fn(&rows[i], ctx);
	xfree(rows);
	if (r < 0) {
		snprintf(err, errsz, "sending the pending notices stopped");
		return -1;
	}
	return 0;
}

int
moddb_claim(struct queue *q, int64_t id, unsigned lease_s, int digest,
    char *claim_r, size_t claimsz, char *err, size_t errsz)
{
	char idbuf[32], lbuf[32];
	const char *vals[3];
	PGresult *res;
	int r;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	snprintf(lbuf, sizeof(lbuf), "%u", lease_s);
	vals[0] = idbuf;
	vals[1] = lbuf;
	vals[2] = digest ? "t" : "f";
	/* (and only while its post is held: a run reads its pending rows
	 * once, then sends them one by one, and a post decided meanwhile
	 * gets no "held" notice; the next run drops its rows) */
	res = PQexecParams(q->conn, "UPDATE notice_outbox o SET claimed_until "
	    "= now() + make_interval(secs => $2::int4), digest = o.digest OR "
	    "$3::bool WHERE o.id = $1::int8 "
	    "AND o.state = 'pending' AND (o.claimed_until IS NULL OR "
	    "o.claimed_until < now()) AND EXISTS (SELECT 1 FROM held_posts p "
	    "WHERE p.id = o.post_id AND p.status = 'held') RETURNING "
	    "o.claimed_until::text", 3, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	r = PQntuples(res) == 1;
	snprintf(claim_r, claimsz, "%s", r ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return r;
}

int
moddb_claim_counted(struct queue *q, int64_t id, unsigned lease_s,
    unsigned max, char *claim_r, size_t claimsz, char *err, size_t errsz)
{
	char idbuf[32], lbuf[32], mbuf[32], cls[16];
	const char *vals[3];
	PGresult *res;
	int r, own = PQtransactionStatus(q->conn) == PQTRANS_IDLE;

	claim_r[0] = '\0';
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	snprintf(lbuf, sizeof(lbuf), "%u", lease_s);
	snprintf(mbuf, sizeof(mbuf), "%u", max);
	snprintf(cls, sizeof(cls), "%d", QUEUE_LOCK_NOTIFY);
	if (own && queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	/* the lock first, in a statement of its own: the count's statement
	 * then reads every claim and send committed under it before (a
	 * statement's snapshot is taken before a lock it waits for).  Held
	 * for one statement's time: no time-out lifted for it */
	vals[0] = cls;
	vals[1] = idbuf;
	if (queue_exec(q, "SELECT pg_advisory_xact_lock($1::int4, "
	    "hashtext(list)) FROM notice_outbox WHERE id = $2::int8", 2, vals,
	    NULL, NULL, err, errsz) < 0)
		goto fail;
	vals[0] = idbuf;
	vals[1] = lbuf;
	vals[2] = mbuf;
	/* the posts that count: a notice sent in the last hour (as
	 * moddb_sent_last_hour counts them), or one a sender claimed and
	 * sends now (its claim not run out), not the rows a digest being
	 * sent claimed (moddb_claim marks them): a digest of the flood's
	 * posts took the hour's budget while it went out; each read
	 * through its partial index (0005_moderation.sql), not every row
	 * of the list */
	res = PQexecParams(q->conn, "WITH o AS (SELECT list, post_id FROM "
	    "notice_outbox WHERE id = $1::int8), c AS (SELECT s.post_id FROM "
	    "notice_outbox s, o WHERE s.list = o.list AND s.state = 'sent' AND "
	    "s.done_at > now() - interval '1 hour' UNION SELECT s.post_id FROM "
	    "notice_outbox s, o WHERE s.list = o.list AND s.state = 'pending' "
	    "AND s.claimed_until >= now() AND NOT s.digest), ok AS "
	    "(SELECT coalesce((SELECT post_id FROM o) IN (SELECT post_id FROM "
	    "c), false) OR (SELECT count(*) FROM c) < $3::int8 AS ok), u AS "
	    "(UPDATE notice_outbox n SET claimed_until = now() + "
	    "make_interval(secs => $2::int4) WHERE n.id = $1::int8 AND "
	    "n.state = 'pending' AND (n.claimed_until IS NULL OR "
	    "n.claimed_until < now()) AND EXISTS (SELECT 1 FROM held_posts p "
	    "WHERE p.id = n.post_id AND p.status = 'held') AND (SELECT ok "
	    "FROM ok) RETURNING n.claimed_until::text AS claim) SELECT "
	    "(SELECT claim FROM u), (SELECT ok FROM ok)::int", 3, NULL, vals,
	    NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		goto fail;
	}
	if (!PQgetisnull(res, 0, 0)) {
		snprintf(claim_r, claimsz, "%s", PQgetvalue(res, 0, 0));
		r = 1;
	} else
		r = strcmp(PQgetvalue(res, 0, 1), "0") == 0 ? 2 : 0;
	PQclear(res);
	if (own && queue_cmd(q, "COMMIT", err, errsz) < 0) {
		claim_r[0] = '\0';
		return -1;
	}
	return r;
fail:
	if (own) {
		char e2[8];

		queue_cmd(q, "ROLLBACK", e2, sizeof(e2));
	}
	return -1;
}

int
moddb_mark(struct queue *q, int64_t id, const char *state, const char *why,
    const char *claim, char *err, size_t errsz)
{
	struct buf w = BUF_INIT(ERR_MAX);
	char idbuf[32];
	const char *vals[4];
	int r;

	if (why != NULL && utf8_text(&w, why) < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	vals[0] = idbuf;
	vals[1] = state;
	vals[2] = why != NULL ? buf_str(&w) : NULL;
	vals[3] = claim != NULL && claim[0] != '\0' ? claim : NULL;
	/* a failed try whose claim ran out (its sender stopped, the server
	 * slow) and was taken by another sender, sending it now, must not
	 * end that one's claim: a third would send the row too */
	r = queue_exec(q, "UPDATE notice_outbox SET state = $2, tries = tries + "
	    "CASE WHEN $2 = 'dropped' THEN 0 ELSE 1 END, last_error = $3, "
	    "done_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END, "
	    "claimed_until = NULL WHERE id = $1::int8 AND state = 'pending' "
	    "AND ($2 <> 'pending' OR $4::timestamptz IS NULL OR claimed_until "
	    "IS NULL OR claimed_until = $4::timestamptz)", 4, vals, NULL, NULL,
	    err, errsz);
	buf_free(&w);
	return r;
}

int
moddb_pending_lists(struct queue *q, const char *after,
    char (*names)[LG_MAX_LIST_NAME + 1], size_t max, size_t *n_r, char *err,
    size_t errsz)
{
	char maxbuf[32];
	const char *vals[2];
	PGresult *res;
	int i, n;

	*n_r = 0;
	snprintf(maxbuf, sizeof(maxbuf), "%zu", max);
	vals[0] = after;
	vals[1] = maxbuf;
	res = PQexecParams(q->conn, "SELECT DISTINCT list FROM notice_outbox "
	    "WHERE state = 'pending' AND ($1::text IS NULL OR list > $1::text) "
	    "ORDER BY list LIMIT $2::int8", 2, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	n = PQntuples(res);
	for (i = 0; i < n && (size_t)i < max; i++)
		snprintf(names[i], LG_MAX_LIST_NAME + 1, "%s",
		    PQgetvalue(res, i, 0));
	*n_r = (size_t)i;
	PQclear(res);
	return 0;
}

int
moddb_cookie_used(struct queue *q, const unsigned char sha256[32],
    char *by_r, size_t bysz, time_t *at_r, char *err, size_t errsz)
{
	const char *vals[1] = { (const char *)sha256 };
	int lens[1] = { 32 }, fmts[1] = { 1 };
	PGresult *res;
	int r;

	by_r[0] = '\0';
	*at_r = 0;
	res = PQexecParams(q->conn, "SELECT used_by, extract(epoch FROM "
	    "used_at)::int8 FROM moderation_cookies WHERE cookie_sha256 = $1",
	    1, NULL, vals, lens, fmts, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	r = PQntuples(res) > 0;
	if (r) {
		snprintf(by_r, bysz, "%s", PQgetvalue(res, 0, 0));
		*at_r = (time_t)strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	}
	PQclear(res);
	return r;
}

int
moddb_cookie_use(struct queue *q, const unsigned char sha256[32],
    const char *list, int64_t post_id, const char *action, const char *by,
    char *err, size_t errsz)
{
	struct buf b = BUF_INIT(256);
	char idbuf[32];
	const char *vals[5];
	int lens[5] = { 32, 0, 0, 0, 0 }, fmts[5] = { 1, 0, 0, 0, 0 };
	int r;

	if (utf8_text(&b, by) < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)post_id);
	vals[0] = (const char *)sha256;
	vals[1] = list;
	vals[2] = idbuf;
	vals[3] = action;
	vals[4] = buf_str(&b);
	r = queue_exec(q, "INSERT INTO moderation_cookies (cookie_sha256, list, "
	    "post_id, action, used_by) VALUES ($1, $2, $3::int8, $4, $5) ON "
	    "CONFLICT (cookie_sha256) DO NOTHING", 5, vals, lens, fmts, err,
	    errsz);
	buf_free(&b);
	return r;
}

int
moddb_answer_take(struct queue *q, const char *address, const char *list,
    int max, int *n_r, char *err, size_t errsz)
{
	struct buf a = BUF_INIT(4 * LG_MAX_ADDR_BYTES);
	char maxbuf[32];
	const char *vals[3];
	PGresult *res;
	long long c, took;

	*n_r = 0;
	if (utf8_text(&a, address) < 0) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	snprintf(maxbuf, sizeof(maxbuf), "%d", max);
	vals[0] = buf_str(&a);
	vals[1] = list;
	vals[2] = maxbuf;
	/* (every part sees the table as the statement began: the count is
	 * of the answers before this one) */
	res = PQexecParams(q->conn, "WITH gone AS (DELETE FROM "
	    "moderation_answers WHERE sent_at < now() - interval '1 hour'), "
	    "n AS (SELECT count(*) AS c FROM moderation_answers WHERE "
	    "lower(address) = lower($1) AND sent_at >= now() - "
	    "interval '1 hour'), ins AS (INSERT INTO moderation_answers "
	    "(address, list) SELECT $1, $2 FROM n WHERE n.c < $3::int "
	    "RETURNING 1) SELECT n.c, (SELECT count(*) FROM ins) FROM n",
	    3, NULL, vals, NULL, NULL, 0);
	buf_free(&a);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	c = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	took = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	PQclear(res);
	if (c > 1000000)
		c = 1000000;
	*n_r = (int)c + (took > 0);
	return took > 0;
}
