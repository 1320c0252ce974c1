/*
 * cfgedit.c - set keys in a configuration file, every other byte kept,
 * replaced atomically
 *
 * See cfgedit.h.  The file is the administrator's: read whole (at most
 * CFGEDIT_MAX_BYTES), copied line by line as bytes; only lines that set
 * one of the keys are rewritten.  Fails with -1 and a message naming
 * the file, before anything is renamed; a temporary file left by a
 * failure is removed.  Never prints, never exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"
#include "listcfg/cfgedit.h"
#include "listcfg/cfgfile.h"

/* the key a line sets, in [*k, *k + *kn), else 0 (a comment, a blank
 * line, a line that is no setting) */
static int
line_key(const char *s, size_t n, size_t *k, size_t *kn, size_t *v)
{
	size_t i = 0, j;

	while (i < n && cfgfile_blank((unsigned char)s[i]))
		i++;
	if (i == n || s[i] == '#')
		return 0;
	for (j = i; j < n && ((s[j] >= 'a' && s[j] <= 'z') ||
	    (s[j] >= '0' && s[j] <= '9') || s[j] == '_'); j++)
		;
	if (j == i)
		return 0;
	*k = i;
	*kn = j - i;
	while (j < n && cfgfile_blank((unsigned char)s[j]))
		j++;
	if (j == n || s[j] != '=')
		return 0;
	for (j++; j < n && cfgfile_blank((unsigned char)s[j]); j++)
		;
	*v = j;
	return 1;
}

/* the end of the value text at s[v..n): up to a comment, blanks
 * trimmed */
static size_t
value_end(const char *s, size_t n, size_t v)
{
	size_t e = v;
	int q = 0;

	for (; e < n; e++) {
		if (s[e] == '"')
			q = !q;
		if (!q && s[e] == '#' && e > v &&
		    cfgfile_blank((unsigned char)s[e - 1]))
			break;
	}
	while (e > v && cfgfile_blank((unsigned char)s[e - 1]))
		e--;
	return e;
}

/* 1 when the value text at s[v..n) (up to a comment, blanks trimmed)
 * is exactly want */
static int
same_value(const char *s, size_t n, size_t v, const char *want)
{
	size_t e = value_end(s, n, v), w = strlen(want);

	return e - v == w && memcmp(s + v, want, w) == 0;
}

/* read the whole file into b: 0 (1 when it does not exist), or -1 */
static int
read_file(const char *path, struct buf *b, struct stat *st, char *err,
    size_t errsz)
{
	char chunk[8192];
	ssize_t r;
	int fd;

	/* O_NONBLOCK: a FIFO in its place is refused below, not waited on
	 * for a writer (no effect on a regular file) */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errsz, "%s: cannot open: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errsz, "%s: read error: %s", path,
			    strerror(errno));
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		if (buf_add(b, chunk, (size_t)r) < 0) {
			/* (the loader reads a file of any size: it is the
			 * list's configuration all the same, only too large
			 * to edit here) */
			snprintf(err, errsz, "%s: larger than the %u bytes "
			    "edited here (or out of memory): nothing written; "
			    "set the keys in it by hand", path,
			    (unsigned)CFGEDIT_MAX_BYTES);
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (b->len > 0 && memchr(b->data, '\0', b->len) != NULL) {
		snprintf(err, errsz, "%s: NUL byte: not a configuration file",
		    path);
		return -1;
	}
	return 0;
}

/* write all of b to fd: 0 or -1 */
static int
write_all(int fd, const struct buf *b)
{
	size_t off = 0;
	ssize_t w;

	while (off < b->len) {
		w = write(fd, b->data + off, b->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* the new text of the file into out: 0, or -1 with err */
static int
edit(const char *path, const struct buf *in, const struct cfgedit_change *ch,
    size_t n, const char *stamp, struct buf *out, unsigned *changed_r,
    char *err, size_t errsz)
{
	const char *s = in->len ? (const char *)in->data : "";
	const char *eol = "\n", *nl;
	unsigned *found = NULL, line = 0;
	size_t pos = 0, i, end, cl, k, kn, v, ind, pre, room, on, cut;
	int rc = -1;

	*changed_r = 0;
	if ((found = xcalloc(n + 1, sizeof(*found))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	/* the file's line ending: that of its first line */
	if ((nl = memchr(s, '\n', in->len)) != NULL && nl > s && nl[-1] == '\r')
		eol = "\r\n";
	while (pos < in->len) {
		line++;
		nl = memchr(s + pos, '\n', in->len - pos);
		end = nl != NULL ? (size_t)(nl - s) + 1 : in->len;
		/* the line's text, without its own ending */
		cl = (nl != NULL ? (size_t)(nl - s) : in->len) - pos;
		if (cl > 0 && s[pos + cl - 1] == '\r')
			cl--;
		if (line_key(s + pos, cl, &k, &kn, &v)) {
			for (i = 0; i < n; i++)
				if (strlen(ch[i].key) == kn &&
				    memcmp(s + pos + k, ch[i].key, kn) == 0)
					break;
		} else
			i = n;
		if (i < n && found[i]) {
			snprintf(err, errsz, "%s:%u: %s is set twice (first "
			    "on line %u)", path, line, ch[i].key, found[i]);
			goto out;
		}
		if (i < n)
			found[i] = line;
		if (i == n || same_value(s + pos, cl, v, ch[i].value)) {
			if (buf_add(out, s + pos, end - pos) < 0)
				goto full;
			pos = end;
			continue;
		}
		/* the old line as a comment, then the new setting, at its
		 * indentation and with its own line ending; each within
		 * the loader's line limit (a CR counts) */
		ind = k;
		room = LG_MAX_CONF_LINE - (eol[0] == '\r');
		pre = ind + strlen("# ") + strlen(stamp) + strlen(": was: ");
		if (pre + strlen(" ...") > room ||
		    ind + kn + 3 + strlen(ch[i].value) + (cl < end - pos &&
		    s[pos + cl] == '\r') > LG_MAX_CONF_LINE) {
			snprintf(err, errsz, "%s:%u: %s: the edited line would "
			    "pass %u bytes", path, line, ch[i].key,
			    (unsigned)LG_MAX_CONF_LINE);
			goto out;
		}
		room -= pre;
		/* an old line too long for the comment: without its own
		 * comment, else cut (at a character) and marked " ..." */
		on = cl - ind;
		cut = 0;
		if (on > room) {
			on = value_end(s + pos, cl, v) - ind;
			if (on > room) {
				on = room - 4;
				while (on > 0 && ((unsigned char)s[pos + ind +
				    on] & 0xc0) == 0x80)
					on--;
				cut = 1;
			}
		}
		if (buf_add(out, s + pos, ind) < 0 ||
		    buf_adds(out, "# ") < 0 || buf_adds(out, stamp) < 0 ||
		    buf_adds(out, ": was: ") < 0 ||
		    buf_add(out, s + pos + ind, on) < 0 ||
		    (cut && buf_adds(out, " ...") < 0) ||
		    buf_adds(out, eol) < 0 ||
		    buf_add(out, s + pos, ind) < 0 ||
		    buf_adds(out, ch[i].key) < 0 || buf_adds(out, " = ") < 0 ||
		    buf_adds(out, ch[i].value) < 0 ||
		    (nl != NULL && buf_add(out, s + pos + cl, end - pos - cl) < 0))
			goto full;
		(*changed_r)++;
		pos = end;
	}
	for (i = 0; i < n; i++) {
		if (found[i])
			continue;
		if (out->len > 0 && out->data[out->len - 1] != '\n' &&
		    buf_adds(out, eol) < 0)
			goto full;
		if (buf_adds(out, "# ") < 0 || buf_adds(out, stamp) < 0 ||
		    buf_adds(out, ch[i].old != NULL ? ": was: the default (" :
		    ": was: not set") < 0 ||
		    (ch[i].old != NULL && (buf_adds(out, ch[i].old) < 0 ||
		    buf_adds(out, ")") < 0)) ||
		    buf_adds(out, eol) < 0 || buf_adds(out, ch[i].key) < 0 ||
		    buf_adds(out, " = ") < 0 || buf_adds(out, ch[i].value) < 0 ||
		    buf_adds(out, eol) < 0)
			goto full;
		(*changed_r)++;
	}
	rc = 0;
	goto out;
full:
	snprintf(err, errsz, "%s: the edited file would pass %u bytes (or out "
	    "of memory)", path, (unsigned)CFGEDIT_MAX_BYTES);
out:
	xfree(found);
	return rc;
}

/* fsync the directory holding path, so the rename is durable: 0 or -1 */
static int
sync_dir(const char *path)
{
	char d[4096];
	int fd, r;

	if (strlen(path) >= sizeof(d))
		return -1;
	memcpy(d, path, strlen(path) + 1);
	if ((fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

/* the group and the mode of the directory holding path, into *gid_r
 * and *mode_r: 0 or -1 */
static int
dir_group(const char *path, gid_t *gid_r, mode_t *mode_r)
{
	char d[4096];
	struct stat st;

	if (strlen(path) >= sizeof(d))
		return -1;
	memcpy(d, path, strlen(path) + 1);
	if (stat(dirname(d), &st) < 0)
		return -1;
	*gid_r = st.st_gid;
	*mode_r = st.st_mode;
	return 0;
}

/* lock the directory holding path against other edits (flock, released
 * when the descriptor is closed): the descriptor, or -1 when it cannot
 * be locked (unreadable, or NFS, where flock becomes a lock a directory
 * cannot take): then changed_since alone guards the edit */
static int
lock_dir(const char *path)
{
	char d[4096];
	int fd;

	if (strlen(path) >= sizeof(d))
		return -1;
	memcpy(d, path, strlen(path) + 1);
	if ((fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* has the file at path changed since read_file saw it (st; missing:
 * there was none)? */
static int
changed_since(const char *path, int missing, const struct stat *st)
{
	struct stat now;

	if (stat(path, &now) < 0)
		return !missing || errno != ENOENT;
	return missing || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino || now.st_size != st->st_size ||
	    now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec;
}

/* the name of a file's access ACL among its extended attributes */
#define ACL_XATTR	"system.posix_acl_access"

/*
 * The extended attributes of the file at path onto fd, its replacement:
 * its access ACL above all (a reader given the file by an ACL entry,
 * the filter's user, say, must go on reading it).  An ACL that cannot
 * be copied is an error; any other attribute (security.*, user.*) is
 * copied where the file system and our privileges allow.  0, or -1
 * with err.
 */
static int
copy_xattrs(const char *path, int fd, char *err, size_t errsz)
{
	char *names = NULL, *val = NULL, *p;
	ssize_t nl, vl;
	size_t cap = 0;
	void *nv;
	int rc = -1, acl;

	if ((nl = listxattr(path, NULL, 0)) <= 0) {
		if (nl == 0 || errno == ENOTSUP)
			return 0;
		snprintf(err, errsz, "%s: cannot list its extended attributes: "
		    "%s", path, strerror(errno));
		return -1;
	}
	if ((names = xmalloc((size_t)nl + 1)) == NULL ||
	    (nl = listxattr(path, names, (size_t)nl)) < 0) {
		snprintf(err, errsz, "%s: cannot list its extended attributes: "
		    "%s", path, names == NULL ? "out of memory" :
		    strerror(errno));
		goto out;
	}
	names[nl] = '\0';
	for (p = names; p < names + nl; p += strlen(p) + 1) {
		acl = strcmp(p, ACL_XATTR) == 0;
		if ((vl = getxattr(path, p, NULL, 0)) < 0)
			goto one;
		if ((size_t)vl + 1 > cap) {
			if ((nv = xrealloc(val, (size_t)vl + 1)) == NULL) {
				errno = ENOMEM;
				goto one;
			}
			val = nv;
			cap = (size_t)vl + 1;
		}
		if ((vl = getxattr(path, p, val, (size_t)vl)) >= 0 &&
		    fsetxattr(fd, p, val, (size_t)vl, 0) == 0)
			continue;
one:
		if (acl) {
			snprintf(err, errsz, "%s: its ACL cannot be copied to "
			    "the new file (%s): those it lets read the file "
			    "could no longer; nothing written", path,
			    strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	xfree(names);
	xfree(val);
	return rc;
}

/* may the user we run as give a file the group gid (root, or a member
 * of it)? */
static int
may_give_group(gid_t gid)
{
	gid_t *v;
	int n, i, r = 0;

	if (geteuid() == 0 || getegid() == gid)
		return 1;
	if ((n = getgroups(0, NULL)) <= 0 ||
	    (v = xcalloc((size_t)n, sizeof(*v))) == NULL)
		return 0;
	n = getgroups(n, v);
	for (i = 0; i < n && !r; i++)
		r = v[i] == gid;
	xfree(v);
	return r;
}

/* the new file would lose the group of the file at path (status st),
 * through which others read it: 0 when it keeps it (or the group may
 * not read it, or everyone may: its members read the new file as
 * others), -1 with err */
static int
group_check(const char *path, const struct stat *st, char *err,
    size_t errsz)
{
	char gname[64], uname[64];
	struct group *gr;
	struct passwd *pw;

	if ((st->st_mode & S_IRGRP) == 0 || (st->st_mode & S_IROTH) != 0 ||
	    may_give_group(st->st_gid))
		return 0;
	if ((gr = getgrgid(st->st_gid)) != NULL)
		snprintf(gname, sizeof(gname), "%s", gr->gr_name);
	else
		snprintf(gname, sizeof(gname), "%lu",
		    (unsigned long)st->st_gid);
	if ((pw = getpwuid(geteuid())) != NULL)
		snprintf(uname, sizeof(uname), "%s", pw->pw_name);
	else
		snprintf(uname, sizeof(uname), "%lu",
		    (unsigned long)geteuid());
	snprintf(err, errsz, "%s: its group %s may read it (mode %04o), and "
	    "user %s, not a member of %s, cannot give that group to the new "
	    "file: those who read it through the group could no longer.  "
	    "Nothing written; run it as root or as a member of %s, or change "
	    "the file's group (chgrp)", path, gname,
	    (unsigned)(st->st_mode & 07777), uname, gname, gname);
	return -1;
}

int
cfgedit_keeps_group(const char *path, char *err, size_t errsz)
{
	struct stat st;

	/* none: made with its directory's group */
	if (stat(path, &st) < 0)
		return 0;
	return group_check(path, &st, err, errsz);
}

int
cfgedit_apply(const char *path, const struct cfgedit_change *ch,
    size_t n, const char *stamp, cfgedit_check_fn check, void *ctx,
    unsigned *changed_r, char *err, size_t errsz)
{
	struct buf in = BUF_INIT(CFGEDIT_MAX_BYTES);
	struct buf out = BUF_INIT(CFGEDIT_MAX_BYTES);
	struct stat st, lst;
	char tmp[4200], real[PATH_MAX];
	const char *target = path;
	unsigned changed = 0;
	/* a new file: as listgate.conf(5) lays lists/ out, not for
	 * others unless its directory lets them in (below; fchmod sets it
	 * whatever the umask) */
	mode_t mode = 0640, dmode;
	gid_t dgid;
	int fd = -1, lockfd = -1, missing, rc = -1, made = 0;

	if (changed_r != NULL)
		*changed_r = 0;
	memset(&st, 0, sizeof(st));
	/* a symbolic link stays: the file it points to is edited, the
	 * temporary file made beside that one */
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		if (realpath(path, real) == NULL) {
			snprintf(err, errsz, "%s: a symbolic link that cannot "
			    "be followed: %s", path, strerror(errno));
			goto out;
		}
		target = real;
	}
	/* one edit at a time: of two at once (two tunes), the second
	 * reads the file once the first has replaced it; the check below
	 * (changed_since) cannot close the gap before the rename */
	lockfd = lock_dir(target);
	if ((missing = read_file(path, &in, &st, err, errsz)) < 0)
		goto out;
	if (!missing)
		mode = st.st_mode & 07777;
	if (edit(path, &in, ch, n, stamp, &out, &changed, err, errsz) < 0)
		goto out;
	if (changed == 0) {
		rc = 0;
		goto out;
	}
	if (!missing && group_check(path, &st, err, errsz) < 0)
		goto out;
	if (snprintf(tmp, sizeof(tmp), "%s.tune-%ld.tmp", target,
	    (long)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errsz, "%s: path too long", path);
		goto out;
	}
	/* a temporary file of our name is one an edit by a process of our
	 * pid left, killed before it could remove it (Ctrl-C during the
	 * fsync): with the lock held no edit is using it (a process of our
	 * pid in another pid namespace, a container, takes the lock too),
	 * and under a pid that comes round again (a container's) it
	 * refused every edit from then on */
	if (lockfd >= 0 && unlink(tmp) < 0 && errno != ENOENT) {
		snprintf(err, errsz, "%s: cannot remove it: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0) {
		snprintf(err, errsz, "%s: cannot create: %s", tmp,
		    strerror(errno));
		goto out;
	}
	made = 1;
	/* the old file's owner (allowed to root only) and mode; without
	 * the owner, its group where we belong to it (those who read the
	 * file through it go on reading it) */
	if (!missing && fchown(fd, st.st_uid, st.st_gid) < 0 && (errno !=
	    EPERM || (fchown(fd, (uid_t)-1, st.st_gid) < 0 &&
	    errno != EPERM))) {
		snprintf(err, errsz, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	/* a new file: its directory's group, as the files beside it
	 * (root:listgate, which the filter reads through), not ours
	 * (root's own, under --allow-root, which the filter may not
	 * read: every post of the list deferred) */
	if (missing && dir_group(target, &dgid, &dmode) == 0) {
		if (dgid != getegid() && fchown(fd, (uid_t)-1, dgid) < 0 &&
		    errno != EPERM) {
			snprintf(err, errsz, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		/* and read by others where they may enter the directory:
		 * a lists/ of 0755 with files of 0644, the filter reading
		 * them as others, could not read a new file of 0640
		 * (every post of the list deferred).  A file made here holds
		 * the keys set and nothing else (the database's connection
		 * string is listgate.conf's) */
		if (dmode & S_IXOTH)
			mode |= S_IROTH;
	}
	/* its ACL and other attributes, before the mode: the mode's
	 * group bits are then the ACL's mask, as they were */
	if (!missing && copy_xattrs(path, fd, err, errsz) < 0)
		goto out;
	if (fchmod(fd, mode) < 0 || write_all(fd, &out) < 0 || fsync(fd) < 0) {
		snprintf(err, errsz, "%s: cannot write: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		snprintf(err, errsz, "%s: cannot write: %s", tmp,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	if (check != NULL && check(ctx, tmp, err, errsz) < 0)
		goto out;
	/* an edit made meanwhile (by hand, another tune) is not lost:
	 * nothing is written over a file that changed since it was read */
	if (changed_since(path, missing, &st)) {
		snprintf(err, errsz, "%s changed while it was being edited "
		    "(another edit at the same time?): nothing written; run "
		    "it again", path);
		goto out;
	}
	if (rename(tmp, target) < 0) {
		snprintf(err, errsz, "%s: cannot replace it: %s", path,
		    strerror(errno));
		goto out;
	}
	made = 0;
	if (changed_r != NULL)
		*changed_r = changed;
	if (sync_dir(target) < 0) {
		snprintf(err, errsz, "%s: replaced, but its directory could not "
		    "be synced: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	if (lockfd >= 0)
		close(lockfd);
	buf_free(&in);
	buf_free(&out);
	return rc;
}
