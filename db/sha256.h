/*
 * sha256.h - SHA-256 (FIPS 180-4), for the fingerprint of held posts
 *
 * Pure computation on trusted lengths; never fails.
 */
#ifndef LG_SHA256_H
#define LG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t n;		/* bytes hashed so far */
	unsigned char b[64];	/* pending block */
	size_t bl;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *p, size_t n);
void sha256_final(struct sha256 *c, unsigned char out[SHA256_LEN]);
/* one-shot */
void sha256(const void *p, size_t n, unsigned char out[SHA256_LEN]);

#endif
