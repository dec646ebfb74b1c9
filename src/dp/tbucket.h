/*
 * tbucket: a token bucket, sans I/O (the time comes in as an argument).
 * switchd limits the rate at which it aggregates with one (its
 * --agg-mbps option, the emulator's model of an INA switch's aggregation
 * throughput, `agg_gbps` in topology files).
 *
 * Invariants: tokens <= burst; tokens go below zero only by the excess of a
 * request larger than the whole burst (such a request is granted when the
 * bucket is full, so that no size is refused for ever); over any interval
 * the bytes granted are at most burst + rate * interval (+ one request).
 * Time never goes backwards in the bucket (an earlier `now` is taken as
 * the last one seen).
 *
 * Ownership: a plain value owned by the caller; no allocation.
 */
#ifndef INART_TBUCKET_H
#define INART_TBUCKET_H

#include <stddef.h>
#include <stdint.h>

struct inart_tbucket {
	double rate_per_ns; /* bytes per nanosecond */
	double burst;	    /* bytes */
	double tokens;	    /* bytes */
	uint64_t last_ns;
};

/* A full bucket of burst bytes filling at bytes_per_s.  0, or -EINVAL if a
 * rate or burst is not finite and positive. */
int inart_tbucket_init(struct inart_tbucket *b, double bytes_per_s, double burst_bytes,
		       uint64_t now_ns);

/* Take n bytes: 1 if granted (tokens debited), 0 if not yet (nothing
 * taken).  A request above the burst is granted when the bucket is full. */
int inart_tbucket_take(struct inart_tbucket *b, size_t n, uint64_t now_ns);

/* Earliest time at which a request of n bytes would be granted (now_ns if
 * it would be now). */
uint64_t inart_tbucket_ready_at(const struct inart_tbucket *b, size_t n, uint64_t now_ns);

#endif
