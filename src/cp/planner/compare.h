/*
 * compare: every algorithm on one input, side by side.
 *
 * A row per algorithm: communication/push/pull time, reduction versus the best
 * baseline (1 - t / t_best_baseline) and versus the ring all-reduce, ratio to
 * the LP lower bound and to the best proven bound (the highest bound any row
 * proved: LP, strengthened LP, or CBC's), planning time, and a status (ok;
 * milp: optimal or limit (gap x%); inart: the baseline whose routes the guard
 * kept; or the reason it has no result, e.g. milp found no solution).  Formatting as an aligned
 * text table, CSV or JSON is pure string building: the caller prints.
 */
#ifndef INART_COMPARE_H
#define INART_COMPARE_H

#include "cp/planner/planner.h"

struct inart_compare_row {
	char algorithm[32];
	int ok;		  /* 0: no result, see status */
	char status[128]; /* ok; milp: optimal / limit (gap x%); inart: notes
			     that the guard kept a baseline's routes */
	double comm_time_s, push_time_s, pull_time_s;
	double reduction;   /* vs best baseline; NaN if n/a */
	double vs_ring;	    /* 1 - t / ring's time; NaN if n/a */
	double lp_ratio;    /* comm / lp bound; NaN if n/a */
	double bound_ratio; /* comm / best proven bound of the comparison; NaN if n/a */
	double plan_time_s;
	int is_baseline;		    /* ps, byteps, switchml, atp */
	double best_bound_s;		    /* the plan's own best bound, NaN if none */
	double ring_bound_s;		    /* inart, bound: its bound over plans with
					       ring jobs (plan.h), NaN if none */
	char bound_source[16];		    /* its source ("lp", "cbc", ...), "" if none */
	char ring_bound_source[16];	    /* ring_bound_s's ("load", "cbc", ...) */
	enum inart_milp_status milp_status; /* milp rows */
	char origin[32];		    /* inart: the baseline the guard kept, "" if none */
};

struct inart_compare {
	int n_rows;
	struct inart_compare_row *rows;
	double lp_bound_s;
	double best_baseline_s;
	char best_baseline[32];
	double ring_s;		    /* the ring row's time, NaN if none */
	double best_bound_s;	    /* the bound on every plan the compared algorithms
				     * search: min(highest bound over plans without
				     * ring jobs, highest over plans with them), NaN
				     * if none */
	char best_bound_source[64]; /* e.g. "cbc (milp)"; "ring-mix (inart)" when the
				     * bound over plans with ring jobs is the lower */
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
