/*
 * ringmix: ring all-reduce jobs in InArt's search and their bound (see
 * ringmix.h).
 *
 * Per subset S of ring jobs (bits of a mask): the best PS plan with S's jobs
 * replaced by rings (an evaluation), then, on models small enough for CBC
 * and while the ring-mix time lasts, CBC on the PS jobs' MILP with the rings'
 * loads fixed, from that plan's routes: a re-planned mixed plan and the
 * subset's bound at once.  Ownership: struct rm is local to one run.
 */
#include "cp/planner/ringmix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/slab.h"
#include "cp/model/assign.h"
#include "cp/model/evaluate.h"
#include "cp/planner/lns.h"
#include "cp/planner/mixplan.h"
#include "cp/planner/ring.h"
#include "cp/planner/route_lp.h"
#include "cp/planner/stream_bound.h"

/* CBC gets no subset with less than this many seconds left (the model build
 * alone takes a good part of it). */
#define RINGMIX_MIN_CBC_S 0.02
/* With a work budget (search.h: lns_steps) CBC's node limit on a subset,
 * so that the result does not depend on the machine's speed. */
#define RINGMIX_STEP_NODES 200
/* ... and its time limit then, a safety net only. */
#define RINGMIX_STEP_SAFETY_S 60.0

/* A subset of the jobs on the ring. */
struct subset {
	double bound; /* its best bound: the load bound, raised by CBC or the LP */
	enum inart_bound_source src;
	char done; /* CBC or the LP ran */
};

struct rm {
	struct inart_search *s;
	struct inart_plan *ring, *base; /* the ring candidate; the best PS plan */
	double *start_x, *start_split;	/* base as a MILP start (NULL: none) */
	void *block;			/* the scratch below (rm_lay_out) */
	double *x0, *split0;		/* room for the start (CBC models only) */
	double *load;			/* 3 (n_arcs + 1) scratch */
	char *in, *off;			/* per job: ring / PS job of the subset */
	int n_sub;			/* non-empty subsets */
	struct subset *sub;		/* per subset (mask - 1) */
};

static double deadline(const struct inart_search *s)
{
	return s->ring.deadline > 0 ? s->ring.deadline : s->deadline;
}

static void set_mask(struct rm *r, unsigned m)
{
	for (int j = 0; j < r->s->js->n_jobs; j++) {
		r->in[j] = (m >> j) & 1;
		r->off[j] = !r->in[j];
	}
}

/* The closed-form bound of subset in[] (set_mask): the load bound, raised by
 * the PS jobs' streams around the rings' loads (stream_bound.h); *src: load
 * or stream, whichever is larger.  Scratch: r->load (3 (n_arcs + 1)). */
static double subset_bound(struct rm *r, enum inart_bound_source *src)
{
	const struct inart_search *s = r->s;
	double *ring_arc = r->load + inart_topo_n_arcs(s->t) + 1, st;
	double b = inart_mixplan_load_bound(s->t, s->js, r->ring, r->in, r->load);

	memset(ring_arc, 0, sizeof(double) * (size_t)inart_topo_n_arcs(s->t));
	for (int j = 0; j < s->js->n_jobs; j++)
		if (r->in[j])
			inart_mixplan_job_load(s->t, s->js, r->ring, j, 1, ring_arc);
	st = inart_stream_bound(s->t, s->js, r->off, ring_arc);
	*src = INART_BOUND_LOAD;
	if (st > b) { /* < 0: out of memory, the load bound stands */
		b = st;
		*src = INART_BOUND_STREAM;
	}
	return b;
}

/* CBC can re-plan a subset's PS jobs: per-worker candidates (exact MILP),
 * a model it can start. */
static int cbc_ok(const struct inart_search *s)
{
	return s->no_groups && s->cand->n_choices <= RINGMIX_CBC_MAX_CHOICES;
}

/* Offer subset in[] of base mixed with rings; *t its time. */
static int try_mix(struct inart_search *s, const struct inart_plan *base,
		   const struct inart_plan *ring, const char *in, double *t)
{
	struct inart_plan *p = NULL;
	int rc = inart_mixplan_build(s, base, ring, in, &p);

	if (rc == 0) {
		*t = p->comm_time_s;
		rc = inart_search_offer(s, p, "ring jobs");
	}
	inart_plan_destroy(p);
	return rc < 0 ? rc : 0;
}

/* The plan of a subset MILP's solution res (PS jobs off[]), with in[]'s jobs
 * as rings, offered.  An error other than -ENOMEM offers nothing. */
static int offer_milp(struct rm *r, const struct inart_route_lp_result *res)
{
	struct inart_search *s = r->s;
	struct inart_plan *p = inart_plan_create(s->js, "inart");
	struct inart_assign a = {0};
	double t;
	int rc = p ? inart_assign_init(&a, s->cand) : -ENOMEM;

	for (int j = 0, off = 0; rc == 0 && j < s->js->n_jobs; j++)
		for (int i = 0; i < s->js->jobs[j].n_ps; i++, off++)
			p->jobs[j].split[i] = r->off[j] ? res->split[off] : 0;
	if (rc == 0) {
		inart_plan_clean_split(p, 1e-9);
		inart_assign_from_x(s->cand, res->x, &a);
		rc = inart_assign_realize(s->cand, &a, p);
	}
	if (rc == 0)
		rc = try_mix(s, p, r->ring, r->in, &t);
	inart_assign_free(&a);
	inart_plan_destroy(p);
	if (rc == -ENOMEM)
		return inart_err_set(s->err, rc, "out of memory");
	return 0; /* an invalid realization: nothing offered */
}

/*
 * Subset in[] (some PS jobs): CBC on the PS jobs' MILP with the rings' loads
 * fixed, from base's routes, for at most limit seconds (re-plans and bounds
 * the subset), or -- on models too large for CBC -- the JOINT LP of the same
 * (the bound only).  The subset's bound rises to what they prove.
 */
static int work(struct rm *r, unsigned m, double limit)
{
	struct inart_search *s = r->s;
	struct inart_route_lp_opt lo = {.mode = INART_LP_JOINT};
	struct inart_route_lp_result res = {0};
	size_t na = (size_t)inart_topo_n_arcs(s->t) + 1;
	double b = NAN;
	enum inart_bound_source src = INART_BOUND_LOAD;
	int rc;

	set_mask(r, m);
	inart_mixplan_links(s->t, s->js, r->ring, r->in, r->load + na, r->load + 2 * na);
	lo.job_on = r->off;
	lo.link_extra = r->load + 2 * na;
	lo.time_limit_s = limit;
	if (cbc_ok(s)) {
		lo.integer = 1;
		lo.start_x = r->start_x;
		lo.start_split = r->start_split;
		lo.max_nodes = s->lns.steps > 0 ? RINGMIX_STEP_NODES : 0;
		lo.cutoff_s = s->best->comm_time_s; /* only faster plans matter */
	} else {
		lo.warm_x = s->lp.warm;
	}
	rc = inart_route_lp_solve(s->t, s->js, s->cand, NULL, &lo, &res, s->err);
	if (rc == 0 && lo.integer) {
		b = res.bound_s;
		src = res.optimal ? INART_BOUND_CBC : INART_BOUND_CBC_LIMIT;
		rc = offer_milp(r, &res);
	} else if (rc == -ERANGE || (rc == -ETIMEDOUT && lo.integer)) {
		b = res.bound_s; /* nothing (found) faster than the best plan */
		src = rc == -ERANGE ? INART_BOUND_CBC : INART_BOUND_CBC_LIMIT;
		rc = 0;
	} else if (rc == 0) {
		b = res.bound_s;
		src = res.optimal ? INART_BOUND_LP : INART_BOUND_LP_PARTIAL;
	} else if (rc != -ENOMEM) {
		rc = 0; /* nothing in time: the load bound, valid, weaker */
	}
	inart_route_lp_result_free(&res);
	r->sub[m - 1].done = 1;
	if (b > r->sub[m - 1].bound) {
		r->sub[m - 1].bound = b;
		r->sub[m - 1].src = src;
	}
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc;
}

/*
 * Subset m (some PS jobs) on a model CBC can solve, from base's routes: the
 * large-neighbourhood search of lns.h over the PS jobs around the rings'
 * loads, for at most limit seconds -- it re-plans them neighbourhood by
 * neighbourhood (a tree-budget exchange at a time), which finds good mixed
 * plans much sooner than CBC on the whole subset, and its "all"
 * neighbourhood bounds the subset.  Without a start (base's routes are not
 * candidates), work() instead.
 */
static int improve(struct rm *r, unsigned m, double limit)
{
	struct inart_search *s = r->s;
	size_t na = (size_t)inart_topo_n_arcs(s->t) + 1;
	struct inart_lns_ring lr = {0};
	int rc;

	if (r->start_x == NULL || s->ring.cbc_s > 0) /* no start; `bound`: bounds */
		return work(r, m, limit);
	set_mask(r, m);
	inart_mixplan_links(s->t, s->js, r->ring, r->in, r->load + na, r->load + 2 * na);
	lr.in = r->in;
	lr.job_on = r->off;
	lr.link_extra = r->load + 2 * na;
	lr.ring = r->ring;
	lr.deadline = inart_budget_now(&s->budget) + limit;
	rc = inart_lns_run_ring(s, r->base, &lr);
	if (rc == -ENOENT)
		return work(r, m, limit);
	r->sub[m - 1].done = 1;
	if (rc == 0 && lr.bound_s > r->sub[m - 1].bound) {
		r->sub[m - 1].bound = lr.bound_s;
		r->sub[m - 1].src = lr.proven ? INART_BOUND_CBC : INART_BOUND_CBC_LIMIT;
	}
	return rc;
}

/* The start of the subset MILPs: base's routes (when they are candidates). */
static int make_start(struct rm *r)
{
	struct inart_search *s = r->s;
	struct inart_assign a = {0};
	int rc = inart_assign_init(&a, s->cand);

	if (rc == 0 && inart_assign_from_plan(s->cand, s->js, r->base, &a) == 0) {
		inart_assign_to_x(s->cand, &a, r->base, r->x0);
		for (int j = 0, off = 0; j < s->js->n_jobs; j++)
			for (int i = 0; i < s->js->jobs[j].n_ps; i++)
				r->split0[off++] = r->base->jobs[j].split[i];
		r->start_x = r->x0;
		r->start_split = r->split0;
	} /* else no start: CBC from scratch */
	inart_assign_free(&a);
	return rc < 0 ? -ENOMEM : 0;
}

/* The next subset to work on: the one with the lowest bound below the best
 * plan's time not yet worked on (0: none); *n_left: how many such. */
static unsigned next_subset(const struct rm *r, int *n_left)
{
	unsigned pick = 0, all = (unsigned)r->n_sub; /* the all-ring subset: exact */

	*n_left = 0;
	for (unsigned m = 1; m < all; m++) {
		if (r->sub[m - 1].done || !(r->sub[m - 1].bound < r->s->best->comm_time_s))
			continue;
		++*n_left;
		if (pick == 0 || r->sub[m - 1].bound < r->sub[pick - 1].bound)
			pick = m;
	}
	return pick;
}

/* Every non-empty subset: mixed with the best PS plan and load-bounded, then
 * worked on (CBC or the LP), lowest bound first, while the ring-mix time
 * lasts; *bound: the minimum over the subsets, *src its source. */
static int enumerate(struct rm *r, double *bound, enum inart_bound_source *src)
{
	struct inart_search *s = r->s;
	int rc = 0, n_left = 0;
	unsigned m;
	double t;

	for (m = 1; rc == 0 && m <= (unsigned)r->n_sub; m++) {
		set_mask(r, m);
		rc = try_mix(s, r->base, r->ring, r->in, &t);
		r->sub[m - 1].bound = subset_bound(r, &r->sub[m - 1].src);
	}
	if (!cbc_ok(s) && s->cand->n_choices > s->lp.max_choices)
		n_left = -1; /* no LP either: the load bounds */
	else if (rc == 0 && cbc_ok(s))
		rc = make_start(r);
	while (rc == 0 && n_left >= 0 && (m = next_subset(r, &n_left)) != 0) {
		double left = deadline(s) - inart_budget_now(&s->budget), lim = left / n_left;

		if (s->ring.cbc_s > 0)
			lim = fmin(lim, s->ring.cbc_s);
		if (s->lns.steps > 0) /* a work budget: the node limit binds */
			lim = RINGMIX_STEP_SAFETY_S;
		if (!(lim >= RINGMIX_MIN_CBC_S))
			break; /* out of time: the rest keep their load bounds */
		rc = improve(r, m, lim);
		inart_search_tick(s, "ring jobs");
	}
	*bound = INFINITY;
	for (m = 1; rc == 0 && m <= (unsigned)r->n_sub; m++)
		if (r->sub[m - 1].bound < *bound) {
			*bound = r->sub[m - 1].bound;
			*src = r->sub[m - 1].src;
		}
	return rc;
}

/* Job by job: add the job whose ring helps most, while one helps; then all. */
static int greedy(struct inart_search *s, const struct inart_plan *base,
		  const struct inart_plan *ring, char *in)
{
	int n = s->js->n_jobs, rc = 0, pick = 0;
	double cur = base->comm_time_s, t;

	memset(in, 0, (size_t)n);
	while (rc == 0 && pick >= 0) {
		double best = cur;

		pick = -1;
		for (int j = 0; rc == 0 && j < n; j++) {
			if (in[j])
				continue;
			in[j] = 1;
			rc = try_mix(s, base, ring, in, &t);
			in[j] = 0;
			if (rc == 0 && t < best) {
				best = t;
				pick = j;
			}
		}
		if (pick >= 0) {
			in[pick] = 1;
			cur = best;
		}
	}
	memset(in, 1, (size_t)n);
	return rc == 0 ? try_mix(s, base, ring, in, &t) : rc;
}

/* The scratch in one block (common/slab.h): load; per job in, off; per
 * subset sub; on models CBC solves, the room for the MILP start (x0 per
 * candidate choice, split0 per (job, PS)). */
static void rm_lay_out(void *obj, struct inart_slab *sl)
{
	struct rm *r = obj;
	const struct inart_search *s = r->s;
	size_t n = (size_t)s->js->n_jobs + 1, n_x = 0, n_pairs = 0;

	if (cbc_ok(s)) {
		n_x = (size_t)s->cand->n_choices;
		for (int j = 0; j < s->js->n_jobs; j++)
			n_pairs += (size_t)s->js->jobs[j].n_ps;
	}
	r->load = inart_slab_take(sl, 3 * ((size_t)inart_topo_n_arcs(s->t) + 1), sizeof(double));
	r->in = inart_slab_take(sl, n, sizeof(*r->in));
	r->off = inart_slab_take(sl, n, sizeof(*r->off));
	r->sub = inart_slab_take(sl, (size_t)r->n_sub + 1, sizeof(*r->sub));
	r->x0 = inart_slab_take(sl, n_x + 1, sizeof(*r->x0));
	r->split0 = inart_slab_take(sl, n_pairs + 1, sizeof(*r->split0));
}

/* The ring candidate and scratch; 1: no ring candidate (no plan with ring
 * jobs), 0, or -ENOMEM. */
static int rm_init(struct rm *r, struct inart_search *s)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->s = s;
	r->n_sub = s->js->n_jobs <= RINGMIX_ENUM_MAX_JOBS ? (1 << s->js->n_jobs) - 1 : 0;
	r->block = inart_slab_block(r, rm_lay_out);
	if (r->block == NULL)
		return -ENOMEM;
	rc = inart_ring_plan(s->t, s->js, s->paths, &r->ring, s->err);
	return rc == -ENOMEM ? rc : rc < 0 ? 1 : 0;
}

static void rm_free(struct rm *r)
{
	inart_plan_destroy(r->ring);
	inart_plan_destroy(r->base);
	free(r->block);
}

int inart_ringmix_wants_time(struct inart_search *s)
{
	struct rm r;
	enum inart_bound_source src;
	int rc, want = 0;

	if (s->best == NULL || !cbc_ok(s))
		return 0;
	rc = rm_init(&r, s);
	for (unsigned m = 1; rc == 0 && m < (unsigned)r.n_sub && !want; m++) {
		set_mask(&r, m);
		want = subset_bound(&r, &src) < s->best->comm_time_s;
	}
	rm_free(&r);
	return want;
}

int inart_ringmix_run(struct inart_search *s, double *ring_bound, enum inart_bound_source *src)
{
	struct rm r;
	size_t na = (size_t)inart_topo_n_arcs(s->t) + 1;
	int rc = rm_init(&r, s);

	*ring_bound = INFINITY;
	*src = INART_BOUND_LOAD;
	if (rc == 1) { /* no ring candidate: no plan with ring jobs */
		rc = 0;
		goto out;
	}
	if (rc == 0 && (r.base = inart_plan_clone(s->best)) == NULL)
		rc = -ENOMEM;
	if (rc == 0 && r.n_sub > 0) {
		rc = enumerate(&r, ring_bound, src);
	} else if (rc == 0) {
		rc = greedy(s, r.base, r.ring, r.in);
		if (rc == 0)
			*ring_bound = inart_mixplan_min_load_bound(s->t, s->js, r.ring, r.load,
								   r.load + na, r.load + 2 * na);
	}
out:
	rm_free(&r);
	return rc == -ENOMEM ? inart_err_set(s->err, rc, "out of memory") : rc;
}
