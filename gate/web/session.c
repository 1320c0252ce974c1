/*
 * session.c - in-memory login sessions with their CSRF tokens
 *
 * Session ids and tokens come from getrandom(2).  The table is a fixed
 * array searched by the SHA-256 of the id (GNU Nettle), so memory is
 * bounded and a lookup's timing says nothing about the ids kept.  Ids
 * from requests are hostile: anything but 64 lower-case hex digits is
 * no session.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/sha2.h>

#include "gate/util/xalloc.h"
#include "gate/web/pwhash.h"
#include "gate/web/session.h"

struct sess {
	unsigned char idhash[SHA256_DIGEST_SIZE];
	int used;
	char user[USERS_MAX_NAME + 1];
	unsigned char tag[SESSION_TAG];
	char csrf[SESSION_HEX];
	char flash[SESSION_FLASH];
	time_t start, last;
};

struct session_store {
	pthread_mutex_t mu;
	size_t max;
	struct sess *v;
};

int
session_random_hex(char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[64];
	size_t got = 0, i;
	ssize_t r;

	if (n > sizeof(b))
		return -1;
	while (got < n) {
		r = getrandom(b + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
	explicit_bzero(b, sizeof(b));
	return 0;
}

struct session_store *
session_store_new(size_t max)
{
	struct session_store *s;

	if (max == 0 || (s = xcalloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->v = xcalloc(max, sizeof(*s->v))) == NULL) {
		xfree(s);
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->max = max;
	return s;
}

void
session_store_free(struct session_store *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s->v, s->max * sizeof(*s->v));
	pthread_mutex_destroy(&s->mu);
	xfree(s->v);
	xfree(s);
}

/* 1 when sid is 64 lower-case hex digits */
static int
sid_ok(const char *sid)
{
	size_t i;

	for (i = 0; i < SESSION_HEX - 1; i++)
		if (!((sid[i] >= '0' && sid[i] <= '9') ||
		    (sid[i] >= 'a' && sid[i] <= 'f')))
			return 0;
	return sid[i] == '\0';
}

static void
hash_sid(const char *sid, unsigned char out[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, SESSION_HEX - 1, (const uint8_t *)sid);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

/* 1 when e is over at now */
static int
expired(const struct sess *e, time_t now)
{
	return now - e->last >= SESSION_IDLE_S ||
	    now - e->start >= SESSION_MAX_S;
}

/* the live session with id sid, or NULL (mutex held) */
static struct sess *
lookup(struct session_store *s, const char *sid, time_t now)
{
	unsigned char h[SHA256_DIGEST_SIZE];
	struct sess *found = NULL;
	size_t i;

	if (sid == NULL || !sid_ok(sid))
		return NULL;
	hash_sid(sid, h);
	for (i = 0; i < s->max; i++)
		if (s->v[i].used && pwhash_equal(s->v[i].idhash, h, sizeof(h)))
			found = &s->v[i];
	if (found != NULL && expired(found, now)) {
		memset(found, 0, sizeof(*found));
		found = NULL;
	}
	return found;
}

int
session_start(struct session_store *s, const char *user,
    const unsigned char tag[SESSION_TAG], time_t now, char sid[SESSION_HEX])
{
	struct sess *e = NULL, *mine = NULL, *fr = NULL;
	char csrf[SESSION_HEX];
	size_t i, nmine = 0;

	if (session_random_hex(sid, 32) < 0 ||
	    session_random_hex(csrf, 32) < 0)
		return -1;
	pthread_mutex_lock(&s->mu);
	/* the user's own least recently used when it has its share, else
	 * a free or ended slot, else the least recently used of all */
	for (i = 0; i < s->max; i++) {
		if (!s->v[i].used || expired(&s->v[i], now)) {
			if (fr == NULL)
				fr = &s->v[i];
			continue;
		}
		if (strcmp(s->v[i].user, user) == 0) {
			nmine++;
			if (mine == NULL || s->v[i].last < mine->last)
				mine = &s->v[i];
		}
		if (e == NULL || s->v[i].last < e->last)
			e = &s->v[i];
	}
	if (nmine >= SESSION_PER_USER)
		e = mine;
	else if (fr != NULL)
		e = fr;
	memset(e, 0, sizeof(*e));
	e->used = 1;
	hash_sid(sid, e->idhash);
	snprintf(e->user, sizeof(e->user), "%s", user);
	memcpy(e->tag, tag, SESSION_TAG);
	memcpy(e->csrf, csrf, sizeof(csrf));
	e->start = e->last = now;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

int
session_find(struct session_store *s, const char *sid, time_t now,
    struct session_view *v)
{
	struct sess *e;

	pthread_mutex_lock(&s->mu);
	if ((e = lookup(s, sid, now)) == NULL) {
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	e->last = now;
	memcpy(v->user, e->user, sizeof(v->user));
	memcpy(v->tag, e->tag, sizeof(v->tag));
	memcpy(v->csrf, e->csrf, sizeof(v->csrf));
	memcpy(v->flash, e->flash, sizeof(v->flash));
	e->flash[0] = '\0';
	pthread_mutex_unlock(&s->mu);
	return 1;
}

void
session_flash(struct session_store *s, const char *sid, const char *msg)
{
	struct sess *e;

	pthread_mutex_lock(&s->mu);
	if ((e = lookup(s, sid, time(NULL))) != NULL)
		snprintf(e->flash, sizeof(e->flash), "%s", msg);
	pthread_mutex_unlock(&s->mu);
}

void
session_end(struct session_store *s, const char *sid)
{
	struct sess *e;

	pthread_mutex_lock(&s->mu);
	if ((e = lookup(s, sid, time(NULL))) != NULL)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&s->mu);
}

int
session_cookie_ids(const char *hdr, const char *name, char ids[][SESSION_HEX],
    size_t max, size_t *n_r)
{
	const char *p = hdr, *e, *eq, *v, *ve;
	size_t nl = strlen(name), i;

	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, ';');
		if (e == NULL)
			e = p + strlen(p);
		eq = memchr(p, '=', (size_t)(e - p));
		if (eq != NULL) {
			/* the name, blanks before '=' dropped */
			ve = eq;
			while (ve > p && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			v = eq + 1;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			if ((size_t)(ve - p) == nl && memcmp(p, name, nl) == 0) {
				ve = e;
				while (ve > v && (ve[-1] == ' ' ||
				    ve[-1] == '\t'))
					ve--;
				if (ve - v >= 2 && *v == '"' && ve[-1] == '"') {
					v++;
					ve--;
				}
				if ((size_t)(ve - v) == SESSION_HEX - 1) {
					char id[SESSION_HEX];

					memcpy(id, v, SESSION_HEX - 1);
					id[SESSION_HEX - 1] = '\0';
					for (i = 0; i < *n_r &&
					    strcmp(ids[i], id) != 0; i++)
						;
					if (sid_ok(id) && i == *n_r) {
						if (*n_r >= max)
							return -1;
						memcpy(ids[(*n_r)++], id,
						    SESSION_HEX);
					}
				}
			}
		}
		p = e;
	}
	return 0;
}

int
session_csrf_ok(const char *csrf, const char *token)
{
	if (token == NULL || strlen(token) != SESSION_HEX - 1 ||
	    strlen(csrf) != SESSION_HEX - 1)
		return 0;
	return pwhash_equal(csrf, token, SESSION_HEX - 1);
}
