/*
 * lpm: IPv4 longest-prefix match.  A table of (prefix, len) -> value kept in
 * one open-addressing hash keyed by the masked prefix and its length; a
 * lookup probes the lengths present from longest to shortest, so it costs
 * one hash probe per distinct prefix length in use and never allocates.
 * Addresses are host byte order.  Bits of a prefix beyond its length are
 * ignored (the prefix is stored masked).
 *
 * Ownership: the table owns its memory; not thread-safe.
 */
#ifndef INART_LPM_H
#define INART_LPM_H

#include <stddef.h>
#include <stdint.h>

struct inart_lpm;

/* NULL + errno (ENOMEM). */
struct inart_lpm *inart_lpm_create(void);
void inart_lpm_destroy(struct inart_lpm *t);

/* A deep copy (for transactional updates). NULL + errno. */
struct inart_lpm *inart_lpm_clone(const struct inart_lpm *t);

void inart_lpm_clear(struct inart_lpm *t);

/* Insert, or replace the value of an existing (prefix, len).
 * 0 or -EINVAL (len > 32) / -ENOMEM. */
int inart_lpm_add(struct inart_lpm *t, uint32_t prefix, int len, uint32_t value);

/* 0 or -ENOENT. */
int inart_lpm_del(struct inart_lpm *t, uint32_t prefix, int len);

/* 1 and *value set if some prefix covers addr (the longest wins), else 0. */
int inart_lpm_lookup(const struct inart_lpm *t, uint32_t addr, uint32_t *value);

size_t inart_lpm_count(const struct inart_lpm *t);

/* Call fn for every entry (in no particular order); stops early and returns
 * fn's value if it is non-zero, else 0. */
int inart_lpm_walk(const struct inart_lpm *t,
		   int (*fn)(void *ctx, uint32_t prefix, int len, uint32_t value), void *ctx);

#endif
