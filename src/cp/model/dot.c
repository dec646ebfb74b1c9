/*
 * dot: a Graphviz drawing of a topology and, optionally, a plan (see dot.h).
 *
 * Hosts are boxes, switches ellipses (INA-capable ones filled).  Links are
 * drawn once each, the upper node first (levels are hop distances from the
 * nearest host) so that `dot` puts hosts at the bottom.  With an evaluation,
 * a link's colour (green -> red) and pen width show its utilization: the
 * larger of its two directions' (push + pull) / residual, relative to the
 * most loaded arc.  With a plan, every (job, PS) gets a colour and its
 * aggregation tree is drawn on top as directed edges: tree paths (switch to
 * parent) solid and labelled "job/PS", flow paths that end at an INA switch
 * dashed; these edges do not constrain the layout.  PSs with a non-zero share
 * get a double border and INA switches in use show their trees/budget.
 * Output is pure string building; nothing is printed.
 */
#include "common/sbuf.h"
#include "cp/model/dot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A quoted DOT string: backslash and double quote escaped. */
static void sb_quoted(struct inart_sbuf *b, const char *s)
{
	inart_sbuf_printf(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			inart_sbuf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			inart_sbuf_printf(b, "\\n");
		else
			inart_sbuf_printf(b, "%c", *s);
	}
	inart_sbuf_printf(b, "\"");
}

static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};
#define N_PALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

/* Hop distance of every node from the nearest host (multi-source BFS);
 * unreachable nodes get 0. */
static int *node_levels(const struct inart_topo *t)
{
	int *lvl = malloc(sizeof(int) * (size_t)(t->n_nodes + 1));
	int *queue = malloc(sizeof(int) * (size_t)(t->n_nodes + 1));
	int head = 0, tail = 0;

	if (lvl == NULL || queue == NULL) {
		free(lvl);
		free(queue);
		return NULL;
	}
	for (int v = 0; v < t->n_nodes; v++) {
		lvl[v] = -1;
		if (t->nodes[v].kind == INART_NODE_HOST) {
			lvl[v] = 0;
			queue[tail++] = v;
		}
	}
	while (head < tail) {
		int u = queue[head++];

		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int w = t->arcs[t->arc_out[i]].to;

			if (lvl[w] < 0) {
				lvl[w] = lvl[u] + 1;
				queue[tail++] = w;
			}
		}
	}
	for (int v = 0; v < t->n_nodes; v++)
		if (lvl[v] < 0)
			lvl[v] = 0;
	free(queue);
	return lvl;
}

static double arc_util(const struct inart_topo *t, const struct inart_eval *ev, int e)
{
	double load = ev->arc_push_gbit[e] + ev->arc_pull_gbit[e];
	double res = inart_arc_residual(&t->arcs[e]);

	if (load <= 0)
		return 0;
	return res > 0 ? load / res : INFINITY;
}

static void render_nodes(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_plan *plan, const struct inart_eval *ev,
			 struct inart_sbuf *b)
{
	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *nd = &t->nodes[v];
		int ps_jobs = 0;

		inart_sbuf_printf(b, "  ");
		sb_quoted(b, nd->id);
		inart_sbuf_printf(b, " [");
		if (nd->kind == INART_NODE_HOST)
			inart_sbuf_printf(b, "shape=box");
		else if (nd->ina)
			inart_sbuf_printf(b, "shape=ellipse, style=filled, fillcolor=\"#c6dbef\"");
		else
			inart_sbuf_printf(b, "shape=ellipse");
		/* Label: id, trees in use, PS shares. */
		inart_sbuf_printf(b, ", label=\"");
		for (const char *s = nd->id; *s; s++)
			inart_sbuf_printf(b, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
		if (ev && nd->ina && ev->node_trees[v] > 0)
			inart_sbuf_printf(b, "\\n%d/%d trees", ev->node_trees[v], nd->trees);
		if (plan && js) {
			for (int j = 0; j < js->n_jobs && j < plan->n_jobs; j++) {
				const struct inart_job *job = &js->jobs[j];
				int i = inart_job_ps_index(job, v);

				if (i < 0 || i >= plan->jobs[j].n_ps || plan->jobs[j].split[i] <= 0)
					continue;
				if (ps_jobs++ < 3) {
					inart_sbuf_printf(b, "\\nPS ");
					for (const char *s = job->id; *s; s++)
						inart_sbuf_printf(
						    b, (*s == '"' || *s == '\\') ? "\\%c" : "%c",
						    *s);
					inart_sbuf_printf(b, " %.0f%%",
							  plan->jobs[j].split[i] * 100.0);
				}
			}
		}
		inart_sbuf_printf(b, "\"");
		if (ps_jobs)
			inart_sbuf_printf(b, ", peripheries=2");
		inart_sbuf_printf(b, "];\n");
	}
}

static void render_links(const struct inart_topo *t, const struct inart_eval *ev, const int *lvl,
			 struct inart_sbuf *b)
{
	double max_util = 0;

	if (ev) {
		for (int e = 0; e < inart_topo_n_arcs(t); e++) {
			double u = arc_util(t, ev, e);

			if (isfinite(u) && u > max_util)
				max_util = u;
		}
	}
	for (int l = 0; l < t->n_links; l++) {
		const struct inart_arc *a = &t->arcs[2 * l];
		int top = a->from, bot = a->to;
		char tip[512];

		if (lvl[bot] > lvl[top]) {
			top = a->to;
			bot = a->from;
		}
		inart_sbuf_printf(b, "  ");
		sb_quoted(b, t->nodes[top].id);
		inart_sbuf_printf(b, " -- ");
		sb_quoted(b, t->nodes[bot].id);
		if (ev) {
			double u = fmax(arc_util(t, ev, 2 * l), arc_util(t, ev, 2 * l + 1));
			double rel = max_util > 0 ? fmin(u / max_util, 1.0) : 0;

			if (u <= 0) {
				inart_sbuf_printf(b, " [color=\"#cccccc\", penwidth=1");
			} else {
				/* hue 0.33 (green) for idle .. 0 (red) for the bottleneck */
				inart_sbuf_printf(b, " [color=\"%.3f 0.9 0.85\", penwidth=%.2f",
						  0.33 * (1.0 - rel), 1.0 + 4.0 * rel);
				if (rel >= 0.5)
					inart_sbuf_printf(b, ", label=\"%.0f%%\"", rel * 100.0);
			}
			snprintf(tip, sizeof(tip), "%s -- %s: %.4g Gbit/s residual, %.0f%% of max",
				 t->nodes[top].id, t->nodes[bot].id, inart_arc_residual(a),
				 rel * 100.0);
		} else {
			snprintf(tip, sizeof(tip), "%s -- %s: %.4g Gbit/s", t->nodes[top].id,
				 t->nodes[bot].id, a->gbps);
			inart_sbuf_printf(b, " [");
		}
		inart_sbuf_printf(b, "%stooltip=", ev ? ", " : "");
		sb_quoted(b, tip);
		inart_sbuf_printf(b, "];\n");
	}
}

/* Draw one path as overlay edges (deduplicated per (job, PS) by stamp). */
static void render_path(const struct inart_topo *t, const int *path, int n_path, const char *color,
			int solid, const char *label, int *stamp, int mark, struct inart_sbuf *b)
{
	for (int k = 0; k + 1 < n_path; k++) {
		int u = path[k], w = path[k + 1], e;

		if (u < 0 || u >= t->n_nodes || w < 0 || w >= t->n_nodes)
			return;
		e = inart_topo_arc_between(t, u, w);
		if (e >= 0) {
			if (stamp[e] == mark && !(label && k == 0))
				continue;
			stamp[e] = mark;
		}
		inart_sbuf_printf(b, "  ");
		sb_quoted(b, t->nodes[u].id);
		inart_sbuf_printf(b, " -- ");
		sb_quoted(b, t->nodes[w].id);
		inart_sbuf_printf(
		    b, " [dir=forward, constraint=false, color=\"%s\", penwidth=%s, style=%s",
		    color, solid ? "2.5" : "1.5", solid ? "solid" : "dashed");
		if (label && k == 0) {
			inart_sbuf_printf(b, ", label=");
			sb_quoted(b, label);
			inart_sbuf_printf(b, ", fontcolor=\"%s\"", color);
		}
		inart_sbuf_printf(b, "];\n");
	}
}

static int render_trees(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *plan, struct inart_sbuf *b)
{
	int n_arcs = inart_topo_n_arcs(t), pair = 0;
	int *stamp = calloc((size_t)(n_arcs > 0 ? n_arcs : 1), sizeof(int));

	if (stamp == NULL)
		return -ENOMEM;
	for (int j = 0; j < plan->n_jobs && j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];
		const struct inart_job_plan *jp = &plan->jobs[j];

		for (int i = 0; i < job->n_ps; i++) {
			int ps = job->ps[i], n_trees = 0;
			const char *color;
			char label[256];

			for (int k = 0; k < jp->n_trees; k++)
				n_trees += jp->trees[k].ps == ps;
			if (n_trees == 0)
				continue;
			color = palette[pair % N_PALETTE];
			pair++;
			snprintf(label, sizeof(label), "%s/%s", job->id, t->nodes[ps].id);
			inart_sbuf_printf(b, "  /* aggregation tree of job %s, PS %s */\n", job->id,
					  t->nodes[ps].id);
			for (int k = 0; k < jp->n_trees; k++) {
				const struct inart_tree *tr = &jp->trees[k];

				if (tr->ps == ps)
					render_path(t, tr->path, tr->n_path, color, 1, label, stamp,
						    pair, b);
			}
			for (int k = 0; k < jp->n_flows; k++) {
				const struct inart_flow *f = &jp->flows[k];

				if (f->ps == ps && f->agg != ps)
					render_path(t, f->path, f->n_path, color, 0, NULL, stamp,
						    pair, b);
			}
		}
	}
	free(stamp);
	return 0;
}

char *inart_dot_render(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_plan *plan, const struct inart_eval *ev)
{
	struct inart_sbuf b = {0};
	int *lvl = node_levels(t);

	if (lvl == NULL)
		goto fail;
	inart_sbuf_printf(&b, "graph inart {\n");
	inart_sbuf_printf(&b, "  graph [fontname=\"Helvetica\", outputorder=edgesfirst");
	if (plan && plan->algorithm && plan->algorithm[0]) {
		inart_sbuf_printf(&b, ", labelloc=t, label=");
		if (ev) {
			char title[256];

			snprintf(title, sizeof(title), "%s: comm %.4g ms (push %.4g, pull %.4g)",
				 plan->algorithm, ev->comm_time_s * 1e3, ev->push_time_s * 1e3,
				 ev->pull_time_s * 1e3);
			sb_quoted(&b, title);
		} else {
			sb_quoted(&b, plan->algorithm);
		}
	}
	inart_sbuf_printf(&b, "];\n");
	inart_sbuf_printf(&b, "  node [fontname=\"Helvetica\", fontsize=10];\n");
	inart_sbuf_printf(&b, "  edge [fontname=\"Helvetica\", fontsize=9];\n");
	render_nodes(t, js, plan, ev, &b);
	render_links(t, ev, lvl, &b);
	if (plan && js && render_trees(t, js, plan, &b) < 0)
		goto fail;
	inart_sbuf_printf(&b, "}\n");
	free(lvl);
	if (b.failed)
		goto fail;
	return b.s;
fail:
	free(lvl);
	free(b.s);
	errno = ENOMEM;
	return NULL;
}
