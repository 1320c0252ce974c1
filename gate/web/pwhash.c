/*
 * pwhash.c - yescrypt password hashes with libxcrypt
 *
 * crypt_gensalt_rn draws the salt from the kernel's random source;
 * crypt_r works in a struct crypt_data of its own per call, so any
 * thread may hash.  A password longer than PWHASH_MAX_PASSWORD is never
 * hashed.  Failures return -1 (or 0 for a check); nothing is logged.
 */
#include "config.h"

#include <crypt.h>
#include <stdio.h>
#include <string.h>

#include "gate/util/xalloc.h"
#include "gate/web/pwhash.h"

/* a longer password is one crypt_r refuses ("yescrypt hashing failed") */
_Static_assert(PWHASH_MAX_PASSWORD < CRYPT_MAX_PASSPHRASE_SIZE,
    "PWHASH_MAX_PASSWORD is longer than crypt_r hashes");

int
pwhash_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* the length of hash's "$id$params$" head, or 0 when it has none */
static size_t
head_len(const char *hash)
{
	const char *p = hash;
	int i;

	for (i = 0; i < 3; i++) {
		if ((p = strchr(p, '$')) == NULL || (i == 0 && p != hash))
			return 0;
		p++;
	}
	return (size_t)(p - hash);
}

int
pwhash_same_params(const char *a, const char *b)
{
	size_t n = head_len(a);

	return n > 0 && n == head_len(b) && memcmp(a, b, n) == 0;
}

int
pwhash_make(const char *pw, char *out, size_t outsz, char *err,
    size_t errsz)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd;
	const char *h;
	int rc = -1;

	if (strlen(pw) > PWHASH_MAX_PASSWORD) {
		snprintf(err, errsz, "password longer than %u bytes",
		    (unsigned)PWHASH_MAX_PASSWORD);
		return -1;
	}
	/* "$y$", libxcrypt's default cost, a random salt */
	if (crypt_gensalt_rn("$y$", 0, NULL, 0, setting,
	    (int)sizeof(setting)) == NULL) {
		snprintf(err, errsz, "cannot make a yescrypt salt (libxcrypt "
		    "without yescrypt?)");
		return -1;
	}
	if ((cd = xcalloc(1, sizeof(*cd))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	h = crypt_r(pw, setting, cd);
	if (h == NULL || h[0] != '$' || strlen(h) >= outsz)
		snprintf(err, errsz, "yescrypt hashing failed");
	else {
		memcpy(out, h, strlen(h) + 1);
		rc = 0;
	}
	explicit_bzero(cd, sizeof(*cd));
	xfree(cd);
	return rc;
}

int
pwhash_check(const char *pw, const char *hash)
{
	struct crypt_data *cd;
	const char *h;
	size_t n = strlen(hash);
	int ok = 0;

	if (strlen(pw) > PWHASH_MAX_PASSWORD || n == 0 || hash[0] != '$')
		return 0;
	if ((cd = xcalloc(1, sizeof(*cd))) == NULL)
		return -1;
	h = crypt_r(pw, hash, cd);
	if (h != NULL && h[0] == '$' && strlen(h) == n)
		ok = pwhash_equal(h, hash, n);
	explicit_bzero(cd, sizeof(*cd));
	xfree(cd);
	return ok;
}
