/*
 * shaper: the egress shaping of one switch port, sans I/O (the time comes
 * in as an argument): a token bucket of `burst` bytes filling at rate_bps
 * bit/s, in front of a FIFO of at most `limit` bytes, as tc's tbf (rate,
 * burst, limit) does for a qdisc.  switchd (--shape) consults it before
 * each shaped port's transmit: AF_XDP's transmit and the XDP program's
 * redirects bypass the kernel's qdisc, so `inart emu` on --io xdp shapes
 * the links leaving switches here instead of with tbf (docs/emulator.md).
 *
 * A frame is charged its length (the Ethernet frame without FCS, as tbf
 * charges an skb on a veth).  offer(): with nothing queued and the tokens
 * there, the frame goes now (SEND, nothing copied); else it is copied to
 * the FIFO (HELD) or, the FIFO full, dropped (DROP, counted: drop-tail).
 * next() hands out the oldest held frame once the bucket grants it.
 * deadline() says when the loop should call next() again: the head frame's
 * grant time plus at most `slack_ns`, as long as half the bucket's room is
 * left for the tokens that accrue meanwhile (so waking later to release a
 * batch loses no rate: the releases are batched, the long-run rate stays
 * exact; the other half absorbs a wake-up that comes late).
 *
 * Token arithmetic is integer (tokens in 1e-9 bit), so grant times are
 * exact to the nanosecond: a frame of n bytes that finds the bucket empty
 * is granted ceil(8e9 n / rate_bps) ns later.  A frame longer than the
 * burst is granted when the bucket is full (its excess taken as debt).
 * Time never goes backwards in the shaper (an earlier now counts as the
 * last one seen).
 *
 * Memory: the FIFO is a list of 64 KB chunks, frames packed in them; a
 * chunk emptied goes to a free list and is reused, so chunks are allocated
 * only while the queue grows beyond the largest it has been (at most
 * limit / 64 KB + 2 of them), never per frame in a steady state.  One
 * chunk is allocated at creation.
 *
 * Ownership: the shaper owns its copies; a frame returned by next() stays
 * valid until the next call on the shaper.  One thread.
 */
#ifndef INART_SHAPER_H
#define INART_SHAPER_H

#include <stddef.h>
#include <stdint.h>

#define INART_SHAPER_RATE_MAX 1000000000000ull /* 1 Tbit/s */
#define INART_SHAPER_SIZE_MAX 1000000000u      /* burst and limit: 1 GB */
#define INART_SHAPER_FRAME_MAX 9216u	       /* longer frames are dropped */

struct inart_shaper_cfg {
	uint64_t rate_bps; /* bit/s, 1..INART_SHAPER_RATE_MAX */
	uint32_t burst;	   /* bytes (0: inart_shaper_default_burst) */
	uint32_t limit;	   /* bytes queued at most (0: inart_shaper_default_limit) */
	uint64_t slack_ns; /* release batching (0: each frame at its time) */
};

enum inart_shaper_verdict {
	INART_SHAPER_SEND = 0, /* send it now (tokens taken) */
	INART_SHAPER_HELD = 1, /* copied; next() returns it later */
	INART_SHAPER_DROP = 2, /* the FIFO is full (or the frame too long) */
};

struct inart_shaper_stats {
	uint64_t tx_pkts, tx_bytes;    /* left the shaper (at once or released) */
	uint64_t held_pkts;	       /* of which waited in the FIFO */
	uint64_t drops, drop_bytes;    /* drop-tail */
	uint64_t queued, queued_bytes; /* in the FIFO now */
	uint64_t max_queued_bytes;     /* the most it held */
	uint64_t chunks;	       /* FIFO chunks allocated */
};

/* 4 ms at the rate (tbf's rule: burst >= rate / HZ, HZ 250), at least two
 * full (1514-byte) frames.  `inart emu` passes its own (1 ms, as its
 * tbf).  Smaller defaults lost rate on a busy machine: a user-space loop's
 * late wake-up lets the bucket overflow (1 ms: 82% of 20 Mbit/s and 70% of
 * 100 Mbit/s delivered in one fresh-clone CI run, tests/shape.sh). */
uint32_t inart_shaper_default_burst(uint64_t rate_bps);
/* 200 ms at the rate, at least 64 KB. */
uint32_t inart_shaper_default_limit(uint64_t rate_bps);

/* NULL + errno: EINVAL (a rate, burst or limit out of range), ENOMEM. */
struct inart_shaper *inart_shaper_create(const struct inart_shaper_cfg *cfg, uint64_t now_ns);
void inart_shaper_destroy(struct inart_shaper *sh);

enum inart_shaper_verdict inart_shaper_offer(struct inart_shaper *sh, const uint8_t *frame,
					     size_t len, uint64_t now_ns);

/* The oldest held frame if the bucket grants it at now_ns: 1 with *frame
 * (valid until the next call on sh) and *len, tokens taken; else 0. */
int inart_shaper_next(struct inart_shaper *sh, uint64_t now_ns, const uint8_t **frame,
		      uint16_t *len);

/* When to call next() again (see above); UINT64_MAX with nothing held. */
uint64_t inart_shaper_deadline(const struct inart_shaper *sh);

/* When the oldest held frame will be granted (no slack); UINT64_MAX if none. */
uint64_t inart_shaper_ready_at(const struct inart_shaper *sh);

void inart_shaper_stats(const struct inart_shaper *sh, struct inart_shaper_stats *st);
/* The configuration in force (defaults filled in). */
void inart_shaper_cfg_of(const struct inart_shaper *sh, struct inart_shaper_cfg *cfg);

#endif
