/*
 * buf.h - one bounded, binary-safe, growable byte buffer
 *
 * Every buffer has a maximum; growth is overflow-checked; data is always
 * NUL-terminated (data[len] == 0) but binary-safe: use len, not strlen.
 */
#ifndef LG_BUF_H
#define LG_BUF_H

#include <stddef.h>

struct buf {
	unsigned char *data;	/* NULL until the first add */
	size_t len, cap, max;	/* max: most bytes this buffer may hold */
};

#define BUF_INIT(m) { NULL, 0, 0, (m) }

/* set up an empty buffer that will hold at most max bytes */
void buf_init(struct buf *b, size_t max);
/* append n bytes: 0, or -1 (past max, or out of memory; b unchanged) */
int buf_add(struct buf *b, const void *p, size_t n);
/* append one byte: 0 or -1 */
int buf_addc(struct buf *b, int c);
/* append a C string: 0 or -1 */
int buf_adds(struct buf *b, const char *s);
/* append as much of p as fits below max: returns bytes added (never fails
 * for lack of room; -1 only when out of memory) */
long buf_add_trunc(struct buf *b, const void *p, size_t n);
/* make room for n more bytes: 0 or -1 */
int buf_reserve(struct buf *b, size_t n);
/* empty it, keep the memory */
void buf_reset(struct buf *b);
/* release the memory */
void buf_free(struct buf *b);
/* the data as a C string (never NULL) */
const char *buf_str(const struct buf *b);

#endif
