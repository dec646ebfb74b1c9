/*
 * ctlstats: the counter tables of the switch and PS stats structs and their
 * JSON forms (see ctlstats.h).
 */
#include "ctlproto/ctlstats.h"

#include <stddef.h>
#include <string.h>

static json_t *ju64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* The counter tables (ctlmsg.h): every uint64_t counter of each struct, in
 * the struct's order.  tests/test_ctlmsg.c fills every word of the structs
 * with a distinct value and checks that each one comes out under its name,
 * so a counter added to a struct but not here fails the unit tests. */
#define C(type, field)                                                                             \
	{                                                                                          \
#field, offsetof(struct type, field)                                               \
	}
const struct inart_ctl_counter inart_ctl_sw_port_counters[] = {
    C(inart_sw_port_stats, rx_pkts),	  C(inart_sw_port_stats, rx_bytes),
    C(inart_sw_port_stats, tx_pkts),	  C(inart_sw_port_stats, tx_bytes),
    C(inart_sw_port_stats, rx_ina_bytes), C(inart_sw_port_stats, tx_ina_bytes),
};
const struct inart_ctl_counter inart_ctl_sw_tree_counters[] = {
    C(inart_sw_tree_stats, aggregated), C(inart_sw_tree_stats, emitted),
    C(inart_sw_tree_stats, partial),	C(inart_sw_tree_stats, early),
    C(inart_sw_tree_stats, fallback),	C(inart_sw_tree_stats, duplicates),
    C(inart_sw_tree_stats, results),	C(inart_sw_tree_stats, repaired),
    C(inart_sw_tree_stats, answered),	C(inart_sw_tree_stats, overflows),
};
const struct inart_ctl_counter inart_ctl_ps_counters[] = {
    C(inart_ps_stats, rx),
    C(inart_ps_stats, absorbed),
    C(inart_ps_stats, duplicates),
    C(inart_ps_stats, completed),
    C(inart_ps_stats, results_sent),
    C(inart_ps_stats, retx_answered),
    C(inart_ps_stats, overflows),
    C(inart_ps_stats, dropped),
    C(inart_ps_stats, drop_malformed),
    C(inart_ps_stats, drop_unknown),
    C(inart_ps_stats, drop_mismatch),
    C(inart_ps_stats, drop_stale),
    C(inart_ps_stats, drop_limit),
    C(inart_ps_stats, drop_source),
    C(inart_ps_stats, drop_window),
    C(inart_ps_stats, out_full),
    C(inart_ps_stats, rescales),
    C(inart_ps_stats, notices),
    C(inart_ps_stats, replaced),
    C(inart_ps_stats, nacks),
    C(inart_ps_stats, probes),
    C(inart_ps_stats, probe_nacks),
    C(inart_ps_stats, resent_down),
    C(inart_ps_stats, answers_held),
    C(inart_ps_stats, restarts),
    C(inart_ps_stats, step_notices),
    C(inart_ps_stats, restart_held),
};
#undef C
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
const int inart_ctl_n_sw_port_counters = N_OF(inart_ctl_sw_port_counters);
const int inart_ctl_n_sw_tree_counters = N_OF(inart_ctl_sw_tree_counters);
const int inart_ctl_n_ps_counters = N_OF(inart_ctl_ps_counters);
#undef N_OF

static uint64_t counter_get(const void *st, const struct inart_ctl_counter *c)
{
	uint64_t v;

	memcpy(&v, (const char *)st + c->off, sizeof(v));
	return v;
}

void inart_ctl_counters_sub(void *st, const void *base, const struct inart_ctl_counter *tab, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = counter_get(st, &tab[i]) - counter_get(base, &tab[i]);

		memcpy((char *)st + tab[i].off, &v, sizeof(v));
	}
}

/* Add the counters of st named in tab to the object o. */
static void counters_json(json_t *o, const void *st, const struct inart_ctl_counter *tab, int n)
{
	for (int i = 0; i < n; i++)
		json_object_set_new(o, tab[i].name, ju64(counter_get(st, &tab[i])));
}

json_t *inart_ctl_sw_stats_json(const uint64_t *drops, const struct inart_sw_port_stats *ports,
				int n_ports, const char *const *names,
				const struct inart_sw_tree_stats *trees, int n_trees)
{
	json_t *o = json_object(), *d = json_object(), *pa = json_array(), *ta = json_array();

	for (int i = 0; i < INART_DROP_N; i++)
		json_object_set_new(d, inart_switch_drop_name(i), ju64(drops[i]));
	for (int i = 0; i < n_ports; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "port", json_integer(i));
		if (names != NULL && names[i] != NULL)
			json_object_set_new(p, "name", json_string(names[i]));
		counters_json(p, &ports[i], inart_ctl_sw_port_counters,
			      inart_ctl_n_sw_port_counters);
		json_array_append_new(pa, p);
	}
	for (int i = 0; i < n_trees; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "job", json_integer(trees[i].job));
		json_object_set_new(p, "tree", json_integer(trees[i].tree));
		counters_json(p, &trees[i], inart_ctl_sw_tree_counters,
			      inart_ctl_n_sw_tree_counters);
		json_array_append_new(ta, p);
	}
	json_object_set_new(o, "drops", d);
	json_object_set_new(o, "ports", pa);
	json_object_set_new(o, "trees", ta);
	return o;
}

json_t *inart_ctl_ps_stats_json(const struct inart_ps_stats *st)
{
	json_t *o = json_object();

	counters_json(o, st, inart_ctl_ps_counters, inart_ctl_n_ps_counters);
	return o;
}

json_t *inart_ctl_sw_port_counters_json(const struct inart_sw_port_stats *ports, int n_ports)
{
	json_t *o = json_object(), *pa = json_array();

	for (int i = 0; i < n_ports; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "port", json_integer(i));
		counters_json(p, &ports[i], inart_ctl_sw_port_counters,
			      inart_ctl_n_sw_port_counters);
		json_array_append_new(pa, p);
	}
	json_object_set_new(o, "ports", pa);
	return o;
}
