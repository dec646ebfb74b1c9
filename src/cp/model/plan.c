/* plan: see plan.h. */
#include "cp/model/plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/slab.h"

/* The jobs of p (p->n_jobs), each with its split of n_ps shares (+ 1, all
 * 0; n_ps as in js, or when js is NULL as in like) in one block from
 * p->jobs (common/slab.h): free(p->jobs) frees the splits too. */
static void jobs_lay_out(struct inart_plan *p, const struct inart_jobs *js,
			 const struct inart_plan *like, struct inart_slab *s)
{
	p->jobs = inart_slab_take(s, (size_t)p->n_jobs + 1, sizeof(*p->jobs));
	for (int j = 0; j < p->n_jobs; j++) {
		int n_ps = js != NULL ? js->jobs[j].n_ps : like->jobs[j].n_ps;
		double *split = inart_slab_take(s, (size_t)n_ps + 1, sizeof(*split));

		if (p->jobs != NULL)
			p->jobs[j] = (struct inart_job_plan){.n_ps = n_ps, .split = split};
	}
}

/* 0, or -ENOMEM with p->jobs NULL. */
static int jobs_alloc(struct inart_plan *p, const struct inart_jobs *js,
		      const struct inart_plan *like)
{
	struct inart_slab s = INART_SLAB_INIT;

	jobs_lay_out(p, js, like, &s);
	if (inart_slab_alloc(&s) < 0)
		return -ENOMEM;
	jobs_lay_out(p, js, like, &s);
	return 0;
}

struct inart_plan *inart_plan_create(const struct inart_jobs *js, const char *algorithm)
{
	struct inart_plan *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->comm_time_s = p->push_time_s = p->pull_time_s = NAN;
	p->lp_bound_s = p->split_gap = p->phase2_lp_s = p->best_bound_s = NAN;
	p->ring_bound_s = NAN;
	p->plan_time_s = 0;
	p->n_jobs = js->n_jobs;
	p->algorithm = strdup(algorithm ? algorithm : "");
	if (p->algorithm == NULL || jobs_alloc(p, js, NULL) < 0) {
		inart_plan_destroy(p);
		return inart_null_errno(ENOMEM);
	}
	return p;
}

void inart_plan_clear_routes(struct inart_plan *p, int j)
{
	struct inart_job_plan *jp = &p->jobs[j];

	for (int i = 0; i < jp->n_flows; i++)
		free(jp->flows[i].path);
	for (int i = 0; i < jp->n_trees; i++)
		free(jp->trees[i].path);
	for (int i = 0; i < jp->n_ring; i++)
		free(jp->ring[i].path);
	jp->n_flows = 0;
	jp->n_trees = 0;
	jp->n_ring = 0;
}

void inart_plan_destroy(struct inart_plan *p)
{
	if (p == NULL)
		return;
	for (int j = 0; j < p->n_jobs && p->jobs; j++) {
		inart_plan_clear_routes(p, j);
		free(p->jobs[j].flows);
		free(p->jobs[j].trees);
		free(p->jobs[j].ring);
	}
	free(p->jobs); /* and the splits */
	free(p->algorithm);
	free(p->origin);
	free(p);
}

int inart_plan_set_algorithm(struct inart_plan *p, const char *algorithm)
{
	char *s = strdup(algorithm);

	if (s == NULL)
		return -ENOMEM;
	free(p->algorithm);
	p->algorithm = s;
	return 0;
}

static int *dup_path(const int *path, int n)
{
	int *r = malloc(sizeof(*r) * (size_t)(n > 0 ? n : 1));

	if (r != NULL && n > 0)
		memcpy(r, path, sizeof(*r) * (size_t)n);
	return r;
}

/* Append a flow (kind 0: worker, PS, aggregation point), a tree (kind 1:
 * switch, PS, parent) or a ring hop (kind 2: no nodes) with a copy of its
 * path.  0 or -ENOMEM. */
static int add_route(struct inart_plan *p, int j, int kind, int a, int b, int c, const int *path,
		     int n_path)
{
	struct inart_job_plan *jp = &p->jobs[j];
	int *cp, rc;

	if (kind == 2)
		rc =
		    inart_grow((void **)&jp->ring, &jp->cap_ring, jp->n_ring, sizeof(*jp->ring), 8);
	else if (kind == 1)
		rc = inart_grow((void **)&jp->trees, &jp->cap_trees, jp->n_trees,
				sizeof(*jp->trees), 8);
	else
		rc = inart_grow((void **)&jp->flows, &jp->cap_flows, jp->n_flows,
				sizeof(*jp->flows), 8);
	cp = rc == 0 ? dup_path(path, n_path) : NULL;
	if (cp == NULL)
		return -ENOMEM;
	if (kind == 2)
		jp->ring[jp->n_ring++] = (struct inart_ring_hop){n_path, cp};
	else if (kind == 1)
		jp->trees[jp->n_trees++] = (struct inart_tree){a, b, c, n_path, cp};
	else
		jp->flows[jp->n_flows++] = (struct inart_flow){a, b, c, n_path, cp};
	return 0;
}

int inart_plan_add_flow(struct inart_plan *p, int j, int worker, int ps, int agg, const int *path,
			int n_path)
{
	return add_route(p, j, 0, worker, ps, agg, path, n_path);
}

int inart_plan_add_tree(struct inart_plan *p, int j, int sw, int ps, int parent, const int *path,
			int n_path)
{
	return add_route(p, j, 1, sw, ps, parent, path, n_path);
}

int inart_plan_add_ring_hop(struct inart_plan *p, int j, const int *path, int n_path)
{
	return add_route(p, j, 2, -1, -1, -1, path, n_path);
}

int inart_plan_has_ring(const struct inart_plan *p)
{
	for (int j = 0; j < p->n_jobs; j++)
		if (p->jobs[j].n_ring > 0)
			return 1;
	return 0;
}

static const char *const bound_names[] = {NULL,	 "lp",	 "cbc",	      "lp-partial",
					  "bnb", "load", "cbc-limit", "stream"};
static const char *const milp_names[] = {NULL, "optimal", "time_limit"};

static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 1; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *inart_bound_source_name(enum inart_bound_source s)
{
	return (unsigned)s < sizeof(bound_names) / sizeof(bound_names[0]) ? bound_names[s] : NULL;
}

int inart_bound_source_parse(const char *name)
{
	return name_index(bound_names, (int)(sizeof(bound_names) / sizeof(bound_names[0])), name);
}

const char *inart_milp_status_name(enum inart_milp_status s)
{
	return (unsigned)s < 3 ? milp_names[s] : NULL;
}

int inart_milp_status_parse(const char *name)
{
	return name_index(milp_names, 3, name);
}

struct inart_plan *inart_plan_clone(const struct inart_plan *p)
{
	struct inart_plan *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *p;
	c->origin = NULL;
	c->jobs = NULL;
	if (p->origin != NULL && (c->origin = strdup(p->origin)) == NULL)
		c->algorithm = NULL;
	else
		c->algorithm = strdup(p->algorithm);
	if (c->algorithm == NULL || jobs_alloc(c, NULL, p) < 0)
		goto fail;
	for (int j = 0; j < p->n_jobs; j++) {
		const struct inart_job_plan *s = &p->jobs[j];

		memcpy(c->jobs[j].split, s->split, sizeof(double) * (size_t)s->n_ps);
		for (int i = 0; i < s->n_ring; i++)
			if (inart_plan_add_ring_hop(c, j, s->ring[i].path, s->ring[i].n_path))
				goto fail;
		for (int i = 0; i < s->n_flows; i++) {
			const struct inart_flow *f = &s->flows[i];

			if (inart_plan_add_flow(c, j, f->worker, f->ps, f->agg, f->path, f->n_path))
				goto fail;
		}
		for (int i = 0; i < s->n_trees; i++) {
			const struct inart_tree *tr = &s->trees[i];

			if (inart_plan_add_tree(c, j, tr->sw, tr->ps, tr->parent, tr->path,
						tr->n_path))
				goto fail;
		}
	}
	return c;
fail:
	inart_plan_destroy(c);
	return inart_null_errno(ENOMEM);
}

/* Share of PS node ps in job j's split, or 0 if ps is not a PS of j. */
static double share_of(const struct inart_plan *p, const struct inart_job *job, int j, int ps)
{
	int i = inart_job_ps_index(job, ps);

	return i >= 0 ? p->jobs[j].split[i] : 0;
}

/* Whether a route of job j toward PS node ps stays (the PS has a share);
 * a route that goes has its path freed here. */
static int route_stays(const struct inart_plan *p, const struct inart_job *job, int j, int ps,
		       int *path)
{
	if (share_of(p, job, j, ps) > 0)
		return 1;
	free(path);
	return 0;
}

void inart_plan_prune_zero(struct inart_plan *p, const struct inart_jobs *js)
{
	for (int j = 0; j < p->n_jobs; j++) {
		struct inart_job_plan *jp = &p->jobs[j];
		const struct inart_job *job = &js->jobs[j];
		int n = 0;

		for (int i = 0; i < jp->n_flows; i++)
			if (route_stays(p, job, j, jp->flows[i].ps, jp->flows[i].path))
				jp->flows[n++] = jp->flows[i];
		jp->n_flows = n;
		n = 0;
		for (int i = 0; i < jp->n_trees; i++)
			if (route_stays(p, job, j, jp->trees[i].ps, jp->trees[i].path))
				jp->trees[n++] = jp->trees[i];
		jp->n_trees = n;
	}
}

void inart_plan_clean_split(struct inart_plan *p, double eps)
{
	for (int j = 0; j < p->n_jobs; j++) {
		struct inart_job_plan *jp = &p->jobs[j];
		double sum = 0;

		for (int i = 0; i < jp->n_ps; i++) {
			if (!(jp->split[i] >= eps))
				jp->split[i] = 0;
			sum += jp->split[i];
		}
		for (int i = 0; i < jp->n_ps && sum > 0; i++)
			jp->split[i] /= sum;
	}
}
