/*
 * check_sanitize.c - the one sanitizer (gate/util/sanitize.h): what it
 * masks, each encoding, cuts at character boundaries within maxchars
 * and the buffer's room, the fixed-array form, the store-time UTF-8
 * repair, and allocation failure
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/sanitize.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"

#define NL	SANITIZE_NO_LIMIT
#define U(s)	((const unsigned char *)(s))

/* a fresh output buffer per test (checked fixture) */
static struct buf out;

static void
setup(void)
{
	buf_init(&out, 4096);
}

static void
teardown(void)
{
	buf_free(&out);
}

/* s (n bytes) through the sanitizer into the fixture, as a C string */
static const char *
san(const char *s, size_t n, size_t maxchars, enum sanitize_enc enc,
    unsigned flags, int *rc_r)
{
	int rc;

	buf_reset(&out);
	rc = sanitize_buf(&out, s, n, maxchars, enc, flags);
	if (rc_r)
		*rc_r = rc;
	else
		ck_assert_int_eq(rc, 0);
	return buf_str(&out);
}

/* the whole of a C string, no limit */
#define S(s, enc)	san((s), strlen(s), NL, (enc), 0, NULL)

/* 1 when b's n bytes are all valid UTF-8 */
static int
valid_utf8(const unsigned char *b, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = utf8_len(b + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* --- what is masked, one row per class and range end ------------------ */

static const struct {
	const char *in;
	size_t n;		/* 0: strlen */
	const char *want;	/* SANITIZE_TEXT, one line */
} masks[] = {
	/* C0 controls, NUL inside, DEL */
	{ "a\x01z", 0, "a?z" },
	{ "\x1b[31mred", 0, "?[31mred" },
	{ "\x1b]0;title\x07", 0, "?]0;title?" },
	{ "a\0b", 3, "a?b" },
	{ "\x1f\x7f", 0, "??" },
	{ "\x7e", 0, "~" },
	/* whitespace controls on one line */
	{ "a\tb\nc\rd", 0, "a b c d" },
	/* raw C1 bytes: invalid UTF-8, one '?' each */
	{ "x\x80y", 0, "x?y" },
	{ "\x9b" "31m", 0, "?31m" },
	{ "\x85\x9f", 0, "??" },
	/* UTF-8 C1: one '?' per character */
	{ "\xc2\x80", 0, "?" },
	{ "\xc2\x9b" "31m", 0, "?31m" },
	{ "\xc2\x9f", 0, "?" },
	{ "\xc2\xa0|\xc3\xa9", 0, "\xc2\xa0|\xc3\xa9" },	/* NBSP, é pass */
	/* bidi and format controls, each range end, and the neighbours */
	{ "\xd8\x9c", 0, "?" },				/* U+061C ALM */
	{ "\xd8\x9b", 0, "\xd8\x9b" },			/* U+061B */
	{ "\xe2\x80\x8d", 0, "\xe2\x80\x8d" },		/* U+200D ZWJ */
	{ "\xe2\x80\x8e", 0, "?" },			/* U+200E LRM */
	{ "\xe2\x80\x8f", 0, "?" },			/* U+200F RLM */
	{ "\xe2\x80\x90", 0, "\xe2\x80\x90" },		/* U+2010 */
	{ "\xe2\x80\xa7", 0, "\xe2\x80\xa7" },		/* U+2027 */
	{ "\xe2\x80\xa8", 0, "?" },			/* U+2028 LS */
	{ "\xe2\x80\xa9", 0, "?" },			/* U+2029 PS */
	{ "\xe2\x80\xaa", 0, "?" },			/* U+202A LRE */
	{ "gpj.\xe2\x80\xaexe", 0, "gpj.?xe" },	/* U+202E RLO */
	{ "\xe2\x80\xaf", 0, "\xe2\x80\xaf" },		/* U+202F */
	{ "\xe2\x81\xa5", 0, "\xe2\x81\xa5" },		/* U+2065 */
	{ "\xe2\x81\xa6", 0, "?" },			/* U+2066 LRI */
	{ "\xe2\x81\xa9", 0, "?" },			/* U+2069 PDI */
	{ "\xe2\x81\xaa", 0, "\xe2\x81\xaa" },		/* U+206A */
	{ "\xef\xbb\xbf", 0, "?" },			/* U+FEFF */
	{ "\xef\xbb\xbe", 0, "\xef\xbb\xbe" },		/* U+FEFE */
	{ "\xf0\x9f\x98\x80", 0, "\xf0\x9f\x98\x80" },	/* U+1F600 */
	/* invalid UTF-8: one '?' per byte */
	{ "\xbf", 0, "?" },				/* lone continuation */
	{ "a\x80\x80z", 0, "a??z" },
	{ "\xc0\xaf", 0, "??" },			/* overlong '/' */
	{ "\xe0\x80\xaf", 0, "???" },			/* overlong, 3 bytes */
	{ "\xf0\x80\x80\xaf", 0, "????" },		/* overlong, 4 bytes */
	{ "\xed\xa0\x80", 0, "???" },			/* surrogate U+D800 */
	{ "\xed\xbf\xbf", 0, "???" },			/* surrogate U+DFFF */
	{ "\xe2\x82", 0, "??" },			/* truncated at the end */
	{ "\xe2\x82z", 0, "??z" },			/* truncated, then ASCII */
	{ "\xf0\x9f\x98", 0, "???" },
	{ "\xf4\x90\x80\x80", 0, "????" },		/* above U+10FFFF */
	{ "\xf5\x80\x80\x80", 0, "????" },
	{ "\xff\xfe", 0, "??" },
	{ "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf" },	/* U+10FFFF passes */
};

START_TEST(masked_classes)
{
	size_t n = masks[_i].n ? masks[_i].n : strlen(masks[_i].in);

	ck_assert_str_eq(san(masks[_i].in, n, NL, SANITIZE_TEXT, 0, NULL),
	    masks[_i].want);
}
END_TEST

START_TEST(masked_predicate)
{
	uint32_t cp;
	int want;

	for (cp = 0; cp <= 0x10ffff; cp++) {
		want = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
		    cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		    (cp >= 0x2028 && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
		ck_assert_int_eq(sanitize_masked(cp), want);
	}
}
END_TEST

START_TEST(empty_input)
{
	ck_assert_str_eq(san("", 0, NL, SANITIZE_TEXT, 0, NULL), "");
	ck_assert_uint_eq(out.len, 0);
	ck_assert_str_eq(san("", 0, NL, SANITIZE_JSON, 0, NULL), "\"\"");
	ck_assert_str_eq(san("", 0, NL, SANITIZE_HTML, 0, NULL), "");
	ck_assert_str_eq(san("", 0, 0, SANITIZE_LOG, 0, NULL), "");
	ck_assert_str_eq(san(NULL, 0, NL, SANITIZE_TEXT, 0, NULL), "");
}
END_TEST

START_TEST(nul_bytes)
{
	static const char in[] = "\0a\0\0b\0";

	ck_assert_str_eq(san(in, 6, NL, SANITIZE_TEXT, 0, NULL), "?a??b?");
	ck_assert_uint_eq(out.len, 6);
	ck_assert_str_eq(san(in, 6, NL, SANITIZE_JSON, 0, NULL),
	    "\"\\ufffda\\ufffd\\ufffdb\\ufffd\"");
}
END_TEST

/* --- the encodings --------------------------------------------------- */

START_TEST(text_keep_nl)
{
	ck_assert_str_eq(san("a\tb\r\nc\rd\n", 9, NL, SANITIZE_TEXT,
	    SANITIZE_KEEP_NL, NULL), "a\tb\ncd\n");
	/* other controls are still masked */
	ck_assert_str_eq(san("l1\n\x1b[2Jl2\x0b", 10, NL, SANITIZE_TEXT,
	    SANITIZE_KEEP_NL, NULL), "l1\n?[2Jl2?");
	/* a dropped CR counts no character */
	ck_assert_str_eq(san("ab\r\r\r\rc", 7, 3, SANITIZE_TEXT,
	    SANITIZE_KEEP_NL, NULL), "abc");
	/* U+2028 is no newline */
	ck_assert_str_eq(san("a\xe2\x80\xa8z", 5, NL, SANITIZE_TEXT,
	    SANITIZE_KEEP_NL, NULL), "a?z");
}
END_TEST

START_TEST(log_one_line)
{
	ck_assert_str_eq(S("say \"hi\" \\o/", SANITIZE_LOG), "say ?hi? ?o/");
	ck_assert_str_eq(san("a\nb\tc\r", 6, NL, SANITIZE_LOG, 0, NULL),
	    "a?b?c?");
	ck_assert_str_eq(san("a\nb\tc\r", 6, NL, SANITIZE_LOG,
	    SANITIZE_KEEP_NL, NULL), "a?b?c?");
	ck_assert_str_eq(S("\xc2\x9b\xe2\x80\xae\x9b", SANITIZE_LOG), "???");
	ck_assert_str_eq(S("caf\xc3\xa9", SANITIZE_LOG), "caf\xc3\xa9");
}
END_TEST

START_TEST(json_escapes)
{
	ck_assert_str_eq(S("plain", SANITIZE_JSON), "\"plain\"");
	ck_assert_str_eq(S("a\"b\\c/d", SANITIZE_JSON),
	    "\"a\\\"b\\\\c/d\"");
	ck_assert_str_eq(S("\x01\x1b\x7f", SANITIZE_JSON),
	    "\"\\ufffd\\ufffd\\ufffd\"");
	ck_assert_str_eq(S("\xc2\x9b|\x9b|\xe2\x80\xae|\xe2\x80\xa8",
	    SANITIZE_JSON), "\"\\ufffd|\\ufffd|\\ufffd|\\ufffd\"");
	ck_assert_str_eq(S("caf\xc3\xa9 \xf0\x9f\x98\x80", SANITIZE_JSON),
	    "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	ck_assert_str_eq(S("a\tb\nc", SANITIZE_JSON), "\"a b c\"");
	ck_assert_str_eq(san("a\tb\r\nc", 6, NL, SANITIZE_JSON,
	    SANITIZE_KEEP_NL, NULL), "\"a\\tb\\nc\"");
	ck_assert_str_eq(S("<&>'", SANITIZE_JSON), "\"<&>'\"");
}
END_TEST

START_TEST(html_escapes)
{
	int rc;

	ck_assert_str_eq(S("<a href=\"x\">'&'</a>", SANITIZE_HTML),
	    "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
	ck_assert_str_eq(S("\x1b\xc2\x9b\x9b\xe2\x81\xa6", SANITIZE_HTML),
	    "&#xfffd;&#xfffd;&#xfffd;&#xfffd;");
	ck_assert_str_eq(S("caf\xc3\xa9\\", SANITIZE_HTML),
	    "caf\xc3\xa9\\");
	ck_assert_str_eq(san("a\r\nb\tc", 6, NL, SANITIZE_HTML,
	    SANITIZE_KEEP_NL, NULL), "a\nb\tc");
	ck_assert_str_eq(S("a\nb", SANITIZE_HTML), "a b");
	/* an entity counts one character */
	ck_assert_str_eq(san("&&&&&", 5, 4, SANITIZE_HTML, 0, &rc),
	    "&amp;...");
	ck_assert_int_eq(rc, 1);
}
END_TEST

START_TEST(appends_after_existing)
{
	buf_reset(&out);
	ck_assert_int_eq(buf_adds(&out, "x="), 0);
	ck_assert_int_eq(sanitize_buf(&out, "\x1b!", 2, NL, SANITIZE_JSON, 0),
	    0);
	ck_assert_str_eq(buf_str(&out), "x=\"\\ufffd!\"");
}
END_TEST

/* --- cuts ------------------------------------------------------------ */

START_TEST(cut_by_chars)
{
	/* five two-byte characters */
	static const char e5[] = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
	int rc;

	ck_assert_str_eq(san(e5, 10, 5, SANITIZE_TEXT, 0, &rc), e5);
	ck_assert_int_eq(rc, 0);		/* exactly at the limit */
	ck_assert_str_eq(san(e5, 10, 4, SANITIZE_TEXT, 0, &rc),
	    "\xc3\xa9...");
	ck_assert_int_eq(rc, 1);
	ck_assert_str_eq(san(e5, 10, 3, SANITIZE_TEXT, 0, &rc), "...");
	ck_assert_int_eq(rc, 1);
	ck_assert_str_eq(san(e5, 10, 2, SANITIZE_TEXT, 0, &rc), "..");
	ck_assert_str_eq(san(e5, 10, 1, SANITIZE_TEXT, 0, &rc), ".");
	ck_assert_str_eq(san(e5, 10, 0, SANITIZE_TEXT, 0, &rc), "");
	ck_assert_int_eq(rc, 1);
	ck_assert_str_eq(san("", 0, 0, SANITIZE_TEXT, 0, &rc), "");
	ck_assert_int_eq(rc, 0);
	/* a masked character counts one, whatever its length */
	ck_assert_str_eq(san("\xe2\x80\xae" "abcdef", 9, 6, SANITIZE_TEXT, 0,
	    &rc), "?ab...");
	/* JSON: the quotes and escapes do not count, the string is closed */
	ck_assert_str_eq(san("\"\"\"\"\"", 5, 4, SANITIZE_JSON, 0, &rc),
	    "\"\\\"...\"");
	ck_assert_int_eq(rc, 1);
	/* four-byte characters */
	ck_assert_str_eq(san("\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
	    "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 20, 4,
	    SANITIZE_TEXT, 0, &rc), "\xf0\x9f\x98\x80...");
}
END_TEST

START_TEST(cut_by_room_exact_fit)
{
	struct buf b = BUF_INIT(6);

	/* six bytes fit in six */
	ck_assert_int_eq(sanitize_buf(&b, "\xc3\xa9\xc3\xa9\xc3\xa9", 6, NL,
	    SANITIZE_TEXT, 0), 0);
	ck_assert_str_eq(buf_str(&b), "\xc3\xa9\xc3\xa9\xc3\xa9");
	buf_reset(&b);
	/* eight do not: cut where the marker fits */
	ck_assert_int_eq(sanitize_buf(&b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	    8, NL, SANITIZE_TEXT, 0), 1);
	ck_assert_str_eq(buf_str(&b), "\xc3\xa9...");
	buf_free(&b);
}
END_TEST

START_TEST(no_room)
{
	struct buf b = BUF_INIT(6);

	ck_assert_int_eq(buf_adds(&b, "abcd"), 0);
	/* two bytes left: not enough for "..." */
	ck_assert_int_eq(sanitize_buf(&b, "xy", 2, NL, SANITIZE_TEXT, 0), -1);
	ck_assert_str_eq(buf_str(&b), "abcd");
	ck_assert_int_eq(sanitize_buf(&b, "", 0, NL, SANITIZE_JSON, 0), -1);
	ck_assert_uint_eq(b.len, 4);
	/* no marker needed when maxchars is 0 */
	ck_assert_int_eq(sanitize_buf(&b, "xy", 2, 0, SANITIZE_TEXT, 0), 1);
	ck_assert_str_eq(buf_str(&b), "abcd");
	buf_free(&b);
}
END_TEST

/*
 * For every buffer size from 0 to past the whole output and every
 * encoding: never past max, a JSON string closed, and what comes before
 * the marker is exactly the output for a prefix of the input that ends
 * between two characters (no half sequence, escape or entity), as long
 * as the room allows.
 */
START_TEST(cut_every_max)
{
	static const char in[] =
	    "\xc3\xa9\"<\x1b\xf0\x9f\x98\x80&\xe2\x80\xae'\\\x9b\xe4\xb8\xad"
	    "\xe6\x96\x87\xc2\x9bz";
	enum sanitize_enc enc = (enum sanitize_enc)_i;
	struct buf whole = BUF_INIT(4096), pre = BUF_INIT(4096), b;
	const char *q = enc == SANITIZE_JSON ? "\"" : "";
	size_t n = sizeof(in) - 1, max, body, j, k, ql = strlen(q);
	uint32_t cp;
	int rc, found;

	ck_assert_int_eq(sanitize_buf(&whole, in, n, NL, enc, 0), 0);
	for (max = 0; max <= whole.len + 2; max++) {
		buf_init(&b, max);
		rc = sanitize_buf(&b, in, n, NL, enc, 0);
		if (max < 3 + 2 * ql) {
			ck_assert_int_eq(rc, -1);
			ck_assert_uint_eq(b.len, 0);
			buf_free(&b);
			continue;
		}
		ck_assert_uint_le(b.len, max);
		ck_assert(valid_utf8(b.data, b.len));
		if (max >= whole.len) {
			ck_assert_int_eq(rc, 0);
			ck_assert_str_eq(buf_str(&b), buf_str(&whole));
			buf_free(&b);
			continue;
		}
		ck_assert_int_eq(rc, 1);
		ck_assert_uint_ge(b.len, 3 + 2 * ql);
		body = b.len - 3 - 2 * ql;
		ck_assert(memcmp(b.data, q, ql) == 0);
		ck_assert(memcmp(b.data + ql + body, "...", 3) == 0);
		ck_assert(memcmp(b.data + b.len - ql, q, ql) == 0);
		/* the body is the output of the input up to some character
		 * boundary j */
		found = 0;
		for (j = 0; j <= n && !found; j += k) {
			buf_reset(&pre);
			ck_assert_int_eq(sanitize_buf(&pre, in, j, NL, enc, 0),
			    0);
			found = pre.len == body + 2 * ql &&
			    memcmp(pre.data, b.data, ql + body) == 0;
			k = j < n ? utf8_decode(U(in) + j, n - j, &cp) : 1;
			if (k == 0)
				k = 1;
		}
		ck_assert_msg(found, "enc %d max %zu: cut inside a piece",
		    (int)enc, max);
		/* and as late as the room allows: the next piece (at most
		 * 8 bytes, "&#xfffd;") did not fit */
		ck_assert_uint_ge(b.len + 8, max);
		buf_free(&b);
	}
	buf_free(&pre);
	buf_free(&whole);
}
END_TEST

/* --- the fixed array ----------------------------------------------------- */

START_TEST(fixed_array)
{
	char a[8];

	ck_assert_str_eq(sanitize_str(a, sizeof(a), "a\x1b" "b", 3, NL,
	    SANITIZE_LOG, 0), "a?b");
	/* seven bytes of room: "abcd..." */
	ck_assert_str_eq(sanitize_str(a, sizeof(a), "abcdefghij", 10, NL,
	    SANITIZE_TEXT, 0), "abcd...");
	ck_assert_str_eq(sanitize_str(a, sizeof(a), "abcdefg", 7, NL,
	    SANITIZE_TEXT, 0), "abcdefg");
	ck_assert_str_eq(sanitize_str(a, sizeof(a), "\xe4\xb8\xad\xe6\x96\x87"
	    "x", 7, NL, SANITIZE_TEXT, 0), "\xe4\xb8\xad\xe6\x96\x87x");
	ck_assert_str_eq(sanitize_str(a, sizeof(a), "\xe4\xb8\xad\xe6\x96\x87"
	    "xy", 8, NL, SANITIZE_TEXT, 0), "\xe4\xb8\xad...");
	ck_assert_str_eq(sanitize_str(a, 3, "abc", 3, NL, SANITIZE_TEXT, 0),
	    "");
	ck_assert_str_eq(sanitize_str(a, 5, "", 0, NL, SANITIZE_JSON, 0), "");
	ck_assert_str_eq(sanitize_str(a, 6, "", 0, NL, SANITIZE_JSON, 0),
	    "\"\"");
	ck_assert_str_eq(sanitize_str(a, 6, "\"\"", 2, NL, SANITIZE_JSON, 0),
	    "\"...\"");
	a[0] = 'z';
	ck_assert_ptr_eq(sanitize_str(a, 0, "abc", 3, NL, SANITIZE_TEXT, 0),
	    a);
	ck_assert_int_eq(a[0], 'z');
}
END_TEST

/* --- storing: valid UTF-8, nothing masked ---------------------------------- */

START_TEST(utf8_repair)
{
	struct buf b = BUF_INIT(64), c = BUF_INIT(12);

	ck_assert_int_eq(sanitize_utf8(&b, "\x1b[31m\xe2\x80\xae", 8), 0);
	ck_assert_str_eq(buf_str(&b), "\x1b[31m\xe2\x80\xae");
	buf_reset(&b);
	ck_assert_int_eq(sanitize_utf8(&b, "a\x9b\0\xc0\xafz", 6), 0);
	ck_assert_str_eq(buf_str(&b),
	    "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
	ck_assert(valid_utf8(b.data, b.len));
	buf_reset(&b);
	ck_assert_int_eq(sanitize_utf8(&b, "", 0), 0);
	ck_assert_uint_eq(b.len, 0);
	/* cut at the last whole character below max, no marker */
	ck_assert_int_eq(sanitize_utf8(&c, "abcdefghij\xc3\xa9", 12), 0);
	buf_reset(&c);
	ck_assert_int_eq(sanitize_utf8(&c, "abcdefghijk\xc3\xa9", 13), 1);
	ck_assert_str_eq(buf_str(&c), "abcdefghijk");
	buf_reset(&c);
	ck_assert_int_eq(sanitize_utf8(&c, "abcdefghi\xff", 10), 0);
	ck_assert_uint_eq(c.len, 12);
	buf_reset(&c);
	ck_assert_int_eq(sanitize_utf8(&c, "abcdefghij\xff", 11), 1);
	ck_assert_str_eq(buf_str(&c), "abcdefghij");
	buf_free(&b);
	buf_free(&c);
}
END_TEST

/* --- out of memory ---------------------------------------------------------- */

/* fail each allocation in turn: -1 with b unchanged, or the whole */
START_TEST(alloc_failure)
{
	struct buf b, whole = BUF_INIT(1 << 20);
	char in[600], a[32];
	unsigned long n;
	size_t i;
	int rc, nfail = 0;

	for (i = 0; i < sizeof(in); i++)
		in[i] = "a\x1b\xc2\x9b\x9b\"z\xe2\x80\xae"[i % 10];
	ck_assert_int_eq(sanitize_buf(&whole, in, sizeof(in), NL,
	    SANITIZE_JSON, 0), 0);
	for (n = 1; n < 30; n++) {
		buf_init(&b, 1 << 20);
		xalloc_fail_at(n);
		rc = sanitize_buf(&b, in, sizeof(in), NL, SANITIZE_JSON, 0);
		xalloc_fail_at(0);
		if (rc < 0) {
			nfail++;
			ck_assert_uint_eq(b.len, 0);
			ck_assert_str_eq(buf_str(&b), "");
		} else
			ck_assert_str_eq(buf_str(&b), buf_str(&whole));
		buf_free(&b);
		buf_init(&b, 1 << 20);
		xalloc_fail_at(n);
		rc = sanitize_utf8(&b, in, sizeof(in));
		xalloc_fail_at(0);
		if (rc < 0) {
			nfail++;
			ck_assert_uint_eq(b.len, 0);
		} else
			ck_assert(valid_utf8(b.data, b.len));
		buf_free(&b);
	}
	ck_assert_int_gt(nfail, 0);
	/* the fixed array never allocates */
	xalloc_fail_at(1);
	ck_assert_str_eq(sanitize_str(a, sizeof(a), "a\x1b", 2, NL,
	    SANITIZE_LOG, 0), "a?");
	xalloc_fail_at(0);
	buf_free(&whole);
}
END_TEST

static Suite *
sanitize_suite(void)
{
	Suite *s = suite_create("sanitize");
	TCase *tc;

	tc = tcase_create("masking");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, masked_classes, 0,
	    (int)(sizeof(masks) / sizeof(masks[0])));
	tcase_add_test(tc, masked_predicate);
	tcase_add_test(tc, empty_input);
	tcase_add_test(tc, nul_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("encodings");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, text_keep_nl);
	tcase_add_test(tc, log_one_line);
	tcase_add_test(tc, json_escapes);
	tcase_add_test(tc, html_escapes);
	tcase_add_test(tc, appends_after_existing);
	suite_add_tcase(s, tc);

	tc = tcase_create("cuts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cut_by_chars);
	tcase_add_test(tc, cut_by_room_exact_fit);
	tcase_add_test(tc, no_room);
	tcase_add_loop_test(tc, cut_every_max, SANITIZE_TEXT,
	    SANITIZE_HTML + 1);
	tcase_add_test(tc, fixed_array);
	suite_add_tcase(s, tc);

	tc = tcase_create("store");
	tcase_add_test(tc, utf8_repair);
	tcase_add_test(tc, alloc_failure);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sanitize_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
