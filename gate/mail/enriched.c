/*
 * enriched.c - text/enriched (RFC 1896) and text/richtext (RFC 1341) to
 * plain text
 *
 * Input is hostile UTF-8 text.  One linear pass: a command is '<', an
 * optional '/', then up to 60 letters, digits and '-' and '>'; anything
 * else after '<' is text.  Commands are dropped (their words are
 * formatting, not content: "bold", "italic", "bigger"), and so is what
 * <param> holds (colours, font names) and richtext's <comment>; an
 * unclosed <param> runs to the end.  Output never exceeds the input;
 * beyond out's max it is cut between characters (ENRICHED_CUT).  Fails
 * (-1) only when memory runs out.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "gate/mail/enriched.h"
#include "gate/util/buf.h"
#include "gate/util/utf8.h"

/* longest command name (RFC 1896: at most 60 characters) */
#define CMD_MAX		60

/* append text: 0, ENRICHED_CUT, -1 */
static int
put(struct buf *out, const unsigned char *p, size_t n)
{
	int r = utf8_add_cut(out, p, n);

	return r > 0 ? ENRICHED_CUT : r;
}

/* a command at in[i] == '<': its end (after '>'), name span and
 * closing flag; 0 when it is not one */
static size_t
command(const unsigned char *in, size_t n, size_t i, size_t *name,
    size_t *nlen, int *closing)
{
	size_t p = i + 1, s;

	*closing = 0;
	if (p < n && in[p] == '/') {
		*closing = 1;
		p++;
	}
	s = p;
	while (p < n && p - s <= CMD_MAX && ((in[p] >= 'a' && in[p] <= 'z') ||
	    (in[p] >= 'A' && in[p] <= 'Z') || (in[p] >= '0' && in[p] <= '9') ||
	    in[p] == '-'))
		p++;
	if (p == s || p - s > CMD_MAX || p >= n || in[p] != '>')
		return 0;
	*name = s;
	*nlen = p - s;
	return p + 1;
}

/* 1 if the command name [s, s+l) is want (case-insensitive) */
static int
is_cmd(const unsigned char *s, size_t l, const char *want)
{
	return l == strlen(want) && strncasecmp((const char *)s, want, l) == 0;
}

/* position of the closing "</want>" from p, or n */
static size_t
find_end(const unsigned char *in, size_t n, size_t p, const char *want)
{
	size_t name, nlen, e;
	int closing;

	while (p < n) {
		const unsigned char *lt = memchr(in + p, '<', n - p);

		if (lt == NULL)
			return n;
		p = (size_t)(lt - in);
		if ((e = command(in, n, p, &name, &nlen, &closing)) != 0 &&
		    closing && is_cmd(in + name, nlen, want))
			return e;
		p++;
	}
	return n;
}

/* formatted text to plain text */
int
enriched_to_text(const unsigned char *in, size_t n, int richtext,
    struct buf *out)
{
	size_t i = 0, run = 0, e, name, nlen;
	int r, closing;

	while (i < n) {
		const unsigned char *lt = memchr(in + i, '<', n - i);

		if (lt == NULL)
			break;
		i = (size_t)(lt - in);
		if ((r = put(out, in + run, i - run)) != 0)
			return r;
		run = i;
		if (!richtext && i + 1 < n && in[i + 1] == '<') {
			if ((r = put(out, (const unsigned char *)"<", 1)) != 0)
				return r;
			run = i += 2;
			continue;
		}
		if ((e = command(in, n, i, &name, &nlen, &closing)) == 0) {
			i++;			/* a '<' that is text */
			continue;
		}
		run = i = e;
		if (closing)
			continue;
		if (is_cmd(in + name, nlen, "param") || (richtext &&
		    is_cmd(in + name, nlen, "comment"))) {
			run = i = find_end(in, n, i, richtext &&
			    is_cmd(in + name, nlen, "comment") ? "comment" :
			    "param");
			continue;
		}
		if (richtext && is_cmd(in + name, nlen, "lt")) {
			if ((r = put(out, (const unsigned char *)"<", 1)) != 0)
				return r;
		} else if (richtext && is_cmd(in + name, nlen, "nl")) {
			if ((r = put(out, (const unsigned char *)"\n", 1)) != 0)
				return r;
		}
		/* any other command is formatting: dropped, joining its
		 * neighbours as a reader shows them */
	}
	return put(out, in + run, n - run);
}
