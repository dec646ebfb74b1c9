/*
 * switch_table: the switch's table compiler (see switch_table.h): builds an
 * immutable table set from the current one and an update, off the packet
 * path, and reads table sets back.
 *
 * A table set (struct inart_sw_tables, switch_table.h) holds compact label
 * entries with an open-addressing index label -> entry, their variable parts
 * in two shared arrays -- the expected bitmaps of aggregating entries, the
 * copies of DOWN entries --, per aggregating entry the newest chunk of each
 * expected rank, per DOWN entry an aggregating UP entry of its (job, tree),
 * the per-(job, tree) counters, the IPv4 LPM table and the ingress table
 * (port, job) -> rank.
 *
 * A label entry takes what its kind uses: LENT_BYTES for the entry, plus
 * 8 * bitmap_words (expected) + 8 per expected rank (progress) if it
 * aggregates, plus 12 per copy if DOWN; the index adds 4 bytes per cell
 * (cells: the power of two >= 2 * entries).  docs/dataplane.md states the
 * memory of a switch with N labels; tests/test_switch.c checks it.
 *
 * Invariants of a built set (checked before it is returned): every entry is
 * valid for the switch's configuration on its own (ports, bitmap widths,
 * slot regions inside the pool); labels are unique; slot regions of entries
 * of different (job, tree) are disjoint.  A set is immutable once built
 * except for its rank progress and tree counters, which only the packet path
 * writes (builds of the next set never read them).
 * Ownership: a built set is the caller's until it is swapped into a switch.
 */
#include "dp/switch_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/slab.h"
#include "dp/lpm.h"
#include "dp/progress.h"

/* -1, 0 or 1 as x is below, equal to or above y (the sort orders). */
static int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* cmp_u64 on the first keys, then on the second ones. */
static int cmp_u64_2(uint64_t x0, uint64_t y0, uint64_t x1, uint64_t y1)
{
	int c = cmp_u64(x0, y0);

	return c != 0 ? c : cmp_u64(x1, y1);
}

/* Cells of the index of n entries: the power of two >= 2 n, at least 16. */
static uint32_t index_cells(int n)
{
	uint32_t cap = 16;

	while (cap < 2 * (uint32_t)n)
		cap *= 2;
	return cap;
}

/* Fill the index (t->hcap cells) of t->ent[0..n) (labels unique). */
static void lt_index(struct inart_sw_tables *t)
{
	uint32_t m = t->hcap - 1, i;

	memset(t->index, 0xff, t->hcap * sizeof(*t->index));
	for (int k = 0; k < t->n; k++) {
		for (i = inart_sw_label_hash(t->ent[k].label) & m; t->index[i] >= 0;
		     i = (i + 1) & m)
			;
		t->index[i] = k;
	}
}

/* The fixed-size arrays of a set, in one block with it (inart_slab_new):
 * entries, index, expected bitmaps, DOWN copies, rank progress. */
static void table_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_sw_tables *t = obj;

	t->ent = inart_slab_take(s, (size_t)t->n + 1, sizeof(*t->ent));
	t->index = inart_slab_take(s, t->hcap, sizeof(*t->index));
	t->exp = inart_slab_take(s, t->n_exp + 1, sizeof(*t->exp));
	t->dn = inart_slab_take(s, t->n_dn + 1, sizeof(*t->dn));
	t->rk = inart_slab_take(s, t->n_rk + 1, sizeof(*t->rk));
}

/* What a set holds: entries, expected bitmap words, DOWN copies, expected
 * ranks (progress records). */
struct sizes {
	int n;
	size_t n_exp, n_dn, n_rk;
};

/* A set of z's sizes, every array zeroed (no trees, routes or ingress yet);
 * NULL on ENOMEM. */
static struct inart_sw_tables *table_new(struct sizes z)
{
	struct inart_sw_tables proto = {
	    .n = z.n, .hcap = index_cells(z.n), .n_exp = z.n_exp, .n_dn = z.n_dn, .n_rk = z.n_rk};

	return inart_slab_new(&proto, sizeof(proto), table_lay_out);
}

void inart_sw_tables_destroy(struct inart_sw_tables *t)
{
	if (t == NULL)
		return;
	free(t->trees);
	inart_lpm_destroy(t->lpm);
	free(t->ing);
	free(t); /* and its fixed-size arrays (table_lay_out) */
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

struct inart_sw_tables *inart_sw_tables_empty(void)
{
	struct inart_sw_tables *t = table_new((struct sizes){0, 0, 0, 0});

	if (t == NULL)
		return NULL;
	lt_index(t);
	t->lpm = inart_lpm_create();
	if (t->lpm == NULL) {
		inart_sw_tables_destroy(t);
		return NULL;
	}
	return t;
}

/* The fields a compact entry (struct lent) and the public form share, by
 * kind: every entry's, an up entry's, an aggregating entry's.  entry_view
 * and put_entry copy them one way and the other. */
#define ENTRY_FIELDS(X, d, s)                                                                      \
	X(d, s, label) X(d, s, kind) X(d, s, job) X(d, s, tree) X(d, s, in_ports)
#define UP_FIELDS(X, d, s) X(d, s, out_port) X(d, s, next_label) X(d, s, aggregate)
#define SLOT_FIELDS(X, d, s) X(d, s, slot_base) X(d, s, n_slots) X(d, s, bitmap_words)
#define COPY_FIELD(d, s, f) (d)->f = (s)->f;
#define COPY_FIELDS(d, s, list)                                                                    \
	do {                                                                                       \
		list(COPY_FIELD, d, s)                                                             \
	} while (0)

/* Entry k of t in the public form (pointing into t). */
static void entry_view(const struct inart_sw_tables *t, int k, struct inart_label_entry *v)
{
	const struct lent *e = &t->ent[k];

	memset(v, 0, sizeof(*v));
	COPY_FIELDS(v, e, ENTRY_FIELDS);
	if (e->kind == INART_LABEL_UP) {
		COPY_FIELDS(v, e, UP_FIELDS);
		if (e->aggregate) {
			COPY_FIELDS(v, e, SLOT_FIELDS);
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

static int check_entry(const struct inart_sw_cfg *cfg, const struct inart_label_entry *e,
		       struct inart_err *err)
{
	int i, w;

	if (e->label == 0) {
		inart_err_set(err, 0, "label 0: labels must be non-zero");
		return -EINVAL;
	}
	if (cfg->n_ports < 64 && (e->in_ports >> cfg->n_ports) != 0) {
		inart_err_set(err, 0, "label %u: in_ports names a port >= %d ports", e->label,
			      cfg->n_ports);
		return -EINVAL;
	}
	if (e->kind == INART_LABEL_UP) {
		if (e->out_port >= cfg->n_ports) {
			inart_err_set(err, 0, "label %u: out_port %u >= %d ports", e->label,
				      e->out_port, cfg->n_ports);
			return -EINVAL;
		}
		if (e->aggregate > 1) {
			inart_err_set(err, 0, "label %u: aggregate must be 0 or 1", e->label);
			return -EINVAL;
		}
		if (!e->aggregate)
			return 0;
		if (e->bitmap_words < 1 || e->bitmap_words > INART_WIRE_MAX_BITMAP_WORDS) {
			inart_err_set(err, 0, "label %u: bitmap_words %u not in 1..%d", e->label,
				      e->bitmap_words, INART_WIRE_MAX_BITMAP_WORDS);
			return -EINVAL;
		}
		if (e->n_slots < 1 || (int)e->slot_base + (int)e->n_slots > cfg->pool_slots) {
			inart_err_set(err, 0,
				      "label %u: slot region %u+%u outside the pool of %d slots",
				      e->label, e->slot_base, e->n_slots, cfg->pool_slots);
			return -EINVAL;
		}
		for (w = 0; e->expected != NULL && w < e->bitmap_words; w++)
			if (e->expected[w])
				break;
		if (e->expected == NULL || w == e->bitmap_words) {
			inart_err_set(err, 0, "label %u: expected bitmap is empty", e->label);
			return -EINVAL;
		}
		return 0;
	}
	if (e->kind == INART_LABEL_DOWN) {
		if (e->n_down < 1 || e->n_down > INART_SW_MAX_FANOUT || e->down == NULL) {
			inart_err_set(err, 0, "label %u: n_down %u not in 1..%d", e->label,
				      e->n_down, INART_SW_MAX_FANOUT);
			return -EINVAL;
		}
		for (i = 0; i < e->n_down; i++) {
			if (e->down[i].port >= cfg->n_ports) {
				inart_err_set(err, 0, "label %u: down[%d] port %u >= %d ports",
					      e->label, i, e->down[i].port, cfg->n_ports);
				return -EINVAL;
			}
		}
		return 0;
	}
	inart_err_set(err, 0, "label %u: unknown kind %u", e->label, e->kind);
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

	return cmp_u64_2((uint64_t)x->lo, (uint64_t)y->lo, x->label, y->label);
}

/* Slot regions of different (job, tree) must be disjoint.  Sweep by start,
 * keeping the interval reaching farthest and the farthest one of a
 * different owner than it. */
static int check_regions(const struct inart_sw_tables *t, struct inart_err *err)
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
			inart_err_set(
			    err, 0,
			    "label %u: slot region %d..%d of job %u tree %u overlaps label %u "
			    "(job %u tree %u)",
			    r[i].label, r[i].lo, r[i].hi - 1, r[i].job, r[i].tree, r[other].label,
			    r[other].job, r[other].tree);
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
	return cmp_u64(*(const uint32_t *)a, *(const uint32_t *)b);
}

/* Labels of the batch unique (sorted copy).  0, -EINVAL or -ENOMEM. */
static int check_unique(const struct inart_sw_update *u, struct inart_err *err)
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
			inart_err_set(err, 0, "label %u: appears twice in the update", l[i]);
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

	return cmp_u64_2(x->job, y->job, x->tree, y->tree);
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
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
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

	return cmp_u64_2(x->port, y->port, x->job, y->job);
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
	COPY_FIELDS(e, v, ENTRY_FIELDS);
	e->rk_off = -1;
	if (v->kind == INART_LABEL_UP) {
		COPY_FIELDS(e, v, UP_FIELDS);
		if (v->aggregate) {
			COPY_FIELDS(e, v, SLOT_FIELDS);
			e->var = (uint32_t)*n_exp;
			memcpy(t->exp + *n_exp, v->expected, 8 * (size_t)v->bitmap_words);
			*n_exp += v->bitmap_words;
			e->rk_off = (int32_t)*n_rk;
			/* one per expected rank, then the entry's clock */
			*n_rk += (size_t)bits_count(v->expected, v->bitmap_words) + 1;
		}
	} else {
		e->n_down = v->n_down;
		e->var = (uint32_t)*n_dn;
		memcpy(t->dn + *n_dn, v->down, (size_t)v->n_down * sizeof(*v->down));
		*n_dn += v->n_down;
	}
}

static int check_update(const struct inart_sw_cfg *cfg, const struct inart_sw_update *u,
			struct inart_err *err)
{
	int i, rc;

	for (i = 0; i < u->n_labels; i++) {
		rc = check_entry(cfg, &u->labels[i], err);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < u->n_routes; i++) {
		const struct inart_route *r = &u->routes[i];

		if (r->len > 32) {
			inart_err_set(err, 0, "route %u.%u.%u.%u/%u: length > 32", r->prefix >> 24,
				      (r->prefix >> 16) & 255, (r->prefix >> 8) & 255,
				      r->prefix & 255, r->len);
			return -EINVAL;
		}
		if (r->port >= cfg->n_ports) {
			inart_err_set(err, 0, "route %u.%u.%u.%u/%u: port %u >= %d ports",
				      r->prefix >> 24, (r->prefix >> 16) & 255,
				      (r->prefix >> 8) & 255, r->prefix & 255, r->len, r->port,
				      cfg->n_ports);
			return -EINVAL;
		}
	}
	for (i = 0; i < u->n_ingress; i++) {
		const struct inart_sw_ingress *g = &u->ingress[i];

		if (g->port >= cfg->n_ports || g->rank >= INART_WIRE_MAX_CONTRIB) {
			inart_err_set(err, 0,
				      "ingress[%d]: port %u (of %d) or rank %u (< %d) out of range",
				      i, g->port, cfg->n_ports, g->rank, INART_WIRE_MAX_CONTRIB);
			return -EINVAL;
		}
	}
	return 0;
}

/* The update's arrays are consistent with its counts. */
static int update_ok(const struct inart_sw_update *u)
{
	return u->n_labels >= 0 && u->n_del_labels >= 0 && u->n_routes >= 0 && u->n_ingress >= 0 &&
	       (u->n_labels == 0 || u->labels != NULL) &&
	       (u->n_del_labels == 0 || u->del_labels != NULL) &&
	       (u->n_routes == 0 || u->routes != NULL) && (u->n_ingress == 0 || u->ingress != NULL);
}

/* Mark in gone[0..old->n) the old entries that do not stay: all (replace),
 * deleted, or updated by a label of u.  0 or -EINVAL (a deleted label is not
 * in the table). */
static int mark_gone(const struct inart_sw_tables *old, const struct inart_sw_update *u,
		     uint8_t *gone, struct inart_err *err)
{
	int k;

	if (u->replace)
		memset(gone, 1, (size_t)old->n);
	for (int i = 0; i < u->n_del_labels; i++) {
		k = inart_sw_tables_find(old, u->del_labels[i]);
		if (u->replace || k < 0 || gone[k]) {
			inart_err_set(err, 0, "delete label %u: not in the table",
				      u->del_labels[i]);
			return -EINVAL;
		}
		gone[k] = 1;
	}
	for (int i = 0; i < u->n_labels; i++)
		if ((k = inart_sw_tables_find(old, u->labels[i].label)) >= 0)
			gone[k] = 1;
	return 0;
}

/* Count entry v in z. */
static void sizes_add(struct sizes *z, const struct inart_label_entry *v)
{
	int agg = v->kind == INART_LABEL_UP && v->aggregate;

	z->n++;
	z->n_exp += agg ? v->bitmap_words : 0;
	z->n_dn += v->kind == INART_LABEL_DOWN ? v->n_down : 0;
	z->n_rk += agg ? (size_t)bits_count(v->expected, v->bitmap_words) + 1 : 0;
}

/* The sizes of the new set: the old entries that stay and u's. */
static struct sizes new_sizes(const struct inart_sw_tables *old, const uint8_t *gone,
			      const struct inart_sw_update *u)
{
	struct sizes z = {0, 0, 0, 0};
	struct inart_label_entry v;

	for (int k = 0; k < old->n; k++) {
		if (gone[k])
			continue;
		entry_view(old, k, &v);
		sizes_add(&z, &v);
	}
	for (int i = 0; i < u->n_labels; i++)
		sizes_add(&z, &u->labels[i]);
	return z;
}

/* A new set of z's sizes holding the old entries that stay, then u's, with
 * their index, progress records and tree list.  NULL on ENOMEM. */
static struct inart_sw_tables *labels_build(const struct inart_sw_tables *old, const uint8_t *gone,
					    const struct inart_sw_update *u, struct sizes z)
{
	struct inart_sw_tables *t = table_new(z);
	size_t n_exp = 0, n_dn = 0, n_rk = 0;
	int k = 0;

	if (t == NULL)
		return NULL;
	for (int i = 0; i < old->n; i++) {
		struct inart_label_entry v;

		if (gone[i])
			continue;
		entry_view(old, i, &v);
		put_entry(t, k++, &v, &n_exp, &n_dn, &n_rk);
	}
	for (int i = 0; i < u->n_labels; i++)
		put_entry(t, k++, &u->labels[i], &n_exp, &n_dn, &n_rk);
	lt_index(t);
	if (build_trees(t) < 0) {
		inart_sw_tables_destroy(t);
		return NULL;
	}
	return t;
}

/* t's routes: old's (unless replace) and u's.  0 or -ENOMEM. */
static int build_routes(struct inart_sw_tables *t, const struct inart_sw_tables *old,
			const struct inart_sw_update *u)
{
	int rc = 0;

	t->lpm = u->replace ? inart_lpm_create() : inart_lpm_clone(old->lpm);
	if (t->lpm == NULL)
		return -ENOMEM;
	for (int i = 0; i < u->n_routes && rc == 0; i++)
		rc =
		    inart_lpm_add(t->lpm, u->routes[i].prefix, u->routes[i].len, u->routes[i].port);
	return rc;
}

int inart_sw_tables_compile(const struct inart_sw_cfg *cfg, const struct inart_sw_tables *old,
			    const struct inart_sw_update *u, struct inart_sw_tables **out,
			    struct inart_err *err)
{
	struct inart_sw_tables *t = NULL;
	uint8_t *gone = NULL;
	struct sizes z;
	int rc = 0;

	inart_err_set(err, 0, "%s", "");
	if (out != NULL)
		*out = NULL;
	if (cfg == NULL || old == NULL || u == NULL || out == NULL || !update_ok(u)) {
		inart_err_set(err, 0, "malformed update");
		return -EINVAL;
	}
	/* 1. every new entry on its own, and unique labels within the batch */
	rc = check_update(cfg, u, err);
	if (rc == 0)
		rc = check_unique(u, err);
	if (rc < 0)
		return rc;
	/* 2. which old entries stay: not replaced, not deleted, not updated */
	gone = calloc((size_t)old->n + 1, 1);
	if (gone == NULL)
		return -ENOMEM;
	rc = mark_gone(old, u, gone, err);
	if (rc < 0)
		goto out;
	z = new_sizes(old, gone, u);
	if (z.n > INART_SW_MAX_LABELS) {
		inart_err_set(err, 0, "table full: %d labels (at most %d)", z.n,
			      INART_SW_MAX_LABELS);
		rc = -ENOSPC;
		goto out;
	}
	/* 3. the new table set */
	t = labels_build(old, gone, u, z);
	rc = t == NULL ? -ENOMEM : 0;
	/* 4. whole-table checks */
	if (rc == 0)
		rc = check_regions(t, err);
	/* 5. routes and ingress */
	if (rc == 0)
		rc = build_routes(t, old, u);
	if (rc == 0)
		rc = build_ingress(t, old, u);
	if (rc == 0) {
		*out = t;
		t = NULL;
	}
out:
	if (rc == -ENOMEM)
		inart_err_set(err, 0, "out of memory");
	inart_sw_tables_destroy(t);
	free(gone);
	return rc;
}

/* Counters of the trees that stay (both lists sorted by (job, tree)). */
void inart_sw_tables_keep_counters(struct inart_sw_tables *t, const struct inart_sw_tables *old)
{
	int i = 0, j = 0;

	while (i < old->n_trees && j < t->n_trees) {
		int c = tree_cmp(&old->trees[i], &t->trees[j]);

		if (c == 0)
			t->trees[j++] = old->trees[i++];
		else if (c < 0)
			i++;
		else
			j++;
	}
}

int inart_sw_tables_labels(const struct inart_sw_tables *t, struct inart_label_entry *out, int max)
{
	for (int i = 0; out != NULL && i < t->n && i < max; i++)
		entry_view(t, i, &out[i]);
	return t->n;
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

int inart_sw_tables_routes(const struct inart_sw_tables *t, struct inart_route *out, int max)
{
	struct route_copy c = {out, 0, out != NULL && max > 0 ? max : 0};

	inart_lpm_walk(t->lpm, route_copy_fn, &c);
	return c.n;
}

int inart_sw_tables_ingress(const struct inart_sw_tables *t, struct inart_sw_ingress *out, int max)
{
	for (int i = 0; out != NULL && i < t->n_ing && i < max; i++)
		out[i] = t->ing[i];
	return t->n_ing;
}
