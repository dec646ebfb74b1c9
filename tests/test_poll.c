/*
 * test_poll: the controller's counter rounds (ctl/poll.h): the ports of a
 * `stats` reply (missing or negative counters refused), a round against a
 * fake switch on a real control socket (a server in a thread) feeding the
 * estimator -- `port_counters` over one kept connection, or `stats` when
 * the switch refuses it --, and a switch that stops answering: counted,
 * named, silent.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "ctlproto/ctlmsg.h"
#include "common/clock.h"
#include "ctl/poll.h"
#include "ctlproto/ctlsock.h"
#include "testutil.h"

static void test_parse(void **state)
{
	struct inart_port_sample s[4];
	struct inart_err err = {{0}};
	json_t *o =
	    json_loads("{\"ports\": [{\"rx_bytes\": 10, \"tx_bytes\": 20, \"rx_ina_bytes\": "
		       "5, \"tx_ina_bytes\": 6, \"name\": \"x\"}, {\"rx_bytes\": 1, "
		       "\"tx_bytes\": 2, \"rx_ina_bytes\": 0, \"tx_ina_bytes\": 0}]}",
		       0, NULL);

	assert_int_equal(inart_poll_parse_ports(o, s, 4, &err), 2);
	assert_int_equal(s[0].rx_bytes, 10);
	assert_int_equal(s[0].tx_ina_bytes, 6);
	assert_int_equal(s[1].tx_bytes, 2);
	assert_int_equal(inart_poll_parse_ports(o, s, 1, &err), -EINVAL); /* too many */
	json_object_set_new(json_array_get(json_object_get(o, "ports"), 1), "tx_bytes",
			    json_integer(-1));
	assert_int_equal(inart_poll_parse_ports(o, s, 4, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "ports[1]: 'tx_bytes'"));
	json_object_del(json_array_get(json_object_get(o, "ports"), 0), "rx_ina_bytes");
	assert_int_equal(inart_poll_parse_ports(o, s, 4, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "ports[0]: 'rx_ina_bytes'"));
	json_decref(o);
	o = json_object();
	assert_int_equal(inart_poll_parse_ports(o, s, 4, &err), -EINVAL);
	json_decref(o);
}

/* A fake switch e1 with two ports whose port 0 receives 1 MB per request,
 * a quarter of it INA; it answers port_counters and stats alike, or (old)
 * refuses port_counters as an older switchd does. */
struct fake {
	struct inart_ctlsrv *srv;
	volatile int stop;
	int old;
	int n_ports, n_stats; /* requests of each kind seen */
	uint64_t rx;
};

static char *stats_handler(void *ctx, const char *body, size_t len)
{
	struct fake *f = ctx;
	json_t *d, *ports;
	int pc = memmem(body, len, "port_counters", 13) != NULL;

	f->n_ports += pc;
	f->n_stats += !pc;
	if (pc && f->old)
		return inart_ctl_reply_err("unknown op 'port_counters'");
	d = json_object();
	ports = json_array();
	f->rx += 1000000;
	for (int k = 0; k < 2; k++)
		json_array_append_new(ports, json_pack("{s:I, s:I, s:I, s:I}", "rx_bytes",
						       (json_int_t)(k ? 0 : f->rx), "tx_bytes",
						       (json_int_t)0, "rx_ina_bytes",
						       (json_int_t)(k ? 0 : f->rx / 4),
						       "tx_ina_bytes", (json_int_t)0));
	json_object_set_new(d, "ports", ports);
	return inart_ctl_reply_ok(d);
}

static void *srv_thread(void *arg)
{
	struct fake *f = arg;

	while (!f->stop) {
		struct pollfd p = {inart_ctlsrv_fd(f->srv), POLLIN, 0};

		if (poll(&p, 1, 20) > 0)
			inart_ctlsrv_service(f->srv);
	}
	return NULL;
}

static void test_round_of(int old)
{
	struct inart_topo *t = tu_topo("h0-e1:10 e1-h1:10", "");
	char dir[] = "/tmp/inart-poll-XXXXXX", path[128];
	char *paths[3] = {NULL, NULL, NULL};
	struct inart_err err = {{0}};
	struct inart_est_opt eo;
	struct inart_estimator *e;
	struct inart_poller *p;
	struct fake f = {.old = old};
	pthread_t th;
	int a;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/e1.sock", dir);
	paths[tu_find(t, "e1")] = path;
	/* a switch without a socket path */
	assert_null(inart_poller_create(t, (char *[3]){NULL, NULL, NULL}, 100));
	p = inart_poller_create(t, paths, 500);
	assert_non_null(p);
	inart_est_opt_default(&eo);
	eo.tau_s = 0;
	e = inart_estimator_create(t, &eo, NULL);
	f.srv = inart_ctlsrv_open(path, stats_handler, &f, &err);
	assert_non_null(f.srv);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &f), 0);
	assert_int_equal(inart_poller_round(p, e, &err), 1);
	usleep(100000);
	assert_int_equal(inart_poller_round(p, e, &err), 1);
	assert_true(inart_estimator_ready(e));
	/* port_counters over one kept connection (an old switch: refused
	 * once, then stats) */
	assert_int_equal(inart_poller_connects(p), 1);
	assert_int_equal(f.n_ports, old ? 1 : 2);
	assert_int_equal(f.n_stats, old ? 2 : 0);
	assert_int_equal(inart_estimator_silent(e, inart_now_s()), -1);
	/* 750 kB of background in about 0.1 s: about 60 Mbit/s (timing: loose) */
	a = inart_topo_arc_between(t, tu_find(t, "h0"), tu_find(t, "e1"));
	assert_true(inart_estimator_bg(e)[a] > 0.75e6 * 8 / 1.0 / 1e9);
	assert_true(inart_estimator_bg(e)[a] < 0.75e6 * 8 / 0.09 / 1e9);
	/* the switch stops answering */
	f.stop = 1;
	pthread_join(th, NULL);
	inart_ctlsrv_close(f.srv);
	assert_int_equal(inart_poller_round(p, e, &err), 0);
	assert_int_equal(inart_poller_failures(p), 1);
	assert_non_null(strstr(err.msg, "switch 'e1'"));
	usleep(400000);
	assert_int_equal(inart_estimator_silent(e, inart_now_s()), tu_find(t, "e1"));
	inart_poller_destroy(p);
	inart_poller_destroy(NULL);
	inart_estimator_destroy(e);
	inart_topo_destroy(t);
	rmdir(dir);
}

static void test_round(void **state)
{
	(void)state;
	test_round_of(0);
	test_round_of(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
