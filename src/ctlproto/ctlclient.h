/*
 * ctlclient: the client of the daemons' control socket (ctlproto/ctlsock.h has
 * the server and the framing): one request, one reply, within a timeout,
 * over a UNIX socket or, with "tcp:HOST:PORT", over TCP authenticated by
 * ctlproto/ctlauth.h.
 *
 * Ownership: replies are malloc'ed for the caller; a kept connection
 * (inart_ctl_conn) owns its socket and its copy of the path.
 */
#ifndef INART_CTLCLIENT_H
#define INART_CTLCLIENT_H

#include <stddef.h>

#include "inart/inart.h"

/* Client: send one request body, wait up to timeout_ms for the reply.
 * path is a UNIX socket path, or "tcp:HOST:PORT": then the key is read from
 * the file named by the environment variable INART_CTL_KEY, the handshake
 * of ctlproto/ctlauth.h authenticates both sides and every frame carries a MAC
 * (-EACCES: refused, or the server does not know the key).
 * 0 and *reply (malloc'ed, NUL-terminated, *reply_len bytes), or -errno
 * with err saying what failed (connect, timeout, framing). */
int inart_ctl_call(const char *path, const char *body, size_t len, char **reply, size_t *reply_len,
		   int timeout_ms, struct inart_err *err);

/* A kept connection: requests to one daemon over one connection, opened at
 * the first call (TCP: with the handshake of ctlproto/ctlauth.h, frames MAC'ed
 * with consecutive sequence numbers), kept open between calls.  A call on
 * a kept connection that the daemon closed (idle, restarted, its slot given
 * to another client: -ECONNRESET) is made once more on a new connection
 * within the same timeout; any failure closes the connection (a late reply
 * is never taken for the next request's), the next call opens a new one.
 * The same results and errors as inart_ctl_call.  For periodic requests
 * (the controller's counters): no connect, accept and, over TCP, handshake
 * per request. */
struct inart_ctl_conn;

struct inart_ctl_conn *inart_ctl_conn_create(const char *path); /* NULL + errno */
void inart_ctl_conn_destroy(struct inart_ctl_conn *c);
int inart_ctl_conn_call(struct inart_ctl_conn *c, const char *body, size_t len, char **reply,
			size_t *reply_len, int timeout_ms, struct inart_err *err);
/* Connections opened so far (tests). */
unsigned long inart_ctl_conn_connects(const struct inart_ctl_conn *c);

#endif
