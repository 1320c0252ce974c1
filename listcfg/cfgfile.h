/*
 * cfgfile.h - the `key = value` line reader of listcfg
 *
 * Reads one configuration file and hands each setting to a callback;
 * every error names FILE:LINE.  Knows the file format (comments,
 * quoting, line limits), not the keys: those are listcfg/keys.c's.
 */
#ifndef LG_CFGFILE_H
#define LG_CFGFILE_H

#include <sys/types.h>
#include <sys/stat.h>
#include <stddef.h>

#define CFGFILE_MAX_KEY		32	/* longer keys are unknown anyway */
#define CFGFILE_MAX_SEEN	128	/* distinct keys remembered for duplicates */

/* one file being read: where errors point */
struct cfgfile {
	const char *path;
	unsigned line;		/* the line being read (0: the file itself) */
	char *err;
	size_t errsz;
	struct {
		char key[CFGFILE_MAX_KEY];
		unsigned line;
	} seen[CFGFILE_MAX_SEEN];
	size_t nseen;
};

/* one setting: key (lower case, digits, '_') and the raw text after
 * "= " (comment included); 0, or -1 after cfgfile_error */
typedef int (*cfgfile_fn)(void *ctx, struct cfgfile *cf, const char *key,
    const char *raw);

/*
 * Read path line by line and hand each `key = value` to fn; cf is set
 * up to point errors (into err) at path.  A file that is not
 * cfgfile_trusted, a key set twice, a line longer than
 * LG_MAX_CONF_LINE, a NUL byte, an empty value or a line that is no
 * `key = value` is an error.  *missing_r is set (and 0
 * returned) when the file does not exist; a symbolic link to nothing is
 * an error naming its target.  0, or -1 with err.
 */
int cfgfile_read(struct cfgfile *cf, const char *path, char *err,
    size_t errsz, cfgfile_fn fn, void *ctx, int *missing_r);

/*
 * May a configuration file or directory with status st be trusted?
 * Only when it is owned by root or by the user we run as (the effective
 * uid), and neither its group nor others may write it: anyone else who
 * could change it could choose the commands listgate runs, its database
 * and, for root, the user it becomes.  0, or -1 with "PATH: why, and
 * what to do" in err.
 */
int cfgfile_trusted(const char *path, const struct stat *st, char *err,
    size_t errsz);

/* format "PATH:LINE: message" (or "PATH: message" for line 0) into the
 * file's err; returns -1 */
int cfgfile_error(struct cfgfile *cf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* the line on which key was set in this file, 0 if not set */
unsigned cfgfile_seen(const struct cfgfile *cf, const char *key);

/* copy one scalar value (possibly double-quoted as a whole, with \" and
 * \\; a trailing comment is dropped) into out: 0, or -1 after
 * cfgfile_error naming key (an empty value, "" too, is an error) */
int cfgfile_value(struct cfgfile *cf, const char *key, const char *raw,
    char *out, size_t outsz);

/* 1 for the blanks of the format: space, tab, CR, FF, VT */
int cfgfile_blank(int c);

/* dir/name as a new string (trailing slashes of dir dropped), or NULL
 * when out of memory */
char *cfgfile_join(const char *dir, const char *name);

#endif
