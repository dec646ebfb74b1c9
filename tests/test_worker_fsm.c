/*
 * test_worker_fsm: the worker's recovery table (src/dp/worker_fsm.c) is
 * well formed (poll events name only worker.c's actions, rx events only
 * worker_rx.c's; every cell, state, event and action has a name), and
 * docs/dataplane.md carries the same table (argv[1]: the document): the
 * table printed from the code as markdown must appear there verbatim.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/worker.h"
#include "dp/worker_fsm.h"

static const char *doc_path;

static void test_sides(void **state)
{
	(void)state;
	for (int st = 0; st < C_N_STATES; st++)
		for (int ev = 0; ev < WE_N_EVENTS; ev++) {
			int a = inart_worker_fsm_action(st, ev);

			assert_true(a >= 0 && a < A_N_ACTIONS);
			if (a == A_NONE)
				continue;
			if (ev < WE_FIRST_RX)
				assert_true(a < A_FIRST_RX);
			else
				assert_true(a >= A_FIRST_RX);
		}
	for (int i = 0; i < C_N_STATES; i++)
		assert_non_null(inart_worker_fsm_state_name(i));
	for (int i = 0; i < WE_N_EVENTS; i++)
		assert_non_null(inart_worker_fsm_event_name(i));
	for (int i = 0; i < A_N_ACTIONS; i++)
		assert_non_null(inart_worker_fsm_action_name(i));
	assert_null(inart_worker_fsm_state_name(C_N_STATES));
	/* a done chunk never goes back */
	for (int ev = 0; ev < WE_N_EVENTS; ev++) {
		int a = inart_worker_fsm_action(C_DONE, ev);

		assert_true(a == A_NONE || a == A_DUPLICATE || a == A_STALE);
	}
}

/* The table as docs/dataplane.md writes it: a row per event, a column per
 * state. */
static char *table_markdown(void)
{
	static char buf[8192];
	size_t k = 0;

	k += (size_t)snprintf(buf + k, sizeof(buf) - k, "| event |");
	for (int st = 0; st < C_N_STATES; st++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, " %s |",
				      inart_worker_fsm_state_name(st));
	k += (size_t)snprintf(buf + k, sizeof(buf) - k, "\n|---|");
	for (int st = 0; st < C_N_STATES; st++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "---|");
	k += (size_t)snprintf(buf + k, sizeof(buf) - k, "\n");
	for (int ev = 0; ev < WE_N_EVENTS; ev++) {
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "| %s |",
				      inart_worker_fsm_event_name(ev));
		for (int st = 0; st < C_N_STATES; st++)
			k += (size_t)snprintf(
			    buf + k, sizeof(buf) - k, " %s |",
			    inart_worker_fsm_action_name(inart_worker_fsm_action(st, ev)));
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "\n");
	}
	assert_true(k < sizeof(buf));
	return buf;
}

static void test_doc(void **state)
{
	FILE *f;
	char *doc, *md = table_markdown();
	long n;

	(void)state;
	if (getenv("INART_PRINT_TABLE"))
		fputs(md, stdout);
	assert_non_null(doc_path);
	f = fopen(doc_path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	doc = calloc(1, (size_t)n + 1);
	assert_non_null(doc);
	assert_int_equal(fread(doc, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (strstr(doc, md) == NULL) {
		fprintf(stderr, "docs/dataplane.md lacks the table:\n%s", md);
		fail();
	}
	free(doc);
}

/* Tunables: the defaults are the INART_WORKER_* values, a tuned worker is
 * created, one out of range is refused. */
static void test_tunables(void **state)
{
	struct inart_worker_tunables t = inart_worker_tunables_default();
	struct inart_worker_cfg cfg = {.job = 1, .rank = 0, .n_workers = 2, .n_trees = 1};
	struct inart_worker *w;

	(void)state;
	assert_int_equal(t.window, INART_WORKER_DEFAULT_WINDOW);
	assert_int_equal(t.probe_tries, INART_WORKER_PROBE_TRIES);
	assert_int_equal(t.stall_values, INART_WORKER_STALL_VALUES);
	assert_int_equal(t.pace_burst, INART_WORKER_PACE_BURST);
	assert_true(t.stall_max_ns == INART_WORKER_STALL_MAX_NS);
	cfg.trees[0].share = 1;
	w = inart_worker_create_tuned(&cfg, &t);
	assert_non_null(w);
	inart_worker_destroy(w);
	t.held_results = 0;
	assert_null(inart_worker_create_tuned(&cfg, &t));
	t = inart_worker_tunables_default();
	t.max_backoff_shift = 40;
	assert_null(inart_worker_create_tuned(&cfg, &t));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sides),
	    cmocka_unit_test(test_doc),
	    cmocka_unit_test(test_tunables),
	};

	doc_path = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
