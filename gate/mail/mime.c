/*
 * mime.c - MIME header values: the media type of a Content-Type, and
 * parameters (RFC 2045 quoting and comments, RFC 2231 charsets,
 * languages and continuations)
 *
 * Header values are hostile: every scan is bounded by the value and
 * linear in it.  A parameter is found in three steps: scan the value
 * for its spans, join RFC 2231 segments, decode to UTF-8.  A value that
 * does not fit the output is cut between characters and reported (2).
 * Fails (-1) only when memory runs out.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "gate/mail/charset.h"
#include "gate/mail/mailint.h"
#include "gate/mail/mime.h"
#include "gate/mail/rfc2047.h"
#include "gate/util/buf.h"
#include "gate/util/utf8.h"

/* RFC 2231 continuation segments assembled (name*0 .. name*63) */
#define PARAM_SEGS	64

/* skip white space and (nested) comments */
static size_t
skip_cfws(const unsigned char *v, size_t n, size_t p)
{
	unsigned depth;

	for (;;) {
		while (p < n && is_wsp(v[p]))
			p++;
		if (p >= n || v[p] != '(')
			return p;
		depth = 0;
		for (; p < n; p++) {
			if (v[p] == '\\' && p + 1 < n)
				p++;
			else if (v[p] == '(')
				depth++;
			else if (v[p] == ')' && --depth == 0) {
				p++;
				break;
			}
		}
	}
}

/* an RFC 2045 token character */
static int
is_tchar(int c)
{
	return c > ' ' && c < 127 && !strchr("()<>@,;:\\\"/[]?=", c);
}

/* the lower-case type/subtype of a Content-Type value */
int
mime_type(const unsigned char *v, size_t n, char *type, size_t typesz)
{
	size_t p, k = 0;
	int slash = 0, sub = 0;

	type[0] = 0;
	p = skip_cfws(v, n, 0);
	while (p < n && k + 1 < typesz) {
		int c = v[p];

		if (c == '/' && !slash && k > 0) {
			slash = 1;
		} else if (is_tchar(c)) {
			if (slash)
				sub = 1;
		} else if (slash && (is_wsp(c) || c == '(')) {
			/* "text / plain": allow CFWS around the slash */
			size_t q = skip_cfws(v, n, p);

			if (!sub && q < n && is_tchar(v[q])) {
				p = q;
				continue;
			}
			break;
		} else if (!slash && (is_wsp(c) || c == '(')) {
			size_t q = skip_cfws(v, n, p);

			if (q < n && v[q] == '/') {
				p = q;
				continue;
			}
			break;
		} else
			break;
		if (c >= 'A' && c <= 'Z')
			c = c - 'A' + 'a';
		type[k++] = (char)c;
		p++;
	}
	type[k] = 0;
	if (!slash || !sub || (p < n && k + 1 >= typesz)) {
		type[0] = 0;
		return 0;
	}
	return 1;
}

struct pspan {
	const unsigned char *v;
	size_t len;
	int set, ext;
};

/* append a value, dropping quotes and quoting backslashes: 0 or -1 */
static int
unquote(const unsigned char *v, size_t n, struct buf *out)
{
	size_t i = 0;

	if (n > 0 && v[0] == '"') {
		i = 1;
		if (n > 1 && v[n - 1] == '"')
			n--;
	}
	for (; i < n; i++) {
		if (v[i] == '\\' && i + 1 < n)
			i++;
		if (buf_addc(out, v[i]) < 0)
			return -1;
	}
	return 0;
}

/* append an RFC 2231 %XX-encoded value (from an unquoted copy): 0 or -1 */
static int
pct_decode(const unsigned char *v, size_t n, struct buf *out)
{
	size_t i;
	int h, l;

	for (i = 0; i < n; i++) {
		int c = v[i];

		if (c == '%' && i + 2 < n && (h = hexval(v[i + 1])) >= 0 &&
		    (l = hexval(v[i + 2])) >= 0) {
			c = h << 4 | l;
			i += 2;
		}
		if (buf_addc(out, c) < 0)
			return -1;
	}
	return 0;
}

/* compare a parameter name with want; set *seg (-1: plain) and *ext */
static int
pname_match(const unsigned char *a, size_t alen, const char *want,
    int *seg, int *ext)
{
	size_t wl = strlen(want), p;
	int s = 0;

	if (alen < wl || strncasecmp((const char *)a, want, wl) != 0)
		return 0;
	*seg = -1;
	*ext = 0;
	if (alen == wl)
		return 1;
	if (a[wl] != '*')
		return 0;
	p = wl + 1;
	if (p == alen) {
		*ext = 1;
		return 1;
	}
	if (!(a[p] >= '0' && a[p] <= '9'))
		return 0;
	while (p < alen && a[p] >= '0' && a[p] <= '9') {
		if (s >= 1000)
			return 0;
		s = s * 10 + (a[p] - '0');
		p++;
	}
	if (p < alen && a[p] == '*' && p + 1 == alen)
		*ext = 1;
	else if (p != alen)
		return 0;
	*seg = s;
	return 1;
}

/* the spans of one parameter's value found in a header value */
struct pscan {
	struct pspan plain;		/* name=value */
	struct pspan ext;		/* name*=charset'lang'value */
	struct pspan segs[PARAM_SEGS];	/* name*N= and name*N*= */
};

/*
 * RFC 2045 scan: find the value spans of parameter name in v (after the
 * media type), the first of each kind winning.  Quotes and comments are
 * skipped; an unquoted value with spaces runs to the next ';'.
 */
static void
mime_param_scan(const unsigned char *v, size_t n, const char *name,
    struct pscan *ps)
{
	size_t p, a0, a1, v0, v1;
	int seg, isext;

	memset(ps, 0, sizeof(*ps));
	/* skip the media type: to the first ';' outside quotes/comments */
	for (p = 0; p < n && v[p] != ';'; p++) {
		if (v[p] == '(') {
			p = skip_cfws(v, n, p);
			if (p >= n)
				break;
			p--;
		} else if (v[p] == '"') {
			for (p++; p < n && v[p] != '"'; p++)
				if (v[p] == '\\')
					p++;
		}
	}
	while (p < n) {
		/* v[p] == ';' or junk: find the next ';' */
		if (v[p] != ';') {
			p++;
			continue;
		}
		p = skip_cfws(v, n, p + 1);
		a0 = p;
		while (p < n && v[p] != '=' && v[p] != ';' && !is_wsp(v[p]) &&
		    v[p] != '(' && v[p] != '"')
			p++;
		a1 = p;
		p = skip_cfws(v, n, p);
		if (p >= n || v[p] != '=')
			continue;
		p = skip_cfws(v, n, p + 1);
		v0 = p;
		if (p < n && v[p] == '"') {
			for (p++; p < n && v[p] != '"'; p++)
				if (v[p] == '\\' && p + 1 < n)
					p++;
			if (p < n)
				p++;
			v1 = p;
		} else {
			size_t q;

			while (p < n && v[p] != ';' && !is_wsp(v[p]) &&
			    v[p] != '(' && v[p] != '"')
				p++;
			v1 = p;
			q = p;
			while (q < n && (v[q] == ' ' || v[q] == '\t'))
				q++;
			if (q < n && v[q] != ';' && v[q] != '(' &&
			    v[q] != '\r' && v[q] != '\n') {
				/* unquoted value with spaces: up to ';' */
				while (q < n && v[q] != ';')
					q++;
				v1 = q;
				while (v1 > v0 && is_wsp(v[v1 - 1]))
					v1--;
				p = q;
			}
		}
		if (a1 == a0 || !pname_match(v + a0, a1 - a0, name, &seg,
		    &isext))
			continue;
		if (seg < 0) {
			struct pspan *s = isext ? &ps->ext : &ps->plain;

			if (!s->set) {
				s->v = v + v0;
				s->len = v1 - v0;
				s->set = 1;
				s->ext = isext;
			}
		} else if (seg < PARAM_SEGS && !ps->segs[seg].set) {
			ps->segs[seg].v = v + v0;
			ps->segs[seg].len = v1 - v0;
			ps->segs[seg].set = 1;
			ps->segs[seg].ext = isext;
		}
	}
	if (ps->ext.set) {
		/* name*= wins over continuations */
		ps->segs[0] = ps->ext;
		for (p = 1; p < PARAM_SEGS; p++)
			ps->segs[p].set = 0;
	}
}

/*
 * RFC 2231 join: the value's bytes into val, from the segments in order
 * (unquoted; %XX decoded in extended ones) or the plain value, and the
 * charset of an extended value into cs (cs[0] = 0 when none; cs holds
 * CHARSET_NAME_MAX + 1 bytes).  1 found, 0 not found, -1 out of room.
 */
static int
mime_param_join(const struct pscan *ps, struct buf *val, char *cs)
{
	struct buf tmp = BUF_INIT(val->max);
	size_t i, p, cslen;
	int r = -1;

	cs[0] = 0;
	if (!ps->segs[0].set) {
		if (!ps->plain.set)
			return 0;
		return unquote(ps->plain.v, ps->plain.len, val) < 0 ? -1 : 1;
	}
	for (i = 0; i < PARAM_SEGS && ps->segs[i].set; i++) {
		buf_reset(&tmp);
		if (unquote(ps->segs[i].v, ps->segs[i].len, &tmp) < 0)
			goto out;
		if (!ps->segs[i].ext) {
			if (buf_add(val, tmp.data, tmp.len) < 0)
				goto out;
			continue;
		}
		p = 0;
		if (i == 0) {
			/* charset'language'value */
			const unsigned char *q1, *q2 = NULL;

			q1 = tmp.len ? memchr(tmp.data, '\'', tmp.len) : NULL;
			if (q1)
				q2 = memchr(q1 + 1, '\'', tmp.len -
				    (size_t)(q1 + 1 - tmp.data));
			if (q2) {
				cslen = (size_t)(q1 - tmp.data);
				p = (size_t)(q2 + 1 - tmp.data);
				if (cslen > 0 && cslen <= CHARSET_NAME_MAX) {
					memcpy(cs, tmp.data, cslen);
					cs[cslen] = 0;
				}
			}
		}
		if (tmp.len > p && pct_decode(tmp.data + p, tmp.len - p,
		    val) < 0)
			goto out;
	}
	r = 1;
out:
	buf_free(&tmp);
	return r;
}

/*
 * The joined value to out: as it is (raw), else to UTF-8 from the RFC
 * 2231 charset cs, or with RFC 2047 words decoded when there is none.
 * 0, 1 when the value was cut (out full), or -1 out of memory.
 */
static int
mime_param_decode(const struct buf *val, const char *cs, int raw,
    struct buf *out)
{
	struct buf tmp = BUF_INIT(val->len * CS_MAX_GROWTH + 16);
	const unsigned char *in = val->len ? val->data :
	    (const unsigned char *)"";
	int flags = 0, cut = 0, r = -1;
	long a;

	if (raw) {
		if ((a = buf_add_trunc(out, in, val->len)) < 0)
			return -1;
		return (size_t)a < val->len;
	}
	if (cs[0] != 0) {
		if (charset_convert(cs, strlen(cs), in, val->len, &tmp,
		    &flags) < 0)
			goto out;
		cut = (flags & CS_CUT) != 0;
	} else {
		if ((r = rfc2047_decode(in, val->len, &tmp)) < 0)
			goto out;
		cut = (r & RFC2047_CUT) != 0;
		r = -1;
	}
	if (tmp.data != NULL && (a = utf8_add_cut(out, tmp.data,
	    tmp.len)) != 0) {
		if (a < 0)
			goto out;
		cut = 1;
	}
	r = cut;
out:
	buf_free(&tmp);
	return r;
}

/* one parameter of a Content-Type/-Disposition value */
int
mime_param(const unsigned char *v, size_t n, const char *name, int raw,
    struct buf *out)
{
	struct pscan ps;
	struct buf val = BUF_INIT(n + 16);
	char cs[CHARSET_NAME_MAX + 1];
	int r, cut;

	buf_reset(out);
	mime_param_scan(v, n, name, &ps);
	if ((r = mime_param_join(&ps, &val, cs)) <= 0)
		goto out;
	if ((r = mime_param_decode(&val, cs, raw, out)) < 0)
		goto out;
	cut = r;
	r = -1;
	if (out->data == NULL && buf_reserve(out, 0) < 0)
		goto out;
	r = cut ? 2 : 1;
out:
	buf_free(&val);
	return r;
}
