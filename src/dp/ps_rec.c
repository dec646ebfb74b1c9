/*
 * ps_rec: the parameter server's chunk records and what it sends (not a
 * public interface): finding and starting a record, emitting a header or a
 * record's result down the tree or unicast, counting drops.  The pieces
 * both ps.c (the packet path) and ps_recovery.c (NACKs, probes, answers)
 * use, so that the calls go one way: ps.c -> ps_recovery.c -> ps_rec.c,
 * ps.c -> ps_rec.c.  State and invariants: ps_impl.h and ps.c.
 */
#include <errno.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/ps_impl.h"

/* The record of (iter, seq) (any iteration; one of an older generation is
 * made empty). */
struct rec *inart_ps_rec_get(struct tree *t, uint32_t iter, uint32_t seq)
{
	uint8_t *blk = t->blocks[iter & 1][seq / INART_PS_BLOCK_CHUNKS];
	struct rec *r = (struct rec *)(blk + (size_t)(seq % INART_PS_BLOCK_CHUNKS) * t->stride);

	if (r->gen != t->gen) {
		r->gen = t->gen;
		r->state = REC_EMPTY;
	}
	return r;
}

/* (Re)start record r for chunk h (open, empty), counting the open records
 * of the current iteration. */
void inart_ps_rec_start(struct tree *t, struct rec *r, const struct inart_wire_hdr *h)
{
	int was_open = r->state == REC_OPEN && r->iter == t->cur_iter;

	r->iter = h->iter;
	r->state = REC_OPEN;
	r->scale = h->scale_exp;
	r->flags = 0;
	r->count = h->count;
	r->slot = h->slot;
	r->nbits = 0;
	r->nack_lvl = 0;
	r->nack_ns = 0;
	r->ans_ns = r->remc_ns = r->touch_ns = 0;
	r->ans_ip = r->remc_ip = 0;
	r->remc_child = 0;
	r->prev = 0;
	memset(rec_bitmap(r), 0, 16 * (size_t)t->bw); /* bitmap and nacked */
	memset(rec_sums(r, t->bw), 0, 8 * (size_t)h->count);
	if (!was_open && r->iter == t->cur_iter)
		t->cur_open++;
}

/* The record of (iter, seq) if it is of this generation and belongs to
 * iter, else NULL. */
struct rec *inart_ps_rec_peek(const struct tree *t, uint32_t iter, uint32_t seq)
{
	const uint8_t *blk = t->blocks[iter & 1][seq / INART_PS_BLOCK_CHUNKS];
	struct rec *r = (struct rec *)(blk + (size_t)(seq % INART_PS_BLOCK_CHUNKS) * t->stride);

	return r->gen == t->gen && r->state != REC_EMPTY && r->iter == iter ? r : NULL;
}

/* Send header h (label and flags as given; vals: h->count host-order values)
 * to every child (to_children: one copy per child with its label and
 * address, port INART_WIRE_UDP_PORT) or as one unicast to (uc_ip, uc_port).
 * Returns datagrams emitted; copies that do not fit max_out are counted in
 * out_full. */
/* Which children copies towards the ranks in `ranks` (bw words; NULL:
 * every child) go to: the children those ranks were learned under (and the
 * other children with the same address), plus, if some rank's child is not
 * known, every child nothing was learned from (or every child, if all are
 * known).  sel: n_children flags. */
static void select_children(const struct tree *t, const uint64_t *ranks, uint8_t *sel)
{
	int nc = t->cfg.n_children, unknown = 0, any_unlearned = 0;

	memset(sel, ranks == NULL, (size_t)nc);
	if (ranks == NULL)
		return;
	for (int w = 0; w < t->bw; w++) {
		for (uint64_t b = ranks[w]; b; b &= b - 1) {
			int c = t->child_of[64 * w + __builtin_ctzll(b)];

			if (c == 0 || c > nc)
				unknown = 1;
			else
				sel[c - 1] = 1;
		}
	}
	for (int c = 0; c < nc; c++)
		any_unlearned |= !t->child_known[c];
	for (int c = 0; c < nc; c++) {
		if (unknown && (!t->child_known[c] || !any_unlearned)) {
			sel[c] = 1;
			continue;
		}
		if (sel[c] != 1)
			continue;
		for (int d = 0; d < nc; d++) /* the same node reached by another label */
			if (!sel[d] && t->cfg.children[d].ip == t->cfg.children[c].ip)
				sel[d] = 2;
	}
}

/* Send header h (label and flags as given; vals: h->count host-order values)
 * to the children selected for `ranks` (to_children; see select_children;
 * one copy per child with its label and address, port INART_WIRE_UDP_PORT)
 * or as one unicast to (uc_ip, uc_port).  Returns datagrams emitted; copies
 * that do not fit max_out are counted in out_full. */
int inart_ps_emit_hdr(struct inart_ps *ps, const struct tree *t, struct inart_wire_hdr *h,
		      const int32_t *vals, int to_children, const uint64_t *ranks, uint32_t uc_ip,
		      uint16_t uc_port, struct inart_dgram *out, int max_out)
{
	const struct inart_ps_child *ch = t->cfg.children;
	uint8_t sel[INART_PS_MAX_CHILDREN];
	int n = 0, want = 0;
	size_t len = 0;

	if (!to_children) {
		if (max_out < 1) {
			ps->st.out_full++;
			return 0;
		}
		h->version = INART_WIRE_VERSION;
		h->label = 0;
		len = inart_wire_encode(h, vals, out[0].data, INART_DGRAM_MAX);
		if (len == 0) /* cannot happen: the header is built from checked state */
			return 0;
		out[0].len = (uint16_t)len;
		out[0].peer_ip = uc_ip;
		out[0].peer_port = uc_port;
		return 1;
	}
	select_children(t, ranks, sel);
	h->version = INART_WIRE_VERSION;
	for (int c = 0; c < t->cfg.n_children; c++) {
		if (!sel[c])
			continue;
		want++;
		if (n >= max_out)
			continue;
		if (n == 0) {
			h->label = ch[c].label;
			len = inart_wire_encode(h, vals, out[0].data, INART_DGRAM_MAX);
			if (len == 0)
				return 0;
		} else {
			memcpy(out[n].data, out[0].data, len);
			inart_put_be32(out[n].data + 12, ch[c].label);
		}
		out[n].len = (uint16_t)len;
		out[n].peer_ip = ch[c].ip;
		out[n].peer_port = INART_WIRE_UDP_PORT;
		n++;
	}
	ps->st.out_full += (uint64_t)(want - n);
	return n;
}

/* Header of a packet about chunk (r->iter, seq) of tree t. */
static void hdr_of(const struct tree *t, const struct rec *r, uint32_t seq, uint8_t flags,
		   struct inart_wire_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->flags = flags;
	h->bitmap_words = (uint8_t)t->bw;
	h->scale_exp = r->scale;
	h->job = t->cfg.job;
	h->tree = t->cfg.tree;
	h->fan_in = t->cfg.fan_in;
	h->iter = r->iter;
	h->seq = seq;
	h->slot = r->slot;
}

/* Emit the result of record r (chunk seq) -- or, notice = 1, a scale notice
 * (chunk's bitmap, no values) -- to the children towards `ranks` (NULL:
 * all) or as one unicast RETX to (uc_ip, uc_port) with label 0.  Returns
 * datagrams emitted. */
int inart_ps_emit(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq,
		  int notice, int to_children, const uint64_t *ranks, uint32_t uc_ip,
		  uint16_t uc_port, struct inart_dgram *out, int max_out)
{
	const int64_t *sums = rec_sums(r, t->bw);
	struct inart_wire_hdr h;
	int n;

	hdr_of(t, r, seq,
	       (uint8_t)(INART_F_RESULT | (to_children ? 0 : INART_F_RETX) |
			 (notice ? INART_F_OVERFLOW : (r->flags & INART_F_OVERFLOW))),
	       &h);
	h.count = notice ? 0 : r->count;
	h.prev = notice ? 0 : r->prev;
	memcpy(h.bitmap, notice ? rec_bitmap(r) : t->full, 8 * (size_t)t->bw);
	if (!notice) {
		for (int i = 0; i < r->count; i++) {
			int64_t v = sums[i];

			ps->vals[i] = v > INT32_MAX   ? INT32_MAX
				      : v < INT32_MIN ? INT32_MIN
						      : (int32_t)v;
		}
	}
	n = inart_ps_emit_hdr(ps, t, &h, ps->vals, to_children, ranks, uc_ip, uc_port, out,
			      max_out);
	if (n == 0)
		return 0;
	if (notice)
		ps->st.notices++;
	else if (to_children)
		ps->st.results_sent += (uint64_t)n;
	else
		ps->st.retx_answered++;
	return n;
}

void inart_ps_drop(struct inart_ps *ps, uint64_t *reason)
{
	(*reason)++;
	ps->st.dropped++;
}

int inart_ps_bits_overlap(const uint64_t *a, const uint64_t *b, int bw)
{
	for (int i = 0; i < bw; i++)
		if (a[i] & b[i])
			return 1;
	return 0;
}
