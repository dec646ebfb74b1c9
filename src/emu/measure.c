/*
 * measure: what a run of a plan on an emulated network measures, to tell a
 * link-bound run from a CPU-bound one (docs/emulator.md, CPU-bound runs):
 * the machine's and the run's processes' CPU time, qdisc drops and queue
 * lengths, hosts' UDP buffer errors, switchd's and the PSs' counters, and
 * the verdict.  Reads /proc, `tc -j` and the daemons' control sockets;
 * state in run_impl.h, owned by run.c.  Calls emulation.c (progress) and
 * nothing of run.c, which calls it.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sbuf.h"
#include "emu/run_impl.h"
#include "emu/spawn.h"

#define QUIET_WAIT_MS 30000 /* wait_quiet: at most */
#define QUIET_LOOK_MS 50

/* Integer member k of object o, 0 if absent. */
static uint64_t jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

const char *const inart_emu_kctr_names[INART_EMU_KCTR_N + 1] = {
    "sent",	  "absorbed",  "flushed",   "kept",	  "to_shaper",	"lost",	      "punted",
    "punt_frame", "punt_wire", "punt_port", "punt_label", "punt_entry", "punt_check", NULL};

/* k[] += the kernel path's counters of switch stats s (xdp.agg_kernel:
 * since switchd's start); 1 if s has them. */
static int kernel_add(json_t *s, uint64_t *k)
{
	json_t *a = json_object_get(json_object_get(s, "xdp"), "agg_kernel");

	if (a == NULL)
		return 0;
	k[INART_EMU_K_SENT] += jint(a, "sent");
	k[INART_EMU_K_ABSORBED] += jint(a, "dropped");
	k[INART_EMU_K_FLUSHED] += jint(a, "flushed");
	k[INART_EMU_K_KEPT] += jint(a, "kept");
	k[INART_EMU_K_TO_SHAPER] += jint(a, "to_shaper");
	k[INART_EMU_K_LOST] += jint(a, "ring_full") + jint(a, "to_shaper_lost");
	for (int i = INART_EMU_K_P_FRAME; i < INART_EMU_KCTR_N; i++) {
		k[i] += jint(a, inart_emu_kctr_names[i]);
		k[INART_EMU_K_PUNTED] += jint(a, inart_emu_kctr_names[i]);
	}
	return 1;
}

/* The switches' kernel counters and shaper drops (both since their start),
 * summed into k[INART_EMU_KCTR_N] and *shaped; the switches with the
 * kernel path. */
static int kernel_counters(struct inart_emu *e, uint64_t *k, uint64_t *shaped)
{
	int n = 0;

	memset(k, 0, sizeof(uint64_t) * INART_EMU_KCTR_N);
	*shaped = 0;
	for (int v = 0; v < e->t->n_nodes; v++) {
		json_t *s, *p;
		size_t i;

		if (e->t->nodes[v].kind != INART_NODE_SWITCH || e->pid[v] <= 0)
			continue;
		s = inart_emu_ctl_req(e->ctl[v], "{\"op\": \"stats\"}", NULL);
		n += kernel_add(s, k);
		json_array_foreach(json_object_get(s, "ports"), i, p)
		{
			*shaped += jint(p, "shaped_drops");
		}
		json_decref(s);
	}
	return n;
}

/* Busy, total and interrupt + softirq jiffies of the machine (/proc/stat,
 * first line). */
static void cpu_stat(uint64_t *busy, uint64_t *total, uint64_t *irq)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = *irq = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4];
		*irq = v[5] + v[6];
	}
	fclose(f);
}

/* The queueing disciplines of node v with their counters (`tc -s -j qdisc
 * show` in its namespace): a JSON array (new reference), NULL if unread. */
static json_t *qdiscs(struct inart_emu *e, int v)
{
	char *argv[] = {"tc", "-n", e->net->ns[v], "-s", "-j", "qdisc", "show", NULL};
	static char out[65536];

	if (inart_emu_cmd(NULL, argv, NULL, out, sizeof(out), 10000, NULL) != 0)
		return NULL;
	return json_loads(out, 0, NULL);
}

/* Drops counted by every queueing discipline of the network; per arc into
 * per_arc (may be NULL). */
static uint64_t qdisc_drops(struct inart_emu *e, uint64_t *per_arc)
{
	const struct inart_topo *t = e->t;
	uint64_t sum = 0;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *r = qdiscs(e, v), *q;
		size_t i;

		json_array_foreach(r, i, q)
		{
			const char *dev = json_string_value(json_object_get(q, "dev"));

			sum += jint(q, "drops");
			for (int k = t->out_off[v]; per_arc && dev && k < t->out_off[v + 1]; k++)
				if (strcmp(dev, e->net->ifname[t->arc_out[k]]) == 0)
					per_arc[t->arc_out[k]] += jint(q, "drops");
		}
		json_decref(r);
	}
	return sum;
}

/* The largest queue (frames) of any queueing discipline of the network; -1
 * if none could be read. */
static int qdisc_max_qlen(struct inart_emu *e)
{
	int m = -1;

	for (int v = 0; v < e->t->n_nodes; v++) {
		json_t *r = qdiscs(e, v), *q;
		size_t i;

		json_array_foreach(r, i, q)
		{
			int n = (int)jint(q, "qlen");

			m = n > m ? n : m;
		}
		json_decref(r);
	}
	return m;
}

/* Before a plan is installed: wait until the previous run's packets have
 * left the network -- twice the switches' partial-flush time (slots of the
 * last chunks flush their partial aggregates), then (up to QUIET_WAIT_MS)
 * until every qdisc holds at most one frame (the background's) in two looks
 * QUIET_LOOK_MS apart.  Resends and probes
 * of a run that ended in a recovery storm can sit for seconds in the
 * shaped queues; a PS whose trees were just reset takes the step of the
 * first packet it sees, so one of them arriving after the install would make
 * the new run's workers (steps from 1 again) stale. */
void inart_emu_wait_quiet(struct inart_emu *e)
{
	uint64_t t0 = inart_emu_now_ns(), end = t0 + QUIET_WAIT_MS * 1000000ull;
	int quiet = 0, q = 0;
	double flush_ms = e->o.net.flush_ms > 0 ? e->o.net.flush_ms : 10;

	usleep((useconds_t)(2 * flush_ms * 1000));
	while (quiet < 2 && inart_emu_now_ns() < end) {
		q = qdisc_max_qlen(e);
		quiet = q <= 1 ? quiet + 1 : 0;
		if (quiet < 2)
			usleep(QUIET_LOOK_MS * 1000);
	}
	if (quiet < 2)
		inart_emu_progress(
		    e,
		    "the network is not quiet after %.1f s (a queue holds %d frames): "
		    "installing anyway",
		    QUIET_WAIT_MS / 1e3, q);
	else if (inart_emu_now_ns() - t0 > 1000000000ull)
		inart_emu_progress(
		    e, "waited %.1f s for the previous run's packets to leave the network",
		    (double)(inart_emu_now_ns() - t0) / 1e9);
}

/* UDP receive and send buffer errors of every host (its namespace's
 * /proc/net/snmp), summed. */
static void udp_errors(struct inart_emu *e, uint64_t *rcv, uint64_t *snd)
{
	*rcv = *snd = 0;
	for (int v = 0; v < e->t->n_nodes; v++) {
		char *argv[] = {"cat", "/proc/net/snmp", NULL}, out[8192], *l, *names = NULL;

		if (e->t->nodes[v].kind != INART_NODE_HOST ||
		    inart_emu_cmd(e->net->ns[v], argv, NULL, out, sizeof(out), 10000, NULL) != 0)
			continue;
		for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
			char *sn, *sv, *pn, *pv;

			if (strncmp(l, "Udp: ", 5) != 0)
				continue;
			if (names == NULL) {
				names = l;
				continue;
			}
			/* walk the names and values lines together */
			pn = strtok_r(names + 5, " ", &sn);
			pv = strtok_r(l + 5, " ", &sv);
			for (; pn && pv;
			     pn = strtok_r(NULL, " ", &sn), pv = strtok_r(NULL, " ", &sv)) {
				if (strcmp(pn, "RcvbufErrors") == 0)
					*rcv += strtoull(pv, NULL, 10);
				if (strcmp(pn, "SndbufErrors") == 0)
					*snd += strtoull(pv, NULL, 10);
			}
			break;
		}
	}
}

/* CPU time of the kernel's softirq threads (ksoftirqd/N), nanoseconds. */
static int64_t ksoftirqd_ns(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int64_t sum = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char path[300], comm[64] = "";
		FILE *f;
		int64_t c;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "ksoftirqd/", 10) == 0 &&
		    (c = inart_emu_cpu_ns((pid_t)atoi(de->d_name))) > 0)
			sum += c;
	}
	if (d != NULL)
		closedir(d);
	return sum;
}

/* CPU time of every process of the run (daemons, background, workers):
 * per node (its daemon), the background sender's, the workers' and all. */
static void cpu_times(struct inart_emu *e, const struct worker *w, int nw, int64_t *per_node,
		      int64_t *bg, int64_t *wk, int64_t *all)
{
	int64_t c;

	*all = *bg = *wk = 0;
	for (int v = 0; v < e->t->n_nodes; v++) {
		c = e->pid[v] > 0 ? inart_emu_cpu_ns(e->pid[v]) : 0;
		per_node[v] = c > 0 ? c : 0;
		*all += per_node[v];
	}
	if (e->bg_pid > 0 && (c = inart_emu_cpu_ns(e->bg_pid)) > 0)
		*bg = c;
	for (int i = 0; i < nw; i++)
		if (w[i].pid > 0 && (c = inart_emu_cpu_ns(w[i].pid)) > 0)
			*wk += c;
	*all += *bg + *wk;
}

/* Switch and PS counters after the run: bytes per arc, drops. */
static void read_counters(struct inart_emu *e, struct inart_emu_result *r)
{
	const struct inart_topo *t = e->t;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *s, *ports, *p;
		size_t i;

		if (e->pid[v] > 0 && t->nodes[v].kind != INART_NODE_SWITCH) {
			s = inart_emu_ctl_req(e->ctl[v], "{\"op\": \"stats\"}", NULL);
			p = json_object_get(s, "ps");
			r->ps_absorbed += jint(p, "absorbed");
			r->ps_nacks += jint(p, "nacks");
			r->ps_replaced += jint(p, "replaced");
			r->ps_duplicates += jint(p, "duplicates");
			r->ps_probes += jint(p, "probes");
			json_decref(s);
			continue;
		}
		if (t->nodes[v].kind != INART_NODE_SWITCH || e->pid[v] <= 0)
			continue;
		s = inart_emu_ctl_req(e->ctl[v], "{\"op\": \"stats\"}", NULL);
		if (s == NULL)
			continue;
		ports = json_object_get(s, "ports");
		json_array_foreach(ports, i, p)
		{
			int k = (int)i, a, b;

			if (k >= t->out_off[v + 1] - t->out_off[v])
				break;
			a = t->arc_out[t->out_off[v] + k]; /* leaving v on port k */
			b = a ^ 1;			   /* arriving at v on port k */
			r->arc_bytes[a] = (double)jint(p, "tx_bytes");
			r->switch_frames += jint(p, "tx_pkts");
			r->arc_known[a] = 1;
			if (t->nodes[t->arcs[b].from].kind == INART_NODE_HOST &&
			    !(t->arcs[b].bg_gbps > 0)) {
				/* a host's uplink: only the switch counts it (not when
				   background frames share it: they are counted too) */
				r->arc_bytes[b] = (double)jint(p, "rx_bytes");
				r->arc_known[b] = 1;
			}
			r->ring_drops += jint(p, "sock_rx_kernel_drops");
			r->sock_tx_drops += jint(p, "sock_tx_drops");
		}
		r->out_full += jint(json_object_get(s, "drops"), "out_full");
		json_array_foreach(json_object_get(s, "trees"), i, p)
		{
			r->sw_aggregated += jint(p, "aggregated");
			r->sw_emitted += jint(p, "emitted");
			r->sw_partial += jint(p, "partial");
			r->sw_early += jint(p, "early");
			r->sw_fallback += jint(p, "fallback");
			r->sw_repaired += jint(p, "repaired");
		}
		p = json_object_get(s, "gate");
		if (p != NULL) {
			json_t *x;

			r->agg_dropped += jint(p, "agg_dropped");
			json_array_foreach(json_object_get(p, "rx_lost"), i, x)
			{
				r->lost += (uint64_t)json_integer_value(x);
			}
			json_array_foreach(json_object_get(p, "tx_lost"), i, x)
			{
				r->lost += (uint64_t)json_integer_value(x);
			}
		}
		json_decref(s);
	}
}

static void reset_counters(struct inart_emu *e)
{
	for (int v = 0; v < e->t->n_nodes; v++)
		if (e->pid[v] > 0)
			json_decref(
			    inart_emu_ctl_req(e->ctl[v], "{\"op\": \"reset_stats\"}", NULL));
}

/* --- a run ------------------------------------------------------------------ */

/* CPU-bound verdict from the figures of r (see docs/emulator.md). */
void inart_emu_cpu_verdict(struct inart_emu_result *r, int cores)
{
	struct inart_sbuf b = {0};
	char *s;

	if (r->switchd_cpu_max >= 0.85)
		inart_sbuf_printf(&b, "switchd %s used %.0f%% of a core; ", r->switchd_cpu_node,
				  100 * r->switchd_cpu_max);
	if (r->cpu_total >= 0.85 * cores)
		inart_sbuf_printf(&b, "the run's processes used %.2f of %d cores; ", r->cpu_total,
				  cores);
	else if (r->cpu_total + r->ksoftirqd_cores >= 0.85 * cores)
		/* the kernel's share of the links (veth, tbf, XDP programs) that
		   went to its softirq threads, charged to no process of the run */
		inart_sbuf_printf(&b,
				  "the run's processes used %.2f and the kernel's softirq threads "
				  "%.2f of %d cores; ",
				  r->cpu_total, r->ksoftirqd_cores, cores);
	else if (r->demand_cores >= 0.85 * cores) {
		/* fewer cores than that over a slower run: the CPU work of an
		   iteration does not fit the predicted time on this machine */
		inart_sbuf_printf(&b,
				  "the run's processes used %.2f cores over iterations slower "
				  "than predicted: %.2f of %d cores at the predicted %.3f s per "
				  "iteration",
				  r->cpu_total, r->demand_cores, cores, r->predicted_iter_s);
		if (r->us_per_frame > 0)
			/* the figure that names the limit: frames through the
			   switches and what each costs the machine */
			inart_sbuf_printf(&b,
					  " (%.0f frames/s through the switches at that pace, "
					  "%.1f us of CPU each)",
					  r->demand_cores / r->us_per_frame * 1e6, r->us_per_frame);
		inart_sbuf_printf(&b, "; ");
	}
	if (r->host_busy >= 0.95)
		inart_sbuf_printf(&b, "the machine was %.0f%% busy; ", 100 * r->host_busy);
	if (r->ring_drops > 0)
		inart_sbuf_printf(&b, "%llu frames dropped at switchd's receive rings; ",
				  (unsigned long long)r->ring_drops);
	if (r->udp_rcvbuf_errors > 0)
		inart_sbuf_printf(&b,
				  "%llu datagrams dropped at full UDP receive buffers of hosts; ",
				  (unsigned long long)r->udp_rcvbuf_errors);
	if (r->sock_tx_drops + r->out_full > 0)
		inart_sbuf_printf(&b, "%llu frames dropped at switchd's transmit queues; ",
				  (unsigned long long)(r->sock_tx_drops + r->out_full));
	s = inart_sbuf_finish(&b);
	r->cpu_bound = s != NULL && s[0] != '\0';
	snprintf(r->cpu_why, sizeof(r->cpu_why), "%s", s ? s : "");
	if (r->cpu_bound && strlen(r->cpu_why) >= 2)
		r->cpu_why[strlen(r->cpu_why) - 2] = '\0';
	free(s);
}

void inart_emu_meas_iter(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m, int end)
{
	int64_t bg, wk, all;

	cpu_times(e, w, nw, m->cpu1, &bg, &wk, &all); /* cpu1: scratch until meas_end */
	if (!end)
		m->it0 = all;
	else if (all >= m->it0)
		m->iter_cpu += all - m->it0;
}

/* Counters and CPU times before the first iteration. */
void inart_emu_meas_start(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m)
{
	m->q0 = qdisc_drops(e, m->qd0);
	kernel_counters(e, m->k0, &m->sd0);
	udp_errors(e, &m->ur0, &m->us0);
	reset_counters(e);
	cpu_times(e, w, nw, m->cpu0, &m->bg0, &m->wk0, &m->all0);
	cpu_stat(&m->busy0, &m->tot0, &m->irq0);
	m->ksi0 = ksoftirqd_ns();
}

/* After the iterations (or a failed one): wall time, CPU use, drops and
 * the CPU-bound verdict into r. */
void inart_emu_meas_end(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m,
			struct inart_emu_result *r)
{
	const struct inart_topo *t = e->t;
	int na = inart_topo_n_arcs(t), cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t now = inart_emu_now_ns(), busy1, tot1, irq1, q1;
	double wall;
	int64_t iter_cpu;
	int n_done = 0;

	if (m->run_t1 == 0)
		m->run_t1 = now;
	r->wall_s = (double)(m->run_t1 - m->run_t0) / 1e9;
	cpu_times(e, w, nw, m->cpu1, &m->bg1, &m->wk1, &m->all1);
	cpu_stat(&busy1, &tot1, &irq1);
	r->ksoftirqd_cores = (double)(ksoftirqd_ns() - m->ksi0) / 1e9;
	wall = (double)(now - m->run_t0 + GO_AHEAD_NS) / 1e9;
	for (int v = 0; v < t->n_nodes; v++) {
		int64_t node_ns = m->cpu1[v] - m->cpu0[v];

		if (t->nodes[v].kind == INART_NODE_SWITCH)
			r->switchd_cpu_sum += (double)node_ns / 1e9 / wall;
		else
			r->ps_cpu += (double)node_ns / 1e9 / wall;
		if (t->nodes[v].kind == INART_NODE_SWITCH &&
		    (double)node_ns / 1e9 / wall > r->switchd_cpu_max) {
			r->switchd_cpu_max = (double)node_ns / 1e9 / wall;
			snprintf(r->switchd_cpu_node, sizeof(r->switchd_cpu_node), "%s",
				 t->nodes[v].id);
		}
	}
	r->cpu_total = (double)(m->all1 - m->all0) / 1e9 / wall;
	r->worker_cpu = (double)(m->wk1 - m->wk0) / 1e9 / wall;
	r->bg_cpu = (double)(m->bg1 - m->bg0) / 1e9 / wall;
	r->predicted_iter_s = e->predicted_iter_s;
	for (int k = 0; k < r->iters; k++)
		n_done += r->iter_s[k] > 0;
	/* the CPU inside iterations (all of it if none was measured) */
	iter_cpu = m->iter_cpu > 0 ? m->iter_cpu : m->all1 - m->all0;
	if (r->predicted_iter_s > 0 && n_done > 0)
		r->demand_cores = (double)iter_cpu / 1e9 / (n_done * r->predicted_iter_s);
	r->ksoftirqd_cores = r->ksoftirqd_cores > 0 ? r->ksoftirqd_cores / wall : 0;
	r->host_busy = tot1 > m->tot0 ? (double)(busy1 - m->busy0) / (double)(tot1 - m->tot0) : 0;
	r->irq_cores = tot1 > m->tot0 && irq1 >= m->irq0
			   ? (double)(irq1 - m->irq0) / (double)(tot1 - m->tot0) * cores
			   : 0;
	read_counters(e, r);
	if (r->switch_frames > 0)
		r->us_per_frame = (double)iter_cpu / 1e3 / (double)r->switch_frames;
	q1 = qdisc_drops(e, r->arc_qdrops);
	r->qdisc_drops = q1 > m->q0 ? q1 - m->q0 : 0;
	r->kernel_switches = kernel_counters(e, r->kernel, &r->shaped_drops);
	for (int k = 0; k < INART_EMU_KCTR_N; k++)
		r->kernel[k] -= r->kernel[k] >= m->k0[k] ? m->k0[k] : r->kernel[k];
	r->shaped_drops -= r->shaped_drops >= m->sd0 ? m->sd0 : r->shaped_drops;
	udp_errors(e, &r->udp_rcvbuf_errors, &r->udp_sndbuf_errors);
	r->udp_rcvbuf_errors -= m->ur0 < r->udp_rcvbuf_errors ? m->ur0 : r->udp_rcvbuf_errors;
	r->udp_sndbuf_errors -= m->us0 < r->udp_sndbuf_errors ? m->us0 : r->udp_sndbuf_errors;
	for (int a = 0; a < na; a++)
		r->arc_qdrops[a] -= r->arc_qdrops[a] >= m->qd0[a] ? m->qd0[a] : r->arc_qdrops[a];
	inart_emu_cpu_verdict(r, cores > 0 ? cores : 1);
}
