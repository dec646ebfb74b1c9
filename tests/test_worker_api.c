/* Tests of the public worker API (include/inart/worker.h): its counters
 * (inart_ctx_stats) and its steps.  The module (src/lib/worker_api.c) is
 * compiled into this test so that it can check the table mapping the worker
 * core's counters to the public struct and compare the context's counters
 * with its core's.  The all-reduces run over real UDP sockets on loopback
 * addresses (127.x.y.1 worker, .2 PS, .4 a second worker, derived from the
 * pid so that concurrent runs do not collide) with a PS core (dp/ps) in a
 * thread that can drop the first datagram it receives, drop what it sends to
 * one address, or lose its state (a restarted PS).
 *
 * Steps (issue 7): a call that fails does not move the context to the next
 * step, so a retry after -ETIMEDOUT or -EINVAL is the same step as the other
 * workers' (before, the retry was paired with their next step: wrong sums
 * on every rank); a worker whose step cannot complete any more (the PS lost
 * the results it missed) gets -ESTALE and resynchronises; results from an
 * address that is not the job's PS are never taken. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/worker_api.c"

#define PS_OUT 256

/* ---- the counter table ---- */

/* Every counter word of struct inart_worker_stats maps to exactly one word
 * of struct inart_ctx_stats, and every counter word of the public struct is
 * either mapped or one of the context's own (allreduces, timeouts, stale,
 * epochs):
 * a counter added to the core but not to the public struct fails here. */
static void test_counter_table(void **state)
{
	const size_t head = offsetof(struct inart_ctx_stats, allreduces);
	const size_t n_core = sizeof(struct inart_worker_stats) / sizeof(uint64_t);
	const size_t n_pub = (sizeof(struct inart_ctx_stats) - head) / sizeof(uint64_t);
	char pub_seen[64] = {0};

	(void)state;
	assert_int_equal(head, 8);
	assert_int_equal(sizeof(struct inart_worker_stats) % sizeof(uint64_t), 0);
	assert_int_equal((size_t)N_WORKER_COUNTERS, n_core);
	assert_true(n_pub < sizeof(pub_seen));
	pub_seen[(offsetof(struct inart_ctx_stats, allreduces) - head) / 8]++;
	pub_seen[(offsetof(struct inart_ctx_stats, timeouts) - head) / 8]++;
	pub_seen[(offsetof(struct inart_ctx_stats, stale) - head) / 8]++;
	pub_seen[(offsetof(struct inart_ctx_stats, epochs) - head) / 8]++;
	for (size_t w = 0; w < n_core; w++) {
		int hits = 0;

		for (int i = 0; i < N_WORKER_COUNTERS; i++)
			if (worker_counters[i].core == w * sizeof(uint64_t))
				hits++;
		if (hits != 1)
			fail_msg("core counter word %zu is mapped %d times", w, hits);
	}
	for (int i = 0; i < N_WORKER_COUNTERS; i++) {
		assert_true(worker_counters[i].pub >= head);
		assert_int_equal(worker_counters[i].pub % sizeof(uint64_t), 0);
		assert_true(worker_counters[i].pub < sizeof(struct inart_ctx_stats));
		pub_seen[(worker_counters[i].pub - head) / 8]++;
	}
	for (size_t w = 0; w < n_pub; w++)
		if (pub_seen[w] != 1)
			fail_msg("public counter word %zu is filled %d times", w, pub_seen[w]);
}

/* ---- a PS on loopback ---- */

struct psrv {
	struct inart_udp *u;
	struct inart_ps *ps;
	int to_drop;	     /* datagrams still to drop before the PS sees them */
	atomic_uint drop_to; /* drop what the PS sends to this address (0: none) */
	atomic_int lose;     /* 1: lose the chunk state (a restarted PS) */
	atomic_int stop;
	struct inart_dgram out[PS_OUT];
	uint8_t bufs[PS_OUT][INART_DGRAM_MAX];
};

static void *ps_loop(void *arg)
{
	struct psrv *s = arg;
	struct inart_dgram in[64];

	while (!atomic_load(&s->stop)) {
		struct pollfd p = {inart_udp_fd(s->u), POLLIN, 0};
		int k;

		if (atomic_exchange(&s->lose, 0))
			inart_ps_lose_state(s->ps);
		poll(&p, 1, 5);
		while ((k = inart_udp_recv(s->u, in, 64)) > 0)
			for (int i = 0; i < k; i++) {
				int n, off = 0;

				if (s->to_drop > 0) {
					s->to_drop--;
					continue;
				}
				n = inart_ps_rx(s->ps, in[i].data, in[i].len, in[i].peer_ip,
						in[i].peer_port, inart_now_ns(), s->out, PS_OUT);
				for (int j = 0; j < n; j++) /* a copy that does not arrive */
					if (s->out[j].peer_ip == atomic_load(&s->drop_to))
						s->out[j].peer_ip = 0x7f0000feu; /* nobody */
				while (off < n)
					off += inart_udp_send(s->u, s->out + off, n - off);
			}
	}
	return NULL;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* One worker w0 and one PS p0 behind a switch s0; the plan aggregates at
 * the PS, so the worker's datagrams go straight to the PS's address. */
static void write_files(const char *dir, unsigned a, unsigned b)
{
	char deploy[512];

	write_file(dir, "topo.json",
		   "{\"nodes\": [{\"id\": \"w0\", \"kind\": \"host\"}, {\"id\": \"p0\", \"kind\": "
		   "\"host\"}, {\"id\": \"s0\", \"kind\": \"switch\"}],\n"
		   " \"links\": [{\"a\": \"w0\", \"b\": \"s0\", \"gbps\": 10}, {\"a\": \"s0\", "
		   "\"b\": \"p0\", \"gbps\": 10}]}\n");
	write_file(dir, "jobs.json",
		   "{\"jobs\": [{\"id\": \"j0\", \"workers\": [\"w0\"], \"ps\": [\"p0\"], "
		   "\"gradient_bytes\": 1000000}]}\n");
	write_file(dir, "plan.json",
		   "{\"jobs\": [{\"id\": \"j0\", \"split\": {\"p0\": 1}, \"flows\": [{\"worker\": "
		   "\"w0\", \"ps\": \"p0\", \"agg\": \"p0\", \"path\": [\"w0\", \"s0\", "
		   "\"p0\"]}]}]}\n");
	snprintf(deploy, sizeof(deploy),
		 "{\"nodes\": {\"w0\": {\"ip\": \"127.%u.%u.1\"}, \"p0\": {\"ip\": "
		 "\"127.%u.%u.2\"},\n \"s0\": {\"ip\": \"127.%u.%u.3\", \"ports\": {\"w0\": "
		 "{\"port\": 0}, \"p0\": {\"port\": 1}}}}}\n",
		 a, b, a, b, a, b);
	write_file(dir, "deploy.json", deploy);
}

/* The PS's trees from the same files (what `inart ctl install` sends). */
static void ps_setup(struct psrv *s, const char *dir, unsigned a, unsigned b)
{
	char tp[512], jp[512], pp[512], dp[512];
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	struct inart_install_opt opt;
	struct inart_install *in = NULL;

	snprintf(tp, sizeof(tp), "%s/topo.json", dir);
	snprintf(jp, sizeof(jp), "%s/jobs.json", dir);
	snprintf(pp, sizeof(pp), "%s/plan.json", dir);
	snprintf(dp, sizeof(dp), "%s/deploy.json", dir);
	t = inart_topo_load(tp, &err);
	assert_non_null(t);
	js = inart_jobs_load(jp, t, &err);
	assert_non_null(js);
	p = inart_plan_load(pp, t, js, &err);
	assert_non_null(p);
	d = inart_deploy_load(dp, t, NULL, &err);
	if (d == NULL)
		fail_msg("%s", err.msg);
	inart_install_opt_default(&opt);
	if (inart_install_build(t, js, p, d, &opt, &in, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(in->n_ps, 1);
	s->ps = inart_ps_create();
	assert_non_null(s->ps);
	for (int i = 0; i < in->ps[0].n_trees; i++)
		assert_int_equal(inart_ps_tree_set(s->ps, &in->ps[0].trees[i]), 0);
	s->u = inart_udp_open(127u << 24 | a << 16 | b << 8 | 2, INART_WIRE_UDP_PORT, 64, &err);
	if (s->u == NULL)
		fail_msg("%s", err.msg);
	for (int i = 0; i < PS_OUT; i++)
		s->out[i].data = s->bufs[i];
	inart_install_destroy(in);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* The context's counters equal its core's (plus its own), word by word. */
static void check_matches_core(const struct inart_ctx *c, const struct inart_ctx_stats *st)
{
	struct inart_worker_stats ws;

	inart_worker_stats(c->w, &ws);
	for (int i = 0; i < N_WORKER_COUNTERS; i++) {
		uint64_t a, b;

		memcpy(&a, (const char *)st + worker_counters[i].pub, sizeof(a));
		memcpy(&b, (const char *)&ws + worker_counters[i].core, sizeof(b));
		assert_int_equal(a, b);
	}
}

static void test_loopback(void **state)
{
	char dir[] = "/tmp/inart_wapi_XXXXXX", tp[512], jp[512], pp[512], dp[512];
	unsigned a = (unsigned)getpid() % 250 + 1, b = (unsigned)getpid() / 250 % 250 + 1;
	struct inart_err err = {{0}};
	struct inart_ctx_stats st, st2, old;
	struct psrv *s = calloc(1, sizeof(*s));
	struct inart_ctx *c;
	pthread_t th;
	float buf[2000], want[2000];
	uint32_t n_chunks = 0;
	size_t off, len;

	(void)state;
	assert_non_null(s);
	assert_non_null(mkdtemp(dir));
	write_files(dir, a, b);
	snprintf(tp, sizeof(tp), "%s/topo.json", dir);
	snprintf(jp, sizeof(jp), "%s/jobs.json", dir);
	snprintf(pp, sizeof(pp), "%s/plan.json", dir);
	snprintf(dp, sizeof(dp), "%s/deploy.json", dir);
	ps_setup(s, dir, a, b);
	s->to_drop = 1; /* the first DATA of chunk 0: recovery must resend it */
	assert_int_equal(pthread_create(&th, NULL, ps_loop, s), 0);

	c = inart_ctx_create(tp, jp, pp, dp, "j0", 0, &err);
	if (c == NULL)
		fail_msg("%s", err.msg);
	assert_int_equal(inart_ctx_stats(NULL, &st), -EINVAL);
	assert_int_equal(inart_ctx_stats(c, NULL), -EINVAL);
	st.size = 4;
	assert_int_equal(inart_ctx_stats(c, &st), -EINVAL);
	memset(&st, 0xff, sizeof(st));
	st.size = sizeof(st);
	assert_int_equal(inart_ctx_stats(c, &st), 0);
	assert_int_equal(st.size, sizeof(st));
	assert_int_equal(st.allreduces, 0);
	assert_int_equal(st.sent, 0);

	for (int i = 0; i < 2000; i++)
		want[i] = buf[i] = (float)(i % 97 - 48) / 16.0f; /* exact at scale 16 */
	assert_int_equal(inart_allreduce(c, buf, 2000, 10000), 0);
	assert_memory_equal(buf, want, sizeof(buf)); /* one worker: the sum is its own */
	assert_int_equal(inart_worker_tree_range(c->w, 0, &off, &len, &n_chunks), 0);
	assert_true(n_chunks > 1);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	assert_int_equal(inart_ctx_stats(c, &st), 0);
	print_message("loopback, first datagram dropped: %u chunks, sent %llu, retransmitted "
		      "%llu, retx_asked %llu, probes %llu, nacks %llu, chain_gaps %llu, results "
		      "%llu, duplicates %llu\n",
		      n_chunks, (unsigned long long)st.sent, (unsigned long long)st.retransmitted,
		      (unsigned long long)st.retx_asked, (unsigned long long)st.probes,
		      (unsigned long long)st.nacks, (unsigned long long)st.chain_gaps,
		      (unsigned long long)st.results, (unsigned long long)st.duplicates);
	check_matches_core(c, &st);
	assert_int_equal(st.allreduces, 1);
	assert_int_equal(st.timeouts, 0);
	assert_int_equal(st.results, n_chunks);
	assert_true(st.retransmitted >= 1); /* chunk 0's values went twice */
	assert_int_equal(st.sent, n_chunks + st.retransmitted);
	assert_int_equal(st.dropped, 0);

	/* a caller built with a smaller struct gets only what it knows */
	memset(&old, 0xab, sizeof(old));
	old.size = (uint32_t)offsetof(struct inart_ctx_stats, sent);
	assert_int_equal(inart_ctx_stats(c, &old), 0);
	assert_int_equal(old.size, offsetof(struct inart_ctx_stats, sent));
	assert_int_equal(old.allreduces, 1);
	assert_int_equal(old.timeouts, 0);
	assert_int_equal(old.sent, 0xababababababababull);
	/* a bigger one gets the library's size back */
	st2.size = sizeof(st2) + 64;
	assert_int_equal(inart_ctx_stats(c, &st2), 0);
	assert_int_equal(st2.size, sizeof(st2));

	/* no PS: the all-reduce times out; the counters of the core it had
	 * (dropped by the timeout) stay in the totals */
	atomic_store(&s->stop, 1);
	pthread_join(th, NULL);
	for (int i = 0; i < 2000; i++)
		buf[i] = want[i];
	assert_int_equal(inart_allreduce(c, buf, 2000, 100), -ETIMEDOUT);
	st2.size = sizeof(st2);
	assert_int_equal(inart_ctx_stats(c, &st2), 0);
	assert_int_equal(st2.allreduces, 1);
	assert_int_equal(st2.timeouts, 1);
	assert_true(st2.sent > st.sent);
	assert_int_equal(st2.results, st.results);

	inart_ctx_destroy(c);
	inart_udp_close(s->u);
	inart_ps_destroy(s->ps);
	free(s);
	for (const char *f = "topo.json\0jobs.json\0plan.json\0deploy.json\0"; *f;
	     f += strlen(f) + 1) {
		char path[600];

		snprintf(path, sizeof(path), "%s/%s", dir, f);
		unlink(path);
	}
	rmdir(dir);
}

/* ---- steps: two workers ---- */

/* Workers w0 (127.a.b.1) and w1 (127.a.b.4), PS p0 (127.a.b.2) behind s0,
 * aggregated at the PS. */
static void write_files2(const char *dir, unsigned a, unsigned b)
{
	char deploy[640];

	write_file(dir, "topo.json",
		   "{\"nodes\": [{\"id\": \"w0\", \"kind\": \"host\"}, {\"id\": \"w1\", \"kind\": "
		   "\"host\"}, {\"id\": \"p0\", \"kind\": \"host\"}, {\"id\": \"s0\", \"kind\": "
		   "\"switch\"}],\n \"links\": [{\"a\": \"w0\", \"b\": \"s0\", \"gbps\": 10}, "
		   "{\"a\": \"w1\", \"b\": \"s0\", \"gbps\": 10}, {\"a\": \"s0\", \"b\": \"p0\", "
		   "\"gbps\": 10}]}\n");
	write_file(dir, "jobs.json",
		   "{\"jobs\": [{\"id\": \"j0\", \"workers\": [\"w0\", \"w1\"], \"ps\": [\"p0\"], "
		   "\"gradient_bytes\": 1000000}]}\n");
	write_file(dir, "plan.json",
		   "{\"jobs\": [{\"id\": \"j0\", \"split\": {\"p0\": 1}, \"flows\": [{\"worker\": "
		   "\"w0\", \"ps\": \"p0\", \"agg\": \"p0\", \"path\": [\"w0\", \"s0\", \"p0\"]}, "
		   "{\"worker\": \"w1\", \"ps\": \"p0\", \"agg\": \"p0\", \"path\": [\"w1\", "
		   "\"s0\", \"p0\"]}]}]}\n");
	snprintf(deploy, sizeof(deploy),
		 "{\"nodes\": {\"w0\": {\"ip\": \"127.%u.%u.1\"}, \"w1\": {\"ip\": "
		 "\"127.%u.%u.4\"}, \"p0\": {\"ip\": \"127.%u.%u.2\"},\n \"s0\": {\"ip\": "
		 "\"127.%u.%u.3\", \"ports\": {\"w0\": {\"port\": 0}, \"w1\": {\"port\": 1}, "
		 "\"p0\": {\"port\": 2}}}}}\n",
		 a, b, a, b, a, b, a, b);
	write_file(dir, "deploy.json", deploy);
}

struct job2 {
	char dir[64];
	unsigned a, b;
	struct psrv *s;
	pthread_t th;
	struct inart_ctx *w[2];
};

static void job2_up(struct job2 *j, unsigned salt)
{
	char tp[128], jp[128], pp[128], dp[128];
	struct inart_err err = {{0}};

	snprintf(j->dir, sizeof(j->dir), "/tmp/inart_wapi2_XXXXXX");
	assert_non_null(mkdtemp(j->dir));
	j->a = (unsigned)getpid() % 250 + 1;
	j->b = ((unsigned)getpid() / 250 + salt * 37) % 250 + 1;
	write_files2(j->dir, j->a, j->b);
	j->s = calloc(1, sizeof(*j->s));
	assert_non_null(j->s);
	ps_setup(j->s, j->dir, j->a, j->b);
	assert_int_equal(pthread_create(&j->th, NULL, ps_loop, j->s), 0);
	snprintf(tp, sizeof(tp), "%s/topo.json", j->dir);
	snprintf(jp, sizeof(jp), "%s/jobs.json", j->dir);
	snprintf(pp, sizeof(pp), "%s/plan.json", j->dir);
	snprintf(dp, sizeof(dp), "%s/deploy.json", j->dir);
	for (int r = 0; r < 2; r++) {
		j->w[r] = inart_ctx_create(tp, jp, pp, dp, "j0", r, &err);
		if (j->w[r] == NULL)
			fail_msg("%s", err.msg);
	}
}

static void job2_down(struct job2 *j)
{
	atomic_store(&j->s->stop, 1);
	pthread_join(j->th, NULL);
	for (int r = 0; r < 2; r++)
		inart_ctx_destroy(j->w[r]);
	inart_udp_close(j->s->u);
	inart_ps_destroy(j->s->ps);
	free(j->s);
	for (const char *f = "topo.json\0jobs.json\0plan.json\0deploy.json\0"; *f;
	     f += strlen(f) + 1) {
		char path[200];

		snprintf(path, sizeof(path), "%s/%s", j->dir, f);
		unlink(path);
	}
	rmdir(j->dir);
}

#define N2 1000 /* values per all-reduce: 3 chunks */

/* Rank r's values of step k: multiples of 1/16, exact at scale 16. */
static void fill(float *x, int r, uint32_t k)
{
	for (int i = 0; i < N2; i++)
		x[i] = (float)((int)((r * 7 + i * 3 + (int)k * 11) % 101) - 50) / 16.0f;
}

/* The sum of step k over both ranks equals buf, bit for bit. */
static void check_sum(const float *buf, uint32_t k)
{
	float a[N2], b[N2];

	fill(a, 0, k);
	fill(b, 1, k);
	for (int i = 0; i < N2; i++)
		if (buf[i] != a[i] + b[i])
			fail_msg("step %u value %d: %g, the sum of step %u is %g", k, i, buf[i], k,
				 a[i] + b[i]);
}

/* Rank 0 (ctx w) runs step k's all-reduce: exact. */
static void step0_ok(struct inart_ctx *w, uint32_t k)
{
	float buf[N2];

	fill(buf, 0, k);
	assert_int_equal(inart_allreduce(w, buf, N2, 10000), 0);
	check_sum(buf, k);
}

/* An all-reduce in a thread. */
struct call {
	struct inart_ctx *c;
	float buf[N2];
	int timeout_ms, rc;
	pthread_t th;
};

static void *call_run(void *arg)
{
	struct call *c = arg;

	c->rc = inart_allreduce(c->c, c->buf, N2, c->timeout_ms);
	return NULL;
}

static void call_start(struct call *c, struct inart_ctx *ctx, int rank, uint32_t step, int ms)
{
	c->c = ctx;
	c->timeout_ms = ms;
	fill(c->buf, rank, step);
	assert_int_equal(pthread_create(&c->th, NULL, call_run, c), 0);
}

static int call_wait(struct call *c)
{
	pthread_join(c->th, NULL);
	return c->rc;
}

/* A worker retries the step that timed out: it is the same step as the
 * other worker's, so both get the exact sum of step 1, then of step 2.
 * Before the fix the retry was the worker's step 2, added to the other
 * worker's real step 2: both returned 0 with wrong values. */
static void test_retry_after_timeout(void **state)
{
	struct job2 j;
	struct call c1;
	float buf[N2];
	uint32_t step;

	(void)state;
	job2_up(&j, 1);
	/* w0 alone: its contributions reach the PS, the step cannot complete */
	fill(buf, 0, 1);
	assert_int_equal(inart_allreduce(j.w[0], buf, N2, 50), -ETIMEDOUT);
	assert_int_equal(inart_ctx_step(j.w[0], &step, NULL), 0);
	assert_int_equal(step, 1); /* still step 1 */
	/* w1 completes step 1 with them */
	call_start(&c1, j.w[1], 1, 1, 10000);
	assert_int_equal(call_wait(&c1), 0);
	check_sum(c1.buf, 1);
	/* w1 goes on with step 2 while w0 retries step 1 (same values) */
	call_start(&c1, j.w[1], 1, 2, 10000);
	step0_ok(j.w[0], 1);
	step0_ok(j.w[0], 2);
	assert_int_equal(call_wait(&c1), 0);
	check_sum(c1.buf, 2);
	job2_down(&j);
}

/* A refused call (a NaN) sends nothing and stays at the step: the next call
 * is step 1 like the other worker's.  Before the fix the refused call used
 * up step 1, and the two workers never met again (both timed out). */
static void test_einval_keeps_step(void **state)
{
	struct job2 j;
	struct call c1;
	float buf[N2];
	uint32_t step, job_step;

	(void)state;
	job2_up(&j, 2);
	fill(buf, 0, 1);
	buf[7] = NAN;
	assert_int_equal(inart_allreduce(j.w[0], buf, N2, 1000), -EINVAL);
	assert_int_equal(inart_allreduce(j.w[0], buf, 1000000, 1000), -EINVAL); /* > gradient */
	assert_int_equal(inart_ctx_step(j.w[0], &step, &job_step), 0);
	assert_int_equal(step, 1);
	assert_int_equal(job_step, 0);
	call_start(&c1, j.w[1], 1, 1, 10000);
	step0_ok(j.w[0], 1);
	assert_int_equal(call_wait(&c1), 0);
	check_sum(c1.buf, 1);
	/* explicit steps */
	assert_int_equal(inart_ctx_set_step(j.w[0], 0), -EINVAL);
	assert_int_equal(inart_ctx_set_step(NULL, 3), -EINVAL);
	assert_int_equal(inart_ctx_resync(j.w[0]), -EAGAIN); /* no step notice came */
	assert_int_equal(inart_ctx_step(NULL, &step, NULL), -EINVAL);
	job2_down(&j);
}

/* w0 misses the results of step 1 (lost on the way), w1 got them and starts
 * step 2, then the PS loses its state (a restart): step 1's results are gone
 * for good.  w0's retry of step 1 is told so (-ESTALE, the job is at step 2)
 * and resynchronises; step 2 is then exact for both.  Before the fix nothing
 * told w0: it retried step 1 until its timeout, every time (the job hung), or
 * -- its context having moved on -- was paired with the wrong step. */
static void test_stale_resync(void **state)
{
	struct job2 j;
	struct call c1;
	struct inart_ctx_stats st = {.size = sizeof(st)};
	float buf[N2];
	uint32_t step, job_step;
	int rc = 0;

	(void)state;
	job2_up(&j, 3);
	atomic_store(&j.s->drop_to, 127u << 24 | j.a << 16 | j.b << 8 | 1); /* to w0 */
	call_start(&c1, j.w[1], 1, 1, 10000);
	fill(buf, 0, 1);
	assert_int_equal(inart_allreduce(j.w[0], buf, N2, 300), -ETIMEDOUT);
	assert_int_equal(call_wait(&c1), 0);
	check_sum(c1.buf, 1);
	call_start(&c1, j.w[1], 1, 2, 20000); /* w1 waits in step 2 */
	usleep(50000);
	atomic_store(&j.s->lose, 1);
	usleep(50000);
	atomic_store(&j.s->drop_to, 0);
	for (int tries = 0; tries < 5; tries++) {
		fill(buf, 0, 1);
		rc = inart_allreduce(j.w[0], buf, N2, 2000);
		if (rc != -ETIMEDOUT)
			break;
	}
	assert_int_equal(rc, -ESTALE);
	assert_int_equal(inart_ctx_step(j.w[0], &step, &job_step), 0);
	assert_int_equal(step, 1);
	assert_int_equal(job_step, 2);
	assert_int_equal(inart_ctx_resync(j.w[0]), 0);
	assert_int_equal(inart_ctx_step(j.w[0], &step, NULL), 0);
	assert_int_equal(step, 2);
	step0_ok(j.w[0], 2);
	assert_int_equal(call_wait(&c1), 0);
	check_sum(c1.buf, 2);
	assert_int_equal(inart_ctx_stats(j.w[0], &st), 0);
	assert_int_equal(st.stale, 1);
	assert_true(st.step_notices >= 1);
	job2_down(&j);
}

/* Results forged by another host (here another local address) never
 * complete an all-reduce: the worker takes results from its PS's address
 * only.  Before the fix the forged results were the all-reduce's result. */
static void test_foreign_results(void **state)
{
	struct job2 j;
	struct inart_err err = {{0}};
	struct inart_ctx_stats st = {.size = sizeof(st)};
	struct inart_udp *evil;
	struct call c0;
	uint32_t n_chunks;
	size_t off, len;

	(void)state;
	job2_up(&j, 4);
	atomic_store(&j.s->stop, 1); /* no PS answers */
	pthread_join(j.th, NULL);
	evil = inart_udp_open(127u << 24 | j.a << 16 | j.b << 8 | 9, INART_WIRE_UDP_PORT, 8, &err);
	if (evil == NULL)
		fail_msg("%s", err.msg);
	call_start(&c0, j.w[0], 0, 1, 1500);
	usleep(200000);
	assert_int_equal(inart_worker_tree_range(j.w[0]->w, 0, &off, &len, &n_chunks), 0);
	for (int rep = 0; rep < 3; rep++)
		for (uint32_t seq = 0; seq < n_chunks; seq++) {
			struct inart_wire_hdr h = {0};
			int32_t v[INART_DGRAM_MAX / 4] = {0};
			uint8_t pkt[INART_DGRAM_MAX];
			struct inart_dgram d = {127u << 24 | j.a << 16 | j.b << 8 | 1,
						INART_WIRE_UDP_PORT, 0, pkt};
			size_t vpp = (size_t)inart_wire_max_values(1);

			/* a well-formed complete result of the chunk */
			h.flags = INART_F_RESULT;
			h.bitmap_words = 1;
			h.scale_exp = 16;
			h.fan_in = 2;
			h.iter = 1;
			h.seq = seq;
			h.slot = (uint16_t)seq;
			h.bitmap[0] = 3;
			h.count = (uint16_t)(len - seq * vpp < vpp ? len - seq * vpp : vpp);
			d.len = (uint16_t)inart_wire_encode(&h, v, pkt, sizeof(pkt));
			assert_true(d.len > 0);
			assert_int_equal(inart_udp_send(evil, &d, 1), 1);
		}
	assert_int_equal(call_wait(&c0), -ETIMEDOUT);
	assert_int_equal(inart_ctx_stats(j.w[0], &st), 0);
	assert_true(st.foreign >= n_chunks);
	assert_int_equal(st.results, 0);
	inart_udp_close(evil);
	j.s->stop = 0;
	assert_int_equal(pthread_create(&j.th, NULL, ps_loop, j.s), 0);
	job2_down(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counter_table),	cmocka_unit_test(test_loopback),
	    cmocka_unit_test(test_retry_after_timeout), cmocka_unit_test(test_einval_keeps_step),
	    cmocka_unit_test(test_stale_resync),	cmocka_unit_test(test_foreign_results),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
