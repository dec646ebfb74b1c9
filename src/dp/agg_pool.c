/*
 * agg_pool: aggregator slot pool (see agg_pool.h).
 *
 * Invariants:
 *   - slot i's sums live at sums + i * stride (stride a multiple of 16
 *     values, the block 64-byte aligned); only the first key.count are
 *     meaningful while the slot is busy.
 *   - busy slots form the FIFO head..tail through prev/next (-1 ends),
 *     ordered by non-decreasing deadline (deadline = max(now + timeout,
 *     tail's deadline), so the order survives a clock that steps back).
 *   - a free slot is in no list and its view has busy == 0.
 * The add engine works on 8 lanes with GCC/Clang vector extensions: loads
 * through memcpy (any alignment), byte swap by shifts, wrapping add,
 * overflow = sign bit of (a ^ r) & (b ^ r) ORed over all lanes.  On x86-64
 * it is compiled twice, for AVX2 and for the baseline, and the CPU picks one
 * at load time (a constructor reads the CPU features once).
 */
#include "dp/agg_pool.h"

#include "common/slab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

typedef uint32_t v8u __attribute__((vector_size(32)));

struct slot_link {
	int32_t prev, next;
};

struct inart_agg_pool {
	int n_slots, max_values, n_busy;
	size_t stride; /* int32 per slot */
	uint64_t timeout;
	int32_t head, tail;
	struct inart_agg_slot *view;
	struct slot_link *link;
	int32_t *sums; /* 64-byte aligned */
};

/* Macros rather than functions: a function passing 32-byte vectors by value
 * would have a target-dependent ABI. */
#define BSWAP8(x) (((x) << 24) | (((x)&0xff00) << 8) | (((x) >> 8) & 0xff00) | ((x) >> 24))

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE int add_be_body(int32_t *sums, const uint8_t *be, size_t n)
{
	v8u acc = {0};
	uint32_t o = 0, *s = (uint32_t *)sums;
	size_t i = 0;
	int k;

	for (; i + 8 <= n; i += 8) {
		v8u a, b, r;

		memcpy(&a, s + i, sizeof(a));
		memcpy(&b, be + 4 * i, sizeof(b));
		b = BSWAP8(b);
		r = a + b;
		acc |= (a ^ r) & (b ^ r);
		memcpy(s + i, &r, sizeof(r));
	}
	for (; i < n; i++) {
		uint32_t a = s[i], b, r;

		memcpy(&b, be + 4 * i, 4);
		b = __builtin_bswap32(b);
		r = a + b;
		o |= (a ^ r) & (b ^ r);
		s[i] = r;
	}
	for (k = 0; k < 8; k++)
		o |= acc[k];
	return (int)(o >> 31);
}

/* dst[i] = bswap32(src[i]) (both directions of the copy are the same swap) */
ALWAYS_INLINE void swap_body(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *sp = src;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		v8u b;

		memcpy(&b, sp + 4 * i, sizeof(b));
		b = BSWAP8(b);
		memcpy(d + 4 * i, &b, sizeof(b));
	}
	for (; i < n; i++) {
		uint32_t b;

		memcpy(&b, sp + 4 * i, 4);
		b = __builtin_bswap32(b);
		memcpy(d + 4 * i, &b, 4);
	}
}

static int add_be_base(int32_t *sums, const uint8_t *be, size_t n)
{
	return add_be_body(sums, be, n);
}

static void swap_base(void *dst, const void *src, size_t n)
{
	swap_body(dst, src, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AGG_AVX2 1
__attribute__((target("avx2"))) static int add_be_avx2(int32_t *sums, const uint8_t *be, size_t n)
{
	return add_be_body(sums, be, n);
}

__attribute__((target("avx2"))) static void swap_avx2(void *dst, const void *src, size_t n)
{
	swap_body(dst, src, n);
}

static int have_avx2 = -1;

static int use_avx2(void)
{
	if (have_avx2 < 0) {
		__builtin_cpu_init();
		have_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return have_avx2;
}

__attribute__((constructor)) static void agg_engine_init(void)
{
	(void)use_avx2();
}
#endif

const char *inart_agg_engine(void)
{
#ifdef AGG_AVX2
	if (use_avx2())
		return "avx2";
#endif
	return "baseline";
}

int inart_agg_engine_select(int avx2)
{
#ifdef AGG_AVX2
	if (!avx2) {
		have_avx2 = 0;
		return 0;
	}
	have_avx2 = -1;
	return use_avx2() ? 0 : -1;
#else
	return avx2 ? -1 : 0;
#endif
}

int inart_agg_add_be(int32_t *sums, const uint8_t *be, size_t n)
{
#ifdef AGG_AVX2
	if (use_avx2())
		return add_be_avx2(sums, be, n);
#endif
	return add_be_base(sums, be, n);
}

/* n 32-bit words from src to dst, each byte-swapped (both ways between
 * host and network order), with the engine selected. */
static void swap32(void *dst, const void *src, size_t n)
{
#ifdef AGG_AVX2
	if (use_avx2()) {
		swap_avx2(dst, src, n);
		return;
	}
#endif
	swap_base(dst, src, n);
}

void inart_agg_copy_be(int32_t *sums, const uint8_t *be, size_t n)
{
	swap32(sums, be, n);
}

void inart_agg_store_be(uint8_t *be, const int32_t *sums, size_t n)
{
	swap32(be, sums, n);
}

/* The pool, then the slots' views and links, then the sums (64-byte
 * aligned, stride int32 per slot), in one block (common/slab.h). */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_agg_pool *p = obj;
	size_t n = (size_t)p->n_slots;

	p->view = inart_slab_take(s, n, sizeof(*p->view));
	p->link = inart_slab_take(s, n, sizeof(*p->link));
	p->sums = inart_slab_take_aligned(s, p->stride * n, sizeof(int32_t), 64);
}

struct inart_agg_pool *inart_agg_pool_create(int n_slots, int max_values, uint64_t timeout_ns)
{
	struct inart_agg_pool proto = {0};

	if (n_slots < 1 || n_slots > (1 << 24) || max_values < 0 || max_values > 65535)
		return inart_null_errno(EINVAL);
	proto.n_slots = n_slots;
	proto.max_values = max_values;
	proto.stride = ((size_t)max_values + 15) / 16 * 16;
	proto.timeout = timeout_ns;
	proto.head = proto.tail = -1;
	return inart_slab_new(&proto, sizeof(proto), lay_out);
}

void inart_agg_pool_destroy(struct inart_agg_pool *p)
{
	free(p); /* its arrays with it (lay_out) */
}

int inart_agg_pool_n_slots(const struct inart_agg_pool *p)
{
	return p->n_slots;
}

int inart_agg_pool_max_values(const struct inart_agg_pool *p)
{
	return p->max_values;
}

int inart_agg_pool_busy(const struct inart_agg_pool *p)
{
	return p->n_busy;
}

static int same_key(const struct inart_agg_key *a, const struct inart_agg_key *b)
{
	return a->job == b->job && a->label == b->label && a->iter == b->iter && a->seq == b->seq &&
	       a->tree == b->tree && a->fan_in == b->fan_in && a->slot == b->slot &&
	       a->count == b->count && a->bitmap_words == b->bitmap_words &&
	       a->scale_exp == b->scale_exp;
}

static void fifo_push(struct inart_agg_pool *p, int i)
{
	p->link[i].prev = p->tail;
	p->link[i].next = -1;
	if (p->tail >= 0)
		p->link[p->tail].next = i;
	else
		p->head = i;
	p->tail = i;
}

static void fifo_remove(struct inart_agg_pool *p, int i)
{
	int pr = p->link[i].prev, nx = p->link[i].next;

	if (pr >= 0)
		p->link[pr].next = nx;
	else
		p->head = nx;
	if (nx >= 0)
		p->link[nx].prev = pr;
	else
		p->tail = pr;
	p->link[i].prev = p->link[i].next = -1;
}

int inart_agg_pool_absorb(struct inart_agg_pool *p, int slot, const struct inart_agg_key *key,
			  const uint64_t *bits, const uint8_t *be_values, const uint64_t *expected,
			  uint64_t now_ns, int *fresh)
{
	struct inart_agg_slot *v;
	int32_t *sums;
	int w, nw = key->bitmap_words, complete = expected != NULL;

	if (fresh != NULL)
		*fresh = 0;
	if (slot < 0 || slot >= p->n_slots || key->count > p->max_values || nw < 1 ||
	    nw > INART_WIRE_MAX_BITMAP_WORDS)
		return INART_AGG_EINVAL;
	v = &p->view[slot];
	sums = p->sums + (size_t)slot * p->stride;
	if (!v->busy) {
		uint64_t dl = now_ns + p->timeout;

		if (dl < now_ns)
			dl = UINT64_MAX;
		if (p->tail >= 0 && p->view[p->tail].deadline > dl)
			dl = p->view[p->tail].deadline;
		v->busy = 1;
		v->kept = INART_AGG_KEPT_NONE;
		v->overflow = 0;
		v->absorbed = 1;
		v->deadline = dl;
		v->key = *key;
		memset(v->bitmap, 0, sizeof(v->bitmap));
		for (w = 0; w < nw; w++) {
			v->bitmap[w] = bits[w];
			if (complete && bits[w] != expected[w])
				complete = 0;
		}
		inart_agg_copy_be(sums, be_values, key->count);
		fifo_push(p, slot);
		p->n_busy++;
		if (fresh != NULL)
			*fresh = 1;
		return complete ? INART_AGG_COMPLETE : INART_AGG_ABSORBED;
	}
	if (!same_key(&v->key, key))
		return INART_AGG_BUSY;
	for (w = 0; w < nw; w++)
		if (v->bitmap[w] & bits[w])
			return INART_AGG_DUPLICATE;
	for (w = 0; w < nw; w++) {
		v->bitmap[w] |= bits[w];
		if (complete && v->bitmap[w] != expected[w])
			complete = 0;
	}
	if (inart_agg_add_be(sums, be_values, key->count))
		v->overflow = 1;
	v->absorbed++;
	return complete ? INART_AGG_COMPLETE : INART_AGG_ABSORBED;
}

const struct inart_agg_slot *inart_agg_pool_slot(const struct inart_agg_pool *p, int slot)
{
	if (slot < 0 || slot >= p->n_slots)
		return NULL;
	return &p->view[slot];
}

void inart_agg_pool_release(struct inart_agg_pool *p, int slot)
{
	if (slot < 0 || slot >= p->n_slots)
		return;
	p->view[slot].kept = INART_AGG_KEPT_NONE;
	if (!p->view[slot].busy)
		return;
	fifo_remove(p, slot);
	p->view[slot].busy = 0;
	p->n_busy--;
}

int inart_agg_pool_take_keep(struct inart_agg_pool *p, int slot, uint8_t *be_out)
{
	int n = inart_agg_pool_take(p, slot, be_out);

	if (n >= 0)
		p->view[slot].kept = INART_AGG_KEPT_SENT;
	return n;
}

int inart_agg_pool_read(const struct inart_agg_pool *p, int slot, uint8_t *be_out)
{
	const struct inart_agg_slot *v;

	if (slot < 0 || slot >= p->n_slots)
		return -1;
	v = &p->view[slot];
	if (!v->busy && v->kept == INART_AGG_KEPT_NONE)
		return -1;
	if (be_out != NULL)
		inart_agg_store_be(be_out, p->sums + (size_t)slot * p->stride, v->key.count);
	return v->key.count;
}

int inart_agg_pool_keep_result(struct inart_agg_pool *p, int slot, const struct inart_agg_key *key,
			       const uint64_t *bits, const uint8_t *be_values, uint32_t aux)
{
	struct inart_agg_slot *v;
	int nw = key->bitmap_words;

	if (slot < 0 || slot >= p->n_slots || p->view[slot].busy || key->count > p->max_values ||
	    nw < 1 || nw > INART_WIRE_MAX_BITMAP_WORDS)
		return -1;
	v = &p->view[slot];
	v->key = *key;
	v->kept = INART_AGG_KEPT_RESULT;
	v->aux = aux;
	v->overflow = 0;
	memset(v->bitmap, 0, sizeof(v->bitmap));
	memcpy(v->bitmap, bits, 8 * (size_t)nw);
	inart_agg_copy_be(p->sums + (size_t)slot * p->stride, be_values, key->count);
	return 0;
}

int inart_agg_pool_take(struct inart_agg_pool *p, int slot, uint8_t *be_out)
{
	int n;

	if (slot < 0 || slot >= p->n_slots || !p->view[slot].busy)
		return -1;
	n = p->view[slot].key.count;
	if (be_out != NULL)
		inart_agg_store_be(be_out, p->sums + (size_t)slot * p->stride, (size_t)n);
	inart_agg_pool_release(p, slot);
	return n;
}

int inart_agg_pool_expired(const struct inart_agg_pool *p, uint64_t now_ns)
{
	if (p->head >= 0 && p->view[p->head].deadline <= now_ns)
		return p->head;
	return -1;
}

int inart_agg_pool_busy_next(const struct inart_agg_pool *p, int slot)
{
	if (slot < 0)
		return p->head;
	if (slot >= p->n_slots || !p->view[slot].busy)
		return -1;
	return p->link[slot].next;
}

uint64_t inart_agg_pool_next_deadline(const struct inart_agg_pool *p)
{
	return p->head >= 0 ? p->view[p->head].deadline : UINT64_MAX;
}

void inart_agg_pool_clear(struct inart_agg_pool *p)
{
	int i;

	for (i = 0; i < p->n_slots; i++) {
		p->view[i].busy = 0;
		p->view[i].kept = INART_AGG_KEPT_NONE;
		p->link[i].prev = p->link[i].next = -1;
	}
	p->head = p->tail = -1;
	p->n_busy = 0;
}
