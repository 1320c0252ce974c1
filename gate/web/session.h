/*
 * session.h - login sessions of the web page, kept in memory
 *
 * A session is named by 32 random bytes (64 hex digits, the cookie) and
 * carries its own CSRF token (another 32 random bytes) that every POST
 * from its pages must send back.  Only the SHA-256 of a session id is
 * kept; ids and tokens are compared in constant time.  A session ends
 * after SESSION_IDLE_S without a request, after SESSION_MAX_S in all, at
 * logout, when its user starts more than SESSION_PER_USER and it is the
 * least recently used of them, or when the table is full and it is the
 * least recently used.
 * A restart of the server ends every session.  Thread-safe (one mutex);
 * never logs or exits.
 */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stddef.h>
#include <time.h>

#include "listcfg/users.h"

/* 32 random bytes as hex, and the NUL */
#define SESSION_HEX		65
/* a session unused this long ends */
#define SESSION_IDLE_S		(2 * 3600)
/* and every session ends this long after its login */
#define SESSION_MAX_S		(12 * 3600)
/* the message shown once on the next page (a decision's outcome) */
#define SESSION_FLASH		512
/* bytes that tie a session to the account's password at its login */
#define SESSION_TAG		16
/* sessions one account may have at once: its least recently used goes
 * first (one account cannot push everyone else's out of the table) */
#define SESSION_PER_USER	16

struct session_store;

/* what a request learns from its session */
struct session_view {
	char user[USERS_MAX_NAME + 1];
	unsigned char tag[SESSION_TAG];	/* as given to session_start */
	char csrf[SESSION_HEX];
	char flash[SESSION_FLASH];	/* "" when none; taken by the find */
};

/* a store of at most max sessions; NULL when out of memory */
struct session_store *session_store_new(size_t max);
void session_store_free(struct session_store *s);

/* start a session for user, tagged with tag (the caller's tie to the
 * account): its id into sid; 0, or -1 when the kernel gave no random
 * bytes.  A user with SESSION_PER_USER sessions loses the least
 * recently used of them. */
int session_start(struct session_store *s, const char *user,
    const unsigned char tag[SESSION_TAG], time_t now, char sid[SESSION_HEX]);

/* the live session sid (its flash message taken): 1 found, filled into
 * v; 0 none (unknown, ended, malformed) */
int session_find(struct session_store *s, const char *sid, time_t now,
    struct session_view *v);

/* leave a message for the session's next page */
void session_flash(struct session_store *s, const char *sid,
    const char *msg);

/* end the session sid (logout) */
void session_end(struct session_store *s, const char *sid);

/* 1 when token (from a request) is the CSRF token csrf, else 0
 * (constant time) */
int session_csrf_ok(const char *csrf, const char *token);

/* the distinct session ids a Cookie header value hdr gives the cookie
 * name (pairs split at ';', blanks around them dropped, a value in
 * double quotes unquoted), only those that could be ids (64 lower-case
 * hex digits), added to ids[*n_r ...] up to max in all.  Returns 0, or
 * -1 when there were more than max distinct ones (ids holds max).
 * Pure: hostile input, never allocates. */
int session_cookie_ids(const char *hdr, const char *name,
    char ids[][SESSION_HEX], size_t max, size_t *n_r);

/* fill out with n random bytes as hex (2n + 1 bytes): 0, or -1 */
int session_random_hex(char *out, size_t n);

#endif
