/*
 * deploy: deployment file reader and writer (see deploy.h).  The reader
 * checks every node of the topology is described (address, switch ports
 * complete and distinct) and refuses unknown nodes and keys; it builds the
 * struct inart_deploy that install.c consumes.
 */
#include "bridge/deploy.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/file.h"
#include "dp/addr.h"
#include "dp/pkt.h"

void inart_deploy_ctl_free(char **ctl, int n_nodes)
{
	if (ctl == NULL)
		return;
	for (int i = 0; i < n_nodes; i++)
		free(ctl[i]);
	free(ctl);
}

static int has_key(const char *const *keys, const char *k)
{
	for (int i = 0; keys[i]; i++)
		if (strcmp(keys[i], k) == 0)
			return 1;
	return 0;
}

/* The first key of object o that keys does not list, or NULL. */
static const char *unknown_key(json_t *o, const char *const *keys)
{
	const char *k;
	json_t *x;

	json_object_foreach(o, k, x)
	{
		if (!has_key(keys, k))
			return k;
	}
	return NULL;
}

/* The values of a node entry, each checked the same way by both readers. */
static int ip_of(json_t *x, uint32_t *ip)
{
	return json_is_string(x) && inart_addr_parse_ip(json_string_value(x), ip) == 0 && *ip != 0;
}

static int mac_of(json_t *x, uint8_t mac[6])
{
	return json_is_string(x) && inart_addr_parse_mac(json_string_value(x), mac) == 0;
}

static int ctl_ok(json_t *x)
{
	return json_is_string(x) && json_string_length(x) > 0 && json_string_length(x) < 108;
}

static int ifname_ok(json_t *x)
{
	return json_is_string(x) && json_string_length(x) > 0 &&
	       json_string_length(x) < sizeof(((struct inart_deploy_port *)0)->ifname);
}

static int parse_node(json_t *o, const char *name, const struct inart_topo *t, int v,
		      struct inart_deploy *d, char **ctl, struct inart_err *err)
{
	static const char *const hkeys[] = {"ip", "mac", "ctl", NULL};
	static const char *const skeys[] = {"ip", "ctl", "ports", NULL};
	static const char *const pkeys[] = {"port", "mac", "if", NULL};
	const char *id = t->nodes[v].id, *k, *pk;
	int sw = t->nodes[v].kind == INART_NODE_SWITCH;
	int deg = t->out_off[v + 1] - t->out_off[v];
	uint64_t used = 0;
	json_t *x, *ports, *p;

	if (!json_is_object(o))
		return inart_err_set(err, -EINVAL, "%s: node '%s': must be an object", name, id);
	if ((k = unknown_key(o, sw ? skeys : hkeys)) != NULL)
		return inart_err_set(err, -EINVAL, "%s: node '%s': unknown key '%.64s'", name, id,
				     k);
	if (!ip_of(json_object_get(o, "ip"), &d->ip[v]))
		return inart_err_set(err, -EINVAL, "%s: node '%s': 'ip' must be an IPv4 address",
				     name, id);
	x = json_object_get(o, "mac");
	if (x != NULL && !mac_of(x, d->mac[v]))
		return inart_err_set(err, -EINVAL, "%s: node '%s': 'mac' must be xx:xx:xx:xx:xx:xx",
				     name, id);
	x = json_object_get(o, "ctl");
	if (x != NULL) {
		if (!ctl_ok(x))
			return inart_err_set(err, -EINVAL,
					     "%s: node '%s': 'ctl' must be a socket path "
					     "(1..107 bytes)",
					     name, id);
		if (ctl != NULL && (ctl[v] = strdup(json_string_value(x))) == NULL)
			return -ENOMEM;
	}
	if (!sw)
		return 0;
	if (deg > 64)
		return inart_err_set(err, -E2BIG, "%s: switch '%s' has %d links (at most 64)", name,
				     id, deg);
	ports = json_object_get(o, "ports");
	if (!json_is_object(ports))
		return inart_err_set(err, -EINVAL, "%s: switch '%s': 'ports' object missing", name,
				     id);
	json_object_foreach(ports, k, p)
	{
		int u = inart_topo_find(t, k), e;
		json_int_t pn;

		if (u < 0 || (e = inart_topo_arc_between(t, v, u)) < 0)
			return inart_err_set(err, -EINVAL,
					     "%s: switch '%s': port towards '%.64s', which is not "
					     "a neighbour",
					     name, id, k);
		if (!json_is_object(p))
			return inart_err_set(
			    err, -EINVAL, "%s: switch '%s' port '%s': not an object", name, id, k);
		if ((pk = unknown_key(p, pkeys)) != NULL)
			return inart_err_set(err, -EINVAL,
					     "%s: switch '%s': port key '%.64s' unknown", name, id,
					     pk);
		x = json_object_get(p, "port");
		pn = json_is_integer(x) ? json_integer_value(x) : -1;
		if (pn < 0 || pn >= deg || (used >> pn & 1))
			return inart_err_set(err, -EINVAL,
					     "%s: switch '%s': port towards '%s' must have a "
					     "distinct 'port' in 0..%d",
					     name, id, t->nodes[u].id, deg - 1);
		used |= 1ull << pn;
		d->port[e] = (int)pn;
		x = json_object_get(p, "mac");
		if (x != NULL && !mac_of(x, d->port_mac[e]))
			return inart_err_set(err, -EINVAL,
					     "%s: switch '%s': port towards '%s': bad 'mac'", name,
					     id, t->nodes[u].id);
		x = json_object_get(p, "if");
		if (x != NULL && !ifname_ok(x))
			return inart_err_set(err, -EINVAL,
					     "%s: switch '%s': port towards '%s': bad 'if'", name,
					     id, t->nodes[u].id);
	}
	for (int kk = t->out_off[v]; kk < t->out_off[v + 1]; kk++) {
		int e = t->arc_out[kk];

		if (d->port[e] < 0)
			return inart_err_set(err, -EINVAL, "%s: switch '%s': no port towards '%s'",
					     name, id, t->nodes[t->arcs[e].to].id);
	}
	return 0;
}

struct inart_deploy *inart_deploy_parse(const char *buf, size_t len, const char *name,
					const struct inart_topo *t, char ***ctl_out,
					struct inart_err *err)
{
	struct inart_deploy *d = NULL;
	json_error_t jerr;
	json_t *root, *nodes, *o;
	const char *k;
	char **ctl = NULL;
	int rc = 0;

	if (ctl_out != NULL)
		*ctl_out = NULL;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		inart_err_set(err, -EINVAL, "%s:%d:%d: %s", name, jerr.line, jerr.column,
			      jerr.text);
		return inart_null_errno(EINVAL);
	}
	d = inart_deploy_create(t);
	if (ctl_out != NULL)
		ctl = calloc((size_t)t->n_nodes + 1, sizeof(*ctl));
	if (d == NULL || (ctl_out != NULL && ctl == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	nodes = json_object_get(root, "nodes");
	if (!json_is_object(root) || !json_is_object(nodes) ||
	    json_object_size(root) != 1 + (json_object_get(root, "dataplane") != NULL)) {
		rc = inart_err_set(err, -EINVAL,
				   "%s: expected {\"nodes\": {...}} (and optionally \"dataplane\")",
				   name);
		goto out;
	}
	json_object_foreach(nodes, k, o)
	{
		int v = inart_topo_find(t, k);

		if (v < 0) {
			rc = inart_err_set(err, -EINVAL, "%s: node '%.64s' is not in the topology",
					   name, k);
			goto out;
		}
		if ((rc = parse_node(o, name, t, v, d, ctl, err)) < 0)
			goto out;
	}
	for (int v = 0; v < t->n_nodes; v++)
		if (d->ip[v] == 0) {
			rc = inart_err_set(err, -EINVAL, "%s: node '%s' missing", name,
					   t->nodes[v].id);
			goto out;
		}
out:
	json_decref(root);
	if (rc < 0) {
		inart_deploy_destroy(d);
		inart_deploy_ctl_free(ctl, t->n_nodes);
		return inart_null_errno(-rc);
	}
	if (ctl_out != NULL)
		*ctl_out = ctl;
	return d;
}

struct inart_deploy *inart_deploy_load(const char *path, const struct inart_topo *t, char ***ctl,
				       struct inart_err *err)
{
	struct inart_deploy *d;
	size_t len;
	char *buf = inart_file_read(path, &len, err);

	if (buf == NULL)
		return NULL;
	d = inart_deploy_parse(buf, len, path, t, ctl, err);
	free(buf);
	return d;
}

/* ---- one node's entry, without the topology (a daemon's own check) ---- */

/* Entry o of node id into n; messages name the JSON path. */
static int node_entry(json_t *o, const char *name, const char *id, struct inart_deploy_node *n,
		      struct inart_err *err)
{
	static const char *const hkeys[] = {"ip", "mac", "ctl", NULL};
	static const char *const skeys[] = {"ip", "ctl", "ports", NULL};
	static const char *const pkeys[] = {"port", "mac", "if", NULL};
	json_t *x, *ports = json_object_get(o, "ports"), *p;
	const char *k, *pk;
	uint64_t used = 0;

	n->is_switch = ports != NULL;
	if ((k = unknown_key(o, n->is_switch ? skeys : hkeys)) != NULL)
		return inart_err_set(err, -EINVAL, "%s: nodes.%s.%.64s: unknown key", name, id, k);
	if (!ip_of(json_object_get(o, "ip"), &n->ip))
		return inart_err_set(err, -EINVAL, "%s: nodes.%s.ip: must be an IPv4 address", name,
				     id);
	x = json_object_get(o, "mac");
	if (x != NULL && !mac_of(x, n->mac))
		return inart_err_set(err, -EINVAL, "%s: nodes.%s.mac: must be xx:xx:xx:xx:xx:xx",
				     name, id);
	x = json_object_get(o, "ctl");
	if (x != NULL && !ctl_ok(x))
		return inart_err_set(err, -EINVAL,
				     "%s: nodes.%s.ctl: must be a socket path (1..107 bytes)", name,
				     id);
	if (x != NULL)
		strcpy(n->ctl, json_string_value(x));
	if (!n->is_switch)
		return 0;
	if (!json_is_object(ports) || json_object_size(ports) > INART_DEPLOY_MAX_PORTS)
		return inart_err_set(err, -EINVAL,
				     "%s: nodes.%s.ports: must be an object of at most %d ports",
				     name, id, INART_DEPLOY_MAX_PORTS);
	n->n_ports = (int)json_object_size(ports);
	json_object_foreach(ports, k, p)
	{
		struct inart_deploy_port *e;
		json_int_t pn;

		if (!json_is_object(p))
			return inart_err_set(
			    err, -EINVAL, "%s: nodes.%s.ports.%.64s: not an object", name, id, k);
		if ((pk = unknown_key(p, pkeys)) != NULL)
			return inart_err_set(err, -EINVAL,
					     "%s: nodes.%s.ports.%.64s.%.64s: unknown key", name,
					     id, k, pk);
		x = json_object_get(p, "port");
		pn = json_is_integer(x) ? json_integer_value(x) : -1;
		if (pn < 0 || pn >= n->n_ports || (used >> pn & 1))
			return inart_err_set(err, -EINVAL,
					     "%s: nodes.%s.ports.%.64s.port: must be a distinct "
					     "number in 0..%d",
					     name, id, k, n->n_ports - 1);
		used |= 1ull << pn;
		e = &n->ports[pn];
		snprintf(e->peer, sizeof(e->peer), "%s", k);
		x = json_object_get(p, "mac");
		if (x != NULL && !mac_of(x, e->mac))
			return inart_err_set(err, -EINVAL,
					     "%s: nodes.%s.ports.%.64s.mac: must be "
					     "xx:xx:xx:xx:xx:xx",
					     name, id, k);
		x = json_object_get(p, "if");
		if (x != NULL && !ifname_ok(x))
			return inart_err_set(
			    err, -EINVAL,
			    "%s: nodes.%s.ports.%.64s.if: must be an interface name "
			    "(1..%zu bytes)",
			    name, id, k, sizeof(e->ifname) - 1);
		if (x != NULL)
			strcpy(e->ifname, json_string_value(x));
	}
	return 0;
}

int inart_deploy_node_parse(const char *buf, size_t len, const char *name, const char *id,
			    struct inart_deploy_node *n, struct inart_err *err)
{
	json_error_t jerr;
	json_t *root, *nodes, *o;
	int rc;

	memset(n, 0, sizeof(*n));
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return inart_err_set(err, -EINVAL, "%s:%d:%d: %s", name, jerr.line, jerr.column,
				     jerr.text);
	nodes = json_object_get(root, "nodes");
	o = json_object_get(nodes, id);
	if (!json_is_object(nodes))
		rc = inart_err_set(err, -EINVAL, "%s: nodes: missing (expected {\"nodes\": {...}})",
				   name);
	else if (o == NULL)
		rc = inart_err_set(err, -ENOENT, "%s: nodes.%s: no such node", name, id);
	else if (!json_is_object(o))
		rc = inart_err_set(err, -EINVAL, "%s: nodes.%s: must be an object", name, id);
	else
		rc = node_entry(o, name, id, n, err);
	json_decref(root);
	return rc;
}

/* A number of milliseconds in (0, 3600000] from key k of o, into *ns. */
static int dp_ms(json_t *o, const char *k, const char *name, uint64_t *ns, struct inart_err *err)
{
	json_t *x = json_object_get(o, k);

	if (x == NULL)
		return 0;
	if (!json_is_number(x) || !(json_number_value(x) > 0) || json_number_value(x) > 3600000)
		return inart_err_set(err, -EINVAL,
				     "%s: dataplane: '%s' must be a number of ms in "
				     "(0, 3600000]",
				     name, k);
	*ns = (uint64_t)(json_number_value(x) * 1e6);
	return 0;
}

/* A scale of the "dataplane" object: a number in [0, 1e6] ((0, 1e6] if
 * positive), *v unchanged if absent.  0 or -EINVAL. */
static int dp_scale(json_t *dp, const char *k, int positive, const char *name, double *v,
		    struct inart_err *err)
{
	json_t *x = json_object_get(dp, k);
	double d = x ? json_number_value(x) : 0;

	if (x == NULL)
		return 0;
	if (!json_is_number(x) || !(positive ? d > 0 : d >= 0) || d > 1e6)
		return inart_err_set(err, -EINVAL,
				     "%s: dataplane: '%s' must be a number in %s0, 1e6]", name, k,
				     positive ? "(" : "[");
	*v = d;
	return 0;
}

int inart_deploy_dataplane_parse(const char *buf, size_t len, const char *name,
				 struct inart_install_opt *o, struct inart_err *err)
{
	static const char *const keys[] = {"slots_per_tree",
					   "retx_timeout_ms",
					   "flush_timeout_ms",
					   "pace_scale",
					   "pace_lead_ms",
					   "rate_scale",
					   NULL};
	struct inart_install_opt n = *o;
	json_t *root = json_loadb(buf, len, 0, NULL), *dp, *x;
	const char *k;
	int rc = 0;

	dp = json_object_get(root, "dataplane");
	if (dp == NULL)
		goto out;
	if (!json_is_object(dp)) {
		rc = inart_err_set(err, -EINVAL, "%s: 'dataplane' must be an object", name);
		goto out;
	}
	json_object_foreach(dp, k, x)
	{
		if (!has_key(keys, k)) {
			rc = inart_err_set(err, -EINVAL, "%s: dataplane: unknown key '%.64s'", name,
					   k);
			goto out;
		}
	}
	x = json_object_get(dp, "slots_per_tree");
	if (x != NULL) {
		if (!json_is_integer(x) || json_integer_value(x) < 1 ||
		    json_integer_value(x) > 65535) {
			rc = inart_err_set(err, -EINVAL,
					   "%s: dataplane: 'slots_per_tree' must be in 1..65535",
					   name);
			goto out;
		}
		n.slots_per_tree = (uint16_t)json_integer_value(x);
	}
	if ((rc = dp_ms(dp, "retx_timeout_ms", name, &n.retx_timeout_ns, err)) < 0 ||
	    (rc = dp_ms(dp, "flush_timeout_ms", name, &n.flush_timeout_ns, err)) < 0)
		goto out;
	if ((rc = dp_scale(dp, "pace_scale", 0, name, &n.pace_scale, err)) < 0 ||
	    (rc = dp_ms(dp, "pace_lead_ms", name, &n.pace_lead_ns, err)) < 0 ||
	    (rc = dp_scale(dp, "rate_scale", 1, name, &n.rate_scale, err)) < 0)
		goto out;
	*o = n;
out:
	json_decref(root);
	return rc;
}

/* Read the file at path, then parse node id into n, or (n NULL) its
 * "dataplane" into o. */
static int load_part(const char *path, const char *id, struct inart_deploy_node *n,
		     struct inart_install_opt *o, struct inart_err *err)
{
	size_t len;
	char *buf = inart_file_read(path, &len, err);
	int rc;

	if (buf == NULL)
		return -(errno ? errno : EIO);
	rc = n != NULL ? inart_deploy_node_parse(buf, len, path, id, n, err)
		       : inart_deploy_dataplane_parse(buf, len, path, o, err);
	free(buf);
	return rc;
}

int inart_deploy_dataplane_load(const char *path, struct inart_install_opt *o,
				struct inart_err *err)
{
	return load_part(path, NULL, NULL, o, err);
}

int inart_deploy_node_load(const char *path, const char *id, struct inart_deploy_node *n,
			   struct inart_err *err)
{
	return load_part(path, id, n, NULL, err);
}

char *inart_deploy_dump(const struct inart_deploy *d, const struct inart_topo *t, char *const *ctl,
			const char *ctl_dir, const unsigned char *is_ps)
{
	json_t *root = json_object(), *nodes = json_object();
	char *s;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *o = json_object();
		int sw = t->nodes[v].kind == INART_NODE_SWITCH;
		char ip[16], mac[18];

		inart_addr_fmt_ip(d->ip[v], ip);
		json_object_set_new(o, "ip", json_string(ip));
		if (!sw && !inart_mac_is_zero(d->mac[v])) {
			inart_addr_fmt_mac(d->mac[v], mac);
			json_object_set_new(o, "mac", json_string(mac));
		}
		if (ctl != NULL && ctl[v] != NULL) {
			json_object_set_new(o, "ctl", json_string(ctl[v]));
		} else if (ctl_dir != NULL && (sw || (is_ps != NULL && is_ps[v]))) {
			char *p = malloc(strlen(ctl_dir) + strlen(t->nodes[v].id) + 8);

			if (p != NULL) {
				sprintf(p, "%s/%s.sock", ctl_dir, t->nodes[v].id);
				json_object_set_new(o, "ctl", json_string(p));
				free(p);
			}
		}
		if (sw) {
			json_t *ports = json_object();

			for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
				int e = t->arc_out[k];
				json_t *p = json_object();

				json_object_set_new(p, "port", json_integer(d->port[e]));
				if (!inart_mac_is_zero(d->port_mac[e])) {
					inart_addr_fmt_mac(d->port_mac[e], mac);
					json_object_set_new(p, "mac", json_string(mac));
				}
				json_object_set_new(ports, t->nodes[t->arcs[e].to].id, p);
			}
			json_object_set_new(o, "ports", ports);
		}
		json_object_set_new(nodes, t->nodes[v].id, o);
	}
	json_object_set_new(root, "nodes", nodes);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}
