/*
 * route_matrix: the matrix of the route LP / MILP (docs/formulation.md,
 * sections 4-5): columns, rows and triplets built in one pass over the
 * candidates, then compressed columns.  route_lp.c solves what this builds.
 *
 * Invariants: column 0 is T' (T = scale T'); resource rows (a link at its
 * even arc, an INA switch) are divided by their capacity and by `scale` and
 * hold -T'; rows and columns are created on first use, so only resources
 * that some column touches exist; lazy rows are redundant while their
 * choice columns are 0 (column generation loads them with the first one).
 *
 * Ownership: struct lpb owns every array it builds (inart_route_matrix_free);
 * the caller owns the struct and the inputs it points to.
 */
#ifndef INART_ROUTE_MATRIX_H
#define INART_ROUTE_MATRIX_H

#include <float.h>

#include "common/err.h"
#include "cp/model/cand.h"
#include "cp/planner/colgen.h"

#define LP_INF DBL_MAX

struct lpb {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_cand *c;
	const struct inart_plan *plan;
	int joint, integer;
	int subst;		  /* JOINT LP: x = s + v, z = s + w (no v <= x rows) */
	double scale;		  /* seconds per unit of T' */
	const double *slo, *shi;  /* JOINT: box of the shares per pair, or NULL */
	const char *job_on;	  /* per job: 0 left out; NULL: all in */
	const double *link_extra; /* per link (even arc): fixed load (Gbit), or NULL */
	int *box_row;		  /* kept model: per cand tree its 4 McCormick rows */

	int n_cols;
	size_t cap_cols;
	double *clb, *cub;
	char *cint;

	int n_rows;
	size_t cap_rows;
	double *rlb, *rub;
	char *rres;  /* 1: resource row (contains T') */
	char *rlazy; /* 1: redundant while its choice columns are all 0 (column
		      * generation loads it with the first such column) */

	size_t n_nz, cap_nz;
	int *trow, *tcol;
	double *tval;

	void *block;   /* the fixed-size arrays below, one allocation */
	int *arc_row;  /* per link (at its even arc), -1 none */
	int *node_row; /* per node, -1 none */
	int *col_x;    /* per choice: x (flow) or z (tree) column, -1 none */
	int *col_v;    /* per choice: v or w column (JOINT), -1 none */
	int *col_u;    /* per cand tree, -1 inactive */
	int *col_a;    /* per job-PS pair (JOINT) */
	int *ps_base;  /* per job: first pair */
	int n_pairs;
	int *link_row, *link_stamp; /* per cand tree: linking row of the current child */
	int *vlink_row;		    /* JOINT: the same on volumes (v, w <= W) */
	int *col_w;		    /* per cand tree (JOINT): W_t = sum of its w = a u_t */
	double *arc_const;	    /* per arc: choice-independent load (Gbit) */
	char *dup;		    /* per choice: same route as an earlier one of its owner */
	int oom;
};

/* Build the model of b's mode (joint, integer, box, job_on, link_extra set
 * by the caller).  0, -ENOMEM or -EINVAL (err set). */
int inart_route_matrix_build(struct lpb *b, struct inart_err *err);

/* Free every array of b (not b itself). */
void inart_route_matrix_free(struct lpb *b);

/* Compressed columns of b's triplets (counting sort by column): arrays the
 * caller frees.  0 or -ENOMEM. */
int inart_route_matrix_csc(const struct lpb *b, CoinBigIndex **startp, int **indexp,
			   double **valuep);

/* A time unit (seconds): one job's gradient over the fastest resource. */
double inart_route_matrix_scale(const struct inart_topo *t, const struct inart_jobs *js);

/* The smaller residual capacity of the two directions of arc e's link. */
double inart_route_matrix_link_cap(const struct inart_topo *t, int e);

#endif
