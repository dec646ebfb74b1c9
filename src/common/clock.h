/*
 * clock: the monotonic clock in seconds, for planning budgets and reported
 * planning times (never for results: a seeded run without a time limit does
 * not depend on it).
 */
#ifndef INART_CLOCK_H
#define INART_CLOCK_H

#include <time.h>

static inline double inart_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
