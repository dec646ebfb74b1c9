/*
 * colgen: solve a phase-2 LP (route_lp.h) by column generation with CLP.
 *
 * The LP is given whole, as compressed columns, with the structure column
 * generation needs: which columns are the choices of which owner (a cand
 * flow or a cand tree: cand->choices[ci] has columns col_x[ci] ..
 * col_x[ci] + unit_cols - 1), which columns belong to a cand tree itself
 * (tree_col), and which rows are lazy (redundant while their choice columns
 * are 0).  Column 0 is the objective variable (T').  The
 * owner's choice columns must sum to at most 1 in every feasible point (sum
 * x = 1, sum z = u <= 1): the Lagrangian bound of a pricing round relies on
 * it.
 */
#ifndef INART_COLGEN_H
#define INART_COLGEN_H

#include "cp/model/cand.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* ClpSolve_new() in CLP's header */
#include <coin/Clp_C_Interface.h>
#pragma GCC diagnostic pop

/* A whole LP, minimized, as compressed columns: the arrays CLP loads. */
struct inart_lp_csc {
	int n_rows, n_cols;
	const CoinBigIndex *start; /* n_cols + 1 */
	const int *index;
	const double *value;
	const double *obj, *clb, *cub; /* per column */
	const double *rlb, *rub;       /* per row */
};

struct inart_colgen_lp {
	struct inart_lp_csc m;
	const char *rlazy; /* per row: lazy */
	const struct inart_cand *c;
	const int *col_x; /* per choice: first column, -1 none */
	int unit_cols;	  /* columns per choice */
	/* per cand tree: the first of its tree_cols own columns (u, and W in
	 * JOINT), -1 none.  They are loaded with the tree's first choice
	 * column, not before: a tree no loaded choice uses costs nothing. */
	const int *tree_col;
	int tree_cols;
};

struct inart_colgen_result {
	double value;	 /* objective of sol */
	double lower;	 /* a lower bound on the LP optimum (= value when optimal) */
	int optimal;	 /* 1: nothing priced out */
	int n_cols_used; /* columns CLP saw */
	int n_rows_used; /* rows CLP saw */
	int rounds;	 /* pricing rounds */
};

/* full: load every column at once (no pricing).  warm_x: NULL or
 * c->n_choices values; choices with a positive value are loaded from the
 * start.  deadline: inart_now_s() time to stop at (<= 0: none); then the
 * generation may stop early with a feasible sol (optimal = 0, lower the best
 * Lagrangian bound of a round solved to optimality, or -DBL_MAX).  sol:
 * n_cols values.  0, -ENOMEM, -ETIMEDOUT (no feasible point in time) or
 * -EINVAL (err: infeasible or not solved). */
int inart_colgen_solve(const struct inart_colgen_lp *lp, int full, const double *warm_x,
		       double deadline, double *sol, struct inart_colgen_result *res,
		       struct inart_err *err);

#endif
