/*
 * evaluate: the single definition of communication time used everywhere.
 *
 * Load model (all volumes in Gbit, one training iteration).  Job j with
 * gradient G_j sends share a_p * G_j to PS p.
 *  - push: each flow (w, p, agg) carries a_p*G_j along its path from w to
 *    agg; each tree (s, p, parent) merges its children's streams and carries
 *    one a_p*G_j stream along its path from s to parent.  The aggregation
 *    input of INA switch s is the sum of its children's streams.
 *  - pull: the result retraces every flow and tree path in reverse (one
 *    a_p*G_j stream per path, replicated at the aggregation points).
 *  - time of a directed link = (push + pull load) / residual capacity; time of
 *    an INA switch = aggregation input / aggregation throughput.
 *  - push_time_s / pull_time_s: the same maxima over push or pull load alone;
 *    comm_time_s: the maximum over links (push and pull loads together, since
 *    both directions of a full-duplex link pipeline independently but the two
 *    phases overlap chunk by chunk) and switches.  When no directed link
 *    carries both push and pull traffic, comm = max(push, pull).
 *  - a ring all-reduce job (plan.h: ring hops, no PS) with N workers loads
 *    every forward arc of every hop with (N-1)/N * G_j as push
 *    (reduce-scatter) and as much as pull (all-gather), and every reverse
 *    arc with INART_EVAL_RING_ACK_SHARE of that in each phase (the
 *    successor's acknowledgements go back along the hop).
 *
 * Validity (first error reported, naming the job, node ids and reason): every
 * path contiguous, simple, with the right endpoints and residual capacity on
 * every arc; agg is the flow's PS or an INA switch with a tree entry for (job,
 * PS); a tree's switch is INA-capable; at most one tree per (job, PS, switch);
 * tree budgets respected (trees of all jobs counted); a split with n_ps
 * non-negative shares summing to 1 (within 1e-6); exactly one flow for every
 * (worker, PS with a non-zero share), and flows only from the job's workers to
 * its PSs; tree parents form no cycle and reach the PS; every tree has at
 * least one child.
 */
#ifndef INART_EVALUATE_H
#define INART_EVALUATE_H

/* The ring's acknowledgements, as a share of the DATA it acknowledges: the
 * ring core (dp/ring.h) answers every DATA frame of 1514 bytes (Ethernet, IP,
 * UDP, 32-byte ring header, 360 values) with one ACK frame of 74 bytes
 * (headers only; docs/wire.md).  On packets that is 4.9% of a hop's load
 * going the other way, on the links the hop uses (emulator: scarce-small/1);
 * test_ring_dp checks the constant against the wire format. */
#define INART_EVAL_RING_ACK_SHARE (74.0 / 1514.0)

#include "cp/model/plan.h"

struct inart_eval {
	double comm_time_s, push_time_s, pull_time_s;
	int bottleneck_arc;  /* arc that sets comm time, or -1 */
	int bottleneck_node; /* INA switch that sets comm time, or -1 */
	/* Owned by the evaluator, valid until its next run or destroy. */
	const double *arc_push_gbit;     /* per arc */
	const double *arc_pull_gbit;     /* per arc */
	const double *node_agg_gbit;     /* per node: aggregation input */
	const int *node_trees;           /* per node: trees installed */
	const double *node_ingress_gbit; /* per node: push volume arriving at it as PS */
};

struct inart_evaluator;

struct inart_evaluator *inart_evaluator_create(const struct inart_topo *t,
					       const struct inart_jobs *js);
void inart_evaluator_destroy(struct inart_evaluator *ev);

/* Check and evaluate plan.  0 (out filled if non-NULL) or -EINVAL with the
 * reason in err.  Does not modify the plan. */
int inart_evaluator_run(struct inart_evaluator *ev, const struct inart_plan *plan,
			struct inart_eval *out, struct inart_err *err);

/* One-shot: evaluate and store comm/push/pull times in the plan. */
int inart_evaluate(const struct inart_topo *t, const struct inart_jobs *js,
		   struct inart_plan *plan, struct inart_err *err);

#endif
