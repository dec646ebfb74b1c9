/*
 * xdp_host.h: what the XDP program of a host daemon on AF_XDP (`inart ps
 * --io xdp`, bpf/xdp_host.bpf.c) and its loader (io/xsk.c) share: its
 * configuration.  Its counters are xdp_switch.h's array (INART_XDP_USER,
 * INART_XDP_INA: InArt frames to the socket; INART_XDP_PASS: everything
 * else, to the kernel's stack; INART_XDP_ABORT: InArt on a queue without a
 * socket, passed too).  Fixed-width types only (BPF C and user space).
 */
#ifndef INART_XDP_HOST_H
#define INART_XDP_HOST_H

#include <linux/types.h>

/* cfg[0]: the host's address and UDP port; until it is set, everything
 * goes to the stack */
struct inart_xdp_host_cfg {
	__u32 ip;	/* network order; 0: not configured */
	__u16 port;	/* network order */
	__u16 n_queues; /* sockets on queues 0..n_queues-1 (XSKMAP index = queue) */
};

#endif
