/*
 * ctlsock: the control socket of the daemons, a UNIX stream socket carrying
 * length-prefixed messages (ctlproto/ctlmsg framing: 4-byte big-endian length,
 * then the body).  Requests are answered in order, one reply per request.
 *
 * Server: non-blocking, single-threaded, meant for an event loop (the
 * daemons run it in a control thread of its own): it keeps its listening
 * socket, clients and a timer in an epoll instance of its own whose
 * descriptor the caller polls for POLLIN; inart_ctlsrv_service then accepts,
 * reads, calls the handler for every complete request, writes replies
 * (buffered; a slow client never blocks the server) and expires clients.  A
 * client that sends a malformed frame is answered with an error and
 * disconnected.  Limits (struct inart_ctlsrv_opt): at most max_clients
 * connections -- when full, a new client takes the place of the one idle the
 * longest (no request in progress), or is refused if every one is busy --; a
 * client that sends nothing for idle_ms is closed; a request (or a reply)
 * not through within request_ms is answered with an error / dropped and its
 * client closed.  So idle or slow clients never lock the others out.
 *
 * Client: ctlproto/ctlclient.h (included here for the users of both ends).
 *
 * Ownership: the server owns its connections and unlinks its path on close.
 */
#ifndef INART_CTLSOCK_H
#define INART_CTLSOCK_H

#include <stddef.h>

#include "inart/inart.h"
#include "ctlproto/ctlclient.h"

#define INART_CTLSRV_MAX_CLIENTS 32

struct inart_ctl_key;

struct inart_ctlsrv_opt {
	int max_clients; /* 1..INART_CTLSRV_MAX_CLIENTS; default 32 */
	int idle_ms;	 /* close a client idle this long; default 10000 */
	int request_ms;	 /* a request must arrive (and its reply leave) within; default 30000 */
	/* optional: also listen on TCP at "HOST:PORT" (PORT 0: any), clients
	 * authenticated with key (ctlproto/ctlauth.h; copied); NULL: UNIX socket only */
	const char *tcp;
	const struct inart_ctl_key *key;
};

void inart_ctlsrv_opt_default(struct inart_ctlsrv_opt *o);

/* Handle one request body; return a malloc'ed NUL-terminated reply body
 * (NULL: the server answers "out of memory"). */
typedef char *(*inart_ctl_handler_fn)(void *ctx, const char *body, size_t len);

struct inart_ctlsrv;

/* Bind and listen on path (a stale socket file left by a dead daemon is
 * replaced; a live one is EADDRINUSE).  NULL + errno, err says why. */
struct inart_ctlsrv *inart_ctlsrv_open(const char *path, inart_ctl_handler_fn fn, void *ctx,
				       struct inart_err *err);
/* The same with limits (opt NULL: the defaults). */
struct inart_ctlsrv *inart_ctlsrv_open_opt(const char *path, inart_ctl_handler_fn fn, void *ctx,
					   const struct inart_ctlsrv_opt *opt,
					   struct inart_err *err);
/* Connections open now (tests). */
int inart_ctlsrv_clients(const struct inart_ctlsrv *s);
/* Close every connection, unlink the path. */
void inart_ctlsrv_close(struct inart_ctlsrv *s);
/* A descriptor that becomes readable when the server has work. */
int inart_ctlsrv_fd(const struct inart_ctlsrv *s);
/* Do all pending work without blocking.  Returns requests handled. */
int inart_ctlsrv_service(struct inart_ctlsrv *s);

/* The TCP listener's port (-1: none); connections refused for bad or
 * missing credentials (a wrong MAC, no answer within 2 s, a frame whose MAC
 * is wrong: the connection is closed, nothing of it handled). */
int inart_ctlsrv_tcp_port(const struct inart_ctlsrv *s);
uint64_t inart_ctlsrv_auth_failures(const struct inart_ctlsrv *s);

#endif
