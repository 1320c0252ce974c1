/*
 * tok.c - the word, URL, address and header tokenizers
 *
 * Input is hostile decoded text: any byte sequence, invalid UTF-8
 * included, is cut into bounded tokens (a token never exceeds
 * TOKLIST_MAX_BYTES; a word longer than max_token becomes a "skip:" token;
 * a set holds at most max_tokens).  Fails (-1) only when memory runs
 * out.  Never logs, never exits.  tok_post (the mail_walk glue) is in
 * tok_post.c.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gate/util/lglimits.h"
#include "gate/tok.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"

void
tok_opts_words(struct tok_opts *o)
{
	o->max_token = LG_MAX_TOKEN_BYTES;
	o->max_tokens = LG_MAX_TOKENS_PER_POST;
	o->min_len = 3;
	/*
	 * Chosen by cross-validation, tests/bench/README.md: folding ASCII
	 * case and Received hosts and IPs (with their /16 /24 prefixes)
	 * helped; word bigrams lost, so they stay off.
	 */
	o->fold_case = 1;
	o->numbers = 1;
	o->rcvd = 2;
	o->bigrams = 0;
	o->hdr_names = 1;
	o->src = 1;
	o->marks = 0;
	o->trust = NULL;
}

/* ---- emitting: prefix + piece, bounded ------------------------------ */

/* add prefix followed by the pieces a and b (b may be NULL): 0 or -1 */
static int
emit2(struct toklist *tl, const char *prefix, const void *a, size_t na,
    const void *b, size_t nb, int fold)
{
	unsigned char t[TOKLIST_MAX_BYTES + 1];
	size_t np = strlen(prefix), i;

	if (np + na + nb > TOKLIST_MAX_BYTES)
		return 0;
	memcpy(t, prefix, np);
	memcpy(t + np, a, na);
	if (nb > 0)
		memcpy(t + np + na, b, nb);
	if (fold)
		for (i = np; i < np + na + nb; i++)
			if (t[i] >= 'A' && t[i] <= 'Z')
				t[i] = (unsigned char)(t[i] - 'A' + 'a');
	return toklist_add(tl, t, np + na + nb) < 0 ? -1 : 0;
}

/* add prefix + piece */
static int
emit(struct toklist *tl, const char *prefix, const void *a, size_t na,
    int fold)
{
	return emit2(tl, prefix, a, na, NULL, 0, fold);
}

/* ---- characters ----------------------------------------------------- */

/* (C_STYLED: a letter or digit of a word, written with a styled form of
 * an ASCII one) */
enum cclass { C_SEP, C_WORD, C_JOIN, C_CJK, C_INVIS, C_STYLED };

/* decode one UTF-8 character at p (n > 0 bytes): its length; *cp gets
 * the code point, or the byte itself with *bad set when invalid */
static inline size_t
utf8_next(const unsigned char *p, size_t n, uint32_t *cp, int *bad)
{
	size_t len;

	if ((len = utf8_decode(p, n, cp)) > 0) {
		*bad = 0;
		return len;
	}
	*bad = 1;
	*cp = p[0];
	return 1;
}

/*
 * Scripts written without spaces between words, cut in bigrams of
 * characters: Han, kana, Hangul, and Thai, Lao, Khmer and Myanmar
 * (whose runs would otherwise be one long word, a skip token)
 */
static int
is_cjk(uint32_t c)
{
	return (c >= 0x0e00 && c <= 0x0eff) ||	/* Thai, Lao */
	    (c >= 0x1000 && c <= 0x109f) ||	/* Myanmar */
	    (c >= 0x1780 && c <= 0x17ff) ||	/* Khmer */
	    (c >= 0x19e0 && c <= 0x19ff) ||	/* Khmer symbols */
	    (c >= 0x3040 && c <= 0x30ff) ||	/* hiragana, katakana */
	    (c >= 0x3400 && c <= 0x4dbf) ||	/* Han ext. A */
	    (c >= 0x4e00 && c <= 0x9fff) ||	/* Han */
	    (c >= 0xac00 && c <= 0xd7af) ||	/* Hangul syllables */
	    (c >= 0x1100 && c <= 0x11ff) ||	/* Hangul jamo */
	    (c >= 0x3130 && c <= 0x318f) ||	/* Hangul compatibility jamo */
	    (c >= 0xf900 && c <= 0xfaff) ||	/* Han compatibility */
	    (c >= 0xff66 && c <= 0xff9f) ||	/* half-width katakana */
	    (c >= 0x20000 && c <= 0x2ffff);	/* Han ext. B.. */
}

/*
 * Characters that are never shown (Unicode's Default_Ignorable_Code_Point:
 * soft hyphen, zero-width space and joiners, bidirectional marks, word
 * joiner, variation selectors, byte order mark, tags).  A word is read
 * as if they were not there: "V<ZWSP>i<ZWSP>a<ZWSP>g<ZWSP>r<ZWSP>a" is
 * the word a reader sees, not six letters.
 */
static int
is_invisible(uint32_t c)
{
	return c == 0xad || c == 0x34f || c == 0x61c ||
	    (c >= 0x115f && c <= 0x1160) || (c >= 0x17b4 && c <= 0x17b5) ||
	    (c >= 0x180b && c <= 0x180f) || (c >= 0x200b && c <= 0x200f) ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) ||
	    c == 0x3164 || (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff ||
	    c == 0xffa0 || (c >= 0xfff0 && c <= 0xfff8) ||
	    (c >= 0x1bca0 && c <= 0x1bca3) ||
	    (c >= 0x1d173 && c <= 0x1d17a) ||
	    (c >= 0xe0000 && c <= 0xe0fff);
}

/*
 * Combining marks of the blocks that add to any letter (diacritics,
 * their extensions and supplement, half marks): U+0332 under each
 * letter of "viagra" underlines it, U+0336 strikes it through, and a
 * pile of them on a letter is "Zalgo" text; the word a reader makes out
 * is the letters underneath.
 */
static int
is_comb_mark(uint32_t c)
{
	return (c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) ||
	    (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0xfe20 && c <= 0xfe2f);
}

/* a code point and the ASCII character it reads as */
struct cp_ascii {
	uint16_t cp;
	char a;
};

/* the ASCII character of c in t (n entries sorted by cp), or 0 */
static int
cp_lookup(const struct cp_ascii *t, size_t n, uint32_t c)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (t[mid].cp == c)
			return t[mid].a;
		if (t[mid].cp < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * The ASCII letter or digit that a styled form stands for, or 0:
 * full-width forms, the mathematical alphanumerics (bold, italic,
 * script, fraktur, double-struck, sans-serif, monospace), circled,
 * parenthesized, squared and negative letters and digits, small
 * capitals.  A reader sees FREE in each; so does the tokenizer (NFKC
 * would fold the first two likewise).
 */
static int
styled_ascii(uint32_t c)
{
	/* the letters of those styles that Unicode had before (letterlike
	 * symbols: double-struck C, script H, Planck's h...), left out of
	 * the mathematical block as holes */
	static const char letterlike[] =
	    "C       gHHHh IIL  N   PQRRR      Z   Z   BC eEF Mo";
	/* small capitals ("\ua730\u0280\u1d07\u1d07": free), sorted */
	static const struct cp_ascii small[] = {
		{ 0x262, 'g' }, { 0x26a, 'i' }, { 0x274, 'n' }, { 0x280, 'r' },
		{ 0x28f, 'y' }, { 0x299, 'b' }, { 0x29c, 'h' }, { 0x29f, 'l' },
		{ 0x1d00, 'a' }, { 0x1d04, 'c' }, { 0x1d05, 'd' },
		{ 0x1d07, 'e' }, { 0x1d0a, 'j' }, { 0x1d0b, 'k' },
		{ 0x1d0d, 'm' }, { 0x1d0f, 'o' }, { 0x1d18, 'p' },
		{ 0x1d1b, 't' }, { 0x1d1c, 'u' }, { 0x1d20, 'v' },
		{ 0x1d21, 'w' }, { 0x1d22, 'z' }, { 0xa730, 'f' },
		{ 0xa731, 's' }, { 0xa7af, 'q' },
	};
	unsigned r;

	if (c < 0x262)
		return 0;
	if (c <= 0x1d22 || (c >= 0xa730 && c <= 0xa7af))
		return cp_lookup(small, sizeof(small) / sizeof(small[0]), c);
	if (c < 0x2102)
		return 0;
	if (c <= 0x2134)
		return letterlike[c - 0x2102] == ' ' ? 0 :
		    letterlike[c - 0x2102];
	if (c >= 0x2460 && c <= 0x2468)		/* circled digits */
		return '1' + (int)(c - 0x2460);
	if (c >= 0x2474 && c <= 0x247c)		/* parenthesized */
		return '1' + (int)(c - 0x2474);
	if (c >= 0x249c && c <= 0x24b5)
		return 'a' + (int)(c - 0x249c);
	if (c == 0x24ea || c == 0x24ff)		/* circled zeros */
		return '0';
	if ((c >= 0x2776 && c <= 0x277e) || (c >= 0x2780 && c <= 0x2788) ||
	    (c >= 0x278a && c <= 0x2792))	/* dingbat circled digits */
		return '1' + (int)((c - 0x2776) % 10);
	if (c < 0x24b6)
		return 0;
	if (c <= 0x24cf)
		return 'A' + (int)(c - 0x24b6);	/* circled */
	if (c <= 0x24e9)
		return 'a' + (int)(c - 0x24d0);
	if (c >= 0xff10 && c <= 0xff19)		/* full-width */
		return '0' + (int)(c - 0xff10);
	if (c >= 0xff21 && c <= 0xff3a)
		return 'A' + (int)(c - 0xff21);
	if (c >= 0xff41 && c <= 0xff5a)
		return 'a' + (int)(c - 0xff41);
	if (c >= 0x1d400 && c <= 0x1d6a3) {	/* 13 styles of 52 */
		r = (unsigned)(c - 0x1d400) % 52;
		return r < 26 ? 'A' + (int)r : 'a' + (int)r - 26;
	}
	if (c >= 0x1d7ce && c <= 0x1d7ff)	/* 5 styles of 10 digits */
		return '0' + (int)((c - 0x1d7ce) % 10);
	if (c >= 0x1f110 && c <= 0x1f129)	/* parenthesized capitals */
		return 'A' + (int)(c - 0x1f110);
	if (c >= 0x1f130 && c <= 0x1f189) {	/* squared, negative */
		r = (unsigned)(c - 0x1f130) % 0x20;
		return r < 26 ? 'A' + (int)r : 0;
	}
	return 0;
}

/*
 * The ASCII letter that a Cyrillic or Greek letter looks like, or 0:
 * "p\u0430yp\u0430l" (Cyrillic a) is the word a reader sees as paypal
 */
static int
confusable_ascii(uint32_t c)
{
	static const struct cp_ascii t[] = {	/* sorted */
		{ 0x391, 'A' }, { 0x392, 'B' }, { 0x395, 'E' }, { 0x396, 'Z' },
		{ 0x397, 'H' }, { 0x399, 'I' }, { 0x39a, 'K' }, { 0x39c, 'M' },
		{ 0x39d, 'N' }, { 0x39f, 'O' }, { 0x3a1, 'P' }, { 0x3a4, 'T' },
		{ 0x3a5, 'Y' }, { 0x3a7, 'X' }, { 0x3b1, 'a' }, { 0x3b9, 'i' },
		{ 0x3bd, 'v' }, { 0x3bf, 'o' }, { 0x3c1, 'p' }, { 0x3c5, 'u' },
		{ 0x3f2, 'c' }, { 0x3f3, 'j' },
		{ 0x405, 'S' }, { 0x406, 'I' }, { 0x408, 'J' }, { 0x410, 'A' },
		{ 0x412, 'B' }, { 0x415, 'E' }, { 0x41a, 'K' }, { 0x41c, 'M' },
		{ 0x41d, 'H' }, { 0x41e, 'O' }, { 0x420, 'P' }, { 0x421, 'C' },
		{ 0x422, 'T' }, { 0x425, 'X' }, { 0x430, 'a' }, { 0x435, 'e' },
		{ 0x43e, 'o' }, { 0x440, 'p' }, { 0x441, 'c' }, { 0x443, 'y' },
		{ 0x445, 'x' }, { 0x455, 's' }, { 0x456, 'i' }, { 0x458, 'j' },
		{ 0x4ae, 'Y' }, { 0x4af, 'y' }, { 0x4bb, 'h' }, { 0x4cf, 'l' },
		{ 0x501, 'd' }, { 0x51b, 'q' }, { 0x51d, 'w' },
	};
	if (c < 0x391 || c > 0x51d)
		return 0;
	return cp_lookup(t, sizeof(t) / sizeof(t[0]), c);
}

/* the class of an ASCII character */
static inline enum cclass
ascii_class(unsigned c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return C_WORD;
	if (c == '.' || c == '-' || c == '\'' || c == '!' || c == '$' ||
	    c == '_')
		return C_JOIN;
	return C_SEP;
}

/* the class of one character */
static enum cclass
char_class(uint32_t c, int bad)
{
	if (bad)
		return C_WORD;
	if (c < 0x80)
		return ascii_class(c);
	/* (before CJK: the Hangul fillers are in both) */
	if (is_invisible(c))
		return C_INVIS;
	if (is_cjk(c))
		return C_CJK;
	if (styled_ascii(c))
		return C_STYLED;
	if ((c >= 0x80 && c <= 0xbf && c != 0xaa && c != 0xb5 &&
	    c != 0xba) || c == 0xd7 || c == 0xf7 ||
	    (c >= 0x2000 && c <= 0x2bff) ||	/* punctuation, symbols */
	    (c >= 0x2e00 && c <= 0x2e7f) ||
	    (c >= 0x3000 && c <= 0x303f) ||	/* CJK punctuation */
	    (c >= 0xfe30 && c <= 0xfe4f) ||
	    (c >= 0xff00 && c <= 0xff0f) || (c >= 0xff1a && c <= 0xff20) ||
	    (c >= 0xff3b && c <= 0xff40) || (c >= 0xff5b && c <= 0xff65) ||
	    (c >= 0xfff0 && c <= 0xffff) || (c >= 0xe000 && c <= 0xf8ff) ||
	    (c >= 0x1f000 && c <= 0x1faff))	/* emoji */
		return C_SEP;
	return C_WORD;
}

/* ---- words ---------------------------------------------------------- */

/* the prefix of a pair of neighbouring words (tok_is_pair) */
#define TOK_PAIR	"bi:"

struct wstate {
	const struct tok_opts *o;
	struct toklist *tl;
	const char *prefix;
	/* previous word, for bigrams */
	unsigned char prev[64];
	size_t nprev;
};

/* the skip token of a word of n bytes starting with byte first */
static int
skip(struct wstate *w, unsigned char first, size_t n)
{
	char sk[40];
	int c = first < 0x80 ? first : '8', r;

	if (w->o->fold_case && c >= 'A' && c <= 'Z')
		c = c - 'A' + 'a';
	r = snprintf(sk, sizeof(sk), "skip:%c %zu", c, n / 10 * 10);
	w->nprev = 0;
	return emit(w->tl, w->prefix, sk, (size_t)r, 0);
}

/* one word [p, p+n): length rules, skip tokens, numbers: 0 or -1 */
static int
word(struct wstate *w, const unsigned char *p, size_t n)
{
	const struct tok_opts *o = w->o;
	size_t i, digits = 0;

	/* joiners only inside a word (a leading '$' is kept: "$100") */
	while (n > 0 && (p[0] == '.' || p[0] == '-' || p[0] == '\'' ||
	    p[0] == '!' || p[0] == '_' || (p[0] == '$' && n > 1 &&
	    p[1] == '$')))
		p++, n--;
	while (n > 0 && (p[n - 1] == '.' || p[n - 1] == '-' ||
	    p[n - 1] == '\'' || p[n - 1] == '!' || p[n - 1] == '_' ||
	    p[n - 1] == '$'))
		n--;
	if (n < o->min_len || n == 0)
		return 0;
	if (n > o->max_token)
		return skip(w, p[0], n);
	for (i = 0; i < n; i++)
		if ((p[i] >= '0' && p[i] <= '9') || p[i] == '.' ||
		    p[i] == '-' || p[i] == ',' || p[i] == '$')
			digits++;
	if (digits == n && !o->numbers)
		return 0;
	if (emit(w->tl, w->prefix, p, n, o->fold_case) < 0)
		return -1;
	if (o->bigrams && w->prefix[0] == '\0') {
		if (w->nprev > 0 && w->nprev + 1 + n + 3 <= TOKLIST_MAX_BYTES) {
			unsigned char t[TOKLIST_MAX_BYTES];
			size_t k = 0;

			memcpy(t, TOK_PAIR, 3);
			k = 3;
			memcpy(t + k, w->prev, w->nprev);
			k += w->nprev;
			t[k++] = ' ';
			if (emit2(w->tl, "", t, k, p, n, o->fold_case) < 0)
				return -1;
		}
		if (n <= sizeof(w->prev)) {
			memcpy(w->prev, p, n);
			w->nprev = n;
		} else
			w->nprev = 0;
	}
	return 0;
}

int
tok_is_pair(const void *t, size_t len)
{
	return len > 3 && memcmp(t, TOK_PAIR, 3) == 0;
}

/* cut a run of CJK text [p, p+n) (whole characters) into bigrams */
static int
cjk_run(struct wstate *w, const unsigned char *p, size_t n)
{
	size_t a = 0, b, c;
	uint32_t cp;
	int bad;

	b = utf8_next(p, n, &cp, &bad);
	if (b >= n)	/* a lone character is a token of its own */
		return emit(w->tl, w->prefix, p, n, 0);
	while (b < n) {
		c = b + utf8_next(p + b, n - b, &cp, &bad);
		if (emit(w->tl, w->prefix, p + a, c - a, 0) < 0)
			return -1;
		a = b;
		b = c;
	}
	return 0;
}

/* the longest word read as shown on the stack, in bytes before styled
 * letters are made ASCII (4 bytes to 1); a longer one (a skip token, or
 * nothing when it is all joiners) is read into the heap, so that word()
 * trims and measures it as it does a word written plainly */
#define TOK_VISIBLE_MAX	1024

/* what a word holds besides ASCII (words() counts it) */
struct wshape {
	size_t nsty;	/* bytes of styled letters and digits */
	int conf;	/* Cyrillic or Greek letters that look like ASCII ones */
	int other;	/* other non-ASCII letters */
	int ascii;	/* ASCII (or styled) letters: set by plain_word */
	size_t marks;	/* combining marks (is_comb_mark) */
};

/* 1 if the word [p, p+n) of shape h is written as it is shown; the
 * ASCII letters are looked for only in a word with look-alikes */
static int
plain_word(const unsigned char *p, size_t n, struct wshape *h)
{
	size_t i;

	if (h->conf && !h->other && !h->ascii)
		for (i = 0; i < n && !h->ascii; i++)
			h->ascii = ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'z');
	return h->nsty == 0 && (!h->conf || !h->ascii || h->other) &&
	    (h->marks == 0 || h->other);
}

/*
 * Are the combining marks of a word [p, p+n) of letters that are ASCII
 * or read as ASCII (no other letters) a disguise, to be read without?
 * When there is one on every letter or more (each letter of "viagra"
 * underlined, of 2 letters at least), or three on one letter: no
 * language written in Latin letters piles more than two on one, and a
 * word in decomposed form ("cafe" and U+0301) keeps its accent.
 */
static int
marks_disguise(const unsigned char *p, size_t n)
{
	size_t i = 0, k, letters = 0, marks = 0, run = 0, maxrun = 0;
	uint32_t cp;
	int bad;

	while (i < n) {
		k = utf8_next(p + i, n - i, &cp, &bad);
		if (!bad && is_comb_mark(cp)) {
			marks++;
			if (++run > maxrun)
				maxrun = run;
		} else {
			letters++;
			run = 0;
		}
		i += k;
	}
	return (letters >= 2 && marks >= letters) ||
	    (letters >= 1 && maxrun >= 3);
}

/* a word [p, p+n) of shape h as a reader sees it: styled letters and
 * digits as ASCII (the word is shorter then), and, in a word of ASCII
 * letters whose others all look like ASCII ones, those as ASCII too;
 * combining marks that disguise such a word (marks_disguise) left out;
 * once each "anomaly:styled" (not for full-width forms, everyday in
 * Japanese), "anomaly:mixed-script" and "anomaly:combining" */
static int
word_shown(struct wstate *w, const unsigned char *p, size_t n,
    const struct wshape *h)
{
	unsigned char sv[TOK_VISIBLE_MAX], *v = sv;
	size_t i = 0, k, m = 0;
	uint32_t cp;
	int bad, a, r, styled = 0, latin = h->ascii && h->conf && !h->other;
	int unmark = h->marks > 0 && !h->other && marks_disguise(p, n);

	if (latin && emit(w->tl, "", "anomaly:mixed-script", 20, 0) < 0)
		return -1;
	if (unmark && emit(w->tl, "", "anomaly:combining", 17, 0) < 0)
		return -1;
	if (n > sizeof(sv) && (v = xmalloc(n)) == NULL)
		return -1;
	while (i < n) {
		k = utf8_next(p + i, n - i, &cp, &bad);
		if (!bad && unmark && is_comb_mark(cp)) {
			/* (left out) */
		} else if (!bad && h->nsty > 0 && (a = styled_ascii(cp)) != 0) {
			v[m++] = (unsigned char)a;
			styled |= cp < 0xff00 || cp > 0xffef;
		} else if (!bad && latin && (a = confusable_ascii(cp)) != 0) {
			v[m++] = (unsigned char)a;
		} else {
			memcpy(v + m, p + i, k);
			m += k;
		}
		i += k;
	}
	r = styled && emit(w->tl, "", "anomaly:styled", 14, 0) < 0 ? -1 :
	    m == 0 ? 0 : word(w, v, m);
	if (v != sv)
		xfree(v);
	return r;
}

/* split a chunk with no URL or address (and no invisible character:
 * tok_text took them out) into words and CJK bigrams */
static int
words(struct wstate *w, const unsigned char *s, size_t n)
{
	struct wshape h = { 0, 0, 0, 0, 0 };
	size_t i = 0, k, ws = 0, cs = 0;
	int inw = 0, inc = 0, bad = 0, sty = 0;
	uint32_t cp = 0;
	enum cclass cl;

	while (i < n) {
		if (s[i] < 0x80) {	/* (most of the text) */
			k = 1;
			cl = ascii_class(s[i]);
			sty = 0;
		} else {
			k = utf8_next(s + i, n - i, &cp, &bad);
			cl = char_class(cp, bad);
			if ((sty = cl == C_STYLED))
				cl = C_WORD;
		}
		if (inc && cl != C_CJK) {
			if (cjk_run(w, s + cs, i - cs) < 0)
				return -1;
			inc = 0;
		}
		if (inw && (cl == C_SEP || cl == C_CJK)) {
			if ((plain_word(s + ws, i - ws, &h) ? word(w, s + ws,
			    i - ws) : word_shown(w, s + ws, i - ws, &h)) < 0)
				return -1;
			inw = 0;
		}
		if (cl == C_CJK && !inc) {
			inc = 1;
			cs = i;
		} else if ((cl == C_WORD || cl == C_JOIN) && !inw) {
			inw = 1;
			ws = i;
			memset(&h, 0, sizeof(h));
		}
		if (k > 1) {		/* (bad is a byte alone) */
			if (sty) {
				h.nsty += k;
				/* (a styled digit is no Latin letter) */
				if (styled_ascii(cp) > '9')
					h.ascii = 1;
			} else if (cl == C_WORD) {
				if (confusable_ascii(cp))
					h.conf = 1;
				else if (is_comb_mark(cp))
					h.marks++;
				else
					h.other = 1;
			}
		}
		i += k;
	}
	if (inc && cjk_run(w, s + cs, n - cs) < 0)
		return -1;
	if (inw && (plain_word(s + ws, n - ws, &h) ? word(w, s + ws, n - ws) :
	    word_shown(w, s + ws, n - ws, &h)) < 0)
		return -1;
	return 0;
}

/* ---- URLs and addresses --------------------------------------------- */

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* 1 if [p, p+n) is a dotted IPv4 address */
static int
is_ipv4(const unsigned char *p, size_t n)
{
	size_t i, dots = 0, dig = 0;

	for (i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (dig == 0)
				return 0;
			dots++;
			dig = 0;
		} else if (p[i] >= '0' && p[i] <= '9') {
			if (++dig > 3)
				return 0;
		} else
			return 0;
	}
	return dots == 3 && dig > 0;
}

/* "url:HOST" and its parent domains (down to two labels), after pre
 * ("url:", or a header's "subj:url:") */
static int
url_host(struct toklist *tl, const char *pre, const unsigned char *h,
    size_t n)
{
	size_t i, dots = 0;

	if (n == 0 || n > 100)
		return 0;
	if (is_ipv4(h, n))
		return emit(tl, pre, "ip", 2, 0) < 0 ||
		    emit(tl, pre, h, n, 0) < 0 ? -1 : 0;
	if (emit(tl, pre, h, n, 1) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (h[i] == '.')
			dots++;
	for (i = 0; i < n && dots >= 2; i++)
		if (h[i] == '.') {
			dots--;
			if (emit(tl, pre, h + i + 1, n - i - 1, 1) < 0)
				return -1;
		}
	return 0;
}

/*
 * A URL [p, p+n) whose scheme (sn bytes) ends at "://" or that starts
 * with "www.": scheme, host, parents, path words, as "url:" tokens
 * after the text's prefix (a URL in a Subject gives "subj:url:", so
 * header and body URLs stay apart)
 */
static int
url(struct wstate *w, const unsigned char *p, size_t n, size_t sn)
{
	struct toklist *tl = w->tl;
	size_t i, h, he, at, ws;
	char pre[64];

	snprintf(pre, sizeof(pre), "%surl:", w->prefix);
	while (n > 0 && strchr(".,;:!?'\")]}>", p[n - 1]) != NULL)
		n--;
	if (sn > 0) {
		if (emit(tl, pre, p, sn, 1) < 0)
			return -1;
		h = sn + 3;
	} else
		h = 0;
	/* host: up to / ? # ; user info before '@' dropped; port cut */
	for (he = h; he < n && p[he] != '/' && p[he] != '?' &&
	    p[he] != '#' && p[he] != '\\'; he++)
		;
	for (at = h; at < he; at++)
		if (p[at] == '@')
			h = at + 1;
	for (i = h; i < he && p[i] != ':'; i++)
		;
	if (url_host(tl, pre, p + h, i - h) < 0)
		return -1;
	/* path words */
	for (i = he; i < n; ) {
		while (i < n && !is_alnum(p[i]) && p[i] < 0x80)
			i++;
		ws = i;
		while (i < n && (is_alnum(p[i]) || p[i] >= 0x80))
			i++;
		if (i - ws >= 3 && i - ws <= w->o->max_token &&
		    emit(tl, pre, p + ws, i - ws, 1) < 0)
			return -1;
	}
	return 0;
}

static int
addr_local_char(int c)
{
	return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' ||
	    c == '-' || c == '=';
}

static int
addr_domain_char(int c)
{
	return is_alnum(c) || c == '.' || c == '-';
}

/* the length of the non-ASCII letter (any script, CJK included) at p,
 * or 0 for anything else */
static size_t
letter_at(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len;
	int bad;

	len = utf8_next(p, n, &cp, &bad);
	if (bad || cp < 0x80 || char_class(cp, 0) == C_SEP ||
	    char_class(cp, 0) == C_INVIS)
		return 0;
	return len;
}

/* the length of the non-ASCII letter that ends just before s[i], or 0 */
static size_t
letter_before(const unsigned char *s, size_t i)
{
	size_t k = i;

	while (k > 0 && i - k < 3 && (s[k - 1] & 0xC0) == 0x80)
		k--;
	if (k == 0)
		return 0;
	k--;
	return letter_at(s + k, i - k) == i - k ? i - k : 0;
}

/* look for a mail address around the '@' at s[at]; on success the
 * span [*b, *e) and tokens are emitted; returns 1 found, 0 not, -1 */
static int
address(struct wstate *w, int header, const unsigned char *s, size_t n,
    size_t at, size_t *b, size_t *e)
{
	size_t ls = at, de = at + 1, i, k, dots = 0;
	char pre[64];

	/* RFC 6532: letters of any script in both halves ("danglüe@") */
	for (;;) {
		if (ls > 0 && addr_local_char(s[ls - 1]))
			ls--;
		else if (ls > 0 && s[ls - 1] >= 0x80 &&
		    (k = letter_before(s, ls)) > 0)
			ls -= k;
		else
			break;
	}
	for (;;) {
		if (de < n && addr_domain_char(s[de]))
			de++;
		else if (de < n && s[de] >= 0x80 &&
		    (k = letter_at(s + de, n - de)) > 0)
			de += k;
		else
			break;
	}
	while (de > at + 1 && (s[de - 1] == '.' || s[de - 1] == '-'))
		de--;
	for (i = at + 1; i < de; i++)
		if (s[i] == '.')
			dots++;
	if (ls == at || dots == 0 || de - ls > 200)
		return 0;
	*b = ls;
	*e = de;
	snprintf(pre, sizeof(pre), "%saddr:", w->prefix);
	if (header) {
		if (emit(w->tl, pre, s + ls, de - ls, 1) < 0)
			return -1;
	} else if (emit(w->tl, pre, s + ls, at - ls, 1) < 0)
		return -1;
	if (emit(w->tl, pre, s + at, de - at, 1) < 0)
		return -1;
	return 1;
}

/* the bytes that end a chunk, as bits: 0x00-0x20, " ( ) < > below
 * 0x40; [ ] ` { | } and DEL above (a test in tests/check_tok.c lists
 * them byte by byte) */
#define SEP_LO	(0x1ffffffffULL | 1ULL << '"' | 1ULL << '(' | 1ULL << ')' | \
		 1ULL << '<' | 1ULL << '>')
#define SEP_HI	(1ULL << ('[' - 64) | 1ULL << (']' - 64) | 1ULL << ('`' - 64) | \
		 1ULL << ('{' - 64) | 1ULL << ('|' - 64) | 1ULL << ('}' - 64) | \
		 1ULL << (0x7f - 64))

/* 1 if the byte c ends a chunk (white space, controls, brackets and
 * quotes); called for every byte of every post */
static inline int
chunk_sep(unsigned char c)
{
	return c < 64 ? (int)(SEP_LO >> c & 1) :
	    c < 128 ? (int)(SEP_HI >> (c - 64) & 1) : 0;
}

/* one chunk: URL, address, or plain words */
static int
chunk(struct wstate *w, int header, const unsigned char *s, size_t n)
{
	size_t i, b, e, sn, start = 0;
	int r;

	for (i = 0; i + 3 < n; i++) {
		if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/') {
			for (b = i; b > 0 && ((s[b - 1] | 0x20) >= 'a' &&
			    (s[b - 1] | 0x20) <= 'z'); b--)
				;
			sn = i - b;
			if (sn < 2 || sn > 10)
				continue;
			if (words(w, s, b) < 0)
				return -1;
			return url(w, s + b, n - b, sn);
		}
		if ((s[i] | 0x20) == 'w' && (i == 0 || !is_alnum(s[i - 1])) &&
		    n - i > 4 &&
		    strncasecmp((const char *)s + i, "www.", 4) == 0 &&
		    is_alnum(s[i + 4])) {
			if (words(w, s, i) < 0)
				return -1;
			return url(w, s + i, n - i, 0);
		}
	}
	/* addresses, left to right (iterative: a chunk may be megabytes) */
	for (i = 1; i + 1 < n; i++) {
		if (s[i] != '@' || i <= start)
			continue;
		if ((r = address(w, header, s + start, n - start, i - start,
		    &b, &e)) < 0)
			return -1;
		if (r == 1) {
			if (words(w, s + start, b) < 0)
				return -1;
			start += e;
			i = start;
		}
	}
	return words(w, s + start, n - start);
}

/* the class of the character that ends at s[i] (i > 0), or C_SEP */
static enum cclass
class_before(const unsigned char *s, size_t i)
{
	size_t k = i - 1, len;
	uint32_t cp;
	int bad;

	while (k > 0 && i - k < 4 && (s[k] & 0xC0) == 0x80)
		k--;
	len = utf8_next(s + k, i - k, &cp, &bad);
	if (k + len != i)	/* a continuation byte alone */
		return C_WORD;
	return char_class(cp, bad);
}

/*
 * A chunk with bytes above ASCII: as a reader sees it, without its
 * invisible characters (they may hide a word, a URL or an address:
 * "V<ZWSP>i<ZWSP>a...", "www.<ZWSP>spam.example"), and "anomaly:invisible"
 * once when one stood between two letters or digits (not beside an
 * emoji, whose joiners and variation selectors are everyday text)
 */
static int
chunk_shown(struct wstate *w, int header, const unsigned char *s, size_t n)
{
	unsigned char sv[4096], *v = sv;
	size_t i = 0, k, m = 0, inv = 0;
	uint32_t cp;
	int bad, r, hidden = 0;
	enum cclass before, after;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_next(s + i, n - i, &cp, &bad);
		if (!bad && is_invisible(cp)) {
			inv = i;
			break;
		}
		i += k;
	}
	if (i >= n)
		return chunk(w, header, s, n);
	if (n > sizeof(sv) && (v = xmalloc(n)) == NULL)
		return -1;
	memcpy(v, s, inv);
	m = inv;
	for (i = inv; i < n; i += k) {
		k = utf8_next(s + i, n - i, &cp, &bad);
		if (bad || !is_invisible(cp)) {
			memcpy(v + m, s + i, k);
			m += k;
			continue;
		}
		/* a run of them, left out whole (each of its characters
		 * asked the same question, and looked at the rest of the
		 * run again: a run of 100 000 took minutes): between two
		 * letters or digits? */
		{
			size_t j = i + k, kk;
			uint32_t c2 = 0;
			int b2 = 1;

			while (j < n) {
				kk = utf8_next(s + j, n - j, &c2, &b2);
				if (b2 || !is_invisible(c2))
					break;
				j += kk;
			}
			if (!hidden && m > 0) {
				before = class_before(v, m);
				after = j < n ? char_class(c2, b2) : C_SEP;
				hidden = (before == C_WORD ||
				    before == C_STYLED) && (after == C_WORD ||
				    after == C_STYLED);
			}
			k = j - i;
		}
	}
	r = hidden && emit(w->tl, "", "anomaly:invisible", 17, 0) < 0 ? -1 :
	    m > 0 ? chunk(w, header, v, m) : 0;
	if (v != sv)
		xfree(v);
	return r;
}

/* a text's blocks for the vote budget (tok_text_part) */
struct blocks {
	size_t part0;		/* the part's first token */
	size_t blk0;		/* the block's first token */
	size_t words;		/* the part's tokens so far less word pairs */
	int html;		/* 1: a block per line, else per paragraph */
	int pairs;		/* 1: word pairs among the tokens */
};

/* the block that ends here: mark its tokens past either budget, and
 * apart the marks the others would have without the word pairs
 * (toklist_tail_words) */
static void
block_end(struct toklist *tl, struct blocks *bk)
{
	size_t i, n = toklist_count(tl), w = 0, len;
	const char *t;

	for (i = bk->blk0; i < n; i++) {
		if (i - bk->blk0 >= TOK_BLOCK_VOTES ||
		    i - bk->part0 >= TOK_PART_VOTES)
			toklist_set_tail(tl, i);
		if (bk->pairs) {
			t = toklist_get(tl, i, &len);
			if (tok_is_pair(t, len))
				continue;
		}
		if (w >= TOK_BLOCK_VOTES || bk->words >= TOK_PART_VOTES)
			toklist_set_tail_words(tl, i);
		w++;
		bk->words++;
	}
	bk->blk0 = n;
}

/* tok_text, and with bk the blocks' ends too */
static int
text_run(const struct tok_opts *o, const char *prefix, int header,
    const unsigned char *s, size_t n, struct toklist *tl,
    struct blocks *bk)
{
	struct wstate w;
	size_t i = 0, b;
	unsigned char hi;
	int blank, brk;

	w.o = o;
	w.tl = tl;
	w.prefix = prefix;
	w.nprev = 0;
	while (i < n) {
		/* a block ends at a line end (HTML) or a blank line:
		 * a line end after nothing but white space since the last */
		if (bk == NULL) {
			while (i < n && chunk_sep(s[i]))
				i++;
		} else {
			blank = 0;
			brk = 0;
			for (; i < n && chunk_sep(s[i]); i++) {
				if (s[i] == '\n') {
					brk |= bk->html || blank;
					blank = 1;
				} else if (s[i] != ' ' && s[i] != '\t' &&
				    s[i] != '\r')
					blank = 0;
			}
			if (brk)
				block_end(tl, bk);
		}
		b = i;
		hi = 0;
		while (i < n && !chunk_sep(s[i]))
			hi |= s[i++];
		if (i > b && (hi & 0x80 ? chunk_shown(&w, header, s + b,
		    i - b) : chunk(&w, header, s + b, i - b)) < 0)
			return -1;
	}
	if (bk != NULL)
		block_end(tl, bk);
	return 0;
}

int
tok_text(const struct tok_opts *o, const char *prefix, int header,
    const unsigned char *s, size_t n, struct toklist *tl)
{
	return text_run(o, prefix, header, s, n, tl, NULL);
}

int
tok_text_part(const struct tok_opts *o, const unsigned char *s, size_t n,
    int html, size_t part0, struct toklist *tl)
{
	struct blocks bk;

	bk.part0 = part0;
	bk.blk0 = part0;
	bk.words = 0;
	bk.html = html;
	bk.pairs = o->bigrams;
	return text_run(o, "", 0, s, n, tl, &bk);
}

/* ---- headers -------------------------------------------------------- */

/* a name and its length */
struct hname {
	const char *s;
	size_t len;
};
#define N(s)	{ s, sizeof(s) - 1 }

/* exact names (lower case) that carry no evidence of the post itself */
static const struct hname ignored_exact[] = {
	N("return-path"), N("delivered-to"), N("x-original-to"),
	N("envelope-to"), N("x-envelope-to"), N("x-envelope-from"),
	N("precedence"), N("errors-to"), N("sender"), N("mailing-list"),
	N("x-mailing-list"), N("x-mailman-version"), N("x-beenthere"),
	N("x-loop"), N("x-bogosity"), N("x-scanned-by"), N("x-mailscanner"),
	N("x-antispam"), N("status"), N("x-status"), N("x-keywords"),
	N("x-uidl"), N("lines"), N("content-length"), N("xref"), N("date"),
	N("x-virus-scanned"), N("x-virus-status"), N("x-spam"),
	N("x-razor-id"), N("x-pyzor"), N("x-dcc"), N("approved"),
	N("approved-by"), N("x-approved"), N("x-ack"), N("x-no-archive"),
	N("x-original-date"), N("x-egroups-return"), N("x-sender"),
	N("x-mailer-info"), N("x-list-administrivia"), N("x-topics"),
	N("x-rcpt-to"), N("x-sieve"), N("x-uid"),
	N("x-original-arrival-time"), N("x-received-date"),
	N("message-number"), N("x-message-number"), N("x-mail-from"),
	N("received-spf"), N("authentication-results"), N("arc-seal"),
	N("arc-message-signature"), N("arc-authentication-results"),
	N("dkim-signature"), N("domainkey-signature"),
	N("x-google-dkim-signature"), N("x-gm-message-state"),
	N("x-spam-relays-external"), N("x-spam-relays-internal"),
	N("x-spam-relays-trusted"), N("x-spam-relays-untrusted"),
	{ NULL, 0 }
};

/* name prefixes (lower case) ignored likewise */
static const struct hname ignored_prefix[] = {
	N("list-"), N("x-list"), N("x-spam-"), N("x-virus-"),
	N("x-mailscanner"), N("resent-"), N("original-"), N("x-bogosity"),
	N("x-antivirus"), N("x-yahoo"), N("x-egroups-"), N("x-mailman-"),
	N("x-ezmlm"), N("x-amavis"), N("x-ms-exchange-"),
	{ NULL, 0 }
};
#undef N

/* the longest name above, and then some: a longer name matches no exact
 * name, and its first bytes decide the prefixes */
#define IGNORED_NAME_MAX	40

int
tok_header_ignored(const char *name)
{
	char low[IGNORED_NAME_MAX + 1];
	const struct hname *h;
	size_t n;

	/* every header of every post comes here: fold the case once and
	 * compare lengths first (strcasecmp over the tables was a tenth
	 * of a batch's instructions) */
	for (n = 0; n < IGNORED_NAME_MAX && name[n] != '\0'; n++)
		low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ?
		    name[n] - 'A' + 'a' : name[n]);
	low[n] = '\0';
	if (n == 0)
		return 0;
	if (name[n] == '\0')
		for (h = ignored_exact; h->s != NULL; h++)
			if (h->len == n && h->s[0] == low[0] &&
			    memcmp(low, h->s, n) == 0)
				return 1;
	for (h = ignored_prefix; h->s != NULL; h++)
		if (h->len <= n && h->s[0] == low[0] &&
		    memcmp(low, h->s, h->len) == 0)
			return 1;
	return 0;
}

/* Received: the hosts and IP addresses named, not dates or queue ids */
static int
received(const struct tok_opts *o, const unsigned char *s, size_t n,
    struct toklist *tl)
{
	size_t i = 0, b, e, k, dots, alpha;

	while (i < n) {
		while (i < n && (chunk_sep(s[i]) || s[i] == ';' ||
		    s[i] == ','))
			i++;
		b = i;
		while (i < n && !chunk_sep(s[i]) && s[i] != ';' && s[i] != ',')
			i++;
		e = i;
		while (e > b && s[e - 1] == '.')
			e--;
		if (e - b < 4 || e - b > 100)
			continue;
		if (is_ipv4(s + b, e - b)) {
			if (emit(tl, "rcvd:ip:", s + b, e - b, 0) < 0)
				return -1;
			if (o->rcvd >= 2) {
				for (k = e, dots = 0; k > b; k--)
					if (s[k - 1] == '.' && ++dots <= 2 &&
					    emit(tl, "rcvd:ip:", s + b, k - 1 - b,
					    0) < 0)
						return -1;
			}
			continue;
		}
		for (k = b, dots = 0, alpha = 0; k < e; k++) {
			if (s[k] == '.')
				dots++;
			else if ((s[k] | 0x20) >= 'a' && (s[k] | 0x20) <= 'z')
				alpha++;
			else if (!(s[k] >= '0' && s[k] <= '9') && s[k] != '-')
				break;
		}
		if (k == e && dots > 0 && alpha > 0 &&
		    emit(tl, "rcvd:", s + b, e - b, 1) < 0)
			return -1;
	}
	return 0;
}

/* Content-Type value: "ct:type", "ct:charset:cs" (lower case) */
static int
content_type(const unsigned char *s, size_t n, struct toklist *tl)
{
	size_t i = 0, b;
	const unsigned char *cs;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	b = i;
	while (i < n && s[i] != ';' && s[i] != ' ' && s[i] != '\t')
		i++;
	if (i > b && emit(tl, "ct:", s + b, i - b, 1) < 0)
		return -1;
	for (; i + 8 <= n; i++) {
		if (strncasecmp((const char *)s + i, "charset=", 8) != 0)
			continue;
		cs = s + i + 8;
		b = 0;
		if (b < n - i - 8 && cs[0] == '"')
			cs++, i++;
		while (b < n - i - 8 && cs[b] != '"' && cs[b] != ';' &&
		    cs[b] != ' ' && cs[b] != '\t')
			b++;
		if (b > 0)
			return emit(tl, "ct:charset:", cs, b, 1);
		break;
	}
	return 0;
}

/* Message-ID: "msgid:DOMAIN" */
static int
msgid(const unsigned char *s, size_t n, struct toklist *tl)
{
	const unsigned char *at = memchr(s, '@', n);
	size_t e;

	if (at == NULL)
		return emit(tl, "msgid:", "none", 4, 0);
	at++;
	for (e = 0; at + e < s + n && at[e] != '>' && at[e] != ' '; e++)
		;
	return emit(tl, "msgid:", at, e, 1);
}

int
tok_header(const struct tok_opts *o, const char *name,
    const unsigned char *val, size_t n, unsigned depth, struct toklist *tl)
{
	char lname[48], pre[64];
	size_t i, nl = strlen(name);

	if (tok_header_ignored(name) || nl == 0)
		return 0;
	if (nl >= sizeof(lname))
		nl = sizeof(lname) - 1;
	for (i = 0; i < nl; i++)
		lname[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ?
		    name[i] - 'A' + 'a' : name[i]);
	lname[nl] = '\0';
	if (strcmp(lname, "content-type") == 0)
		return content_type(val, n, tl);
	if (strcmp(lname, "content-transfer-encoding") == 0) {
		while (n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\t'))
			n--;
		return emit(tl, "cte:", val, n, 1);
	}
	if (depth > 0) {
		/* headers of parts and nested messages: subject words only */
		if (strcmp(lname, "subject") == 0)
			return tok_text(o, "nsubj:", 0, val, n, tl);
		return 0;
	}
	if (o->hdr_names && emit(tl, "hdr:", lname, strlen(lname), 0) < 0)
		return -1;
	if (strcmp(lname, "subject") == 0)
		return tok_text(o, "subj:", 0, val, n, tl);
	if (strcmp(lname, "from") == 0 || strcmp(lname, "to") == 0 ||
	    strcmp(lname, "cc") == 0 || strcmp(lname, "reply-to") == 0) {
		snprintf(pre, sizeof(pre), "%s:", lname);
		return tok_text(o, pre, 1, val, n, tl);
	}
	if (strcmp(lname, "received") == 0)
		return o->rcvd ? received(o, val, n, tl) : 0;
	if (strcmp(lname, "x-mailer") == 0 ||
	    strcmp(lname, "user-agent") == 0) {
		unsigned char ua[60];
		size_t k = n > sizeof(ua) ? sizeof(ua) : n;

		for (i = 0; i < k; i++)
			ua[i] = val[i] < 0x20 || val[i] == 0x7f ? ' ' : val[i];
		if (emit(tl, "ua:", ua, k, 1) < 0)
			return -1;
		return tok_text(o, "ua:", 0, val, n, tl);
	}
	if (strcmp(lname, "message-id") == 0)
		return msgid(val, n, tl);
	if (strcmp(lname, "x-priority") == 0 ||
	    strcmp(lname, "x-msmail-priority") == 0 ||
	    strcmp(lname, "importance") == 0 ||
	    strcmp(lname, "organization") == 0 ||
	    strcmp(lname, "x-mimeole") == 0 ||
	    strcmp(lname, "mime-version") == 0) {
		snprintf(pre, sizeof(pre), "%s:", lname);
		return tok_text(o, pre, 0, val, n, tl);
	}
	return 0;
}
