/* Tests of the emulator's pure parts: names, rates, addresses and scripts of
 * an emulated network (net), the limits, scales and header factor (scale),
 * and the report (JSON keys the scripts rely on, the targets, the table). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bridge/deploy.h"
#include "bridge/install.h"

#include "cp/model/gen.h"
#include "cp/model/jobs.h"
#include "emu/net.h"
#include "emu/report.h"
#include "emu/run.h"
#include "emu/scale.h"

static struct inart_topo *ft4(void)
{
	struct inart_topo *t = inart_gen_fattree(4, NULL, NULL);

	assert_non_null(t);
	return t;
}

static void test_prefix(void **state)
{
	(void)state;
	assert_true(inart_emu_prefix_ok("a"));
	assert_true(inart_emu_prefix_ok("123456789"));
	assert_false(inart_emu_prefix_ok("1234567890"));
	assert_false(inart_emu_prefix_ok(""));
	assert_false(inart_emu_prefix_ok(NULL));
	assert_false(inart_emu_prefix_ok("A"));
	assert_false(inart_emu_prefix_ok("a-b"));
}

static void test_net(void **state)
{
	struct inart_topo *t = ft4();
	struct inart_emu_net_opt o;
	struct inart_emu_net *n;
	struct inart_err err = {{0}};
	json_t *d;
	int h0 = inart_topo_find(t, "h0"), e0 = inart_topo_find(t, "e0"), a;

	(void)state;
	inart_emu_net_opt_default(&o);
	o.prefix = "Bad!";
	assert_int_equal(inart_emu_net_create(t, &o, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "prefix"));
	o.prefix = "abc123";
	o.rate_scale = 2e-4;
	o.window = 16;
	o.retx_ms = 200;
	o.pace_scale = 2.1e-4;
	o.pace_lead_ms = 10;
	assert_int_equal(inart_emu_net_create(t, &o, &n, &err), 0);
	assert_string_equal(n->ns[h0], "inart-emu-abc123-h0");
	assert_string_equal(n->dir, "/run/inart-emu/abc123");
	a = inart_topo_arc_between(t, e0, h0);
	/* every interface name carries the prefix and fits IFNAMSIZ */
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		assert_true(strncmp(n->ifname[e], "eabc123-p", 9) == 0);
		assert_true(strlen(n->ifname[e]) < 16);
		assert_true(fabs(n->tbf[e].bps - 20e6) < 1);
		assert_true(n->tbf[e].limit >= 16 << 20);
	}
	assert_int_equal(inart_emu_net_port(n, a), 0);
	assert_string_equal(n->ifname[a], "eabc123-p0");
	/* scripts: namespaces, veth pairs with MACs, tbf, host address and route */
	assert_non_null(strstr(n->root_script, "netns add inart-emu-abc123-c3\n"));
	assert_non_null(strstr(n->root_script, "link add name eabc123-p0 address 02:00:00:00:00:00 "
					       "netns inart-emu-abc123-h0 type veth peer name"));
	assert_non_null(strstr(n->node_script[e0], "tbf rate 20000000bit"));
	assert_non_null(strstr(n->node_script[h0], "addr add 10.0.0.1/32 dev eabc123-p0"));
	assert_non_null(strstr(n->node_script[h0], "route add 10.0.0.0/8 via"));
	assert_non_null(strstr(n->node_script[h0], "nud permanent"));
	assert_non_null(strstr(n->node_script[h0], "ethtool -K eabc123-p0 tx off"));
	assert_null(strstr(n->node_script[e0], "ethtool"));
	assert_non_null(strstr(n->node_script[e0], "disable_ipv6"));
	/* the deployment: control sockets in the run directory, data-plane settings */
	d = json_loads(n->deploy_json, 0, NULL);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(d, "nodes"), "e0"), "ctl")),
			    "/run/inart-emu/abc123/e0.sock");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(d, "dataplane"), "slots_per_tree")),
	    16);
	json_decref(d);
	/* ... which the workers and the install read back (pace_scale) */
	{
		struct inart_install_opt io;

		inart_install_opt_default(&io);
		assert_int_equal(inart_deploy_dataplane_parse(
				     n->deploy_json, strlen(n->deploy_json), "d", &io, &err),
				 0);
		assert_int_equal(io.slots_per_tree, 16);
		assert_true(fabs(io.pace_scale - 2.1e-4) < 1e-12);
		assert_true(io.retx_timeout_ns == 200000000ull);
		/* the schedule: the lead and the plan's rates on this network */
		assert_true(io.pace_lead_ns == 10000000ull);
		assert_true(fabs(io.rate_scale - 2e-4) < 1e-12);
		assert_int_equal(inart_deploy_dataplane_parse("{\"dataplane\":{\"rate_scale\":0}}",
							      30, "d", &io, &err),
				 -EINVAL);
		assert_non_null(strstr(err.msg, "rate_scale"));
		assert_int_equal(inart_deploy_dataplane_parse(
				     "{\"dataplane\":{\"pace_lead_ms\":-1}}", 33, "d", &io, &err),
				 -EINVAL);
		assert_non_null(strstr(err.msg, "pace_lead_ms"));
		assert_int_equal(inart_deploy_dataplane_parse("{\"dataplane\":{\"pace_scale\":-1}}",
							      31, "d", &io, &err),
				 -EINVAL);
		assert_non_null(strstr(err.msg, "pace_scale"));
	}
	inart_emu_net_destroy(n);
	/* --pace 0: the deployment says "not paced", not the installation's
	   default (1.1 x the unscaled rates) */
	o.pace_scale = 0;
	assert_int_equal(inart_emu_net_create(t, &o, &n, &err), 0);
	{
		struct inart_install_opt io;

		inart_install_opt_default(&io);
		assert_true(io.pace_scale > 0);
		assert_int_equal(inart_deploy_dataplane_parse(
				     n->deploy_json, strlen(n->deploy_json), "d", &io, &err),
				 0);
		assert_true(io.pace_scale == 0);
	}
	inart_emu_net_destroy(n);
	inart_emu_net_destroy(NULL);
	inart_topo_destroy(t);
}

static void test_check(void **state)
{
	struct inart_topo *t = ft4(), *big;
	struct inart_emu_limits l;
	struct inart_err err = {{0}};

	(void)state;
	inart_emu_limits_default(&l, 2);
	assert_int_equal(l.max_nodes, 80);
	assert_int_equal(inart_emu_check(t, 2e-4, &l, &err), 0);
	/* 100 Gbit/s x 5e-6 = 0.5 Mbit/s */
	assert_int_equal(inart_emu_check(t, 5e-6, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "below the 1 Mbit/s"));
	assert_non_null(strstr(err.msg, "link '"));
	big = inart_gen_fattree(8, NULL, NULL);
	assert_int_equal(inart_emu_check(big, 2e-4, &l, &err), -E2BIG);
	assert_non_null(strstr(err.msg, "208 namespaces"));
	assert_non_null(strstr(err.msg, "at most 80"));
	inart_topo_destroy(big);
	inart_topo_destroy(t);
}

static void test_scale(void **state)
{
	struct inart_topo *t = ft4();
	struct inart_jobs *js = inart_jobs_create(), *s;
	int w[] = {0, 1, 2}, p[] = {3};
	long v[2];

	(void)state;
	assert_int_equal(inart_jobs_add(js, "j0", w, 3, p, 1, 1000, NULL, NULL), 0);
	assert_int_equal(inart_jobs_add(js, "j1", w, 2, p, 1, 3e6, NULL, NULL), 1);
	/* 1514-byte frames carry 358 values: 1514 / 1432 */
	assert_true(fabs(inart_emu_header_factor(js) - 1514.0 / 1432.0) < 1e-12);
	inart_emu_values(js, 0.01, v);
	assert_int_equal(v[0], 3); /* 1000 * 0.01 / 4 = 2.5 -> 3 */
	assert_int_equal(v[1], 7500);
	inart_emu_values(js, 1e-9, v);
	assert_int_equal(v[0], 1);
	s = inart_emu_scaled_jobs(js, v);
	assert_non_null(s);
	assert_true(s->jobs[1].gradient_bytes == 4.0 * (double)v[1]);
	assert_string_equal(s->jobs[1].id, "j1");
	/* 0.1 s unscaled, at r = 1e-4 and f = 1: 1 s on packets needs z = 1e-3 */
	assert_true(fabs(inart_emu_size_scale(0.1, 1, 1e-4, 1) - 1e-3) < 1e-15);
	inart_jobs_destroy(s);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* A report of two synthetic runs: JSON keys, reduction, targets. */
static void test_report(void **state)
{
	struct inart_topo *t = ft4();
	struct inart_jobs *js = inart_jobs_create();
	int w[] = {0, 1}, p[] = {3};
	struct inart_emu_result r[2];
	struct inart_emu_row rows[2];
	struct inart_emu_report rep;
	long values[] = {1000};
	double it0[] = {1.0, 1.1, 0.9}, it1[] = {2.0, 2.1, 2.2};
	double *its[] = {it0, it1};
	char *s;
	json_t *j, *run;

	(void)state;
	assert_int_equal(inart_jobs_add(js, "j0", w, 2, p, 1, 4000, NULL, NULL), 0);
	memset(r, 0, sizeof(r));
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 2; i++) {
		r[i].finished = r[i].exact = 1;
		r[i].iters = 3;
		r[i].n_jobs = 1;
		r[i].n_arcs = inart_topo_n_arcs(t);
		r[i].iter_s = its[i];
		r[i].job_iter_s = its[i];
		r[i].arc_bytes = calloc((size_t)r[i].n_arcs, sizeof(double));
		r[i].arc_known = calloc((size_t)r[i].n_arcs, sizeof(int));
		r[i].arc_qdrops = calloc((size_t)r[i].n_arcs, sizeof(uint64_t));
		rows[i].r = &r[i];
		rows[i].to_unscaled = 0.01;
	}
	r[1].cpu_bound = 1;
	snprintf(r[1].cpu_why, sizeof(r[1].cpu_why), "the machine was 99%% busy");
	rows[0].algorithm = "inart";
	rows[0].model_s = 0.01;
	rows[1].algorithm = "ps";
	rows[1].model_s = 0.02;
	memset(&rep, 0, sizeof(rep));
	rep.t = t;
	rep.js = js;
	rep.rows = rows;
	rep.n_rows = 2;
	rep.rate_scale = 1e-4;
	rep.size_scale = 1e-3;
	rep.header_factor = 1.0;
	rep.values = values;
	rep.iters = 3;
	rep.cores = 2;
	/* measured: medians 1.0 and 2.1 scaled -> 0.010 and 0.021 s */
	assert_true(fabs(inart_emu_row_measured(&rows[0]) - 0.010) < 1e-12);
	assert_true(fabs(inart_emu_row_measured(&rows[1]) - 0.021) < 1e-12);
	s = inart_emu_report_json(&rep);
	j = json_loads(s, 0, NULL);
	assert_non_null(j);
	run = json_array_get(json_object_get(j, "runs"), 0);
	assert_string_equal(json_string_value(json_object_get(run, "algorithm")), "inart");
	assert_true(fabs(json_real_value(json_object_get(run, "predicted_comm_s")) - 0.01) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(run, "measured_comm_s")) - 0.01) < 1e-12);
	assert_true(json_is_true(json_object_get(run, "exact")));
	assert_true(json_is_false(json_object_get(run, "cpu_bound")));
	run = json_array_get(json_object_get(j, "runs"), 1);
	assert_true(json_is_true(json_object_get(run, "cpu_bound")));
	/* reduction vs ps: measured 1 - 0.010 / 0.021, predicted 0.5 */
	assert_true(fabs(json_real_value(json_object_get(
			     json_array_get(json_object_get(j, "reductions"), 0), "measured")) -
			 (1 - 0.010 / 0.021)) < 1e-9);
	json_decref(j);
	free(s);
	s = inart_emu_report_table(&rep);
	assert_non_null(strstr(s, "PASS inart: measured within 15%"));
	assert_non_null(strstr(s, "info ps: measured/predicted 1.050, not a link-bound run"));
	/* a CPU-bound baseline: the reduction is not a result either */
	assert_non_null(strstr(s, "info inart's measured reduction"));
	free(s);
	r[1].cpu_bound = 0;
	s = inart_emu_report_table(&rep);
	assert_non_null(strstr(s, "PASS ps: measured within 15%"));
	/* measured 1 - 10/21 = 52.4% against predicted 50% */
	assert_non_null(strstr(s, "PASS inart's measured reduction"));
	free(s);
	r[0].iter_s[0] = r[0].iter_s[1] = r[0].iter_s[2] = 1.9; /* 19 ms: 9.5% < 80% of 50% */
	s = inart_emu_report_table(&rep);
	assert_non_null(strstr(s, "MISS inart: measured within 15%"));
	assert_non_null(strstr(s, "MISS inart's measured reduction"));
	free(s);
	r[0].iter_s[0] = 1.0;
	r[0].iter_s[1] = 1.1;
	r[0].iter_s[2] = 0.9;
	s = inart_emu_report_csv(&rep);
	assert_non_null(strstr(s, "inart,0.01,0.01,0.01,1.000000,true,false"));
	free(s);
	for (int i = 0; i < 2; i++) {
		free(r[i].arc_bytes);
		free(r[i].arc_known);
		free(r[i].arc_qdrops);
	}
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The CPU-bound verdict (issue 24): a run slower than predicted whose CPU
 * time per iteration would need more cores than the machine has at the
 * predicted pace is CPU-bound, though it used fewer cores as it ran (the
 * k=8 fat-tree: 1.45 of 2 cores, 2.3x slower than predicted); a run at
 * its prediction with the same cores is not. */
static void verdict_of(struct inart_emu_result *r, double cores_used, double demand)
{
	memset(r, 0, sizeof(*r));
	r->cpu_total = cores_used;
	r->predicted_iter_s = 0.5;
	r->demand_cores = demand;
	r->host_busy = 0.6;
	inart_emu_cpu_verdict(r, 2);
}

static void test_cpu_verdict(void **state)
{
	struct inart_emu_result r;

	(void)state;
	verdict_of(&r, 1.45, 1.45 * 2.34);
	assert_true(r.cpu_bound);
	assert_non_null(strstr(r.cpu_why, "3.39 of 2 cores at the predicted 0.500 s"));
	/* with the switches' frames: the limit named as a frame rate */
	verdict_of(&r, 1.45, 3.8);
	r.us_per_frame = 19.0;
	inart_emu_cpu_verdict(&r, 2);
	assert_non_null(strstr(r.cpu_why, "(200000 frames/s through the switches at that pace, "
					  "19.0 us of CPU each)"));
	verdict_of(&r, 1.45, 1.5);
	assert_false(r.cpu_bound);
	assert_string_equal(r.cpu_why, "");
	/* no prediction given: the other reasons only */
	r.demand_cores = 0;
	r.predicted_iter_s = 0;
	r.cpu_total = 1.8;
	inart_emu_cpu_verdict(&r, 2);
	assert_true(r.cpu_bound);
	assert_string_equal(r.cpu_why, "the run's processes used 1.80 of 2 cores");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prefix), cmocka_unit_test(test_net),
	    cmocka_unit_test(test_check),  cmocka_unit_test(test_scale),
	    cmocka_unit_test(test_report), cmocka_unit_test(test_cpu_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
