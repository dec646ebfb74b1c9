/*
 * test_slab: one block for parallel arrays -- the two passes hand out the
 * same layout, every array aligned, zeroed and disjoint from the others; a
 * size that overflows fails with ENOMEM and allocates nothing;
 * inart_slab_block runs both passes over a lay_out that reads its sizes
 * from the object.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/slab.h"

struct arrs {
	double *d;
	char *c;
	int *i;
	int32_t *big; /* aligned to 64 */
	char *none;   /* zero elements */
};

static void lay_out(struct arrs *a, struct inart_slab *s, size_t n)
{
	a->d = inart_slab_take(s, n, sizeof(*a->d));
	a->c = inart_slab_take(s, 3 * n + 1, 1);
	a->i = inart_slab_take(s, n, sizeof(*a->i));
	a->big = inart_slab_take_aligned(s, n, sizeof(*a->big), 64);
	a->none = inart_slab_take(s, 0, 1);
}

static void test_layout(void **state)
{
	struct inart_slab s = INART_SLAB_INIT;
	struct arrs a;
	size_t n = 37, counted;

	(void)state;
	lay_out(&a, &s, n);
	assert_null(a.d); /* sizing pass */
	assert_null(a.big);
	counted = s.used;
	assert_true(counted >= n * (8 + 3 + 4 + 4) + 1);
	assert_int_equal(inart_slab_alloc(&s), 0);
	lay_out(&a, &s, n);
	assert_int_equal(s.used, counted); /* the same layout twice */
	assert_true(s.used <= s.size);
	assert_non_null(a.d);
	assert_non_null(a.none);
	assert_int_equal((uintptr_t)s.base % 64, 0);
	assert_int_equal((uintptr_t)a.d % _Alignof(max_align_t), 0);
	assert_int_equal((uintptr_t)a.i % _Alignof(max_align_t), 0);
	assert_int_equal((uintptr_t)a.big % 64, 0);
	/* in the order taken, disjoint */
	assert_true((char *)(a.d + n) <= a.c);
	assert_true(a.c + 3 * n + 1 <= (char *)a.i);
	assert_true((char *)(a.i + n) <= (char *)a.big);
	assert_true((char *)(a.big + n) <= s.base + s.size);
	for (size_t k = 0; k < n; k++) {
		assert_true(a.d[k] == 0.0 && a.i[k] == 0 && a.big[k] == 0);
		a.d[k] = (double)k;
		a.i[k] = -(int)k;
		a.big[k] = (int32_t)(2 * k);
	}
	for (size_t k = 0; k < 3 * n + 1; k++) {
		assert_int_equal(a.c[k], 0);
		a.c[k] = 'x';
	}
	for (size_t k = 0; k < n; k++) /* no array wrote over another */
		assert_true(a.d[k] == (double)k && a.i[k] == -(int)k &&
			    a.big[k] == (int32_t)(2 * k));
	free(s.base);
}

static void test_overflow(void **state)
{
	struct inart_slab s = INART_SLAB_INIT;

	(void)state;
	assert_null(inart_slab_take(&s, 16, 8));
	assert_null(inart_slab_take(&s, SIZE_MAX / 2, 4));
	errno = 0;
	assert_int_equal(inart_slab_alloc(&s), -ENOMEM);
	assert_int_equal(errno, ENOMEM);
	assert_null(s.base);
}

static void test_empty(void **state)
{
	struct inart_slab s = INART_SLAB_INIT;

	(void)state;
	assert_int_equal(inart_slab_alloc(&s), 0); /* nothing taken: still a block to free */
	assert_non_null(s.base);
	free(s.base);
}

/* The arrays of test_layout with their count, for inart_slab_block. */
struct counted {
	struct arrs a;
	size_t n;
};

static void counted_lay_out(void *obj, struct inart_slab *s)
{
	struct counted *x = obj;

	lay_out(&x->a, s, x->n);
}

static void test_block(void **state)
{
	struct counted x = {.n = 21};
	void *block;

	(void)state;
	block = inart_slab_block(&x, counted_lay_out);
	assert_non_null(block);
	assert_ptr_equal(x.a.d, block); /* the first array starts the block */
	assert_true((char *)(x.a.d + x.n) <= x.a.c);
	assert_true((char *)(x.a.i + x.n) <= (char *)x.a.big);
	assert_int_equal((uintptr_t)x.a.big % 64, 0);
	for (size_t k = 0; k < x.n; k++) {
		assert_true(x.a.d[k] == 0.0 && x.a.i[k] == 0 && x.a.big[k] == 0);
		x.a.d[k] = 1.5;
		x.a.i[k] = (int)k;
	}
	for (size_t k = 0; k < x.n; k++)
		assert_true(x.a.d[k] == 1.5 && x.a.i[k] == (int)k);
	free(block);

	x.n = SIZE_MAX / 4; /* does not fit: nothing allocated, the pointers NULL */
	errno = 0;
	block = inart_slab_block(&x, counted_lay_out);
	assert_null(block);
	assert_int_equal(errno, ENOMEM);
	assert_null(x.a.d);
	assert_null(x.a.i);
	assert_null(x.a.big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_overflow),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
