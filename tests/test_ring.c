/*
 * test_ring: the ring all-reduce baseline against hand-computed times, its
 * ring order and paths, and the evaluator's rules for ring plans.
 *
 * With N workers and a gradient of G, every worker sends (N - 1)/N G to its
 * successor in the reduce-scatter (push) and as much in the all-gather
 * (pull), both on the hop's forward arcs, and the successor's ACKs go
 * back (INART_EVAL_RING_ACK_SHARE of it): a worker's access link carries
 * 2 (N - 1)/N G (1 + ACK share) in each direction (its own sends and its
 * ACKs up, its predecessor's sends and its successor's ACKs down).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "cp/model/evaluate.h"
#include "cp/model/formats.h"
#include "cp/planner/ring.h"

static struct inart_plan *ring(const struct inart_topo *t, const struct inart_jobs *js)
{
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_plan *p = NULL;
	struct inart_err err;

	assert_non_null(paths);
	if (inart_ring_plan(t, js, paths, &p, &err) < 0)
		fail_msg("ring: %s", err.msg);
	inart_paths_destroy(paths);
	return p;
}

/* A topology from links, one job of `workers` (PS h9, G = 1 Gbit) and its
 * ring plan. */
struct fx {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
};

static struct fx ring_on(const char *links, const char *workers)
{
	struct fx f;

	f.t = tu_topo(links, "");
	f.js = tu_jobs1(f.t, workers, "h9", 1.25e8);
	f.p = ring(f.t, f.js);
	return f;
}

/* Times and loads with the ACKs counted. */
#define ACK (1 + INART_EVAL_RING_ACK_SHARE)

static void assert_near(double got, double want)
{
	if (!(fabs(got - want) <= 1e-9 * fabs(want)))
		fail_msg("got %.12g, want %.12g", got, want);
}

/* 4 workers on one switch, 100 Gbit/s, G = 1 Gbit: each access link carries
 * 2 * 3/4 * 1 = 1.5 Gbit each way and its ACKs: 15 ms x ACK; push and
 * pull half each. */
static void test_four_on_a_switch(void **state)
{
	struct fx f = ring_on("h0-s0 h1-s0 h2-s0 h3-s0 s0-h9", "h0 h1 h2 h3");
	struct inart_topo *t = f.t;
	struct inart_jobs *js = f.js;
	struct inart_plan *p = f.p;
	struct inart_eval e;
	struct inart_evaluator *ev = inart_evaluator_create(t, js);
	struct inart_err err;

	(void)state;
	assert_string_equal(p->algorithm, "ring");
	assert_near(p->comm_time_s, 0.015 * ACK);
	assert_near(p->push_time_s, 0.0075 * ACK);
	assert_near(p->pull_time_s, 0.0075 * ACK);
	assert_int_equal(p->jobs[0].n_ring, 4);
	assert_int_equal(p->jobs[0].n_flows, 0);
	assert_int_equal(inart_evaluator_run(ev, p, &e, &err), 0);
	for (int k = 0; k < 4; k++) {
		int h = js->jobs[0].workers[k], up = inart_topo_arc_between(t, h, tu_find(t, "s0"));

		assert_near(e.arc_push_gbit[up] + e.arc_pull_gbit[up], 1.5 * ACK);
		assert_near(e.arc_push_gbit[up ^ 1] + e.arc_pull_gbit[up ^ 1], 1.5 * ACK);
	}
	/* the PS is not used: its link carries nothing */
	assert_true(
	    e.arc_push_gbit[inart_topo_arc_between(t, tu_find(t, "s0"), tu_find(t, "h9"))] == 0);
	inart_evaluator_destroy(ev);
	tu_free(t, js, NULL, p);
}

/*
 * Two racks of two workers joined by a 10 Gbit/s link, G = 1 Gbit: the ring
 * (by locality) crosses between the racks once each way, 2 * 3/4 = 1.5 Gbit
 * per direction and the other crossing's ACKs: 150 ms x ACK.  A
 * rack-unaware order (h0 h2 h1 h3) would cross four times: 600 ms x ACK.
 */
static void test_two_racks(void **state)
{
	struct fx f = ring_on("h0-a h1-a h2-b h3-b a-b:10 b-h9", "h2 h0 h3 h1");
	const struct inart_job_plan *jp = &f.p->jobs[0];
	static const char *const order[] = {"h0", "h1", "h2", "h3", "h0"};

	(void)state;
	assert_near(f.p->comm_time_s, 0.15 * ACK);
	/* order: h0 h1 (rack a), then h2 h3 (rack b), back to h0 */
	for (int i = 0; i < 4; i++)
		assert_int_equal(jp->ring[i].path[0], tu_find(f.t, order[i]));
	assert_int_equal(jp->ring[3].path[jp->ring[3].n_path - 1], tu_find(f.t, order[4]));
	tu_free(f.t, f.js, NULL, f.p);
}

/* Two equal paths between the racks: the second hop across takes the other
 * one, so each direction of each path carries one hop. */
static void test_paths_spread(void **state)
{
	struct fx f =
	    ring_on("h0-a h1-a h2-b h3-b a-x:10 x-b:10 a-y:10 y-b:10 b-h9", "h0 h1 h2 h3");
	struct inart_jobs *js2 = inart_jobs_create();
	struct inart_err err;
	struct inart_plan *q;

	(void)state;
	assert_near(f.p->comm_time_s, 0.15 * ACK);
	/* a second job of the same shape: its crossings take the spine the
	 * first job left free, so no arc carries two hops */
	tu_job(js2, f.t, "a", "h0 h1 h2 h3", "h9", 1.25e8);
	tu_job(js2, f.t, "b", "h1 h0 h3 h2", "h9", 1.25e8);
	assert_int_equal(inart_jobs_validate(js2, f.t, &err), 0);
	q = ring(f.t, js2);
	assert_near(q->comm_time_s, 0.15 * ACK);
	inart_plan_destroy(q);
	inart_jobs_destroy(js2);
	tu_free(f.t, f.js, NULL, f.p);
}

/* A single worker: one hop of one node, no traffic. */
static void test_single_worker(void **state)
{
	struct fx f = ring_on("h0-s0 s0-h9", "h0");

	(void)state;
	assert_int_equal(f.p->jobs[0].n_ring, 1);
	assert_int_equal(f.p->jobs[0].ring[0].n_path, 1);
	assert_true(f.p->comm_time_s == 0);
	tu_free(f.t, f.js, NULL, f.p);
}

static void expect_invalid(const struct inart_topo *t, const struct inart_jobs *js,
			   struct inart_plan *p, const char *text)
{
	struct inart_err err = {{0}};

	assert_int_equal(inart_evaluate(t, js, p, &err), -EINVAL);
	if (strstr(err.msg, text) == NULL)
		fail_msg("message '%s' lacks '%s'", err.msg, text);
}

/* Replace job 0's routes by the ring hops in `hops` ("h0 s0 h1, h1 s0 h0"). */
static void set_ring(struct inart_plan *p, const struct inart_topo *t, const char *hops)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", hops);
	inart_plan_clear_routes(p, 0);
	for (char *h = strtok_r(buf, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
		int nodes[32], n = tu_path(t, h, nodes);

		assert_int_equal(inart_plan_add_ring_hop(p, 0, nodes, n), 0);
	}
}

/* The evaluator's rules for ring plans. */
static void test_rules(void **state)
{
	static const char *const bad[][2] = {
	    {"h0 s0 h1, h1 s0 h2", "the ring has 2 hops for 3 workers"},
	    {"h0 s0 h1, h1 s0 h2, h2 s0 h1", "path ends at 'h1', not at 'h0'"},
	    {"h0 s0 h1, h1 s0 h0, h0 s0 h2", "the ring visits 'h0' twice"},
	    {"h0 s0 h1, h1 s0 h9, h9 s0 h0", "starts at 'h9', which is not a worker"},
	};
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 h2-s0 s0-h9", "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h2", "h9", 1.25e8);
	struct inart_plan *p = inart_plan_create(js, "hand");

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set_ring(p, t, bad[i][0]);
		expect_invalid(t, js, p, bad[i][1]);
	}
	set_ring(p, t, "h0 s0 h2, h2 s0 h1, h1 s0 h0");
	assert_int_equal(inart_evaluate(t, js, p, NULL), 0);
	/* 3 workers: 2 * 2/3 Gbit and its ACKs over 100 Gbit/s */
	assert_near(p->comm_time_s, 2.0 * 2 / 3 / 100 * ACK);
	tu_flow(p, t, 0, "h0", "h9", "h9", "h0 s0 h9");
	expect_invalid(t, js, p, "a ring all-reduce has no flows or trees");
	tu_free(t, js, NULL, p);
}

/* A ring plan survives the plan file round trip. */
static void test_file_round_trip(void **state)
{
	struct fx f = ring_on("h0-s0 h1-s0 h2-s0 h3-s0 s0-h9", "h0 h1 h2 h3");
	struct inart_topo *t = f.t;
	struct inart_jobs *js = f.js;
	struct inart_plan *p = f.p, *q;
	struct inart_err err;
	char *text = inart_plan_dump(p, t, js);

	(void)state;
	assert_non_null(strstr(text, "\"ring\": ["));
	q = inart_plan_parse(text, strlen(text), "ring.json", t, js, &err);
	if (q == NULL)
		fail_msg("parse: %s", err.msg);
	assert_int_equal(q->jobs[0].n_ring, 4);
	assert_int_equal(inart_evaluate(t, js, q, &err), 0);
	assert_near(q->comm_time_s, p->comm_time_s);
	assert_true(inart_plan_has_ring(q));
	inart_plan_destroy(q);
	free(text);
	tu_free(t, js, NULL, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_four_on_a_switch),
	    cmocka_unit_test(test_two_racks),
	    cmocka_unit_test(test_paths_spread),
	    cmocka_unit_test(test_single_worker),
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_file_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
