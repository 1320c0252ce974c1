/*
 * qp.h - the quoted-printable transfer decoding
 */
#ifndef LG_QP_H
#define LG_QP_H

#include <stddef.h>

struct buf;

/* decode quoted-printable (RFC 2045) in into out (appended): 0 clean, 1
 * bad escapes seen (kept as they were), -1 when out refuses to grow */
int qp_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
