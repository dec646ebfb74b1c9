/*
 * afpacket: AF_PACKET socket on one interface, batched (see afpacket.h).
 *
 * Memory: batch receive buffers (INART_AFP_BUF bytes each) with their iovecs,
 * mmsghdrs and sockaddr_ll, and a transmit queue of tx_queue buffers used as
 * a FIFO: frames [tx_head, tx_head + tx_n) modulo tx_queue are pending.
 * sendmmsg sends from the head in at most two contiguous runs.  Everything
 * is allocated at open.
 */
#include "afpacket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct inart_afp {
	int fd, ifindex, batch, txq;
	char name[IF_NAMESIZE];
	uint8_t mac[6];
	/* receive */
	uint8_t *rx_buf;
	struct iovec *rx_iov;
	struct mmsghdr *rx_msg;
	struct sockaddr_ll *rx_addr;
	/* transmit */
	uint8_t *tx_buf;
	uint16_t *tx_len;
	struct iovec *tx_iov;
	struct mmsghdr *tx_msg;
	int tx_head, tx_n;
	struct sockaddr_ll tx_addr;
	struct inart_afp_stats st;
};

void inart_afp_close(struct inart_afp *p)
{
	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p->rx_buf);
	free(p->rx_iov);
	free(p->rx_msg);
	free(p->rx_addr);
	free(p->tx_buf);
	free(p->tx_len);
	free(p->tx_iov);
	free(p->tx_msg);
	free(p);
}

static void set_buf(int fd, int opt_force, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof(bytes)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

struct inart_afp *inart_afp_open(const char *ifname, int batch, int tx_queue, struct inart_err *err)
{
	struct inart_afp *p;
	struct sockaddr_ll sll;
	struct packet_mreq mr;
	struct ifreq ifr;
	int one = 1, rc;

	if (ifname == NULL || strlen(ifname) == 0 || strlen(ifname) >= IF_NAMESIZE || batch < 1 ||
	    batch > 1024 || tx_queue < batch || tx_queue > 65536) {
		inart_err_set(err, -EINVAL, "%s: bad interface name or batch size",
			      ifname ? ifname : "(null)");
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->fd = -1;
	p->batch = batch;
	p->txq = tx_queue;
	strcpy(p->name, ifname);
	p->rx_buf = malloc((size_t)batch * INART_AFP_BUF);
	p->rx_iov = calloc((size_t)batch, sizeof(*p->rx_iov));
	p->rx_msg = calloc((size_t)batch, sizeof(*p->rx_msg));
	p->rx_addr = calloc((size_t)batch, sizeof(*p->rx_addr));
	p->tx_buf = malloc((size_t)tx_queue * INART_AFP_BUF);
	p->tx_len = calloc((size_t)tx_queue, sizeof(*p->tx_len));
	p->tx_iov = calloc((size_t)tx_queue, sizeof(*p->tx_iov));
	p->tx_msg = calloc((size_t)tx_queue, sizeof(*p->tx_msg));
	if (!p->rx_buf || !p->rx_iov || !p->rx_msg || !p->rx_addr || !p->tx_buf || !p->tx_len ||
	    !p->tx_iov || !p->tx_msg) {
		rc = ENOMEM;
		inart_err_set(err, -rc, "%s: out of memory", ifname);
		goto fail;
	}
	p->ifindex = (int)if_nametoindex(ifname);
	if (p->ifindex == 0) {
		rc = errno ? errno : ENODEV;
		inart_err_set(err, -rc, "%s: no such interface", ifname);
		goto fail;
	}
	/* protocol 0 at creation: no frames until bound to the interface */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		rc = errno;
		inart_err_set(err, -rc, "%s: AF_PACKET socket: %s (needs CAP_NET_RAW)", ifname,
			      strerror(rc));
		goto fail;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = p->ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "%s: bind: %s", ifname, strerror(rc));
		goto fail;
	}
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = p->ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "%s: promiscuous mode: %s", ifname, strerror(rc));
		goto fail;
	}
	/* best effort: older kernels filter by packet type below */
	setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	set_buf(p->fd, SO_RCVBUFFORCE, SO_RCVBUF, 8 << 20);
	set_buf(p->fd, SO_SNDBUFFORCE, SO_SNDBUF, 4 << 20);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(p->fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
	for (int i = 0; i < batch; i++) {
		p->rx_iov[i].iov_base = p->rx_buf + (size_t)i * INART_AFP_BUF;
		p->rx_iov[i].iov_len = INART_AFP_BUF;
		p->rx_msg[i].msg_hdr.msg_iov = &p->rx_iov[i];
		p->rx_msg[i].msg_hdr.msg_iovlen = 1;
		p->rx_msg[i].msg_hdr.msg_name = &p->rx_addr[i];
		p->rx_msg[i].msg_hdr.msg_namelen = sizeof(p->rx_addr[i]);
	}
	p->tx_addr.sll_family = AF_PACKET;
	p->tx_addr.sll_ifindex = p->ifindex;
	p->tx_addr.sll_halen = 6;
	for (int i = 0; i < tx_queue; i++) {
		p->tx_iov[i].iov_base = p->tx_buf + (size_t)i * INART_AFP_BUF;
		p->tx_msg[i].msg_hdr.msg_iov = &p->tx_iov[i];
		p->tx_msg[i].msg_hdr.msg_iovlen = 1;
		p->tx_msg[i].msg_hdr.msg_name = &p->tx_addr;
		p->tx_msg[i].msg_hdr.msg_namelen = sizeof(p->tx_addr);
	}
	return p;
fail:
	inart_afp_close(p);
	errno = rc;
	return NULL;
}

int inart_afp_fd(const struct inart_afp *p)
{
	return p->fd;
}

const char *inart_afp_name(const struct inart_afp *p)
{
	return p->name;
}

void inart_afp_mac(const struct inart_afp *p, uint8_t mac[6])
{
	memcpy(mac, p->mac, 6);
}

int inart_afp_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max)
{
	int n, k = 0;

	if (max > p->batch)
		max = p->batch;
	if (max <= 0)
		return 0;
	for (int i = 0; i < max; i++) {
		p->rx_msg[i].msg_hdr.msg_namelen = sizeof(p->rx_addr[i]);
		p->rx_msg[i].msg_hdr.msg_flags = 0;
	}
	n = recvmmsg(p->fd, p->rx_msg, (unsigned)max, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	p->st.rx_calls++;
	for (int i = 0; i < n; i++) {
		unsigned l = p->rx_msg[i].msg_len;

		if (p->rx_addr[i].sll_pkttype == PACKET_OUTGOING)
			continue;
		if (l > INART_AFP_BUF || (p->rx_msg[i].msg_hdr.msg_flags & MSG_TRUNC)) {
			p->st.rx_trunc++;
			continue;
		}
		data[k] = p->rx_iov[i].iov_base;
		len[k] = (uint16_t)l;
		p->st.rx++;
		p->st.rx_bytes += l;
		k++;
	}
	return k;
}

int inart_afp_queue(struct inart_afp *p, const uint8_t *frame, size_t len)
{
	int i;

	if (p->tx_n == p->txq || len > INART_AFP_BUF) {
		p->st.tx_drops++;
		return -ENOBUFS;
	}
	i = (p->tx_head + p->tx_n) % p->txq;
	memcpy(p->tx_buf + (size_t)i * INART_AFP_BUF, frame, len);
	p->tx_len[i] = (uint16_t)len;
	p->tx_n++;
	return 0;
}

int inart_afp_pending(const struct inart_afp *p)
{
	return p->tx_n;
}

int inart_afp_flush(struct inart_afp *p)
{
	while (p->tx_n > 0) {
		int run = p->txq - p->tx_head, n;

		if (run > p->tx_n)
			run = p->tx_n;
		if (run > p->batch)
			run = p->batch;
		for (int i = 0; i < run; i++) {
			int j = p->tx_head + i;

			p->tx_iov[j].iov_len = p->tx_len[j];
			/* the destination MAC is in the frame; sll_addr is not used
			   by SOCK_RAW sends but kept consistent */
			p->tx_msg[j].msg_hdr.msg_flags = 0;
		}
		n = sendmmsg(p->fd, &p->tx_msg[p->tx_head], (unsigned)run, MSG_DONTWAIT);
		p->st.tx_calls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS || errno == EAGAIN || errno == EWOULDBLOCK) {
				p->st.tx_blocked++;
				return p->tx_n;
			}
			/* a frame the kernel refuses (e.g. too long for the MTU, link
			   down): drop it so the queue moves on */
			p->st.tx_errors++;
			n = 1;
		} else {
			for (int i = 0; i < n; i++) {
				p->st.tx++;
				p->st.tx_bytes += p->tx_len[p->tx_head + i];
			}
		}
		p->tx_head = (p->tx_head + n) % p->txq;
		p->tx_n -= n;
	}
	p->tx_head = 0;
	return 0;
}

void inart_afp_stats(const struct inart_afp *p, struct inart_afp_stats *st)
{
	*st = p->st;
}
