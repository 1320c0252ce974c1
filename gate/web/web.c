/*
 * web.c - the HTTP server of `listgate web` on libmicrohttpd: limits,
 * routing, answers, the log line, the sync thread, a clean stop
 *
 * Every request is hostile.  libmicrohttpd bounds the request line and
 * headers (LG_MAX_WEB_CONN_MEMORY), the connections (all, and per
 * address that is not a trusted proxy) and idle time; this file bounds
 * the path (LG_MAX_WEB_URL) and the body (LG_MAX_WEB_BODY: 413, sent as
 * soon as it is known).  A path is only ever split and compared: list
 * names must pass listcfg_name_ok and are checked against the
 * configured lists and the user's, never turned into a file name.  Each
 * request ends in one log line (method, path, status, user, time),
 * every field through the sanitizer.  Decisions commit in PostgreSQL
 * through decide_post; the token files of the lists decided on are
 * synced by a thread of their own.  SIGTERM or SIGINT stops accepting,
 * lets the requests in progress finish, runs a last sync and returns.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "db/journal.h"
#include "db/queue.h"
#include "db/qview.h"
#include "gate/app/decide.h"
#include "gate/app/sync.h"
#include "gate/mail/mail.h"
#include "gate/util/clock.h"
#include "gate/util/log.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "gate/web/limit.h"
#include "gate/web/mhdload.h"
#include "gate/web/web.h"
#include "gate/web/webint.h"
#include "listcfg/cfgfile.h"
#include "listcfg/listcfg.h"

/* the most an answer may grow to (a page of 500 posts, a post's raw
 * source shown whole up to its cut); the buffer holds WEB_ANSWER_GUARD
 * more, so that anything cut by its max shows as a length past
 * WEB_MAX_ANSWER (answer() then sends a 500, never a page cut short) */
#define WEB_MAX_ANSWER		(4u * 1024u * 1024u)
#define WEB_ANSWER_GUARD	256u

/* bytes of a too-big body without a length read (and dropped) so
 * that it can be answered 413; past this the connection is closed */
#define WEB_MAX_DRAIN	(1024u * 1024u)

/* path segments looked at */
#define WEB_MAX_SEGS	8

/* connections per address (the accept policy's count) */
static struct {
	pthread_mutex_t mu;
	struct {
		unsigned char a[16];
		int n;
	} v[LG_MAX_WEB_CONNECTIONS + 16];
} conns = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* the connections with a deadline: a request must arrive whole
 * (slowloris) in LG_MAX_WEB_REQUEST_S from the connection's start or
 * its last request's end, an answer be read whole in LG_MAX_WEB_SEND_S
 * and a second per LG_MIN_WEB_SEND_RATE bytes of it (a client that
 * reads a little now and then is never idle for long); none while a
 * request is worked on (a release may take long).  The reaper shuts the
 * socket of one past its deadline.  libmicrohttpd tells a connection's
 * end (on_connection) before it closes the socket, and the entry goes
 * under mu, so no socket is shut after its number is given to
 * another. */
enum watch_what {
	WATCH_NONE,
	WATCH_REQUEST,		/* the next request must arrive */
	WATCH_ANSWER		/* the answer must be read */
};
static struct {
	pthread_mutex_t mu;
	struct {
		struct MHD_Connection *c;	/* NULL: free */
		int fd;
		enum watch_what what;
		time_t until;		/* the deadline of what */
	} v[LG_MAX_WEB_CONNECTIONS + 16];
} watch = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* c's deadline: what must be done in secs from now (WATCH_NONE: no
 * deadline) */
static void
watch_set(struct MHD_Connection *c, enum watch_what what, time_t secs)
{
	size_t i;

	pthread_mutex_lock(&watch.mu);
	for (i = 0; i < sizeof(watch.v) / sizeof(watch.v[0]); i++)
		if (watch.v[i].c == c) {
			watch.v[i].what = what;
			watch.v[i].until = time(NULL) + secs;
			break;
		}
	pthread_mutex_unlock(&watch.mu);
}

/* --- addresses --------------------------------------------------------- */

/* a socket address as 16 bytes (IPv4 mapped) and as text: 0, or -1 */
static int
sa_addr(const struct sockaddr *sa, unsigned char a[16], char *txt,
    size_t txtsz)
{
	if (sa == NULL)
		return -1;
	memset(a, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)
		    (const void *)sa;

		a[10] = a[11] = 0xff;
		memcpy(a + 12, &in->sin_addr, 4);
		if (txt)
			inet_ntop(AF_INET, &in->sin_addr, txt, (socklen_t)txtsz);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)
		    (const void *)sa;

		memcpy(a, &in6->sin6_addr, 16);
		if (txt) {
			/* an IPv4-mapped peer is shown as IPv4 */
			if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
				inet_ntop(AF_INET, a + 12, txt, (socklen_t)txtsz);
			else
				inet_ntop(AF_INET6, a, txt, (socklen_t)txtsz);
		}
		return 0;
	}
	return -1;
}

/* 1 when a (16 bytes) is a trusted proxy */
static int
is_proxy(const struct web_srv *s, const unsigned char a[16])
{
	size_t i;

	for (i = 0; i < s->nproxy; i++)
		if (memcmp(s->proxy[i], a, 16) == 0)
			return 1;
	return 0;
}

/* an IPv6 address (not an IPv4 one mapped) stands for its /64 in the
 * connection counts: a host has a whole one to itself */
static void
group64(unsigned char a[16])
{
	static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };

	if (memcmp(a, v4, sizeof(v4)) != 0)
		memset(a + 8, 0, 8);
}

/* MHD_AcceptPolicyCallback: at most LG_MAX_WEB_PER_ADDR connections
 * from one address that is not a trusted proxy */
static enum MHD_Result
on_accept(void *cls, const struct sockaddr *sa, socklen_t salen)
{
	struct web_srv *s = cls;
	unsigned char a[16];
	size_t i;
	int n = 0;

	(void)salen;
	if (sa_addr(sa, a, NULL, 0) < 0)
		return MHD_NO;
	if (is_proxy(s, a))
		return MHD_YES;
	group64(a);
	pthread_mutex_lock(&conns.mu);
	for (i = 0; i < sizeof(conns.v) / sizeof(conns.v[0]); i++)
		if (conns.v[i].n > 0 && memcmp(conns.v[i].a, a, 16) == 0) {
			n = conns.v[i].n;
			break;
		}
	pthread_mutex_unlock(&conns.mu);
	return n >= LG_MAX_WEB_PER_ADDR ? MHD_NO : MHD_YES;
}

/* MHD_NotifyConnectionCallback: count connections per address */
static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	const struct web_srv *s = cls;
	const union MHD_ConnectionInfo *ci;
	unsigned char a[16];
	size_t i, fr = (size_t)-1;
	int d = toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1;

	(void)socket_context;
	/* every connection is watched until its first request is in */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (d > 0 && ci != NULL) {
		int sz = (int)LG_MAX_WEB_SNDBUF;

		(void)setsockopt(ci->connect_fd, SOL_SOCKET, SO_SNDBUF, &sz,
		    sizeof(sz));
	}
	pthread_mutex_lock(&watch.mu);
	for (i = 0; i < sizeof(watch.v) / sizeof(watch.v[0]); i++) {
		if (d > 0 && watch.v[i].c == NULL && ci != NULL) {
			watch.v[i].c = c;
			watch.v[i].fd = ci->connect_fd;
			watch.v[i].what = WATCH_REQUEST;
			watch.v[i].until = time(NULL) + LG_MAX_WEB_REQUEST_S;
			break;
		}
		if (d < 0 && watch.v[i].c == c) {
			watch.v[i].c = NULL;
			watch.v[i].what = WATCH_NONE;
			break;
		}
	}
	pthread_mutex_unlock(&watch.mu);
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || sa_addr(ci->client_addr, a, NULL, 0) < 0)
		return;
	/* a trusted proxy's connections are not limited (on_accept), nor
	 * counted against the clients in its /64 */
	if (is_proxy(s, a))
		return;
	group64(a);
	pthread_mutex_lock(&conns.mu);
	for (i = 0; i < sizeof(conns.v) / sizeof(conns.v[0]); i++) {
		if (conns.v[i].n > 0 && memcmp(conns.v[i].a, a, 16) == 0) {
			conns.v[i].n += d;
			break;
		}
		if (conns.v[i].n <= 0 && fr == (size_t)-1)
			fr = i;
	}
	if (i == sizeof(conns.v) / sizeof(conns.v[0]) && d > 0 &&
	    fr != (size_t)-1) {
		memcpy(conns.v[fr].a, a, 16);
		conns.v[fr].n = 1;
	}
	pthread_mutex_unlock(&conns.mu);
}

/* --- helpers for the handlers ----------------------------------------- */

const char *
web_arg(struct web_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
	    name);
}

const char *
web_header(struct web_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *
web_cookie(struct web_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, name);
}

/* the context of web_header_lines */
struct header_lines {
	const char *name;
	void (*fn)(const char *, void *);
	void *ctx;
};

/* MHD_KeyValueIterator: the lines called hl->name */
static enum MHD_Result
header_line(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct header_lines *hl = cls;

	(void)kind;
	if (key != NULL && value != NULL && strcasecmp(key, hl->name) == 0)
		hl->fn(value, hl->ctx);
	return MHD_YES;
}

void
web_header_lines(struct web_req *r, const char *name,
    void (*fn)(const char *value, void *ctx), void *ctx)
{
	struct header_lines hl = { name, fn, ctx };

	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, header_line, &hl);
}

/* a page for a database that failed (status, our own words in msg),
 * with the message the session had waiting, which this request took
 * (a decision's outcome, its page redirected here): lost otherwise */
static void
db_page(struct web_req *r, int status, const char *msg)
{
	r->status = status;
	buf_reset(&r->out);
	web_printf(r, "<!doctype html><title>%d</title>", status);
	if (r->sv.flash[0]) {
		web_printf(r, "<p class=\"flash\" id=\"flash\">");
		web_htmls(r, r->sv.flash);
		web_printf(r, "</p>");
	}
	web_printf(r, "<p>%s", msg);
}

struct queue *
web_db(struct web_req *r, int json)
{
	struct web_srv *s = r->srv;
	struct queue *q = NULL;
	char err[1024];

	if (r->q != NULL)
		return r->q;
	pthread_mutex_lock(&s->pool_mu);
	for (;;) {
		while (s->npool == 0 && s->nopen >= WEB_DB_POOL)
			pthread_cond_wait(&s->pool_cv, &s->pool_mu);
		if (s->npool == 0) {
			s->nopen++;
			break;
		}
		q = s->pool[--s->npool];
		pthread_mutex_unlock(&s->pool_mu);
		if (queue_alive(q))
			return r->q = q;
		/* an idle connection the server ended (a restart): closed
		 * here, not failed on by this request; the next is tried */
		log_info("web: an idle database connection was closed by the "
		    "server; opening another");
		queue_close(q);
		q = NULL;
		pthread_mutex_lock(&s->pool_mu);
		s->nopen--;
	}
	pthread_mutex_unlock(&s->pool_mu);
	if (queue_open(s->g->conninfo, &q, err, sizeof(err)) < 0) {
		pthread_mutex_lock(&s->pool_mu);
		s->nopen--;
		pthread_cond_signal(&s->pool_cv);
		pthread_mutex_unlock(&s->pool_mu);
		log_error("web: %s", err);
		if (json)
			web_json_error(r, 503, "the database is not available");
		else
			db_page(r, 503, "The database is not available; try "
			    "again later.");
		return NULL;
	}
	return r->q = q;
}

/* give r's connection back to the pool */
static void
db_return(struct web_req *r)
{
	struct web_srv *s = r->srv;

	if (r->q == NULL)
		return;
	pthread_mutex_lock(&s->pool_mu);
	s->pool[s->npool++] = r->q;
	pthread_cond_signal(&s->pool_cv);
	pthread_mutex_unlock(&s->pool_mu);
	r->q = NULL;
}

void
web_db_drop(struct web_req *r)
{
	struct web_srv *s = r->srv;

	if (r->q == NULL)
		return;
	queue_close(r->q);
	r->q = NULL;
	pthread_mutex_lock(&s->pool_mu);
	s->nopen--;
	pthread_cond_signal(&s->pool_cv);
	pthread_mutex_unlock(&s->pool_mu);
}

void
web_db_failed(struct web_req *r, int json, const char *err)
{
	log_error("web: %s", err);
	web_db_drop(r);
	if (json)
		web_json_error(r, 500, "database error");
	else
		db_page(r, 500, "Database error; see the server's log.");
}

void
web_printf(struct web_req *r, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = (int)sizeof(tmp) - 1;
	buf_add_trunc(&r->out, tmp, (size_t)n);
}

void
web_html(struct web_req *r, const char *s, size_t n, size_t maxchars,
    unsigned flags)
{
	sanitize_buf(&r->out, s ? s : "", s ? n : 0, maxchars, SANITIZE_HTML,
	    flags);
}

void
web_htmls(struct web_req *r, const char *s)
{
	web_html(r, s, s ? strlen(s) : 0, SANITIZE_NO_LIMIT, 0);
}

void
web_json_str(struct web_req *r, const char *s, size_t n, size_t maxchars)
{
	sanitize_buf(&r->out, s ? s : "", s ? n : 0, maxchars, SANITIZE_JSON,
	    0);
}

void
web_json_strs(struct web_req *r, const char *s)
{
	web_json_str(r, s, s ? strlen(s) : 0, SANITIZE_NO_LIMIT);
}

void
web_json_error(struct web_req *r, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->status = status;
	r->ctype = "application/json; charset=utf-8";
	buf_reset(&r->out);
	web_printf(r, "{\"error\": ");
	web_json_strs(r, msg);
	web_printf(r, "}\n");
}

void
web_redirect(struct web_req *r, const char *location)
{
	r->status = 303;
	snprintf(r->location, sizeof(r->location), "%s", location);
	buf_reset(&r->out);
}

void
web_iso_time(time_t t, char *out, size_t outsz)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, outsz, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, outsz, "%lld", (long long)t);
}

int
web_parse_id(const char *s, int64_t *id_r)
{
	int64_t v = 0;
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '0' || strlen(s) > 18)
		return -1;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*id_r = v;
	return 0;
}

/* --- known lists and the sync thread ------------------------------------ */

void
web_names_free(char **names, size_t n)
{
	while (n > 0)
		xfree(names[--n]);
	xfree(names);
}

/* reread lists/ when it was read WEB_RESCAN_S ago (mutex held) */
static void
rescan(struct web_srv *s)
{
	char **names, err[1024];
	size_t n;
	time_t now = time(NULL);

	if (s->known != NULL && now - s->known_at < WEB_RESCAN_S)
		return;
	if (listcfg_names(s->g->dir, &names, &n, err, sizeof(err)) < 0) {
		log_warn("web: %s", err);
		return;
	}
	web_names_free(s->known, s->nknown);
	s->known = names;
	s->nknown = n;
	s->known_at = now;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
web_known(struct web_srv *s, const char *list)
{
	int r;

	pthread_mutex_lock(&s->mu);
	rescan(s);
	r = s->nknown > 0 && bsearch(&list, s->known, s->nknown,
	    sizeof(*s->known), cmp_name) != NULL;
	pthread_mutex_unlock(&s->mu);
	return r;
}

static int
known_copy(struct web_srv *s, char ***names_r, size_t *n_r)
{
	char **v;
	size_t i;

	*names_r = NULL;
	*n_r = 0;
	pthread_mutex_lock(&s->mu);
	rescan(s);
	if ((v = xcalloc(s->nknown + 1, sizeof(*v))) == NULL) {
		pthread_mutex_unlock(&s->mu);
		return -1;
	}
	for (i = 0; i < s->nknown; i++)
		if ((v[i] = xstrdup(s->known[i])) == NULL) {
			pthread_mutex_unlock(&s->mu);
			web_names_free(v, i);
			return -1;
		}
	*names_r = v;
	*n_r = s->nknown;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* merging the lists a user may see with the lists that have posts held */
struct lists_walk {
	const struct users_entry *user;
	char **names;		/* the lists to show, sorted */
	size_t n, i;		/* ... and the next one not yet shown */
	web_list_fn fn;
	void *ctx;
};

/* qview_count_fn: the lists before this one (none held), then it */
static int
walk_count(const char *list, int64_t held, void *vctx)
{
	struct lists_walk *w = vctx;
	int cmp;

	if (!listcfg_name_ok(list))
		return 0;
	while (w->i < w->n && (cmp = strcmp(w->names[w->i], list)) <= 0) {
		if (cmp < 0)
			w->fn(w->names[w->i], 0, w->ctx);
		w->i++;
	}
	if (w->user->all || users_may(w->user, list))
		w->fn(list, held, w->ctx);
	return 0;
}

int
web_lists(struct web_req *r, struct queue *q, web_list_fn fn, void *ctx,
    char *err, size_t errsz)
{
	struct lists_walk w;
	char **known = NULL;
	size_t nknown = 0;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	w.user = r->user;
	w.fn = fn;
	w.ctx = ctx;
	if (r->user->all) {
		if (known_copy(r->srv, &known, &nknown) < 0) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		w.names = known;
		w.n = nknown;
	} else {
		w.names = r->user->lists;
		w.n = r->user->nlists;
	}
	if (qview_counts(q, r->user->all ? NULL : (const char *const *)w.names,
	    r->user->all ? 0 : w.n, walk_count, &w, err, errsz) < 0)
		rc = -2;
	else
		for (; w.i < w.n; w.i++)
			fn(w.names[w.i], 0, ctx);
	web_names_free(known, nknown);
	return rc;
}

void
web_dirty(struct web_srv *s, const char *list)
{
	size_t i;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->ndirty; i++)
		if (strcmp(s->dirty[i], list) == 0)
			break;
	if (i == s->ndirty) {
		if (s->ndirty < WEB_MAX_DIRTY)
			snprintf(s->dirty[s->ndirty++], LG_MAX_LIST_NAME + 1,
			    "%s", list);
		else
			s->dirty_all = 1;
	}
	pthread_cond_signal(&s->sync_cv);
	pthread_mutex_unlock(&s->mu);
}

/* sync one list's token file, errors logged; through the primary
 * (database), not sync_database: the decisions to apply were committed
 * there a moment ago, and a standby may not have them yet (as after
 * listgate approve).  0; -1 when the database or the sync failed (worth
 * another try); a list whose file does not load is not (0: the error
 * names the file and line, and the next decision tries again) */
static int
sync_one(struct web_srv *s, const char *list)
{
	struct listcfg_list l;
	struct sync_stats st;
	char err[1024];
	unsigned i;
	int rc = 0;

	if (!listcfg_name_ok(list))
		return 0;
	if (s->sync_q == NULL && queue_open(s->g->conninfo, &s->sync_q, err,
	    sizeof(err)) < 0) {
		log_error("web: sync of list %s: %s", list, err);
		return -1;
	}
	if (listcfg_load_list(s->g, list, &l, err, sizeof(err)) < 0) {
		log_error("web: sync of list %s: %s", list, err);
		return 0;
	}
	if (sync_list(s->sync_q, s->g, &l, &st, err, sizeof(err)) < 0) {
		log_error("web: %s", err);
		/* a broken connection is opened afresh next time */
		queue_close(s->sync_q);
		s->sync_q = NULL;
		rc = -1;
	} else if (sync_pairs_warning(&st, list, err, sizeof(err)) != NULL)
		log_warn("web: %s", err);
	/* events it skipped, quarantined by it or before: this sync
	 * passed them, no later one tells (on failure too: nothing of the
	 * failed batch is reported) */
	for (i = 0; i <= st.nreported; i++)
		if (sync_skipped_warning(&st, i, list, err,
		    sizeof(err)) != NULL)
			log_warn("web: sync: %s", err);
	listcfg_free_list(&l);
	return rc;
}

/* journal_lists callback for an overflowed dirty set: a list that
 * fails is put back, to be tried again, and c->failed set */
struct sync_named_ctx {
	struct web_srv *s;
	int failed;
};

static int
sync_named(const char *list, void *vctx)
{
	struct sync_named_ctx *c = vctx;

	if (sync_one(c->s, list) < 0) {
		c->failed = 1;
		web_dirty(c->s, list);
	}
	return 0;
}

/* the sync thread: applies the journal to the token files of the lists
 * decided on, until told to stop (then once more).  A list whose sync
 * fails (the database restarting) goes back in the dirty set and is
 * tried again after a pause, WEB_SYNC_RETRY_MIN_S doubling up to
 * WEB_SYNC_RETRY_MAX_S, on a new connection. */
static void *
sync_main(void *arg)
{
	struct web_srv *s = arg;
	char (*todo)[LG_MAX_LIST_NAME + 1];
	size_t n, i;
	int all, stop;
	struct sync_named_ctx c;
	unsigned pause = 0;	/* seconds: after failures in a row */
	struct timespec until = { 0, 0 };
	char err[1024];

	todo = xcalloc(WEB_MAX_DIRTY, sizeof(*todo));
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->ndirty == 0 && !s->dirty_all && !s->stopping)
			pthread_cond_wait(&s->sync_cv, &s->mu);
		/* after a failure the pause is waited out (not by a stop) */
		while (pause > 0 && !s->stopping &&
		    pthread_cond_timedwait(&s->sync_cv, &s->mu, &until) !=
		    ETIMEDOUT)
			;
		stop = s->stopping;
		n = s->ndirty;
		all = s->dirty_all;
		if (todo != NULL)
			memcpy(todo, s->dirty, n * sizeof(*todo));
		s->ndirty = 0;
		s->dirty_all = 0;
		pthread_mutex_unlock(&s->mu);
		c.s = s;
		c.failed = 0;
		if (todo == NULL)
			all = all || n > 0;
		else
			for (i = 0; i < n; i++)
				if (sync_one(s, todo[i]) < 0) {
					c.failed = 1;
					web_dirty(s, todo[i]);
				}
		if (all && ((s->sync_q == NULL && queue_open(s->g->conninfo,
		    &s->sync_q, err, sizeof(err)) < 0) ||
		    journal_lists(s->sync_q, sync_named, &c, err,
		    sizeof(err)) < 0)) {
			log_error("web: sync of every list: %s", err);
			queue_close(s->sync_q);
			s->sync_q = NULL;
			c.failed = 1;
			pthread_mutex_lock(&s->mu);
			s->dirty_all = 1;
			pthread_mutex_unlock(&s->mu);
		}
		pthread_mutex_lock(&s->mu);
		/* at the stop, what failed is left to the next sync */
		if (stop && c.failed) {
			log_warn("web: token files left behind the journal "
			    "(%s sync brings them up to date)", suggest_cmd());
			break;
		}
		if (stop && s->ndirty == 0 && !s->dirty_all)
			break;
		if (c.failed) {
			pause = pause == 0 ? WEB_SYNC_RETRY_MIN_S :
			    pause * 2 > WEB_SYNC_RETRY_MAX_S ?
			    WEB_SYNC_RETRY_MAX_S : pause * 2;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += pause;
			log_warn("web: token files behind the journal: next "
			    "try in %u s", pause);
		} else
			pause = 0;
	}
	pthread_mutex_unlock(&s->mu);
	xfree(todo);
	return NULL;
}

/* the reaper: once a second, shut the socket of each connection past
 * its deadline (watch: a request that has not arrived whole, an answer
 * not read whole; its thread then sees the end and closes it), until
 * told to stop */
static void *
reap_main(void *arg)
{
	struct web_srv *s = arg;
	struct timespec until;
	time_t now;
	size_t i, n, na;

	pthread_mutex_lock(&s->mu);
	while (!s->reap_stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&s->reap_cv, &s->mu, &until);
		if (s->reap_stop)
			break;
		pthread_mutex_unlock(&s->mu);
		now = time(NULL);
		n = na = 0;
		pthread_mutex_lock(&watch.mu);
		for (i = 0; i < sizeof(watch.v) / sizeof(watch.v[0]); i++)
			if (watch.v[i].c != NULL &&
			    watch.v[i].what != WATCH_NONE &&
			    now >= watch.v[i].until) {
				/* reset when closed: what the socket still
				 * holds of an answer is dropped, not kept
				 * for the client that reads slowly */
				struct linger lg = { 1, 0 };

				(void)setsockopt(watch.v[i].fd, SOL_SOCKET,
				    SO_LINGER, &lg, sizeof(lg));
				shutdown(watch.v[i].fd, SHUT_RDWR);
				if (watch.v[i].what == WATCH_ANSWER)
					na++;
				else
					n++;
				watch.v[i].what = WATCH_NONE;
			}
		pthread_mutex_unlock(&watch.mu);
		if (n > 0)
			log_warn("web: %zu connection%s closed: no whole request "
			    "in %u s", n, n == 1 ? "" : "s",
			    (unsigned)LG_MAX_WEB_REQUEST_S);
		if (na > 0)
			log_warn("web: %zu connection%s closed: the answer was "
			    "not read whole in %u s and 1 s per %u KiB of it",
			    na, na == 1 ? "" : "s", (unsigned)LG_MAX_WEB_SEND_S,
			    (unsigned)(LG_MIN_WEB_SEND_RATE / 1024));
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* --- requests ------------------------------------------------------------- */

/* the one file-like path: the compiled-in stylesheet */
static const char css_path[] = "/style.css";

/* a new request's state, its client worked out: NULL when out of
 * memory.  uri is the whole request target, query included. */
static struct web_req *
req_new(struct web_srv *s, struct MHD_Connection *c, const char *uri)
{
	struct web_req *r;
	const union MHD_ConnectionInfo *ci;
	unsigned char a[16];
	size_t n;

	if ((r = xcalloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->srv = s;
	r->conn = c;
	r->method = "-";
	r->t0 = clock_now_ms();
	r->status = 500;
	r->ctype = "text/html; charset=utf-8";
	buf_init(&r->body, LG_MAX_WEB_BODY);
	buf_init(&r->out, WEB_MAX_ANSWER + WEB_ANSWER_GUARD);
	/* the path without its query (the access handler puts the
	 * decoded one in its place); too long a target is refused in
	 * dispatch */
	r->urilen = strlen(uri);
	n = strcspn(uri, "?");
	if (n >= sizeof(r->path))
		n = sizeof(r->path) - 1;
	memcpy(r->path, uri, n);
	r->path[n] = '\0';
	/* the peer, until the headers say more (req_client): a request
	 * refused before its headers are in (too large, never finished)
	 * is logged with the address it came from too */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || sa_addr(ci->client_addr, a, r->addr,
	    sizeof(r->addr)) < 0)
		snprintf(r->addr, sizeof(r->addr), "?");
	return r;
}

/* MHD_KeyValueIterator: the last X-Forwarded-For header (a proxy that
 * adds its own header line, as HAProxy does, puts it after the ones the
 * client sent) */
static enum MHD_Result
last_xff(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	(void)kind;
	if (key != NULL && value != NULL &&
	    strcasecmp(key, "X-Forwarded-For") == 0)
		*(const char **)cls = value;
	return MHD_YES;
}

/*
 * The address in one X-Forwarded-For entry [p, p + n) into out (outsz
 * bytes): an IPv4 or IPv6 address, as it is or with the port some
 * proxies add ("192.0.2.1:4711", "[2001:db8::1]:4711", "[2001:db8::1]"),
 * the port dropped.  0, or -1 when it is none of those.
 */
static int
xff_addr(const char *p, size_t n, char *out, size_t outsz)
{
	const char *e = p + n, *colon;
	size_t port;

	if (n > 0 && *p == '[') {
		/* [v6] or [v6]:port */
		colon = memchr(p, ']', n);
		if (colon == NULL)
			return -1;
		port = (size_t)(e - colon) - 1;
		if (port > 0 && (colon[1] != ':' || port < 2 || port > 6 ||
		    strspn(colon + 2, "0123456789") < port - 1))
			return -1;
		p++;
		n = (size_t)(colon - p);
		if (memchr(p, ':', n) == NULL)
			return -1;	/* brackets are for IPv6 alone */
	} else if ((colon = memchr(p, ':', n)) != NULL &&
	    memchr(colon + 1, ':', (size_t)(e - colon) - 1) == NULL) {
		/* one colon: v4:port */
		port = (size_t)(e - colon) - 1;
		if (port < 1 || port > 5 || strspn(colon + 1, "0123456789") <
		    port)
			return -1;
		n = (size_t)(colon - p);
		if (memchr(p, '.', n) == NULL)
			return -1;
	}
	if (n == 0 || n >= outsz)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return listcfg_addrs_parse(out, NULL, 0, NULL, NULL, 0) == 0 &&
	    strcspn(out, ", \t") == n ? 0 : -1;
}

/* who the client is: the peer, or what a trusted proxy says of it (the
 * headers are in by the access handler's first call) */
static void
req_client(struct web_srv *s, struct web_req *r)
{
	const union MHD_ConnectionInfo *ci;
	unsigned char a[16];
	const char *xff, *xfp, *last;
	char w[64];
	size_t n;

	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && sa_addr(ci->client_addr, a, r->addr,
	    sizeof(r->addr)) == 0 && is_proxy(s, a)) {
		r->from_proxy = 1;
		/* the proxy appends the address it saw: the last one */
		xff = NULL;
		MHD_get_connection_values(r->conn, MHD_HEADER_KIND, last_xff,
		    &xff);
		if (xff != NULL) {
			last = strrchr(xff, ',');
			last = last ? last + 1 : xff;
			while (*last == ' ' || *last == '\t')
				last++;
			n = strcspn(last, " \t");
			if (xff_addr(last, n, w, sizeof(w)) == 0 &&
			    strlen(w) < sizeof(r->addr))
				memcpy(r->addr, w, strlen(w) + 1);
		}
		xfp = web_header(r, "X-Forwarded-Proto");
		r->tls = xfp != NULL && strcmp(xfp, "https") == 0;
	}
}

static void
req_free(struct web_req *r)
{
	struct web_srv *s = r->srv;

	db_return(r);
	auth_done(r);
	buf_free(&r->body);
	buf_free(&r->out);
	explicit_bzero(r->sid, sizeof(r->sid));
	if (r->counted) {
		pthread_mutex_lock(&s->mu);
		if (--s->inflight == 0)
			pthread_cond_broadcast(&s->idle_cv);
		pthread_mutex_unlock(&s->mu);
	}
	xfree(r);
}

/* send r's answer: MHD_YES, or MHD_NO (the connection is closed) */
static enum MHD_Result
answer(struct web_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char num[32];

	r->responded = 1;
	if (r->out.len > WEB_MAX_ANSWER) {
		/* something was cut: a 500 that says so, not a 200 whose
		 * JSON does not parse or whose page stops midway */
		log_error("web: an answer passed %u bytes: sent 500 instead "
		    "(the request's log line names it)",
		    (unsigned)WEB_MAX_ANSWER);
		if (strncmp(r->ctype, "application/json", 16) == 0)
			web_json_error(r, 500, "the answer would pass %u bytes",
			    (unsigned)WEB_MAX_ANSWER);
		else {
			r->status = 500;
			buf_reset(&r->out);
			web_printf(r, "<!doctype html><title>500</title><p>This "
			    "page would pass %u bytes; `", (unsigned)WEB_MAX_ANSWER);
			web_htmls(r, suggest_cmd());
			web_printf(r, " show' shows the post.");
		}
		r->location[0] = '\0';
	}
	resp = MHD_create_response_from_buffer(r->out.len,
	    r->out.len ? r->out.data : (void *)"", MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", r->ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	/* same-origin, not no-referrer: with no-referrer browsers send
	 * "Origin: null" on a form POST, and the origin check needs it */
	MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
	MHD_add_response_header(resp, "Content-Security-Policy",
	    "default-src 'none'; style-src 'self'; img-src 'self'; "
	    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
	if (r->location[0])
		MHD_add_response_header(resp, "Location", r->location);
	if (r->cookie[0])
		MHD_add_response_header(resp, "Set-Cookie", r->cookie);
	if (r->allow != NULL)
		MHD_add_response_header(resp, "Allow", r->allow);
	if (r->www_auth && r->status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate",
		    "Basic realm=\"listgate\", charset=\"UTF-8\"");
	if (r->retry_after > 0) {
		snprintf(num, sizeof(num), "%ld", r->retry_after);
		MHD_add_response_header(resp, "Retry-After", num);
	}
	/* read whole in time, or cut off (reap_main): a client that reads
	 * a little now and then is never idle for LG_MAX_WEB_IDLE_S */
	watch_set(r->conn, WATCH_ANSWER, (time_t)(LG_MAX_WEB_SEND_S +
	    r->out.len / LG_MIN_WEB_SEND_RATE));
	ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* the stylesheet, compiled in */
static const char css[] =
    "body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#222}"
    "header{background:#234;color:#fff;padding:.5em 1em;display:flex;"
    "gap:1em;align-items:center}"
    "header a{color:#fff}header form{margin-left:auto}"
    "main{padding:1em}table{border-collapse:collapse;width:100%}"
    "th,td{text-align:left;padding:.3em .5em;border-bottom:1px solid #ddd;"
    "vertical-align:top}"
    "th a{color:inherit}td.num{text-align:right;white-space:nowrap}"
    ".why{color:#666;font-size:85%}.flash{background:#ffd;"
    "border:1px solid #cc8;padding:.5em;margin-bottom:1em}"
    ".err{background:#fdd;border-color:#c88}"
    "pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;"
    "word-break:break-all;max-width:100em}"
    "dl.hdr{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:"
    ".1em 1em}dl.hdr dt{font-weight:bold}dl.hdr dd{margin:0;"
    "word-break:break-all}"
    "button{margin-right:.5em}.pager{margin:1em 0}"
    ".stats{margin:1em 0;padding:.5em;border:1px solid #ddd}"
    ".k1{fill:#d95}.k2{fill:#5a5}.k3{fill:#c44}"
    "label{display:block;margin:.5em 0}"
    /* a phone: long words (a subject of one word, an address, a URL
     * token) break instead of widening the page, the chart shrinks to
     * the screen, buttons and checkboxes are big enough to tap */
    "td,h1,dd,.why,.flash{overflow-wrap:anywhere}"
    ".stats svg.chart{max-width:100%;height:auto}"
    "button{padding:.3em .7em}"
    "input[type=checkbox]{width:1.2em;height:1.2em}"
    "@media (max-width:40em){main{padding:.5em}"
    "th,td{padding:.3em .25em}h1{font-size:1.4em}"
    "button{margin:.2em .5em .2em 0;padding:.5em .9em}}";

/* web_header_lines: count a line */
static void
count_line(const char *value, void *ctx)
{
	(void)value;
	(*(int *)ctx)++;
}

/* 1 when r's Host header names this server (web_allowed_hosts: one
 * of its names, an IP address or localhost), else 0 with the answer
 * made: a page of a site whose name was made to point here (DNS
 * rebinding) must not be the browser's way in */
static int
host_ok(struct web_req *r)
{
	const struct web_srv *s = r->srv;
	const char *h = web_header(r, "Host");
	char name[LG_MAX_HOST_NAME + 1];
	size_t i;
	int kind, nhost = 0;

	/* two Host lines (RFC 9112 3.2: 400): which names the site is
	 * anyone's guess, libmicrohttpd reading the first and a program
	 * in front perhaps the last */
	web_header_lines(r, "Host", count_line, &nhost);
	if (nhost > 1) {
		if (strncmp(r->path, "/api/", 5) == 0)
			web_json_error(r, 400, "Host is given twice");
		else {
			r->status = 400;
			web_printf(r, "<!doctype html><title>400</title><p>Host "
			    "is given twice.");
		}
		return 0;
	}
	/* none in HTTP/1.1 (RFC 9112 3.2: a server MUST answer 400),
	 * web_allowed_hosts set or not; HTTP/1.0 needs none, and is
	 * checked against web_allowed_hosts below */
	if (nhost == 0 && r->http11) {
		if (strncmp(r->path, "/api/", 5) == 0)
			web_json_error(r, 400, "an HTTP/1.1 request needs a "
			    "Host header");
		else {
			r->status = 400;
			web_printf(r, "<!doctype html><title>400</title><p>An "
			    "HTTP/1.1 request needs a Host header.");
		}
		return 0;
	}
	if (s->any_host)
		return 1;
	kind = h != NULL ? listcfg_host_header(h, name) : 0;
	if (kind == 2)
		return 1;
	for (i = 0; kind == 1 && i < s->nhosts; i++)
		if (strcmp(s->hosts[i], name) == 0)
			return 1;
	if (strncmp(r->path, "/api/", 5) == 0) {
		if (kind == 0)
			web_json_error(r, 400, "a Host header naming this "
			    "server is needed (web_allowed_hosts is set)");
		else
			web_json_error(r, 421, "this server does not answer "
			    "for the host name %s (web_allowed_hosts)", name);
		return 0;
	}
	r->status = kind == 0 ? 400 : 421;
	web_printf(r, "<!doctype html><title>%d</title><p>", r->status);
	if (kind == 0)
		web_printf(r, "A Host header naming this server is needed "
		    "(web_allowed_hosts is set).");
	else {
		web_printf(r, "This server does not answer for the host name "
		    "<b>");
		web_htmls(r, name);
		web_printf(r, "</b> (web_allowed_hosts).");
	}
	return 0;
}

/* route a complete request */
static void
dispatch(struct web_req *r)
{
	char *seg[WEB_MAX_SEGS], *p, copy[LG_MAX_WEB_URL + 1];
	int n = 0;

	if (r->urilen > LG_MAX_WEB_URL) {
		r->status = 414;
		web_printf(r, "<!doctype html><title>414</title><p>URL too "
		    "long.");
		return;
	}
	if (!host_ok(r))
		return;
	if (strcmp(r->path, css_path) == 0) {
		if (strcmp(r->method, "GET") != 0 &&
		    strcmp(r->method, "HEAD") != 0) {
			r->status = 405;
			r->allow = "GET, HEAD";
			return;
		}
		r->status = 200;
		r->ctype = "text/css; charset=utf-8";
		buf_add(&r->out, css, sizeof(css) - 1);
		return;
	}
	/* split on '/'; empty segments (a trailing slash, "//") vanish */
	memcpy(copy, r->path, strlen(r->path) + 1);
	for (p = copy; *p != '\0' && n <= WEB_MAX_SEGS;) {
		while (*p == '/')
			*p++ = '\0';
		if (*p == '\0')
			break;
		if (n < WEB_MAX_SEGS)
			seg[n] = p;
		n++;
		while (*p != '\0' && *p != '/')
			p++;
	}
	if (n > WEB_MAX_SEGS) {
		if (strncmp(r->path, "/api/", 5) == 0)
			web_json_error(r, 404, "no such resource");
		else {
			r->status = 404;
			web_printf(r, "<!doctype html><title>404</title><p>No "
			    "such page.");
		}
		return;
	}
	if (n > 0 && strcmp(seg[0], "api") == 0)
		api_handle(r, seg + 1, n - 1);
	else
		page_handle(r, seg, n);
}

/* a body longer than LG_MAX_WEB_BODY: say so at once */
static enum MHD_Result
too_big(struct web_req *r)
{
	r->too_big = 1;
	buf_reset(&r->out);
	if (strncmp(r->path, "/api/", 5) == 0)
		web_json_error(r, 413, "request body larger than %u bytes",
		    (unsigned)LG_MAX_WEB_BODY);
	else {
		r->status = 413;
		web_printf(r, "<!doctype html><title>413</title><p>Request "
		    "larger than %u bytes.", (unsigned)LG_MAX_WEB_BODY);
	}
	return answer(r);
}

/* MHD_KeyValueIterator: count a header line whose name is not an HTTP
 * token (RFC 9110 5.1: "Transfer-Encoding " with a blank before its
 * colon, which libmicrohttpd keeps as a name of its own) */
static enum MHD_Result
bad_name(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	(void)kind;
	(void)value;
	if (key == NULL || key[0] == '\0' || key[strspn(key, tchar)] != '\0')
		(*(int *)cls)++;
	return MHD_YES;
}

/* a request whose body cannot be told apart from the next request's
 * (Content-Length twice, libmicrohttpd taking the first, a proxy in
 * front perhaps the last; Transfer-Encoding beside a Content-Length,
 * libmicrohttpd reading it chunked, a proxy perhaps by the length; a
 * transfer coding other than chunked, whose body libmicrohttpd reads
 * to the connection's end, the next request included; a header name
 * with a blank before its colon, which RFC 9112 5.1 says to refuse, as
 * a proxy may take "Transfer-Encoding : chunked" for the real one:
 * request smuggling): 400 at once, saying why, and the connection
 * closed */
static enum MHD_Result
bad_framing(struct web_req *r, const char *why)
{
	buf_reset(&r->out);
	if (strncmp(r->path, "/api/", 5) == 0)
		web_json_error(r, 400, "%s", why);
	else {
		r->status = 400;
		web_printf(r, "<!doctype html><title>400</title><p>%s.", why);
	}
	return answer(r);
}

/* 1 when the raw path (before its query) holds a control character,
 * as a byte or as %00 to %1F or %7F: libmicrohttpd hands the access
 * handler the decoded path as a C string, so a %00 cut it short there
 * ("/style.css%00.html" was the stylesheet, "/lists/dev%00x" list
 * dev's page) and the path checked was not the one asked for */
static int
path_has_control(const char *raw)
{
	static const char hex[] = "0123456789abcdef";
	const char *p, *hi, *lo;
	int v;

	for (p = raw; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 1;
		if (*p != '%' || p[1] == '\0' || p[2] == '\0')
			continue;
		hi = strchr(hex, tolower((unsigned char)p[1]));
		lo = strchr(hex, tolower((unsigned char)p[2]));
		if (hi == NULL || lo == NULL)
			continue;
		v = (int)(hi - hex) << 4 | (int)(lo - hex);
		if (v < 0x20 || v == 0x7f)
			return 1;
	}
	return 0;
}

/* MHD_AccessHandlerCallback: called when the headers are in, for each
 * piece of the body, and once more at its end */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct web_srv *s = cls;
	struct web_req *r = *con_cls;
	const char *cl, *te;
	char *end;
	unsigned long long len;
	int ncl = 0, nte = 0, nbad = 0;

	if (r == NULL) {
		/* the URI callback ran out of memory */
		return MHD_NO;
	}
	if (!r->started) {
		r->started = 1;
		r->method = method;
		r->http11 = version != NULL &&
		    strncmp(version, "HTTP/1.", 7) == 0 &&
		    strcmp(version, "HTTP/1.0") != 0;
		/* r->path is still the raw one (req_new): refused with it in
		 * the log line, not its decoded cut */
		if (path_has_control(r->path))
			return bad_framing(r, "a control character in the "
			    "path (%00 to %1F, %7F)");
		/* the path as libmicrohttpd decoded it (%XX) */
		snprintf(r->path, sizeof(r->path), "%s", url);
		req_client(s, r);
		MHD_get_connection_values(c, MHD_HEADER_KIND, bad_name, &nbad);
		if (nbad > 0)
			return bad_framing(r, "a header name that is not a "
			    "token (a blank before its colon?)");
		web_header_lines(r, "Content-Length", count_line, &ncl);
		if (ncl > 1)
			return bad_framing(r, "Content-Length is given twice");
		web_header_lines(r, "Transfer-Encoding", count_line, &nte);
		te = web_header(r, "Transfer-Encoding");
		if (nte > 0 && ncl > 0)
			return bad_framing(r, "Transfer-Encoding and "
			    "Content-Length are both given");
		if (nte > 1 || (te != NULL && strcasecmp(te, "chunked") != 0))
			return bad_framing(r, "Transfer-Encoding other than "
			    "chunked (once)");
		cl = web_header(r, "Content-Length");
		if (cl != NULL) {
			errno = 0;
			len = strtoull(cl, &end, 10);
			if (*cl < '0' || *cl > '9' || *end != '\0' ||
			    errno != 0 || len > LG_MAX_WEB_BODY)
				return too_big(r);
		}
		return MHD_YES;
	}
	if (r->responded)
		return MHD_NO;
	if (*upload_size != 0) {
		/* a body without a length that grows too big is read on
		 * (and dropped) up to WEB_MAX_DRAIN, so that it can be told
		 * 413 when it ends; past that the connection is closed */
		if (r->too_big || buf_add(&r->body, upload, *upload_size) < 0) {
			r->too_big = 1;
			r->drained += *upload_size;
			*upload_size = 0;
			return r->drained > WEB_MAX_DRAIN ? MHD_NO : MHD_YES;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->too_big)
		return too_big(r);
	/* a stop waits for it from here: whole requests only, so that a
	 * client that never ends its headers or body holds no stop up */
	pthread_mutex_lock(&s->mu);
	s->inflight++;
	r->counted = 1;
	pthread_mutex_unlock(&s->mu);
	/* whole: a release may take long (answer sets the answer's
	 * deadline) */
	watch_set(c, WATCH_NONE, 0);
	dispatch(r);
	/* the answer is made: its database connection goes back now, not
	 * once a client reads it all (one that reads slowly, or not at
	 * all, held a connection of the pool that long) */
	db_return(r);
	return answer(r);
}

/* MHD's URI log callback: the request starts (its state is made here,
 * where the whole target, query included, is seen) */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	return req_new(cls, c, uri != NULL ? uri : "");
}

/* MHD_RequestCompletedCallback: the one log line, then free */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct web_req *r = *con_cls;
	char path[600], method[40], user[100], addr[100];
	static const char *const ends[] = { "", " end=error", " end=timeout",
	    " end=shutdown", " end=read-error", " end=client-abort" };

	(void)cls;
	/* the next request on the connection must arrive in time too */
	watch_set(c, WATCH_REQUEST, LG_MAX_WEB_REQUEST_S);
	if (r == NULL)
		return;
	sanitize_str(path, sizeof(path), r->path, strlen(r->path), 200,
	    SANITIZE_LOG, 0);
	sanitize_str(method, sizeof(method), r->method, strlen(r->method), 16,
	    SANITIZE_LOG, 0);
	sanitize_str(addr, sizeof(addr), r->addr, strlen(r->addr), 64,
	    SANITIZE_LOG, 0);
	if (r->user != NULL)
		sanitize_str(user, sizeof(user), r->user->name,
		    strlen(r->user->name), 64, SANITIZE_LOG, 0);
	else
		snprintf(user, sizeof(user), "-");
	log_info("web: addr=%s user=%s method=%s path=\"%s\" status=%d "
	    "bytes=%zu ms=%.1f%s", addr, user, method, path,
	    r->responded ? r->status : 0, r->out.len, clock_now_ms() - r->t0,
	    (unsigned)toe < sizeof(ends) / sizeof(ends[0]) ? ends[toe] :
	    " end=?");
	req_free(r);
	*con_cls = NULL;
}

/* MHD_LogCallback: libmicrohttpd's own complaints (a request it refused
 * before we saw it: too long, malformed) */
static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512], clean[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_warn("web: libmicrohttpd: %s", sanitize_str(clean,
	    sizeof(clean), msg, n, 300, SANITIZE_LOG, 0));
}

/* the listen address as a socket address: 0, or -1 with err */
static int
listen_addr(const char *listen, struct sockaddr_storage *ss,
    socklen_t *len_r, char *err, size_t errsz)
{
	char host[64], why[256];
	unsigned port;

	memset(ss, 0, sizeof(*ss));
	if (listcfg_listen_parse(listen, host, sizeof(host), &port, why,
	    sizeof(why)) < 0) {
		snprintf(err, errsz, "listen address: %s", why);
		return -1;
	}
	if (strchr(host, ':') != NULL) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, host, &in6->sin6_addr);
		*len_r = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, host, &in->sin_addr);
		*len_r = sizeof(*in);
	}
	return 0;
}

/* the connections the open files limit leaves room for, WEB_FD_RESERVE
 * kept for the rest (the database, the release commands): the soft
 * limit is raised first towards what LG_MAX_WEB_CONNECTIONS needs (as
 * far as the hard one lets; systemd's default soft limit is 1024).
 * Without the room, the sockets took every descriptor: no database
 * connection or release command could be opened, and libmicrohttpd
 * retried its accept in a loop, logging each failure.  0 with err when
 * the limit leaves room for fewer than WEB_MIN_CONNECTIONS. */
static unsigned
conn_budget(char *err, size_t errsz)
{
	const rlim_t want = (rlim_t)LG_MAX_WEB_CONNECTIONS + WEB_FD_RESERVE;
	struct rlimit rl, nl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return LG_MAX_WEB_CONNECTIONS;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		nl = rl;
		nl.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
		    rl.rlim_max > want ? want : rl.rlim_max;
		if (nl.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE,
		    &nl) == 0)
			rl = nl;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return LG_MAX_WEB_CONNECTIONS;
	if (rl.rlim_cur < (rlim_t)WEB_FD_RESERVE + WEB_MIN_CONNECTIONS) {
		snprintf(err, errsz, "the open files limit (%llu: ulimit -n, "
		    "LimitNOFILE=) leaves no room for connections: %u are "
		    "kept for the database and the release commands, and at "
		    "least %u connections are needed",
		    (unsigned long long)rl.rlim_cur, (unsigned)WEB_FD_RESERVE,
		    (unsigned)WEB_MIN_CONNECTIONS);
		return 0;
	}
	log_warn("web: the open files limit (%llu: ulimit -n, LimitNOFILE=) "
	    "leaves room for %llu connections at once, not %u",
	    (unsigned long long)rl.rlim_cur,
	    (unsigned long long)(rl.rlim_cur - WEB_FD_RESERVE),
	    (unsigned)LG_MAX_WEB_CONNECTIONS);
	return (unsigned)(rl.rlim_cur - WEB_FD_RESERVE);
}

/* at the stop, after the daemon stopped accepting: wait until the
 * requests in progress have completed (their answers sent), at most the
 * longest list's timeout (a release) and WEB_STOP_SLACK_S */
static void
wait_requests(struct web_srv *s)
{
	struct listcfg_list l;
	struct timespec until;
	char **names, err[1024];
	size_t n, i;
	unsigned secs = s->g->timeout_s;

	if (known_copy(s, &names, &n) == 0) {
		for (i = 0; i < n; i++)
			if (listcfg_load_list(s->g, names[i], &l, err,
			    sizeof(err)) == 0) {
				if (l.timeout_s > secs)
					secs = l.timeout_s;
				listcfg_free_list(&l);
			}
		web_names_free(names, n);
	}
	secs += WEB_STOP_SLACK_S;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += secs;
	pthread_mutex_lock(&s->mu);
	while (s->inflight > 0 && pthread_cond_timedwait(&s->idle_cv, &s->mu,
	    &until) != ETIMEDOUT)
		;
	if (s->inflight > 0)
		log_warn("web: %d request%s still in progress after %u s: "
		    "stopping without %s answer%s", s->inflight,
		    s->inflight == 1 ? "" : "s", secs,
		    s->inflight == 1 ? "its" : "their",
		    s->inflight == 1 ? "" : "s");
	pthread_mutex_unlock(&s->mu);
}

int
web_run(struct listcfg_global *g, const char *listen, char *err,
    size_t errsz)
{
	struct web_srv *s;
	struct sockaddr_storage ss;
	socklen_t sslen;
	const union MHD_DaemonInfo *di;
	sigset_t set;
	char why[256], host[64];
	unsigned port;
	int sig, rc = -1, sync_started = 0, reap_started = 0;
	MHD_socket lfd;
	unsigned flags, nconn;

	if (listen_addr(listen, &ss, &sslen, err, errsz) < 0)
		return -1;
	if ((nconn = conn_budget(err, errsz)) == 0)
		return -1;
	listcfg_listen_parse(listen, host, sizeof(host), &port, why,
	    sizeof(why));
	if ((s = xcalloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	s->g = g;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->hash_mu, NULL);
	pthread_mutex_init(&s->pool_mu, NULL);
	pthread_cond_init(&s->pool_cv, NULL);
	pthread_cond_init(&s->hash_cv, NULL);
	pthread_cond_init(&s->sync_cv, NULL);
	pthread_cond_init(&s->idle_cv, NULL);
	pthread_cond_init(&s->reap_cv, NULL);
	if (listcfg_addrs_parse(g->web_trusted_proxies ?
	    g->web_trusted_proxies : "", s->proxy, WEB_MAX_PROXIES,
	    &s->nproxy, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "web_trusted_proxies: %s", why);
		goto out;
	}
	s->any_host = g->web_allowed_hosts == NULL;
	if (listcfg_hosts_parse(g->web_allowed_hosts ?
	    g->web_allowed_hosts : "", s->hosts, LG_MAX_WEB_HOSTS,
	    &s->nhosts, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "web_allowed_hosts: %s", why);
		goto out;
	}
	if (auth_init(s, err, errsz) < 0)
		goto out;

	/* every thread started from here on blocks the stop signals;
	 * this one waits for them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&s->sync_thr, NULL, sync_main, s) != 0) {
		snprintf(err, errsz, "cannot start the sync thread");
		goto out_auth;
	}
	sync_started = 1;
	if (pthread_create(&s->reap_thr, NULL, reap_main, s) != 0) {
		snprintf(err, errsz, "cannot start the reaper thread");
		goto out_sync;
	}
	reap_started = 1;
	/* a thread per connection: a slow request (a release command
	 * running) holds up only its own connection */
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, (uint16_t)port, on_accept, s,
	    on_request, s,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_CONNECTION_LIMIT, nconn,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)LG_MAX_WEB_IDLE_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)LG_MAX_WEB_CONN_MEMORY,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 256u,
	    MHD_OPTION_END);
	if (s->d == NULL) {
		snprintf(err, errsz, "cannot listen on %s: %s", listen,
		    mhdload_error()[0] ? mhdload_error() :
		    "address in use, or not available");
		goto out_sync;
	}
	di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (di != NULL && di->port != 0)
		port = di->port;
	log_info("web: listening on %s%s%s:%u",
	    strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
	    port);

	do {
		if (sigwait(&set, &sig) != 0)
			sig = SIGTERM;
		if (sig == SIGHUP)
			log_info("web: SIGHUP: users.conf and lists/ are "
			    "reread by themselves; nothing to do");
	} while (sig == SIGHUP);
	log_info("web: %s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	/* a bulk form in progress decides the post it is at, and no more:
	 * its posts' releases could outlast the wait below, and one cut
	 * off there stays 'releasing' */
	pthread_mutex_lock(&s->mu);
	s->quitting = 1;
	pthread_mutex_unlock(&s->mu);
	/* and an approval not yet releasing does not start: one waiting
	 * for its post's lock after the mark (behind a train of the list)
	 * held the stop up until the lock came free, and a supervisor's
	 * kill then left the post 'releasing' with nothing released; the
	 * post is held again, the request told */
	__atomic_store_n(&decide_stop, sig, __ATOMIC_RELAXED);
	/* stop accepting; then wait for the requests in progress to be
	 * answered (MHD_stop_daemon shuts every connection's socket) */
	lfd = MHD_quiesce_daemon(s->d);
	/* refuse new connections meanwhile, rather than leave them in the
	 * listening socket's backlog unanswered (closed after the stop, as
	 * libmicrohttpd wants) */
	if (lfd != MHD_INVALID_SOCKET)
		shutdown(lfd, SHUT_RDWR);
	wait_requests(s);
	MHD_stop_daemon(s->d);
	s->d = NULL;
	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
	rc = 0;
out_sync:
	if (reap_started) {
		pthread_mutex_lock(&s->mu);
		s->reap_stop = 1;
		pthread_cond_signal(&s->reap_cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->reap_thr, NULL);
	}
	if (sync_started) {
		pthread_mutex_lock(&s->mu);
		s->stopping = 1;
		pthread_cond_signal(&s->sync_cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->sync_thr, NULL);
		queue_close(s->sync_q);
	}
out_auth:
	auth_fini(s);
out:
	while (s->npool > 0)
		queue_close(s->pool[--s->npool]);
	web_names_free(s->known, s->nknown);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->hash_mu);
	pthread_mutex_destroy(&s->pool_mu);
	pthread_cond_destroy(&s->pool_cv);
	pthread_cond_destroy(&s->hash_cv);
	pthread_cond_destroy(&s->sync_cv);
	pthread_cond_destroy(&s->idle_cv);
	pthread_cond_destroy(&s->reap_cv);
	xfree(s);
	if (rc == 0)
		log_info("web: stopped");
	return rc;
}

/* --- what a held post shows ------------------------------------------ */

int
web_clue_next(const char **p, struct web_clue *c)
{
	const char *s = *p, *e, *f[3], *q;
	char num[64], *end;
	size_t n;
	int i;

	while (*s == '\n')
		s++;
	if (*s == '\0')
		return 0;
	e = strchr(s, '\n');
	if (e == NULL)
		e = s + strlen(s);
	*p = e;
	c->tok = s;
	c->toklen = (size_t)(e - s);
	c->prob = -1;
	c->spam = c->ham = 0;
	/* the three numbers after the last three spaces */
	q = e;
	for (i = 2; i >= 0; i--) {
		while (q > s && q[-1] != ' ')
			q--;
		if (q <= s)
			return 1;
		f[i] = q;
		q--;
	}
	for (i = 0; i < 3; i++) {
		n = (size_t)((i < 2 ? f[i + 1] - 1 : e) - f[i]);
		if (n == 0 || n >= sizeof(num))
			return 1;
		memcpy(num, f[i], n);
		num[n] = '\0';
		if (i == 0) {
			double d = strtod(num, &end);

			if (*end != '\0' || !(d >= 0 && d <= 1))
				return 1;
			c->prob = d;
		} else {
			long v = strtol(num, &end, 10);

			if (*end != '\0' || v < 0) {
				c->prob = -1;
				return 1;
			}
			if (i == 1)
				c->spam = v;
			else
				c->ham = v;
		}
	}
	c->toklen = (size_t)(f[0] - 1 - s);
	return 1;
}

/* the collector of web_headers */
struct hdr_ctx {
	void (*fn)(const char *, const unsigned char *, size_t, void *);
	void *ctx;
	unsigned n;
};

static int
hdr_cb(const struct mail_event *ev, void *vctx)
{
	struct hdr_ctx *h = vctx;

	if (ev->kind != MAIL_HEADER || ev->depth != 0)
		return ev->kind == MAIL_HEADER || ev->kind == MAIL_ANOMALY ?
		    0 : -1;	/* the body: done */
	if (h->n++ >= WEB_MAX_HEADERS)
		return -1;
	h->fn(ev->name, ev->data, ev->len, h->ctx);
	return 0;
}

int
web_headers(const unsigned char *raw, size_t len,
    void (*fn)(const char *name, const unsigned char *v, size_t n,
    void *ctx), void *ctx)
{
	struct mail_limits lim;
	struct hdr_ctx h;

	h.fn = fn;
	h.ctx = ctx;
	h.n = 0;
	mail_limits_default(&lim);
	/* a stop at the body is no failure */
	mail_walk(raw, len, &lim, hdr_cb, &h);
	return 0;
}

/* --- a post's SHA-256 ---------------------------------------------------- */

int
web_sha_hex_ok(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < WEB_SHA_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return s != NULL && s[i] == '\0';
}

/* the value of lower-case hex digit c */
static unsigned
hex_digit(char c)
{
	return (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
}

int
web_sha_parse(const char *v, unsigned char sha[WEB_SHA_BYTES])
{
	int i;

	if (!web_sha_hex_ok(v))
		return -1;
	for (i = 0; i < WEB_SHA_BYTES; i++)
		sha[i] = (unsigned char)(hex_digit(v[2 * i]) << 4 |
		    hex_digit(v[2 * i + 1]));
	return 0;
}

void
web_sha_hex(const unsigned char sha[WEB_SHA_BYTES], char hex[WEB_SHA_HEX + 1])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < WEB_SHA_BYTES; i++) {
		hex[2 * i] = digits[sha[i] >> 4];
		hex[2 * i + 1] = digits[sha[i] & 15];
	}
	hex[WEB_SHA_HEX] = '\0';
}

/* --- deciding ------------------------------------------------------------- */

int
web_post_in_list(struct queue *q, const char *list, int64_t id, char *err,
    size_t errsz)
{
	char plist[LG_MAX_LIST_NAME + 2];
	unsigned char sha[WEB_SHA_BYTES];
	int rc;

	/* its list and SHA-256 only: no bytes, and a plain read, which
	 * waits for no decision's lock */
	if ((rc = queue_post_sha(q, id, plist, sizeof(plist), sha, err,
	    errsz)) <= 0)
		return rc;
	return strcmp(plist, list) == 0;
}

/* list's timeout, seconds (the global one when its file does not load:
 * the decision then says why) */
static unsigned
list_timeout(const struct listcfg_global *g, const char *list)
{
	struct listcfg_list l;
	char err[1024];
	unsigned secs = g->timeout_s;

	if (listcfg_load_list(g, list, &l, err, sizeof(err)) == 0) {
		secs = l.timeout_s;
		listcfg_free_list(&l);
	}
	return secs;
}

static web_rejected_fn rejected_fn;

void
web_set_rejected(web_rejected_fn fn)
{
	rejected_fn = fn;
}

int
web_decide(struct web_req *r, struct queue *q, const char *list,
    int64_t id, const unsigned char *sha, const char *status,
    const char *note, struct queue_decided *res, char *msg, size_t msgsz)
{
	struct decide_req rq;
	char err[1024], who[USERS_MAX_NAME + 8];
	char when[40];
	unsigned secs;
	int rc;

	memset(res, 0, sizeof(*res));
	snprintf(who, sizeof(who), "web:%s", r->user->name);
	memset(&rq, 0, sizeof(rq));
	rq.id = id;
	rq.status = status;
	rq.by = who;
	rq.note = note != NULL && *note ? note : NULL;
	rq.flags = 0;
	/* checked again under the post's lock: its list, and the post the
	 * page showed (a failover or a restore may have given its number
	 * to another since) */
	rq.list = list;
	rq.raw_sha256 = sha;
	rq.deadline = 0;
	/* a decision waits for its post's lock within the list's timeout
	 * (as a release runs within it), before anything changes and, for
	 * an approval, after its mark: it waited for as long as the lock
	 * was held (a train of the list, its whole run), the request
	 * unanswered, the post 'releasing' meanwhile after a mark, and a
	 * stop of the server waited too, then decided after it with no
	 * answer sent (or its supervisor killed it, a post left
	 * 'releasing' with nothing released) */
	secs = list_timeout(r->srv->g, list);
	rq.lock_by = clock_now_ms() + secs * 1000.0;
	/* another list's post is no post here before anything of it is
	 * locked: a decision on one being released waited for its
	 * release (decision_lock), which told that it was */
	if ((rc = web_post_in_list(q, list, id, err, sizeof(err))) == 0)
		rc = QUEUE_NOENT;
	else if (rc > 0)
		rc = decide_post(q, r->srv->g, &rq, res, err, sizeof(err));
	web_iso_time(res->at, when, sizeof(when));
	switch (rc) {
	case QUEUE_DECIDED:
		web_dirty(r->srv, list);
		snprintf(msg, msgsz, "post %lld %s", (long long)id, status);
		/* a rejection tells the sender as one by mail does
		 * (sender_notice); the decision stands whatever comes of it */
		if (strcmp(status, "rejected") == 0 && rejected_fn != NULL) {
			int n = rejected_fn(q, r->srv->g, list, id, err,
			    sizeof(err));

			if (n == 0)
				log_info("web: post %lld: sender notified",
				    (long long)id);
			else if (n < 0)
				log_error("web: post %lld: sender not notified: "
				    "%s", (long long)id, err);
		}
		return 200;
	case QUEUE_NOENT:
	case QUEUE_OTHER_LIST:	/* another list's post does not exist here */
		snprintf(msg, msgsz, "no post %lld in list %s", (long long)id,
		    list);
		return 404;
	case QUEUE_OTHER_POST:
		snprintf(msg, msgsz, "post %lld is not the post this page "
		    "showed (its number went to another post since): nothing "
		    "was decided; reload the page", (long long)id);
		return 409;
	case QUEUE_ALREADY:
		snprintf(msg, msgsz, "post %lld was already %s by %s at %s",
		    (long long)id, res->old, res->by, when);
		return 409;
	case QUEUE_BUSY:
		log_warn("web: post %lld: %s", (long long)id, err);
		if (__atomic_load_n(&decide_stop, __ATOMIC_RELAXED) != 0)
			snprintf(msg, msgsz, "post %lld: nothing was decided: "
			    "the server is stopping", (long long)id);
		else
			snprintf(msg, msgsz, "post %lld: nothing was decided: "
			    "its lock stayed held for the list's timeout (%u s: "
			    "a training run of list %s, or another decision on "
			    "the post); try again later", (long long)id, secs,
			    list);
		return 503;
	case QUEUE_INTERRUPTED:
		snprintf(msg, msgsz, "post %lld is being released since %s by "
		    "%s (an approval that was interrupted?): decide it with "
		    "%s approve on the list host", (long long)id, when,
		    res->by, suggest_cmd());
		return 409;
	case QUEUE_RELEASE_FAILED:
		log_error("web: post %lld: %s", (long long)id, err);
		if (res->unsure)
			snprintf(msg, msgsz, "post %lld not approved: %s; "
			    "check the list archive, then decide it with %s "
			    "approve --force or --mark-approved on the list "
			    "host", (long long)id, err, suggest_cmd());
		else
			snprintf(msg, msgsz, "post %lld not approved: %s",
			    (long long)id, err);
		return 502;
	case QUEUE_UNRECORDED:
		snprintf(msg, msgsz, "post %lld was released but the approval "
		    "could not be recorded (it stays 'releasing': %s "
		    "approve --mark-approved %lld)", (long long)id,
		    suggest_cmd(), (long long)id);
		break;
	default:
		snprintf(msg, msgsz, "post %lld: database error", (long long)id);
		break;
	}
	log_error("web: %s", err);
	web_db_drop(r);
	if (rc < 0 && strstr(err, "stays 'releasing'") != NULL)
		/* marked, and its release never ran: said as the CLI says
		 * it, with what to run (a bare "database error" left the
		 * moderator to find the post 'releasing' later, told to
		 * check the list's archive for a post never sent) */
		snprintf(msg, msgsz, "post %lld was not released: the "
		    "database failed after it was marked 'releasing' (see the "
		    "server's log), and it stays so; once the database is "
		    "back, release it with %s approve --force %lld on the "
		    "list host", (long long)id, suggest_cmd(), (long long)id);
	else if (rc < 0)
		snprintf(msg, msgsz, "database error");
	return 500;
}
