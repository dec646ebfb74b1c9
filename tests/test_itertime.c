/*
 * test_itertime: per-job iteration times from PS steps (ctl/itertime.h):
 * a steady job polled every 100 ms, several steps per poll, a change of
 * pace within the window, a stall, polls without an answer, a restart, bad
 * arguments.
 */
#include <errno.h>
#include <math.h>

#include "ctl/itertime.h"
#include "testutil.h"

/* A job of iterations of `iter` seconds polled every 0.1 s from t0 to t1
 * (its step: whole iterations done since 0, + base). */
static void run(struct inart_itertime *it, int j, double iter, double t0, double t1, int64_t base)
{
	for (double t = t0; t <= t1 + 1e-9; t += 0.1)
		assert_int_equal(
		    inart_itertime_feed(it, j, t, base + (int64_t)floor(t / iter + 1e-9)), 0);
}

static void test_steady(void **state)
{
	struct inart_itertime *it = inart_itertime_create(2, 2.0);

	assert_non_null(it);
	assert_true(isnan(inart_itertime_get(it, 0)));
	/* job 0: 0.65 s per iteration (slower than the poll); job 1: 0.01 s */
	run(it, 0, 0.65, 0, 10, 0);
	run(it, 1, 0.01, 0, 10, 0);
	/* the poll's 0.1 s over ~2 s of iterations: within 0.1 / 1.3 = 8% */
	assert_true(fabs(inart_itertime_get(it, 0) - 0.65) < 0.65 * 0.08);
	assert_true(fabs(inart_itertime_get(it, 1) - 0.01) < 0.01 * 0.01);
	/* job 1 slows to 0.05 s: after a window the old pace is gone */
	run(it, 1, 0.05, 10.1, 13, 1000 - 202);
	assert_true(fabs(inart_itertime_get(it, 1) - 0.05) < 0.05 * 0.06);
	/* job 0 stalls from 10 s on (its PS answers with the same step, 15):
	 * the stall shows */
	for (int k = 1; k <= 40; k++)
		assert_int_equal(inart_itertime_feed(it, 0, 10.0 + 0.1 * k, 15), 0);
	/* its last step (15, at 9.75 s) was seen at the 9.8 s poll */
	assert_true(fabs(inart_itertime_get(it, 0) - (14.0 - 9.8)) < 1e-6);
	assert_int_equal(inart_itertime_resets(it), 0);
	inart_itertime_destroy(it);
}

/* A poll without an answer (a PS slow or gone: step unknown) is no news:
 * neither an advance nor a stall.  (It used to count as a stall: on a busy
 * machine a PS request that timed out made a job of 10 ms iterations read
 * as 0.35-0.73 s until the next answer.) */
static void test_no_answer(void **state)
{
	struct inart_itertime *it = inart_itertime_create(1, 2.0);

	assert_non_null(it);
	run(it, 0, 0.01, 0, 5, 0);
	assert_true(fabs(inart_itertime_get(it, 0) - 0.01) < 0.01 * 0.01);
	for (double t = 5.1; t <= 5.45; t += 0.1)
		assert_int_equal(inart_itertime_feed(it, 0, t, -1), 0);
	assert_true(fabs(inart_itertime_get(it, 0) - 0.01) < 0.01 * 0.01);
	/* answers again, the job went on meanwhile: its pace, no stall */
	run(it, 0, 0.01, 5.5, 6, 0);
	assert_true(fabs(inart_itertime_get(it, 0) - 0.01) < 0.01 * 0.01);
	/* a stall seen through unanswered polls: measured up to the last answer
	 * (step 610 first seen at 6.1 s, last at 6.6 s) */
	assert_int_equal(inart_itertime_feed(it, 0, 6.1, 610), 0);
	assert_int_equal(inart_itertime_feed(it, 0, 6.2, 610), 0);
	assert_int_equal(inart_itertime_feed(it, 0, 6.6, 610), 0);
	assert_int_equal(inart_itertime_feed(it, 0, 7.0, -1), 0);
	assert_true(fabs(inart_itertime_get(it, 0) - (6.6 - 6.1)) < 1e-6);
	inart_itertime_destroy(it);
}

static void test_restart(void **state)
{
	struct inart_itertime *it = inart_itertime_create(1, 2.0);

	run(it, 0, 0.2, 0, 5, 0);
	assert_true(fabs(inart_itertime_get(it, 0) - 0.2) < 0.01);
	/* restarted at step 0: unknown until two advances, then the new pace */
	assert_int_equal(inart_itertime_feed(it, 0, 5.1, 0), 0);
	assert_int_equal(inart_itertime_resets(it), 1);
	assert_true(isnan(inart_itertime_get(it, 0)));
	run(it, 0, 0.5, 5.2, 10, -10);
	assert_true(fabs(inart_itertime_get(it, 0) - 0.5) < 0.5 * 0.1);
	inart_itertime_destroy(it);
}

static void test_bad(void **state)
{
	struct inart_itertime *it = inart_itertime_create(1, 1.0);

	assert_null(inart_itertime_create(1, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(inart_itertime_create(-1, 1));
	assert_int_equal(inart_itertime_feed(it, 1, 0, 1), -EINVAL);
	assert_int_equal(inart_itertime_feed(it, 0, 1, 1), 0);
	assert_int_equal(inart_itertime_feed(it, 0, 0.5, 2), -EINVAL); /* backwards */
	assert_int_equal(inart_itertime_feed(it, 0, NAN, 2), -EINVAL);
	assert_true(isnan(inart_itertime_get(it, 3)));
	inart_itertime_destroy(it);
	inart_itertime_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_steady),
	    cmocka_unit_test(test_no_answer),
	    cmocka_unit_test(test_restart),
	    cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
