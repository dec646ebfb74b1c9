/*
 * budget: a planning run's time budget (see budget.h).
 */
#include "cp/planner/budget.h"

#include <math.h>

#include "common/clock.h"

void inart_budget_init(struct inart_budget *b, double limit_s, double (*clock)(void *arg),
		       void *clock_arg)
{
	b->clock = clock;
	b->clock_arg = clock_arg;
	b->t0 = inart_budget_now(b);
	b->deadline = limit_s >= 0 && isfinite(limit_s) ? b->t0 + limit_s : INFINITY;
}

double inart_budget_now(const struct inart_budget *b)
{
	return b->clock != NULL ? b->clock(b->clock_arg) : inart_now_s();
}

double inart_budget_elapsed(const struct inart_budget *b)
{
	return inart_budget_now(b) - b->t0;
}

double inart_budget_remaining(const struct inart_budget *b)
{
	double left;

	if (isinf(b->deadline))
		return INFINITY;
	left = b->deadline - inart_budget_now(b);
	return left > 0 ? left : 0;
}

int inart_budget_expired(const struct inart_budget *b)
{
	return !isinf(b->deadline) && inart_budget_now(b) >= b->deadline;
}

struct inart_budget inart_budget_child(const struct inart_budget *b, double share, double max_s)
{
	struct inart_budget c = *b;
	double left = inart_budget_remaining(b), give;

	give = isinf(left) ? max_s : fmin(left * share, max_s);
	c.deadline = isinf(give) ? INFINITY : fmin(inart_budget_now(b) + give, b->deadline);
	return c;
}

double inart_budget_limit_s(const struct inart_budget *b, double min_s)
{
	double left = inart_budget_remaining(b);

	if (isinf(left))
		return 0;
	return left > min_s ? left : min_s;
}
