/*
 * test_daemon: the switch daemon (daemon/switchd, --io udp: Ethernet frames
 * over loopback UDP) and the PS daemon (daemon/psd, on UDP or, as a host on
 * a switch port, frames over loopback UDP: io/ethudp) run in-process on
 * threads, without root: both answer over their real control sockets
 * (ctlproto/ctlclient), the switch's packet loop reads frames from its
 * ports (per-port counters), and both stop cleanly on inart_daemon_stop.
 *
 * A plan end to end: w0, w1 -- t0 (INA) -- p0, a plan installed through
 * the daemons' control sockets by the install path of `inart ctl install`
 * (daemon/installer: check, prepare, commit), then all-reduces from two
 * worker cores (dp/worker) on the switch's other ports (io/ethudp): the
 * sums are exact (integer values), the switch aggregated and the PS
 * completed every chunk.  Again with the switch's gate losing frames on
 * every port (dp/gate tx loss): the sums are still exact, by the
 * retransmissions the losses cost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge/install.h"
#include "common/clock.h"
#include "cp/model/load.h"
#include "ctlproto/ctlclient.h"
#include "daemon/installer.h"
#include "daemon/psd.h"
#include "daemon/switchd.h"
#include "dp/worker.h"
#include "io/ethudp.h"
#include "io/log.h"

struct run {
	pthread_t th;
	struct inart_switchd_cfg sw;
	struct inart_psd_cfg ps;
	int is_ps, rc;
	struct inart_err err;
};

static void *run_daemon(void *arg)
{
	struct run *r = arg;

	r->rc = r->is_ps ? inart_psd_run(&r->ps, &r->err) : inart_switchd_run(&r->sw, &r->err);
	return NULL;
}

/* The reply of `{"op": OP}` at path (parsed), retried while the socket is not
 * up yet. */
static json_t *call(const char *path, const char *op)
{
	char body[64], *rep = NULL;
	size_t rlen;
	json_t *j;

	snprintf(body, sizeof(body), "{\"op\": \"%s\"}", op);
	for (int i = 0; i < 200; i++) {
		struct inart_err err = {{0}};

		if (inart_ctl_call(path, body, strlen(body), &rep, &rlen, 5000, &err) == 0)
			break;
		usleep(10000);
	}
	assert_non_null(rep);
	j = json_loadb(rep, rlen, 0, NULL);
	free(rep);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "ok")));
	return j;
}

/* A UDP socket on 127.0.0.1:port connected to 127.0.0.1:peer. */
static int udp_peer(uint16_t port, uint16_t peer)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	a.sin_port = htons(peer);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Loopback UDP ports: PORTS_PER_CASE per test case from a range of this
 * process's (parallel test runs do not meet).  Switch port i is bound to
 * base + i and sends to base + PEER_OFF + i, where its host is bound. */
#define PORTS_PER_CASE 10
#define PEER_OFF 5
static uint16_t case_base(void)
{
	static int n_cases;

	return (uint16_t)(20000 + (getpid() % 1400) * 3 * PORTS_PER_CASE +
			  PORTS_PER_CASE * n_cases++);
}

/* The switch's or a host's side of switch port i ("LPORT:PPORT"). */
static void port_name(char *buf, size_t cap, uint16_t base, int i, int host)
{
	uint16_t sw = (uint16_t)(base + i), peer = (uint16_t)(base + PEER_OFF + i);

	snprintf(buf, cap, "%u:%u", host ? peer : sw, host ? sw : peer);
}

static void daemon_cfg(struct inart_daemon_cfg *dm, const char *name, const char *ctl)
{
	inart_daemon_cfg_init(dm);
	dm->name = name;
	dm->ctl = ctl;
	dm->user = NULL; /* not root anyway; as root: stay */
	dm->signals = 0;
	dm->level = INART_LOG_WARN;
}

/* Switch "t0" on n ports over loopback UDP (names: room for n). */
static void sw_cfg(struct run *r, const char *ctl, uint16_t base, int n, char (*names)[16])
{
	inart_switchd_cfg_init(&r->sw);
	daemon_cfg(&r->sw.dm, "t0", ctl);
	r->sw.afo.mode = INART_AFP_UDP;
	for (int i = 0; i < n; i++) {
		port_name(names[i], sizeof(names[i]), base, i, 0);
		r->sw.ports[i] = names[i];
	}
	r->sw.n_ports = n;
	assert_int_equal(inart_switchd_cfg_check(&r->sw, &r->err), 0);
}

static void start(struct run *r)
{
	assert_int_equal(pthread_create(&r->th, NULL, run_daemon, r), 0);
}

/* Stop both daemons; each stopped cleanly. */
static void stop(struct run *sw, struct run *ps)
{
	inart_daemon_stop = 1;
	assert_int_equal(pthread_join(sw->th, NULL), 0);
	assert_int_equal(pthread_join(ps->th, NULL), 0);
	if (sw->rc != 0 || ps->rc != 0)
		fail_msg("switch %d (%s), PS %d (%s)", sw->rc, sw->err.msg, ps->rc, ps->err.msg);
}

static void test_daemons_up_and_down(void **state)
{
	char dir[] = "/tmp/inart-test-daemon-XXXXXX", swp[96], psp[96], ports[2][16];
	struct run sw = {.is_ps = 0}, ps = {.is_ps = 1};
	uint16_t base = case_base();
	uint8_t frame[60] = {0};
	json_t *j, *p;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(swp, sizeof(swp), "%s/t0.sock", dir);
	snprintf(psp, sizeof(psp), "%s/p0.sock", dir);
	inart_daemon_stop = 0;
	sw_cfg(&sw, swp, base, 2, ports);
	daemon_cfg(&ps.ps.dm, "p0", psp);
	/* 127.X.Y.21, X.Y from the pid: parallel runs bind distinct addresses */
	ps.ps.bind_ip = 0x7f000015u | ((uint32_t)getpid() & 0xffff) << 8;
	assert_int_equal(inart_psd_cfg_check(&ps.ps, &ps.err), 0);
	start(&sw);
	start(&ps);

	j = call(swp, "info");
	assert_string_equal(json_string_value(json_object_get(j, "name")), "t0");
	json_decref(j);
	j = call(psp, "info");
	assert_string_equal(json_string_value(json_object_get(j, "role")), "ps");
	json_decref(j);

	/* a frame into port 1 (not IPv4, dropped): the packet loop read it */
	fd = udp_peer(base + PEER_OFF + 1, base + 1);
	memset(frame, 0xff, 6);
	frame[6] = 0x02;
	frame[12] = 0x88;
	frame[13] = 0xb5; /* a local experimental ethertype */
	assert_int_equal(send(fd, frame, sizeof(frame), 0), (ssize_t)sizeof(frame));
	for (int i = 0; i < 200; i++) {
		j = call(swp, "stats");
		p = json_array_get(json_object_get(j, "ports"), 1);
		if (json_integer_value(json_object_get(p, "rx_pkts")) == 1)
			break;
		json_decref(j);
		j = NULL;
		usleep(10000);
	}
	assert_non_null(j);
	p = json_array_get(json_object_get(j, "ports"), 0);
	assert_int_equal(json_integer_value(json_object_get(p, "rx_pkts")), 0);
	json_decref(j);
	close(fd);

	stop(&sw, &ps);
	unlink(swp);
	unlink(psp);
	rmdir(dir);
}

/* ---- a plan installed, all-reduces run ---- */

#define N_VALUES 20000 /* the job's gradient: 80000 bytes */
#define ITERS 3
#define OUT_N 64

static const char topo_json[] =
    "{\"nodes\": [{\"id\": \"w0\", \"kind\": \"host\"}, {\"id\": \"w1\", \"kind\": \"host\"},\n"
    "  {\"id\": \"p0\", \"kind\": \"host\"},\n"
    "  {\"id\": \"t0\", \"kind\": \"switch\", \"ina\": {\"agg_gbps\": 100, \"trees\": 4}}],\n"
    " \"links\": [{\"a\": \"w0\", \"b\": \"t0\", \"gbps\": 10},\n"
    "  {\"a\": \"w1\", \"b\": \"t0\", \"gbps\": 10}, {\"a\": \"t0\", \"b\": \"p0\", \"gbps\": "
    "10}]}\n";
static const char jobs_json[] = "{\"jobs\": [{\"id\": \"j0\", \"workers\": [\"w0\", \"w1\"], "
				"\"ps\": [\"p0\"], \"gradient_bytes\": 80000}]}\n";
static const char plan_json[] =
    "{\"jobs\": [{\"id\": \"j0\", \"split\": {\"p0\": 1},\n"
    "  \"flows\": [{\"worker\": \"w0\", \"ps\": \"p0\", \"agg\": \"t0\", \"path\": [\"w0\", "
    "\"t0\"]},\n"
    "            {\"worker\": \"w1\", \"ps\": \"p0\", \"agg\": \"t0\", \"path\": [\"w1\", "
    "\"t0\"]}],\n"
    "  \"trees\": [{\"switch\": \"t0\", \"ps\": \"p0\", \"parent\": \"p0\", \"path\": [\"t0\", "
    "\"p0\"]}]}]}\n";

static void write_file(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "w");
	va_list ap;

	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

/* A worker core with its port: a host on switch port i. */
struct host {
	struct inart_worker *w;
	struct inart_ethudp *e;
	float buf[N_VALUES], res[N_VALUES];
};

/* The installation's worker configuration of node id (job j0). */
static const struct inart_worker_cfg *worker_cfg(const struct inart_install *in,
						 const struct inart_topo *t, const char *id)
{
	for (int k = 0; k < in->n_workers; k++)
		if (in->workers[k].node == inart_topo_find(t, id))
			return &in->workers[k].cfg;
	fail_msg("no worker configuration for %s", id);
	return NULL;
}

static void host_open(struct host *h, const struct inart_worker_cfg *wc, uint32_t ip, uint16_t base,
		      int port)
{
	char name[16];
	struct inart_ethudp_cfg ec = {.port = name, .ip = ip, .udp_port = INART_WIRE_UDP_PORT};
	struct inart_err err = {{0}};

	port_name(name, sizeof(name), base, port, 1);
	inart_afp_opt_default(&ec.afo);
	ec.afo.mode = INART_AFP_UDP;
	h->e = inart_ethudp_open(&ec, &err);
	if (h->e == NULL)
		fail_msg("%s", err.msg);
	h->w = inart_worker_create(wc);
	assert_non_null(h->w);
}

/* One all-reduce (iteration iter) of every host's buf into its res, the
 * worker cores driven here over their ports.  0, or -ETIMEDOUT after 20 s. */
static int allreduce(struct host *h, int n, uint32_t iter)
{
	static uint8_t bufs[OUT_N][INART_DGRAM_MAX];
	struct inart_dgram out[OUT_N], in[OUT_N];
	uint64_t end = inart_now_ns() + 20000000000ull;
	struct pollfd pfd[4];

	for (int k = 0; k < OUT_N; k++)
		out[k].data = bufs[k];
	for (int i = 0; i < n; i++) {
		assert_int_equal(inart_worker_begin(h[i].w, h[i].buf, N_VALUES, iter), 0);
		pfd[i].fd = inart_ethudp_fd(h[i].e);
		pfd[i].events = POLLIN;
	}
	for (;;) {
		int done = 0;

		for (int i = 0; i < n; i++) {
			uint64_t now = inart_now_ns();
			int got, m;

			do { /* the datagrams due, then those that came */
				m = inart_worker_poll(h[i].w, now, out, OUT_N);
				inart_ethudp_send(h[i].e, out, m); /* a refused one: lost */
			} while (m == OUT_N);
			while ((got = inart_ethudp_recv(h[i].e, in, OUT_N)) > 0)
				for (int k = 0; k < got; k++)
					inart_worker_rx(h[i].w, in[k].data, in[k].len,
							in[k].peer_ip, in[k].peer_port, now);
			done += inart_worker_done(h[i].w);
		}
		if (done == n)
			break;
		if (inart_now_ns() > end)
			return -ETIMEDOUT;
		poll(pfd, (nfds_t)n, 1);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(inart_worker_result(h[i].w, h[i].res, N_VALUES), 0);
	return 0;
}

/* The plan installed by `inart ctl install`'s path; *built: the installation. */
static void install(const char *dir, struct inart_topo **t, struct inart_install **built)
{
	char path[4][128], id[17], *text = NULL;
	const char *names[4] = {"topo.json", "jobs.json", "plan.json", "deploy.json"};
	struct inart_err err = {{0}};
	struct inart_installer_cfg ci = {0};
	struct inart_install_opt opt;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	char **ctl = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc;

	for (int i = 0; i < 4; i++)
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
	*t = inart_topo_load(path[0], &err);
	assert_non_null(*t);
	js = inart_jobs_load(path[1], *t, &err);
	p = js ? inart_plan_load(path[2], *t, js, &err) : NULL;
	d = p ? inart_installer_deploy_load(path[3], *t, &ctl, &opt, &err) : NULL;
	if (d == NULL)
		fail_msg("%s", err.msg);
	ci.t = *t;
	ci.js = js;
	ci.d = d;
	ci.ctl = ctl;
	ci.opt = &opt;
	ci.epoch = -1;
	rc = inart_installer_run(&ci, p, out, id, built, &err);
	fclose(out);
	if (rc < 0 || strstr(text, "installed") == NULL)
		fail_msg("install: %d %s\n%s", rc, err.msg, text);
	assert_int_equal(strlen(id), 16);
	free(text);
	inart_deploy_ctl_free(ctl, (*t)->n_nodes);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
}

static uint64_t json_u(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

/* The switch t0 and the PS p0 (frames on the switch's port 2), a plan
 * installed, ITERS exact all-reduces of w0 and w1 (ports 0 and 1).  With
 * loss: the switch loses frames sent on any port with that probability. */
static void plan_case(double loss)
{
	char dir[] = "/tmp/inart-test-daemon-XXXXXX", swp[96], psp[96], ports[3][16], pp[16],
	     path[128], dep[128], mac[3][18];
	struct run sw = {.is_ps = 0}, ps = {.is_ps = 1};
	uint16_t base = case_base();
	struct host *h = calloc(2, sizeof(*h));
	struct inart_topo *t;
	struct inart_install *in = NULL;
	struct inart_worker_stats ws;
	uint64_t recovered = 0, lost = 0;
	json_t *j, *x;

	assert_non_null(h);
	assert_non_null(mkdtemp(dir));
	snprintf(swp, sizeof(swp), "%s/t0.sock", dir);
	snprintf(psp, sizeof(psp), "%s/p0.sock", dir);
	/* the files `inart ctl install` reads; host MACs: their ports' (the
	   udp back end's 02:00:7f:00:PORT), the switch's ports named ("if") */
	for (int i = 0; i < 3; i++) {
		uint16_t hp = (uint16_t)(base + PEER_OFF + i);

		snprintf(mac[i], sizeof(mac[i]), "02:00:7f:00:%02x:%02x", hp >> 8, hp & 0xff);
		port_name(ports[i], sizeof(ports[i]), base, i, 0);
	}
	snprintf(path, sizeof(path), "%s/topo.json", dir);
	write_file(path, "%s", topo_json);
	snprintf(path, sizeof(path), "%s/jobs.json", dir);
	write_file(path, "%s", jobs_json);
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	write_file(path, "%s", plan_json);
	snprintf(dep, sizeof(dep), "%s/deploy.json", dir);
	write_file(
	    dep,
	    "{\"nodes\": {\"w0\": {\"ip\": \"10.99.0.1\", \"mac\": \"%s\"},\n"
	    "  \"w1\": {\"ip\": \"10.99.0.2\", \"mac\": \"%s\"},\n"
	    "  \"p0\": {\"ip\": \"10.99.0.4\", \"mac\": \"%s\", \"ctl\": \"%s\"},\n"
	    "  \"t0\": {\"ip\": \"10.99.0.101\", \"ctl\": \"%s\", \"ports\": {\n"
	    "    \"w0\": {\"port\": 0, \"if\": \"%s\"}, \"w1\": {\"port\": 1, \"if\": \"%s\"},\n"
	    "    \"p0\": {\"port\": 2, \"if\": \"%s\"}}}},\n"
	    " \"dataplane\": {\"retx_timeout_ms\": 20}}\n",
	    mac[0], mac[1], mac[2], psp, swp, ports[0], ports[1], ports[2]);

	/* both daemons check their options against their entries there */
	inart_daemon_stop = 0;
	sw_cfg(&sw, swp, base, 3, ports);
	sw.sw.dm.deployment = dep;
	sw.sw.gated = loss > 0;
	sw.sw.gc.tx_loss = loss;
	assert_int_equal(inart_switchd_cfg_check(&sw.sw, &sw.err), 0);
	daemon_cfg(&ps.ps.dm, "p0", psp);
	ps.ps.dm.deployment = dep;
	ps.ps.bind_ip = 0x0a630004; /* 10.99.0.4: an address in frames only */
	port_name(pp, sizeof(pp), base, 2, 1);
	ps.ps.port = pp;
	ps.ps.port_mode = INART_AFP_UDP;
	assert_int_equal(inart_psd_cfg_check(&ps.ps, &ps.err), 0);
	ps.ps.bind_ip++; /* not the entry's address */
	assert_int_equal(inart_psd_cfg_check(&ps.ps, &ps.err), -EINVAL);
	assert_non_null(strstr(ps.err.msg, "deploy.json: nodes.p0.ip: 10.99.0.4, but --bind is"));
	ps.ps.bind_ip--;
	start(&sw);
	start(&ps);

	json_decref(call(swp, "info")); /* both up */
	json_decref(call(psp, "info"));
	install(dir, &t, &in);
	host_open(&h[0], worker_cfg(in, t, "w0"), 0x0a630001, base, 0);
	host_open(&h[1], worker_cfg(in, t, "w1"), 0x0a630002, base, 1);

	for (uint32_t it = 1; it <= ITERS; it++) {
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < N_VALUES; i++)
				h[r].buf[i] =
				    (float)((i * 31 + r * 17 + (int)it * 5) % 2001 - 1000);
		if (allreduce(h, 2, it) < 0)
			fail_msg("iteration %u: no result in 20 s", it);
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < N_VALUES; i++)
				if (h[r].res[i] != h[0].buf[i] + h[1].buf[i])
					fail_msg("iteration %u, w%d, value %d: %g, not %g", it, r,
						 i, (double)h[r].res[i],
						 (double)(h[0].buf[i] + h[1].buf[i]));
	}

	/* the switch aggregated, the PS completed chunks; losses recovered */
	j = call(swp, "stats");
	x = json_array_get(json_object_get(j, "trees"), 0);
	assert_true(json_u(x, "aggregated") > 0);
	x = json_object_get(json_object_get(j, "gate"), "tx_lost");
	for (size_t i = 0; i < json_array_size(x); i++)
		lost += (uint64_t)json_integer_value(json_array_get(x, i));
	json_decref(j);
	j = call(psp, "stats");
	assert_true(json_u(json_object_get(j, "ps"), "completed") >= ITERS);
	json_decref(j);
	for (int r = 0; r < 2; r++) {
		inart_worker_stats(h[r].w, &ws);
		assert_true(ws.results > 0);
		recovered += ws.retransmitted + ws.probes;
	}
	if (loss > 0 && (lost == 0 || recovered == 0))
		fail_msg("loss %g: %llu frames lost, %llu resends and probes", loss,
			 (unsigned long long)lost, (unsigned long long)recovered);
	if (loss == 0 && lost != 0)
		fail_msg("%llu frames lost without a gate", (unsigned long long)lost);

	stop(&sw, &ps);
	for (int r = 0; r < 2; r++) {
		inart_worker_destroy(h[r].w);
		inart_ethudp_close(h[r].e);
	}
	free(h);
	inart_install_destroy(in);
	inart_topo_destroy(t);
	for (int i = 0; i < 4; i++) {
		static const char *const f[] = {"topo.json", "jobs.json", "plan.json",
						"deploy.json"};

		snprintf(path, sizeof(path), "%s/%s", dir, f[i]);
		unlink(path);
	}
	unlink(swp);
	unlink(psp);
	rmdir(dir);
}

static void test_plan_allreduce(void **state)
{
	(void)state;
	plan_case(0);
}

/* Frames lost at the switch (dp/gate tx loss, every port): contributions,
 * aggregates and results; the sums are still exact. */
static void test_plan_allreduce_loss(void **state)
{
	(void)state;
	plan_case(0.05);
}

static void test_cfg_check(void **state)
{
	struct inart_switchd_cfg c;
	struct inart_err err = {{0}};

	(void)state;
	inart_switchd_cfg_init(&c);
	assert_true(inart_switchd_cfg_check(&c, &err) < 0); /* no --ctl */
	c.dm.ctl = "/tmp/x.sock";
	c.dm.name = "t0";
	c.ports[0] = "inartnoif0";
	c.n_ports = 1;
	assert_int_equal(inart_switchd_cfg_check(&c, &err), -ENODEV);
	assert_non_null(strstr(err.msg, "inartnoif0: no such interface"));
	c.afo.mode = INART_AFP_UDP;
	assert_int_equal(inart_switchd_cfg_check(&c, &err), -EINVAL);
	c.ports[0] = "30000:30001";
	assert_int_equal(inart_switchd_cfg_check(&c, &err), 0);
	c.dm.user = "inart-no-such-user";
	assert_true(inart_switchd_cfg_check(&c, &err) < 0);
	assert_non_null(strstr(err.msg, "--user"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cfg_check),
	    cmocka_unit_test(test_daemons_up_and_down),
	    cmocka_unit_test(test_plan_allreduce),
	    cmocka_unit_test(test_plan_allreduce_loss),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
