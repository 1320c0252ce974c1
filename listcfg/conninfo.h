/*
 * conninfo.h - a PostgreSQL connection string with its passwords masked
 *
 * For printing the `database` setting (`listgate config check`) without
 * libpq: both of libpq's forms are read by hand, and whatever the text
 * looks like the result carries no password.
 */
#ifndef LG_CONNINFO_H
#define LG_CONNINFO_H

/* what stands in for a password */
#define CONNINFO_MASK	"********"

/*
 * conninfo with every password replaced by CONNINFO_MASK, as a new
 * string (xfree it), or NULL when out of memory.
 *
 * A `key=value ...` list comes back as key='value' pairs (one blank
 * apart, ' and \ escaped) with the values of the secret keywords
 * (password, sslpassword, ...) masked.  A postgresql:// or postgres://
 * URI comes back as a URI with the password of its user part and the
 * secret parameters masked.  From the first point where the text leaves
 * libpq's syntax (a key without '=', a keyword libpq does not know, an
 * unterminated quote, a stray '@', an odd host or parameter) everything
 * is masked: a misplaced password is never shown.
 */
char *conninfo_mask(const char *conninfo);

#endif
