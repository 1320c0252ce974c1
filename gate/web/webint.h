/*
 * webint.h - what the files of gate/web share (not an interface): the
 * server, one request, and the helpers web.c gives the handlers
 *
 * A request is handled by one thread of libmicrohttpd's pool from start
 * to end; the handlers (api.c, page.c) fill its answer (status, body,
 * a few headers) and web.c sends it and logs one line.  Text from posts
 * and requests reaches the answer only through the sanitizer (web_html,
 * web_json_str).  Handlers never fail: every error is an answer.
 */
#ifndef LG_WEBINT_H
#define LG_WEBINT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/web/pwhash.h"
#include "gate/web/session.h"
#include "listcfg/users.h"

struct MHD_Connection;
struct MHD_Daemon;
struct limit;
struct listcfg_global;
struct queue;

/* PostgreSQL connections shared by the requests (a thread per
 * connection answers; each request borrows a database connection for
 * its duration, waiting when all are lent) */
#define WEB_DB_POOL		16
/* login sessions kept at once (the least recently used goes first) */
#define WEB_MAX_SESSIONS	4096
/* failed-login counters kept (accounts and addresses together) */
#define WEB_LIMIT_SLOTS		8192
/* the window of the failed-login limits, seconds */
#define WEB_LIMIT_WINDOW	900
/* failed logins of one account per window before it must wait */
#define WEB_FAILS_ACCOUNT	5
/* failed logins from one address per window before it must wait */
#define WEB_FAILS_ADDR		20
/* password hashes computed at once (yescrypt takes memory and time) */
#define WEB_HASHERS		2
/* seconds a script's checked Basic credentials are trusted again
 * without hashing (a digest keyed by a secret of this run) */
#define WEB_BASIC_CACHE_S	300
/* posts on one page of a list, most and default */
#define WEB_MAX_PAGE		500
#define WEB_DEFAULT_PAGE	50
/* bytes of a held post a page or the API reads: its headers, deciding
 * text and the source shown come from them (a post held oversize may
 * be 1 GiB, and each of WEB_DB_POOL requests at once held it whole);
 * listgate show prints the rest */
#define WEB_MAX_POST_READ	(4u * 1024u * 1024u)
/* lists waiting for their token files to be synced */
#define WEB_MAX_DIRTY		256
/* seconds before a failed sync is tried again, first and most (the
 * pause doubles with each failure in a row: a restarting database) */
#define WEB_SYNC_RETRY_MIN_S	1
#define WEB_SYNC_RETRY_MAX_S	30
/* seconds the stop waits for the requests in progress past the longest
 * list's timeout (the most a release may take): their answers go out */
#define WEB_STOP_SLACK_S	5
/* trusted proxies */
#define WEB_MAX_PROXIES		32
/* open files kept beside the connections' sockets: the database pool
 * and its approvals' lock connections (2 * WEB_DB_POOL), the sync
 * thread's, the release commands' pipes, the token files, reads of the
 * configuration, the listening socket, logging and stdio */
#define WEB_FD_RESERVE		256
/* the fewest connections an open files limit may leave room for */
#define WEB_MIN_CONNECTIONS	16
/* seconds between rereads of lists/ and checks of users.conf */
#define WEB_RESCAN_S		5
/* the session cookie */
#define WEB_COOKIE		"lgsid"
/* ... behind a proxy that says https: a browser takes a cookie of this
 * name only with Secure, Path=/ and no Domain, so no other site (a
 * sibling under the same parent domain) can set one for this host, and
 * plain lgsid cookies are not read at all there (cookie tossing) */
#define WEB_COOKIE_TLS		"__Host-lgsid"
/* session cookies looked at in one request: a browser sends one, or a
 * few when another site under the same domain has set its own (cookie
 * tossing); more are refused as ambiguous */
#define WEB_MAX_SID_COOKIES	8

/* one reading of users.conf, shared by the requests that use it */
struct web_users {
	struct users u;
	int refs;			/* srv->mu */
	/* per account: the digest of the last Basic credentials that
	 * matched, and when (srv->mu) */
	struct web_basic {
		unsigned char digest[32];
		time_t at;
	} *basic;
};

struct web_srv {
	struct listcfg_global *g;
	char *users_path, *lists_dir;
	struct MHD_Daemon *d;
	pthread_mutex_t mu;		/* users, known lists, dirty lists */
	struct web_users *users;
	struct stat users_st;		/* of the file users came from */
	int users_missing;
	char **known;			/* lists/ *.conf names, sorted */
	size_t nknown;
	time_t known_at;
	struct session_store *sess;
	struct limit *fails;
	char dummy_hash[PWHASH_MAX];	/* checked for unknown accounts */
	char key[SESSION_HEX];		/* keys the Basic digests (random) */
	unsigned char proxy[WEB_MAX_PROXIES][16];
	size_t nproxy;
	/* web_allowed_hosts: the names a Host header may give (any_host
	 * when it is not set) */
	char hosts[LG_MAX_WEB_HOSTS][LG_MAX_HOST_NAME + 1];
	size_t nhosts;
	int any_host;
	pthread_mutex_t pool_mu;	/* the database connections */
	pthread_cond_t pool_cv;
	struct queue *pool[WEB_DB_POOL];	/* idle ones */
	int npool, nopen;		/* idle, open in all */
	pthread_mutex_t hash_mu;	/* WEB_HASHERS at once */
	pthread_cond_t hash_cv;
	int nhashing;
	/* the sync thread */
	pthread_t sync_thr;
	pthread_cond_t sync_cv;
	char dirty[WEB_MAX_DIRTY][LG_MAX_LIST_NAME + 1];
	size_t ndirty;
	int dirty_all, stopping;
	int quitting;		/* a stop signal came: a bulk form decides
				 * no more posts (under mu) */
	struct queue *sync_q;
	/* requests begun and not yet completed (mu), and their end */
	int inflight;
	pthread_cond_t idle_cv;
	/* the thread that cuts off requests that do not arrive whole in
	 * LG_MAX_WEB_REQUEST_S (reap_cv, under mu, ends it) */
	pthread_t reap_thr;
	pthread_cond_t reap_cv;
	int reap_stop;
};

/* the outcome of authentication */
enum auth_result {
	AUTH_OK,
	AUTH_NONE,		/* no credentials, or no live session */
	AUTH_BAD,		/* wrong name or password */
	AUTH_LIMITED,		/* too many failures: r->retry_after */
	AUTH_AMBIGUOUS,		/* session cookies of two live sessions
				 * (or too many): which one is the
				 * user's is anyone's guess */
	AUTH_ERROR		/* out of memory, no random bytes */
};

struct web_req {
	struct web_srv *srv;
	struct MHD_Connection *conn;
	const char *method;
	char path[LG_MAX_WEB_URL + 1];
	char addr[64];			/* the client (X-Forwarded-For from a
					 * trusted proxy, else the peer) */
	int tls;			/* the proxy says https */
	int from_proxy;			/* the peer is a trusted proxy */
	size_t urilen;			/* the target, query included */
	int http11;			/* HTTP/1.1 (or a later 1.x), not
					 * 1.0: a Host header is due */
	int started;			/* the access handler has seen it */
	int counted;			/* dispatched: in s->inflight until
					 * it completes */
	struct buf body;
	int too_big;
	size_t drained;			/* body bytes dropped after too_big */
	double t0;
	/* who: set by auth_request / auth_login */
	struct queue *q;		/* borrowed from the pool, or NULL */
	struct web_users *users;	/* a reference, or NULL */
	const struct users_entry *user;	/* in users, or NULL */
	int by_session;
	char sid[SESSION_HEX];
	struct session_view sv;
	/* the answer */
	int status;
	struct buf out;
	const char *ctype;
	char location[LG_MAX_WEB_URL + 64];
	char cookie[256];
	const char *allow;		/* for 405 */
	int www_auth;			/* a Basic challenge with a 401 */
	long retry_after;		/* seconds, with a 429 */
	int responded;			/* the answer went early (413) */
};

/* --- web.c: helpers for the handlers -------------------------------- */

/* a query argument, a request header, a cookie: NULL when absent */
const char *web_arg(struct web_req *r, const char *name);
const char *web_header(struct web_req *r, const char *name);
const char *web_cookie(struct web_req *r, const char *name);
/* call fn with the value of every header line called name (any case),
 * in the order received */
void web_header_lines(struct web_req *r, const char *name,
    void (*fn)(const char *value, void *ctx), void *ctx);

/* a database connection for r, borrowed from the pool until r ends
 * (opened when none is idle and fewer than WEB_DB_POOL are open, else
 * waited for; an idle one the server has closed, as at its restart, is
 * dropped and another taken): NULL (and a 503 answer made, JSON when
 * json) when it cannot be had */
struct queue *web_db(struct web_req *r, int json);
/* a query on it failed: close it (a later request opens another) and
 * answer 500 with err (JSON when json) */
void web_db_failed(struct web_req *r, int json, const char *err);
/* the same without an answer */
void web_db_drop(struct web_req *r);

/* list's token file wants a sync (after a decision) */
void web_dirty(struct web_srv *s, const char *list);

/* 1 when list has a configuration file (lists/L.conf), else 0 */
int web_known(struct web_srv *s, const char *list);
void web_names_free(char **names, size_t n);

/* one list for web_lists, with its number of posts held */
typedef void (*web_list_fn)(const char *list, int64_t held, void *ctx);
/* call fn for each list r's user may see, in name order: the lists they
 * are given (every configured one for "all", and any other with posts
 * held), each with its count (0 when none is held).  0; -1 out of memory
 * or -2 a database error (through q), with err. */
int web_lists(struct web_req *r, struct queue *q, web_list_fn fn,
    void *ctx, char *err, size_t errsz);

/* append trusted text (our own words, numbers) to the answer */
void web_printf(struct web_req *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* append untrusted text through the sanitizer: HTML (masked, escaped;
 * at most maxchars characters, flags SANITIZE_KEEP_NL for a
 * preview) or a complete JSON string */
void web_html(struct web_req *r, const char *s, size_t n, size_t maxchars,
    unsigned flags);
void web_htmls(struct web_req *r, const char *s);
void web_json_str(struct web_req *r, const char *s, size_t n,
    size_t maxchars);
void web_json_strs(struct web_req *r, const char *s);

/* answer status with {"error": message} (formatted, then sanitized) */
void web_json_error(struct web_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* answer 303 See Other to location (a path of ours) */
void web_redirect(struct web_req *r, const char *location);
/* "2026-01-02T03:04:05Z" */
void web_iso_time(time_t t, char *out, size_t outsz);

/* --- auth.c: accounts, sessions, login limits, CSRF ------------------ */

/* set up and tear down what auth needs in s: 0, or -1 with err */
int auth_init(struct web_srv *s, char *err, size_t errsz);
void auth_fini(struct web_srv *s);

/* who sends r: HTTP Basic credentials (when basic is set) or the
 * session cookie.  Of several lgsid cookies (every Cookie line), those
 * that name no live session of a current account are ignored; two
 * naming live sessions are AUTH_AMBIGUOUS, never the first taken (a
 * site under a parent domain can set a cookie of its own, cookie
 * tossing, and the browser may send it first), and both sessions are
 * ended. */
enum auth_result auth_request(struct web_req *r, int basic);

/* a login form: name and password; on AUTH_OK the sessions r's lgsid
 * cookies name are ended, a session is started and its cookie set on
 * r */
enum auth_result auth_login(struct web_req *r, const char *name,
    const char *pw);

/* end r's session and clear its cookie */
void auth_logout(struct web_req *r);

/* 1 when token is r's session's CSRF token */
int auth_csrf_ok(struct web_req *r, const char *token);

/* 1 when a POST's Origin (or Sec-Fetch-Site) does not say it came from
 * another site (an http Origin when a trusted proxy says the request
 * came over https is another site), else 0 */
int auth_same_origin(struct web_req *r);

/* 1 when r's user may see and decide list */
int auth_may(struct web_req *r, const char *list);

/* leave a message for the session's next page */
void auth_flash(struct web_req *r, const char *msg);

/* drop r's reference to the accounts (end of request) */
void auth_done(struct web_req *r);

/* --- api.c and page.c ------------------------------------------------ */

/* /api/...: seg are the path's segments after "api" */
void api_handle(struct web_req *r, char **seg, int nseg);
/* everything else */
void page_handle(struct web_req *r, char **seg, int nseg);

/*
 * Decide post id of list as r's user (by "web:NAME") through
 * decide_post, only while its SHA-256 is sha (the post a page showed;
 * NULL: any): the HTTP status (200 decided, 404 no such post in list,
 * 409 already decided, being released, or not the post with sha any
 * more, 502 the release command failed, 500 the database failed: the
 * thread's connection is then closed) with a sentence for people in
 * msg, and what the post was in *res (res->old "" for a 409 that is not
 * the post with sha).
 */
struct queue_decided;
int web_decide(struct web_req *r, struct queue *q, const char *list,
    int64_t id, const unsigned char *sha, const char *status,
    const char *note, struct queue_decided *res, char *msg, size_t msgsz);

/*
 * 1 when post id is one of list's, 0 when it is not (no such post, or
 * another list's), -1 when the database failed (err): asked first of
 * every post a request names, so that nothing of another list's post
 * is read, locked or waited for (its bytes read took time by its size,
 * a corrupt one was a 500, and a decision waited for its release to
 * end, telling that it was being released)
 */
int web_post_in_list(struct queue *q, const char *list, int64_t id,
    char *err, size_t errsz);

/* shared by both: the id in s (digits only, 1..2^63-1): 0, or -1 */
int web_parse_id(const char *s, int64_t *id_r);

/* a post's SHA-256 (held_posts.raw_sha256), in bytes and in hex digits:
 * forms and the API name the post they mean by it */
#define WEB_SHA_BYTES	32
#define WEB_SHA_HEX	(2 * WEB_SHA_BYTES)
/* 1 when s is a SHA-256 in 64 lower-case hex digits, else 0 */
int web_sha_hex_ok(const char *s);
/* the SHA-256 in 64 lower-case hex digits v into sha: 0, or -1 */
int web_sha_parse(const char *v, unsigned char sha[WEB_SHA_BYTES]);
/* sha in 64 lower-case hex digits, and a NUL, into hex */
void web_sha_hex(const unsigned char sha[WEB_SHA_BYTES],
    char hex[WEB_SHA_HEX + 1]);

/* one deciding token of a held post: a line "TOKEN PROB SPAM HAM" of
 * its clues (prob < 0 when the line is not of that form) */
struct web_clue {
	const char *tok;
	size_t toklen;
	double prob;
	long spam, ham;
};
/* the next clue from *p (advanced): 1, or 0 at the end */
int web_clue_next(const char **p, struct web_clue *c);

/* the post's own header fields (depth 0, unfolded, RFC 2047 decoded),
 * at most WEB_MAX_HEADERS, each handed to fn (name, value, its length);
 * 0, or -1 when memory ran out */
#define WEB_MAX_HEADERS	200
int web_headers(const unsigned char *raw, size_t len,
    void (*fn)(const char *name, const unsigned char *v, size_t n,
    void *ctx), void *ctx);

#endif
