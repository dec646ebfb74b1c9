/*
 * gate: loss and aggregation-rate limit in front of the switch core (see
 * gate.h).  The FIFO is a ring of queue_frames buffers of INART_FRAME_MAX
 * bytes; the label set a sorted array searched by bisection.
 */
#include "dp/gate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/rng.h"
#include "common/slab.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/wire.h"

/* A frame held back by the aggregation limit. */
struct held {
	uint16_t len, port;
	uint8_t data[INART_FRAME_MAX];
};

struct inart_gate {
	struct inart_gate_cfg cfg;
	struct inart_rng rx_rng, tx_rng;
	struct inart_tbucket tb;
	uint32_t *labels;
	int n_labels;
	/* FIFO of held frames: [head, head + n) modulo cap */
	struct held *q;
	int cap, head, n;
	uint8_t out[INART_FRAME_MAX];
	struct inart_gate_stats st;
};

/* The queue, in one block with the gate (inart_slab_new): cap frames (cap
 * 0: no aggregation limit, no queue). */
static void queue_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_gate *g = obj;

	g->q = inart_slab_take(s, (size_t)g->cap, sizeof(*g->q));
}

struct inart_gate *inart_gate_create(const struct inart_gate_cfg *cfg, uint64_t now_ns)
{
	struct inart_gate proto = {0};
	struct inart_gate_cfg c = *cfg;

	if (c.n_ports < 1 || c.n_ports > INART_SW_MAX_PORTS ||
	    !(c.rx_loss >= 0 && c.rx_loss <= 1) || !(c.tx_loss >= 0 && c.tx_loss <= 1) ||
	    !(c.agg_bytes_per_s >= 0) || !(c.agg_burst >= 0) || c.queue_frames < 0)
		return inart_null_errno(EINVAL);
	if (c.agg_burst == 0)
		c.agg_burst = 16.0 * INART_FRAME_MAX;
	if (c.queue_frames == 0)
		c.queue_frames = 1024;
	if (c.agg_bytes_per_s > 0) {
		proto.cap = c.queue_frames;
		if (inart_tbucket_init(&proto.tb, c.agg_bytes_per_s, c.agg_burst, now_ns) < 0)
			return inart_null_errno(EINVAL); /* an infinite rate or burst */
	}
	proto.cfg = c;
	inart_rng_seed(&proto.rx_rng, c.seed);
	inart_rng_seed(&proto.tx_rng, c.seed ^ 0x5bd1e995u);
	return inart_slab_new(&proto, sizeof(proto), queue_lay_out);
}

void inart_gate_destroy(struct inart_gate *g)
{
	if (g == NULL)
		return;
	free(g->labels);
	free(g); /* and the queue (queue_lay_out) */
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int inart_gate_set_agg_labels(struct inart_gate *g, const uint32_t *labels, int n)
{
	uint32_t *l = NULL;

	if (n > 0) {
		l = malloc((size_t)n * sizeof(*l));
		if (l == NULL)
			return -ENOMEM;
		memcpy(l, labels, (size_t)n * sizeof(*l));
		qsort(l, (size_t)n, sizeof(*l), cmp_u32);
	}
	inart_gate_swap_agg_labels(g, &l, &n);
	free(l);
	return 0;
}

int inart_gate_agg_labels_of(const struct inart_label_entry *l, int n, uint32_t **out, int *n_out)
{
	uint32_t *a = NULL;
	int k = 0;

	for (int i = 0; i < n; i++)
		k += l[i].kind == INART_LABEL_UP && l[i].aggregate;
	if (k > 0) {
		a = malloc((size_t)k * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		k = 0;
		for (int i = 0; i < n; i++)
			if (l[i].kind == INART_LABEL_UP && l[i].aggregate)
				a[k++] = l[i].label;
		qsort(a, (size_t)k, sizeof(*a), cmp_u32);
	}
	*out = a;
	*n_out = k;
	return 0;
}

void inart_gate_swap_agg_labels(struct inart_gate *g, uint32_t **labels, int *n)
{
	uint32_t *old = g->labels;
	int n_old = g->n_labels;

	g->labels = *labels;
	g->n_labels = *n > 0 ? *n : 0;
	*labels = old;
	*n = n_old;
}

/* 1 if the frame is a contribution this switch aggregates (its label is an
 * aggregation entry): the core may still refuse it, the bucket is charged
 * all the same, as a hardware pipeline would spend the pass. */
static int is_agg(const struct inart_gate *g, const struct inart_frame *f)
{
	struct inart_pkt_info pi;
	const uint8_t *h;
	uint32_t label;

	if (g->n_labels == 0 || inart_pkt_parse(f->data, f->len, &pi) < 0 || !pi.is_udp ||
	    pi.dport != INART_WIRE_UDP_PORT || pi.l4_payload_len < INART_WIRE_FIXED_LEN)
		return 0;
	h = f->data + pi.l4_payload_off;
	if ((h[1] & (INART_F_DATA | INART_F_RETX)) != INART_F_DATA || inart_get_be16(h + 26) == 0)
		return 0;
	label = inart_get_be32(h + 12);
	return bsearch(&label, g->labels, (size_t)g->n_labels, sizeof(label), cmp_u32) != NULL;
}

enum inart_gate_verdict inart_gate_rx(struct inart_gate *g, const struct inart_frame *in,
				      uint64_t now_ns)
{
	int slot;

	if (g->cfg.rx_loss > 0 && inart_rng_unit(&g->rx_rng) < g->cfg.rx_loss) {
		if (in->port < INART_SW_MAX_PORTS)
			g->st.rx_lost[in->port]++;
		return INART_GATE_DROP;
	}
	if (g->cap == 0 || !is_agg(g, in))
		return INART_GATE_PASS;
	g->st.agg_frames++;
	g->st.agg_bytes += in->len;
	if (g->n == 0 && inart_tbucket_take(&g->tb, in->len, now_ns))
		return INART_GATE_PASS;
	if (g->n == g->cap || in->len > INART_FRAME_MAX) {
		g->st.agg_dropped++;
		return INART_GATE_DROP;
	}
	slot = (g->head + g->n) % g->cap;
	memcpy(g->q[slot].data, in->data, in->len);
	g->q[slot].len = in->len;
	g->q[slot].port = in->port;
	g->n++;
	g->st.agg_held++;
	return INART_GATE_HELD;
}

int inart_gate_next(struct inart_gate *g, uint64_t now_ns, struct inart_frame *out)
{
	const struct held *h = &g->q[g->head];

	if (g->n == 0 || !inart_tbucket_take(&g->tb, h->len, now_ns))
		return 0;
	memcpy(g->out, h->data, h->len);
	out->data = g->out;
	out->len = h->len;
	out->port = h->port;
	g->head = (g->head + 1) % g->cap;
	g->n--;
	return 1;
}

uint64_t inart_gate_deadline(const struct inart_gate *g, uint64_t now_ns)
{
	if (g->n == 0)
		return UINT64_MAX;
	return inart_tbucket_ready_at(&g->tb, g->q[g->head].len, now_ns);
}

int inart_gate_tx_drop(struct inart_gate *g, int port)
{
	if (g->cfg.tx_loss <= 0 || port < 0 || port >= g->cfg.n_ports ||
	    !(g->cfg.tx_loss_ports >> port & 1))
		return 0;
	if (inart_rng_unit(&g->tx_rng) >= g->cfg.tx_loss)
		return 0;
	g->st.tx_lost[port]++;
	return 1;
}

int inart_gate_held(const struct inart_gate *g)
{
	return g->n;
}

void inart_gate_stats(const struct inart_gate *g, struct inart_gate_stats *st)
{
	*st = g->st;
}
