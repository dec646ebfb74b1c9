/*
 * libinart: the public C API of InArt.
 *
 * InArt plans in-network aggregation (INA) for data-parallel training across
 * several parameter servers: it splits each job's gradient among PSs and
 * chooses, for every worker->PS flow, a route and the switch where flows
 * merge.  This header is the whole public surface; everything else is
 * internal.
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

#ifdef __cplusplus
extern "C" {
#endif

#define INART_ERR_MAX 512

struct inart_err {
	char msg[INART_ERR_MAX];
};

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
	const char *bound_source; /* "lp", "lp+cuts" or "cbc" (NULL: none) */
	const char *step;	  /* what found best_s, e.g. "start even", "lns job j0" */
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

/*
 * Workers: all-reduce through the InArt data plane (docs/programs.md).  A
 * context is one worker (rank `rank` of job `job_id`) of an installed plan:
 * it rebuilds the installation from the same topology, jobs, plan and
 * deployment files that `inart ctl install` used (deploy NULL: the automatic
 * deployment), and sends over a UDP socket bound to this worker's address in
 * the deployment, port 47470 (so one worker per address).  Every worker of
 * the job must call inart_allreduce with the same n, in the same order.
 */
struct inart_ctx;

struct inart_ctx *inart_ctx_create(const char *topo, const char *jobs, const char *plan,
				   const char *deploy, const char *job_id, int rank,
				   struct inart_err *err);

/* In-place sum of buf[0..n) over the job's workers (quantized to int32 on the
 * wire: each value is within n_workers * 2^-(s+1) of the exact sum, s the
 * scale used, 16 unless values needed less).  0, -ETIMEDOUT if the
 * all-reduce did not finish within timeout_ms (buf unchanged; the context
 * stays usable), -EINVAL (NaN/Inf values, NULL buf), -EIO (socket). */
int inart_allreduce(struct inart_ctx *c, float *buf, size_t n, int timeout_ms);

/*
 * Counters of a context since inart_ctx_create, over all its all-reduces
 * (docs/programs.md section 4 says what each one means).  Versioned by
 * size: the caller sets `size` to sizeof(struct inart_ctx_stats) as it was
 * compiled; the library fills that many bytes at most (never more than its
 * own struct) and sets `size` to the bytes it filled, so a program built
 * with an older or newer header keeps working; counters past the returned
 * size were not filled.  New counters are only ever appended.
 *
 *   struct inart_ctx_stats st = {.size = sizeof(st)};
 *   if (inart_ctx_stats(c, &st) == 0) printf("%llu probes\n", (unsigned long long)st.probes);
 */
struct inart_ctx_stats {
	uint32_t size;	   /* in: the caller's sizeof; out: bytes filled */
	uint32_t reserved; /* 0; left as it is */
	/* calls */
	uint64_t allreduces; /* inart_allreduce calls that returned 0 (n > 0) */
	uint64_t timeouts;   /* calls that returned -ETIMEDOUT */
	/* datagrams and loss recovery */
	uint64_t sent;		  /* datagrams carrying values, resends included */
	uint64_t retransmitted;	  /* of which resends of a chunk's values (RETX) */
	uint64_t retx_asked;	  /* of which asked for by a NACK (the others: timeouts) */
	uint64_t probes;	  /* header-only probes sent (a switch or the PS answers) */
	uint64_t nacks;		  /* NACKs received: a contribution was lost upstream */
	uint64_t chain_gaps;	  /* results found missing from the PS's result chain */
	uint64_t results;	  /* chunk results received and kept */
	uint64_t duplicates;	  /* results for chunks already done, or stale */
	uint64_t rescales;	  /* chunks moved to a lower fixed-point scale */
	uint64_t local_overflows; /* chunks whose values did not fit int32 here */
	uint64_t dropped;	  /* received datagrams that were malformed or foreign */
};

/* Fill *st (see above).  0, or -EINVAL if c or st is NULL or st->size is
 * below 8 (not even the size field and the reserved word). */
int inart_ctx_stats(const struct inart_ctx *c, struct inart_ctx_stats *st);

void inart_ctx_destroy(struct inart_ctx *c);

#ifdef __cplusplus
}
#endif

#endif
