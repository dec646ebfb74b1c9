/*
 * ctl: the control-socket code shared by the subcommands (implemented in
 * cmd_ctl.c): the client side used by `inart ctl`, `inart switchd --stats`
 * and `inart ps --stats`, and the frame of request handling common to the
 * two daemons, switchd and ps.
 */
#ifndef INART_CLI_CTL_H
#define INART_CLI_CTL_H

#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "ctlproto/ctlmsg.h"
#include "bridge/install.h"
#include "ctlproto/ctlauth.h"
#include "ctlproto/ctlsock.h"
#include "ctlproto/ctlthread.h"
#include "bridge/deploy.h"

#define CLI_CTL_TIMEOUT_MS 10000

/* Send req to the daemon at path.  0 and *reply (new reference) if it
 * accepted; -errno with the reason in why otherwise (-EPERM: refused). */
int cli_ctl_call(const char *path, const struct inart_ctl_req *req, json_t **reply, char *why,
		 size_t why_len);

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

/* The options of both daemons (switchd, ps): --name ID, --ctl PATH, the
 * optional TCP control listener --ctl-tcp HOST:PORT with --ctl-key FILE
 * (ctlproto/ctlauth.h; the UNIX socket --ctl stays), --batch N (1..1024),
 * --log-level, --stats, --json. */
enum {
	CLI_OPT_NAME = 2100,
	CLI_OPT_CTL,
	CLI_OPT_CTL_TCP,
	CLI_OPT_CTL_KEY,
	CLI_OPT_BATCH,
	CLI_OPT_LOG,
	CLI_OPT_STATS,
	CLI_OPT_JSON,
};
struct cli_daemon_args {
	const char *name, *ctl;
	const char *tcp, *key_file; /* --ctl-tcp, --ctl-key */
	int batch, level, stats, json;
	struct inart_ctl_key key; /* what key_file holds (cli_daemon_start) */
	struct inart_ctlsrv_opt opt;
};
/* Defaults: batch 64, log level info, nothing else given. */
void cli_daemon_args_init(struct cli_daemon_args *a);
/* getopt_long (after cli_getopt_reset) over the daemon options and the
 * command's own (own: NULL-terminated, --help among them; cli_getopt_rows): a
 * daemon option is handled here (into a; usage errors exit 2), anything
 * else is returned as getopt_long returns it (-1 at the end). */
int cli_daemon_getopt(const char *cmd, int argc, char **argv, const struct option *own,
		      struct cli_daemon_args *a);
/* The checks after a daemon's options: no operands, --ctl PATH required,
 * --json only with --stats, and --stats with nothing but --ctl and --json
 * (others: one of the daemon's own options was given; --name and the TCP
 * options count too); usage errors exit 2.  With --stats it prints the
 * counters (cli_ctl_print_stats) and returns the exit status; otherwise -1:
 * go on and run the daemon. */
int cli_daemon_check(const char *cmd, int argc, char **argv, const struct cli_daemon_args *a,
		     int others);

/* Daemon side.  The work of one request addressed to this daemon: 0 with the
 * reply's data in *data (stolen; NULL = none), or -errno with the reason in
 * why (then *data stays NULL). */
typedef int cli_ctl_op_fn(void *ctx, struct inart_ctl_req *rq, json_t **data, char *why,
			  size_t why_len);

/* A daemon as its control handler sees it.  op returns -EOPNOTSUPP for a
 * request of the other daemon ("'OP' is a OTHER request; this is a ROLE"). */
struct cli_ctl_daemon {
	const char *role;  /* "switch", "PS" */
	const char *other; /* the other daemon's role */
	const char *name;  /* its --name (NULL: none) */
	cli_ctl_op_fn *op;
	void *ctx; /* op's */
};

/* A daemon's control handler (inart_ctl_handler_fn; daemon: a struct
 * cli_ctl_daemon): parse body, refuse a request addressed to another node
 * ("this is ROLE 'NAME', not 'X'") or meant for the other daemon, answer
 * log_level, hand anything else to op; a refusal is logged.  Returns the
 * reply to send. */
char *cli_ctl_serve(void *daemon, const char *body, size_t len);

/* Set by SIGINT and SIGTERM once cli_daemon_start ran: a daemon's loop
 * ends when it is set. */
extern volatile sig_atomic_t cli_daemon_stop;

/* Serve d's control socket (--ctl, and --ctl-tcp with --ctl-key if given)
 * on a thread (ctlproto/ctlthread.h) and let SIGINT and SIGTERM set
 * cli_daemon_stop (SIGPIPE ignored).  A usage error if only one of the TCP
 * options was given; exits 1 if the key file is refused or the socket does
 * not open. */
struct inart_ctlthread *cli_daemon_start(const char *cmd, struct cli_daemon_args *a,
					 struct cli_ctl_daemon *d);

#endif
