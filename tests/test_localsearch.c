/*
 * test_localsearch: the local search improves an assignment for a fixed
 * split, never makes it worse, respects tree budgets, reports the time the
 * evaluator finds for the realized plan, and a seed reproduces it.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "cp/model/evaluate.h"
#include "cp/planner/localsearch.h"
#include "cp/model/scenario.h"

/* Realize a (split given in p) and evaluate; the plan's time. */
static double realized(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const struct inart_assign *a,
		       struct inart_plan *p)
{
	struct inart_err err;

	assert_int_equal(inart_assign_realize(c, a, p), 0);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("invalid plan: %s", err.msg);
	return p->comm_time_s;
}

static void run(const char *scenario, int no_groups)
{
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_cand *c;
	struct inart_plan *p;
	struct inart_assign a, b;
	struct inart_err err;
	struct inart_ls_opt lo = {.max_tries = 100000, .deadline = 0, .seed = 7, .kicks = 16};
	double t0, t1, t2, model;

	if (inart_scenario_build(scenario, 1, &t, &js, &err) < 0)
		fail_msg("%s", err.msg);
	c = tu_cand(t, js, 4, no_groups);
	p = inart_plan_create(js, "ls");
	for (int j = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = 1.0 / js->jobs[j].n_ps;
	assert_int_equal(inart_assign_init(&a, c), 0); /* all first choices: no INA */
	assert_int_equal(inart_assign_init(&b, c), 0);
	t0 = realized(t, js, c, &a, p);
	assert_true(inart_localsearch_run(t, js, c, p, &a, &lo, &model) >= 0);
	t1 = realized(t, js, c, &a, p); /* valid: budgets respected */
	assert_true(fabs(model - t1) <= 1e-9 * t1);
	assert_true(t1 < t0 * (1 - 1e-3)); /* INA helps on these */
	/* the same seed from the same start: the same result */
	assert_true(inart_localsearch_run(t, js, c, p, &b, &lo, &model) >= 0);
	t2 = realized(t, js, c, &b, p);
	assert_true(t2 == t1);
	assert_int_equal(memcmp(a.slot_choice, b.slot_choice, sizeof(int) * (size_t)c->n_slots), 0);
	/* from its own result it cannot get worse */
	assert_true(inart_localsearch_run(t, js, c, p, &a, &lo, &model) >= 0);
	assert_true(realized(t, js, c, &a, p) <= t1);
	inart_assign_free(&a);
	inart_assign_free(&b);
	tu_free(t, js, c, p);
}

static void test_default(void **state)
{
	(void)state;
	run("default", 0);
	run("default", 1);
}

static void test_scarce_small(void **state)
{
	(void)state;
	run("scarce-small/3", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default),
	    cmocka_unit_test(test_scarce_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
