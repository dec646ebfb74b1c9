/*
 * localsearch: improve an integral phase-2 assignment (cand.h) for a fixed
 * split by moves scored on an incremental copy of the evaluator's load model.
 *
 * Moves: one member slot or one used tree to another of its choices; merge
 * the streams of a (job, PS) that pass a switch into its cand tree there;
 * split a tree (its children go on to the next used tree or the PS).  A move
 * is accepted when it lowers the key (T, S) lexicographically, T the
 * communication time and S = sum over resources of (time / T_start)^8, so a
 * bottleneck shared by several resources is relieved one at a time and T
 * never grows; moves that exceed a tree budget are refused.  When no move
 * improves, a random kick (1-3 moves around the most loaded resources,
 * seeded) is followed by a new descent, kept if the key drops, else undone.
 * See docs/formulation.md, "Rounding and repair".
 *
 * Ownership: the caller owns the assignment, which is improved in place; the
 * search allocates its model per call.
 */
#ifndef INART_LOCALSEARCH_H
#define INART_LOCALSEARCH_H

#include "cp/model/assign.h"
#include "cp/planner/budget.h"

struct inart_ls_opt {
	long max_tries;	 /* moves tried at most (work bound, reproducible) */
	double deadline; /* inart_now_s() deadline; <= 0: none (a seed then
			  * reproduces a run exactly) */
	uint64_t seed;	 /* of the kicks */
	int kicks;	 /* random kicks at most; 0: descent only */
	/* the stage's time budget (budget.h), checked with the deadline;
	 * NULL: none */
	const struct inart_budget *budget;
};

/* Improve `a` (a valid assignment within the tree budgets for plan's split)
 * in place.  Returns the accepted moves (>= 0) or -ENOMEM; *time_s receives
 * the communication time of the result by the load model (equal to the
 * evaluator's for the realized plan). */
int inart_localsearch_run(const struct inart_topo *t, const struct inart_jobs *js,
			  const struct inart_cand *c, const struct inart_plan *plan,
			  struct inart_assign *a, const struct inart_ls_opt *opt, double *time_s);

#endif
