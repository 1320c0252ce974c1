/*
 * codec.c - MIME transfer decodings: base64 and quoted-printable
 *
 * Input is hostile: any byte sequence is decoded without overrun.
 * Garbage is skipped (base64) or kept literally (quoted-printable) and
 * reported through the return value; the only failure (-1) is the
 * output buffer refusing to grow (its maximum, or out of memory).
 * Output never exceeds the input length, so callers can size buffers.
 */
#include "config.h"

#include <string.h>

#include "gate/util/buf.h"
#include "gate/mail/mail.h"
#include "gate/mail/mailint.h"

/* 0..63 for the alphabet, 64 '=', 65 white space, 66 garbage */
#define B64_PAD		64
#define B64_WS		65
#define B64_BAD		66

static unsigned char b64tab[256];
static int b64init;

/* fill the decoding table once */
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
	b64init = 1;
}

/* base64 to bytes, garbage skipped */
int
b64_decode(const unsigned char *in, size_t n, struct buf *out)
{
	unsigned char *o;
	unsigned long acc = 0;
	size_t i;
	int q = 0, bad = 0, pads = 0;

	if (!b64init)
		b64_setup();
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
	return bad;
}

/* quoted-printable to bytes, bad escapes kept */
int
qp_decode(const unsigned char *in, size_t n, struct buf *out)
{
	unsigned char *o;
	size_t i, j;
	int bad = 0, h, l;

	if (buf_reserve(out, n) < 0)
		return -1;
	o = out->data + out->len;
	for (i = 0; i < n; i++) {
		if (in[i] != '=') {
			*o++ = in[i];
			continue;
		}
		if (i + 2 < n && (h = hexval(in[i + 1])) >= 0 &&
		    (l = hexval(in[i + 2])) >= 0) {
			*o++ = (unsigned char)(h << 4 | l);
			i += 2;
			continue;
		}
		/* soft line break: '=' then optional blanks then EOL or end */
		for (j = i + 1; j < n && (in[j] == ' ' || in[j] == '\t'); j++)
			;
		if (j == n) {
			i = j - 1;
			continue;
		}
		if (in[j] == '\n' || (in[j] == '\r' && j + 1 < n &&
		    in[j + 1] == '\n')) {
			i = in[j] == '\r' ? j + 1 : j;
			continue;
		}
		if (in[j] == '\r' && j + 1 == n) {
			i = j;
			continue;
		}
		*o++ = '=';		/* a bad escape stays as it was */
		bad = 1;
	}
	out->len = (size_t)(o - out->data);
	out->data[out->len] = 0;
	return bad;
}
