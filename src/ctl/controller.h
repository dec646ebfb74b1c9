/*
 * controller: the online controller's decisions (sans-I/O): measured
 * background loads and the time in, a decision record out -- keep the
 * installed plan, hold (a better plan is waiting out the hysteresis), or
 * switch to a new plan.
 *
 * Every call (inart_controller_decide, one per counter period):
 *  1. a silent switch (the caller names it: inart_estimator_silent) or an
 *     estimate not ready yet: keep the plan, say so;
 *  2. the model topology's background is set to the measured loads and the
 *     installed plan is re-evaluated with the evaluator (its predicted time
 *     under measured load, `cur_s`);
 *  3. re-plan when the loads moved in a way that can change the decision
 *     since the last re-plan (or there was none yet), judged on the loads
 *     as the re-plan sees them (below): some arc's load fell by more than
 *     replan_change x its capacity, or the predicted time of the installed
 *     plan rose by more than replan_change, or the candidate's did while
 *     a plan as fast as the faster of the two at the last re-plan would be
 *     worth a switch (a plan's predicted time never falls when a load
 *     rises, so no plan can have become faster than that; controller.c,
 *     loads_moved): the re-plan
 *     function (default: inart_planner_run of `algorithm` with a time limit
 *     of replan_limit_s) runs on the measured topology; its result becomes
 *     the candidate unless it failed or took longer than replan_timeout_s
 *     (then the installed plan stays, the decision says why, and the next
 *     re-plan waits for the next load change);
 *  4. the candidate is evaluated under the same loads (`new_s`) and
 *     gain = (cur_s - new_s) / cur_s; hysteresis: a switch needs gain >=
 *     threshold continuously for hold_s, and at most one switch happens per
 *     window_s (the first switch is not delayed by the window);
 *  5. settling: a switch also waits until the loads have settled -- no
 *     arc's load moved by more than settle_frac x its capacity since the
 *     decision settle_s earlier (the latest at least settle_s old) -- so
 *     that a plan is not chosen for a load still rising (the estimate's
 *     EWMA ramps over ~4 periods after a step) and replaced a window later.
 *     The hold counts while the loads settle.
 *  Rising arcs: the re-plan (not the evaluation) sees an arc whose load rose
 *  by more than settle_frac x capacity within the last rise_s at (1 -
 *  RISE_RESIDUAL) x its capacity, so that a candidate chosen during a pause
 *  of a rise does not lean on the rising link (an arc that starts rising
 *  is a rise of its load as the re-plan sees it; one that stops, a fall).
 * Warm start: the re-plan sees the installed plan; the default passes it to
 * the planner as its warm start (inart_planner_opt.start) and keeps it when
 * the planner's plan is not better under the measured loads.
 *
 * A SWITCH makes the candidate the installed plan and raises the epoch; the
 * caller installs it and, if that fails, calls inart_controller_revert (the
 * previous plan is the installed one again).
 *
 * Ownership: the controller copies the topology (its background is the
 * measured one), refers to the jobs (which must outlive it), and owns the
 * installed, previous and candidate plans.  A decision's pointers are valid
 * until the next call.
 */
#ifndef INART_CTL_CONTROLLER_H
#define INART_CTL_CONTROLLER_H

#include <stdint.h>

#include "common/sbuf.h"
#include "cp/model/graph.h"
#include "cp/model/jobs.h"
#include "cp/model/plan.h"

/* Re-plan on t (its background = the measured loads, rising arcs high), the installed plan
 * given as a warm start.  *out = a new plan (the caller's), *elapsed_s = the
 * time it took.  0 or -errno (err says why). */
typedef int (*inart_ctl_replan_fn)(void *arg, const struct inart_topo *t,
				   const struct inart_jobs *js, const struct inart_plan *current,
				   double limit_s, struct inart_plan **out, double *elapsed_s,
				   struct inart_err *err);

struct inart_ctl_opt {
	double threshold;	    /* relative predicted gain to switch, default 0.10 */
	double hold_s;		    /* the gain must last this long, default 0.2 */
	double window_s;	    /* at most one switch per window, default 5 */
	double replan_change;	    /* re-plan when a load moved by this x capacity, default 0.05 */
	double replan_limit_s;	    /* the planner's time limit, default 0.2 */
	double replan_timeout_s;    /* a re-plan slower than this is discarded, default 0.5 */
	double settle_s;	    /* the loads must have settled over this long, default
				       0.1 (0: do not wait) */
	double settle_frac;	    /* settled: no arc moved by more than this x capacity over
				       settle_s, default 0.10 */
	double rise_s;		    /* an arc whose load rose by more than settle_frac x
				       capacity within this long is planned for at a
				       pessimistic load, default 0.5 (0: off) */
	const char *algorithm;	    /* default "inart" */
	inart_ctl_replan_fn replan; /* NULL: inart_ctl_replan_planner */
	void *replan_arg;
};

enum inart_ctl_action {
	INART_CTL_KEEP = 0, /* the installed plan stays */
	INART_CTL_HOLD,	    /* a better plan waits out the hysteresis */
	INART_CTL_SWITCH,   /* install d->plan (epoch d->epoch) */
};

struct inart_ctl_decision {
	double t_s;
	enum inart_ctl_action action;
	const char *why;	       /* a short code: "no-gain", "holding", "window", "gain",
					  "settling", "silent", "not-ready", "replan-failed",
					  "replan-timeout", "no-candidate" */
	char reason[256];	       /* one line for people */
	double cur_s;		       /* installed plan's predicted time under measured loads */
	double new_s;		       /* candidate's, NaN when none */
	double gain;		       /* (cur_s - new_s) / cur_s, NaN when none */
	int replanned;		       /* a re-plan ran in this call */
	char replan_why[96];	       /* what moved ("" when none ran): "first", or "FROM->TO
					  fell|rose X Gbit/s" (the first such arc) */
	double replan_s;	       /* its duration */
	uint64_t epoch;		       /* of the installed plan (after a switch: the new one) */
	int silent_node;	       /* the silent switch, or -1 */
	const double *bg;	       /* measured loads per arc (model Gbit/s) */
	const struct inart_plan *plan; /* SWITCH: the plan to install */
	const struct inart_jobs *js;   /* the controller's jobs */
	const double *iter_s;	       /* per job: measured seconds per iteration (NaN:
					  unknown), set by the caller; NULL: not measured */
};

void inart_ctl_opt_default(struct inart_ctl_opt *o);

struct inart_controller;

/* The controller of `installed` (copied) on t (copied) and js.  NULL +
 * errno (EINVAL with err: a bad option or a plan the evaluator refuses). */
struct inart_controller *inart_controller_create(const struct inart_topo *t,
						 const struct inart_jobs *js,
						 const struct inart_plan *installed,
						 const struct inart_ctl_opt *o,
						 struct inart_err *err);
void inart_controller_destroy(struct inart_controller *c);

/* One decision at now_s for loads bg (n_arcs entries, model Gbit/s; NULL or
 * !ready: not ready) with silent_node (-1: every switch answered).  0 or
 * -errno (-EINVAL: bad arguments, time going backwards; -ENOMEM). */
int inart_controller_decide(struct inart_controller *c, double now_s, const double *bg, int ready,
			    int silent_node, struct inart_ctl_decision *d);

/* The installed plan and its epoch (0 for the plan given to create). */
const struct inart_plan *inart_controller_plan(const struct inart_controller *c);
uint64_t inart_controller_epoch(const struct inart_controller *c);

/* The last switch's plan could not be installed: the previous plan is the
 * installed one again (epoch back too).  -ENOENT when there is none. */
int inart_controller_revert(struct inart_controller *c);

/* Switches so far. */
int inart_controller_switches(const struct inart_controller *c);

/* Re-plans run so far; *skipped (if not NULL): decisions whose loads had
 * not moved in a way that could change the decision (step 3). */
long inart_controller_replans(const struct inart_controller *c, long *skipped);

/* The default re-plan: inart_planner_run(arg ? arg : "inart") with
 * time_limit_s = limit_s, no ring jobs (not installable) and `current` as
 * its warm start (planner option `start`: its routes are candidates and
 * it is one of the search's starts); keeps `current` (cloned) when it is
 * not slower under t's loads. */
int inart_ctl_replan_planner(void *arg, const struct inart_topo *t, const struct inart_jobs *js,
			     const struct inart_plan *current, double limit_s,
			     struct inart_plan **out, double *elapsed_s, struct inart_err *err);

/* The decision as one JSON object (no newline): t, action, why, reason,
 * cur_s, new_s, gain, epoch, replanned, replan_s, replan_why (with replanned),
 * silent (node id or null),
 * loads: [{"from", "to", "bg_gbps", "cap_gbps"}] for every arc with a
 * non-zero load; with d->iter_s, iter_s: {job id: seconds or null}. */
void inart_ctl_decision_json(const struct inart_ctl_decision *d, const struct inart_topo *t,
			     struct inart_sbuf *b);

const char *inart_ctl_action_name(enum inart_ctl_action a);

#endif
