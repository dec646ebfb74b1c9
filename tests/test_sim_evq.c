/*
 * test_sim_evq: the simulator's event queue (sim/sim_evq.h): order of
 * random keys against a sort, FIFO among equal times, interleaved pushes
 * and pops.
 */
#include <stdint.h>

#include "testutil.h"

#include "common/rng.h"
#include "sim/sim_evq.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_evq(void **state)
{
	struct inart_sim_evq q;
	struct inart_sim_ev ev;
	struct inart_rng r;
	enum { N = 5000 };
	uint64_t *keys = malloc(N * sizeof(uint64_t));
	int last_a = -1;
	uint64_t last_t = 0;

	(void)state;
	inart_sim_evq_init(&q);
	assert_int_equal(inart_sim_evq_pop(&q, &ev), 0);
	inart_rng_seed(&r, 7);
	for (int i = 0; i < N; i++) {
		keys[i] = inart_rng_below(&r, 300); /* many ties */
		assert_int_equal(inart_sim_evq_push(&q, keys[i], 1, i, NULL), 0);
	}
	qsort(keys, N, sizeof(uint64_t), cmp_u64);
	for (int i = 0; i < N; i++) {
		assert_int_equal(inart_sim_evq_pop(&q, &ev), 1);
		assert_int_equal(ev.t, keys[i]);
		/* FIFO among equal times: insertion numbers increase */
		if (i > 0 && ev.t == last_t)
			assert_true(ev.a > last_a);
		last_t = ev.t;
		last_a = ev.a;
	}
	assert_int_equal(inart_sim_evq_pop(&q, &ev), 0);
	/* interleaved pushes and pops keep the order */
	for (int i = 0; i < 100; i++)
		inart_sim_evq_push(&q, (uint64_t)(100 - i), 0, i, NULL);
	inart_sim_evq_pop(&q, &ev);
	assert_int_equal(ev.t, 1);
	inart_sim_evq_push(&q, 0, 0, 999, NULL);
	inart_sim_evq_pop(&q, &ev);
	assert_int_equal(ev.a, 999);
	inart_sim_evq_pop(&q, &ev);
	assert_int_equal(ev.t, 2);
	inart_sim_evq_free(&q);
	free(keys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
