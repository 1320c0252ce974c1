/*
 * fuzz_cookie.c - libFuzzer target for the action-address parser and
 * the cookie check of moderation by mail (gate/moderate/cookie.c)
 *
 * Every input is an envelope recipient: cookie_parse must return a
 * reason for it and never crash; what it accepts must check without
 * crashing, must rebuild (cookie_address) into an address that parses
 * to the same parts, and must never pass the check unless its cookie
 * was made under the key (a random input that does is a finding): for
 * the post, or (its last characters) before cookies were bound.
 * Build like fuzz_mail.c:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -Itop \
 *     tests/fuzz/fuzz_cookie.c gate/moderate/cookie.c -lnettle
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "gate/moderate/cookie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cookie_key key;
	static const unsigned char sha[32] = { 0x5a };
	struct cookie_addr a, b;
	char mod[2 * COOKIE_MAX_ADDR + 8], addr[3 * COOKIE_MAX_ADDR];
	char made[COOKIE_CHARS + 1];
	int r;

	if (key.len == 0) {
		memset(key.k, 0x5a, COOKIE_MIN_KEY);
		key.len = COOKIE_MIN_KEY;
	}
	r = cookie_parse((const char *)data, size, &a);
	if (r < COOKIE_OK || r > COOKIE_EFORM || cookie_why(r) == NULL)
		__builtin_trap();
	if (r != COOKIE_OK)
		return 0;
	if (a.id <= 0 || strlen(a.cookie) != COOKIE_CHARS)
		__builtin_trap();
	r = cookie_check(&key, "dev", &a, sha, 0);
	if (r < COOKIE_OK || r > COOKIE_EPOST || cookie_why(r) == NULL)
		__builtin_trap();
	/* the right cookie for these parts: one that checks is it, or
	 * shares all but its last characters with it (made before cookies
	 * were bound); the check without the post takes it too */
	cookie_make(&key, "dev", a.id, a.action, a.expiry, sha, made);
	if (r == COOKIE_OK && memcmp(made, a.cookie, COOKIE_CHARS -
	    COOKIE_BIND_CHARS) != 0)
		__builtin_trap();
	if (r == COOKIE_OK && cookie_check(&key, "dev", &a, NULL, 0) !=
	    COOKIE_OK)
		__builtin_trap();
	if (strcmp(made, a.cookie) == 0 && r != COOKIE_OK)
		__builtin_trap();
	/* rebuild the address and parse it again: the same parts */
	memcpy(mod, a.local, strlen(a.local));
	mod[strlen(a.local)] = '@';
	memcpy(mod + strlen(a.local) + 1, a.domain, strlen(a.domain) + 1);
	if (cookie_address(mod, a.delim, a.action, a.id, a.cookie, addr,
	    sizeof(addr)) != 0)
		__builtin_trap();
	if (cookie_parse(addr, strlen(addr), &b) != COOKIE_OK ||
	    strcmp(a.local, b.local) != 0 || strcmp(a.domain, b.domain) != 0 ||
	    a.delim != b.delim || a.action != b.action || a.id != b.id ||
	    strcmp(a.cookie, b.cookie) != 0 || a.expiry != b.expiry)
		__builtin_trap();
	return 0;
}
