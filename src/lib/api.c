/*
 * api: glue for the public API (include/inart/inart.h) that no internal
 * module defines.  The rest of the public surface is implemented where it
 * lives: loading in load.c, dumping in formats_dump.c, destroy functions in
 * graph.c, jobs.c and plan.c, planning in planner.c, evaluation in
 * evaluate.c.
 */
#include "inart/inart.h"

#include <math.h>

#include "cp/model/plan.h"

double inart_plan_comm_time(const struct inart_plan *p)
{
	return p ? p->comm_time_s : NAN;
}
