/*
 * milp: a mixed-integer program solved by COIN-OR CBC, with a time limit and
 * an optional start solution (a known incumbent), reporting honestly how the
 * search ended: proven optimal or not, and CBC's best bound.  route_matrix.c
 * builds the phase-2 models it solves (route_lp.c calls it).
 */
#ifndef INART_MILP_H
#define INART_MILP_H

#include "common/err.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* ClpSolve_new() in CLP's header */
#include <coin/Cbc_C_Interface.h>
#pragma GCC diagnostic pop

struct inart_milp_model {
	int n_rows, n_cols;
	const CoinBigIndex *start; /* compressed columns, n_cols + 1 */
	const int *index;
	const double *value;
	const double *obj, *clb, *cub; /* per column; minimized */
	const double *rlb, *rub;       /* per row */
	const char *is_int;	       /* per column */
	const double *mip_start;       /* NULL, or a feasible solution (n_cols) */
};

struct inart_milp_opt {
	double time_limit_s; /* elapsed seconds, <= 0: none */
	int max_nodes;	     /* branch-and-bound nodes at most, <= 0: no limit (a
				limit that, unlike time, gives the same result on
				any machine) */
	int has_cutoff;	     /* 1: only solutions of objective below cutoff are
				wanted (CBC prunes every node whose bound reaches
				it) */
	double cutoff;
};

struct inart_milp_result {
	int optimal;  /* 1: CBC proved sol optimal */
	double value; /* objective of sol */
	double bound; /* CBC's best possible objective (a lower bound) */
};

/* sol: n_cols values of the best solution found.  0; -ETIMEDOUT when no
 * integral solution was found within the limits (res->bound is still set);
 * -ERANGE with a cutoff when CBC proved that no solution is below it
 * (res->bound = cutoff: a lower bound); -EINVAL (proven infeasible),
 * -ENOMEM. */
int inart_milp_solve(const struct inart_milp_model *m, const struct inart_milp_opt *o, double *sol,
		     struct inart_milp_result *res, struct inart_err *err);

#endif
