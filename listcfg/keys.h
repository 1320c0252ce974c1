/*
 * keys.h - every configuration key in one table
 *
 * One row per key: its name, its file (listgate.conf or lists/L.conf),
 * its type, the struct field it fills, its default, its range and a
 * one-line description.  The table drives loading (keys_defaults,
 * keys_set), `listgate config check` (listcfg_print_global/list) and
 * `listgate config keys`, which docs/mancheck.sh holds against
 * listgate.conf(5).
 *
 * Adding a key is one row in keys.c plus a field in struct
 * listcfg_global or struct listcfg_list, of the C type of its value
 * type (KEYS_FIELD checks it when compiling):
 *
 *	{ .name = "cookie_days", KEYS_FIELD(LIST, UNSIGNED, cookie_days),
 *	  .def = 7, .lo = 1, .hi = 365,
 *	  .doc = "days a moderation cookie stays valid" },
 *
 * and its .TP entry in docs/listgate.conf.5 with "Default: 7", which
 * docs/mancheck.sh asks for.
 */
#ifndef LG_KEYS_H
#define LG_KEYS_H

#include <stddef.h>

#include "listcfg/cfgfile.h"

/* which file a key belongs in */
enum keys_scope {
	KEYS_GLOBAL,		/* listgate.conf: struct listcfg_global */
	KEYS_LIST		/* lists/L.conf: struct listcfg_list */
};

/* the value types, with the C type of their field */
enum keys_type {
	KEYS_DOUBLE,		/* double: a decimal number in [lo, hi] */
	KEYS_DOUBLE_OFF,	/* double: the same, or "off" (LG_OFF) */
	KEYS_UNSIGNED,		/* unsigned: a whole number in [lo, hi] */
	KEYS_SIZE,		/* size_t: bytes, a whole number in [lo, hi] */
	KEYS_STRING,		/* char *: any text; NULL when not set */
	KEYS_CONNINFO,		/* char *: a libpq connection string, printed
				 * with its password masked */
	KEYS_PATH,		/* char *: a path, absolute once loaded (a
				 * relative one is in the configuration dir) */
	KEYS_ENUM,		/* int: one of choices (values[i], else i) */
	KEYS_ARGV,		/* char **: an argv template (listcfg/tmpl.h) */
	KEYS_ADDRS,		/* char **: mail addresses, separated by
				 * commas or blanks */
	KEYS_ADDR		/* char *: one mail address; NULL when not
				 * set */
};

/* flags */
#define KEYS_LO_OPEN	0x1	/* lo itself is out of range */
#define KEYS_HI_OPEN	0x2	/* hi itself is out of range */
#define KEYS_ANYCASE	0x4	/* choices match in any case */
#define KEYS_NOTIFY	0x8	/* KEYS_ARGV: the placeholders of a notice
				 * command (listcfg/tmpl.h TMPL_NOTIFY) */

struct keys_row {
	const char *name;
	enum keys_scope scope;
	enum keys_type type;
	size_t off;		/* the field (offsetof; use KEYS_FIELD) */
	double def;		/* default of the numbers (LG_OFF: "off") */
	const char *def_s;	/* default of strings, paths and choices; NULL:
				 * not set (enums must have one) */
	const char *def_global;	/* or: the default is this global key's value */
	double lo, hi;		/* range of the numbers */
	unsigned flags;		/* KEYS_LO_OPEN, KEYS_HI_OPEN, KEYS_ANYCASE */
	const char *const *choices; /* enums: the names, NULL-terminated */
	const int *values;	/* enums: the value stored for each, or NULL */
	const char *what;	/* enums: what a choice is, for errors */
	const char *doc;	/* one line for `listgate config keys` */
	/* strings: a check of the value (NULL: any text): 0, or -1 with
	 * what is wrong in why */
	int (*check)(const char *val, char *why, size_t whysz);
};

/* the C types behind KEYS_FIELD */
#define KEYS_CT_DOUBLE		double
#define KEYS_CT_DOUBLE_OFF	double
#define KEYS_CT_UNSIGNED	unsigned
#define KEYS_CT_SIZE		size_t
#define KEYS_CT_STRING		char *
#define KEYS_CT_CONNINFO	char *
#define KEYS_CT_PATH		char *
#define KEYS_CT_ENUM		int
#define KEYS_CT_ARGV		char **
#define KEYS_CT_ADDRS		char **
#define KEYS_CT_ADDR		char *
#define KEYS_ST_GLOBAL		struct listcfg_global
#define KEYS_ST_LIST		struct listcfg_list

/* .scope, .type and .off of a row: field f of the struct of scope sc,
 * which must have the C type of value type ty (else a negative array
 * size stops the build) */
#define KEYS_FIELD(sc, ty, f)						\
	.scope = KEYS_##sc, .type = KEYS_##ty,				\
	.off = offsetof(KEYS_ST_##sc, f) + 0 * sizeof(char[1 - 2 *	\
	    !__builtin_types_compatible_p(__typeof__(((KEYS_ST_##sc *)0)->f), \
	    KEYS_CT_##ty)])

/* every key, global ones first; ends with a row whose name is NULL */
extern const struct keys_row keys_table[];

/* the row of key name in scope, or NULL */
const struct keys_row *keys_find(enum keys_scope scope, const char *name);

/*
 * Set every key of scope in obj (a struct listcfg_global or
 * listcfg_list) to its default.  global gives the defaults taken from a
 * global key (NULL for scope KEYS_GLOBAL); dir is the configuration
 * directory, for default paths.  0, or -1 when out of memory (what was
 * set is freed by keys_free).
 */
int keys_defaults(enum keys_scope scope, void *obj, const void *global,
    const char *dir);

/*
 * Parse raw (the text after "key =") into k's field of obj; a relative
 * path is taken from dir.  0, or -1 after cfgfile_error: FILE:LINE, the
 * key, the bad value and what it may be.
 */
int keys_set(const struct keys_row *k, struct cfgfile *cf, const char *raw,
    void *obj, const char *dir);

/* free every string of scope's keys in obj and set them to NULL */
void keys_free(enum keys_scope scope, void *obj);

/* k's field in obj */
void *keys_field(const struct keys_row *k, void *obj);
const void *keys_cfield(const struct keys_row *k, const void *obj);

/* the choice stored as v in an enum key's field, or NULL */
const char *keys_choice(const struct keys_row *k, int v);

/* the type's name for people: "double", "unsigned", "size", ... */
const char *keys_type_name(enum keys_type t);

#endif
