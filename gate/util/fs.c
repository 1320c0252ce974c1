/*
 * fs.c - small file-system helpers
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/fs.h"

int
fs_mkdir_p(const char *dir, mode_t mode)
{
	char p[4096], *c, *next;
	struct stat st;
	size_t n = strlen(dir);
	int dfd, fd, made, e;

	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	/* one component at a time, each under the descriptor of the one
	 * above: a directory made here is opened without following a link
	 * and its mode set through that descriptor, so that whoever may
	 * write its parent cannot put a link in its place between the
	 * mkdir and the chmod and have us chmod what the link names (root
	 * running init in a directory the list user owns) */
	if ((dfd = open(p[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		return -1;
	for (c = p; c != NULL; c = next) {
		while (*c == '/')
			c++;
		if ((next = strchr(c, '/')) != NULL)
			*next++ = '\0';
		if (*c == '\0')
			continue;
		made = mkdirat(dfd, c, mode) == 0;
		if (!made && errno != EEXIST)
			goto fail;
		/* one that was there may be a link (/var/run), and need
		 * only be searchable, as mkdir by name needed (O_PATH);
		 * ours is no link, and is opened for its fchmod */
		fd = openat(dfd, c, O_DIRECTORY | O_CLOEXEC | (made ?
		    O_RDONLY | O_NOFOLLOW : O_PATH));
		if (fd < 0) {
			if (made && (errno == ELOOP || errno == ENOTDIR))
				errno = EEXIST;	/* not the one we made */
			goto fail;
		}
		/* exactly mode, whatever the umask, on the directory we
		 * made (another user's in its place is not ours to touch) */
		e = 0;
		if (made && fstat(fd, &st) < 0)
			e = errno;
		else if (made && (!S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid()))
			e = EEXIST;	/* not the one we made */
		else if (made && fchmod(fd, mode) < 0)
			e = errno;
		if (e != 0) {
			close(fd);
			errno = e;
			goto fail;
		}
		close(dfd);
		dfd = fd;
	}
	close(dfd);
	return 0;
fail:
	e = errno;
	close(dfd);
	errno = e;
	return -1;
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

int
fs_dir_owned(const char *path)
{
	char dir[4200];
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t n;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir))
			return 0;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	return stat(dir, &st) == 0 && st.st_uid == geteuid();
}
