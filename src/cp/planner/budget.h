/*
 * budget: one planning run's time budget, created from the time limit
 * (--time-limit) and handed to every stage (candidates, phase 2's LP and
 * rounding, the local search, the search's starts, the large-neighbourhood
 * search, ring mixing, CBC's and CLP's limits), each stage checking it.
 *
 * A budget is a small value (no allocation): a clock (inart_now_s unless a
 * test sets a fake one), its reading at the start, and a deadline on that
 * clock (INFINITY: unbounded).  A child budget is a stage's share of what is
 * left: it never ends after its parent.  Times handed to solvers that read
 * the real clock (CLP, CBC) are remaining times in seconds
 * (inart_budget_limit_s).
 */
#ifndef INART_BUDGET_H
#define INART_BUDGET_H

struct inart_budget {
	double (*clock)(void *arg); /* NULL: inart_now_s */
	void *clock_arg;
	double t0;	 /* the clock at the start of the run */
	double deadline; /* on the clock; INFINITY: none */
};

/* A budget of limit_s seconds from now on `clock` (NULL: the monotonic
 * clock); limit_s INFINITY (or NaN, or < 0): unbounded. */
void inart_budget_init(struct inart_budget *b, double limit_s, double (*clock)(void *arg),
		       void *clock_arg);

/* The clock now; seconds since t0. */
double inart_budget_now(const struct inart_budget *b);
double inart_budget_elapsed(const struct inart_budget *b);

/* Seconds left (>= 0; INFINITY when unbounded); 1 when none is left. */
double inart_budget_remaining(const struct inart_budget *b);
int inart_budget_expired(const struct inart_budget *b);

/* A stage's budget: share (0..1] of what b has left, at most max_s seconds
 * (INFINITY: no cap), on b's clock and never past b's deadline.  An
 * unbounded b with max_s INFINITY gives an unbounded child. */
struct inart_budget inart_budget_child(const struct inart_budget *b, double share, double max_s);

/* A solver's time limit in seconds for this budget: the time left, at least
 * min_s (solvers treat 0 as "none"), or 0 when unbounded (no limit). */
double inart_budget_limit_s(const struct inart_budget *b, double min_s);

#endif
