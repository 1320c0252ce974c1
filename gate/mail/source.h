/*
 * source.h - the posts named on a command line: a file, an mbox, a
 * maildir, a directory of message files, or "-" for standard input
 *
 * A file whose first line starts with "From " is an mbox: it is split
 * on "From " lines at the start of the file or after a blank line (the
 * envelope line itself is not part of the post; ">From " is left as it
 * is).  An mbox holding a single post is named like a plain file.  A
 * directory with cur/ or new/ is a maildir (new/ then cur/, each sorted
 * by name); any other directory yields its regular files sorted by name
 * (no recursion); names starting with '.' are skipped.  Files of up to
 * 256 KiB are read into memory, larger ones mapped; standard input is
 * read into memory up to LG_MAX_SPOOL_MEM and spooled to an unlinked
 * temporary file beyond.
 */
#ifndef LG_SOURCE_H
#define LG_SOURCE_H

#include <stddef.h>

struct source;

/* one post; valid until the next source_next or source_close */
struct source_post {
	const unsigned char *data;
	size_t len;
	/* "-", the path, "DIR/NAME" for a directory entry, and ":N" (1 =
	 * the first post) appended for each post of an mbox of several */
	const char *name;
};

/*
 * Open path ("-" is standard input).  0, -1 with err naming the path
 * (missing, unreadable, not a file or directory), or -2 when out of
 * memory (err says so; a caller that must not skip posts stops).
 */
int source_open(const char *path, struct source **src_r, char *err,
    size_t errsz);

/*
 * The next post: 1 (in *p), 0 at the end, -1 when one entry of a
 * directory or maildir could not be read, or when a mapped file shrank
 * while it was read (its pages gone read as zeros; the post handed out
 * last may have been cut short, and the rest of the file is skipped)
 * (err names it; calling again goes on with the next entry), or -2 when out of memory (err names the
 * post as its name would be: FILE:N for post N of an mbox; calling again
 * goes on with the next post).
 */
int source_next(struct source *s, struct source_post *p, char *err,
    size_t errsz);

/* 1 when the file of the post handed out last shrank since it was
 * mapped (its pages gone read as zeros): the post as read so far may
 * have been cut short.  A caller that copies a post checks this after
 * the copy; source_next then reports the file as for any shrink. */
int source_cut(struct source *s);

/* 1 when the source can yield more than one post (a directory, a
 * maildir, an mbox of several posts), else 0; known from source_open */
int source_multi(const struct source *s);

void source_close(struct source *s);

#endif
