/*
 * switch: the software programmable switch, sans I/O (see switch.h).
 *
 * State: the configuration and per-port peer MACs; the label table (an
 * array of entries plus an open-addressing index label -> entry, rebuilt
 * whole on every update, with per aggregating entry the newest chunk of
 * each rank and per DOWN entry an aggregating UP entry of its (job, tree));
 * the IPv4 LPM table; the aggregator pool with per-slot metadata (addresses
 * and flags needed to emit the aggregate, the NACK round last repaired);
 * drop, port and per-(job, tree) counters.  Everything is allocated by
 * create and apply; rx/tick/lose_state never allocate.
 *
 * Invariants:
 *   - every UP aggregate entry's slot region [slot_base, slot_base+n_slots)
 *     lies inside the pool, and regions of entries of different (job, tree)
 *     are disjoint, so a packet can only touch its own tree's slots;
 *   - a busy pool slot's key.label names an UP aggregate entry of the same
 *     (job, tree) and bitmap width whose region holds the slot (apply frees
 *     slots that lose their entry);
 *   - entries' expected bitmaps are zero beyond bitmap_words;
 *   - a slot's kept contents (not busy) are the aggregate it last emitted or
 *     a clean result of the PS that passed down, keyed like a busy slot;
 *     repairs resend exactly the kept aggregate, answers the kept result;
 *   - apply builds new tables aside and swaps them in only when the whole
 *     batch is valid and all memory is allocated: on error nothing changes.
 * Ownership: the switch owns its tables, pool and counters; frames are the
 * caller's.
 */
#include "switch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "agg_pool.h"
#include "lpm.h"
#include "pkt.h"

struct label_tab {
	struct inart_label_entry *ent;
	int *tree_idx;	 /* per entry: index into the tree stats */
	int32_t *rk_off; /* per entry: first rank record in rk (aggregating entries), -1 */
	int32_t *up_of;	 /* per DOWN entry: an aggregating UP entry of its (job, tree), -1 */
	struct rank_pos *rk;
	int n;
	int32_t *index; /* hcap cells: entry index or -1 */
	uint32_t hcap;	/* power of two, >= 2 * n */
};

/* The newest chunk (iter, seq) of a rank seen at an aggregating entry; pos =
 * seq + 1, 0: none yet. */
struct rank_pos {
	uint32_t iter, pos;
};

struct slot_meta {
	uint32_t src_ip, dst_ip;
	uint16_t sport;
	uint8_t flags;	  /* INART_F_OVERFLOW carried by contributions */
	uint8_t repaired; /* NACK round the kept aggregate was last sent again for */
};

struct inart_switch {
	struct inart_sw_cfg cfg;
	uint8_t peer[INART_SW_MAX_PORTS][6];
	uint8_t peer_known[INART_SW_MAX_PORTS];
	uint8_t peer_fixed[INART_SW_MAX_PORTS];
	struct label_tab lt;
	struct inart_lpm *lpm;
	struct inart_agg_pool *pool;
	struct slot_meta *meta;
	int max_values;
	struct inart_sw_tree_stats *trees;
	int n_trees;
	uint64_t drops[INART_DROP_N];
	struct inart_sw_port_stats port_stats[INART_SW_MAX_PORTS];
};

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static int mac_zero(const uint8_t m[6])
{
	return (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0;
}

/* ---- label table ---- */

static uint32_t label_hash(uint32_t label)
{
	return (uint32_t)(((uint64_t)label * 0x9E3779B97F4A7C15ull) >> 32);
}

static void lt_free(struct label_tab *t)
{
	free(t->ent);
	free(t->tree_idx);
	free(t->rk_off);
	free(t->rk);
	free(t->up_of);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

static int lt_find(const struct label_tab *t, uint32_t label)
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

/* (Re)build the index of t->ent[0..n) (labels unique). 0 or -ENOMEM. */
static int lt_index(struct label_tab *t)
{
	uint32_t cap = 16, m, i;
	int k;

	while (cap < 2 * (uint32_t)t->n)
		cap *= 2;
	free(t->index);
	t->index = malloc(cap * sizeof(*t->index));
	if (t->index == NULL) {
		t->hcap = 0;
		return -ENOMEM;
	}
	t->hcap = cap;
	m = cap - 1;
	memset(t->index, 0xff, cap * sizeof(*t->index));
	for (k = 0; k < t->n; k++) {
		for (i = label_hash(t->ent[k].label) & m; t->index[i] >= 0; i = (i + 1) & m)
			;
		t->index[i] = k;
	}
	return 0;
}

/* ---- creation ---- */

struct inart_switch *inart_switch_create(const struct inart_sw_cfg *cfg)
{
	struct inart_switch *sw;
	int i, slots;

	if (cfg == NULL || cfg->n_ports < 1 || cfg->n_ports > INART_SW_MAX_PORTS ||
	    cfg->pool_slots < 0 || cfg->pool_slots > (1 << 24) || cfg->max_values < 0 ||
	    cfg->max_values > 65535) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return NULL;
	sw->cfg = *cfg;
	sw->max_values = cfg->max_values > 0 ? cfg->max_values : inart_wire_max_values(1);
	for (i = 0; i < cfg->n_ports; i++) {
		if (!mac_zero(cfg->ports[i].peer_mac)) {
			memcpy(sw->peer[i], cfg->ports[i].peer_mac, 6);
			sw->peer_known[i] = sw->peer_fixed[i] = 1;
		}
	}
	slots = cfg->pool_slots > 0 ? cfg->pool_slots : 1;
	sw->pool = inart_agg_pool_create(slots, sw->max_values, cfg->flush_timeout_ns);
	sw->meta = calloc((size_t)slots, sizeof(*sw->meta));
	sw->lpm = inart_lpm_create();
	if (sw->pool == NULL || sw->meta == NULL || sw->lpm == NULL || lt_index(&sw->lt) < 0) {
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
	lt_free(&sw->lt);
	inart_lpm_destroy(sw->lpm);
	inart_agg_pool_destroy(sw->pool);
	free(sw->meta);
	free(sw->trees);
	free(sw);
}

/* ---- table updates ---- */

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

static int check_entry(const struct inart_switch *sw, const struct inart_label_entry *e, char *why,
		       size_t why_len)
{
	int i, w;

	if (e->label == 0) {
		why_set(why, why_len, "label 0: labels must be non-zero");
		return -EINVAL;
	}
	if (e->kind == INART_LABEL_UP) {
		if (e->out_port >= sw->cfg.n_ports) {
			why_set(why, why_len, "label %u: out_port %u >= %d ports", e->label,
				e->out_port, sw->cfg.n_ports);
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
		if (e->n_slots < 1 || (int)e->slot_base + (int)e->n_slots > sw->cfg.pool_slots) {
			why_set(why, why_len,
				"label %u: slot region %u+%u outside the pool of %d slots",
				e->label, e->slot_base, e->n_slots, sw->cfg.pool_slots);
			return -EINVAL;
		}
		for (w = 0; w < e->bitmap_words; w++)
			if (e->expected[w])
				break;
		if (w == e->bitmap_words) {
			why_set(why, why_len, "label %u: expected bitmap is empty", e->label);
			return -EINVAL;
		}
		return 0;
	}
	if (e->kind == INART_LABEL_DOWN) {
		if (e->n_down < 1 || e->n_down > INART_SW_MAX_FANOUT) {
			why_set(why, why_len, "label %u: n_down %u not in 1..%d", e->label,
				e->n_down, INART_SW_MAX_FANOUT);
			return -EINVAL;
		}
		for (i = 0; i < e->n_down; i++) {
			if (e->down[i].port >= sw->cfg.n_ports) {
				why_set(why, why_len, "label %u: down[%d] port %u >= %d ports",
					e->label, i, e->down[i].port, sw->cfg.n_ports);
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
static int check_regions(const struct label_tab *t, char *why, size_t why_len)
{
	struct region *r;
	int n = 0, i, rc = 0;
	int b1 = -1, b2 = -1; /* indices of the two farthest-reaching, different owners */

	r = malloc(((size_t)t->n + 1) * sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct inart_label_entry *e = &t->ent[i];

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

/* Tree stats for the new table: one per distinct (job, tree), counters
 * carried over from the old list. */
static int build_trees(const struct inart_switch *sw, struct label_tab *t,
		       struct inart_sw_tree_stats **trees_out, int *n_out)
{
	struct inart_sw_tree_stats *tr;
	int n = 0, i, j;

	tr = calloc((size_t)t->n + 1, sizeof(*tr));
	if (tr == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct inart_label_entry *e = &t->ent[i];

		for (j = 0; j < n; j++)
			if (tr[j].job == e->job && tr[j].tree == e->tree)
				break;
		if (j == n) {
			int k;

			tr[n].job = e->job;
			tr[n].tree = e->tree;
			for (k = 0; k < sw->n_trees; k++)
				if (sw->trees[k].job == e->job && sw->trees[k].tree == e->tree)
					tr[n] = sw->trees[k];
			n++;
		}
		t->tree_idx[i] = j;
	}
	*trees_out = tr;
	*n_out = n;
	return 0;
}

/* Free busy slots whose owning entry is gone or changed. */
static void drop_orphan_slots(struct inart_switch *sw)
{
	int i, n = inart_agg_pool_n_slots(sw->pool);

	if (inart_agg_pool_busy(sw->pool) == 0)
		return;
	for (i = 0; i < n; i++) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, i);
		const struct inart_label_entry *e;
		int k;

		if (!s->busy)
			continue;
		k = lt_find(&sw->lt, s->key.label);
		e = k >= 0 ? &sw->lt.ent[k] : NULL;
		if (e == NULL || e->kind != INART_LABEL_UP || !e->aggregate ||
		    e->job != s->key.job || e->tree != s->key.tree ||
		    e->bitmap_words != s->key.bitmap_words || i < e->slot_base ||
		    i >= e->slot_base + e->n_slots)
			inart_agg_pool_release(sw->pool, i);
	}
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

static uint32_t jt_hash(uint32_t job, uint16_t tree)
{
	return (uint32_t)((((uint64_t)job << 16 | tree) * 0x9E3779B97F4A7C15ull) >> 32);
}

/* For every DOWN entry of t, the first aggregating UP entry of the same
 * (job, tree) (where results and NACKs passing down can use the slots).
 * 0 or -ENOMEM. */
static int lt_up_of(struct label_tab *t)
{
	uint32_t cap = 16, m, i;
	int32_t *map;

	free(t->up_of);
	t->up_of = malloc(((size_t)t->n + 1) * sizeof(*t->up_of));
	while (cap < 2 * (uint32_t)t->n)
		cap *= 2;
	map = malloc(cap * sizeof(*map));
	if (t->up_of == NULL || map == NULL) {
		free(map);
		return -ENOMEM;
	}
	m = cap - 1;
	memset(map, 0xff, cap * sizeof(*map));
	for (int k = 0; k < t->n; k++) {
		const struct inart_label_entry *e = &t->ent[k];

		if (e->kind != INART_LABEL_UP || !e->aggregate)
			continue;
		for (i = jt_hash(e->job, e->tree) & m; map[i] >= 0; i = (i + 1) & m)
			if (t->ent[map[i]].job == e->job && t->ent[map[i]].tree == e->tree)
				break;
		if (map[i] < 0)
			map[i] = k;
	}
	for (int k = 0; k < t->n; k++) {
		const struct inart_label_entry *e = &t->ent[k];

		t->up_of[k] = -1;
		if (e->kind != INART_LABEL_DOWN)
			continue;
		for (i = jt_hash(e->job, e->tree) & m; map[i] >= 0; i = (i + 1) & m) {
			if (t->ent[map[i]].job == e->job && t->ent[map[i]].tree == e->tree) {
				t->up_of[k] = map[i];
				break;
			}
		}
	}
	free(map);
	return 0;
}

/* Rank progress records for every aggregating entry of t (all zero: nothing
 * seen yet), and the DOWN -> UP map.  0 or -ENOMEM. */
static int lt_ranks(struct label_tab *t)
{
	size_t total = 0;

	free(t->rk_off);
	free(t->rk);
	t->rk = NULL;
	t->rk_off = malloc(((size_t)t->n + 1) * sizeof(*t->rk_off));
	if (t->rk_off == NULL || lt_up_of(t) < 0)
		return -ENOMEM;
	for (int k = 0; k < t->n; k++) {
		const struct inart_label_entry *e = &t->ent[k];

		t->rk_off[k] = -1;
		if (e->kind == INART_LABEL_UP && e->aggregate) {
			t->rk_off[k] = (int32_t)total;
			total += 64 * (size_t)e->bitmap_words;
		}
	}
	t->rk = calloc(total + 1, sizeof(*t->rk));
	return t->rk == NULL ? -ENOMEM : 0;
}

/* Zero the fields an entry's kind does not use (so tables compare and dump
 * cleanly and expected bitmaps are zero beyond bitmap_words). */
static void normalize(struct inart_label_entry *d)
{
	int w;

	if (d->kind == INART_LABEL_UP) {
		d->n_down = 0;
		memset(d->down, 0, sizeof(d->down));
		if (!d->aggregate) {
			d->slot_base = d->n_slots = 0;
			d->bitmap_words = 0;
		}
		for (w = d->aggregate ? d->bitmap_words : 0; w < INART_WIRE_MAX_BITMAP_WORDS; w++)
			d->expected[w] = 0;
	} else {
		d->out_port = 0;
		d->next_label = 0;
		d->aggregate = 0;
		d->slot_base = d->n_slots = 0;
		d->bitmap_words = 0;
		memset(d->expected, 0, sizeof(d->expected));
		for (w = d->n_down; w < INART_SW_MAX_FANOUT; w++)
			memset(&d->down[w], 0, sizeof(d->down[w]));
	}
}

int inart_switch_apply(struct inart_switch *sw, const struct inart_sw_update *u, char *why,
		       size_t why_len)
{
	struct label_tab nt = {0};
	struct inart_lpm *nl = NULL;
	struct inart_sw_tree_stats *trees = NULL;
	uint8_t *gone = NULL;
	int n_trees = 0, i, j, k, cap, n_old, rc = 0;

	why_set(why, why_len, "%s", "");
	if (sw == NULL || u == NULL || u->n_labels < 0 || u->n_del_labels < 0 || u->n_routes < 0 ||
	    (u->n_labels > 0 && u->labels == NULL) ||
	    (u->n_del_labels > 0 && u->del_labels == NULL) ||
	    (u->n_routes > 0 && u->routes == NULL)) {
		why_set(why, why_len, "malformed update");
		return -EINVAL;
	}
	/* 1. every new entry on its own, and unique labels within the batch */
	for (i = 0; i < u->n_labels; i++) {
		rc = check_entry(sw, &u->labels[i], why, why_len);
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
		if (r->port >= sw->cfg.n_ports) {
			why_set(why, why_len, "route %u.%u.%u.%u/%u: port %u >= %d ports",
				r->prefix >> 24, (r->prefix >> 16) & 255, (r->prefix >> 8) & 255,
				r->prefix & 255, r->len, r->port, sw->cfg.n_ports);
			return -EINVAL;
		}
	}
	/* 2. the new label table: old (unless replace) - deletes + upserts; the
	 * index is rebuilt once after the deletes and once at the end */
	cap = (u->replace ? 0 : sw->lt.n) + u->n_labels + 1;
	nt.ent = malloc((size_t)cap * sizeof(*nt.ent));
	nt.tree_idx = malloc((size_t)cap * sizeof(*nt.tree_idx));
	gone = calloc((size_t)cap, 1);
	if (nt.ent == NULL || nt.tree_idx == NULL || gone == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (!u->replace && sw->lt.n > 0) {
		memcpy(nt.ent, sw->lt.ent, (size_t)sw->lt.n * sizeof(*nt.ent));
		nt.n = sw->lt.n;
	}
	rc = lt_index(&nt);
	if (rc < 0)
		goto out;
	for (i = 0; i < u->n_del_labels; i++) {
		k = lt_find(&nt, u->del_labels[i]);
		if (k < 0 || gone[k]) {
			why_set(why, why_len, "delete label %u: not in the table",
				u->del_labels[i]);
			rc = -EINVAL;
			goto out;
		}
		gone[k] = 1;
	}
	if (u->n_del_labels > 0) {
		for (i = j = 0; i < nt.n; i++)
			if (!gone[i])
				nt.ent[j++] = nt.ent[i];
		nt.n = j;
		rc = lt_index(&nt);
		if (rc < 0)
			goto out;
	}
	rc = check_unique(u, why, why_len);
	if (rc < 0)
		goto out;
	n_old = nt.n;
	for (i = 0; i < u->n_labels; i++) {
		struct inart_label_entry *d;

		k = lt_find(&nt, u->labels[i].label); /* finds old entries only */
		if (k < 0) {
			if (nt.n >= INART_SW_MAX_LABELS) {
				why_set(why, why_len, "label %u: table full (%d labels)",
					u->labels[i].label, INART_SW_MAX_LABELS);
				rc = -ENOSPC;
				goto out;
			}
			k = nt.n++;
		}
		d = &nt.ent[k];
		*d = u->labels[i];
		normalize(d);
	}
	if (nt.n != n_old || u->n_labels > 0) {
		rc = lt_index(&nt);
		if (rc < 0)
			goto out;
	}
	/* 3. whole-table checks */
	rc = check_regions(&nt, why, why_len);
	if (rc < 0)
		goto out;
	/* 4. routes */
	nl = u->replace ? inart_lpm_create() : inart_lpm_clone(sw->lpm);
	if (nl == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < u->n_routes; i++) {
		rc = inart_lpm_add(nl, u->routes[i].prefix, u->routes[i].len, u->routes[i].port);
		if (rc < 0)
			goto out;
	}
	rc = build_trees(sw, &nt, &trees, &n_trees);
	if (rc < 0)
		goto out;
	rc = lt_ranks(&nt);
	if (rc < 0)
		goto out;
	/* 5. commit */
	lt_free(&sw->lt);
	sw->lt = nt;
	memset(&nt, 0, sizeof(nt));
	inart_lpm_destroy(sw->lpm);
	sw->lpm = nl;
	nl = NULL;
	free(sw->trees);
	sw->trees = trees;
	sw->n_trees = n_trees;
	trees = NULL;
	drop_orphan_slots(sw);
	rc = 0;
out:
	if (rc == -ENOMEM)
		why_set(why, why_len, "out of memory");
	lt_free(&nt);
	inart_lpm_destroy(nl);
	free(trees);
	free(gone);
	return rc;
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
	if (!inart_lpm_lookup(sw->lpm, pi->dst_ip, &port) || port >= (uint32_t)sw->cfg.n_ports) {
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
			   const struct inart_label_entry *e, uint8_t add_flags)
{
	struct inart_switch *sw = c->sw;
	struct inart_frame *o;
	uint8_t *ina;
	size_t len;

	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
		return;
	}
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

/* Emit the aggregate in pool slot `slot` upward along entry e and stop
 * aggregating in it (the slot keeps the aggregate: INART_AGG_KEPT_SENT).
 * extra: INART_F_PARTIAL for a flush; INART_F_RETX to send a kept aggregate
 * again (the slot is not changed).  Returns 1 if emitted, 0 if no room (the
 * slot stays as it was). */
static int emit_slot(struct rxctx *c, int slot, const struct inart_label_entry *e, uint8_t extra)
{
	struct inart_switch *sw = c->sw;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
	const struct slot_meta *m = &sw->meta[slot];
	struct inart_wire_hdr h;
	struct inart_frame *o;
	uint8_t *ina;
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

/* Record that the ranks of bits sent chunk (iter, seq) (the newest wins,
 * iterations compared in serial arithmetic). */
static void ranks_note(struct rank_pos *rk, const uint64_t *bits, int words, uint32_t iter,
		       uint32_t seq)
{
	for (int w = 0; w < words; w++) {
		for (uint64_t b = bits[w]; b; b &= b - 1) {
			struct rank_pos *p = &rk[64 * w + __builtin_ctzll(b)];

			if (p->pos == 0 || (int32_t)(iter - p->iter) > 0 ||
			    (iter == p->iter && seq + 1 > p->pos)) {
				p->iter = iter;
				p->pos = seq + 1;
			}
		}
	}
}

/* A rank whose newest chunk is INART_SW_LOST_AFTER or more past seq (or in a
 * later iteration) will not send chunk (iter, seq) any more: its
 * contribution was lost, or already went into an earlier (flushed) instance
 * of the slot. */
static int rank_gone(const struct rank_pos *p, uint32_t iter, uint32_t seq)
{
	if (p->pos == 0)
		return 0;
	if (p->iter != iter)
		return (int32_t)(p->iter - iter) > 0;
	return p->pos - 1 >= seq + INART_SW_LOST_AFTER;
}

/* Every expected rank missing from busy slot `slot` of entry e is gone:
 * waiting longer cannot complete it. */
static int slot_settled(const struct inart_switch *sw, int slot, const struct inart_label_entry *e,
			const struct rank_pos *rk)
{
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);

	if (rk == NULL || !s->busy || s->key.label != e->label)
		return 0;
	for (int w = 0; w < e->bitmap_words; w++)
		for (uint64_t m = e->expected[w] & ~s->bitmap[w]; m; m &= m - 1)
			if (!rank_gone(&rk[64 * w + __builtin_ctzll(m)], s->key.iter, s->key.seq))
				return 0;
	return 1;
}

/* Flush slot (busy, entry e) as a partial aggregate now. */
static void flush_slot(struct rxctx *c, int slot, const struct inart_label_entry *e,
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
static void flush_behind(struct rxctx *c, const struct inart_wire_hdr *h,
			 const struct inart_label_entry *e, struct inart_sw_tree_stats *ts,
			 const struct rank_pos *rk)
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
	    s->key.seq == h->seq - d && slot_settled(c->sw, slot, e, rk))
		flush_slot(c, slot, e, ts);
}

/* The slot of up entry u for chunk h (DOWN packets carry the chunk's slot
 * field), and whether it holds (kept or busy) that chunk of u. */
static int chunk_slot(const struct inart_switch *sw, const struct inart_label_entry *u,
		      const struct inart_wire_hdr *h, const struct inart_agg_slot **sp)
{
	int slot = u->slot_base + h->slot % u->n_slots;
	const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);

	*sp = s;
	if ((!s->busy && s->kept == INART_AGG_KEPT_NONE) || s->key.label != u->label ||
	    s->key.iter != h->iter || s->key.seq != h->seq)
		return -1;
	return slot;
}

/* A probe travelling up: if the chunk's slot keeps its result, answer the
 * prober with it (RESULT|RETX, label 0, routed by IPv4 as if from the PS).
 * Returns 1 if answered. */
static int probe_answer(struct rxctx *c, const struct inart_pkt_info *pi,
			const struct inart_wire_hdr *h, const struct inart_label_entry *e,
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
	if (!inart_lpm_lookup(sw->lpm, pi->src_ip, &port) || port >= (uint32_t)sw->cfg.n_ports)
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
		      const struct inart_wire_hdr *h, const uint8_t *payload,
		      const struct inart_label_entry *e, struct inart_sw_tree_stats *ts,
		      struct rank_pos *rk)
{
	struct inart_switch *sw = c->sw;
	struct inart_agg_key key;
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
	for (w = 0; w < h->bitmap_words; w++) {
		if (h->bitmap[w] & ~e->expected[w]) {
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
		ranks_note(rk, h->bitmap, h->bitmap_words, h->iter, h->seq);
	/* an older chunk this packet shows incomplete for good leaves first,
	 * so that it reaches the PS before the evidence does */
	flush_behind(c, h, e, ts, rk);
	if (h->flags & INART_F_PARTIAL) {
		/* its sender stopped waiting: it joins the chunk's aggregate if
		 * one is open here, else goes on at once (never waits here) */
		const struct inart_agg_slot *v = inart_agg_pool_slot(sw->pool, slot);

		if (!v->busy || !key_eq(&v->key, &key)) {
			ina_forward_up(c, frame, pi, e, 0);
			return;
		}
	}
	rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload, e->expected, c->now,
				   &fresh);
	if (rc == INART_AGG_BUSY && slot_settled(sw, slot, e, rk)) {
		/* the slot's chunk cannot complete any more: make room */
		flush_slot(c, slot, e, ts);
		if (!inart_agg_pool_slot(sw->pool, slot)->busy)
			rc = inart_agg_pool_absorb(sw->pool, slot, &key, h->bitmap, payload,
						   e->expected, c->now, &fresh);
	}
	switch (rc) {
	case INART_AGG_ABSORBED:
	case INART_AGG_COMPLETE:
		ts->aggregated++;
		if (fresh) {
			sw->meta[slot].src_ip = pi->src_ip;
			sw->meta[slot].dst_ip = pi->dst_ip;
			sw->meta[slot].sport = pi->sport;
			sw->meta[slot].flags = 0;
			sw->meta[slot].repaired = 0;
		}
		sw->meta[slot].flags |= h->flags & INART_F_OVERFLOW;
		if (rc == INART_AGG_COMPLETE) {
			int ovf = inart_agg_pool_slot(sw->pool, slot)->overflow ||
				  (sw->meta[slot].flags & INART_F_OVERFLOW);

			if (emit_slot(c, slot, e, 0)) {
				ts->emitted++;
				ts->overflows += ovf ? 1 : 0;
			}
			/* no room: the slot stays busy and is flushed by tick */
		} else if (slot_settled(sw, slot, e, rk)) {
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
static int nack_repair(struct rxctx *c, const struct inart_wire_hdr *h,
		       const struct inart_label_entry *u, struct inart_sw_tree_stats *ts,
		       uint64_t *bits)
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
			const uint8_t *payload, const struct inart_label_entry *u)
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
			const struct inart_label_entry *e, const struct inart_label_entry *u,
			struct inart_sw_tree_stats *ts)
{
	struct inart_switch *sw = c->sw;
	uint64_t bits[INART_WIRE_MAX_BITMAP_WORDS];
	int i, w, nack = (h->flags & (INART_F_NACK | INART_F_RETX)) == INART_F_NACK;

	if (!(h->flags & INART_F_RESULT)) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (pi->ttl <= 1) {
		sw->drops[INART_DROP_TTL]++;
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
		} else if (!(h->flags & (INART_F_NACK | INART_F_RETX | INART_F_OVERFLOW)) &&
			   h->count > 0 && h->count <= sw->max_values) {
			result_keep(sw, h, payload, u);
		}
	}
	for (i = 0; i < e->n_down; i++) {
		const struct inart_label_down *d = &e->down[i];
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

static void rx_ina(struct rxctx *c, const struct inart_frame *in, const struct inart_pkt_info *pi)
{
	struct inart_switch *sw = c->sw;
	struct inart_wire_hdr h;
	const uint8_t *payload;
	const struct inart_label_entry *e;
	int k;

	if (inart_wire_decode(in->data + pi->l4_payload_off, pi->l4_payload_len, &h, &payload) !=
	    INART_WIRE_OK) {
		sw->drops[INART_DROP_WIRE]++;
		return;
	}
	if (h.label == 0) {
		rx_ipv4_plain(c, in->data, pi);
		return;
	}
	k = lt_find(&sw->lt, h.label);
	if (k < 0) {
		sw->drops[INART_DROP_NO_LABEL]++;
		return;
	}
	e = &sw->lt.ent[k];
	if (e->job != h.job || e->tree != h.tree) {
		sw->drops[INART_DROP_MISMATCH]++;
		return;
	}
	if (e->kind == INART_LABEL_UP)
		rx_ina_up(c, in->data, pi, &h, payload, e, &sw->trees[sw->lt.tree_idx[k]],
			  sw->lt.rk_off[k] >= 0 ? sw->lt.rk + sw->lt.rk_off[k] : NULL);
	else
		rx_ina_down(c, in->data, pi, &h, payload, e,
			    sw->lt.up_of[k] >= 0 ? &sw->lt.ent[sw->lt.up_of[k]] : NULL,
			    &sw->trees[sw->lt.tree_idx[k]]);
}

int inart_switch_rx(struct inart_switch *sw, const struct inart_frame *in, uint64_t now_ns,
		    struct inart_frame *out, int max_out)
{
	struct rxctx c = {sw, out, 0, max_out < 0 ? 0 : max_out, now_ns};
	struct inart_pkt_info pi;

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
	int slot;

	while ((slot = inart_agg_pool_expired(sw->pool, now_ns)) >= 0) {
		const struct inart_agg_slot *s = inart_agg_pool_slot(sw->pool, slot);
		const struct inart_label_entry *e;
		struct inart_sw_tree_stats *ts;
		int k = lt_find(&sw->lt, s->key.label), ovf, complete;

		if (k < 0) { /* cannot happen: apply frees orphaned slots */
			inart_agg_pool_release(sw->pool, slot);
			continue;
		}
		if (c.n >= c.max)
			break; /* not counted: the flush waits for the next tick */
		e = &sw->lt.ent[k];
		ts = &sw->trees[sw->lt.tree_idx[k]];
		ovf = s->overflow || (sw->meta[slot].flags & INART_F_OVERFLOW);
		/* complete but not emitted by rx for lack of room: not partial */
		complete = memcmp(s->bitmap, e->expected, sizeof(e->expected)) == 0;
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

void inart_switch_lose_state(struct inart_switch *sw)
{
	inart_agg_pool_clear(sw->pool);
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
		for (i = 0; i < sw->n_trees && i < max_trees; i++)
			trees[i] = sw->trees[i];
	return sw->n_trees;
}

const char *inart_switch_drop_name(int reason)
{
	static const char *const names[INART_DROP_N] = {
	    [INART_DROP_MALFORMED] = "malformed", [INART_DROP_WIRE] = "wire",
	    [INART_DROP_NO_LABEL] = "no_label",	  [INART_DROP_MISMATCH] = "mismatch",
	    [INART_DROP_BITS] = "bits",		  [INART_DROP_DUPLICATE] = "duplicate",
	    [INART_DROP_NO_ROUTE] = "no_route",	  [INART_DROP_TTL] = "ttl",
	    [INART_DROP_OUT_FULL] = "out_full",	  [INART_DROP_OTHER] = "other",
	};

	if (reason < 0 || reason >= INART_DROP_N)
		return "unknown";
	return names[reason];
}

int inart_switch_get_labels(const struct inart_switch *sw, struct inart_label_entry *out, int max)
{
	int i;

	for (i = 0; out != NULL && i < sw->lt.n && i < max; i++)
		out[i] = sw->lt.ent[i];
	return sw->lt.n;
}

int inart_switch_get_routes(const struct inart_switch *sw, struct inart_route *out, int max)
{
	struct route_copy c = {out, 0, out != NULL && max > 0 ? max : 0};

	inart_lpm_walk(sw->lpm, route_copy_fn, &c);
	return c.n;
}

int inart_switch_peer_mac(const struct inart_switch *sw, int port, uint8_t mac[6])
{
	if (port < 0 || port >= sw->cfg.n_ports || !sw->peer_known[port])
		return -1;
	memcpy(mac, sw->peer[port], 6);
	return 0;
}
