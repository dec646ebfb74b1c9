/*
 * cmd_switchd: `inart switchd` -- the software INA switch on real
 * interfaces.  The sans-I/O switch core (dp/switch) runs over one AF_PACKET
 * socket per interface (port i = the i-th --port), in one thread: poll() on
 * the packet sockets and the control socket, with a timeout from
 * inart_switch_next_deadline for partial-aggregate flushes.  Frames are
 * received and sent in batches; nothing is allocated per frame.
 *
 * Control requests (bridge/ctlmsg): an install with a configuration builds a new
 * core, applies the batch to it and swaps it in only if everything was
 * accepted; without one, the batch goes to the running core through
 * inart_switch_apply (all or nothing).  Counters are the core's and the
 * sockets', reported since the last reset_stats (a baseline is kept here;
 * the core's counters only grow).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "bridge/ctlmsg.h"
#include "dp/gate.h"
#include "dp/switch.h"
#include "io/afpacket.h"
#include "io/ctlsock.h"
#include "io/log.h"
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

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct sw_state {
	const char *name;
	int n_ports;
	struct inart_afp *ports[INART_SW_MAX_PORTS];
	const char *ifnames[INART_SW_MAX_PORTS];
	struct inart_switch *sw;
	struct inart_sw_cfg cfg;
	struct inart_gate *gate; /* loss and aggregation limit; NULL: none */
	/* counters at the last reset */
	uint64_t base_drops[INART_DROP_N];
	struct inart_sw_port_stats base_ports[INART_SW_MAX_PORTS];
	struct inart_afp_stats base_afp[INART_SW_MAX_PORTS];
	struct inart_sw_tree_stats *base_trees;
	int n_base_trees;
	uint64_t start_ns, installs;
	/* output frames of the core */
	struct inart_frame out[OUT_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static void stats_reset(struct sw_state *s)
{
	free(s->base_trees);
	s->base_trees = tree_stats(s->sw, s->base_drops, s->base_ports, &s->n_base_trees);
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_stats(s->ports[i], &s->base_afp[i]);
}

static void stats_zero(struct sw_state *s)
{
	free(s->base_trees);
	s->base_trees = NULL;
	s->n_base_trees = 0;
	memset(s->base_drops, 0, sizeof(s->base_drops));
	memset(s->base_ports, 0, sizeof(s->base_ports));
	/* socket counters continue across a new core */
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_stats(s->ports[i], &s->base_afp[i]);
}

/* The gate's counters (emulation: losses, aggregation limit), since start. */
static json_t *gate_json(struct sw_state *s)
{
	struct inart_gate_stats g;
	json_t *o = json_object(), *rx = json_array(), *tx = json_array();

	inart_gate_stats(s->gate, &g);
	for (int i = 0; i < s->n_ports; i++) {
		json_array_append_new(rx, json_integer((json_int_t)g.rx_lost[i]));
		json_array_append_new(tx, json_integer((json_int_t)g.tx_lost[i]));
	}
	json_object_set_new(o, "rx_lost", rx);
	json_object_set_new(o, "tx_lost", tx);
	json_object_set_new(o, "agg_frames", json_integer((json_int_t)g.agg_frames));
	json_object_set_new(o, "agg_bytes", json_integer((json_int_t)g.agg_bytes));
	json_object_set_new(o, "agg_held", json_integer((json_int_t)g.agg_held));
	json_object_set_new(o, "agg_dropped", json_integer((json_int_t)g.agg_dropped));
	return o;
}

/* Tell the gate which labels aggregate here (after a change of tables). */
static void gate_labels(struct sw_state *s)
{
	int n = inart_switch_get_labels(s->sw, NULL, 0), k = 0;
	struct inart_label_entry *l;
	uint32_t *agg;

	if (s->gate == NULL)
		return;
	l = calloc((size_t)n + 1, sizeof(*l));
	agg = calloc((size_t)n + 1, sizeof(*agg));
	if (l != NULL && agg != NULL) {
		n = inart_switch_get_labels(s->sw, l, n);
		for (int i = 0; i < n; i++)
			if (l[i].kind == INART_LABEL_UP && l[i].aggregate)
				agg[k++] = l[i].label;
	}
	if (l == NULL || agg == NULL || inart_gate_set_agg_labels(s->gate, agg, k) < 0)
		inart_log_error("out of memory: the aggregation limit keeps its old labels");
	free(l);
	free(agg);
}

static json_t *stats_json(struct sw_state *s)
{
	uint64_t drops[INART_DROP_N];
	struct inart_sw_port_stats ports[INART_SW_MAX_PORTS];
	struct inart_sw_tree_stats *trees;
	json_t *o, *pa;
	int n;

	trees = tree_stats(s->sw, drops, ports, &n);
	for (int i = 0; i < INART_DROP_N; i++)
		drops[i] -= s->base_drops[i];
	for (int i = 0; i < s->n_ports; i++)
		inart_ctl_counters_sub(&ports[i], &s->base_ports[i], inart_ctl_sw_port_counters,
				       inart_ctl_n_sw_port_counters);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < s->n_base_trees; k++) {
			const struct inart_sw_tree_stats *b = &s->base_trees[k];
			struct inart_sw_tree_stats *t = &trees[i];

			if (b->job == t->job && b->tree == t->tree)
				inart_ctl_counters_sub(t, b, inart_ctl_sw_tree_counters,
						       inart_ctl_n_sw_tree_counters);
		}
	o = inart_ctl_sw_stats_json(drops, ports, s->n_ports, s->ifnames, trees, n);
	free(trees);
	pa = json_object_get(o, "ports");
	for (int i = 0; i < s->n_ports; i++) {
		struct inart_afp_stats a;
		const struct inart_afp_stats *b = &s->base_afp[i];
		json_t *p = json_array_get(pa, (size_t)i);

		inart_afp_stats(s->ports[i], &a);
		json_object_set_new(
		    p, "sock_rx_kernel_drops",
		    json_integer((json_int_t)(a.rx_kernel_drops - b->rx_kernel_drops)));
		json_object_set_new(p, "sock_rx_trunc",
				    json_integer((json_int_t)(a.rx_trunc - b->rx_trunc)));
		json_object_set_new(p, "sock_tx_blocked",
				    json_integer((json_int_t)(a.tx_blocked - b->tx_blocked)));
		json_object_set_new(p, "sock_tx_drops",
				    json_integer((json_int_t)(a.tx_drops - b->tx_drops)));
		json_object_set_new(p, "sock_tx_errors",
				    json_integer((json_int_t)(a.tx_errors - b->tx_errors)));
	}
	if (s->gate != NULL)
		json_object_set_new(o, "gate", gate_json(s));
	json_object_set_new(o, "role", json_string("switch"));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "uptime_s", json_real((double)(now_ns() - s->start_ns) / 1e9));
	return o;
}

static json_t *info_json(struct sw_state *s)
{
	json_t *o = json_object(), *names = json_array(), *macs = json_array();

	for (int i = 0; i < s->n_ports; i++) {
		uint8_t mac[6];
		char m[18];

		inart_afp_mac(s->ports[i], mac);
		inart_ctl_fmt_mac(mac, m);
		json_array_append_new(names, json_string(s->ifnames[i]));
		json_array_append_new(macs, json_string(m));
	}
	json_object_set_new(o, "role", json_string("switch"));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "ports", names);
	json_object_set_new(o, "macs", macs);
	json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&s->cfg));
	json_object_set_new(o, "installs", json_integer((json_int_t)s->installs));
	json_object_set_new(o, "io", json_string(inart_afp_mode_name(inart_afp_mode(s->ports[0]))));
	return o;
}

static json_t *tables_json(struct sw_state *s, char *why, size_t why_len)
{
	int nl = inart_switch_get_labels(s->sw, NULL, 0),
	    nr = inart_switch_get_routes(s->sw, NULL, 0);
	struct inart_label_entry *l = calloc((size_t)nl + 1, sizeof(*l));
	struct inart_route *r = calloc((size_t)nr + 1, sizeof(*r));
	json_t *o = NULL, *la, *ra;

	if (l == NULL || r == NULL) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	nl = inart_switch_get_labels(s->sw, l, nl);
	nr = inart_switch_get_routes(s->sw, r, nr);
	o = json_object();
	la = json_array();
	ra = json_array();
	for (int i = 0; i < nl; i++)
		json_array_append_new(la, inart_ctl_label_json(&l[i]));
	for (int i = 0; i < nr; i++)
		json_array_append_new(ra, inart_ctl_route_json(&r[i]));
	json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&s->cfg));
	json_object_set_new(o, "labels", la);
	json_object_set_new(o, "routes", ra);
out:
	free(l);
	free(r);
	return o;
}

static int do_install(struct sw_state *s, struct inart_ctl_req *rq, char *why, size_t why_len)
{
	struct inart_sw_update u = {
	    .replace = rq->replace,
	    .n_labels = rq->n_labels,
	    .labels = rq->labels,
	    .n_del_labels = rq->n_del_labels,
	    .del_labels = rq->del_labels,
	    .n_routes = rq->n_routes,
	    .routes = rq->routes,
	};
	struct inart_switch *nsw;
	int rc;

	if (!rq->has_cfg) {
		rc = inart_switch_apply(s->sw, &u, why, why_len);
		if (rc == 0)
			s->installs++;
		return rc;
	}
	if (rq->cfg.n_ports != s->n_ports) {
		snprintf(why, why_len, "config has %d ports, this switch has %d interfaces",
			 rq->cfg.n_ports, s->n_ports);
		return -EINVAL;
	}
	for (int i = 0; i < s->n_ports; i++) {
		static const uint8_t z[6];

		if (memcmp(rq->cfg.ports[i].mac, z, 6) == 0)
			inart_afp_mac(s->ports[i], rq->cfg.ports[i].mac);
	}
	nsw = inart_switch_create(&rq->cfg);
	if (nsw == NULL) {
		snprintf(why, why_len, "config refused by the switch core: %s", strerror(errno));
		return -EINVAL;
	}
	rc = inart_switch_apply(nsw, &u, why, why_len);
	if (rc < 0) {
		inart_switch_destroy(nsw);
		return rc;
	}
	inart_switch_destroy(s->sw);
	s->sw = nsw;
	s->cfg = rq->cfg;
	s->installs++;
	stats_zero(s);
	return 0;
}

/* One control request for this switch (cli_ctl_serve does the rest). */
static int sw_op(void *ctx, struct inart_ctl_req *rq, json_t **data, char *why, size_t why_len)
{
	struct sw_state *s = ctx;
	int rc = 0;

	switch (rq->op) {
	case INART_CTL_INFO:
		*data = info_json(s);
		break;
	case INART_CTL_INSTALL:
		rc = do_install(s, rq, why, why_len);
		if (rc == 0)
			gate_labels(s);
		if (rc == 0)
			inart_log_info("installed %d labels, %d routes, %d deletions%s%s",
				       rq->n_labels, rq->n_routes, rq->n_del_labels,
				       rq->replace ? " (replace)" : "",
				       rq->has_cfg ? " with a new configuration" : "");
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
		stats_reset(s);
		inart_log_info("counters reset");
		break;
	case INART_CTL_LOSE_STATE:
		inart_switch_lose_state(s->sw);
		inart_log_warn("aggregation state dropped on request");
		break;
	default:
		snprintf(why, why_len, "'%s' is a PS request; this is a switch",
			 inart_ctl_op_name(rq->op));
		rc = -EINVAL;
		break;
	}
	return rc;
}

static char *handle(void *ctx, const char *body, size_t len)
{
	const struct sw_state *s = ctx;

	return cli_ctl_serve(body, len, "switch", s->name, sw_op, ctx);
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

static int run(struct sw_state *s, struct inart_ctlsrv *srv, int batch)
{
	struct pollfd pfd[INART_SW_MAX_PORTS + 1];
	uint8_t *data[1024];
	uint16_t len[1024];
	int np = s->n_ports;

	for (int i = 0; i < np; i++)
		pfd[i].fd = inart_afp_fd(s->ports[i]);
	pfd[np].fd = inart_ctlsrv_fd(srv);
	pfd[np].events = POLLIN;
	while (!stop_flag) {
		uint64_t now = now_ns(), dl = inart_switch_next_deadline(s->sw);
		int timeout = 1000, pending = 0, r;

		if (s->gate != NULL && inart_gate_deadline(s->gate, now) < dl)
			dl = inart_gate_deadline(s->gate, now);
		if (dl != UINT64_MAX)
			timeout = dl <= now ? 0 : (int)((dl - now + 999999) / 1000000);
		if (timeout > 1000)
			timeout = 1000;
		for (int i = 0; i < np; i++) {
			int p = inart_afp_pending(s->ports[i]);

			pfd[i].events = POLLIN | (p ? POLLOUT : 0);
			pending += p;
		}
		if (pending && timeout > 1)
			timeout = 1; /* a device that pushed back may not signal POLLOUT */
		r = poll(pfd, (nfds_t)np + 1, timeout);
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
		/* receive until the ready sockets are drained (bounded) */
		for (int round = 0; round < RX_ROUNDS; round++) {
			int got = 0;

			for (int i = 0; i < np; i++) {
				int n;

				if (round == 0 && !(pfd[i].revents & POLLIN))
					continue;
				n = inart_afp_recv(s->ports[i], data, len, batch);
				if (n < 0) {
					inart_log_error("%s: receive: %s", s->ifnames[i],
							strerror(-n));
					continue;
				}
				if (n == 0)
					continue;
				got += n;
				now = now_ns();
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
		now = now_ns();
		if (s->gate != NULL)
			gate_release(s, now);
		if (inart_switch_next_deadline(s->sw) <= now) {
			int n;

			while ((n = inart_switch_tick(s->sw, now, s->out, OUT_MAX)) > 0) {
				emit(s, n);
				for (int k = 0; k < np; k++)
					inart_afp_flush(s->ports[k]);
				if (n < OUT_MAX)
					break;
			}
		}
		for (int k = 0; k < np; k++)
			if (inart_afp_pending(s->ports[k]))
				inart_afp_flush(s->ports[k]);
		if (pfd[np].revents & POLLIN)
			inart_ctlsrv_service(srv);
	}
	return 0;
}

int cmd_switchd(int argc, char **argv)
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
	struct inart_gate_cfg gc = {.tx_loss_ports = UINT64_MAX, .seed = 1};
	int gated = 0;
	const char *cmd = "switchd", *ctl = NULL;
	static struct sw_state st;
	struct sw_state *s = &st;
	struct inart_err err = {{0}};
	struct inart_ctlsrv *srv;
	struct sigaction sa;
	double flush_ms = 10;
	int c, pool = 4096, batch = 64, level = INART_LOG_INFO, stats = 0, json = 0, rc;
	static uint8_t outbuf[OUT_MAX][INART_FRAME_MAX];
	struct inart_afp_opt afo;

	inart_afp_opt_default(&afo);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
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
			ctl = optarg;
			break;
		case O_POOL:
			pool = cli_int(cmd, "--pool-slots", optarg, 1, 1 << 24);
			break;
		case O_FLUSH:
			flush_ms = cli_double(cmd, "--flush-ms", optarg, 0.001, 3600e3);
			break;
		case O_BATCH:
			batch = cli_int(cmd, "--batch", optarg, 1, 1024);
			break;
		case O_IO:
			afo.mode = io_mode(cmd, optarg);
			break;
		case O_LOG:
			level = cli_log_level(cmd, optarg);
			break;
		case O_STATS:
			stats = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_RING:
			afo.rx_frames = cli_int(cmd, "--ring-frames", optarg, 64, 65536);
			break;
		case O_AGG:
			gc.agg_bytes_per_s =
			    cli_double(cmd, "--agg-mbps", optarg, 1e-3, 1e7) * 1e6 / 8;
			gated = 1;
			break;
		case O_RXLOSS:
			gc.rx_loss = cli_double(cmd, "--rx-loss", optarg, 0, 1);
			gated = 1;
			break;
		case O_TXLOSS:
			gc.tx_loss = cli_double(cmd, "--tx-loss", optarg, 0, 1);
			gated = 1;
			break;
		case O_TXPORTS:
			gc.tx_loss_ports = port_mask(cmd, optarg);
			break;
		case O_SEED:
			gc.seed = cli_u64(cmd, "--loss-seed", optarg);
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	rc = cli_ctl_daemon_args(cmd, argc, argv, ctl, stats, json,
				 s->n_ports > 0 || s->name != NULL || gated);
	if (rc >= 0)
		return rc;
	if (s->name == NULL)
		cli_usage_error(cmd, "--name ID is required");
	if (s->n_ports == 0)
		cli_usage_error(cmd, "--port IF[,IF...] is required");

	inart_log_init("inart-switchd", level);
	memset(&s->cfg, 0, sizeof(s->cfg));
	s->cfg.n_ports = s->n_ports;
	s->cfg.pool_slots = pool;
	s->cfg.flush_timeout_ns = (uint64_t)(flush_ms * 1e6);
	afo.batch = batch;
	afo.tx_queue = 4 * batch + OUT_MAX;
	if (afo.tx_frames < afo.tx_queue)
		afo.tx_frames = afo.tx_queue;
	for (int i = 0; i < s->n_ports; i++) {
		s->ports[i] = inart_afp_open(s->ifnames[i], &afo, &err);
		if (s->ports[i] == NULL)
			cli_fail(&err);
		if (afo.mode == INART_AFP_AUTO && inart_afp_mode(s->ports[i]) != INART_AFP_RING)
			inart_log_warn("%s: the kernel refused PACKET_MMAP rings; using "
				       "recvmmsg/sendmmsg",
				       s->ifnames[i]);
		inart_afp_mac(s->ports[i], s->cfg.ports[i].mac);
	}
	for (int i = 0; i < OUT_MAX; i++)
		s->out[i].data = outbuf[i];
	s->sw = inart_switch_create(&s->cfg);
	if (s->sw == NULL)
		cli_failf("switch core: %s", strerror(errno));
	if (gated) {
		gc.n_ports = s->n_ports;
		s->gate = inart_gate_create(&gc, now_ns());
		if (s->gate == NULL)
			cli_failf("loss / aggregation limit: %s", strerror(errno));
	}
	s->start_ns = now_ns();
	srv = inart_ctlsrv_open(ctl, handle, s, &err);
	if (srv == NULL)
		cli_fail(&err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	inart_log_info("switch '%s' up: %d ports (%s), control socket %s", s->name, s->n_ports,
		       inart_afp_mode_name(inart_afp_mode(s->ports[0])), ctl);
	rc = run(s, srv, batch);
	inart_log_info("stopping");
	inart_ctlsrv_close(srv);
	inart_switch_destroy(s->sw);
	inart_gate_destroy(s->gate);
	for (int i = 0; i < s->n_ports; i++)
		inart_afp_close(s->ports[i]);
	free(s->base_trees);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}
