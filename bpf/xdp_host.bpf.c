// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_host: the XDP program of a host daemon on AF_XDP (`inart ps --io
 * xdp`, loaded and attached by io/xsk.c to the host's interface).  Per
 * frame: untagged IPv4 (version 4, IHL >= 5), not a fragment, UDP to the
 * configured address and port (cfg) goes to the AF_XDP socket of the
 * frame's receive queue (XSKMAP, index = queue); everything else -- ARP,
 * ICMP, the control protocol's TCP, other UDP, fragments -- is passed to
 * the kernel's stack, which serves it as if no program ran.
 *
 * No checksum is checked here (the daemon's parser checks the lengths, the
 * PS core the contents).  Every access is bounds-checked against data_end.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "io/xdp_host.h"
#include "io/xdp_switch.h"

#define MAX_QUEUES 64

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inart_xdp_host_cfg);
} cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INART_XDP_N_CTRS);
	__type(key, __u32);
	__type(value, __u64);
} ctrs SEC(".maps");

static __always_inline void count(__u32 k)
{
	__u64 *c = bpf_map_lookup_elem(&ctrs, &k);

	if (c)
		*c += 1;
}

static __always_inline int pass(void)
{
	count(INART_XDP_PASS);
	return XDP_PASS;
}

SEC("xdp")
int inart_xdp_host(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct inart_xdp_host_cfg *c;
	struct iphdr *ip;
	struct udphdr *u;
	__u32 zero = 0, q = ctx->rx_queue_index;
	int rc;

	c = bpf_map_lookup_elem(&cfg, &zero);
	if (!c || c->ip == 0)
		return pass();
	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return pass();
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(0x3fff)) != 0 ||
	    ip->daddr != c->ip)
		return pass();
	u = (void *)ip + ip->ihl * 4; /* options included, as dp/pkt's parser */
	if ((void *)(u + 1) > end || u->dest != c->port)
		return pass();
	if (q >= c->n_queues) {
		count(INART_XDP_ABORT);
		return pass();
	}
	rc = bpf_redirect_map(&xsks, q, XDP_PASS);
	if (rc == XDP_PASS) {
		count(INART_XDP_ABORT);
		return pass();
	}
	count(INART_XDP_USER);
	count(INART_XDP_INA);
	return rc;
}

char LICENSE[] SEC("license") = "GPL";
