/*
 * bnb: a lower bound stronger than the JOINT LP, by branch-and-bound over the
 * two things that make the LP weak (docs/formulation.md, section 10).
 *
 * 1. The shares.  A tree's output is W = a u (share times use); over a in
 *    [0, 1] the LP only knows W <= u, so a fractionally open tree carries a
 *    whole share's volume for a fraction of the budget -- the LP point is an
 *    average of plans with different splits.  Branching on a share a <= th |
 *    a >= th gives each side the McCormick rows of its box (route_lp.h:
 *    share_lo / share_hi), W <= hi u etc., which cut that average off.
 * 2. The tree configuration.  Branching on tree uses: at a switch with a
 *    budget of one tree, one child per cand tree there (that tree used, the
 *    others not) and one with none used; elsewhere u_t = 1 | u_t = 0.
 *
 * Every node's LP (the JOINT LP over the candidates restricted to the node's
 * box and tree fixings, kept loaded: route_lp_model) is a lower bound on
 * every candidate plan in the node's region, and the regions of the open
 * nodes cover every candidate plan not yet excluded; nodes at or above the
 * cutoff (the time of a known plan) hold no better plan.  So the minimum
 * over the open nodes' LPs (and the cutoff) is a lower bound on every
 * candidate plan: the proven bound (source "bnb").  The search is best
 * first and stops at its time or node limit.  Nodes whose shares and trees
 * are exact (nothing to branch on) are closed with CBC's best bound on the
 * MILP of their region (routes integral; at most 5 s each, within the time
 * limit; with a node limit only: their LP value), the bound's floor.
 *
 * Branching choice: the share of the (job, PS) pair whose trees' outputs
 * are furthest from a u (sum over its trees of |W - a u|), at its LP value;
 * when every tree's output is a u, the switch with the most fractional tree
 * use.  (Branching on trees while the boxes are wide gained less per LP on
 * the scarce scenario: the children's LPs stay near the parent's.)
 *
 * Ownership: everything is local to one call; the inputs belong to the
 * caller.
 */
#ifndef INART_BNB_H
#define INART_BNB_H

#include "cp/model/cand.h"

struct inart_bnb_opt {
	double time_limit_s; /* wall clock; <= 0: none (then max_nodes must be set) */
	long max_nodes;	     /* LPs solved at most; <= 0: none */
	double cutoff_s;     /* the time of a known candidate plan, or <= 0 */
};

struct inart_bnb_result {
	double bound_s;	 /* the proven lower bound (seconds) */
	double root_s;	 /* the root LP: the JOINT LP bound */
	long lps;	 /* LPs solved */
	long nodes;	 /* nodes branched */
	long open;	 /* nodes left open */
	long leaf_milps; /* nodes with nothing to branch on closed by CBC */
};

/* 0, -ENOMEM, -EINVAL (err: no cutoff nor limit), -EIO (CLP failed at the
 * root). */
int inart_bnb_run(const struct inart_topo *t, const struct inart_jobs *js,
		  const struct inart_cand *c, const struct inart_bnb_opt *opt,
		  struct inart_bnb_result *res, struct inart_err *err);

#endif
