/*
 * priv.h - leave root for good
 *
 * listgate refuses to work as root: started as root it becomes the
 * configured user (and group) before it opens anything but its global
 * configuration file.  Knows nothing of the configuration: the names
 * come from the caller.
 */
#ifndef LG_PRIV_H
#define LG_PRIV_H

#include <stddef.h>

/* 1 if the process runs as root (real or effective uid 0), else 0 */
int priv_is_root(void);

/*
 * Become user for good: its uid as real, effective and saved uid; as
 * gid the group's (group NULL: the user's login group), with the user's
 * supplementary groups; HOME set to the user's home.  A user that is
 * root itself (uid 0) is refused, and so is a switch that could be
 * undone.  0, or -1 with the reason in err (the process is then
 * unchanged, or its uid is not yet changed).
 */
int priv_become(const char *user, const char *group, char *err,
    size_t errsz);

#endif
