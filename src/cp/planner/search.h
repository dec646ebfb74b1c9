/*
 * search: InArt's search for one planning run (the "inart" algorithm) and the
 * phase-2 steps the other route-selecting algorithms share (planner.c).
 *
 * The search runs the phase iteration (phase 2: route LP + rounding + local
 * search for the current split; phase 1: the Lagrangian split for the routes
 * chosen) from several starts and keeps the best plan:
 *   1. the shares of the JOINT LP relaxation (which gives the LP bound);
 *   2. the even split -- its first phase 2 is exactly the `inart-even` plan;
 *   3. one PS per job as the `ps` baseline picks it -- exactly `grid`;
 *   4. the plans of the baselines (ps, byteps, switchml, atp, inart-sp),
 *      and the warm start (opt->start) if any, whose routes are
 *      candidates too, improved by the local search;
 *   5. each single PS (job j on its PS i mod n_ps), while time is left.
 * Starts 1-4 always run, so the result is never worse than any baseline,
 * `grid` or `inart-even` by construction (the guard in planner.c is a
 * second line) -- unless a start meets the best bound, which ends the
 * starts (no candidate plan is better than the bound).  Then the
 * large-neighbourhood search (lns.h) improves the plan until the time limit
 * or until it is within 1% of the best bound.
 *
 * The state the stages share, and who owns what: search_state.h.
 */
#ifndef INART_SEARCH_H
#define INART_SEARCH_H

#include "cp/planner/search_state.h"

/* Build the candidates once (per worker when the instance is small enough
 * for exact sub-MILPs, or always with force_no_groups), with the routes of
 * the baselines' plans among them (s->base, computed here).  0 or -errno. */
int inart_search_cand(struct inart_search *s, int force_no_groups);

/* Phase 2 for p's split: route LP (warm-started from the previous LP when
 * warm, else cold -- what `grid` and `inart-even` do) and rounding; p gets
 * the routes and its times. */
int inart_search_phase2(struct inart_search *s, struct inart_plan *p, int warm);

/* The JOINT LP relaxation over the candidates: *bound (and *src: LP, or
 * LP_PARTIAL when big_bound_s stopped it on large instances: the better of
 * its Lagrangian bound and the access-link bound); its shares into split_out
 * when not NULL. */
int inart_search_bound(struct inart_search *s, double *bound, enum inart_bound_source *src,
		       struct inart_plan *split_out);

/* Warm start for a first LP: the greedy routes of the even split. */
int inart_search_warm_greedy(struct inart_search *s);

/* The "inart" algorithm up to (not including) the baseline guard: *out is
 * the best plan, pruned and evaluated, with lp_bound_s, best_bound_s and
 * bound_source set. */
int inart_search_run(struct inart_search *s, struct inart_plan **out);

#endif
