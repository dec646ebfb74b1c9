/*
 * spawn: the emulator's processes -- programs started inside a network
 * namespace (setns into /run/netns/NAME in the child, no `ip netns exec`),
 * commands run to completion with their output captured, processes ended by
 * PID (SIGTERM, then SIGKILL after a grace period), CPU time read from
 * /proc.  Every child gets PR_SET_PDEATHSIG(SIGKILL): if the emulator dies,
 * even by SIGKILL, its daemons and workers die with it.
 *
 * Ownership: a child's PID belongs to the caller, who must reap it
 * (inart_emu_stop or waitpid).  Nothing here kills by name.
 */
#ifndef INART_EMU_SPAWN_H
#define INART_EMU_SPAWN_H

#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* Standard streams of a spawned child: -1 = /dev/null (stdin) or inherited
 * (stdout, stderr). */
struct inart_emu_fds {
	int in, out, err;
	int detach; /* 1: no PDEATHSIG, own session (outlives the emulator) */
};

/* Start argv[0] (a path, or a name looked up in PATH) in namespace netns
 * (NULL: this one) with the given streams.  The child closes every other
 * descriptor.  Returns the PID or -errno (err says why: e.g. the namespace
 * does not exist, the program cannot be run -- reported by the child
 * through a pipe before exec). */
pid_t inart_emu_spawn(const char *netns, char *const argv[], const struct inart_emu_fds *fds,
		      struct inart_err *err);

/* Run to completion, with input text on stdin (NULL: none); stdout and
 * stderr (merged, at most out_cap - 1 bytes kept) into out (may be NULL).
 * Gives up after timeout_ms (the child is killed).  Returns the exit status
 * (0..255), or -errno (-ETIMEDOUT, spawn failure; err says why). */
int inart_emu_cmd(const char *netns, char *const argv[], const char *input, char *out,
		  size_t out_cap, int timeout_ms, struct inart_err *err);

/* inart_emu_kill: end pid: SIGTERM, wait up to grace_ms, then SIGKILL; reap it.  Returns
 * its wait status, or -errno (-ECHILD: not our child any more). */
int inart_emu_kill(pid_t pid, int grace_ms);

/* 1 if pid (our child) has exited (it is reaped, *status set), 0 if it runs. */
int inart_emu_exited(pid_t pid, int *status);

/* CPU time (user + system) of pid in nanoseconds, or -errno. */
int64_t inart_emu_cpu_ns(pid_t pid);

/* Monotonic clock, nanoseconds. */
uint64_t inart_emu_now_ns(void);

#endif
