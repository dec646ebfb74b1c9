/*
 * xsk: the AF_XDP back end of switchd (`--io xdp`): one set of sockets, one
 * per switch port, each over its own UMEM, and the project's own XDP
 * program (bpf/xdp_switch.bpf.c) on every port.  The program forwards the
 * plain IPv4 the switch core would forward (its routes, own addresses,
 * ingress filter and peer MACs are copied into its maps with
 * inart_xsk_sync_*) and steers everything else to the port's socket.
 *
 * Sockets: zero-copy with need-wakeup where the driver offers it, else copy
 * mode (veth refuses zero-copy); queue 0 only (an interface with more than
 * one receive queue is refused: `ethtool -L IF combined 1`), or with
 * o->queues = N one set per queue, interfaces with exactly N queues
 * (inart_xsk_set).  The program is
 * attached native (driver) where the driver allows it, else generic (skb).
 * Each attachment is a bpf_link owned by this process: it goes when the set
 * is closed and when the process dies (kill -9 included), nothing pinned.
 *
 * UMEM (2 KB frames), one per port: rx_frames for its fill ring (a
 * received frame goes back to the fill ring of its port at the next recv),
 * plus tx_frames on the port's free stack of transmit frames (they come
 * back through its completion ring); a frame sent is copied into one.  Not
 * shared: the kernel gives every (device, queue) bound to a UMEM a
 * descriptor per frame of the whole UMEM, ports x ports x frames if
 * shared.  More than a quarter of the machine's memory is refused (ENOMEM)
 * before anything is mapped, as is a mapping the kernel will not give.  Rings are
 * used in batches; a system call is made only when the kernel asks for a
 * wake-up (need-wakeup) or, in copy mode, to make the kernel send.
 *
 * A host's set (inart_xsk_open_host) is the same with one socket and the
 * host program (bpf/xdp_host.bpf.c): the PS daemon's `--io xdp`.
 *
 * Threads: everything on one thread (the packet thread), except
 * inart_xsk_counters (any thread: it reads a map).
 * Without libxdp/libbpf at build time inart_xsk_open fails with EOPNOTSUPP.
 */
#ifndef INART_XSK_H
#define INART_XSK_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/switch.h"
#include "io/afpacket.h"
#include "io/xdp_switch.h"

struct inart_xsk_opt {
	int batch;     /* frames per recv / kick, 1..1024 */
	int rx_frames; /* per port: fill and receive ring (rounded up to 2^k) */
	int tx_frames; /* per port: transmit and completion ring (2^k) */
	int queues;    /* 0, 1: one set on queue 0; N: N sets, set k on queue k
			  of every port (switchd --cores N; see inart_xsk_set) */
};

struct inart_xsk;

/* 1 if the build has the AF_XDP back end (libxdp and libbpf found). */
int inart_xsk_built(void);

/* 1 if this process can have AF_XDP sockets (built, and the kernel makes
 * one for it), else 0 with why[0..n) saying why not.  A probe only: a port
 * may still refuse (its driver, its queues, another XDP program). */
int inart_xsk_usable(char *why, size_t n);

/* Open the set on ifnames[0..n) (port i = ifnames[i]).  NULL + errno with
 * err saying why: EOPNOTSUPP (not built, more than one queue), EPERM (no
 * CAP_BPF / CAP_NET_ADMIN / CAP_NET_RAW), ENODEV, ENOMEM (UMEM), EBUSY
 * (another XDP program on an interface). */
struct inart_xsk *inart_xsk_open(const char *const *ifnames, int n, const struct inart_xsk_opt *o,
				 struct inart_err *err);
/* A host's set (`inart ps --io xdp`): one socket on ifname's queue 0 and
 * bpf/xdp_host.bpf.c attached, which steers UDP to ip:port (host order) to
 * the socket and passes everything else (ARP, ICMP, TCP, ...) to the
 * kernel's stack.  The port calls below with i = 0; no sync_* calls.  NULL
 * + errno with err as inart_xsk_open. */
struct inart_xsk *inart_xsk_open_host(const char *ifname, uint32_t ip, uint16_t port,
				      const struct inart_xsk_opt *o, struct inart_err *err);
/* The interface holding IPv4 address ip (host order) into ifname: 0,
 * -EADDRNOTAVAIL (none), -EOPNOTSUPP (a loopback interface: no AF_XDP for
 * it here, or not built). */
int inart_xsk_ifname_of(uint32_t ip, char *ifname, size_t n);
void inart_xsk_close(struct inart_xsk *x);
/* Set k of a set opened with o->queues = N (0 <= k < N; set 0 is the one
 * inart_xsk_open returned, and owns the others: closing it closes all):
 * sockets on queue k of every port, its own UMEM and transmit frames, for
 * worker k alone.  The kernel puts a frame on the queue the device chose
 * (a veth: by the sending CPU) and refuses a redirect to another queue's
 * socket, so inart_xsk_recv on set k computes each frame's shard
 * (dp/shard's inart_shard_steer, N shards) and hands the frames of shard j
 * to set j through a ring from k to j (one per port; single producer,
 * single consumer, no lock; a copy; full: dropped and counted in
 * rx_kernel_drops); set j's recv returns them with its own, and its poll fd
 * (inart_xsk_fd: an epoll fd over the socket and an eventfd the handing
 * set writes once until it is read) wakes for them.  NULL if k is out of
 * range. */
struct inart_xsk *inart_xsk_set(struct inart_xsk *x, int k);
/* Whether port i is a veth: a frame forwarded in the kernel into a veth is
 * lost unless its peer runs an XDP program or has GRO on. */
int inart_xsk_is_veth(const struct inart_xsk *x, int i);
/* Why ifname's transmit side is not what AF_XDP gives (its copy mode and
 * XDP redirects bypass the queueing discipline): the kind of a root qdisc
 * that shapes or schedules ("tbf", "netem", ...) into kind, 1; 0 if the
 * root qdisc is a plain queue (or none), -errno if it cannot be read. */
int inart_xsk_shaped(const char *ifname, char *kind, size_t kind_len);
/* The fd of x's XDP program (the switch's or the host's), -1 if none. */
int inart_xsk_prog_fd(const struct inart_xsk *x);
/* How it runs, e.g. "AF_XDP copy mode (zero-copy refused), native XDP". */
const char *inart_xsk_describe(const struct inart_xsk *x);

/* Port i, as io/afpacket's functions of the same names (io/port.h). */
int inart_xsk_fd(const struct inart_xsk *x, int i);
void inart_xsk_mac(const struct inart_xsk *x, int i, uint8_t mac[6]);
int inart_xsk_recv(struct inart_xsk *x, int i, uint8_t **data, uint16_t *len, int max);
int inart_xsk_queue(struct inart_xsk *x, int i, const uint8_t *frame, size_t len);
int inart_xsk_pending(const struct inart_xsk *x, int i);
int inart_xsk_flush(struct inart_xsk *x, int i);
int inart_xsk_clear_error(struct inart_xsk *x, int i);
void inart_xsk_stats(struct inart_xsk *x, int i, struct inart_afp_stats *st);

/* The program's view of port i: its MAC, the peer's (NULL: not known; no
 * forwarding out of i in the kernel), the host address of ingress filtering
 * (host order, 0: none), fwd 0 to keep every frame out of i in user space
 * (emulated losses).  0 or -errno. */
int inart_xsk_sync_port(struct inart_xsk *x, int i, const uint8_t mac[6], const uint8_t *peer_mac,
			uint32_t peer_ip, int fwd);
/* The switch's own addresses (host order; 0 skipped): replaces the set. */
int inart_xsk_sync_own_ips(struct inart_xsk *x, const uint32_t *ips, int n);
/* The routes: the trie becomes r[0..n) (new ones added first, then stale
 * ones deleted).  0 or -errno (err: which route). */
int inart_xsk_sync_routes(struct inart_xsk *x, const struct inart_route *r, int n,
			  struct inart_err *err);
/* --agg kernel (io/xagg): the program's CPUMAP of aggregation CPUs (its
 * descriptor: the aggregation program's skeleton reuses it), its program
 * array (entry 0: the aggregation program run on the receiving CPU), and
 * the CPUs cpus[0..n_cpus) InArt frames are steered over (n_cpus 0: none,
 * they go up; any 0: no label is the kernel's, the same).  0 or -errno. */
int inart_xsk_agg_map_fd(const struct inart_xsk *x);
int inart_xsk_agg_prog_fd(const struct inart_xsk *x);
int inart_xsk_agg_steer(struct inart_xsk *x, int n_cpus, const int *cpus, int any);
/* The program's counters summed over CPUs, since open: c[INART_XDP_N_CTRS]
 * (xdp_switch.h).  0 or -errno. */
int inart_xsk_counters(const struct inart_xsk *x, uint64_t *c);

#endif
