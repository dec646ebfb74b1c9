/*
 * cmd_switchd: `inart switchd` -- the software INA switch on real
 * interfaces.  The sans-I/O switch core (dp/switch) runs over one AF_PACKET
 * socket per interface (port i = the i-th --port), in the packet thread:
 * poll() on the packet sockets and the control mailbox, with a timeout from
 * inart_switch_next_deadline for partial-aggregate flushes.  Frames are
 * received and sent in batches; nothing is allocated per frame.
 *
 * Control requests (ctlproto/ctlmsg) are served by a control thread of their own
 * (ctlproto/ctlthread; what each request does is cli/switchd_ctl.c): it parses a
 * request, builds what it installs aside (a new core for an install with a
 * configuration, else a new table set from the tables in service:
 * inart_switch_tables_build) and has the packet thread
 * put it in service with one command (a pointer swap) between two batches,
 * so a large install never stalls forwarding.  Installs are transactions
 * (daemon/txn: prepare, commit, abort, rollback under an install identity).
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

#include "cli/ctl.h"
#include "ctlproto/ctlmsg.h"
#include "common/clock.h"
#include "dp/gate.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "io/afpacket.h"
#include "ctlproto/ctlthread.h"
#include "io/log.h"
#include "cli/switchd_ctl.h"
#include "cli/util.h"

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

#define RX_ROUNDS 8

static void emit(struct sw_state *s, int n)
{
	for (int i = 0; i < n; i++) {
		const struct inart_frame *f = &s->out[i];

		if (f->port < s->n_ports && !(s->gate && inart_gate_tx_drop(s->gate, f->port)))
			inart_afp_queue(s->ports[f->port], f->data, f->len);
	}
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
	struct cli_daemon_args dm; /* --name, --ctl, --batch, ... (ctl.h) */
	struct inart_gate_cfg gc;
	int gated, pool;
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
		O_PORT = 1,
		O_POOL,
		O_FLUSH,
		O_IO,
		O_RING,
		O_AGG,
		O_RXLOSS,
		O_TXLOSS,
		O_TXPORTS,
		O_SEED,
	};
	static const struct option longopts[] = {
	    {"port", required_argument, NULL, O_PORT},
	    {"pool-slots", required_argument, NULL, O_POOL},
	    {"flush-ms", required_argument, NULL, O_FLUSH},
	    {"io", required_argument, NULL, O_IO},
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
	cli_daemon_args_init(&a->dm);
	inart_afp_opt_default(&a->afo);
	cli_getopt_reset();
	while ((c = cli_daemon_getopt(cmd, argc, argv, longopts, &a->dm)) != -1) {
		switch (c) {
		case 'h':
			fputs(cmd_switchd_help, stdout);
			return EXIT_OK;
		case O_PORT:
			add_ports(cmd, s, optarg);
			break;
		case O_POOL:
			a->pool = cli_int(cmd, "--pool-slots", optarg, 1, 1 << 24);
			break;
		case O_FLUSH:
			a->flush_ms = cli_double(cmd, "--flush-ms", optarg, 0.001, 3600e3);
			break;
		case O_IO:
			a->afo.mode = io_mode(cmd, optarg);
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
	afo->batch = a->dm.batch;
	afo->tx_queue = 4 * a->dm.batch + OUT_MAX;
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
	struct cli_ctl_daemon cd = {
	    .role = "switch", .other = "PS", .op = cli_switchd_op, .ctx = &st};
	struct switchd_args a;
	int rc;

	rc = switchd_options(cmd, argc, argv, s, &a);
	if (rc >= 0)
		return rc;
	rc = cli_daemon_check(cmd, argc, argv, &a.dm, s->n_ports > 0 || a.gated);
	if (rc >= 0)
		return rc;
	s->name = a.dm.name;
	if (s->name == NULL)
		cli_usage_error(cmd, "--name ID is required");
	if (s->n_ports == 0)
		cli_usage_error(cmd, "--port IF[,IF...] is required");

	inart_log_init("inart-switchd", a.dm.level);
	switchd_open(s, &a);
	s->start_ns = inart_now_ns();
	s->txn.ctx = s;
	s->txn.swap = cli_switchd_obj_swap;
	s->txn.destroy = cli_switchd_obj_destroy;
	s->ctl = cli_daemon_start(cmd, &a.dm, &cd);
	inart_log_info("switch '%s' up: %d ports (%s), control socket %s", s->name, s->n_ports,
		       inart_afp_mode_name(inart_afp_mode(s->ports[0])), a.dm.ctl);
	rc = run(s, a.dm.batch);
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
