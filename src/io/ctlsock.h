/*
 * ctlsock: the control socket of the daemons, a UNIX stream socket carrying
 * length-prefixed messages (bridge/ctlmsg framing: 4-byte big-endian length,
 * then the body).  Requests are answered in order, one reply per request.
 *
 * Server: non-blocking, single-threaded, meant for the daemon's event loop:
 * it keeps its listening socket and clients in an epoll instance of its own
 * whose descriptor the daemon polls for POLLIN; inart_ctlsrv_service then
 * accepts, reads, calls the handler for every complete request and writes
 * replies (buffered; a slow client never blocks the daemon).  A client that
 * sends a malformed frame is answered with an error and disconnected.
 *
 * Client: inart_ctl_call sends one request and waits for its reply.
 *
 * Ownership: the server owns its connections and unlinks its path on close.
 */
#ifndef INART_CTLSOCK_H
#define INART_CTLSOCK_H

#include <stddef.h>

#include "inart/inart.h"

#define INART_CTLSRV_MAX_CLIENTS 32

/* Handle one request body; return a malloc'ed NUL-terminated reply body
 * (NULL: the server answers "out of memory"). */
typedef char *(*inart_ctl_handler_fn)(void *ctx, const char *body, size_t len);

struct inart_ctlsrv;

/* Bind and listen on path (a stale socket file left by a dead daemon is
 * replaced; a live one is EADDRINUSE).  NULL + errno, err says why. */
struct inart_ctlsrv *inart_ctlsrv_open(const char *path, inart_ctl_handler_fn fn, void *ctx,
				       struct inart_err *err);
/* Close every connection, unlink the path. */
void inart_ctlsrv_close(struct inart_ctlsrv *s);
/* A descriptor that becomes readable when the server has work. */
int inart_ctlsrv_fd(const struct inart_ctlsrv *s);
/* Do all pending work without blocking.  Returns requests handled. */
int inart_ctlsrv_service(struct inart_ctlsrv *s);

/* Client: send one request body, wait up to timeout_ms for the reply.
 * 0 and *reply (malloc'ed, NUL-terminated, *reply_len bytes), or -errno
 * with err saying what failed (connect, timeout, framing). */
int inart_ctl_call(const char *path, const char *body, size_t len, char **reply, size_t *reply_len,
		   int timeout_ms, struct inart_err *err);

#endif
