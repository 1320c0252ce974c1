/*
 * mcache.c - the member_check answer cache file (see mcache.h)
 *
 * The file is ours but shared by concurrent processes without a lock:
 * every record carries a check value, so a torn or foreign record is
 * simply absent.  Records are read and written with pread and pwrite,
 * never through a mapping: a file cut short under a process that has
 * it open (`: > L.members` to empty the cache, a restore in place) or a
 * full disk where the file system copies on write reads as absent
 * records and fails a write, where a mapping would end the process
 * with SIGBUS (listgate web keeps the file open for days).  Its blocks
 * are allocated when it is opened, so a cache made before the disk
 * filled up goes on.  Senders are hostile: they are only hashed.  Never
 * logs, never exits.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "gate/evidence/mcache.h"
#include "gate/util/fs.h"
#include "gate/util/xalloc.h"

#define MAGIC		"LGMEMBR1"
#define HDR_BYTES	16
#define REC_BYTES	16
#define FILE_BYTES	(HDR_BYTES + (size_t)MCACHE_SLOTS * REC_BYTES)
/* the filter runs as the MTA's user, in the token files' group, and
 * adds the answers it hears; the tokens directory's owner (sync,
 * listgate web) makes the file, and gives it this mode whatever its
 * umask (listgate's takes the group's write away) */
#define FILE_MODE	0660

struct mcache {
	int fd;
};

/* one record as stored (host byte order: the file never leaves the
 * host) */
struct rec {
	uint64_t key;
	uint32_t stamp;		/* seconds since 1970 (unsigned: to 2106) */
	uint16_t answer;
	uint16_t check;
};

static uint16_t
rec_check(const struct rec *r)
{
	uint64_t x = r->key ^ ((uint64_t)r->stamp << 16) ^ r->answer ^
	    0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint16_t)(x ^ (x >> 16) ^ 0x5a5a);
}

/* the sender's key: SHA-256 of the address, lower case (0 is kept for
 * empty slots) */
static uint64_t
key_of(const char *sender)
{
	struct sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE], ch;
	uint64_t k = 0;
	size_t i;

	sha256_init(&c);
	for (i = 0; sender[i] != '\0'; i++) {
		ch = (uint8_t)sender[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (uint8_t)(ch - 'A' + 'a');
		sha256_update(&c, 1, &ch);
	}
	sha256_digest(&c, sizeof(d), d);
	for (i = 0; i < 8; i++)
		k = k << 8 | d[i];
	return k != 0 ? k : 1;
}

/*
 * Put an empty cache in place of a damaged one at path (another size, a
 * header not ours: cut short, a torn copy, another version's layout): a
 * new file beside it, its blocks allocated, renamed over it.  Processes
 * that have the old file open go on with it, and the next opens get the
 * new one.  0, or -1 (no cache this time).
 */
static int
rebuild(const char *path)
{
	char tmp[4200];
	int fd, n, ok;

	n = snprintf(tmp, sizeof(tmp), "%s.new-%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	(void)unlink(tmp);	/* a killed rebuild's, of a process that had
				 * this process's number */
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW | O_NOCTTY, FILE_MODE)) < 0)
		return -1;
	ok = fchmod(fd, FILE_MODE) == 0 &&
	    posix_fallocate(fd, 0, (off_t)FILE_BYTES) == 0 &&
	    pwrite(fd, MAGIC, 8, 0) == 8;
	if (close(fd) < 0)
		ok = 0;
	if (!ok || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* the file at path open (read only when this user may not write it),
 * or -1; *damaged_r 1 when it is ours to replace (a regular file of one
 * name, this user's, of another size or with a header not ours) */
static int
open_file(const char *path, int *damaged_r)
{
	static const unsigned char zero[8];
	unsigned char hdr[8];
	struct stat st;
	int fd, ours, ro = 0;

	*damaged_r = 0;
	/* O_NOFOLLOW: the tokens directory's owner may be another user
	 * than the one running (root with --allow-root): a link put in
	 * the file's place must not have us create or write what it
	 * points to; nor a second name of another file (a hard link) */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
	    O_NONBLOCK);
	/* made by the tokens directory's owner only: one of root's (a
	 * `listgate --allow-root score` in the list user's directory)
	 * would shut the owner out of it for good */
	if (fd < 0 && errno == ENOENT) {
		if (!fs_dir_owned(path))
			return -1;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
		    O_NOCTTY | O_NONBLOCK, FILE_MODE);
	}
	if (fd < 0) {
		/* the answers of a file this user may only read (its
		 * owner's, made before it gave the group its write) are
		 * answers all the same */
		if (errno != EACCES || (fd = open(path, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY | O_NONBLOCK)) < 0)
			return -1;
		ro = 1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -1;
	}
	/* another user's (root with --allow-root, the list user's file)
	 * is left to its owner: ours in its place would shut them out */
	ours = st.st_uid == geteuid();
	if (st.st_size != 0 && (size_t)st.st_size != FILE_BYTES) {
		close(fd);
		*damaged_r = ours;
		return -1;
	}
	/* the group's processes (the filter) write it too: a file made
	 * under our umask, or by a version that left it to the umask */
	if (ours && !ro && (st.st_mode & 07777) != FILE_MODE)
		(void)fchmod(fd, FILE_MODE);
	/* every block of the file allocated now, a new file's and an old
	 * one's with holes (a sparse copy, a restore): a full disk then
	 * means no cache, and a cache made before it filled up goes on */
	if ((!ro && posix_fallocate(fd, 0, (off_t)FILE_BYTES) != 0) ||
	    pread(fd, hdr, 8, 0) != 8) {
		close(fd);
		return -1;
	}
	/* a new file gets its magic (two at once write the same bytes) */
	if (memcmp(hdr, MAGIC, 8) != 0) {
		if (memcmp(hdr, zero, 8) != 0) {
			close(fd);
			*damaged_r = ours;
			return -1;
		}
		if (ro || pwrite(fd, MAGIC, 8, 0) != 8) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

struct mcache *
mcache_open(const char *path)
{
	struct mcache *c;
	int damaged, fd;

	/* a damaged file is not believed: it is replaced, once */
	if ((fd = open_file(path, &damaged)) < 0 && (!damaged ||
	    rebuild(path) < 0 || (fd = open_file(path, &damaged)) < 0))
		return NULL;
	if ((c = xcalloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	return c;
}

void
mcache_close(struct mcache *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	xfree(c);
}

/* the record in slot; one that cannot be read whole (the file cut
 * short since it was opened) is an empty one */
static void
rec_read(const struct mcache *c, size_t slot, struct rec *r)
{
	ssize_t n;

	do
		n = pread(c->fd, r, sizeof(*r), (off_t)(HDR_BYTES +
		    slot * REC_BYTES));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*r))
		memset(r, 0, sizeof(*r));
}

/* a write that fails (a full disk) or comes out short leaves a record
 * whose check fails: absent */
static void
rec_write(struct mcache *c, size_t slot, const struct rec *r)
{
	ssize_t n;

	do
		n = pwrite(c->fd, r, sizeof(*r), (off_t)(HDR_BYTES +
		    slot * REC_BYTES));
	while (n < 0 && errno == EINTR);
}

enum member_answer
mcache_get(struct mcache *c, const char *sender, time_t now, unsigned ttl)
{
	uint64_t k;
	struct rec r;
	size_t i, s;

	if (c == NULL || ttl == 0)
		return MEMBER_NONE;
	k = key_of(sender);
	for (i = 0; i < MCACHE_PROBE; i++) {
		s = (size_t)((k + i) % MCACHE_SLOTS);
		rec_read(c, s, &r);
		if (r.key != k || r.check != rec_check(&r))
			continue;
		if ((time_t)r.stamp > now || now - (time_t)r.stamp > (time_t)ttl)
			return MEMBER_NONE;
		if (r.answer == MEMBER_YES || r.answer == MEMBER_NO)
			return (enum member_answer)r.answer;
		return MEMBER_NONE;
	}
	return MEMBER_NONE;
}

void
mcache_put(struct mcache *c, const char *sender, enum member_answer a,
    time_t now)
{
	uint64_t k;
	struct rec r, old;
	size_t i, s, best = 0;
	uint32_t oldest = UINT32_MAX;

	if (c == NULL || (a != MEMBER_YES && a != MEMBER_NO) || now < 0)
		return;
	k = key_of(sender);
	/* its own slot, else an empty or broken one, else the oldest */
	for (i = 0; i < MCACHE_PROBE; i++) {
		s = (size_t)((k + i) % MCACHE_SLOTS);
		rec_read(c, s, &old);
		if (old.key == k || old.key == 0 ||
		    old.check != rec_check(&old)) {
			best = s;
			break;
		}
		if (old.stamp < oldest) {
			oldest = old.stamp;
			best = s;
		}
	}
	memset(&r, 0, sizeof(r));
	r.key = k;
	r.stamp = (uint32_t)now;
	r.answer = (uint16_t)a;
	r.check = rec_check(&r);
	rec_write(c, best, &r);
}
