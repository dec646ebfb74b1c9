/*
 * worker: the worker side of an all-reduce (sans I/O), see worker.h and
 * docs/dataplane.md.
 *
 * State: per tree a contiguous value range cut into chunks of vpp values;
 * per chunk its state (IDLE: not sent yet; INFLIGHT: sent, waiting for the
 * result, deadline = next retransmission; RESEND: its scale changed, to be
 * sent again as a first transmission; DONE), its current scale,
 * retransmission count, first-transmission time and transmission number
 * (fast retransmission).  base/next per tree: lowest seq without a result /
 * lowest seq never sent; only seqs in [base, base + window) are sent.  Per
 * tree also the smoothed time to result and the current timeout.
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
#include "worker.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

enum { C_IDLE = 0, C_INFLIGHT = 1, C_RESEND = 2, C_DONE = 3 };

struct wchunk {
	uint64_t deadline, sent_at; /* next retransmission; first transmission */
	uint32_t txn;		    /* tree's transmission number of the last send */
	uint8_t state, retries;
	int8_t scale;
	uint8_t fast; /* deadline advanced by a fast retransmission */
};

struct wtree {
	size_t off, len;	 /* value range of the tree */
	uint32_t n_chunks, base; /* chunks; lowest seq without a result */
	uint32_t next;		 /* lowest seq never sent */
	size_t chunk0;		 /* index of the tree's first chunk in ch[] */
	uint32_t txn;		 /* transmissions so far (fast retransmission) */
	uint64_t srtt, rttvar;	 /* smoothed RTT and its variation; 0: no sample */
	uint64_t rto;		 /* current retransmission timeout */
};

struct inart_worker {
	struct inart_worker_cfg cfg;
	int bw, vpp, window, slots;
	uint64_t retx_ns;
	int scale0;
	uint64_t bitmap[INART_WIRE_MAX_BITMAP_WORDS];

	int active, have_iter;
	uint32_t iter;
	const float *buf;
	size_t n;
	float *res;
	size_t res_cap;
	struct wchunk *ch;
	int8_t *next_scale; /* start scale per chunk for the next all-reduce */
	size_t n_ch, ch_cap;
	size_t layout_n; /* n the chunk layout (and next_scale) was built for */
	size_t done_chunks;
	struct wtree trees[INART_WORKER_MAX_TREES];
	int rr; /* tree to serve first in poll (fairness when out[] is short) */

	struct inart_worker_stats st;
	int32_t q[INART_DGRAM_MAX / 4];
};

struct inart_worker *inart_worker_create(const struct inart_worker_cfg *cfg)
{
	struct inart_worker *w;
	double total = 0;
	int bw;

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
	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	w->cfg = *cfg;
	w->bw = bw;
	w->vpp = cfg->values_per_packet ? cfg->values_per_packet : inart_wire_max_values(bw);
	w->slots = cfg->slots;
	w->window = cfg->window;
	if (w->window == 0)
		w->window = w->slots && w->slots < INART_WORKER_DEFAULT_WINDOW
				? w->slots
				: INART_WORKER_DEFAULT_WINDOW;
	if (w->slots == 0)
		w->slots = w->window;
	if (w->window > w->slots) {
		free(w);
		goto inval;
	}
	w->retx_ns = cfg->retx_timeout_ns ? cfg->retx_timeout_ns : INART_WORKER_DEFAULT_RETX_NS;
	w->scale0 = cfg->scale_exp ? cfg->scale_exp : INART_WORKER_DEFAULT_SCALE;
	w->bitmap[cfg->rank / 64] = (uint64_t)1 << (cfg->rank % 64);
	return w;
inval:
	errno = EINVAL;
	return NULL;
}

void inart_worker_destroy(struct inart_worker *w)
{
	if (w == NULL)
		return;
	free(w->res);
	free(w->ch);
	free(w->next_scale);
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
		tt[t].txn = w->trees[t].txn;
		tt[t].srtt = w->trees[t].srtt;
		tt[t].rttvar = w->trees[t].rttvar;
		tt[t].rto = w->trees[t].rto ? w->trees[t].rto : w->retx_ns;
		n_ch += tt[t].n_chunks;
		prev = end;
	}
	if (n_ch > w->ch_cap) {
		struct wchunk *a = malloc(n_ch * sizeof(*a));
		int8_t *s = malloc(n_ch);

		if (a == NULL || s == NULL) {
			free(a);
			free(s);
			return -ENOMEM;
		}
		free(w->ch);
		free(w->next_scale);
		w->ch = a;
		w->next_scale = s;
		w->ch_cap = n_ch;
		w->layout_n = (size_t)-1; /* start scales are gone */
	}
	if (n != w->layout_n) {
		memset(w->next_scale, w->scale0, n_ch);
		w->layout_n = n;
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
	if (w->active && w->done_chunks < w->n_ch)
		return -EBUSY;
	if (w->have_iter && (int32_t)(iter - w->iter) <= 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(buf[i]))
			return -EINVAL;
	w->active = 0; /* the previous result is gone from here on */
	if (n > w->res_cap) {
		float *r = malloc(n * sizeof(*r));

		if (r == NULL)
			return -ENOMEM;
		free(w->res);
		w->res = r;
		w->res_cap = n;
	}
	rc = layout(w, n);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < w->n_ch; k++) {
		memset(&w->ch[k], 0, sizeof(w->ch[k]));
		w->ch[k].scale = w->next_scale[k];
	}
	w->buf = buf;
	w->n = n;
	w->iter = iter;
	w->have_iter = 1;
	w->active = 1;
	w->done_chunks = 0;
	return 0;
}

static size_t chunk_len(const struct inart_worker *w, const struct wtree *tr, uint32_t seq)
{
	size_t lo = (size_t)seq * (size_t)w->vpp, hi = lo + (size_t)w->vpp;

	return (hi > tr->len ? tr->len : hi) - lo;
}

/* Build the DATA packet of chunk seq of tree t into d. */
static void send_chunk(struct inart_worker *w, int t, uint32_t seq, int retx, uint64_t now,
		       struct inart_dgram *d)
{
	struct wtree *tr = &w->trees[t];
	struct wchunk *c = &w->ch[tr->chunk0 + seq];
	size_t len = chunk_len(w, tr, seq), sz;
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
	d->peer_ip = w->cfg.trees[t].ps_ip;
	d->peer_port = INART_WIRE_UDP_PORT;
	w->st.sent++;
	if (retx) {
		/* a timeout (not a fast retransmission) that expired before any
		 * usable sample: the tree's timeout was too short, double it
		 * (once per expired value: chunks sent with the same timeout
		 * double it together) until samples come back (Karn) */
		if (c->retries == 0 && now >= c->deadline && c->deadline > c->sent_at) {
			uint64_t twice = 2 * (c->deadline - c->sent_at),
				 hi = w->retx_ns * INART_WORKER_RTO_MAX_MUL;

			if (twice > hi)
				twice = hi;
			if (twice > tr->rto && !c->fast)
				tr->rto = twice;
		}
		w->st.retransmitted++;
		if (c->retries < 255)
			c->retries++;
	} else {
		c->retries = 0;
	}
	if (!retx)
		c->sent_at = now;
	c->fast = 0;
	c->txn = tr->txn++;
	c->state = C_INFLIGHT;
	c->deadline = now + (tr->rto << (c->retries < INART_WORKER_MAX_BACKOFF_SHIFT
					     ? c->retries
					     : INART_WORKER_MAX_BACKOFF_SHIFT));
}

/* Emit what tree t has to send now into out[*n..max_out). */
static void poll_tree(struct inart_worker *w, int t, uint64_t now, struct inart_dgram *out, int *n,
		      int max_out)
{
	struct wtree *tr = &w->trees[t];
	uint32_t lim;

	for (uint32_t s = tr->base; s < tr->next && *n < max_out; s++) {
		struct wchunk *c = &w->ch[tr->chunk0 + s];

		if (c->state == C_RESEND)
			send_chunk(w, t, s, 0, now, &out[(*n)++]);
		else if (c->state == C_INFLIGHT && now >= c->deadline)
			send_chunk(w, t, s, 1, now, &out[(*n)++]);
	}
	lim = tr->base + (uint32_t)w->window;
	if (lim > tr->n_chunks)
		lim = tr->n_chunks;
	while (tr->next < lim && *n < max_out) {
		if (w->ch[tr->chunk0 + tr->next].state == C_IDLE)
			send_chunk(w, t, tr->next, 0, now, &out[(*n)++]);
		tr->next++;
	}
}

int inart_worker_poll(struct inart_worker *w, uint64_t now_ns, struct inart_dgram *out, int max_out)
{
	int n = 0, nt;

	if (w == NULL || !w->active || w->done_chunks == w->n_ch || out == NULL)
		return 0;
	nt = w->cfg.n_trees;
	for (int i = 0; i < nt && n < max_out; i++)
		poll_tree(w, (w->rr + i) % nt, now_ns, out, &n, max_out);
	w->rr = (w->rr + 1) % nt;
	return n;
}

uint64_t inart_worker_next_deadline(const struct inart_worker *w)
{
	uint64_t d = UINT64_MAX;

	if (w == NULL || !w->active || w->done_chunks == w->n_ch)
		return UINT64_MAX;
	for (int t = 0; t < w->cfg.n_trees; t++) {
		const struct wtree *tr = &w->trees[t];

		if (tr->next < tr->n_chunks && tr->next < tr->base + (uint32_t)w->window)
			return 0;
		for (uint32_t s = tr->base; s < tr->next; s++) {
			const struct wchunk *c = &w->ch[tr->chunk0 + s];

			if (c->state == C_RESEND)
				return 0;
			if (c->state == C_INFLIGHT && c->deadline < d)
				d = c->deadline;
		}
	}
	return d;
}

int inart_worker_done(const struct inart_worker *w)
{
	return w != NULL && w->active && w->done_chunks == w->n_ch;
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

static int32_t get_be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* Start scale of the chunk in the next all-reduce, from its clean result at
 * scale s with largest magnitude m (common knowledge of all workers): the
 * highest scale <= cfg.scale_exp at which m would still leave
 * INART_WORKER_RAISE_HEADROOM bits free, but never below s (no preemptive
 * lowering: overflow is detected and repaired anyway). */
static int8_t next_start(const struct inart_worker *w, int s, uint32_t m)
{
	const uint64_t lim = (uint64_t)1 << (31 - INART_WORKER_RAISE_HEADROOM);
	int k = 0;

	if (s >= w->scale0 || m == 0)
		return (int8_t)w->scale0;
	/* m >= 1, so the shift stays below 24 */
	while (s + k < w->scale0 && ((uint64_t)m << (k + 1)) <= lim)
		k++;
	return (int8_t)(s + k);
}

/* A result (clean or OVERFLOW) for chunk c of tree tr arrived at now: take
 * an RTT sample if c was sent once (Karn), update the tree's timeout
 * (RFC 6298 smoothing, clamped), and mark for retransmission now the chunks
 * sent at least INART_WORKER_FAST_RETX transmissions before c that still
 * have no result and were not retransmitted yet (fast retransmission: the
 * results come back in sending order but for losses). */
static void answered(struct inart_worker *w, struct wtree *tr, const struct wchunk *c, uint64_t now)
{
	if (c->state == C_INFLIGHT && c->retries == 0 && now >= c->sent_at) {
		uint64_t r = now - c->sent_at, lo = w->retx_ns / INART_WORKER_RTO_MIN_DIV,
			 hi = w->retx_ns * INART_WORKER_RTO_MAX_MUL, rto;

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
		tr->rto = rto < lo ? lo : rto > hi ? hi : rto;
	}
	if (c->state != C_INFLIGHT || c->retries != 0)
		return; /* a retransmitted chunk's answer says nothing about order */
	for (uint32_t s = tr->base; s < tr->next; s++) {
		struct wchunk *u = &w->ch[tr->chunk0 + s];

		if (u->state == C_INFLIGHT && u->retries == 0 && u->deadline > now &&
		    (int32_t)(c->txn - u->txn) >= INART_WORKER_FAST_RETX) {
			u->deadline = now;
			u->fast = 1;
		}
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

int inart_worker_rx(struct inart_worker *w, const uint8_t *data, size_t len, uint64_t now_ns)
{
	struct inart_wire_hdr h;
	const uint8_t *payload;
	struct wtree *tr;
	struct wchunk *c;
	int full, ns;

	if (w == NULL)
		return -EINVAL;
	if (data == NULL || inart_wire_decode(data, len, &h, &payload) != INART_WIRE_OK ||
	    !(h.flags & INART_F_RESULT) || h.job != w->cfg.job || h.fan_in != w->cfg.n_workers ||
	    h.bitmap_words != w->bw || h.tree >= w->cfg.n_trees) {
		w->st.dropped++;
		return -EINVAL;
	}
	if (!w->active || h.iter != w->iter) {
		w->st.duplicates++; /* a late copy from an earlier all-reduce */
		return -EALREADY;
	}
	tr = &w->trees[h.tree];
	if (h.seq >= tr->n_chunks) {
		w->st.dropped++;
		return -EINVAL;
	}
	c = &w->ch[tr->chunk0 + h.seq];
	if (c->state == C_DONE) {
		w->st.duplicates++;
		return -EALREADY;
	}
	full = full_bitmap(w, h.bitmap);
	if (!(h.flags & INART_F_OVERFLOW)) {
		size_t off = tr->off + (size_t)h.seq * (size_t)w->vpp;
		double f = ldexp(1.0, -h.scale_exp);
		uint32_t m = 0;

		if (!full || h.count != chunk_len(w, tr, h.seq)) {
			w->st.dropped++;
			return -EINVAL;
		}
		for (int i = 0; i < h.count; i++) {
			int32_t v = get_be32(payload + 4 * (size_t)i);
			uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;

			w->res[off + (size_t)i] = (float)((double)v * f);
			if (a > m)
				m = a;
		}
		answered(w, tr, c, now_ns);
		c->state = C_DONE;
		c->scale = h.scale_exp;
		w->next_scale[tr->chunk0 + h.seq] = next_start(w, h.scale_exp, m);
		w->done_chunks++;
		w->st.results++;
		while (tr->base < tr->n_chunks && w->ch[tr->chunk0 + tr->base].state == C_DONE)
			tr->base++;
		if (tr->next < tr->base)
			tr->next = tr->base;
		return 0;
	}
	/* OVERFLOW: a complete result at scale s means "s overflowed, use
	 * lower(s)"; a notice (incomplete bitmap) at s means "the chunk is at
	 * s now".  Anything not below our scale is old news. */
	if (full && h.scale_exp <= c->scale)
		ns = inart_quant_lower(h.scale_exp);
	else if (!full && h.scale_exp < c->scale)
		ns = h.scale_exp;
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
