/*
 * udp: batched UDP socket for the PS and worker shells (see udp.h).
 *
 * Memory: a receive ring of batch buffers of INART_DGRAM_MAX + 1 bytes (one
 * spare byte tells an oversized datagram, which is dropped), with iovecs,
 * mmsghdrs and peer addresses; transmit mmsghdrs for one batch pointing at
 * the caller's datagrams.  All allocated at open.
 *
 * Shards (inart_udp_open_shards): n sockets in one SO_REUSEPORT group with
 * io/fanout's classic BPF program attached (SO_ATTACH_REUSEPORT_CBPF, loads
 * from the network header): the kernel returns dp/shard's shard of each
 * datagram, the index of the socket in the order they were bound.
 */
#include "io/udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "common/file.h"
#include "common/slab.h"
#include "dp/shard.h"
#include "io/fanout.h"
#include "io/mmsg.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

#define RX_BUF (INART_DGRAM_MAX + 1)

struct inart_udp {
	int fd, batch;
	uint8_t *rx_buf;
	struct iovec *rx_iov, *tx_iov;
	struct mmsghdr *rx_msg, *tx_msg;
	struct sockaddr_in *rx_addr, *tx_addr; /* the arrays: in u's own block (lay_out) */
};

void inart_udp_close(struct inart_udp *u)
{
	if (u == NULL)
		return;
	inart_fd_close(u->fd);
	free(u); /* and the batch arrays */
}

static void set_buf(int fd, int opt_force, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof(bytes)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

/* The batch arrays, in one block with the struct (inart_slab_new), batch
 * entries each: receive buffers (RX_BUF bytes each), rx and tx iovecs,
 * messages and addresses. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_udp *u = obj;
	size_t n = (size_t)u->batch;

	u->rx_buf = inart_slab_take(s, n, RX_BUF);
	u->rx_iov = inart_slab_take(s, n, sizeof(*u->rx_iov));
	u->tx_iov = inart_slab_take(s, n, sizeof(*u->tx_iov));
	u->rx_msg = inart_slab_take(s, n, sizeof(*u->rx_msg));
	u->tx_msg = inart_slab_take(s, n, sizeof(*u->tx_msg));
	u->rx_addr = inart_slab_take(s, n, sizeof(*u->rx_addr));
	u->tx_addr = inart_slab_take(s, n, sizeof(*u->tx_addr));
}

/* The socket on ip:port; reuse: with SO_REUSEPORT (a shard group). */
static struct inart_udp *open_one(uint32_t ip, uint16_t port, int batch, int reuse,
				  struct inart_err *err)
{
	static const int one = 1;
	struct inart_udp *u, proto = {.fd = -1, .batch = batch};
	struct sockaddr_in a;
	char ips[INET_ADDRSTRLEN];
	int rc;

	if (batch < 1 || batch > 1024) {
		inart_err_set(err, -EINVAL, "udp: batch %d out of range 1..1024", batch);
		return inart_null_errno(EINVAL);
	}
	u = inart_slab_new(&proto, sizeof(proto), lay_out);
	if (u == NULL) {
		inart_err_set(err, -ENOMEM, "udp: out of memory");
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(ip);
	inet_ntop(AF_INET, &a.sin_addr, ips, sizeof(ips));
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		rc = errno;
		inart_err_set(err, -rc, "udp socket: %s", strerror(rc));
		goto fail;
	}
	set_buf(u->fd, SO_RCVBUFFORCE, SO_RCVBUF, 8 << 20);
	set_buf(u->fd, SO_SNDBUFFORCE, SO_SNDBUF, 4 << 20);
	if (reuse && setsockopt(u->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "udp SO_REUSEPORT: %s", strerror(rc));
		goto fail;
	}
	if (bind(u->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "bind %s:%u: %s%s", ips, port, strerror(rc),
			      rc == EADDRNOTAVAIL ? " (the address is not on this host)" : "");
		goto fail;
	}
	inart_mmsg_rx_init(u->rx_msg, u->rx_iov, u->rx_buf, RX_BUF, u->rx_addr, sizeof(*u->rx_addr),
			   batch);
	for (int i = 0; i < batch; i++) {
		u->tx_msg[i].msg_hdr.msg_iov = &u->tx_iov[i];
		u->tx_msg[i].msg_hdr.msg_iovlen = 1;
		u->tx_msg[i].msg_hdr.msg_name = &u->tx_addr[i];
		u->tx_msg[i].msg_hdr.msg_namelen = sizeof(u->tx_addr[i]);
		u->tx_addr[i].sin_family = AF_INET;
	}
	return u;
fail:
	inart_udp_close(u);
	return inart_null_errno(rc);
}

struct inart_udp *inart_udp_open(uint32_t ip, uint16_t port, int batch, struct inart_err *err)
{
	return open_one(ip, port, batch, 0, err);
}

int inart_udp_open_shards(uint32_t ip, uint16_t port, int batch, int n, struct inart_udp **out,
			  struct inart_err *err)
{
	struct sock_filter f[INART_FANOUT_PROG_MAX];
	struct sock_fprog prog;
	struct inart_udp *probe;
	int len, rc = 0;

	if (n < 2 || n > INART_SHARD_MAX)
		return inart_err_set(err, -EINVAL, "udp: %d shards (2..%d)", n, INART_SHARD_MAX);
	/* a plain bind first: the group must not join sockets someone else
	   holds on ip:port (another PS of the same user) */
	probe = open_one(ip, port, 1, 0, err);
	if (probe == NULL)
		return -errno;
	inart_udp_close(probe);
	for (int k = 0; k < n; k++)
		out[k] = NULL;
	for (int k = 0; k < n && rc == 0; k++) {
		out[k] = open_one(ip, port, batch, 1, err);
		if (out[k] == NULL)
			rc = -errno;
	}
	len = inart_fanout_prog(n, SKF_NET_OFF, f, INART_FANOUT_PROG_MAX);
	if (rc == 0 && len < 0)
		rc = inart_err_set(err, len, "udp: steering program for %d shards", n);
	prog = (struct sock_fprog){(unsigned short)(len > 0 ? len : 0), f};
	if (rc == 0 &&
	    setsockopt(out[0]->fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		rc = inart_err_set(err, -errno, "udp: SO_ATTACH_REUSEPORT_CBPF: %s",
				   strerror(errno));
	for (int k = 0; rc < 0 && k < n; k++) {
		inart_udp_close(out[k]);
		out[k] = NULL;
	}
	return rc;
}

int inart_udp_fd(const struct inart_udp *u)
{
	return u->fd;
}

int inart_udp_recv(struct inart_udp *u, struct inart_dgram *out, int max)
{
	int n, k = 0;

	if (max > u->batch)
		max = u->batch;
	if (max <= 0)
		return 0;
	inart_mmsg_rx_rearm(u->rx_msg, sizeof(*u->rx_addr), max);
	n = recvmmsg(u->fd, u->rx_msg, (unsigned)max, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		unsigned l = u->rx_msg[i].msg_len;

		if (l > INART_DGRAM_MAX)
			continue; /* not ours: INA datagrams fit the MTU */
		out[k].peer_ip = ntohl(u->rx_addr[i].sin_addr.s_addr);
		out[k].peer_port = ntohs(u->rx_addr[i].sin_port);
		out[k].len = (uint16_t)l;
		out[k].data = u->rx_iov[i].iov_base;
		k++;
	}
	return k;
}

int inart_udp_send(struct inart_udp *u, const struct inart_dgram *d, int n)
{
	int done = 0;

	while (done < n) {
		int run = n - done < u->batch ? n - done : u->batch, r;

		for (int i = 0; i < run; i++) {
			const struct inart_dgram *g = &d[done + i];

			u->tx_addr[i].sin_addr.s_addr = htonl(g->peer_ip);
			u->tx_addr[i].sin_port = htons(g->peer_port);
			u->tx_iov[i].iov_base = g->data;
			u->tx_iov[i].iov_len = g->len;
		}
		r = sendmmsg(u->fd, u->tx_msg, (unsigned)run, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				return done;
			done++; /* hard error (unreachable, ...): drop this one */
			continue;
		}
		done += r;
	}
	return done;
}
