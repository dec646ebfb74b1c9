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

#include "graph.h"

enum inart_ina_mode {
	INART_INA_ALL = 0,    /* every switch */
	INART_INA_TOR = 1,    /* edge/leaf (BCube: level-0) switches only */
	INART_INA_RANDOM = 2, /* a seeded random fraction of the switches */
	INART_INA_NONE = 3,
};

struct inart_gen_opt {
	enum inart_ina_mode ina;
	double ina_fraction; /* for RANDOM, in [0, 1] */
	uint64_t seed;       /* for RANDOM */
	double agg_gbps;     /* aggregation throughput of INA switches; default 400 */
	int trees;           /* tree budget of INA switches; default 8 */
	double host_gbps;    /* host links; default 100 */
	double fabric_gbps;  /* switch-switch links; default 100 */
};

void inart_gen_opt_default(struct inart_gen_opt *o);

/* NULL + errno (err says why, e.g. k odd) on failure. */
struct inart_topo *inart_gen_fattree(int k, const struct inart_gen_opt *o, struct inart_err *err);
struct inart_topo *inart_gen_leafspine(int spines, int leaves, int hosts_per_leaf,
				       const struct inart_gen_opt *o, struct inart_err *err);
struct inart_topo *inart_gen_bcube(int n, int k, const struct inart_gen_opt *o,
				   struct inart_err *err);

#endif
