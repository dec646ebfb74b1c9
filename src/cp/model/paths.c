/*
 * paths: hop-count path search over the usable links of a topology.
 *
 * Usable arcs are fixed when the context is created (residual > 0 in both
 * directions, so the usable graph is symmetric and a BFS from dst along
 * outgoing arcs gives the distance of every node *to* dst).  Distances are
 * cached per destination in lazily allocated slots, at most max_slots of them
 * (a memory budget, never fewer than INART_PATHS_MIN_CACHE); when full, the
 * least recently used slot is reused.  Every public call touches at most one
 * cache slot, so an array returned by inart_paths_dist_to stays valid until
 * INART_PATHS_MIN_CACHE other distinct destinations have been asked for.
 *
 * k shortest paths: the shortest-path DAG from src (arcs going one hop closer
 * to dst) is counted with saturating arithmetic; with >= k shortest paths,
 * k of them are unranked at evenly spread ranks.  Otherwise all shortest paths
 * seed Yen's algorithm (spur searches by BFS with the root's nodes blocked and
 * the next arcs of the found paths sharing the root removed).
 *
 * Ownership: the context owns its cache and scratch arrays (O(nodes + arcs)
 * plus the cache); it refers to, and does not own, the topology.
 */
#include "cp/model/paths.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/slab.h"

#define CACHE_BYTES ((size_t)32 << 20)
#define COUNT_SAT ((uint64_t)1 << 62)

struct inart_paths {
	const struct inart_topo *t;
	int n, m;
	unsigned char *usable; /* per arc */
	/* distance cache */
	int n_slots, max_slots;
	int **dist;	     /* per slot: n entries */
	int *slot_dst;	     /* per slot */
	uint64_t *slot_used; /* per slot: LRU clock */
	int *slot_of;	     /* per node: slot holding its distances, or -1 */
	uint64_t clock;
	/* scratch */
	int *queue;	 /* n */
	int *prev;	 /* n: BFS predecessor */
	uint64_t *cnt;	 /* n: shortest path counts */
	unsigned *nmark; /* n: visited stamps */
	unsigned *bmark; /* n: blocked-node stamps */
	unsigned *amark; /* m: removed-arc stamps */
	unsigned ngen, bgen, agen;
	int *buf;		   /* n: path buffer */
	int *spur;		   /* n: spur path buffer */
	struct inart_pathset cand; /* Yen candidates */
	char *taken;
	int cap_taken;
	void *block; /* usable, slot_of and the scratch arrays (lay_out) */
};

void inart_pathset_init(struct inart_pathset *ps)
{
	memset(ps, 0, sizeof(*ps));
}

void inart_pathset_free(struct inart_pathset *ps)
{
	free(ps->off);
	free(ps->nodes);
	inart_pathset_init(ps);
}

void inart_pathset_clear(struct inart_pathset *ps)
{
	ps->n = 0;
	if (ps->off)
		ps->off[0] = 0;
}

int inart_pathset_add(struct inart_pathset *ps, const int *path, int len)
{
	int used = ps->off ? ps->off[ps->n] : 0;

	if (len < 0)
		return -EINVAL;
	if (ps->off == NULL || ps->n + 1 >= ps->cap_n) {
		int cap = ps->cap_n ? 2 * ps->cap_n : 16;
		int *no = realloc(ps->off, sizeof(*no) * (size_t)cap);

		if (no == NULL)
			return -ENOMEM;
		if (ps->off == NULL)
			no[0] = 0;
		ps->off = no;
		ps->cap_n = cap;
	}
	if (used + len > ps->cap_nodes) {
		int cap = ps->cap_nodes ? ps->cap_nodes : 64;
		int *nn;

		while (cap < used + len)
			cap *= 2;
		nn = realloc(ps->nodes, sizeof(*nn) * (size_t)cap);
		if (nn == NULL)
			return -ENOMEM;
		ps->nodes = nn;
		ps->cap_nodes = cap;
	}
	if (len > 0)
		memcpy(ps->nodes + used, path, sizeof(*path) * (size_t)len);
	ps->off[ps->n + 1] = used + len;
	return ps->n++;
}

static int arc_usable(const struct inart_topo *t, int e)
{
	return inart_arc_residual(&t->arcs[e]) > 0 && inart_arc_residual(&t->arcs[e ^ 1]) > 0;
}

/* The arrays of fixed size in one block (common/slab.h): per arc (m + 1
 * entries each) usable, amark; per node (n + 1 entries each) slot_of, queue,
 * prev, cnt, nmark, bmark, buf, spur.  (The cache's per-slot arrays grow.) */
static void lay_out(void *obj, struct inart_slab *s)
{
	struct inart_paths *p = obj;
	size_t n = (size_t)p->n + 1, m = (size_t)p->m + 1;
	p->usable = inart_slab_take(s, m, sizeof(*p->usable));
	p->amark = inart_slab_take(s, m, sizeof(*p->amark));
	int **node_ints[] = {&p->slot_of, &p->queue, &p->prev, &p->buf, &p->spur};

	for (size_t i = 0; i < sizeof(node_ints) / sizeof(node_ints[0]); i++)
		*node_ints[i] = inart_slab_take(s, n, sizeof(int));
	p->cnt = inart_slab_take(s, n, sizeof(*p->cnt));
	p->nmark = inart_slab_take(s, n, sizeof(*p->nmark));
	p->bmark = inart_slab_take(s, n, sizeof(*p->bmark));
}

struct inart_paths *inart_paths_create(const struct inart_topo *t)
{
	struct inart_paths *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->t = t;
	p->n = t->n_nodes;
	p->m = inart_topo_n_arcs(t);
	p->max_slots = (int)(CACHE_BYTES / (sizeof(int) * ((size_t)p->n + 1)));
	if (p->max_slots > p->n)
		p->max_slots = p->n;
	if (p->max_slots < INART_PATHS_MIN_CACHE)
		p->max_slots = INART_PATHS_MIN_CACHE;
	p->block = inart_slab_block(p, lay_out);
	p->dist = calloc((size_t)p->max_slots, sizeof(*p->dist));
	p->slot_dst = malloc(sizeof(int) * (size_t)p->max_slots);
	p->slot_used = malloc(sizeof(uint64_t) * (size_t)p->max_slots);
	inart_pathset_init(&p->cand);
	if (p->block == NULL || p->dist == NULL || p->slot_dst == NULL || p->slot_used == NULL) {
		inart_paths_destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	for (int e = 0; e < p->m; e++)
		p->usable[e] = (unsigned char)arc_usable(t, e);
	for (int v = 0; v < p->n; v++)
		p->slot_of[v] = -1;
	return p;
}

void inart_paths_destroy(struct inart_paths *p)
{
	if (p == NULL)
		return;
	if (p->dist)
		for (int s = 0; s < p->n_slots; s++)
			free(p->dist[s]);
	free(p->dist);
	free(p->slot_dst);
	free(p->slot_used);
	free(p->block);
	inart_pathset_free(&p->cand);
	free(p->taken);
	free(p);
}

int inart_paths_set_cache_limit(struct inart_paths *p, int slots)
{
	if (slots < INART_PATHS_MIN_CACHE)
		slots = INART_PATHS_MIN_CACHE;
	if (slots > p->max_slots) {
		int **nd = realloc(p->dist, sizeof(*nd) * (size_t)slots);
		int *ns;
		uint64_t *nu;

		if (nd == NULL)
			return -ENOMEM;
		p->dist = nd;
		ns = realloc(p->slot_dst, sizeof(*ns) * (size_t)slots);
		if (ns == NULL)
			return -ENOMEM;
		p->slot_dst = ns;
		nu = realloc(p->slot_used, sizeof(*nu) * (size_t)slots);
		if (nu == NULL)
			return -ENOMEM;
		p->slot_used = nu;
	}
	/* Shrinking: drop the slots past the new limit. */
	while (p->n_slots > slots) {
		p->n_slots--;
		p->slot_of[p->slot_dst[p->n_slots]] = -1;
		free(p->dist[p->n_slots]);
	}
	p->max_slots = slots;
	return 0;
}

/* Next stamp of a stamp family; clears the marks when the counter wraps. */
static unsigned next_gen(unsigned *gen, unsigned *marks, size_t count)
{
	if (*gen == UINT_MAX) {
		memset(marks, 0, sizeof(*marks) * count);
		*gen = 0;
	}
	return ++*gen;
}

static void bfs_dist(const struct inart_paths *p, int dst, int *d)
{
	const struct inart_topo *t = p->t;
	int head = 0, tail = 0;

	for (int v = 0; v < p->n; v++)
		d[v] = -1;
	d[dst] = 0;
	p->queue[tail++] = dst;
	while (head < tail) {
		int u = p->queue[head++];

		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (p->usable[e] && d[v] < 0) {
				d[v] = d[u] + 1;
				p->queue[tail++] = v;
			}
		}
	}
}

const int *inart_paths_dist_to(struct inart_paths *p, int dst)
{
	int s;

	if (dst < 0 || dst >= p->n) {
		errno = EINVAL;
		return NULL;
	}
	s = p->slot_of[dst];
	if (s >= 0) {
		p->slot_used[s] = ++p->clock;
		return p->dist[s];
	}
	if (p->n_slots < p->max_slots) {
		s = p->n_slots;
		p->dist[s] = malloc(sizeof(int) * ((size_t)p->n + 1));
		if (p->dist[s] == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		p->n_slots++;
	} else {
		s = 0;
		for (int i = 1; i < p->n_slots; i++)
			if (p->slot_used[i] < p->slot_used[s])
				s = i;
		p->slot_of[p->slot_dst[s]] = -1;
	}
	bfs_dist(p, dst, p->dist[s]);
	p->slot_dst[s] = dst;
	p->slot_of[dst] = s;
	p->slot_used[s] = ++p->clock;
	return p->dist[s];
}

/* The distances to dst when src can reach it; else NULL with *rc -EINVAL
 * (a node out of range), -errno (no memory) or -EHOSTUNREACH. */
static const int *reach(struct inart_paths *p, int src, int dst, int *rc)
{
	const int *d;

	*rc = -EINVAL;
	if (src < 0 || src >= p->n || dst < 0 || dst >= p->n)
		return NULL;
	d = inart_paths_dist_to(p, dst);
	*rc = d == NULL ? -errno : -EHOSTUNREACH;
	return d != NULL && d[src] >= 0 ? d : NULL;
}

int inart_paths_shortest(struct inart_paths *p, int src, int dst, uint64_t salt, int *path, int cap)
{
	const struct inart_topo *t = p->t;
	const int *d;
	int u, len, rc;

	if ((d = reach(p, src, dst, &rc)) == NULL)
		return rc;
	if (cap < d[src] + 1)
		return -ENOSPC;
	len = 0;
	u = src;
	path[len++] = u;
	while (u != dst) {
		int c = 0, pick;

		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i];

			c += p->usable[e] && d[t->arcs[e].to] == d[u] - 1;
		}
		pick = (int)(inart_hash2(salt, (uint64_t)u) % (uint64_t)c);
		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (p->usable[e] && d[v] == d[u] - 1 && pick-- == 0) {
				u = v;
				break;
			}
		}
		path[len++] = u;
	}
	return len;
}

/*
 * Count the shortest paths from every node of the shortest-path DAG of src to
 * dst (saturating at COUNT_SAT).  The DAG nodes are marked with the returned
 * stamp and counts are left in p->cnt.
 */
static unsigned count_dag(struct inart_paths *p, int src, int dst, const int *d)
{
	const struct inart_topo *t = p->t;
	unsigned g = next_gen(&p->ngen, p->nmark, (size_t)p->n);
	int tail = 0;

	p->nmark[src] = g;
	p->queue[tail++] = src;
	for (int h = 0; h < tail; h++) {
		int u = p->queue[h];

		if (u == dst)
			continue;
		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (p->usable[e] && d[v] == d[u] - 1 && p->nmark[v] != g) {
				p->nmark[v] = g;
				p->queue[tail++] = v;
			}
		}
	}
	/* BFS order is by decreasing distance: count backwards. */
	for (int h = tail - 1; h >= 0; h--) {
		int u = p->queue[h];
		uint64_t c = 0;

		if (u == dst) {
			p->cnt[u] = 1;
			continue;
		}
		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (p->usable[e] && d[v] == d[u] - 1) {
				c += p->cnt[v];
				if (c > COUNT_SAT)
					c = COUNT_SAT;
			}
		}
		p->cnt[u] = c;
	}
	return g;
}

/* Shortest path of rank r (r < cnt[src]) in arc order; writes p->buf. */
static int unrank(struct inart_paths *p, int src, int dst, const int *d, uint64_t r)
{
	const struct inart_topo *t = p->t;
	int u = src, len = 0;

	p->buf[len++] = u;
	while (u != dst) {
		int next = -1;

		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i], v = t->arcs[e].to;

			if (!p->usable[e] || d[v] != d[u] - 1)
				continue;
			if (r < p->cnt[v]) {
				next = v;
				break;
			}
			r -= p->cnt[v];
		}
		if (next < 0) /* cannot happen: counts cover every rank */
			return -EINVAL;
		u = next;
		p->buf[len++] = u;
	}
	return len;
}

uint64_t inart_paths_count_shortest(struct inart_paths *p, int src, int dst)
{
	const int *d;
	int rc;

	if ((d = reach(p, src, dst, &rc)) == NULL)
		return 0;
	count_dag(p, src, dst, d);
	return p->cnt[src];
}

static int same_path(const int *a, int la, const int *b, int lb)
{
	return la == lb && memcmp(a, b, sizeof(*a) * (size_t)la) == 0;
}

/*
 * BFS from s to dst avoiding blocked nodes and removed arcs; writes the path
 * (s .. dst) to p->spur and returns its length, or 0 if there is none.
 */
static int spur_bfs(struct inart_paths *p, int s, int dst)
{
	const struct inart_topo *t = p->t;
	unsigned g, bg = p->bgen, ag = p->agen;
	int tail = 0, ok = 0, len, v;

	/* Cheap test first: dst needs an entry arc that is still open. */
	for (int i = t->out_off[dst]; i < t->out_off[dst + 1]; i++) {
		int e = t->arc_out[i] ^ 1, w = t->arcs[e].from;

		if (p->usable[e] && p->amark[e] != ag && p->bmark[w] != bg) {
			ok = 1;
			break;
		}
	}
	if (!ok)
		return 0;
	g = next_gen(&p->ngen, p->nmark, (size_t)p->n);
	p->nmark[s] = g;
	p->prev[s] = -1;
	p->queue[tail++] = s;
	for (int h = 0; h < tail && p->nmark[dst] != g; h++) {
		int u = p->queue[h];

		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int e = t->arc_out[i];

			v = t->arcs[e].to;
			if (!p->usable[e] || p->amark[e] == ag || p->bmark[v] == bg ||
			    p->nmark[v] == g)
				continue;
			p->nmark[v] = g;
			p->prev[v] = u;
			p->queue[tail++] = v;
			if (v == dst)
				break;
		}
	}
	if (p->nmark[dst] != g)
		return 0;
	len = 0;
	for (v = dst; v >= 0; v = p->prev[v])
		len++;
	v = dst;
	for (int i = len - 1; i >= 0; i--, v = p->prev[v])
		p->spur[i] = v;
	return len;
}

/* Is path (a, la) one of out[base .. out->n) or an untaken candidate? */
static int known_path(const struct inart_paths *p, const struct inart_pathset *out, int base,
		      const int *a, int la)
{
	for (int i = base; i < out->n; i++)
		if (same_path(a, la, inart_pathset_path(out, i), inart_pathset_len(out, i)))
			return 1;
	for (int i = 0; i < p->cand.n; i++)
		if (same_path(a, la, inart_pathset_path(&p->cand, i),
			      inart_pathset_len(&p->cand, i)))
			return 1;
	return 0;
}

/* Yen: add the spur candidates of found path a (index into out) to p->cand. */
static int expand(struct inart_paths *p, struct inart_pathset *out, int base, int a, int dst)
{
	const struct inart_topo *t = p->t;
	int la = inart_pathset_len(out, a);

	for (int j = 0; j + 1 < la; j++) {
		const int *pa = inart_pathset_path(out, a); /* out may move: reload */
		int sl, rc;

		next_gen(&p->bgen, p->bmark, (size_t)p->n);
		next_gen(&p->agen, p->amark, (size_t)p->m);
		for (int i = 0; i < j; i++)
			p->bmark[pa[i]] = p->bgen;
		for (int q = base; q < out->n; q++) {
			const int *pq = inart_pathset_path(out, q);
			int lq = inart_pathset_len(out, q), e;

			if (lq <= j + 1 || memcmp(pq, pa, sizeof(int) * (size_t)(j + 1)) != 0)
				continue;
			e = inart_topo_arc_between(t, pq[j], pq[j + 1]);
			if (e >= 0)
				p->amark[e] = p->agen;
		}
		sl = spur_bfs(p, pa[j], dst);
		if (sl == 0)
			continue;
		memcpy(p->buf, pa, sizeof(int) * (size_t)j);
		memcpy(p->buf + j, p->spur, sizeof(int) * (size_t)sl);
		if (known_path(p, out, base, p->buf, j + sl))
			continue;
		if (p->cand.n + 1 > p->cap_taken) {
			int cap = p->cap_taken ? 2 * p->cap_taken : 32;
			char *nt = realloc(p->taken, (size_t)cap);

			if (nt == NULL)
				return -ENOMEM;
			p->taken = nt;
			p->cap_taken = cap;
		}
		rc = inart_pathset_add(&p->cand, p->buf, j + sl);
		if (rc < 0)
			return rc;
		p->taken[rc] = 0;
	}
	return 0;
}

int inart_paths_k_shortest(struct inart_paths *p, int src, int dst, int k,
			   struct inart_pathset *out)
{
	return inart_paths_k_shortest_salted(p, src, dst, k, 0, out);
}

/* Append the shortest src->dst path of the given rank to out (d: the
 * distances to dst, count_dag done).  >= 0, or -errno. */
static int add_ranked(struct inart_paths *p, int src, int dst, const int *d, uint64_t rank,
		      struct inart_pathset *out)
{
	int len = unrank(p, src, dst, d, rank);

	return len < 0 ? len : inart_pathset_add(out, p->buf, len);
}

int inart_paths_k_shortest_salted(struct inart_paths *p, int src, int dst, int k, uint64_t salt,
				  struct inart_pathset *out)
{
	const int *d;
	uint64_t total;
	int base = out->n, found = 0, expanded = 0, rc;

	if (k < 1)
		return -EINVAL;
	if ((d = reach(p, src, dst, &rc)) == NULL)
		return rc;
	if (src == dst) {
		rc = inart_pathset_add(out, &src, 1);
		return rc < 0 ? rc : 1;
	}
	count_dag(p, src, dst, d);
	total = p->cnt[src];
	if (total >= (uint64_t)k) {
		/* Ranks floor(i * total / k) rotated by the salt, without
		 * overflow (i < k). */
		uint64_t q = total / (uint64_t)k, r = total % (uint64_t)k;
		uint64_t shift = salt ? inart_hash2(salt, (uint64_t)dst) % total : 0;

		for (int i = 0; i < k; i++) {
			uint64_t rank = (uint64_t)i * q + ((uint64_t)i * r) / (uint64_t)k;

			rc = add_ranked(p, src, dst, d, (rank + shift) % total, out);
			if (rc < 0)
				goto fail;
		}
		return k;
	}
	for (uint64_t i = 0; i < total; i++, found++) {
		rc = add_ranked(p, src, dst, d, i, out);
		if (rc < 0)
			goto fail;
	}
	inart_pathset_clear(&p->cand);
	while (found < k) {
		int best = -1;

		while (expanded < found) {
			rc = expand(p, out, base, base + expanded, dst);
			if (rc < 0)
				goto fail;
			expanded++;
		}
		for (int i = 0; i < p->cand.n; i++) {
			if (p->taken[i])
				continue;
			if (best < 0 ||
			    inart_pathset_len(&p->cand, i) < inart_pathset_len(&p->cand, best))
				best = i;
		}
		if (best < 0)
			break;
		p->taken[best] = 1;
		/* Copy out first: p->cand is not modified by the add below. */
		rc = inart_pathset_add(out, inart_pathset_path(&p->cand, best),
				       inart_pathset_len(&p->cand, best));
		if (rc < 0)
			goto fail;
		found++;
	}
	return found;
fail:
	/* Leave out as it was. */
	out->n = base;
	return rc;
}

int inart_path_valid(const struct inart_topo *t, const int *path, int len)
{
	if (len < 1)
		return 0;
	for (int i = 0; i < len; i++)
		if (path[i] < 0 || path[i] >= t->n_nodes)
			return 0;
	for (int i = 0; i + 1 < len; i++) {
		int e = inart_topo_arc_between(t, path[i], path[i + 1]);

		if (e < 0 || !arc_usable(t, e))
			return 0;
	}
	if (len > t->n_nodes)
		return 0;
	if (len > 64) {
		char *seen = calloc((size_t)t->n_nodes, 1);
		int ok = 1;

		if (seen != NULL) {
			for (int i = 0; i < len && ok; i++) {
				ok = !seen[path[i]];
				seen[path[i]] = 1;
			}
			free(seen);
			return ok;
		}
	}
	for (int i = 0; i < len; i++) /* short path, or no memory */
		for (int j = i + 1; j < len; j++)
			if (path[i] == path[j])
				return 0;
	return 1;
}
