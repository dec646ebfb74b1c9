/*
 * split: phase 1 of the InArt planner (see split.h).
 *
 * The plan's routes are compiled into a sparse matrix of utilization
 * coefficients, one column per share and one row per distinct resource
 * constraint, scaled so that the even split has T = 1 (split_sys.c).
 *
 * The Lagrangian method works on T(a) = max_r (U a)_r.  With multipliers
 * lambda = softmax(beta U a) (sum 1) the Lagrangian separates per job and
 * g(lambda) = sum_j min_p (U^T lambda)_{j,p} is a lower bound on the optimum.
 * Primal steps are exponentiated-gradient (mirror-descent) steps on each job's
 * simplex for the smoothed max f_beta(a) = (1/beta) log sum_r exp(beta (Ua)_r),
 * whose gradient is exactly U^T lambda; the step size is found by
 * backtracking on the mirror-descent descent condition.  The temperature beta
 * grows whenever the smoothing error (T - lambda.Ua) dominates the primal
 * optimality gap of the smoothed problem (lambda.Ua - g).  The dual bound is
 * also taken at lambda = e_r for a most loaded r (the beta -> infinity limit).
 *
 * First-order steps slow down as beta grows (the smoothed max becomes a sharp
 * ridge).  When the best gap has not halved for 50 iterations the method
 * polishes: the primal step becomes a damped (Levenberg-Marquardt) Newton step
 * on the same smoothed Lagrangian, restricted to each job's simplex (active
 * set: shares at zero with a gradient above the job's average stay there),
 * with an Armijo line search; multipliers, dual bound and beta schedule are
 * unchanged, so the method stays a Lagrangian one and its gap stays honest.
 * This path-following converges to gaps of 1e-7 in a few hundred iterations
 * where exponentiated gradient alone plateaus near 1e-3.  The polish uses a
 * dense KKT system, so it is skipped above POLISH_MAX_VARS shares.
 *
 * Invariants: every share stays > 0 during the iterations (multiplicative
 * updates and a floor of 1e-300), every lambda is a probability vector, so
 * every g(lambda) is a valid lower bound.  Ownership: everything here is local
 * to one call.
 */
#include "cp/planner/split.h"

#include <coin/Clp_C_Interface.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/slab.h"
#include "cp/planner/split_sys.h"

#define POLISH_MAX_VARS 512

void inart_split_opt_default(struct inart_split_opt *o)
{
	o->max_iter = 3000;
	o->tol = 1e-4;
}

/* ---- the Lagrangian method ---------------------------------------------- */

struct work {
	const struct inart_split_sys *s;
	void *block;		 /* the arrays below and the polish's (work_lay_out) */
	double *x, *xn, *best_x; /* shares: current, trial, best primal */
	double *y, *yn;		 /* utilizations of x and xn */
	double *lam, *lamn;	 /* multipliers for x and xn */
	double *grad;		 /* U^T lam */
	struct polish *pl;	 /* the Newton polish, or NULL: none */
};

/* y = U x; returns max_r y_r. */
static double sys_apply(const struct inart_split_sys *s, const double *x, double *y)
{
	double tmax = 0;

	memset(y, 0, sizeof(double) * (size_t)s->n_res);
	for (int v = 0; v < s->n_var; v++) {
		double xv = x[v];

		if (xv == 0)
			continue;
		for (int k = s->col_off[v]; k < s->col_off[v + 1]; k++)
			y[s->col_res[k]] += s->col_u[k] * xv;
	}
	for (int r = 0; r < s->n_res; r++)
		tmax = y[r] > tmax ? y[r] : tmax;
	return tmax;
}

/* g(e_r), lambda all on resource r (the beta -> infinity limit of the
 * softmax at a most loaded r): sum over the jobs whose every share loads r
 * of their smallest coefficient on r. */
static double unit_bound(const struct inart_split_sys *s, int r)
{
	double g = 0;
	int k = s->row_off[r], end = s->row_off[r + 1];

	for (int j = 0; j < s->n_jobs && k < end; j++) {
		int n = 0;
		double m = INFINITY;

		for (; k < end && s->row_var[k] < s->job_off[j + 1]; k++) {
			n++;
			m = s->row_u[k] < m ? s->row_u[k] : m;
		}
		if (n == s->job_off[j + 1] - s->job_off[j])
			g += m;
	}
	return g;
}

/* lam = softmax(beta y); returns the smoothed max f_beta. */
static double softmax(int n, const double *y, double tmax, double beta, double *lam)
{
	double z = 0;

	for (int r = 0; r < n; r++) {
		double e = beta * (y[r] - tmax);

		lam[r] = e > -700 ? exp(e) : 0;
		z += lam[r];
	}
	for (int r = 0; r < n; r++)
		lam[r] /= z;
	return tmax + log(z) / beta;
}

/* grad = U^T lam; returns the dual bound g(lam) = sum_j min_p grad. */
static double dual_value(const struct inart_split_sys *s, const double *lam, double *grad)
{
	double g = 0;

	for (int v = 0; v < s->n_var; v++) {
		double d = 0;

		for (int k = s->col_off[v]; k < s->col_off[v + 1]; k++)
			d += s->col_u[k] * lam[s->col_res[k]];
		grad[v] = d;
	}
	for (int j = 0; j < s->n_jobs; j++) {
		double m = INFINITY;

		for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
			m = grad[v] < m ? grad[v] : m;
		g += m;
	}
	return g;
}

static void swap_ptr(double **a, double **b)
{
	double *t = *a;

	*a = *b;
	*b = t;
}

/* Exponentiated-gradient step of size eta from w->x into w->xn; returns the
 * right-hand side of the mirror-descent descent condition minus f. */
static double eg_step(struct work *w, double eta)
{
	const struct inart_split_sys *s = w->s;
	double lin = 0, kl = 0;

	for (int j = 0; j < s->n_jobs; j++) {
		int a = s->job_off[j], b = s->job_off[j + 1];
		double m = INFINITY, z = 0;

		for (int v = a; v < b; v++)
			m = w->grad[v] < m ? w->grad[v] : m;
		for (int v = a; v < b; v++) {
			w->xn[v] = w->x[v] * exp(-eta * (w->grad[v] - m));
			z += w->xn[v];
		}
		for (int v = a; v < b; v++) {
			w->xn[v] /= z;
			if (w->xn[v] < 1e-300)
				w->xn[v] = 1e-300;
			lin += w->grad[v] * (w->xn[v] - w->x[v]);
			kl += w->xn[v] * log(w->xn[v] / w->x[v]);
		}
	}
	return lin + fmax(kl, 0) / eta;
}

/* Solve the dense n x n system a z = b in place (b becomes z) by Gaussian
 * elimination with partial pivoting; -1 if singular. */
static int dense_solve(int n, double *a, double *b)
{
	for (int c = 0; c < n; c++) {
		int piv = c;

		for (int r = c + 1; r < n; r++)
			if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
				piv = r;
		if (!(fabs(a[piv * n + c]) > 1e-300))
			return -1;
		if (piv != c) {
			double x;

			for (int k = 0; k < n; k++) {
				x = a[c * n + k];
				a[c * n + k] = a[piv * n + k];
				a[piv * n + k] = x;
			}
			x = b[c];
			b[c] = b[piv];
			b[piv] = x;
		}
		for (int r = c + 1; r < n; r++) {
			double m = a[r * n + c] / a[c * n + c];

			if (m == 0)
				continue;
			for (int k = c; k < n; k++)
				a[r * n + k] -= m * a[c * n + k];
			b[r] -= m * b[c];
		}
	}
	for (int c = n - 1; c >= 0; c--) {
		double z = b[c];

		for (int k = c + 1; k < n; k++)
			z -= a[c * n + k] * b[k];
		b[c] = z / a[c * n + c];
	}
	return 0;
}

/* Scratch of the second-order polish. */
struct polish {
	int *fidx;   /* per share: index among the free shares, or -1 */
	int *free;   /* the free shares */
	int *ent;    /* one row's free entries */
	double *ku;  /* their coefficients */
	double *kkt; /* (n_free + n_jobs)^2 */
	double *rhs;
	double *dir; /* per share */
};

/* Newton direction of f_beta at w->x restricted to the shares' simplices:
 * the Hessian is beta U^T (diag lam - lam lam^T) U (over the resources with
 * non-negligible lam), the equality rows keep every job's sum; shares at the
 * boundary whose gradient is above their job's average, or that the
 * direction would push below zero, stay fixed.  Returns 0 and pl->dir, or -1. */
static int newton_dir(struct work *w, struct polish *pl, double beta, double rho)
{
	const struct inart_split_sys *s = w->s;
	int nf, nk, again = 1, rounds = 0;

	for (int j = 0; j < s->n_jobs; j++) {
		double sx = 0, sg = 0;

		for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++) {
			sx += w->x[v];
			sg += w->x[v] * w->grad[v];
		}
		for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
			pl->fidx[v] = (w->x[v] > 1e-9 || w->grad[v] * sx <= sg) ? 0 : -1;
	}
	while (again && rounds++ < 8) {
		double dmax = 0, mu;

		nf = 0;
		for (int v = 0; v < s->n_var; v++)
			if (pl->fidx[v] >= 0) {
				pl->fidx[v] = nf;
				pl->free[nf++] = v;
			}
		nk = nf + s->n_jobs;
		memset(pl->kkt, 0, sizeof(double) * (size_t)nk * (size_t)nk);
		for (int r = 0; r < s->n_res; r++) {
			int m = 0;
			double l = w->lam[r];

			if (l < 1e-15)
				continue;
			for (int k = s->row_off[r]; k < s->row_off[r + 1]; k++)
				if (pl->fidx[s->row_var[k]] >= 0) {
					pl->ent[m] = pl->fidx[s->row_var[k]];
					pl->ku[m++] = s->row_u[k];
				}
			for (int a = 0; a < m; a++)
				for (int b = 0; b < m; b++)
					pl->kkt[pl->ent[a] * nk + pl->ent[b]] +=
					    l * pl->ku[a] * pl->ku[b];
		}
		for (int a = 0; a < nf; a++) {
			for (int b = 0; b < nf; b++) {
				double h = pl->kkt[a * nk + b] -
					   w->grad[pl->free[a]] * w->grad[pl->free[b]];

				pl->kkt[a * nk + b] = beta * h;
			}
			dmax = fmax(dmax, pl->kkt[a * nk + a]);
		}
		mu = rho * dmax + 1e-300;
		for (int a = 0; a < nf; a++) {
			int j = 0;

			while (pl->free[a] >= s->job_off[j + 1])
				j++;
			pl->kkt[a * nk + a] += mu;
			pl->kkt[a * nk + nf + j] = pl->kkt[(nf + j) * nk + a] = 1;
			pl->rhs[a] = -w->grad[pl->free[a]];
		}
		for (int j = 0; j < s->n_jobs; j++) {
			int has = 0; /* no free share: an identity row keeps it solvable */

			pl->rhs[nf + j] = 0;
			for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
				has |= pl->fidx[v] >= 0;
			if (!has)
				pl->kkt[(nf + j) * nk + nf + j] = 1;
		}
		if (dense_solve(nk, pl->kkt, pl->rhs) < 0)
			return -1;
		again = 0;
		for (int v = 0; v < s->n_var; v++) {
			pl->dir[v] = pl->fidx[v] >= 0 ? pl->rhs[pl->fidx[v]] : 0;
			if (pl->fidx[v] >= 0 && w->x[v] <= 1e-9 && pl->dir[v] < 0) {
				pl->fidx[v] = -1; /* blocked at the boundary */
				again = 1;
			}
		}
	}
	return again ? -1 : 0;
}

struct lagr_state {
	double beta, eta, t, f, d, best_p, best_d;
	double rho; /* Levenberg-Marquardt damping of the polish, relative */
};

/* Evaluate the trial shares w->xn: utilizations, primal record, smoothed
 * value (returned) and multipliers in w->lamn. */
static double trial(struct work *w, struct lagr_state *st, double *tn)
{
	const struct inart_split_sys *s = w->s;

	*tn = sys_apply(s, w->xn, w->yn);
	if (*tn < st->best_p) {
		st->best_p = *tn;
		memcpy(w->best_x, w->xn, sizeof(double) * (size_t)s->n_var);
	}
	return softmax(s->n_res, w->yn, *tn, st->beta, w->lamn);
}

/* Make the trial current; new dual bound; sharpen beta when the smoothing
 * error dominates the optimization error. */
static void accept(struct work *w, struct lagr_state *st, double tn, double fn)
{
	const struct inart_split_sys *s = w->s;
	double ly = 0;
	int arg = 0;

	swap_ptr(&w->x, &w->xn);
	swap_ptr(&w->y, &w->yn);
	swap_ptr(&w->lam, &w->lamn);
	st->t = tn;
	st->f = fn;
	st->d = dual_value(s, w->lam, w->grad);
	st->best_d = fmax(st->best_d, st->d);
	for (int r = 0; r < s->n_res; r++) {
		ly += w->lam[r] * w->y[r];
		arg = w->y[r] > w->y[arg] ? r : arg;
	}
	st->best_d = fmax(st->best_d, unit_bound(s, arg));
	if (ly - st->d < 0.5 * (st->t - ly)) {
		st->beta *= 2;
		st->eta *= 0.5;
		st->f = softmax(s->n_res, w->y, st->t, st->beta, w->lam);
		st->d = dual_value(s, w->lam, w->grad);
		st->best_d = fmax(st->best_d, st->d);
	}
}

/* One damped Newton step (Armijo backtracking).  1 if taken, 0 if not. */
static int newton_step(struct work *w, struct polish *pl, struct lagr_state *st)
{
	const struct inart_split_sys *s = w->s;
	double slope = 0, tmax = INFINITY, step;

	if (newton_dir(w, pl, st->beta, st->rho) < 0) {
		return 0;
	}
	for (int v = 0; v < s->n_var; v++) {
		slope += w->grad[v] * pl->dir[v];
		if (pl->dir[v] < 0)
			tmax = fmin(tmax, w->x[v] / -pl->dir[v]);
	}
	if (!(slope < 0))
		return 0;
	for (step = fmin(1, tmax); step > 1e-12; step *= 0.5) {
		double tn, fn;

		for (int j = 0; j < s->n_jobs; j++) {
			double z = 0;

			for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++) {
				w->xn[v] = fmax(w->x[v] + step * pl->dir[v], 1e-300);
				z += w->xn[v];
			}
			for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
				w->xn[v] /= z;
		}
		fn = trial(w, st, &tn);
		if (fn <= st->f + 1e-4 * step * slope) {
			accept(w, st, tn, fn);
			if (step == 1)
				st->rho = fmax(st->rho * 0.1, 1e-12);
			return 1;
		}
		if (step < 0.03 * fmin(1, tmax))
			break;
	}
	st->rho = fmin(st->rho * 10, 1e6);
	return 0;
}

struct lagr_out {
	double primal, dual;
	int iters, polish_iters;
};

static void lagrangian(struct work *w, struct polish *pl, const struct inart_split_opt *opt,
		       struct lagr_out *o)
{
	const struct inart_split_sys *s = w->s;
	struct lagr_state st;
	int it, ref_it = 0, polishing = 0;
	double ref_gap = INFINITY;

	for (int j = 0; j < s->n_jobs; j++)
		for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
			w->x[v] = 1.0 / (s->job_off[j + 1] - s->job_off[j]);
	memcpy(w->best_x, w->x, sizeof(double) * (size_t)s->n_var);
	o->primal = o->dual = 0;
	o->iters = o->polish_iters = 0;
	if (s->n_res == 0)
		return; /* nothing loads anything */
	st.t = sys_apply(s, w->x, w->y);
	st.best_p = st.t;
	st.beta = 20 * log(s->n_res + 1.0) / (st.t > 0 ? st.t : 1);
	st.eta = 1.0 / st.beta;
	st.rho = 1e-4;
	st.f = softmax(s->n_res, w->y, st.t, st.beta, w->lam);
	st.d = dual_value(s, w->lam, w->grad);
	st.best_d = fmax(0, st.d);
	for (int r = 0; r < s->n_res; r++)
		if (w->y[r] == st.t) {
			st.best_d = fmax(st.best_d, unit_bound(s, r));
			break;
		}
	for (it = 0; it < opt->max_iter; it++) {
		double tn, fn, rhs, gap = st.best_p - st.best_d;

		if (gap <= opt->tol * st.best_p)
			break;
		/* The first-order phase stalls (gap not halved in 50
		 * iterations): polish with second-order steps. */
		if (gap < 0.5 * ref_gap) {
			ref_gap = gap;
			ref_it = it;
		} else if (it - ref_it > 50 && pl != NULL) {
			polishing = 1;
		}
		if (polishing) {
			o->polish_iters++;
			if (newton_step(w, pl, &st))
				continue;
		}
		rhs = eg_step(w, st.eta);
		fn = trial(w, &st, &tn);
		if (!(fn <= st.f + rhs + 1e-12 * fabs(st.f))) {
			st.eta *= 0.5;
			continue;
		}
		st.eta *= 1.25;
		accept(w, &st, tn, fn);
	}
	o->primal = st.best_p;
	o->dual = fmin(st.best_d, st.best_p);
	o->iters = it;
}

/* The Newton polish's arrays: per share or job (nk) its index vectors and
 * values, and its square KKT matrix. */
static void polish_lay_out(struct polish *pl, struct inart_slab *sl, size_t nk)
{
	int **ints[] = {&pl->fidx, &pl->free, &pl->ent};
	double **reals[] = {&pl->ku, &pl->rhs, &pl->dir};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		*ints[i] = inart_slab_take(sl, nk, sizeof(int));
		*reals[i] = inart_slab_take(sl, nk, sizeof(double));
	}
	pl->kkt = inart_slab_take(sl, nk * nk, sizeof(*pl->kkt));
}

/* The work arrays and, where w->pl is not NULL, the Newton polish's, in one
 * slab (w->block): per share x, xn, best_x, grad, per resource y, yn, lam,
 * lamn. */
static void work_lay_out(void *obj, struct inart_slab *sl)
{
	struct work *w = obj;
	size_t nv = (size_t)w->s->n_var + 1, nr = (size_t)w->s->n_res + 1;
	double **per_var[] = {&w->x, &w->xn, &w->best_x, &w->grad};
	double **per_res[] = {&w->y, &w->yn, &w->lam, &w->lamn};

	for (size_t i = 0; i < sizeof(per_var) / sizeof(per_var[0]); i++) {
		*per_var[i] = inart_slab_take(sl, nv, sizeof(double));
		*per_res[i] = inart_slab_take(sl, nr, sizeof(double));
	}
	if (w->pl != NULL)
		polish_lay_out(w->pl, sl, (size_t)w->s->n_var + (size_t)w->s->n_jobs + 1);
}

/* Store shares x in the plan: drop negligible shares, renormalize. */
static void store_split(const struct inart_split_sys *s, struct inart_plan *plan, double *x)
{
	for (int j = 0; j < s->n_jobs; j++) {
		int a = s->job_off[j], b = s->job_off[j + 1];
		double z = 0;

		for (int v = a; v < b; v++) {
			if (!(x[v] > 1e-12))
				x[v] = 0;
			z += x[v];
		}
		for (int v = a; v < b; v++)
			plan->jobs[j].split[v - a] = z > 0 ? x[v] / z : 1.0 / (b - a);
		for (int v = a; v < b; v++)
			x[v] = plan->jobs[j].split[v - a];
	}
}

int inart_split_optimize(const struct inart_topo *t, const struct inart_jobs *js,
			 struct inart_plan *plan, const struct inart_split_opt *opt,
			 struct inart_split_result *res, struct inart_err *err)
{
	struct inart_split_opt def;
	struct inart_split_sys s;
	struct work w = {0};
	struct lagr_out o;
	struct polish pl = {0};
	int rc;

	if (opt == NULL) {
		inart_split_opt_default(&def);
		opt = &def;
	}
	rc = inart_split_sys_build(&s, t, js, plan, NULL, err);
	if (rc < 0)
		return rc;
	w.s = &s;
	w.pl = s.n_var <= POLISH_MAX_VARS ? &pl : NULL;
	w.block = inart_slab_block(&w, work_lay_out);
	if (w.block == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	lagrangian(&w, w.pl, opt, &o);
	store_split(&s, plan, w.best_x);
	o.primal = fmax(o.dual, sys_apply(&s, w.best_x, w.y));
	if (res != NULL) {
		res->primal_s = o.primal * s.scale;
		res->dual_s = o.dual * s.scale;
		res->gap = o.primal > 0 ? (o.primal - o.dual) / o.primal : 0;
		res->iters = o.iters;
		res->polish_iters = o.polish_iters;
	}
	plan->split_gap = o.primal > 0 ? (o.primal - o.dual) / o.primal : 0;
out:
	free(w.block);
	inart_split_sys_free(&s);
	return rc;
}

/* ---- exact LP by CLP (cross-check) --------------------------------------- */

/* The exact split LP for CLP (CSC), its arrays in one slab. */
struct exact_lp {
	int nc, nr, nnz; /* columns, rows, entries */
	CoinBigIndex *start;
	int *index;
	double *val, *obj, *rlo, *rup;
	double *x;   /* the shares of the solution */
	void *block; /* the arrays above (exact_lay_out) */
};

static void exact_lay_out(void *obj, struct inart_slab *sl)
{
	struct exact_lp *lp = obj;

	lp->start = inart_slab_take(sl, (size_t)lp->nc + 1, sizeof(*lp->start));
	lp->index = inart_slab_take(sl, (size_t)lp->nnz + 1, sizeof(*lp->index));
	lp->val = inart_slab_take(sl, (size_t)lp->nnz + 1, sizeof(*lp->val));
	lp->obj = inart_slab_take(sl, (size_t)lp->nc, sizeof(*lp->obj));
	lp->rlo = inart_slab_take(sl, (size_t)lp->nr + 1, sizeof(*lp->rlo));
	lp->rup = inart_slab_take(sl, (size_t)lp->nr + 1, sizeof(*lp->rup));
	lp->x = inart_slab_take(sl, (size_t)lp->nc, sizeof(*lp->x));
}

int inart_split_exact(const struct inart_topo *t, const struct inart_jobs *js,
		      struct inart_plan *plan, double *t_opt_s, struct inart_err *err)
{
	struct inart_split_sys s;
	Clp_Simplex *m = NULL;
	struct exact_lp lp = {0};
	int rc, nnz;

	rc = inart_split_sys_build(&s, t, js, plan, NULL, err);
	if (rc < 0)
		return rc;
	/* Columns: shares, then T.  Rows: resources (U a - T <= 0), then jobs
	 * (sum a = 1). */
	lp.nc = s.n_var + 1;
	lp.nr = s.n_res + s.n_jobs;
	lp.nnz = s.col_off[s.n_var] + s.n_var + s.n_res;
	lp.block = inart_slab_block(&lp, exact_lay_out);
	if (lp.block == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	nnz = 0;
	for (int j = 0; j < s.n_jobs; j++)
		for (int v = s.job_off[j]; v < s.job_off[j + 1]; v++) {
			lp.start[v] = nnz;
			for (int k = s.col_off[v]; k < s.col_off[v + 1]; k++) {
				lp.index[nnz] = s.col_res[k];
				lp.val[nnz++] = s.col_u[k];
			}
			lp.index[nnz] = s.n_res + j;
			lp.val[nnz++] = 1;
		}
	lp.start[s.n_var] = nnz;
	for (int r = 0; r < s.n_res; r++) {
		lp.index[nnz] = r;
		lp.val[nnz++] = -1;
		lp.rlo[r] = -DBL_MAX;
		lp.rup[r] = 0;
	}
	lp.start[lp.nc] = nnz;
	for (int j = 0; j < s.n_jobs; j++)
		lp.rlo[s.n_res + j] = lp.rup[s.n_res + j] = 1;
	lp.obj[s.n_var] = 1;
	m = Clp_newModel();
	if (m == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	Clp_setLogLevel(m, 0);
	Clp_loadProblem(m, lp.nc, lp.nr, lp.start, lp.index, lp.val, NULL, NULL, lp.obj, lp.rlo,
			lp.rup);
	Clp_setPrimalTolerance(m, 1e-9);
	Clp_setDualTolerance(m, 1e-9);
	Clp_initialSolve(m);
	if (Clp_status(m) != 0) {
		rc = inart_err_set(err, -EIO, "split LP: CLP status %d", Clp_status(m));
		goto out;
	}
	memcpy(lp.x, Clp_primalColumnSolution(m), sizeof(double) * (size_t)s.n_var);
	store_split(&s, plan, lp.x);
	if (t_opt_s != NULL)
		*t_opt_s = Clp_primalColumnSolution(m)[s.n_var] * s.scale;
	rc = 0;
out:
	if (m != NULL)
		Clp_deleteModel(m);
	free(lp.block);
	inart_split_sys_free(&s);
	return rc;
}

int inart_split_loads(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_plan *plan, double *arc_gbit, double *node_gbit,
		      struct inart_err *err)
{
	int n_arcs = inart_topo_n_arcs(t), rc;
	double *raw = calloc((size_t)(n_arcs + t->n_nodes) + 1, sizeof(double));
	struct inart_split_sys s;

	if (raw == NULL)
		return -ENOMEM;
	rc = inart_split_sys_build(&s, t, js, plan, raw, err);
	if (rc == 0) {
		memcpy(arc_gbit, raw, sizeof(double) * (size_t)n_arcs);
		memcpy(node_gbit, raw + n_arcs, sizeof(double) * (size_t)t->n_nodes);
		inart_split_sys_free(&s);
	}
	free(raw);
	return rc;
}
