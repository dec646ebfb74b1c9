/*
 * daemon_args: the options both daemons share (daemon_args.h).
 */
#include "cli/daemon_args.h"

#include <stdio.h>
#include <string.h>

#include "cli/ctl.h"
#include "cli/util.h"
#include "io/log.h"

void cli_daemon_args_init(struct cli_daemon_args *a)
{
	memset(a, 0, sizeof(*a));
	inart_daemon_cfg_init(&a->dm);
}

int cli_daemon_getopt(const char *cmd, int argc, char **argv, const struct option *own,
		      struct cli_daemon_args *a)
{
	const struct cli_num tab[] = {
	    {CLI_OPT_NAME, "--name", .s = &a->dm.name},
	    {CLI_OPT_CTL, "--ctl", .s = &a->dm.ctl},
	    {CLI_OPT_CTL_TCP, "--ctl-tcp", .s = &a->dm.tcp},
	    {CLI_OPT_CTL_KEY, "--ctl-key", .s = &a->dm.key_file},
	    {CLI_OPT_BATCH, "--batch", 1, 1024, .i = &a->dm.batch},
	    {CLI_OPT_LOG, "--log-level", .s = NULL}, /* no variable: parsed below */
	    {CLI_OPT_STATS, "--stats", .flag = &a->stats},
	    {CLI_OPT_JSON, "--json", .flag = &a->json},
	    {CLI_OPT_USER, "--user", .s = &a->dm.user},
	    {CLI_OPT_CHECK, "--check-config", .flag = &a->check},
	    {CLI_OPT_DEPLOYMENT, "--deployment", .s = &a->dm.deployment},
	};
	int c;

	while ((c = cli_getopt_rows(cmd, argc, argv, ":h", own, tab,
				    sizeof(tab) / sizeof(tab[0]))) == CLI_OPT_LOG)
		a->dm.level = cli_log_level(cmd, optarg);
	return c;
}

int cli_daemon_check(const char *cmd, int argc, char **argv, const struct cli_daemon_args *a,
		     int others)
{
	const struct inart_daemon_cfg *d = &a->dm;

	if (optind < argc)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (d->ctl == NULL)
		cli_usage_error(cmd, "--ctl PATH is required");
	if (a->stats) {
		if (others || d->name != NULL || d->tcp != NULL || d->key_file != NULL || a->check ||
		    d->deployment != NULL)
			cli_usage_error(cmd, "--stats takes only --ctl (and --json)");
		return cli_ctl_print_stats(d->ctl, a->json);
	}
	if (a->json)
		cli_usage_error(cmd, "--json goes with --stats");
	if ((d->tcp == NULL) != (d->key_file == NULL))
		cli_usage_error(cmd, "--ctl-tcp and --ctl-key go together");
	if (d->deployment != NULL && d->name == NULL)
		cli_usage_error(cmd, "--deployment FILE goes with --name ID (its entry)");
	return -1;
}

int cli_daemon_checked(const char *cmd, const struct cli_daemon_args *a, int rc,
		       const struct inart_err *err)
{
	if (a->check) {
		if (rc < 0) {
			fprintf(stderr, "inart: %s: %s\n", cmd, err->msg);
			return EXIT_INVALID;
		}
		printf("%s: configuration OK\n", cmd);
		return EXIT_OK;
	}
	if (rc < 0)
		cli_fail(err);
	return -1;
}
