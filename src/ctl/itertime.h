/*
 * itertime: each job's measured iteration time, from the steps its PSs
 * report (sans-I/O: a job's newest step with the time it was seen in, the
 * seconds per iteration out).
 *
 * A PS's `stats` reply names, per tree, the newest step (iteration) the
 * tree accepted; a job's step is the largest over its trees and PSs (the
 * caller takes it).  Every time a job's step advances, (time, step) is
 * remembered (the last HIST advances).  The iteration time is
 *   (t_new - t_old) / (step_new - step_old)
 * between the newest advance and the oldest one at most window_s older
 * (at least the one before the newest), so it is an average over up to
 * window_s of iterations, its error about a polling period over that
 * span.  An iteration still running longer than that average counts: the
 * time is at least t_seen - t_new, t_seen the last time the step was known
 * (a stalled job shows its stall).  A step that is not known (a PS that
 * did not answer) is no news, neither an advance nor a stall: counting it
 * as a stall made a job of 10 ms iterations read as 0.35-0.73 s on a busy
 * machine whenever a PS request timed out.  A step that goes backwards (a
 * job or PS restarted) forgets the job's advances and counts a reset.
 * Unknown (NaN) until two advances were seen.
 *
 * Ownership: the tracker owns its arrays.
 */
#ifndef INART_CTL_ITERTIME_H
#define INART_CTL_ITERTIME_H

#include <stdint.h>

struct inart_itertime;

/* n_jobs jobs, averaged over window_s (> 0).  NULL + errno (EINVAL, ENOMEM). */
struct inart_itertime *inart_itertime_create(int n_jobs, double window_s);
void inart_itertime_destroy(struct inart_itertime *it);

/* Job j's step seen at now_s (step < 0: unknown, ignored).  0; -EINVAL (bad
 * job, time going backwards for that job). */
int inart_itertime_feed(struct inart_itertime *it, int j, double now_s, int64_t step);

/* Job j's seconds per iteration as last seen, NaN when unknown. */
double inart_itertime_get(const struct inart_itertime *it, int j);

/* Steps that went backwards so far. */
uint64_t inart_itertime_resets(const struct inart_itertime *it);

#endif
