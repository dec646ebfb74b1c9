/*
 * gen: topology generators (fat-tree, leaf-spine, BCube) with options for
 * which switches are INA-capable and their capacities.  Node ids follow one
 * scheme per family (documented in docs/formats.md) so that scripts can name
 * hosts: fat-tree hosts h0.., edge e0.., aggregation a0.., core c0..;
 * leaf-spine hosts h0.., leaves l0.., spines s0..; BCube hosts h0.., level-i
 * switches s<i>_<n>.  Host numbering is contiguous under each edge/leaf.
 */
#ifndef INART_GEN_H
#define INART_GEN_H

#include <stdint.h>

#include "cp/model/graph.h"

enum inart_ina_mode {
	INART_INA_ALL = 0,    /* every switch */
	INART_INA_TOR = 1,    /* edge/leaf (BCube: level-0) switches only */
	INART_INA_RANDOM = 2, /* a seeded random fraction of the switches */
	INART_INA_NONE = 3,
};

struct inart_gen_opt {
	enum inart_ina_mode ina;
	double ina_fraction; /* for RANDOM, in [0, 1] */
	uint64_t seed;	     /* for RANDOM */
	double agg_gbps;     /* aggregation throughput of INA switches; default 400 */
	int trees;	     /* tree budget of INA switches; default 8 */
	double host_gbps;    /* host links; default 100 */
	double fabric_gbps;  /* switch-switch links; default 100 */
};

/* Defaults: ina ALL, agg 400, trees 8, host 100, fabric 100, fraction 0.5,
 * seed 1. */
void inart_gen_opt_default(struct inart_gen_opt *o);

/* Generators refuse (E2BIG) topologies above these sizes rather than
 * allocating absurd amounts of memory (fat-tree k = 64 is well inside). */
#define INART_GEN_MAX_NODES (1 << 21)
#define INART_GEN_MAX_LINKS (1 << 23)

/* NULL + errno (err says why, e.g. k odd) on failure.  o may be NULL
 * (defaults).  Node numbers: hosts first (h0.. in order), then the switches
 * in the order edge, aggregation, core / leaf, spine / level 0, 1, ...
 * Fat-tree(k), k even >= 2: k pods of k/2 edge and k/2 aggregation switches,
 * (k/2)^2 cores, k/2 hosts per edge (h_{e*k/2 + j} under e_e); aggregation
 * a_{p*k/2+j} links to cores c_{j*k/2} .. c_{j*k/2+k/2-1}.  Leaf-spine: every
 * leaf to every spine, h_{l*hpl + j} under l_l.  BCube(n, k): n^(k+1) hosts,
 * k+1 levels of n^k n-port switches; host h (base-n digits a_k..a_0) links to
 * s<l>_<h without digit l> at every level l; only host links (hosts relay). */
struct inart_topo *inart_gen_fattree(int k, const struct inart_gen_opt *o, struct inart_err *err);
struct inart_topo *inart_gen_leafspine(int spines, int leaves, int hosts_per_leaf,
				       const struct inart_gen_opt *o, struct inart_err *err);
struct inart_topo *inart_gen_bcube(int n, int k, const struct inart_gen_opt *o,
				   struct inart_err *err);

#endif
