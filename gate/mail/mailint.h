/*
 * mailint.h - helpers shared by the mail parser's files (not a public
 * interface: use mail.h)
 */
#ifndef LG_MAILINT_H
#define LG_MAILINT_H

#include <stddef.h>

#include "gate/util/buf.h"

/* value of a hex digit, or -1 (quoted-printable, RFC 2047 Q, RFC 2231
 * %XX) */
static inline int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* flags set by charset_convert() */
#define CS_UNKNOWN	0x01	/* charset name unknown: read as UTF-8/Latin-1 */
#define CS_INVALID	0x02	/* bytes invalid in the charset: Latin-1 used */

/*
 * Like charset_to_utf8() but says why a fallback was used (CS_* bits
 * or'ed into *flags).  charset is n bytes, need not be NUL-terminated.
 * Returns 0, or -1 when out buffer refuses to grow.
 */
int charset_convert(const char *charset, size_t cslen,
    const unsigned char *in, size_t n, struct buf *out, int *flags);

/* allow n more iconv_open() calls (0: no limit); past the budget a
 * charset not in the cache is read as UTF-8/Latin-1.  mail_walk() sets
 * CS_OPEN_BUDGET per post: a post cycling through many charsets would
 * otherwise open and close a converter for every encoded word */
#define CS_OPEN_BUDGET	64
void charset_budget(unsigned n);

/* UTF-8 as is, each invalid byte as Latin-1: 0 clean, 1 fallback, -1 */
int utf8_sanitize(const unsigned char *in, size_t n, struct buf *out);

/* append code point cp as UTF-8 (invalid ones as U+FFFD): 0 or -1 */
int utf8_put(struct buf *out, unsigned long cp);

/*
 * A MIME parameter (RFC 2045 with RFC 2231 extensions and continuations)
 * from a Content-Type/-Disposition value v of n bytes.  raw: only unquote
 * (boundaries); else convert to UTF-8 (RFC 2231 charset, or RFC 2047
 * words in a plain value).  out is reset first.
 * Returns 1 found, 0 not found, -1 out of memory/room.
 */
int mime_param(const unsigned char *v, size_t n, const char *name, int raw,
    struct buf *out);

/*
 * The media type of a Content-Type value, lower case, into type (size
 * typesz).  Returns 1 on a well-formed type/subtype, 0 otherwise (type
 * then holds "").
 */
int mime_type(const unsigned char *v, size_t n, char *type, size_t typesz);

#endif
