/*
 * reply.h - a moderator's reply to an action address: which list it is
 * for, whether it may decide, the decision through the one decision
 * path (gate/app/decide.h), and the answers
 *
 * The reply, its envelope and its recipient are hostile.  The list is
 * found only by matching the recipient against the configured
 * moderation addresses; the cookie is the proof (From: is recorded as
 * who decided, never trusted); a refusal changes nothing and says why.
 * Every function returns its result with a message; none prints, logs
 * or exits.
 */
#ifndef LG_REPLY_H
#define LG_REPLY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/moderate/cookie.h"
#include "listcfg/listcfg.h"

struct queue;
struct listcfg_global;

/* how a reply ended */
#define REPLY_DONE	0	/* decided */
#define REPLY_REFUSED	1	/* refused: nothing changed; why says why */
#define REPLY_TEMP	2	/* cannot work now: the MTA should retry */

/* what is known about one reply */
struct reply {
	const unsigned char *msg;	/* the reply as received */
	size_t len;
	const char *sender;		/* its envelope sender ("": null) */
	double deadline;		/* clock_now_ms() time a release must
					 * end by (0: the list's timeout) */
	const struct cookie_key *key;	/* seals the answers (NULL: not
					 * loaded) */
	struct cookie_addr addr;	/* the action address, parsed */
	char rcpt[COOKIE_MAX_ADDR + 1];	/* the address as received */
	struct listcfg_list l;		/* the list it is for */
	int have_l;
	char from[256];			/* its From address: who decides */
	char msgid[256];		/* its Message-ID (for In-Reply-To) */
	/* the outcome */
	char old[16];			/* the post's status before */
	char by[256];			/* who decided it before */
	time_t at;			/* and when */
	char subject[128];		/* of the answer */
	char text[2048];		/* of the answer */
	char why[1024];			/* for the log */
	int cookie_refused;		/* the cookie was refused, or names
					 * no post to check it against (it
					 * proved nothing: answered to
					 * moderators only) */
	int expired;			/* the cookie is genuine but expired
					 * (reply_check): reply_apply still
					 * checks it against its post, to
					 * tell its moderator */
	char notified[COOKIE_MAX_ADDR + 1];	/* the moderator the
					 * cookie was made for ("": not
					 * known): an envelope sender that is
					 * no moderator is answered there */
};

/*
 * Find the list of the first of the n recipient addresses cands (NULL
 * ones skipped) that is an action address of a configured list
 * (moderation_address and recipient_delimiter match; every lists/L.conf
 * of g is read).  REPLY_DONE with r->addr and r->l, REPLY_REFUSED with
 * r->why (no list, or not an action address; when the address starts
 * with a list's LOCAL{delim} and has its DOMAIN, r->have_l is set and
 * the answer r->subject, r->text says what is malformed), REPLY_TEMP
 * with r->why (the configuration cannot be read).  Where lists share a
 * moderation address, the cookie tells them apart under key (NULL: the
 * secret not loaded, the first such list).
 */
int reply_route(struct reply *r, const struct listcfg_global *g,
    const struct cookie_key *key, const char *const *cands, size_t n);

/* 1 when the reply was sent by a robot (a null or the mail system's
 * envelope sender, Auto-Submitted other than no, Precedence or
 * X-Precedence bulk/junk/list/auto_reply, a vacation program's
 * fields, a delivery report): it never decides; why says which; else 0 */
int reply_automatic(const struct reply *r, char *why, size_t whysz);

/* bytes of a message the robot rules walk (reply_may_notify): its whole
 * header, however long, up to more than any MTA's message size limit
 * by default */
#define REPLY_ROBOT_SCAN	(64u * 1024u * 1024u)

/*
 * 1 when a notice may go to env_sender, who sent the post raw: not a
 * null, bounce or list address, the post not from a list or a robot;
 * else 0 with why.  The rule that keeps listgate from backscatter.
 */
int reply_may_notify(const char *env_sender, const unsigned char *raw,
    size_t len, char *why, size_t whysz);

/* r->from and r->msgid from the reply's header, sanitized */
void reply_headers(struct reply *r);

/*
 * 1 when the moderator's own first word in the message (len bytes at
 * msg: the first line of its text parts that is neither blank nor
 * quoted with '>', nor the attribution above a quote, "On ..., X
 * wrote:", when its own first word is none of these, nor the armour
 * above a text signed inline with OpenPGP; an HTML part is
 * read without its mail program's quote elements, which have no '>'
 * marks as text) asks for the
 * contrary of an approval ("reject",
 * "spam", "discard", ...), that word (lower case) into word; else 0.
 * A reply to a notice goes to the approve address: one that says
 * "reject" was written by a moderator who wants the post rejected.
 * 2 (that word into word) when a later word of that line, not after
 * "not", "no", "never" or a "n't", is one of these but "no" and "nope":
 * "Yes, this is spam", "This is spam, please reject".
 */
int reply_contrary(const unsigned char *msg, size_t len, char *word,
    size_t wordsz);

/*
 * 1 when the Subject of the message, past the prefixes of a reply or a
 * forward ("Re:", "AW:", "Fwd:", ...), begins with a word that asks for
 * the contrary of an approval (reply_contrary's first words): that word
 * (lower case) into word; else 0.  A moderator may write the decision
 * there, "Re: REJECT", and leave the text empty, which approves.
 */
int reply_subject_contrary(const unsigned char *msg, size_t len,
    char *word, size_t wordsz);

/* 1 if the envelope address a is null, not a plain address, one that
 * starts with '-' (an option to the notify command), or a bounce or
 * list robot's (mailer-daemon, owner-, -request, ...): never answered;
 * why says which.  Else 0 */
int reply_robot_address(const char *a, char *why, size_t whysz);

/* the first header field name of msg (len bytes, the first 64 KiB
 * looked at), its value trimmed and sanitized for the log (no controls,
 * quotes or backslashes), into out (outsz bytes): 1 found, 0 not */
int reply_field(const unsigned char *msg, size_t len, const char *name,
    char *out, size_t outsz);

/*
 * Check r's cookie with key at now, then (q open) refuse a cookie used
 * before or made for another post than the one its number names now (a
 * failover or a restore gave the number again; checked once more under
 * the decision's row lock), decide through decide_post as r->from, and
 * record the cookie.
 * Fills r->subject, r->text (the answer) and r->why.  REPLY_DONE,
 * REPLY_REFUSED (also when the list's LMTP server refused the release
 * for good, or the list has no release command: the post stays held)
 * or REPLY_TEMP (database down, the release command failed: the MTA
 * retries the reply).
 */
int reply_apply(struct reply *r, struct queue *q,
    const struct listcfg_global *g, const struct cookie_key *key, time_t now);

/* the cookie check alone, all but its post (before connecting):
 * REPLY_DONE, or REPLY_REFUSED with the answer and why filled (and
 * r->expired set when it is genuine but expired: reply_apply checks it
 * against its post all the same, for whose notice it came from, who is
 * answered) */
int reply_check(struct reply *r, const struct cookie_key *key, time_t now);

/*
 * After a reject: the short notice to the post's envelope sender when
 * the list's sender_notice is on and reply_may_notify allows (never to
 * the list's address or its moderation_address, either with an
 * extension, nor to another list of g's at their domain).  0 sent, 1
 * not sent on purpose (why says why), -1 failed (why).
 */
int reply_sender_notice(struct reply *r, struct queue *q,
    const struct listcfg_global *g, char *why, size_t whysz);

/*
 * The same notice for post id of list L rejected another way (the web
 * page, its API): the list's configuration loaded from g.  0 sent, 1 not
 * sent on purpose (sender_notice off, no notify or moderation_address,
 * a sender reply_may_notify refuses; why says why), -1 failed (why).
 */
int reply_rejected_notice(struct queue *q, const struct listcfg_global *g,
    const char *list, int64_t id, char *why, size_t whysz);

/* send the answer (r->subject, r->text) through the list's notify to
 * the reply's envelope sender when it is one of the list's moderators,
 * else to the moderator the cookie was made for (r->notified), never to
 * an address the reply chose: 0 sent, 1 not sent on purpose (a null
 * sender; for a refusal before the cookie proved anything, refused !=
 * 0, or a cookie that names no moderator, a sender who is not one of
 * the list's moderators; past LG_MAX_REFUSAL_ANSWERS to its address in
 * an hour, or they cannot be counted), -1 failed; why says why.  qp
 * non-NULL: the reply decided nothing, and its answer is counted
 * (moddb_answer_take) in *qp, the database, which is opened from g's
 * conninfo when *qp is NULL (the caller closes it); NULL: a decision's
 * answer, not counted */
int reply_answer(struct reply *r, int refused, struct queue **qp,
    const struct listcfg_global *g, char *why, size_t whysz);

void reply_free(struct reply *r);

#endif
