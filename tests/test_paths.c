/* Tests of paths: BFS distances, ECMP shortest paths, k shortest paths
 * (ranked spread and Yen), usability of links, the distance cache. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "cp/model/paths.h"

/* A topology of n switches named n0.. (links added by the caller). */
static struct inart_topo *mk_nodes(int n)
{
	struct inart_topo *t = inart_topo_create();
	char id[32];

	assert_non_null(t);
	for (int i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(inart_topo_add_node(t, id, INART_NODE_SWITCH, 0, 0, 0, NULL), i);
	}
	return t;
}

static void lnk(struct inart_topo *t, int a, int b)
{
	assert_true(inart_topo_add_link(t, a, b, 10, 10, 0, 0, NULL) >= 0);
}

static void fin(struct inart_topo *t)
{
	assert_int_equal(inart_topo_finalize(t, NULL), 0);
}

/* fin(t), then a path finder on it (and ps initialised, if given). */
static struct inart_paths *paths_open(struct inart_topo *t, struct inart_pathset *ps)
{
	struct inart_paths *p;

	fin(t);
	p = inart_paths_create(t);
	assert_non_null(p);
	if (ps)
		inart_pathset_init(ps);
	return p;
}

/* Free ps (if given), p and t. */
static void paths_close(struct inart_paths *p, struct inart_pathset *ps, struct inart_topo *t)
{
	if (ps)
		inart_pathset_free(ps);
	inart_paths_destroy(p);
	inart_topo_destroy(t);
}

static void expect_path(const struct inart_pathset *ps, int i, const int *want, int n)
{
	assert_int_equal(inart_pathset_len(ps, i), n);
	assert_memory_equal(inart_pathset_path(ps, i), want, sizeof(int) * (size_t)n);
}

/* Fat-tree(k): hosts first, then edge, aggregation, core switches. */
static struct inart_topo *mk_fattree(int k, int *n_hosts)
{
	struct inart_topo *t = inart_topo_create();
	int h = k * k * k / 4, half = k / 2, e0, a0, c0;
	char id[32];

	for (int i = 0; i < h; i++) {
		snprintf(id, sizeof(id), "h%d", i);
		inart_topo_add_node(t, id, INART_NODE_HOST, 0, 0, 0, NULL);
	}
	e0 = t->n_nodes;
	for (int i = 0; i < k * half; i++) {
		snprintf(id, sizeof(id), "e%d", i);
		inart_topo_add_node(t, id, INART_NODE_SWITCH, 1, 400, 8, NULL);
	}
	a0 = t->n_nodes;
	for (int i = 0; i < k * half; i++) {
		snprintf(id, sizeof(id), "a%d", i);
		inart_topo_add_node(t, id, INART_NODE_SWITCH, 1, 400, 8, NULL);
	}
	c0 = t->n_nodes;
	for (int i = 0; i < half * half; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		inart_topo_add_node(t, id, INART_NODE_SWITCH, 1, 400, 8, NULL);
	}
	for (int i = 0; i < h; i++)
		lnk(t, i, e0 + i / half);
	for (int pod = 0; pod < k; pod++)
		for (int e = 0; e < half; e++)
			for (int a = 0; a < half; a++) {
				lnk(t, e0 + pod * half + e, a0 + pod * half + a);
				for (int c = 0; c < half; c++)
					if (e == 0)
						lnk(t, a0 + pod * half + a, c0 + a * half + c);
			}
	fin(t);
	*n_hosts = h;
	return t;
}

/* All simple paths src -> dst by DFS in adjacency order (reference). */
struct enum_ctx {
	const struct inart_topo *t;
	int dst;
	int *stack, depth;
	char *on;
	struct inart_pathset all;
	int shortest_only;
	const int *dist;
};

static void enum_dfs(struct enum_ctx *c, int u)
{
	const struct inart_topo *t = c->t;

	c->stack[c->depth++] = u;
	c->on[u] = 1;
	if (u == c->dst) {
		assert_true(inart_pathset_add(&c->all, c->stack, c->depth) >= 0);
	} else {
		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (c->on[v] || inart_arc_residual(&t->arcs[e]) <= 0 ||
			    inart_arc_residual(&t->arcs[e ^ 1]) <= 0)
				continue;
			if (c->shortest_only && c->dist[v] != c->dist[u] - 1)
				continue;
			enum_dfs(c, v);
		}
	}
	c->on[u] = 0;
	c->depth--;
}

static void enum_paths(struct enum_ctx *c, const struct inart_topo *t, int src, int dst,
		       const int *dist)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->dst = dst;
	c->stack = calloc((size_t)t->n_nodes, sizeof(int));
	c->on = calloc((size_t)t->n_nodes, 1);
	c->dist = dist;
	c->shortest_only = dist != NULL;
	inart_pathset_init(&c->all);
	enum_dfs(c, src);
	free(c->stack);
	free(c->on);
}

static void test_bfs_line_and_unreachable(void **state)
{
	/* 0-1-2-3   4 isolated */
	struct inart_topo *t = mk_nodes(5);
	struct inart_paths *p;
	const int *d;
	int path[8];

	(void)state;
	lnk(t, 0, 1);
	lnk(t, 1, 2);
	lnk(t, 2, 3);
	p = paths_open(t, NULL);
	assert_non_null(p);
	d = inart_paths_dist_to(p, 3);
	assert_non_null(d);
	assert_int_equal(d[0], 3);
	assert_int_equal(d[1], 2);
	assert_int_equal(d[2], 1);
	assert_int_equal(d[3], 0);
	assert_int_equal(d[4], -1);
	assert_null(inart_paths_dist_to(p, 5));
	assert_null(inart_paths_dist_to(p, -1));
	assert_int_equal(inart_paths_shortest(p, 0, 3, 7, path, 8), 4);
	assert_int_equal(path[0], 0);
	assert_int_equal(path[3], 3);
	assert_int_equal(inart_paths_shortest(p, 0, 3, 7, path, 3), -ENOSPC);
	assert_int_equal(inart_paths_shortest(p, 4, 3, 7, path, 8), -EHOSTUNREACH);
	assert_int_equal(inart_paths_shortest(p, 3, 3, 7, path, 8), 1);
	assert_int_equal(path[0], 3);
	{
		struct inart_pathset ps;

		inart_pathset_init(&ps);
		assert_int_equal(inart_paths_k_shortest(p, 4, 0, 3, &ps), -EHOSTUNREACH);
		assert_int_equal(ps.n, 0);
		assert_int_equal(inart_paths_k_shortest(p, 0, 3, 0, &ps), -EINVAL);
		assert_int_equal(inart_paths_k_shortest(p, 2, 2, 3, &ps), 1);
		expect_path(&ps, 0, (int[]){2}, 1);
		inart_pathset_free(&ps);
	}
	paths_close(p, NULL, t);
}

/* Diamond s=0 via 1 or 2 to t=3, and a longer way 0-4-5-3. */
static struct inart_topo *mk_diamond(void)
{
	struct inart_topo *t = mk_nodes(6);

	lnk(t, 0, 1);
	lnk(t, 0, 2);
	lnk(t, 1, 3);
	lnk(t, 2, 3);
	lnk(t, 0, 4);
	lnk(t, 4, 5);
	lnk(t, 5, 3);
	fin(t);
	return t;
}

static void test_k_shortest_diamond(void **state)
{
	struct inart_topo *t = mk_diamond();
	struct inart_paths *p = inart_paths_create(t);
	struct inart_pathset ps;

	(void)state;
	inart_pathset_init(&ps);
	assert_int_equal(inart_paths_count_shortest(p, 0, 3), 2);
	assert_int_equal(inart_paths_k_shortest(p, 0, 3, 3, &ps), 3);
	expect_path(&ps, 0, (int[]){0, 1, 3}, 3);
	expect_path(&ps, 1, (int[]){0, 2, 3}, 3);
	expect_path(&ps, 2, (int[]){0, 4, 5, 3}, 4);
	/* Appends; asking for more than exist returns what exists. */
	assert_int_equal(inart_paths_k_shortest(p, 0, 3, 10, &ps), 3);
	assert_int_equal(ps.n, 6);
	expect_path(&ps, 5, (int[]){0, 4, 5, 3}, 4);
	/* k = 1: the first of rank 0; k = 2: both shortest. */
	inart_pathset_clear(&ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 3, 1, &ps), 1);
	expect_path(&ps, 0, (int[]){0, 1, 3}, 3);
	assert_int_equal(inart_paths_k_shortest(p, 3, 0, 2, &ps), 2);
	expect_path(&ps, 1, (int[]){3, 1, 0}, 3);
	expect_path(&ps, 2, (int[]){3, 2, 0}, 3);
	paths_close(p, &ps, t);
}

static void test_k_shortest_spread(void **state)
{
	/* 0 -> {1,2,3,4} -> 5 : four shortest paths. */
	struct inart_topo *t = mk_nodes(6);
	struct inart_paths *p;
	struct inart_pathset ps;

	(void)state;
	for (int m = 1; m <= 4; m++) {
		lnk(t, 0, m);
		lnk(t, m, 5);
	}
	p = paths_open(t, &ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 5, 2, &ps), 2);
	expect_path(&ps, 0, (int[]){0, 1, 5}, 3); /* rank 0 */
	expect_path(&ps, 1, (int[]){0, 3, 5}, 3); /* rank 2 */
	inart_pathset_clear(&ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 5, 3, &ps), 3);
	expect_path(&ps, 0, (int[]){0, 1, 5}, 3); /* rank 0 */
	expect_path(&ps, 1, (int[]){0, 2, 5}, 3); /* rank floor(4/3) = 1 */
	expect_path(&ps, 2, (int[]){0, 3, 5}, 3); /* rank floor(8/3) = 2 */
	inart_pathset_clear(&ps);
	/* Every middle node touches only 0 and 5: no longer simple path. */
	assert_int_equal(inart_paths_k_shortest(p, 0, 5, 5, &ps), 4);
	paths_close(p, &ps, t);
}

static void test_yen_ring(void **state)
{
	/* Ring 0-1-2-3-4-5-0: from 0 to 2 there are exactly two simple paths. */
	struct inart_topo *t = mk_nodes(6);
	struct inart_paths *p;
	struct inart_pathset ps;

	(void)state;
	for (int i = 0; i < 6; i++)
		lnk(t, i, (i + 1) % 6);
	p = paths_open(t, &ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 2, 4, &ps), 2);
	expect_path(&ps, 0, (int[]){0, 1, 2}, 3);
	expect_path(&ps, 1, (int[]){0, 5, 4, 3, 2}, 5);
	paths_close(p, &ps, t);
}

/* Ladder 2 x 4:  0-1-2-3 on top, 4-5-6-7 below, rungs i - i+4. */
static struct inart_topo *mk_ladder(void)
{
	struct inart_topo *t = mk_nodes(8);

	for (int i = 0; i < 3; i++) {
		lnk(t, i, i + 1);
		lnk(t, i + 4, i + 5);
	}
	for (int i = 0; i < 4; i++)
		lnk(t, i, i + 4);
	fin(t);
	return t;
}

/* k shortest against brute-force enumeration: lengths are the k smallest,
 * paths are distinct, valid and simple. */
static void check_against_enum(struct inart_topo *t, struct inart_paths *p, int src, int dst, int k)
{
	struct enum_ctx c;
	struct inart_pathset ps;
	int got, n_all, *lens;
	const int *d = inart_paths_dist_to(p, dst);

	inart_pathset_init(&ps);
	enum_paths(&c, t, src, dst, NULL);
	n_all = c.all.n;
	got = inart_paths_k_shortest(p, src, dst, k, &ps);
	if (n_all == 0) {
		assert_int_equal(got, -EHOSTUNREACH);
		inart_pathset_free(&c.all);
		return;
	}
	assert_int_equal(got, n_all < k ? n_all : k);
	lens = malloc(sizeof(int) * (size_t)n_all);
	for (int i = 0; i < n_all; i++)
		lens[i] = inart_pathset_len(&c.all, i);
	/* sort reference lengths */
	for (int i = 1; i < n_all; i++)
		for (int j = i; j > 0 && lens[j - 1] > lens[j]; j--) {
			int x = lens[j];

			lens[j] = lens[j - 1];
			lens[j - 1] = x;
		}
	for (int i = 0; i < got; i++) {
		const int *pi = inart_pathset_path(&ps, i);
		int li = inart_pathset_len(&ps, i);

		assert_int_equal(li, lens[i]);
		assert_int_equal(pi[0], src);
		assert_int_equal(pi[li - 1], dst);
		assert_true(inart_path_valid(t, pi, li));
		assert_int_equal(li, lens[i]);
		if (i == 0)
			assert_int_equal(li, d[src] + 1);
		for (int j = 0; j < i; j++)
			assert_false(
			    inart_pathset_len(&ps, j) == li &&
			    memcmp(inart_pathset_path(&ps, j), pi, sizeof(int) * (size_t)li) == 0);
	}
	free(lens);
	inart_pathset_free(&c.all);
	inart_pathset_free(&ps);
}

static void test_yen_ladder(void **state)
{
	struct inart_topo *t = mk_ladder();
	struct inart_paths *p = inart_paths_create(t);
	struct inart_pathset ps;

	(void)state;
	inart_pathset_init(&ps);
	/* 0 -> 7: shortest are 4 hops, 4 of them (choose where to cross). */
	assert_int_equal(inart_paths_count_shortest(p, 0, 7), 4);
	/* 0 -> 3: one shortest path 0-1-2-3, then 5 hops: via one detour. */
	assert_int_equal(inart_paths_k_shortest(p, 0, 3, 3, &ps), 3);
	expect_path(&ps, 0, (int[]){0, 1, 2, 3}, 4);
	assert_int_equal(inart_pathset_len(&ps, 1), 6);
	assert_int_equal(inart_pathset_len(&ps, 2), 6);
	inart_pathset_free(&ps);
	for (int s = 0; s < 8; s++)
		for (int d = 0; d < 8; d++)
			for (int k = 1; k <= 12; k += 3)
				check_against_enum(t, p, s, d, k);
	paths_close(p, NULL, t);
}

/* Seeded random small graphs: Yen and the ranked spread against DFS. */
static void test_random_graphs(void **state)
{
	struct inart_rng r;

	(void)state;
	inart_rng_seed(&r, 42);
	for (int g = 0; g < 40; g++) {
		int n = 5 + (int)inart_rng_below(&r, 5);
		struct inart_topo *t = mk_nodes(n);
		struct inart_paths *p;

		for (int a = 0; a < n; a++)
			for (int b = a + 1; b < n; b++)
				if (inart_rng_unit(&r) < 0.4) {
					/* some links unusable in one direction */
					double bg = inart_rng_unit(&r) < 0.1 ? 10 : 0;

					assert_true(
					    inart_topo_add_link(t, a, b, 10, 10, 0, bg, NULL) >= 0);
				}
		p = paths_open(t, NULL);
		for (int s = 0; s < n; s++)
			for (int d = 0; d < n; d++)
				check_against_enum(t, p, s, d, 1 + (int)inart_rng_below(&r, 8));
		paths_close(p, NULL, t);
	}
}

/* With >= k shortest paths, the result is the enumerated shortest paths at
 * ranks floor(i * count / k). */
static void test_ranks_fattree(void **state)
{
	int nh;
	struct inart_topo *t = mk_fattree(4, &nh);
	struct inart_paths *p = inart_paths_create(t);
	struct inart_pathset ps;
	struct enum_ctx c;

	(void)state;
	inart_pathset_init(&ps);
	for (int s = 0; s < nh; s++)
		for (int d = 0; d < nh; d++) {
			const int *dist = inart_paths_dist_to(p, d);
			uint64_t cnt = inart_paths_count_shortest(p, s, d);
			int k = 2;

			enum_paths(&c, t, s, d, dist);
			assert_int_equal(cnt, (uint64_t)c.all.n);
			if (s != d && s / 2 == d / 2)
				assert_int_equal(cnt, 1); /* same edge */
			else if (s != d && s / 4 == d / 4)
				assert_int_equal(cnt, 2); /* same pod */
			else if (s != d)
				assert_int_equal(cnt, 4); /* via the core */
			if (cnt >= (uint64_t)k) {
				inart_pathset_clear(&ps);
				assert_int_equal(inart_paths_k_shortest(p, s, d, k, &ps), k);
				for (int i = 0; i < k; i++) {
					int rank = (int)((uint64_t)i * cnt / (uint64_t)k);

					expect_path(&ps, i, inart_pathset_path(&c.all, rank),
						    inart_pathset_len(&c.all, rank));
				}
				/* spread: the two paths leave the edge switch differently */
				assert_int_not_equal(inart_pathset_path(&ps, 0)[2],
						     inart_pathset_path(&ps, 1)[2]);
			}
			inart_pathset_free(&c.all);
		}
	/* Same pod, k = 4: 2 shortest (4 hops); any other simple path must leave
	 * through one aggregation switch and come back through the other, via
	 * two cores and another pod: 10 hops (h0 e0 a0 c0 a' e' a'' c2 a1 e1 h2). */
	inart_pathset_clear(&ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 2, 4, &ps), 4);
	assert_int_equal(inart_pathset_len(&ps, 0), 5);
	assert_int_equal(inart_pathset_len(&ps, 1), 5);
	assert_int_equal(inart_pathset_len(&ps, 2), 11);
	assert_int_equal(inart_pathset_len(&ps, 3), 11);
	for (int i = 0; i < 4; i++)
		assert_true(
		    inart_path_valid(t, inart_pathset_path(&ps, i), inart_pathset_len(&ps, i)));
	check_against_enum(t, p, 0, 2, 4);
	check_against_enum(t, p, 0, 1, 3);
	paths_close(p, &ps, t);
}

static void test_ecmp(void **state)
{
	struct inart_topo *t = mk_nodes(6);
	struct inart_paths *p;
	int hits[6] = {0}, path[8], path2[8];

	(void)state;
	for (int m = 1; m <= 4; m++) {
		lnk(t, 0, m);
		lnk(t, m, 5);
	}
	p = paths_open(t, NULL);
	for (uint64_t salt = 0; salt < 2000; salt++) {
		assert_int_equal(inart_paths_shortest(p, 0, 5, salt, path, 8), 3);
		assert_int_equal(path[0], 0);
		assert_int_equal(path[2], 5);
		assert_true(inart_path_valid(t, path, 3));
		hits[path[1]]++;
		/* same salt, same path */
		assert_int_equal(inart_paths_shortest(p, 0, 5, salt, path2, 8), 3);
		assert_memory_equal(path, path2, sizeof(int) * 3);
	}
	for (int m = 1; m <= 4; m++) /* expect 500 each */
		assert_true(hits[m] > 400 && hits[m] < 600);
	paths_close(p, NULL, t);
}

static void test_unusable_links(void **state)
{
	/* Diamond 0-{1,2}-3; link 0-1 has no residual from 1 to 0 (background
	 * at capacity), link 2-3 is fine: every path avoids node 1. */
	struct inart_topo *t = mk_nodes(4);
	struct inart_paths *p;
	struct inart_pathset ps;
	int path[8];
	const int *d;

	(void)state;
	assert_true(inart_topo_add_link(t, 0, 1, 10, 10, 0, 10, NULL) >= 0);
	lnk(t, 0, 2);
	lnk(t, 1, 3);
	lnk(t, 2, 3);
	p = paths_open(t, NULL);
	d = inart_paths_dist_to(p, 0);
	assert_int_equal(d[1], 3); /* 1-3-2-0 */
	assert_int_equal(d[3], 2);
	for (uint64_t salt = 0; salt < 50; salt++) {
		assert_int_equal(inart_paths_shortest(p, 0, 3, salt, path, 8), 3);
		assert_int_equal(path[1], 2);
	}
	inart_pathset_init(&ps);
	assert_int_equal(inart_paths_k_shortest(p, 0, 3, 4, &ps), 1);
	expect_path(&ps, 0, (int[]){0, 2, 3}, 3);
	inart_pathset_free(&ps);
	assert_false(inart_path_valid(t, (int[]){0, 1, 3}, 3));
	assert_true(inart_path_valid(t, (int[]){0, 2, 3}, 3));
	assert_false(inart_path_valid(t, (int[]){0, 3}, 2));	   /* no link */
	assert_false(inart_path_valid(t, (int[]){0, 2, 0}, 3));	   /* not simple */
	assert_false(inart_path_valid(t, (int[]){0, 2, 3, 2}, 4)); /* not simple */
	assert_false(inart_path_valid(t, (int[]){0, 9}, 2));	   /* bad node */
	assert_false(inart_path_valid(t, path, 0));
	assert_true(inart_path_valid(t, (int[]){2}, 1));
	paths_close(p, NULL, t);
}

static void test_cache_eviction(void **state)
{
	/* Ring of 40 nodes, cache limited to 16 destinations. */
	int n = 40;
	struct inart_topo *t = mk_nodes(n);
	struct inart_paths *p;
	const int *keep;
	int copy[40];

	(void)state;
	for (int i = 0; i < n; i++)
		lnk(t, i, (i + 1) % n);
	p = paths_open(t, NULL);
	assert_int_equal(inart_paths_set_cache_limit(p, 4), 0); /* raised to 16 */
	keep = inart_paths_dist_to(p, 0);
	memcpy(copy, keep, sizeof(copy));
	for (int i = 1; i < INART_PATHS_MIN_CACHE; i++)
		assert_non_null(inart_paths_dist_to(p, i));
	/* 15 other destinations: the first array is still there and intact */
	assert_ptr_equal(inart_paths_dist_to(p, 0), keep);
	assert_memory_equal(keep, copy, sizeof(copy));
	for (int round = 0; round < 3; round++)
		for (int dst = 0; dst < n; dst++) {
			const int *d = inart_paths_dist_to(p, (dst * 7) % n);

			for (int v = 0; v < n; v++) {
				int a = abs(v - (dst * 7) % n);

				assert_int_equal(d[v], a < n - a ? a : n - a);
			}
		}
	paths_close(p, NULL, t);
}

/* Fat-tree k = 16 (1344 nodes): 4000 k-shortest calls towards 16 PSs and
 * 4000 ECMP paths, each finding a path.  Its speed is a benchmark claim,
 * not a test: bench/cp_bench (build/bench/cp_bench). */
static void test_fattree16_many(void **state)
{
	int nh;
	struct inart_topo *t = mk_fattree(16, &nh);
	struct inart_paths *p = inart_paths_create(t);
	struct inart_pathset ps;
	struct inart_rng r;
	int path[16];

	(void)state;
	assert_int_equal(t->n_nodes, 1344);
	inart_pathset_init(&ps);
	inart_rng_seed(&r, 7);
	for (int i = 0; i < 4000; i++) {
		int s = (int)inart_rng_below(&r, (uint64_t)nh);
		int d = (int)(inart_rng_below(&r, 16) * 64 + 1);

		inart_pathset_clear(&ps);
		assert_true(inart_paths_k_shortest(p, s, d, 4, &ps) >= 1);
		assert_true(inart_paths_shortest(p, s, d, (uint64_t)i, path, 16) >= 1);
	}
	paths_close(p, &ps, t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bfs_line_and_unreachable),
	    cmocka_unit_test(test_k_shortest_diamond),
	    cmocka_unit_test(test_k_shortest_spread),
	    cmocka_unit_test(test_yen_ring),
	    cmocka_unit_test(test_yen_ladder),
	    cmocka_unit_test(test_random_graphs),
	    cmocka_unit_test(test_ranks_fattree),
	    cmocka_unit_test(test_ecmp),
	    cmocka_unit_test(test_unusable_links),
	    cmocka_unit_test(test_cache_eviction),
	    cmocka_unit_test(test_fattree16_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
