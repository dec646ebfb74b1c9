/*
 * route_lp: phase 2 of the InArt planner as a linear program over the
 * candidate routes (cand.h), solved by COIN-OR CLP (column generation), and
 * the same model with integrality solved by COIN-OR CBC (the exact `milp`
 * baseline).  docs/formulation.md states the model; in short:
 *
 * Variables:
 *   x[c] >= 0  for each flow choice c of cand flow f: the fraction of the
 *              group's workers routed by choice c; sum_c x[c] = 1 per flow.
 *   z[c] >= 0  for each tree choice c of cand tree t: the fraction of the
 *              tree's output sent by choice c; u_t = sum_c z[c] <= 1 is the
 *              tree's use.
 *   T          the communication time (objective, minimized).
 *   a[j,p]     JOINT mode only: the shares, sum_p a = 1.  Volumes are then
 *              v[c] ~ a x[c] and w[c] ~ a z[c] (sum_c v[c] = a, v <= x, and
 *              McCormick rows for W_t = sum w ~ a u_t), exact when x and z
 *              are integral and groups have one member; FIXED mode uses the
 *              constants of the given split.
 * Rows: every worker aggregated at a tree needs that tree's output
 *   (u_t >= share of each group member choosing t, and of each child tree
 *   choosing t; JOINT also on volumes); tree budget per switch (sum of u_t <=
 *   trees); per link push+pull load <= T * residual (the load is the same in
 *   both directions); per INA switch aggregation input <= T * agg_gbps.
 *
 * The LP optimum is a lower bound on the communication time of every plan
 * whose routes are among the candidates (FIXED: for the given split; JOINT:
 * for any split).  The MILP optimum is the best such plan.
 */
#ifndef INART_ROUTE_LP_H
#define INART_ROUTE_LP_H

#include "cp/model/cand.h"

enum inart_lp_mode {
	INART_LP_FIXED_SPLIT = 0, /* shares from the plan */
	INART_LP_JOINT = 1,	  /* shares are variables too */
};

struct inart_route_lp_opt {
	enum inart_lp_mode mode;
	int integer;		     /* 1: MILP by CBC */
	double time_limit_s;	     /* <= 0: none.  MILP: CBC's limit (elapsed time).
				      * LP: a limit on the whole call; column
				      * generation may then stop early with a feasible
				      * solution: optimal = 0, objective_s its value (an
				      * upper bound on the LP optimum) and bound_s a valid
				      * but weaker bound (Lagrangian, access links) */
	int no_colgen;		     /* LP: 1 loads every column at once instead of
				      * pricing them in (same optimum; for tests) */
	const double *warm_x;	     /* LP: NULL, or cand->n_choices values (a previous
				      * result's x, e.g. for another split or mode):
				      * choices with a positive value are loaded from
				      * the start.  Same optimum, fewer pricing rounds.
				      * A JOINT LP without it starts from the FIXED LP
				      * at the even split (solved first, included in
				      * solve_s) */
	const signed char *tree_fix; /* NULL, or per cand tree: -1 free, 0 closed
				      * (u_t = 0), 1 open (u_t = 1): a tree
				      * configuration (LP and MILP) */
	/* MILP only: a start and a neighbourhood of it. */
	const double *start_x;	   /* NULL, or an integral point: n_choices values
				    * as in the result's x (flow choices: share of
				    * the group's members; tree choices: 0/1); CBC
				    * starts from it, so the result is never worse */
	const double *start_split; /* with start_x: shares per job then PS */
	const char *free_pair;	   /* NULL: all free; else per (job, PS) pair (jobs
				    * in order, PSs in job order): 0 fixes the
				    * pair's flow and tree choices to start_x */
	int max_nodes;		   /* CBC's node limit, <= 0: none */
	const char *free_job;	   /* NULL: all free; else per job: 0 fixes its
				    * shares to start_split */
	/* JOINT only: a box for the shares, per (job, PS) pair (jobs in order,
	 * PSs in job order); NULL: [0, 1].  The solve then covers only the plans
	 * whose shares lie in the box, and the products a x, a z, a u get the
	 * McCormick rows of the box (v <= hi x, v >= lo x, ...), much tighter
	 * than those of [0, 1] when the box is narrow (spatial branching,
	 * bound.h). */
	const double *share_lo, *share_hi;
	/* NULL: every job; else per job: 0 leaves the job out (no columns, no
	 * load).  Leaving jobs out relaxes the model: every plan of all jobs,
	 * restricted to the others, is a plan of them at most as slow. */
	const char *job_on;
	/* NULL, or per link (indexed by its even arc; inart_topo_n_arcs values):
	 * a fixed load in Gbit added to the link's row, e.g. other jobs' fixed
	 * routes (ringmix.h).  The row is per link with the smaller residual of
	 * the two directions, so a valid value is the fixed load of the
	 * direction(s) with that residual. */
	const double *link_extra;
	/* MILP: > 0, only plans faster than this many seconds are wanted: CBC
	 * prunes every node whose bound reaches it (a known plan's time), and
	 * when it proves that no plan is faster the solve returns -ERANGE with
	 * bound_s just below cutoff_s (a lower bound) and no solution;
	 * -ETIMEDOUT then also sets bound_s (CBC's bound, at most the
	 * cutoff). */
	double cutoff_s;
};

struct inart_route_lp_result {
	double objective_s; /* LP optimum, or MILP best integral solution */
	double bound_s;	    /* a lower bound: LP optimum, or CBC's best bound
			     * (with a neighbourhood: only for that neighbourhood) */
	int optimal;	    /* 1 if solved to optimality (MILP: proven by CBC) */
	double *x;	    /* cand->n_choices values: x for flow choices, z for
			     * tree choices (owned; free with _result_free) */
	double *split;	    /* JOINT: shares, per job then per PS;
			     * FIXED: a copy of the plan's split (in x's block) */
	/* Statistics of the model (for benchmarks and reports). */
	int n_rows, n_cols;
	long n_nonzeros;
	int n_cols_used;	 /* columns CLP saw (column generation) */
	int n_rows_used;	 /* rows CLP saw (rows come with their columns) */
	int colgen_rounds;	 /* pricing rounds */
	double build_s, solve_s; /* wall-clock time building / solving */
};

void inart_route_lp_result_free(struct inart_route_lp_result *r);

/* Build and solve.  In FIXED mode plan supplies the split (and is not
 * modified); in JOINT mode plan is not read and may be NULL.  Returns 0,
 * -ENOMEM, -EINVAL (err), -ETIMEDOUT when the MILP found no integral
 * solution (the LP no feasible solution) within the time limit, or -ERANGE
 * (cutoff_s: nothing faster; res->bound_s set, nothing else). */
int inart_route_lp_solve(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_cand *c, const struct inart_plan *plan,
			 const struct inart_route_lp_opt *opt, struct inart_route_lp_result *res,
			 struct inart_err *err);

/* A bound valid for every plan (in seconds): a single-homed worker's access
 * link carries its whole gradient in each direction.  job_on as in the
 * options (NULL: every job).  0 when no worker is single-homed. */
double inart_route_lp_access_bound(const struct inart_topo *t, const struct inart_jobs *js,
				   const char *job_on);

/*
 * A JOINT LP kept loaded in CLP for many solves that differ only in the
 * share box and the tree fixing (the branch-and-bound of bnb.h).  Every
 * column is loaded (no column generation), so it is meant for models of up
 * to a few ten thousand choices.  Each solve starts from the basis given, or
 * from the last one, with the dual simplex.
 */
struct inart_route_lp_model;

struct inart_route_lp_node {
	const double *share_lo, *share_hi; /* per pair (as share_lo in the options) */
	const signed char *tree_fix;	   /* NULL or per cand tree: -1, 0, 1 */
	const unsigned char *basis;	   /* NULL: the last solve's; else from a point */
};

struct inart_route_lp_point { /* outputs; NULL arrays are not filled */
	double value;	      /* the LP optimum (s) */
	double *split;	      /* per pair */
	double *u, *w;	      /* per cand tree: use u_t and output W_t */
	unsigned char *basis; /* inart_route_lp_model_basis_size() bytes */
};

int inart_route_lp_model_create(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_cand *c, struct inart_route_lp_model **out,
				struct inart_err *err);
void inart_route_lp_model_destroy(struct inart_route_lp_model *m);
int inart_route_lp_model_n_pairs(const struct inart_route_lp_model *m);
size_t inart_route_lp_model_basis_size(const struct inart_route_lp_model *m);
/* 0: optimal (pt filled); 1: infeasible; -EIO: CLP failed (also from a
 * fresh start). */
int inart_route_lp_model_solve(struct inart_route_lp_model *m, const struct inart_route_lp_node *nd,
			       struct inart_route_lp_point *pt);

#endif
