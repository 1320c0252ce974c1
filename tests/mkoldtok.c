/*
 * mkoldtok.c - test helper: write a token file in format 1, as listgate
 * 0.1 did (token text as the key; varint spam, ham, day), so that tests
 * can check that it is refused and that rebuild replaces it
 *
 *   mkoldtok OUT.kch cur|other DAY (s|h):FILE...
 *
 * Each FILE is one post, learnt as spam (s:) or ham (h:) with the
 * tokenizer's defaults on day DAY; the tokenizer version recorded is
 * this program's (cur) or another (other).  Exit 0, 1 on error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kclangc.h>

#include "gate/tok.h"

/* a LEB128 varint into p: its length */
static size_t
put_varint(unsigned char *p, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* read a LEB128 varint: bytes used, 0 if malformed */
static size_t
get_varint(const unsigned char *p, size_t n, uint32_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n && i < 5; i++) {
		*v |= (uint32_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0)
			return i + 1;
	}
	return 0;
}

/* a u32 meta record, little-endian */
static int
set_u32(KCDB *kc, const char *k, size_t klen, uint32_t v)
{
	unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff,
		(v >> 24) & 0xff };

	return kcdbset(kc, k, klen, (const char *)b, 4);
}

/* add one post's tokens to the counts */
static int
learn(KCDB *kc, const struct toklist *tl, int spam, uint32_t day)
{
	unsigned char v[16], old[32];
	uint32_t s, h, d;
	size_t i, len, a, b;
	int32_t n;
	const char *t;

	for (i = 0; i < toklist_count(tl); i++) {
		t = toklist_get(tl, i, &len);
		if (len == 0 || t[0] == 0)
			continue;	/* format 1 skipped these */
		s = h = 0;
		n = kcdbgetbuf(kc, t, len, (char *)old, sizeof(old));
		if (n > 0 && (a = get_varint(old, (size_t)n, &s)) > 0 &&
		    (b = get_varint(old + a, (size_t)n - a, &h)) > 0)
			(void)get_varint(old + a + b, (size_t)n - a - b, &d);
		if (spam)
			s++;
		else
			h++;
		a = put_varint(v, s);
		a += put_varint(v + a, h);
		a += put_varint(v + a, day);
		if (!kcdbset(kc, t, len, (const char *)v, a))
			return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct tok_opts to;
	struct toklist *tl;
	unsigned char *buf;
	uint32_t ns = 0, nh = 0, day;
	size_t n;
	KCDB *kc;
	FILE *f;
	int i;

	if (argc < 4 || (strcmp(argv[2], "cur") != 0 &&
	    strcmp(argv[2], "other") != 0)) {
		fprintf(stderr, "usage: mkoldtok OUT.kch cur|other DAY "
		    "(s|h):FILE...\n");
		return 1;
	}
	day = (uint32_t)strtoul(argv[3], NULL, 10);
	tok_opts_default(&to);
	if ((tl = toklist_new(to.max_tokens)) == NULL ||
	    (buf = malloc(1 << 24)) == NULL || (kc = kcdbnew()) == NULL ||
	    !kcdbopen(kc, argv[1], KCOWRITER | KCOCREATE | KCOTRUNCATE)) {
		fprintf(stderr, "mkoldtok: cannot start\n");
		return 1;
	}
	for (i = 4; i < argc; i++) {
		if ((argv[i][0] != 's' && argv[i][0] != 'h') ||
		    argv[i][1] != ':' || (f = fopen(argv[i] + 2, "rb")) ==
		    NULL) {
			fprintf(stderr, "mkoldtok: %s: bad argument\n", argv[i]);
			return 1;
		}
		n = fread(buf, 1, 1 << 24, f);
		fclose(f);
		if (tok_post(buf, n, &to, tl) < 0 ||
		    learn(kc, tl, argv[i][0] == 's', day) < 0) {
			fprintf(stderr, "mkoldtok: %s: cannot learn\n", argv[i]);
			return 1;
		}
		if (argv[i][0] == 's')
			ns++;
		else
			nh++;
	}
	if (!set_u32(kc, "\0format", 7, 1) ||
	    !set_u32(kc, "\0tokver", 7, strcmp(argv[2], "cur") == 0 ?
	    TOK_VERSION : TOK_VERSION + 1) ||
	    !set_u32(kc, "\0nspam", 6, ns) || !set_u32(kc, "\0nham", 5, nh) ||
	    !kcdbset(kc, "\0pos", 4, "\0\0\0\0\0\0\0\0", 8) ||
	    !kcdbclose(kc)) {
		fprintf(stderr, "mkoldtok: cannot write %s\n", argv[1]);
		return 1;
	}
	kcdbdel(kc);
	toklist_free(tl);
	free(buf);
	return 0;
}
