/*
 * test_xdp_host: the XDP program of `inart ps --io xdp` (bpf/xdp_host.bpf.c)
 * on random frames (BPF_PROG_TEST_RUN, no interface needed): mutations of a
 * valid InArt datagram to the host (ethertype, version, IHL with options,
 * protocol, fragment bits, destination address and port, lengths cut,
 * random bytes flipped) and random garbage.  For every frame the verdict
 * (steered to the socket: counted INART_XDP_ABORT in the test, where no
 * socket is in the map; passed to the stack otherwise) must equal a
 * reference written here from the header layout, and every frame dp/pkt's
 * parser takes as a UDP datagram to the host's address and port (what
 * io/ethudp delivers to the PS) must be steered: none is lost to the
 * stack.  Needs root (loading BPF); exits 77 (skipped) otherwise.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rng.h"
#include "dp/pkt.h"
#include "io/xdp_host.h"
#include "io/xdp_switch.h"
#include <xdp_host.skel.h>

#define FRAMES 6000
#define IP 0x0a000004u
#define PORT 47470

static struct inart_rng rng;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)inart_rng_below(&rng, n);
}

static int quiet(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return 0;
}

/* The reference: 1 if the frame should go to the socket. */
static int want_up(const uint8_t *f, size_t len)
{
	size_t ihl, u;

	if (len < 34 || f[12] != 0x08 || f[13] != 0x00)
		return 0;
	ihl = (size_t)(f[14] & 0x0f) * 4;
	if ((f[14] >> 4) != 4 || ihl < 20 || f[23] != 17 || ((f[20] << 8 | f[21]) & 0x3fff) != 0)
		return 0;
	if (((uint32_t)f[30] << 24 | (uint32_t)f[31] << 16 | (uint32_t)f[32] << 8 | f[33]) != IP)
		return 0;
	u = 14 + ihl;
	return len >= u + 8 && (f[u + 2] << 8 | f[u + 3]) == PORT;
}

/* A frame: a valid datagram to the host, then mutated. */
static size_t make(uint8_t *f, size_t cap)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1}, gw[6] = {2, 0, 0, 0, 0, 2};
	uint8_t payload[512];
	size_t plen = 1 + rnd(sizeof(payload)), len, k;
	uint32_t dst = rnd(4) ? IP : IP + 1 + rnd(3);
	uint16_t dport = rnd(4) ? PORT : (uint16_t)(PORT - 1 + rnd(3));

	for (k = 0; k < plen; k++)
		payload[k] = (uint8_t)rnd(256);
	if (rnd(20) == 0) { /* garbage */
		len = rnd((uint32_t)cap);
		for (k = 0; k < len; k++)
			f[k] = (uint8_t)rnd(256);
		return len;
	}
	len = inart_pkt_build_udp(f, cap, gw, mac, 0x0a000001u, dst, 40000, dport, payload, plen);
	switch (rnd(10)) {
	case 0: /* IP options: move the UDP header */
		if (len + 8 <= cap) {
			memmove(f + 42, f + 34, len - 34);
			memset(f + 34, 1, 8); /* NOPs */
			f[14] = 0x47;
			f[16] = (uint8_t)((len - 6) >> 8);
			f[17] = (uint8_t)(len - 6);
			f[24] = f[25] = 0;
			len += 8;
		}
		break;
	case 1:
		f[20] |= (uint8_t)(rnd(2) ? 0x20 : 0x01); /* MF or an offset */
		break;
	case 2:
		f[23] = (uint8_t)(rnd(2) ? 6 : rnd(256));
		break;
	case 3:
		f[12] = (uint8_t)(rnd(2) ? 0x81 : 0x08);
		f[13] = (uint8_t)(rnd(2) ? 0x06 : 0x00);
		break;
	case 4:
		f[14] = (uint8_t)rnd(256);
		break;
	case 5:
		len = rnd((uint32_t)len + 1); /* cut */
		break;
	case 6:
		for (int j = 0; j < 3; j++)
			f[rnd((uint32_t)len)] ^= (uint8_t)(1 + rnd(255));
		break;
	default:
		break;
	}
	return len;
}

static uint64_t aborts(int fd, int ncpu)
{
	uint64_t v[1024], s = 0;
	uint32_t k = INART_XDP_ABORT;

	if (bpf_map_lookup_elem(fd, &k, v) < 0)
		return 0;
	for (int i = 0; i < ncpu; i++)
		s += v[i];
	return s;
}

int main(int argc, char **argv)
{
	struct inart_xdp_host_cfg c = {.ip = htonl(IP), .port = htons(PORT), .n_queues = 1};
	uint32_t zero = 0, seed = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 24;
	int ncpu = libbpf_num_possible_cpus(), prog, ctrs, bad = 0, up = 0, parsed = 0;
	struct xdp_host *sk;
	static uint8_t f[1600];

	inart_rng_seed(&rng, seed);
	libbpf_set_print(quiet);
	sk = xdp_host__open_and_load();
	if (sk == NULL) {
		printf("test_xdp_host: cannot load the program (%s): skipped\n", strerror(errno));
		return errno == EPERM ? 77 : 1;
	}
	if (bpf_map_update_elem(bpf_map__fd(sk->maps.cfg), &zero, &c, BPF_ANY) < 0) {
		printf("cfg: %s\n", strerror(errno));
		return 1;
	}
	prog = bpf_program__fd(sk->progs.inart_xdp_host);
	ctrs = bpf_map__fd(sk->maps.ctrs);
	for (int i = 0; i < FRAMES; i++) {
		size_t len = make(f, 1514);
		struct inart_pkt_info pi;
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)len);
		uint64_t a0 = aborts(ctrs, ncpu), a1;
		int got, w = want_up(f, len), acc;

		if (len < 14)
			continue; /* the kernel refuses a test frame shorter than Ethernet */
		if (bpf_prog_test_run_opts(prog, &o) < 0) {
			printf("frame %d: test run: %s\n", i, strerror(errno));
			return 1;
		}
		a1 = aborts(ctrs, ncpu);
		got = a1 > a0;
		acc = inart_pkt_parse(f, len, &pi) == 0 && pi.ethertype == INART_ETHERTYPE_IPV4 &&
		      pi.is_udp && pi.dst_ip == IP && pi.dport == PORT;
		if (o.retval != XDP_PASS || got != w || (acc && !got)) {
			if (bad++ < 10)
				printf(
				    "frame %d (%zu bytes): verdict %u, up %d, reference %d, parser "
				    "takes it %d\n",
				    i, len, o.retval, got, w, acc);
		}
		up += got;
		parsed += acc;
	}
	xdp_host__destroy(sk);
	printf("test_xdp_host: %d frames, %d steered up, %d taken by the parser, %d wrong\n",
	       FRAMES, up, parsed, bad);
	return bad == 0 && up > FRAMES / 4 && parsed > FRAMES / 5 ? 0 : 1;
}
