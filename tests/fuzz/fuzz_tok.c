/*
 * fuzz_tok.c - libFuzzer target for the tokenizer
 *
 * The first byte chooses the options (prefix, header mode, case
 * folding, numbers, bigrams, a small token cap); the rest is text for
 * tok_text() and a header value for tok_header(), and the whole input is
 * a post for tok_post().  Every token must be non-empty and at most
 * TOKLIST_MAX_BYTES long, the set must hold at most max_tokens, and no
 * call may fail (tok_* return -1 only when out of memory, which the
 * fuzzer's memory does not reach).  Build and run with
 * tests/fuzz/run.sh tok.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "gate/tok.h"
#include "gate/toklist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned long sink;

/* every token readable, non-empty, bounded; the cap kept */
static void
check_list(const struct toklist *tl, size_t max_tokens)
{
	size_t i, n = toklist_count(tl), len;
	const char *t;

	if (n > max_tokens)
		__builtin_trap();
	for (i = 0; i < n; i++) {
		t = toklist_get(tl, i, &len);
		if (t == NULL || len == 0 || len > TOKLIST_MAX_BYTES)
			__builtin_trap();
		sink += (unsigned char)t[0] + (unsigned char)t[len - 1];
		/* a token is found again where it was added */
		if (toklist_find(tl, t, len) != (long)i)
			__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "", "subj:", "from:",
	    "hdr:x-a-rather-long-header-name-for-a-prefix:" };
	static const char *const names[] = { "Subject", "From", "To",
	    "Received", "Content-Type", "Message-ID", "X-Mailer", "List-Id" };
	struct tok_opts o;
	struct toklist *tl;
	unsigned char opt;
	size_t i;

	if (size == 0)
		return 0;
	opt = data[0];
	data++;
	size--;
	tok_opts_default(&o);
	o.fold_case = opt & 1;
	o.numbers = (opt >> 1) & 1;
	o.bigrams = (opt >> 2) & 1;
	o.rcvd = (opt >> 3) % 3;
	if (opt & 0x20) {
		o.max_tokens = 7;
		o.max_token = 5;
		o.min_len = 1;
	}
	if ((tl = toklist_new(o.max_tokens)) == NULL)
		return 0;
	if (tok_text(&o, prefixes[opt >> 6], (opt >> 4) & 1, data, size,
	    tl) < 0)
		__builtin_trap();
	check_list(tl, o.max_tokens);
	toklist_reset(tl);
	if (tok_header(&o, names[(opt >> 5) & 7], data, size, opt & 3,
	    tl) < 0)
		__builtin_trap();
	check_list(tl, o.max_tokens);
	/* the whole input as a post, with small parser limits now and then */
	if (opt & 0x40) {
		o.lim.max_header = 500;
		o.lim.max_parts = 4;
		o.lim.max_depth = 2;
		o.lim.max_decoded = 300;
	}
	/* and the vote budget's marks, for half the inputs: without
	 * pairs a token's two marks agree */
	o.marks = (opt & 0x10) != 0;
	if (tok_post(data, size, &o, tl) < 0)
		__builtin_trap();
	check_list(tl, o.max_tokens);
	for (i = 0; !o.bigrams && i < toklist_count(tl); i++)
		if (toklist_tail(tl, i) != toklist_tail_words(tl, i))
			__builtin_trap();
	toklist_free(tl);
	return 0;
}
