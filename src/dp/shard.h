/*
 * shard: the switch core cut into N shards, sans I/O.  A shard is a whole
 * switch pipeline (dp/switch) with its own aggregator pool, slot metadata,
 * table set (whose rank progress and tree counters the packet path writes),
 * drop and port counters and learned peer MACs; shards share nothing, so N
 * threads may run N shards with no lock on the packet path.
 *
 * Steering (inart_shard_steer) sends every packet that can touch one
 * aggregator slot to one shard: an InArt packet goes by (job, tree, slot)
 * of its INA header -- what a chunk's contributions, its aggregate, its
 * result, NACKs and probes all carry -- never by its label, which differs
 * between the UP and DOWN directions of one chunk.  Other IPv4 goes by
 * (source, destination) address, everything else (ARP, malformed) to shard
 * 0.  The function reads fixed offsets and checks every length against the
 * frame, so that a kernel program (the AF_PACKET fanout's classic BPF,
 * io/fanout; an XDP program choosing an XSKMAP index) computes the same
 * shard; docs/dataplane.md, "Shards and steering", states it byte by byte.
 *
 * Tables are one transaction across the shards: a build compiles one table
 * set per shard (prepare; if any shard's fails, the sets already built are
 * destroyed and nothing changed), a swap puts all of them in service at
 * once (commit; cannot fail, allocates nothing) and returns the previous
 * sets in the same container (kept for a rollback, which is a swap).  The
 * caller makes the swap atomic with respect to packets: with shards in
 * several threads, every shard's thread is parked while it runs (daemon/
 * switchd_workers).  Reading the tables back reads shard 0's (all shards
 * hold the same entries); counters are summed over the shards.
 *
 * With one shard every call is the one of dp/switch on its single core, and
 * steering always answers 0.
 *
 * Ownership: the set owns its shards; a table container is the caller's
 * until swapped in, and what a swap returns is the caller's.
 */
#ifndef INART_SHARD_H
#define INART_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "dp/switch.h"

#define INART_SHARD_MAX 64

/* ---- steering ---- */

/* Offsets in an Ethernet frame (untagged) that steering reads. */
#define INART_SHARD_OFF_ETHERTYPE 12 /* u16, 0x0800 */
#define INART_SHARD_OFF_IP                                                                         \
	14 /* IPv4 header: IHL at +0, frag at +6, proto +9,                                        \
	      source +12, destination +16 */
/* from the UDP payload (the INA header): job u32 at +4, tree u16 at +8, slot
 * u16 at +24; the payload must hold INART_SHARD_INA_NEED bytes */
#define INART_SHARD_INA_JOB 4
#define INART_SHARD_INA_TREE 8
#define INART_SHARD_INA_SLOT 24
#define INART_SHARD_INA_NEED 26

/* The mixing constants (32-bit arithmetic, wrapping). */
#define INART_SHARD_K1 0x9E3779B1u
#define INART_SHARD_K2 0x85EBCA6Bu

/* mix(a, b) = y ^ (y >> 16) with y = (a * K1 ^ b) * K2, all 32-bit. */
static inline uint32_t inart_shard_mix(uint32_t a, uint32_t b)
{
	uint32_t y = (a * INART_SHARD_K1 ^ b) * INART_SHARD_K2;

	return y ^ (y >> 16);
}

/* The shard (0..n-1) of an InArt packet of (job, tree, slot):
 * (mix(job, tree) mod n + slot) mod n, in 32 bits without overflow -- a
 * tree's consecutive slots go round the shards, so a window of W slots puts
 * W/n on each. */
static inline int inart_shard_of_slot(uint32_t job, uint16_t tree, uint16_t slot, int n)
{
	return n <= 1 ? 0 : (int)((inart_shard_mix(job, tree) % (uint32_t)n + slot) % (uint32_t)n);
}

/* The shard of frame[0..len) among n (n <= 1: 0).  Reads nothing at or
 * beyond frame + len.  In this order (u: the UDP header's offset, 14 +
 * 4 * IHL):
 *   not IPv4 (ethertype), len < 14 + 20, IHL < 5         -> 0;
 *   not UDP, or a fragment (offset or MF set)            -> flow = mix(src, dst) mod n;
 *   len < u + 4 (no destination port)                    -> 0;
 *   destination port not INART_WIRE_UDP_PORT             -> flow;
 *   len < u + 8 + INART_SHARD_INA_NEED                   -> 0;
 *   else (an InArt packet)                               -> inart_shard_of_slot.
 * Every "-> 0" on a length is what a classic BPF program gets when a load
 * runs past the packet (it returns 0), so io/fanout's program needs no
 * length test of its own. */
int inart_shard_steer(const uint8_t *frame, size_t len, int n);

/* ---- the sharded core ---- */

struct inart_shards;

/* n shards (1..INART_SHARD_MAX) of a switch of configuration cfg (each with
 * the whole pool: slot regions are the same in every shard).  NULL + errno
 * (EINVAL: cfg refused by inart_switch_cfg_check, or n out of range;
 * ENOMEM). */
struct inart_shards *inart_shards_create(const struct inart_sw_cfg *cfg, int n);
void inart_shards_destroy(struct inart_shards *sh);
int inart_shards_n(const struct inart_shards *sh);
/* Shard k's core (k in 0..n-1): its thread runs inart_switch_rx / _tick /
 * _next_deadline on it; tables change only through the calls below. */
struct inart_switch *inart_shards_core(struct inart_shards *sh, int k);
const struct inart_switch *inart_shards_core_c(const struct inart_shards *sh, int k);

/* One table set per shard: a prepared install, or what a swap took out. */
struct inart_shard_tables;

/* Prepare: compile u against every shard's tables (only read; an injected
 * failure, inart_shards_fail_next_build, is used up).  0 and *out,
 * or the first shard's error (-EINVAL / -ENOSPC / -ENOMEM, why names it,
 * prefixed "shard K: " past shard 0) with nothing allocated. */
int inart_shards_tables_build(struct inart_shards *sh, const struct inart_sw_update *u,
			      struct inart_shard_tables **out, struct inart_err *err);
/* Commit: put t's sets in service on every shard (t built for this set of
 * shards: same count); returns t holding the sets taken out. */
struct inart_shard_tables *inart_shards_tables_swap(struct inart_shards *sh,
						    struct inart_shard_tables *t);
void inart_shard_tables_destroy(struct inart_shard_tables *t);
/* Shard 0's set of t (reading the entries back). */
const struct inart_sw_tables *inart_shard_tables_first(const struct inart_shard_tables *t);
/* Build, swap, destroy what went out: 0, or an error with nothing changed. */
int inart_shards_apply(struct inart_shards *sh, const struct inart_sw_update *u, struct inart_err *err);
/* Swaps so far (every shard is at this table epoch). */
uint64_t inart_shards_epoch(const struct inart_shards *sh);

/* What one shard holds (the control socket's per-shard info). */
struct inart_shard_info {
	uint64_t epoch;	 /* swaps of this shard's tables (= the set's epoch: a swap
			    flips all) */
	uint64_t digest; /* of its entries: labels (with their bitmaps and copies),
			    routes, ingress; independent of their order, so shards
			    holding the same entries have the same digest */
	int labels, routes, ingress, trees;
	size_t table_bytes;
	int pool_slots;	    /* its aggregator pool */
	int slots_assigned; /* of which in the slot regions of its aggregating entries */
};

/* Shard k's tables into *out: 0, -EINVAL (k out of range) or -ENOMEM.  It
 * reads only what the packet path never writes (the entries), as a table
 * build does; the slots busy now are the packet path's state
 * (inart_switch_slots_busy on inart_shards_core_c, where it stands still). */
int inart_shards_info(const struct inart_shards *sh, int k, struct inart_shard_info *out);

/* Tests and switchd --test-faults: the next build fails on shard k with
 * error -err (after the shards before it have built theirs; why: "shard K:
 * injected failure: STRERROR"); k < 0: no failure. */
void inart_shards_fail_next_build(struct inart_shards *sh, int k, int err);

/* One thread for all the shards (tests, the daemon with one core): steer
 * in, run its shard.  inart_switch_rx's contract. */
int inart_shards_rx(struct inart_shards *sh, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out);
/* Earliest deadline over the shards; tick every shard (out shared: returns
 * the frames emitted in all). */
uint64_t inart_shards_next_deadline(const struct inart_shards *sh);
int inart_shards_tick(struct inart_shards *sh, uint64_t now_ns, struct inart_frame *out,
		      int max_out);

/* inart_switch_lose_state on every shard: the busy slots in all. */
int inart_shards_lose_state(struct inart_shards *sh);

/* inart_switch_stats summed over the shards (the same form). */
int inart_shards_stats(const struct inart_shards *sh, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees);

#endif
