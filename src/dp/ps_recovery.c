/*
 * ps_recovery: how the parameter server core finds and asks for what is
 * missing (docs/dataplane.md, Packet rules 13-15; docs/wire.md, Loss
 * recovery): per-rank progress along a tree (a rank is *gone* for a chunk
 * once a later chunk of it arrived), NACKs down the tree for records that
 * miss gone ranks and their repeated rounds, empty records for chunks lost
 * whole, the drain (the streams stopped), probes and the answers to askers
 * of complete records, and the held mark (a NACK naming a rank nothing shows
 * lost).
 *
 * Invariant: nothing here changes a record's bitmap or sums (NACKs, probes
 * and answers carry no values); it only reads records and writes the NACK
 * bookkeeping (rounds, times, the ring of NACKed records, answers' times).
 * The state lives in ps_impl.h, owned by ps.c.
 */
#include <string.h>

#include "dp/ps_impl.h"

/* The child (1 + index) the single rank of `asker` was learned under, 0 if
 * not known (copies towards it go to every child nothing was learned from,
 * or to all). */
static int asker_child(const struct tree *t, const uint64_t *asker)
{
	for (int w = 0; w < t->bw; w++)
		if (asker[w])
			return t->child_of[64 * w + __builtin_ctzll(asker[w])];
	return 0;
}

/* A worker without the result of a complete record asks (probe or data
 * retransmission).  The first asker gets a unicast answer; the same asker
 * again within the NACK loop time gets nothing (the answer is on its way);
 * another one within that time (several workers lost the result: a copy
 * lost high in the tree) makes the PS send the result down the tree once
 * more, towards the asker's child; askers under that child within that
 * time after it get nothing (the copy is on its way to them; their retries
 * come later), except the one that caused it (its copy was lost too);
 * askers under another child are treated as if it had not happened. */
int inart_ps_answer_done(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq,
			 const uint64_t *asker, uint32_t src_ip, uint16_t src_port, uint64_t now,
			 struct inart_dgram *out, int max_out)
{
	uint64_t hold = t->nack_rtt;
	int child = asker_child(t, asker), n;

	if (hold && r->remc_ns && now < r->remc_ns + hold &&
	    (r->remc_child == 0 || r->remc_child == child)) {
		if (src_ip != r->remc_ip) {
			ps->st.answers_held++;
			return 0;
		}
	} else if (hold && r->ans_ns && now < r->ans_ns + hold) {
		if (src_ip == r->ans_ip) {
			ps->st.answers_held++;
			return 0;
		}
		n = inart_ps_emit(ps, t, r, seq, 0, 1, asker, 0, 0, out, max_out);
		if (n > 0) {
			r->remc_ns = now;
			r->remc_ip = src_ip;
			r->remc_child = (uint16_t)child;
			ps->st.resent_down++;
		}
		return n;
	}
	r->ans_ns = now;
	r->ans_ip = src_ip;
	return inart_ps_emit(ps, t, r, seq, 0, 0, NULL, src_ip, src_port, out, max_out);
}

/* A NACK for chunk (iter, seq) at scale: RESULT|NACK with bitmap `ranks`
 * (bw words), no values; to every child (the ranks retransmit), prev = the
 * NACK's round for the record (switches repair once per round), or, as the
 * answer to a probe, unicast with RETX (ranks = every rank missing), prev =
 * the head of the tree's result chain (the prober finds the results it
 * missed from there).  `held` (INART_WIRE_NACK_HELD or 0) is ORed into prev:
 * set, nothing shows the ranks named (the prober's, in an answer) lost. */
static int emit_nack(struct inart_ps *ps, const struct tree *t, uint32_t iter, uint32_t seq,
		     uint16_t slot, int8_t scale, const uint64_t *ranks, uint32_t round,
		     uint32_t held, int to_children, uint32_t uc_ip, uint16_t uc_port,
		     struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr h;
	int n;

	memset(&h, 0, sizeof(h));
	h.flags = (uint8_t)(INART_F_RESULT | INART_F_NACK | (to_children ? 0 : INART_F_RETX));
	h.bitmap_words = (uint8_t)t->bw;
	h.scale_exp = scale;
	h.job = t->cfg.job;
	h.tree = t->cfg.tree;
	h.fan_in = t->cfg.fan_in;
	h.iter = iter;
	h.seq = seq;
	h.slot = slot;
	h.prev = (to_children ? round : t->chain_iter == iter ? t->chain_last : 0) | held;
	memcpy(h.bitmap, ranks, 8 * (size_t)t->bw);
	n = inart_ps_emit_hdr(ps, t, &h, NULL, to_children, ranks, uc_ip, uc_port, out, max_out);
	if (n > 0) {
		if (to_children)
			ps->st.nacks += (uint64_t)n;
		else
			ps->st.probe_nacks++;
	}
	return n;
}

/* Rank r's contribution to chunk (iter, seq) will not arrive along the tree
 * any more (progress.h). */
static int rank_gone(const struct tree *t, int r, uint32_t iter, uint32_t seq)
{
	return inart_progress_gone(&t->rk[r], iter, seq, INART_PS_LOST_AFTER);
}

/* The ranks record r (chunk c of iter) misses whose contributions are gone
 * into lost (bw words); 1 if any. */
static int lost_ranks(const struct tree *t, struct rec *r, uint32_t iter, uint32_t c,
		      uint64_t *lost)
{
	const uint64_t *bm = rec_bitmap(r);
	uint64_t any = 0;

	for (int w = 0; w < t->bw; w++) {
		lost[w] = 0;
		for (uint64_t m = t->full[w] & ~bm[w]; m; m &= m - 1) {
			int b = __builtin_ctzll(m);

			if (rank_gone(t, 64 * w + b, iter, c))
				lost[w] |= (uint64_t)1 << b;
		}
		any |= lost[w];
	}
	return any != 0;
}

/* Chunk c of h->iter, of which nothing arrived, if some rank is gone
 * already (the whole chunk was lost, e.g. an aggregate of every rank): an
 * empty open record, so that it can be NACKed; its count, scale and slot
 * are taken from the first contribution absorbed (see rx_data).  The slot
 * named in its NACKs is h's minus the distance (switches check the chunk
 * in the slot, so a wrong guess only prevents a repair there). */
static struct rec *placeholder(struct tree *t, const struct inart_wire_hdr *h, uint32_t c)
{
	struct rec *r;
	int any = 0;

	for (int w = 0; w < t->bw && !any; w++)
		for (uint64_t m = t->full[w]; m && !any; m &= m - 1)
			any = rank_gone(t, 64 * w + __builtin_ctzll(m), h->iter, c);
	/* workers send a tree's chunks in order from 0: the chunk before
	 * exists unless c is the first */
	if (!any || (c > 0 && inart_ps_rec_peek(t, h->iter, c - 1) == NULL))
		return NULL;
	r = inart_ps_rec_get(t, h->iter, c);
	inart_ps_rec_start(t, r, h);
	r->count = 0;
	r->slot = (uint16_t)(h->slot - (h->seq - c));
	return r;
}

static void pend_pop(struct tree *t)
{
	t->pend_head = (t->pend_head + 1) % NACK_PENDING;
	t->pend_n--;
}

static void pend_push(struct tree *t, uint32_t iter, uint32_t seq)
{
	int i;

	if (t->pend_n == NACK_PENDING)
		pend_pop(t); /* the oldest is left to the workers' timers */
	i = (t->pend_head + t->pend_n++) % NACK_PENDING;
	t->pend_iter[i] = iter;
	t->pend_seq[i] = seq;
}

/* After a packet of chunk (iter, seq) arrived along the tree at now: if the
 * record of seq, or the one INART_PS_LOST_AFTER chunks behind, is open and
 * misses ranks that are gone, a NACK naming those not named yet goes to
 * every child (replicated down the tree; the named workers retransmit).  Then the oldest NACKed
 * record still open gets its NACK repeated (all its lost ranks) if twice the
 * NACK-to-retransmission time passed since its last NACK. */
int inart_ps_nack_check(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
			uint64_t now, struct inart_dgram *out, int max_out)
{
	uint64_t lost[INART_WIRE_MAX_BITMAP_WORDS];
	uint32_t iter = h->iter, seq = h->seq;
	struct rec *r;
	int n = 0;

	/* the record the packet joined (a late partial whose missing ranks are
	 * gone already), then the one the packet is evidence for */
	for (int k = 0; k < 2; k++) {
		uint32_t c = seq - (k ? INART_PS_LOST_AFTER : 0);
		uint64_t *nk, any = 0;

		if (k && seq < INART_PS_LOST_AFTER)
			break;
		r = inart_ps_rec_peek(t, iter, c);
		if (r == NULL && k)
			r = placeholder(t, h, c);
		if (r == NULL || r->state != REC_OPEN || !lost_ranks(t, r, iter, c, lost))
			continue;
		nk = rec_nacked(r, t->bw);
		for (int w = 0; w < t->bw; w++) {
			lost[w] &= ~nk[w];
			nk[w] |= lost[w];
			any |= lost[w];
		}
		if (!any)
			continue;
		if (r->nack_lvl == 0) {
			r->nack_lvl = 1;
			pend_push(t, iter, c);
		}
		r->nack_ns = now;
		n += emit_nack(ps, t, iter, c, r->slot, r->scale, lost, r->nack_lvl, 0, 1, 0, 0,
			       out + n, max_out - n);
	}
	while (t->pend_n > 0) {
		int i = t->pend_head;
		uint32_t pi = t->pend_iter[i], pc = t->pend_seq[i];

		r = inart_ps_rec_peek(t, pi, pc);
		if (r == NULL || r->state != REC_OPEN || !lost_ranks(t, r, pi, pc, lost)) {
			pend_pop(t);
			continue;
		}
		if (t->nack_rtt == 0 || now < r->nack_ns + 2 * t->nack_rtt)
			break;
		pend_pop(t);
		r->nack_ns = now;
		if (r->nack_lvl < 255)
			r->nack_lvl++;
		if (r->nack_lvl < NACK_ROUNDS)
			pend_push(t, pi, pc);
		for (int w = 0; w < t->bw; w++)
			rec_nacked(r, t->bw)[w] |= lost[w];
		n += emit_nack(ps, t, pi, pc, r->slot, r->scale, lost, r->nack_lvl, 0, 1, 0, 0,
			       out + n, max_out - n);
		break;
	}
	return n;
}

/* No DATA came along the tree for INART_PS_DRAIN_GAPS smoothed gaps between
 * them (any time after the first, before a gap was measured): the workers'
 * streams stopped (the end of an all-reduce, or every window stuck), so a
 * contribution still missing will not come by itself: it was lost or waits
 * in a switch's slot. */
static int drained(const struct tree *t, uint64_t now)
{
	return t->data_ns != 0 && now > t->data_ns + INART_PS_DRAIN_GAPS * t->data_gap;
}

/* A worker waits for open record r (chunk seq): if its last NACK had time
 * to be acted on (the NACK loop time), send a new NACK round down the tree
 * now, naming the ranks it misses that are gone (a NACK or retransmission
 * was lost) or, if nothing arrived for the record for a NACK loop time or
 * the tree is drained (the end of an all-reduce: no later chunk shows who
 * is gone), every rank it misses (also for the first round before any NACK
 * loop was timed).
 * Switches on the way flush what they hold for the chunk or send their kept
 * aggregates again; the workers named retransmit. */
static int renack(struct inart_ps *ps, struct tree *t, struct rec *r, uint32_t iter, uint32_t seq,
		  uint64_t now, struct inart_dgram *out, int max_out)
{
	uint64_t lost[INART_WIRE_MAX_BITMAP_WORDS], held[INART_WIRE_MAX_BITMAP_WORDS];
	uint64_t any_held = 0;
	int any_lost;

	if (r->nack_lvl >= NACK_ROUNDS || (t->nack_rtt == 0 && r->nack_lvl > 0) ||
	    now < r->nack_ns + t->nack_rtt)
		return 0;
	any_lost = lost_ranks(t, r, iter, seq, lost);
	/* (always before any loop time was measured) */
	if (now >= r->touch_ns + t->nack_rtt || drained(t, now)) {
		/* the others missing too, and the NACK is marked held: nothing
		 * shows them lost (a stalled switch or worker may hold them);
		 * switches holding them flush, their workers pay a resend from
		 * their credit */
		for (int w = 0; w < t->bw; w++) {
			held[w] = t->full[w] & ~rec_bitmap(r)[w] & ~lost[w];
			any_held |= held[w];
		}
	}
	if (!any_lost && !any_held)
		return 0;
	if (r->nack_lvl == 0)
		pend_push(t, iter, seq);
	r->nack_lvl++;
	r->nack_ns = now;
	for (int w = 0; w < t->bw; w++)
		rec_nacked(r, t->bw)[w] |= lost[w] | (any_held ? held[w] : 0);
	/* one NACK for both kinds (a second would cost as many frames again on
	 * the PS's links): marked held if a rank named may be held */
	for (int w = 0; w < t->bw && any_held; w++)
		lost[w] |= held[w];
	return emit_nack(ps, t, iter, seq, r->slot, r->scale, lost, r->nack_lvl,
			 any_held ? INART_WIRE_NACK_HELD : 0, 1, 0, 0, out, max_out);
}

/* A probe of chunk h->seq arrived while the tree is drained: once per drain
 * (the first probe after the last DATA), a NACK round for every other open
 * record of the newest iteration that may have one now (renack: every rank
 * it misses), so that the losses of the last chunks are all asked for in one
 * round trip instead of one probe each.  Returns datagrams emitted. */
int inart_ps_drain_sweep(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
			 uint64_t now, struct inart_dgram *out, int max_out)
{
	int n = 0;

	if (!drained(t, now) || t->sweep_ns > t->data_ns || t->hi_iter != h->iter)
		return 0;
	t->sweep_ns = now;
	for (uint32_t c = 0; c < t->hi_pos && n < max_out; c++) {
		struct rec *r = inart_ps_rec_peek(t, h->iter, c);

		if (r == NULL || r->state != REC_OPEN || c == h->seq)
			continue;
		n += renack(ps, t, r, h->iter, c, now, out + n, max_out - n);
	}
	return n;
}

/* INART_WIRE_NACK_HELD if nothing shows the prober's contribution to chunk
 * (h->iter, h->seq) lost (no later chunk of its rank arrived along the tree:
 * it may be queued, or held in a switch's slot or a stalled process), else
 * 0: the answer to its probe says which. */
static uint32_t prober_held(const struct tree *t, const struct inart_wire_hdr *h)
{
	for (int w = 0; w < t->bw; w++)
		if (h->bitmap[w])
			return rank_gone(t, 64 * w + __builtin_ctzll(h->bitmap[w]), h->iter, h->seq)
				   ? 0
				   : INART_WIRE_NACK_HELD;
	return 0;
}

/* A probe (DATA|RETX|NACK, header only) from a worker without the result of
 * chunk (iter, seq): the result if complete, else a unicast NACK naming every
 * rank the record misses (the prober learns whether its contribution is
 * counted); scale differences as for retransmissions.  Never changes state. */
int inart_ps_probe(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		   uint32_t src_ip, uint16_t src_port, uint64_t now, struct inart_dgram *out,
		   int max_out)
{
	struct rec *r = inart_ps_rec_peek(t, h->iter, h->seq);
	uint64_t miss[INART_WIRE_MAX_BITMAP_WORDS];
	int n;

	ps->st.probes++;
	if (r == NULL || (r->state == REC_OPEN && r->nbits == 0))
		return emit_nack(ps, t, h->iter, h->seq, h->slot, h->scale_exp, h->bitmap, 0,
				 prober_held(t, h), 0, src_ip, src_port, out, max_out);
	if (h->scale_exp > r->scale)
		return inart_ps_emit(ps, t, r, h->seq, r->state != REC_DONE, 0, NULL, src_ip,
				     src_port, out, max_out);
	if (h->scale_exp < r->scale) {
		if (r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW)) {
			inart_ps_drop(ps, &ps->st.drop_stale);
			return 0;
		}
		/* the record is at a scale the prober left: its data will restart it */
		return emit_nack(ps, t, h->iter, h->seq, h->slot, h->scale_exp, h->bitmap, 0, 0, 0,
				 src_ip, src_port, out, max_out);
	}
	if (r->state == REC_DONE)
		return inart_ps_answer_done(ps, t, r, h->seq, h->bitmap, src_ip, src_port, now, out,
					    max_out);
	n = renack(ps, t, r, h->iter, h->seq, now, out, max_out);
	for (int w = 0; w < t->bw; w++)
		miss[w] = t->full[w] & ~rec_bitmap(r)[w];
	return n + emit_nack(ps, t, h->iter, h->seq, r->slot, r->scale, miss, 0,
			     inart_ps_bits_overlap(miss, h->bitmap, t->bw) ? prober_held(t, h) : 0,
			     0, src_ip, src_port, out + n, max_out - n);
}