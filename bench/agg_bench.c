/*
 * agg_bench: throughput of the software aggregation engine and of the
 * switch pipeline, in memory, single thread.  Not a test: it prints numbers.
 *
 *   agg_bench [SECONDS]     (default 1 CPU second per measurement)
 *
 * Rates are per CPU second of the benchmark thread (CLOCK_THREAD_CPUTIME_ID),
 * i.e. per core, whatever else runs on the machine.
 *
 * Measurements:
 *   1. raw add loop: sums[i] += be32(payload[i]) over one packet's worth of
 *      values (358, the most that fit a 1500-byte IP packet with one bitmap
 *      word), payload misaligned as in a received frame; every compiled
 *      engine variant.
 *   2. pool absorb path: inart_agg_pool_absorb of realistic contributions
 *      (358 values, 8 workers per chunk, 64 slots in rotation, the complete
 *      aggregate taken out big-endian), counted as int32 additions per
 *      second (every absorbed value is one addition, or one copy for the
 *      first contribution of a slot -- counted as well, as in the target).
 *   3. switch pipeline: inart_switch_rx of prebuilt frames: INA DATA frames
 *      aggregated 8:1 (packets/s and values/s), plain IPv4 forwarding
 *      (packets/s), DOWN replication of a RESULT to 4 ports.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp/agg_pool.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "dp/wire.h"

#define NV 358
#define WORKERS 8
#define SLOTS 64
/* the INA header's iter field: Ethernet 14 + IPv4 20 + UDP 8, then offset 16
 * (docs/wire.md) */
#define ITER_OFF (14 + 20 + 8 + 16)

/* CPU time of this thread: the rates are per core even when the machine is
 * shared (wall time would count time the thread spent waiting for a CPU). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile int32_t sink;

static void bench_raw(double secs)
{
	static int32_t sums[NV + 16] __attribute__((aligned(64)));
	static uint8_t frame[1600];
	uint8_t *be = frame + 82; /* offset of the payload in a 1-word INA frame */
	const char *names[2] = {"baseline", "avx2"};
	int v, i;

	for (i = 0; i < 4 * NV; i++)
		be[i] = (uint8_t)(i * 13 % 7);
	for (v = 0; v < 2; v++) {
		long iters = 0, k;
		double t0, t;
		int ovf = 0;

		if (inart_agg_engine_select(v) != 0)
			continue;
		t0 = now_s();
		do {
			for (k = 0; k < 10000; k++) {
				ovf |= inart_agg_add_be(sums, be, NV);
				__asm__ volatile("" : : "r"(sums) : "memory");
			}
			iters += 10000;
			t = now_s() - t0;
		} while (t < secs);
		sink = sums[5] + ovf;
		printf("raw add loop (%s, %d values/call):     %.3g int32 additions/s\n", names[v],
		       NV, (double)iters * NV / t);
	}
	inart_agg_engine_select(1);
}

static void bench_pool(double secs)
{
	struct inart_agg_pool *p = inart_agg_pool_create(SLOTS, NV, 1000000000);
	static uint8_t payload[WORKERS][4 * NV + 2], out[4 * NV];
	uint64_t exp = (1u << WORKERS) - 1, values = 0, chunks = 0;
	double t0, t;
	uint32_t seq = 0;
	int w, i;

	if (p == NULL) {
		perror("pool");
		return;
	}
	for (w = 0; w < WORKERS; w++)
		for (i = 0; i < 4 * NV; i++)
			payload[w][i + 2] = (uint8_t)((i * 31 + w) % 5);
	t0 = now_s();
	do {
		for (i = 0; i < 1000; i++, seq++) {
			struct inart_agg_key k;
			int slot = (int)(seq % SLOTS);

			memset(&k, 0, sizeof(k));
			k.job = 1;
			k.label = 7;
			k.iter = 1;
			k.seq = seq;
			k.fan_in = WORKERS;
			k.slot = (uint16_t)slot;
			k.count = NV;
			k.bitmap_words = 1;
			for (w = 0; w < WORKERS; w++) {
				uint64_t b = 1ull << w;
				int rc = inart_agg_pool_absorb(p, slot, &k, &b, payload[w] + 2,
							       &exp, seq, NULL);

				if (rc < 0) {
					fprintf(stderr, "absorb failed: %d\n", rc);
					exit(1);
				}
			}
			inart_agg_pool_take(p, slot, out);
			values += (uint64_t)WORKERS * NV;
			chunks++;
		}
		t = now_s() - t0;
	} while (t < secs);
	sink = out[7];
	printf("pool absorb path (%s, %d values x %d workers): %.3g int32 additions/s "
	       "(%.3g contributions/s)\n",
	       inart_agg_engine(), NV, WORKERS, (double)values / t, (double)chunks * WORKERS / t);
	inart_agg_pool_destroy(p);
}

static struct inart_switch *bench_switch_make(void)
{
	struct inart_sw_cfg cfg;
	struct inart_label_entry e[2];
	static uint64_t expected[1];
	static struct inart_label_down down[4];
	struct inart_route rt = {0x0a000000, 8, 5};
	struct inart_sw_update u;
	struct inart_switch *sw;
	struct inart_err why = {{0}};
	int p;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = WORKERS + 2;
	for (p = 0; p < cfg.n_ports; p++) {
		cfg.ports[p].mac[0] = 2;
		cfg.ports[p].mac[5] = (uint8_t)p;
		cfg.ports[p].ip = 0x0aff0001u + (uint32_t)p;
	}
	cfg.pool_slots = 1024;
	cfg.max_values = NV;
	cfg.flush_timeout_ns = 10000000;
	sw = inart_switch_create(&cfg);
	if (sw == NULL) {
		perror("switch");
		exit(1);
	}
	memset(e, 0, sizeof(e));
	e[0].label = 7;
	e[0].kind = INART_LABEL_UP;
	e[0].job = 1;
	e[0].tree = 0;
	e[0].out_port = WORKERS;
	e[0].next_label = 8;
	e[0].aggregate = 1;
	e[0].slot_base = 0;
	e[0].n_slots = SLOTS;
	e[0].bitmap_words = 1;
	expected[0] = (1u << WORKERS) - 1;
	e[0].expected = expected;
	e[1].label = 9;
	e[1].kind = INART_LABEL_DOWN;
	e[1].job = 1;
	e[1].n_down = 4;
	for (p = 0; p < 4; p++) {
		down[p].port = (uint16_t)p;
		down[p].dst_ip = 0x0a000001u + (uint32_t)p;
	}
	e[1].down = down;
	memset(&u, 0, sizeof(u));
	u.n_labels = 2;
	u.labels = e;
	u.n_routes = 1;
	u.routes = &rt;
	if (inart_switch_apply(sw, &u, &why) != 0) {
		fprintf(stderr, "apply: %s\n", why.msg);
		exit(1);
	}
	return sw;
}

static size_t ina_frame(uint8_t *f, uint32_t label, uint8_t flags, uint32_t seq, int rank)
{
	struct inart_wire_hdr h;
	static int32_t v[NV];
	uint8_t pl[1600], mac[6] = {2, 0, 0, 0, 0x42, (uint8_t)rank};
	size_t n;
	int i;

	memset(&h, 0, sizeof(h));
	h.flags = flags;
	h.bitmap_words = 1;
	h.scale_exp = 16;
	h.job = 1;
	h.fan_in = WORKERS;
	h.label = label;
	h.iter = 1;
	h.seq = seq;
	h.slot = (uint16_t)(seq % SLOTS);
	h.count = NV;
	h.bitmap[0] = flags & INART_F_RESULT ? (1u << WORKERS) - 1 : 1ull << rank;
	for (i = 0; i < NV; i++)
		v[i] = i * (rank + 1);
	n = inart_wire_encode(&h, v, pl, sizeof(pl));
	return inart_pkt_build_udp(f, INART_FRAME_MAX, mac, mac, 0x0a000101u + (uint32_t)rank,
				   0x0a000901u, 40000, INART_WIRE_UDP_PORT, pl, n);
}

static void bench_switch(double secs)
{
	struct inart_switch *sw = bench_switch_make();
	static uint8_t frames[SLOTS][WORKERS][INART_FRAME_MAX], outbuf[8][INART_FRAME_MAX];
	static size_t flen[SLOTS][WORKERS];
	struct inart_frame out[8], in;
	uint64_t pkts = 0, emitted = 0;
	uint32_t iter = 1;
	double t0, t;
	int s, w, i;

	for (i = 0; i < 8; i++)
		out[i].data = outbuf[i];
	for (s = 0; s < SLOTS; s++)
		for (w = 0; w < WORKERS; w++)
			flen[s][w] = ina_frame(frames[s][w], 7, INART_F_DATA, (uint32_t)s, w);
	/* INA aggregation: every round sends the same 64 chunks again as the
	 * next iteration (a chunk that repeats an iteration already completed
	 * would take the switch's late-contribution path instead); rewriting
	 * the 4-byte iter field is the only per-round cost */
	t0 = now_s();
	do {
		iter++;
		for (s = 0; s < SLOTS; s++)
			for (w = 0; w < WORKERS; w++)
				inart_put_be32(frames[s][w] + ITER_OFF, iter);
		for (s = 0; s < SLOTS; s++) {
			for (w = 0; w < WORKERS; w++) {
				in.data = frames[s][w];
				in.len = (uint16_t)flen[s][w];
				in.port = (uint16_t)w;
				emitted += (uint64_t)inart_switch_rx(sw, &in, pkts, out, 8);
				pkts++;
			}
		}
		t = now_s() - t0;
	} while (t < secs);
	if (emitted * WORKERS != pkts)
		fprintf(stderr, "warning: %llu aggregates for %llu packets\n",
			(unsigned long long)emitted, (unsigned long long)pkts);
	printf("switch rx, INA aggregation %d:1 (%d values):  %.3g packets/s, %.3g int32 "
	       "additions/s\n",
	       WORKERS, NV, (double)pkts / t, (double)pkts * NV / t);

	/* plain IPv4 forwarding of a 1000-byte UDP datagram */
	{
		uint8_t f[INART_FRAME_MAX], pl[1000] = {0}, mac[6] = {2, 0, 0, 0, 0x42, 0};
		size_t n = inart_pkt_build_udp(f, sizeof(f), mac, mac, 0x0a000101u, 0x0a000202u, 5,
					       6, pl, sizeof(pl));

		pkts = 0;
		in.data = f;
		in.len = (uint16_t)n;
		in.port = 0;
		t0 = now_s();
		do {
			for (i = 0; i < 10000; i++)
				pkts += (uint64_t)inart_switch_rx(sw, &in, 0, out, 8);
			t = now_s() - t0;
		} while (t < secs);
		printf("switch rx, IPv4 forwarding (%zu-byte frames):   %.3g packets/s\n", n,
		       (double)pkts / t);
	}
	/* DOWN replication of a RESULT to 4 ports */
	{
		uint8_t f[INART_FRAME_MAX];
		uint64_t copies = 0;

		in.data = f;
		in.len = (uint16_t)ina_frame(f, 9, INART_F_RESULT, 0, 0);
		in.port = WORKERS;
		pkts = 0;
		t0 = now_s();
		do {
			for (i = 0; i < 10000; i++)
				copies += (uint64_t)inart_switch_rx(sw, &in, 0, out, 8);
			pkts += 10000;
			t = now_s() - t0;
		} while (t < secs);
		printf("switch rx, RESULT replication to 4 ports:      %.3g packets/s in, %.3g "
		       "copies/s out\n",
		       (double)pkts / t, (double)copies / t);
	}
	inart_switch_destroy(sw);
}

int main(int argc, char **argv)
{
	double secs = 1.0;

	if (argc > 1) {
		secs = atof(argv[1]);
		if (!(secs > 0 && secs < 3600)) {
			fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
			return 2;
		}
	}
	printf("agg_bench: single thread, %.1f CPU s per measurement, rates per CPU second\n",
	       secs);
	bench_raw(secs);
	bench_pool(secs);
	bench_switch(secs);
	return 0;
}
