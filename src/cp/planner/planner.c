/*
 * planner: the algorithms behind inart_planner_run (see planner.h).
 *
 * "inart" is the search of search.h (starts, phase iteration, anytime
 * large-neighbourhood search), followed by the baseline guard: the plan is
 * compared with every baseline's -- ps, byteps, switchml, atp, inart-sp, and
 * the grid and inart-even plans the search computed as its starts -- and a
 * faster one replaces it, marked with its `origin` (never with
 * no_baseline_guard).  The search is built to need no guard; the guard makes
 * the promise unconditional.  "grid" and "inart-even" are phase 2 for a
 * fixed split; "milp" is CBC on the JOINT MILP over per-worker candidates,
 * reported with its status (optimal / time limit) and best bound; "lp" is the
 * JOINT LP bound; the baselines come from baselines.h and ring.h.
 *
 * Options are versioned by size (inart.h): the caller's struct is copied
 * over the defaults, at most `size` bytes.  The planner reads the monotonic
 * clock for planning times and the time limit only.
 */
#include "cp/planner/planner.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "cp/model/assign.h"
#include "cp/planner/baselines.h"
#include "cp/planner/bnb.h"
#include "cp/model/evaluate.h"
#include "cp/planner/ring.h"
#include "cp/planner/route_lp.h"
#include "cp/planner/search.h"

/* Improvements below this relative amount do not replace a plan. */
#define IMPROVE_REL 1e-6
/* MILP instances above this many choices are refused (CBC would not finish). */
#define MILP_MAX_CHOICES 20000
/* The branch-and-bound of "bound" keeps every column loaded: up to this many
 * choices; above, "bound" reports the search's bound. */
#define BNB_MAX_CHOICES 20000
/* "bound": InArt's search first, for at most this many seconds (and a
 * quarter of the time limit), for the cutoff. */
#define BOUND_SEARCH_S 4.0
/* "bound": CBC's limit on each ring subset's MILP (ringmix.h), at most this
 * and a quarter of the time limit; the ring-mix search ends at half of it. */
#define BOUND_RING_CBC_S 30.0
#define OPT_MIN_SIZE (offsetof(struct inart_planner_opt, seed))

static void fill_defaults(struct inart_planner_opt *o, size_t n)
{
	struct inart_planner_opt d;

	memset(&d, 0, sizeof(d));
	d.size = (uint32_t)sizeof(d);
	d.seed = 1;
	d.k_paths = 0;	/* auto */
	d.detours = -1; /* auto */
	d.trials = 32;
	d.max_rounds = 4;
	d.milp_time_limit_s = 30;
	d.time_limit_s = 4;
	/* size and reserved stay the caller's */
	memcpy((char *)o + OPT_MIN_SIZE, (char *)&d + OPT_MIN_SIZE, n - OPT_MIN_SIZE);
}

int inart_planner_opt_default(struct inart_planner_opt *o)
{
	if (o == NULL || o->size < OPT_MIN_SIZE)
		return -EINVAL;
	fill_defaults(o, o->size < sizeof(*o) ? o->size : sizeof(*o));
	return 0;
}

/* The complete options: defaults, then at most opt->size bytes of opt. */
static int full_opt(const struct inart_planner_opt *opt, struct inart_planner_opt *o,
		    struct inart_err *err)
{
	memset(o, 0, sizeof(*o));
	o->size = (uint32_t)sizeof(*o);
	fill_defaults(o, sizeof(*o));
	if (opt == NULL)
		return 0;
	if (opt->size < OPT_MIN_SIZE)
		return inart_err_set(err, -EINVAL,
				     "planner options: size %u is too small (set it to "
				     "sizeof(struct inart_planner_opt))",
				     (unsigned)opt->size);
	memcpy((char *)o + OPT_MIN_SIZE, (const char *)opt + OPT_MIN_SIZE,
	       (opt->size < sizeof(*o) ? opt->size : sizeof(*o)) - OPT_MIN_SIZE);
	if (o->k_paths < 0 || o->detours < -1 || o->trials < 1 || o->max_rounds < 1 ||
	    !(o->time_limit_s >= 0))
		return inart_err_set(err, -EINVAL,
				     "k_paths must be >= 0 (0: auto), detours >= -1 (-1: auto), "
				     "trials and max_rounds >= 1, "
				     "time_limit_s >= 0");
	return 0;
}

/* A baseline of baselines.h's registry, by name. */
static int algo_baseline(struct inart_search *s, const char *name, struct inart_plan **out)
{
	const struct inart_baseline_entry *b = inart_baseline_find(name);

	if (b == NULL)
		return inart_err_set(s->err, -EINVAL, "'%s' is not a baseline", name);
	return b->fn(s->t, s->js, s->paths, out, s->err);
}

static int algo_ring(struct inart_search *s, const char *name, struct inart_plan **out)
{
	return inart_ring_plan(s->t, s->js, s->paths, out, s->err);
}

/* Replace *p by b (a copy when keep_b) if b is faster; origin = name. */
static int guard_one(struct inart_plan **p, struct inart_plan *b, int keep_b, const char *name)
{
	struct inart_plan *q = b;

	if (!(b->comm_time_s < (*p)->comm_time_s * (1 - IMPROVE_REL))) {
		if (!keep_b)
			inart_plan_destroy(b);
		return 0;
	}
	if (keep_b && (q = inart_plan_clone(b)) == NULL)
		return -ENOMEM;
	q->lp_bound_s = (*p)->lp_bound_s;
	q->best_bound_s = (*p)->best_bound_s;
	q->bound_source = (*p)->bound_source;
	q->ring_bound_s = (*p)->ring_bound_s;
	q->ring_bound_source = (*p)->ring_bound_source;
	q->phase2_lp_s = (*p)->phase2_lp_s;
	q->rounds = (*p)->rounds;
	q->split_gap = (*p)->split_gap;
	q->rounding_trials = (*p)->rounding_trials;
	free(q->origin);
	if (inart_plan_set_algorithm(q, (*p)->algorithm) < 0 ||
	    (q->origin = strdup(name)) == NULL) {
		inart_plan_destroy(q);
		return -ENOMEM;
	}
	inart_plan_destroy(*p);
	*p = q;
	return 1;
}

/*
 * The baseline guard: every baseline (ps, byteps, switchml, atp, inart-sp)
 * and the plans of `grid` and `inart-even` (the search's starts 3 and 2);
 * the fastest one that beats *p replaces it.
 */
static int baseline_guard(struct inart_search *s, struct inart_plan **p)
{
	int rc = 0;

	for (int i = 0; i < INART_SEARCH_N_BASE && rc >= 0; i++)
		if (s->starts.base[i] != NULL)
			rc = guard_one(p, s->starts.base[i], 1, inart_baseline_table[i].name);
	if (rc >= 0 && s->starts.grid != NULL)
		rc = guard_one(p, s->starts.grid, 1, "grid");
	if (rc >= 0 && s->starts.even != NULL)
		rc = guard_one(p, s->starts.even, 1, "inart-even");
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc < 0 ? rc : 0;
}

static int algo_inart(struct inart_search *s, const char *name, struct inart_plan **out)
{
	int rc = inart_search_run(s, out);

	if (rc == 0 && !s->opt->no_baseline_guard)
		rc = baseline_guard(s, out);
	if (rc < 0) {
		inart_plan_destroy(*out);
		*out = NULL;
	}
	return rc;
}

static int algo_fixed_split(struct inart_search *s, const char *name, struct inart_plan **out)
{
	struct inart_plan *p = NULL;
	enum inart_bound_source src;
	int rc;

	if (strcmp(name, "grid") == 0) {
		/* One PS per job: the one the `ps` baseline picks. */
		rc = inart_baseline_ps(s->t, s->js, s->paths, &p, s->err);
		if (rc == 0)
			rc = inart_plan_set_algorithm(p, name);
	} else {
		p = inart_plan_create(s->js, name);
		rc = p ? 0 : -ENOMEM;
		for (int j = 0; rc == 0 && j < p->n_jobs; j++)
			for (int i = 0; i < p->jobs[j].n_ps; i++)
				p->jobs[j].split[i] = 1.0 / p->jobs[j].n_ps;
	}
	if (rc == 0)
		rc = inart_search_phase2(s, p, 0);
	if (rc == 0)
		rc = inart_search_bound(s, &p->lp_bound_s, &src, NULL);
	if (rc == 0) {
		p->best_bound_s = p->lp_bound_s;
		p->bound_source = src;
		inart_plan_prune_zero(p, s->js);
		rc = inart_search_evaluate(s, p);
	}
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int algo_milp(struct inart_search *s, const char *name, struct inart_plan **out)
{
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT, .integer = 1};
	struct inart_route_lp_result res = {0};
	struct inart_assign a = {0};
	struct inart_plan *p = NULL;
	int rc = inart_search_cand(s, 1);

	if (rc == 0 && s->cand->n_choices > MILP_MAX_CHOICES)
		rc = inart_err_set(s->err, -E2BIG,
				   "milp: %d candidate choices, more than the %d it accepts "
				   "(use it on small instances)",
				   s->cand->n_choices, MILP_MAX_CHOICES);
	lo.time_limit_s = s->opt->milp_time_limit_s;
	if (rc == 0)
		rc = inart_route_lp_solve(s->t, s->js, s->cand, NULL, &lo, &res, s->err);
	if (rc == 0) {
		p = inart_plan_create(s->js, "milp");
		rc = p ? inart_assign_init(&a, s->cand) : -ENOMEM;
	}
	for (int j = 0, off = 0; rc == 0 && j < s->js->n_jobs; j++)
		for (int i = 0; i < s->js->jobs[j].n_ps; i++)
			p->jobs[j].split[i] = res.split[off++];
	if (rc == 0) {
		inart_plan_clean_split(p, 1e-9);
		inart_assign_from_x(s->cand, res.x, &a);
		rc = inart_assign_realize(s->cand, &a, p);
	}
	if (rc == 0) {
		inart_plan_prune_zero(p, s->js);
		rc = inart_search_evaluate(s, p);
		p->best_bound_s = res.bound_s;
		p->bound_source = INART_BOUND_CBC;
		p->milp_status = res.optimal ? INART_MILP_OPTIMAL : INART_MILP_TIME_LIMIT;
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

static int algo_lp(struct inart_search *s, const char *name, struct inart_plan **out)
{
	struct inart_plan *p = inart_plan_create(s->js, "lp");
	enum inart_bound_source src;
	int rc = p ? inart_search_cand(s, 0) : -ENOMEM;

	/* the greedy routes as first columns; on large instances no time limit:
	 * this algorithm is the LP optimum */
	s->lp.big_bound_s = 0;
	if (rc == 0)
		rc = inart_search_warm_greedy(s);
	if (rc == 0)
		rc = inart_search_bound(s, &p->lp_bound_s, &src, NULL);
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc;
	}
	p->best_bound_s = p->lp_bound_s;
	p->bound_source = src;
	p->comm_time_s = p->lp_bound_s;
	*out = p;
	return 0;
}

/*
 * "bound": the best lower bound within the time limit.  InArt's search runs
 * first (a quarter of the limit, at most BOUND_SEARCH_S): its plan's time is
 * the branch-and-bound's cutoff and its bound (LP, or CBC's) a start; then
 * the branch-and-bound of bnb.h until the limit (over the plans without ring
 * jobs).  The plan has no routes: its time is the bound over InArt's whole
 * search space, min(best_bound_s, ring_bound_s), each labelled.
 */
static int algo_bound(struct inart_search *s, const char *name, struct inart_plan **out)
{
	struct inart_bnb_opt bo = {0};
	struct inart_bnb_result br;
	struct inart_plan *best = NULL, *p = inart_plan_create(s->js, "bound");
	double limit = s->opt->time_limit_s;
	int rc = p ? 0 : -ENOMEM, run = 0;

	s->deadline = s->budget.t0 + fmin(BOUND_SEARCH_S, limit / 4);
	s->ring.deadline = s->budget.t0 + limit / 2;
	s->ring.cbc_s = fmin(BOUND_RING_CBC_S, limit / 4);
	if (rc == 0)
		rc = inart_search_run(s, &best);
	if (rc == 0) {
		p->lp_bound_s = best->lp_bound_s;
		p->best_bound_s = best->best_bound_s;
		p->bound_source = best->bound_source;
		p->ring_bound_s = best->ring_bound_s;
		p->ring_bound_source = best->ring_bound_source;
		bo.cutoff_s = best->comm_time_s;
		bo.time_limit_s = s->budget.t0 + limit - inart_now_s();
		/* nothing to gain when the plan meets the bound */
		run = bo.time_limit_s > 0 && s->cand->n_choices <= BNB_MAX_CHOICES &&
		      !(best->comm_time_s <= best->best_bound_s * (1 + 1e-9));
	}
	if (rc == 0 && run)
		rc = inart_bnb_run(s->t, s->js, s->cand, &bo, &br, s->err);
	if (rc == 0 && run && br.bound_s > p->best_bound_s * (1 + 1e-12)) {
		p->best_bound_s = br.bound_s;
		p->bound_source = INART_BOUND_BNB;
	}
	inart_plan_destroy(best);
	if (rc < 0) {
		inart_plan_destroy(p);
		return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc;
	}
	/* over the whole search space: plans with ring jobs too */
	p->comm_time_s = fmin(p->best_bound_s, p->ring_bound_s);
	*out = p;
	return 0;
}

/*
 * The registry: every algorithm once, in display order -- its name, what
 * runs it, whether the time limit bounds it, whether it is another system's
 * (a baseline InArt's gains are measured against), and its line in `inart
 * plan --help` (NULL: not listed there).  inart_algorithms, the dispatch, the
 * budget and the help text all come from it; the baselines' entries run
 * baselines.h's registry by name (test_planner checks both agree).
 */
#define INART_ALGOS(X)                                                                             \
	X("inart", algo_inart, 1, 0,                                                               \
	  "phase-1 split (Lagrange multipliers) + phase-2 routes (LP + rounding)")                 \
	X("inart-even", algo_fixed_split, 0, 0, "even split + phase-2 routes")                     \
	X("inart-sp", algo_baseline, 0, 0, "phase-1 split + shortest paths with on-path INA")      \
	X("grid", algo_fixed_split, 0, 0, "one PS + phase-2 route selection")                      \
	X("ps", algo_baseline, 0, 1, "one PS, no INA, shortest paths")                             \
	X("byteps", algo_baseline, 0, 1, "all candidate PSs, even split, no INA")                  \
	X("switchml", algo_baseline, 0, 1, "one aggregation switch for all workers, one PS")       \
	X("atp", algo_baseline, 0, 1,                                                              \
	  "one PS, aggregation at each worker's first INA switch with budget")                     \
	X("ring", algo_ring, 0, 1, "ring all-reduce among each job's workers (no PS, no INA)")     \
	X("milp", algo_milp, 0, 0,                                                                 \
	  "exact integral optimum over the candidates by CBC (small inputs)")                      \
	X("lp", algo_lp, 0, 0, "the LP lower bound only (no routes)")                              \
	X("bound", algo_bound, 1, 0, NULL)

#define ALGO_NAME(name, fn, budgeted, theirs, summary) name,
#define ALGO_ENTRY(name, fn, budgeted, theirs, summary) {name, fn, budgeted, theirs, summary},

const char *const inart_algorithms[] = {INART_ALGOS(ALGO_NAME) NULL};

static const struct algo_entry {
	const char *name;
	int (*run)(struct inart_search *s, const char *name, struct inart_plan **out);
	int budgeted; /* the time limit bounds it (others run to the end) */
	int theirs;   /* another system's way (a baseline InArt is measured
		       * against), not one of InArt's own algorithms or bounds */
	const char *summary;
} algo_table[] = {INART_ALGOS(ALGO_ENTRY)};

#define N_ALGOS ((int)(sizeof(algo_table) / sizeof(algo_table[0])))

static const struct algo_entry *algo_find(const char *name)
{
	for (int i = 0; i < N_ALGOS; i++)
		if (strcmp(algo_table[i].name, name) == 0)
			return &algo_table[i];
	return NULL;
}

int inart_algorithm_known(const char *name)
{
	return name != NULL && algo_find(name) != NULL;
}

int inart_algorithm_theirs(const char *name)
{
	const struct algo_entry *a = name != NULL ? algo_find(name) : NULL;

	return a != NULL && a->theirs;
}

const char *inart_algorithm_summary(int i)
{
	return i >= 0 && i < N_ALGOS ? algo_table[i].summary : NULL;
}

int inart_planner_run(const char *algo, const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, struct inart_plan **out,
		      struct inart_err *err)
{
	struct inart_planner_opt o;
	struct inart_search s;
	struct inart_paths *paths = NULL;
	struct inart_evaluator *ev = NULL;
	struct inart_plan *p = NULL;
	const struct algo_entry *a = algo != NULL ? algo_find(algo) : NULL;
	int rc;

	if (a == NULL)
		return inart_err_set(err, -EINVAL, "unknown algorithm '%s'",
				     algo ? algo : "(null)");
	rc = full_opt(opt, &o, err);
	if (rc < 0)
		return rc;
	paths = inart_paths_create(t);
	ev = inart_evaluator_create(t, js);
	inart_search_init(&s, t, js, &o, paths, ev, err);
	if (paths == NULL || ev == NULL)
		rc = inart_err_set(err, -ENOMEM, "out of memory");
	/* the time limit bounds inart (and bound's search) only */
	if (!a->budgeted)
		s.budget.deadline = INFINITY;
	if (rc == 0)
		rc = a->run(&s, a->name, &p);
	if (rc == 0) {
		p->plan_time_s = inart_budget_elapsed(&s.budget);
		*out = p;
	}
	inart_search_free(&s);
	inart_evaluator_destroy(ev);
	inart_paths_destroy(paths);
	return rc;
}
