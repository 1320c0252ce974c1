/*
 * listcfg.c - load listgate.conf and lists/L.conf: where the files are,
 * the defaults, list names, cross-checks between keys
 *
 * A list name is checked before any path is built from it.  The files
 * are read by listcfg/cfgfile.c, each key parsed by listcfg/keys.c.
 * Never exits; -1 with a FILE:LINE message on every failure.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/util/xalloc.h"
#include "listcfg/cfgfile.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"

#ifndef LG_SYSCONFDIR
#define LG_SYSCONFDIR "/etc/listgate"
#endif

/* where one file's settings go */
struct target {
	enum keys_scope scope;
	void *obj;		/* struct listcfg_global or listcfg_list */
	const char *dir;	/* the configuration directory */
};

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

const char *
listcfg_dir_default(void)
{
	return LG_SYSCONFDIR;
}

int
listcfg_is_moderator(const struct listcfg_list *l, const char *a)
{
	size_t i;

	for (i = 0; l->moderators != NULL && l->moderators[i] != NULL; i++)
		if (strcasecmp(l->moderators[i], a) == 0)
			return 1;
	return 0;
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

/* one setting: by its row in the table; an unknown key is an error */
static int
set_key(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
{
	struct target *t = ctx;
	const struct keys_row *k = keys_find(t->scope, key);

	if (k != NULL)
		return keys_set(k, cf, raw, t->obj, t->dir);
	if (keys_find(t->scope == KEYS_GLOBAL ? KEYS_LIST : KEYS_GLOBAL, key))
		return cfgfile_error(cf, "unknown key `%s' (it belongs in %s)",
		    key, t->scope == KEYS_GLOBAL ? "lists/L.conf" :
		    "listgate.conf");
	return cfgfile_error(cf, "unknown key `%s'", key);
}

/* the configuration directory dir, checked (a directory we may read,
 * that no other user can change), as an absolute path in rdir
 * (PATH_MAX bytes): 0, or -1 with err */
static int
config_dir(const char *dir, char *rdir, char *err, size_t errsz)
{
	struct stat st;

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
	if (cfgfile_trusted(dir, &st, err, errsz) < 0)
		return -1;
	/* absolute, so tokens_dir is absolute too */
	if (realpath(dir, rdir) == NULL) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/* the paths in it (tokens_dir's default, relative values) must
	 * stay values (LG_MAX_CONF_VALUE), and `config check' names it on
	 * a comment line */
	if (strlen(rdir) > LG_MAX_CONF_VALUE - 256) {
		snprintf(err, errsz, "%.200s...: configuration directory: its "
		    "path is longer than %u bytes", rdir,
		    (unsigned)LG_MAX_CONF_VALUE - 256);
		return -1;
	}
	if (strpbrk(rdir, "\r\n") != NULL) {
		snprintf(err, errsz, "configuration directory: a line break in "
		    "its path");
		return -1;
	}
	return 0;
}

int
listcfg_dir_check(const char *dir, char *err, size_t errsz)
{
	char rdir[PATH_MAX];

	return config_dir(dir, rdir, err, errsz);
}

/* a user or group name: [A-Za-z0-9_][A-Za-z0-9_.-]*, at most 32 bytes,
 * perhaps ending in '$' (as useradd allows) */
static int
account_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32 || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '.' || s[i] == '-' || (s[i] == '$' && i == n - 1)))
			return 0;
	return 1;
}

/* user and group of g, when set, must be account names: 0, or -1 after
 * cfgfile_error on the line that set the bad one */
static int
check_accounts(struct cfgfile *cf, const struct listcfg_global *g)
{
	if (g->user != NULL && !account_name_ok(g->user)) {
		cf->line = cfgfile_seen(cf, "user");
		return cfgfile_error(cf, "user: `%s' is not a user name",
		    g->user);
	}
	if (g->group != NULL && !account_name_ok(g->group)) {
		cf->line = cfgfile_seen(cf, "group");
		return cfgfile_error(cf, "group: `%s' is not a group name",
		    g->group);
	}
	return 0;
}

int
listcfg_load_global(const char *dir, struct listcfg_global *g, char *err,
    size_t errsz)
{
	struct cfgfile cf;
	struct target t;
	char *path = NULL;
	char rdir[PATH_MAX];
	int missing;

	memset(g, 0, sizeof(*g));
	if (config_dir(dir, rdir, err, errsz) < 0)
		return -1;
	if ((g->dir = xstrdup(rdir)) == NULL ||
	    keys_defaults(KEYS_GLOBAL, g, NULL, rdir) < 0 ||
	    (path = cfgfile_join(rdir, "listgate.conf")) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	t.scope = KEYS_GLOBAL;
	t.obj = g;
	t.dir = g->dir;
	if (cfgfile_read(&cf, path, err, errsz, set_key, &t, &missing) < 0 ||
	    check_accounts(&cf, g) < 0)
		goto fail;
	xfree(path);
	return 0;
fail:
	xfree(path);
	listcfg_free_global(g);
	return -1;
}

/* listcfg_load_owner's callback: user, group and mta only */
static int
set_owner_key(void *ctx, struct cfgfile *cf, const char *key,
    const char *raw)
{
	if (strcmp(key, "user") != 0 && strcmp(key, "group") != 0 &&
	    strcmp(key, "mta") != 0)
		return 0;
	return set_key(ctx, cf, key, raw);
}

int
listcfg_load_owner(const char *dir, char **user_r, char **group_r,
    int *mta_r, char *err, size_t errsz)
{
	struct listcfg_global g;
	struct cfgfile cf;
	struct target t;
	char rdir[PATH_MAX];
	char *path = NULL;
	int missing, rc = -1;

	*user_r = *group_r = NULL;
	*mta_r = -1;
	memset(&g, 0, sizeof(g));
	if (config_dir(dir, rdir, err, errsz) < 0)
		return -1;
	if (keys_defaults(KEYS_GLOBAL, &g, NULL, rdir) < 0 ||
	    (path = cfgfile_join(rdir, "listgate.conf")) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	t.scope = KEYS_GLOBAL;
	t.obj = &g;
	t.dir = rdir;
	if (cfgfile_read(&cf, path, err, errsz, set_owner_key, &t,
	    &missing) < 0 || check_accounts(&cf, &g) < 0)
		goto out;
	/* not set, it is the default: what filter and moderate would take
	 * had they not been refused */
	if (!missing)
		*mta_r = g.mta;
	*user_r = g.user;
	*group_r = g.group;
	g.user = g.group = NULL;
	rc = 0;
out:
	xfree(path);
	keys_free(KEYS_GLOBAL, &g);
	return rc;
}

void
listcfg_free_global(struct listcfg_global *g)
{
	keys_free(KEYS_GLOBAL, g);
	xfree(g->dir);
	g->dir = NULL;
}

/* cfgfile_fn for listcfg_key_line: cfgfile_read remembers each key's line */
static int
any_key(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
{
	(void)ctx;
	(void)cf;
	(void)key;
	(void)raw;
	return 0;
}

unsigned
listcfg_key_line(const char *path, const char *key)
{
	struct cfgfile cf;
	char err[512];
	int missing = 0;

	if (cfgfile_read(&cf, path, err, sizeof(err), any_key, NULL,
	    &missing) < 0 || missing)
		return 0;
	return cfgfile_seen(&cf, key);
}

int
listcfg_list_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz)
{
	int n;

	if (!listcfg_name_ok(name) || g->dir == NULL)
		return -1;
	n = snprintf(out, outsz, "%s/lists/%s.conf", g->dir, name);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	return 0;
}

/* load list name's settings from the file at fpath (NULL: its own,
 * lists/NAME.conf) over the defaults */
/* a number as text that reads back as the same double: two cutoffs
 * that differ in the 7th digit are not both "1" */
static const char *
num(char *s, size_t n, double d)
{
	snprintf(s, n, "%.15g", d);
	if (strtod(s, NULL) != d)
		snprintf(s, n, "%.17g", d);
	return s;
}

static int
load_list(const struct listcfg_global *g, const char *name,
    const char *fpath, struct listcfg_list *l, char *err, size_t errsz)
{
	struct cfgfile cf;
	struct target t;
	struct stat st;
	char *ldir = NULL, *path = NULL;
	char file[LG_MAX_LIST_NAME + sizeof(".conf")], a[32], b[32];
	unsigned lh, ls, ld;
	int missing;

	memset(l, 0, sizeof(*l));
	if (!listcfg_name_ok(name)) {
		snprintf(err, errsz, "bad list name (want [a-z0-9][a-z0-9._-]*, "
		    "at most %u bytes, no \"..\")", (unsigned)LG_MAX_LIST_NAME);
		return -1;
	}
	memcpy(l->name, name, strlen(name) + 1);
	snprintf(file, sizeof(file), "%s.conf", name);
	if (keys_defaults(KEYS_LIST, l, g, g->dir) < 0 ||
	    (ldir = cfgfile_join(g->dir, "lists")) == NULL ||
	    (path = fpath != NULL ? xstrdup(fpath) : cfgfile_join(ldir,
	    file)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	t.scope = KEYS_LIST;
	t.obj = l;
	t.dir = g->dir;
	if (stat(ldir, &st) == 0 && cfgfile_trusted(ldir, &st, err,
	    errsz) < 0)
		goto fail;
	if (cfgfile_read(&cf, path, err, errsz, set_key, &t, &missing) < 0)
		goto fail;
	l->has_file = !missing;
	/* cross-checks point at the later of the lines involved */
	lh = cfgfile_seen(&cf, "ham_cutoff");
	ls = cfgfile_seen(&cf, "spam_cutoff");
	ld = cfgfile_seen(&cf, "discard_cutoff");
	if (l->ham_cutoff > l->spam_cutoff) {
		cf.line = lh > ls ? lh : ls;
		cfgfile_error(&cf, "ham_cutoff %s is above spam_cutoff %s",
		    num(a, sizeof(a), l->ham_cutoff),
		    num(b, sizeof(b), l->spam_cutoff));
		goto fail;
	}
	if (l->discard_cutoff <= 1 && l->discard_cutoff < l->spam_cutoff) {
		cf.line = ld > ls ? ld : ls;
		cfgfile_error(&cf, "discard_cutoff %s is below spam_cutoff %s",
		    num(a, sizeof(a), l->discard_cutoff),
		    num(b, sizeof(b), l->spam_cutoff));
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

int
listcfg_load_list(const struct listcfg_global *g, const char *name,
    struct listcfg_list *l, char *err, size_t errsz)
{
	return load_list(g, name, NULL, l, err, errsz);
}

int
listcfg_check_list_file(const struct listcfg_global *g, const char *name,
    const char *path, char *err, size_t errsz)
{
	struct listcfg_list l;

	if (load_list(g, name, path, &l, err, errsz) < 0)
		return -1;
	listcfg_free_list(&l);
	return 0;
}

void
listcfg_free_list(struct listcfg_list *l)
{
	keys_free(KEYS_LIST, l);
}

int
listcfg_passcount_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz)
{
	int n;

	if (!listcfg_name_ok(name) || g->tokens_dir == NULL)
		return -1;
	n = snprintf(out, outsz, "%s/%s.passed", g->tokens_dir, name);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	return 0;
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

/* qsort: by name */
static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
listcfg_names(const char *dir, char ***names_r, size_t *n_r, char *err,
    size_t errsz)
{
	char *path, **names = NULL, **nn, name[LG_MAX_LIST_NAME + 1];
	struct dirent *de;
	DIR *d;
	size_t n = 0, cap = 0, len;

	*names_r = NULL;
	*n_r = 0;
	if ((path = cfgfile_join(dir, "lists")) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if ((d = opendir(path)) == NULL) {
		if (errno == ENOENT) {
			xfree(path);
			return 0;
		}
		snprintf(err, errsz, "%.900s: %s", path, strerror(errno));
		xfree(path);
		return -1;
	}
	xfree(path);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 5 || len - 5 > LG_MAX_LIST_NAME ||
		    strcmp(de->d_name + len - 5, ".conf") != 0)
			continue;
		memcpy(name, de->d_name, len - 5);
		name[len - 5] = '\0';
		if (!listcfg_name_ok(name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nn = xrealloc(names, cap * sizeof(*names))) ==
			    NULL)
				goto nomem;
			names = nn;
		}
		if ((names[n] = xstrdup(name)) == NULL)
			goto nomem;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	*names_r = names;
	*n_r = n;
	return 0;
nomem:
	closedir(d);
	while (n > 0)
		xfree(names[--n]);
	xfree(names);
	snprintf(err, errsz, "out of memory");
	return -1;
}
