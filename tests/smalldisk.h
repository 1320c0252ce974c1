/*
 * smalldisk.h - a small tmpfs at a test's own mount point, in a mount
 * namespace of the test's own, for what a full disk does (root only)
 *
 * smalldisk_mount makes dir/mnt (into mnt, mntsz bytes) and mounts a
 * tmpfs with opts there: 1.  Not root, or no namespace: the directory
 * is removed and a "# SKIP NAME" line printed, 0; under CI (which runs
 * as root) that is a failure instead.  smalldisk_fill fills such a
 * disk.  Include after <check.h>.
 */
#ifndef LG_SMALLDISK_H
#define LG_SMALLDISK_H

#include <sys/mount.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
smalldisk_mount(const char *name, const char *dir, const char *opts,
    char *mnt, size_t mntsz)
{
	snprintf(mnt, mntsz, "%s/mnt", dir);
	ck_assert_int_eq(mkdir(mnt, 0700), 0);
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("lg-smalldisk", mnt, "tmpfs", 0, opts) == 0)
		return 1;
	rmdir(mnt);
	if (getenv("CI") != NULL && *getenv("CI") != 0)
		ck_abort_msg("under CI this runs as root: cannot mount a "
		    "tmpfs in a mount namespace: %s", strerror(errno));
	printf("# SKIP %s: needs root (a tmpfs in a mount namespace of its "
	    "own)\n", name);
	return 0;
}

/* fill the file system of d: a file written until it is full, and the
 * last partial block */
static inline void
smalldisk_fill(const char *d)
{
	static const char block[4096];
	char f[400];
	int fd;

	snprintf(f, sizeof(f), "%s/filler", d);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(fd >= 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	ck_assert_msg(errno == ENOSPC, "filling: %s", strerror(errno));
	while (write(fd, block, 1) > 0)
		;
	close(fd);
}

#endif
