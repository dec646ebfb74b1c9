/*
 * Tests of rounding: budget repair by hand, the trial/local-search results on
 * seeded random instances (valid plans within budget, LP <= rounded,
 * determinism per seed, an integral optimum is reproduced).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "common/rng.h"
#include "cp/model/assign.h"
#include "cp/model/cand.h"
#include "cp/model/evaluate.h"
#include "cp/model/gen.h"
#include "cp/planner/rounding.h"
#include "cp/planner/route_lp.h"
#include "cp/model/scenario.h"

static struct inart_plan *plan_even(const struct inart_jobs *js)
{
	struct inart_plan *p = inart_plan_create(js, "test");

	assert_non_null(p);
	for (int j = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = 1.0 / js->jobs[j].n_ps;
	return p;
}

/* The choice of flow f (or tree) aggregating at node agg, -1 if none. */
static int choice_at(const struct inart_cand *c, int first, int n, int agg)
{
	for (int i = first; i < first + n; i++)
		if (c->choices[i].agg == agg)
			return i;
	return -1;
}

static int flow_of(const struct inart_cand *c, int job)
{
	for (int f = 0; f < c->n_flows; f++)
		if (c->flows[f].job == job)
			return f;
	return -1;
}

static int tree_at(const struct inart_cand *c, int job, int sw)
{
	for (int k = 0; k < c->n_trees; k++)
		if (c->trees[k].job == job && c->trees[k].sw == sw)
			return k;
	return -1;
}

static void used_counts(const struct inart_topo *t, const struct inart_cand *c,
			const struct inart_assign *a, const struct inart_plan *p, int *count)
{
	char *used = malloc((size_t)c->n_trees + 1);

	memset(count, 0, sizeof(int) * (size_t)t->n_nodes);
	inart_assign_used_trees(c, a, p, used);
	for (int k = 0; k < c->n_trees; k++)
		if (used[k])
			count[c->trees[k].sw]++;
	free(used);
}

/*
 * Jobs A (3 workers, PS h6) and B (2 workers, PS h7) under s0 (budget 1),
 * then s1 (budget 2), then the PSs.  Everybody aggregates at s0: two trees
 * at s0, one too many.  B's tree has fewer children and is dropped; its
 * workers go on to s1 when B has a used tree there, else to the PS.
 */
static void test_repair_by_hand(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-s0 h1-s0 h2-s0 h3-s0 h4-s0 s0-s1 s1-h6 s1-h7", "s0:400:1 s1:400:2");
	struct inart_jobs *js = inart_jobs_create();
	struct inart_err err;
	struct inart_cand *c;
	struct inart_plan *p;
	struct inart_assign a;
	int s0 = inart_topo_find(t, "s0"), s1 = inart_topo_find(t, "s1");
	int h6 = inart_topo_find(t, "h6"), h7 = inart_topo_find(t, "h7");
	int count[16];

	(void)state;
	tu_job(js, t, "A", "h0 h1 h2", "h6", 1e9);
	tu_job(js, t, "B", "h3 h4", "h7", 1e9);
	if (inart_jobs_validate(js, t, &err) < 0)
		fail_msg("jobs: %s", err.msg);
	c = tu_cand(t, js, 2, 1); /* per-worker slots */
	p = plan_even(js);
	assert_int_equal(inart_assign_init(&a, c), 0);
	for (int f = 0; f < c->n_flows; f++)
		a.slot_choice[c->flows[f].first_slot] =
		    choice_at(c, c->flows[f].first_choice, c->flows[f].n_choices, s0);
	/* Trees at s0 send to the PS. */
	used_counts(t, c, &a, p, count);
	assert_int_equal(count[s0], 2);
	assert_int_equal(inart_rounding_repair(t, c, p, &a), 1);
	used_counts(t, c, &a, p, count);
	assert_int_equal(count[s0], 1);
	assert_int_equal(count[s1], 0);
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_choice *ch = &c->choices[a.slot_choice[c->flows[f].first_slot]];

		if (c->flows[f].job == 0) {
			assert_int_equal(ch->agg, s0);
		} else {
			assert_int_equal(ch->agg, h7);
			/* same path, extended: h3/h4 - s0 - s1 - h7 */
			assert_int_equal(inart_pathset_len(&c->paths, ch->path), 4);
		}
	}

	/* Again, with one of B's workers aggregated at s1: B's other worker
	 * moves from s0 to s1, the next used tree on its path. */
	for (int f = 0; f < c->n_flows; f++)
		a.slot_choice[c->flows[f].first_slot] =
		    choice_at(c, c->flows[f].first_choice, c->flows[f].n_choices, s0);
	{
		int fb = -1, n = 0;

		for (int f = 0; f < c->n_flows; f++)
			if (c->flows[f].job == 1 && n++ == 1)
				fb = f;
		a.slot_choice[c->flows[fb].first_slot] =
		    choice_at(c, c->flows[fb].first_choice, c->flows[fb].n_choices, s1);
		a.tree_choice[tree_at(c, 1, s0)] =
		    choice_at(c, c->trees[tree_at(c, 1, s0)].first_choice,
			      c->trees[tree_at(c, 1, s0)].n_choices, h7);
	}
	assert_int_equal(inart_rounding_repair(t, c, p, &a), 1);
	for (int f = 0; f < c->n_flows; f++)
		if (c->flows[f].job == 1)
			assert_int_equal(c->choices[a.slot_choice[c->flows[f].first_slot]].agg, s1);
	used_counts(t, c, &a, p, count);
	assert_int_equal(count[s0], 1);
	assert_int_equal(count[s1], 1);
	(void)h6;
	(void)flow_of;
	{
		struct inart_evaluator *ev = inart_evaluator_create(t, js);

		assert_int_equal(inart_assign_realize(c, &a, p), 0);
		if (inart_evaluator_run(ev, p, NULL, &err) < 0)
			fail_msg("evaluate: %s", err.msg);
		inart_evaluator_destroy(ev);
	}
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* ---- seeded random instances ---- */

struct inst {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_cand *c;
	struct inart_evaluator *ev;
};

static void inst_make(struct inst *in, uint64_t seed, int no_groups)
{
	struct inart_gen_opt o;
	struct inart_err err;
	struct inart_rng r;

	inart_rng_seed(&r, seed);
	tu_gen_opt(&o, &r, 0.6, seed);
	in->t = inart_rng_below(&r, 2) ? inart_gen_fattree(4, &o, &err)
				       : inart_gen_leafspine(2, 4, 4, &o, &err);
	if (in->t == NULL)
		fail_msg("gen: %s", err.msg);
	tu_background(in->t, &r, 5);
	in->js = inart_scenario_random_jobs(in->t, 1 + (int)inart_rng_below(&r, 2),
					    3 + (int)inart_rng_below(&r, 3),
					    1 + (int)inart_rng_below(&r, 3), 1e9, seed, &err);
	if (in->js == NULL)
		fail_msg("jobs: %s", err.msg);
	in->p = plan_even(in->js);
	in->c = tu_cand(in->t, in->js, 3, no_groups);
	in->ev = inart_evaluator_create(in->t, in->js);
	assert_non_null(in->ev);
}

static void inst_free(struct inst *in)
{
	inart_evaluator_destroy(in->ev);
	inart_cand_destroy(in->c);
	inart_plan_destroy(in->p);
	inart_jobs_destroy(in->js);
	inart_topo_destroy(in->t);
}

static double lp_solve(struct inst *in, int integer, struct inart_route_lp_result *r)
{
	struct inart_route_lp_opt o = {
	    .mode = INART_LP_FIXED_SPLIT, .integer = integer, .time_limit_s = 60};
	struct inart_err err;

	if (inart_route_lp_solve(in->t, in->js, in->c, in->p, &o, r, &err) < 0)
		fail_msg("route_lp: %s", err.msg);
	return r->objective_s;
}

static double run(struct inst *in, const double *x, uint64_t seed, int trials, int passes,
		  struct inart_round_result *res)
{
	struct inart_round_opt o;
	struct inart_err err;

	inart_round_opt_default(&o);
	o.seed = seed;
	o.trials = trials;
	o.local_passes = passes;
	o.local_time_s = 0;
	if (inart_rounding_run(in->t, in->js, in->c, x, in->p, in->ev, &o, res, &err) < 0)
		fail_msg("rounding: %s", err.msg);
	return res->best_s;
}

/* Every repaired random assignment is within budget and accepted. */
static void test_repair_random(void **state)
{
	int repaired = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct inst in;
		struct inart_assign a;
		struct inart_rng r;
		struct inart_err err;
		int *count;

		inst_make(&in, seed, 0);
		count = malloc(sizeof(int) * (size_t)in.t->n_nodes);
		assert_int_equal(inart_assign_init(&a, in.c), 0);
		inart_rng_seed(&r, seed);
		for (int trial = 0; trial < 10; trial++) {
			const struct inart_cand *c = in.c;

			for (int f = 0; f < c->n_flows; f++)
				for (int k = 0; k < c->groups[c->flows[f].group].n_members; k++)
					a.slot_choice[c->flows[f].first_slot + k] =
					    c->flows[f].first_choice +
					    (int)inart_rng_below(&r,
								 (uint64_t)c->flows[f].n_choices);
			for (int k = 0; k < c->n_trees; k++)
				a.tree_choice[k] =
				    c->trees[k].first_choice +
				    (int)inart_rng_below(&r, (uint64_t)c->trees[k].n_choices);
			repaired += inart_rounding_repair(in.t, c, in.p, &a) > 0;
			used_counts(in.t, c, &a, in.p, count);
			for (int v = 0; v < in.t->n_nodes; v++)
				assert_true(count[v] <= in.t->nodes[v].trees || count[v] == 0);
			assert_int_equal(inart_assign_realize(c, &a, in.p), 0);
			if (inart_evaluator_run(in.ev, in.p, NULL, &err) < 0)
				fail_msg("seed %d: %s", (int)seed, err.msg);
		}
		free(count);
		inart_assign_free(&a);
		inst_free(&in);
	}
	assert_true(repaired > 10); /* the random draws do exceed budgets */
}

/* LP <= best <= best trial <= mean; the plan is valid and carries its time;
 * without local search best == best trial. */
static void test_lp_below_rounded(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct inst in;
		struct inart_route_lp_result lp;
		struct inart_round_result rr, r0;
		struct inart_err err;
		struct inart_eval e;
		double v = 0, best;

		inst_make(&in, seed, 0);
		v = lp_solve(&in, 0, &lp);
		best = run(&in, lp.x, 7, 8, 2, &rr);
		assert_true(v <= best * (1 + 1e-7));
		assert_true(best <= rr.rounded_s * (1 + 1e-12));
		assert_true(rr.rounded_s <= rr.mean_s * (1 + 1e-12));
		assert_true(rr.best_trial >= 0 && rr.best_trial < 8);
		if (inart_evaluator_run(in.ev, in.p, &e, &err) < 0)
			fail_msg("evaluate: %s", err.msg);
		assert_true(e.comm_time_s == best);
		assert_true(in.p->comm_time_s == best);
		run(&in, lp.x, 7, 8, 0, &r0);
		assert_true(r0.best_s == r0.rounded_s);
		assert_true(r0.rounded_s == rr.rounded_s); /* same trials */
		assert_int_equal(r0.local_moves, 0);
		inart_route_lp_result_free(&lp);
		inst_free(&in);
	}
}

static int plans_equal(const struct inart_plan *a, const struct inart_plan *b)
{
	if (a->n_jobs != b->n_jobs || a->comm_time_s != b->comm_time_s)
		return 0;
	for (int j = 0; j < a->n_jobs; j++) {
		const struct inart_job_plan *x = &a->jobs[j], *y = &b->jobs[j];

		if (x->n_flows != y->n_flows || x->n_trees != y->n_trees)
			return 0;
		for (int i = 0; i < x->n_flows; i++)
			if (x->flows[i].agg != y->flows[i].agg ||
			    x->flows[i].n_path != y->flows[i].n_path ||
			    memcmp(x->flows[i].path, y->flows[i].path,
				   sizeof(int) * (size_t)x->flows[i].n_path) != 0)
				return 0;
		for (int i = 0; i < x->n_trees; i++)
			if (x->trees[i].sw != y->trees[i].sw ||
			    x->trees[i].parent != y->trees[i].parent ||
			    x->trees[i].n_path != y->trees[i].n_path)
				return 0;
	}
	return 1;
}

/* The same seed gives the same plan. */
static void test_deterministic(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct inst in;
		struct inart_route_lp_result lp;
		struct inart_round_result r1, r2;
		struct inart_plan *first;

		inst_make(&in, seed, 0);
		lp_solve(&in, 0, &lp);
		run(&in, lp.x, seed, 6, 2, &r1);
		first = inart_plan_clone(in.p);
		assert_non_null(first);
		run(&in, lp.x, seed, 6, 2, &r2);
		assert_true(plans_equal(first, in.p));
		assert_true(r1.best_s == r2.best_s && r1.mean_s == r2.mean_s);
		assert_int_equal(r1.best_trial, r2.best_trial);
		assert_int_equal(r1.local_moves, r2.local_moves);
		inart_plan_destroy(first);
		inart_route_lp_result_free(&lp);
		inst_free(&in);
	}
}

/* Rounding an integral optimum (the MILP's x) reproduces its time. */
static void test_integral_reproduced(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct inst in;
		struct inart_route_lp_result m;
		struct inart_round_result rr;
		double milp;

		inst_make(&in, seed, 1);
		milp = lp_solve(&in, 1, &m);
		run(&in, m.x, 3, 1, 0, &rr);
		assert_true(fabs(rr.best_s - milp) <= 1e-6 * milp);
		if (m.optimal) { /* nothing in the candidates beats it */
			run(&in, m.x, 3, 4, 2, &rr);
			assert_true(rr.best_s >= milp * (1 - 1e-6));
		}
		inart_route_lp_result_free(&m);
		inst_free(&in);
	}
}

static double frozen_clock(void *arg)
{
	return *(const double *)arg;
}

/* A spent budget (fake clock) stops the stage: trial 0 only, no local
 * search move; an unbounded one changes nothing. */
static void test_budget_stops(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct inst in;
		struct inart_route_lp_result lp;
		struct inart_round_result r0, r1, r2;
		struct inart_round_opt o;
		struct inart_budget b;
		struct inart_err err;
		double clk = 10;

		inst_make(&in, seed, 0);
		lp_solve(&in, 0, &lp);
		run(&in, lp.x, seed, 6, 2, &r0);
		inart_round_opt_default(&o);
		o.seed = seed;
		o.trials = 6;
		o.budget = &b;
		inart_budget_init(&b, INFINITY, frozen_clock, &clk);
		assert_int_equal(inart_rounding_run(in.t, in.js, in.c, lp.x, in.p, in.ev, &o, &r1, &err), 0);
		assert_true(r1.best_s == r0.best_s && r1.mean_s == r0.mean_s);
		assert_int_equal(r1.local_moves, r0.local_moves);
		inart_budget_init(&b, 1, frozen_clock, &clk);
		clk = 11; /* spent */
		assert_int_equal(inart_rounding_run(in.t, in.js, in.c, lp.x, in.p, in.ev, &o, &r2, &err), 0);
		assert_int_equal(r2.best_trial, 0);
		assert_true(r2.mean_s == r2.rounded_s); /* one trial drawn */
		assert_int_equal(r2.local_moves, 0);
		assert_true(r2.best_s == r2.rounded_s);
		inart_route_lp_result_free(&lp);
		inst_free(&in);
	}
}

/* Two jobs want the only tree of s0: the LP shares it (u = 1/2 each); the
 * rounded plan keeps one tree and is exactly the better integral plan. */
static void test_shared_tree(void **state)
{
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 h2-s0 h3-s0 s0-h4 s0-h5", "s0:400:1");
	struct inart_jobs *js = inart_jobs_create();
	struct inart_err err;
	struct inst in = {0};
	struct inart_route_lp_result lp;
	struct inart_round_result rr;

	(void)state;
	tu_job(js, t, "A", "h0 h1", "h4", 12.5e9);
	tu_job(js, t, "B", "h2 h3", "h5", 12.5e9);
	if (inart_jobs_validate(js, t, &err) < 0)
		fail_msg("jobs: %s", err.msg);
	in.t = t;
	in.js = js;
	in.p = plan_even(js);
	in.c = tu_cand(t, js, 2, 0);
	in.ev = inart_evaluator_create(t, js);
	/* LP: u = 1/2 each, each job's link to its PS carries 200 - 100 x_agg
	 * + ... = 1.5 streams: T = 1.5.  Integral: one job merges (1 stream),
	 * the other does not (2 streams): T = 2. */
	assert_true(fabs(lp_solve(&in, 0, &lp) - 1.5) < 1e-9);
	assert_true(fabs(run(&in, lp.x, 1, 4, 2, &rr) - 2.0) < 1e-9);
	inart_route_lp_result_free(&lp);
	inst_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_repair_by_hand),	cmocka_unit_test(test_repair_random),
	    cmocka_unit_test(test_lp_below_rounded),	cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_integral_reproduced), cmocka_unit_test(test_shared_tree),
	    cmocka_unit_test(test_budget_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
