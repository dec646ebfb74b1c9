/*
 * controller: hysteresis over predicted gains, re-plans under measured
 * loads, a decision record per period (controller.h).  Owns two views of
 * the topology (each a copy whose background it overwrites, and an
 * evaluator on it): the measured loads, and the loads a re-plan sees;
 * three plans: installed, previous (for revert) and the candidate of the
 * last re-plan; and a ring of past loads (HIST snapshots at least
 * settle_s / 8 apart) for the settling test.  The controller and its
 * per-arc arrays are one block (lay_out).
 */
#include "ctl/controller.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/slab.h"
#include "cp/model/evaluate.h"
#include "cp/planner/planner.h"

#define HIST 16
#define RISE_RESIDUAL 0.05 /* a rising arc is planned for at 95% of its capacity */

/* A copy of the topology whose background the controller overwrites, and
 * an evaluator on that copy. */
struct view {
	struct inart_topo *t;
	struct inart_evaluator *ev;
};

struct inart_controller {
	struct view meas;      /* bg = measured */
	struct view replan;    /* bg = what the re-plan sees (rising arcs high) */
	int n_arcs;	       /* of the topology */
	unsigned char *rising; /* per arc: its load is rising */
	const struct inart_jobs *js;
	struct inart_ctl_opt o;
	struct inart_plan *cur, *prev, *cand;
	uint64_t epoch, prev_epoch;
	/* predicted times in the replan view at the last re-plan: the installed plan's,
	 * the candidate's (+inf: none), the previous plan's (for revert) */
	double ref_cur, ref_cand, ref_prev;
	double *bg_replan; /* what the last re-plan saw (the replan view's loads, n_arcs) */
	int replanned_once;
	long replans, skipped; /* re-plans run; skipped (no load moved that matters) */
	double pend_since;     /* gain above threshold since, or < 0 */
	double last_switch;    /* time of the last switch, or -inf */
	double last_t;
	int switches;
	double *hist; /* HIST x n_arcs past loads */
	double hist_t[HIST];
	int hist_n, hist_head; /* entries, next slot */
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
	o->settle_s = 0.1;
	o->settle_frac = 0.10;
	o->rise_s = 0.5;
	o->algorithm = "inart";
}

const char *inart_ctl_action_name(enum inart_ctl_action a)
{
	static const char *const names[] = {
	    [INART_CTL_KEEP] = "keep", [INART_CTL_HOLD] = "hold", [INART_CTL_SWITCH] = "switch"};

	return a >= INART_CTL_KEEP && a <= INART_CTL_SWITCH ? names[a] : "?";
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
	return inart_null_errno(EINVAL);
}

/* v: a copy of t and an evaluator of js on it.  0, or -1 with err and errno
 * set (as topo_copy and inart_evaluator_create set them). */
static int view_init(struct view *v, const struct inart_topo *t, const struct inart_jobs *js,
		     struct inart_err *err)
{
	v->t = topo_copy(t, err);
	if (v->t == NULL)
		return -1;
	v->ev = inart_evaluator_create(v->t, js);
	if (v->ev == NULL) {
		inart_err_set(err, -ENOMEM, "controller: out of memory");
		return -1;
	}
	return 0;
}

static void view_free(struct view *v)
{
	inart_evaluator_destroy(v->ev);
	inart_topo_destroy(v->t);
}

void inart_controller_destroy(struct inart_controller *c)
{
	if (c == NULL)
		return;
	view_free(&c->meas);
	view_free(&c->replan);
	inart_plan_destroy(c->cur);
	inart_plan_destroy(c->prev);
	inart_plan_destroy(c->cand);
	free(c); /* its arrays with it (lay_out) */
}

/* The controller and its per-arc arrays in one block (common/slab.h):
 * bg_replan, rising (n_arcs + 1 entries each), hist (HIST rows of n_arcs +
 * 1). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_controller *c = obj;
	size_t n = (size_t)c->n_arcs + 1;

	c->bg_replan = inart_slab_take(s, n, sizeof(*c->bg_replan));
	c->rising = inart_slab_take(s, n, sizeof(*c->rising));
	c->hist = inart_slab_take(s, (size_t)HIST * n, sizeof(*c->hist));
}

struct inart_controller *inart_controller_create(const struct inart_topo *t,
						 const struct inart_jobs *js,
						 const struct inart_plan *installed,
						 const struct inart_ctl_opt *o,
						 struct inart_err *err)
{
	struct inart_controller proto = {0}, *c;

	if (t == NULL || js == NULL || installed == NULL || o == NULL || !(o->threshold > 0) ||
	    !(o->hold_s >= 0) || !(o->window_s >= 0) || !(o->replan_change >= 0) ||
	    !(o->replan_limit_s >= 0) || !(o->replan_timeout_s > 0) || !(o->settle_s >= 0) ||
	    !(o->settle_frac >= 0) || !(o->rise_s >= 0)) {
		inart_err_set(err, -EINVAL, "controller: bad arguments or options");
		return inart_null_errno(EINVAL);
	}
	proto.n_arcs = inart_topo_n_arcs(t);
	c = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (c == NULL) {
		inart_err_set(err, -ENOMEM, "controller: out of memory");
		return NULL;
	}
	c->js = js;
	c->o = *o;
	if (c->o.algorithm == NULL)
		c->o.algorithm = "inart";
	c->pend_since = -1;
	c->last_switch = -INFINITY;
	c->ref_cur = c->ref_cand = c->ref_prev = INFINITY;
	c->last_t = -INFINITY;
	if (view_init(&c->meas, t, js, err) < 0 || view_init(&c->replan, t, js, err) < 0)
		goto fail;
	c->cur = inart_plan_clone(installed);
	if (c->cur == NULL) {
		inart_err_set(err, -ENOMEM, "controller: out of memory");
		errno = ENOMEM;
		goto fail;
	}
	if (inart_evaluator_run(c->meas.ev, c->cur, NULL, err) < 0) {
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

long inart_controller_replans(const struct inart_controller *c, long *skipped)
{
	if (skipped != NULL)
		*skipped = c == NULL ? 0 : c->skipped;
	return c == NULL ? 0 : c->replans;
}

int inart_controller_revert(struct inart_controller *c)
{
	if (c == NULL || c->prev == NULL)
		return -ENOENT;
	inart_plan_destroy(c->cur);
	c->cur = c->prev;
	c->prev = NULL;
	c->epoch = c->prev_epoch;
	c->ref_cur = c->ref_prev;
	return 0;
}

/* Predicted time of p by evaluator ev (meas's: under the measured loads;
 * replan's: as the re-plan sees them); +inf when the evaluator refuses it
 * (e.g. an arc it uses has no residual capacity). */
static double predict_on(struct inart_evaluator *ev, const struct inart_plan *p)
{
	struct inart_eval e;

	if (p == NULL || inart_evaluator_run(ev, p, &e, NULL) < 0)
		return INFINITY;
	return e.comm_time_s;
}

static double predict(struct inart_controller *c, const struct inart_plan *p)
{
	return predict_on(c->meas.ev, p);
}

/* now rose above ref by more than the fraction f (+inf above finite: yes). */
static int time_rose(double now, double ref, double f)
{
	return isinf(now) ? !isinf(ref) : now > ref * (1 + f);
}

/* Whether a re-plan can change the decision, judged on the loads the
 * re-plan sees (the replan view: measured, rising arcs high) against those
 * of the last re-plan.  A plan's predicted time never falls when a load rises, so if
 * no load fell by more than replan_change x capacity, no plan became
 * faster than it was then (beyond the band): none is faster than `best`,
 * the faster of the installed plan and the candidate at the last re-plan.
 * Then a re-plan is needed only when the installed plan became slower
 * (its time rose by more than replan_change), or when the candidate did
 * and a plan as fast as `best` would now be worth a switch (best <= (1 -
 * threshold) x the installed plan's time); otherwise it could not find a
 * plan that gains the threshold. */
static int loads_moved(const struct inart_controller *c, char *why, size_t cap)
{
	const struct inart_topo *t = c->meas.t;
	double now, cur, best;

	if (!c->replanned_once) {
		snprintf(why, cap, "first");
		return 1;
	}
	for (int a = 0; a < inart_topo_n_arcs(t); a++) {
		double d = c->replan.t->arcs[a].bg_gbps - c->bg_replan[a];

		if (d < -c->o.replan_change * t->arcs[a].gbps) {
			snprintf(why, cap, "%.32s->%.32s fell %.3g Gbit/s",
				 t->nodes[t->arcs[a].from].id, t->nodes[t->arcs[a].to].id, -d);
			return 1;
		}
	}
	cur = predict_on(c->replan.ev, c->cur);
	if (time_rose(cur, c->ref_cur, c->o.replan_change)) {
		snprintf(why, cap, "plan in service: %.3g -> %.3g s", c->ref_cur, cur);
		return 1;
	}
	best = c->ref_cand < c->ref_cur ? c->ref_cand : c->ref_cur;
	now = predict_on(c->replan.ev, c->cand);
	if (time_rose(now, c->ref_cand, c->o.replan_change) && best <= (1 - c->o.threshold) * cur) {
		snprintf(why, cap, "candidate: %.3g -> %.3g s", c->ref_cand, now);
		return 1;
	}
	return 0;
}

/* rising[a]: arc a's load now exceeds its lowest within the last rise_s
 * (the snapshots) by more than settle_frac x capacity.  The re-plan's
 * view: the measured loads, rising arcs at (1 - RISE_RESIDUAL) x
 * capacity (never below the measured load). */
static void rising_loads(struct inart_controller *c, double now_s)
{
	int n = c->n_arcs;

	for (int a = 0; a < n; a++) {
		double cap = c->meas.t->arcs[a].gbps, now = c->meas.t->arcs[a].bg_gbps, lo = now;

		for (int k = 0; c->o.rise_s > 0 && k < c->hist_n; k++) {
			int i = (c->hist_head + HIST - 1 - k) % HIST;

			if (now_s - c->hist_t[i] > c->o.rise_s + 1e-9)
				break;
			if (c->hist[(size_t)i * (size_t)n + (size_t)a] < lo)
				lo = c->hist[(size_t)i * (size_t)n + (size_t)a];
		}
		c->rising[a] = c->o.rise_s > 0 && now - lo > c->o.settle_frac * cap;
		c->replan.t->arcs[a].bg_gbps = c->rising[a] && now < (1 - RISE_RESIDUAL) * cap
						   ? (1 - RISE_RESIDUAL) * cap
						   : now;
	}
}

/* Remember the current loads (at most one snapshot per settle_s / 8). */
static void hist_push(struct inart_controller *c, double now_s)
{
	int n = c->n_arcs, last = (c->hist_head + HIST - 1) % HIST;

	if (c->hist_n > 0 && now_s - c->hist_t[last] <
				 (c->o.settle_s > c->o.rise_s ? c->o.settle_s : c->o.rise_s) / 8)
		return;
	for (int a = 0; a < n; a++)
		c->hist[(size_t)c->hist_head * (size_t)n + (size_t)a] = c->meas.t->arcs[a].bg_gbps;
	c->hist_t[c->hist_head] = now_s;
	c->hist_head = (c->hist_head + 1) % HIST;
	if (c->hist_n < HIST)
		c->hist_n++;
}

/* 1 when no arc's load moved by more than settle_frac x capacity since the
 * newest snapshot at least settle_s old; 0 when one did or there is none.
 * *moved = the largest move as a fraction of capacity. */
static int settled(const struct inart_controller *c, double now_s, double *moved)
{
	int n = c->n_arcs;

	*moved = 0;
	if (c->o.settle_s <= 0)
		return 1;
	for (int k = 1; k <= c->hist_n; k++) {
		int i = (c->hist_head + HIST - k) % HIST;
		const double *old = &c->hist[(size_t)i * (size_t)n];

		if (now_s - c->hist_t[i] < c->o.settle_s - 1e-9)
			continue;
		for (int a = 0; a < n; a++) {
			double cap = c->meas.t->arcs[a].gbps,
			       m = cap > 0 ? fabs(c->meas.t->arcs[a].bg_gbps - old[a]) / cap : 0;

			if (m > *moved)
				*moved = m;
		}
		return *moved <= c->o.settle_frac;
	}
	*moved = NAN;
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
	int n = c->n_arcs, rc;

	if (!loads_moved(c, d->replan_why, sizeof(d->replan_why))) {
		c->skipped++;
		return 0;
	}
	for (int a = 0; a < n; a++)
		c->bg_replan[a] = c->replan.t->arcs[a].bg_gbps;
	c->replanned_once = 1;
	c->replans++;
	c->ref_cur = predict_on(c->replan.ev, c->cur);
	rc = fn(arg, c->replan.t, c->js, c->cur, c->o.replan_limit_s, &p, &el, &err);
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
	c->ref_cand = predict_on(c->replan.ev, p);
	return 0;
}

int inart_controller_decide(struct inart_controller *c, double now_s, const double *bg, int ready,
			    int silent_node, struct inart_ctl_decision *d)
{
	double moved;
	int n, rc, calm;

	if (c == NULL || d == NULL || !isfinite(now_s) || now_s < c->last_t)
		return -EINVAL;
	c->last_t = now_s;
	memset(d, 0, sizeof(*d));
	d->t_s = now_s;
	d->cur_s = d->new_s = d->gain = d->replan_s = NAN;
	d->silent_node = silent_node;
	d->epoch = c->epoch;
	d->js = c->js;
	n = c->n_arcs;
	if (silent_node >= 0) {
		c->pend_since = -1;
		say(d, INART_CTL_KEEP, "silent",
		    "switch '%s' does not answer for its counters; keeping the plan",
		    silent_node < c->meas.t->n_nodes ? c->meas.t->nodes[silent_node].id : "?");
		return 0;
	}
	if (bg == NULL || !ready) {
		say(d, INART_CTL_KEEP, "not-ready", "loads not measured yet; keeping the plan");
		return 0;
	}
	for (int a = 0; a < n; a++) {
		double b = bg[a], cap = c->meas.t->arcs[a].gbps;

		c->meas.t->arcs[a].bg_gbps = !(b > 0) ? 0 : b < cap ? b : cap;
	}
	d->bg = bg;
	calm = settled(c, now_s, &moved);
	rising_loads(c, now_s);
	hist_push(c, now_s);
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
	if (!calm) {
		say(d, INART_CTL_HOLD, "settling",
		    "predicted gain %.1f%% held %.3f s, but the loads are still moving (%.1f%% of "
		    "a "
		    "capacity in %.3f s, settled below %.1f%%)",
		    100 * d->gain, now_s - c->pend_since, 100 * moved, c->o.settle_s,
		    100 * c->o.settle_frac);
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
	c->ref_prev = c->ref_cur;
	c->ref_cur = c->ref_cand;
	c->ref_cand = INFINITY;
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
	o.no_ring = 1;	   /* the data plane runs PS plans only */
	o.start = current; /* warm start: the plan in service */
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
	if (d->replanned) {
		inart_sbuf_puts(b, ", \"replan_why\": ");
		json_str(b, d->replan_why);
	}
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
	inart_sbuf_puts(b, "]");
	if (d->iter_s != NULL && d->js != NULL) {
		inart_sbuf_puts(b, ", \"iter_s\": {");
		for (int j = 0; j < d->js->n_jobs; j++) {
			if (j > 0)
				inart_sbuf_puts(b, ", ");
			json_str(b, d->js->jobs[j].id);
			if (isfinite(d->iter_s[j]))
				inart_sbuf_printf(b, ": %.6g", d->iter_s[j]);
			else
				inart_sbuf_puts(b, ": null");
		}
		inart_sbuf_puts(b, "}");
	}
	inart_sbuf_puts(b, "}");
}
