/*
 * test_dp_e2e: whole all-reduces on the simulated fabric, from a plan (the
 * real planner's, or built by hand) through inart_install_build to switch,
 * PS and worker cores exchanging frames.
 *
 * Every result is checked value by value against a reference computed here:
 * for value i summed at scale s (inart_worker_value_scale), the exact int32
 * sum S = sum over workers of round(x * 2^s) (inart_quant_value) must give
 * the worker's float bit for bit (S * 2^-s rounded once, as
 * inart_quant_decode64 does), every worker of a job must hold the same
 * result, and the result must be within the documented bound
 * n * 2^-(s+1) (+ half an ulp of the float conversion) of the exact sum.
 * With |x| <= 1 and s = 16, |S| < 2^24, so the float determines S: bit
 * identity means the integer sum is exact.
 *
 * Scenarios: 1, 2, 8 and 64 workers; several PSs; multi-level aggregation
 * (trees whose parent is a switch); pool exhaustion (one slot per region,
 * tiny slot payloads -> fallbacks); loss up to 10%, duplication, reordering,
 * all together; a switch losing its state mid-iteration; rescaling after an
 * overflow; several iterations.  Also a goodput comparison (1% loss vs none)
 * printed with the measured simulated times.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "testutil.h"

#include "common/rng.h"
#include "cp/gen.h"
#include "cp/plan.h"
#include "cp/planner.h"
#include "dp/install.h"
#include "dp/quant.h"
#include "dp/sim.h"

struct e2e {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	struct inart_install *in;
	struct inart_sim *s;
	size_t n;
	float **x, *res;
	struct inart_sim_result r;
};

static int node(const struct inart_topo *t, const char *id)
{
	int v = inart_topo_find(t, id);

	if (v < 0)
		fail_msg("no node %s", id);
	return v;
}

static void path_of(const struct inart_topo *t, const char *spec, int *nodes, int *n)
{
	char name[32];
	int used;

	*n = 0;
	for (const char *s = spec; sscanf(s, " %31s%n", name, &used) == 1; s += used)
		nodes[(*n)++] = node(t, name);
}

static void flow(struct inart_plan *p, const struct inart_topo *t, int j, const char *w,
		 const char *ps, const char *agg, const char *path)
{
	int nodes[32], n;

	path_of(t, path, nodes, &n);
	assert_int_equal(inart_plan_add_flow(p, j, node(t, w), node(t, ps), node(t, agg), nodes, n),
			 0);
}

static void tree(struct inart_plan *p, const struct inart_topo *t, int j, const char *sw,
		 const char *ps, const char *parent, const char *path)
{
	int nodes[32], n;

	path_of(t, path, nodes, &n);
	assert_int_equal(
	    inart_plan_add_tree(p, j, node(t, sw), node(t, ps), node(t, parent), nodes, n), 0);
}

/* Install e->p (already filled) and build the simulator. */
static void e2e_up(struct e2e *e, const struct inart_install_opt *io,
		   const struct inart_sim_opt *so)
{
	struct inart_err err = {{0}};
	char why[256];

	e->d = inart_deploy_auto(e->t);
	assert_non_null(e->d);
	if (inart_install_build(e->t, e->js, e->p, e->d, io, &e->in, &err) < 0)
		fail_msg("install: %s", err.msg);
	e->s = inart_sim_create(e->t, e->d, so);
	assert_non_null(e->s);
	if (inart_sim_install(e->s, e->in, why, sizeof(why)) < 0)
		fail_msg("sim install: %s", why);
}

static void e2e_plan(struct e2e *e, const char *algo)
{
	struct inart_planner_opt po;
	struct inart_err err = {{0}};

	inart_planner_opt_default(&po);
	po.trials = 8;
	po.max_rounds = 2;
	if (inart_planner_run(algo, e->t, e->js, &po, &e->p, &err) < 0)
		fail_msg("planner %s: %s", algo, err.msg);
}

static void e2e_down(struct e2e *e)
{
	if (e->x) {
		for (int k = 0; k < e->in->n_workers; k++)
			free(e->x[k]);
		free(e->x);
	}
	free(e->res);
	inart_sim_destroy(e->s);
	inart_install_destroy(e->in);
	inart_deploy_destroy(e->d);
	inart_plan_destroy(e->p);
	inart_jobs_destroy(e->js);
	inart_topo_destroy(e->t);
	memset(e, 0, sizeof(*e));
}

/* Fill the inputs: uniform in [-amp, amp], seeded. */
static void e2e_inputs(struct e2e *e, size_t n, uint64_t seed, float amp)
{
	struct inart_rng r;

	if (e->x == NULL) {
		e->x = calloc((size_t)e->in->n_workers, sizeof(float *));
		assert_non_null(e->x);
	}
	for (int k = 0; k < e->in->n_workers; k++) {
		free(e->x[k]);
		e->x[k] = malloc((n + 1) * sizeof(float));
		assert_non_null(e->x[k]);
	}
	free(e->res);
	e->res = malloc((n + 1) * sizeof(float));
	e->n = n;
	inart_rng_seed(&r, seed);
	for (int k = 0; k < e->in->n_workers; k++)
		for (size_t i = 0; i < n; i++)
			e->x[k][i] = (float)((inart_rng_unit(&r) * 2 - 1) * amp);
}

/* Check every worker's result against the reference; returns the number
 * of values whose scale differs from want_scale (-1: do not count). */
static int e2e_check(struct e2e *e, int want_scale)
{
	const struct inart_install *in = e->in;
	float *first = malloc((e->n + 1) * sizeof(float));
	int off_scale = 0;

	assert_non_null(first);
	for (int j = 0; j < e->js->n_jobs; j++) {
		int k0 = -1;

		for (int k = 0; k < in->n_workers; k++) {
			if (in->workers[k].job != j)
				continue;
			assert_int_equal(inart_sim_result(e->s, k, e->res, e->n), 0);
			if (k0 < 0) {
				k0 = k;
				memcpy(first, e->res, e->n * sizeof(float));
				continue;
			}
			/* every worker of the job holds the same floats */
			if (memcmp(first, e->res, e->n * sizeof(float)) != 0)
				fail_msg("job %d: worker %d disagrees with worker %d", j, k, k0);
		}
		assert_true(k0 >= 0);
		for (size_t i = 0; i < e->n; i++) {
			int s, nw = 0;
			int64_t sum = 0;
			double exact = 0, bound;
			float want;

			assert_int_equal(
			    inart_worker_value_scale(inart_sim_worker(e->s, k0), i, &s), 0);
			if (want_scale >= 0 && s != want_scale)
				off_scale++;
			for (int k = 0; k < in->n_workers; k++) {
				int32_t q;

				if (in->workers[k].job != j)
					continue;
				nw++;
				assert_int_equal(inart_quant_value(e->x[k][i], s, &q), 0);
				sum += q;
				exact += e->x[k][i];
			}
			inart_quant_decode64(&sum, 1, s, &want);
			if (memcmp(&want, &first[i], sizeof(float)) != 0)
				fail_msg(
				    "job %d value %zu: got %.9g, reference %.9g (int sum %lld, "
				    "scale %d)",
				    j, i, first[i], want, (long long)sum, s);
			bound = nw * ldexp(1.0, -(s + 1)) + fabs(exact) * ldexp(1.0, -24);
			if (fabs(first[i] - exact) > bound)
				fail_msg(
				    "job %d value %zu: %.9g off the exact %.9g by more than %g", j,
				    i, first[i], exact, bound);
		}
	}
	free(first);
	return off_scale;
}

/* One all-reduce; fails the test if it does not complete. */
static double e2e_run(struct e2e *e, uint32_t iter, uint64_t limit_ns)
{
	int rc = inart_sim_allreduce(e->s, (const float *const *)e->x, e->n, iter, limit_ns, &e->r);

	if (rc < 0)
		fail_msg(
		    "all-reduce %u did not complete (rc %d) after %.6f s simulated, %llu events",
		    iter, rc, e->r.time_s, (unsigned long long)e->r.events);
	return e->r.time_s;
}

static uint64_t sw_counter(struct e2e *e, const char *what)
{
	uint64_t total = 0;

	for (int k = 0; k < e->in->n_switches; k++) {
		struct inart_sw_tree_stats ts[64];
		uint64_t drops[INART_DROP_N];
		int n = inart_switch_stats(inart_sim_switch(e->s, e->in->sw[k].node), drops, NULL,
					   ts, 64);

		for (int i = 0; i < n && i < 64; i++) {
			if (!strcmp(what, "aggregated"))
				total += ts[i].aggregated;
			else if (!strcmp(what, "emitted"))
				total += ts[i].emitted;
			else if (!strcmp(what, "fallback"))
				total += ts[i].fallback;
			else if (!strcmp(what, "partial"))
				total += ts[i].partial;
			else if (!strcmp(what, "results"))
				total += ts[i].results;
			else if (!strcmp(what, "duplicates"))
				total += ts[i].duplicates;
		}
	}
	return total;
}

/* Tiny: h0, h1 under e0 (INA), PS h2 behind e1. */
static void tiny(struct e2e *e)
{
	e->t = tu_topo("h0-e0 h1-e0 e0-e1 e1-h2", "e0:100:2");
	e->js = tu_jobs1(e->t, "h0 h1", "h2", 1e6);
	e->p = inart_plan_create(e->js, "hand");
	e->p->jobs[0].split[0] = 1;
	flow(e->p, e->t, 0, "h0", "h2", "e0", "h0 e0");
	flow(e->p, e->t, 0, "h1", "h2", "e0", "h1 e0");
	tree(e->p, e->t, 0, "e0", "h2", "h2", "e0 e1 h2");
}

static void test_two_workers(void **state)
{
	struct e2e e = {0};

	(void)state;
	tiny(&e);
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 5000, 1, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	/* everything aggregated in the switch: 2 contributions per chunk */
	assert_true(sw_counter(&e, "emitted") > 0);
	assert_int_equal(sw_counter(&e, "aggregated"), 2 * sw_counter(&e, "emitted"));
	assert_int_equal(sw_counter(&e, "fallback"), 0);
	print_message("two workers, %zu values: %.3f us simulated\n", e.n, e.r.time_s * 1e6);
	/* more iterations on the same fabric */
	for (uint32_t it = 2; it <= 3; it++) {
		e2e_inputs(&e, 5000, it, 1.0f);
		e2e_run(&e, it, 1000000000ull);
		e2e_check(&e, -1);
	}
	e2e_down(&e);
}

static void test_one_worker(void **state)
{
	struct e2e e = {0};

	(void)state;
	e.t = tu_topo("h0-e0 e0-h1", "e0:100:1");
	e.js = tu_jobs1(e.t, "h0", "h1", 1e6);
	e.p = inart_plan_create(e.js, "hand");
	e.p->jobs[0].split[0] = 1;
	flow(e.p, e.t, 0, "h0", "h1", "e0", "h0 e0");
	tree(e.p, e.t, 0, "e0", "h1", "h1", "e0 h1");
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 1000, 5, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	e2e_down(&e);
}

/* Two levels: e0 {h0,h1} and e1 {h2,h3} merge at a0, which sends to PS h4
 * behind e2; h5 under e2 goes straight to the PS; a second PS h6 (share
 * 0.3) without INA, a third (h7) with share 0. */
static void multilevel(struct e2e *e)
{
	const char *ws[] = {"h0", "h1", "h2", "h3", "h5"}, *under[] = {"e0", "e0", "e1", "e1"};
	char path[64];

	e->t = tu_topo("h0-e0 h1-e0 h2-e1 h3-e1 e0-a0 e1-a0 a0-e2 e2-h4 h5-e2 e2-h6 e2-h7",
		       "e0:100:1 e1:100:1 a0:100:4");
	e->js = tu_jobs1(e->t, "h0 h1 h2 h3 h5", "h4 h6 h7", 1e6);
	e->p = inart_plan_create(e->js, "hand");
	e->p->jobs[0].split[0] = 0.7;
	e->p->jobs[0].split[1] = 0.3;
	flow(e->p, e->t, 0, "h0", "h4", "e0", "h0 e0");
	flow(e->p, e->t, 0, "h1", "h4", "e0", "h1 e0");
	flow(e->p, e->t, 0, "h2", "h4", "e1", "h2 e1");
	flow(e->p, e->t, 0, "h3", "h4", "e1", "h3 e1");
	flow(e->p, e->t, 0, "h5", "h4", "h4", "h5 e2 h4");
	tree(e->p, e->t, 0, "e0", "h4", "a0", "e0 a0");
	tree(e->p, e->t, 0, "e1", "h4", "a0", "e1 a0");
	tree(e->p, e->t, 0, "a0", "h4", "h4", "a0 e2 h4");
	for (int i = 0; i < 5; i++) {
		if (i < 4)
			snprintf(path, sizeof(path), "%s %s a0 e2 h6", ws[i], under[i]);
		else
			snprintf(path, sizeof(path), "%s e2 h6", ws[i]);
		flow(e->p, e->t, 0, ws[i], "h6", "h6", path);
	}
}

static void test_multilevel(void **state)
{
	struct e2e e = {0};
	const struct inart_switch *a0;
	struct inart_sw_tree_stats ts[4];
	uint64_t drops[INART_DROP_N];
	int n;

	(void)state;
	multilevel(&e);
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 20000, 11, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	/* a0 merged the aggregates of e0 and e1: two per chunk */
	a0 = inart_sim_switch(e.s, node(e.t, "a0"));
	n = inart_switch_stats(a0, drops, NULL, ts, 4);
	assert_int_equal(n, 2); /* tree 0 aggregates, tree 1 (PS h6) passes through */
	for (int i = 0; i < n; i++) {
		if (ts[i].tree == 0) {
			assert_true(ts[i].emitted > 0);
			assert_int_equal(ts[i].aggregated, 2 * ts[i].emitted);
		} else {
			assert_int_equal(ts[i].aggregated, 0);
		}
		assert_int_equal(ts[i].fallback, 0);
	}
	print_message("multi-level, 5 workers, 2 PSs, %zu values: %.3f us simulated\n", e.n,
		      e.r.time_s * 1e6);
	e2e_down(&e);
}

/* Fat-tree k=4 (16 hosts), planner output. */
static void fattree_jobs(struct e2e *e, int two_jobs)
{
	struct inart_gen_opt go;
	struct inart_err err;

	inart_gen_opt_default(&go);
	go.trees = 4;
	e->t = inart_gen_fattree(4, &go, &err);
	assert_non_null(e->t);
	e->js = inart_jobs_create();
	tu_job(e->js, e->t, "a", "h0 h1 h2 h4 h6 h9 h12 h13", "h3 h14 h10", 4e8);
	if (two_jobs)
		tu_job(e->js, e->t, "b", "h5 h7 h8 h11 h15", "h0 h2", 1e8);
	assert_int_equal(inart_jobs_validate(e->js, e->t, &err), 0);
}

static void test_planners_8_workers(void **state)
{
	const char *algos[] = {"inart", "atp", "ps", "byteps", "switchml"};

	(void)state;
	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct e2e e = {0};

		fattree_jobs(&e, 0);
		e2e_plan(&e, algos[a]);
		e2e_up(&e, NULL, NULL);
		e2e_inputs(&e, 30000, 100 + a, 1.0f);
		e2e_run(&e, 1, 1000000000ull);
		assert_int_equal(e2e_check(&e, 16), 0);
		print_message("%-8s 8 workers, %zu values: %.3f us simulated, %llu aggregated in "
			      "switches\n",
			      algos[a], e.n, e.r.time_s * 1e6,
			      (unsigned long long)sw_counter(&e, "aggregated"));
		e2e_down(&e);
	}
}

static void test_two_jobs(void **state)
{
	struct e2e e = {0};

	(void)state;
	fattree_jobs(&e, 1);
	e2e_plan(&e, "inart");
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 20000, 7, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	e2e_down(&e);
}

static void test_64_workers(void **state)
{
	struct inart_gen_opt go;
	struct inart_err err;
	struct e2e e = {0};
	char workers[1024] = "", ps[64] = "";

	(void)state;
	inart_gen_opt_default(&go);
	go.trees = 4;
	e.t = inart_gen_fattree(8, &go, &err); /* 128 hosts, 4 per edge */
	assert_non_null(e.t);
	for (int i = 0; i < 64; i++)
		snprintf(workers + strlen(workers), sizeof(workers) - strlen(workers), "h%d ",
			 2 * i);
	snprintf(ps, sizeof(ps), "h1 h63 h127");
	e.js = tu_jobs1(e.t, workers, ps, 1e8);
	e2e_plan(&e, "atp");
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 4000, 64, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	assert_true(sw_counter(&e, "aggregated") > 0);
	print_message("atp, 64 workers, %zu values: %.3f us simulated\n", e.n, e.r.time_s * 1e6);
	e2e_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_workers), cmocka_unit_test(test_one_worker),
	    cmocka_unit_test(test_multilevel),	cmocka_unit_test(test_planners_8_workers),
	    cmocka_unit_test(test_two_jobs),	cmocka_unit_test(test_64_workers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
