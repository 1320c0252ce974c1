/*
 * tmpl.h - argv templates: the deliver and release commands
 *
 * A template is split into words when the configuration is loaded
 * (tmpl_parse) and expanded for each post (tmpl_expand).  It never meets
 * a shell: the words become execv's argv, and an envelope value fills a
 * placeholder inside one word without ever splitting it.
 */
#ifndef LG_TMPL_H
#define LG_TMPL_H

#include <stddef.h>

/* values for the placeholders {sender} {recipient} {list} */
struct tmpl_vars {
	const char *sender, *recipient, *list;
};

/*
 * Split text (a configuration value, its trailing comment included) into
 * a template: words at blanks, double quotes group a word and may be
 * mixed with unquoted text (\" and \\ the only escapes), a word starting
 * with '#' begins the comment, at most LG_MAX_ARGV words.  Placeholders
 * are {sender}, {recipient} and {list}; "{{" is a literal '{', any
 * other '{' an error.  The first word is the program: an absolute path
 * without placeholders.  0 with *argv_r NULL-terminated (free with
 * tmpl_free), or -1 with the reason in err (without the key's name).
 */
int tmpl_parse(const char *text, char ***argv_r, char *err, size_t errsz);

/*
 * Expand a template: each placeholder stays within its own argument
 * (it never splits into several); "{{" stands for a literal "{".  A NULL
 * value expands to "".  *argv_r is NULL-terminated, free with
 * tmpl_free.  0, or -1 when out of memory, when an argument would
 * exceed LG_MAX_ARG_BYTES or on an unknown placeholder.
 */
int tmpl_expand(char *const *tmpl, const struct tmpl_vars *v,
    char ***argv_r);

/* free a NULL-terminated vector of strings (NULL is fine) */
void tmpl_free(char **argv);

#endif
