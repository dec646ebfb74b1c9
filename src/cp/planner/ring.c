/*
 * ring: ring all-reduce plans (see ring.h).
 *
 * The order is a nearest-neighbour tour over hop distances (paths.h caches
 * the distances to each destination); the hop paths are chosen greedily
 * against the forward load accumulated so far over all jobs (load[e] in
 * Gbit, both phases).  Ownership: the arrays are local to one call; the plan
 * goes to the caller.
 */
#include "cp/planner/ring.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cp/model/evaluate.h"

#define RING_K_PATHS 4

/* The ring order of job j's workers into order[0..n). */
static int ring_order(struct inart_paths *paths, const struct inart_job *job, int *order,
		      char *taken)
{
	int n = job->n_workers, first = 0;

	memset(taken, 0, (size_t)n);
	for (int i = 1; i < n; i++)
		if (job->workers[i] < job->workers[first])
			first = i;
	order[0] = first;
	taken[first] = 1;
	for (int k = 1; k < n; k++) {
		/* distance of every node to the current worker (links are
		 * usable both ways: symmetric) */
		const int *d = inart_paths_dist_to(paths, job->workers[order[k - 1]]);
		int best = -1;

		if (d == NULL)
			return -errno;
		for (int i = 0; i < n; i++) {
			int w = job->workers[i];

			if (taken[i] || d[w] < 0)
				continue;
			if (best < 0 || d[w] < d[job->workers[best]] ||
			    (d[w] == d[job->workers[best]] && w < job->workers[best]))
				best = i;
		}
		if (best < 0)
			return -EHOSTUNREACH;
		order[k] = best;
		taken[best] = 1;
	}
	return 0;
}

/* Time of path i of set with vol more Gbit on each forward arc. */
static double path_time(const struct inart_topo *t, const struct inart_pathset *set, int i,
			const double *load, double vol)
{
	const int *p = inart_pathset_path(set, i);
	double worst = 0;

	for (int h = 0; h + 1 < inart_pathset_len(set, i); h++) {
		int e = inart_topo_arc_between(t, p[h], p[h + 1]);

		worst = fmax(worst, (load[e] + vol) / inart_arc_residual(&t->arcs[e]));
	}
	return worst;
}

/* The hop a -> b of job j: the least loaded of its k shortest paths, added
 * to the plan and to load. */
static int add_hop(const struct inart_topo *t, struct inart_paths *paths, struct inart_plan *p,
		   int j, int a, int b, double vol, double *load, struct inart_pathset *set)
{
	int n, best = 0, rc;
	const int *q;

	inart_pathset_clear(set);
	n = inart_paths_k_shortest_salted(paths, a, b, RING_K_PATHS, (uint64_t)a + 1, set);
	if (n < 0)
		return n;
	for (int i = 1; i < set->n; i++)
		if (path_time(t, set, i, load, vol) < path_time(t, set, best, load, vol))
			best = i;
	q = inart_pathset_path(set, best);
	for (int h = 0; h + 1 < inart_pathset_len(set, best); h++)
		load[inart_topo_arc_between(t, q[h], q[h + 1])] += vol;
	rc = inart_plan_add_ring_hop(p, j, q, inart_pathset_len(set, best));
	return rc;
}

double inart_ring_hop_gbit(const struct inart_job *job)
{
	int n = job->n_workers;

	return 2.0 * (n - 1) / n * inart_job_gbit(job);
}

static int plan_job(const struct inart_topo *t, struct inart_paths *paths, struct inart_plan *p,
		    const struct inart_jobs *js, int j, double *load, int *order, char *taken,
		    struct inart_pathset *set)
{
	const struct inart_job *job = &js->jobs[j];
	int n = job->n_workers, rc = ring_order(paths, job, order, taken);
	double vol = inart_ring_hop_gbit(job);

	if (rc == 0 && n == 1)
		return inart_plan_add_ring_hop(p, j, job->workers, 1);
	for (int k = 0; k < n && rc == 0; k++)
		rc = add_hop(t, paths, p, j, job->workers[order[k]],
			     job->workers[order[(k + 1) % n]], vol, load, set);
	return rc;
}

int inart_ring_plan(const struct inart_topo *t, const struct inart_jobs *js,
		    struct inart_paths *paths, struct inart_plan **out, struct inart_err *err)
{
	struct inart_plan *p = inart_plan_create(js, "ring");
	double *load = calloc((size_t)inart_topo_n_arcs(t) + 1, sizeof(double));
	int max_w = 1, *order = NULL, rc = 0;
	char *taken = NULL;
	struct inart_pathset set;

	inart_pathset_init(&set);
	for (int j = 0; j < js->n_jobs; j++)
		max_w = js->jobs[j].n_workers > max_w ? js->jobs[j].n_workers : max_w;
	order = malloc(sizeof(int) * (size_t)max_w);
	taken = malloc((size_t)max_w);
	if (p == NULL || load == NULL || order == NULL || taken == NULL)
		rc = -ENOMEM;
	for (int j = 0; j < js->n_jobs && rc == 0; j++) {
		rc = plan_job(t, paths, p, js, j, load, order, taken, &set);
		if (rc < 0 && rc != -ENOMEM)
			rc = inart_err_set(err, rc, "ring: job '%s': no path between two workers",
					   js->jobs[j].id);
	}
	if (rc == -ENOMEM)
		rc = inart_err_set(err, rc, "ring: out of memory");
	if (rc == 0)
		rc = inart_evaluate(t, js, p, err);
	inart_pathset_free(&set);
	free(load);
	free(order);
	free(taken);
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}
