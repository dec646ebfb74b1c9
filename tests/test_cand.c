/* Tests of cand: grouping, choices, tree candidates, detours (assignments:
 * test_assign). */
#include "testutil.h"

#include <math.h>

#include "cp/model/assign.h"
#include "cp/model/cand.h"
#include "cp/model/evaluate.h"

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
	assert_int_equal(inart_assign_realize(c, &a, p), 0);
	assert_int_equal(p->jobs[0].n_trees, 3);
	/* every link carries one 8 Gbit stream each way */
	assert_true(fabs(tu_comm_time(t, js, p) - 0.08) < 1e-4);
	inart_assign_free(&a);
	tu_free(t, js, c, p);
}

/* The choices of flow f that aggregate at node v. */
static int n_agg_at(const struct inart_cand *c, int f, int v)
{
	int n = 0;

	for (int q = c->flows[f].first_choice; q < c->flows[f].first_choice + c->flows[f].n_choices;
	     q++)
		n += c->choices[q].agg == v;
	return n;
}

/* Detours: h0 on leaf l0, its PS h2 on l2; l1, a third leaf with INA, is on
 * no shortest path h0 -> h2 but closer to h2 than h0 is.  With detours = 2
 * the flow may go up to a spine and down to l1 and aggregate there (both
 * spines), l1's tree then sends on to the PS; without, l1 has no role. */
static void test_detours(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-l0 h1-l1 h2-l2 l0-s0 l0-s1 l1-s0 l1-s1 l2-s0 l2-s1", "l1:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e9);
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_cand_opt o;
	struct inart_cand *c = NULL;
	struct inart_err err;
	int l1 = inart_topo_find(t, "l1"), f0 = -1;

	(void)state;
	assert_non_null(paths);
	inart_cand_opt_default(&o);
	o.k_paths = 2;
	o.no_groups = 1;
	for (int det = 0; det <= 2; det += 2) {
		o.detours = det;
		if (inart_cand_build(t, js, paths, &o, &c, &err) < 0)
			fail_msg("cand: %s", err.msg);
		for (int f = 0; f < c->n_flows; f++)
			if (c->groups[c->flows[f].group].members[0] == inart_topo_find(t, "h0"))
				f0 = f;
		assert_true(f0 >= 0);
		assert_int_equal(n_agg_at(c, f0, l1), det); /* h0-l0-s0-l1, h0-l0-s1-l1 */
		/* l1 holds h1's own tree either way, and every choice of h0
		 * aggregating there ends at l1 and names that tree */
		assert_int_equal(c->n_trees, 1);
		for (int q = c->flows[f0].first_choice;
		     q < c->flows[f0].first_choice + c->flows[f0].n_choices; q++)
			if (c->choices[q].agg == l1) {
				const int *pp = inart_pathset_path(&c->paths, c->choices[q].path);
				int len = inart_pathset_len(&c->paths, c->choices[q].path);

				assert_int_equal(len, 4);
				assert_int_equal(pp[len - 1], l1);
				assert_int_equal(c->choices[q].tree, 0);
			}
		inart_cand_destroy(c);
	}
	inart_paths_destroy(paths);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The cand flow of worker w (first member of its group), or -1. */
static int flow_of(const struct inart_cand *c, int w)
{
	for (int f = 0; f < c->n_flows; f++)
		if (c->groups[c->flows[f].group].members[0] == w)
			return f;
	return -1;
}

static struct inart_cand *cand_det(const struct inart_topo *t, const struct inart_jobs *js,
				   struct inart_paths *paths, int k, int detours)
{
	struct inart_cand_opt o;
	struct inart_cand *c = NULL;
	struct inart_err err;

	inart_cand_opt_default(&o);
	o.k_paths = k;
	o.no_groups = 1;
	o.detours = detours;
	if (inart_cand_build(t, js, paths, &o, &c, &err) < 0)
		fail_msg("cand: %s", err.msg);
	return c;
}

/* Automatic detours: on test_detours' leaf-spine with a fourth leaf, h0's
 * rack l0 has no INA, l1 (h1, h5) and l3 (h3) have: only h0's flow gets
 * detours (2 paths each to l1 and l3; l3 is also a detour target of h1 and
 * h5, l1 of h3), the trees at l1 and l3 get 4 paths (k_tree_paths 2); with
 * k_paths 1 the 4 detour paths would exceed half the 4 own paths: none. */
static int stop_after(void *arg)
{
	int *calls = arg;

	return ++*calls > 1; /* the first question passes, the next one stops */
}

static int never(void *arg)
{
	++*(int *)arg;
	return 0;
}

/* opt.stop ends the build with -ETIMEDOUT and nothing built; one that
 * never says stop changes nothing; below 64 groups it is not asked. */
static void test_stop(void **state)
{
	char links[4096] = "", workers[2048] = "";
	struct inart_topo *t, *small = tu_topo("h0-e0 h1-e0 e0-c0", "e0:40:1");
	struct inart_jobs *js, *sjs = tu_jobs1(small, "h0", "h1", 1e9);
	struct inart_paths *paths, *spaths = inart_paths_create(small);
	struct inart_cand_opt o;
	struct inart_cand *c = NULL, *ref = NULL;
	struct inart_err err = {{0}};
	int calls = 0;

	(void)state;
	for (int i = 0; i < 130; i++) { /* 130 workers on 2 racks, per-worker groups */
		snprintf(links + strlen(links), sizeof(links) - strlen(links), "h%d-e%d ", i,
			 i % 2);
		snprintf(workers + strlen(workers), sizeof(workers) - strlen(workers), "h%d ", i);
	}
	strcat(links, "h999-e0 e0-c0 e1-c0");
	t = tu_topo(links, "e0:40:1 e1:40:1");
	js = tu_jobs1(t, workers, "h999", 1e9);
	paths = inart_paths_create(t);
	inart_cand_opt_default(&o);
	o.no_groups = 1;
	o.stop = stop_after;
	o.stop_arg = &calls;
	assert_int_equal(inart_cand_build(small, sjs, spaths, &o, &c, &err), 0);
	assert_int_equal(calls, 0);
	inart_cand_destroy(c);
	c = NULL;
	o.stop = NULL;
	assert_int_equal(inart_cand_build(t, js, paths, &o, &ref, &err), 0);
	o.stop = stop_after;
	o.stop_arg = &calls;
	assert_int_equal(inart_cand_build(t, js, paths, &o, &c, &err), -ETIMEDOUT);
	assert_null(c);
	assert_int_equal(calls, 2);
	assert_non_null(strstr(err.msg, "time limit"));
	calls = 0;
	o.stop = never;
	assert_int_equal(inart_cand_build(t, js, paths, &o, &c, &err), 0);
	assert_true(calls >= 2); /* asked in each pass */
	assert_int_equal(c->n_choices, ref->n_choices);
	assert_int_equal(c->n_trees, ref->n_trees);
	inart_cand_destroy(c);
	inart_cand_destroy(ref);
	inart_paths_destroy(paths);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	inart_paths_destroy(spaths);
	inart_jobs_destroy(sjs);
	inart_topo_destroy(small);
}

static void test_detours_auto(void **state)
{
	struct inart_topo *t = tu_topo("h0-l0 h1-l1 h5-l1 h2-l2 h3-l3 l0-s0 l0-s1 l1-s0 l1-s1 "
				       "l2-s0 l2-s1 l3-s0 l3-s1",
				       "l1:400:1 l3:400:1");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h3 h5", "h2", 1e9);
	struct inart_paths *paths = inart_paths_create(t);
	int l1 = inart_topo_find(t, "l1"), l3 = inart_topo_find(t, "l3"),
	    h0 = inart_topo_find(t, "h0"), h1 = inart_topo_find(t, "h1"),
	    h3 = inart_topo_find(t, "h3");
	struct inart_cand *c, *none;

	(void)state;
	assert_non_null(paths);
	c = cand_det(t, js, paths, 2, INART_CAND_DETOURS_AUTO);
	none = cand_det(t, js, paths, 2, 0);
	assert_int_equal(n_agg_at(none, flow_of(none, h0), l1), 0);
	assert_int_equal(n_agg_at(none, flow_of(none, h0), l3), 0);
	assert_int_equal(n_agg_at(c, flow_of(c, h0), l1), 2); /* h0-l0-s0-l1, h0-l0-s1-l1 */
	assert_int_equal(n_agg_at(c, flow_of(c, h0), l3), 2);
	assert_int_equal(n_agg_at(c, flow_of(c, h1), l3), 0); /* l1 aggregates h1 */
	assert_int_equal(n_agg_at(c, flow_of(c, h3), l1), 0);
	assert_int_equal(c->n_trees, none->n_trees);
	for (int k = 0; k < c->n_trees; k++) {
		assert_int_equal(none->trees[k].n_choices, 2);
		assert_int_equal(c->trees[k].n_choices, 4); /* all paths of <= 5 hops */
	}
	assert_int_equal(c->n_choices, none->n_choices + 4 + 2 * c->n_trees);
	inart_cand_destroy(c);
	inart_cand_destroy(none);
	c = cand_det(t, js, paths, 1, INART_CAND_DETOURS_AUTO);
	none = cand_det(t, js, paths, 1, 0);
	assert_int_equal(n_agg_at(c, flow_of(c, h0), l1), 0);
	assert_int_equal(c->n_choices, none->n_choices);
	inart_cand_destroy(c);
	inart_cand_destroy(none);
	inart_paths_destroy(paths);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
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
	    cmocka_unit_test(test_star),    cmocka_unit_test(test_multilevel),
	    cmocka_unit_test(test_detours), cmocka_unit_test(test_detours_auto),
	    cmocka_unit_test(test_no_ina),  cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
