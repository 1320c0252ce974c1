/*
 * suggest.h - the listgate command line a message suggests running
 *
 * Messages name other commands to run ("run `listgate rebuild --list
 * dev`", "`listgate migrate`", a web page's "listgate approve --force
 * ID").  Pasted, a command without --config acts on the default
 * configuration's list and database (/etc/listgate), not on the one in
 * use: so each names the configuration directory when it is not the
 * default, shell-quoted.  main sets the directory once at start-up;
 * library code only reads it.  Never allocates, never fails.
 */
#ifndef LG_SUGGEST_H
#define LG_SUGGEST_H

#include <stddef.h>

/*
 * s as one word of a POSIX shell into out (sz bytes, NUL-terminated,
 * cut at sz like snprintf's): as it is when it holds only characters no
 * shell takes specially (letters, digits, _./,:=@%+-), else in single
 * quotes, each ' as '\''.  Returns the length it wanted.
 */
size_t suggest_quote(char *out, size_t sz, const char *s);

/*
 * The configuration directory a suggested command must name: an absolute
 * path, or NULL (the default configuration: nothing to name).  Set once
 * at start-up, before any message.
 */
void suggest_set_config(const char *dir);

/*
 * The start of a suggested command: "listgate", or "listgate --config
 * 'DIR'" when suggest_set_config named one.  Static storage, valid until
 * the next suggest_set_config; safe in a signal handler.
 */
const char *suggest_cmd(void);

#endif
