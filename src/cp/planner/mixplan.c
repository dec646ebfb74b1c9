/*
 * mixplan: PS plans with some jobs as ring all-reduces, and the loads of
 * such jobs on the links (see mixplan.h).
 */
#include "cp/planner/mixplan.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "cp/model/evaluate.h"
#include "cp/planner/ring.h"

int inart_mixplan_build(struct inart_search *s, const struct inart_plan *base,
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

/* Job j's load on the arcs: its ring hops (ring = 1: both phases forward,
 * their ACKs back, as the evaluator counts them) or the access links of its
 * single-homed workers (ring = 0). */
void inart_mixplan_job_load(const struct inart_topo *t, const struct inart_jobs *js,
			    const struct inart_plan *rp, int j, int ring, double *load)
{
	const struct inart_job *job = &js->jobs[j];
	double g = inart_job_gbit(job);

	if (ring) {
		double vol = inart_ring_hop_gbit(job);

		for (int h = 0; h < rp->jobs[j].n_ring; h++) {
			const struct inart_ring_hop *hop = &rp->jobs[j].ring[h];

			for (int k = 0; k + 1 < hop->n_path; k++) {
				int e = inart_topo_arc_between(t, hop->path[k], hop->path[k + 1]);

				load[e] += vol;
				load[e ^ 1] += INART_EVAL_RING_ACK_SHARE * vol;
			}
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

double inart_mixplan_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_plan *ring, const char *in, double *load)
{
	memset(load, 0, sizeof(double) * (size_t)inart_topo_n_arcs(t));
	for (int j = 0; j < js->n_jobs; j++)
		inart_mixplan_job_load(t, js, ring, j, in[j], load);
	return max_time(t, load);
}

/* Below every subset's load bound: per arc, the smaller of each job's two
 * loads. */
double inart_mixplan_min_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				    const struct inart_plan *ring, double *load, double *a,
				    double *b)
{
	size_t n = (size_t)inart_topo_n_arcs(t);

	memset(load, 0, sizeof(double) * n);
	for (int j = 0; j < js->n_jobs; j++) {
		memset(a, 0, sizeof(double) * n);
		memset(b, 0, sizeof(double) * n);
		inart_mixplan_job_load(t, js, ring, j, 1, a);
		inart_mixplan_job_load(t, js, ring, j, 0, b);
		for (size_t e = 0; e < n; e++)
			load[e] += fmin(a[e], b[e]);
	}
	return max_time(t, load);
}

void inart_mixplan_links(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_plan *ring, const char *in, double *ring_arc,
			 double *link)
{
	int na = inart_topo_n_arcs(t);

	memset(ring_arc, 0, sizeof(double) * (size_t)na);
	for (int j = 0; j < js->n_jobs; j++)
		if (in[j])
			inart_mixplan_job_load(t, js, ring, j, 1, ring_arc);
	for (int l = 0; l + 1 < na; l += 2) {
		double r0 = inart_arc_residual(&t->arcs[l]),
		       r1 = inart_arc_residual(&t->arcs[l + 1]);

		link[l] = r0 < r1   ? ring_arc[l]
			  : r1 < r0 ? ring_arc[l + 1]
				    : fmax(ring_arc[l], ring_arc[l + 1]);
		link[l + 1] = 0;
	}
}
