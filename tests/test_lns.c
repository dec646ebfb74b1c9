/*
 * test_lns: the large-neighbourhood search from a poor incumbent improves
 * it, never makes it worse, keeps plans valid, stops at the deadline, and
 * on a small model where CBC proves the whole model raises the bound to the
 * optimum (bound source cbc, gap 0).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/clock.h"
#include "cp/model/evaluate.h"
#include "cp/planner/mixplan.h"
#include "cp/planner/lns.h"
#include "cp/planner/planner.h"
#include "cp/planner/ring.h"
#include "cp/planner/ringmix.h"
#include "cp/model/scenario.h"
#include "cp/planner/search.h"

/* A search on a scenario with the test's options. */
struct env {
	struct inart_planner_opt o;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_paths *paths;
	struct inart_evaluator *ev;
	struct inart_search s;
	struct inart_err err;
};

/* Scenario `name`, a search on it with `seconds` and `steps` for the LNS
 * (candidates built, with `detours`), and start_algo's plan (the caller's;
 * `inart`: its starts only, no improvement phase). */
static struct inart_plan *env_init(struct env *e, const char *name, const char *start_algo,
				   double seconds, int steps, int detours)
{
	struct inart_plan *p = NULL;

	memset(e, 0, sizeof(*e));
	e->o.size = sizeof(e->o);
	if (inart_scenario_build(name, 1, &e->t, &e->js, &e->err) < 0)
		fail_msg("%s", e->err.msg);
	inart_planner_opt_default(&e->o);
	e->o.trials = detours > 0 ? 32 : 8; /* detours: `inart plan`'s default */
	e->o.detours = detours;
	e->o.time_limit_s = 0;
	if (inart_planner_run(start_algo, e->t, e->js, &e->o, &p, &e->err) < 0)
		fail_msg("%s: %s", start_algo, e->err.msg);
	e->paths = inart_paths_create(e->t);
	e->ev = inart_evaluator_create(e->t, e->js);
	e->o.time_limit_s = seconds;
	inart_search_init(&e->s, e->t, e->js, &e->o, e->paths, e->ev, &e->err);
	e->s.lns.steps = steps;
	assert_int_equal(inart_search_cand(&e->s, 0), 0);
	return p;
}

static void env_free(struct env *e)
{
	inart_search_free(&e->s);
	inart_evaluator_destroy(e->ev);
	inart_paths_destroy(e->paths);
	inart_jobs_destroy(e->js);
	inart_topo_destroy(e->t);
}

/* A search on scenario `name` whose best plan is `start_algo`'s, with
 * `seconds` for the LNS. */
static void lns_from(const char *name, const char *start_algo, double seconds, int steps,
		     double *before, double *after, double *bound, enum inart_bound_source *src)
{
	struct env e;
	struct inart_plan *p = env_init(&e, name, start_algo, seconds, steps, 0);
	struct inart_search *s = &e.s;
	double t0;

	assert_int_equal(inart_search_bound(s, &s->lp_bound_s, &s->bound_src, NULL), 0);
	s->bound_s = s->lp_bound_s;
	*before = p->comm_time_s;
	assert_int_equal(inart_search_offer(s, p, "test"), 1);
	t0 = inart_now_s();
	if (inart_lns_run(s) < 0)
		fail_msg("lns: %s", e.err.msg);
	/* the deadline holds, give or take one neighbourhood's overrun */
	assert_true(inart_now_s() - t0 < seconds + 2);
	*after = s->best->comm_time_s;
	assert_int_equal(inart_evaluate(e.t, e.js, s->best, &e.err), 0);
	assert_true(fabs(s->best->comm_time_s - *after) <= 1e-12 * *after);
	*bound = s->bound_s;
	*src = s->bound_src;
	inart_plan_destroy(p);
	env_free(&e);
}

/* From `inart-even` (132.9 ms on scarce-small/5; the optimum, by CBC, is
 * 107.4 ms): the LNS gets within 5% of the optimum in its time. */
static void test_improves(void **state)
{
	double before, after, bound;
	enum inart_bound_source src;

	(void)state;
	lns_from("scarce-small/5", "inart-even", 4, 0, &before, &after, &bound, &src);
	assert_true(after <= before);
	assert_true(after < before * 0.95);
	assert_true(bound <= after * (1 + 1e-9));
}

/* A tiny model (the default scenario): the LNS ends with CBC's proof over the whole
 * model -- the bound reaches the plan (source cbc) -- or is within 1% of
 * the LP bound.  With a work budget of 16 neighbourhoods (the time, 600 s,
 * a safety net): the result does not depend on the machine's load. */
static void test_bound(void **state)
{
	double before, after, bound;
	enum inart_bound_source src;

	(void)state;
	lns_from("default", "atp", 600, 16, &before, &after, &bound, &src);
	assert_true(after <= before);
	assert_true(after <= bound * 1.01 + 1e-12);
	assert_true(src == INART_BOUND_LP || src == INART_BOUND_CBC);
}

/*
 * The kicks step alone (a work budget of one step: the same result on any
 * machine) on `leafspine` with --detours 2, from InArt's starts (11.389 ms,
 * no improvement phase): the iterated local search re-routes the streams
 * of several leaves and pairs, which CBC's neighbourhoods do not (the
 * first of them, the routes crossing the bottleneck, ends at 11.3875 ms
 * from there), to within 1.05x of the LP bound (10.779 ms), the target of
 * issue 11 on that scenario.
 */
static void test_kicks(void **state)
{
	struct env e;
	struct inart_plan *p = env_init(&e, "leafspine", "inart", 600, 1, 2);
	struct inart_search *s = &e.s;
	double lp;
	enum inart_bound_source src;

	(void)state;
	assert_true(s->no_groups);
	assert_int_equal(inart_search_bound(s, &lp, &src, NULL), 0);
	s->lp_bound_s = s->bound_s = lp;
	s->bound_src = src;
	assert_int_equal(inart_search_offer(s, p, "test"), 1);
	if (inart_lns_run(s) < 0)
		fail_msg("lns: %s", e.err.msg);
	print_message(
	    "leafspine --detours 2 from inart's starts (%.4f ms): %.4f ms, LP bound %.4f ms\n",
	    p->comm_time_s * 1e3, s->best->comm_time_s * 1e3, lp * 1e3);
	assert_true(s->best->comm_time_s <= 1.05 * lp);
	assert_int_equal(inart_evaluate(e.t, e.js, s->best, &e.err), 0);
	inart_plan_destroy(p);
	env_free(&e);
}

/* CBC's limit: the time left less its overrun, capped by what the
 * neighbourhood wants; none below 0.05 s or below the overrun. */
static void test_cbc_limit(void **state)
{
	(void)state;
	assert_true(fabs(inart_lns_cbc_limit(3.0, 3.0, 0.5) - 2.5) < 1e-12);
	assert_true(fabs(inart_lns_cbc_limit(10.0, 3.0, 0.5) - 3.0) < 1e-12);
	assert_true(fabs(inart_lns_cbc_limit(1.0, 3.0, 0.5) - 0.5) < 1e-12);
	assert_true(inart_lns_cbc_limit(0.99, 3.0, 0.5) == 0);
	assert_true(fabs(inart_lns_cbc_limit(5.0, INFINITY, 0.2) - 4.8) < 1e-12);
	assert_true(fabs(inart_lns_cbc_limit(0.06, 3.0, 0) - 0.06) < 1e-12);
	assert_true(inart_lns_cbc_limit(0.04, 3.0, 0) == 0);
	assert_true(inart_lns_cbc_limit(-1.0, 3.0, 0) == 0);
	/* the guess grows with the model, within (0, 1.5] s */
	assert_true(inart_lns_cbc_over_guess(700) > 0);
	assert_true(inart_lns_cbc_over_guess(700) < inart_lns_cbc_over_guess(3000));
	assert_true(inart_lns_cbc_over_guess(1000000) <= 1.5);
}

/* A frozen clock: always `left` seconds before the search's deadline. */
struct frozen {
	const struct inart_search *s;
	double left;
};

static double frozen_now(void *arg)
{
	const struct frozen *f = arg;

	return f->s->deadline - f->left;
}

/* The LNS on leafspine from InArt's starts with the clock frozen `left`
 * seconds before the deadline and a work budget of two steps (the kicks
 * step, then the "routes" neighbourhood): how many CBC neighbourhoods it
 * started. */
static int cbc_steps_at(double left_over_guess)
{
	struct env e;
	struct inart_plan *p = env_init(&e, "leafspine", "inart", 600, 2, 0);
	struct inart_search *s = &e.s;
	struct frozen f = {s, 0};
	int n;

	/* left: relative to the overrun assumed at the start (no CBC yet) */
	f.left = left_over_guess * inart_lns_cbc_over_guess(s->cand->n_choices);
	s->budget.clock = frozen_now;
	s->budget.clock_arg = &f;
	assert_int_equal(inart_search_offer(s, p, "test"), 1);
	if (inart_lns_run(s) < 0)
		fail_msg("lns: %s", e.err.msg);
	n = s->lns.cbc_steps;
	inart_plan_destroy(p);
	env_free(&e);
	return n;
}

/*
 * A CBC step that cannot usefully start is not started (issue: the budget
 * overrun, 4.3 s for 4 s on leafspine): with the time left just under twice
 * CBC's assumed overrun (its limit would be less than the overrun), the LNS
 * ends after the kicks step without a CBC step; just over it, it starts
 * one.  The clock is the test's (frozen): nothing depends on the machine.
 */
static void test_no_time(void **state)
{
	(void)state;
	assert_int_equal(cbc_steps_at(1.95), 0);
	assert_int_equal(cbc_steps_at(2.1), 1);
}

/* scarce-small/7's optimum over InArt's whole search space, rings included:
 * j0 as a ring, j1 and j2 through PSs (CBC proved that subset optimal;
 * docs/benchmarks.md) */
#define S7_OPT 0.12096

/* One ring-LNS run on the search s from base's routes with in[] as rings,
 * a work budget of 8 neighbourhoods (the time, 120 s, a safety net). */
static void ring_lns(struct inart_search *s, const struct inart_plan *base,
		     const struct inart_plan *ring, const char *in, struct inart_lns_ring *r)
{
	int na = inart_topo_n_arcs(s->t);
	double *scratch = calloc((size_t)na, sizeof(double));
	double *link = calloc((size_t)na, sizeof(double));
	char off[8];

	assert_true(scratch && link && s->js->n_jobs <= 8);
	for (int j = 0; j < s->js->n_jobs; j++)
		off[j] = !in[j];
	inart_mixplan_links(s->t, s->js, ring, in, scratch, link);
	*r = (struct inart_lns_ring){in, off, link, ring, inart_now_s() + 120, 0, 0, 0};
	if (inart_lns_run_ring(s, base, r) < 0)
		fail_msg("lns ring: %s", s->err->msg);
	free(scratch);
	free(link);
}

/*
 * The ring LNS on scarce-small/7 from the `grid` plan's routes: with j0 as a
 * ring it re-plans j1 and j2 around the ring's loads to within 1.05x of the
 * whole-space optimum (grid: 221.4 ms; CBC's best plan without rings 152.2
 * ms), the search's best is its incumbent and the subset's bound is below
 * it.  With j2 as a ring (that subset's closed-form bound is the ring's
 * 174.2 ms) the whole-subset neighbourhood's cutoff, the best plan's time,
 * proves that nothing is faster: proven, the bound just below that time,
 * the best plan unchanged.
 */
static void test_ring(void **state)
{
	struct env e;
	struct inart_plan *grid = env_init(&e, "scarce-small/7", "grid", 0, 8, 0), *ring = NULL;
	struct inart_search *s = &e.s;
	struct inart_lns_ring r;
	const char j0[3] = {1, 0, 0}, j2[3] = {0, 0, 1};
	double best;

	(void)state;
	assert_int_equal(e.js->n_jobs, 3);
	assert_true(s->no_groups);
	assert_int_equal(inart_ring_plan(e.t, e.js, e.paths, &ring, &e.err), 0);
	assert_int_equal(inart_search_offer(s, grid, "test"), 1);
	ring_lns(s, grid, ring, j0, &r);
	best = s->best->comm_time_s;
	print_message("scarce-small/7, j0 as a ring, from grid (%.3f ms): %.3f ms, subset bound "
		      "%.3f ms%s\n",
		      grid->comm_time_s * 1e3, best * 1e3, r.bound_s * 1e3,
		      r.proven ? " (proven)" : "");
	assert_true(s->best->jobs[0].n_ring > 0 && s->best->jobs[1].n_ring == 0 &&
		    s->best->jobs[2].n_ring == 0);
	assert_true(best <= 1.05 * S7_OPT && best >= S7_OPT * (1 - 1e-9));
	assert_true(fabs(r.best_s - best) <= 1e-12 * best);
	assert_true(isnan(r.bound_s) || r.bound_s <= best * (1 + 1e-9));
	assert_int_equal(inart_evaluate(e.t, e.js, s->best, &e.err), 0);
	assert_true(fabs(s->best->comm_time_s - best) <= 1e-12 * best);
	ring_lns(s, grid, ring, j2, &r);
	assert_true(r.proven);
	assert_true(r.bound_s <= best && r.bound_s >= best * (1 - 1e-3));
	assert_true(s->best->comm_time_s == best);
	inart_plan_destroy(ring);
	inart_plan_destroy(grid);
	env_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_improves),  cmocka_unit_test(test_bound),
	    cmocka_unit_test(test_kicks),     cmocka_unit_test(test_ring),
	    cmocka_unit_test(test_cbc_limit), cmocka_unit_test(test_no_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
