/*
 * form.c - decode application/x-www-form-urlencoded text
 *
 * Bounded by the length given and by the caller's buffers; a bad escape,
 * a NUL byte or text too long for a buffer is an error, never a cut.
 */
#include "config.h"

#include <string.h>

#include "gate/web/form.h"

void
form_init(struct form_iter *it, const void *data, size_t n)
{
	it->p = data;
	it->end = it->p + n;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* decode s..e into out (outsz bytes, NUL-terminated): 0 or -1 */
static int
decode(const char *s, const char *e, char *out, size_t outsz)
{
	size_t n = 0;
	int hi, lo, c;

	while (s < e) {
		c = (unsigned char)*s++;
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (e - s < 2 || (hi = hexval((unsigned char)s[0])) < 0 ||
			    (lo = hexval((unsigned char)s[1])) < 0)
				return -1;
			c = hi << 4 | lo;
			s += 2;
		}
		if (c == 0 || n + 1 >= outsz)
			return -1;
		out[n++] = (char)c;
	}
	if (outsz == 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int
form_next(struct form_iter *it, char *k, size_t ksz, char *v, size_t vsz)
{
	const char *amp, *eq;

	/* empty pairs ("a=1&&b=2") are skipped */
	while (it->p < it->end && *it->p == '&')
		it->p++;
	if (it->p >= it->end)
		return 0;
	amp = memchr(it->p, '&', (size_t)(it->end - it->p));
	if (amp == NULL)
		amp = it->end;
	eq = memchr(it->p, '=', (size_t)(amp - it->p));
	if (decode(it->p, eq ? eq : amp, k, ksz) < 0 ||
	    decode(eq ? eq + 1 : amp, amp, v, vsz) < 0)
		return -1;
	it->p = amp;
	return 1;
}

int
form_get(const void *data, size_t n, const char *key, char *v, size_t vsz)
{
	const char *p = data, *end = p + n, *amp, *eq;
	char k[64];
	int found = 0;

	if (vsz > 0)
		v[0] = '\0';
	/* only the value asked for is decoded into v: other values may be
	 * longer than v; every key must still be well formed */
	for (; p < end; p = amp + (amp < end)) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		if (amp == p)
			continue;
		eq = memchr(p, '=', (size_t)(amp - p));
		if (decode(p, eq ? eq : amp, k, sizeof(k)) < 0)
			continue;	/* a key too long to be ours */
		if (strcmp(k, key) != 0)
			continue;
		/* a second one: which the sender meant is anyone's guess */
		if (found) {
			if (vsz > 0)
				v[0] = '\0';
			return FORM_TWICE;
		}
		if (decode(eq ? eq + 1 : amp, amp, v, vsz) < 0)
			return -1;
		found = 1;
	}
	return found;
}
