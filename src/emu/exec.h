/*
 * exec: a program run as the ranks of a distributed job in the worker
 * namespaces of an emulated network (`inart emu exec`): rank r in the
 * namespace of nodes[r] (inart-emu-P-<node>), every rank started at once
 * with torchrun's environment -- RANK, WORLD_SIZE, LOCAL_RANK=0,
 * LOCAL_WORLD_SIZE=1, MASTER_ADDR (rank 0's address in the run's
 * deployment), MASTER_PORT, GLOO_SOCKET_IFNAME (the host's interface), and
 * torchrun's own options as PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE=1,
 * PET_MASTER_ADDR, PET_MASTER_PORT (so `python3 -m torch.distributed.run
 * train.py` as the program runs one agent per namespace) -- plus the
 * caller's NAME=VALUE entries (INART_TOPO, INART_DEPLOY, ...), through
 * `env` (the emulator's spawn passes its own environment on).
 *
 * Supervision: every rank is waited for; when one fails (a non-zero exit or
 * a signal) the others get grace_s to end by themselves, then SIGTERM and,
 * 2 s later, SIGKILL; the same at the timeout.  Every rank dies with the
 * caller (spawn's PR_SET_PDEATHSIG).  Nothing is killed by name.
 */
#ifndef INART_EMU_EXEC_H
#define INART_EMU_EXEC_H

#include "common/err.h"

struct inart_emu_exec_opt {
	const char *prefix;	  /* the run: namespaces inart-emu-P-*, /run/inart-emu/P */
	const char *const *nodes; /* rank r runs in the namespace of nodes[r] */
	int n_ranks;
	char *const *argv;	/* the program and its arguments (NULL-terminated) */
	const char *const *env; /* more NAME=VALUE for every rank (NULL-terminated; may be NULL) */
	int master_port;	/* MASTER_PORT (0: 29500) */
	double timeout_s;	/* every rank ended by then (0: no limit) */
	double grace_s;		/* after a rank failed, the others' time to end (0: 10 s) */
	const char
	    *log_dir; /* rank r's stdout and stderr to LOG_DIR/rank-R.log (NULL: inherited) */
};

/* How a rank ended. */
struct inart_emu_exec_rank {
	int status;  /* exit status 0..255, 128 + signal, -1: not started */
	int stopped; /* 1: ended by us (after another rank failed, or the timeout) */
};

/* Run the ranks and wait for them (ranks[n_ranks] filled).  0 when every
 * rank exited 0; 1 when one did not (err names the first that failed, its
 * status, and whether the timeout ended the run); -errno when the ranks
 * could not be started (err says why: no such namespace, no deployment
 * entry for a node, the program cannot be run) -- the ranks started so far
 * are ended. */
int inart_emu_exec(const struct inart_emu_exec_opt *o, struct inart_emu_exec_rank *ranks,
		   struct inart_err *err);

#endif
