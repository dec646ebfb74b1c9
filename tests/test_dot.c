/*
 * test_dot: the Graphviz rendering on a hand-built five-node network
 *
 *   h0 --\
 *         s0 (INA) -- s1 -- h2 (PS)
 *   h1 --/
 *
 * one job (workers h0, h1; PS h2), aggregated at s0.  The evaluation is
 * filled by hand (1 Gbit per stream), so this test does not depend on the
 * evaluator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cp/model/dot.h"

struct fixture {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	double push[8], pull[8], agg[5], ingress[5];
	int trees[5];
	struct inart_eval ev;
	int h0, h1, h2, s0, s1;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct inart_err err = {{0}};
	int w[2], ps[1], path[3];

	assert_non_null(f);
	f->t = inart_topo_create();
	assert_non_null(f->t);
	f->h0 = inart_topo_add_node(f->t, "h0", INART_NODE_HOST, 0, 0, 0, &err);
	f->h1 = inart_topo_add_node(f->t, "h1", INART_NODE_HOST, 0, 0, 0, &err);
	f->h2 = inart_topo_add_node(f->t, "h2", INART_NODE_HOST, 0, 0, 0, &err);
	f->s0 = inart_topo_add_node(f->t, "s0", INART_NODE_SWITCH, 1, 100, 4, &err);
	f->s1 = inart_topo_add_node(f->t, "s1", INART_NODE_SWITCH, 0, 0, 0, &err);
	assert_int_equal(f->s1, 4);
	/* links 0..3: arcs 2i (a->b) and 2i+1 (b->a) */
	assert_int_equal(inart_topo_add_link(f->t, f->h0, f->s0, 10, 10, 0, 0, &err), 0);
	assert_int_equal(inart_topo_add_link(f->t, f->h1, f->s0, 10, 10, 0, 0, &err), 1);
	assert_int_equal(inart_topo_add_link(f->t, f->s0, f->s1, 10, 10, 0, 0, &err), 2);
	assert_int_equal(inart_topo_add_link(f->t, f->s1, f->h2, 10, 10, 5, 5, &err), 3);
	assert_int_equal(inart_topo_finalize(f->t, &err), 0);

	f->js = inart_jobs_create();
	w[0] = f->h0;
	w[1] = f->h1;
	ps[0] = f->h2;
	assert_int_equal(inart_jobs_add(f->js, "j0", w, 2, ps, 1, 1.25e8, NULL, &err), 0);

	f->p = inart_plan_create(f->js, "inart");
	assert_non_null(f->p);
	f->p->jobs[0].split[0] = 1.0;
	path[0] = f->h0;
	path[1] = f->s0;
	assert_int_equal(inart_plan_add_flow(f->p, 0, f->h0, f->h2, f->s0, path, 2), 0);
	path[0] = f->h1;
	assert_int_equal(inart_plan_add_flow(f->p, 0, f->h1, f->h2, f->s0, path, 2), 0);
	path[0] = f->s0;
	path[1] = f->s1;
	path[2] = f->h2;
	assert_int_equal(inart_plan_add_tree(f->p, 0, f->s0, f->h2, f->h2, path, 3), 0);

	/* 1 Gbit per stream: push up every arc a->b of links 0, 1, 2, 3, pull back. */
	for (int l = 0; l < 4; l++) {
		f->push[2 * l] = 1.0;
		f->pull[2 * l + 1] = 1.0;
	}
	f->agg[f->s0] = 2.0;
	f->trees[f->s0] = 1;
	f->ingress[f->h2] = 1.0;
	f->ev.comm_time_s = 0.2; /* link 3 has 5 Gbit/s residual */
	f->ev.push_time_s = 0.2;
	f->ev.pull_time_s = 0.2;
	f->ev.bottleneck_arc = 6;
	f->ev.bottleneck_node = -1;
	f->ev.arc_push_gbit = f->push;
	f->ev.arc_pull_gbit = f->pull;
	f->ev.node_agg_gbit = f->agg;
	f->ev.node_trees = f->trees;
	f->ev.node_ingress_gbit = f->ingress;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	inart_plan_destroy(f->p);
	inart_jobs_destroy(f->js);
	inart_topo_destroy(f->t);
	free(f);
	return 0;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The line of s that contains needle (static buffer), or "". */
static const char *line_with(const char *s, const char *needle)
{
	static char line[1024];
	const char *p = strstr(s, needle), *a, *b;

	if (p == NULL)
		return "";
	for (a = p; a > s && a[-1] != '\n'; a--)
		;
	b = strchr(p, '\n');
	if (b == NULL)
		b = p + strlen(p);
	snprintf(line, sizeof(line), "%.*s", (int)(b - a), a);
	return line;
}

/* Quotes and brackets balanced outside strings, braces once. */
static void assert_well_formed(const char *s)
{
	int in_str = 0, brackets = 0, braces = 0;

	assert_true(strncmp(s, "graph inart {\n", 14) == 0);
	assert_true(strcmp(s + strlen(s) - 2, "}\n") == 0);
	for (const char *p = s; *p; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_str = 0;
			continue;
		}
		if (*p == '"')
			in_str = 1;
		brackets += (*p == '[') - (*p == ']');
		braces += (*p == '{') - (*p == '}');
		assert_true(brackets >= 0 && braces >= 0);
	}
	assert_int_equal(in_str, 0);
	assert_int_equal(brackets, 0);
	assert_int_equal(braces, 0);
}

static void test_topology_only(void **state)
{
	struct fixture *f = *state;
	char *s = inart_dot_render(f->t, NULL, NULL, NULL);

	assert_non_null(s);
	assert_well_formed(s);
	/* hosts are boxes, INA switch filled, plain switch not */
	assert_non_null(strstr(s, "\"h0\" [shape=box"));
	assert_non_null(strstr(s, "\"h2\" [shape=box"));
	assert_non_null(strstr(line_with(s, "\"s0\" [shape=ellipse"), "style=filled"));
	assert_null(strstr(line_with(s, "\"s1\" [shape=ellipse"), "filled"));
	/* one edge per link, the upper node (switch) first */
	assert_int_equal(count(s, "\" -- \""), 4);
	assert_non_null(strstr(s, "\"s0\" -- \"h0\""));
	assert_non_null(strstr(s, "\"s0\" -- \"h1\""));
	assert_non_null(strstr(s, "\"s0\" -- \"s1\""));
	assert_non_null(strstr(s, "\"s1\" -- \"h2\""));
	/* nothing of a plan */
	assert_null(strstr(s, "dir=forward"));
	assert_null(strstr(s, "peripheries"));
	free(s);
}

static void test_plan_overlay(void **state)
{
	struct fixture *f = *state;
	char *s = inart_dot_render(f->t, f->js, f->p, &f->ev);
	const char *l;

	assert_non_null(s);
	assert_well_formed(s);
	/* the bottleneck link s1--h2 (2 Gbit over 5 Gbit/s residual) is red, 100%, widest */
	l = line_with(s, "\"s1\" -- \"h2\" [color");
	assert_non_null(strstr(l, "color=\"0.000 0.9 0.85\""));
	assert_non_null(strstr(l, "penwidth=5.00"));
	assert_non_null(strstr(l, "label=\"100%\""));
	/* the others carry 2 Gbit over 10 Gbit/s: half the maximum */
	l = line_with(s, "\"s0\" -- \"h0\" [color");
	assert_non_null(strstr(l, "penwidth=3.00"));
	assert_non_null(strstr(l, "label=\"50%\""));
	/* the INA switch shows its trees, the PS its share */
	assert_non_null(strstr(line_with(s, "\"s0\" [shape"), "1/4 trees"));
	l = line_with(s, "\"h2\" [shape");
	assert_non_null(strstr(l, "PS j0 100%"));
	assert_non_null(strstr(l, "peripheries=2"));
	assert_null(strstr(line_with(s, "\"h0\" [shape"), "peripheries"));
	/* the tree: solid s0->s1->h2 labelled j0/h2; flows h0->s0, h1->s0 dashed */
	l = line_with(s, "\"s0\" -- \"s1\" [dir=forward");
	assert_non_null(strstr(l, "style=solid"));
	assert_non_null(strstr(l, "label=\"j0/h2\""));
	assert_non_null(strstr(line_with(s, "\"s1\" -- \"h2\" [dir=forward"), "style=solid"));
	assert_non_null(strstr(line_with(s, "\"h0\" -- \"s0\" [dir=forward"), "style=dashed"));
	assert_non_null(strstr(line_with(s, "\"h1\" -- \"s0\" [dir=forward"), "style=dashed"));
	assert_int_equal(count(s, "dir=forward"), 4);
	assert_int_equal(count(s, "\" -- \""), 8);
	/* title with the times */
	assert_non_null(strstr(s, "inart: comm 200 ms"));
	free(s);
}

static void test_plan_without_eval(void **state)
{
	struct fixture *f = *state;
	char *s = inart_dot_render(f->t, f->js, f->p, NULL);

	assert_non_null(s);
	assert_well_formed(s);
	assert_int_equal(count(s, "dir=forward"), 4);
	assert_null(strstr(s, "trees\""));
	free(s);
}

static void test_flows_to_ps_not_drawn(void **state)
{
	struct fixture *f = *state;
	struct inart_plan *p = inart_plan_create(f->js, "ps");
	int path[4] = {f->h0, f->s0, f->s1, f->h2};
	char *s;

	p->jobs[0].split[0] = 1.0;
	assert_int_equal(inart_plan_add_flow(p, 0, f->h0, f->h2, f->h2, path, 4), 0);
	path[0] = f->h1;
	assert_int_equal(inart_plan_add_flow(p, 0, f->h1, f->h2, f->h2, path, 4), 0);
	s = inart_dot_render(f->t, f->js, p, NULL);
	assert_non_null(s);
	assert_well_formed(s);
	/* no tree: no overlay, but the PS is marked */
	assert_null(strstr(s, "dir=forward"));
	assert_non_null(strstr(line_with(s, "\"h2\" [shape"), "peripheries=2"));
	free(s);
	inart_plan_destroy(p);
}

static void test_quoting(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_create();
	int a, b;
	char *s;

	(void)state;
	a = inart_topo_add_node(t, "we\"ird\\id", INART_NODE_HOST, 0, 0, 0, &err);
	b = inart_topo_add_node(t, "sw", INART_NODE_SWITCH, 0, 0, 0, &err);
	assert_true(a >= 0 && b >= 0);
	assert_int_equal(inart_topo_add_link(t, a, b, 1, 1, 0, 0, &err), 0);
	assert_int_equal(inart_topo_finalize(t, &err), 0);
	s = inart_dot_render(t, NULL, NULL, NULL);
	assert_non_null(s);
	assert_well_formed(s);
	assert_non_null(strstr(s, "\"we\\\"ird\\\\id\" [shape=box"));
	assert_non_null(strstr(s, "\"sw\" -- \"we\\\"ird\\\\id\""));
	free(s);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_topology_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_plan_overlay, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_plan_without_eval, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_flows_to_ps_not_drawn, setup, teardown),
	    cmocka_unit_test(test_quoting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
