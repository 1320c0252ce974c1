/*
 * clock.h - the monotonic clock, for deadlines, batches and timings
 *
 * One definition for every module that measures time (lock waits, train
 * and sync batches, the release timeout, the filter's log line).
 */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

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

#endif
