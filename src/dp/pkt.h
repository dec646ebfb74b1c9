/*
 * pkt: Ethernet II / IPv4 / UDP / ARP parsing and building, for the switch
 * pipeline and for the host stacks of the simulator.  Parsing never trusts a
 * length: every offset is checked against the frame.  Addresses in the
 * structs are host byte order; frames are network byte order.
 */
#ifndef INART_PKT_H
#define INART_PKT_H

#include <stddef.h>
#include <stdint.h>

#define INART_ETH_HLEN 14
#define INART_ETHERTYPE_IPV4 0x0800
#define INART_ETHERTYPE_ARP 0x0806
#define INART_IPPROTO_UDP 17
#define INART_PKT_UDP_HLEN 42 /* Ethernet + IPv4 without options + UDP */

struct inart_pkt_info {
	uint8_t dst_mac[6], src_mac[6];
	uint16_t ethertype;
	/* IPv4 (ethertype 0x0800) */
	size_t l3_off;	 /* offset of the IPv4 header */
	size_t ip_hlen;	 /* IPv4 header length */
	uint16_t ip_len; /* IPv4 total length */
	uint8_t ttl, proto;
	uint32_t src_ip, dst_ip;
	/* UDP (proto 17, not a fragment) */
	int is_udp;
	uint16_t sport, dport;
	size_t l4_payload_off; /* offset of the UDP payload in the frame */
	size_t l4_payload_len;
	/* ARP (ethertype 0x0806, Ethernet/IPv4) */
	uint16_t arp_op;
	uint8_t arp_sha[6];
	uint32_t arp_spa, arp_tpa;
};

/* 0, or -1 if the frame is malformed (too short, bad IPv4 header length or
 * checksum, total length beyond the frame, UDP length inconsistent). */
int inart_pkt_parse(const uint8_t *frame, size_t len, struct inart_pkt_info *pi);

/* Build an Ethernet/IPv4/UDP frame around payload (UDP checksum 0, IPv4
 * checksum computed, TTL 64, DF set).  Returns the frame length or 0 if cap
 * is too small.  The payload may overlap the frame (e.g. already written in
 * place at frame + INART_PKT_UDP_HLEN). */
size_t inart_pkt_build_udp(uint8_t *frame, size_t cap, const uint8_t src_mac[6],
			   const uint8_t dst_mac[6], uint32_t src_ip, uint32_t dst_ip,
			   uint16_t sport, uint16_t dport, const uint8_t *payload, size_t len);

/* Build an ARP reply: `mac` owns `ip`, answering a requester. */
size_t inart_pkt_build_arp_reply(uint8_t *frame, size_t cap, const uint8_t mac[6], uint32_t ip,
				 const uint8_t req_mac[6], uint32_t req_ip);

/* RFC 1071 checksum of an IPv4 header (returns the value to store). */
uint16_t inart_pkt_ip_csum(const uint8_t *hdr, size_t hlen);

/* An all-zero MAC address (configurations: "none given"). */
static inline int inart_mac_is_zero(const uint8_t m[6])
{
	return (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0;
}

#endif
