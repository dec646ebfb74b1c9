/*
 * test_ring_dp: the data plane's ring all-reduce worker (src/dp/ring.c) over
 * a small in-test fabric: N workers in a ring, every datagram delivered
 * after a fixed delay plus jitter (reordering), lost or duplicated with
 * seeded probabilities.  Every worker's result must equal, bit for bit, the
 * float32 sums in the ring order (chunk c: x_c + x_(c+1) + ...), every
 * message must be applied exactly once, and a silent peer must end every
 * other worker's all-reduce with a clear error in bounded time.
 * (tests/test_ring.c is the planner's ring baseline.)
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "cp/model/evaluate.h"
#include "dp/pkt.h"
#include "dp/ring.h"

#define MAXW 16
#define IP0 0x0a000001u

struct ev {
	uint64_t t;
	int dst;
	uint32_t src_ip;
	uint16_t len;
	uint8_t data[INART_DGRAM_MAX];
};

struct fab {
	int n;
	struct inart_ring *w[MAXW];
	int dead[MAXW];
	struct ev *q; /* unsorted; n_q small enough for a linear scan */
	int n_q, cap_q;
	struct inart_rng rng;
	double loss, dup, reorder;
	uint64_t delay, now;
	uint64_t delivered, lost;
	/* a queue that builds up: packets sent in [spike_at, spike_end) wait
	 * spike_extra more; FIFO per pair of workers kept (last[from][to]) */
	uint64_t spike_at, spike_end, spike_extra;
	uint64_t last[MAXW][MAXW];
	uint8_t buf[64][INART_DGRAM_MAX];
	struct inart_dgram out[64];
};

static void push(struct fab *f, int dst, uint32_t src_ip, const struct inart_dgram *d, uint64_t t)
{
	struct ev *e;

	if (f->n_q == f->cap_q) {
		f->cap_q = f->cap_q ? 2 * f->cap_q : 256;
		f->q = realloc(f->q, (size_t)f->cap_q * sizeof(*f->q));
		assert_non_null(f->q);
	}
	e = &f->q[f->n_q++];
	e->t = t;
	e->dst = dst;
	e->src_ip = src_ip;
	e->len = d->len;
	memcpy(e->data, d->data, d->len);
}

static void send_out(struct fab *f, int from, int k)
{
	for (int i = 0; i < k; i++) {
		const struct inart_dgram *d = &f->out[i];
		int dst = (int)(d->peer_ip - IP0), copies = 1;

		assert_true(dst >= 0 && dst < f->n);
		assert_int_equal(d->peer_port, INART_WIRE_RING_PORT);
		assert_true(d->len >= INART_WIRE_RING_HDR_LEN);
		if (inart_rng_unit(&f->rng) < f->dup)
			copies = 2;
		for (int c = 0; c < copies; c++) {
			uint64_t t = f->now + f->delay;

			if (inart_rng_unit(&f->rng) < f->loss) {
				f->lost++;
				continue;
			}
			if (inart_rng_unit(&f->rng) < f->reorder)
				t += (uint64_t)(inart_rng_unit(&f->rng) * 4.0 * (double)f->delay);
			if (f->now >= f->spike_at && f->now < f->spike_end)
				t += f->spike_extra;
			if (f->spike_extra) {
				if (t <= f->last[from][dst]) /* (ties would be reordered) */
					t = f->last[from][dst] + 1;
				f->last[from][dst] = t;
			}
			push(f, dst, IP0 + (uint32_t)from, d, t);
		}
	}
}

static void poll_one(struct fab *f, int i)
{
	int k;

	if (f->dead[i])
		return;
	while ((k = inart_ring_poll(f->w[i], f->now, f->out, 64)) > 0) {
		send_out(f, i, k);
		if (k < 64)
			break;
	}
}

static void fab_init(struct fab *f, int n, uint16_t vpp, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	f->delay = 10000; /* 10 us */
	inart_rng_seed(&f->rng, seed);
	for (int i = 0; i < 64; i++)
		f->out[i].data = f->buf[i];
	for (int i = 0; i < n; i++) {
		struct inart_ring_cfg c = {0};

		c.job = 7;
		c.pos = (uint16_t)i;
		c.size = (uint16_t)n;
		c.prev_ip = IP0 + (uint32_t)((i + n - 1) % n);
		c.next_ip = IP0 + (uint32_t)((i + 1) % n);
		c.values_per_packet = vpp;
		c.window = 16;
		c.retx_timeout_ns = 200000; /* 200 us */
		c.give_up_ns = 50000000;    /* 50 ms */
		f->w[i] = inart_ring_create(&c);
		assert_non_null(f->w[i]);
	}
}

static void fab_free(struct fab *f)
{
	for (int i = 0; i < f->n; i++)
		inart_ring_destroy(f->w[i]);
	free(f->q);
}

/* Run until every live worker is done or failed and nothing is in flight,
 * or until `until`.  Returns the number of live workers neither done nor
 * failed. */
static int fab_run(struct fab *f, uint64_t until)
{
	for (int i = 0; i < f->n; i++)
		poll_one(f, i);
	for (;;) {
		uint64_t tq = UINT64_MAX, tw = UINT64_MAX;
		int open = 0, qi = -1;

		for (int i = 0; i < f->n; i++) {
			if (f->dead[i])
				continue;
			if (!inart_ring_done(f->w[i]) && !inart_ring_failed(f->w[i], NULL))
				open++;
			if (inart_ring_next_deadline(f->w[i]) < tw)
				tw = inart_ring_next_deadline(f->w[i]);
		}
		for (int j = 0; j < f->n_q; j++)
			if (f->q[j].t < tq) {
				tq = f->q[j].t;
				qi = j;
			}
		if (open == 0 && f->n_q == 0)
			return 0;
		if ((tq < tw ? tq : tw) > until)
			return open;
		if (tq <= tw) {
			struct ev e = f->q[qi];

			f->q[qi] = f->q[--f->n_q];
			if (e.t > f->now)
				f->now = e.t;
			if (!f->dead[e.dst]) {
				f->delivered++;
				inart_ring_rx(f->w[e.dst], e.data, e.len, e.src_ip,
					      INART_WIRE_RING_PORT, f->now);
				poll_one(f, e.dst);
			}
		} else {
			if (tw > f->now)
				f->now = tw;
			for (int i = 0; i < f->n; i++)
				if (!f->dead[i] && inart_ring_next_deadline(f->w[i]) <= f->now)
					poll_one(f, i);
		}
	}
}

static float *inputs(int n, size_t len, uint64_t seed)
{
	struct inart_rng r;
	float *x = malloc((size_t)n * (len ? len : 1) * sizeof(float));

	assert_non_null(x);
	inart_rng_seed(&r, seed);
	for (size_t i = 0; i < (size_t)n * len; i++)
		x[i] = (float)((inart_rng_unit(&r) - 0.5) * 1000.0);
	return x;
}

/* Chunk c of N summed in ring order, one float32 rounding per addition. */
static void reference(const float *x, int n, size_t len, float *ref)
{
	for (int c = 0; c < n; c++) {
		size_t lo = (size_t)c * len / (size_t)n, hi = (size_t)(c + 1) * len / (size_t)n;

		for (size_t i = lo; i < hi; i++) {
			float v = x[(size_t)c * len + i];

			for (int j = 1; j < n; j++)
				v = v + x[(size_t)((c + j) % n) * len + i];
			ref[i] = v;
		}
	}
}

struct run_opt {
	int n;
	size_t len;
	uint16_t vpp;
	double loss, dup, reorder;
	uint64_t seed;
	int iters;
};

static void run_case(const struct run_opt *o)
{
	struct fab f;
	float *x = inputs(o->n, o->len, o->seed), *ref = malloc((o->len + 1) * sizeof(float)),
	      *got = malloc((o->len + 1) * sizeof(float));

	assert_non_null(ref);
	assert_non_null(got);
	fab_init(&f, o->n, o->vpp, o->seed);
	f.loss = o->loss;
	f.dup = o->dup;
	f.reorder = o->reorder;
	for (int it = 1; it <= o->iters; it++) {
		for (size_t i = 0; i < (size_t)o->n * o->len; i++)
			x[i] = x[i] * 0.5f + (float)it;
		reference(x, o->n, o->len, ref);
		for (int i = 0; i < o->n; i++)
			assert_int_equal(
			    inart_ring_begin(f.w[i], x + (size_t)i * o->len, o->len, (uint32_t)it),
			    0);
		assert_int_equal(fab_run(&f, f.now + 5000000000ull), 0);
		for (int i = 0; i < o->n; i++) {
			struct inart_ring_stats st;
			int which;

			if (!inart_ring_done(f.w[i]))
				fail_msg(
				    "n=%d len=%zu loss=%g seed=%llu iter %d: worker %d not done "
				    "(failed %d)",
				    o->n, o->len, o->loss, (unsigned long long)o->seed, it, i,
				    inart_ring_failed(f.w[i], &which));
			assert_int_equal(inart_ring_result(f.w[i], got, o->len), 0);
			if (o->len > 0 && memcmp(got, ref, o->len * sizeof(float)) != 0)
				fail_msg("n=%d len=%zu seed=%llu: worker %d result differs", o->n,
					 o->len, (unsigned long long)o->seed, i);
			inart_ring_stats(f.w[i], &st);
			assert_int_equal(st.foreign, 0);
			assert_int_equal(st.dropped, 0);
		}
	}
	/* exactly once: every worker applied each message of each step once */
	for (int i = 0; i < o->n; i++) {
		struct inart_ring_stats st;
		uint64_t per = 0, v = o->vpp ? o->vpp : INART_WIRE_RING_MAX_VALUES;

		for (int c = 0; c < o->n; c++) {
			size_t lo = (size_t)c * o->len / (size_t)o->n,
			       hi = (size_t)(c + 1) * o->len / (size_t)o->n;

			if (c != (i + 1) % o->n) /* every chunk but the one done here... */
				per += (hi - lo + v - 1) / v;
			if (c != i) /* ...and every partial sum but our own chunk's start */
				per += (hi - lo + v - 1) / v;
		}
		inart_ring_stats(f.w[i], &st);
		assert_int_equal(st.received, per * (uint64_t)o->iters);
	}
	fab_free(&f);
	free(x);
	free(ref);
	free(got);
}

static void test_loss_free(void **state)
{
	(void)state;
	for (int n = 1; n <= 16; n++) {
		struct run_opt o = {n, 1000 + (size_t)n * 37, 0, 0, 0, 0, (uint64_t)n, 2};

		run_case(&o);
	}
}

static void test_sizes(void **state)
{
	size_t lens[] = {0, 1, 2, 3, 5, 17, 359, 360, 361, 5000};

	(void)state;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (int n = 2; n <= 5; n++) {
			struct run_opt o = {n, lens[k], 7, 0.02, 0.02, 0.1, 100 + k, 2};

			run_case(&o);
		}
}

/* One ring, all-reduces of changing sizes one after the other (its arrays
 * are kept while large enough, laid out again for each size): every
 * result exact, with loss. */
static void test_changing_sizes(void **state)
{
	const size_t lens[] = {5000, 17, 0, 20000, 361, 20000, 3};
	const int n = 4;
	float *ref = malloc((20000 + 1) * sizeof(float)),
	      *got = malloc((20000 + 1) * sizeof(float));
	struct fab f;

	(void)state;
	assert_non_null(ref);
	assert_non_null(got);
	fab_init(&f, n, 7, 11);
	f.loss = 0.02;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];
		float *x = inputs(n, len, 300 + k);

		reference(x, n, len, ref);
		for (int i = 0; i < n; i++)
			assert_int_equal(
			    inart_ring_begin(f.w[i], x + (size_t)i * len, len, (uint32_t)k + 1), 0);
		assert_int_equal(fab_run(&f, f.now + 5000000000ull), 0);
		for (int i = 0; i < n; i++) {
			assert_true(inart_ring_done(f.w[i]));
			assert_int_equal(inart_ring_result(f.w[i], got, len), 0);
			if (len > 0 && memcmp(got, ref, len * sizeof(float)) != 0)
				fail_msg("len=%zu (all-reduce %zu): worker %d result differs", len,
					 k, i);
		}
		free(x);
	}
	fab_free(&f);
	free(ref);
	free(got);
}

static void test_loss(void **state)
{
	double loss[] = {0.01, 0.05, 0.10};

	(void)state;
	for (int n = 2; n <= 16; n += 3)
		for (int l = 0; l < 3; l++)
			for (uint64_t seed = 1; seed <= 3; seed++) {
				struct run_opt o = {n, 3001, 50, loss[l], 0.0, 0.0, seed, 3};

				run_case(&o);
			}
}

static void test_dup_reorder(void **state)
{
	(void)state;
	for (int n = 2; n <= 16; n += 2)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct run_opt o = {n, 2222, 40, 0.05, 0.10, 0.30, seed + 10, 3};

			run_case(&o);
		}
}

/* One worker never answers: every other one ends with -ETIMEDOUT within
 * its give-up time of the last thing it heard, and sends a bounded number
 * of packets meanwhile. */
static void test_silent_peer(void **state)
{
	(void)state;
	for (int n = 2; n <= 8; n += 3) {
		struct fab f;
		float *x = inputs(n, 4000, 5);

		fab_init(&f, n, 100, 9);
		f.dead[n / 2] = 1;
		for (int i = 0; i < n; i++)
			assert_int_equal(inart_ring_begin(f.w[i], x + (size_t)i * 4000, 4000, 1),
					 0);
		assert_int_equal(fab_run(&f, 2000000000ull), 0);
		assert_true(f.now < 200000000ull); /* 4 give-up times */
		for (int i = 0; i < n; i++) {
			struct inart_ring_stats st;
			int which;

			if (f.dead[i])
				continue;
			assert_false(inart_ring_done(f.w[i]));
			assert_int_equal(inart_ring_failed(f.w[i], &which), -ETIMEDOUT);
			if (i == (n / 2 + 1) % n)
				assert_int_equal(which, INART_RING_SILENT_PREV);
			if (i == (n / 2 + n - 1) % n)
				assert_true(which == INART_RING_SILENT_NEXT ||
					    which == INART_RING_SILENT_PREV);
			inart_ring_stats(f.w[i], &st);
			/* a window, then the oldest message only, backing off */
			assert_true(st.sent < 16 + 200);
			assert_int_equal(inart_ring_poll(f.w[i], f.now + 1000000000ull, f.out, 64),
					 0);
		}
		fab_free(&f);
		free(x);
	}
}

/* Paced at 10 us a frame: every worker's DATA goes at that rate (each sends
 * 2 (N - 1) messages of 50 packets of 100 values), and the sums stay exact. */
static void test_paced(void **state)
{
	struct fab f;
	float *x = inputs(4, 20000, 8), *ref = malloc(20000 * sizeof(float)),
	      *got = malloc(20000 * sizeof(float));
	double frame = INART_PKT_UDP_HLEN + INART_WIRE_RING_HDR_LEN + 400, per = 300 * 10e3;

	(void)state;
	assert_non_null(ref);
	assert_non_null(got);
	fab_init(&f, 4, 100, 2);
	reference(x, 4, 20000, ref);
	for (int i = 0; i < 4; i++) {
		inart_ring_destroy(f.w[i]);
		f.w[i] = NULL;
	}
	for (int i = 0; i < 4; i++) {
		struct inart_ring_cfg c = {.job = 7,
					   .pos = (uint16_t)i,
					   .size = 4,
					   .prev_ip = IP0 + (uint32_t)((i + 3) % 4),
					   .next_ip = IP0 + (uint32_t)((i + 1) % 4),
					   .values_per_packet = 100,
					   .window = 16,
					   .retx_timeout_ns = 2000000,
					   .pace_Bps = frame * 1e5};

		f.w[i] = inart_ring_create(&c);
		assert_non_null(f.w[i]);
		assert_int_equal(inart_ring_begin(f.w[i], x + (size_t)i * 20000, 20000, 1), 0);
	}
	assert_int_equal(fab_run(&f, 1000000000ull), 0);
	/* 300 frames at 10 us, less the first burst, plus the last hops */
	if ((double)f.now < per - 5 * 10e3 || (double)f.now > 1.3 * per)
		fail_msg("paced run took %llu ns for %g ns of frames", (unsigned long long)f.now,
			 per);
	for (int i = 0; i < 4; i++) {
		struct inart_ring_stats st;

		assert_int_equal(inart_ring_result(f.w[i], got, 20000), 0);
		assert_memory_equal(got, ref, 20000 * sizeof(float));
		inart_ring_stats(f.w[i], &st);
		assert_int_equal(st.retransmitted, 0);
	}
	fab_free(&f);
	free(x);
	free(ref);
	free(got);
}

/* Queueing without loss (a shaped queue filling while pacing runs a
 * little above a hop's share, or ACKs waiting behind another hop's DATA):
 * after a steady start, every packet sent for a while waits 1.5x the path's
 * delay more, in order.  Nothing is lost, so nothing may be resent: the
 * timeout is at least 3 smoothed times to ACK (a timeout at the smoothed
 * time plus 4 variations, about the smoothed time on a steady path, fired
 * on the queue and resent hundreds of messages on the emulated network). */
static void test_queue_no_resend(void **state)
{
	struct fab f;
	size_t len = 40000;
	float *x = inputs(4, len, 9), *ref = malloc(len * sizeof(float)),
	      *got = malloc(len * sizeof(float));

	(void)state;
	assert_non_null(ref);
	assert_non_null(got);
	fab_init(&f, 4, 100, 3);
	f.spike_at = 300000; /* after 300 us of a steady 10 us path */
	f.spike_end = 400000;
	f.spike_extra = 3 * f.delay / 2;
	reference(x, 4, len, ref);
	for (int i = 0; i < 4; i++)
		assert_int_equal(inart_ring_begin(f.w[i], x + (size_t)i * len, len, 1), 0);
	assert_int_equal(fab_run(&f, 1000000000ull), 0);
	assert_true(f.now > f.spike_end); /* the queue came while the ring ran */
	for (int i = 0; i < 4; i++) {
		struct inart_ring_stats st;

		assert_int_equal(inart_ring_result(f.w[i], got, len), 0);
		assert_memory_equal(got, ref, len * sizeof(float));
		inart_ring_stats(f.w[i], &st);
		if (st.retransmitted != 0)
			fail_msg("worker %d resent %llu messages with nothing lost (%llu for "
				 "SACK holes, %llu stalled rounds)",
				 i, (unsigned long long)st.retransmitted,
				 (unsigned long long)st.fast_retx, (unsigned long long)st.stalls);
	}
	fab_free(&f);
	free(x);
	free(ref);
	free(got);
}

/* A DATA packet of job 7 in a ring of 3: step iter, from position from. */
static size_t data_pkt(uint8_t *pkt, uint32_t iter, uint16_t from)
{
	struct inart_wire_ring h = {
	    .type = INART_RING_T_DATA, .job = 7, .from = from, .size = 3, .iter = iter, .count = 4};
	float v[4] = {1, 2, 3, 4};
	size_t len;

	len = inart_wire_ring_encode(&h, v, pkt, INART_DGRAM_MAX);
	assert_true(len > 0);
	return len;
}

/* The predecessor's DATA for the next step, arriving before begin, is kept
 * and applied; DATA of the finished step is answered with ACK|DONE; older
 * steps and foreign senders are refused. */
static void test_steps(void **state)
{
	struct fab f;
	float *x = inputs(3, 900, 3), got[900];
	struct inart_ring_stats st;
	uint8_t pkt[INART_DGRAM_MAX];
	struct inart_wire_ring h;
	size_t len;
	int k;

	(void)state;
	fab_init(&f, 3, 60, 4);
	for (int i = 0; i < 3; i++)
		assert_int_equal(inart_ring_begin(f.w[i], x + (size_t)i * 900, 900, 5), 0);
	/* the second begin on a running worker: busy */
	for (int i = 0; i < 3; i++)
		assert_int_equal(inart_ring_begin(f.w[i], x, 900, 100), -EBUSY);
	assert_int_equal(fab_run(&f, 1000000000ull), 0);
	/* worker 0 starts step 10 alone; 1 gets its packets before its begin */
	assert_int_equal(inart_ring_begin(f.w[0], x, 900, 10), 0);
	assert_int_equal(inart_ring_begin(f.w[2], x + 1800, 900, 10), 0);
	fab_run(&f, f.now + 100000);
	inart_ring_stats(f.w[1], &st);
	assert_true(st.stashed > 0);
	assert_int_equal(inart_ring_begin(f.w[1], x + 900, 900, 10), 0);
	assert_int_equal(fab_run(&f, f.now + 1000000000ull), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(inart_ring_done(f.w[i]));
		assert_int_equal(inart_ring_result(f.w[i], got, 900), 0);
	}
	/* a step not after the last: refused */
	assert_int_equal(inart_ring_begin(f.w[0], x, 900, 10), -EINVAL);
	/* DATA of the finished step 10 from the predecessor: ACK|DONE */
	len = data_pkt(pkt, 10, 0);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, len, IP0, INART_WIRE_RING_PORT, f.now), 0);
	k = inart_ring_poll(f.w[1], f.now, f.out, 64);
	assert_int_equal(k, 1);
	assert_int_equal(inart_wire_ring_decode(f.out[0].data, f.out[0].len, &h, NULL),
			 INART_WIRE_OK);
	assert_int_equal(h.type, INART_RING_T_ACK);
	assert_true(h.flags & INART_RING_F_DONE);
	assert_int_equal(h.iter, 10);
	assert_int_equal(f.out[0].peer_ip, IP0);
	/* an older step: stale; a foreign address, port or position: refused */
	len = data_pkt(pkt, 5, 0);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, len, IP0, INART_WIRE_RING_PORT, f.now),
			 -ESTALE);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, len, IP0 + 2, INART_WIRE_RING_PORT, f.now),
			 -EPERM);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, len, IP0, 47470, f.now), -EPERM);
	len = data_pkt(pkt, 5, 2);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, len, IP0, INART_WIRE_RING_PORT, f.now), -EPERM);
	assert_int_equal(inart_ring_rx(f.w[1], pkt, 7, IP0, INART_WIRE_RING_PORT, f.now), -EINVAL);
	fab_free(&f);
	free(x);
}

static void test_bad_input(void **state)
{
	struct inart_ring_cfg c = {0};
	struct inart_ring *r;
	float x[3] = {1, NAN, 2}, y[3] = {1, INFINITY, 2};

	(void)state;
	assert_null(inart_ring_create(&c)); /* size 0 */
	c.size = 2;
	c.pos = 2;
	assert_null(inart_ring_create(&c));
	c.pos = 1;
	c.values_per_packet = INART_WIRE_RING_MAX_VALUES + 1;
	assert_null(inart_ring_create(&c));
	c.values_per_packet = 0;
	r = inart_ring_create(&c);
	assert_non_null(r);
	assert_int_equal(inart_ring_begin(r, x, 3, 1), -EINVAL);
	assert_int_equal(inart_ring_begin(r, y, 3, 1), -EINVAL);
	assert_int_equal(inart_ring_begin(r, NULL, 3, 1), -EINVAL);
	assert_int_equal(inart_ring_result(r, x, 3), -EINVAL); /* nothing begun: n 0 */
	assert_false(inart_ring_done(r));
	inart_ring_destroy(r);
	inart_ring_destroy(NULL);
}

/* The ring packet format (wire.h): every refusal of the decoder. */
static void test_wire(void **state)
{
	struct inart_wire_ring g, h = {.type = INART_RING_T_DATA,
				       .job = 3,
				       .from = 1,
				       .size = 4,
				       .iter = 9,
				       .seq = 12,
				       .count = 2};
	float v[2] = {0.5f, -1.0f};
	uint8_t b[128];
	const uint8_t *pl;
	size_t len;

	(void)state;
	len = inart_wire_ring_encode(&h, v, b, sizeof(b));
	assert_int_equal(len, INART_WIRE_RING_HDR_LEN + 8);
	assert_int_equal(inart_wire_ring_decode(b, len, &g, &pl), INART_WIRE_OK);
	assert_memory_equal(&g, &h, sizeof(h));
	assert_ptr_equal(pl, b + INART_WIRE_RING_HDR_LEN);
	assert_int_equal(inart_wire_ring_encode(&h, v, b, len - 1), 0);
	assert_int_equal(inart_wire_ring_decode(b, len - 1, &g, NULL), INART_WIRE_ELENGTH);
	assert_int_equal(inart_wire_ring_decode(b, 31, &g, NULL), INART_WIRE_ETRUNC);
	b[0] = 2;
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_EVERSION);
	b[0] = 1;
	b[3] = 1;
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_ERESERVED);
	b[3] = 0;
	b[1] = 3;
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_EFLAGS);
	b[1] = INART_RING_T_DATA;
	b[2] = INART_RING_F_DONE;
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_EFLAGS);
	b[2] = 0;
	b[9] = 4; /* from 4 of 4 */
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_EFANIN);
	b[9] = 1;
	b[31] = 1; /* sack on DATA */
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_ERESERVED);
	h.type = INART_RING_T_ACK;
	h.flags = INART_RING_F_DONE;
	h.sack = 0x8000000000000001ull;
	h.count = 0;
	len = inart_wire_ring_encode(&h, NULL, b, sizeof(b));
	assert_int_equal(len, INART_WIRE_RING_HDR_LEN);
	assert_int_equal(inart_wire_ring_decode(b, len, &g, NULL), INART_WIRE_OK);
	assert_memory_equal(&g, &h, sizeof(h));
	h.count = 1; /* an ACK with values */
	assert_int_equal(inart_wire_ring_encode(&h, v, b, sizeof(b)), 0);
	h.count = 0;
	h.flags = INART_RING_F_RETX;
	assert_int_equal(inart_wire_ring_encode(&h, NULL, b, sizeof(b)), 0);
}

/* The evaluator charges a ring hop's reverse arcs with its ACKs: one ACK
 * frame (headers only) per full DATA frame, as the ring core sends them. */
static void test_ack_share(void **state)
{
	double ack = INART_PKT_UDP_HLEN + INART_WIRE_RING_HDR_LEN,
	       data = ack + 4.0 * INART_WIRE_RING_MAX_VALUES;

	(void)state;
	assert_true(fabs(INART_EVAL_RING_ACK_SHARE - ack / data) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loss_free),
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_changing_sizes),
	    cmocka_unit_test(test_loss),
	    cmocka_unit_test(test_dup_reorder),
	    cmocka_unit_test(test_silent_peer),
	    cmocka_unit_test(test_steps),
	    cmocka_unit_test(test_paced),
	    cmocka_unit_test(test_queue_no_resend),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_wire),
	    cmocka_unit_test(test_ack_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
