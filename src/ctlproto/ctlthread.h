/*
 * ctlthread: a daemon's control socket (ctlproto/ctlsock) served by a thread of its
 * own, and the mailbox through which that thread has short commands run by
 * the daemon's packet thread.
 *
 * Why: parsing a large request and building tables takes seconds of CPU; in
 * the packet thread that stalls forwarding (issue 7: a 47 MB install
 * stretched an all-reduce iteration from 15 ms to 3.4 s).  So the control
 * thread parses, validates and builds everything aside, and the packet thread
 * only runs the command that puts it in service (a pointer swap) between two
 * batches.  The packet thread takes no lock: it polls the mailbox's
 * descriptor with its sockets and, when it is readable, runs the one pending
 * command (inart_ctlthread_run); the control thread waits for it to be done.
 * The control thread runs at a lower priority (nice +10), so that on a busy
 * machine it does not take the packet thread's CPU.
 *
 * Ownership: the thread owns its server; commands and their arguments are
 * the caller's.
 */
#ifndef INART_CTLTHREAD_H
#define INART_CTLTHREAD_H

#include <stdint.h>

#include "ctlproto/ctlsock.h"

struct inart_ctlthread;

typedef void (*inart_ctl_cmd_fn)(void *arg);

/* Open the control socket at path and serve it in a new thread: every
 * request goes to fn(ctx, body, len) in that thread.  NULL + errno, err says
 * why. */
struct inart_ctlthread *inart_ctlthread_start(const char *path, inart_ctl_handler_fn fn, void *ctx,
					      const struct inart_ctlsrv_opt *opt,
					      struct inart_err *err);
/* The same in two steps: open the socket (nothing served yet: a daemon
 * gives up root in between, so that no request is parsed as root), then
 * start the thread.  open: NULL + errno; serve: 0 or -errno; err says why.
 * A thread opened and never served is closed by inart_ctlthread_stop. */
struct inart_ctlthread *inart_ctlthread_open(const char *path, inart_ctl_handler_fn fn, void *ctx,
					     const struct inart_ctlsrv_opt *opt,
					     struct inart_err *err);
int inart_ctlthread_serve(struct inart_ctlthread *t, struct inart_err *err);
/* Stop the thread (called from the packet thread: commands the control
 * thread still sends meanwhile are run), close the socket. NULL: nothing. */
void inart_ctlthread_stop(struct inart_ctlthread *t);
/* Control connections refused for bad credentials (inart_ctlsrv_auth_failures;
 * call from the control thread, e.g. in a request handler). */
uint64_t inart_ctlthread_auth_failures(const struct inart_ctlthread *t);

/* Packet thread: a descriptor that becomes readable when a command waits,
 * and the call that runs it (1 if one ran, else 0). */
int inart_ctlthread_fd(const struct inart_ctlthread *t);
int inart_ctlthread_run(struct inart_ctlthread *t);

/* Control thread (inside a request handler): run fn(arg) in the packet
 * thread and wait until it has. */
void inart_ctlthread_call(struct inart_ctlthread *t, inart_ctl_cmd_fn fn, void *arg);

#endif
