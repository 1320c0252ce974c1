/*
 * b64.h - the base64 transfer decoding
 */
#ifndef LG_B64_H
#define LG_B64_H

#include <stddef.h>

struct buf;

/* b64_decode(): out had no room for all of it; the rest was not decoded */
#define B64_CUT	2

/* decode base64 in into out (appended), skipping garbage: 0 clean, 1 if
 * garbage or bad padding was seen, or'ed with B64_CUT; -1 only when out
 * of memory */
int b64_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
