/*
 * dgram: a UDP datagram as the sans-I/O PS and worker cores see it.  The core
 * fills caller-provided buffers (data points at INART_DGRAM_MAX bytes owned
 * by the caller); the I/O shell (sockets, or the simulated fabric) sends
 * them.  Addresses are IPv4 in host byte order.
 */
#ifndef INART_DGRAM_H
#define INART_DGRAM_H

#include <stdint.h>

#define INART_DGRAM_MAX 1472 /* IP MTU 1500 - IPv4 - UDP headers */

struct inart_dgram {
	uint32_t peer_ip;   /* destination (out) or source (in) */
	uint16_t peer_port; /* destination (out) or source (in) */
	uint16_t len;
	uint8_t *data;
};

#endif
