/*
 * fuzz_xdp_agg: libFuzzer target for the XDP aggregation program
 * (bpf/xdp_agg.bpf.c): its parser and aggregation step against the switch
 * core (dp/switch), with the differential test's rule (tests/test_xdp_agg.c).
 *
 * Input: [state][frame bytes].  state chooses
 *   bits 0..2  what the slots hold before the frame (prelude(): nothing, a
 *              busy slot of the fan-in 2 tree, a kept result, an older
 *              chunk about to be flushed behind, a busy slot of an older
 *              iteration to make room in, a fan-in 1 aggregate sent, a
 *              two-word tree's slot, two of them);
 *   bit 3      port 0 a host port (first-hop checks);
 *   bits 4..5  the ingress port (the test run's lo is mapped to it);
 *   bits 6..7  the frame's time (soon, later, after the restart idle, far).
 * The program is loaded once (BPF_PROG_TEST_RUN on one pinned CPU); per
 * input its per-CPU state is zeroed and a reference core A and a core B
 * (for what the program punts) are made from the same tables.  Each
 * prelude packet and then the frame go to A and to the program: a SEND must
 * be A's frames byte for byte (the first in place, the others queued on
 * xa_tx, A's ports), a DROP A sending nothing, a PUNT or KEPT B's frames
 * (the frame given to B) equal to A's.  Then a tick far in the future
 * (xdp_agg_tick against inart_switch_tick: the same flushes in the same
 * order, B none) and A's tree counters = the program's + B's.  Any
 * difference aborts.  Needs root (BPF): exits 77 otherwise, 1 with
 * INART_NO_SKIP=1.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "dp/wire.h"
#include "io/xdp_agg.h"
#include "io/xdp_agg_maps.h"
#include "xdp_agg_rule.h" /* tests/: the differential rule */
#include <xdp_agg.skel.h>

#define NP 4
#define NTREE 3
#define POOL 16
#define TIMEOUT 1000
#define MAXF 16
#define HOST_IP 0x0a000001u /* rank 0 of tree 0 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The trees: fan-in 1; fan-in 2; ranks 3, 64, 69 of a 70-worker job (two
 * bitmap words, port 0 out: XDP_TX when it is the ingress). */
static const struct {
	uint32_t job, label, next;
	uint16_t out, base, n_slots, fan_in, count;
	uint8_t bw;
	uint64_t exp[2];
} T[NTREE] = {
    {100, 1000, 2000, 1, 0, 2, 1, 24, 1, {1, 0}},
    {101, 1001, 2001, 2, 2, 4, 2, 40, 1, {3, 0}},
    {102, 1002, 2002, 0, 6, 2, 70, 16, 2, {1ull << 3, 1ull << 0 | 1ull << 5}},
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz_xdp_agg: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

static void sw_cfg(struct inart_sw_cfg *cfg, int host)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = NP;
	cfg->pool_slots = POOL;
	cfg->max_values = 32; /* tree 1's 40 values: FALLBACK by size */
	cfg->flush_timeout_ns = TIMEOUT;
	xa_rule_ports(cfg, NP);
	if (host)
		cfg->ports[0].peer_ip = HOST_IP;
}

static struct inart_switch *make_core(int host)
{
	static const struct inart_label_down dn[] = {{1, 0, 0}, {3, 0, 0}};
	struct inart_label_entry e[2 * NTREE + 1];
	struct inart_sw_ingress ing = {0, 0, 100};
	struct inart_sw_update u = {.replace = 1};
	struct inart_err err = {{0}};
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;

	sw_cfg(&cfg, host);
	sw = inart_switch_create(&cfg);
	if (sw == NULL)
		die("inart_switch_create failed");
	memset(e, 0, sizeof(e));
	for (int j = 0; j < NTREE; j++) {
		e[j].label = T[j].label;
		e[j].kind = INART_LABEL_UP;
		e[j].job = T[j].job;
		e[j].out_port = T[j].out;
		e[j].next_label = T[j].next;
		e[j].aggregate = 1;
		e[j].slot_base = T[j].base;
		e[j].n_slots = T[j].n_slots;
		e[j].bitmap_words = T[j].bw;
		e[j].expected = T[j].exp;
		e[NTREE + j] = (struct inart_label_entry){.label = 5000 + (uint32_t)j,
							  .kind = INART_LABEL_DOWN,
							  .job = T[j].job,
							  .n_down = 2,
							  .down = dn};
	}
	e[2 * NTREE] = (struct inart_label_entry){
	    .label = 3000, .kind = INART_LABEL_UP, .job = 7, .out_port = 3, .next_label = 3001};
	u.n_labels = 2 * NTREE + 1;
	u.labels = e;
	u.n_ingress = host ? 1 : 0;
	u.ingress = &ing;
	if (inart_switch_apply(sw, &u, &err) < 0)
		die("apply: %s", err.msg);
	return sw;
}

/* ---- the program, loaded once ---- */

static struct xdp_agg *sk;
static struct ring_buffer *rb;
static int cpu, ncpu;
static uint32_t n_slots, n_ranks, n_trees;
static struct xa_rule_queue queued;

static void no_bpf(const char *why)
{
	const char *ns = getenv("INART_NO_SKIP");

	fprintf(stderr, "fuzz_xdp_agg: %s: %s\n", why, strerror(errno));
	if (ns != NULL && strcmp(ns, "1") == 0)
		exit(1);
	printf("fuzz_xdp_agg: BPF refused, skipped\n");
	exit(77);
}

static void setup(void)
{
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;

	if ((cpu = xa_rule_pin()) < 0)
		die("pinning: %s", strerror(errno));
	ncpu = libbpf_num_possible_cpus();
	if (geteuid() != 0) {
		errno = EPERM;
		no_bpf("not root");
	}
	libbpf_set_print(xa_rule_quiet);
	sk = xdp_agg__open();
	if (sk == NULL)
		no_bpf("opening the program");
	sw_cfg(&cfg, 0);
	sw = make_core(0);
	if (inart_xdp_agg_maps_sizes(&cfg, sw, &n_slots, &n_ranks, &n_trees) < 0)
		die("map sizes");
	inart_switch_destroy(sw);
	bpf_map__set_max_entries(sk->maps.xa_slots, n_slots);
	bpf_map__set_max_entries(sk->maps.xa_progress, n_ranks);
	bpf_map__set_max_entries(sk->maps.xa_trees, n_trees);
	if (xdp_agg__load(sk) < 0)
		no_bpf("loading the program");
	rb = ring_buffer__new(bpf_map__fd(sk->maps.xa_tx), xa_rule_on_queued, &queued, NULL);
	if (rb == NULL)
		die("ring buffer: %s", strerror(errno));
}

/* Zero every key of a per-CPU map (all CPUs). */
static void percpu_zero(struct bpf_map *m, uint32_t n, size_t sz)
{
	static uint8_t zero[1 << 17];

	if ((size_t)ncpu * ((sz + 7) & ~(size_t)7) > sizeof(zero))
		die("per-CPU values too large");
	for (uint32_t k = 0; k < n; k++)
		if (bpf_map_update_elem(bpf_map__fd(m), &k, zero, BPF_ANY) < 0)
			die("zeroing %s: %s", bpf_map__name(m), strerror(errno));
}

static void percpu_get(struct bpf_map *m, uint32_t key, void *val, size_t sz)
{
	if (xa_rule_percpu(bpf_map__fd(m), key, cpu, val, sz) < 0)
		die("reading %s", bpf_map__name(m));
}

/* A fresh state: the program's per-CPU maps zeroed, its tables from a
 * (ingress lo = port `port`, every port's DEVMAP entry lo). */
static void reset(const struct inart_switch *a, int host, int port)
{
	struct inart_xdp_agg_fds fds = {
	    bpf_map__fd(sk->maps.xa_cfg),     bpf_map__fd(sk->maps.xa_ports),
	    bpf_map__fd(sk->maps.xa_ifports), bpf_map__fd(sk->maps.xa_devs),
	    bpf_map__fd(sk->maps.xa_labels),  bpf_map__fd(sk->maps.xa_ingress)};
	uint32_t ifx[NP] = {0}, lo = if_nametoindex("lo");
	struct inart_err err = {{0}};
	struct inart_sw_cfg cfg;

	percpu_zero(sk->maps.xa_slots, n_slots, sizeof(struct inart_xa_slot));
	percpu_zero(sk->maps.xa_progress, n_ranks, sizeof(struct inart_xa_pos));
	percpu_zero(sk->maps.xa_trees, n_trees, sizeof(struct inart_xa_tree));
	percpu_zero(sk->maps.xa_ctrs, INART_XA_CTR_N, sizeof(uint64_t));
	percpu_zero(sk->maps.xa_last, 1, sizeof(struct inart_xa_last));
	sw_cfg(&cfg, host);
	/* the ifindex -> port map is replaced whole: no other port keeps lo */
	for (uint32_t p = 0; p < NP; p++)
		ifx[p] = (int)p == port ? lo : 0;
	{
		uint32_t k;

		while (bpf_map_get_next_key(fds.ifports, NULL, &k) == 0 &&
		       bpf_map_delete_elem(fds.ifports, &k) == 0)
			;
	}
	if (inart_xdp_agg_maps_fill(&fds, &cfg, a, ifx, &err) < 0)
		die("filling the maps: %s", err.msg);
	for (uint32_t p = 0; p < NP; p++)
		if (bpf_map_update_elem(fds.devs, &p, &lo, BPF_ANY) < 0)
			die("devmap: %s", strerror(errno));
}

static void set_clock(uint64_t now)
{
	struct inart_xa_cfg xc;
	uint32_t z = 0;
	int fd = bpf_map__fd(sk->maps.xa_cfg);

	if (bpf_map_lookup_elem(fd, &z, &xc) < 0)
		die("reading xa_cfg");
	xc.now = now;
	if (bpf_map_update_elem(fd, &z, &xc, BPF_ANY) < 0)
		die("the clock");
}

static uint8_t ba[MAXF][INART_FRAME_MAX], bb[MAXF][INART_FRAME_MAX];
static struct inart_frame fa[MAXF], fb[MAXF];

/* libFuzzer's coverage instrumentation cannot see inside the BPF program;
 * these counters (a section libFuzzer reads as extra coverage, cleared by
 * it before each input) show it the program's paths: which of xa_ctrs moved
 * (1, 2, 3 or more), which tree counters, and the last frame's verdict
 * with the number of frames it made.  Unused by the replay build. */
#define XCOV_N 256
__attribute__((section("__libfuzzer_extra_counters"), used)) static uint8_t xcov[XCOV_N];
static uint32_t last_verdict, last_frames;

static void xcov_set(uint32_t i)
{
	xcov[i % XCOV_N] = 1;
}

/* One frame through A, the program and (if punted) B: the same outcome. */
static void one(struct inart_switch *a, struct inart_switch *b, const uint8_t *f, size_t len,
		int port, uint64_t now)
{
	static uint8_t in[4096], xo[4096];
	struct inart_frame fin = {in, (uint16_t)len, (uint16_t)port};
	struct inart_xa_last last;
	int na, nb = 0, ok;

	last_verdict = 7; /* none: not run */
	last_frames = 0;
	if (len > sizeof(in))
		len = sizeof(in);
	memcpy(in, f, len);
	fin.len = (uint16_t)len;
	na = inart_switch_rx(a, &fin, now, fa, MAXF);
	if (len < 14 || len > 3000) { /* not a frame XDP sees (the test run refuses it) */
		if (na != 0)
			die("core A sent %d frames for a %zu-byte input", na, len);
		return;
	}
	set_clock(now);
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)len,
			    .data_out = xo, .data_size_out = sizeof(xo), .repeat = 1);

		if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg), &o) < 0)
			die("test run (%zu bytes): %s", len, strerror(errno));
		percpu_get(sk->maps.xa_last, 0, &last, sizeof(last));
		queued.n = 0;
		if (ring_buffer__consume(rb) < 0)
			die("ring buffer");
		if (xa_rule_passed_up(last.verdict)) { /* to core B as it came */
			memcpy(in, f, len);
			nb = inart_switch_rx(b, &fin, now, fb, MAXF);
		}
		ok = xa_rule_ok(&o, xo, f, (uint32_t)len, (uint32_t)port, &last, &queued, fa, na,
				fb, nb);
		last_verdict = last.verdict;
		last_frames = (uint32_t)na;
		if (!ok)
			die("%zu-byte frame: verdict %u retval %u port %u (%u bytes, %d queued); "
			    "core "
			    "A %d frames (port %d, %u bytes)",
			    len, last.verdict, o.retval, last.out_port, o.data_size_out, queued.n,
			    na, na > 0 ? fa[0].port : -1, na > 0 ? fa[0].len : 0);
	}
}

/* Tree j's DATA of rank r (r < 0: the chunk's clean result going down). */
static size_t frame_of(uint8_t *f, int j, int r, uint32_t iter, uint32_t seq)
{
	struct inart_wire_hdr h = {0};
	int32_t v[64] = {0};
	uint8_t ina[INART_FRAME_MAX];
	static const uint8_t mac[6] = {2, 0, 0, 0, 1, 0};
	size_t n;

	h.flags = r >= 0 ? INART_F_DATA : INART_F_RESULT;
	h.bitmap_words = T[j].bw;
	h.job = T[j].job;
	h.fan_in = T[j].fan_in;
	h.label = r >= 0 ? T[j].label : 5000 + (uint32_t)j;
	h.iter = iter;
	h.seq = seq;
	h.slot = (uint16_t)(seq % T[j].n_slots);
	h.count = T[j].count > 32 ? 32 : T[j].count;
	if (r >= 0)
		h.bitmap[r / 64] = 1ull << (r % 64);
	else
		memcpy(h.bitmap, T[j].exp, sizeof(T[j].exp));
	for (int i = 0; i < h.count; i++)
		v[i] =
		    (int32_t)(iter * 7919u + seq * 104729u + (uint32_t)(r + 1) * 31u + (uint32_t)i);
	n = inart_wire_encode(&h, v, ina, sizeof(ina));
	return inart_pkt_build_udp(f, INART_FRAME_MAX, mac, mac, r >= 0 ? HOST_IP + (uint32_t)r : 7,
				   0x0a090009u, 40000, INART_WIRE_UDP_PORT, ina, n);
}

/* The slots' state before the frame (state bits 0..2). */
static void prelude(struct inart_switch *a, struct inart_switch *b, int what, int port,
		    uint64_t now)
{
	uint8_t f[INART_FRAME_MAX];

	switch (what) {
	case 1: /* tree 1's chunk (5, 3): rank 0 in */
		one(a, b, f, frame_of(f, 1, 0, 5, 3), port, now);
		break;
	case 2: /* tree 1's chunk (5, 3) kept as a result */
		one(a, b, f, frame_of(f, 1, -1, 5, 3), port, now);
		break;
	case 3: /* (5, 1) rank 0 and (5, 2) rank 1: (5, 3) of rank 1 flushes (5, 1) */
		one(a, b, f, frame_of(f, 1, 0, 5, 1), port, now);
		one(a, b, f, frame_of(f, 1, 1, 5, 2), port, now);
		break;
	case 4: /* (4, 3) rank 0 busy, rank 1 at iteration 5: (5, 3) makes room */
		one(a, b, f, frame_of(f, 1, 0, 4, 3), port, now);
		one(a, b, f, frame_of(f, 1, 1, 5, 0), port, now);
		break;
	case 5: /* tree 0's (5, 3) sent */
		one(a, b, f, frame_of(f, 0, 0, 5, 3), port, now);
		break;
	case 6: /* tree 2's (5, 3): rank 64 in */
		one(a, b, f, frame_of(f, 2, 64, 5, 3), port, now);
		break;
	case 7:
		one(a, b, f, frame_of(f, 1, 0, 5, 3), port, now);
		one(a, b, f, frame_of(f, 2, 3, 5, 3), port, now);
		break;
	default:
		break;
	}
}

/* A tick far ahead: A's flushes are the program's (xdp_agg_tick, one a
 * run), in A's order; B has none. */
static void tick_all(struct inart_switch *a, struct inart_switch *b, uint64_t now)
{
	static uint8_t dummy[INART_FRAME_MAX], xo[4096];
	int na = inart_switch_tick(a, now, fa, MAXF), k = 0;

	if (inart_switch_tick(b, now, fb, MAXF) != 0)
		die("core B flushed");
	set_clock(now);
	for (;;) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = dummy, .data_size_in = sizeof(dummy),
			    .data_out = xo, .data_size_out = sizeof(xo), .repeat = 1);

		if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.xdp_agg_tick), &o) < 0)
			die("tick: %s", strerror(errno));
		if (o.retval == XDP_DROP)
			break;
		if (o.retval != XDP_TX || k >= na || o.data_size_out != fa[k].len ||
		    memcmp(xo, fa[k].data, fa[k].len) != 0)
			die("tick: flush %d of core A's %d differs", k, na);
		k++;
	}
	if (k != na)
		die("tick: core A flushed %d, the program %d", na, k);
}

static void counters(struct inart_switch *a, struct inart_switch *b)
{
	struct inart_sw_tree_stats ta[8], tb[8];
	int n = inart_switch_stats(a, NULL, NULL, ta, 8);

	inart_switch_stats(b, NULL, NULL, tb, 8);
	for (int i = 0; i < n && i < 8; i++) {
		struct inart_xa_tree k;

		percpu_get(sk->maps.xa_trees, (uint32_t)i, &k, sizeof(k));
		{
			const uint64_t f[7] = {k.aggregated, k.emitted,	   k.partial,  k.early,
					       k.fallback,   k.duplicates, k.overflows};

			for (uint32_t q = 0; q < 7 && i < 8; q++)
				if (f[q] != 0)
					xcov_set(64 + 8 * (uint32_t)i + q);
		}
		if (ta[i].aggregated != k.aggregated + tb[i].aggregated ||
		    ta[i].emitted != k.emitted + tb[i].emitted ||
		    ta[i].partial != k.partial + tb[i].partial ||
		    ta[i].early != k.early + tb[i].early ||
		    ta[i].fallback != k.fallback + tb[i].fallback ||
		    ta[i].duplicates != k.duplicates + tb[i].duplicates ||
		    ta[i].overflows != k.overflows + tb[i].overflows)
			die("tree %d (job %u): core A's counters are not the program's + core B's",
			    i, ta[i].job);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t when[4] = {0, 700, INART_XA_RESTART_IDLE_NS + 5000, 5000000000ull};
	struct inart_switch *a, *b;
	int host, port, st;
	uint64_t now = 1000;

	if (sk == NULL)
		setup();
	if (size < 1)
		return 0;
	st = data[0];
	host = (st >> 3) & 1;
	port = (st >> 4) & 3;
	a = make_core(host);
	b = make_core(host);
	for (int i = 0; i < MAXF; i++) {
		fa[i].data = ba[i];
		fb[i].data = bb[i];
	}
	reset(a, host, port);
	prelude(a, b, st & 7, port, now);
	now += 1 + when[st >> 6];
	one(a, b, data + 1, size - 1, port, now);
	xcov_set(128 + 8 * (last_verdict & 7) + (last_frames > 3 ? 3 : last_frames));
	tick_all(a, b, now + 100 * TIMEOUT);
	counters(a, b);
	for (uint32_t c = 0; c < INART_XA_CTR_N && c < 16; c++) {
		uint64_t v;

		percpu_get(sk->maps.xa_ctrs, c, &v, sizeof(v));
		if (v != 0)
			xcov_set(4 * c + (v > 3 ? 3 : (uint32_t)v));
	}
	inart_switch_destroy(a);
	inart_switch_destroy(b);
	return 0;
}
