/*
 * split_sys: the linear load model of phase 1 (split_sys.h), compiled from
 * a plan's routes for split.c.
 *
 * The plan's routes are compiled into a sparse matrix of utilization
 * coefficients u[r][v] = c_{r,j,p} / cap_r (seconds per unit share), one
 * column per share v = (job j, PS p) and one row per resource (directed arc
 * or INA switch) touched by some (j, p).  Rows that are identical (the access
 * links of the workers of one job, say) are the same constraint and are
 * merged, which shrinks tens of thousands of arcs to a few hundred rows.  The
 * coefficients are scaled so that the even split has T = 1.
 *
 * Ownership: the model's arrays belong to it (inart_split_sys_free); the
 * scratch of a build is freed before it returns.
 */
#include "cp/planner/split_sys.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/slab.h"

void inart_split_sys_free(struct inart_split_sys *s)
{
	free(s->job_off);
	free(s->block);
	memset(s, 0, sizeof(*s));
}

/* Growable (resource, count) column under construction. */
struct colbuf {
	int n, cap;
	int *res;
	double *u;
};

static int colbuf_push(struct colbuf *b, int r, double u)
{
	if (b->n == b->cap) {
		int nc = b->cap ? 2 * b->cap : 1024;
		int *nr = realloc(b->res, sizeof(int) * (size_t)nc);
		double *nu;

		if (nr == NULL)
			return -ENOMEM;
		b->res = nr;
		nu = realloc(b->u, sizeof(double) * (size_t)nc);
		if (nu == NULL)
			return -ENOMEM;
		b->u = nu;
		b->cap = nc;
	}
	b->res[b->n] = r;
	b->u[b->n] = u;
	b->n++;
	return 0;
}

/* Scratch for counting streams of one (j, p) per raw resource (arcs first,
 * then nodes). */
struct counter {
	int *cnt;
	int *touched;
	int n_touched;
};

static void count_res(struct counter *c, int r, int k)
{
	if (c->cnt[r] == 0)
		c->touched[c->n_touched++] = r;
	c->cnt[r] += k;
}

static const char *nid(const struct inart_topo *t, int v)
{
	return (v >= 0 && v < t->n_nodes) ? t->nodes[v].id : "?";
}

/* Count one path: push forward on every arc, pull on its reverse. */
static int count_path(const struct inart_topo *t, struct counter *c, const int *path, int n,
		      int first, int last, const char *what, const char *job, struct inart_err *err)
{
	if (n < 2 || path[0] != first || path[n - 1] != last)
		return inart_err_set(
		    err, -EINVAL, "job %s: %s path from %s to %s has wrong endpoints or length %d",
		    job, what, nid(t, first), nid(t, last), n);
	for (int i = 0; i + 1 < n; i++) {
		int a = path[i], b = path[i + 1], e;

		if (a < 0 || a >= t->n_nodes || b < 0 || b >= t->n_nodes)
			return inart_err_set(err, -EINVAL, "job %s: %s path has node number %d",
					     job, what, a < 0 || a >= t->n_nodes ? a : b);
		e = inart_topo_arc_between(t, a, b);
		if (e < 0)
			return inart_err_set(err, -EINVAL,
					     "job %s: %s path not contiguous: no link %s-%s", job,
					     what, t->nodes[a].id, t->nodes[b].id);
		if (inart_arc_residual(&t->arcs[e]) <= 0 ||
		    inart_arc_residual(&t->arcs[e ^ 1]) <= 0)
			return inart_err_set(err, -EINVAL,
					     "job %s: %s path uses link %s-%s without residual "
					     "capacity",
					     job, what, t->nodes[a].id, t->nodes[b].id);
		count_res(c, e, 1);
		count_res(c, e ^ 1, 1);
	}
	return 0;
}

/* One aggregation child at node v (an INA switch). */
static int count_child(const struct inart_topo *t, struct counter *c, int v, const char *job,
		       struct inart_err *err)
{
	if (v < 0 || v >= t->n_nodes || !t->nodes[v].ina || t->nodes[v].agg_gbps <= 0)
		return inart_err_set(err, -EINVAL,
				     "job %s: aggregation at %s, which is not an INA switch", job,
				     nid(t, v));
	count_res(c, 2 * t->n_links + v, 1);
	return 0;
}

/* A route of PS ps (a flow or a tree) from first to last: its path, and an
 * aggregation child at last unless last is the PS itself. */
static int count_route(const struct inart_topo *t, struct counter *c, const int *path, int n,
		       int first, int last, int ps, const char *what, const char *job,
		       struct inart_err *err)
{
	int rc = count_path(t, c, path, n, first, last, what, job, err);

	if (rc == 0 && last != ps)
		rc = count_child(t, c, last, job, err);
	return rc;
}

/* Check that every worker has exactly one flow to every PS of job j. */
static int check_flows(const struct inart_topo *t, const struct inart_job *job,
		       const struct inart_job_plan *jp, int *widx, struct inart_err *err)
{
	int nw = job->n_workers, np = job->n_ps, rc = 0;
	int *cnt = calloc((size_t)nw * (size_t)np + 1, sizeof(int));

	if (cnt == NULL)
		return -ENOMEM;
	for (int w = 0; w < nw; w++)
		widx[job->workers[w]] = w;
	for (int i = 0; i < jp->n_flows && rc == 0; i++) {
		const struct inart_flow *f = &jp->flows[i];
		int p = inart_job_ps_index(job, f->ps);
		int w = (f->worker >= 0 && f->worker < t->n_nodes) ? widx[f->worker] : -1;

		if (p < 0 || w < 0)
			rc = inart_err_set(err, -EINVAL,
					   "job %s: flow %s -> %s is not from a worker to a PS of "
					   "the job",
					   job->id, nid(t, f->worker), nid(t, f->ps));
		else if (++cnt[w * np + p] > 1)
			rc =
			    inart_err_set(err, -EINVAL, "job %s: two flows from worker %s to PS %s",
					  job->id, nid(t, f->worker), nid(t, f->ps));
	}
	for (int p = 0; p < np && rc == 0; p++)
		for (int w = 0; w < nw && rc == 0; w++)
			if (cnt[w * np + p] == 0)
				rc = inart_err_set(
				    err, -EINVAL,
				    "job %s: PS %s has no flow from worker %s (every "
				    "(worker, PS) must be routed)",
				    job->id, nid(t, job->ps[p]), nid(t, job->workers[w]));
	for (int w = 0; w < nw; w++)
		widx[job->workers[w]] = -1;
	free(cnt);
	return rc;
}

/* Columns of job j's shares appended to cb (col_off filled for them). */
static int build_job(const struct inart_topo *t, const struct inart_job *job,
		     const struct inart_job_plan *jp, int v0, struct counter *c, struct colbuf *cb,
		     int *col_off, double *raw_load, struct inart_err *err)
{
	double g = inart_job_gbit(job);
	int n_arcs = 2 * t->n_links, rc;

	for (int p = 0; p < job->n_ps; p++) {
		int ps = job->ps[p];

		c->n_touched = 0;
		for (int i = 0; i < jp->n_flows; i++) {
			const struct inart_flow *f = &jp->flows[i];

			if (f->ps != ps)
				continue;
			rc = count_route(t, c, f->path, f->n_path, f->worker, f->agg, ps, "flow",
					 job->id, err);
			if (rc < 0)
				return rc;
		}
		for (int i = 0; i < jp->n_trees; i++) {
			const struct inart_tree *tr = &jp->trees[i];

			if (tr->ps != ps)
				continue;
			if (tr->sw == ps || tr->sw < 0 || tr->sw >= t->n_nodes ||
			    !t->nodes[tr->sw].ina)
				return inart_err_set(
				    err, -EINVAL, "job %s: tree of PS %s at %s, not an INA switch",
				    job->id, nid(t, ps), nid(t, tr->sw));
			rc = count_route(t, c, tr->path, tr->n_path, tr->sw, tr->parent, ps, "tree",
					 job->id, err);
			if (rc < 0)
				return rc;
		}
		for (int k = 0; k < c->n_touched; k++) {
			int r = c->touched[k];
			double cap = r < n_arcs ? inart_arc_residual(&t->arcs[r])
						: t->nodes[r - n_arcs].agg_gbps;

			rc = colbuf_push(cb, r, g * c->cnt[r] / cap);
			if (raw_load != NULL)
				raw_load[r] += jp->split[p] * g * c->cnt[r];
			c->cnt[r] = 0;
			if (rc < 0)
				return rc;
		}
		col_off[v0 + p + 1] = cb->n;
	}
	return 0;
}

static uint64_t row_hash(const int *var, const double *u, int n)
{
	uint64_t h = 0x84222325cbf29ce4ull;

	for (int i = 0; i < n; i++) {
		uint64_t b;

		memcpy(&b, &u[i], sizeof(b));
		h = (h ^ (uint64_t)var[i]) * 0x100000001b3ull;
		h = (h ^ b) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/* The distinct rows among the n_raw rows in CSR (roff, rvar, ru): the first
 * row of each kind into uniq, in order (empty rows skipped), by open
 * addressing in table (hsize slots, a power of two above the rows).
 * Returns how many. */
static int uniq_rows(int n_raw, const int *roff, const int *rvar, const double *ru, int *table,
		     int hsize, int *uniq)
{
	int n_uniq = 0;

	for (int i = 0; i < hsize; i++)
		table[i] = -1;
	for (int r = 0; r < n_raw; r++) {
		int len = roff[r + 1] - roff[r];
		uint64_t h;
		size_t slot;

		if (len == 0)
			continue;
		h = row_hash(rvar + roff[r], ru + roff[r], len);
		for (slot = h & (size_t)(hsize - 1);; slot = (slot + 1) & (size_t)(hsize - 1)) {
			int q = table[slot];

			if (q < 0) {
				table[slot] = r;
				uniq[n_uniq++] = r;
				break;
			}
			if (roff[q + 1] - roff[q] == len &&
			    memcmp(rvar + roff[q], rvar + roff[r], sizeof(int) * (size_t)len) ==
				0 &&
			    memcmp(ru + roff[q], ru + roff[r], sizeof(double) * (size_t)len) == 0)
				break;
		}
	}
	return n_uniq;
}

/* The merged system's CSR and CSC arrays (n_res rows, nnz entries), in one
 * slab (s->block). */
static void sys_lay_out(void *obj, struct inart_slab *sl)
{
	struct inart_split_sys *s = obj;
	size_t nnz = (size_t)s->nnz;

	s->row_off = inart_slab_take(sl, (size_t)s->n_res + 1, sizeof(*s->row_off));
	s->col_off = inart_slab_take(sl, (size_t)s->n_var + 1, sizeof(*s->col_off));
	s->row_var = inart_slab_take(sl, nnz + 1, sizeof(*s->row_var));
	s->row_u = inart_slab_take(sl, nnz + 1, sizeof(*s->row_u));
	s->col_res = inart_slab_take(sl, nnz + 1, sizeof(*s->col_res));
	s->col_u = inart_slab_take(sl, nnz + 1, sizeof(*s->col_u));
}

/* Transpose the raw columns into rows, merge identical rows, and rebuild the
 * columns over the merged rows. */
static int sys_finish(struct inart_split_sys *s, int n_raw, const int *col_off,
		      const struct colbuf *cb)
{
	int n_var = s->n_var, nnz = cb->n, rc = -ENOMEM, n_rows = 0, n_uniq = 0, hsize = 1;
	int *roff = calloc((size_t)n_raw + 1, sizeof(int));
	int *rvar = malloc(sizeof(int) * (size_t)(nnz + 1));
	double *ru = malloc(sizeof(double) * (size_t)(nnz + 1));
	int *pos = NULL, *table = NULL, *uniq = NULL;

	if (roff == NULL || rvar == NULL || ru == NULL)
		goto out;
	for (int k = 0; k < nnz; k++)
		roff[cb->res[k] + 1]++;
	for (int r = 0; r < n_raw; r++) {
		n_rows += roff[r + 1] > 0;
		roff[r + 1] += roff[r];
	}
	pos = malloc(sizeof(int) * (size_t)(n_raw + 1));
	while (hsize < 2 * n_rows + 2)
		hsize *= 2;
	table = malloc(sizeof(int) * (size_t)hsize);
	uniq = malloc(sizeof(int) * (size_t)(n_rows + 1));
	if (pos == NULL || table == NULL || uniq == NULL)
		goto out;
	memcpy(pos, roff, sizeof(int) * (size_t)n_raw);
	for (int v = 0; v < n_var; v++) /* columns in order: rows sorted by var */
		for (int k = col_off[v]; k < col_off[v + 1]; k++) {
			int at = pos[cb->res[k]]++;

			rvar[at] = v;
			ru[at] = cb->u[k];
		}
	n_uniq = uniq_rows(n_raw, roff, rvar, ru, table, hsize, uniq);
	/* Merged rows in CSR and CSC. */
	s->n_res = n_uniq;
	nnz = 0;
	for (int i = 0; i < n_uniq; i++)
		nnz += roff[uniq[i] + 1] - roff[uniq[i]];
	s->nnz = nnz;
	s->block = inart_slab_block(s, sys_lay_out);
	if (s->block == NULL)
		goto out;
	for (int i = 0; i < n_uniq; i++)
		s->row_off[i + 1] = s->row_off[i] + roff[uniq[i] + 1] - roff[uniq[i]];
	for (int i = 0; i < n_uniq; i++) {
		int len = s->row_off[i + 1] - s->row_off[i];

		memcpy(s->row_var + s->row_off[i], rvar + roff[uniq[i]], sizeof(int) * (size_t)len);
		memcpy(s->row_u + s->row_off[i], ru + roff[uniq[i]], sizeof(double) * (size_t)len);
	}
	for (int k = 0; k < nnz; k++)
		s->col_off[s->row_var[k] + 1]++;
	for (int v = 0; v < n_var; v++)
		s->col_off[v + 1] += s->col_off[v];
	memcpy(pos, s->col_off, sizeof(int) * (size_t)n_var);
	for (int i = 0; i < n_uniq; i++)
		for (int k = s->row_off[i]; k < s->row_off[i + 1]; k++) {
			int at = pos[s->row_var[k]]++;

			s->col_res[at] = i;
			s->col_u[at] = s->row_u[k];
		}
	rc = 0;
out:
	free(roff);
	free(rvar);
	free(ru);
	free(pos);
	free(table);
	free(uniq);
	return rc;
}

/* Even split's T, used to normalize the coefficients to T(even) == 1. */
static void sys_normalize(struct inart_split_sys *s)
{
	double *y = calloc((size_t)s->n_res + 1, sizeof(double)), tmax = 0;

	s->scale = 1;
	if (y == NULL)
		return; /* scale 1 is still correct, only less well conditioned */
	for (int j = 0; j < s->n_jobs; j++) {
		int n = s->job_off[j + 1] - s->job_off[j];

		for (int v = s->job_off[j]; v < s->job_off[j + 1]; v++)
			for (int k = s->col_off[v]; k < s->col_off[v + 1]; k++)
				y[s->col_res[k]] += s->col_u[k] / n;
	}
	for (int r = 0; r < s->n_res; r++)
		tmax = fmax(tmax, y[r]);
	free(y);
	if (!(tmax > 0))
		return;
	s->scale = tmax;
	for (int k = 0; k < s->row_off[s->n_res]; k++) {
		s->row_u[k] /= tmax;
		s->col_u[k] /= tmax;
	}
}

/* Compile plan's routes into s; if raw_load is non-NULL, also add the loads
 * of the plan's current split to it (arcs, then nodes, in Gbit). */
int inart_split_sys_build(struct inart_split_sys *s, const struct inart_topo *t,
			  const struct inart_jobs *js, const struct inart_plan *plan,
			  double *raw_load, struct inart_err *err)
{
	int n_arcs = inart_topo_n_arcs(t), n_raw = n_arcs + t->n_nodes, rc = -ENOMEM;
	struct counter c = {0};
	struct colbuf cb = {0};
	int *col_off = NULL, *widx = NULL;

	memset(s, 0, sizeof(*s));
	if (plan->n_jobs != js->n_jobs)
		return inart_err_set(err, -EINVAL, "plan has %d jobs, the jobs set %d",
				     plan->n_jobs, js->n_jobs);
	s->n_jobs = js->n_jobs;
	s->job_off = malloc(sizeof(int) * (size_t)(js->n_jobs + 1));
	if (s->job_off == NULL)
		goto out;
	s->job_off[0] = 0;
	for (int j = 0; j < js->n_jobs; j++) {
		if (plan->jobs[j].n_ps != js->jobs[j].n_ps) {
			rc = inart_err_set(err, -EINVAL, "job %s: plan has %d PSs, the job %d",
					   js->jobs[j].id, plan->jobs[j].n_ps, js->jobs[j].n_ps);
			goto out;
		}
		s->job_off[j + 1] = s->job_off[j] + js->jobs[j].n_ps;
	}
	s->n_var = s->job_off[js->n_jobs];
	c.cnt = calloc((size_t)n_raw + 1, sizeof(int));
	c.touched = malloc(sizeof(int) * (size_t)(n_raw + 1));
	col_off = calloc((size_t)s->n_var + 1, sizeof(int));
	widx = malloc(sizeof(int) * (size_t)(t->n_nodes + 1));
	if (c.cnt == NULL || c.touched == NULL || col_off == NULL || widx == NULL)
		goto out;
	for (int v = 0; v < t->n_nodes; v++)
		widx[v] = -1;
	for (int j = 0; j < js->n_jobs; j++) {
		rc = check_flows(t, &js->jobs[j], &plan->jobs[j], widx, err);
		if (rc == 0) {
			col_off[s->job_off[j]] = cb.n;
			rc = build_job(t, &js->jobs[j], &plan->jobs[j], s->job_off[j], &c, &cb,
				       col_off, raw_load, err);
		}
		if (rc < 0)
			goto out;
	}
	rc = sys_finish(s, n_raw, col_off, &cb);
	if (rc == 0)
		sys_normalize(s);
out:
	free(c.cnt);
	free(c.touched);
	free(col_off);
	free(widx);
	free(cb.res);
	free(cb.u);
	if (rc < 0)
		inart_split_sys_free(s);
	return rc;
}
