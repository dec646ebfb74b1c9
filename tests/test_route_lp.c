/*
 * Tests of route_lp: hand-computed LP optima on tiny topologies (tree
 * budgets, aggregation throughput, multi-level trees, background load, the
 * JOINT split), the MILP against brute force through the evaluator, and
 * seeded random properties (column generation = full LP, LP <= any realized
 * integral plan, also over a share box, MILP objective = evaluated time of
 * its plan).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "common/rng.h"
#include "cp/model/assign.h"
#include "cp/model/cand.h"
#include "cp/model/evaluate.h"
#include "cp/model/gen.h"
#include "cp/planner/route_lp.h"
#include "cp/model/scenario.h"
#include "cp/planner/stream_bound.h"

#define GBIT100 12.5e9 /* bytes: a 100 Gbit gradient */

#define assert_near(a, b, eps)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (eps)))                                                     \
			fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                        \
	} while (0)

/* A plan with the given split for job 0 (others even). */
static struct inart_plan *plan_split(const struct inart_jobs *js, const double *split0)
{
	struct inart_plan *p = inart_plan_create(js, "test");

	assert_non_null(p);
	for (int j = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = j == 0 && split0 ? split0[i] : 1.0 / js->jobs[j].n_ps;
	return p;
}

static double solve(const struct inart_topo *t, const struct inart_jobs *js,
		    const struct inart_cand *c, const struct inart_plan *p, enum inart_lp_mode mode,
		    int integer, int no_colgen, struct inart_route_lp_result *r)
{
	struct inart_route_lp_opt o = {
	    .mode = mode, .integer = integer, .time_limit_s = 60, .no_colgen = no_colgen};
	struct inart_err err;
	int rc = inart_route_lp_solve(t, js, c, p, &o, r, &err);

	if (rc < 0)
		fail_msg("route_lp: %s", err.msg);
	return r->objective_s;
}

static double lp_value(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const struct inart_plan *p,
		       enum inart_lp_mode mode, int integer)
{
	struct inart_route_lp_result r;
	double v = solve(t, js, c, p, mode, integer, 0, &r);

	inart_route_lp_result_free(&r);
	return v;
}

static int choice_with_agg(const struct inart_cand *c, int first, int n, int agg)
{
	for (int i = first; i < first + n; i++)
		if (c->choices[i].agg == agg)
			return i;
	return -1;
}

/* Two workers behind one INA switch, PS on the same switch; 100 Gbit. */
static void test_star_budget(void **state)
{
	const double one = 1.0;
	struct inart_topo *t1 = tu_topo("h0-s0 h1-s0 s0-h2", "s0:400:1");
	struct inart_topo *t0 = tu_topo("h0-s0 h1-s0 s0-h2", "s0:400:0");
	struct inart_jobs *js1 = tu_jobs1(t1, "h0 h1", "h2", GBIT100);
	struct inart_jobs *js0 = tu_jobs1(t0, "h0 h1", "h2", GBIT100);
	struct inart_cand *c1 = tu_cand(t1, js1, 4, 0), *c0 = tu_cand(t0, js0, 4, 0);
	struct inart_plan *p1 = plan_split(js1, &one), *p0 = plan_split(js0, &one);
	struct inart_route_lp_result r;
	int s0 = inart_topo_find(t1, "s0");

	(void)state;
	/* Budget 1: both aggregate at s0; host links and s0->h2 carry one stream. */
	assert_near(solve(t1, js1, c1, p1, INART_LP_FIXED_SPLIT, 0, 0, &r), 1.0, 1e-9);
	assert_near(r.bound_s, 1.0, 1e-9);
	assert_int_equal(r.optimal, 1);
	{
		int ci = choice_with_agg(c1, c1->flows[0].first_choice, c1->flows[0].n_choices, s0);

		assert_true(ci >= 0);
		assert_near(r.x[ci], 1.0, 1e-9);
		assert_near(r.x[c1->trees[0].first_choice], 1.0, 1e-9);
	}
	assert_near(r.split[0], 1.0, 0);
	inart_route_lp_result_free(&r);
	/* Budget 0: two streams into the PS, 200 Gbit over 100 Gbit/s. */
	assert_near(lp_value(t0, js0, c0, p0, INART_LP_FIXED_SPLIT, 0), 2.0, 1e-9);
	assert_near(lp_value(t0, js0, c0, p0, INART_LP_JOINT, 0), 2.0, 1e-9);
	assert_near(lp_value(t1, js1, c1, p1, INART_LP_JOINT, 1), 1.0, 1e-9);
	inart_plan_destroy(p1);
	inart_plan_destroy(p0);
	inart_cand_destroy(c1);
	inart_cand_destroy(c0);
	inart_jobs_destroy(js1);
	inart_jobs_destroy(js0);
	inart_topo_destroy(t1);
	inart_topo_destroy(t0);
}

/*
 * Aggregation throughput 100 Gbit/s: a fraction x of the group merges at s0
 * (input 200x Gbit, time 2x) and the rest goes to the PS (link s0->h2 carries
 * 200(1-x) + 100 u with u >= x): min max(2x, 2 - x) = 4/3 at x = 2/3.  The
 * integral optimum is 2.
 */
static void test_star_agg_throughput(void **state)
{
	const double one = 1.0;
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 s0-h2", "s0:100:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", GBIT100);
	struct inart_cand *c = tu_cand(t, js, 4, 0), *cn = tu_cand(t, js, 4, 1);
	struct inart_plan *p = plan_split(js, &one);
	struct inart_route_lp_result r;
	int s0 = inart_topo_find(t, "s0");

	(void)state;
	assert_near(solve(t, js, c, p, INART_LP_FIXED_SPLIT, 0, 0, &r), 4.0 / 3, 1e-9);
	assert_near(r.x[choice_with_agg(c, c->flows[0].first_choice, c->flows[0].n_choices, s0)],
		    2.0 / 3, 1e-7);
	inart_route_lp_result_free(&r);
	assert_near(lp_value(t, js, c, p, INART_LP_FIXED_SPLIT, 1), 2.0, 1e-9);
	assert_near(lp_value(t, js, cn, p, INART_LP_FIXED_SPLIT, 1), 2.0, 1e-9);
	/* Per-worker groups give the same LP (symmetry). */
	assert_near(lp_value(t, js, cn, p, INART_LP_FIXED_SPLIT, 0), 4.0 / 3, 1e-9);
	inart_plan_destroy(p);
	inart_cand_destroy(c);
	inart_cand_destroy(cn);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * Two racks under one aggregation switch a0 with the PS: T = 1 needs the
 * two-level tree (racks merge at e0 and e1, whose trees merge at a0).  Trees
 * at e0/e1 sending to the PS put two streams on a0->h4 (T = 2); merging
 * everything at a0 puts two streams on e0->a0 (T = 2).
 */
static void test_two_level(void **state)
{
	const double one = 1.0;
	struct inart_topo *t =
	    tu_topo("h0-e0 h1-e0 h2-e1 h3-e1 e0-a0 e1-a0 a0-h4", "e0:400:1 e1:400:1 a0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h2 h3", "h4", GBIT100);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	struct inart_plan *p = plan_split(js, &one);

	(void)state;
	assert_near(lp_value(t, js, c, p, INART_LP_FIXED_SPLIT, 0), 1.0, 1e-9);
	assert_near(lp_value(t, js, c, p, INART_LP_FIXED_SPLIT, 1), 1.0, 1e-9);
	tu_free(t, js, c, p);
}

/*
 * JOINT: two workers and two PSs on one switch, no INA.  All on h2: s0->h2
 * carries 200 Gbit (T = 2); halves: 100 Gbit on every link (T = 1).
 */
static void test_joint_halves(void **state)
{
	const double all_first[2] = {1, 0}, half[2] = {0.5, 0.5};
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 s0-h2 s0-h3", "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2 h3", GBIT100);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	struct inart_plan *pa = plan_split(js, all_first), *ph = plan_split(js, half);
	struct inart_route_lp_result r;

	(void)state;
	assert_near(lp_value(t, js, c, pa, INART_LP_FIXED_SPLIT, 0), 2.0, 1e-9);
	assert_near(lp_value(t, js, c, ph, INART_LP_FIXED_SPLIT, 0), 1.0, 1e-9);
	assert_near(solve(t, js, c, NULL, INART_LP_JOINT, 0, 0, &r), 1.0, 1e-9);
	assert_near(r.split[0], 0.5, 1e-7);
	assert_near(r.split[1], 0.5, 1e-7);
	inart_route_lp_result_free(&r);
	assert_near(solve(t, js, c, NULL, INART_LP_JOINT, 1, 0, &r), 1.0, 1e-9);
	assert_near(r.split[0] + r.split[1], 1.0, 1e-12);
	assert_near(r.split[0], 0.5, 1e-6);
	inart_route_lp_result_free(&r);
	inart_plan_destroy(pa);
	tu_free(t, js, c, ph);
}

/*
 * Background load: two paths h0-s0-{s1,s2}-s3-h1, host links 200 Gbit/s,
 * fabric 100 with 50 of background on s0->s1.  A fraction x via s1 costs
 * 100x/50 there and 100(1-x)/100 on s0->s2: the LP balances at x = 1/3,
 * T = 2/3; the single worker cannot split, so the MILP takes s2: T = 1.
 */
static void test_background(void **state)
{
	const double one = 1.0;
	struct inart_topo *t = tu_topo("h0-s0:200 s0-s1 s0-s2 s1-s3 s2-s3 s3-h1:200", "");
	struct inart_jobs *js;
	struct inart_cand *c;
	struct inart_plan *p;
	int e = inart_topo_arc_between(t, inart_topo_find(t, "s0"), inart_topo_find(t, "s1"));

	(void)state;
	t->arcs[e].bg_gbps = 50;
	js = tu_jobs1(t, "h0", "h1", GBIT100);
	c = tu_cand(t, js, 2, 0);
	p = plan_split(js, &one);
	assert_near(lp_value(t, js, c, p, INART_LP_FIXED_SPLIT, 0), 2.0 / 3, 1e-9);
	/* JOINT: the stream row (stream_bound.h) -- one worker's one stream,
	 * 100 Gbit over the widest path (100 Gbit/s): 1 s, not the FIXED LP's
	 * 2/3 from a stream split over both paths */
	assert_near(lp_value(t, js, c, p, INART_LP_JOINT, 0), 1.0, 1e-9);
	assert_near(lp_value(t, js, c, p, INART_LP_FIXED_SPLIT, 1), 1.0, 1e-9);
	assert_near(lp_value(t, js, c, p, INART_LP_JOINT, 1), 1.0, 1e-9);
	tu_free(t, js, c, p);
}

/* A share of 0 leaves its flows on their first choice. */
static void test_zero_share(void **state)
{
	const double split[2] = {1, 0};
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 s0-h2 s0-h3", "s0:400:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2 h3", GBIT100);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	struct inart_plan *p = plan_split(js, split);
	struct inart_route_lp_result r;

	(void)state;
	assert_near(solve(t, js, c, p, INART_LP_FIXED_SPLIT, 0, 0, &r), 1.0, 1e-9);
	for (int f = 0; f < c->n_flows; f++) {
		if (c->flows[f].ps_idx != 1)
			continue;
		for (int i = 0; i < c->flows[f].n_choices; i++)
			assert_near(r.x[c->flows[f].first_choice + i], i == 0 ? 1.0 : 0.0, 0);
	}
	for (int k = 0; k < c->n_trees; k++)
		if (c->trees[k].ps_idx == 1)
			for (int i = 0; i < c->trees[k].n_choices; i++)
				assert_near(r.x[c->trees[k].first_choice + i], 0, 0);
	inart_route_lp_result_free(&r);
	tu_free(t, js, c, p);
}

/* ---- seeded random instances ---- */

struct inst {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p; /* random split */
};

static void inst_make(struct inst *in, uint64_t seed, int small)
{
	struct inart_gen_opt o;
	struct inart_err err;
	struct inart_rng r;

	inart_rng_seed(&r, seed);
	tu_gen_opt(&o, &r, 0.5, seed);
	if (small)
		in->t = inart_gen_leafspine(2, 2, 3, &o, &err);
	else
		in->t = inart_rng_below(&r, 2) ? inart_gen_fattree(4, &o, &err)
					       : inart_gen_leafspine(2, 4, 3, &o, &err);
	if (in->t == NULL)
		fail_msg("gen: %s", err.msg);
	tu_background(in->t, &r, 4);
	in->js = small
		     ? inart_scenario_random_jobs(in->t, 1, 2 + (int)inart_rng_below(&r, 2),
						  1 + (int)inart_rng_below(&r, 2), 1e9, seed, &err)
		     : inart_scenario_random_jobs(in->t, 1 + (int)inart_rng_below(&r, 2),
						  2 + (int)inart_rng_below(&r, 4),
						  1 + (int)inart_rng_below(&r, 3), 1e9, seed, &err);
	if (in->js == NULL)
		fail_msg("jobs: %s", err.msg);
	in->p = inart_plan_create(in->js, "test");
	assert_non_null(in->p);
	for (int j = 0; j < in->js->n_jobs; j++) {
		double sum = 0;

		for (int i = 0; i < in->js->jobs[j].n_ps; i++)
			sum += in->p->jobs[j].split[i] = 0.1 + inart_rng_unit(&r);
		for (int i = 0; i < in->js->jobs[j].n_ps; i++)
			in->p->jobs[j].split[i] /= sum;
	}
}

static void inst_free(struct inst *in)
{
	inart_plan_destroy(in->p);
	inart_jobs_destroy(in->js);
	inart_topo_destroy(in->t);
}

static double evaluate(struct inart_evaluator *ev, const struct inart_plan *p)
{
	struct inart_eval e;
	struct inart_err err;

	if (inart_evaluator_run(ev, p, &e, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	return e.comm_time_s;
}

/* Column generation reaches the optimum of the full LP. */
static void test_colgen_equals_full(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct inst in;
		struct inart_cand *c;

		inst_make(&in, seed, 0);
		c = tu_cand(in.t, in.js, 3, 0);
		for (int mode = 0; mode < 2; mode++) {
			struct inart_route_lp_result a, b;
			double va = solve(in.t, in.js, c, in.p, mode, 0, 0, &a);
			double vb = solve(in.t, in.js, c, in.p, mode, 0, 1, &b);

			assert_true(fabs(va - vb) <= 1e-7 * vb);
			assert_true(a.n_cols_used <= b.n_cols_used);
			inart_route_lp_result_free(&a);
			inart_route_lp_result_free(&b);
		}
		inart_cand_destroy(c);
		inst_free(&in);
	}
}

/* An integral assignment drawn at random: every slot and tree one choice. */
static void random_assign(const struct inart_cand *c, struct inart_rng *r, struct inart_assign *a)
{
	for (int f = 0; f < c->n_flows; f++)
		for (int k = 0; k < c->groups[c->flows[f].group].n_members; k++)
			a->slot_choice[c->flows[f].first_slot + k] =
			    c->flows[f].first_choice +
			    (int)inart_rng_below(r, (uint64_t)c->flows[f].n_choices);
	for (int t = 0; t < c->n_trees; t++)
		a->tree_choice[t] = c->trees[t].first_choice +
				    (int)inart_rng_below(r, (uint64_t)c->trees[t].n_choices);
}

/* Within budget?  (The evaluator rejects plans over budget.) */
static int within_budget(const struct inart_topo *t, const struct inart_cand *c,
			 const struct inart_assign *a, const struct inart_plan *p)
{
	char *used = malloc((size_t)c->n_trees + 1);
	int *count = calloc((size_t)t->n_nodes, sizeof(int)), ok = 1;

	inart_assign_used_trees(c, a, p, used);
	for (int k = 0; k < c->n_trees; k++)
		if (used[k] && ++count[c->trees[k].sw] > t->nodes[c->trees[k].sw].trees)
			ok = 0;
	free(used);
	free(count);
	return ok;
}

/* The stream rows' floor at plan p's split: max over pairs of a G / width
 * (stream_bound.h).  The JOINT LP has these rows, the FIXED one not. */
static double stream_floor(const struct inart_topo *t, const struct inart_jobs *js,
			   const struct inart_plan *p)
{
	double w[64], best = 0;

	assert_int_equal(inart_stream_widths(t, js, NULL, w), 0);
	for (int j = 0, q = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_ps; i++, q++)
			if (w[q] > 0 && !isinf(w[q]))
				best = fmax(best, p->jobs[j].split[i] *
						      inart_job_gbit(&js->jobs[j]) / w[q]);
	return best;
}

/* LP (FIXED) and JOINT LP <= the time of every realized integral assignment;
 * JOINT <= max(FIXED, the stream rows' floor at that split). */
static void test_lp_lower_bound(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct inst in;
		struct inart_cand *c;
		struct inart_evaluator *ev;
		struct inart_assign a;
		struct inart_rng r;
		double lp, joint;
		int tried = 0;

		inst_make(&in, seed, 0);
		c = tu_cand(in.t, in.js, 3, 0);
		ev = inart_evaluator_create(in.t, in.js);
		assert_non_null(ev);
		assert_int_equal(inart_assign_init(&a, c), 0);
		lp = lp_value(in.t, in.js, c, in.p, INART_LP_FIXED_SPLIT, 0);
		joint = lp_value(in.t, in.js, c, in.p, INART_LP_JOINT, 0);
		assert_true(joint <= fmax(lp, stream_floor(in.t, in.js, in.p)) * (1 + 1e-7));
		inart_rng_seed(&r, seed * 77);
		for (int trial = 0; trial < 200 && tried < 40; trial++) {
			if (trial > 0)
				random_assign(c, &r, &a);
			if (!within_budget(in.t, c, &a, in.p))
				continue;
			tried++;
			assert_int_equal(inart_assign_realize(c, &a, in.p), 0);
			assert_true(lp <= evaluate(ev, in.p) * (1 + 1e-7));
			assert_true(joint <= evaluate(ev, in.p) * (1 + 1e-7));
		}
		assert_true(tried > 0);
		inart_assign_free(&a);
		inart_evaluator_destroy(ev);
		inart_cand_destroy(c);
		inst_free(&in);
	}
}

/* JOINT LP over a share box (share_lo / share_hi) or a subset of jobs
 * (job_on). */
static double boxed(const struct inst *in, const struct inart_cand *c, const double *lo,
		    const double *hi, const char *job_on)
{
	struct inart_route_lp_opt o = {
	    .mode = INART_LP_JOINT, .share_lo = lo, .share_hi = hi, .job_on = job_on};
	struct inart_route_lp_result r;
	struct inart_err err;
	double v;

	if (inart_route_lp_solve(in->t, in->js, c, NULL, &o, &r, &err) < 0)
		fail_msg("boxed LP: %s", err.msg);
	v = r.objective_s;
	inart_route_lp_result_free(&r);
	return v;
}

/*
 * A share box around the plan's split: the boxed JOINT LP is at least the
 * JOINT LP, at most the time of every realized integral plan with that split
 * (the box's McCormick rows are valid), and with the box a single point at
 * most the FIXED LP of that split; [0, 1] boxes change nothing.  Leaving a
 * job out never raises the LP.
 */
static void test_share_box(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		const double widths[] = {0, 0.05, 0.3};
		struct inst in;
		struct inart_cand *c;
		struct inart_evaluator *ev;
		struct inart_assign a;
		struct inart_rng r;
		double lo[64], hi[64], joint, fixed;
		char on[16];
		int np = 0;

		inst_make(&in, seed, 0);
		c = tu_cand(in.t, in.js, 3, 0);
		ev = inart_evaluator_create(in.t, in.js);
		assert_int_equal(inart_assign_init(&a, c), 0);
		joint = lp_value(in.t, in.js, c, in.p, INART_LP_JOINT, 0);
		fixed = lp_value(in.t, in.js, c, in.p, INART_LP_FIXED_SPLIT, 0);
		for (int j = 0; j < in.js->n_jobs; j++)
			for (int i = 0; i < in.js->jobs[j].n_ps; i++, np++) {
				lo[np] = 0;
				hi[np] = 1;
			}
		assert_near(boxed(&in, c, lo, hi, NULL), joint, 1e-7 * joint);
		inart_rng_seed(&r, seed * 91);
		for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
			double v;
			int tried = 0;

			for (int j = 0, q = 0; j < in.js->n_jobs; j++)
				for (int i = 0; i < in.js->jobs[j].n_ps; i++, q++) {
					lo[q] = fmax(0, in.p->jobs[j].split[i] - widths[k]);
					hi[q] = fmin(1, in.p->jobs[j].split[i] + widths[k]);
				}
			v = boxed(&in, c, lo, hi, NULL);
			assert_true(v >= joint * (1 - 1e-7));
			if (widths[k] == 0)
				assert_true(v <= fmax(fixed, stream_floor(in.t, in.js, in.p)) *
						     (1 + 1e-7));
			for (int trial = 0; trial < 200 && tried < 20; trial++) {
				if (trial == 0) { /* first choices: to the PSs, within budget */
					inart_assign_free(&a);
					assert_int_equal(inart_assign_init(&a, c), 0);
				} else {
					random_assign(c, &r, &a);
				}
				if (!within_budget(in.t, c, &a, in.p))
					continue;
				tried++;
				assert_int_equal(inart_assign_realize(c, &a, in.p), 0);
				assert_true(v <= evaluate(ev, in.p) * (1 + 1e-7));
			}
			assert_true(tried > 0);
		}
		memset(on, 1, sizeof(on));
		on[0] = 0;
		assert_true(boxed(&in, c, NULL, NULL, on) <= joint * (1 + 1e-7));
		inart_assign_free(&a);
		inart_evaluator_destroy(ev);
		inart_cand_destroy(c);
		inst_free(&in);
	}
}

/* Turn integral MILP values into an assignment (slots of a flow in order). */
static void assign_from_x(const struct inart_cand *c, const double *x, struct inart_assign *a)
{
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		int m = c->groups[cf->group].n_members, k = 0;

		for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++)
			for (int n = (int)lround(x[ci] * m); n > 0 && k < m; n--)
				a->slot_choice[cf->first_slot + k++] = ci;
		assert_int_equal(k, m);
	}
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];

		a->tree_choice[t] = ct->first_choice;
		for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
			if (x[ci] > 0.5)
				a->tree_choice[t] = ci;
	}
}

/* Brute force over all assignments (slots and trees): the best evaluated time. */
static double brute_force(const struct inart_topo *t, const struct inart_cand *c,
			  struct inart_plan *p, struct inart_evaluator *ev)
{
	struct inart_assign a;
	int n = c->n_slots + c->n_trees;
	int *base = malloc(sizeof(int) * (size_t)n), *cnt = malloc(sizeof(int) * (size_t)n);
	int *cur = calloc((size_t)n, sizeof(int));
	double best = INFINITY;

	assert_int_equal(inart_assign_init(&a, c), 0);
	for (int f = 0; f < c->n_flows; f++)
		for (int k = 0; k < c->groups[c->flows[f].group].n_members; k++) {
			base[c->flows[f].first_slot + k] = c->flows[f].first_choice;
			cnt[c->flows[f].first_slot + k] = c->flows[f].n_choices;
		}
	for (int k = 0; k < c->n_trees; k++) {
		base[c->n_slots + k] = c->trees[k].first_choice;
		cnt[c->n_slots + k] = c->trees[k].n_choices;
	}
	for (;;) {
		int i;

		for (i = 0; i < n; i++) {
			if (i < c->n_slots)
				a.slot_choice[i] = base[i] + cur[i];
			else
				a.tree_choice[i - c->n_slots] = base[i] + cur[i];
		}
		if (within_budget(t, c, &a, p)) {
			assert_int_equal(inart_assign_realize(c, &a, p), 0);
			best = fmin(best, evaluate(ev, p));
		}
		for (i = 0; i < n && ++cur[i] == cnt[i]; i++)
			cur[i] = 0;
		if (i == n)
			break;
	}
	inart_assign_free(&a);
	free(base);
	free(cnt);
	free(cur);
	return best;
}

static double space_size(const struct inart_cand *c)
{
	double s = 1;

	for (int f = 0; f < c->n_flows; f++)
		s *= pow(c->flows[f].n_choices, c->groups[c->flows[f].group].n_members);
	for (int k = 0; k < c->n_trees; k++)
		s *= c->trees[k].n_choices;
	return s;
}

/* MILP (FIXED, per-worker candidates) = brute force; its objective = the
 * evaluated time of its realized plan; LP <= MILP. */
/*
 * link_extra: a fixed load on a link's row.  One worker h0 -> PS h1 through
 * e0, 100G links, G = 1 Gbit: 10 ms; 1 Gbit fixed on h0-e0 makes it 20 ms
 * (JOINT and MILP), 0.5 Gbit on e0-h1 15 ms; none changes nothing.
 */
static void test_link_extra(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 e0-h1", "");
	struct inart_jobs *js = tu_jobs1(t, "h0", "h1", 1.25e8);
	struct inart_cand *c = tu_cand(t, js, 4, 1);
	double extra[8] = {0};
	int l0 = inart_topo_arc_between(t, tu_find(t, "h0"), tu_find(t, "e0")) & ~1;
	int l1 = inart_topo_arc_between(t, tu_find(t, "e0"), tu_find(t, "h1")) & ~1;
	struct inart_route_lp_opt o = {.mode = INART_LP_JOINT, .link_extra = extra};
	struct inart_route_lp_result r;
	struct inart_err err;

	(void)state;
	assert_true(inart_topo_n_arcs(t) <= 8);
	assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &r, &err), 0);
	assert_true(fabs(r.objective_s - 0.010) < 1e-9);
	inart_route_lp_result_free(&r);
	extra[l0] = 1.0;
	assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &r, &err), 0);
	assert_true(fabs(r.objective_s - 0.020) < 1e-9);
	inart_route_lp_result_free(&r);
	o.integer = 1;
	assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &r, &err), 0);
	assert_true(fabs(r.objective_s - 0.020) < 1e-9 && fabs(r.bound_s - 0.020) < 1e-9);
	inart_route_lp_result_free(&r);
	o.integer = 0;
	extra[l0] = 0;
	extra[l1] = 0.5;
	assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &r, &err), 0);
	assert_true(fabs(r.objective_s - 0.015) < 1e-9);
	inart_route_lp_result_free(&r);
	tu_free(t, js, c, NULL);
}

/* A cutoff just below the optimum opt (brute force): CBC proves nothing is
 * faster (-ERANGE) with a bound just below the cutoff, never above opt; a
 * cutoff above opt finds it. */
static void check_cutoff(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_cand *c, const struct inart_plan *p, double opt)
{
	struct inart_route_lp_opt o = {.mode = INART_LP_FIXED_SPLIT,
				       .integer = 1,
				       .time_limit_s = 60,
				       .cutoff_s = opt * (1 - 1e-6)};
	struct inart_route_lp_result r;
	struct inart_err err;

	assert_int_equal(inart_route_lp_solve(t, js, c, p, &o, &r, &err), -ERANGE);
	assert_true(r.bound_s <= o.cutoff_s && r.bound_s >= opt * (1 - 1e-3));
	o.cutoff_s = opt * 1.01;
	assert_int_equal(inart_route_lp_solve(t, js, c, p, &o, &r, &err), 0);
	assert_true(fabs(r.objective_s - opt) <= 1e-6 * opt && r.optimal);
	inart_route_lp_result_free(&r);
}

static void test_milp_brute_force(void **state)
{
	int checked = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 40 && checked < 8; seed++) {
		struct inst in;
		struct inart_cand *c;
		struct inart_evaluator *ev;
		struct inart_route_lp_result r;
		struct inart_assign a;
		double milp, bf, lp;

		inst_make(&in, seed, 1);
		c = tu_cand(in.t, in.js, 2, 1);
		if (space_size(c) > 2e4) {
			inart_cand_destroy(c);
			inst_free(&in);
			continue;
		}
		checked++;
		ev = inart_evaluator_create(in.t, in.js);
		milp = solve(in.t, in.js, c, in.p, INART_LP_FIXED_SPLIT, 1, 0, &r);
		assert_int_equal(r.optimal, 1);
		assert_true(r.bound_s <= milp * (1 + 1e-9));
		assert_int_equal(inart_assign_init(&a, c), 0);
		assign_from_x(c, r.x, &a);
		assert_true(within_budget(in.t, c, &a, in.p));
		assert_int_equal(inart_assign_realize(c, &a, in.p), 0);
		assert_true(fabs(evaluate(ev, in.p) - milp) <= 1e-6 * milp);
		bf = brute_force(in.t, c, in.p, ev);
		assert_true(fabs(bf - milp) <= 1e-6 * bf);
		check_cutoff(in.t, in.js, c, in.p, bf);
		lp = lp_value(in.t, in.js, c, in.p, INART_LP_FIXED_SPLIT, 0);
		assert_true(lp <= milp * (1 + 1e-7));
		inart_assign_free(&a);
		inart_route_lp_result_free(&r);
		inart_evaluator_destroy(ev);
		inart_cand_destroy(c);
		inst_free(&in);
	}
	assert_true(checked >= 4);
}

/* JOINT MILP with per-worker candidates: its plan (split + routes) evaluates
 * to exactly its objective, and it is no worse than the FIXED MILP for any
 * split (here: the random one). */
static void test_joint_milp_exact(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct inst in;
		struct inart_cand *c;
		struct inart_evaluator *ev;
		struct inart_route_lp_result r;
		struct inart_assign a;
		double milp, fixed;
		int off = 0;

		inst_make(&in, seed, 0);
		c = tu_cand(in.t, in.js, 2, 1);
		ev = inart_evaluator_create(in.t, in.js);
		fixed = lp_value(in.t, in.js, c, in.p, INART_LP_FIXED_SPLIT, 1);
		milp = solve(in.t, in.js, c, NULL, INART_LP_JOINT, 1, 0, &r);
		if (r.optimal)
			assert_true(milp <= fixed * (1 + 1e-6));
		for (int j = 0; j < in.js->n_jobs; j++)
			for (int i = 0; i < in.js->jobs[j].n_ps; i++)
				in.p->jobs[j].split[i] = r.split[off++];
		assert_int_equal(inart_assign_init(&a, c), 0);
		assign_from_x(c, r.x, &a);
		assert_int_equal(inart_assign_realize(c, &a, in.p), 0);
		assert_true(fabs(evaluate(ev, in.p) - milp) <= 1e-6 * milp);
		assert_true(lp_value(in.t, in.js, c, NULL, INART_LP_JOINT, 0) <= milp * (1 + 1e-7));
		inart_assign_free(&a);
		inart_route_lp_result_free(&r);
		inart_evaluator_destroy(ev);
		inart_cand_destroy(c);
		inst_free(&in);
	}
}

/* A warm start (another split's solution) reaches the same optimum; a time
 * limit returns a feasible point with a valid bound, or -ETIMEDOUT. */
static void test_warm_and_time_limit(void **state)
{
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_err err;
	struct inart_cand *c;
	struct inart_plan *p;
	struct inart_route_lp_result r1, r2, rj, rw;
	const double limits[] = {1e-4, 0.02, 0.1, 0.5};

	(void)state;
	if (inart_scenario_build("fattree8", 1, &t, &js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	c = tu_cand(t, js, 4, 0);
	p = plan_split(js, NULL);
	solve(t, js, c, p, INART_LP_FIXED_SPLIT, 0, 0, &r1);
	for (int j = 0; j < js->n_jobs; j++) {
		double sum = 0;

		for (int i = 0; i < js->jobs[j].n_ps; i++)
			sum += p->jobs[j].split[i] = 1.0 + i;
		for (int i = 0; i < js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] /= sum;
	}
	solve(t, js, c, p, INART_LP_FIXED_SPLIT, 0, 0, &r2);
	{
		struct inart_route_lp_opt o = {.mode = INART_LP_FIXED_SPLIT, .warm_x = r1.x};
		struct inart_route_lp_result r;

		assert_int_equal(inart_route_lp_solve(t, js, c, p, &o, &r, &err), 0);
		assert_near(r.objective_s, r2.objective_s, 1e-7 * r2.objective_s);
		inart_route_lp_result_free(&r);
		o.mode = INART_LP_JOINT;
		assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &rw, &err), 0);
	}
	solve(t, js, c, NULL, INART_LP_JOINT, 0, 0, &rj);
	assert_near(rw.objective_s, rj.objective_s, 1e-7 * rj.objective_s);
	for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++) {
		struct inart_route_lp_opt o = {.mode = INART_LP_FIXED_SPLIT,
					       .time_limit_s = limits[k]};
		struct inart_route_lp_result r;
		int rc = inart_route_lp_solve(t, js, c, p, &o, &r, &err);

		if (rc == -ETIMEDOUT)
			continue;
		assert_int_equal(rc, 0);
		assert_true(r.bound_s <= r2.objective_s * (1 + 1e-7));
		assert_true(r.objective_s >= r2.objective_s * (1 - 1e-7));
		assert_true(r.bound_s <= r.objective_s);
		if (r.optimal)
			assert_near(r.objective_s, r2.objective_s, 1e-7 * r2.objective_s);
		for (int f = 0; f < c->n_flows; f++) {
			double sum = 0;

			for (int i = 0; i < c->flows[f].n_choices; i++)
				sum += r.x[c->flows[f].first_choice + i];
			assert_near(sum, 1.0, 1e-6);
		}
		inart_route_lp_result_free(&r);
	}
	inart_route_lp_result_free(&r1);
	inart_route_lp_result_free(&r2);
	inart_route_lp_result_free(&rj);
	inart_route_lp_result_free(&rw);
	tu_free(t, js, c, p);
}

static void test_errors(void **state)
{
	struct inart_topo *t = tu_topo("h0-s0 s0-h1", "");
	struct inart_jobs *js = tu_jobs1(t, "h0", "h1", GBIT100);
	struct inart_cand *c = tu_cand(t, js, 1, 0);
	struct inart_route_lp_opt o = {.mode = INART_LP_FIXED_SPLIT};
	struct inart_route_lp_result r;
	struct inart_err err;

	(void)state;
	assert_int_equal(inart_route_lp_solve(t, js, c, NULL, &o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "split"));
	inart_route_lp_result_free(&r);
	inart_route_lp_result_free(NULL);
	tu_free(t, js, c, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_star_budget),		cmocka_unit_test(test_star_agg_throughput),
	    cmocka_unit_test(test_two_level),		cmocka_unit_test(test_joint_halves),
	    cmocka_unit_test(test_background),		cmocka_unit_test(test_zero_share),
	    cmocka_unit_test(test_colgen_equals_full),	cmocka_unit_test(test_lp_lower_bound),
	    cmocka_unit_test(test_share_box),		cmocka_unit_test(test_link_extra),
	    cmocka_unit_test(test_milp_brute_force),	cmocka_unit_test(test_joint_milp_exact),
	    cmocka_unit_test(test_warm_and_time_limit), cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
