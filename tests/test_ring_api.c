/*
 * test_ring_api: the public worker API (include/inart/worker.h) on a job the
 * plan runs as a ring all-reduce: three contexts in threads, over real UDP
 * sockets on loopback addresses (127.x.y.1, .2, .4, derived from the pid
 * so that concurrent runs do not collide), through libinart_worker only.
 * Every worker must return the exact sums (the values are multiples of
 * 1/16, exact in float32 in any order) for several steps; a worker that
 * starts late makes the others time out, and their retry of the same step
 * completes (a ring core is kept across a failed call).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <inart/worker.h>

#define NW 3
#define NV 5000

/* dir/name := text (the test's files, removed by run_all). */
static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	int fd;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Workers w0 w1 w2 (and the job's PS p0, unused) on switch s0; the ring
 * w1 -> w2 -> w0 -> w1. */
static void files(char *dir, size_t len)
{
	unsigned a = (unsigned)getpid() % 200 + 20, b = (unsigned)getpid() / 200 % 250 + 1;
	char deploy[768];

	snprintf(dir, len, "/tmp/test_ring_api.%d", (int)getpid());
	assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
	put(dir, "topo.json",
	    "{\"nodes\": [{\"id\": \"w0\", \"kind\": \"host\"}, {\"id\": \"w1\", \"kind\": "
	    "\"host\"}, {\"id\": \"w2\", \"kind\": \"host\"}, {\"id\": \"p0\", \"kind\": "
	    "\"host\"}, {\"id\": \"s0\", \"kind\": \"switch\"}],\n \"links\": [{\"a\": \"w0\", "
	    "\"b\": \"s0\", \"gbps\": 10}, {\"a\": \"w1\", \"b\": \"s0\", \"gbps\": 10}, "
	    "{\"a\": \"w2\", \"b\": \"s0\", \"gbps\": 10}, {\"a\": \"s0\", \"b\": \"p0\", "
	    "\"gbps\": 10}]}\n");
	put(dir, "jobs.json",
	    "{\"jobs\": [{\"id\": \"j0\", \"workers\": [\"w0\", \"w1\", \"w2\"], \"ps\": "
	    "[\"p0\"], \"gradient_bytes\": 100000}]}\n");
	put(dir, "plan.json",
	    "{\"jobs\": [{\"id\": \"j0\", \"split\": {\"p0\": 1}, \"ring\": [{\"path\": [\"w1\", "
	    "\"s0\", \"w2\"]}, {\"path\": [\"w2\", \"s0\", \"w0\"]}, {\"path\": [\"w0\", \"s0\", "
	    "\"w1\"]}]}]}\n");
	snprintf(deploy, sizeof(deploy),
		 "{\"nodes\": {\"w0\": {\"ip\": \"127.%u.%u.1\"}, \"w1\": {\"ip\": "
		 "\"127.%u.%u.2\"}, \"w2\": {\"ip\": \"127.%u.%u.4\"}, \"p0\": {\"ip\": "
		 "\"127.%u.%u.5\"},\n \"s0\": {\"ip\": \"127.%u.%u.3\", \"ports\": {\"w0\": "
		 "{\"port\": 0}, \"w1\": {\"port\": 1}, \"w2\": {\"port\": 2}, \"p0\": {\"port\": "
		 "3}}}}}\n",
		 a, b, a, b, a, b, a, b, a, b);
	put(dir, "deploy.json", deploy);
}

struct wk {
	const char *dir;
	int rank, steps, first_ms, delay_ms;
	int rc[8];
	int bad, timeouts;
};

static float value(int rank, size_t i, int step)
{
	return (float)((int)((rank * 7 + (int)i * 3 + step * 11) % 101) - 50) / 16.0f;
}

static void *run(void *arg)
{
	struct wk *w = arg;
	char t[600], j[600], p[600], d[600];
	struct inart_err err = {{0}};
	struct inart_ctx *c;
	float *buf = malloc(NV * sizeof(float));

	snprintf(t, sizeof(t), "%s/topo.json", w->dir);
	snprintf(j, sizeof(j), "%s/jobs.json", w->dir);
	snprintf(p, sizeof(p), "%s/plan.json", w->dir);
	snprintf(d, sizeof(d), "%s/deploy.json", w->dir);
	if (w->delay_ms)
		usleep((useconds_t)w->delay_ms * 1000);
	c = inart_ctx_create(t, j, p, d, "j0", w->rank, &err);
	if (c == NULL || buf == NULL) {
		fprintf(stderr, "rank %d: %s\n", w->rank, err.msg);
		w->bad = -1;
		free(buf);
		return NULL;
	}
	for (int s = 1; s <= w->steps; s++) {
		int rc;

		for (size_t i = 0; i < NV; i++)
			buf[i] = value(w->rank, i, s);
		rc = inart_allreduce(c, buf, NV, s == 1 && w->first_ms ? w->first_ms : 10000);
		w->rc[s - 1] = rc;
		if (rc == -ETIMEDOUT) /* the same step, the same values: go on waiting */
			w->timeouts++, rc = w->rc[s - 1] = inart_allreduce(c, buf, NV, 10000);
		if (rc != 0)
			break;
		for (size_t i = 0; i < NV; i++) {
			float e = 0;

			for (int r = 0; r < NW; r++)
				e += value(r, i, s);
			if (buf[i] != e)
				w->bad++;
		}
	}
	inart_ctx_destroy(c);
	free(buf);
	return NULL;
}

static void run_all(int late_rank, int late_ms, int first_ms, int *timeouts)
{
	char dir[128];
	pthread_t th[NW];
	struct wk w[NW];

	files(dir, sizeof(dir));
	*timeouts = 0;
	for (int r = 0; r < NW; r++) {
		memset(&w[r], 0, sizeof(w[r]));
		w[r].dir = dir;
		w[r].rank = r;
		w[r].steps = 4;
		w[r].first_ms = r == late_rank ? 0 : first_ms;
		w[r].delay_ms = r == late_rank ? late_ms : 0;
		assert_int_equal(pthread_create(&th[r], NULL, run, &w[r]), 0);
	}
	for (int r = 0; r < NW; r++)
		pthread_join(th[r], NULL);
	for (int r = 0; r < NW; r++) {
		assert_int_equal(w[r].bad, 0);
		for (int s = 0; s < 4; s++)
			if (w[r].rc[s] != 0)
				fail_msg("rank %d step %d: %d", r, s + 1, w[r].rc[s]);
	}
	for (int r = 0; r < NW; r++)
		*timeouts += w[r].timeouts;
	for (size_t i = 0; i < 4; i++) {
		const char *f[] = {"topo.json", "jobs.json", "plan.json", "deploy.json"};
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", dir, f[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void test_ring_steps(void **state)
{
	int t;

	(void)state;
	run_all(-1, 0, 0, &t);
	assert_int_equal(t, 0);
}

static void test_ring_retry_after_timeout(void **state)
{
	int t;

	(void)state;
	run_all(2, 400, 100, &t);
	assert_true(t >= 1); /* the others timed out, then went on with the step */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_steps),
	    cmocka_unit_test(test_ring_retry_after_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
