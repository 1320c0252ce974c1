/*
 * notice.h - the messages moderation by mail writes: the hold notice,
 * the digest, and short answers (to a moderator's reply, to the sender
 * of a rejected post)
 *
 * Pure functions: the post, its envelope and its deciding tokens are
 * hostile and reach a message only through the one sanitizer
 * (gate/util/sanitize.h: controls, bidi controls and bad UTF-8 masked,
 * lengths cut), header text RFC 2047-encoded when it is not plain
 * ASCII or holds "=?", the text part quoted-printable with short lines;
 * the preview is the post's decoded text (gate/mail: HTML already
 * turned to text), each line quoted with "| ".  The original is
 * attached byte for byte as message/rfc822 under a boundary it does
 * not contain.  Output is bounded (the post plus NOTICE_MAX_TEXT); the
 * only failure is out of memory.  Nothing here logs or exits.
 */
#ifndef LG_NOTICE_H
#define LG_NOTICE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/moderate/cookie.h"

struct buf;

/* the deciding tokens a notice lists */
#define NOTICE_TOKENS		10
/* the preview: lines, and characters per line */
#define NOTICE_PREVIEW_LINES	20
#define NOTICE_PREVIEW_COLS	76
/* a larger post is not attached whole: its header block is */
#define NOTICE_MAX_ATTACH	(10u * 1024u * 1024u)
/* the text a notice adds to the post it attaches, at most */
#define NOTICE_MAX_TEXT		(256u * 1024u)
/* posts listed in one digest */
#define NOTICE_MAX_DIGEST	200
/* an action address (COOKIE_MAX_ADDR plus the action part) */
#define NOTICE_MAX_ADDR		(COOKIE_MAX_ADDR + 64)

/* a held post as a notice shows it (strings may be "", never NULL) */
struct notice_post {
	const char *list;
	int64_t id;
	const char *env_sender;
	const char *from, *subject;	/* decoded header text, untrusted */
	double score;
	const char *verdict;
	const char *clues;		/* "TOKEN F NSPAM NHAM" lines */
	const char *note;		/* why it was held when not for its
					 * score ("deliver refused the post:
					 * ..."), untrusted; NULL or "" */
	const unsigned char *raw;	/* the post as received (NULL in a
					 * digest: not needed) */
	size_t raw_len;
	size_t size;			/* its size (when raw is NULL, or
					 * holds only its first raw_len
					 * bytes; 0: raw_len) */
	time_t arrived;
	const unsigned char *raw_sha256;	/* the SHA-256 of its bytes
						 * (the cookies' binding) */
};

/* a notice's three action addresses and their expiry */
struct notice_links {
	char approve[NOTICE_MAX_ADDR];
	char reject[NOTICE_MAX_ADDR];
	char discard[NOTICE_MAX_ADDR];
	time_t expiry;
};

/* the envelope of a message: its From (the moderation address), To and
 * Date, and the site's secret that seals it (X-Listgate-Seal, see
 * notice_is_ours).  The key is required: every message listgate sends
 * is built here and sealed, and with key NULL (or empty) notice_hold,
 * notice_digest and notice_answer build nothing and return -1 */
struct notice_to {
	const char *from;
	const char *to;
	time_t now;
	const struct cookie_key *key;
};

/*
 * The hold notice about p to h->to: From the moderation address,
 * Reply-To the approve address, Subject "[L] held: SUBJECT (score S)"
 * ("(not scored: oversize)" for a post held unscored);
 * a text part with sender, subject, date, size, score, verdict, the
 * NOTICE_TOKENS deciding tokens with their probabilities, the preview
 * and the three mailto: links; the post attached as message/rfc822.
 * remind: say it is a reminder.  Appends to out: 0, or -1 when out of
 * memory (out's max included) or h->key is NULL.
 */
int notice_hold(const struct notice_post *p, const struct notice_links *ln,
    const struct notice_to *h, int remind, struct buf *out);

/*
 * One digest of the n held posts p of list (at most NOTICE_MAX_DIGEST
 * are listed): each with its sender, subject, score and three links;
 * more: posts waiting besides, not listed (a later digest's), which the
 * subject counts and a "(N more: ...)" line names.  0, or -1 when out
 * of memory or h->key is NULL.
 */
int notice_digest(const char *list, const struct notice_post *p,
    const struct notice_links *ln, size_t n, size_t more,
    const struct notice_to *h, struct buf *out);

/*
 * A short text message: Subject "[L] SUBJECT" (subject is ours, ASCII
 * or already sanitized), In-Reply-To in_reply_to when it is a plain
 * <...> message-id (else left out), Auto-Submitted: auto-replied, the
 * text (UTF-8, ours or sanitized) as quoted-printable.  0, or -1 (out
 * of memory, h->key NULL).
 */
int notice_answer(const char *list, const char *subject,
    const char *in_reply_to, const char *text, const struct notice_to *h,
    struct buf *out);

/* 1 if a is an address a message may go to: ASCII, no blanks, controls,
 * quotes, brackets, commas, colons or semicolons, one local part and a
 * domain, at most COOKIE_MAX_ADDR bytes; else 0 */
int notice_addr_ok(const char *a);

/* 1 if raw (len bytes) is a message listgate wrote under key: a hold
 * notice, a digest or an answer, whose top-level header (the first
 * LG_MAX_HEADER_BYTES looked at) has X-Listgate-List, Message-ID and
 * an X-Listgate-Seal that is their seal under key (cookie_seal); else
 * 0 (key NULL: 0).  Such a message that reaches a list (a moderator's
 * address that leads back to a list listgate filters) gets no notice of
 * its own: each notice would be held and noticed again, for ever.  Any
 * post may carry X-Listgate-List: without the seal it is noticed as
 * any other */
int notice_is_ours(const unsigned char *raw, size_t len,
    const struct cookie_key *key);

/* append n bytes of untrusted s to out through the sanitizer, on one
 * line, at most maxchars characters: 0, or -1 */
int notice_clean(struct buf *out, const void *s, size_t n, size_t maxchars);

#endif
