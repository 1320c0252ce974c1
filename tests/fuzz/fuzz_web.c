/*
 * fuzz_web.c - libFuzzer target for the request bodies of `listgate
 * web` (gate/web/form.c, gate/web/json.c): form bodies, query strings
 * and the API's JSON, all from anyone who can reach the port
 *
 * The first byte of an input picks the size of the caller's buffers
 * (1 to 64, or 4096 bytes), the rest is the body.  Every pair form_next
 * gives must fit its buffers, NUL-terminated, with no NUL inside;
 * form_get must find the value the iteration found for the same key,
 * or say FORM_TWICE (with nothing in its buffer) when the iteration
 * finds the key again; json_get_str must give valid UTF-8 without NUL
 * that fits (nothing on JSON_TWICE), the same on a second call, and
 * nothing is read past the body (the
 * sanitizers see to that).  The body as a Cookie header gives only
 * well-formed session ids, each once; as a Host header, a host name of
 * host name characters that fits.  Build as tests/fuzz/run.sh does.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/utf8.h"
#include "gate/web/form.h"
#include "gate/web/json.h"
#include "gate/web/session.h"
#include "listcfg/listcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = { "action", "csrf", "id", "user",
    "password", "note", "list", "", NULL };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct form_iter it;
	char *k, *v, *v2, *body;
	size_t bsz, n, i, j, len;
	uint32_t cp;
	int r, r2, r3, ns, ns2, again;

	if (size == 0)
		return 0;
	bsz = data[0] % 65 == 0 ? 4096 : data[0] % 65;
	/* the body in a buffer of its own size: a read past it is seen */
	n = size - 1;
	if ((body = malloc(n > 0 ? n : 1)) == NULL ||
	    (k = malloc(bsz)) == NULL || (v = malloc(bsz)) == NULL ||
	    (v2 = malloc(bsz)) == NULL)
		abort();
	memcpy(body, data + 1, n);

	/* form: every pair up to the end or the first malformed one */
	form_init(&it, body, n);
	while ((r = form_next(&it, k, bsz, v, bsz)) == 1)
		if (strlen(k) >= bsz || strlen(v) >= bsz)
			__builtin_trap();
	if (r != 0 && r != -1)
		__builtin_trap();
	/* form_get agrees with the iteration on each fixed key */
	for (i = 0; keys[i] != NULL && keys[i][0] != 0; i++) {
		form_init(&it, body, n);
		while ((r = form_next(&it, k, bsz, v, bsz)) == 1 &&
		    strcmp(k, keys[i]) != 0)
			;
		/* and again later, before anything malformed? */
		again = 0;
		r3 = r;
		if (r == 1)
			while ((r3 = form_next(&it, k, bsz, v2, bsz)) == 1)
				if (strcmp(k, keys[i]) == 0) {
					again = 1;
					break;
				}
		r2 = form_get(body, n, keys[i], v2, bsz);
		if (r2 != FORM_TWICE && (r2 < -1 || r2 > 1))
			__builtin_trap();
		if (again && r2 != FORM_TWICE)
			__builtin_trap();	/* twice, but not said */
		if (r == 1 && r2 != 1 && r2 != FORM_TWICE)
			__builtin_trap();	/* found, but not by form_get */
		if (r == 1 && r2 == 1 && strcmp(v, v2) != 0)
			__builtin_trap();	/* another value */
		if (r == 1 && !again && r3 == 0 && r2 != 1)
			__builtin_trap();	/* once to the end, but not 1 */
		if (r2 == FORM_TWICE && v2[0] != '\0')
			__builtin_trap();
		if (r2 == 1 && strlen(v2) >= bsz)
			__builtin_trap();
	}

	/* JSON: each fixed key, twice */
	for (i = 0; keys[i] != NULL; i++) {
		ns = ns2 = 0;
		r = json_get_str(body, n, keys[i], v, bsz, &ns);
		r2 = json_get_str(body, n, keys[i], v2, bsz, &ns2);
		if ((r != JSON_TWICE && (r < -1 || r > 1)) || r != r2 ||
		    ns != ns2)
			__builtin_trap();
		if (r == JSON_TWICE && (v[0] != '\0' || v2[0] != '\0'))
			__builtin_trap();
		if (r != 1)
			continue;
		len = strlen(v);
		if (len >= bsz || strcmp(v, v2) != 0)
			__builtin_trap();
		for (j = 0; j < len; j += utf8_decode((const unsigned char *)v +
		    j, len - j, &cp))
			if (utf8_len((const unsigned char *)v + j, len - j) ==
			    0)
				__builtin_trap();	/* invalid UTF-8 */
	}
	/* a Cookie header: ids of 64 lower-case hex digits, each once, at
	 * most the room given; a Host header: a name that fits, of the
	 * characters a host name has */
	{
		char ids[3][SESSION_HEX], host[LG_MAX_HOST_NAME + 1];
		char *z = malloc(n + 1);
		size_t nid = 0, a, c;
		int hr;

		if (z == NULL)
			abort();
		memcpy(z, body, n);
		z[n] = '\0';
		r = session_cookie_ids(z, "lgsid", ids, 3, &nid);
		if ((r != 0 && r != -1) || nid > 3)
			__builtin_trap();
		for (a = 0; a < nid; a++) {
			if (strlen(ids[a]) != SESSION_HEX - 1 ||
			    strspn(ids[a], "0123456789abcdef") !=
			    SESSION_HEX - 1)
				__builtin_trap();
			for (c = 0; c < a; c++)
				if (strcmp(ids[a], ids[c]) == 0)
					__builtin_trap();
		}
		hr = listcfg_host_header(z, host);
		if (hr < 0 || hr > 2)
			__builtin_trap();
		if (hr > 0 && (host[0] == '\0' || strlen(host) >
		    LG_MAX_HOST_NAME || strspn(host,
		    "abcdefghijklmnopqrstuvwxyz0123456789.-_[]:") !=
		    strlen(host)))
			__builtin_trap();
		free(z);
	}
	free(body);
	free(k);
	free(v);
	free(v2);
	return 0;
}
