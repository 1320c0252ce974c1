/*
 * print.c - the effective settings as `key = value` lines
 *
 * What `listgate config check` prints: every key of the table
 * (listcfg/keys.c), defaults included, in the file format, so that the
 * output loads back to the same settings.  Values are quoted where
 * needed; the database's password never comes out (listcfg/conninfo.c).
 * Also the table itself, for `listgate config keys`.  Never exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/xalloc.h"
#include "listcfg/cfgfile.h"
#include "listcfg/conninfo.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"

/* a number as text that reads back as the same double */
static void
fmt_double(char *s, size_t n, double d)
{
	snprintf(s, n, "%.15g", d);
	if (strtod(s, NULL) != d)
		snprintf(s, n, "%.17g", d);
}

/* 1 if s needs quotes to read back as one word */
static int
needs_quotes(const char *s)
{
	if (*s == '\0' || *s == '#')
		return 1;
	for (; *s; s++)
		if (cfgfile_blank((unsigned char)*s) || *s == '"' || *s == '\\' ||
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

/* 1 if a list of addresses must be quoted whole to read back: an
 * address may hold '#' (a comment after a blank), '"' or '\\' */
static int
addrs_need_quotes(char *const *v)
{
	for (; *v != NULL; v++)
		if (strpbrk(*v, "#\"\\") != NULL)
			return 1;
	return 0;
}

/* `key = "a, b"`, escaped: 0, or -1 when out of memory */
static int
print_addrs_quoted(FILE *f, const char *key, char *const *v)
{
	struct buf b = BUF_INIT((size_t)-1);
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		if ((i > 0 && buf_adds(&b, ", ") < 0) || buf_adds(&b, v[i]) < 0) {
			buf_free(&b);
			return -1;
		}
	fprintf(f, "%s = ", key);
	print_word(f, buf_str(&b));
	putc('\n', f);
	buf_free(&b);
	return 0;
}

/* one key of obj as a `key = value` line, or "# key (not set)": 0, or
 * -1 when out of memory */
static int
print_key(FILE *f, const struct keys_row *k, const void *obj)
{
	const void *p = keys_cfield(k, obj);
	char num[64], *m;
	const char *s;
	char *const *v;
	size_t i;

	switch (k->type) {
	case KEYS_DOUBLE_OFF:
		if (*(const double *)p > k->hi) {
			fprintf(f, "%s = off\n", k->name);
			return 0;
		}
		/* FALLTHROUGH */
	case KEYS_DOUBLE:
		fmt_double(num, sizeof(num), *(const double *)p);
		fprintf(f, "%s = %s\n", k->name, num);
		return 0;
	case KEYS_UNSIGNED:
		fprintf(f, "%s = %u\n", k->name, *(const unsigned *)p);
		return 0;
	case KEYS_SIZE:
		fprintf(f, "%s = %zu\n", k->name, *(const size_t *)p);
		return 0;
	case KEYS_ENUM:
		if ((s = keys_choice(k, *(const int *)p)) == NULL) {
			fprintf(f, "# %s (no such value: %d)\n", k->name,
			    *(const int *)p);
			return 0;
		}
		fprintf(f, "%s = %s\n", k->name, s);
		return 0;
	case KEYS_STRING:
	case KEYS_PATH:
	case KEYS_CONNINFO:
	case KEYS_ADDR:
		if ((s = *(char *const *)p) == NULL)
			break;
		m = NULL;
		if (k->type == KEYS_CONNINFO &&
		    (s = m = conninfo_mask(s)) == NULL)
			return -1;
		/* quoting may have grown it past what a line holds: all
		 * masked then (it loads back; nothing secret shows) */
		if (k->type == KEYS_CONNINFO && strlen(s) > LG_MAX_CONF_VALUE)
			s = CONNINFO_MASK;
		fprintf(f, "%s = ", k->name);
		print_word(f, s);
		putc('\n', f);
		xfree(m);
		return 0;
	case KEYS_ADDRS:
		if ((v = *(char **const *)p) == NULL)
			break;
		if (addrs_need_quotes(v))
			return print_addrs_quoted(f, k->name, v);
		/* FALLTHROUGH */
	case KEYS_ARGV:
		if ((v = *(char **const *)p) == NULL)
			break;
		fprintf(f, "%s =", k->name);
		for (i = 0; v[i] != NULL; i++) {
			if (k->type == KEYS_ADDRS && i > 0)
				putc(',', f);
			putc(' ', f);
			if (k->type == KEYS_ARGV)
				print_word(f, v[i]);
			else
				fputs(v[i], f);
		}
		putc('\n', f);
		return 0;
	}
	fprintf(f, "# %s (not set)\n", k->name);
	return 0;
}

/* every key of scope in obj */
static int
print_scope(FILE *f, enum keys_scope scope, const void *obj)
{
	const struct keys_row *k;

	for (k = keys_table; k->name != NULL; k++)
		if (k->scope == scope && print_key(f, k, obj) < 0)
			return -1;
	return 0;
}

int
listcfg_print_global(FILE *f, const struct listcfg_global *g)
{
	fprintf(f, "# %s/listgate.conf\n", g->dir);
	return print_scope(f, KEYS_GLOBAL, g);
}

int
listcfg_print_list(FILE *f, const struct listcfg_list *l)
{
	fprintf(f, "# lists/%s.conf%s\n", l->name,
	    l->has_file ? "" : " (no file: defaults)");
	return print_scope(f, KEYS_LIST, l);
}

/* a key's default as text */
static void
fmt_default(const struct keys_row *k, char *s, size_t n)
{
	if (k->def_global != NULL) {
		snprintf(s, n, "the global %s", k->def_global);
		return;
	}
	switch (k->type) {
	case KEYS_DOUBLE_OFF:
	case KEYS_DOUBLE:
		if (k->type == KEYS_DOUBLE_OFF && k->def > k->hi)
			snprintf(s, n, "off");
		else
			fmt_double(s, n, k->def);
		return;
	case KEYS_UNSIGNED:
	case KEYS_SIZE:
		snprintf(s, n, "%lu", (unsigned long)k->def);
		return;
	case KEYS_STRING:
	case KEYS_CONNINFO:
	case KEYS_PATH:
	case KEYS_ENUM:
	case KEYS_ADDR:
		snprintf(s, n, "%s", k->def_s != NULL ? k->def_s : "not set");
		return;
	case KEYS_ARGV:
	case KEYS_ADDRS:
		break;
	}
	snprintf(s, n, "not set");
}

/* a key's range as text: "[0, 1]", "(0, 1000]", "defer|pass", "-" */
static void
fmt_range(const struct keys_row *k, char *s, size_t n)
{
	char lo[64], hi[64];
	size_t i, len = 0;

	switch (k->type) {
	case KEYS_DOUBLE:
	case KEYS_DOUBLE_OFF:
		fmt_double(lo, sizeof(lo), k->lo);
		fmt_double(hi, sizeof(hi), k->hi);
		snprintf(s, n, "%c%s, %s%c%s", k->flags & KEYS_LO_OPEN ? '(' :
		    '[', lo, hi, k->flags & KEYS_HI_OPEN ? ')' : ']',
		    k->type == KEYS_DOUBLE_OFF ? " or off" : "");
		return;
	case KEYS_UNSIGNED:
	case KEYS_SIZE:
		snprintf(s, n, "[%lu, %lu]", (unsigned long)k->lo,
		    (unsigned long)k->hi);
		return;
	case KEYS_ENUM:
		s[0] = '\0';
		for (i = 0; k->choices[i] != NULL && len < n; i++) {
			int w = snprintf(s + len, n - len, "%s%s", i ? "|" : "",
			    k->choices[i]);

			if (w < 0)
				break;
			len += (size_t)w;
		}
		return;
	default:
		snprintf(s, n, "-");
		return;
	}
}

void
listcfg_print_keys(FILE *f)
{
	const struct keys_row *k;
	char def[256], range[256];

	fputs("# name\tfile\ttype\tdefault\trange\tdescription\n", f);
	for (k = keys_table; k->name != NULL; k++) {
		fmt_default(k, def, sizeof(def));
		fmt_range(k, range, sizeof(range));
		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\n", k->name,
		    k->scope == KEYS_GLOBAL ? "global" : "list",
		    keys_type_name(k->type), def, range, k->doc);
	}
}
