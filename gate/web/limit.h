/*
 * limit.h - failed logins counted per key (an account, an address) in a
 * fixed window, for the web server's login rate limits
 *
 * The table has a fixed number of slots: when it is full the oldest
 * window is forgotten (memory stays bounded whatever an attacker
 * sends).  Keys are cut at LIMIT_MAX_KEY bytes.  Thread-safe (one
 * mutex); never logs or exits.
 */
#ifndef LG_LIMIT_H
#define LG_LIMIT_H

#include <stddef.h>
#include <time.h>

#define LIMIT_MAX_KEY	96

struct limit;

/* a table of nslots keys counting failures over window seconds; NULL
 * when out of memory */
struct limit *limit_new(size_t nslots, time_t window);
void limit_free(struct limit *l);

/* 0 when key may try again (fewer than max failures in its window),
 * else the seconds until its window ends */
long limit_wait(struct limit *l, const char *key, unsigned max, time_t now);

/* count one failure of key */
void limit_fail(struct limit *l, const char *key, time_t now);

/* forget key's failures (a successful login of that account) */
void limit_clear(struct limit *l, const char *key);

#endif
