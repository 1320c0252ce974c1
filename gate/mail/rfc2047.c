/*
 * rfc2047.c - RFC 2047 encoded words in header values
 *
 * Header values are hostile: every scan is bounded by the value and
 * linear in it (a failed encoded word never makes us rescan).  Bad
 * words are kept as they were; raw 8-bit text becomes UTF-8 (Latin-1
 * for invalid bytes).  Output beyond the buffer's max is cut between
 * characters (RFC2047_CUT).  Fails (-1) only when memory runs out.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "gate/mail/b64.h"
#include "gate/mail/charset.h"
#include "gate/mail/mailint.h"
#include "gate/mail/rfc2047.h"
#include "gate/util/buf.h"

/* longest charset name in an encoded word or RFC 2231 value */
#define CHARSET_NAME_MAX	64
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
	    CHARSET_NAME_MAX)
		p++;
	if (p >= n || in[p] != '?' || p == i + 2 || p - i - 2 > CHARSET_NAME_MAX)
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

/* convert the pending raw bytes of adjacent words: 0, RFC2047_BAD
 * (fallback used), RFC2047_CUT (out full), or -1 */
static int
ew_flush(struct buf *raw, const unsigned char *cs, size_t cslen,
    struct buf *out)
{
	int flags = 0;

	if (raw->len == 0)
		return 0;
	if (charset_convert_text((const char *)cs, cslen, NULL, raw->data,
	    raw->len, out, &flags) < 0)
		return -1;
	buf_reset(raw);
	return ((flags & (CS_UNKNOWN | CS_INVALID)) ? RFC2047_BAD : 0) |
	    ((flags & CS_CUT) ? RFC2047_CUT : 0);
}

/* raw 8-bit text between words: 0, RFC2047_CUT, or -1 */
static int
lit_flush(const unsigned char *in, size_t n, struct buf *out)
{
	int r = charset_utf8_latin1(in, n, out);

	if (r < 0)
		return -1;
	return (r & CS_CUT) ? RFC2047_CUT : 0;
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
				bad |= RFC2047_BAD;
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
			if (!(bad & RFC2047_CUT) &&
			    (r = lit_flush(in + lit, i - lit, out)) < 0)
				goto fail;
			bad |= r;
		} else if (pcslen != w.cslen ||
		    strncasecmp((const char *)pcs, (const char *)w.cs,
		    w.cslen) != 0) {
			if ((r = ew_flush(&raw, pcs, pcslen, out)) < 0)
				goto fail;
			bad |= r;
		}
		if (bad & RFC2047_CUT)
			goto out;
		pcs = w.cs;
		pcslen = w.cslen;
		if (w.enc == 'B')
			r = b64_decode(w.text, w.textlen, &raw);
		else
			r = q_decode(w.text, w.textlen, &raw);
		if (r < 0)
			goto fail;
		bad |= r ? RFC2047_BAD : 0;
		pending = 1;
		i = lit = w.end;
	}
	if ((r = ew_flush(&raw, pcs, pcslen, out)) < 0)
		goto fail;
	bad |= r;
	if (!(bad & RFC2047_CUT) && (r = lit_flush(in + lit, n - lit,
	    out)) < 0)
		goto fail;
	bad |= r;
out:
	buf_free(&raw);
	return bad;
fail:
	buf_free(&raw);
	return -1;
}
