/*
 * milp: CBC through its C interface (see milp.h).  Logging is off, the time
 * limit is elapsed (wall-clock) time, a start solution is handed to CBC as its
 * first incumbent (so the result is never worse than it), and the status is
 * read from CBC: proven optimal, or stopped by a limit with an incumbent and
 * a bound.  Ownership: the CBC model lives for one call.
 */
#include "cp/planner/milp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/slab.h"

/* What a proof "nothing below the cutoff" is worth less than the cutoff:
 * more than CBC's cutoff increment. */
#define MILP_CUTOFF_SLACK 1e-4

static void set_limits(Cbc_Model *m, const struct inart_milp_opt *o)
{
	Cbc_setLogLevel(m, 0);
	Cbc_setParameter(m, "log", "0");
	Cbc_setParameter(m, "slog", "0");
	if (o->time_limit_s > 0) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%g", o->time_limit_s);
		Cbc_setMaximumSeconds(m, o->time_limit_s);
		Cbc_setParameter(m, "timeMode", "elapsed");
		Cbc_setParameter(m, "sec", buf);
	}
	if (o->max_nodes > 0) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%d", o->max_nodes);
		Cbc_setParameter(m, "maxNodes", buf);
	}
}

/* A start solution for CBC.  CBC 2.10's preprocessing crashed
 * (CglPreProcess::postProcess) on our models when given a start, with either
 * preprocess mode: with a start, preprocessing is off. */
static int set_start(Cbc_Model *m, const struct inart_milp_model *mm)
{
	int *idx = malloc(sizeof(int) * ((size_t)mm->n_cols + 1));

	if (idx == NULL)
		return -ENOMEM;
	for (int i = 0; i < mm->n_cols; i++)
		idx[i] = i;
	Cbc_setParameter(m, "preprocess", "off");
	Cbc_setMIPStartI(m, mm->n_cols, idx, mm->mip_start);
	free(idx);
	return 0;
}

/* A model without its fixed columns (lb == ub): their activity moves to
 * the row bounds.  keep[j]: new index of column j, or -1 (fixed).  Its
 * arrays, sized for every column of the full model, are one block. */
struct reduced {
	struct inart_milp_model m;
	const struct inart_milp_model *full;
	void *block; /* the arrays below (reduced_lay_out) */
	CoinBigIndex *start;
	int *index, *keep, n_keep;
	double *value, *obj, *clb, *cub, *rlb, *rub, *mip, obj_const;
	char *is_int;
};

/* keep and start per column, index and value per entry, then obj, clb, cub
 * (and mip where the full model has a start) per column, rlb and rub per
 * row, is_int per column. */
static void reduced_lay_out(void *obj, struct inart_slab *s)
{
	struct reduced *r = obj;
	const struct inart_milp_model *mm = r->full;
	size_t nc = (size_t)mm->n_cols + 1, nr = (size_t)mm->n_rows + 1;
	size_t nz = (size_t)mm->start[mm->n_cols] + 1;
	double **per_col[] = {&r->obj, &r->clb, &r->cub}, **per_row[] = {&r->rlb, &r->rub};

	r->keep = inart_slab_take(s, nc, sizeof(*r->keep));
	r->start = inart_slab_take(s, nc, sizeof(*r->start));
	r->index = inart_slab_take(s, nz, sizeof(*r->index));
	r->value = inart_slab_take(s, nz, sizeof(*r->value));
	for (size_t i = 0; i < sizeof(per_col) / sizeof(per_col[0]); i++)
		*per_col[i] = inart_slab_take(s, nc, sizeof(double));
	r->mip = mm->mip_start ? inart_slab_take(s, nc, sizeof(*r->mip)) : NULL;
	for (size_t i = 0; i < sizeof(per_row) / sizeof(per_row[0]); i++)
		*per_row[i] = inart_slab_take(s, nr, sizeof(double));
	r->is_int = inart_slab_take(s, nc, sizeof(*r->is_int));
}

static void shift_bound(double *b, double delta)
{
	if (*b > -1e30 && *b < 1e30)
		*b -= delta;
}

/* Copy the kept columns and move the fixed ones into the row bounds. */
static void reduce_fill(const struct inart_milp_model *mm, struct reduced *r)
{
	CoinBigIndex nz = 0;

	memcpy(r->rlb, mm->rlb, sizeof(double) * (size_t)mm->n_rows);
	memcpy(r->rub, mm->rub, sizeof(double) * (size_t)mm->n_rows);
	for (int j = 0; j < mm->n_cols; j++) {
		int k = r->keep[j];

		if (k < 0) {
			double v = mm->clb[j];

			r->obj_const += mm->obj[j] * v;
			for (CoinBigIndex e = mm->start[j]; e < mm->start[j + 1] && v != 0; e++) {
				shift_bound(&r->rlb[mm->index[e]], mm->value[e] * v);
				shift_bound(&r->rub[mm->index[e]], mm->value[e] * v);
			}
			continue;
		}
		r->start[k] = nz;
		for (CoinBigIndex e = mm->start[j]; e < mm->start[j + 1]; e++) {
			r->index[nz] = mm->index[e];
			r->value[nz++] = mm->value[e];
		}
		r->obj[k] = mm->obj[j];
		r->clb[k] = mm->clb[j];
		r->cub[k] = mm->cub[j];
		r->is_int[k] = mm->is_int[j];
		if (r->mip != NULL)
			r->mip[k] = mm->mip_start[j];
	}
	r->start[r->n_keep] = nz;
}

static int reduce(const struct inart_milp_model *mm, struct reduced *r)
{
	*r = (struct reduced){.full = mm};
	r->block = inart_slab_block(r, reduced_lay_out);
	if (r->block == NULL)
		return -ENOMEM;
	for (int j = 0; j < mm->n_cols; j++)
		r->keep[j] = mm->clb[j] == mm->cub[j] ? -1 : r->n_keep++;
	reduce_fill(mm, r);
	r->m =
	    (struct inart_milp_model){mm->n_rows, r->n_keep, r->start, r->index, r->value,  r->obj,
				      r->clb,	  r->cub,    r->rlb,   r->rub,	 r->is_int, r->mip};
	return 0;
}

static int solve_model(const struct inart_milp_model *mm, const struct inart_milp_opt *o,
		       double *sol, struct inart_milp_result *res, struct inart_err *err)
{
	Cbc_Model *m = Cbc_newModel();
	const double *best;
	int rc = 0;

	if (m == NULL)
		return inart_err_set(err, -ENOMEM, "milp: out of memory");
	Cbc_loadProblem(m, mm->n_cols, mm->n_rows, mm->start, mm->index, mm->value, mm->clb,
			mm->cub, mm->obj, mm->rlb, mm->rub);
	for (int i = 0; i < mm->n_cols; i++)
		if (mm->is_int[i])
			Cbc_setInteger(m, i);
	Cbc_setObjSense(m, 1.0);
	set_limits(m, o);
	if (o->has_cutoff)
		Cbc_setCutoff(m, o->cutoff);
	if (mm->mip_start != NULL && (rc = set_start(m, mm)) < 0) {
		rc = inart_err_set(err, rc, "milp: out of memory");
		goto out;
	}
	Cbc_solve(m);
	res->bound = Cbc_getBestPossibleObjValue(m);
	best = Cbc_bestSolution(m);
	if (best == NULL) {
		if (o->has_cutoff && Cbc_status(m) == 0 && !Cbc_isSecondsLimitReached(m) &&
		    !Cbc_isNodeLimitReached(m) && !Cbc_isAbandoned(m)) {
			/* searched to the end: nothing below the cutoff, up to
			 * CBC's cutoff increment (1e-5 by default; the
			 * objective is of order one, route_matrix.h) */
			res->bound = o->cutoff - MILP_CUTOFF_SLACK;
			rc = -ERANGE;
		} else if (Cbc_isProvenInfeasible(m))
			rc = inart_err_set(err, -EINVAL, "milp: the model is infeasible");
		else
			rc =
			    inart_err_set(err, -ETIMEDOUT, "milp: no integral solution within %g s",
					  o->time_limit_s);
		goto out;
	}
	memcpy(sol, best, sizeof(double) * (size_t)mm->n_cols);
	res->value = Cbc_getObjValue(m);
	res->optimal = Cbc_isProvenOptimal(m);
out:
	Cbc_deleteModel(m);
	return rc;
}

/* A model whose columns are all fixed: optimal if every row holds. */
static int all_fixed(const struct reduced *r, struct inart_milp_result *res, struct inart_err *err)
{
	for (int i = 0; i < r->m.n_rows; i++)
		if (r->rlb[i] > 1e-7 || r->rub[i] < -1e-7)
			return inart_err_set(err, -EINVAL, "milp: the model is infeasible");
	res->optimal = 1;
	res->value = res->bound = 0;
	return 0;
}

/*
 * Fixed columns are taken out before CBC sees the model: its preprocessing
 * (CglPreProcess, CBC 2.10) crashed on neighbourhood models with many fixed
 * columns, and the smaller model is faster anyway.
 */
int inart_milp_solve(const struct inart_milp_model *mm, const struct inart_milp_opt *o, double *sol,
		     struct inart_milp_result *res, struct inart_err *err)
{
	struct reduced r;
	double *rsol = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	res->value = res->bound = NAN;
	rc = reduce(mm, &r);
	if (rc == 0 && (rsol = malloc(sizeof(double) * ((size_t)r.n_keep + 1))) == NULL)
		rc = -ENOMEM;
	if (rc < 0) {
		rc = inart_err_set(err, rc, "milp: out of memory");
		goto out;
	}
	if (r.n_keep == 0) /* everything fixed: feasible or not */
		rc = all_fixed(&r, res, err);
	else if (o->has_cutoff) {
		struct inart_milp_opt ro = *o;

		ro.cutoff -= r.obj_const; /* the fixed columns' part */
		rc = solve_model(&r.m, &ro, rsol, res, err);
	} else {
		rc = solve_model(&r.m, o, rsol, res, err);
	}
	res->bound += r.obj_const;
	if (rc < 0)
		goto out;
	res->value += r.obj_const;
	for (int j = 0; j < mm->n_cols; j++)
		sol[j] = r.keep[j] < 0 ? mm->clb[j] : rsol[r.keep[j]];
out:
	free(rsol);
	free(r.block);
	return rc;
}
