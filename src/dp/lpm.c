/*
 * lpm: IPv4 longest-prefix match (see lpm.h).
 *
 * Representation: linear-probing hash of entries keyed by (masked prefix,
 * len), capacity a power of two, load <= 1/2, deletion by backward shift (no
 * tombstones, so probe sequences stay short).  len_count[l] counts entries of
 * length l and bit l of lens is set iff len_count[l] > 0; a lookup walks the
 * set bits of lens from 32 down and probes once per length.
 */
#include "dp/lpm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

struct lpm_ent {
	uint32_t prefix, value;
	uint8_t len, used;
};

struct inart_lpm {
	struct lpm_ent *tab;
	size_t cap, n; /* cap: power of two */
	uint64_t lens; /* bit l: some prefix of length l */
	size_t len_count[33];
};

#define LPM_MIN_CAP 16

static uint32_t mask_of(int len)
{
	return len == 0 ? 0 : ~(uint32_t)0 << (32 - len);
}

static size_t hash_of(uint32_t prefix, int len, size_t cap)
{
	uint64_t h = ((uint64_t)prefix << 6 | (uint64_t)len) * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

/* An empty table of cap slots (a power of two), or NULL + ENOMEM. */
static struct inart_lpm *lpm_new(size_t cap)
{
	struct inart_lpm *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cap = cap;
	t->tab = calloc(cap, sizeof(*t->tab));
	if (t->tab == NULL) {
		free(t);
		return inart_null_errno(ENOMEM);
	}
	return t;
}

struct inart_lpm *inart_lpm_create(void)
{
	return lpm_new(LPM_MIN_CAP);
}

void inart_lpm_destroy(struct inart_lpm *t)
{
	if (t == NULL)
		return;
	free(t->tab);
	free(t);
}

struct inart_lpm *inart_lpm_clone(const struct inart_lpm *t)
{
	struct inart_lpm *c = lpm_new(t->cap);
	struct lpm_ent *tab;

	if (c == NULL)
		return NULL;
	tab = c->tab;
	*c = *t; /* the counts; then the table's copy */
	c->tab = tab;
	memcpy(c->tab, t->tab, t->cap * sizeof(*t->tab));
	return c;
}

void inart_lpm_clear(struct inart_lpm *t)
{
	memset(t->tab, 0, t->cap * sizeof(*t->tab));
	t->n = 0;
	t->lens = 0;
	memset(t->len_count, 0, sizeof(t->len_count));
}

static size_t find_slot(const struct inart_lpm *t, uint32_t prefix, int len)
{
	size_t i = hash_of(prefix, len, t->cap);

	while (t->tab[i].used && (t->tab[i].prefix != prefix || t->tab[i].len != len))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct inart_lpm *t)
{
	struct lpm_ent *old = t->tab;
	size_t oc = t->cap, i;

	t->tab = calloc(oc * 2, sizeof(*t->tab));
	if (t->tab == NULL) {
		t->tab = old;
		return -ENOMEM;
	}
	t->cap = oc * 2;
	for (i = 0; i < oc; i++)
		if (old[i].used)
			t->tab[find_slot(t, old[i].prefix, old[i].len)] = old[i];
	free(old);
	return 0;
}

int inart_lpm_add(struct inart_lpm *t, uint32_t prefix, int len, uint32_t value)
{
	size_t i;

	if (len < 0 || len > 32)
		return -EINVAL;
	prefix &= mask_of(len);
	i = find_slot(t, prefix, len);
	if (t->tab[i].used) {
		t->tab[i].value = value;
		return 0;
	}
	if (2 * (t->n + 1) > t->cap) {
		if (grow(t) < 0)
			return -ENOMEM;
		i = find_slot(t, prefix, len);
	}
	t->tab[i].prefix = prefix;
	t->tab[i].len = (uint8_t)len;
	t->tab[i].value = value;
	t->tab[i].used = 1;
	t->n++;
	t->len_count[len]++;
	t->lens |= (uint64_t)1 << len;
	return 0;
}

int inart_lpm_del(struct inart_lpm *t, uint32_t prefix, int len)
{
	size_t i, j, m = t->cap - 1;

	if (len < 0 || len > 32)
		return -ENOENT;
	prefix &= mask_of(len);
	i = find_slot(t, prefix, len);
	if (!t->tab[i].used)
		return -ENOENT;
	t->tab[i].used = 0;
	t->n--;
	if (--t->len_count[len] == 0)
		t->lens &= ~((uint64_t)1 << len);
	/* Backward shift: move later members of the cluster into the hole when
	 * their home position does not lie cyclically in (i, j]. */
	for (j = (i + 1) & m; t->tab[j].used; j = (j + 1) & m) {
		size_t h = hash_of(t->tab[j].prefix, t->tab[j].len, t->cap);

		if (((j - h) & m) >= ((j - i) & m)) {
			t->tab[i] = t->tab[j];
			t->tab[j].used = 0;
			i = j;
		}
	}
	return 0;
}

int inart_lpm_lookup(const struct inart_lpm *t, uint32_t addr, uint32_t *value)
{
	uint64_t lens = t->lens;

	while (lens) {
		int len = 63 - __builtin_clzll(lens);
		uint32_t p = addr & mask_of(len);
		size_t i = hash_of(p, len, t->cap);

		for (; t->tab[i].used; i = (i + 1) & (t->cap - 1)) {
			if (t->tab[i].prefix == p && t->tab[i].len == len) {
				*value = t->tab[i].value;
				return 1;
			}
		}
		lens &= ~((uint64_t)1 << len);
	}
	return 0;
}

size_t inart_lpm_count(const struct inart_lpm *t)
{
	return t->n;
}

int inart_lpm_walk(const struct inart_lpm *t,
		   int (*fn)(void *ctx, uint32_t prefix, int len, uint32_t value), void *ctx)
{
	size_t i;
	int rc;

	for (i = 0; i < t->cap; i++) {
		if (!t->tab[i].used)
			continue;
		rc = fn(ctx, t->tab[i].prefix, t->tab[i].len, t->tab[i].value);
		if (rc != 0)
			return rc;
	}
	return 0;
}
