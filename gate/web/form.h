/*
 * form.h - application/x-www-form-urlencoded bodies and query strings
 *
 * Input is hostile: a pair whose decoded key or value does not fit the
 * caller's buffer, a bad %XX escape or a decoded NUL byte makes the body
 * malformed (-1); nothing is ever read past the given length.  Never
 * allocates, logs or exits.
 */
#ifndef LG_FORM_H
#define LG_FORM_H

#include <stddef.h>

struct form_iter {
	const char *p, *end;
};

/* start iterating over the n bytes at data */
void form_init(struct form_iter *it, const void *data, size_t n);

/*
 * The next key=value pair ('+' as space, %XX decoded; a pair without
 * '=' has the value ""), NUL-terminated into k (ksz bytes) and v (vsz
 * bytes): 1 a pair, 0 the end, -1 malformed.
 */
int form_next(struct form_iter *it, char *k, size_t ksz, char *v,
    size_t vsz);

/* form_get's answer for a key given twice */
#define FORM_TWICE	(-2)

/* the value of the pair called key into v: 1 found, 0 absent, -1 when
 * that value is malformed or does not fit (other pairs are not
 * decoded), FORM_TWICE when two pairs are called key (v then empty:
 * which one the sender meant is anyone's guess) */
int form_get(const void *data, size_t n, const char *key, char *v,
    size_t vsz);

#endif
