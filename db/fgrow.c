/*
 * fgrow.c - a file grown with ftruncate gets its blocks at once, so
 * that a full disk fails the call instead of a later write through a
 * mapping
 *
 * Kyoto Cabinet grows a token file with ftruncate, sparse, and writes
 * the new pages through its shared mapping.  When the disk has no block
 * for such a page, the write is a page fault the kernel can only answer
 * with SIGBUS: a writer (sync, train, a compaction, the web server's
 * sync) died on a full disk instead of failing its transaction, which
 * the journal and Kyoto Cabinet's own log would have rolled back.
 *
 * This file defines ftruncate and ftruncate64, which the program's
 * objects (Kyoto Cabinet's included, linked statically or as a shared
 * library) then call instead of the C library's: a call that makes a
 * regular file longer allocates the new part with fallocate (mode 0,
 * which also sets the size).  If the disk is full, the file keeps its
 * old size and the call fails with ENOSPC (or EDQUOT): Kyoto Cabinet
 * reports "ftruncate failed" and the transaction is rolled back, and
 * fgrow_last_error() tells tokdb why.  A file system without fallocate
 * gets the plain ftruncate, as before; shrinking and non-regular files
 * are passed through.  Where a file system copies on write (btrfs), even
 * an overwrite needs a new block, and there a full disk can still end a
 * writer with SIGBUS.
 *
 * The linker takes these definitions only when the object is part of
 * the link: tokdb.c calls fgrow_last_error, which pulls it out of the
 * library before Kyoto Cabinet's references are resolved.
 */
#define _GNU_SOURCE	/* fallocate, ftruncate64 */
#include "config.h"
/* ftruncate and ftruncate64 both defined here, neither renamed */
#undef _FILE_OFFSET_BITS

#include <sys/stat.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "db/fgrow.h"

/* the errno of this thread's last growth the disk refused, or 0 */
static __thread int last_error;

/* the C library's ftruncate, which this file hides */
static int
real_ftruncate(int fd, off_t len)
{
#if defined(SYS_ftruncate) && UINTPTR_MAX > 0xffffffffu
	/* off_t and the system call's argument are both 64 bits here */
	return (int)syscall(SYS_ftruncate, fd, (long)len);
#else
	static int (*fn)(int, off64_t);

	if (fn == NULL &&
	    (fn = (int (*)(int, off64_t))dlsym(RTLD_NEXT, "ftruncate64")) ==
	    NULL) {
		errno = ENOSYS;
		return -1;
	}
	return fn(fd, (off64_t)len);
#endif
}

static int
grow(int fd, off_t len)
{
	struct stat st;
	int e;

	if (len < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    len <= st.st_size)
		return real_ftruncate(fd, len);
	if (fallocate(fd, 0, st.st_size, len - st.st_size) == 0)
		return 0;
	e = errno;
	if (e != ENOSPC && e != EDQUOT && e != EFBIG && e != EIO)
		return real_ftruncate(fd, len);	/* no fallocate here */
	/* a partial allocation may have moved the size: put it back */
	(void)real_ftruncate(fd, st.st_size);
	last_error = e;
	errno = e;
	return -1;
}

int
ftruncate(int fd, off_t len)
{
	return grow(fd, len);
}

int
ftruncate64(int fd, off64_t len)
{
	if ((off_t)len != len) {
		errno = EFBIG;
		return -1;
	}
	return grow(fd, (off_t)len);
}

int
fgrow_last_error(void)
{
	int e = last_error;

	last_error = 0;
	return e;
}
