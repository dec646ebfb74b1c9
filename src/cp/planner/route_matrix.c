/*
 * route_matrix: the route LP / MILP's matrix (see route_matrix.h).
 *
 * The matrix is built as triplets (row, column, value) in one pass over the
 * candidates and turned into compressed columns by a counting sort.
 * Resource rows (a directed arc or an INA switch) are created on first use,
 * so only resources that some column touches exist.  Every resource row is
 * divided by its capacity and by a time unit `scale` (seconds) so that
 * coefficients and T are of order one:
 *     sum (coef / cap / scale) * col - T' <= 0,   T = scale * T'.
 *
 * Columns: T' first; then per job-PS pair a[j,p] (JOINT), per active cand
 * tree u_t; then per active cand flow its x (and v, JOINT) columns; then per
 * active cand tree its z (and w) columns.  "Active" is every flow/tree in
 * JOINT mode and those of PSs with a non-zero share in FIXED mode (a zero
 * share carries no volume and is realized by the flow's first choice).
 *
 * Ownership: see route_matrix.h.
 */
#include "cp/planner/route_matrix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/slab.h"
#include "cp/planner/stream_bound.h"

/* One of the parallel arrays that grow together (the columns' bounds and
 * kind, the rows', the triplets). */
struct array {
	void **arr;  /* the array's pointer */
	size_t size; /* bytes per element */
};

/* b's arrays that grow (all but those in b->block), in groups that grow
 * together: from GROW_COLS a column's bounds and kind, from GROW_ROWS a row's
 * bounds and kinds, from GROW_NZ a triplet. */
enum { GROW_COLS = 0, GROW_ROWS = 3, GROW_NZ = 7, N_GROWN = 10 };

static void grown_arrays(struct lpb *b, struct array a[N_GROWN])
{
	const struct array all[N_GROWN] = {{(void **)&b->clb, sizeof(double)},
					   {(void **)&b->cub, sizeof(double)},
					   {(void **)&b->cint, 1},
					   {(void **)&b->rlb, sizeof(double)},
					   {(void **)&b->rub, sizeof(double)},
					   {(void **)&b->rres, 1},
					   {(void **)&b->rlazy, 1},
					   {(void **)&b->trow, sizeof(int)},
					   {(void **)&b->tcol, sizeof(int)},
					   {(void **)&b->tval, sizeof(double)}};

	memcpy(a, all, sizeof(all));
}

/* Make the arrays of group [from, to) of grown_arrays (capacity *cap) hold
 * element n: no change while n < *cap, else the capacity doubles (`first`
 * when it was 0).  Each array is moved by inart_grow_to, so a failure leaves
 * every array valid (some already larger): 0, or -ENOMEM with *cap unchanged
 * and b->oom set. */
static int grow_group(struct lpb *b, int from, int to, size_t n, size_t *cap, size_t first)
{
	struct array a[N_GROWN];
	size_t nc;

	if (n < *cap)
		return 0;
	grown_arrays(b, a);
	nc = *cap ? 2 * *cap : first;
	for (int i = from; i < to; i++) {
		size_t c = *cap;

		if (inart_grow_to(a[i].arr, &c, nc, a[i].size) < 0) {
			b->oom = 1;
			return -ENOMEM;
		}
	}
	*cap = nc;
	return 0;
}

static int new_col(struct lpb *b, double lb, double ub, int is_int)
{
	if (grow_group(b, GROW_COLS, GROW_ROWS, (size_t)b->n_cols, &b->cap_cols, 256) < 0)
		return 0;
	b->clb[b->n_cols] = lb;
	b->cub[b->n_cols] = ub;
	b->cint[b->n_cols] = (char)is_int;
	return b->n_cols++;
}

static void add(struct lpb *b, int row, int col, double v)
{
	if (grow_group(b, GROW_NZ, N_GROWN, b->n_nz, &b->cap_nz, 64) < 0)
		return;
	b->trow[b->n_nz] = row;
	b->tcol[b->n_nz] = col;
	b->tval[b->n_nz] = v;
	b->n_nz++;
}

#define ROW_RES 1
#define ROW_LAZY 2

static int new_row(struct lpb *b, double lb, double ub, int kind)
{
	if (grow_group(b, GROW_ROWS, GROW_NZ, (size_t)b->n_rows, &b->cap_rows, 256) < 0)
		return 0;
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
double inart_route_matrix_link_cap(const struct inart_topo *t, int e)
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
	add(b, b->arc_row[l], col, gbit / (inart_route_matrix_link_cap(b->t, l) * b->scale));
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
double inart_route_matrix_scale(const struct inart_topo *t, const struct inart_jobs *js)
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

void inart_route_matrix_free(struct lpb *b)
{
	struct array a[N_GROWN];

	grown_arrays(b, a);
	for (int i = 0; i < N_GROWN; i++)
		free(*a[i].arr);
	free(b->block);
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

/* The arrays of a fixed size, in one slab (b->block). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct lpb *b = obj;
	size_t arcs = (size_t)inart_topo_n_arcs(b->t) + 1, nch = (size_t)b->c->n_choices + 1;
	int **per_tree[] = {&b->col_u, &b->link_row, &b->vlink_row, &b->col_w, &b->link_stamp};

	b->arc_row = inart_slab_take(s, arcs, sizeof(*b->arc_row));
	b->node_row = inart_slab_take(s, (size_t)b->t->n_nodes + 1, sizeof(*b->node_row));
	b->col_x = inart_slab_take(s, nch, sizeof(*b->col_x));
	b->col_v = inart_slab_take(s, nch, sizeof(*b->col_v));
	for (size_t i = 0; i < sizeof(per_tree) / sizeof(per_tree[0]); i++)
		*per_tree[i] = inart_slab_take(s, (size_t)b->c->n_trees + 1, sizeof(int));
	b->ps_base = inart_slab_take(s, (size_t)b->js->n_jobs + 1, sizeof(*b->ps_base));
	b->arc_const = inart_slab_take(s, arcs, sizeof(*b->arc_const));
	b->dup = inart_slab_take(s, nch, sizeof(*b->dup));
	b->col_a = inart_slab_take(s, (size_t)b->n_pairs + 1, sizeof(*b->col_a));
}

int inart_route_matrix_build(struct lpb *b, struct inart_err *err)
{
	const struct inart_cand *c = b->c;
	int nch = c->n_choices + 1, rc;

	b->n_pairs = inart_jobs_pairs(b->js, NULL);
	b->block = inart_slab_block(b, lay_out);
	if (b->block == NULL)
		return -ENOMEM;
	inart_jobs_pairs(b->js, b->ps_base);
	for (int f = 0; f < c->n_flows; f++)
		mark_dups(b, c->flows[f].first_choice, c->flows[f].n_choices);
	for (int t = 0; t < c->n_trees; t++)
		mark_dups(b, c->trees[t].first_choice, c->trees[t].n_choices);
	memset(b->arc_row, -1, sizeof(int) * (size_t)inart_topo_n_arcs(b->t));
	memset(b->node_row, -1, sizeof(int) * (size_t)b->t->n_nodes);
	memset(b->col_x, -1, sizeof(int) * (size_t)nch);
	memset(b->col_v, -1, sizeof(int) * (size_t)nch);
	memset(b->link_stamp, -1, sizeof(int) * ((size_t)c->n_trees + 1));

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
			b->rub[b->arc_row[e]] =
			    -b->arc_const[e] / (inart_route_matrix_link_cap(b->t, e) * b->scale);
			b->rlazy[b->arc_row[e]] = 0;
		}
	}
	return 0;
}

/* Compressed columns from the triplets (counting sort by column). */
int inart_route_matrix_csc(const struct lpb *b, CoinBigIndex **startp, int **indexp,
			   double **valuep)
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
