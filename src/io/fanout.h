/*
 * fanout: the kernel half of shard steering (dp/shard) for AF_PACKET
 * sockets.  N sockets on one interface join one PACKET_FANOUT group of type
 * PACKET_FANOUT_CBPF; the group's classic BPF program computes
 * inart_shard_steer of each received frame, so socket k (the k-th to join)
 * receives exactly the frames of shard k.
 *
 * Why classic BPF: PACKET_FANOUT_CPU would follow the sending CPU (veth
 * receives on the sender's CPU), which sends the contributions of one chunk
 * from different senders to different sockets; PACKET_FANOUT_HASH hashes
 * the flow (addresses, ports), which splits a chunk's contributions too.
 * Only a program that reads the INA header can keep a slot on one shard.
 * A classic program needs no libbpf, no bpf() system call and no privilege
 * beyond the socket's own (CAP_NET_RAW), and computes the function in a
 * few dozen instructions; an eBPF program (PACKET_FANOUT_EBPF) would do
 * the same with more machinery.
 *
 * The program (inart_fanout_prog) addresses the packet from its network
 * header (at a base offset: 0 for a fanout group, where the packet starts
 * at the IPv4 header; SKF_NET_OFF for programs that run elsewhere, e.g.
 * SO_ATTACH_REUSEPORT_CBPF in tests), reads the ethertype from skb->protocol
 * and relies on classic BPF returning 0 when a load runs past the packet
 * (shard.h says where the function answers 0).
 *
 * Frames the sockets send are not seen by the group
 * (PACKET_FANOUT_FLAG_IGNORE_OUTGOING).  Member order: the kernel indexes
 * a group's sockets in the order they joined, and compacts the array when
 * one leaves (so all of a group's sockets are closed together).
 */
#ifndef INART_IO_FANOUT_H
#define INART_IO_FANOUT_H

#include <stdint.h>

#include <linux/filter.h>

#include "common/err.h"

#define INART_FANOUT_PROG_MAX 64

/* The steering program for n shards (1..INART_SHARD_MAX) with loads at
 * base + offset from the network header: its length, or -EINVAL. */
int inart_fanout_prog(int n, int32_t base, struct sock_filter *out, int max);

/* Join socket fd (AF_PACKET, bound to its interface) to fanout group *id
 * (*id == 0: a new group with a kernel-chosen id, written to *id).  0 or
 * -errno with err naming the interface. */
int inart_fanout_join(int fd, const char *ifname, uint16_t *id, struct inart_err *err);

/* Give the group of fd the steering program for n shards (once, after the
 * first socket joined).  0 or -errno with err. */
int inart_fanout_steer(int fd, const char *ifname, int n, struct inart_err *err);

#endif
