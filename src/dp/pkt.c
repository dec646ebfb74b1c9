/*
 * pkt: Ethernet II / IPv4 / UDP / ARP parsing and building (see pkt.h).
 *
 * Invariants: parsing reads only inside [frame, frame + len); every offset
 * stored in struct inart_pkt_info lies inside the frame, and
 * l4_payload_off + l4_payload_len <= l3_off + ip_len <= len.  IPv4 options
 * are accepted (ip_hlen 20..60); fragments (MF set or a fragment offset) are
 * not parsed as UDP.  Frames that are neither IPv4 nor ARP parse fine with
 * only the Ethernet fields set.  No allocation, no I/O.
 */
#include "dp/pkt.h"

#include <string.h>

#include "dp/bytes.h"

#define ARP_LEN 28

/* One's complement sum of the 16-bit big-endian words of p[0..n), folded to
 * 16 bits.  Computed on native 32-bit loads into a 64-bit accumulator (the
 * one's complement sum is independent of word size and byte order up to a
 * final byte swap, RFC 1071). */
static uint32_t sum16(const uint8_t *p, size_t n)
{
	uint64_t s = 0;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		uint32_t w;

		memcpy(&w, p + i, 4);
		s += w;
	}
	if (n - i >= 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		s += w;
		i += 2;
	}
	if (i < n) {
		uint16_t w = 0;

		memcpy(&w, p + i, 1);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = __builtin_bswap16((uint16_t)s);
#endif
	return (uint32_t)s;
}

uint16_t inart_pkt_ip_csum(const uint8_t *hdr, size_t hlen)
{
	/* sum without the checksum field = sum + ~field (one's complement) */
	uint32_t s = sum16(hdr, hlen) + (uint16_t)~inart_get_be16(hdr + 10);

	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static int parse_arp(const uint8_t *frame, size_t len, struct inart_pkt_info *pi)
{
	const uint8_t *a = frame + INART_ETH_HLEN;

	if (len < INART_ETH_HLEN + ARP_LEN)
		return -1;
	/* Only Ethernet/IPv4 ARP is understood; anything else keeps arp_op 0. */
	if (inart_get_be16(a) != 1 || inart_get_be16(a + 2) != INART_ETHERTYPE_IPV4 || a[4] != 6 ||
	    a[5] != 4)
		return 0;
	pi->arp_op = inart_get_be16(a + 6);
	memcpy(pi->arp_sha, a + 8, 6);
	pi->arp_spa = inart_get_be32(a + 14);
	pi->arp_tpa = inart_get_be32(a + 24);
	return 0;
}

static int parse_ipv4(const uint8_t *frame, size_t len, struct inart_pkt_info *pi)
{
	const uint8_t *ip = frame + INART_ETH_HLEN;
	size_t avail = len - INART_ETH_HLEN, hl;
	uint16_t frag;

	if (avail < 20 || (ip[0] >> 4) != 4)
		return -1;
	hl = (size_t)(ip[0] & 0x0f) * 4;
	if (hl < 20 || hl > avail)
		return -1;
	if (sum16(ip, hl) != 0xffff)
		return -1;
	pi->l3_off = INART_ETH_HLEN;
	pi->ip_hlen = hl;
	pi->ip_len = inart_get_be16(ip + 2);
	if (pi->ip_len < hl || pi->ip_len > avail)
		return -1;
	pi->ttl = ip[8];
	pi->proto = ip[9];
	pi->src_ip = inart_get_be32(ip + 12);
	pi->dst_ip = inart_get_be32(ip + 16);
	frag = inart_get_be16(ip + 6);
	if (pi->proto == INART_IPPROTO_UDP && (frag & 0x3fff) == 0) {
		const uint8_t *u = ip + hl;
		size_t room = pi->ip_len - hl;
		uint16_t ulen;

		if (room < 8)
			return -1;
		ulen = inart_get_be16(u + 4);
		if (ulen < 8 || ulen > room)
			return -1;
		pi->is_udp = 1;
		pi->sport = inart_get_be16(u);
		pi->dport = inart_get_be16(u + 2);
		pi->l4_payload_off = INART_ETH_HLEN + hl + 8;
		pi->l4_payload_len = (size_t)ulen - 8;
	}
	return 0;
}

int inart_pkt_parse(const uint8_t *frame, size_t len, struct inart_pkt_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	if (frame == NULL || len < INART_ETH_HLEN)
		return -1;
	memcpy(pi->dst_mac, frame, 6);
	memcpy(pi->src_mac, frame + 6, 6);
	pi->ethertype = inart_get_be16(frame + 12);
	if (pi->ethertype == INART_ETHERTYPE_IPV4)
		return parse_ipv4(frame, len, pi);
	if (pi->ethertype == INART_ETHERTYPE_ARP)
		return parse_arp(frame, len, pi);
	return 0;
}

size_t inart_pkt_build_udp(uint8_t *frame, size_t cap, const uint8_t src_mac[6],
			   const uint8_t dst_mac[6], uint32_t src_ip, uint32_t dst_ip,
			   uint16_t sport, uint16_t dport, const uint8_t *payload, size_t len)
{
	size_t total = INART_ETH_HLEN + 20 + 8 + len;
	uint8_t *ip = frame + INART_ETH_HLEN, *u = ip + 20;

	if (frame == NULL || len > 65535 - 28 || total > cap || (len > 0 && payload == NULL))
		return 0;
	memcpy(frame, dst_mac, 6);
	memcpy(frame + 6, src_mac, 6);
	inart_put_be16(frame + 12, INART_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = 0;
	inart_put_be16(ip + 2, (uint16_t)(20 + 8 + len));
	inart_put_be16(ip + 4, 0);	/* identification: DF set, never fragmented */
	inart_put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = INART_IPPROTO_UDP;
	inart_put_be16(ip + 10, 0);
	inart_put_be32(ip + 12, src_ip);
	inart_put_be32(ip + 16, dst_ip);
	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, 20));
	inart_put_be16(u, sport);
	inart_put_be16(u + 2, dport);
	inart_put_be16(u + 4, (uint16_t)(8 + len));
	inart_put_be16(u + 6, 0);
	if (len > 0 && u + 8 != payload)
		memmove(u + 8, payload, len);
	return total;
}

size_t inart_pkt_build_arp_reply(uint8_t *frame, size_t cap, const uint8_t mac[6], uint32_t ip,
				 const uint8_t req_mac[6], uint32_t req_ip)
{
	uint8_t *a = frame + INART_ETH_HLEN;

	if (frame == NULL || cap < INART_ETH_HLEN + ARP_LEN)
		return 0;
	memcpy(frame, req_mac, 6);
	memcpy(frame + 6, mac, 6);
	inart_put_be16(frame + 12, INART_ETHERTYPE_ARP);
	inart_put_be16(a, 1);
	inart_put_be16(a + 2, INART_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	inart_put_be16(a + 6, 2);
	memcpy(a + 8, mac, 6);
	inart_put_be32(a + 14, ip);
	memcpy(a + 18, req_mac, 6);
	inart_put_be32(a + 24, req_ip);
	return INART_ETH_HLEN + ARP_LEN;
}
