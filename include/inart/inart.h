/*
 * libinart: the public C API of InArt.
 *
 * InArt plans in-network aggregation (INA) for data-parallel training across
 * several parameter servers: it splits each job's gradient among PSs and
 * chooses, for every worker->PS flow, a route and the switch where flows
 * merge.  This header (with err.h and worker.h, which it includes) is the
 * whole public surface of libinart; everything else is internal.  A training
 * process that only all-reduces includes <inart/worker.h> and links
 * libinart_worker, which needs no LP solver.
 *
 * Conventions: functions return 0 or a negative errno; constructors return
 * NULL and set errno.  A `struct inart_err` (owned by the caller, may be
 * NULL) receives one line saying what is wrong and where (file, line/column
 * or id).  Every object has a destroy function; destroy(NULL) does nothing.
 * Objects are not thread-safe; distinct objects may be used from distinct
 * threads.
 */
#ifndef INART_INART_H
#define INART_INART_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "worker.h" /* the worker API (libinart_worker): also part of libinart */

#ifdef __cplusplus
extern "C" {
#endif

struct inart_topo; /* a network topology */
struct inart_jobs; /* training jobs sharing it */
struct inart_plan; /* a split + routes + aggregation trees */

/* Files: the JSON formats of docs/formats.md; path "-" is stdin. */
struct inart_topo *inart_topo_load(const char *path, struct inart_err *err);
void inart_topo_destroy(struct inart_topo *t);
struct inart_jobs *inart_jobs_load(const char *path, const struct inart_topo *t,
				   struct inart_err *err);
void inart_jobs_destroy(struct inart_jobs *js);
struct inart_plan *inart_plan_load(const char *path, const struct inart_topo *t,
				   const struct inart_jobs *js, struct inart_err *err);
void inart_plan_destroy(struct inart_plan *p);
/* The plan as JSON (malloc'ed; free() it). */
char *inart_plan_dump(const struct inart_plan *p, const struct inart_topo *t,
		      const struct inart_jobs *js);

/*
 * Planning.  The options are versioned by size like struct inart_ctx_stats:
 * the caller sets `size` to sizeof(struct inart_planner_opt) as it was
 * compiled, then calls inart_planner_opt_default, which fills the defaults
 * of the fields it knows within that size; inart_planner_run reads at most
 * `size` bytes and takes the defaults for fields past it.  New fields are
 * only ever appended.
 *
 *   struct inart_planner_opt o = {.size = sizeof(o)};
 *   inart_planner_opt_default(&o);
 *   o.time_limit_s = 10;
 */
struct inart_planner_progress {
	double elapsed_s;	  /* since the start of inart_planner_run */
	double best_s;		  /* communication time of the best plan so far */
	double bound_s;		  /* best proven lower bound (NaN: none yet) */
	const char *bound_source; /* "lp", "cbc" or "lp-partial" (NULL: none) */
	const char *step;	  /* what found best_s, e.g. "start even", "lns job j0",
				     or the stage starting (best_s NaN before
				     the first plan) */
	/* > 0: the time limit is spent before the search's first plan; this
	 * many seconds are its estimate of what that plan needs (step "over
	 * budget").  The run still returns a plan (the fastest baseline's). */
	double need_s;
};

struct inart_planner_opt {
	uint32_t size;		  /* in: sizeof(struct inart_planner_opt) */
	uint32_t reserved;	  /* 0 */
	uint64_t seed;		  /* default 1 */
	int k_paths;		  /* candidate paths per flow; default 0: auto,
				     8 below 512 nodes, else 4 */
	int trials;		  /* rounding trials, default 32 */
	int max_rounds;		  /* phase 1/2 iterations, default 4 */
	int no_baseline_guard;	  /* 1: skip the "never worse than a baseline" check */
	double milp_time_limit_s; /* milp: CBC's limit, default 30 */
	double time_limit_s;	  /* inart: keep improving the plan until this many
				     seconds after the start (or within 1% of the
				     best bound); default 4.  0: no improvement
				     phase (the starts and their local search only) */
	/* inart: called when the best plan or bound improves, and at least
	 * every second while improving (NULL: none). */
	void (*progress)(const struct inart_planner_progress *p, void *arg);
	void *progress_arg;
	/* inart: 1 plans every job through PSs; 0 (default) may plan a job as
	 * a ring all-reduce when that is faster (a plan `inart install` and the
	 * data plane cannot run). */
	int no_ring;
	/* inart: a warm start (NULL: none), e.g. the plan in service when
	 * re-planning under new loads: a plan of the same topology and jobs
	 * whose routes become candidates and which is one more start, improved
	 * by the local search (so the result is never slower than it, unless
	 * a route of it is not a candidate the search can take). */
	const struct inart_plan *start;
	/* inart and the algorithms over candidates, where candidates are per
	 * worker (up to 512 (worker, PS) pairs): also up to `detours` paths from
	 * each worker to every INA switch off its shortest paths to the PS but
	 * closer to it (a third leaf of a leaf-spine), aggregating there, and 4
	 * paths per cand tree instead of 2 (docs/formulation.md section 3).
	 * 0: none.  Default -1, auto: 2 such paths, only for workers whose rack
	 * switch has no INA, only while they add at most half as many paths as
	 * the flows' own candidates, and 4 paths only for the trees they reach
	 * (on the built-in scenarios: leafspine only). */
	int detours;
};

/* Defaults for the fields within o->size (see above).  0, or -EINVAL if o is
 * NULL or o->size is smaller than the first two fields. */
int inart_planner_opt_default(struct inart_planner_opt *o);

/* Algorithms: "inart", "inart-even", "inart-sp", "grid", "ps", "byteps",
 * "switchml", "atp", "ring", "milp", "lp" (inart_algorithms lists them).
 * -EINVAL also when opt is not NULL and opt->size is too small. */
extern const char *const inart_algorithms[];
int inart_planner_run(const char *algo, const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, struct inart_plan **out,
		      struct inart_err *err);

/* Check a plan and compute its times (stored in the plan); -EINVAL with the
 * reason in err if the plan is invalid. */
int inart_evaluate(const struct inart_topo *t, const struct inart_jobs *js, struct inart_plan *plan,
		   struct inart_err *err);
double inart_plan_comm_time(const struct inart_plan *p);

#ifdef __cplusplus
}
#endif

#endif
