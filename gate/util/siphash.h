/*
 * siphash.h - SipHash-2-4: a 64-bit keyed hash of any bytes
 *
 * Used for the token store's fixed-size keys (db/tokdb.c): with a good
 * 64-bit mix, a chosen token does not land on a chosen key except by
 * brute force.  Any byte sequence is valid input; never fails.
 */
#ifndef LG_SIPHASH_H
#define LG_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of p[0..n) under the 128-bit key (k0, k1): k0 is the key's
 * first 8 bytes read little-endian, k1 the last 8 */
uint64_t siphash24(uint64_t k0, uint64_t k1, const void *p, size_t n);

#endif
