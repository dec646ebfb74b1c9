/*
 * pace: the plan's schedule of a paced stream (see pace.h).
 */
#include "dp/pace.h"

void inart_pace_charge(uint64_t *pace_at, uint64_t frame_ns, uint64_t credit_ns, uint64_t now)
{
	if (*pace_at + credit_ns < now)
		*pace_at = now - credit_ns;
	*pace_at += frame_ns;
}

void inart_pace_sched_charge(uint64_t *sched_at, double plan_Bps, size_t bytes, uint64_t now)
{
	if (!(plan_Bps > 0))
		return;
	if (*sched_at == 0)
		*sched_at = now ? now : 1;
	*sched_at += (uint64_t)((double)bytes * 1e9 / plan_Bps);
}

uint64_t inart_pace_sched_gate(uint64_t sched_at, uint64_t lead_ns)
{
	if (lead_ns == 0 || sched_at <= lead_ns)
		return 0;
	return sched_at - lead_ns;
}
