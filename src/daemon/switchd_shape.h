/*
 * switchd_shape: `inart switchd --shape`: a dp/shaper on each shaped port,
 * in the packet thread.  The loop offers every frame bound for a shaped
 * port (inart_switchd_shape_tx) before the port's transmit, releases held
 * frames at the shapers' deadlines in batches (one flush per port per
 * release), and waits no longer than the earliest deadline.  With --io
 * xdp a shaped port takes no plain IPv4 forwarded in the kernel (the XDP
 * program's redirect would bypass the shaper): switchd_io clears its bit
 * of xdp_fwd, so those frames come up to the packet thread; with --agg
 * kernel the aggregation program queues what it builds for a shaped port
 * on its xa_tx ring (io/xagg's opt.shaped), and switchd's drain offers it
 * here like the core's output.  One core only (--cores 1).
 */
#ifndef INART_DAEMON_SWITCHD_SHAPE_H
#define INART_DAEMON_SWITCHD_SHAPE_H

#include <jansson.h>
#include <stdint.h>

#include "common/err.h"
#include "daemon/switchd_ctl.h"
#include "dp/shaper.h"

/* Shapers for the ports of cfg[i].rate_bps > 0.  0 or -errno with err. */
int inart_switchd_shape_open(struct sw_state *s, const struct inart_shaper_cfg *cfg,
			     struct inart_err *err);
void inart_switchd_shape_close(struct sw_state *s);
/* A frame for port: 0 to send it now, 1 if the shaper took it (held or
 * dropped). */
int inart_switchd_shape_tx(struct sw_state *s, int port, const uint8_t *frame, uint16_t len,
			   uint64_t now);
/* Held frames whose time has come to their ports (flushed). */
void inart_switchd_shape_release(struct sw_state *s, uint64_t now);
/* The earliest deadline of the shapers (UINT64_MAX: none). */
uint64_t inart_switchd_shape_deadline(const struct sw_state *s);
/* Shaper counters into the "ports" array of a stats reply (packet thread:
 * st[i] read by a command). */
void inart_switchd_shape_json(const struct sw_state *s, const struct inart_shaper_stats *st,
			      json_t *ports);
void inart_switchd_shape_stats(const struct sw_state *s, struct inart_shaper_stats *st);

#endif
