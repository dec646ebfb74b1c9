/* Tests of gate: seeded loss rates per direction and port, which frames
 * are charged to the aggregation bucket (aggregating labels only, DATA with
 * values, never RETX or other traffic), holding and releasing at the
 * bucket's rate in arrival order, the FIFO limit, refusals; the label set
 * taken from a switch's compact label tables (in service and built aside)
 * and exchanged without allocation. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/gate.h"
#include "dp/pkt.h"
#include "dp/wire.h"

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1}, mac_b[6] = {2, 0, 0, 0, 0, 2};

/* An INA frame: label, flags, count values; seq tags it. */
static uint16_t ina_frame(uint8_t *f, uint32_t label, uint8_t flags, int count, uint32_t seq)
{
	const struct inart_wire_hdr h = {.flags = flags,
					 .bitmap_words = 1,
					 .fan_in = 1,
					 .bitmap = {1},
					 .label = label,
					 .iter = 1,
					 .seq = seq,
					 .count = (uint16_t)count};
	int32_t v[400] = {0};
	uint8_t pl[1500];
	size_t n = inart_wire_encode(&h, v, pl, sizeof(pl));

	assert_true(n > 0);
	return (uint16_t)inart_pkt_build_udp(f, INART_FRAME_MAX, mac_a, mac_b, 0x0a000001,
					     0x0a000002, INART_WIRE_UDP_PORT, INART_WIRE_UDP_PORT,
					     pl, n);
}

static void test_refused(void **state)
{
	struct inart_gate_cfg c = {.n_ports = 2};

	(void)state;
	c.rx_loss = 1.5;
	assert_null(inart_gate_create(&c, 0));
	assert_int_equal(errno, EINVAL);
	c.rx_loss = 0;
	c.n_ports = 0;
	assert_null(inart_gate_create(&c, 0));
	c.n_ports = 2;
	c.agg_bytes_per_s = -1;
	assert_null(inart_gate_create(&c, 0));
	c.agg_bytes_per_s = INFINITY; /* the token bucket refuses it */
	assert_null(inart_gate_create(&c, 0));
	assert_int_equal(errno, EINVAL);
	inart_gate_destroy(NULL);
}

static void test_loss(void **state)
{
	struct inart_gate_cfg c = {
	    .n_ports = 3, .rx_loss = 0.01, .tx_loss = 0.05, .tx_loss_ports = 1u << 2, .seed = 7};
	struct inart_gate *g = inart_gate_create(&c, 0), *g2;
	struct inart_gate_stats st;
	uint8_t buf[INART_FRAME_MAX];
	struct inart_frame f = {buf, 0, 1};
	int lost = 0, tx0 = 0, tx2 = 0, again = 0;
	const int n = 200000;

	(void)state;
	assert_non_null(g);
	f.len = ina_frame(buf, 5, INART_F_DATA, 10, 0);
	for (int i = 0; i < n; i++) {
		lost += inart_gate_rx(g, &f, (uint64_t)i) == INART_GATE_DROP;
		tx0 += inart_gate_tx_drop(g, 0);
		tx2 += inart_gate_tx_drop(g, 2);
	}
	/* 1% and 5% within 5 standard deviations */
	assert_true(lost > 2000 - 5 * 45 && lost < 2000 + 5 * 45);
	assert_int_equal(tx0, 0);
	assert_true(tx2 > 10000 - 5 * 98 && tx2 < 10000 + 5 * 98);
	inart_gate_stats(g, &st);
	assert_int_equal(st.rx_lost[1], (uint64_t)lost);
	assert_int_equal(st.tx_lost[2], (uint64_t)tx2);
	assert_int_equal(st.agg_frames, 0); /* no limit configured */
	/* the same seed loses the same frames */
	g2 = inart_gate_create(&c, 0);
	for (int i = 0; i < n; i++)
		again += inart_gate_rx(g2, &f, (uint64_t)i) == INART_GATE_DROP;
	assert_int_equal(again, lost);
	inart_gate_destroy(g);
	inart_gate_destroy(g2);
}

/* 1514-byte frames at 1e6 bytes/s, burst of one frame, FIFO of 4. */
static void test_agg_limit(void **state)
{
	struct inart_gate_cfg c = {
	    .n_ports = 2, .agg_bytes_per_s = 1e6, .agg_burst = 1514, .queue_frames = 4};
	struct inart_gate *g = inart_gate_create(&c, 0);
	struct inart_gate_stats st;
	uint8_t b[8][INART_FRAME_MAX];
	struct inart_frame f[8], out;
	uint32_t labels[] = {9, 5, 7};
	uint64_t t;

	(void)state;
	assert_non_null(g);
	assert_int_equal(inart_gate_set_agg_labels(g, labels, 3), 0);
	for (int i = 0; i < 8; i++) {
		f[i].data = b[i];
		f[i].port = 0;
		f[i].len = ina_frame(b[i], 5, INART_F_DATA, 358, (uint32_t)i);
	}
	assert_int_equal(f[0].len, 1514);
	/* not charged: other labels, RETX, probes (no values), results, ARP-less junk */
	{
		uint8_t x[INART_FRAME_MAX];
		struct inart_frame o = {x, 0, 1};

		o.len = ina_frame(x, 6, INART_F_DATA, 358, 0);
		assert_int_equal(inart_gate_rx(g, &o, 0), INART_GATE_PASS);
		o.len = ina_frame(x, 5, INART_F_DATA | INART_F_RETX, 358, 0);
		assert_int_equal(inart_gate_rx(g, &o, 0), INART_GATE_PASS);
		o.len = ina_frame(x, 5, INART_F_DATA | INART_F_RETX | INART_F_NACK, 0, 0);
		assert_int_equal(inart_gate_rx(g, &o, 0), INART_GATE_PASS);
		o.len = ina_frame(x, 5, INART_F_RESULT, 358, 0);
		assert_int_equal(inart_gate_rx(g, &o, 0), INART_GATE_PASS);
		o.len = 60;
		memset(x, 0xff, 60);
		assert_int_equal(inart_gate_rx(g, &o, 0), INART_GATE_PASS);
		inart_gate_stats(g, &st);
		assert_int_equal(st.agg_frames, 0);
	}
	/* the first passes (burst), the next four are held, the sixth dropped */
	assert_int_equal(inart_gate_rx(g, &f[0], 0), INART_GATE_PASS);
	assert_int_equal(inart_gate_deadline(g, 0), UINT64_MAX);
	for (int i = 1; i <= 4; i++)
		assert_int_equal(inart_gate_rx(g, &f[i], 0), INART_GATE_HELD);
	assert_int_equal(inart_gate_rx(g, &f[5], 0), INART_GATE_DROP);
	assert_int_equal(inart_gate_held(g), 4);
	/* released one per 1.514 ms, in order */
	assert_int_equal(inart_gate_next(g, 1000, &out), 0);
	for (int i = 1; i <= 4; i++) {
		t = inart_gate_deadline(g, 0);
		assert_true(t >= (uint64_t)i * 1514000 - 10 && t <= (uint64_t)i * 1514000 + 10);
		assert_int_equal(inart_gate_next(g, t - 1000, &out), 0);
		assert_int_equal(inart_gate_next(g, t, &out), 1);
		assert_int_equal(out.len, 1514);
		assert_memory_equal(out.data, b[i], 1514);
	}
	assert_int_equal(inart_gate_next(g, 100000000, &out), 0);
	/* while frames wait, a new one waits behind them even with tokens */
	t = 100000000;
	assert_int_equal(inart_gate_rx(g, &f[6], t), INART_GATE_PASS);
	assert_int_equal(inart_gate_rx(g, &f[7], t), INART_GATE_HELD);
	assert_int_equal(inart_gate_rx(g, &f[6], t + 1600000), INART_GATE_HELD);
	assert_int_equal(inart_gate_next(g, t + 1600000, &out), 1);
	assert_memory_equal(out.data, b[7], 1514);
	inart_gate_stats(g, &st);
	assert_int_equal(st.agg_frames, 9);
	assert_int_equal(st.agg_held, 6);
	assert_int_equal(st.agg_dropped, 1);
	assert_int_equal(st.agg_bytes, 9 * 1514);
	/* an empty label set: nothing is charged */
	assert_int_equal(inart_gate_set_agg_labels(g, NULL, 0), 0);
	assert_int_equal(inart_gate_rx(g, &f[0], t + 1600000), INART_GATE_PASS);
	inart_gate_destroy(g);
}

/* The aggregating labels of a switch's tables (entries that point at their
 * expected bitmap and down copies), read from the switch and from a table
 * set built aside; swapped in and out of the gate as the switch swaps its
 * tables. */
static void test_agg_labels_of(void **state)
{
	struct inart_sw_cfg sc = {.n_ports = 2, .pool_slots = 32, .max_values = 360};
	struct inart_switch *sw = inart_switch_create(&sc);
	static const uint64_t expect[1] = {3};
	static const struct inart_label_down dn[2] = {{.port = 0}, {.port = 1}};
	struct inart_label_entry e[4], got[8];
	struct inart_sw_update u = {.replace = 1, .n_labels = 4, .labels = e};
	struct inart_sw_tables *tab = NULL, *old;
	struct inart_gate_cfg c = {.n_ports = 2, .agg_bytes_per_s = 1e3, .agg_burst = 1514};
	struct inart_gate *g = inart_gate_create(&c, 0);
	uint8_t b[INART_FRAME_MAX];
	struct inart_frame f = {b, 0, 0};
	uint32_t *l = NULL, del = 40;
	int n = 0, k;
	struct inart_err why = {{0}};

	(void)state;
	assert_non_null(sw);
	assert_non_null(g);
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 3; i++) { /* 40 and 10 aggregate, 30 forwards */
		e[i].label = (uint32_t[]){40, 30, 10}[i];
		e[i].kind = INART_LABEL_UP;
		e[i].job = 1;
		e[i].tree = (uint16_t)i;
		e[i].next_label = 77;
		e[i].aggregate = i != 1;
		e[i].slot_base = (uint16_t)(8 * i);
		e[i].n_slots = 8;
		e[i].bitmap_words = 1;
		e[i].expected = expect;
	}
	e[3].label = 20;
	e[3].kind = INART_LABEL_DOWN;
	e[3].job = 1;
	e[3].n_down = 2;
	e[3].down = dn;
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	k = inart_switch_get_labels(sw, got, 8);
	assert_int_equal(k, 4);
	assert_int_equal(inart_gate_agg_labels_of(got, k, &l, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(l[0], 10);
	assert_int_equal(l[1], 40);
	/* in service without allocation; the gate had no set */
	inart_gate_swap_agg_labels(g, &l, &n);
	assert_null(l);
	assert_int_equal(n, 0);
	f.len = ina_frame(b, 40, INART_F_DATA, 358, 0);
	assert_int_equal(inart_gate_rx(g, &f, 0), INART_GATE_PASS); /* burst */
	assert_int_equal(inart_gate_rx(g, &f, 0), INART_GATE_HELD);
	f.len = ina_frame(b, 30, INART_F_DATA, 358, 0); /* forwarding entry: not charged */
	assert_int_equal(inart_gate_rx(g, &f, 0), INART_GATE_PASS);
	/* new tables built aside without label 40: its set, from the table set */
	u = (struct inart_sw_update){.n_del_labels = 1, .del_labels = &del};
	assert_int_equal(inart_switch_tables_build(sw, &u, &tab, &why), 0);
	k = inart_sw_tables_labels(tab, got, 8);
	assert_int_equal(k, 3);
	assert_int_equal(inart_gate_agg_labels_of(got, k, &l, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(l[0], 10);
	old = inart_switch_tables_swap(sw, tab);
	inart_gate_swap_agg_labels(g, &l, &n);
	assert_int_equal(n, 2); /* the old set comes back to the caller */
	assert_int_equal(l[1], 40);
	free(l);
	inart_sw_tables_destroy(old);
	f.len = ina_frame(b, 40, INART_F_DATA, 358, 1);
	assert_int_equal(inart_gate_rx(g, &f, 0), INART_GATE_PASS); /* no longer charged */
	/* no aggregating entry at all: an empty set */
	assert_int_equal(inart_gate_agg_labels_of(got, 0, &l, &n), 0);
	assert_null(l);
	assert_int_equal(n, 0);
	inart_gate_destroy(g);
	inart_switch_destroy(sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_loss),
	    cmocka_unit_test(test_agg_limit),
	    cmocka_unit_test(test_agg_labels_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
