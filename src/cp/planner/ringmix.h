/*
 * ringmix: jobs planned as ring all-reduces inside InArt's search, and the
 * bound over such plans (docs/formulation.md, section 11).
 *
 * Where PSs sit behind thin uplinks every PS plan pays for them and the ring
 * all-reduce (ring.h), which needs no PS, can be faster for some or all jobs.
 * InArt's search space is therefore, per job, either its routes to PSs among
 * the candidates (cand.h) or the ring of the `ring` baseline (its order and
 * hop paths: the ring candidate).  After the PS search, every non-empty
 * subset S of the jobs (all of them up to RINGMIX_ENUM_MAX_JOBS jobs; else
 * job by job, greedily, evaluations only) is tried:
 *   1. the best PS plan with the jobs of S replaced by their rings,
 *      evaluated and offered to the search (every subset, even after the
 *      time limit: evaluations only; the all-ring subset is the `ring`
 *      baseline's plan, so the search is never worse than it);
 *   2. then, lowest bound first, the subsets whose bound is below the best
 *      plan's time, while the ring-mix time lasts (s->ring.deadline, else
 *      s->deadline; each gets its share of what is left): on models small
 *      enough for CBC (per-worker candidates, at most
 *      RINGMIX_CBC_MAX_CHOICES), the PS jobs are re-planned around the rings
 *      on their MILP (route_lp.h, job_on) with the rings' loads fixed on the
 *      links (link_extra), from the best PS plan's routes: by the
 *      large-neighbourhood search of lns.h (inart_lns_run_ring: a tree-budget
 *      exchange at a time, much sooner good than CBC on the whole subset),
 *      whose whole-subset neighbourhood bounds the subset; in the `bound`
 *      algorithm (ringmix_cbc_s set), by CBC on the whole subset.  CBC's
 *      cutoff is the best plan's time: it looks only for faster plans, and
 *      when it proves there is none the subset is bounded by that time
 *      (source cbc).  On larger models the JOINT LP of the same, for the
 *      bound only.
 *
 * The bound over plans with at least one ring job: for a plan whose ring jobs
 * are S (non-empty),
 *   T >= MILP/LP(jobs not in S | S)         step 2's bound, when it ran
 *   T >= max_e (ring(S, e) + access(e)) / res(e)
 *                                           ring(S, e): the fixed load of S's
 *                                           hops, 2 (N-1)/N G per hop arc;
 *                                           access(e): G each way on the
 *                                           access link of a single-homed
 *                                           worker of a PS job
 *   T >= stream(PS jobs | ring(S, .))       the PS jobs' unsplittable streams
 *                                           beside the rings' loads
 *                                           (stream_bound.h)
 * and the bound is the minimum over S of the largest of the three, labelled
 * by the source of the subset attaining it (load, stream, lp, lp-partial,
 * cbc: proven -- the subset's optimum, or "nothing faster than the cutoff",
 * then just below the best plan's time --, cbc-limit: CBC's bound at its
 * time limit, at most the cutoff).  A subset whose
 * closed-form bound (the last two) already reaches the best plan's time gets
 * no CBC or LP: no plan with those ring jobs is better.  Above RINGMIX_ENUM_MAX_JOBS
 * jobs the bound is max_e sum_j min(ring_j, access_j)(e) / res(e), below
 * every subset's second term.  With the bound B over plans without ring jobs
 * (LP, CBC, bnb), min(B, ring bound) bounds the whole search space.
 *
 * Time: after the deadline nothing but the evaluations of step 1 runs; a
 * CBC or LP call started before it is limited to the time left (CBC may
 * overrun by its model build and the check interval of its limit).
 *
 * Ownership: the search's state (search.h); the rest is local to a run.
 */
#ifndef INART_RINGMIX_H
#define INART_RINGMIX_H

#include "cp/planner/search.h"

/* Up to this many jobs every subset is tried and bounded. */
#define RINGMIX_ENUM_MAX_JOBS 6
/* CBC on a subset's MILP up to this many candidate choices (planner.c's
 * limit for `milp`). */
#define RINGMIX_CBC_MAX_CHOICES 20000

/* Try the subsets after the search (s->best set; plans offered through
 * inart_search_offer) and store the bound over plans with ring jobs in
 * *ring_bound (seconds; +inf when there is no ring candidate: no such plan)
 * and its source in *src (that of the subset attaining the minimum).  CBC
 * and the LPs run until s->ring.deadline (0: s->deadline); a subset left
 * without keeps its load bound.  0 or -errno. */
int inart_ringmix_run(struct inart_search *s, double *ring_bound, enum inart_bound_source *src);

/* 1 when CBC would re-plan some subset: the model is small enough for it
 * (per-worker candidates, at most RINGMIX_CBC_MAX_CHOICES) and some subset
 * with PS jobs has a load bound below the best plan's time (s->best set).
 * The search then leaves ring-mix part of its time. */
int inart_ringmix_wants_time(struct inart_search *s);

#endif
