/*
 * check_site.c - gate/app/site: which lists use the site store, and
 * opening a list's token files with it (real Kyoto Cabinet files)
 *
 * Each test works in a fresh mkdtemp configuration directory.
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

#include "db/tokdb.h"
#include "gate/app/site.h"
#include "gate/tok.h"
#include "listcfg/listcfg.h"

static char tmpdir[PATH_MAX];

static void
setup(void)
{
	char p[PATH_MAX + 16];
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_site.XXXXXX",
	    t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(p, sizeof(p), "%s/lists", tmpdir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/tokens", tmpdir);
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

static void
write_file(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* tokens/NAME.kch with n spam posts "cheap pills" and n ham "kernel" */
static void
make_store(const char *name, int n)
{
	char p[PATH_MAX + 64], err[512];
	struct tokdb *db;
	struct tok_opts to;
	struct toklist *tl;
	static const char spam[] = "Subject: x\n\ncheap pills\n";
	static const char ham[] = "Subject: y\n\nkernel patch\n";
	int i;

	snprintf(p, sizeof(p), "%s/tokens/%s.kch", tmpdir, name);
	ck_assert_int_eq(tokdb_open(p, TOKDB_WRITE | TOKDB_CREATE, 1000, &db,
	    err, sizeof(err)), 0);
	tok_opts_default(&to);
	ck_assert_ptr_nonnull(tl = toklist_new(to.max_tokens));
	ck_assert_int_eq(tokdb_begin(db), 0);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(tok_post((const unsigned char *)spam,
		    sizeof(spam) - 1, &to, tl), 0);
		ck_assert_int_ge(tokdb_learn(db, tl, 1, 1, 20000), 0);
		ck_assert_int_eq(tok_post((const unsigned char *)ham,
		    sizeof(ham) - 1, &to, tl), 0);
		ck_assert_int_ge(tokdb_learn(db, tl, 0, 1, 20000), 0);
	}
	ck_assert_int_eq(tokdb_commit(db), 0);
	tokdb_close(db);
	toklist_free(tl);
}

/* load the configuration as written */
static void
load(struct listcfg_global *g, struct listcfg_list *l, const char *list)
{
	char err[512];

	ck_assert_msg(listcfg_load_global(tmpdir, g, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_msg(listcfg_load_list(g, list, l, err, sizeof(err)) == 0,
	    "%s", err);
}

static void
unload(struct listcfg_global *g, struct listcfg_list *l)
{
	listcfg_free_list(l);
	listcfg_free_global(g);
}

/* spam count of "pills" through cc, the list's own plus the site's */
static double
pills(const struct classify_counts *cc)
{
	struct classify_count c;

	ck_assert_int_ge(cc->get(cc->ctx, "pills", 5, &c), 0);
	return c.spam + c.site_spam;
}

START_TEST(applies)
{
	struct listcfg_global g;
	struct listcfg_list l;

	write_file("listgate.conf", "tokens_dir = tokens\n");
	load(&g, &l, "dev");
	ck_assert_int_eq(site_applies(&g, &l), 0);	/* no site_list */
	unload(&g, &l);
	write_file("listgate.conf", "tokens_dir = tokens\nsite_list = site\n");
	load(&g, &l, "dev");
	ck_assert_int_eq(site_applies(&g, &l), 1);
	unload(&g, &l);
	load(&g, &l, "site");				/* itself */
	ck_assert_int_eq(site_applies(&g, &l), 0);
	unload(&g, &l);
	write_file("lists/dev.conf", "site_weight = 0\n");
	load(&g, &l, "dev");				/* turned off */
	ck_assert_int_eq(site_applies(&g, &l), 0);
	unload(&g, &l);
	write_file("lists/dev.conf", "site_weight = 0.5\n");
	load(&g, &l, "dev");
	ck_assert_int_eq(site_applies(&g, &l), 1);
	unload(&g, &l);
}
END_TEST

START_TEST(open_combines)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct site_stores s;
	struct classify_counts cc;
	char err[1024];

	write_file("listgate.conf", "tokens_dir = tokens\nsite_list = site\n");
	make_store("site", 6);
	make_store("dev", 2);
	load(&g, &l, "dev");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(s.own);
	ck_assert_ptr_nonnull(s.site);
	ck_assert_ptr_nonnull(cc.site_msgcounts);
	ck_assert_double_eq(cc.site_weight, LG_DEFAULT_SITE_WEIGHT);
	ck_assert_double_eq(pills(&cc), 2 + 6);
	site_close(&s);
	unload(&g, &l);

	/* the site list itself: its own file alone */
	load(&g, &l, "site");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_null(s.site);
	ck_assert_ptr_null(cc.site_msgcounts);
	ck_assert_double_eq(pills(&cc), 6);
	site_close(&s);
	unload(&g, &l);

	/* site_weight 0: the list alone */
	write_file("lists/dev.conf", "site_weight = 0\n");
	load(&g, &l, "dev");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_null(s.site);
	ck_assert_double_eq(pills(&cc), 2);
	site_close(&s);
	unload(&g, &l);
}
END_TEST

START_TEST(open_without_own_file)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct site_stores s;
	struct classify_counts cc;
	char err[1024];

	write_file("listgate.conf", "tokens_dir = tokens\nsite_list = site\n");
	/* neither file: the list's own is missing, as without a site */
	load(&g, &l, "new");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)),
	    TOKDB_ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "new.kch does not exist"));
	unload(&g, &l);
	/* the site store stands in for the list's missing file */
	make_store("site", 3);
	load(&g, &l, "new");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_null(s.own);
	ck_assert_ptr_nonnull(cc.site_msgcounts);
	ck_assert_double_eq(pills(&cc), 3);
	site_close(&s);
	unload(&g, &l);
	/* unless the list turned it off */
	write_file("lists/new.conf", "site_weight = 0\n");
	load(&g, &l, "new");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)),
	    TOKDB_ENOENT);
	unload(&g, &l);
}
END_TEST

START_TEST(open_without_site_file)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct site_stores s;
	struct classify_counts cc;
	char err[1024];

	/* no site store yet: the list's own file alone */
	write_file("listgate.conf", "tokens_dir = tokens\nsite_list = site\n");
	make_store("dev", 2);
	load(&g, &l, "dev");
	ck_assert_int_eq(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_null(s.site);
	ck_assert_ptr_null(cc.site_msgcounts);
	ck_assert_double_eq(pills(&cc), 2);
	site_close(&s);
	unload(&g, &l);
}
END_TEST

START_TEST(open_bad_site_file_fails)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct site_stores s;
	struct classify_counts cc;
	char err[1024];

	/* a site store that cannot be read fails like the list's own */
	write_file("listgate.conf", "tokens_dir = tokens\nsite_list = site\n");
	make_store("dev", 2);
	write_file("tokens/site.kch", "this is no token file\n");
	load(&g, &l, "dev");
	ck_assert_int_lt(site_open(&g, &l, &s, &cc, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "site.kch"));
	ck_assert_ptr_null(s.own);
	ck_assert_ptr_null(s.site);
	unload(&g, &l);
}
END_TEST

static Suite *
site_suite(void)
{
	Suite *s = suite_create("site");
	TCase *tc;

	tc = tcase_create("open");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, applies);
	tcase_add_test(tc, open_combines);
	tcase_add_test(tc, open_without_own_file);
	tcase_add_test(tc, open_without_site_file);
	tcase_add_test(tc, open_bad_site_file_fails);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(site_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
