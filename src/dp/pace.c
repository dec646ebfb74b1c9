/*
 * pace: the plan's schedule of a paced stream (see pace.h).
 */
#include "pace.h"

void inart_pace_sched(uint64_t *sched_at, uint64_t *pace_at, double plan_Bps, uint64_t lead_ns,
		      size_t bytes, uint64_t now)
{
	if (lead_ns == 0 || !(plan_Bps > 0))
		return;
	if (*sched_at == 0)
		*sched_at = now ? now : 1;
	*sched_at += (uint64_t)((double)bytes * 1e9 / plan_Bps);
	if (*pace_at + lead_ns < *sched_at)
		*pace_at = *sched_at - lead_ns;
}
