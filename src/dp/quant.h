/*
 * quant: float32 <-> int32 fixed point with a power-of-two scale, as carried
 * by the INA header (scale_exp): q = round(x * 2^scale_exp), rounding half
 * away from zero, x = q * 2^-scale_exp.
 *
 * Error bound (docs/dataplane.md): for a finite x whose q fits int32,
 * |q * 2^-s - x| <= 2^-(s+1).  The integer sum S of n such q (exact: int64
 * accumulation, checked against int32) therefore satisfies
 * |S * 2^-s - sum x| <= n * 2^-(s+1); converting S * 2^-s to float32 adds at
 * most half an ulp (2^-24 * |S * 2^-s| for normal results).
 *
 * Scales are int8 (the header field): INART_QUANT_SCALE_MIN..MAX.  At the
 * lowest scale every finite float fits (|x| < 2^128, so |x| * 2^-128 < 1) and
 * the sum of up to INART_WIRE_MAX_CONTRIB values cannot overflow, so the
 * rescale protocol always terminates.
 */
#ifndef INART_QUANT_H
#define INART_QUANT_H

#include <stddef.h>
#include <stdint.h>

#define INART_QUANT_SCALE_MIN (-128)
#define INART_QUANT_SCALE_MAX 127
#define INART_QUANT_RESCALE_STEP 8 /* scale drop after an OVERFLOW result */

/* Quantize one value.  0, -EDOM for NaN/Inf, -ERANGE if |round(x * 2^s)|
 * exceeds INT32_MAX (then *q is the saturated value). */
int inart_quant_value(float x, int scale_exp, int32_t *q);

/* Quantize n values into out.  0, -EDOM if some value is NaN/Inf, -ERANGE if
 * some value does not fit int32 at this scale (out is written fully, with
 * saturated values).  -EDOM wins over -ERANGE. */
int inart_quant_encode(const float *x, size_t n, int scale_exp, int32_t *out);

/* out[i] = q[i] * 2^-s rounded once to float. */
void inart_quant_decode(const int32_t *q, size_t n, int scale_exp, float *out);

/* Same for int64 sums (exact in double below 2^53). */
void inart_quant_decode64(const int64_t *q, size_t n, int scale_exp, float *out);

/* 1 if every value of the buffer is finite (no NaN, no infinity), else 0:
 * what an all-reduce accepts (inart_worker_begin, inart_ring_begin). */
int inart_quant_finite(const float *x, size_t n);

/* Largest |x| of the buffer; NaN if any value is NaN, +Inf if any is infinite. */
float inart_quant_max_abs(const float *x, size_t n);

/* The largest scale s <= max_scale (and >= INART_QUANT_SCALE_MIN) such that
 * the sum of n_workers values, each of magnitude at most max_abs, quantized at
 * s cannot overflow int32: n_workers * round(max_abs * 2^s) <= INT32_MAX.
 * 0 and *scale, -EDOM if max_abs is NaN/Inf, -EINVAL for n_workers < 1 or
 * a max_scale out of range, -ERANGE if not even the lowest scale is safe
 * (then *scale = INART_QUANT_SCALE_MIN). */
int inart_quant_safe_scale(float max_abs, int n_workers, int max_scale, int *scale);

/* The deterministic rescale rule of the protocol: the scale to use after an
 * OVERFLOW result at scale s -- max(s - INART_QUANT_RESCALE_STEP, MIN).  A
 * function of s only, so all workers that see the same result agree. */
int inart_quant_lower(int scale_exp);

/* The documented bound n * 2^-(s+1) on |S * 2^-s - sum x| (before the final
 * float rounding). */
double inart_quant_bound(int scale_exp, int n);

#endif
