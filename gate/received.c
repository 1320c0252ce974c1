/*
 * received.c - read the Received chain down to the first untrusted hop
 *
 * See received.h.  Each value is hostile: only its first
 * RECEIVED_MAX_SCAN bytes are looked at, every name copied is bounded
 * and checked to be a host name, and whatever cannot be read simply
 * gives fewer tokens.  Pure; never logs, never exits.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gate/received.h"

/* ---- small readers ------------------------------------------------- */

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* 1 if [p, p+n) starts with the word w (any case) followed by a blank,
 * '=' or the end */
static int
word_is(const unsigned char *p, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && strncasecmp((const char *)p, w, k) == 0 &&
	    (n == k || is_space(p[k]) || p[k] == '=' || p[k] == ')');
}

/* copy a host name [p, p+n) lower-cased into out (size outsz): 1 if it
 * is one (labels of letters, digits, '-', '_'), else 0 with out "" */
static int
copy_name(char *out, size_t outsz, const unsigned char *p, size_t n)
{
	size_t i, lab = 0;

	out[0] = '\0';
	while (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0 || n >= outsz || n > NETLIST_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (lab == 0)
				return 0;
			lab = 0;
		} else if ((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || p[i] == '-' ||
		    p[i] == '_') {
			if (++lab > 63)
				return 0;
		} else
			return 0;
	}
	for (i = 0; i < n; i++)
		out[i] = (char)lower(p[i]);
	out[n] = '\0';
	return 1;
}

/* the IP of a literal [p, p+n): "1.2.3.4", "IPv6:...", with a ":port"
 * after an IPv4 tolerated: its family, or 0.  An IPv4 address written
 * as IPv6 (::ffff:1.2.3.4, as a dual-stack socket logs an IPv4 client)
 * is IPv4: its tokens are the IPv4 address and networks, not a /64
 * and a /48 that every such address shares */
static int
read_ip(const unsigned char *p, size_t n, unsigned char ip[16])
{
	size_t k;
	int f;

	while (n > 0 && is_space(p[0]))
		p++, n--;
	while (n > 0 && is_space(p[n - 1]))
		n--;
	if ((f = netlist_addr((const char *)p, n, ip)) != 0)
		return netlist_v4mapped(ip) ? 4 : f;
	/* 1.2.3.4:25 */
	for (k = 0; k < n && p[k] != ':'; k++)
		;
	if (k < n && k > 0 && memchr(p, '.', k) != NULL)
		return netlist_addr((const char *)p, k, ip) == 4 ? 4 : 0;
	return 0;
}

/* ---- one line ------------------------------------------------------- */

/* 1 if the comment around position at in [c, c+n) closes, and no other
 * comment opens after it */
static int
last_comment(const unsigned char *c, size_t n, size_t at)
{
	size_t i;
	int depth = 1;

	for (i = at; i < n && depth > 0; i++)
		if (c[i] == '(')
			depth++;
		else if (c[i] == ')')
			depth--;
	if (depth > 0)
		return 0;
	for (; i < n; i++)
		if (c[i] == '(')
			return 0;
	return 1;
}

/*
 * 1 if the comment that opens at v[at] (a '(') is shaped as the one a
 * receiver writes about its client, "(NAME [IP])", "([IP])",
 * "(user@NAME [IP])", "(NAME [IP] (may be forged))": at most one word,
 * then an address literal, then only blanks or a comment of its own
 * before it closes.  *end_r: just past its ')'.
 */
static int
client_comment(const unsigned char *v, size_t n, size_t at, size_t *end_r)
{
	unsigned char ip[16];
	size_t i = at + 1, lb, rb;
	int depth;

	while (i < n && is_space(v[i]))
		i++;
	/* one word (a name, user@name, "unknown") or none */
	if (i < n && v[i] != '[') {
		while (i < n && !is_space(v[i]) && v[i] != '(' && v[i] != ')' &&
		    v[i] != '[')
			i++;
		while (i < n && is_space(v[i]))
			i++;
	}
	if (i >= n || v[i] != '[')
		return 0;
	lb = i;
	for (rb = lb + 1; rb < n && v[rb] != ']' && rb - lb < 64; rb++)
		;
	if (rb >= n || v[rb] != ']' || read_ip(v + lb + 1, rb - lb - 1,
	    ip) == 0)
		return 0;
	for (i = rb + 1; i < n && is_space(v[i]); i++)
		;
	/* "(may be forged)" and the like: a comment inside, closed */
	if (i < n && v[i] == '(') {
		for (depth = 0; i < n; i++) {
			if (v[i] == '(')
				depth++;
			else if (v[i] == ')' && --depth == 0)
				break;
		}
		if (i >= n)
			return 0;
		for (i++; i < n && is_space(v[i]); i++)
			;
	}
	if (i >= n || v[i] != ')')
		return 0;
	*end_r = i + 1;
	return 1;
}

/* the end of the from-clause: " by " outside parentheses, else the
 * last ';' (the date's), or n.  The client's HELO is written as given
 * (Postfix, sendmail): a '(' glued to it opens no comment, and a ';'
 * in it ends nothing, or "HELO x(((" or "HELO x;" would hide the
 * receiver's own comment with the client's address.  Nor does a '(' at
 * its start: Postfix writes "HELO (" as "from ( (unknown [IP]) by ...",
 * and a comment left open there would run past " by " to the end, where
 * the literal of a "for <list@[127.0.0.1]>" the client chose would
 * stand for the client.  Nor does a " by " before the comment our MTA
 * wrote about the client: Postfix takes the words of a HELO with blanks
 * whole ("HELO x [127.0.0.1] by y" is written "from x [127.0.0.1] by y
 * (unknown [IP]) by ..."), and the first " by " would end the clause at
 * the client's own literal */
static size_t
clause_end(const unsigned char *v, size_t n)
{
	size_t i, k, end, semi = n;
	int depth = 0;

	/* the first word: the HELO (or the name our MTA found), whole */
	for (i = 0; i < n && is_space(v[i]); i++)
		;
	for (; i < n && !is_space(v[i]); i++)
		;
	/* the first comment, when it is shaped as our MTA's about its
	 * client: what comes before it is the HELO, blanks and all (no
	 * MTA writes " by " there: Postfix, which takes a HELO of several
	 * words, writes no '(' of the client's, and the others take one
	 * word).  A first comment of another shape ("(Exim 4.96)" after
	 * "from [IP] by host with esmtp") leaves the first " by " to end
	 * the clause, before the recipient the client chose */
	for (k = i; k < n && !(v[k] == '(' && is_space(v[k - 1])); k++)
		if (v[k] == ';')
			break;
	if (k < n && v[k] == '(' && client_comment(v, n, k, &end))
		i = end;
	for (; i < n; i++) {
		if (v[i] == '(' && (i == 0 || is_space(v[i - 1])))
			depth++;
		else if (v[i] == ')' && depth > 0)
			depth--;
		else if (depth == 0 && v[i] == ';')
			semi = i;
		else if (depth == 0 && is_space(v[i]) && word_is(v + i + 1,
		    n - i - 1, "by"))
			return i;
	}
	return semi;
}

int
received_parse(const unsigned char *v, size_t n, struct received_hop *h)
{
	const unsigned char *c, *p, *q, *w1;
	unsigned char ip[16], hip[16] = { 0 };
	size_t e, i, k, nw1, fw, cn, pn, lit = 0, hlit = 0;
	int gotip = 0, qmail = 0, paren_ip = 0, incomment, fam, hfam = 0;
	int ours_helo = 0, cut = 0;

	memset(h, 0, sizeof(*h));
	if (n > RECEIVED_MAX_SCAN) {
		n = RECEIVED_MAX_SCAN;
		cut = 1;
	}
	while (n > 0 && is_space(v[0]))
		v++, n--;
	if (!word_is(v, n, "from"))
		return 0;
	v += 4;
	n -= 4;
	e = clause_end(v, n);
	/* a from-clause whose " by " lies past what is looked at (a HELO
	 * of a thousand bytes) cannot be read: our MTA's own comment with
	 * the client's address may be beyond it, and a literal in the
	 * HELO ("[127.0.0.1]xxx...") would stand for the client */
	if (cut && !(e < n && is_space(v[e]) && word_is(v + e + 1,
	    n - e - 1, "by")))
		return -1;
	c = v;
	cn = e;
	/* the first word: the HELO name (qmail, Exim: the rDNS name).  Up
	 * to a blank: every MTA writes one before its comment, and a '('
	 * glued to the word is the client's HELO ("mx.trusted.org(HELO"),
	 * never a name for a trusted_relays entry to match */
	for (i = 0; i < cn && is_space(c[i]); i++)
		;
	w1 = c + i;
	for (nw1 = 0; i + nw1 < cn && !is_space(w1[nw1]); nw1++)
		;
	fw = i + nw1;
	/* the client address: the last [literal], else "(1.2.3.4)" or
	 * "(user@1.2.3.4)".  What the client said comes before the address
	 * its receiver saw, or is tagged: the HELO (Postfix, sendmail:
	 * "from [10.0.0.1] (unknown [IP])"; Exim "helo=[...]"; qmail
	 * "(HELO ...)"), the ident user ("user@", Exim "ident=").  None of
	 * it may stand for the client: a HELO of [127.0.0.1] would make
	 * the hop trusted */
	for (i = 0, incomment = 0; i < cn; i++) {
		if (c[i] == '(')
			incomment = word_is(c + i + 1, cn - i - 1, "helo") ||
			    word_is(c + i + 1, cn - i - 1, "ehlo");
		else if (c[i] == ')')
			incomment = 0;
		if (c[i] != '[' || (i > 0 && c[i - 1] == '='))
			continue;
		for (k = i + 1; k < cn && c[k] != ']' && k - i < 64; k++)
			;
		if (k < cn && c[k] == ']' &&
		    (fam = read_ip(c + i + 1, k - i - 1, ip)) != 0) {
			if (incomment) {
				/* qmail's "(HELO [x])", unless it turns
				 * out to be our MTA's own (below) */
				hfam = fam;
				memcpy(hip, ip, 16);
				hlit = i;
				continue;
			}
			h->family = fam;
			memcpy(h->ip, ip, 16);
			gotip = 1;
			lit = i;
		}
	}
	for (i = 0; i < cn && !gotip; i++) {
		if (c[i] != '(' || word_is(c + i + 1, cn - i - 1, "helo") ||
		    word_is(c + i + 1, cn - i - 1, "ehlo"))
			continue;
		for (k = i + 1; k < cn && c[k] != ')' && k - i < 128; k++)
			;
		if (k >= cn || c[k] != ')')
			continue;
		p = c + i + 1;
		pn = k - i - 1;
		/* the last '@': an ident user may hold one too */
		for (q = p + pn; q > p && q[-1] != '@'; q--)
			;
		pn -= (size_t)(q - p);
		p = q;
		if ((h->family = read_ip(p, pn, h->ip)) != 0) {
			gotip = paren_ip = 1;
			lit = i;
		}
	}
	/* a client whose name is "helo" or "ehlo" (its own PTR record)
	 * makes our MTA's comment "(helo [IP])", "(helo [IP] (may be
	 * forged))" look like qmail's HELO comment: when that comment
	 * holds the last literal and is the last comment, it is ours, and
	 * what came before it (a HELO literal of the client's choosing)
	 * is not the client */
	if (hfam != 0 && (!gotip || hlit > lit) && last_comment(c, cn,
	    hlit)) {
		h->family = hfam;
		memcpy(h->ip, hip, 16);
		gotip = 1;
		paren_ip = 0;
		lit = hlit;
		ours_helo = 1;
	}
	if (!gotip) {
		/* fetchmail's "from host 1.2.3.4"-like forms are not guessed */
		return -1;
	}
	for (i = 0; i + 13 <= cn; i++)
		if ((c[i] | 0x20) == 'm' &&
		    strncasecmp((const char *)c + i, "may be forged", 13) == 0)
			h->forged = 1;
	/* qmail: "from RDNS (HELO name) (ip)", "unknown" when no name; the
	 * HELO left out when it was the name: "from RDNS (ip)".  Its mark
	 * and Exim's are looked for past the first word: a Postfix or
	 * sendmail client's HELO ("x(helo)", "helo=x") is no mark, and read
	 * as one it hid the name our MTA verified */
	for (i = fw; i + 6 <= cn && !ours_helo; i++)
		if (c[i] == '(' && (word_is(c + i + 1, cn - i - 1, "helo") ||
		    word_is(c + i + 1, cn - i - 1, "ehlo"))) {
			qmail = 1;
			break;
		}
	if (qmail || paren_ip) {
		p = qmail ? c + i + 6 : c + cn;
		for (pn = 0; p + pn < c + cn && p[pn] != ')' && !is_space(p[pn]);
		    pn++)
			;
		if (!(nw1 == 7 && strncasecmp((const char *)w1, "unknown", 7) ==
		    0))
			copy_name(h->rdns, sizeof(h->rdns), w1, nw1);
		if (pn > 0 && pn < sizeof(h->helo)) {
			for (k = 0; k < pn; k++)
				h->helo[k] = (char)lower(p[k]);
			h->helo[pn] = '\0';
		} else if (h->rdns[0] != '\0')
			/* qmail leaves HELO out when it equals the name */
			snprintf(h->helo, sizeof(h->helo), "%s", h->rdns);
		return 1;
	}
	/* Exim: "from RDNS ([ip] helo=name)" or "from [ip] (helo=name)" */
	for (i = fw; i + 5 <= cn; i++)
		if ((c[i] | 0x20) == 'h' &&
		    strncasecmp((const char *)c + i, "helo=", 5) == 0 &&
		    (i == 0 || is_space(c[i - 1]) || c[i - 1] == '('))
			break;
	if (i + 5 <= cn) {
		p = c + i + 5;
		for (pn = 0; p + pn < c + cn && p[pn] != ')' && !is_space(p[pn]);
		    pn++)
			;
		if (pn > 0 && pn < sizeof(h->helo)) {
			for (k = 0; k < pn; k++)
				h->helo[k] = (char)lower(p[k]);
			h->helo[pn] = '\0';
		}
		if (nw1 > 0 && w1[0] != '[')
			copy_name(h->rdns, sizeof(h->rdns), w1, nw1);
		return 1;
	}
	/* sendmail, Postfix: "from HELO (RDNS [ip])", "from HELO ([ip])",
	 * "(user@RDNS [ip])", "(unknown [ip])" */
	if (nw1 > 0 && nw1 < sizeof(h->helo)) {
		for (k = 0; k < nw1; k++)
			h->helo[k] = (char)lower(w1[k]);
		h->helo[nw1] = '\0';
	}
	/* the comment that holds the client's address, opened after a
	 * blank: a '(' in the HELO before it is the client's own */
	for (i = lit; i > 0 && !(c[i - 1] == '(' && i >= 2 &&
	    is_space(c[i - 2])); i--)
		;
	if (i > 0) {
		p = c + i;
		for (pn = 0; p + pn < c + cn && p[pn] != '[' && p[pn] != ')' &&
		    !is_space(p[pn]); pn++)
			;
		if (pn > 0 && (q = memchr(p, '@', pn)) != NULL) {
			pn -= (size_t)(q + 1 - p);
			p = q + 1;
		}
		if (pn > 0 && !(pn == 7 && strncasecmp((const char *)p,
		    "unknown", 7) == 0))
			copy_name(h->rdns, sizeof(h->rdns), p, pn);
	}
	return 1;
}

/* ---- the chain ------------------------------------------------------ */

void
received_chain_init(struct received_chain *c, const struct netlist *trust)
{
	memset(c, 0, sizeof(*c));
	c->trust = trust;
	c->state = RECEIVED_WALKING;
}

int
received_chain_add(struct received_chain *c, const unsigned char *v,
    size_t n)
{
	struct received_hop h;
	int r;

	if (c->state != RECEIVED_WALKING)
		return 0;
	if (++c->nlines > LG_MAX_RECEIVED_HOPS) {
		c->state = RECEIVED_TOO_DEEP;
		return 0;
	}
	r = received_parse(v, n, &h);
	if (r == 0)
		return 0;	/* no network hop: the next line is the same
				 * writer's */
	if (r < 0) {
		c->state = RECEIVED_UNREADABLE;
		return 1;
	}
	if (netlist_loopback(h.ip))
		return 0;
	if (c->trust != NULL && (netlist_has_addr(c->trust, h.ip) ||
	    (!h.forged && h.rdns[0] != '\0' && netlist_has_name(c->trust,
	    h.rdns, strlen(h.rdns)))))
		return 0;
	c->hop = h;
	c->state = RECEIVED_FOUND;
	return 1;
}

/* ---- registered domains --------------------------------------------- */

/* second-level labels that are public suffixes under most two-letter
 * country codes (co.uk, com.au, ac.jp, ne.jp, or.kr, ...) */
static const char *const generic_sld[] = {
	"ac", "ad", "co", "com", "ed", "edu", "gen", "go", "gob", "gouv",
	"gov", "gr", "info", "lg", "ltd", "me", "mil", "ne", "net", "nic",
	"nom", "or", "org", "plc", "sch", NULL
};

size_t
received_regdom(const char *name, size_t n)
{
	size_t dots[3] = { 0, 0, 0 }, nd = 0, i, tld, sld, k;

	while (n > 0 && name[n - 1] == '.')
		n--;
	for (i = n; i > 0 && nd < 3; i--)
		if (name[i - 1] == '.')
			dots[nd++] = i - 1;
	if (nd < 2)
		return 0;	/* "example.org" or a bare label: all of it */
	tld = n - dots[0] - 1;
	sld = dots[0] - dots[1] - 1;
	if (tld == 2)
		for (k = 0; generic_sld[k] != NULL; k++)
			if (strlen(generic_sld[k]) == sld &&
			    strncasecmp(name + dots[1] + 1, generic_sld[k],
			    sld) == 0)
				return nd >= 3 ? dots[2] + 1 : 0;
	return dots[1] + 1;
}

/* ---- tokens --------------------------------------------------------- */

/* add "src:" + a + b + c: 0 or -1 */
static int
put2(struct toklist *tl, const char *a, const char *b, const char *c)
{
	char t[TOKLIST_MAX_BYTES + 1];
	int r = snprintf(t, sizeof(t), "src:%s%s%s", a, b, c);

	if (r < 0 || (size_t)r >= sizeof(t))
		return 0;
	return toklist_add(tl, t, (size_t)r) < 0 ? -1 : 0;
}

/* add "src:" + a + b: 0 or -1 */
static int
put(struct toklist *tl, const char *a, const char *b)
{
	return put2(tl, a, b, "");
}

/* the address and its networks */
static int
ip_tokens(const struct received_hop *h, struct toklist *tl)
{
	char s[INET6_ADDRSTRLEN + 8];
	unsigned char a[16];
	const unsigned char *ip = h->ip;

	if (h->family == 4) {
		snprintf(s, sizeof(s), "%u.%u.%u.%u", ip[12], ip[13], ip[14],
		    ip[15]);
		if (put(tl, "ip:", s) < 0)
			return -1;
		snprintf(s, sizeof(s), "%u.%u.%u.0/24", ip[12], ip[13], ip[14]);
		if (put(tl, "net:", s) < 0)
			return -1;
		snprintf(s, sizeof(s), "%u.%u.0.0/16", ip[12], ip[13]);
		return put(tl, "net:", s);
	}
	if (inet_ntop(AF_INET6, ip, s, sizeof(s)) == NULL ||
	    put(tl, "ip:", s) < 0)
		return -1;
	memset(a, 0, sizeof(a));
	memcpy(a, ip, 8);
	if (inet_ntop(AF_INET6, a, s, sizeof(s)) == NULL)
		return 0;
	if (put2(tl, "net:", s, "/64") < 0)
		return -1;
	memset(a + 6, 0, 2);
	if (inet_ntop(AF_INET6, a, s, sizeof(s)) == NULL)
		return 0;
	return put2(tl, "net:", s, "/48");
}

/* 1 if the HELO is an address literal ("[1.2.3.4]" or a bare one);
 * its address in ip */
static int
helo_literal(const char *helo, unsigned char ip[16])
{
	size_t n = strlen(helo);

	if (n >= 2 && helo[0] == '[' && helo[n - 1] == ']')
		return read_ip((const unsigned char *)helo + 1, n - 2, ip) != 0;
	return netlist_addr(helo, n, ip) != 0;
}

/* the HELO beside the verified name */
static int
helo_tokens(const struct received_hop *h, struct toklist *tl)
{
	unsigned char ip[16];
	size_t a, b, na, nb;

	if (h->helo[0] == '\0')
		return put(tl, "helo:", "none");
	if (helo_literal(h->helo, ip))
		return put(tl, "helo:", memcmp(ip, h->ip, 16) == 0 ?
		    "literal" : "literal-other");
	if (strchr(h->helo, '.') == NULL)
		return put(tl, "helo:", "nodot");
	if (h->rdns[0] == '\0' || strcmp(h->helo, h->rdns) == 0)
		return 0;
	na = strlen(h->helo);
	nb = strlen(h->rdns);
	a = received_regdom(h->helo, na);
	b = received_regdom(h->rdns, nb);
	if (na - a == nb - b && strcmp(h->helo + a, h->rdns + b) == 0)
		return 0;
	return put(tl, "helo:", "mismatch");
}

int
received_tokens(const struct received_chain *c, struct toklist *tl)
{
	const struct received_hop *h = &c->hop;

	switch (c->state) {
	case RECEIVED_WALKING:
		return put(tl, "local", "");
	case RECEIVED_UNREADABLE:
		return put(tl, "unreadable", "");
	case RECEIVED_TOO_DEEP:
		return put(tl, "deep", "");
	}
	if (ip_tokens(h, tl) < 0)
		return -1;
	if (h->rdns[0] != '\0') {
		if (put(tl, "rdns:", h->rdns) < 0 ||
		    put(tl, "dom:", h->rdns + received_regdom(h->rdns,
		    strlen(h->rdns))) < 0)
			return -1;
	} else if (put(tl, "rdns:", "none") < 0)
		return -1;
	if (h->forged && put(tl, "rdns:", "forged") < 0)
		return -1;
	return helo_tokens(h, tl);
}
