/*
 * daemon_args: the command-line options both daemons (`inart switchd`,
 * `inart ps`) share, parsed into their struct inart_daemon_cfg
 * (daemon/frame.h): --name, --ctl, --ctl-tcp, --ctl-key, --batch,
 * --log-level, --user, --check-config, --deployment, --stats, --json.
 */
#ifndef INART_CLI_DAEMON_ARGS_H
#define INART_CLI_DAEMON_ARGS_H

#include <getopt.h>

#include "daemon/frame.h"

enum {
	CLI_OPT_NAME = 2100,
	CLI_OPT_CTL,
	CLI_OPT_CTL_TCP,
	CLI_OPT_CTL_KEY,
	CLI_OPT_BATCH,
	CLI_OPT_LOG,
	CLI_OPT_STATS,
	CLI_OPT_JSON,
	CLI_OPT_USER,
	CLI_OPT_CHECK,
	CLI_OPT_DEPLOYMENT,
};
struct cli_daemon_args {
	struct inart_daemon_cfg dm;
	int stats, json, check; /* --stats, --json, --check-config */
};
/* Defaults: inart_daemon_cfg_init, nothing else given. */
void cli_daemon_args_init(struct cli_daemon_args *a);
/* getopt_long (after cli_getopt_reset) over the daemon options and the
 * command's own (own: NULL-terminated, --help among them; cli_getopt_rows): a
 * daemon option is handled here (into a; usage errors exit 2), anything
 * else is returned as getopt_long returns it (-1 at the end). */
int cli_daemon_getopt(const char *cmd, int argc, char **argv, const struct option *own,
		      struct cli_daemon_args *a);
/* The checks after a daemon's options: no operands, --ctl PATH required,
 * --json only with --stats, and --stats with nothing but --ctl and --json
 * (others: one of the daemon's own options was given; --name, --deployment
 * and the TCP options count too), the TCP options together, --deployment
 * with --name; usage errors exit 2.  With
 * --stats it prints the counters (cli_ctl_print_stats) and returns the exit
 * status; otherwise -1: go on. */
int cli_daemon_check(const char *cmd, int argc, char **argv, const struct cli_daemon_args *a,
		     int others);
/* After the daemon's own checks: with --check-config, print "CMD:
 * configuration OK" (rc 0) or "inart: CMD: the error" and return the exit
 * status (0 or 1); without it, an error (rc < 0) exits 1; otherwise -1. */
int cli_daemon_checked(const char *cmd, const struct cli_daemon_args *a, int rc,
		       const struct inart_err *err);

#endif
