/*
 * deployment: the in-memory deployment of a topology (deployment.h): empty
 * or numbered automatically.  Ownership: the caller owns what create and
 * auto return.
 */
#include "bridge/deployment.h"

#include <errno.h>
#include <stdlib.h>

#include "common/err.h"
#include "common/slab.h"

/* The deployment and its arrays in one block (common/slab.h): per node
 * (n_nodes + 1 entries each) ip, mac; per arc (n_arcs + 1) port, port_mac. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_deploy *d = obj;

	d->ip = inart_slab_take(s, (size_t)d->n_nodes + 1, sizeof(*d->ip));
	d->mac = inart_slab_take(s, (size_t)d->n_nodes + 1, sizeof(*d->mac));
	d->port = inart_slab_take(s, (size_t)d->n_arcs + 1, sizeof(*d->port));
	d->port_mac = inart_slab_take(s, (size_t)d->n_arcs + 1, sizeof(*d->port_mac));
}

struct inart_deploy *inart_deploy_create(const struct inart_topo *t)
{
	struct inart_deploy proto = {.n_nodes = t->n_nodes, .n_arcs = inart_topo_n_arcs(t)}, *d;

	d = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (d == NULL)
		return NULL;
	for (int e = 0; e < d->n_arcs; e++)
		d->port[e] = -1;
	return d;
}

struct inart_deploy *inart_deploy_auto(const struct inart_topo *t)
{
	struct inart_deploy *d;
	int n = t->n_nodes;

	if (n > 65536)
		return inart_null_errno(E2BIG);
	d = inart_deploy_create(t);
	if (d == NULL)
		return NULL;
	for (int v = 0; v < n; v++) {
		d->ip[v] =
		    (10u << 24) | ((uint32_t)(v / 256) << 16) | ((uint32_t)(v % 256) << 8) | 1u;
		d->mac[v][0] = 0x02;
		d->mac[v][2] = (uint8_t)(v >> 8);
		d->mac[v][3] = (uint8_t)v;
		for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
			int e = t->arc_out[k], p = k - t->out_off[v];

			if (t->nodes[v].kind != INART_NODE_SWITCH)
				continue;
			d->port[e] = p;
			d->port_mac[e][0] = 0x02;
			d->port_mac[e][2] = (uint8_t)(v >> 8);
			d->port_mac[e][3] = (uint8_t)v;
			d->port_mac[e][4] = (uint8_t)(p >> 8);
			d->port_mac[e][5] = (uint8_t)p;
		}
	}
	return d;
}

void inart_deploy_destroy(struct inart_deploy *d)
{
	free(d); /* its arrays with it (lay_out) */
}
