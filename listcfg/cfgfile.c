/*
 * cfgfile.c - read a configuration file as `key = value` lines
 *
 * The files are written by the administrator but read as untrusted
 * text: lines are bounded (LG_MAX_CONF_LINE), and NUL bytes, a CR
 * inside a line (not before its LF), lines that
 * are no `key = value`, empty values and duplicate keys are errors
 * naming FILE:LINE.  A file another user could change (group- or
 * world-writable, owned by neither root nor us) is refused before it is
 * read.  Never exits; -1 with a message on every failure.
 *
 * Syntax, one setting per line:
 *	key = value		# a comment
 * A line whose first non-blank byte is '#' is a comment.  Elsewhere a
 * '#' starts a comment only at the start of a word (after whitespace)
 * and outside double quotes: "a#b" and "x #y" (quoted) keep it.  A value
 * may be double-quoted as a whole, with \" and \\ as the only escapes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"
#include "listcfg/cfgfile.h"

/* "PATH:LINE: message" into cf->err; -1 */
int
cfgfile_error(struct cfgfile *cf, const char *fmt, ...)
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

int
cfgfile_trusted(const char *path, const struct stat *st, char *err,
    size_t errsz)
{
	uid_t me = geteuid();

	if (st->st_uid != 0 && st->st_uid != me) {
		snprintf(err, errsz, "%s: owned by uid %lu, neither root nor "
		    "the user listgate runs as (uid %lu): listgate trusts no "
		    "configuration another user can change; make root its "
		    "owner (chown root %s)", path, (unsigned long)st->st_uid,
		    (unsigned long)me, path);
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(err, errsz, "%s: writable by %s (mode %04o): listgate "
		    "trusts no configuration another user can change; chmod "
		    "go-w %s", path, (st->st_mode & S_IWOTH) ? "everyone" :
		    "its group", (unsigned)(st->st_mode & 07777), path);
		return -1;
	}
	return 0;
}

/* where key was set, 0 if not */
unsigned
cfgfile_seen(const struct cfgfile *cf, const char *key)
{
	size_t i;

	for (i = 0; i < cf->nseen; i++)
		if (strcmp(cf->seen[i].key, key) == 0)
			return cf->seen[i].line;
	return 0;
}

/* blanks of the format (a newline ends the line) */
int
cfgfile_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* is cf's file a symbolic link to nothing (its target moved, a typo)?
 * 1 after cfgfile_error: read as no file, its settings were silently
 * the defaults; 0 when there is no file at all */
static int
dangling(struct cfgfile *cf)
{
	char to[1024];
	struct stat st;
	ssize_t n;

	if (lstat(cf->path, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	if ((n = readlink(cf->path, to, sizeof(to) - 1)) < 0)
		n = 0;
	to[n] = '\0';
	cfgfile_error(cf, "a symbolic link to %s, which does not exist: "
	    "restore the file it names, or remove the link", n > 0 ? to :
	    "?");
	return 1;
}

/* read the file, one callback per `key = value` */
int
cfgfile_read(struct cfgfile *cf, const char *path, char *err,
    size_t errsz, cfgfile_fn fn, void *ctx, int *missing_r)
{
	char line[LG_MAX_CONF_LINE + 1];
	char key[CFGFILE_MAX_KEY];
	struct stat st;
	FILE *fp;
	size_t n, k;
	char *p, *e;
	int c, eof = 0, rc = -1, fd;
	unsigned first;

	memset(cf, 0, sizeof(*cf));
	cf->path = path;
	cf->err = err;
	cf->errsz = errsz;
	*missing_r = 0;
	/* O_NONBLOCK: a FIFO in the file's place is refused below, not
	 * waited on for a writer (no effect on a regular file) */
	if ((fd = open(cf->path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) < 0) {
		if (errno == ENOENT && dangling(cf))
			return -1;
		if (errno == ENOENT) {
			*missing_r = 1;
			return 0;
		}
		return cfgfile_error(cf, "cannot open: %s", strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cfgfile_error(cf, "not a regular file");
	}
	if ((fp = fdopen(fd, "r")) == NULL) {
		close(fd);
		return cfgfile_error(cf, "cannot open: %s", strerror(errno));
	}
	if (cfgfile_trusted(cf->path, &st, err, errsz) < 0) {
		fclose(fp);
		return -1;
	}
	while (!eof) {
		cf->line++;
		n = 0;
		for (;;) {
			c = getc(fp);
			if (c == EOF) {
				if (ferror(fp)) {
					cfgfile_error(cf, "read error: %s",
					    strerror(errno));
					goto out;
				}
				eof = 1;
				break;
			}
			if (c == '\n')
				break;
			if (c == '\0') {
				cfgfile_error(cf, "NUL byte in line");
				goto out;
			}
			if (n >= LG_MAX_CONF_LINE) {
				cfgfile_error(cf, "line too long (more than %u bytes)",
				    (unsigned)LG_MAX_CONF_LINE);
				goto out;
			}
			line[n++] = (char)c;
		}
		line[n] = '\0';
		while (n > 0 && cfgfile_blank((unsigned char)line[n - 1]))
			line[--n] = '\0';
		/* a CR ends no line here: a file with CR line ends would
		 * be one line, all of it a comment when it starts with
		 * one, every setting silently unread */
		if (memchr(line, '\r', n) != NULL) {
			cfgfile_error(cf, "carriage return inside the line (a "
			    "file with CR line ends? lines end with LF or CR "
			    "LF)");
			goto out;
		}
		/* a byte order mark (an editor's "UTF-8 with BOM") is
		 * invisible: "expected `key = value'" on a line that reads
		 * as one sent its reader looking for the wrong thing */
		if (cf->line == 1 && n >= 3 && memcmp(line, "\xef\xbb\xbf",
		    3) == 0) {
			cfgfile_error(cf, "the file starts with a byte order "
			    "mark (bytes EF BB BF, which an editor's \"UTF-8 "
			    "with BOM\" writes): save it without one");
			goto out;
		}
		for (p = line; cfgfile_blank((unsigned char)*p); p++)
			;
		if (*p == '\0' || *p == '#')
			continue;
		for (e = p; (*e >= 'a' && *e <= 'z') || (*e >= '0' &&
		    *e <= '9') || *e == '_'; e++)
			;
		k = (size_t)(e - p);
		while (cfgfile_blank((unsigned char)*e))
			e++;
		if (k == 0 || *e != '=') {
			cfgfile_error(cf, "expected `key = value'");
			goto out;
		}
		if (k >= CFGFILE_MAX_KEY) {
			cfgfile_error(cf, "unknown key `%.*s'", (int)k, p);
			goto out;
		}
		memcpy(key, p, k);
		key[k] = '\0';
		for (e++; cfgfile_blank((unsigned char)*e); e++)
			;
		if ((first = cfgfile_seen(cf, key)) != 0) {
			cfgfile_error(cf, "duplicate key `%s' (first set on line %u)",
			    key, first);
			goto out;
		}
		if (*e == '\0' || *e == '#') {
			cfgfile_error(cf, "%s: empty value", key);
			goto out;
		}
		if (fn(ctx, cf, key, e) < 0)
			goto out;
		if (cf->nseen < CFGFILE_MAX_SEEN) {
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
int
cfgfile_value(struct cfgfile *cf, const char *key, const char *raw,
    char *out, size_t outsz)
{
	const char *p = raw;
	size_t n = 0;

	if (*p == '"') {
		for (p++; *p != '"'; p++) {
			if (*p == '\0')
				return cfgfile_error(cf, "%s: unterminated quote",
				    key);
			if (*p == '\\') {
				p++;
				if (*p != '"' && *p != '\\')
					return cfgfile_error(cf, "%s: bad escape "
					    "(only \\\" and \\\\)", key);
			}
			if (n + 1 >= outsz)
				return cfgfile_error(cf, "%s: value too long", key);
			out[n++] = *p;
		}
		for (p++; cfgfile_blank((unsigned char)*p); p++)
			;
		if (*p != '\0' && *p != '#')
			return cfgfile_error(cf, "%s: text after the quoted value",
			    key);
		/* "" is as empty as nothing: it would make a path the
		 * configuration directory, a database libpq's defaults */
		if (n == 0)
			return cfgfile_error(cf, "%s: empty value", key);
		out[n] = '\0';
		return 0;
	}
	for (; *p != '\0'; p++) {
		if (*p == '#' && n > 0 && cfgfile_blank((unsigned char)p[-1]))
			break;
		if (n + 1 >= outsz)
			return cfgfile_error(cf, "%s: value too long", key);
		out[n++] = *p;
	}
	while (n > 0 && cfgfile_blank((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	if (n == 0)
		return cfgfile_error(cf, "%s: empty value", key);
	return 0;
}

/* join dir and name into a new string */
char *
cfgfile_join(const char *dir, const char *name)
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
