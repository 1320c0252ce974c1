/*
 * check_reply.c - the rules of gate/moderate/reply.c that need no
 * database: no notice to a null, bounce or list sender or about a post
 * a list or robot sent (no backscatter); a robot's reply never decides;
 * a reply's own first word that asks for the contrary of approving
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/moderate/reply.h"

static const char plain[] = "From: a@example.org\nSubject: x\n\nbody\n";

START_TEST(no_backscatter_to_robot_senders)
{
	static const char *const robots[] = { "", "<>", "MAILER-DAEMON@x.org",
	    "postmaster@x.org", "owner-dev@lists.x.org", "dev-request@x.org",
	    "dev-bounces@lists.x.org", "dev-bounces+a=b.org@lists.x.org",
	    "dev-return-12-a=b.org@lists.x.org", "bounce-123@x.org",
	    "noreply@x.org", "a b@x.org", "a@x.org\nBcc: c@d", "nodomain",
	    /* read as options by the notify command (sendmail -oQ, -C) */
	    "-oQ/tmp/evil@x.org", "-C/etc/passwd@x.org", NULL };
	char why[300];
	size_t i;

	for (i = 0; robots[i] != NULL; i++)
		ck_assert_msg(reply_may_notify(robots[i],
		    (const unsigned char *)plain, strlen(plain), why,
		    sizeof(why)) == 0, "%s", robots[i]);
	ck_assert_int_eq(reply_may_notify("alice@example.org",
	    (const unsigned char *)plain, strlen(plain), why, sizeof(why)), 1);
	ck_assert_int_eq(reply_may_notify("alice@example.org", NULL, 0, why,
	    sizeof(why)), 1);
}
END_TEST

START_TEST(no_backscatter_for_list_or_robot_posts)
{
	static const char *const posts[] = {
	    "List-Id: <dev.lists.x.org>\nFrom: a@x.org\n\nb\n",
	    "From: a@x.org\nList-Post: <mailto:dev@x.org>\n\nb\n",
	    "Precedence: bulk\n\nb\n",
	    "Precedence: JUNK\n\nb\n",
	    "Auto-Submitted: auto-replied\n\nb\n",
	    "X-Autoreply: yes\n\nb\n",
	    NULL };
	char why[300];
	size_t i;

	for (i = 0; posts[i] != NULL; i++)
		ck_assert_msg(reply_may_notify("alice@example.org",
		    (const unsigned char *)posts[i], strlen(posts[i]), why,
		    sizeof(why)) == 0, "%s", posts[i]);
	ck_assert_int_eq(reply_may_notify("alice@example.org",
	    (const unsigned char *)"Auto-Submitted: no\n\nb\n", 22, why,
	    sizeof(why)), 1);
}
END_TEST

START_TEST(robots_never_decide)
{
	struct reply r;
	char why[300];

	memset(&r, 0, sizeof(r));
	r.msg = (const unsigned char *)plain;
	r.len = strlen(plain);
	r.sender = "alice@example.org";
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 0);
	r.sender = "";
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	r.sender = "alice@example.org";
	r.msg = (const unsigned char *)"Auto-Submitted: auto-replied\n"
	    "Subject: Out of office\n\naway\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "Auto-Submitted"));
	r.msg = (const unsigned char *)"Precedence: bulk\n\nx\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	/* robots that mark themselves only by a field of their own or by
	 * their Subject: an Exchange inbox rule's reply, Outlook's
	 * out-of-office, Lotus Notes' */
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "X-MS-Exchange-Inbox-Rules-Loop: a@example.org\n"
	    "Subject: Re: post 12 held\n\nthanks\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "Subject:  automatic reply: post 12 held\n\naway\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "Subject"));
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "Subject: Auto: post 12 held\n\naway\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "Subject: Out of Office until Monday\n\naway\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
	/* Outlook's out-of-office reply in the mailbox's language, marked
	 * no other way, sent to the notice's Reply-To (the approve address):
	 * German, French (its blank before the colon, and encoded as
	 * Outlook sends it), Spanish, Swedish, Russian, Japanese */
	{
		static const char *const subj[] = {
		    "Automatische Antwort: [dev] held: x (score 0.99)",
		    "=?utf-8?q?R=C3=A9ponse_automatique_=3A_=5Bdev=5D_held=3A_x?=",
		    "Respuesta autom\xc3\xa1tica: [dev] held: x",
		    "Autosvar: [dev] held: x",
		    "=?utf-8?b?0JDQstGC0L7QvNCw0YLQuNGH0LXRgdC60LjQuSDQvtGC0LLQtdGCOiBbZGV2XQ==?=",
		    "\xe8\x87\xaa\xe5\x8b\x95\xe5\xbf\x9c\xe7\xad\x94: [dev] held",
		    NULL };
		static char m[512];
		size_t i;

		for (i = 0; subj[i] != NULL; i++) {
			snprintf(m, sizeof(m), "From: a@example.org\n"
			    "Subject: %s\n\naway\n", subj[i]);
			r.msg = (const unsigned char *)m;
			r.len = strlen(m);
			ck_assert_msg(reply_automatic(&r, why, sizeof(why)) ==
			    1, "%s", subj[i]);
		}
		/* a person's reply in German ("AW:") decides */
		snprintf(m, sizeof(m), "From: a@example.org\nSubject: AW: "
		    "Automatische Antwort: [dev] held: x\n\nok\n");
		r.msg = (const unsigned char *)m;
		r.len = strlen(m);
		ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 0);
	}
	/* a person's reply whose Subject only mentions them decides */
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "Subject: Re: Automatic reply: post 12 held\n\nok\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 0);
	/* a person's reply: Exchange asks others not to answer it with
	 * X-Auto-Response-Suppress, Auto-Submitted says no, Precedence
	 * says nothing of robots: each decides */
	r.msg = (const unsigned char *)"From: a@example.org\n"
	    "X-Auto-Response-Suppress: All\nAuto-Submitted: no\n"
	    "Precedence: first-class\n\nok\n";
	r.len = strlen((const char *)r.msg);
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 0);
	/* nor is a moderator's address taken for a robot's */
	r.sender = "lists-admin@example.org";
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 0);
	r.sender = "MAILER-DAEMON@mx.example.org";
	ck_assert_int_eq(reply_automatic(&r, why, sizeof(why)), 1);
}
END_TEST

/* a moderator's "reject" after blanks that are not ASCII: an HTML
 * reply's empty paragraph (<p>&nbsp;</p>, Outlook's) or indent, a
 * byte-order mark, a zero-width or ideographic space.  The first line
 * was taken for the moderator's own, with no word: the reply approved
 * the post it asked to reject */
START_TEST(contrary_past_unicode_blanks)
{
	static const char *const bodies[] = {
	    "Content-Type: text/html; charset=utf-8\n\n"
	    "<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n"
	    "<p class=MsoNormal>Reject, this is spam.</p>\n",
	    "Content-Type: text/html\n\n<div>&nbsp;&nbsp;Spam!</div>\n",
	    "Content-Type: text/plain; charset=utf-8\n\n"
	    "\xc2\xa0\n\xc2\xa0 reject\n",
	    "Content-Type: text/plain; charset=utf-8\n\n\xef\xbb\xbfReject\n",
	    "Content-Type: text/plain; charset=utf-8\n\n"
	    "\xe2\x80\x8b\xe3\x80\x80\xe2\x80\xaf discard it\n",
	    NULL };
	char buf[512], word[16];
	size_t i;

	for (i = 0; bodies[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\nMIME-Version: 1.0\n%s", bodies[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "body %zu: not "
		    "taken for the contrary of approving", i);
	}
	/* a word after them that asks for nothing is no contrary */
	snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: held\n"
	    "Content-Type: text/plain; charset=utf-8\n\n\xc2\xa0\nOK\n");
	ck_assert_int_eq(reply_contrary((const unsigned char *)buf,
	    strlen(buf), word, sizeof(word)), 0);
	/* nor a letter that is not ASCII: no word of ours */
	snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: held\n"
	    "Content-Type: text/plain; charset=utf-8\n\n\xc3\x89reject\n");
	ck_assert_int_eq(reply_contrary((const unsigned char *)buf,
	    strlen(buf), word, sizeof(word)), 0);
}
END_TEST

/* a moderator's "No." to a notice that asks for an approval: the reply
 * to its Reply-To (the approve address) approved the post */
START_TEST(contrary_no)
{
	static const char *const yes[] = { "No.\n", "no\n",
	    "NO, this is spam\n", "Nope\n", "\n> held\n\nno thanks\n", NULL };
	static const char *const not[] = { "Not spam, approve\n",
	    "Now it can go\n", "Nobody minds\n", "ok, no problem here\n",
	    NULL };
	char buf[512], word[16];
	size_t i;

	for (i = 0; yes[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", yes[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "reply %zu: not "
		    "taken for the contrary of approving", i);
	}
	for (i = 0; not[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", not[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: taken "
		    "for the contrary of approving", i);
	}
}
END_TEST

/* a bottom-posted reply: the quote's attribution line ("On ... wrote:",
 * unquoted, the line before the quote or a blank line before it, over
 * two lines when the client wraps it) is not the moderator's own; the
 * word after the quote is.  "on" was taken for it, and a "Reject" below
 * the quote approved the post */
START_TEST(contrary_below_the_quote)
{
	static const char *const rejects[] = {
	    "On Mon, Dec 7, 2026 at 5:00 PM dev moderation "
	    "<dev-moderate@lists.example.org> wrote:\n"
	    "> Reply to this message to approve the post\n\nReject, spam.\n",
	    /* Gmail wraps a long one; Apple Mail leaves a blank line */
	    "On Mon, Dec 7, 2026 at 5:00 PM dev moderation <\n"
	    "dev-moderate@lists.example.org> wrote:\n\n> held\n>\n"
	    "> Reply to approve\n\nspam\n",
	    "Am 07.12.2026 um 17:00 schrieb dev moderation:\n> held\n"
	    "reject\n",
	    "Le 07/12/2026 \xc3\xa0 17:00, dev moderation a \xc3\xa9" "crit :\n"
	    "> held\n\nDiscard\n",
	    /* the moderator's own word ending in ':' is taken still */
	    "Reject:\n> held\n",
	    NULL };
	static const char *const approves[] = {
	    /* a reply below the quote that asks for nothing */
	    "On Mon, X wrote:\n> held\n\nLooks fine, thanks.\n",
	    /* nothing below it: an empty reply approves */
	    "On Mon, X wrote:\n> held\n> Reject it with the reject address\n",
	    /* a moderator's own line that ends with ':' and no quote after
	     * it: the first word */
	    "Fine with me:\n\nreject the next one\n",
	    NULL };
	char buf[1024], word[16];
	size_t i;

	for (i = 0; rejects[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\nContent-Type: text/plain; charset=utf-8\n\n%s",
		    rejects[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "reply %zu: not "
		    "taken for the contrary of approving", i);
	}
	for (i = 0; approves[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\nContent-Type: text/plain; charset=utf-8\n\n%s",
		    approves[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: taken "
		    "for the contrary of approving (%s)", i, word);
	}
}
END_TEST

/* an HTML reply written below the quote: turned to text, the quote has
 * no '>' marks, and its attribution and the notice's words were taken
 * for the moderator's: a "Reject" below them approved the post.  The
 * quote is the mail program's element (Gmail's, Thunderbird's, Apple
 * Mail's, Yahoo's, Outlook's) */
START_TEST(contrary_below_an_html_quote)
{
	static const char *const rejects[] = {
	    /* Gmail */
	    "<div dir=\"ltr\"><br></div><br><div class=\"gmail_quote\">"
	    "<div dir=\"ltr\" class=\"gmail_attr\">On Mon, Dec 7, 2026 at "
	    "5:00 PM dev moderation &lt;<a href=\"mailto:dev-moderate@"
	    "lists.example.org\">dev-moderate@lists.example.org</a>&gt; "
	    "wrote:<br></div><blockquote class=\"gmail_quote\" style=\""
	    "margin:0px 0px 0px 0.8ex\"><div>A post to the list dev is held "
	    "for moderation.<br>Reply to this message to approve the post"
	    "</div></blockquote></div><div>Reject, this is spam.</div>\n",
	    /* Thunderbird */
	    "<html><body><div class=\"moz-cite-prefix\">On 07/12/2026 17:00, "
	    "dev moderation wrote:<br></div><blockquote type=\"cite\" cite="
	    "\"mid:n1@lists.example.org\"><pre>A post to the list dev is "
	    "held</pre></blockquote><p>Reject</p></body></html>\n",
	    /* Apple Mail: the attribution inside the quote */
	    "<div><br><blockquote type=\"cite\"><div>On Dec 7, 2026, at "
	    "17:00, dev moderation wrote:</div><div><div>held</div></div>"
	    "</blockquote></div><div>spam</div>\n",
	    /* Yahoo */
	    "<div class=\"yahoo_quoted\"><div>On Monday, December 7, 2026, "
	    "dev moderation wrote:</div><div>held</div></div><div>Discard"
	    "</div>\n",
	    NULL };
	static const char *const approves[] = {
	    /* nothing of the moderator's own but the quote */
	    "<div dir=\"ltr\"><br></div><div class=\"gmail_quote\"><div>On "
	    "Mon, X wrote:</div><blockquote>Reject it with the reject "
	    "address</blockquote></div>\n",
	    /* an approval above a quote that holds a contrary word */
	    "<div>ok</div><blockquote><div>Reject</div></blockquote>\n",
	    /* Outlook: its quote is not enclosed, but follows its header */
	    "<div>Fine</div><div id=\"appendonsend\"></div><hr><div id=\""
	    "divRplyFwdMsg\"><b>From:</b> dev moderation</div><div>No "
	    "reply: reject it with the reject address</div>\n",
	    "<div id=\"appendonsend\"></div><hr><div id=\"divRplyFwdMsg\">"
	    "<b>From:</b> dev moderation</div><div>No reply</div>\n",
	    NULL };
	char buf[2048], word[16];
	size_t i;

	for (i = 0; rejects[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\nContent-Type: text/html; charset=utf-8\n\n%s",
		    rejects[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "reply %zu: not "
		    "taken for the contrary of approving", i);
	}
	for (i = 0; approves[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\nContent-Type: text/html; charset=utf-8\n\n%s",
		    approves[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: taken "
		    "for the contrary of approving (%s)", i, word);
	}
}
END_TEST

/* a reply signed inline with OpenPGP: its armour's first lines are no
 * words of the moderator's.  "-----BEGIN PGP SIGNED MESSAGE-----" was
 * taken for the first line, which has no word, and a signed "Reject"
 * approved the post */
START_TEST(contrary_signed_inline)
{
	static const char *const rejects[] = {
	    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nReject, "
	    "spam.\n\nOn Mon, X wrote:\n> held\n-----BEGIN PGP SIGNATURE"
	    "-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----\n",
	    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
	    "On Mon, X wrote:\n> held\n\nno\n-----BEGIN PGP SIGNATURE"
	    "-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----\n",
	    /* two Hash: lines, CRLF */
	    "-----BEGIN PGP SIGNED MESSAGE-----\r\nHash: SHA256\r\n"
	    "Hash: SHA1\r\n\r\nSpam\r\n",
	    NULL };
	static const char *const approves[] = {
	    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nok\n"
	    "-----BEGIN PGP SIGNATURE-----\n\niQEz\n-----END PGP "
	    "SIGNATURE-----\n",
	    /* nothing of its own but the quote */
	    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n> held\n"
	    "-----BEGIN PGP SIGNATURE-----\n\niQEz\n-----END PGP "
	    "SIGNATURE-----\n",
	    NULL };
	char buf[1024], word[16];
	size_t i;

	for (i = 0; rejects[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", rejects[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "reply %zu: not "
		    "taken for the contrary of approving", i);
	}
	for (i = 0; approves[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", approves[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: taken "
		    "for the contrary of approving (%s)", i, word);
	}
}
END_TEST

/* a reply whose first word approves and whose first line then says
 * the contrary, "Yes, this is spam", "OK, reject it": it approved the
 * post.  One after "not" or "no" is what the post is not */
START_TEST(approving_word_then_contrary)
{
	static const char *const refuse[] = { "Yes, this is spam.\n",
	    "OK, reject it\n", "ok - discard\n", "Yes. Junk.\n",
	    "Sure: SPAM\n\n> held\n",
	    "\n\nOn Mon, X wrote:\n> held\n\nyes, spam\n",
	    /* whatever the first word */
	    "This is spam, please reject\n", "Looks fine, but it is spam\n",
	    "Please do not approve, it's spam\n",
	    /* past a no-break space (an HTML reply's &nbsp;) */
	    "OK,\xc2\xa0spam\n", NULL };
	static const char *const word_of[] = { "spam", "reject", "discard",
	    "junk", "spam", "spam", "spam", "spam", "spam", "spam" };
	static const char *const approve[] = { "OK, not spam\n",
	    "Yes, no spam here\n", "ok, no problem\n",
	    "Yes, it isn't spam\n",
	    "Approve\n\nthe next one I will reject\n",
	    "ok, thanks\n\nOn Mon, X wrote:\n> reject or discard it\n",
	    /* a reply that says none of it */
	    "Looks fine to me\n", "Not spam\n", "Don't reject, it's fine\n",
	    "Never spam, this sender\n",
	    /* (the rest of a longer first word is no word) */
	    "Aaaaaaaaaaaaaaaspam here\n",
	    NULL };
	char buf[512], word[16];
	size_t i;

	for (i = 0; refuse[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", refuse[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 2, "reply %zu: not "
		    "taken for the contrary of approving", i);
		ck_assert_str_eq(word, word_of[i]);
	}
	for (i = 0; approve[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", approve[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: taken "
		    "for the contrary of approving (%s)", i, word);
	}
	/* a first word that asks for the contrary is still 1 */
	snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: held\n"
	    "\nReject, yes\n");
	ck_assert_int_eq(reply_contrary((const unsigned char *)buf,
	    strlen(buf), word, sizeof(word)), 1);
	ck_assert_str_eq(word, "reject");
}
END_TEST

/* a moderator who writes the decision in the Subject and leaves the
 * text empty: "Re: Reject" approved the post */
START_TEST(contrary_in_the_subject)
{
	static const char *const contrary[] = { "Reject", "Re: reject",
	    "RE: SPAM - [dev] held: x (score 0.99)", "AW: Re: Discard",
	    "Re[2]: no", "Re : rejected", "Fwd: spam!", "Reject: spam",
	    "=?utf-8?q?Re=3A_REJECT?=", NULL };
	static const char *const not[] = {
	    "Re: [dev] held: Reject this offer (score 0.99)",
	    "Re: [dev] still held: spam (score 0.99)", "Re: nothing", "",
	    "Re: rejection", "Spammy: ok", "Re: ok, not spam", NULL };
	char buf[512], word[16];
	size_t i;

	for (i = 0; contrary[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: %s\n"
		    "\n\n> held\n", contrary[i]);
		ck_assert_msg(reply_subject_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "%s: not taken for "
		    "the contrary of approving", contrary[i]);
	}
	for (i = 0; not[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: %s\n"
		    "\n\n> held\n", not[i]);
		ck_assert_msg(reply_subject_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "%s: taken for the "
		    "contrary of approving (%s)", not[i], word);
	}
	/* no Subject: nothing */
	ck_assert_int_eq(reply_subject_contrary((const unsigned char *)
	    "From: a@x\n\nreject\n", 18, word, sizeof(word)), 0);
}
END_TEST

/* a moderator's own line that ends with ':' above the quote, "OK,
 * reject it:", was taken for the mail program's attribution ("On ...,
 * X wrote:"): the reply said nothing of its own, and approved.  A mail
 * program's names a date or an address, or says "wrote" */
START_TEST(own_line_above_the_quote)
{
	static const char *const refuse[] = {
	    "OK, reject it:\n> held\n",
	    "Yes, this is spam:\n\n> A post to the list dev is held\n",
	    NULL };
	static const char *const approve[] = {
	    "On Mon, Dec 7, 2026 at 5:00 PM X wrote:\n> held\n",
	    "X <dev-moderate@lists.example.org> wrote:\n> held\n",
	    "dev moderation wrote:\n> held\n",
	    "Am 07.12.2026 um 17:00 schrieb dev moderation:\n> held\n",
	    /* a mail program's, though it begins with a word that
	     * approves and names a contrary one */
	    "OK Spam Filter <dev-moderate@lists.example.org> wrote:\n"
	    "> held\n",
	    /* one that says nothing contrary: the own text below */
	    "Fine by me:\n> held\n",
	    NULL };
	/* below a line with a colon that names nothing (a localized
	 * Thunderbird's "X schrieb:"), the moderator's word is read */
	static const char *const below[] = {
	    "dev moderation schrieb:\n> held\n\nReject\n",
	    "Do not approve this:\n> held\n\nspam\n",
	    NULL };
	char buf[512], word[16];
	size_t i;

	for (i = 0; refuse[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", refuse[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 2, "reply %zu: "
		    "approves", i);
	}
	for (i = 0; approve[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", approve[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 0, "reply %zu: "
		    "refused (%s)", i, word);
	}
	for (i = 0; below[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "From: a@example.org\nSubject: Re: "
		    "held\n\n%s", below[i]);
		ck_assert_msg(reply_contrary((const unsigned char *)buf,
		    strlen(buf), word, sizeof(word)) == 1, "reply %zu: "
		    "approves", i);
	}
}
END_TEST

static Suite *
reply_suite(void)
{
	Suite *s = suite_create("reply");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, no_backscatter_to_robot_senders);
	tcase_add_test(tc, no_backscatter_for_list_or_robot_posts);
	tcase_add_test(tc, robots_never_decide);
	tcase_add_test(tc, contrary_past_unicode_blanks);
	tcase_add_test(tc, contrary_below_the_quote);
	tcase_add_test(tc, contrary_no);
	tcase_add_test(tc, contrary_below_an_html_quote);
	tcase_add_test(tc, contrary_signed_inline);
	tcase_add_test(tc, approving_word_then_contrary);
	tcase_add_test(tc, contrary_in_the_subject);
	tcase_add_test(tc, own_line_above_the_quote);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(reply_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
