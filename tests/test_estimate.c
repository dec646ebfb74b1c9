/*
 * test_estimate: background loads from port counters (ctl/estimate.h):
 * which counter measures which arc, INA traffic subtracted, the smoothing's
 * time constant, counters that jump backwards, silent switches, clamping.
 */
#include <errno.h>
#include <math.h>

#include "ctl/estimate.h"
#include "testutil.h"

/* h0 - e0 - e1 - h1: e0's ports: 0 -> h0, 1 -> e1; e1's: 0 -> e0, 1 -> h1. */
static struct inart_topo *line(void)
{
	return tu_topo("h0-e0:10 e0-e1:10 e1-h1:10", "");
}

static int arc(const struct inart_topo *t, const char *a, const char *b)
{
	return inart_topo_arc_between(t, tu_find(t, a), tu_find(t, b));
}

static struct inart_estimator *est(const struct inart_topo *t, double tau)
{
	struct inart_est_opt o;
	struct inart_estimator *e;

	inart_est_opt_default(&o);
	o.tau_s = tau;
	e = inart_estimator_create(t, &o, NULL);
	assert_non_null(e);
	return e;
}

/* Counters of e0 and e1 after `s` seconds at constant rates (bytes/s):
 * fab = e0->e1 background, ina = e0->e1 INA, down = e1->h1 background. */
static void feed(struct inart_estimator *e, const struct inart_topo *t, double s, double fab,
		 double ina, double down)
{
	struct inart_port_sample p0[2] = {{0}}, p1[2] = {{0}};

	p1[0].rx_bytes = (uint64_t)(s * (fab + ina));
	p1[0].rx_ina_bytes = (uint64_t)(s * ina);
	p1[1].tx_bytes = (uint64_t)(s * down);
	p0[1].tx_bytes = (uint64_t)(s * (fab + ina)); /* not the measuring side */
	assert_int_equal(inart_estimator_feed(e, tu_find(t, "e0"), s, p0, 2), 0);
	assert_int_equal(inart_estimator_feed(e, tu_find(t, "e1"), s, p1, 2), 0);
}

static void test_which_counter(void **state)
{
	struct inart_topo *t = line();
	struct inart_estimator *e = est(t, 0);
	const double *bg;

	assert_false(inart_estimator_ready(e));
	feed(e, t, 1.0, 0.5e9 / 8, 2e9 / 8, 1e9 / 8);
	assert_false(inart_estimator_ready(e)); /* one sample is no interval */
	/* 0.5 Gbit/s background + 2 Gbit/s INA on e0->e1, 1 Gbit/s to h1 */
	feed(e, t, 2.0, 0.5e9 / 8, 2e9 / 8, 1e9 / 8);
	assert_true(inart_estimator_ready(e));
	bg = inart_estimator_bg(e);
	assert_true(fabs(bg[arc(t, "e0", "e1")] - 0.5) < 1e-6);
	assert_true(fabs(bg[arc(t, "e1", "h1")] - 1.0) < 1e-6);
	assert_true(fabs(bg[arc(t, "h0", "e0")]) < 1e-9);
	assert_true(fabs(bg[arc(t, "e1", "e0")]) < 1e-9);
	inart_estimator_destroy(e);
	inart_topo_destroy(t);
}

/* tau: after a step the estimate approaches the new load as 1 - exp(-t/tau),
 * whatever the sampling period. */
static void test_smoothing(void **state)
{
	struct inart_topo *t = line();
	const double periods[2] = {0.1, 0.05};

	for (int k = 0; k < 2; k++) {
		struct inart_estimator *e = est(t, 0.15);
		struct inart_port_sample p[2] = {{0}};
		int v = tu_find(t, "e1"), a = arc(t, "e0", "e1");
		double now = 0, want;

		assert_int_equal(inart_estimator_feed(e, v, now, p, 2), 0);
		now += periods[k];
		assert_int_equal(inart_estimator_feed(e, v, now, p, 2), 0); /* 0 Gbit/s */
		for (int i = 0; i < (int)(0.3 / periods[k] + 0.5); i++) {
			now += periods[k];
			p[0].rx_bytes += (uint64_t)(periods[k] * 4e9 / 8); /* 4 Gbit/s from now */
			assert_int_equal(inart_estimator_feed(e, v, now, p, 2), 0);
		}
		want = 4.0 * (1 - exp(-0.3 / 0.15));
		assert_true(fabs(inart_estimator_bg(e)[a] - want) < 1e-6);
		inart_estimator_destroy(e);
	}
	inart_topo_destroy(t);
}

/* A switch restarted: its counters start again from 0; the estimate keeps
 * its value over that interval and continues from the new baseline. */
static void test_backwards(void **state)
{
	struct inart_topo *t = line();
	struct inart_estimator *e = est(t, 0);
	struct inart_est_anomalies an;
	struct inart_port_sample p[2] = {{0}};
	int v = tu_find(t, "e1"), a = arc(t, "e0", "e1");

	p[0].rx_bytes = 1000000000;
	assert_int_equal(inart_estimator_feed(e, v, 1.0, p, 2), 0);
	p[0].rx_bytes += 1e9 / 8; /* 1 Gbit/s */
	assert_int_equal(inart_estimator_feed(e, v, 2.0, p, 2), 0);
	assert_true(fabs(inart_estimator_bg(e)[a] - 1.0) < 1e-6);
	p[0].rx_bytes = 10; /* restarted */
	assert_int_equal(inart_estimator_feed(e, v, 3.0, p, 2), 0);
	assert_int_equal(inart_estimator_resets(e), 1);
	assert_true(fabs(inart_estimator_bg(e)[a] - 1.0) < 1e-6);
	p[0].rx_bytes += 3e9 / 8;
	assert_int_equal(inart_estimator_feed(e, v, 4.0, p, 2), 0);
	assert_true(fabs(inart_estimator_bg(e)[a] - 3.0) < 1e-6);
	/* the INA counter alone going backwards is a reset too */
	p[0].rx_ina_bytes = 100;
	assert_int_equal(inart_estimator_feed(e, v, 5.0, p, 2), 0);
	p[0].rx_ina_bytes = 50;
	assert_int_equal(inart_estimator_feed(e, v, 6.0, p, 2), 0);
	assert_int_equal(inart_estimator_resets(e), 2);
	/* INA bytes grown more than all bytes: read at two moments, skipped */
	p[0].rx_ina_bytes += 1000;
	p[0].rx_bytes += 10;
	assert_int_equal(inart_estimator_feed(e, v, 7.0, p, 2), 0);
	assert_true(fabs(inart_estimator_bg(e)[a] - 3.0) < 1e-6);
	assert_int_equal(inart_estimator_resets(e), 2);
	inart_estimator_anomalies(e, &an);
	assert_int_equal(an.went_back, 2);
	assert_int_equal(an.restarts, 0);
	assert_int_equal(an.jumps, 0);
	assert_int_equal(an.inconsistent, 2); /* this one and the INA-only step at 5.0 */
	inart_estimator_destroy(e);
	inart_estimator_anomalies(NULL, &an);
	assert_int_equal(an.went_back + an.restarts + an.jumps + an.inconsistent, 0);
	inart_topo_destroy(t);
}

static void test_silent_and_clamp(void **state)
{
	struct inart_topo *t = line();
	struct inart_estimator *e = est(t, 0);
	struct inart_est_anomalies an;
	struct inart_port_sample p[2] = {{0}};
	int e0 = tu_find(t, "e0"), e1 = tu_find(t, "e1");

	assert_int_equal(inart_estimator_silent(e, 0.0), e0); /* never sampled */
	assert_int_equal(inart_estimator_feed(e, e0, 1.0, p, 2), 0);
	assert_int_equal(inart_estimator_feed(e, e1, 1.0, p, 2), 0);
	assert_int_equal(inart_estimator_silent(e, 1.3), -1);
	assert_int_equal(inart_estimator_feed(e, e0, 1.4, p, 2), 0);
	assert_int_equal(inart_estimator_silent(e, 1.34), -1);
	assert_int_equal(inart_estimator_silent(e, 1.5), e1); /* 0.5 s > 0.35 s */
	/* 30 Gbit/s on a 10 Gbit/s link: clamped to 95% */
	p[0].rx_bytes = (uint64_t)(0.5 * 30e9 / 8);
	assert_int_equal(inart_estimator_feed(e, e1, 1.5, p, 2), 0);
	assert_true(fabs(inart_estimator_bg(e)[arc(t, "e0", "e1")] - 9.5) < 1e-9);
	/* 50 Gbit/s (over 4x the capacity): a counter jump, not a load */
	p[0].rx_bytes += (uint64_t)(1.0 * 50e9 / 8);
	assert_int_equal(inart_estimator_feed(e, e1, 2.5, p, 2), 0);
	assert_int_equal(inart_estimator_resets(e), 1);
	inart_estimator_anomalies(e, &an);
	assert_int_equal(an.jumps, 1);
	assert_int_equal(an.went_back + an.restarts + an.inconsistent, 0);
	assert_true(fabs(inart_estimator_bg(e)[arc(t, "e0", "e1")] - 9.5) < 1e-9);
	/* bad calls */
	assert_int_equal(inart_estimator_feed(e, e1, 2.5, p, 2), -EINVAL); /* same time */
	assert_int_equal(inart_estimator_feed(e, e1, 3.0, p, 1), -EINVAL); /* port count */
	assert_int_equal(inart_estimator_feed(e, tu_find(t, "h0"), 3.0, p, 1), -EINVAL);
	assert_int_equal(inart_estimator_feed(NULL, e1, 3.0, p, 2), -EINVAL);
	inart_estimator_destroy(e);
	inart_estimator_destroy(NULL);
	inart_topo_destroy(t);
}

/* A deployment that numbers e1's ports the other way round: its port 1
 * faces e0.  A numbering that is not 0..degree-1 once each is refused. */
static void test_port_map(void **state)
{
	struct inart_topo *t = line();
	struct inart_est_opt o;
	struct inart_estimator *e;
	struct inart_port_sample p[2] = {{0}};
	int port[8], e1 = tu_find(t, "e1"), a_in = arc(t, "e0", "e1");
	int a_e1e0 = arc(t, "e1", "e0"), a_e1h1 = arc(t, "e1", "h1");

	for (int a = 0; a < inart_topo_n_arcs(t); a++)
		port[a] = t->nodes[t->arcs[a].from].kind == INART_NODE_SWITCH ? 0 : -1;
	port[arc(t, "e0", "h0")] = 0;
	port[arc(t, "e0", "e1")] = 1;
	port[a_e1e0] = 1;
	port[a_e1h1] = 0;
	inart_est_opt_default(&o);
	o.tau_s = 0;
	e = inart_estimator_create(t, &o, port);
	assert_non_null(e);
	assert_int_equal(inart_estimator_feed(e, e1, 1.0, p, 2), 0);
	p[1].rx_bytes = 2e9 / 8; /* port 1: from e0 */
	assert_int_equal(inart_estimator_feed(e, e1, 2.0, p, 2), 0);
	assert_true(fabs(inart_estimator_bg(e)[a_in] - 2.0) < 1e-6);
	inart_estimator_destroy(e);
	port[a_e1h1] = 1; /* twice port 1 */
	assert_null(inart_estimator_create(t, &o, port));
	assert_int_equal(errno, EINVAL);
	inart_topo_destroy(t);
}

/* The switch's own clock times the intervals: replies that arrive late or
 * early (now_s jitters by up to 80 ms) give the exact rate; a clock that
 * goes back (a restart) starts a new baseline. */
static void test_switch_clock(void **state)
{
	struct inart_topo *t = line();
	struct inart_estimator *e = est(t, 0);
	struct inart_est_anomalies an;
	struct inart_port_sample p[2] = {{0}};
	const double jitter[5] = {0, 0.08, 0.01, 0.07, 0.0};
	int v = tu_find(t, "e1"), a = arc(t, "e0", "e1");

	for (int i = 0; i < 5; i++) {
		p[0].rx_bytes = (uint64_t)(i * 0.1 * 3e9 / 8); /* 3 Gbit/s by the switch's clock */
		assert_int_equal(
		    inart_estimator_feed_at(e, v, 10.0 + 0.1 * i + jitter[i], 0.1 * i, p, 2), 0);
		if (i > 0)
			assert_true(fabs(inart_estimator_bg(e)[a] - 3.0) < 1e-6);
	}
	p[0].rx_bytes = 5; /* restarted: its clock and counters from 0 */
	assert_int_equal(inart_estimator_feed_at(e, v, 11.0, 0.05, p, 2), 0);
	assert_int_equal(inart_estimator_resets(e), 1);
	inart_estimator_anomalies(e, &an);
	assert_int_equal(an.restarts, 1);
	assert_int_equal(an.went_back + an.jumps + an.inconsistent, 0);
	assert_true(fabs(inart_estimator_bg(e)[a] - 3.0) < 1e-6);
	inart_estimator_destroy(e);
	inart_topo_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_which_counter), cmocka_unit_test(test_smoothing),
	    cmocka_unit_test(test_backwards),	  cmocka_unit_test(test_silent_and_clamp),
	    cmocka_unit_test(test_port_map),	  cmocka_unit_test(test_switch_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
