/*
 * listcfg.h - global and per-list configuration
 *
 * A directory (/etc/listgate unless --config DIR or LISTGATE_CONFIG names
 * another) holding listgate.conf and lists/L.conf: `key = value` lines,
 * `#` comments.  Unknown keys, bad values, unsafe templates and unreadable
 * files are errors whose message names file and line.  A list without a
 * file of its own uses the defaults.  The deliver and release templates
 * are expanded with listcfg/tmpl.h.
 *
 * Every key is a row of one table (listcfg/keys.c: name, file, type,
 * default, range, description) that loading, checking and printing
 * follow; a new key is a row there plus a field below.
 */
#ifndef LG_LISTCFG_H
#define LG_LISTCFG_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "gate/util/lglimits.h"

/* default cutoffs, chosen by cross-validation, tests/bench/README.md;
 * spam_cutoff only labels held posts */
#define LG_DEFAULT_HAM_CUTOFF		0.3
#define LG_DEFAULT_SPAM_CUTOFF		0.9999
/* a number that is "off" (discard_cutoff): above every score */
#define LG_OFF				HUGE_VAL
#define LG_DISCARD_OFF			LG_OFF
#define LG_DEFAULT_LOCK_WAIT_MS		5000u
#define LG_DEFAULT_TIMEOUT_S		300u	/* Postfix kills at 1000 s */
#define LG_DEFAULT_HOLD_EXPIRY_DAYS	14u
/* the site's cookie key (listgate init creates it) */
#define LG_DEFAULT_SECRET_FILE		"/var/lib/listgate/secret"
/* ezmlm-idx's moderation cookies also last days, not hours: a
 * moderator away for a week can still decide */
#define LG_DEFAULT_COOKIE_DAYS		14u
/* hold notices per list and hour before they wait for a digest */
#define LG_DEFAULT_NOTIFY_MAX_PER_HOUR	30u
/* the largest post scored and passed unless a list says otherwise:
 * bounded by default (the hard ceiling is LG_MAX_POST_BYTES) */
#define LG_DEFAULT_MAX_POST_BYTES	(64u * 1024u * 1024u)
/* evidence beyond the words: a member_check and the DNSBL answers must
 * cost the pass path little, and never the post */
#define LG_DEFAULT_MEMBER_CHECK_MS	200u
#define LG_DEFAULT_DNS_TIMEOUT_MS	300u
/* classifier defaults, chosen by the same cross-validation; they are
 * the core's bayes_params_default() (tests/check_settings.c checks) */
#define LG_DEFAULT_ROBS			0.3
#define LG_DEFAULT_ROBX			0.6
#define LG_DEFAULT_MIN_DEV		0.05
#define LG_DEFAULT_MAX_TOKENS		0u
/* the site store's prior strength in posts (gate/app/tokcounts.h),
 * chosen by cross-validation, tests/bench/README.md */
#define LG_DEFAULT_SITE_WEIGHT		3.0

/* the MTA dialects listcfg knows (gate/app/settings maps them to the
 * core's enum mta) */
enum listcfg_mta {
	LISTCFG_MTA_QMAIL,
	LISTCFG_MTA_POSTFIX
};

struct listcfg_global {
	char *dir;		/* the configuration directory */
	char *tokens_dir;	/* absolute; default DIR/tokens */
	char *conninfo;		/* PostgreSQL conninfo/URI, NULL when not set */
	char *sync_conninfo;	/* the journal's reads (sync, rebuild), e.g.
				 * a hot standby; NULL: conninfo */
	int log_facility;	/* syslog facility, default LOG_MAIL */
	int mta;		/* enum listcfg_mta: filter's default dialect */
	unsigned lock_wait_ms;	/* token file lock wait, default 5000 */
	unsigned timeout_s;	/* filter watchdog, default 300 */
	char *web_listen;	/* ADDR:PORT of listgate web */
	char *web_trusted_proxies; /* addresses whose X-Forwarded-* count */
	char *web_allowed_hosts; /* the Host names listgate web answers;
				 * NULL: any */
	char *holder_socket;	/* listgate holder's socket, absolute; NULL:
				 * filter holds posts itself */
	char *user;		/* started as root: become this user; NULL
				 * when not set (root is then refused) */
	char *group;		/* ... and this group (NULL: the user's) */
	char *secret_file;	/* the cookie key, absolute */
	/* source evidence (gate/received.h, gate/evidence/) */
	char *trusted_relays;	/* networks and host names (netlist) whose
				 * Received lines are believed; NULL: none */
	char *dnsbl_zones;	/* DNSBL zones asked, NULL: none */
	unsigned dns_timeout_ms; /* all zones answer within this */
	char *dns_server;	/* ADDR:PORT of the resolver; NULL: the
				 * system's (/etc/resolv.conf) */
	char *site_list;	/* the list whose token file is the site
				 * store (gate/app/site.h), NULL: none */
};

enum on_error {
	ON_ERROR_DEFER,		/* temporary failure: the MTA retries (default) */
	ON_ERROR_PASS		/* pass the post on when the filter cannot work */
};

/* what `listgate expire` does with a post held past hold_expiry_days */
enum listcfg_expire {
	LISTCFG_EXPIRE_DISCARD,		/* mark it expired, no training */
	LISTCFG_EXPIRE_DISCARD_LEARN,	/* mark it expired, learn it as spam */
	LISTCFG_EXPIRE_REMIND		/* keep it held, notify the moderators
					 * again (every hold_expiry_days) */
};

/* what filter does with a post larger than max_post_bytes */
enum oversize {
	OVERSIZE_HOLD,		/* store it whole and hold it (default) */
	OVERSIZE_DEFER		/* leave it with the MTA */
};

struct listcfg_list {
	char name[LG_MAX_LIST_NAME + 1];
	double ham_cutoff;	/* pass below this */
	double spam_cutoff;	/* verdict spam at or above (unsure between) */
	double discard_cutoff;	/* discard at or above; LG_OFF: off */
	char **deliver;		/* argv template (NULL-terminated) or NULL */
	char **release;		/* argv template or NULL */
	char **moderators;	/* addresses, NULL-terminated, or NULL */
	char *moderation_address; /* LOCAL@DOMAIN of the action addresses,
				 * or NULL (no notices) */
	int recipient_delimiter; /* the character: '+' (default), '-' ... */
	char **notify;		/* argv template (TMPL_NOTIFY) or NULL */
	unsigned cookie_days;	/* action addresses stay valid this long */
	unsigned notify_max_per_hour;	/* then notices become a digest */
	int sender_notice;	/* 1: tell the sender of a rejected post */
	int on_error;		/* enum on_error: host failures only */
	size_t max_scan_bytes;
	size_t max_post_bytes;	/* default LG_DEFAULT_MAX_POST_BYTES */
	int oversize;		/* enum oversize: larger posts */
	unsigned hold_expiry_days;
	int expire_action;	/* enum listcfg_expire */
	unsigned timeout_s;	/* watchdog for this list (default: global) */
	/* classifier (gate/app/settings turns them into bayes_params) */
	double robs;		/* strength of Robinson's prior */
	double robx;		/* Robinson's prior for an unknown token */
	double min_dev;		/* tokens nearer 0.5 than this do not vote */
	unsigned max_tokens;	/* at most this many tokens vote; 0 = all */
	int word_pairs;		/* 1: the tokenizer's word pairs too */
	int vote_budget;	/* 1: a long text's tail votes scaled */
	/* subscriber evidence (gate/evidence/member.h) */
	char **member_check;	/* argv template: exit 0 member, 1 not */
	unsigned member_check_ms; /* time-out of one member_check */
	unsigned member_cache_s; /* answers kept this long; 0: no cache */
	double site_weight;	/* the site store's f counts as this many
				 * posts per token (0: not used) */
	int has_file;		/* lists/L.conf existed */
};

/* the configuration directory: opt if given, else $LISTGATE_CONFIG, else
 * the compiled-in /etc/listgate */
const char *listcfg_dir(const char *opt);
/* the compiled-in configuration directory (/etc/listgate) */
const char *listcfg_dir_default(void);
/* dir is a configuration directory listcfg_load_global would read (it
 * exists, may be read, and no other user can change it): 0, or -1 with
 * err naming it */
int listcfg_dir_check(const char *dir, char *err, size_t errsz);

/* 1 if name is a valid list name ([a-z0-9][a-z0-9._-]*, at most 64
 * bytes, and no ".."), else 0 */
int listcfg_name_ok(const char *name);

/* 1 if address a is one of l's moderators (any case), else 0 */
int listcfg_is_moderator(const struct listcfg_list *l, const char *a);

/* load DIR/listgate.conf (defaults when the file is missing, error when
 * DIR itself is missing or unreadable, or when DIR or the file could be
 * changed by another user: see cfgfile_trusted): 0, or -1 with err */
int listcfg_load_global(const char *dir, struct listcfg_global *g,
    char *err, size_t errsz);
void listcfg_free_global(struct listcfg_global *g);

/*
 * What listgate started as root must know before it opens anything else:
 * the global keys user, group and mta of DIR/listgate.conf, checked as
 * listcfg_load_global checks the directory and the file (the file's
 * format too; the values of other keys are not looked at).  0 with
 * *user_r and *group_r (NULL when not set, else xfree them) and *mta_r
 * (an enum listcfg_mta: its default when the file does not set it, -1
 * when there is no file), or -1 with err.
 */
int listcfg_load_owner(const char *dir, char **user_r, char **group_r,
    int *mta_r, char *err, size_t errsz);

/* load lists/NAME.conf over the defaults: 0, or -1 with err.  The name
 * is checked before any path is built; lists/ and the file must be
 * cfgfile_trusted. */
int listcfg_load_list(const struct listcfg_global *g, const char *name,
    struct listcfg_list *l, char *err, size_t errsz);
void listcfg_free_list(struct listcfg_list *l);

/* load the file at path as list name's settings would be (defaults,
 * keys, cross-checks) and forget them: whether a rewritten lists/L.conf
 * (not yet in place) loads.  0, or -1 with err naming path */
int listcfg_check_list_file(const struct listcfg_global *g,
    const char *name, const char *path, char *err, size_t errsz);

/* the line of the file at path that sets key, 0 when none does or the
 * file cannot be read (for messages that point at a setting that
 * loaded: config check's warnings) */
unsigned listcfg_key_line(const char *path, const char *key);

/* the list's configuration file, DIR/lists/NAME.conf: 0, or -1 (bad
 * name, too long) */
int listcfg_list_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz);
/*
 * The names of the lists with a file lists/NAME.conf in dir whose NAME
 * passes listcfg_name_ok (others are left out), sorted, into *names_r
 * (free each and the array with xfree), their number into *n_r.  No
 * lists/ directory gives none.  0, or -1 with err.
 */
int listcfg_names(const char *dir, char ***names_r, size_t *n_r, char *err,
    size_t errsz);

/* the list's token file, tokens_dir/NAME.kch: 0, or -1 (bad name, too long) */
int listcfg_tokens_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz);

/* the list's counter of posts passed, tokens_dir/NAME.passed (see
 * db/passcount.h): 0, or -1 (bad name, too long) */
int listcfg_passcount_path(const struct listcfg_global *g,
    const char *name, char *out, size_t outsz);
/*
 * Parse "ADDR:PORT" (numeric IPv4, or IPv6 in brackets; port 0-65535):
 * the address into host (hostsz bytes; may be NULL), the port into
 * *port_r.  0, or -1 with why.
 */
int listcfg_listen_parse(const char *s, char *host, size_t hostsz,
    unsigned *port_r, char *why, size_t whysz);

/*
 * Parse numeric IP addresses separated by commas or blanks into out (at
 * most max, each as 16 bytes: IPv4 as IPv4-mapped IPv6; out may be NULL
 * to check only), their number into *n_r (may be NULL).  0, or -1 with
 * why.
 */
int listcfg_addrs_parse(const char *s, unsigned char (*out)[16], size_t max,
    size_t *n_r, char *why, size_t whysz);

/*
 * Parse host names separated by commas or blanks (web_allowed_hosts):
 * each a DNS name (letters, digits, '-', '_', dots; a final dot
 * dropped), a numeric IPv4 address or an IPv6 one in brackets, without
 * a port, into out (lower case; IPv6 as inet_ntop writes it, in
 * brackets; at most max; out may be NULL to check only), their number
 * into *n_r (may be NULL).  0, or -1 with why.
 */
int listcfg_hosts_parse(const char *s, char (*out)[LG_MAX_HOST_NAME + 1],
    size_t max, size_t *n_r, char *why, size_t whysz);

/*
 * The host of a Host header value h (the port, one final dot and the
 * case dropped; an IPv6 address in brackets, as inet_ntop writes it)
 * into out: 1 a name, 2 an IP address or "localhost" (which no other
 * site can be reached by), 0 malformed.
 */
int listcfg_host_header(const char *h, char out[LG_MAX_HOST_NAME + 1]);

/* print the effective settings (defaults included) as `key = value`
 * lines that load back to the same settings (the database's password
 * masked): 0, or -1 when out of memory (part may be printed) */
int listcfg_print_global(FILE *f, const struct listcfg_global *g);
int listcfg_print_list(FILE *f, const struct listcfg_list *l);

/* print the table of keys, one a line, tab-separated: name, file
 * (global or list), type, default, range, description; a first line
 * starting with '#' names the columns */
void listcfg_print_keys(FILE *f);

#endif
