/*
 * spool.h - one post read from the MTA on standard input
 *
 * The post is kept exactly as received: in memory up to a limit
 * (LG_MAX_SPOOL_MEM), beyond that in an unlinked temporary file under
 * $TMPDIR (else /tmp) that is mapped read-only.  A regular file on
 * standard input (qmail-local) is mapped in place.  Scoring looks only at
 * a bounded prefix; passing and holding use the whole post.
 */
#ifndef LG_SPOOL_H
#define LG_SPOOL_H

#include <stddef.h>

struct spool {
	const unsigned char *data;	/* the whole post (NULL when empty) */
	size_t len;
	int fd;		/* a file holding the whole post from offset 0, or -1 */
	/* private */
	unsigned char *mem;	/* xfree when set */
	size_t maplen;		/* munmap(data, maplen) when set */
	int ownfd;		/* close fd on free */
};

#define SPOOL_ERR	(-1)	/* read, write or memory failure (err says) */
#define SPOOL_ETOOBIG	(-2)	/* the post is larger than max */

/*
 * Read everything from fd into s: in memory up to mem_max bytes, in a
 * temporary file beyond; at most max bytes in all.  0, or SPOOL_ERR /
 * SPOOL_ETOOBIG with a message in err.  s is empty (spool_free-able)
 * after a failure.
 */
int spool_read(struct spool *s, int fd, size_t mem_max, size_t max,
    char *err, size_t errsz);

/*
 * An unlinked temporary file (mkostemp, close-on-exec) in $TMPDIR when it
 * is an absolute path, else /tmp: its descriptor, or -1 with err.  Also
 * used by source.c for standard input past its memory limit.
 */
int spool_tmpfile(char *err, size_t errsz);

/* write all n bytes of buf to fd, retrying on EINTR: 0, or -1 (errno) */
int spool_write_all(int fd, const void *buf, size_t n);

/* the bytes a scanner may look at: min(len, max) */
size_t spool_scan_len(const struct spool *s, size_t max);

void spool_free(struct spool *s);

#endif
