/*
 * shard: N switch cores and the steering between them (see shard.h).
 *
 * Invariants: every shard was created from the same configuration and has
 * received the same table updates in the same order (only through
 * inart_shards_tables_swap), so their table sets hold the same entries,
 * trees (sorted by (job, tree)) and routes; tree counters are summed index
 * by index.  A table container holds exactly n sets (one per shard, shard
 * order) or is being built.
 * Ownership: the set owns its cores; containers are the caller's.
 */
#include "dp/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dp/bytes.h"
#include "dp/switch_table.h"
#include "dp/wire.h"

struct inart_shards {
	int n, n_ports, pool_slots;
	int fail_k, fail_err; /* tests: inart_shards_fail_next_build */
	uint64_t epoch;
	uint64_t ep[INART_SHARD_MAX]; /* per shard: swaps of its tables */
	struct inart_switch *sw[INART_SHARD_MAX];
};

struct inart_shard_tables {
	int n;
	struct inart_sw_tables *t[INART_SHARD_MAX];
};

/* ---- steering ---- */

int inart_shard_steer(const uint8_t *f, size_t len, int n)
{
	size_t u;
	uint32_t flow;

	if (n <= 1 || f == NULL || len < INART_SHARD_OFF_IP + 20 ||
	    inart_get_be16(f + INART_SHARD_OFF_ETHERTYPE) != 0x0800 ||
	    (f[INART_SHARD_OFF_IP] & 0x0f) < 5)
		return 0;
	flow = inart_shard_mix(inart_get_be32(f + INART_SHARD_OFF_IP + 12),
			       inart_get_be32(f + INART_SHARD_OFF_IP + 16)) %
	       (uint32_t)n;
	if (f[INART_SHARD_OFF_IP + 9] != 17 ||
	    (inart_get_be16(f + INART_SHARD_OFF_IP + 6) & 0x3fff) != 0)
		return (int)flow;
	u = INART_SHARD_OFF_IP + (size_t)(f[INART_SHARD_OFF_IP] & 0x0f) * 4; /* UDP header */
	if (len < u + 4)
		return 0;
	if (inart_get_be16(f + u + 2) != INART_WIRE_UDP_PORT)
		return (int)flow;
	if (len < u + 8 + INART_SHARD_INA_NEED)
		return 0;
	u += 8; /* the INA header */
	return inart_shard_of_slot(inart_get_be32(f + u + INART_SHARD_INA_JOB),
				   inart_get_be16(f + u + INART_SHARD_INA_TREE),
				   inart_get_be16(f + u + INART_SHARD_INA_SLOT), n);
}

/* ---- the set ---- */

struct inart_shards *inart_shards_create(const struct inart_sw_cfg *cfg, int n)
{
	struct inart_shards *sh;

	if (n < 1 || n > INART_SHARD_MAX || inart_switch_cfg_check(cfg, NULL) < 0)
		return inart_null_errno(EINVAL);
	sh = calloc(1, sizeof(*sh));
	if (sh == NULL)
		return NULL;
	sh->n = n;
	sh->n_ports = cfg->n_ports;
	sh->pool_slots = cfg->pool_slots;
	sh->fail_k = -1;
	for (int k = 0; k < n; k++) {
		sh->sw[k] = inart_switch_create(cfg);
		if (sh->sw[k] == NULL) {
			int e = errno;

			inart_shards_destroy(sh);
			return inart_null_errno(e);
		}
	}
	return sh;
}

void inart_shards_destroy(struct inart_shards *sh)
{
	if (sh == NULL)
		return;
	for (int k = 0; k < sh->n; k++)
		inart_switch_destroy(sh->sw[k]);
	free(sh);
}

int inart_shards_n(const struct inart_shards *sh)
{
	return sh->n;
}

struct inart_switch *inart_shards_core(struct inart_shards *sh, int k)
{
	return k >= 0 && k < sh->n ? sh->sw[k] : NULL;
}

const struct inart_switch *inart_shards_core_c(const struct inart_shards *sh, int k)
{
	return k >= 0 && k < sh->n ? sh->sw[k] : NULL;
}

/* ---- tables: one transaction across the shards ---- */

void inart_shard_tables_destroy(struct inart_shard_tables *t)
{
	if (t == NULL)
		return;
	for (int k = 0; k < t->n; k++)
		inart_sw_tables_destroy(t->t[k]);
	free(t);
}

int inart_shards_tables_build(struct inart_shards *sh, const struct inart_sw_update *u,
			      struct inart_shard_tables **out, struct inart_err *err)
{
	struct inart_shard_tables *t;
	int rc = 0, k;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	/* prepare on every shard */
	for (k = 0; k < sh->n && rc == 0; k++) {
		if (k == sh->fail_k)
			rc = inart_err_set(err, sh->fail_err, "injected failure: %s",
					   strerror(-sh->fail_err));
		else
			rc = inart_switch_tables_build(sh->sw[k], u, &t->t[k], err);
		if (rc == 0)
			t->n = k + 1;
	}
	sh->fail_k = -1; /* one failure per injection */
	if (rc < 0) {
		/* roll back: what the shards before it prepared goes */
		if (k > 1 && err != NULL) {
			char r[INART_ERR_MAX];

			snprintf(r, sizeof(r), "shard %d", k - 1);
			inart_err_prefix(err, r);
		}
		inart_shard_tables_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}

struct inart_shard_tables *inart_shards_tables_swap(struct inart_shards *sh,
						    struct inart_shard_tables *t)
{
	/* commit on all: the container takes back what goes out */
	for (int k = 0; k < sh->n; k++) {
		t->t[k] = inart_switch_tables_swap(sh->sw[k], t->t[k]);
		sh->ep[k]++;
	}
	sh->epoch++;
	return t;
}

const struct inart_sw_tables *inart_shard_tables_first(const struct inart_shard_tables *t)
{
	return t != NULL && t->n > 0 ? t->t[0] : NULL;
}

int inart_shards_apply(struct inart_shards *sh, const struct inart_sw_update *u,
		       struct inart_err *err)
{
	struct inart_shard_tables *t;
	int rc = inart_shards_tables_build(sh, u, &t, err);

	if (rc < 0)
		return rc;
	inart_shard_tables_destroy(inart_shards_tables_swap(sh, t));
	return 0;
}

uint64_t inart_shards_epoch(const struct inart_shards *sh)
{
	return sh->epoch;
}

/* ---- what one shard holds ---- */

/* splitmix64's finaliser: entries' hashes are summed, so each is mixed
 * whole first (a sum of raw FNV values would let fields cancel out). */
static uint64_t fin(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

#define FNV0 0xcbf29ce484222325ull

static uint64_t label_hash(const struct inart_label_entry *e)
{
	uint64_t h = fnv(FNV0, 1);

	h = fnv(h, e->label);
	h = fnv(h, (uint64_t)e->kind << 48 | (uint64_t)e->tree << 32 | e->job);
	h = fnv(h, e->in_ports);
	h = fnv(h, (uint64_t)e->out_port << 32 | e->next_label);
	h = fnv(h, (uint64_t)e->aggregate << 48 | (uint64_t)e->slot_base << 32 |
		       (uint64_t)e->n_slots << 16 | e->bitmap_words);
	for (int i = 0; e->aggregate && e->expected != NULL && i < e->bitmap_words; i++)
		h = fnv(h, e->expected[i]);
	h = fnv(h, e->n_down);
	for (int i = 0; e->down != NULL && i < e->n_down; i++)
		h = fnv(h, (uint64_t)e->down[i].port << 48 ^ (uint64_t)e->down[i].label << 16 ^
			       (uint64_t)e->down[i].dst_ip << 32 ^ e->down[i].dst_ip);
	return fin(h);
}

/* The slots of the pool inside an aggregating entry's region (regions of
 * one tree may overlap: counted once). */
static int slots_assigned(const struct inart_label_entry *l, int n, int pool)
{
	uint8_t *m = calloc((size_t)pool / 8 + 1, 1);
	int c = 0;

	if (m == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		for (int s = l[i].slot_base; l[i].kind == INART_LABEL_UP && l[i].aggregate &&
					     s < l[i].slot_base + l[i].n_slots && s < pool;
		     s++)
			if (!(m[s / 8] & (1u << (s % 8)))) {
				m[s / 8] |= (uint8_t)(1u << (s % 8));
				c++;
			}
	free(m);
	return c;
}

int inart_shards_info(const struct inart_shards *sh, int k, struct inart_shard_info *out)
{
	const struct inart_sw_tables *t;
	struct inart_label_entry *l = NULL;
	struct inart_route *r = NULL;
	struct inart_sw_ingress *g = NULL;
	int rc = -ENOMEM;

	if (sh == NULL || k < 0 || k >= sh->n)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	t = inart_switch_tables(sh->sw[k]);
	out->epoch = sh->ep[k];
	out->labels = inart_sw_tables_labels(t, NULL, 0);
	out->routes = inart_sw_tables_routes(t, NULL, 0);
	out->ingress = inart_sw_tables_ingress(t, NULL, 0);
	out->trees = t->n_trees;
	out->table_bytes = inart_sw_tables_bytes(t);
	out->pool_slots = sh->pool_slots;
	l = calloc((size_t)out->labels + 1, sizeof(*l));
	r = calloc((size_t)out->routes + 1, sizeof(*r));
	g = calloc((size_t)out->ingress + 1, sizeof(*g));
	if (l == NULL || r == NULL || g == NULL)
		goto out;
	inart_sw_tables_labels(t, l, out->labels);
	inart_sw_tables_routes(t, r, out->routes);
	inart_sw_tables_ingress(t, g, out->ingress);
	for (int i = 0; i < out->labels; i++)
		out->digest += label_hash(&l[i]);
	for (int i = 0; i < out->routes; i++)
		out->digest += fin(fnv(fnv(FNV0, 2), (uint64_t)r[i].prefix << 24 |
							 (uint64_t)r[i].len << 16 | r[i].port));
	for (int i = 0; i < out->ingress; i++)
		out->digest += fin(fnv(fnv(FNV0, 3), (uint64_t)g[i].job << 32 |
							 (uint64_t)g[i].port << 16 | g[i].rank));
	out->slots_assigned = slots_assigned(l, out->labels, sh->pool_slots);
	rc = out->slots_assigned < 0 ? out->slots_assigned : 0;
out:
	free(l);
	free(r);
	free(g);
	return rc;
}

void inart_shards_fail_next_build(struct inart_shards *sh, int k, int err)
{
	sh->fail_k = k;
	sh->fail_err = err > 0 ? -err : err;
}

/* ---- one thread for all ---- */

int inart_shards_rx(struct inart_shards *sh, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out)
{
	int k;

	if (sh == NULL || in == NULL || in->data == NULL)
		return 0;
	k = inart_shard_steer(in->data, in->len, sh->n);
	return inart_switch_rx(sh->sw[k], in, now_ns, out, max_out);
}

uint64_t inart_shards_next_deadline(const struct inart_shards *sh)
{
	uint64_t d = UINT64_MAX;

	for (int k = 0; k < sh->n; k++) {
		uint64_t x = inart_switch_next_deadline(sh->sw[k]);

		d = x < d ? x : d;
	}
	return d;
}

int inart_shards_tick(struct inart_shards *sh, uint64_t now_ns, struct inart_frame *out,
		      int max_out)
{
	int n = 0;

	for (int k = 0; k < sh->n && n < max_out; k++)
		n += inart_switch_tick(sh->sw[k], now_ns, out + n, max_out - n);
	return n;
}

int inart_shards_lose_state(struct inart_shards *sh)
{
	int busy = 0;

	for (int k = 0; k < sh->n; k++)
		busy += inart_switch_lose_state(sh->sw[k]);
	return busy;
}

/* ---- counters, summed ---- */

static void port_add(struct inart_sw_port_stats *a, const struct inart_sw_port_stats *b)
{
	a->rx_pkts += b->rx_pkts;
	a->rx_bytes += b->rx_bytes;
	a->tx_pkts += b->tx_pkts;
	a->tx_bytes += b->tx_bytes;
	a->rx_ina_bytes += b->rx_ina_bytes;
	a->tx_ina_bytes += b->tx_ina_bytes;
}

static void tree_add(struct inart_sw_tree_stats *a, const struct inart_sw_tree_stats *b)
{
	a->aggregated += b->aggregated;
	a->emitted += b->emitted;
	a->partial += b->partial;
	a->early += b->early;
	a->fallback += b->fallback;
	a->duplicates += b->duplicates;
	a->results += b->results;
	a->repaired += b->repaired;
	a->answered += b->answered;
	a->overflows += b->overflows;
}

int inart_shards_stats(const struct inart_shards *sh, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees)
{
	int nt = inart_switch_stats(sh->sw[0], drops, ports, trees, max_trees);

	for (int k = 1; k < sh->n; k++) {
		const struct inart_sw_tables *t = inart_switch_tables(sh->sw[k]);
		uint64_t d[INART_DROP_N];
		struct inart_sw_port_stats p[INART_SW_MAX_PORTS];

		inart_switch_stats(sh->sw[k], d, p, NULL, 0);
		for (int i = 0; drops != NULL && i < INART_DROP_N; i++)
			drops[i] += d[i];
		for (int i = 0; ports != NULL && i < sh->n_ports; i++)
			port_add(&ports[i], &p[i]);
		for (int i = 0; trees != NULL && i < nt && i < max_trees && i < t->n_trees; i++)
			tree_add(&trees[i], &t->trees[i]);
	}
	return nt;
}
