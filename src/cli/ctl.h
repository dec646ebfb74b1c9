/*
 * ctl: the control-socket code shared by the subcommands (implemented in
 * cmd_ctl.c): the client side used by `inart ctl`, `inart switchd --stats`
 * and `inart ps --stats`, and the frame of request handling common to the
 * two daemons, switchd and ps.
 */
#ifndef INART_CLI_CTL_H
#define INART_CLI_CTL_H

#include <jansson.h>
#include <signal.h>

#include "bridge/ctlmsg.h"

#define CLI_CTL_TIMEOUT_MS 10000

/* Send req to the daemon at path.  0 and *reply (new reference) if it
 * accepted; -errno with the reason in why otherwise (-EPERM: refused). */
int cli_ctl_call(const char *path, const struct inart_ctl_req *req, json_t **reply, char *why,
		 size_t why_len);

/* `stats`: print the counters of the switch or PS at path (a table, or the
 * JSON reply with json = 1).  Exit status for the caller. */
int cli_ctl_print_stats(const char *path, int json);

/* The checks after a daemon's options: no operands, --ctl PATH required,
 * --json only with --stats, and --stats with nothing but --ctl and --json
 * (others: another daemon option was given); usage errors exit 2.  With
 * --stats it prints the counters (cli_ctl_print_stats) and returns the exit
 * status; otherwise -1: go on and run the daemon. */
int cli_ctl_daemon_args(const char *cmd, int argc, char **argv, const char *ctl, int stats,
			int json, int others);

/* Daemon side.  The work of one request addressed to this daemon: 0 with the
 * reply's data in *data (stolen; NULL = none), or -errno with the reason in
 * why (then *data stays NULL). */
typedef int cli_ctl_op_fn(void *ctx, struct inart_ctl_req *rq, json_t **data, char *why,
			  size_t why_len);

/* A daemon's control handler: parse body, refuse a request addressed to
 * another node ("this is ROLE 'NAME', not 'X'"; name may be NULL), answer
 * log_level, hand anything else to op; a refusal is logged.  Returns the
 * reply to send (inart_ctl_handler_fn). */
char *cli_ctl_serve(const char *body, size_t len, const char *role, const char *name,
		    cli_ctl_op_fn *op, void *ctx);

/* Set by SIGINT and SIGTERM once cli_daemon_signals ran: a daemon's loop
 * ends when it is set. */
extern volatile sig_atomic_t cli_daemon_stop;

/* SIGINT and SIGTERM set cli_daemon_stop; SIGPIPE is ignored. */
void cli_daemon_signals(void);

#endif
