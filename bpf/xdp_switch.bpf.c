// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_switch: the XDP program of `inart switchd --io xdp` (loaded and
 * attached by io/xsk.c to every port of the switch).  Per frame:
 *
 *   plain IPv4 the switch core would forward by its routes (untagged,
 *   IHL 5, valid header checksum, total length inside the frame, not UDP to
 *   the InArt port, TTL > 1, not to one of the switch's own addresses, from
 *   the host's address on a port with ingress filtering, a route whose
 *   egress port has a known peer MAC): forwarded here -- MACs rewritten
 *   (peer MAC, the egress port's MAC), TTL decremented, the checksum
 *   updated, padding trimmed -- and redirected (DEVMAP) to the egress port;
 *   everything else (InArt, ARP, what the core drops or must count): to the
 *   AF_XDP socket of the port on the frame's queue (XSKMAP, index = port x
 *   n_queues + queue), or to the stack if there is no socket on that queue.
 *
 * The user-space switch core stays the reference: whatever this program is
 * not sure about goes up to it.  Every access is bounds-checked against
 * data_end (the verifier proves it).  Counters: per CPU (xdp_switch.h).
 * A plain frame's lookups are arrays (ifslots, hosts, ports, fctrs) but
 * the LPM trie for a destination without an own address or /32 route
 * (xdp_switch.h: hosts, hosts_on).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "io/xdp_switch.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, INART_XDP_MAX_PORTS *INART_XDP_MAX_QUEUES); /* port x queue */
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, INART_XDP_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INART_XDP_MAX_PORTS);
	__type(key, __u32);   /* ifindex */
	__type(value, __u32); /* port */
} ifports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INART_XDP_IFSLOTS);
	__type(key, __u32); /* ifindex & (INART_XDP_IFSLOTS - 1) */
	__type(value, struct inart_xdp_ifslot);
} ifslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INART_XDP_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct inart_xdp_port);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INART_XDP_HOST_SLOTS);
	__type(key, __u32); /* inart_xdp_host_slot(address) */
	__type(value, struct inart_xdp_host);
} hosts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, INART_XDP_MAX_ROUTES);
	__type(key, struct inart_xdp_route_key);
	__type(value, __u32); /* egress port */
	__uint(map_flags, BPF_F_NO_PREALLOC);
} routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INART_XDP_MAX_OWN_IPS);
	__type(key, __u32); /* network order */
	__type(value, __u32);
} own_ips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INART_XDP_N_CTRS);
	__type(key, __u32);
	__type(value, __u64);
} ctrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xdp_fwd_ctrs);
} fctrs SEC(".maps");

/* --agg kernel (issue 25, h25w): InArt frames go to the CPU that owns
 * their (job, tree, slot) -- inart_shard_steer's function over agg_steer's
 * CPUs -- where xdp_agg_cpu (bpf/xdp_agg.bpf.c) runs; agg_steer.n = 0: off.
 * (h25k) A frame whose CPU is the one it arrived on runs the aggregation
 * here, by a tail call into agg_prog (xdp_agg_dev): no CPUMAP hop.  Label 0
 * (routed by address), RETX and NACK frames are never the kernel's: they go
 * to the socket directly, as everything InArt when no label is. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, INART_XDP_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} agg_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xdp_agg_steer);
} agg_steer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} agg_prog SEC(".maps");

static __always_inline void count(__u32 k, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&ctrs, &k);

	if (c)
		*c += v;
}

/* Queues with a socket on every port (switchd --cores N: N; set by io/xsk
 * before attaching).  A frame goes to the socket of its own queue: the
 * kernel refuses a redirect to a socket of another queue (io/xsk hands
 * frames to the shard that owns them). */
__u32 n_queues = 1;

/* 1 while hosts answers for own_ips and the trie's /32 routes (io/xsk
 * clears it before changing either and sets it once hosts is rebuilt);
 * 0: every destination by own_ips and the trie (xdp_switch.h). */
__u32 hosts_on;

static __always_inline int to_user(struct xdp_md *ctx, __u32 port, int ina)
{
	__u32 q = ctx->rx_queue_index;
	int rc;

	if (q >= n_queues) {
		count(INART_XDP_PASS, 1);
		return XDP_PASS;
	}
	rc = bpf_redirect_map(&xsks, port * n_queues + q, XDP_PASS);
	if (rc == XDP_PASS) {
		count(INART_XDP_PASS, 1);
		return XDP_PASS;
	}
	count(INART_XDP_USER, 1);
	if (ina)
		count(INART_XDP_INA, 1);
	return rc;
}

/* An InArt frame (UDP header at u): to its aggregation CPU, or up. */
static __always_inline int to_agg(struct xdp_md *ctx, __u32 port, const struct udphdr *u, void *end)
{
	const __u8 *h = (const __u8 *)(u + 1);
	__u32 z = 0, job, tree, slot, y, cpu, n, i;
	struct inart_xdp_agg_steer *st = bpf_map_lookup_elem(&agg_steer, &z);

	if (st == NULL || st->n == 0 || st->n > INART_XDP_MAX_CPUS || !st->any)
		return to_user(ctx, port, 1);
	/* too short for the fields, label 0, RETX or NACK: xdp_agg would punt
	   it untouched (xa_parse, the label and entry checks) */
	if ((void *)(h + 26) > end || (h[12] | h[13] | h[14] | h[15]) == 0 || (h[1] & 0x44))
		return to_user(ctx, port, 1);
	n = st->n;
	job = (__u32)h[4] << 24 | (__u32)h[5] << 16 | (__u32)h[6] << 8 | h[7];
	tree = (__u32)h[8] << 8 | h[9];
	slot = (__u32)h[24] << 8 | h[25];
	y = (job * 0x9E3779B1u ^ tree) * 0x85EBCA6Bu;
	y ^= y >> 16;
	i = (y % n + slot) % n;
	asm volatile("" : "+r"(i)); /* (else clang drops the mask the verifier needs) */
	cpu = st->cpu[i & (INART_XDP_MAX_CPUS - 1)];
	count(INART_XDP_AGG, 1);
	if (cpu == bpf_get_smp_processor_id()) {
		count(INART_XDP_AGG_LOCAL, 1);
		bpf_tail_call(ctx, &agg_prog, 0);
		/* (agg_prog empty: cannot happen, xagg fills it first) */
	}
	return bpf_redirect_map(&agg_cpus, cpu, 0);
}

/* 1 if the 20-byte IPv4 header sums to 0xffff (the core checks the same). */
static __always_inline int csum_ok(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 s = 0;

#pragma unroll
	for (int i = 0; i < 10; i++)
		s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

SEC("xdp")
int inart_xdp_switch(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct inart_xdp_port *in, *out;
	struct inart_xdp_route_key key;
	struct inart_xdp_ifslot *sl;
	__u32 ifindex = ctx->ingress_ifindex, slot = ifindex & (INART_XDP_IFSLOTS - 1);
	__u32 port, in_port, *pp, *egress, tot, flen, sum, on, zero = 0;
	struct inart_xdp_fwd_ctrs *fc;

	sl = bpf_map_lookup_elem(&ifslots, &slot);
	if (sl && sl->ifindex == ifindex) {
		port = sl->port;
	} else {
		pp = bpf_map_lookup_elem(&ifports, &ifindex);
		if (!pp) {
			count(INART_XDP_ABORT, 1);
			return XDP_PASS; /* not one of ours (a stale attachment): the stack */
		}
		port = *pp;
	}
	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return to_user(ctx, port, 0);
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end)
		return to_user(ctx, port, 0);
	flen = (__u32)((long)end - (long)data);
	tot = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || ip->ihl != 5 || tot < 20 || tot > flen - 14 ||
	    flen > INART_XDP_FRAME_MAX || !csum_ok(ip))
		return to_user(ctx, port, 0);
	if (ip->protocol == IPPROTO_UDP && (ip->frag_off & bpf_htons(0x3fff)) == 0) {
		struct udphdr *u = (void *)(ip + 1);
		__u32 ulen;

		if ((void *)(u + 1) > end)
			return to_user(ctx, port, 0);
		ulen = bpf_ntohs(u->len);
		if (ulen < 8 || ulen > tot - 20)
			return to_user(ctx, port, 0); /* the core counts it malformed */
		if (u->dest == bpf_htons(INART_XDP_UDP_PORT))
			return to_agg(ctx, port, u, end);
	}
	if (ip->ttl <= 1)
		return to_user(ctx, port, 0);
	in = bpf_map_lookup_elem(&ports, &port);
	if (!in || (in->peer_ip != 0 && in->peer_ip != ip->saddr))
		return to_user(ctx, port, 0); /* spoofed: the core counts it */
	in_port = port;
	on = *(volatile __u32 *)&hosts_on; /* read once: io/xsk may flip it */
	if (on) {
		__u32 h = inart_xdp_host_slot(ip->daddr);
		struct inart_xdp_host *e = bpf_map_lookup_elem(&hosts, &h);

		if (!e || e->val == INART_XDP_HOST_SLOW)
			on = 0; /* several addresses in the slot: the slow way */
		else if (e->val != 0 && e->addr == ip->daddr) {
			if (e->val == INART_XDP_HOST_OWN)
				return to_user(ctx, in_port, 0);
			port = e->val - 1;
			goto routed;
		}
	}
	if (!on && bpf_map_lookup_elem(&own_ips, &ip->daddr))
		return to_user(ctx, in_port, 0);
	key.prefixlen = 32;
	key.addr = ip->daddr;
	egress = bpf_map_lookup_elem(&routes, &key);
	if (!egress)
		return to_user(ctx, in_port, 0); /* no route: the core counts it */
	port = *egress;
routed:
	out = bpf_map_lookup_elem(&ports, &port);
	if (!out || !out->peer_known || !out->fwd)
		return to_user(ctx, in_port, 0);
	/* TTL - 1 and the checksum (RFC 1624: the TTL is the high byte) */
	ip->ttl--;
	sum = (__u32)ip->check + bpf_htons(0x0100);
	ip->check = (__u16)(sum + (sum >= 0xffff)); /* as the kernel's ip_decrease_ttl */
	__builtin_memcpy(eth->h_dest, out->peer_mac, 6);
	__builtin_memcpy(eth->h_source, out->mac, 6);
	if (flen > tot + 14 && bpf_xdp_adjust_tail(ctx, (int)(tot + 14) - (int)flen) < 0) {
		count(INART_XDP_ABORT, 1);
		return XDP_DROP;
	}
	fc = bpf_map_lookup_elem(&fctrs, &zero);
	if (fc) {
		fc->fwd++;
		fc->fwd_bytes += tot + 14;
		if (in_port < INART_XDP_MAX_PORTS) {
			fc->port[in_port][INART_XDP_P_RX]++;
			fc->port[in_port][INART_XDP_P_RX_BYTES] += flen;
		}
		if (port < INART_XDP_MAX_PORTS) {
			fc->port[port][INART_XDP_P_TX]++;
			fc->port[port][INART_XDP_P_TX_BYTES] += tot + 14;
		}
	}
	return bpf_redirect_map(&devs, port, 0);
}

char LICENSE[] SEC("license") = "GPL";
