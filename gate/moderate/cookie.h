/*
 * cookie.h - the keyed cookies of moderation by mail and the action
 * addresses that carry them
 *
 * An action address is LOCAL{delim}ACTION-ID-COOKIE@DOMAIN, where
 * LOCAL@DOMAIN is the list's moderation_address, ACTION is approve,
 * reject or discard, ID the held post's number, and COOKIE
 * COOKIE_EXPIRY_CHARS characters of expiry (Unix seconds in base 36)
 * followed by COOKIE_MAC_CHARS characters of HMAC-SHA256 (GNU Nettle)
 * under the site's secret over the list, the id, the action and the
 * expiry.  Lower-case letters and digits only: an MTA may fold the case
 * of a local part, so parsing folds it back.
 *
 * The address comes from the MTA's envelope and is hostile:
 * cookie_parse is a pure function (no allocation, no state, bounded by
 * COOKIE_MAX_ADDR) that never fails on any byte sequence, only refuses
 * with a reason.  The MAC is compared in constant time.  Nothing here
 * logs or exits.
 */
#ifndef LG_COOKIE_H
#define LG_COOKIE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* characters of the expiry: base 36 up to the year 4400 */
#define COOKIE_EXPIRY_CHARS	7
/* characters of the MAC, 5 bits each: 100 bits, and each guess costs
 * the guesser a mail */
#define COOKIE_MAC_CHARS	20
#define COOKIE_CHARS		(COOKIE_EXPIRY_CHARS + COOKIE_MAC_CHARS)
/* a longer recipient is not an action address (RFC 5321: 64 + 1 + 255) */
#define COOKIE_MAX_ADDR		320
/* the secret's bounds in bytes */
#define COOKIE_MIN_KEY		32
#define COOKIE_MAX_KEY		1024

enum cookie_action {
	COOKIE_APPROVE,
	COOKIE_REJECT,
	COOKIE_DISCARD
};

/* why an address or a cookie is refused (0: it is not) */
#define COOKIE_OK		0
#define COOKIE_ESYNTAX		1	/* not LOCAL{delim}ACTION-ID-COOKIE@DOMAIN */
#define COOKIE_EACTION		2	/* no such action */
#define COOKIE_EID		3	/* the post number is not a number */
#define COOKIE_EFORM		4	/* the cookie has the wrong length or
					 * characters */
#define COOKIE_EMISMATCH	5	/* changed, or made for another list,
					 * post or action */
#define COOKIE_EEXPIRED		6	/* genuine but past its expiry */

/* an action address taken apart; the strings are NUL-terminated and
 * point nowhere else */
struct cookie_addr {
	char local[COOKIE_MAX_ADDR + 1];	/* LOCAL, as received */
	char domain[COOKIE_MAX_ADDR + 1];	/* DOMAIN, lower case */
	int delim;				/* the delimiter character */
	enum cookie_action action;
	int64_t id;				/* > 0 */
	char cookie[COOKIE_CHARS + 1];		/* lower case */
	time_t expiry;				/* decoded from the cookie */
};

/* the site's secret */
struct cookie_key {
	unsigned char k[COOKIE_MAX_KEY];
	size_t len;
};

/*
 * Take the n bytes at addr apart (an optional "<...>" around it; any
 * bytes at all).  COOKIE_OK with *a filled, else the reason
 * (COOKIE_ESYNTAX, COOKIE_EACTION, COOKIE_EID or COOKIE_EFORM).  Pure.
 */
int cookie_parse(const char *addr, size_t n, struct cookie_addr *a);

/* the cookie for list, id, action and expiry under key, into out
 * (COOKIE_CHARS + 1 bytes) */
void cookie_make(const struct cookie_key *key, const char *list, int64_t id,
    enum cookie_action action, time_t expiry, char *out);

/*
 * Check a parsed address's cookie for list at time now: COOKIE_OK,
 * COOKIE_EMISMATCH (the MAC, compared in constant time, does not match:
 * a changed character, another list, post or action) or COOKIE_EEXPIRED
 * (genuine, but expired).
 */
int cookie_check(const struct cookie_key *key, const char *list,
    const struct cookie_addr *a, time_t now);

/*
 * The action address for moderation address modaddr (LOCAL@DOMAIN),
 * delimiter delim, action, id and cookie into out: 0, or -1 when
 * modaddr has no '@' or out is too small.
 */
int cookie_address(const char *modaddr, int delim, enum cookie_action action,
    int64_t id, const char *cookie, char *out, size_t outsz);

/* "approve", "reject", "discard" */
const char *cookie_action_name(enum cookie_action action);

/* a reason code as text for the answer and the log */
const char *cookie_why(int code);

/*
 * Load the secret from path: a regular file of COOKIE_MIN_KEY to
 * COOKIE_MAX_KEY bytes (a final newline is not part of it) that neither
 * group nor others may read.  0, or -1 with err naming the file.
 */
int cookie_load_key(const char *path, struct cookie_key *key, char *err,
    size_t errsz);

#endif
