/*
 * test_grow: the doubling array helper -- the first allocation, no change
 * while there is room, doubling, and the elements kept across moves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/grow.h"

static void test_grow(void **state)
{
	long *a = NULL;
	int cap = 0;

	(void)state;
	for (int n = 0; n < 1000; n++) {
		int before = cap;

		assert_int_equal(inart_grow((void **)&a, &cap, n, sizeof(*a), 4), 0);
		assert_true(n < cap);
		if (n < before)
			assert_int_equal(cap, before); /* room: unchanged */
		else
			assert_int_equal(cap, before ? 2 * before : 4);
		a[n] = 7L * n;
	}
	assert_int_equal(cap, 1024);
	for (int n = 0; n < 1000; n++)
		assert_int_equal(a[n], 7L * n);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
