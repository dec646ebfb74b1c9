/*
 * lns: the anytime improvement of the "inart" algorithm -- a
 * large-neighbourhood search that frees part of the best plan and re-solves
 * that part exactly, the rest fixed, by CBC on the JOINT MILP over the
 * candidates (route_lp.h: start_x, free_pair, free_job), with the best plan
 * as CBC's starting incumbent, so a step never makes the plan worse.
 *
 * Neighbourhoods, in turn, each with the tree configuration (which (job,
 * PS) holds a tree at which switch) fixed outside it and the routes and
 * shares of the pairs involved free: the pairs whose routes cross the
 * bottleneck ("routes"); the trees of one contended switch (a tree-budget
 * exchange between jobs); the trees of one job; the trees of two contended
 * switches; last, on models up to 2000 choices, everything, with the
 * remaining time (CBC's bound is then valid for every plan) -- such models
 * also get a first look at everything, for a quarter of the time or 1 s,
 * before the others (CBC often proves them whole in that).  After an
 * improvement the phase-1 split is re-optimized for the new routes.  The
 * search stops at the run's deadline, or when the best plan is within 1% of
 * the best proven bound.
 *
 * Each neighbourhood is bounded by CBC's node limit (200 nodes, four times
 * more after a pass without improvement), so its result does not depend on
 * the machine's speed, and by a time limit as a safety net (3 s, and the
 * run's deadline).  With a step budget (search.h: lns_steps) only the node
 * limit binds and the search gives the same plan on any machine.
 *
 * With per-worker candidates (search.h) the sub-MILPs are exact; with groups
 * they optimize a relaxation and only evaluated improvements are kept.
 */
#ifndef INART_LNS_H
#define INART_LNS_H

#include "search.h"

/* Improve s->best (which must be set) until s->deadline or a 1% gap.
 * 0 or -errno. */
int inart_lns_run(struct inart_search *s);

#endif
