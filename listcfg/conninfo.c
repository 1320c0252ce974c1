/*
 * conninfo.c - mask the passwords in a PostgreSQL connection string
 *
 * The text is the administrator's `database` setting, but it is read as
 * untrusted: the one promise is that no password ever comes out, however
 * malformed the input.  The two forms of libpq's "Connection Strings":
 *
 *	key = value ...	values unquoted (a backslash takes the next byte
 *			as it is) or in single quotes (with \' and \\);
 *			blanks may surround '=' (libpq skips them too, so
 *			"password= x" sets the password to x)
 *	postgresql://[user[:password]@][host[:port][,...]][/dbname][?k=v&...]
 *			(also postgres://)
 *
 * The values of the secret keywords (password, sslpassword and the
 * few others libpq never shows) and the password of a URI's user part
 * become ********.  Where the text stops following these forms,
 * everything from there on is masked: a key without '=', a keyword
 * libpq does not know (a typo like "passwrod" may hold the password),
 * an unterminated quote, an '@' outside the user part, a host or port
 * that is no host or port, a query parameter without exactly one '='.
 * A value that begins with a keyword and '=' (an empty value left
 * unquoted, "user= password=x": libpq reads the next setting as its
 * value) masks the rest too.  A dbname that is itself a connection
 * string is masked the same way, once (in a URI, one that holds a '='
 * or a URI once percent-decoded is masked whole).  Never logs, never
 * exits; NULL only when out of memory.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/xalloc.h"
#include "listcfg/conninfo.h"

static int mask_any(const char *s, struct buf *o, int depth);

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * libpq's keywords (PostgreSQL 15 to 18; "ssl" is the URI form of
 * sslmode=require), with the ones libpq itself never shows (its
 * dispchar "*") as secrets.  libpq refuses any other keyword; here an
 * unknown one (a typo such as "passwrod", or a keyword newer than this
 * list) masks the rest of the text.
 */
static const struct {
	const char *name;
	int secret;
} keywords[] = {
	{ "service", 0 }, { "user", 0 }, { "password", 1 }, { "passfile", 0 },
	{ "channel_binding", 0 }, { "connect_timeout", 0 }, { "dbname", 0 },
	{ "host", 0 }, { "hostaddr", 0 }, { "port", 0 },
	{ "client_encoding", 0 }, { "options", 0 }, { "application_name", 0 },
	{ "fallback_application_name", 0 }, { "keepalives", 0 },
	{ "keepalives_idle", 0 }, { "keepalives_interval", 0 },
	{ "keepalives_count", 0 }, { "tcp_user_timeout", 0 },
	{ "sslmode", 0 }, { "sslnegotiation", 0 }, { "sslcompression", 0 },
	{ "sslcert", 0 }, { "sslkey", 0 }, { "sslcertmode", 0 },
	{ "sslpassword", 1 }, { "sslkeylogfile", 0 }, { "sslrootcert", 0 },
	{ "sslcrl", 0 }, { "sslcrldir", 0 }, { "sslsni", 0 },
	{ "requirepeer", 0 }, { "require_auth", 0 },
	{ "ssl_min_protocol_version", 0 }, { "ssl_max_protocol_version", 0 },
	{ "min_protocol_version", 0 }, { "max_protocol_version", 0 },
	{ "gssencmode", 0 }, { "krbsrvname", 0 }, { "gsslib", 0 },
	{ "gssdelegation", 0 }, { "replication", 0 },
	{ "target_session_attrs", 0 }, { "load_balance_hosts", 0 },
	{ "scram_client_key", 1 }, { "scram_server_key", 1 },
	{ "oauth_issuer", 0 }, { "oauth_client_id", 0 },
	{ "oauth_client_secret", 1 }, { "oauth_scope", 0 }, { "ssl", 0 },
};

/* the keyword [k, e): 1 a secret, 0 any other known one, -1 unknown */
static int
key_kind(const char *k, const char *e)
{
	size_t i, n = (size_t)(e - k);

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i].name) == n &&
		    memcmp(keywords[i].name, k, n) == 0)
			return keywords[i].secret;
	return -1;
}

/* 1 when the unquoted value at p begins with a keyword and '='
 * ("password=x"): the next setting, read as this one's value */
static int
swallows_setting(const char *p)
{
	const char *e = p;

	while (*e != '\0' && *e != '=' && *e != '\\' &&
	    !is_space((unsigned char)*e))
		e++;
	return *e == '=' && e > p && key_kind(p, e) >= 0;
}

/* the length of a postgresql:// or postgres:// prefix (any case), or 0 */
static size_t
uri_prefix(const char *s)
{
	static const char *const pre[] = { "postgresql://", "postgres://" };
	size_t i, j, n;

	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		n = strlen(pre[i]);
		for (j = 0; j < n && lower((unsigned char)s[j]) == pre[i][j]; j++)
			;
		if (j == n)
			return n;
	}
	return 0;
}

/* the value of hex digit c, or -1 */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* append s as a libpq single-quoted value */
static int
add_quoted(struct buf *o, const unsigned char *s, size_t n)
{
	size_t i;

	if (buf_addc(o, '\'') < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((s[i] == '\'' || s[i] == '\\') && buf_addc(o, '\\') < 0)
			return -1;
		if (buf_addc(o, s[i]) < 0)
			return -1;
	}
	return buf_addc(o, '\'');
}

/* the key=value form; depth counts dbname expansions */
static int
kv_mask(const char *s, struct buf *o, int depth)
{
	struct buf v = BUF_INIT(strlen(s) + 1);
	struct buf sub = BUF_INIT(o->max);
	const char *p = s, *k, *ke;
	int first = 1, rc = -1, kind;

	for (;;) {
		while (is_space((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		k = p;
		while (*p != '\0' && *p != '=' && !is_space((unsigned char)*p))
			p++;
		ke = p;
		while (is_space((unsigned char)*p))
			p++;
		if (*p != '=' || (kind = key_kind(k, ke)) < 0)
			goto rest;
		for (p++; is_space((unsigned char)*p); p++)
			;
		/* a value that is itself a setting ("user= password=x",
		 * an empty value left unquoted): libpq takes it whole
		 * for this key, password and all (a dbname's is masked
		 * below as a connection string of its own) */
		if (*p != '\'' && !((size_t)(ke - k) == 6 &&
		    memcmp(k, "dbname", 6) == 0) && swallows_setting(p))
			goto rest;
		buf_reset(&v);
		if (*p == '\'') {
			for (p++; *p != '\''; p++) {
				if (*p == '\\' && p[1] != '\0')
					p++;
				if (*p == '\0')
					goto rest;	/* unterminated quote */
				if (buf_addc(&v, *p) < 0)
					goto out;
			}
			p++;
		} else {
			for (; *p != '\0' && !is_space((unsigned char)*p); p++) {
				if (*p == '\\' && *++p == '\0')
					break;	/* a lone '\' at the end */
				if (buf_addc(&v, *p) < 0)
					goto out;
			}
		}
		if ((!first && buf_addc(o, ' ') < 0) ||
		    buf_add(o, k, (size_t)(ke - k)) < 0 || buf_addc(o, '=') < 0)
			goto out;
		first = 0;
		if (kind == 1) {
			if (add_quoted(o, (const unsigned char *)CONNINFO_MASK,
			    strlen(CONNINFO_MASK)) < 0)
				goto out;
		} else if ((size_t)(ke - k) == 6 && memcmp(k, "dbname", 6) == 0 &&
		    (strchr(buf_str(&v), '=') != NULL ||
		    uri_prefix(buf_str(&v)) > 0)) {
			/* a connection string as the dbname: libpq may
			 * expand it; mask it as one, but only once */
			buf_reset(&sub);
			if (depth > 0) {
				if (buf_adds(&sub, CONNINFO_MASK) < 0)
					goto out;
			} else if (mask_any(buf_str(&v), &sub, depth + 1) < 0)
				goto out;
			if (add_quoted(o, sub.data ? sub.data :
			    (const unsigned char *)"", sub.len) < 0)
				goto out;
		} else if (add_quoted(o, v.data ? v.data :
		    (const unsigned char *)"", v.len) < 0)
			goto out;
	}
	rc = 0;
	goto out;
rest:
	/* from the first pair libpq would not read on, nothing is shown */
	rc = (!first && buf_addc(o, ' ') < 0) ||
	    buf_adds(o, CONNINFO_MASK) < 0 ? -1 : 0;
out:
	buf_free(&v);
	buf_free(&sub);
	return rc;
}

/* 1 if every byte of [p, e) is a letter, digit or one of extra */
static int
span_ok(const char *p, const char *e, const char *extra)
{
	for (; p < e; p++)
		if (!is_alnum((unsigned char)*p) && strchr(extra, *p) == NULL)
			return 0;
	return 1;
}

/* append [p, e) */
static int
add_span(struct buf *o, const char *p, const char *e)
{
	return buf_add(o, p, (size_t)(e - p));
}

/* 1 if the URI text [p, e), percent-decoded, is itself a connection
 * string (holds a '=' or starts postgresql://): a database name libpq
 * takes as it is, password and all (the key=value form masks such a
 * dbname too) */
static int
uri_nested(const char *p, const char *e)
{
	char d[16];
	size_t n = 0;
	int hi, lo;

	for (; p < e; p++) {
		if (*p == '%' && e - p >= 3 &&
		    (hi = hexval((unsigned char)p[1])) >= 0 &&
		    (lo = hexval((unsigned char)p[2])) >= 0) {
			if (hi * 16 + lo == '=')
				return 1;
			if (n + 1 < sizeof(d))
				d[n++] = (char)(hi * 16 + lo);
			p += 2;
			continue;
		}
		if (*p == '=')
			return 1;
		if (n + 1 < sizeof(d))
			d[n++] = *p;
	}
	d[n] = '\0';
	return uri_prefix(d) > 0;
}

/* the URI form; the scheme prefix is plen bytes */
static int
uri_mask(const char *s, size_t plen, struct buf *o)
{
	const char *a = s + plen, *ae, *at = NULL, *p, *e, *el, *eq;
	int kind;

	if (buf_add(o, s, plen) < 0)
		return -1;
	/* the authority ends at the first '/' or '?'; an '@' after it
	 * means a password may have held a raw '/' or '?', a second '@'
	 * in it one that held a raw '@' */
	ae = a + strcspn(a, "/?");
	if (strchr(ae, '@') != NULL)
		return buf_adds(o, CONNINFO_MASK);
	for (p = a; p < ae; p++)
		if (*p == '@') {
			if (at != NULL)
				return buf_adds(o, CONNINFO_MASK);
			at = p;
		}
	if (at != NULL) {
		e = memchr(a, ':', (size_t)(at - a));
		if (e == NULL)
			e = at;
		if (!span_ok(a, e, "-._~%!$&'()*+,;="))
			return buf_adds(o, CONNINFO_MASK);
		if (add_span(o, a, e) < 0 || (*e == ':' &&
		    (buf_addc(o, ':') < 0 || buf_adds(o, CONNINFO_MASK) < 0)) ||
		    buf_addc(o, '@') < 0)
			return -1;
		a = at + 1;
	}
	/* host[:port], comma separated; anything else masks that host on */
	for (p = a; p < ae; ) {
		el = p;
		if (*p == '[') {
			for (p++; p < ae && (is_alnum((unsigned char)*p) ||
			    strchr(":.%-_", *p) != NULL); p++)
				;
			if (p == ae || *p != ']')
				p = el;		/* no host: bad below */
			else
				p++;
		} else
			while (p < ae && (is_alnum((unsigned char)*p) ||
			    strchr(".-_~%", *p) != NULL))
				p++;
		if (p < ae && *p == ':')
			for (p++; p < ae && *p >= '0' && *p <= '9'; p++)
				;
		if (p < ae && *p == ',') {
			p++;
			continue;
		}
		if (p < ae) {
			if (add_span(o, a, el) < 0 ||
			    buf_adds(o, CONNINFO_MASK) < 0)
				return -1;
			return 0;
		}
	}
	if (add_span(o, a, ae) < 0)
		return -1;
	p = ae;
	if (*p == '/') {
		e = p + 1 + strcspn(p + 1, "?");
		if (buf_addc(o, '/') < 0)
			return -1;
		if (!span_ok(p + 1, e, "-._~%") || uri_nested(p + 1, e))
			return buf_adds(o, CONNINFO_MASK);
		if (add_span(o, p + 1, e) < 0)
			return -1;
		p = e;
	}
	if (*p != '?')
		return 0;
	if (buf_addc(o, '?') < 0)
		return -1;
	for (p++; *p != '\0'; ) {
		e = p + strcspn(p, "&");
		eq = memchr(p, '=', (size_t)(e - p));
		if (eq == NULL || (kind = key_kind(p, eq)) < 0 ||
		    memchr(eq + 1, '=', (size_t)(e - eq - 1)) != NULL)
			return buf_adds(o, CONNINFO_MASK);
		if (add_span(o, p, eq + 1) < 0)
			return -1;
		if (kind == 1 || (eq - p == 6 && memcmp(p, "dbname", 6) == 0 &&
		    uri_nested(eq + 1, e))) {
			if (buf_adds(o, CONNINFO_MASK) < 0)
				return -1;
		} else if (add_span(o, eq + 1, e) < 0)
			return -1;
		p = e;
		if (*p == '&') {
			if (buf_addc(o, '&') < 0)
				return -1;
			p++;
		}
	}
	return 0;
}

/* either form */
static int
mask_any(const char *s, struct buf *o, int depth)
{
	size_t plen = uri_prefix(s);

	return plen > 0 ? uri_mask(s, plen, o) : kv_mask(s, o, depth);
}

char *
conninfo_mask(const char *conninfo)
{
	struct buf o;
	size_t n = strlen(conninfo);
	char *r;

	/* each byte at most doubles (escapes), twice for a nested dbname,
	 * plus quotes and masks per pair */
	if (n > (SIZE_MAX - 256) / 16)
		return NULL;
	buf_init(&o, 16 * n + 256);
	if (mask_any(conninfo, &o, 0) < 0) {
		buf_free(&o);
		return NULL;
	}
	r = xstrdup(buf_str(&o));
	buf_free(&o);
	return r;
}
