/*
 * report: the emulator's output -- per algorithm, measured and predicted
 * communication time (both for the unscaled instance), their ratio,
 * exactness, the CPU-bound flag; InArt's measured and predicted reductions
 * against each baseline; the targets of issue 12 (PASS/MISS); per-link
 * bytes from switch counters beside the evaluator's loads.  As a table,
 * CSV, JSON, and a gnuplot script for a PNG chart.  Pure formatting.
 *
 * Definitions (docs/emulator.md):
 *   predicted_comm_s  the evaluator's comm time of the unscaled instance
 *                     times the header factor (the prediction on packets);
 *   model_comm_s      the evaluator's comm time as `inart eval` prints it;
 *   measured_comm_s   the median over iterations of (last result - first
 *                     send) over every worker of every job, on packets,
 *                     times to_unscaled;
 *   ratio             measured_comm_s / predicted_comm_s.
 */
#ifndef INART_EMU_REPORT_H
#define INART_EMU_REPORT_H

#include "cp/model/graph.h"
#include "cp/model/jobs.h"
#include "emu/run.h"

struct inart_emu_row {
	const char *algorithm;
	double model_s;	    /* evaluator, unscaled instance */
	double to_unscaled; /* scaled seconds -> unscaled seconds */
	double *arc_pred;   /* per arc: predicted bytes over the run (scaled, header
			       factor in), or NULL */
	const char *status; /* NULL when it ran; else why not (no plan...) */
	struct inart_emu_result *r;
};

struct inart_emu_report {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	struct inart_emu_row *rows;
	int n_rows;
	double rate_scale, size_scale, header_factor, loss;
	const long *values; /* per job */
	int iters, cores;
	const char *prefix;
	const char *switch_io; /* the switches' I/O back ends (NULL: not known) */
};

/* Measured comm time of a row (unscaled), or -1 if it has none. */
double inart_emu_row_measured(const struct inart_emu_row *row);

/* Malloc'ed text, or NULL + errno. */
char *inart_emu_report_table(const struct inart_emu_report *rep);
char *inart_emu_report_csv(const struct inart_emu_report *rep);
char *inart_emu_report_json(const struct inart_emu_report *rep);
/* Data file (algorithm predicted_ms measured_ms) and the gnuplot script
 * that draws it into png. */
char *inart_emu_report_plot_data(const struct inart_emu_report *rep);
char *inart_emu_report_gnuplot(const struct inart_emu_report *rep, const char *data_path,
			       const char *png_path);

/* 1 if every run that ran finished with exact results. */
int inart_emu_report_exact(const struct inart_emu_report *rep);

#endif
