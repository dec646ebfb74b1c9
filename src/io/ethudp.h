/*
 * ethudp: a host's UDP datagrams (one IPv4 address and UDP port, the PS's or
 * a worker's) carried as Ethernet frames on an io/afpacket port, instead of
 * through the kernel's IP stack.  With the afpacket `udp` back end
 * ("LPORT:PPORT": frames over loopback UDP) a host talks to a switchd
 * running `--io udp` without any privilege: the frames are the ones a real
 * link would carry, so the switch core forwards and aggregates them as on
 * real interfaces.  The PS daemon uses it as its frame back end (psd.h) and
 * the daemon tests drive worker cores over it.
 *
 * Receive: every frame is parsed (dp/pkt: no length trusted); IPv4/UDP
 * frames to our address and port become datagrams (peer = their source),
 * anything else is dropped and counted.  The source MAC of the last frame
 * accepted is the next hop of everything sent (a host has one link); until
 * one arrives frames go to the broadcast address.  No ARP: a switch takes
 * a host's MAC from the deployment or learns it from the host's frames.
 *
 * Send: each datagram becomes one frame (UDP checksum 0, IPv4 checksum set)
 * copied into the port's transmit queue; a full queue is back-pressure
 * (inart_ethudp_send returns how many were taken).
 *
 * Ownership: the port owns its buffers; datagrams returned by
 * inart_ethudp_recv point into its frames until the next recv.
 */
#ifndef INART_ETHUDP_H
#define INART_ETHUDP_H

#include <stdint.h>

#include "dp/dgram.h"
#include "inart/inart.h"
#include "io/afpacket.h"

struct inart_ethudp_cfg {
	const char *port;	  /* the io/afpacket port name (udp: "LPORT:PPORT") */
	struct inart_afp_opt afo; /* its options (batch 1..1024) */
	uint32_t ip;		  /* our address (host order, not 0) */
	uint16_t udp_port;	  /* our UDP port */
	uint8_t mac[6];		  /* our MAC; all zero: the port's own */
};

struct inart_ethudp_stats {
	uint64_t rx, tx;  /* datagrams received, sent (queued) */
	uint64_t dropped; /* frames not for our address and port, or malformed */
};

struct inart_ethudp;

/* Open c->port.  NULL + errno, err says why. */
struct inart_ethudp *inart_ethudp_open(const struct inart_ethudp_cfg *c, struct inart_err *err);

/* A frame device that is not an io/afpacket port (an AF_XDP socket of
 * io/xsk, a higher layer): its calls, each with io/afpacket's meaning. */
struct inart_ethudp_dev {
	void *ctx;
	int fd;		/* to poll */
	uint8_t mac[6]; /* the device's MAC (c->mac all zero: ours) */
	int (*recv)(void *ctx, uint8_t **data, uint16_t *len, int max);
	int (*queue)(void *ctx, const uint8_t *frame, size_t len);
	int (*pending)(const void *ctx);
	int (*flush)(void *ctx);
};

/* The same over dev (copied; the device stays the caller's, to close after
 * inart_ethudp_close).  c->port only names it in errors; c->afo.batch and
 * c->afo.tx_queue (frames queued at most) are used. */
struct inart_ethudp *inart_ethudp_open_dev(const struct inart_ethudp_dev *dev,
					   const struct inart_ethudp_cfg *c, struct inart_err *err);
void inart_ethudp_close(struct inart_ethudp *e);
int inart_ethudp_fd(const struct inart_ethudp *e);
/* Our MAC (the configuration's or the port's own). */
void inart_ethudp_mac(const struct inart_ethudp *e, uint8_t mac[6]);

/* Up to max (<= batch) datagrams without blocking (peer = source).  Count,
 * 0 if none, or -errno. */
int inart_ethudp_recv(struct inart_ethudp *e, struct inart_dgram *out, int max);

/* Send d[0..n) in order: how many were taken (fewer than n only when the
 * transmit queue stays full: retry the rest later, after POLLOUT). */
int inart_ethudp_send(struct inart_ethudp *e, const struct inart_dgram *d, int n);

/* Frames still queued after the last send (the device pushed back). */
int inart_ethudp_pending(const struct inart_ethudp *e);

void inart_ethudp_stats(const struct inart_ethudp *e, struct inart_ethudp_stats *st);

#endif
