/*
 * afpacket: raw Ethernet frames on a named interface through an AF_PACKET
 * socket, for switchd.  Batched: recvmmsg into a ring of preallocated
 * buffers owned by the socket, sendmmsg from a preallocated transmit queue;
 * nothing is allocated per frame.
 *
 * The socket is bound to one interface (ETH_P_ALL), in promiscuous mode (the
 * switch answers for the port MACs of its configuration, which need not be
 * the interface's own), ignores frames it sent itself (PACKET_IGNORE_OUTGOING
 * and the packet type), and is non-blocking.  PACKET_QDISC_BYPASS is NOT set:
 * frames go through the interface's queueing discipline like any other.
 * A full device queue (ENOBUFS or EAGAIN from sendmmsg) is back-pressure:
 * the frames stay queued for the next flush and tx_blocked is counted; a
 * frame that finds the transmit queue itself full is dropped (tx_drops).
 *
 * Frames larger than the receive buffer (GSO/GRO super-frames: disable
 * offloads on the peers, `ethtool -K IF tx off`) are dropped and counted.
 *
 * Ownership: the socket owns its buffers; frames returned by
 * inart_afp_recv point into them and stay valid until the next recv.
 */
#ifndef INART_AFPACKET_H
#define INART_AFPACKET_H

#include <stddef.h>
#include <stdint.h>

#include "inart/inart.h"

#define INART_AFP_BUF 2048 /* bytes per frame buffer (MTU 1500 + headers) */

struct inart_afp_stats {
	uint64_t rx, rx_bytes, rx_trunc, rx_calls;
	uint64_t tx, tx_bytes, tx_calls;
	uint64_t tx_blocked; /* flushes cut short by ENOBUFS / EAGAIN */
	uint64_t tx_drops;   /* frames refused: transmit queue full */
	uint64_t tx_errors;  /* frames refused by the kernel for another reason */
};

struct inart_afp;

/* Open on ifname with batches of `batch` frames (receive ring and transmit
 * queue of tx_queue frames).  NULL + errno, err says why. */
struct inart_afp *inart_afp_open(const char *ifname, int batch, int tx_queue,
				 struct inart_err *err);
void inart_afp_close(struct inart_afp *p);

int inart_afp_fd(const struct inart_afp *p);
const char *inart_afp_name(const struct inart_afp *p);
/* The interface's own MAC address. */
void inart_afp_mac(const struct inart_afp *p, uint8_t mac[6]);

/* Receive up to max (<= batch) frames without blocking; data[i] and len[i]
 * describe frame i.  Returns the count (0 if none) or -errno. */
int inart_afp_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max);

/* Copy one frame into the transmit queue.  0, or -ENOBUFS if the queue is
 * full (the frame is dropped and counted). */
int inart_afp_queue(struct inart_afp *p, const uint8_t *frame, size_t len);
/* Frames waiting in the transmit queue. */
int inart_afp_pending(const struct inart_afp *p);
/* Send queued frames (sendmmsg).  Returns frames still pending (0: all
 * sent; > 0: the device pushed back, poll for POLLOUT or retry soon). */
int inart_afp_flush(struct inart_afp *p);

void inart_afp_stats(const struct inart_afp *p, struct inart_afp_stats *st);

#endif
