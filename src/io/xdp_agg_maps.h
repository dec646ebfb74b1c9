/*
 * xdp_agg_maps: fills the maps of the XDP aggregation program
 * (bpf/xdp_agg.bpf.c, layouts in io/xdp_agg.h) from a switch core's
 * configuration and current tables, so that the program and the core
 * (dp/switch) work from the same label table and ingress table.
 *
 * Read from the core: inart_switch_get_labels, inart_switch_get_ingress,
 * inart_switch_peer_mac, inart_switch_stats (tree order).  Written: the
 * program's configuration, ports, ifindex -> port, DEVMAP, labels (every
 * label; those not in the table any more are deleted) and ingress maps.
 * The per-CPU state maps (slots, progress, trees) are sized before load
 * with inart_xdp_agg_maps_sizes and start zero.  An install while traffic
 * flows is not mirrored into the kernel's slots and progress (the core's
 * inart_switch_tables_swap frees orphaned slots; nothing here does yet).
 */
#ifndef INART_XDP_AGG_MAPS_H
#define INART_XDP_AGG_MAPS_H

#include <stdint.h>

#include "common/err.h"
#include "dp/switch.h"

/* The file descriptors of the program's maps (bpf_map__fd of the skeleton). */
struct inart_xdp_agg_fds {
	int cfg, ports, ifports, devs, labels, ingress;
};

/* inart_xdp_agg_maps_fill_opt's options (0 / NULL: none): the state maps'
 * sizes, an entry that does not fit them is left to the core (kernel 0);
 * tree_keys[i] = job << 16 | tree gives the tree i of xa_trees (else: the
 * core's tree order); n_kernel (if not NULL) gets how many entries the
 * program was given (kernel 1). */
struct inart_xdp_agg_fill_opt {
	uint32_t cap_slots, cap_ranks, cap_trees;
	const uint64_t *tree_keys;
	int n_tree_keys;
	int *n_kernel;
};

/* The sizes the per-CPU state maps need for sw's tables and cfg: pool
 * slots, rank progress records, trees (each at least 1).  0 or -errno. */
int inart_xdp_agg_maps_sizes(const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
			     uint32_t *slots, uint32_t *ranks, uint32_t *trees);

/* Fill the maps from cfg and sw's current tables; ifindex[p] is port p's
 * interface (0: none); xa_cfg's gen, lose_gen and n_ranks are kept.  0, or -errno with the map and
 * key at fault in err
 * (-EOPNOTSUPP in a build without libbpf). */
int inart_xdp_agg_maps_fill(const struct inart_xdp_agg_fds *fds, const struct inart_sw_cfg *cfg,
			    const struct inart_switch *sw, const uint32_t *ifindex,
			    struct inart_err *err);
/* The same with options (o NULL: none). */
int inart_xdp_agg_maps_fill_opt(const struct inart_xdp_agg_fds *fds,
				const struct inart_xdp_agg_fill_opt *o,
				const struct inart_sw_cfg *cfg, const struct inart_switch *sw,
				const uint32_t *ifindex, struct inart_err *err);

#endif
