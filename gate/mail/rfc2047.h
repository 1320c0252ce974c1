/*
 * rfc2047.h - RFC 2047 encoded words in header values
 */
#ifndef LG_RFC2047_H
#define LG_RFC2047_H

#include <stddef.h>

struct buf;

/* results of rfc2047_decode(), or'ed */
#define RFC2047_BAD	1	/* bad words seen (kept as they were) */
#define RFC2047_CUT	2	/* out was full: the text was cut there */

/* a header value with RFC 2047 encoded words to UTF-8, appended to out:
 * 0 clean, else RFC2047_* bits; -1 only when out of memory */
int rfc2047_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
