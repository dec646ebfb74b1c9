/*
 * bg: background traffic of the emulated network -- real frames on the
 * links whose topology gives them background_gbps, so that the planner's
 * "residual = capacity - background" meets a link that really carries
 * someone else's traffic.  One process (a fork of the emulator, killed with
 * it) sends, for every such arc, paced 1514-byte frames of a local
 * experimental EtherType (0x88b5) from the arc's tail interface to the MAC
 * at its head, through the interface's queueing discipline (so they share
 * the tbf with the run's traffic); the receiving switch or host drops them.
 * Each arc is paced at its scaled background rate; frames the qdisc refuses
 * are not counted as sent.
 *
 * A flow may carry a schedule (issue 10: emulated dynamics): from at_s
 * seconds after the mark, the rate is bps (0: silent).  SIGUSR1 sets the
 * mark (the emulator sends it when a run's first iteration starts; each
 * run replays the schedule), SIGUSR2 clears it (the run ended); without a
 * mark the flow runs at its base rate.
 *
 * On SIGTERM the process writes one line per arc, "ARC FRAMES BYTES", to
 * its output and exits.
 */
#ifndef INART_EMU_BG_H
#define INART_EMU_BG_H

#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

#define INART_EMU_BG_ETHERTYPE 0x88b5

struct inart_emu_bg_step {
	double at_s, bps;
};

struct inart_emu_bg_flow {
	int arc;
	const char *netns, *ifname;
	uint8_t src_mac[6], dst_mac[6];
	double bps; /* base rate (0: silent) */
	int n_steps;
	const struct inart_emu_bg_step *steps; /* in time order (the caller's) */
};

/* Start the sender of n flows; its report goes to out_fd.  PID or -errno. */
pid_t inart_emu_bg_start(const struct inart_emu_bg_flow *f, int n, int out_fd,
			 struct inart_err *err);

#endif
