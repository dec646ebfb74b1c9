/*
 * test_stream_bound: the unsplittable-stream bound (stream_bound.h) against
 * hand-computed values.
 *
 * Workers h0 h1 on s0; s0 - s1 10 Gbit/s, s0 - s2 40, s2 - s3 100, s1 - s3 5;
 * PS h2 on s3, PS h3 on s1.  A 100 Gbit gradient:
 *  - widths: h2 40 Gbit/s (over s2), h3 10 Gbit/s; one PS h2: T >= 100 / 40
 *    = 2.5 s (a plan over s2 takes exactly that, the evaluator says); both
 *    PSs: T >= 100 / (40 + 10) = 2 s;
 *  - a fixed load of 40 Gbit on s0 -> s2: over s2 a stream of 100 Gbit needs
 *    40 T - 40 >= 100, T >= 3.5 s (over s1: 10 s), so 3.5 s; 200 Gbit:
 *    7.5 s; 1000 Gbit: the fixed load's own time, 25 s (over s1 and s3 the
 *    stream would need 20 s);
 *  - job_on leaves a job out (bound 0, width +inf).
 */
#include "testutil.h"

#include <math.h>

#include "cp/model/evaluate.h"
#include "cp/planner/stream_bound.h"

#define GBIT100 12.5e9 /* bytes: a 100 Gbit gradient */
#define LINKS "h0-s0 h1-s0 s0-s1:10 s0-s2:40 s1-s3:5 s2-s3 s3-h2 s1-h3"

static void assert_near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fmax(1, fabs(want))))
		fail_msg("got %.12g, want %.12g", got, want);
}

static void test_widths(void **state)
{
	struct inart_topo *t = tu_topo(LINKS, "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2 h3", GBIT100);
	const char off = 0;
	double w[2];

	(void)state;
	assert_int_equal(inart_stream_widths(t, js, NULL, w), 0);
	assert_near(w[0], 40, 1e-12);
	assert_near(w[1], 10, 1e-12);
	assert_near(inart_stream_bound(t, js, NULL, NULL), 2.0, 1e-12);
	/* the job left out: no bound */
	assert_int_equal(inart_stream_widths(t, js, &off, w), 0);
	assert_true(isinf(w[0]) && isinf(w[1]));
	assert_near(inart_stream_bound(t, js, &off, NULL), 0, 0);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* One PS: the bound, and the evaluated time of the plan over s2 meets it. */
static void test_one_ps_tight(void **state)
{
	struct inart_topo *t = tu_topo(LINKS, "");
	struct inart_jobs *js = tu_jobs1(t, "h0", "h2", GBIT100);
	struct inart_plan *p = inart_plan_create(js, "test");
	struct inart_err err;

	(void)state;
	assert_near(inart_stream_bound(t, js, NULL, NULL), 2.5, 1e-12);
	p->jobs[0].split[0] = 1;
	tu_flow(p, t, 0, "h0", "h2", "h2", "h0 s0 s2 s3 h2");
	assert_int_equal(inart_evaluate(t, js, p, &err), 0);
	assert_near(p->comm_time_s, 2.5, 1e-12);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static void test_extra(void **state)
{
	struct inart_topo *t = tu_topo(LINKS, "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", GBIT100);
	double extra[16] = {0};
	int e = inart_topo_arc_between(t, inart_topo_find(t, "s0"), inart_topo_find(t, "s2"));

	(void)state;
	assert_true(inart_topo_n_arcs(t) <= 16);
	extra[e] = 40;
	assert_near(inart_stream_bound(t, js, NULL, extra), 3.5, 1e-5);
	assert_true(inart_stream_bound(t, js, NULL, extra) <= 3.5);
	/* 200 Gbit there: over s2 40 T - 200 >= 100, T >= 7.5 s (over s1 10 s;
	 * the fixed load's own time 5 s) */
	extra[e] = 200;
	assert_near(inart_stream_bound(t, js, NULL, extra), 7.5, 1e-5);
	/* a fixed load heavier than any stream: its own time, 1000 / 40 */
	extra[e] = 1000;
	assert_near(inart_stream_bound(t, js, NULL, extra), 25.0, 1e-5);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_widths),
	    cmocka_unit_test(test_one_ps_tight),
	    cmocka_unit_test(test_extra),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
