/*
 * report: tables, CSV, JSON and charts of emulated runs (see report.h).
 */
#include "emu/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sbuf.h"
#include "cp/planner/planner.h"

#define TARGET_RATIO 0.15
#define TARGET_REDUCTION 0.8

/* The planner's registry says which algorithms are baselines. */
static int is_baseline(const char *a)
{
	return inart_algorithm_theirs(a);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double *c = malloc((size_t)n * sizeof(*c) + 1), m;

	if (c == NULL || n == 0) {
		free(c);
		return -1;
	}
	memcpy(c, v, (size_t)n * sizeof(*c));
	qsort(c, (size_t)n, sizeof(*c), cmp_d);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double inart_emu_row_measured(const struct inart_emu_row *row)
{
	if (row->r == NULL || !row->r->finished)
		return -1;
	return median(row->r->iter_s, row->r->iters) * row->to_unscaled;
}

static double predicted(const struct inart_emu_report *rep, const struct inart_emu_row *row)
{
	return row->model_s * rep->header_factor;
}

static const struct inart_emu_row *find_row(const struct inart_emu_report *rep, const char *a)
{
	for (int i = 0; i < rep->n_rows; i++)
		if (strcmp(rep->rows[i].algorithm, a) == 0)
			return &rep->rows[i];
	return NULL;
}

/* The baseline with the lowest time (measured: 1, predicted: 0). */
static const struct inart_emu_row *best_baseline(const struct inart_emu_report *rep, int measured)
{
	const struct inart_emu_row *best = NULL;
	double bt = INFINITY;

	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double x = measured ? inart_emu_row_measured(r) : predicted(rep, r);

		if (is_baseline(r->algorithm) && x > 0 && x < bt) {
			bt = x;
			best = r;
		}
	}
	return best;
}

static const char *status_of(const struct inart_emu_row *row)
{
	if (row->status != NULL)
		return row->status;
	if (!row->r->finished)
		return "FAILED";
	if (!row->r->exact)
		return "WRONG";
	return row->r->cpu_bound ? "cpu-bound" : "ok";
}

int inart_emu_report_exact(const struct inart_emu_report *rep)
{
	for (int i = 0; i < rep->n_rows; i++)
		if (rep->rows[i].r != NULL && (!rep->rows[i].r->finished || !rep->rows[i].r->exact))
			return 0;
	return 1;
}

/* One target line: "  VERDICT what" into b, {"verdict", "what"} into arr. */
static void verdict(struct inart_sbuf *b, json_t *arr, const char *v, const char *line)
{
	json_t *o;

	if (b != NULL)
		inart_sbuf_printf(b, "  %s %s\n", v, line);
	if (arr == NULL)
		return;
	o = json_object();
	json_object_set_new(o, "verdict", json_string(v));
	json_object_set_new(o, "what", json_string(line));
	json_array_append_new(arr, o);
}

/* Target lines (PASS/MISS/info) into b. */
static void targets(const struct inart_emu_report *rep, struct inart_sbuf *b, json_t *arr)
{
	const struct inart_emu_row *in = find_row(rep, "inart"), *bm = best_baseline(rep, 1),
				   *bp = best_baseline(rep, 0);
	char line[512];

	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double m = inart_emu_row_measured(r), p = predicted(rep, r);
		const char *v;

		if (m < 0)
			continue;
		if (r->r->cpu_bound) {
			v = "info";
			snprintf(line, sizeof(line),
				 "%s: measured/predicted %.3f, not a link-bound run (%s)",
				 r->algorithm, m / p, r->r->cpu_why);
		} else {
			v = fabs(m / p - 1) <= TARGET_RATIO ? "PASS" : "MISS";
			snprintf(line, sizeof(line),
				 "%s: measured within 15%% of predicted on packets (ratio %.3f)",
				 r->algorithm, m / p);
		}
		verdict(b, arr, v, line);
	}
	if (in != NULL && bm != NULL && bp != NULL && inart_emu_row_measured(in) > 0) {
		double mr = 1 - inart_emu_row_measured(in) / inart_emu_row_measured(bm),
		       pr = 1 - predicted(rep, in) / predicted(rep, bp);
		const char *v = pr <= 0 || in->r->cpu_bound || bm->r->cpu_bound ? "info"
				: mr >= TARGET_REDUCTION * pr			? "PASS"
										: "MISS";

		snprintf(
		    line, sizeof(line),
		    "inart's measured reduction against the best baseline at least 80%% of "
		    "the predicted one (measured %.1f%% vs %s, predicted %.1f%% vs %s: %.0f%%)",
		    100 * mr, bm->algorithm, 100 * pr, bp->algorithm, pr > 0 ? 100 * mr / pr : 0);
		verdict(b, arr, v, line);
	}
}

char *inart_emu_report_table(const struct inart_emu_report *rep)
{
	struct inart_sbuf b = {0};
	const struct inart_emu_row *in = find_row(rep, "inart");
	double fast = 0;

	for (int e = 0; e < inart_topo_n_arcs(rep->t); e++)
		fast = rep->t->arcs[e].gbps > fast ? rep->t->arcs[e].gbps : fast;
	inart_sbuf_printf(&b,
			  "emulated: rate scale %g (fastest link %.3g Mbit/s), size scale %.4g, "
			  "header factor %.4f, %d iterations%s\n",
			  rep->rate_scale, fast * 1e3 * rep->rate_scale, rep->size_scale,
			  rep->header_factor, rep->iters,
			  rep->loss > 0 ? ", loss on every link" : "");
	inart_sbuf_printf(&b, "%-10s %12s %12s %7s %9s %6s %6s %-10s\n", "algorithm",
			  "predicted ms", "measured ms", "ratio", "vs inart", "exact", "cpu",
			  "status");
	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double m = inart_emu_row_measured(r), p = predicted(rep, r);
		char red[16] = "-", ms[16] = "-", ratio[16] = "-", cpu[16] = "-";

		if (m > 0) {
			snprintf(ms, sizeof(ms), "%.3f", m * 1e3);
			snprintf(ratio, sizeof(ratio), "%.3f", m / p);
			snprintf(cpu, sizeof(cpu), "%.2f", r->r->cpu_total);
		}
		if (in != NULL && r != in && m > 0 && inart_emu_row_measured(in) > 0)
			snprintf(red, sizeof(red), "%+.1f%%",
				 100 * (1 - inart_emu_row_measured(in) / m));
		inart_sbuf_printf(&b, "%-10s %12.3f %12s %7s %9s %6s %6s %-10s\n", r->algorithm,
				  p * 1e3, ms, ratio, red,
				  r->r == NULL	? "-"
				  : r->r->exact ? "yes"
						: "NO",
				  cpu, status_of(r));
	}
	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];

		if (r->r != NULL && (!r->r->finished || !r->r->exact) && r->r->why.msg[0])
			inart_sbuf_printf(&b, "%s: %s\n", r->algorithm, r->r->why.msg);
		if (r->r != NULL && r->r->cpu_bound)
			inart_sbuf_printf(&b, "%s: CPU-bound: %s\n", r->algorithm, r->r->cpu_why);
	}
	inart_sbuf_printf(&b, "Targets:\n");
	targets(rep, &b, NULL);
	return inart_sbuf_finish(&b);
}

char *inart_emu_report_csv(const struct inart_emu_report *rep)
{
	struct inart_sbuf b = {0};

	inart_sbuf_printf(&b, "algorithm,model_comm_s,predicted_comm_s,measured_comm_s,ratio,exact,"
			      "cpu_bound,cpu_cores,switchd_cpu_max,status\n");
	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double m = inart_emu_row_measured(r), p = predicted(rep, r);

		inart_sbuf_printf(&b, "%s,%.9g,%.9g,", r->algorithm, r->model_s, p);
		if (m > 0)
			inart_sbuf_printf(&b, "%.9g,%.6f,", m, m / p);
		else
			inart_sbuf_printf(&b, ",,");
		inart_sbuf_printf(
		    &b, "%s,%s,%.3f,%.3f,%s\n", r->r && r->r->exact ? "true" : "false",
		    r->r && r->r->cpu_bound ? "true" : "false", r->r ? r->r->cpu_total : 0,
		    r->r ? r->r->switchd_cpu_max : 0, status_of(r));
	}
	return inart_sbuf_finish(&b);
}

/* {"name": value, ...} of NULL-terminated names and their values. */
static json_t *counters(const char *const *names, const uint64_t *v)
{
	json_t *o = json_object();

	for (int i = 0; names[i]; i++)
		json_object_set_new(o, names[i], json_integer((json_int_t)v[i]));
	return o;
}

/* A run's CPU figures (docs/emulator.md, CPU-bound runs). */
static json_t *cpu_json(const struct inart_emu_result *r)
{
	json_t *cpu = json_object();

	json_object_set_new(cpu, "switchd_max_cores", json_real(r->switchd_cpu_max));
	json_object_set_new(cpu, "switchd_max_node", json_string(r->switchd_cpu_node));
	json_object_set_new(cpu, "run_cores", json_real(r->cpu_total));
	json_object_set_new(cpu, "machine_busy", json_real(r->host_busy));
	json_object_set_new(cpu, "ksoftirqd_cores", json_real(r->ksoftirqd_cores));
	json_object_set_new(cpu, "machine_irq_cores", json_real(r->irq_cores));
	json_object_set_new(cpu, "switchd_cores", json_real(r->switchd_cpu_sum));
	json_object_set_new(cpu, "ps_cores", json_real(r->ps_cpu));
	json_object_set_new(cpu, "worker_cores", json_real(r->worker_cpu));
	json_object_set_new(cpu, "background_cores", json_real(r->bg_cpu));
	json_object_set_new(cpu, "demand_cores", json_real(r->demand_cores));
	json_object_set_new(cpu, "switch_frames", json_integer((json_int_t)r->switch_frames));
	json_object_set_new(cpu, "us_per_frame", json_real(r->us_per_frame));
	return cpu;
}

static json_t *run_json(const struct inart_emu_report *rep, const struct inart_emu_row *row)
{
	const struct inart_topo *t = rep->t;
	const struct inart_emu_result *r = row->r;
	json_t *o = json_object(), *it, *jobs, *links;
	double m = inart_emu_row_measured(row), p = predicted(rep, row);

	json_object_set_new(o, "algorithm", json_string(row->algorithm));
	json_object_set_new(o, "predicted_comm_s", json_real(p));
	json_object_set_new(o, "model_comm_s", json_real(row->model_s));
	json_object_set_new(o, "measured_comm_s", m > 0 ? json_real(m) : json_null());
	json_object_set_new(o, "ratio", m > 0 ? json_real(m / p) : json_null());
	json_object_set_new(o, "exact", json_boolean(r != NULL && r->exact));
	json_object_set_new(o, "cpu_bound", json_boolean(r != NULL && r->cpu_bound));
	json_object_set_new(o, "status", json_string(status_of(row)));
	if (r == NULL)
		return o;
	json_object_set_new(o, "finished", json_boolean(r->finished));
	if (r->why.msg[0])
		json_object_set_new(o, "why", json_string(r->why.msg));
	if (r->cpu_bound)
		json_object_set_new(o, "cpu_why", json_string(r->cpu_why));
	json_object_set_new(o, "to_unscaled", json_real(row->to_unscaled));
	it = json_array();
	for (int k = 0; k < r->iters; k++)
		json_array_append_new(it, json_real(r->iter_s[k] * row->to_unscaled));
	json_object_set_new(o, "iterations_s", it);
	json_object_set_new(o, "measured_scaled_s",
			    r->finished ? json_real(median(r->iter_s, r->iters)) : json_null());
	json_object_set_new(o, "predicted_scaled_s", json_real(p / row->to_unscaled));
	jobs = json_array();
	for (int j = 0; j < r->n_jobs; j++) {
		json_t *x = json_object();
		double med = r->finished ? median(r->job_iter_s + j * r->iters, r->iters) : 0;

		json_object_set_new(x, "id", json_string(rep->js->jobs[j].id));
		json_object_set_new(x, "values_per_worker", json_integer(rep->values[j]));
		json_object_set_new(x, "comm_s",
				    med > 0 ? json_real(med * row->to_unscaled) : json_null());
		json_object_set_new(x, "goodput_mbps",
				    med > 0
					? json_real(4.0 * (double)rep->values[j] * 8 / med / 1e6)
					: json_null());
		json_array_append_new(jobs, x);
	}
	json_object_set_new(o, "jobs", jobs);
	links = json_array();
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		json_t *x;

		if (!r->arc_known[e] && (row->arc_pred == NULL || row->arc_pred[e] == 0))
			continue;
		x = json_object();
		json_object_set_new(x, "from", json_string(t->nodes[t->arcs[e].from].id));
		json_object_set_new(x, "to", json_string(t->nodes[t->arcs[e].to].id));
		json_object_set_new(x, "measured_bytes",
				    r->arc_known[e] ? json_real(r->arc_bytes[e]) : json_null());
		json_object_set_new(x, "predicted_bytes",
				    row->arc_pred ? json_real(row->arc_pred[e]) : json_null());
		json_object_set_new(x, "qdisc_drops", json_integer((json_int_t)r->arc_qdrops[e]));
		json_array_append_new(links, x);
	}
	json_object_set_new(o, "links", links);
	json_object_set_new(o, "cpu", cpu_json(r));
	json_object_set_new(
	    o, "drops",
	    counters((const char *const[]){"ring", "switch_tx", "qdisc", "agg_limit",
					   "emulated_loss", "udp_rcvbuf", "udp_sndbuf", NULL},
		     (const uint64_t[]){r->ring_drops, r->sock_tx_drops + r->out_full,
					r->qdisc_drops, r->agg_dropped, r->lost,
					r->udp_rcvbuf_errors, r->udp_sndbuf_errors}));
	json_object_set_new(
	    o, "workers",
	    counters((const char *const[]){"retransmitted", "probes", "nacks", "timeouts", NULL},
		     (const uint64_t[]){r->retransmitted, r->probes, r->nacks, r->timeouts}));
	json_object_set_new(
	    o, "switches",
	    counters((const char *const[]){"aggregated", "emitted", "partial", "early", "fallback",
					   "repaired", NULL},
		     (const uint64_t[]){r->sw_aggregated, r->sw_emitted, r->sw_partial, r->sw_early,
					r->sw_fallback, r->sw_repaired}));
	{ /* the kernel aggregation path (switchd --agg kernel): on how many switches */
		json_t *k = counters(inart_emu_kctr_names, r->kernel);

		json_object_set_new(k, "switches", json_integer(r->kernel_switches));
		json_object_set_new(o, "kernel", k);
	}
	json_object_set_new(o, "shaped_drops", json_integer((json_int_t)r->shaped_drops));
	json_object_set_new(o, "ps",
			    counters((const char *const[]){"absorbed", "nacks", "replaced",
							   "duplicates", "probes", NULL},
				     (const uint64_t[]){r->ps_absorbed, r->ps_nacks, r->ps_replaced,
							r->ps_duplicates, r->ps_probes}));
	return o;
}

char *inart_emu_report_json(const struct inart_emu_report *rep)
{
	json_t *root = json_object(), *runs = json_array(), *sc = json_object(),
	       *red = json_array(), *tg = json_array();
	const struct inart_emu_row *in = find_row(rep, "inart");
	char *s;

	for (int i = 0; i < rep->n_rows; i++)
		json_array_append_new(runs, run_json(rep, &rep->rows[i]));
	json_object_set_new(root, "runs", runs);
	{
		const char *const k[] = {"rate_scale", "size_scale", "header_factor", "loss", NULL};
		const double v[] = {rep->rate_scale, rep->size_scale, rep->header_factor,
				    rep->loss};

		for (int i = 0; k[i]; i++)
			json_object_set_new(sc, k[i], json_real(v[i]));
	}
	json_object_set_new(sc, "iterations", json_integer(rep->iters));
	json_object_set_new(sc, "cores", json_integer(rep->cores));
	json_object_set_new(sc, "prefix", json_string(rep->prefix ? rep->prefix : ""));
	if (rep->switch_io != NULL && rep->switch_io[0])
		json_object_set_new(sc, "switch_io", json_string(rep->switch_io));
	json_object_set_new(root, "scales", sc);
	for (int i = 0; in != NULL && i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double mi = inart_emu_row_measured(in), mb = inart_emu_row_measured(r);
		json_t *x;

		if (r == in || !is_baseline(r->algorithm))
			continue;
		x = json_object();
		json_object_set_new(x, "baseline", json_string(r->algorithm));
		json_object_set_new(x, "measured",
				    mi > 0 && mb > 0 ? json_real(1 - mi / mb) : json_null());
		json_object_set_new(x, "predicted",
				    json_real(1 - predicted(rep, in) / predicted(rep, r)));
		json_array_append_new(red, x);
	}
	json_object_set_new(root, "reductions", red);
	targets(rep, NULL, tg);
	json_object_set_new(root, "targets", tg);
	json_object_set_new(root, "exact", json_boolean(inart_emu_report_exact(rep)));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
	json_decref(root);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}

char *inart_emu_report_plot_data(const struct inart_emu_report *rep)
{
	struct inart_sbuf b = {0};

	inart_sbuf_printf(&b, "# algorithm predicted_ms measured_ms\n");
	for (int i = 0; i < rep->n_rows; i++) {
		const struct inart_emu_row *r = &rep->rows[i];
		double m = inart_emu_row_measured(r);

		inart_sbuf_printf(&b, "%s %.6f %.6f\n", r->algorithm, predicted(rep, r) * 1e3,
				  m > 0 ? m * 1e3 : 0);
	}
	return inart_sbuf_finish(&b);
}

char *inart_emu_report_gnuplot(const struct inart_emu_report *rep, const char *data_path,
			       const char *png_path)
{
	struct inart_sbuf b = {0};

	(void)rep;
	inart_sbuf_printf(
	    &b,
	    "set terminal pngcairo size 900,520 font 'sans,11'\n"
	    "set output '%s'\n"
	    "set title 'Communication time per iteration: model vs packets (emulated)'\n"
	    "set ylabel 'ms per iteration (unscaled instance)'\n"
	    "set style data histogram\n"
	    "set style histogram cluster gap 1\n"
	    "set style fill solid 0.8 border -1\n"
	    "set boxwidth 0.9\n"
	    "set key top left\n"
	    "set yrange [0:*]\n"
	    "set grid ytics\n"
	    "plot '%s' using 2:xtic(1) title 'predicted (evaluator x header factor)', "
	    "'' using 3 title 'measured on packets'\n",
	    png_path, data_path);
	return inart_sbuf_finish(&b);
}
