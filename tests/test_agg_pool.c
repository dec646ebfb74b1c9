/* Tests of agg_pool: the add engine against a scalar int64 reference (all
 * lengths, misaligned input, overflow both ways), and the slot pool: absorb,
 * completion, duplicates, busy slots, deadlines in FIFO order, take,
 * release, clear, kept aggregates and results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/agg_pool.h"

static void put_be(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

static int32_t get_be(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static uint32_t rnd32(void)
{
	return (uint32_t)rand() << 16 ^ (uint32_t)rand();
}

static void engine_checks(void)
{
	static int32_t sums[512] __attribute__((aligned(64)));
	static int64_t ref[512];
	static uint8_t buf[4 * 512 + 8];
	int n, off, k, i;

	srand(99);
	for (n = 0; n <= 70; n++) {
		for (off = 0; off < 4; off++) {
			uint8_t *be = buf + off;

			for (i = 0; i < n; i++) {
				sums[i] = (int32_t)(rnd32() >> 2) - (1 << 29);
				ref[i] = sums[i];
			}
			for (k = 0; k < 3; k++) {
				for (i = 0; i < n; i++) {
					int32_t v = (int32_t)(rnd32() >> 3) - (1 << 28);

					put_be(be + 4 * i, v);
					ref[i] += v;
				}
				/* |sum| <= 2^29 + 3 * 2^28 < 2^31: never overflows */
				assert_int_equal(inart_agg_add_be(sums, be, (size_t)n), 0);
			}
			for (i = 0; i < n; i++)
				assert_true(sums[i] == ref[i]);
			/* copy and store are byte swaps */
			inart_agg_copy_be(sums, be, (size_t)n);
			for (i = 0; i < n; i++)
				assert_int_equal(sums[i], get_be(be + 4 * i));
			memset(buf, 0, sizeof(buf));
			inart_agg_store_be(be, sums, (size_t)n);
			for (i = 0; i < n; i++)
				assert_int_equal(get_be(be + 4 * i), sums[i]);
		}
	}
	/* overflow in any single lane, at every position, both directions */
	for (n = 1; n <= 40; n++) {
		for (k = 0; k < n; k++) {
			for (i = 0; i < n; i++) {
				sums[i] = 5;
				put_be(buf + 4 * i, -7);
			}
			sums[k] = k % 2 ? INT32_MAX - 3 : INT32_MIN + 3;
			put_be(buf + 4 * k, k % 2 ? 4 : -4);
			assert_int_equal(inart_agg_add_be(sums, buf, (size_t)n), 1);
			/* exactly reaching the limits is not an overflow */
			sums[k] = k % 2 ? INT32_MAX - 3 : INT32_MIN + 3;
			put_be(buf + 4 * k, k % 2 ? 3 : -3);
			assert_int_equal(inart_agg_add_be(sums, buf, (size_t)n), 0);
			assert_int_equal(sums[k], k % 2 ? INT32_MAX : INT32_MIN);
		}
	}
	/* mixed signs never overflow */
	sums[0] = INT32_MAX;
	put_be(buf, INT32_MIN);
	assert_int_equal(inart_agg_add_be(sums, buf, 1), 0);
	assert_int_equal(sums[0], -1);
}

/* Both compiled variants when the CPU has AVX2, else the baseline only. */
static void test_engine(void **state)
{
	(void)state;
	assert_int_equal(inart_agg_engine_select(0), 0);
	assert_string_equal(inart_agg_engine(), "baseline");
	engine_checks();
	if (inart_agg_engine_select(1) == 0) {
		assert_string_equal(inart_agg_engine(), "avx2");
		engine_checks();
	} else {
		assert_string_equal(inart_agg_engine(), "baseline");
	}
}

static struct inart_agg_key key_of(uint32_t seq)
{
	struct inart_agg_key k;

	memset(&k, 0, sizeof(k));
	k.job = 3;
	k.label = 100;
	k.iter = 1;
	k.seq = seq;
	k.tree = 2;
	k.fan_in = 8;
	k.slot = (uint16_t)seq;
	k.count = 5;
	k.bitmap_words = 1;
	k.scale_exp = 10;
	return k;
}

static void vals(uint8_t *be, int n, int32_t base)
{
	int i;

	for (i = 0; i < n; i++)
		put_be(be + 4 * i, base * (i + 1));
}

static void test_absorb_complete(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(4, 8, 1000);
	struct inart_agg_key k = key_of(7);
	const struct inart_agg_slot *s;
	uint64_t exp = 0x0f, b;
	uint8_t be[64], out[64];
	int fresh, r, i;

	(void)state;
	assert_non_null(p);
	assert_int_equal(inart_agg_pool_n_slots(p), 4);
	assert_int_equal(inart_agg_pool_max_values(p), 8);
	assert_true(inart_agg_pool_next_deadline(p) == UINT64_MAX);
	for (r = 0; r < 4; r++) {
		b = 1ull << r;
		vals(be, 5, (r + 1) * 1000);
		i = inart_agg_pool_absorb(p, 2, &k, &b, be, &exp, 50 + (uint64_t)r, &fresh);
		assert_int_equal(i, r == 3 ? INART_AGG_COMPLETE : INART_AGG_ABSORBED);
		assert_int_equal(fresh, r == 0);
	}
	s = inart_agg_pool_slot(p, 2);
	assert_true(s->busy);
	assert_int_equal(s->absorbed, 4);
	assert_true(s->bitmap[0] == 0x0f);
	assert_true(s->deadline == 1050);
	assert_false(s->overflow);
	assert_int_equal(inart_agg_pool_busy(p), 1);
	assert_true(inart_agg_pool_next_deadline(p) == 1050);
	assert_int_equal(inart_agg_pool_take(p, 2, out), 5);
	/* (1000 + 2000 + 3000 + 4000) * (i + 1) */
	for (i = 0; i < 5; i++)
		assert_int_equal(get_be(out + 4 * i), 10000 * (i + 1));
	assert_false(inart_agg_pool_slot(p, 2)->busy);
	assert_int_equal(inart_agg_pool_busy(p), 0);
	assert_int_equal(inart_agg_pool_take(p, 2, out), -1);
	assert_true(inart_agg_pool_next_deadline(p) == UINT64_MAX);
	/* a single contribution equal to expected completes at once */
	b = 0x0f;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, &exp, 0, &fresh),
			 INART_AGG_COMPLETE);
	assert_int_equal(inart_agg_pool_take(p, 0, NULL), 5);
	/* expected NULL: never complete */
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, NULL, 0, NULL),
			 INART_AGG_ABSORBED);
	inart_agg_pool_destroy(p);
	inart_agg_pool_destroy(NULL);
}

static void test_duplicate_busy_invalid(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(4, 8, 1000);
	struct inart_agg_key k = key_of(7), k2;
	uint64_t exp = 0xff, b;
	uint8_t be[64], out[64];

	(void)state;
	vals(be, 5, 1);
	b = 0x03;
	assert_int_equal(inart_agg_pool_absorb(p, 1, &k, &b, be, &exp, 0, NULL), 0);
	/* exact duplicate and partial overlap: refused, slot unchanged */
	assert_int_equal(inart_agg_pool_absorb(p, 1, &k, &b, be, &exp, 0, NULL),
			 INART_AGG_DUPLICATE);
	b = 0x06;
	assert_int_equal(inart_agg_pool_absorb(p, 1, &k, &b, be, &exp, 0, NULL),
			 INART_AGG_DUPLICATE);
	assert_true(inart_agg_pool_slot(p, 1)->bitmap[0] == 0x03);
	assert_int_equal(inart_agg_pool_slot(p, 1)->absorbed, 1);
	/* any key field different: busy */
	b = 0x10;
#define BUSY_IF(field, value)                                                                      \
	do {                                                                                       \
		k2 = k;                                                                            \
		k2.field = value;                                                                  \
		assert_int_equal(inart_agg_pool_absorb(p, 1, &k2, &b, be, &exp, 0, NULL),          \
				 INART_AGG_BUSY);                                                  \
	} while (0)
	BUSY_IF(seq, 8);
	BUSY_IF(iter, 2);
	BUSY_IF(job, 4);
	BUSY_IF(tree, 3);
	BUSY_IF(label, 101);
	BUSY_IF(fan_in, 9);
	BUSY_IF(slot, 8);
	BUSY_IF(count, 4);
	BUSY_IF(scale_exp, 9);
	BUSY_IF(bitmap_words, 2);
	assert_true(inart_agg_pool_slot(p, 1)->bitmap[0] == 0x03);
	assert_int_equal(inart_agg_pool_take(p, 1, out), 5);
	assert_int_equal(get_be(out + 16), 5);
	/* invalid */
	assert_int_equal(inart_agg_pool_absorb(p, 4, &k, &b, be, &exp, 0, NULL), INART_AGG_EINVAL);
	assert_int_equal(inart_agg_pool_absorb(p, -1, &k, &b, be, &exp, 0, NULL), INART_AGG_EINVAL);
	k2 = k;
	k2.count = 9;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k2, &b, be, &exp, 0, NULL), INART_AGG_EINVAL);
	k2 = k;
	k2.bitmap_words = 0;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k2, &b, be, &exp, 0, NULL), INART_AGG_EINVAL);
	k2.bitmap_words = 17;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k2, &b, be, &exp, 0, NULL), INART_AGG_EINVAL);
	assert_int_equal(inart_agg_pool_busy(p), 0);
	assert_null(inart_agg_pool_slot(p, 4));
	inart_agg_pool_destroy(p);
	/* bad sizes */
	assert_null(inart_agg_pool_create(0, 8, 1));
	assert_null(inart_agg_pool_create(4, -1, 1));
	assert_null(inart_agg_pool_create(4, 65536, 1));
}

static void test_multiword(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(2, 400, 10);
	struct inart_agg_key k = key_of(1);
	uint64_t exp[16] = {0}, b[16];
	static uint8_t be[1600], out[1600];
	int r, i, rc = 0;

	(void)state;
	k.fan_in = 1000;
	k.bitmap_words = 16;
	k.count = 350;
	for (i = 0; i < 16; i++)
		exp[i] = i < 15 ? ~0ull : 0xffffffffffull; /* ranks 0..999 */
	for (r = 0; r < 1000; r++) {
		memset(b, 0, sizeof(b));
		b[r / 64] = 1ull << (r % 64);
		for (i = 0; i < 350; i++)
			put_be(be + 4 * i, (r - 500) * (i + 1));
		rc = inart_agg_pool_absorb(p, 1, &k, b, be, exp, (uint64_t)r, NULL);
		assert_int_equal(rc, r == 999 ? INART_AGG_COMPLETE : INART_AGG_ABSORBED);
	}
	assert_int_equal(inart_agg_pool_take(p, 1, out), 350);
	/* sum over r of (r - 500) = -500, times (i + 1) */
	for (i = 0; i < 350; i++)
		assert_int_equal(get_be(out + 4 * i), -500 * (i + 1));
	inart_agg_pool_destroy(p);
}

static void test_overflow_flag(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(1, 8, 10);
	struct inart_agg_key k = key_of(1);
	uint64_t exp = 0x7, b;
	uint8_t be[64];

	(void)state;
	vals(be, 5, 1);
	put_be(be + 8, 0x40000000);
	b = 1;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, &exp, 0, NULL), 0);
	b = 2;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, &exp, 0, NULL), 0);
	/* 2^30 + 2^30 = 2^31: overflow */
	assert_true(inart_agg_pool_slot(p, 0)->overflow);
	b = 4;
	put_be(be + 8, -0x40000000);
	/* stays flagged even though the final sum fits again (conservative) */
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, &exp, 0, NULL),
			 INART_AGG_COMPLETE);
	assert_true(inart_agg_pool_slot(p, 0)->overflow);
	inart_agg_pool_take(p, 0, NULL);
	/* a fresh allocation clears the flag */
	b = 1;
	assert_int_equal(inart_agg_pool_absorb(p, 0, &k, &b, be, &exp, 0, NULL), 0);
	assert_false(inart_agg_pool_slot(p, 0)->overflow);
	inart_agg_pool_destroy(p);
}

static void test_deadlines(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(8, 8, 100);
	struct inart_agg_key k;
	uint64_t exp = 0x3, b = 1;
	uint8_t be[64];
	int order[5] = {5, 2, 7, 0, 3}, i;

	(void)state;
	vals(be, 5, 1);
	for (i = 0; i < 5; i++) {
		k = key_of((uint32_t)order[i]);
		assert_int_equal(
		    inart_agg_pool_absorb(p, order[i], &k, &b, be, &exp, 10 * (uint64_t)i, NULL),
		    0);
	}
	assert_true(inart_agg_pool_next_deadline(p) == 100);
	assert_int_equal(inart_agg_pool_expired(p, 99), -1);
	assert_int_equal(inart_agg_pool_expired(p, 100), 5);
	/* completing a slot in the middle removes it from the FIFO */
	k = key_of(7);
	b = 2;
	assert_int_equal(inart_agg_pool_absorb(p, 7, &k, &b, be, &exp, 30, NULL),
			 INART_AGG_COMPLETE);
	assert_int_equal(inart_agg_pool_take(p, 7, NULL), 5);
	/* expire everything in deadline order: 5, 2, 0, 3 */
	{
		int want[4] = {5, 2, 0, 3}, j;

		for (j = 0; j < 4; j++) {
			assert_int_equal(inart_agg_pool_expired(p, 1000), want[j]);
			assert_int_equal(inart_agg_pool_take(p, want[j], NULL), 5);
		}
	}
	assert_int_equal(inart_agg_pool_expired(p, UINT64_MAX), -1);
	/* a clock stepping back keeps the FIFO sorted */
	k = key_of(1);
	b = 1;
	inart_agg_pool_absorb(p, 1, &k, &b, be, &exp, 500, NULL);
	k = key_of(4);
	inart_agg_pool_absorb(p, 4, &k, &b, be, &exp, 200, NULL);
	assert_true(inart_agg_pool_slot(p, 4)->deadline == 600);
	/* release and clear */
	inart_agg_pool_release(p, 1);
	inart_agg_pool_release(p, 1);
	assert_int_equal(inart_agg_pool_expired(p, 600), 4);
	inart_agg_pool_clear(p);
	assert_int_equal(inart_agg_pool_busy(p), 0);
	assert_int_equal(inart_agg_pool_expired(p, UINT64_MAX), -1);
	assert_false(inart_agg_pool_slot(p, 4)->busy);
	/* deadline saturates instead of wrapping */
	k = key_of(3);
	inart_agg_pool_absorb(p, 3, &k, &b, be, &exp, UINT64_MAX - 5, NULL);
	assert_true(inart_agg_pool_slot(p, 3)->deadline == UINT64_MAX);
	inart_agg_pool_destroy(p);
}

/* Random contributions with random duplicates: each slot's sum equals the
 * int64 sum of the accepted (disjoint) contributions. */
/* Kept contents: an emitted aggregate stays readable (not busy, no
 * deadline) until another chunk takes the slot; a stored result likewise;
 * release and clear drop them. */
static void test_kept(void **state)
{
	struct inart_agg_pool *p = inart_agg_pool_create(2, 8, 1000);
	struct inart_agg_key k = key_of(7), k2 = key_of(8);
	const struct inart_agg_slot *s;
	uint64_t exp = 0x03, b = 0x01;
	uint8_t be[64], out[64];
	int fresh;

	(void)state;
	assert_non_null(p);
	vals(be, 5, 10);
	assert_int_equal(inart_agg_pool_absorb(p, 1, &k, &b, be, &exp, 0, &fresh),
			 INART_AGG_ABSORBED);
	assert_int_equal(inart_agg_pool_slot(p, 1)->kept, INART_AGG_KEPT_NONE);
	/* read while aggregating: no change */
	assert_int_equal(inart_agg_pool_read(p, 1, out), 5);
	assert_int_equal(get_be(out), 10);
	assert_true(inart_agg_pool_slot(p, 1)->busy);
	/* emitted and kept */
	assert_int_equal(inart_agg_pool_take_keep(p, 1, out), 5);
	s = inart_agg_pool_slot(p, 1);
	assert_false(s->busy);
	assert_int_equal(s->kept, INART_AGG_KEPT_SENT);
	assert_true(s->bitmap[0] == 0x01);
	assert_int_equal(inart_agg_pool_busy(p), 0);
	assert_true(inart_agg_pool_next_deadline(p) == UINT64_MAX);
	assert_int_equal(inart_agg_pool_expired(p, UINT64_MAX), -1);
	memset(out, 0, sizeof(out));
	assert_int_equal(inart_agg_pool_read(p, 1, out), 5);
	assert_int_equal(get_be(out + 4 * 4), 50);
	/* another chunk takes the slot: the kept aggregate is gone */
	b = 0x02;
	assert_int_equal(inart_agg_pool_absorb(p, 1, &k2, &b, be, &exp, 0, &fresh),
			 INART_AGG_ABSORBED);
	assert_int_equal(fresh, 1);
	s = inart_agg_pool_slot(p, 1);
	assert_true(s->busy);
	assert_int_equal(s->kept, INART_AGG_KEPT_NONE);
	/* a result cannot be stored in a busy slot; it can once released */
	b = 0x03;
	vals(be, 5, 7);
	assert_int_equal(inart_agg_pool_keep_result(p, 1, &k, &b, be, 42), -1);
	inart_agg_pool_release(p, 1);
	assert_int_equal(inart_agg_pool_keep_result(p, 1, &k, &b, be, 42), 0);
	s = inart_agg_pool_slot(p, 1);
	assert_false(s->busy);
	assert_int_equal(s->kept, INART_AGG_KEPT_RESULT);
	assert_int_equal(s->aux, 42);
	assert_true(s->key.seq == k.seq && s->bitmap[0] == 0x03);
	assert_int_equal(inart_agg_pool_read(p, 1, out), 5);
	assert_int_equal(get_be(out + 4), 14);
	/* out of range, too many values, free slots */
	assert_int_equal(inart_agg_pool_keep_result(p, 2, &k, &b, be, 0), -1);
	k2.count = 9;
	assert_int_equal(inart_agg_pool_keep_result(p, 0, &k2, &b, be, 0), -1);
	assert_int_equal(inart_agg_pool_read(p, 0, out), -1);
	assert_int_equal(inart_agg_pool_read(p, 5, out), -1);
	/* release and clear drop kept contents */
	inart_agg_pool_release(p, 1);
	assert_int_equal(inart_agg_pool_slot(p, 1)->kept, INART_AGG_KEPT_NONE);
	assert_int_equal(inart_agg_pool_read(p, 1, out), -1);
	assert_int_equal(inart_agg_pool_keep_result(p, 1, &k, &b, be, 1), 0);
	inart_agg_pool_clear(p);
	assert_int_equal(inart_agg_pool_slot(p, 1)->kept, INART_AGG_KEPT_NONE);
	inart_agg_pool_destroy(p);
}

static void test_random_property(void **state)
{
	enum { SLOTS = 8, NV = 37, W = 2, FAN = 100 };
	struct inart_agg_pool *p = inart_agg_pool_create(SLOTS, NV, 1000);
	static int64_t ref[SLOTS][NV];
	uint64_t seen[SLOTS][W];
	uint64_t exp[W] = {~0ull, (1ull << (FAN - 64)) - 1};
	uint8_t be[4 * NV], out[4 * NV];
	int it, s, i;

	(void)state;
	srand(31337);
	memset(seen, 0, sizeof(seen));
	memset(ref, 0, sizeof(ref));
	for (it = 0; it < 20000; it++) {
		struct inart_agg_key k = key_of(1);
		uint64_t b[W] = {0, 0};
		int overlap, rc, r;

		k.fan_in = FAN;
		k.bitmap_words = W;
		k.count = NV;
		s = rand() % SLOTS;
		k.seq = (uint32_t)s;
		r = rand() % FAN;
		b[r / 64] |= 1ull << (r % 64);
		if (rand() % 3 == 0) {
			r = rand() % FAN;
			b[r / 64] |= 1ull << (r % 64);
		}
		for (i = 0; i < NV; i++)
			put_be(be + 4 * i, (int32_t)(rnd32() % 2001) - 1000);
		overlap = (seen[s][0] & b[0]) || (seen[s][1] & b[1]);
		rc = inart_agg_pool_absorb(p, s, &k, b, be, exp, (uint64_t)it, NULL);
		if (overlap) {
			assert_int_equal(rc, INART_AGG_DUPLICATE);
			continue;
		}
		assert_true(rc == INART_AGG_ABSORBED || rc == INART_AGG_COMPLETE);
		seen[s][0] |= b[0];
		seen[s][1] |= b[1];
		for (i = 0; i < NV; i++)
			ref[s][i] += get_be(be + 4 * i);
		if (rc == INART_AGG_COMPLETE || rand() % 50 == 0) {
			assert_int_equal(rc == INART_AGG_COMPLETE,
					 seen[s][0] == exp[0] && seen[s][1] == exp[1]);
			assert_int_equal(inart_agg_pool_take(p, s, out), NV);
			for (i = 0; i < NV; i++)
				assert_true(get_be(out + 4 * i) == ref[s][i]);
			memset(seen[s], 0, sizeof(seen[s]));
			memset(ref[s], 0, sizeof(ref[s]));
		}
	}
	inart_agg_pool_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_engine),
	    cmocka_unit_test(test_absorb_complete),
	    cmocka_unit_test(test_duplicate_busy_invalid),
	    cmocka_unit_test(test_multiword),
	    cmocka_unit_test(test_overflow_flag),
	    cmocka_unit_test(test_deadlines),
	    cmocka_unit_test(test_kept),
	    cmocka_unit_test(test_random_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
