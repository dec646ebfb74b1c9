/*
 * addr: text forms of network addresses and words, as the deployment file,
 * the control messages and the programs write them: "a.b.c.d" <-> host-order
 * IPv4, "xx:xx:xx:xx:xx:xx" <-> MAC, "[0x]hex" (1 to 16 digits) -> 64-bit
 * word.  Parsers read a NUL-terminated string, accept nothing else (no
 * spaces, no leading or trailing junk) and return 0 or -1.  Pure, libc only.
 */
#ifndef INART_ADDR_H
#define INART_ADDR_H

#include <stdint.h>

int inart_addr_parse_ip(const char *s, uint32_t *ip);
void inart_addr_fmt_ip(uint32_t ip, char out[16]);
int inart_addr_parse_mac(const char *s, uint8_t mac[6]);
void inart_addr_fmt_mac(const uint8_t mac[6], char out[18]);
int inart_addr_parse_hex64(const char *s, uint64_t *out);

#endif
