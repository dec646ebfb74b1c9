/*
 * search_state: the state of one run of InArt's search that its stages share
 * (see search_state.h): set-up, the best plan and bound, progress.
 */
#include "cp/planner/search_state.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cp/model/cand.h"

/* Above this many candidate choices the phase-2 LP is too slow for CLP here
 * (minutes at fat-tree k=32): phase 2 then starts the rounding's local search
 * from a greedy assignment instead of the LP solution, and the bound comes
 * from a time-limited LP. */
#define LP_MAX_CHOICES 100000
#define BIG_BOUND_TIME_S 8

double inart_search_now(const struct inart_search *s)
{
	return inart_budget_now(&s->budget);
}

void inart_search_init(struct inart_search *s, const struct inart_topo *t,
		       const struct inart_jobs *js, const struct inart_planner_opt *opt,
		       struct inart_paths *paths, struct inart_evaluator *ev, struct inart_err *err)
{
	memset(s, 0, sizeof(*s));
	s->t = t;
	s->js = js;
	s->opt = opt;
	s->paths = paths;
	s->ev = ev;
	s->err = err;
	inart_budget_init(&s->budget, opt->time_limit_s > 0 ? opt->time_limit_s : INFINITY, NULL,
			  NULL);
	s->deadline = s->budget.t0 + (opt->time_limit_s > 0 ? opt->time_limit_s : 0);
	s->bound_s = s->lp_bound_s = NAN;
	s->last_report = -1;
	s->lp.max_choices = LP_MAX_CHOICES;
	s->lp.big_bound_s = BIG_BOUND_TIME_S;
}

void inart_search_free(struct inart_search *s)
{
	free(s->lp.warm);
	inart_cand_destroy(s->cand);
	inart_plan_destroy(s->best);
	inart_plan_destroy(s->starts.even);
	inart_plan_destroy(s->starts.grid);
	for (int i = 0; i < INART_SEARCH_N_BASE; i++)
		inart_plan_destroy(s->starts.base[i]);
	memset(s, 0, sizeof(*s));
}

int inart_search_evaluate(struct inart_search *s, struct inart_plan *p)
{
	struct inart_eval e;
	int rc = inart_evaluator_run(s->ev, p, &e, s->err);

	if (rc == 0) {
		p->comm_time_s = e.comm_time_s;
		p->push_time_s = e.push_time_s;
		p->pull_time_s = e.pull_time_s;
	}
	return rc;
}

static void report(struct inart_search *s, const char *step)
{
	struct inart_planner_progress pr;

	if (s->opt->progress == NULL || (s->best == NULL && step == NULL))
		return;
	memset(&pr, 0, sizeof(pr));
	pr.elapsed_s = inart_search_now(s) - s->budget.t0;
	pr.best_s = s->best != NULL ? s->best->comm_time_s : NAN;
	pr.bound_s = s->bound_s;
	pr.bound_source = inart_bound_source_name(s->bound_src);
	pr.step = step;
	s->last_report = pr.elapsed_s;
	s->opt->progress(&pr, s->opt->progress_arg);
}

int inart_search_offer(struct inart_search *s, const struct inart_plan *p, const char *step)
{
	struct inart_plan *c;

	if (s->best != NULL &&
	    !(p->comm_time_s < s->best->comm_time_s * (1 - INART_SEARCH_IMPROVE_REL)))
		return 0;
	c = inart_plan_clone(p);
	if (c == NULL)
		return inart_err_set(s->err, -ENOMEM, "out of memory");
	inart_plan_destroy(s->best);
	s->best = c;
	report(s, step);
	return 1;
}

void inart_search_tick(struct inart_search *s, const char *step)
{
	if (inart_search_now(s) - s->budget.t0 - s->last_report >= 1 && s->best != NULL)
		report(s, step);
}

void inart_search_stage(struct inart_search *s, const char *stage)
{
	report(s, stage); /* before the first plan too: best_s NaN */
}

void inart_search_raise_bound(struct inart_search *s, double b, enum inart_bound_source src)
{
	if (!(b > 0) || (!isnan(s->bound_s) && !(b > s->bound_s * (1 + 1e-12))))
		return;
	s->bound_s = b;
	s->bound_src = src;
	report(s, "bound");
}

int inart_search_close(const struct inart_search *s, double rel)
{
	return s->best != NULL && s->bound_s > 0 && s->best->comm_time_s <= s->bound_s * (1 + rel);
}
