/* Tests of phase 1 (split): hand-computed optima on tiny topologies, error
 * cases, and seeded random instances cross-checked against the exact LP and an
 * independent load computation. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/rng.h"
#include "cp/model/evaluate.h"
#include "cp/model/paths.h"
#include "cp/planner/split.h"

/* ---- helpers --------------------------------------------------------------- */

/* |a - b| <= tol (cmocka 1.1 has no assert_double_equal). */
#define assert_near(a, b, tol)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b), t_ = (tol);                                             \
		if (!(fabs(a_ - b_) <= t_))                                                        \
			fail_msg("%s = %.12g, expected %.12g (tol %.3g)", #a, a_, b_, t_);         \
	} while (0)

static int node(struct inart_topo *t, const char *id, int sw, double agg)
{
	int v = inart_topo_add_node(t, id, sw ? INART_NODE_SWITCH : INART_NODE_HOST, agg > 0, agg,
				    agg > 0 ? 1000 : 0, NULL);

	assert_true(v >= 0);
	return v;
}

static void link2(struct inart_topo *t, int a, int b, double gbps, double bg_ab, double bg_ba)
{
	assert_true(inart_topo_add_link(t, a, b, gbps, gbps, bg_ab, bg_ba, NULL) >= 0);
}

static void add_flow(struct inart_plan *p, int j, int w, int ps, int agg, int n, ...)
{
	int path[32];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		path[i] = va_arg(ap, int);
	va_end(ap);
	assert_int_equal(inart_plan_add_flow(p, j, w, ps, agg, path, n), 0);
}

static void add_tree(struct inart_plan *p, int j, int sw, int ps, int parent, int n, ...)
{
	int path[32];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		path[i] = va_arg(ap, int);
	va_end(ap);
	assert_int_equal(inart_plan_add_tree(p, j, sw, ps, parent, path, n), 0);
}

/* Independent implementation of the load model of evaluate.h: comm time of
 * the plan's current split (max over arcs of push+pull / residual and over
 * INA switches of aggregation input / throughput). */
static double comm_time(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *p)
{
	int na = inart_topo_n_arcs(t);
	double *arc = calloc((size_t)na, sizeof(double));
	double *agg = calloc((size_t)t->n_nodes, sizeof(double)), tmax = 0;

	assert_non_null(arc);
	assert_non_null(agg);
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];
		const struct inart_job_plan *jp = &p->jobs[j];
		double g = job->gradient_bytes * 8 / 1e9;

		for (int i = 0; i < jp->n_flows + jp->n_trees; i++) {
			int ps, end, n, *path;
			double a;

			if (i < jp->n_flows) {
				ps = jp->flows[i].ps;
				end = jp->flows[i].agg;
				n = jp->flows[i].n_path;
				path = jp->flows[i].path;
			} else {
				ps = jp->trees[i - jp->n_flows].ps;
				end = jp->trees[i - jp->n_flows].parent;
				n = jp->trees[i - jp->n_flows].n_path;
				path = jp->trees[i - jp->n_flows].path;
			}
			a = jp->split[inart_job_ps_index(job, ps)] * g;
			for (int k = 0; k + 1 < n; k++) {
				int e = inart_topo_arc_between(t, path[k], path[k + 1]);

				assert_true(e >= 0);
				arc[e] += a;	 /* push */
				arc[e ^ 1] += a; /* pull, reversed */
			}
			if (end != ps)
				agg[end] += a;
		}
	}
	for (int e = 0; e < na; e++)
		if (arc[e] > 0)
			tmax = fmax(tmax, arc[e] / inart_arc_residual(&t->arcs[e]));
	for (int v = 0; v < t->n_nodes; v++)
		if (agg[v] > 0)
			tmax = fmax(tmax, agg[v] / t->nodes[v].agg_gbps);
	free(arc);
	free(agg);
	return tmax;
}

struct fixture {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
};

static void fixture_free(struct fixture *f)
{
	inart_plan_destroy(f->p);
	inart_jobs_destroy(f->js);
	inart_topo_destroy(f->t);
}

/* The phase-1 load model (inart_split_loads) and the returned T against the
 * evaluator, for the plan's current split. */
static void check_evaluator(struct fixture *f, double t_expect, const char *what)
{
	struct inart_evaluator *ev = inart_evaluator_create(f->t, f->js);
	int na = inart_topo_n_arcs(f->t);
	double *arc = malloc(sizeof(double) * (size_t)na);
	double *node = malloc(sizeof(double) * (size_t)f->t->n_nodes);
	struct inart_err err = {{0}};
	struct inart_eval out;

	assert_non_null(ev);
	assert_non_null(arc);
	assert_non_null(node);
	if (inart_evaluator_run(ev, f->p, &out, &err) != 0)
		fail_msg("%s: evaluator: %s", what, err.msg);
	assert_near(out.comm_time_s, t_expect, 1e-9 * t_expect);
	assert_int_equal(inart_split_loads(f->t, f->js, f->p, arc, node, &err), 0);
	for (int e = 0; e < na; e++)
		assert_near(arc[e], out.arc_push_gbit[e] + out.arc_pull_gbit[e],
			    1e-9 * (1 + arc[e]));
	for (int v = 0; v < f->t->n_nodes; v++)
		assert_near(node[v], out.node_agg_gbit[v], 1e-9 * (1 + node[v]));
	free(arc);
	free(node);
	inart_evaluator_destroy(ev);
}

/* Run both solvers; check both against the expected optimum (and shares if
 * given), the Lagrangian's bounds, and the independent load model. */
static void check_opt(struct fixture *f, double t_expect, int j, const double *share)
{
	struct inart_split_result res;
	struct inart_err err = {{0}};
	double t_exact = -1;
	int rc;

	rc = inart_split_exact(f->t, f->js, f->p, &t_exact, &err);
	assert_int_equal(rc, 0);
	assert_near(t_exact, t_expect, 1e-7 * t_expect);
	assert_near(comm_time(f->t, f->js, f->p), t_expect, 1e-7 * t_expect);
	if (share != NULL)
		for (int i = 0; i < f->p->jobs[j].n_ps; i++)
			assert_near(f->p->jobs[j].split[i], share[i], 1e-6);

	for (int i = 0; i < f->p->jobs[j].n_ps; i++)
		f->p->jobs[j].split[i] = -1;
	rc = inart_split_optimize(f->t, f->js, f->p, NULL, &res, &err);
	assert_int_equal(rc, 0);
	assert_true(res.dual_s <= t_expect * (1 + 1e-9));
	assert_true(res.primal_s >= t_expect * (1 - 1e-9));
	assert_true(res.gap <= 1e-4);
	assert_true(res.primal_s <= t_expect * (1 + 1e-4));
	assert_near(comm_time(f->t, f->js, f->p), res.primal_s, 1e-9 * res.primal_s);
	check_evaluator(f, res.primal_s, "hand case");
	if (share != NULL)
		for (int i = 0; i < f->p->jobs[j].n_ps; i++)
			assert_near(f->p->jobs[j].split[i], share[i], 2e-3);
}

/* Star: switch s (INA with agg_gbps if agg > 0), workers w0.. on 100G links,
 * PSs p0.. on links of the given capacities/background (both directions). */
static void star(struct fixture *f, int n_workers, int n_ps, const double *ps_gbps,
		 const double *ps_bg, double agg, int *s, int *w, int *ps)
{
	char id[16];

	f->t = inart_topo_create();
	assert_non_null(f->t);
	*s = node(f->t, "s", 1, agg);
	for (int i = 0; i < n_workers; i++) {
		snprintf(id, sizeof(id), "w%d", i);
		w[i] = node(f->t, id, 0, 0);
		link2(f->t, w[i], *s, 100, 0, 0);
	}
	for (int i = 0; i < n_ps; i++) {
		snprintf(id, sizeof(id), "p%d", i);
		ps[i] = node(f->t, id, 0, 0);
		link2(f->t, ps[i], *s, ps_gbps[i], ps_bg ? ps_bg[i] : 0, ps_bg ? ps_bg[i] : 0);
	}
	assert_int_equal(inart_topo_finalize(f->t, NULL), 0);
	f->js = inart_jobs_create();
	assert_non_null(f->js);
}

/* Job over the star with flows worker -> s -> PS, no INA. */
static void star_job(struct fixture *f, const char *id, const int *w, int nw, const int *ps, int np,
		     double gbit, int s)
{
	int j = inart_jobs_add(f->js, id, w, nw, ps, np, gbit * 1e9 / 8, NULL, NULL);

	assert_true(j >= 0);
	(void)s;
}

static void star_flows(struct fixture *f, int j, int s)
{
	const struct inart_job *job = &f->js->jobs[j];

	for (int a = 0; a < job->n_workers; a++)
		for (int b = 0; b < job->n_ps; b++)
			add_flow(f->p, j, job->workers[a], job->ps[b], job->ps[b], 3,
				 job->workers[a], s, job->ps[b]);
}

/* Two workers and two PSs (links cap, background bg) on the star, one job
 * j0 of 10 Gbit with flows worker -> s -> PS: check_opt(t_expect, share). */
static void star_2x2(const double *cap, const double *bg, double t_expect, const double *share)
{
	struct fixture f = {0};
	int s, w[2], ps[2];

	star(&f, 2, 2, cap, bg, 0, &s, w, ps);
	star_job(&f, "j0", w, 2, ps, 2, 10, s);
	f.p = inart_plan_create(f.js, "test");
	star_flows(&f, 0, s);
	check_opt(&f, t_expect, 0, share);
	fixture_free(&f);
}

/* ---- hand-computed cases --------------------------------------------------- */

/* Two PSs behind equal 10G links, two workers, G = 10 Gbit: each PS link
 * carries 2 a_p G each way, so a = 0.5/0.5 and T = 2 * 0.5 * 10 / 10 = 1 s. */
static void test_symmetric(void **state)
{
	double cap[] = {10, 10}, share[] = {0.5, 0.5};

	(void)state;
	star_2x2(cap, NULL, 1.0, share);
}

/* PS links of 10G and 20G: 2 a0 G / 10 = 2 a1 G / 20 -> a = 1/3, 2/3, and
 * T = 2 * (1/3) * 10 / 10 = 2/3 s. */
static void test_half_capacity(void **state)
{
	double cap[] = {10, 20}, share[] = {1.0 / 3, 2.0 / 3};

	(void)state;
	star_2x2(cap, NULL, 2.0 / 3, share);
}

/* Background: PS links 30G with 20G background (residual 10) and 20G: the
 * same 1/3, 2/3 split and T = 2/3 as above. */
static void test_background(void **state)
{
	double cap[] = {30, 20}, bg[] = {20, 0}, share[] = {1.0 / 3, 2.0 / 3};

	(void)state;
	star_2x2(cap, bg, 2.0 / 3, share);
}

/* Aggregation-throughput bound: four workers, INA switch s with 20 Gbit/s of
 * aggregation throughput, 100G links everywhere, G = 10 Gbit.  PS p0 is
 * served by aggregation at s (input 4 a0 G, one stream to p0), p1 without
 * INA (4 a1 G on s->p1).  max(40 a0 / 20, 40 a1 / 100, 10/100) is minimal at
 * 2 a0 = 0.4 (1 - a0): a0 = 1/6, T = 1/3 s. */
static void test_agg_throughput(void **state)
{
	struct fixture f = {0};
	double cap[] = {100, 100}, share[] = {1.0 / 6, 5.0 / 6};
	int s, w[4], ps[2];

	star(&f, 4, 2, cap, NULL, 20, &s, w, ps);
	star_job(&f, "j0", w, 4, ps, 2, 10, s);
	f.p = inart_plan_create(f.js, "test");
	for (int i = 0; i < 4; i++) {
		add_flow(f.p, 0, w[i], ps[0], s, 2, w[i], s);
		add_flow(f.p, 0, w[i], ps[1], ps[1], 3, w[i], s, ps[1]);
	}
	add_tree(f.p, 0, s, ps[0], ps[0], 2, s, ps[0]);
	check_opt(&f, 1.0 / 3, 0, share);
	fixture_free(&f);
}

/* Two jobs share PS p1's 10G link: job A (w0, w1; PSs p0, p1; G = 10) and job B
 * (w2; PS p1 only; G = 10, share 1).  max(2 a0 G, 2 a1 G + G) / 10 is minimal
 * at 2 a0 = 2 (1 - a0) + 1: a0 = 3/4, T = 1.5 s. */
static void test_two_jobs(void **state)
{
	struct fixture f = {0};
	double cap[] = {10, 10}, share[] = {0.75, 0.25};
	int s, w[3], ps[2];

	star(&f, 3, 2, cap, NULL, 0, &s, w, ps);
	star_job(&f, "A", w, 2, ps, 2, 10, s);
	star_job(&f, "B", w + 2, 1, ps + 1, 1, 10, s);
	f.p = inart_plan_create(f.js, "test");
	star_flows(&f, 0, s);
	star_flows(&f, 1, s);
	check_opt(&f, 1.5, 0, share);
	assert_near(f.p->jobs[1].split[0], 1.0, 0);
	fixture_free(&f);
}

/* A missing (worker, PS) flow is an error naming the job and the PS. */
static void test_missing_flow(void **state)
{
	struct fixture f = {0};
	struct inart_split_result res;
	struct inart_err err = {{0}};
	double cap[] = {10, 10}, t;
	int s, w[2], ps[2];

	star(&f, 2, 2, cap, NULL, 0, &s, w, ps);
	star_job(&f, "jx", w, 2, ps, 2, 10, s);
	f.p = inart_plan_create(f.js, "test");
	add_flow(f.p, 0, w[0], ps[0], ps[0], 3, w[0], s, ps[0]);
	add_flow(f.p, 0, w[1], ps[0], ps[0], 3, w[1], s, ps[0]);
	add_flow(f.p, 0, w[0], ps[1], ps[1], 3, w[0], s, ps[1]);
	assert_int_equal(inart_split_optimize(f.t, f.js, f.p, NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "jx"));
	assert_non_null(strstr(err.msg, "p1"));
	assert_non_null(strstr(err.msg, "w1"));
	assert_int_equal(inart_split_exact(f.t, f.js, f.p, &t, NULL), -EINVAL);
	/* A broken path and aggregation at a non-INA switch are errors too. */
	add_flow(f.p, 0, w[1], ps[1], ps[1], 2, w[1], ps[1]);
	assert_int_equal(inart_split_optimize(f.t, f.js, f.p, NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "contiguous"));
	inart_plan_clear_routes(f.p, 0);
	star_flows(&f, 0, s);
	f.p->jobs[0].flows[0].agg = s;
	f.p->jobs[0].flows[0].n_path = 2;
	assert_int_equal(inart_split_optimize(f.t, f.js, f.p, NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not an INA switch"));
	fixture_free(&f);
}

/* ---- random instances ---------------------------------------------------- */

/* With probability p_ina, the position of a random INA switch strictly
 * inside path[0..n); otherwise, or if there is none, dflt. */
static int ina_cut(const struct fixture *f, struct inart_rng *rng, const int *path, int n,
		   double p_ina, int dflt)
{
	int m = 0, opts[256];

	if (inart_rng_unit(rng) >= p_ina)
		return dflt;
	for (int k = 1; k + 1 < n; k++)
		if (f->t->nodes[path[k]].ina)
			opts[m++] = k;
	return m > 0 ? opts[inart_rng_below(rng, (uint64_t)m)] : dflt;
}

/* Tree of (j, ps) at switch sw along path[0..n) (path[0] == sw, ends at ps),
 * unless one exists; with probability p_ina its parent is a further INA
 * switch on the path (a multi-level tree).  Along a shortest path the hop
 * distance to the PS strictly decreases, so parents form no cycle. */
static void ensure_tree(struct fixture *f, struct inart_rng *rng, int j, int ps, const int *path,
			int n, double p_ina)
{
	const struct inart_job_plan *jp = &f->p->jobs[j];
	int cut;

	for (int i = 0; i < jp->n_trees; i++)
		if (jp->trees[i].ps == ps && jp->trees[i].sw == path[0])
			return;
	cut = ina_cut(f, rng, path, n, p_ina, n - 1);
	assert_int_equal(inart_plan_add_tree(f->p, j, path[0], ps, path[cut], path, cut + 1), 0);
	if (cut < n - 1)
		ensure_tree(f, rng, j, ps, path + cut, n - cut, p_ina);
}

/* Every (worker, PS) flow follows a shortest path (ECMP-hashed); with
 * probability p_ina it aggregates at a random INA switch on it. */
static void random_plan(struct fixture *f, struct inart_rng *rng, double p_ina)
{
	struct inart_paths *pc = inart_paths_create(f->t);
	int path[256];

	assert_non_null(pc);
	f->p = inart_plan_create(f->js, "test");
	assert_non_null(f->p);
	for (int j = 0; j < f->js->n_jobs; j++) {
		const struct inart_job *job = &f->js->jobs[j];

		for (int b = 0; b < job->n_ps; b++)
			for (int a = 0; a < job->n_workers; a++) {
				int n = inart_paths_shortest(pc, job->workers[a], job->ps[b],
							     inart_rng_next(rng), path, 256);
				int cut;

				assert_true(n >= 2);
				cut = ina_cut(f, rng, path, n, p_ina, -1);
				if (cut < 0) {
					assert_int_equal(inart_plan_add_flow(f->p, j, path[0],
									     job->ps[b], job->ps[b],
									     path, n),
							 0);
					continue;
				}
				assert_int_equal(inart_plan_add_flow(f->p, j, path[0], job->ps[b],
								     path[cut], path, cut + 1),
						 0);
				ensure_tree(f, rng, j, job->ps[b], path + cut, n - cut, p_ina);
			}
	}
	inart_paths_destroy(pc);
}

/* Random jobs over the hosts [h0, h0 + nh): disjoint workers and PSs per job. */
static void random_jobs(struct fixture *f, struct inart_rng *rng, int h0, int nh, int n_jobs,
			int max_w, int min_p, int max_p)
{
	int *perm = malloc(sizeof(int) * (size_t)nh);
	char id[16];

	assert_non_null(perm);
	f->js = inart_jobs_create();
	assert_non_null(f->js);
	for (int j = 0; j < n_jobs; j++) {
		int nw = 1 + (int)inart_rng_below(rng, (uint64_t)max_w);
		int np = min_p + (int)inart_rng_below(rng, (uint64_t)(max_p - min_p + 1));

		if (nw + np > nh)
			nw = nh - np;
		for (int i = 0; i < nh; i++)
			perm[i] = h0 + i;
		for (int i = 0; i < nw + np; i++) {
			int k = i + (int)inart_rng_below(rng, (uint64_t)(nh - i)), x = perm[i];

			perm[i] = perm[k];
			perm[k] = x;
		}
		snprintf(id, sizeof(id), "j%d", j);
		assert_true(inart_jobs_add(f->js, id, perm, nw, perm + nw, np,
					   1e8 + 9e8 * inart_rng_unit(rng), NULL, NULL) >= 0);
	}
	free(perm);
}

/* Random connected topology: switches on a random tree plus extra links, some
 * INA-capable, hosts on random switches, assorted capacities and background. */
static void random_topo(struct fixture *f, struct inart_rng *rng, int *h0, int *nh)
{
	static const double caps[] = {10, 25, 40, 100};
	int ns = 3 + (int)inart_rng_below(rng, 6), extra = (int)inart_rng_below(rng, 6);
	char id[16], adj[8][8] = {{0}};

	f->t = inart_topo_create();
	assert_non_null(f->t);
	for (int i = 0; i < ns; i++) {
		int ina = inart_rng_unit(rng) < 0.6;

		snprintf(id, sizeof(id), "s%d", i);
		assert_int_equal(inart_topo_add_node(f->t, id, INART_NODE_SWITCH, ina,
						     ina ? 20 + 180 * inart_rng_unit(rng) : 0,
						     ina ? 100 : 0, NULL),
				 i);
	}
	for (int i = 1; i < ns + extra; i++) {
		int a = i < ns ? i : (int)inart_rng_below(rng, (uint64_t)ns);
		int b = (int)inart_rng_below(rng, (uint64_t)(i < ns ? i : ns));
		double c = caps[inart_rng_below(rng, 4)];

		if (a == b || adj[a][b])
			continue;
		adj[a][b] = adj[b][a] = 1;
		assert_true(inart_topo_add_link(
				f->t, a, b, c, c,
				inart_rng_unit(rng) < 0.3 ? 0.5 * c * inart_rng_unit(rng) : 0, 0,
				NULL) >= 0);
	}
	*h0 = ns;
	*nh = 6 + (int)inart_rng_below(rng, 9);
	for (int i = 0; i < *nh; i++) {
		double c = caps[inart_rng_below(rng, 4)];

		snprintf(id, sizeof(id), "h%d", i);
		assert_int_equal(inart_topo_add_node(f->t, id, INART_NODE_HOST, 0, 0, 0, NULL),
				 ns + i);
		assert_true(inart_topo_add_link(
				f->t, ns + i, (int)inart_rng_below(rng, (uint64_t)ns), c, c, 0,
				inart_rng_unit(rng) < 0.2 ? 0.3 * c * inart_rng_unit(rng) : 0,
				NULL) >= 0);
	}
	assert_int_equal(inart_topo_finalize(f->t, NULL), 0);
}

/* Lagrangian vs exact LP and the independent load model. */
static void cross_check(struct fixture *f, const char *what, int verbose)
{
	struct inart_split_result res;
	struct inart_err err = {{0}};
	struct timespec t0, t1;
	double t_exact, ms;
	int rc;

	rc = inart_split_exact(f->t, f->js, f->p, &t_exact, &err);
	if (rc != 0)
		fail_msg("%s: exact: %s", what, err.msg);
	assert_near(comm_time(f->t, f->js, f->p), t_exact, 1e-6 * t_exact);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct inart_split_opt so;
	inart_split_opt_default(&so);
	if (getenv("INART_SPLIT_TOL"))
		so.tol = atof(getenv("INART_SPLIT_TOL"));
	rc = inart_split_optimize(f->t, f->js, f->p, &so, &res, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (rc != 0)
		fail_msg("%s: optimize: %s", what, err.msg);
	if (verbose)
		printf("%s: exact %.9g primal %.9g dual %.9g gap %.3g iters %d (polish %d) %.1f "
		       "ms\n",
		       what, t_exact, res.primal_s, res.dual_s, res.gap, res.iters,
		       res.polish_iters, ms);
	if (!(res.dual_s <= t_exact * (1 + 1e-7) && t_exact <= res.primal_s * (1 + 1e-7) &&
	      res.primal_s <= t_exact * (1 + 1e-3)))
		fail_msg("%s: dual %.12g exact %.12g primal %.12g", what, res.dual_s, t_exact,
			 res.primal_s);
	assert_near(comm_time(f->t, f->js, f->p), res.primal_s, 1e-9 * res.primal_s);
	assert_near(res.gap, (res.primal_s - res.dual_s) / res.primal_s, 1e-9);
	check_evaluator(f, res.primal_s, what);
	for (int j = 0; j < f->p->n_jobs; j++) {
		double z = 0;

		for (int i = 0; i < f->p->jobs[j].n_ps; i++) {
			assert_true(f->p->jobs[j].split[i] >= 0);
			z += f->p->jobs[j].split[i];
		}
		assert_near(z, 1, 1e-12);
	}
}

/* Random small instances: 1-3 jobs with 1-5 workers and 1-4 PSs (family 0),
 * or 2-4 jobs with 2-6 PSs each and more INA (family 1). */
static void random_family(int family)
{
	const char *v = getenv("INART_SPLIT_VERBOSE"), *ns = getenv("INART_SPLIT_SEEDS");
	uint64_t n_seeds = ns ? strtoull(ns, NULL, 10) : 200;

	for (uint64_t seed = 1; seed <= n_seeds; seed++) {
		struct fixture f = {0};
		struct inart_rng rng;
		char what[32];
		int h0, nh;

		inart_rng_seed(&rng, seed);
		random_topo(&f, &rng, &h0, &nh);
		if (family == 0) {
			random_jobs(&f, &rng, h0, nh, 1 + (int)inart_rng_below(&rng, 3), 5, 1, 4);
			random_plan(&f, &rng, 0.5);
		} else {
			random_jobs(&f, &rng, h0, nh, 2 + (int)inart_rng_below(&rng, 3), 4, 2, 6);
			random_plan(&f, &rng, 0.8);
		}
		snprintf(what, sizeof(what), "family %d seed %llu", family,
			 (unsigned long long)seed);
		cross_check(&f, what, v != NULL);
		fixture_free(&f);
	}
}

static void test_random(void **state)
{
	random_family(0);
}

static void test_random_multi(void **state)
{
	random_family(1);
}

/* Fat-tree(k) by hand: hosts first (k/2 per edge switch), 100G everywhere,
 * INA at edge and aggregation switches. */
static struct inart_topo *fattree(int k, struct inart_rng *rng, double bg_frac)
{
	struct inart_topo *t = inart_topo_create();
	int h = k * k * k / 4, e0 = h, a0 = h + k * k / 2, c0 = h + k * k;
	char id[16];

	assert_non_null(t);
	for (int i = 0; i < h; i++) {
		snprintf(id, sizeof(id), "h%d", i);
		assert_int_equal(inart_topo_add_node(t, id, INART_NODE_HOST, 0, 0, 0, NULL), i);
	}
	for (int i = 0; i < k * k; i++) {
		snprintf(id, sizeof(id), "%c%d", i < k * k / 2 ? 'e' : 'a', i % (k * k / 2));
		assert_true(inart_topo_add_node(t, id, INART_NODE_SWITCH, 1, 400, 1000, NULL) >= 0);
	}
	for (int i = 0; i < k * k / 4; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		assert_true(inart_topo_add_node(t, id, INART_NODE_SWITCH, 0, 0, 0, NULL) >= 0);
	}
#define BG (inart_rng_unit(rng) < bg_frac ? 80 * inart_rng_unit(rng) : 0)
	for (int i = 0; i < h; i++)
		assert_true(inart_topo_add_link(t, i, e0 + i / (k / 2), 100, 100, 0, 0, NULL) >= 0);
	for (int p = 0; p < k; p++)
		for (int a = 0; a < k / 2; a++) {
			for (int e = 0; e < k / 2; e++)
				assert_true(inart_topo_add_link(t, e0 + p * k / 2 + e,
								a0 + p * k / 2 + a, 100, 100, BG,
								BG, NULL) >= 0);
			for (int c = 0; c < k / 2; c++)
				assert_true(inart_topo_add_link(t, a0 + p * k / 2 + a,
								c0 + a * k / 2 + c, 100, 100, BG,
								BG, NULL) >= 0);
		}
#undef BG
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	return t;
}

/* Fat-tree k, n_workers workers and np PSs per job split over nj jobs, ECMP
 * paths, INA on half the flows, background on a fifth of the fabric links.
 * Prints timing; checks the bounds against the exact LP. */
static void fattree_case(int k, int nj, int n_workers, int np, uint64_t seed)
{
	struct fixture f = {0};
	struct inart_rng rng;
	char what[64];
	int nh = k * k * k / 4, nw = n_workers / nj;
	int *perm = malloc(sizeof(int) * (size_t)nh);

	assert_non_null(perm);
	assert_true(nj * (nw + np) <= nh);
	inart_rng_seed(&rng, seed);
	f.t = fattree(k, &rng, 0.2);
	f.js = inart_jobs_create();
	assert_non_null(f.js);
	for (int i = 0; i < nh; i++)
		perm[i] = i;
	for (int i = 0; i < nh; i++) {
		int r = i + (int)inart_rng_below(&rng, (uint64_t)(nh - i)), x = perm[i];

		perm[i] = perm[r];
		perm[r] = x;
	}
	for (int j = 0; j < nj; j++) {
		char id[8];

		snprintf(id, sizeof(id), "j%d", j);
		assert_true(inart_jobs_add(f.js, id, perm + j * (nw + np), nw,
					   perm + j * (nw + np) + nw, np, (1 + j) * 1e8, NULL,
					   NULL) >= 0);
	}
	random_plan(&f, &rng, 0.5);
	snprintf(what, sizeof(what), "fat-tree k=%d, %d job(s), %d PSs", k, nj, np);
	cross_check(&f, what, 1);
	{
		/* All 3000 iterations (tol 0): stays finite and converges
		 * far.  The time is printed for information; the speed claim
		 * is a benchmark's (bench/cp_bench). */
		struct inart_split_opt so = {.max_iter = 3000, .tol = 0};
		struct inart_split_result res;
		struct timespec t0, t1;
		double ms;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(inart_split_optimize(f.t, f.js, f.p, &so, &res, NULL), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms =
		    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		printf("%s: 3000 iterations (polish %d): gap %.3g, %.1f ms\n", what,
		       res.polish_iters, res.gap, ms);
		assert_int_equal(res.iters, 3000);
		assert_true(res.gap >= 0 && res.gap <= 1e-6);
	}
	fixture_free(&f);
	free(perm);
}

/* Fat-tree k = 16 (1024 hosts), 256 workers, 8 PSs: one job, then four. */
static void test_fattree16(void **state)
{
	fattree_case(16, 1, 256, 8, 42);
	fattree_case(16, 4, 256, 8, 43);
	if (getenv("INART_SPLIT_BIG")) {
		fattree_case(32, 1, 1024, 16, 44);
		fattree_case(32, 4, 1024, 16, 45);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_symmetric),  cmocka_unit_test(test_half_capacity),
	    cmocka_unit_test(test_background), cmocka_unit_test(test_agg_throughput),
	    cmocka_unit_test(test_two_jobs),   cmocka_unit_test(test_missing_flow),
	    cmocka_unit_test(test_random),     cmocka_unit_test(test_random_multi),
	    cmocka_unit_test(test_fattree16),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
