/*
 * charset.c - text in a declared charset to UTF-8, through iconv (and
 * windows-1252, the most common, by a table of its own)
 *
 * The declared charset is hostile and may lie.  A name iconv does not
 * know is read as UTF-8; a byte invalid in the charset becomes the
 * Latin-1 character of that byte.  Output beyond the buffer's max is
 * cut between characters (CS_CUT) and the rest of the input dropped.
 * So conversion never fails on content: only when memory runs out
 * (-1).  iconv handles are kept in a small cache by charset name, one
 * per thread (the trainer tokenizes in worker threads), closed when the
 * thread ends.
 */
#include "config.h"

#include <errno.h>
#include <iconv.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "gate/mail/charset.h"
#include "gate/util/buf.h"
#include "gate/util/utf8.h"

/* longest charset name looked up; real names are under 30 bytes */
#define CS_NAME_MAX	40
/* iconv handles kept open: at least a post's budget, so that no
 * charset a post has used is evicted while the post is read (its
 * tokens would then depend on what the thread read before) */
#define CS_CACHE	64

#if CS_CACHE < CS_OPEN_BUDGET
#error "the cache must hold a post's budget of charsets"
#endif

struct cs_slot {
	char name[CS_NAME_MAX + 1];	/* normalized name; "" = free */
	iconv_t cd;			/* (iconv_t)-1: unknown charset */
	unsigned long used;
};

static __thread struct cs_slot cache[CS_CACHE];
/* the handle of windows-1252, converted by table (cs_cp1252) */
#define CS_CP1252	((iconv_t)-2)
static __thread unsigned long tick;
static __thread unsigned opens_left = UINT_MAX;	/* see charset_budget() */
/* the tick when the budget was set: a slot used since is the post's */
static __thread unsigned long budget_tick;

/*
 * A thread's handles are closed when it ends: listgate web answers each
 * connection in a thread of its own, which converts the headers and the
 * preview of the posts it shows and ends with the connection, and each
 * such thread's handles (and glibc's state of each converter) were left
 * behind, over 100 KiB a request for a post of many charsets, until the
 * server ran out of memory.  The key's value is set once a thread opens
 * a handle: its destructor runs only for those.
 */
static pthread_once_t end_once = PTHREAD_ONCE_INIT;
static pthread_key_t end_key;
static int end_key_ok;
static __thread int end_armed;

static void
cs_thread_end(void *arg)
{
	(void)arg;
	charset_cache_clear();
}

static void
cs_end_key(void)
{
	end_key_ok = pthread_key_create(&end_key, cs_thread_end) == 0;
}

/* this thread's handles to be closed when it ends */
static void
cs_arm_end(void)
{
	if (end_armed)
		return;
	pthread_once(&end_once, cs_end_key);
	if (end_key_ok && pthread_setspecific(end_key, &end_armed) == 0)
		end_armed = 1;
}

/* names iconv spells otherwise, or supersets worth using instead */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "iso-8859-1", "CP1252" },	/* as browsers do (WHATWG) */
	{ "iso8859-1", "CP1252" },
	{ "iso_8859-1", "CP1252" },
	{ "latin1", "CP1252" },
	{ "l1", "CP1252" },
	{ "ks_c_5601-1987", "CP949" },
	{ "ks_c_5601", "CP949" },
	{ "ksc5601", "CP949" },
	{ "ksc_5601", "CP949" },
	{ "euc-kr", "CP949" },
	{ "gb2312", "GB18030" },
	{ "gbk", "GB18030" },
	{ "x-gbk", "GB18030" },
	{ "cp936", "GB18030" },
	{ "shift_jis", "CP932" },
	{ "shift-jis", "CP932" },
	{ "sjis", "CP932" },
	{ "x-sjis", "CP932" },
	{ "ms_kanji", "CP932" },
	{ "windows-31j", "CP932" },
	{ "big5", "BIG5-HKSCS" },
	{ "unicode-1-1-utf-7", "UTF-7" },
	{ "x-mac-roman", "MACINTOSH" },
	{ "iso-8859-8-i", "ISO-8859-8" },
	{ "windows-874", "CP874" },
	{ "tis-620", "CP874" },
};

/* names read as UTF-8 (with Latin-1 fallback) without iconv */
static const char *const utf8_names[] = {
	"", "utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968",
	"us_ascii", "iso646-us", "7bit", "8bit", "default", "default_charset",
	"unknown-8bit", "x-unknown", "unknown", "x-user-defined",
};

/* UTF-8 kept, invalid bytes as Latin-1 */
int
charset_utf8_latin1(const unsigned char *in, size_t n, struct buf *out)
{
	size_t i = 0, run = 0, k;
	int bad = 0, r;

	while (i < n) {
		if (in[i] < 0x80) {
			i += utf8_ascii_run(in + i, n - i);
			continue;
		}
		if ((k = utf8_len(in + i, n - i)) > 0) {
			i += k;
			continue;
		}
		/* flush the valid run, then the byte as Latin-1 */
		bad = CS_INVALID;
		if ((r = utf8_add_cut(out, in + run, i - run)) != 0 ||
		    (r = utf8_put_cut(out, in[i])) != 0)
			return r < 0 ? -1 : bad | CS_CUT;
		run = ++i;
	}
	if ((r = utf8_add_cut(out, in + run, n - run)) != 0)
		return r < 0 ? -1 : bad | CS_CUT;
	return bad;
}

/*
 * Windows-1252, which every ISO-8859-1 label means (the aliases above),
 * without iconv: it was a twentieth of training.  The output is
 * iconv's to the byte: bytes 0x80-0x9f through the table, 0 where
 * windows-1252 has no character (iconv refuses those five, so they pass
 * as Latin-1 and set CS_INVALID, as in cs_iconv); 0xa0-0xff are
 * Latin-1.  tests/check_charset.c compares the two on every byte and
 * at every cut.
 */
static const uint16_t cp1252_c1[32] = {
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178
};

/* the names read as windows-1252 without iconv */
static const char *const cp1252_names[] = {
	"iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1",
	"windows-1252", "cp1252",
};

static int
is_cp1252(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cp1252_names) / sizeof(cp1252_names[0]); i++)
		if (strcmp(cp1252_names[i], name) == 0)
			return 1;
	return 0;
}

/* windows-1252 to UTF-8, as cs_iconv: 0, or CS_INVALID and CS_CUT
 * bits, or -1 out of memory */
static int
cs_cp1252(const unsigned char *in, size_t n, struct buf *out)
{
	size_t i = 0, run;
	unsigned long cp;
	int bad = 0, r;

	/* the text is there and ends in a NUL, even with nothing in it or
	 * nothing that fits (the callers' events always have data) */
	if (buf_add(out, "", 0) < 0)
		return -1;
	while (i < n) {
		if (in[i] < 0x80) {
			run = i;
			i += utf8_ascii_run(in + i, n - i);
			if ((r = utf8_add_cut(out, in + run, i - run)) != 0)
				return r < 0 ? -1 : bad | CS_CUT;
			continue;
		}
		cp = in[i] >= 0xa0 ? in[i] : cp1252_c1[in[i] - 0x80];
		if (cp == 0) {
			bad = CS_INVALID;
			cp = in[i];
		}
		if ((r = utf8_put_cut(out, cp)) != 0)
			return r < 0 ? -1 : bad | CS_CUT;
		i++;
	}
	return bad;
}

/* normalize a charset name into dst: 0 ok, -1 not a plausible name */
static int
cs_normalize(const char *cs, size_t n, char *dst)
{
	size_t i, k = 0;

	while (n > 0 && (*cs == ' ' || *cs == '\t' || *cs == '"' ||
	    *cs == '\''))
		cs++, n--;
	while (n > 0 && (cs[n - 1] == ' ' || cs[n - 1] == '\t' ||
	    cs[n - 1] == '"' || cs[n - 1] == '\''))
		n--;
	if (n > CS_NAME_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)cs[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == ':'))
			return -1;	/* no '/' suffixes into iconv */
		dst[k++] = (char)c;
	}
	dst[k] = 0;
	return 0;
}

/* the cached iconv handle for a normalized name, (iconv_t)-1 if unknown */
static iconv_t
cs_open(const char *name)
{
	struct cs_slot *s, *victim = &cache[0];
	const char *target = name;
	size_t i;

	/* the budget counts the charsets the post names, each once,
	 * whether cached or not: what it leaves unread depends on the post
	 * alone, not on what this thread converted before */
	for (i = 0; i < CS_CACHE; i++) {
		s = &cache[i];
		if (s->name[0] && strcmp(s->name, name) == 0) {
			if (opens_left != UINT_MAX && s->used <= budget_tick) {
				if (opens_left == 0)
					return (iconv_t)-1;
				opens_left--;
			}
			s->used = ++tick;
			return s->cd;
		}
		if (s->used < victim->used)
			victim = s;
	}
	if (opens_left == 0)
		return (iconv_t)-1;	/* read as UTF-8 from now on */
	if (opens_left != UINT_MAX)
		opens_left--;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].alias, name) == 0) {
			target = aliases[i].name;
			break;
		}
	if (victim->name[0] && victim->cd != (iconv_t)-1 &&
	    victim->cd != CS_CP1252)
		iconv_close(victim->cd);
	/* windows-1252 takes its slot and its share of the budget like
	 * any charset, so that what the budget leaves unread stays the
	 * same; it is converted by table, never opened */
	if (!is_cp1252(name))
		cs_arm_end();
	victim->cd = is_cp1252(name) ? CS_CP1252 : iconv_open("UTF-8",
	    target);
	memcpy(victim->name, name, strlen(name) + 1);
	victim->used = ++tick;
	return victim->cd;
}

/*
 * Append what iconv wrote, checked: glibc writes code points above
 * U+10FFFF (from UCS-4 input) as 4- to 6-byte sequences that are not
 * UTF-8.  Each run of bytes that is not UTF-8 becomes one U+FFFD and
 * sets *bad.  0, 1 cut (out full), -1 out of memory.
 */
static int
put_checked(struct buf *out, const unsigned char *p, size_t n, int *bad)
{
	size_t i = 0, run = 0, k;
	int r;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_len(p + i, n - i)) > 0) {
			i += k;
			continue;
		}
		if ((r = utf8_add_cut(out, p + run, i - run)) != 0 ||
		    (r = utf8_put_cut(out, 0xFFFD)) != 0)
			return r;
		*bad = CS_INVALID;
		while (i < n && p[i] >= 0x80 && utf8_len(p + i, n - i) == 0)
			i++;
		run = i;
	}
	return utf8_add_cut(out, p + run, n - run);
}

/* iconv the input, each byte it refuses as Latin-1: 0, or CS_INVALID
 * and CS_CUT bits, or -1 out of memory.  probe: stop at the first
 * invalid byte (CS_INVALID; what was read so far is in out), for a
 * reading that is kept only when it is clean */
static int
cs_iconv(iconv_t cd, const unsigned char *in, size_t n, struct buf *out,
    int probe)
{
	char tmp[4096], *ip = (char *)(uintptr_t)in, *op;
	size_t left = n, oleft;
	int bad = 0, r;

	iconv(cd, NULL, NULL, NULL, NULL);
	while (left > 0) {
		size_t c;

		op = tmp;
		oleft = sizeof(tmp);
		c = iconv(cd, &ip, &left, &op, &oleft);
		if ((r = put_checked(out, (unsigned char *)tmp,
		    (size_t)(op - tmp), &bad)) != 0)
			return r < 0 ? -1 : bad | CS_CUT;
		if (probe && bad)
			return bad;
		if (c != (size_t)-1)
			break;
		if (errno == E2BIG && op != tmp)
			continue;
		/* EILSEQ, EINVAL (cut sequence) or no progress: one byte */
		bad = CS_INVALID;
		if (probe)
			return bad;
		/* some converters (ISO-2022-CN-EXT after SO) fail only once
		 * all the input is taken: there is no byte left to pass */
		if (left == 0)
			break;
		if ((r = utf8_put_cut(out, (unsigned char)*ip)) != 0)
			return r < 0 ? -1 : bad | CS_CUT;
		ip++;
		left--;
	}
	op = tmp;
	oleft = sizeof(tmp);
	if (iconv(cd, NULL, NULL, &op, &oleft) != (size_t)-1 &&
	    (r = put_checked(out, (unsigned char *)tmp,
	    (size_t)(op - tmp), &bad)) != 0)
		return r < 0 ? -1 : bad | CS_CUT;
	return bad;
}

/* charset_convert; probe: an iconv reading stops at its first invalid
 * byte (cs_iconv) */
static int
convert_cs(const char *charset, size_t cslen, const unsigned char *in,
    size_t n, struct buf *out, int *flags, int probe)
{
	char name[CS_NAME_MAX + 1];
	iconv_t cd;
	size_t i;
	int r;

	if (cs_normalize(charset, cslen, name) < 0) {
		*flags |= CS_UNKNOWN;
		goto asutf8;
	}
	for (i = 0; i < sizeof(utf8_names) / sizeof(utf8_names[0]); i++)
		if (strcmp(utf8_names[i], name) == 0)
			goto asutf8;
	if ((cd = cs_open(name)) == (iconv_t)-1) {
		*flags |= CS_UNKNOWN;
		goto asutf8;
	}
	if ((r = cd == CS_CP1252 ? cs_cp1252(in, n, out) : cs_iconv(cd, in,
	    n, out, probe)) < 0)
		return -1;
	*flags |= r;
	return 0;
asutf8:
	if ((r = charset_utf8_latin1(in, n, out)) < 0)
		return -1;
	*flags |= r;
	return 0;
}

/* any declared charset to UTF-8, never failing on content */
int
charset_convert(const char *charset, size_t cslen, const unsigned char *in,
    size_t n, struct buf *out, int *flags)
{
	return convert_cs(charset, cslen, in, n, out, flags, 0);
}

/* ---- labels that lie ------------------------------------------------ */

/*
 * Languages whose charsets tell each other apart by validity, and the
 * charsets to try, strictest first, when a label of the language fails
 * (EUC-JP rejects Shift_JIS at once; Shift_JIS would take EUC-JP as
 * half-width kana).
 */
static const char *const ja_names[] = {
	"iso-2022-jp", "iso-2022-jp-1", "iso-2022-jp-2", "iso-2022-jp-3",
	"csiso2022jp", "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji",
	"windows-31j", "cp932", "euc-jp", "x-euc-jp", "eucjp", NULL
};
static const char *const ja_try[] = {
	"EUC-JP", "CP932", "ISO-2022-JP", NULL
};
static const char *const zh_names[] = {
	"gb2312", "gbk", "gb18030", "x-gbk", "cp936", "euc-cn", "hz-gb-2312",
	"big5", "big5-hkscs", "cp950", "x-x-big5", NULL
};
static const char *const zh_try[] = {
	"CP950", "BIG5-HKSCS", "GB18030", NULL
};
static const char *const ko_names[] = {
	"euc-kr", "ks_c_5601-1987", "ks_c_5601", "ksc5601", "ksc_5601",
	"cp949", "iso-2022-kr", "korean", NULL
};
static const char *const ko_try[] = { "CP949", "ISO-2022-KR", NULL };

static const struct {
	const char *const *names, *const *try;
} families[] = {
	{ ja_names, ja_try }, { zh_names, zh_try }, { ko_names, ko_try },
};

/* the charsets to try for a normalized name's language, or NULL */
static const char *const *
family_of(const char *name)
{
	size_t f, i;

	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (i = 0; families[f].names[i] != NULL; i++)
			if (strcmp(families[f].names[i], name) == 0)
				return families[f].try;
	return NULL;
}

/* 1 if the label names a language with charsets to try (charset.h) */
int
charset_has_family(const char *charset, size_t cslen)
{
	char name[CS_NAME_MAX + 1];

	return cs_normalize(charset, cslen, name) == 0 &&
	    family_of(name) != NULL;
}

/* a charset of one byte per character (any byte valid in it) */
static int
single_byte(const char *name)
{
	static const char *const pre[] = {
		"iso-8859", "iso8859", "iso_8859", "windows-12", "cp12",
		"koi8", "latin", "l1", "macintosh", "mac", "cp437", "cp85",
		"cp86", "ibm", "tis-620", "cp874", "windows-874", NULL
	};
	size_t i;

	for (i = 0; pre[i] != NULL; i++)
		if (strncmp(name, pre[i], strlen(pre[i])) == 0)
			return 1;
	return 0;
}

/* charsets where UTF-8 validity proves nothing (not ASCII-based) */
static int
wide(const char *name)
{
	return strncmp(name, "utf-16", 6) == 0 ||
	    strncmp(name, "utf-32", 6) == 0 || strncmp(name, "ucs-", 4) == 0 ||
	    strncmp(name, "utf-7", 5) == 0 || strcmp(name, "unicode") == 0 ||
	    strncmp(name, "utf16", 5) == 0 || strncmp(name, "utf32", 5) == 0;
}

/* is the input valid UTF-8, and how many multi-byte sequences it has */
static int
utf8_stats(const unsigned char *in, size_t n, size_t *multi)
{
	size_t i = 0, k;

	*multi = 0;
	while (i < n) {
		if (in[i] < 0x80) {
			i += utf8_ascii_run(in + i, n - i);
			continue;
		}
		if ((k = utf8_len(in + i, n - i)) == 0)
			return 0;
		i += k;
		(*multi)++;
	}
	return 1;
}

/* take back what was appended since len (a reading given up) */
static void
rewind_to(struct buf *b, size_t len)
{
	b->len = len;
	if (b->data != NULL)
		b->data[len] = 0;
}

/* convert with a charset named in the source (a literal name) */
static int
convert_named(const char *name, const unsigned char *in, size_t n,
    struct buf *out, int *flags)
{
	return charset_convert(name, strlen(name), in, n, out, flags);
}

/*
 * Read in as charset nm (nlen bytes), for a label whose reading at
 * [start, first_end) of out failed: the trial goes after that reading,
 * which stays (*kept) unless there is no room for both, and stops at
 * its first invalid byte.  Each byte refused used to cost an iconv call
 * in every charset of the language, and the label's reading was made
 * twice: 0xff bytes labelled EUC-JP took 0.3 s a MiB.  1 when nm reads
 * in cleanly, that reading moved to start and its flags in *f2 (the
 * same reading and flags as made at start); 0 when not, out as it was
 * (the label's reading, unless *kept is now 0); -1 out of memory.
 */
static int
try_clean(const char *nm, size_t nlen, const unsigned char *in, size_t n,
    struct buf *out, size_t start, size_t first_end, int *kept, int *f2)
{
	size_t at = *kept ? first_end : start, len;

	rewind_to(out, at);
	*f2 = 0;
	if (convert_cs(nm, nlen, in, n, out, f2, 1) < 0)
		return -1;
	if ((*f2 & CS_CUT) && at != start) {
		/* no room after the label's reading: read it alone */
		*kept = 0;
		at = start;
		rewind_to(out, at);
		*f2 = 0;
		if (convert_cs(nm, nlen, in, n, out, f2, 1) < 0)
			return -1;
	}
	if (*f2 & CS_INVALID) {
		rewind_to(out, *kept ? first_end : start);
		return 0;
	}
	if (at != start) {
		len = out->len - at;
		memmove(out->data + start, out->data + at, len);
		rewind_to(out, start + len);
	}
	return 1;
}

/*
 * The reading a byte order mark at the start of in asks for (UTF-8, or
 * UTF-16 in the mark's byte order), when the label would read the bytes
 * otherwise and all the bytes fit it: a browser takes the mark before
 * any label (WHATWG Encoding, "BOM sniff").  An HTML part in UTF-16
 * with its mark, labelled us-ascii or nothing, gave no word at all while
 * the reader was shown its text.  1 when read so (out and *flags set),
 * 0 when not (out as it was), -1 out of memory.
 */
static int
bom_reading(const char *charset, size_t cslen, const unsigned char *in,
    size_t n, struct buf *out, int *flags)
{
	char name[CS_NAME_MAX + 1];
	const char *cs;
	size_t start = out->len, i;
	int f = 0;

	if (cs_normalize(charset, cslen, name) < 0)
		name[0] = 0;
	if (n >= 3 && in[0] == 0xEF && in[1] == 0xBB && in[2] == 0xBF) {
		/* (a label read as UTF-8 reads it so already) */
		for (i = 0; name[0] != 0 && i < sizeof(utf8_names) /
		    sizeof(utf8_names[0]); i++)
			if (strcmp(utf8_names[i], name) == 0)
				break;
		if (name[0] == 0 || i < sizeof(utf8_names) /
		    sizeof(utf8_names[0]))
			return 0;
		cs = "utf-8";
	} else if (n >= 2 && ((in[0] == 0xFF && in[1] == 0xFE) ||
	    (in[0] == 0xFE && in[1] == 0xFF))) {
		if (name[0] != 0 && wide(name))
			return 0;
		cs = "utf-16";	/* (iconv's takes the order from the mark) */
		n -= n & 1;	/* (a half character cut off at the end) */
	} else
		return 0;
	if (convert_cs(cs, strlen(cs), in, n, out, &f, 1) < 0)
		return -1;
	if (f & CS_INVALID) {
		rewind_to(out, start);
		return 0;
	}
	*flags |= f | CS_RELABELLED;
	return 1;
}

/*
 * A part's text to UTF-8, with the evidence of its bytes (charset.h):
 * valid UTF-8 wins over another label when it cannot be chance (a
 * one-byte charset, four or more UTF-8 sequences, or a label that
 * fails); a failing label gives way to the first clean charset of its
 * language, or of hint's when the label names none.
 */
int
charset_convert_text(const char *charset, size_t cslen, const char *hint,
    const unsigned char *in, size_t n, struct buf *out, int *flags)
{
	char name[CS_NAME_MAX + 1];
	const char *const *try = NULL;
	size_t start = out->len, first_end, multi = 0, i;
	int valid, f = 0, f2, asutf8 = 1, kept = 1, r;

	if (cs_normalize(charset, cslen, name) < 0)
		name[0] = 0;
	else {
		for (i = 0; i < sizeof(utf8_names) / sizeof(utf8_names[0]);
		    i++)
			if (strcmp(utf8_names[i], name) == 0)
				break;
		asutf8 = i < sizeof(utf8_names) / sizeof(utf8_names[0]);
	}
	if (name[0] != 0 && wide(name))
		return charset_convert(charset, cslen, in, n, out, flags);
	valid = utf8_stats(in, n, &multi);
	if (!asutf8 && valid && multi > 0 && (multi >= 4 ||
	    single_byte(name))) {
		*flags |= CS_RELABELLED;
		return convert_named("utf-8", in, n, out, flags);
	}
	if (charset_convert(charset, cslen, in, n, out, &f) < 0)
		return -1;
	if (!(f & CS_INVALID)) {
		*flags |= f;
		return 0;
	}
	first_end = out->len;
	if (!asutf8 && valid && multi > 0) {
		rewind_to(out, start);
		*flags |= CS_RELABELLED;
		return convert_named("utf-8", in, n, out, flags);
	}
	if (name[0] != 0)
		try = family_of(name);
	if (try == NULL && hint != NULL && hint[0] != 0 && cs_normalize(hint,
	    strlen(hint), name) == 0 && (try = family_of(name)) != NULL) {
		/* the post's own charset first, then its language's */
		if ((r = try_clean(name, strlen(name), in, n, out, start,
		    first_end, &kept, &f2)) != 0) {
			if (r > 0)
				*flags |= f2 | CS_RELABELLED;
			return r < 0 ? -1 : 0;
		}
	}
	for (i = 0; try != NULL && try[i] != NULL; i++)
		if ((r = try_clean(try[i], strlen(try[i]), in, n, out, start,
		    first_end, &kept, &f2)) != 0) {
			if (r > 0)
				*flags |= f2 | CS_RELABELLED;
			return r < 0 ? -1 : 0;
		}
	if (!kept) {
		/* none was clean, and one took the label's reading's room:
		 * that reading again, fallbacks and all */
		rewind_to(out, start);
		f = 0;
		if (charset_convert(charset, cslen, in, n, out, &f) < 0)
			return -1;
	}
	*flags |= f;
	return 0;
}

/* a part's body: its byte order mark first (charset.h) */
int
charset_convert_body(const char *charset, size_t cslen, const char *hint,
    const unsigned char *in, size_t n, struct buf *out, int *flags)
{
	int r;

	if ((r = bom_reading(charset, cslen, in, n, out, flags)) != 0)
		return r < 0 ? -1 : 0;
	return charset_convert_text(charset, cslen, hint, in, n, out, flags);
}

/* the public form of charset_convert() */
int
charset_to_utf8(const char *charset, const unsigned char *in, size_t n,
    struct buf *out)
{
	int flags = 0;

	if (charset_convert(charset ? charset : "",
	    charset ? strlen(charset) : 0, in, n, out, &flags) < 0)
		return -1;
	return flags ? 1 : 0;
}

/* close every cached converter */
void
charset_cache_clear(void)
{
	size_t i;

	for (i = 0; i < CS_CACHE; i++) {
		if (cache[i].name[0] && cache[i].cd != (iconv_t)-1 &&
		    cache[i].cd != CS_CP1252)
			iconv_close(cache[i].cd);
		cache[i].name[0] = 0;
		cache[i].cd = (iconv_t)-1;
		cache[i].used = 0;
	}
}

/* set the number of converters that may still be opened */
void
charset_budget(unsigned n)
{
	opens_left = n ? n : UINT_MAX;
	budget_tick = tick;
}
