/*
 * ctladdr: the addresses of the daemons' control socket, for its server
 * (ctlproto/ctlsock) and its client (ctlproto/ctlclient).  Conversions only: nothing is
 * opened.
 */
#ifndef INART_CTLADDR_H
#define INART_CTLADDR_H

#include <netinet/in.h>
#include <sys/un.h>

/* path into a (AF_UNIX).  0, or -ENAMETOOLONG if it does not fit. */
int inart_ctl_addr_unix(struct sockaddr_un *a, const char *path);
/* "HOST:PORT" (an IPv4 address or name; PORT 0: any free port) into a.
 * 0, -EINVAL (not HOST:PORT) or -EHOSTUNREACH (the name does not resolve). */
int inart_ctl_addr_tcp(const char *spec, struct sockaddr_in *a);

#endif
