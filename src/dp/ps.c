/*
 * ps: the parameter server core (sans I/O), see ps.h and docs/dataplane.md.
 * This file holds the packet path that changes the chunk records
 * (aggregation state); ps_rec.c the records and emission, which this file
 * and ps_recovery.c both use; ps_tree.c the table of trees and their memory;
 * ps_recovery.c holds loss detection and
 * recovery (NACKs, probes, answers, the held mark); ps_impl.h their shared
 * state.
 *
 * State: trees in an array indexed by an open-addressing hash of (job,
 * tree).  Per tree, chunk records for the current and the previous iteration
 * live in two tables (index iter & 1) of lazily allocated blocks of
 * INART_PS_BLOCK_CHUNKS records; a record belongs to the iteration stored in
 * it, so moving to a new iteration needs no clearing (a record of another
 * iteration is simply re-initialized on first use).  A record: header
 * (with the NACK round and times, the chain link and the answers' bookkeeping),
 * bitmap (bw words), ranks NACKed (bw words), int64 sums (vmax values).  Per
 * tree also each rank's progress along the tree and the child it came from,
 * the result chain's head, the NACK loop time, a ring of NACKed records, and
 * the time and smoothed gap of DATA arrivals (drained: the streams stopped).
 *
 * Invariants: a record's bitmap is the union of the disjoint bitmaps of the
 * packets absorbed since the record was (re)started, and its sums are their
 * values' sums, all at the record's scale; nbits = popcount(bitmap); a record
 * is DONE exactly when nbits == fan_in, and a DONE record never changes
 * except by a restart at a lower scale after an OVERFLOW result.  int64
 * sums cannot overflow: at most fan_in <= 1024 disjoint packets are
 * absorbed, each value within int32.  NACKs, probes and answers never
 * change sums; an empty record (a wholly lost chunk, NACKed) holds no rank.
 *
 * Ownership: the PS owns trees and blocks; no allocation on the packet path
 * once a block exists (the first packet reaching a block allocates it).
 */
#include "dp/ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/progress.h"
#include "dp/quant.h"

#include "dp/ps_impl.h"

/* Learn that the ranks of h came from the child at address src (if it is
 * one). */
static void learn_children(struct tree *t, const struct inart_wire_hdr *h, uint32_t src)
{
	int c = -1;

	if (src == t->learn_ip && t->learn_child) {
		c = t->learn_child - 1;
	} else {
		for (int k = 0; k < t->cfg.n_children; k++) {
			if (t->cfg.children[k].ip == src) {
				c = k;
				break;
			}
		}
		t->learn_ip = src;
		t->learn_child = c + 1;
	}
	if (c < 0)
		return;
	t->child_known[c] = 1;
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h->bitmap[w]; b; b &= b - 1)
			t->child_of[64 * w + __builtin_ctzll(b)] = (uint16_t)(c + 1);
}

static int bits_count(const uint64_t *a, int bw)
{
	int n = 0;

	for (int i = 0; i < bw; i++)
		n += __builtin_popcountll(a[i]);
	return n;
}

static void absorb(const struct tree *t, struct rec *r, const struct inart_wire_hdr *h,
		   const uint8_t *payload)
{
	uint64_t *bm = rec_bitmap(r);
	int64_t *sums = rec_sums(r, t->bw);

	for (int i = 0; i < t->bw; i++)
		bm[i] |= h->bitmap[i];
	r->nbits = (uint16_t)(r->nbits + bits_count(h->bitmap, t->bw));
	for (int i = 0; i < h->count; i++)
		sums[i] += (int32_t)inart_get_be32(payload + 4 * (size_t)i);
	r->flags |= h->flags & INART_F_OVERFLOW;
}

/* a contains b (and, as the caller checked, b is not empty) */
static int bits_superset(const uint64_t *a, const uint64_t *b, int bw)
{
	for (int i = 0; i < bw; i++)
		if ((a[i] & b[i]) != b[i])
			return 0;
	return 1;
}

/* Replace the record's contributions by the packet's (a superset of them);
 * the OVERFLOW mark is kept (conservative). */
static void replace(const struct tree *t, struct rec *r, const struct inart_wire_hdr *h,
		    const uint8_t *payload)
{
	uint8_t flags = r->flags;

	memset(rec_bitmap(r), 0, 8 * (size_t)t->bw);
	memset(rec_sums(r, t->bw), 0, 8 * (size_t)r->count);
	r->nbits = 0;
	absorb(t, r, h, payload);
	r->flags |= flags;
}

static void complete(struct tree *t, struct rec *r)
{
	const int64_t *sums = rec_sums(r, t->bw);

	if (r->state == REC_OPEN && r->iter == t->cur_iter && t->cur_open > 0)
		t->cur_open--;
	r->state = REC_DONE;
	for (int i = 0; i < r->count; i++)
		if (sums[i] > INT32_MAX || sums[i] < INT32_MIN) {
			r->flags |= INART_F_OVERFLOW;
			break;
		}
}

/* Note that the ranks of h->bitmap contributed chunk (iter, seq) along the
 * tree (progress.h). */
static void ranks_note(struct tree *t, const struct inart_wire_hdr *h)
{
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h->bitmap[w]; b; b &= b - 1)
			inart_progress_note(&t->rk[64 * w + __builtin_ctzll(b)], h->iter, h->seq);
}

/* DATA of chunk (h->iter, h->seq) arrived along the tree at now (not a
 * retransmission): time the gaps between such arrivals (a stall counts at
 * most twice the current estimate) and note the newest chunk. */
static void data_note(struct tree *t, const struct inart_wire_hdr *h, uint64_t now)
{
	if (t->data_ns && now > t->data_ns) {
		uint64_t g = now - t->data_ns;

		if (t->data_gap && g > 2 * t->data_gap)
			g = 2 * t->data_gap;
		t->data_gap = t->data_gap ? (7 * t->data_gap + g) / 8 : g;
	}
	t->data_ns = now;
	if (t->hi_iter != h->iter && (int32_t)(h->iter - t->hi_iter) > 0) {
		t->hi_iter = h->iter;
		t->hi_pos = 0;
	}
	if (t->hi_iter == h->iter && h->seq + 1 > t->hi_pos)
		t->hi_pos = h->seq + 1;
}

/* A contribution (any DATA but a probe) of tree t; the checks common to all
 * packets are done. */
static int rx_data(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		   const uint8_t *payload, uint32_t src_ip, uint16_t src_port, uint64_t now,
		   struct inart_dgram *out, int max_out)
{
	struct rec *r;
	int retx, ask;

	r = inart_ps_rec_get(t, h->iter, h->seq);
	if (r->state == REC_EMPTY || r->iter != h->iter) {
		inart_ps_rec_start(t, r, h);
	} else if (r->state == REC_OPEN && r->nbits == 0) {
		/* an empty record (NACKed before anything arrived): the first
		 * contribution sets the chunk's count, scale and slot */
		r->scale = h->scale_exp;
		r->count = h->count;
		r->slot = h->slot;
		r->flags = 0;
		memset(rec_sums(r, t->bw), 0, 8 * (size_t)h->count);
	} else if (h->count != r->count) {
		inart_ps_drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	/* a worker's retransmission (label 0); a switch's repair of a lost
	 * aggregate travels the tree (label set) and is never answered, nor is
	 * one that reaches the PS with label 0 from the last hop's entry: only a
	 * single rank (a worker sends its own) is answered */
	retx = (h->flags & INART_F_RETX) != 0 && h->label == 0;
	ask = retx && bits_count(h->bitmap, t->bw) == 1;
	if (h->scale_exp < r->scale) {
		if (r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW)) {
			/* no worker lowers its scale below a clean result */
			inart_ps_drop(ps, &ps->st.drop_stale);
			return 0;
		}
		inart_ps_rec_start(t, r, h);
		ps->st.rescales++;
	} else if (h->scale_exp > r->scale) {
		if (!(h->flags & INART_F_RETX)) {
			inart_ps_drop(ps, &ps->st.drop_stale);
			return 0;
		}
		if (!ask)
			return 0; /* a repair at a scale the chunk left */
		/* the sender missed a rescale: tell it the chunk's scale */
		return inart_ps_emit(ps, t, r, h->seq, r->state != REC_DONE, 0, NULL, src_ip,
				     src_port, out, max_out);
	}
	if (r->state == REC_DONE) {
		ps->st.duplicates++;
		return ask ? inart_ps_answer_done(ps, t, r, h->seq, h->bitmap, src_ip, src_port,
						  now, out, max_out)
			   : 0;
	}
	if (inart_ps_bits_overlap(rec_bitmap(r), h->bitmap, t->bw)) {
		if (!bits_superset(h->bitmap, rec_bitmap(r), t->bw)) {
			ps->st.duplicates++;
			return 0;
		}
		/* the packet counts every contributor the chunk has and more
		 * (a partial aggregate arriving after some retransmissions):
		 * it replaces them */
		replace(t, r, h, payload);
		ps->st.replaced++;
	} else {
		absorb(t, r, h, payload);
	}
	r->touch_ns = now;
	if (retx && r->nack_ns != 0 && now > r->nack_ns &&
	    bits_superset(rec_nacked(r, t->bw), h->bitmap, t->bw)) {
		/* a retransmission a NACK asked for: time the NACK loop (up
		 * fast, down slowly: a repeat NACK before the retransmissions
		 * could arrive only makes duplicates) */
		uint64_t d = now - r->nack_ns;

		if (d > t->nack_rtt)
			t->nack_rtt = t->nack_rtt ? (t->nack_rtt + d) / 2 : d;
		else
			t->nack_rtt = (7 * t->nack_rtt + d) / 8;
	}
	ps->st.absorbed++;
	if (r->nbits < t->cfg.fan_in)
		return 0;
	complete(t, r);
	ps->st.completed++;
	if (r->flags & INART_F_OVERFLOW)
		ps->st.overflows++;
	r->prev = t->chain_last != 0 && t->chain_iter == h->iter ? t->chain_last : 0;
	t->chain_iter = h->iter;
	t->chain_last = h->seq + 1;
	return inart_ps_emit(ps, t, r, h->seq, 0, 1, NULL, 0, 0, out, max_out);
}

/* The source entry of address ip, or NULL. */
static const struct inart_ps_source *source_of(struct tree *t, uint32_t ip)
{
	int lo = 0, hi = t->n_src - 1;

	if (t->src_idx >= 0 && t->src_ip == ip)
		return &t->src[t->src_idx];
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (t->src[mid].ip == ip) {
			t->src_ip = ip;
			t->src_idx = mid;
			return &t->src[mid];
		}
		if (t->src[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* May h come from src?  *worker = 1 if the sender is the worker of the
 * packet's single rank (it gets step notices). */
static int source_ok(struct tree *t, const struct inart_wire_hdr *h, uint32_t src, int *worker)
{
	const struct inart_ps_source *s;
	int single = bits_count(h->bitmap, t->bw) == 1;

	*worker = single;
	if (t->n_src == 0)
		return 1;
	s = source_of(t, src);
	if (s == NULL)
		return 0;
	if (s->rank == INART_PS_ANY_RANK) {
		*worker = 0;
		return 1;
	}
	return single && (h->bitmap[s->rank / 64] >> (s->rank % 64) & 1);
}

/* The step a worker of rank r out of step resynchronises to: the current
 * iteration while it is being collected and r sent nothing of it, else the
 * next one. */
static uint32_t step_target(const struct tree *t, int r)
{
	if (t->cur_open > 0 && !(t->last_any[r] && t->last_iter[r] == t->cur_iter))
		return t->cur_iter;
	return t->cur_iter + 1;
}

/* A step notice to the worker of h's (single) rank: RESULT|STALE, header
 * only, h's chunk, prev = the step to resynchronise to. */
static int emit_stale(struct inart_ps *ps, const struct tree *t, const struct inart_wire_hdr *h,
		      uint32_t src_ip, uint16_t src_port, struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr n;
	int r = 0;

	for (int w = 0; w < t->bw; w++)
		if (h->bitmap[w]) {
			r = 64 * w + __builtin_ctzll(h->bitmap[w]);
			break;
		}
	memset(&n, 0, sizeof(n));
	n.flags = INART_F_RESULT | INART_F_STALE | INART_F_RETX;
	n.bitmap_words = (uint8_t)t->bw;
	n.scale_exp = h->scale_exp;
	n.job = t->cfg.job;
	n.tree = t->cfg.tree;
	n.fan_in = t->cfg.fan_in;
	n.iter = h->iter;
	n.seq = h->seq;
	n.slot = h->slot;
	n.prev = step_target(t, r);
	memcpy(n.bitmap, h->bitmap, 8 * (size_t)t->bw);
	if (inart_ps_emit_hdr(ps, t, &n, NULL, 0, NULL, src_ip, src_port, out, max_out) == 0)
		return 0;
	ps->st.step_notices++;
	return 1;
}

/* h's iteration is older than the tree's and the window refuses it (a step
 * notice for a worker): cur - 2 or older, or a cur - 1 chunk not complete
 * and clean. */
static int out_of_step(const struct tree *t, const struct inart_wire_hdr *h)
{
	int32_t d = (int32_t)(h->iter - t->cur_iter);
	const struct rec *r;

	if (d >= 0)
		return 0;
	if (d < -1)
		return 1;
	r = inart_ps_rec_peek(t, h->iter, h->seq);
	return r == NULL || r->state != REC_DONE || (r->flags & INART_F_OVERFLOW);
}

/* The acceptance window (ps.h): 1 if h may go on (cur advanced if h is the
 * next iteration), else 0 with the packet counted as dropped and, to a
 * worker, a step notice in out (*n). */
static int step_check(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		      int worker, uint32_t src_ip, uint16_t src_port, struct inart_dgram *out,
		      int max_out, int *n)
{
	int32_t d;

	*n = 0;
	if (!t->have_iter) {
		t->have_iter = 1;
		t->cur_iter = h->iter;
		t->cur_open = 0;
		return 1;
	}
	d = (int32_t)(h->iter - t->cur_iter);
	if (d == 0)
		return 1;
	if (d == 1) {
		t->cur_iter = h->iter;
		t->cur_open = 0;
		return 1;
	}
	if (d == -1) {
		const struct rec *r = inart_ps_rec_peek(t, h->iter, h->seq);

		/* results of the previous iteration are still served; an
		 * incomplete record of it can never complete (some rank moved on) */
		if (r != NULL && r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW))
			return 1;
	}
	inart_ps_drop(ps, d > 0 ? &ps->st.drop_window : &ps->st.drop_stale);
	if (worker)
		*n = emit_stale(ps, t, h, src_ip, src_port, out, max_out);
	return 0;
}

int inart_ps_rx(struct inart_ps *ps, const uint8_t *data, size_t len, uint32_t src_ip,
		uint16_t src_port, uint64_t now_ns, struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr h;
	const uint8_t *payload;
	struct tree *t;
	int ti, n, nack, worker;

	if (ps == NULL)
		return 0;
	if (out == NULL || max_out < 0)
		max_out = 0;
	ps->st.rx++;
	if (data == NULL || inart_wire_decode(data, len, &h, &payload) != INART_WIRE_OK ||
	    !(h.flags & INART_F_DATA)) {
		inart_ps_drop(ps, &ps->st.drop_malformed);
		return 0;
	}
	ti = inart_ps_tree_find(ps, h.job, h.tree);
	if (ti < 0) {
		inart_ps_drop(ps, &ps->st.drop_unknown);
		return 0;
	}
	t = ps->trees[ti];
	nack = (h.flags & INART_F_NACK) != 0;
	if (h.fan_in != t->cfg.fan_in || h.bitmap_words != t->bw || h.count > t->vmax ||
	    (nack ? !(h.flags & INART_F_RETX) : h.count == 0)) {
		inart_ps_drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	/* nothing from outside the tree touches any state */
	if (!source_ok(t, &h, src_ip, &worker)) {
		inart_ps_drop(ps, &ps->st.drop_source);
		return 0;
	}
	if (h.seq >= t->max_chunks) {
		inart_ps_drop(ps, &ps->st.drop_limit);
		return 0;
	}
	if (t->have_iter && (int32_t)(h.iter - t->cur_iter) <= 0 && t->have_rx &&
	    now_ns > t->rx_ns && now_ns - t->rx_ns >= INART_PS_RESTART_IDLE_NS) {
		if (!(h.flags & (INART_F_RETX | INART_F_NACK))) {
			/* the job started again (see ps.h): a fresh tree, same config */
			inart_ps_tree_clear(t);
			ps->st.restarts++;
		} else if (out_of_step(t, &h) &&
			   (!t->hold || now_ns - t->hold_ns < INART_PS_RESTART_IDLE_NS)) {
			/* perhaps a restarted job's, its fresh DATA still in a
			   switch's slot: held back, the idle clock untouched (ps.h) */
			if (!t->hold) {
				t->hold = 1;
				t->hold_ns = now_ns;
			}
			ps->st.restart_held++;
			return 0;
		}
	}
	t->rx_ns = now_ns;
	t->have_rx = 1;
	t->hold = 0;
	if (!step_check(ps, t, &h, worker, src_ip, src_port, out, max_out, &n))
		return n;
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h.bitmap[w]; b; b &= b - 1) {
			t->last_iter[64 * w + __builtin_ctzll(b)] = h.iter;
			t->last_any[64 * w + __builtin_ctzll(b)] = 1;
		}
	learn_children(t, &h, src_ip);
	if (nack) {
		/* (one datagram left for the prober's answer) */
		n = max_out > 1 ? inart_ps_drain_sweep(ps, t, &h, now_ns, out, max_out - 1) : 0;
		return n +
		       inart_ps_probe(ps, t, &h, src_ip, src_port, now_ns, out + n, max_out - n);
	}
	n = rx_data(ps, t, &h, payload, src_ip, src_port, now_ns, out, max_out);
	if (!(h.flags & INART_F_RETX)) {
		/* a fallback may overtake contributions of its ranks still held
		 * in a switch's slot: it says nothing about their progress */
		if (!(h.flags & INART_F_FALLBACK))
			ranks_note(t, &h);
		data_note(t, &h, now_ns);
		n += inart_ps_nack_check(ps, t, &h, now_ns, out + n, max_out - n);
	}
	return n;
}

int inart_ps_tree_step(const struct inart_ps *ps, uint32_t job, uint16_t tree, uint32_t *step)
{
	int i = ps == NULL ? -1 : inart_ps_tree_find(ps, job, tree);

	if (i < 0)
		return -ENOENT;
	if (!ps->trees[i]->have_iter)
		return -EAGAIN;
	*step = ps->trees[i]->cur_iter;
	return 0;
}
