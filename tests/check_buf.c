/*
 * check_buf.c - the bounded buffer and the allocator's failure injection
 */
#include "config.h"

#include <check.h>
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
