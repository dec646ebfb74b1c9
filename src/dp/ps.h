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
 * Sources: a tree accepts DATA only from the sources it was given (its
 * workers, each with its own rank only, and the switches of the tree);
 * anything else is dropped (drop_source) before it can touch any state.
 *
 * Iterations (steps): the tree's current iteration `cur` is the newest one
 * accepted.  The acceptance window is [cur - 1, cur + 1]: cur + 1 becomes
 * cur (every worker moves on only with every result of cur, so nothing of
 * cur is needed by a worker that sends cur + 1... except by one that missed
 * results of a PS that lost them); cur - 1 is served only from complete
 * records (answers to workers that missed results); anything else is out of
 * step.  A worker out of step (its packet is older than cur - 1, is for a
 * record of cur - 1 that is not complete, or is 2 or more ahead of cur) gets
 * a step notice (RESULT|STALE, prev = the step to resynchronise to: cur if
 * cur is still being collected and the worker has sent nothing of it, else
 * cur + 1), and its all-reduce fails with -ESTALE instead of waiting for a
 * step nobody else will send.  Packets out of the window never touch state.
 * Records are indexed by iter & 1 and seq, in blocks of
 * INART_PS_BLOCK_CHUNKS all allocated when the tree is set (2 * max_chunks
 * records); a seq >= max_chunks is dropped: the network never makes the PS
 * allocate.
 *
 * Restarts: a job started again (new worker contexts count iterations from
 * 1 again) would find its iterations stale or, worse, already complete.  So
 * a first-time contribution (DATA without RETX or NACK) for an iteration
 * that is not newer than the current one, arriving after the tree saw no
 * packet at all for INART_PS_RESTART_IDLE_NS, starts the tree afresh
 * (counted in `restarts`).  Between all-reduces every worker has every
 * result, so forgetting them loses nothing; inside one (a straggler a
 * second late while the others' timers backed off) the others' forgotten
 * contributions are recovered like lost ones: slower, never wrong.  A
 * retransmission or probe the window refuses (below: it would get a step
 * notice) after the idle time may be
 * the restarted job's first packet to arrive (its worker's DATA still in a
 * switch's slot, waiting for the others'): it is held back -- dropped
 * unanswered (`restart_held`), the idle clock untouched -- until fresh DATA
 * restarts the tree, for one INART_PS_RESTART_IDLE_NS after the first held
 * packet at most; then such packets are handled as any other.  Answered at
 * once it would get a step notice (ESTALE for its worker) and would make
 * the fresh DATA after it no restart.  (One of an iteration the window
 * accepts is answered as before: after a restart of a job whose old run
 * completed the same iteration and chunk, from the old run's record.)
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

#include "dp/dgram.h"
#include "dp/wire.h"

#define INART_PS_MAX_CHILDREN 256
#define INART_PS_MAX_SOURCES 4096
#define INART_PS_ANY_RANK 0xffff

struct inart_ps_child {
	uint32_t ip;	/* destination of the RESULT copy (host order) */
	uint32_t label; /* first DOWN label (0: plain IPv4) */
};

/* Who may send DATA to a tree: a worker (its address and rank: its packets
 * must carry exactly that rank), or a switch of the tree (rank
 * INART_PS_ANY_RANK: aggregates, partial aggregates and repairs of any of
 * the job's ranks; switches are trusted, and the first hop keeps hosts from
 * using their addresses). */
struct inart_ps_source {
	uint32_t ip; /* host order */
	uint16_t rank;
};

struct inart_ps_tree_cfg {
	uint32_t job;
	uint16_t tree;
	uint16_t fan_in; /* workers of the job (ranks 0..fan_in-1) */
	uint16_t n_children;
	struct inart_ps_child children[INART_PS_MAX_CHILDREN];
	uint32_t max_chunks; /* chunks per iteration; 0: INART_PS_DEFAULT_MAX_CHUNKS */
	/* the only senders accepted (the caller's array, copied by tree_set);
	 * n_sources 0: any sender (tests, hand-made trees) */
	uint16_t n_sources;
	const struct inart_ps_source *sources;
};

/* chunk records are allocated when the tree is set, two iterations' worth:
 * 2 * max_chunks * (64 + 16 * bw + 8 * vmax) bytes (docs/dataplane.md) */
#define INART_PS_DEFAULT_MAX_CHUNKS 4096u
#define INART_PS_LIMIT_MAX_CHUNKS (1u << 20)
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
	uint64_t dropped; /* the sum of the drop_* counters */
	/* dropped, by reason (they add up to dropped) */
	uint64_t drop_malformed; /* failed inart_wire_decode, or not DATA */
	uint64_t drop_unknown;	 /* unknown (job, tree) */
	uint64_t drop_mismatch;	 /* fan_in, bitmap_words or count disagree with the tree/chunk */
	uint64_t drop_stale;	 /* an iteration the tree moved past, or old scale without RETX */
	uint64_t drop_limit;	 /* seq >= max_chunks */
	uint64_t drop_source;	 /* not a source of the tree, or ranks not the sender's */
	uint64_t drop_window;	 /* an iteration 2 or more ahead of the tree's */
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
	uint64_t step_notices;	 /* step notices (RESULT|STALE) sent to workers out of step */
	uint64_t restart_held;	 /* retransmissions and probes held back after an idle time */
};

struct inart_ps;

struct inart_ps *inart_ps_create(void);
void inart_ps_destroy(struct inart_ps *ps);

/* Add or replace a tree (its chunk records are allocated here).  A tree of
 * the same (job, tree), fan-in and max_chunks keeps its chunk state and takes
 * the new children and sources.  0 or -EINVAL/-ENOMEM. */
int inart_ps_tree_set(struct inart_ps *ps, const struct inart_ps_tree_cfg *cfg);
int inart_ps_tree_del(struct inart_ps *ps, uint32_t job, uint16_t tree);
/* Restart a tree's chunk state (a new run of the job; no allocation).
 * 0 or -ENOENT. */
int inart_ps_tree_reset(struct inart_ps *ps, uint32_t job, uint16_t tree);

/* Move the state of every tree of `from` that `to` has with the same
 * (job, tree), fan-in and max_chunks (and that is not to be reset: reset
 * 1) into `to`, with `to`'s configuration; the counters too.  O(trees),
 * no allocation: `to` is built off the packet path, the move is the
 * commit.  from keeps fresh trees in their place. */
void inart_ps_carry(struct inart_ps *to, struct inart_ps *from, int reset);
/* Forget the chunk state of every tree (as a restarted PS given the same
 * trees again); configurations stay. */
void inart_ps_lose_state(struct inart_ps *ps);

/* Number of trees, and bytes allocated for chunk records in all. */
int inart_ps_n_trees(const struct inart_ps *ps);
size_t inart_ps_bytes(const struct inart_ps *ps);

/* One received datagram (src = sender).  Emits up to max_out datagrams
 * (out[i].data: INART_DGRAM_MAX bytes each).  Returns the number emitted. */
int inart_ps_rx(struct inart_ps *ps, const uint8_t *data, size_t len, uint32_t src_ip,
		uint16_t src_port, uint64_t now_ns, struct inart_dgram *out, int max_out);

void inart_ps_stats(const struct inart_ps *ps, struct inart_ps_stats *st);

/* The newest step (iteration) tree (job, tree) accepted: 0 and *step;
 * -ENOENT (no such tree), -EAGAIN (none yet).  The controller picks the step
 * at which workers move to a new plan epoch from it. */
int inart_ps_tree_step(const struct inart_ps *ps, uint32_t job, uint16_t tree, uint32_t *step);

#endif
