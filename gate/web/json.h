/*
 * json.h - the little JSON the API reads: string members of a request
 * body's top-level object
 *
 * Input is hostile: the parser checks the whole body (RFC 8259 syntax,
 * nesting at most JSON_MAX_DEPTH, valid \u escapes and surrogate
 * pairs), never reads past the given length, never allocates.  A
 * string that does not fit, holds a NUL (\u0000) or is not valid UTF-8
 * is an error.  Never logs or exits.
 */
#ifndef LG_JSON_H
#define LG_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH	32

/* json_get_str's answer for a member given twice */
#define JSON_TWICE	(-2)

/*
 * The string value of member key of the object that is the n bytes at
 * s, decoded to UTF-8 into out (outsz bytes, NUL-terminated).  Returns
 * 1 found, 0 the object has no such member (or it is not a string:
 * *notstr_r is then set, when not NULL), -1 the body is not one valid
 * JSON object, or a string does not fit, JSON_TWICE when the object has
 * two members called key (whatever their values; out then empty).
 */
int json_get_str(const char *s, size_t n, const char *key, char *out,
    size_t outsz, int *notstr_r);

#endif
