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

#include "cp/model/graph.h"

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
 * failure.
 *
 * Lifetime: the cache holds a bounded number of destinations (a memory budget
 * of about 32 MiB, never fewer than INART_PATHS_MIN_CACHE) and reuses the
 * least recently used one when full.  Every call on the context touches at
 * most one destination, so the returned array stays valid until
 * INART_PATHS_MIN_CACHE other distinct destinations have been used by calls
 * on this context (dist_to, shortest, k_shortest, count_shortest), and at
 * least until the next such call.  Usability of links is read from the
 * topology when the context is created: make a new context if it changes. */
#define INART_PATHS_MIN_CACHE 16
const int *inart_paths_dist_to(struct inart_paths *p, int dst);

/* Change the cache limit (number of destinations, at least
 * INART_PATHS_MIN_CACHE); for tests and memory-tight callers.  0 or -ENOMEM. */
int inart_paths_set_cache_limit(struct inart_paths *p, int slots);

/* Number of shortest paths src -> dst (saturating at 2^62), 0 if unreachable
 * or on error. */
uint64_t inart_paths_count_shortest(struct inart_paths *p, int src, int dst);

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
 * were appended (>= 1), -EHOSTUNREACH, -EINVAL (bad node, k < 1) or -ENOMEM
 * (out is then left as it was).  Deterministic.  Ranks order the shortest
 * paths by the adjacency order (arcs sorted by head node): rank r of c paths,
 * path i of k is the one of rank floor(i * c / k).  With fewer than k shortest
 * paths, all of them come first (by rank), then longer ones in non-decreasing
 * length (ties in the order Yen's algorithm finds them). */
int inart_paths_k_shortest(struct inart_paths *p, int src, int dst, int k,
			   struct inart_pathset *out);

/* The same, with the ranks of the spread rotated by hash(salt, dst) (salt 0:
 * no rotation), so that sources with different salts do not all get the same
 * equal-cost paths (as ECMP spreads flows).  Deterministic per salt. */
int inart_paths_k_shortest_salted(struct inart_paths *p, int src, int dst, int k, uint64_t salt,
				  struct inart_pathset *out);

/* 1 if path is a valid path in t (contiguous, usable arcs, simple), else 0. */
int inart_path_valid(const struct inart_topo *t, const int *path, int len);

#endif
