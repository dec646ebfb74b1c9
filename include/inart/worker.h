/*
 * libinart_worker: the worker side of the public C API of InArt.
 *
 * All-reduce through the InArt data plane from a training process.  This
 * header is the whole public surface of libinart_worker (pkg-config
 * inart_worker), a library that needs no LP solver; libinart exports the
 * same functions (include/inart/inart.h includes this header).  Conventions
 * as in inart.h: 0 or a negative errno, NULL + errno from constructors, a
 * `struct inart_err` (err.h) for the message, destroy(NULL) does nothing.
 */
#ifndef INART_INART_WORKER_H
#define INART_INART_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Workers: all-reduce through the InArt data plane (docs/programs.md).  A
 * context is one worker (rank `rank` of job `job_id`) of an installed plan:
 * it rebuilds the installation from the same topology, jobs, plan and
 * deployment files that `inart ctl install` used (deploy NULL: the automatic
 * deployment), and sends over a UDP socket bound to this worker's address in
 * the deployment, port 47470 (so one worker per address).  It accepts
 * results only from the addresses of the job's PSs.
 *
 * Steps.  Every all-reduce has a step number, its identity on the wire: a
 * result is only ever the sum of contributions to the same step.  A context
 * starts at step 1; a call that returns 0 moves it to the next step; a call
 * that fails leaves it at the same step (nothing is ever skipped silently).
 * Every worker of the job must run the same steps with the same n, in the
 * same order.
 */
struct inart_ctx;

struct inart_ctx *inart_ctx_create(const char *topo, const char *jobs, const char *plan,
				   const char *deploy, const char *job_id, int rank,
				   struct inart_err *err);

/*
 * In-place sum of buf[0..n) over the job's workers, for the context's current
 * step (quantized to int32 on the wire: each value is within
 * n_workers * 2^-(s+1) of the exact sum, s the scale the step's values allow,
 * 16 unless they needed less).  n must be at most the job's gradient size
 * (jobs file: the PSs are sized for it).  Returns:
 *   0           buf holds the sum of this step; the context moves to the next.
 *   -ETIMEDOUT  not complete within timeout_ms; buf unchanged; the context
 *               stays at the step.  Call again with the SAME values to go on
 *               waiting (what the PSs already counted of this worker stays
 *               counted, never twice), or leave the step with
 *               inart_ctx_set_step (all workers must then leave it: the
 *               others cannot complete it without this one).
 *   -ESTALE     the data plane says this step cannot complete for this worker
 *               (the job moved past it, e.g. after a PS lost its state, or has
 *               not reached it); buf unchanged; the context stays at the step.
 *               inart_ctx_step tells the step the job is at: call
 *               inart_ctx_resync (or inart_ctx_set_step) and go on with that
 *               step's values.  The result of the lost step is gone.
 *   -EINVAL     c or buf NULL, n above the job's gradient size, or a NaN or
 *               infinite value: nothing was sent, the context stays at the step.
 *   -EIO        socket error: the context stays at the step.
 * Plan epochs (docs/controller.md): every call first looks whether the plan
 * file given to inart_ctx_create changed (stat: inode, size, time); if it now
 * names a newer epoch ("epoch": {"n", "from_step"}), the call builds this
 * worker's configuration in it and uses it from the job's from_step on (at
 * once when that step is reached or passed): the step goes on, nothing is
 * lost.  A worker that learnt late (its call on the old epoch timed out
 * because the others moved) uses the new epoch from its next call.
 */
int inart_allreduce(struct inart_ctx *c, float *buf, size_t n, int timeout_ms);

/* The step the next inart_allreduce runs (*step) and the step a PS named in
 * the last step notice (*job_step, 0 if none since the last call that
 * returned 0).  Either pointer may be NULL.  0 or -EINVAL. */
int inart_ctx_step(const struct inart_ctx *c, uint32_t *step, uint32_t *job_step);

/* Run step `step` next (>= 1): skip a step, or rejoin the job at a step of
 * the caller's choice.  0 or -EINVAL. */
int inart_ctx_set_step(struct inart_ctx *c, uint32_t step);

/* After -ESTALE: move to the step the data plane named (inart_ctx_step's
 * job_step).  0, -EAGAIN if no step notice came, -EINVAL. */
int inart_ctx_resync(struct inart_ctx *c);

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
	uint64_t dropped;	  /* received datagrams that were malformed or not for us */
	/* appended (steps, sources, backoff) */
	uint64_t stale;	       /* calls that returned -ESTALE */
	uint64_t step_notices; /* step notices received from PSs */
	uint64_t foreign;      /* datagrams not from the job's PS addresses (dropped) */
	uint64_t stalls;       /* backoff rounds of trees that heard nothing for 2 timeouts */
	uint64_t epochs;       /* plan epochs put in use (the plan file named a newer one) */
};

/* Fill *st (see above).  0, or -EINVAL if c or st is NULL or st->size is
 * below 8 (not even the size field and the reserved word). */
int inart_ctx_stats(const struct inart_ctx *c, struct inart_ctx_stats *st);

/*
 * The trees of the last inart_allreduce that returned -ETIMEDOUT, as the
 * worker's loss recovery left them (`state`):
 *   INART_CTX_TREE_SILENT    it heard nothing from its PS (nor from a switch
 *                            answering for it) through its probes and
 *                            resends for its last retransmission timeouts:
 *                            its PS, or a switch on its way, is dead or cut
 *                            off;
 *   INART_CTX_TREE_ANSWERED  its results came in or its PS still answered
 *                            (then a worker of the job is missing or behind);
 *   INART_CTX_TREE_IDLE      it carried none of the call's values.
 * Writes up to max entries to out (the plan's tree order) and returns the
 * number of trees (0: no call timed out since the last that completed, or
 * a ring job), or -EINVAL if c is NULL (or out NULL with max > 0).
 */
enum { INART_CTX_TREE_IDLE, INART_CTX_TREE_ANSWERED, INART_CTX_TREE_SILENT };
struct inart_ctx_tree {
	uint32_t ps_ip; /* the tree's PS, IPv4 in host order */
	uint32_t label; /* its first UP label (0: plain IPv4 to the PS) */
	uint32_t state; /* INART_CTX_TREE_* (see above) */
	uint32_t reserved;
};
int inart_ctx_trees(const struct inart_ctx *c, struct inart_ctx_tree *out, int max);

void inart_ctx_destroy(struct inart_ctx *c);

#ifdef __cplusplus
}
#endif

#endif
