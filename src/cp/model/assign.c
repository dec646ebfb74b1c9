/*
 * assign: assignments over route candidates (see assign.h).
 */
#include "cp/model/assign.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

int inart_assign_init(struct inart_assign *a, const struct inart_cand *c)
{
	a->slot_choice = malloc(sizeof(int) * (size_t)(c->n_slots + 1));
	a->tree_choice = malloc(sizeof(int) * (size_t)(c->n_trees + 1));
	if (a->slot_choice == NULL || a->tree_choice == NULL) {
		inart_assign_free(a);
		return -ENOMEM;
	}
	for (int f = 0; f < c->n_flows; f++)
		for (int k = 0; k < c->groups[c->flows[f].group].n_members; k++)
			a->slot_choice[c->flows[f].first_slot + k] = c->flows[f].first_choice;
	for (int t = 0; t < c->n_trees; t++)
		a->tree_choice[t] = c->trees[t].first_choice;
	return 0;
}

void inart_assign_free(struct inart_assign *a)
{
	free(a->slot_choice);
	free(a->tree_choice);
	a->slot_choice = NULL;
	a->tree_choice = NULL;
}

/* The choice a slot really takes: its own, or the flow's first (PS, shortest
 * path) when the PS has no share. */
static int slot_effective(const struct inart_cand *c, const struct inart_assign *a,
			  const struct inart_plan *plan, int f, int k)
{
	const struct inart_cand_flow *cf = &c->flows[f];

	if (!(plan->jobs[cf->job].split[cf->ps_idx] > 0))
		return cf->first_choice;
	return a->slot_choice[cf->first_slot + k];
}

void inart_assign_used_trees(const struct inart_cand *c, const struct inart_assign *a,
			     const struct inart_plan *plan, char *used_tree)
{
	memset(used_tree, 0, (size_t)c->n_trees);
	for (int f = 0; f < c->n_flows; f++) {
		int m = c->groups[c->flows[f].group].n_members;

		for (int k = 0; k < m; k++) {
			int ch = slot_effective(c, a, plan, f, k);

			if (c->choices[ch].tree >= 0)
				used_tree[c->choices[ch].tree] = 1;
		}
	}
	/* Trees are sorted deepest first within a (job, PS) and parents are
	 * strictly closer to the PS, so one forward sweep propagates use. */
	for (int t = 0; t < c->n_trees; t++) {
		if (used_tree[t]) {
			int p = c->choices[a->tree_choice[t]].tree;

			if (p >= 0)
				used_tree[p] = 1;
		}
	}
}

int inart_assign_realize(const struct inart_cand *c, const struct inart_assign *a,
			 struct inart_plan *plan)
{
	char *used = malloc((size_t)c->n_trees + 1);
	int *buf = NULL, rc = 0;
	size_t cap = 0;

	if (used == NULL)
		return -ENOMEM;
	for (int j = 0; j < plan->n_jobs; j++)
		inart_plan_clear_routes(plan, j);
	inart_assign_used_trees(c, a, plan, used);
	for (int f = 0; f < c->n_flows && rc == 0; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		const struct inart_group *g = &c->groups[cf->group];

		for (int k = 0; k < g->n_members && rc == 0; k++) {
			const struct inart_choice *ch =
			    &c->choices[slot_effective(c, a, plan, f, k)];
			int len = inart_pathset_len(&c->paths, ch->path);

			if (inart_grow_to((void **)&buf, &cap, (size_t)len, sizeof(int))) {
				rc = -ENOMEM;
				break;
			}
			memcpy(buf, inart_pathset_path(&c->paths, ch->path),
			       sizeof(int) * (size_t)len);
			buf[0] = g->members[k];
			rc = inart_plan_add_flow(plan, cf->job, g->members[k], cf->ps, ch->agg, buf,
						 len);
		}
	}
	for (int t = 0; t < c->n_trees && rc == 0; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];
		const struct inart_choice *ch = &c->choices[a->tree_choice[t]];

		if (!used[t])
			continue;
		rc = inart_plan_add_tree(plan, ct->job, ct->sw, ct->ps, ch->agg,
					 inart_pathset_path(&c->paths, ch->path),
					 inart_pathset_len(&c->paths, ch->path));
	}
	free(used);
	free(buf);
	return rc;
}

void inart_assign_to_x(const struct inart_cand *c, const struct inart_assign *a,
		       const struct inart_plan *plan, double *x)
{
	char *used = malloc((size_t)c->n_trees + 1);

	memset(x, 0, sizeof(double) * (size_t)c->n_choices);
	for (int f = 0; f < c->n_flows; f++) {
		int m = c->groups[c->flows[f].group].n_members;

		for (int k = 0; k < m; k++)
			x[slot_effective(c, a, plan, f, k)] += 1.0 / m;
	}
	if (used == NULL) /* out of memory: every tree's choice (a superset) */
		for (int t = 0; t < c->n_trees; t++)
			x[a->tree_choice[t]] = 1;
	if (used == NULL)
		return;
	inart_assign_used_trees(c, a, plan, used);
	for (int t = 0; t < c->n_trees; t++)
		if (used[t])
			x[a->tree_choice[t]] = 1;
	free(used);
}

/* The choice among [first, first + n) with aggregation point agg whose path
 * is path[0..len) (node 0 compared only if check0), or -1. */
static int find_choice(const struct inart_cand *c, int first, int n, int agg, const int *path,
		       int len, int check0)
{
	for (int ci = first; ci < first + n; ci++) {
		const struct inart_choice *ch = &c->choices[ci];
		const int *q = inart_pathset_path(&c->paths, ch->path);

		if (ch->agg == agg && inart_pathset_len(&c->paths, ch->path) == len &&
		    (!check0 || q[0] == path[0]) &&
		    memcmp(q + 1, path + 1, sizeof(int) * (size_t)(len - 1)) == 0)
			return ci;
	}
	return -1;
}

/* Slots of job j's flows from its plan (fidx: per worker index and PS index,
 * the plan's flow or -1; filled here). */
static int slots_from_plan(const struct inart_cand *c, const struct inart_job *job, int j,
			   const struct inart_job_plan *jp, const int *widx, int nodes, int *fidx,
			   struct inart_assign *a)
{
	for (int i = 0; i < job->n_workers * job->n_ps; i++)
		fidx[i] = -1;
	for (int i = 0; i < jp->n_flows; i++) {
		int v = jp->flows[i].worker, w = v >= 0 && v < nodes ? widx[v] : -1, p = -1;

		for (int k = 0; k < job->n_ps; k++)
			p = job->ps[k] == jp->flows[i].ps ? k : p;
		if (w >= 0 && p >= 0)
			fidx[w * job->n_ps + p] = i;
	}
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		const struct inart_group *g = &c->groups[cf->group];

		for (int k = 0; cf->job == j && k < g->n_members; k++) {
			int fi = fidx[widx[g->members[k]] * job->n_ps + cf->ps_idx], ci;
			const struct inart_flow *fl = fi >= 0 ? &jp->flows[fi] : NULL;

			ci = fl ? find_choice(c, cf->first_choice, cf->n_choices, fl->agg, fl->path,
					      fl->n_path, 0)
				: -1;
			if (ci < 0 && jp->split[cf->ps_idx] > 0)
				return -ENOENT;
			a->slot_choice[cf->first_slot + k] = ci >= 0 ? ci : cf->first_choice;
		}
	}
	return 0;
}

static int trees_from_plan(const struct inart_cand *c, int j, const struct inart_job *job,
			   const struct inart_job_plan *jp, struct inart_assign *a)
{
	for (int i = 0; i < jp->n_trees; i++) {
		const struct inart_tree *tr = &jp->trees[i];
		int ci = -1;

		for (int t = 0; t < c->n_trees && ci < 0; t++) {
			const struct inart_cand_tree *ct = &c->trees[t];

			if (ct->job != j || ct->sw != tr->sw || job->ps[ct->ps_idx] != tr->ps)
				continue;
			ci = find_choice(c, ct->first_choice, ct->n_choices, tr->parent, tr->path,
					 tr->n_path, 1);
			if (ci >= 0)
				a->tree_choice[t] = ci;
		}
		if (ci < 0)
			return -ENOENT;
	}
	return 0;
}

int inart_assign_from_plan(const struct inart_cand *c, const struct inart_jobs *js,
			   const struct inart_plan *plan, struct inart_assign *a)
{
	int n = 0, rc = 0, *widx = NULL, *fidx = NULL, nodes = 0;

	for (int j = 0; j < js->n_jobs; j++) {
		n = js->jobs[j].n_workers * js->jobs[j].n_ps > n
			? js->jobs[j].n_workers * js->jobs[j].n_ps
			: n;
		for (int k = 0; k < js->jobs[j].n_workers; k++)
			nodes =
			    js->jobs[j].workers[k] + 1 > nodes ? js->jobs[j].workers[k] + 1 : nodes;
	}
	widx = malloc(sizeof(int) * ((size_t)nodes + 1));
	fidx = malloc(sizeof(int) * ((size_t)n + 1));
	if (widx == NULL || fidx == NULL)
		rc = -ENOMEM;
	for (int t = 0; t < c->n_trees; t++)
		a->tree_choice[t] = c->trees[t].first_choice;
	for (int j = 0; j < js->n_jobs && rc == 0; j++) {
		const struct inart_job *job = &js->jobs[j];

		if (plan->jobs[j].n_ring > 0) {
			rc = -ENOENT;
			break;
		}
		for (int v = 0; v < nodes; v++)
			widx[v] = -1;
		for (int k = 0; k < job->n_workers; k++)
			widx[job->workers[k]] = k;
		rc = slots_from_plan(c, job, j, &plan->jobs[j], widx, nodes, fidx, a);
		if (rc == 0)
			rc = trees_from_plan(c, j, job, &plan->jobs[j], a);
	}
	free(widx);
	free(fidx);
	return rc;
}

void inart_assign_from_x(const struct inart_cand *c, const double *x, struct inart_assign *a)
{
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		int m = c->groups[cf->group].n_members, k = 0;

		for (int ch = cf->first_choice; ch < cf->first_choice + cf->n_choices; ch++) {
			int cnt = (int)lround(x[ch] * m);

			for (; cnt > 0 && k < m; cnt--, k++)
				a->slot_choice[cf->first_slot + k] = ch;
		}
		for (; k < m; k++)
			a->slot_choice[cf->first_slot + k] = cf->first_choice;
	}
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];
		int best = ct->first_choice;

		for (int ch = ct->first_choice; ch < ct->first_choice + ct->n_choices; ch++)
			if (x[ch] > x[best])
				best = ch;
		a->tree_choice[t] = best;
	}
}
