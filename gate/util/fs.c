/*
 * fs.c - small file-system helpers
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/fs.h"

int
fs_mkdir_p(const char *dir, mode_t mode)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, mode) == 0) {
			/* exactly mode, whatever the umask */
			if (chmod(p, mode) < 0)
				return -1;
		} else if (errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

ssize_t
fs_read_wait(int fd, void *buf, size_t n)
{
	struct pollfd pfd;
	ssize_t r;

	for (;;) {
		if ((r = read(fd, buf, n)) >= 0)
			return r;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}
