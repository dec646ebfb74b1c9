/*
 * net: the emulated network -- a topology built as Linux network namespaces
 * joined by veth pairs, each direction shaped by tbf at the link's capacity
 * times a rate scale.
 *
 * Names (every one carries the run's prefix P, [a-z0-9]{1,9}):
 *   namespace of node v      inart-emu-P-<id>   (id if it is [A-Za-z0-9_.-]
 *                                                and short, else n<number>)
 *   interface of port p of v eP-p<p>            (hosts have port 0 only; at
 *                                                most 15 bytes)
 *   run directory            /run/inart-emu/P/  (control sockets <id>.sock,
 *                                                logs, the files of the run)
 * Addresses and MACs are the automatic deployment's (dp/install
 * inart_deploy_auto: 10.x.y.1, 02:00:...); a switch's port p is the p-th arc
 * leaving it, as install numbers ports.  A host gets its address as a /32,
 * a static neighbour entry for a gateway address (the switch's) with the
 * switch port's MAC, and a route to 10.0.0.0/8 through it: no ARP is needed,
 * so lost frames never stall address resolution.  Hosts' interfaces have
 * checksum offload off (`ethtool -K tx off`: a user-space switch passes
 * frames on as they are); IPv6 is disabled in every namespace.
 *
 * inart_emu_net_create is pure (names, rates, the command scripts);
 * up/down/link_set run `ip`, `tc`, `ethtool` (through spawn).  The scripts
 * are kept in the struct so tests can read them.
 *
 * Ownership: the net borrows the topology (it must outlive the net) and
 * owns the rest.
 */
#ifndef INART_EMU_NET_H
#define INART_EMU_NET_H

#include "cp/model/graph.h"
#include "bridge/install.h"

#define INART_EMU_NS_PREFIX "inart-emu-"
#define INART_EMU_RUN_DIR "/run/inart-emu"
#define INART_EMU_PREFIX_MAX 9

struct inart_emu_net_opt {
	const char *prefix;	    /* [a-z0-9]{1,9} */
	double rate_scale;	    /* emulated bit/s per modelled bit/s */
	double queue_ms;	    /* tbf queue per interface, in ms of its rate */
	long min_queue_bytes;	    /* ... but at least this many bytes */
	const unsigned char *is_ps; /* per node: a PS (gets a control socket); may be NULL */
	int window;		    /* data plane: slots per tree = workers' window (0:
				       the data plane's default) */
	double retx_ms;		    /* data plane: workers' initial timeout (0: default) */
	double flush_ms;	    /* data plane: switches' partial flush (0: default) */
	double pace_scale;	    /* data plane: workers paced at their plan rates times
				       this (0: not paced) */
	double pace_lead_ms;	    /* data plane: ... at most this far ahead of their plan
				       rates times rate_scale (0: no bound) */
	int switch_shape;	    /* 1: the arcs leaving switches get no tbf: switchd shapes them
				       (--shape, inart_emu_net_shape_arg; emu --io xdp) */
};

void inart_emu_net_opt_default(struct inart_emu_net_opt *o);

struct inart_emu_net;
/* switchd's --shape argument for arc e (leaving a switch): its port, rate,
 * and tbf's burst and limit, into buf. */
void inart_emu_net_shape_arg(const struct inart_emu_net *n, int e, char *buf, size_t cap);

/* The token bucket (tc tbf) an arc's interface is shaped with. */
struct inart_emu_tbf {
	double bps; /* rate, bit/s */
	long limit; /* queue, bytes */
};

struct inart_emu_net {
	const struct inart_topo *t;
	char prefix[INART_EMU_PREFIX_MAX + 1];
	char dir[64];		   /* run directory */
	char (*ns)[64];		   /* per node: its namespace (prefix, run prefix, node id) */
	char (*ifname)[16];	   /* per arc: the interface at the arc's tail */
	struct inart_emu_tbf *tbf; /* per arc: how it is shaped */
	int switch_shape;	   /* arcs leaving switches: by switchd, not tbf */
	uint32_t *gw;		   /* per host: gateway address (its switch's) */
	struct inart_deploy *d;	   /* addresses, MACs, ports */
	char *deploy_json;	   /* the deployment file (control sockets in dir) */
	/* scripts: ip -batch in the root namespace (namespaces, veths), and per
	   node a shell line run inside its namespace */
	char *root_script;
	char **node_script;
	int up; /* namespaces created (down removes them) */
};

/* 0, or -EINVAL with err (bad prefix, a node whose interfaces cannot be
 * named, a host with more than one link). */
int inart_emu_net_create(const struct inart_topo *t, const struct inart_emu_net_opt *o,
			 struct inart_emu_net **out, struct inart_err *err);
void inart_emu_net_destroy(struct inart_emu_net *n);

/* Port number of arc e at its tail (its switch port, 0 for a host). */
int inart_emu_net_port(const struct inart_emu_net *n, int e);

/* 1 if a valid prefix ([a-z0-9]{1,9}). */
int inart_emu_prefix_ok(const char *p);

/* Namespaces "inart-emu-P-*" that exist now, and whether the run directory
 * exists: the count of leftovers of prefix P (prefix NULL: of any run),
 * their names in names (malloc'ed array of malloc'ed strings, may be NULL). */
int inart_emu_leftovers(const char *prefix, char ***names);
void inart_emu_names_free(char **names, int n);

/* Build it: the run directory, namespaces, veths, addresses, routes,
 * shaping.  On failure everything built is removed.  0 or -errno (err). */
int inart_emu_net_up(struct inart_emu_net *n, struct inart_err *err);

/* Remove the namespaces (their interfaces go with them) and the run
 * directory.  Best effort; 0 or the first -errno. */
int inart_emu_net_down(struct inart_emu_net *n);

/* Take the link of arc e (both directions) down (up = 0) or up again. */
int inart_emu_net_link_set(struct inart_emu_net *n, int e, int up, struct inart_err *err);

/* Remove leftovers of prefix P (NULL: every inart-emu run whose owner,
 * recorded in its run directory, is not alive -- or all with force):
 * processes inside the namespaces (by PID, `ip netns pids`), the
 * namespaces, the run directories.  Returns how many namespaces were
 * removed, or -errno. *skipped counts runs left alone (owner alive). */
int inart_emu_down_prefix(const char *prefix, int force, int *skipped, struct inart_err *err);

#endif
