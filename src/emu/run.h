/*
 * run: an emulation -- the network of net.c brought up with its daemons
 * (`inart switchd` on every switch, `inart ps` on every PS host), its
 * background traffic (bg.c) and a janitor, and plans run on it: each plan
 * installed with `inart ctl install`, then N iterations of every job at
 * once from worker processes (`inart-emu-worker`, the public worker API) in
 * their namespaces, every iteration started together (a barrier through the
 * workers' standard streams), timed, checked for exactness; switch and PS
 * counters, CPU times and queueing-discipline drops around the iterations.
 * Faults (a link down for a while, a switchd killed and restarted) are
 * scheduled in seconds from the first iteration's start.
 *
 * Clean-up: every child dies with the emulator (PR_SET_PDEATHSIG); a
 * janitor process removes the namespaces and run directory if the emulator
 * ends without inart_emu_stop (a crash, SIGKILL); inart_emu_stop ends
 * everything by PID and removes the network.
 *
 * Times in a result are of the scaled instance (seconds on packets); the
 * caller converts them (scale.h).
 */
#ifndef INART_EMU_RUN_H
#define INART_EMU_RUN_H

#include <stdint.h>

#include "cp/model/evaluate.h"
#include "emu/net.h"

enum inart_emu_fault_kind { INART_EMU_FAULT_LINK = 1, INART_EMU_FAULT_KILL = 2 };

struct inart_emu_fault {
	enum inart_emu_fault_kind kind;
	int arc;	  /* LINK: an arc of the link */
	int node;	  /* KILL: a switch */
	double at_s;	  /* from the first iteration's start */
	double for_s;	  /* down for this long, then up / restarted */
	int done, undone; /* progress (set by the run) */
};

/* A change of background (issue 10): from at_s seconds after a run's first
 * iteration starts, arc carries gbps (model Gbit/s, scaled like the
 * topology's background_gbps). */
struct inart_emu_bg_change {
	int arc;
	double at_s, gbps;
};

typedef void inart_emu_progress_fn(void *ctx, const char *msg);

struct inart_emu_opt {
	const char *inart;  /* the inart program (switchd, ps, ctl) */
	const char *worker; /* the inart-emu-worker program */
	const char *topo_path, *jobs_path;
	struct inart_emu_net_opt net;
	double loss;	       /* per frame, every link direction */
	uint64_t seed;	       /* of the losses */
	int agg_limit;	       /* switchd --agg-mbps from agg_gbps (default 1) */
	int background;	       /* generate background traffic (default 1) */
	double iter_timeout_s; /* an iteration not done by then fails the run */
	struct inart_emu_fault *faults;
	int n_faults;
	const char *keep_dir; /* copy the run directory (logs, files) there at the end */
	const struct inart_emu_bg_change *bg_changes; /* the background's schedule */
	int n_bg_changes;
	int controller;	      /* run `inart controller` beside each run (docs/controller.md) */
	const char *ctl_args; /* more arguments for it, space-separated (NULL: none) */
	int detach;	      /* daemons outlive the emulator (emu up; no background) */
	const char *io;	      /* switchd --io MODE (NULL: auto, switchd's best back end) */
	const char *io_why;   /* --io auto: why the switches shape their links or not */
	const char *agg;      /* switchd --agg WHERE (NULL: auto) */
	inart_emu_progress_fn *progress;
	void *progress_ctx;
};

void inart_emu_opt_default(struct inart_emu_opt *o);

/* One plan's run. */
/* The kernel path's counters in a result (names: inart_emu_kctr_names). */
enum inart_emu_kctr {
	INART_EMU_K_SENT,      /* packets answered with frames built in the kernel */
	INART_EMU_K_ABSORBED,  /* absorbed (or duplicates): nothing sent */
	INART_EMU_K_FLUSHED,   /* aggregates the kernel's timeouts flushed */
	INART_EMU_K_KEPT,      /* clean results kept */
	INART_EMU_K_TO_SHAPER, /* its frames for shaped ports, to switchd's shaper */
	INART_EMU_K_LOST,      /* lost on a full ring (xa_rx, xa_tx) */
	INART_EMU_K_PUNTED,    /* frames handed to the user-space core (the sum of: */
	INART_EMU_K_P_FRAME,   /*  not untagged IPv4 UDP to InArt's port, */
	INART_EMU_K_P_WIRE,    /*  an INA header it does not take, */
	INART_EMU_K_P_PORT,    /*  ingress or first-hop checks, */
	INART_EMU_K_P_LABEL,   /*  label 0, TTL, unknown label, */
	INART_EMU_K_P_ENTRY,   /*  not a kernel UP entry, RETX/NACK, DOWN not kept, */
	INART_EMU_K_P_CHECK,   /*  bitmap width, bits, count) */
	INART_EMU_KCTR_N
};
extern const char *const inart_emu_kctr_names[INART_EMU_KCTR_N + 1];

struct inart_emu_result {
	int finished;	      /* every iteration done */
	int exact;	      /* every result of every worker exact */
	struct inart_err why; /* why not finished or not exact */
	int iters, n_jobs, n_arcs;
	double *iter_s;	    /* per iteration: first start to last result, all jobs */
	double *job_iter_s; /* [job * iters + k] */
	double *iter_t0_s;  /* per iteration: its start, from the run's first start */
	/* with the controller: installs it made (plan switches), the first one's
	 * time from the run's first start (-1: none), its CPU (cores) */
	int ctl_installs;
	double ctl_first_install_s, ctl_cpu;
	double wall_s; /* first start to last result of the run */
	/* per arc, bytes over the run from switch counters (background
	   excluded: a switch's tx counters do not see the background sender;
	   a host uplink with background is not counted) */
	double *arc_bytes;
	int *arc_known;	      /* 1 if a switch counts the arc */
	uint64_t *arc_qdrops; /* per arc: frames its tbf dropped (queue full) */
	void *block;	      /* the arrays above, one allocation (inart_emu_result_free) */
	/* CPU and drops over the iterations */
	double switchd_cpu_max; /* cores, the busiest switchd */
	char switchd_cpu_node[64];
	double cpu_total;	/* cores, every process of the run */
	double host_busy;	/* fraction of the machine's CPU time not idle */
	double irq_cores;	/* cores the machine spent in interrupts and softirq
				   (/proc/stat; with tick accounting also in the
				   interrupted processes' times: information only) */
	double ksoftirqd_cores; /* cores of the kernel's softirq threads: the
				   kernel's side of the links (veth, tbf, XDP
				   programs) deferred there, charged to no
				   process of the run */
	/* cpu_total by part: every switchd together, the PSs, the workers,
	   the background sender (cores) */
	double switchd_cpu_sum, ps_cpu, worker_cpu, bg_cpu;
	/* the run's CPU time per iteration over the predicted time of one
	   (inart_emu_set_prediction; 0: none given): the cores the run would
	   need to keep its predicted pace */
	double demand_cores, predicted_iter_s;
	/* frames the switches sent (every port's tx_pkts), and the run's CPU
	   time per such frame (microseconds; 0 if none): the machine's frame
	   budget is cores / us_per_frame million frames per second */
	uint64_t switch_frames;
	double us_per_frame;
	uint64_t ring_drops, sock_tx_drops, qdisc_drops, out_full, agg_dropped, lost;
	uint64_t udp_rcvbuf_errors, udp_sndbuf_errors;	 /* hosts' UDP (/proc/net/snmp) */
	uint64_t retransmitted, probes, nacks, timeouts; /* workers */
	/* switches' tree counters and PSs' counters, summed (docs/programs.md) */
	uint64_t sw_aggregated, sw_emitted, sw_partial, sw_early, sw_fallback, sw_repaired;
	uint64_t ps_absorbed, ps_nacks, ps_replaced, ps_duplicates, ps_probes;
	/* the switches' kernel aggregation programs (switchd --agg kernel; its
	   stats' xdp.agg_kernel, summed over switches, during the run): enum
	   inart_emu_kctr; kernel_switches: switches on that path */
	uint64_t kernel[INART_EMU_KCTR_N];
	int kernel_switches;
	/* frames switchd's shapers dropped (a full queue: the port's
	   shaped_drops, summed) */
	uint64_t shaped_drops;
	int cpu_bound;
	char cpu_why[256];
};

void inart_emu_result_free(struct inart_emu_result *r);

struct inart_emu;

/* Build the network, start the janitor, daemons and background traffic.
 * Refuses (before building anything) leftovers of the same prefix.  0 or
 * -errno with err; nothing is left behind on failure. */
int inart_emu_start(const struct inart_topo *t, const struct inart_jobs *js,
		    const struct inart_emu_opt *o, struct inart_emu **out, struct inart_err *err);

/* The network of a started emulation (names, deployment). */
const struct inart_emu_net *inart_emu_network(const struct inart_emu *e);

/* Install plan (its file plan_path) and run iters iterations with values[j]
 * float values per worker of job j.  0 with r filled (r->finished,
 * r->exact say how it went), or -errno for a failure of the emulator
 * itself (err). */
int inart_emu_run_plan(struct inart_emu *e, const char *plan_path, const long *values, int iters,
		       struct inart_emu_result *r, struct inart_err *err);

/* The I/O back end the switch daemons run, read back from their `info`
 * ("ring"; "ring x19, mmsg x1" when they differ; "" before they answered). */
const char *inart_emu_switch_io(const struct inart_emu *e);

/* The next runs' predicted time per iteration (seconds on packets; 0:
 * none), for the CPU-bound verdict's demand (docs/emulator.md, CPU-bound
 * runs). */
void inart_emu_set_prediction(struct inart_emu *e, double iter_s);

/* The CPU-bound verdict from r's CPU and drop figures on a machine of
 * `cores` cores: r->cpu_bound and r->cpu_why (each reason that held). */
void inart_emu_cpu_verdict(struct inart_emu_result *r, int cores);

/* The next runs with (1) or without (0) the controller (opt.controller). */
void inart_emu_set_controller(struct inart_emu *e, int on);

/* End everything (workers, daemons, background, janitor) by PID and remove
 * the network.  e may be NULL. */
void inart_emu_stop(struct inart_emu *e);

/* Leave the network and daemons running (for `emu up`, started with
 * opt.detach: the daemons do not die with the emulator): the janitor is
 * dismissed; `inart emu down --prefix P` removes them later. */
void inart_emu_detach(struct inart_emu *e);

#endif
