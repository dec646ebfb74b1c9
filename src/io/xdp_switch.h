/*
 * xdp_switch.h: what the XDP program of `inart switchd --io xdp`
 * (bpf/xdp_switch.bpf.c) and its loader (io/xsk.c) share: the layout of
 * its maps' keys and values and of its counters.  Fixed-width types only
 * (included by BPF C and by user space).
 */
#ifndef INART_XDP_SWITCH_H
#define INART_XDP_SWITCH_H

#include <linux/types.h>

#define INART_XDP_MAX_PORTS 64
#define INART_XDP_MAX_QUEUES 64 /* INART_SHARD_MAX (dp/shard.h): a socket per worker */
#define INART_XDP_MAX_ROUTES 65536
#define INART_XDP_MAX_OWN_IPS 256
#define INART_XDP_UDP_PORT 47470 /* INART_WIRE_UDP_PORT (dp/wire.h) */
#define INART_XDP_FRAME_MAX 1518 /* INART_FRAME_MAX (dp/switch.h) */
#define INART_XDP_MAX_CPUS 64	 /* agg_cpus: INART_XA_MAX_CPUS (io/xdp_agg.h) */

/* ports[port]: the switch port's configuration as the program needs it */
struct inart_xdp_port {
	__u32 peer_ip;	  /* network order; 0: no ingress check */
	__u8 mac[6];	  /* the port's own MAC: source of forwarded frames */
	__u8 peer_mac[6]; /* destination of forwarded frames */
	__u8 peer_known;  /* 0: peer MAC not learned yet (frames go to user space) */
	__u8 fwd;	  /* 1: plain IPv4 may leave through this port in the kernel */
	__u16 pad;
};

/* ifslots[ifindex & (INART_XDP_IFSLOTS - 1)]: the port of an interface
 * without a hash lookup (ifindex 0: empty); an interface whose slot another
 * port holds is found in ifports (a hash) instead */
#define INART_XDP_IFSLOTS 256 /* a power of two */
struct inart_xdp_ifslot {
	__u32 ifindex;
	__u32 port;
};

/* hosts[inart_xdp_host_slot(daddr)]: the exact answer for a destination
 * address (network order) that is one of the switch's own addresses or has
 * a /32 route, looked up before the LPM trie (a /32 is the longest prefix
 * there is; the trie still holds it).  val 0: no such address in this slot
 * (the trie decides, with no /32 to find); INART_XDP_HOST_OWN: own address
 * (to user space); INART_XDP_HOST_SLOW: several share the slot, own_ips and
 * the trie decide; else the /32's egress port + 1 (addr: the address).  The
 * program uses it only while its hosts_on is 1: io/xsk clears that, waits
 * for running programs (an RCU grace period), changes own_ips, the trie and
 * this table, and sets it again when all succeeded. */
#define INART_XDP_HOST_BITS 14
#define INART_XDP_HOST_SLOTS (1u << INART_XDP_HOST_BITS)
#define INART_XDP_HOST_OWN 0xffffffffu
#define INART_XDP_HOST_SLOW 0xfffffffeu
struct inart_xdp_host {
	__u32 addr; /* network order */
	__u32 val;
};

static inline __u32 inart_xdp_host_slot(__u32 addr)
{
	return (addr * 0x9E3779B1u) >> (32 - INART_XDP_HOST_BITS);
}

/* routes: an LPM trie, the same routes as the switch core's */
struct inart_xdp_route_key {
	__u32 prefixlen; /* 0..32 */
	__u32 addr;	 /* network order */
};

/* counters as inart_xsk_counters returns them: index enum inart_xdp_ctr,
 * then per port p INART_XDP_CTR_N + 4 * p + enum inart_xdp_port_ctr
 * (forwarded frames only: what reaches user space is counted there).  In
 * the program: ctrs, a per-CPU array of them, except the forwarding path's
 * (INART_XDP_FWD, INART_XDP_FWD_BYTES and the ports'), which are fctrs'
 * (one lookup per frame). */
enum inart_xdp_ctr {
	INART_XDP_FWD,	     /* plain IPv4 forwarded in the kernel (redirect issued) */
	INART_XDP_FWD_BYTES, /* their bytes (after trimming) */
	INART_XDP_USER,	     /* frames steered to the port's AF_XDP socket */
	INART_XDP_INA,	     /* of which InArt (UDP to INART_XDP_UDP_PORT) */
	INART_XDP_PASS,	     /* no socket on that queue: passed to the stack */
	INART_XDP_ABORT,     /* unknown interface or a failed trim: dropped */
	INART_XDP_AGG,	     /* InArt steered to an aggregation CPU (--agg kernel) */
	INART_XDP_AGG_LOCAL, /* of which aggregated on the receiving CPU (tail call) */
	INART_XDP_CTR_N
};

enum inart_xdp_port_ctr {
	INART_XDP_P_RX,
	INART_XDP_P_RX_BYTES,
	INART_XDP_P_TX,
	INART_XDP_P_TX_BYTES
};

/* agg_steer[0] (--agg kernel, io/xagg): an InArt frame with a label != 0
 * and neither RETX nor NACK goes to CPU cpu[i], i = inart_shard_steer's
 * function of (job, tree, slot) over n, when the switch has kernel entries
 * (any); on the receiving CPU itself by a tail call (agg_prog), else through
 * the CPUMAP; every other InArt frame to the AF_XDP socket. */
struct inart_xdp_agg_steer {
	__u32 n;   /* aggregation CPUs; 0: off */
	__u32 any; /* 0: no label of the tables is the kernel's (nothing steered) */
	__u32 cpu[INART_XDP_MAX_CPUS];
};
#define INART_XDP_N_CTRS (INART_XDP_CTR_N + 4 * INART_XDP_MAX_PORTS)

/* fctrs[0] (per CPU): the counters of frames forwarded in the program */
struct inart_xdp_fwd_ctrs {
	__u64 fwd, fwd_bytes;		    /* INART_XDP_FWD, INART_XDP_FWD_BYTES */
	__u64 port[INART_XDP_MAX_PORTS][4]; /* enum inart_xdp_port_ctr */
};

#endif
