/*
 * stream_bound: the unsplittable-stream lower bound of (job, PS) pairs (see
 * stream_bound.h).  Widest paths by a Dijkstra on the bottleneck width (a
 * binary heap with lazy deletion), one search per PS host: the arc widths are
 * symmetric (each is the smaller of its link's two directions), so the
 * widest path from p to w is the widest from w to p.
 *
 * Ownership: scratch arrays are local to one call.
 */
#include "cp/planner/stream_bound.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct heap {
	int n;
	int *node;
	double *key;
};

static void heap_push(struct heap *h, int v, double k)
{
	int i = h->n++;

	while (i > 0 && h->key[(i - 1) / 2] < k) {
		h->node[i] = h->node[(i - 1) / 2];
		h->key[i] = h->key[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->node[i] = v;
	h->key[i] = k;
}

static int heap_pop(struct heap *h, double *k)
{
	int top = h->node[0], v = h->node[--h->n], i = 0;
	double kv = h->key[h->n];

	*k = h->key[0];
	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[c + 1] > h->key[c])
			c++;
		if (!(h->key[c] > kv))
			break;
		h->node[i] = h->node[c];
		h->key[i] = h->key[c];
		i = c;
	}
	if (h->n > 0) {
		h->node[i] = v;
		h->key[i] = kv;
	}
	return top;
}

/* Arc e's width: Gbit/s without extra, else Gbit within t_s. */
static double arc_width(const struct inart_topo *t, int e, const double *extra, double t_s)
{
	double r0 = inart_arc_residual(&t->arcs[e]), r1 = inart_arc_residual(&t->arcs[e ^ 1]);

	if (extra == NULL)
		return fmin(r0, r1);
	return fmin(t_s * r0 - extra[e], t_s * r1 - extra[e ^ 1]);
}

/* best[v]: the widest path's width from src to every node (+inf at src). */
static void widest(const struct inart_topo *t, int src, const double *extra, double t_s,
		   struct heap *h, double *best)
{
	for (int v = 0; v < t->n_nodes; v++)
		best[v] = 0;
	best[src] = INFINITY;
	h->n = 0;
	heap_push(h, src, INFINITY);
	while (h->n > 0) {
		double k;
		int v = heap_pop(h, &k);

		if (k < best[v])
			continue; /* stale */
		for (int i = t->out_off[v]; i < t->out_off[v + 1]; i++) {
			int e = t->arc_out[i], u = t->arcs[e].to;
			double wd = fmin(k, arc_width(t, e, extra, t_s));

			if (wd > best[u]) {
				best[u] = wd;
				heap_push(h, u, wd);
			}
		}
	}
}

static int n_pairs(const struct inart_jobs *js)
{
	int n = 0;

	for (int j = 0; j < js->n_jobs; j++)
		n += js->jobs[j].n_ps;
	return n;
}

/* Per pair the width (Gbit/s, or Gbit within t_s with extra); one search
 * per distinct PS host. */
static int widths(const struct inart_topo *t, const struct inart_jobs *js, const char *job_on,
		  const double *extra, double t_s, double *width)
{
	size_t cap = (size_t)inart_topo_n_arcs(t) + (size_t)t->n_nodes + 1, nn = (size_t)t->n_nodes;
	int n = n_pairs(js), n_src = 0, rc;
	struct heap h = {0, malloc(sizeof(int) * cap), malloc(sizeof(double) * cap)};
	double *best = malloc(sizeof(double) * ((size_t)n + 1) * nn);
	int *src = malloc(sizeof(int) * ((size_t)n + 1));

	rc = h.node && h.key && best && src ? 0 : -ENOMEM;
	for (int j = 0, off = 0; rc == 0 && j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];

		for (int i = 0; i < job->n_ps; i++, off++) {
			int p = job->ps[i], k = 0;

			width[off] = INFINITY;
			if (job_on != NULL && !job_on[j])
				continue;
			while (k < n_src && src[k] != p)
				k++;
			if (k == n_src) {
				src[n_src++] = p;
				widest(t, p, extra, t_s, &h, best + (size_t)k * nn);
			}
			for (int w = 0; w < job->n_workers; w++)
				if (job->workers[w] != p)
					width[off] = fmin(
					    width[off],
					    fmax(best[(size_t)k * nn + (size_t)job->workers[w]],
						 0));
		}
	}
	free(h.node);
	free(h.key);
	free(best);
	free(src);
	return rc;
}

int inart_stream_widths(const struct inart_topo *t, const struct inart_jobs *js, const char *job_on,
			double *width)
{
	return widths(t, js, job_on, NULL, 0, width);
}

/* 1 if at time t_s every job on fits its gradient on streams, 0 if not,
 * -ENOMEM. */
static int fits(const struct inart_topo *t, const struct inart_jobs *js, const char *job_on,
		const double *extra, double t_s, double *width)
{
	int rc = widths(t, js, job_on, extra, t_s, width);

	for (int j = 0, off = 0; rc == 0 && j < js->n_jobs; j++) {
		double sum = 0;

		for (int i = 0; i < js->jobs[j].n_ps; i++, off++)
			sum += width[off];
		if ((job_on == NULL || job_on[j]) && sum < inart_job_gbit(&js->jobs[j]))
			return 0;
	}
	return rc < 0 ? rc : 1;
}

double inart_stream_bound(const struct inart_topo *t, const struct inart_jobs *js,
			  const char *job_on, const double *extra)
{
	double *width = malloc(sizeof(double) * ((size_t)n_pairs(js) + 1));
	double lo = 0, hi = 0, fixed = 0;
	int rc = width ? inart_stream_widths(t, js, job_on, width) : -ENOMEM;

	/* without the fixed loads: T >= G_j / sum_p width(j, p) */
	for (int j = 0, off = 0; rc == 0 && j < js->n_jobs; j++) {
		double sum = 0;

		for (int i = 0; i < js->jobs[j].n_ps; i++, off++)
			sum += width[off];
		if (job_on != NULL && !job_on[j])
			continue;
		if (!(sum > 0)) {
			lo = INFINITY; /* no PS reachable: no such plan */
			break;
		}
		lo = fmax(lo, inart_job_gbit(&js->jobs[j]) / sum);
	}
	for (int e = 0; extra != NULL && e < inart_topo_n_arcs(t); e++)
		if (extra[e] > 0)
			fixed = fmax(fixed, extra[e] / inart_arc_residual(&t->arcs[e]));
	if (rc == 0 && extra != NULL && isfinite(lo) && lo > 0) {
		/* at 2 max(lo, fixed) every arc keeps half its residual: fits */
		hi = 2 * fmax(lo, fixed);
		lo = fmax(lo, fixed);
		while (rc == 0 && hi - lo > 1e-6 * hi) {
			double mid = 0.5 * (lo + hi);

			rc = fits(t, js, job_on, extra, mid, width);
			if (rc == 1)
				hi = mid;
			else if (rc == 0)
				lo = mid;
			rc = rc < 0 ? rc : 0;
		}
	}
	free(width);
	return rc < 0 ? rc : fmax(lo, fixed);
}
