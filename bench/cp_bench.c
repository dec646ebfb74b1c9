/*
 * cp_bench: the speed claims of control-plane modules that used to be
 * asserted in unit tests (tests/test_paths.c, tests/test_split.c keep the
 * functional checks; the speed lives here).  Not a test: it prints numbers
 * and PASS/MISS against each claim's limit.
 *
 *   cp_bench [--repeat N]      (each measurement N times, default 3; the
 *                               best is compared with the limit)
 *
 * Times are CPU seconds of the process (CLOCK_PROCESS_CPUTIME_ID; the code
 * measured is single-threaded), so other work on the machine does not
 * count; wall-clock seconds are printed beside them.
 *
 * Measurements:
 *   1. paths: fat-tree k=16 (1344 nodes): 4000 k-shortest (k=4) calls from
 *      random hosts towards 16 PS hosts, and 4000 ECMP shortest paths; limit
 *      5 s (was test_paths' test_speed_fattree16; well under a second when
 *      the machine is idle).
 *   2. split: fat-tree k=16, background on a fifth of the fabric arcs (up to
 *      80 of 100 Gbit/s), one job of 256 workers and 8 PSs on random hosts,
 *      every worker->PS flow on an ECMP shortest path, aggregated with
 *      probability 1/2 at a random INA switch on it (seed 42):
 *      inart_split_optimize for all 3000 iterations (tol 0); limit 5 s (was
 *      test_split's fattree_case, on the same kind of input).
 * Exit status: 0 all PASS, 1 a MISS or an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rng.h"
#include "cp/model/gen.h"
#include "cp/model/paths.h"
#include "cp/model/plan.h"
#include "cp/planner/split.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct timing {
	double cpu, wall;
};

static struct timing start(void)
{
	return (struct timing){clock_s(CLOCK_PROCESS_CPUTIME_ID), clock_s(CLOCK_MONOTONIC)};
}

static struct timing since(struct timing t0)
{
	struct timing t = start();

	return (struct timing){t.cpu - t0.cpu, t.wall - t0.wall};
}

/* One measurement of the paths workload; -1 on an error. */
static int paths_run(const struct inart_topo *t, struct timing *out)
{
	struct inart_paths *p = inart_paths_create(t);
	struct inart_pathset ps;
	struct inart_rng r;
	struct timing t0;
	int path[16], rc = 0;

	if (p == NULL)
		return -1;
	inart_pathset_init(&ps);
	inart_rng_seed(&r, 7);
	t0 = start();
	for (int i = 0; i < 4000 && rc == 0; i++) {
		int s = (int)inart_rng_below(&r, 1024);
		int d = (int)(inart_rng_below(&r, 16) * 64 + 1);

		inart_pathset_clear(&ps);
		if (inart_paths_k_shortest(p, s, d, 4, &ps) < 1 ||
		    inart_paths_shortest(p, s, d, (uint64_t)i, path, 16) < 1)
			rc = -1;
	}
	*out = since(t0);
	inart_pathset_free(&ps);
	inart_paths_destroy(p);
	return rc;
}

/* Background on a fifth of the fabric arcs (switch to switch), each up to
 * 80% of its capacity, so that the split matters. */
static void add_background(struct inart_topo *t, struct inart_rng *r)
{
	for (int e = 0; e < 2 * t->n_links; e++) {
		struct inart_arc *a = &t->arcs[e];

		if (t->nodes[a->from].kind == INART_NODE_SWITCH &&
		    t->nodes[a->to].kind == INART_NODE_SWITCH && inart_rng_unit(r) < 0.2)
			a->bg_gbps = 0.8 * a->gbps * inart_rng_unit(r);
	}
}

/* One job of 256 workers and 8 PSs on distinct random hosts of t (its first
 * 1024 nodes are the hosts); adds the background to t. */
static struct inart_jobs *random_job(struct inart_topo *t, struct inart_err *err)
{
	struct inart_jobs *js = inart_jobs_create();
	struct inart_rng r;
	int perm[1024];

	if (js == NULL)
		return NULL;
	inart_rng_seed(&r, 42);
	for (int i = 0; i < 1024; i++)
		perm[i] = i;
	for (int i = 0; i < 1024; i++) {
		int k = i + (int)inart_rng_below(&r, (uint64_t)(1024 - i)), x = perm[i];

		perm[i] = perm[k];
		perm[k] = x;
	}
	add_background(t, &r);
	if (inart_jobs_add(js, "j0", perm, 256, perm + 256, 8, 1e8, NULL, err) < 0 ||
	    inart_jobs_validate(js, t, err) < 0) {
		inart_jobs_destroy(js);
		return NULL;
	}
	return js;
}

/* A random plan for js: each (worker, PS) flow on an ECMP shortest path,
 * with probability 1/2 aggregated at a random INA switch of the path, whose
 * tree then follows the rest of the path to the PS.  NULL on failure. */
static struct inart_plan *random_routes(const struct inart_topo *t, const struct inart_jobs *js)
{
	struct inart_plan *p = inart_plan_create(js, "random");
	struct inart_paths *pc = inart_paths_create(t);
	const struct inart_job *job = &js->jobs[0];
	struct inart_rng r;
	int path[64], ok = p != NULL && pc != NULL;

	inart_rng_seed(&r, 42);
	for (int b = 0; ok && b < job->n_ps; b++) {
		char *has_tree = calloc((size_t)t->n_nodes, 1);

		ok = has_tree != NULL;
		for (int a = 0; ok && a < job->n_workers; a++) {
			int n = inart_paths_shortest(pc, job->workers[a], job->ps[b],
						     inart_rng_next(&r), path, 64);
			int cut = n - 1, ps = job->ps[b];

			if (inart_rng_unit(&r) < 0.5 && n > 2) {
				cut = 1 + (int)inart_rng_below(&r, (uint64_t)(n - 2));
				cut = t->nodes[path[cut]].ina ? cut : n - 1;
			}
			ok = n >= 2 &&
			     inart_plan_add_flow(p, 0, path[0], ps, path[cut], path, cut + 1) == 0;
			if (ok && cut < n - 1 && !has_tree[path[cut]]) {
				has_tree[path[cut]] = 1;
				ok = inart_plan_add_tree(p, 0, path[cut], ps, ps, path + cut,
							 n - cut) == 0;
			}
		}
		free(has_tree);
	}
	inart_paths_destroy(pc);
	if (!ok) {
		inart_plan_destroy(p);
		return NULL;
	}
	return p;
}

/* One measurement of 3000 split iterations; -1 on an error. */
static int split_run(const struct inart_topo *t, const struct inart_jobs *js,
		     const struct inart_plan *routes, struct timing *out, double *gap)
{
	struct inart_split_opt so = {.max_iter = 3000, .tol = 0};
	struct inart_split_result res;
	struct inart_err err = {{0}};
	struct inart_plan *p = inart_plan_clone(routes);
	struct timing t0;
	int rc;

	if (p == NULL)
		return -1;
	t0 = start();
	rc = inart_split_optimize(t, js, p, &so, &res, &err);
	*out = since(t0);
	inart_plan_destroy(p);
	if (rc < 0 || res.iters != 3000) {
		fprintf(stderr, "cp_bench: split: rc %d: %s (%d iterations)\n", rc, err.msg,
			rc < 0 ? 0 : res.iters);
		return -1;
	}
	*gap = res.gap;
	return 0;
}

/* Print the best of the runs against the limit; 1 if missed. */
static int report(const char *what, const struct timing *runs, int n, double limit_s)
{
	struct timing best = runs[0];

	for (int i = 1; i < n; i++)
		if (runs[i].cpu < best.cpu)
			best = runs[i];
	printf("%-52s best of %d: %7.3f s CPU (%7.3f s wall)  limit %.0f s CPU  %s\n", what, n,
	       best.cpu, best.wall, limit_s, best.cpu < limit_s ? "PASS" : "MISS");
	return best.cpu < limit_s ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct inart_gen_opt go;
	struct inart_err err = {{0}};
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_plan *routes = NULL;
	struct timing runs[100];
	int repeat = 3, miss = 0;
	double gap = 0;

	if (argc == 3 && strcmp(argv[1], "--repeat") == 0)
		repeat = atoi(argv[2]);
	if ((argc != 1 && argc != 3) || repeat < 1 || repeat > 100) {
		fprintf(stderr, "usage: cp_bench [--repeat N]   (1 <= N <= 100)\n");
		return 2;
	}
	inart_gen_opt_default(&go);
	t = inart_gen_fattree(16, &go, &err);
	if (t == NULL || (js = random_job(t, &err)) == NULL ||
	    (routes = random_routes(t, js)) == NULL) {
		fprintf(stderr, "cp_bench: set-up: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < repeat; i++)
		if (paths_run(t, &runs[i]) < 0) {
			fprintf(stderr, "cp_bench: paths: no path found\n");
			return 1;
		}
	miss += report("paths: fat-tree k=16, 4000 k-shortest + 4000 ECMP", runs, repeat, 5);
	for (int i = 0; i < repeat; i++)
		if (split_run(t, js, routes, &runs[i], &gap) < 0)
			return 1;
	miss += report("split: fat-tree k=16, 256+8 hosts, 3000 iterations", runs, repeat, 5);
	printf("split: duality gap after 3000 iterations %.3g\n", gap);
	inart_plan_destroy(routes);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return miss ? 1 : 0;
}
