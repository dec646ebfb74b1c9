/*
 * installer: a plan's installation in service on every node as one
 * transaction (daemon/installer.h): the requests per node, the rollout
 * over the control sockets, the table of what each node holds.
 */
#include "daemon/installer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/epoch.h"
#include "common/err.h"
#include "ctlproto/ctlclient.h"
#include "ctlproto/rollout.h"

struct inart_deploy *inart_installer_deploy_load(const char *path, const struct inart_topo *t,
						 char ***ctl, struct inart_install_opt *opt,
						 struct inart_err *err)
{
	struct inart_deploy *d;

	*ctl = NULL;
	if (path == NULL) {
		d = inart_deploy_auto(t);
		if (d == NULL)
			inart_err_set(err, -errno, "automatic deployment: %s", strerror(errno));
	} else {
		d = inart_deploy_load(path, t, ctl, err);
	}
	if (d == NULL)
		return NULL;
	/* the deployment's data-plane settings (the workers read the same) */
	inart_install_opt_default(opt);
	if (path != NULL && inart_deploy_dataplane_load(path, opt, err) < 0) {
		inart_deploy_ctl_free(*ctl, t->n_nodes);
		*ctl = NULL;
		inart_deploy_destroy(d);
		return NULL;
	}
	return d;
}

unsigned char *inart_installer_ps_nodes(const struct inart_topo *t, const struct inart_jobs *js)
{
	unsigned char *is_ps = calloc((size_t)t->n_nodes + 1, 1);

	if (is_ps == NULL)
		return NULL;
	for (int j = 0; js != NULL && j < js->n_jobs; j++)
		for (int k = 0; k < js->jobs[j].n_ps; k++)
			is_ps[js->jobs[j].ps[k]] = 1;
	return is_ps;
}

char *inart_installer_ctl_path(char **ctl, const char *dir, const struct inart_topo *t, int v)
{
	char *p;

	if (ctl != NULL && ctl[v] != NULL)
		return strdup(ctl[v]);
	p = malloc(strlen(dir) + strlen(t->nodes[v].id) + 8);
	if (p != NULL)
		sprintf(p, "%s/%s.sock", dir, t->nodes[v].id);
	return p;
}

int inart_installer_call(const char *path, const struct inart_ctl_req *req, json_t **reply,
			 struct inart_err *err)
{
	char *body = inart_ctl_req_encode(req), *rep = NULL;
	size_t rlen;
	int rc;

	*reply = NULL;
	if (body == NULL) {
		inart_err_set(err, 0, "cannot encode the request");
		return -ENOMEM;
	}
	rc = inart_ctl_call(path, body, strlen(body), &rep, &rlen, INART_INSTALLER_TIMEOUT_MS, err);
	free(body);
	if (rc < 0)
		return rc;
	rc = inart_ctl_reply_parse(rep, rlen, reply, err);
	free(rep);
	return rc;
}

/* Node v of a rollout (role "switch" or "ps"), reached over its control
 * socket, with its request. */
static struct inart_rollout_node ro_node(char **ctl, const char *dir, const struct inart_topo *t,
					 int v, const char *role, struct inart_ctl_req *req)
{
	return (struct inart_rollout_node){.name = t->nodes[v].id,
					   .path = inart_installer_ctl_path(ctl, dir, t, v),
					   .role = role,
					   .req = req};
}

/* The real transport of a rollout: one request over the node's socket. */
static int rollout_call(void *ctx, const char *path, const struct inart_ctl_req *req,
			json_t **reply, struct inart_err *err)
{
	(void)ctx;
	return inart_installer_call(path, req, reply, err);
}

/* --dry-run: print "PATH REQUEST" per node, each request one that installs
 * the node at once under the identity (no "phase": `ctl send PATH REQUEST`
 * applies it by hand, outside a transaction). */
static void print_requests(FILE *out, struct inart_rollout_node *nodes, int n, const char *id)
{
	for (int i = 0; i < n; i++) {
		char *s;

		snprintf(nodes[i].req->install_id, sizeof(nodes[i].req->install_id), "%s", id);
		snprintf(nodes[i].req->node, sizeof(nodes[i].req->node), "%s", nodes[i].name);
		s = inart_ctl_req_encode(nodes[i].req);
		fprintf(out, "%s %s\n", nodes[i].path, s ? s : "(out of memory)");
		free(s);
	}
}

static void print_rollout(FILE *out, const struct inart_rollout_node *nodes, int n, const char *id)
{
	fprintf(out, "install %s\n", id);
	fprintf(out, "%-12s %-6s %-16s    %-16s %s\n", "node", "role", "held before", "holds now",
		"");
	for (int i = 0; i < n; i++) {
		const struct inart_rollout_node *nd = &nodes[i];

		fprintf(out, "%-12s %-6s %-16s -> %-16s %s%s%s\n", nd->name, nd->role,
			nd->before[0] ? nd->before : "(none)", nd->after[0] ? nd->after : "(none)",
			inart_rollout_state_name(nd->state), nd->err.msg[0] ? ": " : "",
			nd->err.msg);
	}
}

int inart_installer_build(const struct inart_installer_cfg *ci, const struct inart_plan *p,
			  struct inart_install **out, struct inart_err *err)
{
	struct inart_install *in = NULL;
	int rc = inart_install_build(ci->t, ci->js, p, ci->d, ci->opt, &in, err);

	*out = NULL;
	if (rc < 0)
		return rc;
	if (ci->learn)
		for (int i = 0; i < in->n_switches; i++)
			for (int k = 0; k < in->sw[i].cfg.n_ports; k++)
				memset(in->sw[i].cfg.ports[k].peer_mac, 0, 6);
	/* a plan of an epoch: in its half of the data plane's identifiers */
	if (ci->epoch >= 0 && (rc = inart_epoch_apply(in, (uint32_t)ci->epoch, err)) < 0) {
		inart_install_destroy(in);
		return rc;
	}
	*out = in;
	return 0;
}

/* The transaction's nodes and requests for src (into nodes and reqs, room
 * for every node): every switch, every PS of the plan, and every other PS
 * node (of a job, or with a control socket in the deployment), told to
 * drop its trees; with only, those nodes alone (the same transaction
 * under the same identity, a digest of the whole installation).  The
 * number of nodes, or -ENOMEM. */
static int install_nodes(const struct inart_installer_cfg *ci, const struct inart_install *src,
			 struct inart_rollout_node *nodes, struct inart_ctl_req *reqs)
{
	const struct inart_topo *t = ci->t;
	unsigned char *is_ps = inart_installer_ps_nodes(t, ci->js);
	int n = 0;

	if (is_ps == NULL)
		return -ENOMEM;
	for (int v = 0; ci->ctl != NULL && v < t->n_nodes; v++)
		if (ci->ctl[v] != NULL && t->nodes[v].kind != INART_NODE_SWITCH)
			is_ps[v] = 1;
	for (int i = 0; i < src->n_ps; i++)
		is_ps[src->ps[i].node] = 2;
	for (int v = 0; ci->only != NULL && v < t->n_nodes; v++)
		if (!ci->only[v])
			is_ps[v] = 0;
	for (int i = 0; i < src->n_switches; i++) {
		const struct inart_sw_install *si = &src->sw[i];

		if (ci->only != NULL && !ci->only[si->node])
			continue;
		reqs[n] = (struct inart_ctl_req){
		    .op = INART_CTL_INSTALL,
		    .has_cfg = !ci->tables_only, /* an epoch switch keeps the core */
		    .reset = ci->restart,	 /* the old run's slots go too */
		    .cfg = si->cfg,
		    .tab = inart_sw_install_update(si),
		};
		nodes[n] = ro_node(ci->ctl, ci->ctl_dir, t, si->node, "switch", &reqs[n]);
		n++;
	}
	for (int i = 0; i < src->n_ps; i++) {
		const struct inart_ps_install *pi = &src->ps[i];

		if (ci->only != NULL && !ci->only[pi->node])
			continue;
		reqs[n] = (struct inart_ctl_req){.op = INART_CTL_TREES,
						 .replace = 1,
						 .reset = ci->restart,
						 .n_trees = pi->n_trees,
						 .trees = pi->trees};
		nodes[n] = ro_node(ci->ctl, ci->ctl_dir, t, pi->node, "ps", &reqs[n]);
		n++;
	}
	for (int v = 0; v < t->n_nodes; v++) {
		if (is_ps[v] != 1)
			continue;
		reqs[n] = (struct inart_ctl_req){.op = INART_CTL_TREES, .replace = 1};
		nodes[n] = ro_node(ci->ctl, ci->ctl_dir, t, v, "ps", &reqs[n]);
		nodes[n].optional = 1;
		n++;
	}
	free(is_ps);
	return n;
}

/* Run the transaction over nodes[0..n) (or print the requests), with the
 * table of what each node holds on out.  0 or -EIO (err: why). */
static int install_transaction(const struct inart_installer_cfg *ci,
			       struct inart_rollout_node *nodes, int n, const char *id, FILE *out,
			       struct inart_err *err)
{
	if (ci->dry) {
		print_requests(out, nodes, n, id);
		return 0;
	}
	if (inart_rollout_run(nodes, n, id, rollout_call, NULL, err) < 0) {
		print_rollout(out, nodes, n, id);
		return -EIO;
	}
	print_rollout(out, nodes, n, id);
	for (int i = 0; ci->warn != NULL && i < n; i++)
		if (nodes[i].state == INART_RO_SKIPPED)
			fprintf(
			    ci->warn,
			    "inart ctl install: warning: %s (left out of the plan) not reachable: "
			    "%s\n",
			    nodes[i].name, nodes[i].err.msg);
	return 0;
}

int inart_installer_run(const struct inart_installer_cfg *ci, const struct inart_plan *p, FILE *out,
			char id[17], struct inart_install **built, struct inart_err *err)
{
	struct inart_install *in = NULL, *u = NULL, *src;
	struct inart_rollout_node *nodes = NULL;
	struct inart_ctl_req *reqs = NULL;
	int n = 0, rc = 0;

	id[0] = 0;
	if ((rc = inart_installer_build(ci, p, &in, err)) < 0)
		goto out;
	/* with the previous epoch: both side by side (epoch.h) */
	if (ci->old != NULL && (rc = inart_epoch_union(ci->old, in, &u, err)) < 0)
		goto out;
	src = u != NULL ? u : in;
	inart_install_id_fmt(inart_install_digest(src), id);
	nodes = calloc((size_t)ci->t->n_nodes + 1, sizeof(*nodes));
	reqs = calloc((size_t)ci->t->n_nodes + 1, sizeof(*reqs));
	n = nodes && reqs ? install_nodes(ci, src, nodes, reqs) : -ENOMEM;
	for (int i = 0; i < n && rc == 0; i++)
		if (nodes[i].path == NULL)
			rc = -ENOMEM;
	if (n < 0 || rc < 0) {
		n = n < 0 ? 0 : n;
		rc = inart_err_set(err, -ENOMEM, "out of memory");
	} else if (ci->only != NULL && n == 0) {
		rc = inart_err_set(err, -EINVAL, "no switch or PS of the installation");
	} else {
		rc = install_transaction(ci, nodes, n, id, out, err);
	}
out:
	for (int i = 0; i < n; i++)
		free((char *)nodes[i].path);
	free(nodes);
	free(reqs);
	inart_epoch_union_destroy(u);
	if (built != NULL && rc == 0)
		*built = in;
	else
		inart_install_destroy(in);
	return rc;
}
