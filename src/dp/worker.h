/*
 * worker: the worker side of an all-reduce, sans I/O.
 *
 * inart_worker_begin splits a float32 buffer among the job's PS trees by the
 * plan's shares (contiguous ranges), quantizes each chunk to int32 as
 * round(x * 2^scale_exp), and inart_worker_poll emits DATA packets within a
 * window of `window` chunks per tree (slot = seq % slots), along each tree's
 * first label.  Lost contributions and results are recovered as
 * docs/dataplane.md describes: a NACK from the PS naming our rank makes us
 * resend the chunk's values with INART_F_RETX (label 0: straight to the PS
 * by IPv4, never aggregated); a timeout, a result naming a predecessor still
 * waiting (the result chain), or no result for a while at the end of a
 * tree's share sends a probe (DATA|RETX|NACK, header only, along the tree's
 * label) that a switch keeping the result or the PS answers; the values go
 * again unasked only after INART_WORKER_PROBE_TRIES unanswered probes.
 * Results are collected by inart_worker_rx and dequantized; a result flagged
 * INART_F_OVERFLOW makes the worker lower scale_exp and resend the chunk
 * (every worker sees the same result, so all agree on the new scale); a
 * value that cannot be represented even locally is handled the same way
 * before sending.  Error bound (docs/wire.md): each value's rounding error is
 * at most 2^-(scale_exp+1), so the sum of n workers is within
 * n * 2^-(scale_exp+1) of the exact float sum.
 *
 * Sources and steps: results, NACKs and notices are taken only from the
 * tree's PS address and port (a switch answering a probe answers as the
 * PS); a step notice (RESULT|STALE) for the current iteration means it cannot
 * complete: poll sends nothing more, inart_worker_stale says so and names
 * the step to resynchronise to (docs/dataplane.md, Steps).
 *
 * Scale protocol (docs/dataplane.md): every worker starts every chunk of
 * every all-reduce at cfg.scale_exp (the scale depends on the step's values
 * only); a worker whose
 * values do not fit sends DATA|OVERFLOW with zero values (label 0, straight
 * to the PS); an OVERFLOW result at scale s moves everyone to
 * inart_quant_lower(s); a scale notice from the PS (RESULT|RETX|OVERFLOW
 * with an incomplete bitmap) at a lower scale s moves the worker to s.  A
 * complete clean result is accepted at whatever scale it carries.  So all
 * workers of a job must use the same cfg.scale_exp, values_per_packet and
 * trees (shares), and iterations must increase.
 *
 * Timers: the timeout of a tree starts at retx_timeout_ns and, after
 * INART_WORKER_RTO_WARMUP samples, follows the measured time from sending a
 * chunk to its result (RFC 6298 smoothing, samples only from chunks sent
 * once): max(srtt + 4 rttvar, INART_WORKER_RTO_SRTT_MULT srtt), clamped to
 * [retx_timeout_ns / INART_WORKER_RTO_MIN_DIV, retx_timeout_ns *
 * INART_WORKER_RTO_MAX_MUL]; every all-reduce warms up again (the timeout
 * is at least the initial one until its own first samples: its pipeline
 * fill is not the previous one's steady state); a chunk's first timeout
 * doubles it until the next sample (Karn); each chunk doubles its own timeout per timeout up to
 * 16x.  Probes are retried after twice the measured answer time (at least
 * the smallest time to result), doubling up to 4x while the tree still sends
 * new chunks (not doubling at the end of its share); idle probing of a tree
 * starts INART_WORKER_IDLE_GAPS inter-result gaps after its last result, and
 * at least half the expected time to result: the smoothed one while the
 * window is stuck (chunks wait to be sent: behind shaped queues results come
 * a queueing delay after the smallest time), the smallest at the end of the
 * share.  A
 * gap in the result chain probes the chunk it names, and, when the tree
 * sends nothing new, the older chunks in flight past the time to result.
 * A tree that heard nothing from its PS for INART_WORKER_STALL_RTOS
 * timeouts, or while it sent 2 windows of probes and resends, is stalled (a
 * dead peer): only its oldest chunk is acted on, at waits doubling up to
 * INART_WORKER_STALL_MAX_NS, until anything is heard.
 *
 * Window: a chunk seq is sent only while seq < base + window, base being
 * the lowest seq of the tree without a result, so live chunks of a tree
 * have distinct slots (window <= slots).
 *
 * Pacing: a tree with pace_Bps > 0 sends its DATA packets (first
 * transmissions and resent values; each counted as its Ethernet frame:
 * INART_PKT_UDP_HLEN + header + values) at that rate, with a credit of
 * INART_WORKER_PACE_BURST frames after an idle time.  The plan's rate of
 * every flow keeps every link at or below its capacity (install.h), so
 * shaped FIFO queues do not fill with the window of every stream.  Probes
 * wait for the rate too and are charged a full frame (the answer to one may
 * be a whole result): recovery traffic of a paced tree never exceeds its
 * rate, so results merely late (a starved CPU, a stalled peer) cannot turn
 * into a storm of probes whose answers fill the PS's link.  With a schedule
 * (plan_Bps and pace_lead_ns), a tree runs at most pace_lead_ns ahead of its
 * plan's rate since its first packet of the all-reduce (pace.h): on a link
 * the plan fills with several jobs, the headroom does not let one job's
 * streams take another's share.
 *
 * Ownership: the worker keeps a pointer to the input buffer until the
 * all-reduce is done; the caller keeps it alive.  Datagram buffers are the
 * caller's.
 */
#ifndef INART_WORKER_H
#define INART_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "dp/dgram.h"
#include "dp/wire.h"

#define INART_WORKER_MAX_TREES 64

struct inart_worker_tree {
	uint32_t ps_ip;	 /* host order */
	uint32_t label;	 /* first UP label (0: plain IPv4 to the PS) */
	double share;	 /* fraction of the buffer; shares sum to 1 */
	double pace_Bps; /* the tree's planned rate: frame bytes per second of its
			    DATA packets (0: not paced, only the window limits) */
	double plan_Bps; /* the plan's own rate of the flow (pace_Bps without its
			    headroom): a paced tree runs at most pace_lead_ns ahead
			    of it (pace.h); 0: no schedule */
};

struct inart_worker_cfg {
	uint32_t job;
	uint16_t rank, n_workers;
	uint16_t n_trees;
	struct inart_worker_tree trees[INART_WORKER_MAX_TREES];
	uint16_t values_per_packet; /* 0: the most that fits */
	uint16_t window;	    /* chunks in flight per tree; default 64 */
	uint16_t slots;		    /* slot region per tree at switches; >= window */
	uint64_t retx_timeout_ns;   /* initial retransmission timeout; default 20 ms */
	int8_t scale_exp;	    /* initial quantization scale; 0: default 16 */
	uint64_t pace_lead_ns;	    /* paced trees with plan_Bps: at most this far ahead
				       of the plan's schedule (pace.h); 0: no bound */
};

struct inart_worker_stats {
	uint64_t sent;		  /* DATA datagrams emitted (retransmissions included) */
	uint64_t retransmitted;	  /* of which RETX */
	uint64_t retx_asked;	  /* of which asked for by a NACK (the others: timeouts) */
	uint64_t results;	  /* chunk results stored */
	uint64_t duplicates;	  /* results for done chunks, old iterations or old scales */
	uint64_t rescales;	  /* chunk scale lowered (OVERFLOW result or scale notice) */
	uint64_t dropped;	  /* malformed or foreign datagrams */
	uint64_t local_overflows; /* chunks sent as DATA|OVERFLOW (values did not fit) */
	uint64_t probes;	  /* header-only probes sent (DATA|RETX|NACK) */
	uint64_t nacks;		  /* NACKs received for chunks in flight */
	uint64_t chain_gaps;	  /* results found missing from the PS's result chain */
	uint64_t foreign;	  /* datagrams not from the tree's PS address (dropped) */
	uint64_t step_notices;	  /* step notices received (the all-reduce cannot complete) */
	uint64_t stalls;	  /* rounds of a stalled tree (no answer for 2 timeouts):
				     its oldest chunk probed or resent, backing off */
};

/* The defaults of struct inart_worker_tunables (below), one per field. */
#define INART_WORKER_DEFAULT_WINDOW 64
#define INART_WORKER_DEFAULT_RETX_NS 20000000ull
#define INART_WORKER_DEFAULT_SCALE 16
#define INART_WORKER_MAX_BACKOFF_SHIFT 4   /* a chunk's timeout grows to 16x */
#define INART_WORKER_RTO_SRTT_MULT 3	   /* timeout >= 3 srtt */
#define INART_WORKER_RTO_MIN_DIV 64	   /* timeout >= retx_timeout_ns / 64 */
#define INART_WORKER_RTO_MAX_MUL 8	   /* timeout <= retx_timeout_ns * 8 */
#define INART_WORKER_RTO_WARMUP 8	   /* samples before the timeout may go below the initial */
#define INART_WORKER_IDLE_GAPS 4	   /* no result for this many inter-result gaps: probe */
#define INART_WORKER_IDLE_PROBES 4	   /* oldest chunks probed per tree and idle round */
#define INART_WORKER_PROBE_TRIES 3	   /* unanswered probes, then the values are resent */
#define INART_WORKER_PROBE_BACKOFF_SHIFT 2 /* a probe's retry waits up to 4x */
#define INART_WORKER_IDLE_BACKOFF_SHIFT 2  /* idle period doubles up to 4x without answers */
#define INART_WORKER_STALL_RTOS 2	   /* nothing heard from a tree for 2 timeouts: stalled */
#define INART_WORKER_STALL_WINDOWS 2	   /* or 2 windows of probes and resends unanswered */
#define INART_WORKER_STALL_MAX_NS 500000000ull /* a stalled tree acts at most every 0.5 s */
#define INART_WORKER_STALL_VALUES 3	       /* every 3rd stall round resends the values */
#define INART_WORKER_PACE_BURST 4 /* frames a paced tree may send at once after idling */
/* Resends of values perhaps only delayed (a held NACK, unanswered probes, a
 * repeated NACK round) are paid from a per-tree credit that the tree's
 * deliveries refill: one resend per INART_WORKER_HELD_RESULTS results stored,
 * and one per timeout whatever comes; at most INART_WORKER_HELD_BANK_DIV-th of
 * a window's worth banked (at least 2 resends).  A resend asked for by a NACK
 * that shows the loss costs nothing. */
#define INART_WORKER_HELD_RESULTS 8
#define INART_WORKER_HELD_BANK_DIV 2
#define INART_WORKER_HELD_BACKOFF_SHIFT 3 /* a refused resend's probe waits up to 8x */

/*
 * The worker's recovery tunables, all in one place (docs/dataplane.md, The
 * recovery table, says where each acts).  inart_worker_create uses
 * inart_worker_tunables_default(); the configuration's window,
 * retx_timeout_ns and scale_exp, when not 0, replace the first three.
 */
struct inart_worker_tunables {
	uint16_t window;	  /* chunks in flight per tree (64) */
	uint64_t retx_timeout_ns; /* initial result timeout (20 ms) */
	int scale_exp;		  /* initial quantization scale (16) */
	/* result timer (RFC 6298 smoothing, Karn) */
	int max_backoff_shift; /* a chunk's timeout doubles per resend up to 2^4 */
	int rto_srtt_mult;     /* timeout >= 3 srtt */
	int rto_min_div;       /* timeout >= retx_timeout_ns / 64 */
	int rto_max_mul;       /* timeout <= retx_timeout_ns * 8 */
	int rto_warmup;	       /* samples of an all-reduce before it goes below the initial (8) */
	/* probes */
	int probe_tries;	 /* unanswered probes before the values go again (3) */
	int probe_backoff_shift; /* a probe's retry doubles up to 2^2 (while sending new) */
	/* idle probing */
	int idle_gaps;		/* no result for 4 inter-result gaps: idle */
	int idle_probes;	/* oldest chunks probed per idle round (4) */
	int idle_backoff_shift; /* the idle period doubles up to 2^2 */
	/* stalls (a dead peer) */
	int stall_rtos;	       /* nothing heard for 2 timeouts: stalled */
	int stall_windows;     /* or 2 windows of probes and resends unanswered */
	uint64_t stall_max_ns; /* the stall wait doubles up to 0.5 s */
	int stall_values;      /* every 3rd stall round sends the values */
	/* pacing */
	int pace_burst; /* full frames a paced tree may send at once after idling (4) */
	/* the held-resend credit */
	int held_results;	/* a resend costs 8 results stored */
	int held_bank_div;	/* at most window / 2 resends banked */
	int held_backoff_shift; /* a refused resend's probe waits up to 2^3 probe waits */
};

/* The defaults (the INART_WORKER_* values above). */
struct inart_worker_tunables inart_worker_tunables_default(void);

struct inart_worker;

struct inart_worker *inart_worker_create(const struct inart_worker_cfg *cfg);
/* The same with tunables of the caller's (NULL: the defaults); NULL + EINVAL
 * also for a tunable out of range (a shift above 16, a divisor or count 0). */
struct inart_worker *inart_worker_create_tuned(const struct inart_worker_cfg *cfg,
					       const struct inart_worker_tunables *tun);
void inart_worker_destroy(struct inart_worker *w);

/* Start all-reduce number `iter` over buf[0..n). 0 or -EBUSY (one in
 * progress and not stale), -EINVAL (NULL buf with n > 0, a NaN or infinite
 * value, iter not after the previous one: a worker that must go back to an
 * earlier step is created again), -ENOMEM. */
int inart_worker_begin(struct inart_worker *w, const float *buf, size_t n, uint32_t iter);

/* Datagrams to send now (up to max_out; out[i].data has INART_DGRAM_MAX bytes). */
int inart_worker_poll(struct inart_worker *w, uint64_t now_ns, struct inart_dgram *out,
		      int max_out);

/* A received datagram (results) from src_ip:src_port.  0, or a negative
 * code if dropped (-EPERM: not from the tree's PS address and port). */
int inart_worker_rx(struct inart_worker *w, const uint8_t *data, size_t len, uint32_t src_ip,
		    uint16_t src_port, uint64_t now_ns);

/* 1 and *step if a PS sent a step notice for the current all-reduce: it
 * cannot complete (the job is at another step; *step = the step to
 * resynchronise to, the highest named); poll sends nothing more for it.
 * 0 otherwise.  begin() may then start another all-reduce. */
int inart_worker_stale(const struct inart_worker *w, uint32_t *step);

/* Earliest time poll has something to do, UINT64_MAX if nothing. */
uint64_t inart_worker_next_deadline(const struct inart_worker *w);

/* 1 when every chunk's result arrived. */
int inart_worker_done(const struct inart_worker *w);

/* What tree t did in the all-reduce in progress, at now:
 * INART_WORKER_TREE_IDLE     it carries none of its values (share 0, or
 *                            fewer chunks than trees), or w is idle;
 * INART_WORKER_TREE_ANSWERED not stalled: its results came in, or its PS
 *                            (or a switch answering for it) was heard within
 *                            stall_rtos timeouts (or it began sending since);
 * INART_WORKER_TREE_SILENT   stalled: chunks in flight and nothing heard
 *                            for stall_rtos timeouts, or probing in stall
 *                            rounds (a dead PS, or a dead switch on the way).
 * -EINVAL if w is NULL or t not a tree of its cfg. */
enum { INART_WORKER_TREE_IDLE, INART_WORKER_TREE_ANSWERED, INART_WORKER_TREE_SILENT };
int inart_worker_tree_state(const struct inart_worker *w, uint16_t t, uint64_t now);

/* The sums (float), n values. 0 or -EAGAIN if not done. */
int inart_worker_result(const struct inart_worker *w, float *out, size_t n);

void inart_worker_stats(const struct inart_worker *w, struct inart_worker_stats *st);

/* Recovery of values perhaps only delayed (not in inart_worker_stats, whose
 * words the public API mirrors one for one): *held = NACKs naming us marked
 * held (INART_WIRE_NACK_HELD); *deferred = resends of such values refused
 * for want of credit (a probe went instead, backing off). */
void inart_worker_held_stats(const struct inart_worker *w, uint64_t *held, uint64_t *deferred);

/* The scale at which value i of the finished all-reduce was summed (its
 * error bound is n_workers * 2^-(scale+1)).  0 or -EAGAIN / -EINVAL. */
int inart_worker_value_scale(const struct inart_worker *w, size_t i, int *scale);

/* The value range [*off, *off + *len) of tree t in the current (or last)
 * all-reduce, and its chunk count.  0 or -EINVAL. */
int inart_worker_tree_range(const struct inart_worker *w, int t, size_t *off, size_t *len,
			    uint32_t *n_chunks);

#endif
