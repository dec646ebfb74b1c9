/*
 * agg_pool: the aggregator slot pool of a switch (register-style state).
 *
 * n_slots slots of max_values int32 sums each, allocated once.  A slot is
 * free or holds one chunk, identified by a key (job, tree, label of the
 * aggregating table entry, iter, seq, slot field, fan_in, bitmap width,
 * count, scale_exp).  Absorbing a contribution into a slot:
 *   - free slot: the slot takes the key, its bitmap and values (deadline =
 *     now + timeout);
 *   - same key: the contributors must be disjoint from those already in the
 *     slot (exactly-once), then the values are added;
 *   - another key: the slot is busy (the caller forwards the packet
 *     unaggregated).
 * Sums are int32 with overflow detection (a sum that leaves the int32 range
 * at any step marks the slot overflowed: conservative, never silent).
 * Payload values are big-endian int32 straight from the packet.
 *
 * A slot that stops aggregating may keep its contents (kept != 0): the last
 * aggregate emitted from it (so a switch can send it again when the PS
 * reports it lost) or a result stored by the caller (so a switch can answer
 * a worker that missed it).  Kept contents are read-only and overwritten by
 * the next chunk that takes the slot.
 *
 * Deadlines: every slot has the same timeout, so occupied slots are kept in
 * a FIFO (intrusive doubly-linked list) ordered by deadline; expiry looks at
 * the head only, and removing a completed slot is O(1).
 *
 * Ownership: the pool owns all its memory; no allocation after create.
 */
#ifndef INART_AGG_POOL_H
#define INART_AGG_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "dp/wire.h"

struct inart_agg_key {
	uint32_t job, label, iter, seq;
	uint16_t tree, fan_in, slot, count;
	uint8_t bitmap_words;
	int8_t scale_exp;
};

enum inart_agg_result {
	INART_AGG_ABSORBED = 0,	  /* added; the slot is not complete yet */
	INART_AGG_COMPLETE = 1,	  /* added; the slot's bitmap equals expected */
	INART_AGG_BUSY = -1,	  /* the slot holds another chunk */
	INART_AGG_DUPLICATE = -2, /* contributors overlap those in the slot */
	INART_AGG_EINVAL = -3,	  /* slot index, count or bitmap width out of range */
};

enum inart_agg_kept {
	INART_AGG_KEPT_NONE = 0,
	INART_AGG_KEPT_SENT = 1,   /* the aggregate last emitted (key, bitmap, sums) */
	INART_AGG_KEPT_RESULT = 2, /* a result stored by inart_agg_pool_keep_result */
};

/* Read-only view of a slot. */
struct inart_agg_slot {
	int busy;
	int kept;	   /* not busy: enum inart_agg_kept */
	uint32_t aux;	   /* KEPT_RESULT: the caller's word (a result's prev) */
	int overflow;	   /* some sum left the int32 range */
	uint32_t absorbed; /* contributions added */
	uint64_t deadline;
	struct inart_agg_key key;
	uint64_t bitmap[INART_WIRE_MAX_BITMAP_WORDS];
};

struct inart_agg_pool;

/* NULL + errno (EINVAL for n_slots < 1, max_values outside 0..65535). */
struct inart_agg_pool *inart_agg_pool_create(int n_slots, int max_values, uint64_t timeout_ns);
void inart_agg_pool_destroy(struct inart_agg_pool *p);

int inart_agg_pool_n_slots(const struct inart_agg_pool *p);
int inart_agg_pool_max_values(const struct inart_agg_pool *p);
int inart_agg_pool_busy(const struct inart_agg_pool *p);

/* Absorb one contribution (bits: key->bitmap_words words; values: key->count
 * big-endian int32).  expected (bitmap_words words) may be NULL: never
 * complete.  Returns enum inart_agg_result; *fresh (if non-NULL) is set to 1
 * when this call allocated the slot. */
int inart_agg_pool_absorb(struct inart_agg_pool *p, int slot, const struct inart_agg_key *key,
			  const uint64_t *bits, const uint8_t *be_values, const uint64_t *expected,
			  uint64_t now_ns, int *fresh);

/* The slot's state, or NULL if slot is out of range. */
const struct inart_agg_slot *inart_agg_pool_slot(const struct inart_agg_pool *p, int slot);

/* Copy the sums of a busy slot as big-endian int32 into be_out (key.count
 * values) and free the slot.  Returns the count, or -1 if the slot is free
 * or out of range.  be_out may be NULL to discard. */
int inart_agg_pool_take(struct inart_agg_pool *p, int slot, uint8_t *be_out);

/* As inart_agg_pool_take, but the slot keeps key, bitmap and sums
 * (kept = INART_AGG_KEPT_SENT) until another chunk takes it. */
int inart_agg_pool_take_keep(struct inart_agg_pool *p, int slot, uint8_t *be_out);

/* Copy the sums of a busy or kept slot as big-endian int32 (key.count
 * values) without changing it.  Returns the count, or -1. */
int inart_agg_pool_read(const struct inart_agg_pool *p, int slot, uint8_t *be_out);

/* Store a result in a slot that is not busy: key, bitmap (key->bitmap_words
 * words), key->count big-endian values, aux; kept = INART_AGG_KEPT_RESULT.
 * 0, or -1 if the slot is busy or out of range, or the key does not fit. */
int inart_agg_pool_keep_result(struct inart_agg_pool *p, int slot, const struct inart_agg_key *key,
			       const uint64_t *bits, const uint8_t *be_values, uint32_t aux);

/* Free a slot without reading it, and drop kept contents (no-op if free). */
void inart_agg_pool_release(struct inart_agg_pool *p, int slot);

/* The occupied slot with the earliest deadline if that deadline is <= now,
 * else -1. */
int inart_agg_pool_expired(const struct inart_agg_pool *p, uint64_t now_ns);

/* Walk the busy slots in deadline order: the first (slot -1) or the one after
 * busy slot `slot`; -1 at the end.  Fetch the next before releasing one. */
int inart_agg_pool_busy_next(const struct inart_agg_pool *p, int slot);

/* Earliest deadline of an occupied slot, UINT64_MAX if none. */
uint64_t inart_agg_pool_next_deadline(const struct inart_agg_pool *p);

/* Free every slot and drop all kept contents. */
void inart_agg_pool_clear(struct inart_agg_pool *p);

/* The raw engine, exposed for benchmarks and tests:
 * sums[i] += be32(be[i]) for i < n, returns 1 if some sum overflowed
 * (the sums then hold the wrapped values); copy variant: sums[i] = be32(be[i]);
 * store variant: be[i] = be32(sums[i]). */
int inart_agg_add_be(int32_t *sums, const uint8_t *be, size_t n);
/* Engine in use: "avx2" or "baseline".  inart_agg_engine_select(0) forces
 * the baseline code, (1) the AVX2 code if the CPU has it; returns 0 or -1 if
 * not available (tests and benchmarks compare both). */
const char *inart_agg_engine(void);
int inart_agg_engine_select(int avx2);
void inart_agg_copy_be(int32_t *sums, const uint8_t *be, size_t n);
void inart_agg_store_be(uint8_t *be, const int32_t *sums, size_t n);

#endif
