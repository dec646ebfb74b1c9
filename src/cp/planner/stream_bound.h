/*
 * stream_bound: the unsplittable-stream lower bound of a (job, PS) pair
 * (docs/formulation.md, section 10, "Stream bounds").
 *
 * In the evaluator's model (docs/evaluator.md) every flow and every tree of
 * pair (j, p) is one stream of v = a[j,p] G_j along one path: it pushes v on
 * every arc of its path and pulls v on the reverse arc.  So when a[j,p] > 0
 * each worker w of j (w != p) reaches p along a walk w -> ... -> p (its flow,
 * then the trees above its aggregation point) every arc e of which carries at
 * least v in its direction and v in the reverse one, and a plan's time is at
 * least  v / min(res(e), res(e ^ 1))  on each of them.  With
 *
 *   width(j, p) = min over workers w of j, w != p, of the widest path from w
 *                 to p, an arc's width being min(res(e), res(e ^ 1)) minus
 *                 the fixed load `extra` the caller puts on it (ring jobs)
 *                 divided by the time T in question (see below),
 *
 * every plan in which the pair carries share a satisfies T >= a G_j /
 * width(j, p): a row of the JOINT LP (route_lp.c) that the LP's fractional
 * routes (a stream spread over several paths) do not otherwise see, and
 * with sum_p a[j,p] = 1,  T >= G_j / sum_p width(j, p)  for every job routed
 * through PSs.  Paths may transit any node (hosts too): a relaxation, valid
 * for every route the candidates hold.
 *
 * With fixed loads (the ring jobs of a ring-mix subset) an arc is usable by a
 * stream of size v within time T only if extra(e) + v <= T res(e) in both
 * directions, so the smallest T at which every PS job can place its whole
 * gradient on streams within T is a lower bound (inart_stream_bound with
 * extra; found by bisection, each step a widest-path search per PS).
 *
 * Ownership: pure functions; the caller owns every array.
 */
#ifndef INART_STREAM_BOUND_H
#define INART_STREAM_BOUND_H

#include "cp/model/graph.h"
#include "cp/model/jobs.h"

/* Per (job, PS) pair, in job order then PS order (the order of a plan's
 * splits), its width in Gbit/s: +inf when every worker of the job is the PS
 * host (or job_on[j] is 0; job_on NULL: every job), 0 when some worker
 * cannot reach it.  0 or -ENOMEM. */
int inart_stream_widths(const struct inart_topo *t, const struct inart_jobs *js, const char *job_on,
			double *width);

/* The bound (seconds) over plans whose jobs with job_on[j] (NULL: all) go
 * through PSs while the arcs carry the fixed loads extra (Gbit per arc,
 * push + pull; NULL: none) as well: the largest of the fixed loads' own time
 * max_e extra(e) / res(e) and the smallest T at which every such job fits
 * its gradient on streams (above; by bisection to relative precision 1e-6,
 * the lower end returned).  +inf when some job cannot reach any PS; 0 or
 * -ENOMEM (a negative value). */
double inart_stream_bound(const struct inart_topo *t, const struct inart_jobs *js,
			  const char *job_on, const double *extra);

#endif
