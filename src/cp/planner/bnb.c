/*
 * bnb: branch-and-bound over share boxes and tree configurations for a
 * lower bound (see bnb.h).
 *
 * A node is a box of shares (per (job, PS) pair), a tree fixing (per cand
 * tree: -1 free, 0 unused, 1 used), its LP value (a lower bound on every
 * candidate plan in its region) and the LP's optimal basis, from which its
 * children start.  Open nodes sit in a binary heap by LP value; the search
 * pops the lowest, solves its LP again from its basis (to get the solution;
 * the basis is optimal, so this is a refactorization), chooses a branching,
 * solves every child and pushes those below the cutoff.  Nodes that cannot
 * be branched or whose LP fails are closed with their value kept in `floor`,
 * which the bound never exceeds.
 */
#include "cp/planner/bnb.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/slab.h"
#include "cp/planner/route_lp.h"

/* A share box narrower than this is not split further. */
#define BNB_MIN_WIDTH 1e-4
/* A threshold closer than this fraction of the box to an end moves to the
 * middle. */
#define BNB_EDGE 0.02
/* A node with nothing left to branch on (exact shares and trees, fractional
 * routes) gets CBC on the MILP of its region for at most this many seconds:
 * its bound, not the LP's, is then the node's floor. */
#define BNB_LEAF_S 5.0
#define BNB_LEAF_MIN_S 0.05
/* Open nodes are kept in memory up to this many bytes. */
#define BNB_MAX_BYTES ((size_t)1 << 30)
/* A margin on LP values for CLP's tolerances (relative). */
#define BNB_MARGIN 1e-7

struct node {
	double lb;
	double *lo, *hi;      /* per pair */
	signed char *fix;     /* per cand tree */
	unsigned char *basis; /* the model's basis size */
};

struct bnb {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_cand *c;
	const struct inart_bnb_opt *opt;
	struct inart_route_lp_model *m;
	int np, nt;
	size_t bs, node_bytes;
	void *block;	/* the arrays below, one allocation (lay_out) */
	int *pair_job;	/* per pair: its job */
	int *job_first; /* per job: its first pair */
	int *tree_pair; /* per cand tree: its pair */
	double *split, *u, *w, *sw_mass, *viol;
	struct node **heap;
	long nh, cap;
	double cutoff, floor, deadline;
	struct inart_bnb_result *res;
};

static void node_free(struct node *n)
{
	free(n);
}

/* A copy of n (or the root's box and fixing when n is NULL) in one block. */
static struct node *node_new(const struct bnb *b, const struct node *n)
{
	struct node *k = malloc(b->node_bytes);

	if (k == NULL)
		return NULL;
	k->lo = (double *)(k + 1);
	k->hi = k->lo + b->np;
	k->fix = (signed char *)(k->hi + b->np);
	k->basis = (unsigned char *)(k->fix + b->nt);
	if (n != NULL) {
		k->lb = n->lb;
		memcpy(k->lo, n->lo, sizeof(double) * (size_t)b->np);
		memcpy(k->hi, n->hi, sizeof(double) * (size_t)b->np);
		memcpy(k->fix, n->fix, (size_t)b->nt);
		memcpy(k->basis, n->basis, b->bs);
		return k;
	}
	k->lb = 0;
	for (int i = 0; i < b->np; i++) {
		k->lo[i] = 0;
		k->hi[i] = 1;
	}
	memset(k->fix, -1, (size_t)b->nt);
	return k;
}

static int heap_push(struct bnb *b, struct node *n)
{
	long i;

	if (b->nh == b->cap) {
		long nc = b->cap ? 2 * b->cap : 256;
		struct node **h = realloc(b->heap, sizeof(*h) * (size_t)nc);

		if (h == NULL)
			return -ENOMEM;
		b->heap = h;
		b->cap = nc;
	}
	i = b->nh++;
	b->heap[i] = n;
	while (i > 0 && b->heap[(i - 1) / 2]->lb > b->heap[i]->lb) {
		struct node *tmp = b->heap[i];

		b->heap[i] = b->heap[(i - 1) / 2];
		b->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct node *heap_pop(struct bnb *b)
{
	struct node *top = b->heap[0];
	long i = 0;

	b->heap[0] = b->heap[--b->nh];
	for (;;) {
		long l = 2 * i + 1, s = i;
		struct node *tmp;

		if (l < b->nh && b->heap[l]->lb < b->heap[s]->lb)
			s = l;
		if (l + 1 < b->nh && b->heap[l + 1]->lb < b->heap[s]->lb)
			s = l + 1;
		if (s == i)
			break;
		tmp = b->heap[i];
		b->heap[i] = b->heap[s];
		b->heap[s] = tmp;
		i = s;
	}
	return top;
}

/*
 * Tighten a box by sum_p a = 1 per job: hi_p <= 1 - sum of the others' lo,
 * lo_p >= 1 - sum of the others' hi.  0 if the box holds no split.
 */
static int propagate(const struct bnb *b, double *lo, double *hi)
{
	for (int j = 0; j < b->js->n_jobs; j++) {
		int f = b->job_first[j], n = b->js->jobs[j].n_ps;
		double sl = 0, sh = 0;

		for (int i = f; i < f + n; i++) {
			sl += lo[i];
			sh += hi[i];
		}
		if (sl > 1 + 1e-9 || sh < 1 - 1e-9)
			return 0;
		for (int i = f; i < f + n; i++) {
			double l = lo[i], h = hi[i];

			hi[i] = fmin(h, 1 - (sl - l));
			lo[i] = fmax(l, 1 - (sh - h));
			if (lo[i] > hi[i]) /* rounding: a single point */
				lo[i] = hi[i];
		}
	}
	return 1;
}

/* Solve n's LP from its basis; with want, the solution into b->split, u, w.
 * The LP value raises n->lb.  0, 1 (infeasible) or -errno. */
static int solve(struct bnb *b, struct node *n, int want)
{
	struct inart_route_lp_node nd = {n->lo, n->hi, n->fix, n->basis};
	struct inart_route_lp_point pt = {0};
	int rc;

	if (want) {
		pt.split = b->split;
		pt.u = b->u;
		pt.w = b->w;
	}
	pt.basis = n->basis;
	rc = inart_route_lp_model_solve(b->m, &nd, &pt);
	b->res->lps++;
	if (rc == 0)
		n->lb = fmax(n->lb, pt.value * (1 - BNB_MARGIN));
	return rc;
}

/* Close n: its value caps the bound. */
static void close_node(struct bnb *b, struct node *n)
{
	b->floor = fmin(b->floor, n->lb);
	node_free(n);
}

/* Push a solved child, or drop it when its LP is infeasible or at the
 * cutoff. */
static int offer_child(struct bnb *b, struct node *k)
{
	int rc = solve(b, k, 0);

	if (rc == 1 || (rc == 0 && b->cutoff > 0 && k->lb >= b->cutoff)) {
		node_free(k);
		return 0;
	}
	/* a failed LP keeps the parent's value; the node is tried again */
	rc = heap_push(b, k);
	if (rc < 0)
		node_free(k);
	return rc;
}

/* The pair to split: the largest sum over its trees of |W - a u|. */
static int pick_pair(struct bnb *b, const struct node *n, double *score)
{
	int best = -1;

	memset(b->viol, 0, sizeof(double) * (size_t)b->np);
	for (int k = 0; k < b->nt; k++) {
		int p = b->tree_pair[k];

		b->viol[p] += fabs(b->w[k] - b->split[p] * b->u[k]);
	}
	*score = 1e-7;
	for (int p = 0; p < b->np; p++) {
		if (b->viol[p] > *score && n->hi[p] - n->lo[p] > BNB_MIN_WIDTH) {
			*score = b->viol[p];
			best = p;
		}
	}
	return best;
}

/* The switch to branch on: the most fractional tree use. */
static int pick_switch(struct bnb *b, const struct node *n, double *score)
{
	int best = -1;

	memset(b->sw_mass, 0, sizeof(double) * (size_t)b->t->n_nodes);
	for (int k = 0; k < b->nt; k++)
		if (n->fix[k] < 0)
			b->sw_mass[b->c->trees[k].sw] += fmin(b->u[k], 1 - b->u[k]);
	*score = 1e-7;
	for (int v = 0; v < b->t->n_nodes; v++)
		if (b->sw_mass[v] > *score) {
			*score = b->sw_mass[v];
			best = v;
		}
	return best;
}

static int branch_share(struct bnb *b, const struct node *n, int p)
{
	double w = n->hi[p] - n->lo[p], th = b->split[p];
	int rc = 0;

	if (th - n->lo[p] < BNB_EDGE * w || n->hi[p] - th < BNB_EDGE * w)
		th = n->lo[p] + w / 2;
	for (int side = 0; side < 2 && rc == 0; side++) {
		struct node *k = node_new(b, n);

		if (k == NULL)
			return -ENOMEM;
		if (side == 0)
			k->hi[p] = th;
		else
			k->lo[p] = th;
		if (!propagate(b, k->lo, k->hi))
			node_free(k);
		else
			rc = offer_child(b, k);
	}
	return rc;
}

/*
 * Trees at switch v: with a budget of one, a child per free tree there
 * (used, the others not) and one with none used; else the most fractional
 * tree used | unused.
 */
static int branch_switch(struct bnb *b, const struct node *n, int v)
{
	int one = b->t->nodes[v].trees == 1, rc = 0, pick = -1;
	double most = -1;

	for (int k = 0; k < b->nt; k++)
		if (b->c->trees[k].sw == v && n->fix[k] < 0 && fmin(b->u[k], 1 - b->u[k]) > most) {
			most = fmin(b->u[k], 1 - b->u[k]);
			pick = k;
		}
	for (int k = -1; k < b->nt && rc == 0; k++) {
		struct node *child;

		if (k >= 0 && (b->c->trees[k].sw != v || n->fix[k] >= 0 || (!one && k != pick)))
			continue;
		if (k < 0 && !one)
			continue;
		child = node_new(b, n);
		if (child == NULL)
			return -ENOMEM;
		for (int q = 0; q < b->nt && one; q++)
			if (b->c->trees[q].sw == v && n->fix[q] < 0)
				child->fix[q] = q == k;
		if (!one)
			child->fix[k] = 1;
		rc = offer_child(b, child);
	}
	if (rc == 0 && !one) {
		struct node *child = node_new(b, n);

		if (child == NULL)
			return -ENOMEM;
		child->fix[pick] = 0;
		rc = offer_child(b, child);
	}
	return rc;
}

/*
 * n has nothing left to branch on: CBC on the MILP of its region (the JOINT
 * MILP with n's share box and tree fixing: exact, since its routes are
 * integral) raises n's value to CBC's best bound, within the time left.
 */
static void leaf_milp(struct bnb *b, struct node *n)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT, .integer = 1};
	struct inart_route_lp_result r = {0};
	struct inart_err err;
	double left = b->deadline > 0 ? b->deadline - inart_now_s() : BNB_LEAF_S;

	if (b->opt->max_nodes > 0 || !(left >= BNB_LEAF_MIN_S))
		return; /* a node budget (same result on any machine), or no time */
	lo.share_lo = n->lo;
	lo.share_hi = n->hi;
	lo.tree_fix = n->fix;
	lo.time_limit_s = fmin(BNB_LEAF_S, left);
	if (inart_route_lp_solve(b->t, b->js, b->c, NULL, &lo, &r, &err) == 0 && r.bound_s > 0)
		n->lb = fmax(n->lb, r.bound_s * (1 - BNB_MARGIN));
	b->res->leaf_milps++;
	inart_route_lp_result_free(&r);
}

/* Branch the lowest open node; closes it when there is nothing to branch. */
static int step(struct bnb *b)
{
	struct node *n = heap_pop(b);
	double ps, ss;
	int rc = solve(b, n, 1), p, v;

	if (rc == 1) { /* infeasible after all: no plan in its region */
		node_free(n);
		return 0;
	}
	if (rc < 0) {
		close_node(b, n);
		return 0;
	}
	p = pick_pair(b, n, &ps);
	v = p < 0 ? pick_switch(b, n, &ss) : -1;
	if (p < 0 && v < 0) {
		leaf_milp(b, n);
		close_node(b, n);
		return 0;
	}
	b->res->nodes++;
	rc = p >= 0 ? branch_share(b, n, p) : branch_switch(b, n, v);
	node_free(n);
	return rc;
}

static int stop(const struct bnb *b)
{
	if (b->nh == 0)
		return 1;
	if (b->cutoff > 0 && b->heap[0]->lb >= b->cutoff)
		return 1;
	if (b->heap[0]->lb >= b->floor)
		return 1;
	if (b->opt->max_nodes > 0 && b->res->lps >= b->opt->max_nodes)
		return 1;
	if ((size_t)b->nh * b->node_bytes > BNB_MAX_BYTES)
		return 1;
	return b->deadline > 0 && inart_now_s() >= b->deadline;
}

/* The per-pair, per-tree and per-node arrays, in one slab (b->block). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct bnb *b = obj;
	size_t np = (size_t)b->np + 1, nt = (size_t)b->nt + 1;

	b->pair_job = inart_slab_take(s, np, sizeof(*b->pair_job));
	b->job_first = inart_slab_take(s, (size_t)b->js->n_jobs + 1, sizeof(*b->job_first));
	b->tree_pair = inart_slab_take(s, nt, sizeof(*b->tree_pair));
	b->split = inart_slab_take(s, np, sizeof(*b->split));
	b->viol = inart_slab_take(s, np, sizeof(*b->viol));
	b->u = inart_slab_take(s, nt, sizeof(*b->u));
	b->w = inart_slab_take(s, nt, sizeof(*b->w));
	b->sw_mass = inart_slab_take(s, (size_t)b->t->n_nodes + 1, sizeof(*b->sw_mass));
}

static int setup(struct bnb *b)
{
	const struct inart_cand *c = b->c;

	b->nt = c->n_trees;
	b->np = inart_route_lp_model_n_pairs(b->m);
	b->bs = inart_route_lp_model_basis_size(b->m);
	b->node_bytes = sizeof(struct node) + sizeof(double) * 2 * (size_t)b->np + (size_t)b->nt +
			b->bs + sizeof(double);
	b->block = inart_slab_block(b, lay_out);
	if (b->block == NULL)
		return -ENOMEM;
	inart_jobs_pairs(b->js, b->job_first);
	for (int j = 0; j < b->js->n_jobs; j++)
		for (int i = 0; i < b->js->jobs[j].n_ps; i++)
			b->pair_job[b->job_first[j] + i] = j;
	for (int k = 0; k < b->nt; k++)
		b->tree_pair[k] = b->job_first[c->trees[k].job] + c->trees[k].ps_idx;
	return 0;
}

static void cleanup(struct bnb *b)
{
	for (long i = 0; i < b->nh; i++)
		node_free(b->heap[i]);
	free(b->heap);
	free(b->block);
	inart_route_lp_model_destroy(b->m);
}

int inart_bnb_run(const struct inart_topo *t, const struct inart_jobs *js,
		  const struct inart_cand *c, const struct inart_bnb_opt *opt,
		  struct inart_bnb_result *res, struct inart_err *err)
{
	struct bnb b = {.t = t, .js = js, .c = c, .opt = opt, .res = res};
	struct node *root = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!(opt->time_limit_s > 0) && opt->max_nodes <= 0)
		return inart_err_set(err, -EINVAL, "bnb: no time limit nor node limit");
	b.deadline = opt->time_limit_s > 0 ? inart_now_s() + opt->time_limit_s : 0;
	b.cutoff = opt->cutoff_s > 0 ? opt->cutoff_s : 0;
	b.floor = INFINITY;
	rc = inart_route_lp_model_create(t, js, c, &b.m, err);
	if (rc == 0)
		rc = setup(&b);
	if (rc == 0)
		rc = (root = node_new(&b, NULL)) ? 0 : -ENOMEM;
	if (rc == 0) {
		struct inart_route_lp_node nd = {root->lo, root->hi, root->fix, NULL};
		struct inart_route_lp_point pt = {.basis = root->basis};

		rc = inart_route_lp_model_solve(b.m, &nd, &pt);
		res->lps++;
		if (rc != 0) {
			node_free(root);
			rc = inart_err_set(err, -EIO, "bnb: the root LP failed (%d)", rc);
		} else {
			res->root_s = pt.value;
			root->lb = pt.value * (1 - BNB_MARGIN);
			rc = heap_push(&b, root);
			if (rc < 0)
				node_free(root);
		}
	}
	while (rc == 0 && !stop(&b))
		rc = step(&b);
	if (rc == 0) {
		double lb = b.nh > 0 ? b.heap[0]->lb : INFINITY;

		if (b.cutoff > 0)
			lb = fmin(lb, b.cutoff);
		res->bound_s = fmin(lb, b.floor);
		res->open = b.nh;
		if (isinf(res->bound_s)) /* nothing open, no cutoff: every region closed */
			res->bound_s = res->root_s;
	}
	cleanup(&b);
	if (rc == -ENOMEM)
		inart_err_set(err, rc, "bnb: out of memory");
	return rc;
}
