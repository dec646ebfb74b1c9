/* Tests of shaper (dp/shaper): refusals and defaults, the burst at start,
 * release times exact to the nanosecond, drop-tail at the limit with FIFO
 * order kept, a frame above the burst, the deadline's slack bounded by the
 * bucket's room, time going backwards, chunk reuse, and seeded random
 * arrivals and sizes driven like switchd's loop (next() at each deadline):
 * the bytes out of any window bounded by burst + rate * window + a frame,
 * and a backlogged shaper's long-run rate the set rate. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/shaper.h"

#define US 1000ull
#define MS 1000000ull

static struct inart_shaper *mk(uint64_t rate, uint32_t burst, uint32_t limit, uint64_t slack)
{
	struct inart_shaper_cfg c = {rate, burst, limit, slack};
	struct inart_shaper *sh = inart_shaper_create(&c, 0);

	assert_non_null(sh);
	return sh;
}

static void fill(uint8_t *f, size_t len, uint32_t seq)
{
	memset(f, (int)(seq & 0xff), len);
	memcpy(f, &seq, sizeof(seq));
}

static uint32_t seq_of(const uint8_t *f)
{
	uint32_t s;

	memcpy(&s, f, sizeof(s));
	return s;
}

static void test_create(void **state)
{
	struct inart_shaper_cfg c = {0}, got;
	struct inart_shaper *sh;

	(void)state;
	errno = 0;
	assert_null(inart_shaper_create(&c, 0));
	assert_int_equal(errno, EINVAL);
	c.rate_bps = INART_SHAPER_RATE_MAX + 1;
	assert_null(inart_shaper_create(&c, 0));
	c.rate_bps = 20000000;
	c.burst = INART_SHAPER_SIZE_MAX + 1;
	assert_null(inart_shaper_create(&c, 0));
	c.burst = 0;
	c.limit = INART_SHAPER_SIZE_MAX + 1;
	assert_null(inart_shaper_create(&c, 0));
	c.limit = 0;
	sh = inart_shaper_create(&c, 0);
	assert_non_null(sh);
	inart_shaper_cfg_of(sh, &got);
	/* 20 Mbit/s: 4 ms is 10000 bytes */
	assert_int_equal(got.burst, 10000);
	assert_int_equal(got.limit, 500000);
	assert_int_equal(inart_shaper_default_burst(200000000), 100000);
	/* 2 Mbit/s: 4 ms is 1000 bytes, below two full frames */
	assert_int_equal(inart_shaper_default_burst(2000000), 3028);
	assert_int_equal(inart_shaper_default_limit(1000000), 65536);
	assert_int_equal(inart_shaper_deadline(sh), UINT64_MAX);
	assert_int_equal(inart_shaper_ready_at(sh), UINT64_MAX);
	inart_shaper_destroy(sh);
	inart_shaper_destroy(NULL);
}

/* 8 Mbit/s = one byte per microsecond. */
static void test_exact(void **state)
{
	struct inart_shaper *sh = mk(8000000, 3000, 100000, 0);
	uint8_t f[1500];
	const uint8_t *out;
	uint16_t len;
	struct inart_shaper_stats st;

	(void)state;
	fill(f, sizeof(f), 0);
	/* full at start: two frames at once, the third held */
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	for (uint32_t k = 1; k <= 5; k++) {
		fill(f, 1000, k);
		assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD);
	}
	/* frame k (1000 bytes) is granted at exactly k ms */
	for (uint32_t k = 1; k <= 5; k++) {
		assert_int_equal(inart_shaper_ready_at(sh), k * MS);
		assert_int_equal(inart_shaper_deadline(sh), k * MS);
		assert_int_equal(inart_shaper_next(sh, k * MS - 1, &out, &len), 0);
		assert_int_equal(inart_shaper_next(sh, k * MS, &out, &len), 1);
		assert_int_equal(len, 1000);
		assert_int_equal(seq_of(out), k);
		assert_int_equal(out[999], k);
	}
	assert_int_equal(inart_shaper_next(sh, 100 * MS, &out, &len), 0);
	inart_shaper_stats(sh, &st);
	assert_int_equal(st.tx_pkts, 7);
	assert_int_equal(st.tx_bytes, 3000 + 5000);
	assert_int_equal(st.held_pkts, 5);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.max_queued_bytes, 5000);
	/* 100 ms idle: the bucket is full again (3000), no more */
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 100 * MS), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 100 * MS), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1, 100 * MS), INART_SHAPER_HELD);
	/* a non-integral time: 1 byte at 3 bit/s is ceil(8/3 s) */
	inart_shaper_destroy(sh);
	sh = mk(3, 1, 100, 0);
	assert_int_equal(inart_shaper_offer(sh, f, 1, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_ready_at(sh), 2666666667ull);
	inart_shaper_destroy(sh);
}

static void test_limit(void **state)
{
	struct inart_shaper *sh = mk(8000000, 1500, 10000, 0);
	uint8_t f[1500];
	const uint8_t *out;
	uint16_t len;
	struct inart_shaper_stats st;
	uint32_t want = 1;

	(void)state;
	fill(f, sizeof(f), 0);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	for (uint32_t k = 1; k <= 6; k++) { /* 9000 bytes held */
		fill(f, 1500, k);
		assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_HELD);
	}
	fill(f, 1500, 99);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_DROP); /* 10500 */
	assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD); /* 10000 */
	assert_int_equal(inart_shaper_offer(sh, f, 1, 0), INART_SHAPER_DROP);
	assert_int_equal(inart_shaper_offer(sh, f, 0, 0), INART_SHAPER_DROP);
	assert_int_equal(inart_shaper_offer(sh, f, INART_SHAPER_FRAME_MAX + 1, 0),
			 INART_SHAPER_DROP);
	inart_shaper_stats(sh, &st);
	assert_int_equal(st.drops, 4);
	assert_int_equal(st.drop_bytes, 1501 + INART_SHAPER_FRAME_MAX + 1);
	assert_int_equal(st.queued, 7);
	assert_int_equal(st.queued_bytes, 10000);
	/* all of it out in order, each at its time (1.5 ms per 1500 bytes) */
	for (uint64_t t = 0; t <= 20 * MS; t += 100 * US)
		while (inart_shaper_next(sh, t, &out, &len) == 1) {
			assert_int_equal(seq_of(out), want > 6 ? 99 : want);
			want++;
		}
	assert_int_equal(want, 8);
	inart_shaper_destroy(sh);
}

/* A frame above the burst goes when the bucket is full; its excess is a
 * debt the next frame waits for. */
static void test_big_frame(void **state)
{
	struct inart_shaper *sh = mk(8000000, 1000, 100000, 0);
	uint8_t f[1500] = {0};
	const uint8_t *out;
	uint16_t len;

	(void)state;
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND); /* -500 */
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_ready_at(sh), 1500 * US); /* -500 -> 1000 */
	assert_int_equal(inart_shaper_next(sh, 1500 * US, &out, &len), 1);
	assert_int_equal(inart_shaper_offer(sh, f, 100, 1500 * US), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_ready_at(sh), 2100 * US); /* -500 -> 100 */
	inart_shaper_destroy(sh);
}

/* The deadline waits up to slack_ns past the grant, bounded by the room the
 * bucket has; time going backwards changes nothing. */
static void test_slack(void **state)
{
	struct inart_shaper *sh = mk(8000000, 3000, 100000, 10 * MS);
	uint8_t f[1500] = {0};
	const uint8_t *out;
	uint16_t len;

	(void)state;
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_ready_at(sh), 1 * MS);
	/* room: 3000 - 1000 bytes = 2 ms of tokens, half of it for the slack */
	assert_int_equal(inart_shaper_deadline(sh), 2 * MS);
	/* woken then, the three go at once: a batch */
	assert_int_equal(inart_shaper_next(sh, 3 * MS, &out, &len), 1);
	assert_int_equal(inart_shaper_next(sh, 1 * MS, &out, &len), 1); /* backwards: 3 ms */
	assert_int_equal(inart_shaper_next(sh, 3 * MS, &out, &len), 1);
	assert_int_equal(inart_shaper_deadline(sh), UINT64_MAX);
	inart_shaper_destroy(sh);
	sh = mk(8000000, 3000, 100000, 500 * US);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1500, 0), INART_SHAPER_SEND);
	assert_int_equal(inart_shaper_offer(sh, f, 1000, 0), INART_SHAPER_HELD);
	assert_int_equal(inart_shaper_deadline(sh), 1500 * US); /* room/2: 1 ms */
	inart_shaper_destroy(sh);
}

/* Chunks are allocated while the queue grows past its largest, then reused. */
static void test_chunks(void **state)
{
	struct inart_shaper *sh = mk(1000000000, 1500, 4000000, 0);
	uint8_t f[1500] = {0};
	const uint8_t *out;
	uint16_t len;
	struct inart_shaper_stats st;
	uint64_t chunks = 0, t = 0;

	(void)state;
	for (int round = 0; round < 4; round++) {
		uint32_t got = 0;

		for (uint32_t k = 0; k < 1000; k++) {
			fill(f, 1500, k);
			if (inart_shaper_offer(sh, f, 1500, t) == INART_SHAPER_SEND)
				got++;
		}
		for (int step = 0; step < 2000; step++) {
			t += 20 * US; /* 1500 bytes at 1 Gbit/s: 12 us */
			while (inart_shaper_next(sh, t, &out, &len) == 1) {
				assert_int_equal(seq_of(out), got);
				got++;
			}
		}
		assert_int_equal(got, 1000);
		inart_shaper_stats(sh, &st);
		if (round == 0)
			chunks = st.chunks;
		assert_int_equal(st.chunks, chunks);
		assert_true(chunks >= 1000 * 1504 / 65536 && chunks <= 1000 * 1504 / 65000 + 2);
	}
	inart_shaper_destroy(sh);
}

/* Seeded arrivals and sizes, next() called at each deadline or arrival
 * (whichever first), as switchd's loop does; every window's bytes within
 * the bucket's bound, FIFO order, and the backlogged rate exact. */
static void run_random(uint64_t seed)
{
	struct inart_rng r;
	uint64_t rate, slack, t = 0, t_end, first_out = UINT64_MAX, last_out = 0;
	uint32_t burst, sent_seq = 0, next_seq = 0;
	struct inart_shaper *sh;
	uint8_t f[1514];
	const uint8_t *out;
	uint16_t len;
	/* the times and sizes of what left, for the window check */
	static uint64_t at[40000];
	static uint16_t sz[40000];
	int n_out = 0;
	double bytes = 0;

	inart_rng_seed(&r, seed);
	rate = 1000000 + inart_rng_below(&r, 1000000000);
	burst = 1514 + (uint32_t)inart_rng_below(&r, 60000);
	slack = inart_rng_below(&r, 2) ? inart_rng_below(&r, 2 * MS) : 0;
	sh = mk(rate, burst, INART_SHAPER_SIZE_MAX, slack);
	/* offered at twice the rate: backlogged throughout */
	t_end = 0;
	while (n_out < 30000) {
		size_t l = 64 + inart_rng_below(&r, 1451);
		uint64_t gap =
		    (uint64_t)((double)l * 8e9 / (double)rate / 2 * (0.5 + inart_rng_unit(&r)));
		uint64_t dl = inart_shaper_deadline(sh);

		/* releases due before the next arrival */
		while (dl <= t + gap) {
			int k = 0;

			while (inart_shaper_next(sh, dl, &out, &len) == 1) {
				assert_int_equal(seq_of(out), sent_seq);
				sent_seq++;
				at[n_out] = dl;
				sz[n_out++] = len;
				k++;
				if (n_out == 30000)
					break;
			}
			assert_true(k > 0);
			if (n_out == 30000)
				break;
			dl = inart_shaper_deadline(sh);
		}
		if (n_out == 30000)
			break;
		t += gap;
		fill(f, l, next_seq);
		switch (inart_shaper_offer(sh, f, l, t)) {
		case INART_SHAPER_SEND:
			assert_int_equal(sent_seq, next_seq);
			sent_seq++;
			at[n_out] = t;
			sz[n_out++] = (uint16_t)l;
			break;
		case INART_SHAPER_HELD:
			break;
		default: {
			struct inart_shaper_stats q;
			inart_shaper_stats(sh, &q);
			fail_msg("seed %llu: drop below the limit, len %zu queued %llu bytes %llu "
				 "chunks %llu rate %llu n_out %d",
				 (unsigned long long)seed, l, (unsigned long long)q.queued,
				 (unsigned long long)q.queued_bytes, (unsigned long long)q.chunks,
				 (unsigned long long)rate, n_out);
		}
		}
		next_seq++;
	}
	(void)t_end;
	/* windows: from each 97th frame to each later one */
	for (int i = 0; i < n_out; i += 97) {
		double b = 0;

		for (int j = i; j < n_out; j++) {
			b += sz[j];
			assert_true(b <= burst + (double)(at[j] - at[i]) * (double)rate / 8e9 +
					     1514 + 1);
		}
	}
	/* the rate from the first frame after the initial burst to the end */
	for (int i = 0; i < n_out; i++) {
		if (at[i] == 0)
			continue;
		if (first_out == UINT64_MAX)
			first_out = at[i];
		else
			bytes += sz[i];
		last_out = at[i];
	}
	{
		double got = bytes * 8e9 / (double)(last_out - first_out);

		/* within 1% (the burst and the slack's batch at either end) */
		if (!(got <= rate * 1.01 && got >= rate * 0.99))
			fail_msg("seed %llu: rate %.0f bit/s, set %llu (burst %u slack %llu)",
				 (unsigned long long)seed, got, (unsigned long long)rate, burst,
				 (unsigned long long)slack);
	}
	inart_shaper_destroy(sh);
}

static void test_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 12; seed++)
		run_random(seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create), cmocka_unit_test(test_exact),
	    cmocka_unit_test(test_limit),  cmocka_unit_test(test_big_frame),
	    cmocka_unit_test(test_slack),  cmocka_unit_test(test_chunks),
	    cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
