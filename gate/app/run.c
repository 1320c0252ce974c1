/*
 * run.c - run a deliver/release command with the post on its stdin
 *
 * argv comes from a checked template (absolute program, placeholders
 * expanded inside single arguments); no shell is ever involved.  The
 * child gets its own process group so a timeout (or the filter's
 * watchdog) can kill everything it started.  Never exits; -1 with a
 * message on failure.
 */
#include "config.h"

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

/* the running child's pid (its process group), 0 when none */
static volatile sig_atomic_t active_pid;

void
run_kill_active(void)
{
	pid_t pid = (pid_t)active_pid;

	if (pid > 0)
		kill(-pid, SIGKILL);
}

/* in the child: set up stdin and exec; never returns */
static void
child(char *const *argv, int infd, int errfd)
{
	sigset_t none;
	int e;

	setpgid(0, 0);
	/* a server thread (listgate web) runs with its signals blocked;
	 * the command gets none blocked */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
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
	struct pollfd pfd;
	double deadline;
	size_t off = 0;
	ssize_t w;
	pid_t pid, wp;
	int in[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int st, e, n, timed_out = 0, rc = -1;

	if (argv == NULL || argv[0] == NULL || argv[0][0] != '/') {
		snprintf(err, errsz, "run: the program must be an absolute path");
		return -1;
	}
	/* close-on-exec: a command that another thread of this process
	 * starts meanwhile (listgate web) must not inherit this pipe, or
	 * this child would never see the end of its input (dup2 gives the
	 * child's stdin without the flag) */
	if (fd < 0 && pipe2(in, O_CLOEXEC) < 0) {
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
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			goto done;
		}
		if (deadline && clock_now_ms() >= deadline) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		if (in[1] >= 0) {
			pfd.fd = in[1];
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, 20) > 0) {
				w = write(in[1], data + off, len - off);
				if (w > 0)
					off += (size_t)w;
				else if (w < 0 && errno != EAGAIN &&
				    errno != EINTR) {
					/* EPIPE: it stopped reading; its exit
					 * status decides */
					close(in[1]);
					in[1] = -1;
				}
			}
		} else
			poll(NULL, 0, 10);
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
	return rc;
}
