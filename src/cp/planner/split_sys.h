/*
 * split_sys: the linear load model that phase 1 (split.c) optimizes over:
 * a plan's routes compiled into utilization coefficients, one column per
 * share (job j, PS p), one row per distinct resource constraint, kept both
 * by row (CSR) and by column (CSC).  Internal to the planner.
 *
 * Invariants: rows are distinct; coefficients are scaled so that the even
 * split has T = 1 (scale converts back to seconds).  Ownership: the arrays
 * belong to the model, freed by inart_split_sys_free (which also zeroes it).
 */
#ifndef INART_SPLIT_SYS_H
#define INART_SPLIT_SYS_H

#include "cp/model/plan.h"

/* The compiled linear load model. */
struct inart_split_sys {
	int n_jobs, n_var, n_res;
	int nnz;      /* entries of U (the merged system) */
	int *job_off; /* n_jobs + 1: shares of job j are job_off[j] .. job_off[j+1] */
	int *row_off, *row_var;
	double *row_u; /* CSR by resource */
	int *col_off, *col_res;
	double *col_u; /* CSC by share */
	void *block;   /* the CSR and CSC arrays, one allocation */
	double scale;  /* seconds per normalized unit */
};

/* Compile plan's routes into s; if raw_load is non-NULL, also add the loads
 * of the plan's current split to it (arcs, then nodes, in Gbit).  0 or
 * -errno with err (a plan that does not route every (job, PS)). */
int inart_split_sys_build(struct inart_split_sys *s, const struct inart_topo *t,
			  const struct inart_jobs *js, const struct inart_plan *plan,
			  double *raw_load, struct inart_err *err);
void inart_split_sys_free(struct inart_split_sys *s);

#endif
