/*
 * check_holder.c - the holder's wire format and its client
 * (gate/holder/holder.c)
 *
 * A request encoded and decoded gives back every field and the post's
 * exact bytes (from memory and from a file); every cut of it, every
 * field too long, a NUL in a text field, a bad status, score, number
 * or trailing bytes are refused with a reason; answers parse strictly
 * and an error's text comes back masked.  The client, against a server
 * played by a child process on a real Unix socket: a post held, an
 * error answer, a server that closes without answering and one that
 * never answers (within the wait), a socket that is not there.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/holder/holder.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/sockio.h"

static const unsigned char post[] = "From: a@example.org\nSubject: x\n\n"
    "body \0 with a NUL and \xff bytes\n";

static void
sample(struct holder_req *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->post.list = "dev";
	rq->post.env_sender = "sender@example.org";
	rq->post.env_recipient = "dev@lists.example.org";
	rq->post.from = "A <a@example.org>";
	rq->post.subject = "x";
	rq->post.msgid = "<1@example.org>";
	rq->post.verdict = "spam";
	rq->post.clues = "tok 0.99 3 0\n";
	rq->post.status = "held";
	rq->post.note = "";
	rq->post.score = 0.987654321;
	rq->post.remember_days = 7;
	rq->post.raw = post;
	rq->post.raw_len = sizeof(post) - 1;
	rq->post.raw_fd = -1;
	rq->notify = 1;
	rq->database = "0123abcd";
}

/* the whole request on the wire: head, fields, the post */
static void
wire(const struct holder_req *rq, struct buf *w)
{
	ck_assert_int_eq(holder_encode(rq, w), 0);
	ck_assert_int_eq(buf_add(w, rq->post.raw, rq->post.raw_len), 0);
}

/* decode a whole request: 0 with *rq (pointing into *body_r), or -1 */
static int
decode(const unsigned char *w, size_t n, struct holder_req *rq,
    unsigned char **body_r, char *why, size_t whysz)
{
	size_t len;

	*body_r = NULL;
	if (n < 8 || holder_head(w, &len) < 0) {
		snprintf(why, whysz, "head");
		return -1;
	}
	if (len != n - 8) {
		snprintf(why, whysz, "length");
		return -1;
	}
	*body_r = malloc(len + 1);
	ck_assert_ptr_nonnull(*body_r);
	memcpy(*body_r, w + 8, len);
	return holder_decode(*body_r, len, rq, why, whysz);
}

static void
same(const struct holder_req *a, const struct holder_req *b)
{
	ck_assert_str_eq(a->post.list, b->post.list);
	ck_assert_str_eq(a->post.env_sender, b->post.env_sender);
	ck_assert_str_eq(a->post.env_recipient, b->post.env_recipient);
	ck_assert_str_eq(a->post.from, b->post.from);
	ck_assert_str_eq(a->post.subject, b->post.subject);
	ck_assert_str_eq(a->post.msgid, b->post.msgid);
	ck_assert_str_eq(a->post.verdict, b->post.verdict);
	ck_assert_str_eq(a->post.clues, b->post.clues);
	ck_assert_str_eq(a->post.status, b->post.status);
	ck_assert_str_eq(a->post.note, b->post.note);
	ck_assert(a->post.score == b->post.score);
	ck_assert_uint_eq(a->post.remember_days, b->post.remember_days);
	ck_assert_int_eq(a->notify, b->notify);
	ck_assert_str_eq(a->database, b->database);
	ck_assert_uint_eq(a->post.raw_len, b->post.raw_len);
	ck_assert(memcmp(a->post.raw, b->post.raw, a->post.raw_len) == 0);
	ck_assert_int_eq(b->post.raw_from_fd, 0);
}

START_TEST(round_trip)
{
	struct holder_req rq, back;
	struct buf w = BUF_INIT(HOLDER_MAX_REQ + 8);
	unsigned char *body;
	char why[256], id[HOLDER_DATABASE_ID_LEN + 1];
	char id2[HOLDER_DATABASE_ID_LEN + 1];

	sample(&rq);
	wire(&rq, &w);
	ck_assert_int_eq(decode(w.data, w.len, &back, &body, why,
	    sizeof(why)), 0);
	same(&rq, &back);
	free(body);
	/* NULL texts go as "", an empty post and notify 0 too */
	rq.post.note = NULL;
	rq.post.raw_len = 0;
	rq.notify = 0;
	rq.post.status = "discarded";
	wire(&rq, &w);
	ck_assert_int_eq(decode(w.data, w.len, &back, &body, why,
	    sizeof(why)), 0);
	ck_assert_str_eq(back.post.note, "");
	ck_assert_uint_eq(back.post.raw_len, 0);
	ck_assert_int_eq(back.notify, 0);
	ck_assert_str_eq(back.post.status, "discarded");
	free(body);
	buf_free(&w);
	/* the database's name: the conninfo's SHA-256 (never the text,
	 * which may hold a password); NULL as "" */
	holder_database_id("dbname=a password=secret", id);
	ck_assert_uint_eq(strlen(id), HOLDER_DATABASE_ID_LEN);
	ck_assert_ptr_null(strstr(id, "secret"));
	holder_database_id("dbname=b password=secret", id2);
	ck_assert_str_ne(id, id2);
	holder_database_id(NULL, id);
	ck_assert_str_eq(id, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(every_cut_is_refused)
{
	struct holder_req rq, back;
	struct buf w = BUF_INIT(HOLDER_MAX_REQ + 8);
	unsigned char *body, *cut;
	char why[256];
	size_t len, n;

	sample(&rq);
	wire(&rq, &w);
	/* the body cut short with a length that says so: every field's
	 * bounds are checked against what is there */
	for (n = 8; n < w.len; n++) {
		cut = malloc(n - 8 + 1);
		ck_assert_ptr_nonnull(cut);
		memcpy(cut, w.data + 8, n - 8);
		ck_assert_msg(holder_decode(cut, n - 8, &back, why,
		    sizeof(why)) < 0, "a request cut at %zu decoded", n);
		ck_assert(why[0] != '\0');
		free(cut);
	}
	/* trailing bytes */
	ck_assert_int_eq(buf_add(&w, "x", 1), 0);
	ck_assert_int_eq(holder_head(w.data, &len), 0);
	body = malloc(w.len - 8 + 1);
	memcpy(body, w.data + 8, w.len - 8);
	ck_assert_int_lt(holder_decode(body, w.len - 8, &back, why,
	    sizeof(why)), 0);
	ck_assert_str_eq(why, "1 bytes after the last field");
	free(body);
	buf_free(&w);
}
END_TEST

/*
 * Encode rq, put the text to in place of the field whose text is from
 * (4 bytes, found once), and decode: the decoder's reason (static), or
 * "" when it decoded.
 */
static const char *
decode_with(const struct holder_req *rq, const char *from, const char *to)
{
	static char why[256];
	struct holder_req back;
	struct buf e = BUF_INIT(HOLDER_MAX_REQ + 8);
	struct buf w = BUF_INIT(HOLDER_MAX_REQ + 8);
	unsigned char field[8] = { 0, 0, 0, 4 }, l[4] = { 0, 0, 0, 0 };
	unsigned char *body, *p;
	size_t len, at;

	wire(rq, &e);
	memcpy(field + 4, from, 4);
	p = memmem(e.data, e.len, field, 8);
	ck_assert_ptr_nonnull(p);
	at = (size_t)(p - e.data);
	l[3] = (unsigned char)strlen(to);
	ck_assert_int_eq(buf_add(&w, e.data, at), 0);
	ck_assert_int_eq(buf_add(&w, l, 4), 0);
	ck_assert_int_eq(buf_add(&w, to, strlen(to)), 0);
	ck_assert_int_eq(buf_add(&w, p + 8, e.len - at - 8), 0);
	/* the head's length */
	len = w.len - 8;
	w.data[4] = (unsigned char)(len >> 24);
	w.data[5] = (unsigned char)(len >> 16);
	w.data[6] = (unsigned char)(len >> 8);
	w.data[7] = (unsigned char)len;
	why[0] = '\0';
	decode(w.data, w.len, &back, &body, why, sizeof(why));
	free(body);
	buf_free(&e);
	buf_free(&w);
	return why;
}

START_TEST(bad_fields_are_refused)
{
	struct holder_req rq, back;
	struct buf w = BUF_INIT(HOLDER_MAX_REQ + 8);
	unsigned char head[8] = { 'L', 'G', 'H', '1', 0xff, 0xff, 0xff, 0xff };
	unsigned char *body;
	char why[256], *big;
	size_t len;
	static const char *const scores[] = { "", "nan", "inf", "1x", "0.5 " };
	static const char *const days[] = { "", "-1", "100001", "1e3", "+1" };
	size_t i;

	ck_assert_int_lt(holder_head(head, &len), 0);
	memcpy(head, "LGH2", 4);
	memset(head + 4, 0, 4);
	ck_assert_int_lt(holder_head(head, &len), 0);
	sample(&rq);
	/* a text field past LG_MAX_FIELD_BYTES cannot be encoded */
	big = malloc(LG_MAX_FIELD_BYTES + 2);
	memset(big, 'a', LG_MAX_FIELD_BYTES + 1);
	big[LG_MAX_FIELD_BYTES + 1] = '\0';
	rq.post.subject = big;
	ck_assert_int_lt(holder_encode(&rq, &w), 0);
	free(big);
	sample(&rq);
	rq.post.raw_len = HOLDER_MAX_RAW + 1;
	ck_assert_int_lt(holder_encode(&rq, &w), 0);
	/* a NUL in a text field: put "a\0b" as the sender by hand */
	sample(&rq);
	rq.post.env_sender = "aXb";
	wire(&rq, &w);
	body = memchr(w.data, 'X', w.len);
	ck_assert_ptr_nonnull(body);
	*body = '\0';
	ck_assert_int_lt(decode(w.data, w.len, &back, &body, why,
	    sizeof(why)), 0);
	ck_assert_str_eq(why, "field 2 holds a NUL");
	free(body);
	/* status, score, remember_days, notify */
	sample(&rq);
	rq.post.status = "approved";
	wire(&rq, &w);
	ck_assert_int_lt(decode(w.data, w.len, &back, &body, why,
	    sizeof(why)), 0);
	ck_assert_str_eq(why, "bad status");
	free(body);
	for (i = 0; i < sizeof(scores) / sizeof(scores[0]); i++) {
		sample(&rq);
		rq.post.score = 0.25;
		ck_assert_str_eq(decode_with(&rq, "0.25", scores[i]),
		    "bad score");
	}
	for (i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
		sample(&rq);
		rq.post.remember_days = 4242;
		ck_assert_str_eq(decode_with(&rq, "4242", days[i]),
		    "bad remember_days");
	}
	buf_free(&w);
}
END_TEST

START_TEST(answers)
{
	struct holder_ans a, b;
	char line[HOLDER_MAX_ANSWER], err[600];
	static const char *const bad[] = { "", "OK", "OK 0 5", "OK 0 5 1 x",
	    "OK 9 5 1", "OK -1 5 1", "OK 0 0 1", "OK 0 5 2", "ok 0 5 1",
	    "OK 0 5 1\r", "HELLO", "OK 0 5 1 ", "OK +0 5 1", "OK 0  5 1",
	    "OK 0 5 -1", "OK 0 99999999999999999999 1", "OK 0x1 5 1",
	    " OK 0 5 1" };
	size_t i;

	a.held = QUEUE_HELD_PENDING;
	a.id = 1234567890123LL;
	a.notifying = 1;
	holder_answer_ok(line, &a);
	ck_assert_str_eq(line, "OK 1 1234567890123 1\n");
	line[strlen(line) - 1] = '\0';
	ck_assert_int_eq(holder_answer_parse(line, &b, err, sizeof(err)), 0);
	ck_assert_int_eq(b.held, a.held);
	ck_assert(b.id == a.id);
	ck_assert_int_eq(b.notifying, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(holder_answer_parse(bad[i], &b, err,
		    sizeof(err)) < 0, "\"%s\" parsed", bad[i]);
	/* an error's text: one line, masked */
	holder_answer_err(line, "no \"database\"\nat\tall");
	ck_assert_str_eq(line, "ER no ?database??at?all\n");
	line[strlen(line) - 1] = '\0';
	ck_assert_int_lt(holder_answer_parse(line, &b, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "the holder failed: no ?database??at?all");
}
END_TEST

/* the server's side, in a child: accept one connection, read the whole
 * request, then answer as told ("close": nothing; "hang": sleep) */
static pid_t
serve(const char *path, const char *answer)
{
	struct sockaddr_un sun;
	int lfd;
	pid_t pid;

	unlink(path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct holder_req rq;
		unsigned char head[8], *body;
		char why[256];
		size_t len;
		int fd = accept(lfd, NULL, NULL), rc = 1;

		if (fd >= 0 && recv(fd, head, 8, MSG_WAITALL) == 8 &&
		    holder_head(head, &len) == 0 &&
		    (body = malloc(len + 1)) != NULL &&
		    recv(fd, body, len, MSG_WAITALL) == (ssize_t)len &&
		    holder_decode(body, len, &rq, why, sizeof(why)) == 0 &&
		    rq.post.raw_len == sizeof(post) - 1 &&
		    memcmp(rq.post.raw, post, rq.post.raw_len) == 0)
			rc = 0;
		if (strcmp(answer, "hang") == 0)
			sleep(30);
		else if (strcmp(answer, "close") != 0 &&
		    write(fd, answer, strlen(answer)) < 0)
			rc = 1;
		_exit(rc);
	}
	close(lfd);
	return pid;
}

START_TEST(client)
{
	struct holder_req rq;
	struct holder_ans a;
	char path[64], err[600], tmpl[] = "/tmp/lg-chold.XXXXXX";
	FILE *f;
	double t0;
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/s", tmpl);
	sample(&rq);
	pid = serve(path, "OK 0 812 1\n");
	ck_assert_int_eq(holder_hold(path, &rq, 5000, &a, err, sizeof(err)),
	    0);
	ck_assert_int_eq(a.held, QUEUE_HELD_NEW);
	ck_assert(a.id == 812);
	ck_assert_int_eq(a.notifying, 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the server did not get the post's bytes");
	/* the same post from a file (a spooled post): read with pread */
	f = tmpfile();
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(post, 1, sizeof(post) - 1, f),
	    sizeof(post) - 1);
	fflush(f);
	rq.post.raw = NULL;
	rq.post.raw_from_fd = 1;
	rq.post.raw_fd = fileno(f);
	pid = serve(path, "OK 1 813 0\n");
	ck_assert_int_eq(holder_hold(path, &rq, 5000, &a, err, sizeof(err)),
	    0);
	ck_assert(a.id == 813);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the server did not get the file's bytes");
	fclose(f);
	sample(&rq);
	/* an error answer */
	pid = serve(path, "ER database: no connection\n");
	ck_assert_int_lt(holder_hold(path, &rq, 5000, &a, err, sizeof(err)),
	    0);
	ck_assert_str_eq(err, "the holder failed: database: no connection");
	waitpid(pid, &st, 0);
	/* closed without an answer */
	pid = serve(path, "close");
	ck_assert_int_lt(holder_hold(path, &rq, 5000, &a, err, sizeof(err)),
	    0);
	ck_assert_str_eq(err, "the holder closed the connection without an "
	    "answer");
	waitpid(pid, &st, 0);
	/* no answer: the wait is kept */
	pid = serve(path, "hang");
	t0 = clock_now_ms();
	ck_assert_int_lt(holder_hold(path, &rq, 300, &a, err, sizeof(err)),
	    0);
	ck_assert_str_eq(err, "the holder did not answer in time");
	ck_assert_msg(clock_now_ms() - t0 < 2000, "waited %.0f ms",
	    clock_now_ms() - t0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* nothing there */
	unlink(path);
	ck_assert_int_lt(holder_hold(path, &rq, 300, &a, err, sizeof(err)),
	    0);
	ck_assert(strstr(err, "cannot connect to the holder") != NULL);
	rmdir(tmpl);
}
END_TEST

/* a holder at path run by user uid, created after the switch (its
 * SO_PEERCRED is then uid's), answering one request with answer */
static pid_t
serve_as(const char *path, const char *answer, uid_t uid)
{
	int ready[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sockaddr_un sun;
		char buf[4096];
		size_t len;
		ssize_t got;
		int lfd, fd;

		alarm(60);	/* never outlive a failed test */
		if (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
		    setuid(uid) < 0)
			_exit(2);
		lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun,
		    sizeof(sun)) < 0 || listen(lfd, 4) < 0)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(5);
		/* the whole request, or until the client gives up */
		if (recv(fd, buf, 8, MSG_WAITALL) == 8 &&
		    holder_head((unsigned char *)buf, &len) == 0)
			while (len > 0 && (got = recv(fd, buf, len <
			    sizeof(buf) ? len : sizeof(buf), 0)) > 0)
				len -= (size_t)got;
		_exit(write(fd, answer, strlen(answer)) < 0 ? 6 : 0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/* a holder that some other user runs is not trusted with a post,
 * unless that user owns the socket's directory */
START_TEST(untrusted_holder)
{
	struct holder_req rq;
	struct holder_ans a;
	char path[64], err[600], tmpl[] = "/tmp/lg-chold.XXXXXX";
	const uid_t nobody = 65534;
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		/* the test's second user needs root to be */
		printf("# SKIP untrusted_holder: not root\n");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	/* a shared directory like /tmp: anyone may put a socket there */
	ck_assert_int_eq(chmod(tmpl, 01777), 0);
	snprintf(path, sizeof(path), "%s/s", tmpl);
	sample(&rq);
	pid = serve_as(path, "OK 0 77 0\n", nobody);
	ck_assert_int_lt(holder_hold(path, &rq, 2000, &a, err, sizeof(err)),
	    0);
	ck_assert_msg(strstr(err, "runs as user 65534") != NULL &&
	    strstr(err, "not trusted") != NULL, "%s", err);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	unlink(path);
	/* the same user owning the directory (the unit's /run/listgate) */
	ck_assert_int_eq(chown(tmpl, nobody, (gid_t)-1), 0);
	pid = serve_as(path, "OK 0 78 0\n", nobody);
	ck_assert_msg(holder_hold(path, &rq, 2000, &a, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert(a.id == 78);
	waitpid(pid, &st, 0);
	unlink(path);
	rmdir(tmpl);
}
END_TEST

static int
fixed_hold(const struct holder_req *rq, struct holder_ans *a, char *err,
    size_t errsz, void *arg)
{
	(void)rq;
	(void)err;
	(void)errsz;
	(void)arg;
	a->held = QUEUE_HELD_NEW;
	a->id = 4242;
	a->notifying = 0;
	return 0;
}

/* a worker whose fork failed is started again later, not only when
 * another one ends: the holder runs as a user of its own allowed two
 * processes, one of them a blocker, so its fork fails; then the
 * blocker ends (root here may lack CAP_SYS_RESOURCE to raise a limit) */
START_TEST(failed_fork_is_retried)
{
	struct holder_req rq;
	struct holder_ans a;
	char path[64], err[600], tmpl[] = "/tmp/lg-chold.XXXXXX";
	uid_t uid = 50000 + (uid_t)getpid() % 10000;
	double t0;
	pid_t pid, blocker;
	int st, i, ready[2];
	char c;

	if (geteuid() != 0) {
		printf("# SKIP failed_fork_is_retried: not root\n");
		return;
	}
	/* a user nobody is (no account: no processes of its own; two
	 * runs at once: two users) */
	while (getpwuid(uid) != NULL)
		uid++;
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_int_eq(chown(tmpl, uid, uid), 0);
	snprintf(path, sizeof(path), "%s/s", tmpl);
	ck_assert_int_eq(pipe(ready), 0);
	blocker = fork();
	ck_assert_int_ge(blocker, 0);
	if (blocker == 0) {
		alarm(60);
		if (setgroups(0, NULL) == 0 && setgid(uid) == 0 &&
		    setuid(uid) == 0 && write(ready[1], "r", 1) == 1)
			pause();
		_exit(2);
	}
	/* (the blocker counts once it is that user) */
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		printf("# SKIP failed_fork_is_retried: cannot become user "
		    "%lu\n", (unsigned long)uid);
		waitpid(blocker, &st, 0);
		rmdir(tmpl);
		return;
	}
	close(ready[0]);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct holder_server hs;
		struct rlimit rl = { 2, 2 };
		char why[256];

		alarm(60);
		if (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
		    setuid(uid) < 0 || setrlimit(RLIMIT_NPROC, &rl) < 0)
			_exit(2);
		memset(&hs, 0, sizeof(hs));
		hs.path = path;
		hs.workers = 1;
		hs.hold = fixed_hold;
		_exit(holder_serve(&hs, why, sizeof(why)) < 0 ? 3 : 0);
	}
	/* its socket listening (a connection waits in the backlog), and
	 * no worker behind it */
	for (i = 0; i < 100; i++) {
		int fd = sock_connect_unix(path, clock_now_ms() + 1000);

		if (fd >= 0) {
			close(fd);
			break;
		}
		usleep(50 * 1000);
	}
	ck_assert_int_lt(i, 100);
	sample(&rq);
	ck_assert_int_lt(holder_hold(path, &rq, 1500, &a, err, sizeof(err)),
	    0);
	ck_assert_str_eq(err, "the holder did not answer in time");
	/* room for one more process: a worker within a few seconds */
	kill(blocker, SIGKILL);
	ck_assert_int_eq(waitpid(blocker, &st, 0), blocker);
	t0 = clock_now_ms();
	ck_assert_msg(holder_hold(path, &rq, 5000, &a, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert(a.id == 4242);
	ck_assert_msg(clock_now_ms() - t0 < 4000, "took %.0f ms",
	    clock_now_ms() - t0);
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/s.lock", tmpl);
	unlink(path);
	rmdir(tmpl);
}
END_TEST

/* PATH.lock that is not a file of ours (a FIFO someone put in the
 * socket's directory): the holder refuses to start and says why; open(2)
 * of a FIFO without a writer waited for ever, and the holder neither
 * started nor failed (nor was started again by its service manager) */
/* holder_serve as user uid on path: its error, or "" when it started
 * (then stopped at once) */
static void
serve_err_as(const char *path, uid_t uid, char *why, size_t whysz)
{
	struct holder_server hs;
	int st, p[2];
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(20);	/* never outlive a failed test */
		close(p[0]);
		if (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
		    setuid(uid) < 0)
			_exit(2);
		memset(&hs, 0, sizeof(hs));
		hs.path = path;
		hs.workers = 1;
		hs.hold = fixed_hold;
		if (holder_serve(&hs, why, whysz) < 0) {
			if (write(p[1], why, strlen(why)) < 0)
				_exit(4);
			_exit(3);
		}
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], why, whysz - 1);
	why[n > 0 ? n : 0] = '\0';
	close(p[0]);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

/* a lock file the holder's user may not create says why: the directory,
 * not a lock file left by another user (there is none to remove) */
START_TEST(lock_dir_not_writable)
{
	char tmpl[] = "/tmp/lg-chold.XXXXXX", path[64], lock[80];
	char why[600];
	const uid_t nobody = 65534;
	int fd;

	if (geteuid() != 0) {
		printf("# SKIP lock_dir_not_writable: not root\n");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_int_eq(chmod(tmpl, 0755), 0);
	snprintf(path, sizeof(path), "%s/s", tmpl);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	serve_err_as(path, nobody, why, sizeof(why));
	ck_assert_msg(strstr(why, "left by a holder") == NULL &&
	    strstr(why, "may not create") != NULL &&
	    strstr(why, tmpl) != NULL, "%s", why);
	/* one there, of another user: that one is to be removed */
	ck_assert_int_ge(fd = open(lock, O_CREAT | O_WRONLY, 0600), 0);
	close(fd);
	ck_assert_int_eq(chmod(tmpl, 01777), 0);
	serve_err_as(path, nobody, why, sizeof(why));
	ck_assert_msg(strstr(why, "left by a holder run as another user") !=
	    NULL, "%s", why);
	unlink(lock);
	rmdir(tmpl);
}
END_TEST

START_TEST(lock_fifo_is_refused)
{
	struct holder_server hs;
	char tmpl[] = "/tmp/lg-chold.XXXXXX", path[64], lock[80];
	char why[600] = "";
	int st, p[2], i;
	ssize_t n = 0;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/s", tmpl);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	ck_assert_int_eq(mkfifo(lock, 0600), 0);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		memset(&hs, 0, sizeof(hs));
		hs.path = path;
		hs.workers = 1;
		hs.hold = fixed_hold;
		if (holder_serve(&hs, why, sizeof(why)) < 0) {
			if (write(p[1], why, strlen(why)) < 0)
				_exit(4);
			_exit(3);
		}
		_exit(0);
	}
	close(p[1]);
	for (i = 0; i < 50 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(100 * 1000);
	if (i == 50) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (i < 50)
		n = read(p[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(p[0]);
	unlink(lock);
	unlink(path);
	rmdir(tmpl);
	ck_assert_msg(i < 50, "the holder neither started nor failed in 5 s");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
	ck_assert_msg(strstr(why, lock) != NULL &&
	    strstr(why, "not a file of this user") != NULL, "%s", why);
}
END_TEST

static Suite *
holder_suite(void)
{
	Suite *s = suite_create("holder");
	TCase *tc = tcase_create("holder");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, every_cut_is_refused);
	tcase_add_test(tc, bad_fields_are_refused);
	tcase_add_test(tc, answers);
	tcase_add_test(tc, client);
	tcase_add_test(tc, untrusted_holder);
	tcase_add_test(tc, failed_fork_is_retried);
	tcase_add_test(tc, lock_fifo_is_refused);
	tcase_add_test(tc, lock_dir_not_writable);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(holder_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
