/*
 * ctlfield: the fields of control messages (docs/programs.md).  Text forms:
 * addresses are dotted quads ("10.0.0.1"), MACs "02:00:00:00:00:01", bitmap
 * words hex strings of at most 16 digits (JSON numbers are not 64-bit safe).
 * JSON readers: each reads one field of an object that comes from untrusted
 * bytes, checks its type, range or length, and on a refusal returns -EINVAL
 * with a reason in why that starts with "what" (the entry at fault, e.g.
 * "labels[3]: down[2]") and names the key.  Pure, no I/O, no allocation
 * except inart_ctl_get_array_alloc's array (the caller's).
 */
#ifndef INART_CTLFIELD_H
#define INART_CTLFIELD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Text helpers: "a.b.c.d" <-> host-order IPv4, "xx:xx:xx:xx:xx:xx" <-> MAC,
 * "[0x]hex" (1 to 16 digits) -> 64-bit word.  Parsers return 0 or -1. */
int inart_ctl_parse_ip(const char *s, uint32_t *ip);
void inart_ctl_fmt_ip(uint32_t ip, char out[16]);
int inart_ctl_parse_mac(const char *s, uint8_t mac[6]);
void inart_ctl_fmt_mac(const uint8_t mac[6], char out[18]);
int inart_ctl_parse_hex64(const char *s, uint64_t *out);

/* o must be an object whose keys are all in the NULL-terminated list (a
 * typo must not be ignored). */
int inart_ctl_get_keys(json_t *o, const char *what, const char *const *allowed, char *why,
		       size_t why_len);
/* An integer field in [min, max]; absent: *out = dflt, or an error if
 * required.  The u16/u32/u64 forms store into a field of that type (min..max
 * within it). */
int inart_ctl_get_int(json_t *o, const char *what, const char *key, int required, int64_t min,
		      int64_t max, int64_t dflt, int64_t *out, char *why, size_t why_len);
int inart_ctl_get_u16(json_t *o, const char *what, const char *key, int required, int64_t min,
		      int64_t max, int64_t dflt, uint16_t *out, char *why, size_t why_len);
int inart_ctl_get_u32(json_t *o, const char *what, const char *key, int required, int64_t min,
		      int64_t max, int64_t dflt, uint32_t *out, char *why, size_t why_len);
int inart_ctl_get_u64(json_t *o, const char *what, const char *key, int required, int64_t min,
		      int64_t max, int64_t dflt, uint64_t *out, char *why, size_t why_len);
/* A boolean field; absent: 0. */
int inart_ctl_get_bool(json_t *o, const char *what, const char *key, int *out, char *why,
		       size_t why_len);
/* An address field in text form; absent: 0 (or an error if required) / a
 * zero MAC. */
int inart_ctl_get_ip(json_t *o, const char *what, const char *key, int required, uint32_t *ip,
		     char *why, size_t why_len);
int inart_ctl_get_mac(json_t *o, const char *what, const char *key, uint8_t mac[6], char *why,
		      size_t why_len);
/* An optional array of at most max elements; *arr = NULL, *n = 0 when
 * absent. */
int inart_ctl_get_array(json_t *o, const char *what, const char *key, size_t max, json_t **arr,
			size_t *n, char *why, size_t why_len);
/* inart_ctl_get_array, then an array of *n zeroed elements of `size` bytes
 * in *mem (left NULL when the array is absent or empty; the caller frees it
 * even on an error).  -ENOMEM if allocation failed. */
int inart_ctl_get_array_alloc(json_t *o, const char *what, const char *key, size_t max, size_t size,
			      json_t **arr, size_t *n, void **mem, char *why, size_t why_len);

#endif
