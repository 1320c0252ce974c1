/*
 * fuzz_cookie.c - libFuzzer target for the action-address parser and
 * the cookie check of moderation by mail (gate/moderate/cookie.c)
 *
 * Every input is an envelope recipient: cookie_parse must return a
 * reason for it and never crash; what it accepts must check without
 * crashing, must rebuild (cookie_address) into an address that parses
 * to the same parts, and must never pass the check unless its cookie
 * was made under the key (a random input that does is a finding): for
 * the post, or (its last characters) before cookies were bound.  The
 * genuine first characters with the input's last ones check for the
 * post only when those are the post's or listgate 0.1's (made here, as
 * 0.1 made them), and a genuine cookie decides no other post.
 * Build like fuzz_mail.c:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -Itop \
 *     tests/fuzz/fuzz_cookie.c gate/moderate/cookie.c -lnettle
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nettle/hmac.h>

#include "gate/moderate/cookie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the last COOKIE_BIND_CHARS characters of the cookie listgate 0.1 made
 * for a's parts under key for "dev" (its MAC, made here as 0.1 made it,
 * not by cookie.c), into out */
static void
old_tail(const struct cookie_key *key, const struct cookie_addr *a,
    char *out)
{
	static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
	static const char tag[] = "listgate-moderate-1";
	struct hmac_sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];
	char idbuf[24], mac[COOKIE_MAC_CHARS];
	const char *an = cookie_action_name(a->action);
	uint32_t acc = 0;
	size_t i, o = 0;
	int nbits = 0;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)a->id);
	hmac_sha256_set_key(&h, key->len, key->k);
	hmac_sha256_update(&h, sizeof(tag), (const uint8_t *)tag);
	hmac_sha256_update(&h, 4, (const uint8_t *)"dev");
	hmac_sha256_update(&h, strlen(idbuf) + 1, (const uint8_t *)idbuf);
	hmac_sha256_update(&h, strlen(an) + 1, (const uint8_t *)an);
	hmac_sha256_update(&h, COOKIE_EXPIRY_CHARS, (const uint8_t *)a->cookie);
	hmac_sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < sizeof(d) && o < COOKIE_MAC_CHARS; i++) {
		acc = (acc << 8) | d[i];
		nbits += 8;
		while (nbits >= 5 && o < COOKIE_MAC_CHARS) {
			mac[o++] = b32[(acc >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	memcpy(out, mac + COOKIE_MAC_CHARS - COOKIE_BIND_CHARS,
	    COOKIE_BIND_CHARS);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cookie_key key;
	static const unsigned char sha[32] = { 0x5a }, sha2[32] = { 0xa5 };
	/* the list's moderators; the notices go to the first */
	static const char *const mods[] = { "m@x.example", "n@x.example",
	    NULL };
	static const char *const others[] = { "n@x.example", NULL };
	struct cookie_addr a, b;
	char mod[2 * COOKIE_MAX_ADDR + 8], addr[3 * COOKIE_MAX_ADDR];
	char made[COOKIE_CHARS + 1], old[COOKIE_BIND_CHARS];
	const char *tail;
	int r, ok;

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
	r = cookie_check(&key, "dev", &a, sha, mods, NULL, 0);
	if (r < COOKIE_OK || r > COOKIE_EPOST || cookie_why(r) == NULL)
		__builtin_trap();
	/* the right cookie for these parts: one that checks is it, or
	 * shares all but its last characters with it (made before cookies
	 * were bound); the check without the post takes it too */
	cookie_make(&key, "dev", a.id, a.action, a.expiry, sha, mods[0],
	    made);
	if (r == COOKIE_OK && memcmp(made, a.cookie, COOKIE_CHARS -
	    COOKIE_BIND_CHARS) != 0)
		__builtin_trap();
	if (r == COOKIE_OK && cookie_check(&key, "dev", &a, NULL, mods, NULL,
	    0) != COOKIE_OK)
		__builtin_trap();
	if (strcmp(made, a.cookie) == 0 && r != COOKIE_OK)
		__builtin_trap();
	/* the genuine first characters with the input's last ones (a
	 * random input never matches the first MAC): taken for the post
	 * only when they are the post's or 0.1's, always without the post;
	 * the post's are not another post's */
	b = a;
	memcpy(b.cookie, made, COOKIE_CHARS - COOKIE_BIND_CHARS);
	tail = b.cookie + COOKIE_CHARS - COOKIE_BIND_CHARS;
	old_tail(&key, &b, old);
	ok = memcmp(tail, made + COOKIE_CHARS - COOKIE_BIND_CHARS,
	    COOKIE_BIND_CHARS) == 0 || memcmp(tail, old, COOKIE_BIND_CHARS) == 0;
	if (cookie_check(&key, "dev", &b, sha, mods, NULL, 0) != (ok ?
	    COOKIE_OK : COOKIE_EPOST) || cookie_check(&key, "dev", &b, NULL,
	    mods, NULL, 0) != COOKIE_OK)
		__builtin_trap();
	memcpy(b.cookie, made, COOKIE_CHARS);
	if (cookie_check(&key, "dev", &b, sha2, mods, NULL, 0) != COOKIE_EPOST)
		__builtin_trap();
	/* nor another moderator's, nor one no longer a moderator's */
	if (cookie_check(&key, "dev", &b, sha, others, NULL, 0) !=
	    COOKIE_EPOST)
		__builtin_trap();
	/* 0.1's cookie is taken for any post */
	memcpy(b.cookie + COOKIE_CHARS - COOKIE_BIND_CHARS, old,
	    COOKIE_BIND_CHARS);
	if (cookie_check(&key, "dev", &b, sha2, mods, NULL, 0) != COOKIE_OK)
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
