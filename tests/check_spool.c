/*
 * check_spool.c - the post spool (memory, temporary file, limits) and the
 * command runner (exit status, exec failure, signals, timeout, input)
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate/app/run.h"
#include "gate/mail/spool.h"
#include "gate/util/clock.h"

static char tmpdir[4096];

static void
setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_spool.XXXXXX",
	    t && *t == '/' ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
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

/* a pipe whose read end yields n bytes of a pattern; returns the read end */
static int
feed(size_t n)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		char buf[4096];
		size_t i, k;

		close(p[0]);
		for (i = 0; i < n; i += k) {
			size_t j;

			k = n - i < sizeof(buf) ? n - i : sizeof(buf);
			for (j = 0; j < k; j++)
				buf[j] = (char)('a' + (i + j) % 26);
			if (write(p[1], buf, k) != (ssize_t)k)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

/* 1 if s holds the pattern feed() writes */
static int
pattern_ok(const struct spool *s)
{
	size_t i;

	for (i = 0; i < s->len; i++)
		if (s->data[i] != (unsigned char)('a' + i % 26))
			return 0;
	return 1;
}

START_TEST(small_post_stays_in_memory)
{
	struct spool s;
	char err[256];
	int fd = feed(1000);

	ck_assert_int_eq(spool_read(&s, fd, 4096, 1 << 20, err, sizeof(err)),
	    0);
	close(fd);
	ck_assert_uint_eq(s.len, 1000);
	ck_assert_int_eq(s.fd, -1);
	ck_assert(pattern_ok(&s));
	ck_assert_uint_eq(spool_scan_len(&s, 100), 100);
	ck_assert_uint_eq(spool_scan_len(&s, 5000), 1000);
	spool_free(&s);
	while (wait(NULL) > 0)
		;
}
END_TEST

/*
 * Standard input left non-blocking by whoever started the filter (the
 * flag belongs to the open file, shared with the parent): the post is
 * waited for, not refused with EAGAIN (the filter deferred it, every
 * time the MTA offered it again).
 */
START_TEST(nonblocking_input_is_waited_for)
{
	struct spool s;
	char err[256];
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) |
	    O_NONBLOCK), 0);
	if ((pid = fork()) == 0) {
		char buf[1000];
		int i, j;

		close(p[0]);
		usleep(200000);	/* nothing to read at first */
		for (i = 0; i < 5; i++) {
			for (j = 0; j < 1000; j++)
				buf[j] = (char)('a' + (i * 1000 + j) % 26);
			if (write(p[1], buf, sizeof(buf)) != sizeof(buf))
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	ck_assert(pid > 0);
	close(p[1]);
	ck_assert_msg(spool_read(&s, p[0], 4096, 1 << 20, err,
	    sizeof(err)) == 0, "%s", err);
	close(p[0]);
	ck_assert_uint_eq(s.len, 5000);
	ck_assert(pattern_ok(&s));
	spool_free(&s);
	while (wait(NULL) > 0)
		;
}
END_TEST

START_TEST(exactly_mem_max_in_memory_one_more_to_file)
{
	struct spool s;
	char err[256];
	int fd;

	fd = feed(8192);
	ck_assert_int_eq(spool_read(&s, fd, 8192, 1 << 20, err, sizeof(err)),
	    0);
	close(fd);
	ck_assert_int_eq(s.fd, -1);
	ck_assert_uint_eq(s.len, 8192);
	spool_free(&s);

	setenv("TMPDIR", tmpdir, 1);
	fd = feed(8193);
	ck_assert_int_eq(spool_read(&s, fd, 8192, 1 << 20, err, sizeof(err)),
	    0);
	close(fd);
	ck_assert_int_ge(s.fd, 0);
	ck_assert_uint_eq(s.len, 8193);
	ck_assert(pattern_ok(&s));
	spool_free(&s);
	unsetenv("TMPDIR");
	while (wait(NULL) > 0)
		;
}
END_TEST

START_TEST(too_big_and_unwritable)
{
	struct spool s;
	char err[256], bad[4200];
	int fd;

	fd = feed(100000);
	ck_assert_int_eq(spool_read(&s, fd, 4096, 50000, err, sizeof(err)),
	    SPOOL_ETOOBIG);
	close(fd);
	ck_assert_ptr_nonnull(strstr(err, "too large"));
	spool_free(&s);

	snprintf(bad, sizeof(bad), "%s/no/such/dir", tmpdir);
	setenv("TMPDIR", bad, 1);
	fd = feed(100000);
	ck_assert_int_eq(spool_read(&s, fd, 4096, 1 << 20, err, sizeof(err)),
	    SPOOL_ERR);
	close(fd);
	ck_assert_ptr_nonnull(strstr(err, "cannot create"));
	spool_free(&s);
	unsetenv("TMPDIR");
	while (wait(NULL) > 0)
		;
}
END_TEST

START_TEST(regular_file_is_mapped_in_place)
{
	struct spool s;
	char err[256], path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/post", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "Subject: x\n\nbody\n", 17), 17);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(spool_read(&s, fd, 4, 1 << 20, err, sizeof(err)), 0);
	ck_assert_int_eq(s.fd, fd);
	ck_assert_uint_eq(s.len, 17);
	ck_assert_int_eq(memcmp(s.data, "Subject: x\n\nbody\n", 17), 0);
	spool_free(&s);
	/* spool_free does not close a descriptor it did not open */
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(spool_read(&s, fd, 4, 1 << 20, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.len, 0);
	spool_free(&s);
	close(fd);
}
END_TEST

/*
 * The monotonic clock as exit_at_the_deadline wants it: when armed, the
 * second look (run_argv's first at its deadline) waits until the
 * command has ended by itself, then says the deadline is long past.
 * Every other call is the kernel's clock.
 */
static volatile int skew_armed;
static int skew_calls;

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, id, ts);

	if (r == 0 && skew_armed && id == CLOCK_MONOTONIC) {
		if (++skew_calls == 2)
			usleep(400000);
		if (skew_calls >= 2)
			ts->tv_sec += 3600;
	}
	return r;
}

/* run argv with data, return the status */
static int
run(char *const *argv, const char *data, unsigned timeout, char *err,
    size_t errsz)
{
	return run_argv(argv, (const unsigned char *)data, strlen(data), -1,
	    timeout, err, errsz);
}

START_TEST(exit_status_and_input)
{
	char *sh_ok[] = { "/bin/sh", "-c", "test \"$(cat)\" = hello", NULL };
	char *sh_67[] = { "/bin/sh", "-c", "exit 67", NULL };
	char err[256];

	ck_assert_int_eq(run(sh_ok, "hello", 10, err, sizeof(err)), 0);
	ck_assert_int_eq(run(sh_ok, "other", 10, err, sizeof(err)), 1);
	ck_assert_int_eq(run(sh_67, "", 10, err, sizeof(err)), 67);
}
END_TEST

/* a command that ends by itself between run_argv's last wait and its
 * look at the deadline did what it did: a deliver that exited 0 had
 * delivered the post, and "timed out" deferred it for the MTA to
 * deliver again */
START_TEST(exit_at_the_deadline)
{
	char *slow_ok[] = { "/bin/sh", "-c", "sleep 0.05", NULL };
	char err[256] = "";
	int r;

	skew_calls = 0;
	skew_armed = 1;
	r = run(slow_ok, "", 10, err, sizeof(err));
	skew_armed = 0;
	ck_assert_msg(skew_calls >= 2, "the deadline was never looked at");
	ck_assert_msg(r == 0, "exited 0 at its deadline, run_argv said %d "
	    "(%s)", r, err);
	ck_assert_int_eq(run_last_ok(), 1);
}
END_TEST

/* one command of unsure_is_per_thread: its run_last_unsure after it */
struct unsure_run {
	char *const *argv;
	unsigned timeout_s;
	int rc, unsure;
	char err[256];
};

static void *
unsure_thread(void *arg)
{
	struct unsure_run *u = arg;

	u->rc = run_argv(u->argv, (const unsigned char *)"post\n", 5, -1,
	    u->timeout_s, u->err, sizeof(u->err));
	u->unsure = run_last_unsure();
	return NULL;
}

/*
 * Commands run at once in threads (listgate web: two moderators'
 * releases) each get their own run_last_unsure: a release killed by its
 * time-out before it read the post is a failure (the post stays held),
 * whatever another thread's release did meanwhile.  It was one answer
 * for the process: the other's "killed after reading the whole post"
 * left this post 'releasing', and one started meanwhile cleared an
 * unsure release's, which then stayed held to be released again.
 */
START_TEST(unsure_is_per_thread)
{
	char *sleeper[] = { "/bin/sleep", "10", NULL };
	char *reader[] = { "/bin/sh", "-c", "cat > /dev/null; sleep 10",
	    NULL };
	struct unsure_run a, b;
	pthread_t ta, tb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.argv = sleeper;	/* never reads: killed after 2 s, not unsure */
	a.timeout_s = 2;
	b.argv = reader;	/* reads it all: killed after 1 s, unsure */
	b.timeout_s = 1;
	ck_assert_int_eq(pthread_create(&ta, NULL, unsure_thread, &a), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, unsure_thread, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert_int_eq(a.rc, -1);
	ck_assert_int_eq(b.rc, -1);
	ck_assert_msg(b.unsure == 1, "read the whole post, then killed: not "
	    "said to be unsure (%s)", b.err);
	ck_assert_msg(a.unsure == 0, "killed before it read the post: said "
	    "to be unsure, the other thread's answer (%s)", a.err);
}
END_TEST

START_TEST(input_from_a_file_descriptor)
{
	char path[4200], out[4300], err[256];
	char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	int fd;

	snprintf(path, sizeof(path), "%s/in", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "from a file", 11), 11);	/* offset 11 */
	snprintf(out, sizeof(out), "test \"$(cat)\" = 'from a file'");
	argv[2] = out;
	ck_assert_int_eq(run_argv(argv, NULL, 0, fd, 10, err, sizeof(err)), 0);
	close(fd);
}
END_TEST

START_TEST(child_that_does_not_read)
{
	char *argv[] = { "/bin/true", NULL };
	char *big, err[256];
	size_t n = 4u << 20;

	big = malloc(n + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', n);
	big[n] = '\0';
	/* 4 MiB into a pipe nobody reads: no SIGPIPE, no hang */
	ck_assert_int_eq(run(argv, big, 10, err, sizeof(err)), 0);
	free(big);
}
END_TEST

START_TEST(failures_are_errors)
{
	char *missing[] = { "/nonexistent/prog", NULL };
	char *relative[] = { "true", NULL };
	char *killed[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	char *slow[] = { "/bin/sh", "-c", "sleep 30", NULL };
	char err[256];
	time_t t0;

	ck_assert_int_eq(run(missing, "", 10, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot execute"));
	ck_assert_int_eq(run(relative, "", 10, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "absolute"));
	ck_assert_int_eq(run(killed, "", 10, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "signal 9"));
	t0 = time(NULL);
	ck_assert_int_eq(run(slow, "", 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "timed out"));
	/* the command sleeps 30 s: the 1 s timeout ended it, whatever a
	 * busy machine added */
	ck_assert_int_le(time(NULL) - t0, 12);
}
END_TEST

static int forks;

static void
count_fork(void)
{
	forks++;
}

/* the command starts through posix_spawn, never fork: a fork of listgate
 * web (hundreds of threads) stopped every other thread's page faults and
 * allocations while it copied the page tables, stalls of a few hundred
 * ms under load.  fork runs the atfork handlers; posix_spawn does not. */
START_TEST(starts_without_fork)
{
	char *argv[] = { "/bin/sh", "-c", "test \"$(cat)\" = post && exit 5",
	    NULL };
	char err[256];

	ck_assert_int_eq(pthread_atfork(count_fork, NULL, NULL), 0);
	ck_assert_int_eq(run(argv, "post", 10, err, sizeof(err)), 5);
	ck_assert_int_eq(forks, 0);
}
END_TEST

/* the command gets no signal blocked and SIGPIPE (bit 12 of SigIgn)
 * not ignored, whatever the caller's (a web server thread blocks all; we
 * ignore SIGPIPE).  glibc's posix_spawn leaves its own two internal
 * signals, 32 and 33, ignored: no program sees them. */
START_TEST(child_signals_are_reset)
{
	char *argv[] = { "/bin/sh", "-c", "exec awk '/^SigBlk:/ && "
	    "$2 !~ /^0+$/ { bad = 1 } /^SigIgn:/ && index(\"13579bdf\", "
	    "substr($2, length($2) - 3, 1)) { bad = 1 } END { exit bad ? 1 : "
	    "3 }' /proc/self/status", NULL };
	sigset_t all, old;
	char err[256];

	ck_assert_int_eq(access("/proc/self/status", R_OK), 0);
	signal(SIGPIPE, SIG_IGN);
	sigfillset(&all);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
	ck_assert_int_eq(run(argv, "", 10, err, sizeof(err)), 3);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
}
END_TEST

/* a post copied while standard input is closed gets descriptor 0 (close-
 * on-exec, as every copy): the command must still read it there */
START_TEST(post_reaches_a_command_when_our_stdin_was_closed)
{
	char *sh_ok[] = { "/bin/sh", "-c", "test \"$(cat)\" = hello && exit 7",
	    NULL };
	char err[256];

	close(STDIN_FILENO);
	ck_assert_int_eq(run(sh_ok, "hello", 10, err, sizeof(err)), 7);
}
END_TEST

static void
watchdog_like(int sig)
{
	(void)sig;
	run_kill_active();
	_exit(0);
}

/* the filter's watchdog (SIGALRM: kill the running command's group and
 * exit) must never miss a command that is starting: an alarm while
 * posix_spawn ran found no child to kill, and the command delivered the
 * post after the MTA had been told to try again.  Alarms at 0 to 1.2 ms
 * into run_argv, each in a process of its own; a command that escaped
 * writes the marker 0.3 s later. */
static void
never_misses(int signo)
{
	char marker[4200], cmd[4400];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct itimerspec it;
	struct sigevent sev;
	struct sigaction sa;
	timer_t tm;
	char err[256];
	int i, st;
	pid_t pid;

	snprintf(marker, sizeof(marker), "%s/escaped", tmpdir);
	snprintf(cmd, sizeof(cmd), "sleep 0.3; echo x >> '%s'", marker);
	/* without an alarm the command runs and writes the marker */
	ck_assert_int_eq(run(argv, "post\n", 10, err, sizeof(err)), 0);
	ck_assert_int_eq(access(marker, F_OK), 0);
	ck_assert_int_eq(unlink(marker), 0);
	for (i = 0; i < 60; i++) {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = watchdog_like;
			sigaction(signo, &sa, NULL);
			memset(&sev, 0, sizeof(sev));
			sev.sigev_notify = SIGEV_SIGNAL;
			sev.sigev_signo = signo;
			if (timer_create(CLOCK_MONOTONIC, &sev, &tm) < 0)
				_exit(3);
			memset(&it, 0, sizeof(it));
			it.it_value.tv_nsec = 1000 + (i % 30) * 40000;
			timer_settime(tm, 0, &it, NULL);
			run(argv, "post\n", 10, err, sizeof(err));
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	usleep(700 * 1000);
	ck_assert_msg(access(marker, F_OK) != 0, "a command outlived the "
	    "handler of signal %d that should have killed it", signo);
}

START_TEST(watchdog_never_misses_a_starting_command)
{
	never_misses(SIGALRM);
}
END_TEST

/* nor does a stop (SIGTERM, SIGINT, SIGHUP), which the filter handles
 * as the watchdog */
START_TEST(stop_never_misses_a_starting_command)
{
	never_misses(SIGTERM);
	never_misses(SIGHUP);
}
END_TEST

/* wall milliseconds of one run_argv of argv, the post on fd or piped */
static double
run_ms(char *const *argv, int fd)
{
	struct timespec a, b;
	char err[256];

	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(run_argv(argv, (const unsigned char *)"post\n", 5,
	    fd, 10, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) * 1000 +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* the parent sleeps until the child exits, not in steps: polling every
 * 10 ms made each run cost at least 10 ms however fast the command
 * (the Postfix pass path).  The best of several runs is far below that
 * even on a busy machine. */
START_TEST(a_fast_command_is_not_waited_for)
{
	char *argv[] = { "/bin/true", NULL };
	char path[4200];
	double best = 1e9, ms;
	int i, fd;

	snprintf(path, sizeof(path), "%s/fast", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "post\n", 5), 5);
	for (i = 0; i < 8; i++) {
		ms = run_ms(argv, i % 2 ? fd : -1);
		if (ms < best)
			best = ms;
	}
	close(fd);
	ck_assert_msg(best < 8.0, "best of 8 runs of /bin/true took %.2f ms",
	    best);
}
END_TEST

START_TEST(timeout_kills_the_whole_group)
{
	char pidfile[4200], script[4400], buf[32];
	char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	char err[256];
	FILE *f;
	long pid = 0;

	snprintf(pidfile, sizeof(pidfile), "%s/grandchild", tmpdir);
	/* a grandchild in the background, then wait for it */
	snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; wait",
	    pidfile);
	argv[2] = script;
	ck_assert_int_eq(run(argv, "", 1, err, sizeof(err)), -1);
	f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	pid = strtol(buf, NULL, 10);
	ck_assert_int_gt(pid, 1);
	usleep(300000);
	/* gone, or a zombie waiting for init: not running in any case */
	if (kill((pid_t)pid, 0) == 0) {
		char statpath[64], state = 0;
		FILE *sf;

		snprintf(statpath, sizeof(statpath), "/proc/%ld/stat", pid);
		if ((sf = fopen(statpath, "r")) != NULL) {
			if (fscanf(sf, "%*d %*s %c", &state) != 1)
				state = 0;
			fclose(sf);
		}
		ck_assert_msg(state == 'Z' || state == 0,
		    "grandchild %ld still running (state %c)", pid, state);
	}
}
END_TEST

/*
 * A command that leaves a process behind (a mailer delivering in the
 * background) must not hold our standard output and error: under an MTA
 * they are its pipe, which qmail-local reads until its end and Postfix's
 * pipe(8) until its time limit, when it bounces the post.  Once
 * run_argv returned and we let go of the pipe, it ends at once, and what
 * the command said is there.
 */
START_TEST(a_command_left_behind_does_not_hold_our_output)
{
	char pidfile[4200], script[4400], buf[256];
	char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	char err[256];
	struct pollfd pfd;
	size_t got = 0;
	double t0, waited;
	ssize_t r;
	int p[2], o1, o2, eof = 0;
	FILE *f;
	long pid = 0;

	snprintf(pidfile, sizeof(pidfile), "%s/behind", tmpdir);
	snprintf(script, sizeof(script), "sleep 10 & echo $! > %s; "
	    "echo said; echo also >&2", pidfile);
	argv[2] = script;
	ck_assert_int_eq(pipe(p), 0);
	o1 = dup(STDOUT_FILENO);
	o2 = dup(STDERR_FILENO);
	ck_assert_int_ge(o1, 0);
	ck_assert_int_ge(o2, 0);
	ck_assert_int_ge(dup2(p[1], STDOUT_FILENO), 0);
	ck_assert_int_ge(dup2(p[1], STDERR_FILENO), 0);
	close(p[1]);
	r = run(argv, "", 10, err, sizeof(err));
	dup2(o1, STDOUT_FILENO);
	dup2(o2, STDERR_FILENO);
	close(o1);
	close(o2);
	ck_assert_msg(r == 0, "run_argv said %d (%s)", (int)r, err);
	/* nobody but a process left behind can hold the pipe now */
	t0 = clock_now_ms();
	while (!eof && clock_now_ms() - t0 < 3000) {
		pfd.fd = p[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		r = read(p[0], buf + got, sizeof(buf) - 1 - got);
		if (r <= 0)
			eof = 1;
		else
			got += (size_t)r;
	}
	waited = clock_now_ms() - t0;
	buf[got] = '\0';
	close(p[0]);
	if ((f = fopen(pidfile, "r")) != NULL) {
		if (fscanf(f, "%ld", &pid) == 1 && pid > 1)
			kill((pid_t)pid, SIGKILL);
		fclose(f);
	}
	ck_assert_msg(eof, "our output still open %.0f ms after the command "
	    "ended (held by the process it left behind)", waited);
	ck_assert_msg(strstr(buf, "said\n") != NULL &&
	    strstr(buf, "also\n") != NULL, "its output is lost: \"%s\"", buf);
}
END_TEST

static Suite *
spool_suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc;

	tc = tcase_create("spool");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, small_post_stays_in_memory);
	tcase_add_test(tc, exactly_mem_max_in_memory_one_more_to_file);
	tcase_add_test(tc, nonblocking_input_is_waited_for);
	tcase_add_test(tc, too_big_and_unwritable);
	tcase_add_test(tc, regular_file_is_mapped_in_place);
	suite_add_tcase(s, tc);

	tc = tcase_create("run");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, exit_status_and_input);
	tcase_add_test(tc, exit_at_the_deadline);
	tcase_add_test(tc, unsure_is_per_thread);
	tcase_add_test(tc, input_from_a_file_descriptor);
	tcase_add_test(tc, child_that_does_not_read);
	tcase_add_test(tc, failures_are_errors);
	tcase_add_test(tc, timeout_kills_the_whole_group);
	tcase_add_test(tc, a_command_left_behind_does_not_hold_our_output);
	tcase_add_test(tc, a_fast_command_is_not_waited_for);
	tcase_add_test(tc, starts_without_fork);
	tcase_add_test(tc, child_signals_are_reset);
	tcase_add_test(tc, post_reaches_a_command_when_our_stdin_was_closed);
	tcase_add_test(tc, watchdog_never_misses_a_starting_command);
	tcase_add_test(tc, stop_never_misses_a_starting_command);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(spool_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
