/*
 * json.c - a strict, bounded reader of one JSON object's string members
 *
 * Recursive descent over the whole text, depth-limited; strings are
 * decoded only when they are wanted (the key being compared, the value
 * asked for) and otherwise only checked.  Invalid UTF-8 in a string is
 * refused (utf8_decode), as RFC 8259 asks of JSON text.
 */
#include "config.h"

#include <string.h>

#include "gate/util/utf8.h"
#include "gate/web/json.h"

struct jp {
	const unsigned char *p, *end;
	int depth;
};

static void
ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
	    *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
hex4(const unsigned char *p, unsigned *v)
{
	unsigned x = 0;
	int i, c;

	for (i = 0; i < 4; i++) {
		c = p[i];
		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*v = x;
	return 0;
}

/* append code point cp as UTF-8 to out (n used of outsz, NUL room
 * kept): 0 or -1 */
static int
put(char *out, size_t outsz, size_t *n, uint32_t cp)
{
	unsigned char b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (out == NULL)
		return 0;
	if (*n + k >= outsz)
		return -1;
	memcpy(out + *n, b, k);
	*n += k;
	return 0;
}

/*
 * A string at j->p (the opening quote): decoded into out when out is not
 * NULL (NUL-terminated).  0, or -1 (bad syntax, bad UTF-8, NUL, does
 * not fit).
 */
static int
string(struct jp *j, char *out, size_t outsz)
{
	size_t n = 0;
	uint32_t cp;
	unsigned u, lo;
	int len;

	if (j->p >= j->end || *j->p != '"')
		return -1;
	j->p++;
	for (;;) {
		if (j->p >= j->end)
			return -1;
		if (*j->p == '"') {
			j->p++;
			break;
		}
		if (*j->p < 0x20)
			return -1;
		if (*j->p == '\\') {
			if (j->end - j->p < 2)
				return -1;
			j->p++;
			switch (*j->p++) {
			case '"': cp = '"'; break;
			case '\\': cp = '\\'; break;
			case '/': cp = '/'; break;
			case 'b': cp = '\b'; break;
			case 'f': cp = '\f'; break;
			case 'n': cp = '\n'; break;
			case 'r': cp = '\r'; break;
			case 't': cp = '\t'; break;
			case 'u':
				if (j->end - j->p < 4 || hex4(j->p, &u) < 0)
					return -1;
				j->p += 4;
				if (u >= 0xdc00 && u <= 0xdfff)
					return -1;
				if (u >= 0xd800 && u <= 0xdbff) {
					if (j->end - j->p < 6 || j->p[0] != '\\' ||
					    j->p[1] != 'u' ||
					    hex4(j->p + 2, &lo) < 0 ||
					    lo < 0xdc00 || lo > 0xdfff)
						return -1;
					j->p += 6;
					u = 0x10000 + ((u - 0xd800) << 10) +
					    (lo - 0xdc00);
				}
				if (u == 0)
					return -1;
				cp = u;
				break;
			default:
				return -1;
			}
			if (put(out, outsz, &n, cp) < 0)
				return -1;
			continue;
		}
		len = utf8_decode(j->p, (size_t)(j->end - j->p), &cp);
		if (len <= 0)
			return -1;
		if (out != NULL) {
			if (n + (size_t)len >= outsz)
				return -1;
			memcpy(out + n, j->p, (size_t)len);
			n += (size_t)len;
		}
		j->p += len;
	}
	if (out != NULL) {
		if (outsz == 0)
			return -1;
		out[n] = '\0';
	}
	return 0;
}

static int value(struct jp *j);

static int
number(struct jp *j)
{
	const unsigned char *s = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end)
		return -1;
	if (*j->p == '0')
		j->p++;
	else if (*j->p >= '1' && *j->p <= '9')
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	else
		return -1;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return -1;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return -1;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	return j->p > s ? 0 : -1;
}

static int
word(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return -1;
	j->p += n;
	return 0;
}

/* an array or object body after its opener; close is ']' or '}' */
static int
container(struct jp *j, int obj)
{
	int first = 1;

	if (++j->depth > JSON_MAX_DEPTH)
		return -1;
	j->p++;
	for (;;) {
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == (obj ? '}' : ']') && first) {
			j->p++;
			break;
		}
		if (obj) {
			if (string(j, NULL, 0) < 0)
				return -1;
			ws(j);
			if (j->p >= j->end || *j->p != ':')
				return -1;
			j->p++;
		}
		if (value(j) < 0)
			return -1;
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == ',') {
			j->p++;
			first = 0;
			continue;
		}
		if (*j->p != (obj ? '}' : ']'))
			return -1;
		j->p++;
		break;
	}
	j->depth--;
	return 0;
}

static int
value(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return -1;
	switch (*j->p) {
	case '"':
		return string(j, NULL, 0);
	case '{':
		return container(j, 1);
	case '[':
		return container(j, 0);
	case 't':
		return word(j, "true");
	case 'f':
		return word(j, "false");
	case 'n':
		return word(j, "null");
	default:
		return number(j);
	}
}

int
json_get_str(const char *s, size_t n, const char *key, char *out,
    size_t outsz, int *notstr_r)
{
	struct jp j;
	const unsigned char *at;
	char k[128];
	int found = 0, first = 1, match, kr, seen = 0, twice = 0;

	if (notstr_r != NULL)
		*notstr_r = 0;
	if (outsz > 0)
		out[0] = '\0';
	j.p = (const unsigned char *)s;
	j.end = j.p + n;
	j.depth = 1;
	ws(&j);
	if (j.p >= j.end || *j.p != '{')
		return -1;
	j.p++;
	for (;;) {
		ws(&j);
		if (j.p >= j.end)
			return -1;
		if (*j.p == '}' && first) {
			j.p++;
			break;
		}
		/* a key too long to be ours is checked, not compared */
		at = j.p;
		kr = string(&j, k, sizeof(k));
		if (kr < 0) {
			j.p = at;
			if (string(&j, NULL, 0) < 0)
				return -1;
			match = 0;
		} else if (strcmp(k, key) == 0) {
			/* a second one is ambiguous (RFC 8259 4): the
			 * body is still read to its end */
			twice |= seen;
			match = !seen;
			seen = 1;
		} else
			match = 0;
		ws(&j);
		if (j.p >= j.end || *j.p != ':')
			return -1;
		j.p++;
		ws(&j);
		if (match && j.p < j.end && *j.p == '"') {
			if (string(&j, out, outsz) < 0)
				return -1;
			found = 1;
		} else {
			if (match && notstr_r != NULL)
				*notstr_r = 1;
			if (value(&j) < 0)
				return -1;
		}
		ws(&j);
		if (j.p >= j.end)
			return -1;
		if (*j.p == ',') {
			j.p++;
			first = 0;
			continue;
		}
		if (*j.p != '}')
			return -1;
		j.p++;
		break;
	}
	ws(&j);
	if (j.p != j.end)
		return -1;
	if (twice) {
		if (outsz > 0)
			out[0] = '\0';
		return JSON_TWICE;
	}
	return found;
}
