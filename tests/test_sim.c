/*
 * test_sim: the simulated fabric's pieces (its event queue: test_sim_evq).
 * Link timing (serialization + propagation exact to the picosecond,
 * back-to-back frames, store-and-forward through a switch with different
 * rates), drop-tail queues, loss /
 * duplication / reordering statistics and their reproducibility per seed,
 * host stack delivery and drops, a switch failure window.
 */
#include <errno.h>
#include <stdint.h>

#include "testutil.h"

#include "cp/model/plan.h"
#include "bridge/install.h"
#include "dp/pkt.h"
#include "sim/sim.h"

/* Recorded deliveries. */
struct tap {
	int n;
	int arc[20000];
	uint64_t at[20000];
	uint16_t id[20000]; /* first payload bytes: frame number */
};

static void tap_fn(void *ctx, int arc, uint64_t at_ps, const uint8_t *frame, size_t len)
{
	struct tap *tp = ctx;

	if (tp->n < 20000) {
		tp->arc[tp->n] = arc;
		tp->at[tp->n] = at_ps;
		tp->id[tp->n] = len >= 44 ? (uint16_t)(frame[42] << 8 | frame[43]) : 0;
		tp->n++;
	}
}

/* h0 - e0 - h1 with a one-job plan (worker h0, PS h1, no INA) installed, so
 * e0 has routes. */
struct net {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	struct inart_install *in;
	struct inart_sim *s;
	int h0, h1, e0;
};

static void net_up(struct net *n, const char *links, const struct inart_sim_opt *o)
{
	struct inart_err err;
	struct inart_err why = {{0}};
	int path[3];

	n->t = tu_topo(links, "");
	n->js = tu_jobs1(n->t, "h0", "h1", 1e6);
	n->h0 = inart_topo_find(n->t, "h0");
	n->h1 = inart_topo_find(n->t, "h1");
	n->e0 = inart_topo_find(n->t, "e0");
	n->p = inart_plan_create(n->js, "hand");
	n->p->jobs[0].split[0] = 1;
	path[0] = n->h0;
	path[1] = n->e0;
	path[2] = n->h1;
	assert_int_equal(inart_plan_add_flow(n->p, 0, n->h0, n->h1, n->h1, path, 3), 0);
	n->d = inart_deploy_auto(n->t);
	if (inart_install_build(n->t, n->js, n->p, n->d, NULL, &n->in, &err) < 0)
		fail_msg("install: %s", err.msg);
	n->s = inart_sim_create(n->t, n->d, o);
	assert_non_null(n->s);
	if (inart_sim_install(n->s, n->in, &why) < 0)
		fail_msg("sim install: %s", why.msg);
}

static void net_down(struct net *n)
{
	inart_sim_destroy(n->s);
	inart_install_destroy(n->in);
	inart_deploy_destroy(n->d);
	inart_plan_destroy(n->p);
	inart_jobs_destroy(n->js);
	inart_topo_destroy(n->t);
}

/* A UDP frame h0 -> h1 of `len` bytes in all, numbered id. */
static size_t frame_h0h1(const struct net *n, uint8_t *f, size_t len, uint16_t id, uint16_t dport)
{
	uint8_t payload[1500] = {0};
	int e = inart_topo_arc_between(n->t, n->e0, n->h0);

	payload[0] = (uint8_t)(id >> 8);
	payload[1] = (uint8_t)id;
	return inart_pkt_build_udp(f, 1518, n->d->mac[n->h0], n->d->port_mac[e], n->d->ip[n->h0],
				   n->d->ip[n->h1], 5000, dport, payload, len - 42);
}

static void test_link_timing(void **state)
{
	struct inart_sim_opt o;
	struct net n;
	static struct tap tp;
	uint8_t f[1518];
	int a01, a12;
	struct inart_sim_link_stats ls;
	struct inart_sim_host_stats hs;

	(void)state;
	inart_sim_opt_default(&o);
	o.prop_ns = 1000;
	o.overhead_bytes = 24;
	/* h0-e0 at 1 Gbit/s, e0-h1 at 10 Gbit/s (capacities scaled by 0.1) */
	o.gbps_scale = 0.1;
	net_up(&n, "h0-e0:10 e0-h1:100", &o);
	memset(&tp, 0, sizeof(tp));
	inart_sim_set_tap(n.s, tap_fn, &tp);
	a01 = inart_topo_arc_between(n.t, n.h0, n.e0);
	a12 = inart_topo_arc_between(n.t, n.e0, n.h1);
	/* three 100-byte frames back to back at t = 0 */
	for (uint16_t i = 0; i < 3; i++) {
		frame_h0h1(&n, f, 100, i, 9999);
		assert_int_equal(inart_sim_inject(n.s, a01, f, 100), 0);
	}
	inart_sim_run(n.s, 1000000);
	/* (100 + 24) * 8 bits: 992 ns at 1 Gbit/s, 99.2 ns at 10 Gbit/s */
	assert_int_equal(tp.n, 6);
	for (int i = 0; i < 3; i++) {
		uint64_t first = 992000ull * (uint64_t)(i + 1) + 1000000ull;
		int k0 = -1, k1 = -1;

		for (int k = 0; k < tp.n; k++) {
			if (tp.id[k] == i && tp.arc[k] == a01)
				k0 = k;
			if (tp.id[k] == i && tp.arc[k] == a12)
				k1 = k;
		}
		assert_true(k0 >= 0 && k1 >= 0);
		assert_int_equal(tp.at[k0], first);
		/* store and forward: the switch sends when the last bit is in;
		 * the fast link is idle again by then */
		assert_int_equal(tp.at[k1], first + 99200ull + 1000000ull);
	}
	inart_sim_link_stats(n.s, a01, &ls);
	assert_int_equal(ls.tx_pkts, 3);
	assert_int_equal(ls.tx_bytes, 300);
	assert_int_equal(ls.busy_ps, 3 * 992000ull);
	assert_int_equal(ls.delivered, 3);
	/* h1 got frames for port 9999: not INA traffic, dropped by its stack */
	inart_sim_host_stats(n.s, n.h1, &hs);
	assert_int_equal(hs.rx, 3);
	assert_int_equal(hs.dropped, 3);
	assert_int_equal(inart_sim_now(n.s), 1000000);
	net_down(&n);
}

static void test_queue_drop(void **state)
{
	struct inart_sim_opt o;
	struct net n;
	uint8_t f[1518];
	int a12, a01, ok = 0, dropped = 0;
	struct inart_sim_link_stats ls;

	(void)state;
	inart_sim_opt_default(&o);
	o.queue_pkts = 16;
	net_up(&n, "h0-e0 e0-h1", &o);
	a12 = inart_topo_arc_between(n.t, n.e0, n.h1);
	a01 = inart_topo_arc_between(n.t, n.h0, n.e0);
	frame_h0h1(&n, f, 1000, 1, 9999);
	for (int i = 0; i < 40; i++) {
		int rc = inart_sim_inject(n.s, a12, f, 1000);

		if (rc == 0)
			ok++;
		else if (rc == -ENOBUFS)
			dropped++;
	}
	assert_int_equal(ok, 16);
	assert_int_equal(dropped, 24);
	inart_sim_link_stats(n.s, a12, &ls);
	assert_int_equal(ls.queue_drops, 24);
	/* once one frame's serialization ended, one more fits: 1024 bytes at
	 * 100 Gbit/s = 81.92 ns */
	inart_sim_run(n.s, 82);
	assert_int_equal(inart_sim_inject(n.s, a12, f, 1000), 0);
	assert_int_equal(inart_sim_inject(n.s, a12, f, 1000), -ENOBUFS);
	/* hosts never drop their own frames */
	for (int i = 0; i < 40; i++)
		assert_int_equal(inart_sim_inject(n.s, a01, f, 1000), 0);
	net_down(&n);
}

/* Loss, duplication and reordering on h0 -> e0, 10000 frames. */
static void faults_run(uint64_t seed, double loss, double dup, double reorder,
		       struct inart_sim_link_stats *ls, int *inversions, uint64_t *digest)
{
	struct inart_sim_opt o;
	struct net n;
	static struct tap tp;
	uint8_t f[1518];
	int a01;

	inart_sim_opt_default(&o);
	o.seed = seed;
	o.reorder_ns = 5000;
	net_up(&n, "h0-e0 e0-h1", &o);
	a01 = inart_topo_arc_between(n.t, n.h0, n.e0);
	inart_sim_arc_faults(n.s, a01, loss, dup, reorder);
	memset(&tp, 0, sizeof(tp));
	inart_sim_set_tap(n.s, tap_fn, &tp);
	for (int i = 0; i < 10000; i++) {
		frame_h0h1(&n, f, 100, (uint16_t)i, 9999);
		assert_int_equal(inart_sim_inject(n.s, a01, f, 100), 0);
	}
	inart_sim_run(n.s, 100000000);
	inart_sim_link_stats(n.s, a01, ls);
	*inversions = 0;
	*digest = 1469598103934665603ull;
	for (int k = 0, last = -1; k < tp.n; k++) {
		if (tp.arc[k] != a01)
			continue;
		if (tp.id[k] < last)
			(*inversions)++;
		last = tp.id[k];
		*digest = (*digest ^ tp.id[k]) * 1099511628211ull;
		*digest = (*digest ^ tp.at[k]) * 1099511628211ull;
	}
	net_down(&n);
}

static void test_fault_stats(void **state)
{
	struct inart_sim_link_stats a, b, c;
	int inv_a, inv_b, inv_c;
	uint64_t dig_a, dig_b, dig_c;

	(void)state;
	/* loss 10%: binomial(10000, 0.1), sd 30 */
	faults_run(1, 0.1, 0, 0, &a, &inv_a, &dig_a);
	assert_int_equal(a.tx_pkts, 10000);
	assert_in_range(a.lost, 850, 1150);
	assert_int_equal(a.delivered, 10000 - a.lost);
	assert_int_equal(inv_a, 0);
	/* same seed: the very same run; another seed: another one */
	faults_run(1, 0.1, 0, 0, &b, &inv_b, &dig_b);
	assert_int_equal(b.lost, a.lost);
	assert_int_equal(dig_b, dig_a);
	faults_run(2, 0.1, 0, 0, &c, &inv_c, &dig_c);
	assert_in_range(c.lost, 850, 1150);
	assert_true(dig_c != dig_a);

	/* duplication 5% (of the frames not lost): delivered = sent - lost + dup */
	faults_run(3, 0.02, 0.05, 0, &a, &inv_a, &dig_a);
	assert_in_range(a.lost, 120, 280);
	assert_in_range(a.duplicated, 380, 620);
	assert_int_equal(a.delivered, 10000 - a.lost + a.duplicated);

	/* reordering 10%: delayed frames arrive after later ones */
	faults_run(4, 0, 0, 0.1, &a, &inv_a, &dig_a);
	assert_in_range(a.reordered, 850, 1150);
	assert_int_equal(a.delivered, 10000);
	assert_true(inv_a > 500);
	(void)inv_b;
	(void)inv_c;
}

static void test_fail_window(void **state)
{
	struct inart_sim_opt o;
	struct net n;
	static struct tap tp;
	uint8_t f[1518];
	int a01, a12, got = 0;

	(void)state;
	inart_sim_opt_default(&o);
	net_up(&n, "h0-e0 e0-h1", &o);
	a01 = inart_topo_arc_between(n.t, n.h0, n.e0);
	a12 = inart_topo_arc_between(n.t, n.e0, n.h1);
	memset(&tp, 0, sizeof(tp));
	inart_sim_set_tap(n.s, tap_fn, &tp);
	assert_int_equal(inart_sim_fail_switch(n.s, n.h0, 0, 0), -EINVAL);
	/* e0 down from 10 us to 30 us: frames arriving then are lost */
	assert_int_equal(inart_sim_fail_switch(n.s, n.e0, 10000, 20000), 0);
	for (int i = 0; i < 5; i++) {
		frame_h0h1(&n, f, 100, (uint16_t)i, 9999);
		inart_sim_run(n.s, (uint64_t)i * 10000); /* sent at 0, 10, 20, 30, 40 us */
		assert_int_equal(inart_sim_inject(n.s, a01, f, 100), 0);
	}
	inart_sim_run(n.s, 1000000);
	for (int k = 0; k < tp.n; k++)
		if (tp.arc[k] == a12)
			got |= 1 << tp.id[k];
	/* sent at 10 and 20 us: arrive at 11 and 21 us, inside the window */
	assert_int_equal(got, 0x19);
	net_down(&n);
}

static void test_create_errors(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h0-e1 e0-e1", "");
	struct inart_deploy *d = inart_deploy_auto(t);
	struct inart_sim_opt o;

	(void)state;
	errno = 0;
	assert_null(inart_sim_create(t, d, NULL)); /* dual-homed host */
	assert_int_equal(errno, EINVAL);
	inart_deploy_destroy(d);
	inart_topo_destroy(t);
	t = tu_topo("h0-e0", "");
	d = inart_deploy_auto(t);
	inart_sim_opt_default(&o);
	o.queue_pkts = 0;
	assert_null(inart_sim_create(t, d, &o));
	inart_sim_destroy(NULL);
	inart_deploy_destroy(d);
	inart_topo_destroy(t);
}

/* A switch configuration the core refuses: the install names the switch
 * and the reason; the same install with the configuration repaired works. */
static void test_install_refused(void **state)
{
	struct inart_sim_opt o;
	struct net n;
	struct inart_err why = {{0}};
	int pool;

	(void)state;
	inart_sim_opt_default(&o);
	net_up(&n, "h0-e0 e0-h1", &o);
	assert_true(n.in->n_switches == 1);
	pool = n.in->sw[0].cfg.pool_slots;
	n.in->sw[0].cfg.pool_slots = INART_SW_MAX_POOL_SLOTS + 1;
	assert_int_equal(inart_sim_install(n.s, n.in, &why), -EINVAL);
	assert_string_equal(why.msg, "switch 'e0': pool_slots 16777217 not in 0..16777216");
	n.in->sw[0].cfg.pool_slots = pool;
	assert_int_equal(inart_sim_install(n.s, n.in, &why), 0);
	net_down(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_link_timing),	  cmocka_unit_test(test_queue_drop),
	    cmocka_unit_test(test_fault_stats),	  cmocka_unit_test(test_fail_window),
	    cmocka_unit_test(test_create_errors), cmocka_unit_test(test_install_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
