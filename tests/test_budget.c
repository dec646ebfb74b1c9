/*
 * Tests of the planning budget (cp/planner/budget.h) on a fake clock:
 * remaining and expired, unbounded budgets, child shares never past the
 * parent, solver limits.
 */
#include "testutil.h"

#include <math.h>

#include "cp/planner/budget.h"

static double fake_now(void *arg)
{
	return *(const double *)arg;
}

static void test_deadline(void **state)
{
	struct inart_budget b;
	double clk = 100;

	(void)state;
	inart_budget_init(&b, 2, fake_now, &clk);
	assert_true(b.t0 == 100 && b.deadline == 102);
	assert_false(inart_budget_expired(&b));
	assert_true(inart_budget_remaining(&b) == 2);
	clk = 101.5;
	assert_true(fabs(inart_budget_remaining(&b) - 0.5) < 1e-12);
	assert_true(fabs(inart_budget_elapsed(&b) - 1.5) < 1e-12);
	assert_true(fabs(inart_budget_limit_s(&b, 0.01) - 0.5) < 1e-12);
	clk = 102;
	assert_true(inart_budget_expired(&b));
	assert_true(inart_budget_remaining(&b) == 0);
	assert_true(inart_budget_limit_s(&b, 0.01) == 0.01);
	clk = 150;
	assert_true(inart_budget_expired(&b) && inart_budget_remaining(&b) == 0);
}

static void test_unbounded(void **state)
{
	struct inart_budget b, c;
	double clk = 5;

	(void)state;
	inart_budget_init(&b, INFINITY, fake_now, &clk);
	clk = 1e9;
	assert_false(inart_budget_expired(&b));
	assert_true(isinf(inart_budget_remaining(&b)));
	assert_true(inart_budget_limit_s(&b, 0.01) == 0); /* solvers: no limit */
	c = inart_budget_child(&b, 0.5, INFINITY);
	assert_true(isinf(c.deadline));
	c = inart_budget_child(&b, 0.5, 3);
	assert_true(c.deadline == 1e9 + 3);
	inart_budget_init(&b, -1, fake_now, &clk);
	assert_true(isinf(b.deadline));
}

static void test_child(void **state)
{
	struct inart_budget b, c;
	double clk = 0;

	(void)state;
	inart_budget_init(&b, 10, fake_now, &clk);
	clk = 2;
	c = inart_budget_child(&b, 0.25, INFINITY); /* a quarter of 8 s */
	assert_true(fabs(c.deadline - 4) < 1e-12);
	assert_true(c.clock == b.clock && c.t0 == b.t0);
	c = inart_budget_child(&b, 1, 1); /* capped */
	assert_true(fabs(c.deadline - 3) < 1e-12);
	c = inart_budget_child(&b, 2, INFINITY); /* never past the parent */
	assert_true(c.deadline == b.deadline);
	clk = 4;
	c = inart_budget_child(&b, 0, INFINITY);
	assert_true(inart_budget_expired(&c));
	clk = 11; /* parent spent: so is every child */
	c = inart_budget_child(&b, 1, 5);
	assert_true(inart_budget_expired(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_unbounded),
	    cmocka_unit_test(test_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
