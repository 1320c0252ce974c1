/*
 * html.c - HTML to plain text for the tokenizer
 *
 * Input is hostile HTML (already UTF-8).  One linear pass: tags,
 * <script>, <style>, comments and declarations are dropped, entities
 * decoded, href/src URLs and alt/title text kept as words, block tags
 * turned into newlines so words do not glue together.  Invisible
 * characters used to split words (soft hyphen, zero-width ones) are
 * dropped.  Text a reader never sees (an element hidden by its style,
 * display:none, visibility:hidden, opacity:0 or a font size of 0, or by
 * the hidden attribute) goes to a buffer of its own when the caller
 * gives one, so that words split by hidden letters ("Mi", a hidden "x",
 * "crosoft") read as shown and hidden words stay apart.  A style is read
 * as a browser reads it, character references, CSS comments and escapes
 * included; when unsure (an escape in a
 * sheet or in what a descendant may set again), text counts as shown.
 * Unclosed constructs run to the end of the input.  Output beyond the
 * buffer's max is cut between characters (HTML_CUT).  Fails (-1) only
 * when memory runs out.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/mail/html.h"
#include "gate/util/buf.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"

/* longest tag or attribute name looked at */
#define TAG_MAX		16
/* longest entity name looked up */
#define ENT_MAX		10

struct ent {
	const char *name;
	unsigned long cp;
};

/* Latin-1 names, 160..255 in order */
static const char *const latin1[96] = {
	"nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect",
	"uml", "copy", "ordf", "laquo", "not", "shy", "reg", "macr",
	"deg", "plusmn", "sup2", "sup3", "acute", "micro", "para", "middot",
	"cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34",
	"iquest", "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring",
	"AElig", "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml", "Igrave",
	"Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute",
	"Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute",
	"Ucirc", "Uuml", "Yacute", "THORN", "szlig", "agrave", "aacute",
	"acirc", "atilde", "auml", "aring", "aelig", "ccedil", "egrave",
	"eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml",
	"eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml",
	"divide", "oslash", "ugrave", "uacute", "ucirc", "uuml", "yacute",
	"thorn", "yuml",
};

static const struct ent others[] = {
	{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' },
	{ "apos", '\'' }, { "euro", 0x20AC }, { "hellip", 0x2026 },
	{ "mdash", 0x2014 }, { "ndash", 0x2013 }, { "lsquo", 0x2018 },
	{ "rsquo", 0x2019 }, { "sbquo", 0x201A }, { "ldquo", 0x201C },
	{ "rdquo", 0x201D }, { "bdquo", 0x201E }, { "bull", 0x2022 },
	{ "trade", 0x2122 }, { "dagger", 0x2020 }, { "Dagger", 0x2021 },
	{ "permil", 0x2030 }, { "lsaquo", 0x2039 }, { "rsaquo", 0x203A },
	{ "OElig", 0x152 }, { "oelig", 0x153 }, { "Scaron", 0x160 },
	{ "scaron", 0x161 }, { "Yuml", 0x178 }, { "fnof", 0x192 },
	{ "circ", 0x2C6 }, { "tilde", 0x2DC }, { "ensp", 0x2002 },
	{ "emsp", 0x2003 }, { "thinsp", 0x2009 }, { "zwnj", 0x200C },
	{ "zwj", 0x200D }, { "lrm", 0x200E }, { "rlm", 0x200F },
	{ "larr", 0x2190 }, { "rarr", 0x2192 }, { "uarr", 0x2191 },
	{ "darr", 0x2193 }, { "hearts", 0x2665 }, { "check", 0x2713 },
};

/* Windows-1252 meanings of &#128; .. &#159; (as browsers read them) */
static const unsigned short c1map[32] = {
	0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178,
};

static const char *const blocks[] = {
	"address", "article", "blockquote", "br", "caption", "center",
	"dd", "div", "dl", "dt", "footer", "form", "h1", "h2", "h3", "h4",
	"h5", "h6", "head", "header", "hr", "html", "iframe", "img", "input",
	"li", "nav", "ol", "option", "p", "pre", "section", "select",
	"table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
	"body", "button", "textarea", "frame", "area", "meta",
};

/* elements that never hold anything: a hidden one hides only its own
 * attributes' text */
static const char *const voids[] = {
	"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
	"meta", "param", "source", "track", "wbr",
};

/* elements followed inside a hidden element (struct conv): deeper, it
 * ends, and what follows is shown */
#define OPEN_MAX	32
/* formatting elements followed outside hidden ones (struct conv): more,
 * and no font size or visibility hides anything any more */
#define AFE_MAX		32

/*
 * Where the text goes: out, or hidden inside a hidden element (when the
 * caller wants hidden text apart: hidden != NULL).  A hidden element
 * ends where a browser closes it: at its own end tag or any end tag of
 * an element not opened inside it (an ancestor's, or a stray one), and
 * at a start tag that closes an element it may be in or be (a <div>
 * closing a <p>, an <li> an <li>, a <td> a cell; closes()).  The
 * elements opened inside it are followed, OPEN_MAX deep.  When unsure,
 * it ends: its text then counts as shown, as before.  An element hidden
 * only by its font size hides its text, not its images' and links'
 * addresses.
 */
struct conv {
	struct buf *out, *hidden;
	struct buf *cur;		/* out, or hidden */
	char htag[TAG_MAX + 1];		/* the hidden element, "" when none */
	char open[OPEN_MAX][TAG_MAX + 1];	/* the elements open inside
						 * it, innermost last */
	unsigned nopen;
	unsigned char open_risk[OPEN_MAX];	/* ... each a formatting
						 * element that sets a font
						 * size or visibility
						 * (fmt_risk) */
	int popen, aopen;		/* a <p>, an <a> may be open outside */
	int tables;			/* a <table> may be open */
	int cell;			/* ... and a cell of it is open */
	int hin_table;			/* a table with no cell open when
					 * the hidden element (no table
					 * part) began: it may have been
					 * moved out in front of it */
	unsigned fmt;			/* formatting elements open outside */
	int hsurv_a;			/* an <a> opened inside the hidden
					 * element ended without its end tag */
	/* the formatting elements started and not ended by their end tag
	 * (a browser's list of active formatting elements, which it opens
	 * again, with their attributes, around what follows), each with
	 * whether it sets a font size or visibility (fmt_risk): one that
	 * does, reopened inside an element of zero font size or
	 * visibility, shows that element's text */
	struct {
		char name[TAG_MAX + 1];
		unsigned char risky;
	} afe[AFE_MAX];
	unsigned nafe;
	int afe_over;			/* ... more than AFE_MAX: unsure */
	int text_only;			/* hidden by its font size only */
	int any;			/* a hidden element was met */
	unsigned foreign;		/* <svg> and <math> open */
	int sheet;			/* sheet_overrides() of the part, -1
					 * until wanted */
};

/* r, the result of writing to c->cur: a full hidden buffer only drops
 * the rest of the hidden text (the shown text goes on) */
static int
soft(const struct conv *c, int r)
{
	return r == HTML_CUT && c->cur == c->hidden ? 0 : r;
}

/* code point of a named entity, or -1 */
static long
ent_lookup(const unsigned char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > ENT_MAX)
		return -1;
	for (i = 0; i < 96; i++)
		if (latin1[i][0] == s[0] && strlen(latin1[i]) == n &&
		    memcmp(latin1[i], s, n) == 0)
			return (long)(160 + i);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (others[i].name[0] == s[0] && strlen(others[i].name) == n &&
		    memcmp(others[i].name, s, n) == 0)
			return (long)others[i].cp;
	return -1;
}

/* append text (UTF-8): 0, HTML_CUT when out is full, -1 */
static int
put(struct buf *out, const unsigned char *p, size_t n)
{
	int r = utf8_add_cut(out, p, n);

	return r > 0 ? HTML_CUT : r;
}

/* append one ASCII byte: 0, HTML_CUT, -1 */
static int
putc1(struct buf *out, int c)
{
	unsigned char ch = (unsigned char)c;

	return put(out, &ch, 1);
}

/* put a decoded character, dropping invisible word splitters: 0,
 * HTML_CUT, -1 */
static int
put_cp(struct buf *out, unsigned long cp)
{
	int r;

	if (cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || cp == 0x2060 ||
	    cp == 0xFEFF)
		return 0;
	if (cp == 0xA0 || cp == 0)
		cp = ' ';
	r = utf8_put_cut(out, cp);
	return r > 0 ? HTML_CUT : r;
}

/* the code point of the character reference at in[i] == '&': sets *adv
 * (bytes used, 0 if it is none) */
static unsigned long
entity_cp(const unsigned char *in, size_t n, size_t i, size_t *adv)
{
	size_t p = i + 1, s;
	unsigned long cp = 0;
	long v;
	int digits = 0, big = 0;

	*adv = 0;
	if (p < n && in[p] == '#') {
		int hex = 0;

		p++;
		if (p < n && (in[p] == 'x' || in[p] == 'X')) {
			hex = 1;
			p++;
		}
		for (; p < n; p++, digits++) {
			int d;

			if (in[p] >= '0' && in[p] <= '9')
				d = in[p] - '0';
			else if (hex && in[p] >= 'a' && in[p] <= 'f')
				d = in[p] - 'a' + 10;
			else if (hex && in[p] >= 'A' && in[p] <= 'F')
				d = in[p] - 'A' + 10;
			else
				break;
			if (cp > 0x10FFFF)
				big = 1;
			else
				cp = cp * (hex ? 16 : 10) + (unsigned long)d;
		}
		if (digits == 0)
			return 0;
		if (p < n && in[p] == ';')
			p++;
		if (big || cp > 0x10FFFF)
			cp = 0xFFFD;
		else if (cp >= 0x80 && cp <= 0x9F)
			cp = c1map[cp - 0x80];
		*adv = p - i;
		return cp;
	}
	s = p;
	while (p < n && p - s <= ENT_MAX &&
	    ((in[p] >= 'a' && in[p] <= 'z') || (in[p] >= 'A' && in[p] <= 'Z') ||
	    (in[p] >= '0' && in[p] <= '9')))
		p++;
	if ((v = ent_lookup(in + s, p - s)) < 0)
		return 0;
	if (p < n && in[p] == ';')
		p++;
	*adv = p - i;
	return (unsigned long)v;
}

/* decode the entity at in[i] == '&': sets *adv (bytes used, 0 if not an
 * entity); 0, HTML_CUT or -1 */
static int
entity(const unsigned char *in, size_t n, size_t i, struct buf *out,
    size_t *adv)
{
	unsigned long cp = entity_cp(in, n, i, adv);

	return *adv == 0 ? 0 : put_cp(out, cp);
}

/* append text with entities decoded: 0, HTML_CUT or -1 */
static int
put_text(const unsigned char *in, size_t n, struct buf *out)
{
	size_t i = 0, run = 0, adv;
	int r;

	while (i < n) {
		const unsigned char *amp = memchr(in + i, '&', n - i);

		if (amp == NULL)
			break;
		i = (size_t)(amp - in);
		if ((r = put(out, in + run, i - run)) != 0 ||
		    (r = entity(in, n, i, out, &adv)) != 0)
			return r;
		if (adv == 0) {
			if ((r = putc1(out, '&')) != 0)
				return r;
			adv = 1;
		}
		i += adv;
		run = i;
	}
	return put(out, in + run, n - run);
}

/* an ASCII letter */
static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* HTML white space */
static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

/* lower-case name at in[p..]: copies up to TAG_MAX chars, returns end */
static size_t
get_name(const unsigned char *in, size_t n, size_t p, char *name)
{
	size_t k = 0;

	while (p < n && !is_space(in[p]) && in[p] != '>' && in[p] != '/' &&
	    in[p] != '=') {
		if (k < TAG_MAX) {
			int c = in[p];

			if (c >= 'A' && c <= 'Z')
				c = c - 'A' + 'a';
			name[k++] = (char)c;
		}
		p++;
	}
	name[k] = 0;
	return p;
}

/* is name one of the n names of list */
static int
in_list(const char *const *list, size_t n, const char *name)
{
	size_t k;

	/* the first letters before strcmp: a call for each of the 48 block
	 * names was 3% of training */
	for (k = 0; k < n; k++)
		if (list[k][0] == name[0] && strcmp(list[k], name) == 0)
			return 1;
	return 0;
}

/*
 * A CSS number at s[0..n) ("0", "0.5", ".0", "00px"): 1 when it is one,
 * with *zero (it is 0) and *below1 (it is below 1) set and *end at its
 * unit.
 */
static int
css_number(const char *s, size_t n, int *zero, int *below1, size_t *end)
{
	size_t i = 0;
	int digits = 0, dot = 0;

	*zero = *below1 = 1;
	if (i < n && s[i] == '+')
		i++;
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digits++;
			if (s[i] != '0') {
				*zero = 0;
				if (!dot)
					*below1 = 0;
			}
		} else if (s[i] == '.' && !dot && i + 1 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '9')
			dot = 1;	/* ("0." is no number) */
		else
			break;
	}
	*end = i;
	return digits > 0;
}

/* what a style does to its element (style_hides) */
#define HIDE_DISPLAY	1	/* display:none: it and all in it */
#define HIDE_VIS	2	/* visibility:hidden: unless a descendant
				 * shows itself again */
#define HIDE_FONT	4	/* a font size of (about) 0: its text, unless
				 * a descendant sets a size again */
#define SHOW_DISPLAY	8	/* display set to something shown: the hidden
				 * attribute is overridden */
#define HIDE_OPACITY	16	/* opacity:0: it and all in it */
/* ... and what a style sheet of the part may undo (sheet_overrides) */
#define SHEET_DISPLAY	32	/* it sets display: the hidden attribute is
				 * only the browser's own display:none */

/* units of a CSS length (and a percentage) a font size of 0 may have */
static const char *const len_units[] = {
	"", "%", "px", "pt", "pc", "in", "cm", "mm", "q", "em", "rem", "ex",
	"rex", "ch", "rch", "cap", "ic", "lh", "rlh", "vw", "vh", "vi", "vb",
	"vmin", "vmax", "svw", "svh", "lvw", "lvh", "dvw", "dvh", "cqw",
	"cqh", "cqi", "cqb", "cqmin", "cqmax",
};

/*
 * Copy the part of a declaration at s[*i..n) up to a ';' (or, with
 * bang, a '!') that is outside quotes and brackets, lower-cased, white
 * space cut at both ends and inside made one space, into v (at most vsz
 * - 1 bytes; *over set when more did not fit).  *i ends at the stop.
 */
static void
decl_part(const unsigned char *s, size_t n, size_t *i, int bang, char *v,
    size_t vsz, int *over)
{
	size_t k = 0;
	unsigned depth = 0;
	int quote = 0, gap = 0;

	for (; *i < n; (*i)++) {
		int c = s[*i];

		if (quote) {
			if (c == '\\' && *i + 1 < n)
				(*i)++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'')
			quote = c;
		else if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (depth == 0 && (c == ';' || (bang && c == '!')))
			break;
		if (is_space(c)) {
			gap = k > 0;
			continue;
		}
		if (k + 2 >= vsz) {
			*over = 1;
			continue;
		}
		if (gap)
			v[k++] = ' ';
		gap = 0;
		v[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	v[k] = '\0';
}

/*
 * What a style attribute's value does: HIDE_* and SHOW_DISPLAY bits.
 * display:none, visibility:hidden or collapse, opacity:0, a font size of
 * 0 (a length or percentage) or below 1px or 1pt (a later font
 * shorthand sets it again).  Declarations are read
 * as a browser reads them: property and value without case, split at
 * semicolons outside quotes and brackets, the last of a property winning
 * unless an earlier one is "!important"; one a browser drops (white
 * space inside a name or value, "0 px", "0foo", "!importantx") hides
 * nothing.  s is read as CSS after its character references, comments
 * and escapes (style_of).
 */
static int
style_hides(const unsigned char *s, size_t n)
{
	static const char *const props[] = { "display", "visibility",
	    "opacity", "font-size", "font" };
	struct { int set, imp, hides; } d[4];
	char prop[TAG_MAX + 1], val[16], bang[16];
	size_t i = 0, k, e, x;
	int zero, below1, hides, imp, r, over;

	memset(d, 0, sizeof(d));
	while (i < n) {
		while (i < n && (is_space(s[i]) || s[i] == ';'))
			i++;
		if (i >= n)
			break;
		over = 0;
		for (k = 0; i < n && s[i] != ':' && s[i] != ';'; i++)
			if (k < TAG_MAX)
				prop[k++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ?
				    s[i] - 'A' + 'a' : s[i]);
		/* (white space around the name only) */
		while (k > 0 && is_space(prop[k - 1]))
			k--;
		prop[k] = '\0';
		if (i >= n || s[i] == ';')
			continue;
		i++;
		decl_part(s, n, &i, 1, val, sizeof(val), &over);
		k = strlen(val);
		bang[0] = '\0';
		if (i < n && s[i] == '!') {
			i++;
			decl_part(s, n, &i, 0, bang, sizeof(bang), &over);
			/* "!" and anything but "important": dropped */
			if (strcmp(bang, "important") != 0)
				continue;
		}
		imp = bang[0] != '\0';
		for (x = 0; x < 5 && strcmp(prop, props[x]) != 0; x++)
			;
		if (x == 5)
			continue;
		/* (the font shorthand sets a font size: one it hides with is
		 * not looked for) */
		if (x == 4) {
			over = 1;
			x = 3;
		}
		if (d[x].set && d[x].imp && !imp)
			continue;
		switch (over ? -1 : (int)x) {
		case -1:
			/* (a value too long to be looked at shows) */
			hides = 0;
			break;
		case 0:
			hides = strcmp(val, "none") == 0;
			break;
		case 1:
			hides = strcmp(val, "hidden") == 0 ||
			    strcmp(val, "collapse") == 0;
			break;
		case 2:
			hides = css_number(val, k, &zero, &below1, &e) &&
			    zero && (e == k || strcmp(val + e, "%") == 0);
			break;
		default:
			hides = css_number(val, k, &zero, &below1, &e) &&
			    ((zero && in_list(len_units, sizeof(len_units) /
			    sizeof(len_units[0]), val + e)) ||
			    (below1 && (strcmp(val + e, "px") == 0 ||
			    strcmp(val + e, "pt") == 0)));
			break;
		}
		d[x].set = 1;
		d[x].imp = imp;
		d[x].hides = hides;
	}
	r = 0;
	if (d[0].hides)
		r |= HIDE_DISPLAY;
	if (d[2].hides)
		r |= HIDE_OPACITY;
	if (d[1].hides)
		r |= HIDE_VIS;
	if (d[3].hides)
		r |= HIDE_FONT;
	if (d[0].set && !d[0].hides)
		r |= SHOW_DISPLAY;
	return r;
}

/* the longest style attribute decoded on the stack for style_hides; a
 * longer one is decoded in the heap */
#define STYLE_MAX	1024
/* stands for a character that a character reference or a CSS escape
 * made and that no declaration looked at holds (anything but an ASCII
 * letter, digit, '-' or '_'): it matches nothing, splits nothing */
#define STYLE_ODD	'\001'

/* CSS's newline (after its preprocessing: CR, LF, FF) */
static int
css_newline(int c)
{
	return c == '\n' || c == '\r' || c == '\f';
}

/* a hexadecimal digit's value, or -1 */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* a character that stands for itself when a CSS escape makes it */
static int
css_plain(unsigned long cp)
{
	return cp < 0x80 && (is_alpha((int)cp) || (cp >= '0' && cp <= '9') ||
	    cp == '-' || cp == '_');
}

/*
 * CSS's reading of t[0..m) (a style attribute's value, its character
 * references decoded) into out (cap bytes): comments become a space, an
 * escape the character it makes (STYLE_ODD unless css_plain), and a
 * string ends at a newline, as CSS ends one.  Its length, or cap when it
 * does not fit.
 */
static size_t
css_read(const char *t, size_t m, char *out, size_t cap)
{
	size_t i = 0, k = 0, j, d;
	unsigned long cp;
	int quote = 0, c;

#define EMIT(ch) do { if (k >= cap) return cap; out[k++] = (char)(ch); } \
	while (0)
	while (i < m) {
		c = (unsigned char)t[i];
		if (!quote && c == '/' && i + 1 < m && t[i + 1] == '*') {
			for (j = i + 2; j + 1 < m && !(t[j] == '*' &&
			    t[j + 1] == '/'); j++)
				;
			i = j + 1 < m ? j + 2 : m;
			EMIT(' ');
			continue;
		}
		if (c == '\\') {
			if (i + 1 >= m) {		/* (at the end: U+FFFD) */
				EMIT(STYLE_ODD);
				i++;
			} else if (css_newline((unsigned char)t[i + 1])) {
				/* a string goes on on the next line; outside
				 * one, a backslash is itself */
				if (quote)
					i += t[i + 1] == '\r' && i + 2 < m &&
					    t[i + 2] == '\n' ? 3 : 2;
				else {
					EMIT(STYLE_ODD);
					i++;
				}
			} else if (hexval(t[i + 1]) >= 0) {
				cp = 0;
				for (j = i + 1, d = 0; j < m && d < 6 &&
				    hexval(t[j]) >= 0; j++, d++)
					cp = cp * 16 + (unsigned long)hexval(t[j]);
				if (j < m && t[j] == '\r' && j + 1 < m &&
				    t[j + 1] == '\n')
					j += 2;
				else if (j < m && is_space((unsigned char)t[j]))
					j++;
				EMIT(css_plain(cp) ? (int)cp : STYLE_ODD);
				i = j;
			} else {
				c = (unsigned char)t[i + 1];
				EMIT(css_plain((unsigned long)c) ? c :
				    STYLE_ODD);
				i += 2;
			}
			continue;
		}
		if (quote && css_newline(c)) {
			EMIT(quote);
			quote = 0;
		} else if (quote && c == quote)
			quote = 0;
		else if (!quote && (c == '"' || c == '\''))
			quote = c;
		EMIT(c);
		i++;
	}
#undef EMIT
	return k;
}

/*
 * What a style attribute's value does (style_hides), read as a browser
 * reads it: HTML decodes its character references first (a character
 * other than ASCII one made is STYLE_ODD), then CSS its comments and
 * escapes.  -1 only when out of memory.
 */
static int
style_of(const unsigned char *s, size_t n)
{
	char st[2][STYLE_MAX], *t = st[0], *css = st[1];
	size_t i, m = 0, adv, cap = STYLE_MAX;
	unsigned long cp;
	int r;

	if (memchr(s, '&', n) == NULL && memchr(s, '\\', n) == NULL &&
	    memchr(s, '/', n) == NULL)
		return style_hides(s, n);
	/*
	 * A longer one in the heap: its references decode to at most n
	 * bytes, and CSS's reading adds one for at most every two (the
	 * quote that a newline ends a string with).  Refused for its
	 * length, it hid nothing: a comment or a url() of a kilobyte
	 * beside display:none showed what it hid as words of the text
	 */
	if (n > STYLE_MAX) {
		cap = n + n / 2 + 1;
		if ((t = xmalloc(n + cap)) == NULL)
			return -1;
		css = t + n;
	}
	for (i = 0; i < n; ) {
		if (s[i] == '&' && (cp = entity_cp(s, n, i, &adv), adv > 0)) {
			t[m++] = cp > 0 && cp < 0x80 ? (char)cp : STYLE_ODD;
			i += adv;
		} else
			t[m++] = (char)s[i++];
	}
	if ((m = css_read(t, m, css, cap)) >= cap)
		r = SHOW_DISPLAY;
	else
		r = style_hides((const unsigned char *)css, m);
	if (t != st[0])
		xfree(t);
	return r;
}

/* a character of a tag name */
static int
name_char(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

/* how far ahead an element hidden in a way its descendants can undo is
 * looked into */
#define LOOK_MAX	512

/* what may set a visibility again inside an element (soft_hidden) */
static const char *const vis_stops[] = { "visibility" };
/* ... and a font size: a style's font-size or font, a <font size>, and
 * the form controls and (in quirks mode) tables that a browser gives a
 * font size of their own, and the headings and <big> that make a size
 * below 1px larger */
static const char *const font_stops[] = { "font", "button", "select",
    "input", "textarea", "table", "h1", "h2", "h3", "big" };

/*
 * An element from p (after its start tag) hidden by a visibility or a
 * font size, which a descendant can set again: is it hidden?  Only when
 * its end tag comes within LOOK_MAX bytes with none of the nstops words
 * stops anywhere before it.  The letters split by the zero-font trick
 * are a few; a template's container of font size 0 (a common way to
 * close the gaps between columns) is long and sets the size again
 * inside: shown.  Bounded: LOOK_MAX bytes an element.
 */
static int
soft_hidden(const unsigned char *in, size_t n, size_t p, const char *tname,
    const char *const *stops, size_t nstops)
{
	size_t e = n - p > LOOK_MAX ? p + LOOK_MAX : n, l = strlen(tname);
	size_t lp, k, x;
	unsigned depth = 0;
	int intag = 0;

	for (; p < e; p++) {
		/* a character reference or CSS escape in a tag (a style
		 * that may set it again, spelt so that no stop is seen):
		 * shown */
		if (in[p] == '<')
			intag = 1;
		else if (in[p] == '>')
			intag = 0;
		else if (intag && (in[p] == '&' || in[p] == '\\'))
			return 0;
		if (in[p] == '<' && p + 1 < e) {
			int cl = in[p + 1] == '/';

			k = p + 1 + (size_t)cl + l;
			if (k > e || strncasecmp((const char *)in + p + 1 +
			    cl, tname, l) != 0 || (k < n && name_char(in[k])))
				continue;
			if (!cl)
				depth++;
			else if (depth-- == 0)
				return 1;
		} else
			for (x = 0; x < nstops; x++)
				if ((in[p] | 0x20) == stops[x][0] &&
				    p + (lp = strlen(stops[x])) <= e &&
				    strncasecmp((const char *)in + p, stops[x],
				    lp) == 0)
					return 0;
	}
	return 0;
}

/* position of the case-insensitive closing tag "</name" from p, or n */
static size_t
find_close(const unsigned char *in, size_t n, size_t p, const char *name)
{
	size_t l = strlen(name);

	while (p < n) {
		const unsigned char *lt = memchr(in + p, '<', n - p);

		if (lt == NULL)
			return n;
		p = (size_t)(lt - in);
		if (p + 2 + l <= n && in[p + 1] == '/' &&
		    strncasecmp((const char *)in + p + 2, name, l) == 0)
			return p;
		p++;
	}
	return n;
}

/* does [s, s+n) hold word, case-insensitive */
static int
has_word(const unsigned char *s, size_t n, const char *word)
{
	size_t l = strlen(word), i;

	for (i = 0; i + l <= n; i++)
		if ((s[i] | 0x20) == word[0] &&
		    strncasecmp((const char *)s + i, word, l) == 0)
			return 1;
	return 0;
}

/* does [s, s+n) hold the shorthand "font:" (which sets a font size) */
static int
has_font(const unsigned char *s, size_t n)
{
	size_t i, k;

	for (i = 0; i + 4 < n; i++) {
		if ((s[i] | 0x20) != 'f' ||
		    strncasecmp((const char *)s + i, "font", 4) != 0)
			continue;
		for (k = i + 4; k < n && is_space(s[k]); k++)
			;
		if (k < n && s[k] == ':')
			return 1;
	}
	return 0;
}

/*
 * What the style sheets of a part (its <style> elements, wherever they
 * are: CSS applies to the whole document) may undo of an element's own
 * style: a declaration with "!important" beats it, so a property a
 * sheet names beside "!important" hides nothing (HIDE_* bits); a
 * visibility or a font size (font-size, or font) that a sheet sets at
 * all may be set again on a descendant, so hides nothing either; any
 * display set by a sheet (a reset's "section { display: block }")
 * overrides the hidden attribute (SHEET_DISPLAY).  A spammer's sheet can
 * thus only make hidden text count as shown, as it did before.  One
 * pass over the part, and one over each sheet.
 */
static int
sheet_overrides(const unsigned char *in, size_t n)
{
	size_t i = 0, b, e;
	int r = 0, imp;

	while (i + 6 < n) {
		const unsigned char *lt = memchr(in + i, '<', n - i - 6);

		if (lt == NULL)
			break;
		i = (size_t)(lt - in) + 1;
		if ((in[i] | 0x20) != 's' ||
		    strncasecmp((const char *)in + i, "style", 5) != 0 ||
		    name_char(in[i + 5]))
			continue;
		b = i + 5;
		e = find_close(in, n, b, "style");
		/* a CSS escape may spell any property or "important"
		 * (displ\61y): such a sheet may undo any hiding */
		if (memchr(in + b, '\\', e - b) != NULL)
			r |= SHEET_DISPLAY | HIDE_DISPLAY | HIDE_VIS |
			    HIDE_OPACITY | HIDE_FONT;
		imp = has_word(in + b, e - b, "important");
		if (has_word(in + b, e - b, "display"))
			r |= SHEET_DISPLAY | (imp ? HIDE_DISPLAY : 0);
		/* (a visibility or font size may also be set again on a
		 * descendant, important or not) */
		if (has_word(in + b, e - b, "visibility"))
			r |= HIDE_VIS;
		if (imp && has_word(in + b, e - b, "opacity"))
			r |= HIDE_OPACITY;
		if (has_word(in + b, e - b, "font-size") ||
		    has_font(in + b, e - b))
			r |= HIDE_FONT;
		i = e;
	}
	return r;
}

/* start tags that close an open <p> (HTML5 "close a p element") */
static const char *const p_closers[] = {
	"address", "article", "aside", "blockquote", "center", "details",
	"dialog", "dir", "div", "dl", "fieldset", "figcaption", "figure",
	"footer", "form", "header", "hgroup", "h1", "h2", "h3", "h4", "h5",
	"h6", "hr", "li", "dd", "dt", "listing", "main", "menu", "nav", "ol",
	"p", "plaintext", "pre", "search", "section", "summary", "table",
	"ul", "xmp",
};

/* what a <p> to close is not looked for beyond ("button scope") */
static const char *const p_scope[] = {
	"applet", "button", "caption", "html", "marquee", "object", "table",
	"td", "th", "template",
};

/* what an <li>, <dd> or <dt> to close is not looked for beyond: HTML5's
 * "special" elements but address, div and p */
static const char *const li_scope[] = {
	"applet", "article", "aside", "blockquote", "body", "button",
	"caption", "center", "details", "dialog", "dir", "dl", "fieldset",
	"figcaption", "figure", "footer", "form", "header", "hgroup", "h1",
	"h2", "h3", "h4", "h5", "h6", "html", "iframe", "listing", "main",
	"marquee", "menu", "nav", "object", "ol", "pre", "search", "section",
	"select", "summary", "table", "tbody", "td", "template", "textarea",
	"tfoot", "th", "thead", "tr", "ul", "xmp",
};

/* table parts: their start tag closes a cell, a row, a section */
static const char *const cells[] = {
	"caption", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr",
};

/* formatting elements: the end tag of one may move the blocks opened in
 * it out of the elements opened in it ("adoption agency") */
static const char *const formatting[] = {
	"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small",
	"strike", "strong", "tt", "u",
};

#define IN(list, name) in_list(list, sizeof(list) / sizeof(list[0]), name)

/* a formatting element starts (risky: it sets a font size or
 * visibility) */
static void
afe_add(struct conv *c, const char *name, int risky)
{
	if (c->nafe == AFE_MAX) {
		c->afe_over = 1;
		return;
	}
	memcpy(c->afe[c->nafe].name, name, TAG_MAX + 1);
	c->afe[c->nafe++].risky = (unsigned char)risky;
}

/* ... ends with its end tag: the last of that name goes */
static void
afe_end(struct conv *c, const char *name)
{
	size_t k;

	for (k = c->nafe; k > 0 && strcmp(c->afe[k - 1].name, name) != 0; k--)
		;
	if (k == 0)
		return;
	memmove(&c->afe[k - 1], &c->afe[k], (c->nafe - k) *
	    sizeof(c->afe[0]));
	c->nafe--;
}

/* may a formatting element a browser reopens show text that a zero font
 * size or visibility hides? */
static int
afe_risky(const struct conv *c)
{
	size_t k;

	for (k = 0; k < c->nafe; k++)
		if (c->afe[k].risky)
			return 1;
	return c->afe_over;
}

/*
 * Pop the elements open inside the hidden element from the k-th (0:
 * the outermost) on; own: the k-th ends with its own end tag.  A
 * formatting element among the others ends without it and stays on a
 * browser's list of active formatting elements (hidden_ends).
 */
static void
pop_to(struct conv *c, size_t k, int own)
{
	size_t i;

	for (i = k + (own ? 1 : 0); i < c->nopen; i++) {
		if (IN(formatting, c->open[i]))
			afe_add(c, c->open[i], c->open_risk[i]);
		if (strcmp(c->open[i], "a") == 0)
			c->hsurv_a = 1;
	}
	c->nopen = (unsigned)k;
}

/*
 * Is there among the elements open inside the hidden element (from the
 * innermost) one of the names a|b before one of scope: 1, and pops it
 * and those inside it; 0 when a scope element comes first; -1 when
 * neither (what it closes, if anything, is the hidden element or an
 * element around it).
 */
static int
open_inside(struct conv *c, const char *a, const char *b,
    const char *const *scope, size_t nscope)
{
	size_t k;

	for (k = c->nopen; k > 0; k--) {
		if (strcmp(c->open[k - 1], a) == 0 ||
		    (b != NULL && strcmp(c->open[k - 1], b) == 0)) {
			pop_to(c, k - 1, 0);
			return 1;
		}
		if (scope != NULL && in_list(scope, nscope, c->open[k - 1]))
			return 0;
	}
	return -1;
}

/* which table parts a table part's start tag closes: those of a rank
 * up to its own (start: as the start tag), -1 when not one */
static int
cell_rank(const char *name, int start)
{
	if (strcmp(name, "caption") == 0 || strcmp(name, "colgroup") == 0 ||
	    strcmp(name, "col") == 0)
		return start ? 3 : 0;
	if (strcmp(name, "td") == 0 || strcmp(name, "th") == 0)
		return 1;
	if (strcmp(name, "tr") == 0)
		return 2;
	if (strcmp(name, "tbody") == 0 || strcmp(name, "thead") == 0 ||
	    strcmp(name, "tfoot") == 0)
		return 3;
	return -1;
}

/* is the hidden element a table, a table's section or row, with no
 * cell open inside it: where a browser moves text and other elements
 * out, in front of the table ("foster parenting") */
static int
table_ctx(const struct conv *c)
{
	static const char *const parts[] = { "table", "tbody", "tfoot",
	    "thead", "tr" };
	size_t k;

	for (k = c->nopen; k > 0; k--) {
		if (IN(parts, c->open[k - 1]))
			return 1;
		if (IN(cells, c->open[k - 1]) ||
		    strcmp(c->open[k - 1], "template") == 0)
			return 0;
	}
	return IN(parts, c->htag);
}

/*
 * Does the start tag tname, met inside the hidden element, close it (or
 * may it: 1)?  HTML5's implied ends: what closes a <p> (a <div>, a
 * <table>, ...), an <li>, a <dd> or <dt>, a table cell or row, an
 * <option>, a heading, an <a>.  What it closes inside the hidden element
 * is popped (0).
 */
static int
closes(struct conv *c, const char *tname)
{
	const char *h = c->htag;
	int r;

	/* a block in a hidden phrasing element, in a formatting element
	 * (<b>, <u>, ...) whose end tag may move the block out of it */
	if (c->fmt > 0 && (IN(p_closers, tname) || IN(li_scope, tname)) &&
	    !IN(p_closers, h) && !IN(li_scope, h))
		return 1;
	/* a <table> in a table closes it (and all a browser moved out
	 * in front of it): the hidden element may be such, unless a table
	 * of its own is open inside it */
	if (c->hin_table && strcmp(tname, "table") == 0) {
		size_t k;

		for (k = c->nopen; k > 0 && strcmp(c->open[k - 1], "table") !=
		    0; k--)
			;
		if (k == 0)
			return 1;
	}
	/* in a table, what is no table part is moved in front of it */
	if (table_ctx(c) && !IN(cells, tname) &&
	    strcmp(tname, "template") != 0 && strcmp(tname, "style") != 0 &&
	    strcmp(tname, "script") != 0)
		return 1;
	if (IN(p_closers, tname)) {
		r = open_inside(c, "p", NULL, p_scope, sizeof(p_scope) /
		    sizeof(p_scope[0]));
		if (r < 0 && (strcmp(h, "p") == 0 || (c->popen &&
		    !IN(p_closers, h) && !IN(p_scope, h))))
			return 1;
	}
	if (strcmp(tname, "li") == 0 || strcmp(tname, "dd") == 0 ||
	    strcmp(tname, "dt") == 0) {
		r = tname[0] == 'l' ? open_inside(c, "li", NULL, li_scope,
		    sizeof(li_scope) / sizeof(li_scope[0])) : open_inside(c,
		    "dd", "dt", li_scope, sizeof(li_scope) /
		    sizeof(li_scope[0]));
		if (r < 0 && !IN(li_scope, h))
			return 1;
	}
	if (IN(cells, tname)) {
		int t = cell_rank(tname, 1);
		size_t k, low = c->nopen;

		for (k = c->nopen; k > 0; k--) {
			const char *o = c->open[k - 1];

			if (strcmp(o, "table") == 0 ||
			    strcmp(o, "template") == 0)
				break;
			if (cell_rank(o, 0) >= 0 && cell_rank(o, 0) <= t)
				low = k - 1;
		}
		/* a table part outside a table opened inside it closes the
		 * hidden element when it is a part this closes, or is in a
		 * cell or foster-parented before a table */
		if (k == 0 && strcmp(h, "table") != 0 &&
		    strcmp(h, "template") != 0 && (cell_rank(h, 0) < 0 ||
		    cell_rank(h, 0) <= t))
			return 1;
		pop_to(c, low, 0);
	}
	if (strcmp(tname, "option") == 0 || strcmp(tname, "optgroup") == 0) {
		if (c->nopen > 0 && strcmp(c->open[c->nopen - 1],
		    "option") == 0)
			c->nopen--;
		else if (c->nopen == 0 && (strcmp(h, "option") == 0 ||
		    (strcmp(tname, "optgroup") == 0 &&
		    strcmp(h, "optgroup") == 0)))
			return 1;
	}
	if (tname[0] == 'h' && tname[1] >= '1' && tname[1] <= '6' &&
	    tname[2] == '\0') {
		const char *cur = c->nopen > 0 ? c->open[c->nopen - 1] : h;

		if (cur[0] == 'h' && cur[1] >= '1' && cur[1] <= '6' &&
		    cur[2] == '\0') {
			if (c->nopen == 0)
				return 1;
			c->nopen--;
		}
	}
	if (strcmp(tname, "a") == 0 && open_inside(c, "a", NULL, NULL, 0) < 0 &&
	    (c->aopen || strcmp(h, "a") == 0))
		return 1;
	return 0;
}

/* does a formatting element's style [s, s+n) set a font size or a
 * visibility (or may it, spelt with a reference or an escape)? */
static int
fmt_risk(const unsigned char *s, size_t n)
{
	return has_word(s, n, "font") || has_word(s, n, "visib") ||
	    memchr(s, '&', n) != NULL || memchr(s, '\\', n) != NULL;
}

/*
 * The hidden element ends: the formatting elements it leaves open (and
 * it, when it is one and did not end with its own end tag) stay on a
 * browser's list of active formatting elements, to be reopened with
 * their attributes around what follows; so an <a> may be open outside
 * now, and a font size or visibility of theirs may show text again
 * (afe_add: a zero font size or visibility may then hide nothing).
 */
static void
hidden_ends(struct conv *c, int own_end)
{
	/* (its start tag was counted, outside) */
	if (own_end && IN(formatting, c->htag)) {
		if (c->fmt > 0)
			c->fmt--;
		afe_end(c, c->htag);
	}
	pop_to(c, 0, 0);
	if (!own_end && strcmp(c->htag, "a") == 0)
		c->hsurv_a = 1;
	if (c->hsurv_a)
		c->aopen = 1;
	c->hsurv_a = 0;
	c->htag[0] = '\0';
	c->nopen = 0;
}

/* the kept attributes (href, src, alt, title, action) of one tag */
#define KEEP_MAX	16

/* parse the tag at in[i] == '<' (a letter or '/' follows), its words
 * and line break going where c says: 0, HTML_CUT or -1; *end set to the
 * position after it, *skip to the element whose body is skipped */
static int
tag(const unsigned char *in, size_t n, size_t i, struct conv *c,
    size_t *end, const char **skip)
{
	char tname[TAG_MAX + 1], aname[TAG_MAX + 1];
	size_t p = i + 1, v0, v1, k, keep[KEEP_MAX][2], nkeep = 0;
	int closing = 0, hidden_attr = 0, style = 0, have_style = 0, hides;
	int first_style, block, isvoid, r, fmt_style, risky = 0;
	struct buf *to;

	*skip = NULL;
	if (in[p] == '/') {
		closing = 1;
		p++;
	}
	p = get_name(in, n, p, tname);
	for (;;) {
		while (p < n && (is_space(in[p]) || in[p] == '/'))
			p++;
		if (p >= n || in[p] == '>')
			break;
		p = get_name(in, n, p, aname);
		if (!closing && strcmp(aname, "hidden") == 0)
			hidden_attr = 1;
		/* only the first style counts, even empty or without a
		 * value: HTML5 drops every repeated attribute */
		first_style = strcmp(aname, "style") == 0 && !have_style;
		if (first_style)
			have_style = 1;
		while (p < n && is_space(in[p]))
			p++;
		if (p >= n || in[p] != '=')
			continue;
		p++;
		while (p < n && is_space(in[p]))
			p++;
		if (p < n && (in[p] == '"' || in[p] == '\'')) {
			const unsigned char *q = memchr(in + p + 1, in[p],
			    n - p - 1);

			v0 = p + 1;
			v1 = q ? (size_t)(q - in) : n;
			p = q ? v1 + 1 : n;
		} else {
			v0 = p;
			while (p < n && !is_space(in[p]) && in[p] != '>')
				p++;
			v1 = p;
		}
		if (closing || v1 <= v0 || aname[0] == 0 ||
		    strchr("hsat", aname[0]) == NULL)
			continue;
		if (strcmp(aname, "style") == 0) {
			if (first_style) {
				if ((style = style_of(in + v0, v1 - v0)) < 0)
					return -1;
				risky |= fmt_risk(in + v0, v1 - v0);
			}
		}
		else if (strcmp(aname, "size") == 0)
			risky = 1;
		else if (nkeep < KEEP_MAX && (strcmp(aname, "href") == 0 ||
		    strcmp(aname, "src") == 0 || strcmp(aname, "alt") == 0 ||
		    strcmp(aname, "title") == 0 ||
		    strcmp(aname, "action") == 0)) {
			keep[nkeep][0] = v0;
			keep[nkeep++][1] = v1;
		}
	}
	*end = p < n ? p + 1 : n;
	risky = risky && !closing && IN(formatting, tname);
	/* the hidden attribute is HTML's: an SVG or MathML element's hides
	 * nothing (and inside one, when unsure, nothing either) */
	if (strcmp(tname, "svg") == 0 || strcmp(tname, "math") == 0) {
		hidden_attr = 0;
		if (closing && c->foreign > 0)
			c->foreign--;
		else if (!closing && !(p < n && p > i && in[p - 1] == '/') &&
		    c->foreign + 1 != 0)
			c->foreign++;
	} else if (c->foreign > 0)
		hidden_attr = 0;
	block = in_list(blocks, sizeof(blocks) / sizeof(blocks[0]), tname);
	/* (looked up only where it matters: most tags have no style) */
	isvoid = (style || hidden_attr || c->htag[0] != '\0') &&
	    in_list(voids, sizeof(voids) / sizeof(voids[0]), tname);
	/* the hidden attribute is a style display:none, which the
	 * element's own style can override */
	if (c->hidden != NULL && (hidden_attr || (style & ~SHOW_DISPLAY))) {
		/* (the part's sheets read once, for the first element that
		 * may be hidden: most parts have none) */
		if (c->sheet < 0)
			c->sheet = sheet_overrides(in, n);
		if (hidden_attr && !(style & SHOW_DISPLAY) &&
		    !(c->sheet & SHEET_DISPLAY))
			style |= HIDE_DISPLAY;
		/* what a sheet's "!important" may show again is not hidden */
		style &= ~c->sheet;
	}
	/* (a <table> in a table may close it, so after any </table> no
	 * table may be open) */
	if (strcmp(tname, "table") == 0)
		c->tables = !closing;
	/* where the hidden element ends (before this tag's own text) */
	if (c->htag[0] != '\0' && !isvoid) {
		for (k = c->nopen; k > 0 && strcmp(c->open[k - 1], tname) != 0;
		    k--)
			;
		if (closing && k > 0)
			pop_to(c, k - 1, 1);	/* inside it */
		else if (closing && strcmp(tname, c->htag) == 0)
			hidden_ends(c, 1);	/* its own end: after its
						 * line break, below */
		else if (closing || closes(c, tname) ||
		    c->nopen == OPEN_MAX) {
			/* closed with an element it is in, or unsure */
			hidden_ends(c, 0);
			if ((r = soft(c, putc1(c->cur, '\n'))) != 0)
				return r;
			c->cur = c->out;
		} else {
			c->open_risk[c->nopen] = (unsigned char)risky;
			memcpy(c->open[c->nopen++], tname, TAG_MAX + 1);
		}
	}
	/* (a formatting element's own style is not one a browser may
	 * reopen inside it) */
	fmt_style = afe_risky(c);
	if (c->hidden != NULL && c->htag[0] == '\0' && c->cur == c->out) {
		/* (what may be open outside, for closes()) */
		if (strcmp(tname, "p") == 0)
			c->popen = !closing;
		else if (!closing && in_list(p_closers, sizeof(p_closers) /
		    sizeof(p_closers[0]), tname))
			c->popen = 0;
		if (strcmp(tname, "a") == 0)
			c->aopen = !closing;
		/* (a cell known open: when unsure, none) */
		if (strcmp(tname, "td") == 0 || strcmp(tname, "th") == 0)
			c->cell = !closing && c->tables;
		else if (IN(cells, tname) || strcmp(tname, "table") == 0)
			c->cell = 0;
		if (IN(formatting, tname)) {
			if (!closing && c->fmt + 1 != 0)
				c->fmt++;
			else if (closing && c->fmt > 0)
				c->fmt--;
			if (!closing)
				afe_add(c, tname, risky);
			else
				afe_end(c, tname);
		}
	}
	hides = 0;
	/* (a table part outside any table is an ignored tag) */
	if (c->hidden != NULL && c->htag[0] == '\0' && !closing && style &&
	    (c->tables || !IN(cells, tname))) {
		if (style & (HIDE_DISPLAY | HIDE_OPACITY))
			hides = 1;
		else if (!isvoid && (style & HIDE_VIS) && !fmt_style &&
		    soft_hidden(in, n, *end, tname, vis_stops, 1))
			hides = 1;
		else if (!isvoid && (style & HIDE_FONT) && !fmt_style &&
		    soft_hidden(in, n,
		    *end, tname, font_stops, sizeof(font_stops) /
		    sizeof(font_stops[0])))
			hides = 2;
	}
	if (hides) {
		/* a hidden element: its text (and, unless it is hidden by
		 * its font size only, its addresses and line break) and all
		 * it holds go to the hidden text */
		c->any = 1;
		c->cur = c->hidden;
		c->text_only = hides == 2;
		if ((r = soft(c, putc1(c->cur, '\n'))) != 0)
			return r;
		if (!isvoid) {
			memcpy(c->htag, tname, sizeof(c->htag));
			c->nopen = 0;
			c->hin_table = c->tables && !c->cell &&
			    strcmp(tname, "table") != 0 && !IN(cells, tname);
		}
	}
	/* (an element hidden by its font size shows its addresses: an image
	 * has no font size) */
	to = c->cur == c->hidden && c->text_only ? c->out : c->cur;
	for (k = 0; k < nkeep; k++)
		if ((r = soft(c, putc1(to, ' '))) != 0 ||
		    (r = soft(c, put_text(in + keep[k][0],
		    keep[k][1] - keep[k][0], to))) != 0 ||
		    (r = soft(c, putc1(to, ' '))) != 0)
			return r;
	to = c->cur;
	if (block && (r = soft(c, putc1(to, '\n'))) != 0)
		return r;
	if (c->cur == c->hidden && c->htag[0] == '\0') {
		/* a void hidden element, or the hidden element's end */
		if (!block && (r = soft(c, putc1(to, '\n'))) != 0)
			return r;
		c->cur = c->out;
	}
	if (!closing && strcmp(tname, "script") == 0)
		*skip = "script";
	else if (!closing && strcmp(tname, "style") == 0)
		*skip = "style";
	return 0;
}

/*
 * Where the comment opened by "<!--" at in[i] ends (the position after
 * it).  HTML5: at "-->" or "--!>", and "<!-->" and "<!--->" are whole
 * comments.  With no end at all HTML5 hides the rest of the part; older
 * browsers, which the spam of their day was written for, ended such a
 * comment at the next '>' ("<!--#rotate>"): so do we, and only drop the
 * rest when no '>' follows either.  *noend remembers that no "--" + '>'
 * follows, so many unclosed comments cost one scan, not one each.
 */
static size_t
comment_end(const unsigned char *in, size_t n, size_t i, int *noend)
{
	size_t p = i + 4;
	const unsigned char *e;

	if (p < n && in[p] == '>')
		return p + 1;
	if (p + 1 < n && in[p] == '-' && in[p + 1] == '>')
		return p + 2;
	while (!*noend && p + 2 < n) {
		const unsigned char *d = memchr(in + p, '-', n - p);

		if (d == NULL || (size_t)(d - in) + 2 >= n)
			break;
		p = (size_t)(d - in);
		if (in[p + 1] == '-' && in[p + 2] == '>')
			return p + 3;
		if (in[p + 1] == '-' && p + 3 < n && in[p + 2] == '!' &&
		    in[p + 3] == '>')
			return p + 4;
		p++;
	}
	*noend = 1;
	e = memchr(in + i + 4, '>', n - i - 4);
	return e ? (size_t)(e - in) + 1 : n;
}

/* the charset a <meta> tag in the first 4 KiB declares */
/* what a browser makes of a <meta> charset of Unicode: 1 a label of
 * UTF-16 (WHATWG Encoding), 2 another Unicode form whose bytes are not
 * ASCII (UTF-32, UCS-4, UTF-7), which browsers do not know, 0 neither */
static int
meta_unicode(const char *cs)
{
	static const char *const utf16[] = { "csunicode", "iso-10646-ucs-2",
	    "ucs-2", "unicode", "unicodefeff", "unicodefffe", "utf-16",
	    "utf-16be", "utf-16le" };
	static const char *const other[] = { "utf-16", "utf16", "utf-32",
	    "utf32", "ucs-", "ucs2", "ucs4", "utf-7", "utf7", "unicode" };
	size_t i;

	for (i = 0; i < sizeof(utf16) / sizeof(utf16[0]); i++)
		if (strcmp(cs, utf16[i]) == 0)
			return 1;
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (strncmp(cs, other[i], strlen(other[i])) == 0)
			return 2;
	return 0;
}

int
html_meta_charset(const unsigned char *in, size_t n, char *cs, size_t cssz)
{
	size_t i = 0, e, p, k;

	if (n > 4096)
		n = 4096;
	while (i + 5 < n) {
		const unsigned char *lt = memchr(in + i, '<', n - i);

		if (lt == NULL)
			return 0;
		i = (size_t)(lt - in) + 1;
		if (i + 4 > n || strncasecmp((const char *)in + i, "meta",
		    4) != 0)
			continue;
		for (e = i; e < n && in[e] != '>'; e++)
			;
		for (p = i + 4; p + 7 <= e; p++) {
			if (strncasecmp((const char *)in + p, "charset",
			    7) != 0)
				continue;
			p += 7;
			while (p < e && is_space(in[p]))
				p++;
			if (p >= e || in[p] != '=')
				continue;
			p++;
			while (p < e && (is_space(in[p]) || in[p] == '"' ||
			    in[p] == '\''))
				p++;
			for (k = 0; p < e && k + 1 < cssz && (is_alpha(in[p]) ||
			    (in[p] >= '0' && in[p] <= '9') || in[p] == '-' ||
			    in[p] == '_' || in[p] == '.' || in[p] == ':');
			    p++, k++)
				cs[k] = (char)(in[p] >= 'A' && in[p] <= 'Z' ?
				    in[p] - 'A' + 'a' : in[p]);
			cs[k] = 0;
			if (k == 0)
				continue;
			/*
			 * As a browser's prescan: bytes that name their
			 * charset in ASCII are no UTF-16 (a page naming it
			 * is read as UTF-8), and a charset whose bytes are
			 * not ASCII that browsers do not know (UTF-32,
			 * UTF-7) is no answer.  Taken as named, such a
			 * meta turned the words a browser shows into CJK
			 * pairs
			 */
			switch (meta_unicode(cs)) {
			case 1:
				if (cssz < sizeof("utf-8"))
					return 0;
				memcpy(cs, "utf-8", sizeof("utf-8"));
				return 1;
			case 2:
				cs[0] = 0;
				break;
			default:
				return 1;
			}
			break;
		}
		i = e;
	}
	return 0;
}

/* text p[0..n) (with an entity: '&' last) in a hidden table outside
 * its cells is moved in front of the table by a browser: shown, and the
 * hidden element ends there.  0, HTML_CUT or -1 */
static int
fostered(struct conv *c, const unsigned char *p, size_t n)
{
	size_t k;
	int r;

	if (c->htag[0] == '\0' || c->cur != c->hidden || !table_ctx(c))
		return 0;
	for (k = 0; k < n && is_space(p[k]); k++)
		;
	if (k == n)
		return 0;
	hidden_ends(c, 0);
	r = soft(c, putc1(c->hidden, '\n'));
	c->cur = c->out;
	return r;
}

/* HTML to text in one pass */
int
html_to_text(const unsigned char *in, size_t n, struct buf *out,
    struct buf *hidden)
{
	struct conv c;
	size_t i = 0, run = 0, adv, end, h0 = hidden ? hidden->len : 0;
	const char *skip;
	int r, noend = 0;

	memset(&c, 0, sizeof(c));
	c.out = c.cur = out;
	c.hidden = hidden;
	c.sheet = -1;		/* sheet_overrides(), once it is wanted */
	while (i < n) {
		unsigned char ch = in[i];

		if (ch != '<' && ch != '&') {
			i++;
			continue;
		}
		if ((r = fostered(&c, in + run, i - run + (ch == '&'))) != 0 ||
		    (r = soft(&c, put(c.cur, in + run, i - run))) != 0)
			goto done;
		if (ch == '&') {
			if ((r = soft(&c, entity(in, n, i, c.cur, &adv))) != 0)
				goto done;
			if (adv == 0) {
				if ((r = soft(&c, putc1(c.cur, '&'))) != 0)
					goto done;
				adv = 1;
			}
			run = i += adv;
			continue;
		}
		if (i + 3 < n && memcmp(in + i, "<!--", 4) == 0) {
			run = i = comment_end(in, n, i, &noend);
			continue;
		}
		/*
		 * HTML5: "<!" and "<?" open a bogus comment that runs to the
		 * next '>'; so does "</" before anything but a letter ("</
		 * foo>"), and "</>" is dropped.  G</>UA</ >RA</ x>NT reads
		 * GUARANT, as a browser shows it.
		 */
		if (i + 1 < n && (in[i + 1] == '!' || in[i + 1] == '?' ||
		    (in[i + 1] == '/' && i + 2 < n && !is_alpha(in[i + 2])))) {
			const unsigned char *e = memchr(in + i, '>', n - i);

			run = i = e ? (size_t)(e - in) + 1 : n;
			continue;
		}
		if (i + 1 < n && (is_alpha(in[i + 1]) || (in[i + 1] == '/' &&
		    i + 2 < n && is_alpha(in[i + 2])))) {
			if ((r = tag(in, n, i, &c, &end, &skip)) != 0)
				goto done;
			i = end;
			if (skip)
				i = find_close(in, n, i, skip);
			run = i;
			continue;
		}
		run = i++;		/* a lone '<' is text */
	}
	if ((r = fostered(&c, in + run, n - run)) == 0)
		r = soft(&c, put(c.cur, in + run, n - run));
done:
	if (r < 0)
		return -1;
	/* HTML_HIDDEN when what was hidden holds more than white space (an
	 * empty hidden element hides nothing) */
	for (i = h0; c.any && i < hidden->len; i++)
		if (!is_space(hidden->data[i]))
			return r | HTML_HIDDEN;
	return r;
}
