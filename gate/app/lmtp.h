/*
 * lmtp.h - hand a post to an LMTP server (RFC 2033): what a deliver or
 * release template naming "lmtp:HOST:PORT ADDRESS" or
 * "lmtp:unix:/PATH ADDRESS" does instead of running a program
 *
 * One connection per post: LHLO, MAIL FROM the envelope sender, RCPT TO
 * the one configured address, DATA, the post, its one reply, QUIT.  The
 * post goes out with CRLF line ends (a bare LF becomes CRLF, a CRLF
 * stays, a bare CR passes as it is), dot-stuffed, ended with CRLF "."
 * CRLF (a post without a final newline gets one); BODY=8BITMIME when it
 * has 8-bit bytes and the server offers it (8-bit bytes go out
 * unchanged either way).  A line longer than LG_MAX_LMTP_DATA_LINE bytes
 * is broken by inserting CRLF and a space, as Postfix's LMTP client
 * does (lmtp_line_length_limit): servers refuse longer lines (Mailman's
 * with 500).  Nothing else changes: the server stores the post byte for
 * byte (with CRLF line ends).
 *
 * The server is trusted to be the one configured, not to behave: its
 * replies are read in bounded lines (LG_MAX_LMTP_LINE, at most
 * LG_MAX_LMTP_REPLY_LINES per reply), every stage has its time-out
 * within the caller's total, and its text reaches err only through the
 * sanitizer.  Never logs, never exits; no signal (SIGPIPE) is raised.
 */
#ifndef LG_LMTP_H
#define LG_LMTP_H

#include <stddef.h>

/* what lmtp_deliver returns */
#define LMTP_OK		0	/* the server answered 250 after the data:
				 * it has the post */
#define LMTP_TEMP	(-1)	/* a 4xx reply, no connection, a time-out, a
				 * connection lost, a reply that is no reply
				 * (or whose lines have different codes), a
				 * server out of step (more than a reply
				 * before our next command or the post), no
				 * memory: try again later */
#define LMTP_PERM	(-2)	/* a 5xx reply at any stage: the server
				 * refuses this post (or this recipient) for
				 * good; a recipient that cannot be written
				 * in RCPT TO */
#define LMTP_UNSURE	(-3)	/* the whole post and its final dot were
				 * sent and no reply came (a time-out, the
				 * connection lost, not a reply): the server
				 * may have the post */

/* the time limits of each stage, in milliseconds (each also within the
 * total that lmtp_deliver gets) */
struct lmtp_limits {
	unsigned connect_ms;	/* connecting */
	unsigned reply_ms;	/* waiting for each reply: the greeting,
				 * LHLO, MAIL, RCPT, DATA, the final one */
	unsigned data_ms;	/* sending the post, from the 354 to the
				 * final dot */
};

/* notes on a delivery (ored into *notes_r): not failures */
#define LMTP_NOTE_NULL_SENDER	0x1u	/* the sender cannot be written in
					 * MAIL FROM (controls, invalid
					 * UTF-8, UTF-8 the server cannot
					 * take, too long): sent as <> */
#define LMTP_NOTE_FOLDED	0x2u	/* lines over LG_MAX_LMTP_DATA_LINE
					 * bytes were broken */
#define LMTP_NOTE_8BIT_NO_MIME	0x4u	/* 8-bit data to a server that did
					 * not offer 8BITMIME */

/* the default limits: LG_LMTP_CONNECT_MS, LG_LMTP_REPLY_MS,
 * LG_LMTP_DATA_MS */
void lmtp_limits_default(struct lmtp_limits *lim);

/*
 * Deliver the len bytes at data to the LMTP destination dest (the first
 * word of a template, "lmtp:...": tmpl_lmtp_parse) for the recipient
 * rcpt, from sender ("" or NULL: the null sender <>).  Everything ends
 * within total_ms (0: no total, the stages' own limits only); lim NULL
 * means lmtp_limits_default.  A sender's local part is quoted when it
 * needs it; UTF-8 addresses go with SMTPUTF8 when the server offers it.
 * Returns LMTP_OK, LMTP_TEMP, LMTP_PERM or LMTP_UNSURE; err says what happened for
 * the failures (the stage and the server's reply, sanitized) and is ""
 * after LMTP_OK.  notes_r (may be NULL) gets LMTP_NOTE_* bits.
 */
int lmtp_deliver(const char *dest, const char *sender, const char *rcpt,
    const unsigned char *data, size_t len, unsigned total_ms,
    const struct lmtp_limits *lim, unsigned *notes_r, char *err,
    size_t errsz);

/*
 * 1 once the calling thread's running (or last) lmtp_deliver has the
 * server's 2xx after the data, 0 before (for a single-threaded caller,
 * whose handlers run in its only thread): a handler of
 * a stop signal that comes while QUIT is still said sees a post the
 * server has, which must not be deferred.  Async-signal-safe.
 */
int lmtp_last_ok(void);

/*
 * Write addr as the path of MAIL FROM or RCPT TO (without the angle
 * brackets) into out: as it is (a dot-string, or a local part that is a
 * quoted-string already, as Postfix's pipe(8) flags=q gives it), or
 * with the local part quoted.  Returns
 * 0 (plain ASCII), 1 (needs SMTPUTF8: UTF-8 in it), or -1 when it
 * cannot be written (a control character, invalid UTF-8, no domain
 * after '@', longer than out allows or than LG_MAX_LMTP_PATH).
 * "" gives "" (the null path).
 */
int lmtp_path(const char *addr, char *out, size_t outsz);

#endif
