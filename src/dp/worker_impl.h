/*
 * worker_impl: the worker core's state, shared by its two halves (not a
 * public interface): worker.c sends (chunks, timers, probes, idle probing,
 * stalls, pacing, the held-resend credit) and worker_rx.c takes what the PS
 * (or a switch for it) sends back (results, NACKs, step and scale notices,
 * the result chain).  See worker.c for the invariants and
 * docs/dataplane.md for the rules.
 */
#ifndef INART_WORKER_IMPL_H
#define INART_WORKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dp/worker.h"

enum { C_IDLE = 0, C_INFLIGHT = 1, C_RESEND = 2, C_DONE = 3 };

struct wchunk {
	uint64_t deadline, sent_at; /* next retransmission; first transmission */
	uint64_t last_tx;	    /* last transmission of the values */
	uint64_t probe_at;	    /* a probe is due then; 0: none */
	uint8_t state, retries;
	int8_t scale;
	uint8_t open;	     /* a NACK said the PS is still collecting this chunk */
	uint8_t counted;     /* the PS said it holds our contribution (probe answer) */
	uint8_t asked;	     /* retransmission requested by a NACK (no timer backoff) */
	uint64_t last_probe; /* last probe sent */
	uint8_t unanswered;  /* probes sent since the last answer */
	uint8_t nack_round;  /* the PS's NACK round last acted on */
	uint8_t refused;     /* resends refused for want of credit since the last one */
};

struct wtree {
	size_t off, len;	 /* value range of the tree */
	uint32_t n_chunks, base; /* chunks; lowest seq without a result */
	uint32_t next;		 /* lowest seq never sent */
	size_t chunk0;		 /* index of the tree's first chunk in ch[] */
	uint64_t srtt, rttvar;	 /* smoothed RTT and its variation; 0: no sample */
	uint64_t rto;		 /* current retransmission timeout */
	uint64_t min_rtt;	 /* smallest time to result seen; 0: none */
	uint64_t prtt;		 /* smoothed time from a probe to its answer; 0: none */
	uint32_t samples;	 /* time-to-result samples taken */
	/* idle probing: results arrive about every `gap` ns while the pipeline
	 * flows; none for INART_WORKER_IDLE_GAPS gaps since idle_from means
	 * chunks or results were lost where nothing later reveals it */
	uint64_t last_res, gap, idle_from;
	int idle_rounds;
	/* progress: the last packet accepted from the tree's PS (or a switch
	 * answering for it); none for 2 timeouts while chunks are in flight:
	 * the tree is stalled (a dead peer), and only its oldest chunk is acted
	 * on, at stall_at, the wait doubling up to INART_WORKER_STALL_MAX_NS */
	uint64_t heard, stall_at, stall_wait;
	uint32_t stall_round;
	uint32_t unheard;  /* probes and resends since the PS was last heard */
	uint64_t pace_at;  /* paced: the next DATA packet may go then */
	uint64_t sched_at; /* paced with a schedule: the plan's time of the next
			      packet (pace.h); 0: none yet */
	/* skewed starts: the tree's first transmission of the all-reduce, and
	 * how much later than the smallest time to result its first result
	 * came in recent all-reduces (peers that started later; start_wait) */
	uint64_t begun, lag;
	/* resends of values perhaps only delayed are paid from a credit the
	 * tree's deliveries refill (held_pay); kept as a debt, in results: 0 is
	 * full credit, a resend adds INART_WORKER_HELD_RESULTS, a result stored
	 * takes one off, a timeout elapsed (since debt_at) one resend's worth */
	uint32_t debt;
	uint64_t debt_at;
};

struct inart_worker {
	struct inart_worker_cfg cfg;
	int bw, vpp, window, slots;
	uint64_t retx_ns;
	int scale0;
	uint64_t bitmap[INART_WIRE_MAX_BITMAP_WORDS];

	int active, have_iter;
	uint32_t iter;
	int stale;	       /* a step notice: this all-reduce cannot complete */
	uint32_t stale_target; /* the step it named (the highest, if several) */
	const float *buf;
	size_t n;
	float *res;
	size_t res_cap;
	struct wchunk *ch;
	size_t n_ch, ch_cap;
	size_t done_chunks;
	struct wtree trees[INART_WORKER_MAX_TREES];
	int rr; /* tree to serve first in poll (fairness when out[] is short) */

	struct inart_worker_stats st;
	uint64_t held_nacks, deferred; /* inart_worker_held_stats */
	int32_t q[INART_DGRAM_MAX / 4];
};

/* ---- worker.c, used by worker_rx.c ---- */

/* Values of chunk seq of tree tr. */
size_t inart_worker_chunk_len(const struct inart_worker *w, const struct wtree *tr, uint32_t seq);
/* The timeout of chunk c after its last transmission (doubled per resend). */
uint64_t inart_worker_backoff(const struct wtree *tr, const struct wchunk *c);
/* 1 if tree tr's credit pays for a resend of values perhaps only delayed. */
int inart_worker_held_pay(const struct inart_worker *w, struct wtree *tr, uint64_t now);
/* A resend of chunk c was refused: the wait before probing it again. */
uint64_t inart_worker_refused_wait(const struct inart_worker *w, const struct wtree *tr,
				   struct wchunk *c);
/* How long to wait for a probe's answer. */
uint64_t inart_worker_probe_wait(const struct inart_worker *w, const struct wtree *tr);
/* An answer to our probe of chunk c arrived at now. */
void inart_worker_probe_answered(struct wtree *tr, struct wchunk *c, uint64_t now);
/* 1 if tree tr may still send a chunk never sent. */
int inart_worker_sending(const struct inart_worker *w, const struct wtree *tr);

#endif
