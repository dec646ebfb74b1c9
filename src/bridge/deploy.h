/*
 * deploy: the deployment file (docs/programs.md), JSON: where every node of
 * the topology is -- its IPv4 address, its MAC (hosts), its switch ports
 * (port number and MAC per neighbour) and the control socket of its daemon
 * (switches and PSs).  It fills install.h's struct inart_deploy, plus the
 * control socket paths that struct does not carry.
 *
 *   {"nodes": {
 *      "h0": {"ip": "10.0.0.1", "mac": "02:00:00:00:00:01"},
 *      "s0": {"ip": "10.0.1.1", "ctl": "/run/inart/s0.sock",
 *             "ports": {"h0": {"port": 0, "mac": "02:00:00:01:00:00"},
 *                       "h1": {"port": 1}}},
 *      "ps": {"ip": "10.0.0.9", "mac": "02:00:00:00:00:09",
 *             "ctl": "/run/inart/ps.sock"}}}
 *
 * Every node needs "ip"; every switch needs a port for each neighbour
 * (numbers 0..degree-1, each once: port i is the i-th --port interface of
 * its switchd).  MACs are optional: a missing port MAC means the switch uses
 * its interface's own, a missing host MAC makes the switch learn it.  A
 * port may name its interface ("if": "enp1s0f0"), which `inart switchd
 * --deployment FILE` checks against its --port list (the installer does
 * not need it).
 *
 * Ownership: the caller owns the returned deployment (inart_deploy_destroy)
 * and ctl array (inart_deploy_ctl_free).
 */
#ifndef INART_DEPLOY_IO_H
#define INART_DEPLOY_IO_H

#include <stddef.h>
#include <stdint.h>

#include "bridge/install.h"

/* Parse (name is used in messages).  *ctl (if ctl is non-NULL) gets a
 * per-node array of malloc'ed paths, NULL where absent.  NULL + errno. */
struct inart_deploy *inart_deploy_parse(const char *buf, size_t len, const char *name,
					const struct inart_topo *t, char ***ctl,
					struct inart_err *err);
struct inart_deploy *inart_deploy_load(const char *path, const struct inart_topo *t, char ***ctl,
				       struct inart_err *err);
void inart_deploy_ctl_free(char **ctl, int n_nodes);

/* One node's entry, read without the topology: what a daemon checks its own
 * configuration against (daemon/nodecfg).  The same checks as the full
 * reader that need no topology (keys, address, MACs, control socket, port
 * numbers distinct and 0..n-1); neighbours are not checked to exist. */
#define INART_DEPLOY_MAX_PORTS 64
struct inart_deploy_port {
	char peer[64];	 /* the neighbour's id (cut at 63 bytes: messages only) */
	uint8_t mac[6];	 /* zero: none given */
	char ifname[16]; /* "if" ("": none given) */
};
struct inart_deploy_node {
	uint32_t ip;	/* host order */
	uint8_t mac[6]; /* zero: none given */
	char ctl[108];	/* "": none given */
	int is_switch;	/* the entry has "ports" */
	int n_ports;
	struct inart_deploy_port ports[INART_DEPLOY_MAX_PORTS]; /* by port number */
};
/* The entry of node id in the file (name: for messages) into *n.  0, or
 * -ENOENT (no such node) or -EINVAL with err located: "FILE:LINE:COL: ..."
 * for JSON syntax, else "FILE: nodes.ID[.KEY...]: ..." (the JSON path). */
int inart_deploy_node_parse(const char *buf, size_t len, const char *name, const char *id,
			    struct inart_deploy_node *n, struct inart_err *err);
int inart_deploy_node_load(const char *path, const char *id, struct inart_deploy_node *n,
			   struct inart_err *err);

/* The optional "dataplane" object of a deployment file: settings that
 * `inart ctl install` and every worker (inart_ctx_create) must share, applied
 * over o:
 *   "dataplane": {"slots_per_tree": 16, "retx_timeout_ms": 50,
 *                 "flush_timeout_ms": 10, "pace_scale": 1,
 *                 "pace_lead_ms": 10, "rate_scale": 1}
 * slots_per_tree is also the workers' window (chunks in flight per tree);
 * pace_scale paces every worker's trees at their plan rates times it
 * (install.h; absent: INART_INSTALL_PACE_DEFAULT, 1.1; 0: not paced);
 * pace_lead_ms bounds how far ahead of the plan's own rates (times
 * rate_scale, the links' scale against the topology, default 1) a paced
 * tree may run (install.h, dp/pace.h; absent: no bound).
 * 0 (o unchanged if absent), or -EINVAL with err naming the key. */
int inart_deploy_dataplane_parse(const char *buf, size_t len, const char *name,
				 struct inart_install_opt *o, struct inart_err *err);
int inart_deploy_dataplane_load(const char *path, struct inart_install_opt *o,
				struct inart_err *err);

/* Serialize (ctl may be NULL; ctl_dir, if non-NULL, gives every switch and
 * PS a path "<ctl_dir>/<id>.sock" where ctl has none).  Malloc'ed string or
 * NULL + errno.  is_ps marks PS nodes (may be NULL: none). */
char *inart_deploy_dump(const struct inart_deploy *d, const struct inart_topo *t, char *const *ctl,
			const char *ctl_dir, const unsigned char *is_ps);

#endif
