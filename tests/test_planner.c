/* Tests of the planner: every algorithm on small instances with known
 * answers, and the relations between them. */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "cp/evaluate.h"
#include "cp/planner.h"
#include "cp/scenario.h"

static struct inart_plan *plan(const char *algo, const struct inart_topo *t,
			       const struct inart_jobs *js)
{
	struct inart_planner_opt o = {.size = sizeof(o)};
	struct inart_plan *p = NULL;
	struct inart_err err;
	int rc;

	inart_planner_opt_default(&o);
	o.milp_time_limit_s = 20;
	rc = inart_planner_run(algo, t, js, &o, &p, &err);
	if (rc < 0)
		fail_msg("%s: %s", algo, err.msg);
	assert_string_equal(p->algorithm, algo);
	assert_true(p->plan_time_s >= 0);
	if (strcmp(algo, "lp") != 0) {
		struct inart_plan *c = inart_plan_clone(p);

		if (inart_evaluate(t, js, c, &err) < 0)
			fail_msg("%s gave an invalid plan: %s", algo, err.msg);
		assert_true(fabs(c->comm_time_s - p->comm_time_s) <= 1e-12 * c->comm_time_s);
		inart_plan_destroy(c);
	}
	return p;
}

static void test_unknown(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 e0-h1", "");
	struct inart_jobs *js = tu_jobs1(t, "h0", "h1", 1e9);
	struct inart_plan *p = NULL;
	struct inart_err err;

	(void)state;
	assert_int_equal(inart_planner_run("nope", t, js, NULL, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nope"));
	assert_null(p);
	assert_false(inart_algorithm_known("nope"));
	assert_true(inart_algorithm_known("milp"));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Two PSs behind two core paths, INA at the workers' rack:
 * LP <= MILP <= inart <= every single-PS algorithm. */
static void test_split_pays(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-e0 h1-e0 h4-e0 h5-e0 e0-c0 e0-c1 c0-e1 c1-e2 e1-h2 e2-h3", "e0:400:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h4 h5", "h2 h3", 1e9);
	double lp, milp, inart, best_single = INFINITY;
	const char *single[] = {"ps", "switchml", "atp", "grid"};
	struct inart_plan *p;

	(void)state;
	p = plan("lp", t, js);
	lp = p->comm_time_s;
	inart_plan_destroy(p);
	p = plan("milp", t, js);
	milp = p->comm_time_s;
	assert_true(p->best_bound_s <= milp * (1 + 1e-9));
	inart_plan_destroy(p);
	p = plan("inart", t, js);
	inart = p->comm_time_s;
	assert_true(p->lp_bound_s > 0 && p->lp_bound_s <= inart * (1 + 1e-9));
	inart_plan_destroy(p);
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		p = plan(single[i], t, js);
		best_single = fmin(best_single, p->comm_time_s);
		inart_plan_destroy(p);
	}
	assert_true(lp <= milp * (1 + 1e-9));
	assert_true(milp <= inart * (1 + 1e-6));
	assert_true(inart <= best_single * (1 + 1e-9));
	/* Host links carry a whole gradient each way whatever the plan. */
	assert_true(lp >= 0.08 * (1 - 1e-9));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * Same shape but the core links are 25G: a single PS is limited by its core
 * path (8 Gbit / 25G = 0.32 s with INA at e0), two PSs share it (0.16 s).
 */
static void test_two_ps_halve(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 h4-e0 h5-e0 e0-c0:25 e0-c1:25 c0-e1:25 "
				       "c1-e2:25 e1-h2 e2-h3",
				       "e0:400:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h4 h5", "h2 h3", 1e9);
	const char *single[] = {"ps", "switchml", "atp", "grid"};
	struct inart_plan *p = plan("inart", t, js);

	(void)state;
	assert_true(fabs(p->comm_time_s - 0.16) < 1e-3 * 0.16);
	assert_true(fabs(p->jobs[0].split[0] - 0.5) < 1e-2);
	assert_true(fabs(p->lp_bound_s - 0.16) < 1e-6);
	inart_plan_destroy(p);
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		p = plan(single[i], t, js);
		assert_true(p->comm_time_s >= 0.32 * (1 - 1e-9));
		inart_plan_destroy(p);
	}
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Every algorithm on the built-in default scenario. */
static void test_default_scenario(void **state)
{
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_err err;
	double lp = 0, best_base = INFINITY, inart = 0;

	(void)state;
	if (inart_scenario_build("default", 1, &t, &js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	for (int i = 0; inart_algorithms[i]; i++) {
		struct inart_plan *p = plan(inart_algorithms[i], t, js);
		const char *a = inart_algorithms[i];

		if (strcmp(a, "lp") == 0)
			lp = p->comm_time_s;
		else if (strcmp(a, "inart") == 0)
			inart = p->comm_time_s;
		else if (strcmp(a, "ps") == 0 || strcmp(a, "byteps") == 0 ||
			 strcmp(a, "switchml") == 0 || strcmp(a, "atp") == 0 ||
			 strcmp(a, "inart-sp") == 0)
			best_base = fmin(best_base, p->comm_time_s);
		inart_plan_destroy(p);
	}
	assert_true(lp > 0 && lp <= inart * (1 + 1e-9));
	assert_true(inart <= best_base * (1 + 1e-9));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Same seed, same plan. */
static void test_deterministic(void **state)
{
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_err err;
	struct inart_plan *a, *b;

	(void)state;
	if (inart_scenario_build("default", 7, &t, &js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	a = plan("inart", t, js);
	b = plan("inart", t, js);
	assert_true(a->comm_time_s == b->comm_time_s);
	for (int j = 0; j < a->n_jobs; j++) {
		assert_int_equal(a->jobs[j].n_flows, b->jobs[j].n_flows);
		assert_int_equal(a->jobs[j].n_trees, b->jobs[j].n_trees);
		for (int i = 0; i < a->jobs[j].n_ps; i++)
			assert_true(a->jobs[j].split[i] == b->jobs[j].split[i]);
	}
	inart_plan_destroy(a);
	inart_plan_destroy(b);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unknown),	  cmocka_unit_test(test_split_pays),
	    cmocka_unit_test(test_two_ps_halve),  cmocka_unit_test(test_default_scenario),
	    cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
