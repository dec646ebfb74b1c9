/* graph: see graph.h.  Node ids are copied into a string pool
 * (common/strpool.h) and indexed by an open-addressing hash table (FNV-1a,
 * linear probing), made with the first node (64 slots) and rebuilt twice the
 * size before it would get more than half full.  The adjacency (out_off,
 * arc_out) is one block, made by finalize (common/slab.h). */
#include "cp/model/graph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/slab.h"

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/* Enter node v in the index (which has a free slot). */
static void index_insert(struct inart_topo *t, int v)
{
	uint32_t mask = (uint32_t)(t->index_size - 1);
	uint32_t h = hash_str(t->nodes[v].id) & mask;

	while (t->index[h] >= 0)
		h = (h + 1) & mask;
	t->index[h] = v;
}

static int index_rebuild(struct inart_topo *t, int size)
{
	int *idx = malloc(sizeof(*idx) * (size_t)size);

	if (idx == NULL)
		return -ENOMEM;
	for (int i = 0; i < size; i++)
		idx[i] = -1;
	free(t->index);
	t->index = idx;
	t->index_size = size;
	for (int v = 0; v < t->n_nodes; v++)
		index_insert(t, v);
	return 0;
}

struct inart_topo *inart_topo_create(void)
{
	return calloc(1, sizeof(struct inart_topo)); /* the index comes with the first node */
}

void inart_topo_destroy(struct inart_topo *t)
{
	if (t == NULL)
		return;
	inart_strpool_free(&t->ids);
	free(t->nodes);
	free(t->arcs);
	free(t->adj);
	free(t->index);
	free(t);
}

int inart_topo_find(const struct inart_topo *t, const char *id)
{
	uint32_t mask = (uint32_t)(t->index_size - 1), h;

	if (t->index_size == 0) /* no node yet */
		return -1;
	h = hash_str(id) & mask;
	while (t->index[h] >= 0) {
		if (strcmp(t->nodes[t->index[h]].id, id) == 0)
			return t->index[h];
		h = (h + 1) & mask;
	}
	return -1;
}

int inart_topo_add_node(struct inart_topo *t, const char *id, enum inart_node_kind kind, int ina,
			double agg_gbps, int trees, struct inart_err *err)
{
	char *copy;

	if (id == NULL || id[0] == '\0')
		return inart_err_set(err, -EINVAL, "node with an empty id");
	if (inart_topo_find(t, id) >= 0)
		return inart_err_set(err, -EEXIST, "duplicate node id '%s'", id);
	if (kind == INART_NODE_HOST && ina)
		return inart_err_set(err, -EINVAL, "node '%s': a host cannot be INA-capable", id);
	if (ina && !(agg_gbps > 0 && isfinite(agg_gbps)))
		return inart_err_set(err, -EINVAL,
				     "switch '%s': aggregation throughput must be > 0 Gbit/s", id);
	if (ina && trees < 0)
		return inart_err_set(err, -EINVAL, "switch '%s': tree budget must be >= 0", id);
	/* room first (the node, its id, a free half of the index): a failure
	 * leaves the topology as it was */
	if (inart_grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes, sizeof(*t->nodes), 64) < 0 ||
	    (2 * (t->n_nodes + 1) > t->index_size &&
	     index_rebuild(t, t->index_size ? 2 * t->index_size : 64) < 0) ||
	    (copy = inart_strpool_dup(&t->ids, id)) == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	t->nodes[t->n_nodes] = (struct inart_node){
	    .id = copy,
	    .kind = kind,
	    .ina = ina ? 1 : 0,
	    .agg_gbps = ina ? agg_gbps : 0,
	    .trees = ina ? trees : 0,
	};
	index_insert(t, t->n_nodes);
	t->finalized = 0;
	return t->n_nodes++;
}

static int check_dir(const struct inart_topo *t, int a, int b, double gbps, double bg,
		     struct inart_err *err)
{
	const char *ia = t->nodes[a].id, *ib = t->nodes[b].id;

	if (!(gbps > 0) || !isfinite(gbps))
		return inart_err_set(err, -EINVAL,
				     "link %s-%s: capacity %s->%s must be > 0 Gbit/s (got %g)", ia,
				     ib, ia, ib, gbps);
	if (!(bg >= 0) || !isfinite(bg))
		return inart_err_set(err, -EINVAL,
				     "link %s-%s: background %s->%s must be >= 0 Gbit/s (got %g)",
				     ia, ib, ia, ib, bg);
	if (bg > gbps)
		return inart_err_set(
		    err, -EINVAL,
		    "link %s-%s: background %s->%s (%g Gbit/s) is above the capacity (%g Gbit/s)",
		    ia, ib, ia, ib, bg, gbps);
	return 0;
}

int inart_topo_add_link(struct inart_topo *t, int a, int b, double ab_gbps, double ba_gbps,
			double bg_ab_gbps, double bg_ba_gbps, struct inart_err *err)
{
	int rc;

	if (a < 0 || b < 0 || a >= t->n_nodes || b >= t->n_nodes)
		return inart_err_set(err, -EINVAL, "link to an unknown node");
	if (a == b)
		return inart_err_set(err, -EINVAL, "link %s-%s joins a node to itself",
				     t->nodes[a].id, t->nodes[b].id);
	rc = check_dir(t, a, b, ab_gbps, bg_ab_gbps, err);
	if (rc == 0)
		rc = check_dir(t, b, a, ba_gbps, bg_ba_gbps, err);
	if (rc < 0)
		return rc;
	/* Two arcs per link. */
	if (inart_grow((void **)&t->arcs, &t->cap_links, t->n_links, 2 * sizeof(*t->arcs), 64) < 0)
		return inart_err_set(err, -ENOMEM, "out of memory");
	t->arcs[2 * t->n_links] = (struct inart_arc){a, b, ab_gbps, bg_ab_gbps};
	t->arcs[2 * t->n_links + 1] = (struct inart_arc){b, a, ba_gbps, bg_ba_gbps};
	t->finalized = 0;
	return t->n_links++;
}

/* Insertion sort of arcs[lo..hi) by head node: degrees are small. */
static void sort_by_head(const struct inart_topo *t, int *arcs, int n)
{
	for (int i = 1; i < n; i++) {
		int e = arcs[i], j = i;

		while (j > 0 && t->arcs[arcs[j - 1]].to > t->arcs[e].to) {
			arcs[j] = arcs[j - 1];
			j--;
		}
		arcs[j] = e;
	}
}

/* The adjacency in one block: out_off (n_nodes + 1 entries), arc_out
 * (2 * n_links + 1). */
static void adj_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_topo *t = obj;

	t->out_off = inart_slab_take(s, (size_t)t->n_nodes + 1, sizeof(*t->out_off));
	t->arc_out = inart_slab_take(s, 2 * (size_t)t->n_links + 1, sizeof(*t->arc_out));
}

int inart_topo_finalize(struct inart_topo *t, struct inart_err *err)
{
	int n = t->n_nodes, m = 2 * t->n_links;
	int *off, *out, *fill = NULL;
	int rc = 0;

	free(t->adj);
	t->finalized = 0;
	t->adj = inart_slab_block(t, adj_lay_out);
	off = t->out_off;
	out = t->arc_out;
	if (t->adj == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (int e = 0; e < m; e++)
		off[t->arcs[e].from + 1]++;
	for (int v = 0; v < n; v++)
		off[v + 1] += off[v];
	fill = malloc(sizeof(*fill) * (size_t)(n ? n : 1));
	if (fill == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(fill, off, sizeof(*fill) * (size_t)n);
	for (int e = 0; e < m; e++)
		out[fill[t->arcs[e].from]++] = e;
	/* Sort each node's arcs by head to find parallel links; the order also
	 * makes path searches deterministic. */
	for (int v = 0; v < n; v++) {
		sort_by_head(t, out + off[v], off[v + 1] - off[v]);
		for (int i = off[v] + 1; i < off[v + 1]; i++) {
			if (t->arcs[out[i]].to == t->arcs[out[i - 1]].to) {
				rc = inart_err_set(err, -EINVAL, "duplicate link %s-%s",
						   t->nodes[v].id, t->nodes[t->arcs[out[i]].to].id);
				goto out;
			}
		}
	}
	t->finalized = 1;
out:
	free(fill);
	return rc;
}

int inart_topo_arc_between(const struct inart_topo *t, int u, int v)
{
	int lo = t->out_off[u], hi = t->out_off[u + 1] - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, h = t->arcs[t->arc_out[mid]].to;

		if (h == v)
			return t->arc_out[mid];
		if (h < v)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}
