/*
 * fuzz_switch: libFuzzer target for the switch pipeline.
 *
 * Each input is a sequence of records [ctl][len_hi][len_lo][frame bytes]:
 * ctl % 6 is the receiving port (5 = a port that does not exist), bit 7 asks
 * for a tick after the frame, bits 3..6 advance the clock.  A fresh switch
 * with a small fixed table (tree A: aggregate, forward and DOWN labels;
 * tree B: aggregate label in a neighbouring slot region; routes) receives
 * them.  Before the input, tree B's slot holds rank 0's contribution; input
 * frames that are INA packets of tree B's job are skipped, so nothing the
 * input does may change that slot.  Checked: no crash or sanitizer report;
 * every output frame is on a real port, fits INART_FRAME_MAX, parses, and
 * an INA output decodes; tree B only ever emits its exact partial (on a
 * flush) or, at the end, its exact complete aggregate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "dp/wire.h"

#define NP 5
#define JOB_A 0x11111111u
#define JOB_B 0x22222222u
#define NV 16
#define MAXOUT 80

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct inart_frame outv[MAXOUT];
static uint8_t outbuf[MAXOUT][INART_FRAME_MAX];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_switch: %s\n", what);
	abort();
}

/* The expected bitmaps and down-replication list the entries point at. */
static uint64_t expv[4];
static struct inart_label_down downv[3];

static struct inart_label_entry up(uint32_t label, uint32_t job, int base, int ranks, uint32_t next)
{
	struct inart_label_entry e;
	uint64_t *x = &expv[label & 3];
	int r;

	memset(&e, 0, sizeof(e));
	e.label = label;
	e.kind = INART_LABEL_UP;
	e.job = job;
	e.tree = 1;
	e.next_label = next;
	e.aggregate = 1;
	e.slot_base = (uint16_t)base;
	e.n_slots = 16;
	e.bitmap_words = 1;
	*x = 0;
	for (r = 0; r < ranks; r++)
		*x |= 1ull << r;
	e.expected = x;
	return e;
}

static struct inart_switch *make(void)
{
	struct inart_sw_cfg cfg;
	struct inart_label_entry e[4];
	struct inart_route rt[3] = {{0x0a000000, 8, 1}, {0x0a000900, 24, 0}, {0, 0, 4}};
	struct inart_sw_update u;
	struct inart_switch *sw;
	struct inart_err why = {{0}};
	int p;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = NP;
	for (p = 0; p < NP; p++) {
		cfg.ports[p].mac[0] = 2;
		cfg.ports[p].mac[5] = (uint8_t)p;
		cfg.ports[p].ip = 0x0aff0001u + (uint32_t)p;
	}
	cfg.ports[0].peer_mac[0] = 2;
	cfg.ports[0].peer_mac[4] = 0x99;
	cfg.pool_slots = 48;
	cfg.max_values = 32;
	cfg.flush_timeout_ns = 1000;
	sw = inart_switch_create(&cfg);
	if (sw == NULL)
		die("create failed");
	e[0] = up(0x0a, JOB_A, 0, 8, 0x0d);
	e[1] = up(0x0d, JOB_A, 0, 0, 0x0e);
	e[1].aggregate = 0;
	e[1].out_port = 2;
	memset(&e[2], 0, sizeof(e[2]));
	e[2].label = 0x0c;
	e[2].kind = INART_LABEL_DOWN;
	e[2].job = JOB_A;
	e[2].tree = 1;
	e[2].n_down = 3;
	for (p = 0; p < 3; p++) {
		downv[p].port = (uint16_t)(p + 1);
		downv[p].label = (uint32_t)p;
		downv[p].dst_ip = p == 1 ? 0x0a000102u : 0;
	}
	e[2].down = downv;
	e[3] = up(0x0b, JOB_B, 32, 2, 0x0f);
	memset(&u, 0, sizeof(u));
	u.n_labels = 4;
	u.labels = e;
	u.n_routes = 3;
	u.routes = rt;
	if (inart_switch_apply(sw, &u, &why) != 0)
		die(why.msg);
	return sw;
}

/* Tree B's contribution of rank r, framed. */
static size_t b_frame(uint8_t *f, int r)
{
	struct inart_wire_hdr h;
	int32_t v[NV];
	uint8_t pl[512], mac[6] = {2, 0, 0, 0, 0x42, 3};
	size_t n;
	int i;

	memset(&h, 0, sizeof(h));
	h.flags = INART_F_DATA;
	h.bitmap_words = 1;
	h.job = JOB_B;
	h.tree = 1;
	h.fan_in = 2;
	h.label = 0x0b;
	h.iter = 9;
	h.seq = 3;
	h.slot = 3;
	h.count = NV;
	h.bitmap[0] = 1ull << r;
	for (i = 0; i < NV; i++)
		v[i] = (int32_t)(i * 1000003 * (r + 1)) - 7;
	n = inart_wire_encode(&h, v, pl, sizeof(pl));
	return inart_pkt_build_udp(f, INART_FRAME_MAX, mac, mac, 0x0a000301u, 0x0a000901u, 5,
				   INART_WIRE_UDP_PORT, pl, n);
}

static int32_t b_sum(int i, int ranks)
{
	int64_t s = 0;
	int r;

	for (r = 0; r < ranks; r++)
		s += (int32_t)(i * 1000003 * (r + 1)) - 7;
	return (int32_t)s;
}

/* Check the outputs; returns how many were tree B's (verified) frames. */
static int check_out(int n, int b_ranks)
{
	int i, k, nb = 0;

	if (n < 0 || n > MAXOUT)
		die("bad output count");
	for (i = 0; i < n; i++) {
		struct inart_pkt_info pi;
		struct inart_wire_hdr h;
		const uint8_t *pl;

		if (outv[i].port >= NP || outv[i].len > INART_FRAME_MAX || outv[i].len < 14)
			die("output frame port or length out of range");
		if (inart_pkt_parse(outv[i].data, outv[i].len, &pi) != 0)
			die("output frame does not parse");
		if (!pi.is_udp || pi.dport != INART_WIRE_UDP_PORT)
			continue;
		if (inart_wire_decode(outv[i].data + pi.l4_payload_off, pi.l4_payload_len, &h,
				      &pl) != INART_WIRE_OK)
			die("INA output does not decode");
		if (h.job != JOB_B)
			continue;
		if (h.count != NV || h.bitmap[0] != (1ull << b_ranks) - 1 || h.label != 0x0f ||
		    outv[i].port != 0)
			die("tree B emitted a wrong aggregate");
		for (k = 0; k < NV; k++)
			if ((int32_t)inart_get_be32(pl + 4 * k) != b_sum(k, b_ranks))
				die("tree B's sums were disturbed");
		nb++;
	}
	return nb;
}

static int is_job_b(const uint8_t *f, size_t len)
{
	struct inart_pkt_info pi;
	struct inart_wire_hdr h;
	const uint8_t *pl;

	if (inart_pkt_parse(f, len, &pi) != 0 || !pi.is_udp || pi.dport != INART_WIRE_UDP_PORT)
		return 0;
	if (inart_wire_decode(f + pi.l4_payload_off, pi.l4_payload_len, &h, &pl) != INART_WIRE_OK)
		return 0;
	return h.job == JOB_B;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_switch *sw = make();
	uint8_t f[INART_FRAME_MAX];
	uint64_t now = 1;
	size_t off = 0, len;
	int i, n, b_flushed = 0;
	struct inart_frame in;

	for (i = 0; i < MAXOUT; i++)
		outv[i].data = outbuf[i];
	in.data = f;
	in.len = (uint16_t)b_frame(f, 0);
	in.port = 3;
	if (inart_switch_rx(sw, &in, 0, outv, MAXOUT) != 0)
		die("tree B's first contribution was not absorbed");
	while (off + 3 <= size) {
		uint8_t ctl = data[off];
		uint8_t *heap;

		len = (size_t)data[off + 1] << 8 | data[off + 2];
		off += 3;
		if (len > size - off)
			len = size - off;
		now += (uint64_t)((ctl >> 3) & 15) * 100;
		if (len <= 0xffff && !is_job_b(data + off, len)) {
			/* exact-size heap copy: overreads are caught */
			heap = malloc(len ? len : 1);
			if (heap == NULL)
				break;
			memcpy(heap, data + off, len);
			in.data = heap;
			in.len = (uint16_t)len;
			in.port = (uint16_t)(ctl % 6);
			n = inart_switch_rx(sw, &in, now, outv, MAXOUT);
			if (check_out(n, 1) != 0)
				die("tree B emitted on an unrelated frame");
			free(heap);
		}
		off += len;
		if (ctl & 0x80) {
			n = inart_switch_tick(sw, now, outv, MAXOUT);
			b_flushed += check_out(n, 1);
		}
	}
	if (b_flushed > 1)
		die("tree B flushed twice");
	if (!b_flushed) {
		/* complete tree B: exact sum of ranks 0 and 1 */
		in.data = f;
		in.len = (uint16_t)b_frame(f, 1);
		in.port = 3;
		n = inart_switch_rx(sw, &in, now, outv, MAXOUT);
		if (n != 1 || check_out(n, 2) != 1)
			die("tree B did not complete exactly");
	}
	inart_switch_destroy(sw);
	return 0;
}
