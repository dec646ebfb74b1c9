/*
 * search_state: what the stages of one run of InArt's search share
 * (search.h runs them: the starts, lns.h, ringmix.h): the run's inputs, its
 * time budget, the candidates, the best plan and the best bound, and the
 * progress report.  Each stage's own settings and counters sit in a part
 * of their own (lns, ringmix, lp); a stage reads the inputs, offers plans
 * (inart_search_offer) and bounds (inart_search_raise_bound), and never
 * calls another stage through this module, so the stages' files call each
 * other one way only (search -> ringmix -> lns -> mixplan -> search_state).
 *
 * Ownership: struct inart_search owns the candidates, the warm start, the
 * best plan and the plans of starts 2 and 3 (kept for the baseline guard)
 * and the baselines' plans; it refers to the topology, jobs, paths and
 * evaluator of the run (the caller's).
 */
#ifndef INART_SEARCH_STATE_H
#define INART_SEARCH_STATE_H

#include "cp/model/cand.h"
#include "cp/model/evaluate.h"
#include "cp/model/plan.h"
#include "cp/planner/baselines.h"
#include "cp/planner/budget.h"

/* Improvements below this relative amount are no improvement (a plan is
 * offered as the best only when that much faster; the phase iteration
 * ends). */
#define INART_SEARCH_IMPROVE_REL 1e-6

/* The baselines the search starts from and the guard checks
 * (cp/planner/baselines.h's registry, in its order). */
#define INART_SEARCH_N_BASE INART_BASELINE_N

struct inart_search {
	/* inputs (the caller's) */
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

	/* the candidates (search.h: inart_search_cand builds them, owned) */
	struct inart_cand *cand;
	int no_groups; /* the candidates are per worker (sub-MILPs exact) */

	/* phase 2's LP and the JOINT LP (search.c) */
	struct {
		int max_choices;    /* above this many choices, phase 2 starts from a
				     * greedy assignment and the bound is a
				     * time-limited LP (set by init; tests lower it) */
		double big_bound_s; /* above max_choices: the JOINT LP's time limit
				     * (set by init; 0: none, the `lp` algorithm) */
		double *warm;	    /* the last LP solution (cand->n_choices), a warm
				     * start (owned) */
	} lp;

	/* the starts (search.c) */
	struct {
		struct inart_plan *base[INART_SEARCH_N_BASE]; /* the baselines' plans
							       * (registry order, owned):
							       * their routes are
							       * candidates too */
		struct inart_plan *even, *grid;		      /* starts 2 and 3 (owned) */
		double base_s;				      /* how long the baselines took */
	} starts;

	/* the large-neighbourhood search (lns.c) */
	struct {
		int steps;     /* > 0: it solves at most this many neighbourhoods,
				* each bounded by CBC's node limit only: a work
				* budget that gives the same plan on any machine
				* (tests); 0: time only */
		int cbc_steps; /* CBC neighbourhoods started (a count for tests) */
	} lns;

	/* the ring-mix search (ringmix.c) */
	struct {
		double cbc_s;	 /* > 0: CBC's limit on each ring subset's MILP at
				  * most this (the `bound` algorithm); 0: its share
				  * of the ring-mix time (ringmix.h) */
		double deadline; /* > 0: the end of the ring-mix search (the
				  * `bound` algorithm); 0: deadline */
	} ring;

	/* the result so far (search_state.c: offer, raise_bound) */
	struct inart_plan *best;	   /* best plan so far (owned) */
	double bound_s;			   /* best proven bound, NaN if none */
	enum inart_bound_source bound_src; /* its source */
	double lp_bound_s;		   /* the JOINT LP's bound */

	/* the budget's notices and the progress report */
	double last_report; /* elapsed time of the last progress */
	int said_over;	    /* the "over budget" notice went out */
	int reserved;	    /* the finishing reserve is off the budget */
	double need_s;	    /* > 0: the estimate of the time the first plan needs */
};

/* A run on (t, js) with complete options; paths and ev belong to the caller. */
void inart_search_init(struct inart_search *s, const struct inart_topo *t,
		       const struct inart_jobs *js, const struct inart_planner_opt *opt,
		       struct inart_paths *paths, struct inart_evaluator *ev,
		       struct inart_err *err);
void inart_search_free(struct inart_search *s);

/* The run's clock (its budget's): seconds. */
double inart_search_now(const struct inart_search *s);

/* Check p with the run's evaluator and store its times in it. */
int inart_search_evaluate(struct inart_search *s, struct inart_plan *p);

/* Offer p (evaluated) as the best plan: kept (copied) if better; step names
 * what found it for the progress report.  1 kept, 0 not, -ENOMEM. */
int inart_search_offer(struct inart_search *s, const struct inart_plan *p, const char *step);

/* Report progress if the last report is a second old or more. */
void inart_search_tick(struct inart_search *s, const char *step);

/* Report the start of a stage (stage: its name) through the progress hook
 * (best_s NaN before the first plan). */
void inart_search_stage(struct inart_search *s, const char *stage);

/* Raise the best bound (if b is higher) and report progress. */
void inart_search_raise_bound(struct inart_search *s, double b, enum inart_bound_source src);

/* 1 when the best plan is within rel of the best bound. */
int inart_search_close(const struct inart_search *s, double rel);

#endif
