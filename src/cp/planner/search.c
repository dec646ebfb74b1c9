/*
 * search: the starts and phase iteration of the "inart" algorithm (see
 * search.h and docs/formulation.md, section 9).
 *
 * Determinism: every start is seeded; only the time limit (which starts 4-5
 * and the large-neighbourhood search run) depends on the machine's speed.
 * Starts 2 and 3 run phase 2 from a cold LP, exactly as `inart-even` and
 * `grid` do, so their first plans are those algorithms' plans.
 */
#include "cp/planner/search.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "cp/model/assign.h"
#include "cp/planner/baselines.h"
#include "cp/planner/lns.h"
#include "cp/planner/localsearch.h"
#include "cp/planner/ring.h"
#include "cp/planner/ringmix.h"
#include "cp/planner/rounding.h"
#include "cp/planner/route_lp.h"
#include "cp/planner/split.h"

/* Up to this many (worker, PS) pairs the candidates are per worker: the
 * JOINT MILP over them is exact, so the large-neighbourhood search can
 * re-solve parts of the plan exactly. */
#define NO_GROUPS_MAX_PAIRS 512
/* Above this many pairs the baselines' routes are not added to the
 * candidates: they would grow by a third (fat-tree k = 32: 255 000 to
 * 329 000 choices) where the LP is out of reach anyway; the guard covers the
 * baselines there. */
#define EXTRA_MAX_PAIRS 4096
/* The share of the time left after the starts that the ring-mix search gets
 * when it has work (ringmix.h: inart_ringmix_wants_time). */
#define RING_TIME_SHARE 0.5
/* With less than this many seconds of the budget left the JOINT LP is not
 * started (its model alone takes longer on large instances): the bound is
 * the access-link bound. */
#define BOUND_MIN_S 0.05
/* The candidates take about this many times the baselines' time (fat-tree
 * k=32: 5.2, k=16: 1.5, leafspine: 2.2): with less budget left than that
 * after the baselines the search has no candidates and returns the fastest
 * baseline's plan. */
#define CAND_PER_BASELINES 5.0
/* ... when that saves this many seconds at least (else the candidates are
 * built and ring mixing, which needs them, still evaluates its subsets). */
#define CAND_SKIP_MIN_S 0.1

static int big(const struct inart_search *s)
{
	return s->cand->n_choices > s->lp.max_choices;
}

static int run_baselines(struct inart_search *s)
{
	int rc = 0;

	for (int i = 0; i < INART_SEARCH_N_BASE && rc == 0; i++)
		if (s->starts.base[i] == NULL)
			rc = inart_baseline_table[i].fn(s->t, s->js, s->paths, &s->starts.base[i],
							s->err);
	return rc;
}

static int cand_stop(void *arg)
{
	return inart_budget_expired(arg);
}

int inart_search_cand(struct inart_search *s, int force_no_groups)
{
	struct inart_cand_opt co;
	const struct inart_plan *extra[INART_SEARCH_N_BASE + 1];
	long pairs = 0;
	int rc, n_extra = 0;
	double tb;

	if (s->cand != NULL)
		return 0;
	tb = inart_search_now(s);
	rc = run_baselines(s);
	if (rc < 0)
		return rc;
	tb = inart_search_now(s) - tb;
	s->starts.base_s = tb;
	if (!isinf(s->budget.deadline) && !s->reserved) {
		/* what follows the stages (ring-mix evaluations, the final
		 * evaluation, the guard) is kept out of their budget */
		s->reserved = 1;
		s->budget.deadline -= fmin(tb, (s->budget.deadline - s->budget.t0) / 4);
		s->deadline = fmin(s->deadline, s->budget.deadline);
	}
	if (CAND_PER_BASELINES * tb >= CAND_SKIP_MIN_S &&
	    inart_budget_remaining(&s->budget) < CAND_PER_BASELINES * tb) {
		/* the candidates would not fit: none, the baselines only */
		s->need_s = inart_search_now(s) - s->budget.t0 + 2 * CAND_PER_BASELINES * tb;
		return -ETIMEDOUT;
	}
	for (int j = 0; j < s->js->n_jobs; j++)
		pairs += (long)s->js->jobs[j].n_workers * s->js->jobs[j].n_ps;
	inart_cand_opt_default(&co);
	/* Auto: more candidates where the LP is cheap. */
	co.k_paths = s->opt->k_paths > 0 ? s->opt->k_paths : s->t->n_nodes < 512 ? 8 : 4;
	co.no_groups = s->no_groups = force_no_groups || pairs <= NO_GROUPS_MAX_PAIRS;
	if (s->no_groups && s->opt->detours != 0) {
		co.detours = s->opt->detours; /* -1: auto (cand.h) */
		if (s->opt->detours > 0)
			co.k_tree_paths = INART_CAND_DETOUR_TREE_PATHS;
	}
	if (s->opt->start != NULL)
		extra[n_extra++] = s->opt->start; /* the warm start's routes */
	for (int i = 0; i < INART_SEARCH_N_BASE && pairs <= EXTRA_MAX_PAIRS; i++)
		extra[n_extra++] = s->starts.base[i];
	co.extra = extra;
	co.n_extra = n_extra;
	if (!isinf(s->budget.deadline)) {
		co.stop = cand_stop;
		co.stop_arg = &s->budget;
	}
	rc = inart_cand_build(s->t, s->js, s->paths, &co, &s->cand, s->err);
	if (rc == -ETIMEDOUT) /* the time limit ended the build: a guess */
		s->need_s = inart_search_now(s) - s->budget.t0 + 2 * CAND_PER_BASELINES * tb;
	return rc;
}

/* Keep a copy of an LP solution as the next warm start. */
static void warm_keep(struct inart_search *s, const double *x)
{
	if (s->lp.warm == NULL)
		s->lp.warm = malloc(sizeof(double) * (size_t)(s->cand->n_choices + 1));
	if (s->lp.warm != NULL)
		memcpy(s->lp.warm, x, sizeof(double) * (size_t)s->cand->n_choices);
}

static void split_even(struct inart_plan *p)
{
	for (int j = 0; j < p->n_jobs; j++)
		for (int i = 0; i < p->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = 1.0 / p->jobs[j].n_ps;
}

/* ---------------------------------------------------------------------------
 * The greedy start for instances too large for the LP
 */

/* Among the choices first..first+n-1 on the path of `first` (its choice 0 is
 * the whole path to the PS), the one aggregating earliest at a tree that is
 * held or can be taken from the budget (taking it); else the PS choice. */
static int greedy_pick(const struct inart_cand *c, int first, int n, int *left, char *held)
{
	int best = first, best_len = INT32_MAX;

	for (int ch = first + 1; ch < first + n; ch++) {
		int t = c->choices[ch].tree, len;

		if (t < 0 || !inart_cand_prefix(c, ch, first))
			continue;
		len = inart_pathset_len(&c->paths, c->choices[ch].path);
		if (len < best_len && (held[t] || left[c->trees[t].sw] > 0)) {
			best = ch;
			best_len = len;
		}
	}
	if (best != first && !held[c->choices[best].tree]) {
		held[c->choices[best].tree] = 1;
		left[c->trees[c->choices[best].tree].sw]--;
	}
	return best;
}

static int cmp_share_desc(const void *pa, const void *pb, void *arg)
{
	const double *share = arg;
	int a = *(const int *)pa, b = *(const int *)pb;

	if (share[a] != share[b])
		return share[a] > share[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/*
 * A greedy integral x: every worker on the first candidate path of its
 * (group, PS), aggregated at the first INA switch on it that holds or can get
 * a tree of its (job, PS); every used tree sends to the next such switch
 * closer to the PS, else the PS.  Flows of PSs with larger shares claim tree
 * budgets first.
 */
static int greedy_x(const struct inart_search *s, const struct inart_plan *p, double *x)
{
	const struct inart_cand *c = s->cand;
	int *left = malloc(sizeof(int) * (size_t)s->t->n_nodes);
	char *held = calloc((size_t)c->n_trees + 1, 1);
	int *order = malloc(sizeof(int) * (size_t)(c->n_flows + 1));
	double *share = malloc(sizeof(double) * (size_t)(c->n_flows + 1));
	int rc = 0;

	if (left == NULL || held == NULL || order == NULL || share == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(x, 0, sizeof(double) * (size_t)c->n_choices);
	for (int v = 0; v < s->t->n_nodes; v++)
		left[v] = s->t->nodes[v].ina ? s->t->nodes[v].trees : 0;
	for (int f = 0; f < c->n_flows; f++) {
		order[f] = f;
		share[f] = p->jobs[c->flows[f].job].split[c->flows[f].ps_idx];
	}
	qsort_r(order, (size_t)c->n_flows, sizeof(int), cmp_share_desc, share);
	/* First the tree next to each PS: every stream of the pair can merge
	 * there, so it saves the most. */
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];

		if (ct->depth == 1 && p->jobs[ct->job].split[ct->ps_idx] > 0 && left[ct->sw] > 0) {
			held[t] = 1;
			left[ct->sw]--;
		}
	}
	for (int k = 0; k < c->n_flows; k++) {
		const struct inart_cand_flow *cf = &c->flows[order[k]];
		int ch = cf->first_choice;

		if (share[order[k]] > 0)
			ch = greedy_pick(c, cf->first_choice, cf->n_choices, left, held);
		x[ch] = 1;
	}
	/* Trees are sorted deepest first within a (job, PS): parents come later.
	 * Trees not held stay at 0 (u_t = 0). */
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];

		if (held[t])
			x[greedy_pick(c, ct->first_choice, ct->n_choices, left, held)] = 1;
	}
out:
	free(left);
	free(held);
	free(order);
	free(share);
	return rc;
}

int inart_search_warm_greedy(struct inart_search *s)
{
	struct inart_plan *even = inart_plan_create(s->js, "even");
	int rc = even ? inart_search_cand(s, 0) : -ENOMEM;

	if (rc == 0 && s->lp.warm == NULL) {
		s->lp.warm = malloc(sizeof(double) * (size_t)(s->cand->n_choices + 1));
		rc = s->lp.warm ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		split_even(even);
		rc = greedy_x(s, even, s->lp.warm);
	}
	inart_plan_destroy(even);
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc;
}

/* ---------------------------------------------------------------------------
 * Phase 2, the bound, the best plan
 */

int inart_search_phase2(struct inart_search *s, struct inart_plan *p, int warm)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_FIXED_SPLIT};
	struct inart_route_lp_result res = {0};
	struct inart_round_opt ro;
	struct inart_round_result rr;
	int rc = inart_search_cand(s, 0);

	lo.warm_x = warm ? s->lp.warm : NULL;
	if (rc == 0 && big(s)) {
		res.x = malloc(sizeof(double) * (size_t)(s->cand->n_choices + 1));
		rc = res.x ? greedy_x(s, p, res.x) : -ENOMEM;
		res.objective_s = NAN;
	} else if (rc == 0) {
		rc = inart_route_lp_solve(s->t, s->js, s->cand, p, &lo, &res, s->err);
	}
	if (rc == 0) {
		warm_keep(s, res.x);
		inart_round_opt_default(&ro);
		ro.trials = s->opt->trials;
		ro.seed = s->opt->seed;
		ro.budget = &s->budget;
		if (big(s)) {
			/* x is the greedy 0/1 assignment: one trial says it
			 * all; a single short local search keeps the time. */
			ro.trials = 1;
			ro.local_starts = 1;
			ro.local_passes = 1;
		}
		rc = inart_rounding_run(s->t, s->js, s->cand, res.x, p, s->ev, &ro, &rr, s->err);
		p->phase2_lp_s = res.objective_s;
		p->rounding_trials = ro.trials;
	}
	inart_route_lp_result_free(&res);
	return rc;
}

int inart_search_bound(struct inart_search *s, double *bound, enum inart_bound_source *src,
		       struct inart_plan *split_out)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
	struct inart_route_lp_result res = {0};
	int rc = inart_search_cand(s, 0);

	lo.warm_x = s->lp.warm;
	if (rc == 0 && big(s))
		lo.time_limit_s = s->lp.big_bound_s;
	if (rc == 0 && big(s) && !isinf(s->budget.deadline)) {
		/* within the run's budget (on large instances: with a time
		 * limit route_lp solves smaller ones differently, slower) */
		double left = inart_budget_remaining(&s->budget);

		lo.time_limit_s = lo.time_limit_s > 0 ? fmin(lo.time_limit_s, left) : left;
		if (left < BOUND_MIN_S)
			rc = -ETIMEDOUT; /* not started */
	}
	if (rc == 0)
		rc = inart_route_lp_solve(s->t, s->js, s->cand, NULL, &lo, &res, s->err);
	if (rc == -ETIMEDOUT && (lo.time_limit_s > 0 || !isinf(s->budget.deadline))) {
		/* no feasible LP point in time: the access-link bound, valid */
		*bound = inart_route_lp_access_bound(s->t, s->js, NULL);
		*src = INART_BOUND_LP_PARTIAL;
		return *bound > 0 ? 0 : rc;
	}
	if (rc == 0) {
		if (res.optimal)
			warm_keep(s, res.x);
		*bound = res.bound_s;
		*src = res.optimal ? INART_BOUND_LP : INART_BOUND_LP_PARTIAL;
		for (int j = 0, off = 0; split_out != NULL && j < s->js->n_jobs; j++)
			for (int i = 0; i < s->js->jobs[j].n_ps; i++)
				split_out->jobs[j].split[i] = res.split[off++];
	}
	inart_route_lp_result_free(&res);
	return rc;
}

/* ---------------------------------------------------------------------------
 * The phase iteration and the starts
 */

/*
 * The phase iteration from the split in p: phase 2 (routes for the split),
 * then phase 1 (split for the routes), while the evaluated time drops.  Every
 * plan is offered as the best.  first_cold: the first phase 2 from a cold LP.
 */
static int iterate(struct inart_search *s, struct inart_plan *p, int first_cold, const char *step)
{
	struct inart_split_opt so;
	struct inart_split_result sr;
	int rc = 0;

	inart_split_opt_default(&so);
	for (int round = 0; round < s->opt->max_rounds; round++) {
		double before = p->comm_time_s;

		if (round > 0 && inart_budget_expired(&s->budget))
			break;
		p->rounds = round + 1;
		rc = inart_search_phase2(s, p, !(first_cold && round == 0));
		if (rc == 0)
			rc = inart_search_evaluate(s, p);
		if (rc == 0)
			rc = inart_search_offer(s, p, step);
		if (rc < 0)
			break;
		if (round > 0 && !(p->comm_time_s < before * (1 - INART_SEARCH_IMPROVE_REL)))
			break; /* phase 2 did not improve on the last split */
		before = p->comm_time_s;
		if (inart_budget_expired(&s->budget))
			break;
		rc = inart_split_optimize(s->t, s->js, p, &so, &sr, s->err);
		if (rc < 0)
			break;
		inart_plan_clean_split(p, 1e-6);
		p->split_gap = sr.gap;
		rc = inart_search_evaluate(s, p);
		if (rc == 0)
			rc = inart_search_offer(s, p, step);
		if (rc < 0)
			break;
		if (!(p->comm_time_s < before * (1 - INART_SEARCH_IMPROVE_REL)))
			break; /* phase 1 did not improve */
	}
	return rc < 0 ? rc : 0;
}

/* A copy of p, pruned and evaluated, as the plan of a covered algorithm. */
static int keep_cover(struct inart_search *s, const struct inart_plan *p, struct inart_plan **to)
{
	struct inart_plan *c = inart_plan_clone(p);

	if (c == NULL)
		return inart_err_set(s->err, -ENOMEM, "out of memory");
	inart_plan_prune_zero(c, s->js);
	inart_plan_destroy(*to);
	*to = c;
	return inart_search_evaluate(s, c);
}

/*
 * A start from a fixed split (even, or one PS per job): phase 2 from a cold
 * LP (the plan of `inart-even` / `grid`, kept in *cover when not NULL), then
 * the phase iteration.
 */
static int start_split(struct inart_search *s, struct inart_plan *p, struct inart_plan **cover,
		       const char *step)
{
	int rc = inart_search_phase2(s, p, 0);

	p->rounds = 1;
	if (rc == 0)
		rc = inart_search_evaluate(s, p);
	if (rc == 0 && cover != NULL)
		rc = keep_cover(s, p, cover);
	if (rc == 0 && inart_search_offer(s, p, step) < 0)
		rc = -ENOMEM;
	if (rc == 0 && !inart_budget_expired(&s->budget)) /* phase 1 next */
		rc = iterate(s, p, 0, step);
	return rc;
}

/* The split of `grid`: per job the PS the `ps` baseline picks. */
static int grid_split(struct inart_search *s, struct inart_plan *p)
{
	struct inart_plan *b = NULL;
	int rc = inart_baseline_ps(s->t, s->js, s->paths, &b, s->err);

	for (int j = 0; rc == 0 && j < s->js->n_jobs; j++)
		memcpy(p->jobs[j].split, b->jobs[j].split,
		       sizeof(double) * (size_t)p->jobs[j].n_ps);
	inart_plan_destroy(b);
	return rc;
}

static int met(const struct inart_search *s)
{
	return inart_search_close(s, 1e-9);
}

static int time_left(const struct inart_search *s)
{
	return inart_search_now(s) < s->deadline && !inart_budget_expired(&s->budget);
}

static int spent(const struct inart_search *s)
{
	return inart_budget_expired(&s->budget);
}

/* Starts 1-3: the LP's shares, the even split, the grid split. */
static int required_starts(struct inart_search *s)
{
	struct inart_plan *p = inart_plan_create(s->js, "inart");
	int rc = p ? 0 : inart_err_set(s->err, -ENOMEM, "out of memory");

	if (rc == 0 && !big(s) && !spent(s)) {
		inart_search_stage(s, "joint LP");
		rc = inart_search_warm_greedy(s);
		if (rc == 0)
			rc = inart_search_bound(s, &s->lp_bound_s, &s->bound_src, p);
		if (rc == 0)
			s->bound_s = s->lp_bound_s;
		/* the LP's shares, unless the budget cut it */
		if (rc == 0 && inart_budget_remaining(&s->budget) >= BOUND_MIN_S) {
			inart_plan_clean_split(p, 1e-6);
			rc = iterate(s, p, 0, "start lp");
		}
	}
	/* Starts 2-3 (skipped once the bound is met: every candidate plan,
	 * theirs included, is at least the bound) */
	for (int k = 0; rc == 0 && k < 2 && !met(s) && !spent(s); k++) {
		inart_search_stage(s, k == 0 ? "start even" : "start grid");
		inart_plan_destroy(p);
		p = inart_plan_create(s->js, "inart");
		if (p == NULL)
			rc = inart_err_set(s->err, -ENOMEM, "out of memory");
		else if (k == 0)
			split_even(p);
		else
			rc = grid_split(s, p);
		if (rc == 0)
			rc = start_split(s, p, k == 0 ? &s->starts.even : &s->starts.grid,
					 k == 0 ? "start even" : "start grid");
	}
	inart_plan_destroy(p);
	return rc;
}

/* Start 4: job j on its PS i mod n_ps, for every i, while time is left. */
static int single_ps_starts(struct inart_search *s)
{
	int max_ps = 0, rc = 0;

	for (int j = 0; j < s->js->n_jobs; j++)
		max_ps = s->js->jobs[j].n_ps > max_ps ? s->js->jobs[j].n_ps : max_ps;
	for (int i = 0; i < max_ps && rc == 0 && time_left(s) && !met(s); i++) {
		struct inart_plan *p = inart_plan_create(s->js, "inart");

		if (p == NULL)
			return inart_err_set(s->err, -ENOMEM, "out of memory");
		for (int j = 0; j < s->js->n_jobs; j++)
			p->jobs[j].split[i % p->jobs[j].n_ps] = 1;
		rc = start_split(s, p, NULL, "start single PS");
		inart_plan_destroy(p);
	}
	return rc;
}

/* Start 5: the baselines' plans and the warm start (opt->start) if any
 * (their routes are candidates), improved by the local search. */
static int baseline_starts(struct inart_search *s)
{
	struct inart_assign a = {0};
	int rc = inart_assign_init(&a, s->cand);

	for (int i = 0; rc == 0 && i < INART_SEARCH_N_BASE + 1 && !met(s) && !spent(s); i++) {
		const struct inart_plan *from =
		    i < INART_SEARCH_N_BASE ? s->starts.base[i] : s->opt->start;
		struct inart_plan *b;
		struct inart_ls_opt lo = {(big(s) ? 4L : 64L) *
					      (s->cand->n_slots + s->cand->n_trees),
					  0, s->opt->seed + (uint64_t)i, 16, &s->budget};
		double tls;

		if (from == NULL)
			continue;
		b = inart_plan_clone(from);

		rc = b ? 0 : -ENOMEM;
		if (rc == 0 && inart_assign_from_plan(s->cand, s->js, b, &a) == 0) {
			rc = inart_localsearch_run(s->t, s->js, s->cand, b, &a, &lo, &tls);
			if (rc >= 0)
				rc = inart_assign_realize(s->cand, &a, b);
			if (rc == 0)
				rc = inart_search_evaluate(s, b);
			if (rc == 0 &&
			    inart_search_offer(s, b,
					       i < INART_SEARCH_N_BASE ? "start baseline"
								       : "start warm") < 0)
				rc = -ENOMEM;
		}
		inart_plan_destroy(b);
	}
	inart_assign_free(&a);
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc < 0 ? rc : 0;
}

/* The budget is spent before the search's first plan: say so at once, with
 * an estimate of what it needs (the time so far and as much again for its
 * first phase 2, a guess), through the progress hook. */
static void over_budget(struct inart_search *s)
{
	struct inart_planner_progress pr;

	if (s->opt->progress == NULL || s->best != NULL || s->said_over)
		return;
	s->said_over = 1;
	memset(&pr, 0, sizeof(pr));
	pr.elapsed_s = inart_search_now(s) - s->budget.t0;
	pr.best_s = NAN;
	pr.bound_s = NAN;
	pr.step = "over budget";
	pr.need_s = s->need_s > 0 ? s->need_s : 2 * pr.elapsed_s;
	s->opt->progress(&pr, s->opt->progress_arg);
}

/* No plan of the search's own within the budget: the fastest baseline's
 * (computed with the candidates, feasible and evaluated) or the ring
 * all-reduce's (unless no_ring). */
static int fallback(struct inart_search *s)
{
	int rc = 0;

	over_budget(s);
	for (int i = 0; rc >= 0 && i < INART_SEARCH_N_BASE; i++)
		if (s->starts.base[i] != NULL)
			rc = inart_search_offer(s, s->starts.base[i], "baseline (over budget)");
	/* the ring all-reduce, often far faster, when it fits (it takes about
	 * as long as the baselines together on fat-tree k=32) */
	if (rc >= 0 && !s->opt->no_ring &&
	    inart_budget_remaining(&s->budget) >= 2 * s->starts.base_s) {
		struct inart_plan *r = NULL;

		rc = inart_ring_plan(s->t, s->js, s->paths, &r, s->err);
		if (rc == 0)
			rc = inart_search_offer(s, r, "ring (over budget)");
		inart_plan_destroy(r);
	}
	if (rc >= 0 && s->best != NULL)
		rc = inart_plan_set_algorithm(s->best, "inart");
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc < 0 ? rc : 0;
}

int inart_search_run(struct inart_search *s, struct inart_plan **out)
{
	double ring_bound = NAN, end = s->deadline;
	enum inart_bound_source ring_src = INART_BOUND_NONE;
	int rc;

	inart_search_stage(s, "candidates");
	rc = inart_search_cand(s, 0);
	if (rc == -ETIMEDOUT && s->cand == NULL) {
		rc = fallback(s);
		if (rc == 0 && s->best == NULL)
			rc = inart_err_set(s->err, -EINVAL, "inart: no plan");
		if (rc < 0)
			return rc;
		goto done;
	}
	if (rc == 0 && spent(s))
		over_budget(s);
	if (rc == 0)
		rc = required_starts(s);
	if (rc == 0 && !met(s))
		rc = baseline_starts(s);
	if (rc == 0 && !met(s))
		rc = single_ps_starts(s);
	if (rc == 0 && big(s)) { /* time-limited: a valid bound */
		inart_search_stage(s, "joint LP bound");
		rc = inart_search_bound(s, &s->lp_bound_s, &s->bound_src, NULL);
		s->bound_s = s->lp_bound_s;
	}
	/* ring jobs may beat the PS plans: the large-neighbourhood search
	 * leaves the ring-mix search its share of the time */
	if (rc == 0 && !s->opt->no_ring && s->ring.deadline <= 0 && time_left(s) &&
	    inart_ringmix_wants_time(s))
		s->deadline =
		    inart_search_now(s) + (end - inart_search_now(s)) * (1 - RING_TIME_SHARE);
	if (rc == 0 && s->best != NULL && time_left(s) && !inart_search_close(s, 0.01))
		rc = inart_lns_run(s);
	s->deadline = end;
	if (rc == 0 && s->best == NULL && spent(s))
		rc = fallback(s);
	if (rc == 0 && s->best == NULL)
		rc = inart_err_set(s->err, -EINVAL, "inart: no plan");
	/* jobs as ring all-reduces: until the deadline (then evaluations only) */
	if (rc == 0 && !s->opt->no_ring)
		rc = inart_ringmix_run(s, &ring_bound, &ring_src);
	if (rc < 0)
		return rc;
done:
	inart_plan_prune_zero(s->best, s->js);
	rc = inart_search_evaluate(s, s->best);
	if (rc < 0)
		return rc;
	s->best->lp_bound_s = s->lp_bound_s;
	s->best->best_bound_s = s->bound_s;
	s->best->bound_source = s->bound_src;
	s->best->ring_bound_s = isinf(ring_bound) ? NAN : ring_bound; /* inf: no such plan */
	s->best->ring_bound_source = isnan(s->best->ring_bound_s) ? INART_BOUND_NONE : ring_src;
	*out = s->best;
	s->best = NULL;
	return 0;
}
