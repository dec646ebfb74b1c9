/* Tests of the evaluator: load arithmetic by hand on tiny topologies, every
 * invalid-plan reason, reuse of one evaluator across runs, and a seeded
 * comparison against a naive recomputation on a fat-tree. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "common/rng.h"
#include "common/slab.h"
#include "cp/model/evaluate.h"
#include "cp/model/paths.h"

#define EPS 1e-12

/* cmocka 1.1.5's assert_float_equal compares floats: use doubles. */
#define assert_near(a, b, eps) assert_near_(a, b, eps, __FILE__, __LINE__)
static void assert_near_(double a, double b, double eps, const char *file, int line)
{
	if (!(fabs(a - b) <= eps)) {
		print_error("%.17g != %.17g (eps %g)\n", a, b, eps);
		_fail(file, line);
	}
}

static int host(struct inart_topo *t, const char *id)
{
	int v = inart_topo_add_node(t, id, INART_NODE_HOST, 0, 0, 0, NULL);

	assert_true(v >= 0);
	return v;
}

static int sw(struct inart_topo *t, const char *id, int ina, double agg, int trees)
{
	int v = inart_topo_add_node(t, id, INART_NODE_SWITCH, ina, agg, trees, NULL);

	assert_true(v >= 0);
	return v;
}

static void lnk(struct inart_topo *t, int a, int b, double ab, double ba, double bg_ab,
		double bg_ba)
{
	assert_true(inart_topo_add_link(t, a, b, ab, ba, bg_ab, bg_ba, NULL) >= 0);
}

static int arc(const struct inart_topo *t, int u, int v)
{
	int e = inart_topo_arc_between(t, u, v);

	assert_true(e >= 0);
	return e;
}

/* 10 Gbit of gradient. */
#define G_BYTES 1.25e9

/*
 * Star: workers w0, w1 and PS ps (hosts) on switch s; every link 10 Gbit/s
 * each way unless changed by the caller before finalize.
 */
struct star {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_evaluator *ev; /* made by star_run, freed by star_free */
	int w0, w1, ps, s;
};

static void star_nodes(struct star *x, int ina, double agg, int trees)
{
	x->ev = NULL;
	x->t = inart_topo_create();
	x->w0 = host(x->t, "w0");
	x->w1 = host(x->t, "w1");
	x->ps = host(x->t, "ps");
	x->s = sw(x->t, "s", ina, agg, trees);
}

static void star_finish(struct star *x)
{
	int w[2] = {x->w0, x->w1};

	assert_int_equal(inart_topo_finalize(x->t, NULL), 0);
	x->js = inart_jobs_create();
	assert_int_equal(inart_jobs_add(x->js, "j0", w, 2, &x->ps, 1, G_BYTES, NULL, NULL), 0);
	assert_int_equal(inart_jobs_validate(x->js, x->t, NULL), 0);
}

static void star_make(struct star *x, int ina, double agg, int trees, double bg_s_ps,
		      double ps_s_gbps)
{
	star_nodes(x, ina, agg, trees);
	lnk(x->t, x->w0, x->s, 10, 10, 0, 0);
	lnk(x->t, x->w1, x->s, 10, 10, 0, 0);
	lnk(x->t, x->s, x->ps, 10, ps_s_gbps, bg_s_ps, 0);
	star_finish(x);
}

/* Evaluate p on the star (its evaluator made on first use); the run must
 * succeed. */
static void star_run(struct star *x, const struct inart_plan *p, struct inart_eval *r)
{
	struct inart_err err = {{0}};

	if (x->ev == NULL)
		x->ev = inart_evaluator_create(x->t, x->js);
	assert_non_null(x->ev);
	if (inart_evaluator_run(x->ev, p, r, &err) != 0)
		fail_msg("evaluate: %s", err.msg);
}

static void star_free(struct star *x)
{
	inart_evaluator_destroy(x->ev);
	inart_jobs_destroy(x->js);
	inart_topo_destroy(x->t);
}

static struct inart_plan *plan_no_ina(const struct star *x)
{
	struct inart_plan *p = inart_plan_create(x->js, "test");

	p->jobs[0].split[0] = 1;
	assert_int_equal(
	    inart_plan_add_flow(p, 0, x->w0, x->ps, x->ps, (int[]){x->w0, x->s, x->ps}, 3), 0);
	assert_int_equal(
	    inart_plan_add_flow(p, 0, x->w1, x->ps, x->ps, (int[]){x->w1, x->s, x->ps}, 3), 0);
	return p;
}

static struct inart_plan *plan_ina(const struct star *x)
{
	struct inart_plan *p = inart_plan_create(x->js, "test");

	p->jobs[0].split[0] = 1;
	assert_int_equal(inart_plan_add_flow(p, 0, x->w0, x->ps, x->s, (int[]){x->w0, x->s}, 2), 0);
	assert_int_equal(inart_plan_add_flow(p, 0, x->w1, x->ps, x->s, (int[]){x->w1, x->s}, 2), 0);
	assert_int_equal(inart_plan_add_tree(p, 0, x->s, x->ps, x->ps, (int[]){x->s, x->ps}, 2), 0);
	return p;
}

static void test_star_no_ina(void **state)
{
	struct star x;
	struct inart_plan *p;
	struct inart_eval r;
	struct inart_err err = {{0}};
	const struct inart_topo *t;

	(void)state;
	star_make(&x, 1, 100, 1, 0, 10);
	t = x.t;
	p = plan_no_ina(&x);
	star_run(&x, p, &r);
	/* push: w0->s 10, w1->s 10, s->ps 20 Gbit; pull the reverse. */
	assert_near(r.arc_push_gbit[arc(t, x.w0, x.s)], 10, EPS);
	assert_near(r.arc_push_gbit[arc(t, x.w1, x.s)], 10, EPS);
	assert_near(r.arc_push_gbit[arc(t, x.s, x.ps)], 20, EPS);
	assert_near(r.arc_push_gbit[arc(t, x.ps, x.s)], 0, EPS);
	assert_near(r.arc_pull_gbit[arc(t, x.ps, x.s)], 20, EPS);
	assert_near(r.arc_pull_gbit[arc(t, x.s, x.w0)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, x.s, x.ps)], 0, EPS);
	assert_near(r.node_ingress_gbit[x.ps], 20, EPS);
	assert_near(r.node_agg_gbit[x.s], 0, EPS);
	assert_int_equal(r.node_trees[x.s], 0);
	assert_near(r.push_time_s, 2.0, EPS);
	assert_near(r.pull_time_s, 2.0, EPS);
	assert_near(r.comm_time_s, 2.0, EPS);
	/* s->ps (push) and ps->s (pull) tie at 2 s: the lower arc number */
	assert_int_equal(r.bottleneck_arc, arc(t, x.s, x.ps) < arc(t, x.ps, x.s)
					       ? arc(t, x.s, x.ps)
					       : arc(t, x.ps, x.s));
	assert_int_equal(r.bottleneck_node, -1);
	/* one-shot API stores the times */
	assert_int_equal(inart_evaluate(x.t, x.js, p, &err), 0);
	assert_near(p->comm_time_s, 2.0, EPS);
	assert_near(p->push_time_s, 2.0, EPS);
	assert_near(p->pull_time_s, 2.0, EPS);
	inart_plan_destroy(p);
	star_free(&x);
}

static void test_star_ina(void **state)
{
	struct star x;
	struct inart_plan *p;
	struct inart_eval r;
	const struct inart_topo *t;

	(void)state;
	star_make(&x, 1, 100, 1, 0, 10);
	t = x.t;
	p = plan_ina(&x);
	star_run(&x, p, &r);
	/* merged at s: one 10 Gbit stream to the PS, one back */
	assert_near(r.arc_push_gbit[arc(t, x.s, x.ps)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, x.ps, x.s)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, x.s, x.w1)], 10, EPS);
	assert_near(r.node_agg_gbit[x.s], 20, EPS);
	assert_near(r.node_ingress_gbit[x.ps], 10, EPS);
	assert_int_equal(r.node_trees[x.s], 1);
	assert_near(r.push_time_s, 1.0, EPS);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_near(r.comm_time_s, 1.0, EPS);
	assert_int_equal(r.bottleneck_node, -1);
	assert_true(r.bottleneck_arc >= 0);
	inart_plan_destroy(p);
	star_free(&x);
}

/* Aggregation throughput 5 Gbit/s: 20 Gbit of input take 4 s. */
static void test_agg_bottleneck(void **state)
{
	struct star x;
	struct inart_plan *p;
	struct inart_eval r;

	(void)state;
	star_make(&x, 1, 5, 1, 0, 10);
	p = plan_ina(&x);
	star_run(&x, p, &r);
	assert_near(r.comm_time_s, 4.0, EPS);
	assert_near(r.push_time_s, 4.0, EPS);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_int_equal(r.bottleneck_node, x.s);
	assert_int_equal(r.bottleneck_arc, -1);
	inart_plan_destroy(p);
	star_free(&x);
}

/* Background 5 of 10 Gbit/s on s->ps: residual 5, push there takes 2 s. */
static void test_background(void **state)
{
	struct star x;
	struct inart_plan *p;
	struct inart_eval r;

	(void)state;
	star_make(&x, 1, 100, 1, 5, 10);
	p = plan_ina(&x);
	star_run(&x, p, &r);
	assert_near(r.push_time_s, 2.0, EPS);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_near(r.comm_time_s, 2.0, EPS);
	assert_int_equal(r.bottleneck_arc, arc(x.t, x.s, x.ps));
	inart_plan_destroy(p);
	star_free(&x);
}

/* Per-direction capacity: ps->s has 40 Gbit/s, s->ps 10. */
static void test_direction_capacity(void **state)
{
	struct star x;
	struct inart_plan *p;
	struct inart_eval r;

	(void)state;
	star_make(&x, 1, 100, 1, 0, 40);
	p = plan_no_ina(&x);
	star_run(&x, p, &r);
	assert_near(r.push_time_s, 2.0, EPS); /* 20 / 10 on s->ps */
	assert_near(r.pull_time_s, 1.0, EPS); /* 10 / 10 on s->w0; ps->s 20/40 */
	assert_near(r.comm_time_s, 2.0, EPS);
	assert_int_equal(r.bottleneck_arc, arc(x.t, x.s, x.ps));
	inart_plan_destroy(p);
	star_free(&x);
}

/*
 * Two jobs in opposite directions over a - s - b: job j0 has worker a, PS b;
 * job j1 worker b, PS a.  Arc a->s carries j0's push and j1's pull, so
 * comm = (10 + 10) / 10 = 2 s while push and pull alone take 1 s each.
 */
static void test_push_pull_share_arc(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_jobs *js = inart_jobs_create();
	struct inart_plan *p;
	struct inart_eval r;
	struct inart_evaluator *ev;
	int a = host(t, "a"), b = host(t, "b"), s = sw(t, "s", 0, 0, 0);

	(void)state;
	lnk(t, a, s, 10, 10, 0, 0);
	lnk(t, s, b, 10, 10, 0, 0);
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	assert_int_equal(inart_jobs_add(js, "j0", &a, 1, &b, 1, G_BYTES, NULL, NULL), 0);
	assert_int_equal(inart_jobs_add(js, "j1", &b, 1, &a, 1, G_BYTES, NULL, NULL), 1);
	p = inart_plan_create(js, "test");
	p->jobs[0].split[0] = p->jobs[1].split[0] = 1;
	inart_plan_add_flow(p, 0, a, b, b, (int[]){a, s, b}, 3);
	inart_plan_add_flow(p, 1, b, a, a, (int[]){b, s, a}, 3);
	ev = inart_evaluator_create(t, js);
	assert_int_equal(inart_evaluator_run(ev, p, &r, NULL), 0);
	assert_near(r.arc_push_gbit[arc(t, a, s)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, a, s)], 10, EPS);
	assert_near(r.push_time_s, 1.0, EPS);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_near(r.comm_time_s, 2.0, EPS);
	assert_near(r.node_ingress_gbit[a], 10, EPS);
	assert_near(r.node_ingress_gbit[b], 10, EPS);
	inart_evaluator_destroy(ev);
	tu_free(t, js, NULL, p);
}

/*
 * Split over two PSs: w - s - {p0, p1}, shares 0.25 / 0.75, 10 Gbit.
 * A third PS p2 with share 0 has a flow that carries nothing.
 */
static void test_split_two_ps(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_jobs *js = inart_jobs_create();
	struct inart_plan *p;
	struct inart_eval r;
	struct inart_evaluator *ev;
	struct inart_err err = {{0}};
	int w = host(t, "w"), p0 = host(t, "p0"), p1 = host(t, "p1"), p2 = host(t, "p2");
	int s = sw(t, "s", 0, 0, 0);

	(void)state;
	lnk(t, w, s, 10, 10, 0, 0);
	lnk(t, s, p0, 10, 10, 0, 0);
	lnk(t, s, p1, 2.5, 10, 0, 0); /* 7.5 Gbit over 2.5 Gbit/s: 3 s */
	lnk(t, s, p2, 10, 10, 0, 0);
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	assert_int_equal(
	    inart_jobs_add(js, "j0", &w, 1, (int[]){p0, p1, p2}, 3, G_BYTES, NULL, NULL), 0);
	p = inart_plan_create(js, "test");
	p->jobs[0].split[0] = 0.25;
	p->jobs[0].split[1] = 0.75;
	p->jobs[0].split[2] = 0;
	inart_plan_add_flow(p, 0, w, p0, p0, (int[]){w, s, p0}, 3);
	inart_plan_add_flow(p, 0, w, p1, p1, (int[]){w, s, p1}, 3);
	ev = inart_evaluator_create(t, js);
	/* no flow to p2: fine, its share is 0 */
	assert_int_equal(inart_evaluator_run(ev, p, &r, &err), 0);
	assert_near(r.arc_push_gbit[arc(t, w, s)], 10, EPS);
	assert_near(r.arc_push_gbit[arc(t, s, p0)], 2.5, EPS);
	assert_near(r.arc_push_gbit[arc(t, s, p1)], 7.5, EPS);
	assert_near(r.arc_pull_gbit[arc(t, p1, s)], 7.5, EPS);
	assert_near(r.node_ingress_gbit[p0], 2.5, EPS);
	assert_near(r.node_ingress_gbit[p1], 7.5, EPS);
	assert_near(r.push_time_s, 3.0, EPS);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_near(r.comm_time_s, 3.0, EPS);
	assert_int_equal(r.bottleneck_arc, arc(t, s, p1));
	/* a flow to the zero-share PS is allowed and carries nothing */
	inart_plan_add_flow(p, 0, w, p2, p2, (int[]){w, s, p2}, 3);
	assert_int_equal(inart_evaluator_run(ev, p, &r, &err), 0);
	assert_near(r.arc_push_gbit[arc(t, s, p2)], 0, EPS);
	assert_near(r.arc_push_gbit[arc(t, w, s)], 10, EPS);
	assert_near(r.comm_time_s, 3.0, EPS);
	inart_evaluator_destroy(ev);
	tu_free(t, js, NULL, p);
}

/*
 * Two-level tree: w0,w1 - s1; w2,w3 - s2; s1 - s3 - s2; s3 - ps.  Workers
 * aggregate at s1 / s2, both trees have parent s3, s3's parent is the PS.
 * Every link carries one 10 Gbit stream each way; s1, s2, s3 each merge 20.
 * Host links are 20 Gbit/s, so the 10 Gbit/s switch links set 1 s.
 */
static void test_multilevel_tree(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_jobs *js = inart_jobs_create();
	struct inart_plan *p;
	struct inart_eval r;
	struct inart_evaluator *ev;
	struct inart_err err = {{0}};
	int w[4], ps, s1, s2, s3;

	(void)state;
	for (int i = 0; i < 4; i++) {
		char id[8];

		snprintf(id, sizeof(id), "w%d", i);
		w[i] = host(t, id);
	}
	ps = host(t, "ps");
	s1 = sw(t, "s1", 1, 100, 2);
	s2 = sw(t, "s2", 1, 100, 2);
	s3 = sw(t, "s3", 1, 10, 2); /* merges 20 Gbit at 10 Gbit/s: 2 s */
	lnk(t, w[0], s1, 20, 20, 0, 0);
	lnk(t, w[1], s1, 20, 20, 0, 0);
	lnk(t, w[2], s2, 20, 20, 0, 0);
	lnk(t, w[3], s2, 20, 20, 0, 0);
	lnk(t, s1, s3, 10, 10, 0, 0);
	lnk(t, s2, s3, 10, 10, 0, 0);
	lnk(t, s3, ps, 10, 10, 0, 0);
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	assert_int_equal(inart_jobs_add(js, "j0", w, 4, &ps, 1, G_BYTES, NULL, NULL), 0);
	p = inart_plan_create(js, "test");
	p->jobs[0].split[0] = 1;
	inart_plan_add_flow(p, 0, w[0], ps, s1, (int[]){w[0], s1}, 2);
	inart_plan_add_flow(p, 0, w[1], ps, s1, (int[]){w[1], s1}, 2);
	inart_plan_add_flow(p, 0, w[2], ps, s2, (int[]){w[2], s2}, 2);
	inart_plan_add_flow(p, 0, w[3], ps, s2, (int[]){w[3], s2}, 2);
	inart_plan_add_tree(p, 0, s3, ps, ps, (int[]){s3, ps}, 2);
	inart_plan_add_tree(p, 0, s1, ps, s3, (int[]){s1, s3}, 2);
	inart_plan_add_tree(p, 0, s2, ps, s3, (int[]){s2, s3}, 2);
	ev = inart_evaluator_create(t, js);
	assert_int_equal(inart_evaluator_run(ev, p, &r, &err), 0);
	assert_near(r.node_agg_gbit[s1], 20, EPS);
	assert_near(r.node_agg_gbit[s2], 20, EPS);
	assert_near(r.node_agg_gbit[s3], 20, EPS);
	assert_near(r.node_ingress_gbit[ps], 10, EPS);
	assert_near(r.arc_push_gbit[arc(t, s1, s3)], 10, EPS);
	assert_near(r.arc_push_gbit[arc(t, s3, ps)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, s3, s2)], 10, EPS);
	assert_near(r.arc_pull_gbit[arc(t, s1, w[0])], 10, EPS);
	assert_int_equal(r.node_trees[s1], 1);
	assert_int_equal(r.node_trees[s3], 1);
	assert_near(r.pull_time_s, 1.0, EPS);
	assert_near(r.push_time_s, 2.0, EPS);
	assert_near(r.comm_time_s, 2.0, EPS);
	assert_int_equal(r.bottleneck_node, s3);
	/* a tree path starting elsewhere than at its switch */
	p->jobs[0].trees[2].path[0] = s1;
	assert_int_equal(inart_evaluator_run(ev, p, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "starts at 's1', not at 's2'"));
	inart_evaluator_destroy(ev);
	tu_free(t, js, NULL, p);
}

/* ---------------------------------------------------------------------- */
/* Invalid plans: each reason gives -EINVAL and a message with its words. */

struct bad {
	struct inart_topo *t;
	struct inart_jobs *js;
	/* w0, w1 on s1; s1 - s2 - ps; q is a second PS on s2; x a host on s2
	 * that is in no job; n is a non-INA switch between s1 and s2. */
	int w0, w1, ps, q, x, s1, s2, n;
};

static void bad_make(struct bad *b, int trees)
{
	int w[2];

	b->t = inart_topo_create();
	b->w0 = host(b->t, "w0");
	b->w1 = host(b->t, "w1");
	b->ps = host(b->t, "ps");
	b->q = host(b->t, "q");
	b->x = host(b->t, "x");
	b->s1 = sw(b->t, "s1", 1, 100, trees);
	b->s2 = sw(b->t, "s2", 1, 100, trees);
	b->n = sw(b->t, "n", 0, 0, 0);
	lnk(b->t, b->w0, b->s1, 10, 10, 0, 0);
	lnk(b->t, b->w1, b->s1, 10, 10, 0, 0);
	lnk(b->t, b->s1, b->s2, 10, 10, 0, 0);
	lnk(b->t, b->s1, b->n, 10, 10, 0, 0);
	lnk(b->t, b->n, b->s2, 10, 10, 0, 0);
	lnk(b->t, b->s2, b->ps, 10, 10, 0, 0);
	lnk(b->t, b->s2, b->q, 10, 10, 0, 0);
	lnk(b->t, b->s2, b->x, 10, 10, 10, 0); /* s2->x fully used by background */
	assert_int_equal(inart_topo_finalize(b->t, NULL), 0);
	w[0] = b->w0;
	w[1] = b->w1;
	b->js = inart_jobs_create();
	assert_int_equal(
	    inart_jobs_add(b->js, "j0", w, 2, (int[]){b->ps, b->q}, 2, G_BYTES, NULL, NULL), 0);
}

static void bad_free(struct bad *b)
{
	inart_jobs_destroy(b->js);
	inart_topo_destroy(b->t);
}

/* A valid plan: all to ps (share 1, q share 0), aggregated at s1. */
static struct inart_plan *bad_plan(const struct bad *b)
{
	struct inart_plan *p = inart_plan_create(b->js, "test");

	p->jobs[0].split[0] = 1;
	p->jobs[0].split[1] = 0;
	inart_plan_add_flow(p, 0, b->w0, b->ps, b->s1, (int[]){b->w0, b->s1}, 2);
	inart_plan_add_flow(p, 0, b->w1, b->ps, b->s1, (int[]){b->w1, b->s1}, 2);
	inart_plan_add_tree(p, 0, b->s1, b->ps, b->ps, (int[]){b->s1, b->s2, b->ps}, 3);
	return p;
}

static void expect_bad(struct inart_evaluator *ev, const struct inart_plan *p, const char *w1,
		       const char *w2)
{
	struct inart_err err = {{0}};
	struct inart_eval r;

	assert_int_equal(inart_evaluator_run(ev, p, &r, &err), -EINVAL);
	if (strstr(err.msg, w1) == NULL || (w2 && strstr(err.msg, w2) == NULL))
		fail_msg("message '%s' lacks '%s' / '%s'", err.msg, w1, w2 ? w2 : "");
	assert_non_null(strstr(err.msg, "job 'j0'"));
}

/* expect_bad, then destroy p (a plan used for one bad case only). */
static void expect_bad_drop(struct inart_evaluator *ev, struct inart_plan *p, const char *w1,
			    const char *w2)
{
	expect_bad(ev, p, w1, w2);
	inart_plan_destroy(p);
}

/* Fixture of the invalid-plan tests: bad_make(4) and an evaluator on it. */
struct bad_fx {
	struct bad b;
	struct inart_evaluator *ev;
};

static int bad_setup(void **state)
{
	struct bad_fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	bad_make(&fx->b, 4);
	fx->ev = inart_evaluator_create(fx->b.t, fx->b.js);
	assert_non_null(fx->ev);
	*state = fx;
	return 0;
}

static int bad_teardown(void **state)
{
	struct bad_fx *fx = *state;

	inart_evaluator_destroy(fx->ev);
	bad_free(&fx->b);
	free(fx);
	return 0;
}

static void set_path(struct inart_plan *p, int is_tree, int i, const int *path, int n)
{
	int **pp = is_tree ? &p->jobs[0].trees[i].path : &p->jobs[0].flows[i].path;
	int *np = is_tree ? &p->jobs[0].trees[i].n_path : &p->jobs[0].flows[i].n_path;

	*pp = realloc(*pp, sizeof(int) * (size_t)(n > 0 ? n : 1));
	memcpy(*pp, path, sizeof(int) * (size_t)n);
	*np = n;
}

static void test_invalid_paths(void **state)
{
	const struct bad_fx *fx = *state;
	const struct bad b = fx->b;
	struct inart_evaluator *ev = fx->ev;
	struct inart_plan *p;

	p = bad_plan(&b);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, NULL), 0);
	/* not contiguous */
	set_path(p, 1, 0, (int[]){b.s1, b.ps}, 2);
	expect_bad(ev, p, "not contiguous", "'s1' and 'ps'");
	/* wrong start */
	set_path(p, 1, 0, (int[]){b.s2, b.ps}, 2);
	expect_bad(ev, p, "starts at 's2'", "not at 's1'");
	/* wrong end */
	set_path(p, 1, 0, (int[]){b.s1, b.s2}, 2);
	expect_bad(ev, p, "ends at 's2'", "not at 'ps'");
	/* not simple */
	set_path(p, 1, 0, (int[]){b.s1, b.n, b.s2, b.s1, b.s2, b.ps}, 6);
	expect_bad(ev, p, "visits 's1' twice", "tree at 's1'");
	/* empty */
	set_path(p, 1, 0, (int[]){b.s1}, 0);
	expect_bad(ev, p, "empty path", NULL);
	/* unknown node */
	set_path(p, 1, 0, (int[]){b.s1, 99, b.ps}, 3);
	expect_bad(ev, p, "unknown node number 99", NULL);
	/* a longer valid path through the non-INA switch is fine */
	set_path(p, 1, 0, (int[]){b.s1, b.n, b.s2, b.ps}, 4);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, NULL), 0);
	/* flow path wrong start */
	set_path(p, 0, 1, (int[]){b.w0, b.s1}, 2);
	expect_bad(ev, p, "flow 'w1'->'ps'", "starts at 'w0'");
	inart_plan_destroy(p);
}

static void test_invalid_residual(void **state)
{
	/* Job j1 (worker x, PS ps): s2->x has no residual, so the pull of a
	 * flow from x to ps cannot come back. */
	struct bad b;
	struct inart_evaluator *ev;
	struct inart_plan *p;
	struct inart_err err = {{0}};

	(void)state;
	bad_make(&b, 4);
	assert_int_equal(inart_jobs_add(b.js, "j1", &b.x, 1, &b.ps, 1, G_BYTES, NULL, NULL), 1);
	p = bad_plan(&b);
	p->jobs[1].split[0] = 1;
	inart_plan_add_flow(p, 1, b.x, b.ps, b.ps, (int[]){b.x, b.s2, b.ps}, 3);
	ev = inart_evaluator_create(b.t, b.js);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "job 'j1': flow 'x'->'ps'"));
	assert_non_null(strstr(err.msg, "'s2'->'x' has no residual capacity"));
	assert_non_null(strstr(err.msg, "pull"));
	inart_plan_destroy(p);
	inart_evaluator_destroy(ev);
	bad_free(&b);
}

static void test_invalid_forward_residual(void **state)
{
	/* Job j1: worker w1, PS x; path w1 s1 s2 x uses s2->x with no
	 * residual in the push direction. */
	struct inart_topo *t;
	struct bad b;
	struct inart_evaluator *ev;
	struct inart_plan *p;
	struct inart_err err = {{0}};

	(void)state;
	bad_make(&b, 4);
	t = b.t;
	assert_int_equal(inart_jobs_add(b.js, "j1", &b.w1, 1, &b.x, 1, G_BYTES, NULL, NULL), 1);
	p = bad_plan(&b);
	p->jobs[1].split[0] = 1;
	inart_plan_add_flow(p, 1, b.w1, b.x, b.x, (int[]){b.w1, b.s1, b.s2, b.x}, 4);
	ev = inart_evaluator_create(t, b.js);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "job 'j1': flow 'w1'->'x': arc 's2'->'x' has no residual"));
	assert_null(strstr(err.msg, "pull"));
	inart_plan_destroy(p);
	inart_evaluator_destroy(ev);
	bad_free(&b);
}

static void test_invalid_aggregation(void **state)
{
	const struct bad_fx *fx = *state;
	const struct bad b = fx->b;
	struct inart_evaluator *ev = fx->ev;
	struct inart_plan *p;

	/* aggregation at a non-INA switch, by a flow */
	p = bad_plan(&b);
	p->jobs[0].flows[0].agg = b.n;
	set_path(p, 0, 0, (int[]){b.w0, b.s1, b.n}, 3);
	expect_bad_drop(ev, p, "aggregation at 'n'", "not an INA switch");

	/* a tree at a non-INA switch */
	p = bad_plan(&b);
	inart_plan_add_tree(p, 0, b.n, b.ps, b.ps, (int[]){b.n, b.s2, b.ps}, 3);
	expect_bad_drop(ev, p, "tree at 'n'", "not an INA switch");

	/* aggregation at a host that is not the PS */
	p = bad_plan(&b);
	p->jobs[0].flows[0].agg = b.q;
	expect_bad_drop(ev, p, "aggregation at 'q'", "not an INA switch (nor the flow's PS)");

	/* flow to an INA switch without a tree entry for its PS */
	p = bad_plan(&b);
	p->jobs[0].flows[0].agg = b.s2;
	set_path(p, 0, 0, (int[]){b.w0, b.s1, b.s2}, 3);
	expect_bad_drop(ev, p, "no tree entry", "'s2'");

	/* the tree at s1 is for ps; a flow to q aggregating at s1 has none */
	p = bad_plan(&b);
	p->jobs[0].split[0] = 0.5;
	p->jobs[0].split[1] = 0.5;
	inart_plan_add_flow(p, 0, b.w0, b.q, b.s1, (int[]){b.w0, b.s1}, 2);
	expect_bad_drop(ev, p, "flow 'w0'->'q'", "no tree entry for PS 'q'");

	/* duplicate tree */
	p = bad_plan(&b);
	inart_plan_add_tree(p, 0, b.s1, b.ps, b.ps, (int[]){b.s1, b.s2, b.ps}, 3);
	expect_bad_drop(ev, p, "duplicate tree at 's1'", "PS 'ps'");

	/* two trees at one switch for different PSs of one job are fine */
	p = bad_plan(&b);
	p->jobs[0].split[0] = 0.5;
	p->jobs[0].split[1] = 0.5;
	inart_plan_add_flow(p, 0, b.w0, b.q, b.s1, (int[]){b.w0, b.s1}, 2);
	inart_plan_add_flow(p, 0, b.w1, b.q, b.s1, (int[]){b.w1, b.s1}, 2);
	inart_plan_add_tree(p, 0, b.s1, b.q, b.q, (int[]){b.s1, b.s2, b.q}, 3);
	{
		struct inart_eval r;

		assert_int_equal(inart_evaluator_run(ev, p, &r, NULL), 0);
		assert_int_equal(r.node_trees[b.s1], 2);
		assert_near(r.arc_push_gbit[arc(b.t, b.s1, b.s2)], 10, EPS);
		assert_near(r.node_agg_gbit[b.s1], 20, EPS);
		assert_near(r.comm_time_s, 1.0, EPS);
	}
	inart_plan_destroy(p);

	/* tree for a host that is not a PS of the job */
	p = bad_plan(&b);
	p->jobs[0].trees[0].ps = b.x;
	expect_bad_drop(ev, p, "tree at 's1'", "'x' is not a PS of the job");

	/* tree with no children */
	p = bad_plan(&b);
	inart_plan_add_tree(p, 0, b.s2, b.ps, b.ps, (int[]){b.s2, b.ps}, 2);
	expect_bad_drop(ev, p, "tree at 's2'", "has no children");

	/* a tree of a zero-share PS still needs children */
	p = bad_plan(&b);
	inart_plan_add_tree(p, 0, b.s2, b.q, b.q, (int[]){b.s2, b.q}, 2);
	expect_bad_drop(ev, p, "tree at 's2' for PS 'q'", "has no children");
}

static void test_invalid_tree_structure(void **state)
{
	const struct bad_fx *fx = *state;
	const struct bad b = fx->b;
	struct inart_evaluator *ev = fx->ev;
	struct inart_plan *p;

	/* parent is a host that is not the PS */
	p = bad_plan(&b);
	p->jobs[0].trees[0].parent = b.q;
	set_path(p, 1, 0, (int[]){b.s1, b.s2, b.q}, 3);
	expect_bad_drop(ev, p, "parent 'q'", "neither the PS nor a tree switch");

	/* parent is an INA switch with no tree for (job, PS) */
	p = bad_plan(&b);
	p->jobs[0].trees[0].parent = b.s2;
	set_path(p, 1, 0, (int[]){b.s1, b.s2}, 2);
	expect_bad_drop(ev, p, "parent 's2'", "neither the PS nor a tree switch");

	/* a two-level tree s1 -> s2 -> ps is valid */
	p = bad_plan(&b);
	p->jobs[0].trees[0].parent = b.s2;
	set_path(p, 1, 0, (int[]){b.s1, b.s2}, 2);
	inart_plan_add_tree(p, 0, b.s2, b.ps, b.ps, (int[]){b.s2, b.ps}, 2);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, NULL), 0);
	/* cycle s1 -> s2 -> s1 */
	p->jobs[0].trees[1].parent = b.s1;
	set_path(p, 1, 1, (int[]){b.s2, b.s1}, 2);
	expect_bad(ev, p, "form a cycle", "PS 'ps'");
	/* self-parent */
	p->jobs[0].trees[1].parent = b.ps;
	set_path(p, 1, 1, (int[]){b.s2, b.ps}, 2);
	p->jobs[0].trees[0].parent = b.s1;
	set_path(p, 1, 0, (int[]){b.s1}, 1);
	expect_bad_drop(ev, p, "form a cycle", "'s1'");
}

static void test_invalid_split(void **state)
{
	const struct bad_fx *fx = *state;
	const struct bad b = fx->b;
	struct inart_evaluator *ev = fx->ev;
	struct inart_plan *p;

	p = bad_plan(&b);
	p->jobs[0].split[0] = 0.6;
	p->jobs[0].split[1] = 0.3;
	expect_bad(ev, p, "shares sum to 0.9", "not 1");
	p->jobs[0].split[0] = 1.5;
	p->jobs[0].split[1] = -0.5;
	expect_bad(ev, p, "share of PS 'q' is negative", NULL);
	p->jobs[0].split[0] = NAN;
	p->jobs[0].split[1] = 0;
	expect_bad(ev, p, "share of PS 'ps' is not a finite number", NULL);
	/* within tolerance */
	p->jobs[0].split[0] = 1 - 5e-7;
	p->jobs[0].split[1] = 0;
	assert_int_equal(inart_evaluator_run(ev, p, NULL, NULL), 0);
	p->jobs[0].split[0] = 1 - 2e-6;
	expect_bad(ev, p, "shares sum to", NULL);
	p->jobs[0].split[0] = 1;
	p->jobs[0].n_ps = 1;
	expect_bad(ev, p, "split has 1 shares for 2 PSs", NULL);
	p->jobs[0].n_ps = 2;
	assert_int_equal(inart_evaluator_run(ev, p, NULL, NULL), 0);
	inart_plan_destroy(p);
}

static void test_invalid_flows(void **state)
{
	const struct bad_fx *fx = *state;
	const struct bad b = fx->b;
	struct inart_evaluator *ev = fx->ev;
	struct inart_plan *p;

	/* a worker without a flow to a PS with a non-zero share */
	p = bad_plan(&b);
	p->jobs[0].split[0] = 0.5;
	p->jobs[0].split[1] = 0.5;
	inart_plan_add_flow(p, 0, b.w0, b.q, b.q, (int[]){b.w0, b.s1, b.s2, b.q}, 4);
	expect_bad(ev, p, "worker 'w1' has no flow to PS 'q'", "share 0.5");
	/* duplicate flow */
	inart_plan_add_flow(p, 0, b.w0, b.q, b.q, (int[]){b.w0, b.s1, b.s2, b.q}, 4);
	expect_bad_drop(ev, p, "duplicate flow from worker 'w0' to PS 'q'", NULL);

	/* flow from a host that is not a worker of the job */
	p = bad_plan(&b);
	inart_plan_add_flow(p, 0, b.x, b.ps, b.ps, (int[]){b.x, b.s2, b.ps}, 3);
	expect_bad_drop(ev, p, "'x' is not a worker of the job", NULL);

	/* flow to a host that is not a PS of the job */
	p = bad_plan(&b);
	inart_plan_add_flow(p, 0, b.w0, b.x, b.x, (int[]){b.w0, b.s1, b.s2, b.x}, 4);
	expect_bad_drop(ev, p, "'x' is not a PS of the job", NULL);

	/* unknown node number in a flow */
	p = bad_plan(&b);
	p->jobs[0].flows[1].agg = -3;
	expect_bad_drop(ev, p, "unknown node number", NULL);

	/* no flows at all */
	p = bad_plan(&b);
	inart_plan_clear_routes(p, 0);
	expect_bad_drop(ev, p, "worker 'w0' has no flow to PS 'ps'", NULL);
}

/* Budget 1 on every INA switch; two jobs both aggregating at s1. */
static void test_invalid_budget(void **state)
{
	struct bad b;
	struct inart_evaluator *ev;
	struct inart_plan *p;
	struct inart_err err = {{0}};

	(void)state;
	bad_make(&b, 1);
	assert_int_equal(
	    inart_jobs_add(b.js, "j1", (int[]){b.w0, b.w1}, 2, &b.q, 1, G_BYTES, NULL, NULL), 1);
	ev = inart_evaluator_create(b.t, b.js);
	p = bad_plan(&b);
	p->jobs[1].split[0] = 1;
	inart_plan_add_flow(p, 1, b.w0, b.q, b.q, (int[]){b.w0, b.s1, b.s2, b.q}, 4);
	inart_plan_add_flow(p, 1, b.w1, b.q, b.q, (int[]){b.w1, b.s1, b.s2, b.q}, 4);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, &err), 0);
	/* now job j1 also aggregates at s1 */
	p->jobs[1].flows[0].agg = b.s1;
	set_path(p, 0, 0, (int[]){b.w0, b.s1}, 2); /* job 0 flow 0 unchanged */
	free(p->jobs[1].flows[0].path);
	p->jobs[1].flows[0].path = malloc(2 * sizeof(int));
	p->jobs[1].flows[0].path[0] = b.w0;
	p->jobs[1].flows[0].path[1] = b.s1;
	p->jobs[1].flows[0].n_path = 2;
	inart_plan_add_tree(p, 1, b.s1, b.q, b.q, (int[]){b.s1, b.s2, b.q}, 3);
	assert_int_equal(inart_evaluator_run(ev, p, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "job 'j1'"));
	assert_non_null(strstr(err.msg, "tree budget of 's1' (1"));
	assert_non_null(strstr(err.msg, "all jobs"));
	/* plan with the wrong number of jobs */
	p->n_jobs = 1;
	assert_int_equal(inart_evaluator_run(ev, p, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "plan has 1 jobs"));
	p->n_jobs = 2;
	inart_plan_destroy(p);
	inart_evaluator_destroy(ev);
	bad_free(&b);
}

/* ---------------------------------------------------------------------- */
/* Reuse and a naive reference on a fat-tree with random plans. */

static struct inart_topo *mk_fattree4(void)
{
	struct inart_topo *t = inart_topo_create();
	char id[16];
	int e0, a0, c0;

	for (int i = 0; i < 16; i++) {
		snprintf(id, sizeof(id), "h%d", i);
		host(t, id);
	}
	e0 = t->n_nodes;
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "e%d", i);
		sw(t, id, 1, 40 + 10 * i, 2);
	}
	a0 = t->n_nodes;
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "a%d", i);
		sw(t, id, i % 2, 50, 3);
	}
	c0 = t->n_nodes;
	for (int i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		sw(t, id, 1, 100, 2);
	}
	for (int i = 0; i < 16; i++)
		lnk(t, i, e0 + i / 2, 10, 10 + i, 0.5 * (i % 3), 0);
	for (int pod = 0; pod < 4; pod++)
		for (int e = 0; e < 2; e++)
			for (int a = 0; a < 2; a++) {
				lnk(t, e0 + pod * 2 + e, a0 + pod * 2 + a, 40, 40, e, a);
				if (e == 0)
					for (int c = 0; c < 2; c++)
						lnk(t, a0 + pod * 2 + a, c0 + a * 2 + c, 40, 30, 0,
						    0);
			}
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	return t;
}

/* Random valid plan: shortest paths; each (job, PS) picks per worker either
 * the PS or the first INA switch on its path that already has (or can still
 * get) a tree, with the tree going straight to the PS. */
static struct inart_plan *random_plan(const struct inart_topo *t, const struct inart_jobs *js,
				      struct inart_paths *paths, struct inart_rng *r,
				      int *budget_left)
{
	struct inart_plan *p = inart_plan_create(js, "rand");
	int path[32], tpath[32];

	for (int v = 0; v < t->n_nodes; v++)
		budget_left[v] = t->nodes[v].ina ? t->nodes[v].trees : 0;
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];
		double sum = 0;

		for (int k = 0; k < job->n_ps; k++) {
			p->jobs[j].split[k] = inart_rng_unit(r) < 0.2 ? 0 : inart_rng_unit(r);
			sum += p->jobs[j].split[k];
		}
		if (sum == 0) {
			p->jobs[j].split[0] = 1;
			sum = 1;
		}
		for (int k = 0; k < job->n_ps; k++)
			p->jobs[j].split[k] /= sum;
		for (int k = 0; k < job->n_ps; k++) {
			int ps = job->ps[k];

			if (p->jobs[j].split[k] == 0 && inart_rng_unit(r) < 0.5)
				continue; /* flows to zero-share PSs are optional */
			for (int wi = 0; wi < job->n_workers; wi++) {
				int w = job->workers[wi], agg = ps, len, cut = -1;

				len =
				    inart_paths_shortest(paths, w, ps, inart_rng_next(r), path, 32);
				assert_true(len >= 2);
				for (int i = 1; i + 1 < len && inart_rng_unit(r) < 0.7; i++) {
					int v = path[i], have = -1;

					if (!t->nodes[v].ina)
						continue;
					for (int q = 0; q < p->jobs[j].n_trees; q++)
						if (p->jobs[j].trees[q].sw == v &&
						    p->jobs[j].trees[q].ps == ps)
							have = q;
					if (have < 0 && budget_left[v] > 0) {
						int tl = inart_paths_shortest(paths, v, ps, 1,
									      tpath, 32);

						assert_true(tl >= 2);
						budget_left[v]--;
						inart_plan_add_tree(p, j, v, ps, ps, tpath, tl);
						have = p->jobs[j].n_trees - 1;
					}
					if (have >= 0) {
						agg = v;
						cut = i;
						break;
					}
				}
				inart_plan_add_flow(p, j, w, ps, agg, path,
						    cut >= 0 ? cut + 1 : len);
			}
		}
	}
	return p;
}

/* Naive recomputation of every load and time with full arrays. */
static void naive(const struct inart_topo *t, const struct inart_jobs *js,
		  const struct inart_plan *p, double *push, double *pull, double *agg, double *ing,
		  double *comm, double *pt, double *qt)
{
	int m = inart_topo_n_arcs(t);

	memset(push, 0, sizeof(double) * (size_t)m);
	memset(pull, 0, sizeof(double) * (size_t)m);
	memset(agg, 0, sizeof(double) * (size_t)t->n_nodes);
	memset(ing, 0, sizeof(double) * (size_t)t->n_nodes);
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job_plan *jp = &p->jobs[j];

		for (int s = 0; s < jp->n_flows + jp->n_trees; s++) {
			int is_tree = s >= jp->n_flows;
			const int *path =
			    is_tree ? jp->trees[s - jp->n_flows].path : jp->flows[s].path;
			int n = is_tree ? jp->trees[s - jp->n_flows].n_path : jp->flows[s].n_path;
			int ps = is_tree ? jp->trees[s - jp->n_flows].ps : jp->flows[s].ps;
			int end = path[n - 1];
			double vol = jp->split[inart_job_ps_index(&js->jobs[j], ps)] *
				     inart_job_gbit(&js->jobs[j]);

			for (int i = 0; i + 1 < n; i++) {
				int e = inart_topo_arc_between(t, path[i], path[i + 1]);

				push[e] += vol;
				pull[e ^ 1] += vol;
			}
			if (end == ps)
				ing[end] += vol;
			else
				agg[end] += vol;
		}
	}
	*comm = *pt = *qt = 0;
	for (int e = 0; e < m; e++) {
		double res = t->arcs[e].gbps - t->arcs[e].bg_gbps;

		*pt = fmax(*pt, push[e] / res);
		*qt = fmax(*qt, pull[e] / res);
		*comm = fmax(*comm, (push[e] + pull[e]) / res);
	}
	for (int v = 0; v < t->n_nodes; v++)
		if (agg[v] > 0) {
			*pt = fmax(*pt, agg[v] / t->nodes[v].agg_gbps);
			*comm = fmax(*comm, agg[v] / t->nodes[v].agg_gbps);
		}
}

/* The naive evaluation's arrays (per arc, per node) and random_plan's tree
 * budgets, in one block. */
struct naive_bufs {
	size_t m, n; /* arcs, nodes */
	double *push, *pull, *agg, *ing;
	int *budget;
	void *block;
};

static void bufs_lay_out(void *obj, struct inart_slab *s)
{
	struct naive_bufs *b = obj;

	b->push = inart_slab_take(s, b->m, sizeof(*b->push));
	b->pull = inart_slab_take(s, b->m, sizeof(*b->pull));
	b->agg = inart_slab_take(s, b->n, sizeof(*b->agg));
	b->ing = inart_slab_take(s, b->n, sizeof(*b->ing));
	b->budget = inart_slab_take(s, b->n, sizeof(*b->budget));
}

static void bufs_make(struct naive_bufs *b, const struct inart_topo *t)
{
	*b = (struct naive_bufs){.m = (size_t)inart_topo_n_arcs(t), .n = (size_t)t->n_nodes};
	b->block = inart_slab_block(b, bufs_lay_out);
	assert_non_null(b->block);
}

/* A random plan for js, run on ev, agrees with the naive evaluation and the
 * one-shot one.  Returns the most trees of a job of the plan. */
static int check_random_plan(struct inart_evaluator *ev, const struct inart_topo *t,
			     const struct inart_jobs *js, struct inart_paths *paths,
			     struct inart_rng *r, struct naive_bufs *b)
{
	struct inart_plan *p = random_plan(t, js, paths, r, b->budget);
	struct inart_eval e1;
	struct inart_err err = {{0}};
	double comm, pt, qt;
	int most_trees = 0;

	naive(t, js, p, b->push, b->pull, b->agg, b->ing, &comm, &pt, &qt);
	if (inart_evaluator_run(ev, p, &e1, &err) != 0)
		fail_msg("%s", err.msg);
	assert_near(e1.comm_time_s, comm, 1e-9);
	assert_near(e1.push_time_s, pt, 1e-9);
	assert_near(e1.pull_time_s, qt, 1e-9);
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		assert_near(e1.arc_push_gbit[e], b->push[e], 1e-9);
		assert_near(e1.arc_pull_gbit[e], b->pull[e], 1e-9);
	}
	for (int v = 0; v < t->n_nodes; v++) {
		assert_near(e1.node_agg_gbit[v], b->agg[v], 1e-9);
		assert_near(e1.node_ingress_gbit[v], b->ing[v], 1e-9);
		assert_int_equal(e1.node_trees[v],
				 (t->nodes[v].ina ? t->nodes[v].trees : 0) - b->budget[v]);
	}
	/* the bottleneck resource has the comm time */
	if (e1.bottleneck_arc >= 0) {
		int e = e1.bottleneck_arc;
		double res = t->arcs[e].gbps - t->arcs[e].bg_gbps;

		assert_int_equal(e1.bottleneck_node, -1);
		assert_near((b->push[e] + b->pull[e]) / res, comm, 1e-9);
	} else {
		int v = e1.bottleneck_node;

		assert_true(v >= 0);
		assert_near(b->agg[v] / t->nodes[v].agg_gbps, comm, 1e-9);
	}
	/* comm >= max(push, pull) always */
	assert_true(comm >= fmax(pt, qt) - 1e-12);
	/* one-shot evaluation agrees */
	assert_int_equal(inart_evaluate(t, js, p, NULL), 0);
	assert_near(p->comm_time_s, comm, 1e-9);
	for (int j = 0; j < p->n_jobs; j++)
		most_trees = p->jobs[j].n_trees > most_trees ? p->jobs[j].n_trees : most_trees;
	inart_plan_destroy(p);
	return most_trees;
}

static void test_random_against_naive(void **state)
{
	struct inart_topo *t = mk_fattree4();
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_evaluator *ev;
	struct inart_rng r;
	struct naive_bufs b;

	(void)state;
	bufs_make(&b, t);
	inart_rng_seed(&r, 2024);
	for (int round = 0; round < 30; round++) {
		struct inart_jobs *js = inart_jobs_create();
		int nj = 1 + (int)inart_rng_below(&r, 3), used[16] = {0};

		/* jobs on distinct hosts */
		for (int j = 0; j < nj; j++) {
			int w[4], ps[3], nw = 1 + (int)inart_rng_below(&r, 3), np;
			char id[8];

			np = 1 + (int)inart_rng_below(&r, 2);
			for (int k = 0; k < nw + np; k++) {
				int h;

				do
					h = (int)inart_rng_below(&r, 16);
				while (used[h]);
				used[h] = 1;
				if (k < nw)
					w[k] = h;
				else
					ps[k - nw] = h;
			}
			snprintf(id, sizeof(id), "j%d", j);
			assert_int_equal(inart_jobs_add(js, id, w, nw, ps, np,
							1e8 * (double)(1 + inart_rng_below(&r, 20)),
							NULL, NULL),
					 j);
		}
		assert_int_equal(inart_jobs_validate(js, t, NULL), 0);
		ev = inart_evaluator_create(t, js);
		for (int k = 0; k < 20; k++)
			check_random_plan(ev, t, js, paths, &r, &b);
		inart_evaluator_destroy(ev);
		inart_jobs_destroy(js);
	}
	free(b.block);
	inart_paths_destroy(paths);
	inart_topo_destroy(t);
}

/* A failed run leaves nothing behind: the next run of a valid plan gives
 * the same result as a fresh evaluator. */
static void test_reuse_after_error(void **state)
{
	struct bad b;
	struct inart_evaluator *ev, *fresh;
	struct inart_plan *good, *bad;
	struct inart_eval r1, r2;

	(void)state;
	bad_make(&b, 4);
	ev = inart_evaluator_create(b.t, b.js);
	fresh = inart_evaluator_create(b.t, b.js);
	good = bad_plan(&b);
	bad = bad_plan(&b);
	/* bad: valid routes to both PSs, then a broken flow at the end */
	bad->jobs[0].split[0] = 0.5;
	bad->jobs[0].split[1] = 0.5;
	inart_plan_add_flow(bad, 0, b.w0, b.q, b.q, (int[]){b.w0, b.s1, b.n, b.s2, b.q}, 5);
	inart_plan_add_flow(bad, 0, b.w1, b.q, b.q, (int[]){b.w1, b.s1, b.n, b.ps}, 4);
	assert_int_equal(inart_evaluator_run(ev, bad, NULL, NULL), -EINVAL);
	assert_int_equal(inart_evaluator_run(ev, good, &r1, NULL), 0);
	assert_int_equal(inart_evaluator_run(fresh, good, &r2, NULL), 0);
	assert_near(r1.comm_time_s, r2.comm_time_s, 0);
	for (int e = 0; e < inart_topo_n_arcs(b.t); e++) {
		assert_near(r1.arc_push_gbit[e], r2.arc_push_gbit[e], 0);
		assert_near(r1.arc_pull_gbit[e], r2.arc_pull_gbit[e], 0);
	}
	for (int v = 0; v < b.t->n_nodes; v++) {
		assert_near(r1.node_agg_gbit[v], r2.node_agg_gbit[v], 0);
		assert_near(r1.node_ingress_gbit[v], r2.node_ingress_gbit[v], 0);
		assert_int_equal(r1.node_trees[v], r2.node_trees[v]);
	}
	assert_near(r1.arc_push_gbit[arc(b.t, b.n, b.s2)], 0, 0);
	inart_plan_destroy(good);
	inart_plan_destroy(bad);
	inart_evaluator_destroy(ev);
	inart_evaluator_destroy(fresh);
	bad_free(&b);
}

/* The per-job scratch grows with the jobs: an evaluator made for one small
 * job (its first run sizes the scratch for 1 (worker, PS) pair), then run on
 * plans of a set that has since gained a job with 32 pairs and trees, agrees
 * with the naive evaluation. */
static void test_scratch_grows(void **state)
{
	struct inart_topo *t = mk_fattree4();
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_jobs *js = inart_jobs_create();
	struct inart_evaluator *ev;
	struct inart_rng r;
	struct naive_bufs b;
	int w0[1] = {0}, p0[1] = {1}, w1[8], p1[4], most_trees = 0;

	(void)state;
	bufs_make(&b, t);
	for (int k = 0; k < 8; k++)
		w1[k] = 2 + k;
	for (int k = 0; k < 4; k++)
		p1[k] = 10 + k;
	assert_int_equal(inart_jobs_add(js, "small", w0, 1, p0, 1, 1e9, NULL, NULL), 0);
	assert_int_equal(inart_jobs_validate(js, t, NULL), 0);
	ev = inart_evaluator_create(t, js);
	assert_non_null(ev);
	assert_int_equal(inart_jobs_add(js, "large", w1, 8, p1, 4, 2e9, NULL, NULL), 1);
	assert_int_equal(inart_jobs_validate(js, t, NULL), 0);
	inart_rng_seed(&r, 77);
	for (int k = 0; k < 20; k++) {
		int most = check_random_plan(ev, t, js, paths, &r, &b);

		most_trees = most > most_trees ? most : most_trees;
	}
	assert_true(most_trees > 0); /* the trees were indexed too */
	inart_evaluator_destroy(ev);
	free(b.block);
	inart_jobs_destroy(js);
	inart_paths_destroy(paths);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_star_no_ina),
	    cmocka_unit_test(test_star_ina),
	    cmocka_unit_test(test_agg_bottleneck),
	    cmocka_unit_test(test_background),
	    cmocka_unit_test(test_direction_capacity),
	    cmocka_unit_test(test_push_pull_share_arc),
	    cmocka_unit_test(test_split_two_ps),
	    cmocka_unit_test(test_multilevel_tree),
	    cmocka_unit_test_setup_teardown(test_invalid_paths, bad_setup, bad_teardown),
	    cmocka_unit_test(test_invalid_residual),
	    cmocka_unit_test(test_invalid_forward_residual),
	    cmocka_unit_test_setup_teardown(test_invalid_aggregation, bad_setup, bad_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_tree_structure, bad_setup, bad_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_split, bad_setup, bad_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_flows, bad_setup, bad_teardown),
	    cmocka_unit_test(test_invalid_budget),
	    cmocka_unit_test(test_random_against_naive),
	    cmocka_unit_test(test_reuse_after_error),
	    cmocka_unit_test(test_scratch_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
