/*
 * check_source.c - reading posts from files, mboxes, maildirs, stdin
 *
 * Every test builds its inputs in a fresh temporary directory.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/mail/source.h"
#include "gate/util/xalloc.h"

static char tmpdir[256];

/* fresh directory per test */
static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/check_source.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* rm -r the test directory (two levels are enough here) */
static void
rmtree(const char *d, int depth)
{
	char cmdpath[600];
	static const char *const subs[] = { "new", "cur", "tmp", "sub", NULL };
	static const char *const files[] = { "a", "b", "c", "m1", "m2",
		"m3", "mbox", "post", ".hidden", "big", NULL };
	int i;

	for (i = 0; files[i]; i++) {
		snprintf(cmdpath, sizeof(cmdpath), "%s/%s", d, files[i]);
		unlink(cmdpath);
	}
	if (depth > 0)
		for (i = 0; subs[i]; i++) {
			snprintf(cmdpath, sizeof(cmdpath), "%s/%s", d, subs[i]);
			rmtree(cmdpath, depth - 1);
		}
	rmdir(d);
}

static void
teardown(void)
{
	rmtree(tmpdir, 2);
}

/* write a file under the test directory */
static void
put(const char *rel, const char *text)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
}

/* make a directory under the test directory */
static void
mkd(const char *rel)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

/* remove a file under the test directory */
static void
unlink_rel(const char *rel)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(unlink(p), 0);
}

/* open a path under the test directory (or "" for the directory) */
static struct source *
open_rel(const char *rel)
{
	struct source *s;
	char p[600], err[1024];

	snprintf(p, sizeof(p), "%s%s%s", tmpdir, *rel ? "/" : "", rel);
	ck_assert_msg(source_open(p, &s, err, sizeof(err)) == 0, "%s", err);
	return s;
}

/* the next post must be text (and, if name_end, its name ends so) */
static void
expect(struct source *s, const char *text, const char *name_end)
{
	struct source_post p;
	char err[1024];
	size_t nl;

	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 1);
	ck_assert_msg(p.len == strlen(text) && memcmp(p.data, text, p.len) == 0,
	    "got [%.*s] want [%s]", (int)p.len, (const char *)p.data, text);
	if (name_end) {
		nl = strlen(name_end);
		ck_assert_msg(strlen(p.name) >= nl &&
		    strcmp(p.name + strlen(p.name) - nl, name_end) == 0,
		    "name %s does not end in %s", p.name, name_end);
	}
}

/* the source must be used up */
static void
expect_end(struct source *s)
{
	struct source_post p;
	char err[1024];

	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 0);
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 0);
}

START_TEST(single_file)
{
	struct source *s;

	put("post", "Subject: hi\n\nFrom me to you\nbody\n");
	s = open_rel("post");
	ck_assert_int_eq(source_multi(s), 0);
	expect(s, "Subject: hi\n\nFrom me to you\nbody\n", "/post");
	expect_end(s);
	source_close(s);
}
END_TEST

START_TEST(empty_file)
{
	struct source *s;

	put("post", "");
	s = open_rel("post");
	expect(s, "", "post");
	expect_end(s);
	source_close(s);
}
END_TEST

/* the descriptors this process has open */
static int
open_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* write len bytes of a pattern (a post header first) to rel */
static void
put_pattern(const char *rel, size_t len, unsigned seed)
{
	char p[600];
	unsigned char *b = malloc(len + 1);
	size_t i;
	FILE *f;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(seed >> 16);
	}
	if (len >= 12)
		memcpy(b, "Subject: x\n", 11);
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

/* the one post of rel is exactly the len bytes of the file */
static void
expect_pattern(const char *rel, size_t len)
{
	struct source *s = open_rel(rel);
	struct source_post p;
	char err[1024], path[600];
	unsigned char *b = malloc(len + 1);
	FILE *f;

	ck_assert_ptr_nonnull(b);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_uint_eq(fread(b, 1, len + 1, f), len);
	fclose(f);
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 1);
	ck_assert_uint_eq(p.len, len);
	ck_assert(memcmp(p.data, b, len) == 0);
	expect_end(s);
	source_close(s);
	free(b);
}

/* files just below, at and above the size that is read rather than
 * mapped come whole, also when memory for the read runs out (then they
 * are mapped); no descriptor is left open on any path */
START_TEST(read_or_map)
{
	static const size_t sizes[] = { 1, 4095, 4096, 262143, 262144,
		262145, 700001 };
	char err[1024], path[600];
	struct source *s;
	size_t i;
	unsigned long k;
	int fds = open_fds(), r;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		put_pattern("big", sizes[i], (unsigned)i + 7);
		expect_pattern("big", sizes[i]);
	}
	ck_assert_int_eq(open_fds(), fds);
	/* every allocation of opening a file that is read fails in turn:
	 * the open fails cleanly or the post still comes whole */
	put_pattern("big", 5000, 3);
	snprintf(path, sizeof(path), "%s/big", tmpdir);
	for (k = 1; k <= 6; k++) {
		xalloc_fail_at(k);
		r = source_open(path, &s, err, sizeof(err));
		xalloc_fail_at(0);
		if (r == 0) {
			source_close(s);
			expect_pattern("big", 5000);
		} else {
			ck_assert_int_eq(r, -2);
			ck_assert_ptr_null(s);
		}
		ck_assert_int_eq(open_fds(), fds);
	}
	/* a directory and a missing path leave nothing open either */
	s = open_rel("");
	source_close(s);
	snprintf(path, sizeof(path), "%s/none", tmpdir);
	ck_assert_int_eq(source_open(path, &s, err, sizeof(err)), -1);
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

START_TEST(mbox_split)
{
	struct source *s;

	put("mbox",
	    "From a@b Mon Jan  1 00:00:00 2024\n"
	    "Subject: one\n\nbody one\nFrom inside a line is not a split\n\n"
	    "From c@d Mon Jan  1 00:00:00 2024\n"
	    "Subject: two\n\n>From quoted\n\n"
	    "From e@f Mon Jan  1 00:00:00 2024\n"
	    "Subject: three\n\nlast\n\n");
	s = open_rel("mbox");
	ck_assert_int_eq(source_multi(s), 1);
	expect(s, "Subject: one\n\nbody one\nFrom inside a line is not a "
	    "split\n", "mbox:1");
	expect(s, "Subject: two\n\n>From quoted\n", "mbox:2");
	expect(s, "Subject: three\n\nlast\n", "mbox:3");
	expect_end(s);
	source_close(s);
}
END_TEST

/* out of memory: -2, the post named FILE:N, then the next post; and
 * -2 from source_open (train stops on it instead of skipping the input) */
START_TEST(mbox_out_of_memory)
{
	struct source *s;
	struct source_post p;
	char err[1024], want[700];

	put("mbox",
	    "From a@b Mon Jan  1 00:00:00 2024\nSubject: one\n\n"
	    "From c@d Mon Jan  1 00:00:00 2024\nSubject: two\n\n");
	s = open_rel("mbox");
	xalloc_fail_at(1);	/* the first post's name */
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), -2);
	xalloc_fail_at(0);
	snprintf(want, sizeof(want), "%s/mbox:1: out of memory", tmpdir);
	ck_assert_str_eq(err, want);
	expect(s, "Subject: two\n", "mbox:2");
	expect_end(s);
	source_close(s);

	snprintf(want, sizeof(want), "%s/mbox", tmpdir);
	xalloc_fail_at(1);
	ck_assert_int_eq(source_open(want, &s, err, sizeof(err)), -2);
	xalloc_fail_at(0);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(err, "out of memory"));
}
END_TEST

/* "From " not after a blank line stays in the post */
START_TEST(mbox_no_blank_no_split)
{
	struct source *s;

	put("mbox", "From x\nSubject: a\n\nline\nFrom here on\nmore\n");
	s = open_rel("mbox");
	ck_assert_int_eq(source_multi(s), 0);	/* one post: like a file */
	expect(s, "Subject: a\n\nline\nFrom here on\nmore\n", "/mbox");
	expect_end(s);
	source_close(s);
}
END_TEST

START_TEST(mbox_crlf_and_edges)
{
	struct source *s;

	put("mbox", "From x\r\nSubject: a\r\n\r\nbody\r\n\r\nFrom y\r\n"
	    "Subject: b\r\n\r\nend");
	s = open_rel("mbox");
	expect(s, "Subject: a\r\n\r\nbody\r\n", ":1");
	expect(s, "Subject: b\r\n\r\nend", ":2");
	expect_end(s);
	source_close(s);

	/* empty posts and a From_ line without a newline */
	put("m2", "From x\n\nFrom y\n\nFrom z");
	s = open_rel("m2");
	expect(s, "", ":1");
	expect(s, "", ":2");
	expect(s, "", ":3");
	expect_end(s);
	source_close(s);

	put("m3", "From ");
	s = open_rel("m3");
	expect(s, "", "/m3");
	expect_end(s);
	source_close(s);
}
END_TEST

START_TEST(maildir)
{
	struct source *s;
	struct source_post p;
	char err[1024];
	int n = 0;

	mkd("new");
	mkd("cur");
	mkd("tmp");
	put("new/b", "Subject: new b\n\n");
	put("new/a", "Subject: new a\n\n");
	put("cur/c", "Subject: cur c\n\n");
	put("cur/.hidden", "Subject: hidden\n\n");
	put("tmp/a", "Subject: in tmp\n\n");
	s = open_rel("");
	ck_assert_int_eq(source_multi(s), 1);
	expect(s, "Subject: new a\n\n", "/new/a");
	expect(s, "Subject: new b\n\n", "/new/b");
	expect(s, "Subject: cur c\n\n", "/cur/c");
	expect_end(s);
	source_close(s);
	s = open_rel("");
	while (source_next(s, &p, err, sizeof(err)) == 1)
		n++;
	ck_assert_int_eq(n, 3);
	source_close(s);
}
END_TEST

/* a maildir with an empty folder (found by tests/fuzz/fuzz_source.c:
 * sorting the empty listing did arithmetic on a null pointer, which
 * UBSan reports); an empty maildir yields nothing */
START_TEST(maildir_empty_folder)
{
	struct source *s;

	mkd("new");
	mkd("cur");
	put("cur/c", "Subject: cur c\n\n");
	s = open_rel("");
	expect(s, "Subject: cur c\n\n", "/cur/c");
	expect_end(s);
	source_close(s);
	unlink_rel("cur/c");
	s = open_rel("");
	expect_end(s);
	source_close(s);
}
END_TEST

/* a plain directory: its files, sorted; mboxes in it are split */
START_TEST(plain_dir)
{
	struct source *s;

	mkd("sub");
	put("sub/a", "From x\nSubject: 1\n\n\nFrom y\nSubject: 2\n");
	put("b", "Subject: b\n\n");
	put("a", "Subject: a\n\n");
	s = open_rel("");
	expect(s, "Subject: a\n\n", "/a");
	expect(s, "Subject: b\n\n", "/b");
	expect_end(s);
	source_close(s);
	s = open_rel("sub");
	expect(s, "Subject: 1\n\n", "sub/a:1");
	expect(s, "Subject: 2\n", "sub/a:2");
	expect_end(s);
	source_close(s);
}
END_TEST

START_TEST(missing_path)
{
	struct source *s;
	char err[1024], p[600];

	snprintf(p, sizeof(p), "%s/nothere", tmpdir);
	ck_assert_int_eq(source_open(p, &s, err, sizeof(err)), -1);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(err, p));
}
END_TEST

/* a device given as a path is refused: /dev/null is no post, and
 * /dev/zero or a disk was spooled to a temporary file until the disk
 * was full */
START_TEST(device_refused)
{
	struct source *s;
	char err[1024];

	ck_assert_int_eq(source_open("/dev/null", &s, err, sizeof(err)), -1);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err, "/dev/null: is a device") != NULL, "%s",
	    err);
	alarm(5);	/* before the fix: spooled for ever */
	ck_assert_int_eq(source_open("/dev/zero", &s, err, sizeof(err)), -1);
	alarm(0);
	ck_assert_ptr_nonnull(strstr(err, "/dev/zero: is a device"));
}
END_TEST

/* so is a device on standard input (< /dev/zero was spooled until the
 * disk was full; a closed standard input, opened on /dev/null, gave an
 * empty post); a terminal is still read */
START_TEST(stdin_device_refused)
{
	struct source *s;
	char err[1024];
	int fd;

	ck_assert_int_ge(fd = open("/dev/zero", O_RDONLY), 0);
	ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);
	close(fd);
	alarm(5);	/* before the fix: spooled for ever */
	ck_assert_int_eq(source_open("-", &s, err, sizeof(err)), -1);
	alarm(0);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err, "-: is a device") != NULL, "%s", err);
	ck_assert_int_ge(fd = open("/dev/null", O_RDONLY), 0);
	ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);
	close(fd);
	ck_assert_int_eq(source_open("-", &s, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "-: is a device") != NULL, "%s", err);
}
END_TEST

/* an unreadable entry is reported and skipped */
START_TEST(unreadable_entry)
{
	struct source *s;
	struct source_post p;
	char err[1024], path[600];

	if (geteuid() == 0)
		return;		/* root reads anything */
	put("a", "Subject: a\n\n");
	put("b", "Subject: b\n\n");
	snprintf(path, sizeof(path), "%s/a", tmpdir);
	chmod(path, 0);
	s = open_rel("");
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	expect(s, "Subject: b\n\n", "/b");
	expect_end(s);
	source_close(s);
}
END_TEST

/*
 * A directory entry that is no longer a regular file when its turn
 * comes (a FIFO put in place of a listed post by whoever may write the
 * folder) is reported and skipped: opening it waited for a writer for
 * ever, and a train through the journal held the list's journal lock,
 * which every decision of the list waits for, meanwhile.
 */
START_TEST(entry_replaced_by_fifo)
{
	struct source *s;
	struct source_post p;
	char err[1024], path[600];

	put("a", "Subject: a\n\n");
	put("b", "Subject: b\n\n");
	put("c", "Subject: c\n\n");
	s = open_rel("");
	snprintf(path, sizeof(path), "%s/b", tmpdir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	expect(s, "Subject: a\n\n", "/a");
	alarm(5);	/* before the fix: blocked in open */
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), -1);
	alarm(0);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	expect(s, "Subject: c\n\n", "/c");
	expect_end(s);
	source_close(s);
}
END_TEST

/* feed text to stdin through a pipe from a child, then read "-" */
static struct source *
open_stdin_pipe(const char *text, size_t len, pid_t *pid_r)
{
	struct source *s;
	char err[1024];
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t off = 0;
		ssize_t w;

		close(fds[0]);
		while (off < len) {
			size_t n = len - off > 65536 ? 65536 : len - off;

			if ((w = write(fds[1], text + off, n)) <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_ge(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	ck_assert_msg(source_open("-", &s, err, sizeof(err)) == 0, "%s", err);
	*pid_r = pid;
	return s;
}

START_TEST(stdin_pipe_mbox)
{
	static const char text[] = "From a\nSubject: x\n\nFrom b\nSubject: y\n";
	struct source *s;
	pid_t pid;

	s = open_stdin_pipe(text, strlen(text), &pid);
	ck_assert_int_eq(source_multi(s), 1);
	expect(s, "Subject: x\n", "-:1");
	expect(s, "Subject: y\n", "-:2");
	expect_end(s);
	source_close(s);
	waitpid(pid, NULL, 0);
}
END_TEST

/* stdin larger than the memory spool limit goes through a temp file */
START_TEST(stdin_pipe_spooled)
{
	size_t len = 40u * 1024 * 1024, i;
	struct source_post p;
	struct source *s;
	char *text, err[256];
	pid_t pid;

	ck_assert_ptr_nonnull(text = malloc(len));
	for (i = 0; i < len; i++)
		text[i] = (char)('a' + i % 26);
	memcpy(text, "Subject: big\n\n", 14);
	s = open_stdin_pipe(text, len, &pid);
	ck_assert_int_eq(source_multi(s), 0);
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 1);
	ck_assert_uint_eq(p.len, len);
	ck_assert_int_eq(memcmp(p.data, text, len), 0);
	ck_assert_str_eq(p.name, "-");
	expect_end(s);
	source_close(s);
	waitpid(pid, NULL, 0);
	free(text);
}
END_TEST

/* a mapped file that shrinks while it is read (another process
 * truncates it) is no SIGBUS: the pages gone read as zeros, and the
 * next call names the file and skips the rest of it */
START_TEST(mapped_file_shrinks)
{
	static const char post[] = "From a\nSubject: x\n\nbody body body\n\n";
	char err[1024], path[600];
	struct source_post p;
	struct source *s;
	size_t i, n = 20000, sum = 0;
	FILE *f;
	int r;

	/* an mbox of 20000 posts (about 700 KiB: mapped) */
	snprintf(path, sizeof(path), "%s/mbox", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(fwrite(post, 1, strlen(post), f),
		    strlen(post));
	fclose(f);
	s = open_rel("mbox");
	expect(s, "Subject: x\n\nbody body body\n", "mbox:1");
	ck_assert_int_eq(truncate(path, 4096), 0);
	for (i = 1; (r = source_next(s, &p, err, sizeof(err))) == 1; i++)
		ck_assert_uint_lt(i, n);
	ck_assert_int_eq(r, -1);
	ck_assert_msg(strstr(err, path) != NULL && strstr(err, "shrank") !=
	    NULL, "%s", err);
	expect_end(s);
	source_close(s);

	/* one large post, cut while it is looked at */
	put_pattern("big", 700001, 5);
	snprintf(path, sizeof(path), "%s/big", tmpdir);
	s = open_rel("big");
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 1);
	ck_assert_int_eq(source_cut(s), 0);	/* whole so far */
	ck_assert_int_eq(truncate(path, 100), 0);
	for (i = 0; i < p.len; i += 4096)
		sum += p.data[i];
	ck_assert_uint_eq(p.data[p.len - 1], 0);
	/* a caller that copied the post learns that the copy has zeros,
	 * and asking again does not take the report from source_next */
	ck_assert_int_eq(source_cut(s), 1);
	ck_assert_int_eq(source_cut(s), 1);
	ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, path) != NULL && strstr(err, "shrank") !=
	    NULL, "%s", err);
	expect_end(s);
	source_close(s);
	(void)sum;
}
END_TEST

/* standard input left non-blocking by whoever started us (the flag is
 * the pipe's, shared): waited on, not "Resource temporarily
 * unavailable" at once */
START_TEST(stdin_nonblocking)
{
	static const char text[] = "Subject: late\n\nbody\n";
	struct source *s;
	char err[1024];
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		usleep(200000);		/* nothing to read meanwhile */
		if (write(fds[1], text, strlen(text)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) |
	    O_NONBLOCK), 0);
	ck_assert_int_ge(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	ck_assert_msg(source_open("-", &s, err, sizeof(err)) == 0, "%s", err);
	expect(s, text, "-");
	expect_end(s);
	source_close(s);
	waitpid(pid, NULL, 0);
}
END_TEST

/* standard input on a regular file that was partly read already (a
 * script read its first lines): the rest of it, whatever its size (a
 * file over 256 KiB was mapped from its start) */
START_TEST(stdin_file_offset)
{
	static const size_t sizes[] = { 5000, 700001 };
	char err[1024], path[600];
	struct source_post p;
	struct source *s;
	size_t i;
	int fd;

	for (i = 0; i < 2; i++) {
		put_pattern("big", sizes[i], 9);
		snprintf(path, sizeof(path), "%s/big", tmpdir);
		ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
		ck_assert_int_eq(lseek(fd, 1000, SEEK_SET), 1000);
		ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);
		close(fd);
		ck_assert_msg(source_open("-", &s, err, sizeof(err)) == 0,
		    "%s", err);
		ck_assert_int_eq(source_next(s, &p, err, sizeof(err)), 1);
		ck_assert_uint_eq(p.len, sizes[i] - 1000);
		expect_end(s);
		source_close(s);
	}
}
END_TEST

/* random mixes of separators and text: posts stay inside the file */
START_TEST(mbox_random)
{
	static const char *const piece[] = { "From ", "\n", "\r\n", "x",
		"\n\n", "From x\n", "\r", ">From ", "\nFrom " };
	char text[512], path[600], err[256];
	struct source_post p;
	struct source *s;
	unsigned seed = 12345;
	size_t len, total;
	int iter, k, r, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/mbox", tmpdir);
	for (iter = 0; iter < 1000; iter++) {
		len = 0;
		if (iter & 1) {
			memcpy(text, "From ", 5);
			len = 5;
		}
		n = (int)(rand_r(&seed) % 40);
		for (k = 0; k < n; k++) {
			const char *pc = piece[rand_r(&seed) % 9];

			memcpy(text + len, pc, strlen(pc));
			len += strlen(pc);
		}
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		ck_assert_uint_eq(fwrite(text, 1, len, f), len);
		fclose(f);
		ck_assert_int_eq(source_open(path, &s, err, sizeof(err)), 0);
		total = 0;
		k = 0;
		while ((r = source_next(s, &p, err, sizeof(err))) == 1) {
			total += p.len;
			ck_assert(p.len == 0 ||
			    memmem(text, len, p.data, p.len) != NULL);
			k++;
		}
		ck_assert_int_eq(r, 0);
		ck_assert_uint_le(total, len);
		ck_assert_int_ge(k, 1);
		ck_assert_int_eq(source_multi(s), k > 1);
		source_close(s);
	}
}
END_TEST

static Suite *
source_suite(void)
{
	Suite *s = suite_create("source");
	TCase *tc;

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, single_file);
	tcase_add_test(tc, empty_file);
	tcase_add_test(tc, missing_path);
	tcase_add_test(tc, device_refused);
	tcase_add_test(tc, stdin_device_refused);
	tcase_add_test(tc, read_or_map);
	suite_add_tcase(s, tc);

	tc = tcase_create("mbox");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mbox_split);
	tcase_add_test(tc, mbox_no_blank_no_split);
	tcase_add_test(tc, mbox_crlf_and_edges);
	tcase_add_test(tc, mbox_random);
	tcase_add_test(tc, mbox_out_of_memory);
	tcase_add_test(tc, mapped_file_shrinks);
	suite_add_tcase(s, tc);

	tc = tcase_create("directories");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, maildir);
	tcase_add_test(tc, maildir_empty_folder);
	tcase_add_test(tc, plain_dir);
	tcase_add_test(tc, unreadable_entry);
	tcase_add_test(tc, entry_replaced_by_fifo);
	suite_add_tcase(s, tc);

	tc = tcase_create("stdin");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stdin_pipe_mbox);
	tcase_add_test(tc, stdin_pipe_spooled);
	tcase_add_test(tc, stdin_file_offset);
	tcase_add_test(tc, stdin_nonblocking);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(source_suite());
	int nfail;

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? EXIT_FAILURE : EXIT_SUCCESS;
}
