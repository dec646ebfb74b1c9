/* Tests of worker: configuration checks, the split among trees, packets,
 * window, timeouts (probes first, values after unanswered probes), the
 * timeout's warm-up and adaptation, answers to probes and NACKs, the result
 * chain, idle probing, result handling (duplicates, old iterations, OVERFLOW
 * results, scale notices, local overflow), start scales across all-reduces;
 * then whole all-reduces of 1..130 workers against several PS cores in
 * process, through a seeded lossy network (loss, duplication, reordering),
 * checking bit-identical int32 sums on every result packet and float results
 * within the documented bound. */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/ps.h"
#include "dp/quant.h"
#include "dp/worker.h"

#define MAXOUT 64

/* inart_worker_rx of a datagram from the PS of its tree (the test configs
 * put tree t's PS at 0x0a020000 + t). */
static int wrx(struct inart_worker *w, const uint8_t *buf, size_t len, uint64_t now)
{
	uint32_t tree = buf != NULL && len >= 10 ? (uint32_t)(buf[8] << 8 | buf[9]) : 0;

	return inart_worker_rx(w, buf, len, 0x0a020000u + tree, INART_WIRE_UDP_PORT, now);
}

static uint8_t obuf[MAXOUT][INART_DGRAM_MAX];
static struct inart_dgram out[MAXOUT];

static void out_init(void)
{
	for (int i = 0; i < MAXOUT; i++)
		out[i].data = obuf[i];
}

static int32_t be32(const uint8_t *p)
{
	return (int32_t)inart_get_be32(p);
}

static void base_cfg(struct inart_worker_cfg *c, uint16_t rank, uint16_t n_workers, int n_trees)
{
	memset(c, 0, sizeof(*c));
	c->job = 3;
	c->rank = rank;
	c->n_workers = n_workers;
	c->n_trees = (uint16_t)n_trees;
	for (int t = 0; t < n_trees; t++) {
		c->trees[t].ps_ip = 0x0a020000u + (uint32_t)t;
		c->trees[t].label = 100u + (uint32_t)t;
		c->trees[t].share = 1.0 / n_trees;
	}
	c->retx_timeout_ns = 1000;
}

static void test_create(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;

	(void)state;
	assert_null(inart_worker_create(NULL));
	base_cfg(&c, 2, 2, 1);
	assert_null(inart_worker_create(&c)); /* rank >= n_workers */
	base_cfg(&c, 0, 0, 1);
	assert_null(inart_worker_create(&c));
	base_cfg(&c, 0, INART_WIRE_MAX_CONTRIB + 1, 1);
	assert_null(inart_worker_create(&c));
	base_cfg(&c, 0, 2, 0);
	assert_null(inart_worker_create(&c));
	base_cfg(&c, 0, 2, 1);
	c.n_trees = INART_WORKER_MAX_TREES + 1;
	assert_null(inart_worker_create(&c));
	base_cfg(&c, 0, 2, 2);
	c.trees[1].share = -0.1;
	assert_null(inart_worker_create(&c));
	c.trees[1].share = NAN;
	assert_null(inart_worker_create(&c));
	c.trees[0].share = c.trees[1].share = 0;
	assert_null(inart_worker_create(&c));
	assert_int_equal(errno, EINVAL);
	base_cfg(&c, 0, 2, 1);
	c.values_per_packet = (uint16_t)(inart_wire_max_values(1) + 1);
	assert_null(inart_worker_create(&c));
	c.values_per_packet = (uint16_t)inart_wire_max_values(1);
	w = inart_worker_create(&c);
	assert_non_null(w);
	inart_worker_destroy(w);
	base_cfg(&c, 0, 2, 1);
	c.window = 9;
	c.slots = 8;
	assert_null(inart_worker_create(&c));
	c.window = 8;
	w = inart_worker_create(&c);
	assert_non_null(w);
	inart_worker_destroy(w);
	inart_worker_destroy(NULL);
}

static void test_split(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	float x[1000] = {0};
	size_t off, len;
	uint32_t nc;

	(void)state;
	base_cfg(&c, 1, 3, 4);
	c.trees[0].share = 0.5;
	c.trees[1].share = 0;
	c.trees[2].share = 0.3;
	c.trees[3].share = 0.2;
	c.values_per_packet = 2;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_tree_range(w, 0, &off, &len, &nc), -EINVAL); /* no begin */
	assert_int_equal(inart_worker_begin(w, x, 10, 0), 0);
	assert_int_equal(inart_worker_tree_range(w, 0, &off, &len, &nc), 0);
	assert_true(off == 0 && len == 5 && nc == 3);
	assert_int_equal(inart_worker_tree_range(w, 1, &off, &len, &nc), 0);
	assert_true(off == 5 && len == 0 && nc == 0);
	assert_int_equal(inart_worker_tree_range(w, 2, &off, &len, &nc), 0);
	assert_true(off == 5 && len == 3 && nc == 2);
	assert_int_equal(inart_worker_tree_range(w, 3, &off, &len, &nc), 0);
	assert_true(off == 8 && len == 2 && nc == 1);
	assert_int_equal(inart_worker_tree_range(w, 4, &off, &len, &nc), -EINVAL);
	inart_worker_destroy(w);
	/* property: ranges tile [0, n), zero shares are empty, sizes follow
	 * the shares within one value */
	{
		struct inart_rng r;

		inart_rng_seed(&r, 5);
		for (int trial = 0; trial < 500; trial++) {
			int nt = 1 + (int)inart_rng_below(&r, 8);
			size_t n = inart_rng_below(&r, 1000), at = 0;
			double tot = 0;

			base_cfg(&c, 0, 1, nt);
			for (int t = 0; t < nt; t++) {
				c.trees[t].share = inart_rng_below(&r, 3) ? inart_rng_unit(&r) : 0;
				tot += c.trees[t].share;
			}
			if (tot == 0) {
				c.trees[0].share = 1;
				tot = 1;
			}
			c.values_per_packet = (uint16_t)(1 + inart_rng_below(&r, 50));
			w = inart_worker_create(&c);
			assert_non_null(w);
			assert_int_equal(inart_worker_begin(w, x, n, 0), 0);
			for (int t = 0; t < nt; t++) {
				assert_int_equal(inart_worker_tree_range(w, t, &off, &len, &nc), 0);
				assert_true(off == at);
				at += len;
				if (c.trees[t].share == 0)
					assert_true(len == 0);
				assert_true(fabs((double)len - n * c.trees[t].share / tot) <= 1.0);
				assert_true(nc ==
					    (len + c.values_per_packet - 1) / c.values_per_packet);
			}
			assert_true(at == n);
			inart_worker_destroy(w);
		}
	}
}

/* Decode out[i] as a DATA packet. */
static const uint8_t *data_pkt(int i, struct inart_wire_hdr *h)
{
	const uint8_t *pl;

	assert_int_equal(inart_wire_decode(out[i].data, out[i].len, h, &pl), INART_WIRE_OK);
	assert_true(h->flags & INART_F_DATA);
	return pl;
}

/* A RESULT for the worker (n_workers 2 unless given). */
static size_t result_pkt(uint8_t *buf, uint16_t fan_in, uint32_t iter, uint16_t tree, uint32_t seq,
			 int8_t scale, uint8_t flags, uint64_t bits, const int32_t *v, int count)
{
	struct inart_wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.flags = (uint8_t)(INART_F_RESULT | flags);
	h.bitmap_words = 1;
	h.scale_exp = scale;
	h.job = 3;
	h.tree = tree;
	h.fan_in = fan_in;
	h.iter = iter;
	h.seq = seq;
	h.count = (uint16_t)count;
	h.bitmap[0] = bits;
	return inart_wire_encode(&h, v, buf, INART_DGRAM_MAX);
}

/* inart_worker_rx of result_pkt(fan-in 2, tree 0, ...) at now. */
static int rx_res(struct inart_worker *w, uint32_t iter, uint32_t seq, int8_t scale, uint8_t flags,
		  uint64_t bits, const int32_t *v, int count, uint64_t now)
{
	uint8_t buf[INART_DGRAM_MAX];
	size_t len = result_pkt(buf, 2, iter, 0, seq, scale, flags, bits, v, count);

	return wrx(w, buf, len, now);
}

static void test_packets_window(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	struct inart_worker_stats st;
	struct inart_wire_hdr h;
	const uint8_t *pl;
	float x[10], res[10];
	uint8_t buf[INART_DGRAM_MAX];
	int32_t v[4] = {0};
	size_t len;

	(void)state;
	out_init();
	for (int i = 0; i < 10; i++)
		x[i] = (float)i + 0.25f;
	base_cfg(&c, 1, 2, 1);
	c.values_per_packet = 3; /* chunks: [0,3) [3,6) [6,9) [9,10) */
	c.window = 2;
	c.slots = 3;
	c.retx_timeout_ns = 1000;
	c.scale_exp = 4;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_next_deadline(w), UINT64_MAX);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 0);
	assert_int_equal(inart_worker_result(w, res, 10), -EAGAIN);
	assert_int_equal(inart_worker_begin(w, NULL, 10, 0), -EINVAL);
	assert_int_equal(inart_worker_tree_state(w, 0, 0), INART_WORKER_TREE_IDLE);
	assert_int_equal(inart_worker_tree_state(w, 1, 0), -EINVAL);
	assert_int_equal(inart_worker_tree_state(NULL, 0, 0), -EINVAL);
	assert_int_equal(inart_worker_begin(w, x, 10, 7), 0);
	assert_int_equal(inart_worker_begin(w, x, 10, 8), -EBUSY);
	assert_int_equal(inart_worker_next_deadline(w), 0);
	assert_int_equal(inart_worker_done(w), 0);
	/* window 2: seqs 0 and 1 */
	assert_int_equal(inart_worker_poll(w, 100, out, MAXOUT), 2);
	for (int i = 0; i < 2; i++) {
		pl = data_pkt(i, &h);
		assert_int_equal(h.flags, INART_F_DATA);
		assert_int_equal(h.job, 3);
		assert_int_equal(h.tree, 0);
		assert_int_equal(h.fan_in, 2);
		assert_int_equal(h.label, 100);
		assert_int_equal(h.iter, 7);
		assert_int_equal(h.seq, i);
		assert_int_equal(h.slot, i);
		assert_int_equal(h.scale_exp, 4);
		assert_int_equal(h.count, 3);
		assert_true(h.bitmap[0] == 2);
		assert_int_equal(out[i].peer_ip, 0x0a020000u);
		assert_int_equal(out[i].peer_port, INART_WIRE_UDP_PORT);
		for (int k = 0; k < 3; k++)
			assert_int_equal(be32(pl + 4 * k), (3 * i + k) * 16 + 4);
	}
	assert_int_equal(inart_worker_poll(w, 100, out, MAXOUT), 0);
	assert_int_equal(inart_worker_next_deadline(w), 1100);
	/* timeout: a probe for each chunk first (header only, our rank, along
	 * the tree's label: the PS, or a switch keeping the result, says what
	 * it holds); the tree's timeout doubles (it expired before any sample:
	 * Karn) */
	assert_int_equal(inart_worker_poll(w, 1099, out, MAXOUT), 0);
	assert_int_equal(inart_worker_poll(w, 1100, out, MAXOUT), 2);
	for (int i = 0; i < 2; i++) {
		data_pkt(i, &h);
		assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
		assert_int_equal(h.label, 100);
		assert_int_equal(h.seq, i);
		assert_int_equal(h.count, 0);
		assert_true(h.bitmap[0] == 2);
		assert_int_equal(out[i].peer_ip, 0x0a020000u);
	}
	/* unanswered probes are repeated, never more often; once nothing was
	 * heard from the PS for INART_WORKER_STALL_RTOS timeouts the tree is
	 * stalled (a dead peer): only its oldest chunk is acted on, at waits
	 * that double (exponential backoff), its values (RETX, label 0,
	 * straight to the PS) every INART_WORKER_STALL_VALUES-th round; time
	 * always moves on */
	{
		uint64_t t = 1100, gap0 = 0, last0 = 1100, last_seq1 = 0, stall_from;
		int values0 = 0, late = 0;

		while (t < 3000000) {
			uint64_t d = inart_worker_next_deadline(w);
			int k;

			if (!(d > t && d < 1000000000))
				fail_msg("stall: next deadline %llu after poll at %llu",
					 (unsigned long long)d, (unsigned long long)t);
			t = d;
			k = inart_worker_poll(w, t, out, MAXOUT);
			for (int i = 0; i < k; i++) {
				data_pkt(i, &h);
				assert_true(h.seq < 2);
				if (t >= 2000000)
					late++;
				if (h.seq == 1) {
					last_seq1 = t;
					continue;
				}
				assert_true(t - last0 >= gap0);
				gap0 = t - last0;
				last0 = t;
				if (h.flags & INART_F_NACK)
					continue;
				assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX);
				assert_int_equal(h.label, 0);
				assert_int_equal(h.count, 3);
				values0++;
			}
		}
		inart_worker_stats(w, &st);
		/* stalled 2 timeouts (the tree's, doubled once: Karn) after the
		 * first send: the younger chunk is left alone from then on */
		stall_from = 100 + INART_WORKER_STALL_RTOS * 2000;
		assert_true(last_seq1 < stall_from);
		/* what a timed-out call reports (inart_ctx_trees): silent */
		assert_int_equal(inart_worker_tree_state(w, 0, t), INART_WORKER_TREE_SILENT);
		assert_true(st.stalls >= 8);
		assert_true(values0 >= 2);
		/* the waits doubled: in the last third of the time, two packets */
		assert_true(late <= 2);
		assert_int_equal(st.retransmitted,
				 (uint64_t)values0 + (st.sent - 2 - (uint64_t)values0));
		assert_int_equal(st.retx_asked, 0);
	}
	/* result for seq 1 first: the window does not move (seq 0 pending) */
	v[0] = 1;
	v[1] = 2;
	v[2] = 3;
	len = result_pkt(buf, 2, 7, 0, 1, 4, 0, 3, v, 3);
	assert_int_equal(wrx(w, buf, len, 0), 0);
	assert_int_equal(wrx(w, buf, len, 0), -EALREADY);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 0);
	/* result of seq 0: the window moves to 2, 3; the PS was heard */
	assert_int_equal(rx_res(w, 7, 0, 4, 0, 3, v, 3, 0), 0);
	assert_int_equal(inart_worker_tree_state(w, 0, 0), INART_WORKER_TREE_ANSWERED);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 2);
	data_pkt(0, &h);
	assert_int_equal(h.seq, 2);
	assert_int_equal(h.slot, 2);
	pl = data_pkt(1, &h);
	assert_int_equal(h.seq, 3);
	assert_int_equal(h.slot, 0); /* 3 % 3 */
	assert_int_equal(h.count, 1);
	assert_int_equal(be32(pl), 9 * 16 + 4);
	/* bad results: wrong count, incomplete bitmap without OVERFLOW, wrong
	 * job/fan-in, seq out of range, tree out of range, garbage */
	assert_int_equal(rx_res(w, 7, 3, 4, 0, 3, v, 2, 0), -EINVAL);
	assert_int_equal(rx_res(w, 7, 3, 4, 0, 1, v, 1, 0), -EINVAL);
	len = result_pkt(buf, 3, 7, 0, 3, 4, 0, 7, v, 1);
	assert_int_equal(wrx(w, buf, len, 0), -EINVAL);
	assert_int_equal(rx_res(w, 7, 4, 4, 0, 3, v, 1, 0), -EINVAL);
	len = result_pkt(buf, 2, 7, 1, 3, 4, 0, 3, v, 1);
	assert_int_equal(wrx(w, buf, len, 0), -EINVAL);
	assert_int_equal(wrx(w, buf, 5, 0), -EINVAL);
	assert_int_equal(wrx(w, NULL, 5, 0), -EINVAL);
	/* a DATA packet is not for workers */
	assert_int_equal(wrx(w, out[0].data, out[0].len, 0), -EINVAL);
	/* an old iteration */
	assert_int_equal(rx_res(w, 6, 3, 4, 0, 3, v, 1, 0), -EALREADY);
	/* finish */
	assert_int_equal(rx_res(w, 7, 2, 4, 0, 3, v, 3, 0), 0);
	v[0] = -8;
	assert_int_equal(rx_res(w, 7, 3, 4, 0, 3, v, 1, 0), 0);
	assert_int_equal(inart_worker_done(w), 1);
	assert_int_equal(inart_worker_next_deadline(w), UINT64_MAX);
	assert_int_equal(inart_worker_poll(w, 1u << 30, out, MAXOUT), 0);
	assert_int_equal(inart_worker_result(w, res, 9), -EINVAL);
	assert_int_equal(inart_worker_result(w, res, 10), 0);
	for (int i = 0; i < 9; i++)
		assert_true(res[i] == (float)(i % 3 + 1) / 16.0f);
	assert_true(res[9] == -0.5f);
	{
		int s;

		assert_int_equal(inart_worker_value_scale(w, 9, &s), 0);
		assert_int_equal(s, 4);
		assert_int_equal(inart_worker_value_scale(w, 10, &s), -EINVAL);
	}
	inart_worker_stats(w, &st);
	assert_int_equal(st.results, 4);
	assert_int_equal(st.duplicates, 2);
	assert_int_equal(st.dropped, 8);
	/* iterations must increase; NaN refused; empty buffers finish at once */
	assert_int_equal(inart_worker_begin(w, x, 10, 7), -EINVAL);
	assert_int_equal(inart_worker_begin(w, x, 10, 6), -EINVAL);
	x[4] = NAN;
	assert_int_equal(inart_worker_begin(w, x, 10, 8), -EINVAL);
	x[4] = INFINITY;
	assert_int_equal(inart_worker_begin(w, x, 10, 8), -EINVAL);
	assert_int_equal(inart_worker_begin(w, x, 0, 8), 0);
	assert_int_equal(inart_worker_done(w), 1);
	assert_int_equal(inart_worker_result(w, NULL, 0), 0);
	inart_worker_destroy(w);
}

/* A RESULT (or NACK) for the worker with a given prev word. */
static size_t result_pkt_prev(uint8_t *buf, uint16_t fan_in, uint32_t iter, uint32_t seq,
			      int8_t scale, uint8_t flags, uint64_t bits, const int32_t *v,
			      int count, uint32_t prev)
{
	struct inart_wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.flags = (uint8_t)(INART_F_RESULT | flags);
	h.bitmap_words = 1;
	h.scale_exp = scale;
	h.job = 3;
	h.fan_in = fan_in;
	h.iter = iter;
	h.seq = seq;
	h.count = (uint16_t)count;
	h.prev = prev;
	h.bitmap[0] = bits;
	return inart_wire_encode(&h, v, buf, INART_DGRAM_MAX);
}

/* inart_worker_rx of result_pkt_prev(fan-in 2, iteration 1, ...) at now. */
static int rx_prev(struct inart_worker *w, uint32_t seq, int8_t scale, uint8_t flags, uint64_t bits,
		   const int32_t *v, int count, uint32_t prev, uint64_t now)
{
	uint8_t buf[INART_DGRAM_MAX];
	size_t len = result_pkt_prev(buf, 2, 1, seq, scale, flags, bits, v, count, prev);

	return wrx(w, buf, len, now);
}

/* Rank 0 of 2 on one tree, one value a packet, the given window, a 1 ms
 * timeout; begun on x[0..n) and polled at 0 (every chunk the window
 * allows is sent). */
static struct inart_worker *small_worker(float *x, int n, int window)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;

	out_init();
	base_cfg(&c, 0, 2, 1);
	c.values_per_packet = 1;
	c.window = (uint16_t)window;
	c.retx_timeout_ns = 1000000;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, (size_t)n, 1), 0);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), window < n ? window : n);
	return w;
}

/* Rank 0 of 2 on one tree, one value a packet, one chunk at a time, a 1 ms
 * initial timeout. */
static void one_cfg(struct inart_worker_cfg *c)
{
	out_init();
	base_cfg(c, 0, 2, 1);
	c->values_per_packet = 1;
	c->window = 1;
	c->slots = 1;
	c->retx_timeout_ns = 1000000;
}

/* Run one chunk at a time (window 1), each answered 100 us after it was
 * sent, for `answered` chunks; the next one gets no answer.  Returns the
 * time of its send; out[0] holds what the worker sends at its first
 * timeout, *at that time. */
static uint64_t one_by_one(struct inart_worker *w, int answered, uint64_t *at)
{
	int32_t v[1] = {0};
	uint64_t t = 0;

	for (int s = 0; s < answered; s++) {
		assert_int_equal(inart_worker_poll(w, t, out, MAXOUT), 1);
		t += 100000;
		assert_int_equal(rx_prev(w, (uint32_t)s, 16, 0, 3, v, 1, 0, t), 0);
	}
	assert_int_equal(inart_worker_poll(w, t, out, MAXOUT), 1);
	*at = inart_worker_next_deadline(w);
	assert_true(*at > t);
	assert_int_equal(inart_worker_poll(w, *at, out, MAXOUT), 1);
	return t;
}

/* The timeout: the initial one until the pipeline filled (8 samples), then
 * max(srtt + 4 rttvar, 3 srtt) from the measured time to result; when it
 * expires a probe goes first, and the tree's timeout doubles (Karn). */
static void test_timers(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	struct inart_wire_hdr h;
	float x[12] = {0};
	uint64_t sent, at;

	(void)state;
	one_cfg(&c);
	/* 3 samples: still the initial timeout (not 3 srtt = 300 us); first
	 * comes the idle probe, 4 inter-result gaps (400 us) after the last
	 * result */
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 12, 1), 0);
	sent = one_by_one(w, 3, &at);
	assert_true(at == sent + 400000);
	data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
	assert_int_equal(h.seq, 3);
	inart_worker_destroy(w);
	/* 8 samples of 100 us: 3 srtt = 300 us (the variance term is below it) */
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 12, 1), 0);
	sent = one_by_one(w, 8, &at);
	assert_true(at == sent + 300000);
	data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
	assert_int_equal(h.seq, 8);
	/* the PS says it misses our values: they go again at once */
	{
		uint8_t buf[INART_DGRAM_MAX];
		size_t len =
		    result_pkt_prev(buf, 2, 1, 8, 16, INART_F_NACK | INART_F_RETX, 3, NULL, 0, 0);

		assert_int_equal(wrx(w, buf, len, at + 1), 0);
		assert_int_equal(inart_worker_poll(w, at + 1, out, MAXOUT), 1);
		data_pkt(0, &h);
		assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX);
		assert_int_equal(h.seq, 8);
	}
	inart_worker_destroy(w);
}

/* Pacing: a tree with pace_Bps sends INART_WORKER_PACE_BURST frames at
 * once, then one frame time apart (frame = UDP header + datagram), the next
 * deadline is the next frame's time, the window still limits, and a resend
 * of values is charged too. */
static void test_pacing(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	struct inart_wire_hdr h;
	float x[40] = {0};
	uint64_t now = 1000000, frame;
	int n;

	(void)state;
	out_init();
	base_cfg(&c, 0, 2, 1);
	c.values_per_packet = 1;
	c.window = 8;
	c.slots = 8;
	c.retx_timeout_ns = 1000000000ull;
	/* a frame of one value: 42 + header + 4 bytes, at 1e6 B/s: 1 ns per byte */
	c.trees[0].pace_Bps = 1e9;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 40, 1), 0);
	frame = INART_PKT_UDP_HLEN + inart_wire_hdr_len(1) + 4;
	n = inart_worker_poll(w, now, out, MAXOUT);
	assert_int_equal(n, INART_WORKER_PACE_BURST + 1);
	/* the credit is used: the next one frame time after the last */
	assert_true(inart_worker_next_deadline(w) == now + frame);
	assert_int_equal(inart_worker_poll(w, now + frame - 1, out, MAXOUT), 0);
	assert_int_equal(inart_worker_poll(w, now + frame, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.seq, INART_WORKER_PACE_BURST + 1);
	/* late by 2 frames: both go now, and no more */
	assert_int_equal(inart_worker_poll(w, now + 3 * frame, out, MAXOUT), 2);
	/* the window (8) stops it whatever the pace */
	assert_int_equal(inart_worker_poll(w, now + 100 * frame, out, MAXOUT), 0);
	assert_true(inart_worker_next_deadline(w) > now + 100 * frame);
	inart_worker_destroy(w);
	/* unpaced: the whole window at once */
	c.trees[0].pace_Bps = 0;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 40, 1), 0);
	assert_int_equal(inart_worker_poll(w, now, out, MAXOUT), 8);
	inart_worker_destroy(w);
}

/* Each all-reduce starts with the initial timeout again (its pipeline fill
 * is not the previous one's steady state): after 8 samples of 100 us the
 * timeout is 300 us, but the first chunk of the next all-reduce does not
 * time out after 300 us. */
static void test_warmup_each(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	uint8_t buf[INART_DGRAM_MAX];
	float x[8] = {0};
	int32_t v[1] = {0};
	uint64_t t = 0;

	(void)state;
	one_cfg(&c);
	w = inart_worker_create(&c);
	assert_non_null(w);
	for (uint32_t it = 1; it <= 2; it++) {
		assert_int_equal(inart_worker_begin(w, x, 8, it), 0);
		for (uint32_t s = 0; s < 8; s++) {
			size_t len;

			assert_int_equal(inart_worker_poll(w, t, out, MAXOUT), 1);
			/* the steady state's 300 us timeout would probe at 300 us
			   (the next all-reduce's idle probing of its stuck window
			   comes at 4 gaps, 400 us) */
			if (it == 2 && s == 0)
				assert_int_equal(inart_worker_poll(w, t + 350000, out, MAXOUT), 0);
			t += 100000;
			len = result_pkt_prev(buf, 2, it, s, 16, 0, 3, v, 1, 0);
			assert_int_equal(wrx(w, buf, len, t), 0);
		}
		assert_true(inart_worker_done(w));
	}
	inart_worker_destroy(w);
}

/* Answers to probes and NACKs: a NACK naming us gets our values again, one
 * without us says the PS holds them (then only probes), a result ends the
 * chunk; multicast NACK rounds are acted on once; an answer's scale below
 * ours moves us to it; an answer names the PS's last result sent down. */
static void test_probes_nacks(void **state)
{
	struct inart_worker *w;
	struct inart_worker_stats st;
	struct inart_wire_hdr h;
	uint8_t buf[INART_DGRAM_MAX];
	float x[6] = {1, 2, 3, 4, 5, 6};
	int32_t v[1] = {7};
	size_t len;
	int k;

	(void)state;
	w = small_worker(x, 6, 6);
	/* a unicast NACK naming us (rank 0): our values again, at once */
	assert_int_equal(rx_prev(w, 0, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0, 0, 10), 0);
	assert_int_equal(inart_worker_next_deadline(w), 10);
	assert_int_equal(inart_worker_poll(w, 10, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX);
	assert_int_equal(h.seq, 0);
	assert_int_equal(h.count, 1);
	assert_int_equal(h.label, 0);
	/* a multicast NACK (round 1) naming us: once; its copy asks nothing;
	 * round 2 again */
	len = result_pkt_prev(buf, 2, 1, 1, 16, INART_F_NACK, 3, NULL, 0, 1);
	assert_int_equal(wrx(w, buf, len, 20), 0);
	assert_int_equal(inart_worker_poll(w, 20, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX);
	assert_int_equal(wrx(w, buf, len, 30), 0);
	assert_int_equal(inart_worker_poll(w, 30, out, MAXOUT), 0);
	assert_int_equal(rx_prev(w, 1, 16, INART_F_NACK, 3, NULL, 0, 2, 40), 0);
	assert_int_equal(inart_worker_poll(w, 40, out, MAXOUT), 1);
	/* a multicast NACK not naming us: nothing to send */
	assert_int_equal(rx_prev(w, 2, 16, INART_F_NACK, 2, NULL, 0, 1, 50), 0);
	assert_int_equal(inart_worker_poll(w, 50, out, MAXOUT), 0);
	/* a unicast answer without us: the PS holds our values; from then on
	 * its timeouts send probes only, however many go unanswered */
	assert_int_equal(rx_prev(w, 3, 16, INART_F_NACK | INART_F_RETX, 2, NULL, 0, 0, 60), 0);
	for (int i = 0; i < 8; i++) {
		uint64_t d = inart_worker_next_deadline(w);

		k = inart_worker_poll(w, d, out, MAXOUT);
		for (int j = 0; j < k; j++) {
			data_pkt(j, &h);
			if (h.seq == 3)
				assert_true(h.flags & INART_F_NACK);
		}
	}
	/* a unicast result ends chunk 4 (and names chunk 3 as the result sent
	 * before it: probe it now) */
	assert_int_equal(rx_prev(w, 4, 16, INART_F_RETX, 3, v, 1, 1 + 3, 100000000), 0);
	k = inart_worker_poll(w, 100000000, out, MAXOUT);
	{
		int found = 0;

		for (int j = 0; j < k; j++) {
			data_pkt(j, &h);
			found |= h.seq == 3 && (h.flags & INART_F_NACK);
		}
		assert_true(found);
	}
	/* an answer at a lower scale: chunk 5 joins it (a first transmission) */
	assert_int_equal(rx_prev(w, 5, 8, INART_F_NACK | INART_F_RETX, 2, NULL, 0, 0, 100000001),
			 0);
	assert_int_equal(inart_worker_poll(w, 100000001, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA);
	assert_int_equal(h.seq, 5);
	assert_int_equal(h.scale_exp, 8);
	/* a multicast NACK at a lower scale naming us: our values at our scale */
	assert_int_equal(rx_prev(w, 2, 4, INART_F_NACK, 1, NULL, 0, 2, 100000002), 0);
	assert_int_equal(inart_worker_poll(w, 100000002, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX);
	assert_int_equal(h.scale_exp, 16);
	inart_worker_stats(w, &st);
	assert_int_equal(st.retx_asked, 4);
	assert_true(st.nacks >= 6);
	inart_worker_destroy(w);
}

/* Whether out[0..k) holds our values of chunk seq again (DATA|RETX). */
static int resent(int k, uint32_t seq)
{
	struct inart_wire_hdr h;
	int found = 0;

	for (int j = 0; j < k; j++) {
		data_pkt(j, &h);
		found |= h.seq == seq && h.flags == (INART_F_DATA | INART_F_RETX) && h.count == 1;
	}
	return found;
}

/* Held NACKs for chunks 0..3 at 10..13 ns: each resent at once, the credit
 * of a window of 8 (4 resends) spent. */
static void spend_credit(struct inart_worker *w)
{
	for (uint32_t s = 0; s < 4; s++) {
		assert_int_equal(rx_prev(w, s, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0,
					 INART_WIRE_NACK_HELD, 10 + s),
				 0);
		assert_int_equal(inart_worker_poll(w, 10 + s, out, MAXOUT), 1);
		assert_true(resent(1, s));
	}
}

/* Held NACKs (issue 12): a NACK naming us marked INART_WIRE_NACK_HELD (the
 * PS cannot show our values lost) resends them only while the tree's credit
 * lasts (half a window of resends, refilled by results and by timeouts
 * without any); without credit a probe goes later instead.  An unmarked
 * NACK (the loss is shown) resends at once, credit or not. */
static void test_held(void **state)
{
	struct inart_worker *w;
	float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint64_t held, deferred, t;
	int k;

	(void)state;
	w = small_worker(x, 8, 8); /* window 8: credit for 4 resends */
	spend_credit(w);
	/* the fifth: no credit, nothing now, a probe later */
	assert_int_equal(
	    rx_prev(w, 4, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0, INART_WIRE_NACK_HELD, 14),
	    0);
	assert_int_equal(inart_worker_poll(w, 14, out, MAXOUT), 0);
	inart_worker_held_stats(w, &held, &deferred);
	assert_int_equal(held, 5);
	assert_int_equal(deferred, 1);
	t = inart_worker_next_deadline(w);
	assert_true(t > 14 && t < UINT64_MAX);
	/* a multicast held NACK (round 1) naming us: no credit either */
	assert_int_equal(rx_prev(w, 6, 16, INART_F_NACK, 1, NULL, 0, INART_WIRE_NACK_HELD | 1, 15),
			 0);
	assert_int_equal(inart_worker_poll(w, 15, out, MAXOUT), 0);
	/* an unmarked NACK naming us: the loss is shown, resent at once */
	assert_int_equal(rx_prev(w, 5, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0, 0, 16), 0);
	assert_int_equal(inart_worker_poll(w, 16, out, MAXOUT), 1);
	assert_true(resent(1, 5));
	/* two timeouts (1 ms) without a result refill two resends' worth */
	t = 2000100;
	assert_int_equal(
	    rx_prev(w, 4, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0, INART_WIRE_NACK_HELD, t), 0);
	k = inart_worker_poll(w, t, out, MAXOUT);
	assert_true(resent(k, 4));
	inart_worker_held_stats(w, &held, &deferred);
	assert_int_equal(held, 7);
	inart_worker_destroy(w);
}

/* The credit's floor is one resend per timeout whether or not results come
 * in it: results trickling in (each paying 1/8 of a resend) must not keep
 * the floor from paying.  Before, the floor was counted from the last
 * result: at the end of an all-reduce whose last chunks a switch lost
 * (netns_xdp_agg, "all-reduce exact while t0 loses its state"), each
 * worker's held resends waited for results that only the other workers'
 * refused resends could bring, until the workers' 20 s timeout. */
static void test_held_floor(void **state)
{
	struct inart_worker *w;
	float x[16] = {0};
	int k;

	(void)state;
	w = small_worker(x, 16, 8); /* window 8: credit for 4 resends, timeout 1 ms */
	spend_credit(w);
	/* the credit spent; results of the resent chunks (no RTT samples: the
	 * timeout stays 1 ms) every 0.7 ms, three of them: 3/8 of a resend */
	for (uint32_t s = 0; s < 3; s++)
		assert_int_equal(
		    rx_prev(w, s, 16, 0, 3, (int32_t[1]){0}, 1, 0, 700000 * (uint64_t)(s + 1)), 0);
	/* 2.2 ms after the credit's first use: two timeouts' floor pays */
	assert_int_equal(rx_prev(w, 4, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0,
				 INART_WIRE_NACK_HELD, 2200000),
			 0);
	k = inart_worker_poll(w, 2200000, out, MAXOUT);
	assert_true(resent(k, 4));
	inart_worker_destroy(w);
}

/* A worker of rank 0 of 2 with one tree, one value per chunk, n chunks,
 * the given window; every chunk the window allows is sent at 0 and chunk 0's
 * result arrives at 100 us. */
static struct inart_worker *chain_worker(float *x, int n, int window)
{
	struct inart_worker *w = small_worker(x, n, window);

	assert_int_equal(rx_prev(w, 0, 16, 0, 3, (int32_t[1]){0}, 1, 0, 100000), 0);
	return w;
}

/* Results of one PS come in the order it sent them and name the one before:
 * a result naming a chunk still waiting reveals a lost result, which is
 * probed at once, together with the older chunks in flight that waited
 * longer than the time to result when the tree has nothing new to send. */
static void test_chain(void **state)
{
	struct inart_worker *w;
	struct inart_worker_stats st;
	struct inart_wire_hdr h;
	float x[8] = {0};
	int32_t v[1] = {0};
	int seen[8] = {0}, k, probes = 0, data = 0;

	(void)state;
	w = chain_worker(x, 8, 8);
	/* 4's result names 3 (lost): 3 and the older 1, 2 are probed now */
	assert_int_equal(rx_prev(w, 4, 16, 0, 3, v, 1, 1 + 3, 110000), 0);
	assert_int_equal(inart_worker_next_deadline(w), 110000);
	k = inart_worker_poll(w, 110000, out, MAXOUT);
	assert_int_equal(k, 3);
	for (int i = 0; i < k; i++) {
		data_pkt(i, &h);
		assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
		seen[h.seq] = 1;
	}
	assert_true(seen[1] && seen[2] && seen[3]);
	/* the answer for 3 (from the PS or a switch) names 2 */
	assert_int_equal(rx_prev(w, 3, 16, INART_F_RETX, 3, v, 1, 1 + 2, 120000), 0);
	inart_worker_stats(w, &st);
	assert_int_equal(st.chain_gaps, 1); /* 2 has a probe out already */
	assert_int_equal(st.probes, 3);
	inart_worker_destroy(w);

	/* while the tree still sends new chunks, a gap probes only the chunk it
	 * names, not the older ones in flight (later chunks give the PS its
	 * evidence; guesses would mostly be answered with results already on
	 * their way) */
	w = chain_worker(x, 8, 4);
	/* 3's result names 2 (lost); 1 is older and in flight, but chunk 4 may
	 * still be sent: only 2 is probed, and 4 goes out */
	assert_int_equal(rx_prev(w, 3, 16, 0, 3, v, 1, 1 + 2, 210000), 0);
	k = inart_worker_poll(w, 210000, out, MAXOUT);
	for (int i = 0; i < k; i++) {
		data_pkt(i, &h);
		if (h.flags & INART_F_NACK) {
			assert_int_equal(h.seq, 2);
			probes++;
		} else {
			assert_int_equal(h.seq, 4);
			data++;
		}
	}
	assert_int_equal(probes, 1);
	assert_int_equal(data, 1);
	inart_worker_stats(w, &st);
	assert_int_equal(st.chain_gaps, 1);
	inart_worker_destroy(w);
}

/* No result of a tree for a while with nothing new to send (the end of its
 * share): its oldest chunks in flight are probed. */
static void test_idle(void **state)
{
	struct inart_worker *w;
	struct inart_wire_hdr h;
	float x[4] = {0};
	int32_t v[1] = {0};
	uint64_t d;

	(void)state;
	w = small_worker(x, 4, 4);
	for (uint32_t s = 0; s < 3; s++) {
		assert_int_equal(rx_prev(w, s, 16, 0, 3, v, 1, s, 100000 + 10000 * s), 0);
	}
	/* results came every 10 us; the smallest time to result is 100 us: the
	 * idle period is half of it, well before chunk 3's timeout (the end of
	 * the share: the smallest time to result, not the smoothed one) */
	d = inart_worker_next_deadline(w);
	assert_true(d == 120000 + 50000);
	assert_int_equal(inart_worker_poll(w, d, out, MAXOUT), 1);
	data_pkt(0, &h);
	assert_int_equal(h.seq, 3);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
	inart_worker_destroy(w);
}

/* Deliver the results of all-reduce `it` of 4 one-value chunks: the
 * first two at t0 + first, the others at t0 + first + 100 us. */
static void skew_results(struct inart_worker *w, uint32_t it, uint64_t t0, uint64_t first)
{
	uint8_t buf[INART_DGRAM_MAX];
	int32_t v[1] = {0};

	for (uint32_t s = 0; s < 4; s++) {
		uint64_t at = t0 + first + (s < 2 ? 0 : 100000);
		size_t len = result_pkt_prev(buf, 2, it, s, 16, 0, 3, v, 1, 0);

		assert_int_equal(wrx(w, buf, len, at), 0);
		if (s == 1)
			assert_int_equal(inart_worker_poll(w, at, out, MAXOUT), 2);
	}
	assert_true(inart_worker_done(w));
}

/* A peer that starts all-reduces later (docs/dataplane.md, Skewed start):
 * our window fills and no result comes until its contributions complete
 * the chunks, which a switch holds meanwhile; a probe then finds the PS
 * without our values and has them sent again.  A window of 2 chunks, a
 * 20 ms initial timeout.  All-reduce 1 measures 100
 * us to result; in all-reduce 2 the first result comes 2 ms late (a lag of
 * 1.9 ms): before it, idle probing acts as before (400 us after the
 * start).  In all-reduce 3 it waits twice the lag longer: nothing goes out
 * before the peer's results come 2 ms late; all-reduce 4, peers on time
 * again, probes a stuck window again before 4 ms. */
static void test_skewed_start(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker_stats st;
	struct inart_worker *w;
	float x[4] = {0};
	uint64_t t2 = 1000000, t3 = 5000000, t4 = 10000000, probes;

	(void)state;
	out_init();
	base_cfg(&c, 0, 2, 1);
	c.values_per_packet = 1;
	c.window = 2;
	c.retx_timeout_ns = 20000000; /* the chunks' timeouts come later */
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 4, 1), 0);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 2);
	skew_results(w, 1, 0, 100000);
	assert_int_equal(inart_worker_begin(w, x, 4, 2), 0);
	assert_int_equal(inart_worker_poll(w, t2, out, MAXOUT), 2);
	assert_true(inart_worker_next_deadline(w) <= t2 + 400000);
	assert_true(inart_worker_poll(w, t2 + 400000, out, MAXOUT) > 0);
	skew_results(w, 2, t2, 2000000);
	inart_worker_stats(w, &st);
	probes = st.probes;
	assert_int_equal(inart_worker_begin(w, x, 4, 3), 0);
	assert_int_equal(inart_worker_poll(w, t3, out, MAXOUT), 2);
	assert_true(inart_worker_next_deadline(w) > t3 + 3800000);
	assert_int_equal(inart_worker_poll(w, t3 + 1999999, out, MAXOUT), 0);
	skew_results(w, 3, t3, 2000000);
	inart_worker_stats(w, &st);
	assert_int_equal(st.probes, probes);
	assert_int_equal(st.retransmitted, 0);
	assert_int_equal(inart_worker_begin(w, x, 4, 4), 0);
	assert_int_equal(inart_worker_poll(w, t4, out, MAXOUT), 2);
	assert_true(inart_worker_next_deadline(w) < t4 + 4000000);
	inart_worker_destroy(w);
}

/* OVERFLOW results, scale notices and local overflow. */
static void test_rescale(void **state)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	struct inart_worker_stats st;
	struct inart_wire_hdr h;
	const uint8_t *pl;
	float x[2] = {1.5f, 40000.0f}, res[2];
	uint8_t buf[INART_DGRAM_MAX];
	int32_t v[2] = {0};
	size_t len;

	(void)state;
	out_init();
	base_cfg(&c, 0, 2, 1);
	c.values_per_packet = 1; /* chunk 0 = 1.5, chunk 1 = 40000 */
	c.retx_timeout_ns = 1000;
	w = inart_worker_create(&c);
	assert_non_null(w);
	assert_int_equal(inart_worker_begin(w, x, 2, 1), 0);
	assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 2);
	pl = data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA);
	assert_int_equal(h.scale_exp, 16);
	assert_int_equal(be32(pl), 98304);
	/* 40000 * 2^16 > 2^31: the worker takes part with zeros and OVERFLOW,
	 * straight to the PS */
	pl = data_pkt(1, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_OVERFLOW);
	assert_int_equal(h.label, 0);
	assert_int_equal(h.scale_exp, 16);
	assert_int_equal(be32(pl), 0);
	/* its retransmission too (after the timeout's probes, when the PS's
	 * answer names us) */
	assert_int_equal(inart_worker_poll(w, 1000, out, MAXOUT), 2);
	data_pkt(1, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
	assert_int_equal(rx_res(w, 1, 1, 16, INART_F_NACK | INART_F_RETX, 1, NULL, 0, 1000), 0);
	assert_int_equal(inart_worker_poll(w, 1000, out, MAXOUT), 1);
	pl = data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA | INART_F_RETX | INART_F_OVERFLOW);
	/* the OVERFLOW result at 16: both workers move to 8 */
	len = result_pkt(buf, 2, 1, 0, 1, 16, INART_F_OVERFLOW, 3, v, 1);
	assert_int_equal(wrx(w, buf, len, 0), 0);
	/* a copy of it changes nothing more */
	assert_int_equal(wrx(w, buf, len, 0), -EALREADY);
	assert_int_equal(inart_worker_next_deadline(w), 0);
	assert_int_equal(inart_worker_poll(w, 2000, out, MAXOUT), 1);
	pl = data_pkt(0, &h);
	assert_int_equal(h.flags, INART_F_DATA); /* a first transmission at 8 */
	assert_int_equal(h.label, 100);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.scale_exp, 8);
	assert_int_equal(be32(pl), 40000 * 256);
	/* a scale notice for chunk 0: the chunk is at 0 at the PS */
	len = result_pkt(buf, 2, 1, 0, 0, 0, INART_F_OVERFLOW | INART_F_RETX, 2, NULL, 0);
	assert_int_equal(wrx(w, buf, len, 0), 0);
	assert_int_equal(inart_worker_poll(w, 2000, out, MAXOUT), 1);
	pl = data_pkt(0, &h);
	assert_int_equal(h.seq, 0);
	assert_int_equal(h.scale_exp, 0);
	assert_int_equal(be32(pl), 2); /* round(1.5) */
	/* notices at our scale or above, full OVERFLOW results above: old news */
	assert_int_equal(wrx(w, buf, len, 0), -EALREADY);
	assert_int_equal(rx_res(w, 1, 0, 4, INART_F_OVERFLOW | INART_F_RETX, 2, NULL, 0, 0),
			 -EALREADY);
	assert_int_equal(rx_res(w, 1, 0, 8, INART_F_OVERFLOW, 3, v, 1, 0), -EALREADY);
	/* clean results; chunk 0's arrives at a scale the worker did not
	 * expect and is still the complete sum */
	v[0] = 5;
	assert_int_equal(rx_res(w, 1, 0, -2, 0, 3, v, 1, 0), 0);
	v[0] = 40000 * 256 * 2;
	assert_int_equal(rx_res(w, 1, 1, 8, 0, 3, v, 1, 0), 0);
	assert_int_equal(inart_worker_done(w), 1);
	assert_int_equal(inart_worker_result(w, res, 2), 0);
	assert_true(res[0] == 20.0f && res[1] == 80000.0f);
	inart_worker_stats(w, &st);
	assert_int_equal(st.rescales, 2);
	assert_int_equal(st.local_overflows, 1);
	assert_int_equal(st.duplicates, 4);
	/* the next all-reduces: every chunk starts at cfg.scale_exp again,
	 * whatever the previous results were (the scale of a step depends on
	 * that step's values only: precision comes back at once) */
	for (uint32_t it = 2; it <= 4; it++) {
		assert_int_equal(inart_worker_begin(w, x, 2, it), 0);
		assert_int_equal(inart_worker_poll(w, 0, out, MAXOUT), 2);
		data_pkt(0, &h);
		assert_int_equal(h.scale_exp, 16);
		data_pkt(1, &h);
		assert_int_equal(h.scale_exp, 16);
		/* x[1] = 40000 does not fit at 16: rescaled again every time */
		assert_int_equal(h.flags, INART_F_DATA | INART_F_OVERFLOW);
		v[0] = 1;
		assert_int_equal(rx_res(w, it, 0, 16, 0, 3, v, 1, 0), 0);
		v[0] = 1 << 30;
		assert_int_equal(rx_res(w, it, 1, 8, 0, 3, v, 1, 0), 0);
		assert_int_equal(inart_worker_done(w), 1);
	}
	inart_worker_destroy(w);
}

/* ---- in-process all-reduce: workers + PS cores through a lossy network ---- */

#define NW_MAX 130
#define NPS_MAX 8
#define W_IP(r) (0x0a010000u + (uint32_t)(r))
#define PS_IP(t) (0x0a020000u + (uint32_t)(t))

struct msg {
	uint64_t t, order;
	uint32_t dst, src;
	uint16_t sport, len;
	uint8_t data[INART_DGRAM_MAX];
};

struct scen {
	int n_workers, n_trees;
	double shares[NPS_MAX];
	size_t n;
	int vpp, window, slots;
	double loss, dup;
	uint64_t delay, jitter, retx;
	int iters;
	double mag[4]; /* value magnitude per iteration */
	int big_rank;  /* >= 0: this worker's values are 1e6 times larger in iteration 0 */
	uint64_t seed;
};

struct net {
	struct inart_rng rng;
	const struct scen *sc;
	struct msg **heap;
	size_t n, cap;
	uint64_t order, now;
	struct inart_worker *w[NW_MAX];
	uint64_t dl[NW_MAX]; /* each worker's next deadline, as of its last rx or poll */
	struct inart_ps *ps[NPS_MAX];
	float *x[NW_MAX];
	uint32_t iter;
	/* expected int sums, cached per value for the scale last asked */
	int64_t *exp_sum;
	int *exp_scale;
	uint64_t lost, duplicated, checked;
};

static int msg_less(const struct msg *a, const struct msg *b)
{
	return a->t < b->t || (a->t == b->t && a->order < b->order);
}

static void heap_push(struct net *nt, struct msg *m)
{
	size_t i;

	if (nt->n == nt->cap) {
		nt->cap = nt->cap ? 2 * nt->cap : 1024;
		nt->heap = realloc(nt->heap, nt->cap * sizeof(*nt->heap));
		assert_non_null(nt->heap);
	}
	for (i = nt->n++; i > 0 && msg_less(m, nt->heap[(i - 1) / 2]); i = (i - 1) / 2)
		nt->heap[i] = nt->heap[(i - 1) / 2];
	nt->heap[i] = m;
}

static struct msg *heap_pop(struct net *nt)
{
	struct msg *top = nt->heap[0], *last = nt->heap[--nt->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= nt->n)
			break;
		if (c + 1 < nt->n && msg_less(nt->heap[c + 1], nt->heap[c]))
			c++;
		if (!msg_less(nt->heap[c], last))
			break;
		nt->heap[i] = nt->heap[c];
		i = c;
	}
	if (nt->n > 0)
		nt->heap[i] = last;
	return top;
}

static void net_send(struct net *nt, uint32_t src, uint16_t sport, const struct inart_dgram *d)
{
	int copies = 1;

	assert_true(d->len > 0 && d->len <= INART_DGRAM_MAX);
	if (inart_rng_unit(&nt->rng) < nt->sc->loss) {
		nt->lost++;
		return;
	}
	if (inart_rng_unit(&nt->rng) < nt->sc->dup) {
		copies = 2;
		nt->duplicated++;
	}
	for (int k = 0; k < copies; k++) {
		struct msg *m = malloc(sizeof(*m));

		assert_non_null(m);
		m->t = nt->now + nt->sc->delay + inart_rng_below(&nt->rng, nt->sc->jitter + 1);
		m->order = nt->order++;
		m->dst = d->peer_ip;
		m->src = src;
		m->sport = sport;
		m->len = d->len;
		memcpy(m->data, d->data, d->len);
		heap_push(nt, m);
	}
}

/* The exact integer sum of value i over all workers at scale s. */
static int64_t expected_sum(struct net *nt, size_t i, int s)
{
	if (nt->exp_scale[i] != s) {
		int64_t sum = 0;

		for (int r = 0; r < nt->sc->n_workers; r++) {
			int32_t q;

			assert_int_equal(inart_quant_value(nt->x[r][i], s, &q), 0);
			sum += q;
		}
		nt->exp_sum[i] = sum;
		nt->exp_scale[i] = s;
	}
	return nt->exp_sum[i];
}

/* Every clean complete result of the current iteration carries exactly the
 * integer sums of the workers' quantized values. */
static void check_result_pkt(struct net *nt, int rank, const struct msg *m)
{
	struct inart_wire_hdr h;
	const uint8_t *pl;
	size_t off;

	if (inart_wire_decode(m->data, m->len, &h, &pl) != INART_WIRE_OK)
		return;
	if (!(h.flags & INART_F_RESULT) || (h.flags & INART_F_OVERFLOW) || h.iter != nt->iter)
		return;
	assert_int_equal(inart_worker_tree_range(nt->w[rank], h.tree, &off, NULL, NULL), 0);
	off += (size_t)h.seq * (size_t)nt->sc->vpp;
	for (int k = 0; k < h.count; k++) {
		int64_t e = expected_sum(nt, off + (size_t)k, h.scale_exp);

		assert_true(e >= INT32_MIN && e <= INT32_MAX);
		if (be32(pl + 4 * k) != (int32_t)e)
			fail_msg("iter %u tree %u seq %u value %d: got %d want %lld", h.iter,
				 h.tree, h.seq, k, be32(pl + 4 * k), (long long)e);
	}
	nt->checked++;
}

static void deliver(struct net *nt, struct msg *m)
{
	static uint8_t pbuf[512][INART_DGRAM_MAX];
	static struct inart_dgram pout[512];

	if (m->dst >= PS_IP(0) && m->dst < PS_IP(nt->sc->n_trees)) {
		int t = (int)(m->dst - PS_IP(0)), n;

		for (int i = 0; i < 512; i++)
			pout[i].data = pbuf[i];
		n = inart_ps_rx(nt->ps[t], m->data, m->len, m->src, m->sport, nt->now, pout, 512);
		for (int i = 0; i < n; i++)
			net_send(nt, m->dst, INART_WIRE_UDP_PORT, &pout[i]);
	} else if (m->dst >= W_IP(0) && m->dst < W_IP(nt->sc->n_workers)) {
		int r = (int)(m->dst - W_IP(0));

		check_result_pkt(nt, r, m);
		inart_worker_rx(nt->w[r], m->data, m->len, m->src, m->sport, nt->now);
		nt->dl[r] = inart_worker_next_deadline(nt->w[r]);
	} else {
		fail_msg("datagram to unknown address %08x", m->dst);
	}
}

static void net_setup(struct net *nt, const struct scen *sc)
{
	struct inart_ps_tree_cfg *pc = calloc(1, sizeof(*pc));

	memset(nt, 0, sizeof(*nt));
	nt->sc = sc;
	inart_rng_seed(&nt->rng, sc->seed);
	assert_non_null(pc);
	for (int t = 0; t < sc->n_trees; t++) {
		nt->ps[t] = inart_ps_create();
		assert_non_null(nt->ps[t]);
		pc->job = 3;
		pc->tree = (uint16_t)t;
		pc->fan_in = (uint16_t)sc->n_workers;
		pc->n_children = (uint16_t)sc->n_workers;
		for (int r = 0; r < sc->n_workers; r++) {
			pc->children[r].ip = W_IP(r);
			pc->children[r].label = 0;
		}
		assert_int_equal(inart_ps_tree_set(nt->ps[t], pc), 0);
	}
	free(pc);
	for (int r = 0; r < sc->n_workers; r++) {
		struct inart_worker_cfg c;

		base_cfg(&c, (uint16_t)r, (uint16_t)sc->n_workers, sc->n_trees);
		for (int t = 0; t < sc->n_trees; t++) {
			c.trees[t].ps_ip = PS_IP(t);
			c.trees[t].label = 0;
			c.trees[t].share = sc->shares[t];
		}
		c.values_per_packet = (uint16_t)sc->vpp;
		c.window = (uint16_t)sc->window;
		c.slots = (uint16_t)sc->slots;
		c.retx_timeout_ns = sc->retx;
		nt->w[r] = inart_worker_create(&c);
		assert_non_null(nt->w[r]);
		nt->x[r] = malloc(sc->n * sizeof(float) + 1);
		assert_non_null(nt->x[r]);
	}
	nt->exp_sum = malloc(sc->n * sizeof(int64_t) + 1);
	nt->exp_scale = malloc(sc->n * sizeof(int) + 1);
}

static void net_free(struct net *nt)
{
	while (nt->n > 0)
		free(heap_pop(nt));
	free(nt->heap);
	for (int t = 0; t < nt->sc->n_trees; t++)
		inart_ps_destroy(nt->ps[t]);
	for (int r = 0; r < nt->sc->n_workers; r++) {
		inart_worker_destroy(nt->w[r]);
		free(nt->x[r]);
	}
	free(nt->exp_sum);
	free(nt->exp_scale);
}

/* One all-reduce; late packets of earlier ones stay in flight. */
static void run_iter(struct net *nt, int it)
{
	const struct scen *sc = nt->sc;
	uint64_t limit = nt->now + 60000000000ull;
	float *res = malloc(sc->n * sizeof(float) + 1), *res0 = malloc(sc->n * sizeof(float) + 1);

	assert_non_null(res);
	assert_non_null(res0);
	nt->iter = 100 + (uint32_t)it;
	for (int r = 0; r < sc->n_workers; r++) {
		for (size_t i = 0; i < sc->n; i++) {
			double m = sc->mag[it];

			if (it == 0 && r == sc->big_rank && i % 3 == 0)
				m *= 1e6;
			nt->x[r][i] = (float)((2 * inart_rng_unit(&nt->rng) - 1) * m);
		}
		assert_int_equal(inart_worker_begin(nt->w[r], nt->x[r], sc->n, nt->iter), 0);
		nt->dl[r] = inart_worker_next_deadline(nt->w[r]);
	}
	for (size_t i = 0; i < sc->n; i++)
		nt->exp_scale[i] = 1000;
	for (;;) {
		int all = 1;
		uint64_t next = UINT64_MAX;

		for (int r = 0; r < sc->n_workers; r++) {
			struct inart_worker *w = nt->w[r];

			all &= inart_worker_done(w);
			while (nt->dl[r] <= nt->now) {
				int k = inart_worker_poll(w, nt->now, out, MAXOUT);

				for (int i = 0; i < k; i++)
					net_send(nt, W_IP(r), INART_WIRE_UDP_PORT, &out[i]);
				nt->dl[r] = inart_worker_next_deadline(w);
				if (k == 0)
					break;
			}
			if (nt->dl[r] < next)
				next = nt->dl[r];
		}
		if (all)
			break;
		if (nt->n > 0 && nt->heap[0]->t < next)
			next = nt->heap[0]->t;
		assert_true(next != UINT64_MAX); /* something must be pending */
		if (next > nt->now)
			nt->now = next;
		assert_true(nt->now < limit);
		while (nt->n > 0 && nt->heap[0]->t <= nt->now) {
			struct msg *m = heap_pop(nt);

			deliver(nt, m);
			free(m);
		}
	}
	/* every worker has the same floats, each the dequantized exact sum at
	 * the value's scale, within the bound of the exact float sum */
	for (int r = 0; r < sc->n_workers; r++) {
		float *dst = r == 0 ? res0 : res;

		assert_int_equal(inart_worker_result(nt->w[r], dst, sc->n), 0);
		if (r > 0 && memcmp(res, res0, sc->n * sizeof(float)) != 0)
			fail_msg("worker %d differs from worker 0", r);
	}
	for (size_t i = 0; i < sc->n; i++) {
		int s, s2;
		double exact = 0, sumabs = 0, d;

		assert_int_equal(inart_worker_value_scale(nt->w[0], i, &s), 0);
		for (int r = 1; r < sc->n_workers; r++) {
			assert_int_equal(inart_worker_value_scale(nt->w[r], i, &s2), 0);
			assert_int_equal(s, s2);
		}
		d = ldexp((double)expected_sum(nt, i, s), -s);
		if (res0[i] != (float)d)
			fail_msg("value %zu: %.9g != %.9g", i, (double)res0[i], d);
		for (int r = 0; r < sc->n_workers; r++) {
			exact += nt->x[r][i];
			sumabs += fabs(nt->x[r][i]);
		}
		assert_true(fabs((double)res0[i] - exact) <= inart_quant_bound(s, sc->n_workers) +
								 fabs(d) * 0x1p-24 +
								 sumabs * sc->n_workers * 0x1p-53);
	}
	free(res);
	free(res0);
}

struct totals {
	struct inart_worker_stats w;
	struct inart_ps_stats ps;
	uint64_t chunks; /* chunks of one all-reduce, over the trees */
};

static void run_scen(const struct scen *sc, struct totals *tot)
{
	struct net nt;

	net_setup(&nt, sc);
	for (int it = 0; it < sc->iters; it++)
		run_iter(&nt, it);
	memset(tot, 0, sizeof(*tot));
	for (int t = 0; t < sc->n_trees; t++) {
		size_t off, len;
		uint32_t nc;

		assert_int_equal(inart_worker_tree_range(nt.w[0], t, &off, &len, &nc), 0);
		tot->chunks += nc;
	}
	for (int r = 0; r < sc->n_workers; r++) {
		struct inart_worker_stats s;

		inart_worker_stats(nt.w[r], &s);
		tot->w.sent += s.sent;
		tot->w.retransmitted += s.retransmitted;
		tot->w.results += s.results;
		tot->w.duplicates += s.duplicates;
		tot->w.rescales += s.rescales;
		tot->w.dropped += s.dropped;
		tot->w.local_overflows += s.local_overflows;
	}
	for (int t = 0; t < sc->n_trees; t++) {
		struct inart_ps_stats s;

		inart_ps_stats(nt.ps[t], &s);
		tot->ps.absorbed += s.absorbed;
		tot->ps.duplicates += s.duplicates;
		tot->ps.completed += s.completed;
		tot->ps.dropped += s.dropped;
		tot->ps.drop_stale += s.drop_stale;
		tot->ps.overflows += s.overflows;
		tot->ps.rescales += s.rescales;
		tot->ps.notices += s.notices;
		tot->ps.retx_answered += s.retx_answered;
		tot->ps.out_full += s.out_full;
		/* only stale packets are dropped: nothing malformed here */
		assert_int_equal(s.dropped, s.drop_stale);
	}
	assert_true(nt.checked > 0);
	net_free(&nt);
}

static void test_e2e_one(void **state)
{
	struct scen sc = {.n_workers = 1,
			  .n_trees = 1,
			  .shares = {1},
			  .n = 1000,
			  .vpp = 100,
			  .window = 4,
			  .slots = 4,
			  .delay = 1000,
			  .retx = 100000,
			  .iters = 2,
			  .mag = {3, 1},
			  .big_rank = -1,
			  .seed = 1};
	struct totals t;

	(void)state;
	run_scen(&sc, &t);
	assert_int_equal(t.chunks, 10);
	assert_int_equal(t.w.results, 20);
	assert_int_equal(t.w.retransmitted, 0);
	assert_int_equal(t.ps.completed, 20);
	assert_int_equal(t.ps.absorbed, 20);
}

/* Loss, duplication and reordering, uneven shares, a zero share. */
static void test_e2e_lossy(void **state)
{
	static const struct {
		int n_workers, n_trees;
		double loss;
	} cases[] = {{2, 1, 0.01}, {8, 3, 0.05}, {33, 4, 0.10}, {64, 4, 0.10}, {130, 2, 0.05}};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct scen sc = {.n_workers = cases[k].n_workers,
				  .n_trees = cases[k].n_trees,
				  .shares = {0.5, 0.2, 0, 0.3},
				  .n = cases[k].n_workers > 64 ? 1500 : 3000,
				  .vpp = 37,
				  .window = 6,
				  .slots = 8,
				  .loss = cases[k].loss,
				  .dup = 0.05,
				  .delay = 5000,
				  .jitter = 40000,
				  .retx = 200000,
				  .iters = 3,
				  .mag = {2, 100, 0.01},
				  .big_rank = -1,
				  .seed = 100 + k};
		struct totals t;

		if (sc.n_trees == 1)
			sc.shares[0] = 1;
		if (sc.n_trees == 2)
			sc.shares[1] = 0.5;
		run_scen(&sc, &t);
		assert_true(t.w.retransmitted > 0);
		assert_true(t.ps.duplicates > 0);
		assert_true(t.w.duplicates > 0);
		assert_int_equal(t.w.dropped, 0);
		/* every chunk completed exactly once per iteration: at the PS,
		 * and at every worker (one result stored per chunk; the copies
		 * are counted as duplicates) */
		assert_int_equal(t.ps.completed, t.chunks * (uint64_t)sc.iters);
		assert_int_equal(t.w.results,
				 t.chunks * (uint64_t)sc.iters * (uint64_t)sc.n_workers);
		assert_int_equal(t.w.rescales, 0);
		assert_int_equal(t.ps.overflows, 0);
	}
}

/* Large gradients: sums overflow at scale 16 (and one worker's values do
 * not even fit locally); everybody rescales to the same scale, results are
 * exact at it; the next all-reduce starts at a scale from the result and
 * goes back up once gradients are small. */
static void test_e2e_overflow(void **state)
{
	struct scen sc = {.n_workers = 16,
			  .n_trees = 3,
			  .shares = {0.6, 0.3, 0.1},
			  .n = 2000,
			  .vpp = 50,
			  .window = 8,
			  .slots = 8,
			  .loss = 0.05,
			  .dup = 0.02,
			  .delay = 5000,
			  .jitter = 20000,
			  .retx = 200000,
			  .iters = 4,
			  .mag = {9000, 9000, 0.5, 0.5},
			  .big_rank = 5,
			  .seed = 77};
	struct totals t;

	(void)state;
	run_scen(&sc, &t);
	/* one exact result stored per chunk, whatever the rescales */
	assert_int_equal(t.w.results, t.chunks * (uint64_t)sc.iters * (uint64_t)sc.n_workers);
	assert_true(t.w.local_overflows > 0);
	assert_true(t.w.rescales > 0);
	assert_true(t.ps.overflows > 0);
	assert_true(t.ps.rescales > 0);
	/* same again without loss: every rescale is driven by OVERFLOW results */
	sc.loss = 0;
	sc.dup = 0;
	sc.jitter = 0;
	sc.seed = 78;
	run_scen(&sc, &t);
	assert_int_equal(t.w.results, t.chunks * (uint64_t)sc.iters * (uint64_t)sc.n_workers);
	assert_true(t.ps.overflows > 0);
	assert_int_equal(t.ps.notices, 0);
	assert_int_equal(t.w.retransmitted, 0);
}

/* Scales after an overflow, per iteration: iteration 0 ends below 16 for
 * the big chunks; every iteration starts at 16 again (the scale depends on
 * the step's values only), so iteration 1 overflows again and iteration 2,
 * with small values only, is exact at 16 at once. */
static void test_e2e_scales(void **state)
{
	struct scen sc = {.n_workers = 4,
			  .n_trees = 1,
			  .shares = {1},
			  .n = 400,
			  .vpp = 100,
			  .window = 4,
			  .slots = 4,
			  .delay = 1000,
			  .retx = 1000000,
			  .iters = 1,
			  .mag = {20000, 20000, 0.5, 0.5},
			  .big_rank = -1,
			  .seed = 9};
	struct net nt;
	struct inart_ps_stats st0, st1;
	int s;

	(void)state;
	net_setup(&nt, &sc);
	run_iter(&nt, 0);
	assert_int_equal(inart_worker_value_scale(nt.w[2], 0, &s), 0);
	assert_true(s < 16 && s >= 0);
	inart_ps_stats(nt.ps[0], &st0);
	assert_true(st0.overflows > 0);
	run_iter(&nt, 1);
	inart_ps_stats(nt.ps[0], &st1);
	assert_true(st1.overflows > st0.overflows); /* started at 16 again */
	run_iter(&nt, 2);			    /* values of magnitude 0.5 */
	for (size_t i = 0; i < 400; i++) {
		assert_int_equal(inart_worker_value_scale(nt.w[2], i, &s), 0);
		assert_int_equal(s, 16);
	}
	net_free(&nt);
}

/* A worker facing a dead peer backs off (issue 7: before the fix it sent
 * ~22k retransmissions and ~67k probes per second for as long as it
 * waited).  One worker, two trees of 100 chunks, window 64; the first
 * all-reduce is answered 20 us after each chunk (so the timers learn a
 * short time to result), the second never: simulated time, packets counted
 * per second.  After the first second of no progress it must send at most
 * 1000 packets per second (the target; bench/deadpeer_bench.sh
 * measures it on real sockets), and the waits double: at most a few per
 * second in the last seconds. */
static void test_dead_peer(void **state)
{
	const size_t n = 2 * 100 * 358;
	float *x = calloc(n, sizeof(float));
	struct inart_worker_cfg c;
	struct inart_worker *w;
	uint64_t t = 0, per_s[10] = {0};
	int guard = 0;

	(void)state;
	assert_non_null(x);
	out_init();
	base_cfg(&c, 0, 1, 2);
	c.window = 64;
	c.slots = 64;
	c.retx_timeout_ns = 50000000;
	w = inart_worker_create(&c);
	assert_non_null(w);
	/* 1: every chunk answered 20 us after it was sent */
	assert_int_equal(inart_worker_begin(w, x, n, 1), 0);
	while (!inart_worker_done(w) && guard++ < 100000) {
		int k = inart_worker_poll(w, t, out, MAXOUT);
		uint8_t buf[INART_DGRAM_MAX];
		int32_t v[358] = {0};

		for (int i = 0; i < k; i++) {
			struct inart_wire_hdr h;

			data_pkt(i, &h);
			if (h.flags & INART_F_NACK)
				continue;
			wrx(w, buf,
			    result_pkt(buf, 1, 1, h.tree, h.seq, h.scale_exp, 0, 1, v, h.count),
			    t + 20000);
		}
		t += 20000;
	}
	assert_int_equal(inart_worker_done(w), 1);
	/* 2: the PS is gone */
	assert_int_equal(inart_worker_begin(w, x, n, 2), 0);
	{
		uint64_t t0 = t;

		guard = 0;
		while (t < t0 + 10000000000ull && guard++ < 10000000) {
			uint64_t d = inart_worker_next_deadline(w);
			int k;

			if (d > t)
				t = d;
			if (t >= t0 + 10000000000ull)
				break;
			k = inart_worker_poll(w, t, out, MAXOUT);
			per_s[(t - t0) / 1000000000ull] += (uint64_t)k;
			if (k == 0 && d <= t)
				t++; /* nothing due yet at this ns */
		}
	}
	for (int i = 0; i < 10; i++)
		print_message("dead peer, second %d: %llu packets\n", i,
			      (unsigned long long)per_s[i]);
	for (int i = 1; i < 10; i++)
		assert_true(per_s[i] <= 1000);
	for (int i = 5; i < 10; i++)
		assert_true(per_s[i] <= 10);
	inart_worker_destroy(w);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create),	   cmocka_unit_test(test_split),
	    cmocka_unit_test(test_packets_window), cmocka_unit_test(test_timers),
	    cmocka_unit_test(test_probes_nacks),   cmocka_unit_test(test_chain),
	    cmocka_unit_test(test_idle),	   cmocka_unit_test(test_rescale),
	    cmocka_unit_test(test_e2e_one),	   cmocka_unit_test(test_e2e_lossy),
	    cmocka_unit_test(test_e2e_overflow),   cmocka_unit_test(test_e2e_scales),
	    cmocka_unit_test(test_dead_peer),	   cmocka_unit_test(test_pacing),
	    cmocka_unit_test(test_warmup_each),	   cmocka_unit_test(test_skewed_start),
	    cmocka_unit_test(test_held),	   cmocka_unit_test(test_held_floor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
