/*
 * agg_bench: throughput of the software aggregation engine and of the
 * switch pipeline, in memory, single thread.  Not a test: it prints numbers.
 *
 *   agg_bench [SECONDS]     (default 1 CPU second per measurement)
 *   agg_bench --sharded [SECONDS [RUNS]]   (default 1 s wall, 3 runs)
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
 *   --sharded: the sharded pipeline (dp/shard) at 8:1, one thread with one
 *      shard on CPU 0, then two threads with a shard each pinned to CPUs 0
 *      and 1, each fed the frames steering gives its shard (as the kernel's
 *      fanout would, so no steering in the loop): packets/s of all threads
 *      by the wall clock, the 2/1 ratio against the 1.8x target (issue 24),
 *      and each thread's share of its core (below 100%: the machine was
 *      busy; a session's threads share one scheduler group, so on a busy
 *      machine two threads may get no more CPU than one: `chrt -f 1`
 *      gives each its core, docs/dataplane.md).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp/agg_pool.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/ps.h"
#include "dp/shard.h"
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

/* The benchmark switch: WORKERS + 2 ports, an aggregating UP entry (label
 * 7, SLOTS slots, WORKERS contributors), a DOWN entry (label 9, 4 copies),
 * one route.  *u points into static arrays. */
static void bench_switch_tables(struct inart_sw_cfg *cfg, struct inart_sw_update *u)
{
	static struct inart_label_entry e[2];
	static uint64_t expected[1];
	static struct inart_label_down down[4];
	static struct inart_route rt = {0x0a000000, 8, 5};
	int p;

	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = WORKERS + 2;
	for (p = 0; p < cfg->n_ports; p++) {
		cfg->ports[p].mac[0] = 2;
		cfg->ports[p].mac[5] = (uint8_t)p;
		cfg->ports[p].ip = 0x0aff0001u + (uint32_t)p;
	}
	cfg->pool_slots = 1024;
	cfg->max_values = NV;
	cfg->flush_timeout_ns = 10000000;
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
	memset(u, 0, sizeof(*u));
	u->n_labels = 2;
	u->labels = e;
	u->n_routes = 1;
	u->routes = &rt;
}

static struct inart_switch *bench_switch_make(void)
{
	struct inart_sw_cfg cfg;
	struct inart_sw_update u;
	struct inart_switch *sw;
	struct inart_err why = {{0}};

	bench_switch_tables(&cfg, &u);
	sw = inart_switch_create(&cfg);
	if (sw == NULL) {
		perror("switch");
		exit(1);
	}
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

/* The PS core (dp/ps, what one `inart ps` thread runs per datagram) at
 * 8:1: every round the same 64 chunks as the next iteration, one
 * contribution of each of 8 ranks per chunk, one result per chunk to one
 * child. */
static void bench_ps(double secs)
{
	static uint8_t dg[SLOTS][WORKERS][INART_DGRAM_MAX], outbuf[4][INART_DGRAM_MAX];
	static size_t dlen[SLOTS][WORKERS];
	static struct inart_ps_tree_cfg c;
	static int32_t v[NV];
	struct inart_ps *ps = inart_ps_create();
	struct inart_dgram out[4];
	uint64_t pkts = 0, results = 0;
	uint32_t iter = 1;
	double t0, t;

	c.job = 1;
	c.fan_in = WORKERS;
	c.n_children = 1;
	c.children[0].ip = 0x0a000101u;
	c.max_chunks = SLOTS;
	if (ps == NULL || inart_ps_tree_set(ps, &c) < 0) {
		fprintf(stderr, "agg_bench: the PS tree refused\n");
		inart_ps_destroy(ps);
		return;
	}
	for (int i = 0; i < 4; i++)
		out[i].data = outbuf[i];
	for (int s = 0; s < SLOTS; s++)
		for (int w = 0; w < WORKERS; w++) {
			struct inart_wire_hdr h = {0};

			h.flags = INART_F_DATA;
			h.bitmap_words = 1;
			h.scale_exp = 16;
			h.job = 1;
			h.fan_in = WORKERS;
			h.label = 7;
			h.seq = (uint32_t)s;
			h.slot = (uint16_t)s;
			h.count = NV;
			h.bitmap[0] = 1ull << w;
			for (int i = 0; i < NV; i++)
				v[i] = i * (w + 1);
			dlen[s][w] = inart_wire_encode(&h, v, dg[s][w], INART_DGRAM_MAX);
		}
	t0 = now_s();
	do {
		uint64_t now = (uint64_t)(now_s() * 1e9);

		iter++;
		for (int s = 0; s < SLOTS; s++)
			for (int w = 0; w < WORKERS; w++)
				inart_put_be32(dg[s][w] + ITER_OFF - INART_PKT_UDP_HLEN, iter);
		for (int s = 0; s < SLOTS; s++)
			for (int w = 0; w < WORKERS; w++, pkts++)
				results += (uint64_t)inart_ps_rx(ps, dg[s][w], dlen[s][w],
								 0x0a000201u + (uint32_t)w, 40000,
								 now, out, 4);
		t = now_s() - t0;
	} while (t < secs);
	if (results * WORKERS != pkts)
		fprintf(stderr, "warning: %llu results for %llu datagrams\n",
			(unsigned long long)results, (unsigned long long)pkts);
	printf("ps rx, 8:1 (%d values, 1 child):              %.3g datagrams/s, %.3g results/s\n",
	       NV, (double)pkts / t, (double)results / t);
	inart_ps_destroy(ps);
}

/* ---- the sharded pipeline on several cores (--sharded) ---- */

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One worker thread: its shard, the frames steered to it (its own copy:
 * it rewrites their iter field), pinned to cpu. */
struct shard_run {
	struct inart_shards *sh;
	int k, cpu, nf;
	uint8_t (*frames)[INART_FRAME_MAX];
	uint16_t *flen, *port;
	double secs;
	atomic_int *go;
	uint64_t pkts, emitted;
	double wall, cpu_s;
	int pinned;
};

static void *shard_thread(void *arg)
{
	struct shard_run *r = arg;
	struct inart_switch *sw = inart_shards_core(r->sh, r->k);
	static __thread uint8_t outbuf[8][INART_FRAME_MAX];
	struct inart_frame out[8], in;
	uint32_t iter = 1;
	cpu_set_t set;
	double w0, c0;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	r->pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
	for (int i = 0; i < 8; i++)
		out[i].data = outbuf[i];
	while (!atomic_load(r->go))
		;
	w0 = wall_s();
	c0 = now_s();
	do {
		iter++;
		for (int f = 0; f < r->nf; f++)
			inart_put_be32(r->frames[f] + ITER_OFF, iter);
		for (int f = 0; f < r->nf; f++) {
			in.data = r->frames[f];
			in.len = r->flen[f];
			in.port = r->port[f];
			r->emitted += (uint64_t)inart_switch_rx(sw, &in, r->pkts, out, 8);
			r->pkts++;
		}
		r->wall = wall_s() - w0;
	} while (r->wall < r->secs);
	r->cpu_s = now_s() - c0;
	return NULL;
}

/* n threads (one shard each, on CPUs 0..n-1) for secs of wall time: the
 * packets/s of all of them together (wall clock; *per_cpu: per CPU second
 * of the threads).  Prints one line. */
static double bench_sharded_once(int n, double secs, double *per_cpu)
{
	static uint8_t all[SLOTS * WORKERS][INART_FRAME_MAX];
	struct inart_sw_cfg cfg;
	struct inart_sw_update u;
	struct shard_run r[INART_SHARD_MAX];
	pthread_t th[INART_SHARD_MAX];
	uint16_t alen[SLOTS * WORKERS], aport[SLOTS * WORKERS];
	struct inart_shards *sh;
	atomic_int go = 0;
	double wall = 0, cpu = 0, pps;
	uint64_t pkts = 0, emitted = 0;
	struct inart_err why = {{0}};
	int nf = 0;

	bench_switch_tables(&cfg, &u);
	sh = inart_shards_create(&cfg, n);
	if (sh == NULL || inart_shards_apply(sh, &u, &why) != 0) {
		fprintf(stderr, "shards: %s\n", sh == NULL ? strerror(errno) : why.msg);
		exit(1);
	}
	for (int s = 0; s < SLOTS; s++)
		for (int w = 0; w < WORKERS; w++, nf++) {
			alen[nf] = (uint16_t)ina_frame(all[nf], 7, INART_F_DATA, (uint32_t)s, w);
			aport[nf] = (uint16_t)w;
		}
	memset(r, 0, sizeof(r));
	for (int k = 0; k < n; k++) {
		r[k].sh = sh;
		r[k].k = k;
		r[k].cpu = k;
		r[k].secs = secs;
		r[k].go = &go;
		r[k].frames = calloc((size_t)nf, INART_FRAME_MAX);
		r[k].flen = calloc((size_t)nf, sizeof(uint16_t));
		r[k].port = calloc((size_t)nf, sizeof(uint16_t));
		if (r[k].frames == NULL || r[k].flen == NULL || r[k].port == NULL) {
			perror("frames");
			exit(1);
		}
	}
	/* each frame to the thread of its shard, as the kernel's fanout would */
	for (int f = 0; f < nf; f++) {
		struct shard_run *x = &r[inart_shard_steer(all[f], alen[f], n)];

		memcpy(x->frames[x->nf], all[f], alen[f]);
		x->flen[x->nf] = alen[f];
		x->port[x->nf++] = aport[f];
	}
	for (int k = 0; k < n; k++)
		if (pthread_create(&th[k], NULL, shard_thread, &r[k]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	atomic_store(&go, 1);
	for (int k = 0; k < n; k++) {
		pthread_join(th[k], NULL);
		pkts += r[k].pkts;
		emitted += r[k].emitted;
		wall = r[k].wall > wall ? r[k].wall : wall;
		cpu += r[k].cpu_s;
		free(r[k].frames);
		free(r[k].flen);
		free(r[k].port);
	}
	if (emitted * WORKERS != pkts)
		fprintf(stderr, "warning: %llu aggregates for %llu packets\n",
			(unsigned long long)emitted, (unsigned long long)pkts);
	pps = (double)pkts / wall;
	printf("  %d thread%s:", n, n > 1 ? "s" : " ");
	for (int k = 0; k < n; k++)
		printf(" [shard %d: cpu %d%s, %d frames, %.3g Mpps, %.0f%% of the core]", k,
		       r[k].cpu, r[k].pinned ? "" : " (not pinned)", r[k].nf,
		       (double)r[k].pkts / r[k].wall / 1e6, 100 * r[k].cpu_s / r[k].wall);
	*per_cpu = (double)pkts / cpu;
	printf("  total %.3f Mpps wall, %.3f Mpps per CPU second\n", pps / 1e6, *per_cpu / 1e6);
	inart_shards_destroy(sh);
	return pps;
}

/* The sharded pipeline at 8:1 with 1 thread, then 2 threads on 2 cores,
 * runs times: Mpps and the ratio against the 1.8x target. */
static void bench_sharded(double secs, int runs)
{
	printf("sharded switch pipeline, INA aggregation %d:1 (%d values, %d slots), "
	       "%.1f s wall per measurement; online CPUs: %ld\n",
	       WORKERS, NV, SLOTS, secs, sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0; i < runs; i++) {
		double c1, c2, one = bench_sharded_once(1, secs, &c1),
			       two = bench_sharded_once(2, secs, &c2);

		/* the wall-clock ratio is the measurement; the CPU-time one says what
		 * two whole cores would give if the threads scale as their CPU
		 * seconds do (not a measurement of two idle cores) */
		printf("run %d: 1 core %.3f Mpps, 2 cores %.3f Mpps, ratio %.2fx by the wall clock "
		       "(target 1.8x: %s); per CPU second %.3f vs %.3f Mpps (2 x %.2f)\n",
		       i + 1, one / 1e6, two / 1e6, two / one, two / one >= 1.8 ? "met" : "missed",
		       c1 / 1e6, c2 / 1e6, c2 / c1);
	}
}

int main(int argc, char **argv)
{
	double secs = 1.0;
	int sharded = argc > 1 && strcmp(argv[1], "--sharded") == 0, runs = 3;

	if (argc > 1 + sharded) {
		secs = atof(argv[1 + sharded]);
		if (!(secs > 0 && secs < 3600) || argc > 2 + 2 * sharded) {
			fprintf(stderr,
				"usage: %s [SECONDS]\n       %s --sharded [SECONDS [RUNS]]\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	if (sharded) {
		if (argc > 3)
			runs = atoi(argv[3]);
		if (runs < 1 || runs > 100) {
			fprintf(stderr, "%s: RUNS: 1..100\n", argv[0]);
			return 2;
		}
		bench_sharded(secs, runs);
		return 0;
	}
	printf("agg_bench: single thread, %.1f CPU s per measurement, rates per CPU second\n",
	       secs);
	bench_raw(secs);
	bench_pool(secs);
	bench_switch(secs);
	bench_ps(secs);
	return 0;
}
