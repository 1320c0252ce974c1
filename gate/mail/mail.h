/*
 * mail.h - one-pass parser for inbound posts: RFC 5322 headers, MIME,
 * transfer decodings, RFC 2047/2231, charsets to UTF-8, HTML to text
 *
 * Input is hostile.  Every size is bounded by struct mail_limits; an
 * overrun truncates and reports an anomaly event, it never fails the
 * walk.  The parser never logs and never exits; it fails (-1) only when
 * memory runs out or the callback asks it to stop.
 */
#ifndef LG_MAIL_H
#define LG_MAIL_H

#include <stddef.h>

#include "gate/util/buf.h"

struct mail_limits {
	size_t max_scan;	/* bytes of the post looked at (LG_MAX_SCAN_BYTES) */
	size_t max_header;	/* bytes of one entity's header block */
	size_t max_fields;	/* header fields per entity */
	size_t max_field;	/* bytes of one unfolded field */
	size_t max_boundary;	/* bytes of a MIME boundary */
	unsigned max_depth;	/* MIME nesting depth */
	unsigned max_parts;	/* MIME parts per post */
	size_t max_decoded;	/* decoded text bytes handed out per post */
	int html_source;	/* 1: a text/html part's MAIL_TEXT is its
				 * HTML itself (in UTF-8), not turned to
				 * text, and no MAIL_HIDDEN follows: for a
				 * reader of its elements (0 by default) */
};

/* fill in the LG_MAX_* defaults (html_source 0) */
void mail_limits_default(struct mail_limits *lim);

enum mail_kind {
	MAIL_HEADER,	/* one header field of an entity */
	MAIL_TEXT,	/* decoded text of a text/ part, as UTF-8 */
	MAIL_PART,	/* a non-text leaf part (attachment): type and name only */
	MAIL_ANOMALY,	/* something malformed or truncated was seen */
	MAIL_HIDDEN	/* the text of an HTML part's hidden elements, after
			 * its MAIL_TEXT: what a reader is not shown */
};

struct mail_event {
	enum mail_kind kind;
	unsigned depth;		/* 0: the post's own header and body */
	/* MAIL_HEADER: field name as received (NUL-terminated) */
	const char *name;
	/*
	 * MAIL_HEADER: the unfolded value with RFC 2047 words decoded (but
	 * in Received, a structured field that holds none), UTF-8;
	 * MAIL_TEXT: the part's decoded text as UTF-8 (HTML already turned to
	 * text, with link and image URLs and alt text kept as words, and
	 * the text of hidden elements left out);
	 * MAIL_HIDDEN: that hidden text, each element's on a line;
	 * MAIL_ANOMALY: a short lower-case name such as "b64-garbage",
	 * "header-truncated", "boundary-missing", "depth-limit" (each name
	 * is reported at most once per post; see mail.c for the full list).
	 * Always NUL-terminated at data[len].
	 */
	const unsigned char *data;
	size_t len;
	/* MAIL_TEXT, MAIL_HIDDEN, MAIL_PART: lower-case media type, e.g.
	 * "text/html" */
	const char *ctype;
	/* MAIL_TEXT, MAIL_HIDDEN: the declared charset, lower case ("" when
	 * none) */
	const char *charset;
	/* MAIL_PART: the file name (RFC 2231 decoded, UTF-8) or "" */
	const char *filename;
};

/* return 0 to go on, -1 to stop the walk (mail_walk then returns -1) */
typedef int (*mail_cb)(const struct mail_event *ev, void *ctx);

/*
 * Walk a post: every header field (depth 0 first), then each text part
 * and attachment in order, anomalies as they are met.  Bare LF, CRLF and
 * (a post whose first 4 KiB hold no LF) bare CR line ends all work; a
 * missing blank line after the header is tolerated.
 * Returns 0, or -1 when out of memory or the callback stopped it.
 */
int mail_walk(const unsigned char *msg, size_t len,
    const struct mail_limits *lim, mail_cb cb, void *ctx);

/*
 * The first top-level header field called name (case-insensitive),
 * unfolded and RFC 2047 decoded to UTF-8, into out (reset first).
 * Returns 1 found, 0 not found, -1 out of memory.
 */
int mail_header(const unsigned char *msg, size_t len, const char *name,
    struct buf *out);

/* offset of the body of the top-level entity (after the blank line) */
size_t mail_body_offset(const unsigned char *msg, size_t len);

#endif
