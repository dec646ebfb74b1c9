/*
 * clock: the monotonic clock, in seconds for planning budgets and reported
 * planning times (never for results: a seeded run without a time limit does
 * not depend on it), in nanoseconds for the I/O shells of the data plane (the
 * sans-I/O cores take the time as an argument: the shells read it here).
 */
#ifndef INART_CLOCK_H
#define INART_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline double inart_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline uint64_t inart_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Milliseconds, signed: for deadlines and timeouts of the control sockets. */
static inline int64_t inart_now_ms(void)
{
	return (int64_t)(inart_now_ns() / 1000000);
}

#endif
