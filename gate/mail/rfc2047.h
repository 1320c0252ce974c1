/*
 * rfc2047.h - RFC 2047 encoded words in header values
 */
#ifndef LG_RFC2047_H
#define LG_RFC2047_H

#include <stddef.h>

struct buf;

/* a header value with RFC 2047 encoded words to UTF-8, appended to out:
 * 0 clean, 1 bad words seen (kept as they were), -1 when out refuses to
 * grow */
int rfc2047_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
