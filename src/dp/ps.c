/*
 * ps: the parameter server core (sans I/O), see ps.h and docs/dataplane.md.
 *
 * State: trees in an array indexed by an open-addressing hash of (job,
 * tree).  Per tree, chunk records for the current and the previous iteration
 * live in two tables (index iter & 1) of lazily allocated blocks of
 * INART_PS_BLOCK_CHUNKS records; a record belongs to the iteration stored in
 * it, so moving to a new iteration needs no clearing (a record of another
 * iteration is simply re-initialized on first use).  A record: header,
 * bitmap (bw words), int64 sums (vmax values).
 *
 * Invariants: a record's bitmap is the union of the disjoint bitmaps of the
 * packets absorbed since the record was (re)started, and its sums are their
 * values' sums, all at the record's scale; nbits = popcount(bitmap); a record
 * is DONE exactly when nbits == fan_in, and a DONE record never changes
 * except by a restart at a lower scale after an OVERFLOW result.  int64
 * sums cannot overflow: at most fan_in <= 1024 disjoint packets are
 * absorbed, each value within int32.
 *
 * Ownership: the PS owns trees and blocks; no allocation on the packet path
 * once a block exists (the first packet reaching a block allocates it).
 */
#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

enum { REC_EMPTY = 0, REC_OPEN = 1, REC_DONE = 2 };

struct rec {
	uint32_t iter;
	uint8_t state;
	int8_t scale;
	uint8_t flags; /* INART_F_OVERFLOW if an absorbed packet or the sum overflowed */
	uint8_t pad;
	uint16_t count, slot, nbits, pad2;
	/* uint64_t bitmap[bw]; int64_t sums[vmax]; follow */
};

struct tree {
	struct inart_ps_tree_cfg cfg;
	int bw, vmax;
	size_t stride; /* bytes per record */
	uint32_t max_chunks, n_blocks;
	uint8_t **blocks[2];
	int have_iter;
	uint32_t cur_iter;
	uint64_t full[INART_WIRE_MAX_BITMAP_WORDS];
};

struct inart_ps {
	struct tree **trees;
	int n_trees, cap_trees;
	int *hash; /* tree index + 1, 0 empty; hash_size a power of two */
	size_t hash_size;
	struct inart_ps_stats st;
	int32_t vals[INART_DGRAM_MAX / 4];
};

static uint64_t *rec_bitmap(struct rec *r)
{
	return (uint64_t *)(r + 1);
}

static int64_t *rec_sums(struct rec *r, int bw)
{
	return (int64_t *)(rec_bitmap(r) + bw);
}

static size_t tree_hash(uint32_t job, uint16_t tree)
{
	uint64_t x = ((uint64_t)job << 16 | tree) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 32);
}

static int tree_find(const struct inart_ps *ps, uint32_t job, uint16_t tree)
{
	size_t m, s;

	if (ps->hash_size == 0)
		return -1;
	m = ps->hash_size - 1;
	for (s = tree_hash(job, tree) & m; ps->hash[s]; s = (s + 1) & m) {
		const struct tree *t = ps->trees[ps->hash[s] - 1];

		if (t->cfg.job == job && t->cfg.tree == tree)
			return ps->hash[s] - 1;
	}
	return -1;
}

static int rehash(struct inart_ps *ps)
{
	size_t size = 16, m;
	int *h;

	while (size < 2 * (size_t)ps->n_trees + 2)
		size *= 2;
	h = calloc(size, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	m = size - 1;
	for (int i = 0; i < ps->n_trees; i++) {
		size_t s = tree_hash(ps->trees[i]->cfg.job, ps->trees[i]->cfg.tree) & m;

		while (h[s])
			s = (s + 1) & m;
		h[s] = i + 1;
	}
	free(ps->hash);
	ps->hash = h;
	ps->hash_size = size;
	return 0;
}

static void tree_free(struct tree *t)
{
	if (t == NULL)
		return;
	for (int p = 0; p < 2; p++) {
		if (t->blocks[p] == NULL)
			continue;
		for (uint32_t b = 0; b < t->n_blocks; b++)
			free(t->blocks[p][b]);
		free(t->blocks[p]);
	}
	free(t);
}

struct inart_ps *inart_ps_create(void)
{
	struct inart_ps *ps = calloc(1, sizeof(*ps));

	if (ps == NULL)
		errno = ENOMEM;
	return ps;
}

void inart_ps_destroy(struct inart_ps *ps)
{
	if (ps == NULL)
		return;
	for (int i = 0; i < ps->n_trees; i++)
		tree_free(ps->trees[i]);
	free(ps->trees);
	free(ps->hash);
	free(ps);
}

static struct tree *tree_new(const struct inart_ps_tree_cfg *cfg, uint32_t max_chunks)
{
	struct tree *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cfg = *cfg;
	t->cfg.max_chunks = max_chunks;
	t->bw = (cfg->fan_in + 63) / 64;
	t->vmax = inart_wire_max_values(t->bw);
	t->stride = sizeof(struct rec) + 8 * (size_t)t->bw + 8 * (size_t)t->vmax;
	t->max_chunks = max_chunks;
	t->n_blocks = (max_chunks + INART_PS_BLOCK_CHUNKS - 1) / INART_PS_BLOCK_CHUNKS;
	for (int p = 0; p < 2; p++) {
		t->blocks[p] = calloc(t->n_blocks, sizeof(*t->blocks[p]));
		if (t->blocks[p] == NULL) {
			tree_free(t);
			return NULL;
		}
	}
	for (int r = 0; r < cfg->fan_in; r++)
		t->full[r / 64] |= (uint64_t)1 << (r % 64);
	return t;
}

int inart_ps_tree_set(struct inart_ps *ps, const struct inart_ps_tree_cfg *cfg)
{
	uint32_t max_chunks;
	struct tree *t;
	int i;

	if (ps == NULL || cfg == NULL || cfg->fan_in < 1 || cfg->fan_in > INART_WIRE_MAX_CONTRIB ||
	    cfg->n_children > INART_PS_MAX_CHILDREN || cfg->max_chunks > INART_PS_LIMIT_MAX_CHUNKS)
		return -EINVAL;
	max_chunks = cfg->max_chunks ? cfg->max_chunks : INART_PS_DEFAULT_MAX_CHUNKS;
	i = tree_find(ps, cfg->job, cfg->tree);
	if (i >= 0) {
		t = ps->trees[i];
		if (t->cfg.fan_in == cfg->fan_in && t->max_chunks == max_chunks) {
			/* same shape: keep the chunk state, take the new children */
			t->cfg = *cfg;
			t->cfg.max_chunks = max_chunks;
			return 0;
		}
		t = tree_new(cfg, max_chunks);
		if (t == NULL)
			return -ENOMEM;
		tree_free(ps->trees[i]);
		ps->trees[i] = t;
		return 0;
	}
	if (ps->n_trees == ps->cap_trees) {
		int cap = ps->cap_trees ? 2 * ps->cap_trees : 8;
		struct tree **a = realloc(ps->trees, (size_t)cap * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		ps->trees = a;
		ps->cap_trees = cap;
	}
	t = tree_new(cfg, max_chunks);
	if (t == NULL)
		return -ENOMEM;
	ps->trees[ps->n_trees++] = t;
	if (rehash(ps) < 0) {
		ps->n_trees--;
		tree_free(t);
		return -ENOMEM;
	}
	return 0;
}

int inart_ps_tree_del(struct inart_ps *ps, uint32_t job, uint16_t tree)
{
	int i;

	if (ps == NULL)
		return -EINVAL;
	i = tree_find(ps, job, tree);
	if (i < 0)
		return -ENOENT;
	tree_free(ps->trees[i]);
	ps->trees[i] = ps->trees[--ps->n_trees];
	/* a smaller table always fits in a fresh one of the same size: on
	 * allocation failure rebuild in place */
	if (rehash(ps) < 0) {
		size_t m = ps->hash_size - 1;

		memset(ps->hash, 0, ps->hash_size * sizeof(*ps->hash));
		for (int k = 0; k < ps->n_trees; k++) {
			size_t s = tree_hash(ps->trees[k]->cfg.job, ps->trees[k]->cfg.tree) & m;

			while (ps->hash[s])
				s = (s + 1) & m;
			ps->hash[s] = k + 1;
		}
	}
	return 0;
}

void inart_ps_stats(const struct inart_ps *ps, struct inart_ps_stats *st)
{
	if (ps == NULL) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = ps->st;
}

/* The record of (iter, seq), allocating its block if needed; NULL on ENOMEM. */
static struct rec *rec_get(struct tree *t, uint32_t iter, uint32_t seq)
{
	uint8_t **blocks = t->blocks[iter & 1];
	uint32_t b = seq / INART_PS_BLOCK_CHUNKS;

	if (blocks[b] == NULL) {
		blocks[b] = calloc(INART_PS_BLOCK_CHUNKS, t->stride);
		if (blocks[b] == NULL)
			return NULL;
	}
	return (struct rec *)(blocks[b] + (size_t)(seq % INART_PS_BLOCK_CHUNKS) * t->stride);
}

static void rec_start(const struct tree *t, struct rec *r, const struct inart_wire_hdr *h)
{
	r->iter = h->iter;
	r->state = REC_OPEN;
	r->scale = h->scale_exp;
	r->flags = 0;
	r->count = h->count;
	r->slot = h->slot;
	r->nbits = 0;
	memset(rec_bitmap(r), 0, 8 * (size_t)t->bw);
	memset(rec_sums(r, t->bw), 0, 8 * (size_t)h->count);
}

static int32_t get_be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Emit the result of record r (chunk seq) -- or, notice = 1, a scale notice
 * (chunk's bitmap, no values) -- to every child (children != NULL, one copy
 * per child with its label, port INART_WIRE_UDP_PORT) or as one unicast
 * RETX to (uc_ip, uc_port) with label 0.  Returns datagrams emitted. */
static int emit(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq, int notice,
		int to_children, uint32_t uc_ip, uint16_t uc_port, struct inart_dgram *out,
		int max_out)
{
	const struct inart_ps_child *ch = t->cfg.children;
	int n_dst = to_children ? t->cfg.n_children : 1;
	struct inart_wire_hdr h;
	const int64_t *sums = rec_sums(r, t->bw);
	size_t len;
	int n;

	if (n_dst <= 0)
		return 0;
	if (max_out < 1) {
		ps->st.out_full += (uint64_t)n_dst;
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = (uint8_t)(INART_F_RESULT | (to_children ? 0 : INART_F_RETX) |
			    (notice ? INART_F_OVERFLOW : (r->flags & INART_F_OVERFLOW)));
	h.bitmap_words = (uint8_t)t->bw;
	h.scale_exp = r->scale;
	h.job = t->cfg.job;
	h.tree = t->cfg.tree;
	h.fan_in = t->cfg.fan_in;
	h.label = to_children ? ch[0].label : 0;
	h.iter = r->iter;
	h.seq = seq;
	h.slot = r->slot;
	h.count = notice ? 0 : r->count;
	memcpy(h.bitmap, notice ? rec_bitmap(r) : t->full, 8 * (size_t)t->bw);
	if (!notice) {
		for (int i = 0; i < r->count; i++) {
			int64_t v = sums[i];

			ps->vals[i] = v > INT32_MAX   ? INT32_MAX
				      : v < INT32_MIN ? INT32_MIN
						      : (int32_t)v;
		}
	}
	len = inart_wire_encode(&h, ps->vals, out[0].data, INART_DGRAM_MAX);
	if (len == 0) /* cannot happen: the header is built from checked state */
		return 0;
	out[0].len = (uint16_t)len;
	out[0].peer_ip = to_children ? ch[0].ip : uc_ip;
	out[0].peer_port = to_children ? INART_WIRE_UDP_PORT : uc_port;
	for (n = 1; n < n_dst && n < max_out; n++) {
		memcpy(out[n].data, out[0].data, len);
		put_be32(out[n].data + 12, ch[n].label);
		out[n].len = (uint16_t)len;
		out[n].peer_ip = ch[n].ip;
		out[n].peer_port = INART_WIRE_UDP_PORT;
	}
	ps->st.out_full += (uint64_t)(n_dst - n);
	if (notice)
		ps->st.notices++;
	else if (to_children)
		ps->st.results_sent += (uint64_t)n;
	else
		ps->st.retx_answered++;
	return n;
}

static void drop(struct inart_ps *ps, uint64_t *reason)
{
	(*reason)++;
	ps->st.dropped++;
}

static int bits_overlap(const uint64_t *a, const uint64_t *b, int bw)
{
	for (int i = 0; i < bw; i++)
		if (a[i] & b[i])
			return 1;
	return 0;
}

static void absorb(const struct tree *t, struct rec *r, const struct inart_wire_hdr *h,
		   const uint8_t *payload)
{
	uint64_t *bm = rec_bitmap(r);
	int64_t *sums = rec_sums(r, t->bw);

	for (int i = 0; i < t->bw; i++) {
		bm[i] |= h->bitmap[i];
		r->nbits = (uint16_t)(r->nbits + __builtin_popcountll(h->bitmap[i]));
	}
	for (int i = 0; i < h->count; i++)
		sums[i] += get_be32(payload + 4 * (size_t)i);
	r->flags |= h->flags & INART_F_OVERFLOW;
}

/* a contains b (and, as the caller checked, b is not empty) */
static int bits_superset(const uint64_t *a, const uint64_t *b, int bw)
{
	for (int i = 0; i < bw; i++)
		if ((a[i] & b[i]) != b[i])
			return 0;
	return 1;
}

/* Replace the record's contributions by the packet's (a superset of them);
 * the OVERFLOW mark is kept (conservative). */
static void replace(const struct tree *t, struct rec *r, const struct inart_wire_hdr *h,
		    const uint8_t *payload)
{
	uint8_t flags = r->flags;

	memset(rec_bitmap(r), 0, 8 * (size_t)t->bw);
	memset(rec_sums(r, t->bw), 0, 8 * (size_t)r->count);
	r->nbits = 0;
	absorb(t, r, h, payload);
	r->flags |= flags;
}

static void complete(const struct tree *t, struct rec *r)
{
	const int64_t *sums = rec_sums(r, t->bw);

	r->state = REC_DONE;
	for (int i = 0; i < r->count; i++)
		if (sums[i] > INT32_MAX || sums[i] < INT32_MIN) {
			r->flags |= INART_F_OVERFLOW;
			break;
		}
}

int inart_ps_rx(struct inart_ps *ps, const uint8_t *data, size_t len, uint32_t src_ip,
		uint16_t src_port, uint64_t now_ns, struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr h;
	const uint8_t *payload;
	struct tree *t;
	struct rec *r;
	int ti, retx;

	(void)now_ns;
	if (ps == NULL)
		return 0;
	ps->st.rx++;
	if (data == NULL || inart_wire_decode(data, len, &h, &payload) != INART_WIRE_OK ||
	    !(h.flags & INART_F_DATA)) {
		drop(ps, &ps->st.drop_malformed);
		return 0;
	}
	ti = tree_find(ps, h.job, h.tree);
	if (ti < 0) {
		drop(ps, &ps->st.drop_unknown);
		return 0;
	}
	t = ps->trees[ti];
	if (h.fan_in != t->cfg.fan_in || h.bitmap_words != t->bw || h.count == 0 ||
	    h.count > t->vmax) {
		drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	if (h.seq >= t->max_chunks) {
		drop(ps, &ps->st.drop_limit);
		return 0;
	}
	if (t->have_iter && (int32_t)(h.iter - t->cur_iter) < -1) {
		drop(ps, &ps->st.drop_stale);
		return 0;
	}
	r = rec_get(t, h.iter, h.seq);
	if (r == NULL) {
		drop(ps, &ps->st.drop_nomem);
		return 0;
	}
	if (!t->have_iter || (int32_t)(h.iter - t->cur_iter) > 0) {
		t->have_iter = 1;
		t->cur_iter = h.iter;
	}
	if (r->state == REC_EMPTY || r->iter != h.iter)
		rec_start(t, r, &h);
	else if (h.count != r->count) {
		drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	retx = (h.flags & INART_F_RETX) != 0;
	if (h.scale_exp < r->scale) {
		if (r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW)) {
			/* no worker lowers its scale below a clean result */
			drop(ps, &ps->st.drop_stale);
			return 0;
		}
		rec_start(t, r, &h);
		ps->st.rescales++;
	} else if (h.scale_exp > r->scale) {
		if (!retx) {
			drop(ps, &ps->st.drop_stale);
			return 0;
		}
		/* the sender missed a rescale: tell it the chunk's scale */
		return emit(ps, t, r, h.seq, r->state != REC_DONE, 0, src_ip, src_port, out,
			    max_out);
	}
	if (r->state == REC_DONE) {
		ps->st.duplicates++;
		return retx ? emit(ps, t, r, h.seq, 0, 0, src_ip, src_port, out, max_out) : 0;
	}
	if (bits_overlap(rec_bitmap(r), h.bitmap, t->bw)) {
		if (!bits_superset(h.bitmap, rec_bitmap(r), t->bw)) {
			ps->st.duplicates++;
			return 0;
		}
		/* the packet counts every contributor the chunk has and more
		 * (a partial aggregate arriving after some retransmissions):
		 * it replaces them */
		replace(t, r, &h, payload);
		ps->st.replaced++;
	} else {
		absorb(t, r, &h, payload);
	}
	ps->st.absorbed++;
	if (r->nbits < t->cfg.fan_in)
		return 0;
	complete(t, r);
	ps->st.completed++;
	if (r->flags & INART_F_OVERFLOW)
		ps->st.overflows++;
	return emit(ps, t, r, h.seq, 0, 1, 0, 0, out, max_out);
}
