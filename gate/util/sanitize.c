/*
 * sanitize.c - one masking routine for untrusted text, four encodings
 *
 * Input is any bytes.  Each character is classed once (kept, masked,
 * whitespace, dropped, or special to the encoding) and written as the
 * encoding says; runs of characters kept as they are go out in one
 * copy.  Output never passes the struct buf's max: a cut rolls back to
 * the last character boundary that leaves room for the marker.  Fails
 * only when out of memory (or without room for the marker), with the
 * buffer as it was.
 */
#include "config.h"

#include <string.h>

#include "gate/util/sanitize.h"
#include "gate/util/utf8.h"

/* U+FFFD, the replacement character, in UTF-8 */
#define REPL_UTF8	"\xef\xbf\xbd"

int
sanitize_masked(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c ||
	    cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x2028 && cp <= 0x202e) ||	/* LS, PS, LRE..RLO */
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

/* the replacement for a masked character in enc */
static const char *
repl_of(enum sanitize_enc enc)
{
	switch (enc) {
	case SANITIZE_JSON:
		return "\\ufffd";
	case SANITIZE_HTML:
		return "&#xfffd;";
	default:
		return "?";
	}
}

/*
 * How the character c (an ASCII byte kept as a character) is written
 * in enc when it is not itself: its escape, or NULL (written as is).
 */
static const char *
escape_of(unsigned char c, enum sanitize_enc enc, unsigned flags)
{
	int keep_nl = (flags & SANITIZE_KEEP_NL) && enc != SANITIZE_LOG;

	/* a log line: TAB, LF and CR are masked like any control */
	if (enc == SANITIZE_LOG)
		return c == '"' || c == '\\' ? "?" : NULL;
	if (c == '\t' || c == '\n') {
		if (!keep_nl)
			return " ";
		if (enc == SANITIZE_JSON)
			return c == '\t' ? "\\t" : "\\n";
		return NULL;
	}
	if (c == '\r')
		return " ";		/* (dropped when keep_nl: see caller) */
	switch (enc) {
	case SANITIZE_JSON:
		return c == '"' ? "\\\"" : c == '\\' ? "\\\\" : NULL;
	case SANITIZE_HTML:
		switch (c) {
		case '&':
			return "&amp;";
		case '<':
			return "&lt;";
		case '>':
			return "&gt;";
		case '"':
			return "&quot;";
		case '\'':
			return "&#39;";
		}
		return NULL;
	default:
		return NULL;
	}
}

int
sanitize_buf(struct buf *out, const void *s, size_t n, size_t maxchars,
    enum sanitize_enc enc, unsigned flags)
{
	const unsigned char *p = s;
	const char *quote = enc == SANITIZE_JSON ? "\"" : "";
	const char *repl = repl_of(enc), *piece;
	size_t qlen = strlen(quote);
	size_t mlen = maxchars < 3 ? maxchars : 3;
	size_t start = out->len, room = out->max - out->len;
	size_t i = 0, k, plen, nch = 0, cut, run = 0, runlen = 0, olen;
	int keep_nl = (flags & SANITIZE_KEEP_NL) && enc != SANITIZE_LOG;
	uint32_t cp;

	if (room < 2 * qlen + mlen)
		return -1;
	/* the room was checked: every add below fails only for lack of
	 * memory (this one also makes out->data non-NULL) */
	if (buf_reserve(out, 2 * qlen + mlen) < 0 || buf_adds(out, quote) < 0)
		goto nomem;
	olen = out->len;		/* the output with the pending run */
	cut = olen;			/* where a marker would go */
	while (i < n) {
		k = utf8_decode(p + i, n - i, &cp);
		piece = NULL;
		if (k == 0) {
			k = 1;
			piece = repl;
		} else if (k == 1 && cp == '\r' && keep_nl) {
			/* dropped: flush the run, it is no longer contiguous */
			if (runlen && buf_add(out, p + run, runlen) < 0)
				goto nomem;
			runlen = 0;
			i++;
			continue;
		} else if (k == 1)
			piece = escape_of(p[i], enc, flags);
		if (piece == NULL && sanitize_masked(cp) &&
		    !(keep_nl && (cp == '\t' || cp == '\n')))
			piece = repl;
		plen = piece ? strlen(piece) : k;
		if (nch >= maxchars || olen + plen + qlen > start + room)
			goto cut;
		if (piece == NULL) {
			if (runlen == 0)
				run = i;
			runlen += k;
		} else {
			if (runlen && buf_add(out, p + run, runlen) < 0)
				goto nomem;
			runlen = 0;
			if (buf_add(out, piece, plen) < 0)
				goto nomem;
		}
		olen += plen;
		nch++;
		i += k;
		if (nch <= maxchars - mlen && olen + mlen + qlen <= start + room)
			cut = olen;
	}
	if ((runlen && buf_add(out, p + run, runlen) < 0) ||
	    buf_adds(out, quote) < 0)
		goto nomem;
	return 0;
cut:
	/* back to the last boundary with room for the marker: it lies in
	 * out, or in the pending run (copied 1:1) */
	if (cut > out->len && buf_add(out, p + run, cut - out->len) < 0)
		goto nomem;
	out->len = cut;
	out->data[cut] = 0;
	if (buf_add(out, SANITIZE_MARK, mlen) < 0 || buf_adds(out, quote) < 0)
		goto nomem;
	return 1;
nomem:
	out->len = start;
	if (out->data)
		out->data[start] = 0;
	return -1;
}

char *
sanitize_str(char *out, size_t outsz, const void *s, size_t n,
    size_t maxchars, enum sanitize_enc enc, unsigned flags)
{
	struct buf b;

	if (outsz == 0)
		return out;
	/* the array as a buffer that never grows: cap is max + 1 */
	b.data = (unsigned char *)out;
	b.len = 0;
	b.cap = outsz;
	b.max = outsz - 1;
	out[0] = 0;
	(void)sanitize_buf(&b, s, n, maxchars, enc, flags);
	return out;
}

int
sanitize_utf8(struct buf *out, const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t start = out->len, room = out->max - out->len;
	size_t i = 0, k, run = 0, runlen = 0, olen = out->len;
	uint32_t cp;
	int rc = 0;

	while (i < n) {
		k = utf8_decode(p + i, n - i, &cp);
		if (k != 0 && cp != 0) {
			if (olen + k > start + room) {
				rc = 1;
				break;
			}
			if (runlen == 0)
				run = i;
			runlen += k;
			olen += k;
			i += k;
			continue;
		}
		if (olen + 3 > start + room) {
			rc = 1;
			break;
		}
		if ((runlen && buf_add(out, p + run, runlen) < 0) ||
		    buf_add(out, REPL_UTF8, 3) < 0)
			goto nomem;
		runlen = 0;
		olen += 3;
		i++;
	}
	if (runlen && buf_add(out, p + run, runlen) < 0)
		goto nomem;
	return rc;
nomem:
	out->len = start;
	if (out->data)
		out->data[start] = 0;
	return -1;
}
