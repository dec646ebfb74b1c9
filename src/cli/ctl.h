/*
 * ctl: the control-socket client side shared by `inart ctl`, `inart switchd
 * --stats` and `inart ps --stats` (implemented in cmd_ctl.c).
 */
#ifndef INART_CLI_CTL_H
#define INART_CLI_CTL_H

#include <jansson.h>

#include "dp/ctlmsg.h"

#define CLI_CTL_TIMEOUT_MS 10000

/* Send req to the daemon at path.  0 and *reply (new reference) if it
 * accepted; -errno with the reason in why otherwise (-EPERM: refused). */
int cli_ctl_call(const char *path, const struct inart_ctl_req *req, json_t **reply, char *why,
		 size_t why_len);

/* `stats`: print the counters of the switch or PS at path (a table, or the
 * JSON reply with json = 1).  Exit status for the caller. */
int cli_ctl_print_stats(const char *path, int json);

#endif
