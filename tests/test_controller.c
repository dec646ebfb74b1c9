/*
 * test_controller: the controller's decisions (ctl/controller.h) on two
 * parallel paths: a surge on the path in use makes it switch after the hold
 * time; background oscillating around the threshold switches at most once
 * per hysteresis window (and flaps without it, so the test can fail); a
 * re-plan that fails or takes too long keeps the plan; a silent switch or
 * unmeasured loads keep it; revert; the real planner as re-plan.
 */
#include <errno.h>
#include <math.h>

#include "cp/model/evaluate.h"
#include "ctl/controller.h"
#include "testutil.h"

/* h0, h1 -- e0 -- {s0 | s1} -- e1 -- h2; 10 Gbit/s everywhere, no INA. */
struct fx {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *a, *b, *c; /* via s0, via s1, via s2 (fx_init3 only) */
	int calls, fail, slow;
};

static struct inart_plan *via(struct fx *f, const char *sp)
{
	struct inart_plan *p = inart_plan_create(f->js, "hand");
	char path[64];

	assert_non_null(p);
	p->jobs[0].split[0] = 1;
	snprintf(path, sizeof(path), "h0 e0 %s e1 h2", sp);
	tu_flow(p, f->t, 0, "h0", "h2", "h2", path);
	snprintf(path, sizeof(path), "h1 e0 %s e1 h2", sp);
	tu_flow(p, f->t, 0, "h1", "h2", "h2", path);
	return p;
}

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->t = tu_topo("h0-e0:10 h1-e0:10 e0-s0:10 e0-s1:10 s0-e1:10 s1-e1:10 e1-h2:10", "");
	f->js = tu_jobs1(f->t, "h0 h1", "h2", 1e8);
	f->a = via(f, "s0");
	f->b = via(f, "s1");
}

/* The same with a third path, e0 -- s2 -- e1. */
static void fx_init3(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->t = tu_topo("h0-e0:10 h1-e0:10 e0-s0:10 e0-s1:10 e0-s2:10 s0-e1:10 s1-e1:10 s2-e1:10 "
		       "e1-h2:10",
		       "");
	f->js = tu_jobs1(f->t, "h0 h1", "h2", 1e8);
	f->a = via(f, "s0");
	f->b = via(f, "s1");
	f->c = via(f, "s2");
}

static void fx_free(struct fx *f)
{
	inart_plan_destroy(f->a);
	inart_plan_destroy(f->b);
	inart_plan_destroy(f->c);
	tu_free(f->t, f->js, NULL, NULL);
}

static double eval_on(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_plan *p)
{
	struct inart_plan *c = inart_plan_clone(p);
	double s;

	assert_non_null(c);
	s = inart_evaluate(t, js, c, NULL) == 0 ? c->comm_time_s : INFINITY;
	inart_plan_destroy(c);
	return s;
}

/* A planner that knows two plans (three with fx_init3): the fastest under
 * t's loads (ties: the current one's). */
static int two_plans(void *arg, const struct inart_topo *t, const struct inart_jobs *js,
		     const struct inart_plan *current, double limit_s, struct inart_plan **out,
		     double *elapsed_s, struct inart_err *err)
{
	struct fx *f = arg;
	double ta = eval_on(t, js, f->a), tb = eval_on(t, js, f->b), tc = eval_on(t, js, current);
	double t3 = f->c ? eval_on(t, js, f->c) : INFINITY;

	f->calls++;
	*elapsed_s = f->slow ? 2.0 : 0.01;
	*out = NULL;
	if (f->fail)
		return inart_err_set(err, -EIO, "the solver broke");
	*out = inart_plan_clone(tc <= ta && tc <= tb && tc <= t3 ? current
				: t3 < ta && t3 < tb		 ? f->c
				: ta <= tb			 ? f->a
								 : f->b);
	return 0;
}

static int uses(const struct inart_topo *t, const struct inart_plan *p, const char *node)
{
	int v = tu_find(t, node);

	for (int i = 0; i < p->jobs[0].n_flows; i++)
		for (int k = 0; k < p->jobs[0].flows[i].n_path; k++)
			if (p->jobs[0].flows[i].path[k] == v)
				return 1;
	return 0;
}

static struct inart_controller *ctl_rise(struct fx *f, double hold, double window, double settle_s,
					 double rise_s)
{
	struct inart_ctl_opt o;
	struct inart_err err;
	struct inart_controller *c;

	inart_ctl_opt_default(&o);
	o.hold_s = hold;
	o.window_s = window;
	o.replan = two_plans;
	o.replan_arg = f;
	o.settle_s = settle_s;
	o.rise_s = rise_s;
	c = inart_controller_create(f->t, f->js, f->a, &o, &err);
	if (c == NULL)
		fail_msg("%s", err.msg);
	return c;
}

static struct inart_controller *ctl_settle(struct fx *f, double hold, double window,
					   double settle_s)
{
	return ctl_rise(f, hold, window, settle_s, 0.5);
}

static struct inart_controller *ctl(struct fx *f, double hold, double window)
{
	return ctl_settle(f, hold, window, 0.1);
}

static void loads(const struct fx *f, double *bg, double s0, double s1)
{
	memset(bg, 0, sizeof(double) * (size_t)inart_topo_n_arcs(f->t));
	bg[inart_topo_arc_between(f->t, tu_find(f->t, "e0"), tu_find(f->t, "s0"))] = s0;
	bg[inart_topo_arc_between(f->t, tu_find(f->t, "e0"), tu_find(f->t, "s1"))] = s1;
}

/* A controller without hysteresis on plan a, loads: 8 Gbit/s on e0->s0. */
static struct inart_controller *hot_s0(struct fx *f, double *bg)
{
	struct inart_controller *c;

	fx_init(f);
	c = ctl(f, 0, 0);
	loads(f, bg, 8, 0);
	return c;
}

static void test_surge(void **state)
{
	struct fx f;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	struct inart_sbuf b = {0};
	double bg[32];
	char *js;
	int t;

	fx_init(&f);
	c = ctl(&f, 0.2, 5);
	loads(&f, bg, 0, 0);
	assert_int_equal(inart_controller_decide(c, 0.0, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_true(d.replanned);
	assert_string_equal(d.why, "no-gain");
	/* 8 Gbit/s on e0->s0, which plan a uses: b is 5x faster */
	loads(&f, bg, 8, 0);
	for (t = 1; t < 20; t++) {
		assert_int_equal(inart_controller_decide(c, 0.1 * t, bg, 1, -1, &d), 0);
		if (d.action == INART_CTL_SWITCH)
			break;
		assert_int_equal(d.action, INART_CTL_HOLD);
		assert_string_equal(d.why, "holding");
	}
	/* held 0.2 s: the third look (t = 0.1, 0.2, 0.3) switches */
	assert_int_equal(t, 3);
	assert_true(fabs(d.gain - 0.8) < 1e-9);
	assert_true(d.new_s < d.cur_s);
	assert_int_equal(d.epoch, 1);
	assert_true(uses(f.t, d.plan, "s1"));
	assert_true(uses(f.t, inart_controller_plan(c), "s1"));
	assert_int_equal(inart_controller_switches(c), 1);
	assert_int_equal(f.calls, 2); /* the loads moved once */
	inart_ctl_decision_json(&d, f.t, &b);
	js = inart_sbuf_finish(&b);
	assert_non_null(strstr(js, "\"action\": \"switch\""));
	assert_non_null(
	    strstr(js, "\"loads\": [{\"from\": \"e0\", \"to\": \"s0\", \"bg_gbps\": 8"));
	assert_non_null(strstr(js, "\"epoch\": 1"));
	assert_null(strstr(js, "iter_s"));
	free(js);
	/* with the jobs' measured iteration times */
	{
		double it = 0.625;

		d.iter_s = &it;
		b = (struct inart_sbuf){0};
		inart_ctl_decision_json(&d, f.t, &b);
		js = inart_sbuf_finish(&b);
		assert_non_null(strstr(js, "\"iter_s\": {\""));
		assert_non_null(strstr(js, "\": 0.625}}"));
		free(js);
		it = NAN;
		b = (struct inart_sbuf){0};
		inart_ctl_decision_json(&d, f.t, &b);
		js = inart_sbuf_finish(&b);
		assert_non_null(strstr(js, "\": null}}"));
		free(js);
	}
	/* nothing moves any more: keep, no re-plan */
	assert_int_equal(inart_controller_decide(c, 0.4, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_false(d.replanned);
	/* the install failed: back to plan a and epoch 0 */
	assert_int_equal(inart_controller_revert(c), 0);
	assert_int_equal(inart_controller_epoch(c), 0);
	assert_true(uses(f.t, inart_controller_plan(c), "s0"));
	assert_int_equal(inart_controller_revert(c), -ENOENT);
	inart_controller_destroy(c);
	fx_free(&f);
}

/* The end of a three-path run: *on_s2 = the plan in service uses s2; the
 * controller and fixture freed; returns n. */
static int three_done(struct fx *f, struct inart_controller *c, int n, int *on_s2)
{
	*on_s2 = uses(f->t, inart_controller_plan(c), "s2");
	inart_controller_destroy(c);
	fx_free(f);
	return n;
}

/* run(on) makes one switch, to s2, and run(0) -- the feature off, so the
 * test can fail -- two: the intermediate path first, s2 a window later. */
static void one_then_two(int (*run)(double, int *), double on)
{
	int on_s2;

	assert_int_equal(run(on, &on_s2), 1);
	assert_true(on_s2);
	assert_int_equal(run(0, &on_s2), 2);
	assert_true(on_s2);
}

static double ramp(double t, double t0, double t1, double top)
{
	return t <= t0 ? 0 : t >= t1 ? top : top * (t - t0) / (t1 - t0);
}

/* A surge that ramps (as an estimate rises, over several periods) on s0 to
 * 9 Gbit/s over [1, 1.6] s and, a little later, on s1 to 8 Gbit/s over
 * [1.5, 2.1] s (13-15% of a capacity per 0.1 s: above the 10% that counts
 * as settled); s2 carries 4 Gbit/s throughout.  Halfway, s1 looks best;
 * once settled s2 is.  Returns the switches over 10 s (5 s window); *on_s2:
 * the plan in service in the end uses s2. */
static int ramp_switches(double settle_s, int *on_s2)
{
	struct fx fx, *f = &fx;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	double bg[32];
	int n = 0, e0, settling = 0;

	fx_init3(f);
	e0 = tu_find(f->t, "e0");
	c = ctl_settle(f, 0.2, 5, settle_s);
	for (int i = 0; i <= 100; i++) {
		double now = 0.1 * i;

		memset(bg, 0, sizeof(bg));
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s0"))] = ramp(now, 1, 1.6, 9);
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s1"))] = ramp(now, 1.5, 2.1, 8);
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s2"))] = 4;
		assert_int_equal(inart_controller_decide(c, now, bg, 1, -1, &d), 0);
		if (d.action == INART_CTL_SWITCH) {
			n++;
			/* the loads stopped moving at 2.1 s: a switch after settling
			 * is at most settle + one period later, hold included */
			if (settle_s > 0)
				assert_true(now >= 2.1 + settle_s - 1e-9 && now <= 2.3 + 1e-9);
		}
		settling += d.action == INART_CTL_HOLD && !strcmp(d.why, "settling");
	}
	assert_true(settle_s > 0 ? settling > 0 : settling == 0);
	assert_int_equal(inart_controller_switches(c), n);
	return three_done(f, c, n, on_s2);
}

/* waiting for the loads to settle: straight to s2; not waiting: s1
 * halfway */
static void test_ramp(void **state)
{
	one_then_two(ramp_switches, 0.1);
}

/* A rise that pauses: s0 (the plan's path) 0 -> 6 Gbit/s and s1 0 -> 2
 * over [1, 1.3] s, both still for 0.4 s (long enough to settle), then s0
 * -> 9 and s1 -> 8 over [1.7, 2] s; s2 carries 5 throughout.  At the
 * pause s1 is the fastest path (residual 8), in the end s2 (5).  Returns
 * the switches over 10 s (5 s window); *on_s2 as for ramp_switches. */
static int pause_switches(double rise_s, int *on_s2)
{
	struct fx fx, *f = &fx;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	double bg[32];
	int n = 0, e0;

	fx_init3(f);
	e0 = tu_find(f->t, "e0");
	c = ctl_rise(f, 0.2, 5, 0.1, rise_s);
	for (int i = 0; i <= 100; i++) {
		double now = 0.1 * i;

		memset(bg, 0, sizeof(bg));
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s0"))] =
		    ramp(now, 1, 1.3, 6) + ramp(now, 1.7, 2, 3);
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s1"))] =
		    ramp(now, 1, 1.3, 2) + ramp(now, 1.7, 2, 6);
		bg[inart_topo_arc_between(f->t, e0, tu_find(f->t, "s2"))] = 5;
		assert_int_equal(inart_controller_decide(c, now, bg, 1, -1, &d), 0);
		n += d.action == INART_CTL_SWITCH;
	}
	return three_done(f, c, n, on_s2);
}

/* the rising s0 and s1 planned for at 95% of their capacity: the candidate
 * at the pause is already s2; planned for the measured loads: s1 */
static void test_pause(void **state)
{
	one_then_two(pause_switches, 0.5);
}

/* Background moving between the two paths every half second, the gain of
 * each switch just above the 10% threshold (12.5%).  Returns the switches
 * over 30 s and checks the window between any two. */
static int flap(double hold, double window)
{
	struct fx f;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	double bg[32], last = -INFINITY;
	int n = 0;

	fx_init(&f);
	c = ctl(&f, hold, window);
	for (int i = 0; i < 300; i++) {
		double now = 0.1 * i, dlt = (i / 5) % 2 ? 0.6 : -0.6;

		loads(&f, bg, 1 + dlt, 1 - dlt);
		assert_int_equal(inart_controller_decide(c, now, bg, 1, -1, &d), 0);
		if (d.action == INART_CTL_SWITCH) {
			assert_true(d.gain >= 0.1 && d.gain < 0.13);
			assert_true(now - last >= window - 1e-9);
			last = now;
			n++;
		}
	}
	assert_int_equal(inart_controller_switches(c), n);
	inart_controller_destroy(c);
	fx_free(&f);
	return n;
}

static void test_flapping(void **state)
{
	int with = flap(0.2, 5.0), without = flap(0, 0);

	/* 30 s / 5 s windows: at most 6 switches, at least one every other window */
	assert_true(with >= 3 && with <= 6);
	/* without the hysteresis every move of the background is followed */
	assert_true(without >= 50);
}

static void test_replan_fails(void **state)
{
	struct fx f;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	double bg[32];

	c = hot_s0(&f, bg);
	f.fail = 1;
	assert_int_equal(inart_controller_decide(c, 0.0, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_string_equal(d.why, "replan-failed");
	assert_non_null(strstr(d.reason, "the solver broke"));
	assert_true(uses(f.t, inart_controller_plan(c), "s0"));
	/* the next re-plan waits for the loads to move */
	assert_int_equal(inart_controller_decide(c, 0.1, bg, 1, -1, &d), 0);
	assert_int_equal(f.calls, 1);
	assert_string_equal(d.why, "no-candidate");
	/* too slow: the plan it found is not used */
	f.fail = 0;
	f.slow = 1;
	loads(&f, bg, 9, 0);
	assert_int_equal(inart_controller_decide(c, 0.2, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_string_equal(d.why, "replan-timeout");
	assert_true(fabs(d.replan_s - 2.0) < 1e-12);
	assert_int_equal(inart_controller_decide(c, 0.3, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_int_equal(inart_controller_switches(c), 0);
	assert_true(uses(f.t, inart_controller_plan(c), "s0"));
	inart_controller_destroy(c);
	fx_free(&f);
}

static void test_silent(void **state)
{
	struct fx f;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	double bg[32];

	c = hot_s0(&f, bg);
	assert_int_equal(inart_controller_decide(c, 0.0, bg, 1, tu_find(f.t, "s1"), &d), 0);
	assert_int_equal(d.action, INART_CTL_KEEP);
	assert_string_equal(d.why, "silent");
	assert_non_null(strstr(d.reason, "'s1'"));
	assert_int_equal(inart_controller_decide(c, 0.1, bg, 0, -1, &d), 0);
	assert_string_equal(d.why, "not-ready");
	assert_int_equal(f.calls, 0);
	assert_int_equal(inart_controller_decide(c, 0.05, bg, 1, -1, &d), -EINVAL); /* backwards */
	assert_int_equal(inart_controller_decide(c, 0.2, bg, 1, -1, &d), 0);
	/* hold 0, but no loads 0.1 s old to say they settled */
	assert_int_equal(d.action, INART_CTL_HOLD);
	assert_string_equal(d.why, "settling");
	assert_int_equal(inart_controller_decide(c, 0.3, bg, 1, -1, &d), 0);
	assert_int_equal(d.action, INART_CTL_SWITCH); /* hold 0: at once */
	inart_controller_destroy(c);
	inart_controller_destroy(NULL);
	fx_free(&f);
}

/* The real planner (inart_ctl_replan_planner) moves off the hot path. */
static void test_planner(void **state)
{
	struct fx f;
	struct inart_ctl_opt o;
	struct inart_controller *c;
	struct inart_ctl_decision d;
	struct inart_err err;
	double bg[32];
	int i;

	fx_init(&f);
	inart_ctl_opt_default(&o);
	o.hold_s = 0.2;
	o.replan_limit_s = 0.1;
	o.replan_timeout_s = 30; /* a busy test machine: only the decision is tested */
	c = inart_controller_create(f.t, f.js, f.a, &o, &err);
	assert_non_null(c);
	loads(&f, bg, 8, 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(inart_controller_decide(c, 0.1 * i, bg, 1, -1, &d), 0);
		if (d.action == INART_CTL_SWITCH)
			break;
	}
	assert_int_equal(d.action, INART_CTL_SWITCH);
	assert_true(d.new_s < 0.5 * d.cur_s);
	assert_false(uses(f.t, d.plan, "s0"));
	inart_controller_destroy(c);
	fx_free(&f);
}

/* One decision 0.1 s after *t with s0, s1, s2 Gbit/s on e0->s0, e0->s1,
 * e0->s2 (s2: fx_init3's arc); returns whether it re-planned. */
static int step(struct fx *f, struct inart_controller *c, double *t, double s0, double s1,
		double s2, struct inart_ctl_decision *d)
{
	double bg[32];

	loads(f, bg, s0, s1);
	bg[inart_topo_arc_between(f->t, tu_find(f->t, "e0"), tu_find(f->t, "s2"))] = s2;
	*t += 0.1;
	assert_int_equal(inart_controller_decide(c, *t, bg, 1, -1, d), 0);
	return d->replanned;
}

/* Re-plans only when the loads moved in a way that can change the
 * decision (controller.h, step 3), with the load-change trigger on and off
 * (rise_s): a load rising on a path neither the installed plan nor the
 * candidate uses re-plans nothing (the former rule, any move beyond the
 * band, re-planned there); a rise on the installed plan's path, a rise on
 * the candidate's, a fall anywhere each re-plan once; a slower candidate
 * that no plan could beat by the threshold any more does not. */
static void test_skip(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct fx f;
		struct inart_controller *c;
		struct inart_ctl_decision d;
		double t = -0.1;
		long skipped = 0;

		fx_init3(&f);
		c = ctl_rise(&f, 10, 100, 0.1, k ? 0.5 : 0);
		assert_true(step(&f, c, &t, 0, 0, 0, &d));
		assert_string_equal(d.replan_why, "first");
		/* 3 Gbit/s on e0->s2: plans a (installed, candidate) do not use it */
		for (int i = 0; i < 6; i++) {
			assert_false(step(&f, c, &t, 0, 0, 3, &d));
			assert_string_equal(d.why, "no-gain");
		}
		/* a fall within the band (0.05 x 10 Gbit/s) of the last re-plan's 0 */
		assert_false(step(&f, c, &t, 0, 0, 0.4, &d));
		assert_int_equal(f.calls, 1);
		assert_int_equal(inart_controller_replans(c, &skipped), 1);
		assert_int_equal(skipped, 7);
		/* 4 Gbit/s on e0->s0: plan a slows down, b is the candidate */
		assert_true(step(&f, c, &t, 4, 0, 0.4, &d));
		assert_non_null(strstr(d.replan_why, "plan in service"));
		assert_string_equal(d.why, "holding");
		/* 2 Gbit/s on e0->s1: the candidate b slows down */
		assert_true(step(&f, c, &t, 4, 2, 0.4, &d));
		assert_non_null(strstr(d.replan_why, "candidate"));
		/* the same again: nothing moved */
		assert_false(step(&f, c, &t, 4, 2, 0.4, &d));
		/* e0->s0 back to 0: a fall */
		assert_true(step(&f, c, &t, 0, 2, 0.4, &d));
		assert_non_null(strstr(d.replan_why, "e0->s0 fell"));
		assert_int_equal(f.calls, 4);
		inart_controller_destroy(c);
		/* a candidate (b) 6% faster than the plan in service (a) slows
		 * down by 5.8%: no plan can gain 10% now, no re-plan */
		c = ctl_rise(&f, 10, 100, 0.1, k ? 0.5 : 0);
		t = 10;
		assert_true(step(&f, c, &t, 0.6, 0, 0, &d));
		assert_true(fabs(d.gain - 0.06) < 1e-9);
		assert_false(step(&f, c, &t, 0.6, 0.55, 0, &d));
		assert_int_equal(f.calls, 5);
		/* ... by 20% (and the plan in service by 5%): re-planned */
		assert_true(step(&f, c, &t, 1.07, 1.67, 0, &d));
		inart_controller_destroy(c);
		fx_free(&f);
	}
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_surge),	 cmocka_unit_test(test_flapping),
	    cmocka_unit_test(test_replan_fails), cmocka_unit_test(test_silent),
	    cmocka_unit_test(test_planner),	 cmocka_unit_test(test_ramp),
	    cmocka_unit_test(test_pause),	 cmocka_unit_test(test_skip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
