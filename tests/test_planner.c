/* Tests of the planner: every algorithm on small instances with known
 * answers, the relations between them (InArt with the baseline guard off:
 * the quality is its own search's), milp's status both ways, and the
 * options' versioning by size. */
#include "testplan.h"

#include <errno.h>
#include <stddef.h>

#include "cp/model/evaluate.h"
#include "cp/model/scenario.h"
#include "cp/planner/baselines.h"

/* The test's options: 32 trials, 2 s of improvement, guard off. */
static struct inart_plan *plan(const char *algo, const struct inart_topo *t,
			       const struct inart_jobs *js)
{
	struct inart_planner_opt o = tu_opt(32, 2, 1);

	return tu_plan(algo, t, js, &o);
}

/* The registry (planner.c) names every baseline of baselines.h's registry,
 * each algorithm once, and runs each: a plan whose algorithm is its name
 * (lp: the bound only). */
static void test_registry(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 e0-h1", "");
	struct inart_jobs *js = tu_jobs1(t, "h0", "h1", 1e9);
	int n = 0, listed = 0;

	(void)state;
	for (int i = 0; i < INART_BASELINE_N; i++)
		assert_true(inart_algorithm_known(inart_baseline_table[i].name));
	for (; inart_algorithms[n] != NULL; n++) {
		struct inart_plan *p = NULL;
		struct inart_err err = {{0}};

		for (int k = 0; k < n; k++)
			assert_string_not_equal(inart_algorithms[k], inart_algorithms[n]);
		listed += inart_algorithm_summary(n) != NULL;
		if (inart_planner_run(inart_algorithms[n], t, js, NULL, &p, &err) != 0)
			fail_msg("%s: %s", inart_algorithms[n], err.msg);
		assert_string_equal(p->algorithm, inart_algorithms[n]);
		inart_plan_destroy(p);
	}
	assert_int_equal(n, 12);
	assert_int_equal(listed, 11); /* all but bound */
	assert_null(inart_algorithm_summary(n));
	assert_null(inart_algorithm_summary(-1));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
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
	assert_true(inart_algorithm_known("ring"));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Two PSs behind two core paths, INA at the workers' rack:
 * LP <= MILP <= inart <= every single-PS algorithm; milp proven optimal. */
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
	assert_int_equal(p->bound_source, INART_BOUND_LP);
	inart_plan_destroy(p);
	p = plan("milp", t, js);
	milp = p->comm_time_s;
	assert_int_equal(p->milp_status, INART_MILP_OPTIMAL);
	assert_int_equal(p->bound_source, INART_BOUND_CBC);
	assert_true(fabs(p->best_bound_s - milp) <= 1e-6 * milp);
	inart_plan_destroy(p);
	p = plan("inart", t, js);
	inart = p->comm_time_s;
	assert_null(p->origin);
	assert_int_equal(p->milp_status, INART_MILP_NONE);
	assert_true(p->best_bound_s > 0 && p->best_bound_s <= inart * (1 + 1e-9));
	assert_true(p->lp_bound_s > 0 && p->lp_bound_s <= p->best_bound_s * (1 + 1e-9));
	inart_plan_destroy(p);
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		p = plan(single[i], t, js);
		best_single = fmin(best_single, p->comm_time_s);
		inart_plan_destroy(p);
	}
	assert_true(lp <= milp * (1 + 1e-9));
	assert_true(milp <= inart * (1 + 1e-6));
	assert_true(inart <= milp * 1.05); /* the search finds the optimum here */
	assert_true(inart <= best_single * (1 + 1e-9));
	/* Host links carry a whole gradient each way whatever the plan. */
	assert_true(lp >= 0.08 * (1 - 1e-9));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* milp stopped by its time limit: an incumbent, never labelled optimal, with
 * CBC's bound below it (scarce-small/1 needs minutes of branching). */
static void test_milp_time_limit(void **state)
{
	struct inart_planner_opt o = tu_opt(8, 0, 1);
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_err err;

	(void)state;
	if (inart_scenario_build("scarce-small/1", 1, &t, &js, &err) < 0)
		fail_msg("%s", err.msg);
	o.milp_time_limit_s = 1;
	p = tu_plan("milp", t, js, &o);
	assert_int_equal(p->milp_status, INART_MILP_TIME_LIMIT);
	assert_int_equal(p->bound_source, INART_BOUND_CBC);
	assert_true(p->best_bound_s > 0 && p->best_bound_s < p->comm_time_s * (1 - 1e-6));
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * Same shape but the core links are 25G: a single PS is limited by its core
 * path (8 Gbit / 25G = 0.32 s with INA at e0), two PSs share it (0.16 s).
 * The ring among the four workers on e0 needs no core link: 2 * 3/4 * 8 Gbit
 * and its ACKs over 100G = 0.12 s x (1 + INART_EVAL_RING_ACK_SHARE), which
 * InArt finds unless told --no-ring.
 */
static void test_two_ps_halve(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 h4-e0 h5-e0 e0-c0:25 e0-c1:25 c0-e1:25 "
				       "c1-e2:25 e1-h2 e2-h3",
				       "e0:400:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h4 h5", "h2 h3", 1e9);
	const char *single[] = {"ps", "switchml", "atp", "grid"};
	struct inart_planner_opt o = tu_opt(32, 2, 1);
	struct inart_plan *p = tu_plan("inart", t, js, &o);

	(void)state;
	assert_true(inart_plan_has_ring(p));
	assert_true(fabs(p->comm_time_s - 0.12 * (1 + INART_EVAL_RING_ACK_SHARE)) < 1e-9);
	/* all-ring: its time */
	assert_true(fabs(p->ring_bound_s - 0.12 * (1 + INART_EVAL_RING_ACK_SHARE)) < 1e-9);
	inart_plan_destroy(p);
	o.no_ring = 1;
	p = tu_plan("inart", t, js, &o);
	assert_false(inart_plan_has_ring(p));
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

/* Every algorithm on the built-in default scenario; inart (guard off) at
 * most every baseline. */
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
			 strcmp(a, "inart-sp") == 0 || strcmp(a, "grid") == 0 ||
			 strcmp(a, "inart-even") == 0)
			best_base = fmin(best_base, p->comm_time_s);
		inart_plan_destroy(p);
	}
	assert_true(lp > 0 && lp <= inart * (1 + 1e-9));
	assert_true(inart <= best_base * (1 + 1e-9));
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * Detours (planner option `detours`): on scarce-small/7 CBC proved 120.96 ms
 * the optimum of InArt's search space over the default candidates, rings
 * included (test_lns's S7_OPT), so no PS plan over them is faster; with
 * detours through a third leaf the search (no improvement phase: the same on
 * any machine) finds a valid PS plan below it, and without them it stays at
 * or above it.
 */
static void test_detours(void **state)
{
	const double s7_opt = 0.12096;
	struct inart_planner_opt o = tu_opt(32, 0, 1);
	double time_s[2]; /* without, with detours */
	struct inart_err err;
	struct inart_jobs *js;
	struct inart_topo *t;

	(void)state;
	if (inart_scenario_build("scarce-small/7", 1, &t, &js, &err) < 0)
		fail_msg("%s", err.msg);
	o.no_ring = 1;
	for (int i = 0; i < 2; i++) {
		struct inart_plan *p;

		o.detours = 2 * i;
		p = tu_plan("inart", t, js, &o); /* it checks the plan by the evaluator */
		time_s[i] = p->comm_time_s;
		inart_plan_destroy(p);
	}
	assert_true(time_s[0] >= s7_opt * (1 - 1e-4));
	assert_true(time_s[1] < s7_opt * 0.97);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/*
 * Automatic detours, the default: on leafspine (racks l0, l4, l5, l6 have no
 * INA) they let flows of those racks aggregate at a third leaf; the search
 * without an improvement phase (the same on any machine) then finds a plan
 * at least 3% faster than over the candidates without detours (measured:
 * 11.579 vs 12.137 ms).  Guard off: a baseline cannot stand in for either.
 */
static void test_detours_auto(void **state)
{
	struct inart_planner_opt o = tu_opt(32, 0, 1);
	struct inart_plan *p[2] = {NULL, NULL}; /* auto (the default), none */
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_err err;

	(void)state;
	assert_int_equal(o.detours, -1);
	assert_int_equal(inart_scenario_build("leafspine", 1, &t, &js, &err), 0);
	for (int i = 0; i < 2; i++, o.detours = 0)
		p[i] = tu_plan("inart", t, js, &o);
	print_message("leafspine, no improvement phase: auto detours %.4f ms, none %.4f ms\n",
		      p[0]->comm_time_s * 1e3, p[1]->comm_time_s * 1e3);
	assert_true(p[0]->comm_time_s < 0.97 * p[1]->comm_time_s);
	inart_plan_destroy(p[1]);
	p[1] = NULL;
	o.detours = -2;
	assert_int_equal(inart_planner_run("inart", t, js, &o, &p[1], &err), -EINVAL);
	assert_null(p[1]);
	inart_plan_destroy(p[0]);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Same seed, same plan (without the time-dependent improvement phase). */
static void test_deterministic(void **state)
{
	struct inart_planner_opt o = tu_opt(32, 0, 0);
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_err err;
	struct inart_plan *a, *b;

	(void)state;
	if (inart_scenario_build("default", 7, &t, &js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	a = tu_plan("inart", t, js, &o);
	b = tu_plan("inart", t, js, &o);
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

static int progress_calls;

static void count_progress(const struct inart_planner_progress *pr, void *arg)
{
	(void)arg;
	/* a stage before the first plan reports best_s NaN (inart.h) */
	assert_true((pr->best_s > 0 || isnan(pr->best_s)) && pr->elapsed_s >= 0 &&
		    pr->step != NULL);
	progress_calls++;
}

/*
 * The options are versioned by size: a caller compiled with fewer fields
 * gets the defaults of the others, and fields past its size are never read
 * (here: a progress callback left in memory past a short size is not
 * called); a size below the first two fields is refused.
 */
static void test_opt_size(void **state)
{
	struct inart_planner_opt o;
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-h2", "e0:100:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_plan *p = NULL;
	struct inart_err err;

	(void)state;
	memset(&o, 0x5a, sizeof(o));
	o.size = (uint32_t)offsetof(struct inart_planner_opt, time_limit_s);
	assert_int_equal(inart_planner_opt_default(&o), 0);
	assert_true(o.trials == 32 && o.seed == 1);
	assert_true(*(const unsigned char *)&o.time_limit_s == 0x5a); /* past the size */
	o.progress = count_progress;
	progress_calls = 0;
	assert_int_equal(inart_planner_run("inart", t, js, &o, &p, &err), 0);
	assert_int_equal(progress_calls, 0);
	inart_plan_destroy(p);
	o.size = sizeof(o);
	o.time_limit_s = 0;
	o.start = NULL; /* within the size now: a caller sets what it declares */
	assert_int_equal(inart_planner_run("inart", t, js, &o, &p, &err), 0);
	assert_true(progress_calls > 0); /* within the size now */
	inart_plan_destroy(p);
	o.size = 4;
	assert_int_equal(inart_planner_opt_default(&o), -EINVAL);
	assert_int_equal(inart_planner_run("inart", t, js, &o, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "size"));
	assert_int_equal(inart_planner_opt_default(NULL), -EINVAL);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The warm start (opt.start): the short path e0-s0-e1 is nearly full
 * (background 9 of 10 Gbit/s), the long one e0-x0-x1-e1 free; with one
 * candidate path per flow (k_paths 1: the short one) the search alone stays
 * on the full link, and from a plan on the long path it keeps that plan's
 * speed. */
static void test_warm_start(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-e0:10 h1-e0:10 e0-s0:10 s0-e1:10 e0-x0:10 x0-x1:10 x1-e1:10 e1-h2:10", "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e8);
	struct inart_plan *warm = inart_plan_create(js, "hand"), *cold, *p;
	struct inart_planner_opt o = tu_opt(4, 0, 1);

	(void)state;
	t->arcs[inart_topo_arc_between(t, tu_find(t, "e0"), tu_find(t, "s0"))].bg_gbps = 9;
	warm->jobs[0].split[0] = 1;
	tu_flow(warm, t, 0, "h0", "h2", "h2", "h0 e0 x0 x1 e1 h2");
	tu_flow(warm, t, 0, "h1", "h2", "h2", "h1 e0 x0 x1 e1 h2");
	assert_int_equal(inart_evaluate(t, js, warm, NULL), 0);
	o.k_paths = 1;
	o.no_ring = 1; /* a ring between h0 and h1 would beat both */
	cold = tu_plan("inart", t, js, &o);
	o.start = warm;
	p = tu_plan("inart", t, js, &o);
	print_message("warm start: %.6f s, from it %.6f s, without it %.6f s\n", warm->comm_time_s,
		      p->comm_time_s, cold->comm_time_s);
	assert_true(p->comm_time_s <= warm->comm_time_s * (1 + 1e-9));
	assert_true(cold->comm_time_s > 2 * warm->comm_time_s); /* so the test can fail */
	inart_plan_destroy(p);
	inart_plan_destroy(cold);
	inart_plan_destroy(warm);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The time limit bounds: a loose net against a 10x regression only (the
 * benchmark's budget row measures the real target, T + 10%). */
static void test_time_limit_bounds(void **state)
{
	struct inart_planner_opt o = {.size = sizeof(o)};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p = NULL;
	struct inart_err err;

	(void)state;
	inart_planner_opt_default(&o);
	o.time_limit_s = 0.3;
	if (inart_scenario_build("scarce", 1, &t, &js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	assert_int_equal(inart_planner_run("inart", t, js, &o, &p, &err), 0);
	print_message("scarce, --time-limit 0.3: planned in %.3f s\n", p->plan_time_s);
	assert_true(p->plan_time_s < 10 * o.time_limit_s);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_registry),	  cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_split_pays),	  cmocka_unit_test(test_milp_time_limit),
	    cmocka_unit_test(test_two_ps_halve),  cmocka_unit_test(test_default_scenario),
	    cmocka_unit_test(test_deterministic), cmocka_unit_test(test_opt_size),
	    cmocka_unit_test(test_warm_start),	  cmocka_unit_test(test_detours),
	    cmocka_unit_test(test_detours_auto),  cmocka_unit_test(test_time_limit_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
