/*
 * colgen: an LP whose columns belong to owners (the choices of cand flows and
 * trees) solved by CLP with column generation (see colgen.h).
 *
 * Base columns (every column that is not a choice column: T', a, u, W) and
 * the first choice of every flow are loaded; then, repeatedly, the reduced
 * cost d = obj - A^T y of every column not loaded is priced from the row
 * duals y, and per owner (flow or tree) the choice with the most negative d
 * is added (with its second unit column, and with the first choice of the
 * tree it aggregates at, so that the tree can open).  When no column prices
 * out below -CG_TOL the loaded LP is optimal for the whole model.  Columns
 * are never removed, so this ends.  Rows are loaded with the first column
 * that needs them; lazy rows stay out while only base columns touch them.
 *
 * Ownership: struct lpcg is local to one solve and owns its arrays; the
 * model arrays belong to the caller.
 */
#include "cp/planner/colgen.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/slab.h"

#define CG_TOL 1e-9

enum { COL_BASE, COL_TREE, COL_CHOICE };

struct lpcg {
	const struct inart_colgen_lp *b;
	const CoinBigIndex *start;
	const int *index;
	const double *value;
	const double *obj;
	void *block;  /* the fixed-size arrays below (lay_out) */
	int *loaded;  /* per column: CLP column, -1 not loaded, -2 queued */
	int *clp_col; /* per CLP column: model column */
	int n_loaded;
	int *rmap; /* per row: CLP row, -1 not loaded, -2 queued */
	int n_rows_loaded;
	/* entries of the columns that are not choices (base and tree columns)
	 * by row (CSR), for rows added later */
	int *bstart, *bcol;
	double *bval;	 /* one allocation with bcol */
	char *kind;	 /* per column: COL_BASE, COL_TREE or COL_CHOICE */
	char *row_tree;	 /* per row: 1 if a tree column is in it */
	int *owner_tree; /* per choice: its cand tree, -1 for a flow's */
	/* columns and rows to add this round */
	int n_add, n_add_rows;
	int *add_cols, *add_rows;
};

static void want(struct lpcg *g, int col)
{
	if (g->loaded[col] != -1)
		return;
	g->loaded[col] = -2; /* queued */
	g->add_cols[g->n_add++] = col;
}

static void want_choice(struct lpcg *g, int ci)
{
	const struct inart_colgen_lp *b = g->b;
	const struct inart_choice *ch = &b->c->choices[ci];
	int t = g->owner_tree[ci];

	if (b->col_x[ci] < 0 || g->loaded[b->col_x[ci]] != -1)
		return;
	for (int k = 0; k < b->unit_cols; k++)
		want(g, b->col_x[ci] + k);
	for (int k = 0; t >= 0 && b->tree_col[t] >= 0 && k < b->tree_cols; k++)
		want(g, b->tree_col[t] + k);
	if (ch->tree >= 0)
		want_choice(g, b->c->trees[ch->tree].first_choice);
}

/* Whether loading column col loads row r: a choice column loads every row
 * it is in; a tree column the rows that are not lazy; a base column the rows
 * that are neither lazy nor hold a tree column (they come with the tree). */
static int loads_row(const struct lpcg *g, int col, int r)
{
	switch (g->kind[col]) {
	case COL_CHOICE:
		return 1;
	case COL_TREE:
		return !g->b->rlazy[r];
	default:
		return !g->b->rlazy[r] && !g->row_tree[r];
	}
}

/* Queue the rows that the queued columns touch and are not loaded yet. */
static void queue_rows(struct lpcg *g)
{
	for (int i = 0; i < g->n_add; i++) {
		int col = g->add_cols[i];

		for (CoinBigIndex k = g->start[col]; k < g->start[col + 1]; k++) {
			int r = g->index[k];

			if (g->rmap[r] == -1 && loads_row(g, col, r)) {
				g->rmap[r] = -2;
				g->add_rows[g->n_add_rows++] = r;
			}
		}
	}
}

/* Append the queued columns (and the rows they need) to the CLP model, or
 * load it the first time. */
static int flush(struct lpcg *g, Clp_Simplex *m, int first)
{
	const struct inart_colgen_lp *b = g->b;
	size_t na = (size_t)g->n_add + 1, nr;
	CoinBigIndex *st = malloc(sizeof(*st) * na);
	double *lb = malloc(sizeof(double) * na);
	double *ub = malloc(sizeof(double) * na);
	double *ob = malloc(sizeof(double) * na);
	CoinBigIndex *rst = NULL;
	double *rlb = NULL, *rub = NULL, *rva = NULL, *va = NULL;
	int *rix = NULL, *ix = NULL, rc = 0, r0 = g->n_rows_loaded, c0 = g->n_loaded;
	size_t nz = 0, rnz = 0;

	queue_rows(g);
	nr = (size_t)g->n_add_rows + 1;
	for (int i = 0; i < g->n_add; i++)
		nz += (size_t)(g->start[g->add_cols[i] + 1] - g->start[g->add_cols[i]]);
	for (int i = 0; i < g->n_add_rows && !first; i++)
		rnz += (size_t)(g->bstart[g->add_rows[i] + 1] - g->bstart[g->add_rows[i]]);
	ix = malloc(sizeof(int) * (nz + 1));
	va = malloc(sizeof(double) * (nz + 1));
	rst = malloc(sizeof(*rst) * nr);
	rlb = malloc(sizeof(double) * nr);
	rub = malloc(sizeof(double) * nr);
	rix = malloc(sizeof(int) * (rnz + 1));
	rva = malloc(sizeof(double) * (rnz + 1));
	if (!st || !lb || !ub || !ob || !ix || !va || !rst || !rlb || !rub || !rix || !rva) {
		rc = -ENOMEM;
		goto out;
	}
	/* New rows, with the entries of columns loaded earlier (base columns). */
	rnz = 0;
	for (int i = 0; i < g->n_add_rows; i++) {
		int r = g->add_rows[i];

		g->rmap[r] = g->n_rows_loaded++;
		rst[i] = (CoinBigIndex)rnz;
		rlb[i] = b->m.rlb[r];
		rub[i] = b->m.rub[r];
		for (int k = g->bstart[r]; k < g->bstart[r + 1] && !first; k++) {
			if (g->loaded[g->bcol[k]] < 0)
				continue; /* a tree column not loaded yet */
			rix[rnz] = g->loaded[g->bcol[k]];
			rva[rnz++] = g->bval[k];
		}
	}
	rst[g->n_add_rows] = (CoinBigIndex)rnz;
	if (!first && g->n_add_rows > 0)
		Clp_addRows(m, g->n_add_rows, rlb, rub, rst, rix, rva);
	/* New columns. */
	nz = 0;
	for (int i = 0; i < g->n_add; i++) {
		int col = g->add_cols[i];

		st[i] = (CoinBigIndex)nz;
		for (CoinBigIndex k = g->start[col]; k < g->start[col + 1]; k++) {
			if (g->rmap[g->index[k]] < 0)
				continue; /* a row not loaded yet: it will take the entry */
			ix[nz] = g->rmap[g->index[k]];
			va[nz++] = g->value[k];
		}
		lb[i] = b->m.clb[col];
		ub[i] = b->m.cub[col];
		ob[i] = g->obj[col];
		g->loaded[col] = g->n_loaded;
		g->clp_col[g->n_loaded++] = col;
	}
	st[g->n_add] = (CoinBigIndex)nz;
	if (first)
		Clp_loadProblem(m, g->n_add, g->n_add_rows, st, ix, va, lb, ub, ob, rlb, rub);
	else
		Clp_addColumns(m, g->n_add, lb, ub, ob, st, ix, va);
	(void)r0;
	(void)c0;
	g->n_add = 0;
	g->n_add_rows = 0;
out:
	free(st);
	free(lb);
	free(ub);
	free(ob);
	free(ix);
	free(va);
	free(rst);
	free(rlb);
	free(rub);
	free(rix);
	free(rva);
	return rc;
}

static double reduced_cost(const struct lpcg *g, int col, const double *y)
{
	double d = g->obj[col];

	for (CoinBigIndex k = g->start[col]; k < g->start[col + 1]; k++) {
		int r = g->rmap[g->index[k]];

		if (r >= 0) /* rows not loaded are slack: dual 0 */
			d -= g->value[k] * y[r];
	}
	return d;
}

struct cand_col {
	double d;
	int choice;
};

/* Queue, for each owner, its best negatively priced choice.  Returns how many. */
static int price(struct lpcg *g, const double *y, double *lagr)
{
	const struct inart_colgen_lp *b = g->b;
	const struct inart_cand *c = b->c;
	int n_best = 0;
	struct cand_col *best_of = malloc(sizeof(*best_of) * ((size_t)c->n_flows + c->n_trees + 1));

	if (best_of == NULL)
		return -ENOMEM;
	*lagr = 0;
	for (int o = 0; o < c->n_flows + c->n_trees; o++) {
		int first = o < c->n_flows ? c->flows[o].first_choice
					   : c->trees[o - c->n_flows].first_choice;
		int n = o < c->n_flows ? c->flows[o].n_choices : c->trees[o - c->n_flows].n_choices;
		int best = -1;
		double best_d = -CG_TOL, owner_min = 0;

		for (int ci = first; ci < first + n; ci++) {
			double d = 0;

			if (b->col_x[ci] < 0 || g->loaded[b->col_x[ci]] != -1)
				continue;
			for (int k = 0; k < b->unit_cols; k++)
				d = fmin(d, reduced_cost(g, b->col_x[ci] + k, y));
			owner_min = fmin(owner_min, d);
			if (d < best_d) {
				best_d = d;
				best = ci;
			}
		}
		/* The owner's columns sum to at most 1 (sum x = 1; sum z = u <= 1;
		 * JOINT: x = s + v, z = s + w), so they can lower the objective by
		 * at most owner_min: Lagrangian bound z_RMP + sum of owner_min. */
		*lagr += owner_min;
		if (best >= 0)
			best_of[n_best++] = (struct cand_col){best_d, best};
	}
	for (int i = 0; i < n_best; i++)
		want_choice(g, best_of[i].choice);
	free(best_of);
	return n_best;
}

static int clp_run(Clp_Simplex *m, int warm)
{
	/* After adding columns the basis stays primal feasible: primal simplex.
	 * From scratch the dual simplex was faster on our instances. */
	if (warm)
		Clp_primal(m, 0);
	else
		Clp_dual(m, 0);
	if (Clp_status(m) != 0)
		Clp_primal(m, 0);
	return Clp_status(m);
}

/* Entries of the columns that are not choices in every row (CSR), for rows
 * loaded after such a column. */
static int base_csr(struct lpcg *g)
{
	const struct inart_colgen_lp *b = g->b;
	int *pos;
	size_t n = 0;

	pos = malloc(sizeof(int) * ((size_t)b->m.n_rows + 1));
	if (pos == NULL)
		return -ENOMEM;
	for (int col = 0; col < b->m.n_cols; col++)
		for (CoinBigIndex k = g->start[col];
		     k < g->start[col + 1] && g->kind[col] != COL_CHOICE; k++) {
			g->bstart[g->index[k] + 1]++;
			n++;
		}
	for (int r = 0; r < b->m.n_rows; r++)
		g->bstart[r + 1] += g->bstart[r];
	g->bval = malloc((sizeof(double) + sizeof(int)) * (n + 1));
	if (g->bval == NULL) {
		free(pos);
		return -ENOMEM;
	}
	g->bcol = (int *)(g->bval + n + 1); /* in the same block, after bval */
	memcpy(pos, g->bstart, sizeof(int) * (size_t)b->m.n_rows);
	for (int col = 0; col < b->m.n_cols; col++)
		for (CoinBigIndex k = g->start[col];
		     k < g->start[col + 1] && g->kind[col] != COL_CHOICE; k++) {
			int p = pos[g->index[k]]++;

			g->bcol[p] = col;
			g->bval[p] = g->value[k];
		}
	free(pos);
	return 0;
}

/* The loaded columns' values into sol (model columns; others 0). */
static void take_solution(const struct lpcg *g, Clp_Simplex *m, double *sol)
{
	const double *cs = Clp_getColSolution(m);

	memset(sol, 0, sizeof(double) * (size_t)g->b->m.n_cols);
	for (int i = 0; i < g->n_loaded; i++)
		sol[g->clp_col[i]] = cs[i];
}

/*
 * CLP with a CPU-second limit for this call (CLP's clock); status 3 when hit.
 */
static int clp_run_limited(Clp_Simplex *m, int warm, double deadline)
{
	if (deadline > 0)
		Clp_setMaximumSeconds(m, fmax(deadline - inart_now_s(), 0.01));
	return clp_run(m, warm);
}

/* The per-column and per-row arrays, in one slab (g->block). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct lpcg *g = obj;
	size_t nc = (size_t)g->b->m.n_cols + 1, nr = (size_t)g->b->m.n_rows + 1;

	int **per_col[] = {&g->loaded, &g->clp_col, &g->add_cols};
	int **per_row[] = {&g->rmap, &g->add_rows};

	for (size_t i = 0; i < sizeof(per_col) / sizeof(per_col[0]); i++)
		*per_col[i] = inart_slab_take(s, nc, sizeof(int));
	for (size_t i = 0; i < sizeof(per_row) / sizeof(per_row[0]); i++)
		*per_row[i] = inart_slab_take(s, nr, sizeof(int));
	g->kind = inart_slab_take(s, nc, sizeof(*g->kind));
	g->row_tree = inart_slab_take(s, nr, sizeof(*g->row_tree));
	g->bstart = inart_slab_take(s, nr + 1, sizeof(*g->bstart));
	g->owner_tree = inart_slab_take(s, (size_t)g->b->c->n_choices + 1, sizeof(*g->owner_tree));
}

/* Allocate the state, load the base columns, the first choice of every flow
 * and the warm start's support. */
static int colgen_init(struct lpcg *g, Clp_Simplex *m, int full, const double *warm_x)
{
	const struct inart_colgen_lp *b = g->b;
	size_t nc = (size_t)b->m.n_cols + 1, nr = (size_t)b->m.n_rows + 1;
	int rc;

	g->block = inart_slab_block(g, lay_out);
	if (g->block == NULL)
		return -ENOMEM;
	memset(g->loaded, -1, sizeof(int) * nc);
	memset(g->rmap, -1, sizeof(int) * nr);
	memset(g->kind, COL_BASE, nc);
	memset(g->owner_tree, -1, sizeof(int) * (size_t)b->c->n_choices);
	for (int ci = 0; ci < b->c->n_choices; ci++)
		for (int k = 0; k < b->unit_cols && b->col_x[ci] >= 0; k++)
			g->kind[b->col_x[ci] + k] = COL_CHOICE;
	for (int t = 0; t < b->c->n_trees; t++) {
		const struct inart_cand_tree *ct = &b->c->trees[t];

		for (int ci = ct->first_choice; ci < ct->first_choice + ct->n_choices; ci++)
			g->owner_tree[ci] = t;
		for (int k = 0; b->tree_col[t] >= 0 && k < b->tree_cols; k++) {
			int col = b->tree_col[t] + k;

			g->kind[col] = COL_TREE;
			for (CoinBigIndex e = g->start[col]; e < g->start[col + 1]; e++)
				g->row_tree[g->index[e]] = 1;
		}
	}
	rc = base_csr(g);
	if (rc < 0)
		return rc;
	for (int col = 0; col < b->m.n_cols; col++)
		if (g->kind[col] == COL_BASE || full)
			want(g, col);
	for (int f = 0; f < b->c->n_flows; f++)
		want_choice(g, b->c->flows[f].first_choice);
	for (int ci = 0; warm_x && ci < b->c->n_choices; ci++)
		if (warm_x[ci] > 1e-9)
			want_choice(g, ci);
	return flush(g, m, 1);
}

static void colgen_free(struct lpcg *g)
{
	free(g->block);
	free(g->bval);
}

/* Pricing rounds until nothing prices out, CLP fails or the deadline passes;
 * returns CLP's last status or -errno.  *have: sol holds a solution that is
 * optimal for the columns loaded at its round. */
static int colgen_rounds(struct lpcg *g, Clp_Simplex *m, int full, double deadline, double *sol,
			 struct inart_colgen_result *res, int *have)
{
	int status = clp_run_limited(m, 0, deadline);

	while (status == 0) {
		double lagr;
		int n_new, rc;

		take_solution(g, m, sol); /* optimal for the loaded columns */
		*have = 1;
		n_new = full ? 0 : price(g, Clp_getRowPrice(m), &lagr);
		if (n_new < 0)
			return n_new;
		if (n_new == 0) {
			res->optimal = 1;
			break;
		}
		res->lower = fmax(res->lower, Clp_getObjValue(m) + lagr);
		if (deadline > 0 && inart_now_s() >= deadline)
			break; /* time is up: keep this feasible solution */
		rc = flush(g, m, 0);
		if (rc < 0)
			return rc;
		res->rounds++;
		status = clp_run_limited(m, 1, deadline);
	}
	return status;
}

int inart_colgen_solve(const struct inart_colgen_lp *b, int full, const double *warm_x,
		       double deadline, double *sol, struct inart_colgen_result *res,
		       struct inart_err *err)
{
	struct lpcg g = {
	    .b = b, .start = b->m.start, .index = b->m.index, .value = b->m.value, .obj = b->m.obj};
	Clp_Simplex *m = Clp_newModel();
	int rc, status, have = 0;

	memset(res, 0, sizeof(*res));
	res->lower = -DBL_MAX;
	if (m == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	Clp_setLogLevel(m, 0);
	rc = colgen_init(&g, m, full, warm_x);
	if (rc < 0)
		goto out;
	Clp_setOptimizationDirection(m, 1.0);
	status = colgen_rounds(&g, m, full, deadline, sol, res, &have);
	if (status < 0) {
		rc = status;
		goto out;
	}
	if (status == 3 && deadline > 0) {
		/* Stopped on time: the better of this feasible point and the last
		 * round's optimum (both feasible for the whole LP). */
		if (Clp_primalFeasible(m) && (!have || Clp_getColSolution(m)[0] < sol[0])) {
			take_solution(&g, m, sol);
			have = 1;
		}
		if (!have) {
			rc = inart_err_set(err, -ETIMEDOUT,
					   "route_lp: no feasible LP solution in time");
			goto out;
		}
		status = 0;
	}
	if (status != 0) {
		rc = inart_err_set(err, -EINVAL, "route_lp: CLP status %d (%s)", status,
				   status == 1 ? "infeasible" : "not solved");
		goto out;
	}
	res->value = sol[0];
	if (res->optimal)
		res->value = res->lower = Clp_getObjValue(m);
	res->n_cols_used = g.n_loaded;
	res->n_rows_used = g.n_rows_loaded;
out:
	if (m)
		Clp_deleteModel(m);
	colgen_free(&g);
	return rc;
}
