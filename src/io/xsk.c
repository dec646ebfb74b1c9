/*
 * xsk: AF_XDP sockets, a UMEM per port, and the switch's XDP program
 * (xsk.h).  Memory: one mapping (mmap'ed at open) cut into a UMEM per port
 * (its receive frames, then its transmit frames), per port the free stack
 * of its transmit frames, the rings and the addresses of the frames handed
 * to the caller by the last recv (held).  Nothing is allocated after open.
 * Not one UMEM shared by the ports: for every (device, queue) bound to a
 * UMEM the kernel allocates and zeroes a descriptor per frame of the whole
 * UMEM (xp_create_and_assign_umem), so sharing costs ports x ports x frames
 * of kernel memory and start-up CPU, and transmit copies anyway.
 *
 * Frame ownership: a receive frame of port p is in p's fill ring, in the
 * kernel, in p's receive ring or held; a transmit frame of p is on p's free
 * stack, in p's transmit ring, in the kernel or in p's completion ring.
 * Every descriptor the kernel hands back is checked to lie inside its
 * port's UMEM.
 */
#include "io/xsk.h"

#include <errno.h>
#include <stdio.h>

#ifndef INART_HAVE_XDP

int inart_xsk_built(void)
{
	return 0;
}

int inart_xsk_usable(char *why, size_t n)
{
	snprintf(why, n, "built without libxdp/libbpf");
	return 0;
}

struct inart_xsk *inart_xsk_open(const char *const *ifnames, int n, const struct inart_xsk_opt *o,
				 struct inart_err *err)
{
	inart_err_set(err, -EOPNOTSUPP,
		      "--io xdp: this inart was built without libxdp/libbpf (scripts/deps.sh "
		      "installs them; then meson setup --reconfigure)");
	errno = EOPNOTSUPP;
	return NULL;
}

void inart_xsk_close(struct inart_xsk *x)
{
}

const char *inart_xsk_describe(const struct inart_xsk *x)
{
	return "not built";
}

int inart_xsk_is_veth(const struct inart_xsk *x, int i)
{
	return 0;
}

int inart_xsk_shaped(const char *ifname, char *kind, size_t kind_len)
{
	return 0;
}

int inart_xsk_fd(const struct inart_xsk *x, int i)
{
	return -1;
}

int inart_xsk_prog_fd(const struct inart_xsk *x)
{
	return -1;
}

void inart_xsk_mac(const struct inart_xsk *x, int i, uint8_t mac[6])
{
}

int inart_xsk_recv(struct inart_xsk *x, int i, uint8_t **data, uint16_t *len, int max)
{
	return -EOPNOTSUPP;
}

int inart_xsk_queue(struct inart_xsk *x, int i, const uint8_t *frame, size_t len)
{
	return -EOPNOTSUPP;
}

int inart_xsk_pending(const struct inart_xsk *x, int i)
{
	return 0;
}

int inart_xsk_flush(struct inart_xsk *x, int i)
{
	return 0;
}

int inart_xsk_clear_error(struct inart_xsk *x, int i)
{
	return 0;
}

void inart_xsk_stats(struct inart_xsk *x, int i, struct inart_afp_stats *st)
{
}

int inart_xsk_sync_port(struct inart_xsk *x, int i, const uint8_t mac[6], const uint8_t *peer_mac,
			uint32_t peer_ip, int fwd)
{
	return -EOPNOTSUPP;
}

int inart_xsk_sync_own_ips(struct inart_xsk *x, const uint32_t *ips, int n)
{
	return -EOPNOTSUPP;
}

int inart_xsk_sync_routes(struct inart_xsk *x, const struct inart_route *r, int n,
			  struct inart_err *err)
{
	return -EOPNOTSUPP;
}

int inart_xsk_counters(const struct inart_xsk *x, uint64_t *c)
{
	return -EOPNOTSUPP;
}

int inart_xsk_ifname_of(uint32_t ip, char *ifname, size_t n)
{
	return -EOPNOTSUPP;
}

struct inart_xsk *inart_xsk_set(struct inart_xsk *x, int k)
{
	return NULL;
}

struct inart_xsk *inart_xsk_open_host(const char *ifname, uint32_t ip, uint16_t port,
				      const struct inart_xsk_opt *o, struct inart_err *err)
{
	return inart_xsk_open(&ifname, 1, o, err);
}

int inart_xsk_agg_map_fd(const struct inart_xsk *x)
{
	return -EOPNOTSUPP;
}

int inart_xsk_agg_prog_fd(const struct inart_xsk *x)
{
	return -EOPNOTSUPP;
}

int inart_xsk_agg_steer(struct inart_xsk *x, int n_cpus, const int *cpus, int any)
{
	return -EOPNOTSUPP;
}

#else

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/membarrier.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include "common/file.h"
#include "dp/shard.h"
#include "io/xdp_host.h"
#include <xdp_host.skel.h>   /* generated: bpftool gen skeleton (meson.build) */
#include <xdp_switch.skel.h> /* generated: bpftool gen skeleton (meson.build) */

#define FRAME 2048u
#define CG_SLACK (16.0 * 1048576) /* beside the UMEM under a cgroup limit */
#define MAX_BATCH 1024
#define KICKS_MAX 64 /* copy mode sends 32 frames per kick: a flush's bound */

struct xport {
	struct xsk_socket *sk;
	struct xsk_umem *umem;
	uint8_t *base;	   /* its UMEM: [0, rx_frames) receive, then transmit */
	uint64_t *free_tx; /* stack of its free transmit frames (addresses) */
	int n_free;
	struct xsk_ring_cons rx, cq;
	struct xsk_ring_prod tx, fq;
	int fd, ifindex, link_fd, veth;
	uint8_t mac[6];
	int n_held, tx_n; /* tx_n: reserved, not yet submitted */
	int stalled;	  /* the last kick failed (link down, device gone) */
	uint64_t held[MAX_BATCH];
	struct inart_afp_stats st;
	struct xdp_statistics ks_base;
	/* with queues: the poll fd (the socket and the handoff eventfd) and
	   the entries of each other set's ring taken by the last recv */
	int ep;
	uint32_t taken[INART_SHARD_MAX];
};

/* Handoff (queues > 1): frames received on one set's queue for another
 * set's shard, copied into a ring from that set to the owner, one per
 * (from, to, port), single producer, single consumer, no lock. */
#define HO_SLOTS 256 /* a power of two */
struct ho_slot {
	uint32_t len;
	uint8_t data[FRAME - 4];
};

struct ho_ring {
	_Alignas(64) atomic_uint head; /* written by the sending set */
	_Alignas(64) atomic_uint tail; /* written by the owner */
	struct ho_slot *slot;
};

struct ho_group {
	int nq, n;
	struct ho_ring *r;	/* [from][to][port] */
	atomic_int *flag;	/* [to][port]: 1 = eventfd written, not read yet */
	int *efd;		/* [to][port] */
	struct ho_slot *mem;	/* every ring's slots */
	uint64_t *drops;	/* [from][port]: ring full, frame dropped */
	struct inart_xsk **set; /* [queue] */
};

struct inart_xsk {
	int n, batch, rx_frames, tx_frames;
	struct xdp_switch *skel; /* the switch's program, or */
	struct xdp_host *hskel;	 /* a host's (inart_xsk_open_host) */
	int xsks_fd, prog_fd, ctrs_fd;
	int queue, nq;	    /* this set's queue of nq (--cores) */
	struct ho_group *g; /* nq > 1; set 0 owns it and the other sets */
	uint8_t *buf;	    /* every port's UMEM, one after the other */
	size_t buf_len;	    /* n x port_len */
	size_t port_len;    /* one port's UMEM: (rx_frames + tx_frames) x FRAME */
	uint64_t *free_tx;  /* the ports' free stacks, tx_frames each */
	int zc, native;
	char desc[160];
	/* the program's hosts table (xdp_switch.h), rebuilt from own and h32
	   by every sync of either; hosts: what the map holds (hosts_ok 0:
	   unknown, every slot is written next time) */
	uint32_t own[INART_XDP_MAX_OWN_IPS]; /* network order */
	int n_own;
	struct inart_xdp_host *h32; /* the /32 routes: {address, port} */
	int n_h32;
	struct inart_xdp_host *hosts, *hosts_new;
	int hosts_ok;
	int own_ok, routes_ok; /* the last sync of each completed */
	int hosts_never;       /* no grace period to be had: hosts stays off */
	struct xport p[INART_SW_MAX_PORTS];
};

int inart_xsk_built(void)
{
	return 1;
}

int inart_xsk_usable(char *why, size_t n)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(why, n, "no AF_XDP socket: %s", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

/* libbpf prints nothing of its own (libraries never print). */
static int quiet(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return 0;
}

static int pow2(int v)
{
	int p = 64;

	while (p < v && p < 65536)
		p <<= 1;
	return p;
}

/* Receive queues of ifname (/sys/class/net/IF/queues/rx-*), 1 if unknown. */
static int rx_queues(const char *ifname)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (dir == NULL)
		return 1;
	while ((d = readdir(dir)) != NULL)
		n += strncmp(d->d_name, "rx-", 3) == 0;
	closedir(dir);
	return n > 0 ? n : 1;
}

/* The interface's MAC and whether its driver is veth. */
static void if_info(const char *ifname, uint8_t mac[6], int *veth)
{
	struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	ifr.ifr_data = (void *)&di;
	*veth = fd >= 0 && ioctl(fd, SIOCETHTOOL, &ifr) == 0 && strcmp(di.driver, "veth") == 0;
	inart_fd_close(fd);
}

/* The kind of ifindex's root qdisc from an RTM_NEWQDISC message, or "". */
static void qdisc_kind(const struct nlmsghdr *h, int ifindex, char *kind, size_t n)
{
	const struct tcmsg *t = NLMSG_DATA(h);
	const struct rtattr *a;
	int len;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*t)) || t->tcm_ifindex != ifindex ||
	    t->tcm_parent != TC_H_ROOT)
		return;
	len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*t));
	for (a = (const struct rtattr *)((const char *)t + NLMSG_ALIGN(sizeof(*t))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == TCA_KIND && RTA_PAYLOAD(a) > 0)
			snprintf(kind, n, "%.*s", (int)RTA_PAYLOAD(a), (const char *)RTA_DATA(a));
}

int inart_xsk_shaped(const char *ifname, char *kind, size_t kind_len)
{
	static const char *const plain[] = {"",	  "noqueue", "pfifo_fast", "fq_codel", "fq",
					    "mq", "pfifo",   "bfifo",	   "sfq",      "cake_mq"};
	struct {
		struct nlmsghdr h;
		struct tcmsg t;
	} rq = {
	    {NLMSG_LENGTH(sizeof(struct tcmsg)), RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, 1, 0},
	    {.tcm_family = AF_UNSPEC}};
	char buf[16384], k[32] = "";
	int ifindex = (int)if_nametoindex(ifname), fd, done = 0, rc = 0;

	if (ifindex == 0)
		return -ENODEV;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || send(fd, &rq, sizeof(rq), 0) < 0) {
		rc = -errno;
		inart_fd_close(fd);
		return rc;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		const struct nlmsghdr *h = (const void *)buf;
		int left = (int)n;

		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = 1;
			else if (h->nlmsg_type == RTM_NEWQDISC)
				qdisc_kind(h, ifindex, k, sizeof(k));
		}
	}
	inart_fd_close(fd);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcmp(k, plain[i]) == 0)
			return 0;
	snprintf(kind, kind_len, "%s", k);
	return 1;
}

/* Delete the sockets and the UMEM (for the fallback to copy mode, and at
 * close); the UMEM's memory stays. */
static void close_sockets(struct inart_xsk *x)
{
	for (int i = 0; i < x->n; i++) {
		xsk_socket__delete(x->p[i].sk);
		x->p[i].sk = NULL;
		x->p[i].fd = -1;
		if (x->p[i].umem != NULL)
			xsk_umem__delete(x->p[i].umem);
		x->p[i].umem = NULL;
	}
}

/* Per port its UMEM and socket with bind flags `bind`, in the program's
 * XSKMAP, its fill ring full, its free stack refilled.  0 or -errno (err). */
static int open_sockets(struct inart_xsk *x, const char *const *ifnames, uint16_t bind,
			struct inart_err *err)
{
	struct xsk_umem_config uc = {.fill_size = (uint32_t)x->rx_frames,
				     .comp_size = (uint32_t)x->tx_frames,
				     .frame_size = FRAME,
				     .frame_headroom = 0,
				     .flags = 0};
	struct xsk_socket_config sc = {.rx_size = (uint32_t)x->rx_frames,
				       .tx_size = (uint32_t)x->tx_frames,
				       .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
				       .xdp_flags = 0,
				       .bind_flags = bind};
	int map = x->xsks_fd, rc;

	for (int i = 0; i < x->n; i++) {
		struct xport *p = &x->p[i];
		uint32_t idx = 0, key = (uint32_t)(i * x->nq + x->queue);

		p->base = x->buf + (size_t)i * x->port_len;
		rc = xsk_umem__create(&p->umem, p->base, x->port_len, &p->fq, &p->cq, &uc);
		if (rc < 0) {
			p->umem = NULL;
			return inart_err_set(err, rc, "%s: AF_XDP UMEM of %zu MB: %s%s", ifnames[i],
					     x->port_len >> 20, strerror(-rc),
					     rc == -ENOMEM || rc == -ENOBUFS || rc == -EPERM
						 ? " (the kernel could not pin it: fewer "
						   "--ring-frames, or CAP_IPC_LOCK / a larger "
						   "RLIMIT_MEMLOCK)"
						 : "");
		}
		rc = xsk_socket__create(&p->sk, ifnames[i], (uint32_t)x->queue, p->umem, &p->rx,
					&p->tx, &sc);
		if (rc < 0) {
			p->sk = NULL;
			return inart_err_set(err, rc, "%s: AF_XDP socket: %s", ifnames[i],
					     strerror(-rc));
		}
		p->fd = xsk_socket__fd(p->sk);
		if (bpf_map_update_elem(map, &key, &p->fd, BPF_ANY) < 0) {
			rc = -errno;
			return inart_err_set(err, rc, "%s: XSKMAP: %s", ifnames[i], strerror(-rc));
		}
		/* port i's receive frames: [i * rx_frames, (i + 1) * rx_frames) */
		if (xsk_ring_prod__reserve(&p->fq, (uint32_t)x->rx_frames, &idx) !=
		    (uint32_t)x->rx_frames)
			return inart_err_set(err, -ENOSPC, "%s: AF_XDP fill ring", ifnames[i]);
		for (int k = 0; k < x->rx_frames; k++)
			*xsk_ring_prod__fill_addr(&p->fq, idx + (uint32_t)k) = (uint64_t)k * FRAME;
		xsk_ring_prod__submit(&p->fq, (uint32_t)x->rx_frames);
		p->n_held = 0;
		p->tx_n = 0;
		p->free_tx = x->free_tx + (size_t)i * (size_t)x->tx_frames;
		p->n_free = 0;
		for (int k = 0; k < x->tx_frames; k++)
			p->free_tx[p->n_free++] = ((uint64_t)x->rx_frames + (uint64_t)k) * FRAME;
	}
	return 0;
}

/* A skeleton's open_and_load failed (errno): -errno with err saying so. */
static int load_failed(struct inart_err *err)
{
	int rc = -errno;

	return inart_err_set(err, rc, "--io xdp: loading the XDP program: %s%s", strerror(-rc),
			     rc == -EPERM ? " (needs CAP_BPF, CAP_NET_ADMIN, CAP_NET_RAW)" : "");
}

/* The program loaded, its port maps filled.  0 or -errno (err). */
static int load_prog(struct inart_xsk *x, const char *const *ifnames, struct inart_err *err)
{
	int rc;

	libbpf_set_print(quiet);
	x->skel = xdp_switch__open_and_load();
	if (x->skel == NULL)
		return load_failed(err);
	x->hosts = calloc(INART_XDP_HOST_SLOTS, sizeof(*x->hosts));
	x->hosts_new = calloc(INART_XDP_HOST_SLOTS, sizeof(*x->hosts_new));
	if (x->hosts == NULL || x->hosts_new == NULL)
		return inart_err_set(err, -ENOMEM, "--io xdp: out of memory");
	x->hosts_ok = 1; /* all zero, as the map */
	for (int i = 0; i < x->n; i++) {
		uint32_t port = (uint32_t)i, ifx = (uint32_t)x->p[i].ifindex;
		uint32_t slot = ifx & (INART_XDP_IFSLOTS - 1);
		struct inart_xdp_ifslot sl;

		/* the first port of a slot in ifslots, every port in ifports */
		if (bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ifslots), &slot, &sl) == 0 &&
		    sl.ifindex == 0) {
			sl.ifindex = ifx;
			sl.port = port;
			if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.ifslots), &slot, &sl,
						BPF_ANY) < 0) {
				rc = -errno;
				return inart_err_set(err, rc, "%s: XDP port maps: %s", ifnames[i],
						     strerror(-rc));
			}
		}
		if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.ifports), &ifx, &port, BPF_ANY) <
			0 ||
		    bpf_map_update_elem(bpf_map__fd(x->skel->maps.devs), &port, &ifx, BPF_ANY) <
			0) {
			rc = -errno;
			return inart_err_set(err, rc, "%s: XDP port maps: %s", ifnames[i],
					     strerror(-rc));
		}
	}
	x->xsks_fd = bpf_map__fd(x->skel->maps.xsks);
	x->prog_fd = bpf_program__fd(x->skel->progs.inart_xdp_switch);
	x->ctrs_fd = bpf_map__fd(x->skel->maps.ctrs);
	return 0;
}

/* The host program loaded, configured for ip:port (network order).  0 or
 * -errno (err). */
static int load_host(struct inart_xsk *x, uint32_t ip, uint16_t port, struct inart_err *err)
{
	struct inart_xdp_host_cfg c = {.ip = ip, .port = port, .n_queues = 1};
	uint32_t zero = 0;
	int rc;

	libbpf_set_print(quiet);
	x->hskel = xdp_host__open_and_load();
	if (x->hskel == NULL)
		return load_failed(err);
	if (bpf_map_update_elem(bpf_map__fd(x->hskel->maps.cfg), &zero, &c, BPF_ANY) < 0) {
		rc = -errno;
		return inart_err_set(err, rc, "--io xdp: the program's configuration: %s",
				     strerror(-rc));
	}
	x->xsks_fd = bpf_map__fd(x->hskel->maps.xsks);
	x->prog_fd = bpf_program__fd(x->hskel->progs.inart_xdp_host);
	x->ctrs_fd = bpf_map__fd(x->hskel->maps.ctrs);
	return 0;
}

/* Attach the program to every port: a link each (native, else generic). */
static int attach(struct inart_xsk *x, const char *const *ifnames, struct inart_err *err)
{
	int prog = x->prog_fd;

	x->native = 1;
	for (int i = 0; i < x->n; i++) {
		LIBBPF_OPTS(bpf_link_create_opts, drv, .flags = XDP_FLAGS_DRV_MODE);
		LIBBPF_OPTS(bpf_link_create_opts, skb, .flags = XDP_FLAGS_SKB_MODE);
		int fd = bpf_link_create(prog, x->p[i].ifindex, BPF_XDP, &drv), rc;

		if (fd < 0 && errno != EBUSY && errno != EEXIST) {
			fd = bpf_link_create(prog, x->p[i].ifindex, BPF_XDP, &skb);
			if (fd >= 0)
				x->native = 0;
		}
		if (fd < 0) {
			rc = -errno;
			return inart_err_set(err, rc, "%s: attaching the XDP program: %s%s",
					     ifnames[i], strerror(-rc),
					     rc == -EBUSY || rc == -EEXIST
						 ? " (the interface has an XDP program already)"
						 : "");
		}
		x->p[i].link_fd = fd;
	}
	return 0;
}

static int check_ports(struct inart_xsk *x, const char *const *ifnames, struct inart_err *err)
{
	for (int i = 0; i < x->n; i++) {
		int q;

		x->p[i].fd = x->p[i].link_fd = x->p[i].ep = -1;
		if (ifnames[i] == NULL || strlen(ifnames[i]) >= IF_NAMESIZE ||
		    (x->p[i].ifindex = (int)if_nametoindex(ifnames[i])) == 0)
			return inart_err_set(err, -ENODEV, "%s: no such interface",
					     ifnames[i] ? ifnames[i] : "(null)");
		q = rx_queues(ifnames[i]);
		if (q > 1 && x->nq == 1)
			return inart_err_set(err, -EOPNOTSUPP,
					     "%s: %d receive queues; --io xdp serves queue 0 only "
					     "(ethtool -L %s combined 1)",
					     ifnames[i], q, ifnames[i]);
		if (q != x->nq && x->nq > 1)
			return inart_err_set(
			    err, -EOPNOTSUPP,
			    "%s: %d receive queues; --io xdp --cores %d needs %d, a "
			    "socket per worker (ethtool -L %s combined %d; a veth: "
			    "numrxqueues %d numtxqueues %d)",
			    ifnames[i], q, x->nq, x->nq, ifnames[i], x->nq, x->nq, x->nq);
		if_info(ifnames[i], x->p[i].mac, &x->p[i].veth);
	}
	return 0;
}

/* The first number in file path after key (a "key value" line; key "" for
 * a file of one number), as bytes; -1 if there is none ("max", no file). */
static double cg_num(const char *path, const char *key)
{
	char buf[4096], *p = buf;
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (key[0] != '\0') {
		size_t kl = strlen(key);

		for (p = buf; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
				break;
		if (p == NULL)
			return -1;
		p += kl + 1;
	}
	return p[0] >= '0' && p[0] <= '9' ? strtod(p, NULL) : -1;
}

/* One cgroup's limit l and usage u (bytes; < 0: unknown): *room and
 * *limit taken from it if it leaves less room than *room (< 0: none yet). */
static void cg_least(double l, double u, double *room, double *limit)
{
	if (l > 0 && u >= 0 && (*room < 0 || l - u < *room)) {
		*room = l - u;
		*limit = l;
	}
}

/* The room left under this process's memory cgroup limit (bytes; cgroup
 * v2: the least room of its cgroup and the parents', v1: the hierarchical
 * limit less the usage), its limit in *limit; -1 if there is no limit or it
 * cannot be read.  The UMEM is populated at once: past the limit the
 * kernel's OOM killer would end the daemon instead of an error.  The
 * cgroup files are read under /sys/fs/cgroup: not there (-1) under `ip
 * netns exec`, which mounts a sysfs of the namespace's own without them
 * (nsenter --net, or setns as inart emu does, keeps them). */
static double cg_room(double *limit)
{
	char line[512], path[700];
	const char *base = "/sys/fs/cgroup";
	double room = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *cg = strrchr(line, ':'), *ctl = strchr(line, ':');

		if (cg == NULL || ctl == NULL)
			continue;
		cg[strcspn(cg, "\n")] = '\0';
		*cg++ = '\0';
		ctl++;
		if (strcmp(ctl, "memory") == 0) { /* v1 */
			double l, u;

			snprintf(path, sizeof(path), "%s/memory%s/memory.stat", base, cg);
			l = cg_num(path, "hierarchical_memory_limit");
			snprintf(path, sizeof(path), "%s/memory%s/memory.usage_in_bytes", base, cg);
			u = cg_num(path, "");
			if (l < 1e18) /* (v1's "no limit" is a huge number) */
				cg_least(l, u, &room, limit);
		} else if (ctl[0] == '\0') /* v2: this cgroup and its parents */
			for (char *end = cg + strlen(cg); end >= cg; end--) {
				double l, u;

				if (*end != '/' && end != cg + strlen(cg))
					continue;
				snprintf(path, sizeof(path), "%s%.*s/memory.max", base,
					 (int)(end - cg), cg);
				l = cg_num(path, "");
				snprintf(path, sizeof(path), "%s%.*s/memory.current", base,
					 (int)(end - cg), cg);
				u = cg_num(path, "");
				cg_least(l, u, &room, limit);
			}
	}
	if (f != NULL)
		fclose(f);
	return room;
}

/* A set's memory on ifnames[0..n), for queue of nq: the ports checked, the
 * UMEM mapped.  NULL + errno (err). */
static struct inart_xsk *set_alloc(const char *const *ifnames, int n, const struct inart_xsk_opt *o,
				   int queue, int nq, struct inart_err *err)
{
	struct inart_xsk *x = calloc(1, sizeof(*x));
	double phys, room, limit = 0;
	int rc;

	if (x == NULL) {
		inart_err_set(err, -ENOMEM, "--io xdp: out of memory");
		return NULL;
	}
	x->n = n;
	x->batch = o->batch;
	x->rx_frames = pow2(o->rx_frames);
	x->tx_frames = pow2(o->tx_frames);
	x->queue = queue;
	x->nq = nq;
	rc = check_ports(x, ifnames, err);
	if (rc < 0)
		goto fail;
	x->port_len = (size_t)(x->rx_frames + x->tx_frames) * FRAME;
	x->buf_len = (size_t)n * x->port_len;
	phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	if (phys > 0 && (double)x->buf_len * nq > phys / 4) {
		rc = inart_err_set(
		    err, -ENOMEM,
		    "--io xdp: a UMEM of %zu MB (%d ports x %d frames%s) is more than "
		    "a quarter of this machine's memory; fewer --ring-frames",
		    (x->buf_len * (size_t)nq) >> 20, n, x->rx_frames + x->tx_frames,
		    nq > 1 ? ", one per core" : "");
		goto fail;
	}
	room = cg_room(&limit); /* the set's own UMEM (the next sets check theirs) */
	if (room >= 0 && (double)x->buf_len + CG_SLACK > room) {
		rc = inart_err_set(err, -ENOMEM,
				   "--io xdp: a UMEM of %zu MB (%d ports x %d frames) does not fit "
				   "the %.0f MB left under this process's memory cgroup limit of "
				   "%.0f MB; fewer --ring-frames",
				   x->buf_len >> 20, n, x->rx_frames + x->tx_frames,
				   room > 0 ? room / 1048576 : 0, limit / 1048576);
		goto fail;
	}
	x->buf = mmap(NULL, x->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	x->free_tx = calloc((size_t)n * (size_t)x->tx_frames, sizeof(*x->free_tx));
	if (x->buf == MAP_FAILED || x->free_tx == NULL) {
		if (x->buf == MAP_FAILED)
			x->buf = NULL;
		rc = inart_err_set(err, -ENOMEM, "--io xdp: UMEM of %zu MB: out of memory",
				   x->buf_len >> 20);
		goto fail;
	}
	return x;
fail:
	inart_xsk_close(x);
	return inart_null_errno(-rc);
}

/* The handoff rings, eventfds and poll fds of the nq sets x->g->set[]. */
static int group_open(struct inart_xsk *x, struct inart_err *err)
{
	struct ho_group *g = x->g;
	size_t nr = (size_t)g->nq * (size_t)g->nq * (size_t)g->n, nf = (size_t)g->nq * (size_t)g->n;

	g->r = calloc(nr, sizeof(*g->r));
	g->flag = calloc(nf, sizeof(*g->flag));
	g->efd = calloc(nf, sizeof(*g->efd));
	g->drops = calloc(nf, sizeof(*g->drops));
	g->mem = mmap(NULL, nr * HO_SLOTS * sizeof(struct ho_slot), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->r == NULL || g->flag == NULL || g->efd == NULL || g->drops == NULL ||
	    g->mem == MAP_FAILED) {
		if (g->mem == MAP_FAILED)
			g->mem = NULL;
		return inart_err_set(err, -ENOMEM,
				     "--io xdp: handoff rings of %zu MB: out of memory",
				     (nr * HO_SLOTS * sizeof(struct ho_slot)) >> 20);
	}
	for (size_t j = 0; j < nr; j++)
		g->r[j].slot = g->mem + j * HO_SLOTS;
	for (size_t j = 0; j < nf; j++)
		g->efd[j] = -1;
	for (int q = 0; q < g->nq; q++)
		for (int i = 0; i < g->n; i++) {
			struct xport *p = &g->set[q]->p[i];
			int *efd = &g->efd[q * g->n + i];
			struct epoll_event ev = {.events = EPOLLIN};

			*efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			p->ep = epoll_create1(EPOLL_CLOEXEC);
			if (*efd < 0 || p->ep < 0 ||
			    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->fd, &ev) < 0 ||
			    epoll_ctl(p->ep, EPOLL_CTL_ADD, *efd, &ev) < 0)
				return inart_err_set(err, -errno, "--io xdp: handoff eventfd: %s",
						     strerror(errno));
		}
	return 0;
}

/* Sets 1..nq-1 of x (set 0, the program loaded, its sockets open): each on
 * its queue, with bind flags `bind`, in the program's XSKMAP. */
static int open_queues(struct inart_xsk *x, const char *const *ifnames,
		       const struct inart_xsk_opt *o, uint16_t bind, struct inart_err *err)
{
	int nq = x->nq;

	x->g = calloc(1, sizeof(*x->g));
	if (x->g == NULL || (x->g->set = calloc((size_t)nq, sizeof(*x->g->set))) == NULL)
		return inart_err_set(err, -ENOMEM, "--io xdp: out of memory");
	x->g->nq = nq;
	x->g->n = x->n;
	x->g->set[0] = x;
	for (int q = 1; q < nq; q++) {
		struct inart_xsk *y = set_alloc(ifnames, x->n, o, q, nq, err);
		int rc;

		if (y == NULL)
			return -errno;
		x->g->set[q] = y;
		y->g = x->g;
		y->xsks_fd = x->xsks_fd;
		y->zc = x->zc;
		y->native = x->native;
		rc = open_sockets(y, ifnames, bind, err);
		if (rc < 0)
			return rc;
	}
	x->skel->data->n_queues = (uint32_t)nq;
	return group_open(x, err);
}

/* The set on ifnames[0..n) with the switch's program (o->queues sets, one
 * per queue), or (host_ip != 0, network order) a host's for
 * host_ip:host_port. */
static struct inart_xsk *open_set(const char *const *ifnames, int n, const struct inart_xsk_opt *o,
				  uint32_t host_ip, uint16_t host_port, struct inart_err *err)
{
	struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
	struct inart_xsk *x;
	char zc_why[64] = "";
	int rc, nq = o != NULL && o->queues > 1 ? o->queues : 1;
	uint16_t bind = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP;

	if (n < 1 || n > INART_SW_MAX_PORTS || o == NULL || o->batch < 1 || o->batch > MAX_BATCH ||
	    o->rx_frames < 64 || o->tx_frames < o->batch || nq > INART_XDP_MAX_QUEUES ||
	    (nq > 1 && host_ip != 0)) {
		inart_err_set(err, -EINVAL, "--io xdp: bad port count, batch, ring size or queues");
		return inart_null_errno(EINVAL);
	}
	setrlimit(RLIMIT_MEMLOCK, &inf); /* best effort: the UMEM is pinned */
	x = set_alloc(ifnames, n, o, 0, nq, err);
	if (x == NULL)
		return NULL;
	rc = host_ip != 0 ? load_host(x, host_ip, host_port, err) : load_prog(x, ifnames, err);
	if (rc < 0)
		goto fail;
	x->zc = 1;
	rc = open_sockets(x, ifnames, bind, err);
	if (rc < 0) {
		snprintf(zc_why, sizeof(zc_why), "zero-copy refused: %s", strerror(-rc));
		close_sockets(x);
		x->zc = 0;
		bind = XDP_COPY | XDP_USE_NEED_WAKEUP;
		rc = open_sockets(x, ifnames, bind, err);
	}
	if (rc == 0 && nq > 1)
		rc = open_queues(x, ifnames, o, bind, err);
	if (rc < 0)
		goto fail;
	rc = attach(x, ifnames, err);
	if (rc < 0)
		goto fail;
	snprintf(x->desc, sizeof(x->desc), "AF_XDP %s%s%s%s, %s XDP",
		 x->zc ? "zero-copy" : "copy mode", zc_why[0] ? " (" : "", zc_why,
		 zc_why[0] ? ")" : "", x->native ? "native" : "generic");
	if (nq > 1)
		snprintf(x->desc + strlen(x->desc), sizeof(x->desc) - strlen(x->desc),
			 ", %d queues (a socket per core)", nq);
	return x;
fail:
	inart_xsk_close(x);
	return inart_null_errno(-rc);
}

struct inart_xsk *inart_xsk_open(const char *const *ifnames, int n, const struct inart_xsk_opt *o,
				 struct inart_err *err)
{
	return open_set(ifnames, n, o, 0, 0, err);
}

int inart_xsk_ifname_of(uint32_t ip, char *ifname, size_t n)
{
	struct ifaddrs *ifa, *a;
	int rc = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (a = ifa; a != NULL; a = a->ifa_next)
		if (a->ifa_addr != NULL && a->ifa_addr->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr.s_addr ==
			htonl(ip)) {
			rc = (a->ifa_flags & IFF_LOOPBACK) ? -EOPNOTSUPP : 0;
			snprintf(ifname, n, "%s", a->ifa_name);
			break;
		}
	freeifaddrs(ifa);
	return rc;
}

struct inart_xsk *inart_xsk_open_host(const char *ifname, uint32_t ip, uint16_t port,
				      const struct inart_xsk_opt *o, struct inart_err *err)
{
	if (ip == 0) {
		inart_err_set(err, -EINVAL, "--io xdp: the host needs an address (--bind IP)");
		return inart_null_errno(EINVAL);
	}
	return open_set(&ifname, 1, o, htonl(ip), htons(port), err);
}

/* Set 0: the other sets, the handoff rings and fds. */
static void group_close(struct inart_xsk *x)
{
	struct ho_group *g = x->g;

	if (g == NULL || x->queue != 0)
		return;
	for (int q = 1; g->set != NULL && q < g->nq; q++)
		if (g->set[q] != NULL) {
			g->set[q]->g = NULL;
			inart_xsk_close(g->set[q]);
		}
	for (int j = 0; g->efd != NULL && j < g->nq * g->n; j++)
		inart_fd_close(g->efd[j]);
	if (g->mem != NULL)
		munmap(g->mem, (size_t)g->nq * (size_t)g->nq * (size_t)g->n * HO_SLOTS *
				   sizeof(struct ho_slot));
	free(g->r);
	free(g->flag);
	free(g->efd);
	free(g->drops);
	free(g->set);
	free(g);
	x->g = NULL;
}

void inart_xsk_close(struct inart_xsk *x)
{
	if (x == NULL)
		return;
	for (int i = 0; i < x->n; i++) {
		inart_fd_close(x->p[i].link_fd); /* detaches the program */
		inart_fd_close(x->p[i].ep);
	}
	group_close(x);
	close_sockets(x);
	xdp_switch__destroy(x->skel);
	xdp_host__destroy(x->hskel);
	free(x->h32);
	free(x->hosts);
	free(x->hosts_new);
	if (x->buf != NULL)
		munmap(x->buf, x->buf_len);
	free(x->free_tx);
	free(x);
}

const char *inart_xsk_describe(const struct inart_xsk *x)
{
	return x->desc;
}

int inart_xsk_fd(const struct inart_xsk *x, int i)
{
	return x->p[i].ep >= 0 ? x->p[i].ep : x->p[i].fd;
}

int inart_xsk_prog_fd(const struct inart_xsk *x)
{
	return x != NULL ? x->prog_fd : -1;
}

struct inart_xsk *inart_xsk_set(struct inart_xsk *x, int k)
{
	return x->g != NULL && k >= 0 && k < x->g->nq ? x->g->set[k] : k == 0 ? x : NULL;
}

int inart_xsk_is_veth(const struct inart_xsk *x, int i)
{
	return x->p[i].veth;
}

void inart_xsk_mac(const struct inart_xsk *x, int i, uint8_t mac[6])
{
	memcpy(mac, x->p[i].mac, 6);
}

/* Give the frames held by the caller back to the fill ring (it has room:
 * a port's receive frames are exactly its fill ring's size). */
static void refill(struct inart_xsk *x, struct xport *p)
{
	uint32_t idx = 0;

	if (p->n_held == 0)
		return;
	if (xsk_ring_prod__reserve(&p->fq, (uint32_t)p->n_held, &idx) != (uint32_t)p->n_held)
		return; /* cannot happen; keep them for the next call */
	for (int k = 0; k < p->n_held; k++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + (uint32_t)k) = p->held[k];
	xsk_ring_prod__submit(&p->fq, (uint32_t)p->n_held);
	p->n_held = 0;
	if (xsk_ring_prod__needs_wakeup(&p->fq))
		recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static struct ho_ring *ho_ring(const struct ho_group *g, int from, int to, int i)
{
	return &g->r[((size_t)from * (size_t)g->nq + (size_t)to) * (size_t)g->n + (size_t)i];
}

/* Tell set `to` that port i has frames in its rings (one eventfd write
 * until it has read it). */
static void ho_signal(struct ho_group *g, int to, int i)
{
	uint64_t one = 1;

	if (atomic_exchange(&g->flag[to * g->n + i], 1) == 0)
		(void)!write(g->efd[to * g->n + i], &one, sizeof(one));
}

/* A frame of port i received by set `from` for set `to`: copied into
 * their ring (dropped and counted if it is full).  1 if queued. */
static int ho_push(struct ho_group *g, int from, int to, int i, const uint8_t *f, uint32_t len)
{
	struct ho_ring *r = ho_ring(g, from, to, i);
	unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= HO_SLOTS ||
	    len > sizeof(r->slot[0].data)) {
		g->drops[from * g->n + i]++;
		return 0;
	}
	r->slot[h & (HO_SLOTS - 1)].len = len;
	memcpy(r->slot[h & (HO_SLOTS - 1)].data, f, len);
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return 1;
}

/* Set x's port i: the entries the last recv returned go back to their
 * rings; the eventfd is read if it was written. */
static void ho_release(struct inart_xsk *x, int i)
{
	struct ho_group *g = x->g;
	struct xport *p = &x->p[i];
	uint64_t v;

	for (int q = 0; q < g->nq; q++)
		if (p->taken[q] > 0) {
			struct ho_ring *r = ho_ring(g, q, x->queue, i);

			atomic_store_explicit(&r->tail,
					      atomic_load_explicit(&r->tail, memory_order_relaxed) +
						  p->taken[q],
					      memory_order_release);
			p->taken[q] = 0;
		}
	if (atomic_exchange(&g->flag[x->queue * g->n + i], 0) != 0)
		(void)!read(g->efd[x->queue * g->n + i], &v, sizeof(v));
}

/* Frames handed to set x for port i, after data[0..k), up to max; they stay
 * in their rings until the next recv of port i. */
static int ho_take(struct inart_xsk *x, int i, uint8_t **data, uint16_t *len, int k, int max)
{
	struct ho_group *g = x->g;
	struct xport *p = &x->p[i];
	int left = 0;

	for (int q = 0; q < g->nq; q++) {
		struct ho_ring *r = ho_ring(g, q, x->queue, i);
		unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed),
			 h = atomic_load_explicit(&r->head, memory_order_acquire);

		if (q == x->queue)
			continue;
		for (; t + p->taken[q] != h && k < max; p->taken[q]++, k++) {
			struct ho_slot *s = &r->slot[(t + p->taken[q]) & (HO_SLOTS - 1)];

			data[k] = s->data;
			len[k] = (uint16_t)s->len;
			p->st.rx++;
			p->st.rx_bytes += s->len;
		}
		left |= t + p->taken[q] != h;
	}
	if (left)
		ho_signal(g, x->queue, i); /* level-triggered: poll again */
	return k;
}

int inart_xsk_recv(struct inart_xsk *x, int i, uint8_t **data, uint16_t *len, int max)
{
	struct xport *p = &x->p[i];
	uint32_t idx = 0, n;
	uint64_t sent = 0; /* sets a frame was handed to (bit per queue) */
	int k = 0;

	refill(x, p);
	if (p->n_held > 0)
		return 0;
	if (max > x->batch)
		max = x->batch;
	if (max <= 0)
		return 0;
	if (x->g != NULL)
		ho_release(x, i);
	n = xsk_ring_cons__peek(&p->rx, (uint32_t)max, &idx);
	if (n == 0)
		return x->g != NULL ? ho_take(x, i, data, len, 0, max) : 0;
	p->st.rx_calls++;
	for (uint32_t j = 0; j < n; j++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + j);
		uint64_t a = xsk_umem__extract_addr(d->addr),
			 off = xsk_umem__add_offset_to_addr(d->addr);

		/* the frame base goes back to the fill ring whatever its content */
		p->held[p->n_held++] = a & ~(uint64_t)(FRAME - 1);
		if (off >= x->port_len || d->len > FRAME || (off & (FRAME - 1)) + d->len > FRAME ||
		    d->len > UINT16_MAX) {
			p->st.rx_trunc++;
			continue;
		}
		if (x->g != NULL) { /* the shard of another set: to its ring */
			int to = inart_shard_steer(p->base + off, d->len, x->nq);

			if (to != x->queue) {
				if (ho_push(x->g, x->queue, to, i, p->base + off, d->len))
					sent |= 1ull << to;
				continue;
			}
		}
		data[k] = p->base + off;
		len[k] = (uint16_t)d->len;
		p->st.rx++;
		p->st.rx_bytes += d->len;
		k++;
	}
	xsk_ring_cons__release(&p->rx, n);
	for (int q = 0; sent != 0 && q < x->nq; q++)
		if (sent >> q & 1)
			ho_signal(x->g, q, i);
	return x->g != NULL ? ho_take(x, i, data, len, k, max) : k;
}

/* Completed transmit frames of port p back to its free stack. */
static void reclaim(struct inart_xsk *x, struct xport *p)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&p->cq, (uint32_t)x->tx_frames, &idx);

	for (uint32_t j = 0; j < n; j++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&p->cq, idx + j);

		if (a >= (uint64_t)x->rx_frames * FRAME && a < x->port_len &&
		    p->n_free < x->tx_frames)
			p->free_tx[p->n_free++] = a & ~(uint64_t)(FRAME - 1);
	}
	if (n > 0)
		xsk_ring_cons__release(&p->cq, n);
	p->st.tx += n;
}

int inart_xsk_queue(struct inart_xsk *x, int i, const uint8_t *frame, size_t len)
{
	struct xport *p = &x->p[i];
	struct xdp_desc *d;
	uint32_t idx = 0;

	if (p->n_free == 0)
		reclaim(x, p);
	if (len > FRAME || len == 0 || p->n_free == 0 ||
	    xsk_ring_prod__reserve(&p->tx, 1, &idx) != 1) {
		p->st.tx_drops++;
		return -ENOBUFS;
	}
	d = xsk_ring_prod__tx_desc(&p->tx, idx);
	d->addr = p->free_tx[--p->n_free];
	d->len = (uint32_t)len;
	d->options = 0;
	memcpy(p->base + d->addr, frame, len);
	p->st.tx_bytes += len;
	p->tx_n++;
	return 0;
}

/* Descriptors submitted that the kernel has not taken yet. */
static uint32_t outstanding(const struct xport *p)
{
	uint32_t cons = __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE);

	return *p->tx.producer - cons;
}

int inart_xsk_pending(const struct inart_xsk *x, int i)
{
	const struct xport *p = &x->p[i];

	/* frames the kernel refused to take stay in the ring (submitted
	   descriptors cannot be withdrawn) and go out at the next kick that
	   works; they are not pending meanwhile, or the loop would spin */
	return p->tx_n + (p->stalled ? 0 : (int)outstanding(p));
}

int inart_xsk_flush(struct inart_xsk *x, int i)
{
	struct xport *p = &x->p[i];

	if (p->tx_n > 0) {
		xsk_ring_prod__submit(&p->tx, (uint32_t)p->tx_n);
		p->tx_n = 0;
	}
	for (int k = 0; k < KICKS_MAX && outstanding(p) > 0; k++) {
		if (!xsk_ring_prod__needs_wakeup(&p->tx))
			break; /* the driver sends on its own (zero-copy) */
		p->st.tx_calls++;
		p->stalled = 0;
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			continue;
		if (errno == EAGAIN || errno == EINTR)
			continue; /* copy mode: a batch sent, more to go */
		if (errno == ENOBUFS || errno == EBUSY) {
			p->st.tx_blocked++;
			break;
		}
		p->st.tx_errors++; /* e.g. ENETDOWN, ENXIO: the ring keeps them */
		p->stalled = 1;
		break;
	}
	reclaim(x, p);
	return (int)outstanding(p);
}

int inart_xsk_clear_error(struct inart_xsk *x, int i)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(x->p[i].fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		return errno;
	return e;
}

void inart_xsk_stats(struct inart_xsk *x, int i, struct inart_afp_stats *st)
{
	struct xport *p = &x->p[i];
	struct xdp_statistics ks;
	socklen_t l = sizeof(ks);

	memset(&ks, 0, sizeof(ks));
	if (getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &ks, &l) == 0) {
		/* the kernel's counters do not reset: since open.  A frame
		   that found the fill ring empty is counted in rx_dropped and
		   again in rx_fill_ring_empty_descs: only once here */
		p->st.rx_kernel_drops = ks.rx_dropped + ks.rx_ring_full;
	}
	*st = p->st;
	st->tx_errors += ks.tx_invalid_descs;
	if (x->g != NULL) /* frames lost handing them to their shard's worker */
		st->rx_kernel_drops += x->g->drops[x->queue * x->g->n + i];
}

int inart_xsk_sync_port(struct inart_xsk *x, int i, const uint8_t mac[6], const uint8_t *peer_mac,
			uint32_t peer_ip, int fwd)
{
	struct inart_xdp_port v;
	uint32_t key = (uint32_t)i;

	memset(&v, 0, sizeof(v));
	memcpy(v.mac, mac, 6);
	if (peer_mac != NULL) {
		memcpy(v.peer_mac, peer_mac, 6);
		v.peer_known = 1;
	}
	v.peer_ip = htonl(peer_ip);
	v.fwd = fwd ? 1 : 0;
	if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.ports), &key, &v, BPF_ANY) < 0)
		return -errno;
	return 0;
}

/* The program stops using hosts (xdp_switch.h): hosts_on 0 and, if it was
 * 1, an RCU grace period (membarrier's global command waits for one), after
 * which no program that still read 1 runs.  0, or -errno (no such command,
 * e.g. under nohz_full): then hosts stays off for good, the program exact
 * without it. */
static int hosts_off(struct inart_xsk *x)
{
	if (!__atomic_exchange_n(&x->skel->bss->hosts_on, 0, __ATOMIC_SEQ_CST))
		return 0;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0) {
		x->hosts_never = 1;
		return -errno;
	}
	return 0;
}

/* Into x->hosts_new's slot of addr: val, unless the slot holds another
 * address (then several: the slow way) or addr is own (own wins). */
static void host_put(struct inart_xsk *x, uint32_t addr, uint32_t val)
{
	struct inart_xdp_host *e = &x->hosts_new[inart_xdp_host_slot(addr)];

	if (e->val == 0) {
		e->addr = addr;
		e->val = val;
	} else if (e->addr != addr || e->val == INART_XDP_HOST_SLOW) {
		e->addr = 0;
		e->val = INART_XDP_HOST_SLOW;
	} else if (e->val != INART_XDP_HOST_OWN)
		e->val = val; /* the same /32 again: the last wins, as in the trie */
}

/* Before a sync changes own_ips or the trie (x->own, x->h32 already its
 * input): the table of them into hosts_new; if it differs from the map's,
 * the program stops using the map (hosts_off).  An unchanged table stays
 * in use: it answers for the same addresses before, during and after. */
static void hosts_begin(struct inart_xsk *x)
{
	memset(x->hosts_new, 0, INART_XDP_HOST_SLOTS * sizeof(*x->hosts_new));
	for (int i = 0; i < x->n_own; i++)
		host_put(x, x->own[i], INART_XDP_HOST_OWN);
	for (int i = 0; i < x->n_h32; i++) {
		uint32_t port = x->h32[i].val;
		int own = 0;

		for (int k = 0; k < x->n_own && !own; k++)
			own = x->own[k] == x->h32[i].addr;
		if (!own)
			host_put(x, x->h32[i].addr,
				 port < INART_XDP_MAX_PORTS ? port + 1 : INART_XDP_HOST_SLOW);
	}
	if (!x->hosts_ok ||
	    memcmp(x->hosts, x->hosts_new, INART_XDP_HOST_SLOTS * sizeof(*x->hosts)) != 0)
		hosts_off(x); /* (failed: hosts_never) */
}

/* After the sync (ok: it completed): hosts_new into the map (the slots that
 * changed) and hosts_on 1, once the last syncs of own_ips and of the routes
 * both completed (own and h32 are then what the maps hold); on a failure
 * the program stops using it.  0 or -errno (hosts_on stays 0: own_ips and
 * the trie decide, as exactly). */
static int hosts_end(struct inart_xsk *x, int ok)
{
	int fd = bpf_map__fd(x->skel->maps.hosts);

	if (!ok) {
		hosts_off(x);
		return 0;
	}
	if (x->skel->bss->hosts_on || x->hosts_never || !x->own_ok || !x->routes_ok)
		return 0; /* on: unchanged (hosts_begin) */
	for (uint32_t k = 0; k < INART_XDP_HOST_SLOTS; k++) {
		if (x->hosts_ok && memcmp(&x->hosts[k], &x->hosts_new[k], sizeof(x->hosts[k])) == 0)
			continue;
		if (bpf_map_update_elem(fd, &k, &x->hosts_new[k], BPF_ANY) < 0) {
			x->hosts_ok = 0;
			return -errno;
		}
		x->hosts[k] = x->hosts_new[k];
	}
	x->hosts_ok = 1;
	__atomic_store_n(&x->skel->bss->hosts_on, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int inart_xsk_sync_own_ips(struct inart_xsk *x, const uint32_t *ips, int n)
{
	int fd = bpf_map__fd(x->skel->maps.own_ips), rc = 0;
	uint32_t key, next, one = 1;
	void *prev = NULL;

	x->n_own = 0;
	x->own_ok = 0;
	for (int i = 0; i < n; i++)
		if (ips[i] != 0 && x->n_own < INART_XDP_MAX_OWN_IPS) /* (else E2BIG below) */
			x->own[x->n_own++] = htonl(ips[i]);
	hosts_begin(x);
	for (int i = 0; i < n && rc == 0; i++) {
		key = htonl(ips[i]);
		if (ips[i] != 0 && bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0)
			rc = -errno;
	}
	while (rc == 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		int keep = 0;

		for (int i = 0; i < n && !keep; i++)
			keep = htonl(ips[i]) == next;
		key = next;
		if (!keep && bpf_map_delete_elem(fd, &key) == 0)
			prev = NULL; /* start over: the walk order may change */
		else
			prev = &key;
	}
	x->own_ok = rc == 0;
	if (rc < 0) {
		hosts_end(x, 0);
		return rc;
	}
	return hosts_end(x, 1);
}

static struct inart_xdp_route_key route_key(const struct inart_route *r)
{
	struct inart_xdp_route_key k;
	uint32_t mask = r->len == 0 ? 0 : ~0u << (32 - r->len);

	k.prefixlen = r->len;
	k.addr = htonl(r->prefix & mask);
	return k;
}

int inart_xsk_sync_routes(struct inart_xsk *x, const struct inart_route *r, int n,
			  struct inart_err *err)
{
	int fd = bpf_map__fd(x->skel->maps.routes), rc;
	struct inart_xdp_route_key key, next;
	struct inart_xdp_host *h32;
	void *prev = NULL;

	h32 = realloc(x->h32, ((size_t)n + 1) * sizeof(*h32));
	if (h32 == NULL) {
		hosts_end(x, 0);
		x->routes_ok = 0;
		return inart_err_set(err, -ENOMEM, "XDP routes: out of memory");
	}
	x->h32 = h32;
	x->n_h32 = 0;
	x->routes_ok = 0;
	for (int i = 0; i < n; i++)
		if (r[i].len == 32)
			h32[x->n_h32++] = (struct inart_xdp_host){htonl(r[i].prefix), r[i].port};
	hosts_begin(x);
	for (int i = 0; i < n; i++) {
		uint32_t port = r[i].port;

		key = route_key(&r[i]);
		if (r[i].len > 32 || bpf_map_update_elem(fd, &key, &port, BPF_ANY) < 0) {
			rc = inart_err_set(err, r[i].len > 32 ? -EINVAL : -errno,
					   "XDP route %d (/%u): %s", i, r[i].len,
					   strerror(r[i].len > 32 ? EINVAL : errno));
			hosts_end(x, 0);
			return rc;
		}
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		int keep = 0;

		for (int i = 0; i < n && !keep; i++) {
			struct inart_xdp_route_key k = route_key(&r[i]);

			keep = k.prefixlen == next.prefixlen && k.addr == next.addr;
		}
		key = next;
		if (!keep && bpf_map_delete_elem(fd, &key) == 0)
			prev = NULL;
		else
			prev = &key;
	}
	x->routes_ok = 1;
	rc = hosts_end(x, 1);
	if (rc < 0)
		return inart_err_set(err, rc, "XDP routes: the /32 table (%s): by the trie only",
				     strerror(-rc));
	return 0;
}

int inart_xsk_agg_map_fd(const struct inart_xsk *x)
{
	return bpf_map__fd(x->skel->maps.agg_cpus);
}

int inart_xsk_agg_prog_fd(const struct inart_xsk *x)
{
	return bpf_map__fd(x->skel->maps.agg_prog);
}

int inart_xsk_agg_steer(struct inart_xsk *x, int n_cpus, const int *cpus, int any)
{
	struct inart_xdp_agg_steer st = {0};
	uint32_t zero = 0;

	if (n_cpus < 0 || n_cpus > INART_XDP_MAX_CPUS)
		return -EINVAL;
	st.n = (uint32_t)n_cpus;
	st.any = any ? 1 : 0;
	for (int i = 0; i < n_cpus; i++)
		st.cpu[i] = (uint32_t)cpus[i];
	if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.agg_steer), &zero, &st, BPF_ANY) < 0)
		return -errno;
	return 0;
}

int inart_xsk_counters(const struct inart_xsk *x, uint64_t *c)
{
	int ncpu = libbpf_num_possible_cpus(), fd = x->ctrs_fd, rc = 0;
	struct inart_xdp_fwd_ctrs *f;
	uint64_t v[1024];
	uint32_t zero = 0;

	if (ncpu <= 0 || ncpu > 1024)
		return -EINVAL;
	for (uint32_t k = 0; k < INART_XDP_N_CTRS; k++) {
		c[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v) < 0)
			return -errno;
		for (int j = 0; j < ncpu; j++)
			c[k] += v[j];
	}
	if (x->skel == NULL)
		return 0; /* a host's program: no fctrs */
	f = malloc((size_t)ncpu * sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.fctrs), &zero, f) < 0)
		rc = -errno;
	for (int j = 0; j < ncpu && rc == 0; j++) {
		c[INART_XDP_FWD] += f[j].fwd;
		c[INART_XDP_FWD_BYTES] += f[j].fwd_bytes;
		for (int p = 0; p < INART_XDP_MAX_PORTS; p++)
			for (int k = 0; k < 4; k++)
				c[INART_XDP_CTR_N + 4 * p + k] += f[j].port[p][k];
	}
	free(f);
	return rc;
}

#endif
