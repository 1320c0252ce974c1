/*
 * rfc2047.c - RFC 2047 encoded words in header values, MIME parameters
 * (RFC 2045 quoting and comments, RFC 2231 charsets and continuations)
 *
 * Header values are hostile: every scan is bounded by the value and
 * linear in it (a failed encoded word never makes us rescan).  Bad
 * words are kept as they were; raw 8-bit text becomes UTF-8 (Latin-1
 * for invalid bytes).  Fails (-1) only when an output buffer refuses
 * to grow.
 */
#include "config.h"

#include <string.h>

#include "gate/util/buf.h"
#include "gate/mail/mail.h"
#include "gate/mail/mailint.h"

/* longest charset name in an encoded word or RFC 2231 value */
#define EW_CHARSET_MAX	64
/* RFC 2231 continuation segments assembled (name*0 .. name*63) */
#define PARAM_SEGS	64

/* white space, line breaks included */
static int
is_wsp(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* decode the text of a Q word into raw: 0 clean, 1 bad escape, -1 */
static int
q_decode(const unsigned char *in, size_t n, struct buf *raw)
{
	size_t i;
	int h, l, bad = 0;

	for (i = 0; i < n; i++) {
		int c = in[i];

		if (c == '_')
			c = ' ';
		else if (c == '=') {
			if (i + 2 < n && (h = hexval(in[i + 1])) >= 0 &&
			    (l = hexval(in[i + 2])) >= 0) {
				c = h << 4 | l;
				i += 2;
			} else
				bad = 1;
		}
		if (buf_addc(raw, c) < 0)
			return -1;
	}
	return bad;
}

struct ew {
	const unsigned char *cs, *text;
	size_t cslen, textlen, end;	/* end: offset just past "?=" */
	int enc;			/* 'B' or 'Q' */
};

/* parse an encoded word at in[i] ("=?" there): 1 ok, 0 looks bad, -1 not
 * a word; on 0/-1 *stop is where the scan may resume without rescanning */
static int
ew_parse(const unsigned char *in, size_t n, size_t i, struct ew *w)
{
	size_t p = i + 2, t;

	w->cs = in + p;
	while (p < n && in[p] != '?' && !is_wsp(in[p]) && p - i - 2 <=
	    EW_CHARSET_MAX)
		p++;
	if (p >= n || in[p] != '?' || p == i + 2 || p - i - 2 > EW_CHARSET_MAX)
		return -1;
	w->cslen = p - i - 2;
	p++;
	if (p + 1 >= n || in[p + 1] != '?')
		return 0;
	if (in[p] == 'B' || in[p] == 'b')
		w->enc = 'B';
	else if (in[p] == 'Q' || in[p] == 'q')
		w->enc = 'Q';
	else
		return 0;
	p += 2;
	for (t = p; t < n && in[t] != '?' && !is_wsp(in[t]); t++)
		;
	if (t + 1 >= n || in[t] != '?' || in[t + 1] != '=')
		return 0;
	w->text = in + p;
	w->textlen = t - p;
	w->end = t + 2;
	/* RFC 2231 language suffix: charset*lang */
	for (t = 0; t < w->cslen; t++)
		if (w->cs[t] == '*') {
			w->cslen = t;
			break;
		}
	return 1;
}

/* convert the pending raw bytes of adjacent words: 0, 1 fallback, -1 */
static int
ew_flush(struct buf *raw, const unsigned char *cs, size_t cslen,
    struct buf *out)
{
	int flags = 0;

	if (raw->len == 0)
		return 0;
	if (charset_convert((const char *)cs, cslen, raw->data, raw->len,
	    out, &flags) < 0)
		return -1;
	buf_reset(raw);
	return flags ? 1 : 0;
}

/* a header value with encoded words to UTF-8 */
int
rfc2047_decode(const unsigned char *in, size_t n, struct buf *out)
{
	struct buf raw = BUF_INIT(n + 16);
	struct ew w;
	const unsigned char *pcs = NULL;
	size_t i = 0, lit = 0, pcslen = 0, k;
	int bad = 0, r, pending = 0;

	while (i + 1 < n) {
		if (in[i] != '=' || in[i + 1] != '?') {
			i++;
			continue;
		}
		if ((r = ew_parse(in, n, i, &w)) <= 0) {
			if (r == 0)
				bad = 1;
			i += 2;
			continue;
		}
		/* text since the last word: dropped if only white space */
		for (k = lit; k < i && is_wsp(in[k]); k++)
			;
		if (!pending || k < i) {
			if ((r = ew_flush(&raw, pcs, pcslen, out)) < 0)
				goto fail;
			bad |= r;
			if (utf8_sanitize(in + lit, i - lit, out) < 0)
				goto fail;
		} else if (pcslen != w.cslen ||
		    strncasecmp((const char *)pcs, (const char *)w.cs,
		    w.cslen) != 0) {
			if ((r = ew_flush(&raw, pcs, pcslen, out)) < 0)
				goto fail;
			bad |= r;
		}
		pcs = w.cs;
		pcslen = w.cslen;
		if (w.enc == 'B')
			r = b64_decode(w.text, w.textlen, &raw);
		else
			r = q_decode(w.text, w.textlen, &raw);
		if (r < 0)
			goto fail;
		bad |= r;
		pending = 1;
		i = lit = w.end;
	}
	if ((r = ew_flush(&raw, pcs, pcslen, out)) < 0)
		goto fail;
	bad |= r;
	if (utf8_sanitize(in + lit, n - lit, out) < 0)
		goto fail;
	buf_free(&raw);
	return bad;
fail:
	buf_free(&raw);
	return -1;
}

/* --- MIME parameters ------------------------------------------------- */

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

/* one parameter of a Content-Type/-Disposition value */
int
mime_param(const unsigned char *v, size_t n, const char *name, int raw,
    struct buf *out)
{
	struct pspan plain = { NULL, 0, 0, 0 }, ext = { NULL, 0, 0, 0 };
	struct pspan segs[PARAM_SEGS];
	struct buf tmp = BUF_INIT(n + 16), val = BUF_INIT(n + 16);
	unsigned char csbuf[EW_CHARSET_MAX + 1];
	const unsigned char *cs = NULL;
	size_t p, a0, a1, v0, v1, cslen = 0, i;
	int seg, isext, found = 0, r = -1, flags = 0;

	memset(segs, 0, sizeof(segs));
	buf_reset(out);
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
			struct pspan *s = isext ? &ext : &plain;

			if (!s->set) {
				s->v = v + v0;
				s->len = v1 - v0;
				s->set = 1;
				s->ext = isext;
			}
		} else if (seg < PARAM_SEGS && !segs[seg].set) {
			segs[seg].v = v + v0;
			segs[seg].len = v1 - v0;
			segs[seg].set = 1;
			segs[seg].ext = isext;
		}
	}
	if (ext.set) {
		segs[0] = ext;
		for (i = 1; i < PARAM_SEGS; i++)
			segs[i].set = 0;
	}
	if (segs[0].set) {
		for (i = 0; i < PARAM_SEGS && segs[i].set; i++) {
			buf_reset(&tmp);
			if (unquote(segs[i].v, segs[i].len, &tmp) < 0)
				goto out;
			if (!segs[i].ext) {
				if (buf_add(&val, tmp.data, tmp.len) < 0)
					goto out;
				continue;
			}
			p = 0;
			if (i == 0) {
				const unsigned char *q1, *q2 = NULL;

				q1 = tmp.len ? memchr(tmp.data, '\'', tmp.len) :
				    NULL;
				if (q1)
					q2 = memchr(q1 + 1, '\'', tmp.len -
					    (size_t)(q1 + 1 - tmp.data));
				if (q2) {
					cslen = (size_t)(q1 - tmp.data);
					p = (size_t)(q2 + 1 - tmp.data);
					if (cslen > 0 && cslen <= EW_CHARSET_MAX) {
						memcpy(csbuf, tmp.data, cslen);
						csbuf[cslen] = 0;
						cs = csbuf;
					}
				}
			}
			if (tmp.len > p && pct_decode(tmp.data + p,
			    tmp.len - p, &val) < 0)
				goto out;
		}
		found = 1;
	} else if (plain.set) {
		if (unquote(plain.v, plain.len, &val) < 0)
			goto out;
		found = 1;
	}
	if (!found) {
		r = 0;
		goto out;
	}
	if (raw) {
		if (buf_add_trunc(out, val.data, val.len) < 0)
			goto out;
	} else if (cs != NULL) {
		buf_reset(&tmp);
		tmp.max = val.len * 4 + 16;
		if (charset_convert((const char *)cs, cslen, val.len ?
		    val.data : (const unsigned char *)"", val.len, &tmp,
		    &flags) < 0 ||
		    buf_add_trunc(out, tmp.data, tmp.len) < 0)
			goto out;
	} else {
		buf_reset(&tmp);
		tmp.max = val.len * 4 + 16;
		if (rfc2047_decode(val.len ? val.data :
		    (const unsigned char *)"", val.len, &tmp) < 0 ||
		    buf_add_trunc(out, tmp.data, tmp.len) < 0)
			goto out;
	}
	if (out->data == NULL && buf_reserve(out, 0) < 0)
		goto out;
	r = 1;
out:
	buf_free(&tmp);
	buf_free(&val);
	return r;
}
