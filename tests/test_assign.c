/* Tests of assign: realizing an assignment as a plan's routes, the trees it
 * uses, and its conversions to and from an LP's x and a plan. */
#include "testutil.h"

#include <math.h>

#include "cp/assign.h"
#include "cp/cand.h"
#include "cp/evaluate.h"

/* Realize an assignment and check the plan with the evaluator. */
static void test_realize(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-h2", "e0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	struct inart_plan *p = inart_plan_create(js, "test");
	struct inart_assign a;
	struct inart_err err;
	int e0 = inart_topo_find(t, "e0"), h1 = inart_topo_find(t, "h1");
	char used[4];

	(void)state;
	p->jobs[0].split[0] = 1;
	assert_int_equal(inart_assign_init(&a, c), 0);
	a.slot_choice[0] = a.slot_choice[1] = c->flows[0].first_choice + 1;
	inart_assign_used_trees(c, &a, p, used);
	assert_int_equal(used[0], 1);
	assert_int_equal(inart_assign_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[0].flows[1].worker, h1);
	assert_int_equal(p->jobs[0].flows[1].path[0], h1);
	assert_int_equal(p->jobs[0].flows[1].path[1], e0);
	assert_int_equal(p->jobs[0].flows[1].agg, e0);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	/* 8 Gbit per worker merged at e0: e0->h2 carries 8 Gbit push, 8 pull
	 * goes back on h2->e0; each host link 8 + 8 in the two directions. */
	assert_true(p->comm_time_s > 0.0799 && p->comm_time_s < 0.0801);

	/* Realizing again replaces the routes (no INA: flows to the PS). */
	a.slot_choice[0] = a.slot_choice[1] = c->flows[0].first_choice;
	assert_int_equal(inart_assign_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_int_equal(p->jobs[0].n_trees, 0);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	assert_true(p->comm_time_s > 0.1599 && p->comm_time_s < 0.1601);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* The chain of test_cand's test_multilevel, both workers at their ToR trees,
 * the trees into a0, a0 into the PS. */
static struct inart_topo *chain(struct inart_jobs **js, struct inart_cand **c,
				struct inart_assign *a)
{
	struct inart_topo *t =
	    tu_topo("h0-e0 h1-e1 e0-a0 e1-a0 a0-e2 e2-h2", "e0:400:2 e1:400:2 a0:400:2 e2:400:2");

	*js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	*c = tu_cand(t, *js, 2, 0);
	assert_int_equal(inart_assign_init(a, *c), 0);
	a->slot_choice[0] = (*c)->flows[0].first_choice + 1;
	a->slot_choice[1] = (*c)->flows[1].first_choice + 1;
	a->tree_choice[0] = (*c)->trees[0].first_choice + 1;
	a->tree_choice[1] = (*c)->trees[1].first_choice + 1;
	return t;
}

static void assert_same_assign(const struct inart_cand *c, const struct inart_assign *a,
			       const struct inart_assign *b)
{
	assert_memory_equal(a->slot_choice, b->slot_choice, sizeof(int) * (size_t)c->n_slots);
	assert_memory_equal(a->tree_choice, b->tree_choice, sizeof(int) * (size_t)c->n_trees);
}

/* to_x then from_x gives the assignment back; the x is what the LP's would
 * be: per flow its members' shares sum to 1, a used tree's choice is 1. */
static void test_x_roundtrip(void **state)
{
	struct inart_jobs *js;
	struct inart_cand *c;
	struct inart_assign a, b;
	struct inart_topo *t = chain(&js, &c, &a);
	struct inart_plan *p = inart_plan_create(js, "test");
	double *x = calloc((size_t)c->n_choices, sizeof(double));
	char used[4];

	(void)state;
	assert_non_null(x);
	p->jobs[0].split[0] = 1;
	inart_assign_used_trees(c, &a, p, used);
	assert_memory_equal(used, ((char[]){1, 1, 1, 0}), 4); /* e0, e1, a0 used; e2 not */
	inart_assign_to_x(c, &a, p, x);
	for (int f = 0; f < c->n_flows; f++) {
		double sum = 0;

		for (int q = 0; q < c->flows[f].n_choices; q++)
			sum += x[c->flows[f].first_choice + q];
		assert_true(fabs(sum - 1) < 1e-12);
	}
	assert_true(x[a.tree_choice[0]] == 1 && x[a.tree_choice[1]] == 1);
	assert_true(x[c->trees[3].first_choice] == 0);
	assert_int_equal(inart_assign_init(&b, c), 0);
	b.slot_choice[0] = b.tree_choice[0] = -1;
	inart_assign_from_x(c, x, &b);
	assert_same_assign(c, &a, &b);
	free(x);
	inart_assign_free(&b);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* from_plan: the assignment that realizes a plan's routes (realizing it again
 * gives the same routes and time); -ENOENT for a route not among the
 * candidates. */
static void test_from_plan(void **state)
{
	struct inart_jobs *js;
	struct inart_cand *c;
	struct inart_assign a, b;
	struct inart_topo *t = chain(&js, &c, &a);
	struct inart_plan *p = inart_plan_create(js, "test");
	struct inart_err err;

	(void)state;
	p->jobs[0].split[0] = 1;
	assert_int_equal(inart_assign_realize(c, &a, p), 0);
	assert_int_equal(inart_assign_init(&b, c), 0);
	assert_int_equal(inart_assign_from_plan(c, js, p, &b), 0);
	assert_memory_equal(a.slot_choice, b.slot_choice, sizeof(int) * (size_t)c->n_slots);
	for (int k = 0; k < 3; k++) /* the used trees (e2's is unused) */
		assert_int_equal(a.tree_choice[k], b.tree_choice[k]);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	assert_true(p->comm_time_s > 0.0799 && p->comm_time_s < 0.0801);

	/* a flow aggregating at its own worker is no candidate */
	p->jobs[0].flows[0].agg = p->jobs[0].flows[0].worker;
	assert_int_equal(inart_assign_from_plan(c, js, p, &b), -ENOENT);
	inart_assign_free(&b);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_realize),
	    cmocka_unit_test(test_x_roundtrip),
	    cmocka_unit_test(test_from_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
