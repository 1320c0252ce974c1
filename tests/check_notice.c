/*
 * check_notice.c - the hold notice, the digest and the answers of
 * moderation by mail (gate/moderate/notice.c), parsed back with the
 * project's own parser (gate/mail)
 *
 * A notice must be MIME that gate/mail walks without an anomaly, with
 * From, Reply-To and Subject as the interface fixes them, a text part
 * that holds the summary, the deciding tokens, a preview with controls
 * and markup made harmless and the three mailto: links, and the post
 * attached byte for byte.
 */
#include "config.h"

#include <sys/random.h>
#include <sys/syscall.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/app/preview.h"
#include "gate/mail/mail.h"
#include "gate/moderate/notice.h"
#include "gate/util/buf.h"

/* a hostile post: controls and a bidi override in the Subject, HTML
 * with a script, a line that pretends to be a link of ours */
static const char post[] =
    "From: Spammer <spam@example.net>\n"
    "To: dev@lists.example.org\n"
    "Subject: =?utf-8?b?Q2hlYXAg4oCuZ25pcmFl?= pills\x07\x1b[31m now\n"
    "Date: Thu, 03 Dec 2026 10:00:00 +0000\n"
    "Message-ID: <p1@example.net>\n"
    "MIME-Version: 1.0\n"
    "Content-Type: multipart/alternative; boundary=\"b1\"\n"
    "\n"
    "--b1\n"
    "Content-Type: text/plain; charset=iso-8859-1\n"
    "Content-Transfer-Encoding: quoted-printable\n"
    "\n"
    "Buy cheap pills, caf=E9 prices!\n"
    "approve: mailto:evil@example.net\n"
    "\x1b]0;owned\x07 terminal\n"
    "--b1\n"
    "Content-Type: text/html\n"
    "\n"
    "<html><body><script>alert(1)</script><p>Click <a href=\"http://x.example/\">here</a></p></body></html>\n"
    "--b1--\n";

/* the key the notices are sealed with (every message is: notice_to) */
static const struct cookie_key tkey = { { 't', 'e', 's', 't', '-', 'k', 'e',
    'y', '-', 'o', 'f', '-', 't', 'h', 'e', '-', 'n', 'o', 't', 'i', 'c',
    'e', '-', 't', 'e', 's', 't', 's', '-', '3', '2', 'b' }, 32 };

static const char clues[] =
    "subject:pills 0.990000 12 0\n"
    "body:cheap 0.980000 9 1\n"
    "url:x.example 0.970000 5 0\n"
    "tok\x1b[2Jevil 0.960000 4 0\n"
    "t5 0.950000 1 0\nt6 0.940000 1 0\nt7 0.930000 1 0\n"
    "t8 0.920000 1 0\nt9 0.910000 1 0\nt10 0.900000 1 0\n"
    "t11 0.890000 1 0\n";

/* what a walk of the notice found */
struct seen {
	struct buf subject, replyto, from, text;
	int anomalies, parts, rfc822_from;
};

static int
walk_cb(const struct mail_event *ev, void *vctx)
{
	struct seen *s = vctx;

	switch (ev->kind) {
	case MAIL_HEADER:
		if (ev->depth == 0 && strcasecmp(ev->name, "Subject") == 0)
			buf_add(&s->subject, ev->data, ev->len);
		if (ev->depth == 0 && strcasecmp(ev->name, "Reply-To") == 0)
			buf_add(&s->replyto, ev->data, ev->len);
		if (ev->depth == 0 && strcasecmp(ev->name, "From") == 0)
			buf_add(&s->from, ev->data, ev->len);
		if (ev->depth > 0 && strcasecmp(ev->name, "From") == 0 &&
		    strstr((const char *)ev->data, "spam@example.net") != NULL)
			s->rfc822_from = 1;
		break;
	case MAIL_TEXT:
		if (s->text.len == 0)
			buf_add(&s->text, ev->data, ev->len);
		s->parts++;
		break;
	case MAIL_ANOMALY:
		s->anomalies++;
		fprintf(stderr, "anomaly: %s\n", ev->data);
		break;
	default:
		break;
	}
	return 0;
}

static void
seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->subject, 1 << 16);
	buf_init(&s->replyto, 1 << 16);
	buf_init(&s->from, 1 << 16);
	buf_init(&s->text, 1 << 20);
}

static void
seen_free(struct seen *s)
{
	buf_free(&s->subject);
	buf_free(&s->replyto);
	buf_free(&s->from);
	buf_free(&s->text);
}

static void
links_for(struct notice_links *ln)
{
	snprintf(ln->approve, sizeof(ln->approve), "dev-moderate+approve-812-"
	    "0000000aaaaaaaaaaaaaaaaaaaa@lists.example.org");
	snprintf(ln->reject, sizeof(ln->reject), "dev-moderate+reject-812-"
	    "0000000bbbbbbbbbbbbbbbbbbbb@lists.example.org");
	snprintf(ln->discard, sizeof(ln->discard), "dev-moderate+discard-812-"
	    "0000000cccccccccccccccccccc@lists.example.org");
	ln->expiry = 1796000000;
}

static void
post_for(struct notice_post *p)
{
	memset(p, 0, sizeof(*p));
	p->list = "dev";
	p->id = 812;
	p->env_sender = "spam@example.net";
	p->from = "Spammer <spam@example.net>";
	p->subject = "Cheap \xe2\x80\xae" "gniraeb pills\x07\x1b[31m now";
	p->score = 0.99994;
	p->verdict = "spam";
	p->clues = clues;
	p->raw = (const unsigned char *)post;
	p->raw_len = sizeof(post) - 1;
	p->arrived = 1796000000 - 14 * 86400;
}

START_TEST(hold_notice_parses_back)
{
	struct notice_post p;
	struct notice_links ln;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000 - 14 * 86400, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	struct seen s;
	const char *t, *q;
	char bnd[128];
	size_t i;

	post_for(&p);
	links_for(&ln);
	ck_assert_int_eq(notice_hold(&p, &ln, &h, 0, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_int_eq(s.anomalies, 0);
	/* From, Reply-To, Subject as the interface fixes them */
	ck_assert_msg(strstr(buf_str(&s.from),
	    "<dev-moderate@lists.example.org>") != NULL, "%s",
	    buf_str(&s.from));
	ck_assert_str_eq(buf_str(&s.replyto), "<dev-moderate+approve-812-"
	    "0000000aaaaaaaaaaaaaaaaaaaa@lists.example.org>");
	ck_assert_msg(strncmp(buf_str(&s.subject), "[dev] held: Cheap ", 18)
	    == 0, "%s", buf_str(&s.subject));
	ck_assert_msg(strstr(buf_str(&s.subject), "(score 0.9999)") != NULL,
	    "%s", buf_str(&s.subject));
	/* the bidi override, BEL and ESC are masked in the Subject */
	ck_assert_ptr_null(strstr(buf_str(&s.subject), "\xe2\x80\xae"));
	ck_assert_ptr_null(strchr(buf_str(&s.subject), '\x1b'));
	ck_assert_ptr_null(strchr(buf_str(&s.subject), '\x07'));
	/* the text part: summary, ten tokens, preview, links */
	t = buf_str(&s.text);
	ck_assert_msg(strstr(t, "Sender:  <spam@example.net>") != NULL, "%s",
	    t);
	ck_assert_ptr_nonnull(strstr(t, "Date:    Thu, 03 Dec 2026 10:00:00"));
	ck_assert_ptr_nonnull(strstr(t, "Size:    "));
	ck_assert_ptr_nonnull(strstr(t, "Score:   0.9999 (verdict: spam)"));
	ck_assert_ptr_null(strstr(t, "Held as:"));	/* held for its score */
	ck_assert_ptr_nonnull(strstr(t, "0.990000  subject:pills"));
	ck_assert_ptr_nonnull(strstr(t, "0.980000  body:cheap"));
	ck_assert_ptr_nonnull(strstr(t, "0.900000  t10"));
	ck_assert_ptr_null(strstr(t, "t11"));		/* ten, no more */
	ck_assert_ptr_nonnull(strstr(t, "tok?[2Jevil"));	/* masked */
	/* the preview: decoded (Latin-1 to UTF-8), quoted, no controls */
	ck_assert_msg(strstr(t, "  | Buy cheap pills, caf\xc3\xa9 prices!") !=
	    NULL, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, "  | approve: mailto:evil@"));
	ck_assert_ptr_nonnull(strstr(t, "  | ?]0;owned? terminal"));
	ck_assert_ptr_null(strstr(t, "<script>"));
	ck_assert_ptr_nonnull(strstr(t, "here"));
	for (i = 0; t[i]; i++)
		ck_assert_msg((unsigned char)t[i] >= 0x20 || t[i] == '\n',
		    "control 0x%02x in the text", (unsigned char)t[i]);
	/* the three links, at a line's start after the indent */
	ck_assert_ptr_nonnull(strstr(t, "\n  approve: mailto:" "dev-moderate+"
	    "approve-812-0000000aaaaaaaaaaaaaaaaaaaa@lists.example.org\n"));
	ck_assert_ptr_nonnull(strstr(t, "\n  reject:  mailto:dev-moderate+"
	    "reject-812-"));
	ck_assert_ptr_nonnull(strstr(t, "\n  discard: mailto:dev-moderate+"
	    "discard-812-"));
	/* the attachment: message/rfc822, the post byte for byte */
	ck_assert_int_eq(s.rfc822_from, 1);
	q = strstr((const char *)out.data, "boundary=\"");
	ck_assert_ptr_nonnull(q);
	snprintf(bnd, sizeof(bnd), "%.*s", (int)strcspn(q + 10, "\""), q + 10);
	q = strstr((const char *)out.data, "Content-Type: message/rfc822\n");
	ck_assert_ptr_nonnull(q);
	q = strstr(q, "\n\n");
	ck_assert_ptr_nonnull(q);
	q += 2;
	ck_assert_int_eq(memcmp(q, post, sizeof(post) - 1), 0);
	ck_assert_int_eq(strncmp(q + sizeof(post) - 1, "\n--", 3), 0);
	ck_assert_int_eq(strncmp(q + sizeof(post) + 2, bnd, strlen(bnd)), 0);
	/* lines are short: the text part is quoted-printable */
	for (t = (const char *)out.data; t < (const char *)q; t = q + 1) {
		const char *nl = strchr(t, '\n');

		ck_assert_int_le(nl - t, 998);
		q = nl;
		if (strncmp(t, "Content-Type: message/rfc822", 28) == 0)
			break;
	}
	seen_free(&s);
	buf_free(&out);
}
END_TEST

/* a post held because deliver refused it says so, the server's text
 * masked */
START_TEST(held_as_note)
{
	struct notice_post p;
	struct notice_links ln;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000 - 14 * 86400, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	struct seen s;
	const char *t;

	post_for(&p);
	links_for(&ln);
	p.score = 0.01;
	p.verdict = "ham";
	p.note = "deliver refused the post: lmtp:127.0.0.1:8024: end of "
	    "data: 501 Message has defects\x1b[2J";
	ck_assert_int_eq(notice_hold(&p, &ln, &h, 0, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	t = buf_str(&s.text);
	ck_assert_msg(strstr(t, "Held as: deliver refused the post: "
	    "lmtp:127.0.0.1:8024: end of data: 501 Message has defects?[2J\n")
	    != NULL, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, "Score:   0.0100 (verdict: ham)"));
	seen_free(&s);
	buf_free(&out);
}
END_TEST

START_TEST(digest_and_answer)
{
	struct notice_post p[3];
	struct notice_links ln[3];
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	struct seen s;
	int i;

	for (i = 0; i < 3; i++) {
		post_for(&p[i]);
		p[i].id = 812 + i;
		links_for(&ln[i]);
	}
	ck_assert_int_eq(notice_digest("dev", p, ln, 3, 0, &h, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_int_eq(s.anomalies, 0);
	ck_assert_str_eq(buf_str(&s.subject),
	    "[dev] held: 3 posts wait for moderation");
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text), "-- post 813 --"));
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text), "-- post 814 --"));
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text),
	    "  approve: mailto:dev-moderate+approve-812-"));
	seen_free(&s);
	/* a digest reads no post's bytes: its posts' Date is not known,
	 * and no line says they have none ("Date:    -") */
	buf_reset(&out);
	p[0].raw = NULL;
	p[0].raw_len = 0;
	p[0].size = 400;
	ck_assert_int_eq(notice_digest("dev", p, ln, 1, 0, &h, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_msg(strstr(buf_str(&s.text), "Date:") == NULL, "%s",
	    buf_str(&s.text));
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text),
	    "\n  Subject: Cheap"));
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text), "\n  Held:    "));
	seen_free(&s);
	post_for(&p[0]);
	/* one post: "1 post waits" (it said "1 post wait") */
	buf_reset(&out);
	ck_assert_int_eq(notice_digest("dev", p, ln, 1, 0, &h, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_str_eq(buf_str(&s.subject),
	    "[dev] held: 1 post waits for moderation");
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text),
	    "1 post to the list dev is held."));
	seen_free(&s);
	/* two listed, three more waiting for a later digest: counted and
	 * named (the "more" line could never appear: the caller listed at
	 * most NOTICE_MAX_DIGEST and passed only those) */
	buf_reset(&out);
	ck_assert_int_eq(notice_digest("dev", p, ln, 2, 3, &h, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_str_eq(buf_str(&s.subject),
	    "[dev] held: 5 posts wait for moderation");
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text), "-- post 813 --"));
	ck_assert_ptr_null(strstr(buf_str(&s.text), "-- post 814 --"));
	ck_assert_ptr_nonnull(strstr(buf_str(&s.text),
	    "\n(3 more: a later digest lists them;"));
	seen_free(&s);

	buf_reset(&out);
	ck_assert_int_eq(notice_answer("dev", "approved: post 812",
	    "<r1@example.org>", "Post 812 is approved.\n", &h, &out), 0);
	ck_assert_ptr_nonnull(strstr((const char *)out.data,
	    "\nIn-Reply-To: <r1@example.org>\n"));
	ck_assert_ptr_nonnull(strstr((const char *)out.data,
	    "\nAuto-Submitted: auto-replied\n"));
	buf_reset(&out);
	/* a hostile In-Reply-To is left out */
	ck_assert_int_eq(notice_answer("dev", "x", "<a>\nBcc: x@y", "t\n", &h,
	    &out), 0);
	ck_assert_ptr_null(strstr((const char *)out.data, "In-Reply-To"));
	ck_assert_ptr_null(strstr((const char *)out.data, "Bcc"));
	buf_free(&out);

	ck_assert_int_eq(notice_addr_ok("alice@example.org"), 1);
	ck_assert_int_eq(notice_addr_ok(""), 0);
	ck_assert_int_eq(notice_addr_ok("a b@example.org"), 0);
	ck_assert_int_eq(notice_addr_ok("a@example.org\nBcc: x@y"), 0);
	ck_assert_int_eq(notice_addr_ok("<a@example.org>"), 0);
	ck_assert_int_eq(notice_addr_ok("a@"), 0);
}
END_TEST

/* a Subject that decodes once to a literal encoded word stays that
 * text: a reader that decodes the notice's header sees the word, never
 * the bidi override and the line break it hides; answers alike */
START_TEST(double_encoded_subject)
{
	static const char word[] =
	    "=?utf-8?b?4oCuIGducC5leGUNClgtRXZpbDogMQ==?=";
	struct notice_post p;
	struct notice_links ln;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	struct seen s;
	const char *e;

	post_for(&p);
	links_for(&ln);
	p.subject = word;
	ck_assert_int_eq(notice_hold(&p, &ln, &h, 0, &out), 0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_str_eq(buf_str(&s.subject), "[dev] held: "
	    "=?utf-8?b?4oCuIGducC5leGUNClgtRXZpbDogMQ==?= (score 0.9999)");
	e = strstr((const char *)out.data, "\n\n");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(memmem(out.data, (size_t)(e - (const char *)
	    out.data), word, sizeof(word) - 1));
	seen_free(&s);

	buf_reset(&out);
	ck_assert_int_eq(notice_answer("dev", word, NULL, "t\n", &h, &out),
	    0);
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_str_eq(buf_str(&s.subject), "[dev] "
	    "=?utf-8?b?4oCuIGducC5leGUNClgtRXZpbDogMQ==?=");
	seen_free(&s);
	buf_free(&out);
}
END_TEST

/* a moderator's preview shows what a reader sees: not the text of
 * hidden HTML elements */
START_TEST(preview_no_hidden_text)
{
	static const char raw[] = "Subject: s\nContent-Type: text/html\n\n"
	    "<p>Mi<span style=\"font-size:0\">zzz</span>crosoft</p>"
	    "<div style=\"display:none\">meeting agenda</div>shown\n";
	struct buf out = BUF_INIT(4096);

	ck_assert_int_eq(preview_text((const unsigned char *)raw,
	    sizeof(raw) - 1, &out), 0);
	ck_assert_ptr_nonnull(strstr(buf_str(&out), "Microsoft"));
	ck_assert_ptr_nonnull(strstr(buf_str(&out), "shown"));
	ck_assert_ptr_null(strstr(buf_str(&out), "zzz"));
	ck_assert_ptr_null(strstr(buf_str(&out), "agenda"));
	buf_free(&out);
}
END_TEST

/* a "." or "From " that a soft line break moves to a line's start is
 * encoded there too: a lone "." ends a message for sendmail without
 * -i, and mbox delivery turns "From " into ">From " */
START_TEST(qp_soft_break_line_start)
{
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 20);
	struct seen s;
	char text[512];
	const char *b, *l;

	memset(text, 'a', 75);
	snprintf(text + 75, sizeof(text) - 75, ".\n");
	memset(text + 77, 'b', 75);
	snprintf(text + 152, sizeof(text) - 152, "From x\n");
	ck_assert_int_eq(notice_answer("dev", "s", NULL, text, &h, &out), 0);
	b = strstr((const char *)out.data, "\n\n");
	ck_assert_ptr_nonnull(b);
	for (l = b + 2; *l != '\0'; l += strcspn(l, "\n") + (l[strcspn(l,
	    "\n")] != '\0')) {
		ck_assert_msg(l[0] != '.' && strncmp(l, "From ", 5) != 0,
		    "a line starts with \"%.5s\" in\n%s", l, b + 2);
		ck_assert_int_le(strcspn(l, "\n"), 76);
	}
	/* decoded, the text is what was written */
	seen_init(&s);
	ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb, &s), 0);
	ck_assert_str_eq(buf_str(&s.text), text);
	seen_free(&s);
	buf_free(&out);
}
END_TEST

/* any bytes as the post and its fields: a well-formed notice, no
 * failure */
START_TEST(hostile_bytes)
{
	unsigned char raw[4096];
	char subj[300], cl[600];
	struct notice_post p;
	struct notice_links ln;
	struct notice_to h = { "m@x.example", "a@x.example", 0, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	struct seen s;
	unsigned v = 12345;
	size_t i;
	int round;

	for (round = 0; round < 50; round++) {
		for (i = 0; i < sizeof(raw); i++) {
			v = v * 1103515245u + 12345u;
			raw[i] = (unsigned char)(v >> 16);
		}
		for (i = 0; i + 1 < sizeof(subj); i++)
			subj[i] = (char)(raw[i] | 1);
		subj[sizeof(subj) - 1] = '\0';
		for (i = 0; i + 1 < sizeof(cl); i++)
			cl[i] = (char)(raw[i + 300] | 1);
		cl[sizeof(cl) - 1] = '\0';
		post_for(&p);
		p.subject = subj;
		p.from = subj + 10;
		p.env_sender = subj + 20;
		p.clues = cl;
		p.raw = raw;
		p.raw_len = round == 0 ? 0 : sizeof(raw);
		links_for(&ln);
		buf_reset(&out);
		ck_assert_int_eq(notice_hold(&p, &ln, &h, round & 1, &out), 0);
		seen_init(&s);
		ck_assert_int_eq(mail_walk(out.data, out.len, NULL, walk_cb,
		    &s), 0);
		ck_assert_str_eq(buf_str(&s.replyto), "<dev-moderate+approve-"
		    "812-0000000aaaaaaaaaaaaaaaaaaaa@lists.example.org>");
		ck_assert_ptr_nonnull(strstr(buf_str(&s.text),
		    "  discard: mailto:dev-moderate+discard-812-"));
		seen_free(&s);
	}
	buf_free(&out);
}
END_TEST

/* the loop guard: a message listgate wrote is known by its seal under
 * the site's secret, never by X-Listgate-List alone, which any post can
 * carry (a stranger's post with it got no hold notice) */
START_TEST(loop_guard_sealed)
{
	struct cookie_key key, other;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 20), forged = BUF_INIT(1 << 20);
	const char *mid, *e;
	size_t i;

	memset(&key, 0, sizeof(key));
	memset(&other, 0, sizeof(other));
	for (i = 0; i < 40; i++) {
		key.k[i] = (unsigned char)('a' + i % 26);
		other.k[i] = (unsigned char)('A' + i % 26);
	}
	key.len = other.len = 40;
	/* no key at hand: no message at all (the web page's sender notice
	 * went out unsealed), nor an empty key's */
	h.key = NULL;
	ck_assert_int_eq(notice_answer("dev", "approved: post 1", NULL,
	    "Post 1 is approved.\n", &h, &out), -1);
	ck_assert_uint_eq(out.len, 0);
	h.key = &other;
	other.len = 0;
	ck_assert_int_eq(notice_answer("dev", "approved: post 1", NULL,
	    "Post 1 is approved.\n", &h, &out), -1);
	ck_assert_int_eq(notice_digest("dev", NULL, NULL, 0, 0, &h, &out), -1);
	ck_assert_uint_eq(out.len, 0);
	other.len = 40;
	/* sealed: known under its key only */
	buf_reset(&out);
	h.key = &key;
	ck_assert_int_eq(notice_answer("dev", "approved: post 1", NULL,
	    "Post 1 is approved.\n", &h, &out), 0);
	ck_assert_ptr_nonnull(strstr(buf_str(&out), "\nX-Listgate-Seal: "));
	ck_assert_int_eq(notice_is_ours(out.data, out.len, &key), 1);
	ck_assert_int_eq(notice_is_ours(out.data, out.len, &other), 0);
	ck_assert_int_eq(notice_is_ours(out.data, out.len, NULL), 0);
	/* a stranger's post with the field, and with a made-up seal */
	ck_assert_int_eq(buf_adds(&forged, "X-Listgate-List: dev\n"
	    "Message-ID: <p1@example.net>\nX-Listgate-Seal: "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nSubject: hi\n\nbuy\n"), 0);
	ck_assert_int_eq(notice_is_ours(forged.data, forged.len, &key), 0);
	/* one that copies a real notice's seal onto its own Message-ID */
	mid = strstr(buf_str(&out), "\nX-Listgate-Seal: ");
	e = strchr(mid + 1, '\n');
	buf_reset(&forged);
	ck_assert_int_eq(buf_adds(&forged, "X-Listgate-List: dev\n"
	    "Message-ID: <p1@example.net>"), 0);
	ck_assert_int_eq(buf_add(&forged, mid, (size_t)(e - mid + 1)), 0);
	ck_assert_int_eq(buf_adds(&forged, "\nbuy\n"), 0);
	ck_assert_int_eq(notice_is_ours(forged.data, forged.len, &key), 0);
	buf_free(&out);
	buf_free(&forged);
}
END_TEST

/* every message listgate writes tells Exchange to send no out-of-office
 * or rule reply: Exchange sends one to the Reply-To, a hold notice's
 * being the approve address, and one that marks itself no other way
 * (its Subject in another language: "Automatische Antwort: ...")
 * would approve the post */
START_TEST(no_auto_replies)
{
	static const char field[] = "\nX-Auto-Response-Suppress: OOF, "
	    "AutoReply\n";
	struct notice_post p;
	struct notice_links ln;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "alice@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 22);
	const char *e;
	int remind;

	post_for(&p);
	links_for(&ln);
	for (remind = 0; remind < 2; remind++) {
		buf_reset(&out);
		ck_assert_int_eq(notice_hold(&p, &ln, &h, remind, &out), 0);
		e = strstr(buf_str(&out), "\n\n");
		ck_assert_ptr_nonnull(e);
		/* in the notice's own header, not only in the attached post */
		ck_assert_msg(memmem(out.data, (size_t)(e + 1 -
		    buf_str(&out)), field, strlen(field)) != NULL, "%s",
		    buf_str(&out));
	}
	buf_reset(&out);
	ck_assert_int_eq(notice_digest("dev", &p, &ln, 1, 0, &h, &out), 0);
	ck_assert_ptr_nonnull(strstr(buf_str(&out), field));
	buf_reset(&out);
	ck_assert_int_eq(notice_answer("dev", "approved: post 812", NULL,
	    "Post 812 is approved.\n", &h, &out), 0);
	ck_assert_ptr_nonnull(strstr(buf_str(&out), field));
	buf_free(&out);
}
END_TEST

/* getrandom(2) of this program: the kernel's, or ENOSYS (an old
 * kernel, a seccomp filter) while no_getrandom is set (notice.c then
 * falls back to a count) */
static volatile int no_getrandom;

ssize_t
getrandom(void *buf, size_t len, unsigned int flags)
{
	if (no_getrandom) {
		errno = ENOSYS;
		return -1;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

/* answers each of the threads builds, and the length of a Message-ID
 * kept of each */
#define RACE_THREADS	4
#define RACE_ANSWERS	200000
#define RACE_ID		64

struct race {
	char *ids;	/* RACE_ANSWERS Message-IDs of RACE_ID bytes */
	int fails;
};

static void *
race_answers(void *arg)
{
	struct race *r = arg;
	struct notice_to h = { "dev-moderate@lists.example.org",
	    "s@example.org", 1796000000, &tkey };
	struct buf out = BUF_INIT(1 << 16);
	const char *m;
	int i;

	for (i = 0; i < RACE_ANSWERS; i++) {
		buf_reset(&out);
		if (notice_answer("dev", "your post was not accepted", NULL,
		    "t\n", &h, &out) < 0 || (m = strstr(buf_str(&out),
		    "\nMessage-ID: ")) == NULL) {
			r->fails++;
			continue;
		}
		m += strlen("\nMessage-ID: ");
		snprintf(r->ids + (size_t)i * RACE_ID, RACE_ID, "%.*s",
		    (int)strcspn(m, "\n"), m);
	}
	buf_free(&out);
	return NULL;
}

static int
cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* without getrandom, the answers listgate web's request threads send
 * at once (a rejection's notice to its sender) each have a Message-ID
 * of their own (the fallback's count was a plain ++: two threads took
 * one value, thousands of duplicates here) */
START_TEST(answers_unique_without_getrandom)
{
	struct race r[RACE_THREADS];
	pthread_t t[RACE_THREADS];
	size_t n = (size_t)RACE_THREADS * RACE_ANSWERS, i, dups = 0;
	char *all;
	int k;

	all = calloc(n, RACE_ID);
	ck_assert_ptr_nonnull(all);
	no_getrandom = 1;
	for (k = 0; k < RACE_THREADS; k++) {
		r[k].ids = all + (size_t)k * RACE_ANSWERS * RACE_ID;
		r[k].fails = 0;
		ck_assert_int_eq(pthread_create(&t[k], NULL, race_answers,
		    &r[k]), 0);
	}
	for (k = 0; k < RACE_THREADS; k++) {
		pthread_join(t[k], NULL);
		ck_assert_int_eq(r[k].fails, 0);
	}
	no_getrandom = 0;
	qsort(all, n, RACE_ID, cmp_id);
	for (i = 1; i < n; i++)
		if (strcmp(all + i * RACE_ID, all + (i - 1) * RACE_ID) == 0)
			dups++;
	free(all);
	ck_assert_msg(dups == 0, "%zu Message-IDs given twice", dups);
}
END_TEST

static Suite *
notice_suite(void)
{
	Suite *s = suite_create("notice");
	TCase *tc = tcase_create("notice");
	TCase *tr = tcase_create("threads");

	tcase_add_test(tc, hold_notice_parses_back);
	tcase_add_test(tc, held_as_note);
	tcase_add_test(tc, digest_and_answer);
	tcase_add_test(tc, double_encoded_subject);
	tcase_add_test(tc, qp_soft_break_line_start);
	tcase_add_test(tc, hostile_bytes);
	tcase_add_test(tc, preview_no_hidden_text);
	tcase_add_test(tc, loop_guard_sealed);
	tcase_add_test(tc, no_auto_replies);
	suite_add_tcase(s, tc);
	/* (800000 answers: a sanitizer's build takes its time) */
	tcase_set_timeout(tr, 120);
	tcase_add_test(tr, answers_unique_without_getrandom);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(notice_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
