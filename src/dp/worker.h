/*
 * worker: the worker side of an all-reduce, sans I/O.
 *
 * inart_worker_begin splits a float32 buffer among the job's PS trees by the
 * plan's shares (contiguous ranges), quantizes each chunk to int32 as
 * round(x * 2^scale_exp), and inart_worker_poll emits DATA packets within a
 * window of `window` chunks per tree (slot = seq % slots), along each tree's
 * first label.  Chunks without a result after retx_timeout_ns are resent
 * with INART_F_RETX (label 0: straight to the PS by IPv4, never aggregated).
 * Results are collected by inart_worker_rx and dequantized; a result flagged
 * INART_F_OVERFLOW makes the worker lower scale_exp and resend the chunk
 * (every worker sees the same result, so all agree on the new scale); a
 * value that cannot be represented even locally is handled the same way
 * before sending.  Error bound (docs/wire.md): each value's rounding error is
 * at most 2^-(scale_exp+1), so the sum of n workers is within
 * n * 2^-(scale_exp+1) of the exact float sum.
 *
 * Ownership: the worker keeps a pointer to the input buffer until the
 * all-reduce is done; the caller keeps it alive.  Datagram buffers are the
 * caller's.
 */
#ifndef INART_WORKER_H
#define INART_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "dgram.h"
#include "wire.h"

#define INART_WORKER_MAX_TREES 64

struct inart_worker_tree {
	uint32_t ps_ip; /* host order */
	uint32_t label; /* first UP label (0: plain IPv4 to the PS) */
	double share;   /* fraction of the buffer; shares sum to 1 */
};

struct inart_worker_cfg {
	uint32_t job;
	uint16_t rank, n_workers;
	uint16_t n_trees;
	struct inart_worker_tree trees[INART_WORKER_MAX_TREES];
	uint16_t values_per_packet; /* 0: the most that fits */
	uint16_t window;            /* chunks in flight per tree; default 64 */
	uint16_t slots;             /* slot region per tree at switches; >= window */
	uint64_t retx_timeout_ns;   /* default 20 ms */
	int8_t scale_exp;           /* initial quantization scale; default 16 */
};

struct inart_worker_stats {
	uint64_t sent, retransmitted, results, duplicates, rescales, dropped;
};

struct inart_worker;

struct inart_worker *inart_worker_create(const struct inart_worker_cfg *cfg);
void inart_worker_destroy(struct inart_worker *w);

/* Start all-reduce number `iter` over buf[0..n). 0 or -EBUSY/-EINVAL. */
int inart_worker_begin(struct inart_worker *w, const float *buf, size_t n, uint32_t iter);

/* Datagrams to send now (up to max_out; out[i].data has INART_DGRAM_MAX bytes). */
int inart_worker_poll(struct inart_worker *w, uint64_t now_ns, struct inart_dgram *out,
		      int max_out);

/* A received datagram (results). 0, or a negative code if dropped. */
int inart_worker_rx(struct inart_worker *w, const uint8_t *data, size_t len, uint64_t now_ns);

/* Earliest time poll has something to do, UINT64_MAX if nothing. */
uint64_t inart_worker_next_deadline(const struct inart_worker *w);

/* 1 when every chunk's result arrived. */
int inart_worker_done(const struct inart_worker *w);

/* The sums (float), n values. 0 or -EAGAIN if not done. */
int inart_worker_result(const struct inart_worker *w, float *out, size_t n);

void inart_worker_stats(const struct inart_worker *w, struct inart_worker_stats *st);

#endif
