/*
 * fuzz_reply.c - libFuzzer target for what moderation by mail reads of
 * a reply or a post before it answers anyone (gate/moderate/robot.c):
 * the robot and list rules that keep listgate from backscatter and
 * mail loops, and a reply's From and Message-ID
 *
 * An input is an envelope sender (up to the first newline), then the
 * message.  reply_automatic, reply_may_notify, reply_headers,
 * reply_contrary (the first word that refuses an approval) and
 * reply_subject_contrary (the Subject's) must
 * not crash, must say why whenever they refuse, must agree with
 * themselves on a second call, and everything they keep (the reasons,
 * who decided, the Message-ID) must be text a log line can hold: no
 * character the sanitizer masks, no quote or backslash.  A null
 * envelope sender is always a robot.  Build as tests/fuzz/run.sh does.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/moderate/reply.h"
#include "gate/util/sanitize.h"
#include "gate/util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s is one log value: valid UTF-8 (a cut may leave a partial last
 * character, which the database's UTF-8 fixing takes), nothing masked */
static void
check_log(const char *s, size_t max)
{
	size_t n = strnlen(s, max), i = 0, k;
	uint32_t cp;

	if (n == max)
		__builtin_trap();	/* not NUL-terminated */
	while (i < n) {
		if ((k = utf8_decode((const unsigned char *)s + i, n - i,
		    &cp)) == 0) {
			if (n - i < 4)
				return;		/* a cut character */
			__builtin_trap();
		}
		if (sanitize_masked(cp) || cp == '"' || cp == '\\')
			__builtin_trap();
		i += k;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reply *r;
	const uint8_t *nl = memchr(data, '\n', size);
	char sender[400], why[1024], why2[1024];
	size_t n = nl != NULL ? (size_t)(nl - data) : size;
	const unsigned char *msg;
	size_t len;
	int a, b;

	if (n >= sizeof(sender))
		n = sizeof(sender) - 1;
	memcpy(sender, data, n);
	sender[n] = 0;
	msg = nl != NULL ? nl + 1 : data + size;
	len = (size_t)(data + size - msg);
	/* the message in an allocation of its own size */
	if ((r = calloc(1, sizeof(*r))) == NULL)
		abort();
	r->msg = len > 0 ? malloc(len) : NULL;
	if (len > 0 && r->msg == NULL)
		abort();
	if (len > 0)
		memcpy((void *)r->msg, msg, len);
	r->len = len;
	r->sender = sender;

	why[0] = why2[0] = 0;
	a = reply_automatic(r, why, sizeof(why));
	b = reply_automatic(r, why2, sizeof(why2));
	if ((a != 0 && a != 1) || a != b || (a && strcmp(why, why2) != 0))
		__builtin_trap();
	if (a && why[0] == 0)
		__builtin_trap();
	if (a)
		check_log(why, sizeof(why));
	if (sender[0] == 0 && !a)
		__builtin_trap();	/* a bounce may decide */

	why[0] = why2[0] = 0;
	a = reply_may_notify(sender, r->msg, r->len, why, sizeof(why));
	b = reply_may_notify(sender, r->msg, r->len, why2, sizeof(why2));
	if ((a != 0 && a != 1) || a != b || (!a && strcmp(why, why2) != 0))
		__builtin_trap();
	if (!a && why[0] == 0)
		__builtin_trap();
	if (!a)
		check_log(why, sizeof(why));
	if (sender[0] == 0 && a)
		__builtin_trap();	/* a notice to a null sender */

	reply_headers(r);
	check_log(r->from, sizeof(r->from));
	check_log(r->msgid, sizeof(r->msgid));
	{
		/* the word that refuses an approval: one of a few lower-case
		 * ASCII words, the same on a second call */
		char w[16], w2[16];
		size_t i;

		a = reply_contrary(r->msg, r->len, w, sizeof(w));
		b = reply_contrary(r->msg, r->len, w2, sizeof(w2));
		if (a != b || a < 0 || a > 2 || strcmp(w, w2) != 0 ||
		    (a && w[0] == 0) || (!a && w[0] != 0))
			__builtin_trap();
		for (i = 0; w[i] != 0; i++)
			if (w[i] < 'a' || w[i] > 'z')
				__builtin_trap();
	}
	{
		/* the Subject's contrary word: as reply_contrary's */
		char w[16], w2[16];
		size_t i;

		a = reply_subject_contrary(r->msg, r->len, w, sizeof(w));
		b = reply_subject_contrary(r->msg, r->len, w2, sizeof(w2));
		if (a != b || strcmp(w, w2) != 0 || (a && w[0] == 0) ||
		    (!a && w[0] != 0))
			__builtin_trap();
		for (i = 0; w[i] != 0; i++)
			if (w[i] < 'a' || w[i] > 'z')
				__builtin_trap();
	}
	free((void *)r->msg);
	free(r);
	return 0;
}
