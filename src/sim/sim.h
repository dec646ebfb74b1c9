/*
 * sim: the simulated fabric, a deterministic discrete-event packet-level
 * simulator.  Switches are inart_switch cores exchanging Ethernet frames;
 * hosts run a tiny host stack around the PS and worker cores (UDP/IPv4 over
 * Ethernet built with inart_pkt_build_udp; MACs come from the deployment,
 * so no ARP).  Every cable is two directed links, each with a rate
 * (serialization delay), a propagation delay, a drop-tail queue at switch
 * ports (hosts never drop their own frames: sockets block instead; an
 * optional send-buffer limit makes workers wait for room), and
 * seeded per-link loss, duplication and reordering (a reordered frame gets
 * an extra random delay).  Time is kept in picoseconds so serialization is
 * exact; the cores see nanoseconds.  Nothing is read from a clock and no
 * socket is used: a run is a pure function of the inputs and the seed.
 *
 * Events (binary heap, ties broken by insertion order): frame deliveries,
 * the cores' deadlines (inart_switch_next_deadline / inart_worker_next_
 * deadline) and scheduled switch failures.  Switches and hosts process a
 * frame in zero time; a frame is store-and-forward (delivered when its last
 * bit arrives).
 *
 * Link timing: a frame of L bytes sent on a link at time t starts when the
 * link is free (s = max(t, busy)), occupies it for (L + overhead) * 8 / rate
 * and arrives prop_ns after its last bit (+ the reorder delay, if drawn).
 * A switch port's queue holds at most queue_pkts frames not yet fully
 * serialized; one more is dropped (tail drop).  Loss is drawn after
 * serialization (the frame used the link), duplication makes a second copy
 * arrive at the same time.
 *
 * Ownership: the simulator refers to (does not copy) the topology and
 * deployment, which must outlive it; it owns its cores, packets and queues.
 */
#ifndef INART_SIM_H
#define INART_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "cp/model/graph.h"
#include "bridge/install.h"
#include "dp/ps.h"
#include "dp/shard.h"
#include "dp/switch.h"
#include "dp/worker.h"

struct inart_sim_opt {
	double gbps_scale;	   /* link rate = topology capacity * this; default 1 */
	double gbps;		   /* > 0: every link at this rate instead */
	uint64_t prop_ns;	   /* propagation delay per link; default 1000 */
	int queue_pkts;		   /* switch port queue limit (frames); default 1024 */
	int host_queue_pkts;	   /* host send buffer (frames handed to the link, not yet
				      serialized); workers are polled only while there is
				      room; 0 (default): unlimited */
	int overhead_bytes;	   /* per frame on the wire (preamble, FCS, gap); default 24 */
	double loss, dup, reorder; /* probabilities per frame per link; default 0 */
	uint64_t reorder_ns; /* a reordered frame is delayed by (0, reorder_ns]; default 10 us */
	uint64_t seed;	     /* default 1 */
	int switch_shards;   /* each switch's core in this many shards (dp/shard),
				every frame to the shard steering picks; 0 or 1
				(default): one core */
};

void inart_sim_opt_default(struct inart_sim_opt *o);

/* Per directed link (arc). */
struct inart_sim_link_stats {
	uint64_t tx_pkts, tx_bytes; /* frames that went onto the wire */
	uint64_t queue_drops;	    /* tail drops at the sender */
	uint64_t lost, duplicated, reordered;
	uint64_t delivered;   /* frames (copies included) handed to the receiver */
	uint64_t busy_ps;     /* time spent serializing */
	uint64_t wait_ps;     /* queueing: frames' waits for the link, summed */
	uint64_t wait_max_ps; /* the longest wait of a frame */
};

struct inart_sim_host_stats {
	uint64_t rx, tx;
	uint64_t dropped; /* not for this host, not parseable, or no core for it */
};

struct inart_sim_result {
	int done;	   /* 1 when every worker finished */
	uint64_t start_ns; /* simulated time at the start */
	uint64_t end_ns;   /* last worker done (or where the run stopped) */
	double time_s;	   /* (end - start) in seconds */
	uint64_t events;   /* events processed */
	int stale;	   /* workers whose all-reduce ended with a step notice */
};

struct inart_sim;

/* NULL + errno (EINVAL: a host with more than one link, a node without an
 * address).  o may be NULL (defaults). */
struct inart_sim *inart_sim_create(const struct inart_topo *t, const struct inart_deploy *d,
				   const struct inart_sim_opt *o);
void inart_sim_destroy(struct inart_sim *s);

/* Create the switch, PS and worker cores of an installation and apply its
 * tables (replacing any previous installation).  0 or -errno, err says
 * which entry or core was refused. */
int inart_sim_install(struct inart_sim *s, const struct inart_install *in, struct inart_err *err);

/* Override the fault model of one directed link (arc). */
void inart_sim_arc_faults(struct inart_sim *s, int arc, double loss, double dup, double reorder);

/* At absolute simulated time at_ns, switch node `node` loses its
 * aggregation state (inart_switch_lose_state) and drops every frame it
 * receives during down_ns (a restart).  0 or -EINVAL (not a switch). */
int inart_sim_fail_switch(struct inart_sim *s, int node, uint64_t at_ns, uint64_t down_ns);

/* At absolute simulated time at_ns, node `node` loses its state (a switch
 * its aggregation state, a PS host its chunk state: inart_ps_lose_state, as
 * a restarted PS reinstalled with the same trees) and drops every frame it
 * receives during down_ns.  0 or -EINVAL. */
int inart_sim_fail_node(struct inart_sim *s, int node, uint64_t at_ns, uint64_t down_ns);

/* At absolute simulated time at_ns, put in's tables in service on the
 * cores as they are: every switch's tables replaced (the aggregation state
 * of labels that stay goes on), every PS's trees replaced (the chunk state
 * of trees that stay goes on; a PS in does not list loses its trees);
 * workers unchanged.  An epoch switch (epoch.h) installs the union of two
 * epochs this way, then the new epoch alone.  in is the caller's and must
 * live until then.  0 or -ENOMEM. */
int inart_sim_tables_at(struct inart_sim *s, const struct inart_install *in, uint64_t at_ns);
/* Scheduled table changes that failed so far (err: the last reason). */
int inart_sim_tables_failed(const struct inart_sim *s, struct inart_err *err);

/* Between all-reduces: every worker core replaced by one with in's
 * configuration (same workers, same nodes, in the same order).  0 or -errno
 * with err. */
int inart_sim_set_workers(struct inart_sim *s, const struct inart_install *in,
			  struct inart_err *err);
/* At absolute simulated time at_ns, node `node` (host or switch) stalls for
 * dur_ns: the frames it receives and its timers wait until the stall ends
 * and are then handled in order, nothing is lost (a process starved of
 * CPU).  0 or -EINVAL/-ENOMEM. */
int inart_sim_stall_node(struct inart_sim *s, int node, uint64_t at_ns, uint64_t dur_ns);

/* One all-reduce: worker number k of the installation (in->workers[k])
 * reduces bufs[k][0..n).  Runs until every worker is done (or got a step
 * notice: inart_worker_stale), the event queue runs dry, or limit_ns of
 * simulated time passed.  Returns 0 if all are done, -ESTALE if every
 * worker finished but some with a step notice (res->stale of them),
 * -ETIMEDOUT otherwise (res filled either way), -EINVAL/-EBUSY when a worker
 * refused to begin. */
int inart_sim_allreduce(struct inart_sim *s, const float *const *bufs, size_t n, uint32_t iter,
			uint64_t limit_ns, struct inart_sim_result *res);

/* The same, worker k reducing each[k] values (jobs of different sizes;
 * each == NULL: n for every worker). */
int inart_sim_allreduce_each(struct inart_sim *s, const float *const *bufs, size_t n,
			     const size_t *each, uint32_t iter, uint64_t limit_ns,
			     struct inart_sim_result *res);

/* Worker k's result (n floats): 0 or -EAGAIN. */
int inart_sim_result(const struct inart_sim *s, int k, float *out, size_t n);

/* Current simulated time (ns). */
uint64_t inart_sim_now(const struct inart_sim *s);

/* Process events up to absolute time until_ns (inclusive); returns events
 * processed. */
uint64_t inart_sim_run(struct inart_sim *s, uint64_t until_ns);

/* Put a raw frame on the link `arc` now, as if its tail sent it (tests and
 * benchmarks).  0, or -ENOBUFS if the queue dropped it. */
int inart_sim_inject(struct inart_sim *s, int arc, const uint8_t *frame, size_t len);

/* Called for every frame delivered at the head of an arc (after loss),
 * before the receiver processes it; at_ps is the arrival time. */
typedef void (*inart_sim_tap_fn)(void *ctx, int arc, uint64_t at_ps, const uint8_t *frame,
				 size_t len);
void inart_sim_set_tap(struct inart_sim *s, inart_sim_tap_fn fn, void *ctx);

/* Counters and cores (NULL when absent). */
void inart_sim_link_stats(const struct inart_sim *s, int arc, struct inart_sim_link_stats *st);
void inart_sim_host_stats(const struct inart_sim *s, int node, struct inart_sim_host_stats *st);
const struct inart_switch *inart_sim_switch(const struct inart_sim *s, int node);
/* The same as a set of shards (opt switch_shards): counters summed with
 * inart_shards_stats.  NULL when node has no switch core. */
const struct inart_shards *inart_sim_switch_shards(const struct inart_sim *s, int node);
const struct inart_ps *inart_sim_ps(const struct inart_sim *s, int node);
const struct inart_worker *inart_sim_worker(const struct inart_sim *s, int k);
/* Simulated time (ns) at which worker k's last all-reduce ended (0: never). */
uint64_t inart_sim_worker_done_ns(const struct inart_sim *s, int k);

#endif
