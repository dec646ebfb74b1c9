/*
 * lns: large-neighbourhood search over the best plan (see lns.h).
 *
 * The incumbent is kept as a candidate assignment (cand.h), its split, and
 * its tree configuration (which cand trees it uses).  A neighbourhood frees
 * the tree configuration at some switches (u_t fixed to the incumbent's 0/1
 * elsewhere: route_lp's tree_fix), with the routes and shares of the (job,
 * PS) pairs involved free (free_pair, free_job), and CBC solves it from the
 * incumbent.  With the configuration
 * mostly fixed the MILP loses the tree-budget combinatorics that make the
 * whole model hard, and CBC usually proves each neighbourhood optimal in a
 * fraction of a second.  A neighbourhood proven optimal is not tried again
 * until the incumbent changes.
 *
 * Ownership: struct lns is local to one call.
 */
#include "cp/planner/lns.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/rng.h"
#include "common/slab.h"
#include "cp/model/assign.h"
#include "cp/planner/localsearch.h"
#include "cp/planner/mixplan.h"
#include "cp/planner/route_lp.h"
#include "cp/planner/split.h"

/* Models up to this many candidate choices are finally solved whole (ALL)
 * and their switches screened by the LP. */
#define LNS_SMALL_CHOICES 2000
/* Above this many, the search does not run (a model build alone is slow). */
#define LNS_MAX_CHOICES 50000
/* Node limit of one neighbourhood: CBC's result then does not depend on the
 * machine's speed ... */
#define LNS_NODES 200
/* ... unless this time limit (seconds) binds first: a safety net. */
#define LNS_SUB_S 3.0
#define LNS_GAP 0.01
/*
 * CBC's time limit is soft (CBC 2.10): completing the start solution, some
 * root heuristics and what it does after its search do not check it
 * (measured at dc72324: on leafspine 0.1-1.2 s past limits of 0.2-3 s, on
 * the scarce family 0.01-0.03 s).  A neighbourhood gets the time left less
 * CBC's overrun -- the largest seen in this run, and at least a guess that
 * grows with the square of the candidate choices (0.65 s at leafspine's
 * 3293, 0.03 s at the family's 700), LNS_CBC_OVER_K seconds per choice
 * squared, at most LNS_CBC_OVER_MAX_S -- and is not started when that
 * leaves CBC less than LNS_CBC_MIN_S or less than its overrun.
 */
#define LNS_CBC_OVER_K 6e-8
#define LNS_CBC_OVER_MAX_S 1.5
#define LNS_CBC_MIN_S 0.05
/* An improvement below this restarts nothing (noise). */
#define LNS_IMPROVE_REL 1e-4
/* The kicks step: random kicks of the local search at first (four times
 * more after a pass without improvement, up to LNS_KICKS_MAX: then no more
 * for that plan), and its moves tried per kick and per member slot or cand
 * tree (a work budget: the same plan on any machine unless the deadline
 * binds first). */
#define LNS_KICKS 256
#define LNS_KICKS_MAX 16384
#define LNS_KICK_TRIES 64

enum nb_kind { NB_ROUTES, NB_SWITCH, NB_JOB, NB_PAIR, NB_ALL };

static const char *const nb_names[] = {"lns routes", "lns switch", "lns job", "lns two switches",
				       "lns all"};

struct lns {
	struct inart_search *s;
	const struct inart_cand *c;
	int small;
	struct inart_assign a; /* scratch: the incumbent's routes, or a result's */
	double *x, *split;     /* the incumbent as a MILP start */
	char *used;	       /* the incumbent's tree configuration */
	signed char *tree_fix; /* the neighbourhood's */
	char *free_pair, *free_job;
	int n_pairs;
	int *pair_base;	    /* per job: first pair */
	int *sw, n_sw;	    /* contended INA switches, in the order to try */
	double *sw_key;	    /* per node: screening value (LP) */
	char *done;	    /* per neighbourhood index: proven optimal for this incumbent */
	int n_done;	    /* entries of done */
	double incumbent_s; /* time of the incumbent when the done flags were set */
	double limit_s;	    /* CBC's time per neighbourhood */
	int max_nodes;	    /* and its node limit */
	int steps;	    /* neighbourhoods solved */
	int kicks;	    /* the kicks step's random kicks */
	int kicks_done;	    /* not (again) for this incumbent: it ran without
			     * improvement, or on small models where CBC's
			     * neighbourhoods come first, no pass has failed */
	double deadline;    /* inart_now_s() at which to stop */
	double cbc_over;    /* CBC's overrun of its limit: the largest seen, or the guess */
	int no_time;	    /* no CBC step can start in the time left: stop */
	/* Ring jobs (inart_lns_run_ring; NULL: every job through PSs, the
	 * incumbent is s->best): the incumbent's PS part and the incumbent
	 * itself (its PS jobs mixed with the rings), both owned. */
	struct inart_lns_ring *ring;
	struct inart_plan *inc, *view;
	void *block; /* the arrays above (lns_lay_out), one allocation */
};

/* The plan whose routes are the incumbent's (ring jobs: its PS part). */
static const struct inart_plan *inc_plan(const struct lns *l)
{
	return l->ring ? l->inc : l->s->best;
}

/* The incumbent as evaluated (ring jobs: mixed with the rings). */
static const struct inart_plan *view_plan(const struct lns *l)
{
	return l->ring ? l->view : l->s->best;
}

/* The ring context of a model: the PS jobs only, the rings' loads fixed. */
static void lp_ctx(const struct lns *l, struct inart_route_lp_opt *lo)
{
	if (l->ring) {
		lo->job_on = l->ring->job_on;
		lo->link_extra = l->ring->link_extra;
	}
}

static void lns_free(struct lns *l)
{
	inart_assign_free(&l->a);
	free(l->block);
	inart_plan_destroy(l->inc);
	inart_plan_destroy(l->view);
}

/* The arrays of l in one block (l->block): sizes from l->c, l->s, n_pairs
 * and n_done. */
static void lns_lay_out(void *obj, struct inart_slab *sl)
{
	struct lns *l = obj;
	size_t nodes = (size_t)l->s->t->n_nodes + 1, jobs = (size_t)l->s->js->n_jobs + 1;
	size_t pairs = (size_t)l->n_pairs + 1, trees = (size_t)l->c->n_trees + 1;

	l->x = inart_slab_take(sl, (size_t)l->c->n_choices + 1, sizeof(*l->x));
	l->split = inart_slab_take(sl, pairs, sizeof(*l->split));
	l->sw_key = inart_slab_take(sl, nodes, sizeof(*l->sw_key));
	l->pair_base = inart_slab_take(sl, jobs, sizeof(*l->pair_base));
	l->sw = inart_slab_take(sl, nodes, sizeof(*l->sw));
	l->used = inart_slab_take(sl, trees, 1);
	l->tree_fix = inart_slab_take(sl, trees, 1);
	l->free_pair = inart_slab_take(sl, pairs, 1);
	l->free_job = inart_slab_take(sl, jobs, 1);
	l->done = inart_slab_take(sl, (size_t)l->n_done, 1);
}

/* Per node: how many (job, PS) pairs have cand trees there (ring jobs'
 * trees left out), into count. */
static void count_trees(const struct lns *l, int *count)
{
	for (int k = 0; k < l->c->n_trees; k++)
		if (l->ring == NULL || l->ring->job_on[l->c->trees[k].job])
			count[l->c->trees[k].sw]++;
}

/* Switch v has cand trees of more pairs than its budget. */
static int contended(const struct lns *l, const int *count, int v)
{
	const struct inart_node *nd = &l->s->t->nodes[v];

	return nd->ina && count[v] > nd->trees;
}

/* A ring job's neighbourhood has nothing free: never tried. */
static void skip_ring_jobs(struct lns *l)
{
	for (int j = 0; l->ring != NULL && j < l->s->js->n_jobs; j++)
		if (!l->ring->job_on[j])
			l->done[1 + l->n_sw + j] = 1;
}

static int lns_init(struct lns *l, struct inart_search *s, struct inart_lns_ring *ring)
{
	const struct inart_jobs *js = s->js;
	int n_nodes = s->t->n_nodes, n_sw = 0, rc = -ENOMEM;
	int *count = calloc((size_t)n_nodes + 1, sizeof(int));

	memset(l, 0, sizeof(*l));
	l->s = s;
	l->ring = ring;
	l->deadline = ring ? ring->deadline : s->deadline;
	l->c = s->cand;
	l->small = l->c->n_choices <= LNS_SMALL_CHOICES;
	l->limit_s = LNS_SUB_S;
	l->max_nodes = LNS_NODES;
	l->kicks = LNS_KICKS;
	l->kicks_done = l->small;
	l->cbc_over = inart_lns_cbc_over_guess(l->c->n_choices);
	if (count == NULL)
		goto out;
	l->n_pairs = inart_jobs_pairs(js, NULL);
	/* contended INA switches; neighbourhoods: routes, switches, jobs,
	 * switch pairs, all */
	count_trees(l, count);
	for (int v = 0; v < n_nodes; v++)
		n_sw += contended(l, count, v);
	l->n_done = 2 + n_sw + js->n_jobs + n_sw * n_sw;
	l->block = inart_slab_block(l, lns_lay_out);
	if (l->block == NULL || (rc = inart_assign_init(&l->a, l->c)) < 0)
		goto out;
	inart_jobs_pairs(js, l->pair_base);
	for (int v = 0; v < n_nodes; v++)
		if (contended(l, count, v))
			l->sw[l->n_sw++] = v;
	skip_ring_jobs(l);
out:
	free(count);
	return rc;
}

/* The incumbent (s->best) as assignment, x, split and tree configuration.
 * -ENOENT when its routes are not candidates (a baseline's plan). */
static int take_incumbent(struct lns *l)
{
	const struct inart_plan *b = inc_plan(l);
	double now = view_plan(l)->comm_time_s;
	int rc = inart_assign_from_plan(l->c, l->s->js, b, &l->a);

	if (rc < 0)
		return rc;
	inart_assign_to_x(l->c, &l->a, b, l->x);
	inart_assign_used_trees(l->c, &l->a, b, l->used);
	for (int j = 0; j < b->n_jobs; j++)
		memcpy(l->split + l->pair_base[j], b->jobs[j].split,
		       sizeof(double) * (size_t)b->jobs[j].n_ps);
	if (!(now >= l->incumbent_s * (1 - LNS_IMPROVE_REL))) {
		memset(l->done, 0, (size_t)l->n_done);
		skip_ring_jobs(l);
		l->kicks_done = l->small;
	}
	l->incumbent_s = now;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Neighbourhoods
 */

/* Everything fixed: the incumbent's configuration, no pair free. */
static void nb_clear(struct lns *l)
{
	for (int k = 0; k < l->c->n_trees; k++)
		l->tree_fix[k] = (signed char)l->used[k];
	memset(l->free_pair, 0, (size_t)l->n_pairs);
	memset(l->free_job, 0, (size_t)l->s->js->n_jobs);
}

static void free_pair(struct lns *l, int job, int ps_idx)
{
	l->free_pair[l->pair_base[job] + ps_idx] = 1;
	l->free_job[job] = 1;
}

/* Free the trees at switch v, and (for large models) the routes of their
 * pairs. */
static void free_switch(struct lns *l, int v)
{
	for (int k = 0; k < l->c->n_trees; k++) {
		if (l->c->trees[k].sw != v)
			continue;
		l->tree_fix[k] = -1;
		free_pair(l, l->c->trees[k].job, l->c->trees[k].ps_idx);
	}
}

static void free_job(struct lns *l, int j)
{
	for (int k = 0; k < l->c->n_trees; k++)
		if (l->c->trees[k].job == j)
			l->tree_fix[k] = -1;
	for (int i = 0; i < l->s->js->jobs[j].n_ps; i++)
		free_pair(l, j, i);
}

/* 1 if path p[0..n) crosses the link of arc e. */
static int crosses(const struct inart_topo *t, const int *p, int n, int e)
{
	for (int i = 0; i + 1 < n; i++) {
		int a = inart_topo_arc_between(t, p[i], p[i + 1]);

		if (a >= 0 && (a & ~1) == (e & ~1))
			return 1;
	}
	return 0;
}

/* The routes of the pairs that load the incumbent's bottleneck (large
 * models: the routes free in the "routes" neighbourhood). */
static int free_bottleneck(struct lns *l)
{
	const struct inart_plan *b = view_plan(l);
	struct inart_eval e;
	int rc = inart_evaluator_run(l->s->ev, b, &e, NULL);

	for (int j = 0; rc == 0 && j < b->n_jobs; j++) {
		const struct inart_job_plan *jp = &b->jobs[j];
		const struct inart_job *job = &l->s->js->jobs[j];

		for (int i = 0; i < jp->n_flows; i++) {
			const struct inart_flow *f = &jp->flows[i];

			if ((e.bottleneck_arc >= 0 &&
			     crosses(l->s->t, f->path, f->n_path, e.bottleneck_arc)) ||
			    (e.bottleneck_node >= 0 && f->agg == e.bottleneck_node))
				free_pair(l, j, inart_job_ps_index(job, f->ps));
		}
		for (int i = 0; i < jp->n_trees; i++) {
			const struct inart_tree *tr = &jp->trees[i];

			if (e.bottleneck_arc >= 0 &&
			    crosses(l->s->t, tr->path, tr->n_path, e.bottleneck_arc))
				free_pair(l, j, inart_job_ps_index(job, tr->ps));
		}
	}
	return rc;
}

/* Neighbourhood number k: 0 routes, 1..n_sw a switch, then the jobs, then
 * pairs of switches, last everything. */
static enum nb_kind nb_set(struct lns *l, int k)
{
	int n_jobs = l->s->js->n_jobs;

	nb_clear(l);
	if (k == 0) {
		if (free_bottleneck(l) < 0)
			memset(l->free_pair, 1, (size_t)l->n_pairs);
		return NB_ROUTES;
	}
	if (k <= l->n_sw) {
		free_switch(l, l->sw[k - 1]);
		return NB_SWITCH;
	}
	if (k <= l->n_sw + n_jobs) {
		free_job(l, k - 1 - l->n_sw);
		return NB_JOB;
	}
	if (k < l->n_done - 1) {
		int p = k - 1 - l->n_sw - n_jobs;

		free_switch(l, l->sw[p / l->n_sw]);
		free_switch(l, l->sw[p % l->n_sw]);
		return NB_PAIR;
	}
	return NB_ALL;
}

/* ---------------------------------------------------------------------------
 * Solving a neighbourhood
 */

/* Ring jobs: the PS part p of a MILP result mixed with the rings, offered
 * to the search, and the incumbent if faster (p then owned by l).  1 if it
 * replaced the incumbent. */
static int take_ring_result(struct lns *l, struct inart_plan *p, const char *step)
{
	struct inart_plan *m = NULL, *c;
	int rc = inart_mixplan_build(l->s, p, l->ring->ring, l->ring->in, &m);

	if (rc == 0)
		rc = inart_search_offer(l->s, m, step);
	if (rc >= 0 && m->comm_time_s < l->view->comm_time_s * (1 - 1e-12)) {
		c = inart_plan_clone(p);
		rc = c ? 1 : -ENOMEM;
		if (c != NULL) {
			inart_plan_destroy(l->inc);
			inart_plan_destroy(l->view);
			l->inc = c;
			l->view = m;
			m = NULL;
		}
	} else if (rc >= 0) {
		rc = 0;
	}
	inart_plan_destroy(m);
	return rc == -EINVAL ? 0 : rc; /* an invalid realization: nothing taken */
}

/* Plan p (realized, every PS routed) offered as the best; then phase 1 for
 * its routes.  1 if kept, 0 if not, -errno. */
static int offer_plan(struct lns *l, struct inart_plan *p, const char *step)
{
	struct inart_search *s = l->s;
	struct inart_split_opt so;
	struct inart_split_result sr;
	int rc = inart_evaluate(s->t, s->js, p, s->err), kept = 0;

	if (rc == 0)
		rc = kept = inart_search_offer(s, p, step);
	/* Phase 1 for the new routes (realize routes every PS). */
	inart_split_opt_default(&so);
	if (kept > 0 && inart_split_optimize(s->t, s->js, p, &so, &sr, s->err) == 0) {
		inart_plan_clean_split(p, 1e-6);
		if (inart_evaluate(s->t, s->js, p, s->err) == 0)
			rc = inart_search_offer(s, p, "lns split");
	}
	return rc < 0 ? rc : kept;
}

/* Plan from a MILP result, offered as the best; then phase 1 for its
 * routes (ring jobs: the mix, no phase 1 -- CBC chose the shares of the
 * free jobs).  1 if kept. */
static int take_result(struct lns *l, const struct inart_route_lp_result *res, const char *step)
{
	struct inart_search *s = l->s;
	struct inart_plan *p = inart_plan_create(s->js, "inart");
	int rc = p ? 0 : -ENOMEM;

	for (int j = 0, off = 0; rc == 0 && j < s->js->n_jobs; j++)
		for (int i = 0; i < s->js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = res->split[off++]; /* ring jobs: a valid start */
	if (rc == 0) {
		inart_plan_clean_split(p, 1e-9);
		inart_assign_from_x(l->c, res->x, &l->a);
		rc = inart_assign_realize(l->c, &l->a, p);
	}
	if (rc == 0 && l->ring != NULL) { /* its PS jobs beside the rings */
		rc = take_ring_result(l, p, step);
		inart_plan_destroy(p);
		return rc;
	}
	if (rc == 0)
		rc = offer_plan(l, p, step);
	inart_plan_destroy(p);
	return rc;
}

static double now_s(const struct lns *l)
{
	return inart_budget_now(&l->s->budget);
}

static double left_s(const struct lns *l)
{
	return l->deadline - now_s(l);
}

double inart_lns_cbc_over_guess(int n_choices)
{
	return fmin(LNS_CBC_OVER_MAX_S, LNS_CBC_OVER_K * (double)n_choices * n_choices);
}

double inart_lns_cbc_limit(double left_s, double want_s, double over_s)
{
	double limit = fmin(want_s, left_s - over_s);

	return limit >= fmax(LNS_CBC_MIN_S, over_s) ? limit : 0;
}

/* The incumbent is close to its bound: for ring jobs, CBC's bound on the
 * subset's whole MILP, or the search's best plan, which no plan of the
 * subset can beat when the subset's bound reaches it. */
static int close_enough(const struct lns *l)
{
	const struct inart_lns_ring *r = l->ring;

	if (r == NULL)
		return inart_search_close(l->s, LNS_GAP);
	return r->proven || l->view->comm_time_s <= r->bound_s * (1 + LNS_GAP) ||
	       r->bound_s >= l->s->best->comm_time_s * (1 - 1e-9);
}

static int stop(const struct lns *l)
{
	return l->no_time || left_s(l) <= 0.1 || close_enough(l) ||
	       (l->s->lns.steps > 0 && l->steps >= l->s->lns.steps);
}

/* CBC's limit for a neighbourhood that wants `want` seconds (the safety
 * net; with a step budget the whole time left: then only the node limit
 * binds), within the time left (lns.h: inart_lns_cbc_limit); 0: it does
 * not start. */
static double nb_limit(const struct lns *l, double want)
{
	return inart_lns_cbc_limit(left_s(l), l->s->lns.steps > 0 ? INFINITY : want, l->cbc_over);
}

/* A CBC step of limit_s took took_s: its overrun counts. */
static void cbc_took(struct lns *l, double limit_s, double took_s)
{
	l->cbc_over = fmax(l->cbc_over, took_s - limit_s);
}

/* Solve the current neighbourhood (kind) within limit_s.  *proven: CBC
 * proved it optimal.  Returns 1 if the best plan improved, 0 if not,
 * -errno. */
static int solve_nb(struct lns *l, enum nb_kind kind, double limit_s, int *proven)
{
	struct inart_search *s = l->s;
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT, .integer = 1};
	struct inart_route_lp_result res = {0};
	double before = view_plan(l)->comm_time_s, t0 = now_s(l);
	int rc;

	lp_ctx(l, &lo);
	lo.time_limit_s = limit_s;
	lo.max_nodes = l->max_nodes;
	lo.start_x = l->x;
	lo.start_split = l->split;
	if (kind != NB_ALL) {
		lo.tree_fix = l->tree_fix;
		lo.free_pair = l->free_pair;
		lo.free_job = l->free_job;
	} else if (l->ring != NULL) {
		/* the whole subset: only plans faster than the search's best
		 * matter, and CBC prunes every node that cannot give one */
		lo.cutoff_s = s->best->comm_time_s;
	}
	rc = inart_route_lp_solve(s->t, s->js, l->c, NULL, &lo, &res, s->err);
	cbc_took(l, limit_s, now_s(l) - t0);
	l->steps++;
	s->lns.cbc_steps++;
	*proven = (rc == 0 && res.optimal) || rc == -ERANGE;
	if (l->ring != NULL && kind == NB_ALL && (rc == -ERANGE || rc == -ETIMEDOUT)) {
		if (isnan(l->ring->bound_s) || res.bound_s > l->ring->bound_s)
			l->ring->bound_s = res.bound_s;
		l->ring->proven |= rc == -ERANGE; /* nothing faster than the best */
		return 0;
	}
	if (rc == -ETIMEDOUT) /* CBC did not even keep the start */
		return 0;
	if (rc == 0 && kind == NB_ALL && l->ring == NULL) /* a bound for every plan */
		inart_search_raise_bound(s, res.bound_s, INART_BOUND_CBC);
	if (rc == 0 && kind == NB_ALL && l->ring != NULL) { /* for the subset's */
		if (isnan(l->ring->bound_s) || res.bound_s > l->ring->bound_s)
			l->ring->bound_s = res.bound_s;
		l->ring->proven |= res.optimal;
	}
	if (rc == 0)
		rc = take_result(l, &res, nb_names[kind]);
	inart_route_lp_result_free(&res);
	if (rc > 0 && take_incumbent(l) < 0)
		rc = -ENOMEM;
	if (rc > 0 && !(view_plan(l)->comm_time_s < before * (1 - LNS_IMPROVE_REL)))
		rc = 0; /* kept, but too little to start over */
	return rc;
}

/*
 * The kicks step: the local search (localsearch.h) from the incumbent at its
 * split, with l->kicks random kicks each followed by a descent (kept when
 * better): an iterated local search.  Its compound moves re-route many
 * flows of several pairs step by step (on `leafspine`, streams moved off a
 * leaf's uplinks to trees at other leaves and spines), where CBC, on a
 * neighbourhood that frees them all at once, finds no better point within
 * its node limit: the min-max objective leaves the LP of every node at the
 * bound.  Not for ring jobs (the local search does not see the rings'
 * loads).  1 if the best plan improved, 0 if not, -errno.
 */
static int kicks(struct lns *l)
{
	struct inart_search *s = l->s;
	struct inart_plan *p = NULL;
	struct inart_assign a = {0};
	struct inart_ls_opt lo = {(long)l->kicks * LNS_KICK_TRIES * (l->c->n_slots + l->c->n_trees),
				  s->lns.steps > 0 ? 0 : inart_now_s() + left_s(l),
				  s->opt->seed + (uint64_t)l->steps, l->kicks, NULL};
	double before = view_plan(l)->comm_time_s, tls = INFINITY;
	int rc = 0;

	l->kicks_done = 1;
	if (l->ring != NULL)
		return 0;
	p = inart_plan_clone(inc_plan(l));
	rc = p ? inart_assign_init(&a, l->c) : -ENOMEM;
	if (rc == 0 && inart_assign_from_plan(l->c, s->js, p, &a) < 0)
		goto out; /* not over the candidates: nothing to do */
	if (rc == 0)
		rc = inart_localsearch_run(s->t, s->js, l->c, p, &a, &lo, &tls);
	l->steps++;
	if (rc >= 0)
		rc = 0;
	if (rc == 0 && tls < before * (1 - LNS_IMPROVE_REL)) {
		rc = inart_assign_realize(l->c, &a, p);
		if (rc == 0)
			rc = offer_plan(l, p, "lns kicks");
	}
	if (rc > 0 && take_incumbent(l) < 0)
		rc = -ENOMEM;
	if (rc > 0 && !(view_plan(l)->comm_time_s < before * (1 - LNS_IMPROVE_REL)))
		rc = 0;
	inart_search_tick(s, "lns kicks");
out:
	inart_assign_free(&a);
	inart_plan_destroy(p);
	return rc;
}

/* Screen the contended switches by the JOINT LP with the incumbent's
 * configuration fixed elsewhere (small models): most promising first. */
static void order_switches(struct lns *l)
{
	struct inart_search *s = l->s;

	for (int i = 0; l->small && i < l->n_sw && !stop(l); i++) {
		struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
		struct inart_route_lp_result res = {0};

		nb_clear(l);
		free_switch(l, l->sw[i]);
		lp_ctx(l, &lo);
		lo.tree_fix = l->tree_fix;
		lo.warm_x = l->x;
		l->sw_key[l->sw[i]] =
		    inart_route_lp_solve(s->t, s->js, l->c, NULL, &lo, &res, NULL) == 0
			? res.objective_s
			: INFINITY;
		inart_route_lp_result_free(&res);
	}
	for (int i = 1; i < l->n_sw; i++) /* insertion sort by key */
		for (int k = i; k > 0 && l->sw_key[l->sw[k]] < l->sw_key[l->sw[k - 1]]; k--) {
			int tmp = l->sw[k];

			l->sw[k] = l->sw[k - 1];
			l->sw[k - 1] = tmp;
		}
}

/*
 * One pass over the neighbourhoods not yet proven for this incumbent, in
 * order; it returns at the first improvement (1), or 0 when none improved,
 * or -errno.  ALL runs last with the whole remaining time, on small models.
 */
static int pass(struct lns *l)
{
	if (!l->kicks_done && !stop(l)) {
		int rc = kicks(l);

		if (rc != 0)
			return rc;
	}
	for (int k = 0; k < l->n_done && !stop(l); k++) {
		enum nb_kind kind;
		double limit;
		int proven, rc;

		if (l->done[k] || (k == l->n_done - 1 && !l->small))
			continue;
		kind = nb_set(l, k);
		if (kind == NB_PAIR && (k - 1 - l->n_sw - l->s->js->n_jobs) / l->n_sw >=
					   (k - 1 - l->n_sw - l->s->js->n_jobs) % l->n_sw)
			continue; /* each unordered pair once */
		limit = nb_limit(l, kind == NB_ALL ? INFINITY : l->limit_s);
		if (limit <= 0) { /* too little time for CBC: the search ends */
			l->no_time = 1;
			return 0;
		}
		rc = solve_nb(l, kind, limit, &proven);
		if (rc != 0)
			return rc;
		l->done[k] = (char)proven;
		inart_search_tick(l->s, nb_names[kind]);
	}
	return 0;
}

/* The search from the incumbent taken by take_incumbent (rc 0). */
static int run(struct lns *l, int rc)
{
	double first = nb_limit(l, fmin(LNS_SUB_S, left_s(l) / 4));

	if (rc == 0 && l->small && first > 0) { /* a first look at the whole model: often enough */
		int proven;

		nb_set(l, l->n_done - 1);
		rc = solve_nb(l, NB_ALL, first, &proven);
		l->done[l->n_done - 1] = (char)proven;
	}
	if (rc >= 0)
		order_switches(l);
	while (rc >= 0 && !stop(l) &&
	       (!l->kicks_done || memchr(l->done, 0, (size_t)l->n_done) != NULL)) {
		rc = pass(l);
		if (rc == 0) { /* none improved: more for the unproven ones */
			l->limit_s *= 2;
			l->max_nodes *= 4;
			if (l->kicks < LNS_KICKS_MAX) {
				l->kicks *= 4;
				l->kicks_done = 0;
			}
		}
	}
	return rc;
}

int inart_lns_run(struct inart_search *s)
{
	struct lns l;
	int rc;

	if (s->cand->n_choices > LNS_MAX_CHOICES)
		return 0;
	rc = lns_init(&l, s, NULL);
	if (rc == 0 && take_incumbent(&l) < 0)
		goto out; /* the best plan is a baseline's, outside the candidates */
	rc = run(&l, rc);
out:
	lns_free(&l);
	if (rc == -ENOMEM)
		return inart_err_set(s->err, rc, "out of memory");
	return rc < 0 ? rc : 0;
}

int inart_lns_run_ring(struct inart_search *s, const struct inart_plan *base,
		       struct inart_lns_ring *r)
{
	struct lns l;
	int rc;

	r->bound_s = NAN;
	r->proven = 0;
	r->best_s = INFINITY;
	if (s->cand->n_choices > LNS_MAX_CHOICES)
		return 0;
	rc = lns_init(&l, s, r);
	if (rc == 0) {
		l.inc = inart_plan_clone(base);
		rc = l.inc ? inart_mixplan_build(s, base, r->ring, r->in, &l.view) : -ENOMEM;
	}
	if (rc == 0)
		rc = inart_search_offer(s, l.view, "ring jobs");
	if (rc >= 0)
		rc = take_incumbent(&l);
	if (rc >= 0)
		rc = run(&l, 0);
	if (l.view != NULL)
		r->best_s = l.view->comm_time_s;
	lns_free(&l);
	if (rc == -ENOMEM)
		return inart_err_set(s->err, rc, "out of memory");
	return rc < 0 ? rc : 0;
}
