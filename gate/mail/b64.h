/*
 * b64.h - the base64 transfer decoding
 */
#ifndef LG_B64_H
#define LG_B64_H

#include <stddef.h>

struct buf;

/* decode base64 in into out (appended), skipping garbage: 0 clean, 1 if
 * garbage or bad padding was seen, -1 when out refuses to grow */
int b64_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
