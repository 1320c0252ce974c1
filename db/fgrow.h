/*
 * fgrow.h - files grown with ftruncate get their blocks at once (see
 * fgrow.c: this object replaces the C library's ftruncate)
 */
#ifndef LG_FGROW_H
#define LG_FGROW_H

/* the errno (ENOSPC, EDQUOT, ...) of the calling thread's last growth
 * of a file that the disk refused since the last call, or 0; reading
 * it clears it */
int fgrow_last_error(void);

#endif
