/*
 * users.c - read and write users.conf, the web moderators' accounts
 *
 * The file is written by `listgate user` but read as untrusted text:
 * lines are bounded (LG_MAX_CONF_LINE), and a NUL byte, a CR inside a
 * line, a byte order mark, a bad name, a
 * hash that is not yescrypt, a bad list name, a duplicate account or a
 * file that others may read is an error naming FILE:LINE.  Only names
 * that passed listcfg_name_ok are kept as lists.  Never exits; -1 with a
 * message on every failure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/util/lglimits.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"
#include "listcfg/users.h"

int
users_name_ok(const char *name)
{
	size_t i;
	int c;

	if (name == NULL)
		return 0;
	for (i = 0; (c = (unsigned char)name[i]) != '\0'; i++) {
		if (i >= USERS_MAX_NAME)
			return 0;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (i == 0 || (c != '.' && c != '_' && c != '@' && c != '+' &&
		    c != '-'))
			return 0;
	}
	return i > 0;
}

int
users_hash_ok(const char *hash)
{
	size_t n = strlen(hash), i;

	/* "$y$" params "$" salt "$" hash, in crypt's base-64 alphabet */
	if (n < 10 || n > USERS_MAX_HASH || strncmp(hash, "$y$", 3) != 0)
		return 0;
	for (i = 3; i < n; i++)
		if (!((hash[i] >= 'a' && hash[i] <= 'z') ||
		    (hash[i] >= 'A' && hash[i] <= 'Z') ||
		    (hash[i] >= '0' && hash[i] <= '9') || hash[i] == '.' ||
		    hash[i] == '/' || hash[i] == '$'))
			return 0;
	return 1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct users_entry *)a)->name,
	    ((const struct users_entry *)b)->name);
}

/* free what one entry owns */
static void
entry_free(struct users_entry *e)
{
	size_t i;

	for (i = 0; i < e->nlists; i++)
		xfree(e->lists[i]);
	xfree(e->lists);
	e->lists = NULL;
	e->nlists = 0;
}

/*
 * Parse "all" or "L1,L2" into e (sorted, duplicates dropped): 0, or -1
 * with why (e unchanged)
 */
static int
parse_lists(const char *s, struct users_entry *e, char *why, size_t whysz)
{
	char **v;
	const char *p, *c;
	size_t n = 0, cap = 1, i, len;

	if (strcmp(s, "all") == 0) {
		e->all = 1;
		e->lists = NULL;
		e->nlists = 0;
		return 0;
	}
	for (p = s; *p; p++)
		if (*p == ',')
			cap++;
	if (cap > USERS_MAX_LISTS) {
		snprintf(why, whysz, "more than %u lists",
		    (unsigned)USERS_MAX_LISTS);
		return -1;
	}
	if ((v = xcalloc(cap + 1, sizeof(*v))) == NULL) {
		snprintf(why, whysz, "out of memory");
		return -1;
	}
	for (p = s;; p = c + 1) {
		c = strchr(p, ',');
		len = c ? (size_t)(c - p) : strlen(p);
		if ((v[n] = xstrndup(p, len)) == NULL) {
			snprintf(why, whysz, "out of memory");
			goto fail;
		}
		if (!listcfg_name_ok(v[n]) || strcmp(v[n], "all") == 0) {
			/* one with a '$' (a password hash in the wrong
			 * field) is not shown */
			snprintf(why, whysz, "bad list name%s%.80s%s (want "
			    "all, or names [a-z0-9][a-z0-9._-]* separated by "
			    "commas)", strchr(v[n], '$') ? "" : " `",
			    strchr(v[n], '$') ? "" : v[n],
			    strchr(v[n], '$') ? "" : "'");
			n++;
			goto fail;
		}
		n++;
		if (c == NULL)
			break;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 1; i < n;) {
		if (strcmp(v[i], v[i - 1]) == 0) {
			xfree(v[i]);
			memmove(v + i, v + i + 1, (n - i) * sizeof(*v));
			n--;
		} else
			i++;
	}
	e->all = 0;
	e->lists = v;
	e->nlists = n;
	return 0;
fail:
	while (n > 0)
		xfree(v[--n]);
	xfree(v);
	return -1;
}

void
users_free(struct users *u)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		entry_free(&u->v[i]);
	xfree(u->v);
	u->v = NULL;
	u->n = 0;
}

const struct users_entry *
users_find(const struct users *u, const char *name)
{
	struct users_entry key;

	if (!users_name_ok(name) || u->n == 0)
		return NULL;
	memcpy(key.name, name, strlen(name) + 1);
	return bsearch(&key, u->v, u->n, sizeof(*u->v), cmp_entry);
}

int
users_may(const struct users_entry *e, const char *list)
{
	if (e == NULL || !listcfg_name_ok(list))
		return 0;
	if (e->all)
		return 1;
	return e->nlists > 0 && bsearch(&list, e->lists, e->nlists,
	    sizeof(*e->lists), cmp_str) != NULL;
}

/* "PATH:LINE: message" into err; -1 */
static int
line_err(char *err, size_t errsz, const char *path, unsigned line,
    const char *msg)
{
	snprintf(err, errsz, "%s:%u: %s", path, line, msg);
	return -1;
}

/* one line "NAME:HASH:LISTS" (no newline) appended to u: 0 or -1 */
static int
parse_line(char *s, struct users *u, size_t *cap, const char *path,
    unsigned line, char *err, size_t errsz)
{
	struct users_entry e, *nv;
	char why[1024], *h, *l;	/* (a suggested command names the directory) */
	size_t i;

	if ((h = strchr(s, ':')) == NULL || (l = strchr(h + 1, ':')) == NULL ||
	    strchr(l + 1, ':') != NULL)
		return line_err(err, errsz, path, line, "expected "
		    "NAME:HASH:LISTS (three fields separated by ':')");
	*h++ = '\0';
	*l++ = '\0';
	if (!users_name_ok(s)) {
		/* not shown: a line whose first field is not a name may
		 * hold a password hash there (the fields swapped, the name
		 * left out), and the error goes to a terminal or a log */
		snprintf(why, sizeof(why), "bad user name in the first field "
		    "(want [A-Za-z0-9][A-Za-z0-9._@+-]*, at most %u bytes, "
		    "then :HASH:LISTS)", (unsigned)USERS_MAX_NAME);
		return line_err(err, errsz, path, line, why);
	}
	if (!users_hash_ok(h)) {
		snprintf(why, sizeof(why), "user %.64s: the password hash is not "
		    "a yescrypt hash ($y$...; set the password again with "
		    "%s user add --replace)", s, suggest_cmd());
		return line_err(err, errsz, path, line, why);
	}
	for (i = 0; i < u->n; i++)
		if (strcmp(u->v[i].name, s) == 0) {
			snprintf(why, sizeof(why), "user %.64s is already "
			    "defined", s);
			return line_err(err, errsz, path, line, why);
		}
	if (u->n >= USERS_MAX) {
		snprintf(why, sizeof(why), "more than %u users",
		    (unsigned)USERS_MAX);
		return line_err(err, errsz, path, line, why);
	}
	memset(&e, 0, sizeof(e));
	memcpy(e.name, s, strlen(s) + 1);
	memcpy(e.hash, h, strlen(h) + 1);
	if (parse_lists(l, &e, why, sizeof(why)) < 0) {
		char msg[420];

		snprintf(msg, sizeof(msg), "user %.64s: %.300s", s, why);
		return line_err(err, errsz, path, line, msg);
	}
	if (u->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		if ((nv = xrealloc(u->v, ncap * sizeof(*nv))) == NULL) {
			entry_free(&e);
			return line_err(err, errsz, path, line,
			    "out of memory");
		}
		u->v = nv;
		*cap = ncap;
	}
	u->v[u->n++] = e;
	return 0;
}

int
users_load(const char *path, struct users *u, int *missing_r, char *err,
    size_t errsz)
{
	char line[LG_MAX_CONF_LINE + 1], *p;
	struct stat st;
	FILE *fp;
	size_t n, cap = 0;
	unsigned lineno = 0;
	int c, eof = 0, fd;

	u->v = NULL;
	u->n = 0;
	*missing_r = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT) {
			*missing_r = 1;
			return 0;
		}
		snprintf(err, errsz, "%s: cannot open: %s", path,
		    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errsz, "%s: mode %04o lets others read or change "
		    "the password hashes: chmod 600 %s", path,
		    (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return -1;
	}
	if ((fp = fdopen(fd, "r")) == NULL) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	while (!eof) {
		lineno++;
		n = 0;
		for (;;) {
			c = getc(fp);
			if (c == EOF) {
				if (ferror(fp)) {
					snprintf(err, errsz, "%s:%u: read "
					    "error", path, lineno);
					goto fail;
				}
				eof = 1;
				break;
			}
			if (c == '\n')
				break;
			if (c == '\0') {
				line_err(err, errsz, path, lineno,
				    "NUL byte in line");
				goto fail;
			}
			if (n >= LG_MAX_CONF_LINE) {
				line_err(err, errsz, path, lineno,
				    "line too long");
				goto fail;
			}
			line[n++] = (char)c;
		}
		line[n] = '\0';
		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' ||
		    line[n - 1] == '\r'))
			line[--n] = '\0';
		/* CR line ends would make the file one line: a comment
		 * (the head user add writes), every account in it unread,
		 * and dropped by the next add */
		if (memchr(line, '\r', n) != NULL) {
			line_err(err, errsz, path, lineno, "carriage return "
			    "inside the line (a file with CR line ends? lines "
			    "end with LF)");
			goto fail;
		}
		/* a byte order mark (an editor's "UTF-8 with BOM") is
		 * invisible: "expected NAME:HASH:LISTS" on what reads as
		 * the head comment, or "bad user name" on an account that
		 * reads right, sent its reader looking for the wrong
		 * thing (and listgate web let nobody in) */
		if (lineno == 1 && n >= 3 && memcmp(line, "\xef\xbb\xbf",
		    3) == 0) {
			line_err(err, errsz, path, lineno, "the file starts "
			    "with a byte order mark (bytes EF BB BF, which an "
			    "editor's \"UTF-8 with BOM\" writes): save it "
			    "without one");
			goto fail;
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '\0' || *p == '#')
			continue;
		if (parse_line(p, u, &cap, path, lineno, err, errsz) < 0)
			goto fail;
	}
	fclose(fp);
	if (u->n > 1)
		qsort(u->v, u->n, sizeof(*u->v), cmp_entry);
	return 0;
fail:
	fclose(fp);
	users_free(u);
	return -1;
}

int
users_lists_ok(const char *name, const char *lists, char *err, size_t errsz)
{
	struct users_entry e;
	char why[256];
	size_t i, len, room;

	memset(&e, 0, sizeof(e));
	if (parse_lists(lists, &e, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "--lists: %s", why);
		return strcmp(why, "out of memory") == 0 ? -2 : -1;
	}
	/* the LISTS field as users_save_as writes it (sorted, without
	 * duplicates); with the name and a hash of any length it must
	 * fit one line, or the save fails, after the password was asked
	 * for (twice on a terminal) and hashed for nothing */
	len = e.all ? 3 : 0;
	for (i = 0; i < e.nlists; i++)
		len += (i > 0) + strlen(e.lists[i]);
	entry_free(&e);
	room = LG_MAX_CONF_LINE - 2 - USERS_MAX_HASH - strnlen(name,
	    USERS_MAX_NAME + 1);
	if (len > room) {
		snprintf(err, errsz, "--lists: %zu bytes of list names, more "
		    "than the %zu a line of users.conf holds beside the name "
		    "and its hash (%u bytes a line)", len, room,
		    (unsigned)LG_MAX_CONF_LINE);
		return -1;
	}
	return 0;
}

int
users_set(struct users *u, const char *name, const char *hash,
    const char *lists, int replace, char *err, size_t errsz)
{
	struct users_entry e, *nv, *old;
	char why[256];

	if (!users_name_ok(name)) {
		snprintf(err, errsz, "bad user name `%.80s' (want "
		    "[A-Za-z0-9][A-Za-z0-9._@+-]*, at most %u bytes)", name,
		    (unsigned)USERS_MAX_NAME);
		return -1;
	}
	if (!users_hash_ok(hash)) {
		snprintf(err, errsz, "not a yescrypt hash");
		return -1;
	}
	memset(&e, 0, sizeof(e));
	memcpy(e.name, name, strlen(name) + 1);
	memcpy(e.hash, hash, strlen(hash) + 1);
	if (parse_lists(lists, &e, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "--lists: %s", why);
		return -1;
	}
	if ((old = (struct users_entry *)users_find(u, name)) != NULL) {
		if (!replace) {
			entry_free(&e);
			return 1;
		}
		entry_free(old);
		*old = e;
		return 0;
	}
	if (u->n >= USERS_MAX) {
		entry_free(&e);
		snprintf(err, errsz, "more than %u users", (unsigned)USERS_MAX);
		return -1;
	}
	if ((nv = xrealloc(u->v, (u->n + 1) * sizeof(*nv))) == NULL) {
		entry_free(&e);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	u->v = nv;
	u->v[u->n++] = e;
	qsort(u->v, u->n, sizeof(*u->v), cmp_entry);
	return 0;
}

int
users_del(struct users *u, const char *name)
{
	struct users_entry *e = (struct users_entry *)users_find(u, name);
	size_t i;

	if (e == NULL)
		return 0;
	i = (size_t)(e - u->v);
	entry_free(e);
	memmove(u->v + i, u->v + i + 1, (u->n - i - 1) * sizeof(*u->v));
	u->n--;
	return 1;
}

/* the directory part of path, into out: 0, or -1 when too long */
static int
dir_of(const char *path, char *out, size_t outsz)
{
	const char *s = strrchr(path, '/');
	size_t n;

	if (s == NULL) {
		snprintf(out, outsz, ".");
		return 0;
	}
	n = s == path ? 1 : (size_t)(s - path);
	if (n >= outsz)
		return -1;
	memcpy(out, path, n);
	out[n] = '\0';
	return 0;
}

/* write all of s to fd: 0 or -1 */
static int
write_all(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, s, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int
users_save(const char *path, const struct users *u, char *err,
    size_t errsz)
{
	return users_save_as(path, u, (uid_t)-1, (gid_t)-1, err, errsz);
}

int
users_save_as(const char *path, const struct users *u, uid_t uid, gid_t gid,
    char *err, size_t errsz)
{
	static const char head[] = "# listgate web accounts: NAME:HASH:LISTS "
	    "(LISTS: all, or names separated by commas)\n"
	    "# written by `listgate user`; keep it mode 0600\n";
	char tmp[4096], dir[4096], line[LG_MAX_CONF_LINE + 2];
	const struct users_entry *e;
	struct stat st;
	size_t i, j, n;
	int fd, dfd, ok = 1;

	if (dir_of(path, dir, sizeof(dir)) < 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >=
	    sizeof(tmp)) {
		snprintf(err, errsz, "%.200s: path too long", path);
		return -1;
	}
	/* mkstemp creates the file with mode 0600 */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		snprintf(err, errsz, "%s: cannot create: %s", tmp,
		    strerror(errno));
		return -1;
	}
	ok = fchmod(fd, 0600) == 0 && write_all(fd, head, strlen(head)) == 0;
	/* the file keeps its owner: root adding an account (--allow-root)
	 * must not leave one the web page, running as its user, cannot
	 * read (a failure, not being root, leaves ours) */
	if (ok && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, st.st_uid, st.st_gid) < 0 && geteuid() == 0) {
		snprintf(err, errsz, "%s: cannot give it to uid %lu: %s", tmp,
		    (unsigned long)st.st_uid, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	/* a new file: the owner asked for (the user the web page runs as,
	 * who must read it), before it takes its name */
	if (ok && (uid != (uid_t)-1 || gid != (gid_t)-1) &&
	    lstat(path, &st) < 0 && errno == ENOENT &&
	    fchown(fd, uid, gid) < 0) {
		snprintf(err, errsz, "%s: cannot give it to uid %lu: %s", tmp,
		    (unsigned long)uid, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	for (i = 0; ok && i < u->n; i++) {
		e = &u->v[i];
		n = (size_t)snprintf(line, sizeof(line), "%s:%s:%s", e->name,
		    e->hash, e->all ? "all" : "");
		for (j = 0; !e->all && j < e->nlists && n < sizeof(line); j++)
			n += (size_t)snprintf(line + n, sizeof(line) - n,
			    "%s%s", j ? "," : "", e->lists[j]);
		if (n + 1 >= sizeof(line)) {
			snprintf(err, errsz, "user %s: line longer than %u "
			    "bytes (too many lists)", e->name,
			    (unsigned)LG_MAX_CONF_LINE);
			close(fd);
			unlink(tmp);
			return -1;
		}
		line[n++] = '\n';
		ok = write_all(fd, line, n) == 0;
	}
	if (!ok || fsync(fd) < 0) {
		snprintf(err, errsz, "%s: cannot write: %s", tmp,
		    strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		snprintf(err, errsz, "%s: cannot replace: %s", path,
		    strerror(errno));
		unlink(tmp);
		return -1;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int
users_lock(const char *path, char *err, size_t errsz)
{
	char lock[4096];
	struct stat st, lst;
	int fd;

	if ((size_t)snprintf(lock, sizeof(lock), "%s.lock", path) >=
	    sizeof(lock)) {
		snprintf(err, errsz, "%.200s: path too long", path);
		return -1;
	}
	if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) < 0) {
		snprintf(err, errsz, "%s: %s", lock, strerror(errno));
		return -1;
	}
	/* root's lock file belongs to the accounts file's owner, who must
	 * be able to take it next time */
	if (geteuid() == 0 && stat(path, &st) == 0 && fstat(fd, &lst) == 0 &&
	    S_ISREG(lst.st_mode) && (lst.st_uid != st.st_uid ||
	    lst.st_gid != st.st_gid))
		(void)fchown(fd, st.st_uid, st.st_gid);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			snprintf(err, errsz, "%s: cannot lock: %s", lock,
			    strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}
