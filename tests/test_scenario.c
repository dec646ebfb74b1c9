/* Tests of scenario: every built-in scenario builds valid jobs of the sizes
 * its description states, the seed moves only the placement, the default
 * scenario's background load, and random_jobs' draws and errors. */
#include <errno.h>
#include <math.h>

#include "testutil.h"

#include "cp/model/scenario.h"

static int n_hosts(const struct inart_topo *t)
{
	int n = 0;

	for (int v = 0; v < t->n_nodes; v++)
		n += t->nodes[v].kind == INART_NODE_HOST;
	return n;
}

/* Every worker and PS is a host, and no host is used twice over all jobs. */
static void assert_disjoint_hosts(const struct inart_topo *t, const struct inart_jobs *js)
{
	char *used = calloc((size_t)t->n_nodes, 1);

	assert_non_null(used);
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];

		for (int i = 0; i < job->n_workers + job->n_ps; i++) {
			int v = i < job->n_workers ? job->workers[i] : job->ps[i - job->n_workers];

			assert_true(v >= 0 && v < t->n_nodes);
			assert_int_equal(t->nodes[v].kind, INART_NODE_HOST);
			assert_int_equal(used[v], 0);
			used[v] = 1;
		}
	}
	free(used);
}

struct expect {
	const char *name;
	int hosts, n_jobs, n_workers, n_ps; /* n_workers/n_ps of every job; 0: see test */
	const char *model;
	int ina_trees;	 /* tree budget of the INA switches */
	double ina_gbps; /* their aggregation throughput */
	int ina_all;	 /* 1: every switch INA, 0: only some */
};

/* Sizes from the descriptions in scenario.c (fattree32 is left out: 8192
 * hosts, slow in a unit test; fattree16 covers the same code). */
static const struct expect expected[] = {
    {"scarce", 128, 4, 16, 4, "vgg16", 1, 100, 0},
    {"fattree4", 16, 1, 8, 4, "resnet50", 4, 400, 1},
    {"fattree8", 128, 2, 32, 4, "bert-base", 4, 400, 1},
    {"fattree16", 1024, 1, 256, 8, "gpt2-small", 8, 400, 1},
    {"leafspine", 64, 2, 16, 4, "resnet50", 4, 400, 0},
    {"bcube", 16, 1, 8, 4, "alexnet", 2, 400, 0},
};

static void test_sizes(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(expected) / sizeof(expected[0]); k++) {
		const struct expect *e = &expected[k];
		struct inart_topo *t = NULL;
		struct inart_jobs *js = NULL;
		struct inart_err err;
		int n_ina = 0, n_sw = 0;

		if (inart_scenario_build(e->name, 1, &t, &js, &err) != 0)
			fail_msg("%s: %s", e->name, err.msg);
		assert_int_equal(n_hosts(t), e->hosts);
		assert_int_equal(js->n_jobs, e->n_jobs);
		for (int j = 0; j < js->n_jobs; j++) {
			assert_int_equal(js->jobs[j].n_workers, e->n_workers);
			assert_int_equal(js->jobs[j].n_ps, e->n_ps);
			assert_string_equal(js->jobs[j].model, e->model);
			assert_true(js->jobs[j].gradient_bytes == inart_model_bytes(e->model));
		}
		assert_disjoint_hosts(t, js);
		for (int v = 0; v < t->n_nodes; v++) {
			const struct inart_node *nd = &t->nodes[v];

			if (nd->kind != INART_NODE_SWITCH)
				continue;
			n_sw++;
			if (!nd->ina)
				continue;
			n_ina++;
			assert_int_equal(nd->trees, e->ina_trees);
			assert_true(nd->agg_gbps == e->ina_gbps);
		}
		assert_true(n_ina > 0);
		if (e->ina_all)
			assert_int_equal(n_ina, n_sw);
		else
			assert_true(n_ina < n_sw);
		assert_int_equal(inart_jobs_validate(js, t, &err), 0);
		inart_jobs_destroy(js);
		inart_topo_destroy(t);
	}
}

/* "default": j0 6 workers / 3 PSs resnet50, j1 4 workers / 2 PSs vgg16, 20%
 * background on every third fabric link and none on host links. */
static void test_default(void **state)
{
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_err err;
	int fabric = 0, loaded = 0;

	(void)state;
	assert_int_equal(inart_scenario_build("default", 1, &t, &js, &err), 0);
	assert_int_equal(js->n_jobs, 2);
	assert_string_equal(js->jobs[0].id, "j0");
	assert_int_equal(js->jobs[0].n_workers, 6);
	assert_int_equal(js->jobs[0].n_ps, 3);
	assert_string_equal(js->jobs[0].model, "resnet50");
	assert_true(js->jobs[0].gradient_bytes == inart_model_bytes("resnet50"));
	assert_string_equal(js->jobs[1].id, "j1");
	assert_int_equal(js->jobs[1].n_workers, 4);
	assert_int_equal(js->jobs[1].n_ps, 2);
	assert_string_equal(js->jobs[1].model, "vgg16");
	assert_true(js->jobs[1].gradient_bytes == inart_model_bytes("vgg16"));
	assert_disjoint_hosts(t, js);
	for (int l = 0; l < t->n_links; l++) {
		const struct inart_arc *ab = &t->arcs[2 * l], *ba = &t->arcs[2 * l + 1];
		int sw = t->nodes[ab->from].kind == INART_NODE_SWITCH &&
			 t->nodes[ab->to].kind == INART_NODE_SWITCH;

		if (!sw) {
			assert_true(ab->bg_gbps == 0 && ba->bg_gbps == 0);
			continue;
		}
		if (fabric++ % 3 == 0) {
			loaded++;
			assert_true(fabs(ab->bg_gbps - 0.2 * ab->gbps) < 1e-12);
			assert_true(fabs(ba->bg_gbps - 0.2 * ba->gbps) < 1e-12);
		} else {
			assert_true(ab->bg_gbps == 0 && ba->bg_gbps == 0);
		}
	}
	assert_int_equal(fabric, 32); /* fat-tree k=4: 16 edge-agg + 16 agg-core links */
	assert_int_equal(loaded, 11);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static int same_jobs(const struct inart_jobs *a, const struct inart_jobs *b)
{
	if (a->n_jobs != b->n_jobs)
		return 0;
	for (int j = 0; j < a->n_jobs; j++) {
		const struct inart_job *x = &a->jobs[j], *y = &b->jobs[j];

		if (x->n_workers != y->n_workers || x->n_ps != y->n_ps ||
		    memcmp(x->workers, y->workers, sizeof(int) * (size_t)x->n_workers) != 0 ||
		    memcmp(x->ps, y->ps, sizeof(int) * (size_t)x->n_ps) != 0)
			return 0;
	}
	return 1;
}

/* The same seed gives the same placement; another seed another one (over
 * the same topology for a scenario without random INA). */
static void test_seed(void **state)
{
	struct inart_topo *t1, *t2, *t3;
	struct inart_jobs *j1, *j2, *j3;

	(void)state;
	assert_int_equal(inart_scenario_build("fattree8", 7, &t1, &j1, NULL), 0);
	assert_int_equal(inart_scenario_build("fattree8", 7, &t2, &j2, NULL), 0);
	assert_int_equal(inart_scenario_build("fattree8", 8, &t3, &j3, NULL), 0);
	assert_true(same_jobs(j1, j2));
	assert_false(same_jobs(j1, j3));
	assert_int_equal(t1->n_nodes, t3->n_nodes);
	assert_int_equal(t1->n_links, t3->n_links);
	tu_free(t1, j1, NULL, NULL);
	tu_free(t2, j2, NULL, NULL);
	tu_free(t3, j3, NULL, NULL);
}

static void test_names_and_unknown(void **state)
{
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_err err;
	char d[512];
	int n = 0;

	(void)state;
	for (const char *const *s = inart_scenario_names; *s; s++, n++) {
		int len = inart_scenario_describe(*s, d, sizeof(d));

		assert_true(len > 10 && len < (int)sizeof(d));
		assert_int_equal(strlen(d), len);
	}
	assert_int_equal(n, 9); /* the last is the family "scarce-small/N" */
	assert_int_equal(inart_scenario_describe("nosuch", d, sizeof(d)), -EINVAL);
	assert_int_equal(inart_scenario_describe("", d, sizeof(d)), -EINVAL);
	/* made from the scenario's parameters */
	assert_true(inart_scenario_describe("scarce", d, sizeof(d)) > 0);
	assert_string_equal(d,
			    "fat-tree k=8 (128 hosts), 4 jobs of 16 workers and 4 PS training "
			    "vgg16, INA only at ToRs, 1 tree and 100 Gbit/s of aggregation each");
	assert_true(inart_scenario_describe("bcube", d, 8) > 8); /* cut, length needed */
	assert_string_equal(d, "BCube(4");
	assert_int_equal(inart_scenario_build("nosuch", 1, &t, &js, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown scenario 'nosuch'"));
	assert_null(t);
	assert_null(js);
}

/* The scarce family: instance N by name, seeded by (seed, N); leaf-spines
 * with INA at the leaves only (1-2 trees), 2-3 jobs of 2-4 workers with two
 * PSs each in the first leaves, whose uplinks are thinner. */
static void test_scarce_family(void **state)
{
	struct inart_topo *t = NULL, *t2 = NULL;
	struct inart_jobs *js = NULL, *js2 = NULL;
	struct inart_err err;
	char name[32], d[512];

	(void)state;
	for (int i = 0; i < 16; i++) {
		int hosts = 0, ina = 0;

		snprintf(name, sizeof(name), "scarce-small/%d", i);
		assert_true(inart_scenario_known(name));
		assert_true(inart_scenario_describe(name, d, sizeof(d)) > 0);
		if (inart_scenario_build(name, 1, &t, &js, &err) < 0)
			fail_msg("%s: %s", name, err.msg);
		assert_true(js->n_jobs >= 2 && js->n_jobs <= 3);
		for (int j = 0; j < js->n_jobs; j++) {
			assert_int_equal(js->jobs[j].n_ps, 2);
			assert_true(js->jobs[j].n_workers >= 2 && js->jobs[j].n_workers <= 4);
		}
		for (int v = 0; v < t->n_nodes; v++) {
			hosts += t->nodes[v].kind == INART_NODE_HOST;
			if (t->nodes[v].ina)
				assert_true(t->nodes[v].trees >= 1 && t->nodes[v].trees <= 2);
			ina += t->nodes[v].ina;
		}
		assert_true(ina >= 3 && ina <= 6); /* the leaves */
		assert_true(hosts >= 6);
		/* reproducible by name and seed; another seed, another instance */
		assert_int_equal(inart_scenario_build(name, 1, &t2, &js2, &err), 0);
		assert_int_equal(t2->n_links, t->n_links);
		assert_int_equal(js2->jobs[0].workers[0], js->jobs[0].workers[0]);
		tu_free(t2, js2, NULL, NULL);
		tu_free(t, js, NULL, NULL);
	}
	assert_false(inart_scenario_known("scarce-small/"));
	assert_false(inart_scenario_known("scarce-small/x1"));
	assert_false(inart_scenario_known("scarce-small/N"));
	assert_int_equal(inart_scenario_build("scarce-small/1x", 1, &t, &js, &err), -EINVAL);
}

static void test_random_jobs(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 h2-e0 h3-e0 h4-e0 h5-e0 h6-e0", "");
	struct inart_jobs *js;
	struct inart_err err;

	(void)state;
	js = inart_scenario_random_jobs(t, 2, 2, 1, 1234, 5, &err);
	assert_non_null(js);
	assert_int_equal(js->n_jobs, 2);
	assert_string_equal(js->jobs[0].id, "j0");
	assert_string_equal(js->jobs[1].id, "j1");
	for (int j = 0; j < 2; j++) {
		assert_int_equal(js->jobs[j].n_workers, 2);
		assert_int_equal(js->jobs[j].n_ps, 1);
		assert_true(js->jobs[j].gradient_bytes == 1234);
		assert_null(js->jobs[j].model);
	}
	assert_disjoint_hosts(t, js);
	assert_int_equal(inart_jobs_validate(js, t, &err), 0);
	inart_jobs_destroy(js);

	/* all 7 hosts used: still disjoint */
	js = inart_scenario_random_jobs(t, 1, 5, 2, 1, 9, &err);
	assert_non_null(js);
	assert_disjoint_hosts(t, js);
	inart_jobs_destroy(js);

	/* one host too many */
	errno = 0;
	assert_null(inart_scenario_random_jobs(t, 2, 3, 1, 1, 5, &err));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.msg, "8 hosts needed, the topology has 7"));
	/* counts below 1 */
	for (int k = 0; k < 3; k++) {
		errno = 0;
		assert_null(inart_scenario_random_jobs(t, k == 0 ? 0 : 1, k == 1 ? 0 : 1,
						       k == 2 ? 0 : 1, 1, 5, &err));
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.msg, "counts must be >= 1"));
	}
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes),	cmocka_unit_test(test_default),
	    cmocka_unit_test(test_seed),	cmocka_unit_test(test_names_and_unknown),
	    cmocka_unit_test(test_random_jobs), cmocka_unit_test(test_scarce_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
