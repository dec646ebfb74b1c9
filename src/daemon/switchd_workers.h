/*
 * switchd_workers: `inart switchd --cores N` -- N pinned worker threads,
 * worker k running shard k of the core (dp/shard) over sockets of its own,
 * one per port.  Worker 0 is the daemon's packet thread (daemon/switchd's
 * loop, on the sockets it opened); workers 1..N-1 are threads of this
 * module.
 *
 * Steering: on each interface the N sockets (worker 0's first, then worker
 * 1's, ...) form one AF_PACKET fanout group whose classic BPF program
 * (io/fanout) computes dp/shard's steering, so worker k receives exactly
 * the frames of shard k: every contribution, result and NACK of one
 * aggregator slot, and sends what its shard emits on its own sockets.
 * Nothing on the packet path is shared: no lock, one relaxed load per
 * round (the park flag).
 *
 * Control: a command of the control thread (a table swap, counters, a new
 * core) runs in worker 0 while workers 1.. are parked at a batch boundary
 * (inart_switchd_workers_ctl), so a swap flips every shard at once and
 * counters are read whole.  Each worker flushes its own shard's partial
 * aggregates on its own deadlines.
 *
 * Limits: not on udp; no aggregation-rate limit (--agg-mbps: one token
 * bucket); inart_switchd_cfg_check says so.  Seeded loss (--rx-loss,
 * --tx-loss) works: each worker has a gate of its own (loss only) with a
 * seed of its own (--loss-seed + k * a constant), so no frame's fate takes
 * a lock; the gate counters are summed when read.
 *
 * Ownership: the workers' sockets, threads and buffers are this module's
 * (s->wk); the shards are the daemon's (s->sh).
 */
#ifndef INART_DAEMON_SWITCHD_WORKERS_H
#define INART_DAEMON_SWITCHD_WORKERS_H

#include "common/err.h"
#include "daemon/switchd_ctl.h"
#include "dp/gate.h"
#include "io/afpacket.h"

/* With s->cores > 1: open workers 1..'s sockets on every port (options afo),
 * put every port's sockets in a fanout group steered by shard.  Runs
 * before the daemon gives up its privileges.  0 (nothing to do with one
 * core) or -errno with err. */
int inart_switchd_workers_open(struct sw_state *s, const struct inart_afp_opt *afo,
			       struct inart_err *err);

/* Start workers 1.. (pinned to the 2nd, 3rd, ... CPU the process may use)
 * and pin the calling thread (worker 0) to the first.  0 or -errno. */
int inart_switchd_workers_start(struct sw_state *s, struct inart_err *err);

/* With several cores and a gate (loss only, gc as the daemon's): a gate for
 * each of workers 1.., seeded from gc->seed and k.  0 or -errno with err. */
int inart_switchd_workers_gates(struct sw_state *s, const struct inart_gate_cfg *gc,
				struct inart_err *err);

/* The gate counters of all workers, summed (all zero without a gate). */
void inart_switchd_gate_stats(struct sw_state *s, struct inart_gate_stats *st);

/* Run the control thread's pending command with the other workers parked. */
void inart_switchd_workers_ctl(struct sw_state *s);

/* Socket counters of port i over all workers (the stats' sock_* fields). */
void inart_switchd_port_stats(struct sw_state *s, int i, struct inart_afp_stats *st);

/* Stop and join the workers, close their sockets; NULL s->wk: nothing. */
void inart_switchd_workers_close(struct sw_state *s);

#endif
