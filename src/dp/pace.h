/*
 * pace: the plan's schedule of a paced stream, sans I/O.  A worker's tree
 * (worker.c) or a ring worker (ring.c) is paced at pace_Bps, a headroom
 * (e.g. 1.05x) above the rate of its flow in the plan, so that a late
 * packet does not leave a bottleneck link idle for good.  On a link the
 * plan fills with several jobs' streams, though, a stream whose tree is not
 * held back elsewhere then takes the headroom from one whose tree is (a
 * FIFO queue shares by arrivals): on the `scarce` scenario the job whose
 * tree crosses other full links finished 8% late while the other finished
 * 6% early (issue 12, docs/emulator.md).  The schedule bounds that: the
 * stream's new data may run at most lead_ns ahead of the plan's own rate
 * (plan_Bps) since its first packet, so over an all-reduce it takes its
 * planned share and the headroom only fills a queue of about lead_ns; a
 * stream behind the schedule catches up at pace_Bps.
 *
 * Invariant: *sched_at = origin + (frame bytes charged so far) / plan_Bps,
 * the origin the time of the first charge (0: nothing charged yet).
 *
 * Ownership: plain values owned by the caller; no allocation.
 */
#ifndef INART_PACE_H
#define INART_PACE_H

#include <stddef.h>
#include <stdint.h>

/* The paced rate itself: a frame whose time at the paced rate is frame_ns
 * went out at now, so the next may go frame_ns after *pace_at; a stream
 * idle for longer than credit_ns (its burst) restarts credit_ns back, so a
 * sender woken late catches up by that much and no more. */
void inart_pace_charge(uint64_t *pace_at, uint64_t frame_ns, uint64_t credit_ns, uint64_t now);

/* A frame of `bytes` went out at now: charge it to the schedule *sched_at
 * at plan_Bps (the first charge starts it at now).  No-op when plan_Bps is
 * not positive. */
void inart_pace_sched_charge(uint64_t *sched_at, double plan_Bps, size_t bytes, uint64_t now);

/* The earliest time the next frame may go to stay at most lead_ns ahead
 * of the schedule; 0 (no bound) when lead_ns is 0 or nothing was charged. */
uint64_t inart_pace_sched_gate(uint64_t sched_at, uint64_t lead_ns);

#endif
