/*
 * install: turn a planner plan into data-plane state -- table entries for
 * every switch, tree configurations for every PS, and a configuration for
 * every worker -- given a deployment (addresses, MACs and switch ports).
 * Pure computation: `inart ctl install` sends the result over control
 * sockets, the simulator applies it directly.
 *
 * Labels are allocated globally (unique in every table), one per distinct
 * (job, tree, direction, remaining path): a packet's label tells the switch
 * the rest of its path, so streams that share a hop but continue differently
 * get different labels.  UP: the label of a flow/tree path suffix at node n
 * forwards to the next hop with the label of the next suffix; at the
 * stream's aggregation switch the entry aggregates (expected bitmap = the
 * worker ranks below it; slot region from the tree budget) and sends the
 * aggregate up the tree path.  DOWN: the PS sends one RESULT copy per child
 * (reversed paths); an aggregation switch replicates to its children; the
 * copy for a worker gets the worker's IP as destination.
 * IPv4 routes: a /32 to every host and switch address along BFS shortest
 * paths, so plain traffic (ping, TCP, retransmissions with label 0) works;
 * to a ring worker along the plan's ring hop that ends there, else along
 * the reverse of its hop that starts there (the ring's ACKs).
 *
 * Requirements: hosts single-homed (switch-centric topologies: fat-tree,
 * leaf-spine); at most INART_WIRE_MAX_CONTRIB workers per job.
 * Wire ids: job = index of the job in the jobs file, tree = index of the PS
 * in the job's PS list.  Workers get one tree per PS of the job (tree id =
 * index; a PS with share 0 gets share 0 and label 0, and nothing is
 * installed for it).  Slot regions: the i-th tree (jobs, then plan order)
 * at a switch gets slots [i * slots_per_tree, (i + 1) * slots_per_tree);
 * the switch's pool is its tree budget * slots_per_tree.  Switch ports carry
 * the node's address and their peers' MACs (no learning needed), and host
 * ports the host's address (ingress filtering); every entry names the ports
 * it arrives on (in_ports: the previous hops of its paths); every worker's
 * switch gets an ingress entry (port, job, rank); every PS tree its sources
 * (the job's workers with their ranks, the switches aggregating in the tree)
 * and max_chunks for the job's gradient size (jobs file).
 * A job planned as a ring all-reduce gets no labels, slots or PS trees: its
 * workers get a ring configuration (position = the hop they start in the
 * plan, neighbours' addresses) and talk over IPv4 routes
 * (docs/dataplane.md, "Ring all-reduce").
 */
#ifndef INART_INSTALL_H
#define INART_INSTALL_H

#include "cp/model/plan.h"
#include "bridge/deployment.h"
#include "dp/ps.h"
#include "dp/ring.h"
#include "dp/switch.h"
#include "dp/worker.h"

struct inart_install_opt {
	uint16_t slots_per_tree;    /* pool region per tree, and the workers'
				       window; default 64 */
	uint16_t values_per_packet; /* default: the most that fit */
	uint64_t flush_timeout_ns;  /* default 10 ms: a backstop (switches flush a
				       slot as soon as later chunks show its missing
				       contributions lost, or a NACK asks); it must
				       exceed the skew between workers (shorter ones
				       split every chunk in two at the PS) */
	uint64_t retx_timeout_ns;   /* default 50 ms */
	int8_t scale_exp;	    /* default 16 */
	double pace_scale;	    /* default INART_INSTALL_PACE_DEFAULT: every tree
				       of every worker is paced at its plan rate
				       (share x gradient bytes / the plan's evaluated
				       communication time) x pace_scale, as frame
				       bytes per second: 1 on the modelled network,
				       the rate scale on a scaled one (emulator);
				       0: not paced (only the window limits) */
	uint16_t ring_window;	    /* a ring worker's messages in flight; default
				       (0): the larger of INART_RING_DEFAULT_WINDOW
				       and slots_per_tree.  Not slots_per_tree
				       itself: a ring holds no switch memory, and its
				       steps depend on each other, so a window that
				       a queue on a shared link covers (16 in the
				       emulator) idles the ring's links (emulator.md,
				       "Mixed plans") */
	uint64_t pace_lead_ns;	    /* default 0 (no bound): paced trees and ring
				       workers run at most this far ahead of the
				       plan's own rate (dp/pace.h), so that the
				       headroom of pace_scale cannot take one job's
				       share of a full link for another (emulator.md,
				       "Pacing against the plan's schedule") */
	double rate_scale;	    /* default 1: the network's links run at this
				       times their capacity in the topology (the
				       emulator's rate scale); the plan's own rate of
				       a flow, for pace_lead_ns, is its plan rate x
				       rate_scale */
};

/* The default pacing factor: workers send at 1.1x their plan rates.  The
 * headroom keeps a prediction slightly off from capping throughput much
 * (docs/dataplane.md, Pacing); unpaced, a window of 64 behind shaped FIFO
 * queues turned into a recovery storm (window_sim: InArt 49.6x its
 * prediction, benchmarks.md, issue 12). */
#define INART_INSTALL_PACE_DEFAULT 1.1

struct inart_sw_install {
	int node;
	struct inart_sw_cfg cfg;
	int n_labels;
	struct inart_label_entry *labels; /* pointing into exp and downs */
	uint64_t *exp;
	struct inart_label_down *downs;
	int n_routes;
	struct inart_route *routes;
	int n_ingress; /* the switch's worker ports: (port, job, rank) */
	struct inart_sw_ingress *ingress;
};

struct inart_ps_install {
	int node;
	int n_trees;
	struct inart_ps_tree_cfg *trees; /* each owns its sources */
};

struct inart_worker_install {
	int node, job;
	struct inart_worker_cfg cfg; /* a ring job's workers: no trees (n_trees 0) */
	struct inart_ring_cfg ring;  /* a job planned as a ring all-reduce (ring.size
					> 0): position, neighbours (dp/ring.h) */
};

struct inart_install {
	int n_switches;
	struct inart_sw_install *sw;
	int n_ps;
	struct inart_ps_install *ps;
	int n_workers;
	struct inart_worker_install *workers;
	/* ring jobs: no labels, slots or PS trees; their packets (UDP port
	   INART_WIRE_RING_PORT) follow the IPv4 routes, and the route to a ring
	   worker follows the plan's hop that ends there (not a shortest path:
	   the ring baseline spreads hops over k shortest paths); hops that
	   disagree with another one at some switch keep the route taken before
	   and are counted off the plan; a ring worker's ACKs to its
	   predecessor follow the predecessor's hop reversed where no DATA
	   route to that address disagrees (n_ring_acks_off_plan: hops whose
	   ACKs take another path) */
	int n_ring_hops, n_ring_hops_off_plan, n_ring_acks_off_plan;
};

void inart_install_opt_default(struct inart_install_opt *o);

/* 0 or -errno (err says why: e.g. a multi-homed host, too many workers). */
int inart_install_build(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *plan, const struct inart_deploy *d,
			const struct inart_install_opt *opt, struct inart_install **out,
			struct inart_err *err);
void inart_install_destroy(struct inart_install *in);

/* The entry of node v in an installation (each node appears at most
 * once), or NULL when the installation has none. */
const struct inart_sw_install *inart_install_sw_of(const struct inart_install *in, int v);
const struct inart_ps_install *inart_install_ps_of(const struct inart_install *in, int v);

/* The batch that puts switch install si's tables in place of a switch's
 * (replace; no deletions), pointing into si: valid while si is. */
struct inart_sw_update inart_sw_install_update(const struct inart_sw_install *si);

/* the identity of an installation (inart_install_digest) */
#include "bridge/install_id.h"

#endif
