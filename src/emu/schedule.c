/*
 * schedule: background entries (links and host pairs) -> per-arc changes
 * (schedule.h).  Routes by breadth-first search over switches; the
 * resolution walks, per arc, the times at which an entry touching it
 * changes.
 */
#include "emu/schedule.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int inart_emu_schedule_route(const struct inart_topo *t, int src, int dst, int *arcs, int max)
{
	int n = t->n_nodes, *via = NULL, *queue = NULL, head = 0, tail = 0, len = 0, rc;

	if (src < 0 || dst < 0 || src >= n || dst >= n || src == dst || !t->finalized)
		return -EINVAL;
	via = malloc(sizeof(int) * (size_t)n); /* the arc that reached a node, -1 */
	queue = malloc(sizeof(int) * (size_t)n);
	if (via == NULL || queue == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int v = 0; v < n; v++)
		via[v] = -1;
	queue[tail++] = src;
	while (head < tail && via[dst] < 0) {
		int u = queue[head++];

		if (u != src && t->nodes[u].kind != INART_NODE_SWITCH)
			continue; /* hosts do not forward */
		for (int k = t->out_off[u]; k < t->out_off[u + 1]; k++) {
			int a = t->arc_out[k], v = t->arcs[a].to;

			if (v != src && via[v] < 0) {
				via[v] = a;
				queue[tail++] = v;
			}
		}
	}
	if (via[dst] < 0) {
		rc = -ENOENT;
		goto out;
	}
	for (int v = dst; v != src; v = t->arcs[via[v]].from)
		len++;
	if (len > max) {
		rc = -ENOSPC;
		goto out;
	}
	rc = len;
	for (int v = dst; v != src; v = t->arcs[via[v]].from)
		arcs[--len] = via[v];
out:
	free(via);
	free(queue);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Does entry i load arc a (route[i] its arcs, n_route[i] of them)? */
static int touches(const struct inart_emu_bg_entry *e, int *const *route, const int *n_route, int i,
		   int a)
{
	if (e[i].arc >= 0)
		return e[i].arc == a;
	for (int k = 0; k < n_route[i]; k++)
		if (route[i][k] == a)
			return 1;
	return 0;
}

static int same_pair(const struct inart_emu_bg_entry *x, const struct inart_emu_bg_entry *y)
{
	return x->arc < 0 && y->arc < 0 && x->src == y->src && x->dst == y->dst;
}

/* Arc a's rate at time at: the newest link entry on it by then (else its
 * background) + every pair routed over it at its newest rate by then (the
 * last given wins a tie). */
static double rate_at(const struct inart_topo *t, const struct inart_emu_bg_entry *e, int n,
		      int *const *route, const int *n_route, int a, double at)
{
	double link = t->arcs[a].bg_gbps, link_at = -1, pairs = 0;

	for (int i = 0; i < n; i++) {
		int first = 1;
		double g = 0, g_at = -1;

		if (!touches(e, route, n_route, i, a))
			continue;
		if (e[i].arc >= 0) {
			if (e[i].at_s <= at && e[i].at_s >= link_at) {
				link_at = e[i].at_s;
				link = e[i].gbps;
			}
			continue;
		}
		for (int k = 0; k < i && first; k++)
			first = !same_pair(&e[k], &e[i]);
		if (!first)
			continue; /* the pair's first entry sums it */
		for (int k = i; k < n; k++)
			if (same_pair(&e[k], &e[i]) && e[k].at_s <= at && e[k].at_s >= g_at) {
				g_at = e[k].at_s;
				g = e[k].gbps;
			}
		pairs += g;
	}
	return link + pairs;
}

int inart_emu_schedule_resolve(const struct inart_topo *t, const struct inart_emu_bg_entry *in,
			       int n, struct inart_emu_bg_change *out, int max,
			       struct inart_err *err)
{
	int **route = calloc((size_t)n + 1, sizeof(int *)),
	    *n_route = calloc((size_t)n + 1, sizeof(int));
	double *times = calloc((size_t)n + 1, sizeof(double));
	int n_out = 0, rc = 0;

	if (route == NULL || n_route == NULL || times == NULL) {
		rc = inart_err_set(err, -ENOMEM, "background schedule: out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (!(in[i].at_s >= 0) || !(in[i].gbps >= 0) || in[i].arc >= inart_topo_n_arcs(t)) {
			rc = inart_err_set(err, -EINVAL,
					   "background entry %d: bad time, rate or link", i + 1);
			goto out;
		}
		if (in[i].arc >= 0)
			continue;
		route[i] = malloc(sizeof(int) * (size_t)(t->n_nodes + 1));
		if (route[i] == NULL) {
			rc = inart_err_set(err, -ENOMEM, "background schedule: out of memory");
			goto out;
		}
		n_route[i] =
		    inart_emu_schedule_route(t, in[i].src, in[i].dst, route[i], t->n_nodes);
		if (n_route[i] < 0) {
			rc = inart_err_set(
			    err, -EINVAL, "background entry %d: no route from '%s' to '%s'", i + 1,
			    in[i].src >= 0 && in[i].src < t->n_nodes ? t->nodes[in[i].src].id : "?",
			    in[i].dst >= 0 && in[i].dst < t->n_nodes ? t->nodes[in[i].dst].id
								     : "?");
			n_route[i] = 0;
			goto out;
		}
	}
	for (int a = 0; a < inart_topo_n_arcs(t); a++) {
		int nt = 0;

		for (int i = 0; i < n; i++)
			if (touches(in, route, n_route, i, a))
				times[nt++] = in[i].at_s;
		qsort(times, (size_t)nt, sizeof(double), cmp_double);
		for (int k = 0; k < nt; k++) {
			double g;

			if (k > 0 && times[k] == times[k - 1])
				continue;
			g = rate_at(t, in, n, route, n_route, a, times[k]);
			if (g >= t->arcs[a].gbps) {
				rc = inart_err_set(
				    err, -EINVAL,
				    "background on %s->%s from %g s: %g Gbit/s is not "
				    "below the link's %g",
				    t->nodes[t->arcs[a].from].id, t->nodes[t->arcs[a].to].id,
				    times[k], g, t->arcs[a].gbps);
				goto out;
			}
			if (n_out == max) {
				rc = inart_err_set(
				    err, -ENOSPC, "background schedule: more than %d changes", max);
				goto out;
			}
			out[n_out++] =
			    (struct inart_emu_bg_change){.arc = a, .at_s = times[k], .gbps = g};
		}
	}
	rc = n_out;
out:
	for (int i = 0; route != NULL && i < n; i++)
		free(route[i]);
	free(route);
	free(n_route);
	free(times);
	return rc;
}
