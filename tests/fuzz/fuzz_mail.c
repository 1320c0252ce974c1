/*
 * fuzz_mail.c - libFuzzer target for the mail parser
 *
 * Walks every input with the default limits and with small ones (so the
 * limit paths are reached by small inputs too), touching every byte of
 * every event; also runs mail_header(), mail_body_offset() and the
 * decoders on their own.  Build and run with tests/fuzz/run.sh.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "gate/mail/b64.h"
#include "gate/mail/enriched.h"
#include "gate/mail/html.h"
#include "gate/mail/mail.h"
#include "gate/mail/qp.h"
#include "gate/mail/rfc2047.h"
#include "gate/mail/uu.h"
#include "gate/util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned long sink;

/* read every byte an event hands out */
static int
touch(const struct mail_event *ev, void *ctx)
{
	unsigned long s = 0;
	size_t i;

	(void)ctx;
	for (i = 0; i <= ev->len; i++)	/* data[len] is the NUL */
		s += ev->data[i];
	if (ev->data[ev->len] != 0)
		__builtin_trap();
	s += strlen(ev->name) + strlen(ev->ctype) + strlen(ev->charset) +
	    strlen(ev->filename);
	sink += s;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mail_limits lim;
	struct buf b = BUF_INIT(1u << 20), hid = BUF_INIT(1u << 14);

	if (mail_walk(data, size, NULL, touch, NULL) != 0)
		__builtin_trap();
	mail_limits_default(&lim);
	lim.max_header = 300;
	lim.max_fields = 8;
	lim.max_field = 40;
	lim.max_boundary = 6;
	lim.max_depth = 3;
	lim.max_parts = 6;
	lim.max_decoded = 200;
	lim.max_scan = size / 2 + 1;
	if (mail_walk(data, size, &lim, touch, NULL) != 0)
		__builtin_trap();
	if (mail_header(data, size, "subject", &b) < 0)
		__builtin_trap();
	if (mail_body_offset(data, size) > size)
		__builtin_trap();
	if (size < 4096) {
		buf_reset(&b);
		(void)rfc2047_decode(data, size, &b);
		buf_reset(&b);
		(void)html_to_text(data, size, &b, NULL);
		buf_reset(&b);
		if (html_to_text(data, size, &b, &hid) < 0 ||
		    hid.len > hid.max)
			__builtin_trap();
		buf_reset(&b);
		if (enriched_to_text(data, size, size & 1, &b) < 0)
			__builtin_trap();
		buf_reset(&b);
		(void)b64_decode(data, size, &b);
		buf_reset(&b);
		(void)qp_decode(data, size, &b);
		buf_reset(&b);
		if (uu_decode(data, size, &b) < 0)
			__builtin_trap();
	}
	buf_free(&b);
	buf_free(&hid);
	return 0;
}
