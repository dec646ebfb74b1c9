/*
 * worker_impl: the worker core's state, shared by its two halves (not a
 * public interface): worker.c sends (chunks, timers, probes, idle probing,
 * stalls, pacing, the held-resend credit) and worker_rx.c takes what the PS
 * (or a switch for it) sends back (results, NACKs, step and scale notices,
 * the result chain).  Both classify what happens to a chunk into an event
 * of the recovery table (worker_fsm.h) and run the action it names.  See
 * worker.c for the invariants and docs/dataplane.md for the rules.
 */
#ifndef INART_WORKER_IMPL_H
#define INART_WORKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dp/worker.h"
#include "dp/worker_fsm.h"

/*
 * Timers, each named after what it guards (0: not running unless said):
 *   chunk  result_due      its result: expired, a probe or its values go
 *                          (WE_RESULT_TIMEOUT; always set while INFLIGHT)
 *   chunk  answer_due      a probe's answer: expired, a probe goes (again)
 *                          (WE_PROBE_DUE; a chain gap sets it to now)
 *   tree   flow_since      the flow of results: none for an idle period
 *                          after it, its ripe chunks are probed (WE_IDLE)
 *   tree   peer_heard      the PS's liveness: nothing heard for stall_rtos
 *                          timeouts after it, the tree stalls
 *   tree   stall_round_at  a stalled tree's next round (WE_STALL_ROUND)
 *   tree   rate_at         the paced rate: no DATA or probe before it
 *   tree   schedule_at     the plan's schedule: new chunks at most
 *                          pace_lead_ns ahead of it (pace.h)
 *   tree   credit_at       the held-resend credit's floor: one resend per
 *                          timeout after it (inart_worker_held_pay)
 */
struct wchunk {
	uint64_t result_due, sent_at; /* result timer; first transmission */
	uint64_t last_tx;	      /* last transmission of the values */
	uint64_t answer_due;	      /* probe timer: a probe is due then; 0: none */
	uint8_t state, retries;	      /* state: enum inart_worker_state */
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
	 * flows; none for idle_gaps gaps since flow_since means chunks or
	 * results were lost where nothing later reveals it */
	uint64_t last_res, gap, flow_since;
	int idle_rounds;
	/* progress: the last packet accepted from the tree's PS (or a switch
	 * answering for it); none for stall_rtos timeouts while chunks are in
	 * flight: the tree is stalled (a dead peer), and only its oldest chunk
	 * is acted on, at stall_round_at, the wait doubling up to stall_max_ns */
	uint64_t peer_heard, stall_round_at, stall_wait;
	uint32_t stall_round;
	uint32_t unheard;     /* probes and resends since the PS was last heard */
	uint64_t rate_at;     /* paced: the next DATA packet may go then */
	uint64_t schedule_at; /* paced with a schedule: the plan's time of the
				 next packet (pace.h); 0: none yet */
	/* skewed starts: the tree's first transmission of the all-reduce, and
	 * how much later than the smallest time to result its first result
	 * came in recent all-reduces (peers that started later; start_wait) */
	uint64_t begun, lag;
	/* resends of values perhaps only delayed are paid from a credit the
	 * tree's deliveries refill (held_pay); kept as a debt, in results: 0 is
	 * full credit, a resend adds held_results, a result stored takes one
	 * off, a timeout elapsed (since credit_at) one resend's worth */
	uint32_t debt;
	uint64_t credit_at;
};

struct inart_worker {
	struct inart_worker_cfg cfg;
	struct inart_worker_tunables tun;
	int bw, vpp, window, slots; /* window: cfg's, else tun's */
	uint64_t retx_ns;	    /* cfg's retx_timeout_ns, else tun's */
	int scale0;		    /* cfg's scale_exp, else tun's */
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

/* An event of the recovery table for chunk seq of tree t, as its action
 * sees it (one signature for every action: worker.c's and worker_rx.c's). */
struct wevent {
	struct inart_worker *w;
	int t;
	struct wtree *tr;
	uint32_t seq;
	struct wchunk *c;
	int ev; /* enum inart_worker_event */
	uint64_t now;
	/* poll: datagrams go to out[*n..max_out) */
	struct inart_dgram *out;
	int *n, max_out;
	/* rx: the packet */
	const struct inart_wire_hdr *h;
	const uint8_t *payload;
};

/* ---- worker.c, used by worker_rx.c ---- */

/* Values of chunk seq of tree tr. */
size_t inart_worker_chunk_len(const struct inart_worker *w, const struct wtree *tr, uint32_t seq);
/* The timeout of chunk c after its last transmission (doubled per resend). */
uint64_t inart_worker_backoff(const struct inart_worker *w, const struct wtree *tr,
			      const struct wchunk *c);
/* 1 if tree tr's credit pays for a resend of values perhaps only delayed. */
int inart_worker_held_pay(const struct inart_worker *w, struct wtree *tr, uint64_t now);
/* A resend of chunk c was refused: the wait before probing it again. */
uint64_t inart_worker_refused_wait(const struct inart_worker *w, const struct wtree *tr,
				   struct wchunk *c);
/* How long to wait for a probe's answer. */
uint64_t inart_worker_probe_wait(const struct inart_worker *w, const struct wtree *tr);
/* An answer to our probe of chunk c arrived at now. */
void inart_worker_probe_answered(struct wtree *tr, struct wchunk *c, uint64_t now);
/* A_NONE's action: nothing (0). */
int inart_worker_act_none(struct wevent *e);
/* 1 if tree tr may still send a chunk never sent. */
int inart_worker_sending(const struct inart_worker *w, const struct wtree *tr);

#endif
