/*
 * utf8.h - the one UTF-8 sequence check of libgate (the tokenizer, the
 * charset fallback and the sanitizer use it), and the writer
 *
 * Strict RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence.  Any byte sequence is safe input; at
 * most n bytes are read.  The decoder is static inline: an
 * out-of-line call per character made `listgate tokens` measurably slower
 * on mostly non-ASCII text.  utf8.c has the writer.
 */
#ifndef LG_UTF8_H
#define LG_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The sequence at p (n > 0 bytes left): its length (1 to 4) with the
 * code point in *cp, or 0 when it is not valid UTF-8 (*cp is then left
 * alone).
 */
static inline size_t
utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;		/* 0x80-0xc1, 0xf5-0xff */
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

/* the length of the valid UTF-8 sequence at p (n > 0 bytes left), 0 if
 * invalid: truncated, overlong, a surrogate or above U+10FFFF */
static inline size_t
utf8_len(const unsigned char *p, size_t n)
{
	uint32_t cp;

	return utf8_decode(p, n, &cp);
}

/* how many of the n bytes at p are ASCII from the start: 8 bytes at a
 * time where it can (most text is; byte by byte it was 4% of training) */
static inline size_t
utf8_ascii_run(const unsigned char *p, size_t n)
{
	uint64_t w;
	size_t i = 0;

	while (n - i >= 8) {
		memcpy(&w, p + i, 8);
		if (w & 0x8080808080808080ULL)
			break;
		i += 8;
	}
	while (i < n && p[i] < 0x80)
		i++;
	return i;
}

struct buf;

/* append code point cp as UTF-8 (invalid ones, surrogates and above
 * U+10FFFF, as U+FFFD): 0, or -1 when out refuses to grow */
int utf8_put(struct buf *out, unsigned long cp);

/*
 * Append the UTF-8 text p (n bytes) to out.  When it does not all fit
 * below out's max, append the longest prefix that ends between two
 * characters and return 1 (the text was cut); 0 when all of it was
 * added; -1 only when out of memory.  Room never fails a caller.
 */
int utf8_add_cut(struct buf *out, const unsigned char *p, size_t n);

/* utf8_put() that cuts instead of failing: 0, 1 when the character did
 * not fit (nothing added), -1 only when out of memory */
int utf8_put_cut(struct buf *out, unsigned long cp);

#endif
