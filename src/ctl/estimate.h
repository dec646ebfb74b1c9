/*
 * estimate: every directed link's background load, estimated from the
 * switches' port counters (sans-I/O: counter samples with their timestamps
 * in, loads out).
 *
 * Which counter measures an arc u->v: when v is a switch, the bytes v
 * received on its port facing u (rx_bytes: every frame that crossed the
 * link, whoever sent it); else (v a host) the bytes switch u sent on its
 * port toward v (tx_bytes).  Port k of a switch is its k-th arc, as `inart
 * ctl install` numbers ports by default (a deployment may number them
 * otherwise: the caller passes its numbering).  The jobs' INA traffic (UDP to the INA port,
 * counted by the switch core as rx_ina_bytes / tx_ina_bytes) is subtracted:
 * background = (bytes - ina_bytes) x 8 / dt.  A measured rate is divided by
 * the rate scale (bit/s on the wire per model Gbit/s: 1e9 on a real network,
 * the emulator's rate x 1e9 on a scaled one) to give model Gbit/s.
 *
 * Smoothing: an exponentially weighted moving average over the samples,
 * est <- alpha x sample + (1 - alpha) x est (the first sample sets it), with
 * alpha = 1 - exp(-dt / tau) so the time constant tau (default 0.15 s) does
 * not depend on the polling period; at a 100 ms period alpha = 0.49 and a
 * step change is 90% in the estimate after 3.5 tau = 0.35 s (4 samples).
 * An estimate is clamped to [0, (1 - min_residual) x capacity], so the
 * planner always sees some residual capacity.
 *
 * Counters that go backwards (a switch restarted, or its counters were
 * reset) end that port's interval: the new sample becomes the baseline, the
 * estimate keeps its value, and `resets` counts it.  So does an interval
 * whose rate is above 4x the link's capacity (a counter that jumped
 * forward: e.g. a reset's base subtracted from a core that started afresh).  A switch whose last
 * sample is older than stale_s is `silent`: its arcs keep their last
 * estimate and inart_estimator_silent() names it (the controller then keeps
 * its plan).
 *
 * Ownership: the estimator refers to the topology (which must outlive it)
 * and owns its arrays.
 */
#ifndef INART_CTL_ESTIMATE_H
#define INART_CTL_ESTIMATE_H

#include <stdint.h>

#include "cp/model/graph.h"

struct inart_est_opt {
	double tau_s;	     /* smoothing time constant, default 0.15 */
	double scale_bps;    /* wire bit/s per model Gbit/s, default 1e9 */
	double min_residual; /* fraction of capacity always left, default 0.05 */
	double stale_s;	     /* a switch silent this long is stale, default 0.35 */
};

/* One port's counters (cumulative, as `stats` reports them). */
struct inart_port_sample {
	uint64_t rx_bytes, tx_bytes, rx_ina_bytes, tx_ina_bytes;
};

struct inart_estimator;

/* Defaults for every field. */
void inart_est_opt_default(struct inart_est_opt *o);

/* port: per arc leaving a switch, its port number there (a deployment's
 * numbering, install.h struct inart_deploy's port); NULL: adjacency order.
 * NULL + errno (EINVAL: a bad option, a topology not finalized, a switch
 * whose ports are not 0..degree-1 each once; ENOMEM). */
struct inart_estimator *inart_estimator_create(const struct inart_topo *t,
					       const struct inart_est_opt *o, const int *port);
void inart_estimator_destroy(struct inart_estimator *e);

/* Feed switch `node`'s counters taken at now_s (n_ports must be its degree).
 * 0; -EINVAL (not a switch, wrong port count, time not after the previous
 * sample of that switch). */
int inart_estimator_feed(struct inart_estimator *e, int node, double now_s,
			 const struct inart_port_sample *ports, int n_ports);
/* The same, with the switch's own time of the counters (clock_s, e.g. its
 * uptime when it read them) for the intervals, so that the delays of the
 * replies do not distort the rates; now_s (the caller's clock) still says
 * when the switch last answered.  A clock_s not after the previous one (the
 * switch restarted) starts a new baseline, counted as a reset. */
int inart_estimator_feed_at(struct inart_estimator *e, int node, double now_s, double clock_s,
			    const struct inart_port_sample *ports, int n_ports);

/* Estimated background per arc in model Gbit/s (n_arcs entries; an arc not
 * measured yet holds the topology's own background). */
const double *inart_estimator_bg(const struct inart_estimator *e);

/* 1 if every arc has been measured over at least one interval. */
int inart_estimator_ready(const struct inart_estimator *e);

/* The first switch (node number) with no sample within stale_s before
 * now_s, or -1.  A switch never sampled counts as silent. */
int inart_estimator_silent(const struct inart_estimator *e, double now_s);

/* Samples the estimator set aside, by cause: a switch's clock that went
 * back (it restarted), a port counter that went backwards, an interval
 * above 4x the link's capacity (a counter that jumped forward), and an
 * interval whose INA bytes exceed its total bytes (counters read at two
 * different moments: skipped, the estimate kept). */
struct inart_est_anomalies {
	uint64_t restarts, went_back, jumps, inconsistent;
};

void inart_estimator_anomalies(const struct inart_estimator *e, struct inart_est_anomalies *out);

/* Counter resets seen: restarts + went_back + jumps of the above. */
uint64_t inart_estimator_resets(const struct inart_estimator *e);

#endif
