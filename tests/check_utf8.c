/*
 * check_utf8.c - the one UTF-8 sequence check (gate/utf8.h): valid
 * sequences and their code points, and every kind of invalid one
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "gate/util/buf.h"
#include "gate/util/utf8.h"

#define U(s)	((const unsigned char *)(s))

START_TEST(valid_sequences)
{
	uint32_t cp = 0;

	ck_assert_uint_eq(utf8_decode(U("A"), 1, &cp), 1);
	ck_assert_uint_eq(cp, 0x41);
	ck_assert_uint_eq(utf8_decode(U("\0"), 1, &cp), 1);
	ck_assert_uint_eq(cp, 0);
	ck_assert_uint_eq(utf8_decode(U("\xc2\x80"), 2, &cp), 2);
	ck_assert_uint_eq(cp, 0x80);
	ck_assert_uint_eq(utf8_decode(U("\xc3\xa9x"), 3, &cp), 2);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_uint_eq(utf8_decode(U("\xe0\xa0\x80"), 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x800);
	ck_assert_uint_eq(utf8_decode(U("\xe2\x82\xac"), 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x20ac);
	ck_assert_uint_eq(utf8_decode(U("\xef\xbf\xbf"), 3, &cp), 3);
	ck_assert_uint_eq(cp, 0xffff);
	ck_assert_uint_eq(utf8_decode(U("\xf0\x90\x80\x80"), 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x10000);
	ck_assert_uint_eq(utf8_decode(U("\xf4\x8f\xbf\xbf"), 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x10ffff);
	ck_assert_uint_eq(utf8_len(U("\xe2\x82\xac"), 3), 3);
}
END_TEST

START_TEST(invalid_sequences)
{
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
		{ "\x80", 1 },			/* lone continuation */
		{ "\xbf", 1 },
		{ "\xc0\x80", 2 },		/* overlong NUL */
		{ "\xc1\xbf", 2 },		/* overlong */
		{ "\xe0\x9f\xbf", 3 },		/* overlong 3 */
		{ "\xf0\x8f\xbf\xbf", 4 },	/* overlong 4 */
		{ "\xed\xa0\x80", 3 },		/* surrogate D800 */
		{ "\xed\xbf\xbf", 3 },		/* surrogate DFFF */
		{ "\xf4\x90\x80\x80", 4 },	/* above U+10FFFF */
		{ "\xf5\x80\x80\x80", 4 },
		{ "\xff", 1 },
		{ "\xc3", 1 },			/* truncated */
		{ "\xe2\x82", 2 },
		{ "\xf0\x90\x80", 3 },
		{ "\xc3\x41", 2 },		/* not a continuation */
		{ "\xe2\x28\xa1", 3 },
		{ "\xf0\x90\x28\xbc", 4 },
	};
	uint32_t cp = 0x1234;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(utf8_decode(U(bad[i].s), bad[i].n, &cp) == 0,
		    "case %zu accepted", i);
		ck_assert_msg(utf8_len(U(bad[i].s), bad[i].n) == 0,
		    "case %zu accepted by utf8_len", i);
	}
	ck_assert_uint_eq(cp, 0x1234);	/* left alone */
	/* a valid sequence cut short by n is invalid */
	ck_assert_uint_eq(utf8_len(U("\xe2\x82\xac"), 2), 0);
}
END_TEST

/* every 2-byte lead and continuation: valid exactly when RFC 3629 says */
START_TEST(all_two_byte_pairs)
{
	unsigned char s[2];
	unsigned a, b;
	uint32_t cp;
	size_t k;

	for (a = 0x80; a <= 0xff; a++)
		for (b = 0; b <= 0xff; b++) {
			s[0] = (unsigned char)a;
			s[1] = (unsigned char)b;
			k = utf8_decode(s, 2, &cp);
			if (a >= 0xc2 && a <= 0xdf && (b & 0xc0) == 0x80) {
				ck_assert_uint_eq(k, 2);
				ck_assert_uint_eq(cp, (a & 0x1f) << 6 |
				    (b & 0x3f));
			} else
				ck_assert_uint_eq(k, 0);
		}
}
END_TEST

/* the writers that cut instead of failing: between characters, said */
START_TEST(add_cut)
{
	struct buf b = BUF_INIT(5);

	/* "a" + euro sign + "b": all fits */
	ck_assert_int_eq(utf8_add_cut(&b, U("a\xe2\x82\xac" "b"), 5), 0);
	ck_assert_uint_eq(b.len, 5);
	buf_free(&b);
	/* max 3: the euro sign would be split, so only "a" */
	b = (struct buf)BUF_INIT(3);
	ck_assert_int_eq(utf8_add_cut(&b, U("a\xe2\x82\xac" "b"), 5), 1);
	ck_assert_str_eq(buf_str(&b), "a");
	/* full: nothing more goes in, and it says so */
	ck_assert_int_eq(utf8_put_cut(&b, 0x20ac), 1);
	ck_assert_int_eq(utf8_put_cut(&b, 'x'), 0);
	ck_assert_int_eq(utf8_put_cut(&b, 'y'), 0);
	ck_assert_int_eq(utf8_put_cut(&b, 'z'), 1);
	ck_assert_str_eq(buf_str(&b), "axy");
	ck_assert_int_eq(utf8_add_cut(&b, U("q"), 1), 1);
	ck_assert_int_eq(utf8_add_cut(&b, U(""), 0), 0);
	ck_assert_str_eq(buf_str(&b), "axy");
	buf_free(&b);
}
END_TEST

static Suite *
utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, valid_sequences);
	tcase_add_test(tc, invalid_sequences);
	tcase_add_test(tc, all_two_byte_pairs);
	suite_add_tcase(s, tc);
	tc = tcase_create("write");
	tcase_add_test(tc, add_cut);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(utf8_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
