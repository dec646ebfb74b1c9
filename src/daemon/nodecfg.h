/*
 * nodecfg: a daemon's configuration checked against its own entry in the
 * deployment file (`inart switchd|ps --deployment FILE`, with
 * --check-config or before starting): the entry of its --name exists and is
 * of its kind, and what both name agree -- a switch's ports (as many as
 * --port interfaces; a port's "if", when given, an interface that exists
 * and the --port interface at its number), a PS's address (--bind), the
 * control socket ("ctl": --ctl, or tcp:HOST:PORT: --ctl-tcp).  Errors are
 * located: "FILE:LINE:COL: ..." for JSON syntax, else "FILE: nodes.ID...:"
 * (the JSON path of the value at fault) and what it disagrees with.
 */
#ifndef INART_DAEMON_NODECFG_H
#define INART_DAEMON_NODECFG_H

#include <stdint.h>

#include "common/err.h"
#include "daemon/frame.h"
#include "io/afpacket.h"

/* The switch's: dm (dm->deployment, dm->name set), its --port interfaces
 * ports[0..n) opened with back end mode.  0 or -errno with err. */
int inart_nodecfg_check_switch(const struct inart_daemon_cfg *dm, const char *const *ports, int n,
			       enum inart_afp_mode mode, struct inart_err *err);

/* The PS's: dm, its --bind address (host order; 0: any, not compared).
 * 0 or -errno with err. */
int inart_nodecfg_check_ps(const struct inart_daemon_cfg *dm, uint32_t bind_ip,
			   struct inart_err *err);

#endif
