/*
 * utf8.c - writing UTF-8 (the decoder is static inline in utf8.h)
 *
 * Writers append to a bounded struct buf.  The _cut forms never fail
 * for lack of room: they stop between characters and say so (1); they
 * fail (-1) only when memory runs out.
 */
#include "config.h"

#include "gate/util/buf.h"
#include "gate/util/utf8.h"

/* encode cp into u (4 bytes): its length */
static size_t
utf8_enc(unsigned long cp, unsigned char *u)
{
	size_t n;

	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = 0xFFFD;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return n;
}

/* one code point as UTF-8 */
int
utf8_put(struct buf *out, unsigned long cp)
{
	unsigned char u[4];

	return buf_add(out, u, utf8_enc(cp, u));
}

/* as much of the text as fits, cut between characters */
int
utf8_add_cut(struct buf *out, const unsigned char *p, size_t n)
{
	size_t room = out->max - out->len;

	if (n <= room)
		return buf_add(out, p, n);
	/* back off to the start of the character the cut falls in */
	while (room > 0 && (p[room] & 0xC0) == 0x80)
		room--;
	if (room > 0 && buf_add(out, p, room) < 0)
		return -1;
	return 1;
}

/* one code point, or nothing when it does not fit */
int
utf8_put_cut(struct buf *out, unsigned long cp)
{
	unsigned char u[4];
	size_t n = utf8_enc(cp, u);

	if (n > out->max - out->len)
		return 1;
	return buf_add(out, u, n);
}
