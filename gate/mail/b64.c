/*
 * b64.c - the base64 transfer decoding (RFC 2045)
 *
 * Input is hostile: any byte sequence is decoded without overrun.
 * Garbage is skipped and reported through the return value.  Output
 * never exceeds 3/4 of the input length plus 3; when out has less room
 * than that, only the input that fits is decoded (B64_CUT).  Fails (-1)
 * only when memory runs out.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "gate/mail/b64.h"
#include "gate/util/buf.h"

/* 0..63 for the alphabet, 64 '=', 65 white space, 66 garbage */
#define B64_PAD		64
#define B64_WS		65
#define B64_BAD		66

static unsigned char b64tab[256];
static pthread_once_t b64once = PTHREAD_ONCE_INIT;

/* fill the decoding table, once (b64_decode runs in the trainer's
 * worker threads too) */
static void
b64_setup(void)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	int i;

	for (i = 0; i < 256; i++)
		b64tab[i] = B64_BAD;
	for (i = 0; i < 64; i++)
		b64tab[(unsigned char)a[i]] = (unsigned char)i;
	b64tab['='] = B64_PAD;
	b64tab[' '] = b64tab['\t'] = b64tab['\r'] = b64tab['\n'] = B64_WS;
}

/* base64 to bytes, garbage skipped */
int
b64_decode(const unsigned char *in, size_t n, struct buf *out)
{
	unsigned char *o;
	unsigned long acc = 0;
	size_t i;
	int q = 0, bad = 0, pads = 0, cut = 0;

	pthread_once(&b64once, b64_setup);
	if (n / 4 * 3 + 3 > out->max - out->len) {
		size_t room = out->max - out->len;

		n = room < 3 ? 0 : (room - 3) / 3 * 4;
		cut = B64_CUT;
	}
	if (buf_reserve(out, n / 4 * 3 + 3) < 0)
		return -1;
	o = out->data + out->len;
	for (i = 0; i < n; i++) {
		unsigned char v = b64tab[in[i]];

		if (v < 64) {
			if (pads) {		/* data after padding: a new run */
				pads = 0;
			}
			acc = (acc << 6) | v;
			if (++q == 4) {
				*o++ = (unsigned char)(acc >> 16);
				*o++ = (unsigned char)(acc >> 8);
				*o++ = (unsigned char)acc;
				q = 0;
				acc = 0;
			}
		} else if (v == B64_PAD) {
			if (q == 2) {
				*o++ = (unsigned char)(acc >> 4);
				pads = 1;	/* one more '=' expected */
			} else if (q == 3) {
				*o++ = (unsigned char)(acc >> 10);
				*o++ = (unsigned char)(acc >> 2);
				pads = 2;
			} else if (q == 0 && pads == 1) {
				pads = 2;
			} else
				bad = 1;	/* '=' out of place */
			q = 0;
			acc = 0;
		} else if (v == B64_BAD)
			bad = 1;
	}
	if (pads == 1)
		bad = 1;
	if (q == 2) {			/* missing padding: keep what is there */
		*o++ = (unsigned char)(acc >> 4);
		bad = 1;
	} else if (q == 3) {
		*o++ = (unsigned char)(acc >> 10);
		*o++ = (unsigned char)(acc >> 2);
		bad = 1;
	} else if (q == 1)
		bad = 1;
	out->len = (size_t)(o - out->data);
	out->data[out->len] = 0;
	return bad | cut;
}
