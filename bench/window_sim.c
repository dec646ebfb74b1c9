/*
 * window_sim: the emulator's scaled network in the packet-level simulator
 * (sim/sim), without the CPU noise of real processes: how the data
 * plane's window and timers compare with the bandwidth-delay product and
 * queueing delays of shaped links (docs/emulator.md, "The data plane's
 * settings on a scaled network").  Not a test: it prints numbers.
 *
 *   window_sim TOPO JOBS PLAN [MBPS [VALUES [ITERS [W:RETX:FLUSH[:PACE[:LEAD]],...]]]]
 *
 * VALUES: one number for every job, or one per job separated by commas (in
 * the jobs file's order: the emulator's scaled jobs, e.g. 91121,492624).
 *
 * Links at MBPS for the fastest (default 20; all scaled alike), no
 * per-frame wire overhead (tbf counts Ethernet frames only), 1 us
 * propagation, deep queues (as the emulator's); every worker of every job
 * reduces VALUES floats (default 20000) per iteration, ITERS iterations
 * (default 3) on the same cores.  For each setting of (window, initial
 * timeout, partial flush) it prints the simulated time of the last
 * iteration, the evaluator's prediction for the same volumes times the
 * header factor, their ratio, and the workers' resends, probes and NACKs,
 * the resends asked for by a NACK, the NACKs marked held, the resends refused
 * for want of credit (inart_worker_held_stats) and the stall rounds.
 * Settings: the data plane's defaults (64, 50 ms, 10 ms), the emulator's
 * (16, scaled, scaled) and a few others, or the list given (RETX and FLUSH
 * in ms; 0 = the emulator's scaled value).
 * Results are checked: every worker holds the exact sums of its job.
 * PACE (optional 4th field): workers paced at PACE x their plan rates
 * (install's pace_scale = PACE x the rate scale; 0: not paced).
 * LEAD (optional 5th field, W:RETX:FLUSH:PACE:LEAD): paced workers at most
 * LEAD ms ahead of their plan rates (install's pace_lead_ns, rate_scale =
 * the rate scale; 0, the default: no bound).
 * WSTALL=PERIOD:DUR:SEED: every PERIOD ms of simulated time a node drawn at
 * random (seeded) stalls for up to DUR ms (its frames and timers wait: a
 * process starved of CPU, as on a busy machine).
 * WRING=N sets the ring workers' window (install's ring_window; default:
 * the larger of 64 and the window).
 * WLOSS=P loses every frame of every link with probability P (seed WSEED,
 * default 1).
 * WLINKS=F prints every link busy more than F of the simulated time.
 * WTRACE=FROM:TO (ms of simulated time) prints every frame delivered in that
 * interval (arc, flags, job, tree, iteration, seq, slot, label, bitmap).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/install.h"
#include "sim/sim.h"
#include "cp/model/evaluate.h"
#include "cp/model/formats.h"
#include "dp/pkt.h"
#include "dp/wire.h"

static double tr_from = -1, tr_to = -1;
static const struct inart_topo *tr_t;
static void tap(void *ctx, int arc, uint64_t at_ps, const uint8_t *f, size_t len)
{
	struct inart_wire_hdr h;
	const uint8_t *pl;
	double ms = (double)at_ps / 1e9;
	(void)ctx;
	if (ms < tr_from || ms > tr_to || len < 42)
		return;
	if (inart_wire_decode(f + 42, len - 42, &h, &pl) != INART_WIRE_OK)
		return;
	printf(
	    "T %.3f %s>%s fl=%02x j=%u t=%u it=%u seq=%u slot=%u lab=%u bm=%llx prev=%u cnt=%u\n",
	    ms, tr_t->nodes[tr_t->arcs[arc].from].id, tr_t->nodes[tr_t->arcs[arc].to].id, h.flags,
	    h.job, h.tree, h.iter, h.seq, h.slot, h.label, (unsigned long long)h.bitmap[0], h.prev,
	    h.count);
}
struct setting {
	int window;
	double retx_ms, flush_ms, pace, lead_ms;
};

int main(int argc, char **argv)
{
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	double mbps = argc > 4 ? atof(argv[4]) : 20, fast = 0, pred, f, slow = 1e30, workers = 0,
	       qms;
	size_t n = argc > 5 ? (size_t)strtoull(argv[5], NULL, 10) : 20000, *nj = NULL, *nw = NULL;
	int iters = argc > 6 ? atoi(argv[6]) : 3, bw = 1;

	if (argc < 4 || mbps <= 0 || n == 0 || iters < 1) {
		fprintf(stderr, "usage: window_sim TOPO JOBS PLAN [MBPS [VALUES [ITERS "
				"[W:RETX:FLUSH[:PACE[:LEAD]],...]]]]\n");
		return 2;
	}
	if ((t = inart_topo_load(argv[1], &err)) == NULL ||
	    (js = inart_jobs_load(argv[2], t, &err)) == NULL) {
		fprintf(stderr, "window_sim: %s\n", err.msg);
		return 1;
	}
	/* every job reduces n values per worker (or its own number of the
	   list): the prediction for that volume */
	nj = calloc((size_t)js->n_jobs, sizeof(*nj));
	for (int j = 0; j < js->n_jobs; j++) {
		const char *v = argc > 5 ? argv[5] : "20000";

		for (int i = 0; i < j && strchr(v, ','); i++)
			v = strchr(v, ',') + 1;
		nj[j] = (size_t)strtoull(v, NULL, 10);
		if (nj[j] == 0) {
			fprintf(stderr, "window_sim: no values for job %d\n", j);
			return 2;
		}
		n = nj[j] > n ? nj[j] : n;
		js->jobs[j].gradient_bytes = 4.0 * (double)nj[j];
		workers += js->jobs[j].n_workers;
		if ((js->jobs[j].n_workers + 63) / 64 > bw)
			bw = (js->jobs[j].n_workers + 63) / 64;
	}
	if ((p = inart_plan_load(argv[3], t, js, &err)) == NULL ||
	    inart_evaluate(t, js, p, &err) < 0) {
		fprintf(stderr, "window_sim: %s\n", err.msg);
		return 1;
	}
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		fast = t->arcs[e].gbps > fast ? t->arcs[e].gbps : fast;
		slow = t->arcs[e].gbps < slow ? t->arcs[e].gbps : slow;
	}
	f = (INART_PKT_UDP_HLEN + (double)inart_wire_hdr_len(bw) +
	     4.0 * inart_wire_max_values(bw)) /
	    (4.0 * inart_wire_max_values(bw));
	pred = p->comm_time_s * (fast * 1e3 / mbps) * f;
	/* the emulator's scaled timeout (cmd_emu.c): two windows of every worker
	   through the slowest link */
	qms = 2 * 16 * workers * 1514 * 8 / (slow * 1e9 * mbps / (fast * 1e3)) * 1e3;
	if (qms < 50)
		qms = 50;
	d = inart_deploy_auto(t);
	printf("%s, %s, plan %s: %s values per worker, fastest link %.3g Mbit/s, %d iterations\n",
	       argv[1], argv[2], argv[3], argc > 5 ? argv[5] : "20000", mbps, iters);
	printf("prediction (evaluator x header factor %.4f): %.3f ms per iteration\n", f,
	       pred * 1e3);
	printf("%6s %5s %8s %8s %5s %12s %7s %8s %8s %8s %7s %7s %8s %7s %s\n", "window", "lead",
	       "retx ms", "flush ms", "pace", "sim ms", "ratio", "resent", "probes", "nacks",
	       "asked", "held", "deferred", "stalls", "result");
	{
		struct setting set[32] = {
		    {64, 50, 10, 0, 0},	 {64, qms, qms, 0, 0}, {16, 50, 10, 0, 0},
		    {16, qms, 10, 0, 0}, {16, qms, qms, 0, 0}, {8, qms, qms, 0, 0},
		};
		size_t nset = 6;

		if (argc > 7) {
			char *save = NULL, *list = strdup(argv[7]);

			nset = 0;
			for (char *tok = strtok_r(list, ",", &save); tok && nset < 32;
			     tok = strtok_r(NULL, ",", &save)) {
				struct setting *x = &set[nset];

				x->pace = x->lead_ms = 0;
				if (sscanf(tok, "%d:%lf:%lf:%lf:%lf", &x->window, &x->retx_ms,
					   &x->flush_ms, &x->pace, &x->lead_ms) < 3 ||
				    x->window < 1 || !(x->pace >= 0) || !(x->lead_ms >= 0)) {
					fprintf(
					    stderr,
					    "window_sim: '%s' is not W:RETX:FLUSH[:PACE[:LEAD]]\n",
					    tok);
					return 2;
				}
				x->retx_ms = x->retx_ms > 0 ? x->retx_ms : qms;
				x->flush_ms = x->flush_ms > 0 ? x->flush_ms : qms;
				nset++;
			}
			free(list);
		}
		for (size_t si = 0; si < nset; si++) {
			struct inart_install_opt io;
			struct inart_install *in = NULL;
			struct inart_sim_opt so;
			struct inart_sim *s;
			struct inart_sim_result r = {0};
			struct inart_worker_stats ws, sum = {0};
			uint64_t held, deferred, sum_held = 0, sum_deferred = 0;
			float **x;
			struct inart_err why = {{0}};
			int rc = 0, bad = 0;

			inart_install_opt_default(&io);
			io.slots_per_tree = (uint16_t)set[si].window;
			/* WRING=N: ring workers' window N (default: install's) */
			io.ring_window = getenv("WRING") ? (uint16_t)atoi(getenv("WRING")) : 0;
			io.retx_timeout_ns = (uint64_t)(set[si].retx_ms * 1e6);
			io.flush_timeout_ns = (uint64_t)(set[si].flush_ms * 1e6);
			/* PACE: workers paced at PACE x their plan rates */
			io.pace_scale = set[si].pace * mbps / (fast * 1e3);
			io.pace_lead_ns = (uint64_t)(set[si].lead_ms * 1e6);
			io.rate_scale = mbps / (fast * 1e3);
			if (inart_install_build(t, js, p, d, &io, &in, &err) < 0) {
				fprintf(stderr, "window_sim: %s\n", err.msg);
				return 1;
			}
			inart_sim_opt_default(&so);
			so.gbps_scale = mbps / (fast * 1e3);
			so.overhead_bytes = 0;
			so.queue_pkts = 100000;
			/* WLOSS=P: every frame of every link lost with probability P */
			so.loss = getenv("WLOSS") ? atof(getenv("WLOSS")) : 0;
			so.seed = getenv("WSEED") ? strtoull(getenv("WSEED"), NULL, 10) : 1;
			s = inart_sim_create(t, d, &so);
			if (getenv("WSTALL")) {
				/* a starved CPU: every PERIOD ms of simulated time
				   (for 600 s) a node drawn at random stalls for up to
				   DUR ms */
				double per = 0, dur = 0;
				unsigned long long seed = 1;

				sscanf(getenv("WSTALL"), "%lf:%lf:%llu", &per, &dur, &seed);
				for (double at = per; per > 0 && at < 600e3; at += per) {
					seed =
					    seed * 6364136223846793005ull + 1442695040888963407ull;
					inart_sim_stall_node(
					    s, (int)((seed >> 33) % (unsigned)t->n_nodes),
					    (uint64_t)(at * 1e6),
					    (uint64_t)(dur * 1e6 * (double)((seed >> 13) & 1023) /
						       1023));
				}
			}
			if (getenv("WTRACE")) {
				sscanf(getenv("WTRACE"), "%lf:%lf", &tr_from, &tr_to);
				tr_t = t;
				inart_sim_set_tap(s, tap, NULL);
			}
			if (s == NULL || inart_sim_install(s, in, &why) < 0) {
				fprintf(stderr, "window_sim: %s\n", s ? why.msg : "sim");
				return 1;
			}
			x = malloc((size_t)in->n_workers * sizeof(*x));
			nw = realloc(nw, (size_t)in->n_workers * sizeof(*nw));
			for (int w = 0; w < in->n_workers; w++) {
				nw[w] = nj[in->workers[w].job];
				x[w] = malloc(nw[w] * sizeof(float));
				for (size_t i = 0; i < nw[w]; i++)
					x[w][i] =
					    (float)((int)((w * 7 + i * 3) % 101) - 50) / 16.0f;
			}
			for (int k = 0; k < iters && rc == 0; k++)
				rc = inart_sim_allreduce_each(
				    s, (const float *const *)x, n, nw, (uint32_t)k + 1,
				    inart_sim_now(s) + 600000000000ull, &r);
			for (int w = 0; w < in->n_workers; w++) {
				inart_worker_stats(inart_sim_worker(s, w), &ws);
				sum.retransmitted += ws.retransmitted;
				sum.probes += ws.probes;
				sum.nacks += ws.nacks;
				sum.retx_asked += ws.retx_asked;
				sum.stalls += ws.stalls;
				inart_worker_held_stats(inart_sim_worker(s, w), &held, &deferred);
				sum_held += held;
				sum_deferred += deferred;
			}
			/* every worker holds the exact sums of its job (values are
			   multiples of 1/16 below 4: sums are exact in float and at
			   the default scale) */
			for (int w = 0; w < in->n_workers && rc == 0 && !bad; w++) {
				size_t m = nw[w];
				float *a = malloc(m * sizeof(float));

				if (inart_sim_result(s, w, a, m) < 0)
					bad = 1;
				for (size_t i = 0; i < m && !bad; i++) {
					float want = 0;

					for (int v = 0; v < in->n_workers; v++)
						if (in->workers[v].job == in->workers[w].job)
							want += x[v][i];
					bad = a[i] != want;
				}
				free(a);
			}
			printf("%6d %5.1f %8.1f %8.1f %5.2f %12.3f %7.3f %8llu %8llu %8llu %7llu "
			       "%7llu "
			       "%8llu "
			       "%7llu %s\n",
			       set[si].window, set[si].lead_ms, set[si].retx_ms, set[si].flush_ms,
			       set[si].pace, r.time_s * 1e3, r.time_s / pred,
			       (unsigned long long)sum.retransmitted,
			       (unsigned long long)sum.probes, (unsigned long long)sum.nacks,
			       (unsigned long long)sum.retx_asked, (unsigned long long)sum_held,
			       (unsigned long long)sum_deferred, (unsigned long long)sum.stalls,
			       rc < 0 ? "NOT DONE"
			       : bad  ? "WRONG"
				      : "exact");
			/* the last iteration's time of every job (its last
			   worker done), and each job's prediction alone */
			for (int j = 0; j < js->n_jobs && js->n_jobs > 1; j++) {
				uint64_t end = 0;

				for (int w = 0; w < in->n_workers; w++)
					if (in->workers[w].job == j &&
					    inart_sim_worker_done_ns(s, w) > end)
						end = inart_sim_worker_done_ns(s, w);
				printf("  job %s: %.3f ms\n", js->jobs[j].id,
				       (double)(end - r.start_ns) / 1e6);
			}
			/* WLINKS=F: every link busy more than F of the simulated
			   time (all iterations), its bytes and its busy share */
			for (int e = 0; getenv("WLINKS") && e < inart_topo_n_arcs(t); e++) {
				struct inart_sim_link_stats ls;
				double busy;

				inart_sim_link_stats(s, e, &ls);
				busy = (double)ls.busy_ps / 1e3 / (double)inart_sim_now(s);
				if (busy > atof(getenv("WLINKS")))
					printf("  link %s>%s: %llu bytes, busy %.3f, queueing mean "
					       "%.2f ms, max %.2f ms\n",
					       t->nodes[t->arcs[e].from].id,
					       t->nodes[t->arcs[e].to].id,
					       (unsigned long long)ls.tx_bytes, busy,
					       ls.tx_pkts
						   ? (double)ls.wait_ps / 1e9 / (double)ls.tx_pkts
						   : 0.0,
					       (double)ls.wait_max_ps / 1e9);
			}
			for (int w = 0; w < in->n_workers; w++)
				free(x[w]);
			free(x);
			inart_sim_destroy(s);
			inart_install_destroy(in);
		}
	}
	free(nw);
	free(nj);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return 0;
}
