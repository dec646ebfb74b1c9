/*
 * run_impl: the state of an emulation shared by run.c (daemons, workers,
 * plans, faults), emulation.c (the network and its daemons) and measure.c
 * (what a run measures); not a public interface (run.h is).  The calls go
 * one way: run.c -> measure.c -> emulation.c, run.c -> emulation.c
 * (scripts/check_cycles.py).
 */
#ifndef INART_EMU_RUN_IMPL_H
#define INART_EMU_RUN_IMPL_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "common/err.h"
#include "emu/run.h"

#define GO_AHEAD_NS 30000000ull /* "go K" goes this long before the start */

struct inart_emu {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	struct inart_emu_opt o;
	struct inart_emu_net *net;
	pid_t janitor;
	int janitor_fd;
	pid_t *pid; /* per node: its daemon (switchd or ps), 0 if none */
	unsigned char *is_ps;
	pid_t bg_pid;
	int bg_fd; /* read end of the background report */
	struct inart_emu_bg_flow *flows;
	int n_flows;
	char (*ctl)[128];	 /* per node: control socket path */
	char jobs_run[128];	 /* the jobs file of the current run (sizes as run) */
	int runs;		 /* plans run so far (names the controller's logs) */
	char io[128];		 /* the switches' I/O back ends (inart_emu_switch_io) */
	double predicted_iter_s; /* the next run's prediction (inart_emu_set_prediction) */
};

struct worker {
	pid_t pid;
	int in, out, job, rank;
	char buf[1024];
	size_t len;
	int ready, done, checked, failed; /* last iteration of each, -1 none */
	uint64_t t0, t1;
	int wrong;
	uint64_t stats[5];
	char err[256];
};

/* What a run measures from its start (counters at the first iteration,
 * CPU times at its start and end) and its workers. */
struct run_meas {
	int64_t *cpu0, *cpu1, all0, all1, ksi0;
	int64_t bg0, bg1, wk0, wk1; /* the background sender's and the workers' CPU */
	int64_t it0, iter_cpu;	    /* the run's CPU at an iteration's go; summed over
				       iterations (go to the last check) */
	uint64_t *qd0, ur0, us0, busy0, tot0, irq0, q0;
	uint64_t run_t0, run_t1;	    /* first iteration's start, last result */
	uint64_t k0[INART_EMU_KCTR_N], sd0; /* kernel counters, shaper drops */
};

/* ---- emulation.c (calls neither of the others) ---- */

/* A progress line through the options' callback (none: nothing). */
void inart_emu_progress(const struct inart_emu *e, const char *fmt, ...) INART_PRINTF(2, 3);

/* A request to a daemon's control socket: its parsed answer (new
 * reference) if it said ok, else NULL. */
json_t *inart_emu_ctl_req(const char *path, const char *body, struct inart_err *err);

/* A log file of the run directory opened for appending (-1 if none). */
int inart_emu_log_fd(const struct inart_emu *e, const char *name);
/* Start node v's daemon (switchd or ps; detach: outlives the emulator). */
pid_t inart_emu_start_daemon(struct inart_emu *e, int v, int detach, struct inart_err *err);
/* Wait until the daemons of the n nodes `want` answer on their sockets. */
int inart_emu_wait_daemons(struct inart_emu *e, const int *want, int n, struct inart_err *err);

/* ---- measure.c (calls emulation.c) ---- */

/* Before a run: wait until the previous run's packets left the network. */
void inart_emu_wait_quiet(struct inart_emu *e);
/* Counters and CPU times before the first iteration. */
void inart_emu_meas_start(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m);
/* An iteration's go (end 0) or its last check (end 1): the run's CPU time
 * inside iterations, for the verdict's demand (between iterations the
 * workers fill their buffers; that work does not compete with the
 * packets). */
void inart_emu_meas_iter(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m,
			 int end);
/* After the iterations: wall time, CPU use, drops and the CPU-bound verdict. */
void inart_emu_meas_end(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m,
			struct inart_emu_result *r);

#endif
