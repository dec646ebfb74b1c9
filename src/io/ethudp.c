/*
 * ethudp: UDP datagrams as Ethernet frames on an afpacket port (ethudp.h).
 * The port (io/afpacket, or another device's calls: inart_ethudp_open_dev)
 * owns the frame buffers; here a receive batch's
 * arrays and one frame's worth of scratch to build a frame in, all in the
 * struct: nothing is allocated per datagram.
 */
#include "io/ethudp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dp/pkt.h"

#define MAX_BATCH 1024

struct inart_ethudp {
	struct inart_afp *p; /* owned (inart_ethudp_open), or NULL */
	struct inart_ethudp_dev d;
	uint32_t ip;
	uint16_t udp_port;
	int batch, txq;
	uint8_t mac[6], gw[6]; /* ours; the next hop (learned; broadcast until then) */
	struct inart_ethudp_stats st;
	uint8_t *data[MAX_BATCH];
	uint16_t len[MAX_BATCH];
	uint8_t frame[INART_AFP_BUF];
};

static int afp_recv(void *p, uint8_t **data, uint16_t *len, int max)
{
	return inart_afp_recv(p, data, len, max);
}

static int afp_queue(void *p, const uint8_t *frame, size_t len)
{
	return inart_afp_queue(p, frame, len);
}

static int afp_pending(const void *p)
{
	return inart_afp_pending(p);
}

static int afp_flush(void *p)
{
	return inart_afp_flush(p);
}

struct inart_ethudp *inart_ethudp_open_dev(const struct inart_ethudp_dev *dev,
					   const struct inart_ethudp_cfg *c, struct inart_err *err)
{
	struct inart_ethudp *e;

	if (c->ip == 0 || c->afo.batch < 1 || c->afo.batch > MAX_BATCH) {
		inart_err_set(err, -EINVAL, "%s: frames need an address and a batch in 1..%d",
			      c->port ? c->port : "(null)", MAX_BATCH);
		return inart_null_errno(EINVAL);
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		inart_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	e->d = *dev;
	e->ip = c->ip;
	e->udp_port = c->udp_port;
	e->batch = c->afo.batch;
	e->txq = c->afo.tx_queue;
	memcpy(e->mac, inart_mac_is_zero(c->mac) ? dev->mac : c->mac, 6);
	memset(e->gw, 0xff, 6);
	return e;
}

struct inart_ethudp *inart_ethudp_open(const struct inart_ethudp_cfg *c, struct inart_err *err)
{
	struct inart_ethudp_dev d = {
	    .recv = afp_recv, .queue = afp_queue, .pending = afp_pending, .flush = afp_flush};
	struct inart_ethudp *e;
	int rc;

	if (c->ip == 0 || c->afo.batch < 1 || c->afo.batch > MAX_BATCH)
		return inart_ethudp_open_dev(&d, c, err); /* says why */
	d.ctx = inart_afp_open(c->port, &c->afo, err);
	if (d.ctx == NULL)
		return NULL;
	d.fd = inart_afp_fd(d.ctx);
	inart_afp_mac(d.ctx, d.mac);
	e = inart_ethudp_open_dev(&d, c, err);
	if (e == NULL) {
		rc = errno;
		inart_afp_close(d.ctx);
		return inart_null_errno(rc);
	}
	e->p = d.ctx;
	return e;
}

void inart_ethudp_close(struct inart_ethudp *e)
{
	if (e == NULL)
		return;
	inart_afp_close(e->p);
	free(e);
}

int inart_ethudp_fd(const struct inart_ethudp *e)
{
	return e->d.fd;
}

void inart_ethudp_mac(const struct inart_ethudp *e, uint8_t mac[6])
{
	memcpy(mac, e->mac, 6);
}

int inart_ethudp_recv(struct inart_ethudp *e, struct inart_dgram *out, int max)
{
	int n, k = 0;

	if (max > e->batch)
		max = e->batch;
	n = e->d.recv(e->d.ctx, e->data, e->len, max);
	for (int i = 0; i < n; i++) {
		struct inart_pkt_info pi;

		if (inart_pkt_parse(e->data[i], e->len[i], &pi) < 0 ||
		    pi.ethertype != INART_ETHERTYPE_IPV4 || !pi.is_udp || pi.dst_ip != e->ip ||
		    pi.dport != e->udp_port || pi.l4_payload_len > INART_DGRAM_MAX) {
			e->st.dropped++;
			continue;
		}
		if (!(pi.src_mac[0] & 1) && !inart_mac_is_zero(pi.src_mac))
			memcpy(e->gw, pi.src_mac, 6);
		out[k].peer_ip = pi.src_ip;
		out[k].peer_port = pi.sport;
		out[k].len = (uint16_t)pi.l4_payload_len;
		out[k].data = e->data[i] + pi.l4_payload_off;
		k++;
	}
	e->st.rx += (uint64_t)k;
	return n < 0 ? n : k;
}

int inart_ethudp_send(struct inart_ethudp *e, const struct inart_dgram *d, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t len;

		if (e->d.pending(e->d.ctx) >= e->txq && e->d.flush(e->d.ctx) >= e->txq)
			break; /* the device pushed back and the queue is full */
		len = inart_pkt_build_udp(e->frame, sizeof(e->frame), e->mac, e->gw, e->ip,
					  d[i].peer_ip, e->udp_port, d[i].peer_port, d[i].data,
					  d[i].len);
		if (len > 0 && e->d.queue(e->d.ctx, e->frame, len) == 0)
			e->st.tx++;
	}
	if (e->d.pending(e->d.ctx) > 0)
		e->d.flush(e->d.ctx);
	return i;
}

int inart_ethudp_pending(const struct inart_ethudp *e)
{
	return e->d.pending(e->d.ctx);
}

void inart_ethudp_stats(const struct inart_ethudp *e, struct inart_ethudp_stats *st)
{
	*st = e->st;
}
