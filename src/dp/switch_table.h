/*
 * switch_table: the table sets of the switch (switch.h) and their compiler,
 * internal to the switch's modules: the packet pipeline (switch.c) reads a
 * set through these structures; switch_table.c builds, checks and frees
 * sets and reads them back.  The public calls (inart_switch_tables_build,
 * _swap, inart_sw_tables_destroy, _bytes, _labels) are declared in switch.h.
 *
 * Invariants and memory per entry: see switch_table.c.
 */
#ifndef INART_SWITCH_TABLE_H
#define INART_SWITCH_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/switch.h"

/* A compiled label entry. */
struct lent {
	uint32_t label, job, next_label;
	uint16_t tree, out_port, slot_base, n_slots;
	uint8_t kind, aggregate, bitmap_words;
	uint16_t n_down;
	int32_t tree_idx; /* into the tree counters */
	int32_t rk_off;	  /* aggregating: first progress record (one per expected rank) */
	int32_t up_of;	  /* DOWN: an aggregating UP entry of its (job, tree), -1 */
	uint32_t var;	  /* aggregating: first word in exp[]; DOWN: first copy in dn[] */
	uint64_t in_ports;
};

#define LENT_BYTES sizeof(struct lent)

struct inart_sw_tables {
	struct lent *ent;
	int n;
	int32_t *index; /* hcap cells: entry index or -1 */
	uint32_t hcap;	/* power of two, >= 2 * n */
	uint64_t *exp;
	size_t n_exp;
	struct inart_label_down *dn;
	size_t n_dn;
	struct inart_rank_pos *rk; /* written by the packet path */
	size_t n_rk;
	struct inart_sw_tree_stats *trees; /* sorted by (job, tree); written by the packet path */
	int n_trees;
	struct inart_lpm *lpm;
	struct inart_sw_ingress *ing; /* sorted by (port, job) */
	int n_ing;
	int32_t ing_off[INART_SW_MAX_PORTS + 1];
};

static inline uint32_t inart_sw_label_hash(uint32_t label)
{
	return (uint32_t)(((uint64_t)label * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Index of the entry of label in t, -1 (on the packet path: no call). */
static inline int inart_sw_tables_find(const struct inart_sw_tables *t, uint32_t label)
{
	uint32_t m, i;

	if (t->hcap == 0)
		return -1;
	m = t->hcap - 1;
	for (i = inart_sw_label_hash(label) & m; t->index[i] >= 0; i = (i + 1) & m)
		if (t->ent[t->index[i]].label == label)
			return t->index[i];
	return -1;
}

/* An empty table set.  NULL on ENOMEM. */
struct inart_sw_tables *inart_sw_tables_empty(void);

/* Compile old + u into a new set *out for a switch of configuration cfg
 * (old is only read).  0; -EINVAL (an entry, route or ingress entry is
 * invalid, a deleted label is absent, a label appears twice, slot regions
 * overlap), -ENOSPC (more than INART_SW_MAX_LABELS) or -ENOMEM, with the
 * reason in err. */
int inart_sw_tables_compile(const struct inart_sw_cfg *cfg, const struct inart_sw_tables *old,
			    const struct inart_sw_update *u, struct inart_sw_tables **out,
			    struct inart_err *err);

/* Copy the counters of the (job, tree)s that old and t share into t. */
void inart_sw_tables_keep_counters(struct inart_sw_tables *t, const struct inart_sw_tables *old);

/* Reading a set back: copy up to max, return how many there are. */
int inart_sw_tables_routes(const struct inart_sw_tables *t, struct inart_route *out, int max);
int inart_sw_tables_ingress(const struct inart_sw_tables *t, struct inart_sw_ingress *out, int max);

#endif
