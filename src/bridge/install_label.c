/*
 * install_label: the label table of an installation being built (see
 * install.c for the numbering and install.h for the scheme).  Labels are
 * keyed by (job, tree, direction, remaining path) in a hash table built for
 * one run; label = key number + 1.  Each key's entry lives at the first node
 * of its path (a switch), its variable part (expected bitmap words or DOWN
 * copies) in that switch's arrays.
 *
 * Ownership: the keys, the hash and the switches' arrays belong to the
 * builder (install_impl.h); install.c frees them or hands them to the result.
 */
#include "bridge/install_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"

static uint64_t key_hash(int job, int tree, int dir, const int *nodes, int n)
{
	uint64_t h = 1469598103934665603ull;

	h = (h ^ (uint64_t)(uint32_t)job) * 1099511628211ull;
	h = (h ^ (uint64_t)(uint32_t)tree) * 1099511628211ull;
	h = (h ^ (uint64_t)(uint32_t)dir) * 1099511628211ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)(uint32_t)nodes[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int key_eq(const struct key *k, int job, int tree, int dir, const int *nodes, int n)
{
	return k->job == job && k->tree == tree && k->dir == dir && k->n == n &&
	       memcmp(k->nodes, nodes, (size_t)n * sizeof(int)) == 0;
}

static int rehash(struct builder *b, size_t size)
{
	int *h = calloc(size, sizeof(int));

	if (h == NULL)
		return -ENOMEM;
	for (int i = 0; i < b->n_keys; i++) {
		const struct key *k = &b->keys[i];
		size_t s = key_hash(k->job, k->tree, k->dir, k->nodes, k->n) & (size_t)(size - 1);

		while (h[s])
			s = (s + 1) & (size - 1);
		h[s] = i + 1;
	}
	free(b->hash);
	b->hash = h;
	b->hash_size = size;
	return 0;
}

/* Label of a key: the existing one (*created = 0) or a new one whose entry,
 * zeroed, is appended at the switch nodes[0] (*created = 1).  Returns the
 * label (> 0) or -ENOMEM. */
static int64_t key_get(struct builder *b, int dir, const int *nodes, int n, int *created)
{
	uint64_t hv = key_hash(b->job, b->tree, dir, nodes, n);
	size_t s = hv & (b->hash_size - 1);
	struct key *k;
	struct swb *sw;
	struct inart_label_entry *e;
	int cap;

	*created = 0;
	while (b->hash[s]) {
		k = &b->keys[b->hash[s] - 1];
		if (key_eq(k, b->job, b->tree, dir, nodes, n))
			return b->hash[s];
		s = (s + 1) & (b->hash_size - 1);
	}
	if ((size_t)(b->n_keys + 1) * 2 > b->hash_size) {
		if (rehash(b, b->hash_size * 2) < 0)
			return -ENOMEM;
		s = hv & (b->hash_size - 1);
		while (b->hash[s])
			s = (s + 1) & (b->hash_size - 1);
	}
	if (inart_grow((void **)&b->keys, &b->cap_keys, b->n_keys, sizeof(*b->keys), 256) < 0)
		return -ENOMEM;
	sw = &b->sw[b->sw_index[nodes[0]]];
	cap = sw->cap_labels; /* labels and var share it */
	if (inart_grow((void **)&sw->labels, &cap, sw->n_labels, sizeof(*sw->labels), 16) < 0 ||
	    inart_grow((void **)&sw->var, &sw->cap_labels, sw->n_labels, sizeof(*sw->var), 16) < 0)
		return -ENOMEM;
	k = &b->keys[b->n_keys];
	k->nodes = malloc((size_t)n * sizeof(int));
	if (k->nodes == NULL)
		return -ENOMEM;
	memcpy(k->nodes, nodes, (size_t)n * sizeof(int));
	k->job = b->job;
	k->tree = b->tree;
	k->dir = dir;
	k->n = n;
	k->sw = b->sw_index[nodes[0]];
	k->entry = sw->n_labels;
	sw->var[sw->n_labels] = 0;
	e = &sw->labels[sw->n_labels++];
	memset(e, 0, sizeof(*e));
	e->label = (uint32_t)(b->n_keys + 1);
	e->kind = dir == DIR_UP ? INART_LABEL_UP : INART_LABEL_DOWN;
	e->job = (uint32_t)b->job;
	e->tree = (uint16_t)b->tree;
	b->hash[s] = ++b->n_keys;
	*created = 1;
	return b->n_keys;
}

static struct inart_label_entry *entry_of(struct builder *b, int64_t label)
{
	const struct key *k = &b->keys[label - 1];

	return &b->sw[k->sw].labels[k->entry];
}

/* Port of the switch u towards its neighbour v. */
static int port_to(const struct builder *b, int u, int v)
{
	return b->d->port[inart_topo_arc_between(b->t, u, v)];
}

/* Label `label` (at switch `at`) is also reached from neighbour `from`. */
static void arrives_from(struct builder *b, int64_t label, int at, int from)
{
	if (label > 0)
		entry_of(b, label)->in_ports |= 1ull << port_to(b, at, from);
}

/* Room for k more elements of `size` bytes at the end of the array *arr
 * (n used, capacity *cap, doubling from 64): the index of the first, or
 * -ENOMEM. */
static int64_t arena_take(void **arr, size_t *n, size_t *cap, size_t k, size_t size)
{
	if (*n + k > *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		void *a;

		while (nc < *n + k)
			nc *= 2;
		a = realloc(*arr, nc * size);
		if (a == NULL)
			return -ENOMEM;
		*arr = a;
		*cap = nc;
	}
	*n += k;
	return (int64_t)(*n - k);
}

/* Give label's entry its variable part: count expected words, or count
 * copies, copied from src.  0 or -ENOMEM. */
static int entry_var(struct builder *b, int64_t label, const void *src, size_t count, int copies)
{
	const struct key *k = &b->keys[label - 1];
	struct swb *sw = &b->sw[k->sw];
	int64_t off =
	    copies
		? arena_take((void **)&sw->dn, &sw->n_dn, &sw->cap_dn, count, sizeof(*sw->dn))
		: arena_take((void **)&sw->exp, &sw->n_exp, &sw->cap_exp, count, sizeof(*sw->exp));

	if (off < 0)
		return (int)off;
	if (copies)
		memcpy(sw->dn + off, src, count * sizeof(*sw->dn));
	else
		memcpy(sw->exp + off, src, count * sizeof(*sw->exp));
	sw->var[k->entry] = (size_t)off;
	return 0;
}

static int64_t agg_label(struct builder *b, int s);
static int64_t rep_label(struct builder *b, int c);

/* Label of the remaining path nodes[0..n) in direction dir, reached from
 * node `from`, creating the labels of the whole path: 0 if nodes[0] is a host
 * (delivered there).  UP paths end at their aggregation point (a switch:
 * aggregate there; or the PS), DOWN paths at a replication switch or a
 * worker.  Every entry notes the ports it is reached on (in_ports). */
int64_t inart_install_path_label(struct builder *b, int dir, int from, const int *nodes, int n)
{
	int64_t next;
	int last = nodes[n - 1], created;

	if (!is_switch(b, nodes[0]))
		return 0;
	if (is_switch(b, last)) {
		next = dir == DIR_UP ? agg_label(b, last) : rep_label(b, last);
		if (next > 0)
			arrives_from(b, next, last, n >= 2 ? nodes[n - 2] : from);
	} else {
		next = 0;
	}
	for (int m = n - 2; m >= 0 && next >= 0; m--) {
		int64_t lab;
		struct inart_label_entry *e;
		int port;

		if (!is_switch(b, nodes[m]))
			return inart_err_set(b->err, -EINVAL,
					     "job %d: path through host '%s' (hosts must be "
					     "single-homed)",
					     b->job, nid(b, nodes[m]));
		lab = key_get(b, dir, nodes + m, n - m, &created);
		if (lab < 0)
			return lab;
		if (created) {
			port = port_to(b, nodes[m], nodes[m + 1]);
			if (dir == DIR_UP) {
				e = entry_of(b, lab);
				e->out_port = (uint16_t)port;
				e->next_label = (uint32_t)next;
			} else {
				struct inart_label_down d = {(uint16_t)port, (uint32_t)next, 0};

				if (entry_var(b, lab, &d, 1, 1) < 0)
					return -ENOMEM;
				entry_of(b, lab)->n_down = 1;
			}
		}
		arrives_from(b, lab, nodes[m], m >= 1 ? nodes[m - 1] : from);
		next = lab;
	}
	return next;
}

/* The UP entry aggregating (job, tree) at switch s: expected bitmap of the
 * ranks below, slot region, and the aggregate's way up the tree path. */
static int64_t agg_label(struct builder *b, int s)
{
	int created, ti = b->tree_at[s];
	int64_t lab, next;
	const struct inart_tree *tr;
	struct inart_label_entry *e;

	if (ti < 0)
		return inart_err_set(b->err, -EINVAL, "job %d: no tree at '%s'", b->job, nid(b, s));
	lab = key_get(b, DIR_UP, &s, 1, &created);
	if (lab < 0 || !created)
		return lab;
	tr = &b->jp->trees[ti];
	next = inart_install_path_label(b, DIR_UP, s, tr->path + 1, tr->n_path - 1);
	if (next < 0)
		return next;
	if (entry_var(b, lab, b->exp + (size_t)ti * INART_WIRE_MAX_BITMAP_WORDS, (size_t)b->words,
		      0) < 0)
		return -ENOMEM;
	e = entry_of(b, lab);
	e->out_port = (uint16_t)port_to(b, s, tr->path[1]);
	e->next_label = (uint32_t)next;
	e->aggregate = 1;
	e->slot_base = (uint16_t)(b->region[ti] * b->opt.slots_per_tree);
	e->n_slots = b->opt.slots_per_tree;
	e->bitmap_words = (uint8_t)b->words;
	return lab;
}

/* Reverse a path into a fresh array (NULL on ENOMEM). */
static int *reversed(const int *path, int n)
{
	int *r = malloc((size_t)n * sizeof(int));

	if (r != NULL)
		for (int i = 0; i < n; i++)
			r[i] = path[n - 1 - i];
	return r;
}

/* The children of aggregation point x in the current (job, tree): flows with
 * agg == x, then trees with parent == x, in plan order.  For each: its node,
 * and its path from x (reversed), *n_rev nodes, malloc'ed. */
int inart_install_child_next(struct builder *b, int x, int *it, int *node, int **rev, int *n_rev)
{
	const struct inart_job_plan *jp = b->jp;

	while (*it < jp->n_flows) {
		const struct inart_flow *f = &jp->flows[(*it)++];

		if (f->ps == b->ps && f->agg == x) {
			*node = f->worker;
			*n_rev = f->n_path;
			*rev = reversed(f->path, f->n_path);
			return *rev ? 1 : -ENOMEM;
		}
	}
	while (*it < jp->n_flows + jp->n_trees) {
		const struct inart_tree *tr = &jp->trees[(*it)++ - jp->n_flows];

		if (tr->ps == b->ps && tr->parent == x) {
			*node = tr->sw;
			*n_rev = tr->n_path;
			*rev = reversed(tr->path, tr->n_path);
			return *rev ? 1 : -ENOMEM;
		}
	}
	return 0;
}

/* The DOWN entry replicating (job, tree) results at switch c to its children;
 * each copy is addressed to the child. */
static int64_t rep_label(struct builder *b, int c)
{
	struct inart_label_down down[INART_SW_MAX_FANOUT];
	int created, it = 0, node, n_rev, n = 0, rc;
	int64_t lab, l;
	int *rev;
	struct inart_label_entry *e;

	lab = key_get(b, DIR_DOWN, &c, 1, &created);
	if (lab < 0 || !created)
		return lab;
	while ((rc = inart_install_child_next(b, c, &it, &node, &rev, &n_rev)) > 0) {
		if (n == INART_SW_MAX_FANOUT) {
			free(rev);
			return inart_err_set(b->err, -E2BIG,
					     "job %d: tree %d: '%s' has more than %d children "
					     "(switch fan-out limit)",
					     b->job, b->tree, nid(b, c), INART_SW_MAX_FANOUT);
		}
		l = inart_install_path_label(b, DIR_DOWN, c, rev + 1, n_rev - 1);
		down[n].port = (uint16_t)port_to(b, c, rev[1]);
		free(rev);
		if (l < 0)
			return l;
		down[n].label = (uint32_t)l;
		down[n].dst_ip = b->d->ip[node];
		n++;
	}
	if (rc < 0)
		return rc;
	if (entry_var(b, lab, down, (size_t)n, 1) < 0)
		return -ENOMEM;
	e = entry_of(b, lab);
	e->n_down = (uint16_t)n;
	return lab;
}

/* Expected bitmap of tree ti (at switch s): ranks of the flows aggregated at
 * s plus the expected sets of the trees whose parent is s. */
void inart_install_expected_of(struct builder *b, int ti, char *done)
{
	const struct inart_job_plan *jp = b->jp;
	uint64_t *x = b->exp + (size_t)ti * INART_WIRE_MAX_BITMAP_WORDS;
	int s = jp->trees[ti].sw;

	if (done[ti])
		return;
	done[ti] = 1;
	memset(x, 0, INART_WIRE_MAX_BITMAP_WORDS * sizeof(uint64_t));
	for (int i = 0; i < jp->n_flows; i++) {
		const struct inart_flow *f = &jp->flows[i];
		int r = b->rank[f->worker];

		if (f->ps == b->ps && f->agg == s)
			x[r / 64] |= 1ull << (r % 64);
	}
	for (int i = 0; i < jp->n_trees; i++) {
		if (jp->trees[i].ps != b->ps || jp->trees[i].parent != s)
			continue;
		inart_install_expected_of(b, i, done);
		for (int w = 0; w < INART_WIRE_MAX_BITMAP_WORDS; w++)
			x[w] |= b->exp[(size_t)i * INART_WIRE_MAX_BITMAP_WORDS + w];
	}
}
