/*
 * afpacket: AF_PACKET socket on one interface, batched (see afpacket.h).
 *
 * mmsg back end -- memory: batch receive buffers (INART_AFP_BUF bytes each)
 * with their iovecs, mmsghdrs and sockaddr_ll, and a transmit queue of
 * tx_queue buffers used as a FIFO: frames [tx_head, tx_head + tx_n) modulo
 * tx_queue are pending.  sendmmsg sends from the head in at most two
 * contiguous runs.
 *
 * ring back end -- one mmap'ed area: rx_frames receive frames, then the
 * transmit frames, INART_AFP_BUF bytes each (TPACKET_V2 headers).  Receive:
 * frames [rx_cur, rx_cur + rx_held) were handed to the caller by the last
 * recv and go back to the kernel (TP_STATUS_KERNEL) at the next one.
 * Transmit: tx_next is the next frame to fill (it must be AVAILABLE: the
 * kernel released its buffer), frames [tx_head, tx_head + tx_n) are
 * SEND_REQUEST and not yet taken by the kernel; a send() hands them over.
 * Status words are read with acquire and written with release ordering: the
 * kernel writes the frame, then the status, and reads them in that order.
 *
 * Everything is allocated (or mapped) at open.
 */
#include "io/afpacket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "common/file.h"
#include "common/slab.h"
#include "io/mmsg.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define RING_BLOCK (1u << 16) /* ring block: 32 frames of INART_AFP_BUF */
#define FRAMES_PER_BLOCK (RING_BLOCK / INART_AFP_BUF)
/* where a transmitted frame starts inside its ring frame */
#define TX_DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

struct inart_afp {
	int fd, ifindex, batch, txq;
	enum inart_afp_mode mode;
	char name[IF_NAMESIZE];
	uint8_t mac[6];
	/* mmsg: receive */
	uint8_t *rx_buf;
	struct iovec *rx_iov;
	struct mmsghdr *rx_msg;
	struct sockaddr_ll *rx_addr;
	/* mmsg: transmit */
	uint8_t *tx_buf;
	uint16_t *tx_len;
	struct iovec *tx_iov;
	struct mmsghdr *tx_msg;
	void *mmsg_block; /* the mmsg arrays above (mmsg_lay_out) */
	struct sockaddr_ll tx_addr;
	/* both: pending transmit frames [tx_head, tx_head + tx_n) */
	int tx_head, tx_n;
	/* ring */
	uint8_t *map;
	size_t map_len;
	uint8_t *rx_ring, *tx_ring;
	int rx_frames, rx_cur, rx_held, tx_next;
	struct inart_afp_stats st;
};

void inart_afp_opt_default(struct inart_afp_opt *o)
{
	o->mode = INART_AFP_AUTO;
	o->batch = 64;
	o->tx_queue = 512;
	o->rx_frames = 4096;
	o->tx_frames = 2048;
}

const char *inart_afp_mode_name(enum inart_afp_mode m)
{
	static const char *const names[] = {[INART_AFP_AUTO] = "auto",
					    [INART_AFP_RING] = "ring",
					    [INART_AFP_MMSG] = "mmsg",
					    [INART_AFP_UDP] = "udp",
					    [INART_AFP_XDP] = "xdp"};

	return m >= INART_AFP_RING && m <= INART_AFP_XDP ? names[m] : "auto";
}

int inart_afp_mode_parse(const char *name, enum inart_afp_mode *m)
{
	for (enum inart_afp_mode k = INART_AFP_AUTO; k <= INART_AFP_XDP; k++)
		if (strcmp(name, inart_afp_mode_name(k)) == 0) {
			*m = k;
			return 0;
		}
	return -EINVAL;
}

/* The mmsg back end's arrays in one block (common/slab.h): rx (batch
 * entries each) buffers of INART_AFP_BUF bytes, iovecs, messages,
 * addresses; tx (txq entries each) buffers, lengths, iovecs, messages.  On
 * a fresh slab (the sizing pass) it sets every pointer to NULL. */
static void mmsg_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_afp *p = obj;
	size_t batch = (size_t)p->batch, txq = (size_t)p->txq;

	p->rx_buf = inart_slab_take(s, batch, INART_AFP_BUF);
	p->rx_iov = inart_slab_take(s, batch, sizeof(*p->rx_iov));
	p->rx_msg = inart_slab_take(s, batch, sizeof(*p->rx_msg));
	p->rx_addr = inart_slab_take(s, batch, sizeof(*p->rx_addr));
	p->tx_buf = inart_slab_take(s, txq, INART_AFP_BUF);
	p->tx_len = inart_slab_take(s, txq, sizeof(*p->tx_len));
	p->tx_iov = inart_slab_take(s, txq, sizeof(*p->tx_iov));
	p->tx_msg = inart_slab_take(s, txq, sizeof(*p->tx_msg));
}

static void free_bufs(struct inart_afp *p)
{
	struct inart_slab none = INART_SLAB_INIT;

	free(p->mmsg_block);
	p->mmsg_block = NULL;
	mmsg_lay_out(p, &none); /* no dangling pointers */
}

/* Undo open_socket: unmap the rings, close, free the mmsg buffers (for
 * the fallback from ring to mmsg, and at close). */
static void close_socket(struct inart_afp *p)
{
	if (p->map != NULL)
		munmap(p->map, p->map_len);
	p->map = NULL;
	inart_fd_close(p->fd);
	p->fd = -1;
	free_bufs(p);
}

void inart_afp_close(struct inart_afp *p)
{
	if (p == NULL)
		return;
	close_socket(p);
	free(p);
}

static void set_buf(int fd, int opt_force, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof(bytes)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

static int round_frames(int n)
{
	return (n + (int)FRAMES_PER_BLOCK - 1) / (int)FRAMES_PER_BLOCK * (int)FRAMES_PER_BLOCK;
}

/* Set up both rings on p->fd (before bind).  0 or -errno; on error the
 * socket must be thrown away (a half-configured ring cannot be undone). */
static int ring_setup(struct inart_afp *p, int rx_frames, int tx_frames)
{
	struct tpacket_req req;
	int v = TPACKET_V2, one = 1;
	void *m;

	p->rx_frames = round_frames(rx_frames);
	p->txq = round_frames(tx_frames);
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0)
		return -errno;
	/* a frame the kernel cannot send (bad length) is skipped, not kept */
	if (setsockopt(p->fd, SOL_PACKET, PACKET_LOSS, &one, sizeof(one)) < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = RING_BLOCK;
	req.tp_frame_size = INART_AFP_BUF;
	req.tp_block_nr = (unsigned)p->rx_frames / FRAMES_PER_BLOCK;
	req.tp_frame_nr = (unsigned)p->rx_frames;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		return -errno;
	req.tp_block_nr = (unsigned)p->txq / FRAMES_PER_BLOCK;
	req.tp_frame_nr = (unsigned)p->txq;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0)
		return -errno;
	p->map_len = (size_t)(p->rx_frames + p->txq) * INART_AFP_BUF;
	m = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	p->map = m;
	p->rx_ring = p->map;
	p->tx_ring = p->map + (size_t)p->rx_frames * INART_AFP_BUF;
	return 0;
}

static int mmsg_setup(struct inart_afp *p)
{
	int batch = p->batch, txq = p->txq;

	p->mmsg_block = inart_slab_block(p, mmsg_lay_out);
	if (p->mmsg_block == NULL)
		return -ENOMEM;
	inart_mmsg_rx_init(p->rx_msg, p->rx_iov, p->rx_buf, INART_AFP_BUF, p->rx_addr,
			   sizeof(*p->rx_addr), batch);
	p->tx_addr.sll_family = AF_PACKET;
	p->tx_addr.sll_ifindex = p->ifindex;
	p->tx_addr.sll_halen = 6;
	for (int i = 0; i < txq; i++) {
		p->tx_iov[i].iov_base = p->tx_buf + (size_t)i * INART_AFP_BUF;
		p->tx_msg[i].msg_hdr.msg_iov = &p->tx_iov[i];
		p->tx_msg[i].msg_hdr.msg_iovlen = 1;
		/* udp: connected, no address */
		p->tx_msg[i].msg_hdr.msg_name = p->mode == INART_AFP_UDP ? NULL : &p->tx_addr;
		p->tx_msg[i].msg_hdr.msg_namelen =
		    p->mode == INART_AFP_UDP ? 0 : sizeof(p->tx_addr);
	}
	return 0;
}

/* A socket on p->ifindex with the back end `mode` (RING or MMSG), bound,
 * promiscuous.  0 or -errno (err set). */
static int open_socket(struct inart_afp *p, enum inart_afp_mode mode, const struct inart_afp_opt *o,
		       struct inart_err *err)
{
	struct sockaddr_ll sll;
	struct packet_mreq mr;
	int one = 1, rc;

	/* protocol 0 at creation: no frames until bound to the interface */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		rc = -errno;
		inart_err_set(err, rc, "%s: AF_PACKET socket: %s (needs CAP_NET_RAW)", p->name,
			      strerror(-rc));
		return rc;
	}
	p->mode = mode;
	if (mode == INART_AFP_RING) {
		rc = ring_setup(p, o->rx_frames, o->tx_frames);
	} else {
		p->txq = o->tx_queue;
		rc = mmsg_setup(p);
	}
	if (rc < 0) {
		inart_err_set(err, rc, "%s: %s buffers: %s", p->name, inart_afp_mode_name(mode),
			      strerror(-rc));
		return rc;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = p->ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rc = -errno;
		inart_err_set(err, rc, "%s: bind: %s", p->name, strerror(-rc));
		return rc;
	}
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = p->ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
		rc = -errno;
		inart_err_set(err, rc, "%s: promiscuous mode: %s", p->name, strerror(-rc));
		return rc;
	}
	/* best effort: older kernels filter by packet type below */
	setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	set_buf(p->fd, SO_RCVBUFFORCE, SO_RCVBUF, 8 << 20);
	set_buf(p->fd, SO_SNDBUFFORCE, SO_SNDBUF, 4 << 20);
	return 0;
}

/* "LPORT:PPORT": the two port numbers.  0 or -EINVAL. */
static int udp_ports(const char *name, uint16_t *lport, uint16_t *pport)
{
	unsigned l, r;
	int n = 0;

	if (sscanf(name, "%5u:%5u%n", &l, &r, &n) != 2 || name[n] != '\0' || l == 0 ||
	    l > 65535 || r == 0 || r > 65535)
		return -EINVAL;
	*lport = (uint16_t)l;
	*pport = (uint16_t)r;
	return 0;
}

int inart_afp_check_name(const char *name, enum inart_afp_mode mode, struct inart_err *err)
{
	uint16_t l, r;

	if (mode == INART_AFP_UDP) {
		if (name == NULL || udp_ports(name, &l, &r) < 0)
			return inart_err_set(err, -EINVAL,
					     "%s: not LPORT:PPORT (udp back end)",
					     name ? name : "(null)");
		return 0;
	}
	if (name == NULL || name[0] == '\0' || strlen(name) >= IF_NAMESIZE)
		return inart_err_set(err, -EINVAL, "%s: bad interface name",
				     name ? name : "(null)");
	if (if_nametoindex(name) == 0)
		return inart_err_set(err, -ENODEV, "%s: no such interface", name);
	return 0;
}

/* The udp back end: bound to 127.0.0.1:lport, connected to 127.0.0.1:pport. */
static int open_udp(struct inart_afp *p, const struct inart_afp_opt *o, struct inart_err *err)
{
	struct sockaddr_in a;
	uint16_t lport, pport;
	int rc;

	if (udp_ports(p->name, &lport, &pport) < 0)
		return inart_err_set(err, -EINVAL, "%s: not LPORT:PPORT (udp back end)", p->name);
	p->mode = INART_AFP_UDP;
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		rc = -errno;
		return inart_err_set(err, rc, "%s: UDP socket: %s", p->name, strerror(-rc));
	}
	p->txq = o->tx_queue;
	rc = mmsg_setup(p);
	if (rc < 0)
		return inart_err_set(err, rc, "%s: udp buffers: %s", p->name, strerror(-rc));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(lport);
	if (bind(p->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		return inart_err_set(err, rc, "%s: bind: %s", p->name, strerror(-rc));
	}
	a.sin_port = htons(pport);
	if (connect(p->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		return inart_err_set(err, rc, "%s: connect: %s", p->name, strerror(-rc));
	}
	set_buf(p->fd, SO_RCVBUFFORCE, SO_RCVBUF, 8 << 20);
	set_buf(p->fd, SO_SNDBUFFORCE, SO_SNDBUF, 4 << 20);
	p->mac[0] = 0x02;
	p->mac[2] = 0x7f;
	p->mac[4] = (uint8_t)(lport >> 8);
	p->mac[5] = (uint8_t)lport;
	return 0;
}

struct inart_afp *inart_afp_open(const char *ifname, const struct inart_afp_opt *opt,
				 struct inart_err *err)
{
	struct inart_afp_opt o;
	struct inart_afp *p;
	struct ifreq ifr;
	int rc;

	if (opt == NULL)
		inart_afp_opt_default(&o);
	else
		o = *opt;
	if (ifname == NULL || strlen(ifname) == 0 || strlen(ifname) >= IF_NAMESIZE || o.batch < 1 ||
	    o.batch > 1024 || o.tx_queue < o.batch || o.tx_queue > 65536 || o.rx_frames < 64 ||
	    o.rx_frames > 65536 || o.tx_frames < o.batch || o.tx_frames > 65536 ||
	    o.mode < INART_AFP_AUTO || o.mode > INART_AFP_UDP) {
		inart_err_set(err, -EINVAL, "%s: bad interface name, mode, batch or ring size",
			      ifname ? ifname : "(null)");
		return inart_null_errno(EINVAL);
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->fd = -1;
	p->batch = o.batch;
	strcpy(p->name, ifname);
	if (o.mode == INART_AFP_UDP) {
		rc = open_udp(p, &o, err);
		if (rc < 0)
			goto fail;
		return p;
	}
	p->ifindex = (int)if_nametoindex(ifname);
	if (p->ifindex == 0) {
		rc = -(errno ? errno : ENODEV);
		inart_err_set(err, rc, "%s: no such interface", ifname);
		goto fail;
	}
	rc = open_socket(p, o.mode == INART_AFP_MMSG ? INART_AFP_MMSG : INART_AFP_RING, &o, err);
	if (rc < 0 && o.mode == INART_AFP_AUTO && p->fd >= 0) {
		/* the kernel refused the ring: plain system calls */
		close_socket(p);
		rc = open_socket(p, INART_AFP_MMSG, &o, err);
	}
	if (rc < 0)
		goto fail;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(p->fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
	return p;
fail:
	inart_afp_close(p);
	return inart_null_errno(-rc);
}

int inart_afp_fd(const struct inart_afp *p)
{
	return p->fd;
}

enum inart_afp_mode inart_afp_mode(const struct inart_afp *p)
{
	return p->mode;
}

const char *inart_afp_name(const struct inart_afp *p)
{
	return p->name;
}

void inart_afp_mac(const struct inart_afp *p, uint8_t mac[6])
{
	memcpy(mac, p->mac, 6);
}

static struct tpacket2_hdr *rx_frame(const struct inart_afp *p, int i)
{
	return (struct tpacket2_hdr *)(void *)(p->rx_ring + (size_t)i * INART_AFP_BUF);
}

static struct tpacket2_hdr *tx_frame(const struct inart_afp *p, int i)
{
	return (struct tpacket2_hdr *)(void *)(p->tx_ring + (size_t)i * INART_AFP_BUF);
}

static int ring_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max)
{
	int k = 0;

	/* give back what the caller had */
	for (; p->rx_held > 0; p->rx_held--) {
		__atomic_store_n(&rx_frame(p, p->rx_cur)->tp_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		p->rx_cur = (p->rx_cur + 1) % p->rx_frames;
	}
	while (k < max && p->rx_held < p->rx_frames) {
		int i = (p->rx_cur + p->rx_held) % p->rx_frames;
		struct tpacket2_hdr *h = rx_frame(p, i);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		const struct sockaddr_ll *sll;

		if (!(status & TP_STATUS_USER))
			break;
		p->rx_held++;
		sll = (const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		/* never trust the offsets: the frame must lie inside its slot */
		if (sll->sll_pkttype == PACKET_OUTGOING)
			continue;
		if (h->tp_len != h->tp_snaplen || h->tp_mac > INART_AFP_BUF ||
		    h->tp_snaplen > (uint32_t)INART_AFP_BUF - h->tp_mac) {
			p->st.rx_trunc++;
			continue;
		}
		data[k] = (uint8_t *)h + h->tp_mac;
		len[k] = (uint16_t)h->tp_snaplen;
		p->st.rx++;
		p->st.rx_bytes += h->tp_snaplen;
		k++;
	}
	if (p->rx_held > 0)
		p->st.rx_calls++;
	return k;
}

static int mmsg_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max)
{
	int n, k = 0;

	inart_mmsg_rx_rearm(p->rx_msg, sizeof(*p->rx_addr), max);
	n = recvmmsg(p->fd, p->rx_msg, (unsigned)max, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
			       (p->mode == INART_AFP_UDP && errno == ECONNREFUSED) /* no peer yet */
			   ? 0
			   : -errno;
	p->st.rx_calls++;
	for (int i = 0; i < n; i++) {
		unsigned l = p->rx_msg[i].msg_len;

		if (p->mode != INART_AFP_UDP && p->rx_addr[i].sll_pkttype == PACKET_OUTGOING)
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

int inart_afp_recv(struct inart_afp *p, uint8_t **data, uint16_t *len, int max)
{
	if (max > p->batch)
		max = p->batch;
	if (max <= 0)
		return 0;
	return p->mode == INART_AFP_RING ? ring_recv(p, data, len, max)
					 : mmsg_recv(p, data, len, max);
}

int inart_afp_queue(struct inart_afp *p, const uint8_t *frame, size_t len)
{
	int i;

	if (p->mode == INART_AFP_RING) {
		struct tpacket2_hdr *h = tx_frame(p, p->tx_next);

		if (len > INART_AFP_BUF - TX_DATA_OFF ||
		    __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) {
			p->st.tx_drops++;
			return -ENOBUFS;
		}
		memcpy((uint8_t *)h + TX_DATA_OFF, frame, len);
		h->tp_len = (uint32_t)len;
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		if (p->tx_n == 0)
			p->tx_head = p->tx_next;
		p->tx_next = (p->tx_next + 1) % p->txq;
		p->tx_n++;
		return 0;
	}
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

/* Count the frames the kernel took (no longer SEND_REQUEST), oldest first. */
static void ring_taken(struct inart_afp *p)
{
	while (p->tx_n > 0) {
		struct tpacket2_hdr *h = tx_frame(p, p->tx_head);

		if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) == TP_STATUS_SEND_REQUEST)
			break;
		p->st.tx++;
		p->st.tx_bytes += h->tp_len;
		p->tx_head = (p->tx_head + 1) % p->txq;
		p->tx_n--;
	}
}

static int ring_flush(struct inart_afp *p)
{
	while (p->tx_n > 0) {
		ssize_t r = send(p->fd, NULL, 0, MSG_DONTWAIT);
		int before = p->tx_n;

		p->st.tx_calls++;
		ring_taken(p);
		if (r >= 0 && p->tx_n < before)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		if (r >= 0 || errno == ENOBUFS || errno == EAGAIN || errno == EWOULDBLOCK) {
			p->st.tx_blocked++;
			return p->tx_n;
		}
		/* refused before the kernel looked at a frame (e.g. the link is
		   down: ENETDOWN; malformed frames are skipped by the kernel itself,
		   PACKET_LOSS): drop every pending frame and fill again from
		   tx_head.  The kernel resumes at the frame where it stopped, which
		   is tx_head (ring_taken); dropping only the oldest would leave our
		   head past the kernel's, which then finds an AVAILABLE frame, sends
		   nothing and never reaches ours again (a wedged port after a link
		   flap until the ring wrapped).  No send is running: the frames are
		   ours until we mark them again. */
		for (int i = 0; i < p->tx_n; i++)
			__atomic_store_n(&tx_frame(p, (p->tx_head + i) % p->txq)->tp_status,
					 TP_STATUS_AVAILABLE, __ATOMIC_RELEASE);
		p->st.tx_errors += (uint64_t)p->tx_n;
		p->tx_n = 0;
		p->tx_next = p->tx_head;
	}
	return 0;
}

static int mmsg_flush(struct inart_afp *p)
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

int inart_afp_flush(struct inart_afp *p)
{
	return p->mode == INART_AFP_RING ? ring_flush(p) : mmsg_flush(p);
}

int inart_afp_clear_error(struct inart_afp *p)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		return errno;
	return e;
}

void inart_afp_stats(struct inart_afp *p, struct inart_afp_stats *st)
{
	struct tpacket_stats ks;
	socklen_t l = sizeof(ks);

	/* the kernel's counters reset when read: accumulate them here */
	if (p->mode != INART_AFP_UDP &&
	    getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &l) == 0)
		p->st.rx_kernel_drops += ks.tp_drops;
	*st = p->st;
}
