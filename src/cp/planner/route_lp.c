/*
 * route_lp: phase 2 over the candidate routes as an LP (CLP) or a MILP (CBC).
 *
 * The model is the one of docs/formulation.md, section "Phase 2"; the names
 * there (x, z, u, v, w, a, T) are the names used here.  route_matrix.c
 * builds its matrix (columns, rows, compressed columns); this file solves it
 * (column generation, CBC), reads the solution back (shares, x, the
 * integral clean-up) and keeps a loaded JOINT model for the branch-and-bound.
 *
 * Integer mode (CBC): x columns hold member counts n = m x (binary for m = 1),
 * z columns are binary.  The integral solution is cleaned (counts rounded,
 * trees without children dropped, zero shares sent to the first choice) and
 * its time recomputed from the rows, so objective_s is exactly the time of
 * the plan inart_assign_realize() makes from it.
 *
 * Ownership: all build arrays are local to one solve; the result owns x and
 * split.
 */
#include "cp/planner/route_lp.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/slab.h"
#include "cp/model/assign.h"
#include "cp/planner/colgen.h"
#include "cp/planner/milp.h"
#include "cp/planner/route_matrix.h"
#include "cp/planner/stream_bound.h"

/* Max over resource rows of the activity of sol (without T'). */
static double resource_max(const struct lpb *b, const double *sol)
{
	double *act = calloc((size_t)b->n_rows + 1, sizeof(double));
	double best = 0;

	if (act == NULL)
		return NAN;
	for (size_t k = 0; k < b->n_nz; k++)
		if (b->tcol[k] != 0)
			act[b->trow[k]] += b->tval[k] * sol[b->tcol[k]];
	for (int r = 0; r < b->n_rows; r++)
		if (b->rres[r] && act[r] - b->rub[r] > best)
			best = act[r] - b->rub[r]; /* rub = - constant load */
	free(act);
	return best;
}

/*
 * Integer mode: make sol exactly integral and consistent with what
 * inart_assign_realize() installs, then recompute T' from the rows.  Shares
 * below 1e-9 become 0 (their flows take the first choice).
 */
static int clean_integral(struct lpb *b, double *sol, double *split)
{
	const struct inart_cand *c = b->c;
	char *used = calloc((size_t)c->n_trees + 1, 1);

	if (used == NULL)
		return -ENOMEM;
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		int m = c->groups[cf->group].n_members, total = 0, best = cf->first_choice;

		if (b->col_x[cf->first_choice] < 0)
			continue;
		for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++) {
			double *v;

			if (b->col_x[ci] < 0)
				continue;
			v = &sol[b->col_x[ci]];

			*v = fmin(fmax(round(*v), 0), m);
			if (*v > sol[b->col_x[best]])
				best = ci;
			total += (int)*v;
		}
		sol[b->col_x[best]] += m - total; /* keep sum n = m */
		if (sol[b->col_x[best]] < 0)
			sol[b->col_x[best]] = 0;
		if (!(split[b->ps_base[cf->job] + cf->ps_idx] > 0)) {
			for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++)
				if (b->col_x[ci] >= 0)
					sol[b->col_x[ci]] = 0;
			sol[b->col_x[cf->first_choice]] = m;
		}
		for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++)
			if (b->col_x[ci] >= 0 && sol[b->col_x[ci]] > 0 && c->choices[ci].tree >= 0)
				used[c->choices[ci].tree] = 1;
	}
	/* Trees: one choice each (the largest z); use propagates to parents,
	 * which come later in the (deepest first) order. */
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];
		int best = ct->first_choice;

		if (b->col_u[t] < 0)
			continue;
		for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
			if (b->col_x[ci] >= 0 && sol[b->col_x[ci]] > sol[b->col_x[best]])
				best = ci;
		for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
			if (b->col_x[ci] >= 0)
				sol[b->col_x[ci]] = used[t] && ci == best ? 1 : 0;
		sol[b->col_u[t]] = used[t] ? 1 : 0;
		if (used[t] && c->choices[best].tree >= 0)
			used[c->choices[best].tree] = 1;
	}
	if (b->joint) {
		/* v = a x and w = a z, exactly. */
		for (int f = 0; f < c->n_flows; f++) {
			const struct inart_cand_flow *cf = &c->flows[f];
			double a = split[b->ps_base[cf->job] + cf->ps_idx];
			double m = c->groups[cf->group].n_members;

			for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++)
				if (b->col_x[ci] >= 0)
					sol[b->col_v[ci]] = a * sol[b->col_x[ci]] / m;
		}
		for (int t = 0; t < c->n_trees; t++) {
			const struct inart_cand_tree *ct = &c->trees[t];
			double a = split[b->ps_base[ct->job] + ct->ps_idx];

			if (b->col_u[t] < 0)
				continue;
			sol[b->col_w[t]] = a * sol[b->col_u[t]];

			for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
				if (b->col_x[ci] >= 0)
					sol[b->col_v[ci]] = a * sol[b->col_x[ci]];
		}
		for (int p = 0; p < b->n_pairs; p++)
			sol[b->col_a[p]] = split[p];
	}
	free(used);
	sol[0] = resource_max(b, sol);
	return isnan(sol[0]) ? -ENOMEM : 0;
}

/* Shares from the solution (JOINT) or the plan (FIXED), cleaned. */
static void fill_split(const struct lpb *b, const double *sol, double *split)
{
	for (int j = 0; j < b->js->n_jobs; j++) {
		int n = b->js->jobs[j].n_ps, base = b->ps_base[j];
		double sum = 0;

		for (int i = 0; i < n; i++) {
			double a = b->joint ? sol[b->col_a[base + i]] : b->plan->jobs[j].split[i];

			split[base + i] = a < 1e-9 ? 0 : a;
			sum += split[base + i];
		}
		for (int i = 0; i < n && b->joint && sum > 0; i++)
			split[base + i] /= sum;
	}
}

/* x (or z) of choice ci: its column, plus v (or w) when substituted. */
static double col_value(const struct lpb *b, const double *sol, int ci)
{
	return sol[b->col_x[ci]] + (b->subst ? sol[b->col_v[ci]] : 0.0);
}

static void fill_x(const struct lpb *b, const double *sol, double *x)
{
	const struct inart_cand *c = b->c;

	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		double xs = b->integer ? c->groups[cf->group].n_members : 1.0;

		int inactive = b->col_x[cf->first_choice] < 0;

		for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++) {
			if (b->col_x[ci] < 0)
				x[ci] = inactive && ci == cf->first_choice ? 1.0 : 0.0;
			else
				x[ci] = fmin(fmax(col_value(b, sol, ci) / xs, 0), 1);
		}
	}
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];

		for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
			x[ci] = b->col_x[ci] < 0 ? 0.0 : fmin(fmax(col_value(b, sol, ci), 0), 1);
	}
}

/* A tree configuration: u_t fixed to 0 or 1 where tree_fix says so. */
static void apply_tree_fix(struct lpb *b, const signed char *tree_fix)
{
	for (int t = 0; tree_fix != NULL && t < b->c->n_trees; t++)
		if (tree_fix[t] >= 0 && b->col_u[t] >= 0)
			b->clb[b->col_u[t]] = b->cub[b->col_u[t]] = tree_fix[t];
}

/* Column generation's first columns: the warm start's, and the first choice
 * of every tree forced open (its u = sum z = 1 needs a z column).  NULL when
 * there are none; *owned says whether the caller frees it. */
static const double *first_columns(const struct lpb *b, const struct inart_route_lp_opt *opt,
				   double **owned)
{
	const struct inart_cand *c = b->c;
	int any = 0;

	*owned = NULL;
	for (int t = 0; opt->tree_fix != NULL && t < c->n_trees; t++)
		any |= opt->tree_fix[t] == 1;
	if (!any)
		return opt->warm_x;
	*owned = calloc((size_t)c->n_choices + 1, sizeof(double));
	if (*owned == NULL)
		return opt->warm_x;
	if (opt->warm_x != NULL)
		memcpy(*owned, opt->warm_x, sizeof(double) * (size_t)c->n_choices);
	for (int t = 0; t < c->n_trees; t++)
		if (opt->tree_fix[t] == 1)
			(*owned)[c->trees[t].first_choice] = 1;
	return *owned;
}

/* The LP by column generation (colgen.h). */
static int solve_lp(const struct lpb *b, const struct inart_lp_csc *m,
		    const struct inart_route_lp_opt *opt, double deadline, double *sol, double *val,
		    double *lower, int *optimal, struct inart_route_lp_result *res,
		    struct inart_err *err)
{
	struct inart_colgen_lp lp = {
	    .m = *m,
	    .rlazy = b->rlazy,
	    .c = b->c,
	    .col_x = b->col_x,
	    .unit_cols = b->joint ? 2 : 1,
	    .tree_col = b->col_u, /* u, then W (JOINT): consecutive columns */
	    .tree_cols = b->joint ? 2 : 1,
	};
	struct inart_colgen_result cr;
	double *owned;
	const double *first = first_columns(b, opt, &owned);
	int rc = inart_colgen_solve(&lp, opt->no_colgen, first, deadline, sol, &cr, err);

	free(owned);

	if (rc < 0)
		return rc;
	*val = cr.value;
	*lower = cr.lower;
	*optimal = cr.optimal;
	res->n_cols_used = cr.n_cols_used;
	res->n_rows_used = cr.n_rows_used;
	res->colgen_rounds = cr.rounds;
	return 0;
}

/* The start's columns: x / z from opt->start_x, the rest made consistent
 * (and T' computed) by clean_integral. */
static int start_columns(struct lpb *b, const struct inart_route_lp_opt *opt, double *mip)
{
	const struct inart_cand *c = b->c;
	double *split = malloc(sizeof(double) * ((size_t)b->n_pairs + 1));
	int rc;

	if (split == NULL)
		return -ENOMEM;
	memcpy(split, opt->start_split, sizeof(double) * (size_t)b->n_pairs);
	memset(mip, 0, sizeof(double) * (size_t)b->n_cols);
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		int m = c->groups[cf->group].n_members;

		for (int ci = cf->first_choice; ci < cf->first_choice + cf->n_choices; ci++)
			if (b->col_x[ci] >= 0)
				mip[b->col_x[ci]] = round(opt->start_x[ci] * m);
	}
	for (int t = 0; t < c->n_trees; t++)
		for (int ci = c->trees[t].first_choice;
		     ci < c->trees[t].first_choice + c->trees[t].n_choices; ci++)
			if (b->col_x[ci] >= 0)
				mip[b->col_x[ci]] = round(opt->start_x[ci]);
	rc = clean_integral(b, mip, split);
	free(split);
	return rc;
}

static void fix_col(int col, const double *mip, double *lb, double *ub)
{
	if (col >= 0)
		lb[col] = ub[col] = mip[col];
}

/* Fix the columns outside the neighbourhood to the start's values: the
 * choices of fixed pairs (and their volumes when the job's shares are fixed
 * too), and the shares of fixed jobs. */
static void fix_columns(const struct lpb *b, const struct inart_route_lp_opt *opt,
			const double *mip, double *lb, double *ub)
{
	const struct inart_cand *c = b->c;

	for (int o = 0; o < c->n_flows + c->n_trees; o++) {
		int is_tree = o >= c->n_flows, k = is_tree ? o - c->n_flows : o;
		int job = is_tree ? c->trees[k].job : c->flows[k].job;
		int pair = b->ps_base[job] + (is_tree ? c->trees[k].ps_idx : c->flows[k].ps_idx);
		int first = is_tree ? c->trees[k].first_choice : c->flows[k].first_choice;
		int n = is_tree ? c->trees[k].n_choices : c->flows[k].n_choices;
		int vol = b->joint && opt->free_job != NULL && !opt->free_job[job];

		if (opt->free_pair == NULL || opt->free_pair[pair])
			continue;
		for (int ci = first; ci < first + n; ci++) {
			fix_col(b->col_x[ci], mip, lb, ub);
			if (vol)
				fix_col(b->col_v[ci], mip, lb, ub);
		}
		if (is_tree) {
			fix_col(b->col_u[k], mip, lb, ub);
			if (vol)
				fix_col(b->col_w[k], mip, lb, ub);
		}
	}
	for (int j = 0; b->joint && opt->free_job != NULL && j < b->js->n_jobs; j++)
		for (int i = 0; !opt->free_job[j] && i < b->js->jobs[j].n_ps; i++)
			fix_col(b->col_a[b->ps_base[j] + i], mip, lb, ub);
}

static int solve_milp(struct lpb *b, const struct inart_lp_csc *m,
		      const struct inart_route_lp_opt *opt, double *sol, double *bound,
		      int *optimal, struct inart_err *err)
{
	size_t n = (size_t)b->n_cols + 1;
	double *mip = opt->start_x ? malloc(sizeof(double) * n) : NULL;
	double *lb = malloc(sizeof(double) * n), *ub = malloc(sizeof(double) * n);
	struct inart_milp_model mm = {m->n_rows, m->n_cols, m->start, m->index, m->value, m->obj,
				      lb,	 ub,	    m->rlb,   m->rub,	b->cint,  mip};
	struct inart_milp_opt mo = {opt->time_limit_s, opt->max_nodes, opt->cutoff_s > 0,
				    opt->cutoff_s / b->scale};
	struct inart_milp_result mr;
	int rc = lb && ub && (mip || !opt->start_x) ? 0 : -ENOMEM;

	if (rc == 0) {
		memcpy(lb, b->clb, sizeof(double) * (size_t)b->n_cols);
		memcpy(ub, b->cub, sizeof(double) * (size_t)b->n_cols);
	}
	if (rc == 0 && mip != NULL)
		rc = start_columns(b, opt, mip);
	if (rc == 0 && mip != NULL)
		fix_columns(b, opt, mip, lb, ub);
	if (rc == 0)
		rc = inart_milp_solve(&mm, &mo, sol, &mr, err);
	if (rc == 0 || rc == -ERANGE || (rc == -ETIMEDOUT && mo.has_cutoff)) {
		*optimal = mr.optimal;
		*bound = !mo.has_cutoff				       ? mr.bound
			 : rc == -ETIMEDOUT && !(mr.bound < mo.cutoff) ? -INFINITY /* none known */
								       : fmin(mr.bound, mo.cutoff);
	}
	free(mip);
	free(lb);
	free(ub);
	return rc;
}

/*
 * A bound valid for every plan: a single-homed worker's access link carries
 * its whole gradient (sum_p a G_j = G_j) in each direction.
 */
double inart_route_lp_access_bound(const struct inart_topo *t, const struct inart_jobs *js,
				   const char *job_on)
{
	double *load = calloc((size_t)inart_topo_n_arcs(t) + 1, sizeof(double)), best = 0;

	if (load == NULL)
		return 0;
	for (int j = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_workers && (!job_on || job_on[j]); i++) {
			int h = js->jobs[j].workers[i];

			if (t->out_off[h + 1] - t->out_off[h] == 1)
				load[t->arc_out[t->out_off[h]] & ~1] +=
				    inart_job_gbit(&js->jobs[j]);
		}
	for (int l = 0; l < inart_topo_n_arcs(t); l += 2)
		best = fmax(best, load[l] / inart_route_matrix_link_cap(t, l));
	free(load);
	return best;
}

void inart_route_lp_result_free(struct inart_route_lp_result *r)
{
	if (r == NULL)
		return;
	free(r->x); /* and split: one block */
	r->x = r->split = NULL;
}

static int solve_model(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const struct inart_plan *plan,
		       const struct inart_route_lp_opt *opt, struct inart_route_lp_result *res,
		       struct inart_err *err)
{
	struct lpb b = {0};
	struct inart_lp_csc m;
	CoinBigIndex *start = NULL;
	int *index = NULL;
	double *value = NULL, *obj = NULL, *sol = NULL, bound = 0, lp_val = 0, t0 = inart_now_s();
	double deadline = opt->time_limit_s > 0 ? t0 + opt->time_limit_s : 0;
	int rc, optimal = 1;

	memset(res, 0, sizeof(*res));
	if (opt->mode != INART_LP_JOINT && plan == NULL)
		return inart_err_set(err, -EINVAL,
				     "route_lp: FIXED mode needs a plan with a split");
	b.t = t;
	b.js = js;
	b.c = c;
	b.plan = plan;
	b.joint = opt->mode == INART_LP_JOINT;
	b.integer = opt->integer != 0;
	b.subst = b.joint && !b.integer;
	b.scale = inart_route_matrix_scale(t, js);
	b.job_on = opt->job_on;
	b.link_extra = opt->link_extra;
	if (b.joint) {
		b.slo = opt->share_lo;
		b.shi = opt->share_hi;
	}
	rc = inart_route_matrix_build(&b, err);
	if (rc < 0)
		goto out;
	apply_tree_fix(&b, opt->tree_fix);
	rc = inart_route_matrix_csc(&b, &start, &index, &value);
	obj = calloc((size_t)b.n_cols, sizeof(double));
	sol = calloc((size_t)b.n_cols, sizeof(double));
	/* x and split in one block (freed by inart_route_lp_result_free) */
	res->x = malloc(sizeof(double) * ((size_t)c->n_choices + 1 + (size_t)b.n_pairs + 1));
	res->split = res->x ? res->x + c->n_choices + 1 : NULL;
	if (rc < 0 || !obj || !sol || !res->x) {
		rc = -ENOMEM;
		goto out;
	}
	obj[0] = 1.0;
	m = (struct inart_lp_csc){b.n_rows, b.n_cols, start, index, value,
				  obj,	    b.clb,    b.cub, b.rlb, b.rub};
	res->n_rows = b.n_rows;
	res->n_cols = b.n_cols;
	res->n_nonzeros = (long)b.n_nz;
	res->build_s = inart_now_s() - t0;
	t0 = inart_now_s();
	if (b.integer)
		rc = solve_milp(&b, &m, opt, sol, &bound, &optimal, err);
	else
		rc = solve_lp(&b, &m, opt, deadline, sol, &lp_val, &bound, &optimal, res, err);
	res->solve_s = inart_now_s() - t0;
	if (rc == -ERANGE || (rc == -ETIMEDOUT && opt->integer && opt->cutoff_s > 0))
		res->bound_s = bound * b.scale; /* nothing (found) below the cutoff */
	if (rc < 0)
		goto out;
	fill_split(&b, sol, res->split);
	if (b.integer) {
		rc = clean_integral(&b, sol, res->split);
		if (rc < 0)
			goto out;
		res->objective_s = sol[0] * b.scale;
		res->bound_s = fmin(bound * b.scale, res->objective_s);
	} else {
		res->objective_s = lp_val * b.scale;
		if (!optimal) {
			/* stopped early: the feasible point's value is the optimum
			 * when it meets a valid lower bound */
			res->bound_s = fmax(
			    fmax(bound * b.scale, inart_route_lp_access_bound(t, js, opt->job_on)),
			    inart_stream_bound(t, js, opt->job_on, NULL));
			optimal = res->objective_s <= res->bound_s * (1 + 1e-9);
		}
		res->bound_s = optimal ? res->objective_s : res->bound_s;
	}
	res->optimal = optimal;
	if (b.integer)
		res->n_cols_used = b.n_cols;
	if (b.integer)
		res->n_rows_used = b.n_rows;
	fill_x(&b, sol, res->x);
out:
	if (rc == -ENOMEM)
		inart_err_set(err, rc, "route_lp: out of memory");
	if (rc < 0)
		inart_route_lp_result_free(res);
	free(start);
	free(index);
	free(value);
	free(obj);
	free(sol);
	inart_route_matrix_free(&b);
	return rc;
}

/*
 * The JOINT LP without a warm start first solves the FIXED LP at the even
 * split and loads that solution's support: the shares move little from there
 * and column generation then needs few rounds (fat-tree k = 16: 1.7 + 2.1 s
 * instead of 6.5 s).  Same optimum either way.
 */
int inart_route_lp_solve(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_cand *c, const struct inart_plan *plan,
			 const struct inart_route_lp_opt *opt, struct inart_route_lp_result *res,
			 struct inart_err *err)
{
	struct inart_route_lp_opt fo = *opt, jo = *opt;
	struct inart_route_lp_result fr;
	struct inart_plan *even;
	double t0 = inart_now_s(), pre;
	int rc;

	if (opt->mode != INART_LP_JOINT || opt->integer || opt->no_colgen || opt->warm_x != NULL)
		return solve_model(t, js, c, plan, opt, res, err);
	even = inart_plan_create(js, "even");
	if (even == NULL) {
		memset(res, 0, sizeof(*res));
		return inart_err_set(err, -ENOMEM, "route_lp: out of memory");
	}
	for (int j = 0; j < js->n_jobs; j++)
		for (int i = 0; i < js->jobs[j].n_ps; i++)
			even->jobs[j].split[i] = 1.0 / js->jobs[j].n_ps;
	fo.mode = INART_LP_FIXED_SPLIT;
	fo.time_limit_s = opt->time_limit_s > 0 ? opt->time_limit_s / 2 : 0;
	rc = solve_model(t, js, c, even, &fo, &fr, err);
	inart_plan_destroy(even);
	pre = inart_now_s() - t0;
	if (rc == -ENOMEM)
		return rc;
	jo.warm_x = rc == 0 ? fr.x : NULL;
	if (opt->time_limit_s > 0)
		jo.time_limit_s = fmax(opt->time_limit_s - pre, 1e-3);
	rc = solve_model(t, js, c, NULL, &jo, res, err);
	if (rc == 0) {
		res->solve_s += pre;
		res->colgen_rounds += fr.colgen_rounds;
	}
	inart_route_lp_result_free(&fr);
	return rc;
}

/* ---------------------------------------------------------------------------
 * A JOINT LP kept loaded for many solves (route_lp.h, bnb.h)
 */

struct inart_route_lp_model {
	struct lpb b;
	Clp_Simplex *clp;
	int n_pairs;
	void *block;	      /* the loaded state below (model_lay_out) */
	double *lo, *hi;      /* the loaded box per pair */
	double *clb, *cub;    /* column bounds as loaded */
	double *rlb, *rub;    /* row bounds as loaded */
	signed char *fix;     /* the loaded tree fixing */
	unsigned char *basis; /* scratch */
};

void inart_route_lp_model_destroy(struct inart_route_lp_model *m)
{
	if (m == NULL)
		return;
	if (m->clp)
		Clp_deleteModel(m->clp);
	inart_route_matrix_free(&m->b);
	free(m->b.box_row);
	free(m->block);
	free(m);
}

/* The loaded state in one block (common/slab.h): the lower and upper
 * bounds per pair (lo, hi), per column (clb, cub) and per row (rlb, rub);
 * per cand tree fix; basis (columns, then rows). */
static void model_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_route_lp_model *m = obj;
	size_t nc = (size_t)m->b.n_cols + 1, nr = (size_t)m->b.n_rows + 1;
	size_t n[] = {(size_t)m->n_pairs + 1, nc, nr};
	double **lower[] = {&m->lo, &m->clb, &m->rlb}, **upper[] = {&m->hi, &m->cub, &m->rub};

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		*lower[i] = inart_slab_take(s, n[i], sizeof(double));
		*upper[i] = inart_slab_take(s, n[i], sizeof(double));
	}
	m->fix = inart_slab_take(s, (size_t)m->b.c->n_trees + 1, sizeof(*m->fix));
	m->basis = inart_slab_take(s, nc + nr, sizeof(*m->basis));
}

/* Load the built model into CLP; the build's triplets are freed. */
static int model_load(struct inart_route_lp_model *m)
{
	struct lpb *b = &m->b;
	CoinBigIndex *start = NULL;
	int *index = NULL;
	double *value = NULL, *obj = calloc((size_t)b->n_cols + 1, sizeof(double));
	int rc = obj ? inart_route_matrix_csc(b, &start, &index, &value) : -ENOMEM;

	if (rc == 0) {
		obj[0] = 1.0;
		Clp_loadProblem(m->clp, b->n_cols, b->n_rows, start, index, value, b->clb, b->cub,
				obj, b->rlb, b->rub);
		Clp_setOptimizationDirection(m->clp, 1.0);
	}
	free(start);
	free(index);
	free(value);
	free(obj);
	free(b->trow);
	free(b->tcol);
	free(b->tval);
	b->trow = b->tcol = NULL;
	b->tval = NULL;
	b->n_nz = b->cap_nz = 0;
	return rc;
}

int inart_route_lp_model_create(const struct inart_topo *t, const struct inart_jobs *js,
				const struct inart_cand *c, struct inart_route_lp_model **out,
				struct inart_err *err)
{
	struct inart_route_lp_model *m = calloc(1, sizeof(*m));
	int rc = m ? 0 : -ENOMEM;

	*out = NULL;
	if (rc == 0) {
		m->b.t = t;
		m->b.js = js;
		m->b.c = c;
		m->b.joint = 1;
		m->b.subst = 1;
		m->b.scale = inart_route_matrix_scale(t, js);
		m->b.box_row = malloc(sizeof(int) * (4 * (size_t)c->n_trees + 1));
		m->clp = Clp_newModel();
		rc = m->b.box_row && m->clp ? inart_route_matrix_build(&m->b, err) : -ENOMEM;
	}
	if (rc == 0) {
		m->n_pairs = m->b.n_pairs;
		m->block = inart_slab_block(m, model_lay_out);
		rc = m->block ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		for (int p = 0; p < m->n_pairs; p++)
			m->hi[p] = 1;
		memset(m->fix, -1, (size_t)c->n_trees);
		memcpy(m->clb, m->b.clb, sizeof(double) * (size_t)m->b.n_cols);
		memcpy(m->cub, m->b.cub, sizeof(double) * (size_t)m->b.n_cols);
		memcpy(m->rlb, m->b.rlb, sizeof(double) * (size_t)m->b.n_rows);
		memcpy(m->rub, m->b.rub, sizeof(double) * (size_t)m->b.n_rows);
		Clp_setLogLevel(m->clp, 0);
		rc = model_load(m);
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			inart_err_set(err, rc, "route_lp: out of memory");
		inart_route_lp_model_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

int inart_route_lp_model_n_pairs(const struct inart_route_lp_model *m)
{
	return m->n_pairs;
}

size_t inart_route_lp_model_basis_size(const struct inart_route_lp_model *m)
{
	return (size_t)m->b.n_cols + (size_t)m->b.n_rows;
}

/* Load a new box: share bounds and the coefficients of the McCormick rows
 * of the pairs whose box changed. */
static void model_box(struct inart_route_lp_model *m, const double *lo, const double *hi)
{
	const struct inart_cand *c = m->b.c;

	for (int t = 0; t < c->n_trees; t++) {
		int p = m->b.ps_base[c->trees[t].job] + c->trees[t].ps_idx, u = m->b.col_u[t];
		const int *r = m->b.box_row + 4 * t;

		if (u < 0 || (lo[p] == m->lo[p] && hi[p] == m->hi[p]))
			continue;
		Clp_modifyCoefficient(m->clp, r[0], u, -hi[p], 1);
		Clp_modifyCoefficient(m->clp, r[1], u, -hi[p], 1);
		Clp_modifyCoefficient(m->clp, r[2], u, -lo[p], 1);
		Clp_modifyCoefficient(m->clp, r[3], u, -lo[p], 1);
		m->rlb[r[1]] = -hi[p];
		m->rub[r[3]] = -lo[p];
	}
	for (int p = 0; p < m->n_pairs; p++) {
		m->clb[m->b.col_a[p]] = m->lo[p] = lo[p];
		m->cub[m->b.col_a[p]] = m->hi[p] = hi[p];
	}
}

int inart_route_lp_model_solve(struct inart_route_lp_model *m, const struct inart_route_lp_node *nd,
			       struct inart_route_lp_point *pt)
{
	const struct inart_cand *c = m->b.c;
	const double *cs;
	int status;

	model_box(m, nd->share_lo, nd->share_hi);
	for (int t = 0; t < c->n_trees; t++) {
		int u = m->b.col_u[t], f = nd->tree_fix ? nd->tree_fix[t] : -1;

		if (u >= 0) {
			m->clb[u] = f == 1 ? 1 : 0;
			m->cub[u] = f == 0 ? 0 : 1;
		}
	}
	Clp_chgColumnLower(m->clp, m->clb);
	Clp_chgColumnUpper(m->clp, m->cub);
	Clp_chgRowLower(m->clp, m->rlb);
	Clp_chgRowUpper(m->clp, m->rub);
	if (nd->basis)
		Clp_copyinStatus(m->clp, nd->basis);
	Clp_dual(m->clp, 0);
	status = Clp_status(m->clp);
	if (status != 0 && status != 1) {
		Clp_primal(m->clp, 0);
		status = Clp_status(m->clp);
	}
	if (status != 0 && status != 1) { /* from scratch */
		Clp_initialSolve(m->clp);
		status = Clp_status(m->clp);
	}
	if (status == 1)
		return 1;
	if (status != 0)
		return -EIO;
	cs = Clp_getColSolution(m->clp);
	pt->value = cs[0] * m->b.scale;
	for (int p = 0; pt->split && p < m->n_pairs; p++)
		pt->split[p] = cs[m->b.col_a[p]];
	for (int t = 0; t < c->n_trees; t++) {
		int u = m->b.col_u[t];

		if (pt->u)
			pt->u[t] = u >= 0 ? cs[u] : 0;
		if (pt->w)
			pt->w[t] = u >= 0 ? cs[m->b.col_w[t]] : 0;
	}
	if (pt->basis)
		memcpy(pt->basis, Clp_statusArray(m->clp), inart_route_lp_model_basis_size(m));
	return 0;
}
