/*
 * nodecfg: a daemon's options against its deployment entry (nodecfg.h).
 * The entry is read by bridge/deploy's one-node reader (no topology: the
 * daemon has none); this module compares.
 */
#include "daemon/nodecfg.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/deploy.h"
#include "dp/addr.h"

/* Whether UNIX socket paths a and b name the same file: equal, or the
 * same name in the same directory (the socket need not exist yet). */
static int same_path(const char *a, const char *b)
{
	char ca[PATH_MAX], cb[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];

	if (strcmp(a, b) == 0)
		return 1;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	if (strcmp(basename(ca), basename(cb)) != 0)
		return 0;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	return realpath(dirname(ca), ra) != NULL && realpath(dirname(cb), rb) != NULL &&
	       strcmp(ra, rb) == 0;
}

/* The entry of dm->name, of the right kind, its control socket dm's. */
static int entry(const struct inart_daemon_cfg *dm, int is_switch, struct inart_deploy_node *n,
		 struct inart_err *err)
{
	const char *f = dm->deployment, *id = dm->name;
	int rc;

	if (id == NULL)
		return inart_err_set(err, -EINVAL, "--deployment needs --name ID (its entry)");
	rc = inart_deploy_node_load(f, id, n, err);
	if (rc < 0)
		return rc;
	if (n->is_switch != is_switch)
		return inart_err_set(err, -EINVAL, "%s: nodes.%s: %s, but this is a %s", f, id,
				     n->is_switch ? "a switch (it has \"ports\")"
						  : "a host (no \"ports\")",
				     is_switch ? "switch" : "PS");
	if (n->ctl[0] == '\0')
		return 0;
	if (strncmp(n->ctl, "tcp:", 4) == 0) {
		if (dm->tcp == NULL || strcmp(n->ctl + 4, dm->tcp) != 0)
			return inart_err_set(err, -EINVAL,
					     "%s: nodes.%s.ctl: '%s', but --ctl-tcp is %s", f, id,
					     n->ctl, dm->tcp ? dm->tcp : "not given");
	} else if (!same_path(n->ctl, dm->ctl)) {
		return inart_err_set(err, -EINVAL, "%s: nodes.%s.ctl: '%s', but --ctl is '%s'", f,
				     id, n->ctl, dm->ctl);
	}
	return 0;
}

int inart_nodecfg_check_switch(const struct inart_daemon_cfg *dm, const char *const *ports, int n,
			       enum inart_afp_mode mode, struct inart_err *err)
{
	const char *f = dm->deployment, *id = dm->name;
	struct inart_deploy_node *nd = calloc(1, sizeof(*nd));
	int rc;

	if (nd == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	rc = entry(dm, 1, nd, err);
	if (rc == 0 && nd->n_ports != n)
		rc = inart_err_set(err, -EINVAL, "%s: nodes.%s.ports: %d ports, but %d --port %s",
				   f, id, nd->n_ports, n, n == 1 ? "interface" : "interfaces");
	for (int i = 0; rc == 0 && i < n; i++) {
		const struct inart_deploy_port *p = &nd->ports[i];
		struct inart_err e = {{0}};

		if (p->ifname[0] == '\0')
			continue;
		if (inart_afp_check_name(p->ifname, mode, &e) < 0)
			rc = inart_err_set(err, -ENODEV, "%s: nodes.%s.ports.%s.if: %s", f, id,
					   p->peer, e.msg);
		else if (strcmp(p->ifname, ports[i]) != 0)
			rc = inart_err_set(err, -EINVAL,
					   "%s: nodes.%s.ports.%s.if: '%s' is port %d, but --port "
					   "%d is '%s'",
					   f, id, p->peer, p->ifname, i, i, ports[i]);
	}
	free(nd);
	return rc;
}

int inart_nodecfg_check_ps(const struct inart_daemon_cfg *dm, uint32_t bind_ip,
			   struct inart_err *err)
{
	struct inart_deploy_node *nd = calloc(1, sizeof(*nd));
	char a[16], b[16];
	int rc;

	if (nd == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	rc = entry(dm, 0, nd, err);
	if (rc == 0 && bind_ip != 0 && nd->ip != bind_ip) {
		inart_addr_fmt_ip(nd->ip, a);
		inart_addr_fmt_ip(bind_ip, b);
		rc = inart_err_set(err, -EINVAL, "%s: nodes.%s.ip: %s, but --bind is %s",
				   dm->deployment, dm->name, a, b);
	}
	free(nd);
	return rc;
}
