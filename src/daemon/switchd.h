/*
 * switchd: the switch daemon (`inart switchd`): the sans-I/O switch core
 * (dp/switch) over one port per interface (io/afpacket), its control thread
 * (daemon/frame, daemon/switchd_ctl) and the emulator's gate (dp/gate).
 * src/cli parses the command line into a struct inart_switchd_cfg; this
 * module checks it and runs the daemon until inart_daemon_stop is set.
 */
#ifndef INART_DAEMON_SWITCHD_H
#define INART_DAEMON_SWITCHD_H

#include "common/err.h"
#include "daemon/frame.h"
#include "dp/gate.h"
#include "dp/shaper.h"
#include "dp/switch.h"
#include "io/afpacket.h"

/* --agg: where InArt aggregation runs (issue 25) */
enum inart_switchd_agg {
	INART_SWD_AGG_AUTO,  /* the kernel where it accepts the program and --io is xdp */
	INART_SWD_AGG_USER,  /* the user-space core (dp/switch) */
	INART_SWD_AGG_KERNEL /* the XDP program (io/xagg), the rest the core */
};

struct inart_switchd_cfg {
	struct inart_daemon_cfg dm; /* name (required), control socket, batch, log, user */
	/* interfaces in port order (afo.mode INART_AFP_UDP: "LPORT:PPORT",
	   io/afpacket.h); the strings are the caller's */
	const char *ports[INART_SW_MAX_PORTS];
	int n_ports;
	struct inart_afp_opt afo; /* mode, rx_frames (batch and queues: from dm.batch) */
	int pool_slots;		  /* aggregator slots until a configuration arrives */
	double flush_ms;	  /* partial aggregates flushed after (ms) */
	int cores;		  /* worker threads, one shard each (1..INART_SHARD_MAX;
				     daemon/switchd_workers) */
	int gated;		  /* 1: the gate below stands between ports and core */
	struct inart_gate_cfg gc; /* loss, aggregation limit (n_ports set here) */
	enum inart_switchd_agg agg; /* --agg (default user) */
	/* --shape: port i's egress shaper (rate_bps 0: none; dp/shaper) */
	struct inart_shaper_cfg shape[INART_SW_MAX_PORTS];
	int test_faults; /* --test-faults: serve test_fault (daemon/switchd_ctl) */
};

/* Defaults: the daemon's (inart_daemon_cfg_init), pool 4096, flush 10 ms,
 * back end auto, one core, no gate (tx loss on every port, seed 1 when enabled). */
void inart_switchd_cfg_init(struct inart_switchd_cfg *c);

/* Check c without opening anything: the common options, --name, at least one
 * port, no port twice, every interface present (AF_PACKET back ends), the
 * numbers in range, several cores only on AF_PACKET without a gate; with
 * dm.deployment, the switch's entry in that file (daemon/nodecfg).  0 or
 * -errno with err naming the option or interface (the file's: its JSON
 * path). */
int inart_switchd_cfg_check(const struct inart_switchd_cfg *c, struct inart_err *err);

/* Run the switch: open the ports and the control socket, give up root
 * (c->dm.user), serve until inart_daemon_stop, close everything.  0 after a
 * stop; -errno with err when it could not start (or poll failed). */
int inart_switchd_run(const struct inart_switchd_cfg *c, struct inart_err *err);

#endif
