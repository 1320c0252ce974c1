/*
 * check_queue.c - the moderation queue and training journal against a
 * real PostgreSQL (run by tests/queue_check.sh under tests/pg.sh, which
 * sets PGHOST/PGPORT/PGUSER/PGDATABASE); nothing mocks libpq
 *
 * Each test works on its own list name, so tests share one database.
 * Without a database in the environment every test is skipped (77).
 */
#include "config.h"

#include <check.h>
#include <sys/file.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kclangc.h>
#include <libpq-fe.h>

#include "db/journal.h"
#include "db/moddb.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "db/qview.h"
#include "gate/tok.h"
#include "db/tokdb.h"
#include "gate/app/posttok.h"
#include "gate/app/sync.h"
#include "gate/app/trainer.h"
#include "gate/util/clock.h"

/* --- helpers ------------------------------------------------------------- */

/* connect and migrate, asserting success */
static struct queue *
qopen(void)
{
	struct queue *q;
	char err[1024];
	int n;

	if (queue_open(NULL, &q, err, sizeof(err)) < 0)
		ck_abort_msg("queue_open: %s", err);
	if (queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL, NULL, err,
	    sizeof(err)) < 0)
		ck_abort_msg("queue_migrate: %s", err);
	return q;
}

/* a libpq connection of the test's own, to look behind the API */
static PGconn *
pg(const char *dbname)
{
	const char *k[] = { "dbname", NULL }, *v[] = { dbname, NULL };
	PGconn *c = PQconnectdbParams(k, v, 1);

	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	return c;
}

/* how many migrations this binary carries (their numbers may leave
 * gaps where another branch's migration will go) */
static int
nmigrations(void)
{
	int n = 0;

	while (queue_migrations[n].name != NULL)
		n++;
	return n;
}

/* one integer from a query with one text parameter */
static long
pg_long(PGconn *c, const char *sql, const char *p1)
{
	const char *vals[1] = { p1 };
	PGresult *r = PQexecParams(c, sql, p1 ? 1 : 0, NULL, vals, NULL, NULL,
	    0);
	long v;

	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql,
	    PQresultErrorMessage(r));
	v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

/* a post with every byte value, NULs and CRLFs in it */
static unsigned char *
binary_post(size_t *len_r)
{
	static const char hdr[] = "From: a@example.org\r\nSubject: test\r\n"
	    "Message-ID: <1@example.org>\r\n\r\n";
	size_t n = sizeof(hdr) - 1 + 256 * 40, i;
	unsigned char *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	memcpy(p, hdr, sizeof(hdr) - 1);
	for (i = sizeof(hdr) - 1; i < n; i++)
		p[i] = (unsigned char)(i * 7 + (i >> 8));
	*len_r = n;
	return p;
}

/* hold a post for list, asserting success */
static int64_t
hold(struct queue *q, const char *list, const unsigned char *raw, size_t len,
    const char *subject)
{
	struct queue_post p;
	char err[1024];
	int64_t id;

	memset(&p, 0, sizeof(p));
	p.list = list;
	p.env_sender = "sender@example.org";
	p.env_recipient = "list@example.org";
	p.from = "A <a@example.org>";
	p.subject = subject;
	p.msgid = "<1@example.org>";
	p.raw = raw;
	p.raw_len = len;
	p.score = 0.93;
	p.verdict = "spam";
	p.clues = "viagra 0.99 10 0\n";
	p.status = "held";
	if (queue_hold(q, &p, &id, err, sizeof(err)) < 0)
		ck_abort_msg("queue_hold: %s", err);
	ck_assert_int_gt(id, 0);
	return id;
}

/* the release callback of the tests: keep a copy, fail when asked;
 * with kill set, then end the server processes of that queue handle,
 * both its connections (the approver's connections drop after the
 * release); with takeover set too, another approval marks the post
 * meanwhile (its decided_at moves), so the approver, connected again,
 * must leave it 'releasing' (as an approver killed there does) */
struct rel {
	int fail, ncalls, takeover;
	struct queue *kill;
	unsigned char *got;
	size_t len;
};

static int backend_pid(struct queue *q);

/* end the server process with this pid */
static void
kill_backend(int backend)
{
	char pid[32];
	const char *vals[1] = { pid };
	PGconn *c;

	snprintf(pid, sizeof(pid), "%d", backend);
	c = PQconnectdb("");
	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	PQclear(PQexecParams(c, "SELECT pg_terminate_backend($1::int4)", 1,
	    NULL, vals, NULL, NULL, 0));
	PQfinish(c);
}

static int
rel_fn(const struct queue_row *r, void *ctx, char *err, size_t errsz)
{
	struct rel *x = ctx;

	x->ncalls++;
	if (x->fail && x->kill == NULL) {
		snprintf(err, errsz, "release refused (test)");
		return -1;
	}
	free(x->got);
	x->got = malloc(r->raw_len + 1);
	memcpy(x->got, r->raw, r->raw_len);
	x->len = r->raw_len;
	if (x->kill) {
		/* the second connection holds the post's lock now */
		ck_assert_ptr_nonnull(x->kill->lockq);
		kill_backend(backend_pid(x->kill->lockq));
		kill_backend(backend_pid(x->kill));
		x->kill = NULL;
		if (x->takeover) {
			PGconn *c = PQconnectdb("");
			char idb[32];
			const char *vals[1] = { idb };

			ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
			snprintf(idb, sizeof(idb), "%lld", (long long)r->id);
			PQclear(PQexecParams(c, "UPDATE held_posts SET "
			    "decided_at = decided_at + interval '1 second' "
			    "WHERE id = $1::int8", 1, NULL, vals, NULL, NULL,
			    0));
			PQfinish(c);
		}
		if (x->fail) {
			snprintf(err, errsz, "release refused (test)");
			return -1;
		}
	}
	return 0;
}

/* the server process serving q */
static int
backend_pid(struct queue *q)
{
	PGresult *r = PQexec(q->conn, "SELECT pg_backend_pid()");
	int pid;

	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	pid = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return pid;
}

/* the status of post id */
static char *
status_of(PGconn *c, int64_t id)
{
	static char st[32];
	char idbuf[32];
	const char *vals[1] = { idbuf };
	PGresult *r;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	r = PQexecParams(c, "SELECT status FROM held_posts WHERE id = "
	    "$1::int8", 1, NULL, vals, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	ck_assert_int_eq(PQntuples(r), 1);
	snprintf(st, sizeof(st), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return st;
}

/* net journal count of (list, class): learn - unlearn */
static long
net(PGconn *c, const char *list, const char *cls)
{
	const char *vals[2] = { list, cls };
	PGresult *r = PQexecParams(c, "SELECT coalesce(sum(CASE op WHEN "
	    "'learn' THEN 1 ELSE -1 END), 0) FROM train_journal WHERE list = $1 "
	    "AND class = $2", 2, NULL, vals, NULL, NULL, 0);
	long v;

	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

/* --- SHA-256 ------------------------------------------------------------- */

/* the stored fingerprint of post id, in hex (NUL-terminated in out) */
static void
stored_sha256_hex(PGconn *c, int64_t id, char out[65])
{
	char idbuf[32];
	const char *vals[1] = { idbuf };
	PGresult *r;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	r = PQexecParams(c, "SELECT encode(raw_sha256, 'hex') FROM held_posts "
	    "WHERE id = $1::int8", 1, NULL, vals, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	ck_assert_int_eq(PQntuples(r), 1);
	snprintf(out, 65, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
}

/* the digest queue_hold stores is SHA-256 (FIPS 180-4 test vectors), and
 * queue_get accepts it */
START_TEST(sha256_vectors)
{
	static const struct {
		const char *msg;
		size_t len;
		const char *hex;
	} v[] = {
		{ "", 0, "e3b0c44298fc1c149afbf4c8996fb924"
		    "27ae41e4649b934ca495991b7852b855" },
		{ "abc", 3, "ba7816bf8f01cfea414140de5dae2223"
		    "b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		    "248d6a61d20638b8e5c026930c3e6039"
		    "a33ce45964ff2167f6ecedd419db06c1" },
	};
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct queue_row r;
	unsigned char *a;
	char h[65], err[1024];
	int64_t id;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		id = hold(q, "sha", (const unsigned char *)v[i].msg, v[i].len,
		    "vector");
		stored_sha256_hex(c, id, h);
		ck_assert_str_eq(h, v[i].hex);
		ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
		ck_assert_uint_eq(r.raw_len, v[i].len);
		queue_row_free(&r);
	}
	/* a million 'a' */
	a = malloc(1000000);
	ck_assert_ptr_nonnull(a);
	memset(a, 'a', 1000000);
	id = hold(q, "sha", a, 1000000, "million");
	stored_sha256_hex(c, id, h);
	ck_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_uint_eq(r.raw_len, 1000000);
	queue_row_free(&r);
	free(a);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* a stored post whose bytes no longer match the digest is refused */
START_TEST(sha256_mismatch_refused)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct queue_row r;
	char err[1024], idbuf[32];
	const char *vals[1] = { idbuf };
	int64_t id;

	id = hold(q, "sha-bad", (const unsigned char *)"a\n\nb\n", 5, "s");
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	PQclear(PQexecParams(c, "UPDATE held_posts SET raw_sha256 = "
	    "sha256('other'::bytea) WHERE id = $1::int8", 1, NULL, vals, NULL,
	    NULL, 0));
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "SHA-256"));
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* --- configuration and schema -------------------------------------------- */

START_TEST(configured)
{
	char *saved[6];
	static const char *const vars[] = { "PGHOST", "PGHOSTADDR",
	    "PGDATABASE", "PGSERVICE", "PGPORT", "PGUSER" };
	int i;

	for (i = 0; i < 6; i++) {
		saved[i] = getenv(vars[i]) ? strdup(getenv(vars[i])) : NULL;
		unsetenv(vars[i]);
	}
	ck_assert_int_eq(queue_configured(NULL), 0);
	ck_assert_int_eq(queue_configured(""), 0);
	ck_assert_int_eq(queue_configured("dbname=x"), 1);
	setenv("PGDATABASE", "x", 1);
	ck_assert_int_eq(queue_configured(NULL), 1);
	unsetenv("PGDATABASE");
	for (i = 0; i < 6; i++)
		if (saved[i]) {
			setenv(vars[i], saved[i], 1);
			free(saved[i]);
		}
}
END_TEST

/* 1 when a line of the plan in res holds s */
static int
plan_has(PGresult *res, const char *s)
{
	int i;

	for (i = 0; i < PQntuples(res); i++)
		if (strstr(PQgetvalue(res, i, 0), s) != NULL)
			return 1;
	return 0;
}

struct names {
	char v[4][32];
	int n;
};

static int
collect_list(const char *list, int64_t held, void *ctx)
{
	struct names *nm = ctx;

	(void)held;
	if (nm->n < 4)
		snprintf(nm->v[nm->n++], sizeof(nm->v[0]), "%s", list);
	return 0;
}

/* the held counts come in strcmp order, which listgate web merges with
 * its sorted names, whatever the database's collation: under ICU's (or
 * glibc's en_US) "a_b" sorts before "a-b" */
START_TEST(counts_in_byte_order_whatever_the_collation)
{
	struct queue *q;
	struct names nm;
	PGconn *c = pg(NULL);
	PGresult *r;
	char err[1024];
	int n;

	PQclear(PQexec(c, "DROP DATABASE IF EXISTS lg_icu_test"));
	r = PQexec(c, "CREATE DATABASE lg_icu_test TEMPLATE template0 "
	    "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'");
	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	ck_assert_int_eq(queue_open("dbname=lg_icu_test", &q, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	c = pg("lg_icu_test");
	r = PQexec(c, "INSERT INTO held_posts (list, size, score, verdict, "
	    "raw_z, raw_sha256) SELECT l, 1, 0.9, 'spam', 'x', "
	    "sha256(l::bytea) FROM unnest(ARRAY['a_b', 'a-b', 'a1']) l");
	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	memset(&nm, 0, sizeof(nm));
	ck_assert_int_eq(qview_counts(q, NULL, 0, collect_list, &nm, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(nm.n, 3);
	ck_assert_str_eq(nm.v[0], "a-b");
	ck_assert_str_eq(nm.v[1], "a1");
	ck_assert_str_eq(nm.v[2], "a_b");
	queue_close(q);
}
END_TEST

/* held counts of named lists: one called "null" (a valid list name) was
 * the NULL element of the text[] literal, which no list equals: its
 * count was always 0, on /lists and /api/lists of its moderators */
START_TEST(counts_of_a_list_called_null)
{
	struct queue *q = qopen();
	struct names nm;
	PGconn *c = pg(NULL);
	PGresult *r;
	const char *only[] = { "cnull-x", "null" };
	char err[1024];

	r = PQexec(c, "INSERT INTO held_posts (list, size, score, verdict, "
	    "raw_z, raw_sha256) SELECT l, 1, 0.9, 'spam', 'x', "
	    "sha256(('cnt' || l)::bytea) FROM unnest(ARRAY['null', "
	    "'cnull-x']) l");
	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	memset(&nm, 0, sizeof(nm));
	ck_assert_int_eq(qview_counts(q, only, 2, collect_list, &nm, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(nm.n, 2);
	ck_assert_str_eq(nm.v[0], "cnull-x");
	ck_assert_str_eq(nm.v[1], "null");
	queue_close(q);
}
END_TEST

/* a list's waiting posts are read from an index of them only: with most
 * posts decided (statistics from when all were held, as after a busy
 * hour), the queue page used to walk every decided post of the list */
START_TEST(queue_page_reads_only_waiting_posts)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	const char *vals[3] = { "busy", "20", "0" };
	char sql[600], xsql[700];
	PGresult *res;
	int i;

	res = PQexec(c, "INSERT INTO held_posts (list, size, score, verdict, "
	    "raw_z, raw_sha256, arrived_at) SELECT 'busy', 1, 0.9, 'spam', "
	    "'x', sha256(i::text::bytea), now() - i * interval '1 s' FROM "
	    "generate_series(1, 2000) i; ANALYZE held_posts; "
	    "UPDATE held_posts SET status = 'approved', decided_at = now() "
	    "WHERE list = 'busy' AND id NOT IN (SELECT id FROM held_posts "
	    "WHERE list = 'busy' ORDER BY id DESC LIMIT 30)");
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(res));
	PQclear(res);
	/* the orders by arrival, the API's and the page's default (by
	 * score, the planner may still scan the table while its statistics
	 * are old) */
	for (i = QVIEW_OLDEST; i <= QVIEW_NEWEST; i++) {
		qview_page_sql((enum qview_sort)i, sql, sizeof(sql));
		snprintf(xsql, sizeof(xsql), "EXPLAIN (ANALYZE, COSTS OFF, "
		    "TIMING OFF) %s", sql);
		res = PQexecParams(c, xsql, 3, NULL, vals, NULL, NULL, 0);
		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s",
		    PQresultErrorMessage(res));
		ck_assert_msg(plan_has(res, "held_posts_waiting"),
		    "sort %d: not through held_posts_waiting", i);
		ck_assert_msg(!plan_has(res, "Rows Removed by Filter"),
		    "sort %d: decided posts read and dropped", i);
		PQclear(res);
	}
	PQfinish(c);
	queue_close(q);
}
END_TEST

START_TEST(migrate_idempotent)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	char err[1024];
	int n, v;

	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(queue_schema_version(q, &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, queue_schema_latest);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), 0);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM schema_migrations",
	    NULL), nmigrations());
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* a fresh database named name (dropped first), as a conninfo */
static void
fresh_db(const char *name, char *conninfo, size_t sz)
{
	PGconn *c = pg(NULL);
	char sql[128];
	PGresult *r;

	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", name);
	PQclear(PQexec(c, sql));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	r = PQexec(c, sql);
	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	snprintf(conninfo, sz, "dbname=%s", name);
}

/* queue_hold on a database whose schema it does not know: -1 with err,
 * nothing stored */
static void
hold_refused(struct queue *q, const char *why)
{
	struct queue_post p;
	char err[1024];
	int64_t id;

	memset(&p, 0, sizeof(p));
	p.list = "schema";
	p.raw = (const unsigned char *)"a\n\nb\n";
	p.raw_len = 5;
	p.score = 0.99;
	p.verdict = "spam";
	p.status = "held";
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why) != NULL, "queue_hold: %s", err);
}

START_TEST(schema_missing_and_newer)
{
	struct queue *q;
	PGconn *c;
	PGresult *res;
	char ci[128], err[1024], sql[128];
	int n;

	fresh_db("lg_schema_test", ci, sizeof(ci));
	ck_assert_int_eq(queue_open(ci, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate migrate"));
	/* the hold checks the schema itself */
	hold_refused(q, "listgate migrate");
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(n, nmigrations());
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), 0);
	/* a later listgate migrated this database */
	c = pg("lg_schema_test");
	snprintf(sql, sizeof(sql), "INSERT INTO schema_migrations (version, "
	    "name) VALUES (%d, 'future')", queue_schema_latest + 1);
	PQclear(PQexec(c, sql));
	PQfinish(c);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "newer"));
	hold_refused(q, "newer");
	c = pg("lg_schema_test");
	res = PQexec(c, "SELECT count(*) FROM held_posts");
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "0");
	PQclear(res);
	PQfinish(c);
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "newer"));
	queue_close(q);
}
END_TEST

START_TEST(connect_failure)
{
	struct queue *q;
	char err[1024];

	ck_assert_int_eq(queue_open("host=/nonexistent-socket-dir port=1",
	    &q, err, sizeof(err)), -1);
	ck_assert_ptr_null(q);
	ck_assert_ptr_nonnull(strstr(err, "cannot connect"));
}
END_TEST

/* --- holding --------------------------------------------------------------- */

/* stores the exact bytes, listed once, hostile header text cleaned */
START_TEST(hold_roundtrip)
{
	struct queue *q = qopen();
	struct queue_row r;
	unsigned char *raw;
	size_t len;
	char err[1024];
	int64_t id;
	PGconn *c = pg(NULL);
	char idbuf[32];
	const char *vals[2];
	int lens[2] = { 0, 0 }, fmts[2] = { 0, 1 };
	PGresult *res;

	raw = binary_post(&len);
	/* invalid UTF-8 becomes U+FFFD; controls are kept (masked only
	 * on output) */
	id = hold(q, "hold-rt", raw, len,
	    "bad \xff\xfe utf-8 \x1b[1m\xe2\x80\xae \xc3");
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_uint_eq(r.raw_len, len);
	ck_assert_int_eq(memcmp(r.raw, raw, len), 0);
	ck_assert_str_eq(r.status, "held");
	ck_assert_str_eq(r.list, "hold-rt");
	ck_assert_str_eq(r.subject, "bad \xef\xbf\xbd\xef\xbf\xbd utf-8 "
	    "\x1b[1m\xe2\x80\xae \xef\xbf\xbd");
	ck_assert_int_eq(r.size, (int64_t)len);
	ck_assert(r.score > 0.92 && r.score < 0.94);
	ck_assert_int_eq(r.decided, 0);
	queue_row_free(&r);
	/* the stored digest is SHA-256 of the uncompressed bytes, and the
	 * stored bytes are compressed */
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	vals[0] = idbuf;
	vals[1] = (const char *)raw;
	lens[1] = (int)len;
	/* compared with PostgreSQL's own sha256() of the bytes sent */
	res = PQexecParams(c, "SELECT raw_sha256 = sha256($2::bytea), "
	    "length(raw_z) < size FROM held_posts WHERE id = $1::int8", 2,
	    NULL, vals, lens, fmts, 0);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "t");
	ck_assert_str_eq(PQgetvalue(res, 0, 1), "t");
	PQclear(res);
	ck_assert_int_eq(queue_get(q, id + 1000000, &r, err, sizeof(err)), 0);
	free(raw);
	PQfinish(c);
	queue_close(q);
}
END_TEST

static int
count_row(const struct queue_row *r, void *ctx)
{
	(void)r;
	(*(int *)ctx)++;
	return 0;
}

/* the moderators of the outbox of post id, in queue order, "a,b,..." */
static void
outbox_of(PGconn *c, int64_t id, char *out, size_t outsz)
{
	char idbuf[32];
	const char *vals[1] = { idbuf };
	PGresult *r;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	r = PQexecParams(c, "SELECT coalesce(string_agg(moderator, ',' ORDER "
	    "BY id), '') FROM notice_outbox WHERE post_id = $1::int8", 1,
	    NULL, vals, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	snprintf(out, outsz, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
}

/* a post's notices are queued all or none: one address the outbox
 * refuses queues no one; text that means something in an array
 * literal is stored as it is; a hold notice is queued once per
 * moderator */
START_TEST(moddb_queue_all_or_none)
{
	static const unsigned char raw[] = "Subject: x\n\nbody\n";
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	char err[1024], got[2048], longaddr[400];
	char *bad[4], *odd[5];
	int64_t id;

	id = hold(q, "moddb-q", raw, sizeof(raw) - 1, "x");
	memset(longaddr, 'x', 310);
	snprintf(longaddr + 310, sizeof(longaddr) - 310, "@example.org");
	bad[0] = "alice@example.org";
	bad[1] = longaddr;
	bad[2] = "bob@example.org";
	bad[3] = NULL;
	ck_assert_int_eq(moddb_queue(q, "moddb-q", id, bad, "hold", 0, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "notice_outbox_moderator_check") != NULL,
	    "%s", err);
	outbox_of(c, id, got, sizeof(got));
	ck_assert_msg(got[0] == '\0', "queued: %s", got);

	odd[0] = "a\"b\\c,{d} NULL@example.org";
	odd[1] = "bob@example.org";
	odd[2] = "NULL";
	odd[3] = "bob@example.org";
	odd[4] = NULL;
	ck_assert_int_eq(moddb_queue(q, "moddb-q", id, odd, "hold", 0, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(moddb_queue(q, "moddb-q", id, odd, "hold", 0, err,
	    sizeof(err)), 0);
	outbox_of(c, id, got, sizeof(got));
	ck_assert_str_eq(got, "a\"b\\c,{d} NULL@example.org,bob@example.org,"
	    "NULL");
	PQfinish(c);
	queue_close(q);
}
END_TEST

START_TEST(hold_list_and_discarded)
{
	struct queue *q = qopen();
	struct queue_post p;
	char err[1024];
	int64_t id;
	int n = 0;

	hold(q, "hold-ls", (const unsigned char *)"x\n\ny\n", 5, "one");
	hold(q, "hold-ls", (const unsigned char *)"x\n\nz\n", 5, "two");
	hold(q, "hold-ls2", (const unsigned char *)"x\n\nz\n", 5, "three");
	memset(&p, 0, sizeof(p));
	p.list = "hold-ls";
	p.raw = (const unsigned char *)"";
	p.score = 1.0;
	p.verdict = "spam";
	p.status = "discarded";
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)), 0);
	ck_assert_int_eq(queue_list(q, "held", "hold-ls", count_row, &n, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(n, 2);
	n = 0;
	ck_assert_int_eq(queue_list(q, "discarded", "hold-ls", count_row, &n,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(n, 1);
	/* a bad list name is refused by the schema */
	p.list = "../etc";
	p.status = "held";
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)), -1);
	queue_close(q);
}
END_TEST

/* hold p as is: the queue_hold result, the id in *id_r */
static int
hold_raw(struct queue *q, const char *list, const char *raw, size_t len,
    const char *status, int64_t *id_r)
{
	struct queue_post p;
	char err[1024];
	int r;

	memset(&p, 0, sizeof(p));
	p.list = list;
	p.raw = (const unsigned char *)raw;
	p.raw_len = len;
	p.score = 0.99;
	p.verdict = "spam";
	p.status = status;
	r = queue_hold(q, &p, id_r, err, sizeof(err));
	ck_assert_msg(r >= 0, "queue_hold: %s", err);
	return r;
}

/* a retried delivery (the same bytes) is stored once; a re-send (other
 * bytes) or the same bytes after a decision are new posts */
/* queue_decide with the old positional arguments; the post's list and
 * old status copied out when asked for, who decided before in last_by */
static char last_by[256];
static time_t last_at;

static int
decide(struct queue *q, int64_t id, const char *status, const char *by,
    const char *note, int flags, queue_release_fn release, void *ctx,
    char *list_r, char *old_r, char *err, size_t errsz)
{
	struct queue_decision d;
	struct queue_decided res;
	int r;

	memset(&d, 0, sizeof(d));
	d.id = id;
	d.status = status;
	d.by = by;
	d.note = note;
	d.flags = flags;
	d.release = release;
	d.ctx = ctx;
	r = queue_decide(q, &d, &res, err, errsz);
	if (list_r)
		snprintf(list_r, 80, "%s", res.list);
	if (old_r)
		snprintf(old_r, 16, "%s", res.old);
	snprintf(last_by, sizeof(last_by), "%s", res.by);
	last_at = res.at;
	return r;
}

START_TEST(hold_retry_stored_once)
{
	static const char a[] = "Received: by mx1\nSubject: s\n\nbody\n";
	static const char b[] = "Received: by mx2\nSubject: s\n\nbody\n";
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	char err[1024];
	int64_t id1, id2, id3, id4;

	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(hold_raw(q, "retry", a, sizeof(a) - 1, "held", &id1),
	    0);
	ck_assert_int_eq(hold_raw(q, "retry", a, sizeof(a) - 1, "held", &id2),
	    1);
	ck_assert_int_eq(id2, id1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1", "retry"), 1);
	/* one byte different: a second post */
	ck_assert_int_eq(hold_raw(q, "retry", b, sizeof(b) - 1, "held", &id3),
	    0);
	ck_assert_int_ne(id3, id1);
	/* the same bytes on another list: another post */
	ck_assert_int_eq(hold_raw(q, "retry2", a, sizeof(a) - 1, "held",
	    &id4), 0);
	ck_assert_int_ne(id4, id1);
	/* stored as discarded, a post takes no place in the queue */
	ck_assert_int_eq(hold_raw(q, "retry3", a, sizeof(a) - 1, "discarded",
	    &id2), 0);
	/* ... and is discarded once: the same bytes discarded again (a
	 * holder that answered late, a retry) find that row */
	ck_assert_int_eq(hold_raw(q, "retry3", a, sizeof(a) - 1, "discarded",
	    &id3), QUEUE_HELD_DISCARDED);
	ck_assert_int_eq(id3, id2);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1", "retry3"), 1);
	ck_assert_int_eq(hold_raw(q, "retry3", a, sizeof(a) - 1, "held",
	    &id4), 0);
	ck_assert_int_ne(id4, id2);
	/* held and discarded copies: a discarded post finds the discarded
	 * one, never the post still waiting for a moderator */
	ck_assert_int_eq(hold_raw(q, "retry3", a, sizeof(a) - 1, "discarded",
	    &id3), QUEUE_HELD_DISCARDED);
	ck_assert_int_eq(id3, id2);
	/* no moderator decides under the filter's name (the index would
	 * refuse the discard of a held copy of a discarded post) */
	ck_assert_int_eq(decide(q, id4, "discarded", QUEUE_FILTER_BY, NULL,
	    0, NULL, NULL, NULL, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "another name"));
	/* a moderator's discard of that held copy is not the filter's */
	ck_assert_int_eq(decide(q, id4, "discarded", "t", NULL, 0, NULL,
	    NULL, NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1 AND status = 'discarded'", "retry3"), 2);
	/* once decided, the same bytes again are a new post */
	ck_assert_int_eq(decide(q, id1, "approved", "t", NULL, 0,
	    rel_fn, &x, NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(hold_raw(q, "retry", a, sizeof(a) - 1, "held", &id2),
	    0);
	ck_assert_int_ne(id2, id1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1", "retry"), 3);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* hold raw for list remembering decisions for days: the queue_hold
 * result, the id in *id_r */
static int
hold_mem(struct queue *q, const char *list, const char *raw,
    unsigned days, int64_t *id_r)
{
	struct queue_post p;
	char err[1024];
	int r;

	memset(&p, 0, sizeof(p));
	p.list = list;
	p.raw = (const unsigned char *)raw;
	p.raw_len = strlen(raw);
	p.score = 0.99;
	p.verdict = "spam";
	p.status = "held";
	p.remember_days = days;
	r = queue_hold(q, &p, id_r, err, sizeof(err));
	ck_assert_msg(r >= 0, "queue_hold: %s", err);
	return r;
}

/* a retry after a moderator decided is answered from that decision
 * within the window: never stored (nor released) twice */
START_TEST(hold_remembers_decisions)
{
	static const char a[] = "Received: by mx1\nSubject: a\n\nbody\n";
	static const char b[] = "Received: by mx1\nSubject: b\n\nbody\n";
	static const char c[] = "Received: by mx1\nSubject: c\n\nbody\n";
	struct queue *q = qopen();
	PGconn *pc = pg(NULL);
	struct rel x;
	char err[1024];
	int64_t ida, idb, idc, id;

	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(hold_mem(q, "mem", a, 14, &ida), QUEUE_HELD_NEW);
	ck_assert_int_eq(hold_mem(q, "mem", a, 14, &id), QUEUE_HELD_PENDING);
	ck_assert_int_eq(id, ida);
	ck_assert_int_eq(queue_decided(q, "mem", (const unsigned char *)a,
	    strlen(a), -1, 14, &id, err, sizeof(err)), 0);
	/* approved (released once): the retry is answered, not stored */
	ck_assert_int_eq(decide(q, ida, "approved", "t", NULL, 0, rel_fn, &x,
	    NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(hold_mem(q, "mem", a, 14, &id), QUEUE_HELD_APPROVED);
	ck_assert_int_eq(id, ida);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_int_eq(queue_decided(q, "mem", (const unsigned char *)a,
	    strlen(a), -1, 14, &id, err, sizeof(err)), QUEUE_HELD_APPROVED);
	ck_assert_int_eq(id, ida);
	/* rejected, discarded */
	ck_assert_int_eq(hold_mem(q, "mem", b, 14, &idb), QUEUE_HELD_NEW);
	ck_assert_int_eq(decide(q, idb, "rejected", "t", NULL, 0, NULL, NULL,
	    NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(hold_mem(q, "mem", b, 14, &id), QUEUE_HELD_REJECTED);
	ck_assert_int_eq(id, idb);
	ck_assert_int_eq(hold_mem(q, "mem", c, 14, &idc), QUEUE_HELD_NEW);
	ck_assert_int_eq(decide(q, idc, "discarded", "t", NULL, 0, NULL, NULL,
	    NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(hold_mem(q, "mem", c, 14, &id),
	    QUEUE_HELD_DISCARDED);
	ck_assert_int_eq(pg_long(pc, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1", "mem"), 3);
	/* a forced change of mind is what a retry hears from then on */
	ck_assert_int_eq(decide(q, idb, "approved", "t", NULL, QUEUE_FORCE,
	    rel_fn, &x, NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(hold_mem(q, "mem", b, 14, &id), QUEUE_HELD_APPROVED);
	/* the same bytes on another list, or without a window: new posts */
	ck_assert_int_eq(hold_mem(q, "mem2", a, 14, &id), QUEUE_HELD_NEW);
	ck_assert_int_ne(id, ida);
	ck_assert_int_eq(hold_mem(q, "mem", a, 0, &id), QUEUE_HELD_NEW);
	ck_assert_int_ne(id, ida);
	/* past the window: a new post too */
	ck_assert_int_eq(pg_long(pc, "WITH u AS (UPDATE decided_posts SET "
	    "decided_at = now() - interval '15 days' WHERE list = $1 "
	    "RETURNING 1) SELECT count(*) FROM u", "mem"), 3);
	ck_assert_int_eq(hold_mem(q, "mem", c, 14, &id), QUEUE_HELD_NEW);
	ck_assert_int_ne(id, idc);
	ck_assert_int_eq(queue_decided(q, "mem", (const unsigned char *)b,
	    strlen(b), -1, 14, &id, err, sizeof(err)), 0);
	ck_assert_int_eq(queue_decided(q, "mem", (const unsigned char *)b,
	    strlen(b), -1, 16, &id, err, sizeof(err)), QUEUE_HELD_APPROVED);
	free(x.got);
	PQfinish(pc);
	queue_close(q);
}
END_TEST

/*
 * The window of remembered decisions is counted in days of 24 hours
 * whatever the connection's TimeZone (the server's timezone setting, or
 * PGTZ), as hold_expiry_days' expiry is: "now() - N days" in a zone with
 * a daylight-saving change in between was 23 or 25 hours off per change.
 * A zone and N with a change in between, a decision 24 x N hours and 30
 * minutes ago (or 30 minutes less, where the change went the other
 * way), seen through a connection in that zone.
 */
START_TEST(hold_window_days_are_24h)
{
	static const char a[] = "Received: by mx1\nSubject: tzw\n\nbody\n";
	PGconn *pc = pg(NULL);
	PGresult *res;
	struct queue *q;
	char err[1024], zone[64], nbuf[16], *saved;
	const char *vals[2];
	int64_t id, id2;
	unsigned n;
	int longer, want;

	/* the first zone and N with an offset N days ago unlike now's */
	res = PQexec(pc, "SELECT z, n, (t2 AT TIME ZONE z) - (t2 AT TIME "
	    "ZONE 'UTC') > (now() AT TIME ZONE z) - (now() AT TIME ZONE "
	    "'UTC') FROM unnest(ARRAY['America/New_York', 'Europe/Berlin', "
	    "'Australia/Sydney', 'Pacific/Auckland', 'America/Santiago']) "
	    "WITH ORDINALITY AS u(z, o), generate_series(2, 200) AS n, "
	    "LATERAL (SELECT now() - make_interval(hours => 24 * n)) AS "
	    "w(t2) WHERE (t2 AT TIME ZONE z) - (t2 AT TIME ZONE 'UTC') <> "
	    "(now() AT TIME ZONE z) - (now() AT TIME ZONE 'UTC') "
	    "ORDER BY o, n LIMIT 1");
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	if (PQntuples(res) == 0) {
		/* (no such change in 200 days: none of these zones keeps
		 * daylight-saving time any more) */
		PQclear(res);
		PQfinish(pc);
		return;
	}
	snprintf(zone, sizeof(zone), "%s", PQgetvalue(res, 0, 0));
	n = (unsigned)atoi(PQgetvalue(res, 0, 1));
	/* the zone's calendar day count back across the change is an hour
	 * longer than 24 x N hours (its offset then was larger) */
	longer = *PQgetvalue(res, 0, 2) == 't';
	PQclear(res);

	q = qopen();
	ck_assert_int_eq(hold_mem(q, "tzw", a, n, &id), QUEUE_HELD_NEW);
	ck_assert_int_eq(decide(q, id, "rejected", "t", NULL, 0, NULL, NULL,
	    NULL, NULL, err, sizeof(err)), QUEUE_DECIDED);
	queue_close(q);
	/* decided 24 x N hours and 30 minutes ago where the zone's days
	 * are longer (remembered there before, by an hour's error), 30
	 * minutes less where they are shorter (forgotten there before) */
	snprintf(nbuf, sizeof(nbuf), "%u", n);
	vals[0] = nbuf;
	vals[1] = longer ? "-30" : "30";
	res = PQexecParams(pc, "UPDATE decided_posts SET decided_at = now() - "
	    "make_interval(hours => 24 * $1::int4) + make_interval(mins => "
	    "$2::int4) WHERE list = 'tzw' RETURNING 1", 2, NULL, vals, NULL,
	    NULL, 0);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_int_eq(PQntuples(res), 1);
	PQclear(res);
	want = longer ? 0 : QUEUE_HELD_REJECTED;

	saved = getenv("PGTZ") ? strdup(getenv("PGTZ")) : NULL;
	setenv("PGTZ", zone, 1);
	q = qopen();
	ck_assert_msg(queue_decided(q, "tzw", (const unsigned char *)a,
	    strlen(a), -1, n, &id2, err, sizeof(err)) == want,
	    "TimeZone %s, %u days of 24 hours: the decision %s the window",
	    zone, n, longer ? "is past" : "is within");
	ck_assert_int_eq(hold_mem(q, "tzw", a, n, &id2), longer ?
	    QUEUE_HELD_NEW : QUEUE_HELD_REJECTED);
	queue_close(q);
	if (saved != NULL) {
		setenv("PGTZ", saved, 1);
		free(saved);
	} else
		unsetenv("PGTZ");
	PQfinish(pc);
}
END_TEST

/* n pseudo-random bytes (they barely compress) after a header */
static unsigned char *
noise_post(size_t n, unsigned seed)
{
	static const char hdr[] = "Subject: noise\n\n";
	unsigned char *p = malloc(n);
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	ck_assert_ptr_nonnull(p);
	memcpy(p, hdr, sizeof(hdr) - 1);
	for (i = sizeof(hdr) - 1; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)x;
	}
	return p;
}

/* a post larger than a chunk compressed goes through a large object,
 * from memory or from a file, and comes back byte for byte; a file
 * shorter than the size given fails the hold and leaves nothing */
START_TEST(hold_streams_large_posts)
{
	struct queue *q = qopen();
	PGconn *pc = pg(NULL);
	struct queue_post p;
	struct queue_row r;
	char err[1024];
	const size_t n = 3 * 1024 * 1024 + 17;
	unsigned char *a = noise_post(n, 1), *b = noise_post(n, 2);
	FILE *f = tmpfile();
	int64_t id;

	ck_assert_ptr_nonnull(f);
	memset(&p, 0, sizeof(p));
	p.list = "big";
	p.score = 0.99;
	p.verdict = "spam";
	p.status = "held";
	p.raw = a;
	p.raw_len = n;
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)),
	    QUEUE_HELD_NEW);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_uint_eq(r.raw_len, n);
	ck_assert(memcmp(r.raw, a, n) == 0);
	queue_row_free(&r);
	/* from a file, never through memory */
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fflush(f), 0);
	p.raw = NULL;
	p.raw_from_fd = 1;
	p.raw_fd = fileno(f);
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)),
	    QUEUE_HELD_NEW);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_uint_eq(r.raw_len, n);
	ck_assert(memcmp(r.raw, b, n) == 0);
	queue_row_free(&r);
	/* the same again: a retry, found by its SHA-256 */
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)),
	    QUEUE_HELD_PENDING);
	/* a file shorter than the post's size */
	p.raw_len = n + 5;
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "shorter"));
	ck_assert_int_eq(pg_long(pc, "SELECT count(*) FROM held_posts WHERE "
	    "list = $1", "big"), 2);
	ck_assert_int_eq(pg_long(pc, "SELECT count(*) FROM "
	    "pg_largeobject_metadata", NULL), 0);
	/* and the connection is still good */
	p.raw_from_fd = 0;
	p.raw = (const unsigned char *)"x\n\ny\n";
	p.raw_len = 5;
	ck_assert_int_eq(queue_hold(q, &p, &id, err, sizeof(err)),
	    QUEUE_HELD_NEW);
	fclose(f);
	free(a);
	free(b);
	PQfinish(pc);
	queue_close(q);
}
END_TEST

/* a fetch stays within its byte budget (16 MiB of stored bytes, each
 * post counted as far as it is fetched: the head tokenizing needs) and
 * hands out each post's head only */
START_TEST(journal_fetch_within_budget)
{
	struct queue *q = qopen();
	struct journal_fetch *f;
	struct journal_event ev;
	char err[1024];
	const size_t n = 3 * 1024 * 1024, scan = 1024 * 1024;
	unsigned char *a = noise_post(n, 7);
	int64_t last = 0;
	int i, rows;

	ck_assert_int_eq(journal_begin(q, "budget", err, sizeof(err)), 0);
	for (i = 0; i < 12; i++) {
		a[100] = (unsigned char)i;
		ck_assert_int_eq(journal_add(q, "budget", 1, 1, "manual", 0, a,
		    n, err, sizeof(err)), 0);
	}
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	/* about 2.1 MB fetched per post: 8 fit the budget */
	ck_assert_int_eq(journal_fetch_open(q, "budget", 0, 1024, scan, &f,
	    err, sizeof(err)), 0);
	for (rows = 0; journal_fetch_next(f, &ev, err, sizeof(err)) > 0;
	    rows++) {
		ck_assert_int_eq(ev.state, JOURNAL_APPLY);
		ck_assert_int_eq(ev.size, (int64_t)n);
		ck_assert_uint_eq(ev.len, scan + 1);
		ck_assert(memcmp(ev.raw, a, 100) == 0);
		ck_assert_int_eq(ev.raw[100], rows);
		ck_assert(memcmp(ev.raw + 101, a + 101, scan - 100) == 0);
		last = ev.id;
	}
	journal_fetch_close(f);
	ck_assert_int_eq(rows, 8);
	/* the next fetch goes on after them */
	ck_assert_int_eq(journal_fetch_open(q, "budget", last, 1024, scan, &f,
	    err, sizeof(err)), 0);
	for (rows = 0; journal_fetch_next(f, &ev, err, sizeof(err)) > 0;
	    rows++)
		ck_assert_int_eq(ev.raw[100], rows + 8);
	journal_fetch_close(f);
	ck_assert_int_eq(rows, 4);
	/* a scan limit beyond the posts: each comes whole */
	ck_assert_int_eq(journal_fetch_open(q, "budget", 0, 2, n, &f, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_fetch_next(f, &ev, err, sizeof(err)), 1);
	ck_assert_uint_eq(ev.len, n);
	ck_assert(memcmp(ev.raw + 101, a + 101, n - 101) == 0);
	journal_fetch_close(f);
	free(a);
	queue_close(q);
}
END_TEST

/* one connection's compressor and one fetch's decompressor serve every
 * post in turn: large noise, small text and empty posts mixed in one
 * batch each come back whole */
START_TEST(journal_codec_reused)
{
	struct queue *q = qopen();
	struct journal_fetch *f;
	struct journal_event ev;
	char err[1024], small[64];
	const size_t big = 300 * 1024;
	unsigned char *a = noise_post(big, 11);
	size_t len[30];
	int i, rows;

	ck_assert_int_eq(journal_begin(q, "codec", err, sizeof(err)), 0);
	for (i = 0; i < 30; i++) {
		const unsigned char *p = a;

		if (i % 3 == 0) {
			a[200] = (unsigned char)i;
			len[i] = big - (size_t)i;
		} else if (i % 3 == 1) {
			len[i] = (size_t)snprintf(small, sizeof(small),
			    "Subject: %d\n\nsmall %d\n", i, i);
			p = (const unsigned char *)small;
		} else
			len[i] = 0;
		ck_assert_int_eq(journal_add(q, "codec", 1, 1, "manual", 0, p,
		    len[i], err, sizeof(err)), 0);
	}
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_fetch_open(q, "codec", 0, 1024, big, &f,
	    err, sizeof(err)), 0);
	for (rows = 0; journal_fetch_next(f, &ev, err, sizeof(err)) > 0;
	    rows++) {
		ck_assert_int_lt(rows, 30);
		ck_assert_int_eq(ev.state, JOURNAL_APPLY);
		ck_assert_int_eq(ev.size, (int64_t)len[rows]);
		ck_assert_uint_eq(ev.len, len[rows]);
		if (rows % 3 == 0) {
			ck_assert(memcmp(ev.raw, a, 200) == 0);
			ck_assert_int_eq(ev.raw[200], rows);
			ck_assert(memcmp(ev.raw + 201, a + 201,
			    len[rows] - 201) == 0);
		} else if (rows % 3 == 1) {
			snprintf(small, sizeof(small), "Subject: %d\n\n"
			    "small %d\n", rows, rows);
			ck_assert(memcmp(ev.raw, small, len[rows]) == 0);
		}
	}
	journal_fetch_close(f);
	ck_assert_int_eq(rows, 30);
	free(a);
	queue_close(q);
}
END_TEST

/* a fresh database name (conninfo into ci) with the migrations before
 * version `below` applied as an older listgate left them; the number
 * applied, and a connection to it in *c_r */
static int
db_before(const char *name, int below, char *ci, size_t cisz, PGconn **c_r)
{
	PGconn *c;
	PGresult *res;
	char sql[256];
	int i;

	fresh_db(name, ci, cisz);
	c = pg(name);
	res = PQexec(c, "CREATE TABLE schema_migrations (version integer "
	    "PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL "
	    "DEFAULT now())");
	ck_assert_int_eq(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	for (i = 0; queue_migrations[i].name != NULL &&
	    queue_migrations[i].version < below; i++) {
		res = PQexec(c, queue_migrations[i].sql);
		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s",
		    queue_migrations[i].name, PQresultErrorMessage(res));
		PQclear(res);
		snprintf(sql, sizeof(sql), "INSERT INTO schema_migrations "
		    "(version, name) VALUES (%d, '%s')",
		    queue_migrations[i].version, queue_migrations[i].name);
		res = PQexec(c, sql);
		ck_assert_int_eq(PQresultStatus(res), PGRES_COMMAND_OK);
		PQclear(res);
	}
	*c_r = c;
	return i;
}

/* migration 0002 on a 0001 database that already stored a retry twice:
 * the copies are set aside (expired, noted), the oldest stays held */
START_TEST(migrate_0002_sets_duplicates_aside)
{
	struct queue *q;
	PGconn *c;
	PGresult *res;
	char ci[128], err[1024];
	int64_t id;
	int n, v;

	ck_assert_str_eq(queue_migrations[0].name, "queue");
	ck_assert_int_ge(queue_schema_latest, 2);
	ck_assert_int_eq(db_before("lg_upgrade_test", 2, ci, sizeof(ci), &c),
	    1);
	res = PQexec(c, "INSERT INTO held_posts (list, size, score, verdict, "
	    "raw_z, raw_sha256) SELECT 'up', 1, 0.9, 'spam', 'x', sha256('x') "
	    "FROM generate_series(1, 3); "
	    "INSERT INTO held_posts (list, size, score, verdict, raw_z, "
	    "raw_sha256) VALUES ('up', 1, 0.9, 'spam', 'y', sha256('y'))");
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(res));
	PQclear(res);
	ck_assert_int_eq(queue_open(ci, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(queue_schema_version(q, &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), -1);
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(n, nmigrations() - 1);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), 0);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "status = 'held'", NULL), 2);
	ck_assert_int_eq(pg_long(c, "SELECT min(id) FROM held_posts WHERE "
	    "status = 'held'", NULL), 1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts WHERE "
	    "status = 'expired' AND decided_at IS NOT NULL AND note LIKE "
	    "'the same bytes as post 1 %'", NULL), 2);
	/* again: nothing to do */
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(n, 0);
	/* the new state is accepted, and the retry finds the kept post */
	ck_assert_int_eq(hold_raw(q, "up", "x", 1, "held", &id), 1);
	ck_assert_int_eq(id, 1);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* migration 0010 on a 0009 database where the filter stored a discarded
 * post twice: the later copies go, a moderator's discards stay, and the
 * same bytes discarded again find the copy kept */
START_TEST(migrate_0010_discards_once)
{
	struct queue *q;
	PGconn *c;
	PGresult *res;
	char ci[128], err[1024];
	int64_t id;
	int i, n;

	i = db_before("lg_upgrade_0010", 10, ci, sizeof(ci), &c);
	ck_assert_ptr_nonnull(queue_migrations[i].name);
	ck_assert_int_eq(queue_migrations[i].version, 10);
	/* ids 1-3: x discarded by the filter three times; 4: y once; 5: x
	 * on another list; 6, 7: x discarded by moderators */
	res = PQexec(c, "INSERT INTO held_posts (list, size, score, verdict, "
	    "raw_z, raw_sha256, status, decided_by, decided_at) "
	    "SELECT 'up', 1, 0.99, 'spam', 'x', sha256('x'), 'discarded', "
	    "'listgate filter', now() FROM generate_series(1, 3); "
	    "INSERT INTO held_posts (list, size, score, verdict, raw_z, "
	    "raw_sha256, status, decided_by, decided_at) VALUES "
	    "('up', 1, 0.99, 'spam', 'y', sha256('y'), 'discarded', "
	    "'listgate filter', now()), "
	    "('up2', 1, 0.99, 'spam', 'x', sha256('x'), 'discarded', "
	    "'listgate filter', now()), "
	    "('up', 1, 0.7, 'unsure', 'x', sha256('x'), 'discarded', "
	    "'alice', now()), "
	    "('up', 1, 0.7, 'unsure', 'x', sha256('x'), 'discarded', "
	    "'bob', now())");
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(res));
	PQclear(res);
	ck_assert_int_eq(queue_open(ci, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(queue_migrate(q, QUEUE_MIGRATE_LOCK_S, &n, NULL,
	    NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(n, nmigrations() - i);
	ck_assert_int_eq(queue_check_schema(q, err, sizeof(err)), 0);
	res = PQexec(c, "SELECT string_agg(id::text, ',' ORDER BY id) FROM "
	    "held_posts");
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "1,4,5,6,7");
	PQclear(res);
	/* the same bytes discarded again: the copy kept */
	ck_assert_int_eq(hold_raw(q, "up", "x", 1, "discarded", &id),
	    QUEUE_HELD_DISCARDED);
	ck_assert_int_eq(id, 1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM held_posts", NULL),
	    5);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* --- decisions ------------------------------------------------------------- */

START_TEST(approve_releases_exact_bytes_once)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	unsigned char *raw;
	size_t len;
	char err[1024], list[80], old[16];
	int64_t id;

	memset(&x, 0, sizeof(x));
	raw = binary_post(&len);
	id = hold(q, "dec-ap", raw, len, "s");
	ck_assert_int_eq(decide(q, id, "approved", "tester", "ok", 0,
	    rel_fn, &x, list, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_str_eq(list, "dec-ap");
	ck_assert_str_eq(old, "held");
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_uint_eq(x.len, len);
	ck_assert_int_eq(memcmp(x.got, raw, len), 0);
	ck_assert_int_eq(net(c, "dec-ap", "ham"), 1);
	/* again: nothing changes, nothing is released */
	ck_assert_int_eq(decide(q, id, "approved", "tester", NULL, 0,
	    rel_fn, &x, list, old, err, sizeof(err)), QUEUE_ALREADY);
	ck_assert_int_eq(decide(q, id, "approved", "tester", NULL, 1,
	    rel_fn, &x, list, old, err, sizeof(err)), QUEUE_ALREADY);
	ck_assert_str_eq(old, "approved");
	/* who decided, and when, for the moderator who came too late */
	ck_assert_str_eq(last_by, "tester");
	ck_assert(last_at > time(NULL) - 600 && last_at <= time(NULL) + 5);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_int_eq(net(c, "dec-ap", "ham"), 1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "dec-ap"), 1);
	/* reject without force: refused */
	ck_assert_int_eq(decide(q, id, "rejected", "tester", NULL, 0,
	    NULL, NULL, list, old, err, sizeof(err)), QUEUE_ALREADY);
	ck_assert_int_eq(net(c, "dec-ap", "spam"), 0);
	ck_assert_int_eq(decide(q, id + 1000000, "approved", "t", NULL,
	    0, rel_fn, &x, list, old, err, sizeof(err)), QUEUE_NOENT);
	free(x.got);
	free(raw);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* the list the decider expects is checked under the post's lock: a post
 * of another list under that id (reused after a restore) is left alone,
 * released by nobody, and nothing of it is told but its list */
START_TEST(decide_refuses_another_lists_post)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct queue_decision d;
	struct queue_decided res;
	struct queue_row r;
	struct rel x;
	char err[1024];
	int64_t id;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-ol", (const unsigned char *)"a\n\nb\n", 5, "s");
	memset(&d, 0, sizeof(d));
	d.id = id;
	d.status = "approved";
	d.by = "tester";
	d.release = rel_fn;
	d.ctx = &x;
	d.list = "dec-ol2";
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_OTHER_LIST);
	ck_assert_str_eq(res.list, "dec-ol");
	ck_assert_str_eq(res.old, "");
	ck_assert_int_eq(x.ncalls, 0);
	d.status = "rejected";
	d.release = NULL;
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_OTHER_LIST);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "held");
	queue_row_free(&r);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "dec-ol"), 0);
	/* its own list decides it */
	d.status = "approved";
	d.release = rel_fn;
	d.list = "dec-ol";
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_DECIDED);
	ck_assert_int_eq(x.ncalls, 1);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* the post the decider expects (a moderation cookie's: its SHA-256) is
 * checked under the post's lock too: another post under that id is left
 * alone; the post's own SHA-256, as queue_post_sha and queue_list give
 * it, decides it */
START_TEST(decide_refuses_another_post)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct queue_decision d;
	struct queue_decided res;
	struct queue_row r;
	struct rel x;
	unsigned char sha[32], other[32];
	char err[1024], list[80];
	int64_t id;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-op", (const unsigned char *)"a\n\nc\n", 5, "s");
	ck_assert_int_eq(queue_post_sha(q, id, list, sizeof(list), sha, err,
	    sizeof(err)), 1);
	ck_assert_str_eq(list, "dec-op");
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert(memcmp(r.raw_sha256, sha, 32) == 0);
	queue_row_free(&r);
	ck_assert_int_eq(queue_post_sha(q, id + 1000000, list, sizeof(list),
	    other, err, sizeof(err)), 0);
	memcpy(other, sha, 32);
	other[0] ^= 1;
	memset(&d, 0, sizeof(d));
	d.id = id;
	d.status = "approved";
	d.by = "tester";
	d.release = rel_fn;
	d.ctx = &x;
	d.list = "dec-op";
	d.raw_sha256 = other;
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_OTHER_POST);
	ck_assert_int_eq(x.ncalls, 0);
	d.status = "rejected";
	d.release = NULL;
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_OTHER_POST);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "held");
	queue_row_free(&r);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "dec-op"), 0);
	d.status = "approved";
	d.release = rel_fn;
	d.raw_sha256 = sha;
	ck_assert_int_eq(queue_decide(q, &d, &res, err, sizeof(err)),
	    QUEUE_DECIDED);
	ck_assert_int_eq(x.ncalls, 1);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

START_TEST(release_failure_keeps_post_held)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	struct queue_row r;
	char err[1024], old[16];
	int64_t id;

	memset(&x, 0, sizeof(x));
	x.fail = 1;
	id = hold(q, "dec-rf", (const unsigned char *)"a\n\nb\n", 5, "s");
	ck_assert_int_eq(decide(q, id, "approved", "tester", NULL, 0,
	    rel_fn, &x, NULL, old, err, sizeof(err)), QUEUE_RELEASE_FAILED);
	ck_assert_ptr_nonnull(strstr(err, "refused"));
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "held");
	queue_row_free(&r);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "dec-rf"), 0);
	x.fail = 0;
	ck_assert_int_eq(decide(q, id, "approved", "tester", NULL, 0,
	    rel_fn, &x, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(net(c, "dec-rf", "ham"), 1);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

START_TEST(force_changes_training)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	struct queue_row r;
	char err[1024], old[16];
	int64_t id;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-fc", (const unsigned char *)"a\n\nb\n", 5, "s");
	ck_assert_int_eq(decide(q, id, "rejected", "mod1", NULL, 0, NULL,
	    NULL, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(net(c, "dec-fc", "spam"), 1);
	ck_assert_int_eq(decide(q, id, "approved", "mod2", "oops", 1,
	    rel_fn, &x, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_str_eq(old, "rejected");
	ck_assert_int_eq(net(c, "dec-fc", "spam"), 0);
	ck_assert_int_eq(net(c, "dec-fc", "ham"), 1);
	ck_assert_int_eq(x.ncalls, 1);
	/* forced to expired: no training remains */
	ck_assert_int_eq(decide(q, id, "expired", "mod3", NULL, 1, NULL,
	    NULL, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(net(c, "dec-fc", "spam"), 0);
	ck_assert_int_eq(net(c, "dec-fc", "ham"), 0);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "expired");
	ck_assert_str_eq(r.decided_by, "mod3");
	ck_assert_int_gt(r.decided, 0);
	queue_row_free(&r);
	ck_assert_int_eq(decide(q, id, "bogus", "m", NULL, 1, NULL,
	    NULL, NULL, old, err, sizeof(err)), -1);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* the connection drops after the release command succeeded: the post
 * stays 'releasing', a plain approve does not release it again, and
 * --mark-approved (QUEUE_MARK_ONLY) records it without releasing */
START_TEST(interrupted_approve_not_released_twice)
{
	struct queue *q = qopen(), *q2;
	PGconn *c = pg(NULL);
	struct rel x;
	char err[1024], old[16];
	int64_t id, id2;
	int n = 0;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-int", (const unsigned char *)"a\n\nb\n", 5, "s");
	x.kill = q;
	x.takeover = 1;
	ck_assert_int_eq(decide(q, id, "approved", "m1", NULL, 0, rel_fn,
	    &x, NULL, old, err, sizeof(err)), QUEUE_UNRECORDED);
	queue_close(q);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_str_eq(status_of(c, id), "releasing");
	ck_assert_int_eq(net(c, "dec-int", "ham"), 0);
	/* listed as pending, not as held */
	q2 = qopen();
	ck_assert_int_eq(queue_list(q2, "pending", "dec-int", count_row, &n,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(n, 1);
	n = 0;
	ck_assert_int_eq(queue_list(q2, "held", "dec-int", count_row, &n,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(n, 0);
	/* a retry of the same bytes finds it */
	ck_assert_int_eq(hold_raw(q2, "dec-int", "a\n\nb\n", 5, "held", &id2),
	    1);
	ck_assert_int_eq(id2, id);
	/* approve again: refused, nothing released */
	ck_assert_int_eq(decide(q2, id, "approved", "m2", NULL, 0, rel_fn,
	    &x, NULL, old, err, sizeof(err)), QUEUE_INTERRUPTED);
	ck_assert_str_eq(old, "releasing");
	ck_assert_int_eq(decide(q2, id, "rejected", "m2", NULL, 0, NULL,
	    NULL, NULL, old, err, sizeof(err)), QUEUE_INTERRUPTED);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_str_eq(status_of(c, id), "releasing");
	/* --mark-approved: recorded and learnt, not released */
	ck_assert_int_eq(decide(q2, id, "approved", "m2", "in archive",
	    QUEUE_MARK_ONLY, rel_fn, &x, NULL, old, err, sizeof(err)),
	    QUEUE_DECIDED);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_str_eq(status_of(c, id), "approved");
	ck_assert_int_eq(net(c, "dec-int", "ham"), 1);
	/* --mark-approved is only for an interrupted release */
	id2 = hold(q2, "dec-int", (const unsigned char *)"c\n\nd\n", 5, "s");
	ck_assert_int_eq(decide(q2, id2, "approved", "m2", NULL,
	    QUEUE_MARK_ONLY, rel_fn, &x, NULL, old, err, sizeof(err)),
	    QUEUE_NOT_INTERRUPTED);
	ck_assert_str_eq(status_of(c, id2), "held");
	ck_assert_int_eq(decide(q2, id2, "rejected", "m2", NULL,
	    QUEUE_MARK_ONLY, NULL, NULL, NULL, old, err, sizeof(err)), -1);
	free(x.got);
	PQfinish(c);
	queue_close(q2);
}
END_TEST

/* the connections drop during the release (a server restart): the
 * approval connects again and records what the release did */
START_TEST(lost_connection_recorded_again)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	char err[1024], old[16];
	int64_t id;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-lost", (const unsigned char *)"a\n\nb\n", 5, "s");
	x.kill = q;
	ck_assert_int_eq(decide(q, id, "approved", "m1", NULL, 0, rel_fn,
	    &x, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(x.ncalls, 1);
	ck_assert_str_eq(status_of(c, id), "approved");
	ck_assert_int_eq(net(c, "dec-lost", "ham"), 1);
	queue_close(q);
	/* a release that failed: held again, nothing learnt */
	q = qopen();
	id = hold(q, "dec-lost", (const unsigned char *)"c\n\nd\n", 5, "s");
	x.kill = q;
	x.fail = 1;
	ck_assert_int_eq(decide(q, id, "approved", "m1", NULL, 0, rel_fn,
	    &x, NULL, old, err, sizeof(err)), QUEUE_RELEASE_FAILED);
	ck_assert_ptr_null(strstr(err, "stays 'releasing'"));
	ck_assert_int_eq(x.ncalls, 2);
	ck_assert_str_eq(status_of(c, id), "held");
	ck_assert_int_eq(net(c, "dec-lost", "ham"), 1);
	free(x.got);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* --force releases a 'releasing' post again, once */
START_TEST(interrupted_approve_force_releases_again)
{
	struct queue *q = qopen(), *q2;
	PGconn *c = pg(NULL);
	struct rel x;
	char err[1024], old[16];
	int64_t id;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-intf", (const unsigned char *)"a\n\nb\n", 5, "s");
	x.kill = q;
	x.takeover = 1;
	ck_assert_int_eq(decide(q, id, "approved", "m1", NULL, 0, rel_fn,
	    &x, NULL, old, err, sizeof(err)), QUEUE_UNRECORDED);
	queue_close(q);
	q2 = qopen();
	ck_assert_int_eq(decide(q2, id, "approved", "m2", NULL,
	    QUEUE_FORCE, rel_fn, &x, NULL, old, err, sizeof(err)),
	    QUEUE_DECIDED);
	ck_assert_str_eq(old, "releasing");
	ck_assert_int_eq(x.ncalls, 2);
	ck_assert_str_eq(status_of(c, id), "approved");
	ck_assert_int_eq(net(c, "dec-intf", "ham"), 1);
	ck_assert_int_eq(decide(q2, id, "approved", "m2", NULL,
	    QUEUE_FORCE, rel_fn, &x, NULL, old, err, sizeof(err)),
	    QUEUE_ALREADY);
	ck_assert_int_eq(x.ncalls, 2);
	free(x.got);
	PQfinish(c);
	queue_close(q2);
}
END_TEST

/* a release that stores the same bytes as discarded again (a retry of
 * the post: one being released is not in migration 0010's index), then
 * fails */
static int
rel_rediscard(const struct queue_row *r, void *ctx, char *err,
    size_t errsz)
{
	struct queue *q2 = qopen();
	int64_t id;

	(void)ctx;
	ck_assert_int_eq(hold_raw(q2, r->list, (const char *)r->raw,
	    r->raw_len, "discarded", &id), QUEUE_HELD_NEW);
	queue_close(q2);
	snprintf(err, errsz, "release refused (test)");
	return -1;
}

/* a forced approval of a post the filter discarded, whose bytes are
 * discarded again while it is being released and whose release fails:
 * it cannot go back beside that copy, so it is set aside (expired, with
 * a note), not left 'releasing' */
START_TEST(release_failure_beside_a_new_discard)
{
	static const char a[] = "Received: by mx9\nSubject: d\n\nbody\n";
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct queue_row r;
	char err[1024], old[16], note[96];
	int64_t id, id2;

	ck_assert_int_eq(hold_raw(q, "dec-rd", a, sizeof(a) - 1, "discarded",
	    &id), QUEUE_HELD_NEW);
	ck_assert_int_eq(decide(q, id, "approved", "mod2", NULL,
	    QUEUE_FORCE, rel_rediscard, NULL, NULL, old, err, sizeof(err)),
	    QUEUE_RELEASE_FAILED);
	ck_assert_msg(strstr(err, "releasing") == NULL, "%s", err);
	id2 = pg_long(c, "SELECT max(id) FROM held_posts WHERE list = $1",
	    "dec-rd");
	ck_assert_int_ne(id2, id);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "expired");
	snprintf(note, sizeof(note), "the same bytes as post %lld ",
	    (long long)id2);
	ck_assert_msg(strncmp(r.note, note, strlen(note)) == 0, "%s", r.note);
	queue_row_free(&r);
	ck_assert_str_eq(status_of(c, id2), "discarded");
	/* and the copy answers the next retry */
	ck_assert_int_eq(hold_raw(q, "dec-rd", a, sizeof(a) - 1, "discarded",
	    &id), QUEUE_HELD_DISCARDED);
	ck_assert_int_eq(id, id2);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* a forced approval of a rejected post whose release fails leaves it
 * rejected as it was (who, when, note) */
START_TEST(release_failure_restores_old_decision)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	struct rel x;
	struct queue_row r;
	char err[1024], old[16];
	int64_t id;
	time_t when;

	memset(&x, 0, sizeof(x));
	id = hold(q, "dec-rr", (const unsigned char *)"a\n\nb\n", 5, "s");
	ck_assert_int_eq(decide(q, id, "rejected", "mod1", "spammy", 0,
	    NULL, NULL, NULL, old, err, sizeof(err)), QUEUE_DECIDED);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	when = r.decided;
	queue_row_free(&r);
	x.fail = 1;
	ck_assert_int_eq(decide(q, id, "approved", "mod2", NULL,
	    QUEUE_FORCE, rel_fn, &x, NULL, old, err, sizeof(err)),
	    QUEUE_RELEASE_FAILED);
	ck_assert_int_eq(queue_get(q, id, &r, err, sizeof(err)), 1);
	ck_assert_str_eq(r.status, "rejected");
	ck_assert_str_eq(r.decided_by, "mod1");
	ck_assert_str_eq(r.note, "spammy");
	ck_assert_int_eq(r.decided, when);
	queue_row_free(&r);
	ck_assert_int_eq(net(c, "dec-rr", "spam"), 1);
	ck_assert_int_eq(net(c, "dec-rr", "ham"), 0);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* --- journal ----------------------------------------------------------------- */

START_TEST(sync_apply_exactly_once)
{
	struct queue *q = qopen();
	struct sync_stats st;
	struct posttok pt;
	struct tokdb *db;
	char dir[256], path[300], err[1024], post[200];
	uint32_t ns, nh;
	int i;

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jr.kch", dir);
	ck_assert_int_eq(posttok_init(&pt, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_begin(q, "jr", err, sizeof(err)), 0);
	for (i = 0; i < 2400; i++) {
		snprintf(post, sizeof(post), "Subject: post %d\n\nword%d "
		    "common words here\n", i, i);
		ck_assert_int_eq(journal_add(q, "jr", i % 3 == 0, 1, "manual", 0,
		    (const unsigned char *)post, strlen(post), err,
		    sizeof(err)), 0);
	}
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	/* a rolled-back batch leaves nothing */
	ck_assert_int_eq(journal_begin(q, "jr", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "jr", 1, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	journal_rollback(q);
	/* a new file is built privately, in one batch */
	ck_assert_int_eq(sync_apply(q, "jr", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 2400);
	ck_assert_uint_eq(st.nbatches, 1);
	ck_assert_int_eq(sync_apply(q, "jr", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	ck_assert_int_eq(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 800);
	ck_assert_uint_eq(nh, 1600);
	tokdb_close(db);
	/* an existing file: a first batch in a transaction, then (there were
	 * more) the rest in bulk; each event once */
	ck_assert_int_eq(journal_begin(q, "jr", err, sizeof(err)), 0);
	for (i = 0; i < 40; i++) {
		snprintf(post, sizeof(post), "Subject: more %d\n\nmore%d\n", i,
		    i);
		ck_assert_int_eq(journal_add(q, "jr", 1, 1, "manual", 0,
		    (const unsigned char *)post, strlen(post), err,
		    sizeof(err)), 0);
	}
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	ck_assert_int_eq(sync_apply(q, "jr", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 40);
	ck_assert_uint_eq(st.nbatches, 2);
	ck_assert_int_eq(sync_apply(q, "jr", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	ck_assert_int_eq(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 840);
	ck_assert_uint_eq(nh, 1600);
	tokdb_close(db);
	/* unlearn events undo */
	ck_assert_int_eq(journal_begin(q, "jr", err, sizeof(err)), 0);
	snprintf(post, sizeof(post), "Subject: post %d\n\nword%d "
	    "common words here\n", 0, 0);
	ck_assert_int_eq(journal_add(q, "jr", 1, -1, "manual", 0,
	    (const unsigned char *)post, strlen(post), err, sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	ck_assert_int_eq(sync_apply(q, "jr", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 1);
	ck_assert_int_eq(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 839);
	tokdb_close(db);
	unlink(path);
	snprintf(path, sizeof(path), "%s/jr.kch.wal", dir);
	unlink(path);
	rmdir(dir);
	queue_close(q);
}
END_TEST

/* every token record of the file at path, sorted: a dump to compare */
struct dump {
	char *text;
	size_t len, cap;
};

static int
dump_fn(uint64_t key, const struct tokcount *c, void *ctx)
{
	struct dump *d = ctx;
	char line[80];
	int n = snprintf(line, sizeof(line), "%016llx %u %u %u\n",
	    (unsigned long long)key, c->spam, c->ham, c->day);

	if (d->len + (size_t)n + 1 > d->cap) {
		d->cap = (d->cap + (size_t)n + 1) * 2;
		ck_assert_ptr_nonnull(d->text = realloc(d->text, d->cap));
	}
	memcpy(d->text + d->len, line, (size_t)n + 1);
	d->len += (size_t)n;
	return 0;
}

static int
cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* remove a token file and its write-ahead log */
static void
rm_kch(const char *path)
{
	char wal[400];

	unlink(path);
	snprintf(wal, sizeof(wal), "%s.wal", path);
	unlink(wal);
}

/* the file's records sorted, its message counts and position, as text
 * (freed by the caller) */
static char *
dump_file(const char *path)
{
	struct dump d = { NULL, 0, 0 };
	struct tokdb *db;
	char err[1024], **lines, *out, *p, head[128];
	uint32_t ns, nh;
	int64_t pos;
	size_t n = 0, i, len;

	ck_assert_msg(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(tokdb_iterate(db, dump_fn, &d), 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_int_eq(tokdb_get_pos(db, &pos), 0);
	tokdb_close(db);
	snprintf(head, sizeof(head), "spam %u ham %u pos %lld\n", ns, nh,
	    (long long)pos);
	for (p = d.text; p != NULL && *p; p = strchr(p, '\n') + 1)
		n++;
	ck_assert_ptr_nonnull(lines = calloc(n + 1, sizeof(*lines)));
	for (i = 0, p = d.text; i < n; i++, p = strchr(p, '\n') + 1)
		lines[i] = p;
	for (i = 0; i < n; i++)
		*strchr(lines[i], '\n') = 0;
	qsort(lines, n, sizeof(*lines), cmp_lines);
	len = strlen(head) + d.len + 1;
	ck_assert_ptr_nonnull(out = malloc(len));
	strcpy(out, head);
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	free(lines);
	free(d.text);
	return out;
}

/* train n posts of list through the journal back end, following the
 * token file at path (posts numbered from first) */
static void
train_follow(struct queue *q, const char *list, const char *path,
    struct posttok *pt, int spam, int first, int n, int kill)
{
	struct trainer *t;
	char err[1024], post[200];
	int i, r, pid = kill ? backend_pid(q) : 0;

	ck_assert_int_eq(trainer_open_journal(&t, q, list, spam, 1, path,
	    10000, pt, err, sizeof(err)), 0);
	for (i = first; i < first + n; i++) {
		snprintf(post, sizeof(post), "Subject: post %d\n\nword%d "
		    "common %s words\n", i, i, spam ? "spammy" : "hammy");
		ck_assert_int_eq(trainer_post(t, NULL, (const unsigned char *)post,
		    strlen(post), err, sizeof(err)), 0);
	}
	if (kill)
		kill_backend(pid);
	r = trainer_finish(t, err, sizeof(err));
	ck_assert_int_eq(r, kill ? -1 : 0);
	if (!kill)
		ck_assert_msg(trainer_warning(t) == NULL, "%s",
		    trainer_warning(t));
	trainer_free(t);
}

/*
 * Training through the journal learns into the token file alongside
 * when the file is at the list's newest event: the file is then what
 * sync (and a rebuild) makes of the journal, and sync finds nothing
 * left.  A file behind the journal is left to sync; a batch whose
 * commit fails leaves the file as it was.
 */
START_TEST(train_follows_token_file)
{
	struct queue *q = qopen();
	struct sync_stats st;
	struct posttok pt;
	char dir[256], path[300], rpath[300], err[1024], *a, *b;
	int64_t last;

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fw.kch", dir);
	snprintf(rpath, sizeof(rpath), "%s/rebuilt.kch", dir);
	ck_assert_int_eq(posttok_init(&pt, NULL, NULL, err, sizeof(err)), 0);

	/* no file, no events: a new file, put in place */
	train_follow(q, "fw", path, &pt, 0, 0, 40, 0);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(journal_last_id(q, "fw", &last, err, sizeof(err)),
	    0);
	a = dump_file(path);
	ck_assert_ptr_nonnull(strstr(a, "spam 0 ham 40 "));
	ck_assert_int_eq(sync_apply(q, "fw", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	ck_assert_int_eq(st.pos, last);
	free(a);
	/* an up-to-date file: its private copy published */
	train_follow(q, "fw", path, &pt, 1, 40, 25, 0);
	ck_assert_int_eq(sync_apply(q, "fw", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	ck_assert_int_eq(sync_apply(q, "fw", rpath, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 65);
	a = dump_file(path);
	b = dump_file(rpath);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "spam 25 ham 40 "));
	free(a);
	free(b);
	/* the database gone before the commit: nothing published */
	a = dump_file(path);
	train_follow(q, "fw", path, &pt, 1, 65, 10, 1);
	queue_close(q);
	q = qopen();
	b = dump_file(path);
	ck_assert_str_eq(a, b);
	free(b);
	ck_assert_int_eq(sync_apply(q, "fw", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	/* a file behind the journal (events sync has not applied) is not
	 * followed: sync applies the old events and the new */
	ck_assert_int_eq(journal_begin(q, "fw", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "fw", 1, 1, "manual", 0,
	    (const unsigned char *)"Subject: pending\n\npending\n", 26, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	train_follow(q, "fw", path, &pt, 0, 75, 5, 0);
	b = dump_file(path);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	ck_assert_int_eq(sync_apply(q, "fw", path, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 6);
	ck_assert_int_eq(sync_apply(q, "fw", rpath, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 6);
	a = dump_file(path);
	b = dump_file(rpath);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "spam 26 ham 45 "));
	free(a);
	free(b);
	/* a list with events but no file: left to sync (which builds it
	 * whole from the journal) */
	unlink(path);
	train_follow(q, "fw", path, &pt, 0, 80, 3, 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	rm_kch(path);
	rm_kch(rpath);
	ck_assert_int_eq(rmdir(dir), 0);
	queue_close(q);
}
END_TEST

/* the counts of token text in the file at path */
static struct tokcount
file_count(const char *path, const char *tok)
{
	struct tokdb *db;
	struct tokcount c;
	char err[1024];

	ck_assert_msg(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_ge(tokdb_get(db, tok, strlen(tok), &c), 0);
	tokdb_close(db);
	return c;
}

/* the feature families the file at path records: the bitmask, or -1
 * when it records none */
static long
file_feats(const char *path)
{
	struct tokdb *db;
	char err[1024];
	uint32_t f;
	int r;

	ck_assert_msg(tokdb_open(path, TOKDB_READ, 1000, &db, err,
	    sizeof(err)) == 0, "%s", err);
	r = tokdb_get_feats(db, &f);
	tokdb_close(db);
	ck_assert_int_ge(r, 0);
	return r > 0 ? (long)f : -1;
}

/* n posts of list, spam, numbered from first, through a trainer that
 * connects by itself (trainer_open_journal_conn) to conninfo: 0, or -1
 * with err from whichever call failed */
static int
train_conn(const char *conninfo, const char *list, const char *path,
    struct posttok *pt, int first, int n, char *err, size_t errsz)
{
	struct trainer *t;
	char post[200];
	int i, r = 0;

	if (trainer_open_journal_conn(&t, conninfo, list, 1, 1, path, 10000,
	    pt, err, errsz) < 0) {
		ck_assert_ptr_null(t);
		return -1;
	}
	for (i = first; i < first + n && r == 0; i++) {
		snprintf(post, sizeof(post), "Subject: post %d\n\nword%d "
		    "common spammy words\n", i, i);
		r = trainer_post(t, "post-name", (const unsigned char *)post,
		    strlen(post), err, errsz);
	}
	if (r == 0)
		r = trainer_finish(t, err, errsz);
	ck_assert(r < 0 ? trainer_queue(t) == NULL :
	    trainer_queue(t) != NULL);
	if (r == 0)
		ck_assert_msg(trainer_warning(t) == NULL, "%s",
		    trainer_warning(t));
	trainer_free(t);
	return r;
}

/*
 * A trainer that connects by itself does it in a thread while the pool
 * tokenizes the first posts (more than the pool's usual 16 wait): it
 * journals and follows as one given a connection, whatever the number
 * of posts; a database it cannot reach fails the training with the
 * connection's error (not a post's), and nothing is journaled; a file
 * built with word pairs the list no longer makes is followed all the
 * same.
 */
START_TEST(train_connects_meanwhile)
{
	struct queue *q = qopen();
	struct sync_stats st;
	struct posttok pt, on;
	const char *bad = "host=/nonexistent-socket-dir port=1";
	char dir[256], path[300], rpath[300], err[1024], *a, *b;
	int64_t last, last2;
	int threads;

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cw.kch", dir);
	snprintf(rpath, sizeof(rpath), "%s/rebuilt.kch", dir);
	ck_assert_int_eq(posttok_init(&pt, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(posttok_init(&on, NULL, NULL, err, sizeof(err)), 0);
	on.to.bigrams = on.list_bigrams = 1;
	for (threads = 0; threads <= 2; threads += 2) {
		setenv("LISTGATE_TRAIN_THREADS", threads ? "2" : "0", 1);
		/* a new file, then an old one; 1, 3 and 300 posts */
		ck_assert_msg(train_conn(NULL, "cw", path, &pt, 0, 300, err,
		    sizeof(err)) == 0, "%s", err);
		ck_assert_msg(train_conn(NULL, "cw", path, &pt, 300, 1, err,
		    sizeof(err)) == 0, "%s", err);
		ck_assert_msg(train_conn(NULL, "cw", path, &pt, 301, 3, err,
		    sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(sync_apply(q, "cw", path, 1, 1000, &pt, &st,
		    err, sizeof(err)), 0);
		ck_assert_uint_eq(st.nevents, 0);	/* followed */
		ck_assert_int_eq(sync_apply(q, "cw", rpath, 1, 1000, &pt, &st,
		    err, sizeof(err)), 0);
		ck_assert_uint_eq(st.nevents, 304 * (threads ? 2 : 1));
		a = dump_file(path);
		b = dump_file(rpath);
		ck_assert_str_eq(a, b);
		ck_assert_ptr_nonnull(strstr(a, threads ? "spam 608 ham 0 " :
		    "spam 304 ham 0 "));
		free(a);
		free(b);
		rm_kch(rpath);
		/* no database: its error, no post's; nothing journaled */
		ck_assert_int_eq(journal_last_id(q, "cw", &last, err,
		    sizeof(err)), 0);
		ck_assert_int_eq(train_conn(bad, "cw", path, &pt, 0, 3, err,
		    sizeof(err)), -1);
		ck_assert_msg(strncmp(err, "cannot connect", 14) == 0, "%s",
		    err);
		ck_assert_int_eq(train_conn(bad, "cw", path, &pt, 0, 300, err,
		    sizeof(err)), -1);
		ck_assert_msg(strncmp(err, "cannot connect", 14) == 0, "%s",
		    err);
		ck_assert_int_eq(journal_last_id(q, "cw", &last2, err,
		    sizeof(err)), 0);
		ck_assert_int_eq(last, last2);
	}
	/* a file with word pairs, the list without: the pool makes them
	 * as the file was built, and the file follows (sync finds nothing
	 * left); pt is the list's again after */
	ck_assert_int_eq(sync_apply(q, "cp", rpath, 1, 1000, &on, &st, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(file_feats(rpath), TOKDB_FEAT_PAIRS);
	ck_assert_msg(train_conn(NULL, "cp", rpath, &pt, 0, 40, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(pt.to.bigrams, 0);
	ck_assert_uint_eq(file_count(rpath, "common").spam, 40);
	ck_assert_uint_eq(file_count(rpath, "bi:common spammy").spam, 40);
	ck_assert_int_eq(sync_apply(q, "cp", rpath, 1, 1000, &pt, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	unsetenv("LISTGATE_TRAIN_THREADS");
	rm_kch(path);
	rm_kch(rpath);
	ck_assert_int_eq(rmdir(dir), 0);
	queue_close(q);
}
END_TEST

/*
 * A trainer that connects by itself and is aborted before anything
 * waited for its connection does not begin following the token file
 * on its way out (a private copy made only to be dropped): here the
 * file is held by a replacer (its flock), which the follower would have
 * waited a second for.  Nothing is journaled.
 */
START_TEST(train_abort_before_connection_follows_nothing)
{
	struct queue *q = qopen();
	struct trainer *t;
	struct posttok pt;
	char dir[256], path[300], err[1024];
	int64_t last, last2;
	double start;
	int fd, i;

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ab.kch", dir);
	ck_assert_int_eq(posttok_init(&pt, NULL, NULL, err, sizeof(err)), 0);
	setenv("LISTGATE_TRAIN_THREADS", "2", 1);
	ck_assert_msg(train_conn(NULL, "ab", path, &pt, 0, 3, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(journal_last_id(q, "ab", &last, err, sizeof(err)),
	    0);
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(trainer_open_journal_conn(&t, NULL, "ab", 1, 1,
	    path, 10000, &pt, err, sizeof(err)), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(trainer_post(t, "p", (const unsigned char *)
		    "Subject: s\n\nbody\n", 18, err, sizeof(err)), 0);
	start = clock_now_s();
	trainer_abort(t);
	ck_assert_msg(clock_now_s() - start < 0.5, "aborting took %.2f s",
	    clock_now_s() - start);
	trainer_free(t);
	close(fd);
	ck_assert_int_eq(journal_last_id(q, "ab", &last2, err, sizeof(err)),
	    0);
	ck_assert_int_eq(last, last2);
	unsetenv("LISTGATE_TRAIN_THREADS");
	rm_kch(path);
	ck_assert_int_eq(rmdir(dir), 0);
	queue_close(q);
}
END_TEST

/* journal one post "Subject: s\n\nbody\n" of list as spam */
static void
journal_one(struct queue *q, const char *list, const char *body)
{
	char post[200], err[1024];

	snprintf(post, sizeof(post), "Subject: s\n\n%s\n", body);
	ck_assert_int_eq(journal_begin(q, list, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, list, 1, 1, "manual", 0,
	    (const unsigned char *)post, strlen(post), err, sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
}

/*
 * A token file records whether it was built with word pairs, and the
 * writers that a rebuild from the journal can set right learn as it was
 * built whatever the list says now: sync and the journal's follower (a
 * sync between `tune --apply`'s rebuild and its key, or a key edited by
 * hand, must not learn some posts one way and the rest the other).  A
 * file from before the record follows the list, and so does training
 * without a database.
 */
START_TEST(writers_follow_the_files_word_pairs)
{
	struct queue *q = qopen();
	struct sync_stats st;
	struct posttok on, off;
	struct trainer *t;
	struct tokdb *db;
	KCDB *kc;
	char dir[256], path[300], old[300], err[1024];
	const char *post = "Subject: s\n\nkappa lambda mu\n";

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/wp.kch", dir);
	snprintf(old, sizeof(old), "%s/old.kch", dir);
	ck_assert_int_eq(posttok_init(&on, NULL, NULL, err, sizeof(err)), 0);
	on.to.bigrams = on.list_bigrams = 1;
	ck_assert_int_eq(posttok_init(&off, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(off.to.bigrams, 0);

	/* built with pairs: recorded */
	journal_one(q, "wp", "alpha beta gamma");
	ck_assert_int_eq(sync_apply(q, "wp", path, 1, 1000, &on, &st, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(st.pairs_differ, 0);
	ck_assert_uint_eq(file_count(path, "bi:alpha beta").spam, 1);
	ck_assert_int_eq(file_feats(path), TOKDB_FEAT_PAIRS);
	/* the list now says no: sync still learns pairs, and says so */
	journal_one(q, "wp", "delta epsilon zeta");
	ck_assert_int_eq(sync_apply(q, "wp", path, 1, 1000, &off, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 1);
	ck_assert_int_eq(st.pairs_differ, 1);
	ck_assert_int_eq(st.pairs_file, 1);
	ck_assert_uint_eq(file_count(path, "delta").spam, 1);
	ck_assert_uint_eq(file_count(path, "bi:delta epsilon").spam, 1);
	ck_assert_int_eq(off.to.bigrams, 0);	/* pt as it was */
	/* ... and so does training through the journal (the follower) */
	train_follow(q, "wp", path, &off, 1, 500, 1, 0);
	ck_assert_uint_eq(file_count(path, "bi:common spammy").spam, 1);
	ck_assert_int_eq(off.to.bigrams, 0);	/* pt as it was */
	ck_assert_int_eq(sync_apply(q, "wp", path, 1, 1000, &off, &st, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(st.nevents, 0);
	/* training without a database follows the list (nothing could
	 * ever rebuild its file the other way) */
	ck_assert_int_eq(trainer_open_direct(&t, path, 1, 1000, &off, 1, 1, 0,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(trainer_post(t, NULL, (const unsigned char *)post,
	    strlen(post), err, sizeof(err)), 0);
	ck_assert_int_eq(trainer_finish(t, err, sizeof(err)), 0);
	trainer_free(t);
	ck_assert_uint_eq(file_count(path, "kappa").spam, 1);
	ck_assert_uint_eq(file_count(path, "bi:kappa lambda").spam, 0);
	/* a rebuild with the list's setting records it anew */
	unlink(path);
	ck_assert_int_eq(sync_apply(q, "wp", path, 1, 1000, &off, &st, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(st.pairs_differ, 0);
	ck_assert_uint_eq(file_count(path, "bi:alpha beta").spam, 0);
	ck_assert_uint_eq(file_count(path, "alpha").spam, 1);
	ck_assert_int_eq(sync_apply(q, "wp", path, 1, 1000, &on, &st, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(st.pairs_differ, 1);
	ck_assert_int_eq(st.pairs_file, 0);

	/* a Kyoto Cabinet file without a record (a sync killed as it made
	 * one): opened as it is, not in bulk; filled in, the setting
	 * recorded outside a transaction, then learnt */
	rm_kch(path);
	ck_assert_ptr_nonnull(kc = kcdbnew());
	ck_assert(kcdbopen(kc, path, KCOWRITER | KCOCREATE));
	ck_assert(kcdbclose(kc));
	kcdbdel(kc);
	ck_assert_msg(sync_apply(q, "wp", path, 1, 1000, &on, &st, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.nevents, 3);
	ck_assert_int_eq(file_feats(path), TOKDB_FEAT_PAIRS);

	/* a file without the record (made before it): the list decides */
	ck_assert_int_eq(tokdb_open(old, TOKDB_WRITE | TOKDB_CREATE, 1000,
	    &db, err, sizeof(err)), 0);
	tokdb_close(db);
	ck_assert_int_eq(file_feats(old), -1);
	journal_one(q, "wo", "omicron sigma rho");
	ck_assert_int_eq(sync_apply(q, "wo", old, 1, 1000, &on, &st, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(st.pairs_differ, 0);
	ck_assert_uint_eq(file_count(old, "bi:omicron sigma").spam, 1);
	ck_assert_int_eq(file_feats(old), -1);

	rm_kch(path);
	rm_kch(old);
	ck_assert_int_eq(rmdir(dir), 0);
	queue_close(q);
}
END_TEST

/* an error in the middle of a pipelined batch fails the commit and
 * stores none of the batch */
START_TEST(journal_batch_error_stores_nothing)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	char err[1024];
	int i, r = 0;

	ck_assert_int_eq(journal_begin(q, "jerr", err, sizeof(err)), 0);
	for (i = 0; i < 300 && r == 0; i++)
		r = journal_add(q, i == 150 ? "Bad/Name" : "jerr", 0, 1,
		    "manual", 0, (const unsigned char *)"a\n\nb\n", 5, err,
		    sizeof(err));
	if (r == 0)
		r = journal_commit(q, err, sizeof(err));
	else
		journal_rollback(q);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jerr"), 0);
	/* the connection still works */
	ck_assert_int_eq(journal_begin(q, "jerr", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "jerr", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jerr"), 1);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* a batch whose events were ended early (journal_end_send, as the
 * trainer does before its token file's work) commits them all, takes no
 * event more, and is reported as before when a row was refused; rolled
 * back after the end, it stores nothing */
START_TEST(journal_ended_early)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	char err[1024];
	int64_t last, mark, last2, mark2;
	uint32_t day;
	int i;

	ck_assert_int_eq(journal_begin_at(q, "jend", &last, &mark, &day, err,
	    sizeof(err)), 0);
	for (i = 0; i < 200; i++)
		ck_assert_int_eq(journal_add(q, "jend", i % 2, 1, "manual", 0,
		    (const unsigned char *)"a\n\nb\n", 5, err, sizeof(err)), 0);
	journal_end_send(q);
	journal_end_send(q);	/* once is enough; a second does nothing */
	ck_assert_int_eq(journal_add(q, "jend", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "ended"));
	ck_assert_int_eq(journal_commit_send(q, "jend", &last2, &mark2, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_commit_wait(q, err, sizeof(err)), 0);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jend"), 200);
	ck_assert_int_eq(pg_long(c, "SELECT max(id) FROM train_journal WHERE "
	    "list = $1", "jend"), last2);

	/* a refused row is reported at the commit, nothing stored */
	ck_assert_int_eq(journal_begin_at(q, "jend", &last, &mark, &day, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "jend", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "Bad/Name", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	journal_end_send(q);
	ck_assert_int_eq(journal_commit_send(q, "jend", &last2, &mark2, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jend"), 200);

	/* ended, then rolled back: nothing stored, the connection works */
	ck_assert_int_eq(journal_begin(q, "jend", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "jend", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	journal_end_send(q);
	journal_rollback(q);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jend"), 200);
	ck_assert_int_eq(journal_begin(q, "jend", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "jend", 0, 1, "manual", 0,
	    (const unsigned char *)"x", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)), 0);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "jend"), 201);
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* run a statement on c, asserting success */
static void
pg_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql,
	    PQresultErrorMessage(r));
	PQclear(r);
}

/* the connection breaks while the server commits (a deferred trigger
 * ends its own backend): the outcome is reported unknown, not "none
 * journaled", and nothing is left of the batch */
START_TEST(journal_commit_answer_lost)
{
	struct queue *q = qopen();
	PGconn *c = pg(NULL);
	char err[1024];

	pg_ok(c, "CREATE FUNCTION lg_test_die() RETURNS trigger LANGUAGE "
	    "plpgsql AS $$ BEGIN PERFORM pg_terminate_backend("
	    "pg_backend_pid()); RETURN NULL; END $$");
	pg_ok(c, "CREATE CONSTRAINT TRIGGER lg_test_die AFTER INSERT ON "
	    "train_journal DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN "
	    "(NEW.list = 'lost') EXECUTE FUNCTION lg_test_die()");
	ck_assert_int_eq(journal_begin(q, "lost", err, sizeof(err)), 0);
	ck_assert_int_eq(journal_add(q, "lost", 0, 1, "manual", 0,
	    (const unsigned char *)"a\n\nb\n", 5, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_commit(q, err, sizeof(err)),
	    JOURNAL_EUNKNOWN);
	ck_assert_int_eq(pg_long(c, "SELECT count(*) FROM train_journal WHERE "
	    "list = $1", "lost"), 0);
	pg_ok(c, "DROP TRIGGER lg_test_die ON train_journal");
	pg_ok(c, "DROP FUNCTION lg_test_die()");
	PQfinish(c);
	queue_close(q);
}
END_TEST

/* a token file ahead of the journal (another database) is refused */
START_TEST(journal_file_ahead)
{
	struct queue *q = qopen();
	struct sync_stats st;
	struct posttok pt;
	struct tokdb *db;
	char dir[256], path[300], err[1024];

	snprintf(dir, sizeof(dir), "%s/check_queue.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ahead.kch", dir);
	ck_assert_int_eq(tokdb_open(path, TOKDB_WRITE | TOKDB_CREATE, 1000,
	    &db, err, sizeof(err)), 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_set_pos(db, 999999999), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	tokdb_close(db);
	ck_assert_int_eq(posttok_init(&pt, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(sync_apply(q, "ahead", path, 1, 1000, &pt, &st,
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "rebuild"));
	unlink(path);
	rmdir(dir);
	queue_close(q);
}
END_TEST

static Suite *
queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc;

	tc = tcase_create("sha256");
	tcase_add_test(tc, sha256_vectors);
	tcase_add_test(tc, sha256_mismatch_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("schema");
	tcase_add_test(tc, configured);
	tcase_add_test(tc, migrate_idempotent);
	tcase_add_test(tc, schema_missing_and_newer);
	tcase_add_test(tc, migrate_0002_sets_duplicates_aside);
	tcase_add_test(tc, migrate_0010_discards_once);
	tcase_add_test(tc, connect_failure);
	suite_add_tcase(s, tc);

	tc = tcase_create("hold");
	tcase_add_test(tc, hold_roundtrip);
	tcase_add_test(tc, moddb_queue_all_or_none);
	tcase_add_test(tc, hold_list_and_discarded);
	tcase_add_test(tc, hold_retry_stored_once);
	tcase_add_test(tc, hold_remembers_decisions);
	tcase_add_test(tc, hold_window_days_are_24h);
	tcase_add_test(tc, hold_streams_large_posts);
	tcase_add_test(tc, journal_fetch_within_budget);
	tcase_add_test(tc, journal_codec_reused);
	suite_add_tcase(s, tc);

	tc = tcase_create("decide");
	tcase_add_test(tc, approve_releases_exact_bytes_once);
	tcase_add_test(tc, release_failure_keeps_post_held);
	tcase_add_test(tc, decide_refuses_another_lists_post);
	tcase_add_test(tc, decide_refuses_another_post);
	tcase_add_test(tc, force_changes_training);
	tcase_add_test(tc, interrupted_approve_not_released_twice);
	tcase_add_test(tc, interrupted_approve_force_releases_again);
	tcase_add_test(tc, lost_connection_recorded_again);
	tcase_add_test(tc, release_failure_restores_old_decision);
	tcase_add_test(tc, release_failure_beside_a_new_discard);
	suite_add_tcase(s, tc);

	tc = tcase_create("journal");
	tcase_add_test(tc, sync_apply_exactly_once);
	tcase_add_test(tc, writers_follow_the_files_word_pairs);
	tcase_add_test(tc, train_follows_token_file);
	tcase_add_test(tc, train_connects_meanwhile);
	tcase_add_test(tc, train_abort_before_connection_follows_nothing);
	tcase_add_test(tc, journal_batch_error_stores_nothing);
	tcase_add_test(tc, journal_ended_early);
	tcase_add_test(tc, journal_commit_answer_lost);
	tcase_add_test(tc, journal_file_ahead);
	tcase_add_test(tc, queue_page_reads_only_waiting_posts);
	tcase_add_test(tc, counts_in_byte_order_whatever_the_collation);
	tcase_add_test(tc, counts_of_a_list_called_null);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int nfail;

	if (!queue_configured(NULL)) {
		fprintf(stderr, "check_queue: no database in the environment "
		    "(run it through tests/pg.sh); skipped\n");
		return 77;
	}
	sr = srunner_create(queue_suite());
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? 1 : 0;
}
