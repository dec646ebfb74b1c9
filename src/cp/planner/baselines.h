/*
 * baselines: the systems InArt is compared against, as plans over the same
 * topology and jobs (all judged by the same evaluator).
 *
 *   ps       one PS (the candidate that gives the lowest time), no INA,
 *            ECMP shortest paths.
 *   byteps   all candidate PSs, even split, no INA, ECMP shortest paths.
 *   switchml one INA switch aggregates all workers of a job, one PS
 *            (the best (switch, PS) pair among those tried).
 *   atp      one PS; each worker aggregates at its first INA switch (on its
 *            shortest path) with tree budget left, else at the PS's ToR,
 *            else at the PS.
 *   inart-sp phase-1 split with shortest paths and on-path INA (first INA
 *            switch with budget left on each worker's path).
 * Each returns a new plan (owned by the caller) that has passed the evaluator.
 */
#ifndef INART_BASELINES_H
#define INART_BASELINES_H

#include "cp/model/paths.h"
#include "cp/model/plan.h"

int inart_baseline_ps(const struct inart_topo *t, const struct inart_jobs *js,
		      struct inart_paths *paths, struct inart_plan **out, struct inart_err *err);
int inart_baseline_byteps(const struct inart_topo *t, const struct inart_jobs *js,
			  struct inart_paths *paths, struct inart_plan **out,
			  struct inart_err *err);
int inart_baseline_switchml(const struct inart_topo *t, const struct inart_jobs *js,
			    struct inart_paths *paths, struct inart_plan **out,
			    struct inart_err *err);
int inart_baseline_atp(const struct inart_topo *t, const struct inart_jobs *js,
		       struct inart_paths *paths, struct inart_plan **out, struct inart_err *err);
int inart_baseline_inart_sp(const struct inart_topo *t, const struct inart_jobs *js,
			    struct inart_paths *paths, struct inart_plan **out,
			    struct inart_err *err);

/* The one registry of the baselines: InArt's search starts from their
 * plans and the guard checks against them, in this order; `inart plan
 * --algo NAME` runs the one of that name. */
typedef int (*inart_baseline_fn)(const struct inart_topo *t, const struct inart_jobs *js,
				 struct inart_paths *paths, struct inart_plan **out,
				 struct inart_err *err);
struct inart_baseline_entry {
	const char *name;
	inart_baseline_fn fn;
};
#define INART_BASELINE_N 5
extern const struct inart_baseline_entry inart_baseline_table[INART_BASELINE_N];
/* The entry of that name, or NULL. */
const struct inart_baseline_entry *inart_baseline_find(const char *name);

#endif
