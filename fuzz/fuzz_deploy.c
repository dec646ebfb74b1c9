/*
 * fuzz_deploy: libFuzzer target for the deployment file reader (bridge/deploy):
 * node addresses, MACs, switch ports, control sockets and the "dataplane"
 * settings, against the fixed small topology of fuzz_common.h.  An accepted
 * file must dump and parse again to the same dump; the data-plane reader
 * must accept or refuse with a message, and what it accepts must be in
 * range.  The one-node reader (a daemon's --deployment check) likewise for
 * every node of the topology, and it accepts every node of a file the full
 * reader accepts, with the same address.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "bridge/deploy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct inart_topo *t;
	struct inart_err err = {{0}};
	struct inart_install_opt o;
	struct inart_deploy *d, *d2;
	char **ctl = NULL, **ctl2 = NULL, *s1, *s2;
	static struct inart_deploy_node nd[64];

	if (t == NULL &&
	    (t = inart_topo_parse(fuzz_topo_text, strlen(fuzz_topo_text), "topo", NULL)) == NULL)
		abort();
	inart_install_opt_default(&o);
	if (inart_deploy_dataplane_parse((const char *)data, size, "in", &o, &err) == 0) {
		if (o.slots_per_tree < 1 || o.retx_timeout_ns == 0 || o.flush_timeout_ns == 0)
			abort();
	} else if (err.msg[0] == '\0') {
		abort();
	}
	for (int v = 0; v < t->n_nodes; v++) {
		err.msg[0] = '\0';
		if (inart_deploy_node_parse((const char *)data, size, "in", t->nodes[v].id, &nd[v],
					    &err) < 0) {
			if (err.msg[0] == '\0')
				abort();
			nd[v].n_ports = -1; /* refused */
		} else if (nd[v].n_ports < 0 || nd[v].n_ports > INART_DEPLOY_MAX_PORTS ||
			   strlen(nd[v].ctl) >= sizeof(nd[v].ctl)) {
			abort();
		}
	}
	d = inart_deploy_parse((const char *)data, size, "in", t, &ctl, &err);
	for (int v = 0; d != NULL && v < t->n_nodes; v++)
		if (nd[v].n_ports < 0 || nd[v].ip != d->ip[v])
			abort();
	if (d == NULL) {
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	s1 = inart_deploy_dump(d, t, ctl, NULL, NULL);
	if (s1 == NULL)
		abort();
	d2 = inart_deploy_parse(s1, strlen(s1), "dump", t, &ctl2, &err);
	if (d2 == NULL)
		abort();
	s2 = inart_deploy_dump(d2, t, ctl2, NULL, NULL);
	if (s2 == NULL || strcmp(s1, s2) != 0)
		abort();
	free(s1);
	free(s2);
	inart_deploy_ctl_free(ctl, t->n_nodes);
	inart_deploy_ctl_free(ctl2, t->n_nodes);
	inart_deploy_destroy(d);
	inart_deploy_destroy(d2);
	return 0;
}
