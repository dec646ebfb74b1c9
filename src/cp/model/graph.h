/*
 * graph: the network topology as the control plane sees it.
 *
 * Nodes are hosts or switches; a switch may be INA-capable (in-network
 * aggregation) with an aggregation throughput agg_gbps (Gbit/s of input it
 * can merge) and a tree budget (how many (job, PS) aggregation trees its
 * memory holds at once).  A cable (link) between two nodes gives two directed
 * arcs: link i is arc 2i (a->b) and arc 2i+1 (b->a), so the reverse of arc e
 * is e ^ 1.  Each arc has a capacity and a background load in Gbit/s; the
 * planner only uses the residual (capacity - background).
 *
 * Invariants after inart_topo_finalize(): node ids are unique, every link joins
 * two distinct existing nodes, at most one link joins a pair, capacities are
 * > 0 and 0 <= background <= capacity.  The adjacency arrays (CSR) list, for
 * node v, the arcs leaving v in arc_out[out_off[v] .. out_off[v+1]).
 *
 * Ownership: the topology owns every string and array in it; node ids stay
 * where they are until the topology is destroyed.
 */
#ifndef INART_GRAPH_H
#define INART_GRAPH_H

#include <stdint.h>

#include "common/err.h"
#include "common/strpool.h"

enum inart_node_kind {
	INART_NODE_HOST = 0,
	INART_NODE_SWITCH = 1,
};

struct inart_node {
	char *id;
	enum inart_node_kind kind;
	int ina;	 /* 1 if INA-capable (switches only) */
	double agg_gbps; /* aggregation throughput, > 0 when ina */
	int trees;	 /* tree budget, >= 0 when ina */
};

struct inart_arc {
	int from, to;
	double gbps;	/* capacity in this direction */
	double bg_gbps; /* background load in this direction */
};

struct inart_topo {
	int n_nodes, n_links; /* n_arcs == 2 * n_links */
	struct inart_node *nodes;
	struct inart_arc *arcs;
	int *out_off; /* n_nodes + 1 entries, valid after finalize */
	int *arc_out; /* 2 * n_links entries, valid after finalize */
	void *adj;    /* private: the block of out_off and arc_out */
	/* private: capacities of the arrays and the id index */
	int cap_nodes, cap_links;
	int *index;	/* open-addressing hash of node ids -> node number */
	int index_size; /* power of two; 0 until the first node */
	int finalized;
	struct inart_strpool ids; /* private: where the node ids are kept */
};

struct inart_topo *inart_topo_create(void);
void inart_topo_destroy(struct inart_topo *t);

/* Add a node; returns its number (>= 0) or -EEXIST (duplicate id), -EINVAL,
 * -ENOMEM.  Switches are INA-capable when ina != 0. */
int inart_topo_add_node(struct inart_topo *t, const char *id, enum inart_node_kind kind, int ina,
			double agg_gbps, int trees, struct inart_err *err);

/* Add a link between nodes a and b (numbers) with per-direction capacity and
 * background.  Returns the link number or a negative errno (err says why). */
int inart_topo_add_link(struct inart_topo *t, int a, int b, double ab_gbps, double ba_gbps,
			double bg_ab_gbps, double bg_ba_gbps, struct inart_err *err);

/* Build the adjacency arrays; checks the invariants above.  0 or -errno. */
int inart_topo_finalize(struct inart_topo *t, struct inart_err *err);

/* Node number for an id, or -1. */
int inart_topo_find(const struct inart_topo *t, const char *id);

/* Arc from u to v, or -1 (requires finalize). */
int inart_topo_arc_between(const struct inart_topo *t, int u, int v);

static inline int inart_topo_n_arcs(const struct inart_topo *t)
{
	return 2 * t->n_links;
}

static inline double inart_arc_residual(const struct inart_arc *a)
{
	return a->gbps - a->bg_gbps;
}

#endif
