/*
 * test_daemon: the switch daemon (daemon/switchd, --io udp: Ethernet frames
 * over loopback UDP) and the PS daemon (daemon/psd, UDP on 127.0.0.1) run
 * in-process on threads, without root: both answer over their real control
 * sockets (ctlproto/ctlclient), the switch's packet loop reads frames from
 * its ports (per-port counters), and both stop cleanly on inart_daemon_stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
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

#include "ctlproto/ctlclient.h"
#include "daemon/psd.h"
#include "daemon/switchd.h"
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

static void test_daemons_up_and_down(void **state)
{
	char dir[] = "/tmp/inart-test-daemon-XXXXXX", swp[96], psp[96], ports[2][16];
	struct run sw = {.is_ps = 0}, ps = {.is_ps = 1};
	uint16_t base = (uint16_t)(20000 + getpid() % 20000);
	uint8_t frame[60] = {0};
	json_t *j, *p;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(swp, sizeof(swp), "%s/t0.sock", dir);
	snprintf(psp, sizeof(psp), "%s/p0.sock", dir);
	inart_daemon_stop = 0;
	inart_switchd_cfg_init(&sw.sw);
	sw.sw.dm.name = "t0";
	sw.sw.dm.ctl = swp;
	sw.sw.dm.user = NULL; /* not root anyway; as root: stay */
	sw.sw.dm.signals = 0;
	sw.sw.dm.level = INART_LOG_WARN;
	sw.sw.afo.mode = INART_AFP_UDP;
	for (int i = 0; i < 2; i++) {
		snprintf(ports[i], sizeof(ports[i]), "%u:%u", base + i, base + 100 + i);
		sw.sw.ports[i] = ports[i];
	}
	sw.sw.n_ports = 2;
	assert_int_equal(inart_switchd_cfg_check(&sw.sw, &sw.err), 0);
	inart_daemon_cfg_init(&ps.ps.dm);
	ps.ps.dm.name = "p0";
	ps.ps.dm.ctl = psp;
	ps.ps.dm.user = NULL;
	ps.ps.dm.signals = 0;
	ps.ps.dm.level = INART_LOG_WARN;
	ps.ps.bind_ip = 0x7f000001u + 20; /* 127.0.0.21 */
	assert_int_equal(inart_psd_cfg_check(&ps.ps, &ps.err), 0);
	assert_int_equal(pthread_create(&sw.th, NULL, run_daemon, &sw), 0);
	assert_int_equal(pthread_create(&ps.th, NULL, run_daemon, &ps), 0);

	j = call(swp, "info");
	assert_string_equal(json_string_value(json_object_get(j, "name")), "t0");
	json_decref(j);
	j = call(psp, "info");
	assert_string_equal(json_string_value(json_object_get(j, "role")), "ps");
	json_decref(j);

	/* a frame into port 1 (not IPv4, dropped): the packet loop read it */
	fd = udp_peer(base + 101, base + 1);
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

	inart_daemon_stop = 1;
	assert_int_equal(pthread_join(sw.th, NULL), 0);
	assert_int_equal(pthread_join(ps.th, NULL), 0);
	assert_int_equal(sw.rc, 0);
	assert_int_equal(ps.rc, 0);
	unlink(swp);
	unlink(psp);
	rmdir(dir);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
