/*
 * plan: what a planner decides and what the evaluator judges.
 *
 * For every job: the split of its gradient among its candidate PSs (split[i]
 * is the share of job->ps[i]; shares are >= 0 and sum to 1), one flow per
 * (worker, PS with a non-zero share) naming the aggregation point of that
 * worker's contribution (an INA switch, or the PS itself: no in-network
 * aggregation) and the path from the worker to it, and one tree entry per
 * (INA switch, PS) where that PS's shard is merged, with the switch's parent
 * (the PS, or another INA switch of the same (job, PS): multi-level trees) and
 * the path from the switch to the parent.  Paths are node-number sequences
 * from the first to the last node, both included.
 *
 * A job may instead be planned as a ring all-reduce (the `ring` baseline: no
 * PS, no INA): `ring` lists one hop per worker, hop i being the path from the
 * i-th worker of the ring to the next one (the last hop closes the ring); such
 * a job has no flows and no trees, and its split is not used.
 *
 * Plans are built by planners and by the plan reader and are not checked
 * here: inart_evaluate() is the one judge of validity.
 *
 * Ownership: the plan owns every array in it; paths passed in are copied.
 */
#ifndef INART_PLAN_H
#define INART_PLAN_H

#include "cp/model/jobs.h"

struct inart_flow {
	int worker, ps, agg; /* node numbers; agg == ps: no INA */
	int n_path;
	int *path;
};

struct inart_tree {
	int sw, ps, parent; /* node numbers; parent == ps or another switch */
	int n_path;
	int *path;
};

struct inart_ring_hop {
	int n_path;
	int *path; /* from one worker of the ring to the next */
};

struct inart_job_plan {
	int n_ps;
	double *split; /* n_ps shares, in the order of job->ps */
	int n_flows, cap_flows;
	struct inart_flow *flows;
	int n_trees, cap_trees;
	struct inart_tree *trees;
	int n_ring, cap_ring; /* > 0: a ring all-reduce (no flows, no trees) */
	struct inart_ring_hop *ring;
};

/* What the best lower bound a planner proved comes from. */
enum inart_bound_source {
	INART_BOUND_NONE = 0,
	INART_BOUND_LP,		/* the JOINT LP relaxation over the candidates */
	INART_BOUND_CBC,	/* CBC's best bound on the MILP over the candidates */
	INART_BOUND_LP_PARTIAL, /* a column generation stopped by its time limit:
				   its Lagrangian bound or the access-link bound,
				   weaker than the LP optimum */
	INART_BOUND_BNB,	/* the branch-and-bound over share boxes and tree
				   configurations (bnb.h): min over its open nodes */
	INART_BOUND_LOAD,	/* ring_bound_s only: the fixed loads of ring jobs
				   and access links (ringmix.h) */
	INART_BOUND_CBC_LIMIT,	/* ring_bound_s only: CBC's best bound on a MILP
				   whose search its time limit ended (not proven
				   optimal); INART_BOUND_CBC there: CBC proved it */
	INART_BOUND_STREAM,	/* ring_bound_s only: the load bound raised by the
				   PS jobs' unsplittable streams around the ring
				   jobs' loads (stream_bound.h) */
};
/* These bounds are over the plans whose jobs all go through PSs along the
 * candidates; a plan with ring jobs is bounded by ring_bound_s instead. */

/* How CBC's search for the `milp` plan ended. */
enum inart_milp_status {
	INART_MILP_NONE = 0,   /* not a milp plan */
	INART_MILP_OPTIMAL,    /* proven optimal (within the candidates) */
	INART_MILP_TIME_LIMIT, /* the time limit ended the search: an incumbent */
};

/* Names as written in plan files ("lp", "cbc", "lp-partial", "bnb", "load",
 * "cbc-limit"; "optimal",
 * "time_limit"), NULL for NONE; the parsers return -1 for unknown names. */
const char *inart_bound_source_name(enum inart_bound_source s);
int inart_bound_source_parse(const char *name);
const char *inart_milp_status_name(enum inart_milp_status s);
int inart_milp_status_parse(const char *name);

struct inart_plan {
	char *algorithm;
	int n_jobs;
	struct inart_job_plan *jobs; /* in the order of the jobs set */
	/* Filled by planners / the evaluator; NaN when unknown. */
	double comm_time_s, push_time_s, pull_time_s;
	double lp_bound_s;   /* a lower bound on comm time, NaN if none */
	double plan_time_s;  /* wall-clock planning time */
	double split_gap;    /* phase-1 relative duality gap, NaN if none */
	int rounding_trials; /* phase-2 trials, 0 if none */
	double phase2_lp_s;  /* phase-2 LP optimum at the final split, NaN if none */
	int rounds;	     /* phase 1/2 iterations run, 0 if none */
	char *origin;	     /* NULL, or the baseline whose routes the planner
				kept because they beat its own (owned) */
	double best_bound_s; /* the best proven lower bound, NaN if none */
	enum inart_bound_source bound_source; /* where best_bound_s comes from */
	enum inart_milp_status milp_status;   /* milp plans only */
	/* inart and bound: a lower bound on every plan of the search with at
	 * least one job planned as a ring all-reduce (ringmix.h); NaN if none.
	 * The search's bound is min(best_bound_s, ring_bound_s). */
	double ring_bound_s;
	/* where ring_bound_s comes from: the bound of the subset of ring jobs
	 * that attains the minimum (load, lp, lp-partial, cbc: CBC proved that
	 * subset's MILP optimal, cbc-limit: CBC's bound at its time limit) */
	enum inart_bound_source ring_bound_source;
};

/* An empty plan shaped after the jobs: split all zero, no flows, no trees. */
struct inart_plan *inart_plan_create(const struct inart_jobs *js, const char *algorithm);
void inart_plan_destroy(struct inart_plan *p);

/* Deep copy (NULL + errno on failure). */
struct inart_plan *inart_plan_clone(const struct inart_plan *p);

/* Replace the algorithm name. 0 or -ENOMEM. */
int inart_plan_set_algorithm(struct inart_plan *p, const char *algorithm);

/* Append a flow / tree to job j (path copied).  0 or -ENOMEM. */
int inart_plan_add_flow(struct inart_plan *p, int j, int worker, int ps, int agg, const int *path,
			int n_path);
int inart_plan_add_tree(struct inart_plan *p, int j, int sw, int ps, int parent, const int *path,
			int n_path);

/* Append a ring hop to job j (path copied).  0 or -ENOMEM. */
int inart_plan_add_ring_hop(struct inart_plan *p, int j, const int *path, int n_path);

/* 1 if some job of p is planned as a ring all-reduce. */
int inart_plan_has_ring(const struct inart_plan *p);

/* Drop every flow, tree and ring hop of job j (the split stays). */
void inart_plan_clear_routes(struct inart_plan *p, int j);

/* Drop the flows and trees of every PS whose share is 0 (a plan may route
 * zero-share PSs while planning; the final plan does not). */
void inart_plan_prune_zero(struct inart_plan *p, const struct inart_jobs *js);

/* Set shares below eps to 0 and renormalize each job's split to sum 1. */
void inart_plan_clean_split(struct inart_plan *p, double eps);

#endif
