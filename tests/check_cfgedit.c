/*
 * check_cfgedit.c - listcfg/cfgedit: only the keys asked change, every
 * other byte stays, the old value stays as a dated comment, the file
 * is replaced whole or not at all
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "gate/util/lglimits.h"
#include "listcfg/cfgedit.h"

static char dir[256], path[300];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "%s/lg-cfgedit.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/dev.conf", dir);
}

static void
teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[600];

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.' && (e->d_name[1] == 0 ||
			    (e->d_name[1] == '.' && e->d_name[2] == 0)))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

static void
put(const char *s, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert(fd >= 0);
	ck_assert(write(fd, s, n) == (ssize_t)n);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* the file's bytes (NUL-terminated; static) */
static const char *
get(size_t *n_r)
{
	static char b[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert(fd >= 0);
	n = read(fd, b, sizeof(b) - 1);
	ck_assert(n >= 0);
	b[n] = 0;
	close(fd);
	if (n_r != NULL)
		*n_r = (size_t)n;
	return b;
}

/* files in the directory besides dev.conf */
static int
others(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0
		    && strcmp(e->d_name, "dev.conf") != 0)
			n++;
	closedir(d);
	return n;
}

static const struct cfgedit_change two[] = {
	{ "ham_cutoff", "0.05", "0.3" },
	{ "robs", "0.1", "0.3" },
};

START_TEST(only_the_keys)
{
	static const char before[] =
	    "# dev list: tuned by hand\n"
	    "\n"
	    "  ham_cutoff = 0.3   # conservative\n"
	    "spam_cutoff = 0.9999\n"
	    "# ham_cutoff = 0.1 (an old idea)\n"
	    "ham_cutoffs_note = not a key of ours\n"
	    "release = /bin/sh -c \"x # not a comment\"\n"
	    "robs=0.3\n"
	    "\ttrailing\tblanks = kept   \n";
	static const char after[] =
	    "# dev list: tuned by hand\n"
	    "\n"
	    "  # 2026-12-05 listgate tune: was: ham_cutoff = 0.3   # conservative\n"
	    "  ham_cutoff = 0.05\n"
	    "spam_cutoff = 0.9999\n"
	    "# ham_cutoff = 0.1 (an old idea)\n"
	    "ham_cutoffs_note = not a key of ours\n"
	    "release = /bin/sh -c \"x # not a comment\"\n"
	    "# 2026-12-05 listgate tune: was: robs=0.3\n"
	    "robs = 0.1\n"
	    "\ttrailing\tblanks = kept   \n";
	char err[512];
	unsigned changed;
	struct stat a, b;

	put(before, sizeof(before) - 1, 0640);
	ck_assert_int_eq(stat(path, &a), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 2,
	    "2026-12-05 listgate tune", NULL, NULL, &changed, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(changed, 2);
	ck_assert_str_eq(get(NULL), after);
	ck_assert_int_eq(stat(path, &b), 0);
	/* replaced (a new inode), with the old mode, nothing left over */
	ck_assert(a.st_ino != b.st_ino);
	ck_assert_uint_eq(b.st_mode & 07777, 0640);
	ck_assert_int_eq(others(), 0);
}
END_TEST

START_TEST(appended_and_no_final_newline)
{
	static const char before[] = "spam_cutoff = 0.99\nrobs = 0.3";
	static const char after[] =
	    "spam_cutoff = 0.99\n"
	    "# S: was: robs = 0.3\n"
	    "robs = 0.1"
	    "\n# S: was: the default (0.3)\n"
	    "ham_cutoff = 0.05\n";
	char err[512];
	unsigned changed;

	put(before, sizeof(before) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL,
	    &changed, err, sizeof(err)), 0);
	ck_assert_uint_eq(changed, 2);
	ck_assert_str_eq(get(NULL), after);
}
END_TEST

START_TEST(crlf)
{
	static const char before[] = "# x\r\nham_cutoff = 0.3\r\nother = 1\r\n";
	static const char after[] =
	    "# x\r\n"
	    "# S: was: ham_cutoff = 0.3\r\n"
	    "ham_cutoff = 0.05\r\n"
	    "other = 1\r\n"
	    "# S: was: the default (0.3)\r\n"
	    "robs = 0.1\r\n";
	char err[512];

	put(before, sizeof(before) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL, NULL,
	    err, sizeof(err)), 0);
	ck_assert_str_eq(get(NULL), after);
}
END_TEST

START_TEST(same_value_changes_nothing)
{
	static const char before[] = "ham_cutoff = 0.05  # already\nrobs = 0.1\n";
	char err[512];
	unsigned changed = 99;
	struct stat a, b;

	put(before, sizeof(before) - 1, 0600);
	ck_assert_int_eq(stat(path, &a), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL,
	    &changed, err, sizeof(err)), 0);
	ck_assert_uint_eq(changed, 0);
	ck_assert_str_eq(get(NULL), before);
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert(a.st_ino == b.st_ino);	/* not even rewritten */
}
END_TEST

START_TEST(missing_file_created)
{
	char err[512];
	struct stat st;

	ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
	    err, sizeof(err)), 0);
	ck_assert_str_eq(get(NULL), "# S: was: the default (0.3)\n"
	    "ham_cutoff = 0.05\n");
	ck_assert_int_eq(stat(path, &st), 0);
	/* as listgate.conf(5) lays lists/ out: not for others, who may
	 * not enter the directory (the mode is set, whatever the umask) */
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
}
END_TEST

/* a file created in a directory others may enter (lists/ 0755, its
 * files 0644, the filter reading them as others) is for others to read
 * too: made 0640, the filter could not read the list's settings, and
 * every post of the list was deferred */
START_TEST(missing_file_read_by_others_where_they_enter)
{
	static const mode_t dmodes[3] = { 0755, 0711, 0750 };
	static const mode_t want[3] = { 0644, 0644, 0640 };
	char err[512];
	struct stat st;
	int i;

	for (i = 0; i < 3; i++) {
		unlink(path);
		ck_assert_int_eq(chmod(dir, dmodes[i]), 0);
		ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL,
		    NULL, err, sizeof(err)), 0);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, want[i]);
	}
	ck_assert_int_eq(chmod(dir, 0700), 0);
}
END_TEST

/* a file created (the list had none) takes its directory's group, as
 * listgate.conf(5) lays lists/ out (root, group listgate, files 0640),
 * not the group of whoever made it: root's own (tune --apply under
 * --allow-root) left a file the filter, in group listgate, could not
 * read (skipped unless root) */
START_TEST(missing_file_gets_dir_group)
{
	const gid_t grp = 4243;
	char err[512];
	struct stat st;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(chown(dir, 0, grp), 0);
	ck_assert_int_eq(chmod(dir, 0750), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_uint_eq(st.st_gid, grp);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* a file another user owns (root, say) in a directory the list user
 * may write: its owner cannot be kept, but its group is, where the
 * user belongs to it (a group that reads the file must go on reading
 * it); set up as root, run as nobody with that group (skipped unless
 * root) */
START_TEST(group_kept_without_owner)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	const gid_t grp = 4242, nobody = 65534;
	struct stat st;
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return;
	put(before, sizeof(before) - 1, 0640);
	ck_assert_int_eq(chown(path, 0, grp), 0);
	ck_assert_int_eq(chown(dir, nobody, nobody), 0);
	ck_assert((pid = fork()) >= 0);
	if (pid == 0) {
		char err[512];

		if (setgroups(1, &grp) < 0 || setgid(nobody) < 0 ||
		    setuid(nobody) < 0)
			_exit(2);
		_exit(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL, err,
		    sizeof(err)) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = 0.3\n"
	    "ham_cutoff = 0.05\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, nobody);
	ck_assert_uint_eq(st.st_gid, grp);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
}
END_TEST

/* a group that reads the file and that the user may not give it (not
 * root, not a member) refuses the edit, the file as it was: the new
 * file went to the user's own group, and the group's readers (the
 * filter, 0640 root:listgate) could no longer read the list's settings;
 * a file the group may not read is edited (set up as root, run as
 * nobody without that group; skipped unless root) */
START_TEST(group_lost_refused)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	const gid_t grp = 4244, nobody = 65534;
	const mode_t modes[2] = { 0640, 0600 };
	struct stat st;
	pid_t pid;
	int status, i;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(chown(dir, nobody, nobody), 0);
	for (i = 0; i < 2; i++) {
		put(before, sizeof(before) - 1, modes[i]);
		ck_assert_int_eq(chown(path, nobody, grp), 0);
		ck_assert_int_eq(chmod(path, modes[i]), 0);
		ck_assert((pid = fork()) >= 0);
		if (pid == 0) {
			char err[1024];
			int r;

			if (setgroups(0, NULL) < 0 || setgid(nobody) < 0 ||
			    setuid(nobody) < 0)
				_exit(2);
			r = cfgedit_keeps_group(path, err, sizeof(err));
			if (cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
			    err, sizeof(err)) == 0)
				_exit(r == 0 ? 0 : 3);
			_exit(r < 0 && strstr(err, "dev.conf: its group 4244 "
			    "may read it (mode 0640)") != NULL ? 1 : 4);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), i == 0 ? 1 : 0);
		ck_assert_int_eq(stat(path, &st), 0);
		if (i == 0) {
			ck_assert_str_eq(get(NULL), before);
			ck_assert_uint_eq(st.st_gid, grp);
		} else
			ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = "
			    "0.3\nham_cutoff = 0.05\n");
		ck_assert_uint_eq(st.st_mode & 07777, modes[i]);
		ck_assert_int_eq(others(), 0);
	}
}
END_TEST

/* a file everyone may read loses nothing with its group: its group's
 * members read the new file as others.  A user who may not give the
 * group edits it (it was refused, "its group 4246 may read it", for a
 * file root made 0644 and gave the user: listgate.conf(5)'s nightly
 * tune); a file only the group and the owner may read is still refused
 * (set up as root, run as nobody; skipped unless root) */
START_TEST(group_readable_by_all_edited)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	const gid_t grp = 4246, nobody = 65534;
	const mode_t modes[3] = { 0644, 0444, 0640 };
	struct stat st;
	pid_t pid;
	int status, i;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(chown(dir, nobody, nobody), 0);
	for (i = 0; i < 3; i++) {
		put(before, sizeof(before) - 1, modes[i]);
		ck_assert_int_eq(chown(path, nobody, grp), 0);
		ck_assert_int_eq(chmod(path, modes[i]), 0);
		ck_assert((pid = fork()) >= 0);
		if (pid == 0) {
			char err[1024];
			int r;

			if (setgroups(0, NULL) < 0 || setgid(nobody) < 0 ||
			    setuid(nobody) < 0)
				_exit(2);
			r = cfgedit_keeps_group(path, err, sizeof(err));
			if (cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
			    err, sizeof(err)) == 0)
				_exit(r == 0 ? 0 : 3);
			_exit(r < 0 ? 1 : 4);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), i < 2 ? 0 : 1);
		ck_assert_int_eq(stat(path, &st), 0);
		if (i < 2) {
			ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = "
			    "0.3\nham_cutoff = 0.05\n");
			ck_assert_uint_eq(st.st_gid, nobody);
		} else {
			ck_assert_str_eq(get(NULL), before);
			ck_assert_uint_eq(st.st_gid, grp);
		}
		ck_assert_uint_eq(st.st_mode & 07777, modes[i]);
		ck_assert_int_eq(others(), 0);
	}
}
END_TEST

/* the file's ACL and its other extended attributes stay: a reader
 * given the file by an ACL entry (the filter's user, uid 4245 here)
 * read it no more after an edit, the new file having none (skipped
 * where the file system has no ACLs) */
START_TEST(acl_kept)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	/* version 2; user::rw- user:4245:r-- group::r-- mask::r-- other::--- */
	static const unsigned char acl[] = {
		2, 0, 0, 0,
		0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		0x02, 0, 4, 0, 0x95, 0x10, 0, 0,
		0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	unsigned char got[256];
	char err[512];
	struct stat st;
	ssize_t n;

	put(before, sizeof(before) - 1, 0640);
	if (setxattr(path, "system.posix_acl_access", acl, sizeof(acl),
	    0) < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
		return;
	ck_assert_int_eq(getxattr(path, "system.posix_acl_access", got,
	    sizeof(got)), (ssize_t)sizeof(acl));
	ck_assert_int_eq(setxattr(path, "user.listgate", "x", 1, 0), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
	    err, sizeof(err)), 0);
	ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = 0.3\n"
	    "ham_cutoff = 0.05\n");
	n = getxattr(path, "system.posix_acl_access", got, sizeof(got));
	ck_assert_int_eq(n, (ssize_t)sizeof(acl));
	ck_assert(memcmp(got, acl, sizeof(acl)) == 0);
	ck_assert_int_eq(getxattr(path, "user.listgate", got, sizeof(got)), 1);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* refusals leave the file as it was and no temporary file behind */
START_TEST(refusals)
{
	static const char dup[] = "ham_cutoff = 0.3\nx = 1\nham_cutoff = 0.2\n";
	static const char nul[] = "ham_cutoff = 0.3\n\0x = 1\n";
	char err[512];
	size_t n;

	put(dup, sizeof(dup) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert(strstr(err, "dev.conf:3: ham_cutoff is set twice (first "
	    "on line 1)") != NULL);
	ck_assert_str_eq(get(NULL), dup);
	put(nul, sizeof(nul) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert(strstr(err, "NUL byte") != NULL);
	get(&n);
	ck_assert_uint_eq(n, sizeof(nul) - 1);
	ck_assert_int_eq(others(), 0);
	/* a file past CFGEDIT_MAX_BYTES (comments) loads as the list's
	 * configuration: it was refused as "not a configuration file" */
	{
		static char big[CFGEDIT_MAX_BYTES + 4096];
		size_t i;

		memcpy(big, "ham_cutoff = 0.3\n", 17);
		for (i = 17; i + 1 < sizeof(big); i++)
			big[i] = i % 64 == 0 ? '\n' : i % 64 == 1 ? '#' : 'x';
		big[sizeof(big) - 1] = '\n';
		put(big, sizeof(big), 0644);
		ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL,
		    NULL, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "dev.conf: larger than the 1048576 "
		    "bytes edited here (or out of memory): nothing written; "
		    "set the keys in it by hand") != NULL, "%s", err);
		ck_assert_msg(strstr(err, "not a configuration file") == NULL,
		    "%s", err);
		ck_assert_int_eq(others(), 0);
	}
}
END_TEST

static int
check_fails(void *ctx, const char *p, char *err, size_t errsz)
{
	int *called = ctx;
	struct stat st;

	/* it sees the new file, complete, beside the old one */
	*called = stat(p, &st) == 0 && st.st_size > 0 &&
	    strcmp(p, path) != 0;
	snprintf(err, errsz, "%s: would not load", p);
	return -1;
}

START_TEST(check_refuses)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	char err[512];
	int called = 0;

	put(before, sizeof(before) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", check_fails,
	    &called, NULL, err, sizeof(err)), -1);
	ck_assert_int_eq(called, 1);
	ck_assert(strstr(err, "would not load") != NULL);
	ck_assert_str_eq(get(NULL), before);
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* a temporary file an edit of our pid left (killed between creating it
 * and the rename) does not refuse the next edit: a container's tune runs
 * under the same pid every night, and every --apply failed with "File
 * exists" from then on */
START_TEST(stale_temporary_file)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	char tmp[400];
	pid_t pid;
	int status, fd;

	put(before, sizeof(before) - 1, 0644);
	ck_assert((pid = fork()) >= 0);
	if (pid == 0) {
		char err[512];

		snprintf(tmp, sizeof(tmp), "%s.tune-%ld.tmp", path,
		    (long)getpid());
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
		    write(fd, "half", 4) != 4)
			_exit(2);
		close(fd);
		_exit(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL, err,
		    sizeof(err)) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = 0.3\n"
	    "ham_cutoff = 0.05\n");
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* a check that takes its time while someone edits the file by hand */
static int
check_meanwhile(void *ctx, const char *p, char *err, size_t errsz)
{
	static const char edited[] = "ham_cutoff = 0.3\nmoderators = a@b.c\n";
	int fd;

	(void)ctx;
	(void)p;
	(void)err;
	(void)errsz;
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert(fd >= 0);
	ck_assert(write(fd, edited, sizeof(edited) - 1) ==
	    (ssize_t)sizeof(edited) - 1);
	close(fd);
	return 0;
}

/* an edit made while tune edits the file is not lost */
START_TEST(edit_meanwhile_kept)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	char err[512];

	put(before, sizeof(before) - 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", check_meanwhile,
	    NULL, NULL, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "changed while it was being edited") !=
	    NULL, "%s", err);
	ck_assert_str_eq(get(NULL), "ham_cutoff = 0.3\nmoderators = a@b.c\n");
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* one of two edits at once: started when the barrier's pipe closes;
 * exits 0 applied, 1 refused */
static void
edit_at_once(int barrier, const struct cfgedit_change *c)
{
	char err[512], b;

	while (read(barrier, &b, 1) < 0 && errno == EINTR)
		;
	_exit(cfgedit_apply(path, c, 1, "S", NULL, NULL, NULL, err,
	    sizeof(err)) == 0 ? 0 : 1);
}

/* two edits at once (two tunes of the file): both are applied, one
 * after the other; never both said done with one of them lost (the
 * check before the rename cannot close the gap between the two) */
START_TEST(edits_at_once_both_kept)
{
	static const struct cfgedit_change a[] = { { "ham_cutoff", "0.05",
	    "0.3" } }, b[] = { { "robs", "0.1", "0.3" } };
	const char *got;
	pid_t p1, p2;
	int i, s1, s2, pfd[2], refused = 0;

	for (i = 0; i < 300; i++) {
		put("x = 1\n", 6, 0644);
		ck_assert_int_eq(pipe(pfd), 0);
		ck_assert((p1 = fork()) >= 0);
		if (p1 == 0) {
			close(pfd[1]);
			edit_at_once(pfd[0], a);
		}
		ck_assert((p2 = fork()) >= 0);
		if (p2 == 0) {
			close(pfd[1]);
			edit_at_once(pfd[0], b);
		}
		close(pfd[0]);
		close(pfd[1]);
		ck_assert_int_eq(waitpid(p1, &s1, 0), p1);
		ck_assert_int_eq(waitpid(p2, &s2, 0), p2);
		ck_assert(WIFEXITED(s1) && WIFEXITED(s2));
		got = get(NULL);
		if (WEXITSTATUS(s1) == 0 && WEXITSTATUS(s2) == 0)
			ck_assert_msg(strstr(got, "\nham_cutoff = 0.05\n") !=
			    NULL && strstr(got, "\nrobs = 0.1\n") != NULL,
			    "round %d: both applied, one lost:\n%s", i, got);
		else
			refused++;
		ck_assert_int_eq(others(), 0);
	}
	ck_assert_int_eq(refused, 0);
}
END_TEST

/* the longest line of b as the loader counts it (a CR included) */
static size_t
longest(const char *b)
{
	size_t m = 0, n;
	const char *nl;

	for (; *b != '\0'; b = nl + 1) {
		if ((nl = strchr(b, '\n')) == NULL)
			nl = b + strlen(b);
		n = (size_t)(nl - b);
		if (n > m)
			m = n;
		if (*nl == '\0')
			break;
	}
	return m;
}

/* an old line near the loader's line limit: its comment is kept within
 * the limit (the old setting without its own comment), so the edited
 * file loads */
START_TEST(long_line_comment_shortened)
{
	static char before[LG_MAX_CONF_LINE + 2];
	static const char after[] =
	    "# 2026-12-05 listgate tune: was: ham_cutoff = 0.3\n"
	    "ham_cutoff = 0.05\n";
	static const char head[] = "ham_cutoff = 0.3   # ";
	char err[512];
	const char *b;

	memset(before, 'x', LG_MAX_CONF_LINE);
	memcpy(before, head, sizeof(head) - 1);
	before[LG_MAX_CONF_LINE] = '\n';	/* a line of the most it may be */
	put(before, LG_MAX_CONF_LINE + 1, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two, 1,
	    "2026-12-05 listgate tune", NULL, NULL, NULL, err, sizeof(err)),
	    0);
	b = get(NULL);
	ck_assert_uint_le(longest(b), LG_MAX_CONF_LINE);
	ck_assert_str_eq(b, after);
}
END_TEST

/* an old value itself too long for the comment is cut at a character
 * and marked; under CRLF the CR counts */
START_TEST(long_value_comment_cut)
{
	static char before[LG_MAX_CONF_LINE + 2];
	static const char head[] = "robs = 12";
	static const char was[] = "# 2026-12-05 listgate tune: was: robs = 12";
	char err[512];
	const char *b, *nl;
	size_t i;

	/* "robs = 12" and two-byte characters up to the limit, CR
	 * included: the cut falls inside a character, and backs off */
	memcpy(before, head, sizeof(head) - 1);
	for (i = sizeof(head) - 1; i + 2 <= LG_MAX_CONF_LINE - 1; i += 2)
		memcpy(before + i, "\xc3\xa9", 2);		/* e acute */
	memcpy(before + i, "\r\n", 2);
	put(before, i + 2, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two + 1, 1,
	    "2026-12-05 listgate tune", NULL, NULL, NULL, err, sizeof(err)),
	    0);
	b = get(NULL);
	ck_assert_uint_le(longest(b), LG_MAX_CONF_LINE);
	ck_assert(strncmp(b, was, sizeof(was) - 1) == 0);
	nl = strchr(b, '\n');
	ck_assert(nl != NULL);
	ck_assert_msg(memcmp(nl - 5, " ...\r", 5) == 0 &&
	    (unsigned char)nl[-6] == 0xa9, "not cut at a character, marked");
	ck_assert_str_eq(nl + 1, "robs = 0.1\r\n");
}
END_TEST

/* an edit that cannot fit the limit at all (the indentation alone
 * nearly fills it) is refused, naming the user's file and line */
START_TEST(long_indent_refused)
{
	static char before[LG_MAX_CONF_LINE + 16];
	char err[512];
	size_t n = LG_MAX_CONF_LINE - 20;

	memcpy(before, "# x\n", 4);
	memset(before + 4, ' ', n);
	memcpy(before + 4 + n, "robs = 1\n", 9);
	put(before, 4 + n + 9, 0644);
	ck_assert_int_eq(cfgedit_apply(path, two + 1, 1,
	    "2026-12-05 listgate tune", NULL, NULL, NULL, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "/dev.conf:2: robs: the edited line would "
	    "pass 16384 bytes") != NULL, "%s", err);
	ck_assert_int_eq(others(), 0);
}
END_TEST

/* lists/L.conf as a symbolic link: the link stays, the file it points
 * to gets the change, its mode kept, no temporary file left */
START_TEST(symlink_target_edited)
{
	static const char before[] = "ham_cutoff = 0.3\n";
	char err[512], real[600], l[600];
	struct stat st;
	ssize_t n;

	snprintf(real, sizeof(real), "%s/real.conf", dir);
	ck_assert_int_eq(symlink("real.conf", path), 0);
	put(before, sizeof(before) - 1, 0640);	/* through the link */
	ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert_msg(S_ISLNK(st.st_mode), "dev.conf is no longer a link");
	n = readlink(path, l, sizeof(l) - 1);
	ck_assert(n > 0);
	l[n] = 0;
	ck_assert_str_eq(l, "real.conf");
	ck_assert_str_eq(get(NULL), "# S: was: ham_cutoff = 0.3\n"
	    "ham_cutoff = 0.05\n");
	ck_assert_int_eq(stat(real, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(others(), 1);		/* real.conf only */
}
END_TEST

/* a link to nothing is refused, not replaced by a file */
START_TEST(dangling_symlink_refused)
{
	char err[512];
	struct stat st;

	ck_assert_int_eq(symlink("gone.conf", path), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 1, "S", NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "dev.conf: a symbolic link that cannot be "
	    "followed") != NULL, "%s", err);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(others(), 0);
}
END_TEST

START_TEST(not_a_file)
{
	char err[512];

	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert(strstr(err, "not a regular file") != NULL);
	rmdir(path);
	/* a FIFO: refused at once, not waited on for a writer */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(cfgedit_apply(path, two, 2, "S", NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert(strstr(err, "not a regular file") != NULL);
	ck_assert_int_eq(others(), 0);
	unlink(path);
}
END_TEST

static Suite *
cfgedit_suite(void)
{
	Suite *s = suite_create("cfgedit");
	TCase *tc = tcase_create("edit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, only_the_keys);
	tcase_add_test(tc, appended_and_no_final_newline);
	tcase_add_test(tc, crlf);
	tcase_add_test(tc, same_value_changes_nothing);
	tcase_add_test(tc, missing_file_created);
	tcase_add_test(tc, missing_file_read_by_others_where_they_enter);
	tcase_add_test(tc, group_kept_without_owner);
	tcase_add_test(tc, group_lost_refused);
	tcase_add_test(tc, group_readable_by_all_edited);
	tcase_add_test(tc, acl_kept);
	tcase_add_test(tc, missing_file_gets_dir_group);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, check_refuses);
	tcase_add_test(tc, not_a_file);
	tcase_add_test(tc, symlink_target_edited);
	tcase_add_test(tc, long_line_comment_shortened);
	tcase_add_test(tc, long_value_comment_cut);
	tcase_add_test(tc, long_indent_refused);
	tcase_add_test(tc, dangling_symlink_refused);
	tcase_add_test(tc, edit_meanwhile_kept);
	tcase_add_test(tc, stale_temporary_file);
	tcase_add_test(tc, edits_at_once_both_kept);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cfgedit_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
