/*
 * test_strpool: copies are equal to their strings, stay where they are
 * while the pool grows past several blocks (and past a string larger than
 * a block), and the pool is empty and usable again after free.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strpool.h"

#define N_IDS 5000

static void test_copies_stay(void **state)
{
	struct inart_strpool p = {0};
	static char *copy[N_IDS];
	char id[32], *big = malloc(3 * INART_STRPOOL_BLOCK + 1), *big_copy = NULL;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', 3 * INART_STRPOOL_BLOCK);
	big[3 * INART_STRPOOL_BLOCK] = '\0';
	for (int i = 0; i < N_IDS; i++) {
		snprintf(id, sizeof(id), "node-%d", i);
		copy[i] = inart_strpool_dup(&p, id);
		assert_non_null(copy[i]);
		assert_ptr_not_equal(copy[i], id);
		if (i == N_IDS / 2) {
			big_copy = inart_strpool_dup(&p, big);
			assert_non_null(big_copy);
		}
	}
	assert_non_null(p.head->next); /* more than one block */
	for (int i = 0; i < N_IDS; i++) {
		snprintf(id, sizeof(id), "node-%d", i);
		assert_string_equal(copy[i], id);
	}
	assert_string_equal(big_copy, big);
	assert_string_equal(inart_strpool_dup(&p, ""), "");
	inart_strpool_free(&p);
	assert_null(p.head);
	assert_int_equal(p.used, 0);
	assert_string_equal(inart_strpool_dup(&p, "again"), "again");
	inart_strpool_free(&p);
	inart_strpool_free(&p); /* an empty pool: nothing */
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copies_stay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
