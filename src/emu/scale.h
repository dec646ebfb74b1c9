/*
 * scale: how a modelled instance becomes one this machine can emulate, and
 * what the model predicts for it.  Pure computation.
 *
 *   rate scale r   every capacity, background load and aggregation
 *                  throughput is multiplied by r (Gbit/s -> emulated bit/s);
 *   size scale z   every job's gradient is multiplied by z, rounded to whole
 *                  float values per worker (values[j] >= 1);
 *   header factor  the model counts gradient bytes; the shaped links carry
 *                  Ethernet frames: a full INA packet of job j carries
 *                  4 * max_values(bw) value bytes in a frame of
 *                  14 + 28 + 32 + 8 bw + 4 * max_values(bw) bytes
 *                  (bw = ceil(workers / 64): 1514 / 1432 = 1.0573 for up to
 *                  64 workers).  The prediction on packets is the evaluator's
 *                  time for the scaled instance times the largest factor of
 *                  the jobs (docs/emulator.md).
 *
 * The evaluator's time is linear in volumes and inverse in capacities, so
 * the scaled prediction is exact for the scaled instance (the jobs with
 * their rounded sizes), and a measured time converts back to the modelled
 * instance by predicted_unscaled / predicted_scaled.
 *
 * Machine limits (inart_emu_check): every switch is a switchd process and
 * every host a PS or worker process; beyond about 40 namespaces and 64
 * switch ports per core, their scheduling instead of the shaped links sets
 * the times; and a link shaped below 1 Mbit/s is refused (tbf at such rates
 * holds a 1514-byte frame for more than 12 ms, so every chunk becomes a
 * stop-and-wait round and the packet granularity, not the rate, sets times).
 */
#ifndef INART_EMU_SCALE_H
#define INART_EMU_SCALE_H

#include "cp/model/evaluate.h"
#include "cp/model/jobs.h"

struct inart_emu_limits {
	int cores;
	int max_nodes; /* namespaces */
	int max_ports; /* switch ports in all */
	double min_mbps;
};

/* Limits of a machine with `cores` cores (40 nodes and 64 ports per core,
 * 1 Mbit/s). */
void inart_emu_limits_default(struct inart_emu_limits *l, int cores);

/* Refuse what cannot be emulated faithfully here: a link below
 * min_mbps once scaled (-EINVAL), a topology beyond the limits (-E2BIG).
 * The message names the link or gives the limit and why. */
int inart_emu_check(const struct inart_topo *t, double rate_scale, const struct inart_emu_limits *l,
		    struct inart_err *err);

/* Wire bytes per gradient byte (see above), the largest over the jobs. */
double inart_emu_header_factor(const struct inart_jobs *js);

/* Values per worker of each job for size scale z (>= 1 each). */
void inart_emu_values(const struct inart_jobs *js, double z, long *values);

/* A copy of js whose gradients are 4 * values[j] bytes.  NULL + errno. */
struct inart_jobs *inart_emu_scaled_jobs(const struct inart_jobs *js, const long *values);

/* Size scale for which a plan predicted to take pred_unscaled_s seconds
 * (unscaled) takes target_s on packets at rate scale r with factor f. */
double inart_emu_size_scale(double pred_unscaled_s, double target_s, double r, double f);

#endif
