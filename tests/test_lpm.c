/* Tests of lpm: hand cases, then random prefix sets (with deletions and
 * growth) checked against a brute-force longest match. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/lpm.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static void test_hand(void **state)
{
	struct inart_lpm *t = inart_lpm_create();
	uint32_t v = 0;

	(void)state;
	assert_non_null(t);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 0, 0, 1), &v), 0);
	assert_int_equal(inart_lpm_add(t, IP(10, 0, 0, 0), 8, 1), 0);
	assert_int_equal(inart_lpm_add(t, IP(10, 1, 0, 0), 16, 2), 0);
	assert_int_equal(inart_lpm_add(t, IP(10, 1, 2, 3), 32, 3), 0);
	assert_int_equal(inart_lpm_add(t, 0, 0, 9), 0);
	assert_int_equal(inart_lpm_count(t), 4);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 1, 2, 3), &v), 1);
	assert_int_equal(v, 3);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 1, 2, 4), &v), 1);
	assert_int_equal(v, 2);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 2, 2, 4), &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(inart_lpm_lookup(t, IP(11, 0, 0, 0), &v), 1);
	assert_int_equal(v, 9);
	/* host bits beyond the length are ignored; re-adding replaces */
	assert_int_equal(inart_lpm_add(t, IP(10, 1, 99, 99), 16, 5), 0);
	assert_int_equal(inart_lpm_count(t), 4);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 1, 0, 7), &v), 1);
	assert_int_equal(v, 5);
	assert_int_equal(inart_lpm_add(t, 0, 33, 1), -EINVAL);
	assert_int_equal(inart_lpm_add(t, 0, -1, 1), -EINVAL);
	/* delete */
	assert_int_equal(inart_lpm_del(t, IP(10, 1, 0, 0), 16), 0);
	assert_int_equal(inart_lpm_del(t, IP(10, 1, 0, 0), 16), -ENOENT);
	assert_int_equal(inart_lpm_del(t, IP(10, 1, 0, 0), 33), -ENOENT);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 1, 0, 7), &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(inart_lpm_del(t, 0, 0), 0);
	assert_int_equal(inart_lpm_lookup(t, IP(11, 0, 0, 0), &v), 0);
	inart_lpm_clear(t);
	assert_int_equal(inart_lpm_count(t), 0);
	assert_int_equal(inart_lpm_lookup(t, IP(10, 1, 2, 3), &v), 0);
	inart_lpm_destroy(t);
	inart_lpm_destroy(NULL);
}

struct ref {
	uint32_t prefix, value;
	int len, live;
};

static int ref_lookup(const struct ref *r, int n, uint32_t addr, uint32_t *v)
{
	int best = -1, i;

	for (i = 0; i < n; i++) {
		uint32_t m = r[i].len ? ~0u << (32 - r[i].len) : 0;

		if (r[i].live && (addr & m) == r[i].prefix && r[i].len > best) {
			best = r[i].len;
			*v = r[i].value;
		}
	}
	return best >= 0;
}

static int walk_fn(void *ctx, uint32_t prefix, int len, uint32_t value)
{
	int *count = ctx;

	(void)prefix;
	(void)len;
	(void)value;
	(*count)++;
	return 0;
}

static int walk_stop(void *ctx, uint32_t prefix, int len, uint32_t value)
{
	(void)ctx;
	(void)prefix;
	(void)len;
	(void)value;
	return 7;
}

static uint32_t rnd32(void)
{
	return (uint32_t)rand() << 16 ^ (uint32_t)rand();
}

static void test_random_vs_brute(void **state)
{
	enum { N = 600 };
	struct ref *r = calloc(N, sizeof(*r));
	int round;

	(void)state;
	srand(4242);
	for (round = 0; round < 6; round++) {
		struct inart_lpm *t = inart_lpm_create(), *c;
		int n = 0, i, q, live = 0, walked = 0;
		/* few lengths in some rounds, all lengths in others */
		int lens_mod = round % 2 ? 33 : 4;

		for (i = 0; i < N; i++) {
			uint32_t m;
			int j, dup = -1;

			r[n].len = lens_mod == 33 ? rand() % 33 : 8 * (1 + rand() % 4);
			m = r[n].len ? ~0u << (32 - r[n].len) : 0;
			/* cluster prefixes under 10/8 so they nest */
			r[n].prefix =
			    (rand() % 3 ? (IP(10, 0, 0, 0) | (rnd32() & 0xffffff)) : rnd32()) & m;
			r[n].value = rnd32();
			r[n].live = 1;
			assert_int_equal(inart_lpm_add(t, r[n].prefix, r[n].len, r[n].value), 0);
			for (j = 0; j < n; j++)
				if (r[j].live && r[j].len == r[n].len && r[j].prefix == r[n].prefix)
					dup = j;
			if (dup >= 0)
				r[dup].live = 0;
			n++;
			/* delete now and then */
			if (rand() % 5 == 0) {
				int k = rand() % n;

				if (r[k].live) {
					assert_int_equal(inart_lpm_del(t, r[k].prefix, r[k].len),
							 0);
					r[k].live = 0;
				} else {
					/* deleted or shadowed: only deletable if no live twin */
					int twin = 0;

					for (j = 0; j < n; j++)
						twin |= r[j].live && r[j].len == r[k].len &&
							r[j].prefix == r[k].prefix;
					if (!twin)
						assert_int_equal(
						    inart_lpm_del(t, r[k].prefix, r[k].len),
						    -ENOENT);
				}
			}
		}
		for (i = 0; i < n; i++)
			live += r[i].live;
		assert_int_equal(inart_lpm_count(t), live);
		assert_int_equal(inart_lpm_walk(t, walk_fn, &walked), 0);
		assert_int_equal(walked, live);
		if (live > 0)
			assert_int_equal(inart_lpm_walk(t, walk_stop, NULL), 7);
		c = inart_lpm_clone(t);
		assert_non_null(c);
		for (q = 0; q < 20000; q++) {
			uint32_t a, v1 = 0, v2 = 0, v3 = 0;
			int f1, f2;

			/* addresses near stored prefixes, and random ones */
			if (q % 2) {
				const struct ref *p = &r[rand() % n];

				a = p->prefix | (rnd32() & (p->len == 32  ? 0
							    : p->len == 0 ? ~0u
									  : ~0u >> p->len));
			} else {
				a = rnd32();
			}
			f1 = inart_lpm_lookup(t, a, &v1);
			f2 = ref_lookup(r, n, a, &v2);
			assert_int_equal(f1, f2);
			if (f1)
				assert_int_equal(v1, v2);
			assert_int_equal(inart_lpm_lookup(c, a, &v3), f1);
			if (f1)
				assert_int_equal(v3, v1);
		}
		/* the clone is independent */
		inart_lpm_clear(t);
		assert_int_equal(inart_lpm_count(c), live);
		inart_lpm_destroy(c);
		inart_lpm_destroy(t);
	}
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand),
	    cmocka_unit_test(test_random_vs_brute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
