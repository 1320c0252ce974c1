/*
 * cookie.h - the keyed cookies of moderation by mail and the action
 * addresses that carry them
 *
 * An action address is LOCAL{delim}ACTION-ID-COOKIE@DOMAIN, where
 * LOCAL@DOMAIN is the list's moderation_address, ACTION is approve,
 * reject or discard, ID the held post's number, and COOKIE
 * COOKIE_EXPIRY_CHARS characters of expiry (Unix seconds in base 36)
 * followed by COOKIE_MAC_CHARS characters of HMAC-SHA256 (GNU Nettle)
 * under the site's secret: the first COOKIE_MAC_CHARS - COOKIE_BIND_CHARS
 * over the list, the id, the action and the expiry, the last
 * COOKIE_BIND_CHARS over those, the post's SHA-256 and the moderator the
 * notice went to, so that a cookie made for a post decides no other post
 * that later took its number (a failover or a restore hands ids out
 * again), and a notice stops working once its moderator is removed from
 * the list's moderators.  Lower-case letters and
 * digits only: an MTA may fold the case of a local part, so parsing
 * folds it back.
 *
 * A cookie made before posts were bound (before listgate 0.2.0) has the
 * first MAC's COOKIE_MAC_CHARS characters whole; it is still taken, for
 * any post under its number, until it expires (cookie_days).
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
/* characters of the MACs, 5 bits each: 60 over the list, number,
 * action and expiry (checked before the database is asked) and 40 that
 * bind the post and the moderator; a forgery must match all 100 (a
 * little less: the last 40 may be any moderator's or the old MAC's),
 * and each guess costs the guesser a mail */
#define COOKIE_MAC_CHARS	20
#define COOKIE_BIND_CHARS	8
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
#define COOKIE_EPOST		7	/* genuine for the list and number,
					 * but made for another post (the
					 * number reused) or changed in its
					 * last characters */

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

/* the cookie for list, id, action and expiry under key, bound to the
 * post whose SHA-256 (held_posts.raw_sha256) is post_sha256 and to the
 * moderator the notice goes to, into out (COOKIE_CHARS + 1 bytes) */
void cookie_make(const struct cookie_key *key, const char *list, int64_t id,
    enum cookie_action action, time_t expiry,
    const unsigned char post_sha256[32], const char *moderator, char *out);

/*
 * Check a parsed address's cookie for list at time now, the MACs
 * compared in constant time: COOKIE_EMISMATCH (a changed character,
 * another list, number or action), else with post_sha256 set
 * COOKIE_EPOST (made neither for the post with that SHA-256 and one of
 * the NULL-terminated moderators, nor before cookies were bound), else
 * COOKIE_EEXPIRED (genuine, but expired) or COOKIE_OK.  *which_r (when
 * which_r is set) is the index in moderators of the moderator it was
 * made for, or -1 (a cookie from before, or post_sha256 NULL).
 * post_sha256 NULL checks all but the post and the moderator, a check
 * that needs no database: the full one must follow.
 */
int cookie_check(const struct cookie_key *key, const char *list,
    const struct cookie_addr *a, const unsigned char *post_sha256,
    const char *const *moderators, int *which_r, time_t now);

/*
 * The action address for moderation address modaddr (LOCAL@DOMAIN),
 * delimiter delim, action, id and cookie into out: 0, or -1 when
 * modaddr has no '@' or out is too small.
 */
int cookie_address(const char *modaddr, int delim, enum cookie_action action,
    int64_t id, const char *cookie, char *out, size_t outsz);

/* characters of a message's seal (X-Listgate-Seal), 5 bits each */
#define COOKIE_SEAL_CHARS	32

/* the seal of a message listgate wrote for list with Message-ID msgid
 * (as its header gives it), under key, into out (COOKIE_SEAL_CHARS + 1
 * bytes): what tells listgate's own notices from a post that only
 * copies their fields */
void cookie_seal(const struct cookie_key *key, const char *list,
    const char *msgid, char *out);

/* 1 if the n bytes at seal are the seal of list and msgid under key
 * (compared in constant time), else 0 */
int cookie_seal_ok(const struct cookie_key *key, const char *list,
    const char *msgid, const char *seal, size_t n);

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
