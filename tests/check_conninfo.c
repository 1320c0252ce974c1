/*
 * check_conninfo.c - conninfo_mask: both libpq forms come back with
 * their passwords masked; malformed text never shows one
 *
 * The secret in the leak cases is "S3CR3T"; a case fails when the output
 * holds any three bytes of it in a row (a cut or split password counts).
 * Every prefix of every leak case is tried too (an input cut anywhere
 * is the malformed text the masker must survive), except where a prefix
 * is well-formed with a piece of the secret somewhere no password is
 * ("postgresql://u:S3@CR3" names the host CR3).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/xalloc.h"
#include "listcfg/conninfo.h"

/* inputs and exactly what comes back */
static const struct {
	const char *in, *want;
} exact[] = {
	{ "", "" },
	{ "host=/tmp dbname=lg user=x", "host='/tmp' dbname='lg' user='x'" },
	{ "host=/tmp password=s3cret", "host='/tmp' password='********'" },
	{ "  host = /tmp\tport=5432 \n", "host='/tmp' port='5432'" },
	{ "host='/my dir' application_name='it\\'s \\\\ ok'",
	  "host='/my dir' application_name='it\\'s \\\\ ok'" },
	{ "application_name=a\\ b", "application_name='a b'" },
	{ "host=h password= pw sslmode=require",
	  "host='h' password='********' sslmode='require'" },
	{ "password='' user=x", "password='********' user='x'" },
	{ "sslpassword=x sslkey=/k", "sslpassword='********' sslkey='/k'" },
	{ "host=h passwrod=pw", "host='h' ********" },
	{ "host=h password", "host='h' ********" },
	{ "dbname='host=x password=pw'",
	  "dbname='host=\\'x\\' password=\\'********\\''" },
	{ "dbname=postgresql://u:pw@h/db",
	  "dbname='postgresql://u:********@h/db'" },
	{ "postgresql://u:pw@db.example.org:5432/lg?sslmode=require&password=x",
	  "postgresql://u:********@db.example.org:5432/lg?sslmode=require"
	  "&password=********" },
	{ "postgres://u@h/db", "postgres://u@h/db" },
	{ "postgresql://", "postgresql://" },
	{ "postgresql:///lg?host=/run/postgresql",
	  "postgresql:///lg?host=/run/postgresql" },
	{ "postgresql://%2Fvar%2Frun/lg", "postgresql://%2Fvar%2Frun/lg" },
	{ "postgresql://h1:5432,h2,[::1]:5433/lg?target_session_attrs=any",
	  "postgresql://h1:5432,h2,[::1]:5433/lg?target_session_attrs=any" },
	{ "postgresql://:pw@h", "postgresql://:********@h" },
	{ "postgresql://h/lg?user=a@b", "postgresql://********" },
	{ "postgresql://h1,h:12ab/lg", "postgresql://h1,********" },
	{ "postgresql://h/lg?pass%77ord=x", "postgresql://h/lg?********" },
	{ "postgresql://h/lg?sslmode=require&password", "postgresql://h/lg?"
	  "sslmode=require&********" },
	{ "POSTGRESQL://u:pw@h", "POSTGRESQL://u:********@h" },
	/* an empty value left unquoted: libpq reads the next setting as
	 * its value, password included */
	{ "host=h user= password=pw dbname=lg", "host='h' ********" },
	{ "host=h user='' password=pw", "host='h' user='' password='********'" },
	{ "options = -csearch_path=x", "options='-csearch_path=x'" },
	/* a URI's dbname that is a connection string, percent-encoded */
	{ "postgresql://h/lg?dbname=host%3Dx%20password%3Dpw&sslmode=require",
	  "postgresql://h/lg?dbname=********&sslmode=require" },
	{ "postgresql://h/host%3dx%20password%3Dpw", "postgresql://h/********" },
	{ "postgresql://h/postgresql%3A%2F%2Fu%3Apw%40x%2Fy",
	  "postgresql://h/********" },
	{ "postgresql://h/my%2Ddb?dbname=other%20db",
	  "postgresql://h/my%2Ddb?dbname=other%20db" },
	{ "dbname= password=pw user=u",
	  "dbname='password=\\'********\\'' user='u'" },
};

START_TEST(masks_exactly)
{
	char *m = conninfo_mask(exact[_i].in);

	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strcmp(m, exact[_i].want) == 0,
	    "case %d: `%s' gave `%s', want `%s'", _i, exact[_i].in, m,
	    exact[_i].want);
	xfree(m);
}
END_TEST

/* text with the password S3CR3T somewhere, well-formed or not */
static const char *const leaks[] = {
	/* first the ones whose prefixes are tested alone */
	"postgresql://u:S3@CR3T@h/db",
#define FIRST_PREFIXED	1
	"password=S3CR3T",
	"host=x password = S3CR3T",
	"host=x password=\tS3CR3T",
	"password='S3CR3T' host=x",
	"password='S3 CR3T'",
	"password=S3\\ CR3T",
	"password='S3\\'CR3T'",
	"password='S3CR3T",
	"password='S3CR3T\\'",
	"password=S3CR3T\\",
	"host=x password S3CR3T",
	"host=x passwrod=S3CR3T",
	"host=x PASSWORD=S3CR3T",
	"host=x passwo\\rd=S3CR3T",
	"host=x 'password'=S3CR3T",
	"host=x =S3CR3T",
	"host=x\npassword=S3CR3T",
	"sslpassword=S3CR3T",
	"oauth_client_secret=S3CR3T",
	"dbname='host=x password=S3CR3T'",
	"dbname='dbname=\\'password=S3CR3T\\''",
	"dbname='postgresql://u:S3CR3T@h/db'",
	"dbname=postgresql://h/db?password=S3CR3T",
	"postgresql://u:S3CR3T@h/db",
	"postgres://u:S3CR3T@h:5432,h2:5433/db?sslmode=require",
	"postgresql://u:S3CR3T@h/db?password=S3CR3T",
	"postgresql://h/db?password=S3CR3T&sslmode=require",
	"postgresql://h/db?sslmode=require&password=S3CR3T",
	"postgresql://h/db?sslpassword=S3CR3T",
	"postgresql://h/db?pass%77ord=S3CR3T",
	"postgresql://h/db?passwrod=S3CR3T",
	"postgresql://h/db?password==S3CR3T",
	"postgresql://h/db?password",
	"postgresql://h/db?x=1&password=S3CR3T&y=2",
	"postgresql://u:S3/CR3T@h/db",
	"postgresql://u:S3?CR3T@h/db",
	"postgresql://u:S3#CR3T@h/db",
	"postgresql://u:S3CR3T",
	"postgresql://u:S3CR3T@",
	"postgresql://u:S3CR3T@[::1/db",
	"postgresql://u:S3CR3T@[::1]:5432/db",
	"postgresql://u@x:S3CR3T@h/db",
	"postgresql://u:S3%2FCR3T@h/db",
	"POSTGRESQL://u:S3CR3T@h",
	" postgresql://u:S3CR3T@h",
	"postgresql:/u:S3CR3T@h",
	"postgresql//u:S3CR3T@h",
	"host=x user= password=S3CR3T",
	"host=x sslmode=\tpassword=S3CR3T dbname=lg",
	"application_name=sslpassword=S3CR3T",
	"dbname= password=S3CR3T",
	"postgresql://h/lg?dbname=host%3Dx%20password%3DS3CR3T",
	"postgresql://h/host%3Dx%20password%3DS3CR3T",
	"postgresql://h/lg?dbname=postgresql%3A%2F%2Fu%3AS3CR3T%40x%2Fy",
};

/* 1 if s holds three bytes of S3CR3T in a row */
static int
leaked(const char *s)
{
	static const char secret[] = "S3CR3T";
	char tri[4];
	size_t i;

	for (i = 0; i + 3 <= sizeof(secret) - 1; i++) {
		memcpy(tri, secret + i, 3);
		tri[3] = '\0';
		if (strstr(s, tri) != NULL)
			return 1;
	}
	return 0;
}

START_TEST(never_leaks)
{
	const char *in = leaks[_i];
	size_t n = strlen(in), i;
	char *cut, *m;

	/* the whole text and every prefix of it */
	for (i = _i < FIRST_PREFIXED ? n : 0; i <= n; i++) {
		cut = strndup(in, i);
		ck_assert_ptr_nonnull(cut);
		m = conninfo_mask(cut);
		ck_assert_ptr_nonnull(m);
		ck_assert_msg(!leaked(m), "case %d: `%s' gave `%s'", _i, cut,
		    m);
		xfree(m);
		free(cut);
	}
}
END_TEST

START_TEST(out_of_memory_is_null)
{
	char *m;
	unsigned long k;
	int ok = 0;

	for (k = 1; k < 50 && !ok; k++) {
		xalloc_fail_at(k);
		m = conninfo_mask("dbname='host=x password=pw' user=u");
		xalloc_fail_at(0);
		if (m != NULL) {
			ck_assert_str_eq(m, "dbname='host=\\'x\\' "
			    "password=\\'********\\'' user='u'");
			ok = 1;
			xfree(m);
		}
	}
	ck_assert(ok);
}
END_TEST

static Suite *
conninfo_suite(void)
{
	Suite *s = suite_create("conninfo");
	TCase *tc;

	tc = tcase_create("mask");
	tcase_add_loop_test(tc, masks_exactly, 0,
	    sizeof(exact) / sizeof(exact[0]));
	tcase_add_loop_test(tc, never_leaks, 0,
	    sizeof(leaks) / sizeof(leaks[0]));
	tcase_add_test(tc, out_of_memory_is_null);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conninfo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
