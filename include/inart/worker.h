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
