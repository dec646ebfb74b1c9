/*
 * cand: the candidate routes that phase 2 (route LP, rounding, MILP) chooses
 * from.
 *
 * Workers of one job that are single-homed hosts on the same switch are
 * interchangeable for routing; they form a group and share candidates (an LP
 * over groups has the same optimum as one over workers, by symmetry).  For
 * every (group, PS) "cand flow" there are choices: a path (one of the k
 * shortest paths from the group's representative worker to the PS) and a
 * position on it where the worker's stream is aggregated: an INA switch with a
 * tree budget, or the PS.  The path of a choice ends at that position.
 *
 * For every (job, PS, INA switch) that some flow choice aggregates at there is
 * a "cand tree" whose choices are a path from the switch towards the PS (one
 * of the k shortest) and a parent on it: the PS, or another cand tree switch
 * of the same (job, PS) strictly closer (in hops) to the PS, so parents form
 * no cycle.  The first choice of every cand flow and every cand tree is its
 * shortest path with the PS as aggregation point (no INA).  A choice's `tree` is the cand tree at
 * its end, -1 for the PS.  Optionally the routes of given plans (the
 * baselines') are candidates too, so that those plans are points of the
 * search space.
 *
 * Ownership: the cand set owns all its arrays; it refers to, but does not own,
 * the topology and jobs it was built from.
 */
#ifndef INART_CAND_H
#define INART_CAND_H

#include <string.h>

#include "cp/model/paths.h"
#include "cp/model/plan.h"

/* cand_opt.detours: detours only where they add a bounded share (below) */
#define INART_CAND_DETOURS_AUTO (-1)
/* Candidate paths of a cand tree at a detour's end, at least (cand.c), and
 * every cand tree's with detours asked for explicitly (search.c). */
#define INART_CAND_DETOUR_TREE_PATHS 4

struct inart_cand_opt {
	int k_paths;	  /* candidate paths per (group, PS); default 4 */
	int k_tree_paths; /* candidate paths per cand tree; default 2 */
	int no_groups;	  /* 1: every worker is its own group (exact MILP) */
	/* Detours: per (group, PS) and per INA switch v off every shortest
	 * path but closer to the PS than the worker (e.g. a third leaf of a
	 * leaf-spine), up to `detours` shortest paths to v with v as the
	 * aggregation point (a cand tree there then sends on towards the PS);
	 * 0: none (default).  INART_CAND_DETOURS_AUTO: 2 paths to each such
	 * v, but only for groups whose rack cannot aggregate (single-homed on
	 * a switch without INA) and only targets at most L hops off the
	 * shortest paths, L the largest that keeps the detour paths within
	 * half the flows' own candidate paths (none if even the nearest do not
	 * fit); cand trees at a detour's end get at least 4 paths. */
	int detours;
	/* Plans whose routes become candidates too (the baselines'), where
	 * they fit: a flow's path and aggregation point become a choice of its
	 * (group, PS) -- for every member, with its own first node -- and a
	 * tree's path and parent a choice of its cand tree when the parent is
	 * the PS or a cand tree closer to it.  Ring jobs are skipped. */
	const struct inart_plan *const *extra;
	int n_extra;
	/* When set, asked now and then (after every 64 groups or trees: a
	 * smaller model is built whole); when it
	 * returns non-zero the build stops with -ETIMEDOUT (err says so) and
	 * builds nothing: the caller's time limit.  NULL (default): never. */
	int (*stop)(void *arg);
	void *stop_arg;
};

struct inart_choice {
	int path; /* index into cand->paths; the path ends at agg */
	int agg;  /* node number where the stream is aggregated */
	int tree; /* cand tree at agg, or -1 when agg is the PS */
};

struct inart_group {
	int job;
	int n_members;
	int *members; /* worker node numbers; members[0] is the representative */
};

struct inart_cand_flow {
	int group, job, ps_idx, ps;  /* ps_idx: index in job->ps; ps: node */
	int first_choice, n_choices; /* into cand->choices */
	int first_slot;		     /* member slots: first_slot + member index */
};

struct inart_cand_tree {
	int job, ps_idx, ps, sw;
	int first_choice, n_choices; /* into cand->choices */
	int depth;		     /* hop distance from sw to ps */
};

struct inart_cand {
	int n_groups;
	struct inart_group *groups;
	int n_flows;
	struct inart_cand_flow *flows;
	int n_slots; /* sum over flows of the group size */
	int n_trees;
	struct inart_cand_tree *trees; /* sorted by (job, ps_idx, depth desc) */
	int n_choices;
	struct inart_choice *choices;
	struct inart_pathset paths;
};

void inart_cand_opt_default(struct inart_cand_opt *o);

/* Build candidates for all jobs and all their candidate PSs.  Returns 0 or
 * -errno (err says why).  *out is owned by the caller. */
int inart_cand_build(const struct inart_topo *t, const struct inart_jobs *js,
		     struct inart_paths *paths, const struct inart_cand_opt *opt,
		     struct inart_cand **out, struct inart_err *err);
void inart_cand_destroy(struct inart_cand *c);

/* 1 if the path of choice a is a proper prefix of the path of choice b. */
static inline int inart_cand_prefix(const struct inart_cand *c, int a, int b)
{
	int la = inart_pathset_len(&c->paths, c->choices[a].path);
	int lb = inart_pathset_len(&c->paths, c->choices[b].path);

	return lb > la && memcmp(inart_pathset_path(&c->paths, c->choices[a].path),
				 inart_pathset_path(&c->paths, c->choices[b].path),
				 sizeof(int) * (size_t)la) == 0;
}

#endif
