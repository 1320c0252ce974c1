/*
 * fs.h - small file-system helpers
 */
#ifndef LG_FS_H
#define LG_FS_H

#include <sys/types.h>

/* create directory dir and its missing parents with mode exactly,
 * whatever the umask (existing ones are left as they are): 0, or -1
 * with errno (EEXIST when a directory it made was replaced, by a link
 * or another user's directory, before its mode was set: nothing is
 * changed through it) */
int fs_mkdir_p(const char *dir, mode_t mode);

/* read(2) from fd, through EINTR, and through EAGAIN by waiting for
 * input: a descriptor left non-blocking by whoever started us (the flag
 * is the shared open file's) reads as a blocking one.  What read
 * returns: bytes, 0 at the end, or -1 with errno */
ssize_t fs_read_wait(int fd, void *buf, size_t n);

/* 1 if the directory that holds path ("." for a bare name) belongs to
 * this process's effective user; 0 if not, or it cannot be looked at */
int fs_dir_owned(const char *path);

#endif
