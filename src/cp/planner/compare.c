/*
 * compare: run several algorithms on one input and put the results side by
 * side (see compare.h).
 *
 * Every algorithm goes through inart_planner_run; a failure becomes a row
 * with ok = 0 and the reason as status.  The best baseline is the fastest of
 * the rows flagged is_baseline (ps, byteps, switchml, atp) that succeeded;
 * the LP bound comes from the "lp" row, the ring time from the "ring" row,
 * the best proven bound is the highest bound of any row (every one is a
 * lower bound on the plans over the same candidates).  Formatting builds a string and never
 * prints.  Ownership: the compare struct owns its rows array.
 */
#include "cp/planner/compare.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/sbuf.h"

static const char *const baseline_names[] = {"ps", "byteps", "switchml", "atp", NULL};

static int is_baseline(const char *name)
{
	for (int i = 0; baseline_names[i]; i++)
		if (strcmp(baseline_names[i], name) == 0)
			return 1;
	return 0;
}

static void row_fail(struct inart_compare_row *r, int rc, const struct inart_err *e)
{
	const char *why = e->msg[0] ? e->msg : strerror(-rc);

	r->ok = 0;
	r->comm_time_s = r->push_time_s = r->pull_time_s = NAN;
	if (rc == -ETIMEDOUT && strstr(why, "time") == NULL)
		snprintf(r->status, sizeof(r->status), "timed out: %.*s",
			 (int)sizeof(r->status) - 12, why);
	else
		snprintf(r->status, sizeof(r->status), "%.*s", (int)sizeof(r->status) - 1, why);
}

/* The comparison-wide values from the rows: best baseline, LP bound, ring
 * time, best proven bound (each row's best_bound_s bounds plans without ring
 * jobs, its ring_bound_s plans with them: the bound is the lower of the
 * highest of each). */
static void compare_totals(struct inart_compare *c)
{
	double ring_b = NAN;
	const char *ring_by = "", *ring_src = "";

	c->best_baseline_s = c->lp_bound_s = c->ring_s = c->best_bound_s = NAN;
	c->best_baseline[0] = c->best_bound_source[0] = '\0';
	for (int i = 0; i < c->n_rows; i++) {
		const struct inart_compare_row *r = &c->rows[i];

		if (!r->ok)
			continue;
		if (strcmp(r->algorithm, "lp") == 0)
			c->lp_bound_s = r->comm_time_s;
		if (strcmp(r->algorithm, "ring") == 0)
			c->ring_s = r->comm_time_s;
		if (r->is_baseline &&
		    (isnan(c->best_baseline_s) || r->comm_time_s < c->best_baseline_s)) {
			c->best_baseline_s = r->comm_time_s;
			snprintf(c->best_baseline, sizeof(c->best_baseline), "%s", r->algorithm);
		}
		if (r->best_bound_s > 0 &&
		    (isnan(c->best_bound_s) || r->best_bound_s > c->best_bound_s)) {
			c->best_bound_s = r->best_bound_s;
			snprintf(c->best_bound_source, sizeof(c->best_bound_source),
				 "%.15s (%.31s)", r->bound_source[0] ? r->bound_source : "?",
				 r->algorithm);
		}
		if (r->ring_bound_s > 0 && (isnan(ring_b) || r->ring_bound_s > ring_b)) {
			ring_b = r->ring_bound_s;
			ring_by = r->algorithm;
			ring_src = r->ring_bound_source;
		}
	}
	if (ring_b > 0 && !(c->best_bound_s <= ring_b)) {
		c->best_bound_s = ring_b;
		snprintf(c->best_bound_source, sizeof(c->best_bound_source),
			 "ring-mix/%.15s (%.31s)", ring_src[0] ? ring_src : "?", ring_by);
	}
}

/* Fill the totals, reductions and ratios from the rows. */
static void compare_summarize(struct inart_compare *c)
{
	compare_totals(c);
	for (int i = 0; i < c->n_rows; i++) {
		struct inart_compare_row *r = &c->rows[i];

		r->reduction = r->vs_ring = r->lp_ratio = r->bound_ratio = NAN;
		if (!r->ok)
			continue;
		if (c->best_baseline_s > 0)
			r->reduction = 1.0 - r->comm_time_s / c->best_baseline_s;
		if (c->ring_s > 0)
			r->vs_ring = 1.0 - r->comm_time_s / c->ring_s;
		if (c->lp_bound_s > 0)
			r->lp_ratio = r->comm_time_s / c->lp_bound_s;
		if (c->best_bound_s > 0)
			r->bound_ratio = r->comm_time_s / c->best_bound_s;
	}
}

static int ring_jobs(const struct inart_plan *p)
{
	int n = 0;

	for (int j = 0; j < p->n_jobs; j++)
		n += p->jobs[j].n_ring > 0;
	return n;
}

/* A successful row from plan p: times, bound, status. */
static void row_ok(struct inart_compare_row *r, const struct inart_plan *p)
{
	const char *src = inart_bound_source_name(p->bound_source);
	const char *rsrc = inart_bound_source_name(p->ring_bound_source);

	r->ok = 1;
	r->comm_time_s = p->comm_time_s;
	r->push_time_s = p->push_time_s;
	r->pull_time_s = p->pull_time_s;
	if (p->plan_time_s > 0)
		r->plan_time_s = p->plan_time_s;
	r->best_bound_s = p->best_bound_s;
	r->ring_bound_s = p->ring_bound_s;
	snprintf(r->bound_source, sizeof(r->bound_source), "%s", src ? src : "");
	snprintf(r->ring_bound_source, sizeof(r->ring_bound_source), "%s", rsrc ? rsrc : "");
	r->milp_status = p->milp_status;
	snprintf(r->origin, sizeof(r->origin), "%s", p->origin ? p->origin : "");
	if (p->milp_status == INART_MILP_OPTIMAL)
		snprintf(r->status, sizeof(r->status), "optimal");
	else if (p->milp_status == INART_MILP_TIME_LIMIT)
		snprintf(r->status, sizeof(r->status), "limit (gap %.1f%%)",
			 p->best_bound_s > 0 ? 100.0 * (p->comm_time_s / p->best_bound_s - 1)
					     : NAN);
	else if (p->origin != NULL)
		snprintf(r->status, sizeof(r->status), "ok, routes of %.32s (baseline guard)",
			 p->origin);
	else if (inart_plan_has_ring(p) && strcmp(p->algorithm, "ring") != 0)
		snprintf(r->status, sizeof(r->status), "ok, %d of %d jobs as rings", ring_jobs(p),
			 p->n_jobs);
	else
		snprintf(r->status, sizeof(r->status), "ok");
}

int inart_compare_run(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const char *const *algos,
		      struct inart_compare *out, struct inart_err *err)
{
	const char *const *list = algos ? algos : inart_algorithms;
	int n = 0;

	memset(out, 0, sizeof(*out));
	out->lp_bound_s = out->best_baseline_s = NAN;
	while (list[n])
		n++;
	for (int i = 0; i < n; i++) {
		if (!inart_algorithm_known(list[i]))
			return inart_err_set(err, -EINVAL, "unknown algorithm '%s'", list[i]);
		if (strlen(list[i]) >= sizeof(out->rows[0].algorithm))
			return inart_err_set(err, -EINVAL, "algorithm name '%s' too long", list[i]);
	}
	out->rows = calloc((size_t)(n > 0 ? n : 1), sizeof(*out->rows));
	if (out->rows == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	out->n_rows = n;
	for (int i = 0; i < n; i++) {
		struct inart_compare_row *r = &out->rows[i];
		struct inart_err e = {{0}};
		struct inart_plan *p = NULL;
		double t0 = inart_now_s();
		int rc;

		snprintf(r->algorithm, sizeof(r->algorithm), "%s", list[i]);
		r->is_baseline = is_baseline(list[i]);
		r->best_bound_s = r->ring_bound_s = NAN;
		rc = inart_planner_run(list[i], t, js, opt, &p, &e);
		r->plan_time_s = inart_now_s() - t0;
		if (rc < 0 || p == NULL) {
			row_fail(r, rc < 0 ? rc : -EIO, &e);
			inart_plan_destroy(p);
			continue;
		}
		row_ok(r, p);
		inart_plan_destroy(p);
	}
	compare_summarize(out);
	return 0;
}

void inart_compare_free(struct inart_compare *c)
{
	if (c == NULL)
		return;
	free(c->rows);
	c->rows = NULL;
	c->n_rows = 0;
}

enum { N_COLS = 10 };

static void pct_cell(char *cell, double frac)
{
	double pct = frac * 100.0;

	if (fabs(pct) < 0.05) /* no "-0.0%" for rounding noise */
		pct = 0;
	if (!isfinite(pct))
		snprintf(cell, 160, "-");
	else
		snprintf(cell, 160, "%+.1f%%", pct);
}

static void ratio_cell(char *cell, double r)
{
	if (!isfinite(r))
		snprintf(cell, 160, "-");
	else
		snprintf(cell, 160, "%.3f", r);
}

static void table_cells(const struct inart_compare *c, int i, char cell[N_COLS][160])
{
	const struct inart_compare_row *r = &c->rows[i];
	int best = r->ok && r->is_baseline && strcmp(r->algorithm, c->best_baseline) == 0;
	double ms[3] = {r->comm_time_s * 1e3, r->push_time_s * 1e3, r->pull_time_s * 1e3};

	snprintf(cell[0], 160, "%s%s", r->algorithm, best ? " *" : "");
	for (int k = 1; k <= 3; k++) {
		if (r->ok && isfinite(ms[k - 1]))
			snprintf(cell[k], 160, "%.3f", ms[k - 1]);
		else
			snprintf(cell[k], 160, "-");
	}
	pct_cell(cell[4], r->reduction);
	pct_cell(cell[5], r->vs_ring);
	ratio_cell(cell[6], r->lp_ratio);
	ratio_cell(cell[7], r->bound_ratio);
	snprintf(cell[8], 160, "%.3f", r->plan_time_s);
	snprintf(cell[9], 160, "%s", r->status);
}

static void table_line(struct inart_sbuf *b, const int *width, char cell[N_COLS][160])
{
	/* Column 0 and the status are left-aligned, numbers right-aligned. */
	for (int k = 0; k < N_COLS; k++) {
		if (k == 0)
			inart_sbuf_printf(b, "%-*s", width[k], cell[k]);
		else if (k == N_COLS - 1)
			inart_sbuf_printf(b, "  %s", cell[k]);
		else
			inart_sbuf_printf(b, "  %*s", width[k], cell[k]);
	}
	inart_sbuf_printf(b, "\n");
}

/* The lines under the table: best baseline, bounds, ring. */
static void table_footer(const struct inart_compare *c, struct inart_sbuf *b)
{
	if (c->best_baseline[0])
		inart_sbuf_printf(b, "* best baseline: %s, %.3f ms", c->best_baseline,
				  c->best_baseline_s * 1e3);
	else
		inart_sbuf_printf(b, "no baseline result");
	if (!isnan(c->lp_bound_s))
		inart_sbuf_printf(b, "; LP lower bound %.3f ms", c->lp_bound_s * 1e3);
	if (c->best_bound_s > 0 && c->best_bound_s != c->lp_bound_s)
		inart_sbuf_printf(b, "; best proven bound %.3f ms, %s", c->best_bound_s * 1e3,
				  c->best_bound_source);
	inart_sbuf_printf(b, "\n");
	for (int i = 0; c->ring_s > 0 && i < c->n_rows; i++) {
		const struct inart_compare_row *r = &c->rows[i];

		if (!r->ok || strcmp(r->algorithm, "inart") != 0)
			continue;
		if (r->comm_time_s > c->ring_s)
			inart_sbuf_printf(b, "ring all-reduce (%.3f ms) beats inart by %.1f%%\n",
					  c->ring_s * 1e3,
					  100.0 * (r->comm_time_s / c->ring_s - 1));
		else
			inart_sbuf_printf(b,
					  "inart is %.1f%% below the ring all-reduce (%.3f ms)\n",
					  100.0 * r->vs_ring, c->ring_s * 1e3);
	}
}

static void format_table(const struct inart_compare *c, struct inart_sbuf *b)
{
	static const char *const head[N_COLS] = {
	    "algorithm", "comm ms", "push ms", "pull ms", "vs best baseline",
	    "vs ring",	 "/LP",	    "/bound",  "plan s",  "status",
	};
	int width[N_COLS];
	char cell[N_COLS][160];

	for (int k = 0; k < N_COLS; k++) {
		width[k] = (int)strlen(head[k]);
		snprintf(cell[k], 160, "%s", head[k]);
	}
	for (int i = 0; i < c->n_rows; i++) {
		table_cells(c, i, cell);
		for (int k = 0; k < N_COLS; k++)
			if ((int)strlen(cell[k]) > width[k])
				width[k] = (int)strlen(cell[k]);
	}
	for (int k = 0; k < N_COLS; k++)
		snprintf(cell[k], 160, "%s", head[k]);
	table_line(b, width, cell);
	for (int i = 0; i < c->n_rows; i++) {
		table_cells(c, i, cell);
		table_line(b, width, cell);
	}
	table_footer(c, b);
}

static void csv_num(struct inart_sbuf *b, double v)
{
	if (isfinite(v))
		inart_sbuf_printf(b, ",%.9g", v);
	else
		inart_sbuf_printf(b, ",");
}

static void csv_str(struct inart_sbuf *b, const char *s)
{
	if (strpbrk(s, ",\"\n\r") == NULL) {
		inart_sbuf_printf(b, "%s", s);
		return;
	}
	inart_sbuf_printf(b, "\"");
	for (; *s; s++)
		inart_sbuf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
	inart_sbuf_printf(b, "\"");
}

static void format_csv(const struct inart_compare *c, struct inart_sbuf *b)
{
	inart_sbuf_printf(b, "algorithm,ok,comm_time_s,push_time_s,pull_time_s,reduction,vs_ring,"
			     "lp_ratio,bound_ratio,plan_time_s,is_baseline,best_bound_s,"
			     "bound_source,milp_status,origin,status,ring_bound_s,"
			     "ring_bound_source\n");
	for (int i = 0; i < c->n_rows; i++) {
		const struct inart_compare_row *r = &c->rows[i];
		const char *ms = inart_milp_status_name(r->milp_status);

		csv_str(b, r->algorithm);
		inart_sbuf_printf(b, ",%d", r->ok);
		csv_num(b, r->comm_time_s);
		csv_num(b, r->push_time_s);
		csv_num(b, r->pull_time_s);
		csv_num(b, r->reduction);
		csv_num(b, r->vs_ring);
		csv_num(b, r->lp_ratio);
		csv_num(b, r->bound_ratio);
		csv_num(b, r->plan_time_s);
		inart_sbuf_printf(b, ",%d", r->is_baseline);
		csv_num(b, r->best_bound_s);
		inart_sbuf_printf(b, ",");
		csv_str(b, r->bound_source);
		inart_sbuf_printf(b, ",%s,", ms ? ms : "");
		csv_str(b, r->origin);
		inart_sbuf_printf(b, ",");
		csv_str(b, r->status);
		csv_num(b, r->ring_bound_s);
		inart_sbuf_printf(b, ",");
		csv_str(b, r->ring_bound_source);
		inart_sbuf_printf(b, "\n");
	}
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A string, or null for NULL or "". */
static json_t *jstr(const char *s)
{
	return s != NULL && s[0] ? json_string(s) : json_null();
}

/* A row as a JSON object (json_pack: NULL if any value could not be made). */
static json_t *row_json(const struct inart_compare_row *r)
{
	return json_pack("{s:s, s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, "
			 "s:o, s:o, s:o, s:o}",
			 "algorithm", r->algorithm, "ok", r->ok, "status", r->status, "comm_time_s",
			 jnum(r->comm_time_s), "push_time_s", jnum(r->push_time_s), "pull_time_s",
			 jnum(r->pull_time_s), "reduction", jnum(r->reduction), "vs_ring",
			 jnum(r->vs_ring), "lp_ratio", jnum(r->lp_ratio), "bound_ratio",
			 jnum(r->bound_ratio), "plan_time_s", jnum(r->plan_time_s), "is_baseline",
			 r->is_baseline, "best_bound_s", jnum(r->best_bound_s), "ring_bound_s",
			 jnum(r->ring_bound_s), "ring_bound_source", jstr(r->ring_bound_source),
			 "bound_source", jstr(r->bound_source), "milp_status",
			 jstr(inart_milp_status_name(r->milp_status)), "origin", jstr(r->origin));
}

static char *format_json(const struct inart_compare *c)
{
	json_t *root = NULL, *rows = json_array();
	char *s, *out = NULL;

	for (int i = 0; rows != NULL && i < c->n_rows; i++)
		if (json_array_append_new(rows, row_json(&c->rows[i])) < 0)
			goto out;
	root = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:O}", "lp_bound_s", jnum(c->lp_bound_s),
			 "best_baseline", jstr(c->best_baseline), "best_baseline_s",
			 jnum(c->best_baseline_s), "ring_s", jnum(c->ring_s), "best_bound_s",
			 jnum(c->best_bound_s), "best_bound_source", jstr(c->best_bound_source),
			 "rows", rows);
	if (root == NULL)
		goto out;
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	if (s == NULL)
		goto out;
	/* Hand back a string the caller frees with free(). */
	out = malloc(strlen(s) + 2);
	if (out)
		sprintf(out, "%s\n", s);
	free(s);
out:
	json_decref(rows);
	json_decref(root);
	if (out == NULL)
		errno = ENOMEM;
	return out;
}

char *inart_compare_format(const struct inart_compare *c, enum inart_compare_format f)
{
	struct inart_sbuf b = {0};

	switch (f) {
	case INART_FMT_TABLE:
		format_table(c, &b);
		return inart_sbuf_finish(&b);
	case INART_FMT_CSV:
		format_csv(c, &b);
		return inart_sbuf_finish(&b);
	case INART_FMT_JSON:
		return format_json(c);
	}
	errno = EINVAL;
	return NULL;
}
