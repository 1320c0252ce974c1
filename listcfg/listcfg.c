/*
 * listcfg.c - load and validate listgate.conf and lists/L.conf
 *
 * The files are written by the administrator but parsed as untrusted
 * text: lines are bounded (LG_MAX_CONF_LINE), NUL bytes, unknown keys,
 * duplicates, bad numbers and unsafe templates are errors naming
 * FILE:LINE.  Envelope values reach a template only through
 * listcfg_expand, which substitutes them inside one argument and never
 * splits them.  Never exits; -1 with a message on every failure.
 *
 * Syntax, one setting per line:
 *	key = value		# a comment
 * A line whose first non-blank byte is '#' is a comment.  Elsewhere a
 * '#' starts a comment only at the start of a word (after whitespace)
 * and outside double quotes: "a#b" and "x #y" (quoted) keep it.  A value
 * may be double-quoted as a whole, with \" and \\ as the only escapes.
 * Templates (deliver, release) are split into words at whitespace;
 * double quotes group a word ("a b" is one word) and may be mixed with
 * unquoted text.  {sender}, {recipient} and {list} are placeholders,
 * "{{" is a literal '{'; any other '{' is an error.  The first word is
 * the program: an absolute path without placeholders.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "gate/util/buf.h"
#include "listcfg/listcfg.h"
#include "gate/util/log.h"
#include "gate/util/xalloc.h"

#ifndef LG_SYSCONFDIR
#define LG_SYSCONFDIR "/etc/listgate"
#endif

#define MAX_KEY		32	/* longer keys are unknown anyway */
#define MAX_SEEN	64	/* distinct keys remembered for duplicates */
#define MAX_LOCK_WAIT_MS 600000u
#define MAX_TIMEOUT_S	3600u
#define MAX_EXPIRY_DAYS	3650u
#define MAX_ROBS	1000.0

/* one file being read: where errors point */
struct cfgfile {
	const char *path;
	unsigned line;
	char *err;
	size_t errsz;
	struct {
		char key[MAX_KEY];
		unsigned line;
	} seen[MAX_SEEN];
	size_t nseen;
};

typedef int (*kv_fn)(void *ctx, struct cfgfile *cf, const char *key,
    const char *raw);

/* format "PATH:LINE: message" (or "PATH: message" for line 0); -1 */
static int __attribute__((format(printf, 2, 3)))
cf_error(struct cfgfile *cf, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cf->errsz == 0)
		return -1;
	if (cf->line)
		n = snprintf(cf->err, cf->errsz, "%s:%u: ", cf->path, cf->line);
	else
		n = snprintf(cf->err, cf->errsz, "%s: ", cf->path);
	if (n < 0 || (size_t)n >= cf->errsz)
		return -1;
	va_start(ap, fmt);
	vsnprintf(cf->err + n, cf->errsz - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* the line on which key was set in this file, 0 if not set */
static unsigned
cf_seen(const struct cfgfile *cf, const char *key)
{
	size_t i;

	for (i = 0; i < cf->nseen; i++)
		if (strcmp(cf->seen[i].key, key) == 0)
			return cf->seen[i].line;
	return 0;
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * Read path line by line and hand each `key = value` to fn; cf is set
 * up to point errors (into err) at path.  *missing_r is set (and 0
 * returned) when the file does not exist.
 */
static int
cf_read(struct cfgfile *cf, const char *path, char *err, size_t errsz,
    kv_fn fn, void *ctx, int *missing_r)
{
	char line[LG_MAX_CONF_LINE + 1];
	char key[MAX_KEY];
	struct stat st;
	FILE *fp;
	size_t n, k;
	char *p, *e;
	int c, eof = 0, rc = -1;
	unsigned first;

	memset(cf, 0, sizeof(*cf));
	cf->path = path;
	cf->err = err;
	cf->errsz = errsz;
	*missing_r = 0;
	if ((fp = fopen(cf->path, "r")) == NULL) {
		if (errno == ENOENT) {
			*missing_r = 1;
			return 0;
		}
		return cf_error(cf, "cannot open: %s", strerror(errno));
	}
	if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(fp);
		return cf_error(cf, "not a regular file");
	}
	while (!eof) {
		cf->line++;
		n = 0;
		for (;;) {
			c = getc(fp);
			if (c == EOF) {
				if (ferror(fp)) {
					cf_error(cf, "read error: %s",
					    strerror(errno));
					goto out;
				}
				eof = 1;
				break;
			}
			if (c == '\n')
				break;
			if (c == '\0') {
				cf_error(cf, "NUL byte in line");
				goto out;
			}
			if (n >= LG_MAX_CONF_LINE) {
				cf_error(cf, "line too long (more than %u bytes)",
				    (unsigned)LG_MAX_CONF_LINE);
				goto out;
			}
			line[n++] = (char)c;
		}
		line[n] = '\0';
		while (n > 0 && is_blank((unsigned char)line[n - 1]))
			line[--n] = '\0';
		for (p = line; is_blank((unsigned char)*p); p++)
			;
		if (*p == '\0' || *p == '#')
			continue;
		for (e = p; (*e >= 'a' && *e <= 'z') || (*e >= '0' &&
		    *e <= '9') || *e == '_'; e++)
			;
		k = (size_t)(e - p);
		while (is_blank((unsigned char)*e))
			e++;
		if (k == 0 || *e != '=') {
			cf_error(cf, "expected `key = value'");
			goto out;
		}
		if (k >= MAX_KEY) {
			cf_error(cf, "unknown key `%.*s'", (int)k, p);
			goto out;
		}
		memcpy(key, p, k);
		key[k] = '\0';
		for (e++; is_blank((unsigned char)*e); e++)
			;
		if ((first = cf_seen(cf, key)) != 0) {
			cf_error(cf, "duplicate key `%s' (first set on line %u)",
			    key, first);
			goto out;
		}
		if (*e == '\0' || *e == '#') {
			cf_error(cf, "%s: empty value", key);
			goto out;
		}
		if (fn(ctx, cf, key, e) < 0)
			goto out;
		if (cf->nseen < MAX_SEEN) {
			memcpy(cf->seen[cf->nseen].key, key, k + 1);
			cf->seen[cf->nseen++].line = cf->line;
		}
	}
	rc = 0;
out:
	fclose(fp);
	return rc;
}

/* copy one (possibly quoted) scalar value into out; trailing comment ok */
static int
scalar_value(struct cfgfile *cf, const char *key, const char *raw,
    char *out, size_t outsz)
{
	const char *p = raw;
	size_t n = 0;

	if (*p == '"') {
		for (p++; *p != '"'; p++) {
			if (*p == '\0')
				return cf_error(cf, "%s: unterminated quote",
				    key);
			if (*p == '\\') {
				p++;
				if (*p != '"' && *p != '\\')
					return cf_error(cf, "%s: bad escape "
					    "(only \\\" and \\\\)", key);
			}
			if (n + 1 >= outsz)
				return cf_error(cf, "%s: value too long", key);
			out[n++] = *p;
		}
		for (p++; is_blank((unsigned char)*p); p++)
			;
		if (*p != '\0' && *p != '#')
			return cf_error(cf, "%s: text after the quoted value",
			    key);
		out[n] = '\0';
		return 0;
	}
	for (; *p != '\0'; p++) {
		if (*p == '#' && n > 0 && is_blank((unsigned char)p[-1]))
			break;
		if (n + 1 >= outsz)
			return cf_error(cf, "%s: value too long", key);
		out[n++] = *p;
	}
	while (n > 0 && is_blank((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	if (n == 0)
		return cf_error(cf, "%s: empty value", key);
	return 0;
}

/* parse a finite number in [lo, hi] */
static int
parse_double(struct cfgfile *cf, const char *key, const char *raw,
    double lo, double hi, double *v_r)
{
	char val[LG_MAX_CONF_LINE + 1];
	char *end;
	double v;

	if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end != '\0' || errno != 0 || !isfinite(v) ||
	    strspn(val, "0123456789.-+eE") != strlen(val))
		return cf_error(cf, "%s: `%s' is not a number", key, val);
	if (v < lo || v > hi)
		return cf_error(cf, "%s: %s is out of range [%g, %g]", key,
		    val, lo, hi);
	*v_r = v;
	return 0;
}

/* parse a decimal unsigned number in [lo, hi] */
static int
parse_ulong(struct cfgfile *cf, const char *key, const char *raw,
    unsigned long lo, unsigned long hi, unsigned long *v_r)
{
	char val[LG_MAX_CONF_LINE + 1];
	char *end;
	unsigned long v;

	if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (!isdigit((unsigned char)val[0]) || *end != '\0')
		return cf_error(cf, "%s: `%s' is not a whole number", key,
		    val);
	if (errno == ERANGE || v < lo || v > hi)
		return cf_error(cf, "%s: %s is out of range [%lu, %lu]", key,
		    val, lo, hi);
	*v_r = v;
	return 0;
}

/* parse_ulong into an unsigned (hi must fit one) */
static int
parse_uint(struct cfgfile *cf, const char *key, const char *raw,
    unsigned lo, unsigned hi, unsigned *v_r)
{
	unsigned long u;

	if (parse_ulong(cf, key, raw, lo, hi, &u) < 0)
		return -1;
	*v_r = (unsigned)u;
	return 0;
}

void
listcfg_free_argv(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		xfree(argv[i]);
	xfree(argv);
}

/* the length of the placeholder at p ("{sender}" ...), 0 if none */
static size_t
placeholder(const char *p, const struct listcfg_vars *v, const char **val_r)
{
	static const char *const names[] = { "{sender}", "{recipient}",
	    "{list}" };
	size_t i, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (strncmp(p, names[i], n) != 0)
			continue;
		if (val_r != NULL && v != NULL)
			*val_r = i == 0 ? v->sender : i == 1 ? v->recipient :
			    v->list;
		return n;
	}
	return 0;
}

/* split a template into words, check placeholders and the program */
static int
parse_template(struct cfgfile *cf, const char *key, const char *raw,
    char ***argv_r)
{
	char **argv;
	struct buf w = BUF_INIT(LG_MAX_CONF_LINE);
	const char *p = raw, *q;
	size_t n = 0;
	int inword;

	if ((argv = xcalloc(LG_MAX_ARGV + 1, sizeof(*argv))) == NULL)
		return cf_error(cf, "out of memory");
	for (;;) {
		while (is_blank((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == LG_MAX_ARGV) {
			cf_error(cf, "%s: too many words (at most %u)", key,
			    (unsigned)LG_MAX_ARGV);
			goto fail;
		}
		buf_reset(&w);
		inword = 1;
		while (inword && *p != '\0') {
			if (is_blank((unsigned char)*p)) {
				inword = 0;
			} else if (*p == '"') {
				for (p++; *p != '"'; p++) {
					if (*p == '\0') {
						cf_error(cf, "%s: unterminated "
						    "quote", key);
						goto fail;
					}
					if (*p == '\\') {
						p++;
						if (*p != '"' && *p != '\\') {
							cf_error(cf, "%s: bad "
							    "escape (only \\\" "
							    "and \\\\)", key);
							goto fail;
						}
					}
					if (buf_addc(&w, *p) < 0)
						goto nomem;
				}
				p++;
			} else {
				if (buf_addc(&w, *p) < 0)
					goto nomem;
				p++;
			}
		}
		/* placeholders: known names and "{{" only */
		for (q = buf_str(&w); (q = strchr(q, '{')) != NULL; ) {
			size_t pl;

			if (q[1] == '{') {
				q += 2;
				continue;
			}
			if ((pl = placeholder(q, NULL, NULL)) == 0) {
				cf_error(cf, "%s: unknown placeholder `%.*s' "
				    "(known: {sender} {recipient} {list}; "
				    "{{ for a literal {)", key,
				    (int)strcspn(q + 1, "}") + 2, q);
				goto fail;
			}
			if (n == 0) {
				cf_error(cf, "%s: unsafe template: a "
				    "placeholder in the program name", key);
				goto fail;
			}
			q += pl;
		}
		if (n == 0 && w.len > 0 && w.data[0] != '/') {
			cf_error(cf, "%s: unsafe template: the program `%s' "
			    "must be an absolute path", key, buf_str(&w));
			goto fail;
		}
		if (n == 0 && w.len == 0) {
			cf_error(cf, "%s: unsafe template: empty program name",
			    key);
			goto fail;
		}
		if ((argv[n] = xstrdup(buf_str(&w))) == NULL)
			goto nomem;
		n++;
	}
	if (n == 0) {
		cf_error(cf, "%s: empty template", key);
		goto fail;
	}
	buf_free(&w);
	*argv_r = argv;
	return 0;
nomem:
	cf_error(cf, "%s: out of memory", key);
fail:
	buf_free(&w);
	listcfg_free_argv(argv);
	return -1;
}

/* a moderator address: printable, no blanks, one '@' with text on both
 * sides */
static int
address_ok(const char *a)
{
	const char *at = strchr(a, '@');
	const unsigned char *p;

	if (at == NULL || at == a || at[1] == '\0' || strchr(at + 1, '@'))
		return 0;
	for (p = (const unsigned char *)a; *p; p++)
		if (*p <= ' ' || *p == 0x7f || *p == ',' || *p == '"')
			return 0;
	return 1;
}

/* parse "a@b, c@d" */
static int
parse_moderators(struct cfgfile *cf, const char *key, const char *raw,
    char ***mods_r)
{
	char val[LG_MAX_CONF_LINE + 1];
	char **mods;
	char *p, *e, *s;
	size_t n = 0, cap;

	if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	cap = 1;
	for (p = val; *p; p++)
		if (*p == ',')
			cap++;
	if ((mods = xcalloc(cap + 1, sizeof(*mods))) == NULL)
		return cf_error(cf, "out of memory");
	for (s = val; s != NULL; s = e) {
		if ((e = strchr(s, ',')) != NULL)
			*e++ = '\0';
		while (is_blank((unsigned char)*s))
			s++;
		p = s + strlen(s);
		while (p > s && is_blank((unsigned char)p[-1]))
			*--p = '\0';
		if (!address_ok(s)) {
			cf_error(cf, "%s: `%s' is not an address", key, s);
			listcfg_free_argv(mods);
			return -1;
		}
		if ((mods[n++] = xstrdup(s)) == NULL) {
			listcfg_free_argv(mods);
			return cf_error(cf, "out of memory");
		}
	}
	*mods_r = mods;
	return 0;
}

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

/* join dir and name into a new string */
static char *
path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if ((p = xmalloc(dl + 1 + nl + 1)) == NULL)
		return NULL;
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

/* one key of listgate.conf */
static int
global_kv(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
{
	struct listcfg_global *g = ctx;
	char val[LG_MAX_CONF_LINE + 1];
	int fac;

	if (strcmp(key, "tokens_dir") == 0) {
		char *t;

		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		t = val[0] == '/' ? xstrdup(val) : path_join(g->dir, val);
		if (t == NULL)
			return cf_error(cf, "out of memory");
		xfree(g->tokens_dir);
		g->tokens_dir = t;
	} else if (strcmp(key, "database") == 0 ||
	    strcmp(key, "sync_database") == 0) {
		char **ci = key[0] == 'd' ? &g->conninfo : &g->sync_conninfo;

		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		xfree(*ci);
		if ((*ci = xstrdup(val)) == NULL)
			return cf_error(cf, "out of memory");
	} else if (strcmp(key, "log_facility") == 0) {
		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if ((fac = log_facility_by_name(val)) == -1)
			return cf_error(cf, "%s: unknown facility `%s' (mail, "
			    "user, daemon, local0..local7)", key, val);
		g->log_facility = fac;
	} else if (strcmp(key, "mta") == 0) {
		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if (mta_parse(val, &g->mta) < 0)
			return cf_error(cf, "%s: `%s' is neither qmail nor "
			    "postfix", key, val);
	} else if (strcmp(key, "lock_wait_ms") == 0) {
		if (parse_uint(cf, key, raw, 0, MAX_LOCK_WAIT_MS,
		    &g->lock_wait_ms) < 0)
			return -1;
	} else if (strcmp(key, "timeout") == 0) {
		if (parse_uint(cf, key, raw, 1, MAX_TIMEOUT_S,
		    &g->timeout_s) < 0)
			return -1;
	} else
		return cf_error(cf, "unknown key `%s'", key);
	return 0;
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
	g->mta = MTA_QMAIL;
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
	    (g->tokens_dir = path_join(rdir, "tokens")) == NULL ||
	    (path = path_join(rdir, "listgate.conf")) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	if (cf_read(&cf, path, err, errsz, global_kv, g, &missing) < 0)
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
	xfree(g->sync_conninfo);
	g->dir = g->tokens_dir = g->conninfo = g->sync_conninfo = NULL;
}

/* one key of lists/L.conf */
static int
list_kv(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
{
	struct listcfg_list *l = ctx;
	char val[LG_MAX_CONF_LINE + 1];
	unsigned long u;
	double d;

	if (strcmp(key, "ham_cutoff") == 0) {
		if (parse_double(cf, key, raw, 0, 1, &l->ham_cutoff) < 0)
			return -1;
	} else if (strcmp(key, "spam_cutoff") == 0) {
		if (parse_double(cf, key, raw, 0, 1, &l->spam_cutoff) < 0)
			return -1;
	} else if (strcmp(key, "discard_cutoff") == 0) {
		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if (strcmp(val, "off") == 0)
			l->discard_cutoff = LG_DISCARD_OFF;
		else if (parse_double(cf, key, raw, 0, 1,
		    &l->discard_cutoff) < 0)
			return -1;
	} else if (strcmp(key, "deliver") == 0 || strcmp(key, "release") == 0) {
		char ***t = key[0] == 'd' ? &l->deliver : &l->release;

		if (parse_template(cf, key, raw, t) < 0)
			return -1;
	} else if (strcmp(key, "moderators") == 0) {
		if (parse_moderators(cf, key, raw, &l->moderators) < 0)
			return -1;
	} else if (strcmp(key, "on_error") == 0) {
		if (scalar_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if (strcmp(val, "defer") == 0)
			l->on_error = ON_ERROR_DEFER;
		else if (strcmp(val, "pass") == 0)
			l->on_error = ON_ERROR_PASS;
		else
			return cf_error(cf, "%s: `%s' is neither defer nor "
			    "pass", key, val);
	} else if (strcmp(key, "max_scan_bytes") == 0) {
		if (parse_ulong(cf, key, raw, 1024, LG_MAX_SPOOL_MEM, &u) < 0)
			return -1;
		l->max_scan_bytes = u;
	} else if (strcmp(key, "max_post_bytes") == 0) {
		if (parse_ulong(cf, key, raw, 1024, LG_MAX_POST_BYTES, &u) < 0)
			return -1;
		l->max_post_bytes = u;
	} else if (strcmp(key, "hold_expiry_days") == 0) {
		if (parse_uint(cf, key, raw, 1, MAX_EXPIRY_DAYS,
		    &l->hold_expiry_days) < 0)
			return -1;
	} else if (strcmp(key, "timeout") == 0) {
		if (parse_uint(cf, key, raw, 1, MAX_TIMEOUT_S,
		    &l->timeout_s) < 0)
			return -1;
	} else if (strcmp(key, "robs") == 0) {
		if (parse_double(cf, key, raw, 0, MAX_ROBS, &d) < 0)
			return -1;
		if (d <= 0)
			return cf_error(cf, "%s: must be above 0", key);
		l->bayes.robs = d;
	} else if (strcmp(key, "robx") == 0) {
		if (parse_double(cf, key, raw, 0, 1, &d) < 0)
			return -1;
		if (d <= 0 || d >= 1)
			return cf_error(cf, "%s: must be strictly between 0 "
			    "and 1", key);
		l->bayes.robx = d;
	} else if (strcmp(key, "min_dev") == 0) {
		if (parse_double(cf, key, raw, 0, 0.5, &d) < 0)
			return -1;
		if (d >= 0.5)
			return cf_error(cf, "%s: must be below 0.5", key);
		l->bayes.min_dev = d;
	} else if (strcmp(key, "max_tokens") == 0) {
		if (parse_uint(cf, key, raw, 0, LG_MAX_TOKENS_PER_POST,
		    &l->bayes.max_tokens) < 0)
			return -1;
	} else
		return cf_error(cf, "unknown key `%s'", key);
	return 0;
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
	bayes_params_default(&l->bayes);
	if (!listcfg_name_ok(name)) {
		snprintf(err, errsz, "bad list name (want [a-z0-9][a-z0-9._-]*, "
		    "at most %u bytes, no \"..\")", (unsigned)LG_MAX_LIST_NAME);
		return -1;
	}
	memcpy(l->name, name, strlen(name) + 1);
	snprintf(file, sizeof(file), "%s.conf", name);
	if ((ldir = path_join(g->dir, "lists")) == NULL ||
	    (path = path_join(ldir, file)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto fail;
	}
	if (cf_read(&cf, path, err, errsz, list_kv, l, &missing) < 0)
		goto fail;
	l->has_file = !missing;
	/* cross-checks point at the later of the lines involved */
	lh = cf_seen(&cf, "ham_cutoff");
	ls = cf_seen(&cf, "spam_cutoff");
	ld = cf_seen(&cf, "discard_cutoff");
	if (l->ham_cutoff > l->spam_cutoff) {
		cf.line = lh > ls ? lh : ls;
		cf_error(&cf, "ham_cutoff %g is above spam_cutoff %g",
		    l->ham_cutoff, l->spam_cutoff);
		goto fail;
	}
	if (l->discard_cutoff <= 1 && l->discard_cutoff < l->spam_cutoff) {
		cf.line = ld > ls ? ld : ls;
		cf_error(&cf, "discard_cutoff %g is below spam_cutoff %g",
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
	listcfg_free_argv(l->deliver);
	listcfg_free_argv(l->release);
	listcfg_free_argv(l->moderators);
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

int
listcfg_expand(char *const *tmpl, const struct listcfg_vars *v,
    char ***argv_r)
{
	struct buf w = BUF_INIT(LG_MAX_ARG_BYTES);
	char **argv;
	const char *p, *val;
	size_t n, i, pl;

	*argv_r = NULL;
	for (n = 0; tmpl[n] != NULL; n++)
		;
	if ((argv = xcalloc(n + 1, sizeof(*argv))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		buf_reset(&w);
		for (p = tmpl[i]; *p != '\0'; ) {
			if (*p != '{') {
				if (buf_addc(&w, *p++) < 0)
					goto fail;
				continue;
			}
			if (p[1] == '{') {
				if (buf_addc(&w, '{') < 0)
					goto fail;
				p += 2;
				continue;
			}
			val = NULL;
			if ((pl = placeholder(p, v, &val)) == 0)
				goto fail;
			if (val != NULL && buf_adds(&w, val) < 0)
				goto fail;
			p += pl;
		}
		if ((argv[i] = xstrdup(buf_str(&w))) == NULL)
			goto fail;
	}
	buf_free(&w);
	*argv_r = argv;
	return 0;
fail:
	buf_free(&w);
	listcfg_free_argv(argv);
	return -1;
}

/* print a number so that it reads back as the same double */
static void
print_double(FILE *f, const char *key, double d)
{
	char s[64];

	snprintf(s, sizeof(s), "%.15g", d);
	if (strtod(s, NULL) != d)
		snprintf(s, sizeof(s), "%.17g", d);
	fprintf(f, "%s = %s\n", key, s);
}

/* 1 if s needs quotes to read back as one word */
static int
needs_quotes(const char *s)
{
	if (*s == '\0' || *s == '#')
		return 1;
	for (; *s; s++)
		if (is_blank((unsigned char)*s) || *s == '"' || *s == '\\' ||
		    *s == '#' || *s == ',' || (unsigned char)*s < ' ')
			return 1;
	return 0;
}

/* print s, quoted and escaped when needed */
static void
print_word(FILE *f, const char *s)
{
	if (!needs_quotes(s)) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putc('\\', f);
		putc(*s, f);
	}
	putc('"', f);
}

/* print an argv template, or "# KEY not set" */
static void
print_argv(FILE *f, const char *key, char *const *argv)
{
	size_t i;

	if (argv == NULL) {
		fprintf(f, "# %s (not set)\n", key);
		return;
	}
	fprintf(f, "%s =", key);
	for (i = 0; argv[i] != NULL; i++) {
		putc(' ', f);
		print_word(f, argv[i]);
	}
	putc('\n', f);
}

/* print a database setting (key) with any password masked */
static void
print_conninfo(FILE *f, const char *key, const char *conninfo)
{
	PQconninfoOption *opts, *o;
	char *perr = NULL;
	int first = 1;

	if ((opts = PQconninfoParse(conninfo, &perr)) == NULL) {
		fprintf(f, "# %s: not valid for libpq: %s", key,
		    perr ? perr : "out of memory\n");
		PQfreemem(perr);
		return;
	}
	fprintf(f, "%s = \"", key);
	for (o = opts; o->keyword != NULL; o++) {
		const char *v = o->val;

		if (v == NULL)
			continue;
		if (strcmp(o->keyword, "password") == 0)
			v = "********";
		fprintf(f, "%s%s='", first ? "" : " ", o->keyword);
		for (; *v; v++) {
			if (*v == '\'' || *v == '\\')
				fputs("\\\\", f);	/* libpq's \ in ours */
			if (*v == '"')
				putc('\\', f);
			putc(*v, f);
		}
		putc('\'', f);
		first = 0;
	}
	fputs("\"\n", f);
	PQconninfoFree(opts);
}

void
listcfg_print_global(FILE *f, const struct listcfg_global *g)
{
	static const char *const facs[] = { "mail", "user", "daemon",
	    "local0", "local1", "local2", "local3", "local4", "local5",
	    "local6", "local7" };
	const char *fac = "mail";
	size_t i;

	for (i = 0; i < sizeof(facs) / sizeof(facs[0]); i++)
		if (log_facility_by_name(facs[i]) == g->log_facility) {
			fac = facs[i];
			break;
		}
	fprintf(f, "# %s/listgate.conf\n", g->dir);
	fputs("tokens_dir = ", f);
	print_word(f, g->tokens_dir);
	putc('\n', f);
	if (g->conninfo != NULL)
		print_conninfo(f, "database", g->conninfo);
	else
		fputs("# database (not set)\n", f);
	if (g->sync_conninfo != NULL)
		print_conninfo(f, "sync_database", g->sync_conninfo);
	else
		fputs("# sync_database (not set: database)\n", f);
	fprintf(f, "log_facility = %s\n", fac);
	fprintf(f, "mta = %s\n", mta_name(g->mta));
	fprintf(f, "lock_wait_ms = %u\n", g->lock_wait_ms);
	fprintf(f, "timeout = %u\n", g->timeout_s);
}

void
listcfg_print_list(FILE *f, const struct listcfg_list *l)
{
	size_t i;

	fprintf(f, "# lists/%s.conf%s\n", l->name,
	    l->has_file ? "" : " (no file: defaults)");
	print_double(f, "ham_cutoff", l->ham_cutoff);
	print_double(f, "spam_cutoff", l->spam_cutoff);
	if (l->discard_cutoff > 1)
		fputs("discard_cutoff = off\n", f);
	else
		print_double(f, "discard_cutoff", l->discard_cutoff);
	print_argv(f, "deliver", l->deliver);
	print_argv(f, "release", l->release);
	if (l->moderators != NULL) {
		fputs("moderators = ", f);
		for (i = 0; l->moderators[i] != NULL; i++)
			fprintf(f, "%s%s", i ? ", " : "", l->moderators[i]);
		putc('\n', f);
	} else
		fputs("# moderators (not set)\n", f);
	fprintf(f, "on_error = %s\n",
	    l->on_error == ON_ERROR_PASS ? "pass" : "defer");
	fprintf(f, "max_scan_bytes = %zu\n", l->max_scan_bytes);
	fprintf(f, "max_post_bytes = %zu\n", l->max_post_bytes);
	fprintf(f, "hold_expiry_days = %u\n", l->hold_expiry_days);
	fprintf(f, "timeout = %u\n", l->timeout_s);
	print_double(f, "robs", l->bayes.robs);
	print_double(f, "robx", l->bayes.robx);
	print_double(f, "min_dev", l->bayes.min_dev);
	fprintf(f, "max_tokens = %u\n", l->bayes.max_tokens);
}
