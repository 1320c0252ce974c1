/*
 * listcfg.c - load listgate.conf and lists/L.conf: where the files are,
 * the defaults, list names, cross-checks between keys
 *
 * A list name is checked before any path is built from it.  The files
 * are read by listcfg/cfgfile.c, each key parsed by listcfg/keys.c.
 * Never exits; -1 with a FILE:LINE message on every failure.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "gate/util/xalloc.h"
#include "listcfg/cfgfile.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

#ifndef LG_SYSCONFDIR
#define LG_SYSCONFDIR "/etc/listgate"
#endif


const char *
listcfg_dir(const char *opt)
{
	const char *e;

	if (opt != NULL && *opt != '\0')
		return opt;
	if ((e = getenv("LISTGATE_CONFIG")) != NULL && *e != '\0')
		return e;
	return LG_SYSCONFDIR;
}

int
listcfg_name_ok(const char *name)
{
	size_t i;

	if (name == NULL || name[0] == '\0')
		return 0;
	if (!((name[0] >= 'a' && name[0] <= 'z') ||
	    (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		if (i >= LG_MAX_LIST_NAME)
			return 0;
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '.' ||
		    name[i] == '_' || name[i] == '-'))
			return 0;
		if (name[i] == '.' && name[i + 1] == '.')
			return 0;
	}
	return 1;
}


int
listcfg_load_global(const char *dir, struct listcfg_global *g, char *err,
    size_t errsz)
{
	struct cfgfile cf;
	struct stat st;
	char *path = NULL;
	char rdir[PATH_MAX];
	int missing;

	memset(g, 0, sizeof(*g));
	g->log_facility = LOG_MAIL;
	g->mta = LISTCFG_MTA_QMAIL;
	g->lock_wait_ms = LG_DEFAULT_LOCK_WAIT_MS;
	g->timeout_s = LG_DEFAULT_TIMEOUT_S;
	if (dir == NULL || *dir == '\0') {
		snprintf(err, errsz, "no configuration directory");
		return -1;
	}
	if (stat(dir, &st) < 0) {
		snprintf(err, errsz, "%s: configuration directory: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errsz, "%s: configuration directory: not a "
		    "directory", dir);
		return -1;
	}
	if (access(dir, R_OK | X_OK) < 0) {
		snprintf(err, errsz, "%s: configuration directory: %s", dir,
		    strerror(errno));
		return -1;
	}
	/* absolute, so tokens_dir is absolute too */
	if (realpath(dir, rdir) == NULL) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if ((g->dir = xstrdup(rdir)) == NULL ||
	    (g->tokens_dir = cfgfile_join(rdir, "tokens")) == NULL ||
	    (path = cfgfile_join(rdir, "listgate.conf")) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	if (cfgfile_read(&cf, path, err, errsz, keys_global, g, &missing) < 0)
		goto fail;
	xfree(path);
	return 0;
fail:
	xfree(path);
	listcfg_free_global(g);
	return -1;
}

void
listcfg_free_global(struct listcfg_global *g)
{
	xfree(g->dir);
	xfree(g->tokens_dir);
	xfree(g->conninfo);
	g->dir = g->tokens_dir = g->conninfo = NULL;
}


int
listcfg_load_list(const struct listcfg_global *g, const char *name,
    struct listcfg_list *l, char *err, size_t errsz)
{
	struct cfgfile cf;
	char *ldir = NULL, *path = NULL;
	char file[LG_MAX_LIST_NAME + sizeof(".conf")];
	unsigned lh, ls, ld;
	int missing;

	memset(l, 0, sizeof(*l));
	l->ham_cutoff = LG_DEFAULT_HAM_CUTOFF;
	l->spam_cutoff = LG_DEFAULT_SPAM_CUTOFF;
	l->discard_cutoff = LG_DISCARD_OFF;
	l->on_error = ON_ERROR_DEFER;
	l->max_scan_bytes = LG_MAX_SCAN_BYTES;
	l->max_post_bytes = LG_MAX_POST_BYTES;
	l->hold_expiry_days = LG_DEFAULT_HOLD_EXPIRY_DAYS;
	l->timeout_s = g->timeout_s;
	l->robs = LG_DEFAULT_ROBS;
	l->robx = LG_DEFAULT_ROBX;
	l->min_dev = LG_DEFAULT_MIN_DEV;
	l->max_tokens = LG_DEFAULT_MAX_TOKENS;
	if (!listcfg_name_ok(name)) {
		snprintf(err, errsz, "bad list name (want [a-z0-9][a-z0-9._-]*, "
		    "at most %u bytes, no \"..\")", (unsigned)LG_MAX_LIST_NAME);
		return -1;
	}
	memcpy(l->name, name, strlen(name) + 1);
	snprintf(file, sizeof(file), "%s.conf", name);
	if ((ldir = cfgfile_join(g->dir, "lists")) == NULL ||
	    (path = cfgfile_join(ldir, file)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	if (cfgfile_read(&cf, path, err, errsz, keys_list, l, &missing) < 0)
		goto fail;
	l->has_file = !missing;
	/* cross-checks point at the later of the lines involved */
	lh = cfgfile_seen(&cf, "ham_cutoff");
	ls = cfgfile_seen(&cf, "spam_cutoff");
	ld = cfgfile_seen(&cf, "discard_cutoff");
	if (l->ham_cutoff > l->spam_cutoff) {
		cf.line = lh > ls ? lh : ls;
		cfgfile_error(&cf, "ham_cutoff %g is above spam_cutoff %g",
		    l->ham_cutoff, l->spam_cutoff);
		goto fail;
	}
	if (l->discard_cutoff <= 1 && l->discard_cutoff < l->spam_cutoff) {
		cf.line = ld > ls ? ld : ls;
		cfgfile_error(&cf, "discard_cutoff %g is below spam_cutoff %g",
		    l->discard_cutoff, l->spam_cutoff);
		goto fail;
	}
	xfree(ldir);
	xfree(path);
	return 0;
fail:
	xfree(ldir);
	xfree(path);
	listcfg_free_list(l);
	return -1;
}

void
listcfg_free_list(struct listcfg_list *l)
{
	tmpl_free(l->deliver);
	tmpl_free(l->release);
	tmpl_free(l->moderators);
	l->deliver = l->release = l->moderators = NULL;
}

int
listcfg_tokens_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz)
{
	int n;

	if (!listcfg_name_ok(name) || g->tokens_dir == NULL)
		return -1;
	n = snprintf(out, outsz, "%s/%s.kch", g->tokens_dir, name);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	return 0;
}
