/*
 * keys.c - the table of configuration keys, and a parser per value type
 *
 * Values are untrusted text: numbers are decimal and range-checked
 * (finite, no hex, no trailing junk, no overflow), choices are exact,
 * addresses and templates are checked word by word.  Every error names
 * FILE:LINE, the key, the bad value and what is allowed.  Never exits;
 * -1 on every failure.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "gate/util/lglimits.h"
#include "gate/util/netlist.h"
#include "gate/util/xalloc.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

static const char *const facility_names[] = { "mail", "user", "daemon",
    "local0", "local1", "local2", "local3", "local4", "local5", "local6",
    "local7", NULL };
static const int facility_values[] = { LOG_MAIL, LOG_USER, LOG_DAEMON,
    LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3, LOG_LOCAL4, LOG_LOCAL5,
    LOG_LOCAL6, LOG_LOCAL7 };
/* in the order of enum listcfg_mta and enum on_error */
static const char *const mta_names[] = { "qmail", "postfix", NULL };
static const char *const on_error_names[] = { "defer", "pass", NULL };
/* in the order of enum listcfg_expire */
static const char *const expire_action_names[] = { "discard",
    "discard-learn", "remind", NULL };
static const char *const no_yes_names[] = { "no", "yes", NULL };
/* recipient_delimiter: the character itself is stored */
static const char *const delim_names[] = { "+", "-", "=", "_", ".", NULL };
static const int delim_values[] = { '+', '-', '=', '_', '.' };

/* web_listen: ADDR:PORT */
static int
check_listen(const char *val, char *why, size_t whysz)
{
	char host[64];
	unsigned port;

	return listcfg_listen_parse(val, host, sizeof(host), &port, why,
	    whysz);
}

/* site_list: a list name */
static int
check_list_name(const char *val, char *why, size_t whysz)
{
	if (listcfg_name_ok(val))
		return 0;
	snprintf(why, whysz, "`%s' is not a list name ([a-z0-9][a-z0-9._-]*, "
	    "at most %d bytes)", val, LG_MAX_LIST_NAME);
	return -1;
}

/* web_trusted_proxies: numeric addresses */
static int
check_proxies(const char *val, char *why, size_t whysz)
{
	return listcfg_addrs_parse(val, NULL, 0, NULL, why, whysz);
}
static const char *const oversize_names[] = { "hold", "defer", NULL };

/* web_allowed_hosts: host names */
static int
check_hosts(const char *val, char *why, size_t whysz)
{
	return listcfg_hosts_parse(val, NULL, LG_MAX_WEB_HOSTS, NULL, why,
	    whysz);
}

/* trusted_relays: networks and host names */
static int
check_relays(const char *val, char *why, size_t whysz)
{
	struct netlist nl;

	return netlist_parse(val, &nl, why, whysz);
}

/* dnsbl_zones: DNS names, a few */
static int
check_zones(const char *val, char *why, size_t whysz)
{
	struct netlist nl;

	if (netlist_parse(val, &nl, why, whysz) < 0)
		return -1;
	if (nl.nnet > 0 || nl.nname > LG_MAX_DNSBL_ZONES) {
		snprintf(why, whysz, "want at most %u zones (DNS names), "
		    "separated by commas or blanks",
		    (unsigned)LG_MAX_DNSBL_ZONES);
		return -1;
	}
	return 0;
}

/*
 * The keys, in the order `config check` prints them.  Ranges: the
 * limits a value may take, with a reason where it is ours alone.
 */
const struct keys_row keys_table[] = {
	/* --- listgate.conf ---------------------------------------------- */
	{ .name = "tokens_dir", KEYS_FIELD(GLOBAL, PATH, tokens_dir),
	  .def_s = "tokens",
	  .doc = "directory of the token files L.kch (relative: in the "
	  "configuration directory)" },
	{ .name = "database", KEYS_FIELD(GLOBAL, CONNINFO, conninfo),
	  .doc = "PostgreSQL connection string or URI of the moderation "
	  "queue and the training journal" },
	{ .name = "sync_database", KEYS_FIELD(GLOBAL, CONNINFO, sync_conninfo),
	  .doc = "where sync and rebuild read the journal, e.g. a hot "
	  "standby (default: database)" },
	{ .name = "log_facility", KEYS_FIELD(GLOBAL, ENUM, log_facility),
	  .def_s = "mail", .choices = facility_names,
	  .values = facility_values, .flags = KEYS_ANYCASE,
	  .what = "facility", .doc = "syslog facility" },
	{ .name = "mta", KEYS_FIELD(GLOBAL, ENUM, mta),
	  .def_s = "qmail", .choices = mta_names,
	  .doc = "exit-code dialect of filter when its command line has no "
	  "--mta" },
	/* a writer holds the lock for a batch, seconds at most */
	{ .name = "lock_wait_ms", KEYS_FIELD(GLOBAL, UNSIGNED, lock_wait_ms),
	  .def = LG_DEFAULT_LOCK_WAIT_MS, .lo = 0, .hi = 600000,
	  .doc = "milliseconds a command waits for the lock on a token file" },
	/* Postfix kills a pipe command after 1000 s and then bounces */
	{ .name = "timeout", KEYS_FIELD(GLOBAL, UNSIGNED, timeout_s),
	  .def = LG_DEFAULT_TIMEOUT_S, .lo = 1, .hi = 3600,
	  .doc = "seconds before filter's watchdog defers the post (a list "
	  "may set its own)" },
	{ .name = "web_listen", KEYS_FIELD(GLOBAL, STRING, web_listen),
	  .def_s = "127.0.0.1:8180", .check = check_listen,
	  .doc = "address and port listgate web listens on (behind a TLS "
	  "reverse proxy)" },
	{ .name = "holder_socket", KEYS_FIELD(GLOBAL, PATH, holder_socket),
	  .doc = "Unix socket of listgate holder: filter hands the posts it "
	  "holds to it, and holds them itself when it does not answer "
	  "(unset: filter always holds them itself)" },
	{ .name = "web_trusted_proxies",
	  KEYS_FIELD(GLOBAL, STRING, web_trusted_proxies),
	  .def_s = "127.0.0.1,::1", .check = check_proxies,
	  .doc = "addresses of the reverse proxies whose X-Forwarded-For and "
	  "X-Forwarded-Proto listgate web believes" },
	{ .name = "web_allowed_hosts",
	  KEYS_FIELD(GLOBAL, STRING, web_allowed_hosts),
	  .check = check_hosts,
	  .doc = "host names listgate web is reached by: a request naming "
	  "another in its Host header is refused (421), against DNS "
	  "rebinding; IP addresses and localhost always pass (unset: any "
	  "name)" },
	{ .name = "user", KEYS_FIELD(GLOBAL, STRING, user),
	  .doc = "the user listgate becomes when started as root (without "
	  "it, root is refused unless --allow-root)" },
	{ .name = "group", KEYS_FIELD(GLOBAL, STRING, group),
	  .doc = "the group listgate becomes when started as root (default: "
	  "the user's login group)" },
	{ .name = "secret_file", KEYS_FIELD(GLOBAL, PATH, secret_file),
	  .def_s = LG_DEFAULT_SECRET_FILE,
	  .doc = "the site's key for moderation cookies (listgate init "
	  "creates it)" },
	{ .name = "trusted_relays", KEYS_FIELD(GLOBAL, STRING, trusted_relays),
	  .check = check_relays,
	  .doc = "networks (ADDR/BITS), addresses and host names whose "
	  "Received lines are believed; the first hop past them gives the "
	  "src: tokens" },
	{ .name = "dnsbl_zones", KEYS_FIELD(GLOBAL, STRING, dnsbl_zones),
	  .check = check_zones,
	  .doc = "DNSBL zones asked about the first untrusted relay, all at "
	  "once; an answer in 127.0.0.0/8 becomes the token "
	  "dnsbl:ZONE:127.0.0.N (127.255.255.x, a refused query: none)" },
	/* the pass path waits this long at most for every zone */
	{ .name = "dns_timeout_ms", KEYS_FIELD(GLOBAL, UNSIGNED, dns_timeout_ms),
	  .def = LG_DEFAULT_DNS_TIMEOUT_MS, .lo = 1, .hi = 5000,
	  .doc = "milliseconds the DNSBL answers may take, all zones "
	  "together" },
	{ .name = "dns_server", KEYS_FIELD(GLOBAL, STRING, dns_server),
	  .check = check_listen,
	  .doc = "ADDR:PORT of the resolver asked for DNSBL answers (default: "
	  "the system's, /etc/resolv.conf)" },
	{ .name = "site_list", KEYS_FIELD(GLOBAL, STRING, site_list),
	  .check = check_list_name,
	  .doc = "the list whose token file is the site store that young "
	  "lists borrow counts from (not set: none)" },

	/* --- lists/L.conf ----------------------------------------------- */
	{ .name = "ham_cutoff", KEYS_FIELD(LIST, DOUBLE, ham_cutoff),
	  .def = LG_DEFAULT_HAM_CUTOFF, .lo = 0, .hi = 1,
	  .doc = "posts scoring below this pass; at or above it they are "
	  "held" },
	{ .name = "spam_cutoff", KEYS_FIELD(LIST, DOUBLE, spam_cutoff),
	  .def = LG_DEFAULT_SPAM_CUTOFF, .lo = 0, .hi = 1,
	  .doc = "held posts at or above this get the verdict spam (below: "
	  "unsure)" },
	{ .name = "discard_cutoff",
	  KEYS_FIELD(LIST, DOUBLE_OFF, discard_cutoff),
	  .def = LG_OFF, .lo = 0, .hi = 1,
	  .doc = "posts at or above this are stored as discarded, not held" },
	{ .name = "deliver", KEYS_FIELD(LIST, ARGV, deliver),
	  .doc = "command that hands a passed post on to the list under "
	  "Postfix" },
	{ .name = "release", KEYS_FIELD(LIST, ARGV, release),
	  .doc = "command that sends an approved post to the list" },
	{ .name = "moderators", KEYS_FIELD(LIST, ADDRS, moderators),
	  .doc = "the list's moderators, addresses separated by commas or "
	  "spaces" },
	{ .name = "moderation_address",
	  KEYS_FIELD(LIST, ADDR, moderation_address),
	  .doc = "address that hold notices come from; replies go to its "
	  "action addresses" },
	{ .name = "recipient_delimiter",
	  KEYS_FIELD(LIST, ENUM, recipient_delimiter),
	  .def_s = "+", .choices = delim_names, .values = delim_values,
	  .what = "delimiter",
	  .doc = "the MTA's address extension delimiter (qmail: -)" },
	{ .name = "notify", KEYS_FIELD(LIST, ARGV, notify),
	  .flags = KEYS_NOTIFY,
	  .doc = "command that sends a message listgate writes (hold "
	  "notices, answers)" },
	{ .name = "cookie_days", KEYS_FIELD(LIST, UNSIGNED, cookie_days),
	  .def = LG_DEFAULT_COOKIE_DAYS, .lo = 1, .hi = 365,
	  .doc = "days a hold notice's action addresses stay valid" },
	/* a moderator's mailbox, not the database, is what this protects */
	{ .name = "notify_max_per_hour",
	  KEYS_FIELD(LIST, UNSIGNED, notify_max_per_hour),
	  .def = LG_DEFAULT_NOTIFY_MAX_PER_HOUR, .lo = 0, .hi = 100000,
	  .doc = "hold notices per hour; past it they wait for one digest "
	  "(notify --pending)" },
	{ .name = "sender_notice", KEYS_FIELD(LIST, ENUM, sender_notice),
	  .def_s = "no", .choices = no_yes_names,
	  .doc = "on reject, tell the envelope sender (never for discards "
	  "or bounces)" },
	{ .name = "on_error", KEYS_FIELD(LIST, ENUM, on_error),
	  .def_s = "defer", .choices = on_error_names,
	  .doc = "what filter does with a post when the host fails it "
	  "(database, lock, memory, spool, token file)" },
	/* the scanned bytes are held in memory */
	{ .name = "max_scan_bytes", KEYS_FIELD(LIST, SIZE, max_scan_bytes),
	  .def = LG_MAX_SCAN_BYTES, .lo = 1024, .hi = LG_MAX_SPOOL_MEM,
	  .doc = "bytes of each post that are parsed and scored" },
	{ .name = "max_post_bytes", KEYS_FIELD(LIST, SIZE, max_post_bytes),
	  .def = LG_DEFAULT_MAX_POST_BYTES, .lo = 1024,
	  .hi = LG_MAX_POST_BYTES,
	  .doc = "largest post filter scores and passes (a larger one is "
	  "oversize)" },
	{ .name = "oversize", KEYS_FIELD(LIST, ENUM, oversize),
	  .def_s = "hold", .choices = oversize_names,
	  .doc = "what filter does with a post over max_post_bytes: hold it "
	  "unscored (reason oversize) or defer it" },
	{ .name = "hold_expiry_days",
	  KEYS_FIELD(LIST, UNSIGNED, hold_expiry_days),
	  .def = LG_DEFAULT_HOLD_EXPIRY_DAYS, .lo = 1, .hi = 3650,
	  .doc = "days after which listgate expire acts on a held post" },
	{ .name = "expire_action", KEYS_FIELD(LIST, ENUM, expire_action),
	  .def_s = "discard", .choices = expire_action_names,
	  .what = "expire action",
	  .doc = "what listgate expire does with a post held past "
	  "hold_expiry_days: discard (no training), discard-learn (learn "
	  "it as spam), remind (notify the moderators again)" },
	{ .name = "timeout", KEYS_FIELD(LIST, UNSIGNED, timeout_s),
	  .def_global = "timeout", .lo = 1, .hi = 3600,
	  .doc = "seconds before filter's watchdog defers this list's post" },
	{ .name = "robs", KEYS_FIELD(LIST, DOUBLE, robs),
	  .def = LG_DEFAULT_ROBS, .lo = 0, .hi = 1000,
	  .flags = KEYS_LO_OPEN,
	  .doc = "strength of Robinson's prior, in posts" },
	{ .name = "robx", KEYS_FIELD(LIST, DOUBLE, robx),
	  .def = LG_DEFAULT_ROBX, .lo = 0, .hi = 1,
	  .flags = KEYS_LO_OPEN | KEYS_HI_OPEN,
	  .doc = "probability given to a token never seen before" },
	{ .name = "min_dev", KEYS_FIELD(LIST, DOUBLE, min_dev),
	  .def = LG_DEFAULT_MIN_DEV, .lo = 0, .hi = 0.5,
	  .flags = KEYS_HI_OPEN,
	  .doc = "tokens nearer 0.5 than this do not vote" },
	{ .name = "max_tokens", KEYS_FIELD(LIST, UNSIGNED, max_tokens),
	  .def = LG_DEFAULT_MAX_TOKENS, .lo = 0,
	  .hi = LG_MAX_TOKENS_PER_POST,
	  .doc = "at most this many of the most extreme tokens vote (0: "
	  "all)" },
	{ .name = "vote_budget", KEYS_FIELD(LIST, ENUM, vote_budget),
	  .def_s = "no", .choices = no_yes_names,
	  .doc = "a long text's later tokens (past the first 200 of a "
	  "text part, or the first 20 of a paragraph) vote together as "
	  "at most 20 tokens" },
	/* a tokenizer setting: the token file holds what it was trained
	 * with (listgate rebuild after a change) */
	{ .name = "word_pairs", KEYS_FIELD(LIST, ENUM, word_pairs),
	  .def_s = "no", .choices = no_yes_names,
	  .doc = "also learn and score each pair of neighbouring words of "
	  "the text (a token \"bi:w1 w2\"); run listgate rebuild after a "
	  "change" },
	{ .name = "member_check", KEYS_FIELD(LIST, ARGV, member_check),
	  .flags = KEYS_MEMBER,
	  .doc = "command asked whether {sender} is a subscriber: exit 0 "
	  "yes, 1 no (token member:yes or member:no), else no evidence" },
	/* it runs before every post is scored */
	{ .name = "member_check_ms",
	  KEYS_FIELD(LIST, UNSIGNED, member_check_ms),
	  .def = LG_DEFAULT_MEMBER_CHECK_MS, .lo = 1, .hi = 5000,
	  .doc = "milliseconds member_check may take; then it is killed and "
	  "gives no evidence" },
	{ .name = "member_cache_s", KEYS_FIELD(LIST, UNSIGNED, member_cache_s),
	  .def = 0, .lo = 0, .hi = 30 * 86400,
	  .doc = "seconds a member_check answer is kept in tokens_dir/L.members "
	  "(0: no cache)" },
	/* as robs: a prior's strength in posts */
	{ .name = "site_weight", KEYS_FIELD(LIST, DOUBLE, site_weight),
	  .def = LG_DEFAULT_SITE_WEIGHT, .lo = 0, .hi = 1000,
	  .doc = "how many posts the site store's view of a token counts "
	  "for in this list's scores (0: the site store is not used)" },
	{ .name = NULL }
};

const struct keys_row *
keys_find(enum keys_scope scope, const char *name)
{
	const struct keys_row *k;

	for (k = keys_table; k->name != NULL; k++)
		if (k->scope == scope && strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

void *
keys_field(const struct keys_row *k, void *obj)
{
	return (char *)obj + k->off;
}

const void *
keys_cfield(const struct keys_row *k, const void *obj)
{
	return (const char *)obj + k->off;
}

const char *
keys_choice(const struct keys_row *k, int v)
{
	size_t i;

	for (i = 0; k->choices[i] != NULL; i++)
		if ((k->values != NULL ? k->values[i] : (int)i) == v)
			return k->choices[i];
	return NULL;
}

/* the value stored for choice s: 0 with *v_r, or -1 if s is none */
static int
choice_value(const struct keys_row *k, const char *s, int *v_r)
{
	size_t i;

	for (i = 0; k->choices[i] != NULL; i++)
		if ((k->flags & KEYS_ANYCASE) ? strcasecmp(s, k->choices[i]) == 0 :
		    strcmp(s, k->choices[i]) == 0) {
			*v_r = k->values != NULL ? k->values[i] : (int)i;
			return 0;
		}
	return -1;
}

const char *
keys_type_name(enum keys_type t)
{
	switch (t) {
	case KEYS_DOUBLE:	return "number";
	case KEYS_DOUBLE_OFF:	return "number|off";
	case KEYS_UNSIGNED:	return "integer";
	case KEYS_SIZE:		return "bytes";
	case KEYS_STRING:	return "string";
	case KEYS_CONNINFO:	return "conninfo";
	case KEYS_PATH:		return "path";
	case KEYS_ENUM:		return "choice";
	case KEYS_ARGV:		return "command";
	case KEYS_ADDRS:	return "addresses";
	case KEYS_ADDR:		return "address";
	}
	return "?";
}

/* a path value: absolute as it is, else in dir; NULL when out of memory */
static char *
path_value(const char *dir, const char *val)
{
	return val[0] == '/' ? xstrdup(val) : cfgfile_join(dir, val);
}

int
keys_defaults(enum keys_scope scope, void *obj, const void *global,
    const char *dir)
{
	const struct keys_row *k, *gk;
	void *f;
	int v;

	for (k = keys_table; k->name != NULL; k++) {
		if (k->scope != scope)
			continue;
		f = keys_field(k, obj);
		if (k->def_global != NULL) {
			/* a table error (tests/check_listcfg.c) or no global */
			gk = keys_find(KEYS_GLOBAL, k->def_global);
			if (gk == NULL || gk->type != k->type || global == NULL)
				return -1;
			switch (k->type) {
			case KEYS_DOUBLE:
			case KEYS_DOUBLE_OFF:
				*(double *)f = *(const double *)
				    keys_cfield(gk, global);
				break;
			case KEYS_UNSIGNED:
				*(unsigned *)f = *(const unsigned *)
				    keys_cfield(gk, global);
				break;
			case KEYS_SIZE:
				*(size_t *)f = *(const size_t *)
				    keys_cfield(gk, global);
				break;
			case KEYS_ENUM:
				*(int *)f = *(const int *)keys_cfield(gk,
				    global);
				break;
			default:
				return -1;	/* numbers and choices only */
			}
			continue;
		}
		switch (k->type) {
		case KEYS_DOUBLE:
		case KEYS_DOUBLE_OFF:
			*(double *)f = k->def;
			break;
		case KEYS_UNSIGNED:
			*(unsigned *)f = (unsigned)k->def;
			break;
		case KEYS_SIZE:
			*(size_t *)f = (size_t)k->def;
			break;
		case KEYS_ENUM:
			if (k->def_s == NULL || choice_value(k, k->def_s, &v) < 0)
				return -1;
			*(int *)f = v;
			break;
		case KEYS_STRING:
		case KEYS_CONNINFO:
		case KEYS_PATH:
		case KEYS_ADDR:
			*(char **)f = NULL;
			if (k->def_s == NULL)
				break;
			if ((*(char **)f = k->type == KEYS_PATH ?
			    path_value(dir, k->def_s) : xstrdup(k->def_s)) ==
			    NULL)
				return -1;
			break;
		case KEYS_ARGV:
		case KEYS_ADDRS:
			*(char ***)f = NULL;
			break;
		}
	}
	return 0;
}

void
keys_free(enum keys_scope scope, void *obj)
{
	const struct keys_row *k;
	void *f;

	for (k = keys_table; k->name != NULL; k++) {
		if (k->scope != scope)
			continue;
		f = keys_field(k, obj);
		switch (k->type) {
		case KEYS_STRING:
		case KEYS_CONNINFO:
		case KEYS_PATH:
		case KEYS_ADDR:
			xfree(*(char **)f);
			*(char **)f = NULL;
			break;
		case KEYS_ARGV:
		case KEYS_ADDRS:
			tmpl_free(*(char ***)f);
			*(char ***)f = NULL;
			break;
		default:
			break;
		}
	}
}

/* a finite decimal number in k's range */
static int
parse_double(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    double *v_r)
{
	char val[LG_MAX_CONF_VALUE + 1];
	char *end;
	double v;
	int lo_open = (k->flags & KEYS_LO_OPEN) != 0;
	int hi_open = (k->flags & KEYS_HI_OPEN) != 0;

	if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end != '\0' || errno != 0 || !isfinite(v) ||
	    strspn(val, "0123456789.-+eE") != strlen(val))
		return cfgfile_error(cf, "%s: `%s' is not a number", k->name,
		    val);
	if (v < k->lo || v > k->hi)
		return cfgfile_error(cf, "%s: %s is out of range [%g, %g]",
		    k->name, val, k->lo, k->hi);
	if ((lo_open && v <= k->lo) || (hi_open && v >= k->hi)) {
		if (lo_open && hi_open)
			return cfgfile_error(cf, "%s: must be strictly between "
			    "%g and %g (got %s)", k->name, k->lo, k->hi, val);
		if (lo_open)
			return cfgfile_error(cf, "%s: must be above %g (got %s)",
			    k->name, k->lo, val);
		return cfgfile_error(cf, "%s: must be below %g (got %s)",
		    k->name, k->hi, val);
	}
	*v_r = v;
	return 0;
}

/* a decimal whole number in k's range */
static int
parse_ulong(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    unsigned long *v_r)
{
	char val[LG_MAX_CONF_VALUE + 1];
	char *end;
	unsigned long v, lo = (unsigned long)k->lo, hi = (unsigned long)k->hi;

	if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
		return -1;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (!isdigit((unsigned char)val[0]) || *end != '\0')
		return cfgfile_error(cf, "%s: `%s' is not a whole number",
		    k->name, val);
	if (errno == ERANGE || v < lo || v > hi)
		return cfgfile_error(cf, "%s: %s is out of range [%lu, %lu]",
		    k->name, val, lo, hi);
	*v_r = v;
	return 0;
}

/* one of k's choices */
static int
parse_enum(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    int *v_r)
{
	char val[LG_MAX_CONF_VALUE + 1], list[512];
	size_t i, n = 0;
	int len;

	if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
		return -1;
	if (choice_value(k, val, v_r) == 0)
		return 0;
	for (i = 0; k->choices[i] != NULL; i++)
		;
	if (i == 2)
		return cfgfile_error(cf, "%s: `%s' is neither %s nor %s",
		    k->name, val, k->choices[0], k->choices[1]);
	list[0] = '\0';
	for (i = 0; k->choices[i] != NULL && n < sizeof(list); i++) {
		len = snprintf(list + n, sizeof(list) - n, "%s%s",
		    i ? ", " : "", k->choices[i]);
		if (len < 0)
			break;
		n += (size_t)len;
	}
	return cfgfile_error(cf, "%s: unknown %s `%s' (%s)", k->name,
	    k->what != NULL ? k->what : "value", val, list);
}

/*
 * A mail address: one '@' with text on both sides, no blanks, controls,
 * commas or double quotes; its length is checked apart (address_long).
 * strict (the list's moderation_address, which every notice comes from
 * and every action address is made of): also ASCII and none of
 * <>()[];:\ (it goes into a header between < and >, as notice_addr_ok
 * wants).  A moderator's address is not held to that: lists had
 * address literals and UTF-8 in them before, and refusing the file
 * would defer all of a list's mail; a notice to such an address fails
 * alone, and waits in the outbox.
 */
static int
address_ok(const char *a, int strict)
{
	const char *at = strchr(a, '@');
	const unsigned char *p;

	if (at == NULL || at == a || at[1] == '\0' || strchr(at + 1, '@'))
		return 0;
	for (p = (const unsigned char *)a; *p; p++)
		if (*p <= ' ' || *p == 0x7f || *p == ',' || *p == '"' ||
		    (strict && (*p > 0x7f || strchr("<>()[];:\\", *p))))
			return 0;
	return 1;
}

/* an error naming an address longer than LG_MAX_ADDR_BYTES (the notice
 * outbox refuses it), when a is: -1; else 0.  modaddr (the list's
 * moderation_address): longer than LG_MAX_MODADDR_BYTES, the longest
 * whose action addresses all fit in LG_MAX_ADDR_BYTES, whatever the
 * delimiter (one character each) */
static int
address_long(const struct keys_row *k, struct cfgfile *cf, const char *a,
    int modaddr)
{
	size_t n = strlen(a);

	if (modaddr && n > LG_MAX_MODADDR_BYTES)
		return cfgfile_error(cf, "%s: `%.40s...' is too long (%zu "
		    "bytes; at most %u, whatever the recipient_delimiter: an "
		    "action address LOCAL{delim}approve-ID-COOKIE@DOMAIN adds "
		    "up to %u bytes and must fit in the %u that listgate "
		    "moderate takes)",
		    k->name, a, n, (unsigned)LG_MAX_MODADDR_BYTES,
		    (unsigned)LG_MAX_ACTION_PART, (unsigned)LG_MAX_ADDR_BYTES);
	if (n <= LG_MAX_ADDR_BYTES)
		return 0;
	return cfgfile_error(cf, "%s: `%.40s...' is too long (%zu bytes; at "
	    "most %u)", k->name, a, n, (unsigned)LG_MAX_ADDR_BYTES);
}

/* "a@b, c@d" or "a@b c@d": commas, blanks or both between addresses */
static int
parse_addrs(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    char ***addrs_r)
{
	char val[LG_MAX_CONF_VALUE + 1];
	char **addrs;
	char *p, *s;
	size_t n = 0, cap, joined = 0;

	if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
		return -1;
	cap = 1;
	for (p = val; *p; p++)
		if (*p == ',' || cfgfile_blank((unsigned char)*p))
			cap++;
	if ((addrs = xcalloc(cap + 1, sizeof(*addrs))) == NULL)
		return cfgfile_error(cf, "out of memory");
	for (p = val; ; ) {
		/* an empty item between two commas is an error, blanks
		 * around a comma are not */
		while (cfgfile_blank((unsigned char)*p))
			p++;
		s = p;
		while (*p != '\0' && *p != ',' && !cfgfile_blank((unsigned
		    char)*p))
			p++;
		if (*p != '\0' && *p != ',') {
			*p++ = '\0';
			while (cfgfile_blank((unsigned char)*p))
				p++;
			if (*p == ',')
				p++;
		} else if (*p == ',')
			*p++ = '\0';
		if (address_long(k, cf, s, 0) < 0) {
			tmpl_free(addrs);
			return -1;
		}
		if (!address_ok(s, 0)) {
			cfgfile_error(cf, "%s: `%s' is not an address", k->name,
			    s);
			tmpl_free(addrs);
			return -1;
		}
		if ((addrs[n++] = xstrdup(s)) == NULL) {
			tmpl_free(addrs);
			return cfgfile_error(cf, "out of memory");
		}
		/* printed back joined by ", ", it must still be a value */
		joined += (n > 1 ? 2 : 0) + strlen(s);
		if (joined > LG_MAX_CONF_VALUE) {
			tmpl_free(addrs);
			return cfgfile_error(cf, "%s: value too long (its "
			    "addresses joined by \", \" pass %u bytes)", k->name,
			    (unsigned)LG_MAX_CONF_VALUE);
		}
		while (cfgfile_blank((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
	}
	*addrs_r = addrs;
	return 0;
}

/* one address */
static int
parse_addr(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    char **addr_r)
{
	char val[LG_MAX_CONF_VALUE + 1];

	if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0 ||
	    address_long(k, cf, val, 1) < 0)
		return -1;
	if (!address_ok(val, 1))
		return cfgfile_error(cf, "%s: `%s' is not an address (want one "
		    "address such as dev-moderate@lists.example.org)", k->name,
		    val);
	if ((*addr_r = xstrdup(val)) == NULL)
		return cfgfile_error(cf, "out of memory");
	return 0;
}

/* the bytes of argv's words */
static size_t
argv_bytes(char *const *argv)
{
	size_t n = 0;

	for (; *argv != NULL; argv++)
		n += strlen(*argv);
	return n;
}

int
keys_set(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    void *obj, const char *dir)
{
	char val[LG_MAX_CONF_VALUE + 1], msg[512];
	void *f = keys_field(k, obj);
	unsigned long u = 0;
	double d = 0;
	char *s, **argv;
	int v = 0;

	switch (k->type) {
	case KEYS_DOUBLE_OFF:
		if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
			return -1;
		if (strcmp(val, "off") == 0) {
			*(double *)f = LG_OFF;
			return 0;
		}
		/* FALLTHROUGH */
	case KEYS_DOUBLE:
		if (parse_double(k, cf, raw, &d) < 0)
			return -1;
		*(double *)f = d;
		return 0;
	case KEYS_UNSIGNED:
	case KEYS_SIZE:
		if (parse_ulong(k, cf, raw, &u) < 0)
			return -1;
		if (k->type == KEYS_UNSIGNED)
			*(unsigned *)f = (unsigned)u;
		else
			*(size_t *)f = (size_t)u;
		return 0;
	case KEYS_STRING:
	case KEYS_CONNINFO:
	case KEYS_PATH:
		if (cfgfile_value(cf, k->name, raw, val, sizeof(val)) < 0)
			return -1;
		if (k->check != NULL && k->check(val, msg, sizeof(msg)) < 0)
			return cfgfile_error(cf, "%s: %s", k->name, msg);
		s = k->type == KEYS_PATH ? path_value(dir, val) : xstrdup(val);
		if (s == NULL)
			return cfgfile_error(cf, "out of memory");
		if (strlen(s) > LG_MAX_CONF_VALUE) {
			/* in dir it grew: it must still print as one line */
			xfree(s);
			return cfgfile_error(cf, "%s: path too long in %s (more "
			    "than %u bytes)", k->name, dir,
			    (unsigned)LG_MAX_CONF_VALUE);
		}
		xfree(*(char **)f);
		*(char **)f = s;
		return 0;
	case KEYS_ENUM:
		if (parse_enum(k, cf, raw, &v) < 0)
			return -1;
		*(int *)f = v;
		return 0;
	case KEYS_ARGV:
		if (tmpl_parse_set(raw, (k->flags & KEYS_NOTIFY) ? TMPL_NOTIFY :
		    (k->flags & KEYS_MEMBER) ? TMPL_MEMBER :
		    TMPL_DELIVER, &argv, msg, sizeof(msg)) < 0)
			return cfgfile_error(cf, "%s: %s", k->name, msg);
		if (argv_bytes(argv) > LG_MAX_CONF_VALUE) {
			/* like any value: it must print back as one line */
			tmpl_free(argv);
			return cfgfile_error(cf, "%s: value too long (its words "
			    "hold more than %u bytes)", k->name,
			    (unsigned)LG_MAX_CONF_VALUE);
		}
		tmpl_free(*(char ***)f);
		*(char ***)f = argv;
		return 0;
	case KEYS_ADDRS:
		if (parse_addrs(k, cf, raw, &argv) < 0)
			return -1;
		tmpl_free(*(char ***)f);
		*(char ***)f = argv;
		return 0;
	case KEYS_ADDR:
		if (parse_addr(k, cf, raw, &s) < 0)
			return -1;
		xfree(*(char **)f);
		*(char **)f = s;
		return 0;
	}
	return cfgfile_error(cf, "%s: no parser for its type", k->name);
}

int
listcfg_listen_parse(const char *s, char *host, size_t hostsz,
    unsigned *port_r, char *why, size_t whysz)
{
	unsigned char a[16];
	const char *colon, *h = s, *hend;
	char hb[INET6_ADDRSTRLEN + 1], *end;
	unsigned long port;
	size_t n;
	int v6 = 0;

	if (*s == '[') {
		if ((hend = strchr(s, ']')) == NULL || hend[1] != ':')
			goto bad;
		h = s + 1;
		colon = hend + 1;
		v6 = 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL ||
		    memchr(s, ':', (size_t)(colon - s)) != NULL)
			goto bad;
		hend = colon;
	}
	n = (size_t)(hend - h);
	if (n == 0 || n >= sizeof(hb))
		goto bad;
	memcpy(hb, h, n);
	hb[n] = '\0';
	if (inet_pton(v6 ? AF_INET6 : AF_INET, hb, a) != 1)
		goto bad;
	if (!isdigit((unsigned char)colon[1]))
		goto bad;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || errno != 0 || port > 65535)
		goto bad;
	if (host != NULL) {
		if (n >= hostsz)
			goto bad;
		memcpy(host, hb, n + 1);
	}
	*port_r = (unsigned)port;
	return 0;
bad:
	snprintf(why, whysz, "`%.100s' is not ADDR:PORT (a numeric IPv4 "
	    "address, or an IPv6 one in brackets, and a port 0-65535)", s);
	return -1;
}

/* the next item of a list separated by blanks or commas: skips to it
 * (*pp), sets *end after it and returns its length, 0 at the end */
static size_t
list_item(const char **pp, const char **end)
{
	const char *p = *pp, *e;

	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	for (e = p; *e && *e != ' ' && *e != '\t' && *e != ','; e++)
		;
	*pp = p;
	*end = e;
	return (size_t)(e - p);
}

int
listcfg_addrs_parse(const char *s, unsigned char (*out)[16], size_t max,
    size_t *n_r, char *why, size_t whysz)
{
	unsigned char a[16];
	char w[INET6_ADDRSTRLEN + 1];
	const char *p = s, *e;
	size_t n = 0, len = 0;

	while ((len = list_item(&p, &e)) > 0) {
		if (len >= sizeof(w))
			goto bad;
		memcpy(w, p, len);
		w[len] = '\0';
		/* IPv4 as an IPv4-mapped IPv6 address */
		memset(a, 0, sizeof(a));
		if (inet_pton(AF_INET, w, a + 12) == 1) {
			a[10] = a[11] = 0xff;
		} else if (inet_pton(AF_INET6, w, a) != 1)
			goto bad;
		if (out != NULL) {
			if (n >= max) {
				snprintf(why, whysz, "more than %zu addresses",
				    max);
				return -1;
			}
			memcpy(out[n], a, 16);
		}
		n++;
		p = e;
	}
	if (n_r != NULL)
		*n_r = n;
	return 0;
bad:
	snprintf(why, whysz, "`%.*s' is not a numeric IP address",
	    (int)(len < 100 ? len : 100), p);
	return -1;
}

/* the host in [p, p + n) (no port) as listcfg_host_header describes,
 * into out: 1 name, 2 address, 0 malformed */
static int
host_norm(const char *p, size_t n, char out[LG_MAX_HOST_NAME + 1])
{
	unsigned char a[16];
	char w[INET6_ADDRSTRLEN];
	size_t i, label = 0;

	if (n > 0 && p[0] == '[') {
		if (n < 3 || p[n - 1] != ']' || n - 2 >= sizeof(w))
			return 0;
		memcpy(w, p + 1, n - 2);
		w[n - 2] = '\0';
		if (inet_pton(AF_INET6, w, a) != 1 ||
		    inet_ntop(AF_INET6, a, w, sizeof(w)) == NULL)
			return 0;
		out[0] = '[';
		memcpy(out + 1, w, strlen(w));
		out[strlen(w) + 1] = ']';
		out[strlen(w) + 2] = '\0';
		return 2;
	}
	if (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0 || n > LG_MAX_HOST_NAME)
		return 0;
	for (i = 0; i < n; i++) {
		char c = p[i];

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_') {
			if (++label > 63)
				return 0;
			out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
			continue;
		} else
			return 0;
		out[i] = c;
	}
	if (label == 0)
		return 0;
	out[n] = '\0';
	if (inet_pton(AF_INET, out, a) == 1 || strcmp(out, "localhost") == 0)
		return 2;
	return 1;
}

int
listcfg_host_header(const char *h, char out[LG_MAX_HOST_NAME + 1])
{
	const char *colon, *q;
	size_t n = strlen(h);

	/* the port: digits after the last ':' (past the ']' of IPv6) */
	colon = strrchr(h, ':');
	if (colon != NULL && (h[0] != '[' || colon > strrchr(h, ']'))) {
		if (colon[1] == '\0' || strlen(colon + 1) > 5)
			return 0;
		for (q = colon + 1; *q; q++)
			if (*q < '0' || *q > '9')
				return 0;
		n = (size_t)(colon - h);
	}
	return host_norm(h, n, out);
}

int
listcfg_hosts_parse(const char *s, char (*out)[LG_MAX_HOST_NAME + 1],
    size_t max, size_t *n_r, char *why, size_t whysz)
{
	char w[LG_MAX_HOST_NAME + 1];
	const char *p = s, *e;
	size_t n = 0, len = 0;

	while ((len = list_item(&p, &e)) > 0) {
		if (host_norm(p, len, w) == 0) {
			snprintf(why, whysz, "`%.*s' is not a host name (a DNS "
			    "name, a numeric IPv4 address or an IPv6 one in "
			    "brackets, without a port)",
			    (int)(len < 100 ? len : 100), p);
			return -1;
		}
		if (n >= max) {
			snprintf(why, whysz, "more than %zu host names", max);
			return -1;
		}
		if (out != NULL)
			memcpy(out[n], w, sizeof(w));
		n++;
		p = e;
	}
	if (n_r != NULL)
		*n_r = n;
	return 0;
}
