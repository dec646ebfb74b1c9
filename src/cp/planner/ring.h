/*
 * ring: the `ring` baseline -- bandwidth-optimal ring all-reduce among each
 * job's workers, as NCCL and gloo run it (no PS, no INA).
 *
 * With N workers, a gradient of G is cut into N chunks; in N - 1 steps of
 * reduce-scatter every worker sends one chunk to its successor on the ring,
 * and in N - 1 steps of all-gather it sends one reduced chunk on.  Each
 * worker therefore sends (N - 1)/N G in each phase to its successor and
 * receives as much from its predecessor: 2 (N - 1)/N G each way.  The plan
 * (plan.h) lists one hop per worker, the path from it to its successor; the
 * evaluator counts the reduce-scatter as push and the all-gather as pull,
 * both on the hop's forward arcs (docs/evaluator.md), so the time of a
 * worker's access link is 2 (N - 1)/N G over its capacity.
 *
 * Ring order: by locality -- from the worker with the lowest node number,
 * repeatedly the nearest (by hops) worker not yet on the ring, ties to the
 * lowest node number, so that racks and pods are visited contiguously and
 * each rack's uplinks carry one hop up and one down.  Paths: for each hop in
 * ring order (jobs in order), the one of its k = 4 shortest paths (spread as
 * ECMP would) whose most loaded arc, with the hop's load added, is the least
 * loaded.  The same evaluator judges the plan.
 */
#ifndef INART_RING_H
#define INART_RING_H

#include "cp/model/paths.h"
#include "cp/model/plan.h"

/* What one hop of job's ring carries forward over an all-reduce, both
 * phases: 2 (N - 1)/N of its gradient, in Gbit (the hop's ACKs, which load
 * the reverse arcs, not included: evaluate.h). */
double inart_ring_hop_gbit(const struct inart_job *job);

/* A new plan "ring" (owned by the caller) that has passed the evaluator, or
 * -errno (err says why). */
int inart_ring_plan(const struct inart_topo *t, const struct inart_jobs *js,
		    struct inart_paths *paths, struct inart_plan **out, struct inart_err *err);

#endif
