/*
 * udp: the UDP socket of a PS or worker (port INART_WIRE_UDP_PORT on one
 * IPv4 address), batched with recvmmsg/sendmmsg.  Receive buffers are
 * preallocated and owned by the socket; datagrams to send are the caller's
 * (the PS/worker cores' output), sent without copying.  Non-blocking: a
 * send that would block returns how many went out and the caller retries
 * (poll for POLLOUT).
 *
 * Ownership: the socket owns its receive ring; datagrams returned by
 * inart_udp_recv point into it until the next recv.
 */
#ifndef INART_UDP_H
#define INART_UDP_H

#include <stddef.h>
#include <stdint.h>

#include "dp/dgram.h"
#include "inart/inart.h"

struct inart_udp;

/* Bind ip:port (host order; ip 0 = any) with batches of `batch` datagrams.
 * NULL + errno, err says why (e.g. the address is not on this host). */
struct inart_udp *inart_udp_open(uint32_t ip, uint16_t port, int batch, struct inart_err *err);
/* n sockets (2..INART_SHARD_MAX) on ip:port into out[0..n), one
 * SO_REUSEPORT group steered by dp/shard (io/fanout's program): socket k
 * receives exactly the datagrams of shard k (inart_shard_steer of their
 * frame; what it cannot parse: shard 0).  Each socket is used as one opened
 * by inart_udp_open (close each).  0, or -errno with err and out[] all NULL
 * (EADDRINUSE: something holds ip:port already). */
int inart_udp_open_shards(uint32_t ip, uint16_t port, int batch, int n, struct inart_udp **out,
			  struct inart_err *err);
void inart_udp_close(struct inart_udp *u);
int inart_udp_fd(const struct inart_udp *u);

/* Up to max (<= batch) datagrams without blocking: out[i] gets peer, len and
 * data (pointing into the socket's ring).  Count, 0 if none, or -errno. */
int inart_udp_recv(struct inart_udp *u, struct inart_dgram *out, int max);

/* Send d[0..n) in order, batch by batch.  Returns how many were consumed:
 * sent, or dropped because the kernel refused them (e.g. no route); fewer
 * than n only when the socket buffer is full (retry the rest later). */
int inart_udp_send(struct inart_udp *u, const struct inart_dgram *d, int n);

#endif
