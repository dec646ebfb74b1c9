/*
 * fuzz_gate: libFuzzer target for the switch-side emulation gate (dp/gate):
 * the frames it reads come from the network.  The first bytes choose the
 * configuration (loss probabilities, aggregation limit, FIFO size, the
 * aggregating labels); the rest is a sequence of frames (2-byte length,
 * port byte, time step byte, bytes) fed to inart_gate_rx, with
 * inart_gate_next and inart_gate_tx_drop in between.  Checked: the FIFO never
 * holds more than its size; frames come out of the FIFO in the order they
 * went in, unchanged; counters add up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_gate: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t held[64][INART_FRAME_MAX];
	static uint16_t held_len[64];
	struct inart_gate_cfg c = {.n_ports = 4, .tx_loss_ports = 5};
	struct inart_gate_stats st;
	struct inart_gate *g;
	uint32_t labels[4];
	uint64_t now = 1000;
	int head = 0, n = 0, passed = 0;
	size_t off = 12;

	if (size < off)
		return 0;
	c.rx_loss = data[0] / 255.0 * 0.5;
	c.tx_loss = data[1] / 255.0;
	c.agg_bytes_per_s = data[2] ? data[2] * 10000.0 : 0;
	c.agg_burst = data[3] * 100.0;
	c.queue_frames = 1 + data[4] % 64;
	c.seed = data[5];
	for (int i = 0; i < 4; i++)
		labels[i] = (uint32_t)data[6 + i];
	g = inart_gate_create(&c, now);
	if (g == NULL)
		die("create");
	if (inart_gate_set_agg_labels(g, labels, data[10] % 5) < 0)
		die("labels");
	while (off + 4 <= size) {
		size_t len = ((size_t)data[off] << 8 | data[off + 1]) % (INART_FRAME_MAX + 1);
		struct inart_frame f, out;
		uint8_t buf[INART_FRAME_MAX];
		int v;

		f.port = (uint16_t)(data[off + 2] % 4);
		now += (uint64_t)data[off + 3] * 10000;
		off += 4;
		if (len > size - off)
			len = size - off;
		memcpy(buf, data + off, len);
		off += len;
		f.data = buf;
		f.len = (uint16_t)len;
		v = inart_gate_rx(g, &f, now);
		if (v == INART_GATE_HELD) {
			if (n == c.queue_frames)
				die("held beyond the FIFO's size");
			memcpy(held[(head + n) % 64], buf, len);
			held_len[(head + n) % 64] = (uint16_t)len;
			n++;
		} else if (v == INART_GATE_PASS) {
			passed++;
		}
		if (inart_gate_held(g) != n)
			die("held count");
		while (inart_gate_next(g, now, &out)) {
			if (n == 0 || out.len != held_len[head] ||
			    memcmp(out.data, held[head], out.len) != 0)
				die("FIFO order or content");
			head = (head + 1) % 64;
			n--;
		}
		if (inart_gate_deadline(g, now) != UINT64_MAX && n == 0)
			die("deadline without a held frame");
		inart_gate_tx_drop(g, f.port);
	}
	inart_gate_stats(g, &st);
	if (st.agg_held < (uint64_t)n || st.agg_frames < st.agg_held + st.agg_dropped)
		die("counters");
	inart_gate_destroy(g);
	return 0;
}
