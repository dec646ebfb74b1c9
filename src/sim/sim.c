/*
 * sim: the simulated fabric (see sim.h for the model): frames on links,
 * events, the cores' wake-ups, failures and stalls, the run.  The cores an
 * installation puts on the nodes: sim_cores.c; the state both share:
 * sim_impl.h.
 *
 * Invariants: every event in the heap is either a frame delivery owning its
 * packet buffer, a core wake-up (stale unless its time equals the node's
 * wake_ps: lazy deletion when a wake-up moves earlier), or a failure.  Time
 * only moves forward: events are never scheduled before `now`.  Each link
 * draws its faults from its own generator (seeded from the seed and the arc
 * number), so a link's fault sequence does not depend on other links.
 *
 * Ownership: the simulator owns its cores, packet buffers (a free list,
 * recycled; freed at destroy) and queues; the topology and deployment belong
 * to the caller.
 */
#include "sim/sim.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "dp/pkt.h"
#include "sim/sim_impl.h"

#define PS_PER_NS 1000ull
#define NONE UINT64_MAX
#define WORKER_MAX_OUT 64
#define STALL_PS (1000 * PS_PER_NS) /* a core that asks to run but does nothing */

enum { EV_DELIVER = 1, EV_WAKE_HOST, EV_WAKE_SW, EV_FAIL, EV_STALL, EV_TABLES };

struct pkt {
	struct pkt *next;
	uint16_t len;
	uint8_t data[INART_FRAME_MAX];
};

/* ---- a worker: the INA worker core, or a ring job's (dp/ring) ---- */

static uint64_t wrk_deadline(const struct wrk *wk)
{
	return wk->r ? inart_ring_next_deadline(wk->r) : inart_worker_next_deadline(wk->w);
}

static int wrk_poll(struct wrk *wk, uint64_t now, struct inart_dgram *out, int max)
{
	return wk->r ? inart_ring_poll(wk->r, now, out, max)
		     : inart_worker_poll(wk->w, now, out, max);
}

static int wrk_done(const struct wrk *wk)
{
	return wk->r ? inart_ring_done(wk->r) : inart_worker_done(wk->w);
}

/* Ended without a result: a step notice, or a ring whose peer went silent. */
static int wrk_stale(const struct wrk *wk)
{
	return wk->r ? inart_ring_failed(wk->r, NULL) != 0 : inart_worker_stale(wk->w, NULL);
}

/* ---- packets and links ---- */

static struct pkt *pkt_get(struct inart_sim *s)
{
	struct pkt *p = s->free_pkts;

	if (p != NULL) {
		s->free_pkts = p->next;
		return p;
	}
	return malloc(sizeof(*p));
}

static void pkt_put(struct inart_sim *s, struct pkt *p)
{
	p->next = s->free_pkts;
	s->free_pkts = p;
}

static uint64_t ser_ps(const struct inart_sim *s, const struct link *l, size_t len)
{
	double bits = (double)(len + (size_t)s->o.overhead_bytes) * 8.0;

	return (uint64_t)llround(bits * 1000.0 / l->gbps);
}

static int schedule(struct inart_sim *s, uint64_t t, int type, int a, void *p)
{
	return inart_sim_evq_push(&s->q, t < s->now ? s->now : t, type, a, p);
}

/* Forget the frames whose serialization ended. */
static void ring_purge(const struct inart_sim *s, struct link *l)
{
	while (l->ring_n > 0 && l->ring[l->ring_head] <= s->now) {
		l->ring_head = (l->ring_head + 1) % l->ring_cap;
		l->ring_n--;
	}
}

static int ring_grow(struct link *l)
{
	int cap = l->ring_cap ? 2 * l->ring_cap : 64;
	uint64_t *r = malloc((size_t)cap * sizeof(uint64_t));

	if (r == NULL)
		return -ENOMEM;
	for (int i = 0; i < l->ring_n; i++)
		r[i] = l->ring[(l->ring_head + i) % l->ring_cap];
	free(l->ring);
	l->ring = r;
	l->ring_cap = cap;
	l->ring_head = 0;
	return 0;
}

/* Send a frame on arc e now.  0, or -ENOBUFS (tail drop), -ENOMEM. */
static int link_send(struct inart_sim *s, int e, const uint8_t *data, size_t len)
{
	struct link *l = &s->links[e];
	int copies = 1;
	uint64_t start, end, at;

	ring_purge(s, l);
	if (l->limit > 0 && l->ring_n >= l->limit) {
		l->st.queue_drops++;
		return -ENOBUFS;
	}
	if (l->ring_n == l->ring_cap && ring_grow(l) < 0)
		return -ENOMEM;
	start = l->busy_until > s->now ? l->busy_until : s->now;
	end = start + ser_ps(s, l, len);
	l->st.wait_ps += start - s->now;
	if (start - s->now > l->st.wait_max_ps)
		l->st.wait_max_ps = start - s->now;
	l->st.busy_ps += end - start;
	l->busy_until = end;
	l->ring[(l->ring_head + l->ring_n++) % l->ring_cap] = end;
	l->st.tx_pkts++;
	l->st.tx_bytes += len;
	at = end + s->o.prop_ns * PS_PER_NS;
	if (l->loss > 0 && inart_rng_unit(&l->rng) < l->loss) {
		l->st.lost++;
		return 0;
	}
	if (l->dup > 0 && inart_rng_unit(&l->rng) < l->dup) {
		l->st.duplicated++;
		copies = 2;
	}
	if (l->reorder > 0 && inart_rng_unit(&l->rng) < l->reorder) {
		l->st.reordered++;
		at += 1 + inart_rng_below(&l->rng, s->o.reorder_ns * PS_PER_NS);
	}
	for (int c = 0; c < copies; c++) {
		struct pkt *p = pkt_get(s);

		if (p == NULL)
			return -ENOMEM;
		p->len = (uint16_t)len;
		memcpy(p->data, data, len);
		if (schedule(s, at, EV_DELIVER, e, p) < 0) {
			pkt_put(s, p);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---- wake-ups ---- */

static void wake_at(struct inart_sim *s, int v, uint64_t dl_ns, int did_work)
{
	struct node *nd = &s->nodes[v];
	uint64_t t;

	if (dl_ns == NONE || dl_ns > NONE / PS_PER_NS)
		return;
	t = dl_ns * PS_PER_NS;
	if (t <= s->now)
		t = did_work ? s->now : s->now + STALL_PS;
	if (nd->wake != NONE && nd->wake <= t)
		return;
	nd->wake = t;
	schedule(s, t, nd->is_sw ? EV_WAKE_SW : EV_WAKE_HOST, v, NULL);
}

static void sw_emit(struct inart_sim *s, struct node *nd, int n)
{
	for (int i = 0; i < n; i++) {
		const struct inart_frame *f = &s->fout[i];

		if (f->port < nd->n_ports)
			link_send(s, nd->port_arc[f->port], f->data, f->len);
	}
}

static void host_send(struct inart_sim *s, int v, const struct inart_dgram *dg)
{
	struct node *nd = &s->nodes[v];
	uint8_t frame[INART_FRAME_MAX];
	size_t len;

	if (nd->arc < 0)
		return;
	len = inart_pkt_build_udp(
	    frame, sizeof(frame), s->d->mac[v], nd->next_mac, s->d->ip[v], dg->peer_ip,
	    dg->peer_port == INART_WIRE_RING_PORT ? INART_WIRE_RING_PORT : INART_WIRE_UDP_PORT,
	    dg->peer_port, dg->data, dg->len);
	if (len == 0)
		return;
	nd->st.tx++;
	link_send(s, nd->arc, frame, len);
}

static uint64_t now_ns(const struct inart_sim *s)
{
	return s->now / PS_PER_NS;
}

/* Frames the host may still hand to its link (send buffer), INT_MAX if
 * unlimited. */
static int host_room(struct inart_sim *s, const struct node *nd)
{
	struct link *l;

	if (s->o.host_queue_pkts <= 0 || nd->arc < 0)
		return INT_MAX;
	l = &s->links[nd->arc];
	ring_purge(s, l);
	return l->ring_n < s->o.host_queue_pkts ? s->o.host_queue_pkts - l->ring_n : 0;
}

/* Poll the host's workers whose deadline passed, as far as the send buffer
 * allows; reschedule. */
static void host_wake(struct inart_sim *s, int v)
{
	struct node *nd = &s->nodes[v];
	uint64_t next = NONE;
	int did = 0, room = host_room(s, nd);

	for (int i = 0; i < nd->n_workers && room > 0; i++) {
		struct wrk *wk = &s->workers[nd->workers[i]];
		uint64_t dl = wrk_deadline(wk);
		int n, max;

		if (dl == NONE || dl > now_ns(s))
			continue;
		do {
			max = room < WORKER_MAX_OUT ? room : WORKER_MAX_OUT;
			n = wrk_poll(wk, now_ns(s), s->dout, max);
			for (int k = 0; k < n; k++)
				host_send(s, v, &s->dout[k]);
			did |= n > 0;
			if (room != INT_MAX)
				room -= n;
		} while (n == max && room > 0);
	}
	for (int i = 0; i < nd->n_workers; i++) {
		uint64_t dl = wrk_deadline(&s->workers[nd->workers[i]]);

		if (dl < next)
			next = dl;
	}
	if (room <= 0 && next != NONE) {
		/* blocked: wake when the oldest frame has left */
		const struct link *l = &s->links[nd->arc];
		uint64_t free_ns = (l->ring[l->ring_head] + PS_PER_NS - 1) / PS_PER_NS;

		if (next < free_ns)
			next = free_ns;
		did = 1;
	}
	wake_at(s, v, next, did);
}

static void worker_check_done(struct inart_sim *s, struct wrk *wk)
{
	if (wk->active && (wrk_done(wk) || wrk_stale(wk))) {
		wk->active = 0;
		s->remaining--;
		s->last_done = s->now;
		wk->done = s->now;
		if (!wrk_done(wk))
			s->stale++;
	}
}

/* A ring packet for host v: to its ring worker of the packet's job.  0 or
 * -ENOENT (no such worker: dropped). */
static int ring_rx(struct inart_sim *s, int v, const uint8_t *udp, size_t len, uint32_t src,
		   uint16_t sport)
{
	struct node *nd = &s->nodes[v];
	struct inart_wire_ring h;

	if (inart_wire_ring_decode(udp, len, &h, NULL) != INART_WIRE_OK)
		return -ENOENT;
	for (int i = 0; i < nd->n_workers; i++) {
		struct wrk *wk = &s->workers[nd->workers[i]];

		if (wk->r == NULL || wk->job != h.job)
			continue;
		inart_ring_rx(wk->r, udp, len, src, sport, now_ns(s));
		worker_check_done(s, wk);
		wake_at(s, v, wrk_deadline(wk), 1);
		return 0;
	}
	return -ENOENT;
}

static void host_rx(struct inart_sim *s, int v, const uint8_t *frame, size_t len)
{
	struct node *nd = &s->nodes[v];
	struct inart_pkt_info pi;
	struct inart_wire_hdr h;
	const uint8_t *payload, *udp;

	nd->st.rx++;
	if (s->now < nd->down_until) {
		nd->fail_drops++;
		goto drop;
	}
	if (inart_pkt_parse(frame, len, &pi) < 0 || pi.ethertype != INART_ETHERTYPE_IPV4 ||
	    !pi.is_udp || pi.dst_ip != s->d->ip[v])
		goto drop;
	udp = frame + pi.l4_payload_off;
	if (pi.dport == INART_WIRE_RING_PORT) {
		if (ring_rx(s, v, udp, pi.l4_payload_len, pi.src_ip, pi.sport) == 0)
			return;
		goto drop;
	}
	if (pi.dport != INART_WIRE_UDP_PORT)
		goto drop;
	if (inart_wire_decode(udp, pi.l4_payload_len, &h, &payload) != INART_WIRE_OK)
		goto drop;
	if (h.flags & INART_F_DATA) {
		int n;

		if (nd->ps == NULL)
			goto drop;
		n = inart_ps_rx(nd->ps, udp, pi.l4_payload_len, pi.src_ip, pi.sport, now_ns(s),
				s->dout, PS_MAX_OUT);
		for (int k = 0; k < n; k++)
			host_send(s, v, &s->dout[k]);
		return;
	}
	for (int i = 0; i < nd->n_workers; i++) {
		struct wrk *wk = &s->workers[nd->workers[i]];

		if (wk->w == NULL || wk->job != h.job)
			continue;
		inart_worker_rx(wk->w, udp, pi.l4_payload_len, pi.src_ip, pi.sport, now_ns(s));
		worker_check_done(s, wk);
		wake_at(s, v, inart_worker_next_deadline(wk->w), 1);
		return;
	}
drop:
	nd->st.dropped++;
}

static void sw_rx(struct inart_sim *s, int v, int in_port, const uint8_t *frame, size_t len)
{
	struct node *nd = &s->nodes[v];
	struct inart_frame in = {(uint8_t *)frame, (uint16_t)len, (uint16_t)in_port};
	int n;

	if (nd->sw == NULL || s->now < nd->down_until) {
		nd->fail_drops++;
		return;
	}
	n = inart_shards_rx(nd->sw, &in, now_ns(s), s->fout, SW_MAX_OUT);
	sw_emit(s, nd, n);
	wake_at(s, v, inart_shards_next_deadline(nd->sw), 1);
}

static void sw_wake(struct inart_sim *s, int v)
{
	struct node *nd = &s->nodes[v];
	int n;

	if (nd->sw == NULL)
		return;
	n = inart_shards_tick(nd->sw, now_ns(s), s->fout, SW_MAX_OUT);
	sw_emit(s, nd, n);
	wake_at(s, v, inart_shards_next_deadline(nd->sw), n > 0);
}

/* Event ev for node v arrived while v is stalled (its process had no CPU):
 * it waits until the stall ends, in order.  1 if deferred. */
static int stalled(struct inart_sim *s, const struct inart_sim_ev *ev, int v)
{
	struct node *nd = &s->nodes[v];

	if (s->now >= nd->stall_until)
		return 0;
	if (ev->type == EV_DELIVER) {
		schedule(s, nd->stall_until, EV_DELIVER, ev->a, ev->p);
		return 1;
	}
	if (nd->wake != ev->t)
		return 1; /* superseded anyway */
	nd->wake = nd->stall_until;
	schedule(s, nd->stall_until, ev->type, v, NULL);
	return 1;
}

static void process(struct inart_sim *s, const struct inart_sim_ev *ev)
{
	struct node *nd;

	s->now = ev->t;
	s->events++;
	if ((ev->type == EV_DELIVER && stalled(s, ev, s->t->arcs[ev->a].to)) ||
	    ((ev->type == EV_WAKE_HOST || ev->type == EV_WAKE_SW) && stalled(s, ev, ev->a)))
		return;
	switch (ev->type) {
	case EV_DELIVER: {
		struct pkt *p = ev->p;
		int e = ev->a, to = s->t->arcs[e].to;

		s->links[e].st.delivered++;
		if (s->tap)
			s->tap(s->tap_ctx, e, s->now, p->data, p->len);
		if (s->nodes[to].is_sw)
			sw_rx(s, to, s->d->port[e ^ 1], p->data, p->len);
		else
			host_rx(s, to, p->data, p->len);
		pkt_put(s, p);
		break;
	}
	case EV_WAKE_HOST:
	case EV_WAKE_SW:
		nd = &s->nodes[ev->a];
		if (nd->wake != ev->t)
			break; /* superseded */
		nd->wake = NONE;
		if (ev->type == EV_WAKE_SW)
			sw_wake(s, ev->a);
		else
			host_wake(s, ev->a);
		break;
	case EV_TABLES:
		if (inart_sim_put_tables(s, ev->p, &s->tables_err) < 0)
			s->tables_failed++;
		break;
	case EV_FAIL:
		nd = &s->nodes[ev->a];
		if (nd->sw)
			inart_shards_lose_state(nd->sw);
		if (nd->ps)
			inart_ps_lose_state(nd->ps);
		nd->down_until = s->now + *(uint64_t *)ev->p;
		free(ev->p);
		if (nd->sw)
			wake_at(s, ev->a, inart_shards_next_deadline(nd->sw), 1);
		break;
	case EV_STALL:
		nd = &s->nodes[ev->a];
		if (s->now + *(uint64_t *)ev->p > nd->stall_until)
			nd->stall_until = s->now + *(uint64_t *)ev->p;
		free(ev->p);
		break;
	}
}

uint64_t inart_sim_run(struct inart_sim *s, uint64_t until_ns)
{
	uint64_t until = until_ns > NONE / PS_PER_NS ? NONE : until_ns * PS_PER_NS, n = 0;
	struct inart_sim_ev ev;

	while (s->q.n > 0 && s->q.h[0].t <= until) {
		inart_sim_evq_pop(&s->q, &ev);
		process(s, &ev);
		n++;
	}
	if (until != NONE && s->now < until)
		s->now = until;
	return n;
}

/* ---- setup ---- */

void inart_sim_opt_default(struct inart_sim_opt *o)
{
	*o = (struct inart_sim_opt){.gbps_scale = 1,
				    .prop_ns = 1000,
				    .queue_pkts = 1024,
				    .overhead_bytes = 24,
				    .reorder_ns = 10000,
				    .seed = 1};
}

struct inart_sim *inart_sim_create(const struct inart_topo *t, const struct inart_deploy *d,
				   const struct inart_sim_opt *o)
{
	struct inart_sim *s = calloc(1, sizeof(*s));
	int m = inart_topo_n_arcs(t), err = ENOMEM;

	if (s == NULL)
		return NULL;
	s->t = t;
	s->d = d;
	if (o)
		s->o = *o;
	else
		inart_sim_opt_default(&s->o);
	inart_sim_evq_init(&s->q);
	if (d->n_nodes != t->n_nodes || d->n_arcs != m || s->o.queue_pkts < 1 ||
	    s->o.overhead_bytes < 0 || (s->o.gbps <= 0 && s->o.gbps_scale <= 0) ||
	    s->o.switch_shards < 0 || s->o.switch_shards > INART_SHARD_MAX) {
		err = EINVAL;
		goto fail;
	}
	s->links = calloc((size_t)m + 1, sizeof(*s->links));
	s->nodes = calloc((size_t)t->n_nodes + 1, sizeof(*s->nodes));
	s->fbuf = malloc((size_t)SW_MAX_OUT * INART_FRAME_MAX);
	s->dbuf = malloc((size_t)PS_MAX_OUT * INART_DGRAM_MAX);
	if (!s->links || !s->nodes || !s->fbuf || !s->dbuf)
		goto fail;
	for (int i = 0; i < SW_MAX_OUT; i++)
		s->fout[i].data = s->fbuf + (size_t)i * INART_FRAME_MAX;
	for (int i = 0; i < PS_MAX_OUT; i++)
		s->dout[i].data = s->dbuf + (size_t)i * INART_DGRAM_MAX;
	for (int e = 0; e < m; e++) {
		struct link *l = &s->links[e];
		uint64_t seed = s->o.seed;

		l->gbps = s->o.gbps > 0 ? s->o.gbps : t->arcs[e].gbps * s->o.gbps_scale;
		if (!(l->gbps > 0)) {
			err = EINVAL;
			goto fail;
		}
		l->loss = s->o.loss;
		l->dup = s->o.dup;
		l->reorder = s->o.reorder;
		inart_rng_seed(&l->rng, inart_hash2(seed, (uint64_t)e));
		if (t->nodes[t->arcs[e].from].kind == INART_NODE_SWITCH)
			l->limit = s->o.queue_pkts;
	}
	for (int v = 0; v < t->n_nodes; v++) {
		struct node *nd = &s->nodes[v];
		int deg = t->out_off[v + 1] - t->out_off[v];

		nd->wake = NONE;
		nd->arc = -1;
		nd->is_sw = t->nodes[v].kind == INART_NODE_SWITCH;
		if (!nd->is_sw) {
			int e, peer;

			if (deg > 1) {
				err = EINVAL;
				goto fail;
			}
			if (deg == 0)
				continue;
			e = t->arc_out[t->out_off[v]];
			peer = t->arcs[e].to;
			nd->arc = e;
			if (t->nodes[peer].kind == INART_NODE_SWITCH)
				memcpy(nd->next_mac, d->port_mac[e ^ 1], 6);
			else
				memcpy(nd->next_mac, d->mac[peer], 6);
			continue;
		}
		nd->n_ports = deg;
		nd->port_arc = malloc((size_t)(deg + 1) * sizeof(int));
		if (nd->port_arc == NULL)
			goto fail;
		for (int k = 0; k < deg; k++)
			nd->port_arc[k] = -1;
		for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
			int e = t->arc_out[k], p = d->port[e];

			if (p < 0 || p >= deg || nd->port_arc[p] >= 0) {
				err = EINVAL;
				goto fail;
			}
			nd->port_arc[p] = e;
		}
	}
	return s;
fail:
	inart_sim_destroy(s);
	errno = err;
	return NULL;
}

void inart_sim_destroy(struct inart_sim *s)
{
	struct inart_sim_ev ev;

	if (s == NULL)
		return;
	if (s->nodes)
		inart_sim_drop_cores(s);
	while (inart_sim_evq_pop(&s->q, &ev)) {
		if (ev.type == EV_DELIVER || ev.type == EV_FAIL || ev.type == EV_STALL)
			free(ev.p);
	}
	inart_sim_evq_free(&s->q);
	while (s->free_pkts) {
		struct pkt *p = s->free_pkts;

		s->free_pkts = p->next;
		free(p);
	}
	for (int e = 0; s->links && e < inart_topo_n_arcs(s->t); e++)
		free(s->links[e].ring);
	for (int v = 0; s->nodes && v < s->t->n_nodes; v++)
		free(s->nodes[v].port_arc);
	free(s->links);
	free(s->nodes);
	free(s->fbuf);
	free(s->dbuf);
	free(s);
}

void inart_sim_arc_faults(struct inart_sim *s, int arc, double loss, double dup, double reorder)
{
	if (arc < 0 || arc >= inart_topo_n_arcs(s->t))
		return;
	s->links[arc].loss = loss;
	s->links[arc].dup = dup;
	s->links[arc].reorder = reorder;
}

int inart_sim_fail_switch(struct inart_sim *s, int node, uint64_t at_ns, uint64_t down_ns)
{
	if (node < 0 || node >= s->t->n_nodes || !s->nodes[node].is_sw)
		return -EINVAL;
	return inart_sim_fail_node(s, node, at_ns, down_ns);
}

/* An event of `type` for node at at_ns carrying a duration (owned by the
 * event). */
static int schedule_for(struct inart_sim *s, int type, int node, uint64_t at_ns, uint64_t dur_ns)
{
	uint64_t *dur;

	if (node < 0 || node >= s->t->n_nodes)
		return -EINVAL;
	dur = malloc(sizeof(*dur));
	if (dur == NULL)
		return -ENOMEM;
	*dur = dur_ns * PS_PER_NS;
	if (schedule(s, at_ns * PS_PER_NS, type, node, dur) < 0) {
		free(dur);
		return -ENOMEM;
	}
	return 0;
}

int inart_sim_tables_at(struct inart_sim *s, const struct inart_install *in, uint64_t at_ns)
{
	if (s == NULL || in == NULL)
		return -EINVAL;
	return schedule(s, at_ns * PS_PER_NS, EV_TABLES, 0, (void *)in) < 0 ? -ENOMEM : 0;
}

int inart_sim_tables_failed(const struct inart_sim *s, struct inart_err *err)
{
	inart_err_set(err, 0, "%s", s->tables_err.msg);
	return s->tables_failed;
}

int inart_sim_fail_node(struct inart_sim *s, int node, uint64_t at_ns, uint64_t down_ns)
{
	return schedule_for(s, EV_FAIL, node, at_ns, down_ns);
}

int inart_sim_stall_node(struct inart_sim *s, int node, uint64_t at_ns, uint64_t dur_ns)
{
	return schedule_for(s, EV_STALL, node, at_ns, dur_ns);
}

int inart_sim_allreduce(struct inart_sim *s, const float *const *bufs, size_t n, uint32_t iter,
			uint64_t limit_ns, struct inart_sim_result *res)
{
	return inart_sim_allreduce_each(s, bufs, n, NULL, iter, limit_ns, res);
}

int inart_sim_allreduce_each(struct inart_sim *s, const float *const *bufs, size_t n,
			     const size_t *each, uint32_t iter, uint64_t limit_ns,
			     struct inart_sim_result *res)
{
	uint64_t start = s->now, limit, ev0 = s->events;
	struct inart_sim_ev ev;
	int rc;

	limit = limit_ns > (NONE - start) / PS_PER_NS ? NONE : start + limit_ns * PS_PER_NS;
	memset(res, 0, sizeof(*res));
	res->start_ns = start / PS_PER_NS;
	s->remaining = 0;
	s->stale = 0;
	for (int k = 0; k < s->n_workers; k++) {
		struct wrk *wk = &s->workers[k];

		size_t nk = each ? each[k] : n;

		rc = wk->r ? inart_ring_begin(wk->r, bufs[k], nk, iter)
			   : inart_worker_begin(wk->w, bufs[k], nk, iter);
		if (rc < 0)
			return rc;
		wk->active = 1;
		s->remaining++;
	}
	s->last_done = start;
	for (int k = 0; k < s->n_workers; k++) {
		worker_check_done(s, &s->workers[k]);
		wake_at(s, s->workers[k].node, wrk_deadline(&s->workers[k]), 1);
	}
	while (s->remaining > 0 && s->q.n > 0 && s->q.h[0].t <= limit) {
		inart_sim_evq_pop(&s->q, &ev);
		process(s, &ev);
	}
	res->done = s->remaining == 0;
	res->end_ns = (res->done ? s->last_done : s->now) / PS_PER_NS;
	res->time_s = (double)((res->done ? s->last_done : s->now) - start) * 1e-12;
	res->events = s->events - ev0;
	res->stale = s->stale;
	return !res->done ? -ETIMEDOUT : s->stale ? -ESTALE : 0;
}

int inart_sim_result(const struct inart_sim *s, int k, float *out, size_t n)
{
	if (k < 0 || k >= s->n_workers)
		return -EINVAL;
	if (s->workers[k].r != NULL)
		return inart_ring_result(s->workers[k].r, out, n);
	return inart_worker_result(s->workers[k].w, out, n);
}

uint64_t inart_sim_now(const struct inart_sim *s)
{
	return s->now / PS_PER_NS;
}

int inart_sim_inject(struct inart_sim *s, int arc, const uint8_t *frame, size_t len)
{
	if (arc < 0 || arc >= inart_topo_n_arcs(s->t) || len > INART_FRAME_MAX)
		return -EINVAL;
	return link_send(s, arc, frame, len);
}

void inart_sim_set_tap(struct inart_sim *s, inart_sim_tap_fn fn, void *ctx)
{
	s->tap = fn;
	s->tap_ctx = ctx;
}

void inart_sim_link_stats(const struct inart_sim *s, int arc, struct inart_sim_link_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (arc >= 0 && arc < inart_topo_n_arcs(s->t))
		*st = s->links[arc].st;
}

void inart_sim_host_stats(const struct inart_sim *s, int node, struct inart_sim_host_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (node >= 0 && node < s->t->n_nodes)
		*st = s->nodes[node].st;
}

const struct inart_switch *inart_sim_switch(const struct inart_sim *s, int node)
{
	const struct inart_shards *sh = inart_sim_switch_shards(s, node);

	return sh != NULL ? inart_shards_core_c(sh, 0) : NULL;
}

const struct inart_shards *inart_sim_switch_shards(const struct inart_sim *s, int node)
{
	return node >= 0 && node < s->t->n_nodes ? s->nodes[node].sw : NULL;
}

const struct inart_ps *inart_sim_ps(const struct inart_sim *s, int node)
{
	return node >= 0 && node < s->t->n_nodes ? s->nodes[node].ps : NULL;
}

uint64_t inart_sim_worker_done_ns(const struct inart_sim *s, int k)
{
	return k >= 0 && k < s->n_workers ? s->workers[k].done / PS_PER_NS : 0;
}

const struct inart_worker *inart_sim_worker(const struct inart_sim *s, int k)
{
	return k >= 0 && k < s->n_workers ? s->workers[k].w : NULL;
}
