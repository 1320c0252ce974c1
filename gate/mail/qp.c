/*
 * qp.c - the quoted-printable transfer decoding (RFC 2045)
 *
 * Input is hostile: any byte sequence is decoded without overrun.  Bad
 * escapes are kept literally and reported through the return value.
 * Output never exceeds the input length; when out has less room, only
 * the input that fits is decoded (QP_CUT).  Fails (-1) only when memory
 * runs out.
 */
#include "config.h"

#include <string.h>

#include "gate/mail/mailint.h"
#include "gate/mail/qp.h"
#include "gate/util/buf.h"

/* quoted-printable to bytes, bad escapes kept */
int
qp_decode(const unsigned char *in, size_t n, struct buf *out)
{
	unsigned char *o;
	size_t i, j;
	int bad = 0, h, l, cut = 0;

	if (n > out->max - out->len) {
		n = out->max - out->len;
		cut = QP_CUT;
	}
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
	return bad | cut;
}
