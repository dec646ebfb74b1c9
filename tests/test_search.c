/*
 * test_search: InArt's search (search.h) -- its starts reproduce `grid` and
 * `inart-even` exactly and contain every baseline's plan, so without the
 * guard and without time for the improvement phase it is never worse than
 * any of them; the path for instances too large for the LP (greedy start,
 * time-limited bound) gives valid plans with a bound labelled by its source.
 */
#include "testplan.h"

#include <errno.h>
#include <math.h>

#include "cp/model/evaluate.h"
#include "cp/model/gen.h"
#include "cp/planner/planner.h"
#include "cp/planner/route_lp.h"
#include "cp/model/scenario.h"

static double algo_time(const char *algo, const struct inart_topo *t, const struct inart_jobs *js)
{
	struct inart_planner_opt o = tu_opt(8, 4, 0);
	struct inart_plan *p = tu_plan(algo, t, js, &o);
	double v = p->comm_time_s;

	inart_plan_destroy(p);
	return v;
}

/* Starts 2 and 3 are exactly `inart-even` and `grid` (or skipped because
 * start 1 met the bound); the result, without the guard or an improvement
 * phase, is at most every covered plan. */
static void check_covers(const struct inart_topo *t, const struct inart_jobs *js, const char *what)
{
	static const char *const algos[] = {"ps",	"byteps", "switchml",  "atp",
					    "inart-sp", "grid",	  "inart-even"};
	struct inart_planner_opt o = tu_opt(8, 0, 1);
	struct tu_search r;
	struct inart_plan *p = NULL;

	o.no_ring = 1; /* the PS search alone (ring jobs: test_ringmix.c) */
	tu_search_init(&r, t, js, &o);
	if (inart_search_run(&r.s, &p) < 0)
		fail_msg("%s: search: %s", what, r.err.msg);
	assert_int_equal(inart_evaluate(t, js, p, NULL), 0);
	if (r.s.starts.even == NULL || r.s.starts.grid == NULL) { /* skipped: the bound was met */
		assert_true(p->comm_time_s <= p->best_bound_s * (1 + 1e-9));
	} else if (r.s.starts.even->comm_time_s != algo_time("inart-even", t, js) ||
		   r.s.starts.grid->comm_time_s != algo_time("grid", t, js)) {
		fail_msg("%s: starts 2-3 differ from inart-even / grid", what);
	}
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		double b = algo_time(algos[i], t, js);

		if (!(p->comm_time_s <= b * (1 + 1e-9)))
			fail_msg("%s: search %.9g worse than %s %.9g", what, p->comm_time_s,
				 algos[i], b);
	}
	assert_true(p->best_bound_s <= p->comm_time_s * (1 + 1e-9));
	assert_int_equal(p->bound_source, INART_BOUND_LP);
	inart_plan_destroy(p);
	tu_search_free(&r);
}

static void test_starts_cover(void **state)
{
	static const char *const scenarios[] = {"default", "fattree4", "bcube", "scarce-small/0",
						"scarce-small/5"};

	(void)state;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		struct inart_topo *t;
		struct inart_jobs *js;
		struct inart_err err;

		if (inart_scenario_build(scenarios[i], 1, &t, &js, &err) < 0)
			fail_msg("%s: %s", scenarios[i], err.msg);
		check_covers(t, js, scenarios[i]);
		inart_jobs_destroy(js);
		inart_topo_destroy(t);
	}
}

/*
 * The path for instances too large for the LP, forced on a small one: a
 * greedy start and the local search give a valid plan; the bound is the LP
 * (labelled lp) or, when the time limit stopped it, a weaker bound labelled
 * lp-partial; either way below the plan and above zero.
 */
/* The search forced on the large path (the caller owns the plan). */
static struct inart_plan *large_search(const struct inart_topo *t, const struct inart_jobs *js)
{
	struct inart_planner_opt o = tu_opt(8, 0, 1);
	struct inart_plan *p = NULL;
	struct tu_search r;

	tu_search_init(&r, t, js, &o);
	r.s.lp.max_choices = 10;
	if (inart_search_run(&r.s, &p) < 0)
		fail_msg("search: %s", r.err.msg);
	tu_search_free(&r);
	return p;
}

static void test_large_path(void **state)
{
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_err err;

	(void)state;
	if (inart_scenario_build("fattree8", 1, &t, &js, &err) < 0)
		fail_msg("%s", err.msg);
	p = large_search(t, js);
	assert_int_equal(inart_evaluate(t, js, p, &err), 0);
	assert_true(p->bound_source == INART_BOUND_LP || p->bound_source == INART_BOUND_LP_PARTIAL);
	assert_true(p->best_bound_s > 0 && p->best_bound_s <= p->comm_time_s * (1 + 1e-9));
	assert_true(p->rounding_trials == 1); /* the greedy start: one trial */
	/* never worse than the baselines either (start 5) */
	assert_true(p->comm_time_s <= algo_time("atp", t, js) * (1 + 1e-9));
	assert_true(p->comm_time_s <= algo_time("byteps", t, js) * (1 + 1e-9));
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * The large path's greedy start claims the tree next to each PS first.  On
 * a fat-tree (k = 8, every switch INA with 4 trees) with one job of 96
 * workers and 16 PSs -- more PSs than trees, as fat-tree k = 32 with 16 PSs
 * and 8 trees -- the plan then meets the access-link bound (every worker's
 * own link carries its whole gradient: a bound for every plan); without
 * those trees the racks' own workers take the PSs' racks' budgets and the
 * PSs' links carry many streams.
 */
static void test_large_path_greedy(void **state)
{
	struct inart_gen_opt g;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_err err;
	double access;

	(void)state;
	inart_gen_opt_default(&g);
	g.trees = 4;
	t = inart_gen_fattree(8, &g, &err);
	assert_non_null(t);
	js = inart_scenario_random_jobs(t, 1, 96, 16, 1e9, 1, &err);
	assert_non_null(js);
	p = large_search(t, js);
	access = inart_route_lp_access_bound(t, js, NULL);
	if (!(p->comm_time_s <= access * (1 + 1e-9)))
		fail_msg("large path: %.6g ms, access bound %.6g ms", p->comm_time_s * 1e3,
			 access * 1e3);
	assert_true(p->best_bound_s >= access * (1 - 1e-9));
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_starts_cover),
	    cmocka_unit_test(test_large_path),
	    cmocka_unit_test(test_large_path_greedy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
