/*
 * cand: candidate routes for phase 2 (see cand.h).
 *
 * Built in three passes: (1) group the workers and compute the k shortest
 * paths of every (group, PS), noting the INA switches on them (switches with
 * aggregation throughput and a non-zero tree budget); (2) make one cand tree
 * per (job, PS, such switch), sorted so that, within a (job, PS), deeper trees
 * (farther from the PS) come first; (3) enumerate choices: for a flow, every
 * path with the PS as aggregation point, then every INA position on it; for a
 * tree, its paths towards the PS with the PS as parent, then every position
 * holding a cand tree of the same (job, PS) strictly closer to the PS.
 * Choice paths are stored truncated at their aggregation point.  Detours
 * (cand_opt.detours: paths to INA switches off the shortest paths; auto: only
 * for racks without INA, within a share of the flows' own paths) are found
 * after pass 1 and become flow choices after the flow's own.
 */
#include "cp/model/cand.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

/* Detour paths per (flow, switch) in auto mode (a cand tree a detour ends at
 * gets INART_CAND_DETOUR_TREE_PATHS paths, cand.h). */
#define AUTO_DETOUR_PATHS 2
/* Auto mode: detour paths at most this share of the flows' own candidate
 * paths (so the LP and the search grow by a bounded factor). */
#define AUTO_DETOUR_SHARE 0.5

void inart_cand_opt_default(struct inart_cand_opt *o)
{
	o->k_paths = 4;
	o->k_tree_paths = 2;
	o->no_groups = 0;
	o->detours = 0;
	o->extra = NULL;
	o->n_extra = 0;
	o->stop = NULL;
	o->stop_arg = NULL;
}

/* After every STOP_EVERY groups (and trees) the build asks opt->stop: a
 * model of fewer is built whole, whatever the time (it takes milliseconds). */
#define STOP_EVERY 64

static int stopped(const struct inart_cand_opt *opt, int i, struct inart_err *err)
{
	if (opt->stop == NULL || i == 0 || i % STOP_EVERY != 0 || !opt->stop(opt->stop_arg))
		return 0;
	return inart_err_set(err, -ETIMEDOUT, "candidates: stopped by the time limit");
}

void inart_cand_destroy(struct inart_cand *c)
{
	if (c == NULL)
		return;
	for (int g = 0; g < c->n_groups; g++)
		free(c->groups[g].members);
	free(c->groups);
	free(c->flows);
	free(c->trees);
	free(c->choices);
	inart_pathset_free(&c->paths);
	free(c);
}

static int ina_usable(const struct inart_node *n)
{
	return n->kind == INART_NODE_SWITCH && n->ina && n->trees > 0 && n->agg_gbps > 0;
}

/* The switch a single-homed host hangs from, or -1. */
static int attach_switch(const struct inart_topo *t, int h)
{
	int deg = t->out_off[h + 1] - t->out_off[h];

	if (deg != 1)
		return -1;
	return t->arcs[t->arc_out[t->out_off[h]]].to;
}

static int build_groups(struct inart_cand *c, const struct inart_topo *t,
			const struct inart_jobs *js, int no_groups)
{
	int total = 0;
	int *gid = NULL; /* per node: group of the current job, or -1 */
	int rc = 0;

	for (int j = 0; j < js->n_jobs; j++)
		total += js->jobs[j].n_workers;
	c->groups = calloc((size_t)total + 1, sizeof(*c->groups));
	gid = malloc(sizeof(*gid) * (size_t)t->n_nodes);
	if (c->groups == NULL || gid == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int v = 0; v < t->n_nodes; v++)
		gid[v] = -1;
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];
		int first = c->n_groups;

		for (int k = 0; k < job->n_workers; k++) {
			int w = job->workers[k], a = no_groups ? -1 : attach_switch(t, w);
			struct inart_group *g;

			if (a >= 0 && gid[a] >= first) {
				g = &c->groups[gid[a]];
			} else {
				g = &c->groups[c->n_groups];
				g->job = j;
				g->members = malloc(sizeof(int) * (size_t)job->n_workers);
				if (g->members == NULL) {
					rc = -ENOMEM;
					goto out;
				}
				if (a >= 0)
					gid[a] = c->n_groups;
				c->n_groups++;
			}
			g->members[g->n_members++] = w;
		}
	}
out:
	free(gid);
	return rc;
}

struct builder {
	struct inart_cand *c;
	const struct inart_topo *t;
	const struct inart_jobs *js;
	struct inart_paths *paths;
	int cap_choices, cap_trees;
	int *ps_base;  /* per job: index of its first PS in the flattened (job, ps) list */
	int *tree_map; /* per (flattened job-ps, node): cand tree index, -1 none, -2 wanted */
	/* extra routes (cand_opt.extra), bucketed by cand flow / cand tree */
	int *xf_off;		      /* n_flows + 1 */
	const struct inart_flow **xf; /* flows of the extra plans */
	int *xt_off;		      /* n_trees + 1 */
	const struct inart_tree **xt; /* trees of the extra plans */
	/* detours (cand_opt.detours): paths per cand flow in `det` */
	struct inart_pathset det;
	int *det_first, *det_n; /* n_flows */
	char *det_tree;		/* per (flattened job-ps, node): a detour ends there */
};

static int *tree_slot(struct builder *b, int j, int ps_idx, int node)
{
	return &b->tree_map[(size_t)(b->ps_base[j] + ps_idx) * (size_t)b->t->n_nodes +
			    (size_t)node];
}

static int js_ps(const struct builder *b, int j, int ps_idx)
{
	return b->js->jobs[j].ps[ps_idx];
}

static int add_choice(struct builder *b, const int *path, int len, int agg, int tree)
{
	struct inart_cand *c = b->c;
	int pi;

	if (inart_grow((void **)&c->choices, &b->cap_choices, c->n_choices, sizeof(*c->choices),
		       16))
		return -ENOMEM;
	pi = inart_pathset_add(&c->paths, path, len);
	if (pi < 0)
		return pi;
	c->choices[c->n_choices++] = (struct inart_choice){pi, agg, tree};
	return 0;
}

/* Choices along paths first..first+n-1 of `set` (all ending at the PS):
 * PS-ended ones first (in path order), then each intermediate position that
 * holds a cand tree of (j, ps_idx).  depth_limit >= 0 keeps only positions
 * strictly closer than that to the PS (dist: hop distances to the PS). */
static int add_choices(struct builder *b, const struct inart_pathset *set, int first, int n, int j,
		       int ps_idx, const int *dist, int depth_limit)
{
	int rc;

	for (int i = first; i < first + n; i++) {
		rc = add_choice(b, inart_pathset_path(set, i), inart_pathset_len(set, i),
				js_ps(b, j, ps_idx), -1);
		if (rc < 0)
			return rc;
	}
	for (int i = first; i < first + n; i++) {
		const int *p = inart_pathset_path(set, i);
		int len = inart_pathset_len(set, i);

		for (int pos = 1; pos < len - 1; pos++) {
			int ti = *tree_slot(b, j, ps_idx, p[pos]);

			if (ti < 0 || (depth_limit >= 0 && dist[p[pos]] >= depth_limit))
				continue;
			rc = add_choice(b, p, pos + 1, p[pos], ti);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int cmp_tree(const void *pa, const void *pb)
{
	const struct inart_cand_tree *a = pa, *b = pb;

	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	if (a->ps_idx != b->ps_idx)
		return a->ps_idx < b->ps_idx ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return (a->sw > b->sw) - (a->sw < b->sw);
}

/* ---------------------------------------------------------------------------
 * Extra routes (cand_opt.extra): bucketed by the cand flow or tree they
 * belong to, then appended to its choices where they fit.
 */

/* Cand flow of a plan flow of job j (group of its worker, its PS), or -1.
 * node_group: per node, the group of job j's worker there. */
static int extra_flow_index(const struct builder *b, int j, const int *node_group,
			    const int *group_flow, const struct inart_flow *fl)
{
	int i = inart_job_ps_index(&b->js->jobs[j], fl->ps);

	if (i < 0 || fl->worker < 0 || fl->worker >= b->t->n_nodes || node_group[fl->worker] < 0 ||
	    fl->n_path < 2 || fl->path[0] != fl->worker)
		return -1;
	return group_flow[node_group[fl->worker]] + i;
}

/* One sweep over the extra plans: phase 0 marks the wanted trees and counts
 * the flows per cand flow, phase 3 fills the flow buckets; after pass 2,
 * phase 1 counts the trees per cand tree and phase 2 fills their buckets. */
static void extra_sweep(struct builder *b, const struct inart_cand_opt *opt, int *node_group,
			const int *group_flow, int phase, int *fill)
{
	const struct inart_cand *c = b->c;

	for (int j = 0; j < b->js->n_jobs; j++) {
		for (int v = 0; v < b->t->n_nodes; v++)
			node_group[v] = -1;
		for (int g = 0; g < c->n_groups; g++)
			for (int k = 0; c->groups[g].job == j && k < c->groups[g].n_members; k++)
				node_group[c->groups[g].members[k]] = g;
		for (int e = 0; e < opt->n_extra; e++) {
			const struct inart_job_plan *jp = &opt->extra[e]->jobs[j];

			for (int k = 0; (phase == 0 || phase == 3) && k < jp->n_flows; k++) {
				const struct inart_flow *fl = &jp->flows[k];
				int f = extra_flow_index(b, j, node_group, group_flow, fl);
				int i = inart_job_ps_index(&b->js->jobs[j], fl->ps);

				if (f < 0)
					continue;
				if (phase == 0 && fl->agg != fl->ps &&
				    ina_usable(&b->t->nodes[fl->agg]))
					*tree_slot(b, j, i, fl->agg) = -2;
				if (phase == 0)
					b->xf_off[f + 1]++;
				else
					b->xf[fill[f]++] = fl;
			}
			for (int k = 0; phase != 3 && k < jp->n_trees; k++) {
				const struct inart_tree *tr = &jp->trees[k];
				int i = inart_job_ps_index(&b->js->jobs[j], tr->ps), ti;

				if (i < 0 || !ina_usable(&b->t->nodes[tr->sw]))
					continue;
				if (phase == 0) {
					*tree_slot(b, j, i, tr->sw) = -2;
					continue;
				}
				ti = *tree_slot(b, j, i, tr->sw);
				if (phase == 1 && ti >= 0)
					b->xt_off[ti + 1]++;
				else if (phase == 2 && ti >= 0)
					b->xt[fill[ti]++] = tr;
			}
		}
	}
}

/* Prefix sums of counts[1..n] into offsets; fill gets a copy. */
static int *offsets(int *off, int n)
{
	int *fill = malloc(sizeof(int) * ((size_t)n + 1));

	for (int i = 0; i < n; i++)
		off[i + 1] += off[i];
	if (fill != NULL)
		memcpy(fill, off, sizeof(int) * (size_t)n);
	return fill;
}

/*
 * step 0 (before pass 2): mark the trees the extra routes need and bucket
 * their flows by cand flow; step 1 (after pass 2): bucket their trees.
 */
static int extra_routes(struct builder *b, const struct inart_cand_opt *opt, int step)
{
	const struct inart_cand *c = b->c;
	int n_flows = 0, *group_flow = malloc(sizeof(int) * ((size_t)c->n_groups + 1));
	int *node_group = malloc(sizeof(int) * ((size_t)b->t->n_nodes + 1)), *fill = NULL, rc = 0;

	if (group_flow == NULL || node_group == NULL)
		goto oom;
	for (int g = 0; g < c->n_groups; g++) {
		group_flow[g] = n_flows;
		n_flows += b->js->jobs[c->groups[g].job].n_ps;
	}
	if (step == 0) {
		b->xf_off = calloc((size_t)n_flows + 2, sizeof(int));
		if (b->xf_off == NULL)
			goto oom;
		extra_sweep(b, opt, node_group, group_flow, 0, NULL);
		fill = offsets(b->xf_off, n_flows);
		b->xf = malloc(sizeof(*b->xf) * ((size_t)b->xf_off[n_flows] + 1));
		if (fill == NULL || b->xf == NULL)
			goto oom;
		extra_sweep(b, opt, node_group, group_flow, 3, fill);
	} else {
		b->xt_off = calloc((size_t)c->n_trees + 2, sizeof(int));
		if (b->xt_off == NULL)
			goto oom;
		extra_sweep(b, opt, node_group, group_flow, 1, NULL);
		fill = offsets(b->xt_off, c->n_trees);
		b->xt = malloc(sizeof(*b->xt) * ((size_t)b->xt_off[c->n_trees] + 1));
		if (fill == NULL || b->xt == NULL)
			goto oom;
		extra_sweep(b, opt, node_group, group_flow, 2, fill);
	}
	goto out;
oom:
	rc = -ENOMEM;
out:
	free(group_flow);
	free(node_group);
	free(fill);
	return rc;
}

/* 1 if owner choices [first, c->n_choices) hold (path, agg) already. */
static int has_choice(const struct inart_cand *c, int first, const int *path, int len, int agg)
{
	for (int ci = first; ci < c->n_choices; ci++)
		if (c->choices[ci].agg == agg &&
		    inart_pathset_len(&c->paths, c->choices[ci].path) == len &&
		    memcmp(inart_pathset_path(&c->paths, c->choices[ci].path), path,
			   sizeof(int) * (size_t)len) == 0)
			return 1;
	return 0;
}

/* The extra routes of cand flow f (group grp, PS index i) as choices: the
 * worker's path with the representative as its first node. */
static int add_extra_flow(struct builder *b, int f, const struct inart_group *grp, int i, int first)
{
	int rc = 0;

	for (int k = b->xf_off[f]; k < b->xf_off[f + 1] && rc == 0; k++) {
		const struct inart_flow *fl = b->xf[k];
		int *p = malloc(sizeof(int) * (size_t)fl->n_path), tree = -1;

		if (p == NULL)
			return -ENOMEM;
		memcpy(p, fl->path, sizeof(int) * (size_t)fl->n_path);
		p[0] = grp->members[0];
		if (fl->agg != fl->ps)
			tree = *tree_slot(b, grp->job, i, fl->agg);
		if ((fl->agg == fl->ps || tree >= 0) && p[fl->n_path - 1] == fl->agg &&
		    !has_choice(b->c, first, p, fl->n_path, fl->agg))
			rc = add_choice(b, p, fl->n_path, fl->agg, tree);
		free(p);
	}
	return rc;
}

/* The extra routes of cand tree k whose parent is the PS or a cand tree of
 * the same (job, PS) closer to the PS. */
static int add_extra_tree(struct builder *b, int k)
{
	const struct inart_cand_tree *ct = &b->c->trees[k];
	int first = ct->first_choice, rc = 0;

	for (int x = b->xt_off[k]; x < b->xt_off[k + 1] && rc == 0; x++) {
		const struct inart_tree *tr = b->xt[x];
		int pt = tr->parent == ct->ps ? -1 : *tree_slot(b, ct->job, ct->ps_idx, tr->parent);

		if (tr->parent != ct->ps && (pt < 0 || b->c->trees[pt].depth >= ct->depth))
			continue;
		if (tr->n_path < 2 || tr->path[0] != ct->sw ||
		    tr->path[tr->n_path - 1] != tr->parent ||
		    has_choice(b->c, first, tr->path, tr->n_path, tr->parent))
			continue;
		rc = add_choice(b, tr->path, tr->n_path, tr->parent, pt);
	}
	return rc;
}

/* How far v is off rep's shortest paths to the PS when it is a detour target:
 * an INA switch on no shortest path but closer to the PS than rep and than
 * rep is to the PS (d(rep, v) + d(v, ps) - d(rep, ps) > 0); else 0. */
static int detour_excess(const struct inart_topo *t, int v, int rep, const int *d_ps,
			 const int *d_rep)
{
	if (!ina_usable(&t->nodes[v]) || d_ps[v] < 0 || d_rep[v] < 0 || d_ps[v] >= d_ps[rep] ||
	    d_rep[v] >= d_ps[rep] || d_rep[v] + d_ps[v] <= d_ps[rep])
		return 0;
	return d_rep[v] + d_ps[v] - d_ps[rep];
}

/* Auto mode: a flow gets detours only when its worker's rack cannot
 * aggregate (single-homed on a switch without INA): all its bytes leave the
 * rack, and a switch off its shortest paths is where they can be merged. */
static int auto_wants(const struct inart_topo *t, int rep)
{
	int a = attach_switch(t, rep);

	return a >= 0 && !ina_usable(&t->nodes[a]);
}

/* Distances to the PS and from rep into d_ps, d_rep (n_nodes each). */
static int detour_dists(struct builder *b, int ps, int rep, int *d_ps, int *d_rep)
{
	size_t n = (size_t)b->t->n_nodes;
	const int *d;

	if ((d = inart_paths_dist_to(b->paths, ps)) == NULL)
		return -ENOMEM;
	memcpy(d_ps, d, sizeof(int) * n);
	if ((d = inart_paths_dist_to(b->paths, rep)) == NULL)
		return -ENOMEM;
	memcpy(d_rep, d, sizeof(int) * n);
	return 0;
}

/* A node a detour can end at and its excess (e > 0, detour_excess). */
struct target {
	int v, e;
};

/* The detour targets of every cand flow: flow f's are at[first[f] ..
 * first[f + 1]), in node order.  Found once per flow from its two distance
 * arrays: the auto limit and the paths both read them. */
struct targets {
	int *first;	   /* n_flows + 1 */
	struct target *at; /* n of them, room for cap */
	int n, cap;
};

static void targets_free(struct targets *tg)
{
	free(tg->first);
	free(tg->at);
}

static int targets_add(struct targets *tg, int v, int e)
{
	if (inart_grow((void **)&tg->at, &tg->cap, tg->n, sizeof(*tg->at), 64) < 0)
		return -ENOMEM;
	tg->at[tg->n++] = (struct target){v, e};
	return 0;
}

/* The targets of cand flow f, from rep to ps (none when skip).  d_ps,
 * d_rep: scratch of n_nodes. */
static int flow_targets(struct builder *b, struct targets *tg, int f, int ps, int rep, int skip,
			int *d_ps, int *d_rep)
{
	tg->first[f] = tg->n;
	if (skip)
		return 0;
	if (detour_dists(b, ps, rep, d_ps, d_rep) < 0)
		return -ENOMEM;
	for (int v = 0; v < b->t->n_nodes; v++) {
		int e = detour_excess(b->t, v, rep, d_ps, d_rep);

		if (e > 0 && targets_add(tg, v, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The targets of every cand flow (auto mode: of the flows it wants). */
static int find_targets(struct builder *b, const struct inart_cand_opt *opt, int n_flows,
			struct targets *tg)
{
	const struct inart_topo *t = b->t;
	int f = 0, rc = 0;
	int *d_ps = malloc(sizeof(int) * (size_t)t->n_nodes);
	int *d_rep = malloc(sizeof(int) * (size_t)t->n_nodes);

	tg->first = malloc(sizeof(int) * ((size_t)n_flows + 1));
	if (d_ps == NULL || d_rep == NULL || tg->first == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int g = 0; g < b->c->n_groups && rc == 0; g++) {
		const struct inart_group *grp = &b->c->groups[g];
		int rep = grp->members[0],
		    skip = opt->detours == INART_CAND_DETOURS_AUTO && !auto_wants(t, rep);

		for (int i = 0; i < b->js->jobs[grp->job].n_ps && rc == 0; i++, f++)
			rc = flow_targets(b, tg, f, js_ps(b, grp->job, i), rep, skip, d_ps, d_rep);
	}
	if (rc == 0)
		tg->first[f] = tg->n;
out:
	free(d_ps);
	free(d_rep);
	return rc;
}

/* Auto mode: the largest excess L such that the detours of every wanted
 * flow to targets at most L off its shortest paths (AUTO_DETOUR_PATHS each)
 * number at most AUTO_DETOUR_SHARE of the flows' `base_paths` candidate
 * paths; 0 when even the nearest do not fit. */
static int auto_excess_limit(const struct targets *tg, int n_nodes, int base_paths, int *limit)
{
	int *hist = calloc((size_t)n_nodes + 1, sizeof(int));
	long budget = (long)(base_paths * AUTO_DETOUR_SHARE), used = 0;

	if (hist == NULL)
		return -ENOMEM;
	for (int x = 0; x < tg->n; x++)
		hist[tg->at[x].e]++;
	*limit = 0;
	for (int e = 1; e <= n_nodes; e++) {
		used += (long)hist[e] * AUTO_DETOUR_PATHS;
		if (used > budget)
			break;
		*limit = e;
	}
	free(hist);
	return 0;
}

/* The detours of cand flow f (job j, PS index i) from rep into b->det, k
 * paths to each of its targets at most max_excess off the shortest paths,
 * marking the trees they need. */
static int flow_detours(struct builder *b, const struct targets *tg, int f, int j, int i, int rep,
			uint64_t salt, int k, int max_excess)
{
	int n = b->t->n_nodes;

	b->det_first[f] = b->det.n;
	b->det_n[f] = 0;
	for (int x = tg->first[f]; x < tg->first[f + 1]; x++) {
		int v = tg->at[x].v, got;

		if (tg->at[x].e > max_excess)
			continue;
		got = inart_paths_k_shortest_salted(b->paths, rep, v, k, salt, &b->det);
		if (got == -ENOMEM)
			return got;
		if (got < 0)
			continue;   /* unreachable: no detour there */
		b->det_n[f] += got; /* those through the PS are skipped in pass 3 */
		*tree_slot(b, j, i, v) = -2;
		b->det_tree[(size_t)(b->ps_base[j] + i) * (size_t)n + (size_t)v] = 1;
	}
	return 0;
}

/* Salted by the attach switch (what every member of the group shares), so
 * racks spread over equal-cost paths. */
static uint64_t group_salt(const struct inart_topo *t, const struct inart_group *grp)
{
	int a = attach_switch(t, grp->members[0]);

	return 1 + (uint64_t)(a >= 0 ? a : grp->members[0]);
}

/* Pass 1b: the detours of every cand flow (cand_opt.detours), after the
 * flows' own paths (`base_paths` of them, n_flows flows). */
static int pass_detours(struct builder *b, const struct inart_cand_opt *opt, int base_paths,
			int n_flows)
{
	struct targets tg = {0};
	int f = 0, k = opt->detours, max_excess = INT_MAX;
	int rc = find_targets(b, opt, n_flows, &tg);

	if (rc == 0 && opt->detours == INART_CAND_DETOURS_AUTO) {
		k = AUTO_DETOUR_PATHS;
		rc = auto_excess_limit(&tg, b->t->n_nodes, base_paths, &max_excess);
	}
	for (int g = 0; g < b->c->n_groups && rc == 0; g++) {
		const struct inart_group *grp = &b->c->groups[g];

		for (int i = 0; i < b->js->jobs[grp->job].n_ps && rc == 0; i++, f++)
			rc = flow_detours(b, &tg, f, grp->job, i, grp->members[0],
					  group_salt(b->t, grp), k, max_excess);
	}
	targets_free(&tg);
	return rc;
}

/* Pass 1: paths of every (group, PS) into `scratch`; mark wanted trees. */
static int pass_flow_paths(struct builder *b, const struct inart_cand_opt *opt,
			   struct inart_pathset *scratch, int *flow_first, int *flow_n,
			   struct inart_err *err)
{
	const struct inart_topo *t = b->t;
	int f = 0, rc;

	for (int g = 0; g < b->c->n_groups; g++) {
		const struct inart_group *grp = &b->c->groups[g];
		const struct inart_job *job = &b->js->jobs[grp->job];

		if ((rc = stopped(opt, g, err)) < 0)
			return rc;

		for (int i = 0; i < job->n_ps; i++, f++) {
			int before = scratch->n;
			int n = inart_paths_k_shortest_salted(b->paths, grp->members[0], job->ps[i],
							      opt->k_paths, group_salt(t, grp),
							      scratch);

			if (n < 0)
				return inart_err_set(
				    err, n, "job '%s': no path from '%s' to PS '%s'", job->id,
				    t->nodes[grp->members[0]].id, t->nodes[job->ps[i]].id);
			flow_first[f] = before;
			flow_n[f] = n;
			for (int k = before; k < before + n; k++) {
				const int *p = inart_pathset_path(scratch, k);
				int len = inart_pathset_len(scratch, k);

				for (int pos = 1; pos < len - 1; pos++)
					if (ina_usable(&t->nodes[p[pos]]))
						*tree_slot(b, grp->job, i, p[pos]) = -2;
			}
		}
	}
	if (opt->detours != 0 && pass_detours(b, opt, scratch->n, f) < 0)
		return inart_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Pass 2: one cand tree per wanted (job, PS, switch), deepest first. */
static int pass_trees(struct builder *b, struct inart_err *err)
{
	struct inart_cand *c = b->c;
	const struct inart_topo *t = b->t;

	for (int j = 0; j < b->js->n_jobs; j++) {
		const struct inart_job *job = &b->js->jobs[j];

		for (int i = 0; i < job->n_ps; i++) {
			const int *dist = inart_paths_dist_to(b->paths, job->ps[i]);

			if (dist == NULL)
				return inart_err_set(err, -ENOMEM, "out of memory");
			for (int v = 0; v < t->n_nodes; v++) {
				if (*tree_slot(b, j, i, v) != -2)
					continue;
				if (inart_grow((void **)&c->trees, &b->cap_trees, c->n_trees,
					       sizeof(*c->trees), 16))
					return inart_err_set(err, -ENOMEM, "out of memory");
				c->trees[c->n_trees++] = (struct inart_cand_tree){.job = j,
										  .ps_idx = i,
										  .ps = job->ps[i],
										  .sw = v,
										  .depth = dist[v]};
			}
		}
	}
	if (c->n_trees > 0)
		qsort(c->trees, (size_t)c->n_trees, sizeof(*c->trees), cmp_tree);
	for (int k = 0; k < c->n_trees; k++)
		*tree_slot(b, c->trees[k].job, c->trees[k].ps_idx, c->trees[k].sw) = k;
	return 0;
}

/* The detours of cand flow f (job j, PS index i) as choices, but those
 * through the PS and those already there. */
static int add_detours(struct builder *b, int f, int j, int i, int first)
{
	int ps = js_ps(b, j, i), rc = 0;

	for (int x = b->det_first[f]; x < b->det_first[f] + b->det_n[f] && rc == 0; x++) {
		const int *p = inart_pathset_path(&b->det, x);
		int len = inart_pathset_len(&b->det, x), v = p[len - 1], through_ps = 0;

		for (int pos = 0; pos < len; pos++)
			through_ps |= p[pos] == ps;
		if (!through_ps && *tree_slot(b, j, i, v) >= 0 &&
		    !has_choice(b->c, first, p, len, v))
			rc = add_choice(b, p, len, v, *tree_slot(b, j, i, v));
	}
	return rc;
}

/* Paths of cand tree ct: k_tree_paths, at least INART_CAND_DETOUR_TREE_PATHS
 * at a switch a detour ends at (its tree may have to climb back over any
 * spine). */
static int tree_paths(const struct builder *b, const struct inart_cand_opt *opt,
		      const struct inart_cand_tree *ct)
{
	size_t at =
	    (size_t)(b->ps_base[ct->job] + ct->ps_idx) * (size_t)b->t->n_nodes + (size_t)ct->sw;

	if (b->det_tree != NULL && b->det_tree[at] &&
	    opt->k_tree_paths < INART_CAND_DETOUR_TREE_PATHS)
		return INART_CAND_DETOUR_TREE_PATHS;
	return opt->k_tree_paths;
}

/* Pass 3: choices of flows and trees. */
static int pass_choices(struct builder *b, const struct inart_cand_opt *opt,
			const struct inart_pathset *scratch, const int *flow_first,
			const int *flow_n, struct inart_err *err)
{
	struct inart_cand *c = b->c;
	struct inart_pathset tp;
	int rc = 0, f = 0;

	inart_pathset_init(&tp);
	for (int g = 0; g < c->n_groups; g++) {
		const struct inart_group *grp = &c->groups[g];
		const struct inart_job *job = &b->js->jobs[grp->job];

		if ((rc = stopped(opt, g, err)) < 0)
			goto out;
		for (int i = 0; i < job->n_ps; i++, f++) {
			struct inart_cand_flow *cf = &c->flows[f];

			*cf = (struct inart_cand_flow){.group = g,
						       .job = grp->job,
						       .ps_idx = i,
						       .ps = job->ps[i],
						       .first_choice = c->n_choices,
						       .first_slot = c->n_slots};
			rc = add_choices(b, scratch, flow_first[f], flow_n[f], grp->job, i, NULL,
					 -1);
			if (rc == 0 && opt->detours != 0)
				rc = add_detours(b, f, grp->job, i, cf->first_choice);
			if (rc == 0)
				rc = add_extra_flow(b, f, grp, i, cf->first_choice);
			if (rc < 0)
				goto out;
			cf->n_choices = c->n_choices - cf->first_choice;
			c->n_slots += grp->n_members;
		}
	}
	c->n_flows = f;
	for (int k = 0; k < c->n_trees; k++) {
		struct inart_cand_tree *ct = &c->trees[k];
		const int *dist;
		int n;

		if ((rc = stopped(opt, k, err)) < 0)
			goto out;
		inart_pathset_clear(&tp);
		n = inart_paths_k_shortest_salted(b->paths, ct->sw, ct->ps, tree_paths(b, opt, ct),
						  1 + (uint64_t)ct->sw, &tp);
		if (n < 0) {
			rc = inart_err_set(err, n, "no path from switch '%s' to PS '%s'",
					   b->t->nodes[ct->sw].id, b->t->nodes[ct->ps].id);
			goto out;
		}
		dist = inart_paths_dist_to(b->paths, ct->ps);
		if (dist == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		ct->first_choice = c->n_choices;
		rc = add_choices(b, &tp, 0, n, ct->job, ct->ps_idx, dist, ct->depth);
		if (rc == 0)
			rc = add_extra_tree(b, k);
		if (rc < 0)
			goto out;
		ct->n_choices = c->n_choices - ct->first_choice;
	}
out:
	inart_pathset_free(&tp);
	if (rc == -ENOMEM)
		inart_err_set(err, rc, "out of memory");
	return rc;
}

int inart_cand_build(const struct inart_topo *t, const struct inart_jobs *js,
		     struct inart_paths *paths, const struct inart_cand_opt *opt,
		     struct inart_cand **out, struct inart_err *err)
{
	struct inart_cand_opt dflt;
	struct builder b = {0};
	struct inart_pathset scratch;
	int *flow_first = NULL, *flow_n = NULL;
	int n_pairs = 0, n_flows = 0, rc;

	inart_pathset_init(&scratch);
	inart_pathset_init(&b.det);
	if (opt == NULL) {
		inart_cand_opt_default(&dflt);
		opt = &dflt;
	}
	if (opt->k_paths < 1 || opt->k_tree_paths < 1)
		return inart_err_set(err, -EINVAL, "candidate path counts must be >= 1");
	b.t = t;
	b.js = js;
	b.paths = paths;
	b.c = calloc(1, sizeof(*b.c));
	b.ps_base = malloc(sizeof(int) * (size_t)(js->n_jobs + 1));
	if (b.c == NULL || b.ps_base == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	inart_pathset_init(&b.c->paths);
	n_pairs = inart_jobs_pairs(js, b.ps_base);
	b.tree_map = malloc(sizeof(int) * (size_t)n_pairs * (size_t)t->n_nodes + 1);
	rc = build_groups(b.c, t, js, opt->no_groups);
	if (b.tree_map == NULL || rc < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < (size_t)n_pairs * (size_t)t->n_nodes; i++)
		b.tree_map[i] = -1;
	for (int g = 0; g < b.c->n_groups; g++)
		n_flows += js->jobs[b.c->groups[g].job].n_ps;
	flow_first = malloc(sizeof(int) * (size_t)(n_flows + 1));
	flow_n = malloc(sizeof(int) * (size_t)(n_flows + 1));
	b.c->flows = calloc((size_t)n_flows + 1, sizeof(*b.c->flows));
	if (opt->detours != 0) {
		b.det_first = calloc((size_t)n_flows + 1, sizeof(int));
		b.det_n = calloc((size_t)n_flows + 1, sizeof(int));
		b.det_tree = calloc((size_t)n_pairs * (size_t)t->n_nodes + 1, 1);
	}
	if (flow_first == NULL || flow_n == NULL || b.c->flows == NULL ||
	    (opt->detours != 0 && (b.det_first == NULL || b.det_n == NULL || b.det_tree == NULL))) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = pass_flow_paths(&b, opt, &scratch, flow_first, flow_n, err);
	if (rc == 0)
		rc = extra_routes(&b, opt, 0);
	if (rc == 0)
		rc = pass_trees(&b, err);
	if (rc == 0)
		rc = extra_routes(&b, opt, 1);
	if (rc == 0)
		rc = pass_choices(&b, opt, &scratch, flow_first, flow_n, err);
	if (rc < 0)
		goto fail;
	*out = b.c;
	b.c = NULL;
	goto out;
fail:
	if (rc == -ENOMEM)
		inart_err_set(err, rc, "out of memory");
	inart_cand_destroy(b.c);
out:
	inart_pathset_free(&scratch);
	free(flow_first);
	free(flow_n);
	free(b.ps_base);
	free(b.tree_map);
	free(b.xf_off);
	free(b.xf);
	free(b.xt_off);
	free(b.xt);
	inart_pathset_free(&b.det);
	free(b.det_first);
	free(b.det_n);
	free(b.det_tree);
	return rc;
}
