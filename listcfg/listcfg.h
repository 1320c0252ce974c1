/*
 * listcfg.h - global and per-list configuration
 *
 * A directory (/etc/listgate unless --config DIR or LISTGATE_CONFIG names
 * another) holding listgate.conf and lists/L.conf: `key = value` lines,
 * `#` comments.  Unknown keys, bad values, unsafe templates and unreadable
 * files are errors whose message names file and line.  A list without a
 * file of its own uses the defaults.
 */
#ifndef LG_LISTCFG_H
#define LG_LISTCFG_H

#include <stddef.h>
#include <stdio.h>

#include "gate/bayes.h"
#include "gate/util/lglimits.h"
#include "gate/outcome.h"

/* default cutoffs, chosen by cross-validation, tests/bench/README.md;
 * spam_cutoff only labels held posts */
#define LG_DEFAULT_HAM_CUTOFF		0.3
#define LG_DEFAULT_SPAM_CUTOFF		0.9999
/* discard_cutoff "off": no score reaches it */
#define LG_DISCARD_OFF			2.0
#define LG_DEFAULT_LOCK_WAIT_MS		5000u
#define LG_DEFAULT_TIMEOUT_S		300u	/* Postfix kills at 1000 s */
#define LG_DEFAULT_HOLD_EXPIRY_DAYS	14u

struct listcfg_global {
	char *dir;		/* the configuration directory */
	char *tokens_dir;	/* absolute; default DIR/tokens */
	char *conninfo;		/* PostgreSQL conninfo/URI, NULL when not set */
	char *sync_conninfo;	/* the journal's reads (sync, rebuild), e.g.
				 * a hot standby; NULL: conninfo */
	int log_facility;	/* syslog facility, default LOG_MAIL */
	enum mta mta;		/* default dialect for filter, default qmail */
	unsigned lock_wait_ms;	/* token file lock wait, default 5000 */
	unsigned timeout_s;	/* filter watchdog, default 300 */
};

enum on_error {
	ON_ERROR_DEFER,		/* temporary failure: the MTA retries (default) */
	ON_ERROR_PASS		/* pass the post on when the filter cannot work */
};

struct listcfg_list {
	char name[LG_MAX_LIST_NAME + 1];
	double ham_cutoff;	/* pass below this */
	double spam_cutoff;	/* verdict spam at or above (unsure between) */
	double discard_cutoff;	/* discard at or above; > 1 means off */
	char **deliver;		/* argv template (NULL-terminated) or NULL */
	char **release;		/* argv template or NULL */
	char **moderators;	/* addresses, NULL-terminated, or NULL */
	enum on_error on_error;
	size_t max_scan_bytes;
	size_t max_post_bytes;	/* larger posts are deferred (LG_MAX_POST_BYTES) */
	unsigned hold_expiry_days;
	unsigned timeout_s;	/* watchdog for this list (default: global) */
	struct bayes_params bayes;
	int has_file;		/* lists/L.conf existed */
};

/* the configuration directory: opt if given, else $LISTGATE_CONFIG, else
 * the compiled-in /etc/listgate */
const char *listcfg_dir(const char *opt);

/* 1 if name is a valid list name ([a-z0-9][a-z0-9._-]*, at most 64
 * bytes, and no ".."), else 0 */
int listcfg_name_ok(const char *name);

/* load DIR/listgate.conf (defaults when the file is missing, error when
 * DIR itself is missing or unreadable): 0, or -1 with err */
int listcfg_load_global(const char *dir, struct listcfg_global *g,
    char *err, size_t errsz);
void listcfg_free_global(struct listcfg_global *g);

/* load lists/NAME.conf over the defaults: 0, or -1 with err.  The name
 * is checked before any path is built. */
int listcfg_load_list(const struct listcfg_global *g, const char *name,
    struct listcfg_list *l, char *err, size_t errsz);
void listcfg_free_list(struct listcfg_list *l);

/* the list's token file, tokens_dir/NAME.kch: 0, or -1 (bad name, too long) */
int listcfg_tokens_path(const struct listcfg_global *g, const char *name,
    char *out, size_t outsz);

/* values for template placeholders {sender} {recipient} {list} */
struct listcfg_vars {
	const char *sender, *recipient, *list;
};

/* expand an argv template: each placeholder stays within its own argument
 * (it never splits into several); "{{" stands for a literal "{".  A NULL
 * value expands to "".  *argv_r is NULL-terminated, free with
 * listcfg_free_argv.  0, or -1 when out of memory, when an argument would
 * exceed LG_MAX_ARG_BYTES or on an unknown placeholder. */
int listcfg_expand(char *const *tmpl, const struct listcfg_vars *v,
    char ***argv_r);
void listcfg_free_argv(char **argv);

/* print the effective settings (defaults included) as `key = value`
 * lines that load back to the same settings */
void listcfg_print_global(FILE *f, const struct listcfg_global *g);
void listcfg_print_list(FILE *f, const struct listcfg_list *l);

#endif
