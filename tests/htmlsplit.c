/*
 * htmlsplit.c - test helper: HTML snippets as html_to_text() splits them
 * into shown and hidden text (for tests/html_hidden_diff.sh)
 *
 *   htmlsplit < SNIPPETS
 *
 * Reads snippets separated by NUL bytes; for each prints one line
 * "S<TAB>shown text<TAB>hidden text", every control byte of the texts
 * turned into a space.  Exit 0, 1 when memory runs out.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/mail/html.h"
#include "gate/util/buf.h"

/* print b with control bytes as spaces */
static void
show(const struct buf *b)
{
	size_t i;

	for (i = 0; i < b->len; i++)
		putchar(b->data[i] < 0x20 || b->data[i] == 0x7f ? ' ' :
		    b->data[i]);
}

/* one snippet */
static int
split(const unsigned char *p, size_t n)
{
	struct buf out = BUF_INIT(1u << 20), hid = BUF_INIT(1u << 20);
	int r = html_to_text(p, n, &out, &hid);

	if (r >= 0) {
		fputs("S\t", stdout);
		show(&out);
		putchar('\t');
		show(&hid);
		putchar('\n');
	}
	buf_free(&out);
	buf_free(&hid);
	return r < 0 ? -1 : 0;
}

int
main(void)
{
	struct buf in = BUF_INIT(64u << 20);
	unsigned char chunk[65536];
	size_t n, s, i;

	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		if (buf_add(&in, chunk, n) < 0)
			return 1;
	for (s = i = 0; i <= in.len; i++)
		if (i == in.len || in.data[i] == 0) {
			if ((i > s || i < in.len) &&
			    split(in.data + s, i - s) < 0)
				return 1;
			s = i + 1;
		}
	buf_free(&in);
	return 0;
}
