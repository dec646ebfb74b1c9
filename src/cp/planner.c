/*
 * planner: the algorithms behind inart_planner_run (see planner.h).
 *
 * "inart" starts from an even split and alternates phase 2 (route LP on the
 * candidate routes, randomized rounding) and phase 1 (the Lagrangian split
 * for the routes just chosen) while the evaluated communication time drops.
 * Its lower bound is the JOINT LP relaxation over the same candidates (valid
 * for every split).  Finally it computes the baselines and, if one of them is
 * faster, returns that plan instead (marked with its origin): the planner is
 * never worse than a baseline it can compute.
 *
 * The planner reads the monotonic clock only to report planning time.
 */
#include "planner.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baselines.h"
#include "evaluate.h"
#include "rounding.h"
#include "route_lp.h"
#include "split.h"

const char *const inart_algorithms[] = {
    "inart",	"inart-even", "inart-sp", "grid", "ps", "byteps",
    "switchml", "atp",	      "milp",	  "lp",	  NULL,
};

/* Improvements below this relative amount end the phase iteration. */
#define IMPROVE_REL 1e-6
/* MILP instances above this many choices are refused (CBC would not finish). */
#define MILP_MAX_CHOICES 20000
/* Above this many candidate choices the phase-2 LP is too slow for CLP here
 * (minutes at fat-tree k=32): phase 2 then starts the rounding's local search
 * from a greedy assignment instead of the LP solution, and the bound comes
 * from a time-limited LP. */
#define LP_MAX_CHOICES 100000
#define BIG_BOUND_TIME_S 8

void inart_planner_opt_default(struct inart_planner_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->k_paths = 0; /* auto */
	o->trials = 32;
	o->max_rounds = 4;
	o->milp_time_limit_s = 30;
}

int inart_algorithm_known(const char *name)
{
	for (int i = 0; inart_algorithms[i]; i++)
		if (strcmp(inart_algorithms[i], name) == 0)
			return 1;
	return 0;
}

struct run {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_planner_opt *opt;
	struct inart_paths *paths;
	struct inart_evaluator *ev;
	struct inart_cand *cand;
	double *warm; /* the last LP solution (cand->n_choices), a warm start */
	struct inart_err *err;
};

/* Keep a copy of an LP solution as the next warm start. */
static void warm_keep(struct run *r, const double *x)
{
	if (r->warm == NULL)
		r->warm = malloc(sizeof(double) * (size_t)(r->cand->n_choices + 1));
	if (r->warm != NULL)
		memcpy(r->warm, x, sizeof(double) * (size_t)r->cand->n_choices);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cand_get(struct run *r, int no_groups)
{
	struct inart_cand_opt co;

	if (r->cand != NULL)
		return 0;
	inart_cand_opt_default(&co);
	/* Auto: more candidates where the LP is cheap. */
	co.k_paths = r->opt->k_paths > 0 ? r->opt->k_paths : r->t->n_nodes < 512 ? 8 : 4;
	co.no_groups = no_groups;
	return inart_cand_build(r->t, r->js, r->paths, &co, &r->cand, r->err);
}

static int evaluate_into(struct run *r, struct inart_plan *p)
{
	struct inart_eval e;
	int rc = inart_evaluator_run(r->ev, p, &e, r->err);

	if (rc == 0) {
		p->comm_time_s = e.comm_time_s;
		p->push_time_s = e.push_time_s;
		p->pull_time_s = e.pull_time_s;
	}
	return rc;
}

static void split_even(struct inart_plan *p)
{
	for (int j = 0; j < p->n_jobs; j++)
		for (int i = 0; i < p->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = 1.0 / p->jobs[j].n_ps;
}

/* 1 if the (truncated) path of choice a is a prefix of that of choice b. */
static int path_prefix(const struct inart_cand *c, int a, int b)
{
	int la = inart_pathset_len(&c->paths, c->choices[a].path);
	int lb = inart_pathset_len(&c->paths, c->choices[b].path);

	return la <= lb && memcmp(inart_pathset_path(&c->paths, c->choices[a].path) + 1,
				  inart_pathset_path(&c->paths, c->choices[b].path) + 1,
				  sizeof(int) * (size_t)(la - 1)) == 0;
}

/* Among the choices first..first+n-1 on the path of `first` (its choice 0 is
 * the whole path to the PS), the one aggregating earliest at a tree that is
 * held or can be taken from the budget (taking it); else the PS choice. */
static int greedy_pick(const struct inart_cand *c, int first, int n, int *left, char *held)
{
	int best = first, best_len = INT32_MAX;

	for (int ch = first + 1; ch < first + n; ch++) {
		int t = c->choices[ch].tree, len;

		if (t < 0 || !path_prefix(c, ch, first))
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
 * A greedy integral x for instances too large for the LP: every worker on the
 * first candidate path of its (group, PS), aggregated at the first INA switch
 * on it that holds or can get a tree of its (job, PS); every used tree sends
 * to the next such switch closer to the PS, else the PS.  Flows of PSs with
 * larger shares claim tree budgets first.
 */
static int greedy_x(const struct run *r, const struct inart_plan *p, double *x)
{
	const struct inart_cand *c = r->cand;
	int *left = malloc(sizeof(int) * (size_t)r->t->n_nodes);
	char *held = calloc((size_t)c->n_trees + 1, 1);
	int *order = malloc(sizeof(int) * (size_t)(c->n_flows + 1));
	double *share = malloc(sizeof(double) * (size_t)(c->n_flows + 1));
	int rc = 0;

	if (left == NULL || held == NULL || order == NULL || share == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(x, 0, sizeof(double) * (size_t)c->n_choices);
	for (int v = 0; v < r->t->n_nodes; v++)
		left[v] = r->t->nodes[v].ina ? r->t->nodes[v].trees : 0;
	for (int f = 0; f < c->n_flows; f++) {
		order[f] = f;
		share[f] = p->jobs[c->flows[f].job].split[c->flows[f].ps_idx];
	}
	qsort_r(order, (size_t)c->n_flows, sizeof(int), cmp_share_desc, share);
	for (int k = 0; k < c->n_flows; k++) {
		const struct inart_cand_flow *cf = &c->flows[order[k]];
		int ch = cf->first_choice;

		if (share[order[k]] > 0)
			ch = greedy_pick(c, cf->first_choice, cf->n_choices, left, held);
		x[ch] = 1;
	}
	/* Trees are sorted deepest first within a (job, PS): parents come later. */
	for (int t = 0; t < c->n_trees; t++) {
		const struct inart_cand_tree *ct = &c->trees[t];
		int ch = ct->first_choice;

		if (held[t])
			ch = greedy_pick(c, ct->first_choice, ct->n_choices, left, held);
		x[ch] = 1;
	}
out:
	free(left);
	free(held);
	free(order);
	free(share);
	return rc;
}

/* Phase 2 for the split in p: LP, then rounding; p gets the routes. */
static int phase2(struct run *r, struct inart_plan *p)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_FIXED_SPLIT};
	struct inart_route_lp_result res = {0};
	struct inart_round_opt ro;
	struct inart_round_result rr;
	int rc = cand_get(r, 0);

	lo.warm_x = r->warm;
	if (rc == 0 && r->cand->n_choices > LP_MAX_CHOICES) {
		res.x = malloc(sizeof(double) * (size_t)(r->cand->n_choices + 1));
		rc = res.x ? greedy_x(r, p, res.x) : -ENOMEM;
		res.objective_s = NAN;
	} else if (rc == 0) {
		rc = inart_route_lp_solve(r->t, r->js, r->cand, p, &lo, &res, r->err);
	}
	if (rc == 0) {
		warm_keep(r, res.x);
		inart_round_opt_default(&ro);
		ro.trials = r->opt->trials;
		ro.seed = r->opt->seed;
		if (r->cand->n_choices > LP_MAX_CHOICES) {
			/* x is the greedy 0/1 assignment: one trial says it
			 * all; a single short local search keeps the time. */
			ro.trials = 1;
			ro.local_starts = 1;
			ro.local_passes = 1;
		}
		rc = inart_rounding_run(r->t, r->js, r->cand, res.x, p, r->ev, &ro, &rr, r->err);
		p->phase2_lp_s = res.objective_s;
		p->rounding_trials = ro.trials;
	}
	inart_route_lp_result_free(&res);
	return rc;
}

/* The JOINT LP relaxation over the candidates: a lower bound for any split.
 * If split_out is not NULL, the LP's shares are copied into it (the shape of
 * a plan's split). */
static int joint_bound(struct run *r, double *bound, struct inart_plan *split_out)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
	struct inart_route_lp_result res = {0};
	int rc = cand_get(r, 0);

	lo.warm_x = r->warm;
	if (rc == 0 && r->cand->n_choices > LP_MAX_CHOICES)
		lo.time_limit_s = BIG_BOUND_TIME_S;
	if (rc == 0)
		rc = inart_route_lp_solve(r->t, r->js, r->cand, NULL, &lo, &res, r->err);
	if (rc == 0) {
		if (res.optimal)
			warm_keep(r, res.x);
		*bound = res.bound_s;
		for (int j = 0, off = 0; split_out != NULL && j < r->js->n_jobs; j++)
			for (int i = 0; i < r->js->jobs[j].n_ps; i++)
				split_out->jobs[j].split[i] = res.split[off++];
	}
	inart_route_lp_result_free(&res);
	return rc;
}

/* Warm start for a first LP: the greedy routes for the even split (the
 * JOINT LP would otherwise solve the FIXED LP at the even split first). */
static int warm_greedy(struct run *r)
{
	struct inart_plan *even = inart_plan_create(r->js, "even");
	int rc = even ? cand_get(r, 0) : -ENOMEM;

	if (rc == 0 && r->warm == NULL) {
		r->warm = malloc(sizeof(double) * (size_t)(r->cand->n_choices + 1));
		rc = r->warm ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		split_even(even);
		rc = greedy_x(r, even, r->warm);
	}
	inart_plan_destroy(even);
	return rc < 0 ? inart_err_set(r->err, rc, "out of memory") : 0;
}

static int keep_if_better(struct inart_plan **best, const struct inart_plan *p)
{
	struct inart_plan *c;

	if (*best != NULL && !(p->comm_time_s < (*best)->comm_time_s * (1 - IMPROVE_REL)))
		return 0;
	c = inart_plan_clone(p);
	if (c == NULL)
		return -ENOMEM;
	inart_plan_destroy(*best);
	*best = c;
	return 1;
}

static int run_baseline(struct run *r, const char *algo, struct inart_plan **out)
{
	if (strcmp(algo, "ps") == 0)
		return inart_baseline_ps(r->t, r->js, r->paths, out, r->err);
	if (strcmp(algo, "byteps") == 0)
		return inart_baseline_byteps(r->t, r->js, r->paths, out, r->err);
	if (strcmp(algo, "switchml") == 0)
		return inart_baseline_switchml(r->t, r->js, r->paths, out, r->err);
	if (strcmp(algo, "atp") == 0)
		return inart_baseline_atp(r->t, r->js, r->paths, out, r->err);
	return inart_baseline_inart_sp(r->t, r->js, r->paths, out, r->err);
}

/* Replace *p by the fastest baseline if that one is faster. */
static int baseline_guard(struct run *r, struct inart_plan **p)
{
	static const char *const names[] = {"ps", "byteps", "switchml", "atp", "inart-sp"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct inart_plan *b = NULL;
		int rc = run_baseline(r, names[i], &b);

		if (rc < 0)
			return rc;
		if (b->comm_time_s < (*p)->comm_time_s * (1 - IMPROVE_REL)) {
			b->lp_bound_s = (*p)->lp_bound_s;
			b->phase2_lp_s = (*p)->phase2_lp_s;
			b->rounds = (*p)->rounds;
			b->split_gap = (*p)->split_gap;
			b->rounding_trials = (*p)->rounding_trials;
			if (inart_plan_set_algorithm(b, (*p)->algorithm) < 0 ||
			    (b->origin = strdup(names[i])) == NULL) {
				inart_plan_destroy(b);
				return -ENOMEM;
			}
			inart_plan_destroy(*p);
			*p = b;
		} else {
			inart_plan_destroy(b);
		}
	}
	return 0;
}

/*
 * The phase iteration from the split in p: phase 2 (routes for the split),
 * then phase 1 (split for the routes), while the evaluated time drops.  The
 * best plan seen is kept in *best (compared with what it already holds).
 */
static int iterate(struct run *r, struct inart_plan *p, struct inart_plan **best)
{
	struct inart_split_opt so;
	struct inart_split_result sr;
	int rc = 0;

	inart_split_opt_default(&so);
	for (int round = 0; round < r->opt->max_rounds; round++) {
		double before = p->comm_time_s;

		p->rounds = round + 1;
		rc = phase2(r, p);
		if (rc == 0)
			rc = evaluate_into(r, p);
		if (rc == 0)
			rc = keep_if_better(best, p);
		if (rc < 0)
			break;
		if (round > 0 && !(p->comm_time_s < before * (1 - IMPROVE_REL)))
			break; /* phase 2 did not improve on the last split */
		before = p->comm_time_s;
		rc = inart_split_optimize(r->t, r->js, p, &so, &sr, r->err);
		if (rc < 0)
			break;
		inart_plan_clean_split(p, 1e-6);
		p->split_gap = sr.gap;
		rc = evaluate_into(r, p);
		if (rc == 0)
			rc = keep_if_better(best, p);
		if (rc < 0)
			break;
		if (!(p->comm_time_s < before * (1 - IMPROVE_REL)))
			break; /* phase 1 did not improve */
	}
	return rc < 0 ? rc : 0;
}

/*
 * InArt: the phase iteration from two starting splits -- the shares of the
 * JOINT LP relaxation (which also gives the lower bound) and the even split --
 * keeping the best plan; then the baseline guard.
 */
static int algo_inart(struct run *r, struct inart_plan **out)
{
	struct inart_plan *p = inart_plan_create(r->js, "inart"), *best = NULL;
	double bound = NAN;
	int rc = p ? cand_get(r, 0) : -ENOMEM;
	int big = rc == 0 && r->cand->n_choices > LP_MAX_CHOICES;

	/* Start 1 (not for instances too large for the LP): the JOINT LP's
	 * shares; the LP also gives the lower bound. */
	if (rc == 0 && !big) {
		rc = warm_greedy(r);
		if (rc == 0)
			rc = joint_bound(r, &bound, p);
		if (rc == 0) {
			inart_plan_clean_split(p, 1e-6);
			rc = iterate(r, p, &best);
		}
	}
	/* Start 2: the even split, unless start 1 already met the bound. */
	if (rc == 0 && !(best != NULL && best->comm_time_s <= bound * (1 + 1e-9))) {
		inart_plan_destroy(p);
		p = inart_plan_create(r->js, "inart");
		rc = p ? 0 : -ENOMEM;
		if (rc == 0) {
			split_even(p);
			rc = iterate(r, p, &best);
		}
	}
	if (rc == 0 && big)
		rc = joint_bound(r, &bound, NULL); /* time-limited: a valid bound */
	if (rc == 0 && best == NULL)
		rc = inart_err_set(r->err, -EINVAL, "inart: no plan");
	if (rc == 0) {
		best->lp_bound_s = bound;
		inart_plan_prune_zero(best, r->js);
		rc = evaluate_into(r, best);
	}
	if (rc == 0 && !r->opt->no_baseline_guard)
		rc = baseline_guard(r, &best);
	inart_plan_destroy(p);
	if (rc < 0) {
		inart_plan_destroy(best);
		return rc;
	}
	*out = best;
	return 0;
}

static int algo_fixed_split(struct run *r, const char *name, struct inart_plan **out)
{
	struct inart_plan *p = NULL;
	int rc;

	if (strcmp(name, "grid") == 0) {
		/* One PS per job: the one the `ps` baseline picks. */
		rc = inart_baseline_ps(r->t, r->js, r->paths, &p, r->err);
		if (rc == 0)
			rc = inart_plan_set_algorithm(p, name);
	} else {
		p = inart_plan_create(r->js, name);
		rc = p ? 0 : -ENOMEM;
		if (rc == 0)
			split_even(p);
	}
	if (rc == 0)
		rc = phase2(r, p);
	if (rc == 0)
		rc = joint_bound(r, &p->lp_bound_s, NULL);
	if (rc == 0) {
		inart_plan_prune_zero(p, r->js);
		rc = evaluate_into(r, p);
	}
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Pick, per flow slot and tree, the choice with the largest value. */
static void assign_argmax(const struct inart_cand *c, const double *x, struct inart_assign *a)
{
	for (int f = 0; f < c->n_flows; f++) {
		const struct inart_cand_flow *cf = &c->flows[f];
		int m = c->groups[cf->group].n_members, k = 0;
		/* Distribute the group's members over choices by their counts. */
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

static int algo_milp(struct run *r, struct inart_plan **out)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT, .integer = 1};
	struct inart_route_lp_result res = {0};
	struct inart_assign a = {0};
	struct inart_plan *p = NULL;
	int rc = cand_get(r, 1);

	if (rc == 0 && r->cand->n_choices > MILP_MAX_CHOICES)
		rc = inart_err_set(r->err, -E2BIG,
				   "milp: %d candidate choices, more than the %d it accepts "
				   "(use it on small instances)",
				   r->cand->n_choices, MILP_MAX_CHOICES);
	lo.time_limit_s = r->opt->milp_time_limit_s;
	if (rc == 0)
		rc = inart_route_lp_solve(r->t, r->js, r->cand, NULL, &lo, &res, r->err);
	if (rc == 0) {
		p = inart_plan_create(r->js, "milp");
		rc = p ? inart_assign_init(&a, r->cand) : -ENOMEM;
	}
	if (rc == 0) {
		int off = 0;

		for (int j = 0; j < r->js->n_jobs; j++)
			for (int i = 0; i < r->js->jobs[j].n_ps; i++)
				p->jobs[j].split[i] = res.split[off++];
		inart_plan_clean_split(p, 1e-9);
		assign_argmax(r->cand, res.x, &a);
		rc = inart_cand_realize(r->cand, &a, p);
	}
	if (rc == 0) {
		inart_plan_prune_zero(p, r->js);
		rc = evaluate_into(r, p);
		p->lp_bound_s = res.bound_s;
	}
	inart_assign_free(&a);
	inart_route_lp_result_free(&res);
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int algo_lp(struct run *r, struct inart_plan **out)
{
	struct inart_plan *p = inart_plan_create(r->js, "lp");
	int rc = p ? 0 : -ENOMEM;

	if (rc == 0 && cand_get(r, 0) == 0 && r->cand->n_choices <= LP_MAX_CHOICES)
		rc = warm_greedy(r);
	if (rc == 0)
		rc = joint_bound(r, &p->lp_bound_s, NULL);

	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	p->comm_time_s = p->lp_bound_s;
	*out = p;
	return 0;
}

int inart_planner_run(const char *algo, const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, struct inart_plan **out,
		      struct inart_err *err)
{
	struct inart_planner_opt dflt;
	struct run r = {.t = t, .js = js, .err = err};
	struct inart_plan *p = NULL;
	double t0 = now_s();
	int rc;

	if (opt == NULL) {
		inart_planner_opt_default(&dflt);
		opt = &dflt;
	}
	r.opt = opt;
	if (!inart_algorithm_known(algo))
		return inart_err_set(err, -EINVAL, "unknown algorithm '%s'", algo);
	if (opt->k_paths < 0 || opt->trials < 1 || opt->max_rounds < 1)
		return inart_err_set(err, -EINVAL,
				     "k_paths must be >= 0 (0: auto), trials and max_rounds >= 1");
	r.paths = inart_paths_create(t);
	r.ev = inart_evaluator_create(t, js);
	if (r.paths == NULL || r.ev == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (strcmp(algo, "inart") == 0)
		rc = algo_inart(&r, &p);
	else if (strcmp(algo, "inart-even") == 0 || strcmp(algo, "grid") == 0)
		rc = algo_fixed_split(&r, algo, &p);
	else if (strcmp(algo, "milp") == 0)
		rc = algo_milp(&r, &p);
	else if (strcmp(algo, "lp") == 0)
		rc = algo_lp(&r, &p);
	else
		rc = run_baseline(&r, algo, &p);
	if (rc == 0) {
		p->plan_time_s = now_s() - t0;
		*out = p;
	}
out:
	free(r.warm);
	inart_cand_destroy(r.cand);
	inart_evaluator_destroy(r.ev);
	inart_paths_destroy(r.paths);
	return rc;
}
