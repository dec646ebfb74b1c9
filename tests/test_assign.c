/* Tests of assign: realizing an assignment as a plan's routes, the trees it
 * uses, and its conversions to and from an LP's x and a plan. */
#include "testutil.h"

#include <math.h>

#include "cp/model/assign.h"
#include "cp/model/cand.h"
#include "cp/model/evaluate.h"

/* Realize an assignment and check the plan with the evaluator. */
static void test_realize(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-h2", "e0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	struct inart_plan *p = inart_plan_create(js, "test");
	struct inart_assign a;
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
	/* 8 Gbit per worker merged at e0: e0->h2 carries 8 Gbit push, 8 pull
	 * goes back on h2->e0; each host link 8 + 8 in the two directions. */
	assert_true(fabs(tu_comm_time(t, js, p) - 0.08) < 1e-4);

	/* Realizing again replaces the routes (no INA: flows to the PS). */
	a.slot_choice[0] = a.slot_choice[1] = c->flows[0].first_choice;
	assert_int_equal(inart_assign_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_int_equal(p->jobs[0].n_trees, 0);
	assert_true(fabs(tu_comm_time(t, js, p) - 0.16) < 1e-4);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* The chain of test_cand's test_multilevel, both workers at their ToR trees,
 * the trees into a0, a0 into the PS; b a second assignment, p a plan with
 * the whole share on the PS. */
struct chain {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_cand *c;
	struct inart_plan *p;
	struct inart_assign a, b;
};

static int chain_setup(void **state)
{
	struct chain *ch = calloc(1, sizeof(*ch));
	struct inart_cand *c;

	assert_non_null(ch);
	ch->t =
	    tu_topo("h0-e0 h1-e1 e0-a0 e1-a0 a0-e2 e2-h2", "e0:400:2 e1:400:2 a0:400:2 e2:400:2");
	ch->js = tu_jobs1(ch->t, "h0 h1", "h2", 1e9);
	ch->c = c = tu_cand(ch->t, ch->js, 2, 0);
	ch->p = inart_plan_create(ch->js, "test");
	assert_non_null(ch->p);
	ch->p->jobs[0].split[0] = 1;
	assert_int_equal(inart_assign_init(&ch->a, c), 0);
	assert_int_equal(inart_assign_init(&ch->b, c), 0);
	ch->a.slot_choice[0] = c->flows[0].first_choice + 1;
	ch->a.slot_choice[1] = c->flows[1].first_choice + 1;
	ch->a.tree_choice[0] = c->trees[0].first_choice + 1;
	ch->a.tree_choice[1] = c->trees[1].first_choice + 1;
	*state = ch;
	return 0;
}

static int chain_teardown(void **state)
{
	struct chain *ch = *state;

	inart_assign_free(&ch->a);
	inart_assign_free(&ch->b);
	tu_free(ch->t, ch->js, ch->c, ch->p);
	free(ch);
	return 0;
}

/* to_x then from_x gives the assignment back; the x is what the LP's would
 * be: per flow its members' shares sum to 1, a used tree's choice is 1. */
static void test_x_roundtrip(void **state)
{
	struct chain *ch = *state;
	const struct inart_cand *c = ch->c;
	double *x = calloc((size_t)c->n_choices, sizeof(double));
	char used[4];

	assert_non_null(x);
	inart_assign_used_trees(c, &ch->a, ch->p, used);
	assert_memory_equal(used, ((char[]){1, 1, 1, 0}), 4); /* e0, e1, a0 used; e2 not */
	inart_assign_to_x(c, &ch->a, ch->p, x);
	for (int f = 0; f < c->n_flows; f++) {
		double sum = 0;

		for (int q = 0; q < c->flows[f].n_choices; q++)
			sum += x[c->flows[f].first_choice + q];
		assert_true(fabs(sum - 1) < 1e-12);
	}
	assert_true(x[ch->a.tree_choice[0]] == 1 && x[ch->a.tree_choice[1]] == 1);
	assert_true(x[c->trees[3].first_choice] == 0);
	ch->b.slot_choice[0] = ch->b.tree_choice[0] = -1;
	inart_assign_from_x(c, x, &ch->b);
	assert_memory_equal(ch->a.slot_choice, ch->b.slot_choice, sizeof(int) * (size_t)c->n_slots);
	assert_memory_equal(ch->a.tree_choice, ch->b.tree_choice, sizeof(int) * (size_t)c->n_trees);
	free(x);
}

/* from_plan: the assignment that realizes a plan's routes (the used trees'
 * choices; e2's is unused); -ENOENT for a route not among the candidates. */
static void test_from_plan(void **state)
{
	struct chain *ch = *state;

	assert_int_equal(inart_assign_realize(ch->c, &ch->a, ch->p), 0);
	assert_true(fabs(tu_comm_time(ch->t, ch->js, ch->p) - 0.08) < 1e-4);
	assert_int_equal(inart_assign_from_plan(ch->c, ch->js, ch->p, &ch->b), 0);
	assert_memory_equal(ch->a.slot_choice, ch->b.slot_choice,
			    sizeof(int) * (size_t)ch->c->n_slots);
	assert_memory_equal(ch->a.tree_choice, ch->b.tree_choice, sizeof(int) * 3);

	/* a flow aggregating at its own worker is no candidate */
	ch->p->jobs[0].flows[0].agg = ch->p->jobs[0].flows[0].worker;
	assert_int_equal(inart_assign_from_plan(ch->c, ch->js, ch->p, &ch->b), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_realize),
	    cmocka_unit_test_setup_teardown(test_x_roundtrip, chain_setup, chain_teardown),
	    cmocka_unit_test_setup_teardown(test_from_plan, chain_setup, chain_teardown)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
