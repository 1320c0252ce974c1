/*
 * print.c - the effective settings as `key = value` lines
 *
 * What `listgate config check` prints: every key, defaults included, in
 * the file format, so that the output loads back to the same settings.
 * Values are quoted where needed; the database's password never comes
 * out (listcfg/conninfo.c).  Never exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/log.h"
#include "gate/util/xalloc.h"
#include "listcfg/cfgfile.h"
#include "listcfg/conninfo.h"
#include "listcfg/listcfg.h"

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

/* print the database setting with any password masked: 0, or -1 when
 * out of memory */
static int
print_conninfo(FILE *f, const char *conninfo)
{
	char *m;

	if ((m = conninfo_mask(conninfo)) == NULL)
		return -1;
	fputs("database = ", f);
	print_word(f, m);
	putc('\n', f);
	xfree(m);
	return 0;
}

int
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
	if (g->conninfo != NULL) {
		if (print_conninfo(f, g->conninfo) < 0)
			return -1;
	} else
		fputs("# database (not set)\n", f);
	fprintf(f, "log_facility = %s\n", fac);
	fprintf(f, "mta = %s\n",
	    g->mta == LISTCFG_MTA_POSTFIX ? "postfix" : "qmail");
	fprintf(f, "lock_wait_ms = %u\n", g->lock_wait_ms);
	fprintf(f, "timeout = %u\n", g->timeout_s);
	return 0;
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
	print_double(f, "robs", l->robs);
	print_double(f, "robx", l->robx);
	print_double(f, "min_dev", l->min_dev);
	fprintf(f, "max_tokens = %u\n", l->max_tokens);
}
