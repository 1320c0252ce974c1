/*
 * reply.c - a reply to an action address: route it to its list, refuse
 * robots, check the cookie, decide through decide_post, answer
 *
 * The reply, its envelope sender and its recipient are hostile: the
 * recipient only selects among configured moderation addresses, the
 * cookie (gate/moderate/cookie.c) is the only proof, header text is
 * sanitized before it is stored as who decided or quoted in an answer.
 * A refusal changes nothing.  An answer goes only to a moderator (the
 * envelope sender when it is one, else the one the cookie names), a
 * sender notice never to a null, bounce, robot or list address (no
 * backscatter).  Nothing here prints, logs or exits.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "db/moddb.h"
#include "db/queue.h"
#include "gate/app/decide.h"
#include "gate/mail/mail.h"
#include "gate/moderate/cookie.h"
#include "gate/moderate/notice.h"
#include "gate/moderate/notify.h"
#include "gate/moderate/reply.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

void
reply_free(struct reply *r)
{
	if (r->have_l)
		listcfg_free_list(&r->l);
	r->have_l = 0;
}

/* 1 if moderation address m (LOCAL@DOMAIN) is a's, in any case */
static int
same_address(const char *m, const struct cookie_addr *a)
{
	const char *at = strrchr(m, '@');

	return at != NULL && (size_t)(at - m) == strlen(a->local) &&
	    strncasecmp(m, a->local, (size_t)(at - m)) == 0 &&
	    strcasecmp(at + 1, a->domain) == 0;
}

/* 1 if address c (not an action address) is m itself, or still starts
 * with m's LOCAL and delimiter and ends with its @DOMAIN, in any case */
static int
near_address(const char *m, int delim, const char *c)
{
	const char *at = strrchr(m, '@'), *cat = strrchr(c, '@');
	size_t ln;

	if (at == NULL || cat == NULL)
		return 0;
	ln = (size_t)(at - m);
	if (strcasecmp(c, m) == 0)
		return 1;	/* the bare moderation address */
	return (size_t)(cat - c) > ln + 1 && strncasecmp(c, m, ln) == 0 &&
	    c[ln] == delim && strcasecmp(cat + 1, at + 1) == 0;
}

/*
 * The list whose moderation address is a's (or, when a is NULL, near
 * address c): 1 found (r->l), 0 none, -1 lists/ or a list could not be
 * read (r->why).  Lists that share the address (config check refuses
 * it; the MTA delivers their replies all the same): the one a's cookie
 * was made for, told by key (NULL: not loaded, the first one), else the
 * first one, which refuses the cookie.
 */
static int
find_list(struct reply *r, const struct listcfg_global *g,
    const struct cookie_addr *a, const char *c, const struct cookie_key *key)
{
	char dir[4096], name[LG_MAX_LIST_NAME + 1], err[1024];
	char first[LG_MAX_LIST_NAME + 1] = "";
	struct dirent *de;
	DIR *d;
	size_t n;
	int found = 0, bad = 0;

	snprintf(dir, sizeof(dir), "%s/lists", g->dir);
	/* missing or unreadable, it is a configuration problem: no list
	 * can be ruled out, so the MTA keeps the reply */
	if ((d = opendir(dir)) == NULL) {
		snprintf(r->why, sizeof(r->why), "cannot read the list "
		    "directory %.900s: %s", dir, strerror(errno));
		return -1;
	}
	while (!found && (de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 5 || n - 5 > LG_MAX_LIST_NAME ||
		    strcmp(de->d_name + n - 5, ".conf") != 0)
			continue;
		memcpy(name, de->d_name, n - 5);
		name[n - 5] = '\0';
		if (!listcfg_name_ok(name))
			continue;
		if (listcfg_load_list(g, name, &r->l, err, sizeof(err)) < 0) {
			if (!bad)
				snprintf(r->why, sizeof(r->why), "%s", err);
			bad = 1;
			continue;
		}
		if (r->l.moderation_address != NULL && (a != NULL ?
		    r->l.recipient_delimiter == a->delim &&
		    same_address(r->l.moderation_address, a) :
		    near_address(r->l.moderation_address,
		    r->l.recipient_delimiter, c))) {
			/* the cookie is made with the list's name: another
			 * list's (of this address) is no cookie of this one */
			if (a != NULL && key != NULL && cookie_check(key, name,
			    a, NULL, NULL, NULL, time(NULL)) ==
			    COOKIE_EMISMATCH) {
				if (first[0] == '\0')
					memcpy(first, name, n - 5 + 1);
				listcfg_free_list(&r->l);
				continue;
			}
			found = 1;
			r->have_l = 1;
			if (a != NULL)
				r->addr = *a;
		} else
			listcfg_free_list(&r->l);
	}
	closedir(d);
	if (found)
		return 1;
	/* one list that could not be read may be the cookie's */
	if (bad)
		return -1;
	if (first[0] == '\0')
		return 0;
	if (listcfg_load_list(g, first, &r->l, err, sizeof(err)) < 0) {
		snprintf(r->why, sizeof(r->why), "%s", err);
		return -1;
	}
	r->have_l = 1;
	r->addr = *a;
	return 1;
}

int
reply_route(struct reply *r, const struct listcfg_global *g,
    const struct cookie_key *key, const char *const *cands, size_t n)
{
	struct cookie_addr a;
	char shown[200];
	size_t i;
	int pr, fr, perr = COOKIE_ESYNTAX, parsed = 0, bad = 0;

	r->why[0] = '\0';
	for (i = 0; i < n; i++) {
		if (cands[i] == NULL || cands[i][0] == '\0')
			continue;
		sanitize_str(r->rcpt, sizeof(r->rcpt), cands[i],
		    strlen(cands[i]), 200, SANITIZE_TEXT, 0);
		pr = cookie_parse(cands[i], strlen(cands[i]), &a);
		if (pr != COOKIE_OK) {
			if (!parsed)
				perr = pr;
			continue;
		}
		parsed = 1;
		fr = find_list(r, g, &a, NULL, key);
		if (fr == 1)
			return REPLY_DONE;
		if (fr < 0)
			bad = 1;
	}
	if (bad)
		return REPLY_TEMP;
	/* a malformed action address of a list: refused with an answer */
	for (i = 0; !parsed && i < n; i++) {
		if (cands[i] == NULL || cands[i][0] == '\0' ||
		    strlen(cands[i]) > COOKIE_MAX_ADDR)
			continue;
		fr = find_list(r, g, NULL, cands[i], NULL);
		if (fr < 0)
			return REPLY_TEMP;
		if (fr == 1) {
			sanitize_str(r->rcpt, sizeof(r->rcpt), cands[i],
			    strlen(cands[i]), 200, SANITIZE_TEXT, 0);
			/* the bare moderation address: a reply to a digest
			 * or to an answer, which come from it.  It carries
			 * no cookie to be malformed: say what it is, and
			 * which addresses decide */
			if (strcasecmp(cands[i], r->l.moderation_address) ==
			    0) {
				snprintf(r->subject, sizeof(r->subject),
				    "nothing decided: no action in the "
				    "address");
				snprintf(r->text, sizeof(r->text), "Your "
				    "message to\n  %s\ndecided nothing: it is "
				    "the list's moderation address itself,\n"
				    "which carries no post and no action.\n\n"
				    "To decide a held post, write to the "
				    "approve, reject or discard\naddress its "
				    "hold notice (or a digest) gives for it.  "
				    "Replying to a\nhold notice approves: its "
				    "Reply-To is the approve address.\n\n"
				    "Nothing was changed.\n", r->rcpt);
				snprintf(r->why, sizeof(r->why), "recipient "
				    "<%s>: the bare moderation address (no "
				    "action, post or cookie)", r->rcpt);
				return REPLY_REFUSED;
			}
			snprintf(r->subject, sizeof(r->subject), "refused: "
			    "malformed action address");
			snprintf(r->text, sizeof(r->text), "Your message to\n"
			    "  %s\nwas refused: %s.\n\nNothing was changed.  "
			    "Use the addresses of a current hold notice,\nor "
			    "`%s held` on the list host.\n", r->rcpt,
			    cookie_why(perr), suggest_cmd());
			snprintf(r->why, sizeof(r->why), "recipient <%s>: %s",
			    r->rcpt, cookie_why(perr));
			return REPLY_REFUSED;
		}
	}
	for (i = 0; i < n && (cands[i] == NULL || !cands[i][0]); i++)
		;
	sanitize_str(shown, sizeof(shown), i < n ? cands[i] : "",
	    i < n ? strlen(cands[i]) : 0, 120, SANITIZE_LOG, 0);
	if (!parsed)
		snprintf(r->why, sizeof(r->why), "recipient <%s>: %s", shown,
		    cookie_why(perr));
	else
		snprintf(r->why, sizeof(r->why), "recipient <%s>: no list has "
		    "this moderation address and delimiter", shown);
	return REPLY_REFUSED;
}

/* printf into r->text (appending) */
static void __attribute__((format(printf, 2, 3)))
text(struct reply *r, const char *fmt, ...)
{
	size_t n = strlen(r->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->text + n, sizeof(r->text) - n, fmt, ap);
	va_end(ap);
}

/* "2026-12-03 15:04 UTC" */
static void
when(time_t t, char *out, size_t outsz)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, outsz, "%Y-%m-%d %H:%M UTC", &tm);
}

/* fill a refusal's answer */
static int
refuse(struct reply *r, const char *reason)
{
	const char *a = r->rcpt;

	snprintf(r->subject, sizeof(r->subject), "refused: %s post %lld",
	    cookie_action_name(r->addr.action), (long long)r->addr.id);
	r->text[0] = '\0';
	text(r, "Your message to\n  %s\nwas refused: %s.\n\nNothing was "
	    "changed.  Use the addresses of a current hold notice,\nor "
	    "`%s held` on the list host.\n", a, reason, suggest_cmd());
	snprintf(r->why, sizeof(r->why), "refused %s of post %lld: %s",
	    cookie_action_name(r->addr.action), (long long)r->addr.id, reason);
	return REPLY_REFUSED;
}

/* fill the answer to a message for a post that was decided already (its
 * address used, or the post decided another way): there is no current
 * notice to use, and nothing left to do */
static int
refuse_decided(struct reply *r, const char *reason)
{
	refuse(r, reason);
	r->text[0] = '\0';
	text(r, "Your message to\n  %s\nwas refused: %s.\n\nNothing was "
	    "changed.  The post was decided already: there is\nnothing left "
	    "to do for it (`%s show %lld` on the list host\nsays how "
	    "it was decided).\n", r->rcpt, reason, suggest_cmd(),
	    (long long)r->addr.id);
	return REPLY_REFUSED;
}

/* fill the answer to a message for a post that expired at at (held
 * past hold_expiry_days, `listgate expire`): not decided by anyone nor
 * released, and an approval can still be given on the list host */
static int
refuse_expired(struct reply *r, const char *at)
{
	char reason[300];

	snprintf(reason, sizeof(reason), "the post expired at %s (held "
	    "longer than hold_expiry_days): nobody decided it", at);
	refuse(r, reason);
	r->text[0] = '\0';
	text(r, "Your message to\n  %s\nwas refused: %s.\n\nNothing was "
	    "changed.  The post was not released to the list.\n", r->rcpt,
	    reason);
	if (r->addr.action == COOKIE_APPROVE)
		text(r, "To release it all the same, the list's administrator "
		    "can run\n`%s approve --force %lld` on the list host.\n",
		    suggest_cmd(), (long long)r->addr.id);
	else
		text(r, "There is nothing left to do for it.\n");
	return REPLY_REFUSED;
}

/* refuse a cookie whose number names no post of its list (any more):
 * the cookie's binding to its post and moderator could not be checked,
 * so it proved nothing and is answered to moderators only */
static int
no_post(struct reply *r)
{
	r->cookie_refused = 1;
	return refuse(r, "there is no such post (any more)");
}

/* refuse a cookie that is not the post's under its number now: changed
 * in its last characters, or made for a post whose number a failover or
 * a restore gave to this one; mods set when the cookie's moderator was
 * checked with the post (cookie_check cannot tell which of the two did
 * not match: a moderator removed since is as likely) */
static int
other_post(struct reply *r, int mods)
{
	size_t n;

	refuse(r, cookie_why(COOKIE_EPOST));
	n = strlen(r->why);
	if (mods)
		snprintf(r->why + n, sizeof(r->why) - n, " (the notice went "
		    "to an address no longer in moderators, or post %lld is "
		    "another post than the cookie was made for: its number "
		    "was reused, or the cookie changed)",
		    (long long)r->addr.id);
	else
		snprintf(r->why + n, sizeof(r->why) - n, " (post %lld is "
		    "another post than the cookie was made for: its number "
		    "was reused, or the cookie changed)",
		    (long long)r->addr.id);
	return REPLY_REFUSED;
}

/* the cookie check with the post's SHA-256 and the list's moderators
 * (sha NULL: all but those); *which_r as cookie_check sets it */
static int
check(struct reply *r, const struct cookie_key *key,
    const unsigned char *sha, int *which_r, time_t now)
{
	char reason[300], until[64];
	int c = cookie_check(key, r->l.name, &r->addr, sha,
	    (const char *const *)r->l.moderators, which_r, now);

	if (c == COOKIE_OK)
		return REPLY_DONE;
	r->cookie_refused = 1;
	if (c == COOKIE_EEXPIRED) {
		r->expired = 1;
		/* checked with its post and moderators, it is genuine and
		 * says whose notice it came from: that moderator is told
		 * it expired, as of a post decided already (a moderator
		 * who writes from another address than the one in
		 * moderators heard nothing, and took the post for
		 * decided) */
		if (sha != NULL)
			r->cookie_refused = 0;
		when(r->addr.expiry, until, sizeof(until));
		snprintf(reason, sizeof(reason), "the address expired on %s "
		    "(cookie_days)", until);
		return refuse(r, reason);
	}
	if (c == COOKIE_EPOST)
		return other_post(r, 1);
	return refuse(r, cookie_why(c));
}

int
reply_check(struct reply *r, const struct cookie_key *key, time_t now)
{
	return check(r, key, NULL, NULL, now);
}

/* what the decision trains */
static const char *
trains(const char *status)
{
	return strcmp(status, "approved") == 0 ? "ham" : "spam";
}

int
reply_apply(struct reply *r, struct queue *q,
    const struct listcfg_global *g, const struct cookie_key *key, time_t now)
{
	struct sha256_ctx sc;
	struct decide_req rq;
	struct queue_decided res;
	unsigned char sha[SHA256_DIGEST_SIZE], post[SHA256_DIGEST_SIZE];
	char err[1024], usedby[256], at[64], by[300], note[700];
	char plist[LG_MAX_LIST_NAME + 1];
	const char *status = decide_status(cookie_action_name(r->addr.action));
	time_t usedat;
	int u, d, got, which = -1;

	r->old[0] = r->by[0] = '\0';
	r->at = 0;
	r->notified[0] = '\0';
	r->expired = 0;
	/* (an expired cookie goes on to its post: see check) */
	if (reply_check(r, key, now) != REPLY_DONE && !r->expired)
		return REPLY_REFUSED;
	/* the cookie is bound to the post it was made for: the post under
	 * its number now must be that one (a failover or a restore hands
	 * numbers out again).  Another list's: the decision below refuses
	 * it.  No such post: refused here, for a post that took the number
	 * since (committed before the decision locks it) was never checked
	 * against the cookie.  Checked before the cookie's use, so that
	 * the answer to a replay goes to the moderator it names too */
	got = queue_post_sha(q, r->addr.id, plist, sizeof(plist), post, err,
	    sizeof(err));
	if (got < 0) {
		snprintf(r->why, sizeof(r->why), "%s", err);
		return REPLY_TEMP;
	}
	if (got == 0 || (r->expired && strcmp(plist, r->l.name) != 0))
		return no_post(r);
	if (strcmp(plist, r->l.name) == 0) {
		int c = check(r, key, post, &which, now);

		if (which >= 0)
			snprintf(r->notified, sizeof(r->notified), "%s",
			    r->l.moderators[which]);
		if (c != REPLY_DONE)
			return REPLY_REFUSED;
	}
	/* each cookie decides once: its SHA-256 (with the list) is kept */
	sha256_init(&sc);
	sha256_update(&sc, strlen(r->l.name) + 1, (const uint8_t *)r->l.name);
	sha256_update(&sc, COOKIE_CHARS, (const uint8_t *)r->addr.cookie);
	sha256_digest(&sc, sizeof(sha), sha);
	u = moddb_cookie_used(q, sha, usedby, sizeof(usedby), &usedat, err,
	    sizeof(err));
	if (u < 0) {
		snprintf(r->why, sizeof(r->why), "%s", err);
		return REPLY_TEMP;
	}
	if (u == 1) {
		char reason[600], ub[260];

		when(usedat, at, sizeof(at));
		sanitize_str(ub, sizeof(ub), usedby, strlen(usedby), 100,
		    SANITIZE_TEXT, 0);
		snprintf(reason, sizeof(reason), "this address was already used "
		    "(by %s at %s); each works once", ub[0] ? ub : "?", at);
		return refuse_decided(r, reason);
	}
	/* a reply to a notice goes to the approve address (its Reply-To):
	 * one that begins with "reject" or "spam" (or "yes, this is spam")
	 * is a moderator who wants the contrary, and approving it would send the spam to the list.
	 * Refused, the address unused: the answer says what to do */
	if (r->addr.action == COOKIE_APPROVE) {
		char word[16], reason[600];
		int c;

		if ((c = reply_contrary(r->msg, r->len, word,
		    sizeof(word))) == 1) {
			snprintf(reason, sizeof(reason), "it begins with "
			    "\"%s\", but a message to this address (a reply "
			    "to the notice) approves the post; to reject or "
			    "discard it, write to the reject or discard "
			    "address of the notice, and to approve it, reply "
			    "again without that word first", word);
			return refuse(r, reason);
		}
		/* "Yes, this is spam": the first word approves, and the
		 * line asks for the contrary */
		if (c == 2) {
			snprintf(reason, sizeof(reason), "its first line "
			    "says \"%s\", but a message to this address (a "
			    "reply to the notice) approves the post; to "
			    "reject or discard it, write to the reject or "
			    "discard address of the notice, and to approve "
			    "it, reply again without that word", word);
			return refuse(r, reason);
		}
		/* nor one whose Subject says so, "Re: REJECT", its text
		 * left empty */
		if (reply_subject_contrary(r->msg, r->len, word,
		    sizeof(word))) {
			snprintf(reason, sizeof(reason), "its Subject begins "
			    "with \"%s\", but a message to this address (a "
			    "reply to the notice) approves the post; to reject "
			    "or discard it, write to the reject or discard "
			    "address of the notice, and to approve it, reply "
			    "again without that word in the Subject", word);
			return refuse(r, reason);
		}
	}

	/* who decides: the From address, recorded, never proof (not the
	 * name the filter's own discards are stored under, which
	 * decide_post refuses for good: the MTA would retry the reply for
	 * days) */
	if (r->from[0] != '\0' && strcmp(r->from, QUEUE_FILTER_BY) != 0)
		snprintf(by, sizeof(by), "%s", r->from);
	else
		snprintf(by, sizeof(by), "%.250s", r->sender);
	sanitize_str(note, sizeof(note), r->sender, strlen(r->sender), 200,
	    SANITIZE_LOG, 0);
	{
		char tmp[sizeof(note)], mod[200];

		/* the moderator the notice went to: the cookie proves it */
		mod[0] = '\0';
		if (which >= 0)
			sanitize_str(mod, sizeof(mod), r->l.moderators[which],
			    strlen(r->l.moderators[which]), 150, SANITIZE_LOG,
			    0);
		snprintf(tmp, sizeof(tmp), "by mail (envelope sender <%.300s>%s"
		    "%s%s)", note, mod[0] ? ", the notice sent to <" : "", mod,
		    mod[0] ? ">" : "");
		snprintf(note, sizeof(note), "%s", tmp);
	}
	memset(&rq, 0, sizeof(rq));
	rq.id = r->addr.id;
	rq.status = status;
	rq.by = by;
	rq.note = note;
	rq.flags = 0;
	/* the cookie names the list; a post of another list under its id
	 * (the id reused, say after a restore) is neither decided nor told
	 * of */
	rq.list = r->l.name;
	/* and decides only the post it was checked against */
	rq.raw_sha256 = post;
	rq.deadline = r->deadline;
	d = decide_post(q, g, &rq, &res, err, sizeof(err));
	snprintf(r->old, sizeof(r->old), "%s", res.old);
	snprintf(r->by, sizeof(r->by), "%s", res.by);
	r->at = res.at;
	switch (d) {
	case QUEUE_DECIDED:
		if (moddb_cookie_use(q, sha, r->l.name, r->addr.id,
		    cookie_action_name(r->addr.action), by, err,
		    sizeof(err)) < 0)
			/* the decision stands; a replay finds it decided */
			snprintf(r->why, sizeof(r->why), "%s post %lld (the "
			    "cookie's use was not recorded: %.900s)", status,
			    (long long)r->addr.id, err);
		else
			snprintf(r->why, sizeof(r->why), "%s post %lld", status,
			    (long long)r->addr.id);
		snprintf(r->subject, sizeof(r->subject), "%s: post %lld",
		    status, (long long)r->addr.id);
		r->text[0] = '\0';
		text(r, "Post %lld to the list %s is %s%s.\nIt trains the "
		    "filter as %s.\n", (long long)r->addr.id, r->l.name, status,
		    strcmp(status, "approved") == 0 ?
		    " and was released to the list" : "", trains(status));
		return REPLY_DONE;
	case QUEUE_NOENT:
		return no_post(r);
	case QUEUE_OTHER_POST:
		return other_post(r, 0);
	case QUEUE_OTHER_LIST: {
		/* the answer as for no post; the log names the list */
		size_t n;

		no_post(r);
		n = strlen(r->why);
		snprintf(r->why + n, sizeof(r->why) - n, " (post %lld is "
		    "list %s's now: its number was reused)",
		    (long long)r->addr.id, res.list);
		return REPLY_REFUSED;
	}
	case QUEUE_ALREADY: {
		char reason[600], ob[260];

		when(res.at, at, sizeof(at));
		/* expired: nobody decided it, and it never reached the list */
		if (strcmp(res.old, "expired") == 0)
			return refuse_expired(r, at);
		sanitize_str(ob, sizeof(ob), res.by, strlen(res.by), 100,
		    SANITIZE_TEXT, 0);
		/* decided the way asked (two moderators approve, each from
		 * a notice): what the moderator wanted holds, and "refused"
		 * read as if it did not (approve on the command line counts
		 * it done) */
		if (strcmp(res.old, status) == 0) {
			snprintf(r->subject, sizeof(r->subject), "already %s: "
			    "post %lld", status, (long long)r->addr.id);
			r->text[0] = '\0';
			text(r, "Post %lld to the list %s was already %s by %s "
			    "at %s,\nas your message asks.  Nothing was changed, "
			    "and nothing is left to do.\n", (long long)r->addr.id,
			    r->l.name, status, ob[0] ? ob : "?", at);
			snprintf(r->why, sizeof(r->why), "post %lld already %s "
			    "by %s at %s", (long long)r->addr.id, status,
			    ob[0] ? ob : "?", at);
			return REPLY_REFUSED;
		}
		snprintf(reason, sizeof(reason), "the post was already %s by "
		    "%s at %s", res.old, ob[0] ? ob : "?", at);
		return refuse_decided(r, reason);
	}
	case QUEUE_INTERRUPTED: {
		char reason[300 + 4 * PATH_MAX];

		snprintf(reason, sizeof(reason), "an earlier approval of this "
		    "post was interrupted while releasing it; the list's "
		    "administrator must check the archive (%s approve --force "
		    "or --mark-approved)", suggest_cmd());
		return refuse(r, reason);
	}
	case QUEUE_UNRECORDED: {
		char reason[1200];

		snprintf(reason, sizeof(reason), "the post was released, but "
		    "the approval could not be recorded (%.300s); the list's "
		    "administrator must run `%s approve --mark-approved "
		    "%lld`", err, suggest_cmd(), (long long)r->addr.id);
		return refuse(r, reason);
	}
	case QUEUE_RELEASE_FAILED:
		if (res.unsure) {
			/* not retried: the post may be on the list, and the
			 * retry would only find it 'releasing' */
			char reason[1200 + 4 * PATH_MAX];

			snprintf(reason, sizeof(reason), "the list's server "
			    "took the post without answering (%.600s), so it "
			    "may be on the list; the list's administrator must "
			    "check the archive (%s approve --force or "
			    "--mark-approved)", err, suggest_cmd());
			return refuse(r, reason);
		}
		/* no release command: a retry by the MTA fails the same
		 * way, for days, and the moderator hears nothing until the
		 * bounce; the address is not used up, it works once the
		 * administrator set release */
		if (r->l.release == NULL || r->l.release[0] == NULL) {
			char reason[600];

			snprintf(reason, sizeof(reason), "the list has no "
			    "release command, so no post of it can be "
			    "approved: its administrator must set release in "
			    "lists/%s.conf (then this address works)",
			    r->l.name);
			return refuse(r, reason);
		}
		if (res.refused) {
			/* refused for good: a retry of the reply by the MTA
			 * would be refused again, for days */
			char reason[1200];

			snprintf(reason, sizeof(reason), "the list refused the "
			    "post for good when it was released (%.900s): it "
			    "was not released", err);
			return refuse(r, reason);
		}
		snprintf(r->why, sizeof(r->why), "post %lld: %.900s (the post stays "
		    "held; the MTA retries the reply)", (long long)r->addr.id,
		    err);
		return REPLY_TEMP;
	default:
		snprintf(r->why, sizeof(r->why), "post %lld: %.900s",
		    (long long)r->addr.id, err);
		return REPLY_TEMP;
	}
}

/*
 * Count the answer to to of a reply that decided nothing (*qp: the
 * database, opened from g when NULL): 0 it may go (the last one of the
 * hour says so), 1 not (to had LG_MAX_REFUSAL_ANSWERS this hour, or
 * they cannot be counted), why says why
 */
static int
answer_count(struct reply *r, const char *to, struct queue **qp,
    const struct listcfg_global *g, char *why, size_t whysz)
{
	char err[1024], shown[200];
	int n, t;

	/* not counted, it is not sent: an auto-responder that marks
	 * nothing would be answered for ever while the database is down */
	if (*qp == NULL && !queue_configured(g->conninfo)) {
		snprintf(why, whysz, "no answer: no database configured to "
		    "count the answers in (database in listgate.conf)");
		return 1;
	}
	if (*qp == NULL && (queue_open(g->conninfo, qp, err,
	    sizeof(err)) < 0 || queue_check_schema(*qp, err,
	    sizeof(err)) < 0)) {
		snprintf(why, whysz, "no answer: the answers cannot be "
		    "counted: %.900s", err);
		return 1;
	}
	t = moddb_answer_take(*qp, to, r->l.name, LG_MAX_REFUSAL_ANSWERS, &n,
	    err, sizeof(err));
	if (t < 0) {
		snprintf(why, whysz, "no answer: the answers cannot be "
		    "counted: %.900s", err);
		return 1;
	}
	sanitize_str(shown, sizeof(shown), to, strlen(to), 150, SANITIZE_LOG,
	    0);
	if (t == 0) {
		snprintf(why, whysz, "no answer: <%s> had %d answers to "
		    "messages that decided nothing in the last hour (an "
		    "auto-responder that answers each answer?)", shown, n);
		return 1;
	}
	if (n >= LG_MAX_REFUSAL_ANSWERS)
		text(r, "\nThis is answer %d of at most %d within an hour to "
		    "messages of yours\nthat decided nothing: further ones get "
		    "no answer until the hour is\nover (an auto-responder that "
		    "answers every answer would otherwise be\nanswered for "
		    "ever).\n", n, LG_MAX_REFUSAL_ANSWERS);
	return 0;
}

int
reply_answer(struct reply *r, int refused, struct queue **qp,
    const struct listcfg_global *g, char *why, size_t whysz)
{
	struct notice_to h;
	struct buf msg = BUF_INIT(65536);
	const char *to = r->sender;
	char w[300];
	int rc, mod = r->have_l && r->sender != NULL &&
	    listcfg_is_moderator(&r->l, r->sender);

	/* a moderator's own address may look like a list robot's
	 * (lists-admin@, owner-jo@): the configuration says a person reads
	 * it; a null sender is never answered */
	if (reply_robot_address(r->sender, w, sizeof(w)) &&
	    (r->sender == NULL || r->sender[0] == '\0' ||
	    strcmp(r->sender, "<>") == 0 ||
	    strncasecmp(r->sender, "mailer-daemon", 13) == 0)) {
		snprintf(why, whysz, "no answer: the envelope sender is %s", w);
		return 1;
	}
	/* the envelope sender of a refused reply proved nothing: anyone
	 * could have it answered to any address (backscatter) */
	if (refused && !mod) {
		snprintf(why, whysz, "no answer: a refusal is answered only "
		    "to the list's moderators");
		return 1;
	}
	/* nor does a cookie prove that the envelope sender had it: a
	 * notice's addresses are read by others (a forwarded notice, a
	 * log, the reply itself), and a replay of a used one is refused
	 * for ever with an answer.  The answer goes where the notice went */
	if (!mod) {
		if (r->notified[0] == '\0' || !notice_addr_ok(r->notified) ||
		    r->notified[0] == '-') {
			snprintf(why, whysz, "no answer: the envelope sender is "
			    "not one of the list's moderators, and the cookie "
			    "names none to answer instead");
			return 1;
		}
		to = r->notified;
	}
	if (!r->have_l || r->l.notify == NULL ||
	    r->l.moderation_address == NULL) {
		snprintf(why, whysz, "no answer: the list has no notify command");
		return 1;
	}
	/* each answer to a reply that decided nothing may be answered in
	 * turn by a robot that marks nothing (whose reply goes to the
	 * answer's From, the bare moderation address, refused): counted,
	 * that loop ends */
	if (qp != NULL && answer_count(r, to, qp, g, why, whysz) != 0)
		return 1;
	h.from = r->l.moderation_address;
	h.to = to;
	h.now = time(NULL);
	h.key = r->key;
	if (notice_answer(r->l.name, r->subject, r->msgid, r->text, &h,
	    &msg) < 0) {
		snprintf(why, whysz, "out of memory building the answer");
		buf_free(&msg);
		return -1;
	}
	rc = notify_run(&r->l, to, "", r->addr.id, &msg, NOTIFY_RUN_S,
	    why, whysz);
	buf_free(&msg);
	return rc;
}

/* bytes of a rejected post first read for its sender's notice, which
 * needs its header alone (a post held oversize may be 1 GiB) */
#define NOTICE_HEAD	(1024u * 1024u)

/* post id with what its sender's notice reads of it: the first
 * NOTICE_HEAD bytes when the header ends in them, else as much as the
 * robot rules walk (REPLY_ROBOT_SCAN).  1, 0 no such post, -1 error */
static int
notice_post(struct queue *q, int64_t id, struct queue_row *row, char *why,
    size_t whysz)
{
	const unsigned char *p;
	size_t n;
	int got;

	got = queue_get_head(q, id, NOTICE_HEAD, row, why, whysz);
	if (got <= 0 || row->raw_len == (size_t)row->size)
		return got;
	p = row->raw;
	n = row->raw_len;
	/* an empty line (LF or CRLF) ends the header */
	if ((n > 0 && p[0] == '\n') || (n > 1 && p[0] == '\r' &&
	    p[1] == '\n') || memmem(p, n, "\n\n", 2) != NULL ||
	    memmem(p, n, "\n\r\n", 3) != NULL)
		return got;
	queue_row_free(row);
	return queue_get_head(q, id, REPLY_ROBOT_SCAN, row, why, whysz);
}

/* 1 if a delimiter may separate an address's extension: the list's
 * recipient_delimiter, or one an MTA commonly uses ('+' for Postfix
 * and Sendmail, '-' for qmail) */
static int
ext_delim(const struct listcfg_list *l, int c)
{
	return c == '+' || c == '-' || c == l->recipient_delimiter;
}

/* 1 if address a is address m, or m with an extension (LOCAL{delim}...
 * at its domain; m's own extension, if any, left out), in any case:
 * mail to it reaches m */
static int
same_or_extension(const struct listcfg_list *l, const char *a, const char *m)
{
	const char *aat = strrchr(a, '@'), *mat = strrchr(m, '@');
	size_t mb, al;

	if (aat == NULL || mat == NULL || strcasecmp(aat, mat) != 0)
		return 0;
	/* m's base: its local part up to its first delimiter */
	for (mb = 0; m + mb < mat && !ext_delim(l, (unsigned char)m[mb]); mb++)
		;
	if (mb == 0)
		mb = (size_t)(mat - m);
	al = (size_t)(aat - a);
	return al >= mb && strncasecmp(a, m, mb) == 0 && (al == mb ||
	    ext_delim(l, (unsigned char)a[mb]));
}

/* 1 if address a, at the domain of address m, is a list of g's (a file
 * lists/NAME.conf for its local part, or for the part before one of its
 * delimiters: ops@, ops+x@, dev-announce-x@), its name into name; else
 * 0 */
static int
other_list(const struct listcfg_global *g, const struct listcfg_list *l,
    const char *a, const char *m, char *name, size_t namesz)
{
	const char *aat = strrchr(a, '@'), *mat = m != NULL ? strrchr(m, '@') :
	    NULL;
	char path[4096];
	size_t n, i;

	if (g == NULL || aat == NULL || mat == NULL || strcasecmp(aat, mat) != 0)
		return 0;
	for (n = 1; a + n <= aat && n < namesz && n <= LG_MAX_LIST_NAME; n++) {
		if (a + n < aat && !ext_delim(l, (unsigned char)a[n]))
			continue;
		memcpy(name, a, n);
		name[n] = '\0';
		for (i = 0; i < n; i++)
			if (name[i] >= 'A' && name[i] <= 'Z')
				name[i] = (char)(name[i] - 'A' + 'a');
		if (!listcfg_name_ok(name) || listcfg_list_path(g, name, path,
		    sizeof(path)) < 0)
			continue;
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}

/* the notice to the envelope sender of rejected post id of list l (g,
 * when set, for the other lists' names) */
static int
sender_notice(const struct listcfg_global *g, const struct listcfg_list *l,
    struct queue *q, int64_t id, const struct cookie_key *key, char *why,
    size_t whysz)
{
	char other[LG_MAX_LIST_NAME + 1];
	struct queue_row row;
	struct notice_to h;
	struct buf msg = BUF_INIT(65536), subj = BUF_INIT(1024);
	char date[200], mid[300], t[2048];
	int got, rc = -1;

	if (!l->sender_notice) {
		snprintf(why, whysz, "sender_notice is off");
		return 1;
	}
	if ((got = notice_post(q, id, &row, why, whysz)) <= 0) {
		if (got == 0)
			snprintf(why, whysz, "post %lld is gone", (long long)id);
		return got == 0 ? 1 : -1;
	}
	if (!reply_may_notify(row.env_sender, row.raw, row.raw_len, why,
	    whysz)) {
		queue_row_free(&row);
		return 1;
	}
	/* a sender the post's own envelope says is the list (or the
	 * list's moderation address), or either with an extension
	 * (dev+x@ reaches dev@): a forged one, and a notice to it would go
	 * to every member */
	if (same_or_extension(l, row.env_sender, row.env_recipient) ||
	    (l->moderation_address != NULL && same_or_extension(l,
	    row.env_sender, l->moderation_address))) {
		snprintf(why, whysz, "the sender is the list's own address");
		queue_row_free(&row);
		return 1;
	}
	/* another list's, at the list's domain: its members would get it */
	if (other_list(g, l, row.env_sender, row.env_recipient, other,
	    sizeof(other)) || other_list(g, l, row.env_sender,
	    l->moderation_address, other, sizeof(other))) {
		snprintf(why, whysz, "the sender is the address of the list %s",
		    other);
		queue_row_free(&row);
		return 1;
	}
	reply_field(row.raw, row.raw_len, "Date", date, sizeof(date));
	reply_field(row.raw, row.raw_len, "Message-ID", mid, sizeof(mid));
	if (notice_clean(&subj, row.subject, strlen(row.subject), 150) < 0) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	snprintf(t, sizeof(t), "Your post to the list %s was not accepted by "
	    "its moderators.\n\n  Subject: %s\n  Date:    %s\n\nThis is an "
	    "automatic notice.\n", l->name, buf_str(&subj),
	    date[0] ? date : "-");
	h.from = l->moderation_address;
	h.to = row.env_sender;
	h.now = time(NULL);
	h.key = key;
	if (notice_answer(l->name, "your post was not accepted", mid, t, &h,
	    &msg) < 0) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	rc = notify_run(l, row.env_sender, row.env_sender, row.id, &msg,
	    NOTIFY_RUN_S, why, whysz);
out:
	buf_free(&msg);
	buf_free(&subj);
	queue_row_free(&row);
	return rc;
}

int
reply_sender_notice(struct reply *r, struct queue *q,
    const struct listcfg_global *g, char *why, size_t whysz)
{
	return sender_notice(g, &r->l, q, r->addr.id, r->key, why, whysz);
}

int
reply_rejected_notice(struct queue *q, const struct listcfg_global *g,
    const char *list, int64_t id, char *why, size_t whysz)
{
	struct listcfg_list l;
	struct cookie_key *key;
	int rc;

	if (listcfg_load_list(g, list, &l, why, whysz) < 0)
		return -1;
	if (!l.sender_notice) {
		snprintf(why, whysz, "sender_notice is off");
		rc = 1;
	} else if (l.moderation_address == NULL || l.notify == NULL) {
		snprintf(why, whysz, "no notify or moderation_address to "
		    "send it with");
		rc = 1;
	} else if ((key = xcalloc(1, sizeof(*key))) == NULL) {
		snprintf(why, whysz, "out of memory");
		rc = -1;
	} else {
		/* sealed as every message listgate sends: an unsealed one
		 * that a sender's address leads back to a list is held and
		 * noticed as a stranger's post (notice_is_ours) */
		if (cookie_load_key(g->secret_file, key, why, whysz) < 0)
			rc = -1;
		else
			rc = sender_notice(g, &l, q, id, key, why, whysz);
		memset(key, 0, sizeof(*key));
		xfree(key);
	}
	listcfg_free_list(&l);
	return rc;
}
