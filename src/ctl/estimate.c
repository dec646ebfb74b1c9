/*
 * estimate: background load per directed link from port counters
 * (estimate.h).  Per switch: the last sample (time, counters per port);
 * per arc: which switch port measures it, its estimate and whether it has
 * one.
 */
#include "ctl/estimate.h"

#include "common/slab.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

struct sw_state {
	int sampled;
	double t;			/* when the last sample arrived (the caller's clock) */
	double clock;			/* the switch's own time of it (intervals) */
	struct inart_port_sample *last; /* degree entries */
};

/* The counter that measures an arc: on switch `node`, at the port that
 * out_arc maps to the arc, its rx or its tx side. */
struct meter {
	int node; /* -1: none */
	int rx;	  /* 1: rx_bytes, rx_ina_bytes; 0: tx_bytes, tx_ina_bytes */
};

struct inart_estimator {
	const struct inart_topo *t;
	struct inart_est_opt o;
	int n_arcs;
	struct meter *meter; /* per arc */
	int *out_arc;	     /* [out_off[v] + k]: the arc leaving v on port k */
	double *bg;	     /* per arc, model Gbit/s */
	char *known;	     /* per arc */
	struct sw_state *sw; /* per node */
	struct inart_est_anomalies an;
};

void inart_est_opt_default(struct inart_est_opt *o)
{
	o->tau_s = 0.15;
	o->scale_bps = 1e9;
	o->min_residual = 0.05;
	o->stale_s = 0.35;
}

void inart_estimator_destroy(struct inart_estimator *e)
{
	free(e); /* its arrays with it (lay_out) */
}

static int degree(const struct inart_topo *t, int v)
{
	return t->out_off[v + 1] - t->out_off[v];
}

/* The arc leaving each switch on each port: port[a] (a switch's arcs must
 * number its ports 0..degree-1, each once) or adjacency order.  0 or
 * -EINVAL. */
static int map_ports(struct inart_estimator *e, const int *port)
{
	const struct inart_topo *t = e->t;

	for (int v = 0; v < t->n_nodes; v++) {
		int d = degree(t, v), base = t->out_off[v];

		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		for (int k = 0; k < d; k++)
			e->out_arc[base + k] = port == NULL ? t->arc_out[base + k] : -1;
		for (int k = 0; port != NULL && k < d; k++) {
			int a = t->arc_out[base + k], p = port[a];

			if (p < 0 || p >= d || e->out_arc[base + p] >= 0)
				return -EINVAL;
			e->out_arc[base + p] = a;
		}
	}
	return 0;
}

/* The estimator and its arrays, in one block (common/slab.h): per arc
 * (n_arcs + 1 entries each) meter, bg, known, out_arc; per node sw; then
 * each switch's last sample (degree + 1 ports), node by node. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_estimator *e = obj;
	const struct inart_topo *t = e->t;
	size_t n = (size_t)e->n_arcs + 1;

	e->meter = inart_slab_take(s, n, sizeof(*e->meter));
	e->bg = inart_slab_take(s, n, sizeof(double));
	e->known = inart_slab_take(s, n, 1);
	e->out_arc = inart_slab_take(s, n, sizeof(int));
	e->sw = inart_slab_take(s, (size_t)t->n_nodes + 1, sizeof(*e->sw));
	for (int v = 0; v < t->n_nodes; v++) {
		struct inart_port_sample *last;

		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		last = inart_slab_take(s, (size_t)degree(t, v) + 1, sizeof(*last));
		if (e->sw != NULL)
			e->sw[v].last = last;
	}
}

struct inart_estimator *inart_estimator_create(const struct inart_topo *t,
					       const struct inart_est_opt *o, const int *port)
{
	struct inart_estimator proto = {0}, *e;
	int n;

	if (t == NULL || !t->finalized || o == NULL || !(o->tau_s >= 0) || !(o->scale_bps > 0) ||
	    !(o->min_residual >= 0 && o->min_residual < 1) || !(o->stale_s > 0))
		return inart_null_errno(EINVAL);
	proto.t = t;
	proto.o = *o;
	n = proto.n_arcs = inart_topo_n_arcs(t);
	e = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (e == NULL)
		return NULL;
	if (map_ports(e, port) < 0) {
		inart_estimator_destroy(e);
		return inart_null_errno(EINVAL);
	}
	for (int a = 0; a < n; a++) {
		e->meter[a].node = -1;
		e->bg[a] = t->arcs[a].bg_gbps;
	}
	for (int v = 0; v < t->n_nodes; v++) {
		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		for (int k = 0; k < degree(t, v); k++) {
			int out = e->out_arc[t->out_off[v] + k], in = out ^ 1;

			/* arriving at v on port k: v's rx counter */
			e->meter[in] = (struct meter){v, 1};
			/* leaving v towards a host: v's tx counter */
			if (t->nodes[t->arcs[out].to].kind != INART_NODE_SWITCH)
				e->meter[out] = (struct meter){v, 0};
		}
	}
	return e;
}

static int went_back(const struct inart_port_sample *o, const struct inart_port_sample *n)
{
	return n->rx_bytes < o->rx_bytes || n->tx_bytes < o->tx_bytes ||
	       n->rx_ina_bytes < o->rx_ina_bytes || n->tx_ina_bytes < o->tx_ina_bytes;
}

/* Background bytes of the interval on port k (rx or tx side); < 0 when the
 * INA counter grew more than the total (not a consistent pair: skipped). */
static double bg_bytes(const struct inart_port_sample *o, const struct inart_port_sample *n, int rx)
{
	uint64_t all = rx ? n->rx_bytes - o->rx_bytes : n->tx_bytes - o->tx_bytes;
	uint64_t ina = rx ? n->rx_ina_bytes - o->rx_ina_bytes : n->tx_ina_bytes - o->tx_ina_bytes;

	return ina > all ? -1.0 : (double)(all - ina);
}

int inart_estimator_feed(struct inart_estimator *e, int node, double now_s,
			 const struct inart_port_sample *ports, int n_ports)
{
	return inart_estimator_feed_at(e, node, now_s, now_s, ports, n_ports);
}

int inart_estimator_feed_at(struct inart_estimator *e, int node, double now_s, double clock_s,
			    const struct inart_port_sample *ports, int n_ports)
{
	const struct inart_topo *t;
	struct sw_state *s;
	double dt, alpha;

	if (e == NULL || ports == NULL)
		return -EINVAL;
	t = e->t;
	if (node < 0 || node >= t->n_nodes || t->nodes[node].kind != INART_NODE_SWITCH ||
	    n_ports != degree(t, node) || !isfinite(now_s) || !isfinite(clock_s))
		return -EINVAL;
	s = &e->sw[node];
	if (s->sampled && !(now_s > s->t))
		return -EINVAL;
	if (s->sampled && !(clock_s > s->clock))
		e->an.restarts++; /* the switch's clock went back: it restarted */
	if (!s->sampled || !(clock_s > s->clock)) {
		memcpy(s->last, ports, (size_t)n_ports * sizeof(*ports));
		s->sampled = 1;
		s->t = now_s;
		s->clock = clock_s;
		return 0;
	}
	dt = clock_s - s->clock;
	alpha = e->o.tau_s > 0 ? 1.0 - exp(-dt / e->o.tau_s) : 1.0;
	for (int k = 0; k < n_ports; k++) {
		int out = e->out_arc[t->out_off[node] + k];
		int arcs[2] = {out ^ 1, out};

		if (went_back(&s->last[k], &ports[k])) {
			e->an.went_back++;
			continue; /* a new baseline; the estimates stay */
		}
		for (int i = 0; i < 2; i++) {
			int a = arcs[i];
			double b, g, cap;

			if (e->meter[a].node != node)
				continue;
			b = bg_bytes(&s->last[k], &ports[k], e->meter[a].rx);
			if (b < 0) {
				e->an.inconsistent++;
				continue;
			}
			g = b * 8.0 / dt / e->o.scale_bps;
			if (g > 4.0 * t->arcs[a].gbps) {
				e->an.jumps++; /* impossible on the link: a counter jump */
				continue;
			}
			cap = (1.0 - e->o.min_residual) * t->arcs[a].gbps;
			e->bg[a] = e->known[a] ? alpha * g + (1.0 - alpha) * e->bg[a] : g;
			if (e->bg[a] > cap)
				e->bg[a] = cap;
			e->known[a] = 1;
		}
	}
	memcpy(s->last, ports, (size_t)n_ports * sizeof(*ports));
	s->t = now_s;
	s->clock = clock_s;
	return 0;
}

const double *inart_estimator_bg(const struct inart_estimator *e)
{
	return e == NULL ? NULL : e->bg;
}

int inart_estimator_ready(const struct inart_estimator *e)
{
	if (e == NULL)
		return 0;
	for (int a = 0; a < e->n_arcs; a++)
		if (e->meter[a].node >= 0 && !e->known[a])
			return 0;
	return 1;
}

int inart_estimator_silent(const struct inart_estimator *e, double now_s)
{
	if (e == NULL)
		return -1;
	for (int v = 0; v < e->t->n_nodes; v++)
		if (e->t->nodes[v].kind == INART_NODE_SWITCH &&
		    (!e->sw[v].sampled || now_s - e->sw[v].t > e->o.stale_s))
			return v;
	return -1;
}

void inart_estimator_anomalies(const struct inart_estimator *e, struct inart_est_anomalies *out)
{
	if (e == NULL)
		memset(out, 0, sizeof(*out));
	else
		*out = e->an;
}

uint64_t inart_estimator_resets(const struct inart_estimator *e)
{
	return e == NULL ? 0 : e->an.restarts + e->an.went_back + e->an.jumps;
}
