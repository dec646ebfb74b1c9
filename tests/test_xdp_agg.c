/*
 * test_xdp_agg: the XDP aggregation program (bpf/xdp_agg.bpf.c) against the
 * switch core (dp/switch), packet by packet, on a seeded corpus: several
 * trees (fan-in 1..8, one of two bitmap words, slot windows 1..8, payloads
 * 1..358 values, 340 at most per slot), with loss, duplicates, reordering,
 * retransmissions (RETX), stale epochs (a packet of an older iteration sent
 * again), far-future iterations, PARTIAL and FALLBACK contributions from
 * below, overflowing sums, low TTLs and malformed or foreign frames.
 *
 * Three switches see the corpus: the reference core A gets every packet;
 * the program (BPF_PROG_TEST_RUN, ingress lo = port 0, on one pinned CPU)
 * gets every packet too; a second core B gets the packets the program
 * punts untouched.  Per packet, by the program's verdict:
 *   SEND    A sent exactly one frame, byte for byte the program's, on the
 *           port the program chose (XDP_REDIRECT, or XDP_TX to port 0);
 *   DROP    A sent nothing;
 *   APPLIED A sent as many frames as the program counted (> 1);
 *   PUNT    B's frames equal A's (the packet needs no state the program
 *           holds).
 * At the end A's tree counters equal the program's plus B's.  Needs root
 * (loading BPF); exits 77 (skipped) otherwise.  Arguments: packets (default
 * 120000), a seed (default: the fixed one), "host" (port 0 a host port) or
 * "bench" (timings only, see bench()).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp/switch.h" /* first: see apply() */
#ifdef INART_ERR_H
#define SWITCH_HAS_ERR 1
#endif
#include "common/rng.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/wire.h"
#include "io/xdp_agg.h"
#include "io/xdp_agg_maps.h"
#include "xdp_agg_rule.h"
#include <xdp_agg.skel.h>

#define NP 4
#define NT 7	      /* trees */
#define SLOTS 96      /* pool */
#define TIMEOUT 100   /* flush timeout, in packets (the clock: packet number + 1) */
#define TICK_EVERY 50 /* packets */

/* The clock of packet i: a nanosecond a packet, and every RESTART_EVERY
 * packets INART_XA_RESTART_IDLE_NS and a half more (both sides forget their
 * ranks' progress then, dp/switch.h INART_SW_RESTART_IDLE_NS; timeouts
 * expire). */
#define RESTART_EVERY 25000
static uint64_t now_of(long i)
{
	return (uint64_t)i + 1 + (uint64_t)(i / RESTART_EVERY) * (INART_XA_RESTART_IDLE_NS * 3 / 2);
}

/* the corpus's generator (common/rng.h), seeded in main */
static struct inart_rng rng;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)inart_rng_below(&rng, n);
}

struct tree {
	uint32_t job, label, next;
	uint16_t out, base, n_slots, count, fan_in;
	uint8_t bw;
	int n_exp;
	uint16_t ranks[16];
	uint64_t exp[2];
	uint32_t iter, seq; /* the generator's position */
	int next_k;	    /* the rank (index into ranks) to send next */
};

static struct tree T[NT];
/* 1: port 0 is a host port (ingress filtering): the host of tree 0's only
 * rank; every other tree's packets arrive spoofed (the core drops them) */
static int host_mode;

static void trees_make(void)
{
	int base = 0;

	for (int j = 0; j < NT; j++) {
		struct tree *t = &T[j];

		memset(t, 0, sizeof(*t));
		t->job = 100 + (uint32_t)j;
		t->label = 1000 + (uint32_t)j;
		t->next = 2000 + (uint32_t)j;
		t->out = (uint16_t)(1 + j % (NP - 1));
		t->n_slots = (uint16_t)(j == 0 ? 1 : j == 1 ? 2 : 1 + rnd(8));
		t->base = (uint16_t)base;
		base += t->n_slots;
		t->count = (uint16_t)(j == 2 ? 358 : 1 + rnd(358));
		if (j == NT - 1) { /* two bitmap words: ranks of a 70-worker job */
			static const uint16_t r[] = {3, 10, 63, 64, 69};

			t->bw = 2;
			t->fan_in = 70;
			t->n_exp = 5;
			memcpy(t->ranks, r, sizeof(r));
		} else {
			t->bw = 1;
			t->fan_in = (uint16_t)(1 + j % 8);
			if (j == 3)
				t->fan_in = 8;
			t->n_exp = t->fan_in;
			for (int k = 0; k < t->n_exp; k++)
				t->ranks[k] = (uint16_t)k;
		}
		t->count = (uint16_t)(t->bw == 2 && t->count > 328 ? 328 : t->count);
		for (int k = 0; k < t->n_exp; k++)
			t->exp[t->ranks[k] / 64] |= 1ull << (t->ranks[k] % 64);
	}
}

static uint32_t host_ip(int j, int r)
{
	return 0x0a000000u | (uint32_t)j << 16 | (uint32_t)(r + 1);
}

static int apply(struct inart_switch *sw, const struct inart_sw_update *u)
{
#ifdef SWITCH_HAS_ERR
	struct inart_err e = {{0}};
	int rc = inart_switch_apply(sw, u, &e);

	if (rc < 0)
		fprintf(stderr, "test_xdp_agg: apply: %s\n", e.msg);
	return rc;
#else
	char why[256] = "";
	int rc = inart_switch_apply(sw, u, why, sizeof(why));

	if (rc < 0)
		fprintf(stderr, "test_xdp_agg: apply: %s\n", why);
	return rc;
#endif
}

static void port_cfg(struct inart_sw_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = NP;
	cfg->pool_slots = SLOTS;
	cfg->max_values = 340; /* tree 2's 358 values are too many: FALLBACK (punted) */
	cfg->flush_timeout_ns = TIMEOUT;
	xa_rule_ports(cfg, NP);
	if (host_mode)
		cfg->ports[0].peer_ip = host_ip(0, 0);
}

/* The switch core with the trees' entries: an aggregating UP entry per
 * tree, a non-aggregating UP entry and a DOWN entry (punted). */
static struct inart_switch *core(void)
{
	struct inart_sw_cfg cfg;
	struct inart_label_entry ents[2 * NT + 2];
	static const struct inart_label_down dn[] = {{1, 0, 0}, {2, 0, 0}};
	struct inart_sw_update u = {.replace = 1};
	struct inart_sw_ingress ing = {0, 0, T[0].job};
	struct inart_switch *sw;

	port_cfg(&cfg);
	sw = inart_switch_create(&cfg);
	if (sw == NULL)
		return NULL;
	memset(ents, 0, sizeof(ents));
	for (int j = 0; j < NT; j++) {
		ents[j].label = T[j].label;
		ents[j].kind = INART_LABEL_UP;
		ents[j].job = T[j].job;
		ents[j].in_ports = j == 4 ? 2 : j % 2 ? 1 : 0; /* tree 4: never on port 0 */
		ents[j].out_port = T[j].out;
		ents[j].next_label = T[j].next;
		ents[j].aggregate = 1;
		ents[j].slot_base = T[j].base;
		ents[j].n_slots = T[j].n_slots;
		ents[j].bitmap_words = T[j].bw;
		ents[j].expected = T[j].exp;
	}
	ents[NT] = (struct inart_label_entry){
	    .label = 3000, .kind = INART_LABEL_UP, .job = 7, .out_port = 3, .next_label = 3001};
	ents[NT + 1] = (struct inart_label_entry){
	    .label = 4000, .kind = INART_LABEL_DOWN, .job = T[0].job, .n_down = 2, .down = dn};
	for (int j = 0; j < NT; j++) /* the trees' DOWN entries */
		ents[NT + 2 + j] = (struct inart_label_entry){.label = 5000 + (uint32_t)j,
							      .kind = INART_LABEL_DOWN,
							      .job = T[j].job,
							      .n_down = 2,
							      .down = dn};
	u.n_labels = 2 * NT + 2;
	u.labels = ents;
	u.n_ingress = host_mode;
	u.ingress = &ing;
	if (apply(sw, &u) < 0) {
		inart_switch_destroy(sw);
		return NULL;
	}
	return sw;
}

/* The program's maps from the configuration and the tables the core got
 * (io/xdp_agg_maps): the ingress is lo = port 0, every port redirects to
 * lo (the test run does not send). */
static int fill_maps(struct xdp_agg *sk, const struct inart_switch *sw)
{
	struct inart_xdp_agg_fds fds = {
	    bpf_map__fd(sk->maps.xa_cfg),     bpf_map__fd(sk->maps.xa_ports),
	    bpf_map__fd(sk->maps.xa_ifports), bpf_map__fd(sk->maps.xa_devs),
	    bpf_map__fd(sk->maps.xa_labels),  bpf_map__fd(sk->maps.xa_ingress)};
	uint32_t ifx[NP] = {if_nametoindex("lo")}, lo = ifx[0];
	struct inart_err e = {{0}};
	struct inart_sw_cfg cfg;
	int rc;

	port_cfg(&cfg);
	rc = inart_xdp_agg_maps_fill(&fds, &cfg, sw, ifx, &e);
	for (uint32_t p = 1; rc == 0 && p < NP; p++)
		if (bpf_map_update_elem(fds.devs, &p, &lo, BPF_ANY) < 0)
			rc = -errno;
	if (rc < 0)
		fprintf(stderr, "test_xdp_agg: %s\n", e.msg);
	return rc;
}

/* ---- the corpus ---- */

/* A DATA frame of tree j, rank index k, chunk (iter, seq); k < 0: the
 * chunk's clean RESULT from the PS going down (label 5000 + j, every rank
 * of the job). */
static size_t data_frame(uint8_t *f, int j, int k, uint32_t iter, uint32_t seq, uint8_t flags,
			 uint8_t ttl)
{
	const struct tree *t = &T[j];
	struct inart_wire_hdr h = {0};
	static int32_t v[INART_XA_MAX_VALUES];
	uint8_t ina[INART_FRAME_MAX];
	static const uint8_t src[6] = {2, 0, 0, 0, 1, 0}, dst[6] = {2, 0, 0, 0, 0, 0};
	size_t n, len;
	int r = k >= 0 ? t->ranks[k] : 0;

	h.flags = (uint8_t)((k >= 0 ? INART_F_DATA : INART_F_RESULT) | flags);
	h.bitmap_words = t->bw;
	h.scale_exp = 3;
	h.job = t->job;
	h.fan_in = t->fan_in;
	h.label = t->label;
	h.iter = iter;
	h.seq = seq;
	h.slot = (uint16_t)(seq % t->n_slots);
	h.count = (uint16_t)(seq == 39 ? t->count / 2 + 1 : t->count); /* a shorter last chunk */
	h.bitmap[r / 64] = 1ull << (r % 64);
	if (k < 0) {
		h.label = 5000 + (uint32_t)j;
		h.prev = seq;
		for (int b = 0; b < t->fan_in; b++)
			h.bitmap[b / 64] |= 1ull << (b % 64);
	}
	for (int i = 0; i < h.count; i++) {
		uint32_t x =
		    (uint32_t)(iter * 7919u + seq * 104729u + (uint32_t)r * 31u + (uint32_t)i);

		v[i] = (int32_t)(x % 200001) - 100000;
	}
	if (rnd(40) == 0) /* sums that may leave the int32 range */
		v[rnd(h.count)] =
		    rnd(2) ? (int32_t)(0x7ffffff0 - rnd(64)) : INT32_MIN + (int32_t)rnd(64);
	n = inart_wire_encode(&h, v, ina, sizeof(ina));
	if (k >= 0)
		len = inart_pkt_build_udp(f, INART_FRAME_MAX, src, dst, host_ip(j, r),
					  0x0a090000u | (uint32_t)j, (uint16_t)(40000 + r),
					  INART_WIRE_UDP_PORT, ina, n);
	else
		len = inart_pkt_build_udp(f, INART_FRAME_MAX, src, dst, 0x0a090000u | (uint32_t)j,
					  host_ip(j, 0), INART_WIRE_UDP_PORT, INART_WIRE_UDP_PORT,
					  ina, n);
	f[22] = ttl;
	f[24] = f[25] = 0;
	inart_put_be16(f + 24, inart_pkt_ip_csum(f + 14, 20));
	return len;
}

/* Damage a frame in one of several ways (the core drops or punts it). */
static size_t damage(uint8_t *f, size_t len)
{
	switch (rnd(8)) {
	case 0:
		return len - 1 - rnd((uint32_t)len - 15); /* truncated (14 bytes at least) */
	case 1:
		f[42] = 2; /* version */
		break;
	case 2:
		f[14 + 20 + 8 + 12 + 3] ^= 0x5a; /* unknown label */
		break;
	case 3:
		f[14 + 20 + 8 + 4 + 3] ^= 1; /* another job */
		break;
	case 4:
		f[42 + 32 + 7] |= 0x80; /* a rank outside the subtree (or the fan-in) */
		break;
	case 5:
		f[14 + rnd(20)] ^= (uint8_t)(1 + rnd(255)); /* IPv4 header: checksum fails */
		break;
	case 6:
		f[42 + 1] = 0x03; /* DATA|RESULT */
		break;
	default:
		f[23] = 6; /* TCP */
		break;
	}
	return len;
}

/* IPv4 options of `words` 32-bit words (random bytes: the core skips
 * them, as the program must) inserted after the IPv4 header: fan-in and
 * forwards keep them, aggregates built from a slot have none.  The frame
 * is unchanged if it would grow beyond INART_FRAME_MAX. */
static size_t add_options(uint8_t *f, size_t len, int words)
{
	size_t n = 4 * (size_t)words;

	if (len < 34 || len + n > INART_FRAME_MAX || (f[14] & 15) != 5)
		return len;
	memmove(f + 34 + n, f + 34, len - 34);
	for (size_t k = 0; k < n; k++)
		f[34 + k] = (uint8_t)rnd(256);
	f[14] = (uint8_t)(0x45 + words);
	inart_put_be16(f + 16, (uint16_t)(inart_get_be16(f + 16) + n));
	f[24] = f[25] = 0;
	inart_put_be16(f + 24, inart_pkt_ip_csum(f + 14, 20 + n));
	return len + n;
}

/* An 802.1Q tag inserted (the core drops the frame: not IPv4). */
static size_t add_vlan(uint8_t *f, size_t len)
{
	if (len < 14 || len + 4 > INART_FRAME_MAX)
		return len;
	memmove(f + 16, f + 12, len - 12);
	inart_put_be16(f + 12, 0x8100);
	inart_put_be16(f + 14, (uint16_t)rnd(4096));
	return len + 4;
}

/* n bytes after the frame: Ethernet padding (ip = 0), or inside the IPv4
 * payload after the UDP datagram (ip = 1); both trimmed by the core's
 * aggregates, the second kept by its forwards. */
static size_t add_tail(uint8_t *f, size_t len, size_t n, int ip)
{
	if (len < 34 || len + n > INART_FRAME_MAX || (f[14] & 15) != 5)
		return len;
	for (size_t k = 0; k < n; k++)
		f[len + k] = (uint8_t)rnd(256);
	if (ip) {
		inart_put_be16(f + 16, (uint16_t)(inart_get_be16(f + 16) + n));
		f[24] = f[25] = 0;
		inart_put_be16(f + 24, inart_pkt_ip_csum(f + 14, 20));
	}
	return len + n;
}

enum { K_PLAIN, K_OPTIONS, K_VLAN };

struct pkt {
	uint8_t f[INART_FRAME_MAX];
	uint16_t len;
	uint8_t kind; /* K_... */
};

#define WIN 64
static struct pkt win[WIN]; /* reordering window */
static struct pkt old[256]; /* sent before: retransmissions, stale epochs */
static int n_win, n_old;

static void remember(const struct pkt *p)
{
	if (n_old < 256)
		old[n_old++] = *p;
	else
		old[rnd(256)] = *p;
}

/* The next packet of the corpus. */
static void next_pkt(struct pkt *out)
{
	while (n_win < WIN) {
		struct pkt *p = &win[n_win];
		int j = (int)rnd(NT), u = (int)rnd(1000);
		struct tree *t = &T[j];
		uint8_t flags = 0, ttl = (uint8_t)(rnd(40) == 0 ? rnd(3) : 64 - rnd(8));
		uint32_t u2;

		if (u < 20 && n_old > 0) { /* retransmission of something sent */
			*p = old[rnd((uint32_t)n_old)];
			p->f[43] |= INART_F_RETX;
			n_win++;
			continue;
		}
		if (u < 40 && n_old > 0) { /* stale epoch / duplicate, sent again as is */
			*p = old[rnd((uint32_t)n_old)];
			n_win++;
			continue;
		}
		if (u < 50)
			flags |= INART_F_PARTIAL;
		else if (u < 60)
			flags |= INART_F_FALLBACK;
		else if (u < 63)
			flags |= INART_F_OVERFLOW;
		if (u >= 70 && u < 100 && t->seq > 2) { /* a chunk's result going down */
			p->len =
			    (uint16_t)data_frame(p->f, j, -1, t->iter, t->seq - 1 - rnd(3), 0, ttl);
		} else { /* the chunk: mostly the tree's current one, sometimes the next */
			uint32_t seq = t->seq + (rnd(8) == 0 ? 1 : 0);
			int k = rnd(10) == 0 ? (int)rnd((uint32_t)t->n_exp) : t->next_k;

			uint32_t iter = t->iter + (u == 63 && rnd(4) == 0 ? 1000 + rnd(1000)
									  : 0); /* far future */

			p->len = (uint16_t)data_frame(p->f, j, k, iter, seq, flags, ttl);
			if (++t->next_k >= t->n_exp) { /* every rank sent the chunk: the next */
				t->next_k = 0;
				if (++t->seq >= 40) {
					t->seq = 0;
					t->iter++;
				}
			}
		}
		p->kind = K_PLAIN;
		if ((u2 = rnd(100)) < 4) {
			size_t n = add_options(p->f, p->len, 1 + (int)rnd(10));

			p->kind = n != p->len ? K_OPTIONS : K_PLAIN;
			p->len = (uint16_t)n;
		} else if (u2 < 6) {
			p->len = (uint16_t)add_vlan(p->f, p->len);
			p->kind = K_VLAN;
		} else if (u2 < 9) {
			p->len = (uint16_t)add_tail(p->f, p->len, 1 + rnd(24), u2 == 8);
		}
		if (rnd(100) < 3)
			p->len = (uint16_t)damage(p->f, p->len);
		else
			remember(p);
		if (rnd(100) < 3) /* lost */
			continue;
		n_win++;
		if (rnd(100) < 3 && n_win < WIN) { /* duplicated */
			win[n_win] = *p;
			n_win++;
		}
	}
	{
		int i = (int)rnd(8); /* reordering: one of the 8 oldest */

		*out = win[i];
		memmove(&win[i], &win[i + 1], (size_t)(n_win - i - 1) * sizeof(win[0]));
		n_win--;
	}
}

/* ---- the comparison ---- */

static int cpu_now;

static int percpu_read(int fd, uint32_t key, void *val, size_t sz)
{
	return xa_rule_percpu(fd, key, cpu_now, val, sz);
}

/* The frames the program queued on xa_tx for the last packet. */
static struct xa_rule_queue queued;

/* A tick at now in core A, core B and the program (xdp_agg_tick, one frame
 * per run, as many runs as A emitted frames or until it has none): the
 * same frames in the same order; B has nothing to flush.  Returns the
 * differences. */
static long tick_all(struct inart_switch *a, struct inart_switch *b, struct xdp_agg *sk,
		     uint64_t now, struct inart_frame *fa, struct inart_frame *fb, long *n_flushed)
{
	static uint8_t dummy[INART_FRAME_MAX];
	int na = inart_switch_tick(a, now, fa, 16), nb = inart_switch_tick(b, now, fb, 16), k = 0;
	long bad = nb != 0;

	for (int runs = 0; runs < 64; runs++) {
		uint8_t xo[4096];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = dummy, .data_size_in = sizeof(dummy),
			    .data_out = xo, .data_size_out = sizeof(xo), .repeat = 1);

		if (k == na && na == 16)
			break; /* A stopped for lack of room: so does the program */
		if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg_tick), &o) < 0)
			return bad + 1;
		if (o.retval == XDP_DROP)
			break;
		if (o.retval != XDP_TX || k >= na || o.data_size_out != fa[k].len ||
		    memcmp(xo, fa[k].data, fa[k].len) != 0) {
			bad++;
			break;
		}
		k++;
	}
	*n_flushed += k;
	if (k != na)
		bad++;
	if (bad)
		fprintf(stderr, "test_xdp_agg: tick at %lu: core A %d frames, program %d\n",
			(unsigned long)now, na, k);
	return bad;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* The median of the n run times in d (sorted in place). */
static uint32_t median(uint32_t *d, int n)
{
	qsort(d, (size_t)n, sizeof(*d), cmp_u32);
	return d[n / 2];
}

/* "bench": the cost per packet of the program (BPF_PROG_TEST_RUN's own
 * timing of the program: the mean and, less disturbed by a busy machine,
 * the median of one run per packet) and of the core (inart_switch_rx),
 * 1 KB frames (235 values): fan-in 1 (every packet a complete aggregate)
 * and 8:1 (eight contributions per aggregate).  Not part of the suite. */
static int bench(struct xdp_agg *sk, struct inart_switch *a)
{
	static uint8_t out[16][INART_FRAME_MAX];
	static uint32_t d[200000];
	struct inart_frame fo[16];
	const int n1 = 200000, n8 = 20000;
	uint8_t f[INART_FRAME_MAX], xo[4096];
	double t0, tc;
	uint64_t dur = 0;
	size_t len;

	for (int i = 0; i < 16; i++)
		fo[i].data = out[i];
	T[0].count = T[3].count = 235;
	len = data_frame(f, 0, 0, 5, 7, 0, 64);
	{ /* the floor: a frame punted at once (not UDP), the test run's own cost */
		uint8_t g[INART_FRAME_MAX];

		memcpy(g, f, len);
		g[23] = 6;
		for (int i = 0; i < n1; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = g,
				    .data_size_in = (uint32_t)len, .data_out = xo,
				    .data_size_out = sizeof(xo), .repeat = 1);

			if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg), &o) < 0)
				return 1;
			dur += o.duration;
			d[i] = o.duration;
		}
		printf("test_xdp_agg: bench punt at once, %zu-byte frames: program %.0f ns per "
		       "packet (median %u)\n",
		       len, (double)dur / n1, median(d, n1));
		dur = 0;
	}
	{
		struct inart_frame in = {f, (uint16_t)len, 0};

		/* one run per test run: the program rewrites the frame in place */
		for (int i = 0; i < n1; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f,
				    .data_size_in = (uint32_t)len, .data_out = xo,
				    .data_size_out = sizeof(xo), .repeat = 1);

			if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg), &o) < 0 ||
			    o.retval != XDP_REDIRECT) {
				fprintf(stderr, "test_xdp_agg: bench: the program returned %u\n",
					o.retval);
				return 1;
			}
			dur += o.duration;
			d[i] = o.duration;
		}
		t0 = now_s();
		for (int i = 0; i < n1; i++)
			inart_switch_rx(a, &in, 1, fo, 16);
		tc = now_s() - t0;
		printf("test_xdp_agg: bench fan-in 1, %zu-byte frames: program %.0f ns per packet "
		       "(median %u), core %.0f ns per packet\n",
		       len, (double)dur / n1, median(d, n1), 1e9 * tc / n1);
	}
	dur = 0;
	tc = 0;
	for (int i = 0; i < n8; i++)
		for (int k = 0; k < 8; k++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_out = xo,
				    .data_size_out = sizeof(xo), .repeat = 1);
			struct inart_frame in = {f, 0, 0};

			len = data_frame(f, 3, k, 9, (uint32_t)i, 0, 64);
			o.data_size_in = (uint32_t)len;
			in.len = (uint16_t)len;
			if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg), &o) < 0)
				return 1;
			dur += o.duration;
			d[8 * i + k] = o.duration;
			t0 = now_s();
			inart_switch_rx(a, &in, 2, fo, 16);
			tc += now_s() - t0;
		}
	printf("test_xdp_agg: bench fan-in 8, %zu-byte frames: program %.0f ns per input packet "
	       "(median %u), core %.0f ns per input packet\n",
	       len, (double)dur / (8.0 * n8), median(d, 8 * n8), 1e9 * tc / (8.0 * n8));
	return 0;
}

/* The program opened, its maps sized for core a's tables, loaded; with vlog
 * the verifier's statistics (BPF_LOG_STATS: its line "processed N insns
 * (limit L) max_states_per_insn M total_states T peak_states P mark_read
 * R") into vlog[k] for k of the programs below (xdp_agg, xdp_agg_tick, and
 * switchd's entries with the same bodies: xdp_agg_dev, xdp_agg_cpu).  NULL
 * if refused (libbpf prints the verifier's log when vlog is NULL). */
static struct bpf_program *prog_k(struct xdp_agg *sk, int k)
{
	struct bpf_program *p[] = {sk->progs.xdp_agg, sk->progs.xdp_agg_tick, sk->progs.xdp_agg_dev,
				   sk->progs.xdp_agg_cpu};

	return p[k];
}

static struct xdp_agg *load_prog(struct inart_switch *a, char (*vlog)[4096])
{
	struct xdp_agg *sk = xdp_agg__open();
	struct inart_sw_cfg cfg;
	uint32_t ns, nr, ntr;

	if (sk == NULL)
		return NULL;
	port_cfg(&cfg);
	if (inart_xdp_agg_maps_sizes(&cfg, a, &ns, &nr, &ntr) < 0) {
		fprintf(stderr, "test_xdp_agg: map sizes\n");
		xdp_agg__destroy(sk);
		return NULL;
	}
	bpf_map__set_max_entries(sk->maps.xa_slots, ns);
	bpf_map__set_max_entries(sk->maps.xa_progress, nr);
	bpf_map__set_max_entries(sk->maps.xa_trees, ntr);
	for (int k = 0; vlog != NULL && k < 4; k++) {
		bpf_program__set_log_buf(prog_k(sk, k), vlog[k], 4096);
		bpf_program__set_log_level(prog_k(sk, k), 4);
	}
	if (xdp_agg__load(sk) < 0) {
		xdp_agg__destroy(sk);
		return NULL;
	}
	return sk;
}

int main(int argc, char **argv)
{
	static uint8_t oa[16][INART_FRAME_MAX], ob[16][INART_FRAME_MAX];
	static char vlog[4][4096];
	struct inart_frame fa[16], fb[16];
	long n_pkts = argc > 1 ? atol(argv[1]) : 120000, bad = 0, cnt[8] = {0}, cnt_queued = 0,
	     kinds[3][8] = {{0}}, cnt_flushed = 0;
	struct inart_xa_cfg xc;
	uint32_t zero = 0;
	struct inart_switch *a, *b;
	struct ring_buffer *rb;
	struct xdp_agg *sk;
	int fd_last;

	if (geteuid() != 0) {
		printf("test_xdp_agg: not root, skipped\n");
		return 77;
	}
	if ((cpu_now = xa_rule_pin()) < 0) {
		perror("test_xdp_agg: pinning");
		return 1;
	}
	inart_rng_seed(&rng, 0x9E3779B97F4A7C15ull ^ (argc > 2 ? strtoull(argv[2], NULL, 0) : 0));
	host_mode = argc > 3 && strcmp(argv[3], "host") == 0;
	trees_make();
	a = core();
	b = core();
	libbpf_set_print(xa_rule_quiet);
	if (a == NULL || b == NULL) {
		fprintf(stderr, "test_xdp_agg: setup: %s\n", strerror(errno));
		return 1;
	}
	sk = load_prog(a, vlog);
	if (sk == NULL) { /* again without the statistics: libbpf prints the refusal */
		sk = load_prog(a, NULL);
		if (sk != NULL)
			fprintf(stderr, "test_xdp_agg: refused with BPF_LOG_STATS only?\n");
		fprintf(stderr, "test_xdp_agg: the verifier refused the program: %s\n",
			strerror(errno));
		return 1;
	}
	if (fill_maps(sk, a) < 0)
		return 1;
	for (int k = 0; k < 4; k++) {
		struct bpf_program *pg = prog_k(sk, k);
		struct bpf_prog_info info = {0};
		uint32_t il = sizeof(info);

		const char *st = strstr(vlog[k], "processed ");

		if (bpf_obj_get_info_by_fd(bpf_program__fd(pg), &info, &il) == 0)
			printf("test_xdp_agg: verifier accepted %s: %u xlated bytes (%u insns), %u "
			       "jited bytes, verified_insns %u\n",
			       bpf_program__name(pg), info.xlated_prog_len,
			       info.xlated_prog_len / 8, info.jited_prog_len, info.verified_insns);
		if (st != NULL)
			printf("test_xdp_agg: verifier on %s: %.*s\n", bpf_program__name(pg),
			       (int)strcspn(st, "\n"), st);
	}
	if (bpf_map_lookup_elem(bpf_map__fd(sk->maps.xa_cfg), &zero, &xc) < 0) {
		fprintf(stderr, "test_xdp_agg: reading xa_cfg: %s\n", strerror(errno));
		return 1;
	}
	fd_last = bpf_map__fd(sk->maps.xa_last);
	if (argc > 3 && strcmp(argv[3], "bench") == 0)
		return bench(sk, a);
	rb = ring_buffer__new(bpf_map__fd(sk->maps.xa_tx), xa_rule_on_queued, &queued, NULL);
	if (rb == NULL) {
		fprintf(stderr, "test_xdp_agg: the ring buffer: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < 16; i++) {
		fa[i].data = oa[i];
		fb[i].data = ob[i];
	}
	for (long i = 0; i < n_pkts; i++) {
		struct pkt p;
		uint8_t in[INART_FRAME_MAX], xo[4096];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p.f, .data_out = xo,
			    .data_size_out = sizeof(xo), .repeat = 1);
		struct inart_frame fin = {in, 0, 0};
		struct inart_xa_last last;
		int na, nb = 0, ok = 1;

		next_pkt(&p);
		o.data_in = p.f;
		o.data_size_in = p.len;
		memcpy(in, p.f, p.len);
		fin.len = p.len;
		xc.now = now_of(i);
		if (bpf_map_update_elem(bpf_map__fd(sk->maps.xa_cfg), &zero, &xc, BPF_ANY) < 0) {
			fprintf(stderr, "test_xdp_agg: the clock: %s\n", strerror(errno));
			return 1;
		}
		if (i % TICK_EVERY == 0)
			bad += tick_all(a, b, sk, now_of(i), fa, fb, &cnt_flushed);
		na = inart_switch_rx(a, &fin, now_of(i), fa, 16);
		if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg), &o) < 0 ||
		    percpu_read(fd_last, 0, &last, sizeof(last)) < 0) {
			fprintf(stderr, "test_xdp_agg: test run (packet %ld, %u bytes): %s\n", i,
				p.len, strerror(errno));
			return 1;
		}
		queued.n = 0;
		if (ring_buffer__consume(rb) < 0) {
			fprintf(stderr, "test_xdp_agg: reading the ring buffer: %s\n",
				strerror(errno));
			return 1;
		}
		cnt[last.verdict & 7]++;
		kinds[p.kind % 3][last.verdict & 7]++;
		if (last.verdict == INART_XA_SEND && last.frames > 1)
			cnt_queued += queued.n;
		if (xa_rule_passed_up(last.verdict)) { /* to core B as it came */
			memcpy(in, p.f, p.len);
			nb = inart_switch_rx(b, &fin, now_of(i), fb, 16);
		}
		ok = xa_rule_ok(&o, xo, p.f, p.len, 0, &last, &queued, fa, na, fb, nb);
		if (!ok && bad++ < 8)
			fprintf(stderr,
				"test_xdp_agg: packet %ld (%u bytes): verdict %u retval %u port %u "
				"(%u bytes out); core A %d frames (port %d, %u bytes)\n",
				i, p.len, last.verdict, o.retval, last.out_port, o.data_size_out,
				na, na > 0 ? fa[0].port : -1, na > 0 ? fa[0].len : 0);
	}
	{
		struct inart_sw_tree_stats ta[64], tb[64], tot = {0};
		int nta = inart_switch_stats(a, NULL, NULL, ta, 64),
		    fd = bpf_map__fd(sk->maps.xa_trees);

		inart_switch_stats(b, NULL, NULL, tb, 64);
		for (int i = 0; i < nta && i < 64; i++) {
			tot.aggregated += ta[i].aggregated;
			tot.emitted += ta[i].emitted;
			tot.partial += ta[i].partial;
			tot.fallback += ta[i].fallback;
			tot.duplicates += ta[i].duplicates;
			tot.overflows += ta[i].overflows;
		}
		printf(
		    "test_xdp_agg: core A's trees: %lu aggregated, %lu emitted, %lu partial, %lu "
		    "fallback, %lu duplicates, %lu overflows\n",
		    tot.aggregated, tot.emitted, tot.partial, tot.fallback, tot.duplicates,
		    tot.overflows);
		for (int i = 0; i < nta && i < 64; i++) {
			struct inart_xa_tree k = {0};

			percpu_read(fd, (uint32_t)i, &k, sizeof(k));
			if (ta[i].aggregated != k.aggregated + tb[i].aggregated ||
			    ta[i].emitted != k.emitted + tb[i].emitted ||
			    ta[i].partial != k.partial + tb[i].partial ||
			    ta[i].early != k.early + tb[i].early ||
			    ta[i].fallback != k.fallback + tb[i].fallback ||
			    ta[i].duplicates != k.duplicates + tb[i].duplicates ||
			    ta[i].overflows != k.overflows + tb[i].overflows) {
				bad++;
				fprintf(
				    stderr,
				    "test_xdp_agg: tree (job %u): core aggregated %lu emitted %lu "
				    "partial %lu fallback %lu dup %lu ovf %lu; program %llu %llu "
				    "%llu %llu %llu %llu + core B %lu %lu %lu %lu %lu %lu\n",
				    ta[i].job, ta[i].aggregated, ta[i].emitted, ta[i].partial,
				    ta[i].fallback, ta[i].duplicates, ta[i].overflows, k.aggregated,
				    k.emitted, k.partial, k.fallback, k.duplicates, k.overflows,
				    tb[i].aggregated, tb[i].emitted, tb[i].partial, tb[i].fallback,
				    tb[i].duplicates, tb[i].overflows);
			}
		}
	}
	printf("test_xdp_agg: %ld packets: %ld sent by the program (%ld more frames queued), %ld "
	       "dropped (absorbed or duplicate), %ld applied and passed up, %ld punted; %ld "
	       "flushed by %ld ticks; %ld results kept and passed up; %ld differences\n",
	       n_pkts, cnt[INART_XA_SEND], cnt_queued, cnt[INART_XA_DROP], cnt[INART_XA_APPLIED],
	       cnt[INART_XA_PUNT], cnt_flushed, n_pkts / TICK_EVERY, cnt[INART_XA_KEPT], bad);
	printf(
	    "test_xdp_agg: with IPv4 options %ld sent, %ld dropped, %ld kept, %ld punted; with a "
	    "VLAN tag %ld punted, %ld not\n",
	    kinds[K_OPTIONS][INART_XA_SEND], kinds[K_OPTIONS][INART_XA_DROP],
	    kinds[K_OPTIONS][INART_XA_KEPT], kinds[K_OPTIONS][INART_XA_PUNT],
	    kinds[K_VLAN][INART_XA_PUNT],
	    kinds[K_VLAN][INART_XA_SEND] + kinds[K_VLAN][INART_XA_DROP] +
		kinds[K_VLAN][INART_XA_KEPT] + kinds[K_VLAN][INART_XA_APPLIED]);
	if (kinds[K_VLAN][INART_XA_PUNT] != kinds[K_VLAN][0] + kinds[K_VLAN][1] + kinds[K_VLAN][2] +
						kinds[K_VLAN][3] + kinds[K_VLAN][4]) {
		fprintf(stderr, "test_xdp_agg: a VLAN-tagged frame was not punted\n");
		bad++;
	}
	ring_buffer__free(rb);
	{ /* the program's own counters agree with what the test saw */
		static const char *const why[] = {"frame", "wire",  "port",
						  "label", "entry", "check"};
		uint64_t k[INART_XA_CTR_N] = {0}, punts = 0;
		int fd = bpf_map__fd(sk->maps.xa_ctrs);

		for (uint32_t i = 0; i < INART_XA_CTR_N; i++)
			percpu_read(fd, i, &k[i], sizeof(k[i]));
		printf("test_xdp_agg: punted by reason:");
		for (int i = INART_XA_P_FRAME; i < INART_XA_CTR_N; i++) {
			printf(" %s %lu", why[i - INART_XA_P_FRAME], (unsigned long)k[i]);
			punts += k[i];
		}
		printf("\n");
		if (k[INART_XA_C_SENT] != (uint64_t)cnt[INART_XA_SEND] ||
		    k[INART_XA_C_QUEUED] != (uint64_t)cnt_queued ||
		    k[INART_XA_C_DROPPED] != (uint64_t)cnt[INART_XA_DROP] ||
		    k[INART_XA_C_RING_FULL] != (uint64_t)cnt[INART_XA_APPLIED] ||
		    k[INART_XA_C_FLUSHED] != (uint64_t)cnt_flushed ||
		    k[INART_XA_C_KEPT] != (uint64_t)cnt[INART_XA_KEPT] ||
		    punts != (uint64_t)cnt[INART_XA_PUNT]) {
			fprintf(
			    stderr,
			    "test_xdp_agg: the program's counters disagree with its verdicts\n");
			bad++;
		}
	}
	inart_switch_destroy(a);
	inart_switch_destroy(b);
	xdp_agg__destroy(sk);
	/* a test that cannot fail is no test: every verdict must occur */
	if (host_mode) /* tree 0 (fan-in 1) in the kernel, the rest spoofed */
		return bad == 0 && cnt[INART_XA_SEND] > n_pkts / 50 &&
			       cnt[INART_XA_PUNT] > n_pkts / 2
			   ? 0
			   : 1;
	return bad == 0 && cnt[INART_XA_SEND] > n_pkts / 20 && cnt[INART_XA_DROP] > n_pkts / 20 &&
		       cnt_queued > 0 && cnt_flushed > 0 && cnt[INART_XA_PUNT] > n_pkts / 50
		   ? 0
		   : 1;
}
