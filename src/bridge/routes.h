/*
 * routes: the IPv4 /32 routes install gives every switch (routes.c: BFS
 * shortest paths, ring workers' addresses along their ring hops).
 */
#ifndef INART_ROUTES_H
#define INART_ROUTES_H

#include "bridge/install.h"

/* Fill in->sw[k].routes (in->n_switches, in->sw[k].node and in->n_ring_hops
 * set) and the ring counters.  0 or -ENOMEM. */
int inart_routes_build(const struct inart_topo *t, const struct inart_plan *plan,
		       const struct inart_deploy *d, struct inart_install *in);

#endif
