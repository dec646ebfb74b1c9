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
 * overflow; several iterations; every switch in several shards (issue
 * 24).  Also the goodput at 1% loss against none (a sweep over seeds 1-20
 * of two plans asserted against the thresholds docs/dataplane.md states;
 * INART_GOODPUT_SEEDS=N sweeps seeds 1..N).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "testutil.h"

#include "common/rng.h"
#include "cp/model/gen.h"
#include "cp/model/plan.h"
#include "cp/planner/planner.h"
#include "cp/model/evaluate.h"
#include "cp/model/scenario.h"
#include "dp/pkt.h"
#include "dp/wire.h"
#include "bridge/install.h"
#include "dp/quant.h"
#include "sim/sim.h"
#include "bridge/epoch.h"

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
	void (*edit)(struct inart_install *in); /* change the installation first */
};

/* Install e->p (already filled) and build the simulator. */
static void e2e_up(struct e2e *e, const struct inart_install_opt *io,
		   const struct inart_sim_opt *so)
{
	struct inart_err err = {{0}};
	struct inart_err why = {{0}};

	e->d = inart_deploy_auto(e->t);
	assert_non_null(e->d);
	if (inart_install_build(e->t, e->js, e->p, e->d, io, &e->in, &err) < 0)
		fail_msg("install: %s", err.msg);
	if (e->edit)
		e->edit(e->in);
	e->s = inart_sim_create(e->t, e->d, so);
	assert_non_null(e->s);
	if (inart_sim_install(e->s, e->in, &why) < 0)
		fail_msg("sim install: %s", why.msg);
}

static void e2e_plan(struct e2e *e, const char *algo)
{
	struct inart_planner_opt po = {.size = sizeof(po)};
	struct inart_err err = {{0}};

	inart_planner_opt_default(&po);
	po.trials = 8;
	po.max_rounds = 2;
	/* PS and INA plans: these tests check the aggregation (value scales,
	 * switch counters) and ring workers have none (test_ring_sim runs
	 * rings); InArt plans a job as a ring where that is faster, e.g. job b
	 * of test_two_jobs (34.5 ms against 36.0 with PSs) when its search
	 * gets the time */
	po.no_ring = 1;
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
		int n = inart_shards_stats(inart_sim_switch_shards(e->s, e->in->sw[k].node), drops,
					   NULL, ts, 64);

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

/* h0, h1 under e0 (INA), PS h2 behind e1, on the given links: both flows
 * aggregate at e0, whose tree goes e0 e1 h2. */
static void tiny_links(struct e2e *e, const char *links)
{
	e->t = tu_topo(links, "e0:100:2");
	e->js = tu_jobs1(e->t, "h0 h1", "h2", 1e6);
	e->p = inart_plan_create(e->js, "hand");
	e->p->jobs[0].split[0] = 1;
	tu_tiny_routes(e->p, e->t);
}

/* Tiny: h0, h1 under e0 (INA), PS h2 behind e1. */
static void tiny(struct e2e *e)
{
	tiny_links(e, "h0-e0 h1-e0 e0-e1 e1-h2");
}

static void test_two_workers(void **state)
{
	struct e2e e = {0};
	struct inart_sim_opt so;
	double t_free;

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
	t_free = e.r.time_s;
	/* more iterations on the same fabric */
	for (uint32_t it = 2; it <= 3; it++) {
		e2e_inputs(&e, 5000, it, 1.0f);
		e2e_run(&e, it, 1000000000ull);
		e2e_check(&e, -1);
	}
	e2e_down(&e);

	/* a send buffer of one frame: workers wait for the link, which stays
	 * busy (wake-ups at the next ns: at most 1 ns lost per frame) */
	tiny(&e);
	inart_sim_opt_default(&so);
	so.host_queue_pkts = 1;
	e2e_up(&e, NULL, &so);
	e2e_inputs(&e, 5000, 1, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	assert_true(e.r.time_s >= t_free && e.r.time_s < t_free + 15 * 1e-9);
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
	tu_flow(e.p, e.t, 0, "h0", "h1", "e0", "h0 e0");
	tu_tree(e.p, e.t, 0, "e0", "h1", "h1", "e0 h1");
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 1000, 5, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	e2e_down(&e);
}

/* Two levels: e0 {h0,h1} and e1 {h2,h3} merge at a0, which sends to PS h4
 * behind e2; h5 under e2 goes straight to the PS; a second PS h6 (share
 * 0.3) without INA, a third (h7) with share 0. */
static void multilevel_links(struct e2e *e, const char *links)
{
	const char *ws[] = {"h0", "h1", "h2", "h3", "h5"}, *under[] = {"e0", "e0", "e1", "e1"};
	char path[64];

	e->t = tu_topo(links, "e0:100:1 e1:100:1 a0:100:4");
	e->js = tu_jobs1(e->t, "h0 h1 h2 h3 h5", "h4 h6 h7", 1e6);
	e->p = inart_plan_create(e->js, "hand");
	e->p->jobs[0].split[0] = 0.7;
	e->p->jobs[0].split[1] = 0.3;
	tu_flow(e->p, e->t, 0, "h0", "h4", "e0", "h0 e0");
	tu_flow(e->p, e->t, 0, "h1", "h4", "e0", "h1 e0");
	tu_flow(e->p, e->t, 0, "h2", "h4", "e1", "h2 e1");
	tu_flow(e->p, e->t, 0, "h3", "h4", "e1", "h3 e1");
	tu_flow(e->p, e->t, 0, "h5", "h4", "h4", "h5 e2 h4");
	tu_tree(e->p, e->t, 0, "e0", "h4", "a0", "e0 a0");
	tu_tree(e->p, e->t, 0, "e1", "h4", "a0", "e1 a0");
	tu_tree(e->p, e->t, 0, "a0", "h4", "h4", "a0 e2 h4");
	for (int i = 0; i < 5; i++) {
		if (i < 4)
			snprintf(path, sizeof(path), "%s %s a0 e2 h6", ws[i], under[i]);
		else
			snprintf(path, sizeof(path), "%s e2 h6", ws[i]);
		tu_flow(e->p, e->t, 0, ws[i], "h6", "h6", path);
	}
}

static void multilevel(struct e2e *e)
{
	multilevel_links(e, "h0-e0 h1-e0 h2-e1 h3-e1 e0-a0 e1-a0 a0-e2 e2-h4 h5-e2 e2-h6 e2-h7");
}

/* The same with slower links for h0 (25 Gbit/s) and h3 (40 Gbit/s), so
 * contributions to a chunk arrive at different times and slots stay busy
 * (symmetric fabrics complete every slot at one instant). */
static void multilevel_skewed(struct e2e *e)
{
	multilevel_links(e, "h0-e0:25 h1-e0 h2-e1 h3-e1:40 e0-a0 e1-a0 a0-e2 e2-h4 h5-e2 e2-h6 "
			    "e2-h7");
}

/* Tiny with h1 on a 25 Gbit/s link. */
static void tiny_skewed(struct e2e *e)
{
	tiny_links(e, "h0-e0 h1-e0:25 e0-e1 e1-h2");
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
	a0 = inart_sim_switch(e.s, tu_find(e.t, "a0"));
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

/* Issue 24: the same plans with every switch in 1, 2 and 3 shards
 * (dp/shard, the simulator's switch_shards): exact, the same contributions
 * aggregated, the same aggregates complete and partial, no more fallbacks
 * than with one core, and every switch
 * that aggregates does so in each of its shards (its trees' slots go round
 * the shards). */
static void test_sharded_switches(void **state)
{
	uint64_t agg1 = 0, fb1 = 0, em1 = 0, pa1 = 0;

	(void)state;
	for (int n = 1; n <= 3; n++) {
		struct e2e e = {0};
		struct inart_sim_opt so;
		int aggregating = 0;

		inart_sim_opt_default(&so);
		so.switch_shards = n;
		fattree_jobs(&e, 1);
		e2e_plan(&e, "inart");
		e2e_up(&e, NULL, &so);
		e2e_inputs(&e, 20000, 24, 1.0f);
		e2e_run(&e, 1, 1000000000ull);
		assert_int_equal(e2e_check(&e, 16), 0);
		e2e_run(&e, 2, 1000000000ull);
		assert_int_equal(e2e_check(&e, 16), 0);
		if (n == 1) {
			agg1 = sw_counter(&e, "aggregated");
			fb1 = sw_counter(&e, "fallback");
			em1 = sw_counter(&e, "emitted");
			pa1 = sw_counter(&e, "partial");
			assert_true(agg1 > 0);
		} else {
			/* a chunk split between shards would leave partial aggregates */
			assert_int_equal(sw_counter(&e, "aggregated"), agg1);
			assert_int_equal(sw_counter(&e, "emitted"), em1);
			assert_int_equal(sw_counter(&e, "partial"), pa1);
			assert_true(sw_counter(&e, "fallback") <= fb1);
		}
		for (int k = 0; k < e.in->n_switches; k++) {
			const struct inart_shards *sh =
			    inart_sim_switch_shards(e.s, e.in->sw[k].node);
			struct inart_sw_tree_stats ts[64];
			uint64_t per[INART_SHARD_MAX] = {0}, all = 0;

			assert_int_equal(inart_shards_n(sh), n);
			for (int j = 0; j < n; j++) {
				int nt = inart_switch_stats(inart_shards_core_c(sh, j), NULL, NULL,
							    ts, 64);

				for (int i = 0; i < nt && i < 64; i++)
					per[j] += ts[i].aggregated;
				all += per[j];
			}
			if (all == 0)
				continue;
			aggregating++;
			for (int j = 0; j < n; j++)
				assert_true(per[j] > 0);
		}
		assert_true(aggregating > 0);
		print_message("%d shard%s per switch: %llu aggregated, %llu fallbacks, %d "
			      "aggregating switches, %.3f us simulated\n",
			      n, n > 1 ? "s" : "", (unsigned long long)sw_counter(&e, "aggregated"),
			      (unsigned long long)sw_counter(&e, "fallback"), aggregating,
			      e.r.time_s * 1e6);
		e2e_down(&e);
	}
}

static void test_64_workers(void **state)
{
	const char *algos[] = {"atp", "inart"};

	(void)state;
	for (size_t a = 0; a < 2; a++) {
		struct inart_gen_opt go;
		struct inart_err err;
		struct e2e e = {0};
		char workers[1024] = "";

		inart_gen_opt_default(&go);
		go.trees = 4;
		e.t = inart_gen_fattree(8, &go, &err); /* 128 hosts, 4 per edge */
		assert_non_null(e.t);
		for (int i = 0; i < 64; i++)
			snprintf(workers + strlen(workers), sizeof(workers) - strlen(workers),
				 "h%d ", 2 * i);
		e.js = tu_jobs1(e.t, workers, "h1 h63 h127", 1e8);
		e2e_plan(&e, algos[a]);
		e2e_up(&e, NULL, NULL);
		e2e_inputs(&e, 4000, 64 + a, 1.0f);
		e2e_run(&e, 1, 1000000000ull);
		assert_int_equal(e2e_check(&e, 16), 0);
		assert_true(sw_counter(&e, "aggregated") > 0);
		print_message("%-5s 64 workers, %zu values: %.3f us simulated, %llu aggregated\n",
			      algos[a], e.n, e.r.time_s * 1e6,
			      (unsigned long long)sw_counter(&e, "aggregated"));
		e2e_down(&e);
	}
}

/* Options for fault runs: short timeouts (the loss-free runs take tens of
 * microseconds at 100 Gbit/s). */
static void fault_opts(struct inart_install_opt *io, struct inart_sim_opt *so, double loss,
		       double dup, double reorder, uint64_t seed)
{
	inart_install_opt_default(io);
	io->retx_timeout_ns = 100000;
	io->flush_timeout_ns = 30000;
	inart_sim_opt_default(so);
	so->loss = loss;
	so->dup = dup;
	so->reorder = reorder;
	so->reorder_ns = 5000;
	so->seed = seed;
}

static uint64_t all_links(struct e2e *e, int what)
{
	uint64_t total = 0;

	for (int a = 0; a < inart_topo_n_arcs(e->t); a++) {
		struct inart_sim_link_stats ls;

		inart_sim_link_stats(e->s, a, &ls);
		total += what == 0 ? ls.lost : what == 1 ? ls.duplicated : ls.reordered;
	}
	return total;
}

static void retx_total(struct e2e *e, uint64_t *retx)
{
	*retx = 0;
	for (int k = 0; k < e->in->n_workers; k++) {
		struct inart_worker_stats ws;

		inart_worker_stats(inart_sim_worker(e->s, k), &ws);
		*retx += ws.retransmitted;
	}
}

static void faults_on(void (*scenario)(struct e2e *), const char *algo, const char *name,
		      double loss, double dup, double reorder, uint64_t seed)
{
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct e2e e = {0};
	uint64_t retx;

	fault_opts(&io, &so, loss, dup, reorder, seed);
	scenario(&e);
	if (algo)
		e2e_plan(&e, algo);
	e2e_up(&e, &io, &so);
	for (uint32_t it = 1; it <= 2; it++) {
		e2e_inputs(&e, 20000, seed * 10 + it, 1.0f);
		e2e_run(&e, it, 10000000000ull);
		e2e_check(&e, -1);
	}
	retx_total(&e, &retx);
	if (loss > 0)
		assert_true(all_links(&e, 0) > 0);
	if (dup > 0)
		assert_true(all_links(&e, 1) > 0);
	if (reorder > 0)
		assert_true(all_links(&e, 2) > 0);
	print_message("%-10s loss %4.1f%% dup %4.1f%% reorder %4.1f%%: 2 all-reduces, last %.1f us "
		      "simulated; lost %llu dup %llu reordered %llu frames, %llu retransmissions, "
		      "%llu fallbacks, %llu partial flushes\n",
		      name, loss * 100, dup * 100, reorder * 100, e.r.time_s * 1e6,
		      (unsigned long long)all_links(&e, 0), (unsigned long long)all_links(&e, 1),
		      (unsigned long long)all_links(&e, 2), (unsigned long long)retx,
		      (unsigned long long)sw_counter(&e, "fallback"),
		      (unsigned long long)sw_counter(&e, "partial"));
	e2e_down(&e);
}

/* The same with losses, duplicates and reordering (3%, 1%, 2%): NACKs,
 * repairs, probes and partial flushes all reach the shard that holds the
 * chunk; both iterations exact with 2 and 3 shards. */
static void test_sharded_faults(void **state)
{
	(void)state;
	for (int n = 2; n <= 3; n++) {
		struct inart_install_opt io;
		struct inart_sim_opt so;
		struct e2e e = {0};

		fault_opts(&io, &so, 0.03, 0.01, 0.02, 24 + (uint64_t)n);
		so.switch_shards = n;
		fattree_jobs(&e, 1);
		e2e_plan(&e, "inart");
		e2e_up(&e, &io, &so);
		for (uint32_t it = 1; it <= 2; it++) {
			e2e_inputs(&e, 20000, 240 + it, 1.0f);
			e2e_run(&e, it, 10000000000ull);
			e2e_check(&e, -1);
		}
		assert_true(all_links(&e, 0) > 0);
		print_message("%d shards, loss 3%% dup 1%% reorder 2%%: exact; %llu lost, %llu "
			      "partial flushes, %llu fallbacks\n",
			      n, (unsigned long long)all_links(&e, 0),
			      (unsigned long long)sw_counter(&e, "partial"),
			      (unsigned long long)sw_counter(&e, "fallback"));
		e2e_down(&e);
	}
}

static void fattree_one(struct e2e *e)
{
	fattree_jobs(e, 0);
}

static void fattree_two(struct e2e *e)
{
	fattree_jobs(e, 1);
}

static void test_loss(void **state)
{
	(void)state;
	faults_on(tiny, NULL, "tiny", 0.01, 0, 0, 1);
	faults_on(tiny, NULL, "tiny", 0.10, 0, 0, 2);
	faults_on(multilevel, NULL, "multilevel", 0.01, 0, 0, 3);
	faults_on(multilevel, NULL, "multilevel", 0.05, 0, 0, 4);
	faults_on(multilevel, NULL, "multilevel", 0.10, 0, 0, 5);
	faults_on(fattree_one, "inart", "fat-tree", 0.10, 0, 0, 6);
}

static void test_dup_reorder(void **state)
{
	(void)state;
	faults_on(tiny, NULL, "tiny", 0, 0.05, 0, 11);
	faults_on(multilevel, NULL, "multilevel", 0, 0.10, 0, 12);
	faults_on(multilevel, NULL, "multilevel", 0, 0, 0.20, 13);
	faults_on(fattree_one, "inart", "fat-tree", 0, 0.05, 0.10, 14);
}

static void test_all_faults(void **state)
{
	(void)state;
	faults_on(multilevel, NULL, "multilevel", 0.10, 0.05, 0.10, 21);
	faults_on(fattree_two, "inart", "fat-tree 2j", 0.05, 0.05, 0.10, 22);
	faults_on(fattree_two, "atp", "fat-tree 2j", 0.10, 0.02, 0.05, 23);
}

/* Pool exhaustion: every aggregation region shrunk to one slot (the
 * workers still use their window of 64): chunks collide -> fallbacks. */
static void one_slot(struct inart_install *in)
{
	for (int k = 0; k < in->n_switches; k++)
		for (int i = 0; i < in->sw[k].n_labels; i++)
			if (in->sw[k].labels[i].aggregate)
				in->sw[k].labels[i].n_slots = 1;
}

/* Slots that hold fewer values than a packet carries: everything falls back. */
static void tiny_slots(struct inart_install *in)
{
	for (int k = 0; k < in->n_switches; k++)
		in->sw[k].cfg.max_values = 16;
}

static void test_pool_exhaustion(void **state)
{
	struct e2e e = {0};
	struct inart_install_opt io;
	struct inart_sim_opt so;

	(void)state;
	multilevel_skewed(&e);
	e.edit = one_slot;
	fault_opts(&io, &so, 0, 0, 0, 31);
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 20000, 31, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	assert_true(sw_counter(&e, "fallback") > 0);
	assert_true(sw_counter(&e, "emitted") > 0);
	print_message("one slot per region: %llu fallbacks, %llu aggregates, %.1f us\n",
		      (unsigned long long)sw_counter(&e, "fallback"),
		      (unsigned long long)sw_counter(&e, "emitted"), e.r.time_s * 1e6);
	e2e_down(&e);

	fattree_jobs(&e, 1);
	e2e_plan(&e, "inart");
	e.edit = tiny_slots;
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 20000, 32, 1.0f);
	e2e_run(&e, 1, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	assert_true(sw_counter(&e, "fallback") > 0);
	assert_int_equal(sw_counter(&e, "emitted"), 0);
	e2e_down(&e);

	/* one slot and loss: fallbacks, partial flushes and retransmissions */
	fault_opts(&io, &so, 0.05, 0.02, 0.05, 33);
	multilevel_skewed(&e);
	e.edit = one_slot;
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 20000, 33, 1.0f);
	e2e_run(&e, 1, 10000000000ull);
	assert_int_equal(e2e_check(&e, -1), 0);
	e2e_down(&e);
}

/* A switch loses its aggregation state (and drops frames for 5 us) in the
 * middle of an all-reduce; the time of the loss-free run is measured first
 * on an identical fabric. */
static void fail_mid(void (*scenario)(struct e2e *), const char *algo, const char *sw_name,
		     uint64_t down_ns)
{
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct e2e e = {0};
	double t0, t1;
	uint64_t mid;

	fault_opts(&io, &so, 0, 0, 0, 41);
	scenario(&e);
	if (algo)
		e2e_plan(&e, algo);
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 20000, 41, 1.0f);
	t0 = e2e_run(&e, 1, 1000000000ull);
	e2e_down(&e);

	scenario(&e);
	if (algo)
		e2e_plan(&e, algo);
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 20000, 41, 1.0f);
	mid = inart_sim_now(e.s) + (uint64_t)(t0 * 1e9 / 2);
	if (sw_name == NULL) { /* the planner's switch with the most children */
		const struct inart_job_plan *jp = &e.p->jobs[0];
		int best = -1, most = 0;

		for (int i = 0; i < jp->n_trees; i++) {
			int c = 0;

			for (int k = 0; k < jp->n_flows; k++)
				c += jp->flows[k].agg == jp->trees[i].sw &&
				     jp->flows[k].ps == jp->trees[i].ps;
			for (int k = 0; k < jp->n_trees; k++)
				c += jp->trees[k].parent == jp->trees[i].sw &&
				     jp->trees[k].ps == jp->trees[i].ps;
			if (c > most) {
				most = c;
				best = i;
			}
		}
		assert_true(best >= 0 && most >= 2);
		sw_name = e.t->nodes[jp->trees[best].sw].id;
	}
	assert_int_equal(inart_sim_fail_switch(e.s, tu_find(e.t, sw_name), mid, down_ns), 0);
	t1 = e2e_run(&e, 1, 10000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	/* a failure cannot make the all-reduce faster (recovery may be hidden
	 * behind the slowest worker) */
	assert_true(t1 >= t0);
	print_message("%s loses its state at %.1f us (down %.1f us): %.1f us instead of %.1f us\n",
		      sw_name, (double)mid / 1e3, (double)down_ns / 1e3, t1 * 1e6, t0 * 1e6);
	e2e_down(&e);
}

static void test_switch_failure(void **state)
{
	(void)state;
	fail_mid(tiny_skewed, NULL, "e0", 0);
	fail_mid(tiny_skewed, NULL, "e0", 5000);
	fail_mid(multilevel_skewed, NULL, "a0", 0);
	fail_mid(multilevel_skewed, NULL, "e1", 5000);
	/* the fat-tree is symmetric: siblings' contributions arrive together,
	 * slots are rarely half full, so the switch is also down for 5 us */
	fail_mid(fattree_one, "inart", NULL, 5000);
	fail_mid(fattree_two, "atp", NULL, 5000);
}

/* Values that overflow int32 at the initial scale: the workers rescale and
 * the result is within the bound at the scale actually used. */
static void test_overflow(void **state)
{
	struct e2e e = {0};

	(void)state;
	multilevel(&e);
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 5000, 51, 1e5f); /* 1e5 * 2^16 > 2^31 */
	e2e_run(&e, 1, 1000000000ull);
	assert_true(e2e_check(&e, 16) > 0);
	e2e_down(&e);
}

/* Goodput: the same all-reduce with 1% loss on every link against no loss.
 * Leaf-spine (2 spines, 4 leaves of 4 hosts), links scaled to 1 Gbit/s
 * (hosts) and 4 Gbit/s (fabric) so serialization dominates, 8 workers, 2
 * PSs, 120k values per worker; hosts have a send buffer of 8 frames (workers
 * wait for room, like a blocking socket), 128 slots (the window) per tree,
 * initial retransmission timeout 1 ms, flush after 300 us.
 *
 * The plan is fixed here (an InArt plan the planner produced for this case:
 * half of the gradient to each PS; tree of h3 aggregated at l0 over s0, of h14
 * at s0 with h12 sent straight to h14), so that the figure does not move with
 * the planner.  In it PS h14's link is as loaded as a worker's (2 packets in
 * and 2 out per chunk), so every recovery packet there costs time.  The
 * simulator is deterministic: the ratio is a fixed number per seed;
 * test_goodput sweeps seeds 1-20 of this plan and of the planner's current
 * one and asserts the thresholds docs/dataplane.md states
 * (INART_GOODPUT_SEEDS=N runs seeds 1..N: the distribution the docs
 * report). */
static void goodput_plan(struct e2e *e)
{
	static const char *const fl[][4] = {
	    {"h0", "h3", "l0", "h0 l0"},   {"h1", "h3", "l0", "h1 l0"},
	    {"h2", "h3", "l0", "h2 l0"},   {"h0", "h14", "l0", "h0 l0"},
	    {"h1", "h14", "l0", "h1 l0"},  {"h2", "h14", "l0", "h2 l0"},
	    {"h4", "h3", "l1", "h4 l1"},   {"h5", "h3", "l1", "h5 l1"},
	    {"h4", "h14", "l1", "h4 l1"},  {"h5", "h14", "s0", "h5 l1 s0"},
	    {"h8", "h3", "l2", "h8 l2"},   {"h9", "h3", "l2", "h9 l2"},
	    {"h8", "h14", "l2", "h8 l2"},  {"h9", "h14", "s0", "h9 l2 s0"},
	    {"h12", "h3", "l3", "h12 l3"}, {"h12", "h14", "h14", "h12 l3 h14"},
	};
	static const char *const tr[][4] = {
	    {"l1", "h3", "s0", "l1 s0"},       {"l2", "h3", "s0", "l2 s0"},
	    {"l3", "h3", "s0", "l3 s0"},       {"s0", "h3", "l0", "s0 l0"},
	    {"l0", "h3", "h3", "l0 h3"},       {"l0", "h14", "s0", "l0 s0"},
	    {"l1", "h14", "s0", "l1 s0"},      {"l2", "h14", "s0", "l2 s0"},
	    {"s0", "h14", "h14", "s0 l3 h14"},
	};

	e->p = inart_plan_create(e->js, "hand");
	assert_non_null(e->p);
	e->p->jobs[0].split[0] = 0.5;
	e->p->jobs[0].split[1] = 0.5;
	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
		tu_flow(e->p, e->t, 0, fl[i][0], fl[i][1], fl[i][2], fl[i][3]);
	for (size_t i = 0; i < sizeof(tr) / sizeof(tr[0]); i++)
		tu_tree(e->p, e->t, 0, tr[i][0], tr[i][1], tr[i][2], tr[i][3]);
}

static double goodput_run(double loss, uint64_t seed, int planner, int verbose)
{
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct inart_gen_opt go;
	struct inart_err err;
	struct e2e e = {0};
	uint64_t retx;
	double t;

	inart_gen_opt_default(&go);
	go.trees = 4;
	go.host_gbps = 100;
	go.fabric_gbps = 400;
	e.t = inart_gen_leafspine(2, 4, 4, &go, &err);
	assert_non_null(e.t);
	e.js = inart_jobs_create();
	tu_job(e.js, e.t, "g", "h0 h1 h2 h4 h5 h8 h9 h12", "h3 h14", 4e8);
	assert_int_equal(inart_jobs_validate(e.js, e.t, &err), 0);
	if (planner)
		e2e_plan(&e, "inart");
	else
		goodput_plan(&e);
	inart_install_opt_default(&io);
	io.slots_per_tree = 128;
	io.retx_timeout_ns = 1000000;
	io.flush_timeout_ns = 300000;
	/* the default pacing, at the simulated network's rate scale (so.gbps_scale) */
	io.pace_scale *= 0.01;
	inart_sim_opt_default(&so);
	so.gbps_scale = 0.01;
	so.host_queue_pkts = 8;
	so.loss = loss;
	so.seed = seed;
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 120000, 61, 1.0f);
	e2e_run(&e, 1, 100000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	retx_total(&e, &retx);
	t = e.r.time_s;
	if (verbose)
		print_message(
		    "goodput: loss %.1f%% seed %llu: %.3f ms simulated, %llu frames lost, "
		    "%llu retransmissions\n",
		    loss * 100, (unsigned long long)seed, t * 1e3,
		    (unsigned long long)all_links(&e, 0), (unsigned long long)retx);
	e2e_down(&e);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Precision comes back at once (issue 7): the scale of a step depends on
 * that step's values only.  Step 1 holds values near FLT_MAX (summed at a
 * very low scale); step 2's ordinary values are all summed at scale 16, so
 * exact to the usual bound.  Before the fix step 2 started at the scale
 * step 1's results allowed and returned about a third of its values as 0. */
static void test_precision_recovers(void **state)
{
	struct e2e e = {0};

	(void)state;
	multilevel(&e);
	e2e_up(&e, NULL, NULL);
	e2e_inputs(&e, 5000, 71, 1.0f);
	for (int k = 0; k < e.in->n_workers; k++)
		for (size_t i = 0; i < e.n; i += 97)
			e.x[k][i] = (k % 2 ? -1 : 1) * 3.0e38f / (float)e.in->n_workers;
	e2e_run(&e, 1, 1000000000ull);
	assert_true(e2e_check(&e, 16) > 0); /* rescaled a long way down */
	e2e_inputs(&e, 5000, 72, 1.0f);
	e2e_run(&e, 2, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	e2e_down(&e);
}

/* A PS that loses its state mid-all-reduce (a restart: it comes back with the
 * same trees) and drops what reaches it while down: the workers' recovery
 * rebuilds every chunk from their contributions and the all-reduce ends
 * exact; the next one too. */
static void test_ps_restart(void **state)
{
	struct install_opt_pair {
		struct inart_install_opt io;
		struct inart_sim_opt so;
	} o;
	struct e2e e = {0};
	double t0;

	(void)state;
	fault_opts(&o.io, &o.so, 0, 0, 0, 81);
	multilevel_skewed(&e);
	e2e_up(&e, &o.io, &o.so);
	e2e_inputs(&e, 20000, 81, 1.0f);
	t0 = e2e_run(&e, 1, 1000000000ull);
	e2e_check(&e, 16);
	e2e_inputs(&e, 20000, 82, 1.0f);
	assert_int_equal(inart_sim_fail_node(e.s, tu_find(e.t, "h4"),
					     inart_sim_now(e.s) + (uint64_t)(t0 * 1e9 / 2), 20000),
			 0);
	e2e_run(&e, 2, 10000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	print_message("PS h4 restarted mid-all-reduce: %.1f us instead of %.1f us\n",
		      e.r.time_s * 1e6, t0 * 1e6);
	e2e_inputs(&e, 20000, 83, 1.0f);
	e2e_run(&e, 3, 1000000000ull);
	assert_int_equal(e2e_check(&e, 16), 0);
	e2e_down(&e);
}

struct sweep {
	double mean, p10, worst;
	int below;
};

/* The goodput ratio over seeds 1..n for the fixed plan (planner 0) or the
 * planner's (1): mean, 10th percentile (nearest rank), worst, how many below
 * the 80% target, and the seeds below it. */
static struct sweep goodput_sweep(int n, int planner)
{
	double t0 = goodput_run(0, 1, planner, 0), sum = 0, *r = malloc((size_t)n * sizeof(*r));
	int below = 0, p10 = (n + 9) / 10 - 1;
	char low[512] = "";
	struct sweep sw;

	assert_non_null(r);
	for (int k = 0; k < n; k++) {
		r[k] = t0 / goodput_run(0.01, (uint64_t)k + 1, planner, 0);
		sum += r[k];
		if (r[k] < 0.8) {
			below++;
			if (strlen(low) < sizeof(low) - 16)
				snprintf(low + strlen(low), sizeof(low) - strlen(low),
					 " %d (%.1f%%)", k + 1, 100 * r[k]);
		}
		if (getenv("INART_GOODPUT_VERBOSE"))
			print_message("  seed %d: %.1f%%\n", k + 1, 100 * r[k]);
	}
	qsort(r, (size_t)n, sizeof(*r), cmp_double);
	sw.mean = sum / n;
	sw.p10 = r[p10];
	sw.worst = r[0];
	sw.below = below;
	print_message("goodput with 1%% loss, %s plan, seeds 1-%d: mean %.1f%%, 10th percentile "
		      "%.1f%%, worst %.1f%%, %d below 80%%%s%s\n",
		      planner ? "the planner's" : "the fixed", n, 100 * sw.mean, 100 * sw.p10,
		      100 * sw.worst, below, below ? ":" : "", low);
	free(r);
	return sw;
}

/* The goodput at 1% loss against none, on both plans, over seeds 1-20 (a
 * shortened sweep; about 0.1 s of CPU per run): the suite asserts the
 * thresholds docs/dataplane.md states -- mean at least 85%, 10th percentile
 * (the 2nd worst of 20) at least 80% (the target), and seed 1 of the
 * fixed plan at least 80%.  INART_GOODPUT_SEEDS=N sweeps seeds 1..N instead
 * (INART_GOODPUT_VERBOSE=1 prints every seed). */
static void test_goodput(void **state)
{
	const char *env = getenv("INART_GOODPUT_SEEDS");
	int n = env && atoi(env) > 0 ? atoi(env) : 20;
	double t0, t1, ratio;

	(void)state;
	t0 = goodput_run(0, 1, 0, 1);
	t1 = goodput_run(0.01, 1, 0, 1);
	/* the loss-free run is near the host links' bound: 336 chunks of
	 * 1466 wire bytes per worker at 1 Gbit/s = 3.94 ms */
	assert_true(t0 < 3.94e-3 / 0.9);
	ratio = t0 / t1;
	print_message("goodput with 1%% loss: %.1f%% of the loss-free goodput (target 80%%)\n",
		      ratio * 100);
	assert_true(ratio >= 0.8);
	for (int planner = 0; planner <= 1; planner++) {
		struct sweep sw = goodput_sweep(n, planner);

		assert_true(sw.mean >= 0.85);
		assert_true(sw.p10 >= 0.8);
	}
}

static double scaled_run_full(const char *algo, int window, double pace, size_t n,
			      double stall_every_ms, double stall_ms, double link);

/* The emulator's scaled network (docs/emulator.md, "The data plane's
 * settings on a scaled network"): the default scenario's k=4 fat-tree
 * without background, its two jobs, 20 Mbit/s for the fastest link, deep
 * lossless queues, the emulator's timeout and partial flush for it (193.8
 * ms), a window of `window` chunks, workers paced at pace x their plan
 * rates (0: not paced); n values per worker, 3 iterations.  Returns the
 * third iteration's simulated time over the prediction (evaluator x header
 * factor); every iteration must finish within 20x the prediction and the
 * last one exact.  With stall_every_ms > 0: every stall_every_ms of
 * simulated time a node drawn at random (seeded) stalls for up to stall_ms
 * (a process starved of CPU: its frames and timers wait), as
 * window_sim's WSTALL. */
static double scaled_run(const char *algo, int window, double pace, size_t n)
{
	return scaled_run_full(algo, window, pace, n, 0, 0, 1);
}

static double scaled_run_stalls(const char *algo, int window, double pace, size_t n,
				double stall_every_ms, double stall_ms)
{
	return scaled_run_full(algo, window, pace, n, stall_every_ms, stall_ms, 1);
}

/* window 0: the installation's default; pace < 0: the installation's
 * default pacing factor; link: the links run at link x the plan's
 * capacities (a prediction too optimistic when below 1), the ratio is to
 * the prediction for the links as they are. */
static double scaled_run_full(const char *algo, int window, double pace, size_t n,
			      double stall_every_ms, double stall_ms, double link)
{
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct inart_err err = {{0}};
	struct e2e e = {0};
	double fast = 0, pred,
	       f = (INART_PKT_UDP_HLEN + (double)inart_wire_hdr_len(1) +
		    4.0 * inart_wire_max_values(1)) /
		   (4.0 * inart_wire_max_values(1));
	uint64_t retx = 193800000ull;

	if (inart_scenario_build("default", 1, &e.t, &e.js, &err) < 0)
		fail_msg("scenario: %s", err.msg);
	for (int a = 0; a < inart_topo_n_arcs(e.t); a++) {
		e.t->arcs[a].bg_gbps = 0;
		fast = e.t->arcs[a].gbps > fast ? e.t->arcs[a].gbps : fast;
	}
	for (int j = 0; j < e.js->n_jobs; j++)
		e.js->jobs[j].gradient_bytes = 4.0 * (double)n;
	e2e_plan(&e, algo);
	assert_int_equal(inart_evaluate(e.t, e.js, e.p, &err), 0);
	pred = e.p->comm_time_s * (fast * 1e3 / 20) * f;
	pred /= link;
	inart_install_opt_default(&io);
	if (window > 0)
		io.slots_per_tree = (uint16_t)window;
	io.retx_timeout_ns = io.flush_timeout_ns = retx;
	io.pace_scale = (pace >= 0 ? pace : io.pace_scale) * 20 / (fast * 1e3);
	inart_sim_opt_default(&so);
	so.gbps_scale = link * 20 / (fast * 1e3);
	so.overhead_bytes = 0;
	so.queue_pkts = 100000;
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, n, 7, 4.0f);
	if (stall_every_ms > 0) {
		struct inart_rng r;

		inart_rng_seed(&r, 5);
		for (double at = stall_every_ms; at < 60e3; at += stall_every_ms)
			assert_int_equal(
			    inart_sim_stall_node(e.s, (int)(inart_rng_unit(&r) * e.t->n_nodes),
						 (uint64_t)(at * 1e6),
						 (uint64_t)(inart_rng_unit(&r) * stall_ms * 1e6)),
			    0);
	}
	for (uint32_t k = 1; k <= 3; k++)
		e2e_run(&e, k, inart_sim_now(e.s) + (uint64_t)(20 * pred * 1e9));
	e2e_check(&e, -1);
	pred = e.r.time_s / pred;
	print_message("%s, window %d, pace %.2f, %zu values, stalls %g/%g ms, links %.2f: %.3f "
		      "x the prediction\n",
		      algo, window, pace, n, stall_every_ms, stall_ms, link, pred);
	e2e_down(&e);
	return pred;
}

/* Window-limited streams through shaped FIFO queues (issue 12).  atp with a
 * window of 8 was a livelock (104x its prediction at 20000 values, hundreds
 * of thousands of probes and resends at 200000 with a window of 4, no
 * frame lost): idle probes of a stuck window went out half the smallest
 * time to result after the last result, found contributions only queued
 * and had them resent.  Unpaced InArt was 1.53x at 200000 values, paced at
 * its plan rates it is within 5% (window_sim has the figures). */
static void test_window_limited(void **state)
{
	(void)state;
	assert_true(scaled_run("atp", 8, 0, 20000) < 1.5);
	assert_true(scaled_run("atp", 4, 0, 200000) < 1.5);
	assert_true(scaled_run("inart", 16, 0, 200000) < 1.3);
	assert_true(scaled_run("inart", 16, 1.05, 200000) < 1.05);
}

/* The installation's defaults (a window of 64, paced at
 * INART_INSTALL_PACE_DEFAULT x the plan rates) on the scaled network.
 * Unpaced, the default before, InArt took 49.6x its prediction and byteps
 * 166x at 200000 values in window_sim (every resend of values only queued,
 * no frame lost: a recovery storm; with this test's inputs InArt 1.35x);
 * and pacing must not make things much worse when
 * the plan is too optimistic (the links 20% slower than it assumed: paced
 * at 1.375x what they carry). */
static void test_default_paced(void **state)
{
	(void)state;
	assert_true(scaled_run("inart", 0, -1, 200000) < 1.05);
	assert_true(scaled_run("byteps", 0, -1, 200000) < 1.1);
	assert_true(scaled_run_full("inart", 0, -1, 200000, 0, 0, 0.8) < 1.05);
	assert_true(scaled_run_full("byteps", 0, -1, 200000, 0, 0, 0.8) < 1.15);
}

/* The same network with processes starved of CPU (every 20 ms a node drawn
 * at random stalls for up to 50 or 100 ms: its frames and timers wait), as
 * on the busy machine where emulated runs turned into recovery storms:
 * paced atp and byteps never finished (a million probes, the PS's link full
 * of whole results answering them) before probes and resends were paced
 * with the data.  Slower, but they finish, exact. */
static void test_stalls(void **state)
{
	(void)state;
	assert_true(scaled_run_stalls("atp", 16, 1.05, 200000, 20, 50) < 5);
	assert_true(scaled_run_stalls("byteps", 16, 1.05, 200000, 20, 100) < 5);
	assert_true(scaled_run_stalls("inart", 16, 1.05, 200000, 20, 50) < 5);
}

/* Workers that start all-reduces apart (a DDP backward ends at different
 * times on each rank; docs/dataplane.md, Skewed start): tiny on links
 * scaled to a thousandth, paced as installed, 100000 values (a window of
 * 64 chunks is 8 ms of a link).  One worker starts 12 ms after the other,
 * then 30 ms, alternately.  The early one's window fills and waits for the
 * late one's values at e0.  Once a worker has seen its peer start that
 * late (its first all-reduce as the early one at that skew, which may
 * resend values: its probes find p's PS without the values e0 holds), it
 * must send nothing again (no value is lost) and finish as the late one
 * does.  Before idle probing waited for the tree's lag, the 30 ms starts
 * had 0-2 values resent each here (6-20 per all-reduce of 85002 values on
 * the rack of examples/ddp_digits.py at 100 Mbit/s, starts 8-30 ms apart). */
static void test_skewed_start(void **state)
{
	static const double skew_ms[] = {12, 12, 12, 12, 30, 30, 30, 30};
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct e2e e = {0};
	double base;
	uint64_t retx, before = 0;

	(void)state;
	tiny(&e);
	inart_install_opt_default(&io);
	io.pace_scale *= 1e-3;
	inart_sim_opt_default(&so);
	so.gbps_scale = 1e-3;
	e2e_up(&e, &io, &so);
	e2e_inputs(&e, 100000, 11, 4.0f);
	base = e2e_run(&e, 1, inart_sim_now(e.s) + 2000000000ull);
	e2e_check(&e, -1);
	for (uint32_t k = 0; k < sizeof(skew_ms) / sizeof(skew_ms[0]); k++) {
		double t;

		assert_int_equal(inart_sim_stall_node(e.s, e.in->workers[k % 2].node,
						      inart_sim_now(e.s),
						      (uint64_t)(skew_ms[k] * 1e6)),
				 0);
		t = e2e_run(&e, k + 2, inart_sim_now(e.s) + 2000000000ull);
		e2e_check(&e, -1);
		retx_total(&e, &retx);
		print_message("skewed start %.0f ms: %.3f ms (%.3f ms without), %llu resent\n",
			      skew_ms[k], t * 1e3, base * 1e3, (unsigned long long)(retx - before));
		/* each worker has been the early one at this skew */
		if (k >= 2 && skew_ms[k - 2] == skew_ms[k])
			assert_int_equal(retx, before);
		assert_true(t <= skew_ms[k] * 1e-3 + 1.1 * base);
		before = retx;
	}
	e2e_down(&e);
}

static void epoch0(struct inart_install *in)
{
	assert_int_equal(inart_epoch_apply(in, 0, NULL), 0);
}

/* Labels of switch node v in service. */
static int sw_labels(struct e2e *e, int v)
{
	return inart_switch_get_labels(inart_sim_switch(e->s, v), NULL, 0);
}

/* An epoch switch in the middle of a run (issue 10), under 1% loss, 0.5%
 * duplication and 2% reordering on every link: the inart plan (epoch 0)
 * for iterations 1-2, atp's (epoch 1) for 3-6.  The tables of both epochs
 * go in side by side a quarter into iteration 2 (while epoch 0 carries
 * it; a quarter of the previous iteration's time, since iteration 1 warms
 * up and can be the slower), the workers move at the boundary 2 -> 3,
 * epoch 0's tables go a quarter into iteration 4.  The label count of
 * iteration 2 checks that the change happened during it.  Every iteration completes once, with no
 * step notice, and every result is exact (each iteration sums other inputs, so a result of a lost
 * or repeated iteration would be wrong). */
static void test_epoch_switch(void **state)
{
	struct inart_install_opt io;
	struct inart_sim_opt so;
	struct inart_err err = {{0}};
	struct inart_install *nb = NULL, *u = NULL;
	struct inart_plan *pb = NULL;
	struct inart_planner_opt po = {.size = sizeof(po)};
	struct e2e e = {0};
	struct inart_err why = {{0}};
	double t = 0;

	(void)state;
	fault_opts(&io, &so, 0.01, 0.005, 0.02, 91);
	fattree_jobs(&e, 0);
	e2e_plan(&e, "inart");
	e.edit = epoch0;
	e2e_up(&e, &io, &so);
	inart_planner_opt_default(&po);
	assert_int_equal(inart_planner_run("atp", e.t, e.js, &po, &pb, &err), 0);
	assert_int_equal(inart_install_build(e.t, e.js, pb, e.d, &io, &nb, &err), 0);
	assert_int_equal(inart_epoch_apply(nb, 1, &err), 0);
	assert_int_equal(inart_epoch_union(e.in, nb, &u, &err), 0);
	for (uint32_t it = 1; it <= 6; it++) {
		e2e_inputs(&e, 20000, 900 + it, 1.0f);
		if (it == 2 || it == 4) /* both epochs, then the new one alone */
			assert_int_equal(
			    inart_sim_tables_at(e.s, it == 2 ? u : nb,
						inart_sim_now(e.s) + (uint64_t)(t * 1e9 / 4)),
			    0);
		t = e2e_run(&e, it, 10000000000ull);
		assert_int_equal(e.r.stale, 0);
		e2e_check(&e, -1);
		assert_int_equal(inart_sim_tables_failed(e.s, &why), 0);
		if (it == 2) {
			/* both epochs were in service: more labels than either alone */
			int v = e.in->sw[0].node;
			const struct inart_sw_install *n1 = inart_install_sw_of(nb, v);

			assert_non_null(n1);
			assert_true(n1->n_labels > 0);
			assert_int_equal(sw_labels(&e, v), e.in->sw[0].n_labels + n1->n_labels);
			if (inart_sim_set_workers(e.s, nb, &why) < 0)
				fail_msg("set workers: %s", why.msg);
		}
	}
	/* epoch 0 is gone: every switch holds epoch 1's labels, PSs its trees */
	for (int k = 0; k < nb->n_switches; k++)
		assert_int_equal(sw_labels(&e, nb->sw[k].node), nb->sw[k].n_labels);
	for (int v = 0; v < e.t->n_nodes; v++) {
		const struct inart_ps *ps = inart_sim_ps(e.s, v);
		const struct inart_ps_install *pi = inart_install_ps_of(nb, v);
		int want = pi ? pi->n_trees : 0;

		assert_int_equal(ps ? inart_ps_n_trees(ps) : 0, want);
	}
	assert_true(all_links(&e, 0) > 0 && all_links(&e, 2) > 0);
	print_message("epoch switch inart -> atp under loss, dup and reordering: 6 exact "
		      "all-reduces, lost %llu reordered %llu frames\n",
		      (unsigned long long)all_links(&e, 0), (unsigned long long)all_links(&e, 2));
	inart_epoch_union_destroy(u);
	inart_install_destroy(nb);
	inart_plan_destroy(pb);
	e2e_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_workers),
	    cmocka_unit_test(test_one_worker),
	    cmocka_unit_test(test_multilevel),
	    cmocka_unit_test(test_planners_8_workers),
	    cmocka_unit_test(test_two_jobs),
	    cmocka_unit_test(test_64_workers),
	    cmocka_unit_test(test_loss),
	    cmocka_unit_test(test_dup_reorder),
	    cmocka_unit_test(test_all_faults),
	    cmocka_unit_test(test_pool_exhaustion),
	    cmocka_unit_test(test_switch_failure),
	    cmocka_unit_test(test_overflow),
	    cmocka_unit_test(test_precision_recovers),
	    cmocka_unit_test(test_ps_restart),
	    cmocka_unit_test(test_epoch_switch),
	    cmocka_unit_test(test_goodput),
	    cmocka_unit_test(test_window_limited),
	    cmocka_unit_test(test_default_paced),
	    cmocka_unit_test(test_stalls),
	    cmocka_unit_test(test_skewed_start),
	    cmocka_unit_test(test_sharded_switches),
	    cmocka_unit_test(test_sharded_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
