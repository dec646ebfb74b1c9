/* Tests of pkt: UDP and ARP frames built and parsed, IPv4 options, fragments,
 * checksum, and malformed frames of every kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/pkt.h"

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
#define IP_A 0x0a000001u /* 10.0.0.1 */
#define IP_B 0x0a000102u /* 10.0.1.2 */

static size_t build(uint8_t *f, size_t cap, size_t plen)
{
	uint8_t pl[1500];
	size_t i;

	for (i = 0; i < plen; i++)
		pl[i] = (uint8_t)(i * 7 + 1);
	return inart_pkt_build_udp(f, cap, mac_a, mac_b, IP_A, IP_B, 1234, 47470, pl, plen);
}

static void test_build_udp_bytes(void **state)
{
	uint8_t f[128];
	static const uint8_t want[42] = {0x02, 0,    0,	   0,	 0,    0x0b, 0x02, 0,
					 0,    0,    0,	   0x0a, 0x08, 0x00, /* Ethernet */
					 0x45, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x40, 0x00,
					 0x40, 0x11, 0x00, 0x00,			  /* csum */
					 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x01, 0x02,  /* IPs */
					 0x04, 0xd2, 0xb9, 0x6e, 0x00, 0x0b, 0x00, 0x00}; /* UDP */
	uint8_t w[42];
	size_t n;

	(void)state;
	n = build(f, sizeof(f), 3);
	assert_int_equal(n, 45);
	memcpy(w, want, sizeof(w));
	/* checksum of this header computed by hand (RFC 1071):
	 * 4500 + 001f + 0000 + 4000 + 4011 + 0a00 + 0001 + 0a00 + 0102 = 0xda33,
	 * complement 0x25cc */
	w[24] = 0x25;
	w[25] = 0xcc;
	assert_memory_equal(f, w, 42);
	assert_int_equal(f[42], 1);
	assert_int_equal(f[44], 15);
	assert_int_equal(inart_pkt_ip_csum(f + 14, 20), 0x25cc);
	/* too small */
	assert_int_equal(build(f, 44, 3), 0);
	assert_int_equal(build(f, 45, 3), 45);
}

static void test_parse_udp(void **state)
{
	uint8_t f[1600];
	struct inart_pkt_info pi;
	size_t n;

	(void)state;
	n = build(f, sizeof(f), 100);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_memory_equal(pi.dst_mac, mac_b, 6);
	assert_memory_equal(pi.src_mac, mac_a, 6);
	assert_int_equal(pi.ethertype, INART_ETHERTYPE_IPV4);
	assert_int_equal(pi.l3_off, 14);
	assert_int_equal(pi.ip_hlen, 20);
	assert_int_equal(pi.ip_len, 128);
	assert_int_equal(pi.ttl, 64);
	assert_int_equal(pi.proto, 17);
	assert_int_equal(pi.src_ip, IP_A);
	assert_int_equal(pi.dst_ip, IP_B);
	assert_true(pi.is_udp);
	assert_int_equal(pi.sport, 1234);
	assert_int_equal(pi.dport, 47470);
	assert_int_equal(pi.l4_payload_off, 42);
	assert_int_equal(pi.l4_payload_len, 100);
	assert_int_equal(f[pi.l4_payload_off + 99], (uint8_t)(99 * 7 + 1));
	/* Ethernet padding after the IP packet is fine */
	n = build(f, sizeof(f), 2);
	memset(f + n, 0xee, 60 - n);
	assert_int_equal(inart_pkt_parse(f, 60, &pi), 0);
	assert_int_equal(pi.l4_payload_len, 2);
	assert_int_equal(pi.ip_len, 30);
	/* payload already in place */
	memset(f, 0, sizeof(f));
	memcpy(f + INART_PKT_UDP_HLEN, "hello", 5);
	n = inart_pkt_build_udp(f, sizeof(f), mac_a, mac_b, IP_A, IP_B, 1, 2,
				f + INART_PKT_UDP_HLEN, 5);
	assert_int_equal(n, 47);
	assert_memory_equal(f + 42, "hello", 5);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
}

/* Insert `olen` bytes of IPv4 options (NOPs) and fix the header. */
static size_t add_options(uint8_t *f, size_t n, size_t olen)
{
	uint8_t *ip = f + 14;
	uint16_t tl = (uint16_t)(ip[2] << 8 | ip[3]);
	uint16_t cs;

	memmove(ip + 20 + olen, ip + 20, n - 34);
	memset(ip + 20, 1, olen);
	ip[0] = (uint8_t)(0x40 | (5 + olen / 4));
	tl = (uint16_t)(tl + olen);
	ip[2] = (uint8_t)(tl >> 8);
	ip[3] = (uint8_t)tl;
	cs = inart_pkt_ip_csum(ip, 20 + olen);
	ip[10] = (uint8_t)(cs >> 8);
	ip[11] = (uint8_t)cs;
	return n + olen;
}

static void fix_csum(uint8_t *f)
{
	uint8_t *ip = f + 14;
	uint16_t cs = inart_pkt_ip_csum(ip, (size_t)(ip[0] & 15) * 4);

	ip[10] = (uint8_t)(cs >> 8);
	ip[11] = (uint8_t)cs;
}

/* Set the IPv4 total length of frame g (below 256) and fix its checksum. */
static void set_ip_len(uint8_t *g, int len)
{
	g[14 + 2] = 0;
	g[14 + 3] = (uint8_t)len;
	fix_csum(g);
}

static void test_options_and_fragments(void **state)
{
	uint8_t f[1600];
	struct inart_pkt_info pi;
	size_t n;

	(void)state;
	n = add_options(f, build(f, sizeof(f), 10), 8);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_int_equal(pi.ip_hlen, 28);
	assert_true(pi.is_udp);
	assert_int_equal(pi.l4_payload_off, 14 + 28 + 8);
	assert_int_equal(pi.l4_payload_len, 10);
	assert_int_equal(pi.sport, 1234);
	/* 40 bytes of options (the maximum) */
	n = add_options(f, build(f, sizeof(f), 10), 40);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_int_equal(pi.ip_hlen, 60);
	/* More-fragments set: IPv4 parsed, UDP not */
	n = build(f, sizeof(f), 10);
	f[14 + 6] = 0x20;
	fix_csum(f);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_false(pi.is_udp);
	assert_int_equal(pi.proto, 17);
	assert_int_equal(pi.dst_ip, IP_B);
	/* A non-first fragment with garbage where UDP would be: still fine */
	n = build(f, sizeof(f), 10);
	f[14 + 6] = 0x00;
	f[14 + 7] = 0x10;
	f[14 + 20 + 4] = 0xff; /* UDP length nonsense */
	fix_csum(f);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_false(pi.is_udp);
	/* Not UDP */
	n = build(f, sizeof(f), 10);
	f[14 + 9] = 6;
	fix_csum(f);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_false(pi.is_udp);
	assert_int_equal(pi.proto, 6);
}

static void test_malformed(void **state)
{
	uint8_t f[1600], g[1600];
	struct inart_pkt_info pi;
	size_t n, k;

	(void)state;
	n = build(f, sizeof(f), 20);
	/* every truncation of an IPv4/UDP frame is malformed (total length) */
	for (k = 0; k < n; k++)
		assert_int_equal(inart_pkt_parse(f, k, &pi), -1);
	assert_int_equal(inart_pkt_parse(NULL, 60, &pi), -1);
	/* bad checksum */
	memcpy(g, f, n);
	g[14 + 10] ^= 1;
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* version 6 in an IPv4 ethertype */
	memcpy(g, f, n);
	g[14] = 0x65;
	fix_csum(g);
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* IHL 4 */
	memcpy(g, f, n);
	g[14] = 0x44;
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* IHL 15 longer than a short frame */
	memcpy(g, f, n);
	g[14] = 0x4f;
	assert_int_equal(inart_pkt_parse(g, 50, &pi), -1);
	/* total length below the header */
	memcpy(g, f, n);
	set_ip_len(g, 19);
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* total length beyond the frame */
	memcpy(g, f, n);
	g[14 + 3] = (uint8_t)(g[14 + 3] + 1);
	fix_csum(g);
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* UDP length larger than the IP payload, or below 8 */
	memcpy(g, f, n);
	g[34 + 5] = (uint8_t)(g[34 + 5] + 1);
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	memcpy(g, f, n);
	g[34 + 4] = 0;
	g[34 + 5] = 7;
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* UDP length shorter than the IP payload is accepted (trailing bytes ignored) */
	memcpy(g, f, n);
	g[34 + 5] = (uint8_t)(g[34 + 5] - 4);
	assert_int_equal(inart_pkt_parse(g, n, &pi), 0);
	assert_int_equal(pi.l4_payload_len, 16);
	/* IP packet too short for the UDP header */
	memcpy(g, f, n);
	set_ip_len(g, 24);
	assert_int_equal(inart_pkt_parse(g, n, &pi), -1);
	/* other ethertypes parse with only the Ethernet fields */
	memcpy(g, f, n);
	g[12] = 0x86;
	g[13] = 0xdd;
	assert_int_equal(inart_pkt_parse(g, n, &pi), 0);
	assert_int_equal(pi.ethertype, 0x86dd);
	assert_int_equal(pi.l3_off, 0);
	assert_false(pi.is_udp);
}

static void test_arp(void **state)
{
	uint8_t f[64];
	struct inart_pkt_info pi;
	size_t n, k;

	(void)state;
	n = inart_pkt_build_arp_reply(f, sizeof(f), mac_a, IP_A, mac_b, IP_B);
	assert_int_equal(n, 42);
	assert_memory_equal(f, mac_b, 6);
	assert_memory_equal(f + 6, mac_a, 6);
	assert_int_equal(f[12], 0x08);
	assert_int_equal(f[13], 0x06);
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_int_equal(pi.ethertype, INART_ETHERTYPE_ARP);
	assert_int_equal(pi.arp_op, 2);
	assert_memory_equal(pi.arp_sha, mac_a, 6);
	assert_int_equal(pi.arp_spa, IP_A);
	assert_int_equal(pi.arp_tpa, IP_B);
	assert_memory_equal(f + 14 + 18, mac_b, 6); /* target hardware address */
	for (k = 14; k < n; k++)
		assert_int_equal(inart_pkt_parse(f, k, &pi), -1);
	/* non-Ethernet hardware: parses, op left 0 */
	f[15] = 6;
	assert_int_equal(inart_pkt_parse(f, n, &pi), 0);
	assert_int_equal(pi.arp_op, 0);
	assert_int_equal(inart_pkt_build_arp_reply(f, 41, mac_a, IP_A, mac_b, IP_B), 0);
}

/* The checksum against a plain RFC 1071 implementation on random headers
 * of every length (odd ones too), with random checksum fields. */
static void test_csum_reference(void **state)
{
	uint8_t h[64];
	int it;

	(void)state;
	srand(1071);
	for (it = 0; it < 20000; it++) {
		size_t n = 12 + (size_t)rand() % 50, i;
		uint32_t s = 0;
		uint16_t want, got;

		for (i = 0; i < n; i++)
			h[i] = (uint8_t)(it % 3 == 0 ? 0xff : rand());
		for (i = 0; i < n; i += 2)
			if (i != 10)
				s += (uint32_t)h[i] << 8 | (i + 1 < n ? h[i + 1] : 0);
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		want = (uint16_t)~s;
		got = inart_pkt_ip_csum(h, n);
		/* 0x0000 and 0xffff are the same number in one's complement */
		if (got != want && !((got == 0 || got == 0xffff) && (want == 0 || want == 0xffff)))
			fail_msg("length %zu: csum %04x, reference %04x", n, got, want);
	}
}

/* Random bytes and random mutations of a valid frame never read outside the
 * frame (run under ASan in the fuzz build) and keep the offsets consistent. */
static void test_random_garbage(void **state)
{
	uint8_t *f = malloc(1600), base[1600];
	struct inart_pkt_info pi;
	size_t bn = build(base, sizeof(base), 64);
	int it;

	(void)state;
	srand(777);
	for (it = 0; it < 20000; it++) {
		size_t n = (size_t)(rand() % 200), i;
		uint8_t *g;

		if (it % 2) {
			n = bn;
			memcpy(f, base, bn);
			for (i = 0; i < 1 + (size_t)rand() % 4; i++)
				f[rand() % (int)bn] = (uint8_t)rand();
			if (rand() % 2)
				fix_csum(f);
		} else {
			for (i = 0; i < n; i++)
				f[i] = (uint8_t)rand();
			if (n > 14 && rand() % 2) {
				f[12] = 8;
				f[13] = (uint8_t)(rand() % 2 ? 0 : 6);
			}
		}
		/* an exactly sized heap copy so ASan sees any overread */
		g = malloc(n ? n : 1);
		memcpy(g, f, n);
		if (inart_pkt_parse(g, n, &pi) == 0 && pi.ethertype == INART_ETHERTYPE_IPV4) {
			assert_true(pi.l3_off + pi.ip_len <= n);
			assert_true(pi.ip_hlen >= 20 && pi.ip_hlen <= pi.ip_len);
			if (pi.is_udp)
				assert_true(pi.l4_payload_off + pi.l4_payload_len <=
					    pi.l3_off + pi.ip_len);
		}
		free(g);
	}
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_udp_bytes),
	    cmocka_unit_test(test_parse_udp),
	    cmocka_unit_test(test_options_and_fragments),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_arp),
	    cmocka_unit_test(test_random_garbage),
	    cmocka_unit_test(test_csum_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
