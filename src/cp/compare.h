/*
 * compare: every algorithm on one input, side by side.
 *
 * A row per algorithm: communication/push/pull time, reduction versus the best
 * baseline (1 - t / t_best_baseline), ratio to the LP lower bound, planning
 * time, and a status (ok, or the reason it has no result, e.g. milp timed
 * out).  Formatting as an aligned text table, CSV or JSON is pure string
 * building: the caller prints.
 */
#ifndef INART_COMPARE_H
#define INART_COMPARE_H

#include "planner.h"

struct inart_compare_row {
	char algorithm[32];
	int ok;             /* 0: no result, see status */
	char status[128];
	double comm_time_s, push_time_s, pull_time_s;
	double reduction;   /* vs best baseline; NaN if n/a */
	double lp_ratio;    /* comm / lp bound; NaN if n/a */
	double plan_time_s;
	int is_baseline;    /* ps, byteps, switchml, atp */
};

struct inart_compare {
	int n_rows;
	struct inart_compare_row *rows;
	double lp_bound_s;
	double best_baseline_s;
	char best_baseline[32];
};

/* Run the listed algorithms (NULL: all).  0 or -errno; an algorithm that
 * fails gives a row with ok = 0 rather than failing the whole compare. */
int inart_compare_run(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const char *const *algos,
		      struct inart_compare *out, struct inart_err *err);
void inart_compare_free(struct inart_compare *c);

enum inart_compare_format { INART_FMT_TABLE, INART_FMT_CSV, INART_FMT_JSON };
/* malloc'ed text, NULL + errno on failure. */
char *inart_compare_format(const struct inart_compare *c, enum inart_compare_format f);

#endif
