/*
 * testutil: small builders shared by the cmocka tests (header-only).
 *
 * tu_topo("h0-e0 h1-e0 e0-h2", "e0:100:1") builds a topology from link specs
 * "a-b" or "a-b:gbps" (nodes named h* are hosts, everything else switches)
 * and INA specs "switch:agg_gbps:trees"; it fails the test on any error.
 * tu_flow/tu_tree add routes to a plan from node names and path specs
 * "h0 e0 e1" (tu_find fails the test on an unknown name).
 */
#ifndef INART_TESTUTIL_H
#define INART_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include "common/rng.h"
#include "cp/model/cand.h"
#include "cp/model/evaluate.h"
#include "cp/model/gen.h"
#include "cp/model/graph.h"
#include "cp/model/jobs.h"
#include "cp/model/plan.h"

static inline int tu_node(struct inart_topo *t, const char *id, const char *ina_specs)
{
	struct inart_err err;
	int v = inart_topo_find(t, id);
	double agg = 0;
	int trees = 0, ina = 0;
	char key[64];
	const char *p = ina_specs;

	if (v >= 0)
		return v;
	while (p && *p) {
		char name[64];
		double a;
		int tr, used = 0;

		if (sscanf(p, " %63[^:]:%lf:%d%n", name, &a, &tr, &used) == 3) {
			snprintf(key, sizeof(key), "%s", id);
			if (strcmp(name, key) == 0) {
				ina = 1;
				agg = a;
				trees = tr;
			}
			p += used;
		} else {
			break;
		}
	}
	v = inart_topo_add_node(t, id, id[0] == 'h' ? INART_NODE_HOST : INART_NODE_SWITCH, ina, agg,
				trees, &err);
	if (v < 0)
		fail_msg("tu_node %s: %s", id, err.msg);
	return v;
}

static inline struct inart_topo *tu_topo(const char *links, const char *ina_specs)
{
	struct inart_topo *t = inart_topo_create();
	struct inart_err err;
	const char *p = links;
	char a[64], b[64];
	int used;

	assert_non_null(t);
	while (*p) {
		double gbps = 100;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (sscanf(p, "%63[^-]-%63[^: ]%n", a, b, &used) != 2)
			fail_msg("bad link spec at '%s'", p);
		p += used;
		if (*p == ':') {
			p++;
			gbps = strtod(p, (char **)&p);
		}
		if (inart_topo_add_link(t, tu_node(t, a, ina_specs), tu_node(t, b, ina_specs), gbps,
					gbps, 0, 0, &err) < 0)
			fail_msg("link %s-%s: %s", a, b, err.msg);
	}
	if (inart_topo_finalize(t, &err) < 0)
		fail_msg("finalize: %s", err.msg);
	return t;
}

/* One job from space-separated worker and PS names. */
static inline void tu_job(struct inart_jobs *js, const struct inart_topo *t, const char *id,
			  const char *workers, const char *ps, double bytes)
{
	int w[256], p[64], nw = 0, np = 0, used;
	char name[64];
	struct inart_err err;
	const char *s;

	for (s = workers; sscanf(s, " %63s%n", name, &used) == 1 && nw < 256; s += used)
		w[nw++] = inart_topo_find(t, name);
	for (s = ps; sscanf(s, " %63s%n", name, &used) == 1 && np < 64; s += used)
		p[np++] = inart_topo_find(t, name);
	if (inart_jobs_add(js, id, w, nw, p, np, bytes, NULL, &err) < 0)
		fail_msg("job %s: %s", id, err.msg);
}

static inline struct inart_jobs *tu_jobs1(const struct inart_topo *t, const char *workers,
					  const char *ps, double bytes)
{
	struct inart_jobs *js = inart_jobs_create();
	struct inart_err err;

	assert_non_null(js);
	tu_job(js, t, "j0", workers, ps, bytes);
	if (inart_jobs_validate(js, t, &err) < 0)
		fail_msg("jobs: %s", err.msg);
	return js;
}

/* Candidate routes with k paths per flow (no_groups: one group per worker). */
static inline struct inart_cand *tu_cand(const struct inart_topo *t, const struct inart_jobs *js,
					 int k, int no_groups)
{
	struct inart_paths *paths = inart_paths_create(t);
	struct inart_cand_opt o;
	struct inart_cand *c = NULL;
	struct inart_err err;

	assert_non_null(paths);
	inart_cand_opt_default(&o);
	o.k_paths = k;
	o.no_groups = no_groups;
	if (inart_cand_build(t, js, paths, &o, &c, &err) < 0)
		fail_msg("cand: %s", err.msg);
	inart_paths_destroy(paths);
	return c;
}

/* Node number of id; fails the test if there is none. */
static inline int tu_find(const struct inart_topo *t, const char *id)
{
	int v = inart_topo_find(t, id);

	if (v < 0)
		fail_msg("no node %s", id);
	return v;
}

/* The node numbers of a space-separated path spec (at most 32); returns n. */
static inline int tu_path(const struct inart_topo *t, const char *spec, int nodes[32])
{
	char name[64];
	int n = 0, used;

	for (const char *s = spec; n < 32 && sscanf(s, " %63s%n", name, &used) == 1; s += used)
		nodes[n++] = tu_find(t, name);
	return n;
}

/* Flow of job j from worker w to PS ps aggregated at agg, along path. */
static inline void tu_flow(struct inart_plan *p, const struct inart_topo *t, int j, const char *w,
			   const char *ps, const char *agg, const char *path)
{
	int nodes[32], n = tu_path(t, path, nodes);

	assert_int_equal(
	    inart_plan_add_flow(p, j, tu_find(t, w), tu_find(t, ps), tu_find(t, agg), nodes, n), 0);
}

/* Tree of job j at switch sw for PS ps, to parent, along path. */
static inline void tu_tree(struct inart_plan *p, const struct inart_topo *t, int j, const char *sw,
			   const char *ps, const char *parent, const char *path)
{
	int nodes[32], n = tu_path(t, path, nodes);

	assert_int_equal(
	    inart_plan_add_tree(p, j, tu_find(t, sw), tu_find(t, ps), tu_find(t, parent), nodes, n),
	    0);
}

/* plan's communication time by the evaluator (the test fails if it refuses). */
static inline double tu_comm_time(const struct inart_topo *t, const struct inart_jobs *js,
				  struct inart_plan *p)
{
	struct inart_err err;

	if (inart_evaluate(t, js, p, &err) < 0)
		fail_msg("evaluate: %s", err.msg);
	return p->comm_time_s;
}

/* Destroy what a test built (p and c may be NULL): plan, candidates, jobs,
 * topology. */
static inline void tu_free(struct inart_topo *t, struct inart_jobs *js, struct inart_cand *c,
			   struct inart_plan *p)
{
	inart_plan_destroy(p);
	inart_cand_destroy(c);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The routes of the tiny case, links "h0-e0 h1-e0 e0-e1 e1-h2" at any
 * capacities (job 0, workers h0 h1, PS h2): both flows aggregate at e0,
 * whose tree goes e0 e1 h2. */
static inline void tu_tiny_routes(struct inart_plan *p, const struct inart_topo *t)
{
	tu_flow(p, t, 0, "h0", "h2", "e0", "h0 e0");
	tu_flow(p, t, 0, "h1", "h2", "e0", "h1 e0");
	tu_tree(p, t, 0, "e0", "h2", "h2", "e0 e1 h2");
}

/* Generator options of the seeded random instances, drawn from r: any INA
 * mode, 1 or 2 trees, 100 or 400 Gbit/s of aggregation. */
static inline void tu_gen_opt(struct inart_gen_opt *o, struct inart_rng *r, double ina_fraction,
			      uint64_t seed)
{
	inart_gen_opt_default(o);
	o->ina = (enum inart_ina_mode)(inart_rng_below(r, 3));
	o->ina_fraction = ina_fraction;
	o->seed = seed;
	o->trees = 1 + (int)inart_rng_below(r, 2);
	o->agg_gbps = inart_rng_below(r, 2) ? 400 : 100;
}

/* Background on about one arc in one_in: up to half its capacity. */
static inline void tu_background(struct inart_topo *t, struct inart_rng *r, uint64_t one_in)
{
	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		if (inart_rng_below(r, one_in) == 0)
			t->arcs[e].bg_gbps = t->arcs[e].gbps * 0.5 * inart_rng_unit(r);
}

#endif
