/*
 * fs.h - small file-system helpers
 */
#ifndef LG_FS_H
#define LG_FS_H

#include <sys/types.h>

/* create directory dir and its missing parents with mode exactly,
 * whatever the umask (existing ones are left as they are): 0, or -1
 * with errno */
int fs_mkdir_p(const char *dir, mode_t mode);

#endif
