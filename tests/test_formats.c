/*
 * test_formats: the JSON readers and writers.
 *
 * Golden files (tests/data/tiny_*.json -> tiny_*.golden.json, written by
 * hand) pin the canonical output byte for byte; every file in tests/data/bad/
 * must be rejected with its expected message (file name and line/column or
 * the offending id); dump-then-parse must give an equal object; the readers
 * must survive truncations and random mutations of valid input.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/rng.h"
#include "common/file.h"
#include "cp/model/formats.h"
#include "cp/model/load.h"
#include "cp/model/gen.h"

static char *data_path(const char *rel)
{
	const char *dir = getenv("INART_TEST_DATA");
	static char buf[8][1024];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, 1024, "%s/%s", dir ? dir : "tests/data", rel);
	return p;
}

static char *slurp(const char *rel, size_t *len)
{
	struct inart_err err = {{0}};
	char *s = inart_file_read(data_path(rel), len, &err);

	if (s == NULL)
		fail_msg("cannot read %s: %s", rel, err.msg);
	return s;
}

static struct inart_topo *tiny_topo(void)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_load(data_path("tiny_topo.json"), &err);

	if (t == NULL)
		fail_msg("%s", err.msg);
	return t;
}

static struct inart_jobs *tiny_jobs(const struct inart_topo *t)
{
	struct inart_err err = {{0}};
	struct inart_jobs *js = inart_jobs_load(data_path("tiny_jobs.json"), t, &err);

	if (js == NULL)
		fail_msg("%s", err.msg);
	return js;
}

/* Equal doubles, NaN equal to NaN. */
static int deq(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void assert_topo_equal(const struct inart_topo *a, const struct inart_topo *b)
{
	assert_int_equal(a->n_nodes, b->n_nodes);
	assert_int_equal(a->n_links, b->n_links);
	for (int v = 0; v < a->n_nodes; v++) {
		assert_string_equal(a->nodes[v].id, b->nodes[v].id);
		assert_int_equal(a->nodes[v].kind, b->nodes[v].kind);
		assert_int_equal(a->nodes[v].ina, b->nodes[v].ina);
		assert_true(deq(a->nodes[v].agg_gbps, b->nodes[v].agg_gbps));
		assert_int_equal(a->nodes[v].trees, b->nodes[v].trees);
	}
	for (int e = 0; e < 2 * a->n_links; e++) {
		assert_int_equal(a->arcs[e].from, b->arcs[e].from);
		assert_int_equal(a->arcs[e].to, b->arcs[e].to);
		assert_true(deq(a->arcs[e].gbps, b->arcs[e].gbps));
		assert_true(deq(a->arcs[e].bg_gbps, b->arcs[e].bg_gbps));
	}
}

static void assert_jobs_equal(const struct inart_jobs *a, const struct inart_jobs *b)
{
	assert_int_equal(a->n_jobs, b->n_jobs);
	for (int i = 0; i < a->n_jobs; i++) {
		const struct inart_job *x = &a->jobs[i], *y = &b->jobs[i];

		assert_string_equal(x->id, y->id);
		assert_int_equal(x->n_workers, y->n_workers);
		assert_int_equal(x->n_ps, y->n_ps);
		assert_memory_equal(x->workers, y->workers, sizeof(int) * (size_t)x->n_workers);
		assert_memory_equal(x->ps, y->ps, sizeof(int) * (size_t)x->n_ps);
		assert_true(deq(x->gradient_bytes, y->gradient_bytes));
		assert_int_equal(x->model == NULL, y->model == NULL);
		if (x->model)
			assert_string_equal(x->model, y->model);
	}
}

static void assert_plan_equal(const struct inart_plan *a, const struct inart_plan *b)
{
	assert_string_equal(a->algorithm, b->algorithm);
	assert_true(deq(a->comm_time_s, b->comm_time_s));
	assert_true(deq(a->push_time_s, b->push_time_s));
	assert_true(deq(a->pull_time_s, b->pull_time_s));
	assert_true(deq(a->lp_bound_s, b->lp_bound_s));
	assert_true(deq(a->plan_time_s, b->plan_time_s));
	assert_true(deq(a->split_gap, b->split_gap));
	assert_int_equal(a->rounding_trials, b->rounding_trials);
	assert_int_equal(a->n_jobs, b->n_jobs);
	for (int j = 0; j < a->n_jobs; j++) {
		const struct inart_job_plan *x = &a->jobs[j], *y = &b->jobs[j];

		assert_int_equal(x->n_ps, y->n_ps);
		for (int i = 0; i < x->n_ps; i++)
			assert_true(deq(x->split[i], y->split[i]));
		assert_int_equal(x->n_flows, y->n_flows);
		assert_int_equal(x->n_trees, y->n_trees);
		for (int i = 0; i < x->n_flows; i++) {
			const struct inart_flow *f = &x->flows[i], *g = &y->flows[i];

			assert_int_equal(f->worker, g->worker);
			assert_int_equal(f->ps, g->ps);
			assert_int_equal(f->agg, g->agg);
			assert_int_equal(f->n_path, g->n_path);
			assert_memory_equal(f->path, g->path, sizeof(int) * (size_t)f->n_path);
		}
		for (int i = 0; i < x->n_trees; i++) {
			const struct inart_tree *f = &x->trees[i], *g = &y->trees[i];

			assert_int_equal(f->sw, g->sw);
			assert_int_equal(f->ps, g->ps);
			assert_int_equal(f->parent, g->parent);
			assert_int_equal(f->n_path, g->n_path);
			assert_memory_equal(f->path, g->path, sizeof(int) * (size_t)f->n_path);
		}
	}
}

/* ------------------------------------------------------------ golden */

static void test_golden_topo(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = tiny_topo(), *t2;
	size_t glen;
	char *golden = slurp("tiny_topo.golden.json", &glen);
	char *out = inart_topo_dump(t), *out2;

	(void)state;
	assert_non_null(out);
	assert_string_equal(out, golden);
	/* The canonical form is a fixed point and parses to the same object. */
	t2 = inart_topo_parse(out, strlen(out), "dump", &err);
	assert_non_null(t2);
	assert_topo_equal(t, t2);
	out2 = inart_topo_dump(t2);
	assert_string_equal(out2, golden);
	/* Hand-checked values of the tiny topology. */
	assert_int_equal(t->n_nodes, 8);
	assert_int_equal(t->n_links, 7);
	assert_int_equal(inart_topo_find(t, "e0"), 5);
	assert_true(t->nodes[5].ina && t->nodes[5].trees == 8 && t->nodes[5].agg_gbps == 400);
	assert_false(t->nodes[6].ina);
	assert_true(t->nodes[7].ina && t->nodes[7].trees == 0 && t->nodes[7].agg_gbps == 150);
	assert_true(t->arcs[2].gbps == 10 && t->arcs[2].bg_gbps == 2.5); /* h1 -> e0 */
	assert_true(t->arcs[3].gbps == 10 && t->arcs[3].bg_gbps == 2.5);
	assert_true(t->arcs[6].gbps == 10 && t->arcs[7].gbps == 25); /* h3 <-> e1 */
	assert_true(t->arcs[6].bg_gbps == 0 && t->arcs[7].bg_gbps == 0.1);
	assert_true(t->arcs[10].bg_gbps == 3 && t->arcs[11].bg_gbps == 1); /* e0 <-> c0 */
	free(out);
	free(out2);
	free(golden);
	inart_topo_destroy(t);
	inart_topo_destroy(t2);
}

static void test_golden_jobs(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t), *js2;
	size_t glen;
	char *golden = slurp("tiny_jobs.golden.json", &glen);
	char *out = inart_jobs_dump(js, t);

	(void)state;
	assert_string_equal(out, golden);
	js2 = inart_jobs_parse(out, strlen(out), "dump", t, &err);
	assert_non_null(js2);
	assert_jobs_equal(js, js2);
	assert_int_equal(js->n_jobs, 2);
	assert_true(js->jobs[0].gradient_bytes == 4 * 25.6e6);
	assert_string_equal(js->jobs[0].model, "resnet50");
	assert_true(js->jobs[1].gradient_bytes == 1e6);
	assert_null(js->jobs[1].model);
	assert_int_equal(js->jobs[0].workers[1], inart_topo_find(t, "h1"));
	assert_int_equal(js->jobs[0].ps[1], inart_topo_find(t, "h3"));
	free(out);
	free(golden);
	inart_jobs_destroy(js);
	inart_jobs_destroy(js2);
	inart_topo_destroy(t);
}

static void test_golden_plan(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);
	struct inart_plan *p = inart_plan_load(data_path("tiny_plan.json"), t, js, &err), *p2;
	size_t glen;
	char *golden = slurp("tiny_plan.golden.json", &glen);
	char *out;

	(void)state;
	if (p == NULL)
		fail_msg("%s", err.msg);
	out = inart_plan_dump(p, t, js);
	assert_string_equal(out, golden);
	p2 = inart_plan_parse(out, strlen(out), "dump", t, js, &err);
	assert_non_null(p2);
	assert_plan_equal(p, p2);
	/* Plan jobs follow the jobs file order (the plan file lists j1 first). */
	assert_string_equal(p->algorithm, "hand");
	assert_true(p->jobs[0].split[0] == 0.75 && p->jobs[0].split[1] == 0.25);
	assert_int_equal(p->jobs[0].n_flows, 4);
	assert_int_equal(p->jobs[0].n_trees, 2);
	assert_int_equal(p->jobs[0].trees[1].ps, inart_topo_find(t, "h3"));
	assert_int_equal(p->jobs[0].trees[1].n_path, 4);
	assert_int_equal(p->jobs[1].n_flows, 1);
	assert_int_equal(p->jobs[1].flows[0].n_path, 5);
	assert_int_equal(p->jobs[1].flows[0].path[2], inart_topo_find(t, "c0"));
	assert_true(p->comm_time_s == 0.0164 && p->push_time_s == 0.0082);
	assert_true(isnan(p->pull_time_s) && isnan(p->lp_bound_s) && isnan(p->split_gap));
	assert_int_equal(p->rounding_trials, 3);
	free(out);
	free(golden);
	inart_plan_destroy(p);
	inart_plan_destroy(p2);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* ------------------------------------------------------------ bad input */

enum kind { TOPO, JOBS, PLAN };

static const struct bad {
	enum kind kind;
	const char *file;
	const char *msg; /* expected right after the file name */
} bad_cases[] = {
    {TOPO, "topo_syntax.json", ":3:20: '}' expected near '\"kind\"'"},
    {TOPO, "topo_trailing_comma.json", ":1:41: unexpected token near ']'"},
    {TOPO, "topo_empty.json", ":1:1: '[' or '{' expected near end of file"},
    {TOPO, "topo_not_object.json", ": the top level must be an object, not an array"},
    {TOPO, "topo_dup_key.json", ":1:44: duplicate object key near '\"id\"'"},
    {TOPO, "topo_missing_nodes.json", ": missing 'nodes'"},
    {TOPO, "topo_no_nodes.json", ": no nodes"},
    {TOPO, "topo_node_not_object.json", ": node 1: must be an object, not a string"},
    {TOPO, "topo_missing_kind.json", ": node 1 ('e0'): missing 'kind'"},
    {TOPO, "topo_id_number.json", ": node 0: 'id' must be a string, not a number"},
    {TOPO, "topo_bad_kind.json",
     ": node 1 ('r0'): 'kind' must be \"host\" or \"switch\", not \"router\""},
    {TOPO, "topo_ina_host.json", ": node 0 ('h0'): a host cannot be INA-capable"},
    {TOPO, "topo_ina_zero_agg.json", ": node 0 ('e0'): 'agg_gbps' must be > 0 Gbit/s (got 0)"},
    {TOPO, "topo_ina_trees_fraction.json",
     ": node 0 ('e0'): 'trees' must be an integer, not a fraction"},
    {TOPO, "topo_ina_trees_negative.json",
     ": node 0 ('e0'): 'trees' must be in [0, 2147483647] (got -1)"},
    {TOPO, "topo_ina_missing_trees.json", ": node 0 ('e0'): missing 'trees' in 'ina'"},
    {TOPO, "topo_ina_unknown_key.json", ": node 0 ('e0'): unknown key 'tree' in 'ina'"},
    {TOPO, "topo_unknown_key.json", ": link 0 (h0-e0): unknown key 'gpbs'"},
    {TOPO, "topo_unknown_top_key.json", ": unknown key 'nodez'"},
    {TOPO, "topo_gbps_string.json", ": link 0 (h0-e0): 'gbps' must be a number, not a string"},
    {TOPO, "topo_missing_gbps.json", ": link 0 (h0-e0): missing 'gbps' (or 'ab_gbps')"},
    {TOPO, "topo_missing_ba.json", ": link 0 (h0-e0): missing 'gbps' (or 'ba_gbps')"},
    {TOPO, "topo_link_missing_b.json", ": link 0: missing 'b'"},
    {TOPO, "topo_unknown_node.json", ": link 2 (h0-e0x): unknown node 'e0x'"},
    {TOPO, "topo_dup_node.json", ": duplicate node id 'h0'"},
    {TOPO, "topo_dup_link.json", ": duplicate link h0-e0"},
    {TOPO, "topo_self_loop.json", ": link 0 (e0-e0): joins a node to itself"},
    {TOPO, "topo_zero_cap.json", ": link 0 (h0-e0): capacity h0->e0 must be > 0 Gbit/s (got 0)"},
    {TOPO, "topo_neg_cap.json", ": link 0 (h0-e0): capacity e0->h0 must be > 0 Gbit/s (got -5)"},
    {TOPO, "topo_neg_background.json",
     ": link 0 (h0-e0): background h0->e0 must be >= 0 Gbit/s (got -1)"},
    {TOPO, "topo_bg_above.json",
     ": link 0 (h0-e0): background h0->e0 (12 Gbit/s) is above the capacity (10 Gbit/s)"},
    {TOPO, "topo_links_object.json", ": 'links' must be an array, not an object"},
    {TOPO, "topo_huge_number.json", ":2:47: real number overflow near '1e999'"},
    {JOBS, "jobs_syntax.json", ":3:3: ']' expected near '{'"},
    {JOBS, "jobs_not_object.json", ":1:6: '[' or '{' expected near '\"jobs\"'"},
    {JOBS, "jobs_missing_jobs.json", ": missing 'jobs'"},
    {JOBS, "jobs_empty.json", ": no jobs"},
    {JOBS, "jobs_unknown_key.json", ": job 'j0': unknown key 'workres'"},
    {JOBS, "jobs_job_not_object.json", ": job 0: must be an object, not an array"},
    {JOBS, "jobs_missing_id.json", ": job 0: missing 'id'"},
    {JOBS, "jobs_unknown_worker.json", ": job 'j0': unknown worker 'h99'"},
    {JOBS, "jobs_worker_switch.json", ": job 'j0': worker 'e0' is not a host"},
    {JOBS, "jobs_unknown_ps.json", ": job 'j0': unknown PS 'h77'"},
    {JOBS, "jobs_ps_switch.json", ": job 'j0': PS 'c0' is not a host"},
    {JOBS, "jobs_unreachable.json", ": job 'j1': worker 'h4' cannot reach PS 'h3'"},
    {JOBS, "jobs_unknown_model.json",
     ": job 'j0': unknown model 'resnet51' (known: resnet50, vgg16, alexnet"},
    {JOBS, "jobs_model_newline.json",
     ": job 'j\\x01': unknown model 'res\\net50\\t' (known: resnet50"},
    {JOBS, "jobs_model_number.json", ": job 'j0': 'model' must be a string, not a number"},
    {JOBS, "jobs_no_workers.json", ": job 'j0': no workers"},
    {JOBS, "jobs_no_ps.json", ": job 'j0': no PSs"},
    {JOBS, "jobs_missing_ps.json", ": job 'j0': missing 'ps'"},
    {JOBS, "jobs_both.json", ": job 'j0': give either 'model' or 'gradient_bytes', not both"},
    {JOBS, "jobs_neither.json", ": job 'j0': missing 'model' or 'gradient_bytes'"},
    {JOBS, "jobs_zero_bytes.json", ": job 'j0': 'gradient_bytes' must be > 0 (got 0)"},
    {JOBS, "jobs_dup_id.json", ": duplicate job id 'j0'"},
    {JOBS, "jobs_worker_is_ps.json", ": job 'j0': host 'h2' is listed twice (worker and PS)"},
    {JOBS, "jobs_dup_worker.json", ": job 'j0': host 'h0' is listed twice"},
    {JOBS, "jobs_workers_string.json", ": job 'j0': 'workers' must be an array, not a string"},
    {JOBS, "jobs_worker_number.json",
     ": job 'j0': workers[1] must be a host id (string), not a number"},
    {PLAN, "plan_syntax.json", ":3:35: string or '}' expected near '}'"},
    {PLAN, "plan_not_object.json", ":1:4: '[' or '{' expected near 'null'"},
    {PLAN, "plan_missing_jobs.json", ": missing 'jobs'"},
    {PLAN, "plan_jobs_object.json", ": 'jobs' must be an array, not an object"},
    {PLAN, "plan_algorithm_number.json", ": 'algorithm' must be a string, not a number"},
    {PLAN, "plan_time_string.json", ": 'comm_time_s' must be a number or null, not a string"},
    {PLAN, "plan_trials_negative.json", ": 'rounding_trials' must be in [0, 2147483647] (got -2)"},
    {PLAN, "plan_job_not_object.json", ": job 1: must be an object, not a number"},
    {PLAN, "plan_job_missing_id.json", ": job 0: missing 'id'"},
    {PLAN, "plan_unknown_job.json", ": job 'j9': not in the jobs file"},
    {PLAN, "plan_dup_job.json", ": job 'j1': appears twice"},
    {PLAN, "plan_split_array.json",
     ": job 'j0': 'split' must be an object (PS id -> share), not an array"},
    {PLAN, "plan_split_not_ps.json", ": job 'j0': split: 'h0' is not a PS of this job"},
    {PLAN, "plan_split_unknown_node.json", ": job 'j0': split: 'zz' is not a PS of this job"},
    {PLAN, "plan_split_string.json",
     ": job 'j0': split: the share of 'h2' must be a number, not a string"},
    {PLAN, "plan_flows_object.json", ": job 'j0': 'flows' must be an array, not an object"},
    {PLAN, "plan_flow_not_object.json", ": job 'j0': flow 0: must be an object, not null"},
    {PLAN, "plan_flow_unknown_agg.json", ": job 'j0': flow 1: 'agg': unknown node 'e7'"},
    {PLAN, "plan_flow_missing_worker.json", ": job 'j0': flow 0: missing 'worker'"},
    {PLAN, "plan_flow_worker_number.json",
     ": job 'j0': flow 0: 'worker' must be a string, not a number"},
    {PLAN, "plan_path_unknown.json", ": job 'j0': flow 0: path[1]: unknown node 'x1'"},
    {PLAN, "plan_path_nested.json",
     ": job 'j0': flow 0: path[0] must be a node id (string), not an array"},
    {PLAN, "plan_path_missing.json", ": job 'j0': flow 0: missing 'path'"},
    {PLAN, "plan_path_string.json", ": job 'j0': flow 0: 'path' must be an array, not a string"},
    {PLAN, "plan_tree_missing_parent.json", ": job 'j0': tree 0: missing 'parent'"},
    {PLAN, "plan_tree_unknown_switch.json", ": job 'j0': tree 0: 'switch': unknown node 'e5'"},
    {PLAN, "plan_trees_number.json", ": job 'j0': 'trees' must be an array, not a number"},
};

static void test_bad_inputs(void **state)
{
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const struct bad *b = &bad_cases[i];
		struct inart_err err = {{0}};
		char rel[256], want[1024];
		void *obj;

		snprintf(rel, sizeof(rel), "bad/%s", b->file);
		errno = 0;
		if (b->kind == TOPO)
			obj = inart_topo_load(data_path(rel), &err);
		else if (b->kind == JOBS)
			obj = inart_jobs_load(data_path(rel), t, &err);
		else
			obj = inart_plan_load(data_path(rel), t, js, &err);
		snprintf(want, sizeof(want), "%s%s", b->file, b->msg);
		if (obj != NULL || errno != EINVAL || strstr(err.msg, want) == NULL ||
		    strchr(err.msg, '\n') != NULL) {
			print_error("%s: got %s errno %d, message \"%s\"; want \"%s\"\n", b->file,
				    obj ? "an object" : "NULL", errno, err.msg, want);
			failures++;
		}
		/* One message that starts with the path (so it names the file). */
		if (strncmp(err.msg, data_path(rel), strlen(data_path(rel))) != 0) {
			print_error("%s: message does not start with the path: %s\n", b->file,
				    err.msg);
			failures++;
		}
		if (b->kind == TOPO)
			inart_topo_destroy(obj);
		else if (b->kind == JOBS)
			inart_jobs_destroy(obj);
		else
			inart_plan_destroy(obj);
	}
	assert_int_equal(failures, 0);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Every file in tests/data/bad/ has a case (no file silently untested). */
static void test_bad_inputs_all_listed(void **state)
{
	DIR *d = opendir(data_path("bad"));
	struct dirent *de;
	int files = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		int found = 0;

		if (de->d_name[0] == '.')
			continue;
		files++;
		for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
			found |= strcmp(bad_cases[i].file, de->d_name) == 0;
		if (!found)
			fail_msg("tests/data/bad/%s has no expected message", de->d_name);
	}
	closedir(d);
	assert_int_equal(files, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
}

/* ------------------------------------------------------------ plan reader */

static struct inart_plan *plan_text(const struct inart_topo *t, const struct inart_jobs *js,
				    const char *text, struct inart_err *err)
{
	return inart_plan_parse(text, strlen(text), "p.json", t, js, err);
}

static void test_plan_partial_and_defaults(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);
	struct inart_plan *p;

	(void)state;
	/* Only j1 in the plan: j0 stays empty (the evaluator rejects it). */
	p = plan_text(t, js, "{\"jobs\": [{\"id\": \"j1\", \"split\": {\"h0\": 1}}]}", &err);
	assert_non_null(p);
	assert_int_equal(p->n_jobs, 2);
	assert_int_equal(p->jobs[0].n_flows, 0);
	assert_int_equal(p->jobs[0].n_trees, 0);
	assert_true(p->jobs[0].split[0] == 0 && p->jobs[0].split[1] == 0);
	assert_true(p->jobs[1].split[0] == 1);
	assert_string_equal(p->algorithm, "");
	assert_true(isnan(p->comm_time_s) && isnan(p->lp_bound_s));
	assert_true(p->plan_time_s == 0);
	assert_int_equal(p->rounding_trials, 0);
	inart_plan_destroy(p);

	/* Unknown keys everywhere are ignored; times may be null; split keys
	 * missing stay 0; empty paths are kept for the evaluator to judge. */
	p = plan_text(
	    t, js,
	    "{\"x\": {\"y\": [1, {\"z\": null}]}, \"algorithm\": \"a\", \"plan_time_s\": "
	    "null, \"split_gap\": 0.001, \"rounding_trials\": 32, \"jobs\": [{\"id\": "
	    "\"j0\", \"extra\": 1, \"split\": {\"h3\": -0.5}, \"flows\": [{\"worker\": "
	    "\"h0\", \"ps\": \"h2\", \"agg\": \"h2\", \"path\": [], \"k\": true}], "
	    "\"trees\": [{\"switch\": \"h1\", \"ps\": \"e0\", \"parent\": \"c0\", \"path\": "
	    "[\"h1\"], \"why\": \"semantics are the evaluator's\"}]}]}",
	    &err);
	if (p == NULL)
		fail_msg("%s", err.msg);
	assert_true(isnan(p->plan_time_s));
	assert_true(p->split_gap == 0.001);
	assert_int_equal(p->rounding_trials, 32);
	assert_true(p->jobs[0].split[0] == 0 && p->jobs[0].split[1] == -0.5);
	assert_int_equal(p->jobs[0].n_flows, 1);
	assert_int_equal(p->jobs[0].flows[0].n_path, 0);
	assert_int_equal(p->jobs[0].trees[0].sw, inart_topo_find(t, "h1"));
	assert_int_equal(p->jobs[0].trees[0].parent, inart_topo_find(t, "c0"));
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static void test_plan_bad_shapes(void **state)
{
	static const char *const cases[][2] = {
	    {"{\"jobs\": [{\"id\": \"j0\", \"flows\": [{\"worker\": \"h0\", \"ps\": \"h2\", "
	     "\"agg\": \"nope\", \"path\": [\"h0\"]}]}]}",
	     "p.json: job 'j0': flow 0: 'agg': unknown node 'nope'"},
	    {"{\"jobs\": [{\"id\": \"j0\", \"flows\": [{\"worker\": \"h0\", \"ps\": \"h2\", "
	     "\"agg\": \"e0\", \"path\": [\"h0\", {\"id\": \"e0\"}]}]}]}",
	     "p.json: job 'j0': flow 0: path[1] must be a node id (string), not an object"},
	    {"{\"jobs\": [{\"id\": [\"j0\"]}]}",
	     "p.json: job 0: 'id' must be a string, not an array"},
	    {"{\"jobs\": [{\"id\": \"\"}]}", "p.json: job 0: 'id' must not be empty"},
	    {"{\"jobs\": [[[[[[[[[[[[]]]]]]]]]]]]}",
	     "p.json: job 0: must be an object, not an array"},
	    {"{\"jobs\": [], \"comm_time_s\": 1e400}",
	     "p.json:1:33: real number overflow near '1e400'"},
	    {"{\"jobs\": [], \"rounding_trials\": 1.5}",
	     "p.json: 'rounding_trials' must be an integer, not a fraction"},
	    {"{\"jobs\": [], \"rounding_trials\": 99999999999}",
	     "p.json: 'rounding_trials' must be in [0, 2147483647] (got 99999999999)"},
	    {"{\"jobs\": []} trailing", "p.json:1:21: end of file expected near 'trailing'"},
	    {"{\"jobs\": [{\"id\": \"j0\", \"split\": {\"h2\": true}}]}",
	     "p.json: job 'j0': split: the share of 'h2' must be a number, not a boolean"},
	    {"{\"jobs\": [{\"id\": \"j0\", \"trees\": [{\"switch\": \"e0\", \"ps\": \"h2\", "
	     "\"parent\": \"h2\", \"path\": [\"e0\", 3]}]}]}",
	     "p.json: job 'j0': tree 0: path[1] must be a node id (string), not a number"},
	    {"{\"jobs\": [{\"id\": \"j0\", \"split\": {\"h2\": 1, \"h2\": 0}}]}",
	     "p.json:1:46: duplicate object key near '\"h2\"'"},
	};
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct inart_err err = {{0}};
		struct inart_plan *p = plan_text(t, js, cases[i][0], &err);

		if (p != NULL || strstr(err.msg, cases[i][1]) == NULL)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg, cases[i][1]);
	}
	/* Deep nesting is refused by the parser's depth limit, not the stack. */
	{
		size_t depth = 100000;
		char *s = malloc(2 * depth + 32);
		struct inart_err err = {{0}};
		struct inart_plan *p;

		strcpy(s, "{\"jobs\": ");
		memset(s + 9, '[', depth);
		memset(s + 9 + depth, ']', depth);
		strcpy(s + 9 + 2 * depth, "}");
		p = plan_text(t, js, s, &err);
		assert_null(p);
		assert_non_null(strstr(err.msg, "p.json:1:"));
		free(s);
	}
	/* No topology or jobs: an error, not a crash. */
	{
		struct inart_err err = {{0}};

		assert_null(inart_plan_parse("{}", 2, "p.json", NULL, js, &err));
		assert_non_null(strstr(err.msg, "p.json"));
		assert_null(inart_jobs_parse("{}", 2, "j.json", NULL, &err));
		assert_non_null(strstr(err.msg, "j.json"));
	}
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* ------------------------------------------------------------ round trips */

static void test_roundtrip_numbers_and_strings(void **state)
{
	static const double caps[] = {0.1,
				      1.0 / 3,
				      1e-300,
				      123456789.123456789,
				      9007199254740993.0,
				      2.5e15,
				      4.9e-324,
				      1.7976931348623157e308,
				      100};
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_create(), *t2;
	const char *ids[] = {"plain", "quote\"d",    "back\\slash", "new\nline", "tab\tx",
			     "\x01",  "caf\xc3\xa9", "/slash",	    "e0"};
	int n = (int)(sizeof(ids) / sizeof(ids[0]));
	char *out, *out2;

	(void)state;
	for (int i = 0; i < n; i++)
		assert_true(inart_topo_add_node(t, ids[i],
						i % 2 ? INART_NODE_SWITCH : INART_NODE_HOST, i % 2,
						caps[i], i, &err) >= 0);
	for (int i = 0; i + 1 < n; i++)
		assert_true(inart_topo_add_link(t, i, i + 1, caps[i], caps[(i + 3) % n],
						caps[i] * 0.5, caps[(i + 3) % n] / 3, &err) >= 0);
	assert_int_equal(inart_topo_finalize(t, &err), 0);
	out = inart_topo_dump(t);
	assert_non_null(out);
	t2 = inart_topo_parse(out, strlen(out), "rt", &err);
	if (t2 == NULL)
		fail_msg("%s\n%s", err.msg, out);
	assert_topo_equal(t, t2);
	out2 = inart_topo_dump(t2);
	assert_string_equal(out, out2);
	/* Shortest forms, not %.17g noise. */
	assert_non_null(strstr(out, "\"ab_gbps\": 0.1, "));
	assert_non_null(strstr(out, "\"ba_gbps\": 100, "));
	assert_null(strstr(out, "0.10000000000000001"));
	assert_non_null(strstr(out, "\"quote\\\"d\""));
	assert_non_null(strstr(out, "\"new\\u000aline\""));
	free(out);
	free(out2);
	inart_topo_destroy(t);
	inart_topo_destroy(t2);
}

static void test_roundtrip_generated(void **state)
{
	struct inart_err err = {{0}};
	struct inart_gen_opt o;
	struct inart_topo *t, *t2;
	char *out, *out2;

	(void)state;
	inart_gen_opt_default(&o);
	o.ina = INART_INA_RANDOM;
	o.ina_fraction = 0.3;
	o.host_gbps = 25;
	o.fabric_gbps = 40.5;
	t = inart_gen_fattree(4, &o, &err);
	assert_non_null(t);
	out = inart_topo_dump(t);
	t2 = inart_topo_parse(out, strlen(out), "ft4", &err);
	if (t2 == NULL)
		fail_msg("%s", err.msg);
	assert_topo_equal(t, t2);
	out2 = inart_topo_dump(t2);
	assert_string_equal(out, out2);
	free(out);
	free(out2);
	inart_topo_destroy(t);
	inart_topo_destroy(t2);
}

static void test_roundtrip_plan_nan(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);
	struct inart_plan *p = inart_plan_create(js, "x\"y"), *p2;
	int path[] = {0, 5, 7, 6, 2};
	char *out;

	(void)state;
	p->comm_time_s = INFINITY; /* not JSON: written as null */
	p->push_time_s = 1e-9;
	p->plan_time_s = 12.25;
	p->jobs[0].split[0] = 1.0 / 3;
	p->jobs[0].split[1] = 2.0 / 3;
	assert_int_equal(inart_plan_add_flow(p, 0, 0, 2, 2, path, 5), 0);
	out = inart_plan_dump(p, t, js);
	assert_non_null(strstr(out, "\"comm_time_s\": null,"));
	p2 = inart_plan_parse(out, strlen(out), "rt", t, js, &err);
	if (p2 == NULL)
		fail_msg("%s", err.msg);
	assert_true(isnan(p2->comm_time_s));
	p->comm_time_s = NAN;
	assert_plan_equal(p, p2);
	free(out);
	inart_plan_destroy(p);
	inart_plan_destroy(p2);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* ------------------------------------------------------------ robustness */

/* Every prefix of a valid text is rejected with a located message, and
 * random byte mutations never crash a reader. */
static void test_truncations_and_mutations(void **state)
{
	struct inart_topo *t = tiny_topo();
	struct inart_jobs *js = tiny_jobs(t);
	const char *files[] = {"tiny_topo.golden.json", "tiny_jobs.golden.json",
			       "tiny_plan.golden.json"};
	struct inart_rng rng;

	(void)state;
	inart_rng_seed(&rng, 7);
	for (int f = 0; f < 3; f++) {
		size_t len, end;
		char *text = slurp(files[f], &len), *copy = malloc(len + 1);

		/* The text ends in "}\n": every prefix shorter than len - 1 is
		 * incomplete JSON. */
		for (end = 0; end + 1 < len; end++) {
			struct inart_err err = {{0}};
			void *obj;

			if (f == 0)
				obj = inart_topo_parse(text, end, "cut.json", &err);
			else if (f == 1)
				obj = inart_jobs_parse(text, end, "cut.json", t, &err);
			else
				obj = inart_plan_parse(text, end, "cut.json", t, js, &err);
			if (obj != NULL || strncmp(err.msg, "cut.json:", 9) != 0)
				fail_msg("%s cut at %zu: %s", files[f], end, err.msg);
		}
		for (int trial = 0; trial < 2000; trial++) {
			struct inart_err err = {{0}};
			int flips = 1 + (int)inart_rng_below(&rng, 4);
			size_t n = len;
			void *obj;

			memcpy(copy, text, len);
			for (int k = 0; k < flips; k++) {
				size_t at = inart_rng_below(&rng, len);
				static const char alphabet[] = "{}[]\",:0123456789.eE-+ntfhjsx \\";

				copy[at] = alphabet[inart_rng_below(&rng, sizeof(alphabet) - 1)];
			}
			if (trial % 5 == 0)
				n = inart_rng_below(&rng, len + 1);
			if (f == 0) {
				obj = inart_topo_parse(copy, n, "m.json", &err);
				inart_topo_destroy(obj);
			} else if (f == 1) {
				obj = inart_jobs_parse(copy, n, "m.json", t, &err);
				inart_jobs_destroy(obj);
			} else {
				obj = inart_plan_parse(copy, n, "m.json", t, js, &err);
				inart_plan_destroy(obj);
			}
			if (obj == NULL && strncmp(err.msg, "m.json", 6) != 0)
				fail_msg("mutation without a named message: %s", err.msg);
		}
		free(copy);
		free(text);
	}
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_topo),
	    cmocka_unit_test(test_golden_jobs),
	    cmocka_unit_test(test_golden_plan),
	    cmocka_unit_test(test_bad_inputs),
	    cmocka_unit_test(test_bad_inputs_all_listed),
	    cmocka_unit_test(test_plan_partial_and_defaults),
	    cmocka_unit_test(test_plan_bad_shapes),
	    cmocka_unit_test(test_roundtrip_numbers_and_strings),
	    cmocka_unit_test(test_roundtrip_generated),
	    cmocka_unit_test(test_roundtrip_plan_nan),
	    cmocka_unit_test(test_truncations_and_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
