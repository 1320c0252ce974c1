/*
 * siphash.c - SipHash-2-4 (Aumasson and Bernstein, 2012): two
 * compression rounds per 8-byte word, four finalization rounds
 *
 * Reads exactly n bytes; input is any bytes.  Never fails.
 */
#include "config.h"

#include "gate/util/siphash.h"

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

/* one SipRound on the four state words */
#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* 8 bytes little-endian */
static uint64_t
le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	    (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	    (uint64_t)p[7] << 56;
}

uint64_t
siphash24(uint64_t k0, uint64_t k1, const void *data, size_t n)
{
	const unsigned char *p = data;
	/* "somepseudorandomlygeneratedbytes" */
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t m, last = (uint64_t)(n & 0xff) << 56;
	size_t i, tail = n & 7;

	for (i = 0; i + 8 <= n; i += 8) {
		m = le64(p + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	/* the last 0-7 bytes, the length in the top byte */
	while (tail > 0) {
		tail--;
		last |= (uint64_t)p[i + tail] << (8 * tail);
	}
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
