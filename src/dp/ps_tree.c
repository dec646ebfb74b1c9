/*
 * ps_tree: the parameter server core's trees (see ps.h): the table of
 * (job, tree) -> tree (open addressing), a tree's configuration checked and
 * set, its records' memory (all blocks allocated when it is set: no packet
 * allocates), its sources, reconfiguration that keeps the state, a reset
 * (a new generation of records), carrying trees from one PS object to
 * another, deletion, memory and counters.  The packet path is in ps.c and
 * ps_recovery.c; the state in ps_impl.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/slab.h"
#include "dp/ps_impl.h"

static size_t tree_hash(uint32_t job, uint16_t tree)
{
	uint64_t x = ((uint64_t)job << 16 | tree) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 32);
}

int inart_ps_tree_find(const struct inart_ps *ps, uint32_t job, uint16_t tree)
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
	free(t->per_rank);
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

/* The per-rank arrays (fan_in entries each) in one block (common/slab.h):
 * rk, last_iter, last_any, child_of. */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct tree *t = obj;
	size_t n = (size_t)t->cfg.fan_in;

	t->rk = inart_slab_take(s, n, sizeof(*t->rk));
	t->last_iter = inart_slab_take(s, n, sizeof(*t->last_iter));
	t->last_any = inart_slab_take(s, n, sizeof(*t->last_any));
	t->child_of = inart_slab_take(s, n, sizeof(*t->child_of));
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
	t->per_rank = inart_slab_block(t, lay_out);
	if (t->per_rank == NULL)
		goto fail;
	if (set_sources(t, cfg) < 0)
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
void inart_ps_tree_clear(struct tree *t)
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
	t->hold_ns = 0;
	t->hold = 0;
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
	i = inart_ps_tree_find(ps, cfg->job, cfg->tree);
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
	int i = ps ? inart_ps_tree_find(ps, job, tree) : -1;

	if (i < 0)
		return -ENOENT;
	inart_ps_tree_clear(ps->trees[i]);
	return 0;
}

void inart_ps_carry(struct inart_ps *to, struct inart_ps *from, int reset)
{
	if (to == NULL || from == NULL)
		return;
	to->st = from->st;
	for (int i = 0; i < to->n_trees && !reset; i++) {
		struct tree *n = to->trees[i], *o;
		int k = inart_ps_tree_find(from, n->cfg.job, n->cfg.tree);

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
		inart_ps_tree_clear(ps->trees[i]);
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
	i = inart_ps_tree_find(ps, job, tree);
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
