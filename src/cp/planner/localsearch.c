/*
 * localsearch: descent and kicks on an incremental load model (see
 * localsearch.h and docs/formulation.md, "Rounding and repair").
 *
 * The model mirrors the evaluator: per-arc push + pull volume, per-switch
 * aggregation input, per-switch tree counts and per-cand-tree children.  A
 * tentative move logs every value it changes (undo log) and every structural
 * change (move log), so it is scored and undone in time proportional to the
 * routes it touches.  Resources are kept sorted by time so that the moves
 * tried are those around the most loaded ones.
 *
 * Ownership: struct ls is local to one call and owns its arrays; the
 * assignment belongs to the caller.
 */
#include "cp/planner/localsearch.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/rng.h"
#include "common/slab.h"

#define LS_TIE 1e-9 /* relative tolerance for "at the bottleneck" */
#define LS_TOP 8    /* most loaded resources examined per step */

struct undo {
	int r;	  /* resource */
	double v; /* its load before */
};

struct move {
	int kind; /* 0 slot, 1 tree */
	int who;  /* the slot or cand tree */
	int from; /* its choice before */
};

struct ls {
	void *block; /* the fixed-size arrays below (ls_lay_out) */
	const struct inart_topo *t;
	const struct inart_cand *c;
	const struct inart_plan *plan;
	struct inart_assign *a;
	int n_jobs;
	int n_arcs, n_res; /* resources: arcs, then nodes */
	double *val;	   /* per resource: push+pull Gbit (arc) or agg input (node) */
	double *inv_cap;   /* per resource: 1 / capacity (0: not a resource) */
	int *ntrees;	   /* per node: used trees */
	int *nchild;	   /* per cand tree: children (active slots, used trees) */
	double *vol_flow;  /* per flow: share * G (0 when the share is 0) */
	double *vol_tree;  /* per cand tree */
	int *slot_flow;	   /* per slot: its flow */
	int *slot_member;  /* per slot: member index in the group */
	int *order, *pos;  /* resources by time, descending */
	double t_ref;	   /* T when the search started (scale of the weights) */
	double spow;	   /* sum of the weights of the committed state */
	/* undo log of the current tentative move */
	int n_log, cap_log;
	struct undo *log;
	char *mark;
	struct res_key *keys; /* scratch: n_res */
	int *tmp;	      /* scratch: n_res */
	int violated;
	int oom;
	/* moves of the current tentative compound move (kind 0 slot, 1 tree) */
	int n_mv, cap_mv;
	struct move *mv;
	/* (job, PS) pairs: their flows, and their cand trees by node */
	int n_pairs;
	int *pair_base; /* per job: first pair */
	int *pflow_off; /* per pair: flows pflow[pflow_off[p] .. pflow_off[p+1]) */
	int *pflow;
	int *ptree_off;	 /* per pair: cand trees ptree_off[p] .. ptree_off[p+1] (sorted) */
	int *tree_at;	 /* per pair and node: cand tree, -1 */
	int *cand_stamp; /* per cand tree: candidate dedupe */
	int stamp;
};

static double res_time(const struct ls *s, int r)
{
	return s->val[r] * s->inv_cap[r];
}

static void bump(struct ls *s, int r, double delta)
{
	if (inart_grow((void **)&s->log, &s->cap_log, s->n_log, sizeof(*s->log), 256) < 0) {
		s->oom = 1;
		s->val[r] += delta;
		return;
	}
	s->log[s->n_log].r = r;
	s->log[s->n_log++].v = s->val[r];
	s->val[r] += delta;
}

/* Push and pull loads of a path (first node replaced by `first` if >= 0). */
static void path_load(struct ls *s, int pi, int first, double vol)
{
	const int *p = inart_pathset_path(&s->c->paths, pi);
	int len = inart_pathset_len(&s->c->paths, pi);

	for (int i = 0; i + 1 < len; i++) {
		int e = inart_topo_arc_between(s->t, i == 0 && first >= 0 ? first : p[i], p[i + 1]);

		if (e < 0)
			continue; /* cannot happen for candidates; the evaluator judges */
		bump(s, e, vol);
		bump(s, e ^ 1, vol);
	}
}

static void child_inc(struct ls *s, int t);
static void child_dec(struct ls *s, int t);

/* A used tree's output: its path and its place at the parent. */
/* A stream of vol ending at choice ch's aggregation point: if that is a
 * tree, input at its switch and one child more (sign > 0) or less. */
static void join_tree(struct ls *s, const struct inart_choice *ch, double vol, int sign)
{
	if (ch->tree < 0)
		return;
	bump(s, s->n_arcs + ch->agg, vol);
	if (sign > 0)
		child_inc(s, ch->tree);
	else
		child_dec(s, ch->tree);
}

static void tree_output(struct ls *s, int t, int sign)
{
	const struct inart_choice *ch = &s->c->choices[s->a->tree_choice[t]];
	double vol = sign * s->vol_tree[t];

	path_load(s, ch->path, -1, vol);
	join_tree(s, ch, vol, sign);
}

static void child_inc(struct ls *s, int t)
{
	if (s->nchild[t]++ == 0) {
		int sw = s->c->trees[t].sw;

		if (++s->ntrees[sw] > s->t->nodes[sw].trees)
			s->violated = 1;
		tree_output(s, t, +1);
	}
}

static void child_dec(struct ls *s, int t)
{
	if (--s->nchild[t] == 0) {
		s->ntrees[s->c->trees[t].sw]--;
		tree_output(s, t, -1);
	}
}

/* Slot `slot` joins (sign > 0) or leaves choice ci. */
static void slot_apply(struct ls *s, int slot, int ci, int sign)
{
	const struct inart_choice *ch = &s->c->choices[ci];
	int f = s->slot_flow[slot];
	const struct inart_group *g = &s->c->groups[s->c->flows[f].group];
	double vol = sign * s->vol_flow[f];

	path_load(s, ch->path, g->members[s->slot_member[slot]], vol);
	join_tree(s, ch, vol, sign);
}

static void move_slot(struct ls *s, int slot, int to)
{
	int from = s->a->slot_choice[slot];

	slot_apply(s, slot, from, -1);
	s->a->slot_choice[slot] = to;
	slot_apply(s, slot, to, +1);
}

/* Used tree t to another path/parent choice. */
static void move_tree(struct ls *s, int t, int to)
{
	tree_output(s, t, -1);
	s->a->tree_choice[t] = to;
	tree_output(s, t, +1);
}

/* Restore the logged values (after the structural state was restored). */
static void undo_values(struct ls *s)
{
	for (int i = s->n_log - 1; i >= 0; i--)
		s->val[s->log[i].r] = s->log[i].v;
	s->n_log = 0;
}

/* A resource's weight in the secondary key: (time / t_ref)^8. */
static double weight(const struct ls *s, double time)
{
	double q = time / s->t_ref, q2 = q * q, q4 = q2 * q2;

	return q4 * q4;
}

/* Sum of the weights of all resources (the secondary key, from scratch). */
static double weight_sum(const struct ls *s)
{
	double sum = 0;

	for (int r = 0; r < s->n_res; r++)
		sum += weight(s, res_time(s, r));
	return sum;
}

/*
 * Key of the current state given the tentative changes in the log: T, and
 * S = sum over resources of (time / t_ref)^8, a smooth measure of how many
 * resources are near T (a move that relieves one of several bottlenecks
 * lowers S).  Only the logged resources changed.
 */
static void key_now(struct ls *s, double *tp, double *sp)
{
	double tmax = 0, sum = s->spow;

	for (int i = 0; i < s->n_log; i++) {
		int r = s->log[i].r;

		if (s->mark[r])
			continue;
		s->mark[r] = 1; /* first entry: the committed value */
		tmax = fmax(tmax, res_time(s, r));
		sum += weight(s, res_time(s, r)) - weight(s, s->log[i].v * s->inv_cap[r]);
	}
	for (int k = 0; k < s->n_res; k++) { /* the largest unchanged one */
		int r = s->order[k];

		if (!s->mark[r]) {
			tmax = fmax(tmax, res_time(s, r));
			break;
		}
	}
	for (int i = 0; i < s->n_log; i++)
		s->mark[s->log[i].r] = 0;
	*tp = tmax;
	*sp = sum;
}

struct res_key {
	double time;
	int r;
};

static int cmp_res(const void *pa, const void *pb)
{
	const struct res_key *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return a->r - b->r;
}

/* Re-sort after an accepted move: the changed resources are taken out, sorted
 * and merged back into the (still sorted) rest.  O(resources). */
static void resort(struct ls *s)
{
	int n = 0, k = 0, m = 0;
	struct res_key *ch = s->keys;

	for (int i = 0; i < s->n_log; i++) {
		int r = s->log[i].r;

		if (!s->mark[r]) {
			s->mark[r] = 1;
			ch[n++] = (struct res_key){res_time(s, r), r};
		}
	}
	qsort(ch, (size_t)n, sizeof(*ch), cmp_res);
	for (int i = 0; i < s->n_res; i++) /* compact the unchanged ones */
		if (!s->mark[s->order[i]])
			s->tmp[m++] = s->order[i];
	for (int a = 0, b = 0; a < m || b < n;) {
		int take_b =
		    b < n && (a >= m || ch[b].time > res_time(s, s->tmp[a]) ||
			      (ch[b].time == res_time(s, s->tmp[a]) && ch[b].r < s->tmp[a]));

		s->order[k++] = take_b ? ch[b++].r : s->tmp[a++];
	}
	for (int i = 0; i < s->n_res; i++)
		s->pos[s->order[i]] = i;
	for (int i = 0; i < n; i++)
		s->mark[ch[i].r] = 0;
	s->n_log = 0;
}

static void ls_free(struct ls *s)
{
	free(s->block);
	free(s->log);
	free(s->mv);
}

/* The fixed-size arrays, in one slab (s->block). */
static void ls_lay_out(void *obj, struct inart_slab *sl)
{
	struct ls *s = obj;
	const struct inart_cand *c = s->c;
	size_t res = (size_t)s->n_res + 1, pairs = (size_t)s->n_pairs + 2;

	s->val = inart_slab_take(sl, res, sizeof(*s->val));
	s->inv_cap = inart_slab_take(sl, res, sizeof(*s->inv_cap));
	s->ntrees = inart_slab_take(sl, (size_t)s->t->n_nodes + 1, sizeof(*s->ntrees));
	s->nchild = inart_slab_take(sl, (size_t)c->n_trees + 1, sizeof(*s->nchild));
	s->vol_flow = inart_slab_take(sl, (size_t)c->n_flows + 1, sizeof(*s->vol_flow));
	s->vol_tree = inart_slab_take(sl, (size_t)c->n_trees + 1, sizeof(*s->vol_tree));
	s->slot_flow = inart_slab_take(sl, (size_t)c->n_slots + 1, sizeof(*s->slot_flow));
	s->slot_member = inart_slab_take(sl, (size_t)c->n_slots + 1, sizeof(*s->slot_member));
	s->order = inart_slab_take(sl, res, sizeof(*s->order));
	s->pos = inart_slab_take(sl, res, sizeof(*s->pos));
	s->mark = inart_slab_take(sl, res, sizeof(*s->mark));
	s->keys = inart_slab_take(sl, res, sizeof(*s->keys));
	s->tmp = inart_slab_take(sl, res, sizeof(*s->tmp));
	s->pair_base = inart_slab_take(sl, (size_t)s->n_jobs + 1, sizeof(*s->pair_base));
	s->pflow_off = inart_slab_take(sl, pairs, sizeof(*s->pflow_off));
	s->pflow = inart_slab_take(sl, (size_t)c->n_flows + 1, sizeof(*s->pflow));
	s->ptree_off = inart_slab_take(sl, pairs, sizeof(*s->ptree_off));
	s->tree_at = inart_slab_take(sl, (size_t)s->n_pairs * (size_t)s->t->n_nodes + 1,
				     sizeof(*s->tree_at));
	s->cand_stamp = inart_slab_take(sl, (size_t)c->n_trees + 1, sizeof(*s->cand_stamp));
}

static int pair_of(const struct ls *s, int job, int ps_idx)
{
	return s->pair_base[job] + ps_idx;
}

/* Flows and cand trees of every (job, PS) pair. */
static int pairs_init(struct ls *s, const struct inart_jobs *js)
{
	const struct inart_cand *c = s->c;
	int *fill;
	size_t nn;

	inart_jobs_pairs(js, s->pair_base);
	nn = (size_t)s->n_pairs * (size_t)s->t->n_nodes;
	fill = malloc(sizeof(int) * ((size_t)s->n_pairs + 1));
	if (fill == NULL)
		return -ENOMEM;
	for (int f = 0; f < c->n_flows; f++)
		s->pflow_off[pair_of(s, c->flows[f].job, c->flows[f].ps_idx) + 1]++;
	for (int p = 0; p < s->n_pairs; p++)
		s->pflow_off[p + 1] += s->pflow_off[p];
	memcpy(fill, s->pflow_off, sizeof(int) * (size_t)s->n_pairs);
	for (int f = 0; f < c->n_flows; f++)
		s->pflow[fill[pair_of(s, c->flows[f].job, c->flows[f].ps_idx)]++] = f;
	free(fill);
	for (size_t i = 0; i < nn; i++)
		s->tree_at[i] = -1;
	for (int k = 0; k < c->n_trees; k++) {
		int p = pair_of(s, c->trees[k].job, c->trees[k].ps_idx);

		s->ptree_off[p + 1]++;
		s->tree_at[(size_t)p * (size_t)s->t->n_nodes + (size_t)c->trees[k].sw] = k;
	}
	for (int p = 0; p < s->n_pairs; p++)
		s->ptree_off[p + 1] += s->ptree_off[p];
	return 0;
}

static int ls_init(struct ls *s, const struct inart_topo *t, const struct inart_jobs *js,
		   const struct inart_cand *c, const struct inart_plan *plan,
		   struct inart_assign *a)
{
	*s = (struct ls){.t = t, .c = c, .plan = plan, .a = a, .n_jobs = js->n_jobs};
	s->n_arcs = inart_topo_n_arcs(t);
	s->n_res = s->n_arcs + t->n_nodes;
	s->n_pairs = inart_jobs_pairs(js, NULL);
	s->block = inart_slab_block(s, ls_lay_out);
	if (s->block == NULL)
		return -ENOMEM;
	for (int e = 0; e < s->n_arcs; e++)
		s->inv_cap[e] = 1.0 / inart_arc_residual(&t->arcs[e]);
	for (int v = 0; v < t->n_nodes; v++)
		if (t->nodes[v].kind == INART_NODE_SWITCH && t->nodes[v].ina &&
		    t->nodes[v].agg_gbps > 0)
			s->inv_cap[s->n_arcs + v] = 1.0 / t->nodes[v].agg_gbps;
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];

		s->vol_flow[f] =
		    plan->jobs[cf->job].split[cf->ps_idx] * inart_job_gbit(&js->jobs[cf->job]);
		for (int k = 0; k < c->groups[cf->group].n_members; k++) {
			s->slot_flow[cf->first_slot + k] = f;
			s->slot_member[cf->first_slot + k] = k;
		}
	}
	for (int k = 0; k < c->n_trees; k++)
		s->vol_tree[k] = plan->jobs[c->trees[k].job].split[c->trees[k].ps_idx] *
				 inart_job_gbit(&js->jobs[c->trees[k].job]);
	if (pairs_init(s, js) < 0)
		return -ENOMEM;
	/* Loads of the assignment: slots, then (through child_inc) the trees. */
	for (int sl = 0; sl < c->n_slots; sl++)
		if (s->vol_flow[s->slot_flow[sl]] > 0)
			slot_apply(s, sl, a->slot_choice[sl], +1);
	s->n_log = 0;
	s->violated = 0;
	if (s->oom)
		return -ENOMEM;
	for (int r = 0; r < s->n_res; r++)
		s->keys[r] = (struct res_key){res_time(s, r), r};
	qsort(s->keys, (size_t)s->n_res, sizeof(*s->keys), cmp_res);
	for (int k = 0; k < s->n_res; k++) {
		s->order[k] = s->keys[k].r;
		s->pos[s->keys[k].r] = k;
	}
	s->t_ref = s->n_res > 0 && res_time(s, s->order[0]) > 0 ? res_time(s, s->order[0]) : 1.0;
	s->spow = weight_sum(s);
	return 0;
}

/* 1 if slot sl's route (or tree k's output) touches resource r. */
static int path_touches(const struct ls *s, int pi, int first, int r)
{
	const int *p = inart_pathset_path(&s->c->paths, pi);
	int len = inart_pathset_len(&s->c->paths, pi);

	if (r >= s->n_arcs)
		return 0;
	for (int i = 0; i + 1 < len; i++) {
		int u = i == 0 && first >= 0 ? first : p[i];
		int a = s->t->arcs[r].from, b = s->t->arcs[r].to;

		if ((u == a && p[i + 1] == b) || (u == b && p[i + 1] == a))
			return 1;
	}
	return 0;
}

static int slot_touches(const struct ls *s, int sl, int r)
{
	const struct inart_choice *ch = &s->c->choices[s->a->slot_choice[sl]];
	int f = s->slot_flow[sl];

	if (r >= s->n_arcs)
		return ch->tree >= 0 && ch->agg == r - s->n_arcs;
	return path_touches(s, ch->path,
			    s->c->groups[s->c->flows[f].group].members[s->slot_member[sl]], r);
}

static int tree_touches(const struct ls *s, int k, int r)
{
	const struct inart_choice *ch = &s->c->choices[s->a->tree_choice[k]];

	if (r >= s->n_arcs)
		return ch->tree >= 0 && ch->agg == r - s->n_arcs;
	return path_touches(s, ch->path, -1, r);
}

struct ls_budget {
	long tries, max_tries;
	double deadline; /* <= 0: none */
	const struct inart_budget *budget; /* NULL: none */
};

static int out_of_budget(const struct ls_budget *bu)
{
	if (bu->tries >= bu->max_tries)
		return 1;
	if ((bu->tries & 63) != 0)
		return 0;
	if (bu->budget != NULL && inart_budget_expired(bu->budget))
		return 1;
	return bu->deadline > 0 && inart_now_s() > bu->deadline;
}

/* Recorded moves (for compound moves and their undo). */
static void rec_move(struct ls *s, int kind, int who, int to)
{
	if (inart_grow((void **)&s->mv, &s->cap_mv, s->n_mv, sizeof(*s->mv), 64) < 0) {
		s->oom = 1;
		return;
	}
	s->mv[s->n_mv].kind = kind;
	s->mv[s->n_mv].who = who;
	s->mv[s->n_mv++].from = kind ? s->a->tree_choice[who] : s->a->slot_choice[who];
	if (kind)
		move_tree(s, who, to);
	else
		move_slot(s, who, to);
}

static void undo_moves(struct ls *s)
{
	for (int i = s->n_mv - 1; i >= 0; i--) {
		if (s->mv[i].kind)
			move_tree(s, s->mv[i].who, s->mv[i].from);
		else
			move_slot(s, s->mv[i].who, s->mv[i].from);
	}
	s->n_mv = 0;
	undo_values(s);
}

/* Does the tentative state improve on (tcur, scur)?  Strictly lower T, or T
 * not higher and a lower S: the key decreases lexicographically and T never
 * grows. */
static int improves(struct ls *s, double tcur, double scur, double *tn, double *sn)
{
	key_now(s, tn, sn);
	return !s->violated &&
	       (*tn < tcur * (1 - LS_TIE) || (*tn <= tcur && *sn < scur * (1 - 1e-12)));
}

/* Keep the tentative state as the current one. */
static void commit(struct ls *s, double tn, double sn, double *tcur, double *scur)
{
	s->n_mv = 0;
	resort(s);
	s->spow = weight_sum(s); /* from scratch: no drift */
	*tcur = tn;
	*scur = s->spow;
	(void)sn;
}

/*
 * Best single move of one owner (a member slot, or a used tree when is_tree):
 * every other choice of it is scored; the best improving one is applied.
 */
static int try_owner(struct ls *s, int who, int is_tree, double *tcur, double *scur,
		     struct ls_budget *bu)
{
	const struct inart_cand *c = s->c;
	int first, n, cur, best = -1;
	double best_t = *tcur, best_c = *scur, tn, cn;

	if (is_tree) {
		first = c->trees[who].first_choice;
		n = c->trees[who].n_choices;
		cur = s->a->tree_choice[who];
	} else {
		first = c->flows[s->slot_flow[who]].first_choice;
		n = c->flows[s->slot_flow[who]].n_choices;
		cur = s->a->slot_choice[who];
	}
	for (int ci = first; ci < first + n && !out_of_budget(bu); ci++) {
		if (ci == cur)
			continue;
		bu->tries++;
		s->violated = 0;
		rec_move(s, is_tree, who, ci);
		if (improves(s, best_t, best_c, &tn, &cn)) {
			best = ci;
			best_t = tn;
			best_c = cn;
		}
		undo_moves(s);
	}
	s->violated = 0;
	if (best < 0)
		return 0;
	rec_move(s, is_tree, who, best);
	commit(s, best_t, best_c, tcur, scur);
	return 1;
}

/* The choice of an owner whose path is a proper prefix of cur's path and
 * ends at cand tree t, or -1. */
static int prefix_choice(const struct inart_cand *c, int first, int n, int cur, int t)
{
	for (int ci = first; ci < first + n; ci++)
		if (c->choices[ci].tree == t && inart_cand_prefix(c, ci, cur))
			return ci;
	return -1;
}

/* Like next_choice (repair), with "used" read from the children counts. */
static int next_used(const struct ls *s, int first, int n, int cur, int drop)
{
	const struct inart_cand *c = s->c;
	int best = -1, best_len = 0;

	for (int ci = first; ci < first + n; ci++) {
		const struct inart_choice *ch = &c->choices[ci];
		int lq = inart_pathset_len(&c->paths, ch->path);

		if (ch->tree == drop || (ch->tree >= 0 && s->nchild[ch->tree] == 0))
			continue;
		if (inart_cand_prefix(c, cur, ci) && (best < 0 || lq < best_len)) {
			best = ci;
			best_len = lq;
		}
	}
	return best;
}

/*
 * Compound moves on cand tree t of pair (job, PS):
 *   merge: every member slot and used tree of the pair whose route passes
 *          t's switch before its aggregation point is aggregated at t instead
 *          (its choice with the same path, cut at t);
 *   split: t's children go on to the next used tree along their path, or
 *          the PS (as in the budget repair), which closes t.
 */
static void compound(struct ls *s, int t, int split)
{
	const struct inart_cand *c = s->c;
	int p = pair_of(s, c->trees[t].job, c->trees[t].ps_idx);

	for (int i = s->pflow_off[p]; i < s->pflow_off[p + 1]; i++) {
		const struct inart_cand_flow *cf = &c->flows[s->pflow[i]];

		if (!(s->vol_flow[s->pflow[i]] > 0))
			continue;
		for (int k = 0; k < c->groups[cf->group].n_members; k++) {
			int sl = cf->first_slot + k, cur = s->a->slot_choice[sl], to;

			if ((c->choices[cur].tree == t) != split)
				continue;
			to = split ? next_used(s, cf->first_choice, cf->n_choices, cur, t)
				   : prefix_choice(c, cf->first_choice, cf->n_choices, cur, t);
			if (to >= 0)
				rec_move(s, 0, sl, to);
		}
	}
	for (int k = s->ptree_off[p]; k < s->ptree_off[p + 1]; k++) {
		const struct inart_cand_tree *ct = &c->trees[k];
		int cur = s->a->tree_choice[k], to;

		if (k == t || s->nchild[k] == 0 || (c->choices[cur].tree == t) != split)
			continue;
		to = split ? next_used(s, ct->first_choice, ct->n_choices, cur, t)
			   : prefix_choice(c, ct->first_choice, ct->n_choices, cur, t);
		if (to >= 0)
			rec_move(s, 1, k, to);
	}
}

static int try_compound(struct ls *s, int t, int split, double *tcur, double *scur,
			struct ls_budget *bu)
{
	double tn, cn;

	if (out_of_budget(bu) || (split && s->nchild[t] == 0))
		return 0;
	s->violated = 0;
	compound(s, t, split);
	bu->tries += 1 + s->n_mv / 8;
	if (s->n_mv > 0 && improves(s, *tcur, *scur, &tn, &cn)) {
		s->violated = 0;
		commit(s, tn, cn, tcur, scur);
		return 1;
	}
	undo_moves(s);
	s->violated = 0;
	return 0;
}

/* Cand trees of pair p at the intermediate nodes of a path (merge targets). */
static int merge_targets(struct ls *s, int p, int pi, double *tcur, double *scur,
			 struct ls_budget *bu)
{
	const int *q = inart_pathset_path(&s->c->paths, pi);
	int len = inart_pathset_len(&s->c->paths, pi);

	for (int i = 1; i + 1 < len; i++) {
		int k = s->tree_at[(size_t)p * (size_t)s->t->n_nodes + (size_t)q[i]];

		if (k < 0 || s->cand_stamp[k] == s->stamp)
			continue;
		s->cand_stamp[k] = s->stamp;
		if (try_compound(s, k, 0, tcur, scur, bu))
			return 1;
	}
	return 0;
}

/* One improving move around resource r (single moves first), or 0. */
static int improve_at(struct ls *s, int r, double *tcur, double *scur, struct ls_budget *bu)
{
	const struct inart_cand *c = s->c;

	for (int sl = 0; sl < c->n_slots && !out_of_budget(bu); sl++)
		if (s->vol_flow[s->slot_flow[sl]] > 0 && slot_touches(s, sl, r) &&
		    try_owner(s, sl, 0, tcur, scur, bu))
			return 1;
	for (int t = 0; t < c->n_trees && !out_of_budget(bu); t++)
		if (s->nchild[t] > 0 && tree_touches(s, t, r) && try_owner(s, t, 1, tcur, scur, bu))
			return 1;
	s->stamp++;
	for (int sl = 0; sl < c->n_slots && !out_of_budget(bu); sl++) {
		int f = s->slot_flow[sl];

		if (s->vol_flow[f] > 0 && slot_touches(s, sl, r) &&
		    merge_targets(s, pair_of(s, c->flows[f].job, c->flows[f].ps_idx),
				  c->choices[s->a->slot_choice[sl]].path, tcur, scur, bu))
			return 1;
	}
	for (int t = 0; t < c->n_trees && !out_of_budget(bu); t++)
		if (s->nchild[t] > 0 && tree_touches(s, t, r) &&
		    merge_targets(s, pair_of(s, c->trees[t].job, c->trees[t].ps_idx),
				  c->choices[s->a->tree_choice[t]].path, tcur, scur, bu))
			return 1;
	for (int t = 0; t < c->n_trees && !out_of_budget(bu); t++)
		if (s->nchild[t] > 0 &&
		    (tree_touches(s, t, r) ||
		     (r >= s->n_arcs && c->trees[t].sw == r - s->n_arcs)) &&
		    try_compound(s, t, 1, tcur, scur, bu))
			return 1;
	return 0;
}

/* Descend while some move improves the key; returns accepted moves. */
static int local_search(struct ls *s, struct ls_budget *bu)
{
	double tcur, scur;
	int moves = 0;

	key_now(s, &tcur, &scur);
	while (!out_of_budget(bu) && !s->oom && tcur > 0) {
		int improved = 0;

		for (int k = 0; k < LS_TOP && k < s->n_res && !improved; k++)
			improved = improve_at(s, s->order[k], &tcur, &scur, bu);
		if (!improved)
			break;
		moves++;
	}
	return moves;
}

/*
 * A random kick: n moves, each of a member slot or used tree touching one of
 * the most loaded resources, to a random other choice; a move that would
 * exceed a tree budget is skipped.  The key is ignored (the descent that
 * follows decides).
 */
static void perturb(struct ls *s, struct inart_rng *rng, int n)
{
	const struct inart_cand *c = s->c;

	for (int k = 0; k < n && !s->oom; k++) {
		int r = s->order[inart_rng_below(
		    rng, (uint64_t)(s->n_res < LS_TOP ? s->n_res : LS_TOP))];
		int n_cand = 0, pick, who = -1, is_tree = 0, first, cnt, cur, to;
		double tn, sn, tc, sc;

		for (int sl = 0; sl < c->n_slots; sl++)
			n_cand += s->vol_flow[s->slot_flow[sl]] > 0 && slot_touches(s, sl, r);
		for (int t = 0; t < c->n_trees; t++)
			n_cand += s->nchild[t] > 0 && tree_touches(s, t, r);
		if (n_cand == 0)
			continue;
		pick = (int)inart_rng_below(rng, (uint64_t)n_cand);
		for (int sl = 0; sl < c->n_slots && who < 0; sl++)
			if (s->vol_flow[s->slot_flow[sl]] > 0 && slot_touches(s, sl, r) &&
			    pick-- == 0)
				who = sl;
		for (int t = 0; t < c->n_trees && who < 0; t++)
			if (s->nchild[t] > 0 && tree_touches(s, t, r) && pick-- == 0) {
				who = t;
				is_tree = 1;
			}
		first =
		    is_tree ? c->trees[who].first_choice : c->flows[s->slot_flow[who]].first_choice;
		cnt = is_tree ? c->trees[who].n_choices : c->flows[s->slot_flow[who]].n_choices;
		cur = is_tree ? s->a->tree_choice[who] : s->a->slot_choice[who];
		if (cnt < 2)
			continue;
		to = first + (int)inart_rng_below(rng, (uint64_t)(cnt - 1));
		if (to >= cur)
			to++;
		s->violated = 0;
		rec_move(s, is_tree, who, to);
		if (s->violated) {
			undo_moves(s);
		} else {
			key_now(s, &tn, &sn);
			commit(s, tn, sn, &tc, &sc);
		}
		s->violated = 0;
	}
}

static int assign_copy(struct inart_assign *dst, const struct inart_assign *src,
		       const struct inart_cand *c)
{
	memcpy(dst->slot_choice, src->slot_choice, sizeof(int) * (size_t)c->n_slots);
	memcpy(dst->tree_choice, src->tree_choice, sizeof(int) * (size_t)c->n_trees);
	return 0;
}

/* Descent, then kicks each followed by a descent: kept if the key drops,
 * else the search returns to the best state. */
static int descend_and_kick(struct ls *s, const struct inart_topo *t, const struct inart_jobs *js,
			    const struct inart_plan *plan, struct inart_assign *keep,
			    const struct inart_ls_opt *opt, struct ls_budget *bu, double *tb)
{
	struct inart_rng rng;
	double sb, tn, sn;
	int moves = local_search(s, bu), rc = 0;

	inart_rng_seed(&rng, opt->seed);
	key_now(s, tb, &sb);
	assign_copy(keep, s->a, s->c);
	for (int kick = 0; kick < opt->kicks && !out_of_budget(bu) && !s->oom; kick++) {
		perturb(s, &rng, 1 + (int)inart_rng_below(&rng, 3));
		moves += local_search(s, bu);
		key_now(s, &tn, &sn);
		if (tn < *tb * (1 - LS_TIE) || (tn <= *tb && sn < sb * (1 - 1e-12))) {
			*tb = tn;
			sb = sn;
			assign_copy(keep, s->a, s->c);
		} else { /* back to the best state */
			struct inart_assign *a = s->a;

			ls_free(s);
			assign_copy(a, keep, s->c);
			rc = ls_init(s, t, js, s->c, plan, a);
			if (rc < 0)
				return rc;
			key_now(s, tb, &sb);
		}
	}
	return s->oom ? -ENOMEM : moves;
}

int inart_localsearch_run(const struct inart_topo *t, const struct inart_jobs *js,
			  const struct inart_cand *c, const struct inart_plan *plan,
			  struct inart_assign *a, const struct inart_ls_opt *opt, double *time_s)
{
	struct ls_budget bu = {0, opt->max_tries, opt->deadline, opt->budget};
	struct inart_assign keep = {0};
	struct ls s;
	int rc = inart_assign_init(&keep, c);

	*time_s = NAN;
	if (rc < 0)
		return rc;
	rc = ls_init(&s, t, js, c, plan, a);
	if (rc == 0)
		rc = descend_and_kick(&s, t, js, plan, &keep, opt, &bu, time_s);
	ls_free(&s);
	if (rc >= 0)
		assign_copy(a, &keep, c);
	inart_assign_free(&keep);
	return rc;
}
