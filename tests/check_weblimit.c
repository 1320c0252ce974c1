/*
 * check_weblimit.c - gate/web/limit and gate/web/session: a login
 * attempt is counted before it is checked and given back when it
 * succeeds; a key at its limit keeps its slot while the table fills
 * with others; one account's sessions cannot push another's out, and a
 * session carries the tag it was started with
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/web/limit.h"
#include "gate/web/session.h"

#define WINDOW	900

START_TEST(test_take_counts_before)
{
	struct limit *l = limit_new(16, WINDOW);
	int i;

	ck_assert_ptr_nonnull(l);
	/* five attempts taken at once, none yet checked: the sixth waits */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(limit_take(l, "u:alice", 5, 1000), 0);
	ck_assert_int_eq(limit_take(l, "u:alice", 5, 1000), WINDOW);
	ck_assert_int_eq(limit_take(l, "u:alice", 5, 1100), WINDOW - 100);
	/* one of them succeeded: its attempt comes back */
	limit_give_back(l, "u:alice");
	ck_assert_int_eq(limit_take(l, "u:alice", 5, 1100), 0);
	ck_assert_int_gt(limit_take(l, "u:alice", 5, 1100), 0);
	/* another key is counted apart; the window ends */
	ck_assert_int_eq(limit_take(l, "u:bob", 5, 1100), 0);
	ck_assert_int_eq(limit_take(l, "u:alice", 5, 1000 + WINDOW), 0);
	/* cleared after a success */
	limit_clear(l, "u:alice");
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(limit_take(l, "u:alice", 5, 2000), 0);
	limit_free(l);
}
END_TEST

START_TEST(test_locked_key_keeps_its_slot)
{
	struct limit *l = limit_new(8, WINDOW);
	char k[32];
	int i;

	ck_assert_ptr_nonnull(l);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(limit_take(l, "u:victim", 5, 1000), 0);
	ck_assert_int_gt(limit_take(l, "u:victim", 5, 1000), 0);
	/* a flood of new keys, each newer than the victim's window */
	for (i = 0; i < 4000; i++) {
		snprintf(k, sizeof(k), "u:junk%d", i);
		ck_assert_int_eq(limit_take(l, k, 5, 1001 + i / 100), 0);
	}
	ck_assert_int_gt(limit_take(l, "u:victim", 5, 1100), 0);
	/* its window over, the slot goes to whoever needs it */
	for (i = 0; i < 8; i++) {
		snprintf(k, sizeof(k), "a:10.0.0.%d", i);
		ck_assert_int_eq(limit_take(l, k, 20, 1000 + WINDOW), 0);
	}
	ck_assert_int_eq(limit_take(l, "u:victim", 5, 1000 + WINDOW), 0);
	limit_free(l);
}
END_TEST

/* a count close to its limit outlives a flood of new names: they push
 * out each other first (the fewest attempts go first) */
START_TEST(close_to_limit_outlives_a_flood)
{
	struct limit *l = limit_new(8, WINDOW);
	char k[32];
	int i;

	ck_assert_ptr_nonnull(l);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(limit_take(l, "u:victim", 5, 1000), 0);
	for (i = 0; i < 4000; i++) {
		snprintf(k, sizeof(k), "u:junk%d", i);
		ck_assert_int_eq(limit_take(l, k, 5, 1001 + i / 100), 0);
	}
	/* its fifth attempt, then none */
	ck_assert_int_eq(limit_take(l, "u:victim", 5, 1100), 0);
	ck_assert_int_gt(limit_take(l, "u:victim", 5, 1100), 0);
	limit_free(l);
}
END_TEST

START_TEST(test_sessions_per_user)
{
	struct session_store *s = session_store_new(64);
	struct session_view v;
	unsigned char ta[SESSION_TAG], tb[SESSION_TAG];
	char first[SESSION_HEX], last[SESSION_HEX], bob[SESSION_HEX];
	int i;

	ck_assert_ptr_nonnull(s);
	memset(ta, 'a', sizeof(ta));
	memset(tb, 'b', sizeof(tb));
	ck_assert_int_eq(session_start(s, "bob", tb, 1000, bob), 0);
	ck_assert_int_eq(session_start(s, "alice", ta, 1001, first), 0);
	/* alice logs in again and again: only her own oldest go */
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(session_start(s, "alice", ta, 1002 + i, last),
		    0);
	ck_assert_int_eq(session_find(s, first, 1200, &v), 0);
	ck_assert_int_eq(session_find(s, last, 1200, &v), 1);
	ck_assert_str_eq(v.user, "alice");
	ck_assert_int_eq(memcmp(v.tag, ta, SESSION_TAG), 0);
	ck_assert_int_eq(session_find(s, bob, 1200, &v), 1);
	ck_assert_str_eq(v.user, "bob");
	ck_assert_int_eq(memcmp(v.tag, tb, SESSION_TAG), 0);
	session_store_free(s);
}
END_TEST

/* every lgsid of a Cookie line, each once, only those that could be
 * session ids; more than the caller's room is an error, not a cut */
START_TEST(test_cookie_ids)
{
	char ids[3][SESSION_HEX], a[SESSION_HEX], b[SESSION_HEX], h[600];
	size_t n = 0;

	memset(a, 'a', SESSION_HEX - 1);
	a[SESSION_HEX - 1] = '\0';
	memset(b, '0', SESSION_HEX - 1);
	b[SESSION_HEX - 1] = '\0';
	snprintf(h, sizeof(h), "x=1; lgsid=%s;lgsid = \"%s\" ; lgsid=%s; "
	    "lgsid=short; lgsidx=%s; LGSID=%s; lgsid=%.63sA", a, b, a, b, b,
	    a);
	ck_assert_int_eq(session_cookie_ids(h, "lgsid", ids, 3, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(ids[0], a);
	ck_assert_str_eq(ids[1], b);
	/* a second line adds to the first */
	snprintf(h, sizeof(h), "lgsid=%s", b);
	ck_assert_int_eq(session_cookie_ids(h, "lgsid", ids, 3, &n), 0);
	ck_assert_uint_eq(n, 2);
	a[0] = 'b';
	snprintf(h, sizeof(h), "lgsid=%s", a);
	ck_assert_int_eq(session_cookie_ids(h, "lgsid", ids, 3, &n), 0);
	ck_assert_uint_eq(n, 3);
	a[0] = 'c';
	snprintf(h, sizeof(h), ";;lgsid=%s;", a);
	ck_assert_int_eq(session_cookie_ids(h, "lgsid", ids, 3, &n), -1);
	ck_assert_uint_eq(n, 3);
	n = 0;
	ck_assert_int_eq(session_cookie_ids("", "lgsid", ids, 3, &n), 0);
	ck_assert_int_eq(session_cookie_ids("lgsid", "lgsid", ids, 3, &n), 0);
	ck_assert_int_eq(session_cookie_ids("lgsid=", "lgsid", ids, 3, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

static Suite *
weblimit_suite(void)
{
	Suite *s = suite_create("weblimit");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_take_counts_before);
	tcase_add_test(tc, test_locked_key_keeps_its_slot);
	tcase_add_test(tc, close_to_limit_outlives_a_flood);
	tcase_add_test(tc, test_sessions_per_user);
	tcase_add_test(tc, test_cookie_ids);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(weblimit_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
