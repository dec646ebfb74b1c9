/*
 * routes: the IPv4 /32 routes of an installation (install.h) -- at every
 * switch, one to every other node's address: along BFS shortest paths
 * (ties: adjacency order; hosts do not relay), except that the route to a
 * ring worker follows the plan's hop that ends there (its DATA) and, where
 * that leaves a switch free, the reverse of its hop that starts there (its
 * successor's ACKs).
 *
 * Invariant: every switch's route to dst either is its BFS arc or lies on a
 * ring path whose suffix reaches dst, so following the routes from any node
 * reaches dst (no loop).  Ownership: fills sw[k].routes (allocated here,
 * the caller's) and the counters of ring hops off the plan; refers to t,
 * plan and d only.
 */
#include "bridge/routes.h"

#include <errno.h>
#include <stdlib.h>

struct routes {
	const struct inart_topo *t;
	const struct inart_plan *plan;
	const struct inart_deploy *d;
	int ring; /* the plan has ring hops */
};

static int is_switch(const struct routes *b, int v)
{
	return b->t->nodes[v].kind == INART_NODE_SWITCH;
}

/* Set the routes of the switches q[1..n-2] towards dst = q[n-1] along q
 * (step +1) or towards dst = q[0] along q reversed (step -1), all or none:
 * a switch routed before by another path keeps its route, and then the
 * whole path is left out (counted off the plan by ring_off_plan). */
static void route_along(const struct routes *b, int *via, int *mark, const int *q, int n, int step)
{
	const struct inart_topo *t = b->t;
	int ok = 1;

	for (int k = 1; k + 1 < n && ok; k++) {
		int e = inart_topo_arc_between(t, q[k], q[k + step]);

		ok = e >= 0 && is_switch(b, q[k]) && (!mark[q[k]] || via[q[k]] == e);
	}
	for (int k = 1; k + 1 < n && ok; k++) {
		via[q[k]] = inart_topo_arc_between(t, q[k], q[k + step]);
		mark[q[k]] = 1;
	}
}

/* The route to dst along the plan's ring hops that end there (DATA from the
 * ring predecessor), then along the reverse of the hops that start there
 * (ACKs from the successor go back on the hop their DATA took, so they load
 * the links the evaluator charges them to): every switch of such a path
 * forwards to its next node towards dst (a path's suffix reaches dst;
 * switches off the paths keep their shortest path, which ends at dst or on
 * a path, so there is no loop).  A path that disagrees at some switch with
 * one taken before is left out whole (DATA first: ring_off_plan counts
 * both kinds).  mark: n ints of scratch. */
static void ring_routes(const struct routes *b, int *via, int *mark, int dst)
{
	for (int v = 0; v < b->t->n_nodes; v++)
		mark[v] = 0;
	for (int back = 0; back < 2; back++)
		for (int j = 0; j < b->plan->n_jobs; j++) {
			const struct inart_job_plan *jp = &b->plan->jobs[j];

			for (int i = 0; i < jp->n_ring; i++) {
				const int *q = jp->ring[i].path;
				int n = jp->ring[i].n_path;

				if (n >= 2 && q[back ? 0 : n - 1] == dst)
					route_along(b, via, mark, q, n, back ? -1 : 1);
			}
		}
}

/* Does the IPv4 route (via: each node's arc towards dst) take a packet
 * from q[0] (a host: its one link) to dst = q[n - 1] along exactly q? */
static int follows(const struct routes *b, const int *via, const int *q, int n, int step)
{
	const struct inart_topo *t = b->t;
	int k = step > 0 ? 0 : n - 1, end = step > 0 ? n - 1 : 0, v = q[k], dst = q[end];

	while (v != dst && k != end && q[k] == v) {
		int e = is_switch(b, v) ? via[v] : t->arc_out[t->out_off[v]];

		v = e < 0 ? -1 : t->arcs[e].to;
		k += step;
	}
	return v == dst && k == end && q[k] == dst;
}

/* Ring hops towards dst (DATA) and from dst (their ACKs, the hop reversed)
 * whose IPv4 route is not the plan's hop path. */
static void ring_off_plan(const struct routes *b, const int *via, int dst,
			  struct inart_routes_off *off)
{
	for (int j = 0; j < b->plan->n_jobs; j++) {
		const struct inart_job_plan *jp = &b->plan->jobs[j];

		for (int i = 0; i < jp->n_ring; i++) {
			const struct inart_ring_hop *h = &jp->ring[i];

			if (h->n_path < 2)
				continue;
			if (jp->ring[(i + 1) % jp->n_ring].path[0] == dst)
				off->hops_off += !follows(b, via, h->path, h->n_path, 1);
			if (h->path[0] == dst)
				off->acks_off += !follows(b, via, h->path, h->n_path, -1);
		}
	}
}

/* /32 routes at every switch to every other node's address, along BFS
 * shortest paths (ties: adjacency order).  Hosts do not relay. */
static int build_all(const struct routes *b, struct inart_sw_routes *sw, int n_sw,
		     struct inart_routes_off *off)
{
	const struct inart_topo *t = b->t;
	int n = t->n_nodes, rc = 0;
	int *via = malloc((size_t)n * sizeof(int)), *queue = malloc((size_t)n * sizeof(int));

	if (via == NULL || queue == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < n_sw; k++) {
		sw[k].routes = calloc((size_t)n, sizeof(struct inart_route));
		if (sw[k].routes == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (int dst = 0; dst < n; dst++) {
		int head = 0, tail = 0;

		for (int v = 0; v < n; v++)
			via[v] = -1;
		via[dst] = -2;
		queue[tail++] = dst;
		while (head < tail) {
			int u = queue[head++];

			if (u != dst && !is_switch(b, u))
				continue;
			for (int k = t->out_off[u]; k < t->out_off[u + 1]; k++) {
				int e = t->arc_out[k], v = t->arcs[e].to;

				if (via[v] != -1)
					continue;
				via[v] = e ^ 1; /* v's arc towards dst */
				queue[tail++] = v;
			}
		}
		if (b->ring)
			ring_routes(b, via, queue, dst);
		for (int k = 0; k < n_sw; k++) {
			struct inart_sw_routes *si = &sw[k];
			int s = si->node;

			if (s == dst || via[s] < 0)
				continue;
			si->routes[si->n].prefix = b->d->ip[dst];
			si->routes[si->n].len = 32;
			si->routes[si->n].port = (uint16_t)b->d->port[via[s]];
			si->n++;
		}
		if (b->ring)
			ring_off_plan(b, via, dst, off);
	}
out:
	free(via);
	free(queue);
	return rc;
}

int inart_routes_build(const struct inart_topo *t, const struct inart_plan *plan,
		       const struct inart_deploy *d, struct inart_sw_routes *sw, int n_sw,
		       struct inart_routes_off *off)
{
	struct routes r = {t, plan, d, 0};

	for (int j = 0; j < plan->n_jobs; j++)
		r.ring |= plan->jobs[j].n_ring > 0;
	off->hops_off = off->acks_off = 0;
	for (int k = 0; k < n_sw; k++)
		sw[k].n = 0;
	return build_all(&r, sw, n_sw, off);
}
