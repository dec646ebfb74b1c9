/*
 * switchd_io: the ports of `inart switchd` and its back end -- the choice
 * (--io auto: xdp, then ring, then mmsg, said in one log line), opening and
 * closing the ports (io/port.h over io/afpacket or io/xsk), and, with the
 * xdp back end, keeping the XDP program's maps equal to the switch core's
 * state: routes, the switch's own addresses, the ports' MACs, peer MACs and
 * ingress hosts (inart_switchd_io_sync after an install, _peers in the loop)
 * and its counters (added to the ports' and reported under "xdp").
 */
#ifndef INART_DAEMON_SWITCHD_IO_H
#define INART_DAEMON_SWITCHD_IO_H

#include <jansson.h>

#include "common/err.h"
#include "daemon/switchd_ctl.h"
#include "io/afpacket.h"

/* Open s->ports on s->ifnames[0..n_ports) with afo's back end (batch:
 * frames per call; gated: an emulation gate sees every frame, so nothing
 * is forwarded in the kernel).  0 or -errno with err: --io xdp where
 * AF_XDP cannot be had says why. */
int inart_switchd_io_open(struct sw_state *s, const struct inart_afp_opt *afo, int batch, int gated,
			  struct inart_err *err);
void inart_switchd_io_close(struct sw_state *s);
/* The back end in use ("xdp", "ring", ...). */
const char *inart_switchd_io_name(const struct sw_state *s);

/* Packet thread (a control-thread command, arg: the sw_state): the routes
 * of the core in service, s->cfg's addresses and ports into the XDP
 * program.  Nothing without xdp. */
void inart_switchd_io_sync(void *arg);
/* Packet thread, each loop: peer MACs the core learned since into the
 * program (a compare per port; a map update when one changed). */
void inart_switchd_io_peers(struct sw_state *s);
/* Add what the XDP program forwarded per port to ports[0..n_ports). */
void inart_switchd_io_port_stats(const struct sw_state *s, struct inart_sw_port_stats *ports);
/* The program's counters (since start), or NULL without xdp. */
json_t *inart_switchd_io_json(const struct sw_state *s);

/* --agg (daemon/switchd.h enum inart_switchd_agg), after the core exists:
 * auto takes the kernel's aggregation (io/xagg) where the back end is xdp,
 * no gate and the kernel accepts the program, and says which in one log
 * line; kernel where it cannot be had fails with the reason.  0 or -errno
 * (err). */
int inart_switchd_io_agg_open(struct sw_state *s, int mode, int gated, struct inart_err *err);
void inart_switchd_io_agg_close(struct sw_state *s);
struct inart_gate_cfg;
struct inart_gate_stats;
/* --agg-mbps with the kernel path (h25g): the limit charged in the kernel
 * (io/xagg's gate; the user-space gate then sees only the frames the
 * program does not get).  0 (nothing to do without the kernel path) or
 * -errno with err. */
int inart_switchd_io_agg_gate(struct sw_state *s, const struct inart_gate_cfg *gc,
			      struct inart_err *err);
/* The kernel gate's counters added to st. */
void inart_switchd_io_agg_gate_stats(const struct sw_state *s, struct inart_gate_stats *st);
/* Packet thread, in the same command as a table or core swap (and at
 * start): the kernel's tables from cfg and core, then its generation (its
 * orphaned slots freed, progress reset on every CPU).  Nothing without it. */
void inart_switchd_io_agg_sync(struct sw_state *s, const struct inart_sw_cfg *cfg,
			       const struct inart_switch *core);
/* Add the kernel's tree counters to t[0..n) (duplicates also to drops). */
void inart_switchd_io_agg_trees(const struct sw_state *s, struct inart_sw_tree_stats *t, int n,
				uint64_t *drops);

#endif
