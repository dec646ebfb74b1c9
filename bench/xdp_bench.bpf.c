/*
 * xdp_bench.bpf.c: the XDP programs of bench/switchd_bench.sh's traffic
 * (built with clang -target bpf, embedded in build/bench/xdp_bench as a
 * bpftool skeleton).
 *
 *   gen       live-frames generator (BPF_PROG_RUN with
 *             BPF_F_TEST_XDP_LIVE_FRAMES): rewrites the frame user space gave
 *             as its template into the next frame of the load -- InArt DATA
 *             (slot, seq, contributor bit, values) or plain UDP with the same
 *             payload -- from a per-CPU counter, and returns XDP_TX (out of
 *             the ingress interface the run names: the veth toward the
 *             device).
 *   sink      at the receiving veth: checks each frame (header, contributor
 *             bits, values = the sum of the contributions its bitmap names)
 *             and counts in a per-CPU array; always XDP_DROP.
 *   redirect  the kernel's own forwarding: every frame XDP_REDIRECTed through
 *             a DEVMAP (slot 0) to the other veth of the middle namespace.
 *   xsk       steers every frame to the AF_XDP socket of its rx queue
 *             (XSKMAP), for bench/xsk_fwd.
 *
 * The frame layout is docs/wire.md's with one bitmap word, fixed offsets
 * (IPv4 without options, what the generator sends); the sink counts
 * anything else as `other`.  Contribution of rank r to value i of chunk seq:
 * (r + 1) * (base + i), base = (seq & 0xffff) + 1, so an aggregate whose
 * bitmap is B carries w * (base + i) with w = sum of (r + 1) over r in B:
 * checkable without state, for a fan-in 1 aggregate, a forwarded
 * contribution, a partial or a full 8:1 aggregate alike.  Sums stay far
 * below 2^31.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define OFF_IP 14
#define OFF_UDP 34
#define OFF_INA 42
#define OFF_VALUES 82
#define NVAL 235 /* 1022-byte frames: 82 bytes of headers + 235 int32 */
#define INA_PORT 47470
#define PLAIN_PORT 47471

/* Set by user space before load (the skeleton's rodata). */
const volatile __u32 cfg_fan = 1;   /* contributors per slot: 1 or 8 */
const volatile __u32 cfg_plain = 0; /* 1: plain UDP to PLAIN_PORT */
const volatile __u32 cfg_slots = 64;
const volatile __u32 cfg_full = 1; /* 1: every value written/checked; 0: first, middle, last */
/* generator part cfg_part of cfg_nparts (one per CPU): chunk seqs
 * cfg_part, cfg_part + cfg_nparts, ... so that parts never share a chunk and
 * a slot's chunks all come from one part (slots % nparts == part) */
const volatile __u32 cfg_part = 0, cfg_nparts = 1;
/* self-test of the sink (tests/bench_sink.sh): every cfg_corrupt-th frame
 * carries one wrong value (the middle one when sampled, else a different one
 * each time); every cfg_lose-th frame is dropped instead of sent; 0: never */
const volatile __u32 cfg_corrupt = 0, cfg_lose = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gen_count SEC(".maps");

/* sink counters, per CPU */
struct sink_cnt {
	__u64 frames;	/* checked and right */
	__u64 contribs; /* contributions inside them (popcount of bitmaps) */
	__u64 full;	/* frames carrying all cfg_fan contributions */
	__u64 bad;	/* ours (right ports) but wrong: header, bits or values */
	__u64 other;	/* not ours (ARP, IPv6, other ports) */
	__u64 bytes;	/* frame bytes of the right frames */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_cnt);
} sink_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* The sink's header test, word by word (bytes 8k .. 8k + 7 as loaded):
 * ours if words 1, 2, 4 match the template under the mask (Ethernet type,
 * IPv4 version and header length, UDP, the load's port; else `other`), right
 * if words 5, 6, 8, 9 and byte 80 do too (InArt version 1, DATA set, one
 * bitmap word, fan-in, count 235, bitmap bytes above the last zero).  Set by
 * the loader from the template (xdp_bench.c, sink_masks). */
const volatile __u64 cfg_mask[10], cfg_want[10];

static __always_inline __u64 rd64(const __u8 *p)
{
	return *(const __u64 *)p;
}

/* Word access at any byte offset: the verifier allows unaligned packet
 * access where the architecture does (x86). */
static __always_inline __u32 rd32(const __u8 *p)
{
	return bpf_ntohl(*(const __u32 *)p);
}

static __always_inline void wr32(__u8 *p, __u32 v)
{
	*(__u32 *)p = bpf_htonl(v);
}

/* Live frames come back from a page pool as the last user left them: a
 * device that forwards in the kernel (switchd --io xdp, xdp-redirect with a
 * rewrite) changes the frame in place, so its TTL would fall by one per
 * round until forwarders refuse it.  The generator therefore writes the
 * whole header of each frame again (Ethernet, IPv4 with its checksum, UDP,
 * InArt: the template's, set by the loader) before the fields it changes
 * per frame: 10 words and a half-word, cheaper than the checksum's sum. */
const volatile __u64 cfg_hdr[OFF_VALUES / 8 + 1];

static __always_inline void restore_headers(__u8 *data)
{
#pragma unroll
	for (int k = 0; k < OFF_VALUES / 8; k++)
		*(__u64 *)(data + 8 * k) = cfg_hdr[k];
	*(__u16 *)(data + OFF_VALUES - 2) = (__u16)cfg_hdr[OFF_VALUES / 8];
}

SEC("xdp")
int gen(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 key = 0, rank, seq, base, x, step, i;
	__u64 *cnt = bpf_map_lookup_elem(&gen_count, &key), n;

	if (!cnt || data + OFF_VALUES + NVAL * 4 > end)
		return XDP_ABORTED;
	n = (*cnt)++;
	restore_headers(data);
	rank = cfg_fan == 8 ? (__u32)(n & 7) : 0;
	seq = (cfg_fan == 8 ? (__u32)(n >> 3) : (__u32)n) * cfg_nparts + cfg_part;
	base = (seq & 0xffff) + 1;
	wr32(data + OFF_INA + 20, seq);
	data[OFF_INA + 24] = (__u8)((seq % cfg_slots) >> 8);
	data[OFF_INA + 25] = (__u8)(seq % cfg_slots);
	/* bitmap word 0, big-endian: rank r is bit r of the last byte (r < 8) */
	data[OFF_INA + 39] = (__u8)(1u << rank);
	step = rank + 1;
	x = step * base;
	if (cfg_full) {
		/* two values a store: word j holds values 2j, 2j + 1 (below
		 * 2^23, so the low half never carries into the high one) */
		__u64 p = (__u64)x << 32 | (x + step), d = (__u64)(2 * step) << 32 | (2 * step);

#pragma clang loop unroll_count(9)
		for (i = 0; i < NVAL / 2; i++) {
			*(__u64 *)(data + OFF_VALUES + 8 * i) = bpf_cpu_to_be64(p);
			p += d;
		}
		wr32(data + OFF_VALUES + 4 * (NVAL - 1), x + step * (NVAL - 1));
	} else {
		wr32(data + OFF_VALUES, x);
		wr32(data + OFF_VALUES + 4 * (NVAL / 2), x + step * (NVAL / 2));
		wr32(data + OFF_VALUES + 4 * (NVAL - 1), x + step * (NVAL - 1));
	}
	if (cfg_corrupt && n % cfg_corrupt == cfg_corrupt - 1) {
		i = cfg_full ? (__u32)(n / cfg_corrupt) % NVAL : NVAL / 2;
		__u32 j = i;
		__u8 *q;

		/* i < NVAL; the mask and the test are for the verifier (the
		 * empty asm keeps the compiler from dropping them) */
		asm volatile("" : "+r"(j));
		q = data + OFF_VALUES + 4 * (j & 0xff);
		if (q + 4 > end)
			return XDP_ABORTED;
		wr32(q, x + step * i + 1);
	}
	if (cfg_lose && n % cfg_lose == cfg_lose - 1)
		return XDP_DROP;
	return XDP_TX;
}

SEC("xdp")
int sink(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 key = 0, bits, w = 0, k = 0, base, x, i, r;
	struct sink_cnt *c = bpf_map_lookup_elem(&sink_count, &key);
	int ok = 1;

	if (!c)
		return XDP_DROP;
	if (data + OFF_VALUES + NVAL * 4 > end ||
	    (((rd64(data + 8) ^ cfg_want[1]) & cfg_mask[1]) |
	     ((rd64(data + 16) ^ cfg_want[2]) & cfg_mask[2]) |
	     ((rd64(data + 32) ^ cfg_want[4]) & cfg_mask[4]))) {
		c->other++;
		return XDP_DROP;
	}
	if (((rd64(data + 40) ^ cfg_want[5]) & cfg_mask[5]) |
	    ((rd64(data + 48) ^ cfg_want[6]) & cfg_mask[6]) |
	    ((rd64(data + 64) ^ cfg_want[8]) & cfg_mask[8]) |
	    ((rd64(data + 72) ^ cfg_want[9]) & cfg_mask[9]) | data[OFF_INA + 38])
		ok = 0;
	bits = data[OFF_INA + 39];
	if (bits == 0 || bits >> cfg_fan)
		ok = 0;
#pragma unroll
	for (r = 0; r < 8; r++) {
		if (bits & (1u << r)) {
			w += r + 1;
			k++;
		}
	}
	base = (rd32(data + OFF_INA + 20) & 0xffff) + 1;
	x = w * base;
	if (ok && cfg_full) {
		/* as the generator writes them: two values a word, the
		 * differences OR-ed together, one test at the end */
		__u64 p = (__u64)x << 32 | (x + w), d = (__u64)(2 * w) << 32 | (2 * w), acc = 0;

#pragma clang loop unroll_count(9)
		for (i = 0; i < NVAL / 2; i++) {
			acc |= *(const __u64 *)(data + OFF_VALUES + 8 * i) ^ bpf_cpu_to_be64(p);
			p += d;
		}
		if (acc || rd32(data + OFF_VALUES + 4 * (NVAL - 1)) != x + w * (NVAL - 1))
			ok = 0;
	} else if (ok) {
		if (rd32(data + OFF_VALUES) != x ||
		    rd32(data + OFF_VALUES + 4 * (NVAL / 2)) != x + w * (NVAL / 2) ||
		    rd32(data + OFF_VALUES + 4 * (NVAL - 1)) != x + w * (NVAL - 1))
			ok = 0;
	}
	if (!ok) {
		c->bad++;
		return XDP_DROP;
	}
	c->frames++;
	c->contribs += k;
	c->full += k == cfg_fan;
	c->bytes += (__u64)(end - data);
	return XDP_DROP;
}

SEC("xdp")
int redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&tx_port, 0, 0);
}

SEC("xdp")
int xsk(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "GPL";
