/*
 * fuzz_source.c - libFuzzer target for mbox, maildir and directory
 * splitting (gate/mail/source.c)
 *
 * The first byte chooses the layout; the rest is written to files in a
 * private directory under /dev/shm (else $TMPDIR, else /tmp):
 *   0: one file (an mbox when it starts with "From ");
 *   1: a maildir: the input cut at "\n\x01\n" into files in new/ and
 *      cur/ (each name starts with a character taken from its piece, so
 *      dot names, which are skipped, and the sort order are exercised);
 *   2: a plain directory of such files.
 * Every post must lie inside what was written: in one file, the posts
 * of an mbox are pieces found in order, anything else is the whole
 * file; in a directory each post lies inside one of the files.  No post
 * or name may be NULL, and there are never more posts than "From "
 * lines plus files.  Build and run with tests/fuzz/run.sh source.
 */
#include "config.h"

#include <sys/stat.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/mail/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PIECES	24

static char root[200];
static char made[MAX_PIECES + 2][300];	/* files and dirs to remove */
static size_t nmade;
static volatile unsigned long sink;

static void
write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		__builtin_trap();
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			__builtin_trap();
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

static void
setup(void)
{
	const char *t = getenv("TMPDIR");

	if (access("/dev/shm", W_OK) == 0)
		t = "/dev/shm";
	else if (t == NULL || *t == '\0')
		t = "/tmp";
	snprintf(root, sizeof(root), "%s/lg-fuzz-source.%ld", t,
	    (long)getpid());
	if (mkdir(root, 0700) < 0)
		__builtin_trap();
	snprintf(made[0], sizeof(made[0]), "%s/new", root);
	snprintf(made[1], sizeof(made[1]), "%s/cur", root);
	if (mkdir(made[0], 0700) < 0 || mkdir(made[1], 0700) < 0)
		__builtin_trap();
}

/* remove this run's files (the directories stay for the next run) */
static void
clean(void)
{
	size_t i;

	for (i = 0; i < nmade; i++)
		unlink(made[i + 2]);
	nmade = 0;
}

/* "From " lines that could start a post: an upper bound on the count */
static size_t
froms(const uint8_t *p, size_t n)
{
	size_t c = 0, i;

	for (i = 0; i + 5 <= n; i++)
		if (memcmp(p + i, "From ", 5) == 0)
			c++;
	return c;
}

/* the pieces of a directory layout, written under dir ("" or a maildir
 * folder chosen per piece); *bound_r gets the post count bound */
struct piece {
	const uint8_t *p;
	size_t n;
};

static size_t
split(const uint8_t *data, size_t size, struct piece *pc)
{
	const uint8_t *p = data, *e = data + size, *q;
	size_t k = 0;

	while (k < MAX_PIECES) {
		q = memmem(p, (size_t)(e - p), "\n\x01\n", 3);
		pc[k].p = p;
		pc[k].n = q ? (size_t)(q - p) : (size_t)(e - p);
		k++;
		if (q == NULL)
			break;
		p = q + 3;
	}
	return k;
}

/* err is source's refusal of a compressed file */
static int
refused_compressed(const char *err)
{
	return strstr(err, ": compressed (") != NULL &&
	    strstr(err, "), not a message file or mbox: uncompress it "
	    "first") != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char namechars[] =
	    ".aZ09_-.bY18~+.cX27=,";
	struct piece pc[MAX_PIECES];
	struct source *s = NULL;
	struct source_post post;
	char err[512], path[300];
	size_t npc = 0, i, bound = 0, nposts = 0, pos = 0, total = 0;
	const char *open_path;
	int mode, r, mbox;

	if (root[0] == '\0')
		setup();
	if (size == 0)
		return 0;
	mode = data[0] % 3;
	data++;
	size--;
	if (mode == 0) {
		snprintf(path, sizeof(path), "%s/post", root);
		write_file(path, data, size);
		snprintf(made[2], sizeof(made[2]), "%s", path);
		nmade = 1;
		open_path = made[2];
		bound = froms(data, size) + 1;
	} else {
		npc = split(data, size, pc);
		for (i = 0; i < npc; i++) {
			char c = namechars[(pc[i].n ? pc[i].p[0] : 0) %
			    (sizeof(namechars) - 1)];

			snprintf(made[i + 2], sizeof(made[i + 2]), "%s/%s%c%02zu",
			    root, mode == 1 ? (i % 2 ? "cur/" : "new/") : "",
			    c, npc - i);
			write_file(made[i + 2], pc[i].p, pc[i].n);
			bound += froms(pc[i].p, pc[i].n) + 1;
		}
		nmade = npc;
		open_path = root;
	}
	/* mode 2 must not look like a maildir: move new/ and cur/ away */
	if (mode == 2) {
		rmdir(made[0]);
		rmdir(made[1]);
	}
	mbox = size >= 5 && memcmp(data, "From ", 5) == 0;
	r = source_open(open_path, &s, err, sizeof(err));
	if (r < 0) {
		/* an empty directory is fine; a file written must open,
		 * unless it starts as a compressed file does (refused,
		 * named: an archive is no post) */
		if (mode == 0 && !refused_compressed(err))
			__builtin_trap();
		goto out;
	}
	while ((r = source_next(s, &post, err, sizeof(err))) != 0) {
		if (r < 0) {
			/* no OOM, every file readable, but a compressed
			 * one (refused, and the next one read) */
			if (!refused_compressed(err))
				__builtin_trap();
			continue;
		}
		if (post.data == NULL || post.name == NULL || post.name[0] == 0)
			__builtin_trap();
		if (++nposts > bound)
			__builtin_trap();
		total += post.len;
		if (post.len > 0)
			sink += post.data[0] + post.data[post.len - 1];
		if (mode == 0) {
			const uint8_t *at;

			if (!mbox) {
				if (post.len != size || nposts > 1 ||
				    memcmp(post.data, data, size) != 0)
					__builtin_trap();
				continue;
			}
			at = post.len == 0 ? data + pos :
			    memmem(data + pos, size - pos, post.data, post.len);
			if (at == NULL)
				__builtin_trap();
			pos = (size_t)(at - data) + post.len;
		} else {
			for (i = 0; i < npc; i++)
				if (post.len <= pc[i].n && (post.len == 0 ||
				    memmem(pc[i].p, pc[i].n, post.data,
				    post.len) != NULL))
					break;
			if (i == npc)
				__builtin_trap();
		}
	}
	if (total > size)
		__builtin_trap();
	source_close(s);
out:
	clean();
	if (mode == 2) {
		mkdir(made[0], 0700);
		mkdir(made[1], 0700);
	}
	return 0;
}
