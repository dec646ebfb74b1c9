/*
 * port: one switch port whatever its back end -- an AF_PACKET / UDP socket
 * (io/afpacket: ring, mmsg, udp) or port idx of an AF_XDP set (io/xsk:
 * xdp).  The calls are io/afpacket's, with the same meaning; the daemon's
 * packet loop is written once against them.  Header-only: a branch per
 * call.  The port does not own its afp or its set (the daemon does).
 */
#ifndef INART_PORT_H
#define INART_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "io/afpacket.h"
#include "io/xsk.h"

struct inart_port {
	struct inart_afp *afp; /* or: */
	struct inart_xsk *xsk; /* with */
	int idx;
};

static inline int inart_port_fd(const struct inart_port *p)
{
	return p->xsk ? inart_xsk_fd(p->xsk, p->idx) : inart_afp_fd(p->afp);
}

static inline int inart_port_recv(struct inart_port *p, uint8_t **data, uint16_t *len, int max)
{
	return p->xsk ? inart_xsk_recv(p->xsk, p->idx, data, len, max)
		      : inart_afp_recv(p->afp, data, len, max);
}

static inline int inart_port_queue(struct inart_port *p, const uint8_t *frame, size_t len)
{
	return p->xsk ? inart_xsk_queue(p->xsk, p->idx, frame, len)
		      : inart_afp_queue(p->afp, frame, len);
}

static inline int inart_port_pending(const struct inart_port *p)
{
	return p->xsk ? inart_xsk_pending(p->xsk, p->idx) : inart_afp_pending(p->afp);
}

static inline int inart_port_flush(struct inart_port *p)
{
	return p->xsk ? inart_xsk_flush(p->xsk, p->idx) : inart_afp_flush(p->afp);
}

static inline int inart_port_clear_error(struct inart_port *p)
{
	return p->xsk ? inart_xsk_clear_error(p->xsk, p->idx) : inart_afp_clear_error(p->afp);
}

static inline void inart_port_stats(struct inart_port *p, struct inart_afp_stats *st)
{
	if (p->xsk)
		inart_xsk_stats(p->xsk, p->idx, st);
	else
		inart_afp_stats(p->afp, st);
}

static inline void inart_port_mac(const struct inart_port *p, uint8_t mac[6])
{
	if (p->xsk)
		inart_xsk_mac(p->xsk, p->idx, mac);
	else
		inart_afp_mac(p->afp, mac);
}

/* The back end: INART_AFP_XDP, or the afp's mode. */
static inline enum inart_afp_mode inart_port_mode(const struct inart_port *p)
{
	return p->xsk ? INART_AFP_XDP : inart_afp_mode(p->afp);
}

#endif
