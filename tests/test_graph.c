/* Tests of graph: node and link checks, the id index, arcs and adjacency. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cp/model/graph.h"

static void expect_msg(const struct inart_err *err, const char *words)
{
	if (strstr(err->msg, words) == NULL)
		fail_msg("message '%s' lacks '%s'", err->msg, words);
}

static void test_nodes(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_err err = {{0}};

	(void)state;
	assert_non_null(t);
	assert_int_equal(inart_topo_add_node(t, "h0", INART_NODE_HOST, 0, 0, 0, &err), 0);
	assert_int_equal(inart_topo_add_node(t, "s0", INART_NODE_SWITCH, 1, 400, 8, &err), 1);
	assert_int_equal(inart_topo_add_node(t, "s1", INART_NODE_SWITCH, 0, 123, 5, &err), 2);
	assert_int_equal(t->n_nodes, 3);
	assert_int_equal(t->nodes[1].ina, 1);
	assert_true(t->nodes[1].agg_gbps == 400);
	assert_int_equal(t->nodes[1].trees, 8);
	/* non-INA switch: capacities are ignored */
	assert_int_equal(t->nodes[2].ina, 0);
	assert_true(t->nodes[2].agg_gbps == 0);
	assert_int_equal(t->nodes[2].trees, 0);

	assert_int_equal(inart_topo_add_node(t, "h0", INART_NODE_SWITCH, 0, 0, 0, &err), -EEXIST);
	expect_msg(&err, "duplicate node id 'h0'");
	assert_int_equal(inart_topo_add_node(t, "", INART_NODE_HOST, 0, 0, 0, &err), -EINVAL);
	expect_msg(&err, "empty id");
	assert_int_equal(inart_topo_add_node(t, NULL, INART_NODE_HOST, 0, 0, 0, &err), -EINVAL);
	assert_int_equal(inart_topo_add_node(t, "h1", INART_NODE_HOST, 1, 100, 1, &err), -EINVAL);
	expect_msg(&err, "'h1': a host cannot be INA-capable");
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, 0, 1, &err), -EINVAL);
	expect_msg(&err, "'s2': aggregation throughput must be > 0");
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, -5, 1, &err), -EINVAL);
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, NAN, 1, &err), -EINVAL);
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, INFINITY, 1, &err),
			 -EINVAL);
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, 10, -1, &err), -EINVAL);
	expect_msg(&err, "'s2': tree budget must be >= 0");
	/* a budget of 0 is allowed */
	assert_int_equal(inart_topo_add_node(t, "s2", INART_NODE_SWITCH, 1, 10, 0, &err), 3);
	/* failed adds left nothing behind */
	assert_int_equal(t->n_nodes, 4);
	assert_int_equal(inart_topo_find(t, "h1"), -1);
	assert_int_equal(inart_topo_find(t, "s2"), 3);
	inart_topo_destroy(t);
	inart_topo_destroy(NULL);
}

/* The id index survives many rebuilds. */
static void test_find_many(void **state)
{
	struct inart_topo *t = inart_topo_create();
	char id[32];

	(void)state;
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "%s%d", i % 2 ? "sw" : "host", i);
		assert_int_equal(inart_topo_add_node(t, id,
						     i % 2 ? INART_NODE_SWITCH : INART_NODE_HOST, 0,
						     0, 0, NULL),
				 i);
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(id, sizeof(id), "%s%d", i % 2 ? "sw" : "host", i);
		assert_int_equal(inart_topo_find(t, id), i);
		assert_string_equal(t->nodes[i].id, id);
	}
	assert_int_equal(inart_topo_find(t, "host1"), -1);
	assert_int_equal(inart_topo_find(t, "sw0"), -1);
	assert_int_equal(inart_topo_find(t, ""), -1);
	assert_int_equal(inart_topo_add_node(t, "sw2999", INART_NODE_HOST, 0, 0, 0, NULL), -EEXIST);
	inart_topo_destroy(t);
}

static void test_link_checks(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_err err = {{0}};
	int a, b;

	(void)state;
	a = inart_topo_add_node(t, "a", INART_NODE_HOST, 0, 0, 0, NULL);
	b = inart_topo_add_node(t, "b", INART_NODE_SWITCH, 0, 0, 0, NULL);
	/* self loop */
	assert_int_equal(inart_topo_add_link(t, a, a, 10, 10, 0, 0, &err), -EINVAL);
	expect_msg(&err, "link a-a joins a node to itself");
	/* unknown nodes */
	assert_int_equal(inart_topo_add_link(t, a, 7, 10, 10, 0, 0, &err), -EINVAL);
	expect_msg(&err, "unknown node");
	assert_int_equal(inart_topo_add_link(t, -1, b, 10, 10, 0, 0, &err), -EINVAL);
	/* capacities */
	assert_int_equal(inart_topo_add_link(t, a, b, 0, 10, 0, 0, &err), -EINVAL);
	expect_msg(&err, "link a-b: capacity a->b must be > 0");
	assert_int_equal(inart_topo_add_link(t, a, b, 10, -1, 0, 0, &err), -EINVAL);
	expect_msg(&err, "capacity b->a must be > 0");
	assert_int_equal(inart_topo_add_link(t, a, b, NAN, 10, 0, 0, &err), -EINVAL);
	assert_int_equal(inart_topo_add_link(t, a, b, 10, INFINITY, 0, 0, &err), -EINVAL);
	/* background */
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 10, -1, 0, &err), -EINVAL);
	expect_msg(&err, "background a->b must be >= 0");
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 10, 0, NAN, &err), -EINVAL);
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 10, 10.5, 0, &err), -EINVAL);
	expect_msg(&err, "background a->b (10.5 Gbit/s) is above the capacity (10 Gbit/s)");
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 4, 0, 5, &err), -EINVAL);
	expect_msg(&err, "background b->a");
	assert_int_equal(t->n_links, 0);
	/* background equal to the capacity is allowed (zero residual) */
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 4, 10, 1, &err), 0);
	assert_int_equal(t->n_links, 1);
	assert_true(inart_arc_residual(&t->arcs[0]) == 0);
	assert_true(inart_arc_residual(&t->arcs[1]) == 3);
	inart_topo_destroy(t);
}

static void test_duplicate_link(void **state)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_err err = {{0}};
	int a, b, c;

	(void)state;
	a = inart_topo_add_node(t, "a", INART_NODE_SWITCH, 0, 0, 0, NULL);
	b = inart_topo_add_node(t, "b", INART_NODE_SWITCH, 0, 0, 0, NULL);
	c = inart_topo_add_node(t, "c", INART_NODE_SWITCH, 0, 0, 0, NULL);
	assert_int_equal(inart_topo_add_link(t, a, b, 10, 10, 0, 0, NULL), 0);
	assert_int_equal(inart_topo_add_link(t, b, c, 10, 10, 0, 0, NULL), 1);
	assert_int_equal(inart_topo_finalize(t, &err), 0);
	/* the same pair in the other order is a duplicate too */
	assert_int_equal(inart_topo_add_link(t, b, a, 10, 10, 0, 0, NULL), 2);
	assert_int_equal(t->finalized, 0);
	assert_int_equal(inart_topo_finalize(t, &err), -EINVAL);
	expect_msg(&err, "duplicate link");
	inart_topo_destroy(t);
}

static void test_arcs_and_adjacency(void **state)
{
	/* star: hub 0 with leaves 1..5 added in a scrambled order, plus 4-5 */
	struct inart_topo *t = inart_topo_create();
	int order[5] = {3, 1, 5, 2, 4};
	char id[8];

	(void)state;
	for (int i = 0; i < 6; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		inart_topo_add_node(t, id, INART_NODE_SWITCH, 0, 0, 0, NULL);
	}
	for (int i = 0; i < 5; i++)
		assert_int_equal(inart_topo_add_link(t, 0, order[i], 10 + i, 20 + i, 1, 2, NULL),
				 i);
	assert_int_equal(inart_topo_add_link(t, 5, 4, 7, 8, 0, 0, NULL), 5);
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	assert_int_equal(inart_topo_n_arcs(t), 12);
	/* link i is arc 2i (a->b) and 2i+1 (b->a) */
	for (int i = 0; i < 5; i++) {
		const struct inart_arc *f = &t->arcs[2 * i], *r = &t->arcs[2 * i + 1];

		assert_int_equal(f->from, 0);
		assert_int_equal(f->to, order[i]);
		assert_int_equal(r->from, order[i]);
		assert_int_equal(r->to, 0);
		assert_true(f->gbps == 10 + i && r->gbps == 20 + i);
		assert_true(f->bg_gbps == 1 && r->bg_gbps == 2);
		assert_int_equal(inart_topo_arc_between(t, 0, order[i]), 2 * i);
		assert_int_equal(inart_topo_arc_between(t, order[i], 0), 2 * i + 1);
	}
	assert_int_equal(inart_topo_arc_between(t, 5, 4), 10);
	assert_int_equal(inart_topo_arc_between(t, 4, 5), 11);
	assert_int_equal(inart_topo_arc_between(t, 1, 2), -1);
	assert_int_equal(inart_topo_arc_between(t, 0, 0), -1);
	/* CSR: every arc listed once, under its tail, sorted by head */
	assert_int_equal(t->out_off[0], 0);
	assert_int_equal(t->out_off[6], 12);
	assert_int_equal(t->out_off[1] - t->out_off[0], 5);
	for (int v = 0; v < 6; v++)
		for (int i = t->out_off[v]; i < t->out_off[v + 1]; i++) {
			assert_int_equal(t->arcs[t->arc_out[i]].from, v);
			if (i > t->out_off[v])
				assert_true(t->arcs[t->arc_out[i - 1]].to <
					    t->arcs[t->arc_out[i]].to);
		}
	for (int i = 0; i < 5; i++)
		assert_int_equal(t->arcs[t->arc_out[i]].to, i + 1);
	inart_topo_destroy(t);
}

static void test_empty_topology(void **state)
{
	struct inart_topo *t = inart_topo_create();

	(void)state;
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
	assert_int_equal(inart_topo_n_arcs(t), 0);
	assert_int_equal(inart_topo_find(t, "x"), -1);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nodes),
	    cmocka_unit_test(test_find_many),
	    cmocka_unit_test(test_link_checks),
	    cmocka_unit_test(test_duplicate_link),
	    cmocka_unit_test(test_arcs_and_adjacency),
	    cmocka_unit_test(test_empty_topology),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
