/*
 * spool.c - read one post from standard input, bounded
 *
 * Trusts nothing about the input: any bytes, any length.  Memory use is
 * at most mem_max; beyond that the post goes to an unlinked temporary
 * file (mkstemp in $TMPDIR, else /tmp) and is mapped; more than max
 * bytes in all is SPOOL_ETOOBIG.  Every read, write and mapping failure
 * is SPOOL_ERR with a message; never exits, never logs.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/buf.h"
#include "gate/util/fs.h"
#include "gate/mail/spool.h"
#include "gate/util/xalloc.h"

#define CHUNK	65536

/* write all n bytes (EINTR retried): 0 or -1 with errno */
int
spool_write_all(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* an unlinked temporary file in $TMPDIR or /tmp: fd, or -1 with err */
int
spool_tmpfile(char *err, size_t errsz)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (dir == NULL || *dir != '/')
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/listgate.XXXXXX", dir) >=
	    sizeof(path)) {
		snprintf(err, errsz, "spool: TMPDIR too long");
		return -1;
	}
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0) {
		snprintf(err, errsz, "spool: cannot create a file in %s: %s",
		    dir, strerror(errno));
		return -1;
	}
	unlink(path);
	return fd;
}

/* map fd (len bytes from 0) read-only into s: 0 or -1 */
static int
spool_map(struct spool *s, int fd, size_t len, char *err, size_t errsz)
{
	void *p;

	if (len == 0)
		return 0;
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errsz, "spool: cannot map %zu bytes: %s", len,
		    strerror(errno));
		return -1;
	}
	s->data = p;
	s->len = s->maplen = len;
	return 0;
}

int
spool_read(struct spool *s, int fd, size_t mem_max, size_t max,
    char *err, size_t errsz)
{
	struct buf b = BUF_INIT(mem_max);
	struct stat st;
	unsigned char *chunk = NULL;
	size_t total = 0;
	ssize_t r;
	int tfd = -1, rc = SPOOL_ERR;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	/* a regular file at offset 0 (qmail-local): map it in place */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    lseek(fd, 0, SEEK_CUR) == 0) {
		if ((unsigned long long)st.st_size > max) {
			snprintf(err, errsz, "post too large (%lld bytes, "
			    "limit %zu)", (long long)st.st_size, max);
			return SPOOL_ETOOBIG;
		}
		if (spool_map(s, fd, (size_t)st.st_size, err, errsz) < 0)
			return SPOOL_ERR;
		s->fd = fd;
		return 0;
	}
	if ((chunk = xmalloc(CHUNK)) == NULL) {
		snprintf(err, errsz, "spool: out of memory");
		return SPOOL_ERR;
	}
	for (;;) {
		/* (waiting on a descriptor left non-blocking, as long as
		 * the watchdog lets us) */
		r = fs_read_wait(fd, chunk, CHUNK);
		if (r < 0) {
			snprintf(err, errsz, "spool: read error: %s",
			    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if ((size_t)r > max - total) {
			snprintf(err, errsz, "post too large (more than %zu "
			    "bytes)", max);
			rc = SPOOL_ETOOBIG;
			goto out;
		}
		total += (size_t)r;
		if (tfd < 0 && b.len + (size_t)r <= mem_max) {
			if (buf_add(&b, chunk, (size_t)r) < 0) {
				snprintf(err, errsz, "spool: out of memory");
				goto out;
			}
			continue;
		}
		if (tfd < 0) {
			if ((tfd = spool_tmpfile(err, errsz)) < 0)
				goto out;
			if (spool_write_all(tfd, b.data, b.len) < 0)
				goto werr;
			buf_free(&b);
		}
		if (spool_write_all(tfd, chunk, (size_t)r) < 0)
			goto werr;
	}
	if (tfd >= 0) {
		if (spool_map(s, tfd, total, err, errsz) < 0)
			goto out;
		s->fd = tfd;
		s->ownfd = 1;
		tfd = -1;
	} else {
		s->mem = b.data;
		s->data = b.data;
		s->len = b.len;
		b.data = NULL;
	}
	rc = 0;
	goto out;
werr:
	snprintf(err, errsz, "spool: write error on the temporary file: %s",
	    strerror(errno));
out:
	if (tfd >= 0)
		close(tfd);
	buf_free(&b);
	xfree(chunk);
	return rc;
}

size_t
spool_scan_len(const struct spool *s, size_t max)
{
	return s->len < max ? s->len : max;
}

void
spool_free(struct spool *s)
{
	if (s->maplen > 0)
		munmap((void *)s->data, s->maplen);
	xfree(s->mem);
	if (s->ownfd && s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
