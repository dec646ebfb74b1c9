/*
 * worker_rx: what a worker core does with what comes back from its PSs
 * (docs/dataplane.md, Results and NACKs): results are stored once (a chunk
 * becomes DONE once and its values are never written again), NACKs make it
 * resend its values (at once if the loss is shown, from its tree's credit
 * if the NACK is held) or tell it the chunk is still open, step notices
 * stop the all-reduce, OVERFLOW results and scale notices lower a chunk's
 * scale, and the result chain finds lost results.  Each packet is one event
 * of the recovery table (worker_fsm.h) for the chunk it names, a chain gap
 * one for the chunk it points at; the rx-side actions are here.
 * Time-to-result samples feed the timers of worker.c.  Never allocates; the state is in
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
		uint64_t r = now - c->sent_at, lo = w->retx_ns / (uint64_t)w->tun.rto_min_div,
			 hi = w->retx_ns * (uint64_t)w->tun.rto_max_mul, rto;

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
		if (rto < (uint64_t)w->tun.rto_srtt_mult * tr->srtt)
			rto = (uint64_t)w->tun.rto_srtt_mult * tr->srtt;
		/* the first results come through empty queues: keep the initial
		 * timeout until the pipeline has filled */
		if (++tr->samples < (uint32_t)w->tun.rto_warmup && rto < w->retx_ns)
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

static void follow_chain(struct wevent *e);

/* A unicast packet (RETX) for e's chunk answers our probe of it. */
static void answer_heard(struct wevent *e)
{
	if (e->h->flags & INART_F_RETX)
		inart_worker_probe_answered(e->tr, e->c, e->now);
}

/* A_JOIN_SCALE: the answer to our probe (a NACK) is at a scale below the
 * chunk's: the PS's record is at that scale: join it (sent again as new). */
static int act_join_scale(struct wevent *e)
{
	struct wchunk *c = e->c;

	follow_chain(e);
	c->scale = e->h->scale_exp;
	if (c->state == C_INFLIGHT)
		c->state = C_RESEND;
	e->w->st.rescales++;
	return 0;
}

/* A NACK for chunk c (in flight, at our scale): counted, and a unicast one
 * (RETX, the answer to our probe) answers the probe.  A multicast NACK's
 * scale is the PS's guess when nothing of the chunk arrived; a named worker
 * sends its values at its own scale anyway (the PS's scale rules sort out a
 * mismatch). */
static void nack_heard(struct wevent *e)
{
	e->w->st.nacks++;
	e->tr->idle_rounds = 0;
	answer_heard(e);
}

/* A_RESEND_ASKED: the PS misses the contributions of the ranks in the
 * NACK's bitmap, ours among them.  Multicast (down the tree): those ranks
 * retransmit; unicast (our probe's answer): the bitmap holds every rank
 * missing.  Our values are due now, once per NACK round; held (nothing
 * shows them lost) only if the tree's credit pays, else a probe later. */
static int act_resend_asked(struct wevent *e)
{
	struct inart_worker *w = e->w;
	struct wtree *tr = e->tr;
	struct wchunk *c = e->c;
	const struct inart_wire_hdr *h = e->h;
	uint64_t now = e->now;
	int unicast = (h->flags & INART_F_RETX) != 0, held;
	uint32_t round = inart_wire_nack_prev(h);

	follow_chain(e);
	nack_heard(e);
	/* held: nothing shows our values lost (the PS marked the NACK so, or
	 * repeats a round we already resent for: that resend may be queued);
	 * such a resend is paid from the tree's credit */
	held = inart_wire_nack_held(h) || (!unicast && c->nack_round > 0);
	/* each NACK round of the PS is acted on once (copies of a NACK, or one
	 * sent before our retransmission arrived, ask nothing new); and a NACK
	 * less than a round trip after our last transmission was sent before
	 * the PS could have it */
	if (!unicast && (round <= c->nack_round || now < c->last_tx + tr->min_rtt))
		return 0;
	if (!unicast)
		c->nack_round = (uint8_t)(round < 255 ? round : 255);
	if (inart_wire_nack_held(h))
		w->held_nacks++;
	c->unanswered = 0; /* the retransmission supersedes a probe */
	c->answer_due = 0;
	c->counted = 0;
	if (held && !inart_worker_held_pay(w, tr, now)) {
		/* no credit: ask again later instead (a probe) */
		w->deferred++;
		c->answer_due = now + inart_worker_refused_wait(w, tr, c);
		c->result_due = c->answer_due + inart_worker_backoff(w, tr, c);
		return 0;
	}
	c->asked = 1;
	c->result_due = now;
	return 0;
}

/* A_OPEN: a NACK not naming us: the chunk waits for other ranks, which the
 * PS asks; a unicast one (our probe's answer, every rank missing) says
 * ours is counted. */
static int act_open(struct wevent *e)
{
	struct wchunk *c = e->c;

	follow_chain(e);
	nack_heard(e);
	if (e->h->flags & INART_F_RETX)
		c->counted = 1;
	c->open = 1;
	if (c->result_due < e->now + e->tr->rto)
		c->result_due = e->now + e->tr->rto;
	return 0;
}

/* A_PROBE_SOON: chunk c (in flight) should be probed now (once per probe
 * wait): 1 if so. */
static int act_probe_soon(struct wevent *e)
{
	const struct inart_worker *w = e->w;
	const struct wtree *tr = e->tr;
	struct wchunk *c = e->c;
	uint64_t now = e->now;

	if (c->answer_due != 0 ||
	    (c->last_probe != 0 && now < c->last_probe + inart_worker_probe_wait(w, tr)))
		return 0;
	c->answer_due = now;
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
static int rx_event_on(const struct wevent *e, uint32_t seq, int ev);

static void chain_check(const struct wevent *e, uint32_t seq)
{
	struct inart_worker *w = e->w;
	struct wtree *tr = e->tr;
	uint64_t now = e->now;
	uint64_t age = tr->min_rtt ? tr->min_rtt : tr->rto;

	if (tr->srtt > age)
		age = tr->srtt;

	if (seq >= tr->n_chunks || seq < tr->base)
		return;
	if (rx_event_on(e, seq, WE_CHAIN_GAP) <= 0)
		return;
	w->st.chain_gaps++;
	if (inart_worker_sending(w, tr))
		return;
	for (uint32_t s = tr->base; s < seq; s++) {
		struct wchunk *c = &w->ch[tr->chunk0 + s];

		if (!c->open && now >= c->last_tx + age)
			rx_event_on(e, s, WE_CHAIN_BEHIND);
	}
}

/* The packet of e names its predecessor in the PS's result chain: a
 * result its `prev`, the answer to a probe (NACK|RETX) the PS's last
 * result sent down. */
static void follow_chain(struct wevent *e)
{
	const struct inart_wire_hdr *h = e->h;

	if (h->flags & INART_F_NACK) {
		if ((h->flags & INART_F_RETX) && inart_wire_nack_prev(h) != 0)
			chain_check(e, inart_wire_nack_prev(h) - 1);
	} else if (h->prev != 0) {
		chain_check(e, h->prev - 1);
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

/* A_STALE: a step notice (RESULT|STALE) for e's tree: for our rank, this
 * step cannot complete here (whatever the chunk's state). */
static int act_stale(struct wevent *e)
{
	struct inart_worker *w = e->w;
	const struct inart_wire_hdr *h = e->h;

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

/* A result (clean or OVERFLOW) for e's chunk: the chain it names is
 * followed, and a unicast one (RETX) answers our probe. */
static void result_heard(struct wevent *e)
{
	follow_chain(e);
	answer_heard(e);
}

/* A_STORE: a clean result for chunk c (h->seq) of tree tr: must carry
 * every rank and the chunk's count; stored once, the chunk is DONE, base
 * advances. */
static int act_store(struct wevent *e)
{
	struct inart_worker *w = e->w;
	struct wtree *tr = e->tr;
	struct wchunk *c = e->c;
	const struct inart_wire_hdr *h = e->h;
	uint64_t now_ns = e->now;
	size_t off = tr->off + (size_t)h->seq * (size_t)w->vpp;
	double f = ldexp(1.0, -h->scale_exp);

	result_heard(e);
	if (!full_bitmap(w, h->bitmap) || h->count != inart_worker_chunk_len(w, tr, h->seq)) {
		w->st.dropped++;
		return -EINVAL;
	}
	for (int i = 0; i < h->count; i++) {
		int32_t v = (int32_t)inart_get_be32(e->payload + 4 * (size_t)i);

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
	tr->last_res = tr->flow_since = now_ns;
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

/* A_LOWER_SCALE: OVERFLOW for chunk c: a complete result at scale s
 * (WE_OVERFLOW) means "s overflowed, use lower(s)"; a notice (incomplete
 * bitmap, WE_SCALE_NOTICE) at s means "the chunk is at s now".  Anything
 * not below our scale is old news. */
static int act_lower_scale(struct wevent *e)
{
	struct inart_worker *w = e->w;
	struct wchunk *c = e->c;
	const struct inart_wire_hdr *h = e->h;
	int full = e->ev == WE_OVERFLOW, ns;

	result_heard(e);
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
		answered(w, e->tr, c, e->now);
	c->scale = (int8_t)ns;
	if (c->state == C_INFLIGHT)
		c->state = C_RESEND;
	w->st.rescales++;
	return 0;
}

/* A_DUPLICATE: the chunk is done: a duplicate. */
static int act_duplicate(struct wevent *e)
{
	e->w->st.duplicates++;
	return -EALREADY;
}

/* A_OLD_NEWS: a NACK about a scale we left, or for a chunk whose resend is
 * due anyway: the chain it names is followed, nothing else. */
static int act_old_news(struct wevent *e)
{
	follow_chain(e);
	e->w->st.duplicates++;
	return -EALREADY;
}

/* The rx side's action of every rx event (the table's last columns name no
 * other; test_worker_fsm checks). */
static int (*const rx_actions[A_N_ACTIONS])(struct wevent *) = {
    [A_NONE] = inart_worker_act_none,	 [A_DUPLICATE] = act_duplicate,
    [A_OLD_NEWS] = act_old_news,	 [A_STORE] = act_store,
    [A_LOWER_SCALE] = act_lower_scale,	 [A_JOIN_SCALE] = act_join_scale,
    [A_RESEND_ASKED] = act_resend_asked, [A_OPEN] = act_open,
    [A_PROBE_SOON] = act_probe_soon,	 [A_STALE] = act_stale,
};

/* Event ev of e's packet for chunk seq of its tree (the chunk named, or
 * another one the result chain points at): the table's action for it. */
static int rx_event_on(const struct wevent *e, uint32_t seq, int ev)
{
	struct wevent o = *e;

	o.seq = seq;
	o.c = &o.w->ch[o.tr->chunk0 + seq];
	o.ev = ev;
	return rx_actions[inart_worker_fsm_action(o.c->state, ev)](&o);
}

/* The event a packet h (checked by rx_check) is for chunk c. */
static int rx_event(const struct inart_worker *w, const struct wchunk *c,
		    const struct inart_wire_hdr *h)
{
	if (h->flags & INART_F_STALE)
		return WE_STEP_NOTICE;
	if (h->flags & INART_F_NACK) {
		int unicast = (h->flags & INART_F_RETX) != 0;

		if (unicast && h->scale_exp < c->scale)
			return WE_NACK_LOWER;
		if (unicast && h->scale_exp > c->scale)
			return WE_NACK_HIGHER;
		return (h->bitmap[w->cfg.rank / 64] >> (w->cfg.rank % 64)) & 1 ? WE_NACK_US
									       : WE_NACK_OTHERS;
	}
	if (!(h->flags & INART_F_OVERFLOW))
		return WE_RESULT;
	return full_bitmap(w, h->bitmap) ? WE_OVERFLOW : WE_SCALE_NOTICE;
}

int inart_worker_rx(struct inart_worker *w, const uint8_t *data, size_t len, uint32_t src_ip,
		    uint16_t src_port, uint64_t now_ns)
{
	struct inart_wire_hdr h;
	struct wevent e = {.w = w, .now = now_ns, .h = &h};
	struct wtree *tr;
	int rc;

	if (w == NULL)
		return -EINVAL;
	rc = rx_check(w, data, len, src_ip, src_port, &h, &e.payload);
	if (rc < 0)
		return rc;
	tr = &w->trees[h.tree];
	/* the PS is alive: the tree is not stalled (FLOWING again) */
	tr->peer_heard = now_ns;
	tr->stall_wait = 0;
	tr->stall_round = 0;
	tr->unheard = 0;
	e.t = h.tree;
	e.tr = tr;
	return rx_event_on(&e, h.seq, rx_event(w, &w->ch[tr->chunk0 + h.seq], &h));
}
