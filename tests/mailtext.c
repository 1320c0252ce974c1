/*
 * mailtext.c - test helper: a message as the project's own parser
 * (gate/mail) reads it
 *
 *   mailtext FILE
 *
 * Prints each top-level header field as "Name: value" (unfolded, RFC
 * 2047 decoded), a blank line, the decoded text of the first text part,
 * and last a line "-- parts P anomalies A" (text parts, anomalies).
 * Exit 0, 1 when the file cannot be read or parsed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/mail/mail.h"
#include "gate/util/buf.h"

struct seen {
	int body, parts, anomalies;
	struct buf text;
};

static int
cb(const struct mail_event *ev, void *vctx)
{
	struct seen *s = vctx;

	switch (ev->kind) {
	case MAIL_HEADER:
		if (ev->depth == 0)
			printf("%s: %s\n", ev->name, (const char *)ev->data);
		break;
	case MAIL_TEXT:
		if (s->parts++ == 0)
			buf_add(&s->text, ev->data, ev->len);
		break;
	case MAIL_ANOMALY:
		s->anomalies++;
		break;
	default:
		break;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static unsigned char msg[8 << 20];
	struct seen s;
	size_t n;
	FILE *f;

	if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) {
		fprintf(stderr, "usage: mailtext FILE\n");
		return 1;
	}
	n = fread(msg, 1, sizeof(msg), f);
	fclose(f);
	memset(&s, 0, sizeof(s));
	buf_init(&s.text, 4u << 20);
	if (mail_walk(msg, n, NULL, cb, &s) < 0) {
		fprintf(stderr, "mailtext: cannot parse %s\n", argv[1]);
		return 1;
	}
	printf("\n");
	fwrite(s.text.data ? s.text.data : (const unsigned char *)"", 1,
	    s.text.len, stdout);
	printf("\n-- parts %d anomalies %d\n", s.parts, s.anomalies);
	buf_free(&s.text);
	return 0;
}
