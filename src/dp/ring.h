/*
 * ring: one worker of a ring all-reduce (the `ring` baseline of the planner:
 * NCCL's and gloo's bandwidth-optimal algorithm; no PS, no INA), sans I/O.
 *
 * The N workers of a job stand in the plan's ring order; this worker is at
 * position `pos`, receives from its predecessor (pos - 1) and sends to its
 * successor (pos + 1), over UDP port INART_WIRE_RING_PORT (wire.h, "ring all-reduce
 * packets"), routed by IPv4.  The buffer of n float32 values is cut into N
 * chunks (chunk c = [c n / N, (c + 1) n / N)), each chunk into packets of
 * values_per_packet values.  Message m = 0 .. 2(N-1)-1 of position p carries
 * chunk (p - m) mod N in the reduce-scatter (m < N - 1) and chunk
 * (p + 1 - s) mod N in the all-gather (m = N - 1 + s); the messages of one
 * direction are numbered packet by packet (`seq`, message-major).  Packet k
 * of message m >= 1 may go as soon as packet k of message m - 1 came from
 * the predecessor (same chunk, same values range): the steps pipeline at
 * packet granularity, there is no barrier.
 *
 * Exactness: a reduce-scatter packet received is added to this worker's own
 * values once (recv + own, float32); the chunk completed at position p is
 * chunk (p + 1) mod N, and its final value, computed there once, is what
 * every other worker receives and stores in the all-gather.  So every worker
 * returns bit-identical sums, each chunk c summed in the ring order
 * x_c + x_(c+1) + ... (positions mod N), one float32 rounding per addition
 * (error at most (N - 1) 2^-24 sum |x|, as NCCL's float ring).  Every
 * message is applied at most once (a bitmap of the messages received), and
 * the buffers a packet is sent from are never written again in the
 * all-reduce, so a retransmission carries the bytes of the first copy.
 *
 * Loss recovery: the receiver acknowledges (ACK: every message below `seq`
 * arrived, and a 64-bit SACK above it; DONE once it holds every message),
 * one ACK per poll after DATA arrived.  The sender keeps at most `window`
 * messages unacknowledged, resends one whose acknowledgement did not come
 * within its timeout (RFC 6298 smoothing of the time to ACK of messages
 * sent once, at least 3 smoothed times -- a queue that builds up without
 * loss must not look like one --, clamped to [retx_timeout_ns / 64,
 * retx_timeout_ns * 8]; each
 * message doubles its own timeout per resend, up to 64x, at most
 * INART_RING_MAX_RTO_NS), and resends at once (once per timeout) a hole
 * below a SACKed message sent more than half a smoothed time ago.  When the
 * successor said nothing for 2 timeouts only the oldest message is resent
 * (a dead peer costs a few packets per second).  An all-reduce is done when
 * every message of the predecessor arrived AND the successor acknowledged
 * every message sent (so no worker leaves its successor without the data).
 *
 * Pacing: with pace_Bps > 0 every DATA packet (first or resent) is charged
 * as its Ethernet frame (INART_PKT_UDP_HLEN + datagram) and the next one
 * waits for the rate (ACKs are not paced); the installation sets the plan's
 * rate of the hop, so that shaped FIFO queues stay short and timeouts are
 * not spent in them.  With plan_Bps and pace_lead_ns, a ring worker runs at
 * most pace_lead_ns ahead of the plan's rate of its hop (pace.h), as a
 * worker's tree does (every DATA packet, resends included, counts in the
 * ring's schedule and waits for it; a tree's resends do not).
 *
 * Steps: every packet carries the all-reduce's step (`iter`).  DATA of the
 * last completed step is answered with ACK|DONE (the predecessor's last
 * acknowledgements were lost); DATA of the next step, before begin, is
 * stashed (at most `window` packets, allocated at create) and applied at
 * begin; anything else of another step is refused (`stale`).  Packets whose
 * source address, port, job, ring size or position is not the neighbour's
 * are refused (`foreign`).
 *
 * A peer that stays silent: with give_up_ns > 0, an all-reduce in progress
 * fails (inart_ring_failed: -ETIMEDOUT and which neighbour) when nothing
 * came from the predecessor for give_up_ns while messages are missing, or
 * nothing from the successor while messages are unacknowledged.
 *
 * Memory: per all-reduce 3 n floats (a copy of the input, partial sums,
 * results: the caller's buffer is free once begin returned), 16 bytes
 * per message sent and 1 bit per message received, allocated by begin
 * (reused when they fit); poll and rx never allocate.
 *
 * Ownership: the ring owns its arrays; datagram buffers are the caller's.
 */
#ifndef INART_DP_RING_H
#define INART_DP_RING_H

#include <stddef.h>
#include <stdint.h>

#include "dp/dgram.h"
#include "dp/wire.h"

#define INART_RING_DEFAULT_WINDOW 64
#define INART_RING_DEFAULT_RETX_NS 20000000ull
#define INART_RING_MAX_SHIFT 6		   /* a message's timeout grows to 64x */
#define INART_RING_MAX_RTO_NS 500000000ull /* and never beyond 0.5 s */
#define INART_RING_RTO_WARMUP 4		   /* samples before the timeout adapts */
#define INART_RING_STALL_RTOS 2		   /* successor silent for 2 timeouts: stalled */
#define INART_RING_MAX_WORKERS 1024
#define INART_RING_PACE_BURST 4 /* frames a paced ring may send at once after idling */

struct inart_ring_cfg {
	uint32_t job;
	uint16_t pos, size;	    /* ring position of this worker, workers in the ring */
	uint32_t prev_ip, next_ip;  /* predecessor's and successor's addresses, host order */
	uint16_t values_per_packet; /* 0: INART_WIRE_RING_MAX_VALUES */
	uint16_t window;	    /* messages unacknowledged; 0: default 64 */
	uint64_t retx_timeout_ns;   /* initial timeout; 0: default 20 ms */
	uint64_t give_up_ns;	    /* a neighbour silent this long fails the
				       all-reduce; 0: never (the caller's deadline) */
	double pace_Bps;	    /* DATA at most this rate, as Ethernet frame bytes
				       per second, with a credit of INART_RING_PACE_BURST
				       frames after idling; 0: not paced */
	double plan_Bps;	    /* the plan's own rate of the hop (pace.h); 0: none */
	uint64_t pace_lead_ns;	    /* at most this far ahead of it; 0: no bound */
};

struct inart_ring_stats {
	uint64_t sent;		/* DATA datagrams emitted, resends included */
	uint64_t retransmitted; /* of which resends */
	uint64_t fast_retx;	/* of which for a SACK hole (the others: timeouts) */
	uint64_t acks_sent;	/* ACK datagrams emitted */
	uint64_t received;	/* DATA messages applied */
	uint64_t duplicates;	/* DATA messages already applied */
	uint64_t acks;		/* ACKs received for the current step */
	uint64_t old_answered;	/* DATA of the last completed step answered with ACK|DONE */
	uint64_t stashed;	/* DATA of the next step kept until begin */
	uint64_t stale;		/* packets of another step refused */
	uint64_t foreign;	/* packets not from the neighbour's address, port or position */
	uint64_t dropped;	/* malformed, or inconsistent with the ring */
	uint64_t stalls;	/* rounds in which only the oldest message was resent */
};

/* Which neighbour went silent (inart_ring_failed). */
enum inart_ring_silent {
	INART_RING_SILENT_NONE = 0,
	INART_RING_SILENT_PREV = 1, /* no data from the predecessor */
	INART_RING_SILENT_NEXT = 2, /* no acknowledgement from the successor */
};

struct inart_ring;

/* NULL + errno (EINVAL: size 0 or above INART_RING_MAX_WORKERS, pos >= size,
 * values_per_packet above INART_WIRE_RING_MAX_VALUES; ENOMEM). */
struct inart_ring *inart_ring_create(const struct inart_ring_cfg *cfg);
void inart_ring_destroy(struct inart_ring *r);

/* Start all-reduce (step) `iter` over buf[0..n).  0, -EBUSY (one in
 * progress), -EINVAL (NULL buf with n > 0, a NaN or infinite value, iter not
 * after the last completed step), -ENOMEM. */
int inart_ring_begin(struct inart_ring *r, const float *buf, size_t n, uint32_t iter);

/* Datagrams to send now (up to max_out; out[i].data has INART_DGRAM_MAX
 * bytes).  Also between all-reduces (answers to the last step). */
int inart_ring_poll(struct inart_ring *r, uint64_t now_ns, struct inart_dgram *out, int max_out);

/* A received datagram from src_ip:src_port.  0 or a negative code if
 * refused (-EPERM foreign, -ESTALE another step, -EALREADY duplicate,
 * -EINVAL malformed). */
int inart_ring_rx(struct inart_ring *r, const uint8_t *data, size_t len, uint32_t src_ip,
		  uint16_t src_port, uint64_t now_ns);

/* Earliest time poll has something to do, UINT64_MAX if nothing. */
uint64_t inart_ring_next_deadline(const struct inart_ring *r);

/* 1 (and its step and size) while an all-reduce is in progress: a caller
 * whose wait timed out may go on waiting for it. */
int inart_ring_running(const struct inart_ring *r, uint32_t *iter, size_t *n);

/* 1 when the all-reduce is done (every message received and acknowledged). */
int inart_ring_done(const struct inart_ring *r);

/* 0, or -ETIMEDOUT if the all-reduce failed because a neighbour was silent
 * for give_up_ns (*which: enum inart_ring_silent; may be NULL). */
int inart_ring_failed(const struct inart_ring *r, int *which);

/* The sums, n values.  0, -EAGAIN if not done, -EINVAL if n differs. */
int inart_ring_result(const struct inart_ring *r, float *out, size_t n);

void inart_ring_stats(const struct inart_ring *r, struct inart_ring_stats *st);

#endif
