/*
 * run.c - run a deliver/release command with the post on its stdin
 *
 * argv comes from a checked template (absolute program, placeholders
 * expanded inside single arguments); no shell is ever involved.  The
 * child gets its own process group so a timeout (or the filter's
 * watchdog) can kill everything it started.  The parent sleeps in
 * poll() on a pidfd of the child (and the pipe it feeds) until the child
 * exits, so a fast command is waited for no longer than it runs.  Never
 * exits; -1 with a message on failure.
 */
#include "config.h"

#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate/util/clock.h"
#include "gate/app/run.h"

/* without a pidfd (Linux before 5.3), how often the child's exit is
 * polled (ms) */
#define RUN_POLL_MS	1

/* the running child's pid (its process group), 0 when none */
static volatile sig_atomic_t active_pid;

void
run_kill_active(void)
{
	pid_t pid = (pid_t)active_pid;

	if (pid > 0)
		kill(-pid, SIGKILL);
}

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

/* in the child: set up stdin and exec; never returns */
static void
child(char *const *argv, int infd, int errfd)
{
	int e;

	setpgid(0, 0);
	if (infd != STDIN_FILENO) {
		if (dup2(infd, STDIN_FILENO) < 0)
			goto fail;
		close(infd);
	}
	if (lseek(STDIN_FILENO, 0, SEEK_SET) < 0 && errno != ESPIPE)
		goto fail;
	signal(SIGPIPE, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	execv(argv[0], argv);
fail:
	e = errno;
	/* tell the parent why; it reads this from the close-on-exec pipe */
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int
run_argv(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, char *err, size_t errsz)
{
	struct sigaction sa, osa;
	struct pollfd pfd[2];
	double deadline;
	size_t off = 0;
	ssize_t w;
	pid_t pid, wp;
	int in[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int st, e, n, timed_out = 0, rc = -1, pidfd = -1, npfd, left;

	if (argv == NULL || argv[0] == NULL || argv[0][0] != '/') {
		snprintf(err, errsz, "run: the program must be an absolute path");
		return -1;
	}
	if (fd < 0 && pipe(in) < 0) {
		snprintf(err, errsz, "run: pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		snprintf(err, errsz, "run: pipe: %s", strerror(errno));
		goto out;
	}
	/* a child that stops reading must not kill us */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, &osa);
	deadline = timeout_s ? clock_now_ms() + (double)timeout_s * 1000 : 0;
	if ((pid = fork()) < 0) {
		snprintf(err, errsz, "run: fork: %s", strerror(errno));
		sigaction(SIGPIPE, &osa, NULL);
		goto out;
	}
	if (pid == 0) {
		if (fd < 0)
			close(in[1]);
		close(ep[0]);
		child(argv, fd >= 0 ? fd : in[0], ep[1]);
	}
	setpgid(pid, pid);
	active_pid = pid;
	close(ep[1]);
	ep[1] = -1;
	if (fd < 0) {
		close(in[0]);
		in[0] = -1;
		fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	}
	pidfd = pidfd_of(pid);
	/* feed the pipe and wait, both within the deadline */
	for (;;) {
		if (in[1] >= 0 && off == len) {
			close(in[1]);
			in[1] = -1;
		}
		wp = waitpid(pid, &st, WNOHANG);
		if (wp == pid)
			break;
		if (wp < 0 && errno != EINTR) {
			snprintf(err, errsz, "run: waitpid: %s", strerror(errno));
			run_kill_active();
			waitpid(pid, &st, 0);
			goto done;
		}
		left = -1;
		if (deadline) {
			double ms = deadline - clock_now_ms();

			if (ms <= 0) {
				timed_out = 1;
				run_kill_active();
				waitpid(pid, &st, 0);
				break;
			}
			left = ms > 60000 ? 60000 : (int)ms + 1;
		}
		/* sleep until the child exits, the pipe takes more, or the
		 * deadline: no polling interval on the way out */
		npfd = 0;
		if (pidfd >= 0) {
			pfd[npfd].fd = pidfd;
			pfd[npfd++].events = POLLIN;
		} else if (left < 0 || left > RUN_POLL_MS)
			left = RUN_POLL_MS;	/* no pidfd: poll the exit */
		if (in[1] >= 0) {
			pfd[npfd].fd = in[1];
			pfd[npfd++].events = POLLOUT;
		}
		if (poll(pfd, (nfds_t)npfd, left) <= 0 || in[1] < 0 ||
		    (pfd[npfd - 1].revents & (POLLOUT | POLLERR | POLLHUP)) == 0)
			continue;
		w = write(in[1], data + off, len - off);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			/* EPIPE: it stopped reading; its exit status decides */
			close(in[1]);
			in[1] = -1;
		}
	}
	/* did exec fail? */
	n = (int)read(ep[0], &e, sizeof(e));
	if (timed_out)
		snprintf(err, errsz, "%s: timed out after %u s (killed)",
		    argv[0], timeout_s);
	else if (n == (int)sizeof(e))
		snprintf(err, errsz, "%s: cannot execute: %s", argv[0],
		    strerror(e));
	else if (WIFSIGNALED(st))
		snprintf(err, errsz, "%s: killed by signal %d", argv[0],
		    WTERMSIG(st));
	else if (WIFEXITED(st))
		rc = WEXITSTATUS(st);
	else
		snprintf(err, errsz, "%s: ended abnormally", argv[0]);
done:
	active_pid = 0;
	sigaction(SIGPIPE, &osa, NULL);
out:
	if (in[0] >= 0)
		close(in[0]);
	if (in[1] >= 0)
		close(in[1]);
	if (ep[0] >= 0)
		close(ep[0]);
	if (ep[1] >= 0)
		close(ep[1]);
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}
