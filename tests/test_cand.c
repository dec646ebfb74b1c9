/* Tests of cand: grouping, choices, tree candidates, realization. */
#include "testutil.h"

#include "cp/cand.h"
#include "cp/evaluate.h"

/* Two workers under one INA switch, PS on the same switch. */
static void test_star(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-h2", "e0:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_cand *c = tu_cand(t, js, 4, 0);
	int e0 = inart_topo_find(t, "e0"), h2 = inart_topo_find(t, "h2");

	(void)state;
	assert_int_equal(c->n_groups, 1);
	assert_int_equal(c->groups[0].n_members, 2);
	assert_int_equal(c->n_flows, 1);
	assert_int_equal(c->n_slots, 2);
	/* Path h0-e0-h2: PS choice first, then aggregation at e0. */
	assert_int_equal(c->flows[0].n_choices, 2);
	assert_int_equal(c->choices[c->flows[0].first_choice].agg, h2);
	assert_int_equal(c->choices[c->flows[0].first_choice].tree, -1);
	assert_int_equal(c->choices[c->flows[0].first_choice + 1].agg, e0);
	assert_int_equal(c->choices[c->flows[0].first_choice + 1].tree, 0);
	assert_int_equal(
	    inart_pathset_len(&c->paths, c->choices[c->flows[0].first_choice + 1].path), 2);
	assert_int_equal(c->n_trees, 1);
	assert_int_equal(c->trees[0].sw, e0);
	assert_int_equal(c->trees[0].depth, 1);
	assert_int_equal(c->trees[0].n_choices, 1);
	assert_int_equal(c->choices[c->trees[0].first_choice].agg, h2);
	inart_cand_destroy(c);

	c = tu_cand(t, js, 4, 1);
	assert_int_equal(c->n_groups, 2);
	assert_int_equal(c->n_flows, 2);
	assert_int_equal(c->n_trees, 1);
	tu_free(t, js, c, NULL);
}

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
	inart_cand_used_trees(c, &a, p, used);
	assert_int_equal(used[0], 1);
	assert_int_equal(inart_cand_realize(c, &a, p), 0);
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
	assert_int_equal(inart_cand_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_int_equal(p->jobs[0].n_trees, 0);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	assert_true(p->comm_time_s > 0.1599 && p->comm_time_s < 0.1601);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* A chain of INA switches: trees may send to closer trees (multi-level). */
static void test_multilevel(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-e0 h1-e1 e0-a0 e1-a0 a0-e2 e2-h2", "e0:400:2 e1:400:2 a0:400:2 e2:400:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_cand *c = tu_cand(t, js, 2, 0);
	int a0 = inart_topo_find(t, "a0");
	struct inart_plan *p = inart_plan_create(js, "test");
	struct inart_assign a;
	struct inart_err err;

	(void)state;
	assert_int_equal(c->n_groups, 2);
	assert_int_equal(c->n_trees, 4); /* e0, e1, a0, e2 */
	/* deepest first */
	assert_int_equal(c->trees[0].depth, 3);
	assert_int_equal(c->trees[1].depth, 3);
	assert_int_equal(c->trees[2].sw, a0);
	assert_int_equal(c->trees[3].depth, 1);
	/* tree e0: path e0-a0-e2-h2 with parents h2, a0, e2 */
	assert_int_equal(c->trees[0].n_choices, 3);
	/* flow h0: path h0-e0-a0-e2-h2: PS, e0, a0, e2 */
	assert_int_equal(c->flows[0].n_choices, 4);

	/* Both workers at their ToR, ToR trees into a0, a0 into the PS. */
	p->jobs[0].split[0] = 1;
	assert_int_equal(inart_assign_init(&a, c), 0);
	a.slot_choice[0] = c->flows[0].first_choice + 1;
	a.slot_choice[1] = c->flows[1].first_choice + 1;
	a.tree_choice[0] = c->trees[0].first_choice + 1;
	a.tree_choice[1] = c->trees[1].first_choice + 1;
	assert_int_equal(c->choices[a.tree_choice[0]].agg, a0);
	assert_int_equal(inart_cand_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_trees, 3);
	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	/* every link carries one 8 Gbit stream each way */
	assert_true(p->comm_time_s > 0.0799 && p->comm_time_s < 0.0801);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* Switches without INA or without a tree budget give no tree. */
static void test_no_ina(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-h2", "e0:100:0");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_cand *c = tu_cand(t, js, 4, 0);

	(void)state;
	assert_int_equal(c->n_trees, 0);
	assert_int_equal(c->flows[0].n_choices, 1);
	tu_free(t, js, c, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_star),
	    cmocka_unit_test(test_realize),
	    cmocka_unit_test(test_multilevel),
	    cmocka_unit_test(test_no_ina),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
