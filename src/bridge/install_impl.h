/*
 * install_impl: the state of an installation being built, shared by the two
 * parts of the builder (not a public interface): install_label.c keeps the
 * label table (keys, entries and their variable parts: the label scheme of
 * install.h), install.c the rest (checks, node numbering, switch, PS and
 * worker configurations, routes, ingress) and the result.
 */
#ifndef INART_INSTALL_IMPL_H
#define INART_INSTALL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bridge/install.h"

#define DIR_UP 0
#define DIR_DOWN 1

struct key {
	int job, tree, dir, n;
	int *nodes;
	int sw, entry; /* where its entry lives: switch index, entry index */
};

struct swb {
	int node;
	int n_labels, cap_labels;
	struct inart_label_entry *labels;
	size_t *var;   /* per label: first word of its expected bitmap / first copy */
	uint64_t *exp; /* expected bitmaps of the aggregating entries */
	size_t n_exp, cap_exp;
	struct inart_label_down *dn; /* copies of the DOWN entries */
	size_t n_dn, cap_dn;
	int regions; /* trees given a slot region so far */
};

struct builder {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_plan *plan;
	const struct inart_deploy *d;
	struct inart_install_opt opt;
	struct inart_err *err;
	int *sw_index; /* node -> switch index, -1 for hosts */
	int n_sw;
	struct swb *sw;
	/* label keys */
	int n_keys, cap_keys;
	struct key *keys;
	int *hash; /* key index + 1, 0 empty */
	size_t hash_size;
	/* per job being built */
	int job, tree, ps;
	const struct inart_job_plan *jp;
	int *rank;     /* node -> rank in the current job, -1 */
	int *region;   /* per tree of the job plan: slot region at its switch, -1 */
	int *tree_at;  /* node -> tree index of (job, ps) at that switch, -1 */
	uint64_t *exp; /* per tree of the job plan: expected bitmap words */
	int words;
	int *path_buf;
	double comm_s; /* the plan's communication time (evaluator) */
};

static inline const char *nid(const struct builder *b, int v)
{
	return b->t->nodes[v].id;
}

static inline int is_switch(const struct builder *b, int v)
{
	return b->t->nodes[v].kind == INART_NODE_SWITCH;
}

/* Label of the remaining path nodes[0..n) in direction dir, reached from
 * node `from`, creating the labels of the whole path: 0 if nodes[0] is a host
 * (delivered there).  UP paths end at their aggregation point (a switch:
 * aggregate there; or the PS), DOWN paths at a replication switch or a
 * worker.  Every entry notes the ports it is reached on (in_ports). */
int64_t inart_install_path_label(struct builder *b, int dir, int from, const int *nodes, int n);

/* The children of aggregation point x in the current (job, tree): flows with
 * agg == x, then trees with parent == x, in plan order.  For each: its node,
 * and its path from x (reversed), *n_rev nodes, malloc'ed.  1 (one more), 0
 * (no more) or -ENOMEM. */
int inart_install_child_next(struct builder *b, int x, int *it, int *node, int **rev, int *n_rev);

/* Expected bitmap of tree ti (at switch s): ranks of the flows aggregated at
 * s plus the expected sets of the trees whose parent is s. */
void inart_install_expected_of(struct builder *b, int ti, char *done);

#endif
