/*
 * split: phase 1 of the InArt planner -- how to divide each job's gradient
 * among its candidate PSs for fixed routes.
 *
 * With the routes fixed, the load of every directed link and every INA switch
 * is linear in the shares a_{j,p}: load_r(a) = sum_{j,p} a_{j,p} c_{r,j,p},
 * where c counts the streams of (j, p) through resource r times G_j (push and
 * pull, as in evaluate.h).  Phase 1 solves
 *     min T  s.t.  load_r(a) <= T cap_r  for every resource r,
 *                  sum_p a_{j,p} = 1,  a >= 0,
 * by a Lagrange-multiplier method: multipliers lambda_r >= 0, sum lambda = 1,
 * on the capacity constraints.  For fixed lambda the Lagrangian separates per
 * job and its minimum, g(lambda) = sum_j min_p sum_r lambda_r c_{r,j,p}/cap_r,
 * is a lower bound on the optimum (weak duality).  The method alternates a
 * mirror-descent (exponentiated gradient) step on the shares of a smoothed
 * max with lambda set to the softmax weights of the resource utilizations,
 * keeps the best primal T(a) and the best dual bound g(lambda) seen, and stops
 * when the relative duality gap (T - g) / T falls below tol or after max_iter
 * iterations.  When the first-order steps stall, the primal step becomes a
 * damped Newton step on the same smoothed Lagrangian (a polish; split.c).
 *
 * Every (job, PS) must be routed in the plan (flows for every worker and
 * every PS, even those with share 0): the routes define c.
 */
#ifndef INART_SPLIT_H
#define INART_SPLIT_H

#include "cp/model/plan.h"

struct inart_split_opt {
	int max_iter; /* default 3000 */
	double tol;   /* relative duality gap to stop at; default 1e-4 */
};

struct inart_split_result {
	double primal_s; /* T of the returned shares */
	double dual_s;	 /* best lower bound found (for these routes) */
	double gap;	 /* (primal - dual) / primal */
	int iters;
	int polish_iters; /* of which second-order polish steps (see split.c) */
};

void inart_split_opt_default(struct inart_split_opt *o);

/* Compute shares for plan's routes and store them in plan->jobs[j].split.
 * 0 or -errno (err says why, e.g. a job with a PS that has no routes). */
int inart_split_optimize(const struct inart_topo *t, const struct inart_jobs *js,
			 struct inart_plan *plan, const struct inart_split_opt *opt,
			 struct inart_split_result *res, struct inart_err *err);

/* The loads of the plan's current split under the phase-1 model (sum over
 * (j, p) of split * c): arc_gbit[e] = push + pull volume on arc e (n_arcs
 * entries), node_gbit[v] = aggregation input of INA switch v (n_nodes
 * entries), in Gbit.  They must equal the evaluator's.  0 or -errno (the same
 * route checks as inart_split_optimize). */
int inart_split_loads(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_plan *plan, double *arc_gbit, double *node_gbit,
		      struct inart_err *err);

/* The same problem solved exactly by CLP (for tests and cross-checks). */
int inart_split_exact(const struct inart_topo *t, const struct inart_jobs *js,
		      struct inart_plan *plan, double *t_opt_s, struct inart_err *err);

#endif
