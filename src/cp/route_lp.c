/*
 * route_lp: phase 2 over the candidate routes as an LP (CLP) or a MILP (CBC).
 *
 * The model is the one of docs/formulation.md, section "Phase 2"; the names
 * there (x, z, u, v, w, a, T) are the names used here.  The matrix is built
 * as triplets (row, column, value) in one pass over the candidates and turned
 * into compressed columns by a counting sort.  Resource rows (a directed arc
 * or an INA switch) are created on first use, so only resources that some
 * column touches exist.  Every resource row is divided by its capacity and by
 * a time unit `scale` (seconds) so that coefficients and T are of order one:
 *     sum (coef / cap / scale) * col - T' <= 0,   T = scale * T'.
 *
 * Columns: T' first; then per job-PS pair a[j,p] (JOINT), per active cand
 * tree u_t; then per active cand flow its x (and v, JOINT) columns; then per
 * active cand tree its z (and w) columns.  "Active" is every flow/tree in
 * JOINT mode and those of PSs with a non-zero share in FIXED mode (a zero
 * share carries no volume and is realized by the flow's first choice).
 *
 * Integer mode (CBC): x columns hold member counts n = m x (binary for m = 1),
 * z columns are binary.  The integral solution is cleaned (counts rounded,
 * trees without children dropped, zero shares sent to the first choice) and
 * its time recomputed from the rows, so objective_s is exactly the time of
 * the plan inart_cand_realize() makes from it.
 *
 * Ownership: all build arrays are local to one solve; the result owns x and
 * split.
 */
#include "route_lp.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "colgen.h"
#include "milp.h"
#include "stream_bound.h"

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

	int n_cols, cap_cols;
	double *clb, *cub;
	char *cint;

	int n_rows, cap_rows;
	double *rlb, *rub;
	char *rres;  /* 1: resource row (contains T') */
	char *rlazy; /* 1: redundant while its choice columns are all 0 (column
		      * generation loads it with the first such column) */

	size_t n_nz, cap_nz;
	int *trow, *tcol;
	double *tval;

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

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t nc = *cap ? *cap : 64;
	void *na;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	na = realloc(*arr, nc * size);
	if (na == NULL)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}

static int new_col(struct lpb *b, double lb, double ub, int is_int)
{
	if (b->n_cols >= b->cap_cols) {
		size_t nc = b->cap_cols ? 2 * (size_t)b->cap_cols : 256;
		double *l = realloc(b->clb, nc * sizeof(double));
		double *u = l ? realloc(b->cub, nc * sizeof(double)) : NULL;
		char *i = u ? realloc(b->cint, nc) : NULL;

		if (l)
			b->clb = l;
		if (u)
			b->cub = u;
		if (i == NULL) {
			b->oom = 1;
			return 0;
		}
		b->cint = i;
		b->cap_cols = (int)nc;
	}
	b->clb[b->n_cols] = lb;
	b->cub[b->n_cols] = ub;
	b->cint[b->n_cols] = (char)is_int;
	return b->n_cols++;
}

static void add(struct lpb *b, int row, int col, double v)
{
	size_t cap = b->cap_nz;

	if (b->n_nz >= b->cap_nz) {
		if (grow((void **)&b->trow, &cap, b->n_nz + 1, sizeof(int))) {
			b->oom = 1;
			return;
		}
		cap = b->cap_nz;
		if (grow((void **)&b->tcol, &cap, b->n_nz + 1, sizeof(int))) {
			b->oom = 1;
			return;
		}
		cap = b->cap_nz;
		if (grow((void **)&b->tval, &cap, b->n_nz + 1, sizeof(double))) {
			b->oom = 1;
			return;
		}
		b->cap_nz = cap;
	}
	b->trow[b->n_nz] = row;
	b->tcol[b->n_nz] = col;
	b->tval[b->n_nz] = v;
	b->n_nz++;
}

#define ROW_RES 1
#define ROW_LAZY 2

static int new_row(struct lpb *b, double lb, double ub, int kind)
{
	if (b->n_rows >= b->cap_rows) {
		size_t nc = b->cap_rows ? 2 * (size_t)b->cap_rows : 256;
		double *l = realloc(b->rlb, nc * sizeof(double));
		double *u = l ? realloc(b->rub, nc * sizeof(double)) : NULL;
		char *r = u ? realloc(b->rres, nc) : NULL;
		char *z = r ? realloc(b->rlazy, nc) : NULL;

		if (l)
			b->rlb = l;
		if (u)
			b->rub = u;
		if (r)
			b->rres = r;
		if (z == NULL) {
			b->oom = 1;
			return 0;
		}
		b->rlazy = z;
		b->cap_rows = (int)nc;
	}
	b->rlb[b->n_rows] = lb;
	b->rub[b->n_rows] = ub;
	b->rres[b->n_rows] = (kind & ROW_RES) != 0;
	b->rlazy[b->n_rows] = (kind & ROW_LAZY) != 0;
	if (kind & ROW_RES)
		add(b, b->n_rows, 0, -1.0); /* - T' */
	return b->n_rows++;
}

/* Add load `gbit` (per unit of column col) on arc e. */
/* The smaller residual capacity of the two directions of arc e's link. */
static double link_cap(const struct inart_topo *t, int e)
{
	return fmin(inart_arc_residual(&t->arcs[e]), inart_arc_residual(&t->arcs[e ^ 1]));
}

/*
 * Add load `gbit` (per unit of column col) of a stream crossing arc e.  Push
 * on e and pull on its reverse, so both directions of the link carry it:
 * push + pull volume is the same in both directions of every link, and one
 * row per link, against the smaller residual capacity, stands for both.
 */
static void link_load(struct lpb *b, int e, int col, double gbit)
{
	int l = e & ~1;

	if (b->arc_row[l] < 0)
		b->arc_row[l] = new_row(b, -LP_INF, 0, ROW_RES | ROW_LAZY);
	add(b, b->arc_row[l], col, gbit / (link_cap(b->t, l) * b->scale));
}

/* Add aggregation input `gbit` at INA switch v. */
static void node_load(struct lpb *b, int v, int col, double gbit)
{
	if (b->node_row[v] < 0)
		b->node_row[v] = new_row(b, -LP_INF, 0, ROW_RES | ROW_LAZY);
	add(b, b->node_row[v], col, gbit / (b->t->nodes[v].agg_gbps * b->scale));
}

/* Linking row u_t >= sum of the child's columns choosing t (stamp: the child). */
static int link_row(struct lpb *b, int t, int stamp)
{
	if (b->link_stamp[t] != stamp) {
		b->link_stamp[t] = stamp;
		b->link_row[t] = new_row(b, -LP_INF, 0, ROW_LAZY);
		add(b, b->link_row[t], b->col_u[t], -1.0);
		if (b->joint) {
			b->vlink_row[t] = new_row(b, -LP_INF, 0, ROW_LAZY);
			add(b, b->vlink_row[t], b->col_w[t], -1.0);
		}
	}
	return b->link_row[t];
}

static double share_of(const struct lpb *b, int j, int ps_idx)
{
	return b->plan->jobs[j].split[ps_idx];
}

static int active(const struct lpb *b, int j, int ps_idx)
{
	if (b->job_on != NULL && !b->job_on[j])
		return 0;
	return b->joint || share_of(b, j, ps_idx) > 0;
}

/* The box of pair (job, ps_idx)'s share: [0, 1] without one. */
static double box_lo(const struct lpb *b, int job, int ps_idx)
{
	return b->slo ? b->slo[b->ps_base[job] + ps_idx] : 0.0;
}

static double box_hi(const struct lpb *b, int job, int ps_idx)
{
	return b->shi ? b->shi[b->ps_base[job] + ps_idx] : 1.0;
}

/*
 * McCormick rows of a tree's output W = a u for a share a in [lo, hi] and u
 * in [0, 1], beyond those of [0, 1] that build_tree writes anyway:
 *     W <= hi u,  W >= a + hi u - hi,  W >= lo u,  W <= a - lo + lo u.
 * A model kept for many solves (rows != NULL) gets all four rows whatever the
 * box, their numbers in rows[0..3], so that a later box only changes
 * coefficients and bounds (box_set).
 */
static void mccormick(struct lpb *b, int a, int u, int w, double lo, double hi, int *rows)
{
	int r;

	if (hi < 1 || rows) {
		r = new_row(b, -LP_INF, 0, 0); /* W - hi u <= 0 */
		add(b, r, w, 1.0);
		add(b, r, u, -hi);
		if (rows)
			rows[0] = r;
		r = new_row(b, -hi, LP_INF, 0); /* W - hi u - a >= -hi */
		add(b, r, w, 1.0);
		add(b, r, u, -hi);
		add(b, r, a, -1.0);
		if (rows)
			rows[1] = r;
	}
	if (lo > 0 || rows) {
		r = new_row(b, 0, LP_INF, 0); /* W - lo u >= 0 */
		add(b, r, w, 1.0);
		add(b, r, u, -lo);
		if (rows)
			rows[2] = r;
		r = new_row(b, -LP_INF, -lo, 0); /* W - lo u - a <= -lo */
		add(b, r, w, 1.0);
		add(b, r, u, -lo);
		add(b, r, a, -1.0);
		if (rows)
			rows[3] = r;
	}
}

/* 1 if every route of group g starts with the members' own (single) links. */
static int fixed_first_arcs(const struct lpb *b, const struct inart_group *g)
{
	int h = g->members[0];

	return b->t->out_off[h + 1] - b->t->out_off[h] == 1;
}

/*
 * Push and pull loads of one flow choice on column col, k Gbit per member per
 * unit of col.  Member 0 is the representative whose path is stored; member
 * i's path is the same with node 0 replaced.  With fixed first arcs the
 * members' own links are left out here (build_flow accounts for them once).
 */
static int flow_loads(struct lpb *b, const struct inart_group *g, const struct inart_choice *ch,
		      int col, double k, int fixed_first, struct inart_err *err)
{
	const int *p = inart_pathset_path(&b->c->paths, ch->path);
	int len = inart_pathset_len(&b->c->paths, ch->path), m = g->n_members;

	for (int i = fixed_first ? 1 : 0; i + 1 < len; i++) {
		int e = inart_topo_arc_between(b->t, p[i], p[i + 1]);
		double v = i == 0 ? k : m * k;

		if (e < 0)
			return inart_err_set(err, -EINVAL,
					     "route_lp: no link '%s'-'%s' on a candidate",
					     b->t->nodes[p[i]].id, b->t->nodes[p[i + 1]].id);
		link_load(b, e, col, v);
	}
	for (int i = 1; i < m && !fixed_first; i++) {
		int e = inart_topo_arc_between(b->t, g->members[i], p[1]);

		if (e < 0)
			return inart_err_set(err, -EINVAL,
					     "route_lp: group member '%s' not attached to '%s'",
					     b->t->nodes[g->members[i]].id, b->t->nodes[p[1]].id);
		link_load(b, e, col, k);
	}
	if (ch->tree >= 0)
		node_load(b, ch->agg, col, m * k);
	return 0;
}

/*
 * The members' own links when they are their only links: every choice uses
 * them, and sum_c x[c] = 1 makes the load a * G per member and direction
 * whatever the choice.  FIXED: a constant; JOINT: G on the share column a.
 */
static void host_loads(struct lpb *b, const struct inart_group *g, int job, int ps_idx, double gbit)
{
	for (int i = 0; i < g->n_members; i++) {
		int h = g->members[i], l = b->t->arc_out[b->t->out_off[h]] & ~1;

		if (b->joint) {
			link_load(b, l, b->col_a[b->ps_base[job] + ps_idx], gbit);
			b->rlazy[b->arc_row[l]] = 0; /* binds without choices */
		} else {
			if (b->arc_row[l] < 0)
				b->arc_row[l] = new_row(b, -LP_INF, 0, ROW_RES | ROW_LAZY);
			b->arc_const[l] += share_of(b, job, ps_idx) * gbit;
		}
	}
}

static int build_flow(struct lpb *b, int f, struct inart_err *err)
{
	const struct inart_cand *c = b->c;
	const struct inart_cand_flow *cf = &c->flows[f];
	const struct inart_group *g = &c->groups[cf->group];
	double gbit = inart_job_gbit(&b->js->jobs[cf->job]);
	double xs = b->integer ? g->n_members : 1.0; /* column = xs * x */
	int sum_row, vsum_row = -1, rc;

	int fixed = fixed_first_arcs(b, g);

	if (!active(b, cf->job, cf->ps_idx))
		return 0;
	if (fixed)
		host_loads(b, g, cf->job, cf->ps_idx, gbit);
	sum_row = new_row(b, 1, 1, 0);
	if (b->joint) {
		vsum_row = new_row(b, 0, 0, 0);
		add(b, vsum_row, b->col_a[b->ps_base[cf->job] + cf->ps_idx], -1.0);
	}
	for (int i = 0; i < cf->n_choices; i++) {
		int ci = cf->first_choice + i;
		const struct inart_choice *ch = &c->choices[ci];
		int xc, lc;
		double k = b->joint ? gbit : share_of(b, cf->job, cf->ps_idx) * gbit / xs;

		if (b->dup[ci])
			continue;
		xc = lc = new_col(b, 0, xs, b->integer);
		b->col_x[ci] = xc;
		add(b, sum_row, xc, 1.0 / xs);
		if (b->joint) {
			lc = new_col(b, 0, 1, 0);
			b->col_v[ci] = lc;
			add(b, vsum_row, lc, 1.0);
			if (b->subst) { /* x = s + v: v enters the rows of x */
				add(b, sum_row, lc, 1.0);
			} else {
				int r = new_row(b, -LP_INF, 0, 0); /* v <= x */

				add(b, r, lc, 1.0);
				add(b, r, xc, -1.0 / xs);
			}
		}
		rc = flow_loads(b, g, ch, lc, k, fixed, err);
		if (rc < 0)
			return rc;
		if (ch->tree >= 0) {
			add(b, link_row(b, ch->tree, f), xc, 1.0 / xs);
			if (b->joint)
				add(b, b->vlink_row[ch->tree], lc, 1.0);
			if (b->subst)
				add(b, b->link_row[ch->tree], lc, 1.0);
		}
	}
	return 0;
}

static int build_tree(struct lpb *b, int t, struct inart_err *err)
{
	const struct inart_cand *c = b->c;
	const struct inart_cand_tree *ct = &c->trees[t];
	double gbit = inart_job_gbit(&b->js->jobs[ct->job]);
	int u = b->col_u[t], zsum, wsum = -1;

	if (u < 0)
		return 0;
	zsum = new_row(b, 0, 0, 0); /* sum z - u = 0 */
	add(b, zsum, u, -1.0);
	if (b->joint) {
		int ac = b->col_a[b->ps_base[ct->job] + ct->ps_idx], w = b->col_w[t], r;

		wsum = new_row(b, 0, 0, 0); /* sum w - W = 0 */
		add(b, wsum, w, -1.0);
		r = new_row(b, -LP_INF, 0, 0); /* W - a <= 0 */
		add(b, r, w, 1.0);
		add(b, r, ac, -1.0);
		r = new_row(b, -1.0, LP_INF, 0); /* W - a - u >= -1 */
		add(b, r, w, 1.0);
		add(b, r, ac, -1.0);
		add(b, r, u, -1.0);
		mccormick(b, ac, u, w, box_lo(b, ct->job, ct->ps_idx),
			  box_hi(b, ct->job, ct->ps_idx), b->box_row ? b->box_row + 4 * t : NULL);
	}
	for (int i = 0; i < ct->n_choices; i++) {
		int ci = ct->first_choice + i;
		const struct inart_choice *ch = &c->choices[ci];
		const int *p = inart_pathset_path(&c->paths, ch->path);
		int len = inart_pathset_len(&c->paths, ch->path);
		int zc, lc;
		double k = b->joint ? gbit : share_of(b, ct->job, ct->ps_idx) * gbit;

		if (b->dup[ci])
			continue;
		zc = lc = new_col(b, 0, 1, b->integer);
		b->col_x[ci] = zc;
		add(b, zsum, zc, 1.0);
		if (b->joint) {
			lc = new_col(b, 0, 1, 0);
			b->col_v[ci] = lc;
			add(b, wsum, lc, 1.0);
			if (b->subst) { /* z = s + w */
				add(b, zsum, lc, 1.0);
			} else {
				int r = new_row(b, -LP_INF, 0, 0); /* w <= z */

				add(b, r, lc, 1.0);
				add(b, r, zc, -1.0);
			}
		}
		for (int h = 0; h + 1 < len; h++) {
			int e = inart_topo_arc_between(b->t, p[h], p[h + 1]);

			if (e < 0)
				return inart_err_set(
				    err, -EINVAL, "route_lp: no link '%s'-'%s' on a candidate",
				    b->t->nodes[p[h]].id, b->t->nodes[p[h + 1]].id);
			link_load(b, e, lc, k);
		}
		if (ch->tree >= 0) {
			node_load(b, ch->agg, lc, k);
			add(b, link_row(b, ch->tree, c->n_flows + t), zc, 1.0);
			if (b->joint)
				add(b, b->vlink_row[ch->tree], lc, 1.0);
			if (b->subst)
				add(b, b->link_row[ch->tree], lc, 1.0);
		}
	}
	return 0;
}

/* Tree budgets: sum of u_t at a switch <= trees, where it can bind. */
static void build_budgets(struct lpb *b)
{
	const struct inart_cand *c = b->c;
	int *count = calloc((size_t)b->t->n_nodes + 1, sizeof(int));

	if (count == NULL) {
		b->oom = 1;
		return;
	}
	for (int t = 0; t < c->n_trees; t++)
		if (b->col_u[t] >= 0)
			count[c->trees[t].sw]++;
	for (int v = 0; v < b->t->n_nodes; v++) {
		int r;

		if (count[v] <= b->t->nodes[v].trees)
			continue;
		r = new_row(b, -LP_INF, b->t->nodes[v].trees, 0);
		for (int t = 0; t < c->n_trees; t++)
			if (b->col_u[t] >= 0 && c->trees[t].sw == v)
				add(b, r, b->col_u[t], 1.0);
	}
	free(count);
}

static int same_route(const struct inart_cand *c, int a, int b)
{
	const struct inart_choice *x = &c->choices[a], *y = &c->choices[b];
	int len = inart_pathset_len(&c->paths, x->path);

	return x->agg == y->agg && x->tree == y->tree &&
	       len == inart_pathset_len(&c->paths, y->path) &&
	       memcmp(inart_pathset_path(&c->paths, x->path),
		      inart_pathset_path(&c->paths, y->path), sizeof(int) * (size_t)len) == 0;
}

/* Identical choices of one owner (same truncated path and aggregation point)
 * get one column: the first. */
static void mark_dups(struct lpb *b, int first, int n)
{
	for (int i = 1; i < n; i++)
		for (int k = 0; k < i && !b->dup[first + i]; k++)
			if (!b->dup[first + k] && same_route(b->c, first + i, first + k))
				b->dup[first + i] = 1;
}

/* A time unit: one job's gradient over the fastest arc. */
static double pick_scale(const struct inart_topo *t, const struct inart_jobs *js)
{
	double gmax = 0, cmax = 0;

	for (int j = 0; j < js->n_jobs; j++)
		gmax = fmax(gmax, inart_job_gbit(&js->jobs[j]));
	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		cmax = fmax(cmax, inart_arc_residual(&t->arcs[e]));
	for (int v = 0; v < t->n_nodes; v++)
		if (t->nodes[v].ina)
			cmax = fmax(cmax, t->nodes[v].agg_gbps);
	if (!(gmax > 0) || !(cmax > 0))
		return 1.0;
	return gmax / cmax;
}

static void lpb_free(struct lpb *b)
{
	free(b->clb);
	free(b->cub);
	free(b->cint);
	free(b->rlb);
	free(b->rub);
	free(b->rres);
	free(b->rlazy);
	free(b->trow);
	free(b->tcol);
	free(b->tval);
	free(b->arc_row);
	free(b->node_row);
	free(b->col_x);
	free(b->col_v);
	free(b->col_u);
	free(b->col_a);
	free(b->ps_base);
	free(b->link_row);
	free(b->vlink_row);
	free(b->col_w);
	free(b->link_stamp);
	free(b->arc_const);
	free(b->dup);
}

/*
 * Stream rows (JOINT): a G_j / width(j, p) - T <= 0 per active pair whose
 * workers must reach the PS over arcs (stream_bound.h): every stream of the
 * pair carries its whole share on one path, which the LP's fractional routes
 * would spread over several.
 */
static int stream_rows(struct lpb *b)
{
	double *width = malloc(sizeof(double) * ((size_t)b->n_pairs + 1));
	int rc = width ? inart_stream_widths(b->t, b->js, b->job_on, width) : -ENOMEM;

	for (int j = 0; rc == 0 && j < b->js->n_jobs; j++)
		for (int i = 0; i < b->js->jobs[j].n_ps; i++) {
			double w = width[b->ps_base[j] + i];

			if (!active(b, j, i) || !(w > 0) || isinf(w))
				continue;
			add(b, new_row(b, -LP_INF, 0, ROW_RES), b->col_a[b->ps_base[j] + i],
			    inart_job_gbit(&b->js->jobs[j]) / (w * b->scale));
		}
	free(width);
	return rc;
}

static int build(struct lpb *b, struct inart_err *err)
{
	const struct inart_cand *c = b->c;
	int nch = c->n_choices + 1, rc;

	b->arc_row = malloc(sizeof(int) * ((size_t)inart_topo_n_arcs(b->t) + 1));
	b->node_row = malloc(sizeof(int) * ((size_t)b->t->n_nodes + 1));
	b->col_x = malloc(sizeof(int) * (size_t)nch);
	b->col_v = malloc(sizeof(int) * (size_t)nch);
	b->col_u = malloc(sizeof(int) * ((size_t)c->n_trees + 1));
	b->link_row = malloc(sizeof(int) * ((size_t)c->n_trees + 1));
	b->vlink_row = malloc(sizeof(int) * ((size_t)c->n_trees + 1));
	b->col_w = malloc(sizeof(int) * ((size_t)c->n_trees + 1));
	b->link_stamp = malloc(sizeof(int) * ((size_t)c->n_trees + 1));
	b->ps_base = malloc(sizeof(int) * ((size_t)b->js->n_jobs + 1));
	b->arc_const = calloc((size_t)inart_topo_n_arcs(b->t) + 1, sizeof(double));
	b->dup = calloc((size_t)nch, 1);
	if (!b->arc_row || !b->node_row || !b->col_x || !b->col_v || !b->col_u || !b->link_row ||
	    !b->vlink_row || !b->col_w || !b->link_stamp || !b->ps_base || !b->arc_const || !b->dup)
		return -ENOMEM;
	for (int f = 0; f < c->n_flows; f++)
		mark_dups(b, c->flows[f].first_choice, c->flows[f].n_choices);
	for (int t = 0; t < c->n_trees; t++)
		mark_dups(b, c->trees[t].first_choice, c->trees[t].n_choices);
	memset(b->arc_row, -1, sizeof(int) * (size_t)inart_topo_n_arcs(b->t));
	memset(b->node_row, -1, sizeof(int) * (size_t)b->t->n_nodes);
	memset(b->col_x, -1, sizeof(int) * (size_t)nch);
	memset(b->col_v, -1, sizeof(int) * (size_t)nch);
	memset(b->link_stamp, -1, sizeof(int) * ((size_t)c->n_trees + 1));
	for (int j = 0; j < b->js->n_jobs; j++) {
		b->ps_base[j] = b->n_pairs;
		b->n_pairs += b->js->jobs[j].n_ps;
	}
	b->col_a = malloc(sizeof(int) * ((size_t)b->n_pairs + 1));
	if (b->col_a == NULL)
		return -ENOMEM;

	new_col(b, 0, LP_INF, 0); /* T' */
	if (b->joint) {
		for (int j = 0; j < b->js->n_jobs; j++) {
			int r = new_row(b, 1, 1, 0); /* sum_p a = 1 */

			for (int i = 0; i < b->js->jobs[j].n_ps; i++) {
				b->col_a[b->ps_base[j] + i] =
				    new_col(b, box_lo(b, j, i), box_hi(b, j, i), 0);
				add(b, r, b->col_a[b->ps_base[j] + i], 1.0);
			}
		}
		rc = stream_rows(b);
		if (rc < 0)
			return rc;
	}
	for (int t = 0; t < c->n_trees; t++) {
		int on = active(b, c->trees[t].job, c->trees[t].ps_idx);

		b->col_u[t] = on ? new_col(b, 0, 1, 0) : -1;
		b->col_w[t] = on && b->joint ? new_col(b, 0, 1, 0) : -1;
	}
	for (int f = 0; f < c->n_flows; f++) {
		rc = build_flow(b, f, err);
		if (rc < 0)
			return rc;
	}
	for (int t = 0; t < c->n_trees; t++) {
		rc = build_tree(b, t, err);
		if (rc < 0)
			return rc;
	}
	build_budgets(b);
	for (int l = 0; b->link_extra != NULL && l < inart_topo_n_arcs(b->t); l += 2) {
		if (!(b->link_extra[l] > 0))
			continue;
		if (b->arc_row[l] < 0)
			b->arc_row[l] = new_row(b, -LP_INF, 0, ROW_RES | ROW_LAZY);
		b->arc_const[l] += b->link_extra[l];
	}
	if (b->oom)
		return -ENOMEM;
	for (int e = 0; e < inart_topo_n_arcs(b->t); e++) {
		if (b->arc_const[e] > 0) {
			b->rub[b->arc_row[e]] = -b->arc_const[e] / (link_cap(b->t, e) * b->scale);
			b->rlazy[b->arc_row[e]] = 0;
		}
	}
	return 0;
}

/* Compressed columns from the triplets (counting sort by column). */
static int to_csc(const struct lpb *b, CoinBigIndex **startp, int **indexp, double **valuep)
{
	CoinBigIndex *start = calloc((size_t)b->n_cols + 1, sizeof(*start));
	int *index = malloc(sizeof(int) * (b->n_nz + 1));
	double *value = malloc(sizeof(double) * (b->n_nz + 1));
	CoinBigIndex *pos = malloc(sizeof(*pos) * ((size_t)b->n_cols + 1));

	if (!start || !index || !value || !pos) {
		free(start);
		free(index);
		free(value);
		free(pos);
		return -ENOMEM;
	}
	for (size_t k = 0; k < b->n_nz; k++)
		start[b->tcol[k] + 1]++;
	for (int i = 0; i < b->n_cols; i++)
		start[i + 1] += start[i];
	memcpy(pos, start, sizeof(*pos) * (size_t)b->n_cols);
	for (size_t k = 0; k < b->n_nz; k++) {
		CoinBigIndex p = pos[b->tcol[k]]++;

		index[p] = b->trow[k];
		value[p] = b->tval[k];
	}
	free(pos);
	*startp = start;
	*indexp = index;
	*valuep = value;
	return 0;
}

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
 * inart_cand_realize() installs, then recompute T' from the rows.  Shares
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
static int solve_lp(const struct lpb *b, const CoinBigIndex *start, const int *index,
		    const double *value, const double *obj, const struct inart_route_lp_opt *opt,
		    double deadline, double *sol, double *val, double *lower, int *optimal,
		    struct inart_route_lp_result *res, struct inart_err *err)
{
	struct inart_colgen_lp lp = {
	    .n_rows = b->n_rows,
	    .n_cols = b->n_cols,
	    .start = start,
	    .index = index,
	    .value = value,
	    .obj = obj,
	    .clb = b->clb,
	    .cub = b->cub,
	    .rlb = b->rlb,
	    .rub = b->rub,
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

static int solve_milp(struct lpb *b, const CoinBigIndex *start, const int *index,
		      const double *value, const double *obj, const struct inart_route_lp_opt *opt,
		      double *sol, double *bound, int *optimal, struct inart_err *err)
{
	size_t n = (size_t)b->n_cols + 1;
	double *mip = opt->start_x ? malloc(sizeof(double) * n) : NULL;
	double *lb = malloc(sizeof(double) * n), *ub = malloc(sizeof(double) * n);
	struct inart_milp_model mm = {b->n_rows, b->n_cols, start,  index,  value,   obj,
				      lb,	 ub,	    b->rlb, b->rub, b->cint, mip};
	struct inart_milp_opt mo = {opt->time_limit_s, opt->max_nodes};
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
	if (rc == 0) {
		*optimal = mr.optimal;
		*bound = mr.bound;
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
		best = fmax(best, load[l] / link_cap(t, l));
	free(load);
	return best;
}

void inart_route_lp_result_free(struct inart_route_lp_result *r)
{
	if (r == NULL)
		return;
	free(r->x);
	free(r->split);
	r->x = NULL;
	r->split = NULL;
}

static int solve_model(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const struct inart_plan *plan,
		       const struct inart_route_lp_opt *opt, struct inart_route_lp_result *res,
		       struct inart_err *err)
{
	struct lpb b = {0};
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
	b.scale = pick_scale(t, js);
	b.job_on = opt->job_on;
	b.link_extra = opt->link_extra;
	if (b.joint) {
		b.slo = opt->share_lo;
		b.shi = opt->share_hi;
	}
	rc = build(&b, err);
	if (rc < 0)
		goto out;
	apply_tree_fix(&b, opt->tree_fix);
	rc = to_csc(&b, &start, &index, &value);
	obj = calloc((size_t)b.n_cols, sizeof(double));
	sol = calloc((size_t)b.n_cols, sizeof(double));
	res->x = malloc(sizeof(double) * ((size_t)c->n_choices + 1));
	res->split = malloc(sizeof(double) * ((size_t)b.n_pairs + 1));
	if (rc < 0 || !obj || !sol || !res->x || !res->split) {
		rc = -ENOMEM;
		goto out;
	}
	obj[0] = 1.0;
	res->n_rows = b.n_rows;
	res->n_cols = b.n_cols;
	res->n_nonzeros = (long)b.n_nz;
	res->build_s = inart_now_s() - t0;
	t0 = inart_now_s();
	if (b.integer)
		rc = solve_milp(&b, start, index, value, obj, opt, sol, &bound, &optimal, err);
	else
		rc = solve_lp(&b, start, index, value, obj, opt, deadline, sol, &lp_val, &bound,
			      &optimal, res, err);
	res->solve_s = inart_now_s() - t0;
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
	lpb_free(&b);
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
	lpb_free(&m->b);
	free(m->b.box_row);
	free(m->lo);
	free(m->hi);
	free(m->clb);
	free(m->cub);
	free(m->rlb);
	free(m->rub);
	free(m->fix);
	free(m->basis);
	free(m);
}

/* Load the built model into CLP; the build's triplets are freed. */
static int model_load(struct inart_route_lp_model *m)
{
	struct lpb *b = &m->b;
	CoinBigIndex *start = NULL;
	int *index = NULL;
	double *value = NULL, *obj = calloc((size_t)b->n_cols + 1, sizeof(double));
	int rc = obj ? to_csc(b, &start, &index, &value) : -ENOMEM;

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
	size_t nc, nr;
	int rc = m ? 0 : -ENOMEM;

	*out = NULL;
	if (rc == 0) {
		m->b.t = t;
		m->b.js = js;
		m->b.c = c;
		m->b.joint = 1;
		m->b.subst = 1;
		m->b.scale = pick_scale(t, js);
		m->b.box_row = malloc(sizeof(int) * (4 * (size_t)c->n_trees + 1));
		m->clp = Clp_newModel();
		rc = m->b.box_row && m->clp ? build(&m->b, err) : -ENOMEM;
	}
	if (rc == 0) {
		nc = (size_t)m->b.n_cols + 1;
		nr = (size_t)m->b.n_rows + 1;
		m->n_pairs = m->b.n_pairs;
		m->lo = calloc((size_t)m->n_pairs + 1, sizeof(double));
		m->hi = malloc(sizeof(double) * ((size_t)m->n_pairs + 1));
		m->clb = malloc(sizeof(double) * nc);
		m->cub = malloc(sizeof(double) * nc);
		m->rlb = malloc(sizeof(double) * nr);
		m->rub = malloc(sizeof(double) * nr);
		m->fix = malloc((size_t)c->n_trees + 1);
		m->basis = malloc(nc + nr);
		rc = m->lo && m->hi && m->clb && m->cub && m->rlb && m->rub && m->fix && m->basis
			 ? 0
			 : -ENOMEM;
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
