/*
 * check_settings.c - gate/app/settings: listcfg's values as the core's
 * types; listcfg's defaults are the core's defaults
 *
 * Each test loads its configuration from a fresh mkdtemp directory.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate/app/settings.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"

static char tmpdir[PATH_MAX];

static void
setup(void)
{
	char p[PATH_MAX + 8];
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_settings.XXXXXX",
	    t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(p, sizeof(p), "%s/lists", tmpdir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

static void
teardown(void)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		execl("/bin/rm", "rm", "-rf", "--", tmpdir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

/* write text to tmpdir/rel */
static void
write_file(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* load the global settings and list t */
static void
load(struct listcfg_global *g, struct listcfg_list *l)
{
	char err[1024];

	ck_assert_msg(listcfg_load_global(tmpdir, g, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_msg(listcfg_load_list(g, "t", l, err, sizeof(err)) == 0,
	    "%s", err);
}

START_TEST(defaults_are_the_cores)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct bayes_params want_b, got_b;
	struct tok_opts want_t, got_t, null_t;

	load(&g, &l);
	memset(&want_b, 0, sizeof(want_b));
	memset(&got_b, 0, sizeof(got_b));
	bayes_params_default(&want_b);
	settings_bayes(&l, &got_b);
	ck_assert_double_eq(got_b.robs, want_b.robs);
	ck_assert_double_eq(got_b.robx, want_b.robx);
	ck_assert_double_eq(got_b.min_dev, want_b.min_dev);
	ck_assert_uint_eq(got_b.max_tokens, want_b.max_tokens);
	ck_assert_int_eq(memcmp(&got_b, &want_b, sizeof(want_b)), 0);

	/* zeroed first, so padding compares equal too */
	memset(&want_t, 0, sizeof(want_t));
	memset(&got_t, 0, sizeof(got_t));
	memset(&null_t, 0, sizeof(null_t));
	tok_opts_default(&want_t);
	settings_tok_opts(&l, &got_t);
	settings_tok_opts(NULL, &null_t);
	ck_assert_uint_eq(got_t.lim.max_scan, want_t.lim.max_scan);
	ck_assert_int_eq(memcmp(&got_t, &want_t, sizeof(want_t)), 0);
	ck_assert_int_eq(memcmp(&null_t, &want_t, sizeof(want_t)), 0);

	ck_assert_int_eq(settings_mta(&g), MTA_QMAIL);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
}
END_TEST

START_TEST(list_values_carried)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct bayes_params b;
	struct tok_opts t, d;

	write_file("listgate.conf", "mta = postfix\n");
	write_file("lists/t.conf", "max_scan_bytes = 2048\nrobs = 0.1\n"
	    "robx = 0.7\nmin_dev = 0.2\nmax_tokens = 150\n");
	load(&g, &l);
	settings_bayes(&l, &b);
	ck_assert_double_eq(b.robs, 0.1);
	ck_assert_double_eq(b.robx, 0.7);
	ck_assert_double_eq(b.min_dev, 0.2);
	ck_assert_uint_eq(b.max_tokens, 150);
	memset(&t, 0, sizeof(t));
	memset(&d, 0, sizeof(d));
	settings_tok_opts(&l, &t);
	tok_opts_default(&d);
	ck_assert_uint_eq(t.lim.max_scan, 2048);
	/* nothing else differs from the defaults */
	d.lim.max_scan = 2048;
	ck_assert_int_eq(memcmp(&t, &d, sizeof(d)), 0);
	ck_assert_int_eq(settings_mta(&g), MTA_POSTFIX);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
}
END_TEST

/* each of listcfg's mta choices is the core's dialect of that name */
START_TEST(mta_choices_are_the_cores)
{
	const struct keys_row *k = keys_find(KEYS_GLOBAL, "mta");
	struct listcfg_global g;
	size_t i;

	ck_assert_ptr_nonnull(k);
	memset(&g, 0, sizeof(g));
	for (i = 0; k->choices[i] != NULL; i++) {
		g.mta = k->values != NULL ? k->values[i] : (int)i;
		ck_assert_str_eq(mta_name(settings_mta(&g)), k->choices[i]);
	}
	ck_assert_uint_eq(i, 2);
}
END_TEST

static Suite *
settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *tc;

	tc = tcase_create("convert");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults_are_the_cores);
	tcase_add_test(tc, list_values_carried);
	tcase_add_test(tc, mta_choices_are_the_cores);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(settings_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
