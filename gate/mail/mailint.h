/*
 * mailint.h - small helpers shared by the mail parser's files (not an
 * interface: the modules' own headers are)
 */
#ifndef LG_MAILINT_H
#define LG_MAILINT_H

/* value of a hex digit, or -1 (quoted-printable, RFC 2047 Q, RFC 2231
 * %XX) */
static inline int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* white space in a header value, line breaks included */
static inline int
is_wsp(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

#endif
