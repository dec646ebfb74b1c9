/*
 * scale: scales, limits and the header factor of the emulator (see
 * scale.h).
 */
#include "emu/scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "dp/pkt.h"
#include "dp/wire.h"

void inart_emu_limits_default(struct inart_emu_limits *l, int cores)
{
	if (cores < 1)
		cores = 1;
	l->cores = cores;
	l->max_nodes = 40 * cores;
	l->max_ports = 64 * cores;
	l->min_mbps = 1;
}

int inart_emu_check(const struct inart_topo *t, double rate_scale, const struct inart_emu_limits *l,
		    struct inart_err *err)
{
	int ports = 0, sw = 0;

	if (!(rate_scale > 0) || !isfinite(rate_scale))
		return inart_err_set(err, -EINVAL, "rate scale %g: must be positive", rate_scale);
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		const struct inart_arc *a = &t->arcs[e];
		double mbps = a->gbps * 1e3 * rate_scale;

		if (mbps < l->min_mbps)
			return inart_err_set(
			    err, -EINVAL,
			    "link '%s'-'%s': %g Gbit/s x rate scale %g = %.3g Mbit/s, below the %g "
			    "Mbit/s the emulator shapes faithfully (tbf would hold each 1514-byte "
			    "frame for over 12 ms); use a larger --mbps or --rate-scale",
			    t->nodes[a->from].id, t->nodes[a->to].id, a->gbps, rate_scale, mbps,
			    l->min_mbps);
	}
	for (int v = 0; v < t->n_nodes; v++)
		if (t->nodes[v].kind == INART_NODE_SWITCH) {
			sw++;
			ports += t->out_off[v + 1] - t->out_off[v];
		}
	if (t->n_nodes > l->max_nodes || ports > l->max_ports)
		return inart_err_set(
		    err, -E2BIG,
		    "topology too large for this machine: %d namespaces (%d switches, %d hosts) "
		    "and %d switch ports; with %d cores the emulator runs at most %d namespaces "
		    "and %d switch ports (40 and 64 per core): every switch is a switchd process "
		    "polling its ports and every host a PS or worker process, and beyond that "
		    "their scheduling, not the shaped links, would set the measured times",
		    t->n_nodes, sw, t->n_nodes - sw, ports, l->cores, l->max_nodes, l->max_ports);
	return 0;
}

double inart_emu_header_factor(const struct inart_jobs *js)
{
	double f = 1;

	for (int j = 0; j < js->n_jobs; j++) {
		int bw = (js->jobs[j].n_workers + 63) / 64, mv = inart_wire_max_values(bw);
		double frame = INART_PKT_UDP_HLEN + (double)inart_wire_hdr_len(bw) + 4.0 * mv;

		if (frame / (4.0 * mv) > f)
			f = frame / (4.0 * mv);
	}
	return f;
}

void inart_emu_values(const struct inart_jobs *js, double z, long *values)
{
	for (int j = 0; j < js->n_jobs; j++) {
		double v = floor(js->jobs[j].gradient_bytes * z / 4 + 0.5);

		values[j] = v < 1 ? 1 : v > 1e9 ? 1000000000L : (long)v;
	}
}

struct inart_jobs *inart_emu_scaled_jobs(const struct inart_jobs *js, const long *values)
{
	struct inart_jobs *s = inart_jobs_create();

	if (s == NULL)
		return NULL;
	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *o = &js->jobs[j];

		if (inart_jobs_add(s, o->id, o->workers, o->n_workers, o->ps, o->n_ps,
				   4.0 * (double)values[j], o->model, NULL) < 0) {
			inart_jobs_destroy(s);
			errno = ENOMEM;
			return NULL;
		}
	}
	return s;
}

double inart_emu_size_scale(double pred_unscaled_s, double target_s, double r, double f)
{
	if (!(pred_unscaled_s > 0) || !(f > 0))
		return 1;
	return target_s * r / (pred_unscaled_s * f);
}
