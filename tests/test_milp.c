/*
 * test_milp: the CBC wrapper on small models with known optima -- proven
 * optimality and bounds, fixed columns taken out (and put back), a start
 * solution, everything fixed, infeasibility.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "cp/planner/milp.h"

/*
 * min -x0 - 2 x1 - 3 x2  s.t.  x0 + x1 + x2 <= 2,  x binary.  Optimum -5
 * (x1 = x2 = 1).  Column-major: every column has one entry in row 0.
 */
struct small {
	CoinBigIndex start[4];
	int index[3];
	double value[3], obj[3], clb[3], cub[3], rlb[1], rub[1];
	char is_int[3];
	struct inart_milp_model m;
};

static void small_init(struct small *s)
{
	for (int j = 0; j < 3; j++) {
		s->start[j] = j;
		s->index[j] = 0;
		s->value[j] = 1;
		s->obj[j] = -(j + 1);
		s->clb[j] = 0;
		s->cub[j] = 1;
		s->is_int[j] = 1;
	}
	s->start[3] = 3;
	s->rlb[0] = -1e300;
	s->rub[0] = 2;
	s->m = (struct inart_milp_model){1,	 3,	 s->start, s->index, s->value,	s->obj,
					 s->clb, s->cub, s->rlb,   s->rub,   s->is_int, NULL};
}

static void solve(const struct small *s, double limit, double *sol, struct inart_milp_result *r,
		  int want_rc)
{
	struct inart_milp_opt o = {limit, 0, 0, 0};
	struct inart_err err = {{0}};
	int rc = inart_milp_solve(&s->m, &o, sol, r, &err);

	if (rc != want_rc)
		fail_msg("rc %d, want %d (%s)", rc, want_rc, err.msg);
}

static void test_proven(void **state)
{
	struct small s;
	struct inart_milp_result r;
	double sol[3];

	(void)state;
	small_init(&s);
	solve(&s, 10, sol, &r, 0);
	assert_true(r.optimal);
	assert_true(fabs(r.value + 5) < 1e-9);
	assert_true(fabs(r.bound + 5) < 1e-6);
	assert_true(sol[0] < 0.5 && sol[1] > 0.5 && sol[2] > 0.5);
}

/* Fixed columns leave the model and come back with their values; their
 * objective is part of the value and the bound. */
static void test_fixed_columns(void **state)
{
	struct small s;
	struct inart_milp_result r;
	double sol[3];

	(void)state;
	small_init(&s);
	s.clb[2] = s.cub[2] = 0; /* x2 = 0: best is x0 = x1 = 1, -3 */
	solve(&s, 10, sol, &r, 0);
	assert_true(r.optimal && fabs(r.value + 3) < 1e-9 && fabs(r.bound + 3) < 1e-6);
	assert_true(sol[2] == 0 && sol[0] > 0.5 && sol[1] > 0.5);
	s.clb[2] = s.cub[2] = 1; /* x2 = 1: room for one more, x1: -5 */
	solve(&s, 10, sol, &r, 0);
	assert_true(r.optimal && fabs(r.value + 5) < 1e-9);
	assert_true(sol[2] == 1 && sol[1] > 0.5 && sol[0] < 0.5);
	/* everything fixed: feasible, its objective */
	for (int j = 0; j < 3; j++)
		s.clb[j] = s.cub[j] = j == 0;
	solve(&s, 10, sol, &r, 0);
	assert_true(r.optimal && fabs(r.value + 1) < 1e-12 && sol[0] == 1 && sol[1] == 0);
	/* everything fixed and a row broken */
	for (int j = 0; j < 3; j++)
		s.clb[j] = s.cub[j] = 1;
	solve(&s, 10, sol, &r, -EINVAL);
}

/* A start solution: the result is never worse than it. */
static void test_start(void **state)
{
	struct small s;
	struct inart_milp_result r;
	double sol[3], start[3] = {1, 1, 0};

	(void)state;
	small_init(&s);
	s.m.mip_start = start;
	solve(&s, 10, sol, &r, 0);
	assert_true(r.value <= -3 + 1e-9);
	assert_true(r.optimal && fabs(r.value + 5) < 1e-9);
}

/* A cutoff: above the optimum, the optimum; at or below it, -ERANGE with a
 * bound just below the cutoff -- a lower bound, so never above the optimum
 * (-5) -- also with fixed columns, whose objective shifts the cutoff. */
static void test_cutoff(void **state)
{
	struct small s;
	struct inart_milp_result r;
	struct inart_err err = {{0}};
	double sol[3];
	struct inart_milp_opt o = {10, 0, 1, -4.5};

	(void)state;
	small_init(&s);
	assert_int_equal(inart_milp_solve(&s.m, &o, sol, &r, &err), 0);
	assert_true(r.optimal && fabs(r.value + 5) < 1e-9);
	o.cutoff = -5;
	assert_int_equal(inart_milp_solve(&s.m, &o, sol, &r, &err), -ERANGE);
	assert_true(r.bound <= -5 && r.bound > -5 - 1e-3);
	o.cutoff = -6;
	assert_int_equal(inart_milp_solve(&s.m, &o, sol, &r, &err), -ERANGE);
	assert_true(r.bound <= -6 && r.bound > -6 - 1e-3);
	s.clb[2] = s.cub[2] = 1; /* fixed: its -3 leaves the model */
	o.cutoff = -4.5;
	assert_int_equal(inart_milp_solve(&s.m, &o, sol, &r, &err), 0);
	assert_true(fabs(r.value + 5) < 1e-9 && sol[2] == 1);
	o.cutoff = -5;
	assert_int_equal(inart_milp_solve(&s.m, &o, sol, &r, &err), -ERANGE);
	assert_true(r.bound <= -5 && r.bound > -5 - 1e-3);
}

static void test_infeasible(void **state)
{
	struct small s;
	struct inart_milp_result r;
	double sol[3];

	(void)state;
	small_init(&s);
	s.rlb[0] = 4; /* x0 + x1 + x2 >= 4 with binaries */
	s.rub[0] = 1e300;
	solve(&s, 10, sol, &r, -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_proven),     cmocka_unit_test(test_fixed_columns),
	    cmocka_unit_test(test_start),      cmocka_unit_test(test_cutoff),
	    cmocka_unit_test(test_infeasible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
