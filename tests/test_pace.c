/* Tests of pace: a stream paced at 1.05x its plan's rate, as worker.c and
 * ring.c pace (the next frame one frame time later at the paced rate, then
 * the schedule), runs at most the lead ahead of the plan's rate since its
 * first frame, so that in the long run it takes the plan's rate and not
 * more; without a lead or a plan rate it runs at the paced rate; a stream
 * held back catches up at the paced rate until it is back on schedule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp/pace.h"

#define FRAME 1514
#define PLAN 2.5e6 /* bytes per second: a frame every 605.6 us */

/* Send frames as soon as pacing allows from t0 until `until` (ns), except
 * in [hold_from, hold_to) (the window full, a starved process); returns the
 * frames sent and checks the lead at every frame against max_lead_ns. */
static uint64_t run(double pace, uint64_t lead, double plan, uint64_t t0, uint64_t until,
		    uint64_t hold_from, uint64_t hold_to, double max_lead_ns)
{
	uint64_t pace_at = 0, sched_at = 0, now = t0, sent = 0;

	while (now < until) {
		if (now >= hold_from && now < hold_to)
			now = hold_to;
		if (now < pace_at)
			now = pace_at;
		/* the frame goes at now: ahead of the plan by (bytes incl.
		   this one) / plan - (now - t0) */
		sent++;
		if (max_lead_ns > 0) {
			double ahead = (double)sent * FRAME * 1e9 / PLAN - (double)(now - t0);

			if (ahead > max_lead_ns)
				fail_msg("frame %llu at %llu ns: %.0f ns ahead of the plan",
					 (unsigned long long)sent, (unsigned long long)now, ahead);
		}
		pace_at = (pace_at > now ? pace_at : now) + (uint64_t)(FRAME * 1e9 / (PLAN * pace));
		inart_pace_sched_charge(&sched_at, plan, FRAME, now);
		if (pace_at < inart_pace_sched_gate(sched_at, lead))
			pace_at = inart_pace_sched_gate(sched_at, lead);
	}
	return sent;
}

static void test_no_schedule(void **state)
{
	uint64_t a, b, c;

	(void)state;
	/* 1 s at 1.05x the plan: 5% more frames than the plan's */
	a = run(1.05, 0, PLAN, 1000, 1000 + 1000000000ull, 0, 0, 0);
	b = run(1.05, 10000000, 0, 1000, 1000 + 1000000000ull, 0, 0, 0);
	c = (uint64_t)(PLAN / FRAME);
	assert_true(a == b);
	assert_true(a >= c * 104 / 100 && a <= c * 106 / 100);
}

static void test_lead(void **state)
{
	uint64_t c = (uint64_t)(PLAN / FRAME), n;

	(void)state;
	/* at most 10 ms (+ a frame) ahead: over 1 s the plan's frames and
	   10 ms of them, not 5% more */
	n = run(1.05, 10000000, PLAN, 1000, 1000 + 1000000000ull, 0, 0, 10e6 + FRAME * 1e9 / PLAN);
	assert_true(n <= c + (uint64_t)(0.010 * PLAN / FRAME) + 2);
	assert_true(n >= c);
	/* from time 0 (the origin is the first frame, whatever its time) */
	n = run(1.05, 10000000, PLAN, 0, 1000000000ull, 0, 0, 10e6 + FRAME * 1e9 / PLAN);
	assert_true(n <= c + (uint64_t)(0.010 * PLAN / FRAME) + 2);
}

static void test_catch_up(void **state)
{
	uint64_t c = (uint64_t)(PLAN / FRAME), n;

	(void)state;
	/* held back for 30 ms at 100 ms: behind the plan, it catches up at
	   1.05x (30 ms behind takes 600 ms) and ends the second on
	   schedule + the lead, never further ahead */
	n = run(1.05, 10000000, PLAN, 1000, 1000 + 1000000000ull, 100000000ull, 130000000ull,
		10e6 + FRAME * 1e9 / PLAN);
	assert_true(n >= c);
	assert_true(n <= c + (uint64_t)(0.010 * PLAN / FRAME) + 2);
	/* held for 300 ms: 1.05x cannot catch up in the 600 ms left */
	n = run(1.05, 10000000, PLAN, 1000, 1000 + 1000000000ull, 100000000ull, 400000000ull,
		10e6 + FRAME * 1e9 / PLAN);
	assert_true(n < c);
	assert_true(n >= (uint64_t)(c * (0.1 + 0.6 * 1.05)) - 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_schedule),
	    cmocka_unit_test(test_lead),
	    cmocka_unit_test(test_catch_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
