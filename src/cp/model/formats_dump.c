/*
 * formats_dump: the writers of the JSON interchange formats (see
 * formats_dump.h, docs/formats.md; the readers are formats.c).
 *
 * Writers build the text with common/sbuf so that the layout is
 * fixed (one object per line inside arrays, 2-space indentation, keys in a
 * fixed order) and numbers print in the shortest form that reads back to the
 * same double.  Non-finite numbers are written as null.  The keys and their
 * order are the readers' (formats.c): a key written here is one they read.
 *
 * Ownership: dumped strings belong to the caller; the objects are only read.
 */
#include "cp/model/formats_dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sbuf.h"

const struct inart_route_kind inart_route_kinds[3] = {
    {"flow", "flows", {"worker", "ps", "agg"}},
    {"tree", "trees", {"switch", "ps", "parent"}},
    {"ring hop", "ring", {NULL, NULL, NULL}},
};

/* The writers' vocabulary: sb_* append pieces of JSON to an inart_sbuf
 * (common/sbuf.h), whose allocation failure latches so that each writer
 * checks once, at inart_sbuf_finish. */

static void sb_puts(struct inart_sbuf *s, const char *str)
{
	inart_sbuf_puts(s, str);
}

/* A JSON string literal. */
static void sb_str(struct inart_sbuf *s, const char *str)
{
	const unsigned char *c = (const unsigned char *)str, *start = c;

	inart_sbuf_put(s, "\"", 1);
	for (; *c; c++) {
		char esc[8];

		if (*c >= 0x20 && *c != '"' && *c != '\\')
			continue;
		inart_sbuf_put(s, (const char *)start, (size_t)(c - start));
		if (*c == '"' || *c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", *c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", *c);
		sb_puts(s, esc);
		start = c + 1;
	}
	inart_sbuf_put(s, (const char *)start, (size_t)(c - start));
	inart_sbuf_put(s, "\"", 1);
}

/* Integral values below 1e16 as integers, others in the shortest %g form
 * that reads back to the same double; null if not finite (JSON has no
 * infinities). */
static void sb_num(struct inart_sbuf *s, double v)
{
	char b[40];

	if (!isfinite(v)) {
		sb_puts(s, "null");
		return;
	}
	if (v == 0)
		v = 0; /* -0 prints as 0 */
	if (v == trunc(v) && fabs(v) < 1e16) {
		snprintf(b, sizeof(b), "%.0f", v);
	} else {
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(b, sizeof(b), "%.*g", prec, v);
			if (strtod(b, NULL) == v)
				break;
		}
	}
	sb_puts(s, b);
}

static void sb_int(struct inart_sbuf *s, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	sb_puts(s, b);
}

/* A node id by number; null for a number outside the topology. */
static void sb_node(struct inart_sbuf *s, const struct inart_topo *t, int v)
{
	if (v >= 0 && v < t->n_nodes)
		sb_str(s, t->nodes[v].id);
	else
		sb_puts(s, "null");
}

static void sb_path(struct inart_sbuf *s, const struct inart_topo *t, const int *path, int n)
{
	sb_puts(s, "[");
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(s, ", ");
		sb_node(s, t, path[i]);
	}
	sb_puts(s, "]");
}

/* Open/close an array whose elements are lines at `indent`. */
static void sb_item(struct inart_sbuf *s, int first, const char *indent)
{
	sb_puts(s, first ? "\n" : ",\n");
	sb_puts(s, indent);
}

/* The next element of a top-level array: an object opened with its "id". */
static void sb_item_id(struct inart_sbuf *s, int first, const char *id)
{
	sb_item(s, first, "    ");
	sb_puts(s, "{\"id\": ");
	sb_str(s, id);
}

static void sb_close(struct inart_sbuf *s, int empty, const char *indent)
{
	if (!empty) {
		sb_puts(s, "\n");
		sb_puts(s, indent);
	}
	sb_puts(s, "]");
}

/* A link's value per direction: `, "KEY": v` when both directions agree,
 * else the two per-direction keys ("gbps" -> "ab_gbps", "ba_gbps";
 * "background_gbps" -> "background_ab_gbps", "background_ba_gbps"). */
static void sb_dir(struct inart_sbuf *s, const char *key, double ab, double ba)
{
	size_t stem = strlen(key) - strlen("gbps");

	if (ab == ba) {
		inart_sbuf_printf(s, ", \"%s\": ", key);
		sb_num(s, ab);
		return;
	}
	inart_sbuf_printf(s, ", \"%.*sab_gbps\": ", (int)stem, key);
	sb_num(s, ab);
	inart_sbuf_printf(s, ", \"%.*sba_gbps\": ", (int)stem, key);
	sb_num(s, ba);
}

char *inart_topo_dump(const struct inart_topo *t)
{
	struct inart_sbuf s = {0};

	sb_puts(&s, "{\n  \"nodes\": [");
	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *n = &t->nodes[v];

		sb_item_id(&s, v == 0, n->id);
		sb_puts(&s, n->kind == INART_NODE_HOST ? ", \"kind\": \"host\""
						       : ", \"kind\": \"switch\"");
		if (n->ina) {
			sb_puts(&s, ", \"ina\": {\"agg_gbps\": ");
			sb_num(&s, n->agg_gbps);
			sb_puts(&s, ", \"trees\": ");
			sb_int(&s, n->trees);
			sb_puts(&s, "}");
		}
		sb_puts(&s, "}");
	}
	sb_close(&s, t->n_nodes == 0, "  ");
	sb_puts(&s, ",\n  \"links\": [");
	for (int i = 0; i < t->n_links; i++) {
		const struct inart_arc *ab = &t->arcs[2 * i], *ba = &t->arcs[2 * i + 1];

		sb_item(&s, i == 0, "    ");
		sb_puts(&s, "{\"a\": ");
		sb_node(&s, t, ab->from);
		sb_puts(&s, ", \"b\": ");
		sb_node(&s, t, ab->to);
		sb_dir(&s, "gbps", ab->gbps, ba->gbps);
		sb_dir(&s, "background_gbps", ab->bg_gbps, ba->bg_gbps);
		sb_puts(&s, "}");
	}
	sb_close(&s, t->n_links == 0, "  ");
	sb_puts(&s, "\n}\n");
	return inart_sbuf_finish(&s);
}

char *inart_jobs_dump(const struct inart_jobs *js, const struct inart_topo *t)
{
	struct inart_sbuf s = {0};

	sb_puts(&s, "{\n  \"jobs\": [");
	for (int i = 0; i < js->n_jobs; i++) {
		const struct inart_job *j = &js->jobs[i];

		sb_item_id(&s, i == 0, j->id);
		sb_puts(&s, ", \"workers\": ");
		sb_path(&s, t, j->workers, j->n_workers);
		sb_puts(&s, ", \"ps\": ");
		sb_path(&s, t, j->ps, j->n_ps);
		if (j->model != NULL && inart_model_bytes(j->model) == j->gradient_bytes) {
			sb_puts(&s, ", \"model\": ");
			sb_str(&s, j->model);
		} else {
			sb_puts(&s, ", \"gradient_bytes\": ");
			sb_num(&s, j->gradient_bytes);
		}
		sb_puts(&s, "}");
	}
	sb_close(&s, js->n_jobs == 0, "  ");
	sb_puts(&s, "\n}\n");
	return inart_sbuf_finish(&s);
}

static void sb_key_num(struct inart_sbuf *s, const char *key, double v)
{
	sb_puts(s, "  \"");
	sb_puts(s, key);
	sb_puts(s, "\": ");
	sb_num(s, v);
	sb_puts(s, ",\n");
}

/* Flow (kind 0) or tree (kind 1) i of jp: its three nodes under the keys
 * of inart_route_kinds, then its path. */
static void sb_route(struct inart_sbuf *s, const struct inart_topo *t,
		     const struct inart_job_plan *jp, int kind, int i)
{
	const struct inart_flow *f = kind ? NULL : &jp->flows[i];
	const struct inart_tree *tr = kind ? &jp->trees[i] : NULL;
	const int n[3] = {f ? f->worker : tr->sw, f ? f->ps : tr->ps, f ? f->agg : tr->parent};

	for (int k = 0; k < 3; k++) {
		sb_puts(s, k ? ", \"" : "{\"");
		sb_puts(s, inart_route_kinds[kind].keys[k]);
		sb_puts(s, "\": ");
		sb_node(s, t, n[k]);
	}
	sb_puts(s, ", \"path\": ");
	if (f)
		sb_path(s, t, f->path, f->n_path);
	else
		sb_path(s, t, tr->path, tr->n_path);
	sb_puts(s, "}");
}

/* "key": "name" or null. */
static void sb_key_name(struct inart_sbuf *s, const char *key, const char *name)
{
	sb_puts(s, "  \"");
	sb_puts(s, key);
	sb_puts(s, "\": ");
	if (name != NULL)
		sb_str(s, name);
	else
		sb_puts(s, "null");
	sb_puts(s, ",\n");
}

/* One job: id, split (every PS), flows, trees, and the ring hops of a ring
 * all-reduce job. */
static void sb_plan_job(struct inart_sbuf *s, const struct inart_topo *t,
			const struct inart_job *job, const struct inart_job_plan *jp)
{
	int n_ps = jp->n_ps < job->n_ps ? jp->n_ps : job->n_ps;

	sb_puts(s, "{\n      \"id\": ");
	sb_str(s, job->id);
	sb_puts(s, ",\n      \"split\": {");
	for (int i = 0; i < n_ps; i++) {
		if (i)
			sb_puts(s, ", ");
		sb_node(s, t, job->ps[i]);
		sb_puts(s, ": ");
		sb_num(s, jp->split[i]);
	}
	for (int kind = 0; kind < 2; kind++) {
		int n = kind ? jp->n_trees : jp->n_flows;

		sb_puts(s, kind ? ",\n      \"trees\": [" : "},\n      \"flows\": [");
		for (int i = 0; i < n; i++) {
			sb_item(s, i == 0, "        ");
			sb_route(s, t, jp, kind, i);
		}
		sb_close(s, n == 0, "      ");
	}
	if (jp->n_ring > 0) {
		sb_puts(s, ",\n      \"ring\": [");
		for (int i = 0; i < jp->n_ring; i++) {
			sb_item(s, i == 0, "        ");
			sb_puts(s, "{\"path\": ");
			sb_path(s, t, jp->ring[i].path, jp->ring[i].n_path);
			sb_puts(s, "}");
		}
		sb_close(s, 0, "      ");
	}
	sb_puts(s, "\n    }");
}

char *inart_plan_dump(const struct inart_plan *p, const struct inart_topo *t,
		      const struct inart_jobs *js)
{
	struct inart_sbuf s = {0};
	int n_jobs = p->n_jobs < js->n_jobs ? p->n_jobs : js->n_jobs;

	sb_puts(&s, "{\n  \"algorithm\": ");
	sb_str(&s, p->algorithm ? p->algorithm : "");
	sb_puts(&s, ",\n");
	sb_key_name(&s, "origin", p->origin);
	sb_key_num(&s, "comm_time_s", p->comm_time_s);
	sb_key_num(&s, "push_time_s", p->push_time_s);
	sb_key_num(&s, "pull_time_s", p->pull_time_s);
	sb_key_num(&s, "lp_bound_s", p->lp_bound_s);
	sb_key_num(&s, "best_bound_s", p->best_bound_s);
	if (!isnan(p->ring_bound_s)) { /* inart and bound plans only */
		sb_key_num(&s, "ring_bound_s", p->ring_bound_s);
		sb_key_name(&s, "ring_bound_source", inart_bound_source_name(p->ring_bound_source));
	}
	sb_key_name(&s, "bound_source", inart_bound_source_name(p->bound_source));
	sb_key_name(&s, "milp_status", inart_milp_status_name(p->milp_status));
	sb_key_num(&s, "plan_time_s", p->plan_time_s);
	sb_key_num(&s, "split_gap", p->split_gap);
	sb_puts(&s, "  \"rounding_trials\": ");
	sb_int(&s, p->rounding_trials);
	sb_puts(&s, ",\n  \"jobs\": [");
	for (int j = 0; j < n_jobs; j++) {
		sb_item(&s, j == 0, "    ");
		sb_plan_job(&s, t, &js->jobs[j], &p->jobs[j]);
	}
	sb_close(&s, n_jobs == 0, "  ");
	sb_puts(&s, "\n}\n");
	return inart_sbuf_finish(&s);
}
