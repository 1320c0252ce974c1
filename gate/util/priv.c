/*
 * priv.c - leave root for good: become the configured user and group
 *
 * Trusts the names it is given (they come from a configuration file that
 * root owns) only as far as the system's user database knows them.
 * Never exits; -1 with a message on every failure, after which the
 * caller must not go on as root.
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/util/priv.h"

int
priv_is_root(void)
{
	return getuid() == 0 || geteuid() == 0;
}

int
priv_become(const char *user, const char *group, char *err, size_t errsz)
{
	struct passwd *pw;
	struct group *gr;
	uid_t uid;
	gid_t gid;

	if (user == NULL || *user == '\0') {
		snprintf(err, errsz, "no user to become");
		return -1;
	}
	errno = 0;
	if ((pw = getpwnam(user)) == NULL) {
		snprintf(err, errsz, "user `%s': %s", user, errno != 0 ?
		    strerror(errno) : "no such user");
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errsz, "user `%s' is root (uid 0): name an "
		    "unprivileged user", user);
		return -1;
	}
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	if (group != NULL) {
		errno = 0;
		if ((gr = getgrnam(group)) == NULL) {
			snprintf(err, errsz, "group `%s': %s", group,
			    errno != 0 ? strerror(errno) : "no such group");
			return -1;
		}
		gid = gr->gr_gid;
	}
	if (gid == 0) {
		snprintf(err, errsz, "group %s is root's (gid 0): name an "
		    "unprivileged group", group != NULL ? group : "of the user");
		return -1;
	}
	if (setenv("HOME", pw->pw_dir != NULL ? pw->pw_dir : "/", 1) < 0) {
		snprintf(err, errsz, "setenv HOME: %s", strerror(errno));
		return -1;
	}
	/* groups first: once the uid is gone, they cannot change */
	if (initgroups(pw->pw_name, gid) < 0) {
		snprintf(err, errsz, "initgroups %s: %s", user,
		    strerror(errno));
		return -1;
	}
	if (setresgid(gid, gid, gid) < 0) {
		snprintf(err, errsz, "setresgid %lu: %s", (unsigned long)gid,
		    strerror(errno));
		return -1;
	}
	if (setresuid(uid, uid, uid) < 0) {
		snprintf(err, errsz, "setresuid %lu: %s", (unsigned long)uid,
		    strerror(errno));
		return -1;
	}
	/* for good: root must be out of reach */
	if (getuid() != uid || geteuid() != uid || getgid() != gid ||
	    getegid() != gid || setuid(0) == 0 || seteuid(0) == 0) {
		snprintf(err, errsz, "could not leave root for good");
		return -1;
	}
	return 0;
}
