/* Tests of tbucket: refusals, the burst, the long-run rate (frames taken as
 * soon as ready_at allows, and seeded random sizes and arrival times checked
 * against the bound burst + rate * time), ready_at exact to the nanosecond,
 * requests above the burst, time going backwards. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/tbucket.h"

static void test_init(void **state)
{
	struct inart_tbucket b;

	(void)state;
	assert_int_equal(inart_tbucket_init(&b, 0, 100, 0), -EINVAL);
	assert_int_equal(inart_tbucket_init(&b, -1, 100, 0), -EINVAL);
	assert_int_equal(inart_tbucket_init(&b, 1e6, 0, 0), -EINVAL);
	assert_int_equal(inart_tbucket_init(&b, NAN, 100, 0), -EINVAL);
	assert_int_equal(inart_tbucket_init(&b, 1e6, INFINITY, 0), -EINVAL);
	assert_int_equal(inart_tbucket_init(&b, 1e6, 3000, 5), 0);
	/* full at start: the burst at once, then nothing */
	assert_int_equal(inart_tbucket_take(&b, 1500, 5), 1);
	assert_int_equal(inart_tbucket_take(&b, 1500, 5), 1);
	assert_int_equal(inart_tbucket_take(&b, 1, 5), 0);
}

static void test_ready_at(void **state)
{
	struct inart_tbucket b;
	uint64_t t;

	(void)state;
	/* 1e6 bytes/s = 1 byte per microsecond */
	assert_int_equal(inart_tbucket_init(&b, 1e6, 1500, 0), 0);
	assert_int_equal(inart_tbucket_ready_at(&b, 1500, 0), 0);
	assert_int_equal(inart_tbucket_take(&b, 1500, 0), 1);
	t = inart_tbucket_ready_at(&b, 1000, 0);
	assert_true(t >= 999999 && t <= 1000001);
	assert_int_equal(inart_tbucket_take(&b, 1000, t - 2000), 0);
	assert_int_equal(inart_tbucket_take(&b, 1000, t), 1);
	/* time going backwards: taken as the last time seen */
	assert_int_equal(inart_tbucket_take(&b, 1, 10), 0);
	assert_true(inart_tbucket_ready_at(&b, 1, 10) >= t);
	/* a request above the burst: granted when full, then the debt is paid */
	assert_int_equal(inart_tbucket_init(&b, 1e6, 1000, 0), 0);
	assert_int_equal(inart_tbucket_take(&b, 5000, 0), 1);
	t = inart_tbucket_ready_at(&b, 1, 0);
	assert_true(t >= 4000000 && t <= 4001001);
	assert_int_equal(inart_tbucket_take(&b, 5000, 4500000), 0);
	assert_int_equal(inart_tbucket_take(&b, 5000, 5000001), 1);
}

/* Frames of 1514 bytes taken as soon as allowed for 1 s of 12.5 MB/s:
 * the bytes granted are rate * 1 s within one frame plus the burst. */
static void test_rate(void **state)
{
	struct inart_tbucket b;
	const double rate = 12.5e6, burst = 4 * 1514;
	uint64_t now = 1000, end = now + 1000000000ull;
	double got = 0;

	(void)state;
	assert_int_equal(inart_tbucket_init(&b, rate, burst, now), 0);
	while (now < end) {
		if (inart_tbucket_take(&b, 1514, now))
			got += 1514;
		else
			now = inart_tbucket_ready_at(&b, 1514, now);
	}
	assert_true(got <= rate + burst + 1514);
	assert_true(got >= rate - 1514);
}

/* Seeded random sizes and arrivals: never more than burst + rate * t
 * (+ one request), and a bucket kept busy delivers at least rate * t minus
 * one request. */
static void test_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct inart_rng r;
		struct inart_tbucket b;
		double rate, burst, got = 0;
		uint64_t t0 = 77, now = t0;
		size_t maxn = 0;

		inart_rng_seed(&r, seed);
		rate = 1e4 + inart_rng_unit(&r) * 1e8;
		burst = 100 + inart_rng_unit(&r) * 1e5;
		assert_int_equal(inart_tbucket_init(&b, rate, burst, now), 0);
		for (int i = 0; i < 5000; i++) {
			size_t n = 1 + (size_t)inart_rng_below(&r, 3000);
			uint64_t ready = inart_tbucket_ready_at(&b, n, now);

			if (n > maxn)
				maxn = n;
			if (inart_tbucket_take(&b, n, now)) {
				assert_true(ready == now);
				got += (double)n;
			} else {
				assert_true(ready > now);
				/* busy: come back exactly when ready */
				now = inart_rng_below(&r, 4) ? ready
							     : now + inart_rng_below(&r, 1000000);
			}
			assert_true(got <=
				    burst + rate * (double)(now - t0) / 1e9 + (double)maxn + 1e-6);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init),
	    cmocka_unit_test(test_ready_at),
	    cmocka_unit_test(test_rate),
	    cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
