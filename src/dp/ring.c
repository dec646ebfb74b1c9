/*
 * ring: one worker of a ring all-reduce, sans I/O (protocol in ring.h,
 * docs/dataplane.md "Ring all-reduce", packets in docs/wire.md).
 *
 * Invariants: seqs [una, next) are the messages in flight (next - una <=
 * window), every seq below una is acknowledged, acked_n counts the
 * acknowledged ones; rbits holds the messages received, cum_r the lowest
 * missing; acc and res are written once per value range per all-reduce (a
 * received message sets its bit first, and the bit is never cleared within
 * the step), so what a message is sent from never changes.  Ownership: the
 * ring owns its arrays (own points at its copy of the input).
 */
#include "dp/ring.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "common/err.h"
#include "common/slab.h"
#include "dp/pace.h"
#include "dp/pkt.h"
#include "dp/quant.h"

enum { ST_IDLE, ST_RUNNING, ST_DONE, ST_FAILED };

struct msg_tx {
	uint64_t t;    /* last transmission */
	uint8_t tx;    /* transmissions (saturating) */
	uint8_t shift; /* timeout backoff */
	uint8_t acked;
	uint8_t fast; /* 1: resend asked by a SACK hole; 2: done until the next timeout */
};

struct stash_meta {
	uint32_t ip;
	uint16_t port, len;
};

struct inart_ring {
	struct inart_ring_cfg cfg;
	int N, V, window;
	int state;
	uint32_t iter;
	int have_last;
	uint32_t last_iter, last_mr;
	/* the all-reduce */
	const float *own;
	size_t n;
	void *call;		 /* the all-reduce's arrays below (call_lay_out) */
	size_t call_size;	 /* bytes call holds */
	float *in, *acc, *res;	 /* own values (copied at begin), partial sums, results */
	uint32_t *off_s, *off_r; /* 2(N-1) + 1 message offsets each */
	uint32_t ms, mr;
	struct msg_tx *tx;
	uint64_t *rbits;
	uint32_t una, next, acked_n;
	uint32_t recv_n, cum_r;
	int ack_pending, old_ack_pending;
	uint64_t t0, heard_prev, heard_next, last_poll;
	uint64_t pace_at;  /* paced: the next DATA packet may go then */
	uint64_t sched_at; /* the plan's time of the next one (pace.h); 0: none yet */
	/* timer */
	uint64_t srtt, rttvar, rto;
	int samples;
	int which;
	/* DATA of the next step, before begin */
	int n_stash, replay;
	uint32_t stash_iter;
	struct stash_meta *smeta;
	uint8_t (*sbuf)[INART_DGRAM_MAX];
	struct inart_ring_stats st;
};

static uint32_t pred(const struct inart_ring *r)
{
	return (uint32_t)((r->cfg.pos + r->N - 1) % r->N);
}

static uint32_t succ(const struct inart_ring *r)
{
	return (uint32_t)((r->cfg.pos + 1) % r->N);
}

static size_t chunk_lo(const struct inart_ring *r, int c)
{
	return (size_t)((unsigned __int128)c * r->n / (unsigned)r->N);
}

/* The chunk message m of position p carries. */
static int chunk_of(const struct inart_ring *r, int p, int m)
{
	int N = r->N;

	if (m < N - 1)
		return ((p - m) % N + N) % N;
	return ((p + 1 - (m - (N - 1))) % N + N) % N;
}

static uint32_t chunk_packets(const struct inart_ring *r, int c)
{
	size_t len = chunk_lo(r, c + 1) - chunk_lo(r, c);

	return (uint32_t)((len + (size_t)r->V - 1) / (size_t)r->V);
}

static void offsets(const struct inart_ring *r, int p, uint32_t *off)
{
	int nm = 2 * (r->N - 1);

	off[0] = 0;
	for (int m = 0; m < nm; m++)
		off[m + 1] = off[m] + chunk_packets(r, chunk_of(r, p, m));
}

/* The message of seq: off[m] <= seq < off[m + 1]. */
static int msg_of(const struct inart_ring *r, const uint32_t *off, uint32_t seq)
{
	int lo = 0, hi = 2 * (r->N - 1); /* off[hi] > seq */

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (off[mid] <= seq)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Value range of packet k of chunk c. */
static void packet_range(const struct inart_ring *r, int c, uint32_t k, size_t *lo, int *cnt)
{
	size_t a = chunk_lo(r, c) + (size_t)k * (size_t)r->V, b = chunk_lo(r, c + 1);

	*lo = a;
	*cnt = (int)(b - a < (size_t)r->V ? b - a : (size_t)r->V);
}

static int rbit(const struct inart_ring *r, uint32_t seq)
{
	return (int)(r->rbits[seq / 64] >> (seq % 64) & 1);
}

/* The ring and its fixed-size arrays in one block (common/slab.h): the
 * message offsets off_s, off_r (2N each) and the stash (window entries). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_ring *r = obj;

	r->off_s = inart_slab_take(s, (size_t)(2 * r->N), sizeof(*r->off_s));
	r->off_r = inart_slab_take(s, (size_t)(2 * r->N), sizeof(*r->off_r));
	r->smeta = inart_slab_take(s, (size_t)r->window, sizeof(*r->smeta));
	r->sbuf = inart_slab_take(s, (size_t)r->window, sizeof(*r->sbuf));
}

struct inart_ring *inart_ring_create(const struct inart_ring_cfg *cfg)
{
	struct inart_ring proto = {0};

	if (cfg == NULL || cfg->size == 0 || cfg->size > INART_RING_MAX_WORKERS ||
	    cfg->pos >= cfg->size || cfg->values_per_packet > INART_WIRE_RING_MAX_VALUES)
		return inart_null_errno(EINVAL);
	proto.cfg = *cfg;
	proto.N = cfg->size;
	proto.V = cfg->values_per_packet ? cfg->values_per_packet : INART_WIRE_RING_MAX_VALUES;
	proto.window = cfg->window ? cfg->window : INART_RING_DEFAULT_WINDOW;
	if (proto.cfg.retx_timeout_ns == 0)
		proto.cfg.retx_timeout_ns = INART_RING_DEFAULT_RETX_NS;
	proto.rto = proto.cfg.retx_timeout_ns;
	return inart_slab_new(&proto, sizeof(proto), lay_out);
}

void inart_ring_destroy(struct inart_ring *r)
{
	if (r == NULL)
		return;
	free(r->call);
	free(r); /* and off_s, off_r, smeta, sbuf (lay_out) */
}

static void check_done(struct inart_ring *r)
{
	if (r->state == ST_RUNNING && r->recv_n == r->mr && r->acked_n == r->ms) {
		r->state = ST_DONE;
		r->have_last = 1;
		r->last_iter = r->iter;
		r->last_mr = r->mr;
	}
}

/* The arrays of one all-reduce in one block (common/slab.h): in, acc and
 * res (n values each), tx (ms + 1 messages), rbits (a bit per received
 * message). */
static void call_lay_out(struct inart_ring *r, struct inart_slab *s)
{
	r->in = inart_slab_take(s, r->n, sizeof(*r->in));
	r->acc = inart_slab_take(s, r->n, sizeof(*r->acc));
	r->res = inart_slab_take(s, r->n, sizeof(*r->res));
	r->tx = inart_slab_take(s, (size_t)r->ms + 1, sizeof(*r->tx));
	r->rbits = inart_slab_take(s, (size_t)r->mr / 64 + 1, sizeof(*r->rbits));
}

/* Lay the arrays of the all-reduce of r->n values out in r->call, a new
 * block only when it is too small.  0 or -ENOMEM (r->call kept). */
static int call_arrays(struct inart_ring *r)
{
	struct inart_slab s = INART_SLAB_INIT;
	struct inart_ring sizing = *r;

	call_lay_out(&sizing, &s);
	if (!s.overflow && s.used <= r->call_size) {
		s = (struct inart_slab){.base = r->call, .size = r->call_size, .align = s.align};
	} else {
		if (inart_slab_alloc(&s) < 0)
			return -ENOMEM;
		free(r->call);
		r->call = s.base;
		r->call_size = s.size;
	}
	call_lay_out(r, &s);
	return 0;
}

int inart_ring_begin(struct inart_ring *r, const float *buf, size_t n, uint32_t iter)
{
	if (r == NULL || (buf == NULL && n > 0))
		return -EINVAL;
	if (r->state == ST_RUNNING)
		return -EBUSY;
	if (r->have_last && (int32_t)(iter - r->last_iter) <= 0)
		return -EINVAL;
	if (!inart_quant_finite(buf, n))
		return -EINVAL;
	r->n = n;
	offsets(r, r->cfg.pos, r->off_s);
	offsets(r, (int)pred(r), r->off_r);
	r->ms = r->off_s[2 * (r->N - 1)];
	r->mr = r->off_r[2 * (r->N - 1)];
	if (call_arrays(r) < 0)
		return -ENOMEM;
	if (n > 0)
		memcpy(r->in, buf, n * sizeof(float));
	r->own = r->in;
	memset(r->tx, 0, ((size_t)r->ms + 1) * sizeof(*r->tx));
	memset(r->rbits, 0, ((size_t)r->mr / 64 + 1) * sizeof(*r->rbits));
	r->iter = iter;
	r->una = r->next = r->acked_n = 0;
	r->recv_n = r->cum_r = 0;
	r->ack_pending = 0;
	r->t0 = 0;
	r->sched_at = 0;
	r->which = INART_RING_SILENT_NONE;
	r->samples = 0; /* every all-reduce warms up again */
	r->rto = r->cfg.retx_timeout_ns;
	r->state = ST_RUNNING;
	if (r->N == 1 && n > 0)
		memcpy(r->res, buf, n * sizeof(float));
	r->replay = r->n_stash > 0;
	check_done(r);
	return 0;
}

static void rtt_sample(struct inart_ring *r, uint64_t s)
{
	uint64_t init = r->cfg.retx_timeout_ns, v;

	if (r->samples == 0) {
		r->srtt = s;
		r->rttvar = s / 2;
	} else {
		uint64_t d = r->srtt > s ? r->srtt - s : s - r->srtt;

		r->rttvar = (3 * r->rttvar + d) / 4;
		r->srtt = (7 * r->srtt + s) / 8;
	}
	r->samples++;
	v = r->srtt + 4 * r->rttvar;
	if (r->samples < INART_RING_RTO_WARMUP && v < init)
		v = init;
	if (v < 3 * r->srtt)
		v = 3 * r->srtt;
	if (v < init / 64)
		v = init / 64;
	if (v > init * 8)
		v = init * 8;
	r->rto = v;
}

static uint64_t due_of(const struct inart_ring *r, const struct msg_tx *m)
{
	uint64_t t = r->rto << m->shift;

	if (t > INART_RING_MAX_RTO_NS && r->rto <= INART_RING_MAX_RTO_NS)
		t = INART_RING_MAX_RTO_NS;
	return m->t + t;
}

static void mark_acked(struct inart_ring *r, uint32_t seq, uint64_t *best_t)
{
	struct msg_tx *m = &r->tx[seq];

	if (m->acked || seq >= r->next)
		return;
	m->acked = 1;
	r->acked_n++;
	if (m->tx == 1 && m->t > *best_t)
		*best_t = m->t;
}

static int rx_ack(struct inart_ring *r, const struct inart_wire_ring *h, uint64_t now)
{
	uint64_t best_t = 0;
	uint32_t cum, high = 0;

	if (r->state != ST_RUNNING || h->iter != r->iter) {
		r->st.stale++;
		return -ESTALE;
	}
	r->heard_next = now;
	r->st.acks++;
	if (h->flags & INART_RING_F_DONE) {
		if (h->seq != r->ms) {
			r->st.dropped++;
			return -EINVAL;
		}
		cum = r->ms;
	} else if (h->seq > r->ms) {
		r->st.dropped++;
		return -EINVAL;
	} else {
		cum = h->seq;
	}
	for (uint32_t s = r->una; s < cum && s < r->next; s++)
		mark_acked(r, s, &best_t);
	for (int i = 0; i < 64; i++) {
		uint64_t s = (uint64_t)cum + 1 + (uint64_t)i;

		if ((h->sack >> i & 1) && s < r->next) {
			mark_acked(r, (uint32_t)s, &best_t);
			high = (uint32_t)s;
		}
	}
	if (best_t > 0 && now >= best_t)
		rtt_sample(r, now - best_t);
	while (r->una < r->next && r->tx[r->una].acked)
		r->una++;
	/* holes below a SACKed message: resend once per timeout */
	for (uint32_t s = r->una; s < high; s++) {
		struct msg_tx *m = &r->tx[s];

		if (!m->acked && m->fast == 0 && now - m->t > r->srtt / 2)
			m->fast = 1;
	}
	check_done(r);
	return 0;
}

static void stash(struct inart_ring *r, const uint8_t *data, size_t len, uint32_t ip, uint16_t port,
		  const struct inart_wire_ring *h)
{
	if (r->n_stash > 0 && r->stash_iter != h->iter)
		r->n_stash = 0; /* a newer step: the older one cannot be begun any more */
	for (int i = 0; i < r->n_stash; i++) {
		struct inart_wire_ring o;

		if (inart_wire_ring_decode(r->sbuf[i], r->smeta[i].len, &o, NULL) ==
			INART_WIRE_OK &&
		    o.seq == h->seq)
			return;
	}
	if (r->n_stash == r->window)
		return;
	r->stash_iter = h->iter;
	memmove(r->sbuf[r->n_stash], data, len); /* a replayed entry may come back */
	r->smeta[r->n_stash] = (struct stash_meta){ip, port, (uint16_t)len};
	r->n_stash++;
	r->st.stashed++;
}

static int rx_data(struct inart_ring *r, const struct inart_wire_ring *h, const uint8_t *pl,
		   uint64_t now)
{
	int m, c, cnt;
	uint32_t k;
	size_t lo;
	float *dst;

	if (h->seq >= r->mr) {
		r->st.dropped++;
		return -EINVAL;
	}
	m = msg_of(r, r->off_r, h->seq);
	c = chunk_of(r, (int)pred(r), m);
	k = h->seq - r->off_r[m];
	packet_range(r, c, k, &lo, &cnt);
	if (cnt != h->count) {
		r->st.dropped++;
		return -EINVAL;
	}
	r->heard_prev = now;
	r->ack_pending = 1;
	if (rbit(r, h->seq)) {
		r->st.duplicates++;
		return -EALREADY;
	}
	dst = m < r->N - 2 ? r->acc : r->res;
	for (int i = 0; i < cnt; i++) {
		uint32_t u = inart_get_be32(pl + 4 * (size_t)i);
		float v;

		memcpy(&v, &u, 4);
		dst[lo + (size_t)i] = m <= r->N - 2 ? v + r->own[lo + (size_t)i] : v;
	}
	r->rbits[h->seq / 64] |= 1ull << (h->seq % 64);
	r->recv_n++;
	while (r->cum_r < r->mr && rbit(r, r->cum_r))
		r->cum_r++;
	r->st.received++;
	check_done(r);
	return 0;
}

int inart_ring_rx(struct inart_ring *r, const uint8_t *data, size_t len, uint32_t src_ip,
		  uint16_t src_port, uint64_t now_ns)
{
	struct inart_wire_ring h;
	const uint8_t *pl;
	int from_prev;

	if (r == NULL || data == NULL ||
	    inart_wire_ring_decode(data, len, &h, &pl) != INART_WIRE_OK) {
		if (r != NULL)
			r->st.dropped++;
		return -EINVAL;
	}
	from_prev = h.type == INART_RING_T_DATA;
	if (h.job != r->cfg.job || h.size != r->N || src_port != INART_WIRE_RING_PORT ||
	    src_ip != (from_prev ? r->cfg.prev_ip : r->cfg.next_ip) ||
	    h.from != (from_prev ? pred(r) : succ(r))) {
		r->st.foreign++;
		return -EPERM;
	}
	if (h.type == INART_RING_T_ACK)
		return rx_ack(r, &h, now_ns);
	if (r->state == ST_RUNNING && h.iter == r->iter)
		return rx_data(r, &h, pl, now_ns);
	if (r->have_last && h.iter == r->last_iter) { /* our last ACKs were lost */
		r->old_ack_pending = 1;
		r->st.old_answered++;
		return 0;
	}
	/* the predecessor is a step ahead: keep its packets until begin */
	if (len <= INART_DGRAM_MAX &&
	    ((r->state == ST_IDLE && !r->have_last) ||
	     (r->state == ST_RUNNING ? h.iter == r->iter + 1 : (int32_t)(h.iter - r->iter) > 0))) {
		stash(r, data, len, src_ip, src_port, &h);
		return 0;
	}
	r->st.stale++;
	return -ESTALE;
}

/* One DATA datagram of message seq into d. */
static int paced(const struct inart_ring *r, uint64_t now)
{
	return r->cfg.pace_Bps > 0 && now < r->pace_at;
}

static void emit_data(struct inart_ring *r, uint32_t seq, uint64_t now, struct inart_dgram *d)
{
	int m = msg_of(r, r->off_s, seq), c = chunk_of(r, r->cfg.pos, m), cnt;
	uint32_t k = seq - r->off_s[m];
	struct msg_tx *t = &r->tx[seq];
	const float *src = m == 0 ? r->own : m <= r->N - 2 ? r->acc : r->res;
	struct inart_wire_ring h = {0};
	size_t lo;

	packet_range(r, c, k, &lo, &cnt);
	h.type = INART_RING_T_DATA;
	h.flags = t->tx > 0 ? INART_RING_F_RETX : 0;
	h.job = r->cfg.job;
	h.from = r->cfg.pos;
	h.size = (uint16_t)r->N;
	h.iter = r->iter;
	h.seq = seq;
	h.count = (uint16_t)cnt;
	d->peer_ip = r->cfg.next_ip;
	d->peer_port = INART_WIRE_RING_PORT;
	d->len = (uint16_t)inart_wire_ring_encode(&h, src + lo, d->data, INART_DGRAM_MAX);
	if (r->cfg.pace_Bps > 0) {
		uint64_t f = (uint64_t)((double)(INART_PKT_UDP_HLEN + d->len) * 1e9 /
					r->cfg.pace_Bps),
			 credit =
			     (uint64_t)(INART_RING_PACE_BURST * 1514.0 * 1e9 / r->cfg.pace_Bps);

		inart_pace_charge(&r->pace_at, f, credit, now);
		if (r->cfg.pace_lead_ns) {
			uint64_t gate;

			inart_pace_sched_charge(&r->sched_at, r->cfg.plan_Bps,
						INART_PKT_UDP_HLEN + d->len, now);
			gate = inart_pace_sched_gate(r->sched_at, r->cfg.pace_lead_ns);
			if (r->pace_at < gate)
				r->pace_at = gate;
		}
	}
	if (t->tx > 0)
		r->st.retransmitted++;
	if (t->tx < 255)
		t->tx++;
	t->t = now;
	r->st.sent++;
}

static void emit_ack(struct inart_ring *r, uint32_t iter, uint32_t seq, uint64_t sack, int done,
		     struct inart_dgram *d)
{
	struct inart_wire_ring h = {0};

	h.type = INART_RING_T_ACK;
	h.flags = done ? INART_RING_F_DONE : 0;
	h.job = r->cfg.job;
	h.from = r->cfg.pos;
	h.size = (uint16_t)r->N;
	h.iter = iter;
	h.seq = seq;
	h.sack = sack;
	d->peer_ip = r->cfg.prev_ip;
	d->peer_port = INART_WIRE_RING_PORT;
	d->len = (uint16_t)inart_wire_ring_encode(&h, NULL, d->data, INART_DGRAM_MAX);
	r->st.acks_sent++;
}

static uint64_t sack_of(const struct inart_ring *r)
{
	uint64_t s = 0;

	for (int i = 0; i < 64; i++) {
		uint64_t q = (uint64_t)r->cum_r + 1 + (uint64_t)i;

		if (q < r->mr && rbit(r, (uint32_t)q))
			s |= 1ull << i;
	}
	return s;
}

static void replay_stash(struct inart_ring *r, uint64_t now)
{
	int n = r->n_stash;

	r->replay = 0;
	r->n_stash = 0;
	for (int i = 0; i < n; i++)
		inart_ring_rx(r, r->sbuf[i], r->smeta[i].len, r->smeta[i].ip, r->smeta[i].port,
			      now);
}

static int stalled(const struct inart_ring *r, uint64_t now)
{
	return r->una < r->next && now > r->heard_next + INART_RING_STALL_RTOS * r->rto;
}

static void check_give_up(struct inart_ring *r, uint64_t now)
{
	uint64_t g = r->cfg.give_up_ns;

	if (g == 0 || r->state != ST_RUNNING)
		return;
	if (r->recv_n < r->mr && now >= r->heard_prev + g)
		r->which = INART_RING_SILENT_PREV;
	else if (r->acked_n < r->ms && now >= r->heard_next + g)
		r->which = INART_RING_SILENT_NEXT;
	if (r->which != INART_RING_SILENT_NONE)
		r->state = ST_FAILED;
}

/* The next message may go for the first time: in the window, and its data
 * (packet k of the predecessor's message m - 1) arrived. */
static int ready(const struct inart_ring *r)
{
	int m;

	if (r->next >= r->ms || r->next >= r->una + (uint32_t)r->window)
		return 0;
	m = msg_of(r, r->off_s, r->next);
	return m == 0 || rbit(r, r->off_r[m - 1] + (r->next - r->off_s[m]));
}

int inart_ring_poll(struct inart_ring *r, uint64_t now, struct inart_dgram *out, int max_out)
{
	int n = 0;

	if (r == NULL || out == NULL)
		return 0;
	if (r->replay && r->state == ST_RUNNING)
		replay_stash(r, now);
	if (r->state == ST_RUNNING && r->t0 == 0) {
		r->t0 = now ? now : 1;
		r->heard_prev = r->heard_next = now;
	}
	if (r->ack_pending && n < max_out && r->state != ST_IDLE) {
		emit_ack(r, r->iter, r->cum_r, sack_of(r), r->recv_n == r->mr, &out[n++]);
		r->ack_pending = 0;
	}
	if (r->old_ack_pending && n < max_out) {
		emit_ack(r, r->last_iter, r->last_mr, 0, 1, &out[n++]);
		r->old_ack_pending = 0;
	}
	check_give_up(r, now);
	r->last_poll = now;
	if (r->state != ST_RUNNING)
		return n;
	if (stalled(r, now)) {
		struct msg_tx *m = &r->tx[r->una];

		for (uint32_t s = r->una; s < r->next; s++)
			if (r->tx[s].fast == 1)
				r->tx[s].fast = 2; /* no SACK resends while stalled */
		if (n < max_out && now >= due_of(r, m) && !paced(r, now)) {
			if (m->shift < INART_RING_MAX_SHIFT)
				m->shift++;
			emit_data(r, r->una, now, &out[n++]);
			r->st.stalls++;
		}
		return n;
	}
	for (uint32_t s = r->una; s < r->next && n < max_out && !paced(r, now); s++) {
		struct msg_tx *m = &r->tx[s];

		if (m->acked)
			continue;
		if (m->fast == 1) {
			m->fast = 2;
			r->st.fast_retx++;
			emit_data(r, s, now, &out[n++]);
		} else if (now >= due_of(r, m)) {
			if (m->shift < INART_RING_MAX_SHIFT)
				m->shift++;
			m->fast = 0;
			emit_data(r, s, now, &out[n++]);
		}
	}
	while (n < max_out && ready(r) && !paced(r, now))
		emit_data(r, r->next++, now, &out[n++]);
	return n;
}

uint64_t inart_ring_next_deadline(const struct inart_ring *r)
{
	uint64_t d = UINT64_MAX, dd = UINT64_MAX;

	if (r == NULL)
		return d;
	if (r->old_ack_pending || (r->ack_pending && r->state != ST_IDLE))
		return 0;
	if (r->state != ST_RUNNING)
		return d;
	if (r->t0 == 0 || r->replay)
		return 0;
	if (r->cfg.give_up_ns) {
		if (r->recv_n < r->mr)
			d = r->heard_prev + r->cfg.give_up_ns;
		if (r->acked_n < r->ms && r->heard_next + r->cfg.give_up_ns < d)
			d = r->heard_next + r->cfg.give_up_ns;
	}
	if (stalled(r, r->last_poll)) { /* only the oldest message acts */
		dd = due_of(r, &r->tx[r->una]);
	} else if (ready(r)) {
		dd = 0;
	} else {
		for (uint32_t s = r->una; s < r->next; s++) {
			const struct msg_tx *m = &r->tx[s];
			uint64_t t = m->fast == 1 ? 0 : due_of(r, m);

			if (!m->acked && t < dd)
				dd = t;
		}
	}
	if (dd != UINT64_MAX && r->cfg.pace_Bps > 0 && dd < r->pace_at)
		dd = r->pace_at; /* DATA waits for the rate */
	return dd < d ? dd : d;
}

int inart_ring_running(const struct inart_ring *r, uint32_t *iter, size_t *n)
{
	if (r == NULL || r->state != ST_RUNNING)
		return 0;
	if (iter != NULL)
		*iter = r->iter;
	if (n != NULL)
		*n = r->n;
	return 1;
}

int inart_ring_done(const struct inart_ring *r)
{
	return r != NULL && r->state == ST_DONE;
}

int inart_ring_failed(const struct inart_ring *r, int *which)
{
	if (which != NULL)
		*which = r ? r->which : INART_RING_SILENT_NONE;
	return r != NULL && r->state == ST_FAILED ? -ETIMEDOUT : 0;
}

int inart_ring_result(const struct inart_ring *r, float *out, size_t n)
{
	if (r == NULL || (out == NULL && n > 0) || n != r->n)
		return -EINVAL;
	if (r->state != ST_DONE)
		return -EAGAIN;
	if (n > 0)
		memcpy(out, r->res, n * sizeof(float));
	return 0;
}

void inart_ring_stats(const struct inart_ring *r, struct inart_ring_stats *st)
{
	if (r != NULL && st != NULL)
		*st = r->st;
}
