/*
 * evaluate: checks a plan and computes its communication time, exactly as
 * defined in evaluate.h (docs/evaluator.md has the formulas).
 *
 * The evaluator is made for repeated use (rounding judges thousands of
 * plans): every per-arc and per-node array is allocated once at creation, in
 * the evaluator's own block, and only the entries a run touched are reset by
 * the next run, so a run costs O(total path length + trees + jobs * workers *
 * PSs) and allocates nothing unless a job has more (worker, PS) pairs or
 * trees than any before (the per-job scratch, one block that grows).  Per-job lookups
 * (node -> worker index, PS index, trees at a switch) are arrays stamped with
 * a generation number instead of being cleared.
 *
 * Ownership: the evaluator owns its arrays (returned through struct
 * inart_eval, valid until its next run or destroy): the fixed ones share its
 * allocation, the per-job scratch is job_block; it refers to, and does
 * not own, the topology and jobs.
 */
#include "cp/model/evaluate.h"

#include "common/slab.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define SPLIT_TOL 1e-6

struct inart_evaluator {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	int n, m;
	/* in the evaluator's block (lay_out): */
	/* results, per arc / per node */
	double *arc_push, *arc_pull;
	double *node_agg, *node_ingress;
	int *node_trees;
	/* entries touched by the current run, to reset them at the next */
	int *arc_list, n_arc_list;
	char *arc_touched;
	int *node_list, n_node_list;
	char *node_touched;
	/* per-job node maps, valid where *gen[v] == jgen */
	unsigned *wgen, *pgen, *hgen;
	int *widx, *pidx, *head;
	unsigned jgen;
	/* per-path visit stamps */
	unsigned *vgen;
	unsigned pathgen;
	/* per-job scratch, in job_block (lay_out_job) */
	void *job_block;
	char *seen; /* n_workers * n_ps */
	size_t cap_seen;
	int cap_trees;
	int *tnext, *tpidx, *tchildren, *tparent, *tstate;
};

/* The per-arc and per-node arrays, in the evaluator's block (common/slab.h):
 * arcs (m + 1 entries each) arc_push, arc_pull, arc_list, arc_touched, then
 * nodes (n + 1 entries each) node_agg, node_ingress, node_trees, node_list,
 * node_touched, the stamps wgen, pgen, hgen, vgen and the maps widx, pidx,
 * head. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_evaluator *ev = obj;
	size_t n = (size_t)ev->n + 1, m = (size_t)ev->m + 1;
	/* the per-job node maps (valid where their stamp is the job's), the
	 * per-path visit stamps */
	unsigned **stamps[] = {&ev->wgen, &ev->pgen, &ev->hgen, &ev->vgen};
	int **maps[] = {&ev->widx, &ev->pidx, &ev->head};

	ev->arc_push = inart_slab_take(s, m, sizeof(double));
	ev->arc_pull = inart_slab_take(s, m, sizeof(double));
	ev->arc_list = inart_slab_take(s, m, sizeof(int));
	ev->arc_touched = inart_slab_take(s, m, 1);
	ev->node_agg = inart_slab_take(s, n, sizeof(double));
	ev->node_ingress = inart_slab_take(s, n, sizeof(double));
	ev->node_trees = inart_slab_take(s, n, sizeof(int));
	ev->node_list = inart_slab_take(s, n, sizeof(int));
	ev->node_touched = inart_slab_take(s, n, 1);
	for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++)
		*stamps[i] = inart_slab_take(s, n, sizeof(unsigned));
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		*maps[i] = inart_slab_take(s, n, sizeof(int));
}

struct inart_evaluator *inart_evaluator_create(const struct inart_topo *t,
					       const struct inart_jobs *js)
{
	struct inart_evaluator proto = {.t = t, .js = js, .n = t->n_nodes};

	proto.m = inart_topo_n_arcs(t);
	return inart_slab_new(&proto, sizeof(proto), lay_out);
}

void inart_evaluator_destroy(struct inart_evaluator *ev)
{
	if (ev == NULL)
		return;
	free(ev->job_block);
	free(ev); /* the per-arc and per-node arrays with it */
}

static void reset(struct inart_evaluator *ev)
{
	for (int i = 0; i < ev->n_arc_list; i++) {
		int e = ev->arc_list[i];

		ev->arc_push[e] = ev->arc_pull[e] = 0;
		ev->arc_touched[e] = 0;
	}
	ev->n_arc_list = 0;
	for (int i = 0; i < ev->n_node_list; i++) {
		int v = ev->node_list[i];

		ev->node_agg[v] = ev->node_ingress[v] = 0;
		ev->node_trees[v] = 0;
		ev->node_touched[v] = 0;
	}
	ev->n_node_list = 0;
}

static void touch_arc(struct inart_evaluator *ev, int e)
{
	if (!ev->arc_touched[e]) {
		ev->arc_touched[e] = 1;
		ev->arc_list[ev->n_arc_list++] = e;
	}
}

static void touch_node(struct inart_evaluator *ev, int v)
{
	if (!ev->node_touched[v]) {
		ev->node_touched[v] = 1;
		ev->node_list[ev->n_node_list++] = v;
	}
}

static unsigned next_gen(unsigned *gen, unsigned *a, unsigned *b, unsigned *c, size_t n)
{
	if (*gen == UINT_MAX) {
		memset(a, 0, n * sizeof(*a));
		if (b)
			memset(b, 0, n * sizeof(*b));
		if (c)
			memset(c, 0, n * sizeof(*c));
		*gen = 0;
	}
	return ++*gen;
}

/* The per-job scratch in one block (common/slab.h): seen (cap_seen
 * bytes), then cap_trees entries each of tnext, tpidx, tchildren, tparent,
 * tstate. */
static void lay_out_job(void *obj, struct inart_slab *s)
{
	struct inart_evaluator *ev = obj;
	size_t n = (size_t)ev->cap_trees;

	ev->seen = inart_slab_take(s, ev->cap_seen, 1);
	ev->tnext = inart_slab_take(s, n, sizeof(*ev->tnext));
	ev->tpidx = inart_slab_take(s, n, sizeof(*ev->tpidx));
	ev->tchildren = inart_slab_take(s, n, sizeof(*ev->tchildren));
	ev->tparent = inart_slab_take(s, n, sizeof(*ev->tparent));
	ev->tstate = inart_slab_take(s, n, sizeof(*ev->tstate));
}

/* Room for a job of n_seen (worker, PS) marks and n_trees trees (the tree
 * capacity doubles from 16).  Every job clears and rebuilds the scratch it
 * uses, so a larger block starts empty; on failure there is none (both
 * capacities 0). */
static int grow_job(struct inart_evaluator *ev, size_t n_seen, int n_trees)
{
	int cap = ev->cap_trees ? ev->cap_trees : 16;

	if (ev->job_block != NULL && n_seen <= ev->cap_seen && n_trees <= ev->cap_trees)
		return 0;
	while (cap < n_trees)
		cap *= 2;
	free(ev->job_block);
	ev->cap_seen = n_seen > ev->cap_seen ? n_seen : ev->cap_seen;
	ev->cap_trees = cap;
	ev->job_block = inart_slab_block(ev, lay_out_job);
	if (ev->job_block == NULL) {
		ev->cap_seen = 0;
		ev->cap_trees = 0;
		return -ENOMEM;
	}
	return 0;
}

static const char *nid(const struct inart_evaluator *ev, int v)
{
	return ev->t->nodes[v].id;
}

static int in_range(const struct inart_evaluator *ev, int v)
{
	return v >= 0 && v < ev->n;
}

static int is_ina(const struct inart_evaluator *ev, int v)
{
	const struct inart_node *nd = &ev->t->nodes[v];

	return nd->kind == INART_NODE_SWITCH && nd->ina;
}

/* Tree of the current job at switch sw for PS index pi, or -1. */
static int find_tree(const struct inart_evaluator *ev, int sw, int pi)
{
	if (ev->hgen[sw] != ev->jgen)
		return -1;
	for (int i = ev->head[sw]; i >= 0; i = ev->tnext[i])
		if (ev->tpidx[i] == pi)
			return i;
	return -1;
}

/* What a path belongs to, formatted only when a message needs it. */
struct who {
	int is_tree, a, b; /* flow (0): worker, PS; tree (1): switch, PS; ring hop (2):
			      from, to */
};

#define WHO_MAX (INART_ERR_MAX / 2)
#define WHO(w) who_str(ev, (w), wb, sizeof(wb))

static const char *who_str(const struct inart_evaluator *ev, const struct who *w, char *buf,
			   size_t n)
{
	if (w->is_tree == 2)
		snprintf(buf, n, "ring hop '%s'->'%s'", ev->t->nodes[w->a].id,
			 ev->t->nodes[w->b].id);
	else if (w->is_tree)
		snprintf(buf, n, "tree at '%s' for PS '%s'", ev->t->nodes[w->a].id,
			 ev->t->nodes[w->b].id);
	else
		snprintf(buf, n, "flow '%s'->'%s'", ev->t->nodes[w->a].id, ev->t->nodes[w->b].id);
	return buf;
}

/*
 * Check one path (from `from` to `to`: contiguous, simple, residual capacity
 * in both directions of every link) and add its push (forward) and pull
 * (reverse) load.  who names the flow or tree in messages.  A ring hop
 * (who->is_tree == 2) carries both phases forward (reduce-scatter as push,
 * all-gather as pull) and their acknowledgements back
 * (INART_EVAL_RING_ACK_SHARE of each).
 */
static int walk_path(struct inart_evaluator *ev, const char *job, const struct who *who,
		     const int *path, int n, int from, int to, double vol, struct inart_err *err)
{
	const struct inart_topo *t = ev->t;
	char wb[WHO_MAX];
	unsigned g;

	if (n < 1 || path == NULL)
		return inart_err_set(err, -EINVAL, "job '%s': %s: empty path", job, WHO(who));
	for (int i = 0; i < n; i++)
		if (!in_range(ev, path[i]))
			return inart_err_set(err, -EINVAL,
					     "job '%s': %s: path has an unknown node number %d",
					     job, WHO(who), path[i]);
	if (path[0] != from)
		return inart_err_set(err, -EINVAL, "job '%s': %s: path starts at '%s', not at '%s'",
				     job, WHO(who), nid(ev, path[0]), nid(ev, from));
	if (path[n - 1] != to)
		return inart_err_set(err, -EINVAL, "job '%s': %s: path ends at '%s', not at '%s'",
				     job, WHO(who), nid(ev, path[n - 1]), nid(ev, to));
	g = next_gen(&ev->pathgen, ev->vgen, NULL, NULL, (size_t)ev->n);
	for (int i = 0; i < n; i++) {
		int u = path[i], e;

		if (ev->vgen[u] == g)
			return inart_err_set(err, -EINVAL, "job '%s': %s: path visits '%s' twice",
					     job, WHO(who), nid(ev, u));
		ev->vgen[u] = g;
		if (i + 1 == n)
			break;
		e = inart_topo_arc_between(t, u, path[i + 1]);
		if (e < 0)
			return inart_err_set(
			    err, -EINVAL,
			    "job '%s': %s: path is not contiguous: no link between '%s' and '%s'",
			    job, WHO(who), nid(ev, u), nid(ev, path[i + 1]));
		if (!(inart_arc_residual(&t->arcs[e]) > 0))
			return inart_err_set(
			    err, -EINVAL, "job '%s': %s: arc '%s'->'%s' has no residual capacity",
			    job, WHO(who), nid(ev, u), nid(ev, path[i + 1]));
		if (!(inart_arc_residual(&t->arcs[e ^ 1]) > 0))
			return inart_err_set(
			    err, -EINVAL,
			    "job '%s': %s: arc '%s'->'%s' has no residual capacity "
			    "(%s uses it)",
			    job, WHO(who), nid(ev, path[i + 1]), nid(ev, u),
			    who->is_tree == 2 ? "the ring's acknowledgements" : "the pull phase");
		touch_arc(ev, e);
		touch_arc(ev, e ^ 1);
		ev->arc_push[e] += vol;
		if (who->is_tree == 2) { /* both phases forward, their ACKs back */
			ev->arc_pull[e] += vol;
			ev->arc_push[e ^ 1] += INART_EVAL_RING_ACK_SHARE * vol;
			ev->arc_pull[e ^ 1] += INART_EVAL_RING_ACK_SHARE * vol;
		} else {
			ev->arc_pull[e ^ 1] += vol;
		}
	}
	return 0;
}

static int check_split(const struct inart_job *job, const struct inart_job_plan *jp,
		       const struct inart_topo *t, struct inart_err *err)
{
	double sum = 0;

	if (jp->n_ps != job->n_ps || (job->n_ps > 0 && jp->split == NULL))
		return inart_err_set(err, -EINVAL, "job '%s': split has %d shares for %d PSs",
				     job->id, jp->split ? jp->n_ps : 0, job->n_ps);
	for (int p = 0; p < job->n_ps; p++) {
		double a = jp->split[p];

		if (!isfinite(a))
			return inart_err_set(err, -EINVAL,
					     "job '%s': share of PS '%s' is not a finite number",
					     job->id, t->nodes[job->ps[p]].id);
		if (a < 0)
			return inart_err_set(err, -EINVAL,
					     "job '%s': share of PS '%s' is negative (%g)", job->id,
					     t->nodes[job->ps[p]].id, a);
		sum += a;
	}
	if (fabs(sum - 1) > SPLIT_TOL)
		return inart_err_set(err, -EINVAL, "job '%s': shares sum to %.9g, not 1", job->id,
				     sum);
	return 0;
}

/* Index the trees of job j, check switch, PS, duplicates and budgets. */
static int index_trees(struct inart_evaluator *ev, const struct inart_job *job,
		       const struct inart_job_plan *jp, struct inart_err *err)
{
	for (int i = 0; i < jp->n_trees; i++) {
		const struct inart_tree *tr = &jp->trees[i];
		int sw = tr->sw, pi;

		if (!in_range(ev, sw))
			return inart_err_set(
			    err, -EINVAL, "job '%s': tree at unknown node number %d", job->id, sw);
		if (!in_range(ev, tr->ps) || ev->pgen[tr->ps] != ev->jgen)
			return inart_err_set(
			    err, -EINVAL, "job '%s': tree at '%s': '%s' is not a PS of the job",
			    job->id, nid(ev, sw), in_range(ev, tr->ps) ? nid(ev, tr->ps) : "?");
		pi = ev->pidx[tr->ps];
		if (!is_ina(ev, sw))
			return inart_err_set(
			    err, -EINVAL,
			    "job '%s': tree at '%s' for PS '%s': aggregation at '%s', which is "
			    "not an INA switch",
			    job->id, nid(ev, sw), nid(ev, tr->ps), nid(ev, sw));
		if (find_tree(ev, sw, pi) >= 0)
			return inart_err_set(err, -EINVAL,
					     "job '%s': duplicate tree at '%s' for PS '%s'",
					     job->id, nid(ev, sw), nid(ev, tr->ps));
		ev->tnext[i] = ev->hgen[sw] == ev->jgen ? ev->head[sw] : -1;
		ev->hgen[sw] = ev->jgen;
		ev->head[sw] = i;
		ev->tpidx[i] = pi;
		ev->tchildren[i] = 0;
		ev->tstate[i] = 0;
		touch_node(ev, sw);
		if (++ev->node_trees[sw] > ev->t->nodes[sw].trees)
			return inart_err_set(err, -EINVAL,
					     "job '%s': tree at '%s' for PS '%s' exceeds the tree "
					     "budget of '%s' (%d; trees of all jobs counted)",
					     job->id, nid(ev, sw), nid(ev, tr->ps), nid(ev, sw),
					     ev->t->nodes[sw].trees);
	}
	return 0;
}

/* Parents, paths and loads of the trees of one job, then cycles. */
static int walk_trees(struct inart_evaluator *ev, const struct inart_job *job,
		      const struct inart_job_plan *jp, double gbit, struct inart_err *err)
{
	char wb[WHO_MAX];
	int rc;

	for (int i = 0; i < jp->n_trees; i++) {
		const struct inart_tree *tr = &jp->trees[i];
		int pi = ev->tpidx[i], par = tr->parent;
		double vol = jp->split[pi] * gbit;
		struct who who = {1, tr->sw, tr->ps};

		if (!in_range(ev, par))
			return inart_err_set(err, -EINVAL,
					     "job '%s': %s: parent is an unknown node number %d",
					     job->id, WHO(&who), par);
		if (par == tr->ps) {
			ev->tparent[i] = -1;
		} else {
			ev->tparent[i] = find_tree(ev, par, pi);
			if (ev->tparent[i] < 0)
				return inart_err_set(err, -EINVAL,
						     "job '%s': %s: parent '%s' is neither the PS "
						     "nor a tree switch of the same (job, PS)",
						     job->id, WHO(&who), nid(ev, par));
			ev->tchildren[ev->tparent[i]]++;
		}
		rc = walk_path(ev, job->id, &who, tr->path, tr->n_path, tr->sw, par, vol, err);
		if (rc < 0)
			return rc;
		touch_node(ev, par);
		if (par == tr->ps)
			ev->node_ingress[par] += vol;
		else
			ev->node_agg[par] += vol;
	}
	/* Cycles: follow parents; state 1 = on the current chain, 2 = reaches
	 * the PS. */
	for (int i = 0; i < jp->n_trees; i++) {
		int c = i;

		while (c >= 0 && ev->tstate[c] == 0) {
			ev->tstate[c] = 1;
			c = ev->tparent[c];
		}
		if (c >= 0 && ev->tstate[c] == 1)
			return inart_err_set(
			    err, -EINVAL, "job '%s': trees for PS '%s' form a cycle through '%s'",
			    job->id, nid(ev, jp->trees[c].ps), nid(ev, jp->trees[c].sw));
		for (c = i; c >= 0 && ev->tstate[c] == 1; c = ev->tparent[c])
			ev->tstate[c] = 2;
	}
	return 0;
}

static int walk_flows(struct inart_evaluator *ev, const struct inart_job *job,
		      const struct inart_job_plan *jp, double gbit, struct inart_err *err)
{
	char wb[WHO_MAX];
	int np = job->n_ps, rc;

	memset(ev->seen, 0, (size_t)job->n_workers * (size_t)np);
	for (int i = 0; i < jp->n_flows; i++) {
		const struct inart_flow *f = &jp->flows[i];
		int w = f->worker, p = f->ps, agg = f->agg, wi, pi;
		struct who who = {0, w, p};
		double vol;

		if (!in_range(ev, w) || !in_range(ev, p) || !in_range(ev, agg))
			return inart_err_set(err, -EINVAL,
					     "job '%s': flow %d names an unknown node number",
					     job->id, i);
		if (ev->wgen[w] != ev->jgen)
			return inart_err_set(err, -EINVAL,
					     "job '%s': %s: '%s' is not a worker of the job",
					     job->id, WHO(&who), nid(ev, w));
		if (ev->pgen[p] != ev->jgen)
			return inart_err_set(err, -EINVAL,
					     "job '%s': %s: '%s' is not a PS of the job", job->id,
					     WHO(&who), nid(ev, p));
		wi = ev->widx[w];
		pi = ev->pidx[p];
		if (ev->seen[(size_t)wi * (size_t)np + (size_t)pi])
			return inart_err_set(err, -EINVAL,
					     "job '%s': duplicate flow from worker '%s' to PS '%s'",
					     job->id, nid(ev, w), nid(ev, p));
		ev->seen[(size_t)wi * (size_t)np + (size_t)pi] = 1;
		vol = jp->split[pi] * gbit;
		if (agg != p) {
			int tr;

			if (!is_ina(ev, agg))
				return inart_err_set(err, -EINVAL,
						     "job '%s': %s: aggregation at '%s', which is "
						     "not an INA switch (nor the flow's PS)",
						     job->id, WHO(&who), nid(ev, agg));
			tr = find_tree(ev, agg, pi);
			if (tr < 0)
				return inart_err_set(
				    err, -EINVAL,
				    "job '%s': %s: aggregation at '%s', which has no "
				    "tree entry for PS '%s'",
				    job->id, WHO(&who), nid(ev, agg), nid(ev, p));
			ev->tchildren[tr]++;
		}
		rc = walk_path(ev, job->id, &who, f->path, f->n_path, w, agg, vol, err);
		if (rc < 0)
			return rc;
		touch_node(ev, agg);
		if (agg == p)
			ev->node_ingress[p] += vol;
		else
			ev->node_agg[agg] += vol;
	}
	for (int i = 0; i < jp->n_trees; i++)
		if (ev->tchildren[i] == 0)
			return inart_err_set(
			    err, -EINVAL, "job '%s': tree at '%s' for PS '%s' has no children",
			    job->id, nid(ev, jp->trees[i].sw), nid(ev, jp->trees[i].ps));
	for (int wi = 0; wi < job->n_workers; wi++)
		for (int pi = 0; pi < np; pi++)
			if (jp->split[pi] > 0 && !ev->seen[(size_t)wi * (size_t)np + (size_t)pi])
				return inart_err_set(err, -EINVAL,
						     "job '%s': worker '%s' has no flow to PS '%s' "
						     "(share %g)",
						     job->id, nid(ev, job->workers[wi]),
						     nid(ev, job->ps[pi]), jp->split[pi]);
	return 0;
}

/* Start node of ring hop i, -1 if the hop has no valid first node. */
static int hop_start(const struct inart_evaluator *ev, const struct inart_job_plan *jp, int i)
{
	const struct inart_ring_hop *h = &jp->ring[i];

	return h->n_path >= 1 && h->path != NULL && in_range(ev, h->path[0]) ? h->path[0] : -1;
}

/*
 * A ring all-reduce: hop i goes from its first node, a worker, to the first
 * node of hop i + 1 (the last hop to that of hop 0); every worker starts
 * exactly one hop.  Each hop carries (N - 1) / N of the gradient forward in
 * each phase (ev->seen marks the workers; the caller stamped wgen/widx).
 */
static int walk_ring(struct inart_evaluator *ev, const struct inart_job *job,
		     const struct inart_job_plan *jp, double gbit, struct inart_err *err)
{
	int n = job->n_workers;
	double vol = (double)(n - 1) / n * gbit;

	if (jp->n_flows > 0 || jp->n_trees > 0)
		return inart_err_set(err, -EINVAL,
				     "job '%s': a ring all-reduce has no flows or trees (%d, %d)",
				     job->id, jp->n_flows, jp->n_trees);
	if (jp->n_ring != n)
		return inart_err_set(err, -EINVAL, "job '%s': the ring has %d hops for %d workers",
				     job->id, jp->n_ring, n);
	memset(ev->seen, 0, (size_t)n);
	for (int i = 0; i < n; i++) {
		int from = hop_start(ev, jp, i), to = hop_start(ev, jp, (i + 1) % n), rc;
		struct who w = {2, from, to};

		if (from < 0 || to < 0)
			return inart_err_set(err, -EINVAL, "job '%s': ring hop %d: empty path",
					     job->id, from < 0 ? i : (i + 1) % n);
		if (ev->wgen[from] != ev->jgen)
			return inart_err_set(err, -EINVAL,
					     "job '%s': ring hop %d starts at '%s', which is not "
					     "a worker of the job",
					     job->id, i, nid(ev, from));
		if (ev->seen[ev->widx[from]]++)
			return inart_err_set(err, -EINVAL, "job '%s': the ring visits '%s' twice",
					     job->id, nid(ev, from));
		rc = walk_path(ev, job->id, &w, jp->ring[i].path, jp->ring[i].n_path, from, to, vol,
			       err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int run_job(struct inart_evaluator *ev, const struct inart_job *job,
		   const struct inart_job_plan *jp, struct inart_err *err)
{
	size_t need = (size_t)job->n_workers * (size_t)job->n_ps;
	double gbit = inart_job_gbit(job);
	int rc;

	rc = jp->n_ring > 0 ? 0 : check_split(job, jp, ev->t, err);
	if (rc < 0)
		return rc;
	if (grow_job(ev, need, jp->n_trees) < 0)
		return inart_err_set(err, -ENOMEM, "out of memory");
	next_gen(&ev->jgen, ev->wgen, ev->pgen, ev->hgen, (size_t)ev->n);
	for (int k = 0; k < job->n_workers; k++) {
		ev->wgen[job->workers[k]] = ev->jgen;
		ev->widx[job->workers[k]] = k;
	}
	for (int k = 0; k < job->n_ps; k++) {
		ev->pgen[job->ps[k]] = ev->jgen;
		ev->pidx[job->ps[k]] = k;
	}
	if (jp->n_ring > 0)
		return walk_ring(ev, job, jp, gbit, err);
	rc = index_trees(ev, job, jp, err);
	if (rc == 0)
		rc = walk_trees(ev, job, jp, gbit, err);
	if (rc == 0)
		rc = walk_flows(ev, job, jp, gbit, err);
	return rc;
}

int inart_evaluator_run(struct inart_evaluator *ev, const struct inart_plan *plan,
			struct inart_eval *out, struct inart_err *err)
{
	const struct inart_topo *t = ev->t;
	const struct inart_jobs *js = ev->js;
	double push_t = 0, pull_t = 0, arc_t = 0, node_t = 0;
	int best_arc = -1, best_node = -1, rc;

	reset(ev);
	if (plan->n_jobs != js->n_jobs)
		return inart_err_set(err, -EINVAL, "plan has %d jobs, the jobs set has %d",
				     plan->n_jobs, js->n_jobs);
	for (int j = 0; j < js->n_jobs; j++) {
		rc = run_job(ev, &js->jobs[j], &plan->jobs[j], err);
		if (rc < 0)
			return rc;
	}
	for (int i = 0; i < ev->n_arc_list; i++) {
		int e = ev->arc_list[i];
		double res = inart_arc_residual(&t->arcs[e]);
		double tp = ev->arc_push[e] / res, tq = ev->arc_pull[e] / res;
		double tt = (ev->arc_push[e] + ev->arc_pull[e]) / res;

		if (tp > push_t)
			push_t = tp;
		if (tq > pull_t)
			pull_t = tq;
		if (tt > arc_t || (tt == arc_t && tt > 0 && e < best_arc)) {
			arc_t = tt;
			best_arc = e;
		}
	}
	for (int i = 0; i < ev->n_node_list; i++) {
		int v = ev->node_list[i];
		double tn;

		if (!(ev->node_agg[v] > 0))
			continue;
		tn = ev->node_agg[v] / t->nodes[v].agg_gbps;
		if (tn > push_t)
			push_t = tn;
		if (tn > node_t || (tn == node_t && v < best_node)) {
			node_t = tn;
			best_node = v;
		}
	}
	if (out == NULL)
		return 0;
	out->push_time_s = push_t;
	out->pull_time_s = pull_t;
	if (node_t > arc_t) {
		out->comm_time_s = node_t;
		out->bottleneck_arc = -1;
		out->bottleneck_node = best_node;
	} else {
		out->comm_time_s = arc_t;
		out->bottleneck_arc = best_arc;
		out->bottleneck_node = -1;
	}
	out->arc_push_gbit = ev->arc_push;
	out->arc_pull_gbit = ev->arc_pull;
	out->node_agg_gbit = ev->node_agg;
	out->node_trees = ev->node_trees;
	out->node_ingress_gbit = ev->node_ingress;
	return 0;
}

int inart_evaluate(const struct inart_topo *t, const struct inart_jobs *js, struct inart_plan *plan,
		   struct inart_err *err)
{
	struct inart_evaluator *ev = inart_evaluator_create(t, js);
	struct inart_eval r;
	int rc;

	if (ev == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	rc = inart_evaluator_run(ev, plan, &r, err);
	if (rc == 0) {
		plan->comm_time_s = r.comm_time_s;
		plan->push_time_s = r.push_time_s;
		plan->pull_time_s = r.pull_time_s;
	}
	inart_evaluator_destroy(ev);
	return rc;
}
