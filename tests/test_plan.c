/* Tests of plan: shape after the jobs, copies of paths, growth, deep clone,
 * clearing, pruning zero-share PSs and cleaning splits. */
#include <errno.h>
#include <math.h>

#include "testutil.h"

#include "cp/model/plan.h"

/* Seven hosts on one switch; j0: workers h0 h1, PSs h2 h3; j1: workers h4
 * h5, PS h6. */
struct fix {
	struct inart_topo *t;
	struct inart_jobs *js;
};

static struct fix fix_make(void)
{
	struct fix f;
	struct inart_err err;

	f.t = tu_topo("h0-e0 h1-e0 h2-e0 h3-e0 h4-e0 h5-e0 h6-e0", "");
	f.js = inart_jobs_create();
	assert_non_null(f.js);
	tu_job(f.js, f.t, "j0", "h0 h1", "h2 h3", 1e6);
	tu_job(f.js, f.t, "j1", "h4 h5", "h6", 2e6);
	if (inart_jobs_validate(f.js, f.t, &err) < 0)
		fail_msg("jobs: %s", err.msg);
	return f;
}

static void test_create_shape(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "hand");

	(void)state;
	assert_non_null(p);
	assert_string_equal(p->algorithm, "hand");
	assert_int_equal(p->n_jobs, 2);
	assert_int_equal(p->jobs[0].n_ps, 2);
	assert_int_equal(p->jobs[1].n_ps, 1);
	for (int j = 0; j < 2; j++) {
		for (int i = 0; i < p->jobs[j].n_ps; i++)
			assert_true(p->jobs[j].split[i] == 0);
		assert_int_equal(p->jobs[j].n_flows, 0);
		assert_int_equal(p->jobs[j].n_trees, 0);
	}
	assert_true(isnan(p->comm_time_s) && isnan(p->push_time_s) && isnan(p->pull_time_s));
	assert_true(isnan(p->lp_bound_s) && isnan(p->split_gap) && isnan(p->phase2_lp_s));
	assert_true(p->plan_time_s == 0);
	assert_int_equal(p->rounding_trials, 0);
	assert_int_equal(p->rounds, 0);
	assert_null(p->origin);
	inart_plan_destroy(p);

	/* no algorithm name: the empty string */
	p = inart_plan_create(f.js, NULL);
	assert_non_null(p);
	assert_string_equal(p->algorithm, "");
	assert_int_equal(inart_plan_set_algorithm(p, "renamed"), 0);
	assert_string_equal(p->algorithm, "renamed");
	tu_free(f.t, f.js, NULL, p);
	inart_plan_destroy(NULL); /* a no-op */
}

static void test_no_jobs(void **state)
{
	struct inart_jobs *js = inart_jobs_create();
	struct inart_plan *p, *c;

	(void)state;
	assert_non_null(js);
	p = inart_plan_create(js, "empty");
	assert_non_null(p);
	assert_int_equal(p->n_jobs, 0);
	c = inart_plan_clone(p);
	assert_non_null(c);
	assert_int_equal(c->n_jobs, 0);
	assert_string_equal(c->algorithm, "empty");
	inart_plan_clean_split(p, 1e-9);
	inart_plan_prune_zero(p, js);
	inart_plan_destroy(c);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
}

/* Paths are copied: changing the caller's array later changes nothing. */
static void test_add_copies_paths(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "x");
	int path[3] = {0, 7, 2};

	(void)state;
	assert_int_equal(inart_plan_add_flow(p, 0, 0, 2, 7, path, 2), 0);
	assert_int_equal(inart_plan_add_tree(p, 0, 7, 2, 2, path + 1, 2), 0);
	path[0] = path[1] = path[2] = -5;
	assert_int_equal(p->jobs[0].n_flows, 1);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[1].n_flows, 0);
	{
		const struct inart_flow *fl = &p->jobs[0].flows[0];
		const struct inart_tree *tr = &p->jobs[0].trees[0];

		assert_int_equal(fl->worker, 0);
		assert_int_equal(fl->ps, 2);
		assert_int_equal(fl->agg, 7);
		assert_int_equal(fl->n_path, 2);
		assert_int_equal(fl->path[0], 0);
		assert_int_equal(fl->path[1], 7);
		assert_int_equal(tr->sw, 7);
		assert_int_equal(tr->ps, 2);
		assert_int_equal(tr->parent, 2);
		assert_int_equal(tr->n_path, 2);
		assert_int_equal(tr->path[0], 7);
		assert_int_equal(tr->path[1], 2);
	}
	/* an empty path is allowed (a PS aggregating its own contribution) */
	assert_int_equal(inart_plan_add_flow(p, 1, 4, 6, 6, NULL, 0), 0);
	assert_int_equal(p->jobs[1].flows[0].n_path, 0);
	tu_free(f.t, f.js, NULL, p);
}

/* Many entries: the arrays grow and keep every entry in order. */
static void test_growth_keeps_order(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "x");
	enum { N = 300 };

	(void)state;
	for (int i = 0; i < N; i++) {
		int path[2] = {i, i + 1};

		assert_int_equal(inart_plan_add_flow(p, 1, i, 6, i + 1, path, 2), 0);
		assert_int_equal(inart_plan_add_tree(p, 1, i + 1, 6, 6, path, 1 + i % 2), 0);
	}
	assert_int_equal(p->jobs[1].n_flows, N);
	assert_int_equal(p->jobs[1].n_trees, N);
	assert_true(p->jobs[1].cap_flows >= N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(p->jobs[1].flows[i].worker, i);
		assert_int_equal(p->jobs[1].flows[i].path[1], i + 1);
		assert_int_equal(p->jobs[1].trees[i].sw, i + 1);
		assert_int_equal(p->jobs[1].trees[i].n_path, 1 + i % 2);
	}
	assert_int_equal(p->jobs[0].n_flows, 0);
	tu_free(f.t, f.js, NULL, p);
}

static void test_clone_is_deep(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "orig"), *c;

	(void)state;
	p->jobs[0].split[0] = 0.25;
	p->jobs[0].split[1] = 0.75;
	p->jobs[1].split[0] = 1;
	p->comm_time_s = 1.5;
	p->lp_bound_s = 1.25;
	p->rounding_trials = 7;
	p->rounds = 3;
	p->origin = strdup("atp");
	assert_non_null(p->origin);
	tu_flow(p, f.t, 0, "h0", "h2", "e0", "h0 e0");
	tu_tree(p, f.t, 0, "e0", "h2", "h2", "e0 h2");
	tu_flow(p, f.t, 1, "h4", "h6", "h6", "h4 e0 h6");

	c = inart_plan_clone(p);
	assert_non_null(c);
	assert_string_equal(c->algorithm, "orig");
	assert_ptr_not_equal(c->algorithm, p->algorithm);
	assert_string_equal(c->origin, "atp");
	assert_ptr_not_equal(c->origin, p->origin);
	assert_true(c->comm_time_s == 1.5 && c->lp_bound_s == 1.25);
	assert_int_equal(c->rounding_trials, 7);
	assert_int_equal(c->rounds, 3);
	assert_true(c->jobs[0].split[0] == 0.25 && c->jobs[0].split[1] == 0.75);
	assert_true(c->jobs[1].split[0] == 1);
	assert_int_equal(c->jobs[0].n_flows, 1);
	assert_int_equal(c->jobs[0].n_trees, 1);
	assert_int_equal(c->jobs[1].n_flows, 1);
	assert_int_equal(c->jobs[1].flows[0].n_path, 3);
	assert_ptr_not_equal(c->jobs[0].split, p->jobs[0].split);
	assert_ptr_not_equal(c->jobs[1].flows[0].path, p->jobs[1].flows[0].path);

	/* changing the clone leaves the original alone */
	c->jobs[0].split[0] = 0.9;
	c->jobs[1].flows[0].path[1] = -1;
	inart_plan_clear_routes(c, 0);
	assert_true(p->jobs[0].split[0] == 0.25);
	assert_int_equal(p->jobs[1].flows[0].path[1], tu_find(f.t, "e0"));
	assert_int_equal(p->jobs[0].n_flows, 1);
	assert_int_equal(p->jobs[0].n_trees, 1);
	inart_plan_destroy(c);

	/* no origin: none in the clone */
	free(p->origin);
	p->origin = NULL;
	c = inart_plan_clone(p);
	assert_non_null(c);
	assert_null(c->origin);
	inart_plan_destroy(c);
	tu_free(f.t, f.js, NULL, p);
}

static void test_clear_routes_one_job(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "x");

	(void)state;
	p->jobs[0].split[0] = 1;
	tu_flow(p, f.t, 0, "h0", "h2", "e0", "h0 e0");
	tu_tree(p, f.t, 0, "e0", "h2", "h2", "e0 h2");
	tu_flow(p, f.t, 1, "h5", "h6", "e0", "h5 e0");
	inart_plan_clear_routes(p, 0);
	assert_int_equal(p->jobs[0].n_flows, 0);
	assert_int_equal(p->jobs[0].n_trees, 0);
	assert_true(p->jobs[0].split[0] == 1); /* the split stays */
	assert_int_equal(p->jobs[1].n_flows, 1);
	/* routes can be added again after a clear */
	tu_flow(p, f.t, 0, "h1", "h3", "h3", "h1 e0 h3");
	assert_int_equal(p->jobs[0].n_flows, 1);
	assert_int_equal(p->jobs[0].flows[0].worker, tu_find(f.t, "h1"));
	tu_free(f.t, f.js, NULL, p);
}

static void test_prune_zero(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "x");
	int h0 = tu_find(f.t, "h0"), h1 = tu_find(f.t, "h1"), h2 = tu_find(f.t, "h2");
	int h3 = tu_find(f.t, "h3"), e0 = tu_find(f.t, "e0");

	(void)state;
	p->jobs[0].split[0] = 0; /* h2: zero share */
	p->jobs[0].split[1] = 1; /* h3 */
	p->jobs[1].split[0] = 1;
	tu_flow(p, f.t, 0, "h0", "h2", "e0", "h0 e0");
	tu_flow(p, f.t, 0, "h0", "h3", "e0", "h0 e0");
	tu_flow(p, f.t, 0, "h1", "h2", "h2", "h1 e0 h2");
	tu_flow(p, f.t, 0, "h1", "h3", "h3", "h1 e0 h3");
	tu_flow(p, f.t, 0, "h1", "h6", "h6", "h1 e0 h6"); /* h6 is not a PS of j0 */
	tu_tree(p, f.t, 0, "e0", "h2", "h2", "e0 h2");
	tu_tree(p, f.t, 0, "e0", "h3", "h3", "e0 h3");
	tu_flow(p, f.t, 1, "h4", "h6", "e0", "h4 e0");
	inart_plan_prune_zero(p, f.js);
	assert_int_equal(p->jobs[0].n_flows, 2);
	assert_int_equal(p->jobs[0].flows[0].worker, h0);
	assert_int_equal(p->jobs[0].flows[0].ps, h3);
	assert_int_equal(p->jobs[0].flows[0].agg, e0);
	assert_int_equal(p->jobs[0].flows[1].worker, h1);
	assert_int_equal(p->jobs[0].flows[1].ps, h3);
	assert_int_equal(p->jobs[0].flows[1].n_path, 3);
	assert_int_equal(p->jobs[0].n_trees, 1);
	assert_int_equal(p->jobs[0].trees[0].ps, h3);
	assert_int_equal(p->jobs[1].n_flows, 1);
	assert_int_not_equal(p->jobs[0].trees[0].ps, h2);
	tu_free(f.t, f.js, NULL, p);
}

static void test_clean_split(void **state)
{
	struct fix f = fix_make();
	struct inart_plan *p = inart_plan_create(f.js, "x");

	(void)state;
	/* a share below eps is dropped and the rest renormalized */
	p->jobs[0].split[0] = 1e-12;
	p->jobs[0].split[1] = 0.5;
	p->jobs[1].split[0] = 0.25;
	inart_plan_clean_split(p, 1e-9);
	assert_true(p->jobs[0].split[0] == 0);
	assert_true(p->jobs[0].split[1] == 1);
	assert_true(p->jobs[1].split[0] == 1);

	/* shares above eps keep their ratio; NaN and negatives become 0 */
	p->jobs[0].split[0] = 3;
	p->jobs[0].split[1] = 1;
	inart_plan_clean_split(p, 1e-9);
	assert_true(fabs(p->jobs[0].split[0] - 0.75) < 1e-15);
	assert_true(fabs(p->jobs[0].split[1] - 0.25) < 1e-15);
	p->jobs[0].split[0] = NAN;
	p->jobs[0].split[1] = 2;
	p->jobs[1].split[0] = -1;
	inart_plan_clean_split(p, 1e-9);
	assert_true(p->jobs[0].split[0] == 0);
	assert_true(p->jobs[0].split[1] == 1);
	/* all zero stays all zero (no division by zero) */
	assert_true(p->jobs[1].split[0] == 0);
	tu_free(f.t, f.js, NULL, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_shape),     cmocka_unit_test(test_no_jobs),
	    cmocka_unit_test(test_add_copies_paths), cmocka_unit_test(test_growth_keeps_order),
	    cmocka_unit_test(test_clone_is_deep),    cmocka_unit_test(test_clear_routes_one_job),
	    cmocka_unit_test(test_prune_zero),	     cmocka_unit_test(test_clean_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
