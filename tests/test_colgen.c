/*
 * test_colgen: column generation on a hand-made LP with one owner of three
 * choices: min T s.t. x_i - T <= 0 (resource i), x_0 + x_1 + x_2 = 1.  The
 * optimum is T = 1/3 with every x = 1/3; generation starts from x_0 alone
 * (T = 1) and must price in the others.  Also: loading everything at once
 * gives the same optimum, and a deadline already passed still returns a
 * feasible point with a valid lower bound.
 */
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <math.h>

#include "cp/planner/colgen.h"

/* Columns: 0 = T, 1..3 = x_0..x_2.  Rows: 0..2 resources (lazy), 3 the sum. */
struct lp3 {
	CoinBigIndex start[5];
	int index[9];
	double value[9], obj[4], clb[4], cub[4], rlb[4], rub[4];
	char lazy[4];
	struct inart_choice choices[3];
	struct inart_cand_flow flow;
	struct inart_cand c;
	int col_x[3];
	struct inart_colgen_lp lp;
};

static void lp3_init(struct lp3 *m)
{
	int nz = 0;

	memset(m, 0, sizeof(*m));
	m->start[0] = 0;
	for (int r = 0; r < 3; r++) { /* T: -1 in every resource row */
		m->index[nz] = r;
		m->value[nz++] = -1;
	}
	for (int i = 0; i < 3; i++) {
		m->start[1 + i] = nz;
		m->index[nz] = i; /* its resource */
		m->value[nz++] = 1;
		m->index[nz] = 3; /* the sum */
		m->value[nz++] = 1;
		m->col_x[i] = 1 + i;
		m->choices[i] = (struct inart_choice){.path = -1, .agg = -1, .tree = -1};
	}
	m->start[4] = nz;
	m->obj[0] = 1;
	for (int j = 0; j < 4; j++)
		m->cub[j] = j == 0 ? DBL_MAX : 1;
	for (int r = 0; r < 3; r++) {
		m->rlb[r] = -DBL_MAX;
		m->lazy[r] = 1;
	}
	m->rlb[3] = m->rub[3] = 1;
	m->flow = (struct inart_cand_flow){.first_choice = 0, .n_choices = 3};
	m->c = (struct inart_cand){
	    .n_flows = 1, .flows = &m->flow, .n_choices = 3, .choices = m->choices};
	m->lp = (struct inart_colgen_lp){
	    .m = {4, 4, m->start, m->index, m->value, m->obj, m->clb, m->cub, m->rlb, m->rub},
	    .rlazy = m->lazy,
	    .c = &m->c,
	    .col_x = m->col_x,
	    .unit_cols = 1};
}

static void test_prices_in(void **state)
{
	struct lp3 m;
	struct inart_colgen_result r;
	struct inart_err err;
	double sol[4];

	(void)state;
	lp3_init(&m);
	assert_int_equal(inart_colgen_solve(&m.lp, 0, NULL, 0, sol, &r, &err), 0);
	assert_true(r.optimal);
	assert_true(fabs(r.value - 1.0 / 3) < 1e-9 && fabs(r.lower - r.value) < 1e-12);
	assert_true(r.rounds >= 1);
	for (int i = 1; i <= 3; i++)
		assert_true(fabs(sol[i] - 1.0 / 3) < 1e-9);
	/* everything at once: the same optimum, no rounds */
	assert_int_equal(inart_colgen_solve(&m.lp, 1, NULL, 0, sol, &r, &err), 0);
	assert_true(r.optimal && fabs(r.value - 1.0 / 3) < 1e-9 && r.rounds == 0);
	assert_int_equal(r.n_cols_used, 4);
}

static void test_warm_and_deadline(void **state)
{
	struct lp3 m;
	struct inart_colgen_result r;
	struct inart_err err;
	double sol[4], warm[3] = {0, 1, 1};

	(void)state;
	lp3_init(&m);
	assert_int_equal(inart_colgen_solve(&m.lp, 0, warm, 0, sol, &r, &err), 0);
	assert_true(r.optimal && fabs(r.value - 1.0 / 3) < 1e-9);
	/* a deadline in the past: a feasible point and a valid lower bound */
	assert_int_equal(inart_colgen_solve(&m.lp, 0, NULL, 1e-9, sol, &r, &err), 0);
	assert_true(r.value >= 1.0 / 3 - 1e-9);
	assert_true(r.lower <= 1.0 / 3 + 1e-9);
	assert_true(fabs(sol[1] + sol[2] + sol[3] - 1) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prices_in),
	    cmocka_unit_test(test_warm_and_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
