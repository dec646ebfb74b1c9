/*
 * test_xdp_prog: the XDP program of switchd --io xdp (bpf/xdp_switch.bpf.c)
 * against the switch core (dp/switch) on the same frames: random IPv4
 * frames (addresses in and out of the routes, the switch's own address, a
 * spoofed source, TTL 0..2 and 64, UDP to the InArt port and elsewhere,
 * IHL, lengths, padding, a few random bytes flipped) go through the program
 * (BPF_PROG_TEST_RUN, no interface needed: the ingress is lo, mapped to
 * port 0) and through inart_switch_rx.  Whatever the program forwards in
 * the kernel (XDP_REDIRECT: no AF_XDP socket in the test, so everything it
 * sends up comes back as XDP_PASS) the core must forward too: one frame,
 * byte for byte the same (MACs, TTL, checksum, trimmed padding), out of
 * the port the program counted.  Twice: with the program's maps as
 * before its fast tables (ifports, own_ips and the trie only) and as
 * io/xsk fills them now (ifslots instead of ifports, the hosts table of own
 * addresses and /32 routes in front of the trie, one of its slots marked
 * shared); in both, fixed frames to an own address, without a route, with
 * TTL 1, from a spoofed source, and to addresses whose longest prefix is a
 * /32, a /25 over a /24, a /16, must go up or out of the expected port.
 * Prints the program's ns per forwarded frame (bpf stats) of each.  Needs
 * root (loading BPF); exits 77 (skipped) otherwise.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/switch.h" /* first: see apply() */
#ifdef INART_ERR_H
#define SWITCH_HAS_ERR 1
#endif
#include "common/rng.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "io/xdp_switch.h"
#include <xdp_switch.skel.h>

#define NP 4
#define FRAMES 20000

static int quiet(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return 0;
}

/* the corpus's generator (common/rng.h), seeded in main */
static struct inart_rng rng;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)inart_rng_below(&rng, n);
}

static void port_macs(int p, uint8_t mac[6], uint8_t peer[6])
{
	static const uint8_t m[6] = {2, 0, 0, 0, 0, 0}, q[6] = {2, 0, 0, 0, 1, 0};

	memcpy(mac, m, 6);
	memcpy(peer, q, 6);
	mac[5] = (uint8_t)p;
	peer[5] = (uint8_t)p;
}

#define HOST 0x0a000001u   /* the host on port 0 (ingress filtering) */
#define OWN 0x0a000901u	   /* port 3's address */
#define SHARED 0x0a000303u /* its hosts slot marked shared (no /32 of its own) */
static const struct inart_route routes[] = {
    {0x0a000100, 24, 1}, {0x0a000200, 24, 2}, {0x0a000000, 16, 3}, {0x0a000180, 25, 2},
    {0x08080800, 24, 1}, {0x0a000105, 32, 3}, {0x0a000207, 32, 1}, {OWN, 32, 2},
};
#define NR (sizeof(routes) / sizeof(routes[0]))

/* hosts[] as io/xsk fills it: own addresses, then the /32 routes (an own
 * address keeps its mark); the test's addresses each have a slot of their
 * own (checked), SHARED's slot is marked as shared by several. */
static int fill_hosts(struct xdp_switch *sk)
{
	int fd = bpf_map__fd(sk->maps.hosts);
	struct inart_xdp_host e = {htonl(OWN), INART_XDP_HOST_OWN};
	uint32_t k = inart_xdp_host_slot(e.addr), used[NR + 2];
	int n = 0;

	if (bpf_map_update_elem(fd, &k, &e, BPF_ANY) < 0)
		return -errno;
	used[n++] = k;
	for (size_t i = 0; i < NR; i++) {
		if (routes[i].len != 32 || routes[i].prefix == OWN)
			continue;
		e.addr = htonl(routes[i].prefix);
		e.val = routes[i].port + 1;
		k = inart_xdp_host_slot(e.addr);
		for (int j = 0; j < n; j++)
			if (used[j] == k)
				return -EEXIST; /* the test's addresses collide: change them */
		used[n++] = k;
		if (bpf_map_update_elem(fd, &k, &e, BPF_ANY) < 0)
			return -errno;
	}
	e.addr = 0;
	e.val = INART_XDP_HOST_SLOW;
	k = inart_xdp_host_slot(htonl(SHARED));
	for (int j = 0; j < n; j++)
		if (used[j] == k)
			return -EEXIST;
	if (bpf_map_update_elem(fd, &k, &e, BPF_ANY) < 0)
		return -errno;
	sk->bss->hosts_on = 1;
	return 0;
}

/* The program's maps as switchd's sync would fill them; fast: with its
 * ifslots and hosts tables (else ifports and the trie alone). */
static int fill_maps(struct xdp_switch *sk, int fast)
{
	uint32_t lo = if_nametoindex("lo"), zero = 0, one = 1, own = htonl(OWN);
	uint32_t slot = lo & (INART_XDP_IFSLOTS - 1);
	struct inart_xdp_ifslot sl = {lo, 0};

	if ((fast ? bpf_map_update_elem(bpf_map__fd(sk->maps.ifslots), &slot, &sl, BPF_ANY)
		  : bpf_map_update_elem(bpf_map__fd(sk->maps.ifports), &lo, &zero, BPF_ANY)) < 0 ||
	    bpf_map_update_elem(bpf_map__fd(sk->maps.own_ips), &own, &one, BPF_ANY) < 0)
		return -errno;
	for (uint32_t p = 0; p < NP; p++) {
		struct inart_xdp_port v = {.peer_known = 1, .fwd = 1};

		port_macs((int)p, v.mac, v.peer_mac);
		v.peer_ip = p == 0 ? htonl(HOST) : 0;
		if (bpf_map_update_elem(bpf_map__fd(sk->maps.ports), &p, &v, BPF_ANY) < 0 ||
		    bpf_map_update_elem(bpf_map__fd(sk->maps.devs), &p, &lo, BPF_ANY) < 0)
			return -errno;
	}
	for (size_t i = 0; i < NR; i++) {
		struct inart_xdp_route_key k = {
		    routes[i].len,
		    htonl(routes[i].prefix & (routes[i].len ? ~0u << (32 - routes[i].len) : 0))};
		uint32_t port = routes[i].port;

		if (bpf_map_update_elem(bpf_map__fd(sk->maps.routes), &k, &port, BPF_ANY) < 0)
			return -errno;
	}
	return fast ? fill_hosts(sk) : 0;
}

/* inart_switch_apply reports its error in a (char *, size_t) buffer on this
 * branch's base and in a struct inart_err on main since, where dp/switch.h
 * includes common/err.h (included first above for this test): either
 * compiles. */
static int apply(struct inart_switch *sw, const struct inart_sw_update *u, char *why, size_t n)
{
#ifdef SWITCH_HAS_ERR
	struct inart_err e = {{0}};
	int rc = inart_switch_apply(sw, u, &e);

	snprintf(why, n, "%.200s", e.msg);
	return rc;
#else
	return inart_switch_apply(sw, u, why, n);
#endif
}

static struct inart_switch *core(void)
{
	struct inart_sw_cfg cfg;
	struct inart_sw_update u = {.replace = 1, .n_routes = NR, .routes = routes};
	struct inart_switch *sw;
	char why[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = NP;
	cfg.pool_slots = 16;
	cfg.flush_timeout_ns = 1000000;
	for (int p = 0; p < NP; p++)
		port_macs(p, cfg.ports[p].mac, cfg.ports[p].peer_mac);
	cfg.ports[0].peer_ip = HOST;
	cfg.ports[3].ip = OWN;
	sw = inart_switch_create(&cfg);
	if (sw == NULL || apply(sw, &u, why, sizeof(why)) < 0) {
		fprintf(stderr, "test_xdp_prog: core: %s\n", why);
		exit(1);
	}
	return sw;
}

/* A random frame into f; its length. */
static size_t make_frame(uint8_t *f)
{
	static const uint32_t dsts[] = {0x0a000105, 0x0a0001c8, 0x0a000207, SHARED,
					OWN,	    0xc0a80101, 0x08080808, 0x0a000106};
	uint8_t smac[6] = {2, 9, 9, 9, 9, 9}, dmac[6], peer[6], pay[1100];
	uint32_t src = rnd(8) ? HOST : HOST + 1, dst = dsts[rnd(8)]; /* 192.168: no route */
	uint16_t dport = rnd(4) ? (uint16_t)(1000 + rnd(100)) : INART_WIRE_UDP_PORT;
	size_t plen = rnd(4) ? rnd(64) : rnd(1000), len;
	uint8_t *ip = f + 14;

	port_macs(0, dmac, peer);
	for (size_t i = 0; i < plen; i++)
		pay[i] = (uint8_t)rnd(256);
	len = inart_pkt_build_udp(f, INART_FRAME_MAX, smac, dmac, src, dst, 5000, dport, pay, plen);
	if (rnd(3) == 0)
		ip[9] = (uint8_t)(rnd(2) ? 1 : 6); /* ICMP or TCP: plain */
	ip[8] = (uint8_t)(rnd(4) ? 64 : rnd(3));
	if (rnd(8) == 0)
		inart_put_be16(ip + 6, 0x2000 | (uint16_t)rnd(8)); /* a fragment */
	inart_put_be16(ip + 10, 0);
	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, 20));
	if (rnd(6) == 0) /* padding behind the datagram */
		for (size_t e = len + rnd(40); len < e && len < INART_FRAME_MAX; len++)
			f[len] = 0;
	for (int k = (int)rnd(4) - 2; k > 0; k--) /* damage: a byte of the headers */
		f[14 + rnd(28)] ^= (uint8_t)(1 + rnd(255));
	if (rnd(10) == 0)
		len = 14 + rnd((uint32_t)(len - 14)); /* cut short */
	return len < 14 ? 14 : len;
}

static uint64_t tx_count(struct xdp_switch *sk, int p)
{
	static struct inart_xdp_fwd_ctrs v[1024];
	uint64_t s = 0;
	uint32_t k = 0;
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu > 1024 || bpf_map_lookup_elem(bpf_map__fd(sk->maps.fctrs), &k, v) < 0)
		return 0;
	for (int j = 0; j < ncpu; j++)
		s += v[j].port[p][INART_XDP_P_TX];
	return s;
}

/* One frame through the program and the core: the program's verdict
 * (XDP_PASS: up) and in *eg the port it counted a transmit on (-1: none);
 * 1 if the two differ (reported), else 0. */
static int one_frame(struct xdp_switch *sk, struct inart_switch *sw, const uint8_t *f, size_t len,
		     uint64_t *before, unsigned *verdict, int *eg, const char *what)
{
	static uint8_t outbuf[8][INART_FRAME_MAX];
	struct inart_frame out[8];
	uint8_t xo[INART_FRAME_MAX + 64], c[INART_FRAME_MAX + 64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)len,
		    .data_out = xo, .data_size_out = sizeof(xo), .repeat = 1);
	struct inart_frame in = {c, (uint16_t)len, 0};
	int n;

	for (int i = 0; i < 8; i++)
		out[i].data = outbuf[i];
	memcpy(c, f, len);
	n = inart_switch_rx(sw, &in, 1, out, 8);
	if (bpf_prog_test_run_opts(bpf_program__fd(sk->progs.inart_xdp_switch), &o) < 0) {
		fprintf(stderr, "test_xdp_prog: test run: %s\n", strerror(errno));
		exit(1);
	}
	*verdict = o.retval;
	*eg = -1;
	if (o.retval == XDP_PASS)
		return 0;
	for (int p = 0; p < NP; p++)
		if (tx_count(sk, p) != before[p]) {
			*eg = p;
			before[p]++;
		}
	if (o.retval != XDP_REDIRECT || n != 1 || out[0].port != *eg ||
	    out[0].len != o.data_size_out || memcmp(out[0].data, xo, out[0].len) != 0) {
		if (what != NULL)
			fprintf(stderr,
				"test_xdp_prog: %s (%zu bytes): program %u -> port %d, %u bytes; "
				"core %d frames, port %d, %u bytes\n",
				what, len, o.retval, *eg, o.data_size_out, n,
				n > 0 ? out[0].port : -1, n > 0 ? out[0].len : 0);
		return 1;
	}
	return 0;
}

/* A UDP frame from src to dst with TTL ttl into f; its length. */
static size_t fixed_frame(uint8_t *f, uint32_t src, uint32_t dst, uint8_t ttl)
{
	uint8_t smac[6] = {2, 9, 9, 9, 9, 9}, dmac[6], peer[6], pay[64] = {0};
	size_t len;

	port_macs(0, dmac, peer);
	len = inart_pkt_build_udp(f, INART_FRAME_MAX, smac, dmac, src, dst, 5000, 47471, pay,
				  sizeof(pay));
	f[14 + 8] = ttl;
	inart_put_be16(f + 14 + 10, 0);
	inart_put_be16(f + 14 + 10, inart_pkt_ip_csum(f + 14, 20));
	return len;
}

/* The fixed cases: each frame up (-1) or out of its port, as the core.
 * The number of failures. */
static int fixed_cases(struct xdp_switch *sk, struct inart_switch *sw, uint64_t *before,
		       const char *mode)
{
	static const struct {
		const char *what;
		uint32_t src, dst;
		uint8_t ttl;
		int port;
	} t[] = {
	    {"to an own address (with a /32 route)", HOST, OWN, 64, -1},
	    {"without a route", HOST, 0xc0a80101, 64, -1},
	    {"TTL 1", HOST, 0x0a000105, 1, -1},
	    {"a spoofed source", HOST + 1, 0x0a000105, 64, -1},
	    {"a /32 over a /24", HOST, 0x0a000105, 64, 3},
	    {"the /24 beside that /32", HOST, 0x0a000106, 64, 1},
	    {"a /25 over a /24", HOST, 0x0a000185, 64, 2},
	    {"a /32 over a /24 and a /16", HOST, 0x0a000207, 64, 1},
	    {"a /16 (its hosts slot shared)", HOST, SHARED, 64, 3},
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t f[INART_FRAME_MAX];
		size_t len = fixed_frame(f, t[i].src, t[i].dst, t[i].ttl);
		unsigned v;
		int eg, d = one_frame(sk, sw, f, len, before, &v, &eg, t[i].what);

		if (d || eg != t[i].port || (t[i].port < 0) != (v == XDP_PASS)) {
			fprintf(stderr, "test_xdp_prog: %s: %s: verdict %u, port %d, want %d\n",
				mode, t[i].what, v, eg, t[i].port);
			bad++;
		}
	}
	return bad;
}

/* The program's mean ns per forwarded frame (bpf stats; -1 if they
 * cannot be had): a /32's frame, 20000 runs. */
static double ns_per_frame(struct xdp_switch *sk)
{
	int fd = bpf_program__fd(sk->progs.inart_xdp_switch),
	    sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	struct bpf_prog_info a = {0}, b = {0};
	uint32_t la = sizeof(a), lb = sizeof(b);
	uint8_t f[INART_FRAME_MAX], xo[INART_FRAME_MAX + 64];
	size_t len = fixed_frame(f, HOST, 0x0a000105, 64);

	if (sfd < 0 || bpf_obj_get_info_by_fd(fd, &a, &la) < 0)
		return -1;
	for (int i = 0; i < 20000; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)len,
			    .data_out = xo, .data_size_out = sizeof(xo), .repeat = 1);

		if (bpf_prog_test_run_opts(fd, &o) < 0)
			break;
	}
	close(sfd);
	if (bpf_obj_get_info_by_fd(fd, &b, &lb) < 0 || b.run_cnt <= a.run_cnt)
		return -1;
	return (double)(b.run_time_ns - a.run_time_ns) / (double)(b.run_cnt - a.run_cnt);
}

/* The corpus and the fixed cases through a program filled as fast says.
 * 0 if all as the core, else 1. */
static int run_mode(int fast)
{
	const char *mode = fast ? "ifslots+hosts" : "ifports+trie";
	struct xdp_switch *sk = xdp_switch__open_and_load();
	struct inart_switch *sw;
	uint64_t before[NP];
	int fwd = 0, up = 0, bad = 0, rc;

	if (sk == NULL || (rc = fill_maps(sk, fast)) < 0) {
		fprintf(stderr, "test_xdp_prog: loading the program: %s\n",
			strerror(sk == NULL ? errno : -rc));
		exit(1);
	}
	sw = core();
	for (int p = 0; p < NP; p++)
		before[p] = tx_count(sk, p);
	for (int i = 0; i < FRAMES; i++) {
		uint8_t f[INART_FRAME_MAX + 64];
		size_t len = make_frame(f);
		char what[32];
		unsigned v;
		int eg, d;

		snprintf(what, sizeof(what), "frame %d", i);
		d = one_frame(sk, sw, f, len, before, &v, &eg, bad < 5 ? what : NULL);
		bad += d;
		if (v == XDP_PASS)
			up++;
		else
			fwd++;
	}
	bad += fixed_cases(sk, sw, before, mode);
	printf("test_xdp_prog: %s: %d frames: %d forwarded in the program (all as the core), "
	       "%d up, %d differences; %.1f ns per forwarded frame\n",
	       mode, FRAMES, fwd, up, bad, ns_per_frame(sk));
	inart_switch_destroy(sw);
	xdp_switch__destroy(sk);
	/* a test that cannot fail is no test: the program must forward some */
	return bad == 0 && fwd > FRAMES / 10 && up > FRAMES / 10 ? 0 : 1;
}

int main(void)
{
	int rc;

	if (geteuid() != 0) {
		printf("test_xdp_prog: not root, skipped\n");
		return 77;
	}
	libbpf_set_print(quiet);
	inart_rng_seed(&rng, 88172645463325252ull);
	rc = run_mode(0);
	rc |= run_mode(1);
	return rc;
}
