/*
 * toklist.c - a set of distinct tokens (byte strings) in first-seen order
 *
 * An open-addressing hash table over an arena.  Bounded: a token longer
 * than TOKLIST_MAX_BYTES is refused, and the set stops growing at its
 * maximum (adding then returns 0, as for a token already there).  Fails
 * (-1) only when memory runs out.  Never logs, never exits.
 */
#include "config.h"

#include <sys/random.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "gate/toklist.h"
#include "gate/util/xalloc.h"

/* the bits of len[i] that mark a token past the vote budget, counted
 * with the word pairs and without them (lengths never reach them) */
#define LEN_TAIL	0x8000
#define LEN_TAIL_WORDS	0x4000
#define LEN_MASK	0x3fff

struct toklist {
	unsigned char *arena;	/* tokens, each NUL-terminated */
	size_t alen, acap;
	size_t *off;		/* start of token i in arena */
	uint16_t *len;		/* its length (<= TOKLIST_MAX_BYTES), and
				 * LEN_TAIL when past its text's vote
				 * budget (toklist_set_tail) */
	size_t n, cap;		/* tokens held, room in off/len */
	uint32_t *slot;		/* open addressing: index + 1, 0 = empty */
	uint32_t *hash;		/* hash of token i, for rehashing */
	size_t nslot;		/* a power of two, at least 2 * n */
	size_t max;		/* most tokens held */
	uint64_t seed;		/* of toklist_hash */
};

/* a token's hash under the set's random seed: 8 bytes a step (FNV-1a
 * took a multiply a byte, 6% of training), mixed so that the low bits
 * (the slot) depend on every byte; the seed keeps a sender from
 * choosing tokens that share a slot */
static uint32_t
toklist_hash(const unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL), w;
	const unsigned char *e;
	uint32_t x, y;

	if (n >= 8) {
		/* whole words, then the last 8 bytes (overlapping) */
		for (e = p + n - 8; p < e; p += 8) {
			memcpy(&w, p, 8);
			/* multiply, shift down, multiply: a difference in a
			 * word's top bits reaches the low ones through carries
			 * that depend on the seed, so no pair of tokens
			 * collides under every seed */
			h = (h ^ w) * 0xff51afd7ed558ccdULL;
			h ^= h >> 29;
			h *= 0xc4ceb9fe1a85ec53ULL;
		}
		memcpy(&w, e, 8);
	} else if (n >= 4) {
		memcpy(&x, p, 4);
		memcpy(&y, p + n - 4, 4);
		w = (uint64_t)x << 32 | y;
	} else
		w = n == 0 ? 0 : (uint64_t)p[0] << 16 | (uint64_t)p[n / 2] << 8 |
		    p[n - 1];
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	return (uint32_t)h;
}

struct toklist *
toklist_new(size_t max_tokens)
{
	struct toklist *tl;

	if ((tl = xcalloc(1, sizeof(*tl))) == NULL)
		return NULL;
	if (max_tokens > UINT32_MAX / 4)
		max_tokens = UINT32_MAX / 4;
	tl->max = max_tokens;
	if (getrandom(&tl->seed, sizeof(tl->seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(tl->seed))
		tl->seed = (uint64_t)(uintptr_t)tl * 0x9e3779b97f4a7c15ULL ^
		    (uint64_t)time(NULL);
	return tl;
}

void
toklist_free(struct toklist *tl)
{
	if (tl == NULL)
		return;
	xfree(tl->arena);
	xfree(tl->off);
	xfree(tl->len);
	xfree(tl->slot);
	xfree(tl->hash);
	xfree(tl);
}

void
toklist_reset(struct toklist *tl)
{
	size_t i, j, mask = tl->nslot - 1;

	/*
	 * One large post leaves a large table behind: clearing it whole
	 * for every small post after it was 4% of training.  When few
	 * slots are used, find each token's slot again and clear it (the
	 * search looks for the token's own index, so the slots cleared
	 * before it on its chain do not stop it).
	 */
	if (tl->slot != NULL && tl->n * 16 < tl->nslot) {
		for (i = 0; i < tl->n; i++) {
			for (j = tl->hash[i] & mask; tl->slot[j] != i + 1;
			    j = (j + 1) & mask)
				;
			tl->slot[j] = 0;
		}
	} else if (tl->slot != NULL)
		memset(tl->slot, 0, tl->nslot * sizeof(*tl->slot));
	tl->alen = 0;
	tl->n = 0;
}

size_t
toklist_count(const struct toklist *tl)
{
	return tl->n;
}

const char *
toklist_get(const struct toklist *tl, size_t i, size_t *len_r)
{
	if (i >= tl->n) {
		if (len_r != NULL)
			*len_r = 0;
		return "";
	}
	if (len_r != NULL)
		*len_r = tl->len[i] & LEN_MASK;
	return (const char *)tl->arena + tl->off[i];
}

/* double the slot table and re-insert every token: 0 or -1 */
static int
toklist_rehash(struct toklist *tl)
{
	size_t ns = tl->nslot ? tl->nslot * 2 : 256, i, j;
	uint32_t *s;

	if ((s = xcalloc(ns, sizeof(*s))) == NULL)
		return -1;
	for (i = 0; i < tl->n; i++) {
		j = tl->hash[i] & (ns - 1);
		while (s[j] != 0)
			j = (j + 1) & (ns - 1);
		s[j] = (uint32_t)i + 1;
	}
	xfree(tl->slot);
	tl->slot = s;
	tl->nslot = ns;
	return 0;
}

/* the slot holding tok (hash h), else the empty slot where it belongs;
 * the table must have slots */
static size_t
toklist_slot(const struct toklist *tl, const void *tok, size_t len,
    uint32_t h)
{
	size_t j, k;

	for (j = h & (tl->nslot - 1); tl->slot[j] != 0;
	    j = (j + 1) & (tl->nslot - 1)) {
		k = tl->slot[j] - 1;
		if (tl->hash[k] == h && (tl->len[k] & LEN_MASK) == len &&
		    memcmp(tl->arena + tl->off[k], tok, len) == 0)
			break;
	}
	return j;
}

long
toklist_find(const struct toklist *tl, const void *tok, size_t len)
{
	size_t j;

	if (tl->nslot == 0 || len > TOKLIST_MAX_BYTES)
		return -1;
	j = toklist_slot(tl, tok, len, toklist_hash(tok, len, tl->seed));
	return tl->slot[j] != 0 ? (long)tl->slot[j] - 1 : -1;
}

int
toklist_add(struct toklist *tl, const void *tok, size_t len)
{
	const unsigned char *p = tok;
	uint32_t h;
	size_t j;

	if (len > TOKLIST_MAX_BYTES || tl->n >= tl->max)
		return 0;
	if ((tl->n + 1) * 2 > tl->nslot && toklist_rehash(tl) < 0)
		return -1;
	h = toklist_hash(p, len, tl->seed);
	j = toklist_slot(tl, p, len, h);
	if (tl->slot[j] != 0)
		return 0;	/* already there */
	if (tl->n == tl->cap) {
		size_t nc = tl->cap ? tl->cap * 2 : 256;
		size_t *no;
		uint16_t *nl;
		uint32_t *nh;

		if ((no = xrealloc(tl->off, nc * sizeof(*no))) == NULL)
			return -1;
		tl->off = no;
		if ((nl = xrealloc(tl->len, nc * sizeof(*nl))) == NULL)
			return -1;
		tl->len = nl;
		if ((nh = xrealloc(tl->hash, nc * sizeof(*nh))) == NULL)
			return -1;
		tl->hash = nh;
		tl->cap = nc;
	}
	if (tl->acap - tl->alen < len + 1) {
		size_t na = tl->acap ? tl->acap * 2 : 8192;
		unsigned char *a;

		while (na - tl->alen < len + 1)
			na *= 2;
		if ((a = xrealloc(tl->arena, na)) == NULL)
			return -1;
		tl->arena = a;
		tl->acap = na;
	}
	memcpy(tl->arena + tl->alen, p, len);
	tl->arena[tl->alen + len] = '\0';
	tl->off[tl->n] = tl->alen;
	tl->len[tl->n] = (uint16_t)len;
	tl->hash[tl->n] = h;
	tl->alen += len + 1;
	tl->slot[j] = (uint32_t)tl->n + 1;
	tl->n++;
	return 1;
}

int
toklist_add_over(struct toklist *tl, const void *tok, size_t len)
{
	size_t max = tl->max;
	int r;

	tl->max = tl->n + 1;	/* room for this one */
	r = toklist_add(tl, tok, len);
	tl->max = max;
	return r;
}

int
toklist_tail(const struct toklist *tl, size_t i)
{
	return i < tl->n && (tl->len[i] & LEN_TAIL) != 0;
}

void
toklist_set_tail(struct toklist *tl, size_t i)
{
	if (i < tl->n)
		tl->len[i] |= LEN_TAIL;
}

int
toklist_tail_words(const struct toklist *tl, size_t i)
{
	return i < tl->n && (tl->len[i] & LEN_TAIL_WORDS) != 0;
}

void
toklist_set_tail_words(struct toklist *tl, size_t i)
{
	if (i < tl->n)
		tl->len[i] |= LEN_TAIL_WORDS;
}
