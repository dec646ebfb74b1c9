// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_agg: the common INA aggregation case in the XDP hook, bit for bit the
 * switch core's (dp/switch.c rx_ina_up, dp/agg_pool.c) on the state of
 * io/xdp_agg.h.  Per frame:
 *
 *   untagged IPv4 (options skipped, as inart_pkt_parse skips them), valid
 *   header checksum, not a fragment, UDP to the InArt port, an INA header
 *   inart_wire_decode accepts, through the first-hop checks (source
 *   address, rank), label != 0, TTL > 1, a known label allowed on the
 *   ingress port, of the packet's (job, tree), an UP entry the loader
 *   marked kernel (aggregating), DATA without RETX/NACK, the entry's bitmap
 *   width, contributors inside the subtree, count <= max_values:
 *     the core's aggregation step runs here on the maps (rank progress,
 *     flush of an older chunk shown lost, PARTIAL handling, absorb with
 *     exactly-once by bitmap, a busy slot made room for or FALLBACK
 *     forward, complete -> emit, settled -> flush);
 *     0 frames out: XDP_DROP; 1 frame: built as emit_slot / ina_forward_up
 *     build it, then XDP_TX (egress = ingress) or redirect (DEVMAP, index
 *     = port); 2 or 3: the first so, the others queued on xa_tx (ring
 *     full: XDP_PASS, verdict APPLIED, the state already changed);
 *   a clean RESULT down a kernel tree: kept (result_keep), then XDP_PASS;
 *   everything else: XDP_PASS untouched (verdict PUNT: the C core handles
 *     it: malformed, VLAN-tagged, drops it counts, RETX/NACK, DOWN,
 *     non-kernel entries, ARP, plain IPv4).
 *
 * Fast path (no copy): the frame is parsed in place (every read checked
 * against data_end), the values are summed straight from the frame into
 * the slot (xa_sum), and a packet that leaves as its own slot's aggregate
 * or as a forward is rewritten in place (xa_build_pkt, xa_fwd_pkt).  Slow
 * path (a frame from another slot first: flush behind, flush to make
 * room): the frames are built in per-CPU scratch buffers with masked
 * offsets.  Timeouts: xdp_agg_tick below.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "io/xdp_agg.h"

#define BUF 2048
#define M (BUF - 1)
#define F_DATA 0x01
#define F_RESULT 0x02
#define F_RETX 0x04
#define F_PARTIAL 0x08
#define F_FALLBACK 0x10
#define F_OVERFLOW 0x20
#define F_NACK 0x40
#define F_STALE 0x80
#define KIND_UP 1
#define KIND_DOWN 2

struct buf {
	__u8 b[BUF + 16];
};

/* The frame received, and the frames a packet produces (the first goes out
 * in place of the received one, the others through xa_tx). */
struct scratch {
	struct buf in;
	struct buf out[INART_XA_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} xa_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_cfg);
} xa_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INART_XA_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct inart_xa_port);
} xa_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INART_XA_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} xa_ifports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, INART_XA_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} xa_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INART_XA_MAX_LABELS);
	__type(key, __u32);
	__type(value, struct inart_xa_ent);
} xa_labels SEC(".maps");

/* (h25f) Each CPU's copies of the label entries it used last, by label mod
 * XA_LCACHE.  A copy is used while the tables it carries (written into
 * every entry by the fill, then into xa_cfg once the labels are all
 * written) equals xa_cfg's: a copy of an entry older than the last fill
 * carries an older value and is fetched again, whatever order the loads
 * took; an entry of a fill still running is not used from the cache until
 * that fill is done.  A hit costs an array lookup instead of the hash's
 * (20-30 ns a packet by test_xdp_agg's bench). */
#define XA_LCACHE 16
struct lcache {
	__u32 label, valid;
	struct inart_xa_ent e;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XA_LCACHE);
	__type(key, __u32);
	__type(value, struct lcache);
} xa_lcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INART_XA_MAX_INGRESS);
	__type(key, struct inart_xa_ing_key);
	__type(value, __u32);
} xa_ingress SEC(".maps");

/* sized by the loader (pool_slots, progress records, trees) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_slot);
} xa_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_pos);
} xa_progress SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_tree);
} xa_trees SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_last);
} xa_last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INART_XA_CTR_N);
	__type(key, __u32);
	__type(value, __u64);
} xa_ctrs SEC(".maps");

/* frames after a packet's first, for user space to send as they are */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} xa_tx SEC(".maps");

/* ---- switchd's exits (issue 25 part 2, h25w): xdp_agg_cpu runs on the CPU
 * xdp_switch steered the frame to (CPUMAP, by (job, tree, slot)); what it
 * passes goes to user space through xa_rx, not the stack ---- */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, INART_XA_RX_RING);
} xa_rx SEC(".maps");

/* xdp_switch's agg_cpus (the loader reuses that map's descriptor) */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, INART_XA_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} xa_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INART_XA_N_PCTRS);
	__type(key, __u32);
	__type(value, __u64);
} xa_pctrs SEC(".maps");

/* (h25e) 1 at a port switchd shapes (--shape, set by io/xagg at load): a
 * frame the kernel would send there goes to user space through xa_tx
 * instead, so that it passes switchd's shaper on that port's tx path */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INART_XA_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} xa_shaped SEC(".maps");

/* ---- the scratch buffers (slow path, tick): masked offsets ---- */

static __always_inline __u32 g16(const __u8 *b, __u32 o)
{
	o &= M;
	return (__u32)b[o] << 8 | b[o + 1];
}

static __always_inline void p16(__u8 *b, __u32 o, __u32 v)
{
	o &= M;
	b[o] = v >> 8;
	b[o + 1] = v;
}

/* Word stores may be unaligned (the scratch buffers are map values; x86-64
 * and arm64 JITs allow it). */
static __always_inline void p32(__u8 *b, __u32 o, __u32 v)
{
	o &= M;
	*(__u32 *)(b + o) = __builtin_bswap32(v);
}

static __always_inline void p64(__u8 *b, __u32 o, __u64 v)
{
	p32(b, o, v >> 32);
	p32(b, o + 4, (__u32)v);
}

/* A ones' complement sum folded to 16 bits. */
static __always_inline __u32 fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u32)s;
}

/* The IPv4 header checksum of the hl bytes (20..60) at b + o in a scratch
 * buffer (field included). */
static __always_inline __u32 ip_sum(const __u8 *b, __u32 o, __u32 hl)
{
	__u32 s = 0;

	for (int i = 0; i < 60; i += 2) {
		if (i >= hl)
			break;
		s += g16(b, o + i);
	}
	return fold(s);
}

/* ---- the packet itself (direct access) ---- */

static __always_inline __u32 ld16(const __u8 *p)
{
	return __builtin_bswap16(*(const __u16 *)p);
}

static __always_inline __u32 ld32(const __u8 *p)
{
	return __builtin_bswap32(*(const __u32 *)p);
}

static __always_inline void st16(__u8 *p, __u32 v)
{
	*(__u16 *)p = __builtin_bswap16((__u16)v);
}

static __always_inline void st32(__u8 *p, __u32 v)
{
	*(__u32 *)p = __builtin_bswap32(v);
}

/* The ones' complement sum of the IPv4 header of the frame at d (hl bytes,
 * 20..60, at d + 14), 0 if it is not all inside the frame.  Summed in the
 * machine's byte order: 0xffff checks a header in either order, and its
 * complement stored the same way is the checksum (RFC 1071). */
static __always_inline __u32 pkt_ip_sum(struct xdp_md *x, const __u8 *d, const __u8 *end, __u32 hl)
{
	const __u32 *w = (const __u32 *)(d + 14);
	__u64 s;

	if (d + 34 > end)
		return 0;
	s = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];
	if (hl > 20) { /* options (rare): through the stack */
		__u32 opt[10] = {0}, n = hl - 20;

		if (n < 4 || n > 40 || bpf_xdp_load_bytes(x, 34, opt, n) < 0)
			return 0;
		for (int k = 0; k < 10; k++)
			s += opt[k];
	}
	return fold(s);
}

/* Per-packet context of the slow path: the frames it produces so far. */
struct ctx {
	struct scratch *s;
	struct hdr *h;
	const struct inart_xa_ent *e;
	struct inart_xa_tree *ts;
	struct xdp_md *xdp;
	__u32 frames;			   /* produced (may exceed INART_XA_MAX_FRAMES) */
	__u32 len[INART_XA_MAX_FRAMES];	   /* their lengths (0: could not be built) */
	__u8 from_in[INART_XA_MAX_FRAMES]; /* 1: the rewritten input (forward), else out[k] */
};

/* The decoded INA header (the fields rx_ina_up reads). */
struct hdr {
	__u32 job, label, iter, seq;
	__u16 tree, fan_in, slot, count;
	__u8 flags, bw, ttl;
	__s8 scale;
	__u32 src_ip, dst_ip;
	__u16 sport;
	__u16 l4; /* the UDP header's offset: 14 + the IPv4 header's length (34..74) */
	__u16 pl; /* the values' offset: l4 + 8 + 32 + 8 * bw */
	__u16 pad;
	__u32 ip_len; /* from the IPv4 header: the frame without padding is 14 + ip_len */
	__u32 prev;
	__u64 bits[INART_XA_MAX_WORDS];
};

static __always_inline struct inart_xa_slot *slot_at(__u32 i)
{
	return bpf_map_lookup_elem(&xa_slots, &i);
}

static __always_inline struct inart_xa_pos *rank_pos(const struct inart_xa_ent *e, __u32 k)
{
	__u32 i = e->rk_off + k;

	return bpf_map_lookup_elem(&xa_progress, &i);
}

/* dp/progress.h */
static __always_inline void progress_note(struct inart_xa_pos *p, __u32 iter, __u32 seq)
{
	if (p->pos == 0 || (__s32)(iter - p->iter) > 0 || (iter == p->iter && seq + 1 > p->pos)) {
		p->iter = iter;
		p->pos = seq + 1;
	}
}

static __always_inline int progress_gone(const struct inart_xa_pos *p, __u32 iter, __u32 seq)
{
	if (p->pos == 0)
		return 0;
	if (p->iter != iter)
		return (__s32)(p->iter - iter) > 0;
	return p->pos - 1 >= seq + INART_XA_LOST_AFTER;
}

static __always_inline int bit_of(const __u64 *bm, __u32 r)
{
	return (bm[(r >> 6) & (INART_XA_MAX_WORDS - 1)] >> (r & 63)) & 1;
}

/* slot_settled: every expected rank missing from busy slot s is gone.
 * The loops below are global functions: verified once each, whatever the
 * paths that call them (the verifier's state count stays small). */
__noinline int xa_settled(const struct inart_xa_ent *e, const struct inart_xa_slot *s)
{
	if (e == NULL || s == NULL || !s->busy || s->label != e->label)
		return 0;
	for (__u32 k = 0; k < INART_XA_MAX_EXPECTED; k++) {
		struct inart_xa_pos *p;
		__u32 r;

		if (k >= e->n_exp)
			break;
		r = e->exp_rank[k];
		if (bit_of(s->bitmap, r))
			continue;
		p = rank_pos(e, k);
		if (p == NULL || !progress_gone(p, s->iter, s->seq))
			return 0;
	}
	return 1;
}

/* ranks_note: the expected ranks in bits sent chunk (iter, seq) at now;
 * after INART_XA_RESTART_IDLE_NS without a note (the clock record after
 * the ranks') the ranks' records are forgotten first: a job started again
 * (dp/switch.h INART_SW_RESTART_IDLE_NS). */
__noinline int xa_note(const struct inart_xa_ent *e, const struct hdr *h, __u64 now)
{
	struct inart_xa_pos *clock;
	__u64 last;

	if (e == NULL || h == NULL)
		return 0;
	clock = rank_pos(e, e->n_exp);
	if (clock == NULL)
		return 0;
	last = (__u64)clock->iter << 32 | clock->pos;
	if (last != 0 && now - last >= INART_XA_RESTART_IDLE_NS)
		for (__u32 k = 0; k < INART_XA_MAX_EXPECTED; k++) {
			struct inart_xa_pos *p;

			if (k >= e->n_exp)
				break;
			p = rank_pos(e, k);
			if (p != NULL)
				p->iter = p->pos = 0;
		}
	clock->iter = (__u32)(now >> 32);
	clock->pos = (__u32)now;
	for (__u32 k = 0; k < INART_XA_MAX_EXPECTED; k++) {
		struct inart_xa_pos *p;

		if (k >= e->n_exp)
			break;
		if (!bit_of(h->bits, e->exp_rank[k]))
			continue;
		p = rank_pos(e, k);
		if (p != NULL)
			progress_note(p, h->iter, h->seq);
	}
	return 0;
}

enum { SUM_TAKE, SUM_ADD, SUM_ADDW, SUM_RAW };

/* xa_sum's SUM_ADD (wb 0) and SUM_ADDW (wb 1) on the n values at v (inside
 * the frame: checked again per eight for the verifier); inlined, so each
 * call's constant wb leaves one loop without a test per value. */
static __always_inline int sum_add(struct inart_xa_slot *s, __u8 *v, const __u8 *end, __u32 n,
				   const int wb)
{
	__u32 o = 0, i;

	for (i = 0; i + 8 <= INART_XA_MAX_VALUES; i += 8) {
		__u32 *p = (__u32 *)(v + 4 * i);

		if (i + 8 > n)
			break;
		if ((__u8 *)(p + 8) > end)
			return -1;
		for (int k = 0; k < 8; k++) {
			__u32 a = (__u32)s->sums[i + k], b = __builtin_bswap32(p[k]), r = a + b;

			o |= (a ^ r) & (b ^ r);
			s->sums[i + k] = (__s32)r;
			if (wb)
				p[k] = __builtin_bswap32(r);
		}
	}
	for (; i < INART_XA_MAX_VALUES; i++) {
		__u32 *p = (__u32 *)(v + 4 * i), a, b, r;

		if (i >= n)
			break;
		if ((__u8 *)(p + 1) > end)
			return -1;
		a = (__u32)s->sums[i];
		b = __builtin_bswap32(*p);
		r = a + b;
		o |= (a ^ r) & (b ^ r);
		s->sums[i] = (__s32)r;
		if (wb)
			*p = __builtin_bswap32(r);
	}
	return o >> 31;
}

/* The n values at offset pl of the packet into slot s, read in place:
 * SUM_TAKE copies them (inart_agg_copy_be: host order), SUM_RAW copies their
 * bytes as they are (the slot's sums_be), SUM_ADD adds them (inart_agg_add_be:
 * int32, wrapping), SUM_ADDW adds them and writes each sum back over the
 * packet's value, so that the frame carries the slot's sums (sent in place
 * as the aggregate).  1 if a sum overflowed, else 0; -1 (nothing changed)
 * if the values are not all inside the frame (cannot happen: the parser
 * checked the lengths).  Eight values per bounds check. */
__noinline int xa_sum(struct xdp_md *x, struct inart_xa_slot *s, __u32 pl, __u32 n, __u32 mode)
{
	__u8 *d = (void *)(long)x->data, *end = (void *)(long)x->data_end, *v;
	__u64 off = pl;
	__u32 i;

	if (s == NULL || n > INART_XA_MAX_VALUES || pl > 255 || d + pl + 4 * n > end)
		return -1;
	/* the bound in the register the verifier follows (clang keeps it) */
	asm volatile("%[o] &= 255" : [o] "+r"(off));
	v = d + off;
	if (mode == SUM_RAW) {
		for (i = 0; i + 8 <= INART_XA_MAX_VALUES; i += 8) {
			__u64 *p = (__u64 *)(v + 4 * i), *q = (__u64 *)&s->sums[i];

			if (i + 8 > n)
				break;
			if ((__u8 *)(p + 4) > end)
				return -1;
			q[0] = p[0];
			q[1] = p[1];
			q[2] = p[2];
			q[3] = p[3];
		}
		for (; i < INART_XA_MAX_VALUES; i++) {
			__u32 *p = (__u32 *)(v + 4 * i);

			if (i >= n)
				break;
			if ((__u8 *)(p + 1) > end)
				return -1;
			s->sums[i] = (__s32)*p;
		}
		return 0;
	}
	if (mode == SUM_TAKE) {
		for (i = 0; i + 8 <= INART_XA_MAX_VALUES; i += 8) {
			__u32 *p = (__u32 *)(v + 4 * i);

			if (i + 8 > n)
				break;
			if ((__u8 *)(p + 8) > end)
				return -1;
			for (int k = 0; k < 8; k++)
				s->sums[i + k] = (__s32)__builtin_bswap32(p[k]);
		}
		for (; i < INART_XA_MAX_VALUES; i++) {
			__u32 *p = (__u32 *)(v + 4 * i);

			if (i >= n)
				break;
			if ((__u8 *)(p + 1) > end)
				return -1;
			s->sums[i] = (__s32)__builtin_bswap32(*p);
		}
		return 0;
	}
	if (mode == SUM_ADDW)
		return sum_add(s, v, end, n, 1);
	return sum_add(s, v, end, n, 0);
}

/* The bitmap and sums of slot s (host order), big-endian, at hl = 74 in the
 * out buffer. */
__noinline int xa_put_body(struct buf *sc, const struct inart_xa_slot *s)
{
	__u32 hl;

	if (sc == NULL || s == NULL)
		return 0;
	hl = 32 + 8 * (__u32)(s->bitmap_words & 31);
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		if (w >= s->bitmap_words)
			break;
		p64(sc->b, 74 + 8 * w, s->bitmap[w]);
	}
	for (__u32 i = 0; i < INART_XA_MAX_VALUES; i++) {
		if (i >= s->count)
			break;
		p32(sc->b, 42 + hl + 4 * i, (__u32)s->sums[i]);
	}
	return 0;
}

static __always_inline int settled(const struct inart_xa_ent *e, const struct inart_xa_slot *s)
{
	return xa_settled(e, s);
}

/* The IPv4 header checksum of emit_slot's header (20 bytes: 0x45, TOS 0,
 * id 0, DF, UDP). */
static __always_inline __u32 agg_ip_csum(__u32 tot, __u32 ttl, __u32 src, __u32 dst)
{
	__u64 s = 0x4500 + tot + 0x4000 + (ttl << 8 | 17) + (src >> 16) + (src & 0xffff) +
		  (dst >> 16) + (dst & 0xffff);

	return ~fold(s) & 0xffff;
}

static __always_inline __u8 agg_flags(const struct inart_xa_slot *s, __u32 extra)
{
	return F_DATA | extra | (s->m_flags & F_OVERFLOW) | (s->overflow ? F_OVERFLOW : 0);
}

/* emit_slot's frame (not RETX): the aggregate of slot s along entry e,
 * built into the scratch out buffer.  Its length, 0 if the port is unknown.
 * Slow path and tick: s holds host-order sums (never sums_be: a slot
 * taken complete is not busy). */
__noinline int xa_build(struct buf *sc, const struct inart_xa_slot *s, const struct inart_xa_ent *e,
			__u32 extra)
{
	__u32 out, hl, len, src, ttl;
	struct inart_xa_port *pp;
	__u8 *o;

	if (sc == NULL || s == NULL || e == NULL)
		return 0;
	out = e->out_port & (INART_XA_MAX_PORTS - 1);
	pp = bpf_map_lookup_elem(&xa_ports, &out);
	if (pp == NULL)
		return 0;
	o = sc->b;
	hl = 32 + 8 * (__u32)(s->bitmap_words & 31);
	len = 14 + 20 + 8 + hl + 4 * (__u32)s->count;
	for (int i = 0; i < 6; i++) {
		o[i] = pp->peer_mac[i];
		o[6 + i] = pp->mac[i];
	}
	p16(o, 12, 0x0800);
	o[14] = 0x45;
	o[15] = 0;
	p16(o, 16, len - 14);
	p16(o, 18, 0);
	p16(o, 20, 0x4000);
	ttl = s->m_ttl > 1 ? s->m_ttl - 1 : 1;
	o[22] = ttl;
	o[23] = 17;
	src = pp->ip ? pp->ip : s->m_src_ip;
	p16(o, 24, agg_ip_csum(len - 14, ttl, src, s->m_dst_ip));
	p32(o, 26, src);
	p32(o, 30, s->m_dst_ip);
	p16(o, 34, s->m_sport);
	p16(o, 36, INART_XA_UDP_PORT);
	p16(o, 38, len - 34);
	p16(o, 40, 0);
	o[42] = 1;
	o[43] = agg_flags(s, extra);
	o[44] = s->bitmap_words;
	o[45] = (__u8)s->scale_exp;
	p32(o, 46, s->job);
	p16(o, 50, s->tree);
	p16(o, 52, s->fan_in);
	p32(o, 54, e->next_label);
	p32(o, 58, s->iter);
	p32(o, 62, s->seq);
	p16(o, 66, s->slot);
	p16(o, 68, s->count);
	p32(o, 70, 0);
	xa_put_body(sc, s);
	return len;
}

/* emit_slot's frame built in place in the received frame, which holds a
 * contribution to slot s (same key: same layout) whose values are the
 * slot's sums already (xa_sum): the IPv4 options dropped (the header moves
 * up), the padding trimmed, the headers rewritten, the bitmap the slot's.
 * 0, or -1 (cannot happen: the port is known, the frame was parsed). */
__noinline int xa_build_pkt(struct xdp_md *x, const struct inart_xa_slot *s,
			    const struct inart_xa_ent *e, __u32 extra, __u32 l4)
{
	__u32 out, len, want, src, ttl, tot;
	struct inart_xa_port *pp;
	__u8 *d, *end;

	if (s == NULL || e == NULL || l4 < 34 || l4 > 74)
		return -1;
	out = e->out_port & (INART_XA_MAX_PORTS - 1);
	pp = bpf_map_lookup_elem(&xa_ports, &out);
	if (pp == NULL)
		return -1;
	want = 14 + 20 + 8 + 32 + 8 * (__u32)(s->bitmap_words & 31) + 4 * (__u32)s->count;
	if (l4 > 34 && bpf_xdp_adjust_head(x, (int)l4 - 34) < 0)
		return -1;
	d = (void *)(long)x->data;
	end = (void *)(long)x->data_end;
	len = end - d;
	if (want > len || (want < len && bpf_xdp_adjust_tail(x, (int)want - (int)len) < 0))
		return -1;
	d = (void *)(long)x->data;
	end = (void *)(long)x->data_end;
	if (d + 74 > end)
		return -1;
	for (int i = 0; i < 6; i++) {
		d[i] = pp->peer_mac[i];
		d[6 + i] = pp->mac[i];
	}
	st16(d + 12, 0x0800);
	tot = want - 14;
	ttl = s->m_ttl > 1 ? s->m_ttl - 1 : 1;
	src = pp->ip ? pp->ip : s->m_src_ip;
	st32(d + 14, 0x45000000 | tot);
	st32(d + 18, 0x4000);
	st32(d + 22, ttl << 24 | 17 << 16 | agg_ip_csum(tot, ttl, src, s->m_dst_ip));
	st32(d + 26, src);
	st32(d + 30, s->m_dst_ip);
	st32(d + 34, (__u32)s->m_sport << 16 | INART_XA_UDP_PORT);
	st32(d + 38, (want - 34) << 16);
	d[43] = agg_flags(s, extra);
	st32(d + 54, e->next_label);
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		__u8 *q = d + 74 + 8 * w;

		if (w >= s->bitmap_words)
			break;
		if (q + 8 > end)
			return -1;
		*(__u64 *)q = __builtin_bswap64(s->bitmap[w]);
	}
	return 0;
}

/* emit_slot (not RETX), slow path: the frame into out[k], then the slot
 * stops aggregating and keeps its contents (take_keep). */
static __always_inline void emit(struct ctx *c, struct inart_xa_slot *s, __u8 extra)
{
	__u32 k = c->frames++;

	if (k < INART_XA_MAX_FRAMES) {
		c->len[k] = xa_build(&c->s->out[k], s, c->e, extra);
		c->from_in[k] = 0;
	}
	s->busy = 0;
	s->kept = 1; /* INART_AGG_KEPT_SENT */
}

/* flush_slot: a partial aggregate now. */
static __always_inline void flush(struct ctx *c, struct inart_xa_slot *s)
{
	int ovf = s->overflow || (s->m_flags & F_OVERFLOW);

	emit(c, s, F_PARTIAL);
	c->ts->partial++;
	c->ts->early++;
	c->ts->overflows += ovf ? 1 : 0;
}

/* ina_forward_up: the packet itself, MACs and TTL rewritten, flags | add,
 * the next label, UDP checksum 0, padding trimmed.  Rewritten in the
 * scratch copy of the frame (slow path: a forward queued after a flush).
 * l4: the UDP header's offset (IPv4 options kept, as fwd_copy keeps them). */
__noinline int xa_fwd(struct buf *sc, const struct inart_xa_ent *e, __u32 ttl, __u32 add, __u32 l4)
{
	__u32 out, sum;
	struct inart_xa_port *pp;
	__u8 *o;

	if (sc == NULL || e == NULL)
		return -1;
	out = e->out_port & (INART_XA_MAX_PORTS - 1);
	pp = bpf_map_lookup_elem(&xa_ports, &out);
	if (pp == NULL)
		return -1;
	l4 &= 127;
	o = sc->b;
	for (int i = 0; i < 6; i++) {
		o[i] = pp->peer_mac[i];
		o[6 + i] = pp->mac[i];
	}
	o[22] = ttl - 1;
	o[(l4 + 9) & M] |= add;
	p32(o, l4 + 20, e->next_label);
	p16(o, l4 + 6, 0);
	p16(o, 24, 0);
	sum = ip_sum(o, 14, l4 - 14);
	p16(o, 24, ~sum & 0xffff);
	return 0;
}

/* ina_forward_up in place in the received frame (the fast path). */
__noinline int xa_fwd_pkt(struct xdp_md *x, const struct inart_xa_ent *e, const struct hdr *h,
			  __u32 add)
{
	__u32 out, len, want, l4;
	struct inart_xa_port *pp;
	__u8 *d, *end, *u;

	if (e == NULL || h == NULL || h->l4 < 34 || h->l4 > 74)
		return -1;
	l4 = h->l4;
	want = 14 + h->ip_len;
	out = e->out_port & (INART_XA_MAX_PORTS - 1);
	pp = bpf_map_lookup_elem(&xa_ports, &out);
	if (pp == NULL)
		return -1;
	d = (void *)(long)x->data;
	end = (void *)(long)x->data_end;
	len = end - d;
	if (want > len || (want < len && bpf_xdp_adjust_tail(x, (int)want - (int)len) < 0))
		return -1;
	d = (void *)(long)x->data;
	end = (void *)(long)x->data_end;
	u = d + l4;
	if (d + 34 > end || u + 40 > end)
		return -1;
	for (int i = 0; i < 6; i++) {
		d[i] = pp->peer_mac[i];
		d[6 + i] = pp->mac[i];
	}
	d[22] = h->ttl - 1;
	u[9] |= add;
	st32(u + 20, e->next_label);
	st16(u + 6, 0);
	*(__u16 *)(d + 24) = 0;
	*(__u16 *)(d + 24) = ~pkt_ip_sum(x, d, end, l4 - 14) & 0xffff;
	return 0;
}

/* Slow path: the forward into the scratch copy, frame k. */
static __always_inline void forward(struct ctx *c, __u8 add)
{
	__u32 k = c->frames++, len = (c->h->l4 < 34 ? 0 : 14 + c->h->ip_len) & 2047;

	if (k >= INART_XA_MAX_FRAMES)
		return;
	c->len[k] = 0;
	c->from_in[k] = 1;
	if (len >= 60 && len <= INART_XA_FRAME_MAX &&
	    bpf_xdp_load_bytes(c->xdp, 0, c->s->in.b, len) == 0 &&
	    xa_fwd(&c->s->in, c->e, c->h->ttl, add, c->h->l4) == 0)
		c->len[k] = len;
}

/* key_eq against the packet's chunk at entry e */
static __always_inline int same_key(const struct inart_xa_slot *s, const struct hdr *h, __u32 label)
{
	return s->job == h->job && s->label == label && s->iter == h->iter && s->seq == h->seq &&
	       s->tree == h->tree && s->fan_in == h->fan_in && s->slot == h->slot &&
	       s->count == h->count && s->bitmap_words == h->bw && s->scale_exp == h->scale;
}

enum { ABSORBED, COMPLETE, BUSY, DUPLICATE };
#define A_FRESH 16 /* xa_absorb: the slot was taken fresh */
#define A_SEND 32  /* xa_absorb: the slot is to be sent now (complete, or settled: flush) */

/* The slot takes the key and bitmap of h's chunk at UP entry `label`. */
static __always_inline void take_key(struct inart_xa_slot *s, const struct hdr *h, __u32 label)
{
	s->job = h->job;
	s->label = label;
	s->iter = h->iter;
	s->seq = h->seq;
	s->tree = h->tree;
	s->fan_in = h->fan_in;
	s->slot = h->slot;
	s->count = h->count;
	s->bitmap_words = h->bw;
	s->scale_exp = h->scale;
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++)
		s->bitmap[w] = h->bits[w]; /* 0 from bw on (xa_parse) */
}

/* inart_agg_pool_absorb on the packet's values in place (count <=
 * max_values checked by the caller): the enum above, | A_FRESH, | A_SEND
 * when the slot is to be sent now (complete, or its missing ranks gone:
 * slot_settled after the absorb).  fast (the fast path, the frame is sent
 * in place): a slot complete at its take keeps the values as received
 * (sums_be), and an absorb into a busy slot with A_SEND writes the sums
 * over the frame's values (SUM_ADDW); else (slow path: the frame may be
 * passed up unchanged, APPLIED) the frame is not written, the sums host
 * order. */
__noinline int xa_absorb(struct xdp_md *x, struct inart_xa_slot *s, const struct hdr *h,
			 const struct inart_xa_ent *e, __u32 fast)
{
	int complete = 1, send;

	if (s == NULL || h == NULL || e == NULL)
		return BUSY;
	if (!s->busy) {
		s->busy = 1;
		s->kept = 0;
		s->overflow = 0;
		s->absorbed = 1;
		take_key(s, h, e->label);
		for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
			if (w >= h->bw)
				break;
			if (h->bits[w] != e->expected[w])
				complete = 0;
		}
		s->sums_be = complete && fast;
		xa_sum(x, s, h->pl, h->count, s->sums_be ? SUM_RAW : SUM_TAKE);
		send = complete || xa_settled(e, s);
		return (complete ? COMPLETE : ABSORBED) | A_FRESH | (send ? A_SEND : 0);
	}
	if (!same_key(s, h, e->label))
		return BUSY;
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		if (w >= h->bw)
			break;
		if (s->bitmap[w] & h->bits[w])
			return DUPLICATE;
	}
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		if (w >= h->bw)
			break;
		s->bitmap[w] |= h->bits[w];
		if (s->bitmap[w] != e->expected[w])
			complete = 0;
	}
	send = complete || xa_settled(e, s);
	if (xa_sum(x, s, h->pl, h->count, send && fast ? SUM_ADDW : SUM_ADD) > 0)
		s->overflow = 1;
	s->absorbed++;
	return (complete ? COMPLETE : ABSORBED) | (send ? A_SEND : 0);
}

/* The slot metadata after an absorb into s (the pool's take_slot when
 * fresh: the deadline, the take's FIFO number on this CPU, the first
 * contribution's addresses; every absorb: OVERFLOW from below, the
 * smallest TTL). */
static __always_inline void slot_meta(struct inart_xa_slot *s, const struct hdr *h, __u64 now,
				      __u64 timeout, int fresh)
{
	if (fresh) {
		__u32 z = 0;
		struct inart_xa_last *l = bpf_map_lookup_elem(&xa_last, &z);
		__u64 dl = now + timeout;

		s->deadline = dl < now ? ~0ull : dl;
		s->order = l != NULL ? ++l->takes : 0;
		s->m_src_ip = h->src_ip;
		s->m_dst_ip = h->dst_ip;
		s->m_sport = h->sport;
		s->m_flags = 0;
		s->m_repaired = 0;
		s->m_ttl = h->ttl;
	}
	s->m_flags |= h->flags & F_OVERFLOW;
	if (h->ttl < s->m_ttl)
		s->m_ttl = h->ttl;
}

/* bits_within: every contributor of h is one e expects. */
__noinline int xa_within(const struct hdr *h, const struct inart_xa_ent *e)
{
	if (h == NULL || e == NULL)
		return 0;
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		if (w >= h->bw)
			break;
		if (h->bits[w] & ~e->expected[w])
			return 0;
	}
	return 1;
}

/* Decode and check everything rx_ina does before rx_ina_up's aggregation
 * step, reading the frame in place (every read inside data_end).  The
 * ingress port, or minus the reason to punt (enum inart_xa_ctr).  Punted as
 * not the plain form (P_FRAME): not IPv4 (a VLAN tag: the core drops it as
 * OTHER), a bad IPv4 header (the core: MALFORMED), not UDP to 47470 (the
 * core: plain IPv4).  IPv4 options are the core's: skipped.  in_port >= 0:
 * the ingress port, looked up by the caller (switchd's entries); < 0: from
 * xa_ifports here. */
__noinline int xa_parse(struct xdp_md *xdp, struct hdr *h, int in_port)
{
	__u8 *d = (void *)(long)xdp->data, *end = (void *)(long)xdp->data_end, *u, *ina;
	__u32 len, hl, ulen, plen, fi, ifx, *pp, port;
	struct inart_xa_port *pt;
	__u64 any = 0;

	if (h == NULL)
		return -INART_XA_P_FRAME;
	len = end - d;
	if (len < 14 + 20 + 8 + 32 + 8 || len > INART_XA_FRAME_MAX || d + 34 > end)
		return -INART_XA_P_FRAME;
	if (ld16(d + 12) != 0x0800 || (d[14] >> 4) != 4)
		return -INART_XA_P_FRAME;
	hl = 4 * (__u32)(d[14] & 15);
	if (hl < 20 || hl > len - 14 || pkt_ip_sum(xdp, d, end, hl) != 0xffff)
		return -INART_XA_P_FRAME;
	h->ip_len = ld16(d + 16);
	if (h->ip_len < hl + 8 || h->ip_len > len - 14 || d[23] != 17 || (ld16(d + 20) & 0x3fff))
		return -INART_XA_P_FRAME;
	u = d + 14 + hl;
	if (u + 8 > end)
		return -INART_XA_P_FRAME;
	ulen = ld16(u + 4);
	if (ulen < 8 || ulen > h->ip_len - hl || ld16(u + 2) != INART_XA_UDP_PORT)
		return -INART_XA_P_FRAME;
	h->l4 = 14 + hl;
	h->sport = ld16(u);
	plen = ulen - 8; /* inart_wire_decode on ina .. ina + plen */
	ina = u + 8;
	if (plen < 32 || ina + 32 > end)
		return -INART_XA_P_WIRE;
	if (ina[0] != 1 || ina[2] < 1 || ina[2] > INART_XA_MAX_WORDS)
		return -INART_XA_P_WIRE;
	h->bw = ina[2];
	if (plen < 32 + 8 * (__u32)h->bw)
		return -INART_XA_P_WIRE;
	h->flags = ina[1];
	fi = h->flags & (F_DATA | F_RESULT);
	if ((fi != F_DATA && fi != F_RESULT) || ((h->flags & F_STALE) && fi != F_RESULT))
		return -INART_XA_P_WIRE; /* bad flags: the core drops them */
	h->prev = ld32(ina + 28);
	if (fi != F_RESULT && h->prev != 0)
		return -INART_XA_P_WIRE;
	h->scale = (__s8)ina[3];
	h->job = ld32(ina + 4);
	h->tree = ld16(ina + 8);
	h->fan_in = ld16(ina + 10);
	h->label = ld32(ina + 12);
	h->iter = ld32(ina + 16);
	h->seq = ld32(ina + 20);
	h->slot = ld16(ina + 24);
	h->count = ld16(ina + 26);
	if (plen != 32 + 8 * (__u32)h->bw + 4 * (__u32)h->count)
		return -INART_XA_P_WIRE;
	h->pl = h->l4 + 8 + 32 + 8 * h->bw;
	fi = h->fan_in;
	if (fi == 0 || fi > 64 * (__u32)h->bw)
		return -INART_XA_P_WIRE;
	if ((h->flags & (F_NACK | F_STALE)) && h->count != 0)
		return -INART_XA_P_WIRE;
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++)
		h->bits[w] = 0;
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
		__u32 lo = 64 * w;
		__u8 *q = ina + 32 + 8 * w;
		__u64 allowed;

		if (w >= h->bw)
			break;
		if (q + 8 > end)
			return -INART_XA_P_WIRE;
		h->bits[w] = __builtin_bswap64(*(__u64 *)q);
		if (fi <= lo)
			allowed = 0;
		else if (fi - lo >= 64)
			allowed = ~(__u64)0;
		else
			allowed = ((__u64)1 << (fi - lo)) - 1;
		if (h->bits[w] & ~allowed)
			return -INART_XA_P_WIRE;
		any |= h->bits[w];
	}
	if (!any)
		return -INART_XA_P_WIRE;
	h->ttl = d[22];
	h->src_ip = ld32(d + 26);
	h->dst_ip = ld32(d + 30);
	if (in_port >= 0) {
		port = (__u32)in_port & (INART_XA_MAX_PORTS - 1);
	} else {
		ifx = xdp->ingress_ifindex;
		pp = bpf_map_lookup_elem(&xa_ifports, &ifx);
		if (pp == NULL)
			return -INART_XA_P_PORT;
		port = *pp & (INART_XA_MAX_PORTS - 1);
	}
	pt = bpf_map_lookup_elem(&xa_ports, &port);
	if (pt == NULL)
		return -INART_XA_P_PORT;
	if (pt->peer_ip != 0 && h->src_ip != pt->peer_ip)
		return -INART_XA_P_PORT; /* spoofed: the core drops it */
	if (pt->peer_ip != 0 && (h->flags & F_DATA)) {
		/* ingress filtering (ingress_ok): its drops are the core's */
		struct inart_xa_ing_key k = {port, h->job};
		__u32 *rank = bpf_map_lookup_elem(&xa_ingress, &k), r;

		if (rank == NULL)
			return -INART_XA_P_PORT;
		r = *rank;
		if (r >= 64 * (__u32)h->bw)
			return -INART_XA_P_PORT;
		for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++) {
			__u64 want = (r >> 6) == w ? (__u64)1 << (r & 63) : 0;

			if (w < h->bw && h->bits[w] != want)
				return -INART_XA_P_PORT;
		}
	}
	if (h->label == 0 || h->ttl <= 1)
		return -INART_XA_P_LABEL;
	return (int)port;
}

static __always_inline void count(__u32 c, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&xa_ctrs, &c);

	if (v != NULL)
		*v += n;
}

static __always_inline int punt(__u32 why)
{
	count(why < INART_XA_CTR_N ? why : INART_XA_P_FRAME, 1);
	return XDP_PASS;
}

static __always_inline void verdict(__u32 v, __u32 port, __u32 frames)
{
	__u32 z = 0;
	struct inart_xa_last *l = bpf_map_lookup_elem(&xa_last, &z);

	if (l != NULL) {
		l->verdict = v;
		l->out_port = port;
		l->frames = frames;
	}
}

/* Fill and submit a reserved xa_tx record with a frame of b. */
static __always_inline void queue(struct inart_xa_txrec *r, const struct buf *b, __u32 port,
				  __u32 len)
{
	r->port = port;
	r->len = len;
	bpf_probe_read_kernel(r->data, INART_XA_FRAME_MAX, b->b);
	bpf_ringbuf_submit(r, 0);
}

/* result_keep (rx_ina_down) on a clean RESULT passing down through DOWN
 * entry e of a tree whose aggregating UP entry the kernel holds: keep it in
 * the chunk's slot unless another chunk aggregates there (a busy slot of the
 * same chunk is released first), then pass the packet up: the core
 * replicates it (no state it needs).  Everything else on a DOWN entry is the
 * core's untouched (NACK repair needs the kernel's slots: not done). */
__noinline int xa_keep(struct xdp_md *x, struct inart_xa_slot *s, const struct hdr *h,
		       const struct inart_xa_ent *u)
{
	if (s == NULL || h == NULL || u == NULL)
		return 0;
	if (s->busy) {
		if (s->label != u->label || s->iter != h->iter || s->seq != h->seq)
			return 0;
		s->busy = 0; /* late contributions of a chunk that is complete */
	}
	take_key(s, h, u->label);
	s->sums_be = 0;
	xa_sum(x, s, h->pl, h->count, SUM_TAKE);
	s->kept = 2; /* INART_AGG_KEPT_RESULT */
	s->aux = h->prev;
	s->overflow = 0;
	return 1;
}

static __always_inline int down(struct xdp_md *xdp, const struct hdr *h,
				const struct inart_xa_ent *e, const struct inart_xa_cfg *cfg)
{
	struct inart_xa_ent *u;
	struct inart_xa_slot *s;
	__u32 i;

	if (!(h->flags & F_RESULT) || e->up_label == 0)
		return punt(INART_XA_P_ENTRY);
	u = bpf_map_lookup_elem(&xa_labels, &e->up_label);
	if (u == NULL || !u->kernel || u->bitmap_words != h->bw || u->n_slots == 0)
		return punt(INART_XA_P_ENTRY);
	if ((h->flags & (F_NACK | F_RETX)) == F_NACK)
		return punt(INART_XA_P_ENTRY); /* NACK repair: not done here */
	if ((h->flags & (F_NACK | F_RETX | F_OVERFLOW | F_STALE)) || h->count == 0 ||
	    h->count > cfg->max_values || h->count > INART_XA_MAX_VALUES)
		return punt(INART_XA_P_ENTRY); /* not kept: replicated only */
	i = u->slot_base + h->slot % u->n_slots;
	s = slot_at(i);
	if (s == NULL)
		return XDP_PASS;
	xa_keep(xdp, s, h, u);
	count(INART_XA_C_KEPT, 1);
	verdict(INART_XA_KEPT, 0, 0);
	return XDP_PASS;
}

/* The one frame the packet produced, in its place: counted, sent. */
static __always_inline int send(__u32 out_port, __u32 port)
{
	count(INART_XA_C_SENT, 1);
	verdict(INART_XA_SEND, out_port, 1);
	if (out_port == port)
		return XDP_TX;
	return bpf_redirect_map(&xa_devs, out_port, 0);
}

static __always_inline int drop(void)
{
	count(INART_XA_C_DROPPED, 1);
	verdict(INART_XA_DROP, 0, 0);
	return XDP_DROP;
}

/* The entry of label from this CPU's cache (xa_lcache), fetched from
 * xa_labels on a miss; NULL if none.  Always a pointer into the cache (one
 * map for the verifier's states). */
static __always_inline const struct inart_xa_ent *label_get(__u32 label,
							    const struct inart_xa_cfg *cfg)
{
	__u32 i = label & (XA_LCACHE - 1);
	struct lcache *c = bpf_map_lookup_elem(&xa_lcache, &i);
	struct inart_xa_ent *e;

	if (c == NULL)
		return NULL;
	if (c->valid && c->label == label && c->e.tables == cfg->tables)
		return &c->e;
	e = bpf_map_lookup_elem(&xa_labels, &label);
	if (e == NULL)
		return NULL;
	__builtin_memcpy(&c->e, e, sizeof(c->e));
	c->label = label;
	c->valid = 1;
	return &c->e;
}

/* (h25w: the body of xdp_agg, inlined into xdp_agg and xdp_agg_cpu) */
static __always_inline int agg_run(struct xdp_md *xdp, int in_port)
{
	__u32 z = 0, port, slot_i, cur, extra;
	struct inart_xa_slot *s, *v = NULL;
	struct inart_xa_cfg *cfg;
	const struct inart_xa_ent *e;
	struct ctx c = {0};
	struct hdr h;
	int rc, fresh, behind = 0, ovf;
	__u64 now;

	verdict(INART_XA_PUNT, 0, 0);
	cfg = bpf_map_lookup_elem(&xa_cfg, &z);
	if (cfg == NULL)
		return XDP_PASS;
	rc = xa_parse(xdp, &h, in_port);
	if (rc < 0)
		return punt((__u32)-rc);
	port = (__u32)rc;
	e = label_get(h.label, cfg);
	if (e == NULL || (e->in_ports != 0 && !((e->in_ports >> port) & 1)) || e->job != h.job ||
	    e->tree != h.tree)
		return punt(INART_XA_P_LABEL);
	if (e->kind == KIND_DOWN)
		return down(xdp, &h, e, cfg);
	if (e->kind != KIND_UP || !e->aggregate || !e->kernel || (h.flags & (F_RETX | F_NACK)) ||
	    e->n_slots == 0 || !(h.flags & F_DATA))
		return punt(INART_XA_P_ENTRY);
	if (h.bw != e->bitmap_words || !xa_within(&h, e))
		return punt(INART_XA_P_CHECK); /* DROP_MISMATCH/BITS: the core counts it */
	if (h.count > cfg->max_values || h.count > INART_XA_MAX_VALUES)
		return punt(INART_XA_P_CHECK); /* FALLBACK forward: stateless, the core's */
	c.ts = bpf_map_lookup_elem(&xa_trees, &e->tree_idx);
	if (c.ts == NULL)
		return XDP_PASS;
	cur = e->slot_base + h.slot % e->n_slots;
	s = slot_at(cur);
	if (s == NULL)
		return XDP_PASS;
	/* ---- from here on the state changes: mirror rx_ina_up exactly ---- */
	now = cfg->now ? cfg->now : bpf_ktime_get_ns();
	if (!(h.flags & F_FALLBACK))
		xa_note(e, &h, now);
	/* flush_behind: a frame from another slot first (the slow path) */
	if (h.seq >= INART_XA_LOST_AFTER) {
		slot_i = e->slot_base + ((__u32)h.slot + (__u32)e->n_slots * INART_XA_LOST_AFTER -
					 INART_XA_LOST_AFTER) %
					    e->n_slots;
		v = slot_at(slot_i);
		if (v != NULL && v->busy && v->label == e->label && v->iter == h.iter &&
		    v->seq == h.seq - INART_XA_LOST_AFTER && settled(e, v)) {
			behind = 1;
			goto slow;
		}
	}
	/* ---- the fast path: at most one frame, the received one rewritten ---- */
	if ((h.flags & F_PARTIAL) && (!s->busy || !same_key(s, &h, e->label))) {
		if (xa_fwd_pkt(xdp, e, &h, 0) < 0)
			return XDP_ABORTED; /* cannot happen: the frame was parsed */
		return send(e->out_port, port);
	}
	if (s->busy && !same_key(s, &h, e->label)) {
		if (settled(e, s))
			goto slow; /* the flush to make room: a frame from the slot first */
		c.ts->fallback++;
		if (xa_fwd_pkt(xdp, e, &h, F_FALLBACK) < 0)
			return XDP_ABORTED;
		return send(e->out_port, port);
	}
	rc = xa_absorb(xdp, s, &h, e, 1);
	if ((rc & 15) == DUPLICATE) {
		c.ts->duplicates++;
		return drop();
	}
	if ((rc & 15) == BUSY)
		return XDP_ABORTED; /* cannot happen: checked above */
	c.ts->aggregated++;
	slot_meta(s, &h, now, cfg->timeout_ns, rc & A_FRESH);
	if (!(rc & A_SEND))
		return drop();
	ovf = s->overflow || (s->m_flags & F_OVERFLOW);
	if ((rc & 15) == COMPLETE) { /* emit_slot */
		extra = 0;
		c.ts->emitted++;
	} else { /* flush_slot: the missing ranks are gone */
		extra = F_PARTIAL;
		c.ts->partial++;
		c.ts->early++;
	}
	c.ts->overflows += ovf ? 1 : 0;
	s->busy = 0;
	s->kept = 1; /* INART_AGG_KEPT_SENT */
	if (xa_build_pkt(xdp, s, e, extra, h.l4) < 0)
		return XDP_ABORTED; /* cannot happen: the frame was parsed */
	return send(e->out_port, port);

	/* ---- the slow path: frames built from other slots first ---- */
slow:
	c.s = bpf_map_lookup_elem(&xa_scratch, &z);
	if (c.s == NULL)
		return XDP_ABORTED;
	c.h = &h;
	c.e = e;
	c.xdp = xdp;
	if (behind && v != NULL)
		flush(&c, v);
	if ((h.flags & F_PARTIAL) && (!s->busy || !same_key(s, &h, e->label))) {
		forward(&c, 0);
		goto out;
	}
	rc = xa_absorb(xdp, s, &h, e, 0);
	if ((rc & 15) == BUSY && settled(e, s)) {
		flush(&c, s);
		if (!s->busy)
			rc = xa_absorb(xdp, s, &h, e, 0);
	}
	fresh = rc & A_FRESH;
	switch (rc & 15) {
	case ABSORBED:
	case COMPLETE:
		c.ts->aggregated++;
		slot_meta(s, &h, now, cfg->timeout_ns, fresh);
		if ((rc & 15) == COMPLETE) {
			ovf = s->overflow || (s->m_flags & F_OVERFLOW);
			emit(&c, s, 0);
			c.ts->emitted++;
			c.ts->overflows += ovf ? 1 : 0;
		} else if (rc & A_SEND) {
			flush(&c, s);
		}
		break;
	case BUSY:
		c.ts->fallback++;
		forward(&c, F_FALLBACK);
		break;
	default: /* DUPLICATE */
		c.ts->duplicates++;
		break;
	}
out:
	if (c.frames == 0)
		return drop();
	if (c.frames > INART_XA_MAX_FRAMES || c.len[0] < 60 || c.len[0] > INART_XA_FRAME_MAX) {
		verdict(INART_XA_APPLIED, 0, c.frames); /* cannot happen */
		return XDP_PASS;
	}
	{
		struct inart_xa_txrec *r1 = NULL, *r2 = NULL;
		struct buf *b0 = c.from_in[0] ? &c.s->in : &c.s->out[0];
		__u64 len = bpf_xdp_get_buff_len(xdp);
		__u32 want = c.len[0] & 2047;

		if (want < 60 || want > INART_XA_FRAME_MAX)
			return XDP_PASS; /* (checked above: for the verifier) */
		if (c.frames > 1)
			r1 = bpf_ringbuf_reserve(&xa_tx, sizeof(*r1), 0);
		if (c.frames > 2)
			r2 = bpf_ringbuf_reserve(&xa_tx, sizeof(*r2), 0);
		if ((c.frames > 1 && r1 == NULL) || (c.frames > 2 && r2 == NULL)) {
			if (r1 != NULL)
				bpf_ringbuf_discard(r1, 0);
			if (r2 != NULL)
				bpf_ringbuf_discard(r2, 0);
			count(INART_XA_C_RING_FULL, 1);
			verdict(INART_XA_APPLIED, 0, c.frames); /* the ring is full */
			return XDP_PASS;
		}
		if (r1 != NULL)
			queue(r1, c.from_in[1] ? &c.s->in : &c.s->out[1], e->out_port, c.len[1]);
		if (r2 != NULL)
			queue(r2, c.from_in[2] ? &c.s->in : &c.s->out[2], e->out_port, c.len[2]);
		if (bpf_xdp_adjust_tail(xdp, (int)want - (int)len) < 0)
			return XDP_ABORTED;
		if (bpf_xdp_store_bytes(xdp, 0, b0->b, want) < 0)
			return XDP_ABORTED;
	}
	count(INART_XA_C_SENT, 1);
	count(INART_XA_C_QUEUED, c.frames - 1);
	verdict(INART_XA_SEND, e->out_port, c.frames);
	if (e->out_port == port)
		return XDP_TX;
	return bpf_redirect_map(&xa_devs, e->out_port, 0);
}

/* ---- timeouts: inart_switch_tick, one frame per run ---- */

struct tick_scan {
	__u64 now, best_order;
	__s64 best;
};

static long tick_cb(__u64 i, void *ctx)
{
	struct tick_scan *t = ctx;
	__u32 k = (__u32)i;
	struct inart_xa_slot *s = bpf_map_lookup_elem(&xa_slots, &k);

	if (s != NULL && s->busy && s->deadline <= t->now &&
	    (t->best < 0 || s->order < t->best_order)) {
		t->best = k;
		t->best_order = s->order;
	}
	return 0;
}

/* (h25w: the body of xdp_agg_tick, inlined into it and xdp_agg_cpu) */
static __always_inline int tick_run(struct xdp_md *xdp)
{
	struct tick_scan t = {0, 0, -1};
	struct inart_xa_cfg *cfg;
	struct inart_xa_slot *s;
	struct inart_xa_ent *e;
	struct scratch *sc;
	__u32 z = 0, k, len, want;
	int complete = 1, ovf;

	verdict(INART_XA_DROP, 0, 0);
	cfg = bpf_map_lookup_elem(&xa_cfg, &z);
	sc = bpf_map_lookup_elem(&xa_scratch, &z);
	if (cfg == NULL || sc == NULL)
		return XDP_DROP;
	t.now = cfg->now ? cfg->now : bpf_ktime_get_ns();
	/* (h25f) only the slots of the kernel entries' ranges (xa_cfg) */
	bpf_loop(cfg->scan_slots && cfg->scan_slots < cfg->n_slots ? cfg->scan_slots : cfg->n_slots,
		 tick_cb, &t, 0);
	if (t.best < 0)
		return XDP_DROP;
	k = (__u32)t.best;
	s = bpf_map_lookup_elem(&xa_slots, &k);
	if (s == NULL)
		return XDP_DROP;
	e = bpf_map_lookup_elem(&xa_labels, &s->label);
	if (e == NULL) { /* cannot happen in the core: a swap frees such slots */
		s->busy = 0;
		s->kept = 0;
		verdict(INART_XA_PUNT, 0, 0);
		return XDP_PASS;
	}
	for (__u32 w = 0; w < INART_XA_MAX_WORDS; w++)
		if (w < e->bitmap_words && s->bitmap[w] != e->expected[w])
			complete = 0;
	ovf = s->overflow || (s->m_flags & F_OVERFLOW);
	len = xa_build(&sc->out[0], s, e, complete ? 0 : F_PARTIAL);
	want = len & 2047;
	if (want < 60 || want > INART_XA_FRAME_MAX)
		return XDP_ABORTED;
	{
		struct inart_xa_tree *ts = bpf_map_lookup_elem(&xa_trees, &e->tree_idx);

		if (ts != NULL) {
			if (complete)
				ts->emitted++;
			else
				ts->partial++;
			ts->overflows += ovf ? 1 : 0;
		}
	}
	s->busy = 0;
	s->kept = 1;
	if (bpf_xdp_adjust_tail(xdp, (int)want - (int)bpf_xdp_get_buff_len(xdp)) < 0 ||
	    bpf_xdp_store_bytes(xdp, 0, sc->out[0].b, want) < 0)
		return XDP_ABORTED;
	count(INART_XA_C_FLUSHED, 1);
	verdict(INART_XA_SEND, e->out_port, 1);
	return XDP_TX;
}

/* ---- entries (h25w: verdict and exit plumbing only) ---- */

SEC("xdp")
int xdp_agg(struct xdp_md *xdp)
{
	return agg_run(xdp, -1);
}

SEC("xdp")
int xdp_agg_tick(struct xdp_md *xdp)
{
	return tick_run(xdp);
}

static __always_inline void pcount(__u32 port, __u32 k, __u64 v)
{
	__u32 i = 4 * (port & (INART_XA_MAX_PORTS - 1)) + k;
	__u64 *c = bpf_map_lookup_elem(&xa_pctrs, &i);

	if (c != NULL)
		*c += v;
}

/* A CPU's state follows xa_cfg's generations (flip_cb per slot). */
struct flip {
	__u32 all, lost;
};

static long flip_cb(__u64 i, void *ctx)
{
	struct flip *f = ctx;
	__u32 k = (__u32)i;
	struct inart_xa_slot *s = bpf_map_lookup_elem(&xa_slots, &k);
	struct inart_xa_ent *e;

	if (s == NULL)
		return 1;
	if (f->all) {
		f->lost += s->busy ? 1 : 0;
		s->busy = 0;
		s->kept = 0;
		return 0;
	}
	if (!s->busy)
		return 0;
	/* drop_orphan_slots (dp/switch.c) */
	e = bpf_map_lookup_elem(&xa_labels, &s->label);
	if (e == NULL || e->kind != KIND_UP || !e->aggregate || !e->kernel || e->job != s->job ||
	    e->tree != s->tree || e->bitmap_words != s->bitmap_words || k < e->slot_base ||
	    k >= (__u32)e->slot_base + e->n_slots)
		s->busy = 0;
	return 0;
}

static long reset_cb(__u64 i, void *ctx)
{
	__u32 k = (__u32)i;
	struct inart_xa_pos *p = bpf_map_lookup_elem(&xa_progress, &k);

	if (p == NULL)
		return 1;
	p->iter = p->pos = 0;
	return 0;
}

/* Before this CPU touches its state: an install (gen) frees its orphaned
 * slots and forgets rank progress, a lose_state frees every slot. */
static __always_inline void state_sync(const struct inart_xa_cfg *cfg)
{
	__u32 z = 0;
	struct inart_xa_last *l = bpf_map_lookup_elem(&xa_last, &z);
	struct flip f = {0};

	if (l == NULL || (l->gen == cfg->gen && l->lose_gen == cfg->lose_gen))
		return;
	f.all = l->lose_gen != cfg->lose_gen;
	bpf_loop(cfg->n_slots, flip_cb, &f, 0);
	bpf_loop(cfg->n_ranks, reset_cb, NULL, 0);
	l->gen = cfg->gen;
	l->lose_gen = cfg->lose_gen;
	l->lost += f.lost;
}

/* The frame copied whole into ring (xa_rx: for the user-space core,
 * received on port; xa_tx: to send on port) as port, length, bytes; full
 * is counted if the ring is full (the frame is lost as on a wire). */
static __always_inline int to_user(struct xdp_md *xdp, void *ring, __u32 port, __u32 full)
{
	__u64 len = bpf_xdp_get_buff_len(xdp);
	struct inart_xa_txrec *r;

	if (len < 14 || len > INART_XA_FRAME_MAX)
		return XDP_DROP;
	r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);
	if (r == NULL) {
		count(full, 1);
		return XDP_DROP;
	}
	r->port = port;
	r->len = (__u32)len;
	if (bpf_xdp_load_bytes(xdp, 0, r->data, (__u32)len & 2047) < 0) {
		bpf_ringbuf_discard(r, 0);
		return XDP_DROP;
	}
	bpf_ringbuf_submit(r, 0);
	return XDP_DROP;
}

static __always_inline int to_core(struct xdp_md *xdp, __u32 port)
{
	return to_user(xdp, &xa_rx, port, INART_XA_C_RING_FULL);
}

/* (h25e) A frame the kernel built for out: sent by rc (XDP_TX or the
 * redirect), or, if switchd shapes out, queued on xa_tx for its shaper
 * (rc dropped: the redirect the body chose is not taken). */
static __always_inline int send_out(struct xdp_md *xdp, int rc, __u32 out)
{
	__u32 k = out & (INART_XA_MAX_PORTS - 1), *shaped = bpf_map_lookup_elem(&xa_shaped, &k);

	if (shaped == NULL || *shaped == 0)
		return rc;
	count(INART_XA_C_SHAPED, 1);
	return to_user(xdp, &xa_tx, k, INART_XA_C_TX_FULL);
}

/* ---- --agg-mbps (h25g): the aggregation-rate limit (io/xdp_agg.h
 * inart_xa_gate), before agg_run in switchd's exits ---- */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xa_gate);
} xa_gate SEC(".maps");

/* frames held back, for switchd to send back (xdp_agg_inject) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, INART_XA_HELD_RING);
} xa_held SEC(".maps");

/* 1 if the frame is one dp/gate charges (is_agg): IPv4 UDP to the InArt
 * port, an INA header of INART_WIRE_FIXED_LEN (32) bytes at least, DATA
 * without RETX, values, a label of an aggregating UP entry (the kernel's or
 * the core's: the bucket is the switch's). */
static __always_inline int xa_gate_charged(struct xdp_md *xdp)
{
	const __u8 *d = (const __u8 *)(long)xdp->data, *end = (const __u8 *)(long)xdp->data_end;
	const struct inart_xa_ent *e;
	const __u8 *u, *h;
	__u32 hl, label;

	if (d + 34 > end || d[12] != 0x08 || d[13] != 0x00 || (d[14] >> 4) != 4 || d[23] != 17)
		return 0;
	hl = (__u32)(d[14] & 15) * 4;
	if (hl < 20)
		return 0;
	u = d + 14 + (hl & 63);
	if (u + 8 + 32 > end || ld16(u + 2) != INART_XA_UDP_PORT)
		return 0;
	h = u + 8;
	if ((h[1] & (F_DATA | F_RETX)) != F_DATA || ld16(h + 26) == 0)
		return 0;
	label = ld32(h + 12);
	e = bpf_map_lookup_elem(&xa_labels, &label);
	return e != NULL && e->kind == KIND_UP && e->aggregate;
}

/* The bucket to now (t > last_ns), in nano-bytes (tbucket.c refill). */
static __always_inline void xa_gate_fill(struct inart_xa_gate *g, __u64 t)
{
	__u64 dt, full;

	if (t <= g->last_ns)
		return;
	dt = t - g->last_ns;
	full = (__u64)(g->burst - g->tokens) / g->rate + 1; /* ns to fill it */
	if (dt >= full)
		g->tokens = g->burst;
	else
		g->tokens += (__s64)(dt * g->rate);
	if (g->tokens > g->burst)
		g->tokens = g->burst;
	g->last_ns = t;
}

/* dp/gate's inart_gate_rx on a charged frame of len bytes at now, in
 * virtual time: 0 pass, 1 held until *at, 2 dropped (the FIFO full). */
static __always_inline int xa_gate_take(struct inart_xa_gate *g, __u64 len, __u64 now, __u64 *at)
{
	__s64 need = (__s64)len * 1000000000ll;
	__u64 t, idx, cap = g->cap & (2 * INART_XA_GATE_RING - 1);
	int rc = 0;

	if (need > g->burst)
		need = g->burst;
	bpf_spin_lock(&g->lock);
	g->agg_frames++;
	g->agg_bytes += len;
	if (g->last_ns <= now) { /* nothing waits */
		xa_gate_fill(g, now);
		if (g->tokens >= need) {
			g->tokens -= (__s64)len * 1000000000ll;
			goto out;
		}
	}
	/* full: the frame held cap frames ago waits still (grants in order) */
	if (cap == 0 || cap > INART_XA_GATE_RING ||
	    (g->n_held >= cap &&
	     g->release[(g->n_held - cap) & (INART_XA_GATE_RING - 1)] > now)) {
		g->agg_dropped++;
		rc = 2;
		goto out;
	}
	/* tbucket_ready_at behind the last grant, then its take there */
	t = g->last_ns > now ? g->last_ns : now;
	xa_gate_fill(g, t);
	if (g->tokens < need)
		t += ((__u64)(need - g->tokens) + g->rate - 1) / g->rate;
	xa_gate_fill(g, t);
	g->tokens -= (__s64)len * 1000000000ll;
	g->last_ns = t;
	idx = g->n_held & (INART_XA_GATE_RING - 1);
	g->release[idx] = t;
	g->n_held++;
	g->agg_held++;
	*at = t;
	rc = 1;
out:
	bpf_spin_unlock(&g->lock);
	return rc;
}

/* The gate on a frame of port: -1 on (not charged, paid for, or granted
 * now), else the verdict (held: handed to switchd through xa_held). */
static __always_inline int xa_gate_rx(struct xdp_md *xdp, __u32 port)
{
	__u32 z = 0;
	struct inart_xa_gate *g = bpf_map_lookup_elem(&xa_gate, &z);
	struct inart_xa_heldrec *r;
	__u64 len, now, at = 0;
	int rc;

	if (g == NULL || g->rate == 0 || !xa_gate_charged(xdp))
		return -1;
	len = bpf_xdp_get_buff_len(xdp);
	now = bpf_ktime_get_ns();
	rc = xa_gate_take(g, len, now, &at);
	if (rc == 0)
		return -1;
	if (rc == 2 || len < 14 || len > INART_XA_FRAME_MAX)
		return XDP_DROP;
	r = bpf_ringbuf_reserve(&xa_held, sizeof(*r), 0);
	if (r == NULL) {
		__sync_fetch_and_add(&g->held_lost, 1);
		return XDP_DROP;
	}
	r->port = port;
	r->len = (__u32)len;
	r->cpu = bpf_get_smp_processor_id();
	r->pad = 0;
	r->release_ns = at;
	if (bpf_xdp_load_bytes(xdp, 0, r->data, (__u32)len & 2047) < 0) {
		bpf_ringbuf_discard(r, 0);
		__sync_fetch_and_add(&g->held_lost, 1);
		return XDP_DROP;
	}
	bpf_ringbuf_submit(r, 0);
	return XDP_DROP;
}

/* A frame switchd sent back (xdp_agg_inject's mark, with the gate's
 * nonce): its port (>= 0), else -1. */
static __always_inline int xa_gate_paid(struct xdp_md *xdp)
{
	const struct inart_xa_paid *m = (const void *)(long)xdp->data_meta;
	__u32 z = 0;
	struct inart_xa_gate *g;

	if ((const void *)(m + 1) > (const void *)(long)xdp->data ||
	    m->magic != INART_XA_GATE_PAID)
		return -1;
	g = bpf_map_lookup_elem(&xa_gate, &z);
	if (g == NULL || g->nonce == 0 || m->nonce != g->nonce)
		return -1;
	return (int)(m->port & (INART_XA_MAX_PORTS - 1));
}

/* agg_run on a frame of port, with switchd's exits: what the body passes
 * goes to the core (xa_rx), APPLIED is dropped, the ports' counters (the
 * body's XDP_TX returned as it is: the caller's). */
static __always_inline int agg_port(struct xdp_md *xdp, __u32 port)
{
	__u64 len = bpf_xdp_get_buff_len(xdp);
	struct inart_xa_last *l;
	__u32 z = 0;
	int rc;

	rc = agg_run(xdp, (int)port);
	l = bpf_map_lookup_elem(&xa_last, &z);
	if (l == NULL)
		return XDP_DROP;
	if (rc == XDP_PASS)
		return l->verdict == INART_XA_APPLIED ? XDP_DROP : to_core(xdp, port);
	pcount(port, 0, 1);
	pcount(port, 1, len);
	if (rc == XDP_DROP || rc == XDP_ABORTED)
		return rc;
	/* tx: the frames built for the port (through its shaper or not: the
	   port's stats count a shaper's drops apart) */
	pcount(l->out_port, 2, 1);
	pcount(l->out_port, 3, bpf_xdp_get_buff_len(xdp));
	return send_out(xdp, rc, l->out_port);
}

/* The CPUMAP program of switchd --agg kernel: a frame of one of the ports
 * goes through agg_run; what it passes goes to the core (xa_rx), APPLIED
 * (its frames not queued) is dropped: the state already took it, the
 * frames are lost as on a wire (the retransmission path recovers them);
 * XDP_TX (not allowed here) becomes a redirect to the ingress port.  A
 * frame from elsewhere (xdp_agg_kick's, through BPF_PROG_TEST_RUN) is a
 * tick: tick_run on this CPU, its frame redirected to the entry's port. */
SEC("xdp/cpumap")
int xdp_agg_cpu(struct xdp_md *xdp)
{
	__u32 z = 0, ifx = xdp->ingress_ifindex, port, *pp;
	struct inart_xa_last *l;
	struct inart_xa_cfg *cfg = bpf_map_lookup_elem(&xa_cfg, &z);
	int rc;

	if (cfg == NULL)
		return XDP_DROP;
	state_sync(cfg);
	rc = xa_gate_paid(xdp); /* (h25g) a held frame sent back: aggregated now */
	if (rc >= 0) {
		port = (__u32)rc;
		rc = agg_port(xdp, port);
		return rc == XDP_TX ? bpf_redirect_map(&xa_devs, port, 0) : rc;
	}
	pp = bpf_map_lookup_elem(&xa_ifports, &ifx);
	if (pp == NULL) {
		rc = tick_run(xdp);
		l = bpf_map_lookup_elem(&xa_last, &z);
		if (rc != XDP_TX || l == NULL)
			return XDP_DROP;
		pcount(l->out_port, 2, 1);
		pcount(l->out_port, 3, bpf_xdp_get_buff_len(xdp));
		if (send_out(xdp, XDP_TX, l->out_port) == XDP_DROP)
			return XDP_DROP; /* (queued for the shaper) */
		return bpf_redirect_map(&xa_devs, l->out_port & (INART_XA_MAX_PORTS - 1), 0);
	}
	port = *pp & (INART_XA_MAX_PORTS - 1);
	rc = xa_gate_rx(xdp, port); /* (h25g) --agg-mbps */
	if (rc >= 0)
		return rc;
	rc = agg_port(xdp, port);
	if (rc == XDP_TX)
		return bpf_redirect_map(&xa_devs, port, 0);
	return rc;
}

/* (h25k) The same on the CPU the frame arrived on: xdp_switch tail-calls
 * here (its agg_prog) when the frame's aggregation CPU is the receiving one,
 * so the CPUMAP hop is skipped.  The state is this CPU's, as in
 * xdp_agg_cpu: the CPUMAP's thread runs its programs with bottom halves
 * off and this runs in the receive softirq, so the two never interleave on
 * one CPU.  XDP_TX is allowed here; what the body passes goes to the core
 * (xa_rx) as from xdp_agg_cpu, so that every punt of a kernel tree reaches
 * it the same way. */
SEC("xdp")
int xdp_agg_dev(struct xdp_md *xdp)
{
	__u32 z = 0, ifx = xdp->ingress_ifindex, *pp;
	struct inart_xa_cfg *cfg = bpf_map_lookup_elem(&xa_cfg, &z);
	int rc;

	if (cfg == NULL)
		return XDP_DROP;
	pp = bpf_map_lookup_elem(&xa_ifports, &ifx);
	if (pp == NULL)
		return XDP_PASS; /* not a port of the tables (yet): the stack, as xdp_switch */
	state_sync(cfg);
	rc = xa_gate_rx(xdp, *pp & (INART_XA_MAX_PORTS - 1)); /* (h25g) --agg-mbps */
	if (rc >= 0)
		return rc;
	return agg_port(xdp, *pp & (INART_XA_MAX_PORTS - 1));
}

/* BPF_PROG_TEST_RUN (live frames) of switchd's tick: the frame to the CPU
 * named at INART_XA_KICK_CPU_OFF, where xdp_agg_cpu runs tick_run. */
SEC("xdp")
int xdp_agg_kick(struct xdp_md *xdp)
{
	void *data = (void *)(long)xdp->data, *end = (void *)(long)xdp->data_end;
	__u32 *cpu = data + INART_XA_KICK_CPU_OFF;

	if ((void *)(cpu + 1) > end)
		return XDP_DROP;
	return bpf_redirect_map(&xa_cpus, *cpu & (INART_XA_MAX_CPUS - 1), 0);
}

/* (h25g) BPF_PROG_TEST_RUN (live frames) of a frame the gate held, sent
 * back by switchd at its time: to the CPU that held it (its slot's, named
 * in the mark), where xdp_agg_cpu aggregates it without a charge. */
SEC("xdp")
int xdp_agg_inject(struct xdp_md *xdp)
{
	const struct inart_xa_paid *m = (const void *)(long)xdp->data_meta;

	if ((const void *)(m + 1) > (const void *)(long)xdp->data ||
	    m->magic != INART_XA_GATE_PAID)
		return XDP_DROP;
	return bpf_redirect_map(&xa_cpus, m->cpu & (INART_XA_MAX_CPUS - 1), 0);
}

char LICENSE[] SEC("license") = "GPL";
