/*
 * worker: the worker side of an all-reduce (sans I/O), see worker.h and
 * docs/dataplane.md.  This file sends (chunks, timers, probes, idle probing,
 * stalls, pacing, the held-resend credit); worker_rx.c takes results, NACKs
 * and notices; worker_impl.h holds their shared state.
 *
 * State: per tree a contiguous value range cut into chunks of vpp values;
 * per chunk its state (IDLE: not sent yet; INFLIGHT: sent, waiting for the
 * result, deadline = its timeout; RESEND: its scale changed, to be sent
 * again as a first transmission; DONE), its current scale, retransmission
 * count, first and last transmission times, and what the PS told about it
 * (a NACK asked for our values, the PS holds them, it is still collecting
 * the chunk, the NACK round acted on) with the pending probe and the probes
 * unanswered.  base/next per tree: lowest seq without a result / lowest seq
 * never sent; only seqs in [base, base + window) are sent.  Per tree also
 * the smoothed time to result, its smallest value, the current timeout, the
 * smoothed probe answer time, the idle-probing state and the lag of its
 * first results behind the smallest time to result (peers starting later).
 *
 * Invariants: a chunk becomes DONE once (a later result is a duplicate), and
 * only from a complete (all workers) clean result; its values are written
 * to res[] then.  A chunk's scale only decreases within an all-reduce.  The
 * start scale of a chunk in the next all-reduce (next_scale) depends only on
 * the chunk's result and cfg.scale_exp, which all workers share.
 *
 * Ownership: the worker owns its arrays (allocated in create and begin, never
 * in poll/rx); the input buffer is the caller's and must stay alive until
 * done.
 */
#include "dp/worker.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "common/err.h"
#include "common/grow.h"
#include "dp/pace.h"
#include "dp/pkt.h"
#include "dp/quant.h"

#include "dp/worker_impl.h"

struct inart_worker_tunables inart_worker_tunables_default(void)
{
	return (struct inart_worker_tunables){
	    .window = INART_WORKER_DEFAULT_WINDOW,
	    .retx_timeout_ns = INART_WORKER_DEFAULT_RETX_NS,
	    .scale_exp = INART_WORKER_DEFAULT_SCALE,
	    .max_backoff_shift = INART_WORKER_MAX_BACKOFF_SHIFT,
	    .rto_srtt_mult = INART_WORKER_RTO_SRTT_MULT,
	    .rto_min_div = INART_WORKER_RTO_MIN_DIV,
	    .rto_max_mul = INART_WORKER_RTO_MAX_MUL,
	    .rto_warmup = INART_WORKER_RTO_WARMUP,
	    .probe_tries = INART_WORKER_PROBE_TRIES,
	    .probe_backoff_shift = INART_WORKER_PROBE_BACKOFF_SHIFT,
	    .idle_gaps = INART_WORKER_IDLE_GAPS,
	    .idle_probes = INART_WORKER_IDLE_PROBES,
	    .idle_backoff_shift = INART_WORKER_IDLE_BACKOFF_SHIFT,
	    .stall_rtos = INART_WORKER_STALL_RTOS,
	    .stall_windows = INART_WORKER_STALL_WINDOWS,
	    .stall_max_ns = INART_WORKER_STALL_MAX_NS,
	    .stall_values = INART_WORKER_STALL_VALUES,
	    .pace_burst = INART_WORKER_PACE_BURST,
	    .held_results = INART_WORKER_HELD_RESULTS,
	    .held_bank_div = INART_WORKER_HELD_BANK_DIV,
	    .held_backoff_shift = INART_WORKER_HELD_BACKOFF_SHIFT,
	};
}

/* 1 if every tunable is in its range: shifts 0..16, the scale 1..127 (a
 * scale is an int8 on the wire), divisors, multipliers and counts above 0. */
static int tunables_ok(const struct inart_worker_tunables *t)
{
	const int shifts[] = {t->max_backoff_shift, t->probe_backoff_shift, t->idle_backoff_shift,
			      t->held_backoff_shift};
	const int counts[] = {t->rto_srtt_mult, t->rto_min_div,	 t->rto_max_mul,   t->idle_gaps,
			      t->idle_probes,	t->stall_rtos,	 t->stall_windows, t->stall_values,
			      t->pace_burst,	t->held_results, t->held_bank_div};

	for (size_t i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++)
		if (shifts[i] < 0 || shifts[i] > 16)
			return 0;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i] < 1)
			return 0;
	return t->window > 0 && t->retx_timeout_ns > 0 && t->scale_exp > 0 && t->scale_exp <= 127 &&
	       t->rto_warmup >= 0 && t->probe_tries >= 0 && t->stall_max_ns > 0;
}

struct inart_worker *inart_worker_create(const struct inart_worker_cfg *cfg)
{
	return inart_worker_create_tuned(cfg, NULL);
}

struct inart_worker *inart_worker_create_tuned(const struct inart_worker_cfg *cfg,
					       const struct inart_worker_tunables *tun)
{
	struct inart_worker_tunables def = inart_worker_tunables_default();
	struct inart_worker *w;
	double total = 0;
	int bw;

	if (tun == NULL)
		tun = &def;
	if (!tunables_ok(tun))
		goto inval;
	if (cfg == NULL || cfg->n_workers < 1 || cfg->n_workers > INART_WIRE_MAX_CONTRIB ||
	    cfg->rank >= cfg->n_workers || cfg->n_trees < 1 ||
	    cfg->n_trees > INART_WORKER_MAX_TREES)
		goto inval;
	for (int t = 0; t < cfg->n_trees; t++) {
		double s = cfg->trees[t].share;

		if (!isfinite(s) || s < 0)
			goto inval;
		total += s;
	}
	if (!(total > 0) || !isfinite(total))
		goto inval;
	bw = (cfg->n_workers + 63) / 64;
	if (cfg->values_per_packet > inart_wire_max_values(bw))
		goto inval;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return inart_null_errno(ENOMEM);
	w->cfg = *cfg;
	w->tun = *tun;
	w->bw = bw;
	w->vpp = cfg->values_per_packet ? cfg->values_per_packet : inart_wire_max_values(bw);
	w->slots = cfg->slots;
	w->window = cfg->window;
	if (w->window == 0)
		w->window = w->slots && w->slots < tun->window ? w->slots : tun->window;
	if (w->slots == 0)
		w->slots = w->window;
	if (w->window > w->slots) {
		free(w);
		goto inval;
	}
	w->retx_ns = cfg->retx_timeout_ns ? cfg->retx_timeout_ns : tun->retx_timeout_ns;
	w->scale0 = cfg->scale_exp ? cfg->scale_exp : tun->scale_exp;
	w->bitmap[cfg->rank / 64] = (uint64_t)1 << (cfg->rank % 64);
	return w;
inval:
	return inart_null_errno(EINVAL);
}

void inart_worker_destroy(struct inart_worker *w)
{
	if (w == NULL)
		return;
	free(w->res);
	free(w->ch);
	free(w);
}

/* Cut n values among the trees by share and into chunks; (re)allocates the
 * chunk arrays when they grow.  Nothing changes on failure.  0 or -ENOMEM. */
static int layout(struct inart_worker *w, size_t n)
{
	const struct inart_worker_cfg *c = &w->cfg;
	struct wtree tt[INART_WORKER_MAX_TREES];
	double total = 0, cum = 0;
	size_t prev = 0, n_ch = 0;

	for (int t = 0; t < c->n_trees; t++)
		total += c->trees[t].share;
	for (int t = 0; t < c->n_trees; t++) {
		size_t end;

		cum += c->trees[t].share;
		/* cum == total exactly once the last positive share is added (same
		 * additions in the same order), so that boundary is n and later
		 * zero shares get empty ranges */
		end = (size_t)floor((double)n * (cum / total) + 0.5);
		if (end > n || t == c->n_trees - 1)
			end = n;
		if (end < prev)
			end = prev;
		tt[t].off = prev;
		tt[t].len = end - prev;
		tt[t].n_chunks = (uint32_t)((tt[t].len + (size_t)w->vpp - 1) / (size_t)w->vpp);
		tt[t].chunk0 = n_ch;
		tt[t].base = tt[t].next = 0;
		tt[t].srtt = w->trees[t].srtt;
		tt[t].rttvar = w->trees[t].rttvar;
		/* every all-reduce starts with a pipeline fill (all workers at
		 * once, through queues still empty, aggregation waiting for every
		 * child): the first results of the previous one's steady state
		 * do not apply to it, so the initial timeout holds again until
		 * tun.rto_warmup new samples (else a timeout adapted to
		 * a paced steady state fires on the fill of the next all-reduce,
		 * and probes and resends add to the queues that delayed it) */
		tt[t].rto = w->trees[t].rto > w->retx_ns ? w->trees[t].rto : w->retx_ns;
		tt[t].min_rtt = w->trees[t].min_rtt;
		tt[t].prtt = w->trees[t].prtt;
		tt[t].samples = 0;
		tt[t].gap = w->trees[t].gap;
		tt[t].last_res = tt[t].flow_since = 0;
		tt[t].idle_rounds = 0;
		tt[t].peer_heard = tt[t].stall_round_at = tt[t].stall_wait = 0;
		tt[t].stall_round = tt[t].unheard = 0;
		tt[t].rate_at = 0;
		tt[t].schedule_at = 0;
		tt[t].begun = 0;
		tt[t].lag = w->trees[t].lag;
		tt[t].debt = w->trees[t].debt; /* a property of the tree's paths */
		tt[t].credit_at = 0;
		n_ch += tt[t].n_chunks;
		prev = end;
	}
	if (n_ch > w->ch_cap) {
		struct wchunk *a = malloc(n_ch * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		free(w->ch);
		w->ch = a;
		w->ch_cap = n_ch;
	}
	memcpy(w->trees, tt, (size_t)c->n_trees * sizeof(tt[0]));
	w->n_ch = n_ch;
	return 0;
}

int inart_worker_begin(struct inart_worker *w, const float *buf, size_t n, uint32_t iter)
{
	int rc;

	if (w == NULL || (buf == NULL && n > 0))
		return -EINVAL;
	if (w->active && w->done_chunks < w->n_ch && !w->stale)
		return -EBUSY;
	/* late copies of an earlier iteration would be taken for this one's */
	if (w->have_iter && (int32_t)(iter - w->iter) <= 0)
		return -EINVAL;
	if (!inart_quant_finite(buf, n))
		return -EINVAL;
	/* the previous all-reduce is gone from here on: its result, its step
	 * notice, its count of chunks done */
	w->active = 0;
	w->stale = 0;
	w->stale_target = 0;
	w->done_chunks = 0;
	if (inart_grow_to((void **)&w->res, &w->res_cap, n, sizeof(*w->res)) < 0)
		return -ENOMEM;
	rc = layout(w, n);
	if (rc < 0)
		return rc;
	/* every chunk starts at cfg.scale_exp: the scale of a step depends on
	 * that step's values only (an overflow lowers it, docs/dataplane.md) */
	for (size_t k = 0; k < w->n_ch; k++)
		w->ch[k] = (struct wchunk){.scale = (int8_t)w->scale0};
	w->buf = buf;
	w->n = n;
	w->iter = iter;
	w->have_iter = 1;
	w->active = 1;
	return 0;
}

size_t inart_worker_chunk_len(const struct inart_worker *w, const struct wtree *tr, uint32_t seq)
{
	size_t lo = (size_t)seq * (size_t)w->vpp, hi = lo + (size_t)w->vpp;

	return (hi > tr->len ? tr->len : hi) - lo;
}

/* ns a frame of `bytes` takes at tree t's planned rate (0: not paced). */
static uint64_t pace_ns(const struct inart_worker *w, int t, size_t bytes)
{
	double r = w->cfg.trees[t].pace_Bps;

	return r > 0 ? (uint64_t)((double)(bytes + INART_PKT_UDP_HLEN) * 1e9 / r) : 0;
}

/* A DATA packet of sz bytes (UDP payload) of tree t went out at now: the
 * next may go one frame time later at the tree's rate; a tree that was
 * idle gets a credit of tun.pace_burst full frames (so a sender
 * woken late catches up, and no more). */
static void pace_charge(struct inart_worker *w, int t, size_t sz, uint64_t now)
{
	struct wtree *tr = &w->trees[t];
	uint64_t f = pace_ns(w, t, sz),
		 credit = (uint64_t)w->tun.pace_burst *
			  pace_ns(w, t, inart_wire_hdr_len(w->bw) + 4 * (size_t)w->vpp);

	if (f != 0)
		inart_pace_charge(&tr->rate_at, f, credit, now);
}

/* Paced with a schedule (pace.h): when the next new chunk of tree tr may
 * go (0: now).  Resends and probes do not wait for it (nor count in it):
 * the schedule bounds how far the tree's new data runs ahead of the
 * plan, recovery only waits for the paced rate. */
static uint64_t sched_gate(const struct inart_worker *w, const struct wtree *tr)
{
	return w->cfg.pace_lead_ns ? inart_pace_sched_gate(tr->schedule_at, w->cfg.pace_lead_ns)
				   : 0;
}

/* Chunk c's timeout expired at now.  The first timeout of a chunk sent once
 * means the tree's timeout was too short: double it (once per expired value:
 * chunks sent with the same timeout double it together) until results give
 * samples again (Karn). */
static void timed_out(struct inart_worker *w, struct wtree *tr, const struct wchunk *c,
		      uint64_t now)
{
	if (c->retries == 0 && now >= c->result_due && c->result_due > c->sent_at) {
		uint64_t twice = 2 * (c->result_due - c->sent_at),
			 hi = w->retx_ns * (uint64_t)w->tun.rto_max_mul;

		if (twice > hi)
			twice = hi;
		if (twice > tr->rto)
			tr->rto = twice;
	}
}

/* The timeout of chunk c after its last transmission: the tree's, doubled
 * per retransmission up to 2^tun.max_backoff_shift times. */
uint64_t inart_worker_backoff(const struct inart_worker *w, const struct wtree *tr,
			      const struct wchunk *c)
{
	int k = w->tun.max_backoff_shift;

	return tr->rto << (c->retries < k ? c->retries : k);
}

/* Tree tr has chunks in flight and heard nothing from its PS for
 * tun.stall_rtos timeouts, or while it sent tun.stall_windows windows' worth of
 * probes and resends: the peer (or a switch on the way) is dead or cut
 * off. */
static int stalled(const struct inart_worker *w, const struct wtree *tr, uint64_t now)
{
	(void)w;
	return tr->base < tr->next &&
	       (tr->stall_wait != 0 ||
		(tr->peer_heard != 0 &&
		 now >= tr->peer_heard + (uint64_t)w->tun.stall_rtos * tr->rto));
}

/* Stall now (the chunks' timers acted until now: the first round waits). */
static void enter_stall(const struct inart_worker *w, struct wtree *tr, uint64_t now)
{
	if (tr->stall_wait != 0)
		return;
	tr->stall_wait = tr->rto ? tr->rto : w->retx_ns;
	tr->stall_round_at = now + tr->stall_wait;
}

/* A probe or a resend went out without an answer since the last one heard:
 * 2 windows' worth of them stall the tree. */
static void note_unheard(const struct inart_worker *w, struct wtree *tr, uint64_t now)
{
	if (++tr->unheard >= (uint32_t)w->tun.stall_windows * (uint32_t)w->window)
		enter_stall(w, tr, now);
}

/* Most debt a tree may run up: half a window of resends. */
static uint32_t debt_max(const struct inart_worker *w)
{
	uint32_t k = (uint32_t)w->window / (uint32_t)w->tun.held_bank_div;

	return (uint32_t)w->tun.held_results * (k > 2 ? k : 2);
}

/* A resend of values that may only be delayed (nothing shows them lost: a
 * held NACK, unanswered probes, a NACK round repeated after our resend) is
 * about to go for tree tr: 1 if its credit pays for it.  The credit is what
 * the tree delivers (a result stored pays back a resend's 1/HELD_RESULTS) and
 * one resend per timeout (so that values really lost go again when little
 * or nothing is delivered); so the volume of such resends follows the tree's delivery
 * rate instead of growing with its queues (docs/dataplane.md, Held values). */
int inart_worker_held_pay(const struct inart_worker *w, struct wtree *tr, uint64_t now)
{
	uint64_t per = tr->rto ? tr->rto : w->retx_ns;

	/* the floor: one resend per timeout, whatever was delivered in it (a
	 * floor counted from the last result never came while results
	 * trickled in, each paying 1/HELD_RESULTS: at the end of an all-reduce
	 * whose last chunks a switch lost, every worker's resends waited for
	 * results only the others' resends could bring, up to the workers'
	 * 20 s timeout in netns_xdp_agg's lose_state check) */
	if (tr->credit_at == 0 || now < tr->credit_at) {
		tr->credit_at = now;
	} else if (now >= tr->credit_at + per) {
		uint64_t k = (now - tr->credit_at) / per * (uint64_t)w->tun.held_results;

		tr->debt = k >= tr->debt ? 0 : tr->debt - (uint32_t)k;
		tr->credit_at = now;
	}
	if (tr->debt + (uint32_t)w->tun.held_results > debt_max(w))
		return 0;
	tr->debt += (uint32_t)w->tun.held_results;
	return 1;
}

/* A resend of chunk c was refused (held_pay): probe it instead, later each
 * time (up to 2^HELD_BACKOFF_SHIFT probe waits): its values may still come. */
uint64_t inart_worker_refused_wait(const struct inart_worker *w, const struct wtree *tr,
				   struct wchunk *c)
{
	int k = c->refused < w->tun.held_backoff_shift ? c->refused : w->tun.held_backoff_shift;

	if (c->refused < 255)
		c->refused++;
	return inart_worker_probe_wait(w, tr) << k;
}

/* Build the DATA packet of chunk seq of tree t into d. */
static void send_chunk(struct inart_worker *w, int t, uint32_t seq, int retx, uint64_t now,
		       struct inart_dgram *d)
{
	struct wtree *tr = &w->trees[t];
	struct wchunk *c = &w->ch[tr->chunk0 + seq];
	size_t len = inart_worker_chunk_len(w, tr, seq), sz;
	const float *x = w->buf + tr->off + (size_t)seq * (size_t)w->vpp;
	struct inart_wire_hdr h;
	int ovf = inart_quant_encode(x, len, c->scale, w->q) != 0;

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = (uint8_t)(INART_F_DATA | (retx ? INART_F_RETX : 0));
	h.bitmap_words = (uint8_t)w->bw;
	h.scale_exp = c->scale;
	h.job = w->cfg.job;
	h.tree = (uint16_t)t;
	h.fan_in = w->cfg.n_workers;
	h.label = retx ? 0 : w->cfg.trees[t].label;
	h.iter = w->iter;
	h.seq = seq;
	h.slot = (uint16_t)(seq % (uint32_t)w->slots);
	h.count = (uint16_t)len;
	memcpy(h.bitmap, w->bitmap, sizeof(h.bitmap));
	if (ovf) {
		/* the values do not fit at this scale: take part in the chunk
		 * with zeros and the OVERFLOW mark, straight to the PS (switches
		 * need not carry the flag through their sums) */
		memset(w->q, 0, len * sizeof(w->q[0]));
		h.flags |= INART_F_OVERFLOW;
		h.label = 0;
		if (!retx)
			w->st.local_overflows++;
	}
	sz = inart_wire_encode(&h, w->q, d->data, INART_DGRAM_MAX);
	d->len = (uint16_t)sz;
	pace_charge(w, t, sz, now);
	d->peer_ip = w->cfg.trees[t].ps_ip;
	d->peer_port = INART_WIRE_UDP_PORT;
	w->st.sent++;
	if (retx) {
		note_unheard(w, tr, now);
		w->st.retransmitted++;
		if (c->asked)
			w->st.retx_asked++;
		if (c->retries < 255)
			c->retries++;
	} else {
		c->retries = 0;
	}
	if (tr->flow_since == 0)
		tr->flow_since = now;
	if (tr->peer_heard == 0)
		tr->peer_heard = now; /* a stall is counted from the first send */
	if (tr->begun == 0)
		tr->begun = now;
	/* a new transmission: the chunk keeps its history (first send,
	 * retries, scale, last probe, the NACK round acted on); what NACKs,
	 * probes and refused resends said of the last one is gone, and no
	 * probe is due */
	*c = (struct wchunk){.sent_at = retx ? c->sent_at : now,
			     .last_tx = now,
			     .state = C_INFLIGHT,
			     .retries = c->retries,
			     .scale = c->scale,
			     .last_probe = c->last_probe,
			     .nack_round = c->nack_round};
	c->result_due = now + inart_worker_backoff(w, tr, c);
	/* at the end of an all-reduce nothing later reveals a lost
	 * retransmission: check on it after a probe's round trip */
	if (retx && !inart_worker_sending(w, tr))
		c->answer_due = now + inart_worker_probe_wait(w, tr);
}

/* How long to wait for a probe's answer: twice the measured answer time,
 * but at least the smallest time to result (an answer from a switch nearby
 * is quick, one that has to queue behind results is not; a retry too soon
 * only adds an answer to that queue); the tree's timeout before any
 * measurement. */
uint64_t inart_worker_probe_wait(const struct inart_worker *w, const struct wtree *tr)
{
	uint64_t p = 2 * tr->prtt;

	if (tr->min_rtt == 0)
		return p ? p : tr->rto ? tr->rto : w->retx_ns;
	return p > tr->min_rtt ? p : tr->min_rtt;
}

/* An answer to our probe of chunk c (a unicast result or NACK) at now. */
void inart_worker_probe_answered(struct wtree *tr, struct wchunk *c, uint64_t now)
{
	if (c->unanswered && c->last_probe && now > c->last_probe) {
		uint64_t d = now - c->last_probe;

		/* up at once, down slowly: answers from a switch nearby are quick,
		 * the PS's wait behind its queues; a retry before the answer could
		 * come only adds load where the answer waits (and the PS holds a
		 * repeated question while its answer may be on the way) */
		if (d > tr->prtt)
			tr->prtt = d;
		else
			tr->prtt = (7 * tr->prtt + d) / 8;
	}
	c->unanswered = 0;
	c->answer_due = 0;
}

/* Build a probe for chunk seq of tree t into d: DATA|RETX|NACK, header only,
 * our rank, along the tree's label: an aggregation switch keeping the result
 * answers it, else the PS answers with the result or a NACK naming every
 * rank it misses. */
static void send_probe(struct inart_worker *w, int t, uint32_t seq, uint64_t now,
		       struct inart_dgram *d)
{
	struct wtree *tr = &w->trees[t];
	struct wchunk *c = &w->ch[tr->chunk0 + seq];
	struct inart_wire_hdr h;
	int k;

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = INART_F_DATA | INART_F_RETX | INART_F_NACK;
	h.bitmap_words = (uint8_t)w->bw;
	h.scale_exp = c->scale;
	h.job = w->cfg.job;
	h.tree = (uint16_t)t;
	h.fan_in = w->cfg.n_workers;
	h.label = w->cfg.trees[t].label; /* up the tree: switches may hold the result */
	h.iter = w->iter;
	h.seq = seq;
	h.slot = (uint16_t)(seq % (uint32_t)w->slots);
	memcpy(h.bitmap, w->bitmap, sizeof(h.bitmap));
	d->len = (uint16_t)inart_wire_encode(&h, NULL, d->data, INART_DGRAM_MAX);
	d->peer_ip = w->cfg.trees[t].ps_ip;
	d->peer_port = INART_WIRE_UDP_PORT;
	w->st.probes++;
	pace_charge(w, t, inart_wire_hdr_len(w->bw) + 4 * (size_t)w->vpp, now);
	note_unheard(w, tr, now);
	c->last_probe = now;
	/* a probe or its answer may be lost: ask again after the usual answer
	 * time, doubling per unanswered probe and per retransmission, up to 4x;
	 * but not when the tree may send nothing new (the end of its share or
	 * a stuck window): nothing else reveals a loss then, a probe costs a
	 * header, and the PS holds a question repeated while its answer may
	 * still come */
	k = inart_worker_sending(w, tr) ? c->unanswered + c->retries : 0;
	c->answer_due =
	    now + (inart_worker_probe_wait(w, tr)
		   << (k < w->tun.probe_backoff_shift ? k : w->tun.probe_backoff_shift));
	if (c->unanswered < 255)
		c->unanswered++;
}

/* The time a chunk's result is expected after its transmission, for idle
 * probing, 0 before any was measured.  While the tree's window is stuck
 * (chunks wait to be sent), the smoothed time to result (at least the
 * smallest): behind shaped FIFO queues a window-limited stream is stuck most
 * of the time and its results come a queueing delay after the smallest time
 * to result; a probe sent earlier finds the contribution only queued, the PS
 * names it missing and the values go again for nothing, adding load to the
 * queues that delayed them (a livelock in the simulator, docs/emulator.md).
 * At the end of the tree's share, the smallest time to result: nothing later
 * reveals a loss of the last chunks, and the queues are draining. */
static uint64_t expected(const struct wtree *tr)
{
	if (tr->next < tr->n_chunks && tr->srtt > tr->min_rtt)
		return tr->srtt;
	return tr->min_rtt;
}

/* How long without any result of tree tr means something was lost:
 * IDLE_GAPS inter-result gaps, at least half the expected time to result
 * (the initial timeout before any was measured), doubled per idle round. */
static uint64_t idle_period(const struct inart_worker *w, const struct wtree *tr)
{
	uint64_t g = (uint64_t)w->tun.idle_gaps * tr->gap,
		 m = expected(tr) ? expected(tr) / 2 : w->retx_ns;
	int k = tr->idle_rounds < w->tun.idle_backoff_shift ? tr->idle_rounds
							    : w->tun.idle_backoff_shift;

	if (g < m)
		g = m;
	return (g ? g : 1) << k;
}

/* 1 if tree tr may still send a chunk never sent (its pipeline is not
 * drained and its window is not stuck: results are expected to keep
 * coming). */
int inart_worker_sending(const struct inart_worker *w, const struct wtree *tr)
{
	return tr->next < tr->n_chunks && tr->next < tr->base + (uint32_t)w->window;
}

/* Whether chunk c may be idle-probed, and from when: it had time to be
 * answered, has no probe out and was not probed within the idle period. */
static uint64_t idle_ready(const struct wchunk *c, uint64_t age, uint64_t per)
{
	uint64_t a, b;

	/* (a chunk with a probe out has its own retry timer) */
	if (c->state != C_INFLIGHT || c->unanswered)
		return UINT64_MAX;
	a = c->last_tx + age;
	b = c->last_probe ? c->last_probe + per : 0;
	return a > b ? a : b;
}

/* How much longer idle probing waits before the tree's first result of the
 * all-reduce: twice its recent lag (at most the initial timeout).  Peers
 * that start an all-reduce later leave our window stuck while a switch
 * holds our values for their contributions; a probe then finds the PS
 * without them and has ours sent again (docs/dataplane.md, Skewed start).
 * Without lag (peers starting together) a loss at the start is found as
 * quickly as before. */
static uint64_t start_wait(const struct inart_worker *w, const struct wtree *tr)
{
	if (tr->last_res != 0)
		return 0;
	return 2 * tr->lag < w->retx_ns ? 2 * tr->lag : w->retx_ns;
}

/* The next idle probe of tree tr: idle probing is for the end of a tree's
 * share (the last results have no successor to reveal their loss) and for a
 * window stuck at a chunk: no result for an idle period while nothing new
 * may be sent; it probes the oldest chunks once they are ready (idle_ready),
 * before the tree's first result start_wait later.  UINT64_MAX if none. */
static uint64_t idle_next(const struct inart_worker *w, const struct wtree *tr)
{
	uint64_t per, age, t, first = UINT64_MAX;

	if (tr->flow_since == 0 || inart_worker_sending(w, tr))
		return UINT64_MAX;
	per = idle_period(w, tr);
	age = (expected(tr) ? expected(tr) : per) + start_wait(w, tr);
	t = tr->flow_since + per + start_wait(w, tr);
	for (uint32_t s = tr->base, k = 0; s < tr->next && k < (uint32_t)w->tun.idle_probes; s++) {
		uint64_t r = idle_ready(&w->ch[tr->chunk0 + s], age, per);

		if (r == UINT64_MAX)
			continue;
		k++;
		if (r < first)
			first = r;
	}
	if (first == UINT64_MAX)
		return UINT64_MAX;
	return first > t ? first : t;
}

/* ---- the poll side of the recovery table (worker_fsm.h) ---- */

/* A_NONE: the event changes nothing (both sides' table entry for it). */
int inart_worker_act_none(struct wevent *e)
{
	(void)e;
	return 0;
}

/* A_SEND_NEW: the chunk at the window's edge goes for the first time, once
 * the paced rate and the plan's schedule let it (else -EAGAIN: the window
 * waits); a new chunk is charged to the schedule. */
static int act_send_new(struct wevent *e)
{
	struct inart_worker *w = e->w;
	struct wtree *tr = e->tr;

	if (e->now < tr->rate_at || e->now < sched_gate(w, tr))
		return -EAGAIN; /* paced: not yet */
	send_chunk(w, e->t, e->seq, 0, e->now, &e->out[(*e->n)++]);
	if (w->cfg.pace_lead_ns)
		inart_pace_sched_charge(&tr->schedule_at, w->cfg.trees[e->t].plan_Bps,
					INART_PKT_UDP_HLEN + e->out[*e->n - 1].len, e->now);
	return 1;
}

/* A_SEND_RESCALED: its scale changed: sent again as a first transmission. */
static int act_send_rescaled(struct wevent *e)
{
	send_chunk(e->w, e->t, e->seq, 0, e->now, &e->out[(*e->n)++]);
	return 1;
}

/* A_WAIT_ANSWER: the result timer expired with a probe out: its answer
 * tells what to do, so the result timer waits past it. */
static int act_wait_answer(struct wevent *e)
{
	struct wchunk *c = e->c;

	c->result_due = c->answer_due + inart_worker_backoff(e->w, e->tr, c);
	return 0;
}

/* A_RECOVER: the result or the probe timer expired.  Ask first (a probe):
 * the answer says whether the PS misses our values (a NACK naming us),
 * holds them (a NACK without us) or has the result; the values go again
 * when a NACK asked for them, or after tun.probe_tries unanswered probes
 * if the tree's credit pays (else a probe again, later each time). */
static int act_recover(struct wevent *e)
{
	struct inart_worker *w = e->w;
	struct wtree *tr = e->tr;
	struct wchunk *c = e->c;
	uint64_t now = e->now;
	int due_rto = e->ev == WE_RESULT_TIMEOUT;

	if (due_rto && !c->asked)
		timed_out(w, tr, c, now);
	if (!c->asked && (c->counted || c->unanswered < w->tun.probe_tries)) {
		send_probe(w, e->t, e->seq, now, &e->out[(*e->n)++]);
		if (due_rto) {
			if (c->retries < 255)
				c->retries++;
			c->result_due = now + inart_worker_backoff(w, tr, c);
		}
	} else if (c->asked || inart_worker_held_pay(w, tr, now)) {
		send_chunk(w, e->t, e->seq, 1, now, &e->out[(*e->n)++]);
	} else {
		/* unanswered probes show nothing lost (their answers may
		 * wait behind the same queues as our values): no credit, so
		 * probe again, later each time */
		uint64_t wait = inart_worker_refused_wait(w, tr, c);

		w->deferred++;
		send_probe(w, e->t, e->seq, now, &e->out[(*e->n)++]);
		c->answer_due = now + wait;
		c->result_due = now + wait + inart_worker_backoff(w, tr, c);
	}
	return 1;
}

/* A_IDLE_PROBE: no result of the tree for an idle period: probe it. */
static int act_idle_probe(struct wevent *e)
{
	send_probe(e->w, e->t, e->seq, e->now, &e->out[(*e->n)++]);
	return 1;
}

/* A_STALL_ACT: a stalled tree's round on its oldest chunk in flight: a
 * probe, and every tun.stall_values-th round its values (label 0, in case
 * only the tree's labels are broken) unless the PS said it holds them. */
static int act_stall_act(struct wevent *e)
{
	struct inart_worker *w = e->w;

	if (e->tr->stall_round % (uint32_t)w->tun.stall_values == 0 && !e->c->counted)
		send_chunk(w, e->t, e->seq, 1, e->now, &e->out[(*e->n)++]);
	else
		send_probe(w, e->t, e->seq, e->now, &e->out[(*e->n)++]);
	return 1;
}

/* The poll side's action of every poll event (the table's first columns
 * name no other; test_worker_fsm checks). */
static int (*const poll_actions[A_N_ACTIONS])(struct wevent *) = {
    [A_NONE] = inart_worker_act_none,
    [A_SEND_NEW] = act_send_new,
    [A_SEND_RESCALED] = act_send_rescaled,
    [A_WAIT_ANSWER] = act_wait_answer,
    [A_RECOVER] = act_recover,
    [A_IDLE_PROBE] = act_idle_probe,
    [A_STALL_ACT] = act_stall_act,
};

/* Event ev for chunk seq of e's tree: the table's action for it.  >0 if a
 * datagram went, 0 if none, <0 if the action must wait (A_SEND_NEW). */
static int poll_event(struct wevent *e, uint32_t seq, int ev)
{
	e->seq = seq;
	e->c = &e->w->ch[e->tr->chunk0 + seq];
	e->ev = ev;
	return poll_actions[inart_worker_fsm_action(e->c->state, ev)](e);
}

/* Which timer of chunk c expired at now (WE_VISIT: none). */
static int timer_event(const struct wchunk *c, uint64_t now)
{
	int due_rto = now >= c->result_due, due_probe = c->answer_due && now >= c->answer_due;

	if (!due_rto && !due_probe)
		return WE_VISIT;
	if (due_rto && c->answer_due > now && c->unanswered)
		return WE_ANSWER_PENDING;
	return due_rto ? WE_RESULT_TIMEOUT : WE_PROBE_DUE;
}

/* No result of tree t for an idle period: its oldest ripe chunks get
 * WE_IDLE. */
static void idle_probe(struct inart_worker *w, int t, uint64_t now, struct inart_dgram *out, int *n,
		       int max_out)
{
	struct wtree *tr = &w->trees[t];
	struct wevent e = {
	    .w = w, .t = t, .tr = tr, .now = now, .out = out, .n = n, .max_out = max_out};
	uint64_t per = idle_period(w, tr),
		 age = (expected(tr) ? expected(tr) : per) + start_wait(w, tr);
	int k = 0;

	for (uint32_t s = tr->base; s < tr->next && *n < max_out && k < w->tun.idle_probes; s++) {
		if (now < idle_ready(&w->ch[tr->chunk0 + s], age, per))
			continue;
		if (poll_event(&e, s, WE_IDLE) > 0)
			k++;
	}
	if (k > 0) {
		tr->flow_since = now;
		tr->idle_rounds++;
	}
}

/* A stalled tree: only its oldest unfinished chunk is acted on
 * (WE_STALL_ROUND), once per stall wait, which doubles up to
 * tun.stall_max_ns (exponential backoff while nothing progresses).
 * Anything heard from the PS ends the stall. */
static void poll_stalled(struct inart_worker *w, int t, uint64_t now, struct inart_dgram *out,
			 int *n, int max_out)
{
	struct wtree *tr = &w->trees[t];
	struct wevent e = {
	    .w = w, .t = t, .tr = tr, .now = now, .out = out, .n = n, .max_out = max_out};
	uint32_t s;

	enter_stall(w, tr, now);
	if (now < tr->stall_round_at || *n >= max_out)
		return;
	for (s = tr->base; s < tr->next; s++)
		if (w->ch[tr->chunk0 + s].state == C_INFLIGHT ||
		    w->ch[tr->chunk0 + s].state == C_RESEND)
			break;
	if (s == tr->next)
		return;
	tr->stall_round++;
	poll_event(&e, s, WE_STALL_ROUND);
	w->st.stalls++;
	tr->stall_wait =
	    2 * tr->stall_wait < w->tun.stall_max_ns ? 2 * tr->stall_wait : w->tun.stall_max_ns;
	tr->stall_round_at = now + tr->stall_wait;
}

/* Emit what tree t has to send now into out[*n..max_out): a stalled tree
 * its stall round; else the timers of its chunks in flight (RESEND chunks
 * go whatever their timers), then new chunks while the window has room. */
static void poll_tree(struct inart_worker *w, int t, uint64_t now, struct inart_dgram *out, int *n,
		      int max_out)
{
	struct wtree *tr = &w->trees[t];
	struct wevent e = {
	    .w = w, .t = t, .tr = tr, .now = now, .out = out, .n = n, .max_out = max_out};
	uint32_t lim;

	if (stalled(w, tr, now)) {
		poll_stalled(w, t, now, out, n, max_out);
		return;
	}
	/* paced: probes and resends wait for the rate as new chunks do (a
	 * probe is charged a full frame: its answer may be a whole result) */
	if (now < tr->rate_at)
		return;
	for (uint32_t s = tr->base; s < tr->next && *n < max_out && now >= tr->rate_at; s++)
		poll_event(&e, s, timer_event(&w->ch[tr->chunk0 + s], now));
	lim = tr->base + (uint32_t)w->window;
	if (lim > tr->n_chunks)
		lim = tr->n_chunks;
	while (tr->next < lim && *n < max_out) {
		if (poll_event(&e, tr->next, WE_WINDOW) < 0)
			break;
		tr->next++;
	}
}

int inart_worker_poll(struct inart_worker *w, uint64_t now_ns, struct inart_dgram *out, int max_out)
{
	int n = 0, nt;

	if (w == NULL || !w->active || w->done_chunks == w->n_ch || out == NULL || w->stale)
		return 0;
	nt = w->cfg.n_trees;
	for (int i = 0; i < nt && n < max_out; i++)
		poll_tree(w, (w->rr + i) % nt, now_ns, out, &n, max_out);
	w->rr = (w->rr + 1) % nt;
	for (int t = 0; t < nt && n < max_out; t++)
		if (!stalled(w, &w->trees[t], now_ns) && now_ns >= idle_next(w, &w->trees[t]) &&
		    now_ns >= w->trees[t].rate_at)
			idle_probe(w, t, now_ns, out, &n, max_out);
	return n;
}

uint64_t inart_worker_next_deadline(const struct inart_worker *w)
{
	uint64_t d = UINT64_MAX;

	if (w == NULL || !w->active || w->done_chunks == w->n_ch || w->stale)
		return UINT64_MAX;
	for (int t = 0; t < w->cfg.n_trees; t++) {
		const struct wtree *tr = &w->trees[t];
		uint64_t dt = UINT64_MAX, stall;
		int inflight = 0;

		if (tr->stall_wait != 0 && tr->base < tr->next) {
			/* stalled: its schedule alone */
			if (tr->stall_round_at < d)
				d = tr->stall_round_at;
			continue;
		}
		if (tr->next < tr->n_chunks && tr->next < tr->base + (uint32_t)w->window) {
			if (tr->rate_at == 0)
				return 0;
			dt = tr->rate_at; /* paced: the next new chunk's time */
			if (dt < sched_gate(w, tr))
				dt = sched_gate(w, tr);
		}
		for (uint32_t s = tr->base; s < tr->next; s++) {
			const struct wchunk *c = &w->ch[tr->chunk0 + s];

			if (c->state == C_RESEND)
				dt = 0;
			if (c->state != C_INFLIGHT)
				continue;
			inflight = 1;
			if (c->result_due < dt)
				dt = c->result_due;
			if (c->answer_due && c->answer_due < dt)
				dt = c->answer_due;
		}
		if (inflight && idle_next(w, tr) < dt)
			dt = idle_next(w, tr);
		if (dt < tr->rate_at)
			dt = tr->rate_at; /* paced: nothing goes before */
		/* the stall starts then, whatever the chunks' timers say */
		stall = tr->peer_heard + (uint64_t)w->tun.stall_rtos * tr->rto;
		if (inflight && tr->peer_heard != 0 && stall < dt)
			dt = stall;
		if (dt < d)
			d = dt;
	}
	return d;
}

int inart_worker_stale(const struct inart_worker *w, uint32_t *step)
{
	if (w == NULL || !w->active || !w->stale)
		return 0;
	if (step != NULL)
		*step = w->stale_target;
	return 1;
}

int inart_worker_done(const struct inart_worker *w)
{
	return w != NULL && w->active && w->done_chunks == w->n_ch;
}

int inart_worker_tree_state(const struct inart_worker *w, uint16_t t, uint64_t now)
{
	if (w == NULL || t >= w->cfg.n_trees)
		return -EINVAL;
	if (!w->active || w->trees[t].n_chunks == 0)
		return INART_WORKER_TREE_IDLE;
	return stalled(w, &w->trees[t], now) ? INART_WORKER_TREE_SILENT
					     : INART_WORKER_TREE_ANSWERED;
}

int inart_worker_result(const struct inart_worker *w, float *out, size_t n)
{
	if (w == NULL || (out == NULL && n > 0))
		return -EINVAL;
	if (!inart_worker_done(w))
		return -EAGAIN;
	if (n != w->n)
		return -EINVAL;
	if (n > 0)
		memcpy(out, w->res, n * sizeof(*out));
	return 0;
}

void inart_worker_stats(const struct inart_worker *w, struct inart_worker_stats *st)
{
	if (w == NULL) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = w->st;
}

void inart_worker_held_stats(const struct inart_worker *w, uint64_t *held, uint64_t *deferred)
{
	*held = w ? w->held_nacks : 0;
	*deferred = w ? w->deferred : 0;
}

int inart_worker_value_scale(const struct inart_worker *w, size_t i, int *scale)
{
	if (w == NULL || scale == NULL)
		return -EINVAL;
	if (!inart_worker_done(w))
		return -EAGAIN;
	if (i >= w->n)
		return -EINVAL;
	for (int t = 0; t < w->cfg.n_trees; t++) {
		const struct wtree *tr = &w->trees[t];

		if (i >= tr->off && i < tr->off + tr->len) {
			*scale = w->ch[tr->chunk0 + (i - tr->off) / (size_t)w->vpp].scale;
			return 0;
		}
	}
	return -EINVAL;
}

int inart_worker_tree_range(const struct inart_worker *w, int t, size_t *off, size_t *len,
			    uint32_t *n_chunks)
{
	if (w == NULL || t < 0 || t >= w->cfg.n_trees || !w->have_iter)
		return -EINVAL;
	if (off)
		*off = w->trees[t].off;
	if (len)
		*len = w->trees[t].len;
	if (n_chunks)
		*n_chunks = w->trees[t].n_chunks;
	return 0;
}
