/* Tests of quant: rounding, range and NaN detection, decoding, the safe
 * scale, the rescale rule, and the documented error bound on random sums. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/quant.h"

static void test_value(void **state)
{
	int32_t q;

	(void)state;
	assert_int_equal(inart_quant_value(1.0f, 16, &q), 0);
	assert_int_equal(q, 65536);
	assert_int_equal(inart_quant_value(-1.5f, 1, &q), 0);
	assert_int_equal(q, -3);
	/* round to nearest, halves away from zero */
	assert_int_equal(inart_quant_value(0.75f, 1, &q), 0); /* 1.5 -> 2 */
	assert_int_equal(q, 2);
	assert_int_equal(inart_quant_value(-0.75f, 1, &q), 0);
	assert_int_equal(q, -2);
	assert_int_equal(inart_quant_value(0.7f, 1, &q), 0); /* 1.4 -> 1 */
	assert_int_equal(q, 1);
	assert_int_equal(inart_quant_value(0.3f, 0, &q), 0);
	assert_int_equal(q, 0);
	/* negative scales */
	assert_int_equal(inart_quant_value(1000.0f, -4, &q), 0); /* 62.5 -> 63 */
	assert_int_equal(q, 63);
	/* range: 2^31 - 1 fits, 2^31 does not */
	assert_int_equal(inart_quant_value(32768.0f, 16, &q), -ERANGE); /* 2^31 */
	assert_int_equal(q, INT32_MAX);
	assert_int_equal(inart_quant_value(-32768.0f, 16, &q), -ERANGE);
	assert_int_equal(q, -INT32_MAX);
	assert_int_equal(inart_quant_value(32767.99f, 16, &q), 0);
	assert_true(q > 2147482000);
	assert_int_equal(inart_quant_value(2147483520.0f, 0, &q), 0); /* largest float < 2^31 */
	assert_int_equal(q, 2147483520);
	/* NaN / Inf */
	assert_int_equal(inart_quant_value(NAN, 0, &q), -EDOM);
	assert_int_equal(inart_quant_value(INFINITY, -128, &q), -EDOM);
	assert_int_equal(inart_quant_value(-INFINITY, 0, &q), -EDOM);
	/* every finite float fits at the lowest scale */
	assert_int_equal(inart_quant_value(FLT_MAX, INART_QUANT_SCALE_MIN, &q), 0);
	assert_int_equal(q, 1);
	/* FLT_MAX * 2^-97 = 2^31 - 2^7 fits, twice that does not */
	assert_int_equal(inart_quant_value(-FLT_MAX, -96, &q), -ERANGE);
	assert_int_equal(inart_quant_value(-FLT_MAX, -97, &q), 0);
	assert_int_equal(q, -2147483520);
	/* subnormals round to 0 at ordinary scales, exactly represented at 127+ */
	assert_int_equal(inart_quant_value(1e-40f, 16, &q), 0);
	assert_int_equal(q, 0);
	/* bad scale */
	assert_int_equal(inart_quant_value(1.0f, 128, &q), -EINVAL);
	assert_int_equal(inart_quant_value(1.0f, -129, &q), -EINVAL);
}

static void test_encode_decode(void **state)
{
	float x[6] = {1.0f, -2.25f, 0.0f, 1e6f, 3.0e-5f, -7.5f}, y[6];
	int32_t q[6];

	(void)state;
	assert_int_equal(inart_quant_encode(x, 6, 8, q), 0);
	assert_int_equal(q[0], 256);
	assert_int_equal(q[1], -576);
	assert_int_equal(q[2], 0);
	assert_int_equal(q[3], 256000000);
	assert_int_equal(q[4], 0); /* 0.00768 -> 0 */
	assert_int_equal(q[5], -1920);
	inart_quant_decode(q, 6, 8, y);
	assert_true(y[0] == 1.0f && y[1] == -2.25f && y[2] == 0 && y[3] == 1e6f && y[4] == 0 &&
		    y[5] == -7.5f);
	/* 1e6 * 2^12 > 2^31: range error, the others still written */
	memset(q, 0x55, sizeof(q));
	assert_int_equal(inart_quant_encode(x, 6, 12, q), -ERANGE);
	assert_int_equal(q[0], 4096);
	assert_int_equal(q[3], INT32_MAX);
	assert_int_equal(q[5], -30720);
	/* NaN wins over a range error wherever it is */
	x[0] = NAN;
	assert_int_equal(inart_quant_encode(x, 6, 12, q), -EDOM);
	x[0] = 1.0f;
	x[5] = INFINITY;
	assert_int_equal(inart_quant_encode(x, 6, 12, q), -EDOM);
	assert_int_equal(inart_quant_encode(x, 0, 12, q), 0);
	/* int64 sums */
	{
		int64_t s[3] = {(int64_t)1 << 40, -3, 0};
		float f[3];

		inart_quant_decode64(s, 3, 20, f);
		assert_true(f[0] == 1048576.0f && f[1] == -3.0f / 1048576.0f && f[2] == 0);
	}
}

static void test_max_abs(void **state)
{
	float x[4] = {1, -5, 3, 0};

	(void)state;
	assert_true(inart_quant_max_abs(x, 4) == 5.0f);
	assert_true(inart_quant_max_abs(x, 0) == 0.0f);
	x[2] = NAN;
	assert_true(isnan(inart_quant_max_abs(x, 4)));
	x[2] = -INFINITY;
	assert_true(isinf(inart_quant_max_abs(x, 4)));
}

/* A scale s is safe for (m, n) iff n * round(m 2^s) <= INT32_MAX. */
static int safe(double m, int n, int s)
{
	return round(m * ldexp(1, s)) * n <= 2147483647.0;
}

static void test_safe_scale(void **state)
{
	struct inart_rng r;
	int s;

	(void)state;
	assert_int_equal(inart_quant_safe_scale(0, 64, 16, &s), 0);
	assert_int_equal(s, 16);
	assert_int_equal(inart_quant_safe_scale(1.0f, 1, 16, &s), 0);
	assert_int_equal(s, 16);
	/* 1.0, 2^15 workers would need 2^15 * 2^s <= 2^31 - 1: s = 15 */
	assert_int_equal(inart_quant_safe_scale(1.0f, 1, 40, &s), 0);
	assert_int_equal(s, 30); /* 2^30 fits, 2^31 does not */
	assert_int_equal(inart_quant_safe_scale(1.0f, 2, 40, &s), 0);
	assert_int_equal(s, 29);
	assert_int_equal(inart_quant_safe_scale(1.0f, 3, 40, &s), 0);
	assert_int_equal(s, 29); /* 3 * 2^29 < 2^31 */
	assert_int_equal(inart_quant_safe_scale(1.0f, 4, 40, &s), 0);
	assert_int_equal(s, 28);
	assert_int_equal(inart_quant_safe_scale(FLT_MAX, 1024, 16, &s), 0);
	assert_true(safe(FLT_MAX, 1024, s) && !safe(FLT_MAX, 1024, s + 1));
	assert_int_equal(inart_quant_safe_scale(NAN, 4, 16, &s), -EDOM);
	assert_int_equal(inart_quant_safe_scale(INFINITY, 4, 16, &s), -EDOM);
	assert_int_equal(inart_quant_safe_scale(1.0f, 0, 16, &s), -EINVAL);
	assert_int_equal(inart_quant_safe_scale(1.0f, 1, 200, &s), -EINVAL);
	/* property: the result is safe and the next scale up is not (unless capped) */
	inart_rng_seed(&r, 7);
	for (int i = 0; i < 20000; i++) {
		float m =
		    (float)ldexp(inart_rng_unit(&r) + 0.001, (int)inart_rng_below(&r, 200) - 100);
		int n = 1 + (int)inart_rng_below(&r, 1024);
		int cap = (int)inart_rng_below(&r, 256) - 128;

		assert_int_equal(inart_quant_safe_scale(m, n, cap, &s), 0);
		assert_true(s <= cap && s >= INART_QUANT_SCALE_MIN);
		assert_true(safe(m, n, s));
		if (s < cap)
			assert_false(safe(m, n, s + 1));
	}
}

static void test_lower(void **state)
{
	(void)state;
	assert_int_equal(inart_quant_lower(16), 16 - INART_QUANT_RESCALE_STEP);
	assert_int_equal(inart_quant_lower(-120), -128);
	assert_int_equal(inart_quant_lower(-128), -128);
	assert_true(inart_quant_bound(16, 1) == ldexp(1, -17));
	assert_true(inart_quant_bound(0, 64) == 32.0);
}

/* Random sums of n workers: the integer sum of the quantized values,
 * dequantized, is within n 2^-(s+1) of the exact sum, and the float result
 * within that plus half an ulp. */
static void test_error_bound(void **state)
{
	struct inart_rng r;
	double worst = 0;

	(void)state;
	inart_rng_seed(&r, 42);
	for (int it = 0; it < 20000; it++) {
		int n = 1 + (int)inart_rng_below(&r, 64);
		int s = (int)inart_rng_below(&r, 40) - 10;
		double mag = ldexp(1, 28 - s) / n; /* values small enough to fit */
		double exact = 0, sumabs = 0, bound = inart_quant_bound(s, n);
		int64_t sum = 0;
		float f;

		for (int k = 0; k < n; k++) {
			float x = (float)((2 * inart_rng_unit(&r) - 1) * mag);
			int32_t q;

			assert_int_equal(inart_quant_value(x, s, &q), 0);
			/* per value */
			assert_true(fabs(ldexp((double)q, -s) - (double)x) <= ldexp(1, -(s + 1)));
			exact += (double)x;
			sumabs += fabs((double)x);
			sum += q;
		}
		assert_true(sum <= INT32_MAX && sum >= INT32_MIN);
		{
			double d = ldexp((double)sum, -s), err = fabs(d - exact);
			int32_t q32 = (int32_t)sum;

			/* exact is a double sum of floats: error <= n 2^-53 sum |x| */
			assert_true(err <= bound + sumabs * n * 0x1p-53);
			if (err / bound > worst)
				worst = err / bound;
			inart_quant_decode(&q32, 1, s, &f);
			assert_true(fabs((double)f - exact) <=
				    bound + fabs(d) * 0x1p-24 + sumabs * n * 0x1p-53);
		}
	}
	/* the bound is not vacuous: random rounding errors come near it for n = 1 */
	assert_true(worst > 0.5 && worst <= 1.0 + 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_value),   cmocka_unit_test(test_encode_decode),
	    cmocka_unit_test(test_max_abs), cmocka_unit_test(test_safe_scale),
	    cmocka_unit_test(test_lower),   cmocka_unit_test(test_error_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
