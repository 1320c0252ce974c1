/*
 * passcount.h - posts passed per day and list, counted by the filter
 * without PostgreSQL: a small file beside the list's token file
 *
 * The filter opens its token file read-only and talks to PostgreSQL
 * only to hold a post, so the posts it passes are counted here, for
 * `listgate stats`.  The file (tokens_dir/L.passed, 8 KiB) is a header
 * and PASSCOUNT_DAYS slots of 64 bits: slot day % PASSCOUNT_DAYS holds
 * day << 32 | count.  Adding one reads and writes back the day's slot
 * (pread, pwrite) under flock(LOCK_EX), which the kernel releases when
 * a process is killed, waited for PASSCOUNT_LOCK_MS at most; a count is
 * one 8-byte write, never half done.
 * The first post of a day takes its slot over from the day
 * PASSCOUNT_DAYS before.  The file is written out whole when it is
 * made, so that a full disk fails no count later; a count that fails
 * (a file made sparse by an older listgate, on a full disk) is an
 * error, never a signal.  Days are UTC days since 1970-01-01.  The
 * counts are kept by the page cache, not fsynced: a machine crash may
 * lose the last few seconds of them.  Local files only: flock does
 * not lock across NFS.  Every function returns -1
 * with a message in err; nothing prints or exits.
 */
#ifndef LG_PASSCOUNT_H
#define LG_PASSCOUNT_H

#include <stddef.h>
#include <stdint.h>

/* days a counter file remembers (older days read as 0) */
#define PASSCOUNT_DAYS	1024
/* milliseconds a count or a read waits for the file's lock, at most:
 * then it fails ("another process holds the lock"), and the filter
 * passes the post uncounted (passcount=failed) */
#define PASSCOUNT_LOCK_MS	500
/* the mode the owner of the token files gives a counter: the filter
 * runs as the MTA's user, in the token files' group, and must add to it */
#define PASSCOUNT_FILE_MODE	0660

/* today, as the counters count days */
uint32_t passcount_today(void);

/* one more post passed on day, in the file at path (created 0660 less
 * the umask when missing): 0, or -1 with err */
int passcount_add(const char *path, uint32_t day, char *err, size_t errsz);

/*
 * Make sure the counter at path exists with PASSCOUNT_FILE_MODE, for the
 * filter to add to (by the owner of the tokens directory, where the
 * filter's user may not create files): created when missing, given the
 * mode when its owner is us and it lacks it.  0, or -1 with err.
 */
int passcount_prepare(const char *path, char *err, size_t errsz);

/*
 * The counts of days from .. to (inclusive; to - from < PASSCOUNT_DAYS)
 * into counts[0 .. to - from]: 0, 1 when there is no file (all 0), or
 * -1 with err (not a counter file, unreadable).
 */
int passcount_read(const char *path, uint32_t from, uint32_t to,
    uint64_t *counts, char *err, size_t errsz);

#endif
