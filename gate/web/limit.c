/*
 * limit.c - fixed-window counters of failed logins
 *
 * A linear scan of a fixed table: logins are rare and each costs a
 * yescrypt hash, far more than the scan.  Keys come from requests (a
 * user name, an address) and are compared as cut, NUL-terminated
 * strings; they are never logged from here.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "gate/util/xalloc.h"
#include "gate/web/limit.h"

struct slot {
	char key[LIMIT_MAX_KEY + 1];	/* "" when free */
	unsigned fails;			/* attempts taken in the window */
	unsigned max;			/* the key's limit */
	time_t start;			/* the window's start */
};

struct limit {
	pthread_mutex_t mu;
	time_t window;
	size_t n;
	struct slot *s;
};

struct limit *
limit_new(size_t nslots, time_t window)
{
	struct limit *l;

	if (nslots == 0 || (l = xcalloc(1, sizeof(*l))) == NULL)
		return NULL;
	if ((l->s = xcalloc(nslots, sizeof(*l->s))) == NULL) {
		xfree(l);
		return NULL;
	}
	pthread_mutex_init(&l->mu, NULL);
	l->n = nslots;
	l->window = window;
	return l;
}

void
limit_free(struct limit *l)
{
	if (l == NULL)
		return;
	pthread_mutex_destroy(&l->mu);
	xfree(l->s);
	xfree(l);
}

/* key cut to the table's size */
static void
cut(const char *key, char *out)
{
	size_t n = strlen(key);

	if (n > LIMIT_MAX_KEY)
		n = LIMIT_MAX_KEY;
	memcpy(out, key, n);
	out[n] = '\0';
}

/* the slot of k, or NULL (mutex held) */
static struct slot *
find(struct limit *l, const char *k)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->s[i].key[0] != '\0' && strcmp(l->s[i].key, k) == 0)
			return &l->s[i];
	return NULL;
}

/* 0 free, 1 its window is over, 2 below its limit, 3 at it: the lowest
 * is given to a new key (of 2, the one with the fewest attempts), the
 * oldest window among equals */
static int
rank(const struct limit *l, const struct slot *s, time_t now)
{
	if (s->key[0] == '\0')
		return 0;
	if (now - s->start >= l->window)
		return 1;
	return s->fails < s->max ? 2 : 3;
}

long
limit_wait(struct limit *l, const char *key, unsigned max, time_t now)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s;
	long wait = 0;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) != NULL && now - s->start < l->window &&
	    s->fails >= max) {
		wait = (long)(s->start + l->window - now);
		if (wait < 1)
			wait = 1;
	}
	pthread_mutex_unlock(&l->mu);
	return wait;
}

long
limit_take(struct limit *l, const char *key, unsigned max, time_t now)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s, *best;
	long wait = 0;
	size_t i;
	int rb, ri;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) == NULL) {
		best = &l->s[0];
		rb = rank(l, best, now);
		for (i = 1; i < l->n && rb > 0; i++) {
			ri = rank(l, &l->s[i], now);
			/* (below their limits: the fewest attempts first, so
			 * that new names flooding in push out each other
			 * before a count that is close to its limit) */
			if (ri < rb || (ri == rb && (ri == 2 &&
			    l->s[i].fails != best->fails ? l->s[i].fails <
			    best->fails : l->s[i].start < best->start))) {
				best = &l->s[i];
				rb = ri;
			}
		}
		s = best;
		memcpy(s->key, k, sizeof(k));
		s->fails = 0;
		s->start = now;
	}
	s->max = max;
	if (now - s->start >= l->window) {
		s->fails = 0;
		s->start = now;
	}
	if (s->fails >= max) {
		wait = (long)(s->start + l->window - now);
		if (wait < 1)
			wait = 1;
	} else
		s->fails++;
	pthread_mutex_unlock(&l->mu);
	return wait;
}

void
limit_give_back(struct limit *l, const char *key)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) != NULL && s->fails > 0)
		s->fails--;
	pthread_mutex_unlock(&l->mu);
}

void
limit_clear(struct limit *l, const char *key)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) != NULL)
		s->key[0] = '\0';
	pthread_mutex_unlock(&l->mu);
}
