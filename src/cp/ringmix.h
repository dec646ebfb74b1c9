/*
 * ringmix: jobs planned as ring all-reduces inside InArt's search, and the
 * bound over such plans (docs/formulation.md, section 11).
 *
 * Where PSs sit behind thin uplinks every PS plan pays for them and the ring
 * all-reduce (ring.h), which needs no PS, can be faster for some or all jobs.
 * InArt's search space is therefore, per job, either its routes to PSs among
 * the candidates (cand.h) or the ring of the `ring` baseline (its order and
 * hop paths: the ring candidate).  After the PS search, every subset S of
 * the jobs (all of them up to RINGMIX_ENUM_MAX_JOBS jobs; else job by job,
 * greedily) is tried: the best PS plan with the jobs of S replaced by their
 * rings, evaluated and offered to the search.  The all-ring subset is the
 * `ring` baseline's plan, so the search is never worse than it.
 *
 * The bound over plans with at least one ring job: for a plan whose ring jobs
 * are S (non-empty),
 *   T >= LP(jobs not in S | S)              the JOINT LP of the PS jobs alone
 *                                           (route_lp.h, job_on) with the
 *                                           rings' loads fixed on the links
 *                                           (link_extra)
 *   T >= max_e (ring(S, e) + access(e)) / res(e)
 *                                           ring(S, e): the fixed load of S's
 *                                           hops, 2 (N-1)/N G per hop arc;
 *                                           access(e): G each way on the
 *                                           access link of a single-homed
 *                                           worker of a PS job
 * and the bound is the minimum over S of the larger of the two.  The LP is
 * solved only for the subsets whose second term is below the best plan's
 * time (no bound can exceed that), and not on instances too large for the
 * LP; with s->ringmix_cbc_s (the `bound` algorithm) the first term is also
 * CBC's bound on that MILP, time-limited.  Above RINGMIX_ENUM_MAX_JOBS jobs
 * the bound is max_e sum_j min(ring_j, access_j)(e) / res(e), below every
 * subset's second term.  With the bound B over plans without ring jobs (LP,
 * CBC, bnb), min(B, ring bound) bounds the whole search space.
 *
 * Ownership: the search's state (search.h); the ring plan is local.
 */
#ifndef INART_RINGMIX_H
#define INART_RINGMIX_H

#include "search.h"

/* Up to this many jobs every subset is tried and bounded. */
#define RINGMIX_ENUM_MAX_JOBS 6
/* CBC's bound on a subset's MILP (s->ringmix_cbc_s > 0) up to this many
 * candidate choices (planner.c's limit for `milp`). */
#define RINGMIX_CBC_MAX_CHOICES 20000

/* Try the subsets after the search (s->best set; plans offered through
 * inart_search_offer) and store the bound over plans with ring jobs in
 * *ring_bound (seconds; +inf when there is no ring candidate: no such plan).
 * An LP that fails leaves a subset its load bound.  0 or -errno. */
int inart_ringmix_run(struct inart_search *s, double *ring_bound);

/* The load bound of the second term above for the subset in[] (per job, 1:
 * ring) with the ring plan's hops; load: scratch of inart_topo_n_arcs(t)
 * doubles. */
double inart_ringmix_load_bound(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_plan *ring, const char *in, double *load);

#endif
