/*
 * cmd_ps: `inart ps` -- the command line of the parameter server daemon:
 * the options into a struct inart_psd_cfg, then daemon/psd runs it (--stats
 * and --check-config answer here).
 */
#include <stdlib.h>

#include "cli/daemon_args.h"
#include "cli/util.h"
#include "daemon/psd.h"
#include "dp/addr.h"
#include "dp/shard.h"

const char cmd_ps_help[] =
    "usage: inart ps --bind IP --ctl PATH [OPTIONS]\n"
    "       inart ps --stats --ctl PATH [--json]\n"
    "\n"
    "Run a parameter server: it receives InArt contributions on UDP IP:47470,\n"
    "combines them so that every worker counts exactly once per chunk, and sends\n"
    "the results down its trees.  Trees are configured over the UNIX control\n"
    "socket PATH ('inart ctl install'); docs/programs.md has the protocol.\n"
    "With --stats, print the counters of the PS running at PATH and exit.\n"
    "\n"
    "Options:\n"
    "  --bind IP          address to bind (this PS's address in the deployment)\n"
    "  --ctl PATH         control socket\n"
    "  --ctl-tcp H:P      also listen for control on TCP (HOST:PORT),\n"
    "                     clients authenticated with the key of\n"
    "  --ctl-key FILE     FILE (mode 600; docs/programs.md)\n"
    "  --name ID          node id of this PS (checked against the requests)\n"
    "  --batch N          datagrams per recvmmsg/sendmmsg (default 64)\n"
    "  --io MODE          udp (default): a UDP socket; xdp: AF_XDP on the\n"
    "                     interface holding --bind IP (InArt only; ARP, ICMP,\n"
    "                     TCP stay the kernel's), exit 1 if it cannot be had;\n"
    "                     auto: xdp, else udp (one log line says why)\n"
    "  --cores N          N pinned packet threads, a PS shard each, on UDP\n"
    "                     sockets the kernel steers by slot (default 1)\n"
    "  --log-level L      error, warn, info (default) or debug\n"
    "  --user U           after opening its sockets, run as user U without\n"
    "                     capabilities (default nobody; root: stay root)\n"
    "  --check-config     check the options, start nothing: exit 0 if good,\n"
    "                     1 with the error\n"
    "  --deployment FILE  check this PS's entry (--name) in the deployment file\n"
    "                     too: its address (--bind), its control socket\n"
    "  --stats            print the counters of a running PS and exit\n"
    "  --json             with --stats: the JSON reply\n"
    "\n"
    "Exit status: 0 stopped by SIGINT/SIGTERM, 1 setup failure, 2 usage error.\n";

int cmd_ps(int argc, char **argv)
{
	enum { O_BIND = 1, O_IO, O_CORES };
	static const struct option longopts[] = {
	    {"bind", required_argument, NULL, O_BIND},
	    {"io", required_argument, NULL, O_IO},
	    {"cores", required_argument, NULL, O_CORES},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "ps", *bind_s = NULL;
	struct inart_psd_cfg c = {0};
	struct inart_err err = {{0}};
	struct cli_daemon_args a;
	int o, rc;

	cli_daemon_args_init(&a);
	cli_getopt_reset();
	while ((o = cli_daemon_getopt(cmd, argc, argv, longopts, &a)) != -1) {
		switch (o) {
		case 'h':
			fputs(cmd_ps_help, stdout);
			return EXIT_OK;
		case O_BIND:
			bind_s = optarg;
			if (inart_addr_parse_ip(optarg, &c.bind_ip) < 0)
				cli_usage_error(cmd, "--bind: '%s' is not an IPv4 address", optarg);
			break;
		case O_IO:
			if (inart_psd_io_parse(optarg, &c.io) < 0)
				cli_usage_error(cmd, "--io: '%s' is not udp, xdp or auto", optarg);
			break;
		case O_CORES:
			c.cores = cli_int(cmd, "--cores", optarg, 1, INART_SHARD_MAX);
			break;
		default:
			cli_getopt_error(cmd, o, argv);
		}
	}
	rc = cli_daemon_check(cmd, argc, argv, &a, bind_s != NULL);
	if (rc >= 0)
		return rc;
	if (bind_s == NULL)
		cli_usage_error(cmd, "--bind IP is required");
	c.dm = a.dm;
	rc = cli_daemon_checked(cmd, &a, inart_psd_cfg_check(&c, &err), &err);
	if (rc >= 0)
		return rc;
	if (inart_psd_run(&c, &err) < 0)
		cli_fail(&err);
	return EXIT_OK;
}
