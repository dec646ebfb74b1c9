/*
 * ctlstats: the counters of the switch's and the PS's stats structs, each a
 * uint64_t at offset off, with its JSON key (= the field's name).  The stats
 * serializers below walk these tables, `inart ctl stats` prints them, and
 * the daemons take their reset baselines with inart_ctl_counters_sub;
 * tests/test_ctlmsg.c checks that every counter word of each struct is in
 * its table.  Pure, no I/O.
 */
#ifndef INART_CTLSTATS_H
#define INART_CTLSTATS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/ps.h"
#include "dp/switch.h"

struct inart_ctl_counter {
	const char *name;
	size_t off;
};
extern const struct inart_ctl_counter inart_ctl_sw_port_counters[]; /* inart_sw_port_stats */
extern const struct inart_ctl_counter inart_ctl_sw_tree_counters[]; /* inart_sw_tree_stats */
extern const struct inart_ctl_counter inart_ctl_ps_counters[];	    /* inart_ps_stats */
extern const int inart_ctl_n_sw_port_counters, inart_ctl_n_sw_tree_counters,
    inart_ctl_n_ps_counters;
/* st->counter -= base->counter for the n counters of tab (st and base: two
 * structs of the table's type). */
void inart_ctl_counters_sub(void *st, const void *base, const struct inart_ctl_counter *tab, int n);

/* Switch counters as JSON: {"drops": {name: n}, "ports": [{"port", "name",
 * counters}], "trees": [{"job", "tree", counters}]}; names: per-port names
 * (may be NULL).  PS counters: {counter: n}.  Counters above INT64_MAX are
 * clamped to it. */
json_t *inart_ctl_sw_stats_json(const uint64_t *drops, const struct inart_sw_port_stats *ports,
				int n_ports, const char *const *names,
				const struct inart_sw_tree_stats *trees, int n_trees);
json_t *inart_ctl_ps_stats_json(const struct inart_ps_stats *st);

/* The ports of a switch's stats alone (the reply of port_counters):
 * {"ports": [{"port", counters}]}, the same per-port objects as
 * inart_ctl_sw_stats_json without names. */
json_t *inart_ctl_sw_port_counters_json(const struct inart_sw_port_stats *ports, int n_ports);

#endif
