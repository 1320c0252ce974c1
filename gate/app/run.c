/*
 * run.c - run a deliver/release command with the post on its stdin
 *
 * argv comes from a checked template (absolute program, placeholders
 * expanded inside single arguments); no shell is ever involved.  The
 * child gets its own process group so a timeout (or the filter's
 * watchdog) can kill everything it started.  It is started with
 * posix_spawn (a vfork-like clone), never fork: listgate web runs
 * commands from a process of hundreds of threads.
 *
 * The child's standard input is a complete, seekable copy of the post,
 * made before it starts (a memory file, else an unlinked temporary
 * file), never a pipe we feed: when we die (SIGKILL, Ctrl-C, the OOM
 * killer) while it runs, it still reads the whole post, never a part
 * of it that looks complete.  Its environment is a short list of ours
 * (env_keep): a moderator's PGPASSWORD never reaches it; of our
 * descriptors it gets standard input, output and error only.  The parent
 * sleeps in poll() on a pidfd of the child until it exits, so a fast
 * command is waited for no longer than it runs.  Never exits; -1 with a
 * message on failure.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate/app/run.h"
#include "gate/mail/spool.h"
#include "gate/util/clock.h"
#include "gate/util/xalloc.h"

extern char **environ;

/* a command's output kept for run_output_file's caller, at most, past
 * the post's own length */
#define RUN_OUTPUT_MAX	(1024u * 1024u)

/* without a pidfd (Linux before 5.3), how often the child's exit is
 * polled (ms) */
#define RUN_POLL_MS	1

/* what is read of a command's output pipe at one go, at most: one that
 * writes without end (or a process it left behind, once it ended) must
 * not keep us from its deadline or our answer */
#define RUN_DRAIN_MAX	(4u * 1024u * 1024u)

/* a descriptor that becomes readable when pid exits (Linux pidfd), or -1
 * where the kernel has none */
static int
pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0) {
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		return (int)fd;
	}
#endif
	(void)pid;
	return -1;
}

/*
 * What the child may see of our environment: the basics, the
 * configuration directory, and what the MTAs hand their commands (qmail-
 * local's envelope and qmail's own QMAIL* variables; Postfix's local(8)
 * and pipe(8) variables).  Nothing else: not libpq's PGPASSWORD and
 * friends, not the allocation-failure switches of the tests.
 */
static const char *const env_keep[] = {
	"PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "LOGNAME",
	"LISTGATE_CONFIG",
	/* qmail-local(8) */
	"SENDER", "NEWSENDER", "RECIPIENT", "LOCAL", "HOST", "HOST2", "HOST3",
	"HOST4", "EXT", "EXT2", "EXT3", "EXT4", "DTLINE", "RPLINE", "UFLINE",
	/* Postfix local(8), pipe(8) */
	"MAIL_CONFIG", "DOMAIN", "EXTENSION", "ORIGINAL_RECIPIENT", "ENVID",
	"CLIENT_ADDRESS", "CLIENT_HELO", "CLIENT_HOSTNAME", "CLIENT_PROTOCOL",
	"SASL_METHOD", "SASL_SENDER", "SASL_USERNAME",
	NULL
};
static const char *const env_keep_prefix[] = { "LC_", "QMAIL", NULL };

/* 1 if the environment entry e ("NAME=value") may reach the child */
static int
env_kept(const char *e)
{
	const char *eq = strchr(e, '=');
	size_t n, i;

	if (eq == NULL || eq == e)
		return 0;
	n = (size_t)(eq - e);
	for (i = 0; env_keep[i] != NULL; i++)
		if (strlen(env_keep[i]) == n && memcmp(e, env_keep[i], n) == 0)
			return 1;
	for (i = 0; env_keep_prefix[i] != NULL; i++)
		if (strncmp(e, env_keep_prefix[i],
		    strlen(env_keep_prefix[i])) == 0)
			return 1;
	return 0;
}

/* the child's environment: the kept entries of ours (pointers into
 * environ; xfree the array only), or NULL when out of memory */
char **
run_child_env(void)
{
	char **env;
	size_t n = 0, i, k = 0;

	for (i = 0; environ != NULL && environ[i] != NULL; i++)
		if (env_kept(environ[i]))
			n++;
	if ((env = xcalloc(n + 1, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; environ != NULL && environ[i] != NULL && k < n; i++)
		if (env_kept(environ[i]))
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}

/* the running child's pid (its process group), 0 when none, and
 * whether the last one exited 0: the calling thread's.  A handler of a
 * single-threaded command (filter, moderate) reads its only thread's;
 * listgate web runs releases in threads at once, where a process-wide
 * one was written by all of them (a data race) */
static __thread volatile sig_atomic_t active_pid, last_ok;
/* the same for the helper (run_spawn_helper: filter's only) */
static volatile sig_atomic_t helper_pid;

/* run_last_unsure's answer, the calling thread's: listgate web runs
 * releases in threads at once, and one's answer is not another's */
static __thread int last_unsure;

int
run_last_unsure(void)
{
	return last_unsure;
}

/* 1 when the file fd (a command's standard input, whose offset it
 * shared) was read to its end */
static int
read_to_end(int fd)
{
	struct stat sb;
	off_t at;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0)
		return 0;
	at = lseek(fd, 0, SEEK_CUR);
	return at >= sb.st_size;
}

int
run_last_ok(void)
{
	siginfo_t si;
	pid_t pid = (pid_t)active_pid;

	if (last_ok)
		return 1;
	/* exited but not reaped yet (we were woken by the signal, not by
	 * its exit): ask without reaping it */
	if (pid <= 0)
		return 0;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 && si.si_pid == pid && si.si_code == CLD_EXITED &&
	    si.si_status == 0;
}

/* the signals that end a single-threaded caller (the watchdog, a stop):
 * blocked while active_pid and last_ok change */
static void
stop_signals(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGALRM);
	sigaddset(s, SIGTERM);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGHUP);
}

void
run_kill_active(void)
{
	pid_t pid = (pid_t)active_pid, h = (pid_t)helper_pid;

	if (pid > 0)
		kill(-pid, SIGKILL);
	if (h > 0)
		kill(-h, SIGKILL);
}

/*
 * A file holding data/len from offset 0, for the child's stdin: a
 * memory file (memfd), else an unlinked temporary file ($TMPDIR).
 * Close-on-exec; the child dup2s it.  Its descriptor, or -1 with err.
 */
static int
post_copy(const unsigned char *data, size_t len, char *err, size_t errsz)
{
	int fd = -1;

#ifdef MFD_CLOEXEC
	fd = memfd_create("listgate-post", MFD_CLOEXEC);
#endif
	if (fd < 0 && (fd = spool_tmpfile(err, errsz)) < 0)
		return -1;
	if (len > 0 && spool_write_all(fd, data, len) < 0) {
		snprintf(err, errsz, "cannot copy the post (%zu bytes) for "
		    "it: %s", len, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* run_spawn, with standard output and error the file outfd when it is
 * >= 0 (else as quiet says) */
static int
spawn_out(char *const *argv, char *const *envp, int infd, int quiet,
    int outfd, pid_t *pid_r)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int e;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return ENOMEM;
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return ENOMEM;
	}
	e = 0;
	if (infd < 0)
		e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO,
		    "/dev/null", O_RDONLY, 0);
	else if (infd == STDIN_FILENO) {
		/* a post copied while our standard input was closed has
		 * descriptor 0, close-on-exec: the command would start
		 * without it */
		if (fcntl(infd, F_SETFD, fcntl(infd, F_GETFD) &
		    ~FD_CLOEXEC) < 0)
			e = errno;
	} else {
		e = posix_spawn_file_actions_adddup2(&fa, infd,
		    STDIN_FILENO);
		if (e == 0)
			e = posix_spawn_file_actions_addclose(&fa, infd);
	}
	if (e == 0 && outfd >= 0) {
		e = posix_spawn_file_actions_adddup2(&fa, outfd,
		    STDOUT_FILENO);
		if (e == 0)
			e = posix_spawn_file_actions_adddup2(&fa, outfd,
			    STDERR_FILENO);
	} else if (e == 0 && quiet) {
		e = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO,
		    "/dev/null", O_WRONLY, 0);
		if (e == 0)
			e = posix_spawn_file_actions_addopen(&fa,
			    STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	}
	/* nothing of ours beyond 0, 1 and 2: not the token file (Kyoto
	 * Cabinet opens it without close-on-exec: a command could write
	 * it, and one that goes on running would keep a replaced file
	 * alive), nor what our own caller left open; listgate web's
	 * threads open files while one of them starts a command, so the
	 * child closes them itself */
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
	if (e == 0)
		e = posix_spawn_file_actions_addclosefrom_np(&fa,
		    STDERR_FILENO + 1);
#elif defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
	/* (an older C library: ours close-on-exec, for good: only the
	 * commands started here exec) */
	if (e == 0)
		(void)syscall(SYS_close_range, STDERR_FILENO + 1, ~0U,
		    CLOSE_RANGE_CLOEXEC);
#endif
	/* a server thread (listgate web) runs with its signals blocked and
	 * we ignore SIGPIPE and SIGXFSZ (filter): the command gets none
	 * blocked, and the defaults of those it may rely on */
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGXFSZ);
	sigaddset(&def, SIGALRM);
	sigaddset(&def, SIGCHLD);
	if (e == 0)
		e = posix_spawnattr_setsigmask(&at, &none);
	if (e == 0)
		e = posix_spawnattr_setsigdefault(&at, &def);
	if (e == 0)
		e = posix_spawnattr_setpgroup(&at, 0);
	if (e == 0)
		e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
		    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (e == 0)
		e = posix_spawn(pid_r, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return e;
}

int
run_spawn(char *const *argv, char *const *envp, int infd, int quiet,
    pid_t *pid_r)
{
	return spawn_out(argv, envp, infd, quiet, -1, pid_r);
}

int
run_spawn_helper(char *const *argv, char *const *envp, pid_t *pid_r)
{
	sigset_t stop, omask;
	int e;

	stop_signals(&stop);
	pthread_sigmask(SIG_BLOCK, &stop, &omask);
	e = run_spawn(argv, envp, -1, 1, pid_r);
	if (e == 0)
		helper_pid = *pid_r;
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
	return e;
}

void
run_helper_done(void)
{
	helper_pid = 0;
}

int
run_output_file(size_t len, char *err, size_t errsz)
{
	int fd = -1;

#if defined(MFD_CLOEXEC) && defined(MFD_ALLOW_SEALING) && \
    defined(F_SEAL_GROW)
	/* a program that writes without end fills no more memory than
	 * the post and RUN_OUTPUT_MAX: the file (sparse) cannot grow past
	 * them, writes beyond fail */
	fd = memfd_create("listgate-output", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && (len > (size_t)INT64_MAX - RUN_OUTPUT_MAX ||
	    ftruncate(fd, (off_t)(len + RUN_OUTPUT_MAX)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK) < 0)) {
		close(fd);
		fd = -1;
	}
#endif
	if (fd < 0)
		fd = spool_tmpfile(err, errsz);
	return fd;
}

/* the first end bytes of the file out (a command's output) to our
 * standard error; a failed write only ends the copy */
static void
copy_output(int out, off_t end)
{
	unsigned char chunk[16 * 1024];
	off_t off = 0;
	ssize_t got;
	size_t want;

	while (off < end) {
		want = end - off < (off_t)sizeof(chunk) ? (size_t)(end - off) :
		    sizeof(chunk);
		got = pread(out, chunk, want, off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || spool_write_all(STDERR_FILENO, chunk,
		    (size_t)got) < 0)
			return;
		off += got;
	}
}

int
run_argv(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, char *err, size_t errsz)
{
	char lerr[512];
	off_t end;
	int out, rc;

	/*
	 * Never our own standard output and error: they are the MTA's
	 * pipe (filter, moderate), and a process the command leaves
	 * behind (a mailer's delivery in the background) would hold it
	 * open after we exited, so that qmail-local waits for it without
	 * end and Postfix's pipe(8) bounces the post at its time limit.
	 * What the command wrote follows once it ended.
	 */
	if ((out = run_output_file(len, lerr, sizeof(lerr))) < 0) {
		snprintf(err, errsz, "%s: not run: no file for its output: %s",
		    argv != NULL && argv[0] != NULL ? argv[0] : "run", lerr);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	rc = run_argv_out(argv, data, len, fd, timeout_s, out, err, errsz);
	/* (what it wrote ends at the file's offset: relay writes there) */
	if ((end = lseek(out, 0, SEEK_CUR)) > 0)
		copy_output(out, end);
	close(out);
	return rc;
}

/*
 * What a command writes reaches outfd through a pipe of ours, never as
 * outfd itself: a program that opens /dev/stdout or /dev/stderr (a
 * shell's `echo ... >/dev/stderr', tee /dev/stderr) opens a file anew,
 * at offset 0 and with O_TRUNC, which the sealed memory file refuses
 * (EPERM: the deliver failed and the post was deferred for ever), where
 * a pipe opens as the same pipe.  relay moves what the pipe rd holds to
 * outfd, at most max bytes; once outfd refuses more (its
 * bound), the rest is read and dropped, so the command never blocks.
 * Returns 1 while the pipe is open, 0 at its end (rd closed, set to -1).
 */
static int
relay(int *rd, int outfd, int *full, size_t max)
{
	unsigned char chunk[16 * 1024];
	size_t total = 0;
	ssize_t got;

	while (total < max) {
		got = read(*rd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (got <= 0) {
			close(*rd);
			*rd = -1;
			return 0;
		}
		total += (size_t)got;
		if (!*full && spool_write_all(outfd, chunk, (size_t)got) < 0)
			*full = 1;
	}
	return 1;
}

int
run_argv_out(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, int outfd, char *err, size_t errsz)
{
	struct pollfd pfd[2];
	int pp[2] = { -1, -1 };
	int rd = -1, full = 0;
	sigset_t alrm, omask;
	double deadline, ms;
	pid_t pid, wp;
	char **envp = NULL, lerr[512];
	int copy = -1;
	int st = 0, e, timed_out, killed = 0, rc = -1, pidfd = -1, left;

	last_unsure = 0;
	if (argv == NULL || argv[0] == NULL || argv[0][0] != '/') {
		snprintf(err, errsz, "%s: not run: the program must be an "
		    "absolute path", argv != NULL && argv[0] != NULL ?
		    argv[0] : "run");
		return -1;
	}
	/* the whole post in a file before the child exists */
	if (fd < 0 && (fd = copy = post_copy(data, len, lerr,
	    sizeof(lerr))) < 0) {
		snprintf(err, errsz, "%s: not run: %s", argv[0], lerr);
		return -1;
	}
	if ((envp = run_child_env()) == NULL) {
		snprintf(err, errsz, "%s: not run: out of memory", argv[0]);
		goto out;
	}
	/* the child reads from the start: it shares fd's file offset */
	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
		snprintf(err, errsz, "%s: not run: cannot rewind the post: %s",
		    argv[0], strerror(errno));
		goto out;
	}
	/* its output through a pipe we read (see relay) */
	if (outfd >= 0) {
		if (pipe2(pp, O_CLOEXEC) < 0 || fcntl(pp[0], F_SETFL,
		    fcntl(pp[0], F_GETFL) | O_NONBLOCK) < 0) {
			snprintf(err, errsz, "%s: not run: no pipe for its "
			    "output: %s", argv[0], strerror(errno));
			goto out;
		}
		rd = pp[0];
	}
	deadline = timeout_s ? clock_now_ms() + (double)timeout_s * 1000 : 0;
	/* posix_spawn, not fork: a server with many threads (listgate
	 * web) would copy its page tables and stop every other thread's
	 * page faults and allocations while it forked */
	/* the watchdog (SIGALRM) and a stop (SIGTERM, SIGINT, SIGHUP)
	 * wait until active_pid names the child: one while posix_spawn
	 * runs would otherwise find no child to kill, and the command
	 * would go on after we deferred */
	stop_signals(&alrm);
	pthread_sigmask(SIG_BLOCK, &alrm, &omask);
	last_ok = 0;
	e = spawn_out(argv, envp, fd, 0, pp[1], &pid);
	if (e == 0)
		active_pid = pid;
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
	/* (only the child writes: the pipe ends when it and what it
	 * started closed it) */
	if (pp[1] >= 0) {
		close(pp[1]);
		pp[1] = -1;
	}
	if (e != 0) {
		snprintf(err, errsz, "%s: cannot execute: %s", argv[0],
		    strerror(e));
		goto out;
	}
	pidfd = pidfd_of(pid);
	/* wait within the deadline */
	for (;;) {
		/* reaped with those signals blocked: a handler finds the
		 * child to kill, or last_ok saying what it did */
		pthread_sigmask(SIG_BLOCK, &alrm, &omask);
		wp = waitpid(pid, &st, WNOHANG);
		if (wp == pid) {
			last_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
			active_pid = 0;
		}
		pthread_sigmask(SIG_SETMASK, &omask, NULL);
		if (wp == pid)
			break;
		if (wp < 0 && errno != EINTR) {
			snprintf(err, errsz, "%s: waitpid: %s", argv[0],
			    strerror(errno));
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			goto done;
		}
		left = -1;
		if (deadline && !killed) {
			if ((ms = deadline - clock_now_ms()) <= 0) {
				/* reaped at the top, as any end: it may have
				 * ended by itself after the wait there and
				 * before this kill, and then what it did
				 * stands (a post it delivered is not to be
				 * deferred, the MTA would deliver it again) */
				killed = 1;
				kill(-pid, SIGKILL);
				continue;
			}
			left = ms > 60000 ? 60000 : (int)ms + 1;
		}
		/* sleep until the child exits, writes, or the deadline: no
		 * polling interval on the way out (a negative fd is left
		 * out by poll) */
		pfd[0].fd = pidfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = rd;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		if (pidfd < 0 && (left < 0 || left > RUN_POLL_MS))
			left = RUN_POLL_MS;
		if (poll(pfd, 2, left) > 0 && rd >= 0 && pfd[1].revents != 0)
			relay(&rd, outfd, &full, RUN_DRAIN_MAX);
	}
	/* what is still in the pipe (not without end: something it left
	 * behind may go on writing) */
	if (rd >= 0)
		relay(&rd, outfd, &full, RUN_DRAIN_MAX);
	timed_out = killed && !WIFEXITED(st);
	if (timed_out)
		snprintf(err, errsz, "%s: timed out after %u s (killed)",
		    argv[0], timeout_s);
	else if (WIFSIGNALED(st))
		snprintf(err, errsz, "%s: killed by signal %d", argv[0],
		    WTERMSIG(st));
	else if (WIFEXITED(st))
		rc = WEXITSTATUS(st);
	else
		snprintf(err, errsz, "%s: ended abnormally", argv[0]);
	/* killed with the whole post read: it may have handed it on (an
	 * exit status says what it did; a death says nothing) */
	if (rc < 0 && read_to_end(fd))
		last_unsure = 1;
done:
	active_pid = 0;
out:
	if (rd >= 0)
		close(rd);
	if (pp[1] >= 0)
		close(pp[1]);
	xfree(envp);
	if (copy >= 0)
		close(copy);
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}
