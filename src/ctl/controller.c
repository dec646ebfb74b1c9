/*
 * controller: hysteresis over predicted gains, re-plans under measured
 * loads, a decision record per period (controller.h).  Owns a copy of the
 * topology whose background it overwrites with the measured loads, an
 * evaluator on that copy, and three plans: installed, previous (for
 * revert) and the candidate of the last re-plan.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "cp/evaluate.h"
#include "cp/planner.h"

struct inart_controller {
	struct inart_topo *t; /* copy; bg = measured */
	const struct inart_jobs *js;
	struct inart_ctl_opt o;
	struct inart_evaluator *ev;
	struct inart_plan *cur, *prev, *cand;
	uint64_t epoch, prev_epoch;
	double *bg_replan; /* loads at the last re-plan (n_arcs) */
	int replanned_once;
	double pend_since;  /* gain above threshold since, or < 0 */
	double last_switch; /* time of the last switch, or -inf */
	double last_t;
	int switches;
};

void inart_ctl_opt_default(struct inart_ctl_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold = 0.10;
	o->hold_s = 0.2;
	o->window_s = 5.0;
	o->replan_change = 0.05;
	o->replan_limit_s = 0.2;
	o->replan_timeout_s = 0.5;
	o->algorithm = "inart";
}

const char *inart_ctl_action_name(enum inart_ctl_action a)
{
	switch (a) {
	case INART_CTL_KEEP:
		return "keep";
	case INART_CTL_HOLD:
		return "hold";
	case INART_CTL_SWITCH:
		return "switch";
	}
	return "?";
}

static struct inart_topo *topo_copy(const struct inart_topo *s, struct inart_err *err)
{
	struct inart_topo *t = inart_topo_create();

	if (t == NULL)
		return NULL;
	for (int v = 0; v < s->n_nodes; v++) {
		const struct inart_node *n = &s->nodes[v];

		if (inart_topo_add_node(t, n->id, n->kind, n->ina, n->agg_gbps, n->trees, err) < 0)
			goto fail;
	}
	for (int l = 0; l < s->n_links; l++) {
		const struct inart_arc *ab = &s->arcs[2 * l], *ba = &s->arcs[2 * l + 1];

		if (inart_topo_add_link(t, ab->from, ab->to, ab->gbps, ba->gbps, ab->bg_gbps,
					ba->bg_gbps, err) < 0)
			goto fail;
	}
	if (inart_topo_finalize(t, err) < 0)
		goto fail;
	return t;
fail:
	inart_topo_destroy(t);
	errno = EINVAL;
	return NULL;
}

void inart_controller_destroy(struct inart_controller *c)
{
	if (c == NULL)
		return;
	inart_evaluator_destroy(c->ev);
	inart_plan_destroy(c->cur);
	inart_plan_destroy(c->prev);
	inart_plan_destroy(c->cand);
	inart_topo_destroy(c->t);
	free(c->bg_replan);
	free(c);
}

struct inart_controller *inart_controller_create(const struct inart_topo *t,
						 const struct inart_jobs *js,
						 const struct inart_plan *installed,
						 const struct inart_ctl_opt *o,
						 struct inart_err *err)
{
	struct inart_controller *c;

	if (t == NULL || js == NULL || installed == NULL || o == NULL || !(o->threshold > 0) ||
	    !(o->hold_s >= 0) || !(o->window_s >= 0) || !(o->replan_change >= 0) ||
	    !(o->replan_limit_s >= 0) || !(o->replan_timeout_s > 0)) {
		inart_err_set(err, -EINVAL, "controller: bad arguments or options");
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->js = js;
	c->o = *o;
	if (c->o.algorithm == NULL)
		c->o.algorithm = "inart";
	c->pend_since = -1;
	c->last_switch = -INFINITY;
	c->last_t = -INFINITY;
	c->t = topo_copy(t, err);
	if (c->t == NULL)
		goto fail;
	c->bg_replan = calloc((size_t)inart_topo_n_arcs(t) + 1, sizeof(double));
	c->ev = inart_evaluator_create(c->t, js);
	c->cur = inart_plan_clone(installed);
	if (c->bg_replan == NULL || c->ev == NULL || c->cur == NULL) {
		inart_err_set(err, -ENOMEM, "controller: out of memory");
		errno = ENOMEM;
		goto fail;
	}
	if (inart_evaluator_run(c->ev, c->cur, NULL, err) < 0) {
		inart_err_prefix(err, "controller: the installed plan");
		errno = EINVAL;
		goto fail;
	}
	return c;
fail:
	inart_controller_destroy(c);
	return NULL;
}

const struct inart_plan *inart_controller_plan(const struct inart_controller *c)
{
	return c == NULL ? NULL : c->cur;
}

uint64_t inart_controller_epoch(const struct inart_controller *c)
{
	return c == NULL ? 0 : c->epoch;
}

int inart_controller_switches(const struct inart_controller *c)
{
	return c == NULL ? 0 : c->switches;
}

int inart_controller_revert(struct inart_controller *c)
{
	if (c == NULL || c->prev == NULL)
		return -ENOENT;
	inart_plan_destroy(c->cur);
	c->cur = c->prev;
	c->prev = NULL;
	c->epoch = c->prev_epoch;
	return 0;
}

/* Predicted time of p under the copy's (measured) loads; +inf when the
 * evaluator refuses it (e.g. an arc it uses has no residual capacity). */
static double predict(struct inart_controller *c, const struct inart_plan *p)
{
	struct inart_eval e;

	if (inart_evaluator_run(c->ev, p, &e, NULL) < 0)
		return INFINITY;
	return e.comm_time_s;
}

static int loads_moved(const struct inart_controller *c)
{
	if (!c->replanned_once)
		return 1;
	for (int a = 0; a < inart_topo_n_arcs(c->t); a++)
		if (fabs(c->t->arcs[a].bg_gbps - c->bg_replan[a]) >
		    c->o.replan_change * c->t->arcs[a].gbps)
			return 1;
	return 0;
}

static void say(struct inart_ctl_decision *d, enum inart_ctl_action a, const char *why,
		const char *fmt, ...) INART_PRINTF(4, 5);

static void say(struct inart_ctl_decision *d, enum inart_ctl_action a, const char *why,
		const char *fmt, ...)
{
	va_list ap;

	d->action = a;
	d->why = why;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

/* Step 3: re-plan if the loads moved.  The candidate is replaced only by a
 * successful re-plan within the timeout.  1: a re-plan failed (d says
 * why), 0 otherwise, -ENOMEM. */
static int maybe_replan(struct inart_controller *c, struct inart_ctl_decision *d)
{
	inart_ctl_replan_fn fn = c->o.replan ? c->o.replan : inart_ctl_replan_planner;
	void *arg = c->o.replan ? c->o.replan_arg : (void *)c->o.algorithm;
	struct inart_plan *p = NULL;
	struct inart_err err = {0};
	double el = NAN;
	int n = inart_topo_n_arcs(c->t), rc;

	if (!loads_moved(c))
		return 0;
	for (int a = 0; a < n; a++)
		c->bg_replan[a] = c->t->arcs[a].bg_gbps;
	c->replanned_once = 1;
	rc = fn(arg, c->t, c->js, c->cur, c->o.replan_limit_s, &p, &el, &err);
	d->replanned = 1;
	d->replan_s = el;
	if (rc < 0 || p == NULL) {
		inart_plan_destroy(p);
		say(d, INART_CTL_KEEP, "replan-failed", "re-plan failed (%s); keeping the plan",
		    rc == -ENOMEM ? "out of memory"
		    : err.msg[0]  ? err.msg
				  : "no plan");
		return 1;
	}
	if (!(el <= c->o.replan_timeout_s)) {
		inart_plan_destroy(p);
		say(d, INART_CTL_KEEP, "replan-timeout",
		    "re-plan took %.3f s, over the %.3f s limit; keeping the plan", el,
		    c->o.replan_timeout_s);
		return 1;
	}
	/* the hold is of the gain, whichever candidate offers it: a load still
	 * rising re-plans every period and must not restart it */
	inart_plan_destroy(c->cand);
	c->cand = p;
	return 0;
}

int inart_controller_decide(struct inart_controller *c, double now_s, const double *bg, int ready,
			    int silent_node, struct inart_ctl_decision *d)
{
	int n, rc;

	if (c == NULL || d == NULL || !isfinite(now_s) || now_s < c->last_t)
		return -EINVAL;
	c->last_t = now_s;
	memset(d, 0, sizeof(*d));
	d->t_s = now_s;
	d->cur_s = d->new_s = d->gain = d->replan_s = NAN;
	d->silent_node = silent_node;
	d->epoch = c->epoch;
	n = inart_topo_n_arcs(c->t);
	if (silent_node >= 0) {
		c->pend_since = -1;
		say(d, INART_CTL_KEEP, "silent",
		    "switch '%s' does not answer for its counters; keeping the plan",
		    silent_node < c->t->n_nodes ? c->t->nodes[silent_node].id : "?");
		return 0;
	}
	if (bg == NULL || !ready) {
		say(d, INART_CTL_KEEP, "not-ready", "loads not measured yet; keeping the plan");
		return 0;
	}
	for (int a = 0; a < n; a++) {
		double b = bg[a], cap = c->t->arcs[a].gbps;

		c->t->arcs[a].bg_gbps = !(b > 0) ? 0 : b < cap ? b : cap;
	}
	d->bg = bg;
	d->cur_s = predict(c, c->cur);
	rc = maybe_replan(c, d);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (c->cand == NULL) {
		say(d, INART_CTL_KEEP, "no-candidate", "no other plan for these loads");
		return 0;
	}
	d->new_s = predict(c, c->cand);
	d->gain = isinf(d->cur_s) ? (isinf(d->new_s) ? 0 : 1) : (d->cur_s - d->new_s) / d->cur_s;
	if (!(d->gain >= c->o.threshold)) {
		c->pend_since = -1;
		say(d, INART_CTL_KEEP, "no-gain",
		    "predicted gain %.1f%% below the %.1f%% threshold", 100 * d->gain,
		    100 * c->o.threshold);
		return 0;
	}
	if (c->pend_since < 0)
		c->pend_since = now_s;
	if (now_s - c->pend_since < c->o.hold_s) {
		say(d, INART_CTL_HOLD, "holding", "predicted gain %.1f%% held %.3f s of %.3f s",
		    100 * d->gain, now_s - c->pend_since, c->o.hold_s);
		return 0;
	}
	if (now_s - c->last_switch < c->o.window_s) {
		say(d, INART_CTL_HOLD, "window",
		    "predicted gain %.1f%%, but the last switch was %.3f s ago (window %.3f s)",
		    100 * d->gain, now_s - c->last_switch, c->o.window_s);
		return 0;
	}
	inart_plan_destroy(c->prev);
	c->prev = c->cur;
	c->prev_epoch = c->epoch;
	c->cur = c->cand;
	c->cand = NULL;
	c->epoch++;
	c->switches++;
	c->last_switch = now_s;
	c->pend_since = -1;
	d->epoch = c->epoch;
	d->plan = c->cur;
	say(d, INART_CTL_SWITCH, "gain",
	    "predicted gain %.1f%% (%.6f s -> %.6f s) held %.3f s: switching to epoch %llu",
	    100 * d->gain, d->cur_s, d->new_s, c->o.hold_s, (unsigned long long)c->epoch);
	return 0;
}

int inart_ctl_replan_planner(void *arg, const struct inart_topo *t, const struct inart_jobs *js,
			     const struct inart_plan *current, double limit_s,
			     struct inart_plan **out, double *elapsed_s, struct inart_err *err)
{
	struct inart_planner_opt o = {.size = sizeof(o)};
	struct inart_plan *p = NULL, *keep;
	double t0 = inart_now_s();
	int rc;

	*out = NULL;
	inart_planner_opt_default(&o);
	o.time_limit_s = limit_s;
	rc = inart_planner_run(arg ? (const char *)arg : "inart", t, js, &o, &p, err);
	if (rc == 0 && current != NULL) {
		keep = inart_plan_clone(current);
		if (keep != NULL && inart_evaluate(t, js, keep, NULL) == 0 &&
		    keep->comm_time_s <= p->comm_time_s) {
			inart_plan_destroy(p);
			p = keep;
		} else {
			inart_plan_destroy(keep);
		}
	}
	*elapsed_s = inart_now_s() - t0;
	*out = p;
	return rc;
}

static void json_str(struct inart_sbuf *b, const char *s)
{
	inart_sbuf_puts(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			inart_sbuf_printf(b, "\\%c", ch);
		else if (ch < 0x20)
			inart_sbuf_printf(b, "\\u%04x", ch);
		else
			inart_sbuf_put(b, s, 1);
	}
	inart_sbuf_puts(b, "\"");
}

static void json_num(struct inart_sbuf *b, const char *key, double v)
{
	if (isfinite(v))
		inart_sbuf_printf(b, ", \"%s\": %.9g", key, v);
	else
		inart_sbuf_printf(b, ", \"%s\": null", key);
}

void inart_ctl_decision_json(const struct inart_ctl_decision *d, const struct inart_topo *t,
			     struct inart_sbuf *b)
{
	int first = 1;

	inart_sbuf_printf(b,
			  "{\"t\": %.6f, \"action\": \"%s\", \"why\": \"%s\", \"reason\": ", d->t_s,
			  inart_ctl_action_name(d->action), d->why ? d->why : "");
	json_str(b, d->reason);
	json_num(b, "cur_s", d->cur_s);
	json_num(b, "new_s", d->new_s);
	json_num(b, "gain", d->gain);
	inart_sbuf_printf(b, ", \"epoch\": %llu, \"replanned\": %s", (unsigned long long)d->epoch,
			  d->replanned ? "true" : "false");
	json_num(b, "replan_s", d->replan_s);
	inart_sbuf_puts(b, ", \"silent\": ");
	if (d->silent_node >= 0 && d->silent_node < t->n_nodes)
		json_str(b, t->nodes[d->silent_node].id);
	else
		inart_sbuf_puts(b, "null");
	inart_sbuf_puts(b, ", \"loads\": [");
	for (int a = 0; d->bg != NULL && a < inart_topo_n_arcs(t); a++) {
		if (!(d->bg[a] > 0))
			continue;
		inart_sbuf_puts(b, first ? "{\"from\": " : ", {\"from\": ");
		json_str(b, t->nodes[t->arcs[a].from].id);
		inart_sbuf_puts(b, ", \"to\": ");
		json_str(b, t->nodes[t->arcs[a].to].id);
		inart_sbuf_printf(b, ", \"bg_gbps\": %.6g, \"cap_gbps\": %.6g}", d->bg[a],
				  t->arcs[a].gbps);
		first = 0;
	}
	inart_sbuf_puts(b, "]}");
}
