/*
 * clock.h - the monotonic clock, for deadlines, batches and timings
 *
 * One definition for every module that measures time (lock waits, train
 * and sync batches, the release timeout, the filter's log line), and
 * one pause for every module that waits.
 */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

#include <errno.h>
#include <time.h>

/* seconds on the monotonic clock */
static inline double
clock_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* milliseconds on the monotonic clock */
static inline double
clock_now_ms(void)
{
	return clock_now_s() * 1e3;
}

/* sleep ms milliseconds, the whole of them: a signal's handler that
 * returns does not cut the pause short (lock waits and the pauses
 * between batches count on their length) */
static inline void
clock_sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

#endif
