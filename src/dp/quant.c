/*
 * quant: float32 <-> int32 fixed point with scale 2^scale_exp (see quant.h
 * for the error bound).
 *
 * Exactness: a float times a power of two in [2^-128, 2^127] is exact in
 * double (float has 24 mantissa bits and double's exponent range covers the
 * product), and round() is exact, so quantization rounds exactly once.  An
 * int32 or int64 below 2^53 times a power of two is exact in double, so
 * dequantization also rounds once (to float).  No state, no allocation.
 */
#include "dp/quant.h"

#include <errno.h>
#include <math.h>

static int scale_ok(int s)
{
	return s >= INART_QUANT_SCALE_MIN && s <= INART_QUANT_SCALE_MAX;
}

static double pow2(int s)
{
	return ldexp(1.0, s);
}

/* Quantize with a precomputed factor; returns 0, -EDOM or -ERANGE. */
static int quant_one(float x, double f, int32_t *q)
{
	double r;

	if (!isfinite(x)) {
		*q = 0;
		return -EDOM;
	}
	r = round((double)x * f);
	if (r > (double)INT32_MAX) {
		*q = INT32_MAX;
		return -ERANGE;
	}
	if (r < -(double)INT32_MAX) {
		*q = -INT32_MAX;
		return -ERANGE;
	}
	*q = (int32_t)r;
	return 0;
}

int inart_quant_value(float x, int scale_exp, int32_t *q)
{
	if (!scale_ok(scale_exp)) {
		*q = 0;
		return -EINVAL;
	}
	return quant_one(x, pow2(scale_exp), q);
}

int inart_quant_encode(const float *x, size_t n, int scale_exp, int32_t *out)
{
	double f;
	int rc = 0;

	if (!scale_ok(scale_exp))
		return -EINVAL;
	f = pow2(scale_exp);
	for (size_t i = 0; i < n; i++) {
		int r = quant_one(x[i], f, &out[i]);

		if (r == -EDOM || (r != 0 && rc == 0))
			rc = r;
	}
	return rc;
}

void inart_quant_decode(const int32_t *q, size_t n, int scale_exp, float *out)
{
	double f = pow2(-scale_exp);

	for (size_t i = 0; i < n; i++)
		out[i] = (float)((double)q[i] * f);
}

void inart_quant_decode64(const int64_t *q, size_t n, int scale_exp, float *out)
{
	double f = pow2(-scale_exp);

	for (size_t i = 0; i < n; i++)
		out[i] = (float)((double)q[i] * f);
}

int inart_quant_finite(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

float inart_quant_max_abs(const float *x, size_t n)
{
	float m = 0;

	for (size_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);

		if (isnan(a))
			return a;
		if (a > m)
			m = a;
	}
	return m;
}

/* n * round(m * 2^s) <= INT32_MAX, computed exactly in double. */
static int safe_at(double m, int n, int s)
{
	double r = round(m * pow2(s));

	return r * (double)n <= (double)INT32_MAX;
}

int inart_quant_safe_scale(float max_abs, int n_workers, int max_scale, int *scale)
{
	double m = fabs((double)max_abs);
	int s, e;

	if (!isfinite(max_abs))
		return -EDOM;
	if (n_workers < 1 || !scale_ok(max_scale))
		return -EINVAL;
	if (m == 0 || safe_at(m, n_workers, max_scale)) {
		*scale = max_scale;
		return 0;
	}
	/* m = f * 2^e with f in [0.5, 1): m * 2^s < 2^31 / n needs s < 31 - e -
	 * log2(n); start there and step down until exactly safe. */
	frexp(m, &e);
	s = 31 - e;
	if (s > max_scale)
		s = max_scale;
	while (s > INART_QUANT_SCALE_MIN && !safe_at(m, n_workers, s))
		s--;
	*scale = s;
	return safe_at(m, n_workers, s) ? 0 : -ERANGE;
}

int inart_quant_lower(int scale_exp)
{
	int s = scale_exp - INART_QUANT_RESCALE_STEP;

	return s < INART_QUANT_SCALE_MIN ? INART_QUANT_SCALE_MIN : s;
}

double inart_quant_bound(int scale_exp, int n)
{
	return (double)n * pow2(-(scale_exp + 1));
}
