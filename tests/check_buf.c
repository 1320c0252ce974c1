/*
 * check_buf.c - the bounded buffer and the allocator's failure injection
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/xalloc.h"
#include "gate/outcome.h"

START_TEST(add_and_nul)
{
	struct buf b = BUF_INIT(100);

	ck_assert_int_eq(buf_add(&b, "ab\0c", 4), 0);
	ck_assert_uint_eq(b.len, 4);
	ck_assert_int_eq(b.data[4], 0);
	ck_assert_int_eq(memcmp(b.data, "ab\0c", 4), 0);
	ck_assert_int_eq(buf_adds(&b, "xyz"), 0);
	ck_assert_uint_eq(b.len, 7);
	buf_free(&b);
}
END_TEST

START_TEST(max_is_enforced)
{
	struct buf b = BUF_INIT(5);

	ck_assert_int_eq(buf_add(&b, "12345", 5), 0);
	ck_assert_int_eq(buf_addc(&b, '6'), -1);
	ck_assert_uint_eq(b.len, 5);		/* unchanged after a failed add */
	ck_assert_str_eq(buf_str(&b), "12345");
	buf_reset(&b);
	ck_assert_int_eq(buf_add_trunc(&b, "abcdefgh", 8), 5);
	ck_assert_str_eq(buf_str(&b), "abcde");
	ck_assert_int_eq(buf_add_trunc(&b, "x", 1), 0);
	buf_free(&b);
}
END_TEST

START_TEST(huge_add_overflow)
{
	struct buf b = BUF_INIT((size_t)-1);

	ck_assert_int_eq(buf_add(&b, "a", 1), 0);
	ck_assert_int_eq(buf_reserve(&b, (size_t)-1), -1);
	ck_assert_int_eq(buf_reserve(&b, (size_t)-2), -1);
	buf_free(&b);
}
END_TEST

START_TEST(alloc_failure_injection)
{
	struct buf b = BUF_INIT(1000);

	xalloc_fail_at(1);
	ck_assert_int_eq(buf_adds(&b, "hello"), -1);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(buf_adds(&b, "hello"), 0);	/* only the first failed */
	xalloc_fail_at(0);
	buf_free(&b);
}
END_TEST

/* a big table comes zeroed, writable to its end, counted and failed
 * like any allocation; a small one is an ordinary allocation */
START_TEST(big_tables)
{
	static const size_t sizes[] = { 16, 4096, (size_t)1 << 20,
	    ((size_t)3 << 20) + 40 };
	unsigned char *p;
	size_t i, k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		xalloc_fail_at(0);	/* (the count starts again) */
		ck_assert_ptr_nonnull(p = xbigcalloc(sizes[k], 2));
		ck_assert_uint_eq(xalloc_count(), 1);
		for (i = 0; i < 2 * sizes[k]; i += 997)
			ck_assert_uint_eq(p[i], 0);
		ck_assert_uint_eq(p[2 * sizes[k] - 1], 0);
		memset(p, 0xa5, 2 * sizes[k]);
		xbigfree(p, sizes[k], 2);
		xalloc_fail_at(1);
		ck_assert_ptr_null(xbigcalloc(sizes[k], 2));
		ck_assert_ptr_nonnull(p = xbigcalloc(sizes[k], 2));
		xalloc_fail_at(0);
		xbigfree(p, sizes[k], 2);
	}
	ck_assert_ptr_null(xbigcalloc(SIZE_MAX / 2, 4));
	xbigfree(NULL, (size_t)1 << 20, 1);
}
END_TEST

/* the exit-code contract of DESIGN.md, both dialects */
START_TEST(exit_tables)
{
	ck_assert_int_eq(outcome_exit(OUT_PASS, MTA_QMAIL), 0);
	ck_assert_int_eq(outcome_exit(OUT_HELD, MTA_QMAIL), 99);
	ck_assert_int_eq(outcome_exit(OUT_REJECT, MTA_QMAIL), 100);
	ck_assert_int_eq(outcome_exit(OUT_DEFER, MTA_QMAIL), 111);
	ck_assert_int_eq(outcome_exit(OUT_PASS, MTA_POSTFIX), 0);
	ck_assert_int_eq(outcome_exit(OUT_HELD, MTA_POSTFIX), 0);
	ck_assert_int_eq(outcome_exit(OUT_REJECT, MTA_POSTFIX), 69);
	ck_assert_int_eq(outcome_exit(OUT_DEFER, MTA_POSTFIX), 75);
	ck_assert_int_eq(outcome_exit((enum outcome)42, MTA_POSTFIX), 75);
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");

	tcase_add_test(tc, add_and_nul);
	tcase_add_test(tc, max_is_enforced);
	tcase_add_test(tc, huge_add_overflow);
	tcase_add_test(tc, alloc_failure_injection);
	tcase_add_test(tc, big_tables);
	suite_add_tcase(s, tc);
	tc = tcase_create("util");
	tcase_add_test(tc, exit_tables);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
