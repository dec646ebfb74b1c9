/*
 * Property tests over seeded random topologies and jobs:
 *  - every plan of every algorithm passes the evaluator;
 *  - inart, with the baseline guard off, is never worse than the best
 *    baseline (ps, byteps, switchml, atp, inart-sp, ring): its own search
 *    must get there (the failure names the baseline and the instance);
 *  - lp <= milp, lp <= inart, and milp <= inart when CBC proved optimality
 *    (milp_status optimal) -- when inart's plan has ring jobs (outside the
 *    candidates of lp and milp), min(lp, its ring bound) <= inart instead;
 *  - bound (a plan without routes, like lp): its bound over plans without
 *    ring jobs (best_bound_s, the branch-and-bound's) is at least lp and at
 *    most milp when CBC proved optimality; its time, the bound over the whole
 *    search space (min of that and ring_bound_s), is at most inart's; inart's
 *    ring_bound_s is at most its time when its plan has ring jobs.
 * INART_PROPERTY_CASES overrides the number of instances (default 24).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "common/rng.h"
#include "cp/model/evaluate.h"
#include "cp/model/gen.h"
#include "cp/planner/planner.h"
#include "cp/model/scenario.h"

static struct inart_topo *random_topo(struct inart_rng *r, uint64_t seed)
{
	struct inart_gen_opt o;
	struct inart_topo *t;
	struct inart_err err;
	int fam = (int)inart_rng_below(r, 3);

	inart_gen_opt_default(&o);
	o.ina = (enum inart_ina_mode)inart_rng_below(r, 3); /* all, tor, random */
	o.ina_fraction = 0.3 + 0.6 * inart_rng_unit(r);
	o.seed = seed;
	o.agg_gbps = 50 + 350 * inart_rng_unit(r);
	o.trees = (int)inart_rng_below(r, 4);
	o.host_gbps = inart_rng_below(r, 2) ? 100 : 40;
	o.fabric_gbps = 25 + 75 * inart_rng_unit(r);
	if (fam == 0)
		t = inart_gen_fattree(4, &o, &err);
	else if (fam == 1)
		t = inart_gen_leafspine(2, 4, 4, &o, &err);
	else
		t = inart_gen_bcube(4, 1, &o, &err);
	if (t == NULL)
		fail_msg("gen: %s", err.msg);
	/* background on a random fifth of the links, one direction each */
	for (int l = 0; l < t->n_links; l++) {
		if (inart_rng_below(r, 5) == 0) {
			struct inart_arc *a = &t->arcs[2 * l + (int)inart_rng_below(r, 2)];

			a->bg_gbps = a->gbps * 0.6 * inart_rng_unit(r);
		}
	}
	return t;
}

static int is_baseline(const char *a)
{
	return strcmp(a, "ps") == 0 || strcmp(a, "byteps") == 0 || strcmp(a, "switchml") == 0 ||
	       strcmp(a, "atp") == 0 || strcmp(a, "inart-sp") == 0 || strcmp(a, "ring") == 0;
}

static void one_case(uint64_t seed)
{
	struct inart_rng r;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_planner_opt o = {.size = sizeof(o)};
	struct inart_err err;
	double lp = NAN, milp = NAN, inart = NAN, bound = NAN, bound_ps = NAN, best_base = INFINITY;
	const char *best_name = "none";
	int milp_optimal = 0, ring_jobs = 0;
	double ring_bound = NAN;

	inart_rng_seed(&r, seed);
	t = random_topo(&r, seed);
	js = inart_scenario_random_jobs(
	    t, 1 + (int)inart_rng_below(&r, 2), 2 + (int)inart_rng_below(&r, 3),
	    1 + (int)inart_rng_below(&r, 3), 1e8 + 1e9 * inart_rng_unit(&r), seed, &err);
	if (js == NULL)
		fail_msg("seed %llu: jobs: %s", (unsigned long long)seed, err.msg);
	inart_planner_opt_default(&o);
	o.seed = seed;
	o.milp_time_limit_s = 10;
	o.trials = 8;
	o.time_limit_s = 1;
	o.no_baseline_guard = 1; /* the property is the search's, not the guard's */
	for (int i = 0; inart_algorithms[i]; i++) {
		const char *a = inart_algorithms[i];
		struct inart_plan *p = NULL;
		int rc = inart_planner_run(a, t, js, &o, &p, &err);

		if (rc == -ETIMEDOUT && strcmp(a, "milp") == 0)
			continue;
		if (rc < 0)
			fail_msg("seed %llu: %s: %s", (unsigned long long)seed, a, err.msg);
		if (strcmp(a, "lp") != 0 && strcmp(a, "bound") != 0) {
			struct inart_plan *c = inart_plan_clone(p);

			if (inart_evaluate(t, js, c, &err) < 0)
				fail_msg("seed %llu: %s: invalid plan: %s",
					 (unsigned long long)seed, a, err.msg);
			assert_true(fabs(c->comm_time_s - p->comm_time_s) <=
				    1e-12 * c->comm_time_s);
			inart_plan_destroy(c);
		}
		if (strcmp(a, "lp") == 0)
			lp = p->comm_time_s;
		if (strcmp(a, "bound") == 0) {
			bound = p->comm_time_s;
			bound_ps = p->best_bound_s;
		}
		if (strcmp(a, "milp") == 0) {
			milp = p->comm_time_s;
			milp_optimal = p->milp_status == INART_MILP_OPTIMAL;
			assert_true(milp_optimal || p->milp_status == INART_MILP_TIME_LIMIT);
		}
		if (strcmp(a, "inart") == 0) {
			inart = p->comm_time_s;
			assert_null(p->origin); /* no guard, no baseline's routes */
			ring_jobs = inart_plan_has_ring(p);
			ring_bound = p->ring_bound_s;
			if (inart_plan_has_ring(p) &&
			    !(p->ring_bound_s <= p->comm_time_s * (1 + 1e-6)))
				fail_msg("seed %llu: ring bound %g above inart's plan %g",
					 (unsigned long long)seed, p->ring_bound_s, p->comm_time_s);
		}
		if (is_baseline(a) && p->comm_time_s < best_base) {
			best_base = p->comm_time_s;
			best_name = a;
		}
		inart_plan_destroy(p);
	}
	if (!(inart <= best_base * (1 + 1e-9)))
		fail_msg("seed %llu: inart %g (guard off) worse than the best baseline, %s %g",
			 (unsigned long long)seed, inart, best_name, best_base);
	if (!(fmin(lp, ring_jobs ? ring_bound : lp) <= inart * (1 + 1e-6)))
		fail_msg("seed %llu: lp %g (ring bound %g) above inart %g",
			 (unsigned long long)seed, lp, ring_bound, inart);
	if (!isnan(milp) && !(lp <= milp * (1 + 1e-6)))
		fail_msg("seed %llu: lp %g above milp %g", (unsigned long long)seed, lp, milp);
	if (milp_optimal && !ring_jobs && !(milp <= inart * (1 + 1e-6)))
		fail_msg("seed %llu: milp %g above inart %g", (unsigned long long)seed, milp,
			 inart);
	if (!(lp <= bound_ps * (1 + 1e-6) && bound <= inart * (1 + 1e-6)))
		fail_msg("seed %llu: bound %g (without rings %g) not between lp %g and inart %g",
			 (unsigned long long)seed, bound, bound_ps, lp, inart);
	if (milp_optimal && !(bound_ps <= milp * (1 + 1e-6)))
		fail_msg("seed %llu: bound %g above milp's optimum %g", (unsigned long long)seed,
			 bound_ps, milp);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static void test_random_instances(void **state)
{
	const char *env = getenv("INART_PROPERTY_CASES");
	int n = env ? atoi(env) : 24;

	(void)state;
	for (int i = 0; i < n; i++)
		one_case(1000 + (uint64_t)i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_instances),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
