/*
 * switchd_ctl: what `inart switchd` does for each control request
 * (switchd_ctl.h): info, tables, stats and port counters as JSON, installs
 * built aside and put in service through ctlproto/txn, counters reset, state
 * dropped.  Runs in the control thread; whatever touches the core's mutable
 * state, the gate or the sockets is a command (cmd_*) that the packet thread
 * runs between two batches (inart_ctlthread_call), so that thread stays the
 * only writer of what it owns.
 *
 * Ownership: an install's object (struct sw_obj: a new core or a table set,
 * with the gate's labels) belongs to the control thread until cmd_swap puts
 * its contents in service; what goes out of service comes back in a new
 * object, kept by ctlproto/txn for a rollback and destroyed by
 * inart_switchd_obj_destroy.
 */
#include "daemon/switchd_ctl.h"
#include "daemon/switchd_shape.h"
#include "daemon/switchd_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlproto/ctlmsg.h"
#include "common/clock.h"
#include "dp/gate.h"
#include "daemon/switchd_workers.h"
#include "dp/pkt.h"
#include "io/log.h"
#include "io/xagg.h"

/* What an install puts in service: a new core (with its configuration), or a
 * table set for the core in service (one per shard: dp/shard). */
struct sw_obj {
	struct inart_shards *core;
	struct inart_sw_cfg cfg;
	struct inart_shard_tables *tab;
	uint32_t *agg; /* with a gate: its aggregating labels (inart_gate_agg_labels_of) */
	int n_agg;
};

/* Current tree counters (malloc'ed, *n), summed over the shards; NULL with
 * *n = 0 if none. */
static struct inart_sw_tree_stats *tree_stats(const struct inart_shards *sw, uint64_t *drops,
					      struct inart_sw_port_stats *ports, int *n)
{
	int cap = 64, k;
	struct inart_sw_tree_stats *t = NULL;

	for (;;) {
		struct inart_sw_tree_stats *nt = realloc(t, (size_t)cap * sizeof(*t));

		if (nt == NULL) {
			free(t);
			*n = 0;
			inart_shards_stats(sw, drops, ports, NULL, 0);
			return NULL;
		}
		t = nt;
		k = inart_shards_stats(sw, drops, ports, t, cap);
		if (k <= cap)
			break;
		cap = k;
	}
	*n = k;
	return t;
}

/* Shard sw's counters into *c: drops, frames received and sent (all
 * ports), its tree counters (malloc'ed; none on ENOMEM). */
static void shard_count(const struct inart_switch *sw, struct sw_shard_count *c)
{
	struct inart_sw_port_stats p[INART_SW_MAX_PORTS];
	int n;

	memset(p, 0, sizeof(p)); /* the ports it has are filled */
	n = inart_switch_stats(sw, c->drops, p, NULL, 0);
	c->rx_pkts = c->tx_pkts = 0;
	for (int i = 0; i < INART_SW_MAX_PORTS; i++) {
		c->rx_pkts += p[i].rx_pkts;
		c->tx_pkts += p[i].tx_pkts;
	}
	c->trees = n > 0 ? calloc((size_t)n, sizeof(*c->trees)) : NULL;
	c->n_trees = c->trees != NULL ? inart_switch_stats(sw, c->drops, p, c->trees, n) : 0;
}

static void shard_counts_free(struct sw_shard_count *c, int n)
{
	for (int k = 0; k < n; k++) {
		free(c[k].trees);
		memset(&c[k], 0, sizeof(c[k]));
	}
}

/* ---- commands (run in the packet thread) ---- */

static void cmd_reset_stats(void *arg)
{
	struct sw_state *s = arg;

	shard_counts_free(s->base_shard, INART_SHARD_MAX);
	for (int k = 0; k < inart_shards_n(s->sh); k++)
		shard_count(inart_shards_core_c(s->sh, k), &s->base_shard[k]);
	free(s->base_trees);
	s->base_trees = tree_stats(s->sh, s->base_drops, s->base_ports, &s->n_base_trees);
	inart_switchd_io_agg_trees(s, s->base_trees, s->n_base_trees, s->base_drops);
	inart_switchd_io_port_stats(s, s->base_ports);
	for (int i = 0; i < s->n_ports; i++)
		inart_switchd_port_stats(s, i, &s->base_afp[i]);
}

/* A new core: its counters start at zero (socket counters go on). */
static void stats_zero(struct sw_state *s)
{
	free(s->base_trees);
	s->base_trees = NULL;
	s->n_base_trees = 0;
	shard_counts_free(s->base_shard, INART_SHARD_MAX);
	memset(s->base_drops, 0, sizeof(s->base_drops));
	memset(s->base_ports, 0, sizeof(s->base_ports));
	if (s->xagg != NULL) { /* the kernel's tree counters go on too */
		uint64_t d[INART_DROP_N];
		struct inart_sw_port_stats p[INART_SW_MAX_PORTS];

		s->base_trees = tree_stats(s->sh, d, p, &s->n_base_trees); /* zero */
		inart_switchd_io_agg_trees(s, s->base_trees, s->n_base_trees, s->base_drops);
	}
	inart_switchd_io_port_stats(s, s->base_ports); /* the program's go on */
	for (int i = 0; i < s->n_ports; i++)
		inart_switchd_port_stats(s, i, &s->base_afp[i]);
}

struct swap_cmd {
	struct sw_state *s;
	struct sw_obj *in, *out;
};

/* Put c->in in service; what it replaces goes to c->out (the gate's label
 * set with the tables it was built from: a rollback brings both back). */
static void cmd_swap(void *arg)
{
	struct swap_cmd *c = arg;
	struct sw_state *s = c->s;

	if (c->in->core != NULL) {
		c->out->core = s->sh;
		s->sh = c->in->core;
		stats_zero(s);
	} else {
		/* every shard at once: the other workers are parked */
		c->out->tab = inart_shards_tables_swap(s->sh, c->in->tab);
	}
	/* --agg kernel: the program's tables and generation in the same command
	   (a new core: the kernel's slots and progress start afresh too) */
	inart_switchd_io_agg_sync(s, c->in->core != NULL ? &c->in->cfg : &s->cfg,
				  inart_shards_core(s->sh, 0));
	if (c->in->core != NULL && s->xagg != NULL && inart_xagg_reset(s->xagg) < 0)
		inart_log_warn("--agg kernel: the kernel's state not reset for the new core");
	if (s->gate != NULL) {
		inart_gate_swap_agg_labels(s->gate, &c->in->agg, &c->in->n_agg);
		c->out->agg = c->in->agg;
		c->out->n_agg = c->in->n_agg;
		c->in->agg = NULL;
	}
}

struct lose_cmd {
	struct sw_state *s;
	int busy;
};

static void cmd_lose_state(void *arg)
{
	struct lose_cmd *c = arg;

	c->busy = inart_shards_lose_state(c->s->sh);
	if (c->s->xagg != NULL)
		c->busy += inart_xagg_lose(c->s->xagg); /* the kernel's slots too */
}

/* The counters since the last reset (the gate's: since start). */
struct stats_cmd {
	struct sw_state *s;
	struct inart_gate_stats gate;
	uint64_t drops[INART_DROP_N];
	struct inart_sw_port_stats ports[INART_SW_MAX_PORTS];
	struct inart_afp_stats afp[INART_SW_MAX_PORTS];
	struct inart_sw_tree_stats *trees;
	int n;
	uint64_t shard_rx[INART_SHARD_MAX]; /* frames each shard received, since start */
	struct inart_shaper_stats shape[INART_SW_MAX_PORTS]; /* --shape, since start */
	/* per_shard (stats): each shard's counters since the last reset, the
	   slots it aggregates in now */
	int per_shard;
	struct sw_shard_count sh[INART_SHARD_MAX];
	int busy[INART_SHARD_MAX];
};

/* c - base: counters, and trees matched by (job, tree). */
static void shard_count_sub(struct sw_shard_count *c, const struct sw_shard_count *b)
{
	for (int i = 0; i < INART_DROP_N; i++)
		c->drops[i] -= b->drops[i];
	c->rx_pkts -= b->rx_pkts;
	c->tx_pkts -= b->tx_pkts;
	for (int i = 0; i < c->n_trees; i++)
		for (int j = 0; j < b->n_trees; j++)
			if (b->trees[j].job == c->trees[i].job &&
			    b->trees[j].tree == c->trees[i].tree)
				inart_ctl_counters_sub(&c->trees[i], &b->trees[j],
						       inart_ctl_sw_tree_counters,
						       inart_ctl_n_sw_tree_counters);
}

static void cmd_stats(void *arg)
{
	struct stats_cmd *c = arg;
	struct sw_state *s = c->s;

	c->trees = tree_stats(s->sh, c->drops, c->ports, &c->n);
	inart_switchd_io_agg_trees(s, c->trees, c->n, c->drops); /* --agg kernel */
	for (int k = 0; k < inart_shards_n(s->sh); k++) {
		struct inart_sw_port_stats p[INART_SW_MAX_PORTS];

		inart_switch_stats(inart_shards_core(s->sh, k), NULL, p, NULL, 0);
		for (int i = 0; i < s->n_ports; i++)
			c->shard_rx[k] += p[i].rx_pkts;
		if (c->per_shard) {
			shard_count(inart_shards_core_c(s->sh, k), &c->sh[k]);
			shard_count_sub(&c->sh[k], &s->base_shard[k]);
			c->busy[k] = inart_switch_slots_busy(inart_shards_core_c(s->sh, k));
		}
	}
	inart_switchd_io_port_stats(s, c->ports);     /* forwarded by the XDP program */
	inart_switchd_gate_stats(s, &c->gate);	      /* every worker's */
	inart_switchd_io_agg_gate_stats(s, &c->gate); /* --agg-mbps in the kernel */
	inart_switchd_shape_stats(s, c->shape);
	for (int i = 0; i < INART_DROP_N; i++)
		c->drops[i] -= s->base_drops[i];
	for (int i = 0; i < s->n_ports; i++) {
		struct inart_afp_stats a;
		const struct inart_afp_stats *b = &s->base_afp[i];

		inart_ctl_counters_sub(&c->ports[i], &s->base_ports[i], inart_ctl_sw_port_counters,
				       inart_ctl_n_sw_port_counters);
		inart_switchd_port_stats(s, i, &a);
		c->afp[i].rx_kernel_drops = a.rx_kernel_drops - b->rx_kernel_drops;
		c->afp[i].rx_trunc = a.rx_trunc - b->rx_trunc;
		c->afp[i].tx_blocked = a.tx_blocked - b->tx_blocked;
		c->afp[i].tx_drops = a.tx_drops - b->tx_drops;
		c->afp[i].tx_errors = a.tx_errors - b->tx_errors;
	}
	for (int i = 0; i < c->n; i++)
		for (int k = 0; k < s->n_base_trees; k++) {
			const struct inart_sw_tree_stats *b = &s->base_trees[k];
			struct inart_sw_tree_stats *t = &c->trees[i];

			if (b->job == t->job && b->tree == t->tree)
				inart_ctl_counters_sub(t, b, inart_ctl_sw_tree_counters,
						       inart_ctl_n_sw_tree_counters);
		}
}

/* ---- the control thread ---- */

void *inart_switchd_obj_swap(void *ctx, void *obj)
{
	struct sw_state *s = ctx;
	struct sw_obj *in = obj, *out = calloc(1, sizeof(*out));
	struct swap_cmd c = {s, in, out};

	if (out == NULL) {
		/* cannot keep what goes out of service: it is lost, not leaked
		 * into service */
		static struct sw_obj sink;

		memset(&sink, 0, sizeof(sink));
		c.out = &sink;
		inart_ctlthread_call(s->ctl, cmd_swap, &c);
		inart_shards_destroy(sink.core);
		inart_shard_tables_destroy(sink.tab);
		free(sink.agg);
		out = NULL;
	} else {
		inart_ctlthread_call(s->ctl, cmd_swap, &c);
		out->cfg = s->cfg;
	}
	if (in->core != NULL)
		s->cfg = in->cfg;
	free(in); /* its contents are in service now */
	/* the XDP program's routes and ports follow the core's */
	if (s->xsk != NULL)
		inart_ctlthread_call(s->ctl, inart_switchd_io_sync, s);
	return out;
}

void inart_switchd_obj_destroy(void *ctx, void *obj)
{
	struct sw_obj *o = obj;

	(void)ctx;
	if (o == NULL)
		return;
	inart_shards_destroy(o->core);
	inart_shard_tables_destroy(o->tab);
	free(o->agg);
	free(o);
}

/* The gate's counters (emulation: losses, aggregation limit), since start. */
static json_t *gate_json(const struct sw_state *s, const struct inart_gate_stats *g)
{
	json_t *o = json_object(), *rx = json_array(), *tx = json_array();

	for (int i = 0; i < s->n_ports; i++) {
		json_array_append_new(rx, json_integer((json_int_t)g->rx_lost[i]));
		json_array_append_new(tx, json_integer((json_int_t)g->tx_lost[i]));
	}
	json_object_set_new(o, "rx_lost", rx);
	json_object_set_new(o, "tx_lost", tx);
	json_object_set_new(o, "agg_frames", json_integer((json_int_t)g->agg_frames));
	json_object_set_new(o, "agg_bytes", json_integer((json_int_t)g->agg_bytes));
	json_object_set_new(o, "agg_held", json_integer((json_int_t)g->agg_held));
	json_object_set_new(o, "agg_dropped", json_integer((json_int_t)g->agg_dropped));
	return o;
}

/* With a gate: the aggregating labels of what o puts in service (its new
 * core's tables or its table set), for cmd_swap to hand to the gate.  Runs
 * in the control thread on objects not in service. */
static int gate_labels(struct sw_state *s, struct sw_obj *o, struct inart_err *err)
{
	const struct inart_switch *core = o->core ? inart_shards_core_c(o->core, 0) : NULL;
	int n = core ? inart_switch_get_labels(core, NULL, 0)
		     : inart_sw_tables_labels(inart_shard_tables_first(o->tab), NULL, 0);
	struct inart_label_entry *l;
	int rc = -ENOMEM;

	if (s->gate == NULL)
		return 0;
	l = calloc((size_t)n + 1, sizeof(*l));
	if (l != NULL) {
		n = core ? inart_switch_get_labels(core, l, n)
			 : inart_sw_tables_labels(inart_shard_tables_first(o->tab), l, n);
		rc = inart_gate_agg_labels_of(l, n, &o->agg, &o->n_agg);
	}
	free(l);
	if (rc < 0)
		inart_err_set(err, 0, "out of memory (the aggregation limit's labels)");
	return rc;
}

static json_t *ju64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* The column names of the per-shard counters (stats' "shard_columns"). */
static json_t *shard_columns_json(void)
{
	json_t *o = json_object(), *d = json_array(), *t = json_array();

	for (int i = 0; i < INART_DROP_N; i++)
		json_array_append_new(d, json_string(inart_switch_drop_name(i)));
	json_array_append_new(t, json_string("job"));
	json_array_append_new(t, json_string("tree"));
	for (int c = 0; c < inart_ctl_n_sw_tree_counters; c++)
		json_array_append_new(t, json_string(inart_ctl_sw_tree_counters[c].name));
	json_object_set_new(o, "drops", d);
	json_object_set_new(o, "trees", t);
	return o;
}

/* Each shard's counters since the last reset (the core's: the XDP
 * program's forwarding and --agg kernel's aggregation are in the sums
 * only): [{"shard", "rx_frames", "tx_frames", "slots_busy", "drops": [n in
 * shard_columns' order], "trees": [[job, tree, counters in that order]]}].
 * Rows, not objects with the sums' keys: a script that adds up every
 * "aggregated" of the reply must not count a contribution twice. */
static json_t *shards_stats_json(struct stats_cmd *c)
{
	json_t *a = json_array();

	for (int k = 0; k < inart_shards_n(c->s->sh); k++) {
		const struct sw_shard_count *x = &c->sh[k];
		json_t *o = json_object(), *d = json_array(), *ts = json_array();

		for (int i = 0; i < INART_DROP_N; i++)
			json_array_append_new(d, ju64(x->drops[i]));
		for (int i = 0; i < x->n_trees; i++) {
			json_t *row = json_array();

			json_array_append_new(row, json_integer(x->trees[i].job));
			json_array_append_new(row, json_integer(x->trees[i].tree));
			for (int n = 0; n < inart_ctl_n_sw_tree_counters; n++)
				json_array_append_new(
				    row,
				    ju64(*(const uint64_t *)((const char *)&x->trees[i] +
							     inart_ctl_sw_tree_counters[n].off)));
			json_array_append_new(ts, row);
		}
		json_object_set_new(o, "shard", json_integer(k));
		json_object_set_new(o, "rx_frames", ju64(x->rx_pkts));
		json_object_set_new(o, "tx_frames", ju64(x->tx_pkts));
		json_object_set_new(o, "slots_busy", json_integer(c->busy[k]));
		json_object_set_new(o, "drops", d);
		json_object_set_new(o, "trees", ts);
		json_array_append_new(a, o);
	}
	shard_counts_free(c->sh, INART_SHARD_MAX);
	return a;
}

static json_t *stats_json(struct sw_state *s)
{
	struct stats_cmd c = {.s = s, .per_shard = 1};
	json_t *o, *pa;

	inart_ctlthread_call(s->ctl, cmd_stats, &c);
	o = inart_ctl_sw_stats_json(c.drops, c.ports, s->n_ports, s->ifnames, c.trees, c.n);
	free(c.trees);
	pa = json_object_get(o, "ports");
	for (int i = 0; i < s->n_ports; i++) {
		const struct inart_afp_stats *a = &c.afp[i];
		json_t *p = json_array_get(pa, (size_t)i);

		json_object_set_new(p, "sock_rx_kernel_drops",
				    json_integer((json_int_t)a->rx_kernel_drops));
		json_object_set_new(p, "sock_rx_trunc", json_integer((json_int_t)a->rx_trunc));
		json_object_set_new(p, "sock_tx_blocked", json_integer((json_int_t)a->tx_blocked));
		json_object_set_new(p, "sock_tx_drops", json_integer((json_int_t)a->tx_drops));
		json_object_set_new(p, "sock_tx_errors", json_integer((json_int_t)a->tx_errors));
	}
	if (s->gate != NULL)
		json_object_set_new(o, "gate", gate_json(s, &c.gate));
	inart_switchd_shape_json(s, c.shape, pa);
	if (s->cores > 1) { /* --cores: what each shard received */
		json_t *sr = json_array();

		for (int k = 0; k < inart_shards_n(s->sh); k++)
			json_array_append_new(sr, json_integer((json_int_t)c.shard_rx[k]));
		json_object_set_new(o, "shard_rx_pkts", sr);
	}
	json_object_set_new(o, "shards", shards_stats_json(&c));
	json_object_set_new(o, "shard_columns", shard_columns_json());
	if (s->xsk != NULL)
		json_object_set_new(o, "xdp", inart_switchd_io_json(s));
	json_object_set_new(o, "role", json_string("switch"));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "uptime_s", json_real((double)(inart_now_ns() - s->start_ns) / 1e9));
	return o;
}

/* The port counters alone (port_counters: the controller's polls). */
static json_t *port_counters_json(struct sw_state *s)
{
	struct stats_cmd c = {.s = s};
	json_t *o;

	inart_ctlthread_call(s->ctl, cmd_stats, &c);
	free(c.trees);
	o = inart_ctl_sw_port_counters_json(c.ports, s->n_ports);
	json_object_set_new(o, "uptime_s", json_real((double)(inart_now_ns() - s->start_ns) / 1e9));
	return o;
}

struct busy_cmd {
	struct sw_state *s;
	int busy[INART_SHARD_MAX];
};

static void cmd_busy(void *arg)
{
	struct busy_cmd *c = arg;

	for (int k = 0; k < inart_shards_n(c->s->sh); k++)
		c->busy[k] = inart_switch_slots_busy(inart_shards_core_c(c->s->sh, k));
}

/* What each shard holds: [{"shard", "epoch", "digest", "label_entries",
 * "routes", "ingress_entries", "trees", "bytes", "pool_slots",
 * "slots_assigned", "slots_busy"}] (keys apart from info's own "labels"
 * and "table_bytes", which scripts grep).  The tables are read here (only this thread changes
 * them), the busy slots in a command. */
static json_t *shards_info_json(struct sw_state *s)
{
	struct busy_cmd c = {.s = s};
	json_t *a = json_array();

	inart_ctlthread_call(s->ctl, cmd_busy, &c);
	for (int k = 0; k < inart_shards_n(s->sh); k++) {
		struct inart_shard_info in;
		json_t *o = json_object();
		char d[17];

		json_object_set_new(o, "shard", json_integer(k));
		if (inart_shards_info(s->sh, k, &in) < 0) {
			json_object_set_new(o, "error", json_string("out of memory"));
			json_array_append_new(a, o);
			continue;
		}
		snprintf(d, sizeof(d), "%016" PRIx64, in.digest);
		json_object_set_new(o, "epoch", json_integer((json_int_t)in.epoch));
		json_object_set_new(o, "digest", json_string(d));
		json_object_set_new(o, "label_entries", json_integer(in.labels));
		json_object_set_new(o, "routes", json_integer(in.routes));
		json_object_set_new(o, "ingress_entries", json_integer(in.ingress));
		json_object_set_new(o, "trees", json_integer(in.trees));
		json_object_set_new(o, "bytes", json_integer((json_int_t)in.table_bytes));
		json_object_set_new(o, "pool_slots", json_integer(in.pool_slots));
		json_object_set_new(o, "slots_assigned", json_integer(in.slots_assigned));
		json_object_set_new(o, "slots_busy", json_integer(c.busy[k]));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *info_json(struct sw_state *s)
{
	json_t *o = json_object(), *names = json_array(), *macs = json_array();
	const struct inart_switch *sw0 = inart_shards_core_c(s->sh, 0);
	size_t table_bytes = 0; /* every shard's set */

	for (int k = 0; k < inart_shards_n(s->sh); k++)
		table_bytes +=
		    inart_sw_tables_bytes(inart_switch_tables(inart_shards_core(s->sh, k)));

	for (int i = 0; i < s->n_ports; i++) {
		char m[18];

		inart_addr_fmt_mac(s->macs[i], m);
		json_array_append_new(names, json_string(s->ifnames[i]));
		json_array_append_new(macs, json_string(m));
	}
	json_object_set_new(o, "role", json_string("switch"));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "ctl_auth_failures",
			    json_integer((json_int_t)inart_ctlthread_auth_failures(s->ctl)));
	json_object_set_new(o, "ports", names);
	json_object_set_new(o, "macs", macs);
	json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&s->cfg));
	json_object_set_new(o, "installs", json_integer((json_int_t)s->installs));
	json_object_set_new(o, "labels", json_integer(inart_switch_get_labels(sw0, NULL, 0)));
	json_object_set_new(o, "table_bytes", json_integer((json_int_t)table_bytes));
	json_object_set_new(o, "cores", json_integer(s->cores));
	json_object_set_new(o, "io", json_string(inart_switchd_io_name(s)));
	json_object_set_new(o, "agg", json_string(s->xagg != NULL ? "kernel" : "user"));
	inart_txn_json(&s->txn, o);
	json_object_set_new(o, "shards", shards_info_json(s));
	json_object_set_new(o, "test_faults", json_boolean(s->test_faults));
	if (s->fault_armed) {
		json_t *f = json_object();

		json_object_set_new(f, "shard", json_integer(s->fault_shard));
		json_object_set_new(f, "error", json_integer(s->fault_err));
		json_object_set_new(o, "test_fault", f);
	}
	return o;
}

static json_t *tables_json(struct sw_state *s, struct inart_err *err)
{
	const struct inart_switch *sw = inart_shards_core_c(s->sh, 0); /* all hold the same */
	int nl = inart_switch_get_labels(sw, NULL, 0), nr = inart_switch_get_routes(sw, NULL, 0),
	    ng = inart_switch_get_ingress(sw, NULL, 0);
	struct inart_label_entry *l = calloc((size_t)nl + 1, sizeof(*l));
	struct inart_route *r = calloc((size_t)nr + 1, sizeof(*r));
	struct inart_sw_ingress *g = calloc((size_t)ng + 1, sizeof(*g));
	json_t *o = NULL;

	if (l == NULL || r == NULL || g == NULL) {
		inart_err_set(err, 0, "out of memory");
		goto out;
	}
	nl = inart_switch_get_labels(sw, l, nl);
	nr = inart_switch_get_routes(sw, r, nr);
	ng = inart_switch_get_ingress(sw, g, ng);
	o = json_object();
	json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&s->cfg));
	json_object_set_new(o, "labels", inart_ctl_labels_json(l, nl));
	json_object_set_new(o, "routes", inart_ctl_routes_json(r, nr));
	json_object_set_new(o, "ingress", inart_ctl_ingress_json(g, ng));
out:
	free(l);
	free(r);
	free(g);
	return o;
}

/* --test-faults: an armed fault goes to the shards whose tables are built
 * next (the core in service's, or a new core's), used up. */
static void fault_use(struct sw_state *s, struct inart_shards *sh)
{
	if (!s->fault_armed)
		return;
	inart_shards_fail_next_build(sh, s->fault_shard, s->fault_err);
	s->fault_armed = 0;
	inart_log_warn("test fault: this install's build fails on shard %d (errno %d)",
		       s->fault_shard, s->fault_err);
}

/* test_fault: arm a fault (switchd --test-faults only). */
static int do_test_fault(struct sw_state *s, const struct inart_ctl_req *rq, json_t **data,
			 struct inart_err *err)
{
	json_t *f;

	if (!s->test_faults)
		return inart_err_set(err, -EPERM,
				     "test_fault: fault injection is off (switchd --test-faults)");
	if (rq->shard >= inart_shards_n(s->sh))
		return inart_err_set(err, -EINVAL, "test_fault: shard %d, this switch has %d",
				     rq->shard, inart_shards_n(s->sh));
	s->fault_armed = 1;
	s->fault_shard = rq->shard;
	s->fault_err = rq->error;
	inart_log_warn("test fault armed: the next install fails on shard %d (errno %d: %s)",
		       rq->shard, rq->error, strerror(rq->error));
	*data = json_object();
	f = json_object();
	json_object_set_new(f, "shard", json_integer(rq->shard));
	json_object_set_new(f, "error", json_integer(rq->error));
	json_object_set_new(*data, "armed", f);
	return 0;
}

/* Build what request rq installs, aside: a core (with a configuration) or a
 * table set for the core in service.  0 and *obj, or -errno with err. */
static int build(struct sw_state *s, struct inart_ctl_req *rq, struct sw_obj **obj,
		 struct inart_err *err)
{
	struct inart_sw_update u = rq->tab;
	struct sw_obj *o = calloc(1, sizeof(*o));
	struct inart_err r = {{0}};
	int rc;

	*obj = NULL;
	if (o == NULL) {
		inart_err_set(err, 0, "out of memory");
		return -ENOMEM;
	}
	if (!rq->has_cfg) {
		fault_use(s, s->sh);
		/* reads only the tables in service, which only this thread changes */
		rc = inart_shards_tables_build(s->sh, &u, &o->tab, err);
		if (rc < 0)
			goto fail;
		goto built;
	}
	if (rq->cfg.n_ports != s->n_ports) {
		inart_err_set(err, 0, "config has %d ports, this switch has %d interfaces",
			      rq->cfg.n_ports, s->n_ports);
		rc = -EINVAL;
		goto fail;
	}
	for (int i = 0; i < s->n_ports; i++)
		if (inart_mac_is_zero(rq->cfg.ports[i].mac))
			memcpy(rq->cfg.ports[i].mac, s->macs[i], 6);
	o->cfg = rq->cfg;
	rc = inart_switch_cfg_check(&rq->cfg, &r);
	if (rc < 0) {
		inart_err_set(err, 0, "config refused by the switch core: %s", r.msg);
		goto fail;
	}
	o->core = inart_shards_create(&rq->cfg, s->cores);
	if (o->core == NULL) {
		rc = -ENOMEM;
		inart_err_set(err, 0, "out of memory");
		goto fail;
	}
	fault_use(s, o->core);
	rc = inart_shards_apply(o->core, &u, err);
	if (rc < 0)
		goto fail;
built:
	rc = gate_labels(s, o, err);
	if (rc < 0)
		goto fail;
	*obj = o;
	return 0;
fail:
	inart_switchd_obj_destroy(s, o);
	return rc;
}

static void cmd_restart(void *arg)
{
	struct sw_state *s = arg;
	int busy = inart_shards_lose_state(s->sh);

	if (s->xagg != NULL && inart_xagg_reset(s->xagg) < 0)
		inart_log_warn("--agg kernel: the kernel's state not reset for the restarted jobs");
	inart_log_info("jobs restarted: aggregation state dropped (%d slots of the core in use)",
		       busy);
}

/* An install that restarts the jobs ("reset": `ctl install --restart-jobs`)
 * went in service: the previous run's aggregation state goes, in the core
 * and in the kernel (busy and kept slots), as with a new core.  Else a slot
 * of the old run flushed later (the kernel's ticker is late under load)
 * reaches the PS after it restarted the tree: the tree takes the old run's
 * iteration and the new run's first is stale (docs/dataplane.md, the kernel
 * aggregation path: ESTALE after a restart).  The switches commit before
 * the PSs (the installer's order), so nothing of the old run is left to
 * flush once the PSs restart. */
static void restart_jobs(struct sw_state *s)
{
	inart_ctlthread_call(s->ctl, cmd_restart, s);
}

static int do_install(struct sw_state *s, struct inart_ctl_req *rq, json_t **data,
		      struct inart_err *err)
{
	struct sw_obj *o = NULL;
	int rc, unchanged = rq->prepare && inart_txn_unchanged(&s->txn, rq->install_id);

	if (!unchanged) {
		rc = build(s, rq, &o, err);
		if (rc < 0)
			return rc;
	}
	*data = json_object();
	if (rq->prepare) {
		inart_txn_prepare(&s->txn, rq->install_id, o, o != NULL && o->core == NULL);
		snprintf(s->restart_id, sizeof(s->restart_id), "%s",
			 rq->reset ? rq->install_id : "");
		json_object_set_new(*data, "prepared", json_string(rq->install_id));
		json_object_set_new(*data, "unchanged", json_boolean(unchanged));
		return 0;
	}
	inart_txn_install(&s->txn, rq->install_id, o);
	s->installs++;
	if (rq->reset)
		restart_jobs(s);
	json_object_set_new(*data, "installed", json_string(s->txn.id));
	return 0;
}

int inart_switchd_op(void *ctx, struct inart_ctl_req *rq, json_t **data, struct inart_err *err)
{
	struct sw_state *s = ctx;
	int rc = 0, committed = 0;

	if (inart_txn_is_op(rq->op)) {
		rc = inart_txn_request(&s->txn, rq->op, rq->install_id, data, &committed, err);
		s->installs += committed;
		/* (an unchanged commit too: --restart-jobs with the plan in service) */
		if (rc == 0 && rq->op == INART_CTL_COMMIT && s->restart_id[0] &&
		    strcmp(rq->install_id, s->restart_id) == 0)
			restart_jobs(s);
		if (rq->op != INART_CTL_ROLLBACK)
			s->restart_id[0] = 0;
		return rc;
	}
	switch (rq->op) {
	case INART_CTL_INFO:
		*data = info_json(s);
		break;
	case INART_CTL_INSTALL:
		rc = do_install(s, rq, data, err);
		if (rc == 0)
			inart_log_info("%s %d labels, %d routes, %d deletions%s%s%s%s",
				       rq->prepare ? "prepared" : "installed", rq->tab.n_labels,
				       rq->tab.n_routes, rq->tab.n_del_labels,
				       rq->tab.replace ? " (replace)" : "",
				       rq->has_cfg ? " with a new configuration" : "",
				       rq->install_id[0] ? ", install " : "", rq->install_id);
		break;
	case INART_CTL_TABLES:
		*data = tables_json(s, err);
		if (*data == NULL)
			rc = -ENOMEM;
		break;
	case INART_CTL_STATS:
		*data = stats_json(s);
		break;
	case INART_CTL_PORT_COUNTERS:
		*data = port_counters_json(s);
		break;
	case INART_CTL_RESET_STATS:
		inart_ctlthread_call(s->ctl, cmd_reset_stats, s);
		inart_log_info("counters reset");
		break;
	case INART_CTL_TEST_FAULT:
		rc = do_test_fault(s, rq, data, err);
		break;
	case INART_CTL_LOSE_STATE: {
		struct lose_cmd c = {s, 0};

		inart_ctlthread_call(s->ctl, cmd_lose_state, &c);
		/* the partial sums of chunks in progress are gone */
		*data = json_object();
		json_object_set_new(*data, "busy_slots", json_integer(c.busy));
		inart_log_warn("aggregation state dropped on request (%d slots in use)", c.busy);
		break;
	}
	default:
		rc = -EOPNOTSUPP; /* the other daemon's (inart_daemon_serve says so) */
		break;
	}
	return rc;
}

void inart_switchd_ctl_free(struct sw_state *s)
{
	free(s->base_trees);
	s->base_trees = NULL;
	shard_counts_free(s->base_shard, INART_SHARD_MAX);
}
