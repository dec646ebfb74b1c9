/*
 * testplan: a helper shared by the planner tests (header-only): run one
 * algorithm with the test's options and check that the plan it returns
 * passes the evaluator with the times it carries.
 */
#ifndef INART_TESTPLAN_H
#define INART_TESTPLAN_H

#include <math.h>

#include "cp/model/evaluate.h"
#include "cp/planner/planner.h"
#include "cp/planner/search.h"
#include "testutil.h"

/* Options for tests: defaults, `trials` rounding trials, `time_limit`
 * seconds for inart's improvement, the baseline guard off when no_guard. */
static inline struct inart_planner_opt tu_opt(int trials, double time_limit, int no_guard)
{
	struct inart_planner_opt o = {.size = sizeof(o)};

	inart_planner_opt_default(&o);
	o.trials = trials;
	o.time_limit_s = time_limit;
	o.no_baseline_guard = no_guard;
	o.milp_time_limit_s = 20;
	return o;
}

/* Run algo with o (NULL: defaults); fail the test on an error or an invalid
 * plan.  The plan is the caller's. */
static inline struct inart_plan *tu_plan(const char *algo, const struct inart_topo *t,
					 const struct inart_jobs *js,
					 const struct inart_planner_opt *o)
{
	struct inart_plan *p = NULL;
	struct inart_err err;

	if (inart_planner_run(algo, t, js, o, &p, &err) < 0)
		fail_msg("%s: %s", algo, err.msg);
	assert_string_equal(p->algorithm, algo);
	assert_true(p->plan_time_s >= 0);
	if (strcmp(algo, "lp") != 0 && strcmp(algo, "bound") != 0) { /* bounds, no routes */
		struct inart_plan *c = inart_plan_clone(p);

		if (inart_evaluate(t, js, c, &err) < 0)
			fail_msg("%s gave an invalid plan: %s", algo, err.msg);
		assert_true(fabs(c->comm_time_s - p->comm_time_s) <= 1e-12 * c->comm_time_s);
		inart_plan_destroy(c);
	}
	return p;
}

/* A search (search.h) on (t, js) with options o, for tests that drive the
 * search itself: run with inart_search_run, free with tu_search_free. */
struct tu_search {
	struct inart_planner_opt o;
	struct inart_paths *paths;
	struct inart_evaluator *ev;
	struct inart_search s;
	struct inart_err err;
};

static inline void tu_search_init(struct tu_search *r, const struct inart_topo *t,
				  const struct inart_jobs *js, const struct inart_planner_opt *o)
{
	r->o = *o;
	r->paths = inart_paths_create(t);
	r->ev = inart_evaluator_create(t, js);
	assert_non_null(r->paths);
	assert_non_null(r->ev);
	inart_search_init(&r->s, t, js, &r->o, r->paths, r->ev, &r->err);
}

static inline void tu_search_free(struct tu_search *r)
{
	inart_search_free(&r->s);
	inart_evaluator_destroy(r->ev);
	inart_paths_destroy(r->paths);
}

#endif
