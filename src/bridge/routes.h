/*
 * routes: the IPv4 /32 routes of an installation at every switch (routes.c:
 * BFS shortest paths, ring workers' addresses along their ring hops).  It
 * knows the topology, the plan and the deployment's addresses and ports;
 * install.c copies what it builds into its installation.
 */
#ifndef INART_ROUTES_H
#define INART_ROUTES_H

#include "bridge/deployment.h"
#include "cp/model/plan.h"
#include "dp/switch.h"

/* One switch's routes: node (in), then routes (out: t->n_nodes entries,
 * malloc'ed here, the caller's to free; n of them used). */
struct inart_sw_routes {
	int node;
	struct inart_route *routes;
	int n;
};

/* The ring hops whose DATA (hops_off) or ACK (acks_off) route disagrees
 * with the hop's path in the plan (install.h: n_ring_hops_off_plan). */
struct inart_routes_off {
	int hops_off, acks_off;
};

/* Fill sw[0..n_sw) and *off.  0 or -ENOMEM (then the routes already made
 * are left in sw for the caller to free). */
int inart_routes_build(const struct inart_topo *t, const struct inart_plan *plan,
		       const struct inart_deploy *d, struct inart_sw_routes *sw, int n_sw,
		       struct inart_routes_off *off);

#endif
