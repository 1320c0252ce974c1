/*
 * cookie.c - keyed cookies for moderation by mail: make, parse, check
 *
 * Trusts only the secret (loaded with cookie_load_key from a file only
 * its owner may read).  Addresses are hostile: cookie_parse reads at
 * most COOKIE_MAX_ADDR bytes, allocates nothing and refuses anything
 * that is not exactly an action address.  The MACs are GNU Nettle's
 * HMAC-SHA256, compared with memeql_sec (constant time).  Nothing here
 * logs or exits.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "gate/moderate/cookie.h"
#include "gate/util/lglimits.h"
#include "gate/util/suggest.h"

/* listcfg refuses a moderation_address whose action addresses could
 * outgrow what cookie_parse takes: its sum must be this file's */
_Static_assert(LG_MAX_ACTION_PART == 1 + sizeof("approve") - 1 + 1 + 19 +
    1 + COOKIE_CHARS && sizeof("discard") == sizeof("approve") &&
    sizeof("reject") < sizeof("approve") &&
    LG_MAX_ADDR_BYTES == COOKIE_MAX_ADDR,
    "LG_MAX_ACTION_PART is not the action part of an action address");

static const char *const action_names[] = { "approve", "reject",
    "discard" };
/* the delimiters an action address may use (listcfg's choices) */
static const char delims[] = "+-=_.";
/* base 32 in lower-case letters and digits */
static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
/* what the MACs are over: a version word first, so a later format never
 * collides with these; the first MAC is the whole of a cookie made
 * before posts were bound (its last COOKIE_BIND_CHARS characters are
 * still taken in place of the second's) */
static const char mac_tag[] = "listgate-moderate-1";
static const char bind_tag[] = "listgate-moderate-post-1";
/* what a message's seal is over */
static const char seal_tag[] = "listgate-notice-1";

const char *
cookie_action_name(enum cookie_action action)
{
	if ((unsigned)action < sizeof(action_names) / sizeof(action_names[0]))
		return action_names[action];
	return "?";
}

const char *
cookie_why(int code)
{
	switch (code) {
	case COOKIE_OK:
		return "valid";
	case COOKIE_ESYNTAX:
		return "not an action address (want LOCAL+ACTION-ID-COOKIE@DOMAIN)";
	case COOKIE_EACTION:
		return "unknown action (approve, reject or discard)";
	case COOKIE_EID:
		return "malformed post number";
	case COOKIE_EFORM:
		return "malformed cookie";
	case COOKIE_EMISMATCH:
		return "the cookie does not match this list, post and action "
		    "(changed, or made for another)";
	case COOKIE_EEXPIRED:
		return "the cookie has expired";
	case COOKIE_EPOST:
		return "the cookie does not match the post that has this "
		    "number now and a moderator of the list (changed, made "
		    "for an earlier post under the same number, or sent to an "
		    "address no longer among the moderators)";
	}
	return "refused";
}

/* ASCII lower case, whatever the locale */
static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* the value of a base-36 digit (lower case), or -1 */
static int
b36(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	return -1;
}

int
cookie_parse(const char *addr, size_t n, struct cookie_addr *a)
{
	const char *p = addr, *at, *e, *dash, *c, *ids, *acts;
	size_t i, len, cl;
	uint64_t v;
	int act = -1;

	memset(a, 0, sizeof(*a));
	if (addr == NULL)
		return COOKIE_ESYNTAX;
	if (n >= 2 && p[0] == '<' && p[n - 1] == '>') {
		p++;
		n -= 2;
	}
	if (n == 0 || n > COOKIE_MAX_ADDR)
		return COOKIE_ESYNTAX;
	/* no NUL, blank, control or DEL anywhere, and no angle bracket
	 * past the one pair taken off ("<<a-...@x>>" would keep one in
	 * the local part, and the address rebuilt from it would parse
	 * to other parts) */
	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f ||
		    p[i] == '<' || p[i] == '>')
			return COOKIE_ESYNTAX;
	/* the last '@' ends the local part */
	for (at = NULL, i = n; i > 0; i--)
		if (p[i - 1] == '@') {
			at = p + i - 1;
			break;
		}
	if (at == NULL || at == p || (size_t)(at - p) == n - 1)
		return COOKIE_ESYNTAX;
	len = n - (size_t)(at - p) - 1;
	for (i = 0; i < len; i++)
		a->domain[i] = (char)lower((unsigned char)at[1 + i]);
	a->domain[len] = '\0';
	if (memchr(a->domain, '@', len) != NULL)
		return COOKIE_ESYNTAX;

	/* COOKIE: after the last '-' of the local part */
	e = at;
	for (dash = NULL, c = e; c > p; c--)
		if (c[-1] == '-') {
			dash = c - 1;
			break;
		}
	if (dash == NULL)
		return COOKIE_ESYNTAX;
	cl = (size_t)(e - dash - 1);
	if (cl != COOKIE_CHARS)
		return COOKIE_EFORM;
	for (i = 0; i < cl; i++) {
		int ch = lower((unsigned char)dash[1 + i]);

		if (b36(ch) < 0)
			return COOKIE_EFORM;
		a->cookie[i] = (char)ch;
	}
	a->cookie[cl] = '\0';
	for (v = 0, i = 0; i < COOKIE_EXPIRY_CHARS; i++)
		v = v * 36 + (uint64_t)b36((unsigned char)a->cookie[i]);
	a->expiry = (time_t)v;

	/* ID: the digits before it */
	e = dash;
	for (ids = e; ids > p && ids[-1] >= '0' && ids[-1] <= '9'; ids--)
		;
	if (ids == e || ids == p || ids[-1] != '-')
		return (ids == e && e > p && e[-1] != '-') ? COOKIE_EID :
		    COOKIE_ESYNTAX;
	if ((size_t)(e - ids) > 19 || ids[0] == '0')
		return COOKIE_EID;
	for (v = 0, c = ids; c < e; c++)
		v = v * 10 + (uint64_t)(*c - '0');
	if (v == 0 || v > (uint64_t)INT64_MAX)
		return COOKIE_EID;
	a->id = (int64_t)v;

	/* ACTION: the letters before that, after the delimiter */
	e = ids - 1;
	for (acts = e; acts > p && ((acts[-1] >= 'a' && acts[-1] <= 'z') ||
	    (acts[-1] >= 'A' && acts[-1] <= 'Z')); acts--)
		;
	if (acts == p || strchr(delims, acts[-1]) == NULL || acts[-1] == '\0')
		return COOKIE_ESYNTAX;
	for (i = 0; i < sizeof(action_names) / sizeof(action_names[0]); i++)
		if ((size_t)(e - acts) == strlen(action_names[i]) &&
		    strncasecmp(acts, action_names[i], (size_t)(e - acts)) == 0)
			act = (int)i;
	if (act < 0)
		return COOKIE_EACTION;
	a->action = (enum cookie_action)act;
	a->delim = (unsigned char)acts[-1];
	/* LOCAL: what is left, not empty */
	len = (size_t)(acts - 1 - p);
	if (len == 0)
		return COOKIE_ESYNTAX;
	memcpy(a->local, p, len);
	a->local[len] = '\0';
	return COOKIE_OK;
}

/* n characters (at most COOKIE_MAC_CHARS) of the MAC under tag for
 * list, id, action, the expiry's characters and, when sha is set, a
 * post's SHA-256 and the moderator mod (ASCII case folded) */
static void
mac_chars(const struct cookie_key *key, const char *tag, const char *list,
    int64_t id, enum cookie_action action, const char *exp,
    const unsigned char *sha, const char *mod, char *out, size_t n)
{
	struct hmac_sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];
	char idbuf[32];
	unsigned acc = 0, nbits = 0;
	size_t i, o = 0;
	const char *an = cookie_action_name(action);

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	hmac_sha256_set_key(&h, key->len, key->k);
	/* each field with its NUL: no two inputs share a byte string */
	hmac_sha256_update(&h, strlen(tag) + 1, (const uint8_t *)tag);
	hmac_sha256_update(&h, strlen(list) + 1, (const uint8_t *)list);
	hmac_sha256_update(&h, strlen(idbuf) + 1, (const uint8_t *)idbuf);
	hmac_sha256_update(&h, strlen(an) + 1, (const uint8_t *)an);
	hmac_sha256_update(&h, COOKIE_EXPIRY_CHARS, (const uint8_t *)exp);
	if (sha != NULL) {
		uint8_t c;
		size_t k;

		hmac_sha256_update(&h, SHA256_DIGEST_SIZE, sha);
		/* the address as listcfg_is_moderator compares it */
		for (k = 0; mod != NULL && mod[k] != '\0'; k++) {
			c = (uint8_t)lower((unsigned char)mod[k]);
			hmac_sha256_update(&h, 1, &c);
		}
		hmac_sha256_update(&h, 1, (const uint8_t *)"");
	}
	hmac_sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < sizeof(d) && o < n; i++) {
		acc = (acc << 8) | d[i];
		nbits += 8;
		while (nbits >= 5 && o < n) {
			out[o++] = b32[(acc >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
}

void
cookie_make(const struct cookie_key *key, const char *list, int64_t id,
    enum cookie_action action, time_t expiry,
    const unsigned char post_sha256[32], const char *moderator, char *out)
{
	static const char b36d[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	uint64_t v = expiry > 0 ? (uint64_t)expiry : 0;
	int i;

	for (i = COOKIE_EXPIRY_CHARS - 1; i >= 0; i--) {
		out[i] = b36d[v % 36];
		v /= 36;
	}
	mac_chars(key, mac_tag, list, id, action, out, NULL, NULL,
	    out + COOKIE_EXPIRY_CHARS, COOKIE_MAC_CHARS - COOKIE_BIND_CHARS);
	mac_chars(key, bind_tag, list, id, action, out, post_sha256, moderator,
	    out + COOKIE_CHARS - COOKIE_BIND_CHARS, COOKIE_BIND_CHARS);
	out[COOKIE_CHARS] = '\0';
}

int
cookie_check(const struct cookie_key *key, const char *list,
    const struct cookie_addr *a, const unsigned char *post_sha256,
    const char *const *moderators, int *which_r, time_t now)
{
	char want[COOKIE_MAC_CHARS], bind[COOKIE_BIND_CHARS];
	const char *tail = a->cookie + COOKIE_CHARS - COOKIE_BIND_CHARS;
	int i, which = -1, old;

	if (which_r != NULL)
		*which_r = -1;
	mac_chars(key, mac_tag, list, a->id, a->action, a->cookie, NULL, NULL,
	    want, COOKIE_MAC_CHARS);
	if (!memeql_sec(want, a->cookie + COOKIE_EXPIRY_CHARS,
	    COOKIE_MAC_CHARS - COOKIE_BIND_CHARS))
		return COOKIE_EMISMATCH;
	if (post_sha256 != NULL) {
		/* every moderator is tried, the first match kept */
		for (i = 0; moderators != NULL && moderators[i] != NULL; i++) {
			mac_chars(key, bind_tag, list, a->id, a->action,
			    a->cookie, post_sha256, moderators[i], bind,
			    COOKIE_BIND_CHARS);
			if (memeql_sec(bind, tail, COOKIE_BIND_CHARS) &&
			    which < 0)
				which = i;
		}
		/* a cookie from before posts were bound: the first MAC whole */
		old = memeql_sec(want + COOKIE_MAC_CHARS - COOKIE_BIND_CHARS,
		    tail, COOKIE_BIND_CHARS);
		if (which < 0 && !old)
			return COOKIE_EPOST;
		if (which_r != NULL)
			*which_r = which;
	}
	if (a->expiry < now)
		return COOKIE_EEXPIRED;
	return COOKIE_OK;
}

void
cookie_seal(const struct cookie_key *key, const char *list,
    const char *msgid, char *out)
{
	struct hmac_sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];
	unsigned acc = 0, nbits = 0;
	size_t i, o = 0;

	hmac_sha256_set_key(&h, key->len, key->k);
	hmac_sha256_update(&h, strlen(seal_tag) + 1, (const uint8_t *)seal_tag);
	hmac_sha256_update(&h, strlen(list) + 1, (const uint8_t *)list);
	hmac_sha256_update(&h, strlen(msgid) + 1, (const uint8_t *)msgid);
	hmac_sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < sizeof(d) && o < COOKIE_SEAL_CHARS; i++) {
		acc = (acc << 8) | d[i];
		nbits += 8;
		while (nbits >= 5 && o < COOKIE_SEAL_CHARS) {
			out[o++] = b32[(acc >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	out[o] = '\0';
	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
}

int
cookie_seal_ok(const struct cookie_key *key, const char *list,
    const char *msgid, const char *seal, size_t n)
{
	char want[COOKIE_SEAL_CHARS + 1];
	int ok;

	if (key == NULL || key->len == 0 || n != COOKIE_SEAL_CHARS)
		return 0;
	cookie_seal(key, list, msgid, want);
	ok = memeql_sec(want, seal, COOKIE_SEAL_CHARS);
	memset(want, 0, sizeof(want));
	return ok != 0;
}

int
cookie_address(const char *modaddr, int delim, enum cookie_action action,
    int64_t id, const char *cookie, char *out, size_t outsz)
{
	const char *at = strrchr(modaddr, '@');
	int n;

	if (at == NULL || at == modaddr)
		return -1;
	n = snprintf(out, outsz, "%.*s%c%s-%lld-%s%s", (int)(at - modaddr),
	    modaddr, delim, cookie_action_name(action), (long long)id, cookie,
	    at);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* a secret has at least this many different byte values (the 64 hex
 * digits `listgate init` writes have about 16) */
#define KEY_MIN_VALUES	8

/* 1 when the len bytes of k take fewer than KEY_MIN_VALUES values */
static int
few_values(const unsigned char *k, size_t len)
{
	unsigned char seen[256];
	size_t i;
	unsigned n = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < len && n < KEY_MIN_VALUES; i++)
		if (!seen[k[i]]) {
			seen[k[i]] = 1;
			n++;
		}
	return n < KEY_MIN_VALUES;
}

int
cookie_load_key(const char *path, struct cookie_key *key, char *err,
    size_t errsz)
{
	struct stat st;
	ssize_t r;
	size_t len = 0;
	int fd;

	key->len = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = errno;

		snprintf(err, errsz, "secret_file %s: %s%s%s%s", path,
		    strerror(e), e == ENOENT ? " (run `" : "",
		    e == ENOENT ? suggest_cmd() : "",
		    e == ENOENT ? " init` to create it)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "secret_file %s: not a regular file", path);
		goto fail;
	}
	if (st.st_mode & 077) {
		snprintf(err, errsz, "secret_file %s: mode %03o lets others "
		    "read it (chmod 600 %s)", path,
		    (unsigned)(st.st_mode & 0777), path);
		goto fail;
	}
	while (len < sizeof(key->k)) {
		r = read(fd, key->k + len, sizeof(key->k) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errsz, "secret_file %s: %s", path,
			    strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len == sizeof(key->k)) {
		char extra;

		if (read(fd, &extra, 1) == 1) {
			snprintf(err, errsz, "secret_file %s: larger than %u "
			    "bytes", path, (unsigned)COOKIE_MAX_KEY);
			goto fail;
		}
	}
	if (len > 0 && key->k[len - 1] == '\n')
		len--;
	if (len < COOKIE_MIN_KEY) {
		snprintf(err, errsz, "secret_file %s: %zu bytes, want at least "
		    "%u", path, len, (unsigned)COOKIE_MIN_KEY);
		goto fail;
	}
	/* a damaged secret (truncated to zeros, one byte over and over)
	 * would make cookies anyone can compute */
	if (few_values(key->k, len)) {
		snprintf(err, errsz, "secret_file %s: not a secret (fewer than "
		    "%u different bytes): make a new one (remove it, then run "
		    "`%s init`; addresses in notices sent so far stop "
		    "working)", path, (unsigned)KEY_MIN_VALUES, suggest_cmd());
		goto fail;
	}
	key->len = len;
	close(fd);
	return 0;
fail:
	memset(key->k, 0, sizeof(key->k));
	close(fd);
	return -1;
}
