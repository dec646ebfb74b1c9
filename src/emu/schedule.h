/*
 * schedule: the emulator's background schedule (issue 10), as given ->
 * per-arc rates for the background sender (pure computation, no I/O).
 *
 * An entry is either on a link direction (arc >= 0: from at_s the arc
 * carries gbps, replacing the topology's background_gbps there) or between
 * two hosts (arc < 0, src -> dst: from at_s that pair sends gbps, which
 * loads every arc of its route on top of the rest).  A pair's route is the
 * topology's shortest path in hops from src to dst through switches only
 * (breadth-first; among paths of equal length the one whose arcs come
 * first in the topology's adjacency order).  The background sender loads
 * each arc of it at its tail (a frame per arc; the switches on the way do
 * not forward them), so the links carry what the pair would.
 *
 * Resolution: for every arc that an entry touches and every time an entry
 * touching it changes, one change with the arc's rate from then on:
 *   (the newest link entry on the arc by then, else background_gbps)
 *   + the sum over pairs routed over the arc of each pair's newest rate
 *     by then (0 before its first entry);
 * entries of the same place and time: the last given wins.  Every rate must
 * stay below the arc's capacity.
 */
#ifndef INART_EMU_SCHEDULE_H
#define INART_EMU_SCHEDULE_H

#include "common/err.h"
#include "cp/model/graph.h"
#include "emu/run.h"

struct inart_emu_bg_entry {
	int arc;      /* >= 0: a link direction; < 0: the pair src -> dst */
	int src, dst; /* hosts (pairs only) */
	double at_s, gbps;
};

/* The route of src -> dst (node numbers): its arcs into arcs[] (room for
 * max).  The number of arcs; -ENOENT (no path through switches), -EINVAL
 * (src == dst, a bad node), -ENOSPC (longer than max). */
int inart_emu_schedule_route(const struct inart_topo *t, int src, int dst, int *arcs, int max);

/* Resolve n entries into at most max changes (sorted by arc, then time).
 * The number of changes; -EINVAL (err: entry i has no route, a rate
 * reaches an arc's capacity at some time, a bad entry), -ENOSPC (more than
 * max changes), -ENOMEM. */
int inart_emu_schedule_resolve(const struct inart_topo *t, const struct inart_emu_bg_entry *in,
			       int n, struct inart_emu_bg_change *out, int max,
			       struct inart_err *err);

#endif
