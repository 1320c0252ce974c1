/*
 * uu.h - uuencoding: the x-uuencode transfer encoding, and "begin 644
 * NAME" blocks inside text (how attachments travelled before MIME, and
 * how some mailers still send them)
 */
#ifndef LG_UU_H
#define LG_UU_H

#include <stddef.h>

struct buf;

/* uu_decode(): out had no room for all of it; the rest was not decoded */
#define UU_CUT	2

/* a uuencoded block found in text, as offsets into it */
struct uu_block {
	size_t begin;		/* the start of its "begin MODE NAME" */
	size_t end;		/* past its last line ("end" or data) */
	size_t name, namelen;	/* the NAME of the begin line */
};

/*
 * The first uuencoded block in p (n bytes) that starts at a line start:
 * a "begin" line (three or four octal digits and a name), at least one
 * well-formed data line right after it, the data lines, then an
 * optional empty line ("`" or " ") and "end".  Returns 1 (b set) or 0.
 * Linear in n; prose that merely says "begin 644" is not a block.
 */
int uu_find(const unsigned char *p, size_t n, struct uu_block *b);

/*
 * Decode uuencoded data into out (appended): the lines after a "begin"
 * line when there is one (else every line), up to an empty data line or
 * "end".  Returns 0 clean, 1 malformed lines seen (skipped), or'ed with
 * UU_CUT when out was full; -1 only when out of memory.  Output never
 * exceeds 3/4 of the input length.
 */
int uu_decode(const unsigned char *in, size_t n, struct buf *out);

#endif
