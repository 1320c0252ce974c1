/*
 * source.c - iterate the posts of a file, mbox, maildir, directory or stdin
 *
 * Trusts nothing in the files: any byte sequence splits into posts
 * without reading out of bounds.  Memory stays bounded: files of up to
 * READ_MAX bytes are read, larger ones mapped read-only, standard input is kept in memory only up to
 * LG_MAX_SPOOL_MEM and spooled to an unlinked temporary file beyond
 * (spool_tmpfile, spool.h).  Fails with -1 and a message naming the path
 * (or the post, FILE:N), or -2 when out of memory; never exits, never
 * logs.  A maildir's entry moved by its reader since the listing (new/
 * to cur/, other flags) is read under its new name.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/buf.h"
#include "gate/util/fs.h"
#include "gate/util/lglimits.h"
#include "gate/mail/source.h"
#include "gate/mail/spool.h"
#include "gate/util/xalloc.h"

/* the bytes of one file or of standard input */
struct region {
	unsigned char *p;
	size_t len;
	int mapped;		/* munmap, else xfree */
};

struct source {
	char *path;
	int isdir;
	int maildir;		/* names are new/... and cur/... */
	int gone;		/* load_file: the entry is not there (ENOENT) */
	char **names;		/* directory entries, relative to path */
	size_t nnames, next;
	/* the current file */
	struct region r;
	int open;		/* r holds a file being split */
	int mbox;
	int single;		/* an mbox holding one post: named like a file */
	size_t off;		/* where the next post starts */
	int cut;		/* the file shrank: source_cut said so */
	unsigned long npost;
	char *fname;		/* the current file's name for posts */
	struct buf name;	/* the current post's name */
};

/*
 * A mapped file that another process truncates while it is read would
 * raise SIGBUS on the pages gone (a mailbox compacted by the MUA, a
 * maildir entry rewritten in place).  The mappings of open sources are
 * listed here; a SIGBUS inside one puts zeros over the rest of it (an
 * anonymous mapping, as systemd's journal reader does) and marks it, and
 * file_next then names the file and skips what is left of it.  A SIGBUS
 * anywhere else gets the action there was before.  Only the program's
 * thread reads mapped posts (tokpool copies them; its workers block
 * every signal).
 */
#define MAPS_MAX	8
static struct {
	unsigned char *volatile p;
	volatile size_t len;
	volatile sig_atomic_t hit;
} maps[MAPS_MAX];
static struct sigaction bus_old;
static int bus_installed;
static long bus_page;		/* the page size, read before */

/* SIGBUS: zeros over the rest of a listed mapping, else the old action */
static void
bus_handler(int sig, siginfo_t *si, void *ctx)
{
	unsigned char *a = si->si_addr, *page;
	long pg = bus_page;
	int i;

	(void)sig;
	(void)ctx;
	for (i = 0; i < MAPS_MAX; i++) {
		unsigned char *p = maps[i].p;

		if (p == NULL || a < p || a >= p + maps[i].len || pg <= 0)
			continue;
		page = p + ((size_t)(a - p) & ~((size_t)pg - 1));
		if (mmap(page, (size_t)(p + maps[i].len - page), PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			break;
		maps[i].hit = 1;
		return;
	}
	/* not ours: the fault comes again under the old action */
	sigaction(SIGBUS, &bus_old, NULL);
}

/* list a mapping (unlisted, it is as before: SIGBUS if it shrinks) */
static void
bus_watch(unsigned char *p, size_t len)
{
	struct sigaction sa;
	int i;

	if (!bus_installed) {
		if ((bus_page = sysconf(_SC_PAGESIZE)) <= 0)
			return;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = bus_handler;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &bus_old) < 0)
			return;
		bus_installed = 1;
	}
	for (i = 0; i < MAPS_MAX; i++)
		if (maps[i].p == NULL) {
			maps[i].hit = 0;
			maps[i].len = len;
			maps[i].p = p;
			return;
		}
}

/* did r's file shrink while it was read?  Said once: 1 or 0 */
static int
region_shrank(const struct region *r)
{
	int i;

	if (!r->mapped)
		return 0;
	for (i = 0; i < MAPS_MAX; i++)
		if (maps[i].p == r->p && maps[i].hit) {
			maps[i].hit = 0;
			return 1;
		}
	return 0;
}

/* release the current file's bytes */
static void
region_free(struct region *r)
{
	int i;

	if (r->p != NULL) {
		if (r->mapped)
			for (i = 0; i < MAPS_MAX; i++)
				if (maps[i].p == r->p)
					maps[i].p = NULL;
		if (r->mapped)
			munmap(r->p, r->len);
		else
			xfree(r->p);
	}
	r->p = NULL;
	r->len = 0;
	r->mapped = 0;
}

/*
 * Regular files up to this size are read into memory, larger ones
 * mapped: for a post of a few KiB the map, its page faults and its
 * unmap (a TLB shootdown) cost more than the read, about a tenth of
 * training a directory of posts.
 */
#define READ_MAX	(256u * 1024)

static int region_map(int, size_t, struct region *);

/* read a regular file of len bytes (at most READ_MAX) into memory, or
 * map it when memory is short: 0, or -1 with errno; a file that shrank
 * meanwhile gives what it has */
static int
region_slurp(int fd, size_t len, struct region *r)
{
	size_t got = 0;
	ssize_t n;

	r->len = 0;
	r->mapped = 0;
	r->p = NULL;
	if (len == 0)
		return 0;
	if ((r->p = xmalloc(len)) == NULL)
		return region_map(fd, len, r);
	while (got < len) {
		n = read(fd, r->p + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xfree(r->p);
			r->p = NULL;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	r->len = got;
	return 0;
}

/* map a regular file (or a temporary spool) read-only: 0 or -1 */
static int
region_map(int fd, size_t len, struct region *r)
{
	void *p;

	r->len = len;
	r->mapped = 0;
	r->p = NULL;
	if (len == 0)
		return 0;
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	r->p = p;
	r->mapped = 1;
	bus_watch(r->p, len);
	return 0;
}

/* read a non-regular descriptor (a pipe) to its end: 0 or -1 */
static int
region_read(int fd, struct region *r, char *err, size_t errsz,
    const char *what)
{
	struct buf b = BUF_INIT(LG_MAX_SPOOL_MEM);
	unsigned char chunk[65536];
	char terr[512];
	off_t total = 0;
	ssize_t n;
	int tfd = -1;

	for (;;) {
		/* (waiting on a descriptor left non-blocking) */
		n = fs_read_wait(fd, chunk, sizeof(chunk));
		if (n < 0) {
			snprintf(err, errsz, "%s: read: %s", what,
			    strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if (tfd < 0 && buf_add(&b, chunk, (size_t)n) == 0)
			continue;
		if (tfd < 0) {
			/* past the memory limit: spool to disk from here */
			if ((tfd = spool_tmpfile(terr, sizeof(terr))) < 0) {
				snprintf(err, errsz, "%s: %s", what, terr);
				goto fail;
			}
			if (spool_write_all(tfd, b.data, b.len) < 0) {
				snprintf(err, errsz, "%s: cannot spool to a "
				    "temporary file: %s", what, strerror(errno));
				goto fail;
			}
			total = (off_t)b.len;
			buf_free(&b);
		}
		if (spool_write_all(tfd, chunk, (size_t)n) < 0) {
			snprintf(err, errsz, "%s: cannot spool to a temporary "
			    "file: %s", what, strerror(errno));
			goto fail;
		}
		total += n;
	}
	if (tfd >= 0) {
		if ((uintmax_t)total > SIZE_MAX ||
		    region_map(tfd, (size_t)total, r) < 0) {
			snprintf(err, errsz, "%s: cannot map the spool: %s",
			    what, strerror(errno));
			goto fail;
		}
		close(tfd);
		return 0;
	}
	r->p = b.data;		/* handed over; freed with xfree */
	r->len = b.len;
	r->mapped = 0;
	return 0;
fail:
	if (tfd >= 0)
		close(tfd);
	buf_free(&b);
	return -1;
}

static size_t next_from(const unsigned char *, size_t, size_t, size_t *);

/* the compression that r's bytes start with (no mail starts with these
 * bytes), or NULL: an archive as it was downloaded (Mailman's
 * 2024-January.txt.gz), which would be one post of binary bytes */
static const char *
compressed(const struct region *r)
{
	static const struct {
		const char *name, *magic;
		size_t len;
	} m[] = {
		{ "gzip", "\x1f\x8b", 2 },
		{ "xz", "\xfd" "7zXZ\0", 6 },
		{ "zstd", "\x28\xb5\x2f\xfd", 4 },
		{ "bzip2", "BZh", 3 },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (r->len >= m[i].len && memcmp(r->p, m[i].magic,
		    m[i].len) == 0 && (strcmp(m[i].name, "bzip2") != 0 ||
		    (r->len >= 10 && r->p[3] >= '1' && r->p[3] <= '9' &&
		    memcmp(r->p + 4, "1AY&SY", 6) == 0)))
			return m[i].name;
	return NULL;
}

/* does this mbox hold just one post (a message file with a From_ line)? */
static int
mbox_single(const struct region *r)
{
	const unsigned char *nl;
	size_t start, end;

	nl = memchr(r->p, '\n', r->len);
	start = nl ? (size_t)(nl - r->p) + 1 : r->len;
	return next_from(r->p, r->len, start, &end) >= r->len;
}

/* load the open file fd (standard input, or path's file, whose status
 * is st) into the current region, and close it: 0 or -1 */
static int
load_fd(struct source *s, int fd, const struct stat *st, const char *path,
    char *err, size_t errsz)
{
	int r;

	if (S_ISREG(st->st_mode) && (uintmax_t)st->st_size <= READ_MAX) {
		if (region_slurp(fd, (size_t)st->st_size, &s->r) < 0) {
			snprintf(err, errsz, "%s: cannot read: %s", path,
			    strerror(errno));
			r = -1;
		} else
			r = 0;
	} else if (S_ISREG(st->st_mode) && (fd != STDIN_FILENO ||
	    lseek(fd, 0, SEEK_CUR) <= 0)) {
		/* (a map starts at the file's start: standard input that
		 * was partly read already is read on from where it is) */
		if ((uintmax_t)st->st_size > SIZE_MAX ||
		    region_map(fd, (size_t)st->st_size, &s->r) < 0) {
			snprintf(err, errsz, "%s: cannot map: %s", path,
			    strerror(errno));
			r = -1;
		} else
			r = 0;
	} else if (S_ISDIR(st->st_mode)) {
		snprintf(err, errsz, "%s: is a directory", path);
		r = -1;
	} else if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) &&
	    (fd != STDIN_FILENO || !isatty(fd))) {
		/* no post (/dev/null, also a closed standard input), or one
		 * without end that was spooled until the disk was full
		 * (/dev/zero, a disk), by name or on standard input (which
		 * may be a terminal) */
		snprintf(err, errsz, "%s: is a device, not a message file, "
		    "mbox or directory", path);
		r = -1;
	} else
		r = region_read(fd, &s->r, err, errsz, path);
	if (fd != STDIN_FILENO)
		close(fd);
	if (r < 0)
		return -1;
	if (compressed(&s->r) != NULL) {
		snprintf(err, errsz, "%s: compressed (%s), not a message file "
		    "or mbox: uncompress it first", path, compressed(&s->r));
		region_free(&s->r);
		return -1;
	}
	s->open = 1;
	s->off = 0;
	s->npost = 0;
	s->mbox = s->r.len >= 5 && memcmp(s->r.p, "From ", 5) == 0;
	s->single = !s->mbox || mbox_single(&s->r);
	return 0;
}

/* load a file (or stdin for "-") into the current region: 0 or -1.
 * entry: a directory's entry, listed as a regular file; whoever may
 * write the directory may have put something else there since (a FIFO,
 * whose open would wait for a writer for ever): opened without waiting,
 * and only a regular file is read */
static int
load_file(struct source *s, const char *path, int entry, char *err,
    size_t errsz)
{
	struct stat st;
	int fd;

	s->gone = 0;
	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | (entry ?
	    O_NONBLOCK | O_NOCTTY : 0))) < 0) {
		char to[1024];
		ssize_t n;
		int e = errno;

		s->gone = e == ENOENT;
		if (entry && e == ENOENT &&
		    (n = readlink(path, to, sizeof(to) - 1)) >= 0) {
			to[n] = 0;
			snprintf(err, errsz, "%s: a symbolic link to %s, which "
			    "does not exist", path, to);
		} else
			snprintf(err, errsz, "%s: %s", path, strerror(e));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		if (fd != STDIN_FILENO)
			close(fd);
		return -1;
	}
	if (entry && !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file (any more): "
		    "skipped", path);
		close(fd);
		return -1;
	}
	return load_fd(s, fd, &st, path, err, errsz);
}

/* sort directory entries by name */
static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* add the regular files of path/sub to the list, sorted: 0, -1, or -2
 * when out of memory */
static int
scan_dir(struct source *s, const char *sub, char *err, size_t errsz)
{
	char dpath[4096], fpath[4096];
	struct dirent *de;
	struct stat st;
	size_t first = s->nnames, cap = s->nnames;
	char **nn;
	DIR *d;
	int n;

	n = snprintf(dpath, sizeof(dpath), "%s%s%s", s->path, *sub ? "/" : "",
	    sub);
	if (n < 0 || (size_t)n >= sizeof(dpath)) {
		snprintf(err, errsz, "%s: path too long", s->path);
		return -1;
	}
	if ((d = opendir(dpath)) == NULL) {
		snprintf(err, errsz, "%s: %s", dpath, strerror(errno));
		return -1;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		n = snprintf(fpath, sizeof(fpath), "%s/%s", dpath, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(fpath))
			continue;
		if (stat(fpath, &st) < 0) {
			/* a link to nothing (a stale search result of
			 * mairix or notmuch) or one that cannot be followed
			 * is a post that cannot be read: listed, so that
			 * its reading names it (it was left out unsaid) */
			if (lstat(fpath, &st) < 0 || !S_ISLNK(st.st_mode))
				continue;
		} else if (!S_ISREG(st.st_mode))
			continue;
		if (s->nnames == cap) {
			cap = cap ? cap * 2 : 64;
			if (cap > SIZE_MAX / sizeof(char *) ||
			    (nn = xrealloc(s->names, cap * sizeof(char *))) ==
			    NULL)
				goto oom;
			s->names = nn;
		}
		n = snprintf(fpath, sizeof(fpath), "%s%s%s", sub, *sub ? "/" :
		    "", de->d_name);
		if ((s->names[s->nnames] = xstrdup(fpath)) == NULL)
			goto oom;
		s->nnames++;
	}
	closedir(d);
	if (s->nnames > first)	/* names is NULL while nothing was listed */
		qsort(s->names + first, s->nnames - first, sizeof(char *),
		    cmp_names);
	return 0;
oom:
	closedir(d);
	snprintf(err, errsz, "%s: out of memory while listing", dpath);
	return -2;
}

/* is path/sub a directory? */
static int
has_subdir(const char *path, const char *sub)
{
	char p[4096];
	struct stat st;
	int n;

	n = snprintf(p, sizeof(p), "%s/%s", path, sub);
	return n > 0 && (size_t)n < sizeof(p) && stat(p, &st) == 0 &&
	    S_ISDIR(st.st_mode);
}

int
source_open(const char *path, struct source **src_r, char *err,
    size_t errsz)
{
	struct source *s;
	struct stat st;
	int r = -1, fd = -1;

	*src_r = NULL;
	if ((s = xcalloc(1, sizeof(*s))) == NULL ||
	    (s->path = xstrdup(path)) == NULL) {
		xfree(s);
		snprintf(err, errsz, "%s: out of memory while opening", path);
		return -2;
	}
	buf_init(&s->name, 8192);
	/* opened once: a file is read from the descriptor its status came
	 * from (a stat by name first was a seventh of training's system
	 * calls) */
	if (strcmp(path, "-") != 0) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			int e = errno;

			/* a directory may be searchable without being
			 * readable (a maildir's root, mode 0311) */
			if (e != EACCES || stat(path, &st) < 0 ||
			    !S_ISDIR(st.st_mode)) {
				snprintf(err, errsz, "%s: %s", path,
				    strerror(e));
				goto fail;
			}
			s->isdir = 1;
		} else if (fstat(fd, &st) < 0) {
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
			close(fd);
			goto fail;
		} else if ((s->isdir = S_ISDIR(st.st_mode)) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (s->isdir) {
		if (has_subdir(path, "new") || has_subdir(path, "cur")) {
			s->maildir = 1;
			if ((has_subdir(path, "new") &&
			    (r = scan_dir(s, "new", err, errsz)) < 0) ||
			    (has_subdir(path, "cur") &&
			    (r = scan_dir(s, "cur", err, errsz)) < 0))
				goto fail;
		} else if ((r = scan_dir(s, "", err, errsz)) < 0)
			goto fail;
	} else {
		if ((s->fname = xstrdup(path)) == NULL) {
			snprintf(err, errsz, "%s: out of memory while opening",
			    path);
			if (fd >= 0)
				close(fd);
			r = -2;
			goto fail;
		}
		if ((fd < 0 ? load_file(s, path, 0, err, errsz) :
		    load_fd(s, fd, &st, path, err, errsz)) < 0)
			goto fail;
	}
	*src_r = s;
	return 0;
fail:
	source_close(s);
	return r < 0 ? r : -1;
}

/* the first "\nFrom " in [p, p + n), or NULL: line by line with memchr
 * (glibc's memmem took about 4 instructions a byte here; every file of
 * a batch is searched whole) */
static const unsigned char *
find_from(const unsigned char *p, size_t n)
{
	const unsigned char *e = p + n, *q;

	while (p < e && (q = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		if (e - q >= 6 && memcmp(q + 1, "From ", 5) == 0)
			return q;
		p = q + 1;
	}
	return NULL;
}

/* find the next "From " line after a blank line at or after off: its
 * offset, with *body_end_r where the post before it ends; len if none */
static size_t
next_from(const unsigned char *p, size_t len, size_t off, size_t *end_r)
{
	const unsigned char *q;
	size_t i = off;

	while (i < len && (q = find_from(p + i, len - i)) != NULL) {
		size_t at = (size_t)(q - p);	/* the '\n' before "From " */

		if (at >= off && at > 0 && p[at - 1] == '\n') {
			*end_r = at;		/* keep the last line's \n */
			return at + 1;
		}
		if (at >= off && at > 1 && p[at - 1] == '\r' &&
		    p[at - 2] == '\n') {
			*end_r = at - 1;
			return at + 1;
		}
		i = at + 1;
	}
	/* the last post: drop the blank line that ends an mbox */
	*end_r = len;
	if (len >= off + 2 && p[len - 1] == '\n' && p[len - 2] == '\n')
		*end_r = len - 1;
	else if (len >= off + 3 && p[len - 1] == '\n' && p[len - 2] == '\r' &&
	    p[len - 3] == '\n')
		*end_r = len - 2;
	return len;
}

/* the next post of the current file: 1, 0 when it is used up, -1 when
 * the file shrank while it was read (the rest of it is skipped), or -2
 * when out of memory (err names the post: FILE, or FILE:N in an mbox) */
static int
file_next(struct source *s, struct source_post *p, char *err, size_t errsz)
{
	const unsigned char *nl;
	size_t start, end, nxt;
	char num[32];

	if (s->cut || region_shrank(&s->r)) {
		/* the post handed out last may have had zeros in it */
		s->cut = 0;
		if (s->mbox && !s->single)
			snprintf(err, errsz, "%s:%lu: the file shrank while it "
			    "was read: this post may have been cut short, and "
			    "the rest of the file is skipped", s->fname,
			    s->npost);
		else
			snprintf(err, errsz, "%s: the file shrank while it was "
			    "read: the post may have been cut short", s->fname);
		s->off = s->r.len;
		s->npost = s->npost > 0 ? s->npost : 1;
		return -1;
	}
	if (!s->mbox) {
		if (s->npost > 0)
			return 0;
		s->npost = 1;
		buf_reset(&s->name);
		if (buf_adds(&s->name, s->fname) < 0)
			goto oom;
		p->data = s->r.p ? s->r.p : (const unsigned char *)"";
		p->len = s->r.len;
		p->name = buf_str(&s->name);
		return 1;
	}
	if (s->off >= s->r.len)
		return 0;
	/* s->off is at a "From " line: the post starts after it */
	nl = memchr(s->r.p + s->off, '\n', s->r.len - s->off);
	start = nl ? (size_t)(nl - s->r.p) + 1 : s->r.len;
	nxt = next_from(s->r.p, s->r.len, start, &end);
	if (end < start)
		end = start;
	s->off = nxt;
	s->npost++;
	if (region_shrank(&s->r)) {
		if (s->single)
			snprintf(err, errsz, "%s: the file shrank while it was "
			    "read: the post is skipped", s->fname);
		else
			snprintf(err, errsz, "%s:%lu: the file shrank while it "
			    "was read: the rest of the file is skipped",
			    s->fname, s->npost);
		s->off = s->r.len;
		return -1;
	}
	if (s->single)
		num[0] = 0;
	else
		snprintf(num, sizeof(num), ":%lu", s->npost);
	buf_reset(&s->name);
	if (buf_adds(&s->name, s->fname) < 0 || buf_adds(&s->name, num) < 0)
		goto oom;
	p->data = s->r.p + start;
	p->len = end - start;
	p->name = buf_str(&s->name);
	return 1;
oom:
	if (s->mbox && !s->single)
		snprintf(err, errsz, "%s:%lu: out of memory", s->fname,
		    s->npost);
	else
		snprintf(err, errsz, "%s: out of memory", s->fname);
	return -2;
}

/*
 * A maildir's entry that is gone since the scan: a reader (the MUA, an
 * IMAP server) moved it from new/ to cur/, or renamed it in cur/ with
 * other flags, while the maildir was read (a folder in use).  1 with
 * its name now, cur/BASE:INFO, in *moved_r; 2 when that name was listed
 * (it is read, or was, under it); 0 when it is not there; -2 when out
 * of memory
 */
static int
maildir_moved(const struct source *s, const char *name, char **moved_r)
{
	char dpath[4096], cand[4096];
	const char *base;
	struct dirent *de;
	size_t blen, i;
	DIR *d;
	int n, r = 0;

	*moved_r = NULL;
	if (strncmp(name, "new/", 4) != 0 && strncmp(name, "cur/", 4) != 0)
		return 0;
	base = name + 4;
	if ((blen = strcspn(base, ":")) == 0)
		return 0;
	n = snprintf(dpath, sizeof(dpath), "%s/cur", s->path);
	if (n < 0 || (size_t)n >= sizeof(dpath) ||
	    (d = opendir(dpath)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, base, blen) != 0 ||
		    (de->d_name[blen] != ':' && de->d_name[blen] != 0))
			continue;
		n = snprintf(cand, sizeof(cand), "cur/%s", de->d_name);
		if (n < 0 || (size_t)n >= sizeof(cand) ||
		    strcmp(cand, name) == 0)
			continue;
		for (i = 0; i < s->nnames; i++)
			if (strcmp(s->names[i], cand) == 0)
				break;
		if (i < s->nnames)
			r = 2;
		else if ((*moved_r = xstrdup(cand)) == NULL)
			r = -2;
		else
			r = 1;
		break;
	}
	closedir(d);
	return r;
}

int
source_next(struct source *s, struct source_post *p, char *err,
    size_t errsz)
{
	char fpath[4096], *moved;
	int r, n;

	for (;;) {
		if (s->open) {
			if ((r = file_next(s, p, err, errsz)) != 0)
				return r;
			region_free(&s->r);
			s->open = 0;
		}
		if (!s->isdir || s->next >= s->nnames)
			return 0;
		n = snprintf(fpath, sizeof(fpath), "%s/%s", s->path,
		    s->names[s->next]);
		s->next++;
		if (n < 0 || (size_t)n >= sizeof(fpath)) {
			snprintf(err, errsz, "%s/%s: path too long", s->path,
			    s->names[s->next - 1]);
			return -1;
		}
		xfree(s->fname);
		if ((s->fname = xstrdup(fpath)) == NULL) {
			snprintf(err, errsz, "%s: out of memory", fpath);
			return -2;
		}
		if (load_file(s, fpath, 1, err, errsz) == 0)
			continue;
		if (!s->maildir || !s->gone)
			return -1;
		/* moved by a reader since the scan: read where it is now,
		 * unless it is listed there (then that name reads it) */
		if ((r = maildir_moved(s, s->names[s->next - 1],
		    &moved)) < 0) {
			snprintf(err, errsz, "%s: out of memory", fpath);
			return -2;
		}
		if (r == 2)
			continue;
		if (r == 0)
			return -1;
		n = snprintf(fpath, sizeof(fpath), "%s/%s", s->path, moved);
		xfree(moved);
		if (n < 0 || (size_t)n >= sizeof(fpath))
			return -1;	/* (err names it as gone) */
		xfree(s->fname);
		if ((s->fname = xstrdup(fpath)) == NULL) {
			snprintf(err, errsz, "%s: out of memory", fpath);
			return -2;
		}
		if (load_file(s, fpath, 1, err, errsz) < 0)
			return -1;
	}
}

int
source_cut(struct source *s)
{
	if (s->open && !s->cut && region_shrank(&s->r))
		s->cut = 1;
	return s->cut;
}

int
source_multi(const struct source *s)
{
	return s->isdir || !s->single;
}

void
source_close(struct source *s)
{
	size_t i;

	if (s == NULL)
		return;
	region_free(&s->r);
	for (i = 0; i < s->nnames; i++)
		xfree(s->names[i]);
	xfree(s->names);
	xfree(s->fname);
	xfree(s->path);
	buf_free(&s->name);
	xfree(s);
}
