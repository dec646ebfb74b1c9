/*
 * test_rank: the "most loaded first" order -- larger values first, equal
 * values by smaller id, infinite values ahead of every finite one.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/rank.h"

static void test_order(void **state)
{
	struct inart_rank r[] = {
	    {4, 1.0}, {0, 2.5}, {7, INFINITY}, {2, 1.0}, {9, 0.0}, {3, 2.5}, {1, 1.0},
	};
	const int want[] = {7, 0, 3, 1, 2, 4, 9};
	size_t n = sizeof(r) / sizeof(r[0]);

	(void)state;
	inart_rank_sort(r, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(r[i].id, want[i]);
	for (size_t i = 0; i + 1 < n; i++) {
		assert_true(inart_rank_cmp(&r[i], &r[i + 1]) < 0);
		assert_true(inart_rank_cmp(&r[i + 1], &r[i]) > 0);
		assert_int_equal(inart_rank_cmp(&r[i], &r[i]), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
