/*
 * check_received.c - the Received chain: lines of real MTAs (taken from
 * the SpamAssassin public corpus), the walk to the first untrusted hop
 * on whole header chains (the corpus headers in tests/data/received/),
 * the src: tokens, registered domains, trusted relays, hostile bytes
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/received.h"
#include "gate/tok.h"
#include "gate/util/netlist.h"

/* --- one line ---------------------------------------------------------- */

struct line_case {
	const char *line;
	int r;			/* received_parse's result */
	const char *ip, *helo, *rdns;
	int forged;
};

static const struct line_case lines[] = {
	/* Postfix, sendmail: from HELO (RDNS [IP]) */
	{ "from listman.spamassassin.taint.org (listman.spamassassin.taint.org "
	  "[66.187.233.211]) by dogma.slashnull.org (8.11.6/8.11.6) with ESMTP "
	  "id g7MBYrZ04811 for <zzzz-exmh@spamassassin.taint.org>; Thu, 22 Aug "
	  "2002 12:34:53 +0100", 1, "66.187.233.211",
	  "listman.spamassassin.taint.org", "listman.spamassassin.taint.org", 0 },
	{ "from ns1.snaapp.com (066.dsl6660167.bstatic.surewest.net "
	  "[66.60.167.66]) by webnote.net (8.9.3/8.9.3) with ESMTP id BAA09623",
	  1, "66.60.167.66", "ns1.snaapp.com",
	  "066.dsl6660167.bstatic.surewest.net", 0 },
	/* sendmail with IDENT: (user@RDNS [IP]) */
	{ "from lugh.tuatha.org (root@lugh.tuatha.org [194.125.145.45]) by "
	  "webnote.net (8.9.3/8.9.3) with ESMTP id MAA23305", 1,
	  "194.125.145.45", "lugh.tuatha.org", "lugh.tuatha.org", 0 },
	/* sendmail: no verified name, and "may be forged" */
	{ "from ratree.psu.ac.th ([202.28.97.6]) by mx1.spamassassin.taint.org "
	  "(8.11.6/8.11.6) with SMTP id g7MBIhl25223", 1, "202.28.97.6",
	  "ratree.psu.ac.th", "", 0 },
	{ "from mail.magicgoeshere.com (nw152-60.indigo.ie [194.125.152.60] "
	  "(may be forged)) by lugh.tuatha.org (8.9.3/8.9.3) with ESMTP id "
	  "OAA06567", 1, "194.125.152.60", "mail.magicgoeshere.com",
	  "nw152-60.indigo.ie", 1 },
	/* Post.Office: from HELO ([IP]) */
	{ "from html ([199.35.244.221]) by ns1.snaapp.com (Post.Office MTA "
	  "v3.1.2 release (PO205-101c) ID# 0-47762U100L2S100) with SMTP id "
	  "ABD354", 1, "199.35.244.221", "html", "", 0 },
	/* fetchmail: from HOST [IP] */
	{ "from mail.webnote.net [193.120.211.219] by localhost with POP3 "
	  "(fetchmail-5.9.0) for jm@localhost (single-drop)", 1,
	  "193.120.211.219", "mail.webnote.net", "", 0 },
	/* Exim: from [IP] (helo=NAME), from RDNS ([IP] helo=NAME) */
	{ "from [194.165.167.234] (helo=excalibur.research.wombat.ie) by "
	  "mail2.mail.iol.ie with esmtp (Exim 3.35 #1) id 17VsE4-0003TP-00", 1,
	  "194.165.167.234", "excalibur.research.wombat.ie", "", 0 },
	{ "from vivi.uptime.at ([62.116.87.11] helo=mail.uptime.at) by "
	  "listman.example.com with esmtp (Exim 3.35 #1)", 1, "62.116.87.11",
	  "mail.uptime.at", "vivi.uptime.at", 0 },
	/* qmail: from RDNS|unknown (HELO NAME) (IP) */
	{ "from unknown (HELO mx3.mail.yahoo.com) (61.125.120.21) by "
	  "nsvmj2.zaq.ne.jp with SMTP; 1 Aug 2001 08:15:47 +0900", 1,
	  "61.125.120.21", "mx3.mail.yahoo.com", "", 0 },
	{ "from pool-63.49.33.235.mmph.grid.net (HELO ecis.com) (63.49.33.235) "
	  "by ns.engelsendekorte.nl with SMTP; 27 May 2001 16:50:45", 1,
	  "63.49.33.235", "ecis.com", "pool-63.49.33.235.mmph.grid.net", 0 },
	{ "from unknown (150.17.56.186) by symail.kustanai.co.kr with asmtp",
	  1, "150.17.56.186", "", "", 0 },
	/* Postfix with IPv6 */
	{ "from mx.example.net (mx.example.net [IPv6:2001:db8:1:2::25]) by "
	  "mail.example.org (Postfix) with ESMTPS id 4F1", 1,
	  "2001:db8:1:2::25", "mx.example.net", "mx.example.net", 0 },
	/* Postfix: no verified name */
	{ "from helo.example (unknown [198.51.100.7]) by mail.example.org "
	  "(Postfix) with ESMTP id 4F1", 1, "198.51.100.7", "helo.example", "",
	  0 },
	/* what the client said is never its address: a HELO literal
	 * (Postfix, sendmail, Exim), a HELO or ident user with an '@'
	 * (qmail writes both as given) */
	{ "from [127.0.0.1] (unknown [203.0.113.9]) by mx.example.org "
	  "(Postfix) with ESMTP id 4F1", 1, "203.0.113.9", "[127.0.0.1]", "",
	  0 },
	{ "from [10.1.1.1] (mail.example.com [203.0.113.9]) by "
	  "mx.example.org (8.14.7/8.14.7) with ESMTP id x1", 1, "203.0.113.9",
	  "[10.1.1.1]", "mail.example.com", 0 },
	{ "from [203.0.113.9] (helo=[127.0.0.1]) by mx.example.org with "
	  "esmtp (Exim 4.96)", 1, "203.0.113.9", "[127.0.0.1]", "", 0 },
	{ "from unknown (HELO x@127.0.0.1) (203.0.113.9) by mx.example.org "
	  "with SMTP; 2 Dec 2024 10:00:00 -0000", 1, "203.0.113.9",
	  "x@127.0.0.1", "", 0 },
	{ "from unknown (HELO [127.0.0.1]) (203.0.113.9) by mx.example.org "
	  "with SMTP; 2 Dec 2024 10:00:00 -0000", 1, "203.0.113.9",
	  "[127.0.0.1]", "", 0 },
	{ "from unknown (HELO mx.example.net) (x@127.0.0.1@203.0.113.9) by "
	  "mx.example.org with SMTP", 1, "203.0.113.9", "mx.example.net", "",
	  0 },
	/* a client whose PTR record says "helo" or "ehlo": our MTA's
	 * comment "(helo [IP])" is no qmail HELO comment, and the HELO
	 * literal before it is not the client */
	{ "from [8.8.8.8] (helo [203.0.113.9] (may be forged)) by "
	  "mx.example.org (8.15.2/8.15.2) with ESMTP id x1", 1, "203.0.113.9",
	  "[8.8.8.8]", "helo", 1 },
	{ "from [10.0.0.1] (EHLO [203.0.113.9]) by mx.example.org (Postfix) "
	  "with ESMTP id 4F1", 1, "203.0.113.9", "[10.0.0.1]", "ehlo", 0 },
	/* nor does a ';' or an unclosed '(' in a HELO end or hide our
	 * MTA's comment (the for-clause's literal is not the client's) */
	{ "from x; (unknown [203.0.113.9]) by mx.example.org (Postfix) with "
	  "ESMTP id 4F1; Mon, 2 Dec 2024 10:00:00 +0000", 1, "203.0.113.9",
	  "x;", "", 0 },
	{ "from x((( (unknown [203.0.113.9]) by mx.example.org (Postfix) with "
	  "ESMTP id 4F1 for <list@[127.0.0.1]>; Mon, 2 Dec 2024 10:00:00 +0000",
	  1, "203.0.113.9", "x(((", "", 0 },
	{ "from x (unknown [203.0.113.9]); Mon, 2 Dec 2024 10:00:00 +0000", 1,
	  "203.0.113.9", "x", "", 0 },
	{ "from ( (unknown [203.0.113.9]) by mx.example.org (Postfix) with "
	  "ESMTP id 4F1 for <list@[127.0.0.1]>; Mon, 2 Dec 2024 10:00:00 +0000",
	  1, "203.0.113.9", "(", "", 0 },
	/* Postfix takes a HELO of several words whole (and writes no '('
	 * of it): a " by " in it ends nothing, its literal is not the
	 * client */
	{ "from x [127.0.0.1] by y (unknown [203.0.113.9]) by mx.example.org "
	  "(Postfix) with ESMTP id 4F1 for <list@example.org>; Mon, 2 Dec "
	  "2024 10:00:00 +0000", 1, "203.0.113.9", "x", "", 0 },
	{ "from [8.8.8.8] by mail.example.com (mail.example.com "
	  "[203.0.113.9]) (using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 "
	  "(256/256 bits)) by mx.example.org (Postfix) with ESMTPS id 4F1",
	  1, "203.0.113.9", "[8.8.8.8]", "mail.example.com", 0 },
	{ "from x by [10.0.0.1] y [IPv6:::1] (unknown [IPv6:2001:db8::9]) by "
	  "mx.example.org (Postfix) with ESMTP id 4F1", 1, "2001:db8::9", "x",
	  "", 0 },
	/* ... while the first " by " still ends a clause with no comment
	 * about the client before it: the recipient's literal is not the
	 * client */
	{ "from [203.0.113.9] by mx.example.org with esmtp (Exim 4.96) "
	  "(envelope-from <a@[127.0.0.1]>) id 1x for \"l by [127.0.0.1]\"@"
	  "example.org; Mon, 2 Dec 2024 10:00:00 +0000", 1, "203.0.113.9",
	  "[203.0.113.9]", "", 0 },
	/* no network hop: local submissions */
	{ "(qmail 10626 invoked from network); 1 Aug 2001 08:15:47 +0900", 0,
	  NULL, NULL, NULL, 0 },
	{ "(from mail@localhost) by int-mx1.corp.spamassassin.taint.org "
	  "(8.11.6/8.11.6) id g7MBY7g11259", 0, NULL, NULL, NULL, 0 },
	{ "by bagend.magicgoeshere.com (Postfix, from userid 501) id "
	  "B108F3C04F", 0, NULL, NULL, NULL, 0 },
	/* a from-clause without an address */
	{ "from mail pickup service by hotmail.com with Microsoft SMTPSVC; "
	  "Fri, 9 Aug 2002 03:45:23 -0700", -1, NULL, NULL, NULL, 0 },
};

START_TEST(parse_real_lines)
{
	const struct line_case *c = &lines[_i];
	struct received_hop h;
	unsigned char want[16];
	int r;

	r = received_parse((const unsigned char *)c->line, strlen(c->line), &h);
	ck_assert_msg(r == c->r, "%s: got %d", c->line, r);
	if (r != 1)
		return;
	ck_assert_int_ne(netlist_addr(c->ip, strlen(c->ip), want), 0);
	ck_assert_msg(memcmp(want, h.ip, 16) == 0, "%s: wrong IP", c->line);
	ck_assert_str_eq(h.helo, c->helo);
	ck_assert_str_eq(h.rdns, c->rdns);
	ck_assert_int_eq(h.forged, c->forged);
}
END_TEST

/* --- whole chains ------------------------------------------------------ */

/* 1 if tl holds s */
static int
has(const struct toklist *tl, const char *s)
{
	return toklist_find(tl, s, strlen(s)) >= 0;
}

/* the src: tokens of a fixture, one per line, with trusted relays */
static struct toklist *
chain_tokens(const char *name, const char *trusted, char *out, size_t outsz)
{
	static struct netlist nl;
	struct tok_opts o;
	struct toklist *tl, *src;
	char path[1024], why[256], *msg;
	const char *t;
	size_t i, n, len, k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/received/%s.eml",
	    getenv("top_srcdir") ? getenv("top_srcdir") : "..", name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "%s", path);
	msg = malloc(1 << 16);
	n = fread(msg, 1, 1 << 16, f);
	fclose(f);
	ck_assert_int_eq(netlist_parse(trusted, &nl, why, sizeof(why)), 0);
	tok_opts_default(&o);
	o.trust = &nl;
	tl = toklist_new(o.max_tokens);
	src = toklist_new(100);
	ck_assert_int_eq(tok_post((unsigned char *)msg, n, &o, tl), 0);
	out[0] = '\0';
	for (i = 0; i < toklist_count(tl); i++) {
		t = toklist_get(tl, i, &len);
		if (len < 4 || memcmp(t, "src:", 4) != 0)
			continue;
		toklist_add(src, t, len);
		k += (size_t)snprintf(out + k, outsz - k, "%s ", t);
	}
	toklist_free(tl);
	free(msg);
	return src;
}

struct chain_case {
	const char *fixture, *trusted;
	const char *want;	/* the src: tokens, in order, each followed
				 * by a blank */
};

static const struct chain_case chains[] = {
	/* loopback lines are believed; the list server is the first hop */
	{ "listman-postfix", NULL,
	  "src:ip:66.187.233.211 src:net:66.187.233.0/24 "
	  "src:net:66.187.0.0/16 src:rdns:listman.spamassassin.taint.org "
	  "src:dom:taint.org " },
	/* past the site's POP server: a dynamic line whose HELO is not its
	 * name */
	{ "fetchmail-sendmail", "193.120.211.219",
	  "src:ip:66.60.167.66 src:net:66.60.167.0/24 src:net:66.60.0.0/16 "
	  "src:rdns:066.dsl6660167.bstatic.surewest.net src:dom:surewest.net "
	  "src:helo:mismatch " },
	/* without it, the POP server is the first untrusted hop */
	{ "fetchmail-sendmail", NULL,
	  "src:ip:193.120.211.219 src:net:193.120.211.0/24 "
	  "src:net:193.120.0.0/16 src:rdns:none " },
	/* trusted by network and by name (sub-domains too) down to Exim */
	{ "exim-helo", "212.17.35.15/32, 193.120.211.0/24 lugh.tuatha.org "
	  "iol.ie",
	  "src:ip:194.165.167.234 src:net:194.165.167.0/24 "
	  "src:net:194.165.0.0/16 src:rdns:none " },
	{ "exim-helo", "212.17.35.15 193.120.211.219",
	  "src:ip:194.125.145.45 src:net:194.125.145.0/24 "
	  "src:net:194.125.0.0/16 src:rdns:lugh.tuatha.org "
	  "src:dom:tuatha.org " },
	/* a name the receiving host could not confirm is not trusted, and
	 * its HELO is of another domain */
	{ "may-be-forged", "212.17.35.15 lugh.tuatha.org indigo.ie",
	  "src:ip:194.125.152.60 src:net:194.125.152.0/24 "
	  "src:net:194.125.0.0/16 src:rdns:nw152-60.indigo.ie "
	  "src:dom:indigo.ie src:rdns:forged src:helo:mismatch " },
	/* same registered domain: no mismatch; then a line without an
	 * address ends the walk */
	{ "hotmail-smtpsvc", "212.17.35.15 193.120.211.219 lugh.tuatha.org",
	  "src:ip:216.33.148.92 src:net:216.33.148.0/24 "
	  "src:net:216.33.0.0/16 src:rdns:oe55.law4.hotmail.com "
	  "src:dom:hotmail.com " },
	{ "hotmail-smtpsvc", "212.17.35.15 193.120.211.219 lugh.tuatha.org "
	  "hotmail.com", "src:unreadable " },
	/* ne.jp is a public suffix; qmail's line past a trusted relay */
	{ "qmail-helo", NULL,
	  "src:ip:211.124.127.9 src:net:211.124.127.0/24 "
	  "src:net:211.124.0.0/16 src:rdns:fmfsr01.zaq.ne.jp "
	  "src:dom:zaq.ne.jp " },
	{ "qmail-helo", "211.124.0.0/16",
	  "src:ip:61.125.120.21 src:net:61.125.120.0/24 "
	  "src:net:61.125.0.0/16 src:rdns:none " },
	/* every hop trusted */
	{ "qmail-helo", "211.124.0.0/16 61.125.120.21", "src:local " },
};

START_TEST(walk_real_chains)
{
	const struct chain_case *c = &chains[_i];
	char got[2048];
	struct toklist *src;

	src = chain_tokens(c->fixture, c->trusted, got, sizeof(got));
	ck_assert_msg(strcmp(got, c->want) == 0, "%s (trusted %s):\n got  %s\n"
	    " want %s", c->fixture, c->trusted ? c->trusted : "-", got, c->want);
	toklist_free(src);
}
END_TEST

/* 1 if some token of tl begins with prefix */
static int
has_prefix(const struct toklist *tl, const char *prefix)
{
	size_t i, len, n = strlen(prefix);
	const char *t;

	for (i = 0; i < toklist_count(tl); i++) {
		t = toklist_get(tl, i, &len);
		if (len >= n && memcmp(t, prefix, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * An IPv4 client logged as IPv6 (::ffff:a.b.c.d, a dual-stack socket)
 * gives the IPv4 tokens, as it would written as IPv4: not "::/64" and
 * "::/48", which every such client shared.  Its HELO literal, either
 * way written, is its own.
 */
START_TEST(v4mapped_relay_is_ipv4)
{
	static const char *const forms[] = {
		"from helo.example (mx.example.net [IPv6:::ffff:198.51.100.7]) "
		"by b\n",
		"from helo.example (mx.example.net [::ffff:198.51.100.7]) by b\n",
		"from [IPv6:::ffff:198.51.100.7] (mx.example.net "
		"[198.51.100.7]) by b\n",
		"from [198.51.100.7] (mx.example.net "
		"[IPv6:::FFFF:c633:6407]) by b\n",
	};
	struct tok_opts o;
	struct toklist *tl;
	char m[512];
	size_t i;

	tok_opts_default(&o);
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(m, sizeof(m), "Received: %s\nhi there\n", forms[i]);
		tl = toklist_new(o.max_tokens);
		ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m),
		    &o, tl), 0);
		ck_assert_msg(has(tl, "src:ip:198.51.100.7"), "%s", forms[i]);
		ck_assert_msg(has(tl, "src:net:198.51.100.0/24"), "%s",
		    forms[i]);
		ck_assert_msg(has(tl, "src:net:198.51.0.0/16"), "%s",
		    forms[i]);
		ck_assert_msg(!has_prefix(tl, "src:ip:::"), "%s", forms[i]);
		ck_assert_msg(!has_prefix(tl, "src:net:::"), "%s", forms[i]);
		if (i >= 2)
			ck_assert_msg(has(tl, "src:helo:literal"), "%s",
			    forms[i]);
		toklist_free(tl);
	}
}
END_TEST

START_TEST(src_option_off)
{
	struct tok_opts o;
	struct toklist *tl;
	const char *m = "Received: from a.example (a.example [198.51.100.1]) "
	    "by b\n\nhi there\n";
	size_t i, len;

	tok_opts_default(&o);
	o.src = 0;
	tl = toklist_new(o.max_tokens);
	ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m), &o, tl),
	    0);
	for (i = 0; i < toklist_count(tl); i++)
		ck_assert(strncmp(toklist_get(tl, i, &len), "src:", 4) != 0);
	toklist_free(tl);
}
END_TEST

/* nested messages' Received lines are not the post's chain */
START_TEST(nested_received_ignored)
{
	struct tok_opts o;
	struct toklist *tl;
	const char *m = "Received: (from user@localhost) by x\n"
	    "Content-Type: message/rfc822\n\n"
	    "Received: from evil.example (evil.example [198.51.100.66]) by y\n"
	    "Subject: inner\n\nbody\n";

	tok_opts_default(&o);
	tl = toklist_new(o.max_tokens);
	ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m), &o, tl),
	    0);
	ck_assert(has(tl, "src:local"));
	ck_assert(!has(tl, "src:ip:198.51.100.66"));
	toklist_free(tl);
}
END_TEST

/* the tokens of a post whose last Received line is ours (line), with a
 * line below it that the sender wrote (a forged relay 66.187.233.211) */
static struct toklist *
under_forged(const struct tok_opts *o, const char *line)
{
	struct toklist *tl;
	char m[1024];

	snprintf(m, sizeof(m), "Received: %s\nReceived: from "
	    "listman.example.com (listman.example.com [66.187.233.211])"
	    " by forged.example\n\nbody\n", line);
	tl = toklist_new(o->max_tokens);
	ck_assert(tl != NULL);
	ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m), o,
	    tl), 0);
	return tl;
}

/* a client that says HELO [127.0.0.1] to our MTA is not trusted: the
 * lines below it, its own, are not believed */
START_TEST(helo_literal_not_trusted)
{
	static const char *const ours[] = {
		"from [127.0.0.1] (unknown [203.0.113.9]) by mx.example.org "
		"(Postfix) with ESMTP id 4F1",
		"from unknown (HELO x@127.0.0.1) (203.0.113.9) by "
		"mx.example.org with SMTP",
		"from [IPv6:::1] (unknown [203.0.113.9]) by mx.example.org "
		"(Postfix) with ESMTP id 4F1",
		"from [127.0.0.1] (helo [203.0.113.9] (may be forged)) by "
		"mx.example.org (8.15.2/8.15.2) with ESMTP id x1",
		"from [127.0.0.1] (ehlo [203.0.113.9]) by mx.example.org "
		"(Postfix) with ESMTP id 4F1",
		/* a HELO that starts with '(' opens no comment: the
		 * literal of the recipient the client chose, after " by ",
		 * is not the client */
		"from ( (unknown [203.0.113.9]) by mx.example.org (Postfix) "
		"with ESMTP id 4F1 for <list@[127.0.0.1]>; Mon, 2 Dec 2024 "
		"10:00:00 +0000",
		"from ((HELO (unknown [203.0.113.9]) by mx.example.org "
		"(Postfix) with ESMTP id 4F1 for <list@[IPv6:::1]>; Mon, 2 "
		"Dec 2024 10:00:00 +0000",
		/* a HELO of several words (Postfix writes it whole) with
		 * a " by " of its own: our MTA's comment after it names
		 * the client */
		"from x [127.0.0.1] by y (unknown [203.0.113.9]) by "
		"mx.example.org (Postfix) with ESMTP id 4F1",
		"from [127.0.0.1] by localhost (unknown [203.0.113.9]) by "
		"mx.example.org (Postfix) with ESMTP id 4F1",
	};
	struct tok_opts o;
	struct toklist *tl;
	size_t i;

	tok_opts_default(&o);
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		tl = under_forged(&o, ours[i]);
		ck_assert_msg(has(tl, "src:ip:203.0.113.9"), "%s", ours[i]);
		ck_assert_msg(!has(tl, "src:ip:66.187.233.211"), "%s", ours[i]);
		ck_assert_msg(!has(tl, "src:local"), "%s", ours[i]);
		toklist_free(tl);
	}
}
END_TEST

/* a '(' in the client's HELO does not open the comment our MTA wrote:
 * "from mx.trusted.org(HELO (unknown [IP])" names no trusted host */
START_TEST(helo_paren_not_trusted_name)
{
	static const char *const ours[] = {
		"from a(mx.trusted.org (unknown [203.0.113.9]) by "
		"mx.example.org (Postfix) with ESMTP id 4F1",
		"from mx.trusted.org(HELO (unknown [203.0.113.9]) by "
		"mx.example.org (Postfix) with ESMTP id 4F1",
		"from mx.trusted.org(helo=x (unknown [203.0.113.9]) by "
		"mx.example.org (Postfix) with ESMTP id 4F1",
	};
	struct netlist nl;
	struct tok_opts o;
	struct toklist *tl;
	char m[1024], why[256];
	size_t i;

	ck_assert_int_eq(netlist_parse("trusted.org", &nl, why, sizeof(why)),
	    0);
	tok_opts_default(&o);
	o.trust = &nl;
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		tl = under_forged(&o, ours[i]);
		ck_assert_msg(has(tl, "src:ip:203.0.113.9"), "%s", ours[i]);
		ck_assert_msg(has(tl, "src:rdns:none"), "%s", ours[i]);
		ck_assert_msg(!has(tl, "src:ip:66.187.233.211"), "%s", ours[i]);
		toklist_free(tl);
	}
	/* the name our MTA verified still counts */
	snprintf(m, sizeof(m), "Received: from x (mx.trusted.org "
	    "[192.0.2.1]) by mx.example.org (Postfix)\nReceived: from "
	    "listman.example.com (listman.example.com [66.187.233.211]) by "
	    "mx.trusted.org\n\nbody\n");
	tl = toklist_new(o.max_tokens);
	ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m), &o, tl),
	    0);
	ck_assert(has(tl, "src:ip:66.187.233.211"));
	toklist_free(tl);
}
END_TEST

/* an encoded word in the client's HELO is not decoded: decoded, it
 * put a loopback comment and a " by " in front of the comment our MTA
 * wrote, and the lines below, the client's own, were believed */
START_TEST(helo_encoded_word_not_decoded)
{
	static const char *const ours[] = {
		"from =?us-ascii?q?x_(localhost_[127.0.0.1])_by_x?= "
		"(unknown [203.0.113.9]) by mx.example.org (Postfix) with "
		"ESMTP id 4F1",
		"from =?utf-8?b?eCAobG9jYWxob3N0IFsxMjcuMC4wLjFdKSBieSB4?= "
		"(unknown [203.0.113.9]) by mx.example.org (Postfix) with "
		"ESMTP id 4F1",
	};
	struct tok_opts o;
	struct toklist *tl;
	size_t i;

	tok_opts_default(&o);
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		tl = under_forged(&o, ours[i]);
		ck_assert_msg(has(tl, "src:ip:203.0.113.9"), "%s", ours[i]);
		ck_assert_msg(!has(tl, "src:ip:66.187.233.211"), "%s", ours[i]);
		ck_assert_msg(!has(tl, "src:local"), "%s", ours[i]);
		toklist_free(tl);
	}
}
END_TEST

/* a client's HELO that holds qmail's "(HELO" or Exim's "helo=" does not
 * make our Postfix line read as qmail's or Exim's: the name our MTA
 * verified is kept (it was lost, with its src:dom: and src:helo:) */
START_TEST(helo_format_marks_not_format)
{
	static const char *const helos[] = { "x(helo)", "x(HELO",
	    "(ehlo)", "helo=x", "x(helo=y", "HELO=mx.example.org" };
	struct received_hop h;
	struct tok_opts o;
	struct toklist *tl;
	char line[512], m[1024];
	size_t i;

	tok_opts_default(&o);
	for (i = 0; i < sizeof(helos) / sizeof(helos[0]); i++) {
		snprintf(line, sizeof(line), "from %s (mail.spammer.example "
		    "[203.0.113.9]) by mx.example.org (Postfix) with ESMTP id "
		    "4F1; Mon, 2 Dec 2024 10:00:00 +0000", helos[i]);
		ck_assert_int_eq(received_parse((const unsigned char *)line,
		    strlen(line), &h), 1);
		ck_assert_msg(strcmp(h.rdns, "mail.spammer.example") == 0,
		    "%s: rdns \"%s\"", helos[i], h.rdns);
		snprintf(m, sizeof(m), "Received: %s\n\nbody\n", line);
		tl = toklist_new(o.max_tokens);
		ck_assert(tl != NULL);
		ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m),
		    &o, tl), 0);
		ck_assert_msg(has(tl, "src:ip:203.0.113.9"), "%s", helos[i]);
		ck_assert_msg(has(tl, "src:rdns:mail.spammer.example"), "%s",
		    helos[i]);
		ck_assert_msg(has(tl, "src:dom:spammer.example"), "%s",
		    helos[i]);
		toklist_free(tl);
	}
}
END_TEST

/* a HELO long enough to push our MTA's comment past RECEIVED_MAX_SCAN:
 * a literal in it is not the client, and the line below (the client's
 * own) is not believed */
START_TEST(long_helo_not_trusted)
{
	static const char *const helos[] = { "[127.0.0.1]", "[IPv6:::1]",
	    "[192.0.2.7]", "x" };
	struct received_hop h;
	struct netlist nl;
	struct tok_opts o;
	struct toklist *tl;
	char m[4096], line[3000], pad[1200], why[256];
	size_t i;

	ck_assert_int_eq(netlist_parse("192.0.2.0/24", &nl, why, sizeof(why)),
	    0);
	tok_opts_default(&o);
	o.trust = &nl;
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (i = 0; i < sizeof(helos) / sizeof(helos[0]); i++) {
		snprintf(line, sizeof(line), "from %s%s (unknown "
		    "[203.0.113.9]) by mx.example.org (Postfix) with ESMTP id "
		    "4F1; Mon, 2 Dec 2024 10:00:00 +0000", helos[i], pad);
		ck_assert_int_eq(received_parse((const unsigned char *)line,
		    strlen(line), &h), -1);
		snprintf(m, sizeof(m), "Received: %s\nReceived: from "
		    "listman.example.com (listman.example.com "
		    "[66.187.233.211]) by forged.example\n\nbody\n", line);
		tl = toklist_new(o.max_tokens);
		ck_assert(tl != NULL);
		ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m),
		    &o, tl), 0);
		ck_assert_msg(!has(tl, "src:ip:66.187.233.211"), "%s", helos[i]);
		ck_assert_msg(has(tl, "src:unreadable"), "%s", helos[i]);
		toklist_free(tl);
	}
	/* a long line whose from-clause fits is read as before */
	snprintf(line, sizeof(line), "from mx.example.net (unknown "
	    "[203.0.113.9]) by mx.example.org (Postfix) with ESMTP id 4F1 "
	    "(using %s); Mon, 2 Dec 2024 10:00:00 +0000", pad);
	ck_assert_int_eq(received_parse((const unsigned char *)line,
	    strlen(line), &h), 1);
}
END_TEST

/* more lines than LG_MAX_RECEIVED_HOPS, all trusted */
START_TEST(deep_chain)
{
	struct tok_opts o;
	struct toklist *tl;
	char *m = malloc(100000);
	size_t k = 0, i;

	for (i = 0; i < LG_MAX_RECEIVED_HOPS + 5; i++)
		k += (size_t)snprintf(m + k, 100000 - k, "Received: from "
		    "localhost (localhost [127.0.0.1]) by h%zu\n", i);
	k += (size_t)snprintf(m + k, 100000 - k, "Received: from e.example "
	    "(e.example [198.51.100.9]) by z\n\nbody\n");
	tok_opts_default(&o);
	tl = toklist_new(o.max_tokens);
	ck_assert_int_eq(tok_post((unsigned char *)m, k, &o, tl), 0);
	ck_assert(has(tl, "src:deep"));
	ck_assert(!has(tl, "src:ip:198.51.100.9"));
	toklist_free(tl);
	free(m);
}
END_TEST

/* --- pieces ------------------------------------------------------------ */

START_TEST(registered_domains)
{
	static const char *const cases[][2] = {
		{ "listman.spamassassin.taint.org", "taint.org" },
		{ "066.dsl6660167.bstatic.surewest.net", "surewest.net" },
		{ "fmfsr01.zaq.ne.jp", "zaq.ne.jp" },
		{ "ratree.psu.ac.th", "psu.ac.th" },
		{ "mail.example.co.uk", "example.co.uk" },
		{ "example.co.uk", "example.co.uk" },
		{ "co.uk", "co.uk" },
		{ "example.org", "example.org" },
		{ "localhost", "localhost" },
		{ "a.b.example.com.", "example.com" },
		/* limits: a private suffix is not known */
		{ "someone.blogspot.com", "blogspot.com" },
	};
	size_t i, n, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i][0]);
		off = received_regdom(cases[i][0], n);
		if (cases[i][0][n - 1] == '.')
			n--;
		ck_assert_msg(n - off == strlen(cases[i][1]) &&
		    memcmp(cases[i][0] + off, cases[i][1], n - off) == 0,
		    "%s", cases[i][0]);
	}
}
END_TEST

START_TEST(trusted_relay_lists)
{
	struct netlist nl;
	unsigned char a[16];
	char why[256];

	ck_assert_int_eq(netlist_parse("192.0.2.0/24, 2001:db8::/32 "
	    "Example.ORG.", &nl, why, sizeof(why)), 0);
	ck_assert_int_eq(netlist_addr("192.0.2.77", 10, a), 4);
	ck_assert(netlist_has_addr(&nl, a));
	ck_assert_int_eq(netlist_addr("192.0.3.1", 9, a), 4);
	ck_assert(!netlist_has_addr(&nl, a));
	ck_assert_int_eq(netlist_addr("IPv6:2001:db8:ffff::1", 21, a), 6);
	ck_assert(netlist_has_addr(&nl, a));
	ck_assert(netlist_has_name(&nl, "mx.example.org", 14));
	ck_assert(netlist_has_name(&nl, "EXAMPLE.org.", 12));
	ck_assert(!netlist_has_name(&nl, "badexample.org", 14));
	ck_assert(!netlist_has_name(&nl, "example.org.evil", 16));
	ck_assert_int_eq(netlist_parse("192.0.2.0/33", &nl, why, sizeof(why)),
	    -1);
	ck_assert_int_eq(netlist_parse("10.0.0.1/", &nl, why, sizeof(why)), -1);
	ck_assert_int_eq(netlist_parse("bad_name!", &nl, why, sizeof(why)), -1);
	ck_assert_int_eq(netlist_parse("1.2.3.4.5", &nl, why, sizeof(why)), -1);
	ck_assert_int_eq(netlist_parse(NULL, &nl, why, sizeof(why)), 0);
	ck_assert_int_eq((int)(nl.nnet + nl.nname), 0);
}
END_TEST

/* any bytes: no crash, bounded names (run under the sanitizers) */
START_TEST(hostile_lines)
{
	struct received_hop h;
	unsigned char v[3000];
	unsigned seed = 7;
	size_t i, k, n;

	for (k = 0; k < 20000; k++) {
		n = (seed = seed * 1103515245u + 12345u) % sizeof(v);
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (unsigned char)"from (HELO [1.2.3.4]) helo=@ by;."
			    "\xff\x00IPv6::("[(seed >> 16) % 40];
		}
		if (n > 5)
			memcpy(v, "from ", 5);
		received_parse(v, n, &h);
		ck_assert(strlen(h.helo) < sizeof(h.helo));
		ck_assert(strlen(h.rdns) < sizeof(h.rdns));
	}
}
END_TEST

static Suite *
received_suite(void)
{
	Suite *s = suite_create("received");
	TCase *tc;

	tc = tcase_create("lines");
	tcase_add_loop_test(tc, parse_real_lines, 0,
	    (int)(sizeof(lines) / sizeof(lines[0])));
	tcase_add_test(tc, hostile_lines);
	suite_add_tcase(s, tc);
	tc = tcase_create("chains");
	tcase_add_loop_test(tc, walk_real_chains, 0,
	    (int)(sizeof(chains) / sizeof(chains[0])));
	tcase_add_test(tc, src_option_off);
	tcase_add_test(tc, v4mapped_relay_is_ipv4);
	tcase_add_test(tc, nested_received_ignored);
	tcase_add_test(tc, deep_chain);
	tcase_add_test(tc, helo_literal_not_trusted);
	tcase_add_test(tc, helo_paren_not_trusted_name);
	tcase_add_test(tc, long_helo_not_trusted);
	tcase_add_test(tc, helo_encoded_word_not_decoded);
	tcase_add_test(tc, helo_format_marks_not_format);
	suite_add_tcase(s, tc);
	tc = tcase_create("pieces");
	tcase_add_test(tc, registered_domains);
	tcase_add_test(tc, trusted_relay_lists);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(received_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
