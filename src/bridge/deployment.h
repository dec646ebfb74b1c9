/*
 * deployment: where every node of a topology is -- an IPv4 address and a MAC
 * per node, a port number (and its MAC) per arc leaving a switch -- the
 * input install turns into switch, PS and worker configurations.  Files in
 * this shape are read and written by bridge/deploy (inart_deploy_load);
 * inart_deploy_auto numbers a topology without one.
 *
 * Invariants: ip and mac have n_nodes entries (+1 spare), port and port_mac
 * n_arcs (+1 spare); port is -1 on arcs whose tail is a host.  Ownership: the
 * deployment owns its arrays; inart_deploy_destroy(NULL) is a no-op.
 */
#ifndef INART_DEPLOYMENT_H
#define INART_DEPLOYMENT_H

#include <stdint.h>

#include "cp/model/graph.h"

/* Where every node is: IPv4 and MAC per node, port number per arc. */
struct inart_deploy {
	int n_nodes, n_arcs;
	uint32_t *ip;		/* per node, host order */
	uint8_t (*mac)[6];	/* per node: hosts' interface MAC */
	int *port;		/* per arc: port number at the arc's tail if it is a
				   switch (ports numbered 0.. in adjacency order), -1 */
	uint8_t (*port_mac)[6]; /* per arc from a switch: that port's MAC */
};

/* 10.<node / 256>.<node % 256>.1 style addresses (hosts and switches),
 * locally administered MACs 02:00:<node>:<port>.  NULL + errno. */
struct inart_deploy *inart_deploy_auto(const struct inart_topo *t);
/* An empty deployment shaped after t: addresses and MACs zero, every port
 * -1.  NULL + errno. */
struct inart_deploy *inart_deploy_create(const struct inart_topo *t);
void inart_deploy_destroy(struct inart_deploy *d);

#endif
