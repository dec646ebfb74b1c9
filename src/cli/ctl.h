/*
 * ctl: the control-socket code shared by the subcommands (implemented in
 * cmd_ctl.c): the client side used by `inart ctl`, `inart switchd --stats`
 * and `inart ps --stats` (the daemons' side is daemon/frame).
 */
#ifndef INART_CLI_CTL_H
#define INART_CLI_CTL_H

#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "common/err.h"
#include "ctlproto/ctlmsg.h"
#include "bridge/install.h"
#include "ctlproto/ctlauth.h"
#include "ctlproto/ctlsock.h"
#include "ctlproto/ctlthread.h"
#include "bridge/deploy.h"

#define CLI_CTL_TIMEOUT_MS 10000

/* Send req to the daemon at path.  0 and *reply (new reference) if it
 * accepted; -errno with the reason in err otherwise (-EPERM: refused). */
int cli_ctl_call(const char *path, const struct inart_ctl_req *req, json_t **reply,
		 struct inart_err *err);

/* `stats`: print the counters of the switch or PS at path (a table, or the
 * JSON reply with json = 1).  Exit status for the caller. */
int cli_ctl_print_stats(const char *path, int json);

/* The deployment options of `ctl install` and `controller`: --deploy FILE |
 * --auto-deploy, --ctl-dir DIR, --learn-macs, --restart-jobs, --dry-run. */
enum {
	CLI_OPT_DEPLOY = 2000,
	CLI_OPT_AUTO_DEPLOY,
	CLI_OPT_CTL_DIR,
	CLI_OPT_LEARN,
	CLI_OPT_RESTART,
	CLI_OPT_DRY,
};
struct cli_deploy_args {
	const char *deploy, *ctl_dir; /* ctl_dir default /run/inart */
	int aut, learn, restart, dry;
};

void cli_deploy_args_init(struct cli_deploy_args *a);
/* The rows of the deployment options (cli_getopt_rows, util.h), setting a:
 * written to rows[0..CLI_DEPLOY_ROWS). */
enum { CLI_DEPLOY_ROWS = 6 };
struct cli_num;
void cli_deploy_rows(struct cli_deploy_args *a, struct cli_num *rows);
/* After the options of a command that installs a plan (ctl install,
 * controller): exactly the operands TOPO JOBS PLAN, and exactly one of
 * --deploy and --auto-deploy; what prefixes the messages ("install: " or
 * ""); usage errors exit 2. */
void cli_deploy_check(const char *cmd, const char *what, int argc, char **argv,
		      const struct cli_deploy_args *a);
/* The deployment (and *ctl: the sockets it names) and its data-plane
 * settings over the defaults into opt; exits 1 on an error. */
struct inart_deploy *cli_deploy_load(const struct cli_deploy_args *a, const struct inart_topo *t,
				     char ***ctl, struct inart_install_opt *opt);

/* The install itself (`ctl install`, the controller): daemon/installer.h. */

#endif
