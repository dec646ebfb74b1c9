/*
 * afpacket: raw Ethernet frames on a named interface through an AF_PACKET
 * socket, for switchd.  Two back ends, nothing allocated per frame:
 *
 *   ring  (default) PACKET_MMAP rings, TPACKET_V2: the kernel writes received
 *         frames into a receive ring shared with us (no receive system call,
 *         the copy is done in the sender's softirq); queued frames are
 *         written into a transmit ring and handed over with one send() per
 *         flush, which attaches the ring's pages to the socket buffers
 *         instead of copying them.  A transmit frame is free again once the
 *         kernel released its buffer.
 *   mmsg  recvmmsg into preallocated buffers, sendmmsg from a preallocated
 *         transmit queue (one copy each way, one system call per batch).
 *
 * INART_AFP_AUTO tries the ring and falls back to mmsg if the kernel refuses
 * the ring (inart_afp_mode tells which one is in use).
 *
 *   udp   no interface and no privilege (tests): the same Ethernet frames,
 *         one per UDP datagram, between 127.0.0.1:LPORT (bound) and
 *         127.0.0.1:PPORT (connected), the port named "LPORT:PPORT"; the
 *         mmsg code path.  Its MAC is 02:00:7f:00:LPORT (big-endian).
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
 * Ownership: the socket owns its buffers and rings; frames returned by
 * inart_afp_recv point into them and stay valid until the next recv.
 */
#ifndef INART_AFPACKET_H
#define INART_AFPACKET_H

#include <stddef.h>
#include <stdint.h>

#include "inart/inart.h"

#define INART_AFP_BUF 2048 /* bytes per frame buffer (MTU 1500 + headers) */

/* INART_AFP_XDP names the AF_XDP back end (io/xsk, through io/port.h):
 * inart_afp_open refuses it, the names below know it. */
enum inart_afp_mode {
	INART_AFP_AUTO,
	INART_AFP_RING,
	INART_AFP_MMSG,
	INART_AFP_UDP,
	INART_AFP_XDP
};

struct inart_afp_opt {
	enum inart_afp_mode mode;
	int batch;     /* frames per receive call / per sendmmsg, 1..1024 */
	int tx_queue;  /* mmsg: transmit queue frames, batch..65536 */
	int rx_frames; /* ring: receive ring frames, 64..65536 */
	int tx_frames; /* ring: transmit ring frames, batch..65536; a frame is busy
			  until the kernel frees its buffer (after delivery) */
};

/* batch 64, tx_queue 512, rx_frames 4096, tx_frames 2048, mode AUTO */
void inart_afp_opt_default(struct inart_afp_opt *o);

struct inart_afp_stats {
	uint64_t rx, rx_bytes, rx_trunc, rx_calls;
	uint64_t rx_kernel_drops; /* frames the kernel dropped: ring or buffer full */
	uint64_t tx, tx_bytes, tx_calls;
	uint64_t tx_blocked; /* flushes cut short by ENOBUFS / EAGAIN */
	uint64_t tx_drops;   /* frames refused: transmit queue full */
	uint64_t tx_errors;  /* frames refused by the kernel for another reason */
};

struct inart_afp;

/* Open on ifname (opt NULL: defaults).  NULL + errno, err says why. */
struct inart_afp *inart_afp_open(const char *ifname, const struct inart_afp_opt *opt,
				 struct inart_err *err);
void inart_afp_close(struct inart_afp *p);
/* Whether name can be opened with the back end mode, without opening it:
 * an interface that exists (AF_PACKET), "LPORT:PPORT" (udp).  0 or -errno
 * (err says why). */
int inart_afp_check_name(const char *name, enum inart_afp_mode mode, struct inart_err *err);

int inart_afp_fd(const struct inart_afp *p);
/* The back end in use: INART_AFP_RING or INART_AFP_MMSG; its name. */
enum inart_afp_mode inart_afp_mode(const struct inart_afp *p);
const char *inart_afp_mode_name(enum inart_afp_mode m);
/* The back end named name (inart_afp_mode_name) into *m: 0, or -EINVAL. */
int inart_afp_mode_parse(const char *name, enum inart_afp_mode *m);
const char *inart_afp_name(const struct inart_afp *p);
/* The interface's own MAC address. */
void inart_afp_mac(const struct inart_afp *p, uint8_t mac[6]);

/* Receive up to max (<= batch) frames without blocking; data[i] and len[i]
 * describe frame i; they stay valid until the next recv on p (ring: the
 * frames are given back to the kernel then).  Returns the count (0 if none)
 * or -errno. */
int inart_afp_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max);

/* Copy one frame into the transmit queue.  0, or -ENOBUFS if the queue is
 * full (the frame is dropped and counted). */
int inart_afp_queue(struct inart_afp *p, const uint8_t *frame, size_t len);
/* Frames waiting in the transmit queue. */
int inart_afp_pending(const struct inart_afp *p);
/* Send queued frames (sendmmsg).  Returns frames still pending (0: all
 * sent; > 0: the device pushed back, poll for POLLOUT or retry soon). */
int inart_afp_flush(struct inart_afp *p);

/* Read and clear the socket's pending error (SO_ERROR; e.g. ENETDOWN after
 * the interface went down).  In ring mode nothing else reads it, and poll()
 * would report POLLERR for ever.  Returns the error (0 if none). */
int inart_afp_clear_error(struct inart_afp *p);

/* Counters since open (reads and accumulates the kernel's drop counter). */
void inart_afp_stats(struct inart_afp *p, struct inart_afp_stats *st);

#endif
