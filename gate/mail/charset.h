/*
 * charset.h - text in any charset to UTF-8, with iconv
 *
 * An unknown or lying charset never fails a conversion: invalid
 * sequences fall back to Latin-1 for that byte.  Converters are cached
 * per process.  Fails (-1) only when an output buffer refuses to grow.
 */
#ifndef LG_CHARSET_H
#define LG_CHARSET_H

#include <stddef.h>

struct buf;

/* longest charset name looked at (an encoded word's, an RFC 2231 value's) */
#define CHARSET_NAME_MAX	64

/* flags set by charset_convert() */
#define CS_UNKNOWN	0x01	/* charset name unknown: read as UTF-8/Latin-1 */
#define CS_INVALID	0x02	/* bytes invalid in the charset: Latin-1 used */

/*
 * in (n bytes, charset charset) to UTF-8, appended to out.  Returns 0
 * clean, 1 fallback used, -1 when out refuses to grow.
 */
int charset_to_utf8(const char *charset, const unsigned char *in, size_t n,
    struct buf *out);

/*
 * Like charset_to_utf8() but says why a fallback was used (CS_* bits
 * or'ed into *flags).  charset is cslen bytes, need not be
 * NUL-terminated.  Returns 0, or -1 when out refuses to grow.
 */
int charset_convert(const char *charset, size_t cslen,
    const unsigned char *in, size_t n, struct buf *out, int *flags);

/* UTF-8 as is, each invalid byte as Latin-1, appended to out: 0 clean, 1
 * fallback used, -1 when out refuses to grow */
int charset_utf8_latin1(const unsigned char *in, size_t n, struct buf *out);

/* allow n more iconv_open() calls (0: no limit); past the budget a
 * charset not in the cache is read as UTF-8/Latin-1.  mail_walk() sets
 * CS_OPEN_BUDGET per post: a post cycling through many charsets would
 * otherwise open and close a converter for every encoded word */
#define CS_OPEN_BUDGET	64
void charset_budget(unsigned n);

/* close the cached iconv handles (tests, leak checkers); optional */
void charset_cache_clear(void);

#endif
