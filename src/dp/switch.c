/*
 * switch: the software programmable switch, sans I/O (see switch.h).
 *
 * State: the configuration and per-port peer MACs; the current table set
 * (struct inart_sw_tables: compact label entries with an open-addressing
 * index label -> entry, their variable parts in two shared arrays -- the
 * expected bitmaps of aggregating entries, the copies of DOWN entries --,
 * per aggregating entry the newest chunk of each expected rank, per DOWN
 * entry an aggregating UP entry of its (job, tree), the per-(job, tree)
 * counters, the IPv4 LPM table and the ingress table (port, job) -> rank);
 * the aggregator pool with per-slot metadata (addresses, flags and the
 * smallest TTL of the contributions, the NACK round last repaired); drop and
 * port counters.  Everything is allocated by create and by table builds;
 * rx/tick/lose_state/swap never allocate.
 *
 * A label entry takes what its kind uses: LENT_BYTES for the entry, plus
 * 8 * bitmap_words (expected) + 8 per expected rank (progress) if it
 * aggregates, plus 12 per copy if DOWN; the index adds 4 bytes per cell
 * (cells: the power of two >= 2 * entries).  docs/dataplane.md states the
 * memory of a switch with N labels; tests/test_switch.c checks it.
 *
 * Invariants:
 *   - every UP aggregate entry's slot region [slot_base, slot_base+n_slots)
 *     lies inside the pool, and regions of entries of different (job, tree)
 *     are disjoint, so a packet can only touch its own tree's slots;
 *   - a busy pool slot's key.label names an UP aggregate entry of the same
 *     (job, tree) and bitmap width whose region holds the slot (a swap frees
 *     slots that lose their entry);
 *   - a table set is immutable once built except for its rank progress and
 *     tree counters, which only the packet path writes (builds of the next
 *     set never read them);
 *   - a slot's kept contents (not busy) are the aggregate it last emitted or
 *     a clean result of the PS that passed down, keyed like a busy slot;
 *     repairs resend exactly the kept aggregate, answers the kept result;
 *   - every INA packet with a label needs TTL > 1 to be handled; what a
 *     switch sends on (forwarded, replicated, an aggregate) carries a TTL
 *     lower than every packet it came from, so a loop in the tables ends.
 * Ownership: the switch owns its current table set, pool and counters;
 * table sets returned by swap are the caller's; frames are the caller's.
 */
#include "switch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_pool.h"
#include "bytes.h"
#include "lpm.h"
#include "pkt.h"
#include "progress.h"

/* A compiled label entry. */
struct lent {
	uint32_t label, job, next_label;
	uint16_t tree, out_port, slot_base, n_slots;
	uint8_t kind, aggregate, bitmap_words;
	uint16_t n_down;
	int32_t tree_idx; /* into the tree counters */
	int32_t rk_off;	  /* aggregating: first progress record (one per expected rank) */
	int32_t up_of;	  /* DOWN: an aggregating UP entry of its (job, tree), -1 */
	uint32_t var;	  /* aggregating: first word in exp[]; DOWN: first copy in dn[] */
	uint64_t in_ports;
};

#define LENT_BYTES sizeof(struct lent)

struct inart_sw_tables {
	struct lent *ent;
	int n;
	int32_t *index; /* hcap cells: entry index or -1 */
	uint32_t hcap;	/* power of two, >= 2 * n */
	uint64_t *exp;
	size_t n_exp;
	struct inart_label_down *dn;
	size_t n_dn;
	struct inart_rank_pos *rk; /* written by the packet path */
	size_t n_rk;
	struct inart_sw_tree_stats *trees; /* sorted by (job, tree); written by the packet path */
	int n_trees;
	struct inart_lpm *lpm;
	struct inart_sw_ingress *ing; /* sorted by (port, job) */
	int n_ing;
	int32_t ing_off[INART_SW_MAX_PORTS + 1];
};

struct slot_meta {
	uint32_t src_ip, dst_ip;
	uint16_t sport;
	uint8_t flags;	  /* INART_F_OVERFLOW carried by contributions */
	uint8_t repaired; /* NACK round the kept aggregate was last sent again for */
	uint8_t ttl;	  /* smallest TTL of the contributions */
};

struct inart_switch {
	struct inart_sw_cfg cfg;
	uint8_t peer[INART_SW_MAX_PORTS][6];
	uint8_t peer_known[INART_SW_MAX_PORTS];
	uint8_t peer_fixed[INART_SW_MAX_PORTS];
	struct inart_sw_tables *tab;
	struct inart_agg_pool *pool;
	struct slot_meta *meta;
	int max_values;
	uint64_t drops[INART_DROP_N];
	struct inart_sw_port_stats port_stats[INART_SW_MAX_PORTS];
};

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static int mac_zero(const uint8_t m[6])
{
	return (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0;
}

static void why_set(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why_set(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* ---- table sets ---- */

static uint32_t label_hash(uint32_t label)
{
	return (uint32_t)(((uint64_t)label * 0x9E3779B97F4A7C15ull) >> 32);
}

static int lt_find(const struct inart_sw_tables *t, uint32_t label)
{
	uint32_t m, i;

	if (t->hcap == 0)
		return -1;
	m = t->hcap - 1;
	for (i = label_hash(label) & m; t->index[i] >= 0; i = (i + 1) & m)
		if (t->ent[t->index[i]].label == label)
			return t->index[i];
	return -1;
}

/* Build the index of t->ent[0..n) (labels unique). 0 or -ENOMEM. */
static int lt_index(struct inart_sw_tables *t)
{
	uint32_t cap = 16, m, i;

	while (cap < 2 * (uint32_t)t->n)
		cap *= 2;
	t->index = malloc(cap * sizeof(*t->index));
	if (t->index == NULL)
		return -ENOMEM;
	t->hcap = cap;
	m = cap - 1;
	memset(t->index, 0xff, cap * sizeof(*t->index));
	for (int k = 0; k < t->n; k++) {
		for (i = label_hash(t->ent[k].label) & m; t->index[i] >= 0; i = (i + 1) & m)
			;
		t->index[i] = k;
	}
	return 0;
}

void inart_sw_tables_destroy(struct inart_sw_tables *t)
{
	if (t == NULL)
		return;
	free(t->ent);
	free(t->index);
	free(t->exp);
	free(t->dn);
	free(t->rk);
	free(t->trees);
	inart_lpm_destroy(t->lpm);
	free(t->ing);
	free(t);
}

size_t inart_sw_tables_bytes(const struct inart_sw_tables *t)
{
	if (t == NULL)
		return 0;
	/* the LPM table: a hash of 16-byte cells, at most half full */
	return sizeof(*t) + (size_t)t->n * sizeof(*t->ent) + (size_t)t->hcap * sizeof(*t->index) +
	       t->n_exp * sizeof(*t->exp) + t->n_dn * sizeof(*t->dn) + t->n_rk * sizeof(*t->rk) +
	       (size_t)t->n_trees * sizeof(*t->trees) + (size_t)t->n_ing * sizeof(*t->ing) +
	       32 * inart_lpm_count(t->lpm);
}

/* An empty table set. NULL on ENOMEM. */
static struct inart_sw_tables *tables_empty(void)
{
	struct inart_sw_tables *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->lpm = inart_lpm_create();
	if (t->lpm == NULL || lt_index(t) < 0) {
		inart_sw_tables_destroy(t);
		return NULL;
	}
	return t;
}

/* Entry k of t in the public form (pointing into t). */
static void entry_view(const struct inart_sw_tables *t, int k, struct inart_label_entry *v)
{
	const struct lent *e = &t->ent[k];

	memset(v, 0, sizeof(*v));
	v->label = e->label;
	v->kind = e->kind;
	v->job = e->job;
	v->tree = e->tree;
	v->in_ports = e->in_ports;
	if (e->kind == INART_LABEL_UP) {
		v->out_port = e->out_port;
		v->next_label = e->next_label;
		v->aggregate = e->aggregate;
		if (e->aggregate) {
			v->slot_base = e->slot_base;
			v->n_slots = e->n_slots;
			v->bitmap_words = e->bitmap_words;
			v->expected = t->exp + e->var;
		}
	} else {
		v->n_down = e->n_down;
		v->down = t->dn + e->var;
	}
}

static int bits_count(const uint64_t *a, int words)
{
	int n = 0;

	for (int i = 0; i < words; i++)
		n += __builtin_popcountll(a[i]);
	return n;
}

static int check_entry(const struct inart_sw_cfg *cfg, const struct inart_label_entry *e, char *why,
		       size_t why_len)
{
	int i, w;

	if (e->label == 0) {
		why_set(why, why_len, "label 0: labels must be non-zero");
		return -EINVAL;
	}
	if (cfg->n_ports < 64 && (e->in_ports >> cfg->n_ports) != 0) {
		why_set(why, why_len, "label %u: in_ports names a port >= %d ports", e->label,
			cfg->n_ports);
		return -EINVAL;
	}
	if (e->kind == INART_LABEL_UP) {
		if (e->out_port >= cfg->n_ports) {
			why_set(why, why_len, "label %u: out_port %u >= %d ports", e->label,
				e->out_port, cfg->n_ports);
			return -EINVAL;
		}
		if (e->aggregate > 1) {
			why_set(why, why_len, "label %u: aggregate must be 0 or 1", e->label);
			return -EINVAL;
		}
		if (!e->aggregate)
			return 0;
		if (e->bitmap_words < 1 || e->bitmap_words > INART_WIRE_MAX_BITMAP_WORDS) {
			why_set(why, why_len, "label %u: bitmap_words %u not in 1..%d", e->label,
				e->bitmap_words, INART_WIRE_MAX_BITMAP_WORDS);
			return -EINVAL;
		}
		if (e->n_slots < 1 || (int)e->slot_base + (int)e->n_slots > cfg->pool_slots) {
			why_set(why, why_len,
				"label %u: slot region %u+%u outside the pool of %d slots",
				e->label, e->slot_base, e->n_slots, cfg->pool_slots);
			return -EINVAL;
		}
		for (w = 0; e->expected != NULL && w < e->bitmap_words; w++)
			if (e->expected[w])
				break;
		if (e->expected == NULL || w == e->bitmap_words) {
			why_set(why, why_len, "label %u: expected bitmap is empty", e->label);
			return -EINVAL;
		}
		return 0;
	}
	if (e->kind == INART_LABEL_DOWN) {
		if (e->n_down < 1 || e->n_down > INART_SW_MAX_FANOUT || e->down == NULL) {
			why_set(why, why_len, "label %u: n_down %u not in 1..%d", e->label,
				e->n_down, INART_SW_MAX_FANOUT);
			return -EINVAL;
		}
		for (i = 0; i < e->n_down; i++) {
			if (e->down[i].port >= cfg->n_ports) {
				why_set(why, why_len, "label %u: down[%d] port %u >= %d ports",
					e->label, i, e->down[i].port, cfg->n_ports);
				return -EINVAL;
			}
		}
		return 0;
	}
	why_set(why, why_len, "label %u: unknown kind %u", e->label, e->kind);
	return -EINVAL;
}

struct region {
	uint32_t job, label;
	uint16_t tree;
	int lo, hi; /* [lo, hi) */
};

static int region_cmp(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

/* Slot regions of different (job, tree) must be disjoint.  Sweep by start,
 * keeping the interval reaching farthest and the farthest one of a
 * different owner than it. */
static int check_regions(const struct inart_sw_tables *t, char *why, size_t why_len)
{
	struct region *r;
	int n = 0, i, rc = 0;
	int b1 = -1, b2 = -1; /* indices of the two farthest-reaching, different owners */

	r = malloc(((size_t)t->n + 1) * sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct lent *e = &t->ent[i];

		if (e->kind != INART_LABEL_UP || !e->aggregate)
			continue;
		r[n].job = e->job;
		r[n].tree = e->tree;
		r[n].label = e->label;
		r[n].lo = e->slot_base;
		r[n].hi = e->slot_base + e->n_slots;
		n++;
	}
	qsort(r, (size_t)n, sizeof(*r), region_cmp);
	for (i = 0; i < n; i++) {
		int other = -1;

		if (b1 >= 0 && (r[b1].job != r[i].job || r[b1].tree != r[i].tree)) {
			if (r[b1].hi > r[i].lo)
				other = b1;
		} else if (b2 >= 0 && r[b2].hi > r[i].lo) {
			other = b2;
		}
		if (other >= 0) {
			why_set(why, why_len,
				"label %u: slot region %d..%d of job %u tree %u overlaps label %u "
				"(job %u tree %u)",
				r[i].label, r[i].lo, r[i].hi - 1, r[i].job, r[i].tree,
				r[other].label, r[other].job, r[other].tree);
			rc = -EINVAL;
			break;
		}
		/* update the two farthest-reaching of distinct owners */
		if (b1 < 0 || r[i].hi > r[b1].hi) {
			if (b1 >= 0 && (r[b1].job != r[i].job || r[b1].tree != r[i].tree))
				b2 = b1;
			b1 = i;
		} else if (r[b1].job != r[i].job || r[b1].tree != r[i].tree) {
			if (b2 < 0 || r[i].hi > r[b2].hi)
				b2 = i;
		}
	}
	free(r);
	return rc;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Labels of the batch unique (sorted copy).  0, -EINVAL or -ENOMEM. */
static int check_unique(const struct inart_sw_update *u, char *why, size_t why_len)
{
	uint32_t *l;
	int i, rc = 0;

	if (u->n_labels < 2)
		return 0;
	l = malloc((size_t)u->n_labels * sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	for (i = 0; i < u->n_labels; i++)
		l[i] = u->labels[i].label;
	qsort(l, (size_t)u->n_labels, sizeof(*l), u32_cmp);
	for (i = 1; i < u->n_labels; i++) {
		if (l[i] == l[i - 1]) {
			why_set(why, why_len, "label %u: appears twice in the update", l[i]);
			rc = -EINVAL;
			break;
		}
	}
	free(l);
	return rc;
}

static int tree_cmp(const void *a, const void *b)
{
	const struct inart_sw_tree_stats *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->tree < y->tree ? -1 : x->tree > y->tree;
}

/* Index of (job, tree) in the sorted tree list, -1. */
static int tree_find(const struct inart_sw_tables *t, uint32_t job, uint16_t tree)
{
	int lo = 0, hi = t->n_trees - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct inart_sw_tree_stats *x = &t->trees[mid];

		if (x->job == job && x->tree == tree)
			return mid;
		if (x->job < job || (x->job == job && x->tree < tree))
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The tree list of t (one zeroed counter set per distinct (job, tree),
 * sorted), every entry's tree_idx, and the DOWN -> aggregating UP map.
 * 0 or -ENOMEM. */
static int build_trees(struct inart_sw_tables *t)
{
	uint64_t *keys = malloc(((size_t)t->n + 1) * sizeof(*keys));
	int32_t *agg = NULL;
	int n = 0, rc = -ENOMEM;

	if (keys == NULL)
		return -ENOMEM;
	for (int k = 0; k < t->n; k++)
		keys[k] = (uint64_t)t->ent[k].job << 16 | t->ent[k].tree;
	qsort(keys, (size_t)t->n, sizeof(*keys), u64_cmp);
	for (int k = 0; k < t->n; k++)
		if (n == 0 || keys[n - 1] != keys[k])
			keys[n++] = keys[k];
	t->trees = calloc((size_t)n + 1, sizeof(*t->trees));
	agg = malloc(((size_t)n + 1) * sizeof(*agg));
	if (t->trees == NULL || agg == NULL)
		goto out;
	t->n_trees = n;
	for (int i = 0; i < n; i++) {
		t->trees[i].job = (uint32_t)(keys[i] >> 16);
		t->trees[i].tree = (uint16_t)keys[i];
	}
	memset(agg, 0xff, ((size_t)n + 1) * sizeof(*agg));
	for (int k = 0; k < t->n; k++) {
		struct lent *e = &t->ent[k];

		e->tree_idx = tree_find(t, e->job, e->tree);
		if (e->kind == INART_LABEL_UP && e->aggregate && agg[e->tree_idx] < 0)
			agg[e->tree_idx] = k;
	}
	for (int k = 0; k < t->n; k++) {
		struct lent *e = &t->ent[k];

		e->up_of = e->kind == INART_LABEL_DOWN ? agg[e->tree_idx] : -1;
	}
	rc = 0;
out:
	free(keys);
	free(agg);
	return rc;
}

static int ing_cmp(const void *a, const void *b)
{
	const struct inart_sw_ingress *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/* The ingress table: old (unless replace) then the update's; an entry
 * replaces an earlier one of the same (port, job).  0 or -ENOMEM. */
static int build_ingress(struct inart_sw_tables *t, const struct inart_sw_tables *old,
			 const struct inart_sw_update *u)
{
	int n0 = u->replace ? 0 : old->n_ing, n = 0;
	struct {
		struct inart_sw_ingress e;
		int order;
	} *tmp = malloc(((size_t)n0 + (size_t)u->n_ingress + 1) * sizeof(*tmp));

	t->ing = malloc(((size_t)n0 + (size_t)u->n_ingress + 1) * sizeof(*t->ing));
	if (tmp == NULL || t->ing == NULL) {
		free(tmp);
		return -ENOMEM;
	}
	for (int i = 0; i < n0; i++)
		tmp[i].e = old->ing[i], tmp[i].order = i;
	for (int i = 0; i < u->n_ingress; i++)
		tmp[n0 + i].e = u->ingress[i], tmp[n0 + i].order = n0 + i;
	/* by (port, job), later entries last: a stable order without a stable sort */
	for (int i = 0; i < n0 + u->n_ingress; i++)
		t->ing[i] = tmp[i].e;
	free(tmp);
	for (int i = 1; i < n0 + u->n_ingress; i++) { /* insertion sort: small tables */
		struct inart_sw_ingress x = t->ing[i];
		int j = i - 1;

		while (j >= 0 && ing_cmp(&t->ing[j], &x) > 0) {
			t->ing[j + 1] = t->ing[j];
			j--;
		}
		t->ing[j + 1] = x;
	}
	for (int i = 0; i < n0 + u->n_ingress; i++) {
		if (n > 0 && ing_cmp(&t->ing[n - 1], &t->ing[i]) == 0)
			t->ing[n - 1] = t->ing[i]; /* the later one wins */
		else
			t->ing[n++] = t->ing[i];
	}
	t->n_ing = n;
	for (int p = 0, i = 0; p <= INART_SW_MAX_PORTS; p++) {
		while (i < n && t->ing[i].port < p)
			i++;
		t->ing_off[p] = i;
	}
	return 0;
}

/* Append entry v (checked) to t at index k, its variable parts at *n_exp /
 * *n_dn; its progress records at *n_rk. */
static void put_entry(struct inart_sw_tables *t, int k, const struct inart_label_entry *v,
		      size_t *n_exp, size_t *n_dn, size_t *n_rk)
{
	struct lent *e = &t->ent[k];

	memset(e, 0, sizeof(*e));
	e->label = v->label;
	e->kind = v->kind;
	e->job = v->job;
	e->tree = v->tree;
	e->in_ports = v->in_ports;
	e->rk_off = -1;
	if (v->kind == INART_LABEL_UP) {
		e->out_port = v->out_port;
		e->next_label = v->next_label;
		e->aggregate = v->aggregate;
		if (v->aggregate) {
			e->slot_base = v->slot_base;
			e->n_slots = v->n_slots;
			e->bitmap_words = v->bitmap_words;
			e->var = (uint32_t)*n_exp;
			memcpy(t->exp + *n_exp, v->expected, 8 * (size_t)v->bitmap_words);
			*n_exp += v->bitmap_words;
			e->rk_off = (int32_t)*n_rk;
			*n_rk += (size_t)bits_count(v->expected, v->bitmap_words);
		}
	} else {
		e->n_down = v->n_down;
		e->var = (uint32_t)*n_dn;
		memcpy(t->dn + *n_dn, v->down, (size_t)v->n_down * sizeof(*v->down));
		*n_dn += v->n_down;
	}
}

static int check_update(const struct inart_sw_cfg *cfg, const struct inart_sw_update *u, char *why,
			size_t why_len)
{
	int i, rc;

	for (i = 0; i < u->n_labels; i++) {
		rc = check_entry(cfg, &u->labels[i], why, why_len);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < u->n_routes; i++) {
		const struct inart_route *r = &u->routes[i];

		if (r->len > 32) {
			why_set(why, why_len, "route %u.%u.%u.%u/%u: length > 32", r->prefix >> 24,
				(r->prefix >> 16) & 255, (r->prefix >> 8) & 255, r->prefix & 255,
				r->len);
			return -EINVAL;
		}
		if (r->port >= cfg->n_ports) {
			why_set(why, why_len, "route %u.%u.%u.%u/%u: port %u >= %d ports",
				r->prefix >> 24, (r->prefix >> 16) & 255, (r->prefix >> 8) & 255,
				r->prefix & 255, r->len, r->port, cfg->n_ports);
			return -EINVAL;
		}
	}
	for (i = 0; i < u->n_ingress; i++) {
		const struct inart_sw_ingress *g = &u->ingress[i];

		if (g->port >= cfg->n_ports || g->rank >= INART_WIRE_MAX_CONTRIB) {
			why_set(why, why_len,
				"ingress[%d]: port %u (of %d) or rank %u (< %d) out of range", i,
				g->port, cfg->n_ports, g->rank, INART_WIRE_MAX_CONTRIB);
			return -EINVAL;
		}
	}
	return 0;
}

int inart_switch_tables_build(const struct inart_switch *sw, const struct inart_sw_update *u,
			      struct inart_sw_tables **out, char *why, size_t why_len)
{
	const struct inart_sw_tables *old;
	struct inart_sw_tables *t = NULL;
	uint8_t *gone = NULL;
	size_t n_exp = 0, n_dn = 0, n_rk = 0;
	int n_keep = 0, k, rc = 0;

	why_set(why, why_len, "%s", "");
	if (out != NULL)
		*out = NULL;
	if (sw == NULL || u == NULL || out == NULL || u->n_labels < 0 || u->n_del_labels < 0 ||
	    u->n_routes < 0 || u->n_ingress < 0 || (u->n_labels > 0 && u->labels == NULL) ||
	    (u->n_del_labels > 0 && u->del_labels == NULL) ||
	    (u->n_routes > 0 && u->routes == NULL) || (u->n_ingress > 0 && u->ingress == NULL)) {
		why_set(why, why_len, "malformed update");
		return -EINVAL;
	}
	old = sw->tab;
	/* 1. every new entry on its own, and unique labels within the batch */
	rc = check_update(&sw->cfg, u, why, why_len);
	if (rc == 0)
		rc = check_unique(u, why, why_len);
	if (rc < 0)
		return rc;
	/* 2. which old entries stay: not replaced, not deleted, not updated */
	gone = calloc((size_t)old->n + 1, 1);
	if (gone == NULL)
		return -ENOMEM;
	if (u->replace)
		memset(gone, 1, (size_t)old->n);
	for (int i = 0; i < u->n_del_labels; i++) {
		k = lt_find(old, u->del_labels[i]);
		if (u->replace || k < 0 || gone[k]) {
			why_set(why, why_len, "delete label %u: not in the table",
				u->del_labels[i]);
			rc = -EINVAL;
			goto out;
		}
		gone[k] = 1;
	}
	for (int i = 0; i < u->n_labels; i++)
		if ((k = lt_find(old, u->labels[i].label)) >= 0)
			gone[k] = 1;
	for (k = 0; k < old->n; k++) {
		const struct lent *e = &old->ent[k];

		if (gone[k])
			continue;
		n_keep++;
		n_exp += e->kind == INART_LABEL_UP && e->aggregate ? e->bitmap_words : 0;
		n_dn += e->kind == INART_LABEL_DOWN ? e->n_down : 0;
	}
	if (n_keep + u->n_labels > INART_SW_MAX_LABELS) {
		why_set(why, why_len, "table full: %d labels (at most %d)", n_keep + u->n_labels,
			INART_SW_MAX_LABELS);
		rc = -ENOSPC;
		goto out;
	}
	for (int i = 0; i < u->n_labels; i++) {
		const struct inart_label_entry *v = &u->labels[i];

		n_exp += v->kind == INART_LABEL_UP && v->aggregate ? v->bitmap_words : 0;
		n_dn += v->kind == INART_LABEL_DOWN ? v->n_down : 0;
	}
	/* 3. the new table set */
	rc = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto out;
	t->n = n_keep + u->n_labels;
	t->ent = malloc(((size_t)t->n + 1) * sizeof(*t->ent));
	t->exp = malloc((n_exp + 1) * sizeof(*t->exp));
	t->dn = malloc((n_dn + 1) * sizeof(*t->dn));
	if (t->ent == NULL || t->exp == NULL || t->dn == NULL)
		goto out;
	t->n_exp = n_exp;
	t->n_dn = n_dn;
	n_exp = n_dn = 0;
	k = 0;
	for (int i = 0; i < old->n; i++) {
		struct inart_label_entry v;

		if (gone[i])
			continue;
		entry_view(old, i, &v);
		put_entry(t, k++, &v, &n_exp, &n_dn, &n_rk);
	}
	for (int i = 0; i < u->n_labels; i++)
		put_entry(t, k++, &u->labels[i], &n_exp, &n_dn, &n_rk);
	t->n_rk = n_rk;
	t->rk = calloc(n_rk + 1, sizeof(*t->rk));
	if (t->rk == NULL || lt_index(t) < 0 || build_trees(t) < 0)
		goto out;
	/* 4. whole-table checks */
	rc = check_regions(t, why, why_len);
	if (rc < 0)
		goto out;
	/* 5. routes and ingress */
	rc = -ENOMEM;
	t->lpm = u->replace ? inart_lpm_create() : inart_lpm_clone(old->lpm);
	if (t->lpm == NULL)
		goto out;
	for (int i = 0; i < u->n_routes; i++) {
		rc =
		    inart_lpm_add(t->lpm, u->routes[i].prefix, u->routes[i].len, u->routes[i].port);
		if (rc < 0)
			goto out;
	}
	rc = build_ingress(t, old, u);
	if (rc < 0)
		goto out;
	*out = t;
	t = NULL;
	rc = 0;
out:
	if (rc == -ENOMEM)
		why_set(why, why_len, "out of memory");
	inart_sw_tables_destroy(t);
	free(gone);
	return rc;
}

/* Free busy slots whose owning entry is gone or changed (O(busy slots)). */
static void drop_orphan_slots(struct inart_switch *sw)
{
	int i = inart_agg_pool_busy_next(sw->pool, -1);

	while (i >= 0) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, i);
		int k = lt_find(sw->tab, s->key.label),
		    next = inart_agg_pool_busy_next(sw->pool, i);
		const struct lent *e = k >= 0 ? &sw->tab->ent[k] : NULL;

		if (e == NULL || e->kind != INART_LABEL_UP || !e->aggregate ||
		    e->job != s->key.job || e->tree != s->key.tree ||
		    e->bitmap_words != s->key.bitmap_words || i < e->slot_base ||
		    i >= e->slot_base + e->n_slots)
			inart_agg_pool_release(sw->pool, i);
		i = next;
	}
}

struct inart_sw_tables *inart_switch_tables_swap(struct inart_switch *sw, struct inart_sw_tables *t)
{
	struct inart_sw_tables *old = sw->tab;
	int i = 0, j = 0;

	/* counters of the trees that stay (both lists sorted by (job, tree)) */
	while (i < old->n_trees && j < t->n_trees) {
		int c = tree_cmp(&old->trees[i], &t->trees[j]);

		if (c == 0)
			t->trees[j++] = old->trees[i++];
		else if (c < 0)
			i++;
		else
			j++;
	}
	sw->tab = t;
	drop_orphan_slots(sw);
	return old;
}

const struct inart_sw_tables *inart_switch_tables(const struct inart_switch *sw)
{
	return sw->tab;
}

int inart_switch_apply(struct inart_switch *sw, const struct inart_sw_update *u, char *why,
		       size_t why_len)
{
	struct inart_sw_tables *t;
	int rc = inart_switch_tables_build(sw, u, &t, why, why_len);

	if (rc < 0)
		return rc;
	inart_sw_tables_destroy(inart_switch_tables_swap(sw, t));
	return 0;
}

/* ---- creation ---- */

struct inart_switch *inart_switch_create(const struct inart_sw_cfg *cfg)
{
	struct inart_switch *sw;
	int i, slots, mv;

	if (cfg == NULL || cfg->n_ports < 1 || cfg->n_ports > INART_SW_MAX_PORTS ||
	    cfg->pool_slots < 0 || cfg->pool_slots > INART_SW_MAX_POOL_SLOTS ||
	    cfg->max_values < 0 || cfg->max_values > INART_SW_MAX_SLOT_VALUES) {
		errno = EINVAL;
		return NULL;
	}
	mv = cfg->max_values > 0 ? cfg->max_values : inart_wire_max_values(1);
	slots = cfg->pool_slots > 0 ? cfg->pool_slots : 1;
	if ((uint64_t)slots * (uint64_t)mv > INART_SW_MAX_POOL_VALUES) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return NULL;
	sw->cfg = *cfg;
	sw->max_values = mv;
	for (i = 0; i < cfg->n_ports; i++) {
		if (!mac_zero(cfg->ports[i].peer_mac)) {
			memcpy(sw->peer[i], cfg->ports[i].peer_mac, 6);
			sw->peer_known[i] = sw->peer_fixed[i] = 1;
		}
	}
	sw->pool = inart_agg_pool_create(slots, sw->max_values, cfg->flush_timeout_ns);
	sw->meta = calloc((size_t)slots, sizeof(*sw->meta));
	sw->tab = tables_empty();
	if (sw->pool == NULL || sw->meta == NULL || sw->tab == NULL) {
		inart_switch_destroy(sw);
		errno = ENOMEM;
		return NULL;
	}
	return sw;
}

void inart_switch_destroy(struct inart_switch *sw)
{
	if (sw == NULL)
		return;
	inart_sw_tables_destroy(sw->tab);
	inart_agg_pool_destroy(sw->pool);
	free(sw->meta);
	free(sw);
}

/* ---- data path ---- */

struct rxctx {
	struct inart_switch *sw;
	struct inart_frame *out;
	int n, max;
	uint64_t now;
};

/* Next output frame, or NULL (counted as OUT_FULL). */
static struct inart_frame *out_next(struct rxctx *c)
{
	if (c->n >= c->max) {
		c->sw->drops[INART_DROP_OUT_FULL]++;
		return NULL;
	}
	return &c->out[c->n];
}

static void out_commit(struct rxctx *c, struct inart_frame *o, uint16_t port, size_t len)
{
	o->port = port;
	o->len = (uint16_t)len;
	c->sw->port_stats[port].tx_pkts++;
	c->sw->port_stats[port].tx_bytes += len;
	c->n++;
}

static const uint8_t *peer_of(const struct inart_switch *sw, int port)
{
	return sw->peer_known[port] ? sw->peer[port] : bcast;
}

/* Copy an IPv4 frame to o for transmission on port: MACs rewritten, TTL
 * decremented (the caller checked ttl > 1), padding trimmed.  The caller
 * fixes the IPv4 checksum after any further rewrite.  Returns the length. */
static size_t fwd_copy(const struct inart_switch *sw, const uint8_t *frame,
		       const struct inart_pkt_info *pi, uint16_t port, uint8_t *o)
{
	size_t len = pi->l3_off + pi->ip_len;

	memcpy(o, frame, len);
	memcpy(o, peer_of(sw, port), 6);
	memcpy(o + 6, sw->cfg.ports[port].mac, 6);
	o[pi->l3_off + 8] = (uint8_t)(pi->ttl - 1);
	return len;
}

static void fix_ip_csum(uint8_t *o, const struct inart_pkt_info *pi)
{
	uint8_t *ip = o + pi->l3_off;

	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, pi->ip_hlen));
}

static int is_own_ip(const struct inart_switch *sw, uint32_t ip)
{
	int i;

	for (i = 0; i < sw->cfg.n_ports; i++)
		if (sw->cfg.ports[i].ip != 0 && sw->cfg.ports[i].ip == ip)
			return 1;
	return 0;
}

static void rx_ipv4_plain(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	uint32_t port;
	size_t len;

	if (is_own_ip(sw, pi->dst_ip)) {
		sw->drops[INART_DROP_OTHER]++;
		return;
	}
	if (!inart_lpm_lookup(sw->tab->lpm, pi->dst_ip, &port) ||
	    port >= (uint32_t)sw->cfg.n_ports) {
		sw->drops[INART_DROP_NO_ROUTE]++;
		return;
	}
	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
		return;
	}
	o = out_next(c);
	if (o == NULL)
		return;
	len = fwd_copy(sw, frame, pi, (uint16_t)port, o->data);
	fix_ip_csum(o->data, pi);
	out_commit(c, o, (uint16_t)port, len);
}

static void rx_arp(struct rxctx *c, const struct inart_frame *in, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	size_t len;

	if (pi->arp_op != 1 || pi->arp_tpa == pi->arp_spa || mac_zero(pi->arp_sha) ||
	    (pi->arp_sha[0] & 1)) {
		sw->drops[INART_DROP_OTHER]++;
		return;
	}
	o = out_next(c);
	if (o == NULL)
		return;
	len = inart_pkt_build_arp_reply(o->data, INART_FRAME_MAX, sw->cfg.ports[in->port].mac,
					pi->arp_tpa, pi->arp_sha, pi->arp_spa);
	out_commit(c, o, in->port, len);
}

/* Forward an INA packet along an UP entry (label rewrite, optional flag). */
static void ina_forward_up(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
			   const struct lent *e, uint8_t add_flags)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	uint8_t *ina;
	size_t len;

	o = out_next(c);
	if (o == NULL)
		return;
	len = fwd_copy(sw, frame, pi, e->out_port, o->data);
	ina = o->data + pi->l4_payload_off;
	ina[1] |= add_flags;
	inart_put_be32(ina + 12, e->next_label);
	inart_put_be16(o->data + pi->l4_payload_off - 2, 0); /* UDP checksum */
	fix_ip_csum(o->data, pi);
	out_commit(c, o, e->out_port, len);
}

static const uint64_t *expected_of(const struct inart_sw_tables *t, const struct lent *e)
{
	return t->exp + e->var;
}

/* Emit the aggregate in pool slot `slot` upward along entry e and stop
 * aggregating in it (the slot keeps the aggregate: INART_AGG_KEPT_SENT).
 * extra: INART_F_PARTIAL for a flush; INART_F_RETX to send a kept aggregate
 * again (the slot is not changed).  The aggregate's TTL is one less than its
 * contributions' smallest.  Returns 1 if emitted, 0 if no room (the slot
 * stays as it was). */
static int emit_slot(struct rxctx *c, int slot, const struct lent *e, uint8_t extra)
{
	struct inart_switch *sw = c->sw;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	const struct slot_meta *m = &sw->meta[slot];
	struct inart_wire_hdr h;
	struct inart_frame *o;
	uint8_t *ina, *ip;
	size_t hl, len;
	uint32_t src;

	o = out_next(c);
	if (o == NULL)
		return 0;
	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = (uint8_t)(INART_F_DATA | extra | (m->flags & INART_F_OVERFLOW) |
			    (s->overflow ? INART_F_OVERFLOW : 0));
	h.bitmap_words = s->key.bitmap_words;
	h.scale_exp = s->key.scale_exp;
	h.job = s->key.job;
	h.tree = s->key.tree;
	h.fan_in = s->key.fan_in;
	h.label = e->next_label;
	h.iter = s->key.iter;
	h.seq = s->key.seq;
	h.slot = s->key.slot;
	h.count = s->key.count;
	memcpy(h.bitmap, s->bitmap, sizeof(h.bitmap));
	ina = o->data + INART_PKT_UDP_HLEN;
	hl = inart_wire_encode_hdr(&h, ina, INART_FRAME_MAX - INART_PKT_UDP_HLEN);
	if (hl == 0 || hl + 4 * (size_t)h.count > INART_FRAME_MAX - INART_PKT_UDP_HLEN) {
		/* cannot happen for a slot filled from valid packets */
		inart_agg_pool_release(sw->pool, slot);
		sw->drops[INART_DROP_WIRE]++;
		return 1;
	}
	if (extra & INART_F_RETX)
		inart_agg_pool_read(sw->pool, slot, ina + hl);
	else
		inart_agg_pool_take_keep(sw->pool, slot, ina + hl);
	src = sw->cfg.ports[e->out_port].ip ? sw->cfg.ports[e->out_port].ip : m->src_ip;
	len = inart_pkt_build_udp(o->data, INART_FRAME_MAX, sw->cfg.ports[e->out_port].mac,
				  peer_of(sw, e->out_port), src, m->dst_ip, m->sport,
				  INART_WIRE_UDP_PORT, ina, hl + 4 * (size_t)h.count);
	ip = o->data + INART_ETH_HLEN;
	ip[8] = (uint8_t)(m->ttl > 1 ? m->ttl - 1 : 1);
	inart_put_be16(ip + 10, 0);
	inart_put_be16(ip + 10, inart_pkt_ip_csum(ip, 20));
	out_commit(c, o, e->out_port, len);
	return 1;
}

static int key_eq(const struct inart_agg_key *a, const struct inart_agg_key *b)
{
	return a->job == b->job && a->label == b->label && a->iter == b->iter && a->seq == b->seq &&
	       a->tree == b->tree && a->fan_in == b->fan_in && a->slot == b->slot &&
	       a->count == b->count && a->bitmap_words == b->bitmap_words &&
	       a->scale_exp == b->scale_exp;
}

/* The progress record of rank r (bit b of word w) at aggregating entry e:
 * records exist for the expected ranks only, in rank order. */
static struct inart_rank_pos *rank_rec(const struct inart_sw_tables *t, const struct lent *e, int w,
				       int b)
{
	const uint64_t *x = expected_of(t, e);
	int k = 0;

	for (int i = 0; i < w; i++)
		k += __builtin_popcountll(x[i]);
	k += __builtin_popcountll(x[w] & (((uint64_t)1 << b) - 1));
	return &t->rk[e->rk_off + k];
}

/* The ranks of bits (all expected) sent chunk (iter, seq) along entry e. */
static void ranks_note(const struct inart_sw_tables *t, const struct lent *e, const uint64_t *bits,
		       uint32_t iter, uint32_t seq)
{
	for (int w = 0; w < e->bitmap_words; w++)
		for (uint64_t b = bits[w]; b; b &= b - 1)
			inart_progress_note(rank_rec(t, e, w, __builtin_ctzll(b)), iter, seq);
}

/* Every expected rank missing from busy slot `slot` of entry e is gone
 * (progress.h): waiting longer cannot complete it. */
static int slot_settled(const struct inart_switch *sw, int slot, const struct lent *e)
{
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	const uint64_t *x = expected_of(sw->tab, e);

	if (!s->busy || s->key.label != e->label)
		return 0;
	for (int w = 0; w < e->bitmap_words; w++)
		for (uint64_t m = x[w] & ~s->bitmap[w]; m; m &= m - 1)
			if (!inart_progress_gone(rank_rec(sw->tab, e, w, __builtin_ctzll(m)),
						 s->key.iter, s->key.seq, INART_SW_LOST_AFTER))
				return 0;
	return 1;
}

/* Flush slot (busy, entry e) as a partial aggregate now. */
static void flush_slot(struct rxctx *c, int slot, const struct lent *e,
		       struct inart_sw_tree_stats *ts)
{
	const struct inart_agg_slot *s = inart_agg_pool_slot(c->sw->pool, slot);
	int ovf = s->overflow || (c->sw->meta[slot].flags & INART_F_OVERFLOW);

	if (emit_slot(c, slot, e, INART_F_PARTIAL)) {
		ts->partial++;
		ts->early++;
		ts->overflows += ovf ? 1 : 0;
	}
}

/* The chunk INART_SW_LOST_AFTER before (iter, seq) in e's region, if its slot
 * still holds it and every rank it misses is gone: flush it. The slot of
 * seq - d is slot - d modulo the region (workers use slot = seq % slots with
 * slots = the region size; if not, the key check below fails and nothing
 * happens). */
static void flush_behind(struct rxctx *c, const struct inart_wire_hdr *h, const struct lent *e,
			 struct inart_sw_tree_stats *ts)
{
	const int d = INART_SW_LOST_AFTER;
	const struct inart_agg_slot *s;
	int slot;

	if (h->seq < (uint32_t)d)
		return;
	slot =
	    e->slot_base + (int)(((uint32_t)h->slot + (uint32_t)e->n_slots * d - d) % e->n_slots);
	s = inart_agg_pool_slot(c->sw->pool, slot);
	if (s->busy && s->key.label == e->label && s->key.iter == h->iter &&
	    s->key.seq == h->seq - d && slot_settled(c->sw, slot, e))
		flush_slot(c, slot, e, ts);
}

/* The slot of up entry u for chunk h (DOWN packets carry the chunk's slot
 * field), and whether it holds (kept or busy) that chunk of u's tree. */
static int chunk_slot(const struct inart_switch *sw, const struct lent *u,
		      const struct inart_wire_hdr *h, const struct inart_agg_slot **sp)
{
	int slot = u->slot_base + h->slot % u->n_slots;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);

	*sp = s;
	if ((!s->busy && s->kept == INART_AGG_KEPT_NONE) || s->key.label != u->label ||
	    s->key.job != h->job || s->key.tree != h->tree || s->key.iter != h->iter ||
	    s->key.seq != h->seq)
		return -1;
	return slot;
}

/* A probe travelling up: if the chunk's slot keeps its result, answer the
 * prober with it (RESULT|RETX, label 0, routed by IPv4 as if from the PS).
 * Returns 1 if answered. */
static int probe_answer(struct rxctx *c, const struct inart_pkt_info *pi,
			const struct inart_wire_hdr *h, const struct lent *e,
			struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const struct inart_agg_slot *s;
	int slot = chunk_slot(sw, e, h, &s);
	struct inart_wire_hdr r;
	struct inart_frame *o;
	uint32_t port;
	uint8_t *ina;
	size_t hl, len;

	if (slot < 0 || s->kept != INART_AGG_KEPT_RESULT || s->key.fan_in != h->fan_in ||
	    s->key.bitmap_words != h->bitmap_words)
		return 0;
	if (!inart_lpm_lookup(sw->tab->lpm, pi->src_ip, &port) || port >= (uint32_t)sw->cfg.n_ports)
		return 0;
	o = out_next(c);
	if (o == NULL)
		return 0;
	memset(&r, 0, sizeof(r));
	r.version = INART_WIRE_VERSION;
	r.flags = INART_F_RESULT | INART_F_RETX;
	r.bitmap_words = s->key.bitmap_words;
	r.scale_exp = s->key.scale_exp;
	r.job = s->key.job;
	r.tree = s->key.tree;
	r.fan_in = s->key.fan_in;
	r.iter = s->key.iter;
	r.seq = s->key.seq;
	r.slot = s->key.slot;
	r.count = s->key.count;
	r.prev = s->aux;
	memcpy(r.bitmap, s->bitmap, sizeof(r.bitmap));
	ina = o->data + INART_PKT_UDP_HLEN;
	hl = inart_wire_encode_hdr(&r, ina, INART_FRAME_MAX - INART_PKT_UDP_HLEN);
	if (hl == 0 || hl + 4 * (size_t)r.count > INART_FRAME_MAX - INART_PKT_UDP_HLEN)
		return 0;
	inart_agg_pool_read(sw->pool, slot, ina + hl);
	len = inart_pkt_build_udp(o->data, INART_FRAME_MAX, sw->cfg.ports[port].mac,
				  peer_of(sw, (int)port), pi->dst_ip, pi->src_ip, pi->dport,
				  pi->sport, ina, hl + 4 * (size_t)r.count);
	if (len == 0)
		return 0;
	out_commit(c, o, (uint16_t)port, len);
	ts->answered++;
	return 1;
}

/* The identity of the chunk h is about, at the UP entry `label` (a slot
 * holds one chunk: docs/wire.md). */
static void chunk_key(struct inart_agg_key *key, const struct inart_wire_hdr *h, uint32_t label)
{
	key->job = h->job;
	key->label = label;
	key->iter = h->iter;
	key->seq = h->seq;
	key->tree = h->tree;
	key->fan_in = h->fan_in;
	key->slot = h->slot;
	key->count = h->count;
	key->bitmap_words = h->bitmap_words;
	key->scale_exp = h->scale_exp;
}

static void rx_ina_up(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
		      const struct inart_wire_hdr *h, const uint8_t *payload, const struct lent *e,
		      struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const uint64_t *x;
	struct inart_agg_key key;
	struct slot_meta *m;
	int w, slot, rc, fresh;

	if (!(h->flags & INART_F_DATA)) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (e->aggregate && (h->flags & INART_F_NACK) && probe_answer(c, pi, h, e, ts))
		return;
	if (!e->aggregate || (h->flags & (INART_F_RETX | INART_F_NACK))) {
		ina_forward_up(c, frame, pi, e, 0);
		return;
	}
	if (h->bitmap_words != e->bitmap_words) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	x = expected_of(sw->tab, e);
	for (w = 0; w < h->bitmap_words; w++) {
		if (h->bitmap[w] & ~x[w]) {
			sw->drops[INART_DROP_BITS]++;
			return;
		}
	}
	if (h->count > sw->max_values) {
		ts->fallback++;
		ina_forward_up(c, frame, pi, e, INART_F_FALLBACK);
		return;
	}
	chunk_key(&key, h, e->label);
	slot = e->slot_base + h->slot % e->n_slots;
	/* a fallback may overtake contributions of its ranks still held in a
	 * slot below: it says nothing about their progress */
	if (!(h->flags & INART_F_FALLBACK))
		ranks_note(sw->tab, e, h->bitmap, h->iter, h->seq);
	/* an older chunk this packet shows incomplete for good leaves first,
	 * so that it reaches the PS before the evidence does */
	flush_behind(c, h, e, ts);
	if (h->flags & INART_F_PARTIAL) {
		/* its sender stopped waiting: it joins the chunk's aggregate if
		 * one is open here, else goes on at once (never waits here) */
		const struct inart_agg_slot *v = inart_agg_pool_slot(sw->pool, slot);

		if (!v->busy || !key_eq(&v->key, &key)) {
			ina_forward_up(c, frame, pi, e, 0);
			return;
		}
	}
	rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload, x, c->now, &fresh);
	if (rc == INART_AGG_BUSY && slot_settled(sw, slot, e)) {
		/* the slot's chunk cannot complete any more: make room */
		flush_slot(c, slot, e, ts);
		if (!inart_agg_pool_slot(sw->pool, slot)->busy)
			rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload, x,
						   c->now, &fresh);
	}
	switch (rc) {
	case INART_AGG_ABSORBED:
	case INART_AGG_COMPLETE:
		ts->aggregated++;
		m = &sw->meta[slot];
		if (fresh) {
			m->src_ip = pi->src_ip;
			m->dst_ip = pi->dst_ip;
			m->sport = pi->sport;
			m->flags = 0;
			m->repaired = 0;
			m->ttl = pi->ttl;
		}
		m->flags |= h->flags & INART_F_OVERFLOW;
		if (pi->ttl < m->ttl)
			m->ttl = pi->ttl;
		if (rc == INART_AGG_COMPLETE) {
			int ovf = inart_agg_pool_slot(sw->pool, slot)->overflow ||
				  (m->flags & INART_F_OVERFLOW);

			if (emit_slot(c, slot, e, 0)) {
				ts->emitted++;
				ts->overflows += ovf ? 1 : 0;
			}
			/* no room: the slot stays busy and is flushed by tick */
		} else if (slot_settled(sw, slot, e)) {
			/* the missing ranks are gone: do not wait for the timeout */
			flush_slot(c, slot, e, ts);
		}
		return;
	case INART_AGG_BUSY:
		ts->fallback++;
		ina_forward_up(c, frame, pi, e, INART_F_FALLBACK);
		return;
	case INART_AGG_DUPLICATE:
		ts->duplicates++;
		sw->drops[INART_DROP_DUPLICATE]++;
		return;
	default:
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
}

/* A NACK passing down: if the aggregate this switch last sent for the chunk
 * (kept in its slot) holds only ranks the PS misses, send it again upward
 * (RETX) and take its ranks out of the NACK (*bits), so that its workers
 * need not retransmit; if the slot still aggregates the chunk and holds a
 * rank the PS asks for, flush it now (partial) and take its ranks out.
 * Returns 1 if something was sent. */
static int nack_repair(struct rxctx *c, const struct inart_wire_hdr *h, const struct lent *u,
		       struct inart_sw_tree_stats *ts, uint64_t *bits)
{
	const struct inart_agg_slot *s;
	int slot = chunk_slot(c->sw, u, h, &s), w, any = 0;

	if (slot < 0 || s->key.scale_exp != h->scale_exp || s->key.bitmap_words != h->bitmap_words)
		return 0;
	if (s->busy) {
		/* still waiting for others, holding ranks the PS asks for (none of
		 * the slot's ranks went up yet): send what is here now */
		uint64_t held[INART_WIRE_MAX_BITMAP_WORDS];

		for (w = 0; w < h->bitmap_words; w++)
			any |= (s->bitmap[w] & bits[w]) != 0;
		if (!any)
			return 0;
		memcpy(held, s->bitmap, sizeof(held));
		flush_slot(c, slot, u, ts);
		if (inart_agg_pool_slot(c->sw->pool, slot)->busy)
			return 0;
		for (w = 0; w < h->bitmap_words; w++)
			bits[w] &= ~held[w];
		c->sw->meta[slot].repaired = (uint8_t)(h->prev < 255 ? h->prev : 255);
		return 1;
	}
	for (w = 0; w < h->bitmap_words; w++) {
		if (s->bitmap[w] & ~bits[w])
			return 0; /* the PS has some of them: it would not take it */
		any |= s->bitmap[w] != 0;
	}
	if (s->kept != INART_AGG_KEPT_SENT)
		return 0;
	/* once per NACK round (copies of one NACK may pass several entries);
	 * every copy of the round leaves those ranks out */
	if (!any || (h->prev > c->sw->meta[slot].repaired && !emit_slot(c, slot, u, INART_F_RETX)))
		return 0;
	for (w = 0; w < h->bitmap_words; w++)
		bits[w] &= ~s->bitmap[w];
	if (h->prev <= c->sw->meta[slot].repaired)
		return 0;
	c->sw->meta[slot].repaired = (uint8_t)(h->prev < 255 ? h->prev : 255);
	ts->repaired++;
	return 1;
}

/* A clean result passing down: keep it in the chunk's slot (unless another
 * chunk aggregates there) to answer probes of workers that miss it. */
static void result_keep(struct inart_switch *sw, const struct inart_wire_hdr *h,
			const uint8_t *payload, const struct lent *u)
{
	int slot = u->slot_base + h->slot % u->n_slots;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	struct inart_agg_key key;

	if (s->busy) {
		if (s->key.label != u->label || s->key.iter != h->iter || s->key.seq != h->seq)
			return;
		/* late contributions of a chunk that is complete: useless */
		inart_agg_pool_release(sw->pool, slot);
	}
	chunk_key(&key, h, u->label);
	inart_agg_pool_keep_result(sw->pool, slot, &key, h->bitmap, payload, h->prev);
}

static void rx_ina_down(struct rxctx *c, const uint8_t *frame, const struct inart_pkt_info *pi,
			const struct inart_wire_hdr *h, const uint8_t *payload,
			const struct lent *e, const struct lent *u, struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	const struct inart_label_down *dn = sw->tab->dn + e->var;
	uint64_t bits[INART_WIRE_MAX_BITMAP_WORDS];
	int i, w, nack = (h->flags & (INART_F_NACK | INART_F_RETX)) == INART_F_NACK;

	if (!(h->flags & INART_F_RESULT)) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	memcpy(bits, h->bitmap, sizeof(bits));
	if (u != NULL && u->bitmap_words == h->bitmap_words) {
		if (nack) {
			uint64_t any = 0;

			nack_repair(c, h, u, ts, bits);
			for (w = 0; w < h->bitmap_words; w++)
				any |= bits[w];
			if (!any)
				return; /* every rank named is repaired here */
		} else if (!(h->flags &
			     (INART_F_NACK | INART_F_RETX | INART_F_OVERFLOW | INART_F_STALE)) &&
			   h->count > 0 && h->count <= sw->max_values) {
			result_keep(sw, h, payload, u);
		}
	}
	for (i = 0; i < e->n_down; i++) {
		const struct inart_label_down *d = &dn[i];
		struct inart_frame *o = out_next(c);
		size_t len;

		if (o == NULL)
			continue; /* each missing copy counted as OUT_FULL */
		len = fwd_copy(sw, frame, pi, d->port, o->data);
		inart_put_be32(o->data + pi->l4_payload_off + 12, d->label);
		if (nack)
			for (w = 0; w < h->bitmap_words; w++)
				inart_put_be64(o->data + pi->l4_payload_off + INART_WIRE_FIXED_LEN +
						   8 * w,
					       bits[w]);
		if (d->dst_ip != 0)
			inart_put_be32(o->data + pi->l3_off + 16, d->dst_ip);
		inart_put_be16(o->data + pi->l4_payload_off - 2, 0);
		fix_ip_csum(o->data, pi);
		out_commit(c, o, d->port, len);
		ts->results++;
	}
}

/* Ingress filtering of an INA packet from a host port (the first hop): DATA
 * must carry exactly the rank the installation gives the port's host in the
 * packet's job.  1 if it may go on. */
static int ingress_ok(struct inart_switch *sw, int port, const struct inart_wire_hdr *h)
{
	const struct inart_sw_tables *t = sw->tab;

	if (!(h->flags & INART_F_DATA))
		return 1; /* results are checked by the DOWN entry's in_ports, or by
			     their receiver (label 0) */
	for (int i = t->ing_off[port]; i < t->ing_off[port + 1]; i++) {
		if (t->ing[i].job != h->job)
			continue;
		for (int w = 0; w < h->bitmap_words; w++) {
			int r = t->ing[i].rank;
			uint64_t want = r / 64 == w ? (uint64_t)1 << (r % 64) : 0;

			if (h->bitmap[w] != want)
				return 0;
		}
		return t->ing[i].rank < 64 * h->bitmap_words;
	}
	return 0;
}

static void rx_ina(struct rxctx *c, const struct inart_frame *in, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	const struct inart_sw_tables *t = sw->tab;
	struct inart_wire_hdr h;
	const uint8_t *payload;
	const struct lent *e;
	int k;

	if (inart_wire_decode(in->data + pi->l4_payload_off, pi->l4_payload_len, &h, &payload) !=
	    INART_WIRE_OK) {
		sw->drops[INART_DROP_WIRE]++;
		return;
	}
	if (sw->cfg.ports[in->port].peer_ip != 0 && !ingress_ok(sw, in->port, &h)) {
		sw->drops[INART_DROP_RANK]++;
		return;
	}
	if (h.label == 0) {
		rx_ipv4_plain(c, in->data, pi);
		return;
	}
	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
		return;
	}
	k = lt_find(t, h.label);
	if (k < 0) {
		sw->drops[INART_DROP_NO_LABEL]++;
		return;
	}
	e = &t->ent[k];
	if (e->in_ports != 0 && !(e->in_ports >> in->port & 1)) {
		sw->drops[INART_DROP_INGRESS]++;
		return;
	}
	if (e->job != h.job || e->tree != h.tree) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (e->kind == INART_LABEL_UP)
		rx_ina_up(c, in->data, pi, &h, payload, e, &t->trees[e->tree_idx]);
	else
		rx_ina_down(c, in->data, pi, &h, payload, e,
			    e->up_of >= 0 ? &t->ent[e->up_of] : NULL, &t->trees[e->tree_idx]);
}

int inart_switch_rx(struct inart_switch *sw, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out)
{
	struct rxctx c = {sw, out, 0, max_out < 0 ? 0 : max_out, now_ns};
	struct inart_pkt_info pi;
	uint32_t host;

	if (sw == NULL || in == NULL || in->data == NULL)
		return 0;
	if (in->port >= sw->cfg.n_ports) {
		sw->drops[INART_DROP_MALFORMED]++;
		return 0;
	}
	sw->port_stats[in->port].rx_pkts++;
	sw->port_stats[in->port].rx_bytes += in->len;
	if (in->len > INART_FRAME_MAX || inart_pkt_parse(in->data, in->len, &pi) < 0) {
		sw->drops[INART_DROP_MALFORMED]++;
		return 0;
	}
	/* the first hop: a host sends from its own address (0 only in ARP
	 * probes) */
	host = sw->cfg.ports[in->port].peer_ip;
	if (host != 0 &&
	    ((pi.ethertype == INART_ETHERTYPE_IPV4 && pi.src_ip != host) ||
	     (pi.ethertype == INART_ETHERTYPE_ARP && pi.arp_spa != host && pi.arp_spa != 0))) {
		sw->drops[INART_DROP_SPOOFED]++;
		return 0;
	}
	if (!sw->peer_fixed[in->port] && !mac_zero(pi.src_mac) && !(pi.src_mac[0] & 1)) {
		memcpy(sw->peer[in->port], pi.src_mac, 6);
		sw->peer_known[in->port] = 1;
	}
	if (pi.ethertype == INART_ETHERTYPE_ARP) {
		rx_arp(&c, in, &pi);
	} else if (pi.ethertype == INART_ETHERTYPE_IPV4) {
		if (pi.is_udp && pi.dport == INART_WIRE_UDP_PORT)
			rx_ina(&c, in, &pi);
		else
			rx_ipv4_plain(&c, in->data, &pi);
	} else {
		sw->drops[INART_DROP_OTHER]++;
	}
	return c.n;
}

uint64_t inart_switch_next_deadline(const struct inart_switch *sw)
{
	return inart_agg_pool_next_deadline(sw->pool);
}

int inart_switch_tick(struct inart_switch *sw, uint64_t now_ns, struct inart_frame *out,
		      int max_out)
{
	struct rxctx c = {sw, out, 0, max_out < 0 ? 0 : max_out, now_ns};
	const struct inart_sw_tables *t = sw->tab;
	int slot;

	while ((slot = inart_agg_pool_expired(sw->pool, now_ns)) >= 0) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
		const struct lent *e;
		struct inart_sw_tree_stats *ts;
		int k = lt_find(t, s->key.label), ovf, complete;

		if (k < 0) { /* cannot happen: a swap frees orphaned slots */
			inart_agg_pool_release(sw->pool, slot);
			continue;
		}
		if (c.n >= c.max)
			break; /* not counted: the flush waits for the next tick */
		e = &t->ent[k];
		ts = &t->trees[e->tree_idx];
		ovf = s->overflow || (sw->meta[slot].flags & INART_F_OVERFLOW);
		/* complete but not emitted by rx for lack of room: not partial */
		complete = memcmp(s->bitmap, expected_of(t, e), 8 * (size_t)e->bitmap_words) == 0;
		if (emit_slot(&c, slot, e, complete ? 0 : INART_F_PARTIAL)) {
			if (complete)
				ts->emitted++;
			else
				ts->partial++;
			ts->overflows += ovf ? 1 : 0;
		}
	}
	return c.n;
}

int inart_switch_lose_state(struct inart_switch *sw)
{
	int busy = inart_agg_pool_busy(sw->pool);

	inart_agg_pool_clear(sw->pool);
	return busy;
}

int inart_switch_stats(const struct inart_switch *sw, uint64_t *drops,
		       struct inart_sw_port_stats *ports, struct inart_sw_tree_stats *trees,
		       int max_trees)
{
	int i;

	if (drops != NULL)
		memcpy(drops, sw->drops, sizeof(sw->drops));
	if (ports != NULL)
		memcpy(ports, sw->port_stats, (size_t)sw->cfg.n_ports * sizeof(*ports));
	if (trees != NULL)
		for (i = 0; i < sw->tab->n_trees && i < max_trees; i++)
			trees[i] = sw->tab->trees[i];
	return sw->tab->n_trees;
}

const char *inart_switch_drop_name(int reason)
{
	static const char *const names[INART_DROP_N] = {
	    [INART_DROP_MALFORMED] = "malformed", [INART_DROP_WIRE] = "wire",
	    [INART_DROP_NO_LABEL] = "no_label",	  [INART_DROP_MISMATCH] = "mismatch",
	    [INART_DROP_BITS] = "bits",		  [INART_DROP_DUPLICATE] = "duplicate",
	    [INART_DROP_NO_ROUTE] = "no_route",	  [INART_DROP_TTL] = "ttl",
	    [INART_DROP_OUT_FULL] = "out_full",	  [INART_DROP_OTHER] = "other",
	    [INART_DROP_SPOOFED] = "spoofed",	  [INART_DROP_INGRESS] = "ingress",
	    [INART_DROP_RANK] = "rank",
	};

	if (reason < 0 || reason >= INART_DROP_N)
		return "unknown";
	return names[reason];
}

int inart_sw_tables_labels(const struct inart_sw_tables *t, struct inart_label_entry *out, int max)
{
	for (int i = 0; out != NULL && i < t->n && i < max; i++)
		entry_view(t, i, &out[i]);
	return t->n;
}

int inart_switch_get_labels(const struct inart_switch *sw, struct inart_label_entry *out, int max)
{
	return inart_sw_tables_labels(sw->tab, out, max);
}

struct route_copy {
	struct inart_route *out;
	int n, max;
};

static int route_copy_fn(void *ctx, uint32_t prefix, int len, uint32_t value)
{
	struct route_copy *c = ctx;

	if (c->n < c->max) {
		c->out[c->n].prefix = prefix;
		c->out[c->n].len = (uint8_t)len;
		c->out[c->n].port = (uint16_t)value;
	}
	c->n++;
	return 0;
}

int inart_switch_get_routes(const struct inart_switch *sw, struct inart_route *out, int max)
{
	struct route_copy c = {out, 0, out != NULL && max > 0 ? max : 0};

	inart_lpm_walk(sw->tab->lpm, route_copy_fn, &c);
	return c.n;
}

int inart_switch_get_ingress(const struct inart_switch *sw, struct inart_sw_ingress *out, int max)
{
	for (int i = 0; out != NULL && i < sw->tab->n_ing && i < max; i++)
		out[i] = sw->tab->ing[i];
	return sw->tab->n_ing;
}

int inart_switch_peer_mac(const struct inart_switch *sw, int port, uint8_t mac[6])
{
	if (port < 0 || port >= sw->cfg.n_ports || !sw->peer_known[port])
		return -1;
	memcpy(mac, sw->peer[port], 6);
	return 0;
}
