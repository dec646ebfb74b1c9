/*
 * installer: put a plan in service on every node of a deployment as one
 * transaction -- the install path shared by `inart ctl install` and the
 * controller daemon (daemon/ctld).  It builds the plan's installation
 * (bridge/install: MACs, epoch), one request per node (every switch, every
 * PS of the plan, every other PS node told to drop its trees), runs the
 * transaction over the nodes' control sockets (ctlproto/rollout) and writes
 * the per-node outcome to a stream of the caller.  It never exits.
 *
 * Ownership: the configuration and everything it points to are the
 * caller's; an installation returned through *built is the caller's
 * (inart_install_destroy).
 */
#ifndef INART_DAEMON_INSTALLER_H
#define INART_DAEMON_INSTALLER_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "bridge/deploy.h"
#include "bridge/install.h"
#include "ctlproto/ctlmsg.h"

/* Timeout of one control request of an install (ms). */
#define INART_INSTALLER_TIMEOUT_MS 10000

/* What a plan is installed with. */
struct inart_installer_cfg {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	const struct inart_deploy *d;
	char **ctl;			     /* per node, from the deployment (or NULL) */
	const char *ctl_dir;		     /* sockets of the others: DIR/<id>.sock */
	const struct inart_install_opt *opt; /* data-plane settings */
	const unsigned char *only;	     /* per node: 1 = contact it (NULL: all) */
	int learn, restart, dry;	     /* --learn-macs, --restart-jobs, --dry-run */
	int64_t epoch;			     /* the plan's epoch (epoch.h), -1: none */
	const struct inart_install *old;     /* with epoch: the previous epoch's
						installation, kept side by side */
	int tables_only;		     /* switches: no configuration (the core and
						its aggregation state stay) */
	FILE *warn; /* warnings (a PS left out of the plan unreachable); NULL: none */
};

/* The deployment: the file at path (and *ctl: the control sockets it
 * names) or, path NULL, the automatic one; its data-plane settings over
 * the defaults into opt.  NULL with err on an error. */
struct inart_deploy *inart_installer_deploy_load(const char *path, const struct inart_topo *t,
						 char ***ctl, struct inart_install_opt *opt,
						 struct inart_err *err);

/* Per node of t, 1 for a PS node of a job of js (js may be NULL): calloc'ed
 * (n_nodes + 1 bytes, the caller frees), NULL + errno. */
unsigned char *inart_installer_ps_nodes(const struct inart_topo *t, const struct inart_jobs *js);

/* The control socket of node v: the deployment's (ctl[v]), else
 * DIR/<id>.sock.  malloc'ed, NULL + errno. */
char *inart_installer_ctl_path(char **ctl, const char *dir, const struct inart_topo *t, int v);

/* One request to the daemon at path (the real transport of a rollout,
 * within INART_INSTALLER_TIMEOUT_MS): 0 and *reply (new reference) if it
 * accepted; -errno with the reason in err otherwise (-EPERM: refused). */
int inart_installer_call(const char *path, const struct inart_ctl_req *req, json_t **reply,
			 struct inart_err *err);

/* p's installation as inart_installer_run builds it (MACs, epoch). */
int inart_installer_build(const struct inart_installer_cfg *ci, const struct inart_plan *p,
			  struct inart_install **out, struct inart_err *err);

/* Build the installation of p and put it in service on every node as one
 * transaction (ctlproto/rollout.h), writing what each node held before and
 * holds now to out (with dry: the requests, nothing sent).  id: the
 * identity ("" when the plan did not build); *built (if not NULL): p's
 * installation on success (the caller's).  0; -EIO: the transaction failed
 * (err: the node and why; every node holds what it held); other -errno:
 * nothing was sent (err says why). */
int inart_installer_run(const struct inart_installer_cfg *ci, const struct inart_plan *p, FILE *out,
			char id[17], struct inart_install **built, struct inart_err *err);

#endif
