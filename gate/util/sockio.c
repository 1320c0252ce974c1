/*
 * sockio.c - a stream socket's I/O with deadlines (see sockio.h)
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/clock.h"
#include "gate/util/sockio.h"

int
sock_wait(int fd, short events, double deadline)
{
	struct pollfd p;
	double left;
	int r;

	for (;;) {
		left = deadline - clock_now_ms();
		if (left < 0)
			left = 0;
		p.fd = fd;
		p.events = events;
		p.revents = 0;
		r = poll(&p, 1, left > 0 ? (int)(left + 0.999) : 0);
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

int
sock_connect(int family, const struct sockaddr *sa, socklen_t salen,
    double deadline)
{
	int fd, r, e = 0;
	socklen_t el = sizeof(e);

	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, sa, salen) == 0)
		return fd;
	if (errno != EINPROGRESS && errno != EINTR) {
		e = errno;
		goto bad;
	}
	r = sock_wait(fd, POLLOUT, deadline);
	if (r <= 0) {
		e = r == 0 ? ETIMEDOUT : errno;
		goto bad;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		e = errno;
	if (e == 0)
		return fd;
bad:
	close(fd);
	errno = e;
	return -1;
}

int
sock_connect_unix(const char *path, double deadline)
{
	struct sockaddr_un sun;
	size_t n = strlen(path);

	if (n >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, n + 1);
	return sock_connect(AF_UNIX, (struct sockaddr *)&sun,
	    (socklen_t)sizeof(sun), deadline);
}

int
sock_send_all(int fd, const void *p, size_t n, double deadline)
{
	const unsigned char *q = p;
	ssize_t w;
	int r;

	while (n > 0) {
		w = send(fd, q, n, MSG_NOSIGNAL);
		if (w > 0) {
			q += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		r = sock_wait(fd, POLLOUT, deadline);
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

int
sock_recv_all(int fd, void *p, size_t n, double deadline)
{
	unsigned char *q = p;
	ssize_t got;
	int r;

	while (n > 0) {
		got = recv(fd, q, n, 0);
		if (got > 0) {
			q += got;
			n -= (size_t)got;
			continue;
		}
		if (got == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		r = sock_wait(fd, POLLIN, deadline);
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

int
sock_peer_uid(int fd, uid_t *uid_r)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0)
		return -1;
	if (n != sizeof(cr)) {
		errno = EPROTO;
		return -1;
	}
	*uid_r = cr.uid;
	return 0;
}
