/*
 * xagg: the kernel aggregation path of `inart switchd --io xdp --agg
 * kernel` (issue 25): loads bpf/xdp_agg.bpf.c's CPUMAP program
 * (xdp_agg_cpu) into the CPUMAP of the AF_XDP back end's program
 * (io/xsk: xdp_switch steers InArt frames there by (job, tree, slot), one
 * CPU per shard) and keeps its state in step with the user-space core:
 *
 *   sync     after an install or rollback (packet thread, right after the
 *            swap): the maps from the core's tables (io/xdp_agg_maps), then
 *            xa_cfg.gen + 1: each CPU frees its orphaned slots and forgets
 *            rank progress before it touches its state again;
 *   lose     lose_state: xa_cfg.lose_gen + 1 (every slot freed);
 *   drain    the frames the program handed to user space: xa_rx (frames for
 *            the core: everything it does not aggregate) and xa_tx (frames
 *            after a packet's first, and every frame it builds for a port
 *            of opt.shaped, to be sent as they are: through the shaper);
 *   tick     the flush timeouts: for each CPU a live-frame BPF_PROG_TEST_RUN
 *            of xdp_agg_kick, whose frames the CPUMAP hands to xdp_agg_cpu on
 *            that CPU, which runs xdp_agg_tick's body there (so the state of a
 *            CPU is only ever touched on that CPU, in the CPUMAP's thread);
 *   counters the program's (per reason punts), per port, per tree.
 *
 * Threads: the packet thread, except the counters (any thread: map reads)
 * and the ticker's thread (the ticks: its own scratch buffers).
 * Without libbpf at build time inart_xagg_open fails with EOPNOTSUPP.
 */
#ifndef INART_IO_XAGG_H
#define INART_IO_XAGG_H

#include <stdint.h>

#include "common/err.h"
#include "dp/switch.h"

struct inart_xagg;

struct inart_xagg_opt {
	int n_ports;
	const uint32_t *ifindex; /* port p's interface */
	int cpumap_fd;		 /* io/xsk's agg_cpus (inart_xsk_agg_map_fd) */
	int prog_array_fd;	 /* io/xsk's agg_prog (inart_xsk_agg_prog_fd) */
	uint32_t slots;		 /* the kernel's pool per CPU (entries beyond: the core's) */
	uint64_t shaped;	 /* bit p: switchd shapes port p (--shape); the frames
				    the kernel builds for it are not sent there but
				    queued on xa_tx, for the drain's fn (up 0) */
};

/* Load the program, put it in the CPUMAP for every CPU the calling thread
 * may run on (its affinity: `taskset` of switchd chooses the aggregation
 * CPUs as it chooses the packet thread's; every online CPU by default), and
 * its receiving-CPU variant (xdp_agg_dev) in the program array.  NULL +
 * errno with err saying why (EOPNOTSUPP: not built; the verifier's or the
 * kernel's refusal). */
struct inart_xagg *inart_xagg_open(const struct inart_xagg_opt *o, struct inart_err *err);
void inart_xagg_close(struct inart_xagg *x);
/* CPUs xdp_switch steers InArt frames over (inart_xsk_agg_steer). */
int inart_xagg_n_cpus(const struct inart_xagg *x);
/* Their numbers: cpus[0..n) (at most max), n returned. */
int inart_xagg_cpus(const struct inart_xagg *x, int *cpus, int max);
/* 1 if the tables of the last sync gave the program an entry (else nothing
 * needs steering: every InArt frame is the core's). */
int inart_xagg_any(const struct inart_xagg *x);

/* The maps from cfg and sw's tables, then the new generation.  0 or -errno
 * (err). */
int inart_xagg_sync(struct inart_xagg *x, const struct inart_sw_cfg *cfg,
		    const struct inart_switch *sw, struct inart_err *err);
/* lose_state: every CPU's pool freed (by that CPU, when it next runs);
 * returns the busy slots the CPUs freed since the last call (the previous
 * request's, by the time they ran: each CPU counts its own). */
int inart_xagg_lose(struct inart_xagg *x);
/* A new core in service (an install with a configuration): every CPU's
 * slots (busy and kept) freed and progress forgotten, as the core's are
 * new; the same generation as lose_state.  0 or -errno. */
int inart_xagg_reset(struct inart_xagg *x);

/* Port p's peer MAC (learned by the core) into the program's port map.
 * 0 or -errno. */
int inart_xagg_peer(struct inart_xagg *x, int p, const uint8_t mac[6]);
/* A descriptor readable when frames wait (poll). */
int inart_xagg_fd(const struct inart_xagg *x);
/* up 1: a frame for the core received on port; 0: a frame to send on port. */
typedef void (*inart_xagg_frame_fn)(void *ctx, int up, uint32_t port, const uint8_t *data,
				    uint32_t len);
/* Every frame waiting, to fn.  The number, or -errno. */
int inart_xagg_drain(struct inart_xagg *x, inart_xagg_frame_fn fn, void *ctx);
/* Flush what expired on every CPU (inart_switch_tick): per CPU one tick
 * frame, or twice as many as the previous call's if each of those flushed a
 * slot (at most 64).  The frames the previous call's flushed, or -errno.
 * Not while the ticker runs. */
int inart_xagg_tick(struct inart_xagg *x);
/* The ticker: a thread of x's that runs inart_xagg_tick every period_ns (a
 * live-frame BPF_PROG_TEST_RUN took 50 ms on average here, up to 300: in
 * the packet thread it held every punted frame and result behind it);
 * inart_xagg_close stops it.  _period changes the period (any thread).
 * 0 or -errno. */
int inart_xagg_ticker_start(struct inart_xagg *x, uint64_t period_ns);
void inart_xagg_ticker_period(struct inart_xagg *x, uint64_t period_ns);
/* The ticker's failed ticks since open (any thread), and the last one's
 * errno in *last_errno (0 if none; NULL: not wanted).  A tick the kernel
 * refuses (EPERM: a BPF_PROG_TEST_RUN after the privilege drop where
 * kernel.unprivileged_bpf_disabled forbids it) means the kernel's flush
 * timeouts do not run: docs/threat-model.md. */
uint64_t inart_xagg_tick_errors(const struct inart_xagg *x, int *last_errno);

/* The program's counters summed over CPUs, since open: c[INART_XA_CTR_N]
 * (io/xdp_agg.h); ports: p[INART_XA_N_PCTRS] (4 per port: rx, rx bytes, tx,
 * tx bytes).  0 or -errno. */
int inart_xagg_counters(const struct inart_xagg *x, uint64_t *c, uint64_t *p);
/* Add the kernel's counters of each tree of t[0..n) (by job and tree) to it;
 * dup (may be NULL) += their duplicates. */
void inart_xagg_add_trees(const struct inart_xagg *x, struct inart_sw_tree_stats *t, int n,
			  uint64_t *dup);

/* ---- --agg-mbps on the kernel path (h25g; docs/dataplane.md "The
 * aggregation-rate limit on the kernel path") ----
 * The program charges dp/gate's token bucket (xa_gate, in the kernel: the
 * switch's one bucket, under a bpf_spin_lock) and hands a frame that must
 * wait to user space with the time the C gate would grant it; x keeps those
 * in a FIFO (filled by inart_xagg_drain) and _release sends each back at its
 * time (one BPF_PROG_TEST_RUN a frame, to the CPU that held it), where it is
 * aggregated without a charge.  Packet thread. */
struct inart_gate_stats;
/* The limit: bytes_per_s > 0, burst bytes (0: 16 full frames), cap frames
 * waiting at most (0: 1024; at most INART_XA_GATE_RING).  0 or -errno. */
int inart_xagg_gate_open(struct inart_xagg *x, double bytes_per_s, double burst, int cap);
/* Send back the held frames whose time is <= now_ns.  The number, or
 * -errno (the frame is lost, counted). */
int inart_xagg_gate_release(struct inart_xagg *x, uint64_t now_ns);
/* The oldest held frame's time; UINT64_MAX if none. */
uint64_t inart_xagg_gate_deadline(const struct inart_xagg *x);
/* Add the kernel gate's counters to st (agg_frames, _bytes, _held,
 * _dropped: held frames lost on the way count as dropped). */
void inart_xagg_gate_add_stats(const struct inart_xagg *x, struct inart_gate_stats *st);

#endif
