/*
 * switch: the software programmable switch's packet pipeline, sans I/O (see
 * switch.h): frames in, frames and deadlines out, aggregation in the pool.
 * The table sets it reads are compiled by switch_table.c (switch_table.h).
 *
 * State: the configuration and per-port peer MACs; the current table set;
 * the aggregator pool with per-slot metadata (addresses, flags and the
 * smallest TTL of the contributions, the NACK round last repaired); drop and
 * port counters.  Everything is allocated by create and by table builds;
 * rx/tick/lose_state/swap never allocate.
 *
 * Invariants:
 *   - every UP aggregate entry's slot region [slot_base, slot_base+n_slots)
 *     lies inside the pool, and regions of entries of different (job, tree)
 *     are disjoint, so a packet can only touch its own tree's slots (the
 *     compiler checks both);
 *   - a busy pool slot's key.label names an UP aggregate entry of the same
 *     (job, tree) and bitmap width whose region holds the slot (a swap frees
 *     slots that lose their entry);
 *   - the packet path writes only the current set's rank progress and tree
 *     counters; a swap carries the counters of the trees that stay;
 *   - a slot's kept contents (not busy) are the aggregate it last emitted or
 *     a clean result of the PS that passed down, keyed like a busy slot;
 *     repairs resend exactly the kept aggregate, answers the kept result;
 *   - every INA packet with a label needs TTL > 1 to be handled; what a
 *     switch sends on (forwarded, replicated, an aggregate) carries a TTL
 *     lower than every packet it came from, so a loop in the tables ends.
 * Ownership: the switch owns its current table set, pool and counters;
 * table sets returned by swap are the caller's; frames are the caller's.
 */
#include "dp/switch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/agg_pool.h"
#include "dp/bytes.h"
#include "common/err.h"
#include "common/slab.h"
#include "dp/lpm.h"
#include "dp/pkt.h"
#include "dp/progress.h"
#include "dp/switch_table.h"

struct slot_meta {
	uint32_t src_ip, dst_ip;
	uint16_t sport;
	uint8_t flags;	  /* INART_F_OVERFLOW carried by contributions */
	uint8_t repaired; /* NACK round the kept aggregate was last sent again for */
	uint8_t ttl;	  /* smallest TTL of the contributions */
};

struct inart_switch {
	struct inart_sw_cfg cfg;
	uint8_t peer[INART_SW_MAX_PORTS][6];
	uint8_t peer_known[INART_SW_MAX_PORTS];
	uint8_t peer_fixed[INART_SW_MAX_PORTS];
	struct inart_sw_tables *tab;
	struct inart_agg_pool *pool;
	struct slot_meta *meta; /* per pool slot; in the switch's block (lay_out) */
	int max_values;
	uint64_t drops[INART_DROP_N];
	struct inart_sw_port_stats port_stats[INART_SW_MAX_PORTS];
};

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---- table sets (compiled by switch_table.c) ---- */

static void drop_orphan_slots(struct inart_switch *sw)
{
	int i = inart_agg_pool_busy_next(sw->pool, -1);

	while (i >= 0) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, i);
		int k = inart_sw_tables_find(sw->tab, s->key.label),
		    next = inart_agg_pool_busy_next(sw->pool, i);
		const struct lent *e = k >= 0 ? &sw->tab->ent[k] : NULL;

		if (e == NULL || e->kind != INART_LABEL_UP || !e->aggregate ||
		    e->job != s->key.job || e->tree != s->key.tree ||
		    e->bitmap_words != s->key.bitmap_words || i < e->slot_base ||
		    i >= e->slot_base + e->n_slots)
			inart_agg_pool_release(sw->pool, i);
		i = next;
	}
}

struct inart_sw_tables *inart_switch_tables_swap(struct inart_switch *sw, struct inart_sw_tables *t)
{
	struct inart_sw_tables *old = sw->tab;

	inart_sw_tables_keep_counters(t, old);
	sw->tab = t;
	drop_orphan_slots(sw);
	return old;
}

const struct inart_sw_tables *inart_switch_tables(const struct inart_switch *sw)
{
	return sw->tab;
}

int inart_switch_tables_build(const struct inart_switch *sw, const struct inart_sw_update *u,
			      struct inart_sw_tables **out, struct inart_err *err)
{
	return inart_sw_tables_compile(sw != NULL ? &sw->cfg : NULL, sw != NULL ? sw->tab : NULL, u,
				       out, err);
}

int inart_switch_apply(struct inart_switch *sw, const struct inart_sw_update *u,
		       struct inart_err *err)
{
	struct inart_sw_tables *t;
	int rc = inart_switch_tables_build(sw, u, &t, err);

	if (rc < 0)
		return rc;
	inart_sw_tables_destroy(inart_switch_tables_swap(sw, t));
	return 0;
}

/* ---- creation ---- */

/* Values per slot and slots of the pool of a (checked) configuration. */
static int cfg_values(const struct inart_sw_cfg *cfg)
{
	return cfg->max_values > 0 ? cfg->max_values : inart_wire_max_values(1);
}

static int cfg_slots(const struct inart_sw_cfg *cfg)
{
	return cfg->pool_slots > 0 ? cfg->pool_slots : 1;
}

int inart_switch_cfg_check(const struct inart_sw_cfg *cfg, struct inart_err *err)
{
	if (cfg == NULL)
		return inart_err_set(err, -EINVAL, "no configuration");
	if (cfg->n_ports < 1 || cfg->n_ports > INART_SW_MAX_PORTS)
		return inart_err_set(err, -EINVAL, "n_ports %d not in 1..%d", cfg->n_ports,
				     INART_SW_MAX_PORTS);
	if (cfg->pool_slots < 0 || cfg->pool_slots > INART_SW_MAX_POOL_SLOTS)
		return inart_err_set(err, -EINVAL, "pool_slots %d not in 0..%d", cfg->pool_slots,
				     INART_SW_MAX_POOL_SLOTS);
	if (cfg->max_values < 0 || cfg->max_values > INART_SW_MAX_SLOT_VALUES)
		return inart_err_set(err, -EINVAL, "max_values %d not in 0..%d", cfg->max_values,
				     INART_SW_MAX_SLOT_VALUES);
	if ((uint64_t)cfg_slots(cfg) * (uint64_t)cfg_values(cfg) > INART_SW_MAX_POOL_VALUES)
		return inart_err_set(err, -EINVAL, "pool of %d slots x %d values above %u values",
				     cfg_slots(cfg), cfg_values(cfg), INART_SW_MAX_POOL_VALUES);
	return 0;
}

/* The per-slot metadata, in one block with the switch (inart_slab_new). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_switch *sw = obj;

	sw->meta = inart_slab_take(s, (size_t)cfg_slots(&sw->cfg), sizeof(*sw->meta));
}

struct inart_switch *inart_switch_create(const struct inart_sw_cfg *cfg)
{
	struct inart_switch *sw, proto = {0};

	if (inart_switch_cfg_check(cfg, NULL) < 0)
		return inart_null_errno(EINVAL);
	proto.cfg = *cfg;
	proto.max_values = cfg_values(cfg);
	for (int i = 0; i < cfg->n_ports; i++) {
		if (!inart_mac_is_zero(cfg->ports[i].peer_mac)) {
			memcpy(proto.peer[i], cfg->ports[i].peer_mac, 6);
			proto.peer_known[i] = proto.peer_fixed[i] = 1;
		}
	}
	sw = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (sw == NULL)
		return NULL;
	sw->pool = inart_agg_pool_create(cfg_slots(cfg), sw->max_values, cfg->flush_timeout_ns);
	sw->tab = inart_sw_tables_empty();
	if (sw->pool == NULL || sw->tab == NULL) {
		inart_switch_destroy(sw);
		return inart_null_errno(ENOMEM);
	}
	return sw;
}

void inart_switch_destroy(struct inart_switch *sw)
{
	if (sw == NULL)
		return;
	inart_sw_tables_destroy(sw->tab);
	inart_agg_pool_destroy(sw->pool);
	free(sw); /* and meta (lay_out) */
}

/* ---- data path ---- */

struct rxctx {
	struct inart_switch *sw;
	struct inart_frame *out;
	int n, max;
	uint64_t now;
};

/* Next output frame, or NULL (counted as OUT_FULL). */
static struct inart_frame *out_next(struct rxctx *c)
{
	if (c->n >= c->max) {
		c->sw->drops[INART_DROP_OUT_FULL]++;
		return NULL;
	}
	return &c->out[c->n];
}

/* 1 if frame f (len bytes) is IPv4 UDP to the INA port. */
static int frame_is_ina(const uint8_t *f, size_t len)
{
	size_t ihl;

	if (len < 14 + 20 + 8 || f[12] != (INART_ETHERTYPE_IPV4 >> 8) ||
	    f[13] != (INART_ETHERTYPE_IPV4 & 0xff) || f[23] != 17)
		return 0;
	ihl = (size_t)(f[14] & 0x0f) * 4;
	return ihl >= 20 && len >= 14 + ihl + 8 &&
	       ((size_t)f[14 + ihl + 2] << 8 | f[14 + ihl + 3]) == INART_WIRE_UDP_PORT;
}

static void out_commit(struct rxctx *c, struct inart_frame *o, uint16_t port, size_t len)
{
	o->port = port;
	o->len = (uint16_t)len;
	c->sw->port_stats[port].tx_pkts++;
	c->sw->port_stats[port].tx_bytes += len;
	if (frame_is_ina(o->data, len))
		c->sw->port_stats[port].tx_ina_bytes += len;
	c->n++;
}

static const uint8_t *peer_of(const struct inart_switch *sw, int port)
{
	return sw->peer_known[port] ? sw->peer[port] : bcast;
}

/* Copy an IPv4 frame to o for transmission on port: MACs rewritten, TTL
 * decremented (the caller checked ttl > 1), padding trimmed.  The caller
 * fixes the IPv4 checksum after any further rewrite.  Returns the length. */
static size_t fwd_copy(const struct inart_switch *sw, const uint8_t *frame,
		       const struct inart_pkt_info *pi, uint16_t port, uint8_t *o)
{
	size_t len = pi->l3_off + pi->ip_len;

	memcpy(o, frame, len);
	memcpy(o, peer_of(sw, port), 6);
	memcpy(o + 6, sw->cfg.ports[port].mac, 6);
	o[pi->l3_off + 8] = (uint8_t)(pi->ttl - 1);
	return len;
}

static void fix_ip_csum(uint8_t *o, const struct inart_pkt_info *pi)
{
	uint8_t *ip = o + pi->l3_off;

	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, pi->ip_hlen));
}

static int is_own_ip(const struct inart_switch *sw, uint32_t ip)
{
	int i;

	for (i = 0; i < sw->cfg.n_ports; i++)
		if (sw->cfg.ports[i].ip != 0 && sw->cfg.ports[i].ip == ip)
			return 1;
	return 0;
}

static void rx_ipv4_plain(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	uint32_t port;
	size_t len;

	if (is_own_ip(sw, pi->dst_ip)) {
		sw->drops[INART_DROP_OTHER]++;
		return;
	}
	if (!inart_lpm_lookup(sw->tab->lpm, pi->dst_ip, &port) ||
	    port >= (uint32_t)sw->cfg.n_ports) {
		sw->drops[INART_DROP_NO_ROUTE]++;
		return;
	}
	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
		return;
	}
	o = out_next(c);
	if (o == NULL)
		return;
	len = fwd_copy(sw, frame, pi, (uint16_t)port, o->data);
	fix_ip_csum(o->data, pi);
	out_commit(c, o, (uint16_t)port, len);
}

static void rx_arp(struct rxctx *c, const struct inart_frame *in, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	size_t len;

	if (pi->arp_op != 1 || pi->arp_tpa == pi->arp_spa || inart_mac_is_zero(pi->arp_sha) ||
	    (pi->arp_sha[0] & 1)) {
		sw->drops[INART_DROP_OTHER]++;
		return;
	}
	o = out_next(c);
	if (o == NULL)
		return;
	len = inart_pkt_build_arp_reply(o->data, INART_FRAME_MAX, sw->cfg.ports[in->port].mac,
					pi->arp_tpa, pi->arp_sha, pi->arp_spa);
	out_commit(c, o, in->port, len);
}

/* Forward an INA packet along an UP entry (label rewrite, optional flag). */
static void ina_forward_up(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
			   const struct lent *e, uint8_t add_flags)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	uint8_t *ina;
	size_t len;

	o = out_next(c);
	if (o == NULL)
		return;
	len = fwd_copy(sw, frame, pi, e->out_port, o->data);
	ina = o->data + pi->l4_payload_off;
	ina[1] |= add_flags;
	inart_put_be32(ina + 12, e->next_label);
	inart_put_be16(o->data + pi->l4_payload_off - 2, 0); /* UDP checksum */
	fix_ip_csum(o->data, pi);
	out_commit(c, o, e->out_port, len);
}

static const uint64_t *expected_of(const struct inart_sw_tables *t, const struct lent *e)
{
	return t->exp + e->var;
}

/* The INA header of the chunk slot s holds (its key and contributors),
 * with flags; label and prev 0. */
static void slot_hdr(struct inart_wire_hdr *h, const struct inart_agg_slot *s, uint8_t flags)
{
	memset(h, 0, sizeof(*h));
	h->version = INART_WIRE_VERSION;
	h->flags = flags;
	h->bitmap_words = s->key.bitmap_words;
	h->scale_exp = s->key.scale_exp;
	h->job = s->key.job;
	h->tree = s->key.tree;
	h->fan_in = s->key.fan_in;
	h->iter = s->key.iter;
	h->seq = s->key.seq;
	h->slot = s->key.slot;
	h->count = s->key.count;
	memcpy(h->bitmap, s->bitmap, sizeof(h->bitmap));
}

/* Emit the aggregate in pool slot `slot` upward along entry e and stop
 * aggregating in it (the slot keeps the aggregate: INART_AGG_KEPT_SENT).
 * extra: INART_F_PARTIAL for a flush; INART_F_RETX to send a kept aggregate
 * again (the slot is not changed).  The aggregate's TTL is one less than its
 * contributions' smallest.  Returns 1 if emitted, 0 if no room (the slot
 * stays as it was). */
static int emit_slot(struct rxctx *c, int slot, const struct lent *e, uint8_t extra)
{
	struct inart_switch *sw = c->sw;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	const struct slot_meta *m = &sw->meta[slot];
	struct inart_wire_hdr h;
	struct inart_frame *o;
	uint8_t *ina, *ip;
	size_t hl, len;
	uint32_t src;

	o = out_next(c);
	if (o == NULL)
		return 0;
	slot_hdr(&h, s,
		 (uint8_t)(INART_F_DATA | extra | (m->flags & INART_F_OVERFLOW) |
			   (s->overflow ? INART_F_OVERFLOW : 0)));
	h.label = e->next_label;
	ina = o->data + INART_PKT_UDP_HLEN;
	hl = inart_wire_encode_hdr(&h, ina, INART_FRAME_MAX - INART_PKT_UDP_HLEN);
	if (hl == 0 || hl + 4 * (size_t)h.count > INART_FRAME_MAX - INART_PKT_UDP_HLEN) {
		/* cannot happen for a slot filled from valid packets */
		inart_agg_pool_release(sw->pool, slot);
		sw->drops[INART_DROP_WIRE]++;
		return 1;
	}
	if (extra & INART_F_RETX)
		inart_agg_pool_read(sw->pool, slot, ina + hl);
	else
		inart_agg_pool_take_keep(sw->pool, slot, ina + hl);
	src = sw->cfg.ports[e->out_port].ip ? sw->cfg.ports[e->out_port].ip : m->src_ip;
	len = inart_pkt_build_udp(o->data, INART_FRAME_MAX, sw->cfg.ports[e->out_port].mac,
				  peer_of(sw, e->out_port), src, m->dst_ip, m->sport,
				  INART_WIRE_UDP_PORT, ina, hl + 4 * (size_t)h.count);
	ip = o->data + INART_ETH_HLEN;
	ip[8] = (uint8_t)(m->ttl > 1 ? m->ttl - 1 : 1);
	inart_put_be16(ip + 10, 0);
	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, 20));
	out_commit(c, o, e->out_port, len);
	return 1;
}

static int key_eq(const struct inart_agg_key *a, const struct inart_agg_key *b)
{
	return a->job == b->job && a->label == b->label && a->iter == b->iter && a->seq == b->seq &&
	       a->tree == b->tree && a->fan_in == b->fan_in && a->slot == b->slot &&
	       a->count == b->count && a->bitmap_words == b->bitmap_words &&
	       a->scale_exp == b->scale_exp;
}

/* The progress record of rank r (bit b of word w) at aggregating entry e:
 * records exist for the expected ranks only, in rank order. */
static struct inart_rank_pos *rank_rec(const struct inart_sw_tables *t, const struct lent *e, int w,
				       int b)
{
	const uint64_t *x = expected_of(t, e);
	int k = 0;

	for (int i = 0; i < w; i++)
		k += __builtin_popcountll(x[i]);
	k += __builtin_popcountll(x[w] & (((uint64_t)1 << b) - 1));
	return &t->rk[e->rk_off + k];
}

/* The ranks of bits (all expected) sent chunk (iter, seq) along entry e at
 * now.  After the record following the ranks' (the entry's clock: the time
 * of its last note, split in two words) shows INART_SW_RESTART_IDLE_NS
 * without a note, the ranks' records are forgotten first (switch.h). */
static void ranks_note(const struct inart_sw_tables *t, const struct lent *e, const uint64_t *bits,
		       uint32_t iter, uint32_t seq, uint64_t now)
{
	const uint64_t *x = expected_of(t, e);
	struct inart_rank_pos *rk = &t->rk[e->rk_off], *clock;
	uint64_t last;
	int n = 0;

	for (int w = 0; w < e->bitmap_words; w++)
		n += __builtin_popcountll(x[w]);
	clock = &rk[n];
	last = (uint64_t)clock->iter << 32 | clock->pos;
	if (last != 0 && now - last >= INART_SW_RESTART_IDLE_NS)
		memset(rk, 0, sizeof(*rk) * (size_t)n);
	clock->iter = (uint32_t)(now >> 32);
	clock->pos = (uint32_t)now;
	for (int w = 0; w < e->bitmap_words; w++)
		for (uint64_t b = bits[w]; b; b &= b - 1)
			inart_progress_note(rank_rec(t, e, w, __builtin_ctzll(b)), iter, seq);
}

/* Every expected rank missing from busy slot `slot` of entry e is gone
 * (progress.h): waiting longer cannot complete it. */
static int slot_settled(const struct inart_switch *sw, int slot, const struct lent *e)
{
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	const uint64_t *x = expected_of(sw->tab, e);

	if (!s->busy || s->key.label != e->label)
		return 0;
	for (int w = 0; w < e->bitmap_words; w++)
		for (uint64_t m = x[w] & ~s->bitmap[w]; m; m &= m - 1)
			if (!inart_progress_gone(rank_rec(sw->tab, e, w, __builtin_ctzll(m)),
						 s->key.iter, s->key.seq, INART_SW_LOST_AFTER))
				return 0;
	return 1;
}

/* Flush slot (busy, entry e) as a partial aggregate now. */
static void flush_slot(struct rxctx *c, int slot, const struct lent *e,
		       struct inart_sw_tree_stats *ts)
{
	const struct inart_agg_slot *s = inart_agg_pool_slot(c->sw->pool, slot);
	int ovf = s->overflow || (c->sw->meta[slot].flags & INART_F_OVERFLOW);

	if (emit_slot(c, slot, e, INART_F_PARTIAL)) {
		ts->partial++;
		ts->early++;
		ts->overflows += ovf ? 1 : 0;
	}
}

/* The chunk INART_SW_LOST_AFTER before (iter, seq) in e's region, if its slot
 * still holds it and every rank it misses is gone: flush it. The slot of
 * seq - d is slot - d modulo the region (workers use slot = seq % slots with
 * slots = the region size; if not, the key check below fails and nothing
 * happens). */
static void flush_behind(struct rxctx *c, const struct inart_wire_hdr *h, const struct lent *e,
			 struct inart_sw_tree_stats *ts)
{
	const int d = INART_SW_LOST_AFTER;
	const struct inart_agg_slot *s;
	int slot;

	if (h->seq < (uint32_t)d)
		return;
	slot =
	    e->slot_base + (int)(((uint32_t)h->slot + (uint32_t)e->n_slots * d - d) % e->n_slots);
	s = inart_agg_pool_slot(c->sw->pool, slot);
	if (s->busy && s->key.label == e->label && s->key.iter == h->iter &&
	    s->key.seq == h->seq - d && slot_settled(c->sw, slot, e))
		flush_slot(c, slot, e, ts);
}

/* The slot of up entry u for chunk h (DOWN packets carry the chunk's slot
 * field), and whether it holds (kept or busy) that chunk of u's tree. */
static int chunk_slot(const struct inart_switch *sw, const struct lent *u,
		      const struct inart_wire_hdr *h, const struct inart_agg_slot **sp)
{
	int slot = u->slot_base + h->slot % u->n_slots;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);

	*sp = s;
	if ((!s->busy && s->kept == INART_AGG_KEPT_NONE) || s->key.label != u->label ||
	    s->key.job != h->job || s->key.tree != h->tree || s->key.iter != h->iter ||
	    s->key.seq != h->seq)
		return -1;
	return slot;
}

/* A probe travelling up: if the chunk's slot keeps its result, answer the
 * prober with it (RESULT|RETX, label 0, routed by IPv4 as if from the PS).
 * Returns 1 if answered. */
static int probe_answer(struct rxctx *c, const struct inart_pkt_info *pi,
			const struct inart_wire_hdr *h, const struct lent *e,
			struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const struct inart_agg_slot *s;
	int slot = chunk_slot(sw, e, h, &s);
	struct inart_wire_hdr r;
	struct inart_frame *o;
	uint32_t port;
	uint8_t *ina;
	size_t hl, len;

	if (slot < 0 || s->kept != INART_AGG_KEPT_RESULT || s->key.fan_in != h->fan_in ||
	    s->key.bitmap_words != h->bitmap_words)
		return 0;
	if (!inart_lpm_lookup(sw->tab->lpm, pi->src_ip, &port) || port >= (uint32_t)sw->cfg.n_ports)
		return 0;
	o = out_next(c);
	if (o == NULL)
		return 0;
	slot_hdr(&r, s, INART_F_RESULT | INART_F_RETX);
	r.prev = s->aux;
	ina = o->data + INART_PKT_UDP_HLEN;
	hl = inart_wire_encode_hdr(&r, ina, INART_FRAME_MAX - INART_PKT_UDP_HLEN);
	if (hl == 0 || hl + 4 * (size_t)r.count > INART_FRAME_MAX - INART_PKT_UDP_HLEN)
		return 0;
	inart_agg_pool_read(sw->pool, slot, ina + hl);
	len = inart_pkt_build_udp(o->data, INART_FRAME_MAX, sw->cfg.ports[port].mac,
				  peer_of(sw, (int)port), pi->dst_ip, pi->src_ip, pi->dport,
				  pi->sport, ina, hl + 4 * (size_t)r.count);
	if (len == 0)
		return 0;
	out_commit(c, o, (uint16_t)port, len);
	ts->answered++;
	return 1;
}

/* The identity of the chunk h is about, at the UP entry `label` (a slot
 * holds one chunk: docs/wire.md). */
static void chunk_key(struct inart_agg_key *key, const struct inart_wire_hdr *h, uint32_t label)
{
	key->job = h->job;
	key->label = label;
	key->iter = h->iter;
	key->seq = h->seq;
	key->tree = h->tree;
	key->fan_in = h->fan_in;
	key->slot = h->slot;
	key->count = h->count;
	key->bitmap_words = h->bitmap_words;
	key->scale_exp = h->scale_exp;
}

/* Every contributor bit of h is one the entry expects (x). */
static int bits_within(const struct inart_wire_hdr *h, const uint64_t *x)
{
	for (int w = 0; w < h->bitmap_words; w++)
		if (h->bitmap[w] & ~x[w])
			return 0;
	return 1;
}

/* A contribution (pi, h) went into slot (fresh: the slot's first): note its
 * addresses, flags and TTL; emit the aggregate if complete, flush it if the
 * ranks it misses are gone. */
static void absorbed(struct rxctx *c, int slot, const struct lent *e,
		     const struct inart_pkt_info *pi, const struct inart_wire_hdr *h, int complete,
		     int fresh, struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	struct slot_meta *m = &sw->meta[slot];

	ts->aggregated++;
	if (fresh) {
		m->src_ip = pi->src_ip;
		m->dst_ip = pi->dst_ip;
		m->sport = pi->sport;
		m->flags = 0;
		m->repaired = 0;
		m->ttl = pi->ttl;
	}
	m->flags |= h->flags & INART_F_OVERFLOW;
	if (pi->ttl < m->ttl)
		m->ttl = pi->ttl;
	if (complete) {
		int ovf =
		    inart_agg_pool_slot(sw->pool, slot)->overflow || (m->flags & INART_F_OVERFLOW);

		if (emit_slot(c, slot, e, 0)) {
			ts->emitted++;
			ts->overflows += ovf ? 1 : 0;
		}
		/* no room: the slot stays busy and is flushed by tick */
	} else if (slot_settled(sw, slot, e)) {
		/* the missing ranks are gone: do not wait for the timeout */
		flush_slot(c, slot, e, ts);
	}
}

static void rx_ina_up(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
		      const struct inart_wire_hdr *h, const uint8_t *payload, const struct lent *e,
		      struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const uint64_t *x;
	struct inart_agg_key key;
	int slot, rc, fresh;

	if (!(h->flags & INART_F_DATA)) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (e->aggregate && (h->flags & INART_F_NACK) && probe_answer(c, pi, h, e, ts))
		return;
	if (!e->aggregate || (h->flags & (INART_F_RETX | INART_F_NACK))) {
		ina_forward_up(c, frame, pi, e, 0);
		return;
	}
	if (h->bitmap_words != e->bitmap_words) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	x = expected_of(sw->tab, e);
	if (!bits_within(h, x)) {
		sw->drops[INART_DROP_BITS]++;
		return;
	}
	if (h->count > sw->max_values) {
		ts->fallback++;
		ina_forward_up(c, frame, pi, e, INART_F_FALLBACK);
		return;
	}
	chunk_key(&key, h, e->label);
	slot = e->slot_base + h->slot % e->n_slots;
	/* a fallback may overtake contributions of its ranks still held in a
	 * slot below: it says nothing about their progress */
	if (!(h->flags & INART_F_FALLBACK))
		ranks_note(sw->tab, e, h->bitmap, h->iter, h->seq, c->now);
	/* an older chunk this packet shows incomplete for good leaves first,
	 * so that it reaches the PS before the evidence does */
	flush_behind(c, h, e, ts);
	if (h->flags & INART_F_PARTIAL) {
		/* its sender stopped waiting: it joins the chunk's aggregate if
		 * one is open here, else goes on at once (never waits here) */
		const struct inart_agg_slot *v = inart_agg_pool_slot(sw->pool, slot);

		if (!v->busy || !key_eq(&v->key, &key)) {
			ina_forward_up(c, frame, pi, e, 0);
			return;
		}
	}
	rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload, x, c->now, &fresh);
	if (rc == INART_AGG_BUSY && slot_settled(sw, slot, e)) {
		/* the slot's chunk cannot complete any more: make room */
		flush_slot(c, slot, e, ts);
		if (!inart_agg_pool_slot(sw->pool, slot)->busy)
			rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload, x,
						   c->now, &fresh);
	}
	switch (rc) {
	case INART_AGG_ABSORBED:
	case INART_AGG_COMPLETE:
		absorbed(c, slot, e, pi, h, rc == INART_AGG_COMPLETE, fresh, ts);
		return;
	case INART_AGG_BUSY:
		ts->fallback++;
		ina_forward_up(c, frame, pi, e, INART_F_FALLBACK);
		return;
	case INART_AGG_DUPLICATE:
		ts->duplicates++;
		sw->drops[INART_DROP_DUPLICATE]++;
		return;
	default:
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
}

/* A NACK passing down: if the aggregate this switch last sent for the chunk
 * (kept in its slot) holds only ranks the PS misses, send it again upward
 * (RETX) and take its ranks out of the NACK (*bits), so that its workers
 * need not retransmit; if the slot still aggregates the chunk and holds a
 * rank the PS asks for, flush it now (partial) and take its ranks out.
 * Returns 1 if something was sent. */
static int nack_repair(struct rxctx *c, const struct inart_wire_hdr *h, const struct lent *u,
		       struct inart_sw_tree_stats *ts, uint64_t *bits)
{
	const struct inart_agg_slot *s;
	int slot = chunk_slot(c->sw, u, h, &s), w, any = 0;
	uint32_t round = inart_wire_nack_prev(h); /* without the held mark */

	if (slot < 0 || s->key.scale_exp != h->scale_exp || s->key.bitmap_words != h->bitmap_words)
		return 0;
	if (s->busy) {
		/* still waiting for others, holding ranks the PS asks for (none of
		 * the slot's ranks went up yet): send what is here now */
		uint64_t held[INART_WIRE_MAX_BITMAP_WORDS];

		for (w = 0; w < h->bitmap_words; w++)
			any |= (s->bitmap[w] & bits[w]) != 0;
		if (!any)
			return 0;
		memcpy(held, s->bitmap, sizeof(held));
		flush_slot(c, slot, u, ts);
		if (inart_agg_pool_slot(c->sw->pool, slot)->busy)
			return 0;
		for (w = 0; w < h->bitmap_words; w++)
			bits[w] &= ~held[w];
		c->sw->meta[slot].repaired = (uint8_t)(round < 255 ? round : 255);
		return 1;
	}
	for (w = 0; w < h->bitmap_words; w++) {
		if (s->bitmap[w] & ~bits[w])
			return 0; /* the PS has some of them: it would not take it */
		any |= s->bitmap[w] != 0;
	}
	if (s->kept != INART_AGG_KEPT_SENT)
		return 0;
	/* once per NACK round (copies of one NACK may pass several entries);
	 * every copy of the round leaves those ranks out */
	if (!any || (round > c->sw->meta[slot].repaired && !emit_slot(c, slot, u, INART_F_RETX)))
		return 0;
	for (w = 0; w < h->bitmap_words; w++)
		bits[w] &= ~s->bitmap[w];
	if (round <= c->sw->meta[slot].repaired)
		return 0;
	c->sw->meta[slot].repaired = (uint8_t)(round < 255 ? round : 255);
	ts->repaired++;
	return 1;
}

/* A clean result passing down: keep it in the chunk's slot (unless another
 * chunk aggregates there) to answer probes of workers that miss it. */
static void result_keep(struct inart_switch *sw, const struct inart_wire_hdr *h,
			const uint8_t *payload, const struct lent *u)
{
	int slot = u->slot_base + h->slot % u->n_slots;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	struct inart_agg_key key;

	if (s->busy) {
		if (s->key.label != u->label || s->key.iter != h->iter || s->key.seq != h->seq)
			return;
		/* late contributions of a chunk that is complete: useless */
		inart_agg_pool_release(sw->pool, slot);
	}
	chunk_key(&key, h, u->label);
	inart_agg_pool_keep_result(sw->pool, slot, &key, h->bitmap, payload, h->prev);
}

static void rx_ina_down(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
			const struct inart_wire_hdr *h, const uint8_t *payload,
			const struct lent *e, const struct lent *u, struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const struct inart_label_down *dn = sw->tab->dn + e->var;
	uint64_t bits[INART_WIRE_MAX_BITMAP_WORDS];
	int i, w, nack = (h->flags & (INART_F_NACK | INART_F_RETX)) == INART_F_NACK;

	if (!(h->flags & INART_F_RESULT)) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	memcpy(bits, h->bitmap, sizeof(bits));
	if (u != NULL && u->bitmap_words == h->bitmap_words) {
		if (nack) {
			uint64_t any = 0;

			nack_repair(c, h, u, ts, bits);
			for (w = 0; w < h->bitmap_words; w++)
				any |= bits[w];
			if (!any)
				return; /* every rank named is repaired here */
		} else if (!(h->flags &
			     (INART_F_NACK | INART_F_RETX | INART_F_OVERFLOW | INART_F_STALE)) &&
			   h->count > 0 && h->count <= sw->max_values) {
			result_keep(sw, h, payload, u);
		}
	}
	for (i = 0; i < e->n_down; i++) {
		const struct inart_label_down *d = &dn[i];
		struct inart_frame *o = out_next(c);
		size_t len;

		if (o == NULL)
			continue; /* each missing copy counted as OUT_FULL */
		len = fwd_copy(sw, frame, pi, d->port, o->data);
		inart_put_be32(o->data + pi->l4_payload_off + 12, d->label);
		if (nack)
			for (w = 0; w < h->bitmap_words; w++)
				inart_put_be64(o->data + pi->l4_payload_off + INART_WIRE_FIXED_LEN +
						   8 * w,
					       bits[w]);
		if (d->dst_ip != 0)
			inart_put_be32(o->data + pi->l3_off + 16, d->dst_ip);
		inart_put_be16(o->data + pi->l4_payload_off - 2, 0);
		fix_ip_csum(o->data, pi);
		out_commit(c, o, d->port, len);
		ts->results++;
	}
}

/* Ingress filtering of an INA packet from a host port (the first hop): DATA
 * must carry exactly the rank the installation gives the port's host in the
 * packet's job.  1 if it may go on. */
static int ingress_ok(struct inart_switch *sw, int port, const struct inart_wire_hdr *h)
{
	const struct inart_sw_tables *t = sw->tab;

	if (!(h->flags & INART_F_DATA))
		return 1; /* results are checked by the DOWN entry's in_ports, or by
			     their receiver (label 0) */
	for (int i = t->ing_off[port]; i < t->ing_off[port + 1]; i++) {
		if (t->ing[i].job != h->job)
			continue;
		for (int w = 0; w < h->bitmap_words; w++) {
			int r = t->ing[i].rank;
			uint64_t want = r / 64 == w ? (uint64_t)1 << (r % 64) : 0;

			if (h->bitmap[w] != want)
				return 0;
		}
		return t->ing[i].rank < 64 * h->bitmap_words;
	}
	return 0;
}

static void rx_ina(struct rxctx *c, const struct inart_frame *in, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	const struct inart_sw_tables *t = sw->tab;
	struct inart_wire_hdr h;
	const uint8_t *payload;
	const struct lent *e;
	int k;

	if (inart_wire_decode(in->data + pi->l4_payload_off, pi->l4_payload_len, &h, &payload) !=
	    INART_WIRE_OK) {
		sw->drops[INART_DROP_WIRE]++;
		return;
	}
	if (sw->cfg.ports[in->port].peer_ip != 0 && !ingress_ok(sw, in->port, &h)) {
		sw->drops[INART_DROP_RANK]++;
		return;
	}
	if (h.label == 0) {
		rx_ipv4_plain(c, in->data, pi);
		return;
	}
	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
		return;
	}
	k = inart_sw_tables_find(t, h.label);
	if (k < 0) {
		sw->drops[INART_DROP_NO_LABEL]++;
		return;
	}
	e = &t->ent[k];
	if (e->in_ports != 0 && !(e->in_ports >> in->port & 1)) {
		sw->drops[INART_DROP_INGRESS]++;
		return;
	}
	if (e->job != h.job || e->tree != h.tree) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (e->kind == INART_LABEL_UP)
		rx_ina_up(c, in->data, pi, &h, payload, e, &t->trees[e->tree_idx]);
	else
		rx_ina_down(c, in->data, pi, &h, payload, e,
			    e->up_of >= 0 ? &t->ent[e->up_of] : NULL, &t->trees[e->tree_idx]);
}

int inart_switch_rx(struct inart_switch *sw, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out)
{
	struct rxctx c = {sw, out, 0, max_out < 0 ? 0 : max_out, now_ns};
	struct inart_pkt_info pi;
	uint32_t host;

	if (sw == NULL || in == NULL || in->data == NULL)
		return 0;
	if (in->port >= sw->cfg.n_ports) {
		sw->drops[INART_DROP_MALFORMED]++;
		return 0;
	}
	sw->port_stats[in->port].rx_pkts++;
	sw->port_stats[in->port].rx_bytes += in->len;
	if (in->len > INART_FRAME_MAX || inart_pkt_parse(in->data, in->len, &pi) < 0) {
		sw->drops[INART_DROP_MALFORMED]++;
		return 0;
	}
	/* the first hop: a host sends from its own address (0 only in ARP
	 * probes) */
	host = sw->cfg.ports[in->port].peer_ip;
	if (host != 0 &&
	    ((pi.ethertype == INART_ETHERTYPE_IPV4 && pi.src_ip != host) ||
	     (pi.ethertype == INART_ETHERTYPE_ARP && pi.arp_spa != host && pi.arp_spa != 0))) {
		sw->drops[INART_DROP_SPOOFED]++;
		return 0;
	}
	if (!sw->peer_fixed[in->port] && !inart_mac_is_zero(pi.src_mac) && !(pi.src_mac[0] & 1)) {
		memcpy(sw->peer[in->port], pi.src_mac, 6);
		sw->peer_known[in->port] = 1;
	}
	if (pi.ethertype == INART_ETHERTYPE_IPV4 && pi.is_udp && pi.dport == INART_WIRE_UDP_PORT)
		sw->port_stats[in->port].rx_ina_bytes += in->len;
	if (pi.ethertype == INART_ETHERTYPE_ARP) {
		rx_arp(&c, in, &pi);
	} else if (pi.ethertype == INART_ETHERTYPE_IPV4) {
		if (pi.is_udp && pi.dport == INART_WIRE_UDP_PORT)
			rx_ina(&c, in, &pi);
		else
			rx_ipv4_plain(&c, in->data, &pi);
	} else {
		sw->drops[INART_DROP_OTHER]++;
	}
	return c.n;
}

uint64_t inart_switch_next_deadline(const struct inart_switch *sw)
{
	return inart_agg_pool_next_deadline(sw->pool);
}

int inart_switch_tick(struct inart_switch *sw, uint64_t now_ns, struct inart_frame *out,
		      int max_out)
{
	struct rxctx c = {sw, out, 0, max_out < 0 ? 0 : max_out, now_ns};
	const struct inart_sw_tables *t = sw->tab;
	int slot;

	while ((slot = inart_agg_pool_expired(sw->pool, now_ns)) >= 0) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
		const struct lent *e;
		struct inart_sw_tree_stats *ts;
		int k = inart_sw_tables_find(t, s->key.label), ovf, complete;

		if (k < 0) { /* cannot happen: a swap frees orphaned slots */
			inart_agg_pool_release(sw->pool, slot);
			continue;
		}
		if (c.n >= c.max)
			break; /* not counted: the flush waits for the next tick */
		e = &t->ent[k];
		ts = &t->trees[e->tree_idx];
		ovf = s->overflow || (sw->meta[slot].flags & INART_F_OVERFLOW);
		/* complete but not emitted by rx for lack of room: not partial */
		complete = memcmp(s->bitmap, expected_of(t, e), 8 * (size_t)e->bitmap_words) == 0;
		if (emit_slot(&c, slot, e, complete ? 0 : INART_F_PARTIAL)) {
			if (complete)
				ts->emitted++;
			else
				ts->partial++;
			ts->overflows += ovf ? 1 : 0;
		}
	}
	return c.n;
}

int inart_switch_lose_state(struct inart_switch *sw)
{
	int busy = inart_agg_pool_busy(sw->pool);

	inart_agg_pool_clear(sw->pool);
	return busy;
}

int inart_switch_slots_busy(const struct inart_switch *sw)
{
	return inart_agg_pool_busy(sw->pool);
}

int inart_switch_stats(const struct inart_switch *sw, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees)
{
	int i;

	if (drops != NULL)
		memcpy(drops, sw->drops, sizeof(sw->drops));
	if (ports != NULL)
		memcpy(ports, sw->port_stats, (size_t)sw->cfg.n_ports * sizeof(*ports));
	if (trees != NULL)
		for (i = 0; i < sw->tab->n_trees && i < max_trees; i++)
			trees[i] = sw->tab->trees[i];
	return sw->tab->n_trees;
}

const char *inart_switch_drop_name(int reason)
{
	static const char *const names[INART_DROP_N] = {
	    [INART_DROP_MALFORMED] = "malformed", [INART_DROP_WIRE] = "wire",
	    [INART_DROP_NO_LABEL] = "no_label",	  [INART_DROP_MISMATCH] = "mismatch",
	    [INART_DROP_BITS] = "bits",		  [INART_DROP_DUPLICATE] = "duplicate",
	    [INART_DROP_NO_ROUTE] = "no_route",	  [INART_DROP_TTL] = "ttl",
	    [INART_DROP_OUT_FULL] = "out_full",	  [INART_DROP_OTHER] = "other",
	    [INART_DROP_SPOOFED] = "spoofed",	  [INART_DROP_INGRESS] = "ingress",
	    [INART_DROP_RANK] = "rank",
	};

	if (reason < 0 || reason >= INART_DROP_N)
		return "unknown";
	return names[reason];
}

int inart_switch_get_labels(const struct inart_switch *sw, struct inart_label_entry *out, int max)
{
	return inart_sw_tables_labels(sw->tab, out, max);
}

int inart_switch_get_routes(const struct inart_switch *sw, struct inart_route *out, int max)
{
	return inart_sw_tables_routes(sw->tab, out, max);
}

int inart_switch_get_ingress(const struct inart_switch *sw, struct inart_sw_ingress *out, int max)
{
	return inart_sw_tables_ingress(sw->tab, out, max);
}

int inart_switch_peer_mac(const struct inart_switch *sw, int port, uint8_t mac[6])
{
	if (port < 0 || port >= sw->cfg.n_ports || !sw->peer_known[port])
		return -1;
	memcpy(mac, sw->peer[port], 6);
	return 0;
}
