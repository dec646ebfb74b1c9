/*
 * tbucket: token bucket (see tbucket.h).  Tokens are refilled lazily from
 * the time elapsed since the last call.
 */
#include "dp/tbucket.h"

#include <errno.h>
#include <math.h>

int inart_tbucket_init(struct inart_tbucket *b, double bytes_per_s, double burst_bytes,
		       uint64_t now_ns)
{
	if (!(isfinite(bytes_per_s) && bytes_per_s > 0 && isfinite(burst_bytes) && burst_bytes > 0))
		return -EINVAL;
	b->rate_per_ns = bytes_per_s / 1e9;
	b->burst = burst_bytes;
	b->tokens = burst_bytes;
	b->last_ns = now_ns;
	return 0;
}

static void refill(struct inart_tbucket *b, uint64_t now_ns)
{
	if (now_ns <= b->last_ns)
		return;
	b->tokens += (double)(now_ns - b->last_ns) * b->rate_per_ns;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->last_ns = now_ns;
}

/* Tokens a request of n bytes needs in the bucket before it is granted. */
static double need(const struct inart_tbucket *b, size_t n)
{
	return (double)n < b->burst ? (double)n : b->burst;
}

int inart_tbucket_take(struct inart_tbucket *b, size_t n, uint64_t now_ns)
{
	refill(b, now_ns);
	if (b->tokens < need(b, n))
		return 0;
	b->tokens -= (double)n;
	return 1;
}

uint64_t inart_tbucket_ready_at(const struct inart_tbucket *b, size_t n, uint64_t now_ns)
{
	uint64_t t = now_ns > b->last_ns ? now_ns : b->last_ns;
	double have = b->tokens + (double)(t - b->last_ns) * b->rate_per_ns, missing;

	if (have > b->burst)
		have = b->burst;
	missing = need(b, n) - have;
	if (missing <= 0)
		return t;
	return t + (uint64_t)ceil(missing / b->rate_per_ns);
}
