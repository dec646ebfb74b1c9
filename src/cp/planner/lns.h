/*
 * lns: the anytime improvement of the "inart" algorithm -- a
 * large-neighbourhood search that frees part of the best plan and re-solves
 * that part exactly, the rest fixed, by CBC on the JOINT MILP over the
 * candidates (route_lp.h: start_x, free_pair, free_job), with the best plan
 * as CBC's starting incumbent, so a step never makes the plan worse.
 *
 * Neighbourhoods, in turn, each with the tree configuration (which (job,
 * PS) holds a tree at which switch) fixed outside it and the routes and
 * shares of the pairs involved free: the pairs whose routes cross the
 * bottleneck ("routes"); the trees of one contended switch (a tree-budget
 * exchange between jobs); the trees of one job; the trees of two contended
 * switches; last, on models up to 2000 choices, everything, with the
 * remaining time (CBC's bound is then valid for every plan) -- such models
 * also get a first look at everything, for a quarter of the time or 1 s,
 * before the others (CBC often proves them whole in that).  Beside them,
 * not by CBC, the kicks step: the local search (localsearch.h) from the
 * best plan with random kicks (a work budget), first on models above 2000
 * choices, after a pass without improvement on smaller ones; it re-routes
 * many flows of several pairs in small moves, which a min-max MILP over
 * them all does not find within its node limit (docs/formulation.md
 * section 9).  After an
 * improvement the phase-1 split is re-optimized for the new routes.  The
 * search stops at the run's deadline, or when the best plan is within 1% of
 * the best proven bound.
 *
 * Each neighbourhood is bounded by CBC's node limit (200 nodes, four times
 * more after a pass without improvement), so its result does not depend on
 * the machine's speed, and by a time limit as a safety net (3 s, and the
 * run's deadline less CBC's overrun of its limit: inart_lns_cbc_limit).
 * With a step budget (search.h: lns_steps) only the node limit binds and the
 * search gives the same plan on any machine.
 *
 * With per-worker candidates (search.h) the sub-MILPs are exact; with groups
 * they optimize a relaxation and only evaluated improvements are kept.
 */
#ifndef INART_LNS_H
#define INART_LNS_H

#include "cp/planner/search.h"

/* Improve s->best (which must be set) until s->deadline or a 1% gap.
 * 0 or -errno. */
int inart_lns_run(struct inart_search *s);

/*
 * The same search over the plans whose jobs in[] are ring all-reduces
 * (ringmix.h): the rings' loads are fixed on the links (route_lp.h:
 * link_extra), the other jobs (job_on) are re-solved by the same
 * neighbourhoods, whose MILPs have only their columns.  The incumbent is
 * base's routes for those jobs (base: a plan over the candidates; its ring
 * jobs' routes are ignored) mixed with the rings; every improvement is
 * offered to the search (inart_search_offer).  CBC's bound on the whole
 * model of the subset (the "all" neighbourhood, small models) is returned.
 */
struct inart_lns_ring {
	const char *in;		       /* per job: 1 a ring job */
	const char *job_on;	       /* per job: !in[j] */
	const double *link_extra;      /* the rings' loads per link (route_lp.h) */
	const struct inart_plan *ring; /* the ring candidate (ring.h) */
	double deadline;	       /* stop at this inart_now_s() */
	/* results */
	double bound_s; /* CBC's best bound on the subset's whole MILP; NaN: none */
	int proven;	/* CBC proved that MILP optimal (bound_s is its optimum),
			 * or that it has no plan faster than the search's best
			 * (its cutoff; bound_s just below that time) */
	double best_s;	/* the best mixed plan's time seen */
};

/* 0, -ENOENT when base's routes are not candidates (nothing done), or
 * -errno. */
int inart_lns_run_ring(struct inart_search *s, const struct inart_plan *base,
		       struct inart_lns_ring *r);

/*
 * The time limit the search gives CBC for a neighbourhood that wants want_s
 * seconds, with left_s seconds left and CBC's overrun of its limit over_s
 * (CBC 2.10 checks its limit only in its search: completing the start, the
 * root's heuristics and the final LP come on top): min(want_s, left_s -
 * over_s), or 0 -- the neighbourhood is not started, nor any other after
 * it -- when that is below LNS_CBC_MIN_S (lns.c) or below over_s.
 */
double inart_lns_cbc_limit(double left_s, double want_s, double over_s);

/* The overrun assumed before CBC has shown one in the run, for a model of
 * n_choices candidate choices (lns.c: LNS_CBC_OVER_K). */
double inart_lns_cbc_over_guess(int n_choices);

#endif
