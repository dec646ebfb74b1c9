/*
 * rounding: from a fractional phase-2 LP solution to integral routes.
 *
 * Each trial draws, for every member slot of every cand flow, one choice with
 * probability x[c] (seeded; the members of a group by systematic sampling),
 * and for every cand tree one path/parent choice with probability z[c] / u_t
 * (its first choice when u_t = 0).  Trial 0 is deterministic: each group's
 * members are apportioned to the choices by largest remainder of m x (one
 * worker: the largest x), trees take their largest z.  A trial that exceeds
 * some switch's tree budget is repaired: while a switch holds too many trees,
 * the tree with the fewest children is dropped and its children re-routed to
 * their next aggregation point along the same path (a further INA switch of
 * the same (job, PS) with a used tree, or the PS).  Every trial is judged by
 * the evaluator.  Then a local search starts from each of the best trials:
 * single moves (a slot or a used tree to another of its choices) and compound
 * ones (merge the streams of a (job, PS) passing a switch into its tree;
 * split a tree) around the bottleneck, accepted while they lower the time or
 * the number of resources at it, within budgets; bounded work and time.  The
 * best plan found is kept.  See docs/formulation.md.
 */
#ifndef INART_ROUNDING_H
#define INART_ROUNDING_H

#include "cp/model/assign.h"
#include "cp/model/evaluate.h"
#include "cp/planner/budget.h"

struct inart_round_opt {
	int trials;	     /* default 32 */
	uint64_t seed;	     /* default 1 */
	int local_passes;    /* local-search effort; default 2; 0: no local search.
			      * The starts together try at most local_passes *
			      * 32 * (slots + trees) moves. */
	double local_time_s; /* optional wall-clock cap on the local search;
			      * default 0: none, so that a seed reproduces a run
			      * exactly (a cap makes results depend on speed) */
	int local_starts;    /* the search starts from each of the best trials;
			      * default 4 */
	/* the stage's time budget (budget.h; NULL, the default: none): once
	 * it is spent no further trial is drawn (trial 0 always is) and the
	 * local search stops, each start getting its share of what is left */
	const struct inart_budget *budget;
};

struct inart_round_result {
	double best_s;	  /* comm time of the kept plan */
	double mean_s;	  /* mean over trials (after repair) */
	double rounded_s; /* best trial before the local search */
	int best_trial;	  /* index of the best trial */
	int repaired;	  /* trials that needed budget repair */
	int local_moves;  /* moves the local search accepted */
};

void inart_round_opt_default(struct inart_round_opt *o);

/* x: cand->n_choices LP values.  plan: in, the split; out, the best routes
 * found (its comm/push/pull times set).  0 or -errno. */
int inart_rounding_run(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const double *x, struct inart_plan *plan,
		       struct inart_evaluator *ev, const struct inart_round_opt *opt,
		       struct inart_round_result *res, struct inart_err *err);

/* Budget repair of one assignment in place (exposed for tests): returns the
 * number of trees dropped. */
int inart_rounding_repair(const struct inart_topo *t, const struct inart_cand *c,
			  const struct inart_plan *plan, struct inart_assign *a);

#endif
