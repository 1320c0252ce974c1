/*
 * keys.c - the keys of listgate.conf and lists/L.conf: parse and check
 * each value
 *
 * Values are untrusted text: numbers are decimal and range-checked
 * (finite, no hex, no trailing junk), choices are exact, addresses and
 * templates are checked word by word.  Every error names FILE:LINE,
 * the key, the bad value and what is allowed.  Never exits.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/lglimits.h"
#include "gate/util/log.h"
#include "gate/util/xalloc.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

#define MAX_LOCK_WAIT_MS 600000u
#define MAX_TIMEOUT_S	3600u
#define MAX_EXPIRY_DAYS	3650u
#define MAX_ROBS	1000.0

/* parse a finite number in [lo, hi] */
static int
parse_double(struct cfgfile *cf, const char *key, const char *raw,
    double lo, double hi, double *v_r)
{
	char val[LG_MAX_CONF_LINE + 1];
	char *end;
	double v;

	if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end != '\0' || errno != 0 || !isfinite(v) ||
	    strspn(val, "0123456789.-+eE") != strlen(val))
		return cfgfile_error(cf, "%s: `%s' is not a number", key, val);
	if (v < lo || v > hi)
		return cfgfile_error(cf, "%s: %s is out of range [%g, %g]", key,
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

	if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (!isdigit((unsigned char)val[0]) || *end != '\0')
		return cfgfile_error(cf, "%s: `%s' is not a whole number", key,
		    val);
	if (errno == ERANGE || v < lo || v > hi)
		return cfgfile_error(cf, "%s: %s is out of range [%lu, %lu]", key,
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

/* split a template into words (listcfg/tmpl.c) */
static int
parse_template(struct cfgfile *cf, const char *key, const char *raw,
    char ***argv_r)
{
	char msg[512];

	if (tmpl_parse(raw, argv_r, msg, sizeof(msg)) < 0)
		return cfgfile_error(cf, "%s: %s", key, msg);
	return 0;
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

	if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
		return -1;
	cap = 1;
	for (p = val; *p; p++)
		if (*p == ',')
			cap++;
	if ((mods = xcalloc(cap + 1, sizeof(*mods))) == NULL)
		return cfgfile_error(cf, "out of memory");
	for (s = val; s != NULL; s = e) {
		if ((e = strchr(s, ',')) != NULL)
			*e++ = '\0';
		while (cfgfile_blank((unsigned char)*s))
			s++;
		p = s + strlen(s);
		while (p > s && cfgfile_blank((unsigned char)p[-1]))
			*--p = '\0';
		if (!address_ok(s)) {
			cfgfile_error(cf, "%s: `%s' is not an address", key, s);
			tmpl_free(mods);
			return -1;
		}
		if ((mods[n++] = xstrdup(s)) == NULL) {
			tmpl_free(mods);
			return cfgfile_error(cf, "out of memory");
		}
	}
	*mods_r = mods;
	return 0;
}

/* one key of listgate.conf */
int
keys_global(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
{
	struct listcfg_global *g = ctx;
	char val[LG_MAX_CONF_LINE + 1];
	int fac;

	if (strcmp(key, "tokens_dir") == 0) {
		char *t;

		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		t = val[0] == '/' ? xstrdup(val) : cfgfile_join(g->dir, val);
		if (t == NULL)
			return cfgfile_error(cf, "out of memory");
		xfree(g->tokens_dir);
		g->tokens_dir = t;
	} else if (strcmp(key, "database") == 0) {
		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		xfree(g->conninfo);
		if ((g->conninfo = xstrdup(val)) == NULL)
			return cfgfile_error(cf, "out of memory");
	} else if (strcmp(key, "log_facility") == 0) {
		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if ((fac = log_facility_by_name(val)) == -1)
			return cfgfile_error(cf, "%s: unknown facility `%s' (mail, "
			    "user, daemon, local0..local7)", key, val);
		g->log_facility = fac;
	} else if (strcmp(key, "mta") == 0) {
		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if (strcmp(val, "qmail") == 0)
			g->mta = LISTCFG_MTA_QMAIL;
		else if (strcmp(val, "postfix") == 0)
			g->mta = LISTCFG_MTA_POSTFIX;
		else
			return cfgfile_error(cf, "%s: `%s' is neither qmail nor "
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
		return cfgfile_error(cf, "unknown key `%s'", key);
	return 0;
}

/* one key of lists/L.conf */
int
keys_list(void *ctx, struct cfgfile *cf, const char *key, const char *raw)
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
		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
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
		if (cfgfile_value(cf, key, raw, val, sizeof(val)) < 0)
			return -1;
		if (strcmp(val, "defer") == 0)
			l->on_error = ON_ERROR_DEFER;
		else if (strcmp(val, "pass") == 0)
			l->on_error = ON_ERROR_PASS;
		else
			return cfgfile_error(cf, "%s: `%s' is neither defer nor "
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
			return cfgfile_error(cf, "%s: must be above 0", key);
		l->robs = d;
	} else if (strcmp(key, "robx") == 0) {
		if (parse_double(cf, key, raw, 0, 1, &d) < 0)
			return -1;
		if (d <= 0 || d >= 1)
			return cfgfile_error(cf, "%s: must be strictly between 0 "
			    "and 1", key);
		l->robx = d;
	} else if (strcmp(key, "min_dev") == 0) {
		if (parse_double(cf, key, raw, 0, 0.5, &d) < 0)
			return -1;
		if (d >= 0.5)
			return cfgfile_error(cf, "%s: must be below 0.5", key);
		l->min_dev = d;
	} else if (strcmp(key, "max_tokens") == 0) {
		if (parse_uint(cf, key, raw, 0, LG_MAX_TOKENS_PER_POST,
		    &l->max_tokens) < 0)
			return -1;
	} else
		return cfgfile_error(cf, "unknown key `%s'", key);
	return 0;
}
