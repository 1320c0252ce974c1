/*
 * passcount.c - the filter's counter of posts passed, per UTC day
 *
 * See passcount.h.  The file is trusted no more than any file on disk:
 * its header (magic, slot count, byte order) is checked before a slot
 * is touched, and a short or foreign file is an error, never a crash.
 * Cheap on purpose: open, flock, two preads, a pwrite, close.  No
 * mapping is written: a store into a mapped page that the file system
 * has no block for raises SIGBUS when the disk is full, where pwrite
 * returns ENOSPC.  -1 with a message on every failure; never prints or
 * exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/passcount.h"

#define MAGIC		"LGPASS\0\1"
#define MAGIC_LEN	8
#define ORDER		0x01020304u	/* written natively: a file from a
					 * machine of the other byte order is
					 * refused */
#define HDR		64
#define FILE_BYTES	(HDR + PASSCOUNT_DAYS * 8)

struct hdr {
	char magic[MAGIC_LEN];
	uint32_t slots;
	uint32_t order;
	char pad[HDR - MAGIC_LEN - 8];
};

uint32_t
passcount_today(void)
{
	time_t now = time(NULL);

	return now > 0 ? (uint32_t)(now / 86400) : 0;
}

/* the header every counter file starts with */
static void
hdr_init(struct hdr *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, MAGIC_LEN);
	h->slots = PASSCOUNT_DAYS;
	h->order = ORDER;
}

/* 1 when the mapped header is ours */
static int
hdr_ok(const void *map)
{
	struct hdr want, h;

	hdr_init(&want);
	memcpy(&h, map, sizeof(h));
	return memcmp(h.magic, want.magic, MAGIC_LEN) == 0 &&
	    h.slots == want.slots && h.order == want.order;
}

/* milliseconds since an arbitrary start (CLOCK_MONOTONIC) */
static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * lock fd (how: LOCK_SH or LOCK_EX) within PASSCOUNT_LOCK_MS: 0, or -1
 * (errno EWOULDBLOCK when the time ran out).  A holder keeps the lock
 * for microseconds; one that keeps it longer (a filter stopped with
 * SIGSTOP, someone's flock(1)) must not make every passing post wait
 * for its watchdog.  Polled: a short sleep, doubling to 2 ms.
 */
static int
lock_fd(int fd, int how)
{
	struct timespec nap = { 0, 50000 };
	int64_t end = mono_ms() + PASSCOUNT_LOCK_MS;

	for (;;) {
		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (mono_ms() >= end) {
			errno = EWOULDBLOCK;
			return -1;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 2000000)
			nap.tv_nsec *= 2;
	}
}

/* the header at the start of fd, size bytes long, is ours (or, shorter
 * than a header, the start of ours: a creator killed before its header
 * was whole): 1, 0 when not, -1 on a read error */
static int
hdr_read_ok(int fd, off_t size)
{
	char have[HDR];
	struct hdr want;
	ssize_t n;

	if (size <= 0)
		return 1;
	if ((n = pread(fd, have, HDR, 0)) < 0)
		return -1;
	if (size >= HDR)
		return n == HDR && hdr_ok(have);
	hdr_init(&want);
	return n == size && memcmp(have, &want, (size_t)n) == 0;
}

/*
 * Open the counter at path for writing, created with mode (less the
 * umask) when missing, and lock it (LOCK_EX, released by close or by
 * the death of the process).  A new or short file is completed under
 * the lock: the header when missing, then zeros up to FILE_BYTES
 * written out, so that every slot has its block on disk (a file grown
 * with ftruncate has none, and its first count on a full disk would
 * fail).  Bytes that are there are never written over.  The
 * descriptor, or -1 with err.
 */
static int
counter_open(const char *path, mode_t mode, char *err, size_t errsz)
{
	static const char zeros[FILE_BYTES];
	struct stat st;
	struct hdr h;
	int fd, ok;

	/* O_NONBLOCK: a FIFO in its place is refused below, not waited on */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NOCTTY | O_NONBLOCK, mode)) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (lock_fd(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errsz, "%s: cannot lock: %s", path,
		    errno == EWOULDBLOCK ? "another process holds the lock" :
		    strerror(errno));
		close(fd);
		return -1;
	}
	if ((ok = hdr_read_ok(fd, st.st_size)) != 1) {
		if (ok < 0)
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
		else
			snprintf(err, errsz, "%s: not a listgate pass counter",
			    path);
		close(fd);
		return -1;
	}
	if (st.st_size < FILE_BYTES) {
		off_t at = st.st_size;

		hdr_init(&h);
		errno = 0;
		if (at < HDR) {
			/* nothing of ours yet (a creator killed before its
			 * header was whole leaves a few bytes of it) */
			if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
				goto fail;
			at = HDR;
		}
		if (pwrite(fd, zeros, (size_t)(FILE_BYTES - at), at) !=
		    (ssize_t)(FILE_BYTES - at))
			goto fail;
	}
	return fd;
fail:
	snprintf(err, errsz, "%s: cannot create: %s", path,
	    errno != 0 ? strerror(errno) : "short write");
	close(fd);
	return -1;
}

int
passcount_prepare(const char *path, char *err, size_t errsz)
{
	struct stat st;
	int fd;

	if ((fd = counter_open(path, PASSCOUNT_FILE_MODE, err, errsz)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) != PASSCOUNT_FILE_MODE &&
	    fchmod(fd, PASSCOUNT_FILE_MODE) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
passcount_add(const char *path, uint32_t day, char *err, size_t errsz)
{
	off_t at = HDR + (off_t)(day % PASSCOUNT_DAYS) * 8;
	uint64_t old, nv;
	int fd;

	if ((fd = counter_open(path, PASSCOUNT_FILE_MODE, err, errsz)) < 0)
		return -1;
	/* under the lock: read, add, write back */
	errno = 0;
	if (pread(fd, &old, sizeof(old), at) != (ssize_t)sizeof(old)) {
		snprintf(err, errsz, "%s: cannot read: %s", path,
		    errno != 0 ? strerror(errno) : "short read");
		close(fd);
		return -1;
	}
	if ((uint32_t)(old >> 32) == day)
		nv = (uint32_t)old == UINT32_MAX ? old : old + 1;
	else if ((uint32_t)(old >> 32) < day)
		nv = (uint64_t)day << 32 | 1;
	else
		nv = old;	/* a later day: the clock went back a long
				 * way; this post is not counted */
	errno = 0;
	if (nv != old && pwrite(fd, &nv, sizeof(nv), at) !=
	    (ssize_t)sizeof(nv)) {
		snprintf(err, errsz, "%s: cannot count: %s", path,
		    errno != 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
passcount_read(const char *path, uint32_t from, uint32_t to,
    uint64_t *counts, char *err, size_t errsz)
{
	struct stat st;
	struct hdr want;
	unsigned char *file;
	uint64_t v;
	uint32_t d;
	ssize_t n;
	size_t have;
	int fd;

	if (to < from || to - from >= PASSCOUNT_DAYS) {
		snprintf(err, errsz, "%s: at most %u days at a time", path,
		    (unsigned)PASSCOUNT_DAYS);
		return -1;
	}
	memset(counts, 0, ((size_t)(to - from) + 1) * sizeof(*counts));
	/* O_NONBLOCK: a FIFO in its place must not wait for a writer
	 * (no effect on a regular file's reads or on flock) */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NOCTTY | O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if ((file = malloc(FILE_BYTES)) == NULL) {
		snprintf(err, errsz, "out of memory");
		close(fd);
		return -1;
	}
	/* a shared lock: no count is half written while it is read */
	if (lock_fd(fd, LOCK_SH) < 0 ||
	    (n = pread(fd, file, FILE_BYTES, 0)) < 0) {
		snprintf(err, errsz, "%s: %s", path, errno == EWOULDBLOCK ?
		    "another process holds the lock" : strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	hdr_init(&want);
	if (n < HDR) {
		/* being created, or its creator was killed before the
		 * header was whole (the next count completes it) */
		if (memcmp(file, &want, (size_t)n) != 0)
			goto foreign;
		free(file);
		return 1;
	}
	if (!hdr_ok(file))
		goto foreign;
	/* the slots there (a file whose creation stopped short, on a full
	 * disk, has fewer: the rest count 0) */
	have = ((size_t)n - HDR) / 8;
	for (d = from;; d++) {
		if (d % PASSCOUNT_DAYS < have) {
			memcpy(&v, file + HDR + (size_t)(d % PASSCOUNT_DAYS) *
			    8, sizeof(v));
			if ((uint32_t)(v >> 32) == d)
				counts[d - from] = (uint32_t)v;
		}
		if (d == to)
			break;
	}
	free(file);
	return 0;
foreign:
	snprintf(err, errsz, "%s: not a listgate pass counter", path);
fail:
	if (fd >= 0)
		close(fd);
	free(file);
	return -1;
}
