/*
 * check_form.c - gate/web/form: urlencoded bodies decode exactly, and
 * malformed ones (bad escapes, NUL bytes, values too long for the
 * buffer) are errors, never cuts or reads past the end
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gate/web/form.h"

START_TEST(test_pairs)
{
	static const char body[] = "a=1&&b=x+y%2Bz&c&d=%e2%82%AC&a=2";
	struct form_iter it;
	char k[16], v[16];

	form_init(&it, body, strlen(body));
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(k, "a");
	ck_assert_str_eq(v, "1");
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(k, "b");
	ck_assert_str_eq(v, "x y+z");
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(k, "c");
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(v, "\xe2\x82\xac");
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(v, "2");
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 0);
	ck_assert_int_eq(form_get(body, strlen(body), "b", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "x y+z");
	ck_assert_int_eq(form_get(body, strlen(body), "zz", v, sizeof(v)), 0);
}
END_TEST

/* a key given twice is neither its first value nor its last: two
 * readers of one request (a proxy, a script, listgate) must not differ
 * on which post or which action it names */
START_TEST(test_get_twice)
{
	static const char *const twice[] = {
		"a=1&b=2&a=2", "a=1&a=1", "a=&a", "a=1&%61=2", "a=x&b=y&a=%zz",
	};
	static const char once[] = "a=1&ab=2&b=3&A=4&aa=5";
	size_t i;
	char v[16];

	for (i = 0; i < sizeof(twice) / sizeof(twice[0]); i++) {
		ck_assert_msg(form_get(twice[i], strlen(twice[i]), "a", v,
		    sizeof(v)) == FORM_TWICE, "%s", twice[i]);
		ck_assert_str_eq(v, "");
	}
	ck_assert_int_eq(form_get(once, strlen(once), "a", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "1");
	/* a bad first value is malformed before any second one */
	ck_assert_int_eq(form_get("a=%zz&a=1", 9, "a", v, sizeof(v)), -1);
}
END_TEST

/* form_get decodes only the value asked for: a long other value is no
 * error (a CSRF token beside the action) */
START_TEST(test_get_only_asked)
{
	static const char body[] = "csrf=0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef&action=approve";
	char v[16];

	ck_assert_int_eq(form_get(body, strlen(body), "action", v, sizeof(v)),
	    1);
	ck_assert_str_eq(v, "approve");
	ck_assert_int_eq(form_get(body, strlen(body), "csrf", v, sizeof(v)),
	    -1);
}
END_TEST

static const char *const bad[] = {
	"a=%", "a=%4", "a=%zz", "a=%00", "a=b%00c", "%00=1",
	"a=0123456789abcdef",	/* 16 bytes: no room for the NUL */
};

START_TEST(test_malformed)
{
	struct form_iter it;
	char k[16], v[16];
	const char *s = bad[_i];

	form_init(&it, s, strlen(s));
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), -1);
}
END_TEST

/* the length given is the end: bytes after it are never read */
START_TEST(test_bounded)
{
	char buf[8] = { 'a', '=', '%', '4', '1', 'X', 'Y', 'Z' };
	struct form_iter it;
	char k[8], v[8];

	form_init(&it, buf, 4);		/* "a=%4": a cut escape */
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), -1);
	form_init(&it, buf, 5);
	ck_assert_int_eq(form_next(&it, k, sizeof(k), v, sizeof(v)), 1);
	ck_assert_str_eq(v, "A");
}
END_TEST

static Suite *
form_suite(void)
{
	Suite *s = suite_create("form");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_pairs);
	tcase_add_test(tc, test_get_twice);
	tcase_add_test(tc, test_get_only_asked);
	tcase_add_loop_test(tc, test_malformed, 0,
	    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(form_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
