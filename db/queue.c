/*
 * queue.c - the moderation queue in PostgreSQL: connection, schema
 * migrations, holding posts, listing them and recording decisions
 *
 * Trusts the server and the compiled-in migrations; every value that
 * came from a post (header fields, the raw bytes) goes to the server only
 * as a PQexecParams parameter, header text made valid UTF-8 and
 * bounded first (sanitize_utf8; not masked: what is shown is masked on
 * its way out).  Failures return -1 with the server's message in err;
 * nothing here exits or logs.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <zlib.h>

#include "gate/util/lglimits.h"
#include "db/journal.h"
#include "db/moddb.h"
#include "db/queue.h"
#include "db/queue_int.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"

/* longest header text stored per field; the rest is cut */
#define FIELD_MAX	4096
/* longest deciding-token text stored */
#define CLUES_MAX	(64 * 1024)

int
queue_configured(const char *conninfo)
{
	static const char *const vars[] = { "PGHOST", "PGHOSTADDR",
	    "PGDATABASE", "PGSERVICE", "PGPORT", "PGUSER", NULL };
	const char *const *v;
	const char *e;

	if (conninfo != NULL && *conninfo != 0)
		return 1;
	for (v = vars; *v; v++)
		if ((e = getenv(*v)) != NULL && *e != 0)
			return 1;
	return 0;
}

const char *
queue_pgerr(struct queue *q, const PGresult *res)
{
	static __thread char line[512];	/* one per thread: listgate web */
	const char *m = res ? PQresultErrorMessage(res) : "";
	size_t n;

	if (m == NULL || *m == 0)
		m = PQerrorMessage(q->conn);
	if (m == NULL || *m == 0)
		m = "unknown database error";
	n = strcspn(m, "\n");
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, m, n);
	line[n] = 0;
	return line;
}

int
queue_exec(struct queue *q, const char *sql, int n, const char *const *vals,
    const int *lens, const int *fmts, char *err, size_t errsz)
{
	PGresult *res = PQexecParams(q->conn, sql, n, NULL, vals, lens, fmts,
	    0);
	int ok = res && (PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK);

	if (!ok)
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	PQclear(res);
	return ok ? 0 : -1;
}

/* a parameterised command of text values expecting success: 0 or -1 */
static int
exec_params(struct queue *q, const char *sql, int n, const char *const *vals,
    char *err, size_t errsz)
{
	return queue_exec(q, sql, n, vals, NULL, NULL, err, errsz);
}

/*
 * Inside migrate's transaction: no statement_timeout (SET LOCAL, a
 * statement of its own: a timeout already runs for the statement that
 * sets it).  One set in the database conninfo's options for the
 * filter's hold path cut the wait for another migrate (the migrate
 * lock, waited for as long as that run takes), a table lock's wait
 * before --lock-timeout (which bounds it, and names who holds it), and
 * a migration that takes longer on a large table: migrate failed with
 * "canceling statement due to statement timeout", and again on every
 * run.  0, or -1 with err.
 */
static int
no_statement_timeout(struct queue *q, char *err, size_t errsz)
{
	return queue_cmd(q, "SET LOCAL statement_timeout = 0", err, errsz);
}

/* inside a transaction: wait at most secs for each lock (0: the
 * session's lock_timeout), SET LOCAL through set_config so that the
 * value is a parameter: 0 or -1 */
static int
set_lock_timeout(struct queue *q, unsigned secs, char *err, size_t errsz)
{
	char set[32];
	const char *vals[1] = { set };

	if (secs == 0)
		return 0;
	snprintf(set, sizeof(set), "%us", secs);
	return exec_params(q, "SELECT pg_catalog.set_config('lock_timeout', "
	    "$1, true)", 1, vals, err, errsz);
}

/*
 * Inside migrate's transaction: have the server look every second
 * whether migrate is still there (client_connection_check_interval,
 * PostgreSQL 14 on Linux; elsewhere the setting is refused, and
 * ignored here).  A migrate stopped by ^C, a kill or a lost ssh
 * session while it waited for a table's lock left its server session
 * queued for that lock up to --lock-timeout (an hour at most), every
 * other client of the table (the filter's holds, which queue their
 * notices) queued behind it, or went on with a long migration nobody
 * would see end.  Now the session ends within a second or so and the
 * transaction rolls back.  0, or -1 with err.
 */
static int
set_client_check(struct queue *q, char *err, size_t errsz)
{
	return queue_cmd(q, "DO $$ BEGIN PERFORM pg_catalog.set_config("
	    "'client_connection_check_interval', '1s', true); EXCEPTION "
	    "WHEN OTHERS THEN NULL; END $$", err, errsz);
}

/* server notices ("already exists, skipping") are not for the user */
static void
quiet_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* the connection's connect_timeout in seconds, libpq's way (0: none,
 * else at least 2), or -1 when it is not a whole number; *multi set when
 * it names more than one host */
static int
connect_opts(PGconn *c, int *multi)
{
	PQconninfoOption *o, *opts = PQconninfo(c);
	long secs = 0;
	char *end;

	*multi = 0;
	for (o = opts; o != NULL && o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "connect_timeout") == 0) {
			secs = strtol(o->val, &end, 10);
			while (*end == ' ' || *end == '\t')
				end++;
			if (end == o->val || *end != '\0') {
				PQconninfoFree(opts);
				return -1;
			}
		} else if ((strcmp(o->keyword, "host") == 0 ||
		    strcmp(o->keyword, "hostaddr") == 0) &&
		    strchr(o->val, ',') != NULL)
			*multi = 1;
	}
	PQconninfoFree(opts);
	if (secs <= 0)
		return 0;
	return secs < 2 ? 2 : secs > 86400 ? 86400 : (int)secs;
}

/*
 * Drive a connection started with PQconnectStartParams to its end, as
 * PQconnectdbParams would (that one leaves no moment to set the notice
 * processor first), within secs (0: no limit) for the whole attempt.
 * 0 when it ended (PQstatus says how), -1 timed out, -2 poll failed
 * (errno).
 */
static int
connect_wait(PGconn *c, int secs)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	struct pollfd pfd;
	double deadline = 0, left;
	int n;

	if (secs > 0)
		deadline = clock_now_ms() + secs * 1000.0;
	while (PQstatus(c) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	    st != PGRES_POLLING_FAILED) {
		if ((pfd.fd = PQsocket(c)) < 0)
			return 0;
		pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		pfd.revents = 0;
		left = -1;
		if (deadline > 0 && (left = deadline - clock_now_ms()) <= 0)
			return -1;
		n = poll(&pfd, 1, left < 0 ? -1 : (int)left + 1);
		if (n < 0 && errno == EINTR)
			continue;	/* libpq's own wait does the same */
		if (n < 0)
			return -2;
		if (n == 0)
			continue;	/* the deadline, looked at above */
		st = PQconnectPoll(c);
	}
	return 0;
}

/* 1 when the n bytes at p are one of libpq's keywords */
static int
known_keyword(const PQconninfoOption *defs, const char *p, size_t n)
{
	const PQconninfoOption *d;

	for (d = defs; d != NULL && d->keyword != NULL; d++)
		if (strlen(d->keyword) == n && memcmp(d->keyword, p, n) == 0)
			return 1;
	return 0;
}

/* 1 when the n bytes at p are safe to show from a libpq parse error:
 * one character ("=", "]") or the name of an option that is not secret */
static int
shown_piece(const PQconninfoOption *defs, const char *p, size_t n)
{
	const PQconninfoOption *d;

	if (n == 1)
		return 1;
	for (d = defs; d != NULL && d->keyword != NULL; d++)
		if (strlen(d->keyword) == n && memcmp(d->keyword, p, n) == 0)
			return d->dispchar == NULL || *d->dispchar != '*';
	return 0;
}

/*
 * 1 when conninfo is a URI with a raw '@' past the user part libpq
 * reads, in its hosts or database name: a password holding a raw '@'
 * or '/'.  libpq ends the user part at the first '@' before any '/'
 * (the rest of a password with an '@' becomes a host name), or finds
 * none when a '/' comes first (the password becomes a port, the rest a
 * database name), and its connection errors quote those ("could not
 * translate host name "rest@db"", "invalid integer value "pass" for
 * connection option "port"").  No host has an '@', and one in a
 * database name is written %40; one in the query (?user=a@b) is read
 * as written.
 */
static int
uri_split_password(const char *conninfo)
{
	const char *p, *q;

	if (strncmp(conninfo, "postgresql://", 13) == 0)
		p = conninfo + 13;
	else if (strncmp(conninfo, "postgres://", 11) == 0)
		p = conninfo + 11;
	else
		return 0;
	q = p + strcspn(p, "@/");
	if (*q == '@')
		p = q + 1;
	q = p + strcspn(p, "?");
	return memchr(p, '@', (size_t)(q - p)) != NULL;
}

static int
pq_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

/*
 * In a key=value conninfo libpq parses, the first key whose value,
 * unquoted, begins with one of libpq's keywords and '=' (defs: every
 * keyword): "user= password=x", an empty value left unquoted, which
 * libpq reads as user "password=x" and the server's or libpq's error
 * quotes ("role "password=x" does not exist", "invalid sslmode value:
 * "password=x"").  Its name into key (keysz bytes): 1, else 0.
 */
static int
swallowed_setting(const char *s, const PQconninfoOption *defs, char *key,
    size_t keysz)
{
	const char *k, *ke, *v;

	for (;;) {
		while (pq_space((unsigned char)*s))
			s++;
		if (*s == '\0')
			return 0;
		for (k = s; *s != '\0' && *s != '=' && !pq_space((unsigned
		    char)*s); s++)
			;
		ke = s;
		while (pq_space((unsigned char)*s))
			s++;
		if (*s != '=')
			return 0;	/* (libpq parsed it: not here) */
		for (s++; pq_space((unsigned char)*s); s++)
			;
		if (*s == '\'') {
			for (s++; *s != '\0' && *s != '\''; s++)
				if (*s == '\\' && s[1] != '\0')
					s++;
			if (*s == '\'')
				s++;
			continue;
		}
		for (v = s; *s != '\0' && *s != '=' && *s != '\\' &&
		    !pq_space((unsigned char)*s); s++)
			;
		/* (a dbname's: connect_error masks it) */
		if (*s == '=' && s > v && known_keyword(defs, v,
		    (size_t)(s - v)) && !(ke - k == 6 && memcmp(k, "dbname",
		    6) == 0)) {
			snprintf(key, keysz, "%.*s", (int)(ke - k), k);
			return 1;
		}
		for (; *s != '\0' && !pq_space((unsigned char)*s); s++)
			if (*s == '\\' && s[1] != '\0')
				s++;
	}
}

int
queue_conninfo_check(const char *conninfo, char *err, size_t errsz)
{
	PQconninfoOption *o, *defs;
	char *m = NULL, line[512];
	const char *q, *e;
	size_t n = 0, len;

	if ((o = PQconninfoParse(conninfo, &m)) != NULL) {
		PQconninfoFree(o);
		if (!uri_split_password(conninfo) && strncmp(conninfo,
		    "postgresql://", 13) != 0 && strncmp(conninfo,
		    "postgres://", 11) != 0) {
			char key[64];
			int r;

			if ((defs = PQconninfoParse("", NULL)) == NULL) {
				snprintf(err, errsz, "out of memory");
				return -1;
			}
			r = swallowed_setting(conninfo, defs, key, sizeof(key));
			PQconninfoFree(defs);
			if (r) {
				snprintf(err, errsz, "the connection string does "
				    "not parse as meant: %s has no value of its "
				    "own, and libpq would take the setting after "
				    "it for one (write %s='' for an empty value)",
				    key, key);
				return -1;
			}
		}
		if (uri_split_password(conninfo)) {
			snprintf(err, errsz, "the connection string does not "
			    "parse: a URI with a raw '@' past its user part "
			    "(a password holding '@' or '/'? write them %%40 "
			    "and %%2F)");
			return -1;
		}
		return 0;
	}
	if (m == NULL) {
		q = pq_load_error();
		snprintf(err, errsz, "%.*s", q != NULL ? (int)strcspn(q, "\n") :
		    13, q != NULL ? q : "out of memory");
		return -1;
	}
	/* the first line, what libpq put between double quotes masked
	 * unless it is a character or a non-secret option's name (an
	 * empty string parses to every option, with its dispchar) */
	defs = PQconninfoParse("", NULL);
	for (q = m; *q != '\0' && *q != '\n' && n + 12 < sizeof(line); q++) {
		if (*q != '"') {
			line[n++] = *q;
			continue;
		}
		e = strchr(q + 1, '"');
		len = e != NULL ? (size_t)(e - q - 1) : 0;
		if (e != NULL && memchr(q + 1, '\n', len) == NULL &&
		    shown_piece(defs, q + 1, len) && n + len + 14 < sizeof(line)) {
			memcpy(line + n, q, len + 2);
			n += len + 2;
		} else {
			memcpy(line + n, "\"" "********" "\"", 10);
			n += 10;
		}
		if (e == NULL)
			break;
		q = e;
	}
	line[n] = '\0';
	snprintf(err, errsz, "the connection string does not parse: %s", line);
	PQconninfoFree(defs);
	PQfreemem(m);
	return -1;
}

/*
 * Why c failed to connect, into err after "cannot connect to the
 * database: ", with the database name masked where it is itself a
 * connection string (it holds a '=' or "://": dbname='host=db
 * password=...'): libpq expands only the outer one, so the server gets
 * it whole as a database name, and its FATAL quotes it (`database
 * "host=db password=..." does not exist`, cut to NAMEDATALEN - 1
 * bytes).  Every quoted piece of the message that begins that name is
 * masked then.
 */
static void
connect_error(struct queue *q, char *err, size_t errsz)
{
	PQconninfoOption *o, *opts = PQconninfo(q->conn);
	const char *m = queue_pgerr(q, NULL), *db = NULL, *e;
	char line[600];
	size_t n = 0, len;

	for (o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "dbname") == 0 && o->val != NULL &&
		    (strchr(o->val, '=') != NULL || strstr(o->val, "://") !=
		    NULL))
			db = o->val;
	for (; db != NULL && *m != '\0' && n + 11 < sizeof(line); m++) {
		if (*m != '"') {
			line[n++] = *m;
			continue;
		}
		if ((e = strchr(m + 1, '"')) == NULL) {
			/* a quote the first line cut: nothing after it */
			memcpy(line + n, "\"" "********", 9);
			n += 9;
			break;
		}
		len = (size_t)(e - m - 1);
		if (len > 0 && strncmp(m + 1, db, len) == 0) {
			memcpy(line + n, "\"" "********" "\"", 10);
			n += 10;
		} else {
			/* another piece (a host, a socket), whole */
			if (n + len + 2 >= sizeof(line))
				break;
			memcpy(line + n, m, len + 2);
			n += len + 2;
		}
		m = e;
	}
	line[n] = '\0';
	snprintf(err, errsz, "cannot connect to the database: %s",
	    db != NULL ? line : m);
	PQconninfoFree(opts);
}

int
queue_open(const char *conninfo, struct queue **q_r, char *err,
    size_t errsz)
{
	return queue_open_within(conninfo, 0, q_r, err, errsz);
}

int
queue_open_within(const char *conninfo, unsigned secs, struct queue **q_r,
    char *err, size_t errsz)
{
	/* the conninfo's own settings come after the defaults and win,
	 * except a time limit of the caller's (last but one); the client
	 * encoding, last, is always UTF8 (a startup parameter rather than
	 * a SET: one round trip less per connection).  Over TCP, keepalive
	 * probes after 15 s of silence, 3 at 5 s apart, find a server that
	 * went away (a host down, a link cut) while a command waits for
	 * its answer, in about 30 s instead of the system's two hours;
	 * a live server's kernel answers them however long its query
	 * takes.  Unix sockets ignore them. */
	const char *keys[] = { "connect_timeout", "fallback_application_name",
	    "keepalives", "keepalives_idle", "keepalives_interval",
	    "keepalives_count", "dbname", "connect_timeout",
	    "client_encoding", NULL };
	const char *vals[] = { "10", "listgate", "1", QUEUE_KEEPALIVE_IDLE,
	    QUEUE_KEEPALIVE_INTERVAL, QUEUE_KEEPALIVE_COUNT, conninfo, NULL,
	    "UTF8", NULL };
	const char *m;
	char tbuf[16], m2[600];
	struct queue *q;
	int multi, rc, ct;

	snprintf(tbuf, sizeof(tbuf), "%u", secs);
	if (secs > 0)
		vals[7] = tbuf;
	else {
		keys[7] = "client_encoding";	/* (no override) */
		vals[7] = "UTF8";
		keys[8] = NULL;
	}

	*q_r = NULL;
	/* before libpq: its parse errors quote the password */
	if (conninfo != NULL && queue_conninfo_check(conninfo, m2,
	    sizeof(m2)) < 0) {
		snprintf(err, errsz, "cannot connect to the database: %s", m2);
		return -1;
	}
	if ((q = xcalloc(1, sizeof(*q))) == NULL ||
	    (conninfo != NULL && (q->conninfo = xstrdup(conninfo)) == NULL)) {
		snprintf(err, errsz, "out of memory");
		xfree(q);
		return -1;
	}
	q->conn = PQconnectStartParams(keys, vals, 1);
	if (q->conn == NULL) {
		if ((m = pq_load_error()) != NULL)
			snprintf(err, errsz, "database: %.*s",
			    (int)strcspn(m, "\n"), m);
		else
			snprintf(err, errsz, "database: out of memory");
		queue_close(q);
		return -1;
	}
	/* before the server says anything: a server shutting down sends
	 * its FATAL right after the handshake, and libpq's default notice
	 * processor would print it raw on our standard error */
	PQsetNoticeProcessor(q->conn, quiet_notice, NULL);
	if ((ct = connect_opts(q->conn, &multi)) < 0) {
		snprintf(err, errsz, "cannot connect to the database: "
		    "connect_timeout is not a whole number of seconds");
		queue_close(q);
		return -1;
	}
	if (multi) {
		/* more than one host: libpq's own wait, which gives each
		 * host its connect_timeout and moves on from one that does
		 * not answer (the notice processor comes after it) */
		PQfinish(q->conn);
		q->conn = PQconnectdbParams(keys, vals, 1);
		if (q->conn == NULL) {
			snprintf(err, errsz, "database: out of memory");
			queue_close(q);
			return -1;
		}
		PQsetNoticeProcessor(q->conn, quiet_notice, NULL);
	} else if ((rc = connect_wait(q->conn, ct)) < 0) {
		if (rc == -1)
			snprintf(err, errsz, "cannot connect to the database: "
			    "timeout expired");
		else
			snprintf(err, errsz, "cannot connect to the database: "
			    "poll: %s", strerror(errno));
		queue_close(q);
		return -1;
	}
	if (PQstatus(q->conn) != CONNECTION_OK) {
		connect_error(q, err, errsz);
		queue_close(q);
		return -1;
	}
	*q_r = q;
	return 0;
}

void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	queue_close(q->lockq);
	if (q->conn)
		PQfinish(q->conn);
	journal_z_free(q->jz);
	xfree(q->jzbuf);
	xfree(q->cbuf);
	xfree(q->conninfo);
	xfree(q);
}

/* an idle connection's input read without waiting: 1 when it still
 * stands, 0 when the server closed it (a restart ends each connection
 * with a FATAL and the end of the stream, which libpq sees only when it
 * next reads) */
static int
conn_alive(PGconn *c)
{
	struct pollfd pfd;
	int i;

	/* a few reads: the FATAL, then the end (each poll returns at once) */
	for (i = 0; i < 4 && PQstatus(c) == CONNECTION_OK; i++) {
		if ((pfd.fd = PQsocket(c)) < 0)
			return 0;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) <= 0)
			break;
		if (!PQconsumeInput(c))
			return 0;
	}
	return PQstatus(c) == CONNECTION_OK;
}

int
queue_alive(struct queue *q)
{
	return q != NULL && q->conn != NULL && conn_alive(q->conn);
}

int
queue_revive(struct queue *q, char *err, size_t errsz)
{
	struct queue *n;
	PGconn *c;

	if (queue_alive(q))
		return 0;
	if (q->intx) {
		/* a journal batch's transaction went with the connection:
		 * its caller must learn that, not carry on on a new one */
		snprintf(err, errsz, "database: the connection was lost "
		    "during a journal batch");
		return -1;
	}
	if (queue_open(q->conninfo, &n, err, errsz) < 0)
		return -1;
	/* the new connection in the old one's place (the caller's
	 * pointer, and the lock's connection, stay as they are) */
	c = q->conn;
	q->conn = n->conn;
	n->conn = c;
	q->copy = QCOPY_NONE;
	q->committing = 0;
	queue_close(n);
	return 0;
}

int
queue_cmd(struct queue *q, const char *sql, char *err, size_t errsz)
{
	return exec_params(q, sql, 0, NULL, err, errsz);
}

int
queue_lock_wait(struct queue *q, const char *sql, int n,
    const char *const *vals, char *err, size_t errsz)
{
	if (queue_cmd(q, QUEUE_LOCK_WAIT_SQL, err, errsz) < 0 ||
	    exec_params(q, sql, n, vals, err, errsz) < 0)
		return -1;
	return queue_cmd(q, QUEUE_LOCK_WAITED_SQL, err, errsz);
}

/* big-endian bytes to an unsigned 64-bit value */
static uint64_t
be64(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int64_t
queue_col_i64(const PGresult *res, int row, int col)
{
	const unsigned char *p;
	int n;

	if (PQgetisnull(res, row, col))
		return 0;
	p = (const unsigned char *)PQgetvalue(res, row, col);
	n = PQgetlength(res, row, col);
	if (n == 8)
		return (int64_t)be64(p, 8);
	if (n == 4)
		return (int32_t)(uint32_t)be64(p, 4);
	if (n == 2)
		return (int16_t)(uint16_t)be64(p, 2);
	return 0;
}

double
queue_col_f64(const PGresult *res, int row, int col)
{
	uint64_t v;
	double d;

	if (PQgetisnull(res, row, col) || PQgetlength(res, row, col) != 8)
		return 0;
	v = be64((const unsigned char *)PQgetvalue(res, row, col), 8);
	memcpy(&d, &v, sizeof(d));
	return d;
}

char *
queue_col_str(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return xstrdup("");
	return xstrndup(PQgetvalue(res, row, col),
	    (size_t)PQgetlength(res, row, col));
}

int
queue_inflate(const unsigned char *in, size_t n, int64_t size,
    unsigned char **out, size_t *cap_r, char *err, size_t errsz)
{
	uLongf dlen;
	unsigned char *p;
	size_t need;

	if (size < 0 || (uint64_t)size > LG_MAX_POST_BYTES) {
		snprintf(err, errsz, "stored size %lld out of range",
		    (long long)size);
		return QUEUE_ECORRUPT;
	}
	need = (size_t)size + 1;	/* room for a NUL, and never 0 */
	if (*cap_r < need) {
		if ((p = xrealloc(*out, need)) == NULL) {
			snprintf(err, errsz, "out of memory (%zu bytes)", need);
			return -2;
		}
		*out = p;
		*cap_r = need;
	}
	dlen = (uLongf)size;
	if (uncompress(*out, &dlen, in, (uLong)n) != Z_OK ||
	    dlen != (uLongf)size) {
		snprintf(err, errsz, "stored message is corrupt (does not "
		    "decompress to %lld bytes)", (long long)size);
		return QUEUE_ECORRUPT;
	}
	(*out)[size] = 0;
	return 0;
}

/* the SHA-256 of n bytes (GNU Nettle) */
static void
post_sha256(const unsigned char *p, size_t n,
    unsigned char out[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n, p);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

/* --- schema ------------------------------------------------------------ */

/* SQLSTATE insufficient_privilege: "permission denied", "must be owner" */
#define SQLSTATE_NO_PRIVILEGE "42501"

/* when res failed for want of a privilege, hint (": ...") appended to
 * err: the server's message names the object, not the role to use */
static void
privilege_hint(const PGresult *res, const char *hint, char *err,
    size_t errsz)
{
	const char *state;
	size_t k = strlen(err);

	if (res == NULL || (state = PQresultErrorField(res,
	    PG_DIAG_SQLSTATE)) == NULL ||
	    strcmp(state, SQLSTATE_NO_PRIVILEGE) != 0 || k + 1 >= errsz)
		return;
	snprintf(err + k, errsz - k, ": %s", hint);
}

/*
 * After reading the schema's version failed with res: when for want of
 * a privilege (a login role in none of the roles of migration 0003),
 * add to err which roles may read it.  The server's "permission denied
 * for table schema_migrations" named the table, not what to grant.
 */
static void
no_role_hint(const PGresult *res, char *err, size_t errsz)
{
	privilege_hint(res, "the role it connects as (user in database in "
	    "listgate.conf, else PGUSER) is in none of listgate_filter "
	    "(filter), listgate_moderator (the moderators' commands, sync) "
	    "and listgate_admin (migrate): grant it the one its work needs "
	    "(migration 0003)", err, errsz);
}

/* the schema's version from res, QUEUE_SCHEMA_SQL's answer: 0 (a
 * missing table is version 0), or -1 when it failed */
static int
schema_res(const PGresult *res, int *version_r)
{
	const char *state;

	*version_r = 0;
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1) {
		*version_r = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
		return 0;
	}
	if (res != NULL && (state = PQresultErrorField(res,
	    PG_DIAG_SQLSTATE)) != NULL &&
	    strcmp(state, QUEUE_SQLSTATE_UNDEFINED_TABLE) == 0)
		return 0;
	return -1;
}

int
queue_schema_version(struct queue *q, int *version_r, char *err,
    size_t errsz)
{
	PGresult *res;
	int r;

	/* one round trip: a missing table is an error with its own SQLSTATE
	 * (this runs before every hold, so it must stay cheap) */
	res = PQexecParams(q->conn, QUEUE_SCHEMA_SQL, 0, NULL, NULL, NULL,
	    NULL, 0);
	if ((r = schema_res(res, version_r)) < 0) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		no_role_hint(res, err, errsz);
	}
	PQclear(res);
	return r;
}

/*
 * No schema_migrations where this connection looks: when a schema this
 * connection does not see has one, and held_posts beside it (listgate's,
 * not another program's), say so in err and return 1 (migrate would apply
 * nothing), else 0.  Only on that error path: no cost to a hold.
 */
static int
schema_unseen(struct queue *q, char *err, size_t errsz)
{
	PGresult *res;
	int r = 0;

	res = PQexecParams(q->conn, "SELECT quote_ident(n.nspname), "
	    "has_schema_privilege(n.oid, 'USAGE'), "
	    "current_setting('search_path'), current_user "
	    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
	    "ON n.oid = c.relnamespace WHERE c.relname = 'schema_migrations' "
	    "AND c.relkind IN ('r', 'p') AND EXISTS (SELECT 1 FROM "
	    "pg_catalog.pg_class h WHERE h.relnamespace = n.oid AND "
	    "h.relname = 'held_posts') AND n.nspname !~ '[[:cntrl:]]' "
	    "AND current_setting('search_path') !~ '[[:cntrl:]]' "
	    "AND current_user !~ '[[:cntrl:]]' ORDER BY 2 DESC, 1 LIMIT 1",
	    0, NULL, NULL, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1)
		;
	else if (strcmp(PQgetvalue(res, 0, 1), "t") != 0) {
		snprintf(err, errsz, "the listgate schema is in schema %s, "
		    "which the role %s may not use: grant it listgate_filter, "
		    "listgate_moderator or listgate_admin (migration 0003)",
		    PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 3));
		r = 1;
	} else {
		snprintf(err, errsz, "the listgate schema is in schema %s, "
		    "not in this connection's search_path (%s): add "
		    "options='-c search_path=%s' to database in listgate.conf",
		    PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 2),
		    PQgetvalue(res, 0, 0));
		r = 1;
	}
	PQclear(res);
	return r;
}

/* SQL: the table REL (a regclass expression) has listgate's columns of
 * schema_migrations, an integer version and a name: one made by hand
 * beside no held_posts yet is used (0001 makes held_posts), another
 * program's (golang-migrate's bigint version and dirty flag, Rails's
 * text version) is not */
#define MIGRATIONS_LAYOUT(REL) \
	"(SELECT count(*) = 2 FROM pg_catalog.pg_attribute a WHERE " \
	"a.attrelid = " REL " AND NOT a.attisdropped AND ((a.attname = " \
	"'version' AND a.atttypid = 'pg_catalog.int4'::pg_catalog.regtype) " \
	"OR (a.attname = 'name' AND a.atttypid = " \
	"'pg_catalog.text'::pg_catalog.regtype)))"

/* what to say of schema_migrations in schema nsp (quoted) that is not
 * listgate's: no held_posts beside it */
static void
foreign_msg(const char *nsp, char *err, size_t errsz)
{
	snprintf(err, errsz, "the table schema_migrations in schema %s is "
	    "not listgate's (no held_posts beside it: another program's?), "
	    "and listgate will not use or change it: give listgate a schema "
	    "of its own (CREATE SCHEMA listgate), first in search_path "
	    "(options='-c search_path=listgate,%s' in database in "
	    "listgate.conf), and run `%s migrate`", nsp, nsp, suggest_cmd());
}

/*
 * The schema_migrations this connection reads (the first one of its
 * search_path) is another program's, with no held_posts beside it
 * (golang-migrate and Rails keep a table of that name, in public as
 * listgate does by default): say so in err and return 1, else 0.  Its
 * versions are not listgate's: 20230101120000 read as "newer than this
 * listgate knows: upgrade listgate", a text column as a type error.
 * Only on the error path: no cost to a hold.
 */
static int
schema_foreign(struct queue *q, char *err, size_t errsz)
{
	PGresult *res;
	int r = 0;

	res = PQexecParams(q->conn, "SELECT pg_catalog.quote_ident(n.nspname), "
	    "n.nspname = pg_catalog.current_schema(), "
	    "pg_catalog.quote_ident(pg_catalog.current_schema()) "
	    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON "
	    "n.oid = c.relnamespace WHERE c.oid = pg_catalog.to_regclass("
	    "'schema_migrations') AND pg_catalog.to_regclass("
	    "pg_catalog.quote_ident(n.nspname) || '.held_posts') IS NULL "
	    "AND NOT " MIGRATIONS_LAYOUT("c.oid") " "
	    "AND n.nspname !~ '[[:cntrl:]]' AND pg_catalog.current_schema() "
	    "!~ '[[:cntrl:]]'", 0, NULL, NULL, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1)
		;
	else if (strcmp(PQgetvalue(res, 0, 1), "t") == 0) {
		foreign_msg(PQgetvalue(res, 0, 0), err, errsz);
		r = 1;
	} else {
		/* a schema of listgate's own comes first in the path, with
		 * no tables yet: migrate makes them there */
		snprintf(err, errsz, "the database has no listgate schema "
		    "in schema %s yet (the schema_migrations of schema %s is "
		    "another program's): run `%s migrate`",
		    PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 0),
		    suggest_cmd());
		r = 1;
	}
	PQclear(res);
	return r;
}

int
queue_check_schema(struct queue *q, char *err, size_t errsz)
{
	char e[8];
	int v, standby;

	if (queue_schema_version(q, &v, err, errsz) < 0) {
		/* (a text column: "COALESCE types text and integer") */
		schema_foreign(q, err, errsz);
		return -1;
	}
	if (v != queue_schema_latest && v != 0 &&
	    schema_foreign(q, err, errsz) != 0)
		return -1;
	if (v > queue_schema_latest) {
		snprintf(err, errsz, "the database schema is version %d, newer "
		    "than this listgate knows (%d): upgrade listgate", v,
		    queue_schema_latest);
		return -1;
	}
	if (v == 0 && schema_unseen(q, err, errsz) != 0)
		return -1;
	/* a standby (sync_database) takes no migration of its own: it
	 * replays the primary's, and one that is behind has not yet.  Run
	 * migrate there, as the messages below say, would change nothing
	 * (it writes through database, the primary, already migrated) */
	if (v < queue_schema_latest &&
	    queue_in_recovery(q, &standby, e, sizeof(e)) == 0 && standby) {
		snprintf(err, errsz, "the database schema on this standby "
		    "(a server in recovery) is at version %d, this listgate "
		    "needs version %d: the standby has not replayed the "
		    "primary's migration yet (it is behind, or its replay "
		    "stopped: sync again once it has caught up), or the "
		    "primary was not migrated (run `%s migrate`, which "
		    "migrates database, the primary)", v, queue_schema_latest,
		    suggest_cmd());
		return -1;
	}
	if (v == 0) {
		snprintf(err, errsz, "the database has no listgate "
		    "schema: run `%s migrate`", suggest_cmd());
		return -1;
	}
	if (v < queue_schema_latest) {
		snprintf(err, errsz, "the database schema is at version %d, "
		    "this listgate needs version %d: run `%s migrate`",
		    v, queue_schema_latest, suggest_cmd());
		return -1;
	}
	return 0;
}

/* the name of listgate's schema (see schema_first), NULL when
 * search_path names no schema there is */
#define LISTGATE_SCHEMA \
	"coalesce((SELECT p.name FROM " \
	"unnest(pg_catalog.current_schemas(false)) WITH ORDINALITY AS " \
	"p (name, i) WHERE pg_catalog.to_regclass(" \
	"pg_catalog.quote_ident(p.name) || '.schema_migrations') IS NOT " \
	"NULL AND pg_catalog.to_regclass(pg_catalog.quote_ident(p.name) " \
	"|| '.held_posts') IS NOT NULL ORDER BY p.i LIMIT 1), " \
	"pg_catalog.current_schema())"

/* SQLSTATE lock_not_available: lock_timeout ran out */
#define SQLSTATE_LOCK_NOT_AVAILABLE "55P03"

/*
 * After migrate gave up waiting secs seconds for a lock (its
 * transaction rolled back): say which table of listgate's schema
 * another session has held locked since before the wait began (the
 * oldest such transaction; rel, when not NULL, the table waited for),
 * and what to do, in err.  What waited: migration m, or (m NULL) the
 * reading of the schema's version by cmd ("migrate", or "migrate
 * --status"), the command to run again.
 */
static void
lock_holder(struct queue *q, const struct queue_migration *m,
    const char *cmd, const char *rel, unsigned secs, char *err,
    size_t errsz)
{
	PGresult *res;
	char sbuf[16];
	const char *params[2];
	size_t k;

	snprintf(sbuf, sizeof(sbuf), "%u", secs);
	params[0] = sbuf;
	params[1] = rel;
	if (m != NULL)
		k = (size_t)snprintf(err, errsz, "migration %04d_%s waited %u "
		    "s for a lock (lock_timeout) and was not applied: ",
		    m->version, m->name, secs);
	else
		k = (size_t)snprintf(err, errsz, "%s waited %u s for a "
		    "lock (lock_timeout) to read the schema's version: ", cmd,
		    secs);
	if (k >= errsz)
		return;
	/* (the activity of another role's session reads as NULL to a
	 * role without pg_read_all_stats: such a lock still counts) */
	res = PQexecParams(q->conn, "SELECT c.relname, l.mode, l.pid, "
	    "coalesce(a.usename::text, '?'), "
	    "regexp_replace(coalesce(a.application_name, ''), "
	    "'[^[:print:]]', '?', 'g'), coalesce(a.state, '?'), "
	    "coalesce((extract(epoch FROM now() - a.xact_start))::int8::text, "
	    "'?') FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON "
	    "c.oid = l.relation LEFT JOIN pg_catalog.pg_stat_activity a ON "
	    "a.pid = l.pid WHERE l.locktype = 'relation' AND l.granted AND "
	    "l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM "
	    "pg_catalog.pg_database WHERE datname = current_database()) AND "
	    "c.relkind IN ('r', 'p') AND c.relnamespace = (SELECT oid FROM "
	    "pg_catalog.pg_namespace WHERE nspname = " LISTGATE_SCHEMA ") AND "
	    "c.relname !~ '[^[:print:]]' AND ($2::text IS NULL OR "
	    "c.relname = $2::text) AND (a.xact_start IS NULL OR "
	    "a.xact_start <= now() - make_interval(secs => $1::int4)) "
	    "ORDER BY a.xact_start NULLS LAST, c.relname LIMIT 1", 2, NULL,
	    params, NULL, NULL, 0);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1)
		snprintf(err + k, errsz - k, "table %s is locked (%s) by the "
		    "session of pid %s (user %s, application '%s', %s), its "
		    "transaction open for %s s%s.  Run %s "
		    "again once that transaction has ended (or end it: SELECT "
		    "pg_terminate_backend(%s)), or give a longer "
		    "--lock-timeout", PQgetvalue(res, 0, 0),
		    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
		    PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4),
		    PQgetvalue(res, 0, 5), PQgetvalue(res, 0, 6),
		    rel == NULL ? ", and every other client of the table "
		    "would have queued behind migrate" : "", cmd,
		    PQgetvalue(res, 0, 2));
	else
		snprintf(err + k, errsz - k, "another session's transaction "
		    "holds a table it needs%s.  Run %s again when the "
		    "database is quieter, or give a longer --lock-timeout",
		    rel == NULL ? ", and every other client of that table "
		    "would have queued behind migrate" : "", cmd);
	PQclear(res);
}

/* did res fail because lock_timeout ran out? */
static int
lock_timed_out(const PGresult *res)
{
	const char *state;

	return res != NULL && (state = PQresultErrorField(res,
	    PG_DIAG_SQLSTATE)) != NULL &&
	    strcmp(state, SQLSTATE_LOCK_NOT_AVAILABLE) == 0;
}

/*
 * After a statement of migrate failed with res: when for want of a
 * privilege, add to err who may migrate.  The server's "permission
 * denied for table schema_migrations" (a moderator's or the filter's
 * role, with a migration pending), "for schema public" (a new database)
 * or "must be owner of table" named the object, not the role migrate
 * must run as.
 */
static void
no_privilege_hint(const PGresult *res, char *err, size_t errsz)
{
	privilege_hint(res, "migrate runs as a member of listgate_admin, "
	    "which owns the tables (the first time, as a superuser or a role "
	    "with CREATEROLE that owns the database: migration 0003 makes the "
	    "roles and hands them the tables); run it as such a role (user "
	    "in database in listgate.conf, else PGUSER)", err, errsz);
}

/*
 * One statement of migrate_next on schema_migrations, which another
 * session may hold locked: its result (PQclear it), or NULL when it
 * failed: then it is rolled back and err says why, naming the session
 * that held the table when lock_timeout ran out (m: the migration it
 * was for, NULL: the reading of the version).
 */
static PGresult *
migrate_exec(struct queue *q, const struct queue_migration *m,
    unsigned lock_timeout_s, const char *sql, int n,
    const char *const *vals, char *err, size_t errsz)
{
	PGresult *res = PQexecParams(q->conn, sql, n, NULL, vals, NULL, NULL,
	    0);
	char scratch[64];

	if (res != NULL && (PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK))
		return res;
	if (lock_timeout_s > 0 && lock_timed_out(res)) {
		PQclear(res);
		queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
		lock_holder(q, m, "migrate", "schema_migrations",
		    lock_timeout_s, err, errsz);
		return NULL;
	}
	if (m != NULL)
		snprintf(err, errsz, "migration %04d_%s: database: %s",
		    m->version, m->name, queue_pgerr(q, res));
	else
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	no_privilege_hint(res, err, errsz);
	PQclear(res);
	queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
	return NULL;
}

/*
 * Inside migrate's transaction: find listgate's schema, the first
 * schema of search_path with both schema_migrations and held_posts (the
 * one every command reads), else the first schema of search_path (a
 * new database: where the migrations create their tables), and when it
 * is not the first, put it first for this transaction (SET LOCAL,
 * through set_config), so that the migrations change listgate's tables
 * and create new ones beside them.  An administrator's role with a
 * schema of its own name ("$user", first in the default search_path)
 * would otherwise have got a second, empty listgate schema there, and
 * another program's schema_migrations (no held_posts beside it) is
 * passed over.  *missing_r: that schema has no schema_migrations yet.
 * 0, or -1 with err.
 */
static int
schema_first(struct queue *q, int *missing_r, char *err, size_t errsz)
{
	PGresult *res;
	int r = -1;

	*missing_r = 1;
	res = PQexecParams(q->conn, "WITH s AS (SELECT " LISTGATE_SCHEMA
	    " AS name) SELECT CASE WHEN s.name IS NULL THEN true ELSE "
	    "pg_catalog.to_regclass(pg_catalog.quote_ident(s.name) || "
	    "'.schema_migrations') IS NULL END, "
	    "CASE WHEN s.name IS DISTINCT FROM pg_catalog.current_schema() "
	    "THEN pg_catalog.set_config('search_path', "
	    "pg_catalog.quote_ident(s.name) || ', ' || "
	    "pg_catalog.current_setting('search_path'), true) END, "
	    "pg_catalog.to_regclass(pg_catalog.quote_ident(s.name) || "
	    "'.held_posts') IS NULL AND NOT " MIGRATIONS_LAYOUT(
	    "pg_catalog.to_regclass(pg_catalog.quote_ident(s.name) || "
	    "'.schema_migrations')") ", pg_catalog.regexp_replace("
	    "pg_catalog.quote_ident(s.name), '[^[:print:]]', '?', 'g') FROM s",
	    0, NULL, NULL, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1)
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	else if (strcmp(PQgetvalue(res, 0, 0), "f") == 0 &&
	    strcmp(PQgetvalue(res, 0, 2), "t") == 0)
		/* a schema_migrations without held_posts, and not of
		 * listgate's columns: another program's in the same
		 * schema, whose versions migrate would read as
		 * listgate's (migrate makes listgate's with held_posts,
		 * 0001, in one transaction) */
		foreign_msg(PQgetvalue(res, 0, 3), err, errsz);
	else {
		*missing_r = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		r = 0;
	}
	PQclear(res);
	return r;
}

/*
 * Inside migrate's transaction, listgate's schema missing where this
 * connection looks (schema_first): when the role may not create tables
 * there either, and a listgate schema exists that it does not see (no
 * USAGE on it, or not in search_path), say so as the schema check does
 * and return 1, else 0.  A role not granted the schema of an existing
 * database was told "schema version 0", every migration pending, by
 * migrate --status, and "permission denied for schema public" by
 * migrate.  (A role that may create tables there migrates a schema of
 * its own: several listgate schemas may share a database.)
 */
static int
missing_unseen(struct queue *q, char *err, size_t errsz)
{
	PGresult *res;
	int create;

	res = PQexecParams(q->conn, "SELECT coalesce(pg_catalog."
	    "has_schema_privilege(pg_catalog.current_schema(), 'CREATE'), "
	    "false)", 0, NULL, NULL, NULL, NULL, 0);
	create = res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "f") != 0;
	PQclear(res);
	return create ? 0 : schema_unseen(q, err, errsz);
}

/*
 * Apply one migration, the next one the database lacks, in a
 * transaction that holds the migrate lock: 1 applied (*m_r says which),
 * 0 nothing left to apply, -1 error (rolled back).  The lock is a
 * transaction lock, gone with the COMMIT: a connection pooler in
 * transaction mode may hand each transaction to another server
 * connection, where a session lock would stay behind.  Once it is
 * held, lock_timeout_s (when above 0) bounds each wait for a table
 * lock (SET LOCAL: the transaction's own, through a pooler too), that
 * of schema_migrations (read and written here) as those of the
 * migrations' tables, each ending in lock_holder's message; the
 * migrate lock itself is waited for as long as the other run takes,
 * for that wait blocks no other client.
 */
static int
migrate_next(struct queue *q, unsigned lock_timeout_s,
    const struct queue_migration **m_r, char *err, size_t errsz)
{
	const struct queue_migration *m;
	PGresult *res;
	char lockkey[32], vbuf[16], scratch[64];
	const char *params[2];
	int v, missing;

	*m_r = NULL;
	if (queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	if (no_statement_timeout(q, err, errsz) < 0)
		goto fail;
	snprintf(lockkey, sizeof(lockkey), "%d", QUEUE_LOCK_MIGRATE);
	params[0] = lockkey;
	if (queue_lock_wait(q, "SELECT pg_advisory_xact_lock($1::int8)", 1,
	    params, err, errsz) < 0)
		goto fail;
	if (set_lock_timeout(q, lock_timeout_s, err, errsz) < 0 ||
	    set_client_check(q, err, errsz) < 0)
		goto fail;
	/* only when missing: a role that may not create tables (the
	 * filter's, a moderator's) can still run migrate on a schema that
	 * is up to date, and be told so.  Missing in listgate's schema
	 * (schema_first, which puts it first in search_path): another
	 * program's schema_migrations elsewhere in the path is not
	 * listgate's */
	if (schema_first(q, &missing, err, errsz) < 0)
		goto fail;
	if (missing && missing_unseen(q, err, errsz) != 0)
		goto fail;
	if (missing) {
		if ((res = migrate_exec(q, NULL, lock_timeout_s, "CREATE TABLE "
		    "IF NOT EXISTS schema_migrations ("
		    "version integer PRIMARY KEY CHECK (version > 0), "
		    "name text NOT NULL, "
		    "applied_at timestamptz NOT NULL DEFAULT now())", 0, NULL,
		    err, errsz)) == NULL)
			return -1;
		PQclear(res);
	}
	/* (a session that holds schema_migrations, an open transaction
	 * that altered or locked it, is waited for within lock_timeout) */
	if ((res = migrate_exec(q, NULL, lock_timeout_s, "SELECT "
	    "coalesce(max(version), 0) FROM schema_migrations", 0, NULL, err,
	    errsz)) == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		snprintf(err, errsz, "database: schema_migrations: no version");
		PQclear(res);
		goto fail;
	}
	v = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	if (v > queue_schema_latest) {
		snprintf(err, errsz, "the database schema is version %d, newer "
		    "than this listgate knows (%d): refusing to touch it; "
		    "upgrade listgate", v, queue_schema_latest);
		goto fail;
	}
	for (m = queue_migrations; m->name != NULL && m->version <= v; m++)
		;
	if (m->name == NULL)
		return queue_cmd(q, "COMMIT", err, errsz) < 0 ? -1 : 0;
	/* a fixed script compiled in: the one place with several
	 * statements in one string, hence PQexec */
	res = PQexec(q->conn, m->sql);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
		if (lock_timeout_s > 0 && lock_timed_out(res)) {
			PQclear(res);
			queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
			lock_holder(q, m, "migrate", NULL, lock_timeout_s, err,
			    errsz);
			return -1;
		}
		snprintf(err, errsz, "migration %04d_%s failed: %s",
		    m->version, m->name, queue_pgerr(q, res));
		no_privilege_hint(res, err, errsz);
		PQclear(res);
		goto fail;
	}
	PQclear(res);
	snprintf(vbuf, sizeof(vbuf), "%d", m->version);
	params[0] = vbuf;
	params[1] = m->name;
	if ((res = migrate_exec(q, m, lock_timeout_s, "INSERT INTO "
	    "schema_migrations (version, name) VALUES ($1, $2)", 2, params,
	    err, errsz)) == NULL)
		return -1;
	PQclear(res);
	if (queue_cmd(q, "COMMIT", err, errsz) < 0)
		return -1;
	*m_r = m;
	return 1;
fail:
	queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
	return -1;
}

int
queue_schema_status(struct queue *q, unsigned lock_timeout_s,
    int *version_r, char *err, size_t errsz)
{
	PGresult *res;
	char scratch[64];
	int r = -1, missing;

	*version_r = 0;
	/* a transaction of its own: SET LOCAL, through a pooler too */
	if (queue_cmd(q, "BEGIN", err, errsz) < 0)
		return -1;
	if (no_statement_timeout(q, err, errsz) < 0 ||
	    set_lock_timeout(q, lock_timeout_s, err, errsz) < 0 ||
	    set_client_check(q, err, errsz) < 0)
		goto done;
	/* the version of the schema migrate would change: none yet (0),
	 * whatever other program's schema_migrations search_path has */
	if (schema_first(q, &missing, err, errsz) < 0)
		goto done;
	if (missing && missing_unseen(q, err, errsz) != 0)
		goto done;
	if (missing) {
		r = 0;
		goto done;
	}
	res = PQexecParams(q->conn, QUEUE_SCHEMA_SQL, 0, NULL, NULL, NULL,
	    NULL, 0);
	if (schema_res(res, version_r) == 0)
		r = 0;
	else if (lock_timeout_s > 0 && lock_timed_out(res)) {
		PQclear(res);
		queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
		lock_holder(q, NULL, "migrate --status", "schema_migrations",
		    lock_timeout_s, err, errsz);
		return -1;
	} else {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		no_role_hint(res, err, errsz);
	}
	PQclear(res);
done:
	/* it only read: a rollback ends it, failed or not */
	queue_cmd(q, "ROLLBACK", scratch, sizeof(scratch));
	return r;
}

int
queue_in_recovery(struct queue *q, int *standby_r, char *err, size_t errsz)
{
	PGresult *res;
	int r = -1;

	*standby_r = 0;
	res = PQexecParams(q->conn, "SELECT pg_is_in_recovery()", 0, NULL,
	    NULL, NULL, NULL, 0);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1) {
		*standby_r = *PQgetvalue(res, 0, 0) == 't';
		r = 0;
	} else
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	PQclear(res);
	return r;
}

int
queue_identity(struct queue *q, uint64_t *sysid_r, uint32_t *dboid_r,
    char *err, size_t errsz)
{
	PGresult *res;
	int r = -1;

	*sysid_r = 0;
	*dboid_r = 0;
	/* (pg_control_system() is everyone's to call) */
	res = PQexecParams(q->conn, "SELECT s.system_identifier::text, "
	    "d.oid::int8::text FROM pg_control_system() s, pg_database d "
	    "WHERE d.datname = current_database()", 0, NULL, NULL, NULL,
	    NULL, 0);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1) {
		*sysid_r = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
		*dboid_r = (uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
		r = 0;
	} else
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
	PQclear(res);
	return r;
}

int
queue_migrate(struct queue *q, unsigned lock_timeout_s, int *napplied_r,
    void (*report)(int version, const char *name, void *ctx), void *ctx,
    char *err, size_t errsz)
{
	const struct queue_migration *m;
	int r;

	*napplied_r = 0;
	while ((r = migrate_next(q, lock_timeout_s, &m, err, errsz)) > 0) {
		(*napplied_r)++;
		if (report)
			report(m->version, m->name, ctx);
	}
	return r;
}

/* --- holding ----------------------------------------------------------- */

/*
 * A copy of s fit for a text column: valid UTF-8 (bad bytes become
 * U+FFFD) of at most max bytes, cut at a character boundary; NULL only
 * when out of memory (xfree it).  Controls are kept: the row keeps what
 * the post said, and every output masks it (gate/util/sanitize.h).
 */
static char *
pg_text(const char *s, size_t max)
{
	struct buf b = BUF_INIT(max);

	/* (the empty add makes data a C string even for "") */
	if (buf_add(&b, "", 0) < 0 ||
	    sanitize_utf8(&b, s ? s : "", s ? strlen(s) : 0) < 0) {
		buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* the rows that hold a post's place in the queue: at most one per list
 * and SHA-256 (the unique index held_posts_once of migration 0002); a
 * post stored as discarded never conflicts */
#define PENDING_ROWS	"status IN ('held', 'releasing')"

/* a moderator's decision on these bytes within the window ($1 list, $2
 * SHA-256, DAYS the window in days; decided_posts of migration 0004).
 * Days of 24 hours, as hold_expiry_days' expiry counts them (db/expiry.c):
 * make_interval(days => N) counts calendar days of the session's
 * TimeZone, 23 or 25 hours across a daylight-saving change */
#define DECIDED_ROWS(DAYS) \
	"decided_posts WHERE list = $1 AND raw_sha256 = $2 AND " \
	"decided_at > now() - make_interval(hours => 24 * " DAYS ")"

/* how often queue_hold retries when the row it collided with changed
 * state before it could be read */
#define HOLD_TRIES	5
/* a held post is read, compressed and sent in chunks of this size */
#define HOLD_CHUNK	(1024u * 1024u)

/* QUEUE_HELD_* for a status of held_posts or decided_posts */
static int
held_code(const char *status)
{
	if (strcmp(status, "approved") == 0)
		return QUEUE_HELD_APPROVED;
	if (strcmp(status, "rejected") == 0)
		return QUEUE_HELD_REJECTED;
	if (strcmp(status, "discarded") == 0)
		return QUEUE_HELD_DISCARDED;
	return QUEUE_HELD_PENDING;
}

/* a post read in chunks: from memory, or with pread from a file (so a
 * spooled post is never mapped whole) */
struct post_in {
	const unsigned char *mem;
	int fd;			/* >= 0: read from here */
	size_t len, off;
	unsigned char *buf;	/* HOLD_CHUNK bytes for pread */
};

/* open a reader: 0, or -1 with err (memory) */
static int
post_in_open(struct post_in *in, const unsigned char *mem, size_t len,
    int fd, char *err, size_t errsz)
{
	memset(in, 0, sizeof(*in));
	in->mem = mem;
	in->len = len;
	in->fd = fd;
	if (fd >= 0 && (in->buf = xmalloc(HOLD_CHUNK)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	return 0;
}

/* the next chunk: 1 with *p, *n; 0 at the end; -1 with err */
static int
post_in_next(struct post_in *in, const unsigned char **p, size_t *n,
    char *err, size_t errsz)
{
	size_t want = in->len - in->off;
	ssize_t r;

	if (want == 0)
		return 0;
	if (want > HOLD_CHUNK)
		want = HOLD_CHUNK;
	if (in->fd < 0) {
		*p = in->mem + in->off;
		*n = want;
		in->off += want;
		return 1;
	}
	do
		r = pread(in->fd, in->buf, want, (off_t)in->off);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		snprintf(err, errsz, "cannot read the spooled post: %s",
		    r < 0 ? strerror(errno) : "it is shorter than its size");
		return -1;
	}
	*p = in->buf;
	*n = (size_t)r;
	in->off += (size_t)r;
	return 1;
}

static void
post_in_close(struct post_in *in)
{
	xfree(in->buf);
	in->buf = NULL;
}

/* the SHA-256 of len bytes at raw, or of fd from offset 0: 0 or -1 */
static int
post_digest(const unsigned char *raw, size_t len, int fd,
    unsigned char out[SHA256_DIGEST_SIZE], char *err, size_t errsz)
{
	struct post_in in;
	struct sha256_ctx c;
	const unsigned char *p;
	size_t n;
	int r;

	if (post_in_open(&in, raw, len, fd, err, errsz) < 0)
		return -1;
	sha256_init(&c);
	while ((r = post_in_next(&in, &p, &n, err, errsz)) > 0)
		sha256_update(&c, n, p);
	post_in_close(&in);
	if (r < 0)
		return -1;
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
	return 0;
}

/*
 * The compressed post on its way to the server: whole in buf while it
 * fits one chunk, else a large object (oid) written chunk by chunk in
 * the open transaction.
 */
struct zout {
	struct queue *q;
	unsigned char *buf;	/* HOLD_CHUNK bytes */
	size_t fill;		/* bytes in buf not yet written */
	int lo;			/* a large object was created */
	char oid[24];
	uint64_t off;		/* bytes written to it */
};

/* write buf to the large object (created, in a new transaction, on the
 * first call): 0, or -1 with err */
static int
zout_flush(struct zout *z, char *err, size_t errsz)
{
	char offbuf[32];
	const char *vals[3] = { z->oid, offbuf, (const char *)z->buf };
	int lens[3] = { 0, 0, (int)z->fill }, fmts[3] = { 0, 0, 1 };
	PGresult *res;
	int ok;

	if (!z->lo) {
		if (queue_cmd(z->q, "BEGIN", err, errsz) < 0)
			return -1;
		z->lo = 1;	/* (a ROLLBACK ends it from now on) */
		res = PQexecParams(z->q->conn, "SELECT lo_create(0)", 0, NULL,
		    NULL, NULL, NULL, 0);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
		    PQntuples(res) != 1) {
			snprintf(err, errsz, "database: cannot hold the post: "
			    "%s", queue_pgerr(z->q, res));
			PQclear(res);
			return -1;
		}
		snprintf(z->oid, sizeof(z->oid), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	snprintf(offbuf, sizeof(offbuf), "%llu", (unsigned long long)z->off);
	res = PQexecParams(z->q->conn, "SELECT lo_put($1::oid, $2::int8, $3)",
	    3, NULL, vals, lens, fmts, 0);
	ok = res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		snprintf(err, errsz, "database: cannot hold the post: %s",
		    queue_pgerr(z->q, res));
	PQclear(res);
	if (!ok)
		return -1;
	z->off += z->fill;
	z->fill = 0;
	return 0;
}

/* compress the post (from in) into z, its SHA-256 into digest: 0, or -1
 * with err */
static int
deflate_post(struct post_in *in, struct zout *z,
    unsigned char digest[SHA256_DIGEST_SIZE], char *err, size_t errsz)
{
	struct sha256_ctx c;
	z_stream zs;
	const unsigned char *p;
	size_t n;
	int r, zr, rc = -1, flush;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit(&zs, QUEUE_ZLEVEL_HELD) != Z_OK) {
		snprintf(err, errsz, "out of memory compressing the post");
		return -1;
	}
	sha256_init(&c);
	do {
		if ((r = post_in_next(in, &p, &n, err, errsz)) < 0)
			goto out;
		flush = r == 0 ? Z_FINISH : Z_NO_FLUSH;
		if (r > 0) {
			sha256_update(&c, n, p);
			zs.next_in = (unsigned char *)(uintptr_t)p;
			zs.avail_in = (uInt)n;
		}
		do {
			zs.next_out = z->buf + z->fill;
			zs.avail_out = (uInt)(HOLD_CHUNK - z->fill);
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				snprintf(err, errsz, "cannot compress the post");
				goto out;
			}
			z->fill = HOLD_CHUNK - zs.avail_out;
			if (z->fill == HOLD_CHUNK && zout_flush(z, err,
			    errsz) < 0)
				goto out;
		} while (zs.avail_out == 0 || (flush == Z_FINISH &&
		    zr != Z_STREAM_END));
	} while (flush != Z_FINISH);
	/* the last piece goes with the INSERT, or to the large object */
	if (z->lo && z->fill > 0 && zout_flush(z, err, errsz) < 0)
		goto out;
	sha256_digest(&c, SHA256_DIGEST_SIZE, digest);
	rc = 0;
out:
	deflateEnd(&zs);
	return rc;
}

/* a condition of the INSERT, always true, that makes the commit of its
 * transaction wait for the WAL to reach the disk where the server, the
 * database or the role has synchronous_commit off: the filter reports
 * a hold done, and a crash of the server must not lose it then (any
 * other setting already flushes locally, and is kept); an approval's
 * mark 'releasing' too (queue_decide) */
#define HOLD_DURABLE \
	"(pg_catalog.current_setting('synchronous_commit') <> 'off' OR " \
	"pg_catalog.set_config('synchronous_commit', 'local', true) " \
	"IS NOT NULL)"

/* the INSERT of queue_hold, with raw_z from a parameter (RAWZ "$11::bytea")
 * or from a large object ("lo_get($11::oid)") */
#define HOLD_SQL(RAWZ) \
	"INSERT INTO held_posts (list, env_sender, env_recipient, " \
	"from_hdr, subject, message_id, size, score, verdict, clues, " \
	"raw_z, raw_sha256, status, decided_by, decided_at, note) " \
	"SELECT $1, $2, $3, $4, $5, $6, $7::int8, $8::float8, $9, $10, " \
	RAWZ ", $12::bytea, $13::text, CASE WHEN $13::text = 'held' " \
	"THEN NULL ELSE '" QUEUE_FILTER_BY "' END, " \
	"CASE WHEN $13::text = 'held' THEN NULL ELSE now() END, " \
	"NULLIF($16::text, '') " \
	"WHERE (SELECT max(version) FROM schema_migrations) = $15::int4 " \
	"AND NOT EXISTS (SELECT 1 FROM decided_posts WHERE list = $1 " \
	"AND raw_sha256 = $12::bytea AND decided_at > now() - " \
	"make_interval(hours => 24 * $14::int4)) AND " HOLD_DURABLE " " \
	"ON CONFLICT DO NOTHING RETURNING id"

/* HOLD_SQL, and the new post's hold notices (moddb_queue's rows) to the
 * moderators $17 queued in the same statement: all or nothing, so that
 * a failure after the commit (the server gone, the filter killed) never
 * leaves a held post that no notice will ever announce.  Past $18 posts
 * noticed in the hour (0: always) they wait for a digest, as
 * notify_held decides. */
#define HOLD_NOTIFY_SQL(RAWZ) \
	"WITH h AS (" HOLD_SQL(RAWZ) "), o AS (INSERT INTO notice_outbox " \
	"(list, post_id, moderator, kind, digest) SELECT $1, h.id, m.a, " \
	"'hold', (SELECT $18::int8 = 0 OR count(DISTINCT post_id) >= " \
	"$18::int8 FROM notice_outbox WHERE list = $1 AND state = 'sent' " \
	"AND done_at > now() - interval '1 hour') FROM h, " \
	"unnest($17::text[]) WITH ORDINALITY AS m (a, n) ORDER BY m.n " \
	"ON CONFLICT (post_id, moderator) WHERE kind = 'hold' DO NOTHING) " \
	"SELECT id FROM h"

int
queue_hold(struct queue *q, const struct queue_post *p, int64_t *id_r,
    char *err, size_t errsz)
{
	return queue_hold_sha(q, p, id_r, NULL, err, errsz);
}

int
queue_hold_sha(struct queue *q, const struct queue_post *p, int64_t *id_r,
    unsigned char *sha_r, char *err, size_t errsz)
{
	/*
	 * One round trip for a new post (of up to a chunk compressed):
	 * insert unless these bytes are already pending for the list, or
	 * were decided within the window, or (a discarded post) were
	 * discarded by a filter already (migration 0010: two filters, or
	 * a filter and a holder that answered it late, storing one post).
	 * Only a retried delivery needs the second statement, which finds
	 * the row already there or the decision.  (A plain INSERT ... ON
	 * CONFLICT plans in a fresh server process in 0.75 ms, a CTE
	 * doing both in one statement in 1.1 ms.)  If that row was
	 * decided in between (and the window is 0), the SELECT finds
	 * nothing and the INSERT is tried again.
	 */
	static const char sql[] = HOLD_SQL("$11::bytea");
	static const char sql_lo[] = HOLD_SQL("lo_get($11::oid)");
	static const char sql_n[] = HOLD_NOTIFY_SQL("$11::bytea");
	static const char sql_n_lo[] = HOLD_NOTIFY_SQL("lo_get($11::oid)");
	/* (a pending row refuses only a held post, the filter's discard
	 * only a discarded one) */
	static const char sql_found[] =
	    "SELECT 0 AS k, id, status FROM held_posts WHERE list = $1 AND "
	    "raw_sha256 = $2 AND " PENDING_ROWS " AND $4::text <> "
	    "'discarded' UNION ALL "
	    "SELECT 1, post_id, status FROM " DECIDED_ROWS("$3::int4")
	    " UNION ALL SELECT 2, id, status FROM held_posts WHERE list = $1 "
	    "AND raw_sha256 = $2 AND status = 'discarded' AND decided_by = '"
	    QUEUE_FILTER_BY "' AND $4::text = 'discarded' ORDER BY 1 LIMIT 1";
	const char *vals[18], *pvals[4];
	int lens[18], fmts[18], plens[4] = { 0, SHA256_DIGEST_SIZE, 0, 0 };
	int pfmts[4] = { 0, 1, 0, 0 };
	char *txt[7];
	char sizebuf[32], scorebuf[40], daysbuf[16], schemabuf[16], e2[64];
	char maxbuf[16];
	struct buf mods = BUF_INIT(1024u * 1024u);
	int notify = p->notify_mods != NULL && p->notify_mods[0] != NULL &&
	    (p->status == NULL || strcmp(p->status, "held") == 0);
	char why[512];
	unsigned char digest[SHA256_DIGEST_SIZE];
	struct post_in in;
	struct zout z;
	size_t i;
	double score = p->score;
	PGresult *res;
	int r = -1, try, checked = 0;

	*id_r = 0;
	memset(txt, 0, sizeof(txt));
	memset(&z, 0, sizeof(z));
	memset(&in, 0, sizeof(in));
	z.q = q;
	if (p->raw_len > LG_MAX_POST_BYTES) {
		snprintf(err, errsz, "post of %zu bytes is larger than %u",
		    p->raw_len, LG_MAX_POST_BYTES);
		return -1;
	}
	if ((z.buf = xmalloc(HOLD_CHUNK)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if (post_in_open(&in, p->raw, p->raw_len, p->raw_from_fd ?
	    p->raw_fd : -1, err, errsz) < 0 ||
	    deflate_post(&in, &z, digest, err, errsz) < 0)
		goto out;
	if (sha_r != NULL)
		memcpy(sha_r, digest, SHA256_DIGEST_SIZE);
	txt[0] = pg_text(p->env_sender, FIELD_MAX);
	txt[1] = pg_text(p->env_recipient, FIELD_MAX);
	txt[2] = pg_text(p->from, FIELD_MAX);
	txt[3] = pg_text(p->subject, FIELD_MAX);
	txt[4] = pg_text(p->msgid, FIELD_MAX);
	txt[5] = pg_text(p->clues, CLUES_MAX);
	txt[6] = pg_text(p->note != NULL ? p->note : "", FIELD_MAX);
	for (i = 0; i < 7; i++)
		if (txt[i] == NULL) {
			snprintf(err, errsz, "out of memory");
			goto out;
		}
	if (!(score >= 0))	/* NaN too */
		score = 0;
	if (score > 1)
		score = 1;
	snprintf(sizebuf, sizeof(sizebuf), "%zu", p->raw_len);
	snprintf(scorebuf, sizeof(scorebuf), "%.17g", score);
	/* (days beyond any list's window are the same as that window) */
	snprintf(daysbuf, sizeof(daysbuf), "%u", p->remember_days > 100000 ?
	    100000u : p->remember_days);
	memset(lens, 0, sizeof(lens));
	memset(fmts, 0, sizeof(fmts));
	vals[0] = p->list;
	vals[1] = txt[0];
	vals[2] = txt[1];
	vals[3] = txt[2];
	vals[4] = txt[3];
	vals[5] = txt[4];
	vals[6] = sizebuf;
	vals[7] = scorebuf;
	vals[8] = p->verdict ? p->verdict : "unsure";
	vals[9] = txt[5];
	if (z.lo)
		vals[10] = z.oid;
	else {
		vals[10] = (const char *)z.buf;
		lens[10] = (int)z.fill;
		fmts[10] = 1;
	}
	vals[11] = (const char *)digest;
	lens[11] = SHA256_DIGEST_SIZE;
	fmts[11] = 1;
	vals[12] = p->status ? p->status : "held";
	vals[13] = daysbuf;
	/* the schema check rides in the INSERT: one round trip for a new
	 * post, even through a pooler */
	snprintf(schemabuf, sizeof(schemabuf), "%d", queue_schema_latest);
	vals[14] = schemabuf;
	vals[15] = txt[6];
	if (notify) {
		if (moddb_text_array(&mods, p->notify_mods) < 0) {
			snprintf(err, errsz, "out of memory (or moderators' "
			    "addresses past 1 MiB)");
			goto out;
		}
		snprintf(maxbuf, sizeof(maxbuf), "%u", p->notify_max_per_hour);
		vals[16] = buf_str(&mods);
		vals[17] = maxbuf;
	}
	snprintf(err, errsz, "database: cannot hold the post: the same "
	    "post is being stored and decided at once");
	for (try = 0; try < HOLD_TRIES && r < 0; try++) {
		res = PQexecParams(q->conn, notify ? (z.lo ? sql_n_lo : sql_n) :
		    z.lo ? sql_lo : sql, notify ? 18 : 16, NULL, vals, lens,
		    fmts, 0);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
			/* no schema, an older one: say so rather than what
			 * the INSERT met */
			snprintf(why, sizeof(why), "%s", queue_pgerr(q, res));
			PQclear(res);
			/* a large object's transaction is aborted: it ends
			 * first, or the check meets only that ("current
			 * transaction is aborted") and says it for the cause */
			if (z.lo) {
				queue_cmd(q, "ROLLBACK", e2, sizeof(e2));
				z.lo = 0;
			}
			if (queue_check_schema(q, err, errsz) == 0)
				snprintf(err, errsz, "database: cannot hold the "
				    "post: %s", why);
			r = -1;
			goto out;
		}
		if (PQntuples(res) == 1) {
			*id_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
			r = QUEUE_HELD_NEW;
		}
		PQclear(res);
		if (r == 0)
			break;
		/* nothing inserted: a schema this binary does not know, or
		 * these bytes already pending or decided */
		if (!checked) {
			if (queue_check_schema(q, err, errsz) < 0)
				goto out;
			checked = 1;
			snprintf(err, errsz, "database: cannot hold the post: "
			    "the same post is being stored and decided at "
			    "once");
		}
		/* a retry: the row that holds these bytes, or the decision
		 * on them */
		pvals[0] = vals[0];
		pvals[1] = vals[11];
		pvals[2] = daysbuf;
		pvals[3] = vals[12];
		res = PQexecParams(q->conn, sql_found, 4, NULL, pvals, plens,
		    pfmts, 0);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
			goto dberr;
		if (PQntuples(res) == 1) {
			*id_r = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
			r = held_code(PQgetvalue(res, 0, 2));
		}
		PQclear(res);
	}
	if (z.lo && r >= 0) {
		/* the row has its copy: the large object goes, and the
		 * whole commits (nothing stored but what r says) */
		pvals[0] = z.oid;
		res = PQexecParams(q->conn, "SELECT lo_unlink($1::oid)", 1,
		    NULL, pvals, NULL, NULL, 0);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
			goto dberr;
		PQclear(res);
		if (queue_cmd(q, "COMMIT", err, errsz) < 0)
			r = -1;
		z.lo = 0;
	}
	goto out;
dberr:
	snprintf(err, errsz, "database: cannot hold the post: %s",
	    queue_pgerr(q, res));
	PQclear(res);
	r = -1;
out:
	if (z.lo)	/* the large object and anything else: undone */
		queue_cmd(q, "ROLLBACK", e2, sizeof(e2));
	post_in_close(&in);
	for (i = 0; i < 7; i++)
		xfree(txt[i]);
	xfree(z.buf);
	buf_free(&mods);
	return r;
}

int
queue_decided(struct queue *q, const char *list, const unsigned char *raw,
    size_t len, int fd, unsigned days, int64_t *id_r, char *err,
    size_t errsz)
{
	unsigned char digest[SHA256_DIGEST_SIZE];
	char daysbuf[16];
	const char *vals[3];
	int lens[3] = { 0, SHA256_DIGEST_SIZE, 0 }, fmts[3] = { 0, 1, 0 };
	PGresult *res;
	int r = 0;

	*id_r = 0;
	if (days == 0)
		return 0;
	if (post_digest(raw, len, fd, digest, err, errsz) < 0)
		return -1;
	snprintf(daysbuf, sizeof(daysbuf), "%u", days > 100000 ? 100000u :
	    days);
	vals[0] = list;
	vals[1] = (const char *)digest;
	vals[2] = daysbuf;
	res = PQexecParams(q->conn, "SELECT post_id, status FROM "
	    DECIDED_ROWS("$3::int4"), 3, NULL, vals, lens, fmts, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: cannot look up decided posts: "
		    "%s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	if (PQntuples(res) == 1) {
		*id_r = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		r = held_code(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
	return r;
}

/* --- reading ----------------------------------------------------------- */

/* the columns queue_list and queue_get select, in the order row_fill
 * reads them */
#define ROW_COLS \
	"id, list, env_sender, env_recipient, from_hdr, subject, " \
	"message_id, verdict, clues, status, coalesce(decided_by, ''), " \
	"coalesce(note, ''), floor(extract(epoch FROM arrived_at))::int8, " \
	"coalesce(floor(extract(epoch FROM decided_at))::int8, 0), size, " \
	"score, raw_sha256"

void
queue_row_free(struct queue_row *r)
{
	if (r == NULL)
		return;
	xfree(r->list);
	xfree(r->env_sender);
	xfree(r->env_recipient);
	xfree(r->from);
	xfree(r->subject);
	xfree(r->msgid);
	xfree(r->verdict);
	xfree(r->clues);
	xfree(r->status);
	xfree(r->decided_by);
	xfree(r->note);
	xfree(r->raw);
	memset(r, 0, sizeof(*r));
}

/* fill r from row i of a binary result with ROW_COLS: 0 or -1 (memory) */
static int
row_fill(const PGresult *res, int i, struct queue_row *r)
{
	memset(r, 0, sizeof(*r));
	r->id = queue_col_i64(res, i, 0);
	r->list = queue_col_str(res, i, 1);
	r->env_sender = queue_col_str(res, i, 2);
	r->env_recipient = queue_col_str(res, i, 3);
	r->from = queue_col_str(res, i, 4);
	r->subject = queue_col_str(res, i, 5);
	r->msgid = queue_col_str(res, i, 6);
	r->verdict = queue_col_str(res, i, 7);
	r->clues = queue_col_str(res, i, 8);
	r->status = queue_col_str(res, i, 9);
	r->decided_by = queue_col_str(res, i, 10);
	r->note = queue_col_str(res, i, 11);
	r->arrived = (time_t)queue_col_i64(res, i, 12);
	r->decided = (time_t)queue_col_i64(res, i, 13);
	r->size = queue_col_i64(res, i, 14);
	r->score = queue_col_f64(res, i, 15);
	if (PQgetlength(res, i, 16) == (int)sizeof(r->raw_sha256))
		memcpy(r->raw_sha256, PQgetvalue(res, i, 16),
		    sizeof(r->raw_sha256));
	if (!r->list || !r->env_sender || !r->env_recipient || !r->from ||
	    !r->subject || !r->msgid || !r->verdict || !r->clues ||
	    !r->status || !r->decided_by || !r->note) {
		queue_row_free(r);
		return -1;
	}
	return 0;
}

int
queue_list(struct queue *q, const char *status, const char *list,
    queue_row_fn fn, void *ctx, char *err, size_t errsz)
{
	static const char *const statuses[] = { "held", "releasing",
	    "approved", "rejected", "discarded", "expired", NULL };
	const char *vals[2];
	char set[32];
	struct queue_row r;
	PGresult *res;
	ExecStatusType st;
	int i, rc = 0;

	/* status as a text[] literal: a known word, or the pending pair */
	if (strcmp(status, "pending") == 0)
		snprintf(set, sizeof(set), "{held,releasing}");
	else {
		for (i = 0; statuses[i] && strcmp(statuses[i], status); i++)
			;
		if (statuses[i] == NULL) {
			snprintf(err, errsz, "bad status '%s'", status);
			return -1;
		}
		snprintf(set, sizeof(set), "{%s}", statuses[i]);
	}
	vals[0] = set;
	vals[1] = list;
	/* row by row (single-row mode): a flood of held posts must not
	 * be read into memory at once, the listing's memory stays that of
	 * one row whatever the queue holds */
	if (!PQsendQueryParams(q->conn, "SELECT " ROW_COLS " FROM held_posts "
	    "WHERE status = ANY ($1::text[]) AND ($2::text IS NULL OR "
	    "list = $2::text) ORDER BY arrived_at, id", 2, NULL, vals, NULL,
	    NULL, 1)) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, NULL));
		return -1;
	}
	/* (were it refused, the rows would come in one result: read
	 * below as well) */
	(void)PQsetSingleRowMode(q->conn);
	/* every result is read, also after a stop or a failure: the
	 * connection takes no other query before */
	while ((res = PQgetResult(q->conn)) != NULL) {
		st = PQresultStatus(res);
		if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
			for (i = 0; i < PQntuples(res) && rc == 0; i++) {
				if (row_fill(res, i, &r) < 0) {
					snprintf(err, errsz, "out of memory");
					rc = -2;
					break;
				}
				if ((rc = fn(&r, ctx)) < 0)
					snprintf(err, errsz, "out of memory: "
					    "the listing stopped");
				queue_row_free(&r);
			}
		} else if (rc >= 0) {
			snprintf(err, errsz, "database: %s",
			    queue_pgerr(q, res));
			rc = -2;
		}
		PQclear(res);
	}
	return rc < 0 ? -1 : 0;
}

/* decompress raw_z (column zc) with size (column sc) and check it against
 * raw_sha256 (column hc) into r: 0 or -1 */
static int
row_raw(const PGresult *res, int i, int zc, int hc, struct queue_row *r,
    char *err, size_t errsz)
{
	unsigned char digest[SHA256_DIGEST_SIZE];
	size_t cap = 0;

	r->raw = NULL;
	if (queue_inflate((const unsigned char *)PQgetvalue(res, i, zc),
	    (size_t)PQgetlength(res, i, zc), r->size, &r->raw, &cap, err,
	    errsz) < 0)
		return -1;
	r->raw_len = (size_t)r->size;
	post_sha256(r->raw, r->raw_len, digest);
	if (PQgetlength(res, i, hc) != SHA256_DIGEST_SIZE ||
	    memcmp(PQgetvalue(res, i, hc), digest, SHA256_DIGEST_SIZE) != 0) {
		snprintf(err, errsz, "post %lld: stored message does not match "
		    "its SHA-256", (long long)r->id);
		return -1;
	}
	return 0;
}

/*
 * The row of post id, its raw bytes in column 17 (sql: ROW_COLS and that
 * column, $1 the id, vals[1..n-1] the rest) filled into r but for the
 * bytes: the result (PQclear it), with *got 1; NULL with *got 0 when no
 * such post, -1 with err
 */
static PGresult *
get_row(struct queue *q, int64_t id, const char *sql, int n,
    const char **vals, struct queue_row *r, int *got, char *err,
    size_t errsz)
{
	char idbuf[32];
	PGresult *res;

	memset(r, 0, sizeof(*r));
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	vals[0] = idbuf;
	res = PQexecParams(q->conn, sql, n, NULL, vals, NULL, NULL, 1);
	*got = -1;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return NULL;
	}
	if (PQntuples(res) == 0) {
		PQclear(res);
		*got = 0;
		return NULL;
	}
	if (row_fill(res, 0, r) < 0) {
		snprintf(err, errsz, "out of memory");
		PQclear(res);
		return NULL;
	}
	*got = 1;
	return res;
}

int
queue_get(struct queue *q, int64_t id, struct queue_row *r, char *err,
    size_t errsz)
{
	const char *vals[1];
	PGresult *res;
	int got;

	if ((res = get_row(q, id, "SELECT " ROW_COLS ", raw_z FROM held_posts "
	    "WHERE id = $1::int8", 1, vals, r, &got, err, errsz)) == NULL)
		return got;
	if (row_raw(res, 0, 17, 16, r, err, errsz) < 0) {
		queue_row_free(r);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 1;
}

/* the first want bytes of the zlib stream whose first n bytes are in
 * into a new *out (NUL-terminated): 0, -1 out of memory, QUEUE_ECORRUPT
 * when they do not inflate to want bytes */
static int
inflate_head(const unsigned char *in, size_t n, size_t want,
    unsigned char **out, char *err, size_t errsz)
{
	z_stream zs;
	unsigned char *p;
	int zr;

	*out = NULL;
	if ((p = xmalloc(want + 1)) == NULL) {
		snprintf(err, errsz, "out of memory (%zu bytes)", want + 1);
		return -1;
	}
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		xfree(p);
		snprintf(err, errsz, "out of memory (zlib)");
		return -1;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)n;
	zs.next_out = p;
	zs.avail_out = (uInt)want;
	do
		zr = inflate(&zs, Z_NO_FLUSH);
	while (zr == Z_OK && zs.avail_out > 0 && zs.avail_in > 0);
	inflateEnd(&zs);
	if (zs.avail_out != 0 || (zr != Z_OK && zr != Z_STREAM_END &&
	    zr != Z_BUF_ERROR)) {
		xfree(p);
		snprintf(err, errsz, "stored message is corrupt (its first "
		    "%zu bytes do not decompress)", want);
		return QUEUE_ECORRUPT;
	}
	p[want] = 0;
	*out = p;
	return 0;
}

int
queue_get_head(struct queue *q, int64_t id, size_t max, struct queue_row *r,
    char *err, size_t errsz)
{
	char zbuf[32];
	const char *vals[2] = { NULL, zbuf };
	PGresult *res;
	int rc;

	if (max == 0 || max > LG_MAX_POST_BYTES / 4)
		max = LG_MAX_POST_BYTES / 4;
	/* the compressed bytes that always hold the first max (as the
	 * journal's head_zbytes: at most 15 bits a byte, 48 a match of 3
	 * or more, a block header per 16 Ki symbols); a post no longer
	 * than max comes whole (deflateBound is far below) */
	snprintf(zbuf, sizeof(zbuf), "%zu", 2 * max + max / 32 + 4096);
	if ((res = get_row(q, id, "SELECT " ROW_COLS ", substring(raw_z "
	    "FROM 1 FOR $2::int4) FROM held_posts WHERE id = $1::int8", 2,
	    vals, r, &rc, err, errsz)) == NULL)
		return rc;
	if (r->size >= 0 && (uint64_t)r->size <= max)
		rc = row_raw(res, 0, 17, 16, r, err, errsz);
	else if (r->size < 0 || (uint64_t)r->size > LG_MAX_POST_BYTES) {
		snprintf(err, errsz, "stored size %lld out of range",
		    (long long)r->size);
		rc = -1;
	} else if ((rc = inflate_head((const unsigned char *)PQgetvalue(res,
	    0, 17), (size_t)PQgetlength(res, 0, 17), max, &r->raw, err,
	    errsz)) == 0)
		r->raw_len = max;
	if (rc < 0) {
		queue_row_free(r);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 1;
}

int
queue_post_sha(struct queue *q, int64_t id, char *list, size_t listsz,
    unsigned char sha[32], char *err, size_t errsz)
{
	char idbuf[32];
	const char *vals[1] = { idbuf };
	PGresult *res;
	int rc = 0;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	res = PQexecParams(q->conn, "SELECT list, raw_sha256 FROM held_posts "
	    "WHERE id = $1::int8", 1, NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	if (PQntuples(res) == 1) {
		if (PQgetlength(res, 0, 1) != SHA256_DIGEST_SIZE) {
			snprintf(err, errsz, "post %lld: its SHA-256 is not 32 "
			    "bytes", (long long)id);
			PQclear(res);
			return -1;
		}
		snprintf(list, listsz, "%.*s", PQgetlength(res, 0, 0),
		    PQgetvalue(res, 0, 0));
		memcpy(sha, PQgetvalue(res, 0, 1), SHA256_DIGEST_SIZE);
		rc = 1;
	}
	PQclear(res);
	return rc;
}

/* --- decisions --------------------------------------------------------- */

/* the class a decision trains: "ham", "spam" or NULL */
static const char *
class_of(const char *status)
{
	if (strcmp(status, "approved") == 0)
		return "ham";
	if (strcmp(status, "rejected") == 0 || strcmp(status, "discarded") == 0)
		return "spam";
	return NULL;
}

/* net training of post id in the journal per class: 0 or -1 */
static int
net_training(struct queue *q, const char *idbuf, long *ham_r, long *spam_r,
    char *err, size_t errsz)
{
	const char *vals[1] = { idbuf };
	PGresult *res;
	int i;

	*ham_r = *spam_r = 0;
	res = PQexecParams(q->conn, "SELECT class, sum(CASE op WHEN 'learn' "
	    "THEN 1 ELSE -1 END)::int8 FROM train_journal WHERE post_id = "
	    "$1::int8 GROUP BY class", 1, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	for (i = 0; i < PQntuples(res); i++) {
		long v = strtol(PQgetvalue(res, i, 1), NULL, 10);

		if (strcmp(PQgetvalue(res, i, 0), "ham") == 0)
			*ham_r = v;
		else
			*spam_r = v;
	}
	PQclear(res);
	return 0;
}

/*
 * The journal's learnings of post id's bytes as the class (spam: 1)
 * left after its unlearnings, by any source (journal_learnt): a manual
 * `train --unlearn` of the bytes undoes a decision's learning without
 * the post's id.  Into *net_r; 0, or -1 with err.
 */
static int
bytes_net(struct queue *q, const char *idbuf, int spam, long *net_r,
    char *err, size_t errsz)
{
	const char *vals[1] = { idbuf };
	unsigned char *raw = NULL;
	size_t cap = 0;
	int64_t size;
	PGresult *res;
	char *list;
	int r;

	*net_r = 0;
	res = PQexecParams(q->conn, "SELECT list, size, raw_z FROM "
	    "held_posts WHERE id = $1::int8", 1, NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 0;
	}
	if ((list = queue_col_str(res, 0, 0)) == NULL) {
		PQclear(res);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	size = queue_col_i64(res, 0, 1);
	r = queue_inflate((const unsigned char *)PQgetvalue(res, 0, 2),
	    (size_t)PQgetlength(res, 0, 2), size, &raw, &cap, err, errsz);
	if (r == 0)
		r = journal_learnt(q, list, spam, raw, (size_t)size, net_r,
		    err, errsz);
	else if (r == QUEUE_ECORRUPT) {
		/* its events are quarantined at sync: nothing to compare,
		 * the post's own count stands */
		*net_r = LONG_MAX;
		r = 0;
	}
	xfree(raw);
	xfree(list);
	PQclear(res);
	return r < 0 ? -1 : 0;
}

/* journal one event for post id, copying its stored message: 0 or -1 */
static int
journal_post_event(struct queue *q, const char *idbuf, const char *cls,
    const char *op, char *err, size_t errsz)
{
	const char *vals[3] = { idbuf, cls, op };

	return exec_params(q, "INSERT INTO train_journal (list, class, op, "
	    "source, post_id, size, message_z, raw_sha256) SELECT list, $2, "
	    "$3, 'moderation', id, size, raw_z, raw_sha256 FROM held_posts "
	    "WHERE id = $1::int8", 3, vals, err, errsz);
}

/*
 * Record decision status (the caller holds the post's decision lock,
 * and the list's journal lock: decision_lock) and its training,
 * inside the caller's transaction on q: the journal's net effect for
 * this post becomes the new class learnt once (or nothing).  0, or -1
 * with err.
 */
static int
record_decision(struct queue *q, const char *idbuf, const char *status,
    int flags, const char *byc, const char *notec, char *err,
    size_t errsz)
{
	const char *vals[4], *newc = class_of(status);
	long netham, netspam, b;

	if (flags & QUEUE_LEARN_SPAM)
		newc = "spam";	/* an expiry that trains */
	vals[0] = idbuf;
	vals[1] = status;
	vals[2] = byc;
	vals[3] = notec;
	if (exec_params(q, "UPDATE held_posts SET status = $2, decided_by = "
	    "$3, decided_at = now(), note = $4 WHERE id = $1::int8", 4, vals,
	    err, errsz) < 0)
		return -1;
	/* remembered by list and SHA-256: a retry of these bytes is
	 * answered from this decision (queue_hold, queue_decided); an
	 * expiry that learnt the post as spam is a discard there, as the
	 * token file's record of its journal event says */
	if (newc != NULL && exec_params(q, "INSERT INTO decided_posts (list, "
	    "raw_sha256, post_id, status, decided_at) SELECT list, "
	    "raw_sha256, id, CASE status WHEN 'expired' THEN 'discarded' "
	    "ELSE status END, decided_at FROM held_posts WHERE id = "
	    "$1::int8 ON CONFLICT (list, raw_sha256) DO UPDATE SET post_id = "
	    "excluded.post_id, status = excluded.status, decided_at = "
	    "excluded.decided_at", 1, vals, err, errsz) < 0)
		return -1;
	if (queue_cmd(q, QUEUE_FRESH_IDS_SQL, err, errsz) < 0)
		return -1;
	if (net_training(q, idbuf, &netham, &netspam, err, errsz) < 0)
		return -1;
	/* a learning to undo that a manual `train --unlearn` of the post's
	 * bytes undid already: unlearnt again, it would take from the
	 * counts of the list's other posts */
	if (netham > 0 && (newc == NULL || strcmp(newc, "ham") != 0)) {
		if (bytes_net(q, idbuf, 0, &b, err, errsz) < 0)
			return -1;
		netham = b < netham ? (b > 0 ? b : 0) : netham;
	}
	if (netspam > 0 && (newc == NULL || strcmp(newc, "spam") != 0)) {
		if (bytes_net(q, idbuf, 1, &b, err, errsz) < 0)
			return -1;
		netspam = b < netspam ? (b > 0 ? b : 0) : netspam;
	}
	for (; netham > 0 && (newc == NULL || strcmp(newc, "ham") != 0);
	    netham--)
		if (journal_post_event(q, idbuf, "ham", "unlearn", err,
		    errsz) < 0)
			return -1;
	for (; netspam > 0 && (newc == NULL || strcmp(newc, "spam") != 0);
	    netspam--)
		if (journal_post_event(q, idbuf, "spam", "unlearn", err,
		    errsz) < 0)
			return -1;
	if (newc != NULL && (strcmp(newc, "ham") == 0 ? netham : netspam) <= 0)
		if (journal_post_event(q, idbuf, newc, "learn", err, errsz) < 0)
			return -1;
	return 0;
}

/* roll back the open transaction, ignoring errors */
static void
rollback(struct queue *q)
{
	char e2[8];

	queue_cmd(q, "ROLLBACK", e2, sizeof(e2));
}

/* the longest pause between two tries for a decision's locks */
#define DECISION_LOCK_POLL_MAX_MS	100

/*
 * Open a transaction on q that holds post id's decision lock and its
 * list's journal lock (every decision records its training under it),
 * waiting while another decision holds the first or a training run
 * (`train`, for as long as it journals its posts) the second: 0 (the
 * transaction is open), or -1 with err.  Both are transaction locks, so
 * they end with the transaction however that ends (a process or
 * connection that dies lets go of them too): a connection pooler in
 * transaction mode may hand each transaction to another server
 * connection, where a session lock would stay behind.  A waiter tries
 * for both in short transactions, with a pause between tries, so that
 * it holds no server connection of the pool while it waits: decisions
 * waiting behind a long train used to take the whole pool, and the
 * filter's hold path then waited for the train too.  Nothing here waits
 * inside a statement, so the conninfo's statement_timeout and
 * lock_timeout (set for the hold path) cut no wait for these locks, and
 * still bound one for a lock on held_posts itself (an administrator's
 * LOCK TABLE, a VACUUM FULL: the decision fails with one line, its post
 * held).  A post that is no more takes no journal lock (its decision
 * finds it gone).  Both are had before anything of the post changes:
 * an approval records its training after its release, so waiting for
 * the journal lock then would leave a released post 'releasing' for as
 * long as a train runs (and for good if a watchdog ended the wait).
 * w (an approval's, after its mark; NULL: none): the wait ends past its
 * deadline_ms or once its stopped says so, returning -2 with err (no
 * transaction open).
 */
static int
decision_lock(struct queue *q, int64_t id, const char *idbuf,
    const struct queue_decision *w, char *err, size_t errsz)
{
	char cls[16], key[16], jcls[16];
	const char *vals[4] = { cls, key, jcls, idbuf };
	PGresult *res;
	long ms = 2;
	int got;

	snprintf(cls, sizeof(cls), "%d", QUEUE_LOCK_POST);
	snprintf(key, sizeof(key), "%d", (int)(int32_t)(uint32_t)id);
	snprintf(jcls, sizeof(jcls), "%d", QUEUE_LOCK_JOURNAL);
	for (;;) {
		if (queue_cmd(q, "BEGIN", err, errsz) < 0)
			return -1;
		/* both tried in one statement: no one waits holding one
		 * of them (the other's holder may wait for it) */
		res = PQexecParams(q->conn, "SELECT pg_try_advisory_xact_lock("
		    "$1::int4, $2::int4) AND coalesce((SELECT "
		    "pg_try_advisory_xact_lock($3::int4, hashtext(list)) FROM "
		    "held_posts WHERE id = $4::int8), true)", 4, NULL, vals,
		    NULL, NULL, 0);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
		    PQntuples(res) != 1) {
			snprintf(err, errsz, "database: %s",
			    queue_pgerr(q, res));
			PQclear(res);
			rollback(q);
			return -1;
		}
		got = *PQgetvalue(res, 0, 0) == 't';
		PQclear(res);
		if (got)
			return 0;
		rollback(q);
		if (w != NULL && w->stopped != NULL && w->stopped(w->ctx)) {
			snprintf(err, errsz, "stopped while waiting for the "
			    "post's lock");
			return -2;
		}
		if (w != NULL && w->deadline_ms > 0 &&
		    clock_now_ms() + ms >= w->deadline_ms) {
			snprintf(err, errsz, "timed out waiting for the post's "
			    "lock (another decision on it, or a training or "
			    "an approval of its list, held it)");
			return -2;
		}
		clock_sleep_ms(ms);
		if ((ms *= 2) > DECISION_LOCK_POLL_MAX_MS)
			ms = DECISION_LOCK_POLL_MAX_MS;
	}
}

/* how long a decision waits for the approval that marked its post
 * 'releasing' less than 2 s ago (fresh_mark) to take the post's lock
 * again (queue_decide), in pauses of FRESH_MARK_PAUSE_MS; then the
 * mark is taken for an interrupted approval's */
#define FRESH_MARK_WAIT_MS	2000
#define FRESH_MARK_PAUSE_MS	50

/* 1 when post idbuf was marked 'releasing' less than 2 s ago
 * (by the server's clock), 0 when not, -1 on a failure (taken as not:
 * the decision goes on as without the wait) */
static int
fresh_mark(struct queue *q, const char *idbuf)
{
	const char *vals[1] = { idbuf };
	PGresult *res;
	int r = -1;

	res = PQexecParams(q->conn, "SELECT decided_at > now() - "
	    "make_interval(secs => 2) FROM held_posts WHERE id = $1::int8",
	    1, NULL, vals, NULL, NULL, 0);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1)
		r = *PQgetvalue(res, 0, 0) == 't';
	PQclear(res);
	return r;
}

/* the connection that holds a post's decision lock across a release:
 * q's second connection, opened when first needed and kept (reopened
 * when it was lost): 0 with *l_r, or -1 */
static int
lock_conn(struct queue *q, struct queue **l_r, char *err, size_t errsz)
{
	if (q->lockq != NULL && !queue_alive(q->lockq)) {
		queue_close(q->lockq);
		q->lockq = NULL;
	}
	if (q->lockq == NULL && queue_open(q->conninfo, &q->lockq, err,
	    errsz) < 0)
		return -1;
	*l_r = q->lockq;
	return 0;
}

/* how long an approval tries to reach the database again after its
 * lock's connection was lost during the release (a restart, a
 * failover): the outcome is recorded if it comes back meanwhile */
#define RELOCK_TRIES		20
#define RELOCK_PAUSE_MS		500

/*
 * Take the post's lock on the lock's connection after the approval's
 * mark committed, or again after that connection was lost while the
 * release ran (the server restarted, failed over, ended it): open it
 * again when needed, take the post's lock, and find the post still
 * 'releasing' as this approval marked it (decided_at reads mark_at: no
 * other approval took it over meanwhile).  0 with *lq_r in a
 * transaction that holds the lock, or -1 with err (*lq_r, when set, may
 * have a transaction open), or -2 with err when the wait for the lock
 * ended as w says (decision_lock; NULL: no end).  The row is not
 * locked: other decisions wait for the advisory lock, and a row lock
 * held across the release would queue a migration's table lock, and
 * every statement on held_posts behind it, for as long as the release
 * runs.
 */
static int
relock_releasing(struct queue *q, struct queue **lq_r, int64_t id,
    const char *idbuf, const char *mark_at, const struct queue_decision *w,
    char *err, size_t errsz)
{
	const char *vals[2] = { idbuf, mark_at };
	struct queue *lq = NULL;
	PGresult *res;
	int i, found, r;

	*lq_r = NULL;
	for (i = 0; ; i++) {
		/* a connection lost while it waits for the lock (the server
		 * restarted, an administrator ended it) is opened again
		 * too: failing there left the post 'releasing' with nothing
		 * released, though the server was back at once */
		if (lock_conn(q, &lq, err, errsz) == 0) {
			if ((r = decision_lock(lq, id, idbuf, w, err,
			    errsz)) == 0)
				break;
			if (r == -2 || queue_alive(lq))
				return r;
		}
		if (i + 1 >= RELOCK_TRIES)
			return -1;
		clock_sleep_ms(RELOCK_PAUSE_MS);
	}
	*lq_r = lq;
	res = PQexecParams(lq->conn, "SELECT 1 FROM held_posts WHERE id = "
	    "$1::int8 AND status = 'releasing' AND decided_at::text = $2", 2,
	    NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(lq, res));
		PQclear(res);
		return -1;
	}
	found = PQntuples(res) == 1;
	PQclear(res);
	if (!found) {
		snprintf(err, errsz, "another decision took the post over "
		    "meanwhile");
		return -1;
	}
	return 0;
}

/*
 * After a failed release: put the row back as it was before the
 * approval marked it 'releasing' (r holds the old values, a held
 * post's note too: why the filter held it), inside the caller's
 * transaction on q; a held post's note becomes why when not NULL (why
 * the list refused it for good, for show and held to say).  mark_at
 * (not NULL): only while decided_at still reads the approval's mark
 * (the caller holds no lock of the post).  1, 0 when the row is not so
 * (or no more 'releasing'), or -1 with err (the row stays 'releasing').
 */
static int
unmark_releasing(struct queue *q, const char *idbuf,
    const struct queue_row *r, const char *why, const char *mark_at,
    char *err, size_t errsz)
{
	char when[32];
	const char *vals[6];
	PGresult *res;
	int n;

	snprintf(when, sizeof(when), "%lld", (long long)r->decided);
	vals[0] = idbuf;
	vals[1] = r->status;
	vals[2] = r->decided_by;
	vals[3] = when;
	vals[4] = why != NULL && strcmp(r->status, "held") == 0 ? why :
	    r->note;
	vals[5] = mark_at;
	/* a post the filter discarded whose bytes the filter discarded
	 * again meanwhile (a retry: a post being released is not in
	 * migration 0010's index) cannot be put back beside that copy:
	 * it is set aside as expired, with a note naming the copy, which
	 * stands for it (as migration 0002 set aside a post held twice) */
	res = PQexecParams(q->conn, "WITH dup AS (SELECT min(o.id) AS id FROM "
	    "held_posts o JOIN held_posts h ON o.list = h.list AND "
	    "o.raw_sha256 = h.raw_sha256 AND o.id <> h.id WHERE h.id = "
	    "$1::int8 AND $2 = 'discarded' AND $3 = '" QUEUE_FILTER_BY "' AND "
	    "o.status = 'discarded' AND o.decided_by = '" QUEUE_FILTER_BY "') "
	    "UPDATE held_posts SET status = CASE WHEN (SELECT id FROM dup) IS "
	    "NOT NULL THEN 'expired' ELSE $2 END, decided_by "
	    "= CASE WHEN $2 = 'held' THEN NULL ELSE nullif($3, '') END, "
	    "decided_at = CASE WHEN $2 = 'held' THEN NULL ELSE "
	    "to_timestamp($4::float8) END, note = CASE WHEN (SELECT id FROM "
	    "dup) IS NOT NULL THEN 'the same bytes as post ' || (SELECT id "
	    "FROM dup) || ' (discarded again while this one was being "
	    "released)' ELSE nullif($5, '') END "
	    "WHERE id = $1::int8 AND status = 'releasing' AND ($6::text IS "
	    "NULL OR decided_at::text = $6::text) RETURNING id", 6, NULL, vals,
	    NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		PQclear(res);
		return -1;
	}
	n = PQntuples(res);
	PQclear(res);
	return n > 0;
}

int
queue_decide(struct queue *q, const struct queue_decision *d,
    struct queue_decided *res_r, char *err, size_t errsz)
{
	int64_t id = d->id;
	const char *status = d->status, *by = d->by, *note = d->note;
	queue_release_fn release = d->release;
	void *ctx = d->ctx;
	int flags = d->flags;
	char idbuf[32], *byc = NULL, *notec = NULL, *whyc = NULL;
	char e2[512], why[1000], mark_at[64];
	const char *vals[4];
	struct queue_row r;
	struct queue *lq = NULL;	/* holds the lock across a release */
	struct queue_decision fw;	/* the first wait's end */
	PGresult *res = NULL;
	int rc = -1, approve, releasing, release_now, rel, waited = 0;
	int force = (flags & QUEUE_FORCE) != 0;
	int mark = (flags & QUEUE_MARK_ONLY) != 0;

	memset(&r, 0, sizeof(r));
	memset(res_r, 0, sizeof(*res_r));
	if (class_of(status) == NULL && strcmp(status, "expired") != 0) {
		snprintf(err, errsz, "bad decision '%s'", status);
		return -1;
	}
	approve = strcmp(status, "approved") == 0;
	if ((flags & QUEUE_LEARN_SPAM) && strcmp(status, "expired") != 0) {
		snprintf(err, errsz, "only an expiry is learnt as spam by "
		    "QUEUE_LEARN_SPAM");
		return -1;
	}
	if (mark && !approve) {
		snprintf(err, errsz, "only an approval can be recorded "
		    "without releasing");
		return -1;
	}
	if (by != NULL && strcmp(by, QUEUE_FILTER_BY) == 0) {
		snprintf(err, errsz, "'%s' is the name the filter stores the "
		    "posts it discards under: decide under another name",
		    QUEUE_FILTER_BY);
		return -1;
	}
	if ((byc = pg_text(by, 256)) == NULL ||
	    (note && (notec = pg_text(note, FIELD_MAX)) == NULL)) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	release_now = approve && release != NULL && !mark;
	/*
	 * Every decision on this post waits for one in progress, holding
	 * the post's lock in its own transaction on q.  An approval that
	 * releases commits 'releasing' there, then takes the lock again in
	 * a transaction of its second connection, open across the release
	 * (which runs outside any transaction of q), and records its
	 * outcome there.  Never both transactions at once: through a pooler
	 * in transaction mode each holds a server connection, and
	 * approvals that each held one while waiting for a second took the
	 * whole pool and waited for ever (until the pooler's
	 * query_wait_timeout ended them, the filter's holds deferred
	 * meanwhile).  The second connection is opened first (it takes no
	 * server connection of a pooler until its transaction starts):
	 * failing to, nothing is changed.
	 */
	if (release_now && lock_conn(q, &lq, err, errsz) < 0) {
		lq = NULL;
		goto out;
	}
	/* the wait before anything changes ends at d->lock_by_ms, or at a
	 * stop (a server's request: one behind a train waited for its
	 * whole run, and held the server's stop up as long) */
	memset(&fw, 0, sizeof(fw));
	fw.deadline_ms = d->lock_by_ms;
	fw.stopped = d->stopped;
	fw.ctx = ctx;
again:
	if ((rel = decision_lock(q, id, idbuf, d->lock_by_ms > 0 ? &fw :
	    NULL, err, errsz)) < 0) {
		if (rel == -2)
			rc = QUEUE_BUSY;
		lq = NULL;
		goto out;
	}
	vals[0] = idbuf;
	/* the post's bytes only for a release (up to 1 GiB compressed): a
	 * decision without one journals them in SQL (record_decision) */
	res = PQexecParams(q->conn, release_now ? "SELECT " ROW_COLS ", raw_z "
	    "FROM held_posts WHERE id = $1::int8 FOR UPDATE" : "SELECT "
	    ROW_COLS " FROM held_posts WHERE id = $1::int8 FOR UPDATE", 1,
	    NULL, vals, NULL, NULL, 1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		goto fail;
	}
	if (PQntuples(res) == 0) {
		rc = QUEUE_NOENT;
		goto fail;
	}
	if (row_fill(res, 0, &r) < 0) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	snprintf(res_r->list, sizeof(res_r->list), "%s", r.list);
	/* the caller's list, checked under the lock: nothing of another
	 * list's post is told or changed */
	if (d->list != NULL && strcmp(r.list, d->list) != 0) {
		rc = QUEUE_OTHER_LIST;
		goto fail;
	}
	/* and the caller's post: a moderation cookie's, whose number a
	 * failover or a restore may have given to another */
	if (d->raw_sha256 != NULL && memcmp(r.raw_sha256, d->raw_sha256,
	    sizeof(r.raw_sha256)) != 0) {
		rc = QUEUE_OTHER_POST;
		goto fail;
	}
	snprintf(res_r->old, sizeof(res_r->old), "%s", r.status);
	snprintf(res_r->by, sizeof(res_r->by), "%s", r.decided_by ?
	    r.decided_by : "");
	res_r->at = r.decided;
	releasing = strcmp(r.status, "releasing") == 0;
	if (releasing && !mark && waited < FRESH_MARK_WAIT_MS &&
	    fresh_mark(q, idbuf) == 1) {
		/* an approval between its mark's commit and its lock taken
		 * again on its second connection: its lock comes in a few
		 * milliseconds, and then this decision waits for its
		 * release and finds what it did.  Taken for interrupted
		 * here, two moderators approving at once were told to
		 * check the list's archive */
		PQclear(res);
		res = NULL;
		rollback(q);
		queue_row_free(&r);
		memset(&r, 0, sizeof(r));
		clock_sleep_ms(FRESH_MARK_PAUSE_MS);
		waited += FRESH_MARK_PAUSE_MS;
		goto again;
	}
	if (releasing && !force && !mark) {
		/* a release started and its outcome was never recorded: the
		 * post may be on the list already */
		rc = QUEUE_INTERRUPTED;
		goto fail;
	}
	if (mark && !releasing) {
		rc = QUEUE_NOT_INTERRUPTED;
		goto fail;
	}
	if (!releasing && (strcmp(r.status, status) == 0 ||
	    (strcmp(r.status, "held") != 0 && !force))) {
		rc = QUEUE_ALREADY;
		goto fail;
	}
	if (!release_now) {
		PQclear(res);
		res = NULL;
		if (record_decision(q, idbuf, status, flags, byc, notec, err,
		    errsz) < 0)
			goto fail;
		if (queue_cmd(q, "COMMIT", err, errsz) < 0)
			goto out;
		rc = QUEUE_DECIDED;
		goto out;
	}

	/*
	 * Approval in three steps, so that a release is never repeated
	 * unknowingly: (1) commit 'releasing' (which ends q's lock) and
	 * take the lock again on lq, finding the post still as (1) left
	 * it; (2) run the release command with no transaction of q open;
	 * (3) commit 'approved' and the training, or, when the command
	 * failed, the old state, in the lock's transaction (which ends the
	 * lock).  A process or a connection lost between (1) and (3) leaves
	 * 'releasing' behind, and the next approve says so instead of
	 * releasing again.  A decision that comes between the commit and
	 * the lock taken again finds the mark fresh and waits for it (for
	 * FRESH_MARK_WAIT_MS at most: then it is QUEUE_INTERRUPTED, and
	 * with QUEUE_FORCE the release is taken over, this one not
	 * releasing).
	 */
	if (row_raw(res, 0, 17, 16, &r, err, errsz) < 0)
		goto fail;
	PQclear(res);
	res = NULL;
	vals[0] = idbuf;
	vals[1] = byc;
	vals[2] = notec;
	/* the mark durable before the release runs, as a hold is
	 * (HOLD_DURABLE): where synchronous_commit is off, a crash of the
	 * server soon after lost it, and the post, released, was held
	 * again, for the next approval to release a second time */
	res = PQexecParams(q->conn, "UPDATE held_posts SET status = "
	    "'releasing', decided_by = $2, decided_at = now(), note = $3 "
	    "WHERE id = $1::int8 AND " HOLD_DURABLE " RETURNING "
	    "decided_at::text", 3, NULL, vals, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQntuples(res) != 1) {
		snprintf(err, errsz, "database: %s", queue_pgerr(q, res));
		goto fail;
	}
	snprintf(mark_at, sizeof(mark_at), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	res = NULL;
	/* from the commit on, a process ended before release is called
	 * leaves the post 'releasing' with nothing released: the caller
	 * holds off its stop signals from here */
	if (d->marking != NULL)
		d->marking(ctx);
	if (queue_cmd(q, "COMMIT", err, errsz) < 0)
		goto out;
	if ((rel = relock_releasing(q, &lq, id, idbuf, mark_at, d, e2,
	    sizeof(e2))) == -2 && (lq == NULL ||
	    PQtransactionStatus(lq->conn) == PQTRANS_IDLE) &&
	    unmark_releasing(q, idbuf, &r, NULL, mark_at, why,
	    sizeof(why)) == 1) {
		/* the caller's deadline (a watchdog's) or a stop came while
		 * it waited for the lock: the post as it was, released by
		 * nobody (ended by the watchdog there, it stayed
		 * 'releasing'; a stop waited for the lock, a train's whole
		 * run) */
		snprintf(err, errsz, "release command not run: %s", e2);
		rc = QUEUE_RELEASE_FAILED;
		goto out;
	}
	if (rel < 0) {
		/* not released: another decision has it, or the database
		 * went away (the post stays 'releasing', as a process
		 * killed here leaves it) */
		snprintf(err, errsz, "not released: %s%s", e2,
		    strstr(e2, "took the post over") != NULL ? "" :
		    "; it stays 'releasing'");
		rc = -1;
		goto out;
	}
	if ((rel = release(&r, ctx, err, errsz)) < 0) {
		rc = QUEUE_RELEASE_FAILED;
		res_r->refused = rel == -2;
		if (rel == -3) {
			size_t n = strlen(err);

			/* the list may have it: put back as held, the
			 * next approve would release it again unknowingly;
			 * it stays 'releasing' (the lock's transaction ends
			 * unrecorded), as after an interrupted approval */
			res_r->unsure = 1;
			snprintf(err + n, errsz - n, "; it stays 'releasing': "
			    "the list may have it");
			goto out;
		}
		/* refused for good: held again with why, which show and
		 * held say (as the filter's note for a post deliver
		 * refused) */
		if (res_r->refused) {
			snprintf(why, sizeof(why), "%s%.900s",
			    QUEUE_RELEASE_REFUSED, err);
			whyc = pg_text(why, FIELD_MAX);
		}
		/* the lock's connection lost meanwhile: once more on a new
		 * one */
		if ((unmark_releasing(lq, idbuf, &r, whyc, NULL, e2,
		    sizeof(e2)) < 0 ||
		    queue_cmd(lq, "COMMIT", e2, sizeof(e2)) < 0) &&
		    (queue_alive(lq) || relock_releasing(q,
		    &lq, id, idbuf, mark_at, NULL, e2, sizeof(e2)) < 0 ||
		    unmark_releasing(lq, idbuf, &r, whyc, NULL, e2,
		    sizeof(e2)) < 0 ||
		    queue_cmd(lq, "COMMIT", e2, sizeof(e2)) < 0)) {
			size_t n = strlen(err);

			snprintf(err + n, errsz - n, "; it stays 'releasing' "
			    "(it could not be set back to %s: %s)", r.status,
			    e2);
		}
		goto out;
	}
	rc = QUEUE_UNRECORDED;
	if ((record_decision(lq, idbuf, status, flags, byc, notec, err,
	    errsz) < 0 || queue_cmd(lq, "COMMIT", err, errsz) < 0) &&
	    (queue_alive(lq) || relock_releasing(q, &lq, id,
	    idbuf, mark_at, NULL, e2, sizeof(e2)) < 0 || record_decision(lq,
	    idbuf, status, flags, byc, notec, e2, sizeof(e2)) < 0 ||
	    queue_cmd(lq, "COMMIT", e2, sizeof(e2)) < 0)) {
		/* err says why the first try failed */
		goto out;
	}
	rc = QUEUE_DECIDED;
	goto out;
fail:
	PQclear(res);
	res = NULL;
	rollback(q);
out:
	PQclear(res);
	/* the lock's transaction, when still open */
	if (lq != NULL && PQtransactionStatus(lq->conn) != PQTRANS_IDLE)
		rollback(lq);
	xfree(byc);
	xfree(notec);
	xfree(whyc);
	queue_row_free(&r);
	return rc;
}
