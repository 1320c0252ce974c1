/*
 * mhdload.h - libmicrohttpd is loaded with dlopen (gate/web/mhdload.c)
 *
 * The MHD_* functions gate/web uses are defined in mhdload.c and load
 * the library on first use; MHD_start_daemon returns NULL when it cannot
 * be loaded, and this says why.
 */
#ifndef LG_MHDLOAD_H
#define LG_MHDLOAD_H

/* why libmicrohttpd could not be loaded, or "" when it was */
const char *mhdload_error(void);

#endif
