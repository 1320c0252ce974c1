/*
 * check_mail.c - the mail parser: headers, MIME walk, transfer decodings,
 * RFC 2047/2231, charsets, HTML to text, limits, hostile input
 *
 * Fixtures live in $top_srcdir/tests/data/mail/NNNN-name.eml; the big
 * pathological posts are generated here.  Each walk is recorded as a
 * text log, one line per event:
 *   H<depth> <name>: <value>      T<depth> <ctype> <charset>: <text>
 *   P<depth> <ctype> <filename>   A<depth> <anomaly>
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/mail/b64.h"
#include "gate/mail/charset.h"
#include "gate/mail/enriched.h"
#include "gate/mail/html.h"
#include "gate/mail/mail.h"
#include "gate/mail/mime.h"
#include "gate/mail/qp.h"
#include "gate/mail/rfc2047.h"
#include "gate/mail/uu.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"

/* --- helpers ---------------------------------------------------------- */

static int
log_cb(const struct mail_event *ev, void *ctx)
{
	struct buf *b = ctx;
	char pre[64];

	/* every event is NUL-terminated at data[len] */
	if (ev->data[ev->len] != 0)
		return -1;
	switch (ev->kind) {
	case MAIL_HEADER:
		snprintf(pre, sizeof(pre), "H%u ", ev->depth);
		if (buf_adds(b, pre) < 0 || buf_adds(b, ev->name) < 0 ||
		    buf_adds(b, ": ") < 0)
			return -1;
		break;
	case MAIL_TEXT:
		snprintf(pre, sizeof(pre), "T%u ", ev->depth);
		if (buf_adds(b, pre) < 0 || buf_adds(b, ev->ctype) < 0 ||
		    buf_addc(b, ' ') < 0 || buf_adds(b, ev->charset) < 0 ||
		    buf_adds(b, ": ") < 0)
			return -1;
		break;
	case MAIL_HIDDEN:
		snprintf(pre, sizeof(pre), "X%u ", ev->depth);
		if (buf_adds(b, pre) < 0 || buf_adds(b, ev->ctype) < 0 ||
		    buf_addc(b, ' ') < 0 || buf_adds(b, ev->charset) < 0 ||
		    buf_adds(b, ": ") < 0)
			return -1;
		break;
	case MAIL_PART:
		snprintf(pre, sizeof(pre), "P%u ", ev->depth);
		if (buf_adds(b, pre) < 0 || buf_adds(b, ev->ctype) < 0 ||
		    buf_addc(b, ' ') < 0 || buf_adds(b, ev->filename) < 0)
			return -1;
		break;
	case MAIL_ANOMALY:
		snprintf(pre, sizeof(pre), "A%u ", ev->depth);
		if (buf_adds(b, pre) < 0)
			return -1;
		break;
	}
	if (buf_add(b, ev->data, ev->len) < 0 || buf_addc(b, '\n') < 0)
		return -1;
	return 0;
}

/* walk msg and return the event log (caller frees); *rc_r the result */
static char *
walk_log(const void *msg, size_t len, const struct mail_limits *lim,
    int *rc_r)
{
	struct buf b = BUF_INIT(64u * 1024 * 1024);
	char *s;
	int rc;

	rc = mail_walk(msg, len, lim, log_cb, &b);
	if (rc_r)
		*rc_r = rc;
	s = xstrdup(buf_str(&b));
	buf_free(&b);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* read a fixture file into memory (caller frees) */
static unsigned char *
fixture(const char *name, size_t *len)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	unsigned char *p;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/data/mail/%s", top ? top : "..",
	    name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	p = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p[n] = 0;
	*len = (size_t)n;
	return p;
}

/* walk a fixture with the default limits and return the log */
static char *
fixture_log(const char *name)
{
	unsigned char *m;
	size_t n;
	char *s;
	int rc;

	m = fixture(name, &n);
	s = walk_log(m, n, NULL, &rc);
	ck_assert_int_eq(rc, 0);
	free(m);
	return s;
}

#define HAS(log, s)	ck_assert_msg(strstr((log), (s)) != NULL, \
			    "missing \"%s\" in:\n%.3000s", (s), (log))
#define HASNT(log, s)	ck_assert_msg(strstr((log), (s)) == NULL, \
			    "unexpected \"%s\" in:\n%.3000s", (s), (log))

/* count occurrences of s in log */
static int
count(const char *log, const char *s)
{
	int n = 0;

	while ((log = strstr(log, s)) != NULL) {
		n++;
		log += strlen(s);
	}
	return n;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- headers ---------------------------------------------------------- */

START_TEST(folding)
{
	struct buf b = BUF_INIT(1000);
	unsigned char *m;
	size_t n;
	char *log = fixture_log("0001-folding.eml");

	HAS(log, "H0 Subject: a folded subject line\tcontinued with a tab\n");
	HAS(log, "H0 Content-Type: text/plain; charset=\"us-ascii\"\n");
	HAS(log, "T0 text/plain us-ascii: Body text.");
	free(log);
	m = fixture("0001-folding.eml", &n);
	ck_assert_int_eq(mail_header(m, n, "SUBJECT", &b), 1);
	ck_assert_str_eq(buf_str(&b),
	    "a folded subject line\tcontinued with a tab");
	ck_assert_int_eq(mail_header(m, n, "X-Nothing", &b), 0);
	ck_assert_uint_eq(mail_body_offset(m, n),
	    (size_t)(strstr((char *)m, "Body text.") - (char *)m));
	buf_free(&b);
	free(m);
}
END_TEST

/* a boundary folded inside its quotes (Outlook): read from the unfolded
 * value, "simple boundary" (RFC 5322 unfolding keeps the space) */
START_TEST(folded_boundary)
{
	char *log = fixture_log("0018-folded-boundary.eml");

	HASNT(log, "A0 boundary-missing");
	HAS(log, "T1 text/plain us-ascii: Cheap foldedhidden watches");
	HAS(log, "T1 text/html : \nOrder foldedhtmlword now\n");
	free(log);
}
END_TEST

START_TEST(duplicates)
{
	struct buf b = BUF_INIT(1000);
	unsigned char *m;
	size_t n;
	char *log = fixture_log("0002-duplicates.eml");

	ck_assert_int_eq(count(log, "H0 Received: "), 3);
	HAS(log, "H0 Received: from a by b\nH0 Received: from c by d\n"
	    "H0 Received: from e by f\n");
	HAS(log, "H0 Subject: first\nH0 Subject: second\n");
	free(log);
	m = fixture("0002-duplicates.eml", &n);
	ck_assert_int_eq(mail_header(m, n, "subject", &b), 1);
	ck_assert_str_eq(buf_str(&b), "first");
	buf_free(&b);
	free(m);
}
END_TEST

/* the same post with CRLF and with bare LF gives the same events */
START_TEST(newlines)
{
	unsigned char *m, *lf;
	size_t n, i, k = 0;
	char *a, *b;
	int rc;

	m = fixture("0003-crlf.eml", &n);
	ck_assert_ptr_nonnull(memchr(m, '\r', n));
	lf = malloc(n + 1);
	ck_assert_ptr_nonnull(lf);
	for (i = 0; i < n; i++)
		if (m[i] != '\r')
			lf[k++] = m[i];
	a = walk_log(m, n, NULL, &rc);
	ck_assert_int_eq(rc, 0);
	b = walk_log(lf, k, NULL, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(a, b);
	HAS(a, "H0 Subject: crlf post\n");
	HAS(a, "T1 text/plain : crlf plain line\n");
	HAS(a, "T1 text/html : crlf html");
	HASNT(a, "\r");
	HASNT(a, "A0");
	free(a);
	free(b);
	free(lf);
	free(m);
}
END_TEST

/* old Macintosh line ends: a bare CR */
START_TEST(bare_cr_lines)
{
	struct buf b = BUF_INIT(1000);
	unsigned char *m;
	size_t n;
	char *log = fixture_log("0031-bare-cr.eml");

	HAS(log, "A0 line-ends-cr\n");
	HAS(log, "H0 Subject: bare carriage returns\n");
	HAS(log, "T1 text/plain : Barecrhidden words on lines\nthat end");
	HAS(log, "T1 text/html : \nCrhtmlhidden\n");
	free(log);
	m = fixture("0031-bare-cr.eml", &n);
	ck_assert_int_eq(mail_header(m, n, "subject", &b), 1);
	ck_assert_str_eq(buf_str(&b), "bare carriage returns");
	ck_assert_uint_eq(mail_body_offset(m, n),
	    (size_t)(strstr((char *)m, "\r\r--cr") - (char *)m) + 2);
	buf_free(&b);
	free(m);
	/* a CR inside a LF post is no line end */
	log = walk_log("Subject: a\rb\n\nx\ry\n", 18, NULL, NULL);
	HAS(log, "H0 Subject: a\rb\n");
	HASNT(log, "line-ends-cr");
	free(log);
}
END_TEST

START_TEST(no_blank_line)
{
	unsigned char *m;
	size_t n;
	char *log = fixture_log("0004-no-blank-line.eml");

	HAS(log, "A0 header-no-blank-line\n");
	HAS(log, "H0 From: x@example.org\n");
	HAS(log, "T0 text/plain : this line is body text, not a header\n"
	    "second body line");
	HASNT(log, "H0 this line");
	free(log);
	m = fixture("0004-no-blank-line.eml", &n);
	ck_assert_uint_eq(mail_body_offset(m, n),
	    (size_t)(strstr((char *)m, "this line") - (char *)m));
	free(m);
}
END_TEST

/* the header ends at a line starting with "--" (a Pine "=:" boundary
 * would read as a field) and at a line of spaces */
START_TEST(boundary_no_blank)
{
	char *log = fixture_log("0019-boundary-no-blank.eml");

	HAS(log, "A0 header-no-blank-line\n");
	HASNT(log, "H0 ---559023410");
	HASNT(log, "A0 boundary-missing");
	HAS(log, "T1 text/plain us-ascii: Pinehidden words");
	HAS(log, "T1 text/plain : Note: spacelinehidden, after");
	HASNT(log, "H1 Note");
	free(log);
}
END_TEST

START_TEST(mbox_from_line)
{
	char *log = fixture_log("0015-mbox-from.eml");

	ck_assert_int_eq(strncmp(log, "H0 Subject: mbox\n", 17), 0);
	HAS(log, "T0 text/plain : mbox body");
	HASNT(log, "A0");
	free(log);
}
END_TEST

/* --- MIME structure --------------------------------------------------- */

/* RFC 2046 5.1.1: a delimiter is the boundary as a line prefix; an
 * exact match at any level still wins over a prefix one */
START_TEST(delimiter_prefix)
{
	static const char nested[] =
	    "Content-Type: multipart/mixed; boundary=b2\n\n"
	    "--b2\n"
	    "Content-Type: multipart/mixed; boundary=b\n\n"
	    "--b\n\ninner one\n"
	    "--b trailing\n\ninner two\n"
	    "--b2\n\nouter two\n"
	    "--b2--\n";
	char *log = fixture_log("0020-delimiter-trailing-text.eml");
	int rc;

	HAS(log, "T1 text/plain : Prefixhidden pills");
	HAS(log, "T1 text/html : \nSecondhidden offer\n");
	HASNT(log, "\nA");
	free(log);
	log = walk_log(nested, strlen(nested), NULL, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "T2 text/plain : inner one\n");
	HAS(log, "T2 text/plain : inner two\n");
	/* "--b2" is the outer part, not a prefix match of the inner "b" */
	HAS(log, "T1 text/plain : outer two\n");
	HAS(log, "A1 boundary-missing\n");	/* the inner one never closed */
	free(log);
}
END_TEST

START_TEST(nested_multipart)
{
	char *log = fixture_log("0005-nested-multipart.eml");

	HAS(log, "H1 Content-Type: multipart/alternative");
	HAS(log, "H2 Content-Type: multipart/related");
	HAS(log, "T3 text/plain utf-8: level three text\n");
	HAS(log, "P3 image/png pic.png\n");
	HAS(log, "T2 text/html : \nlevel two html\n");
	HAS(log, "T1 text/plain : level one text\n");
	/* in order */
	ck_assert(strstr(log, "level three") < strstr(log, "pic.png"));
	ck_assert(strstr(log, "pic.png") < strstr(log, "level two"));
	ck_assert(strstr(log, "level two") < strstr(log, "level one"));
	HASNT(log, "\nA");
	HASNT(log, "iVBOR");		/* attachments carry no content */
	free(log);
}
END_TEST

START_TEST(message_rfc822)
{
	char *log = fixture_log("0006-message-rfc822.eml");

	HAS(log, "T1 text/plain : see the attached message\n");
	HAS(log, "H1 Content-Type: message/rfc822\n");
	HAS(log, "H2 From: inner@example.org\n");
	HAS(log, "H2 Subject: inner subject\n");
	HAS(log, "T3 text/plain : inner plain body\n");
	HASNT(log, "\nA");
	free(log);
}
END_TEST

/* a forwarded message saved from an mbox: its "From " line skipped */
START_TEST(rfc822_mbox_from)
{
	char *log = fixture_log("0023-rfc822-mbox-from.eml");

	HAS(log, "H2 Subject: mboxsubjecthidden\n");
	HAS(log, "T3 text/plain utf-8: Mboxqphidden pr\xc3\xa9" "cieux");
	HAS(log, "P3 application/octet-stream payload.exe\n");
	HASNT(log, "header-no-blank-line");
	free(log);
}
END_TEST

/* a message/rfc822 in base64 or quoted-printable is decoded and walked;
 * outer boundaries and limits still hold */
START_TEST(rfc822_encoded)
{
	static const char deep[] =
	    "Content-Type: message/rfc822\n"
	    "Content-Transfer-Encoding: quoted-printable\n\n"
	    "Content-Type: message/rfc822\n"
	    "Content-Transfer-Encoding: quoted-printable\n\n"
	    "Subject: two deep\n\ntwodeephidden=\n\n";
	struct mail_limits lim;
	char *log = fixture_log("0024-rfc822-encoded.eml");
	int rc;

	HAS(log, "H2 Subject: b64innersubject\n");
	HAS(log, "T3 text/html utf-8: \nB64innerhidden pills\n");
	HAS(log, "P3 application/zip invoice.zip\n");
	HAS(log, "H2 Subject: qpinnersubject\n");
	HAS(log, "T2 text/plain iso-8859-1: Qpinnerhidden caf\xc3\xa9 offer, "
	    "soft broken line.");
	HASNT(log, "P1 message/rfc822");
	HASNT(log, "\nA");
	free(log);
	/* nested: decoded twice */
	log = walk_log(deep, strlen(deep), NULL, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "T2 text/plain : twodeephidden\n");
	free(log);
	/* the depth limit holds inside */
	mail_limits_default(&lim);
	lim.max_depth = 1;
	log = walk_log(deep, strlen(deep), &lim, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A1 depth-limit\n");
	HASNT(log, "twodeephidden");
	free(log);
	/* so does the bound on bytes walked again: eight levels, each
	 * decoded copy nearly the whole post, the post within max_scan */
	{
		struct buf b = BUF_INIT(4096);
		int i;

		for (i = 0; i < 8; i++)
			ck_assert_int_eq(buf_adds(&b, "Content-Type: message/"
			    "rfc822\nContent-Transfer-Encoding: "
			    "quoted-printable\n\n"), 0);
		ck_assert_int_eq(buf_adds(&b, "Subject: deep\n\ndeephidden\n"),
		    0);
		mail_limits_default(&lim);
		lim.max_scan = b.len * 3;
		log = walk_log(b.data, b.len, &lim, &rc);
		ck_assert_int_eq(rc, 0);
		HAS(log, "scan-truncated\n");
		HASNT(log, "deephidden");
		free(log);
		lim.max_scan = b.len * 8;
		log = walk_log(b.data, b.len, &lim, &rc);
		ck_assert_int_eq(rc, 0);
		HASNT(log, "scan-truncated\n");
		HAS(log, "T8 text/plain : deephidden\n");
		free(log);
		buf_free(&b);
	}
}
END_TEST

START_TEST(digest)
{
	char *log = fixture_log("0016-digest.eml");

	HAS(log, "H2 Subject: digest one\n");
	HAS(log, "T2 text/plain : first digest message\n");
	HAS(log, "H2 Subject: digest two\n");
	HAS(log, "T2 text/plain : second digest message\n");
	free(log);
}
END_TEST

START_TEST(missing_boundary)
{
	char *log = fixture_log("0007-missing-boundary.eml");

	HAS(log, "T1 text/plain : first part\n");
	HAS(log, "T1 text/plain : second part never closed");
	HAS(log, "A0 boundary-missing\n");
	free(log);
}
END_TEST

/* a boundary that never delimits: the body is text, as with none */
START_TEST(boundary_never_found)
{
	char *log = fixture_log("0021-boundary-never-found.eml");

	HAS(log, "A0 boundary-missing\n");
	HAS(log, "T0 text/plain : Neverfoundhidden offer");
	HAS(log, "otherhidden.");
	free(log);
}
END_TEST

/* two Content-Type fields: the one whose boundary delimits the body */
START_TEST(duplicate_content_type)
{
	char *log = fixture_log("0022-duplicate-content-type.eml");

	HAS(log, "A0 content-type-duplicate\n");
	HASNT(log, "boundary-missing");
	HAS(log, "T1 text/plain us-ascii: Duphidden offer");
	/* text/plain first, a multipart that delimits second: multipart */
	HAS(log, "T2 text/plain : Innerbase64hidden words, decoded.");
	free(log);
}
END_TEST

START_TEST(preamble_epilogue)
{
	char *log = fixture_log("0008-preamble-epilogue.eml");

	HAS(log, "T1 text/plain : the real text\n");
	HASNT(log, "PREAMBLEWORD");
	HASNT(log, "EPILOGUEWORD");
	HASNT(log, "\nA");
	free(log);
}
END_TEST

/* a multipart with no boundary parameter is read as text */
START_TEST(multipart_without_boundary)
{
	const char *m = "Content-Type: multipart/mixed\n\nplain words\n";
	char *log = walk_log(m, strlen(m), NULL, NULL);

	HAS(log, "A0 boundary-missing\n");
	HAS(log, "T0 text/plain : plain words");
	free(log);
}
END_TEST

/* Content-Type parameters: comments, quoting, odd spacing */
START_TEST(ctype_params)
{
	const char *m = "Content-Type: (c) Text / HTML (x) ; (y) charset = "
	    "\"ISO-8859-1\" (latin)\n\n<p>caf\xe9</p>\n";
	char *log = walk_log(m, strlen(m), NULL, NULL);

	HAS(log, "T0 text/html iso-8859-1: \ncaf\xc3\xa9\n");
	free(log);
}
END_TEST

/* --- transfer encodings ----------------------------------------------- */

static const struct {
	const char *in, *out;
	int rc;
} b64_cases[] = {
	{ "aGVsbG8=", "hello", 0 },
	{ "aGVs\r\nbG8=\r\n", "hello", 0 },
	{ "aGVsbG8", "hello", 1 },		/* missing padding */
	{ "aGV*sb!G8=", "hello", 1 },		/* garbage skipped */
	{ "aGVsbG8=aGk=", "hellohi", 0 },	/* concatenated runs */
	{ "=aGk=", "hi", 1 },			/* '=' out of place */
	{ "a", "", 1 },
	{ "", "", 0 },
	{ "Zm9v YmFy", "foobar", 0 },
};

START_TEST(base64_table)
{
	struct buf b = BUF_INIT(100);

	ck_assert_int_eq(b64_decode((const unsigned char *)b64_cases[_i].in,
	    strlen(b64_cases[_i].in), &b), b64_cases[_i].rc);
	ck_assert_str_eq(buf_str(&b), b64_cases[_i].out);
	buf_free(&b);
}
END_TEST

START_TEST(base64_part)
{
	char *log = fixture_log("0009-base64-garbage.eml");

	HAS(log, "A0 b64-garbage\n");
	HAS(log, "T0 text/plain utf-8: Hello base64 world, this decodes fine");
	free(log);
}
END_TEST

static const struct {
	const char *in, *out;
	int rc;
} qp_cases[] = {
	{ "caf=E9", "caf\xe9", 0 },
	{ "soft=\r\nbreak", "softbreak", 0 },
	{ "soft=\nbreak", "softbreak", 0 },
	{ "soft=  \nbreak", "softbreak", 0 },	/* blanks after '=' */
	{ "a=ZZb", "a=ZZb", 1 },
	{ "a=3", "a=3", 1 },
	{ "end=", "end", 0 },
	{ "=3d=3D", "==", 0 },
	{ "", "", 0 },
};

START_TEST(qp_table)
{
	struct buf b = BUF_INIT(100);

	ck_assert_int_eq(qp_decode((const unsigned char *)qp_cases[_i].in,
	    strlen(qp_cases[_i].in), &b), qp_cases[_i].rc);
	ck_assert_str_eq(buf_str(&b), qp_cases[_i].out);
	buf_free(&b);
}
END_TEST

START_TEST(qp_part)
{
	char *log = fixture_log("0010-qp.eml");

	HAS(log, "A0 qp-bad-escape\n");
	HAS(log, "T0 text/plain iso-8859-1: soft break and caf\xc3\xa9 and a "
	    "bad =ZZ escape and = sign");
	free(log);
}
END_TEST

START_TEST(unknown_encoding)
{
	const char *m = "Content-Transfer-Encoding: x-uuencode-ish\n\n"
	    "raw =3D text\n";
	char *log = walk_log(m, strlen(m), NULL, NULL);

	HAS(log, "T0 text/plain : raw =3D text");
	free(log);
}
END_TEST

/* --- RFC 2047 and 2231 ------------------------------------------------ */

static const struct {
	const char *in, *out;
	int rc;
} ew_cases[] = {
	{ "=?utf-8?q?caf=C3=A9?=", "caf\xc3\xa9", 0 },
	{ "=?UTF-8?B?Y2Fmw6k=?=", "caf\xc3\xa9", 0 },
	{ "=?iso-8859-1?q?caf=E9?=", "caf\xc3\xa9", 0 },
	{ "=?ISO-8859-1?B?Y2Fm6Q==?=", "caf\xc3\xa9", 0 },
	/* adjacent words: the white space between them goes */
	{ "=?utf-8?q?a?= =?utf-8?q?b?=", "ab", 0 },
	{ "=?utf-8?q?a?=\r\n =?iso-8859-1?q?=E9?=", "a\xc3\xa9", 0 },
	/* a character split over two words */
	{ "=?utf-8?B?4oK=?= =?utf-8?B?rA==?=", "\xe2\x82\xac", 0 },
	/* text between words stays */
	{ "x =?utf-8?q?a?= y =?utf-8?q?b_c?= z", "x a y b c z", 0 },
	{ "=?utf-8*en?q?lang?=", "lang", 0 },
	/* bad words are kept as they were */
	{ "=?utf-8?x?bad?=", "=?utf-8?x?bad?=", 1 },
	{ "=?utf-8?q?unterminated", "=?utf-8?q?unterminated", 1 },
	{ "=?utf-8?q?a b?=", "=?utf-8?q?a b?=", 1 },
	{ "a =? b", "a =? b", 0 },
	{ "=?utf-8?q?x=ZZ?=", "x=ZZ", 1 },
	{ "=?utf-8?b?!!!?=", "", 1 },
	/* raw 8-bit text: UTF-8 kept, other bytes as Latin-1 */
	{ "caf\xc3\xa9 caf\xe9", "caf\xc3\xa9 caf\xc3\xa9", 0 },
};

START_TEST(rfc2047_table)
{
	struct buf b = BUF_INIT(1000);

	ck_assert_int_eq(rfc2047_decode((const unsigned char *)
	    ew_cases[_i].in, strlen(ew_cases[_i].in), &b), ew_cases[_i].rc);
	ck_assert_str_eq(buf_str(&b), ew_cases[_i].out);
	buf_free(&b);
}
END_TEST

START_TEST(rfc2047_headers)
{
	char *log = fixture_log("0011-rfc2047.eml");

	HAS(log, "H0 Subject: \xc3\xa9t\xc3\xa9  plain caf\xc3\xa9\n");
	HAS(log, "H0 From: Andr\xc3\xa9 <andre@example.org>\n");
	HAS(log, "H0 X-Bad: =?utf-8?x?bad?= and =?broken\n");
	HAS(log, "H0 X-Split: \xe2\x82\xac\n");
	HAS(log, "A0 rfc2047-bad\n");
	free(log);
}
END_TEST

static const struct {
	const char *v, *name, *out;	/* out NULL: not found */
	int raw;
} param_cases[] = {
	{ "text/plain; charset=utf-8", "charset", "utf-8", 1 },
	{ "text/plain; CHARSET=\"utf-8\"", "charset", "utf-8", 1 },
	{ "text/plain; charset=utf-8 (comment)", "charset", "utf-8", 1 },
	{ "text/plain (a;b) ; charset=koi8-r", "charset", "koi8-r", 1 },
	{ "text/plain; format=flowed;\r\n charset=x", "charset", "x", 1 },
	{ "multipart/mixed; boundary=\"a;b\"", "boundary", "a;b", 1 },
	{ "multipart/mixed; boundary=\"a\\\"b\"", "boundary", "a\"b", 1 },
	{ "multipart/mixed; boundary==_x=", "boundary", "=_x=", 1 },
	{ "attachment; filename=my file.pdf", "filename", "my file.pdf", 0 },
	{ "attachment; filename*=UTF-8''%e2%82%ac.txt", "filename",
	    "\xe2\x82\xac.txt", 0 },
	{ "attachment; filename*=iso-8859-1'fr'caf%E9", "filename",
	    "caf\xc3\xa9", 0 },
	{ "attachment; filename*0=\"a\"; filename*1=\"b\"", "filename",
	    "ab", 0 },
	{ "attachment; filename*1=\"b\"; filename*0=\"a\"", "filename",
	    "ab", 0 },
	{ "attachment; filename*2=c; filename*0=a", "filename", "a", 0 },
	{ "attachment; filename*0*=''%41; filename*1=%42", "filename", "A%42",
	    0 },
	{ "attachment; filename=\"=?utf-8?b?w6k=?=\"", "filename",
	    "\xc3\xa9", 0 },
	{ "attachment; filename=plain; filename*=utf-8''ext", "filename",
	    "ext", 0 },
	{ "attachment; filenamex=y", "filename", NULL, 0 },
	{ "attachment; filename", "filename", NULL, 0 },
	{ "attachment; filename=", "filename", "", 0 },
	{ "attachment; filename*=", "filename", "", 0 },
	{ "", "filename", NULL, 0 },
	{ "attachment; filename=\"unterminated", "filename", "unterminated",
	    0 },
};

START_TEST(param_table)
{
	struct buf b = BUF_INIT(1000);
	const char *v = param_cases[_i].v;
	int r;

	r = mime_param((const unsigned char *)v, strlen(v),
	    param_cases[_i].name, param_cases[_i].raw, &b);
	if (param_cases[_i].out == NULL)
		ck_assert_int_eq(r, 0);
	else {
		ck_assert_int_eq(r, 1);
		ck_assert_str_eq(buf_str(&b), param_cases[_i].out);
	}
	buf_free(&b);
}
END_TEST

START_TEST(rfc2231_params)
{
	char *log = fixture_log("0012-rfc2231.eml");

	HAS(log, "P1 application/octet-stream \xe2\x82\xac report "
	    "final.pdf\n");
	HAS(log, "P1 application/zip z\xc3\xbcp.zip\n");
	/* charset*=iso-8859-1'en'koi8-r: the value is "koi8-r" */
	HAS(log, "T1 text/plain koi8-r: \xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2"
	    "\xd0\xb5\xd1\x82");
	free(log);
}
END_TEST

/* --- charsets --------------------------------------------------------- */

static const struct {
	const char *cs, *in, *out;
	int rc;
} cs_cases[] = {
	{ "iso-8859-1", "caf\xe9", "caf\xc3\xa9", 0 },
	{ "ISO-8859-1", "\xa3" "5", "\xc2\xa3" "5", 0 },
	{ "windows-1252", "\x93hi\x94 \x80", "\xe2\x80\x9chi\xe2\x80\x9d "
	    "\xe2\x82\xac", 0 },
	{ "koi8-r", "\xd0\xd2\xc9\xd7\xc5\xd4", "\xd0\xbf\xd1\x80\xd0\xb8"
	    "\xd0\xb2\xd0\xb5\xd1\x82", 0 },
	{ "shift_jis", "\x82\xb1\x82\xf1", "\xe3\x81\x93\xe3\x82\x93", 0 },
	{ "Shift_JIS", "abc", "abc", 0 },
	{ "ks_c_5601-1987", "\xb0\xa1", "\xea\xb0\x80", 0 },
	{ "utf-8", "\xc3\xa9", "\xc3\xa9", 0 },
	{ "us-ascii", "\xc3\xbc" "ber", "\xc3\xbc" "ber", 0 },
	/* unknown names: read as UTF-8, Latin-1 for invalid bytes */
	{ "x-no-such-charset", "caf\xc3\xa9", "caf\xc3\xa9", 1 },
	{ "../../etc/passwd", "a\xe9", "a\xc3\xa9", 1 },
	{ "utf-8//IGNORE", "a", "a", 1 },
	/* lying charsets: invalid bytes become Latin-1 */
	{ "utf-8", "\xe9t\xe9 \xff", "\xc3\xa9t\xc3\xa9 \xc3\xbf", 1 },
	{ "utf-8", "\xed\xa0\x80", "\xc3\xad\xc2\xa0\xc2\x80", 1 },
	{ "shift_jis", "a\x82", "a\xc2\x82", 1 },
	{ "", "plain", "plain", 0 },
};

START_TEST(charset_table)
{
	struct buf b = BUF_INIT(1000);

	ck_assert_int_eq(charset_to_utf8(cs_cases[_i].cs, (const unsigned char *)
	    cs_cases[_i].in, strlen(cs_cases[_i].in), &b), cs_cases[_i].rc);
	ck_assert_str_eq(buf_str(&b), cs_cases[_i].out);
	buf_free(&b);
}
END_TEST

START_TEST(charset_parts)
{
	char *log = fixture_log("0013-charsets.eml");

	HAS(log, "T1 text/plain iso-8859-1: caf\xc3\xa9 latin\n");
	HAS(log, "T1 text/plain windows-1252: \xe2\x80\x9cquoted\xe2\x80\x9d "
	    "\xe2\x82\xac\n");
	HAS(log, "T1 text/plain koi8-r: \xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2"
	    "\xd0\xb5\xd1\x82 koi\n");
	HAS(log, "T1 text/plain shift_jis: \xe3\x81\x93\xe3\x82\x93\xe3\x81"
	    "\xab\xe3\x81\xa1\xe3\x81\xaf sjis\n");
	HAS(log, "A1 charset-unknown\n");
	HAS(log, "T1 text/plain x-no-such-charset: unknown caf\xc3\xa9\n");
	HAS(log, "A1 charset-invalid\n");
	HAS(log, "T1 text/plain utf-8: lying \xc3\xa9t\xc3\xa9 \xc3\xbf end\n");
	HAS(log, "T1 text/plain us-ascii: ascii but utf-8 \xc3\xbc" "ber\n");
	free(log);
}
END_TEST

/* labels that lie: the bytes decide (charset_convert_text) */
static const struct {
	const char *cs, *hint, *in, *out;
	int flags;
	size_t n;		/* 0: strlen(in) */
} lie_cases[] = {
	/* Shift_JIS "激安" labelled us-ascii, the post Japanese elsewhere */
	{ "us-ascii", "iso-2022-jp", "\x8c\x83\x88\xc0",
	    "\xe6\xbf\x80\xe5\xae\x89", CS_RELABELLED, 0 },
	/* ... and with no hint: Latin-1 for each byte, as before */
	{ "us-ascii", NULL, "\x8c\x83\x88\xc0",
	    "\xc2\x8c\xc2\x83\xc2\x88\xc3\x80", CS_INVALID, 0 },
	/* GB2312 "你好" with no label, the post GB2312 elsewhere: the
	 * hint itself is tried first (Big5 would take these bytes too) */
	{ "", "GB2312", "\xc4\xe3\xba\xc3", "\xe4\xbd\xa0\xe5\xa5\xbd",
	    CS_RELABELLED, 0 },
	/* EUC-JP "激安" labelled ISO-2022-JP (which is 7-bit) */
	{ "iso-2022-jp", NULL, "\xb7\xe3\xb0\xc2",
	    "\xe6\xbf\x80\xe5\xae\x89", CS_RELABELLED, 0 },
	/* UTF-8 labelled GB2312: four sequences cannot be chance */
	{ "gb2312", NULL, "\xe4\xbe\xbf\xe5\xae\x9c\xe7\x9a\x84"
	    "\xe5\x90\x8d", "\xe4\xbe\xbf\xe5\xae\x9c\xe7\x9a\x84"
	    "\xe5\x90\x8d", CS_RELABELLED, 0 },
	/* one sequence could be: GB2312 it stays */
	{ "gb2312", NULL, "\xc3\xa9", "\xe8\x8c\x85", 0, 0 },
	/* UTF-8 labelled Latin-1: one sequence is enough there */
	{ "iso-8859-1", NULL, "caf\xc3\xa9", "caf\xc3\xa9", CS_RELABELLED, 0 },
	{ "iso-8859-1", NULL, "caf\xe9", "caf\xc3\xa9", 0, 0 },
	/* UTF-16 is not ASCII-based: taken as labelled */
	{ "utf-16le", NULL, "a\0b\0", "ab", 0, 4 },
};

START_TEST(charset_lies_table)
{
	struct buf b = BUF_INIT(1000);
	const char *in = lie_cases[_i].in;
	size_t n = lie_cases[_i].n ? lie_cases[_i].n : strlen(in);
	int flags = 0;

	ck_assert_int_eq(charset_convert_text(lie_cases[_i].cs,
	    strlen(lie_cases[_i].cs), lie_cases[_i].hint,
	    (const unsigned char *)in, n, &b, &flags), 0);
	ck_assert_str_eq(buf_str(&b), lie_cases[_i].out);
	ck_assert_int_eq(flags, lie_cases[_i].flags);
	buf_free(&b);
}
END_TEST

START_TEST(charset_lies_parts)
{
	char *log = fixture_log("0033-charset-lies.eml");

	/* the hint: the Subject's ISO-2022-JP word; the next word, UTF-8
	 * labelled Latin-1, read as UTF-8 (and joined: RFC 2047 drops the
	 * space between two words) */
	HAS(log, "H0 Subject: \xe7\x89\xb9\xe4\xbe\xa1" "caf\xc3\xa9 "
	    "cr\xc3\xa8me\n");
	HAS(log, "A1 charset-mislabelled\n");
	HAS(log, "T1 text/plain us-ascii: \xe6\xbf\x80\xe5\xae\x89");
	HAS(log, "T1 text/plain iso-2022-jp: \xe5\x87\xba\xe4\xbc\x9a");
	HAS(log, "T1 text/plain gb2312: \xe4\xbe\xbf\xe5\xae\x9c");
	HAS(log, "\n\xe9\xab\x98\xe5\x8f\x8e\xe5\x85\xa5");
	free(log);
}
END_TEST

static double
cpu_now(void)
{
	struct timespec ts;

	ck_assert_int_eq(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the fastest of three readings of in as charset cs, into b */
static double
lie_cpu(const char *cs, const unsigned char *in, size_t n, struct buf *b)
{
	double best = 1e9, t0, t;
	int k, flags;

	for (k = 0; k < 3; k++) {
		b->len = 0;
		flags = 0;
		t0 = cpu_now();
		ck_assert_int_eq(charset_convert_text(cs, strlen(cs), NULL, in,
		    n, b, &flags), 0);
		t = cpu_now() - t0;
		ck_assert(flags & CS_INVALID);
		if (t < best)
			best = t;
	}
	return best;
}

/* bytes no charset of a label's language takes (0xff) cost one reading,
 * not one per charset tried and the label's twice: as fast as the same
 * bytes in a label without a language to try (EUC-TW: one reading, one
 * iconv call per byte refused, as each must be), whatever the build's
 * speed (sanitizers, valgrind) */
START_TEST(charset_lies_time)
{
	size_t n = 256u * 1024u;
	unsigned char *in = xmalloc(n);
	struct buf a = BUF_INIT(8u * 1024u * 1024u);
	struct buf b = BUF_INIT(8u * 1024u * 1024u);
	double tjp, ttw;

	ck_assert_ptr_nonnull(in);
	memset(in, 0xff, n);
	ttw = lie_cpu("euc-tw", in, n, &a);
	tjp = lie_cpu("euc-jp", in, n, &b);
	ck_assert_str_eq(buf_str(&a), buf_str(&b));
	ck_assert_msg(tjp < 2.5 * ttw + 0.005, "0xff labelled EUC-JP: %.3f s "
	    "of CPU, EUC-TW %.3f s", tjp, ttw);
	buf_free(&a);
	buf_free(&b);
	xfree(in);
}
END_TEST

/* a byte order mark wins over a label that reads the bytes otherwise
 * when they all fit it (a browser reads a page by its mark first):
 * UTF-16 of either order unlabelled or labelled us-ascii or Latin-1,
 * UTF-8 labelled UTF-16; bytes the mark does not fit (an unpaired
 * surrogate), and a label of the mark's own reading, change nothing */
static const struct {
	const char *cs, *in, *out;
	size_t n, outn;
	int relabelled;
} bom_cases[] = {
	{ "", "\xff\xfe" "h\0i\0", "hi", 6, 2, 1 },
	{ "us-ascii", "\xfe\xff" "\0h\0i", "hi", 6, 2, 1 },
	/* (a half character at the end is dropped) */
	{ "iso-8859-1", "\xff\xfe" "h\0i\0" "\n", "hi", 7, 2, 1 },
	{ "utf-16", "\xef\xbb\xbf" "hi", "\xef\xbb\xbf" "hi", 5, 5, 1 },
	{ "utf-16le", "\xff\xfe" "h\0i\0", "\xef\xbb\xbf" "hi", 6, 5, 0 },
	{ "utf-8", "\xef\xbb\xbf" "hi", "\xef\xbb\xbf" "hi", 5, 5, 0 },
	{ "", "\xff\xfe" "\0\xd8" "a\0", "\xc3\xbf\xc3\xbe" "\0\xc3\x98" "a\0",
	    6, 9, 0 },
};

START_TEST(charset_bom)
{
	struct buf b = BUF_INIT(1000);
	int flags = 0;

	ck_assert_int_eq(charset_convert_body(bom_cases[_i].cs,
	    strlen(bom_cases[_i].cs), NULL, (const unsigned char *)
	    bom_cases[_i].in, bom_cases[_i].n, &b, &flags), 0);
	ck_assert_uint_eq(b.len, bom_cases[_i].outn);
	ck_assert(memcmp(b.data, bom_cases[_i].out, b.len) == 0);
	ck_assert_int_eq((flags & CS_RELABELLED) != 0,
	    bom_cases[_i].relabelled);
	buf_free(&b);
}
END_TEST

/* ... and so a part's words are read: an HTML part in UTF-16 with its
 * mark, labelled nothing, gave none.  An encoded word, which a mail
 * reader reads by its label, is read so: "\xff\xfe" and Latin-1 */
START_TEST(charset_bom_part)
{
	static const char msg[] = "Subject: =?iso-8859-1?q?=FF=FEcheap_pills?=\n"
	    "Content-Type: text/html\nContent-Transfer-Encoding: base64\n\n"
	    "//48AGIAPgBCAHUAeQAgAHAAaQBsAGwAcwA8AC8AYgA+AA==\n";
	char *log = walk_log(msg, sizeof(msg) - 1, NULL, NULL);

	HAS(log, "H0 Subject: \xc3\xbf\xc3\xbe" "cheap pills\n");
	HAS(log, "A0 charset-mislabelled\n");
	HAS(log, "T0 text/html : Buy pills\n");
	free(log);
}
END_TEST

/* a <meta> charset as a browser's prescan takes it: one of UTF-16 (in
 * ASCII bytes) means UTF-8, one of another Unicode form whose bytes are
 * not ASCII is none (a later one counts), the others as named */
static const struct {
	const char *in, *cs;
} meta_cases[] = {
	{ "<meta charset=\"utf-16\">", "utf-8" },
	{ "<META CHARSET=UTF-16BE>", "utf-8" },
	{ "<meta http-equiv=content-type content=\"text/html; charset=ucs-2\">",
	    "utf-8" },
	{ "<meta charset=unicode>", "utf-8" },
	{ "<meta charset=utf-32><meta charset=koi8-r>", "koi8-r" },
	{ "<meta charset=utf-7>", "" },
	{ "<meta charset=\"shift_jis\">", "shift_jis" },
};

START_TEST(html_meta_unicode)
{
	char cs[41];
	int r;

	cs[0] = 0;
	r = html_meta_charset((const unsigned char *)meta_cases[_i].in,
	    strlen(meta_cases[_i].in), cs, sizeof(cs));
	ck_assert_int_eq(r, meta_cases[_i].cs[0] != 0);
	if (r)
		ck_assert_str_eq(cs, meta_cases[_i].cs);
}
END_TEST

/* ... and so a part's words are read: an unlabelled HTML part whose
 * meta names UTF-16 was read as UTF-16, its words as CJK pairs */
START_TEST(html_meta_unicode_part)
{
	static const char msg[] = "Subject: x\nContent-Type: text/html\n\n"
	    "<meta charset=\"utf-16\"><b>Buy pills</b>\n";
	char *log = walk_log(msg, sizeof(msg) - 1, NULL, NULL);

	HAS(log, "T0 text/html : ");
	HAS(log, "Buy pills\n");
	HASNT(log, "charset-invalid");
	free(log);
}
END_TEST

/* the handle cache survives more charsets than it has slots */
START_TEST(charset_cache)
{
	static const char *const names[] = { "koi8-r", "koi8-u", "cp1251",
	    "iso-8859-2", "iso-8859-5", "iso-8859-7", "iso-8859-9", "cp1250",
	    "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
	    "cp866", "cp850", "macintosh", "gb2312", "big5", "euc-jp" };
	struct buf b = BUF_INIT(100);
	int round;
	size_t i;

	for (round = 0; round < 3; round++)
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			buf_reset(&b);
			ck_assert_int_eq(charset_to_utf8(names[i],
			    (const unsigned char *)"abc", 3, &b), 0);
			ck_assert_str_eq(buf_str(&b), "abc");
		}
	charset_cache_clear();
	buf_reset(&b);
	ck_assert_int_eq(charset_to_utf8("koi8-r", (const unsigned char *)
	    "\xd0", 1, &b), 0);
	ck_assert_str_eq(buf_str(&b), "\xd0\xbf");
	buf_free(&b);
}
END_TEST

/* --- text/enriched, text/richtext ------------------------------------ */

static const struct {
	const char *in, *out;
	int richtext;
} enriched_cases[] = {
	{ "<bold>a</bold> b", "a b", 0 },
	{ "G<italic>UA</italic>RANTEE", "GUARANTEE", 0 },
	{ "<color><param>red</param>x</color>", "x", 0 },
	{ "1 <<< 2 << 3", "1 << 2 < 3", 0 },
	{ "a <no such thing> b < c", "a <no such thing> b < c", 0 },
	{ "<param>never closed", "", 0 },
	{ "x<nl>y <lt> z<comment>c</comment>", "x\ny < z", 1 },
	{ "x<nl>y", "xy", 0 },			/* only richtext has <nl> */
	{ "", "", 0 },
};

START_TEST(enriched_table)
{
	struct buf b = BUF_INIT(1000);

	ck_assert_int_eq(enriched_to_text((const unsigned char *)
	    enriched_cases[_i].in, strlen(enriched_cases[_i].in),
	    enriched_cases[_i].richtext, &b), 0);
	ck_assert_str_eq(buf_str(&b), enriched_cases[_i].out);
	buf_free(&b);
}
END_TEST

START_TEST(enriched_parts)
{
	char *log = fixture_log("0030-text-enriched.eml");

	HAS(log, "T1 text/enriched us-ascii: Enrichedhidden offer: cheap\n"
	    "watches, 1 << 2.");
	HAS(log, "T1 text/richtext : Richtexthidden deal\n5 < 6");
	HASNT(log, "bigger");
	HASNT(log, "red");
	free(log);
}
END_TEST

/* --- uuencoding -------------------------------------------------------- */

START_TEST(uuencode_parts)
{
	char *log = fixture_log("0025-uuencode.eml");

	/* x-uuencode text: decoded */
	HAS(log, "T1 text/plain us-ascii: Uuhiddenword: cheap pills");
	/* a begin block in text: an attachment, the text around it kept */
	HAS(log, "P1 application/octet-stream setup.exe\n");
	HAS(log, "The inlinehidden text before a block.\n\n\n\nAnd "
	    "afterhidden text after it.");
	HASNT(log, "M575H");
	/* an attachment in uuencode: the name of its begin line */
	HAS(log, "P1 application/octet-stream report.scr\n");
	HASNT(log, "\nA0 ");
	HASNT(log, "\nA1 ");
	free(log);
}
END_TEST

static const struct {
	const char *in, *out;
	int rc;
} uu_cases[] = {
	{ "begin 644 a\n#86)C\n`\nend\n", "abc", 0 },
	{ "#86)C\n", "abc", 0 },			/* no begin line */
	{ "begin 600 a\n#86)C\n", "abc", 0 },	/* no end line */
	/* "ab@" ends in a zero sextet, sent as ' ' and stripped in transit */
	{ "begin 644 a\n#86)\n`\nend\n", "ab@", 0 },
	{ "begin 644 a\n#86)C\n!!!!\x01\n", "abc", 1 },
	{ "begin 644 a\n%86)C9&5F\n`\n", "abcde", 0 },
	{ "", "", 0 },
};

START_TEST(uu_table)
{
	struct buf b = BUF_INIT(1000);

	ck_assert_int_eq(uu_decode((const unsigned char *)uu_cases[_i].in,
	    strlen(uu_cases[_i].in), &b), uu_cases[_i].rc);
	ck_assert_str_eq(buf_str(&b), uu_cases[_i].out);
	buf_free(&b);
}
END_TEST

/* prose that says "begin 644" is not a block; a cut block is found */
START_TEST(uu_find_blocks)
{
	static const char prose[] = "we begin 644 at noon\nbegin 644 sharp\n"
	    "and go on\n";
	static const char blk[] = "text\nbegin 0644 my file.zip\n#86)C\n"
	    "`\nend\nmore\n";
	struct uu_block b;

	ck_assert_int_eq(uu_find((const unsigned char *)prose,
	    strlen(prose), &b), 0);
	ck_assert_int_eq(uu_find((const unsigned char *)blk, strlen(blk),
	    &b), 1);
	ck_assert_uint_eq(b.begin, 5);
	ck_assert_uint_eq(b.end, strlen(blk) - strlen("more\n"));
	ck_assert_uint_eq(b.namelen, 11);
	ck_assert_int_eq(memcmp(blk + b.name, "my file.zip", 11), 0);
}
END_TEST

/* --- HTML ------------------------------------------------------------- */

static const struct {
	const char *in, *out;
} html_cases[] = {
	{ "<b>bold</b> text", "bold text" },
	{ "a<script>x=1;</script>b", "ab" },
	{ "a<SCRIPT type=x>if (a<b) {}</Script >b", "ab" },
	{ "a<style>p{}</style>b", "ab" },
	{ "a<!-- hidden -->b", "ab" },
	{ "a<!-- never closed", "a" },
	/* HTML5 comments and bogus comments, as a browser shows them */
	{ "G</>UA</ >RA</ foo>NT</ bar >EE", "GUARANTEE" },
	{ "a<!-->b<!--->c<!-- x --!>d<!-- y -->e", "abcde" },
	{ "a<!x>b<?y>c</3>d</", "abcd</" },
	{ "a</ never closed", "a" },
	/* no "-->" anywhere: the comment ends at '>' as older browsers had
	 * it (HTML5 would hide the rest of the part) */
	{ "a<!--#rotate> b <i>c</i> <!--#x> d", "a b c  d" },
	{ "&amp;&lt;&gt;&quot;&apos;", "&<>\"'" },
	{ "&eacute;&Eacute;&euro;&copy;", "\xc3\xa9\xc3\x89\xe2\x82\xac"
	    "\xc2\xa9" },
	{ "&#65;&#x42;&#X43;&#0;&#xD800;&#99999999999;", "ABC \xef\xbf\xbd"
	    "\xef\xbf\xbd" },
	{ "&#150;", "\xe2\x80\x93" },		/* windows-1252 meaning */
	{ "&nosuch; & &amp", "&nosuch; & &" },
	{ "a&nbsp;b", "a b" },
	{ "Vi&shy;ag&#8203;ra", "Viagra" },	/* invisible splitters */
	{ "<p>one</p><p>two</p>", "\none\n\ntwo\n" },
	{ "one<br>two", "one\ntwo" },
	{ "<td>a</td><td>b</td>", "\na\n\nb\n" },
	{ "<a href=\"http://x.example/?a=1&amp;b=2\">go</a>",
	    " http://x.example/?a=1&b=2 go" },
	{ "<img src='p.gif' alt='cheap pills'>", " p.gif  cheap pills \n" },
	{ "<a href=x>y</a>", " x y" },
	{ "1 < 2 and 3 > 2", "1 < 2 and 3 > 2" },
	{ "<!DOCTYPE html>t", "t" },
	{ "<?xml version=1?>t", "t" },
	{ "<a title=\"unclosed", " unclosed " },
	/* each attribute kept, and only those (the first letter is looked
	 * at first); block tags by their whole name, whatever its case */
	{ "<form action=/go><b hreff=no sr=no alt=A TITLE=T>x",
	    " /go \n A  T x" },
	{ "<a href=''>e</a><x src=>f", "ef" },
	{ "<BLOCKQUOTE>q</blockquote><textarea>t<b>u<br/>v", "\nq\n\nt"
	    "u\nv" },
	{ "<h>a<h7>b<h6>c<ta>d<t>e<metas>f<meta>g", "ab\ncdef\ng" },
	{ "", "" },
};

START_TEST(html_table)
{
	struct buf b = BUF_INIT(1000);

	ck_assert_int_eq(html_to_text((const unsigned char *)
	    html_cases[_i].in, strlen(html_cases[_i].in), &b, NULL), 0);
	ck_assert_str_eq(buf_str(&b), html_cases[_i].out);
	buf_free(&b);
}
END_TEST

/* hidden elements: their text apart, the shown text read across them */
static const struct {
	const char *in, *out, *hid;
	int r;
} hidden_cases[] = {
	/* the zero-font attack: hidden letters inside a word */
	{ "Mi<span style=\"font-size:0px\">x</span>crosoft", "Microsoft",
	    "\nx\n", HTML_HIDDEN },
	{ "a<b style='FONT-SIZE : 0 !important'>b</b>c", "ac", "\nb\n",
	    HTML_HIDDEN },
	{ "a<i style=\"font-size:0.5pt\">b</i>c<i style=\"font-size:.9px\">"
	    "d</i>e", "ace", "\nb\n\nd\n", HTML_HIDDEN },
	/* visible sizes and values that hide nothing */
	{ "a<i style=\"font-size:0.5em\">b</i>c<i style=\"font-size:1px\">d"
	    "</i>e<i style=\"display:nonesuch\">f</i>", "abcdef", "", 0 },
	{ "a<i style=\"opacity:0.5\">b</i><i style=\"opacity:0%\">c</i>",
	    "ab", "\nc\n", HTML_HIDDEN },
	/* a hidden block ends at its own end tag, counting nested ones */
	{ "<div style=\"display:none\">p <div>q</div> r</div>s",
	    "s", "\n\np \nq\n r\n", HTML_HIDDEN },
	/* ... or at the end of a block opened before it, which a browser
	 * closes it with; blocks opened inside it end inside it */
	{ "<p><span style=\"display:none\">h<b>i</b></p>shown",
	    "\n\nshown", "\nhi\n", HTML_HIDDEN },
	{ "<td><div style=\"display:none\">x<p>y</p>z</td><td>w</td>",
	    "\n\n\nw\n", "\n\nx\ny\nz\n", HTML_HIDDEN },
	/* the last declaration of a property wins, unless an earlier one
	 * is important; a style that shows overrides the hidden attribute */
	{ "<i style=\"display:none;display:inline\">a</i>b", "ab", "", 0 },
	{ "<i style=\"display:none !important; display:inline\">a</i>b",
	    "b", "\na\n", HTML_HIDDEN },
	{ "<div hidden style=\"display:block\">a</div>", "\na\n", "", 0 },
	/* a repeated attribute is dropped: the first style counts */
	{ "<i style=\"display:inline\" style=\"display:none\">a</i>b", "ab",
	    "", 0 },
	{ "<i style=\"display:none\" style=\"display:inline\">a</i>b", "b",
	    "\na\n", HTML_HIDDEN },
	{ "<i style=\"\" style=\"display:none\">a</i>b", "ab", "", 0 },
	{ "<i style STYLE=\"display:none\">a</i>b", "ab", "", 0 },
	/* what a style sheet's !important may show again is not hidden;
	 * a sheet setting display overrides the hidden attribute */
	{ "<i style=\"display:none\">a</i><style>i{display:inline "
	    "!important}</style>b", "ab", "", 0 },
	{ "<STYLE>p{font-size:12px!IMPORTANT}</STYLE>M<b style=\"font-size:"
	    "0\">x</b>y", "Mxy", "", 0 },
	{ "<style>section{display:block}</style><section hidden>a</section>",
	    "\na\n", "", 0 },
	{ "<style>p{color:red}</style><section hidden>a</section>", "",
	    "\n\na\n", HTML_HIDDEN },
	/* a visibility or a font size that a descendant sets again, or
	 * whose end is far or missing, hides nothing */
	{ "<td style=\"font-size:0\"><div style=\"font-size:14px\">col</div>"
	    "</td>", "\n\ncol\n\n", "", 0 },
	{ "<i style=\"visibility:hidden\">a<b style=\"visibility:visible\">"
	    "b</b></i>", "ab", "", 0 },
	{ "<i style=\"font-size:0\">a", "a", "", 0 },
	/* hidden by its font size: the text, not the addresses */
	{ "<a href=\"http://u/\" style=\"font-size:0\">t<img src=\"http://"
	    "i/\"></a>", " http://u/  http://i/ ", "\nt\n\n", HTML_HIDDEN },
	{ "<p><span style=\"visibility:collapse\">h</span>t</p>",
	    "\nt\n", "\nh\n", HTML_HIDDEN },
	/* the hidden attribute; a void element hides only its attributes */
	{ "<section hidden>s <a href=\"http://x/\">l</a></section>t",
	    "t", "\n\ns  http://x/ l\n", HTML_HIDDEN },
	{ "a<img alt=\"pic\" hidden>b", "ab", "\n pic \n", HTML_HIDDEN },
	/* unclosed: to the end, as in a browser */
	{ "a<span style=\"display:none\">b c", "a", "\nb c", HTML_HIDDEN },
	/* empty, or only white space: nothing was hidden */
	{ "<div style=\"display:none\"> </div>x", "x", "\n\n \n", 0 },
	/* no style that hides: nothing */
	{ "<p style=\"color:red\">x</p><input type=hidden value=v>",
	    "\nx\n\n", "", 0 },
	/* a style the reader is not shown: dropped, whatever it says */
	{ "<style>p{display:none}</style>x", "x", "", 0 },
	/* declarations a browser drops hide nothing: white space inside a
	 * name or value, a number's bad unit, a bad "!"; semicolons inside
	 * quotes and brackets end no declaration */
	{ "<i style=\"display: no ne\">a</i><i style=\"dis play:none\">b</i>",
	    "ab", "", 0 },
	{ "<i style=\"font-size:0 px\">a</i><i style=\"font-size:0foo\">b"
	    "</i><i style=\"font-size:0.px\">c</i><i style=\"opacity:0 0\">d"
	    "</i>", "abcd", "", 0 },
	{ "<i style=\"display:none !importantx\">a</i><i style=\"display:none"
	    " !\">b</i>", "ab", "", 0 },
	{ "<i style='font-family:\"x;display:none;\"'>a</i><i style=\""
	    "background:url(x;display:none;)\">b</i>", "ab", "", 0 },
	{ "<i style=\"display:none ! important;display:inline\">a</i>b",
	    "b", "\na\n", HTML_HIDDEN },
	/* a hidden element ends where a browser closes it: at the end tag
	 * of an element around it, at a start tag closing a <p>, <li>,
	 * <dd>, cell or row, <option>, heading or <a> it is or is in */
	{ "<b><span style=\"display:none\">h</b>s", "s", "\nh\n", HTML_HIDDEN },
	{ "<p><span style=\"display:none\">h<div>s</div>", "\n\ns\n",
	    "\nh\n", HTML_HIDDEN },
	{ "<p style=\"display:none\">h<div>s</div>", "\ns\n", "\n\nh\n",
	    HTML_HIDDEN },
	{ "<p hidden>h<p>s", "\ns", "\n\nh\n", HTML_HIDDEN },
	{ "<ul><li><i hidden>h<li>s</ul>", "\n\n\ns\n", "\nh\n",
	    HTML_HIDDEN },
	{ "<dl><dt hidden>h<dd>s</dl>", "\n\ns\n", "\n\nh\n", HTML_HIDDEN },
	{ "<table><tr style=\"display:none\"><td>h<tr><td>s</table>",
	    "\n\n\ns\n", "\n\n\nh\n", HTML_HIDDEN },
	{ "<table><i style=\"display:none\">h<tr><td>s</table>",
	    "\n\n\ns\n", "\nh\n", HTML_HIDDEN },
	{ "<a href=\"http://x/\"><i hidden>h<a href=\"http://y/\">s</a>",
	    " http://x/  http://y/ s", "\nh\n", HTML_HIDDEN },
	{ "<h1 hidden>h<h2>s</h2>", "\ns\n", "\n\nh\n", HTML_HIDDEN },
	/* text a browser moves out of a hidden table, in front of it, is
	 * shown (and so is the rest of the table); a table part outside a
	 * table is an ignored tag */
	{ "<table style=\"display:none\">a<tr><td>h</table>s", "a\n\nh\ns",
	    "\n\n\n", 0 },
	{ "x<td hidden>a</td>", "x\na\n", "", 0 },
	{ "<table><tr><td>x</td><td style=\"display:none\">h</td></tr></table>",
	    "\n\n\nx\n\n\n", "\n\nh\n", HTML_HIDDEN },
	{ "<table><table></table><tr style=\"display:none\"><td>x",
	    "\n\n\n\n\nx", "", 0 },
	/* a block in a hidden phrasing element in a formatting element,
	 * which the latter's end tag moves out of the hidden one */
	{ "<em><span style=\"opacity:0\"><blockquote>s</em>", "\ns", "\n\n",
	    0 },
	/* ... and not at what it closes inside itself */
	{ "<div hidden><p>a<div>b</div><ul><li>c<li>d</ul><table><tr><td>e"
	    "<td>f</table></div>s", "s", "\n\n\na\nb\n\n\nc\nd\n\n\n\ne\n"
	    "f\n\n", HTML_HIDDEN },
	/* a font size or visibility that a descendant may set again (by
	 * a sheet, <font size>, the font shorthand, a form control) hides
	 * nothing; a sheet's font-family alone does not matter */
	{ "<style>b{font-size:14px}</style><i style=\"font-size:0\">a<b>b</b>"
	    "</i><style>.v{visibility:visible}</style><u style=\"visibility:"
	    "hidden\">c<b class=v>d</b></u>", "abcd", "", 0 },
	{ "<i style=\"font-size:0\">a<font size=3>b</font></i><i style=\""
	    "font-size:0\">c<button>d</button></i>", "abc\nd\n", "", 0 },
	{ "<style>p{font : 12px serif}</style>M<b style=\"font-size:0\">x</b>"
	    "y", "Mxy", "", 0 },
	{ "<style>p{font-family:serif}</style>M<b style=\"font-size:0\">x</b>"
	    "y", "My", "\nx\n", HTML_HIDDEN },
	{ "<i style=\"font-size:0;font:12px serif\">a</i><i style=\"font-size:"
	    ".5px\"><h1>b</h1></i>", "a\nb\n", "", 0 },
	/* a style as a browser reads it: character references decoded
	 * (HTML's), then comments and escapes (CSS's); a character made so
	 * that is no ASCII letter, digit, '-' or '_' matches nothing */
	{ "M<b style=\"display&#58;none\">x</b>y<i style=\"font-size:&#48;"
	    "\">z</i>", "My", "\nx\n\nz\n", HTML_HIDDEN },
	{ "M<b style=\"d\\69 spl\\61y:n\\6f ne\">x</b>y<i style=\"di\\splay"
	    ":/**/none\">z</i>", "My", "\nx\n\nz\n", HTML_HIDDEN },
	{ "M<b style=\"display\\3a none\">x</b><b style=\"dis/**/play:none\">"
	    "y</b><b style=\"display:&#8203;none\">z</b><b style=\"display:"
	    "&nbsp;none\">w</b>", "Mxyzw", "", 0 },
	{ "M<b style=\"display:none;display&#58;inline\">x</b><b style=\""
	    "display:none;font-family:&quot;/*&quot;;display:inline;x:&quot;"
	    "*/&quot;\">y</b><b style=\"display:none;font-family:&quot;a&#10;"
	    ";display:inline\">z</b>", "Mxyz", "", 0 },
	/* ... and what a descendant or a sheet may set again, spelt with a
	 * character reference or an escape: shown */
	{ "M<i style=\"font-size:0\">x<b style=\"f&#111;nt-size:9px\">y</b>"
	    "</i><i style=\"visibility:hidden\">z<b style=\"visib\\69 lity:"
	    "visible\">w</b></i>", "Mxyzw", "", 0 },
	{ "<style>.x{displ\\61y:inline!important}</style>M<b class=x style="
	    "\"display:none\">x</b>", "Mx", "", 0 },
	/* a <table> in a table closes that table and what a browser moved
	 * out in front of it (a hidden <dd>); in a cell it is a table of
	 * the hidden element's own */
	{ "<table hidden><dd hidden><table></table>s</table>", "\n\ns\n",
	    "\n\n\n\n\n\n", 0 },
	{ "<table><tr><td><dd hidden>a<table><tr><td>b</table>c</dd>d</table>",
	    "\n\n\nd\n", "\n\na\n\n\nb\nc\n", HTML_HIDDEN },
	/* a formatting element a browser ends without its end tag stays
	 * on its list of active formatting elements and is opened again
	 * around what follows, with its attributes: an <a> so reopened is
	 * closed by the next <a> (and a hidden element in it with it); one
	 * that sets a font size, inside a block of font size 0 (which
	 * reopens nothing at its start tag) shows the block's text; its
	 * end tag ends that */
	{ "<div style=\"display:none\"><u><a>h</u></div><span hidden><a>x",
	    "x", "\n\nh\n\n\n", HTML_HIDDEN },
	{ "<center><strong style=\"font-size:14px\"></center><pre style=\""
	    "font-size:0.5pt\">x</pre>", "\n\n\nx\n", "", 0 },
	{ "<a style=\"font-size:14px\" href=\"http://x/\">M<i style=\""
	    "font-size:0\">h</i>y</a><i style=\"font-size:0\">z</i>",
	    " http://x/ Mhy", "\nz\n", HTML_HIDDEN },
	{ "<dt><font style=\"visibility:visible\"><font class=c></font><dd "
	    "style=\"visibility:collapse\">x</dd>", "\n\nx\n", "", 0 },
	/* the hidden attribute of an SVG or MathML element hides nothing */
	{ "<svg hidden><text>a</text></svg><math><mi hidden>b</mi></math>"
	    "<svg/><i hidden>c</i>", "ab", "\nc\n", HTML_HIDDEN },
};

START_TEST(html_hidden)
{
	struct buf b = BUF_INIT(1000), h = BUF_INIT(1000);
	int r;

	r = html_to_text((const unsigned char *)hidden_cases[_i].in,
	    strlen(hidden_cases[_i].in), &b, &h);
	ck_assert_int_eq(r, hidden_cases[_i].r);
	ck_assert_str_eq(buf_str(&b), hidden_cases[_i].out);
	ck_assert_str_eq(buf_str(&h), hidden_cases[_i].hid);
	/* without a hidden buffer, everything is text, as before */
	buf_reset(&b);
	ck_assert_int_eq(html_to_text((const unsigned char *)
	    hidden_cases[_i].in, strlen(hidden_cases[_i].in), &b, NULL), 0);
	buf_free(&b);
	buf_free(&h);
}
END_TEST

/* a full hidden buffer drops the rest of the hidden text, never the
 * shown text */
START_TEST(html_hidden_full)
{
	struct buf b = BUF_INIT(1000), h = BUF_INIT(4);
	int r;

	r = html_to_text((const unsigned char *)"a<span hidden>bcdefgh</span>"
	    "i<span hidden>jk</span>l", 52, &b, &h);
	ck_assert_int_eq(r, HTML_HIDDEN);
	ck_assert_str_eq(buf_str(&b), "ail");
	ck_assert_str_eq(buf_str(&h), "\nbcd");
	buf_free(&b);
	buf_free(&h);
}
END_TEST

/* a style of any length is read: one over a kilobyte that needed
 * decoding (a comment, a url(), a reference, an escape) hid nothing,
 * and a hidden word split a shown one */
START_TEST(html_hidden_long_style)
{
	/* what goes before and after the padding */
	static const char *const pads[][2] = { { "/*", "*/" },
	    { "background:url(http://x.example/", ")" },
	    { "font-family:&quot;", "&quot;" }, { "x:\\", "" },
	    /* each "'" newline pair three bytes to CSS: the most it grows */
	    { "x:", "" } };
	struct buf b = BUF_INIT(1u << 20), h = BUF_INIT(1u << 20);
	char *pad, *dec, *in;
	size_t i, k, len[] = { 1100, 100000 };

	for (k = 0; k < sizeof(len) / sizeof(len[0]); k++) {
		pad = xmalloc(len[k] + 1);
		dec = xmalloc(len[k] + 200);
		in = xmalloc(2 * len[k] + 400);
		ck_assert(pad != NULL && dec != NULL && in != NULL);
		for (i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
			size_t j;

			for (j = 0; j < len[k]; j++)
				pad[j] = i == 4 ? (j % 2 ? '\n' : '\'') : 'a';
			pad[len[k]] = '\0';
			snprintf(dec, len[k] + 200, "%s%s%s", pads[i][0], pad,
			    pads[i][1]);
			snprintf(in, 2 * len[k] + 400, "Micro<span style=\""
			    "display:none;%s\">zzz</span>soft", dec);
			buf_reset(&b);
			buf_reset(&h);
			ck_assert_int_eq(html_to_text((const unsigned char *)in,
			    strlen(in), &b, &h), HTML_HIDDEN);
			ck_assert_str_eq(buf_str(&b), "Microsoft");
			ck_assert_str_eq(buf_str(&h), "\nzzz\n");
			/* ... and a display it sets shows a hidden element */
			snprintf(in, 2 * len[k] + 400, "a<i hidden style=\"%s;"
			    "display:inline\">b</i>c", dec);
			buf_reset(&b);
			buf_reset(&h);
			ck_assert_int_eq(html_to_text((const unsigned char *)in,
			    strlen(in), &b, &h), 0);
			ck_assert_str_eq(buf_str(&b), "abc");
		}
		xfree(pad);
		xfree(dec);
		xfree(in);
	}
	buf_free(&b);
	buf_free(&h);
}
END_TEST

START_TEST(html_part)
{
	char *log = fixture_log("0014-html.eml");

	HAS(log, "T0 text/html utf-8: ");
	HASNT(log, "STYLEWORD");
	HASNT(log, "SCRIPTWORD");
	HASNT(log, "COMMENTWORD");
	HASNT(log, "<p>");
	HAS(log, "Hello &<world> \xc3\xa9t\xc3\xa9 \xc3\xa9\xe2\x98\xba");
	HAS(log, "first\n\nsecond");
	HAS(log, "Viagra");
	HAS(log, "http://spam.example.com/buy?x=1&y=2 click here");
	HAS(log, "http://img.example.com/p.gif");
	HAS(log, "cheap pills");
	HAS(log, "tooltip text");
	free(log);
}
END_TEST

/* --- limits ----------------------------------------------------------- */

/* a growing string for generated posts */
static void
add(struct buf *b, const char *s)
{
	ck_assert_int_eq(buf_adds(b, s), 0);
}

START_TEST(deep_nesting)
{
	struct buf m = BUF_INIT(10u * 1024 * 1024);
	char line[128], *log;
	double t;
	int i, rc;

	add(&m, "Subject: deep\n");
	for (i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "Content-Type: multipart/mixed; "
		    "boundary=b%d\n\n--b%d\n", i, i);
		add(&m, line);
	}
	add(&m, "Content-Type: text/plain\n\nvery deep text\n");
	for (i = 999; i >= 0; i--) {
		snprintf(line, sizeof(line), "--b%d--\n", i);
		add(&m, line);
	}
	t = now();
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_double_lt(now() - t, 1.0);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A20 depth-limit\n");
	HAS(log, "H20 Content-Type: multipart/mixed; boundary=b20\n");
	HASNT(log, "H21 ");
	HASNT(log, "very deep text");
	free(log);
	/* a caller may allow the whole depth (the stack copes) */
	{
		struct mail_limits lim;

		mail_limits_default(&lim);
		lim.max_depth = 100000;
		lim.max_parts = 100000;
		log = walk_log(m.data, m.len, &lim, &rc);
		ck_assert_int_eq(rc, 0);
		HAS(log, "T1000 text/plain : very deep text\n");
		HASNT(log, "depth-limit");
		free(log);
	}
	/* message/rfc822 nesting counts too */
	buf_reset(&m);
	for (i = 0; i < 1000; i++)
		add(&m, "Content-Type: message/rfc822\n\n");
	add(&m, "\nbottom\n");
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A20 depth-limit\n");
	free(log);
	buf_free(&m);
}
END_TEST

START_TEST(many_parts)
{
	struct buf m = BUF_INIT(10u * 1024 * 1024);
	char line[128], *log;
	double t;
	int i, rc;

	add(&m, "Subject: parts\nContent-Type: multipart/mixed; boundary=p\n\n");
	for (i = 0; i < 10000; i++) {
		snprintf(line, sizeof(line), "--p\nContent-Type: text/plain\n"
		    "\npart %d\n", i);
		add(&m, line);
	}
	add(&m, "--p--\n");
	t = now();
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_double_lt(now() - t, 1.0);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A1 part-limit\n");
	HAS(log, ": part 499\n");
	HASNT(log, ": part 500\n");
	ck_assert_int_eq(count(log, "\nT1 "), 500);
	free(log);
	buf_free(&m);
}
END_TEST

START_TEST(huge_header_line)
{
	struct buf m = BUF_INIT(4u * 1024 * 1024), v = BUF_INIT(1u << 21);
	struct mail_limits lim;
	char *log, *p;
	double t;
	int rc;

	add(&m, "Subject: ");
	while (m.len < (1u << 20))
		add(&m, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	add(&m, "\nX-After: yes\n\nbody\n");
	mail_limits_default(&lim);
	lim.max_scan = 2u << 20;
	t = now();
	log = walk_log(m.data, m.len, &lim, &rc);
	ck_assert_double_lt(now() - t, 1.0);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A0 header-truncated\n");
	p = strstr(log, "H0 Subject: ");
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_le(strcspn(p + 12, "\n"), lim.max_field);
	ck_assert_uint_ge(strcspn(p + 12, "\n"), lim.max_field - 10);
	HAS(log, "T0 text/plain : body");
	free(log);
	ck_assert_int_eq(mail_header(m.data, m.len, "x-after", &v), 1);
	ck_assert_str_eq(buf_str(&v), "yes");
	buf_free(&v);
	buf_free(&m);
}
END_TEST

START_TEST(huge_boundary)
{
	struct buf m = BUF_INIT(4u * 1024 * 1024), bnd = BUF_INIT(1u << 20);
	char *log;
	double t;
	int rc;

	while (bnd.len < 100000)
		add(&bnd, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB");
	add(&m, "Content-Type: multipart/mixed; boundary=\"");
	add(&m, buf_str(&bnd));
	add(&m, "\"\n\n--");
	add(&m, buf_str(&bnd));
	add(&m, "\nContent-Type: text/plain\n\nhuge boundary text\n--");
	add(&m, buf_str(&bnd));
	add(&m, "--\n");
	t = now();
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_double_lt(now() - t, 1.0);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A0 boundary-too-long\n");
	HAS(log, "T1 text/plain : huge boundary text\n");
	free(log);
	buf_free(&bnd);
	buf_free(&m);
}
END_TEST

START_TEST(field_count_and_header_bytes)
{
	struct buf m = BUF_INIT(4u * 1024 * 1024);
	struct mail_limits lim;
	char *log;
	int i, rc;

	for (i = 0; i < 3000; i++)
		add(&m, "X-Many: a field\n");
	add(&m, "\nbody\n");
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A0 header-truncated\n");
	ck_assert_int_eq(count(log, "H0 X-Many"), 1000);
	HAS(log, "T0 text/plain : body");
	free(log);
	mail_limits_default(&lim);
	lim.max_header = 100;
	log = walk_log(m.data, m.len, &lim, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A0 header-truncated\n");
	ck_assert_int_le(count(log, "H0 X-Many"), 7);
	HAS(log, "T0 text/plain : body");
	free(log);
	buf_free(&m);
}
END_TEST

START_TEST(scan_and_decoded_limits)
{
	struct buf m = BUF_INIT(32u * 1024 * 1024);
	struct mail_limits lim;
	char *log, *p;
	double t;
	int rc;

	add(&m, "Content-Type: multipart/mixed; boundary=q\n\n--q\n"
	    "Content-Type: text/plain\n\n");
	while (m.len < 20u * 1024 * 1024)
		add(&m, "a line of text that goes on and on and on and on\n");
	add(&m, "--q--\n");
	t = now();
	log = walk_log(m.data, m.len, NULL, &rc);
	ck_assert_double_lt(now() - t, 1.0);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A0 scan-truncated\n");
	HAS(log, "A0 boundary-missing\n");
	p = strstr(log, "T1 text/plain : ");
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_lt(strlen(p), LG_MAX_SCAN_BYTES);
	free(log);

	mail_limits_default(&lim);
	lim.max_decoded = 100;
	log = walk_log(m.data, m.len, &lim, &rc);
	ck_assert_int_eq(rc, 0);
	HAS(log, "A1 decoded-truncated\n");
	p = strstr(log, "T1 text/plain : ");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(strstr(p, "\nA0 "));
	ck_assert_uint_eq((size_t)(strstr(p, "\nA0 ") - (p + 16)), 100);
	free(log);
	buf_free(&m);
}
END_TEST

/* the callback can stop the walk */
static int
stop_cb(const struct mail_event *ev, void *ctx)
{
	int *n = ctx;

	(void)ev;
	return ++*n >= 2 ? -1 : 0;
}

START_TEST(callback_stops)
{
	unsigned char *m;
	size_t n;
	int calls = 0;

	m = fixture("0005-nested-multipart.eml", &n);
	ck_assert_int_eq(mail_walk(m, n, NULL, stop_cb, &calls), -1);
	ck_assert_int_eq(calls, 2);
	free(m);
}
END_TEST

/* --- hostile input ---------------------------------------------------- */

/* every .eml under tests/data/mail, sorted (filled by load_fixtures()) */
static char **fixtures;
static int nfixtures;

static int
is_eml(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".eml") == 0;
}

/* list the fixtures, so each new one is mutated and starved too */
static int
load_fixtures(void)
{
	const char *top = getenv("top_srcdir");
	char dir[4096];
	struct dirent **ents;
	int i, n;

	snprintf(dir, sizeof(dir), "%s/tests/data/mail", top ? top : "..");
	if ((n = scandir(dir, &ents, is_eml, alphasort)) < 0) {
		fprintf(stderr, "cannot list %s\n", dir);
		return -1;
	}
	fixtures = calloc((size_t)n + 1, sizeof(*fixtures));
	if (fixtures == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		fixtures[i] = strdup(ents[i]->d_name);
		free(ents[i]);
		if (fixtures[i] == NULL)
			return -1;
	}
	free(ents);
	nfixtures = n;
	return 0;
}

/* touch every byte of every event, checking the NUL terminator */
static int
touch_cb(const struct mail_event *ev, void *ctx)
{
	unsigned long *sum = ctx;
	size_t i;

	for (i = 0; i < ev->len; i++)
		*sum += ev->data[i];
	*sum += strlen(ev->name) + strlen(ev->ctype) + strlen(ev->charset) +
	    strlen(ev->filename);
	return ev->data[ev->len] == 0 ? 0 : -1;
}

static unsigned long rng = 12345;

/* a fixed-seed pseudo-random number */
static unsigned long
rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned long)(rng >> 33);
}

START_TEST(mutations)
{
	static const char *const bits[] = { "--", "\n", "\r\n", "=?", "?=",
	    "=", "<", "&#", "boundary=", "multipart/mixed", "\n--b\n", ";",
	    "\"", "*0*=", "'", "%", "(", "\n\n", "Content-Type: ",
	    "message/rfc822", "base64", "\xff", "\xc3", "\x00" };
	unsigned char *m, *mut;
	size_t n, k;
	unsigned long sum = 0;
	int round;

	m = fixture(fixtures[_i], &n);
	mut = malloc(n * 2 + 64);
	ck_assert_ptr_nonnull(mut);
	for (round = 0; round < 250; round++) {
		size_t mn = n, edits = 1 + rnd() % 8;

		memcpy(mut, m, n);
		for (k = 0; k < edits && mn > 0; k++) {
			size_t at = rnd() % mn, bl;
			const char *b;

			switch (rnd() % 5) {
			case 0:		/* flip a byte */
				mut[at] = (unsigned char)rnd();
				break;
			case 1:		/* cut the post */
				mn = at;
				break;
			case 2:		/* delete a run */
				bl = rnd() % 16;
				if (bl > mn - at)
					bl = mn - at;
				memmove(mut + at, mut + at + bl, mn - at - bl);
				mn -= bl;
				break;
			default:	/* insert an interesting piece */
				b = bits[rnd() % (sizeof(bits) /
				    sizeof(bits[0]))];
				bl = strlen(b) ? strlen(b) : 1;
				if (mn + bl > n * 2 + 64)
					break;
				memmove(mut + at + bl, mut + at, mn - at);
				memcpy(mut + at, b, bl);
				mn += bl;
				break;
			}
		}
		ck_assert_int_eq(mail_walk(mut, mn, NULL, touch_cb, &sum), 0);
		/* small limits take other paths */
		{
			struct mail_limits lim;

			mail_limits_default(&lim);
			lim.max_header = 1 + rnd() % 200;
			lim.max_field = 1 + rnd() % 50;
			lim.max_fields = rnd() % 10;
			lim.max_boundary = 1 + rnd() % 5;
			lim.max_depth = rnd() % 4;
			lim.max_parts = rnd() % 5;
			lim.max_decoded = rnd() % 100;
			lim.max_scan = rnd() % (mn + 1);
			ck_assert_int_eq(mail_walk(mut, mn, &lim, touch_cb,
			    &sum), 0);
		}
		{
			struct buf v = BUF_INIT(100);

			ck_assert_int_ge(mail_header(mut, mn, "subject", &v), 0);
			ck_assert_uint_le(mail_body_offset(mut, mn), mn);
			buf_free(&v);
		}
	}
	free(mut);
	free(m);
}
END_TEST

/* random bytes through every decoder */
START_TEST(decoders_random)
{
	unsigned char in[512];
	struct buf b = BUF_INIT(1u << 16), h = BUF_INIT(1u << 16);
	int round, r;
	size_t i, n;

	for (round = 0; round < 2000; round++) {
		n = rnd() % sizeof(in);
		for (i = 0; i < n; i++)
			in[i] = round & 1 ? (unsigned char)rnd() :
			    (unsigned char)"<>&#;=?QBq\"' \n-abx09"[rnd() % 20];
		buf_reset(&b);
		ck_assert_int_ge(b64_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(qp_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(uu_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(rfc2047_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_eq(html_to_text(in, n, &b, NULL), 0);
		buf_reset(&b);
		buf_reset(&h);
		r = html_to_text(in, n, &b, &h);
		ck_assert_int_ge(r, 0);
		ck_assert_int_eq(r & HTML_CUT, 0);
		buf_reset(&b);
		ck_assert_int_eq(enriched_to_text(in, n, round & 2, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(charset_to_utf8(round % 3 ? "shift_jis" :
		    "utf-7", in, n, &b), 0);
	}
	buf_free(&b);
	buf_free(&h);
}
END_TEST

/* random bytes through every decoder into a tiny buffer: a full buffer
 * cuts (between characters for text) and is said, never a failure */
START_TEST(decoders_cut)
{
	unsigned char in[512];
	struct buf b = BUF_INIT(7), h = BUF_INIT(5);
	int round, r;
	size_t i, n;

	for (round = 0; round < 2000; round++) {
		n = rnd() % sizeof(in);
		for (i = 0; i < n; i++)
			in[i] = round & 1 ? (unsigned char)rnd() :
			    (unsigned char)"<>&#;=?QBq\"' \n-abx09"[rnd() % 20];
		buf_reset(&b);
		ck_assert_int_ge(b64_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(qp_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(uu_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(rfc2047_decode(in, n, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(html_to_text(in, n, &b, NULL), 0);
		buf_reset(&b);
		buf_reset(&h);
		ck_assert_int_ge(html_to_text(in, n, &b, &h), 0);
		ck_assert_uint_le(h.len, 5);
		buf_reset(&b);
		ck_assert_int_ge(enriched_to_text(in, n, round & 2, &b), 0);
		buf_reset(&b);
		ck_assert_int_ge(charset_to_utf8(round % 3 ? "tscii" :
		    "utf-7", in, n, &b), 0);
		ck_assert_uint_le(b.len, 7);
	}
	buf_reset(&b);
	r = b64_decode((const unsigned char *)"QUJDREVGR0hJ", 12, &b);
	ck_assert_int_eq(r, B64_CUT);
	ck_assert_str_eq(buf_str(&b), "ABC");
	buf_reset(&b);
	r = qp_decode((const unsigned char *)"abc=3Ddefgh", 11, &b);
	ck_assert_int_eq(r, QP_CUT);
	ck_assert_str_eq(buf_str(&b), "abc=d");
	buf_reset(&b);
	r = rfc2047_decode((const unsigned char *)"=?utf-8?q?h=C3=A9llo_w?= x",
	    26, &b);
	ck_assert_int_eq(r, RFC2047_CUT);
	ck_assert_str_eq(buf_str(&b), "h\xc3\xa9llo ");
	buf_reset(&b);
	r = html_to_text((const unsigned char *)"<p>h&eacute;llo w</p>", 21,
	    &b, NULL);
	ck_assert_int_eq(r, HTML_CUT);
	ck_assert_str_eq(buf_str(&b), "\nh\xc3\xa9llo");
	buf_free(&b);
	buf_free(&h);
}
END_TEST

/* inputs the fuzzer found crashes with (each one a named fixture) */
static const char *const crashers[] = {
	"0017-fuzz-empty-2231-segment.eml",
};

START_TEST(fuzz_regressions)
{
	struct mail_limits lim;
	unsigned char *m;
	unsigned long sum = 0;
	size_t n;

	m = fixture(crashers[_i], &n);
	ck_assert_int_eq(mail_walk(m, n, NULL, touch_cb, &sum), 0);
	mail_limits_default(&lim);
	lim.max_header = 300;
	lim.max_fields = 8;
	lim.max_field = 40;
	lim.max_boundary = 6;
	lim.max_depth = 3;
	lim.max_parts = 6;
	lim.max_decoded = 200;
	lim.max_scan = n / 2 + 1;
	ck_assert_int_eq(mail_walk(m, n, &lim, touch_cb, &sum), 0);
	free(m);
}
END_TEST

/* fail every allocation in turn: 0 or -1, never a crash or a leak */
START_TEST(alloc_failure)
{
	unsigned char *m;
	size_t n;
	unsigned long f, sum = 0;
	int rc, failed = 0;

	m = fixture(fixtures[_i], &n);
	for (f = 1; f < 10000; f++) {
		xalloc_fail_at(f);
		rc = mail_walk(m, n, NULL, touch_cb, &sum);
		ck_assert_msg(rc == 0 || rc == -1, "rc %d at %lu", rc, f);
		if (rc == -1)
			failed++;
		if (rc == 0 && xalloc_count() < f)
			break;		/* the n-th allocation never came */
	}
	xalloc_fail_at(0);
	ck_assert_int_gt(failed, 0);
	ck_assert_int_eq(mail_walk(m, n, NULL, touch_cb, &sum), 0);
	free(m);
}
END_TEST

static Suite *
mail_suite(void)
{
	Suite *s = suite_create("mail");
	TCase *tc;
	int nfix = nfixtures;

	tc = tcase_create("folding");
	tcase_add_test(tc, folding);
	tcase_add_test(tc, folded_boundary);
	suite_add_tcase(s, tc);
	tc = tcase_create("duplicates");
	tcase_add_test(tc, duplicates);
	suite_add_tcase(s, tc);
	tc = tcase_create("newlines");
	tcase_add_test(tc, newlines);
	tcase_add_test(tc, bare_cr_lines);
	suite_add_tcase(s, tc);
	tc = tcase_create("no_blank_line");
	tcase_add_test(tc, no_blank_line);
	tcase_add_test(tc, mbox_from_line);
	tcase_add_test(tc, boundary_no_blank);
	suite_add_tcase(s, tc);
	tc = tcase_create("nested_multipart");
	tcase_add_test(tc, nested_multipart);
	tcase_add_test(tc, delimiter_prefix);
	tcase_add_test(tc, digest);
	tcase_add_test(tc, ctype_params);
	suite_add_tcase(s, tc);
	tc = tcase_create("message_rfc822");
	tcase_add_test(tc, message_rfc822);
	tcase_add_test(tc, rfc822_mbox_from);
	tcase_add_test(tc, rfc822_encoded);
	suite_add_tcase(s, tc);
	tc = tcase_create("missing_boundary");
	tcase_add_test(tc, missing_boundary);
	tcase_add_test(tc, multipart_without_boundary);
	tcase_add_test(tc, boundary_never_found);
	tcase_add_test(tc, duplicate_content_type);
	suite_add_tcase(s, tc);
	tc = tcase_create("preamble_epilogue");
	tcase_add_test(tc, preamble_epilogue);
	suite_add_tcase(s, tc);
	tc = tcase_create("base64");
	tcase_add_loop_test(tc, base64_table, 0,
	    (int)(sizeof(b64_cases) / sizeof(b64_cases[0])));
	tcase_add_test(tc, base64_part);
	tcase_add_test(tc, unknown_encoding);
	suite_add_tcase(s, tc);
	tc = tcase_create("quoted_printable");
	tcase_add_loop_test(tc, qp_table, 0,
	    (int)(sizeof(qp_cases) / sizeof(qp_cases[0])));
	tcase_add_test(tc, qp_part);
	suite_add_tcase(s, tc);
	tc = tcase_create("rfc2047");
	tcase_add_loop_test(tc, rfc2047_table, 0,
	    (int)(sizeof(ew_cases) / sizeof(ew_cases[0])));
	tcase_add_test(tc, rfc2047_headers);
	suite_add_tcase(s, tc);
	tc = tcase_create("rfc2231");
	tcase_add_test(tc, rfc2231_params);
	tcase_add_loop_test(tc, param_table, 0,
	    (int)(sizeof(param_cases) / sizeof(param_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("charset");
	tcase_add_loop_test(tc, charset_table, 0,
	    (int)(sizeof(cs_cases) / sizeof(cs_cases[0])));
	tcase_add_test(tc, charset_parts);
	tcase_add_test(tc, charset_cache);
	tcase_add_loop_test(tc, charset_lies_table, 0,
	    (int)(sizeof(lie_cases) / sizeof(lie_cases[0])));
	tcase_add_test(tc, charset_lies_parts);
	tcase_add_test(tc, charset_lies_time);
	tcase_add_loop_test(tc, charset_bom, 0,
	    (int)(sizeof(bom_cases) / sizeof(bom_cases[0])));
	tcase_add_test(tc, charset_bom_part);
	tcase_add_loop_test(tc, html_meta_unicode, 0,
	    (int)(sizeof(meta_cases) / sizeof(meta_cases[0])));
	tcase_add_test(tc, html_meta_unicode_part);
	suite_add_tcase(s, tc);
	tc = tcase_create("enriched");
	tcase_add_loop_test(tc, enriched_table, 0,
	    (int)(sizeof(enriched_cases) / sizeof(enriched_cases[0])));
	tcase_add_test(tc, enriched_parts);
	suite_add_tcase(s, tc);
	tc = tcase_create("uuencode");
	tcase_add_test(tc, uuencode_parts);
	tcase_add_loop_test(tc, uu_table, 0,
	    (int)(sizeof(uu_cases) / sizeof(uu_cases[0])));
	tcase_add_test(tc, uu_find_blocks);
	suite_add_tcase(s, tc);
	tc = tcase_create("html");
	tcase_add_loop_test(tc, html_table, 0,
	    (int)(sizeof(html_cases) / sizeof(html_cases[0])));
	tcase_add_loop_test(tc, html_hidden, 0,
	    sizeof(hidden_cases) / sizeof(hidden_cases[0]));
	tcase_add_test(tc, html_hidden_full);
	tcase_add_test(tc, html_hidden_long_style);
	tcase_add_test(tc, html_part);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, many_parts);
	tcase_add_test(tc, huge_header_line);
	tcase_add_test(tc, huge_boundary);
	tcase_add_test(tc, field_count_and_header_bytes);
	tcase_add_test(tc, scan_and_decoded_limits);
	tcase_add_test(tc, callback_stops);
	suite_add_tcase(s, tc);
	tc = tcase_create("robustness");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, mutations, 0, nfix);
	tcase_add_test(tc, decoders_random);
	tcase_add_test(tc, decoders_cut);
	tcase_add_loop_test(tc, fuzz_regressions, 0,
	    (int)(sizeof(crashers) / sizeof(crashers[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("alloc_failure");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, alloc_failure, 0, nfix);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	/* at least the 17 fixtures this suite was written with */
	if (load_fixtures() < 0 || nfixtures < 17) {
		fprintf(stderr, "check_mail: fixtures missing (%d found)\n",
		    nfixtures);
		return EXIT_FAILURE;
	}
	sr = srunner_create(mail_suite());

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	charset_cache_clear();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
