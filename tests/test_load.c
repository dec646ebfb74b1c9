/*
 * test_load: the formats read from files (cp/model/load.h): a file's content
 * parsed, the file named in every message ("<stdin>" for standard input),
 * and the reader's errno passed through (a missing file is ENOENT, not a
 * parse error).  Runs in tests/data (INART_TEST_DATA).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cp/model/load.h"

/* The three files of the tiny case load; the plan keeps its algorithm. */
static void test_load_tiny(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_load("tiny_topo.json", &err);
	struct inart_jobs *js;
	struct inart_plan *p;

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->n_nodes, 8);
	js = inart_jobs_load("tiny_jobs.json", t, &err);
	assert_non_null(js);
	assert_int_equal(js->n_jobs, 2);
	p = inart_plan_load("tiny_plan.json", t, js, &err);
	assert_non_null(p);
	assert_int_equal(p->n_jobs, 2);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* A missing file: the reader's errno and message, for each loader. */
static void test_missing(void **state)
{
	struct inart_err err = {{0}};
	const char *bad = "/nonexistent/inart_test_load/missing.json";
	struct inart_topo *t = inart_topo_load("tiny_topo.json", &err);
	struct inart_jobs *js = inart_jobs_load("tiny_jobs.json", t, &err);

	(void)state;
	assert_non_null(js);
	errno = 0;
	assert_null(inart_topo_load(bad, &err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.msg, "missing.json"));
	errno = 0;
	assert_null(inart_jobs_load(bad, t, &err));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(inart_plan_load(bad, t, js, &err));
	assert_int_equal(errno, ENOENT);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Standard input: parsed, and named "<stdin>" in a syntax error. */
static void test_stdin(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t;

	(void)state;
	assert_non_null(freopen("tiny_topo.json", "r", stdin));
	t = inart_topo_load("-", &err);
	assert_non_null(t);
	assert_int_equal(t->n_nodes, 8);
	inart_topo_destroy(t);

	assert_non_null(freopen("bad/topo_syntax.json", "r", stdin));
	errno = 0;
	assert_null(inart_topo_load("-", &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.msg, "<stdin>:3:20: '}' expected near '\"kind\"'");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_load_tiny),
    cmocka_unit_test(test_missing),
    cmocka_unit_test(test_stdin),
};

int main(void)
{
	const char *dir = getenv("INART_TEST_DATA");

	if (chdir(dir ? dir : "tests/data") != 0) {
		perror("INART_TEST_DATA");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
