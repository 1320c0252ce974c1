/*
 * sockio.h - a stream socket's I/O with deadlines: non-blocking
 * descriptors, every wait a poll(2) bounded by an absolute deadline in
 * clock_now_ms()'s milliseconds.  Never raises SIGPIPE, never logs.
 */
#ifndef LG_SOCKIO_H
#define LG_SOCKIO_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stddef.h>

/* wait until fd is ready for events (POLLIN, POLLOUT) or the deadline
 * passes: 1 ready, 0 the time is up, -1 poll failed (errno) */
int sock_wait(int fd, short events, double deadline);

/* a non-blocking, close-on-exec stream socket of family connected to sa
 * within deadline: the descriptor, or -1 with errno (ETIMEDOUT for the
 * time) */
int sock_connect(int family, const struct sockaddr *sa, socklen_t salen,
    double deadline);

/* a non-blocking connection to the Unix socket at path: the descriptor,
 * or -1 with errno (ENAMETOOLONG: the path does not fit sun_path) */
int sock_connect_unix(const char *path, double deadline);

/* send all n bytes at p before deadline: 0, or -1 with errno (ETIMEDOUT
 * for the time) */
int sock_send_all(int fd, const void *p, size_t n, double deadline);

/* read exactly n bytes into p before deadline: 0, or -1 with errno
 * (ETIMEDOUT for the time, ECONNRESET for an end of file first) */
int sock_recv_all(int fd, void *p, size_t n, double deadline);

/* the user id of the process at the other end of the Unix socket fd
 * (as it was when it connected or listened): 0 with *uid_r, or -1 with
 * errno */
int sock_peer_uid(int fd, uid_t *uid_r);

#endif
