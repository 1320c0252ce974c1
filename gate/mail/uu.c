/*
 * uu.c - uuencoding: the x-uuencode transfer encoding and "begin 644"
 * blocks inside text
 *
 * Input is hostile: any byte sequence is scanned line by line, once, and
 * decoded without overrun.  A uuencoded line is a length character
 * (' ' + bytes, at most 45) and groups of four characters in ' '..'`'
 * each holding three bytes; transports strip trailing spaces, so a line
 * may be up to two characters short.  Malformed lines are skipped and
 * reported through the return value.  Fails (-1) only when memory runs
 * out.
 */
#include "config.h"

#include <string.h>

#include "gate/mail/uu.h"
#include "gate/util/buf.h"

/* the value of a uuencoding character ('`' stands for 0 like ' ') */
#define UUVAL(c)	(((c) - ' ') & 63)

/* the line at p[i..n): its length without CR LF in *ll; the next line */
static size_t
next_line(const unsigned char *p, size_t n, size_t i, size_t *ll)
{
	const unsigned char *nl = memchr(p + i, '\n', n - i);
	size_t e = nl ? (size_t)(nl - p) : n;

	*ll = e - i;
	while (*ll > 0 && (p[i + *ll - 1] == '\r' || p[i + *ll - 1] == ' ' ||
	    p[i + *ll - 1] == '\t'))
		(*ll)--;
	return nl ? e + 1 : n;
}

/* bytes a data line holds (1..45), 0 for an empty one ("`", " " or
 * nothing), -1 when it is not a uuencoded line */
static int
data_line(const unsigned char *l, size_t ll)
{
	size_t i, len, want;

	if (ll == 0)
		return 0;
	for (i = 0; i < ll; i++)
		if (l[i] < ' ' || l[i] > '`')
			return -1;
	len = UUVAL(l[0]);
	if (len > 45)
		return -1;
	if (len == 0)
		return ll == 1 ? 0 : -1;
	want = (len + 2) / 3 * 4;
	/* trailing spaces may be gone; a checksum character may follow */
	if (ll - 1 + 2 < want || ll - 1 > want + 1)
		return -1;
	return (int)len;
}

/* "begin" + octal mode + name: 1 (name span set) or 0 */
static int
begin_line(const unsigned char *l, size_t ll, size_t *name, size_t *nlen)
{
	size_t i = 6, d;

	if (ll < 6 || memcmp(l, "begin ", 6) != 0)
		return 0;
	for (d = 0; i < ll && l[i] >= '0' && l[i] <= '7'; i++)
		d++;
	if (d < 3 || d > 4 || i >= ll || l[i] != ' ')
		return 0;
	while (i < ll && l[i] == ' ')
		i++;
	if (i >= ll)
		return 0;
	*name = i;
	*nlen = ll - i;
	return 1;
}

/* the first block at a line start */
int
uu_find(const unsigned char *p, size_t n, struct uu_block *b)
{
	size_t i = 0, next, ll, name, nlen, j, jn, jl;

	while (i < n) {
		next = next_line(p, n, i, &ll);
		if (p[i] != 'b' || !begin_line(p + i, ll, &name, &nlen)) {
			i = next;
			continue;
		}
		/* at least one data line, then more, an empty one, "end" */
		j = next;
		if (j >= n)
			return 0;
		jn = next_line(p, n, j, &jl);
		if (data_line(p + j, jl) <= 0) {
			i = next;
			continue;
		}
		b->begin = i;
		b->name = i + name;
		b->namelen = nlen;
		for (;;) {
			int k = data_line(p + j, jl);

			if (k < 0)
				break;
			j = jn;
			if (k == 0 || j >= n)
				break;
			jn = next_line(p, n, j, &jl);
		}
		b->end = j;
		if (j < n) {
			jn = next_line(p, n, j, &jl);
			if (jl == 3 && memcmp(p + j, "end", 3) == 0)
				b->end = jn;
		}
		return 1;
	}
	return 0;
}

/* uuencoded lines to bytes */
int
uu_decode(const unsigned char *in, size_t n, struct buf *out)
{
	size_t i = 0, next, ll, k, room, want, name, nlen;
	unsigned char *o, *lim;
	int bad = 0, cut = 0, seen = 0;

	/* start after a begin line when there is one */
	while (i < n) {
		next = next_line(in, n, i, &ll);
		if (begin_line(in + i, ll, &name, &nlen)) {
			seen = 1;
			i = next;
			break;
		}
		if (ll > 0 && data_line(in + i, ll) > 0)
			break;		/* data without a begin line */
		i = next;
	}
	if (!seen && i >= n)
		i = 0;
	room = out->max - out->len;
	want = n / 4 * 3 + 3;
	if (want > room)
		want = room;
	if (buf_reserve(out, want) < 0)
		return -1;
	o = out->data + out->len;
	lim = o + want;
	while (i < n) {
		const unsigned char *l = in + i;
		int len;

		next = next_line(in, n, i, &ll);
		i = next;
		if (ll == 3 && memcmp(l, "end", 3) == 0)
			break;
		if ((len = data_line(l, ll)) < 0) {
			bad = 1;
			continue;
		}
		if (len == 0)
			break;
		for (k = 1; len > 0; k += 4) {
			unsigned c0 = k < ll ? UUVAL(l[k]) : 0;
			unsigned c1 = k + 1 < ll ? UUVAL(l[k + 1]) : 0;
			unsigned c2 = k + 2 < ll ? UUVAL(l[k + 2]) : 0;
			unsigned c3 = k + 3 < ll ? UUVAL(l[k + 3]) : 0;
			unsigned char t[3];
			int m = len < 3 ? len : 3, q;

			t[0] = (unsigned char)(c0 << 2 | c1 >> 4);
			t[1] = (unsigned char)(c1 << 4 | c2 >> 2);
			t[2] = (unsigned char)(c2 << 6 | c3);
			if ((size_t)(lim - o) < (size_t)m) {
				cut = UU_CUT;
				goto done;
			}
			for (q = 0; q < m; q++)
				*o++ = t[q];
			len -= m;
		}
	}
done:
	out->len = (size_t)(o - out->data);
	out->data[out->len] = 0;
	return bad | cut;
}
