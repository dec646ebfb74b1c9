/*
 * baselines: ps, byteps, switchml, atp and inart-sp (see baselines.h).
 *
 * All routes are ECMP shortest paths (inart_paths_shortest salted by job,
 * worker and PS, so a flow keeps its path whatever else changes).  Baselines
 * that pick "one PS" or "one switch" try the candidates per job, in job order,
 * with the earlier jobs' choices fixed, and keep what the evaluator says is
 * fastest.  Tree budgets are shared by all jobs: a budget used by an earlier
 * job is not available to a later one.
 */
#include "cp/planner/baselines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/slab.h"
#include "cp/model/evaluate.h"
#include "cp/planner/split.h"

#define MAX_PATH 4096

struct ctx {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	struct inart_paths *paths;
	struct inart_evaluator *ev;
	void *block;  /* the arrays below (ctx_lay_out) */
	int *buf;     /* MAX_PATH nodes */
	int *left;    /* per node: tree budget left */
	int *tree_at; /* per node: mark of a tree of the current (job, PS) */
	int mark;
	struct inart_err *err;
};

static uint64_t salt(int j, int w, int p)
{
	return inart_hash2(((uint64_t)(unsigned)j << 32) | (unsigned)w, (uint64_t)(unsigned)p);
}

static void ctx_lay_out(void *obj, struct inart_slab *s)
{
	struct ctx *c = obj;

	c->buf = inart_slab_take(s, MAX_PATH, sizeof(*c->buf));
	c->left = inart_slab_take(s, (size_t)c->t->n_nodes, sizeof(*c->left));
	c->tree_at = inart_slab_take(s, (size_t)c->t->n_nodes, sizeof(*c->tree_at));
}

static int ctx_init(struct ctx *c, const struct inart_topo *t, const struct inart_jobs *js,
		    struct inart_paths *paths, struct inart_err *err)
{
	*c = (struct ctx){.t = t, .js = js, .paths = paths, .err = err};
	c->ev = inart_evaluator_create(t, js);
	c->block = inart_slab_block(c, ctx_lay_out);
	if (c->ev == NULL || c->block == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

static void ctx_free(struct ctx *c)
{
	inart_evaluator_destroy(c->ev);
	free(c->block);
}

static void budgets_reset(struct ctx *c)
{
	for (int v = 0; v < c->t->n_nodes; v++)
		c->left[v] =
		    c->t->nodes[v].ina && c->t->nodes[v].agg_gbps > 0 ? c->t->nodes[v].trees : 0;
}

/* Budgets left for job `except` given the trees every other job holds. */
static void budgets_take_plan(struct ctx *c, const struct inart_plan *p, int except)
{
	budgets_reset(c);
	for (int j = 0; j < p->n_jobs; j++)
		for (int i = 0; j != except && i < p->jobs[j].n_trees; i++)
			c->left[p->jobs[j].trees[i].sw]--;
}

/* Shortest path a -> b into c->buf; returns length or -errno. */
static int sp(struct ctx *c, int j, int a, int b)
{
	int n = inart_paths_shortest(c->paths, a, b, salt(j, a, b), c->buf, MAX_PATH);

	if (n < 0)
		return inart_err_set(c->err, n, "no path from '%s' to '%s'", c->t->nodes[a].id,
				     c->t->nodes[b].id);
	return n;
}

/* Route every worker of job j by a shortest path to agg, where its flow to
 * PS ps aggregates (agg == ps: straight to the PS, no INA). */
static int route_workers(struct ctx *c, struct inart_plan *p, int j, int ps, int agg)
{
	const struct inart_job *job = &c->js->jobs[j];

	for (int k = 0; k < job->n_workers; k++) {
		int n = sp(c, j, job->workers[k], agg);

		if (n < 0)
			return n;
		n = inart_plan_add_flow(p, j, job->workers[k], ps, agg, c->buf, n);
		if (n < 0)
			return inart_err_set(c->err, n, "out of memory");
	}
	return 0;
}

static double eval_time(struct ctx *c, const struct inart_plan *p)
{
	struct inart_eval e;

	if (inart_evaluator_run(c->ev, p, &e, NULL) < 0)
		return INFINITY;
	return e.comm_time_s;
}

/* Set job j's split to everything on PS index i. */
static void split_one(struct inart_plan *p, int j, int i)
{
	for (int k = 0; k < p->jobs[j].n_ps; k++)
		p->jobs[j].split[k] = k == i ? 1.0 : 0.0;
}

/* A route builder for job j with PS index i (budgets in c->left). */
typedef int (*route_fn)(struct ctx *c, struct inart_plan *p, int j, int i, const void *arg);

/* Job j's routes made anew by `route`, its whole gradient at its i-th PS (the
 * budgets that the other jobs' routes hold taken first). */
static int reroute(struct ctx *c, struct inart_plan *p, int j, int i, route_fn route,
		   const void *arg)
{
	inart_plan_clear_routes(p, j);
	split_one(p, j, i);
	budgets_take_plan(c, p, j);
	return route(c, p, j, i, arg);
}

/* For each job in order, try every PS index with `route` and keep the
 * fastest (earlier jobs fixed, later jobs provisionally straight to their
 * first PS, holding no tree). */
static int best_single_ps(struct ctx *c, struct inart_plan *p, route_fn route, const void *arg)
{
	int rc;

	for (int j = 0; j < c->js->n_jobs; j++) {
		split_one(p, j, 0);
		rc = route_workers(c, p, j, c->js->jobs[j].ps[0], c->js->jobs[j].ps[0]);
		if (rc < 0)
			return rc;
	}
	for (int j = 0; j < c->js->n_jobs; j++) {
		const struct inart_job *job = &c->js->jobs[j];
		double best = INFINITY;
		int best_i = 0;

		for (int i = 0; i < job->n_ps; i++) {
			double tm;

			rc = reroute(c, p, j, i, route, arg);
			if (rc < 0)
				return rc;
			tm = eval_time(c, p);
			if (tm < best) {
				best = tm;
				best_i = i;
			}
		}
		rc = reroute(c, p, j, best_i, route, arg);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int route_ps(struct ctx *c, struct inart_plan *p, int j, int i, const void *arg)
{
	(void)arg;
	return route_workers(c, p, j, c->js->jobs[j].ps[i], c->js->jobs[j].ps[i]);
}

/* Check and time the finished plan; hand it out or free it. */
static int finish(struct ctx *c, struct inart_plan *p, struct inart_plan **out, int rc)
{
	struct inart_eval e;

	if (rc == 0) {
		rc = inart_evaluator_run(c->ev, p, &e, c->err);
		if (rc == 0) {
			p->comm_time_s = e.comm_time_s;
			p->push_time_s = e.push_time_s;
			p->pull_time_s = e.pull_time_s;
		}
	}
	ctx_free(c);
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* A baseline's plan: a context and an empty plan named `name`, filled by
 * fill, then checked and timed (finish). */
static int run(const struct inart_topo *t, const struct inart_jobs *js, struct inart_paths *paths,
	       const char *name, int (*fill)(struct ctx *c, struct inart_plan *p),
	       struct inart_plan **out, struct inart_err *err)
{
	struct ctx c;
	struct inart_plan *p = NULL;
	int rc = ctx_init(&c, t, js, paths, err);

	if (rc == 0 && (p = inart_plan_create(js, name)) == NULL)
		rc = inart_err_set(err, -ENOMEM, "out of memory");
	if (rc < 0) {
		ctx_free(&c);
		return rc;
	}
	return finish(&c, p, out, fill(&c, p));
}

static int fill_ps(struct ctx *c, struct inart_plan *p)
{
	return best_single_ps(c, p, route_ps, NULL);
}

int inart_baseline_ps(const struct inart_topo *t, const struct inart_jobs *js,
		      struct inart_paths *paths, struct inart_plan **out, struct inart_err *err)
{
	return run(t, js, paths, "ps", fill_ps, out, err);
}

static int fill_byteps(struct ctx *c, struct inart_plan *p)
{
	int rc = 0;

	for (int j = 0; j < c->js->n_jobs && rc == 0; j++) {
		const struct inart_job *job = &c->js->jobs[j];

		for (int i = 0; i < job->n_ps && rc == 0; i++) {
			p->jobs[j].split[i] = 1.0 / job->n_ps;
			rc = route_workers(c, p, j, job->ps[i], job->ps[i]);
		}
	}
	return rc;
}

int inart_baseline_byteps(const struct inart_topo *t, const struct inart_jobs *js,
			  struct inart_paths *paths, struct inart_plan **out, struct inart_err *err)
{
	return run(t, js, paths, "byteps", fill_byteps, out, err);
}

/* ---- on-path INA: atp and inart-sp ---- */

/* The single switch a host hangs from, if it is INA-capable with budget. */
static int ina_tor(const struct inart_topo *t, int h)
{
	int a;

	if (t->out_off[h + 1] - t->out_off[h] != 1)
		return -1;
	a = t->arcs[t->arc_out[t->out_off[h]]].to;
	return t->nodes[a].ina && t->nodes[a].trees > 0 && t->nodes[a].agg_gbps > 0 ? a : -1;
}

/* Tree of the current (job, PS) at v exists, or can be made from the budget. */
static int tree_get(struct ctx *c, int v)
{
	if (c->tree_at[v] == c->mark)
		return 1;
	if (c->left[v] <= 0)
		return 0;
	c->left[v]--;
	c->tree_at[v] = c->mark;
	return 1;
}

struct onpath_arg {
	int two_level; /* atp: fall back to the PS's ToR, level-1 trees feed it */
};

/*
 * Each worker of (j, PS i) aggregates at the first INA switch on its shortest
 * path that has (or can get) a tree; with two_level, else at the PS's ToR
 * (a tree reserved up front), else at the PS.  Trees send to the PS's ToR tree
 * (two_level) or the PS, by shortest path.
 */
static int route_onpath(struct ctx *c, struct inart_plan *p, int j, int i, const void *argp)
{
	const struct onpath_arg *arg = argp;
	const struct inart_job *job = &c->js->jobs[j];
	int ps = job->ps[i], tor = -1, rc = 0;
	int *used = NULL, n_used = 0, tor_children = 0;

	c->mark++;
	used = malloc(sizeof(int) * (size_t)(job->n_workers + 1));
	if (used == NULL)
		return inart_err_set(c->err, -ENOMEM, "out of memory");
	if (arg->two_level) {
		tor = ina_tor(c->t, ps);
		if (tor >= 0 && !tree_get(c, tor))
			tor = -1;
	}
	for (int k = 0; k < job->n_workers; k++) {
		int w = job->workers[k], n = sp(c, j, w, ps), agg = ps, cut = n;

		if (n < 0) {
			rc = n;
			goto out;
		}
		for (int pos = 1; pos < n - 1; pos++) {
			int v = c->buf[pos];

			if (v == tor ||
			    (c->t->nodes[v].ina && c->t->nodes[v].agg_gbps > 0 && tree_get(c, v))) {
				agg = v;
				cut = pos + 1;
				break;
			}
		}
		if (agg == ps && tor >= 0) {
			agg = tor;
			cut = n - 1; /* the ToR is the last hop before a single-homed PS */
		}
		if (agg == tor)
			tor_children++;
		else if (agg != ps && c->tree_at[agg] == c->mark) {
			int seen = 0;

			for (int u = 0; u < n_used; u++)
				seen |= used[u] == agg;
			if (!seen)
				used[n_used++] = agg;
		}
		rc = inart_plan_add_flow(p, j, w, ps, agg, c->buf, cut);
		if (rc < 0)
			goto out;
	}
	for (int u = 0; u < n_used; u++) {
		int parent = tor >= 0 ? tor : ps;
		int n = sp(c, j, used[u], parent);

		if (n < 0) {
			rc = n;
			goto out;
		}
		if (parent == tor)
			tor_children++;
		rc = inart_plan_add_tree(p, j, used[u], ps, parent, c->buf, n);
		if (rc < 0)
			goto out;
	}
	if (tor >= 0 && tor_children > 0) {
		int path[2] = {tor, ps};

		rc = inart_plan_add_tree(p, j, tor, ps, ps, path, 2);
	} else if (tor >= 0) {
		c->left[tor]++; /* reserved but unused */
	}
out:
	free(used);
	return rc < 0 ? inart_err_set(c->err, rc, "out of memory or no path") : 0;
}

static int fill_atp(struct ctx *c, struct inart_plan *p)
{
	static const struct onpath_arg arg = {1};

	return best_single_ps(c, p, route_onpath, &arg);
}

int inart_baseline_atp(const struct inart_topo *t, const struct inart_jobs *js,
		       struct inart_paths *paths, struct inart_plan **out, struct inart_err *err)
{
	return run(t, js, paths, "atp", fill_atp, out, err);
}

static int fill_inart_sp(struct ctx *c, struct inart_plan *p)
{
	static const struct onpath_arg arg = {0};
	struct inart_split_opt so;
	int rc = 0;

	budgets_reset(c);
	for (int j = 0; j < c->js->n_jobs && rc == 0; j++)
		for (int i = 0; i < c->js->jobs[j].n_ps && rc == 0; i++) {
			p->jobs[j].split[i] = 1.0 / c->js->jobs[j].n_ps;
			rc = route_onpath(c, p, j, i, &arg);
		}
	inart_split_opt_default(&so);
	if (rc == 0)
		rc = inart_split_optimize(c->t, c->js, p, &so, NULL, c->err);
	if (rc == 0) {
		inart_plan_clean_split(p, 1e-6);
		inart_plan_prune_zero(p, c->js);
	}
	return rc;
}

int inart_baseline_inart_sp(const struct inart_topo *t, const struct inart_jobs *js,
			    struct inart_paths *paths, struct inart_plan **out,
			    struct inart_err *err)
{
	return run(t, js, paths, "inart-sp", fill_inart_sp, out, err);
}

/* ---- switchml ---- */

struct switchml_arg {
	int sw; /* the aggregation switch for the job being routed */
};

static int route_switchml(struct ctx *c, struct inart_plan *p, int j, int i, const void *argp)
{
	const struct switchml_arg *arg = argp;
	const struct inart_job *job = &c->js->jobs[j];
	int ps = job->ps[i], s = arg->sw, rc;

	if (s < 0 || c->left[s] <= 0)
		return route_workers(c, p, j, ps, ps);
	rc = route_workers(c, p, j, ps, s);
	if (rc < 0)
		return rc;
	rc = sp(c, j, s, ps);
	if (rc < 0)
		return rc;
	rc = inart_plan_add_tree(p, j, s, ps, ps, c->buf, rc);
	return rc < 0 ? inart_err_set(c->err, rc, "out of memory") : 0;
}

/* Candidate switches for job j: INA switches ranked by total hop distance
 * to the workers and the PSs; the best few are tried. */
#define SWITCHML_TRY 8

static int switchml_candidates(struct ctx *c, int j, int *cand)
{
	const struct inart_job *job = &c->js->jobs[j];
	double score[SWITCHML_TRY];
	int n = 0;

	for (int v = 0; v < c->t->n_nodes; v++) {
		const struct inart_node *nd = &c->t->nodes[v];
		const int *dist;
		double s = 0;
		int pos;

		if (!(nd->ina && nd->trees > 0 && nd->agg_gbps > 0))
			continue;
		dist = inart_paths_dist_to(c->paths, v);
		if (dist == NULL)
			return -ENOMEM;
		for (int k = 0; k < job->n_workers && isfinite(s); k++)
			s += dist[job->workers[k]] < 0 ? INFINITY : dist[job->workers[k]];
		for (int k = 0; k < job->n_ps && isfinite(s); k++)
			s += dist[job->ps[k]] < 0 ? INFINITY : dist[job->ps[k]];
		if (!isfinite(s))
			continue;
		pos = n < SWITCHML_TRY ? n++ : SWITCHML_TRY;
		if (pos == SWITCHML_TRY && s >= score[SWITCHML_TRY - 1])
			continue;
		if (pos == SWITCHML_TRY)
			pos = SWITCHML_TRY - 1;
		while (pos > 0 && score[pos - 1] > s) {
			score[pos] = score[pos - 1];
			cand[pos] = cand[pos - 1];
			pos--;
		}
		score[pos] = s;
		cand[pos] = v;
	}
	return n;
}

static int fill_switchml(struct ctx *c, struct inart_plan *p)
{
	struct switchml_arg arg = {-1};
	/* Provisional routes for every job (no INA), then per job the best
	 * (switch, PS) with the earlier jobs fixed. */
	int rc = best_single_ps(c, p, route_ps, NULL);

	for (int j = 0; j < c->js->n_jobs && rc == 0; j++) {
		int cand[SWITCHML_TRY], n = switchml_candidates(c, j, cand);
		double best = INFINITY;
		int best_sw = -1, best_i = 0;

		if (n < 0) {
			rc = inart_err_set(c->err, n, "out of memory");
			break;
		}
		/* SwitchML always aggregates at a switch when one has a tree
		 * left; only without any does the job go straight to a PS. */
		for (int s = n > 0 ? 0 : -1; s < n && rc == 0; s++) {
			arg.sw = s < 0 ? -1 : cand[s];
			for (int i = 0; i < c->js->jobs[j].n_ps && rc == 0; i++) {
				double tm;

				rc = reroute(c, p, j, i, route_switchml, &arg);
				tm = rc == 0 ? eval_time(c, p) : INFINITY;
				if (tm < best) {
					best = tm;
					best_sw = arg.sw;
					best_i = i;
				}
			}
		}
		if (rc < 0)
			break;
		arg.sw = best_sw;
		rc = reroute(c, p, j, best_i, route_switchml, &arg);
	}
	return rc;
}

int inart_baseline_switchml(const struct inart_topo *t, const struct inart_jobs *js,
			    struct inart_paths *paths, struct inart_plan **out,
			    struct inart_err *err)
{
	return run(t, js, paths, "switchml", fill_switchml, out, err);
}

const struct inart_baseline_entry inart_baseline_table[INART_BASELINE_N] = {
    {"ps", inart_baseline_ps},
    {"byteps", inart_baseline_byteps},
    {"switchml", inart_baseline_switchml},
    {"atp", inart_baseline_atp},
    {"inart-sp", inart_baseline_inart_sp},
};

const struct inart_baseline_entry *inart_baseline_find(const char *name)
{
	for (int i = 0; i < INART_BASELINE_N; i++)
		if (strcmp(inart_baseline_table[i].name, name) == 0)
			return &inart_baseline_table[i];
	return NULL;
}
