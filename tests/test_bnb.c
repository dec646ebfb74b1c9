/*
 * test_bnb: the branch-and-bound bound (bnb.h) and the kept JOINT model it
 * solves (route_lp.h: inart_route_lp_model_*).
 *  - The kept model gives the same LP optimum as inart_route_lp_solve, for
 *    the whole model, a share box and a tree fixing, in any order.
 *  - Valid: on scarce-small instances whose optima CBC proved
 *    (tests/data/scarce_family_optima.tsv), LP <= bound <= optimum, with a
 *    node limit (so the result does not depend on the machine).
 *  - Stronger than the LP where the LP is weak (scarce-small/7; the LP's
 *    stream rows close the gap on /3 and /8, which it checks too).
 *  - With a cutoff the bound never exceeds it; where the LP meets the
 *    optimum the bound does too.
 *  - A time limit holds; neither limit is refused.
 *  - The `bound` algorithm (planner.c): with --no-ring its time is its
 *    bound over PS plans (bnb's, or CBC's from the search's neighbourhoods,
 *    whichever is higher -- that depends on the machine's speed), at least
 *    the LP and at most the optimum (scarce-small/3 and /8); with rings
 *    (scarce-small/8, where rings beat every PS plan) the bound over the
 *    whole space, min(PS bound, ring bound), at most InArt's plan.
 */
#include "testplan.h"

#include <errno.h>

#include "common/clock.h"
#include "cp/planner/bnb.h"
#include "cp/planner/route_lp.h"
#include "cp/model/scenario.h"
#include "cp/planner/search.h"

struct inst {
	struct tu_search ts;
	struct inart_topo *t;
	struct inart_jobs *js;
	double lp_s;
};

static void inst_open(struct inst *in, const char *name)
{
	struct inart_err err;
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
	struct inart_route_lp_result r;
	struct inart_planner_opt o = tu_opt(8, 0, 1);

	if (inart_scenario_build(name, 1, &in->t, &in->js, &err) < 0)
		fail_msg("%s: %s", name, err.msg);
	tu_search_init(&in->ts, in->t, in->js, &o);
	assert_int_equal(inart_search_cand(&in->ts.s, 0), 0);
	assert_int_equal(inart_route_lp_solve(in->t, in->js, in->ts.s.cand, NULL, &lo, &r, &err),
			 0);
	in->lp_s = r.objective_s;
	inart_route_lp_result_free(&r);
}

static void inst_close(struct inst *in)
{
	tu_search_free(&in->ts);
	inart_jobs_destroy(in->js);
	inart_topo_destroy(in->t);
}

/* The optimum of scarce-small/index from the data file, or NAN. */
static double optimum(int index)
{
	const char *dir = getenv("INART_TEST_DATA");
	char path[512], line[256];
	double opt = NAN, v, s;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/scarce_family_optima.tsv", dir ? dir : "tests/data");
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL)
		if (line[0] != '#' && sscanf(line, "%d %lf %lf", &i, &v, &s) == 3 && i == index)
			opt = v;
	fclose(f);
	return opt;
}

static double model_value(struct inart_route_lp_model *m, const double *lo, const double *hi,
			  const signed char *fix)
{
	struct inart_route_lp_node nd = {lo, hi, fix, NULL};
	struct inart_route_lp_point pt = {0};

	assert_int_equal(inart_route_lp_model_solve(m, &nd, &pt), 0);
	return pt.value;
}

static double solve_value(const struct inst *in, const double *lo, const double *hi,
			  const signed char *fix)
{
	struct inart_route_lp_opt o = {
	    .mode = INART_LP_JOINT, .share_lo = lo, .share_hi = hi, .tree_fix = fix};
	struct inart_route_lp_result r;
	struct inart_err err;
	double v;

	assert_int_equal(inart_route_lp_solve(in->t, in->js, in->ts.s.cand, NULL, &o, &r, &err), 0);
	v = r.objective_s;
	inart_route_lp_result_free(&r);
	return v;
}

static void test_model_agrees(void **state)
{
	struct inst in;
	struct inart_route_lp_model *m;
	struct inart_err err;
	double lo[16], hi[16], full[16], base;
	signed char *fix;
	int np, k;

	(void)state;
	inst_open(&in, "scarce-small/8");
	assert_int_equal(inart_route_lp_model_create(in.t, in.js, in.ts.s.cand, &m, &err), 0);
	np = inart_route_lp_model_n_pairs(m);
	assert_true(np <= 16);
	fix = malloc((size_t)in.ts.s.cand->n_trees);
	memset(fix, -1, (size_t)in.ts.s.cand->n_trees);
	for (int p = 0; p < np; p++) {
		lo[p] = full[p] = 0;
		hi[p] = 1;
	}
	base = model_value(m, lo, hi, NULL);
	assert_true(fabs(base - in.lp_s) <= 1e-7 * in.lp_s);
	/* a box: every share at most 0.6, the first at least 0.2 */
	for (int p = 0; p < np; p++)
		hi[p] = 0.6;
	lo[0] = 0.2;
	assert_true(fabs(model_value(m, lo, hi, NULL) - solve_value(&in, lo, hi, NULL)) <=
		    1e-7 * in.lp_s);
	assert_true(model_value(m, lo, hi, NULL) >= base * (1 - 1e-9));
	/* a tree fixing on top: the first tree used, the second not */
	fix[0] = 1;
	k = in.ts.s.cand->n_trees > 1;
	fix[k] = 0;
	assert_true(fabs(model_value(m, lo, hi, fix) - solve_value(&in, lo, hi, fix)) <=
		    1e-7 * in.lp_s);
	/* back to the whole model: the same optimum as at first */
	for (int p = 0; p < np; p++)
		hi[p] = 1;
	assert_true(fabs(model_value(m, full, hi, NULL) - base) <= 1e-7 * base);
	free(fix);
	inart_route_lp_model_destroy(m);
	inst_close(&in);
}

static struct inart_bnb_result run(const struct inst *in, long max_nodes, double limit_s,
				   double cutoff_s)
{
	struct inart_bnb_opt o = {
	    .time_limit_s = limit_s, .max_nodes = max_nodes, .cutoff_s = cutoff_s};
	struct inart_bnb_result r;
	struct inart_err err;

	if (inart_bnb_run(in->t, in->js, in->ts.s.cand, &o, &r, &err) < 0)
		fail_msg("bnb: %s", err.msg);
	return r;
}

static void test_valid_and_stronger(void **state)
{
	static const int idx[] = {0, 2, 3, 5, 7, 8, 12};

	(void)state;
	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		char name[32];
		struct inst in;
		struct inart_bnb_result r;
		double opt = optimum(idx[i]);

		snprintf(name, sizeof(name), "scarce-small/%d", idx[i]);
		assert_false(isnan(opt));
		inst_open(&in, name);
		r = run(&in, 400, 0, 0);
		if (!(r.bound_s >= in.lp_s * (1 - 1e-6) && r.bound_s <= opt * (1 + 1e-6)))
			fail_msg("%s: lp %.6g, bnb %.6g, optimum %.6g", name, in.lp_s, r.bound_s,
				 opt);
		assert_true(fabs(r.root_s - in.lp_s) <= 1e-6 * in.lp_s);
		print_message("%s: lp %.6g, bnb %.6g, optimum %.6g\n", name, in.lp_s, r.bound_s,
			      opt);
		/* the LP (with its stream rows, route_lp.c) is weak on /7: 0.82x
		 * the optimum; it meets it on 0, 3, 5, 8 and 12 */
		if (idx[i] == 7)
			assert_true(r.bound_s > in.lp_s * 1.05);
		else if (idx[i] != 2)
			assert_true(fabs(in.lp_s - opt) <= 1e-6 * opt);
		/* with the optimum as cutoff: never above it */
		r = run(&in, 400, 0, opt);
		assert_true(r.bound_s <= opt * (1 + 1e-12));
		inst_close(&in);
	}
}

/* scarce-small/14: the LP meets the optimum; so does the bound, with or
 * without it as cutoff. */
static void test_tight(void **state)
{
	struct inst in;
	struct inart_bnb_result r;
	double opt = optimum(14);

	(void)state;
	inst_open(&in, "scarce-small/14");
	assert_true(fabs(in.lp_s - opt) <= 1e-6 * opt);
	r = run(&in, 300, 0, 0);
	assert_true(fabs(r.bound_s - opt) <= 1e-6 * opt);
	r = run(&in, 300, 0, opt);
	assert_true(fabs(r.bound_s - opt) <= 1e-6 * opt);
	inst_close(&in);
}

static void test_limits(void **state)
{
	struct inst in;
	struct inart_bnb_opt o = {0};
	struct inart_bnb_result r;
	struct inart_err err;
	double t0;

	(void)state;
	inst_open(&in, "scarce-small/0");
	assert_int_equal(inart_bnb_run(in.t, in.js, in.ts.s.cand, &o, &r, &err), -EINVAL);
	t0 = inart_now_s();
	r = run(&in, 0, 1.0, 0);
	assert_true(inart_now_s() - t0 < 1.0 + 1.0); /* one branching's overrun */
	assert_true(r.lps > 1 && r.bound_s >= in.lp_s * (1 - 1e-6));
	inst_close(&in);
}

/* The bound algorithm without rings on scarce-small/index. */
static void check_bound_ps(struct inst *in, int index)
{
	struct inart_planner_opt on = tu_opt(8, 4, 1);
	struct inart_plan *b;
	double opt = optimum(index);

	on.no_ring = 1;
	b = tu_plan("bound", in->t, in->js, &on);
	print_message("scarce-small/%d: lp %.3f ms, bound %.3f ms (%s), optimum %.3f ms\n", index,
		      in->lp_s * 1e3, b->comm_time_s * 1e3,
		      inart_bound_source_name(b->bound_source), opt * 1e3);
	assert_true(isnan(b->ring_bound_s));
	assert_true(b->comm_time_s == b->best_bound_s);
	assert_true(b->bound_source == INART_BOUND_BNB || b->bound_source == INART_BOUND_CBC ||
		    b->bound_source == INART_BOUND_LP);
	assert_true(b->comm_time_s >= in->lp_s * (1 - 1e-6));
	assert_true(b->comm_time_s <= opt * (1 + 1e-6));
	inart_plan_destroy(b);
}

static void test_bound_algorithm(void **state)
{
	struct inst in;
	struct inart_planner_opt o = tu_opt(8, 4, 1);
	struct inart_plan *br, *mix;
	double opt = optimum(8);

	(void)state;
	inst_open(&in, "scarce-small/3");
	check_bound_ps(&in, 3);
	inst_close(&in);
	inst_open(&in, "scarce-small/8");
	check_bound_ps(&in, 8);
	br = tu_plan("bound", in.t, in.js, &o);
	mix = tu_plan("inart", in.t, in.js, &o);
	assert_true(inart_plan_has_ring(mix) && mix->comm_time_s < opt);
	assert_true(br->ring_bound_s > 0);
	assert_true(br->comm_time_s == fmin(br->best_bound_s, br->ring_bound_s));
	assert_true(br->comm_time_s <= mix->comm_time_s * (1 + 1e-9));
	inart_plan_destroy(br);
	inart_plan_destroy(mix);
	inst_close(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_agrees),    cmocka_unit_test(test_valid_and_stronger),
	    cmocka_unit_test(test_tight),	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_bound_algorithm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
