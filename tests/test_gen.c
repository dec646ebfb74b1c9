/*
 * test_gen: the topology generators.  Counts, degrees and ids are checked
 * against the closed forms (fat-tree: 5k^2/4 switches, k^3/4 hosts, 3k^3/4
 * links; leaf-spine: l*h + l*s links; BCube(n, k): n^(k+1) hosts, (k+1) n^k
 * switches, (k+1) n^(k+1) links), the wiring against the construction
 * (pods, core groups, BCube digits), and the INA modes and options.
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

#include <cmocka.h>

#include "cp/model/gen.h"

static int degree(const struct inart_topo *t, int v)
{
	return t->out_off[v + 1] - t->out_off[v];
}

static int node(const struct inart_topo *t, const char *fmt, int i)
{
	char id[64];
	int v;

	snprintf(id, sizeof(id), fmt, i);
	v = inart_topo_find(t, id);
	if (v < 0)
		fail_msg("no node %s", id);
	return v;
}

static int linked(const struct inart_topo *t, int u, int v)
{
	return inart_topo_arc_between(t, u, v) >= 0;
}

static int count_ina(const struct inart_topo *t)
{
	int n = 0;

	for (int v = 0; v < t->n_nodes; v++)
		n += t->nodes[v].ina;
	return n;
}

static void check_fattree(int k)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_gen_fattree(k, NULL, &err);
	int h = k / 2, hosts = k * k * k / 4, edges = k * h, cores = h * h;

	if (t == NULL)
		fail_msg("k=%d: %s", k, err.msg);
	assert_int_equal(t->n_nodes, hosts + 2 * edges + cores);
	assert_int_equal(t->n_links, 3 * hosts);
	for (int i = 0; i < hosts; i++) {
		int v = node(t, "h%d", i);

		assert_int_equal(v, i); /* hosts are nodes 0..hosts-1 */
		assert_int_equal(t->nodes[v].kind, INART_NODE_HOST);
		assert_int_equal(degree(t, v), 1);
		/* Contiguous numbering under each edge switch. */
		assert_true(linked(t, v, node(t, "e%d", i / h)));
	}
	for (int p = 0; p < k; p++) {
		for (int i = 0; i < h; i++) {
			int e = node(t, "e%d", p * h + i), a = node(t, "a%d", p * h + i);

			assert_int_equal(t->nodes[e].kind, INART_NODE_SWITCH);
			assert_int_equal(degree(t, e), k);
			assert_int_equal(degree(t, a), k);
			for (int j = 0; j < h; j++) {
				/* Full bipartite edge-aggregation inside the pod. */
				assert_true(linked(t, e, node(t, "a%d", p * h + j)));
				/* Aggregation i goes to core group i. */
				assert_true(linked(t, a, node(t, "c%d", i * h + j)));
			}
			if (p > 0) /* no link across pods below the core */
				assert_false(linked(t, e, node(t, "a%d", (p - 1) * h + i)));
		}
	}
	for (int c = 0; c < cores; c++)
		assert_int_equal(degree(t, node(t, "c%d", c)), k);
	/* Default options: every switch INA with 400 / 8, 100 Gbit/s links. */
	assert_int_equal(count_ina(t), 2 * edges + cores);
	assert_true(t->nodes[node(t, "c%d", 0)].agg_gbps == 400);
	assert_int_equal(t->nodes[node(t, "e%d", 0)].trees, 8);
	for (int e = 0; e < 2 * t->n_links; e++)
		assert_true(t->arcs[e].gbps == 100 && t->arcs[e].bg_gbps == 0);
	inart_topo_destroy(t);
}

static void test_fattree(void **state)
{
	(void)state;
	check_fattree(2);
	check_fattree(4);
	check_fattree(6);
	check_fattree(8);
}

static void test_fattree_large(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t;

	(void)state;
	t = inart_gen_fattree(32, NULL, &err);
	assert_non_null(t);
	assert_int_equal(t->n_nodes, 8192 + 1280);
	inart_topo_destroy(t);
	t = inart_gen_fattree(64, NULL, &err);
	assert_non_null(t);
	assert_int_equal(t->n_nodes, 65536 + 5 * 64 * 64 / 4);
	assert_int_equal(t->n_links, 3 * 65536);
	assert_int_equal(node(t, "h%d", 65535), 65535);
	assert_true(linked(t, 65535, node(t, "e%d", 2047)));
	inart_topo_destroy(t);
}

static void test_leafspine(void **state)
{
	struct inart_err err = {{0}};
	struct inart_gen_opt o;
	struct inart_topo *t;

	(void)state;
	inart_gen_opt_default(&o);
	o.host_gbps = 25;
	o.fabric_gbps = 40;
	t = inart_gen_leafspine(2, 3, 4, &o, &err);
	assert_non_null(t);
	assert_int_equal(t->n_nodes, 12 + 3 + 2);
	assert_int_equal(t->n_links, 12 + 6);
	for (int i = 0; i < 12; i++) {
		int v = node(t, "h%d", i), l = node(t, "l%d", i / 4);
		int e = inart_topo_arc_between(t, v, l);

		assert_int_equal(v, i);
		assert_int_equal(degree(t, v), 1);
		assert_true(e >= 0);
		assert_true(t->arcs[e].gbps == 25 && t->arcs[e ^ 1].gbps == 25);
	}
	for (int l = 0; l < 3; l++) {
		assert_int_equal(degree(t, node(t, "l%d", l)), 4 + 2);
		for (int s = 0; s < 2; s++) {
			int e = inart_topo_arc_between(t, node(t, "l%d", l), node(t, "s%d", s));

			assert_true(e >= 0);
			assert_true(t->arcs[e].gbps == 40);
		}
	}
	for (int s = 0; s < 2; s++)
		assert_int_equal(degree(t, node(t, "s%d", s)), 3);
	inart_topo_destroy(t);
}

/* BCube(n, k): host address digits; level-l switch = address without digit l. */
static void check_bcube(int n, int k)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_gen_bcube(n, k, NULL, &err);
	int hosts = 1, per;

	if (t == NULL)
		fail_msg("BCube(%d,%d): %s", n, k, err.msg);
	for (int i = 0; i <= k; i++)
		hosts *= n;
	per = hosts / n;
	assert_int_equal(t->n_nodes, hosts + (k + 1) * per);
	assert_int_equal(t->n_links, hosts * (k + 1));
	for (int hst = 0; hst < hosts; hst++) {
		int pl = 1;

		assert_int_equal(node(t, "h%d", hst), hst);
		assert_int_equal(degree(t, hst), k + 1);
		for (int l = 0; l <= k; l++, pl *= n) {
			/* Remove digit l from hst (base n). */
			int idx = hst / (pl * n) * pl + hst % pl;
			char id[64];

			snprintf(id, sizeof(id), "s%d_%d", l, idx);
			assert_true(inart_topo_find(t, id) >= 0);
			assert_true(linked(t, hst, inart_topo_find(t, id)));
		}
	}
	for (int v = hosts; v < t->n_nodes; v++) {
		assert_int_equal(t->nodes[v].kind, INART_NODE_SWITCH);
		assert_int_equal(degree(t, v), n);
		/* Only host links: every neighbour of a switch is a host. */
		for (int i = t->out_off[v]; i < t->out_off[v + 1]; i++)
			assert_int_equal(t->nodes[t->arcs[t->arc_out[i]].to].kind, INART_NODE_HOST);
	}
	inart_topo_destroy(t);
}

static void test_bcube(void **state)
{
	struct inart_err err = {{0}};
	struct inart_topo *t;

	(void)state;
	check_bcube(2, 0);
	check_bcube(4, 1);
	check_bcube(3, 2);
	check_bcube(2, 3);
	/* Hand-checked: in BCube(4, 1), h5 = digits (1, 1) sits on s0_1 and
	 * s1_1 together with h4, h6, h7 and h1, h9, h13 respectively. */
	t = inart_gen_bcube(4, 1, NULL, &err);
	assert_non_null(t);
	{
		int s0 = inart_topo_find(t, "s0_1"), s1 = inart_topo_find(t, "s1_1");
		int on0[] = {4, 5, 6, 7}, on1[] = {1, 5, 9, 13};

		for (int i = 0; i < 4; i++) {
			assert_true(linked(t, on0[i], s0));
			assert_true(linked(t, on1[i], s1));
		}
		assert_int_equal(t->nodes[s1].ina, 1);
	}
	inart_topo_destroy(t);
}

static void test_ina_modes(void **state)
{
	struct inart_err err = {{0}};
	struct inart_gen_opt o;
	struct inart_topo *t;

	(void)state;
	inart_gen_opt_default(&o);
	assert_int_equal(o.ina, INART_INA_ALL);
	assert_true(o.agg_gbps == 400 && o.trees == 8 && o.host_gbps == 100 &&
		    o.fabric_gbps == 100);

	o.ina = INART_INA_TOR;
	o.agg_gbps = 123;
	o.trees = 3;
	t = inart_gen_fattree(4, &o, &err);
	assert_int_equal(count_ina(t), 8);
	for (int i = 0; i < 8; i++) {
		const struct inart_node *e = &t->nodes[node(t, "e%d", i)];

		assert_true(e->ina && e->agg_gbps == 123 && e->trees == 3);
		assert_false(t->nodes[node(t, "a%d", i)].ina);
	}
	inart_topo_destroy(t);
	t = inart_gen_leafspine(3, 5, 2, &o, &err);
	assert_int_equal(count_ina(t), 5);
	assert_true(t->nodes[node(t, "l%d", 4)].ina);
	assert_false(t->nodes[node(t, "s%d", 0)].ina);
	inart_topo_destroy(t);
	t = inart_gen_bcube(3, 1, &o, &err);
	assert_int_equal(count_ina(t), 3);
	for (int i = 0; i < 3; i++) {
		assert_true(t->nodes[inart_topo_find(t, i == 0	 ? "s0_0"
							: i == 1 ? "s0_1"
								 : "s0_2")]
				.ina);
		assert_false(t->nodes[inart_topo_find(t, i == 0	  ? "s1_0"
							 : i == 1 ? "s1_1"
								  : "s1_2")]
				 .ina);
	}
	inart_topo_destroy(t);

	o.ina = INART_INA_NONE;
	t = inart_gen_fattree(4, &o, &err);
	assert_int_equal(count_ina(t), 0);
	inart_topo_destroy(t);
}

/* Sorted INA switch list of a topology, as a string for comparisons. */
static void ina_set(const struct inart_topo *t, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int v = 0; v < t->n_nodes && n < cap; v++)
		if (t->nodes[v].ina)
			n += (size_t)snprintf(buf + n, cap - n, "%s ", t->nodes[v].id);
}

static void test_ina_random(void **state)
{
	struct inart_err err = {{0}};
	struct inart_gen_opt o;
	struct inart_topo *t;
	char a[4096], b[4096];
	int differ = 0;

	(void)state;
	inart_gen_opt_default(&o);
	o.ina = INART_INA_RANDOM;
	o.ina_fraction = 0.25;
	o.seed = 42;
	/* fat-tree k=8: 80 switches -> exactly 20 INA, hosts never. */
	t = inart_gen_fattree(8, &o, &err);
	assert_int_equal(count_ina(t), 20);
	for (int v = 0; v < 128; v++)
		assert_false(t->nodes[v].ina);
	ina_set(t, a, sizeof(a));
	inart_topo_destroy(t);
	/* Same seed: the same set. */
	t = inart_gen_fattree(8, &o, &err);
	ina_set(t, b, sizeof(b));
	assert_string_equal(a, b);
	inart_topo_destroy(t);
	/* Other seeds: other sets (20 of 80 switches: equal sets for several
	 * seeds would be a broken generator). */
	for (uint64_t s = 1; s <= 5; s++) {
		o.seed = s;
		t = inart_gen_fattree(8, &o, &err);
		assert_int_equal(count_ina(t), 20);
		ina_set(t, b, sizeof(b));
		differ += strcmp(a, b) != 0;
		inart_topo_destroy(t);
	}
	assert_int_equal(differ, 5);
	/* Edge cases of the fraction: 0 -> none, 1 -> all; rounding. */
	o.ina_fraction = 0;
	t = inart_gen_leafspine(4, 4, 1, &o, &err);
	assert_int_equal(count_ina(t), 0);
	inart_topo_destroy(t);
	o.ina_fraction = 1;
	t = inart_gen_leafspine(4, 4, 1, &o, &err);
	assert_int_equal(count_ina(t), 8);
	inart_topo_destroy(t);
	o.ina_fraction = 0.3; /* 0.3 * 8 = 2.4 -> 2 */
	t = inart_gen_leafspine(4, 4, 1, &o, &err);
	assert_int_equal(count_ina(t), 2);
	inart_topo_destroy(t);
}

static void expect_fail(struct inart_topo *t, int err_no, const struct inart_err *err,
			const char *needle)
{
	if (t != NULL)
		fail_msg("expected a failure (%s)", needle);
	assert_int_equal(errno, err_no);
	if (strstr(err->msg, needle) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, needle);
}

static void test_bad_parameters(void **state)
{
	struct inart_err err = {{0}};
	struct inart_gen_opt o;

	(void)state;
	expect_fail(inart_gen_fattree(3, NULL, &err), EINVAL, &err, "k must be even");
	expect_fail(inart_gen_fattree(0, NULL, &err), EINVAL, &err, "got 0");
	expect_fail(inart_gen_fattree(-4, NULL, &err), EINVAL, &err, "got -4");
	expect_fail(inart_gen_fattree(1000000, NULL, &err), E2BIG, &err, "too large");
	expect_fail(inart_gen_fattree(256, NULL, &err), E2BIG, &err, "too large");
	expect_fail(inart_gen_leafspine(0, 4, 4, NULL, &err), EINVAL, &err, "must be >= 1");
	expect_fail(inart_gen_leafspine(4, 4, 0, NULL, &err), EINVAL, &err, "must be >= 1");
	expect_fail(inart_gen_leafspine(100000, 100000, 1, NULL, &err), E2BIG, &err, "too large");
	expect_fail(inart_gen_leafspine(1, 2000000000, 2000000000, NULL, &err), E2BIG, &err,
		    "too large");
	expect_fail(inart_gen_bcube(1, 2, NULL, &err), EINVAL, &err, "n >= 2");
	expect_fail(inart_gen_bcube(4, -1, NULL, &err), EINVAL, &err, "k >= 0");
	expect_fail(inart_gen_bcube(2, 40, NULL, &err), E2BIG, &err, "too large");
	expect_fail(inart_gen_bcube(2000000000, 3, NULL, &err), E2BIG, &err, "too large");

	inart_gen_opt_default(&o);
	o.ina = INART_INA_RANDOM;
	o.ina_fraction = 1.5;
	expect_fail(inart_gen_fattree(4, &o, &err), EINVAL, &err, "fraction");
	o.ina_fraction = NAN;
	expect_fail(inart_gen_fattree(4, &o, &err), EINVAL, &err, "fraction");
	inart_gen_opt_default(&o);
	o.agg_gbps = 0;
	expect_fail(inart_gen_fattree(4, &o, &err), EINVAL, &err, "aggregation throughput");
	inart_gen_opt_default(&o);
	o.trees = -1;
	expect_fail(inart_gen_leafspine(1, 1, 1, &o, &err), EINVAL, &err, "tree budget");
	inart_gen_opt_default(&o);
	o.host_gbps = -1;
	expect_fail(inart_gen_bcube(2, 1, &o, &err), EINVAL, &err, "host link capacity");
	inart_gen_opt_default(&o);
	o.fabric_gbps = INFINITY;
	expect_fail(inart_gen_fattree(4, &o, &err), EINVAL, &err, "fabric link capacity");
	inart_gen_opt_default(&o);
	o.ina = (enum inart_ina_mode)9;
	expect_fail(inart_gen_fattree(4, &o, &err), EINVAL, &err, "INA mode");
	/* NONE ignores the INA capacities. */
	inart_gen_opt_default(&o);
	o.ina = INART_INA_NONE;
	o.agg_gbps = 0;
	{
		struct inart_topo *t = inart_gen_fattree(4, &o, &err);

		assert_non_null(t);
		inart_topo_destroy(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fattree),	   cmocka_unit_test(test_fattree_large),
	    cmocka_unit_test(test_leafspine),	   cmocka_unit_test(test_bcube),
	    cmocka_unit_test(test_ina_modes),	   cmocka_unit_test(test_ina_random),
	    cmocka_unit_test(test_bad_parameters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
