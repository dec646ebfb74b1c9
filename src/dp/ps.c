/*
 * ps: the parameter server core (sans I/O), see ps.h and docs/dataplane.md.
 *
 * State: trees in an array indexed by an open-addressing hash of (job,
 * tree).  Per tree, chunk records for the current and the previous iteration
 * live in two tables (index iter & 1) of lazily allocated blocks of
 * INART_PS_BLOCK_CHUNKS records; a record belongs to the iteration stored in
 * it, so moving to a new iteration needs no clearing (a record of another
 * iteration is simply re-initialized on first use).  A record: header
 * (with the NACK round and times, the chain link and the answers' bookkeeping),
 * bitmap (bw words), ranks NACKed (bw words), int64 sums (vmax values).  Per
 * tree also each rank's progress along the tree and the child it came from,
 * the result chain's head, the NACK loop time, a ring of NACKed records, and
 * the time and smoothed gap of DATA arrivals (drained: the streams stopped).
 *
 * Invariants: a record's bitmap is the union of the disjoint bitmaps of the
 * packets absorbed since the record was (re)started, and its sums are their
 * values' sums, all at the record's scale; nbits = popcount(bitmap); a record
 * is DONE exactly when nbits == fan_in, and a DONE record never changes
 * except by a restart at a lower scale after an OVERFLOW result.  int64
 * sums cannot overflow: at most fan_in <= 1024 disjoint packets are
 * absorbed, each value within int32.  NACKs, probes and answers never
 * change sums; an empty record (a wholly lost chunk, NACKed) holds no rank.
 *
 * Ownership: the PS owns trees and blocks; no allocation on the packet path
 * once a block exists (the first packet reaching a block allocates it).
 */
#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "progress.h"
#include "quant.h"

enum { REC_EMPTY = 0, REC_OPEN = 1, REC_DONE = 2 };

struct rec {
	uint32_t iter;
	uint8_t state;
	int8_t scale;
	uint8_t flags;	  /* INART_F_OVERFLOW if an absorbed packet or the sum overflowed */
	uint8_t nack_lvl; /* NACK rounds sent */
	uint16_t count, slot, nbits;
	uint16_t remc_child; /* DONE: 1 + the child it was sent down again towards, 0: all */
	uint32_t prev;	     /* DONE: 1 + seq of the result sent down before this one, 0 */
	uint32_t ans_ip;     /* DONE: the address the last unicast answer went to */
	uint32_t remc_ip;    /* DONE: the asker that made the PS send the result down again */
	uint32_t gen;	     /* the tree's generation the record belongs to */
	uint64_t nack_ns;    /* time of the last NACK */
	uint64_t ans_ns;     /* DONE: last unicast answer with the result */
	uint64_t remc_ns;    /* DONE: last time the result was sent down again */
	uint64_t touch_ns;   /* last contribution absorbed (DONE: when it completed) */
	/* uint64_t bitmap[bw]; uint64_t nacked[bw]; int64_t sums[vmax]; follow */
};

#define NACK_PENDING 64 /* NACKed records watched for a repeat, per tree */
#define NACK_ROUNDS 4	/* NACKs per record at most (then the workers' timers) */

struct tree {
	struct inart_ps_tree_cfg cfg;
	int bw, vmax;
	size_t stride; /* bytes per record */
	uint32_t max_chunks, n_blocks;
	uint8_t **blocks[2];
	int have_iter;
	uint32_t cur_iter;
	uint64_t full[INART_WIRE_MAX_BITMAP_WORDS];
	struct inart_rank_pos *rk; /* fan_in: progress along the tree (progress.h) */
	/* per rank: the newest iteration of any DATA it sent (step notices) */
	uint32_t *last_iter;
	uint8_t *last_any;
	uint32_t cur_open; /* records of cur_iter that are open */
	uint32_t gen;	   /* records of another generation are empty (a restart) */
	/* sources (sorted by address) and the last one looked up */
	struct inart_ps_source *src;
	int n_src;
	uint32_t src_ip;
	int src_idx;
	/* NACKed records still open, oldest NACK first; a NACK is repeated after
	 * twice the measured time from a NACK to a retransmission it caused */
	uint32_t pend_iter[NACK_PENDING], pend_seq[NACK_PENDING];
	int pend_head, pend_n;
	uint64_t nack_rtt; /* smoothed; 0: no sample yet */
	/* the last result sent down (iter, 1 + seq; 0: none): each result names
	 * its predecessor, so workers see which results they missed */
	uint32_t chain_iter, chain_last;
	/* which child each rank's contributions come from (1 + child index,
	 * 0: not seen), learned from the sender address of packets (a worker
	 * child's own, or a switch child's aggregates): NACKs and results sent
	 * down again go only towards the ranks concerned */
	uint16_t *child_of; /* fan_in */
	uint8_t child_known[INART_PS_MAX_CHILDREN];
	uint32_t learn_ip; /* the last sender address looked up, and its child + 1 */
	int learn_child;
	/* DATA along the tree (not retransmissions): time of the last one, the
	 * smoothed gap between them, the newest iteration and 1 + the highest
	 * seq seen in it; the tree is drained (drained()) when none came for
	 * INART_PS_DRAIN_GAPS gaps; sweep_ns: the last time the open records
	 * were NACKed because of it */
	uint64_t data_ns, data_gap, sweep_ns;
	uint32_t hi_iter, hi_pos;
	/* any valid packet for the tree: time of the last one (restarts) */
	uint64_t rx_ns;
	int have_rx;
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

static uint64_t *rec_nacked(struct rec *r, int bw)
{
	return rec_bitmap(r) + bw;
}

static int64_t *rec_sums(struct rec *r, int bw)
{
	return (int64_t *)(rec_bitmap(r) + 2 * bw);
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
	free(t->rk);
	free(t->last_iter);
	free(t->last_any);
	free(t->child_of);
	free(t->src);
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

static int src_cmp(const void *a, const void *b)
{
	const struct inart_ps_source *x = a, *y = b;

	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* Take the sources of cfg (sorted copy; the configuration then points at
 * it).  0 or -ENOMEM (nothing changed). */
static int set_sources(struct tree *t, const struct inart_ps_tree_cfg *cfg)
{
	struct inart_ps_source *a = NULL;

	if (cfg->n_sources > 0) {
		a = malloc((size_t)cfg->n_sources * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		memcpy(a, cfg->sources, (size_t)cfg->n_sources * sizeof(*a));
		qsort(a, cfg->n_sources, sizeof(*a), src_cmp);
	}
	free(t->src);
	t->src = a;
	t->n_src = cfg->n_sources;
	t->cfg.sources = a;
	t->cfg.n_sources = cfg->n_sources;
	t->src_ip = 0;
	t->src_idx = -1;
	return 0;
}

static struct tree *tree_new(const struct inart_ps_tree_cfg *cfg, uint32_t max_chunks)
{
	struct tree *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cfg = *cfg;
	t->cfg.max_chunks = max_chunks;
	t->cfg.sources = NULL;
	t->cfg.n_sources = 0;
	t->bw = (cfg->fan_in + 63) / 64;
	t->vmax = inart_wire_max_values(t->bw);
	t->stride = sizeof(struct rec) + 16 * (size_t)t->bw + 8 * (size_t)t->vmax;
	t->max_chunks = max_chunks;
	t->n_blocks = (max_chunks + INART_PS_BLOCK_CHUNKS - 1) / INART_PS_BLOCK_CHUNKS;
	for (int p = 0; p < 2; p++) {
		t->blocks[p] = calloc(t->n_blocks, sizeof(*t->blocks[p]));
		if (t->blocks[p] == NULL)
			goto fail;
		/* all records now: the network never makes the PS allocate */
		for (uint32_t b = 0; b < t->n_blocks; b++) {
			t->blocks[p][b] = calloc(INART_PS_BLOCK_CHUNKS, t->stride);
			if (t->blocks[p][b] == NULL)
				goto fail;
		}
	}
	t->rk = calloc(cfg->fan_in, sizeof(*t->rk));
	t->last_iter = calloc(cfg->fan_in, sizeof(*t->last_iter));
	t->last_any = calloc(cfg->fan_in, sizeof(*t->last_any));
	t->child_of = calloc(cfg->fan_in, sizeof(*t->child_of));
	if (t->rk == NULL || t->last_iter == NULL || t->last_any == NULL || t->child_of == NULL ||
	    set_sources(t, cfg) < 0)
		goto fail;
	for (int r = 0; r < cfg->fan_in; r++)
		t->full[r / 64] |= (uint64_t)1 << (r % 64);
	return t;
fail:
	tree_free(t);
	return NULL;
}

/* Forget the tree's chunk state (a new run of the job): a new generation of
 * records (the old ones read as empty), progress and bookkeeping cleared;
 * the configuration, sources and the records' memory stay. */
static void tree_clear(struct tree *t)
{
	int n = t->cfg.fan_in;

	t->gen++;
	t->have_iter = 0;
	t->cur_iter = t->cur_open = 0;
	memset(t->rk, 0, (size_t)n * sizeof(*t->rk));
	memset(t->last_iter, 0, (size_t)n * sizeof(*t->last_iter));
	memset(t->last_any, 0, (size_t)n * sizeof(*t->last_any));
	memset(t->child_of, 0, (size_t)n * sizeof(*t->child_of));
	memset(t->child_known, 0, sizeof(t->child_known));
	t->learn_ip = 0;
	t->learn_child = 0;
	t->pend_head = t->pend_n = 0;
	t->nack_rtt = 0;
	t->chain_iter = t->chain_last = 0;
	t->data_ns = t->data_gap = t->sweep_ns = 0;
	t->hi_iter = t->hi_pos = 0;
	t->rx_ns = 0;
	t->have_rx = 0;
}

/* Replace tree i by a fresh one with configuration cfg (which may be the
 * old tree's own: it is copied before the old tree is freed).  The new
 * tree, or NULL (out of memory; tree i left as it was). */
static struct tree *tree_renew(struct inart_ps *ps, int i, const struct inart_ps_tree_cfg *cfg,
			       uint32_t max_chunks)
{
	struct tree *t = tree_new(cfg, max_chunks);

	if (t != NULL) {
		tree_free(ps->trees[i]);
		ps->trees[i] = t;
	}
	return t;
}

static int cfg_ok(const struct inart_ps_tree_cfg *cfg)
{
	if (cfg == NULL || cfg->fan_in < 1 || cfg->fan_in > INART_WIRE_MAX_CONTRIB ||
	    cfg->n_children > INART_PS_MAX_CHILDREN ||
	    cfg->max_chunks > INART_PS_LIMIT_MAX_CHUNKS || cfg->n_sources > INART_PS_MAX_SOURCES ||
	    (cfg->n_sources > 0 && cfg->sources == NULL))
		return 0;
	for (int i = 0; i < cfg->n_sources; i++)
		if (cfg->sources[i].rank != INART_PS_ANY_RANK &&
		    cfg->sources[i].rank >= cfg->fan_in)
			return 0;
	return 1;
}

/* A tree of the same shape keeps its chunk state: take the new children and
 * sources (and learn again where the ranks are). 0 or -ENOMEM. */
static int tree_reconf(struct tree *t, const struct inart_ps_tree_cfg *cfg)
{
	int rc = set_sources(t, cfg);
	const struct inart_ps_source *src = t->cfg.sources;
	uint16_t n_src = t->cfg.n_sources;

	if (rc < 0)
		return rc;
	t->cfg = *cfg;
	t->cfg.max_chunks = t->max_chunks;
	t->cfg.sources = src;
	t->cfg.n_sources = n_src;
	memset(t->child_of, 0, cfg->fan_in * sizeof(*t->child_of));
	memset(t->child_known, 0, sizeof(t->child_known));
	t->learn_ip = 0;
	t->learn_child = 0;
	return 0;
}

static uint32_t max_chunks_of(const struct inart_ps_tree_cfg *cfg)
{
	return cfg->max_chunks ? cfg->max_chunks : INART_PS_DEFAULT_MAX_CHUNKS;
}

int inart_ps_tree_set(struct inart_ps *ps, const struct inart_ps_tree_cfg *cfg)
{
	uint32_t max_chunks;
	struct tree *t;
	int i;

	if (ps == NULL || !cfg_ok(cfg))
		return -EINVAL;
	max_chunks = max_chunks_of(cfg);
	i = tree_find(ps, cfg->job, cfg->tree);
	if (i >= 0) {
		t = ps->trees[i];
		if (t->cfg.fan_in == cfg->fan_in && t->max_chunks == max_chunks)
			return tree_reconf(t, cfg);
		return tree_renew(ps, i, cfg, max_chunks) ? 0 : -ENOMEM;
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

int inart_ps_tree_reset(struct inart_ps *ps, uint32_t job, uint16_t tree)
{
	int i = ps ? tree_find(ps, job, tree) : -1;

	if (i < 0)
		return -ENOENT;
	tree_clear(ps->trees[i]);
	return 0;
}

void inart_ps_carry(struct inart_ps *to, struct inart_ps *from, int reset)
{
	if (to == NULL || from == NULL)
		return;
	to->st = from->st;
	for (int i = 0; i < to->n_trees && !reset; i++) {
		struct tree *n = to->trees[i], *o;
		int k = tree_find(from, n->cfg.job, n->cfg.tree);

		if (k < 0)
			continue;
		o = from->trees[k];
		if (o->cfg.fan_in != n->cfg.fan_in || o->max_chunks != n->max_chunks)
			continue;
		/* the old tree's state with the new tree's configuration: swap
		 * the configuration parts (children, sources, learning) */
		{
			struct inart_ps_tree_cfg c = o->cfg;
			struct inart_ps_source *src = o->src;
			int n_src = o->n_src;

			o->cfg = n->cfg;
			o->src = n->src;
			o->n_src = n->n_src;
			o->src_ip = 0;
			o->src_idx = -1;
			memset(o->child_of, 0, o->cfg.fan_in * sizeof(*o->child_of));
			memset(o->child_known, 0, sizeof(o->child_known));
			o->learn_ip = 0;
			o->learn_child = 0;
			n->cfg = c;
			n->src = src;
			n->n_src = n_src;
		}
		to->trees[i] = o;
		from->trees[k] = n;
	}
}

void inart_ps_lose_state(struct inart_ps *ps)
{
	for (int i = 0; ps != NULL && i < ps->n_trees; i++)
		tree_clear(ps->trees[i]);
}

int inart_ps_n_trees(const struct inart_ps *ps)
{
	return ps ? ps->n_trees : 0;
}

size_t inart_ps_bytes(const struct inart_ps *ps)
{
	size_t b = 0;

	for (int i = 0; ps != NULL && i < ps->n_trees; i++) {
		const struct tree *t = ps->trees[i];

		b += sizeof(*t) + 2 * (size_t)t->n_blocks * INART_PS_BLOCK_CHUNKS * t->stride +
		     (size_t)t->cfg.fan_in * (sizeof(*t->rk) + 4 + 1 + 2) +
		     (size_t)t->n_src * sizeof(*t->src);
	}
	return b;
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

/* The record of (iter, seq) (any iteration; one of an older generation is
 * made empty). */
static struct rec *rec_get(struct tree *t, uint32_t iter, uint32_t seq)
{
	uint8_t *blk = t->blocks[iter & 1][seq / INART_PS_BLOCK_CHUNKS];
	struct rec *r = (struct rec *)(blk + (size_t)(seq % INART_PS_BLOCK_CHUNKS) * t->stride);

	if (r->gen != t->gen) {
		r->gen = t->gen;
		r->state = REC_EMPTY;
	}
	return r;
}

/* (Re)start record r for chunk h (open, empty), counting the open records
 * of the current iteration. */
static void rec_start(struct tree *t, struct rec *r, const struct inart_wire_hdr *h)
{
	int was_open = r->state == REC_OPEN && r->iter == t->cur_iter;

	r->iter = h->iter;
	r->state = REC_OPEN;
	r->scale = h->scale_exp;
	r->flags = 0;
	r->count = h->count;
	r->slot = h->slot;
	r->nbits = 0;
	r->nack_lvl = 0;
	r->nack_ns = 0;
	r->ans_ns = r->remc_ns = r->touch_ns = 0;
	r->ans_ip = r->remc_ip = 0;
	r->remc_child = 0;
	r->prev = 0;
	memset(rec_bitmap(r), 0, 16 * (size_t)t->bw); /* bitmap and nacked */
	memset(rec_sums(r, t->bw), 0, 8 * (size_t)h->count);
	if (!was_open && r->iter == t->cur_iter)
		t->cur_open++;
}

/* The record of (iter, seq) if it is of this generation and belongs to
 * iter, else NULL. */
static struct rec *rec_peek(const struct tree *t, uint32_t iter, uint32_t seq)
{
	const uint8_t *blk = t->blocks[iter & 1][seq / INART_PS_BLOCK_CHUNKS];
	struct rec *r = (struct rec *)(blk + (size_t)(seq % INART_PS_BLOCK_CHUNKS) * t->stride);

	return r->gen == t->gen && r->state != REC_EMPTY && r->iter == iter ? r : NULL;
}

/* Send header h (label and flags as given; vals: h->count host-order values)
 * to every child (to_children: one copy per child with its label and
 * address, port INART_WIRE_UDP_PORT) or as one unicast to (uc_ip, uc_port).
 * Returns datagrams emitted; copies that do not fit max_out are counted in
 * out_full. */
/* Which children copies towards the ranks in `ranks` (bw words; NULL:
 * every child) go to: the children those ranks were learned under (and the
 * other children with the same address), plus, if some rank's child is not
 * known, every child nothing was learned from (or every child, if all are
 * known).  sel: n_children flags. */
static void select_children(const struct tree *t, const uint64_t *ranks, uint8_t *sel)
{
	int nc = t->cfg.n_children, unknown = 0, any_unlearned = 0;

	memset(sel, ranks == NULL, (size_t)nc);
	if (ranks == NULL)
		return;
	for (int w = 0; w < t->bw; w++) {
		for (uint64_t b = ranks[w]; b; b &= b - 1) {
			int c = t->child_of[64 * w + __builtin_ctzll(b)];

			if (c == 0 || c > nc)
				unknown = 1;
			else
				sel[c - 1] = 1;
		}
	}
	for (int c = 0; c < nc; c++)
		any_unlearned |= !t->child_known[c];
	for (int c = 0; c < nc; c++) {
		if (unknown && (!t->child_known[c] || !any_unlearned)) {
			sel[c] = 1;
			continue;
		}
		if (sel[c] != 1)
			continue;
		for (int d = 0; d < nc; d++) /* the same node reached by another label */
			if (!sel[d] && t->cfg.children[d].ip == t->cfg.children[c].ip)
				sel[d] = 2;
	}
}

/* Send header h (label and flags as given; vals: h->count host-order values)
 * to the children selected for `ranks` (to_children; see select_children;
 * one copy per child with its label and address, port INART_WIRE_UDP_PORT)
 * or as one unicast to (uc_ip, uc_port).  Returns datagrams emitted; copies
 * that do not fit max_out are counted in out_full. */
static int emit_hdr(struct inart_ps *ps, const struct tree *t, struct inart_wire_hdr *h,
		    const int32_t *vals, int to_children, const uint64_t *ranks, uint32_t uc_ip,
		    uint16_t uc_port, struct inart_dgram *out, int max_out)
{
	const struct inart_ps_child *ch = t->cfg.children;
	uint8_t sel[INART_PS_MAX_CHILDREN];
	int n = 0, want = 0;
	size_t len = 0;

	if (!to_children) {
		if (max_out < 1) {
			ps->st.out_full++;
			return 0;
		}
		h->version = INART_WIRE_VERSION;
		h->label = 0;
		len = inart_wire_encode(h, vals, out[0].data, INART_DGRAM_MAX);
		if (len == 0) /* cannot happen: the header is built from checked state */
			return 0;
		out[0].len = (uint16_t)len;
		out[0].peer_ip = uc_ip;
		out[0].peer_port = uc_port;
		return 1;
	}
	select_children(t, ranks, sel);
	h->version = INART_WIRE_VERSION;
	for (int c = 0; c < t->cfg.n_children; c++) {
		if (!sel[c])
			continue;
		want++;
		if (n >= max_out)
			continue;
		if (n == 0) {
			h->label = ch[c].label;
			len = inart_wire_encode(h, vals, out[0].data, INART_DGRAM_MAX);
			if (len == 0)
				return 0;
		} else {
			memcpy(out[n].data, out[0].data, len);
			inart_put_be32(out[n].data + 12, ch[c].label);
		}
		out[n].len = (uint16_t)len;
		out[n].peer_ip = ch[c].ip;
		out[n].peer_port = INART_WIRE_UDP_PORT;
		n++;
	}
	ps->st.out_full += (uint64_t)(want - n);
	return n;
}

/* Learn that the ranks of h came from the child at address src (if it is
 * one). */
static void learn_children(struct tree *t, const struct inart_wire_hdr *h, uint32_t src)
{
	int c = -1;

	if (src == t->learn_ip && t->learn_child) {
		c = t->learn_child - 1;
	} else {
		for (int k = 0; k < t->cfg.n_children; k++) {
			if (t->cfg.children[k].ip == src) {
				c = k;
				break;
			}
		}
		t->learn_ip = src;
		t->learn_child = c + 1;
	}
	if (c < 0)
		return;
	t->child_known[c] = 1;
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h->bitmap[w]; b; b &= b - 1)
			t->child_of[64 * w + __builtin_ctzll(b)] = (uint16_t)(c + 1);
}

/* Header of a packet about chunk (r->iter, seq) of tree t. */
static void hdr_of(const struct tree *t, const struct rec *r, uint32_t seq, uint8_t flags,
		   struct inart_wire_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->flags = flags;
	h->bitmap_words = (uint8_t)t->bw;
	h->scale_exp = r->scale;
	h->job = t->cfg.job;
	h->tree = t->cfg.tree;
	h->fan_in = t->cfg.fan_in;
	h->iter = r->iter;
	h->seq = seq;
	h->slot = r->slot;
}

/* Emit the result of record r (chunk seq) -- or, notice = 1, a scale notice
 * (chunk's bitmap, no values) -- to the children towards `ranks` (NULL:
 * all) or as one unicast RETX to (uc_ip, uc_port) with label 0.  Returns
 * datagrams emitted. */
static int emit(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq, int notice,
		int to_children, const uint64_t *ranks, uint32_t uc_ip, uint16_t uc_port,
		struct inart_dgram *out, int max_out)
{
	const int64_t *sums = rec_sums(r, t->bw);
	struct inart_wire_hdr h;
	int n;

	hdr_of(t, r, seq,
	       (uint8_t)(INART_F_RESULT | (to_children ? 0 : INART_F_RETX) |
			 (notice ? INART_F_OVERFLOW : (r->flags & INART_F_OVERFLOW))),
	       &h);
	h.count = notice ? 0 : r->count;
	h.prev = notice ? 0 : r->prev;
	memcpy(h.bitmap, notice ? rec_bitmap(r) : t->full, 8 * (size_t)t->bw);
	if (!notice) {
		for (int i = 0; i < r->count; i++) {
			int64_t v = sums[i];

			ps->vals[i] = v > INT32_MAX   ? INT32_MAX
				      : v < INT32_MIN ? INT32_MIN
						      : (int32_t)v;
		}
	}
	n = emit_hdr(ps, t, &h, ps->vals, to_children, ranks, uc_ip, uc_port, out, max_out);
	if (n == 0)
		return 0;
	if (notice)
		ps->st.notices++;
	else if (to_children)
		ps->st.results_sent += (uint64_t)n;
	else
		ps->st.retx_answered++;
	return n;
}

/* The child (1 + index) the single rank of `asker` was learned under, 0 if
 * not known (copies towards it go to every child nothing was learned from,
 * or to all). */
static int asker_child(const struct tree *t, const uint64_t *asker)
{
	for (int w = 0; w < t->bw; w++)
		if (asker[w])
			return t->child_of[64 * w + __builtin_ctzll(asker[w])];
	return 0;
}

/* A worker without the result of a complete record asks (probe or data
 * retransmission).  The first asker gets a unicast answer; the same asker
 * again within the NACK loop time gets nothing (the answer is on its way);
 * another one within that time (several workers lost the result: a copy
 * lost high in the tree) makes the PS send the result down the tree once
 * more, towards the asker's child; askers under that child within that
 * time after it get nothing (the copy is on its way to them; their retries
 * come later), except the one that caused it (its copy was lost too);
 * askers under another child are treated as if it had not happened. */
static int answer_done(struct inart_ps *ps, const struct tree *t, struct rec *r, uint32_t seq,
		       const uint64_t *asker, uint32_t src_ip, uint16_t src_port, uint64_t now,
		       struct inart_dgram *out, int max_out)
{
	uint64_t hold = t->nack_rtt;
	int child = asker_child(t, asker), n;

	if (hold && r->remc_ns && now < r->remc_ns + hold &&
	    (r->remc_child == 0 || r->remc_child == child)) {
		if (src_ip != r->remc_ip) {
			ps->st.answers_held++;
			return 0;
		}
	} else if (hold && r->ans_ns && now < r->ans_ns + hold) {
		if (src_ip == r->ans_ip) {
			ps->st.answers_held++;
			return 0;
		}
		n = emit(ps, t, r, seq, 0, 1, asker, 0, 0, out, max_out);
		if (n > 0) {
			r->remc_ns = now;
			r->remc_ip = src_ip;
			r->remc_child = (uint16_t)child;
			ps->st.resent_down++;
		}
		return n;
	}
	r->ans_ns = now;
	r->ans_ip = src_ip;
	return emit(ps, t, r, seq, 0, 0, NULL, src_ip, src_port, out, max_out);
}

/* A NACK for chunk (iter, seq) at scale: RESULT|NACK with bitmap `ranks`
 * (bw words), no values; to every child (the ranks retransmit), prev = the
 * NACK's round for the record (switches repair once per round), or, as the
 * answer to a probe, unicast with RETX (ranks = every rank missing), prev =
 * the head of the tree's result chain (the prober finds the results it
 * missed from there).  `held` (INART_WIRE_NACK_HELD or 0) is ORed into prev:
 * set, nothing shows the ranks named (the prober's, in an answer) lost. */
static int emit_nack(struct inart_ps *ps, const struct tree *t, uint32_t iter, uint32_t seq,
		     uint16_t slot, int8_t scale, const uint64_t *ranks, uint32_t round,
		     uint32_t held, int to_children, uint32_t uc_ip, uint16_t uc_port,
		     struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr h;
	int n;

	memset(&h, 0, sizeof(h));
	h.flags = (uint8_t)(INART_F_RESULT | INART_F_NACK | (to_children ? 0 : INART_F_RETX));
	h.bitmap_words = (uint8_t)t->bw;
	h.scale_exp = scale;
	h.job = t->cfg.job;
	h.tree = t->cfg.tree;
	h.fan_in = t->cfg.fan_in;
	h.iter = iter;
	h.seq = seq;
	h.slot = slot;
	h.prev = (to_children ? round : t->chain_iter == iter ? t->chain_last : 0) | held;
	memcpy(h.bitmap, ranks, 8 * (size_t)t->bw);
	n = emit_hdr(ps, t, &h, NULL, to_children, ranks, uc_ip, uc_port, out, max_out);
	if (n > 0) {
		if (to_children)
			ps->st.nacks += (uint64_t)n;
		else
			ps->st.probe_nacks++;
	}
	return n;
}

static void drop(struct inart_ps *ps, uint64_t *reason)
{
	(*reason)++;
	ps->st.dropped++;
}

static int bits_count(const uint64_t *a, int bw)
{
	int n = 0;

	for (int i = 0; i < bw; i++)
		n += __builtin_popcountll(a[i]);
	return n;
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

	for (int i = 0; i < t->bw; i++)
		bm[i] |= h->bitmap[i];
	r->nbits = (uint16_t)(r->nbits + bits_count(h->bitmap, t->bw));
	for (int i = 0; i < h->count; i++)
		sums[i] += (int32_t)inart_get_be32(payload + 4 * (size_t)i);
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

static void complete(struct tree *t, struct rec *r)
{
	const int64_t *sums = rec_sums(r, t->bw);

	if (r->state == REC_OPEN && r->iter == t->cur_iter && t->cur_open > 0)
		t->cur_open--;
	r->state = REC_DONE;
	for (int i = 0; i < r->count; i++)
		if (sums[i] > INT32_MAX || sums[i] < INT32_MIN) {
			r->flags |= INART_F_OVERFLOW;
			break;
		}
}

/* Note that the ranks of h->bitmap contributed chunk (iter, seq) along the
 * tree (progress.h). */
static void ranks_note(struct tree *t, const struct inart_wire_hdr *h)
{
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h->bitmap[w]; b; b &= b - 1)
			inart_progress_note(&t->rk[64 * w + __builtin_ctzll(b)], h->iter, h->seq);
}

/* DATA of chunk (h->iter, h->seq) arrived along the tree at now (not a
 * retransmission): time the gaps between such arrivals (a stall counts at
 * most twice the current estimate) and note the newest chunk. */
static void data_note(struct tree *t, const struct inart_wire_hdr *h, uint64_t now)
{
	if (t->data_ns && now > t->data_ns) {
		uint64_t g = now - t->data_ns;

		if (t->data_gap && g > 2 * t->data_gap)
			g = 2 * t->data_gap;
		t->data_gap = t->data_gap ? (7 * t->data_gap + g) / 8 : g;
	}
	t->data_ns = now;
	if (t->hi_iter != h->iter && (int32_t)(h->iter - t->hi_iter) > 0) {
		t->hi_iter = h->iter;
		t->hi_pos = 0;
	}
	if (t->hi_iter == h->iter && h->seq + 1 > t->hi_pos)
		t->hi_pos = h->seq + 1;
}

/* Rank r's contribution to chunk (iter, seq) will not arrive along the tree
 * any more (progress.h). */
static int rank_gone(const struct tree *t, int r, uint32_t iter, uint32_t seq)
{
	return inart_progress_gone(&t->rk[r], iter, seq, INART_PS_LOST_AFTER);
}

/* The ranks record r (chunk c of iter) misses whose contributions are gone
 * into lost (bw words); 1 if any. */
static int lost_ranks(const struct tree *t, struct rec *r, uint32_t iter, uint32_t c,
		      uint64_t *lost)
{
	const uint64_t *bm = rec_bitmap(r);
	uint64_t any = 0;

	for (int w = 0; w < t->bw; w++) {
		lost[w] = 0;
		for (uint64_t m = t->full[w] & ~bm[w]; m; m &= m - 1) {
			int b = __builtin_ctzll(m);

			if (rank_gone(t, 64 * w + b, iter, c))
				lost[w] |= (uint64_t)1 << b;
		}
		any |= lost[w];
	}
	return any != 0;
}

/* Chunk c of h->iter, of which nothing arrived, if some rank is gone
 * already (the whole chunk was lost, e.g. an aggregate of every rank): an
 * empty open record, so that it can be NACKed; its count, scale and slot
 * are taken from the first contribution absorbed (see rx_data).  The slot
 * named in its NACKs is h's minus the distance (switches check the chunk
 * in the slot, so a wrong guess only prevents a repair there). */
static struct rec *placeholder(struct tree *t, const struct inart_wire_hdr *h, uint32_t c)
{
	struct rec *r;
	int any = 0;

	for (int w = 0; w < t->bw && !any; w++)
		for (uint64_t m = t->full[w]; m && !any; m &= m - 1)
			any = rank_gone(t, 64 * w + __builtin_ctzll(m), h->iter, c);
	/* workers send a tree's chunks in order from 0: the chunk before
	 * exists unless c is the first */
	if (!any || (c > 0 && rec_peek(t, h->iter, c - 1) == NULL))
		return NULL;
	r = rec_get(t, h->iter, c);
	rec_start(t, r, h);
	r->count = 0;
	r->slot = (uint16_t)(h->slot - (h->seq - c));
	return r;
}

static void pend_pop(struct tree *t)
{
	t->pend_head = (t->pend_head + 1) % NACK_PENDING;
	t->pend_n--;
}

static void pend_push(struct tree *t, uint32_t iter, uint32_t seq)
{
	int i;

	if (t->pend_n == NACK_PENDING)
		pend_pop(t); /* the oldest is left to the workers' timers */
	i = (t->pend_head + t->pend_n++) % NACK_PENDING;
	t->pend_iter[i] = iter;
	t->pend_seq[i] = seq;
}

/* After a packet of chunk (iter, seq) arrived along the tree at now: if the
 * record of seq, or the one INART_PS_LOST_AFTER chunks behind, is open and
 * misses ranks that are gone, a NACK naming those not named yet goes to
 * every child (replicated down the tree; the named workers retransmit).  Then the oldest NACKed
 * record still open gets its NACK repeated (all its lost ranks) if twice the
 * NACK-to-retransmission time passed since its last NACK. */
static int nack_check(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		      uint64_t now, struct inart_dgram *out, int max_out)
{
	uint64_t lost[INART_WIRE_MAX_BITMAP_WORDS];
	uint32_t iter = h->iter, seq = h->seq;
	struct rec *r;
	int n = 0;

	/* the record the packet joined (a late partial whose missing ranks are
	 * gone already), then the one the packet is evidence for */
	for (int k = 0; k < 2; k++) {
		uint32_t c = seq - (k ? INART_PS_LOST_AFTER : 0);
		uint64_t *nk, any = 0;

		if (k && seq < INART_PS_LOST_AFTER)
			break;
		r = rec_peek(t, iter, c);
		if (r == NULL && k)
			r = placeholder(t, h, c);
		if (r == NULL || r->state != REC_OPEN || !lost_ranks(t, r, iter, c, lost))
			continue;
		nk = rec_nacked(r, t->bw);
		for (int w = 0; w < t->bw; w++) {
			lost[w] &= ~nk[w];
			nk[w] |= lost[w];
			any |= lost[w];
		}
		if (!any)
			continue;
		if (r->nack_lvl == 0) {
			r->nack_lvl = 1;
			pend_push(t, iter, c);
		}
		r->nack_ns = now;
		n += emit_nack(ps, t, iter, c, r->slot, r->scale, lost, r->nack_lvl, 0, 1, 0, 0,
			       out + n, max_out - n);
	}
	while (t->pend_n > 0) {
		int i = t->pend_head;
		uint32_t pi = t->pend_iter[i], pc = t->pend_seq[i];

		r = rec_peek(t, pi, pc);
		if (r == NULL || r->state != REC_OPEN || !lost_ranks(t, r, pi, pc, lost)) {
			pend_pop(t);
			continue;
		}
		if (t->nack_rtt == 0 || now < r->nack_ns + 2 * t->nack_rtt)
			break;
		pend_pop(t);
		r->nack_ns = now;
		if (r->nack_lvl < 255)
			r->nack_lvl++;
		if (r->nack_lvl < NACK_ROUNDS)
			pend_push(t, pi, pc);
		for (int w = 0; w < t->bw; w++)
			rec_nacked(r, t->bw)[w] |= lost[w];
		n += emit_nack(ps, t, pi, pc, r->slot, r->scale, lost, r->nack_lvl, 0, 1, 0, 0,
			       out + n, max_out - n);
		break;
	}
	return n;
}

/* No DATA came along the tree for INART_PS_DRAIN_GAPS smoothed gaps between
 * them (any time after the first, before a gap was measured): the workers'
 * streams stopped (the end of an all-reduce, or every window stuck), so a
 * contribution still missing will not come by itself: it was lost or waits
 * in a switch's slot. */
static int drained(const struct tree *t, uint64_t now)
{
	return t->data_ns != 0 && now > t->data_ns + INART_PS_DRAIN_GAPS * t->data_gap;
}

/* A worker waits for open record r (chunk seq): if its last NACK had time
 * to be acted on (the NACK loop time), send a new NACK round down the tree
 * now, naming the ranks it misses that are gone (a NACK or retransmission
 * was lost) or, if nothing arrived for the record for a NACK loop time or
 * the tree is drained (the end of an all-reduce: no later chunk shows who
 * is gone), every rank it misses (also for the first round before any NACK
 * loop was timed).
 * Switches on the way flush what they hold for the chunk or send their kept
 * aggregates again; the workers named retransmit. */
static int renack(struct inart_ps *ps, struct tree *t, struct rec *r, uint32_t iter, uint32_t seq,
		  uint64_t now, struct inart_dgram *out, int max_out)
{
	uint64_t lost[INART_WIRE_MAX_BITMAP_WORDS], held[INART_WIRE_MAX_BITMAP_WORDS];
	uint64_t any_held = 0;
	int any_lost;

	if (r->nack_lvl >= NACK_ROUNDS || (t->nack_rtt == 0 && r->nack_lvl > 0) ||
	    now < r->nack_ns + t->nack_rtt)
		return 0;
	any_lost = lost_ranks(t, r, iter, seq, lost);
	/* (always before any loop time was measured) */
	if (now >= r->touch_ns + t->nack_rtt || drained(t, now)) {
		/* the others missing too, and the NACK is marked held: nothing
		 * shows them lost (a stalled switch or worker may hold them);
		 * switches holding them flush, their workers pay a resend from
		 * their credit */
		for (int w = 0; w < t->bw; w++) {
			held[w] = t->full[w] & ~rec_bitmap(r)[w] & ~lost[w];
			any_held |= held[w];
		}
	}
	if (!any_lost && !any_held)
		return 0;
	if (r->nack_lvl == 0)
		pend_push(t, iter, seq);
	r->nack_lvl++;
	r->nack_ns = now;
	for (int w = 0; w < t->bw; w++)
		rec_nacked(r, t->bw)[w] |= lost[w] | (any_held ? held[w] : 0);
	/* one NACK for both kinds (a second would cost as many frames again on
	 * the PS's links): marked held if a rank named may be held */
	for (int w = 0; w < t->bw && any_held; w++)
		lost[w] |= held[w];
	return emit_nack(ps, t, iter, seq, r->slot, r->scale, lost, r->nack_lvl,
			 any_held ? INART_WIRE_NACK_HELD : 0, 1, 0, 0, out, max_out);
}

/* A probe of chunk h->seq arrived while the tree is drained: once per drain
 * (the first probe after the last DATA), a NACK round for every other open
 * record of the newest iteration that may have one now (renack: every rank
 * it misses), so that the losses of the last chunks are all asked for in one
 * round trip instead of one probe each.  Returns datagrams emitted. */
static int drain_sweep(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		       uint64_t now, struct inart_dgram *out, int max_out)
{
	int n = 0;

	if (!drained(t, now) || t->sweep_ns > t->data_ns || t->hi_iter != h->iter)
		return 0;
	t->sweep_ns = now;
	for (uint32_t c = 0; c < t->hi_pos && n < max_out; c++) {
		struct rec *r = rec_peek(t, h->iter, c);

		if (r == NULL || r->state != REC_OPEN || c == h->seq)
			continue;
		n += renack(ps, t, r, h->iter, c, now, out + n, max_out - n);
	}
	return n;
}

/* INART_WIRE_NACK_HELD if nothing shows the prober's contribution to chunk
 * (h->iter, h->seq) lost (no later chunk of its rank arrived along the tree:
 * it may be queued, or held in a switch's slot or a stalled process), else
 * 0: the answer to its probe says which. */
static uint32_t prober_held(const struct tree *t, const struct inart_wire_hdr *h)
{
	for (int w = 0; w < t->bw; w++)
		if (h->bitmap[w])
			return rank_gone(t, 64 * w + __builtin_ctzll(h->bitmap[w]), h->iter, h->seq)
				   ? 0
				   : INART_WIRE_NACK_HELD;
	return 0;
}

/* A probe (DATA|RETX|NACK, header only) from a worker without the result of
 * chunk (iter, seq): the result if complete, else a unicast NACK naming every
 * rank the record misses (the prober learns whether its contribution is
 * counted); scale differences as for retransmissions.  Never changes state. */
static int probe(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		 uint32_t src_ip, uint16_t src_port, uint64_t now, struct inart_dgram *out,
		 int max_out)
{
	struct rec *r = rec_peek(t, h->iter, h->seq);
	uint64_t miss[INART_WIRE_MAX_BITMAP_WORDS];
	int n;

	ps->st.probes++;
	if (r == NULL || (r->state == REC_OPEN && r->nbits == 0))
		return emit_nack(ps, t, h->iter, h->seq, h->slot, h->scale_exp, h->bitmap, 0,
				 prober_held(t, h), 0, src_ip, src_port, out, max_out);
	if (h->scale_exp > r->scale)
		return emit(ps, t, r, h->seq, r->state != REC_DONE, 0, NULL, src_ip, src_port, out,
			    max_out);
	if (h->scale_exp < r->scale) {
		if (r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW)) {
			drop(ps, &ps->st.drop_stale);
			return 0;
		}
		/* the record is at a scale the prober left: its data will restart it */
		return emit_nack(ps, t, h->iter, h->seq, h->slot, h->scale_exp, h->bitmap, 0, 0, 0,
				 src_ip, src_port, out, max_out);
	}
	if (r->state == REC_DONE)
		return answer_done(ps, t, r, h->seq, h->bitmap, src_ip, src_port, now, out,
				   max_out);
	n = renack(ps, t, r, h->iter, h->seq, now, out, max_out);
	for (int w = 0; w < t->bw; w++)
		miss[w] = t->full[w] & ~rec_bitmap(r)[w];
	return n + emit_nack(ps, t, h->iter, h->seq, r->slot, r->scale, miss, 0,
			     bits_overlap(miss, h->bitmap, t->bw) ? prober_held(t, h) : 0, 0,
			     src_ip, src_port, out + n, max_out - n);
}

/* A contribution (any DATA but a probe) of tree t; the checks common to all
 * packets are done. */
static int rx_data(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		   const uint8_t *payload, uint32_t src_ip, uint16_t src_port, uint64_t now,
		   struct inart_dgram *out, int max_out)
{
	struct rec *r;
	int retx, ask;

	r = rec_get(t, h->iter, h->seq);
	if (r->state == REC_EMPTY || r->iter != h->iter) {
		rec_start(t, r, h);
	} else if (r->state == REC_OPEN && r->nbits == 0) {
		/* an empty record (NACKed before anything arrived): the first
		 * contribution sets the chunk's count, scale and slot */
		r->scale = h->scale_exp;
		r->count = h->count;
		r->slot = h->slot;
		r->flags = 0;
		memset(rec_sums(r, t->bw), 0, 8 * (size_t)h->count);
	} else if (h->count != r->count) {
		drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	/* a worker's retransmission (label 0); a switch's repair of a lost
	 * aggregate travels the tree (label set) and is never answered, nor is
	 * one that reaches the PS with label 0 from the last hop's entry: only a
	 * single rank (a worker sends its own) is answered */
	retx = (h->flags & INART_F_RETX) != 0 && h->label == 0;
	ask = retx && bits_count(h->bitmap, t->bw) == 1;
	if (h->scale_exp < r->scale) {
		if (r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW)) {
			/* no worker lowers its scale below a clean result */
			drop(ps, &ps->st.drop_stale);
			return 0;
		}
		rec_start(t, r, h);
		ps->st.rescales++;
	} else if (h->scale_exp > r->scale) {
		if (!(h->flags & INART_F_RETX)) {
			drop(ps, &ps->st.drop_stale);
			return 0;
		}
		if (!ask)
			return 0; /* a repair at a scale the chunk left */
		/* the sender missed a rescale: tell it the chunk's scale */
		return emit(ps, t, r, h->seq, r->state != REC_DONE, 0, NULL, src_ip, src_port, out,
			    max_out);
	}
	if (r->state == REC_DONE) {
		ps->st.duplicates++;
		return ask ? answer_done(ps, t, r, h->seq, h->bitmap, src_ip, src_port, now, out,
					 max_out)
			   : 0;
	}
	if (bits_overlap(rec_bitmap(r), h->bitmap, t->bw)) {
		if (!bits_superset(h->bitmap, rec_bitmap(r), t->bw)) {
			ps->st.duplicates++;
			return 0;
		}
		/* the packet counts every contributor the chunk has and more
		 * (a partial aggregate arriving after some retransmissions):
		 * it replaces them */
		replace(t, r, h, payload);
		ps->st.replaced++;
	} else {
		absorb(t, r, h, payload);
	}
	r->touch_ns = now;
	if (retx && r->nack_ns != 0 && now > r->nack_ns &&
	    bits_superset(rec_nacked(r, t->bw), h->bitmap, t->bw)) {
		/* a retransmission a NACK asked for: time the NACK loop (up
		 * fast, down slowly: a repeat NACK before the retransmissions
		 * could arrive only makes duplicates) */
		uint64_t d = now - r->nack_ns;

		if (d > t->nack_rtt)
			t->nack_rtt = t->nack_rtt ? (t->nack_rtt + d) / 2 : d;
		else
			t->nack_rtt = (7 * t->nack_rtt + d) / 8;
	}
	ps->st.absorbed++;
	if (r->nbits < t->cfg.fan_in)
		return 0;
	complete(t, r);
	ps->st.completed++;
	if (r->flags & INART_F_OVERFLOW)
		ps->st.overflows++;
	r->prev = t->chain_last != 0 && t->chain_iter == h->iter ? t->chain_last : 0;
	t->chain_iter = h->iter;
	t->chain_last = h->seq + 1;
	return emit(ps, t, r, h->seq, 0, 1, NULL, 0, 0, out, max_out);
}

/* The source entry of address ip, or NULL. */
static const struct inart_ps_source *source_of(struct tree *t, uint32_t ip)
{
	int lo = 0, hi = t->n_src - 1;

	if (t->src_idx >= 0 && t->src_ip == ip)
		return &t->src[t->src_idx];
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (t->src[mid].ip == ip) {
			t->src_ip = ip;
			t->src_idx = mid;
			return &t->src[mid];
		}
		if (t->src[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* May h come from src?  *worker = 1 if the sender is the worker of the
 * packet's single rank (it gets step notices). */
static int source_ok(struct tree *t, const struct inart_wire_hdr *h, uint32_t src, int *worker)
{
	const struct inart_ps_source *s;
	int single = bits_count(h->bitmap, t->bw) == 1;

	*worker = single;
	if (t->n_src == 0)
		return 1;
	s = source_of(t, src);
	if (s == NULL)
		return 0;
	if (s->rank == INART_PS_ANY_RANK) {
		*worker = 0;
		return 1;
	}
	return single && (h->bitmap[s->rank / 64] >> (s->rank % 64) & 1);
}

/* The step a worker of rank r out of step resynchronises to: the current
 * iteration while it is being collected and r sent nothing of it, else the
 * next one. */
static uint32_t step_target(const struct tree *t, int r)
{
	if (t->cur_open > 0 && !(t->last_any[r] && t->last_iter[r] == t->cur_iter))
		return t->cur_iter;
	return t->cur_iter + 1;
}

/* A step notice to the worker of h's (single) rank: RESULT|STALE, header
 * only, h's chunk, prev = the step to resynchronise to. */
static int emit_stale(struct inart_ps *ps, const struct tree *t, const struct inart_wire_hdr *h,
		      uint32_t src_ip, uint16_t src_port, struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr n;
	int r = 0;

	for (int w = 0; w < t->bw; w++)
		if (h->bitmap[w]) {
			r = 64 * w + __builtin_ctzll(h->bitmap[w]);
			break;
		}
	memset(&n, 0, sizeof(n));
	n.flags = INART_F_RESULT | INART_F_STALE | INART_F_RETX;
	n.bitmap_words = (uint8_t)t->bw;
	n.scale_exp = h->scale_exp;
	n.job = t->cfg.job;
	n.tree = t->cfg.tree;
	n.fan_in = t->cfg.fan_in;
	n.iter = h->iter;
	n.seq = h->seq;
	n.slot = h->slot;
	n.prev = step_target(t, r);
	memcpy(n.bitmap, h->bitmap, 8 * (size_t)t->bw);
	if (emit_hdr(ps, t, &n, NULL, 0, NULL, src_ip, src_port, out, max_out) == 0)
		return 0;
	ps->st.step_notices++;
	return 1;
}

/* The acceptance window (ps.h): 1 if h may go on (cur advanced if h is the
 * next iteration), else 0 with the packet counted as dropped and, to a
 * worker, a step notice in out (*n). */
static int step_check(struct inart_ps *ps, struct tree *t, const struct inart_wire_hdr *h,
		      int worker, uint32_t src_ip, uint16_t src_port, struct inart_dgram *out,
		      int max_out, int *n)
{
	int32_t d;

	*n = 0;
	if (!t->have_iter) {
		t->have_iter = 1;
		t->cur_iter = h->iter;
		t->cur_open = 0;
		return 1;
	}
	d = (int32_t)(h->iter - t->cur_iter);
	if (d == 0)
		return 1;
	if (d == 1) {
		t->cur_iter = h->iter;
		t->cur_open = 0;
		return 1;
	}
	if (d == -1) {
		const struct rec *r = rec_peek(t, h->iter, h->seq);

		/* results of the previous iteration are still served; an
		 * incomplete record of it can never complete (some rank moved on) */
		if (r != NULL && r->state == REC_DONE && !(r->flags & INART_F_OVERFLOW))
			return 1;
	}
	drop(ps, d > 0 ? &ps->st.drop_window : &ps->st.drop_stale);
	if (worker)
		*n = emit_stale(ps, t, h, src_ip, src_port, out, max_out);
	return 0;
}

int inart_ps_rx(struct inart_ps *ps, const uint8_t *data, size_t len, uint32_t src_ip,
		uint16_t src_port, uint64_t now_ns, struct inart_dgram *out, int max_out)
{
	struct inart_wire_hdr h;
	const uint8_t *payload;
	struct tree *t;
	int ti, n, nack, worker;

	if (ps == NULL)
		return 0;
	if (out == NULL || max_out < 0)
		max_out = 0;
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
	nack = (h.flags & INART_F_NACK) != 0;
	if (h.fan_in != t->cfg.fan_in || h.bitmap_words != t->bw || h.count > t->vmax ||
	    (nack ? !(h.flags & INART_F_RETX) : h.count == 0)) {
		drop(ps, &ps->st.drop_mismatch);
		return 0;
	}
	/* nothing from outside the tree touches any state */
	if (!source_ok(t, &h, src_ip, &worker)) {
		drop(ps, &ps->st.drop_source);
		return 0;
	}
	if (h.seq >= t->max_chunks) {
		drop(ps, &ps->st.drop_limit);
		return 0;
	}
	if (t->have_iter && (int32_t)(h.iter - t->cur_iter) <= 0 &&
	    !(h.flags & (INART_F_RETX | INART_F_NACK)) && t->have_rx && now_ns > t->rx_ns &&
	    now_ns - t->rx_ns >= INART_PS_RESTART_IDLE_NS) {
		/* the job started again (see ps.h): a fresh tree, same config */
		tree_clear(t);
		ps->st.restarts++;
	}
	t->rx_ns = now_ns;
	t->have_rx = 1;
	if (!step_check(ps, t, &h, worker, src_ip, src_port, out, max_out, &n))
		return n;
	for (int w = 0; w < t->bw; w++)
		for (uint64_t b = h.bitmap[w]; b; b &= b - 1) {
			t->last_iter[64 * w + __builtin_ctzll(b)] = h.iter;
			t->last_any[64 * w + __builtin_ctzll(b)] = 1;
		}
	learn_children(t, &h, src_ip);
	if (nack) {
		/* (one datagram left for the prober's answer) */
		n = max_out > 1 ? drain_sweep(ps, t, &h, now_ns, out, max_out - 1) : 0;
		return n + probe(ps, t, &h, src_ip, src_port, now_ns, out + n, max_out - n);
	}
	n = rx_data(ps, t, &h, payload, src_ip, src_port, now_ns, out, max_out);
	if (!(h.flags & INART_F_RETX)) {
		/* a fallback may overtake contributions of its ranks still held
		 * in a switch's slot: it says nothing about their progress */
		if (!(h.flags & INART_F_FALLBACK))
			ranks_note(t, &h);
		data_note(t, &h, now_ns);
		n += nack_check(ps, t, &h, now_ns, out + n, max_out - n);
	}
	return n;
}

int inart_ps_tree_step(const struct inart_ps *ps, uint32_t job, uint16_t tree, uint32_t *step)
{
	int i = ps == NULL ? -1 : tree_find(ps, job, tree);

	if (i < 0)
		return -ENOENT;
	if (!ps->trees[i]->have_iter)
		return -EAGAIN;
	*step = ps->trees[i]->cur_iter;
	return 0;
}
