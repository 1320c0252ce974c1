/*
 * users.h - the web moderators' accounts: users.conf in the
 * configuration directory
 *
 * One account a line, `NAME:HASH:LISTS`:
 *
 *	# written by `listgate user`; mode 0600
 *	alice:$y$j9T$...$...:dev,announce
 *	bob:$y$j9T$...$...:all
 *
 * NAME is [A-Za-z0-9][A-Za-z0-9._@+-]* (at most USERS_MAX_NAME bytes);
 * HASH a yescrypt hash as crypt(3) writes it ("$y$...", the format of
 * `mkpasswd -m yescrypt`); LISTS "all" or list names separated by
 * commas.  Blank lines and lines starting with '#' are ignored.  The file
 * holds password hashes: it must be a regular file that neither its
 * group nor others may read or write (mode 0600), else it is refused.
 * Every error names FILE:LINE.  Writing is atomic (a temporary file in
 * the same directory, fsync, rename).  Nothing here logs or exits.
 */
#ifndef LG_USERS_H
#define LG_USERS_H

#include <stddef.h>
#include <sys/types.h>

#define USERS_FILE		"users.conf"
/* a name is a log field and an HTTP Basic user name: short, plain */
#define USERS_MAX_NAME		64
/* a yescrypt hash is about 73 bytes; room for higher costs */
#define USERS_MAX_HASH		255
/* accounts in one file (the web server keeps them all in memory) */
#define USERS_MAX		10000
/* lists named by one account */
#define USERS_MAX_LISTS		1000

struct users_entry {
	char name[USERS_MAX_NAME + 1];
	char hash[USERS_MAX_HASH + 1];
	int all;		/* may see every list */
	char **lists;		/* else these (sorted, NULL-terminated) */
	size_t nlists;
};

struct users {
	struct users_entry *v;	/* sorted by name */
	size_t n;
};

/* 1 if name may be an account name, else 0 */
int users_name_ok(const char *name);

/* 1 if hash looks like a yescrypt hash crypt(3) can check, else 0 */
int users_hash_ok(const char *hash);

/*
 * Read path into u (emptied first).  A missing file gives no accounts
 * and sets *missing_r.  0, or -1 with err naming FILE:LINE (u is then
 * empty).
 */
int users_load(const char *path, struct users *u, int *missing_r,
    char *err, size_t errsz);
void users_free(struct users *u);

/* the account called name, or NULL */
const struct users_entry *users_find(const struct users *u,
    const char *name);

/* 1 if e may see and decide list's posts, else 0 */
int users_may(const struct users_entry *e, const char *list);

/* lists ("all" or L1,L2,...) as users_set takes them, and short
 * enough for the account name's line with a hash of up to
 * USERS_MAX_HASH bytes: 0; -1 with err naming the bad list or the
 * length; -2 out of memory */
int users_lists_ok(const char *name, const char *lists, char *err,
    size_t errsz);

/*
 * Add the account name (or replace it when it exists and replace is
 * set) with hash and lists ("all" or L1,L2,...).  0; 1 when it exists
 * and replace is not set (u unchanged); -1 with err (bad name, hash or
 * list, too many accounts, out of memory; u unchanged).
 */
int users_set(struct users *u, const char *name, const char *hash,
    const char *lists, int replace, char *err, size_t errsz);

/* remove the account name: 1 removed, 0 there was none */
int users_del(struct users *u, const char *name);

/*
 * Write u to path atomically: a temporary file of mode 0600 beside it,
 * fsync, rename over path, fsync of the directory.  0, or -1 with err
 * (path unchanged).
 */
int users_save(const char *path, const struct users *u, char *err,
    size_t errsz);

/*
 * As users_save; a file that does not exist yet is given to uid and gid
 * ((uid_t)-1 and (gid_t)-1: left as made) before it takes its name: root
 * creating it for the user `listgate web` runs as, who must read it.
 */
int users_save_as(const char *path, const struct users *u, uid_t uid,
    gid_t gid, char *err, size_t errsz);

/*
 * Take an exclusive lock for a read-modify-write of path (a lock file
 * beside it, path + ".lock", mode 0600), waiting for another writer.
 * Returns the lock's descriptor (close it to let go), or -1 with err.
 */
int users_lock(const char *path, char *err, size_t errsz);

#endif
