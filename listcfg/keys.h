/*
 * keys.h - the keys of listgate.conf and lists/L.conf and their values
 *
 * Each function is a cfgfile_fn: it parses and checks one setting into
 * the struct listcfg_global or struct listcfg_list given as ctx, or
 * fails with a FILE:LINE error naming the key, the value and what is
 * allowed.
 */
#ifndef LG_KEYS_H
#define LG_KEYS_H

#include "listcfg/cfgfile.h"

/* one key of listgate.conf (ctx: struct listcfg_global) */
int keys_global(void *ctx, struct cfgfile *cf, const char *key,
    const char *raw);
/* one key of lists/L.conf (ctx: struct listcfg_list) */
int keys_list(void *ctx, struct cfgfile *cf, const char *key,
    const char *raw);

#endif
