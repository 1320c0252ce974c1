/*
 * holder_server.c - the holder's socket, its workers and their loop
 * (see holder.h)
 *
 * The parent binds the socket and forks the workers; each worker
 * accepts one connection at a time on the shared, non-blocking
 * listening socket, reads the request within HOLDER_READ_MS, stores it
 * through s->hold, answers, closes, then runs s->after.  A worker that
 * dies is started again (after a pause when it died young).  PATH.lock
 * stays locked while the holder runs: a second holder on the same path
 * refuses to start.  SIGHUP changes nothing (each request reads
 * listgate.conf again when it changed).  SIGTERM or SIGINT: the parent
 * removes the socket (new posts are then held by filter itself), passes
 * SIGTERM on, and waits for each worker to end after the request it is
 * on.  A worker whose parent is gone ends too (PR_SET_PDEATHSIG).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate/holder/holder.h"
#include "gate/util/clock.h"
#include "gate/util/log.h"
#include "gate/util/sockio.h"
#include "gate/util/xalloc.h"

#define MAX_WORKERS	64
/* the room for a socket's path, its NUL included */
#define SUN_PATH_SIZE	sizeof(((struct sockaddr_un *)0)->sun_path)
/* a worker that lived less than this is started again only after it */
#define RESPAWN_PAUSE_S	1
/* at a stop, a worker has this long to finish its request */
#define STOP_WAIT_S	30

static volatile sig_atomic_t stop_sig;
static volatile sig_atomic_t child_sig;
static volatile sig_atomic_t hup_sig;

static void
on_stop(int sig)
{
	stop_sig = sig;
}

static void
on_child(int sig)
{
	(void)sig;
	child_sig = 1;
}

/* SIGHUP, the signal of "read your configuration again" (kill -HUP, a
 * unit's reload): each request reads listgate.conf again when it has
 * changed, so there is nothing to do.  By default it ended the holder,
 * and systemd's Restart=on-failure does not restart a service that a
 * SIGHUP ended: filters held their posts themselves from then on */
static void
on_hup(int sig)
{
	(void)sig;
	hup_sig = 1;
}

/* read, store and answer one request on fd */
static void
serve_one(const struct holder_server *s, int fd)
{
	unsigned char head[8], *body = NULL;
	char ans_line[HOLDER_MAX_ANSWER], err[1024];
	struct holder_req rq;
	struct holder_ans a;
	double deadline = clock_now_ms() + HOLDER_READ_MS;
	size_t len;
	int held = 0;

	if (sock_recv_all(fd, head, sizeof(head), deadline) < 0) {
		/* nothing to answer: a probe, or a client gone */
		if (errno != ECONNRESET)
			log_warn("holder: reading a request: %s",
			    errno == ETIMEDOUT ? "timed out" : strerror(errno));
		goto out;
	}
	if (holder_head(head, &len) < 0) {
		holder_answer_err(ans_line, "not a holder request, or too "
		    "large");
		goto answer;
	}
	if ((body = xmalloc(len + 1)) == NULL) {
		holder_answer_err(ans_line, "out of memory");
		goto answer;
	}
	if (sock_recv_all(fd, body, len, deadline) < 0) {
		log_warn("holder: reading a request: %s", errno == ETIMEDOUT ?
		    "timed out" : "the client went away");
		goto out;
	}
	if (holder_decode(body, len, &rq, err, sizeof(err)) < 0) {
		log_warn("holder: a bad request: %s", err);
		holder_answer_err(ans_line, err);
		goto answer;
	}
	if (s->hold(&rq, &a, err, sizeof(err), s->arg) < 0) {
		holder_answer_err(ans_line, err);
		goto answer;
	}
	holder_answer_ok(ans_line, &a);
	held = 1;
answer:
	/* the client may be gone (it then holds the post itself, and
	 * finds this row): nothing to do about it here */
	if (sock_send_all(fd, ans_line, strlen(ans_line), clock_now_ms() +
	    HOLDER_READ_MS) < 0 && held)
		log_warn("holder: post %lld held, but the filter did not take "
		    "the answer: %s", (long long)a.id, strerror(errno));
out:
	close(fd);
	if (held && s->after != NULL)
		s->after(&rq, &a, s->arg);
	xfree(body);
}

/* a worker's life: accept and serve until told to stop */
static void
worker(const struct holder_server *s, int lfd, pid_t parent)
{
	struct sigaction sa;
	struct pollfd p;
	int fd;

	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	/* a SIGHUP is the parent's to answer (a process group's, from a
	 * terminal's hangup, reaches us too) */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, NULL);
	/* (forked with them blocked: the parent waits in ppoll) */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* the parent's death ends us; and it may have died already */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	while (!stop_sig) {
		p.fd = lfd;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, 1000) <= 0)
			continue;	/* the time, or a signal: look again */
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* another worker took it, or the client left */
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED) {
				log_error("holder: accept: %s",
				    strerror(errno));
				sleep(1);
			}
			continue;
		}
		serve_one(s, fd);
	}
	_exit(0);
}

/* the socket at path (shorter than SUN_PATH_SIZE), listening: the
 * descriptor and its inode, or -1 with err.  A socket file already
 * there is replaced only when nothing answers on it (a holder that
 * died); anything else is left alone */
static int
open_socket(const char *path, ino_t *ino_r, char *err, size_t errsz)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t old;
	int fd, r, e;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errsz, "holder_socket %s: exists and is "
			    "not a socket; not replaced", path);
			return -1;
		}
		if ((fd = sock_connect_unix(path, clock_now_ms() + 1000)) >=
		    0) {
			close(fd);
			snprintf(err, errsz, "holder_socket %s: another holder "
			    "listens there", path);
			return -1;
		}
		if (errno != ECONNREFUSED) {
			snprintf(err, errsz, "holder_socket %s: exists, and "
			    "connecting to it: %s", path, strerror(errno));
			return -1;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			snprintf(err, errsz, "holder_socket %s: cannot remove "
			    "the stale socket: %s", path, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	/* 0660: the owner and the group (the filter's) may connect */
	old = umask(0117);
	r = bind(fd, (struct sockaddr *)&sun, (socklen_t)sizeof(sun));
	e = errno;
	umask(old);
	if (r < 0 || listen(fd, 128) < 0) {
		snprintf(err, errsz, "holder_socket %s: %s", path,
		    strerror(r < 0 ? e : errno));
		close(fd);
		return -1;
	}
	if (stat(path, &st) < 0) {
		snprintf(err, errsz, "holder_socket %s: %s", path,
		    strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	*ino_r = st.st_ino;
	return fd;
}

/* PATH.lock, locked for the holder's life (kept open, close-on-exec;
 * never removed): the descriptor, or -1 with err.  Two holders started
 * at once would otherwise each take the other's socket for stale */
static int
lock_path(const char *path, char *err, size_t errsz)
{
	char lp[SUN_PATH_SIZE + sizeof(".lock")];
	struct stat st;
	int fd, e;

	snprintf(lp, sizeof(lp), "%s.lock", path);
	/* (non-blocking: a FIFO put there would hold open(2) for ever,
	 * before the check below could refuse it) */
	if ((fd = open(lp, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK, 0600)) < 0) {
		e = errno;
		/* refused: a lock file another user left there, or none
		 * and a directory this user may not create one in (there
		 * is nothing to remove then) */
		if (e == EACCES && lstat(lp, &st) < 0)
			snprintf(err, errsz, "%s: %s (this user, %lu, may not "
			    "create files in its directory: give the holder a "
			    "directory of its own)", lp, strerror(e),
			    (unsigned long)geteuid());
		else
			snprintf(err, errsz, "%s: %s%s", lp, strerror(e),
			    e == EACCES ? " (left by a holder run as another "
			    "user? remove it)" : "");
		return -1;
	}
	/* ours: nobody else can hold it against us, or swap it */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		snprintf(err, errsz, "%s: not a file of this user (%lu): "
		    "remove it", lp, (unsigned long)geteuid());
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(err, errsz, "%s: %s", lp, errno == EWOULDBLOCK ?
		    "another holder runs on this socket (or the workers of "
		    "one killed are still at work)" : strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* start worker slot i: 0, or -1 (fork failed) */
static int
start_worker(const struct holder_server *s, int lfd, pid_t *pids,
    time_t *born, unsigned i)
{
	pid_t me = getpid(), pid;
	static time_t logged;

	pid = fork();
	if (pid < 0) {
		/* tried again every second: said once a minute */
		if (time(NULL) - logged >= 60) {
			log_error("holder: fork: %s (trying again each "
			    "second)", strerror(errno));
			logged = time(NULL);
		}
		return -1;
	}
	if (pid == 0)
		worker(s, lfd, me);
	pids[i] = pid;
	born[i] = time(NULL);
	return 0;
}

int
holder_serve(const struct holder_server *s, char *err, size_t errsz)
{
	pid_t pids[MAX_WORKERS], pid;
	time_t born[MAX_WORKERS];
	struct sigaction sa;
	sigset_t block, old, wait;
	struct stat st;
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	const struct timespec retry = { RESPAWN_PAUSE_S, 0 };
	unsigned n = s->workers, i, alive, tries, empty;
	ino_t ino = 0;
	int lfd, lockfd, fd, status;

	if (n < 1 || n > MAX_WORKERS) {
		snprintf(err, errsz, "workers: 1 to %d", MAX_WORKERS);
		return -1;
	}
	if (strlen(s->path) >= SUN_PATH_SIZE) {
		snprintf(err, errsz, "holder_socket %s: longer than a Unix "
		    "socket's path may be (%zu bytes)", s->path,
		    SUN_PATH_SIZE - 1);
		return -1;
	}
	if ((lockfd = lock_path(s->path, err, errsz)) < 0)
		return -1;
	if ((lfd = open_socket(s->path, &ino, err, errsz)) < 0) {
		close(lockfd);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	/* (a restart keeps libpq's blocking calls whole; poll is never
	 * restarted, so the loops see the flag) */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, NULL);
	/* the parent waits with these blocked but in ppoll */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* the wait lets them in whatever the starter had blocked */
	wait = old;
	sigdelset(&wait, SIGTERM);
	sigdelset(&wait, SIGINT);
	sigdelset(&wait, SIGCHLD);
	sigdelset(&wait, SIGHUP);
	memset(pids, 0, sizeof(pids));
	for (i = 0; i < n; i++)
		start_worker(s, lfd, pids, born, i);
	log_info("holder: listening on %s, %u workers", s->path, n);
	while (!stop_sig) {
		/* a slot left empty by a failed fork is tried again after
		 * RESPAWN_PAUSE_S; else only a child's end wakes us */
		for (i = 0, empty = 0; i < n; i++)
			empty |= pids[i] == 0;
		if (!child_sig && !hup_sig)
			ppoll(NULL, 0, empty ? &retry : NULL, &wait);
		if (stop_sig)
			break;
		if (hup_sig) {
			hup_sig = 0;
			log_info("holder: SIGHUP: listgate.conf is read again "
			    "when it changes; nothing to do (restart for "
			    "holder_socket, log_facility, user or group)");
		}
		child_sig = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (i = 0; i < n; i++)
				if (pids[i] == pid) {
					log_warn("holder: worker %ld ended (%s "
					    "%d); starting another", (long)pid,
					    WIFSIGNALED(status) ? "signal" :
					    "exit", WIFSIGNALED(status) ?
					    WTERMSIG(status) :
					    WEXITSTATUS(status));
					if (time(NULL) - born[i] <
					    RESPAWN_PAUSE_S)
						sleep(RESPAWN_PAUSE_S);
					pids[i] = 0;
				}
		for (i = 0; i < n && !stop_sig; i++)
			if (pids[i] == 0)
				start_worker(s, lfd, pids, born, i);
	}
	/* no new client from here: the socket goes first (a filter that
	 * finds none holds its post itself at once), and the connections
	 * waiting in its backlog are closed unread (theirs too) */
	if (lstat(s->path, &st) == 0 && st.st_ino == ino)
		unlink(s->path);
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
	close(lfd);
	/* each worker ends after its request; one stuck past STOP_WAIT_S
	 * (a database that hangs) is killed: its client holds the post */
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (tries = 0;; tries++) {
		alive = 0;
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			pid = waitpid(pids[i], &status, WNOHANG);
			if (pid == pids[i] || (pid < 0 && errno == ECHILD))
				pids[i] = 0;
			else if (tries >= STOP_WAIT_S * 10) {
				log_warn("holder: worker %ld did not finish in "
				    "%d s: killed", (long)pids[i], STOP_WAIT_S);
				kill(pids[i], SIGKILL);
				waitpid(pids[i], &status, 0);
				pids[i] = 0;
			} else
				alive++;
		}
		if (alive == 0)
			break;
		nanosleep(&tick, NULL);
	}
	close(lockfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	log_info("holder: stopped (signal %d)", (int)stop_sig);
	return 0;
}
