/*
 * gen: topology generators (see gen.h, docs/formats.md for the id schemes).
 *
 * Each generator first computes the sizes (in 64-bit arithmetic, rejecting
 * anything above INART_GEN_MAX_NODES / INART_GEN_MAX_LINKS before allocating),
 * then decides which switches are INA-capable, then adds hosts, switches and
 * links through graph.h in a fixed order, so the same parameters and seed
 * always give the same topology, node numbers included.
 *
 * Switches are numbered 0..n_sw-1 in the order they are added ("switch
 * rank"); the INA decision is an array over that rank.  RANDOM picks exactly
 * round(fraction * candidate switches) of them uniformly (partial
 * Fisher-Yates with the seeded generator of rng.h).
 */
#include "cp/model/gen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"

void inart_gen_opt_default(struct inart_gen_opt *o)
{
	*o = (struct inart_gen_opt){
	    .ina = INART_INA_ALL,
	    .ina_fraction = 0.5,
	    .seed = 1,
	    .agg_gbps = 400,
	    .trees = 8,
	    .host_gbps = 100,
	    .fabric_gbps = 100,
	};
}

static int check_opt(const struct inart_gen_opt *o, struct inart_err *err)
{
	if (o->ina != INART_INA_ALL && o->ina != INART_INA_TOR && o->ina != INART_INA_RANDOM &&
	    o->ina != INART_INA_NONE)
		return inart_err_set(err, -EINVAL, "unknown INA mode %d", (int)o->ina);
	if (o->ina == INART_INA_RANDOM && !(o->ina_fraction >= 0 && o->ina_fraction <= 1))
		return inart_err_set(err, -EINVAL, "INA fraction must be in [0, 1] (got %g)",
				     o->ina_fraction);
	if (o->ina != INART_INA_NONE && !(o->agg_gbps > 0 && isfinite(o->agg_gbps)))
		return inart_err_set(err, -EINVAL,
				     "aggregation throughput must be > 0 Gbit/s (got %g)",
				     o->agg_gbps);
	if (o->ina != INART_INA_NONE && o->trees < 0)
		return inart_err_set(err, -EINVAL, "tree budget must be >= 0 (got %d)", o->trees);
	if (!(o->host_gbps > 0 && isfinite(o->host_gbps)))
		return inart_err_set(err, -EINVAL, "host link capacity must be > 0 Gbit/s (got %g)",
				     o->host_gbps);
	if (!(o->fabric_gbps > 0 && isfinite(o->fabric_gbps)))
		return inart_err_set(err, -EINVAL,
				     "fabric link capacity must be > 0 Gbit/s (got %g)",
				     o->fabric_gbps);
	return 0;
}

static int check_size(const char *what, int64_t nodes, int64_t links, struct inart_err *err)
{
	if (nodes > INART_GEN_MAX_NODES || links > INART_GEN_MAX_LINKS)
		return inart_err_set(
		    err, -E2BIG,
		    "%s: too large (%lld nodes, %lld links; the limit is %d nodes, "
		    "%d links)",
		    what, (long long)nodes, (long long)links, INART_GEN_MAX_NODES,
		    INART_GEN_MAX_LINKS);
	return 0;
}

/*
 * INA decision per switch rank.  tor[s] says whether switch s is a ToR
 * (edge / leaf / BCube level 0).  RANDOM draws among all switches.
 */
static char *ina_choose(const struct inart_gen_opt *o, int n_sw, const char *tor)
{
	char *ina = calloc((size_t)n_sw + 1, 1);
	int *perm = NULL;

	if (ina == NULL)
		return NULL;
	switch (o->ina) {
	case INART_INA_ALL:
		memset(ina, 1, (size_t)n_sw);
		break;
	case INART_INA_TOR:
		for (int s = 0; s < n_sw; s++)
			ina[s] = tor[s];
		break;
	case INART_INA_NONE:
		break;
	case INART_INA_RANDOM: {
		struct inart_rng rng;
		int pick = (int)floor(o->ina_fraction * n_sw + 0.5);

		perm = malloc(sizeof(*perm) * ((size_t)n_sw + 1));
		if (perm == NULL) {
			free(ina);
			return NULL;
		}
		for (int s = 0; s < n_sw; s++)
			perm[s] = s;
		inart_rng_seed(&rng, o->seed);
		for (int i = 0; i < pick && i < n_sw; i++) {
			int j = i + (int)inart_rng_below(&rng, (uint64_t)(n_sw - i));
			int tmp = perm[i];

			perm[i] = perm[j];
			perm[j] = tmp;
			ina[perm[i]] = 1;
		}
		break;
	}
	}
	free(perm);
	return ina;
}

/* Builder state shared by the generators. */
struct build {
	struct inart_topo *t;
	const struct inart_gen_opt *o;
	const char *ina; /* per switch rank */
	int n_sw;	 /* switches added so far */
	struct inart_err *err;
	int rc;
};

/* Add a node; a switch takes the next INA choice.  Errors latch in b->rc. */
static void add_node(struct build *b, const char *id, enum inart_node_kind kind)
{
	int sw = kind == INART_NODE_SWITCH, v;

	if (b->rc)
		return;
	v = inart_topo_add_node(b->t, id, kind, sw ? b->ina[b->n_sw++] : 0, sw ? b->o->agg_gbps : 0,
				sw ? b->o->trees : 0, b->err);
	if (v < 0)
		b->rc = v;
}

/* Nodes fmt % 0 .. fmt % (n - 1), e.g. "h%d". */
static void add_nodes(struct build *b, const char *fmt, int n, enum inart_node_kind kind)
{
	for (int i = 0; i < n; i++) {
		char id[48];

		snprintf(id, sizeof(id), fmt, i);
		add_node(b, id, kind);
	}
}

static void add_link(struct build *b, int u, int v, double gbps)
{
	int rc;

	if (b->rc)
		return;
	rc = inart_topo_add_link(b->t, u, v, gbps, gbps, 0, 0, b->err);
	if (rc < 0)
		b->rc = rc;
}

/* Common start: check options, create the topology and the INA decision
 * for n_sw switches of which the first n_tor are top-of-rack.  On failure
 * everything is freed again. */
static int build_begin(struct build *b, const struct inart_gen_opt *o, struct inart_gen_opt *def,
		       int n_sw, int n_tor, struct inart_err *err)
{
	char *tor;

	memset(b, 0, sizeof(*b));
	if (o == NULL) {
		inart_gen_opt_default(def);
		o = def;
	}
	b->o = o;
	b->err = err;
	b->rc = check_opt(o, err);
	if (b->rc)
		return b->rc;
	tor = calloc((size_t)n_sw, 1);
	b->t = tor ? inart_topo_create() : NULL;
	if (b->t != NULL) {
		memset(tor, 1, (size_t)n_tor);
		b->ina = ina_choose(o, n_sw, tor);
	}
	free(tor);
	if (b->ina == NULL) {
		inart_topo_destroy(b->t);
		b->t = NULL;
		b->rc = inart_err_set(err, -ENOMEM, "out of memory");
	}
	return b->rc;
}

static struct inart_topo *build_end(struct build *b)
{
	struct inart_topo *t = b->t;

	if (b->rc == 0)
		b->rc = inart_topo_finalize(t, b->err);
	free((char *)b->ina);
	if (b->rc < 0) {
		inart_topo_destroy(t);
		errno = -b->rc;
		return NULL;
	}
	return t;
}

static struct inart_topo *gen_fail(int rc)
{
	errno = -rc;
	return NULL;
}

struct inart_topo *inart_gen_fattree(int k, const struct inart_gen_opt *o, struct inart_err *err)
{
	struct inart_gen_opt def;
	struct build b;
	int h = k / 2, n_edge, n_core, n_host, rc;
	int64_t kk = k;

	if (k < 2 || k % 2 != 0)
		return gen_fail(
		    inart_err_set(err, -EINVAL, "fat-tree: k must be even and >= 2 (got %d)", k));
	if (k > 4096)
		return gen_fail(inart_err_set(err, -E2BIG,
					      "fat-tree: k=%d is too large (the limit is %d nodes)",
					      k, INART_GEN_MAX_NODES));
	if ((rc = check_size("fat-tree", kk * kk * kk / 4 + 5 * kk * kk / 4, 3 * kk * kk * kk / 4,
			     err)) < 0)
		return gen_fail(rc);
	n_edge = k * h; /* also the number of aggregation switches */
	n_core = h * h;
	n_host = n_edge * h;
	if ((rc = build_begin(&b, o, &def, 2 * n_edge + n_core, n_edge, err)) < 0)
		return gen_fail(rc);
	/* Node numbers: hosts 0..n_host-1, edges, aggregations, cores. */
	add_nodes(&b, "h%d", n_host, INART_NODE_HOST);
	add_nodes(&b, "e%d", n_edge, INART_NODE_SWITCH);
	add_nodes(&b, "a%d", n_edge, INART_NODE_SWITCH);
	add_nodes(&b, "c%d", n_core, INART_NODE_SWITCH);
	if (b.rc == 0) {
		int e0 = n_host, a0 = n_host + n_edge, c0 = n_host + 2 * n_edge;

		for (int i = 0; i < n_host; i++)
			add_link(&b, i, e0 + i / h, b.o->host_gbps);
		/* In pod p, every edge e_{p h + i} to every aggregation a_{p h + j}. */
		for (int p = 0; p < k; p++)
			for (int i = 0; i < h; i++)
				for (int j = 0; j < h; j++)
					add_link(&b, e0 + p * h + i, a0 + p * h + j,
						 b.o->fabric_gbps);
		/* Aggregation j of every pod to cores c_{j h} .. c_{j h + h - 1}. */
		for (int p = 0; p < k; p++)
			for (int j = 0; j < h; j++)
				for (int c = 0; c < h; c++)
					add_link(&b, a0 + p * h + j, c0 + j * h + c,
						 b.o->fabric_gbps);
	}
	return build_end(&b);
}

struct inart_topo *inart_gen_leafspine(int spines, int leaves, int hosts_per_leaf,
				       const struct inart_gen_opt *o, struct inart_err *err)
{
	struct inart_gen_opt def;
	struct build b;
	int64_t n_nodes, n_links;
	int n_host, rc;

	if (spines < 1 || leaves < 1 || hosts_per_leaf < 1)
		return gen_fail(inart_err_set(
		    err, -EINVAL,
		    "leaf-spine: spines, leaves and hosts per leaf must be >= 1 (got %d, %d, %d)",
		    spines, leaves, hosts_per_leaf));
	n_nodes = (int64_t)leaves * hosts_per_leaf + leaves + spines;
	n_links = (int64_t)leaves * hosts_per_leaf + (int64_t)leaves * spines;
	if ((rc = check_size("leaf-spine", n_nodes, n_links, err)) < 0)
		return gen_fail(rc);
	n_host = leaves * hosts_per_leaf;
	if ((rc = build_begin(&b, o, &def, leaves + spines, leaves, err)) < 0)
		return gen_fail(rc);
	/* Node numbers: hosts, leaves, spines. */
	add_nodes(&b, "h%d", n_host, INART_NODE_HOST);
	add_nodes(&b, "l%d", leaves, INART_NODE_SWITCH);
	add_nodes(&b, "s%d", spines, INART_NODE_SWITCH);
	for (int i = 0; i < n_host; i++)
		add_link(&b, i, n_host + i / hosts_per_leaf, b.o->host_gbps);
	for (int l = 0; l < leaves; l++)
		for (int s = 0; s < spines; s++)
			add_link(&b, n_host + l, n_host + leaves + s, b.o->fabric_gbps);
	return build_end(&b);
}

struct inart_topo *inart_gen_bcube(int n, int k, const struct inart_gen_opt *o,
				   struct inart_err *err)
{
	struct inart_gen_opt def;
	struct build b;
	int64_t hosts = 1, per_level;
	int n_host, n_per, rc;

	if (n < 2 || k < 0)
		return gen_fail(inart_err_set(
		    err, -EINVAL, "BCube: need n >= 2 ports and level k >= 0 (got n=%d, k=%d)", n,
		    k));
	for (int l = 0; l <= k; l++) {
		hosts *= n;
		if (hosts > INART_GEN_MAX_NODES)
			return gen_fail(inart_err_set(
			    err, -E2BIG,
			    "BCube(%d, %d): too large (more than %d hosts; the limit is %d nodes)",
			    n, k, INART_GEN_MAX_NODES, INART_GEN_MAX_NODES));
	}
	per_level = hosts / n;
	if ((rc = check_size("BCube", hosts + (k + 1) * per_level, hosts * (k + 1), err)) < 0)
		return gen_fail(rc);
	n_host = (int)hosts;
	n_per = (int)per_level;
	if ((rc = build_begin(&b, o, &def, (k + 1) * n_per, n_per, err)) < 0)
		return gen_fail(rc);
	/* Node numbers: hosts, then level 0 switches, level 1, ... */
	add_nodes(&b, "h%d", n_host, INART_NODE_HOST);
	for (int l = 0; l <= k; l++) {
		char fmt[32];

		snprintf(fmt, sizeof(fmt), "s%d_%%d", l);
		add_nodes(&b, fmt, n_per, INART_NODE_SWITCH);
	}
	/* Host address a_k..a_0 (base n); its level-l switch is the address
	 * without digit l. */
	for (int l = 0, pl = 1; l <= k; l++, pl *= n) {
		for (int hst = 0; hst < n_host; hst++) {
			int sw = hst / (pl * n) * pl + hst % pl;

			add_link(&b, hst, n_host + l * n_per + sw, b.o->host_gbps);
		}
		if (l == k)
			break;
	}
	return build_end(&b);
}
