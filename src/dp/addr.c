/*
 * addr: text forms of network addresses (see addr.h).  Pure, no I/O.
 */
#include "dp/addr.h"

#include <stdio.h>
#include <string.h>

int inart_addr_parse_ip(const char *s, uint32_t *ip)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned part = 0;
		int digits = 0;

		while (*s >= '0' && *s <= '9') {
			part = part * 10 + (unsigned)(*s++ - '0');
			if (++digits > 3)
				return -1;
		}
		if (digits == 0 || part > 255)
			return -1;
		v = v << 8 | part;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	if (*s != '\0')
		return -1;
	*ip = v;
	return 0;
}

void inart_addr_fmt_ip(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int inart_addr_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		if (lo < 0)
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < 5 && *s++ != ':')
			return -1;
	}
	if (*s != '\0')
		return -1;
	memcpy(mac, m, 6);
	return 0;
}

void inart_addr_fmt_mac(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

int inart_addr_parse_hex64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		int h = hexval(*s);

		if (h < 0 || n >= 16)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}
