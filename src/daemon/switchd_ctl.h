/*
 * switchd_ctl: the control side of `inart switchd` (daemon/switchd.c is the
 * daemon: its configuration, the ports, the packet thread's loop).  The state below
 * is the daemon's, shared by its two threads; the comments on its fields say
 * which thread owns each.  The control thread reads the core only where the
 * packet thread never writes (the tables in service, which change only
 * through the control thread's own commands).
 */
#ifndef INART_DAEMON_SWITCHD_CTL_H
#define INART_DAEMON_SWITCHD_CTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "ctlproto/ctlmsg.h"
#include "dp/shaper.h"
#include "dp/shard.h"
#include "dp/switch.h"
#include "io/afpacket.h"
#include "io/port.h"
#include "ctlproto/ctlthread.h"
#include "ctlproto/txn.h"

/* output frames of the core per call */
#define OUT_MAX (INART_SW_MAX_FANOUT + 8)

struct inart_gate;
struct inart_xagg;
struct sw_workers;

struct sw_state {
	const char *name;
	int n_ports;
	struct inart_port ports[INART_SW_MAX_PORTS]; /* their afp or the set below */
	struct inart_xsk *xsk; /* --io xdp: the AF_XDP set (NULL: AF_PACKET / UDP) */
	/* bit p: plain IPv4 may leave through port p from the XDP program */
	uint64_t xdp_fwd;
	/* packet thread, xdp: what the program was last given per port */
	uint8_t xdp_mac[INART_SW_MAX_PORTS][6], xdp_peer[INART_SW_MAX_PORTS][6];
	uint8_t xdp_peer_known[INART_SW_MAX_PORTS];
	uint32_t xdp_peer_ip[INART_SW_MAX_PORTS];
	/* --agg kernel (io/xagg; NULL: the core aggregates everything): packet
	 * thread, except the counters' reads */
	struct inart_xagg *xagg;
	uint64_t xagg_tick_ns;
	int xagg_tick_warned; /* the ticks' first failure logged */
	const char *ifnames[INART_SW_MAX_PORTS];
	uint8_t macs[INART_SW_MAX_PORTS][6];
	struct inart_shards *sh;     /* in service (changed by commands only): the core,
					one shard per worker (dp/shard) */
	struct inart_ctlthread *ctl; /* the control thread */
	int cores;		     /* workers (--cores) */
	int batch;		     /* --batch: frames queued per port before a flush */
	struct sw_workers *wk;	     /* cores > 1: workers 1.. (daemon/switchd_workers) */
	/* packet thread: loss and aggregation limit (NULL: none); its label set
	 * is exchanged by cmd_swap with the tables' */
	struct inart_gate *gate;
	/* packet thread: --shape (daemon/switchd_shape; NULL: unshaped) */
	struct inart_shaper *shaper[INART_SW_MAX_PORTS];
	int n_shaped;
	/* control thread */
	struct inart_sw_cfg cfg; /* of the core in service */
	struct inart_txn txn;
	uint64_t installs;
	/* the identity of the prepared install that restarts the jobs ("reset":
	   --restart-jobs): its commit drops the aggregation state; "": none */
	char restart_id[INART_TXN_ID_LEN];
	/* --test-faults: the test_fault request is served; an armed fault makes
	 * shard fault_shard of the next table build fail with -fault_err
	 * (dp/shard's injection; the build uses it up) */
	int test_faults, fault_armed, fault_shard, fault_err;
	/* packet thread: counters at the last reset */
	uint64_t base_drops[INART_DROP_N];
	struct inart_sw_port_stats base_ports[INART_SW_MAX_PORTS];
	struct inart_afp_stats base_afp[INART_SW_MAX_PORTS];
	struct inart_sw_tree_stats *base_trees;
	int n_base_trees;
	/* the same per shard (the stats' "shards" detail; n_trees 0: none) */
	struct sw_shard_count {
		uint64_t drops[INART_DROP_N], rx_pkts, tx_pkts;
		struct inart_sw_tree_stats *trees;
		int n_trees;
	} base_shard[INART_SHARD_MAX];
	uint64_t start_ns;
	/* output frames of the core */
	struct inart_frame out[OUT_MAX];
};

/* One control request for this switch (inart_daemon_role's op; inart_daemon_serve
 * does the rest). */
int inart_switchd_op(void *ctx, struct inart_ctl_req *rq, json_t **data, struct inart_err *err);
/* inart_txn's swap and destroy for the switch's objects (ctx: the sw_state). */
void *inart_switchd_obj_swap(void *ctx, void *obj);
void inart_switchd_obj_destroy(void *ctx, void *obj);
/* Free what the counters' baselines hold (at exit). */
void inart_switchd_ctl_free(struct sw_state *s);

#endif
