/*
 * passcount.c - the filter's counter of posts passed, per UTC day
 *
 * See passcount.h.  The file is trusted no more than any file on disk:
 * its header (magic, slot count, byte order) is checked before a slot
 * is touched, and a short or foreign file is an error, never a crash.
 * Cheap on purpose: open, fstat, mmap, one compare-and-swap, munmap,
 * close.  -1 with a message on every failure; never prints or exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

/* open the counter at path for writing, created with mode (less the
 * umask) and its header and slots written when missing: the descriptor,
 * or -1 with err */
static int
counter_open(const char *path, mode_t mode, char *err, size_t errsz)
{
	struct stat st;
	struct hdr h;
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NOCTTY, mode)) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_size < FILE_BYTES) {
		/*
		 * New (or never finished): the header, then the slots as
		 * zeros.  Two first posts at once write the same header
		 * bytes and grow the file to the same size; neither can
		 * undo a count, since a file is only ever grown.
		 */
		hdr_init(&h);
		if (st.st_size >= HDR) {
			/* a header there already: grow only our own file */
			char have[HDR];

			if (pread(fd, have, HDR, 0) != HDR || !hdr_ok(have)) {
				snprintf(err, errsz, "%s: not a listgate pass "
				    "counter", path);
				close(fd);
				return -1;
			}
		}
		if ((st.st_size < HDR && pwrite(fd, &h, sizeof(h), 0) !=
		    (ssize_t)sizeof(h)) || ftruncate(fd, FILE_BYTES) < 0) {
			snprintf(err, errsz, "%s: cannot create: %s", path,
			    strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
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
	uint64_t *slot, old, nv;
	void *map;
	int fd;

	if ((fd = counter_open(path, PASSCOUNT_FILE_MODE, err, errsz)) < 0)
		return -1;
	map = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errsz, "%s: cannot map: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!hdr_ok(map)) {
		munmap(map, FILE_BYTES);
		snprintf(err, errsz, "%s: not a listgate pass counter", path);
		return -1;
	}
	slot = (uint64_t *)((char *)map + HDR) + day % PASSCOUNT_DAYS;
	old = __atomic_load_n(slot, __ATOMIC_RELAXED);
	do {
		uint32_t od = (uint32_t)(old >> 32), oc = (uint32_t)old;

		if (od == day)
			nv = oc == UINT32_MAX ? old : old + 1;
		else if (od < day)
			nv = (uint64_t)day << 32 | 1;
		else
			break;	/* a later day: the clock went back a long
				 * way; this post is not counted */
	} while (!__atomic_compare_exchange_n(slot, &old, nv, 0,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	munmap(map, FILE_BYTES);
	return 0;
}

int
passcount_read(const char *path, uint32_t from, uint32_t to,
    uint64_t *counts, char *err, size_t errsz)
{
	struct stat st;
	const uint64_t *slots;
	uint64_t v;
	uint32_t d;
	void *map;
	int fd;

	if (to < from || to - from >= PASSCOUNT_DAYS) {
		snprintf(err, errsz, "%s: at most %u days at a time", path,
		    (unsigned)PASSCOUNT_DAYS);
		return -1;
	}
	memset(counts, 0, ((size_t)(to - from) + 1) * sizeof(*counts));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NOCTTY)) < 0) {
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
	if (st.st_size == 0) {
		close(fd);
		return 1;	/* being created */
	}
	if (st.st_size < FILE_BYTES) {
		snprintf(err, errsz, "%s: too short for a listgate pass "
		    "counter", path);
		close(fd);
		return -1;
	}
	map = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errsz, "%s: cannot map: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!hdr_ok(map)) {
		munmap(map, FILE_BYTES);
		snprintf(err, errsz, "%s: not a listgate pass counter", path);
		return -1;
	}
	slots = (const uint64_t *)((const char *)map + HDR);
	for (d = from;; d++) {
		v = __atomic_load_n(&slots[d % PASSCOUNT_DAYS],
		    __ATOMIC_RELAXED);
		if ((uint32_t)(v >> 32) == d)
			counts[d - from] = (uint32_t)v;
		if (d == to)
			break;
	}
	munmap(map, FILE_BYTES);
	return 0;
}
