/*
 * planner: every algorithm behind one entry point.
 *
 * InArt proper ("inart") is the search of search.h (phase 1, split.h, and
 * phase 2, route_lp.h + rounding.h, iterated from several starts, then the
 * large-neighbourhood search of lns.h within the time limit), followed by the
 * baseline guard.  The baselines (baselines.h, ring.h) and the bounds ("lp":
 * JOINT LP relaxation, "milp": CBC on the integral model, with its status)
 * share the evaluator.  Every returned plan has passed the evaluator and
 * carries its comm/push/pull times and its best proven bound with the
 * bound's source.
 */
#ifndef INART_PLANNER_H
#define INART_PLANNER_H

#include "cp/model/cand.h"
#include "cp/model/plan.h"

/* struct inart_planner_opt is public: include/inart/inart.h. */

int inart_planner_opt_default(struct inart_planner_opt *o);

/* Names of the algorithms in display order; NULL-terminated. */
extern const char *const inart_algorithms[];

/* 1 if name is an algorithm. */
int inart_algorithm_known(const char *name);

/* 1 if name is another system's way (ps, byteps, switchml, atp, ring): a
 * baseline InArt's gains are measured against; 0 for InArt's own
 * algorithms and bounds, and unknown names. */
int inart_algorithm_theirs(const char *name);

/* The one-line description of inart_algorithms[i] for `inart plan --help`,
 * or NULL (not listed there, or i out of range). */
const char *inart_algorithm_summary(int i);

/* Run algorithm `algo`.  On success *out is a new plan (owned by the caller)
 * with times, lp_bound_s and plan_time_s filled.  For "lp" the plan holds the
 * bound only (no routes): comm_time_s = lp_bound_s.  -errno on failure;
 * -ETIMEDOUT for "milp" without an integral solution in the time limit. */
int inart_planner_run(const char *algo, const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, struct inart_plan **out,
		      struct inart_err *err);

#endif
