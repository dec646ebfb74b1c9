/*
 * ps_impl: the parameter server core's state, shared by its four parts
 * (not a public interface): ps_tree.c keeps the table of trees and their
 * memory; ps_rec.c finds and starts chunk records and sends (headers,
 * results, drops counted); ps.c the packet path over the records
 * (absorbing contributions, completing records, sources and steps);
 * ps_recovery.c finds and asks for what is
 * missing (rank progress, NACKs and their rounds, the drain, probes and the
 * answers to askers, the held mark).  Calls go one way: ps.c ->
 * ps_recovery.c -> ps_rec.c, ps.c -> ps_rec.c, ps.c -> ps_tree.c.  See ps.c
 * for the invariants and
 * docs/dataplane.md for the rules.
 */
#ifndef INART_PS_IMPL_H
#define INART_PS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dp/dgram.h"
#include "dp/progress.h"
#include "dp/ps.h"
#include "dp/wire.h"

enum { REC_EMPTY = 0, REC_OPEN = 1, REC_DONE = 2 };

struct rec {
	uint32_t iter;
	uint8_t state;
	int8_t scale;
	uint8_t flags;	  /* INART_F_OVERFLOW if an absorbed packet or the sum overflowed */
	uint8_t nack_lvl; /* NACK rounds sent */
	uint16_t count, slot, nbits;
	uint16_t remc_child; /* DONE: 1 + the child it was sent down again towards, 0: all */
	uint32_t prev;	     /* DONE: 1 + seq of the result sent down before this one, 0 */
	uint32_t ans_ip;     /* DONE: the address the last unicast answer went to */
	uint32_t remc_ip;    /* DONE: the asker that made the PS send the result down again */
	uint32_t gen;	     /* the tree's generation the record belongs to */
	uint64_t nack_ns;    /* time of the last NACK */
	uint64_t ans_ns;     /* DONE: last unicast answer with the result */
	uint64_t remc_ns;    /* DONE: last time the result was sent down again */
	uint64_t touch_ns;   /* last contribution absorbed (DONE: when it completed) */
	/* uint64_t bitmap[bw]; uint64_t nacked[bw]; int64_t sums[vmax]; follow */
};

#define NACK_PENDING 64 /* NACKed records watched for a repeat, per tree */
#define NACK_ROUNDS 4	/* NACKs per record at most (then the workers' timers) */

struct tree {
	struct inart_ps_tree_cfg cfg;
	int bw, vmax;
	size_t stride; /* bytes per record */
	uint32_t max_chunks, n_blocks;
	uint8_t **blocks[2];
	int have_iter;
	uint32_t cur_iter;
	uint64_t full[INART_WIRE_MAX_BITMAP_WORDS];
	struct inart_rank_pos *rk; /* fan_in: progress along the tree (progress.h) */
	/* per rank: the newest iteration of any DATA it sent (step notices) */
	uint32_t *last_iter;
	uint8_t *last_any;
	uint32_t cur_open; /* records of cur_iter that are open */
	uint32_t gen;	   /* records of another generation are empty (a restart) */
	/* sources (sorted by address) and the last one looked up */
	struct inart_ps_source *src;
	int n_src;
	uint32_t src_ip;
	int src_idx;
	/* NACKed records still open, oldest NACK first; a NACK is repeated after
	 * twice the measured time from a NACK to a retransmission it caused */
	uint32_t pend_iter[NACK_PENDING], pend_seq[NACK_PENDING];
	int pend_head, pend_n;
	uint64_t nack_rtt; /* smoothed; 0: no sample yet */
	/* the last result sent down (iter, 1 + seq; 0: none): each result names
	 * its predecessor, so workers see which results they missed */
	uint32_t chain_iter, chain_last;
	/* which child each rank's contributions come from (1 + child index,
	 * 0: not seen), learned from the sender address of packets (a worker
	 * child's own, or a switch child's aggregates): NACKs and results sent
	 * down again go only towards the ranks concerned */
	uint16_t *child_of; /* fan_in */
	void *per_rank;	    /* rk, last_iter, last_any, child_of (ps_tree.c lay_out) */
	uint8_t child_known[INART_PS_MAX_CHILDREN];
	uint32_t learn_ip; /* the last sender address looked up, and its child + 1 */
	int learn_child;
	/* DATA along the tree (not retransmissions): time of the last one, the
	 * smoothed gap between them, the newest iteration and 1 + the highest
	 * seq seen in it; the tree is drained (drained()) when none came for
	 * INART_PS_DRAIN_GAPS gaps; sweep_ns: the last time the open records
	 * were NACKed because of it */
	uint64_t data_ns, data_gap, sweep_ns;
	uint32_t hi_iter, hi_pos;
	/* any valid packet for the tree: time of the last one (restarts) */
	uint64_t rx_ns;
	int have_rx;
	/* hold: retransmissions and probes after an idle time are being held
	 * back (ps.h), since hold_ns */
	uint64_t hold_ns;
	int hold;
};

struct inart_ps {
	struct tree **trees;
	int n_trees, cap_trees;
	int *hash; /* tree index + 1, 0 empty; hash_size a power of two */
	size_t hash_size;
	struct inart_ps_stats st;
	int32_t vals[INART_DGRAM_MAX / 4];
};

static inline uint64_t *rec_bitmap(struct rec *r)
{
	return (uint64_t *)(r + 1);
}

static inline uint64_t *rec_nacked(struct rec *r, int bw)
{
	return rec_bitmap(r) + bw;
}

static inline int64_t *rec_sums(struct rec *r, int bw)
{
	return (int64_t *)(rec_bitmap(r) + 2 * bw);
}

/* ---- ps_tree.c: the trees ---- */

/* Index of tree (job, tree) in ps->trees, -1 if none. */
int inart_ps_tree_find(const struct inart_ps *ps, uint32_t job, uint16_t tree);
/* Forget tree t's chunk state (a new generation of records). */
void inart_ps_tree_clear(struct tree *t);

/* ---- ps_rec.c: records and emission (ps.c and ps_recovery.c use them) ---- */

/* The record of (iter, seq), (re)initialized if it belongs to another
 * iteration or generation (never NULL: all are allocated). */
struct rec *inart_ps_rec_get(struct tree *t, uint32_t iter, uint32_t seq);
/* Start record r for the chunk of h (empty, h's scale, count and slot). */
void inart_ps_rec_start(struct tree *t, struct rec *r, const struct inart_wire_hdr *h);
/* The record of (iter, seq) if it holds that chunk, else NULL. */
struct rec *inart_ps_rec_peek(const struct tree *t, uint32_t iter, uint32_t seq);
/* Send header h (and vals) to the children selected for `ranks`, or as one
 * unicast to (uc_ip, uc_port); returns datagrams emitted. */
int inart_ps_emit_hdr(struct inart_ps *ps, const struct tree *t, struct inart_wire_hdr *h,
		      const int32_t *vals, int to_children, const uint64_t *ranks, uint32_t uc_ip,
		      uint16_t uc_port, struct inart_dgram *out, int max_out);
/* Emit record r's result (or a scale notice) down the tree or unicast. */
int inart_ps_emit(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq,
		  int notice, int to_children, const uint64_t *ranks, uint32_t uc_ip,
		  uint16_t uc_port, struct inart_dgram *out, int max_out);
/* Count a dropped packet under `reason`. */
void inart_ps_drop(struct inart_ps *ps, uint64_t *reason);
/* 1 if bitmaps a and b (bw words) share a rank. */
int inart_ps_bits_overlap(const uint64_t *a, const uint64_t *b, int bw);

/* ---- ps_recovery.c: loss detection and recovery ---- */

/* A worker asks for the result of complete record r (see ps_recovery.c). */
int inart_ps_answer_done(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq,
			 const uint64_t *asker, uint32_t src_ip, uint16_t src_port, uint64_t now,
			 struct inart_dgram *out, int max_out);
/* After a packet of chunk (h->iter, h->seq) arrived along the tree: NACKs
 * for records that miss gone ranks, and a repeated round. */
int inart_ps_nack_check(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
			uint64_t now, struct inart_dgram *out, int max_out);
/* A probe while the tree is drained: a NACK round for the open records. */
int inart_ps_drain_sweep(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
			 uint64_t now, struct inart_dgram *out, int max_out);
/* A probe (DATA|RETX|NACK): the result, or a NACK answer. */
int inart_ps_probe(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		   uint32_t src_ip, uint16_t src_port, uint64_t now, struct inart_dgram *out,
		   int max_out);

#endif
