/*
 * mixplan: a PS plan with some of its jobs planned as ring all-reduces
 * instead (ringmix.h searches over such plans, lns.h improves them), and
 * the loads such jobs put on the links, for the bounds of ringmix.h.
 * Stateless: the caller owns every buffer; plans built here are the
 * caller's.
 */
#ifndef INART_MIXPLAN_H
#define INART_MIXPLAN_H

#include "cp/planner/search_state.h"

/* base with the jobs of in[] (per job, 1: ring) planned by ring's hops (no
 * PS, no routes), evaluated: *out (the caller's).  0 or -errno (err set). */
int inart_mixplan_build(struct inart_search *s, const struct inart_plan *base,
			const struct inart_plan *ring, const char *in, struct inart_plan **out);

/* Per link (even arc; odd entries 0): the fixed load of in[]'s ring jobs
 * on the direction with the smaller residual (both when equal: the larger
 * load), the value route_lp's link rows take (route_lp.h: link_extra).
 * ring_arc, link: inart_topo_n_arcs(t) doubles each (ring_arc scratch). */
void inart_mixplan_links(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_plan *ring, const char *in, double *ring_arc,
			 double *link);

/* The load bound of the second term above for the subset in[] (per job, 1:
 * ring) with the ring plan's hops; load: scratch of inart_topo_n_arcs(t)
 * doubles. */
double inart_mixplan_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_plan *ring, const char *in, double *load);

/* Job j's load on the arcs, added to load (inart_topo_n_arcs(t) doubles):
 * with ring 1 its ring hops in rp (both phases forward, their ACKs back, as
 * the evaluator counts them), with ring 0 the access links of its
 * single-homed workers. */
void inart_mixplan_job_load(const struct inart_topo *t, const struct inart_jobs *js,
			    const struct inart_plan *rp, int j, int ring, double *load);

/* Below every subset's load bound: per arc, the smaller of each job's two
 * loads; load, a, b: scratch of inart_topo_n_arcs(t) doubles each. */
double inart_mixplan_min_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				    const struct inart_plan *ring, double *load, double *a,
				    double *b);

#endif
