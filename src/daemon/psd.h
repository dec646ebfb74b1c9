/*
 * psd: the parameter server daemon (`inart ps`): the sans-I/O PS core
 * (dp/ps) over one UDP socket (io/udp) bound to IP:47470, its control
 * thread (daemon/frame) and install transactions (ctlproto/txn).  src/cli
 * parses the command line into a struct inart_psd_cfg; this module checks it
 * and runs the daemon until inart_daemon_stop is set.  UDP on a port above
 * 1024 needs no privilege: on 127.0.0.0/8 the daemon runs as any user.
 * Or, with a port (cfg.port), the same datagrams as Ethernet frames on an
 * io/afpacket port (io/ethudp): a host on a switchd --io udp port.  Or
 * (cfg.io xdp, auto) as frames on an AF_XDP socket of the interface that
 * holds the address (io/xsk's host set with bpf/xdp_host.bpf.c: InArt to
 * the socket, everything else to the kernel's stack), over io/ethudp.
 * With cfg.cores N > 1 (UDP only): N cores on N pinned threads, their
 * sockets one SO_REUSEPORT group steered by slot (docs/dataplane.md).
 */
#ifndef INART_DAEMON_PSD_H
#define INART_DAEMON_PSD_H

#include <stdint.h>

#include "common/err.h"
#include "daemon/frame.h"
#include "io/afpacket.h"

/* The PS's transport (--io): a UDP socket, AF_XDP on the interface holding
 * bind_ip (io/xsk's host set), or xdp where it can be had, else udp. */
enum inart_psd_io { INART_PSD_IO_UDP, INART_PSD_IO_XDP, INART_PSD_IO_AUTO };

struct inart_psd_cfg {
	struct inart_daemon_cfg dm; /* name, control socket, batch, log, user */
	uint32_t bind_ip;	    /* host order (0: any address) */
	/* frames instead of a UDP socket (io/ethudp): non-NULL, the PS's
	   datagrams to and from bind_ip (required then) travel as Ethernet
	   frames on this io/afpacket port ("LPORT:PPORT" with port_mode
	   INART_AFP_UDP: a switchd --io udp's peer, no privilege needed) */
	const char *port;
	enum inart_afp_mode port_mode;
	enum inart_psd_io io; /* without a port (default udp) */
	int cores;	      /* 0, 1: one packet thread; N: N shards (UDP only) */
};

/* "udp", "xdp", "auto"; inart_psd_io_parse: 0 or -EINVAL. */
const char *inart_psd_io_name(enum inart_psd_io io);
int inart_psd_io_parse(const char *s, enum inart_psd_io *io);

/* The common options (inart_daemon_cfg_check); with dm.deployment, the PS's
 * entry in that file (daemon/nodecfg); with a port, an address and a port
 * name the back end can open.  0 or -errno. */
int inart_psd_cfg_check(const struct inart_psd_cfg *c, struct inart_err *err);

/* Run the PS: bind, open the control socket, give up root (c->dm.user),
 * serve until inart_daemon_stop, close everything.  0 after a stop; -errno
 * with err when it could not start (or poll failed). */
int inart_psd_run(const struct inart_psd_cfg *c, struct inart_err *err);

#endif
