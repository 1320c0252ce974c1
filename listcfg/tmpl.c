/*
 * tmpl.c - argv templates: split at load, expand per post
 *
 * The template text comes from a configuration file and the values from
 * the MTA's envelope: both are hostile.  Words are bounded
 * (LG_MAX_CONF_LINE, at most LG_MAX_ARGV of them), an expanded argument
 * is at most LG_MAX_ARG_BYTES, and a value only ever fills its
 * placeholder inside one argument.  Depends on nothing but buf and
 * xalloc (the argv-template fuzz target links just these).  Never logs,
 * never exits; -1 on every failure.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"
#include "listcfg/tmpl.h"

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

void
tmpl_free(char **argv)
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
placeholder(const char *p, const struct tmpl_vars *v, const char **val_r)
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

int
tmpl_parse(const char *text, char ***argv_r, char *err, size_t errsz)
{
	char **argv;
	struct buf w = BUF_INIT(LG_MAX_CONF_LINE);
	const char *p = text, *q;
	size_t n = 0;
	int inword;

	*argv_r = NULL;
	if ((argv = xcalloc(LG_MAX_ARGV + 1, sizeof(*argv))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	for (;;) {
		while (is_blank((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == LG_MAX_ARGV) {
			snprintf(err, errsz, "too many words (at most %u)",
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
						snprintf(err, errsz,
						    "unterminated quote");
						goto fail;
					}
					if (*p == '\\') {
						p++;
						if (*p != '"' && *p != '\\') {
							snprintf(err, errsz,
							    "bad escape (only "
							    "\\\" and \\\\)");
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
				snprintf(err, errsz, "unknown placeholder "
				    "`%.*s' (known: {sender} {recipient} "
				    "{list}; {{ for a literal {)",
				    (int)strcspn(q + 1, "}") + 2, q);
				goto fail;
			}
			if (n == 0) {
				snprintf(err, errsz, "unsafe template: a "
				    "placeholder in the program name");
				goto fail;
			}
			q += pl;
		}
		if (n == 0 && w.len > 0 && w.data[0] != '/') {
			snprintf(err, errsz, "unsafe template: the program "
			    "`%s' must be an absolute path", buf_str(&w));
			goto fail;
		}
		if (n == 0 && w.len == 0) {
			snprintf(err, errsz, "unsafe template: empty program "
			    "name");
			goto fail;
		}
		if ((argv[n] = xstrdup(buf_str(&w))) == NULL)
			goto nomem;
		n++;
	}
	if (n == 0) {
		snprintf(err, errsz, "empty template");
		goto fail;
	}
	buf_free(&w);
	*argv_r = argv;
	return 0;
nomem:
	snprintf(err, errsz, "out of memory");
fail:
	buf_free(&w);
	tmpl_free(argv);
	return -1;
}

int
tmpl_expand(char *const *tmpl, const struct tmpl_vars *v, char ***argv_r)
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
	tmpl_free(argv);
	return -1;
}
