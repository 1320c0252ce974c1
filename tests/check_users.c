/*
 * check_users.c - listcfg/users: users.conf is read strictly (FILE:LINE
 * errors, mode 0600 enforced), written atomically, and an account sees
 * only its lists; every password pwhash takes hashes
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/web/pwhash.h"
#include "listcfg/users.h"

#define HASH "$y$j9T$abcdefghijklmnopqrstu.$ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef"

static char dir[64], path[128];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lg-users.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/users.conf", dir);
}

static void
teardown(void)
{
	char lock[160];

	unlink(path);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	unlink(lock);
	rmdir(dir);
}

static void
write_file(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

START_TEST(test_load)
{
	struct users u;
	const struct users_entry *e;
	char err[512];
	int missing;

	write_file("# accounts\n\nbob:" HASH ":all\n"
	    "  alice:" HASH ":dev,announce,dev  \n", 0600);
	ck_assert_int_eq(users_load(path, &u, &missing, err, sizeof(err)), 0);
	ck_assert_int_eq(missing, 0);
	ck_assert_uint_eq(u.n, 2);
	e = users_find(&u, "alice");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->nlists, 2);	/* the duplicate dropped */
	ck_assert_int_eq(users_may(e, "dev"), 1);
	ck_assert_int_eq(users_may(e, "announce"), 1);
	ck_assert_int_eq(users_may(e, "other"), 0);
	ck_assert_int_eq(users_may(e, "../dev"), 0);
	e = users_find(&u, "bob");
	ck_assert_int_eq(users_may(e, "anything"), 1);
	ck_assert_int_eq(users_may(e, "Bad"), 0);
	ck_assert_ptr_null(users_find(&u, "carol"));
	users_free(&u);
}
END_TEST

START_TEST(test_missing)
{
	struct users u;
	char err[512];
	int missing;

	ck_assert_int_eq(users_load(path, &u, &missing, err, sizeof(err)), 0);
	ck_assert_int_eq(missing, 1);
	ck_assert_uint_eq(u.n, 0);
}
END_TEST

START_TEST(test_mode)
{
	struct users u;
	char err[512];
	int missing;

	write_file("bob:" HASH ":all\n", 0640);
	ck_assert_int_eq(users_load(path, &u, &missing, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "mode 0640"));
	ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

static const struct {
	const char *text, *want;
} bad[] = {
	{ "bob:" HASH "\n", ":1: expected NAME:HASH:LISTS" },
	{ "bob:" HASH ":all:x\n", ":1: expected" },
	{ "\n-bob:" HASH ":all\n", ":2: bad user name" },
	{ "bob:plain:all\n", ":1: user bob: the password hash is not" },
	{ "bob:$1$abc$def:all\n", ":1: user bob: the password hash is not" },
	{ "bob:" HASH ":dev,../etc\n", ":1: user bob: bad list name `../etc'" },
	{ "bob:" HASH ":dev,,x\n", ":1: user bob: bad list name `'" },
	{ "bob:" HASH ":all\nbob:" HASH ":dev\n", ":2: user bob is already" },
	{ "bob:" HASH ":a\0b\n", ":1: NUL byte" },
	/* the hash in the name's place: the error names the line, and
	 * shows no hash (test_bad looks for none in every message) */
	{ HASH ":bob:all\n", ":1: bad user name in the first field" },
	{ "# x\n" HASH ":all:x\n", ":2: bad user name" },
	{ "bob" HASH ":dev:x\n", ":1: bad user name" },
	{ "bob:" HASH ":dev," HASH "\n", ":1: user bob: bad list name (want" },
	/* CR line ends: one line, a comment (user add's head) */
	{ "# accounts\rbob:" HASH ":all\ralice:" HASH ":dev\r",
	  ":1: carriage return inside the line" },
	/* a byte order mark before the head comment, or an account */
	{ "\xef\xbb\xbf# accounts: NAME:HASH:LISTS\nbob:" HASH ":all\n",
	  ":1: the file starts with a byte order mark" },
	{ "\xef\xbb\xbf" "bob:" HASH ":all\n",
	  ":1: the file starts with a byte order mark" },
};

START_TEST(test_bad)
{
	struct users u;
	char err[512];
	int missing;
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	/* write through the NUL of the last case */
	fwrite(bad[_i].text, 1, strlen(bad[_i].text) +
	    (strstr(bad[_i].want, "NUL") ? 3 : 0), f);
	fclose(f);
	chmod(path, 0600);
	ck_assert_int_eq(users_load(path, &u, &missing, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, bad[_i].want) != NULL, "%s", err);
	/* no piece of a password hash in any error */
	ck_assert_msg(strstr(err, "$y$j9T") == NULL &&
	    strstr(err, "ABCDEFGH") == NULL && strstr(err, "abcdefgh") ==
	    NULL, "a hash in: %s", err);
	ck_assert_uint_eq(u.n, 0);
}
END_TEST

START_TEST(test_set_save)
{
	struct users u, v;
	char err[512];
	int missing;
	struct stat st;

	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(users_set(&u, "zed", HASH, "dev", 0, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(users_set(&u, "amy", HASH, "all", 0, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(users_set(&u, "amy", HASH, "dev", 0, err,
	    sizeof(err)), 1);
	ck_assert_int_eq(users_set(&u, "amy", HASH, "x,y", 1, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(users_set(&u, "b:c", HASH, "dev", 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(users_set(&u, "d", "secret", "dev", 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(users_set(&u, "d", HASH, "dev,Big", 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(users_save(path, &u, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(users_load(path, &v, &missing, err, sizeof(err)), 0);
	ck_assert_uint_eq(v.n, 2);
	ck_assert_int_eq(users_may(users_find(&v, "amy"), "y"), 1);
	ck_assert_int_eq(users_may(users_find(&v, "amy"), "dev"), 0);
	ck_assert_int_eq(users_del(&v, "zed"), 1);
	ck_assert_int_eq(users_del(&v, "zed"), 0);
	ck_assert_uint_eq(v.n, 1);
	users_free(&u);
	users_free(&v);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_int_eq(users_name_ok("alice"), 1);
	ck_assert_int_eq(users_name_ok("A.b_c@d+e-f"), 1);
	ck_assert_int_eq(users_name_ok(""), 0);
	ck_assert_int_eq(users_name_ok(".a"), 0);
	ck_assert_int_eq(users_name_ok("a:b"), 0);
	ck_assert_int_eq(users_name_ok("a b"), 0);
	ck_assert_int_eq(users_name_ok("a\n"), 0);
	ck_assert_int_eq(users_name_ok(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	    0);
}
END_TEST

/* the longest password pwhash takes hashes and checks (at 1024 bytes
 * crypt_r refused everything over 511, and `listgate user add` said
 * only "yescrypt hashing failed"); one byte more is refused, saying so */
START_TEST(test_pwhash_longest)
{
	char pw[PWHASH_MAX_PASSWORD + 2], hash[PWHASH_MAX], err[256];

	memset(pw, 'p', sizeof(pw));
	pw[PWHASH_MAX_PASSWORD] = '\0';
	err[0] = '\0';
	ck_assert_msg(pwhash_make(pw, hash, sizeof(hash), err,
	    sizeof(err)) == 0, "%u bytes: %s", (unsigned)PWHASH_MAX_PASSWORD,
	    err);
	ck_assert_int_eq(users_hash_ok(hash), 1);
	ck_assert_int_eq(pwhash_check(pw, hash), 1);
	pw[PWHASH_MAX_PASSWORD - 1] = 'q';
	ck_assert_int_eq(pwhash_check(pw, hash), 0);
	pw[PWHASH_MAX_PASSWORD] = 'p';
	pw[PWHASH_MAX_PASSWORD + 1] = '\0';
	ck_assert_int_eq(pwhash_make(pw, hash, sizeof(hash), err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "password longer than") != NULL, "%s", err);
}
END_TEST

static Suite *
users_suite(void)
{
	Suite *s = suite_create("users");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_missing);
	tcase_add_test(tc, test_mode);
	tcase_add_loop_test(tc, test_bad, 0,
	    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_set_save);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_pwhash_longest);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(users_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
