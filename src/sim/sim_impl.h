/*
 * sim_impl: the simulator's state, shared by its two halves (not a public
 * interface): sim.c is the fabric (frames on links, events, the cores'
 * wake-ups and faults, the run), sim_cores.c puts an installation's cores
 * on its nodes (switch, PS and worker cores; their tables swapped in
 * service).  See sim.c for the invariants and ownership.
 */
#ifndef INART_SIM_IMPL_H
#define INART_SIM_IMPL_H

#include "common/err.h"
#include "common/rng.h"
#include "sim/sim.h"
#include "sim/sim_evq.h"

#define SW_MAX_OUT 128
#define PS_MAX_OUT (INART_PS_MAX_CHILDREN + 1)

struct pkt;

struct link {
	double gbps;
	uint64_t busy_until; /* ps: end of the last frame's serialization */
	uint64_t *ring;	     /* end times of frames not fully serialized, FIFO */
	int ring_head, ring_n, ring_cap;
	int limit; /* queue limit (frames), 0: none */
	double loss, dup, reorder;
	struct inart_rng rng;
	struct inart_sim_link_stats st;
};

struct node {
	int is_sw;
	/* switch */
	struct inart_shards *sw; /* the switch core, in o.switch_shards shards */
	int n_ports;
	int *port_arc;
	uint64_t down_until;  /* ps: frames received before this are dropped */
	uint64_t stall_until; /* ps: frames and timers wait until then (a starved CPU) */
	uint64_t fail_drops;
	/* host */
	int arc; /* the host's link out, -1 */
	uint8_t next_mac[6];
	struct inart_ps *ps;
	int n_workers, *workers; /* indices into sim->workers */
	struct inart_sim_host_stats st;
	/* both */
	uint64_t wake; /* ps of the pending wake-up, NONE */
};

struct wrk {
	int node;
	uint32_t job;
	struct inart_worker *w;
	struct inart_ring *r; /* a ring job's worker (then w is NULL) */
	int active;	      /* began and not yet done */
	uint64_t done;	      /* ps: when its last all-reduce ended */
};

struct inart_sim {
	const struct inart_topo *t;
	const struct inart_deploy *d;
	struct inart_sim_opt o;
	uint64_t now; /* ps */
	struct inart_sim_evq q;
	struct link *links;
	struct node *nodes;
	int n_workers;
	struct wrk *workers;
	int remaining;
	int stale;	    /* workers whose all-reduce got a step notice */
	uint64_t last_done; /* ps */
	struct pkt *free_pkts;
	inart_sim_tap_fn tap;
	void *tap_ctx;
	uint64_t events;
	/* scratch for the cores' output */
	struct inart_frame fout[SW_MAX_OUT];
	struct inart_dgram dout[PS_MAX_OUT];
	uint8_t *fbuf, *dbuf;
	/* scheduled table changes (inart_sim_tables_at) that failed, the last reason */
	int tables_failed;
	struct inart_err tables_err;
};

/* ---- sim_cores.c, used by sim.c ---- */

/* Put in's tables in service on the cores as they are (inart_sim_tables_at).
 * 0 or -errno with err. */
int inart_sim_put_tables(struct inart_sim *s, const struct inart_install *in,
			 struct inart_err *err);
/* Destroy every core (switch, PS, worker) and the nodes' worker lists. */
void inart_sim_drop_cores(struct inart_sim *s);

#endif
