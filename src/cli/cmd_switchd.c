/*
 * cmd_switchd: `inart switchd` -- the software INA switch on real
 * interfaces.  The sans-I/O switch core (dp/switch) runs over one AF_PACKET
 * socket per interface (port i = the i-th --port), in the packet thread:
 * poll() on the packet sockets and the control mailbox, with a timeout from
 * inart_switch_next_deadline for partial-aggregate flushes.  Frames are
 * received and sent in batches; nothing is allocated per frame.
 *
 * Control requests (bridge/ctlmsg) are served by a control thread of their own
 * (io/ctlthread): it parses a request, builds what it installs aside (a new
 * core for an install with a configuration, else a new table set from the
 * tables in service: inart_switch_tables_build) and has the packet thread
 * put it in service with one command (a pointer swap) between two batches,
 * so a large install never stalls forwarding.  Installs are transactions
 * (cli/txn: prepare, commit, abort, rollback under an install identity).
 * Counters are the core's and the sockets', reported since the last
 * reset_stats (a baseline kept here, read and written by commands in the
 * packet thread); the core's counters only grow.
 *
 * Emulation (inart emu): a gate (dp/gate: seeded loss, aggregation-rate
 * limit) stands between the sockets and the core, in the packet thread.  Its
 * set of aggregating labels belongs to the tables: the control thread builds
 * it with them, cmd_swap exchanges both in one command, and the set that
 * goes out of service leaves with the tables it belonged to (kept for a
 * rollback, freed by the control thread).
 *
 * Threads: the packet thread owns the core's mutable state, the gate, the
 * sockets and the baselines; the control thread owns the configuration copy, the
 * transaction state and every object not in service.  The control thread
 * reads the core only where the packet thread never writes (the tables in
 * service, which change only through its own commands).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "bridge/ctlmsg.h"
#include "common/clock.h"
#include "dp/gate.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "io/afpacket.h"
#include "io/ctlthread.h"
#include "io/log.h"
#include "txn.h"
#include "util.h"

const char cmd_switchd_help[] =
    "usage: inart switchd --name ID --port IF[,IF...] --ctl PATH [OPTIONS]\n"
    "       inart switchd --stats --ctl PATH [--json]\n"
    "\n"
    "Run the software INA switch on network interfaces: port i is the i-th\n"
    "interface given (AF_PACKET, promiscuous; needs CAP_NET_RAW).  It answers ARP\n"
    "for its ports, forwards IPv4 by longest prefix match and aggregates InArt\n"
    "traffic (UDP port 47470) as its label table says.  Tables are installed over\n"
    "the UNIX control socket PATH ('inart ctl install'); docs/programs.md has the\n"
    "protocol.  Until then the switch only answers ARP and drops the rest.\n"
    "With --stats, print the counters of the switch running at PATH and exit.\n"
    "\n"
    "Options:\n"
    "  --name ID            node id of this switch in the topology (checked against\n"
    "                       the installs it receives)\n"
    "  --port IF[,IF...]    interfaces, in port order (repeatable)\n"
    "  --ctl PATH           control socket\n"
    "  --ctl-tcp H:P        also listen for control on TCP (HOST:PORT),\n"
    "                       clients authenticated with the key of\n"
    "  --ctl-key FILE       FILE (mode 600; docs/programs.md)\n"
    "  --pool-slots N       aggregator slots until a configuration arrives\n"
    "                       (default 4096)\n"
    "  --flush-ms X         partial aggregates flushed after X ms (default 10)\n"
    "  --batch N            frames per receive / send batch (default 64)\n"
    "  --io MODE            ring (PACKET_MMAP rings), mmsg (recvmmsg/sendmmsg) or\n"
    "                       auto: ring if the kernel allows it (default)\n"
    "  --log-level L        error, warn, info (default) or debug\n"
    "  --ring-frames N      receive ring frames per port (default 4096, 2 KB each)\n"
    "Emulation (inart emu; docs/emulator.md):\n"
    "  --agg-mbps M         aggregate at most M Mbit/s of frames (a token bucket on\n"
    "                       the INA contributions that reach an aggregation entry;\n"
    "                       the others wait in a FIFO, everything else at line rate)\n"
    "  --rx-loss P          lose each frame received on any port with probability P\n"
    "  --tx-loss P          lose each frame sent on a --tx-loss-ports port with\n"
    "                       probability P\n"
    "  --tx-loss-ports L    ports (numbers, comma-separated) of --tx-loss (default all)\n"
    "  --loss-seed S        seed of the losses (default 1)\n"
    "  --stats              print the counters of a running switch and exit\n"
    "  --json               with --stats: the JSON reply\n"
    "\n"
    "Exit status: 0 stopped by SIGINT/SIGTERM, 1 setup failure (interface,\n"
    "socket), 2 usage error.\n";

#define OUT_MAX (INART_SW_MAX_FANOUT + 8)
#define RX_ROUNDS 8

struct sw_state {
	const char *name;
	int n_ports;
	struct inart_afp *ports[INART_SW_MAX_PORTS];
	const char *ifnames[INART_SW_MAX_PORTS];
	uint8_t macs[INART_SW_MAX_PORTS][6];
	struct inart_switch *sw;     /* in service (changed by commands only) */
	struct inart_ctlthread *ctl; /* the control thread */
	/* packet thread: loss and aggregation limit (NULL: none); its label set
	 * is exchanged by cmd_swap with the tables' */
	struct inart_gate *gate;
	/* control thread */
	struct inart_sw_cfg cfg; /* of the core in service */
	struct cli_txn txn;
	uint64_t installs;
	/* packet thread: counters at the last reset */
	uint64_t base_drops[INART_DROP_N];
	struct inart_sw_port_stats base_ports[INART_SW_MAX_PORTS];
	struct inart_afp_stats base_afp[INART_SW_MAX_PORTS];
	struct inart_sw_tree_stats *base_trees;
	int n_base_trees;
	uint64_t start_ns;
	/* output frames of the core */
	struct inart_frame out[OUT_MAX];
};

/* What an install puts in service: a new core (with its configuration), or a
 * table set for the core in service. */
struct sw_obj {
	struct inart_switch *core;
	struct inart_sw_cfg cfg;
	struct inart_sw_tables *tab;
	uint32_t *agg; /* with a gate: its aggregating labels (inart_gate_agg_labels_of) */
	int n_agg;
};

static void emit(struct sw_state *s, int n)
{
	for (int i = 0; i < n; i++) {
		const struct inart_frame *f = &s->out[i];

		if (f->port < s->n_ports && !(s->gate && inart_gate_tx_drop(s->gate, f->port)))
			inart_afp_queue(s->ports[f->port], f->data, f->len);
	}
}

/* Current tree counters (malloc'ed, *n); NULL with *n = 0 if none. */
static struct inart_sw_tree_stats *tree_stats(const struct inart_switch *sw, uint64_t *drops,
					      struct inart_sw_port_stats *ports, int *n)
{
	int cap = 64, k;
	struct inart_sw_tree_stats *t = NULL;

	for (;;) {
		struct inart_sw_tree_stats *nt = realloc(t, (size_t)cap * sizeof(*t));

		if (nt == NULL) {
			free(t);
			*n = 0;
			inart_switch_stats(sw, drops, ports, NULL, 0);
			return NULL;
		}
		t = nt;
		k = inart_switch_stats(sw, drops, ports, t, cap);
		if (k <= cap)
			break;
		cap = k;
	}
	*n = k;
	return t;
}

/* ---- commands (run in the packet thread) ---- */

static void cmd_reset_stats(void *arg)
{
	struct sw_state *s = arg;

	free(s->base_trees);
	s->base_trees = tree_stats(s->sw, s->base_drops, s->base_ports, &s->n_base_trees);
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_stats(s->ports[i], &s->base_afp[i]);
}

/* A new core: its counters start at zero (socket counters go on). */
static void stats_zero(struct sw_state *s)
{
	free(s->base_trees);
	s->base_trees = NULL;
	s->n_base_trees = 0;
	memset(s->base_drops, 0, sizeof(s->base_drops));
	memset(s->base_ports, 0, sizeof(s->base_ports));
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_stats(s->ports[i], &s->base_afp[i]);
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
		c->out->core = s->sw;
		s->sw = c->in->core;
		stats_zero(s);
	} else {
		c->out->tab = inart_switch_tables_swap(s->sw, c->in->tab);
	}
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

	c->busy = inart_switch_lose_state(c->s->sw);
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
};

static void cmd_stats(void *arg)
{
	struct stats_cmd *c = arg;
	struct sw_state *s = c->s;

	c->trees = tree_stats(s->sw, c->drops, c->ports, &c->n);
	if (s->gate != NULL)
		inart_gate_stats(s->gate, &c->gate);
	for (int i = 0; i < INART_DROP_N; i++)
		c->drops[i] -= s->base_drops[i];
	for (int i = 0; i < s->n_ports; i++) {
		struct inart_afp_stats a;
		const struct inart_afp_stats *b = &s->base_afp[i];

		inart_ctl_counters_sub(&c->ports[i], &s->base_ports[i], inart_ctl_sw_port_counters,
				       inart_ctl_n_sw_port_counters);
		inart_afp_stats(s->ports[i], &a);
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

static void *obj_swap(void *ctx, void *obj)
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
		inart_switch_destroy(sink.core);
		inart_sw_tables_destroy(sink.tab);
		free(sink.agg);
		out = NULL;
	} else {
		inart_ctlthread_call(s->ctl, cmd_swap, &c);
		out->cfg = s->cfg;
	}
	if (in->core != NULL)
		s->cfg = in->cfg;
	free(in); /* its contents are in service now */
	return out;
}

static void obj_destroy(void *ctx, void *obj)
{
	struct sw_obj *o = obj;

	(void)ctx;
	if (o == NULL)
		return;
	inart_switch_destroy(o->core);
	inart_sw_tables_destroy(o->tab);
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
static int gate_labels(struct sw_state *s, struct sw_obj *o, char *why, size_t why_len)
{
	int n = o->core ? inart_switch_get_labels(o->core, NULL, 0)
			: inart_sw_tables_labels(o->tab, NULL, 0);
	struct inart_label_entry *l;
	int rc = -ENOMEM;

	if (s->gate == NULL)
		return 0;
	l = calloc((size_t)n + 1, sizeof(*l));
	if (l != NULL) {
		n = o->core ? inart_switch_get_labels(o->core, l, n)
			    : inart_sw_tables_labels(o->tab, l, n);
		rc = inart_gate_agg_labels_of(l, n, &o->agg, &o->n_agg);
	}
	free(l);
	if (rc < 0)
		snprintf(why, why_len, "out of memory (the aggregation limit's labels)");
	return rc;
}

static json_t *stats_json(struct sw_state *s)
{
	struct stats_cmd c = {.s = s};
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
	json_object_set_new(o, "role", json_string("switch"));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "uptime_s", json_real((double)(inart_now_ns() - s->start_ns) / 1e9));
	return o;
}

static json_t *info_json(struct sw_state *s)
{
	json_t *o = json_object(), *names = json_array(), *macs = json_array();

	for (int i = 0; i < s->n_ports; i++) {
		char m[18];

		inart_ctl_fmt_mac(s->macs[i], m);
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
	json_object_set_new(o, "labels", json_integer(inart_switch_get_labels(s->sw, NULL, 0)));
	json_object_set_new(
	    o, "table_bytes",
	    json_integer((json_int_t)inart_sw_tables_bytes(inart_switch_tables(s->sw))));
	json_object_set_new(o, "io", json_string(inart_afp_mode_name(inart_afp_mode(s->ports[0]))));
	cli_txn_json(&s->txn, o);
	return o;
}

static json_t *tables_json(struct sw_state *s, char *why, size_t why_len)
{
	int nl = inart_switch_get_labels(s->sw, NULL, 0),
	    nr = inart_switch_get_routes(s->sw, NULL, 0),
	    ng = inart_switch_get_ingress(s->sw, NULL, 0);
	struct inart_label_entry *l = calloc((size_t)nl + 1, sizeof(*l));
	struct inart_route *r = calloc((size_t)nr + 1, sizeof(*r));
	struct inart_sw_ingress *g = calloc((size_t)ng + 1, sizeof(*g));
	json_t *o = NULL, *la, *ra, *ga;

	if (l == NULL || r == NULL || g == NULL) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	nl = inart_switch_get_labels(s->sw, l, nl);
	nr = inart_switch_get_routes(s->sw, r, nr);
	ng = inart_switch_get_ingress(s->sw, g, ng);
	o = json_object();
	la = json_array();
	ra = json_array();
	ga = json_array();
	for (int i = 0; i < nl; i++)
		json_array_append_new(la, inart_ctl_label_json(&l[i]));
	for (int i = 0; i < nr; i++)
		json_array_append_new(ra, inart_ctl_route_json(&r[i]));
	for (int i = 0; i < ng; i++)
		json_array_append_new(ga, inart_ctl_ingress_json(&g[i]));
	json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&s->cfg));
	json_object_set_new(o, "labels", la);
	json_object_set_new(o, "routes", ra);
	json_object_set_new(o, "ingress", ga);
out:
	free(l);
	free(r);
	free(g);
	return o;
}

/* Build what request rq installs, aside: a core (with a configuration) or a
 * table set for the core in service.  0 and *obj, or -errno with why. */
static int build(struct sw_state *s, struct inart_ctl_req *rq, struct sw_obj **obj, char *why,
		 size_t why_len)
{
	struct inart_sw_update u = {
	    .replace = rq->replace,
	    .n_labels = rq->n_labels,
	    .labels = rq->labels,
	    .n_del_labels = rq->n_del_labels,
	    .del_labels = rq->del_labels,
	    .n_routes = rq->n_routes,
	    .routes = rq->routes,
	    .n_ingress = rq->n_ingress,
	    .ingress = rq->ingress,
	};
	struct sw_obj *o = calloc(1, sizeof(*o));
	char r[160];
	int rc;

	*obj = NULL;
	if (o == NULL) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	if (!rq->has_cfg) {
		/* reads only the tables in service, which only this thread changes */
		rc = inart_switch_tables_build(s->sw, &u, &o->tab, why, why_len);
		if (rc < 0)
			goto fail;
		goto built;
	}
	if (rq->cfg.n_ports != s->n_ports) {
		snprintf(why, why_len, "config has %d ports, this switch has %d interfaces",
			 rq->cfg.n_ports, s->n_ports);
		rc = -EINVAL;
		goto fail;
	}
	for (int i = 0; i < s->n_ports; i++)
		if (inart_mac_is_zero(rq->cfg.ports[i].mac))
			memcpy(rq->cfg.ports[i].mac, s->macs[i], 6);
	o->cfg = rq->cfg;
	rc = inart_switch_cfg_check(&rq->cfg, r, sizeof(r));
	if (rc < 0) {
		snprintf(why, why_len, "config refused by the switch core: %s", r);
		goto fail;
	}
	o->core = inart_switch_create(&rq->cfg);
	if (o->core == NULL) {
		rc = -ENOMEM;
		snprintf(why, why_len, "out of memory");
		goto fail;
	}
	rc = inart_switch_apply(o->core, &u, why, why_len);
	if (rc < 0)
		goto fail;
built:
	rc = gate_labels(s, o, why, why_len);
	if (rc < 0)
		goto fail;
	*obj = o;
	return 0;
fail:
	obj_destroy(s, o);
	return rc;
}

static int do_install(struct sw_state *s, struct inart_ctl_req *rq, json_t **data, char *why,
		      size_t why_len)
{
	struct sw_obj *o = NULL;
	int rc, unchanged = rq->prepare && cli_txn_unchanged(&s->txn, rq->install_id);

	if (!unchanged) {
		rc = build(s, rq, &o, why, why_len);
		if (rc < 0)
			return rc;
	}
	*data = json_object();
	if (rq->prepare) {
		cli_txn_prepare(&s->txn, rq->install_id, o, o != NULL && o->core == NULL);
		json_object_set_new(*data, "prepared", json_string(rq->install_id));
		json_object_set_new(*data, "unchanged", json_boolean(unchanged));
		return 0;
	}
	cli_txn_install(&s->txn, rq->install_id, o);
	s->installs++;
	json_object_set_new(*data, "installed", json_string(s->txn.id));
	return 0;
}

/* One control request for this switch (cli_ctl_serve does the rest). */
static int sw_op(void *ctx, struct inart_ctl_req *rq, json_t **data, char *why, size_t why_len)
{
	struct sw_state *s = ctx;
	int rc = 0, committed = 0;

	if (cli_txn_is_op(rq->op)) {
		rc = cli_txn_request(&s->txn, rq->op, rq->install_id, data, &committed, why,
				     why_len);
		s->installs += committed;
		return rc;
	}
	switch (rq->op) {
	case INART_CTL_INFO:
		*data = info_json(s);
		break;
	case INART_CTL_INSTALL:
		rc = do_install(s, rq, data, why, why_len);
		if (rc == 0)
			inart_log_info("%s %d labels, %d routes, %d deletions%s%s%s%s",
				       rq->prepare ? "prepared" : "installed", rq->n_labels,
				       rq->n_routes, rq->n_del_labels,
				       rq->replace ? " (replace)" : "",
				       rq->has_cfg ? " with a new configuration" : "",
				       rq->install_id[0] ? ", install " : "", rq->install_id);
		break;
	case INART_CTL_TABLES:
		*data = tables_json(s, why, why_len);
		if (*data == NULL)
			rc = -ENOMEM;
		break;
	case INART_CTL_STATS:
		*data = stats_json(s);
		break;
	case INART_CTL_RESET_STATS:
		inart_ctlthread_call(s->ctl, cmd_reset_stats, s);
		inart_log_info("counters reset");
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
		rc = -EOPNOTSUPP; /* the other daemon's (cli_ctl_serve says so) */
		break;
	}
	return rc;
}

/* --io MODE: a back end by its inart_afp_mode_name. */
static enum inart_afp_mode io_mode(const char *cmd, const char *arg)
{
	for (enum inart_afp_mode m = INART_AFP_AUTO; m <= INART_AFP_MMSG; m++)
		if (strcmp(arg, inart_afp_mode_name(m)) == 0)
			return m;
	cli_usage_error(cmd, "--io: '%s' is not ring, mmsg or auto", arg);
}

static int add_ports(const char *cmd, struct sw_state *s, char *list)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (s->n_ports == INART_SW_MAX_PORTS)
			cli_usage_error(cmd, "--port: more than %d interfaces", INART_SW_MAX_PORTS);
		if (*tok == '\0')
			continue;
		for (int i = 0; i < s->n_ports; i++)
			if (strcmp(s->ifnames[i], tok) == 0)
				cli_usage_error(cmd, "--port: interface '%s' given twice", tok);
		s->ifnames[s->n_ports++] = tok;
	}
	return 0;
}

/* Held contributions the aggregation limit lets through now go to the core. */
static void gate_release(struct sw_state *s, uint64_t now)
{
	struct inart_frame in;
	int n = 0;

	while (inart_gate_next(s->gate, now, &in)) {
		emit(s, inart_switch_rx(s->sw, &in, now, s->out, OUT_MAX));
		if (++n % 32 == 0)
			for (int k = 0; k < s->n_ports; k++)
				if (inart_afp_pending(s->ports[k]))
					inart_afp_flush(s->ports[k]);
	}
}

/* --tx-loss-ports: a bit per port number listed. */
static uint64_t port_mask(const char *cmd, const char *arg)
{
	uint64_t m = 0;
	char *end;
	const char *p = arg;

	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v >= INART_SW_MAX_PORTS || (*end != ',' && *end != '\0'))
			cli_usage_error(cmd, "--tx-loss-ports: '%s' is not a list of port numbers",
					arg);
		m |= 1ull << v;
		if (*end == '\0')
			return m;
		p = end + 1;
	}
}

/* Receive until the ready sockets are drained (bounded: RX_ROUNDS), each
 * frame through the gate (if any) and the core, the outputs sent. */
static void rx_rounds(struct sw_state *s, const struct pollfd *pfd, int batch)
{
	uint8_t *data[1024];
	uint16_t len[1024];
	int np = s->n_ports;

	for (int round = 0; round < RX_ROUNDS; round++) {
		int got = 0;

		for (int i = 0; i < np; i++) {
			uint64_t now;
			int n;

			if (round == 0 && !(pfd[i].revents & POLLIN))
				continue;
			n = inart_afp_recv(s->ports[i], data, len, batch);
			if (n < 0) {
				inart_log_error("%s: receive: %s", s->ifnames[i], strerror(-n));
				continue;
			}
			if (n == 0)
				continue;
			got += n;
			now = inart_now_ns();
			for (int k = 0; k < n; k++) {
				struct inart_frame in = {data[k], len[k], (uint16_t)i};

				if (s->gate != NULL &&
				    inart_gate_rx(s->gate, &in, now) != INART_GATE_PASS)
					continue;
				emit(s, inart_switch_rx(s->sw, &in, now, s->out, OUT_MAX));
			}
			for (int k = 0; k < np; k++)
				if (inart_afp_pending(s->ports[k]) >= batch)
					inart_afp_flush(s->ports[k]);
		}
		for (int k = 0; k < np; k++)
			if (inart_afp_pending(s->ports[k]))
				inart_afp_flush(s->ports[k]);
		if (got == 0)
			break;
	}
}

/* Timers: frames the gate holds back, the core's flushes; then every
 * pending frame is sent. */
static void timers(struct sw_state *s)
{
	uint64_t now = inart_now_ns();

	if (s->gate != NULL)
		gate_release(s, now);
	if (inart_switch_next_deadline(s->sw) <= now) {
		int n;

		while ((n = inart_switch_tick(s->sw, now, s->out, OUT_MAX)) > 0) {
			emit(s, n);
			for (int k = 0; k < s->n_ports; k++)
				inart_afp_flush(s->ports[k]);
			if (n < OUT_MAX)
				break;
		}
	}
	for (int k = 0; k < s->n_ports; k++)
		if (inart_afp_pending(s->ports[k]))
			inart_afp_flush(s->ports[k]);
}

/* How long poll may wait: until the next deadline of the core or the gate,
 * at most 1 s, 1 ms while a port has frames the device pushed back. */
static int poll_timeout(struct sw_state *s, struct pollfd *pfd)
{
	uint64_t now = inart_now_ns(), dl = inart_switch_next_deadline(s->sw);
	int timeout = 1000, pending = 0;

	if (s->gate != NULL && inart_gate_deadline(s->gate, now) < dl)
		dl = inart_gate_deadline(s->gate, now);
	if (dl != UINT64_MAX)
		timeout = dl <= now ? 0 : (int)((dl - now + 999999) / 1000000);
	if (timeout > 1000)
		timeout = 1000;
	for (int i = 0; i < s->n_ports; i++) {
		int p = inart_afp_pending(s->ports[i]);

		pfd[i].events = POLLIN | (p ? POLLOUT : 0);
		pending += p;
	}
	if (pending && timeout > 1)
		timeout = 1; /* a device that pushed back may not signal POLLOUT */
	return timeout;
}

static int run(struct sw_state *s, int batch)
{
	struct pollfd pfd[INART_SW_MAX_PORTS + 1];
	int np = s->n_ports;

	for (int i = 0; i < np; i++)
		pfd[i].fd = inart_afp_fd(s->ports[i]);
	pfd[np].fd = inart_ctlthread_fd(s->ctl);
	pfd[np].events = POLLIN;
	while (!cli_daemon_stop) {
		int r = poll(pfd, (nfds_t)np + 1, poll_timeout(s, pfd));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			inart_log_error("poll: %s", strerror(errno));
			return -errno;
		}
		/* a socket error (the interface went down) is reported once and
		   cleared: poll() would return POLLERR for ever */
		for (int i = 0; i < np; i++)
			if (pfd[i].revents & POLLERR) {
				int e = inart_afp_clear_error(s->ports[i]);

				if (e != 0)
					inart_log_warn("%s: %s", s->ifnames[i], strerror(e));
			}
		rx_rounds(s, pfd, batch);
		timers(s);
		/* a command of the control thread: between two batches */
		if (pfd[np].revents & POLLIN)
			inart_ctlthread_run(s->ctl);
	}
	return 0;
}

/* The command line of switchd. */
struct switchd_args {
	const char *ctl;
	struct cli_ctl_tcp tcp; /* --ctl-tcp, --ctl-key */
	struct inart_gate_cfg gc;
	int gated, pool, batch, level, stats, json;
	double flush_ms;
	struct inart_afp_opt afo;
};

/* Parse the options into a and s (name, ports).  Returns an exit status
 * when the command is done (--help), -1 to go on; exits 2 on a usage
 * error. */
static int switchd_options(const char *cmd, int argc, char **argv, struct sw_state *s,
			   struct switchd_args *a)
{
	enum {
		O_NAME = 1,
		O_PORT,
		O_CTL,
		O_POOL,
		O_FLUSH,
		O_BATCH,
		O_IO,
		O_LOG,
		O_STATS,
		O_JSON,
		O_RING,
		O_AGG,
		O_RXLOSS,
		O_TXLOSS,
		O_TXPORTS,
		O_SEED,
	};
	static const struct option longopts[] = {
	    {"name", required_argument, NULL, O_NAME},
	    {"port", required_argument, NULL, O_PORT},
	    {"ctl", required_argument, NULL, O_CTL},
	    CLI_CTL_TCP_LONGOPTS,
	    {"pool-slots", required_argument, NULL, O_POOL},
	    {"flush-ms", required_argument, NULL, O_FLUSH},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"io", required_argument, NULL, O_IO},
	    {"log-level", required_argument, NULL, O_LOG},
	    {"stats", no_argument, NULL, O_STATS},
	    {"json", no_argument, NULL, O_JSON},
	    {"ring-frames", required_argument, NULL, O_RING},
	    {"agg-mbps", required_argument, NULL, O_AGG},
	    {"rx-loss", required_argument, NULL, O_RXLOSS},
	    {"tx-loss", required_argument, NULL, O_TXLOSS},
	    {"tx-loss-ports", required_argument, NULL, O_TXPORTS},
	    {"loss-seed", required_argument, NULL, O_SEED},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->gc.tx_loss_ports = UINT64_MAX;
	a->gc.seed = 1;
	a->flush_ms = 10;
	a->pool = 4096;
	a->batch = 64;
	a->level = INART_LOG_INFO;
	inart_afp_opt_default(&a->afo);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (cli_ctl_tcp_opt(c, optarg, &a->tcp))
			continue;
		switch (c) {
		case 'h':
			fputs(cmd_switchd_help, stdout);
			return EXIT_OK;
		case O_NAME:
			s->name = optarg;
			break;
		case O_PORT:
			add_ports(cmd, s, optarg);
			break;
		case O_CTL:
			a->ctl = optarg;
			break;
		case O_POOL:
			a->pool = cli_int(cmd, "--pool-slots", optarg, 1, 1 << 24);
			break;
		case O_FLUSH:
			a->flush_ms = cli_double(cmd, "--flush-ms", optarg, 0.001, 3600e3);
			break;
		case O_BATCH:
			a->batch = cli_int(cmd, "--batch", optarg, 1, 1024);
			break;
		case O_IO:
			a->afo.mode = io_mode(cmd, optarg);
			break;
		case O_LOG:
			a->level = cli_log_level(cmd, optarg);
			break;
		case O_STATS:
			a->stats = 1;
			break;
		case O_JSON:
			a->json = 1;
			break;
		case O_RING:
			a->afo.rx_frames = cli_int(cmd, "--ring-frames", optarg, 64, 65536);
			break;
		case O_AGG:
			a->gc.agg_bytes_per_s =
			    cli_double(cmd, "--agg-mbps", optarg, 1e-3, 1e7) * 1e6 / 8;
			a->gated = 1;
			break;
		case O_RXLOSS:
			a->gc.rx_loss = cli_double(cmd, "--rx-loss", optarg, 0, 1);
			a->gated = 1;
			break;
		case O_TXLOSS:
			a->gc.tx_loss = cli_double(cmd, "--tx-loss", optarg, 0, 1);
			a->gated = 1;
			break;
		case O_TXPORTS:
			a->gc.tx_loss_ports = port_mask(cmd, optarg);
			break;
		case O_SEED:
			a->gc.seed = cli_u64(cmd, "--loss-seed", optarg);
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	return -1;
}

/* Open the ports (their MACs into the core's config), the core and the
 * gate (if any); exits on a failure. */
static void switchd_open(struct sw_state *s, struct switchd_args *a)
{
	static uint8_t outbuf[OUT_MAX][INART_FRAME_MAX];
	struct inart_afp_opt *afo = &a->afo;
	struct inart_err err = {{0}};
	char r[160];

	memset(&s->cfg, 0, sizeof(s->cfg));
	s->cfg.n_ports = s->n_ports;
	s->cfg.pool_slots = a->pool;
	s->cfg.flush_timeout_ns = (uint64_t)(a->flush_ms * 1e6);
	afo->batch = a->batch;
	afo->tx_queue = 4 * a->batch + OUT_MAX;
	if (afo->tx_frames < afo->tx_queue)
		afo->tx_frames = afo->tx_queue;
	for (int i = 0; i < s->n_ports; i++) {
		s->ports[i] = inart_afp_open(s->ifnames[i], afo, &err);
		if (s->ports[i] == NULL)
			cli_fail(&err);
		if (afo->mode == INART_AFP_AUTO && inart_afp_mode(s->ports[i]) != INART_AFP_RING)
			inart_log_warn("%s: the kernel refused PACKET_MMAP rings; using "
				       "recvmmsg/sendmmsg",
				       s->ifnames[i]);
		inart_afp_mac(s->ports[i], s->cfg.ports[i].mac);
		memcpy(s->macs[i], s->cfg.ports[i].mac, 6);
	}
	for (int i = 0; i < OUT_MAX; i++)
		s->out[i].data = outbuf[i];
	if (inart_switch_cfg_check(&s->cfg, r, sizeof(r)) < 0)
		cli_failf("switch core: %s", r);
	s->sw = inart_switch_create(&s->cfg);
	if (s->sw == NULL)
		cli_failf("switch core: %s", strerror(errno));
	if (a->gated) {
		a->gc.n_ports = s->n_ports;
		s->gate = inart_gate_create(&a->gc, inart_now_ns());
		if (s->gate == NULL)
			cli_failf("loss / aggregation limit: %s", strerror(errno));
	}
}

int cmd_switchd(int argc, char **argv)
{
	const char *cmd = "switchd";
	static struct sw_state st;
	struct sw_state *s = &st;
	struct cli_ctl_daemon cd = {.role = "switch", .other = "PS", .op = sw_op, .ctx = &st};
	struct switchd_args a;
	struct inart_err err = {{0}};
	int rc;

	rc = switchd_options(cmd, argc, argv, s, &a);
	if (rc >= 0)
		return rc;
	rc = cli_ctl_daemon_args(cmd, argc, argv, a.ctl, a.stats, a.json,
				 s->n_ports > 0 || s->name != NULL || a.gated || a.tcp.tcp ||
				     a.tcp.key_file);
	if (rc >= 0)
		return rc;
	if (s->name == NULL)
		cli_usage_error(cmd, "--name ID is required");
	if (s->n_ports == 0)
		cli_usage_error(cmd, "--port IF[,IF...] is required");

	inart_log_init("inart-switchd", a.level);
	switchd_open(s, &a);
	s->start_ns = inart_now_ns();
	s->txn.ctx = s;
	s->txn.swap = obj_swap;
	s->txn.destroy = obj_destroy;
	cd.name = s->name;
	s->ctl =
	    inart_ctlthread_start(a.ctl, cli_ctl_serve, &cd, cli_ctl_tcp_setup(cmd, &a.tcp), &err);
	if (s->ctl == NULL)
		cli_fail(&err);
	cli_daemon_signals();
	inart_log_info("switch '%s' up: %d ports (%s), control socket %s", s->name, s->n_ports,
		       inart_afp_mode_name(inart_afp_mode(s->ports[0])), a.ctl);
	rc = run(s, a.batch);
	inart_log_info("stopping");
	inart_ctlthread_stop(s->ctl);
	cli_txn_free(&s->txn);
	inart_switch_destroy(s->sw);
	inart_gate_destroy(s->gate);
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_close(s->ports[i]);
	free(s->base_trees);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}
