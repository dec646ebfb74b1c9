/*
 * xdp_agg_maps: the XDP aggregation program's maps from a switch core's
 * configuration and tables (xdp_agg_maps.h).  Allocates the tables' copies
 * it reads for the duration of a call; never on a packet path.
 */
#include "io/xdp_agg_maps.h"

#include <errno.h>

#ifndef INART_HAVE_XDP

int inart_xdp_agg_maps_sizes(const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
			     uint32_t *slots, uint32_t *ranks, uint32_t *trees)
{
	return -EOPNOTSUPP;
}

int inart_xdp_agg_maps_fill(const struct inart_xdp_agg_fds *fds, const struct inart_sw_cfg *cfg,
			    const struct inart_switch *sw, const uint32_t *ifindex,
			    struct inart_err *err)
{
	return inart_err_set(err, -EOPNOTSUPP, "xdp_agg: this inart was built without libbpf");
}

int inart_xdp_agg_maps_fill_opt(const struct inart_xdp_agg_fds *fds,
				const struct inart_xdp_agg_fill_opt *o,
				const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
				const uint32_t *ifindex, struct inart_err *err)
{
	return inart_xdp_agg_maps_fill(fds, cfg, sw, ifindex, err);
}

#else

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "io/xdp_agg.h"

/* The label entries of sw (malloc'ed, *n of them), NULL + errno. */
static struct inart_label_entry *labels_of(const struct inart_switch *sw, int *n)
{
	int k = inart_switch_get_labels(sw, NULL, 0);
	struct inart_label_entry *le = calloc((size_t)(k > 0 ? k : 1), sizeof(*le));

	if (le == NULL)
		return NULL;
	*n = inart_switch_get_labels(sw, le, k);
	return le;
}

static uint32_t expected_ranks(const struct inart_label_entry *l)
{
	uint32_t n = 0;

	if (l->kind != INART_LABEL_UP || !l->aggregate || l->expected == NULL)
		return 0;
	for (int w = 0; w < l->bitmap_words; w++)
		n += (uint32_t)__builtin_popcountll(l->expected[w]);
	return n;
}

/* Progress records of l in xa_progress: one per expected rank, then the
 * entry's clock (dp/switch.c ranks_note; bpf/xdp_agg.bpf.c xa_note). */
static uint32_t progress_records(const struct inart_label_entry *l)
{
	uint32_t n = expected_ranks(l);

	return n > 0 ? n + 1 : 0;
}

int inart_xdp_agg_maps_sizes(const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
			     uint32_t *slots, uint32_t *ranks, uint32_t *trees)
{
	struct inart_label_entry *le;
	int n = 0, nt;
	uint32_t r = 0;

	if (cfg == NULL || sw == NULL)
		return -EINVAL;
	le = labels_of(sw, &n);
	if (le == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		r += progress_records(&le[i]);
	free(le);
	nt = inart_switch_stats(sw, NULL, NULL, NULL, 0);
	*slots = cfg->pool_slots > 0 ? (uint32_t)cfg->pool_slots : 1;
	*ranks = r > 0 ? r : 1;
	*trees = nt > 0 ? (uint32_t)nt : 1;
	return 0;
}

/* The index of (job, tree) in the core's tree list (sorted), -1. */
static int tree_index(const struct inart_sw_tree_stats *ts, int n, uint32_t job, uint16_t tree)
{
	for (int i = 0; i < n; i++)
		if (ts[i].job == job && ts[i].tree == tree)
			return i;
	return -1;
}

static int put(int fd, const void *k, const void *v, const char *map, uint32_t key,
	       struct inart_err *err)
{
	if (bpf_map_update_elem(fd, k, v, BPF_ANY) < 0)
		return inart_err_set(err, -errno, "xdp_agg: map %s, key %u: %s", map, key,
				     strerror(errno));
	return 0;
}

static int fill_ports(const struct inart_xdp_agg_fds *fds, const struct inart_sw_cfg *cfg,
		      const struct inart_switch *sw, const uint32_t *ifindex, struct inart_err *err)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct inart_xa_cfg xc = {
	    .max_values =
		(uint32_t)(cfg->max_values > 0 ? cfg->max_values : inart_wire_max_values(1)),
	    .n_ports = (uint32_t)cfg->n_ports,
	    .n_slots = (uint32_t)(cfg->pool_slots > 0 ? cfg->pool_slots : 1),
	    .timeout_ns = cfg->flush_timeout_ns};
	struct inart_xa_cfg old;
	uint32_t zero = 0;
	int rc;

	if (bpf_map_lookup_elem(fds->cfg, &zero, &old) == 0) { /* switchd's (io/xagg) */
		xc.gen = old.gen;
		xc.lose_gen = old.lose_gen;
		xc.n_ranks = old.n_ranks;
		xc.tables = old.tables;
	}
	rc = put(fds->cfg, &zero, &xc, "xa_cfg", 0, err);

	for (uint32_t p = 0; rc == 0 && p < (uint32_t)cfg->n_ports; p++) {
		const struct inart_sw_port_cfg *pc = &cfg->ports[p];
		struct inart_xa_port xp = {.ip = pc->ip, .peer_ip = pc->peer_ip};
		static const uint8_t zmac[6];

		memcpy(xp.mac, pc->mac, 6);
		if (inart_switch_peer_mac(sw, (int)p, xp.peer_mac) < 0)
			memcpy(xp.peer_mac, bcast, 6);
		xp.peer_fixed = memcmp(pc->peer_mac, zmac, 6) != 0;
		rc = put(fds->ports, &p, &xp, "xa_ports", p, err);
		if (rc == 0 && ifindex != NULL && ifindex[p] != 0) {
			rc = put(fds->ifports, &ifindex[p], &p, "xa_ifports", ifindex[p], err);
			if (rc == 0)
				rc = put(fds->devs, &p, &ifindex[p], "xa_devs", p, err);
		}
	}
	return rc;
}

/* The compiled entry of l; rk: its first progress record. */
static void ent_of(struct inart_xa_ent *x, const struct inart_label_entry *l, int tidx, uint32_t rk)
{
	memset(x, 0, sizeof(*x));
	x->label = l->label;
	x->job = l->job;
	x->next_label = l->next_label;
	x->tree = l->tree;
	x->out_port = l->out_port;
	x->slot_base = l->slot_base;
	x->n_slots = l->n_slots;
	x->kind = l->kind;
	x->aggregate = l->aggregate;
	x->bitmap_words = l->bitmap_words;
	x->tree_idx = (uint32_t)(tidx >= 0 ? tidx : 0);
	x->in_ports = l->in_ports;
	x->rk_off = rk;
	if (l->kind != INART_LABEL_UP || !l->aggregate || l->expected == NULL)
		return;
	memcpy(x->expected, l->expected, 8 * (size_t)l->bitmap_words);
	for (int r = 0; r < 64 * l->bitmap_words; r++) {
		if (!(l->expected[r / 64] >> (r % 64) & 1))
			continue;
		if (x->n_exp < INART_XA_MAX_EXPECTED)
			x->exp_rank[x->n_exp] = (uint16_t)r;
		x->n_exp++;
	}
	/* the program handles the entry if its loops cover the subtree */
	x->kernel = tidx >= 0 && x->n_exp <= INART_XA_MAX_EXPECTED && l->n_slots > 0;
}

/* The first aggregating UP entry of (job, tree) in table order (the core's
 * up_of), its label or 0. */
static uint32_t up_label(const struct inart_label_entry *le, int n, uint32_t job, uint16_t tree)
{
	for (int i = 0; i < n; i++)
		if (le[i].kind == INART_LABEL_UP && le[i].aggregate && le[i].job == job &&
		    le[i].tree == tree)
			return le[i].label;
	return 0;
}

/* The tree index of (job, tree) in xa_trees: fds' keys, else the core's order. */
static int tree_of(const struct inart_xdp_agg_fill_opt *fds, const struct inart_sw_tree_stats *ts,
		   int n, uint32_t job, uint16_t tree)
{
	if (fds->tree_keys == NULL)
		return tree_index(ts, n, job, tree);
	for (int i = 0; i < fds->n_tree_keys; i++)
		if (fds->tree_keys[i] == ((uint64_t)job << 16 | tree))
			return i;
	return -1;
}

/* Delete the labels of the map that le does not hold. */
static int prune_labels(int fd, const struct inart_label_entry *le, int n, struct inart_err *err)
{
	uint32_t key, next;
	int first = 1;

	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		int keep = 0;

		for (int i = 0; i < n && !keep; i++)
			keep = le[i].label == next;
		if (!keep && bpf_map_delete_elem(fd, &next) < 0)
			return inart_err_set(err, -errno, "xdp_agg: deleting label %u: %s", next,
					     strerror(errno));
		if (keep) {
			key = next;
			first = 0;
		}
	}
	return 0;
}

int inart_xdp_agg_maps_fill(const struct inart_xdp_agg_fds *fds, const struct inart_sw_cfg *cfg,
			    const struct inart_switch *sw, const uint32_t *ifindex,
			    struct inart_err *err)
{
	return inart_xdp_agg_maps_fill_opt(fds, NULL, cfg, sw, ifindex, err);
}

/* xa_cfg after the labels: tables bumped (each CPU's cached label entries
 * are refetched), scan_slots the end of the highest kernel UP entry's slot
 * range.  The tick scans the slots below it: every kernel
 * entry's slots lie there, and so does every busy kernel slot once each
 * CPU's state follows the install's generation (drop_orphan_slots). */
static int put_scan(int cfd, uint32_t scan, uint32_t tables, struct inart_err *err)
{
	struct inart_xa_cfg xc;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(cfd, &zero, &xc) < 0)
		return inart_err_set(err, -errno, "xdp_agg: map xa_cfg, key 0: %s",
				     strerror(errno));
	xc.scan_slots = scan;
	xc.tables = tables; /* the labels carry it: cached older copies go */
	return put(cfd, &zero, &xc, "xa_cfg", 0, err);
}

int inart_xdp_agg_maps_fill_opt(const struct inart_xdp_agg_fds *fds,
				const struct inart_xdp_agg_fill_opt *o,
				const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
				const uint32_t *ifindex, struct inart_err *err)
{
	static const struct inart_xdp_agg_fill_opt none;
	uint32_t scan = 0, tables = 1, zero_key = 0; /* the highest kernel range end; new tables */
	struct inart_xa_cfg xc;
	struct inart_label_entry *le = NULL;
	struct inart_sw_tree_stats *ts = NULL;
	struct inart_sw_ingress *ing = NULL;
	int n = 0, nt, ni, rc;
	uint32_t rk = 0;

	if (fds == NULL || cfg == NULL || sw == NULL)
		return inart_err_set(err, -EINVAL, "xdp_agg: no maps, configuration or switch");
	if (o == NULL)
		o = &none;
	rc = fill_ports(fds, cfg, sw, ifindex, err);
	if (rc < 0)
		return rc;
	if (bpf_map_lookup_elem(fds->cfg, &zero_key, &xc) == 0)
		tables = xc.tables + 1;
	le = labels_of(sw, &n);
	nt = inart_switch_stats(sw, NULL, NULL, NULL, 0);
	ts = calloc((size_t)(nt > 0 ? nt : 1), sizeof(*ts));
	ni = inart_switch_get_ingress(sw, NULL, 0);
	ing = calloc((size_t)(ni > 0 ? ni : 1), sizeof(*ing));
	if (le == NULL || ts == NULL || ing == NULL) {
		rc = inart_err_set(err, -ENOMEM, "xdp_agg: copying the tables: out of memory");
		goto out;
	}
	nt = inart_switch_stats(sw, NULL, NULL, ts, nt);
	ni = inart_switch_get_ingress(sw, ing, ni);
	if (o->n_kernel != NULL)
		*o->n_kernel = 0;
	rc = prune_labels(fds->labels, le, n, err);
	for (int i = 0; rc == 0 && i < n; i++) {
		struct inart_xa_ent x;

		ent_of(&x, &le[i], tree_of(o, ts, nt, le[i].job, le[i].tree), rk);
		x.tables = tables;
		if ((o->cap_slots && (uint32_t)x.slot_base + x.n_slots > o->cap_slots) ||
		    (o->cap_ranks && rk + progress_records(&le[i]) > o->cap_ranks) ||
		    (o->cap_trees && x.tree_idx >= o->cap_trees))
			x.kernel = 0; /* does not fit the kernel's state: the core's */
		if (le[i].kind == INART_LABEL_DOWN)
			x.up_label = up_label(le, n, le[i].job, le[i].tree);
		rk += progress_records(&le[i]);
		if (x.kernel && o->n_kernel != NULL)
			(*o->n_kernel)++;
		if (x.kernel && x.kind == INART_LABEL_UP &&
		    (uint32_t)x.slot_base + x.n_slots > scan)
			scan = (uint32_t)x.slot_base + x.n_slots;
		rc = put(fds->labels, &x.label, &x, "xa_labels", x.label, err);
	}
	if (rc == 0)
		rc = put_scan(fds->cfg, scan, tables, err);
	for (int i = 0; rc == 0 && i < ni; i++) {
		struct inart_xa_ing_key k = {ing[i].port, ing[i].job};
		uint32_t r = ing[i].rank;

		rc = put(fds->ingress, &k, &r, "xa_ingress", ing[i].port, err);
	}
out:
	free(le);
	free(ts);
	free(ing);
	return rc;
}

#endif
