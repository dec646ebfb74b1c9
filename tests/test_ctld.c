/*
 * test_ctld: the controller daemon's loop (daemon/ctld.h) run in-process
 * for a few rounds against fake daemons on real control sockets (a server
 * thread; no root): the switches of tests/data/twopath answer info,
 * counters and the install transaction, the PS answers info, trees and
 * stats.  Background on t0 -> ta (the plan's path) makes the loop re-plan
 * and install a plan through tb with the transaction (every switch
 * committed the same new identity, the log says "install" ok); the stop
 * flag ends it with 0.  Without the background nothing is installed.
 * A missing file comes back as an error, no exit.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/file.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlsock.h"
#include "daemon/ctld.h"
#include "testutil.h"

enum { N_FAKE = 5 };
static const char *const fake_name[N_FAKE] = {"t0", "ta", "tb", "t1", "p0"};

struct fake {
	struct inart_ctlsrv *srv;
	const char *name;
	int ps, commits;
	char held[17], prep[17];
	double t0;
};

struct fakes {
	struct fake f[N_FAKE];
	volatile int stop;
};

/* bytes so far at 8 Gbit/s since the start (the background on t0 -> ta) */
static volatile int bg_on;

static json_int_t bg_bytes(const struct fake *f)
{
	return bg_on ? (json_int_t)(1e9 * (inart_now_s() - f->t0)) : 0;
}

static json_t *ports(const struct fake *f)
{
	json_t *a = json_array();
	int n = strcmp(f->name, "t0") == 0 ? 4 : strcmp(f->name, "t1") == 0 ? 3 : 2;

	for (int k = 0; k < n; k++) {
		json_int_t tx = strcmp(f->name, "t0") == 0 && k == 2 ? bg_bytes(f) : 0;
		json_int_t rx = strcmp(f->name, "ta") == 0 && k == 0 ? bg_bytes(f) : 0;

		json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:I}", "rx_bytes", rx,
						   "tx_bytes", tx, "rx_ina_bytes", (json_int_t)0,
						   "tx_ina_bytes", (json_int_t)0));
	}
	return a;
}

static char *handler(void *ctx, const char *body, size_t len)
{
	struct fake *f = ctx;
	json_t *rq = json_loadb(body, len, 0, NULL), *d = json_object();
	const char *op = json_string_value(json_object_get(rq, "op"));
	const char *id = json_string_value(json_object_get(rq, "install_id"));
	const char *phase = json_string_value(json_object_get(rq, "phase"));
	char *rep;

	op = op ? op : "";
	if (strcmp(op, "info") == 0) {
		json_object_set_new(d, "role", json_string(f->ps ? "ps" : "switch"));
		json_object_set_new(d, "name", json_string(f->name));
		json_object_set_new(d, "install_id", json_string(f->held));
	} else if (strcmp(op, "install") == 0 || strcmp(op, "trees") == 0) {
		if (phase != NULL && strcmp(phase, "prepare") == 0)
			snprintf(f->prep, sizeof(f->prep), "%s", id ? id : "");
		else
			snprintf(f->held, sizeof(f->held), "%s", id ? id : "");
	} else if (strcmp(op, "commit") == 0) {
		snprintf(f->held, sizeof(f->held), "%s", f->prep);
		f->commits++;
	} else if (strcmp(op, "port_counters") == 0 || (strcmp(op, "stats") == 0 && !f->ps)) {
		json_object_set_new(d, "ports", ports(f));
	} else if (strcmp(op, "stats") == 0) {
		json_object_set_new(d, "steps", json_array());
	}
	rep = inart_ctl_reply_ok(d);
	json_decref(rq);
	return rep;
}

static void *srv_thread(void *arg)
{
	struct fakes *fs = arg;

	while (!fs->stop) {
		struct pollfd p[N_FAKE];

		for (int i = 0; i < N_FAKE; i++)
			p[i] = (struct pollfd){inart_ctlsrv_fd(fs->f[i].srv), POLLIN, 0};
		if (poll(p, N_FAKE, 20) > 0)
			for (int i = 0; i < N_FAKE; i++)
				if (p[i].revents)
					inart_ctlsrv_service(fs->f[i].srv);
	}
	return NULL;
}

struct runner {
	struct inart_ctld_cfg cfg;
	struct inart_err err;
	int rc;
};

static void *run_thread(void *arg)
{
	struct runner *r = arg;

	r->rc = inart_ctld_run(&r->cfg, &r->err);
	return NULL;
}

static char data[1024], topo[1100], jobs[1100], plan[1100];

static void paths(void)
{
	const char *d = getenv("INART_TEST_DATA");

	snprintf(data, sizeof(data), "%s/twopath", d ? d : "tests/data");
	snprintf(topo, sizeof(topo), "%s/topo.json", data);
	snprintf(jobs, sizeof(jobs), "%s/jobs.json", data);
	snprintf(plan, sizeof(plan), "%s/plan.json", data);
}

static void test_switches(void **state)
{
	char dir[] = "/tmp/inart-ctld-XXXXXX", path[256], logp[256], *log;
	struct inart_err err = {{0}};
	static struct fakes fs;
	static struct runner r;
	volatile sig_atomic_t stop = 0;
	pthread_t srv, run;
	struct inart_err ferr = {{0}};
	double t;

	(void)state;
	paths();
	memset(&fs, 0, sizeof(fs));
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < N_FAKE; i++) {
		fs.f[i].name = fake_name[i];
		fs.f[i].ps = i == N_FAKE - 1;
		fs.f[i].t0 = inart_now_s();
		snprintf(path, sizeof(path), "%s/%s.sock", dir, fake_name[i]);
		fs.f[i].srv = inart_ctlsrv_open(path, handler, &fs.f[i], &err);
		assert_non_null(fs.f[i].srv);
	}
	assert_int_equal(pthread_create(&srv, NULL, srv_thread, &fs), 0);

	memset(&r, 0, sizeof(r));
	inart_ctld_cfg_default(&r.cfg);
	snprintf(logp, sizeof(logp), "%s/log.jsonl", dir);
	r.cfg.topo = topo;
	r.cfg.jobs = jobs;
	r.cfg.plan = plan;
	r.cfg.ctl_dir = dir;
	r.cfg.log = logp;
	r.cfg.period_ms = 50;
	r.cfg.tau_ms = 0;
	r.cfg.o.hold_s = 0;
	r.cfg.o.window_s = 0;
	r.cfg.o.settle_s = 0;
	r.cfg.o.rise_s = 0;
	r.cfg.stop = &stop;
	/* no background: the plan stays (the loop ends at its duration) */
	bg_on = 0;
	r.cfg.duration = 0.6;
	run_thread(&r);
	assert_int_equal(r.rc, 0);
	for (int i = 0; i < N_FAKE; i++)
		assert_int_equal(fs.f[i].commits, 0);
	/* background on the plan's path: re-plan, install */
	bg_on = 1;
	for (int i = 0; i < N_FAKE; i++)
		fs.f[i].t0 = inart_now_s();
	r.cfg.duration = 30; /* a safety net: the stop flag ends it */
	assert_int_equal(pthread_create(&run, NULL, run_thread, &r), 0);
	/* the install: every switch committed once */
	t = inart_now_s();
	while (inart_now_s() - t < 20 && fs.f[0].commits == 0)
		usleep(20000);
	usleep(200000);
	stop = 1;
	assert_int_equal(pthread_join(run, NULL), 0);
	assert_true(inart_now_s() - t < 25); /* the flag, not the duration */
	fs.stop = 1;
	pthread_join(srv, NULL);
	assert_int_equal(r.rc, 0);
	for (int i = 0; i < N_FAKE - 1; i++) {
		assert_true(fs.f[i].commits >= 1);
		assert_int_equal(strlen(fs.f[i].held), 16);
		assert_string_equal(fs.f[i].held, fs.f[0].held);
	}
	log = inart_file_read(logp, NULL, &ferr);
	assert_non_null(log);
	assert_non_null(strstr(log, "\"event\": \"start\""));
	assert_non_null(strstr(log, "\"replanned\": true"));
	assert_non_null(strstr(log, "\"event\":\"install\""));
	assert_non_null(strstr(log, "\"ok\":true"));
	assert_non_null(strstr(log, fs.f[0].held));
	free(log);
	for (int i = 0; i < N_FAKE; i++) {
		inart_ctlsrv_close(fs.f[i].srv);
		snprintf(path, sizeof(path), "%s/%s.sock", dir, fake_name[i]);
		unlink(path);
	}
	unlink(logp);
	rmdir(dir);
}

/* A file that does not load: an error return naming it, no exit. */
static void test_bad_file(void **state)
{
	struct inart_ctld_cfg c;
	struct inart_err err = {{0}};

	(void)state;
	paths();
	inart_ctld_cfg_default(&c);
	c.topo = "/nonexistent/topo.json";
	c.jobs = jobs;
	c.plan = plan;
	assert_true(inart_ctld_run(&c, &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent/topo.json"));
	c.topo = NULL;
	assert_int_equal(inart_ctld_run(&c, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_file),
	    cmocka_unit_test(test_switches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
