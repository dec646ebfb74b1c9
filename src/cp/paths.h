/*
 * paths: path search over the topology, by hop count, using only usable
 * links: residual capacity (capacity above the background load) > 0 in *both*
 * directions, since results return along the reverse of every push path.
 *
 * A path is a sequence of node numbers from source to destination, both
 * included, with consecutive nodes joined by a usable link and no node twice.
 * Hosts may be transit nodes (BCube servers relay), so nothing here forbids
 * it.  The context caches, per destination, the hop distance of every node to
 * it (BFS on the reversed arcs); it is not thread-safe: one per thread.
 *
 * Ownership: a pathset owns its arrays; the context owns its caches.
 */
#ifndef INART_PATHS_H
#define INART_PATHS_H

#include <stdint.h>

#include "graph.h"

/* A growable list of paths: path i is nodes[off[i] .. off[i+1]). */
struct inart_pathset {
	int n;
	int *off;   /* n + 1 entries (off[0] == 0) */
	int *nodes; /* off[n] entries */
	int cap_n, cap_nodes;
};

void inart_pathset_init(struct inart_pathset *ps);
void inart_pathset_free(struct inart_pathset *ps); /* leaves it empty, reusable */
void inart_pathset_clear(struct inart_pathset *ps);
/* Append a copy of a path; returns its index or -ENOMEM. */
int inart_pathset_add(struct inart_pathset *ps, const int *path, int len);
static inline int inart_pathset_len(const struct inart_pathset *ps, int i)
{
	return ps->off[i + 1] - ps->off[i];
}
static inline const int *inart_pathset_path(const struct inart_pathset *ps, int i)
{
	return ps->nodes + ps->off[i];
}

struct inart_paths;

struct inart_paths *inart_paths_create(const struct inart_topo *t);
void inart_paths_destroy(struct inart_paths *p);

/* Hop distance of every node to dst (n_nodes entries, -1 where dst cannot
 * be reached).  The array is cached and owned by the context. NULL + errno on
 * failure. */
const int *inart_paths_dist_to(struct inart_paths *p, int dst);

/* One shortest path src -> dst, written to path[0..cap).  Among equal-cost
 * next hops the choice is made by hashing (salt, node), like ECMP: the same
 * salt gives the same path, different salts spread over the shortest paths.
 * Returns the number of nodes, -EHOSTUNREACH, or -ENOSPC if cap is too small. */
int inart_paths_shortest(struct inart_paths *p, int src, int dst, uint64_t salt, int *path,
			 int cap);

/* Up to k shortest simple paths src -> dst in non-decreasing length (Yen's
 * algorithm).  When there are at least k shortest paths of the minimum
 * length, they are chosen spread evenly over all of them (by rank), so the k
 * candidates do not all share a first hop.  Appends to out; returns how many
 * were appended (>= 1), -EHOSTUNREACH or -ENOMEM.  Deterministic. */
int inart_paths_k_shortest(struct inart_paths *p, int src, int dst, int k,
			   struct inart_pathset *out);

/* 1 if path is a valid path in t (contiguous, usable arcs, simple), else 0. */
int inart_path_valid(const struct inart_topo *t, const int *path, int len);

#endif
