/*
 * fuzz_holder.c - libFuzzer target for the holder's wire format
 * (gate/holder/holder.c): what a client of the holder's socket sends,
 * and what filter reads back
 *
 * The input is a request (the 8-byte head and its body) and, after it,
 * an answer line.  holder_decode must refuse or accept every body
 * without reading past it; what it accepts must encode again and decode
 * to the same fields.  holder_answer_parse must accept only "OK " and
 * three decimals one space apart, which format back to the same three
 * fields.  Build like fuzz_mail.c.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/holder/holder.h"
#include "gate/util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same_str(const char *a, const char *b)
{
	if (strcmp(a, b) != 0)
		__builtin_trap();
}

static void
request(const uint8_t *data, size_t size)
{
	struct holder_req rq, back;
	struct buf w = BUF_INIT(HOLDER_MAX_REQ + 8);
	unsigned char *body, *body2;
	char why[256];
	size_t len, len2;

	if (size < 8 || holder_head(data, &len) < 0 || len > size - 8)
		return;
	/* exactly len bytes (and the spare one), so ASan sees any overread */
	if ((body = malloc(len + 1)) == NULL)
		return;
	memcpy(body, data + 8, len);
	if (holder_decode(body, len, &rq, why, sizeof(why)) < 0) {
		if (why[0] == '\0')
			__builtin_trap();
		free(body);
		return;
	}
	if (holder_encode(&rq, &w) < 0 ||
	    buf_add(&w, rq.post.raw, rq.post.raw_len) < 0 ||
	    holder_head(w.data, &len2) < 0 || len2 != w.len - 8 ||
	    (body2 = malloc(len2 + 1)) == NULL)
		__builtin_trap();
	memcpy(body2, w.data + 8, len2);
	if (holder_decode(body2, len2, &back, why, sizeof(why)) < 0)
		__builtin_trap();
	same_str(rq.post.list, back.post.list);
	same_str(rq.post.env_sender, back.post.env_sender);
	same_str(rq.post.clues, back.post.clues);
	same_str(rq.post.status, back.post.status);
	same_str(rq.post.note, back.post.note);
	same_str(rq.database, back.database);
	if (rq.post.score != back.post.score ||
	    rq.post.remember_days != back.post.remember_days ||
	    rq.notify != back.notify || rq.post.raw_len != back.post.raw_len ||
	    memcmp(rq.post.raw, back.post.raw, rq.post.raw_len) != 0)
		__builtin_trap();
	free(body2);
	free(body);
	buf_free(&w);
}

static void
answer(const uint8_t *data, size_t size)
{
	struct holder_ans a, b;
	char line[HOLDER_MAX_ANSWER], again[HOLDER_MAX_ANSWER], err[600];
	size_t i;

	if (size >= sizeof(line))
		size = sizeof(line) - 1;
	memcpy(line, data, size);
	line[size] = '\0';
	if (holder_answer_parse(line, &a, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			__builtin_trap();
		return;
	}
	/* an accepted answer is "OK ", then digits and single spaces */
	if (strncmp(line, "OK ", 3) != 0)
		__builtin_trap();
	for (i = 3; line[i] != '\0'; i++)
		if ((line[i] < '0' || line[i] > '9') && (line[i] != ' ' ||
		    line[i + 1] == ' ' || line[i + 1] == '\0'))
			__builtin_trap();
	holder_answer_ok(again, &a);
	again[strlen(again) - 1] = '\0';
	/* (leading zeros aside, the same line) the same three fields */
	if (holder_answer_parse(again, &b, err, sizeof(err)) < 0 ||
	    a.held != b.held || a.id != b.id || a.notifying != b.notifying)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;

	request(data, size);
	/* the answer: what follows a whole request, else the whole input */
	if (size >= 8 && holder_head(data, &len) == 0 && len <= size - 8)
		answer(data + 8 + len, size - 8 - len);
	else
		answer(data, size);
	return 0;
}
