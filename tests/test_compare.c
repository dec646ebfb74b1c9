/*
 * test_compare: formatting of a hand-filled comparison (table, CSV, JSON)
 * and, on a tiny network, that inart_compare_run derives the best baseline,
 * reductions and LP ratios from the rows consistently.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cp/planner/compare.h"

static void set_row(struct inart_compare_row *r, const char *name, int ok, double comm_ms,
		    double push_ms, double pull_ms, double reduction, double lp_ratio,
		    double plan_s, int baseline, const char *status)
{
	snprintf(r->algorithm, sizeof(r->algorithm), "%s", name);
	r->ok = ok;
	snprintf(r->status, sizeof(r->status), "%s", status);
	r->comm_time_s = comm_ms * 1e-3;
	r->push_time_s = push_ms * 1e-3;
	r->pull_time_s = pull_ms * 1e-3;
	r->reduction = reduction;
	r->lp_ratio = lp_ratio;
	r->plan_time_s = plan_s;
	r->is_baseline = baseline;
	r->vs_ring = r->bound_ratio = r->best_bound_s = r->ring_bound_s = NAN;
}

/* inart 2 ms, atp 4 ms (best baseline), ps 8 ms, lp 1.6 ms, milp failed. */
static int setup(void **state)
{
	struct inart_compare *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->n_rows = 5;
	c->rows = calloc(5, sizeof(*c->rows));
	assert_non_null(c->rows);
	set_row(&c->rows[0], "inart", 1, 2, 1.5, 2, 0.5, 1.25, 0.125, 0, "ok");
	set_row(&c->rows[1], "atp", 1, 4, 4, 3, 0.0, 2.5, 0.001, 1, "ok");
	set_row(&c->rows[2], "ps", 1, 8, 8, 8, -1.0, 5.0, 0.002, 1, "ok");
	set_row(&c->rows[3], "milp", 0, NAN, NAN, NAN, NAN, NAN, 30.5, 0,
		"timed out after 30 s, no integral solution");
	set_row(&c->rows[4], "lp", 1, 1.6, 1.6, 1.6, 0.6, 1.0, 0.25, 0, "ok");
	c->lp_bound_s = 1.6e-3;
	c->best_baseline_s = 4e-3;
	snprintf(c->best_baseline, sizeof(c->best_baseline), "atp");
	c->ring_s = c->best_bound_s = NAN;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct inart_compare *c = *state;

	inart_compare_free(c);
	inart_compare_free(NULL);
	free(c);
	return 0;
}

/* Split text into lines (modifies it); returns the count. */
static int lines(char *text, char **v, int max)
{
	int n = 0;

	for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
		v[n++] = s;
	return n;
}

static void test_table(void **state)
{
	struct inart_compare *c = *state;
	char *s = inart_compare_format(c, INART_FMT_TABLE), *l[16];
	int n, col_status, col_comm_end;

	assert_non_null(s);
	n = lines(s, l, 16);
	assert_int_equal(n, 1 + 5 + 1);
	/* header */
	assert_true(strncmp(l[0], "algorithm", 9) == 0);
	for (const char *h = "comm ms\0push ms\0pull ms\0vs best baseline\0vs "
			     "ring\0/LP\0/bound\0plan s\0status\0";
	     *h; h += strlen(h) + 1)
		assert_non_null(strstr(l[0], h));
	col_status = (int)(strstr(l[0], "status") - l[0]);
	col_comm_end = (int)(strstr(l[0], "comm ms") - l[0]) + 7;
	/* rows in input order; the status column and the numbers line up */
	assert_true(strncmp(l[1], "inart ", 6) == 0);
	assert_true(strncmp(l[2], "atp *", 5) == 0); /* best baseline marked */
	assert_true(strncmp(l[3], "ps ", 3) == 0);
	assert_true(strncmp(l[4], "milp ", 5) == 0);
	assert_true(strncmp(l[5], "lp ", 3) == 0);
	for (int i = 1; i <= 5; i++) {
		assert_true((int)strlen(l[i]) > col_status);
		assert_true(l[i][col_status - 1] == ' ');
		assert_true(l[i][col_status] != ' ');
	}
	assert_true(strncmp(l[1] + col_comm_end - 5, "2.000", 5) == 0);
	assert_true(strncmp(l[3] + col_comm_end - 5, "8.000", 5) == 0);
	assert_true(strncmp(l[4] + col_comm_end - 1, "-", 1) == 0);
	/* values */
	assert_non_null(strstr(l[1], "+50.0%"));
	assert_non_null(strstr(l[1], "1.250"));
	assert_non_null(strstr(l[1], "0.125"));
	assert_non_null(strstr(l[2], "+0.0%"));
	assert_non_null(strstr(l[3], "-100.0%"));
	assert_non_null(strstr(l[4], "timed out after 30 s, no integral solution"));
	assert_non_null(strstr(l[4], "30.500"));
	assert_string_equal(l[6], "* best baseline: atp, 4.000 ms; LP lower bound 1.600 ms");
	free(s);
}

/* An lp row without push/pull times and a reduction of -1e-12 (noise). */
static void test_table_nan_and_noise(void **state)
{
	struct inart_compare *c = *state;
	char *s, *l[16];

	c->rows[4].push_time_s = c->rows[4].pull_time_s = NAN;
	c->rows[1].reduction = -1e-12;
	s = inart_compare_format(c, INART_FMT_TABLE);
	assert_non_null(s);
	assert_int_equal(lines(s, l, 16), 7);
	assert_null(strstr(s, "nan"));
	assert_null(strstr(s, "-0.0%"));
	assert_non_null(strstr(l[2], "+0.0%"));
	assert_non_null(strstr(l[5], "1.600  ")); /* comm shown */
	assert_non_null(strstr(l[5], "  -  "));	  /* push, pull not */
	free(s);
}

static void test_csv(void **state)
{
	struct inart_compare *c = *state;
	char *s, *l[16];
	int n;

	snprintf(c->rows[3].status, sizeof(c->rows[3].status), "timed out, \"30 s\"");
	s = inart_compare_format(c, INART_FMT_CSV);
	assert_non_null(s);
	n = lines(s, l, 16);
	assert_int_equal(n, 6);
	assert_string_equal(
	    l[0], "algorithm,ok,comm_time_s,push_time_s,pull_time_s,reduction,"
		  "vs_ring,lp_ratio,bound_ratio,plan_time_s,is_baseline,best_bound_s,"
		  "bound_source,milp_status,origin,status,ring_bound_s,ring_bound_source");
	assert_string_equal(l[1], "inart,1,0.002,0.0015,0.002,0.5,,1.25,,0.125,0,,,,,ok,,");
	assert_string_equal(l[2], "atp,1,0.004,0.004,0.003,0,,2.5,,0.001,1,,,,,ok,,");
	assert_string_equal(l[3], "ps,1,0.008,0.008,0.008,-1,,5,,0.002,1,,,,,ok,,");
	/* NaN -> empty field; a status with a comma and quotes is quoted */
	assert_string_equal(l[4], "milp,0,,,,,,,,30.5,0,,,,,\"timed out, \"\"30 s\"\"\",,");
	assert_string_equal(l[5], "lp,1,0.0016,0.0016,0.0016,0.6,,1,,0.25,0,,,,,ok,,");
	free(s);
}

static void test_json(void **state)
{
	struct inart_compare *c = *state;
	char *s = inart_compare_format(c, INART_FMT_JSON);
	json_error_t jerr;
	json_t *root, *rows, *r;

	assert_non_null(s);
	root = json_loads(s, 0, &jerr);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "best_baseline")), "atp");
	assert_true(fabs(json_real_value(json_object_get(root, "best_baseline_s")) - 4e-3) < 1e-15);
	assert_true(fabs(json_real_value(json_object_get(root, "lp_bound_s")) - 1.6e-3) < 1e-15);
	rows = json_object_get(root, "rows");
	assert_int_equal(json_array_size(rows), 5);
	r = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(r, "algorithm")), "inart");
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_true(json_is_false(json_object_get(r, "is_baseline")));
	assert_true(fabs(json_real_value(json_object_get(r, "reduction")) - 0.5) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(r, "lp_ratio")) - 1.25) < 1e-12);
	r = json_array_get(rows, 3);
	assert_string_equal(json_string_value(json_object_get(r, "algorithm")), "milp");
	assert_true(json_is_false(json_object_get(r, "ok")));
	assert_true(json_is_null(json_object_get(r, "comm_time_s")));
	assert_true(json_is_null(json_object_get(r, "reduction")));
	assert_string_equal(json_string_value(json_object_get(r, "status")),
			    "timed out after 30 s, no integral solution");
	json_decref(root);
	free(s);
}

static void test_empty(void **state)
{
	struct inart_compare c = {0};
	char *s;

	(void)state;
	c.lp_bound_s = c.best_baseline_s = NAN;
	s = inart_compare_format(&c, INART_FMT_TABLE);
	assert_non_null(s);
	assert_non_null(strstr(s, "no baseline result"));
	free(s);
	s = inart_compare_format(&c, INART_FMT_JSON);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"best_baseline\": null"));
	free(s);
	assert_null(inart_compare_format(&c, (enum inart_compare_format)7));
}

/*
 * Tiny network for inart_compare_run: 4 workers under an INA ToR, two PSs.
 *   h0..h3 -- t0 (INA) -- sp -- t1 -- h4, h5 (PS)
 */
static void build_tiny(struct inart_topo **tp, struct inart_jobs **jp)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_create();
	struct inart_jobs *js = inart_jobs_create();
	char id[8];
	int h[6], t0, t1, sp, ps[2];

	assert_non_null(t);
	for (int i = 0; i < 6; i++) {
		snprintf(id, sizeof(id), "h%d", i);
		h[i] = inart_topo_add_node(t, id, INART_NODE_HOST, 0, 0, 0, &err);
	}
	t0 = inart_topo_add_node(t, "t0", INART_NODE_SWITCH, 1, 400, 2, &err);
	t1 = inart_topo_add_node(t, "t1", INART_NODE_SWITCH, 0, 0, 0, &err);
	sp = inart_topo_add_node(t, "sp", INART_NODE_SWITCH, 0, 0, 0, &err);
	for (int i = 0; i < 4; i++)
		assert_true(inart_topo_add_link(t, h[i], t0, 100, 100, 0, 0, &err) >= 0);
	assert_true(inart_topo_add_link(t, t0, sp, 100, 100, 0, 0, &err) >= 0);
	assert_true(inart_topo_add_link(t, sp, t1, 100, 100, 0, 0, &err) >= 0);
	assert_true(inart_topo_add_link(t, t1, h[4], 100, 100, 0, 0, &err) >= 0);
	assert_true(inart_topo_add_link(t, t1, h[5], 100, 100, 0, 0, &err) >= 0);
	assert_int_equal(inart_topo_finalize(t, &err), 0);
	ps[0] = h[4];
	ps[1] = h[5];
	assert_int_equal(inart_jobs_add(js, "j0", h, 4, ps, 2, 1e8, NULL, &err), 0);
	assert_int_equal(inart_jobs_validate(js, t, &err), 0);
	*tp = t;
	*jp = js;
}

static void test_run_consistency(void **state)
{
	static const char *const algos[] = {"ps", "byteps", "atp", "inart", "lp", NULL};
	struct inart_planner_opt opt = {.size = sizeof(opt)};
	struct inart_err err = {{0}};
	struct inart_compare c;
	struct inart_topo *t;
	struct inart_jobs *js;
	double best = INFINITY;
	int best_i = -1;

	(void)state;
	build_tiny(&t, &js);
	inart_planner_opt_default(&opt);
	opt.trials = 4;
	assert_int_equal(inart_compare_run(t, js, &opt, algos, &c, &err), 0);
	assert_int_equal(c.n_rows, 5);
	for (int i = 0; i < 5; i++) {
		const struct inart_compare_row *r = &c.rows[i];

		assert_string_equal(r->algorithm, algos[i]);
		assert_true(r->ok);
		assert_string_equal(r->status, "ok");
		assert_true(r->comm_time_s > 0);
		assert_true(r->plan_time_s >= 0);
		assert_int_equal(r->is_baseline, i < 3);
		if (r->is_baseline && r->comm_time_s < best) {
			best = r->comm_time_s;
			best_i = i;
		}
	}
	assert_string_equal(c.best_baseline, algos[best_i]);
	assert_true(c.best_baseline_s == best);
	assert_true(c.lp_bound_s == c.rows[4].comm_time_s);
	for (int i = 0; i < 5; i++) {
		const struct inart_compare_row *r = &c.rows[i];

		assert_true(fabs(r->reduction - (1 - r->comm_time_s / best)) < 1e-12);
		assert_true(fabs(r->lp_ratio - r->comm_time_s / c.lp_bound_s) < 1e-12);
		/* the LP bound is below every plan */
		assert_true(r->lp_ratio >= 1 - 1e-6);
	}
	assert_true(c.rows[best_i].reduction == 0);
	/* the planner is never worse than the best baseline */
	assert_true(c.rows[3].reduction >= -1e-9);
	inart_compare_free(&c);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static void test_run_unknown_and_subset(void **state)
{
	static const char *const bad[] = {"ps", "nosuch", NULL};
	static const char *const only_inart[] = {"inart", NULL};
	struct inart_planner_opt opt = {.size = sizeof(opt)};
	struct inart_err err = {{0}};
	struct inart_compare c;
	struct inart_topo *t;
	struct inart_jobs *js;

	(void)state;
	build_tiny(&t, &js);
	inart_planner_opt_default(&opt);
	opt.trials = 2;
	assert_int_equal(inart_compare_run(t, js, &opt, bad, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nosuch"));
	inart_compare_free(&c);
	/* without baselines or lp: no reduction, no ratio */
	assert_int_equal(inart_compare_run(t, js, &opt, only_inart, &c, &err), 0);
	assert_int_equal(c.n_rows, 1);
	assert_true(c.rows[0].ok);
	assert_true(isnan(c.rows[0].reduction));
	assert_true(isnan(c.rows[0].lp_ratio));
	assert_true(isnan(c.best_baseline_s));
	assert_string_equal(c.best_baseline, "");
	inart_compare_free(&c);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_table, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_nan_and_noise, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_json, setup, teardown),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_run_consistency),
	    cmocka_unit_test(test_run_unknown_and_subset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
