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
 * Ownership: struct inart_search holds one run's state and owns the
 * candidates, the warm start, the best plan and the plans of starts 2 and 3
 * (kept for the baseline guard); it refers to the topology, jobs, paths and
 * evaluator of the run.
 */
#ifndef INART_SEARCH_H
#define INART_SEARCH_H

#include "cp/model/cand.h"
#include "cp/model/evaluate.h"
#include "cp/model/plan.h"
#include "cp/planner/baselines.h"
#include "cp/planner/budget.h"

/* The baselines the search starts from and the guard checks
 * (cp/planner/baselines.h's registry, in its order). */
#define INART_SEARCH_N_BASE INART_BASELINE_N

struct inart_search {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_planner_opt *opt; /* complete (planner.c fills defaults) */
	struct inart_paths *paths;
	struct inart_evaluator *ev;
	struct inart_err *err;
	/* The run's time budget (budget.h): the time limit from the start,
	 * unbounded with time limit 0 (starts only, whatever they take) or for
	 * algorithms other than inart and bound; every stage checks it (or a
	 * child of it).  Its clock is the run's: tests set a fake one to drive
	 * the time decisions deterministically. */
	struct inart_budget budget;
	double deadline; /* on budget's clock: the end of the improvement
			  * phase (budget.t0 + time limit; t0 with 0) */

	struct inart_cand *cand;
	int no_groups;	      /* the candidates are per worker (sub-MILPs exact) */
	int lns_steps;	      /* > 0: the large-neighbourhood search solves at most
			       * this many neighbourhoods, each bounded by CBC's
			       * node limit only: a work budget that gives the
			       * same plan on any machine (tests); 0: time only */
	int lp_max_choices;   /* above this many choices, phase 2 starts from a
			       * greedy assignment and the bound is a
			       * time-limited LP (set by init; tests lower it) */
	double big_bound_s;   /* above lp_max_choices: the JOINT LP's time limit
			       * (set by init; 0: none, the `lp` algorithm) */
	double *warm;	      /* the last LP solution (cand->n_choices), a warm start */
	double ringmix_cbc_s; /* > 0: CBC's limit on each ring subset's MILP at
			       * most this (the `bound` algorithm); 0: its share
			       * of the ring-mix time (ringmix.h) */
	double ring_deadline; /* > 0: the end of the ring-mix search (the
			       * `bound` algorithm); 0: deadline */

	struct inart_plan *base[INART_SEARCH_N_BASE]; /* ps, byteps, switchml, atp, inart-sp
						       * (owned): their routes are candidates too */
	struct inart_plan *best;		      /* best plan so far (owned) */
	double bound_s;				      /* best proven bound, NaN if none */
	enum inart_bound_source bound_src;	      /* its source */
	double lp_bound_s;			      /* the JOINT LP's bound */
	struct inart_plan *even_plan, *grid_plan;     /* starts 2 and 3 (owned) */
	double last_report;			      /* elapsed time of the last progress */
	/* How many CBC neighbourhoods the large-neighbourhood search started
	 * (a count for tests). */
	int lns_cbc_steps;
	int said_over; /* the "over budget" notice went out */
	int reserved;  /* the finishing reserve is off the budget */
	double base_s; /* how long the baselines took */
	double need_s; /* > 0: the estimate of the time the first plan needs */
};

/* A run on (t, js) with complete options; paths and ev belong to the caller. */
void inart_search_init(struct inart_search *s, const struct inart_topo *t,
		       const struct inart_jobs *js, const struct inart_planner_opt *opt,
		       struct inart_paths *paths, struct inart_evaluator *ev,
		       struct inart_err *err);
void inart_search_free(struct inart_search *s);

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

/* Check p with the run's evaluator and store its times in it. */
int inart_search_evaluate(struct inart_search *s, struct inart_plan *p);

/* Warm start for a first LP: the greedy routes of the even split. */
int inart_search_warm_greedy(struct inart_search *s);

/* Offer p (evaluated) as the best plan: kept (copied) if better; step names
 * what found it for the progress report.  1 kept, 0 not, -ENOMEM. */
int inart_search_offer(struct inart_search *s, const struct inart_plan *p, const char *step);

/* Report progress if the last report is a second old or more. */
void inart_search_tick(struct inart_search *s, const char *step);

/* Report the start of a stage (stage: its name) through the progress hook,
 * once there is a best plan. */
void inart_search_stage(struct inart_search *s, const char *stage);

/* Raise the best bound (if b is higher) and report progress. */
void inart_search_raise_bound(struct inart_search *s, double b, enum inart_bound_source src);

/* 1 when the best plan is within rel of the best bound. */
int inart_search_close(const struct inart_search *s, double rel);

/* The "inart" algorithm up to (not including) the baseline guard: *out is
 * the best plan, pruned and evaluated, with lp_bound_s, best_bound_s and
 * bound_source set. */
int inart_search_run(struct inart_search *s, struct inart_plan **out);

#endif
