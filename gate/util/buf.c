/*
 * buf.c - bounded byte buffer
 *
 * Trusts nothing about sizes: every growth is checked against the
 * buffer's maximum and against size_t overflow.  Fails with -1 (never
 * exits); the buffer is unchanged after a failed add.
 */
#include "config.h"

#include <stdint.h>
#include <limits.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/xalloc.h"

void
buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

int
buf_reserve(struct buf *b, size_t n)
{
	size_t need, ncap, capmax;
	unsigned char *p;

	if (n > b->max || b->len > b->max - n)
		return -1;
	if (b->len + n == SIZE_MAX)		/* no room for the NUL */
		return -1;
	need = b->len + n + 1;			/* room for the NUL */
	capmax = b->max == SIZE_MAX ? SIZE_MAX : b->max + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2) {
			ncap = need;
			break;
		}
		ncap *= 2;
	}
	if (ncap > capmax)
		ncap = capmax;
	if ((p = xrealloc(b->data, ncap)) == NULL)
		return -1;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
	return 0;
}

long
buf_add_trunc(struct buf *b, const void *p, size_t n)
{
	size_t room = b->max - b->len;

	if (n > room)
		n = room;
	if (n > (size_t)LONG_MAX)
		n = (size_t)LONG_MAX;
	if (buf_add(b, p, n) < 0)
		return -1;
	return (long)n;
}

int
buf_addc(struct buf *b, int c)
{
	unsigned char ch = (unsigned char)c;

	return buf_add(b, &ch, 1);
}

int
buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

void
buf_free(struct buf *b)
{
	xfree(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *
buf_str(const struct buf *b)
{
	return b->data ? (const char *)b->data : "";
}
