/*
 * ctladdr: the addresses of the control socket, shared by its server
 * (ctlsock) and client (ctlclient): a UNIX socket path, or "HOST:PORT" for
 * TCP (the part after "tcp:").  Conversions (a host name is resolved by
 * getaddrinfo); no socket is opened.
 */
#include "ctlproto/ctladdr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>

int inart_ctl_addr_unix(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

/* "HOST:PORT" (an IPv4 address or name; PORT 0: any free port) into a. */
int inart_ctl_addr_tcp(const char *spec, struct sockaddr_in *a)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	char *end;
	long port;

	if (colon == NULL || (size_t)(colon - spec) >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '\0' || port < 0 || port > 65535)
		return -EINVAL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
		return -EHOSTUNREACH;
	memcpy(a, res->ai_addr, sizeof(*a));
	a->sin_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
}
