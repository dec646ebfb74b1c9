/*
 * ringmix: ring all-reduce jobs in InArt's search and their bound (see
 * ringmix.h).
 */
#include "ringmix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "route_lp.h"

/* base with the jobs of in[] planned by ring's hops, evaluated: *out. */
static int mixed(struct inart_search *s, const struct inart_plan *base,
		 const struct inart_plan *ring, const char *in, struct inart_plan **out)
{
	struct inart_plan *c = inart_plan_clone(base);
	int rc = c ? 0 : -ENOMEM;

	for (int j = 0; rc == 0 && j < s->js->n_jobs; j++) {
		if (!in[j])
			continue;
		inart_plan_clear_routes(c, j);
		memset(c->jobs[j].split, 0, sizeof(double) * (size_t)c->jobs[j].n_ps);
		for (int h = 0; rc == 0 && h < ring->jobs[j].n_ring; h++)
			rc = inart_plan_add_ring_hop(c, j, ring->jobs[j].ring[h].path,
						     ring->jobs[j].ring[h].n_path);
	}
	if (rc == -ENOMEM)
		rc = inart_err_set(s->err, rc, "out of memory");
	if (rc == 0)
		rc = inart_search_evaluate(s, c);
	if (rc < 0) {
		inart_plan_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* Job j's load on the arcs: its ring hops (ring = 1) or the access links of
 * its single-homed workers (ring = 0), times scale. */
static void job_load(const struct inart_topo *t, const struct inart_jobs *js,
		     const struct inart_plan *rp, int j, int ring, double *load)
{
	const struct inart_job *job = &js->jobs[j];
	double g = inart_job_gbit(job);

	if (ring) {
		double vol = 2.0 * (job->n_workers - 1) / job->n_workers * g;

		for (int h = 0; h < rp->jobs[j].n_ring; h++) {
			const struct inart_ring_hop *hop = &rp->jobs[j].ring[h];

			for (int k = 0; k + 1 < hop->n_path; k++)
				load[inart_topo_arc_between(t, hop->path[k], hop->path[k + 1])] +=
				    vol;
		}
		return;
	}
	for (int i = 0; i < job->n_workers; i++) {
		int w = job->workers[i];

		if (t->out_off[w + 1] - t->out_off[w] == 1) {
			int a = t->arc_out[t->out_off[w]];

			load[a] += g;	  /* push up */
			load[a ^ 1] += g; /* pull down */
		}
	}
}

static double max_time(const struct inart_topo *t, const double *load)
{
	double best = 0;

	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		if (load[e] > 0)
			best = fmax(best, load[e] / inart_arc_residual(&t->arcs[e]));
	return best;
}

double inart_ringmix_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_plan *ring, const char *in, double *load)
{
	memset(load, 0, sizeof(double) * (size_t)inart_topo_n_arcs(t));
	for (int j = 0; j < js->n_jobs; j++)
		job_load(t, js, ring, j, in[j], load);
	return max_time(t, load);
}

/* Below every subset's load bound: per arc, the smaller of each job's two
 * loads. */
static double min_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
			     const struct inart_plan *ring, double *load, double *a, double *b)
{
	size_t n = (size_t)inart_topo_n_arcs(t);

	memset(load, 0, sizeof(double) * n);
	for (int j = 0; j < js->n_jobs; j++) {
		memset(a, 0, sizeof(double) * n);
		memset(b, 0, sizeof(double) * n);
		job_load(t, js, ring, j, 1, a);
		job_load(t, js, ring, j, 0, b);
		for (size_t e = 0; e < n; e++)
			load[e] += fmin(a[e], b[e]);
	}
	return max_time(t, load);
}

/* Per link (even arc): the fixed ring load of in[]'s jobs on the direction
 * with the smaller residual (both when equal: the larger load), the value
 * route_lp's link rows take (route_lp.h: link_extra).  ring_arc: scratch. */
static void ring_links(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_plan *ring, const char *in, double *ring_arc,
		       double *link)
{
	int na = inart_topo_n_arcs(t);

	memset(ring_arc, 0, sizeof(double) * (size_t)na);
	for (int j = 0; j < js->n_jobs; j++)
		if (in[j])
			job_load(t, js, ring, j, 1, ring_arc);
	for (int l = 0; l + 1 < na; l += 2) {
		double r0 = inart_arc_residual(&t->arcs[l]),
		       r1 = inart_arc_residual(&t->arcs[l + 1]);

		link[l] = r0 < r1   ? ring_arc[l]
			  : r1 < r0 ? ring_arc[l + 1]
				    : fmax(ring_arc[l], ring_arc[l + 1]);
		link[l + 1] = 0;
	}
}

/* The bound for ring subset in[] (not empty): the larger of the load bound
 * and, when that is below cut and the LP affordable, the JOINT LP of the PS
 * jobs with the rings' loads fixed on the links.  load: 3 n_arcs scratch. */
static int subset_bound(struct inart_search *s, const struct inart_plan *ring, const char *in,
			double cut, double *load, double *out)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
	struct inart_route_lp_result res = {0};
	size_t na = (size_t)inart_topo_n_arcs(s->t) + 1;
	char *off = malloc((size_t)s->js->n_jobs);
	int rc = off ? 0 : -ENOMEM, any = 0;

	*out = inart_ringmix_load_bound(s->t, s->js, ring, in, load);
	for (int j = 0; rc == 0 && j < s->js->n_jobs; j++) {
		off[j] = !in[j];
		any |= off[j];
	}
	if (rc == 0 && any && *out < cut && s->cand->n_choices <= s->lp_max_choices) {
		ring_links(s->t, s->js, ring, in, load + na, load + 2 * na);
		lo.job_on = off;
		lo.link_extra = load + 2 * na;
		rc = inart_route_lp_solve(s->t, s->js, s->cand, NULL, &lo, &res, s->err);
		if (rc == 0)
			*out = fmax(*out, res.bound_s);
		inart_route_lp_result_free(&res);
		if (rc < 0 && rc != -ENOMEM)
			rc = 0; /* the load bound alone: valid, weaker */
		/* CBC's bound on the same MILP (exact over per-worker candidates) */
		lo.integer = 1;
		lo.time_limit_s = s->ringmix_cbc_s;
		if (rc == 0 && s->ringmix_cbc_s > 0 && s->no_groups && *out < cut &&
		    s->cand->n_choices <= RINGMIX_CBC_MAX_CHOICES) {
			rc = inart_route_lp_solve(s->t, s->js, s->cand, NULL, &lo, &res, s->err);
			if (rc == 0 && res.bound_s > 0)
				*out = fmax(*out, res.bound_s);
			inart_route_lp_result_free(&res);
			if (rc < 0 && rc != -ENOMEM)
				rc = 0; /* no integral point in time: the LP's bound */
		}
	}
	free(off);
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc;
}

/* Try subset in[]: offered to the search; *t its time. */
static int try_subset(struct inart_search *s, const struct inart_plan *base,
		      const struct inart_plan *ring, const char *in, double *t)
{
	struct inart_plan *p = NULL;
	int rc = mixed(s, base, ring, in, &p);

	if (rc == 0) {
		*t = p->comm_time_s;
		rc = inart_search_offer(s, p, "ring jobs");
	}
	inart_plan_destroy(p);
	return rc < 0 ? rc : 0;
}

/* Every non-empty subset (bits of m), tried and bounded (a skipped LP leaves
 * the subset's load bound, valid but weaker). */
static int enumerate(struct inart_search *s, const struct inart_plan *base,
		     const struct inart_plan *ring, char *in, double *load, double *bound)
{
	int n = s->js->n_jobs, rc = 0;
	double t;

	for (unsigned m = 1; rc == 0 && m < (1u << n); m++) {
		double b;

		for (int j = 0; j < n; j++)
			in[j] = (m >> j) & 1;
		rc = try_subset(s, base, ring, in, &t);
		if (rc == 0)
			rc = subset_bound(s, ring, in, s->best->comm_time_s, load, &b);
		if (rc == 0)
			*bound = fmin(*bound, b);
	}
	return rc;
}

/* Job by job: add the job whose ring helps most, while one helps; then all. */
static int greedy(struct inart_search *s, const struct inart_plan *base,
		  const struct inart_plan *ring, char *in)
{
	int n = s->js->n_jobs, rc = 0, pick = 0;
	double cur = base->comm_time_s, t;

	memset(in, 0, (size_t)n);
	while (rc == 0 && pick >= 0) {
		double best = cur;

		pick = -1;
		for (int j = 0; rc == 0 && j < n; j++) {
			if (in[j])
				continue;
			in[j] = 1;
			rc = try_subset(s, base, ring, in, &t);
			in[j] = 0;
			if (rc == 0 && t < best) {
				best = t;
				pick = j;
			}
		}
		if (pick >= 0) {
			in[pick] = 1;
			cur = best;
		}
	}
	memset(in, 1, (size_t)n);
	return rc == 0 ? try_subset(s, base, ring, in, &t) : rc;
}

int inart_ringmix_run(struct inart_search *s, double *ring_bound)
{
	struct inart_plan *ring = NULL, *base = inart_plan_clone(s->best);
	size_t na = (size_t)inart_topo_n_arcs(s->t) + 1;
	double *load = malloc(sizeof(double) * na * 3);
	char *in = malloc((size_t)s->js->n_jobs + 1);
	int rc = base && load && in ? 0 : inart_err_set(s->err, -ENOMEM, "out of memory");

	*ring_bound = INFINITY;
	if (rc == 0)
		rc = inart_ring_plan(s->t, s->js, s->paths, &ring, s->err);
	if (rc < 0 && rc != -ENOMEM) { /* no ring candidate: no plan with ring jobs */
		rc = 0;
		goto out;
	}
	if (rc == 0 && s->js->n_jobs <= RINGMIX_ENUM_MAX_JOBS) {
		rc = enumerate(s, base, ring, in, load, ring_bound);
	} else if (rc == 0) {
		rc = greedy(s, base, ring, in);
		if (rc == 0)
			*ring_bound =
			    min_load_bound(s->t, s->js, ring, load, load + na, load + 2 * na);
	}
out:
	inart_plan_destroy(ring);
	inart_plan_destroy(base);
	free(load);
	free(in);
	return rc;
}
