/*
 * auth.c - who is asking: accounts from users.conf, HTTP Basic
 * credentials, login sessions, failed-login limits, CSRF and origin
 * checks
 *
 * Credentials are hostile input.  A name that could not be an account
 * fails without hashing; every other check costs one yescrypt hash, at
 * most WEB_HASHERS at once, also for a name that has no account (the
 * hash of a random password), so the time taken does not say which
 * names exist.  Failures are counted per account name and per client
 * address (an IPv6 address by its /64), each attempt taken before the
 * hash and given back when it succeeds (limit.c), so that requests sent
 * together get no more tries than requests sent one by one; past
 * WEB_FAILS_ACCOUNT or WEB_FAILS_ADDR in WEB_LIMIT_WINDOW seconds the
 * answer is 429 until the window ends, right password or not.  A
 * session belongs to the account's password at its login: a new
 * password (`listgate user add --replace`) ends it.  A script's Basic
 * credentials, once checked, are remembered for WEB_BASIC_CACHE_S as a
 * SHA-256 digest keyed by a random secret of this run (never the
 * password); using them neither counts as an attempt nor clears the
 * account's count.  users.conf is
 * reread when it changes: a deleted account's sessions stop working at
 * its next request.  A request's session cookies are hostile too (a
 * site under the same parent domain can put its own in the browser):
 * every lgsid is read, dead ones are ignored, and two that name live
 * sessions are refused and both sessions ended; a login ends those its
 * request names.  Nothing here logs a password, a hash or a session
 * id.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <nettle/sha2.h>

#include "gate/mail/b64.h"
#include "gate/util/log.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "gate/web/limit.h"
#include "gate/web/pwhash.h"
#include "gate/web/session.h"
#include "gate/web/webint.h"
#include "listcfg/cfgfile.h"
#include "listcfg/listcfg.h"
#include "listcfg/users.h"

/* a reading of users.conf with its Basic cache: NULL when out of memory
 * (u is then freed) */
static struct web_users *
users_wrap(struct users *u)
{
	struct web_users *w;

	if ((w = xcalloc(1, sizeof(*w))) == NULL ||
	    (w->basic = xcalloc(u->n + 1, sizeof(*w->basic))) == NULL) {
		xfree(w);
		users_free(u);
		return NULL;
	}
	w->u = *u;
	w->refs = 1;
	return w;
}

/* drop a reference (s->mu held) */
static void
users_unref(struct web_users *w)
{
	if (w != NULL && --w->refs == 0) {
		/* (before users_free, which sets u.n to 0) */
		explicit_bzero(w->basic, (w->u.n + 1) * sizeof(*w->basic));
		users_free(&w->u);
		xfree(w->basic);
		xfree(w);
	}
}

/* reread users.conf when it changed (s->mu held; a stat at every
 * request, so that a deleted account, or one whose lists shrank, has
 * no request answered as before after `listgate user` returned); a
 * file that does not load keeps the last good reading */
static void
users_refresh(struct web_srv *s)
{
	struct users u;
	struct web_users *w;
	struct stat st;
	char err[1024];
	size_t i;
	int missing, changed;

	if (stat(s->users_path, &st) < 0) {
		if (errno != ENOENT || s->users_missing)
			return;
		memset(&st, 0, sizeof(st));
		changed = 1;
	} else
		changed = s->users_missing || st.st_ino != s->users_st.st_ino ||
		    st.st_dev != s->users_st.st_dev ||
		    st.st_size != s->users_st.st_size ||
		    st.st_mtim.tv_sec != s->users_st.st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != s->users_st.st_mtim.tv_nsec ||
		    st.st_mode != s->users_st.st_mode ||
		    /* a chown (or an ACL) that lets us read a file we
		     * could not: only its ctime says so */
		    st.st_uid != s->users_st.st_uid ||
		    st.st_gid != s->users_st.st_gid ||
		    st.st_ctim.tv_sec != s->users_st.st_ctim.tv_sec ||
		    st.st_ctim.tv_nsec != s->users_st.st_ctim.tv_nsec;
	if (!changed && s->users != NULL)
		return;
	if (users_load(s->users_path, &u, &missing, err, sizeof(err)) < 0) {
		log_error("web: %s (the accounts read before stay)", err);
		s->users_st = st;
		return;
	}
	if ((w = users_wrap(&u)) == NULL) {
		log_error("web: out of memory reading %s", s->users_path);
		return;
	}
	users_unref(s->users);
	s->users = w;
	s->users_st = st;
	s->users_missing = missing;
	/* a name without an account costs the hash of the dummy, of our
	 * parameters: an account's hash of others (mkpasswd -R) takes
	 * another time, which says that the account exists */
	for (i = 0; i < w->u.n; i++)
		if (!pwhash_same_params(w->u.v[i].hash, s->dummy_hash))
			log_warn("web: user %s: its password hash has other "
			    "yescrypt parameters than listgate makes, so its "
			    "logins take another time than those of a name "
			    "without an account, which tells that it exists: "
			    "set its password again (%s user add %s --replace "
			    "--lists ...)", w->u.v[i].name, suggest_cmd(),
			    w->u.v[i].name);
	if (missing)
		log_warn("web: %s does not exist: nobody can log in (%s "
		    "user add)", s->users_path, suggest_cmd());
	else
		log_info("web: %zu account%s from %s", u.n, u.n == 1 ? "" : "s",
		    s->users_path);
}

/* the current accounts, referenced (release with users_put) */
static struct web_users *
users_get(struct web_srv *s)
{
	struct web_users *w;

	pthread_mutex_lock(&s->mu);
	users_refresh(s);
	if ((w = s->users) != NULL)
		w->refs++;
	pthread_mutex_unlock(&s->mu);
	return w;
}

static void
users_put(struct web_srv *s, struct web_users *w)
{
	pthread_mutex_lock(&s->mu);
	users_unref(w);
	pthread_mutex_unlock(&s->mu);
}

int
auth_init(struct web_srv *s, char *err, size_t errsz)
{
	char pw[65], e2[256];
	struct users u;
	int missing;

	if ((s->users_path = cfgfile_join(s->g->dir, USERS_FILE)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	/* a broken users.conf stops the start (later ones are logged) */
	if (users_load(s->users_path, &u, &missing, err, errsz) < 0)
		goto fail;
	users_free(&u);
	if (session_random_hex(pw, 32) < 0 ||
	    session_random_hex(s->key, 32) < 0) {
		snprintf(err, errsz, "no random bytes from the kernel");
		goto fail;
	}
	if (pwhash_make(pw, s->dummy_hash, sizeof(s->dummy_hash), e2,
	    sizeof(e2)) < 0) {
		snprintf(err, errsz, "%s", e2);
		goto fail;
	}
	explicit_bzero(pw, sizeof(pw));
	if ((s->sess = session_store_new(WEB_MAX_SESSIONS)) == NULL ||
	    (s->fails = limit_new(WEB_LIMIT_SLOTS, WEB_LIMIT_WINDOW)) ==
	    NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	pthread_mutex_lock(&s->mu);
	users_refresh(s);
	pthread_mutex_unlock(&s->mu);
	return 0;
fail:
	session_store_free(s->sess);
	s->sess = NULL;
	xfree(s->users_path);
	s->users_path = NULL;
	return -1;
}

void
auth_fini(struct web_srv *s)
{
	pthread_mutex_lock(&s->mu);
	users_unref(s->users);
	s->users = NULL;
	pthread_mutex_unlock(&s->mu);
	session_store_free(s->sess);
	limit_free(s->fails);
	xfree(s->users_path);
	explicit_bzero(s->key, sizeof(s->key));
}

void
auth_done(struct web_req *r)
{
	if (r->users != NULL)
		users_put(r->srv, r->users);
	r->users = NULL;
	r->user = NULL;
}

/* the keyed digest of checked Basic credentials */
static void
basic_digest(const struct web_srv *s, const struct users_entry *e,
    const char *pw, unsigned char out[32])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, strlen(s->key), (const uint8_t *)s->key);
	sha256_update(&c, strlen(e->name) + 1, (const uint8_t *)e->name);
	sha256_update(&c, strlen(e->hash) + 1, (const uint8_t *)e->hash);
	sha256_update(&c, strlen(pw), (const uint8_t *)pw);
	sha256_digest(&c, 32, out);
}

/*
 * pwhash_check, WEB_HASHERS at once, each check an attempt of the keys
 * akey and (when set) ukey taken once its turn comes, right before the
 * hash: so guesses sent all at once get no more tries than guesses sent
 * one by one (at most WEB_HASHERS attempts are ever in flight, and a
 * burst of good logins is not held up by its own attempts).  A right
 * password gives the address's attempt back and clears the account's
 * count.  1 right, 0 wrong, -1 error, -2 limited (*retry_r set).
 */
static int
check_hash(struct web_srv *s, const char *pw, const char *hash,
    const char *akey, const char *ukey, long *retry_r)
{
	time_t now;
	long wa, wu = 0;
	int ok;

	pthread_mutex_lock(&s->hash_mu);
	while (s->nhashing >= WEB_HASHERS)
		pthread_cond_wait(&s->hash_cv, &s->hash_mu);
	s->nhashing++;
	pthread_mutex_unlock(&s->hash_mu);
	now = time(NULL);
	if ((wa = limit_take(s->fails, akey, WEB_FAILS_ADDR, now)) > 0 ||
	    (ukey != NULL && (wu = limit_take(s->fails, ukey,
	    WEB_FAILS_ACCOUNT, now)) > 0)) {
		if (wa == 0)
			limit_give_back(s->fails, akey);
		*retry_r = wa > 0 ? wa : wu;
		ok = -2;
	} else {
		ok = pwhash_check(pw, hash);
		if (ok != 0) {
			/* right, or no check at all: nothing is held
			 * against the address */
			limit_give_back(s->fails, akey);
			if (ukey != NULL && ok > 0)
				limit_clear(s->fails, ukey);
			else if (ukey != NULL)
				limit_give_back(s->fails, ukey);
		}
	}
	pthread_mutex_lock(&s->hash_mu);
	s->nhashing--;
	pthread_cond_signal(&s->hash_cv);
	pthread_mutex_unlock(&s->hash_mu);
	return ok;
}

/* the key that counts a client address's failed logins: an IPv6
 * address stands for its /64 (a host has a whole one to itself) */
static void
addr_key(const char *addr, char *out, size_t outsz)
{
	static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };
	unsigned char a[16];
	char t[INET6_ADDRSTRLEN];

	if (strchr(addr, ':') != NULL && inet_pton(AF_INET6, addr, a) == 1 &&
	    memcmp(a, v4, sizeof(v4)) != 0) {
		memset(a + 8, 0, 8);
		if (inet_ntop(AF_INET6, a, t, sizeof(t)) != NULL) {
			snprintf(out, outsz, "a:%s/64", t);
			return;
		}
	}
	snprintf(out, outsz, "a:%s", addr);
}

/* what ties a session to the account's password (its hash's digest) */
static void
auth_account_tag(const struct users_entry *e,
    unsigned char tag[SESSION_TAG])
{
	struct sha256_ctx c;
	unsigned char d[SHA256_DIGEST_SIZE];

	sha256_init(&c);
	sha256_update(&c, strlen(e->hash), (const uint8_t *)e->hash);
	sha256_digest(&c, sizeof(d), d);
	memcpy(tag, d, SESSION_TAG);
}

/*
 * Check name and pw (limits first): AUTH_OK with r->users and r->user
 * set, AUTH_BAD, AUTH_LIMITED (r->retry_after) or AUTH_ERROR.  cache:
 * a Basic check, which may use and fill the digest cache.
 */
static enum auth_result
check_password(struct web_req *r, const char *name, const char *pw,
    int cache)
{
	struct web_srv *s = r->srv;
	struct web_users *w;
	const struct users_entry *e;
	unsigned char dg[32];
	char akey[LIMIT_MAX_KEY + 1], ukey[LIMIT_MAX_KEY + 1];
	time_t now = time(NULL);
	long wa, wu;
	size_t i;
	int ok, named = users_name_ok(name);

	addr_key(r->addr, akey, sizeof(akey));
	snprintf(ukey, sizeof(ukey), "u:%s", named ? name : "?");
	wa = limit_wait(s->fails, akey, WEB_FAILS_ADDR, now);
	wu = named ? limit_wait(s->fails, ukey, WEB_FAILS_ACCOUNT, now) : 0;
	if (wa > 0 || wu > 0) {
		r->retry_after = wa > wu ? wa : wu;
		return AUTH_LIMITED;
	}
	if ((w = users_get(s)) == NULL)
		return AUTH_ERROR;
	e = named ? users_find(&w->u, name) : NULL;
	if (e != NULL && cache) {
		i = (size_t)(e - w->u.v);
		basic_digest(s, e, pw, dg);
		pthread_mutex_lock(&s->mu);
		ok = w->basic[i].at != 0 && now - w->basic[i].at <
		    WEB_BASIC_CACHE_S && pwhash_equal(w->basic[i].digest, dg,
		    sizeof(dg));
		pthread_mutex_unlock(&s->mu);
		if (ok) {
			/* the right password, checked before: no guess (and
			 * no reset of the account's count, which only a
			 * hash that succeeds clears) */
			r->users = w;
			r->user = e;
			return AUTH_OK;
		}
	}
	/* an unknown or malformed name costs a hash too (and counts as a
	 * failure whatever the hash says) */
	ok = check_hash(s, pw, e != NULL ? e->hash : s->dummy_hash, akey,
	    named ? ukey : NULL, &r->retry_after);
	if (ok == -2) {
		users_put(s, w);
		return AUTH_LIMITED;
	}
	if (ok < 0) {
		users_put(s, w);
		return AUTH_ERROR;
	}
	if (!ok || e == NULL) {
		users_put(s, w);
		return AUTH_BAD;	/* the attempts stay counted */
	}
	if (cache) {
		i = (size_t)(e - w->u.v);
		pthread_mutex_lock(&s->mu);
		memcpy(w->basic[i].digest, dg, sizeof(dg));
		w->basic[i].at = now;
		pthread_mutex_unlock(&s->mu);
	}
	r->users = w;
	r->user = e;
	return AUTH_OK;
}

/* "Basic base64(name:password)": AUTH_NONE when the header is no Basic
 * credentials at all */
static enum auth_result
auth_basic(struct web_req *r, const char *h)
{
	struct buf b = BUF_INIT(PWHASH_MAX_PASSWORD + USERS_MAX_NAME + 8);
	char *colon;
	enum auth_result res;
	size_t n;

	if (strncasecmp(h, "Basic ", 6) != 0)
		return AUTH_NONE;
	h += 6;
	while (*h == ' ')
		h++;
	n = strlen(h);
	if (n == 0 || n > (PWHASH_MAX_PASSWORD + USERS_MAX_NAME + 8) / 3 * 4 +
	    4 || b64_decode((const unsigned char *)h, n, &b) != 0 ||
	    b.len == 0 || memchr(b.data, '\0', b.len) != NULL ||
	    (colon = strchr((char *)b.data, ':')) == NULL) {
		buf_free(&b);
		return AUTH_BAD;
	}
	*colon = '\0';
	res = check_password(r, (char *)b.data, colon + 1, 1);
	explicit_bzero(b.data, b.len);
	buf_free(&b);
	return res;
}

/* the session ids of a request's lgsid cookies (every Cookie line) */
struct sid_cands {
	const char *name;	/* WEB_COOKIE, or WEB_COOKIE_TLS */
	char ids[WEB_MAX_SID_COOKIES][SESSION_HEX];
	size_t n;
	int over;		/* more than WEB_MAX_SID_COOKIES */
};

/* the session cookie's name for this request */
static const char *
cookie_name(const struct web_req *r)
{
	return r->tls ? WEB_COOKIE_TLS : WEB_COOKIE;
}

/* web_header_lines: one Cookie line */
static void
cookie_line(const char *value, void *ctx)
{
	struct sid_cands *c = ctx;

	if (!c->over && session_cookie_ids(value, c->name, c->ids,
	    WEB_MAX_SID_COOKIES, &c->n) < 0)
		c->over = 1;
}

enum auth_result
auth_request(struct web_req *r, int basic)
{
	struct web_users *w;
	struct sid_cands c;
	struct session_view v;
	const struct users_entry *e;
	const char *h;
	unsigned char tag[SESSION_TAG];
	size_t i, live = 0;
	enum auth_result res = AUTH_OK;

	/* Basic credentials decide alone (a wrong password is refused
	 * whatever cookie comes with it); another scheme (a proxy's
	 * "Bearer" in front of the page) is not ours: the cookie decides */
	if (basic && (h = web_header(r, "Authorization")) != NULL &&
	    (res = auth_basic(r, h)) != AUTH_NONE)
		return res;
	res = AUTH_OK;
	memset(&c, 0, sizeof(c));
	c.name = cookie_name(r);
	web_header_lines(r, "Cookie", cookie_line, &c);
	if (c.over) {
		res = AUTH_AMBIGUOUS;
		goto end_all;
	}
	if (c.n == 0) {
		res = AUTH_NONE;
		goto out;
	}
	/* the account must still exist, with the password it logged in
	 * with */
	if ((w = users_get(r->srv)) == NULL) {
		res = AUTH_ERROR;
		goto out;
	}
	for (i = 0; i < c.n; i++) {
		if (!session_find(r->srv->sess, c.ids[i], time(NULL), &v))
			continue;
		if ((e = users_find(&w->u, v.user)) != NULL)
			auth_account_tag(e, tag);
		if (e == NULL || !pwhash_equal(tag, v.tag, SESSION_TAG)) {
			session_end(r->srv->sess, c.ids[i]);
			continue;
		}
		if (live++ == 0) {
			r->sv = v;
			r->user = e;
			snprintf(r->sid, sizeof(r->sid), "%s", c.ids[i]);
		}
	}
	explicit_bzero(&v, sizeof(v));
	if (live != 1) {
		/* none; or two live sessions (a cookie tossed in by a site
		 * under a parent domain, say): neither is taken */
		r->user = NULL;
		explicit_bzero(&r->sv, sizeof(r->sv));
		explicit_bzero(r->sid, sizeof(r->sid));
		users_put(r->srv, w);
		if (live == 0) {
			res = AUTH_NONE;
			goto out;
		}
		res = AUTH_AMBIGUOUS;
		goto end_all;
	}
	r->users = w;
	r->by_session = 1;
	goto out;
end_all:
	/* and every session named ends: the browser's next request (the
	 * login page, whose path a cookie tossed for a longer one may not
	 * reach) names none, and the login that follows gets out of it;
	 * nobody works on in a session of another's choosing */
	for (i = 0; i < c.n; i++)
		session_end(r->srv->sess, c.ids[i]);
out:
	explicit_bzero(&c, sizeof(c));
	return res;
}

/* the cookie that carries sid (or ends it when sid is NULL) */
static void
set_cookie(struct web_req *r, const char *sid)
{
	snprintf(r->cookie, sizeof(r->cookie), "%s=%s; Path=/; HttpOnly; "
	    "SameSite=Strict%s%s", cookie_name(r), sid ? sid : "",
	    sid ? "" : "; Max-Age=0", r->tls ? "; Secure" : "");
}

enum auth_result
auth_login(struct web_req *r, const char *name, const char *pw)
{
	enum auth_result res;
	struct sid_cands c;
	char sid[SESSION_HEX];
	unsigned char tag[SESSION_TAG];
	size_t i;

	if ((res = check_password(r, name, pw, 0)) != AUTH_OK)
		return res;
	/* the sessions the browser had end: a login starts afresh, and a
	 * session cookie another site under the same domain put in the
	 * browser (cookie tossing) dies instead of making every request
	 * after the login ambiguous */
	memset(&c, 0, sizeof(c));
	c.name = cookie_name(r);
	web_header_lines(r, "Cookie", cookie_line, &c);
	for (i = 0; i < c.n; i++)
		session_end(r->srv->sess, c.ids[i]);
	explicit_bzero(&c, sizeof(c));
	auth_account_tag(r->user, tag);
	if (session_start(r->srv->sess, r->user->name, tag, time(NULL),
	    sid) < 0)
		return AUTH_ERROR;
	set_cookie(r, sid);
	explicit_bzero(sid, sizeof(sid));
	return AUTH_OK;
}

void
auth_logout(struct web_req *r)
{
	if (r->by_session)
		session_end(r->srv->sess, r->sid);
	set_cookie(r, NULL);
}

int
auth_csrf_ok(struct web_req *r, const char *token)
{
	return r->by_session && session_csrf_ok(r->sv.csrf, token);
}

int
auth_same_origin(struct web_req *r)
{
	const char *site = web_header(r, "Sec-Fetch-Site");
	const char *origin = web_header(r, "Origin");
	const char *host = web_header(r, "Host"), *p;

	if (site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0)
		return 0;
	if (origin == NULL)
		return 1;
	/* "scheme://host[:port]" against Host (behind a proxy: the Host
	 * the proxy passed on) */
	if ((p = strstr(origin, "://")) == NULL || host == NULL)
		return 0;
	/* behind a proxy that says https, the pages are https: an http
	 * page of the same host (served by whoever is on the network
	 * path: port 80 is plain) is another origin */
	if (r->tls && strncasecmp(origin, "https://", 8) != 0)
		return 0;
	return strcasecmp(p + 3, host) == 0;
}

int
auth_may(struct web_req *r, const char *list)
{
	return r->user != NULL && users_may(r->user, list);
}

void
auth_flash(struct web_req *r, const char *msg)
{
	if (r->by_session)
		session_flash(r->srv->sess, r->sid, msg);
}
