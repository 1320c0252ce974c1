/*
 * cfgedit.h - set a few keys of a configuration file in place, every
 * other byte kept
 *
 * For `listgate tune --apply`: the administrator's file keeps its
 * order, its comments, its blank lines and its line endings; a changed
 * setting keeps its old line as a comment with a date, so the history
 * of a list's tuning reads in the file itself.  The file is replaced
 * atomically (a temporary file beside it, written, fsynced, checked,
 * renamed, the directory fsynced): a reader sees the old file or the
 * new one, never a part.  Edits at once take turns (a flock on the
 * file's directory), each reading the file the last one left.  Knows
 * the line format of listcfg/cfgfile.c (a `key = value` line; `#`
 * comments), not the keys.  Every function
 * returns -1 with a message naming the file; nothing prints or exits.
 */
#ifndef LG_CFGEDIT_H
#define LG_CFGEDIT_H

#include <stddef.h>

/* largest file cfgedit rewrites (a configuration file is a few KiB) */
#define CFGEDIT_MAX_BYTES	(1024u * 1024u)

/* one key to set */
struct cfgedit_change {
	const char *key;	/* [a-z0-9_]+ */
	const char *value;	/* the text to write after "key = " */
	const char *old;	/* the value in effect before, for the
				 * comment when the file does not set the
				 * key (its default), or NULL */
};

/* check the new file (at path, not yet in place) before it replaces
 * the old: 0, or -1 with err */
typedef int (*cfgedit_check_fn)(void *ctx, const char *path, char *err,
    size_t errsz);

/*
 * Set each change's key in the file at path.  A line setting the key
 * becomes two: a comment holding the old line after the stamp,
 *	# STAMP: was: ham_cutoff = 0.3
 * then `key = value`, both at the old line's indentation; an old line
 * too long for the comment within LG_MAX_CONF_LINE is kept without its
 * own comment, or cut at a character and ended with " ...".  A key the
 * file does not set is appended at the end, after
 *	# STAMP: was: the default (0.3)
 * A change whose value the file already holds (the same text) changes
 * nothing.  Lines end as the file's first line ends (LF or CRLF).  A
 * missing file is created, mode 0640 (0644 where others may enter its
 * directory), with its directory's group where allowed (root, or a
 * member of it).  A symbolic link stays a link: the file it
 * points to is replaced (its temporary file beside it); a link that
 * cannot be followed is an error.  The new file keeps the old one's mode
 * and, where allowed, its owner (root only) and group (one we belong
 * to, when the owner cannot be kept; a group that may read the file,
 * others not, and that we cannot give refuses the edit,
 * cfgedit_keeps_group) and
 * its extended attributes (an ACL that cannot be copied refuses it);
 * check (when not NULL) sees it before the
 * rename, and its failure leaves the old file untouched.  *changed_r
 * (may be NULL) gets the number of keys set.  0, or -1 with err (a key
 * set twice in the file, a line whose edit cannot fit the line limit
 * (file:line), a NUL byte, a file over CFGEDIT_MAX_BYTES, an
 * I/O error; nothing is changed then, *changed_r 0), except a directory
 * that cannot be synced after the rename: the file holds the keys then,
 * and *changed_r says how many.
 */
int cfgedit_apply(const char *path, const struct cfgedit_change *ch,
    size_t n, const char *stamp, cfgedit_check_fn check, void *ctx,
    unsigned *changed_r, char *err, size_t errsz);

/*
 * Can the file at path be replaced keeping its group, where the group
 * may read it?  Its owner is kept by root only, but a group that
 * reads the file (the filter's, in listgate.conf(5)'s layout) must go on
 * reading it: a user who is neither root nor a member of that group
 * cannot give it, and cfgedit_apply then refuses the edit.  0 (also
 * when the file does not exist, its group may not read it or everyone
 * may: its members then read the new file as others), or -1
 * with err naming the file, the group and what to do.
 */
int cfgedit_keeps_group(const char *path, char *err, size_t errsz);

#endif
