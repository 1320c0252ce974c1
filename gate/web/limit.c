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
	unsigned fails;
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

long
limit_wait(struct limit *l, const char *key, unsigned max, time_t now)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s;
	long wait = 0;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) != NULL && now - s->start < l->window &&
	    s->fails >= max)
		wait = (long)(s->start + l->window - now);
	pthread_mutex_unlock(&l->mu);
	return wait > 0 ? wait : (wait < 0 ? 1 : wait);
}

void
limit_fail(struct limit *l, const char *key, time_t now)
{
	char k[LIMIT_MAX_KEY + 1];
	struct slot *s, *old;
	size_t i;

	cut(key, k);
	pthread_mutex_lock(&l->mu);
	if ((s = find(l, k)) == NULL) {
		/* a free slot, else the oldest window */
		old = &l->s[0];
		for (i = 0; i < l->n; i++) {
			if (l->s[i].key[0] == '\0') {
				old = &l->s[i];
				break;
			}
			if (l->s[i].start < old->start)
				old = &l->s[i];
		}
		s = old;
		memcpy(s->key, k, sizeof(k));
		s->fails = 0;
		s->start = now;
	}
	if (now - s->start >= l->window) {
		s->fails = 0;
		s->start = now;
	}
	s->fails++;
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
