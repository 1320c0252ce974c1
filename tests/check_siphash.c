/*
 * check_siphash.c - SipHash-2-4 against the reference vectors (key
 * 00 01 .. 0f, message 00 01 .. of each length)
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "gate/util/siphash.h"

/* the reference key 00 01 .. 0f as two little-endian words */
#define K0	0x0706050403020100ULL
#define K1	0x0f0e0d0c0b0a0908ULL

static const struct {
	size_t len;
	uint64_t out;
} vec[] = {
	{ 0, 0x726fdb47dd0e0e31ULL },
	{ 1, 0x74f839c593dc67fdULL },
	{ 2, 0x0d6c8009d9a94f5aULL },
	{ 15, 0xa129ca6149be45e5ULL },	/* the paper's example */
};

START_TEST(reference_vectors)
{
	unsigned char msg[64];
	size_t i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	i = (size_t)_i;
	ck_assert_msg(siphash24(K0, K1, msg, vec[i].len) == vec[i].out,
	    "length %zu: %016llx", vec[i].len,
	    (unsigned long long)siphash24(K0, K1, msg, vec[i].len));
}
END_TEST

/* every length up to a few words reads only its bytes, and each byte
 * and the length change the value */
START_TEST(lengths_and_bytes)
{
	unsigned char a[40], b[40];
	size_t n, j;

	for (n = 0; n < sizeof(a); n++)
		a[n] = b[n] = (unsigned char)(n * 7 + 1);
	for (n = 1; n < sizeof(a); n++) {
		ck_assert(siphash24(1, 2, a, n) != siphash24(1, 2, a, n - 1));
		for (j = 0; j < n; j++) {
			b[j] ^= 0x80;
			ck_assert(siphash24(1, 2, a, n) !=
			    siphash24(1, 2, b, n));
			b[j] ^= 0x80;
		}
		/* bytes past n are not read */
		b[n] ^= 0xff;
		ck_assert(siphash24(1, 2, a, n) == siphash24(1, 2, b, n));
		b[n] ^= 0xff;
	}
	ck_assert(siphash24(1, 2, a, 8) != siphash24(2, 1, a, 8));
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("siphash");
	TCase *tc = tcase_create("siphash");

	tcase_add_loop_test(tc, reference_vectors, 0,
	    (int)(sizeof(vec) / sizeof(vec[0])));
	tcase_add_test(tc, lengths_and_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
