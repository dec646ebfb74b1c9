/*
 * ps: the parameter server core, sans I/O.
 *
 * For each (job, tree) it serves, the PS combines contributions per chunk
 * (iter, seq) by bitmap: a packet is absorbed only if its contributors are
 * disjoint from those already counted (then added), or a strict superset of
 * them (then it replaces them: a partial aggregate arriving after some of
 * its workers' retransmissions), so every worker counts exactly once
 * whatever mix of full aggregates, partial aggregates, fallbacks,
 * retransmissions and duplicates arrives, in any order.  When the bitmap
 * covers all fan_in workers the chunk is complete: the result (RESULT flag,
 * same iter/seq/scale) is sent once to every child of the PS in the tree
 * (label chain; switches replicate further down), naming in `prev` the
 * result sent down before it (the result chain).  A worker's retransmitted
 * DATA (label 0) or probe for a complete chunk is answered with a unicast
 * RESULT|RETX (label 0); a second asker within the NACK loop time makes the
 * result go down again instead.  Loss recovery: ranks whose later chunks
 * arrived along the tree while a chunk still misses them are NACKed
 * (RESULT|NACK down the tree, towards the children those ranks were learned
 * under), again after twice the measured NACK loop time; probes of open
 * chunks get a unicast NACK naming every missing rank.  When no DATA came
 * along a tree for INART_PS_DRAIN_GAPS gaps (the end of an all-reduce), a
 * probe NACKs down the tree every rank missing from its record and, once
 * per drain, from every other open record.  Sums are int64; a sum outside
 * int32 makes the result carry INART_F_OVERFLOW (workers then rescale and
 * resend with a new scale_exp; a chunk's state restarts when a packet with a
 * different scale arrives).
 * Results of the last completed iteration are kept for retransmissions.
 *
 * Iterations: the newest iteration seen with a valid packet is "current";
 * state is kept for it and the one before (records are indexed by iter & 1
 * and seq, in blocks of INART_PS_BLOCK_CHUNKS allocated on first use and
 * reused by later iterations); packets for older iterations are dropped as
 * stale.  A seq >= max_chunks is dropped (memory bound: at most
 * 2 * ceil(max_chunks / INART_PS_BLOCK_CHUNKS) blocks per tree).
 *
 * Restarts: a job started again (new worker contexts count iterations from
 * 1 again) would find its iterations stale or, worse, already complete.  So
 * a first-time contribution (DATA without RETX or NACK) for an iteration
 * that is not newer than the current one, arriving after the tree saw no
 * packet at all for INART_PS_RESTART_IDLE_NS, starts the tree afresh
 * (counted in `restarts`).  Between all-reduces every worker has every
 * result, so forgetting them loses nothing; inside one (a straggler a
 * second late while the others' timers backed off) the others' forgotten
 * contributions are recovered like lost ones: slower, never wrong.
 *
 * Scales: a packet at a lower scale than its chunk's restarts the chunk at
 * that scale (unless the chunk completed without overflow); a RETX at a
 * higher scale is answered with the chunk's result if complete, else with a
 * notice RESULT|RETX|OVERFLOW at the chunk's scale carrying the chunk's
 * (incomplete) bitmap and no values, telling the sender to join that scale.
 * docs/dataplane.md has the protocol and the exactly-once argument.
 *
 * Ownership: the PS owns its state; datagram buffers are the caller's.
 */
#ifndef INART_PS_H
#define INART_PS_H

#include <stddef.h>
#include <stdint.h>

#include "dgram.h"
#include "wire.h"

#define INART_PS_MAX_CHILDREN 256

struct inart_ps_child {
	uint32_t ip;	/* destination of the RESULT copy (host order) */
	uint32_t label; /* first DOWN label (0: plain IPv4) */
};

struct inart_ps_tree_cfg {
	uint32_t job;
	uint16_t tree;
	uint16_t fan_in; /* workers of the job (ranks 0..fan_in-1) */
	uint16_t n_children;
	struct inart_ps_child children[INART_PS_MAX_CHILDREN];
	uint32_t max_chunks; /* chunks per iteration; 0: INART_PS_DEFAULT_MAX_CHUNKS */
};

#define INART_PS_DEFAULT_MAX_CHUNKS (1u << 16)
#define INART_PS_LIMIT_MAX_CHUNKS (1u << 24)
#define INART_PS_BLOCK_CHUNKS 64
/* A rank whose contribution to chunk seq + INART_PS_LOST_AFTER (or to a later
 * iteration) arrived along the tree is taken to have lost its contribution to
 * chunk seq if that is still missing: the PS sends a NACK naming it. */
#define INART_PS_LOST_AFTER 2
/* No DATA along a tree for this many smoothed gaps between them: the streams
 * stopped (the end of an all-reduce), every contribution still missing is
 * NACKed when a worker probes (docs/dataplane.md, packet rule 13). */
#define INART_PS_DRAIN_GAPS 4
/* a tree silent this long takes an old iteration's fresh DATA as a restart */
#define INART_PS_RESTART_IDLE_NS 1000000000ull

struct inart_ps_stats {
	uint64_t rx, absorbed, duplicates, completed, results_sent, retx_answered, overflows;
	uint64_t dropped; /* malformed, unknown tree, bits outside fan-in, stale iteration */
	/* dropped, by reason (they add up to dropped) */
	uint64_t drop_malformed; /* failed inart_wire_decode, or not DATA */
	uint64_t drop_unknown;	 /* unknown (job, tree) */
	uint64_t drop_mismatch;	 /* fan_in, bitmap_words or count disagree with the tree/chunk */
	uint64_t drop_stale;	 /* old iteration, or old scale without RETX */
	uint64_t drop_limit;	 /* seq >= max_chunks */
	uint64_t drop_nomem;	 /* a block could not be allocated */
	uint64_t out_full;	 /* datagrams not emitted: max_out too small */
	uint64_t rescales;	 /* chunks restarted at a lower scale */
	uint64_t notices;	 /* scale notices sent (RETX at an old scale) */
	uint64_t replaced;	 /* of absorbed: a superset aggregate replaced the chunk's state */
	uint64_t nacks;		 /* NACK copies sent down the tree (missing contributions) */
	uint64_t probes;	 /* probes received (DATA|RETX|NACK) */
	uint64_t probe_nacks;	 /* probes answered with a NACK (chunk not complete) */
	uint64_t resent_down;	 /* complete results sent down the tree again (several askers) */
	uint64_t answers_held;	 /* askers not answered: the result was just sent down again */
	uint64_t restarts;	 /* trees started afresh: a job restarted after an idle time */
};

struct inart_ps;

struct inart_ps *inart_ps_create(void);
void inart_ps_destroy(struct inart_ps *ps);

/* Add or replace a tree. 0 or -EINVAL/-ENOMEM. */
int inart_ps_tree_set(struct inart_ps *ps, const struct inart_ps_tree_cfg *cfg);
int inart_ps_tree_del(struct inart_ps *ps, uint32_t job, uint16_t tree);

/* One received datagram (src = sender).  Emits up to max_out datagrams
 * (out[i].data: INART_DGRAM_MAX bytes each).  Returns the number emitted. */
int inart_ps_rx(struct inart_ps *ps, const uint8_t *data, size_t len, uint32_t src_ip,
		uint16_t src_port, uint64_t now_ns, struct inart_dgram *out, int max_out);

void inart_ps_stats(const struct inart_ps *ps, struct inart_ps_stats *st);

#endif
