/* Tests of the baselines on a tiny two-rack topology with known answers. */
#include "testutil.h"

#include <math.h>

#include "cp/planner/baselines.h"
#include "cp/model/evaluate.h"

/* Rack e0 holds the workers h0, h1; rack e1 the candidate PSs h2 (100G)
 * and h3 (10G).  8 Gbit of gradient per worker. */
static struct inart_topo *two_racks(const char *ina)
{
	return tu_topo("h0-e0 h1-e0 e0-c0 c0-e1 e1-h2 e1-h3:10", ina);
}

typedef int (*baseline_fn)(const struct inart_topo *, const struct inart_jobs *,
			   struct inart_paths *, struct inart_plan **, struct inart_err *);

static struct inart_plan *run(baseline_fn fn, const struct inart_topo *t,
			      const struct inart_jobs *js)
{
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_plan *p = NULL;
	struct inart_err err;
	struct inart_plan *check;

	if (fn(t, js, paths, &p, &err) < 0)
		fail_msg("baseline: %s", err.msg);
	inart_paths_destroy(paths);
	/* the plan is valid and its times are the evaluator's */
	check = inart_plan_clone(p);
	if (inart_evaluate(t, js, check, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	assert_true(fabs(check->comm_time_s - p->comm_time_s) < 1e-12);
	inart_plan_destroy(check);
	return p;
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_ps_byteps(void **state)
{
	struct inart_topo *t = two_racks("");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h3 h2", 1e9);
	struct inart_plan *p;

	(void)state;
	/* ps picks the PS behind the fast link (h2, listed second). */
	p = run(inart_baseline_ps, t, js);
	assert_true(p->jobs[0].split[1] == 1.0 && p->jobs[0].split[0] == 0.0);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_true(near(p->comm_time_s, 0.16)); /* 16 Gbit over 100G links */
	inart_plan_destroy(p);
	/* byteps splits evenly: 8 Gbit over the 10G link of h3. */
	p = run(inart_baseline_byteps, t, js);
	assert_true(p->jobs[0].split[0] == 0.5 && p->jobs[0].split[1] == 0.5);
	assert_int_equal(p->jobs[0].n_flows, 4);
	assert_true(near(p->comm_time_s, 0.8));
	tu_free(t, js, NULL, p);
}

static void test_atp_switchml(void **state)
{
	struct inart_topo *t = two_racks("e0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h3 h2", 1e9);
	int e0 = inart_topo_find(t, "e0");
	struct inart_plan *p;

	(void)state;
	p = run(inart_baseline_atp, t, js);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[0].trees[0].sw, e0);
	assert_int_equal(p->jobs[0].flows[0].agg, e0);
	assert_true(near(p->comm_time_s, 0.08));
	inart_plan_destroy(p);
	p = run(inart_baseline_switchml, t, js);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[0].trees[0].sw, e0);
	assert_true(near(p->comm_time_s, 0.08));
	tu_free(t, js, NULL, p);
}

/* ATP's fallback: no budget on the worker side, aggregation at the PS's ToR. */
static void test_atp_ps_tor(void **state)
{
	struct inart_topo *t = two_racks("e1:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	int e1 = inart_topo_find(t, "e1");
	struct inart_plan *p;

	(void)state;
	p = run(inart_baseline_atp, t, js);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[0].trees[0].sw, e1);
	assert_int_equal(p->jobs[0].flows[0].agg, e1);
	/* 16 Gbit on e0-c0-e1 each way, 8 on e1-h2 */
	assert_true(near(p->comm_time_s, 0.16));
	tu_free(t, js, NULL, p);
}

/*
 * inart-sp: on-path INA plus the phase-1 split.  PS h3 (first) gets e0's
 * only tree, h2 is reached directly.  With share a on h3: the 10G link of h3
 * carries 8a Gbit, e0->c0 carries 8a + 16(1-a); the optimum balances
 * 0.8a = (16 - 8a)/100, a = 16/88, T = 16/110 s.
 */
static void test_inart_sp(void **state)
{
	struct inart_topo *t = two_racks("e0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h3 h2", 1e9);
	struct inart_plan *p = run(inart_baseline_inart_sp, t, js);

	(void)state;
	assert_true(fabs(p->comm_time_s - 16.0 / 110) < 1e-3 * 16.0 / 110);
	assert_true(fabs(p->jobs[0].split[0] - 16.0 / 88) < 1e-2);
	assert_true(fabs(p->jobs[0].split[0] + p->jobs[0].split[1] - 1) < 1e-9);
	tu_free(t, js, NULL, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ps_byteps),
	    cmocka_unit_test(test_atp_switchml),
	    cmocka_unit_test(test_atp_ps_tor),
	    cmocka_unit_test(test_inart_sp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
