/*
 * cmd_switchd: `inart switchd` -- the command line of the switch daemon:
 * the options into a struct inart_switchd_cfg, then daemon/switchd runs it
 * (--stats and --check-config answer here).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/daemon_args.h"
#include "cli/util.h"
#include "daemon/switchd.h"
#include "dp/shard.h"

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
    "  --cores N            pinned worker threads, a switch shard each (default 1;\n"
    "                       with xdp every port needs N queues, one per worker)\n"
    "  --io MODE            xdp (AF_XDP, plain IPv4 forwarded by an XDP program;\n"
    "                       CAP_BPF, CAP_NET_ADMIN), ring (PACKET_MMAP), mmsg\n"
    "                       (recvmmsg/sendmmsg) or auto: xdp, ring, mmsg (default);\n"
    "                       udp: frames over loopback UDP, each --port LPORT:PPORT\n"
    "  --agg WHERE          kernel (InArt aggregated by an XDP program, on the CPU\n"
    "                       its (job, tree, slot) is steered to; needs --io xdp),\n"
    "                       user (the user-space core; default) or auto: kernel\n"
    "                       where the kernel accepts the program and runs its\n"
    "                       ticks (live frames), --io is xdp, --cores 1 and no\n"
    "                       --rx-loss or --tx-loss, else user.\n"
    "                       With --shape what the kernel builds for a shaped port\n"
    "                       is sent through its shaper\n"
    "  --log-level L        error, warn, info (default) or debug\n"
    "  --user U             after opening its sockets, run as user U without\n"
    "                       capabilities (default nobody; root: stay root)\n"
    "  --check-config       check the options and interfaces, start nothing:\n"
    "                       exit 0 if good, 1 with the error\n"
    "  --deployment FILE    check this switch's entry (--name) in the deployment\n"
    "                       too: ports, their interfaces (\"if\"), control socket\n"
    "  --ring-frames N      receive ring frames per port (default 4096, 2 KB each)\n"
    "  --shape P=RATE[,burst=SIZE][,limit=SIZE]\n"
    "                       shape port P's egress (a port number or one of the\n"
    "                       --port interfaces; repeatable) with a token bucket as\n"
    "                       tc's tbf: RATE in bit/s (suffix kbit, mbit, gbit),\n"
    "                       burst (default 4 ms at RATE, at least 3028) and queue\n"
    "                       limit (default 200 ms at RATE, at least 64k) in bytes\n"
    "                       (suffix k, m: 1024-based); a full queue drops the\n"
    "                       frame.  Every back end; with xdp a shaped port takes\n"
    "                       no plain IPv4 forwarded in the kernel (--cores 1)\n"
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
    "Tests:\n"
    "  --test-faults        serve the control request test_fault (authenticated\n"
    "                       peers only, like every request): shard K refuses the\n"
    "                       next install with a given errno (docs/dataplane.md,\n"
    "                       \"Shards and steering\"); off without this option\n"
    "\n"
    "Exit status: 0 stopped by SIGINT/SIGTERM, 1 setup failure (interface,\n"
    "socket), 2 usage error.\n";

static void add_ports(const char *cmd, struct inart_switchd_cfg *c, char *list)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (c->n_ports == INART_SW_MAX_PORTS)
			cli_usage_error(cmd, "--port: more than %d interfaces", INART_SW_MAX_PORTS);
		if (*tok == '\0')
			continue;
		for (int i = 0; i < c->n_ports; i++)
			if (strcmp(c->ports[i], tok) == 0)
				cli_usage_error(cmd, "--port: interface '%s' given twice", tok);
		c->ports[c->n_ports++] = tok;
	}
}

/* Parse the options into c.  Returns an exit status when the command is
 * done (--help), -1 to go on; exits 2 on a usage error. */
/* A number with a unit suffix from units[] (NULL-terminated name, scale
 * pairs; "" for none), case-insensitive: the value, or -1. */
static double with_unit(const char *s, const char *const *names, const double *scales)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0) || v > 1e15)
		return -1;
	for (int i = 0; names[i] != NULL; i++)
		if (strcasecmp(end, names[i]) == 0)
			return v * scales[i];
	return -1;
}

/* --shape P=RATE[,burst=SIZE][,limit=SIZE] (P resolved against --port at the
 * end: shape_port). */
static void add_shape(const char *cmd, char *arg, struct inart_switchd_cfg *c, char **port_of)
{
	static const char *const rate_u[] = {"", "bit", "kbit", "mbit", "gbit", NULL};
	static const double rate_s[] = {1, 1, 1e3, 1e6, 1e9};
	static const char *const size_u[] = {"", "b", "k", "kb", "m", "mb", NULL};
	static const double size_s[] = {1, 1, 1024, 1024, 1048576, 1048576};
	char *eq = strchr(arg, '='), *save = NULL, *tok;
	struct inart_shaper_cfg sc = {0};
	double r;
	int i;

	if (eq == NULL || eq == arg)
		cli_usage_error(cmd, "--shape '%s': PORT=RATE[,burst=SIZE][,limit=SIZE]", arg);
	*eq = '\0';
	tok = strtok_r(eq + 1, ",", &save);
	r = tok ? with_unit(tok, rate_u, rate_s) : -1;
	if (!(r >= 1 && r <= (double)INART_SHAPER_RATE_MAX))
		cli_usage_error(cmd, "--shape %s: rate '%s' is not 1 bit/s .. 1 Tbit/s", arg,
				tok ? tok : "");
	sc.rate_bps = (uint64_t)(r + 0.5);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		int burst = strncmp(tok, "burst=", 6) == 0;
		double v;

		if (!burst && strncmp(tok, "limit=", 6) != 0)
			cli_usage_error(cmd, "--shape %s: '%s' is not burst=SIZE or limit=SIZE",
					arg, tok);
		v = with_unit(tok + 6, size_u, size_s);
		if (!(v >= 1 && v <= INART_SHAPER_SIZE_MAX))
			cli_usage_error(cmd, "--shape %s: '%s' is not 1 .. 1e9 bytes", arg, tok);
		if (burst)
			sc.burst = (uint32_t)v;
		else
			sc.limit = (uint32_t)v;
	}
	for (i = 0; i < INART_SW_MAX_PORTS && port_of[i] != NULL; i++)
		if (strcmp(port_of[i], arg) == 0)
			cli_usage_error(cmd, "--shape: port '%s' given twice", arg);
	if (i == INART_SW_MAX_PORTS)
		cli_usage_error(cmd, "--shape: more than %d ports", INART_SW_MAX_PORTS);
	port_of[i] = arg;
	c->shape[i] = sc; /* moved to its port by shape_ports */
}

/* The --shape entries (in c->shape[k], named port_of[k]) to their ports. */
static void shape_ports(const char *cmd, struct inart_switchd_cfg *c, char *const *port_of)
{
	struct inart_shaper_cfg by_port[INART_SW_MAX_PORTS] = {{0}};

	for (int k = 0; k < INART_SW_MAX_PORTS && port_of[k] != NULL; k++) {
		char *end;
		long p = strtol(port_of[k], &end, 10);

		if (*end != '\0' || end == port_of[k]) {
			p = -1;
			for (int i = 0; i < c->n_ports; i++)
				if (strcmp(c->ports[i], port_of[k]) == 0)
					p = i;
		}
		if (p < 0 || p >= c->n_ports)
			cli_usage_error(cmd,
					"--shape: '%s' is not a port (0..%d or a --port "
					"interface)",
					port_of[k], c->n_ports - 1);
		if (by_port[p].rate_bps != 0)
			cli_usage_error(cmd, "--shape: port %ld shaped twice", p);
		by_port[p] = c->shape[k];
	}
	memcpy(c->shape, by_port, sizeof(by_port));
}

static int switchd_options(const char *cmd, int argc, char **argv, struct inart_switchd_cfg *c,
			   struct cli_daemon_args *a)
{
	// clang-format off
	enum { O_PORT = 1, O_POOL, O_FLUSH, O_IO, O_RING, O_AGG, O_RXLOSS, O_TXLOSS, O_TXPORTS, O_SEED, O_CORES, O_AGGW, O_SHAPE, O_FAULTS };
	// clang-format on
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
	    {"cores", required_argument, NULL, O_CORES},
	    {"agg", required_argument, NULL, O_AGGW},
	    {"shape", required_argument, NULL, O_SHAPE},
	    {"test-faults", no_argument, NULL, O_FAULTS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *shape_of[INART_SW_MAX_PORTS] = {NULL};
	int o;

	inart_switchd_cfg_init(c);
	cli_daemon_args_init(a);
	cli_getopt_reset();
	while ((o = cli_daemon_getopt(cmd, argc, argv, longopts, a)) != -1) {
		switch (o) {
		case 'h':
			fputs(cmd_switchd_help, stdout);
			return EXIT_OK;
		case O_PORT:
			add_ports(cmd, c, optarg);
			break;
		case O_POOL:
			c->pool_slots = cli_int(cmd, "--pool-slots", optarg, 1, 1 << 24);
			break;
		case O_FLUSH:
			c->flush_ms = cli_double(cmd, "--flush-ms", optarg, 0.001, 3600e3);
			break;
		case O_IO:
			if (inart_afp_mode_parse(optarg, &c->afo.mode) < 0)
				cli_usage_error(cmd, "--io: '%s' is not xdp, ring, mmsg or auto",
						optarg);
			break;
		case O_AGGW:
			if (strcmp(optarg, "auto") == 0)
				c->agg = INART_SWD_AGG_AUTO;
			else if (strcmp(optarg, "user") == 0)
				c->agg = INART_SWD_AGG_USER;
			else if (strcmp(optarg, "kernel") == 0)
				c->agg = INART_SWD_AGG_KERNEL;
			else
				cli_usage_error(cmd, "--agg: '%s' is not kernel, user or auto",
						optarg);
			break;
		case O_RING:
			c->afo.rx_frames = cli_int(cmd, "--ring-frames", optarg, 64, 65536);
			break;
		case O_AGG:
			c->gc.agg_bytes_per_s =
			    cli_double(cmd, "--agg-mbps", optarg, 1e-3, 1e7) * 1e6 / 8;
			c->gated = 1;
			break;
		case O_RXLOSS:
			c->gc.rx_loss = cli_double(cmd, "--rx-loss", optarg, 0, 1);
			c->gated = 1;
			break;
		case O_TXLOSS:
			c->gc.tx_loss = cli_double(cmd, "--tx-loss", optarg, 0, 1);
			c->gated = 1;
			break;
		case O_TXPORTS:
			c->gc.tx_loss_ports =
			    cli_port_mask(cmd, "--tx-loss-ports", optarg, INART_SW_MAX_PORTS);
			break;
		case O_SEED:
			c->gc.seed = cli_u64(cmd, "--loss-seed", optarg);
			break;
		case O_CORES:
			c->cores = cli_int(cmd, "--cores", optarg, 1, INART_SHARD_MAX);
			break;
		case O_SHAPE:
			add_shape(cmd, optarg, c, shape_of);
			break;
		case O_FAULTS:
			c->test_faults = 1;
			break;
		default:
			cli_getopt_error(cmd, o, argv);
		}
	}
	shape_ports(cmd, c, shape_of);
	return -1;
}

int cmd_switchd(int argc, char **argv)
{
	const char *cmd = "switchd";
	struct inart_switchd_cfg c;
	struct cli_daemon_args a;
	struct inart_err err = {{0}};
	int rc;

	rc = switchd_options(cmd, argc, argv, &c, &a);
	if (rc >= 0)
		return rc;
	rc = cli_daemon_check(cmd, argc, argv, &a, c.n_ports > 0 || c.gated);
	if (rc >= 0)
		return rc;
	if (a.dm.name == NULL)
		cli_usage_error(cmd, "--name ID is required");
	if (c.n_ports == 0)
		cli_usage_error(cmd, "--port IF[,IF...] is required");
	c.dm = a.dm;
	rc = cli_daemon_checked(cmd, &a, inart_switchd_cfg_check(&c, &err), &err);
	if (rc >= 0)
		return rc;
	if (inart_switchd_run(&c, &err) < 0)
		cli_fail(&err);
	return EXIT_OK;
}
