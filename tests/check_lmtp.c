/*
 * check_lmtp.c - the LMTP client (gate/app/lmtp.c) against a small LMTP
 * server written here
 *
 * The server is a forked child on a loopback TCP port or a Unix socket,
 * scripted per test: the reply to each stage (greeting, LHLO, MAIL,
 * RCPT, DATA, the end of the data, QUIT), "HANG" to stop answering,
 * "CLOSE" to hang up, a connection closed in the middle of the data, a
 * refusal sent in the middle of the data, a server that stops reading.
 * It writes what it received (the commands, the data as sent and as
 * un-stuffed) to files the test compares.
 *
 * Checks: 250 delivers; 4xx and 5xx at every stage give LMTP_TEMP and
 * LMTP_PERM and send no data; time-outs at every stage (connect, a
 * reply, the data, the total) end in time; dot-stuffing, CRLF, a post
 * without a final newline, bare CR, long lines, 8-bit data with and
 * without 8BITMIME; every fixture of tests/data/mail arrives byte for
 * byte; the addresses MAIL FROM and RCPT TO get (quoting, SMTPUTF8, the
 * null sender for one that cannot be written); replies that are no
 * replies, too long or too many lines, or whose lines have different
 * codes; a server that answers ahead of the commands (out of step).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/app/handoff.h"
#include "gate/app/lmtp.h"
#include "gate/util/clock.h"
#include "gate/util/lglimits.h"

/* --- the scripted server ------------------------------------------------- */

enum stage { S_GREET, S_LHLO, S_MAIL, S_RCPT, S_DATA, S_END, S_QUIT,
    NSTAGES };

static const char *const stage_names[NSTAGES] = { "greeting", "LHLO",
    "MAIL FROM", "RCPT TO", "DATA", "end of data", "QUIT" };

static const char *const default_reply[NSTAGES] = {
	"220 test.example LMTP ready",
	"250-test.example\r\n250-8BITMIME\r\n250-SIZE 1000000\r\n"
	"250 PIPELINING",
	"250 2.1.0 ok",
	"250 2.1.5 ok",
	"354 go ahead",
	"250 2.0.0 delivered",
	"221 bye",
};

struct srv {
	const char *reply[NSTAGES];	/* NULL: default_reply; "HANG",
					 * "CLOSE" */
	long close_after;		/* DATA: hang up after this many
					 * bytes (0: never) */
	const char *refuse_after;	/* with close_after: send this
					 * reply first */
	int stall_data;			/* DATA: stop reading */
	int split_crlf;			/* every reply: its last CR and LF
					 * in two writes, 100 ms apart */
};

/* the defaults everywhere */
static const struct srv no_script;

static int split_crlf;		/* the server's copy of sv->split_crlf */
static char dir[64];		/* the test's temporary directory */
static char dest[256];		/* "lmtp:..." of the server */
static pid_t child = -1;
static int lfd = -1;

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_lmtp.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	child = -1;
	lfd = -1;
}

static void
rm(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
}

static void
teardown(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (lfd >= 0)
		close(lfd);
	rm("cmds");
	rm("raw");
	rm("data");
	rm("sock");
	rmdir(dir);
}

/* append n bytes to file name in dir */
static void
save(const char *name, const void *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "ab")) == NULL)
		_exit(3);
	if (n > 0 && fwrite(p, 1, n, f) != n)
		_exit(3);
	fclose(f);
}

/* the server's buffered reader */
static unsigned char sbuf[65536];
static size_t slen;

/* one line with its CRLF into line (at most max bytes kept): its
 * length, -1 at the end of the connection */
static long
srv_line(int fd, unsigned char *line, size_t max)
{
	unsigned char *lf;
	size_t n;
	ssize_t r;

	for (;;) {
		if ((lf = memchr(sbuf, '\n', slen)) != NULL) {
			n = (size_t)(lf - sbuf) + 1;
			memcpy(line, sbuf, n < max ? n : max);
			memmove(sbuf, sbuf + n, slen - n);
			slen -= n;
			return (long)(n < max ? n : max);
		}
		if (slen == sizeof(sbuf))
			_exit(4);
		r = read(fd, sbuf + slen, sizeof(sbuf) - slen);
		if (r <= 0)
			return -1;
		slen += (size_t)r;
	}
}

static void
srv_say(int fd, const char *reply)
{
	char line[8192];
	int n;

	if (strcmp(reply, "HANG") == 0) {
		sleep(60);
		_exit(0);
	}
	if (strcmp(reply, "CLOSE") == 0) {
		close(fd);
		_exit(0);
	}
	n = snprintf(line, sizeof(line), "%s\r\n", reply);
	if (split_crlf) {
		/* the client reads the CR before the LF comes */
		if (write(fd, line, (size_t)n - 1) != n - 1)
			_exit(5);
		usleep(100 * 1000);
		if (write(fd, "\n", 1) != 1)
			_exit(5);
		return;
	}
	if (write(fd, line, (size_t)n) != n)
		_exit(5);
}

static const char *
rep(const struct srv *sv, enum stage s)
{
	return sv->reply[s] != NULL ? sv->reply[s] : default_reply[s];
}

/* DATA: read lines up to the dot, saving them as sent and un-stuffed */
static void
srv_data(int fd, const struct srv *sv)
{
	static unsigned char line[70000];
	long n, got = 0;

	if (sv->stall_data) {
		sleep(60);
		_exit(0);
	}
	for (;;) {
		if ((n = srv_line(fd, line, sizeof(line))) < 0)
			_exit(0);
		got += n;
		save("raw", line, (size_t)n);
		if (n == 3 && memcmp(line, ".\r\n", 3) == 0)
			return;
		if (line[0] == '.')
			save("data", line + 1, (size_t)n - 1);
		else
			save("data", line, (size_t)n);
		if (sv->close_after > 0 && got >= sv->close_after) {
			if (sv->refuse_after != NULL)
				srv_say(fd, sv->refuse_after);
			_exit(0);
		}
	}
}

static void
serve(int fd, const struct srv *sv)
{
	unsigned char line[4096];
	long n;

	srv_say(fd, rep(sv, S_GREET));
	for (;;) {
		if ((n = srv_line(fd, line, sizeof(line) - 1)) < 0)
			_exit(0);
		save("cmds", line, (size_t)n);
		line[n] = '\0';
		if (strncasecmp((char *)line, "LHLO", 4) == 0)
			srv_say(fd, rep(sv, S_LHLO));
		else if (strncasecmp((char *)line, "MAIL", 4) == 0)
			srv_say(fd, rep(sv, S_MAIL));
		else if (strncasecmp((char *)line, "RCPT", 4) == 0)
			srv_say(fd, rep(sv, S_RCPT));
		else if (strncasecmp((char *)line, "DATA", 4) == 0) {
			srv_say(fd, rep(sv, S_DATA));
			if (rep(sv, S_DATA)[0] == '3') {
				srv_data(fd, sv);
				srv_say(fd, rep(sv, S_END));
			}
		} else if (strncasecmp((char *)line, "QUIT", 4) == 0) {
			srv_say(fd, rep(sv, S_QUIT));
			_exit(0);
		} else
			srv_say(fd, "500 what?");
	}
}

/* a listening socket: Unix (unix_sock) or 127.0.0.1; dest names it */
static void
listen_on(int unix_sock, int backlog)
{
	struct sockaddr_in sin;
	struct sockaddr_un sun;
	socklen_t sl = sizeof(sin);

	if (unix_sock) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", dir);
		lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		ck_assert_int_ge(lfd, 0);
		ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun,
		    sizeof(sun)), 0);
		snprintf(dest, sizeof(dest), "lmtp:unix:%s", sun.sun_path);
	} else {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(lfd, 0);
		ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin,
		    sizeof(sin)), 0);
		ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin,
		    &sl), 0);
		snprintf(dest, sizeof(dest), "lmtp:127.0.0.1:%u",
		    (unsigned)ntohs(sin.sin_port));
	}
	ck_assert_int_eq(listen(lfd, backlog), 0);
}

/* start the server for one connection */
static void
start(const struct srv *sv, int unix_sock)
{
	int fd, one = 1;

	listen_on(unix_sock, 4);
	split_crlf = sv->split_crlf;
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		signal(SIGPIPE, SIG_IGN);
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(2);
		close(lfd);
		if (!unix_sock)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
		slen = 0;
		serve(fd, sv);
		_exit(0);
	}
}

/* wait for the server to finish (it ends when the client hangs up) */
static void
finish(void)
{
	int st;

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		child = -1;
	}
}

/* the contents of file name in dir (NUL-terminated; *len_r its length;
 * "" when missing) */
static char *
slurp_path(const char *path, size_t *len_r)
{
	FILE *f;
	char *p;
	long n;

	*len_r = 0;
	if ((f = fopen(path, "rb")) == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	*len_r = (size_t)n;
	return p;
}

static char *
slurp(const char *name, size_t *len_r)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return slurp_path(path, len_r);
}

/* deliver with the default limits but short time-outs */
static int
deliver(const char *sender, const char *rcpt, const void *data, size_t len,
    unsigned *notes, char *err, size_t errsz)
{
	struct lmtp_limits lim = { 2000, 2000, 5000 };

	return lmtp_deliver(dest, sender, rcpt, data, len, 10000, &lim, notes,
	    err, errsz);
}

static const char post[] =
    "From: a@example.org\nTo: dev@lists.example.org\nSubject: hi\n\nhello\n";

/* --- delivery ------------------------------------------------------------- */

START_TEST(delivers_on_250)
{
	struct srv sv = no_script;
	char err[1024], *cmds, *data;
	size_t n;
	unsigned notes = 99;
	int r;

	start(&sv, 0);
	r = deliver("a@example.org", "dev@lists.example.org", post,
	    strlen(post), &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_str_eq(err, "");
	ck_assert_uint_eq(notes, 0);
	cmds = slurp("cmds", &n);
	ck_assert_msg(strncmp(cmds, "LHLO ", 5) == 0, "%s", cmds);
	ck_assert_ptr_nonnull(strstr(cmds, "\r\nMAIL FROM:<a@example.org>\r\n"
	    "RCPT TO:<dev@lists.example.org>\r\nDATA\r\nQUIT\r\n"));
	data = slurp("data", &n);
	ck_assert_str_eq(data, "From: a@example.org\r\n"
	    "To: dev@lists.example.org\r\nSubject: hi\r\n\r\nhello\r\n");
	free(cmds);
	free(data);
}
END_TEST

START_TEST(unix_socket)
{
	struct srv sv = no_script;
	char err[1024], *data;
	size_t n;
	int r;

	start(&sv, 1);
	ck_assert_ptr_nonnull(strstr(dest, "lmtp:unix:/"));
	r = deliver("", "dev@lists.example.org", post, strlen(post), NULL,
	    err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	data = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(data, "MAIL FROM:<>\r\n"));
	free(data);
}
END_TEST

/* a 4xx (i odd) or 5xx (i even) at each stage in turn */
START_TEST(refusals_at_each_stage)
{
	static const enum stage st[] = { S_GREET, S_LHLO, S_MAIL, S_RCPT,
	    S_DATA, S_END };
	enum stage s = st[_i / 2];
	int perm = _i % 2 == 0;
	struct srv sv = no_script;
	char err[1024], reply[64], *data;
	size_t n;
	int r;

	snprintf(reply, sizeof(reply), "%s refused here at %s",
	    perm ? "554 5.7.1" : "451 4.3.0", stage_names[s]);
	/* (the text after the code is the server's; multi-line for one) */
	if (s == S_RCPT)
		snprintf(reply, sizeof(reply), "%s-first line\r\n%s last",
		    perm ? "550" : "452", perm ? "550" : "452");
	sv.reply[s] = reply;
	start(&sv, 0);
	r = deliver("a@example.org", "dev@lists.example.org", post,
	    strlen(post), NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == (perm ? LMTP_PERM : LMTP_TEMP), "%s %s: %d %s",
	    stage_names[s], reply, r, err);
	ck_assert_msg(strstr(err, stage_names[s]) != NULL, "%s", err);
	ck_assert_msg(strstr(err, perm ? (s == S_RCPT ? "550" : "554") :
	    (s == S_RCPT ? "452" : "451")) != NULL, "%s", err);
	ck_assert_msg(strncmp(err, dest, strlen(dest)) == 0, "%s", err);
	data = slurp("data", &n);
	if (s != S_END)
		ck_assert_uint_eq(n, 0);	/* no data was sent */
	else
		ck_assert_uint_gt(n, 0);
	free(data);
}
END_TEST

/* anything but the expected class is a temporary failure: a 3xx where
 * 2xx belongs, a 2xx to DATA */
START_TEST(unexpected_codes_are_temporary)
{
	struct srv sv = no_script;
	char err[1024];
	int r;

	sv.reply[S_MAIL] = "354 what";
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	teardown();
	setup();
	memset(&sv, 0, sizeof(sv));
	sv.reply[S_DATA] = "250 no data wanted";
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
}
END_TEST

START_TEST(nobody_listening)
{
	char err[1024];
	int r;

	listen_on(0, 1);
	close(lfd);	/* the port is now closed */
	lfd = -1;
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(strstr(err, "cannot connect") != NULL, "%s", err);
}
END_TEST

/* --- time-outs ------------------------------------------------------------ */

/* a server that stops answering at stage _i: a temporary failure within
 * the reply time-out (after the whole post: not known, it may have it) */
START_TEST(hang_at_each_stage)
{
	static const enum stage st[] = { S_GREET, S_LHLO, S_MAIL, S_RCPT,
	    S_DATA, S_END };
	struct lmtp_limits lim = { 1000, 400, 5000 };
	struct srv sv = no_script;
	char err[1024];
	double t0, ms;
	int r;

	sv.reply[st[_i]] = "HANG";
	start(&sv, 0);
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "d@example.org",
	    (const unsigned char *)post, strlen(post), 30000, &lim, NULL, err,
	    sizeof(err));
	ms = clock_now_ms() - t0;
	finish();
	ck_assert_msg(r == (st[_i] == S_END ? LMTP_UNSURE : LMTP_TEMP),
	    "%d %s", r, err);
	ck_assert_msg(strstr(err, "no reply in time") != NULL, "%s", err);
	ck_assert_msg(strstr(err, stage_names[st[_i]]) != NULL, "%s", err);
	ck_assert_msg(ms >= 350 && ms < 3000, "%.0f ms", ms);
}
END_TEST

/* the total bounds everything, whatever the stages allow */
START_TEST(total_timeout)
{
	struct lmtp_limits lim = { 60000, 60000, 60000 };
	struct srv sv = no_script;
	char err[1024];
	double t0, ms;
	int r;

	sv.reply[S_RCPT] = "HANG";
	start(&sv, 0);
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "d@example.org",
	    (const unsigned char *)post, strlen(post), 500, &lim, NULL, err,
	    sizeof(err));
	ms = clock_now_ms() - t0;
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(ms >= 450 && ms < 3000, "%.0f ms", ms);
}
END_TEST

/* a server that stops reading the data: the data time-out */
START_TEST(data_timeout)
{
	struct lmtp_limits lim = { 1000, 1000, 500 };
	struct srv sv = no_script;
	size_t len = 16u * 1024u * 1024u;
	unsigned char *big = malloc(len);
	char err[1024];
	double t0, ms;
	int r;

	ck_assert_ptr_nonnull(big);
	memset(big, 'x', len);
	big[len - 1] = '\n';
	sv.stall_data = 1;
	start(&sv, 1);
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "d@example.org", big, len,
	    30000, &lim, NULL, err, sizeof(err));
	ms = clock_now_ms() - t0;
	finish();
	free(big);
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(strstr(err, "timed out") != NULL, "%s", err);
	ck_assert_msg(ms >= 450 && ms < 3000, "%.0f ms", ms);
}
END_TEST

/* connecting to a port whose queue is full: the connect time-out */
START_TEST(connect_timeout)
{
	struct lmtp_limits lim = { 400, 5000, 5000 };
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fill[8], i, r;
	char err[1024];
	double t0, ms;

	listen_on(0, 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	/* fill the accept queue (nobody accepts) */
	for (i = 0; i < 8; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		(void)connect(fill[i], (struct sockaddr *)&sin, sizeof(sin));
	}
	usleep(100000);
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "d@example.org",
	    (const unsigned char *)post, strlen(post), 30000, &lim, NULL, err,
	    sizeof(err));
	ms = clock_now_ms() - t0;
	for (i = 0; i < 8; i++)
		close(fill[i]);
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(strstr(err, "cannot connect: timed out") != NULL, "%s",
	    err);
	ck_assert_msg(ms >= 350 && ms < 3000, "%.0f ms", ms);
}
END_TEST

/* listen on the Unix socket with a queue of 0 and fill it: one
 * connection waits there (the server takes none); that one's socket */
static int
fill_unix_queue(void)
{
	struct sockaddr_un sun;
	int filler;

	listen_on(1, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", dir);
	filler = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_eq(connect(filler, (struct sockaddr *)&sun,
	    sizeof(sun)), 0);
	return filler;
}

/* a Unix socket whose listen queue is full for a moment (a burst):
 * connect(2) refuses at once there (EAGAIN) where TCP waits, and the
 * post waits for the queue within the connect time-out, as over TCP,
 * instead of being deferred at once */
START_TEST(unix_queue_full)
{
	struct lmtp_limits lim = { 3000, 5000, 5000 };
	struct sockaddr_un sun;
	int filler, probe, fd, r, e;
	char err[1024];
	double t0, ms;

	/* one waiting connection fills a queue of 0; a second is refused */
	filler = fill_unix_queue();
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", dir);
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r = connect(probe, (struct sockaddr *)&sun, sizeof(sun));
	e = errno;
	close(probe);
	ck_assert_msg(r < 0 && e == EAGAIN, "the queue is not full: %d %s",
	    r, strerror(e));
	/* the server takes the waiting connection after 300 ms, then ours */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		signal(SIGPIPE, SIG_IGN);
		usleep(300 * 1000);
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(2);
		close(fd);
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(2);
		close(lfd);
		slen = 0;
		serve(fd, &no_script);
		_exit(0);
	}
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "dev@lists.example.org",
	    (const unsigned char *)post, strlen(post), 10000, &lim, NULL, err,
	    sizeof(err));
	ms = clock_now_ms() - t0;
	finish();
	close(filler);
	ck_assert_msg(r == LMTP_OK, "%d %s (after %.0f ms)", r, err, ms);
	ck_assert_msg(ms >= 250, "%.0f ms", ms);
}
END_TEST

/* nobody takes the waiting connection: the connect time-out, not at
 * once */
START_TEST(unix_queue_full_timeout)
{
	struct lmtp_limits lim = { 400, 5000, 5000 };
	int filler, r;
	char err[1024];
	double t0, ms;

	filler = fill_unix_queue();
	t0 = clock_now_ms();
	r = lmtp_deliver(dest, "a@example.org", "dev@lists.example.org",
	    (const unsigned char *)post, strlen(post), 10000, &lim, NULL, err,
	    sizeof(err));
	ms = clock_now_ms() - t0;
	close(filler);
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(strstr(err, "cannot connect: timed out") != NULL, "%s",
	    err);
	ck_assert_msg(ms >= 350 && ms < 3000, "%.0f ms", ms);
}
END_TEST

/* --- the connection lost ------------------------------------------------ */

START_TEST(closed_mid_data)
{
	struct srv sv = no_script;
	size_t len = 4u * 1024u * 1024u, i;
	unsigned char *big = malloc(len);
	char err[1024];
	int r;

	ck_assert_ptr_nonnull(big);
	for (i = 0; i < len; i++)
		big[i] = i % 80 == 79 ? '\n' : 'a' + (unsigned char)(i % 26);
	sv.close_after = 10000;
	start(&sv, 1);
	r = deliver("a@example.org", "d@example.org", big, len, NULL, err,
	    sizeof(err));
	finish();
	free(big);
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_msg(strstr(err, "closed the connection") != NULL, "%s",
	    err);
}
END_TEST

/* the server says why it hangs up in the middle of the data: a 5xx there
 * is a refusal for good */
START_TEST(refused_mid_data)
{
	struct srv sv = no_script;
	size_t len = 4u * 1024u * 1024u, i;
	unsigned char *big = malloc(len);
	char err[1024];
	int r;

	ck_assert_ptr_nonnull(big);
	for (i = 0; i < len; i++)
		big[i] = i % 80 == 79 ? '\n' : 'z';
	sv.close_after = 10000;
	sv.refuse_after = "552 5.3.4 message too big";
	start(&sv, 1);
	r = deliver("a@example.org", "d@example.org", big, len, NULL, err,
	    sizeof(err));
	finish();
	free(big);
	ck_assert_msg(r == LMTP_PERM, "%d %s", r, err);
	ck_assert_msg(strstr(err, "552 5.3.4 message too big") != NULL, "%s",
	    err);
}
END_TEST

/* the server hangs up instead of answering the whole post: it may have
 * it (an approval must not put it back to be released again) */
START_TEST(closed_instead_of_reply)
{
	struct srv sv = no_script;
	char err[1024];
	int r;

	sv.reply[S_END] = "CLOSE";
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_UNSURE, "%d %s", r, err);
	ck_assert_msg(strstr(err, "end of data: the server closed") != NULL,
	    "%s", err);
}
END_TEST

/* --- what the server gets --------------------------------------------------- */

/* the wire form of a post, written independently of lmtp.c: LF (not
 * after CR) becomes CRLF, a last line without newline gets CRLF */
static char *
wire(const unsigned char *p, size_t n, size_t *len_r)
{
	char *w = malloc(2 * n + 3);
	size_t i, o = 0;

	ck_assert_ptr_nonnull(w);
	for (i = 0; i < n; i++) {
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			w[o++] = '\r';
		w[o++] = (char)p[i];
	}
	if (n > 0 && p[n - 1] != '\n') {
		w[o++] = '\r';
		w[o++] = '\n';
	}
	*len_r = o;
	return w;
}

START_TEST(dot_stuffing)
{
	static const char p[] = ".starts with a dot\n..two\n.\nmid . dot\n"
	    ".\r\n. \n...\n";
	static const char raw_want[] = "..starts with a dot\r\n...two\r\n"
	    "..\r\nmid . dot\r\n..\r\n.. \r\n....\r\n.\r\n";
	struct srv sv = no_script;
	char err[1024], *raw, *data, *w;
	size_t n, wn;
	int r;

	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p, sizeof(p) - 1, NULL,
	    err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	raw = slurp("raw", &n);
	ck_assert_str_eq(raw, raw_want);
	data = slurp("data", &n);
	w = wire((const unsigned char *)p, sizeof(p) - 1, &wn);
	ck_assert_uint_eq(n, wn);
	ck_assert_int_eq(memcmp(data, w, n), 0);
	free(raw);
	free(data);
	free(w);
}
END_TEST

START_TEST(no_final_newline_and_bare_cr)
{
	static const char p[] = "Subject: x\r\n\r\nbare\rcr\r\rdouble\nlast";
	static const char want[] = "Subject: x\r\n\r\nbare\rcr\r\r"
	    "double\r\nlast\r\n";
	static const char p2[] = "Subject: y\n\nends in CR\r";
	struct srv sv = no_script;
	char err[1024], *data;
	size_t n;
	int r;

	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p, sizeof(p) - 1, NULL,
	    err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	data = slurp("data", &n);
	ck_assert_uint_eq(n, sizeof(want) - 1);
	ck_assert_int_eq(memcmp(data, want, n), 0);
	free(data);
	teardown();
	setup();
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p2, sizeof(p2) - 1,
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	data = slurp("data", &n);
	ck_assert_str_eq(data, "Subject: y\r\n\r\nends in CR\r\r\n");
	free(data);
	/* an empty post is an empty message */
	teardown();
	setup();
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", "", 0, NULL, err,
	    sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	data = slurp("raw", &n);
	ck_assert_str_eq(data, ".\r\n");
	free(data);
}
END_TEST

/* 8-bit bytes pass unchanged; BODY=8BITMIME only when offered and needed */
START_TEST(eight_bit)
{
	static const char p[] = "Subject: caf\xe9\n\nna\xefve \x00 \xff\n";
	struct srv sv = no_script;
	char err[1024], *cmds, *data, *w;
	size_t n, wn;
	unsigned notes;
	int r;

	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p, sizeof(p) - 1,
	    &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, 0);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<a@example.org> "
	    "BODY=8BITMIME\r\n"));
	data = slurp("data", &n);
	w = wire((const unsigned char *)p, sizeof(p) - 1, &wn);
	ck_assert_uint_eq(n, wn);
	ck_assert_int_eq(memcmp(data, w, n), 0);
	free(cmds);
	free(data);
	free(w);

	/* not offered: sent all the same, noted */
	teardown();
	setup();
	sv.reply[S_LHLO] = "250 test.example";
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p, sizeof(p) - 1,
	    &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, LMTP_NOTE_8BIT_NO_MIME);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<a@example.org>\r\n"));
	free(cmds);

	/* a 7-bit post: no parameter */
	teardown();
	setup();
	sv.reply[S_LHLO] = NULL;
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<a@example.org>\r\n"));
	free(cmds);
}
END_TEST

/* a line over 998 bytes is broken with CRLF SP; nothing else changes */
START_TEST(long_lines_folded)
{
	size_t len = 3000, i, n, col, max = 0;
	unsigned char *p = malloc(len + 1);
	struct srv sv = no_script;
	char err[1024], *raw, *data;
	unsigned notes;
	int r;

	ck_assert_ptr_nonnull(p);
	p[0] = '.';
	for (i = 1; i < len; i++)
		p[i] = 'A' + (unsigned char)(i % 26);
	p[len] = '\n';
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", p, len + 1, &notes,
	    err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, LMTP_NOTE_FOLDED);
	raw = slurp("raw", &n);
	for (i = 0, col = 0; i < n; i++) {
		if (raw[i] == '\n') {
			if (col - 1 > max)
				max = col - 1;
			col = 0;
		} else
			col++;
	}
	ck_assert_uint_eq(max, LG_MAX_LMTP_DATA_LINE);
	data = slurp("data", &n);
	/* the data with every CRLF SP taken out is the line again */
	{
		char *q = malloc(n + 1);
		size_t o = 0;

		ck_assert_ptr_nonnull(q);
		for (i = 0; i < n; i++) {
			if (i + 2 < n && data[i] == '\r' &&
			    data[i + 1] == '\n' && data[i + 2] == ' ') {
				i += 2;
				continue;
			}
			q[o++] = data[i];
		}
		ck_assert_uint_eq(o, len + 2);
		ck_assert_int_eq(memcmp(q, p, len), 0);
		free(q);
	}
	free(raw);
	free(data);
	free(p);
}
END_TEST

/* every mail fixture arrives byte for byte (CRLF line ends; a fixture
 * with LF line ends comes back exactly when CRLF is turned into LF) */
START_TEST(fixtures_byte_identical)
{
	const char *top = getenv("top_srcdir");
	char path[4096], err[1024];
	struct dirent *de;
	DIR *d;
	char *p, *data, *w;
	size_t n, dn, wn, i, col, maxcol;
	int r, count = 0, roundtrip = 0;

	ck_assert_ptr_nonnull(top);
	snprintf(path, sizeof(path), "%s/tests/data/mail", top);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		if (strstr(de->d_name, ".eml") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/tests/data/mail/%s", top,
		    de->d_name);
		p = slurp_path(path, &n);
		for (i = 0, col = 0, maxcol = 0; i < n; i++) {
			col = p[i] == '\n' ? 0 : col + 1;
			if (col > maxcol)
				maxcol = col;
		}
		if (maxcol > LG_MAX_LMTP_DATA_LINE - 1) {
			free(p);
			continue;
		}
		rm("raw");
		rm("data");
		rm("cmds");
		start(&no_script, count % 2);
		r = deliver("a@example.org", "d@example.org", p, n, NULL, err,
		    sizeof(err));
		finish();
		close(lfd);
		lfd = -1;
		rm("sock");
		ck_assert_msg(r == LMTP_OK, "%s: %d %s", de->d_name, r, err);
		data = slurp("data", &dn);
		w = wire((unsigned char *)p, n, &wn);
		ck_assert_msg(dn == wn && memcmp(data, w, dn) == 0,
		    "%s: %zu bytes received, %zu expected", de->d_name, dn, wn);
		/* LF-only posts: the exact bytes back */
		if (memchr(p, '\r', n) == NULL && n > 0 && p[n - 1] == '\n') {
			size_t o = 0;

			for (i = 0; i < dn; i++)
				if (!(data[i] == '\r' && i + 1 < dn &&
				    data[i + 1] == '\n'))
					data[o++] = data[i];
			ck_assert_msg(o == n && memcmp(data, p, n) == 0,
			    "%s: not byte-identical", de->d_name);
			roundtrip++;
		}
		count++;
		free(p);
		free(data);
		free(w);
	}
	closedir(d);
	ck_assert_int_ge(count, 30);
	ck_assert_int_ge(roundtrip, 20);
}
END_TEST

/* --- addresses ---------------------------------------------------------- */

static const struct {
	const char *in, *out;
	int rc;
} paths[] = {
	{ "", "", 0 },
	{ "a@example.org", "a@example.org", 0 },
	{ "first.last+tag@example.org", "first.last+tag@example.org", 0 },
	{ "postmaster", "postmaster", 0 },
	{ "MAILER-DAEMON", "MAILER-DAEMON", 0 },
	{ "a b@example.org", "\"a b\"@example.org", 0 },
	{ "a\"b\\c@example.org", "\"a\\\"b\\\\c\"@example.org", 0 },
	{ ".a@example.org", "\".a\"@example.org", 0 },
	{ "a..b@example.org", "\"a..b\"@example.org", 0 },
	{ "a@b@example.org", "\"a@b\"@example.org", 0 },
	{ "a<b>@example.org", "\"a<b>\"@example.org", 0 },
	/* already quoted, as Postfix's pipe(8) with flags=q hands the
	 * envelope over: written as it is, never quoted again */
	{ "\"a b\"@example.org", "\"a b\"@example.org", 0 },
	{ "\"a\\\"b\\\\c\"@example.org", "\"a\\\"b\\\\c\"@example.org", 0 },
	{ "\"a@b\"@example.org", "\"a@b\"@example.org", 0 },
	{ "\"j\xc3\xb6rg x\"@example.org", "\"j\xc3\xb6rg x\"@example.org", 1 },
	/* quotes that do not make a quoted-string are characters */
	{ "\"a\"b\"@example.org", "\"\\\"a\\\"b\\\"\"@example.org", 0 },
	{ "\"ab\\\"@example.org", "\"\\\"ab\\\\\\\"\"@example.org", 0 },
	{ "\"@example.org", "\"\\\"\"@example.org", 0 },
	{ "a@[192.0.2.1]", "a@[192.0.2.1]", 0 },
	{ "a@[IPv6:2001:db8::1]", "a@[IPv6:2001:db8::1]", 0 },
	{ "j\xc3\xb6rg@example.org", "j\xc3\xb6rg@example.org", 1 },
	{ "a@b\xc3\xbc\x63her.example", "a@b\xc3\xbc\x63her.example", 1 },
	{ "a\r\nRCPT TO:<x@y>@example.org", NULL, -1 },
	{ "a\n@example.org", NULL, -1 },
	{ "a\x7f@example.org", NULL, -1 },
	{ "a\xe9@example.org", NULL, -1 },	/* Latin-1, not UTF-8 */
	{ "@example.org", NULL, -1 },
	{ "a@", NULL, -1 },
	{ "a@exa mple.org", NULL, -1 },
	{ "a@example.org>", NULL, -1 },
	{ "a@.example.org", NULL, -1 },
	{ "a@example..org", NULL, -1 },
	{ "a@[1.2.3.4", NULL, -1 },
};

START_TEST(path_table)
{
	char out[LG_MAX_LMTP_PATH + 1];
	int r = lmtp_path(paths[_i].in, out, sizeof(out));

	ck_assert_msg(r == paths[_i].rc, "case %d: %d", _i, r);
	if (r >= 0)
		ck_assert_str_eq(out, paths[_i].out);
}
END_TEST

START_TEST(path_length)
{
	char in[400], out[LG_MAX_LMTP_PATH + 1];

	memset(in, 'a', sizeof(in));
	memcpy(in + LG_MAX_LMTP_PATH - 12, "@example.org", 13);
	ck_assert_int_eq(lmtp_path(in, out, sizeof(out)), 0);
	ck_assert_uint_eq(strlen(out), LG_MAX_LMTP_PATH);
	memset(in, 'a', sizeof(in));
	memcpy(in + LG_MAX_LMTP_PATH - 11, "@example.org", 13);
	ck_assert_int_eq(lmtp_path(in, out, sizeof(out)), -1);
	/* quoting must fit too */
	memset(in, 'a', sizeof(in));
	in[0] = ' ';
	memcpy(in + LG_MAX_LMTP_PATH - 13, "@example.org", 13);
	ck_assert_int_eq(lmtp_path(in, out, sizeof(out)), -1);
	ck_assert_int_eq(lmtp_path("a@example.org", out, 5), -1);
}
END_TEST

/* a sender that cannot be written goes as <>; a recipient that cannot
 * is refused for good before anything is sent */
START_TEST(unwritable_addresses)
{
	struct srv sv = no_script;
	char err[1024], *cmds;
	size_t n;
	unsigned notes;
	int r;

	start(&sv, 0);
	r = deliver("evil\r\nRCPT TO:<x@y>", "d@example.org", post,
	    strlen(post), &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, LMTP_NOTE_NULL_SENDER);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<>\r\nRCPT TO:"
	    "<d@example.org>\r\nDATA\r\n"));
	ck_assert_ptr_null(strstr(cmds, "x@y"));
	free(cmds);

	teardown();
	setup();
	start(&sv, 0);
	r = deliver("a@example.org", "d\n@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_PERM, "%d %s", r, err);
	cmds = slurp("cmds", &n);
	ck_assert_uint_eq(n, 0);
	free(cmds);
}
END_TEST

/* UTF-8 addresses: SMTPUTF8 when offered, else the sender becomes <> and
 * a recipient is refused */
START_TEST(smtputf8)
{
	struct srv sv = no_script;
	char err[1024], *cmds;
	size_t n;
	unsigned notes;
	int r;

	sv.reply[S_LHLO] = "250-test.example\r\n250-SMTPUTF8\r\n250 8BITMIME";
	start(&sv, 0);
	r = deliver("j\xc3\xb6rg@example.org", "d@example.org", post,
	    strlen(post), &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, 0);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<j\xc3\xb6rg@example.org> "
	    "SMTPUTF8\r\n"));
	free(cmds);

	teardown();
	setup();
	sv.reply[S_LHLO] = NULL;
	start(&sv, 0);
	r = deliver("j\xc3\xb6rg@example.org", "d@example.org", post,
	    strlen(post), &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, LMTP_NOTE_NULL_SENDER);
	cmds = slurp("cmds", &n);
	ck_assert_ptr_nonnull(strstr(cmds, "MAIL FROM:<>\r\n"));
	free(cmds);

	teardown();
	setup();
	start(&sv, 0);
	r = deliver("a@example.org", "d\xc3\xb6@example.org", post,
	    strlen(post), NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_PERM, "%d %s", r, err);
	ck_assert_ptr_nonnull(strstr(err, "SMTPUTF8"));
}
END_TEST

/* a last LHLO line of the bare code ("250") offers nothing: the text of
 * the line before it (here the server's name) is no extension */
START_TEST(bare_last_lhlo_line)
{
	struct srv sv = no_script;
	char err[1024];
	unsigned notes = 99;
	int r;

	sv.reply[S_LHLO] = "250-SMTPUTF8 test.example\r\n250";
	start(&sv, 0);
	r = deliver("a@example.org", "d\xc3\xb6@example.org", post,
	    strlen(post), &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_PERM, "%d %s", r, err);
	ck_assert_ptr_nonnull(strstr(err, "SMTPUTF8"));
}
END_TEST

/* --- replies that are not ---------------------------------------------------- */

START_TEST(bad_replies)
{
	static const char *const bad[] = {
		"hello there",			/* no code */
		"25",				/* too short */
		"2500 too many digits",
		"650 no such class",
		"250_x",
	};
	struct srv sv = no_script;
	char err[1024];
	int r;

	sv.reply[S_MAIL] = bad[_i];
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%s: %d %s", bad[_i], r, err);
	ck_assert_msg(strstr(err, "MAIL FROM: not a reply") != NULL, "%s",
	    err);
}
END_TEST

/* the lines of one reply with different codes are no answer: after the
 * data "550-..." then "250 ..." must not count as a delivery (the post
 * stays with the MTA), nor may such a reply to RCPT let the data go */
START_TEST(mixed_code_replies)
{
	static const struct {
		enum stage stage;
		const char *reply;
	} t[] = {
		{ S_END, "550-5.7.1 refused\r\n250 2.0.0 delivered" },
		{ S_END, "450-4.2.0 busy\r\n250 2.0.0 delivered" },
		{ S_END, "250-2.0.0 ok\r\n550 5.7.1 refused after all" },
		{ S_RCPT, "550-5.1.1 no such user\r\n250 2.1.5 ok" },
		{ S_DATA, "554-5.0.0 no\r\n354 go ahead" },
	};
	struct srv sv = no_script;
	char err[1024], *raw;
	size_t n;
	int r;

	sv.reply[t[_i].stage] = t[_i].reply;
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	/* (after the whole post: no answer, the server may have it) */
	ck_assert_msg(r == (t[_i].stage == S_END ? LMTP_UNSURE : LMTP_TEMP),
	    "%s: %d %s", t[_i].reply, r, err);
	ck_assert_int_eq(lmtp_last_ok(), 0);
	ck_assert_msg(strstr(err, "different codes") != NULL, "%s", err);
	if (t[_i].stage != S_END) {
		raw = slurp("raw", &n);
		ck_assert_uint_eq(n, 0);
		free(raw);
	}
}
END_TEST

/* a server that answers ahead is out of step: a "250" sent with the
 * 354, before the post, by a server that then never reads the post,
 * must not count as its delivery; nor may a greeting or a reply said
 * twice shift every later reply onto the wrong command */
START_TEST(replies_ahead)
{
	static const struct {
		enum stage stage;
		const char *reply;
	} t[] = {
		{ S_DATA, "354 go ahead\r\n250 2.0.0 delivered" },
		{ S_GREET, "220 test.example\r\n250 ok" },
		{ S_RCPT, "250 2.1.5 ok\r\n250 2.1.5 ok" },
	};
	struct srv sv = no_script;
	char err[1024];
	int r;

	sv.reply[t[_i].stage] = t[_i].reply;
	sv.stall_data = 1;		/* the post is never read */
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%s: %d %s", t[_i].reply, r, err);
	ck_assert_int_eq(lmtp_last_ok(), 0);
	ck_assert_msg(strstr(err, "out of step") != NULL, "%s", err);
}
END_TEST

/* a reply line of 6000 bytes with control characters: cut, masked, and
 * the code still counts */
START_TEST(long_reply_line)
{
	static char reply[6100];
	struct srv sv = no_script;
	char err[1024];
	int r;

	memcpy(reply, "550 ", 4);
	memset(reply + 4, 'x', 6000);
	reply[100] = '\x1b';
	reply[101] = '\0' + 7;
	reply[6004] = '\0';
	sv.reply[S_RCPT] = reply;
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_PERM, "%d %s", r, err);
	ck_assert_ptr_null(strchr(err, '\x1b'));
	ck_assert_ptr_null(strchr(err, '\x07'));
	ck_assert_uint_lt(strlen(err), 400);
}
END_TEST

START_TEST(too_many_reply_lines)
{
	static char reply[LG_MAX_LMTP_REPLY_LINES * 12 + 64];
	struct srv sv = no_script;
	char err[1024];
	size_t o = 0;
	unsigned i;
	int r;

	for (i = 0; i < LG_MAX_LMTP_REPLY_LINES + 1; i++)
		o += (size_t)snprintf(reply + o, sizeof(reply) - o,
		    "250-X%u\r\n", i);
	snprintf(reply + o, sizeof(reply) - o, "250 end");
	sv.reply[S_LHLO] = reply;
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post, strlen(post),
	    NULL, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_TEMP, "%d %s", r, err);
	ck_assert_ptr_nonnull(strstr(err, "lines"));
}
END_TEST

/* a reply whose CR and LF arrive in two reads is one line: a bare "250"
 * after the data delivers (it is no "not a reply", which would defer a
 * post the server has, and deliver it twice), and 8BITMIME on the last
 * line of the LHLO reply counts */
START_TEST(crlf_split_across_reads)
{
	static const char post8[] = "From: a@example.org\nSubject: caf\xc3\xa9"
	    "\n\nhello\n";
	struct srv sv = no_script;
	char err[1024], *cmds;
	size_t n;
	unsigned notes = 99;
	int r;

	sv.split_crlf = 1;
	sv.reply[S_LHLO] = "250-test.example\r\n250 8BITMIME";
	sv.reply[S_END] = "250";
	start(&sv, 0);
	r = deliver("a@example.org", "d@example.org", post8, strlen(post8),
	    &notes, err, sizeof(err));
	finish();
	ck_assert_msg(r == LMTP_OK, "%d %s", r, err);
	ck_assert_uint_eq(notes, 0);
	cmds = slurp("cmds", &n);
	ck_assert_msg(strstr(cmds, "MAIL FROM:<a@example.org> BODY=8BITMIME"
	    "\r\n") != NULL, "%s", cmds);
	free(cmds);
}
END_TEST

/* --- the dispatch -------------------------------------------------------- */

START_TEST(handoff_chooses)
{
	char *prog_ok[] = { "/bin/true", NULL };
	char *prog_bad[] = { "/bin/false", NULL };
	char *prog_100[] = { "/bin/sh", "-c", "cat > /dev/null; exit 100",
	    NULL };
	char *lmtp[] = { dest, "d@example.org", NULL };
	static const unsigned char latin1[] = "Subject: \xe9\n\n.";
	struct srv sv = no_script;
	char err[1024], note[256];
	int r;

	ck_assert_int_eq(handoff_is_lmtp(prog_ok), 0);
	ck_assert_int_eq(handoff_post(prog_ok, "a@example.org",
	    (const unsigned char *)post, strlen(post), -1, 5000,
	    HANDOFF_EXITS_QMAIL, note, sizeof(note), err, sizeof(err)),
	    HANDOFF_OK);
	ck_assert_int_eq(handoff_post(prog_bad, "a@example.org",
	    (const unsigned char *)post, strlen(post), -1, 5000,
	    HANDOFF_EXITS_QMAIL, note, sizeof(note), err, sizeof(err)),
	    HANDOFF_TEMP);
	ck_assert_str_eq(err, "/bin/false exited with status 1");
	/* a permanent failure by the dialect's codes; the rest temporary */
	ck_assert_int_eq(handoff_post(prog_100, "a@example.org",
	    (const unsigned char *)post, strlen(post), -1, 5000,
	    HANDOFF_EXITS_QMAIL, note, sizeof(note), err, sizeof(err)),
	    HANDOFF_PERM);
	ck_assert_str_eq(err, "/bin/sh exited with status 100");
	ck_assert_int_eq(handoff_post(prog_100, "a@example.org",
	    (const unsigned char *)post, strlen(post), -1, 5000,
	    HANDOFF_EXITS_TEMP, note, sizeof(note), err, sizeof(err)),
	    HANDOFF_TEMP);
	ck_assert_int_eq(handoff_post(prog_100, "a@example.org",
	    (const unsigned char *)post, strlen(post), -1, 5000,
	    HANDOFF_EXITS_POSTFIX, note, sizeof(note), err, sizeof(err)),
	    HANDOFF_TEMP);
	ck_assert_int_eq(handoff_exit_perm(100, HANDOFF_EXITS_QMAIL), 1);
	ck_assert_int_eq(handoff_exit_perm(111, HANDOFF_EXITS_QMAIL), 0);
	ck_assert_int_eq(handoff_exit_perm(69, HANDOFF_EXITS_POSTFIX), 1);
	ck_assert_int_eq(handoff_exit_perm(77, HANDOFF_EXITS_POSTFIX), 1);
	ck_assert_int_eq(handoff_exit_perm(75, HANDOFF_EXITS_POSTFIX), 0);
	ck_assert_int_eq(handoff_exit_perm(100, HANDOFF_EXITS_POSTFIX), 0);

	sv.reply[S_RCPT] = "550 5.1.1 no such list";
	start(&sv, 0);
	ck_assert_int_eq(handoff_is_lmtp(lmtp), 1);
	r = handoff_post(lmtp, "a@example.org", (const unsigned char *)post,
	    strlen(post), -1, 5000, HANDOFF_EXITS_TEMP, note, sizeof(note),
	    err, sizeof(err));
	finish();
	ck_assert_msg(r == HANDOFF_PERM, "%d %s", r, err);
	ck_assert_ptr_nonnull(strstr(err, "RCPT TO: 550 5.1.1 no such list"));

	teardown();
	setup();
	sv.reply[S_RCPT] = NULL;
	sv.reply[S_LHLO] = "250 x";
	start(&sv, 0);
	r = handoff_post(lmtp, "bad\x01@example.org", latin1,
	    sizeof(latin1) - 1, -1, 5000, HANDOFF_EXITS_TEMP, note,
	    sizeof(note), err, sizeof(err));
	finish();
	ck_assert_msg(r == HANDOFF_OK, "%d %s", r, err);
	ck_assert_ptr_nonnull(strstr(note, "sent as <>"));
	ck_assert_ptr_nonnull(strstr(note, "8BITMIME"));
}
END_TEST

static Suite *
lmtp_suite(void)
{
	Suite *s = suite_create("lmtp");
	TCase *tc;

	tc = tcase_create("deliver");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, delivers_on_250);
	tcase_add_test(tc, unix_socket);
	tcase_add_loop_test(tc, refusals_at_each_stage, 0, 12);
	tcase_add_test(tc, unexpected_codes_are_temporary);
	tcase_add_test(tc, nobody_listening);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeouts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, hang_at_each_stage, 0, 6);
	tcase_add_test(tc, total_timeout);
	tcase_add_test(tc, data_timeout);
	tcase_add_test(tc, connect_timeout);
	tcase_add_test(tc, unix_queue_full);
	tcase_add_test(tc, unix_queue_full_timeout);
	suite_add_tcase(s, tc);

	tc = tcase_create("lost");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, closed_mid_data);
	tcase_add_test(tc, refused_mid_data);
	tcase_add_test(tc, closed_instead_of_reply);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dot_stuffing);
	tcase_add_test(tc, no_final_newline_and_bare_cr);
	tcase_add_test(tc, eight_bit);
	tcase_add_test(tc, long_lines_folded);
	tcase_add_test(tc, fixtures_byte_identical);
	suite_add_tcase(s, tc);

	tc = tcase_create("addresses");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, path_table, 0,
	    (int)(sizeof(paths) / sizeof(paths[0])));
	tcase_add_test(tc, path_length);
	tcase_add_test(tc, unwritable_addresses);
	tcase_add_test(tc, smtputf8);
	tcase_add_test(tc, bare_last_lhlo_line);
	suite_add_tcase(s, tc);

	tc = tcase_create("replies");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, bad_replies, 0, 5);
	tcase_add_loop_test(tc, mixed_code_replies, 0, 5);
	tcase_add_loop_test(tc, replies_ahead, 0, 3);
	tcase_add_test(tc, long_reply_line);
	tcase_add_test(tc, too_many_reply_lines);
	tcase_add_test(tc, crlf_split_across_reads);
	tcase_add_test(tc, handoff_chooses);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lmtp_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
