/*
 * assign: an integral assignment over a route candidate set (cand.h) -- one
 * choice per member slot and per cand tree -- and its conversions: to a
 * plan's routes (realize), to and from a route LP's x, from a plan's routes.
 * The assignment owns its two arrays (init/free); the candidates are only
 * read and must outlive it.
 */
#ifndef INART_ASSIGN_H
#define INART_ASSIGN_H

#include "cp/model/cand.h"

/*
 * An integral assignment: slot_choice[s] is the choice (absolute index into
 * cand->choices) of member slot s, tree_choice[t] that of cand tree t (used
 * only if the tree ends up with children).
 */
struct inart_assign {
	int *slot_choice; /* n_slots */
	int *tree_choice; /* n_trees */
};

int inart_assign_init(struct inart_assign *a, const struct inart_cand *c);
void inart_assign_free(struct inart_assign *a);

/*
 * Turn an assignment into routes in plan (replacing every job's flows and
 * trees; the split is kept).  Flows are emitted for every PS of every job;
 * a flow choosing a cand tree makes that tree (and its parents, transitively)
 * used.  Flows to a PS whose share in plan is 0 take the flow's first choice
 * instead (always: shortest candidate path, agg = the PS), so that a zero
 * share never holds a tree.  0 or -ENOMEM.
 */
int inart_assign_realize(const struct inart_cand *c, const struct inart_assign *a,
			 struct inart_plan *plan);

/* The values of an assignment in the form of a route LP result's x
 * (n_choices): per flow choice the share of the group's members on it (the
 * first choice for a PS with share 0 in plan), per tree choice 1 for the
 * choice of a used tree, else 0. */
void inart_assign_to_x(const struct inart_cand *c, const struct inart_assign *a,
		       const struct inart_plan *plan, double *x);

/* The assignment of an integral x (as inart_assign_to_x makes, or a MILP
 * result): each group's members spread over its flow's choices by their
 * counts, each tree on its largest value. */
void inart_assign_from_x(const struct inart_cand *c, const double *x, struct inart_assign *a);

/* The assignment that realizes plan's routes: 0, or -ENOENT when some flow
 * of a PS with a non-zero share, or some tree, is not among the candidates
 * (a is then partly filled), -ENOMEM.  Flows of zero-share PSs and unused
 * trees take their first choice. */
int inart_assign_from_plan(const struct inart_cand *c, const struct inart_jobs *js,
			   const struct inart_plan *plan, struct inart_assign *a);

/* Count, per node, the trees an assignment would install (for budget repair);
 * used_tree[t] receives 1 for each used cand tree.  Uses plan's split (trees of
 * zero-share PSs are not used). */
void inart_assign_used_trees(const struct inart_cand *c, const struct inart_assign *a,
			     const struct inart_plan *plan, char *used_tree);

#endif
