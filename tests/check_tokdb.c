/*
 * check_tokdb.c - the token store: counts, transactions, versions, locks
 *
 * Each test gets a fresh temporary directory (removed afterwards); the
 * in-memory twin ":" is tested alongside the file store.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kclangc.h>

#include "db/tokdb.h"
#include "gate/tok.h"

static char tmpdir[256];
static char dbpath[512];

/* fresh directory per test */
static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/check_tokdb.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof(dbpath), "%s/list.kch", tmpdir);
}

/* remove the directory and what the tests left in it */
static void
teardown(void)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/list.kch", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/list.kch.wal", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/bad.kch", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/saved.kch", tmpdir);
	unlink(p);
	rmdir(tmpdir);
}

/* a toklist from a NULL-terminated list of strings */
static struct toklist *
mklist(const char *const *toks)
{
	struct toklist *tl = toklist_new(1000);

	ck_assert_ptr_nonnull(tl);
	for (; *toks; toks++)
		ck_assert_int_ge(toklist_add(tl, *toks, strlen(*toks)), 0);
	return tl;
}

/* counts of one token, asserting no error */
static struct tokcount
cnt(struct tokdb *db, const char *tok)
{
	struct tokcount c;

	ck_assert_int_ge(tokdb_get(db, tok, strlen(tok), &c), 0);
	return c;
}

/* open a writer, creating the file, asserting success */
static struct tokdb *
open_w(const char *path)
{
	struct tokdb *db;
	char err[1024];
	int r;

	r = tokdb_open(path, TOKDB_WRITE | TOKDB_CREATE, 0, &db, err,
	    sizeof(err));
	ck_assert_msg(r == 0, "open %s: %s", path, err);
	return db;
}

static const char *const post_a[] = { "viagra", "cheap", "subject:buy",
	"url:example.com", NULL };
static const char *const post_b[] = { "cheap", "hello", "meeting", NULL };

/* learn then unlearn gives back every count, record and message count */
static void
learn_unlearn(const char *path)
{
	struct toklist *a = mklist(post_a), *b = mklist(post_b);
	struct tokdb *db = open_w(path);
	struct tokcount c;
	uint32_t ns, nh;
	long n;

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, b, 0, 1, 100), 3);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_ntokens(db), 3);

	ck_assert_int_eq(tokdb_begin(db), 0);
	n = tokdb_learn(db, a, 1, 1, 101);
	ck_assert_int_eq(n, 3);			/* "cheap" was known */
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 102), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	c = cnt(db, "cheap");
	ck_assert_uint_eq(c.spam, 2);
	ck_assert_uint_eq(c.ham, 1);
	ck_assert_uint_eq(c.day, 102);
	c = cnt(db, "viagra");
	ck_assert_uint_eq(c.spam, 2);
	ck_assert_uint_eq(c.ham, 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 2);
	ck_assert_uint_eq(nh, 1);
	ck_assert_int_eq(tokdb_ntokens(db), 6);

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, -1, 103), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, -1, 103), 3);	/* removed */
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_get(db, "viagra", 6, &c), 0);
	ck_assert_uint_eq(c.spam + c.ham, 0);
	c = cnt(db, "cheap");
	ck_assert_uint_eq(c.spam, 0);
	ck_assert_uint_eq(c.ham, 1);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 0);
	ck_assert_uint_eq(nh, 1);
	ck_assert_int_eq(tokdb_ntokens(db), 3);

	/* never below zero: unlearning again changes nothing */
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, -1, 104), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	c = cnt(db, "cheap");
	ck_assert_uint_eq(c.ham, 1);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 0);
	ck_assert_int_eq(tokdb_ntokens(db), 3);

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, b, 0, -1, 104), 3);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_ntokens(db), 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns + nh, 0);
	tokdb_close(db);
	toklist_free(a);
	toklist_free(b);
}

START_TEST(learn_unlearn_file)
{
	learn_unlearn(dbpath);
}
END_TEST

START_TEST(learn_unlearn_mem)
{
	learn_unlearn(":");
}
END_TEST

/* many tokens, learnt in several posts, then all unlearnt */
START_TEST(learn_unlearn_many)
{
	struct tokdb *db = open_w(dbpath);
	struct toklist *tl = toklist_new(1000);
	char tok[32];
	int post, i;
	struct tokcount c;

	ck_assert_int_eq(tokdb_begin(db), 0);
	for (post = 0; post < 50; post++) {
		toklist_reset(tl);
		for (i = 0; i < 200; i++) {
			snprintf(tok, sizeof(tok), "t%d", (post * 37 + i) % 700);
			toklist_add(tl, tok, strlen(tok));
		}
		ck_assert_int_ge(tokdb_learn(db, tl, post & 1, 1, 7), 0);
	}
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_gt(tokdb_ntokens(db), 100);
	c = cnt(db, "t0");
	ck_assert_uint_gt(c.spam + c.ham, 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	for (post = 49; post >= 0; post--) {
		toklist_reset(tl);
		for (i = 0; i < 200; i++) {
			snprintf(tok, sizeof(tok), "t%d", (post * 37 + i) % 700);
			toklist_add(tl, tok, strlen(tok));
		}
		ck_assert_int_ge(tokdb_learn(db, tl, post & 1, -1, 8), 0);
	}
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_ntokens(db), 0);
	tokdb_close(db);
	toklist_free(tl);
}
END_TEST

/* counts survive close and reopen as a reader */
START_TEST(persist_and_read)
{
	struct toklist *a = mklist(post_a);
	struct tokdb *db = open_w(dbpath);
	struct tokcount c;
	char err[1024];
	uint32_t ns, nh;

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 5), 4);
	ck_assert_int_eq(tokdb_commit(db), 0);
	tokdb_close(db);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	c = cnt(db, "subject:buy");
	ck_assert_uint_eq(c.spam, 1);
	ck_assert_uint_eq(c.day, 5);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 1);
	ck_assert_int_eq(tokdb_begin(db), -1);	/* read-only */
	tokdb_close(db);
	toklist_free(a);
}
END_TEST

/* an aborted transaction leaves no trace */
static void
abort_rolls_back(const char *path)
{
	struct toklist *a = mklist(post_a), *b = mklist(post_b);
	struct tokdb *db = open_w(path);
	struct tokcount c;
	uint32_t ns, nh;
	int64_t pos;

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, b, 0, 1, 1), 3);
	ck_assert_int_eq(tokdb_set_pos(db, 10), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 2), 3);
	ck_assert_int_eq(tokdb_learn(db, b, 0, -1, 2), 2);
	ck_assert_int_eq(tokdb_set_pos(db, 20), 0);
	ck_assert_int_eq(tokdb_abort(db), 0);
	ck_assert_int_eq(tokdb_get(db, "viagra", 6, &c), 0);
	c = cnt(db, "hello");
	ck_assert_uint_eq(c.ham, 1);
	c = cnt(db, "cheap");
	ck_assert_uint_eq(c.ham, 1);
	ck_assert_uint_eq(c.spam, 0);
	ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
	ck_assert_uint_eq(ns, 0);
	ck_assert_uint_eq(nh, 1);
	ck_assert_int_eq(tokdb_get_pos(db, &pos), 0);
	ck_assert_int_eq(pos, 10);
	ck_assert_int_eq(tokdb_ntokens(db), 3);
	/* learning outside a transaction is refused */
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 3), -1);
	ck_assert_int_eq(tokdb_set_pos(db, 30), -1);
	ck_assert_int_eq(tokdb_commit(db), -1);
	tokdb_close(db);
	toklist_free(a);
	toklist_free(b);
}

START_TEST(abort_file)
{
	abort_rolls_back(dbpath);
}
END_TEST

START_TEST(abort_mem)
{
	abort_rolls_back(":");
}
END_TEST

/* closing with an open transaction rolls it back */
START_TEST(close_in_transaction)
{
	struct toklist *a = mklist(post_a);
	struct tokdb *db = open_w(dbpath);
	char err[1024];

	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 2), 4);
	tokdb_close(db);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_ntokens(db), 0);
	tokdb_close(db);
	toklist_free(a);
}
END_TEST

/* the journal position persists, 64 bits wide */
START_TEST(journal_pos)
{
	struct tokdb *db = open_w(dbpath);
	char err[1024];
	int64_t pos;

	ck_assert_int_eq(tokdb_get_pos(db, &pos), 0);
	ck_assert_int_eq(pos, 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_set_pos(db, 0x123456789abLL), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	tokdb_close(db);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_get_pos(db, &pos), 0);
	ck_assert(pos == 0x123456789abLL);
	ck_assert_int_eq(tokdb_ntokens(db), 0);	/* meta not counted */
	tokdb_close(db);
}
END_TEST

/* missing file: readers and plain writers get ENOENT, nothing created */
START_TEST(missing_file)
{
	struct tokdb *db;
	char err[1024];
	struct stat st;

	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_ENOENT);
	ck_assert_ptr_null(db);
	ck_assert_ptr_nonnull(strstr(err, dbpath));
	ck_assert_ptr_nonnull(strstr(err, "train"));
	/* the journal has it all: sync or rebuild makes the file again */
	ck_assert_ptr_nonnull(strstr(err, "`listgate sync` or `listgate "
	    "rebuild --list list` recreates it from the journal"));
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_WRITE, 100, &db, err,
	    sizeof(err)), TOKDB_ENOENT);
	ck_assert_int_eq(stat(dbpath, &st), -1);
}
END_TEST

/* the permission bits of path */
static unsigned
mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (unsigned)(st.st_mode & 07777);
}

/* a token file holds list content: 0640 whatever the umask; a writer
 * tightens a world-readable file, a reader leaves it alone */
START_TEST(file_mode)
{
	static const mode_t masks[] = { 0, 022, 077 };
	struct toklist *a = mklist(post_a);
	struct tokdb *db;
	char err[1024];
	mode_t old;
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		unlink(dbpath);
		old = umask(masks[i]);
		db = open_w(dbpath);
		ck_assert_int_eq(tokdb_begin(db), 0);
		ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 100), 4);
		ck_assert_int_eq(tokdb_commit(db), 0);
		tokdb_close(db);
		umask(old);
		ck_assert_msg(mode_of(dbpath) == 0640, "umask %03o: mode %03o",
		    (unsigned)masks[i], mode_of(dbpath));
	}
	ck_assert_int_eq(chmod(dbpath, 0644), 0);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	tokdb_close(db);
	ck_assert_uint_eq(mode_of(dbpath), 0644);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_WRITE, 100, &db, err,
	    sizeof(err)), 0);
	tokdb_close(db);
	ck_assert_uint_eq(mode_of(dbpath), 0640);
	ck_assert_int_eq(chmod(dbpath, 0600), 0);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_WRITE, 100, &db, err,
	    sizeof(err)), 0);
	tokdb_close(db);
	ck_assert_uint_eq(mode_of(dbpath), 0600);	/* stricter stays */
	toklist_free(a);
}
END_TEST

/* set one u32 meta record with the raw Kyoto Cabinet API */
static void
patch_meta(const char *key, size_t klen, uint32_t v)
{
	KCDB *kc = kcdbnew();
	unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff,
		(v >> 24) & 0xff };

	ck_assert(kcdbopen(kc, dbpath, KCOWRITER));
	ck_assert(kcdbset(kc, key, klen, (const char *)b, 4));
	ck_assert(kcdbclose(kc));
	kcdbdel(kc);
}

/* another tokenizer or format version is refused, for readers and writers */
START_TEST(version_refused)
{
	struct tokdb *db = open_w(dbpath);
	char err[1024];

	tokdb_close(db);
	patch_meta("\0tokver", 7, TOK_VERSION + 1);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_EVERSION);
	ck_assert_ptr_nonnull(strstr(err, dbpath));
	ck_assert_ptr_nonnull(strstr(err, "rebuild --list list`"));
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_WRITE | TOKDB_CREATE, 100,
	    &db, err, sizeof(err)), TOKDB_EVERSION);
	patch_meta("\0tokver", 7, TOK_VERSION);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	tokdb_close(db);
	patch_meta("\0format", 7, 77);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_EVERSION);
}
END_TEST

/* a file that is not a token file, or not a KC file at all */
START_TEST(corrupt_refused)
{
	struct tokdb *db;
	char err[1024], bad[600];
	KCDB *kc;
	FILE *f;

	snprintf(bad, sizeof(bad), "%s/bad.kch", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(bad, "w"));
	fputs("this is not a Kyoto Cabinet file at all\n", f);
	fclose(f);
	ck_assert_int_eq(tokdb_open(bad, TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_ERR);
	ck_assert_ptr_nonnull(strstr(err, bad));
	ck_assert_int_eq(tokdb_open(bad, TOKDB_WRITE | TOKDB_CREATE, 100, &db,
	    err, sizeof(err)), TOKDB_ERR);

	/* a Kyoto Cabinet file of someone else's */
	kc = kcdbnew();
	ck_assert(kcdbopen(kc, dbpath, KCOWRITER | KCOCREATE));
	ck_assert(kcdbset(kc, "k", 1, "v", 1));
	kcdbclose(kc);
	kcdbdel(kc);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_ERR);
	ck_assert_ptr_nonnull(strstr(err, dbpath));
	ck_assert_int_eq(tokdb_open("a#b.kch", TOKDB_READ, 100, &db, err,
	    sizeof(err)), TOKDB_ERR);
}
END_TEST

/* a malformed token record reads as absent, never out of bounds */
START_TEST(malformed_record)
{
	struct tokdb *db = open_w(dbpath);
	struct tokcount c;
	char err[1024];
	KCDB *kc;

	tokdb_close(db);
	kc = kcdbnew();
	ck_assert(kcdbopen(kc, dbpath, KCOWRITER));
	ck_assert(kcdbset(kc, "tok", 3, "\xff\xff\xff\xff\xff\xff", 6));
	kcdbclose(kc);
	kcdbdel(kc);
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 100, &db, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tokdb_get(db, "tok", 3, &c), 0);
	ck_assert_uint_eq(c.spam + c.ham + c.day, 0);
	ck_assert_int_eq(tokdb_get(db, "\0format", 7, &c), 0);	/* meta */
	tokdb_close(db);
}
END_TEST

/* a file of n tokens "tokN", closed */
static void
make_tokens(int n)
{
	struct tokdb *db = open_w(dbpath);
	struct toklist *tl = toklist_new(20000);
	char t[32];
	int i;

	ck_assert_ptr_nonnull(tl);
	for (i = 0; i < n; i++) {
		snprintf(t, sizeof(t), "tok%d", i);
		ck_assert_int_ge(toklist_add(tl, t, strlen(t)), 0);
	}
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_ge(tokdb_learn(db, tl, 1, 1, 20000), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	tokdb_close(db);
	toklist_free(tl);
}

/* tokdb_check of the file at dbpath: its result, the message in err */
static int
check_file(long *ntok_r, char *err, size_t errsz)
{
	struct tokdb *db;
	int r;

	r = tokdb_open(dbpath, TOKDB_READ, 100, &db, err, errsz);
	if (r != 0)
		return r;
	r = tokdb_check(db, ntok_r, err, errsz);
	tokdb_close(db);
	return r;
}

/* overwrite n bytes of the file at off */
static void
scribble(long off, const char *bytes, size_t n)
{
	FILE *f = fopen(dbpath, "r+b");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
}

/* the offset of s in the file, or -1 */
static long
find_in_file(const char *s)
{
	FILE *f = fopen(dbpath, "rb");
	static char buf[16 * 1024 * 1024];
	size_t n;
	char *p;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	p = memmem(buf, n, s, strlen(s));
	return p ? (long)(p - buf) : -1;
}

/* copy the file at from to to */
static void
copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	char buf[65536];
	size_t n;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	while ((n = fread(buf, 1, sizeof(buf), a)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
	fclose(a);
	ck_assert_int_eq(fclose(b), 0);
}

/* a sound file passes the integrity check; scattered damage does not
 * (a malformed value, a damaged key, a damaged bucket), and the message
 * says what to do */
START_TEST(integrity_check)
{
	char err[1024], saved[600];
	long ntok, off;
	KCDB *kc;

	make_tokens(5000);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), 0);
	ck_assert_int_eq(ntok, 5000);
	snprintf(saved, sizeof(saved), "%s/saved.kch", tmpdir);
	copy_file(dbpath, saved);

	/* a token record whose counts do not decode */
	kc = kcdbnew();
	ck_assert(kcdbopen(kc, dbpath, KCOWRITER));
	ck_assert(kcdbset(kc, "tok7", 4, "\xff\xff", 2));
	kcdbclose(kc);
	kcdbdel(kc);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), TOKDB_EDAMAGED);
	ck_assert_ptr_nonnull(strstr(err, dbpath));
	ck_assert_ptr_nonnull(strstr(err, "do not decode"));
	ck_assert_ptr_nonnull(strstr(err, "run `listgate rebuild --list "
	    "list`"));

	/* a key changed in place: its hash chain no longer finds it */
	copy_file(saved, dbpath);
	ck_assert_int_gt(off = find_in_file("tok4321"), 0);
	scribble(off + 3, "9", 1);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), TOKDB_EDAMAGED);
	ck_assert_ptr_nonnull(strstr(err, "does not find again"));

	/* an empty bucket that now points somewhere (a 6-byte bucket of a
	 * file with bnum=1000000, fpow=10: the array starts at 6222) */
	copy_file(saved, dbpath);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), 0);
	scribble(6222 + 6 * 777777L, "\x00\x00\x00\x01\x23\x45", 6);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), TOKDB_EDAMAGED);
	ck_assert_ptr_nonnull(strstr(err, "bucket"));

	/* a journal position of the wrong size: found at open */
	copy_file(saved, dbpath);
	kc = kcdbnew();
	ck_assert(kcdbopen(kc, dbpath, KCOWRITER));
	ck_assert(kcdbset(kc, "\0pos", 4, "abc", 3));
	kcdbclose(kc);
	kcdbdel(kc);
	ck_assert_int_eq(check_file(&ntok, err, sizeof(err)), TOKDB_EDAMAGED);
	ck_assert_ptr_nonnull(strstr(err, "journal position"));
	ck_assert_ptr_nonnull(strstr(err, "rebuild --list list"));
	unlink(saved);
}
END_TEST

/* milliseconds on the monotonic clock */
static double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* a reader gives up after wait_ms when a trainer holds the file */
START_TEST(lock_wait_bound)
{
	struct tokdb *db = open_w(dbpath);
	int up[2], down[2], status;
	char err[1024], ch;
	double t0, dt;
	pid_t pid;

	tokdb_close(db);
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tokdb *w;

		if (tokdb_open(dbpath, TOKDB_WRITE, 0, &w, err,
		    sizeof(err)) != 0)
			_exit(1);
		if (write(up[1], "x", 1) != 1)
			_exit(1);
		if (read(down[0], &ch, 1) < 0)	/* until the parent is done */
			_exit(1);
		tokdb_close(w);
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &ch, 1), 1);
	t0 = mono_ms();
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 300, &db, err,
	    sizeof(err)), TOKDB_ELOCK);
	dt = mono_ms() - t0;
	/*
	 * The trainer holds the lock until we say so, so returning ELOCK at
	 * all shows the bound; the wait must be the whole budget (the
	 * monotonic clock cannot run short) and end within a few seconds
	 * of it even when sanitizers and a busy machine stall us.
	 */
	ck_assert_msg(dt >= 299 && dt < 300 + 3000, "gave up after %.1f ms",
	    dt);
	ck_assert_ptr_nonnull(strstr(err, "locked"));
	ck_assert_ptr_nonnull(strstr(err, "300 ms"));
	ck_assert_ptr_nonnull(strstr(err, dbpath));
	/* a writer is refused just the same */
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_WRITE, 50, &db, err,
	    sizeof(err)), TOKDB_ELOCK);
	ck_assert_int_eq(write(down[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* free again: the reader gets in (with no wait allowed at all) */
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 0, &db, err,
	    sizeof(err)), 0);
	tokdb_close(db);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}
END_TEST

/* a reader waiting for the lock gets in when the trainer finishes */
START_TEST(lock_wait_then_ok)
{
	struct tokdb *db = open_w(dbpath);
	int up[2], status;
	char err[1024], ch;
	double t0, dt;
	pid_t pid;

	tokdb_close(db);
	ck_assert_int_eq(pipe(up), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tokdb *w;

		if (tokdb_open(dbpath, TOKDB_WRITE, 0, &w, err,
		    sizeof(err)) != 0)
			_exit(1);
		if (write(up[1], "x", 1) != 1)
			_exit(1);
		usleep(150 * 1000);
		tokdb_close(w);
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &ch, 1), 1);
	t0 = mono_ms();
	/* a generous budget: getting in at all is the point, and it cannot
	 * happen before the trainer's 150 ms are over */
	ck_assert_int_eq(tokdb_open(dbpath, TOKDB_READ, 10000, &db, err,
	    sizeof(err)), 0);
	dt = mono_ms() - t0;
	ck_assert_msg(dt >= 100, "got in after %.1f ms", dt);
	tokdb_close(db);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(up[0]);
	close(up[1]);
}
END_TEST

/* a reader gets in during a trainer's short pause between batches */
START_TEST(lock_pause_lets_reader_in)
{
	struct tokdb *db = open_w(dbpath);
	int up[2], down[2], status, i;
	char err[1024], ch;
	pid_t pid;

	tokdb_close(db);
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tokdb *w;
		struct pollfd pfd;

		/* batches of 150 ms with pauses like the trainer's, for
		 * longer than the readers below may wait, until told */
		pfd.fd = down[0];
		pfd.events = POLLIN;
		for (i = 0; i < 40; i++) {
			if (tokdb_open(dbpath, TOKDB_WRITE, 5000, &w, err,
			    sizeof(err)) != 0)
				_exit(1);
			if (i == 0 && write(up[1], "x", 1) != 1)
				_exit(1);
			usleep(150 * 1000);
			tokdb_close(w);
			if (poll(&pfd, 1, 0) > 0)
				_exit(0);
			usleep((TOKDB_POLL_MAX_MS * 2 + 2) * 1000);
		}
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &ch, 1), 1);
	/* the trainer is busy for 6 s in all, longer than a reader waits:
	 * a reader that gets in did so during a pause */
	for (i = 0; i < 3; i++) {
		ck_assert_msg(tokdb_open(dbpath, TOKDB_READ, 3000, &db, err,
		    sizeof(err)) == 0, "reader %d: %s", i, err);
		tokdb_close(db);
		usleep(20 * 1000);
	}
	ck_assert_int_eq(write(down[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}
END_TEST

/* decisions by a post's digest: recorded, changed, removed; they are
 * no tokens, and the integrity check takes them */
START_TEST(decisions_by_digest)
{
	struct tokdb *db = open_w(dbpath);
	struct toklist *a = mklist(post_a);
	unsigned char s1[TOKDB_SHA256_LEN], s2[TOKDB_SHA256_LEN];
	char err[1024];
	uint32_t day;
	int state;
	long n;

	memset(s1, 0x11, sizeof(s1));
	memset(s2, 0x22, sizeof(s2));
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_ge(tokdb_learn(db, a, 1, 1, 1), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	n = tokdb_ntokens(db);
	ck_assert_int_eq(tokdb_get_decided(db, s1, &state, &day), 0);
	ck_assert_int_eq(state, TOKDB_UNDECIDED);
	/* outside a transaction: refused */
	ck_assert_int_eq(tokdb_set_decided(db, s1, TOKDB_RELEASED, 9), -1);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_set_decided(db, s1, TOKDB_RELEASED, 9), 0);
	ck_assert_int_eq(tokdb_set_decided(db, s2, TOKDB_REFUSED, 10), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_get_decided(db, s1, &state, &day), 1);
	ck_assert_int_eq(state, TOKDB_RELEASED);
	ck_assert_uint_eq(day, 9);
	ck_assert_int_eq(tokdb_get_decided(db, s2, &state, &day), 1);
	ck_assert_int_eq(state, TOKDB_REFUSED);
	ck_assert_int_eq(tokdb_ntokens(db), n);
	/* a forced change, then undone */
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_set_decided(db, s1, TOKDB_REFUSED, 11), 0);
	ck_assert_int_eq(tokdb_set_decided(db, s2, TOKDB_UNDECIDED, 11), 0);
	ck_assert_int_eq(tokdb_set_decided(db, s2, TOKDB_UNDECIDED, 11), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_get_decided(db, s1, &state, &day), 1);
	ck_assert_int_eq(state, TOKDB_REFUSED);
	ck_assert_uint_eq(day, 11);
	ck_assert_int_eq(tokdb_get_decided(db, s2, &state, &day), 0);
	ck_assert_int_eq(tokdb_ntokens(db), n);
	ck_assert_msg(tokdb_check(db, NULL, err, sizeof(err)) == 0, "%s", err);
	tokdb_close(db);
	toklist_free(a);
}
END_TEST

/* count records by iteration */
static int
count_cb(const char *tok, size_t len, const struct tokcount *c, void *ctx)
{
	long *n = ctx;

	(void)tok;
	(void)len;
	ck_assert_uint_gt(c->spam + c->ham, 0);
	(*n)++;
	return 0;
}

START_TEST(iterate_tokens)
{
	struct toklist *a = mklist(post_a), *b = mklist(post_b);
	struct tokdb *db;
	char err[1024];
	long n = 0;

	ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0, &db,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_eq(tokdb_learn(db, a, 1, 1, 1), 4);
	ck_assert_int_eq(tokdb_learn(db, b, 0, 1, 1), 2);
	ck_assert_int_eq(tokdb_commit(db), 0);
	ck_assert_int_eq(tokdb_iterate(db, count_cb, &n), 0);
	ck_assert_int_eq(n, 6);
	ck_assert_int_eq(tokdb_ntokens(db), 6);
	tokdb_close(db);
	toklist_free(a);
	toklist_free(b);
}
END_TEST

/* tokdb_today is near time(NULL) / 86400 */
START_TEST(today)
{
	uint32_t d = tokdb_today();

	ck_assert_uint_gt(d, 19000);		/* after 2022 */
	ck_assert_uint_eq(d, (uint32_t)(time(NULL) / 86400));
}
END_TEST

static Suite *
tokdb_suite(void)
{
	Suite *s = suite_create("tokdb");
	TCase *tc;

	tc = tcase_create("counts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, learn_unlearn_file);
	tcase_add_test(tc, learn_unlearn_mem);
	tcase_add_test(tc, learn_unlearn_many);
	tcase_add_test(tc, persist_and_read);
	tcase_add_test(tc, iterate_tokens);
	tcase_add_test(tc, decisions_by_digest);
	tcase_add_test(tc, file_mode);
	tcase_add_test(tc, today);
	suite_add_tcase(s, tc);

	tc = tcase_create("transactions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, abort_file);
	tcase_add_test(tc, abort_mem);
	tcase_add_test(tc, close_in_transaction);
	tcase_add_test(tc, journal_pos);
	suite_add_tcase(s, tc);

	tc = tcase_create("refusals");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, version_refused);
	tcase_add_test(tc, corrupt_refused);
	tcase_add_test(tc, malformed_record);
	tcase_add_test(tc, integrity_check);
	suite_add_tcase(s, tc);

	tc = tcase_create("locks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lock_wait_bound);
	tcase_add_test(tc, lock_wait_then_ok);
	tcase_add_test(tc, lock_pause_lets_reader_in);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tokdb_suite());
	int nfail;

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? EXIT_FAILURE : EXIT_SUCCESS;
}
