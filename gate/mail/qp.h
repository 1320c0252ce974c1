/*
 * qp.h - the quoted-printable transfer decoding
 */
#ifndef LG_QP_H
#define LG_QP_H

#include <stddef.h>

struct buf;

/* qp_decode(): out had no room for all of it; the rest was not decoded */
#define QP_CUT	2

/* decode quoted-printable (RFC 2045) in into out (appended): 0 clean, 1
 * bad escapes seen (kept as they were), or'ed with QP_CUT; -1 only when
 * out of memory */
int qp_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
