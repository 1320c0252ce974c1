/*
 * limit.h - login attempts counted per key (an account, an address) in
 * a fixed window, for the web server's login rate limits
 *
 * An attempt is taken before the password is checked and given back
 * when it succeeds, so that requests arriving together cannot all pass
 * a limit that only one of them has yet to reach.  The table has a fixed
 * number of slots (memory stays bounded whatever an attacker sends):
 * when it is full, a new key takes a free slot, else one whose window
 * ended, else the oldest that is not at its limit; a key at its limit
 * loses its slot only when every slot is at its limit.  Keys are cut at
 * LIMIT_MAX_KEY bytes.  Thread-safe (one mutex); never logs or exits.
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

/* 0 when key may try again (fewer than max attempts in its window),
 * else the seconds until its window ends; nothing counted */
long limit_wait(struct limit *l, const char *key, unsigned max, time_t now);

/* take one attempt of key, which may make max in a window: 0 when it
 * may go on (the attempt is counted), else the seconds until its window
 * ends (nothing counted) */
long limit_take(struct limit *l, const char *key, unsigned max, time_t now);

/* give back an attempt of key taken in this window (it succeeded) */
void limit_give_back(struct limit *l, const char *key);

/* forget key's failures (a successful login of that account) */
void limit_clear(struct limit *l, const char *key);

#endif
