/*
 * worker_rx: what a worker core does with what comes back from its PSs
 * (docs/dataplane.md, Results and NACKs): results are stored once (a chunk
 * becomes DONE once and its values are never written again), NACKs make it
 * resend its values (at once if the loss is shown, from its tree's credit
 * if the NACK is held) or tell it the chunk is still open, step notices
 * stop the all-reduce, OVERFLOW results and scale notices lower a chunk's
 * scale, and the result chain finds lost results.  Time-to-result samples
 * feed the timers of worker.c.  Never allocates; the state is in
 * worker_impl.h, owned by worker.c.
 */
#include <errno.h>
#include <math.h>

#include "dp/bytes.h"
#include "dp/quant.h"
#include "dp/worker_impl.h"

/* The tree's first result of the all-reduce came at now: its lag is how
 * much later than the smallest time to result after the first
 * transmission; the estimate takes a larger one at once and decays by an
 * eighth per all-reduce (start_wait in worker.c uses it). */
static void note_lag(struct wtree *tr, uint64_t now)
{
	uint64_t s = 0;

	if (tr->begun == 0)
		return;
	if (tr->min_rtt != 0 && now > tr->begun + tr->min_rtt)
		s = now - tr->begun - tr->min_rtt;
	tr->lag = s > tr->lag ? s : tr->lag - tr->lag / 8;
}

/* A result (clean or OVERFLOW) for chunk c of tree tr arrived at now: take
 * an RTT sample if c was sent once (Karn) and update the tree's timeout
 * (RFC 6298 smoothing, at least 3 srtt, the initial timeout until the
 * pipeline filled, clamped). */
static void answered(struct inart_worker *w, struct wtree *tr, const struct wchunk *c, uint64_t now)
{
	if (c->state == C_INFLIGHT && c->retries == 0 && now >= c->sent_at) {
		uint64_t r = now - c->sent_at, lo = w->retx_ns / INART_WORKER_RTO_MIN_DIV,
			 hi = w->retx_ns * INART_WORKER_RTO_MAX_MUL, rto;

		if (tr->min_rtt == 0 || r < tr->min_rtt)
			tr->min_rtt = r ? r : 1;
		if (tr->srtt == 0) {
			tr->srtt = r ? r : 1;
			tr->rttvar = r / 2;
		} else {
			uint64_t d = tr->srtt > r ? tr->srtt - r : r - tr->srtt;

			tr->rttvar = (3 * tr->rttvar + d) / 4;
			tr->srtt = (7 * tr->srtt + r) / 8;
			if (tr->srtt == 0)
				tr->srtt = 1;
		}
		rto = tr->srtt + 4 * tr->rttvar;
		/* the time to result is steady while the pipeline flows, so the
		 * variance alone gives timeouts barely above srtt; a stall elsewhere
		 * (another worker's recovery, a switch's flush) would then make
		 * every chunk retransmit at once */
		if (rto < INART_WORKER_RTO_SRTT_MULT * tr->srtt)
			rto = INART_WORKER_RTO_SRTT_MULT * tr->srtt;
		/* the first results come through empty queues: keep the initial
		 * timeout until the pipeline has filled */
		if (++tr->samples < INART_WORKER_RTO_WARMUP && rto < w->retx_ns)
			rto = w->retx_ns;
		tr->rto = rto < lo ? lo : rto > hi ? hi : rto;
	}
}

static int full_bitmap(const struct inart_worker *w, const uint64_t *bm)
{
	int n = w->cfg.n_workers;

	for (int i = 0; i < w->bw; i++) {
		int lo = 64 * i;
		uint64_t want = n - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n - lo)) - 1;

		if (bm[i] != want)
			return 0;
	}
	return 1;
}

/* A NACK for chunk c (not done) of tree tr: the PS misses the contributions
 * of the ranks in h->bitmap.  Multicast (down the tree): those ranks
 * retransmit, the others learn that the chunk is still open.  Unicast (RETX,
 * the answer to our probe): the bitmap holds every rank missing, so we
 * retransmit if ours is among them and otherwise know ours is counted. */
static int rx_nack(struct inart_worker *w, struct wtree *tr, struct wchunk *c,
		   const struct inart_wire_hdr *h, uint64_t now)
{
	int named = (h->bitmap[w->cfg.rank / 64] >> (w->cfg.rank % 64)) & 1;
	int unicast = (h->flags & INART_F_RETX) != 0;

	if (unicast && h->scale_exp < c->scale) {
		/* the answer to our probe: the PS's record is at a lower scale:
		 * join it */
		c->scale = h->scale_exp;
		if (c->state == C_INFLIGHT)
			c->state = C_RESEND;
		w->st.rescales++;
		return 0;
	}
	if ((unicast && h->scale_exp > c->scale) || c->state != C_INFLIGHT) {
		w->st.duplicates++; /* about a scale we left, or a resend is due anyway */
		return -EALREADY;
	}
	/* a multicast NACK's scale is the PS's guess when nothing of the chunk
	 * arrived; a named worker sends its values at its own scale anyway (the
	 * PS's scale rules sort out a mismatch) */
	w->st.nacks++;
	tr->idle_rounds = 0;
	if (unicast)
		inart_worker_probe_answered(tr, c, now);
	if (named) {
		uint32_t round = inart_wire_nack_prev(h);
		/* held: nothing shows our values lost (the PS marked the NACK so,
		 * or repeats a round we already resent for: that resend may be
		 * queued); such a resend is paid from the tree's credit */
		int held = inart_wire_nack_held(h) || (!unicast && c->nack_round > 0);

		/* each NACK round of the PS is acted on once (copies of a NACK,
		 * or one sent before our retransmission arrived, ask nothing
		 * new); and a NACK less than a round trip after our last
		 * transmission was sent before the PS could have it */
		if (!unicast && (round <= c->nack_round || now < c->last_tx + tr->min_rtt))
			return 0;
		if (!unicast)
			c->nack_round = (uint8_t)(round < 255 ? round : 255);
		if (inart_wire_nack_held(h))
			w->held_nacks++;
		c->unanswered = 0; /* the retransmission supersedes a probe */
		c->probe_at = 0;
		c->counted = 0;
		if (held && !inart_worker_held_pay(w, tr, now)) {
			/* no credit: ask again later instead (a probe) */
			w->deferred++;
			c->probe_at = now + inart_worker_refused_wait(w, tr, c);
			c->deadline = c->probe_at + inart_worker_backoff(tr, c);
			return 0;
		}
		c->asked = 1;
		c->deadline = now;
		return 0;
	}
	if (unicast)
		c->counted = 1;
	/* the chunk waits for other ranks, which the PS asks */
	c->open = 1;
	if (c->deadline < now + tr->rto)
		c->deadline = now + tr->rto;
	return 0;
}

/* Chunk c (in flight) should be probed now (once per probe wait). */
static int probe_now(const struct inart_worker *w, const struct wtree *tr, struct wchunk *c,
		     uint64_t now)
{
	if (c->state != C_INFLIGHT || c->probe_at != 0 ||
	    (c->last_probe != 0 && now < c->last_probe + inart_worker_probe_wait(w, tr)))
		return 0;
	c->probe_at = now;
	return 1;
}

/* A result of tree tr says the PS sent the result of chunk seq down the tree
 * just before it.  Results of one PS reach a worker in the order sent, so if
 * chunk seq is still waiting, its result was lost: probe it now.  Walking
 * back, the probe's answer names the chunk before.  When the tree may send
 * nothing new (the end of its share, a stuck window), older chunks in flight
 * that no NACK said are still being collected and that waited longer than
 * the smoothed time to result are probed at once too, so that a burst of
 * lost results (or a lost contribution of ours) is found in one round trip.
 * While chunks are still being sent, later chunks give the PS its evidence
 * and keep results coming, and such guesses mostly reach the PS after the
 * chunk completed: each is answered with a whole result that is already on
 * its way (docs/dataplane.md, Measured cost of loss). */
static void chain_check(struct inart_worker *w, struct wtree *tr, uint32_t seq, uint64_t now)
{
	uint64_t age = tr->min_rtt ? tr->min_rtt : tr->rto;

	if (tr->srtt > age)
		age = tr->srtt;

	if (seq >= tr->n_chunks || seq < tr->base)
		return;
	if (!probe_now(w, tr, &w->ch[tr->chunk0 + seq], now))
		return;
	w->st.chain_gaps++;
	if (inart_worker_sending(w, tr))
		return;
	for (uint32_t s = tr->base; s < seq; s++) {
		struct wchunk *c = &w->ch[tr->chunk0 + s];

		if (!c->open && now >= c->last_tx + age)
			probe_now(w, tr, c, now);
	}
}

/* Decode and check a datagram for w from src_ip:src_port: its header into
 * *h and its values into *payload; 0, or the error to return (counted). */
static int rx_check(struct inart_worker *w, const uint8_t *data, size_t len, uint32_t src_ip,
		    uint16_t src_port, struct inart_wire_hdr *h, const uint8_t **payload)
{
	if (data == NULL || inart_wire_decode(data, len, h, payload) != INART_WIRE_OK ||
	    !(h->flags & INART_F_RESULT) || h->job != w->cfg.job || h->fan_in != w->cfg.n_workers ||
	    h->bitmap_words != w->bw || h->tree >= w->cfg.n_trees) {
		w->st.dropped++;
		return -EINVAL;
	}
	/* results, NACKs and notices of a tree come from its PS's address (a
	 * switch answering a probe answers as the PS; the first hop keeps hosts
	 * from sending as the PS) */
	if (w->cfg.trees[h->tree].ps_ip != 0 &&
	    (src_ip != w->cfg.trees[h->tree].ps_ip || src_port != INART_WIRE_UDP_PORT)) {
		w->st.foreign++;
		return -EPERM;
	}
	if (!w->active || h->iter != w->iter) {
		w->st.duplicates++; /* a late copy from an earlier all-reduce */
		return -EALREADY;
	}
	if (h->seq >= w->trees[h->tree].n_chunks) {
		w->st.dropped++;
		return -EINVAL;
	}
	return 0;
}

/* A step notice (RESULT|STALE) for tree tr: for our rank, this step cannot
 * complete here. */
static int rx_stale(struct inart_worker *w, const struct inart_wire_hdr *h)
{
	if (!(h->bitmap[w->cfg.rank / 64] >> (w->cfg.rank % 64) & 1)) {
		w->st.dropped++;
		return -EINVAL;
	}
	w->st.step_notices++;
	if (!w->stale || (int32_t)(h->prev - w->stale_target) > 0)
		w->stale_target = h->prev;
	w->stale = 1;
	return 0;
}

/* A clean result for chunk c (h->seq) of tree tr: must carry every rank and
 * the chunk's count; stored once, the chunk is DONE, base advances. */
static int rx_result(struct inart_worker *w, struct wtree *tr, struct wchunk *c,
		     const struct inart_wire_hdr *h, const uint8_t *payload, int full,
		     uint64_t now_ns)
{
	size_t off = tr->off + (size_t)h->seq * (size_t)w->vpp;
	double f = ldexp(1.0, -h->scale_exp);

	if (!full || h->count != inart_worker_chunk_len(w, tr, h->seq)) {
		w->st.dropped++;
		return -EINVAL;
	}
	for (int i = 0; i < h->count; i++) {
		int32_t v = (int32_t)inart_get_be32(payload + 4 * (size_t)i);

		w->res[off + (size_t)i] = (float)((double)v * f);
	}
	if (tr->last_res == 0)
		note_lag(tr, now_ns);
	answered(w, tr, c, now_ns);
	if (tr->last_res && now_ns > tr->last_res) {
		uint64_t g = now_ns - tr->last_res;

		/* a stall is not a gap of the flowing pipeline */
		if (tr->gap && g > 2 * tr->gap)
			g = 2 * tr->gap;
		tr->gap = tr->gap ? (7 * tr->gap + g) / 8 : g;
	}
	tr->last_res = tr->idle_from = now_ns;
	tr->idle_rounds = 0;
	c->state = C_DONE;
	c->scale = h->scale_exp;
	w->done_chunks++;
	w->st.results++;
	if (tr->debt > 0)
		tr->debt--; /* a delivery pays back part of a resend */
	while (tr->base < tr->n_chunks && w->ch[tr->chunk0 + tr->base].state == C_DONE)
		tr->base++;
	if (tr->next < tr->base)
		tr->next = tr->base;
	return 0;
}

/* OVERFLOW for chunk c: a complete result at scale s means "s overflowed,
 * use lower(s)"; a notice (incomplete bitmap) at s means "the chunk is at s
 * now".  Anything not below our scale is old news. */
static int rx_overflow(struct inart_worker *w, struct wtree *tr, struct wchunk *c,
		       const struct inart_wire_hdr *h, int full, uint64_t now_ns)
{
	int ns;

	if (full && h->scale_exp <= c->scale)
		ns = inart_quant_lower(h->scale_exp);
	else if (!full && h->scale_exp < c->scale)
		ns = h->scale_exp;
	else {
		w->st.duplicates++;
		return -EALREADY;
	}
	if (ns >= c->scale) { /* at the lowest scale already: cannot happen for finite data */
		w->st.duplicates++;
		return -EALREADY;
	}
	if (full)
		answered(w, tr, c, now_ns);
	c->scale = (int8_t)ns;
	if (c->state == C_INFLIGHT)
		c->state = C_RESEND;
	w->st.rescales++;
	return 0;
}

int inart_worker_rx(struct inart_worker *w, const uint8_t *data, size_t len, uint32_t src_ip,
		    uint16_t src_port, uint64_t now_ns)
{
	struct inart_wire_hdr h;
	const uint8_t *payload;
	struct wtree *tr;
	struct wchunk *c;
	int rc, full;

	if (w == NULL)
		return -EINVAL;
	rc = rx_check(w, data, len, src_ip, src_port, &h, &payload);
	if (rc < 0)
		return rc;
	tr = &w->trees[h.tree];
	/* the PS is alive: the tree is not stalled */
	tr->heard = now_ns;
	tr->stall_wait = 0;
	tr->stall_round = 0;
	tr->unheard = 0;
	if (h.flags & INART_F_STALE)
		return rx_stale(w, &h);
	c = &w->ch[tr->chunk0 + h.seq];
	if (c->state == C_DONE) {
		w->st.duplicates++;
		return -EALREADY;
	}
	if (h.flags & INART_F_NACK) {
		/* the answer to a probe names the PS's last result sent down */
		if ((h.flags & INART_F_RETX) && inart_wire_nack_prev(&h) != 0)
			chain_check(w, tr, inart_wire_nack_prev(&h) - 1, now_ns);
		return rx_nack(w, tr, c, &h, now_ns);
	}
	if (h.prev != 0)
		chain_check(w, tr, h.prev - 1, now_ns);
	if (h.flags & INART_F_RETX)
		inart_worker_probe_answered(tr, c, now_ns);
	full = full_bitmap(w, h.bitmap);
	if (!(h.flags & INART_F_OVERFLOW))
		return rx_result(w, tr, c, &h, payload, full, now_ns);
	return rx_overflow(w, tr, c, &h, full, now_ns);
}
