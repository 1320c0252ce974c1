/*
 * check_json.c - gate/web/json: string members of a request's object,
 * strictly: valid JSON only, escapes and surrogate pairs decoded, NUL
 * and invalid UTF-8 refused, nesting bounded, nothing read past the end
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gate/web/json.h"

static int
get(const char *s, const char *key, char *out, size_t outsz)
{
	return json_get_str(s, strlen(s), key, out, outsz, NULL);
}

static const struct {
	const char *in, *key, *want;
	int rc;
} cases[] = {
	{ "{\"action\": \"approve\"}", "action", "approve", 1 },
	{ " {\"note\":\"x\",\"action\":\"reject\"} \n", "action", "reject", 1 },
	{ "{\"a\": [1, {\"b\": [true, false, null]}, -1.5e3], \"action\": "
	  "\"discard\"}", "action", "discard", 1 },
	{ "{\"action\": \"a\\u00e9\\ud83d\\ude00\\n\\\"\"}", "action",
	  "a\xc3\xa9\xf0\x9f\x98\x80\n\"", 1 },
	{ "{}", "action", "", 0 },
	{ "{\"other\": \"approve\"}", "action", "", 0 },
	{ "{\"action\": 1}", "action", "", 0 },
	/* two of one name are neither the first nor the last, whatever
	 * the second's value; the object must still be valid */
	{ "{\"action\": \"approve\", \"action\": \"reject\"}", "action",
	  "", JSON_TWICE },
	{ "{\"action\": \"approve\", \"action\": \"approve\"}", "action",
	  "", JSON_TWICE },
	{ "{\"action\": \"approve\", \"x\": 1, \"action\": [1]}", "action",
	  "", JSON_TWICE },
	{ "{\"action\": 1, \"action\": \"reject\"}", "action", "",
	  JSON_TWICE },
	{ "{\"action\": \"approve\", \"action\": \"reject\"", "action",
	  "", -1 },
	{ "{\"note\": \"a\", \"note\": \"b\", \"action\": \"reject\"}",
	  "action", "reject", 1 },
	/* malformed */
	{ "", "action", "", -1 },
	{ "[\"action\"]", "action", "", -1 },
	{ "{\"action\": \"approve\"", "action", "", -1 },
	{ "{\"action\": \"approve\"} x", "action", "", -1 },
	{ "{\"action\": \"approve\",}", "action", "", -1 },
	{ "{action: \"approve\"}", "action", "", -1 },
	{ "{\"action\": \"a\\u0000b\"}", "action", "", -1 },
	{ "{\"action\": \"\\ud800\"}", "action", "", -1 },
	{ "{\"action\": \"\\udc00\"}", "action", "", -1 },
	{ "{\"action\": \"\\x41\"}", "action", "", -1 },
	{ "{\"action\": \"\xc3\x28\"}", "action", "", -1 },
	{ "{\"action\": \"a\tb\"}", "action", "", -1 },
	{ "{\"a\": 01}", "action", "", -1 },
	{ "{\"a\": tru}", "action", "", -1 },
	{ "{\"action\": \"0123456789abcdef\"}", "action", "", -1 },
};

START_TEST(test_cases)
{
	char out[16];

	ck_assert_int_eq(get(cases[_i].in, cases[_i].key, out, sizeof(out)),
	    cases[_i].rc);
	if (cases[_i].rc == 1 || cases[_i].rc == JSON_TWICE)
		ck_assert_str_eq(out, cases[_i].want);
}
END_TEST

START_TEST(test_not_string_flag)
{
	const char *s = "{\"action\": {\"x\": 1}}";
	char out[16];
	int notstr = 0;

	ck_assert_int_eq(json_get_str(s, strlen(s), "action", out, sizeof(out),
	    &notstr), 0);
	ck_assert_int_eq(notstr, 1);
}
END_TEST

/* nesting beyond JSON_MAX_DEPTH is refused, not recursed into */
START_TEST(test_depth)
{
	char s[400];
	size_t n = 0;
	int i;

	s[n++] = '{';
	memcpy(s + n, "\"a\":", 4);
	n += 4;
	for (i = 0; i < 100; i++)
		s[n++] = '[';
	for (i = 0; i < 100; i++)
		s[n++] = ']';
	s[n++] = '}';
	ck_assert_int_eq(json_get_str(s, n, "a", NULL, 0, NULL), -1);
}
END_TEST

/* every prefix of a valid body is malformed, and read only up to its
 * length (the sanitizer build catches a read past it) */
START_TEST(test_prefixes)
{
	static const char s[] = "{\"x\": [1, 2.5e-3, \"\\u00e9\"], \"action\": "
	    "\"approve\"}";
	char out[16], *copy;
	size_t n;

	for (n = 0; n < sizeof(s) - 1; n++) {
		copy = malloc(n + 1);
		memcpy(copy, s, n);
		ck_assert_int_eq(json_get_str(copy, n, "action", out,
		    sizeof(out), NULL), -1);
		free(copy);
	}
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_cases, 0,
	    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_not_string_flag);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_prefixes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
