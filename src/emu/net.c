/*
 * net: namespaces, veths, addresses and shaping of an emulated network (see
 * net.h).  The root script creates every namespace and every veth pair (both
 * ends named, addressed and placed at once); then one shell per node, run
 * inside its namespace, disables IPv6, applies its `ip -batch` (links up,
 * host address, neighbour, route) and `tc -batch` (tbf per interface)
 * files and turns checksum offload off on hosts.  The node shells run in
 * parallel.
 */
#include "emu/net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sbuf.h"
#include "common/slab.h"
#include "ctlproto/ctlmsg.h"
#include "bridge/deploy.h"
#include "emu/spawn.h"

#define FRAME 1514
#define CMD_TIMEOUT_MS 60000

void inart_emu_net_opt_default(struct inart_emu_net_opt *o)
{
	o->prefix = NULL;
	o->rate_scale = 1e-4;
	o->queue_ms = 200;
	o->min_queue_bytes = 16 << 20;
	o->is_ps = NULL;
}

int inart_emu_prefix_ok(const char *p)
{
	size_t n = p ? strlen(p) : 0;

	if (n == 0 || n > INART_EMU_PREFIX_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9')))
			return 0;
	return 1;
}

static int id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 40 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

void inart_emu_net_destroy(struct inart_emu_net *n)
{
	if (n == NULL)
		return;
	for (int v = 0; v < n->t->n_nodes; v++)
		free(n->node_script[v]);
	free(n->deploy_json);
	free(n->root_script);
	inart_deploy_destroy(n->d);
	free(n); /* and its per-node and per-arc arrays (net_lay_out) */
}

int inart_emu_net_port(const struct inart_emu_net *n, int e)
{
	const struct inart_topo *t = n->t;
	int u = t->arcs[e].from;

	for (int k = t->out_off[u]; k < t->out_off[u + 1]; k++)
		if (t->arc_out[k] == e)
			return k - t->out_off[u];
	return -1;
}

static void fmt_mac(const uint8_t m[6], char out[18])
{
	inart_addr_fmt_mac(m, out);
}

/* tbf's burst for a link of bps: 1 ms, at least two full frames. */
static long tbf_burst(double bps)
{
	long burst = (long)(bps / 8 * 0.001);

	return burst < 2 * FRAME ? 2 * FRAME : burst;
}

void inart_emu_net_shape_arg(const struct inart_emu_net *n, int e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%d=%.0f,burst=%ld,limit=%ld", inart_emu_net_port(n, e), n->tbf[e].bps,
		 tbf_burst(n->tbf[e].bps),
		 n->tbf[e].limit < 1000000000 ? n->tbf[e].limit : 1000000000);
}

/* The shell line of node v: IPv6 off, its ip and tc batches, offload off. */
static char *node_script(const struct inart_emu_net *n, int v)
{
	const struct inart_topo *t = n->t;
	struct inart_sbuf ip = {0}, tc = {0}, sh = {0};
	int host = t->nodes[v].kind == INART_NODE_HOST;
	char *a, *b;

	inart_sbuf_printf(&ip, "link set lo up\n");
	for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
		int e = t->arc_out[k];
		double bps = n->tbf[e].bps;

		inart_sbuf_printf(&ip, "link set %s mtu 1500 up\n", n->ifname[e]);
		if (host || !n->switch_shape) /* else switchd --shape */
			inart_sbuf_printf(
			    &tc, "qdisc replace dev %s root tbf rate %.0fbit burst %ld limit %ld\n",
			    n->ifname[e], bps, tbf_burst(bps), n->tbf[e].limit);
		if (host) {
			char ipb[16], gw[16], mac[18];

			inart_addr_fmt_ip(n->d->ip[v], ipb);
			inart_addr_fmt_ip(n->gw[v], gw);
			fmt_mac(n->d->port_mac[e ^ 1], mac);
			inart_sbuf_printf(&ip, "addr add %s/32 dev %s\n", ipb, n->ifname[e]);
			inart_sbuf_printf(&ip, "neigh replace %s lladdr %s dev %s nud permanent\n",
					  gw, mac, n->ifname[e]);
			inart_sbuf_printf(&ip, "route add 10.0.0.0/8 via %s dev %s onlink\n", gw,
					  n->ifname[e]);
		}
	}
	a = inart_sbuf_finish(&ip);
	b = inart_sbuf_finish(&tc);
	inart_sbuf_printf(&sh, "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && "
			       "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && "
			       "ip -batch - <<'EOF_IP' && tc -batch - <<'EOF_TC'");
	if (host)
		inart_sbuf_printf(&sh, " && ethtool -K %s tx off >/dev/null",
				  n->ifname[t->arc_out[t->out_off[v]]]);
	inart_sbuf_printf(&sh, "\n%sEOF_IP\n%sEOF_TC\n", a ? a : "", b ? b : "");
	free(a);
	free(b);
	return inart_sbuf_finish(&sh);
}

/* The deployment text with a "dataplane" object (window, timeout). */
static char *add_dataplane(char *text, const struct inart_emu_net_opt *o)
{
	json_t *root = json_loads(text, 0, NULL), *dp = json_object();
	char *s;

	free(text);
	if (root == NULL)
		return NULL;
	if (o->window > 0)
		json_object_set_new(dp, "slots_per_tree", json_integer(o->window));
	if (o->retx_ms > 0)
		json_object_set_new(dp, "retx_timeout_ms", json_real(o->retx_ms));
	if (o->flush_ms > 0)
		json_object_set_new(dp, "flush_timeout_ms", json_real(o->flush_ms));
	/* always: 0 (--pace 0) must say "not paced", not "the default" (which
	   would pace at the unscaled rates) */
	json_object_set_new(dp, "pace_scale", json_real(o->pace_scale > 0 ? o->pace_scale : 0));
	/* the plan's own rates on this network (rate scale) and how far ahead
	   of them a paced tree may run (dp/pace.h) */
	if (o->pace_lead_ms > 0 && o->rate_scale > 0) {
		json_object_set_new(dp, "pace_lead_ms", json_real(o->pace_lead_ms));
		json_object_set_new(dp, "rate_scale", json_real(o->rate_scale));
	}
	json_object_set_new(root, "dataplane", dp);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

/* Each node's namespace name, and the control socket of each switch and PS
 * (ctl[v], NULL elsewhere); refuses nodes the emulator cannot build. */
static int name_nodes(struct inart_emu_net *n, const struct inart_emu_net_opt *o, char **ctl,
		      struct inart_err *err)
{
	const struct inart_topo *t = n->t;

	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *nd = &t->nodes[v];
		int deg = t->out_off[v + 1] - t->out_off[v];
		char buf[128];

		if (nd->kind == INART_NODE_HOST && deg != 1)
			return inart_err_set(
			    err, -EINVAL,
			    "host '%s' has %d links: the emulator needs hosts with "
			    "exactly one (switch-centric topologies)",
			    nd->id, deg);
		if (deg > 64)
			return inart_err_set(err, -EINVAL, "switch '%s' has %d links (at most 64)",
					     nd->id, deg);
		/* at most 10 + 9 + 1 + 40 bytes (id_ok) */
		if (id_ok(nd->id))
			snprintf(n->ns[v], sizeof(n->ns[v]), "%s%s-%s", INART_EMU_NS_PREFIX,
				 o->prefix, nd->id);
		else
			snprintf(n->ns[v], sizeof(n->ns[v]), "%s%s-n%d", INART_EMU_NS_PREFIX,
				 o->prefix, v);
		if (nd->kind == INART_NODE_SWITCH || (o->is_ps != NULL && o->is_ps[v])) {
			snprintf(buf, sizeof(buf), "%s/%s.sock", n->dir,
				 id_ok(nd->id) ? nd->id : "");
			if (!id_ok(nd->id))
				snprintf(buf, sizeof(buf), "%s/n%d.sock", n->dir, v);
			ctl[v] = strdup(buf);
		}
	}
	return 0;
}

/* Each arc's interface name, shaped rate and queue limit; each host's
 * gateway (the switch it hangs off). */
static void size_arcs(struct inart_emu_net *n, const struct inart_emu_net_opt *o)
{
	const struct inart_topo *t = n->t;

	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		const struct inart_arc *a = &t->arcs[e];
		double bps = a->gbps * 1e9 * o->rate_scale;
		long lim = (long)(bps / 8 * o->queue_ms / 1000);

		snprintf(n->ifname[e], sizeof(n->ifname[e]), "e%s-p%d", o->prefix,
			 inart_emu_net_port(n, e));
		n->tbf[e] = (struct inart_emu_tbf){
		    bps, lim > o->min_queue_bytes ? lim : o->min_queue_bytes};
		if (t->nodes[a->from].kind == INART_NODE_HOST)
			n->gw[a->from] = n->d->ip[a->to];
	}
}

/* The `ip -batch` text run in the root namespace: the namespaces, and one
 * veth pair per link with the deployment's MACs. */
static char *root_script(const struct inart_emu_net *n)
{
	const struct inart_topo *t = n->t;
	struct inart_sbuf root = {0};

	for (int v = 0; v < t->n_nodes; v++)
		inart_sbuf_printf(&root, "netns add %s\n", n->ns[v]);
	for (int l = 0; l < t->n_links; l++) {
		int e = 2 * l, u = t->arcs[e].from, w = t->arcs[e].to;
		char mu[18], mw[18];

		fmt_mac(t->nodes[u].kind == INART_NODE_HOST ? n->d->mac[u] : n->d->port_mac[e], mu);
		fmt_mac(t->nodes[w].kind == INART_NODE_HOST ? n->d->mac[w] : n->d->port_mac[e ^ 1],
			mw);
		inart_sbuf_printf(&root,
				  "link add name %s address %s netns %s type veth peer name %s "
				  "address %s netns %s\n",
				  n->ifname[e], mu, n->ns[u], n->ifname[e ^ 1], mw, n->ns[w]);
	}
	return inart_sbuf_finish(&root);
}

/* The network and its per-node (ns, node_script, gw) and per-arc (ifname,
 * tbf) arrays in one block (inart_slab_new). */
static void net_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_emu_net *n = obj;
	size_t nodes = (size_t)n->t->n_nodes + 1, arcs = (size_t)inart_topo_n_arcs(n->t) + 1;

	n->ns = inart_slab_take(s, nodes, sizeof(*n->ns));
	n->node_script = inart_slab_take(s, nodes, sizeof(*n->node_script));
	n->gw = inart_slab_take(s, nodes, sizeof(*n->gw));
	n->ifname = inart_slab_take(s, arcs, sizeof(*n->ifname));
	n->tbf = inart_slab_take(s, arcs, sizeof(*n->tbf));
}

int inart_emu_net_create(const struct inart_topo *t, const struct inart_emu_net_opt *o,
			 struct inart_emu_net **out, struct inart_err *err)
{
	struct inart_emu_net proto = {0}, *n;
	int rc = 0;
	char **ctl = NULL;

	*out = NULL;
	if (!inart_emu_prefix_ok(o->prefix))
		return inart_err_set(err, -EINVAL,
				     "prefix '%s': 1 to %d lower-case letters or digits",
				     o->prefix ? o->prefix : "", INART_EMU_PREFIX_MAX);
	proto.t = t;
	n = inart_slab_new(&proto, sizeof(proto), net_lay_out);
	if (n == NULL)
		return -ENOMEM;
	snprintf(n->prefix, sizeof(n->prefix), "%s", o->prefix);
	snprintf(n->dir, sizeof(n->dir), "%s/%s", INART_EMU_RUN_DIR, o->prefix);
	n->d = inart_deploy_auto(t);
	ctl = calloc((size_t)t->n_nodes + 1, sizeof(*ctl));
	if (!n->d || !ctl) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = name_nodes(n, o, ctl, err)) < 0)
		goto out;
	size_arcs(n, o);
	n->switch_shape = o->switch_shape;
	n->root_script = root_script(n);
	for (int v = 0; v < t->n_nodes && n->root_script; v++)
		if ((n->node_script[v] = node_script(n, v)) == NULL)
			break;
	n->deploy_json = inart_deploy_dump(n->d, t, ctl, NULL, NULL);
	if (n->deploy_json != NULL && (o->window > 0 || o->retx_ms > 0 || o->flush_ms > 0))
		n->deploy_json = add_dataplane(n->deploy_json, o);
	if (n->root_script == NULL || n->deploy_json == NULL ||
	    n->node_script[t->n_nodes - 1] == NULL)
		rc = -ENOMEM;
out:
	inart_deploy_ctl_free(ctl, t->n_nodes);
	if (rc < 0) {
		inart_emu_net_destroy(n);
		return rc;
	}
	*out = n;
	return 0;
}

void inart_emu_names_free(char **names, int n)
{
	for (int i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

int inart_emu_leftovers(const char *prefix, char ***names)
{
	char want[64];
	DIR *d = opendir("/run/netns");
	struct dirent *e;
	char **v = NULL;
	int n = 0, cap = 0;

	if (names != NULL)
		*names = NULL;
	snprintf(want, sizeof(want), "%s%s%s", INART_EMU_NS_PREFIX, prefix ? prefix : "",
		 prefix ? "-" : "");
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, want, strlen(want)) != 0)
			continue;
		if (names != NULL) {
			if (n == cap) {
				char **nv =
				    realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (nv == NULL)
					break;
				v = nv;
			}
			if ((v[n] = strdup(e->d_name)) == NULL)
				break;
		}
		n++;
	}
	if (d != NULL)
		closedir(d);
	if (prefix != NULL) {
		char dir[128];
		struct stat st;

		snprintf(dir, sizeof(dir), "%s/%s", INART_EMU_RUN_DIR, prefix);
		if (stat(dir, &st) == 0 && n == 0)
			n = 1; /* a run directory without namespaces is a leftover too */
	}
	if (names != NULL)
		*names = v;
	else
		free(v);
	return n;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (f == NULL)
		return -errno;
	if (fputs(text, f) < 0)
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(path);
	return 0;
}

/* Remove a run directory (only under INART_EMU_RUN_DIR). */
static void rm_dir(const char *dir)
{
	if (strncmp(dir, INART_EMU_RUN_DIR "/", strlen(INART_EMU_RUN_DIR) + 1) != 0 ||
	    strstr(dir, "..") != NULL)
		return;
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ip -batch of text in the root namespace. */
static int ip_batch(const char *text, struct inart_err *err)
{
	char *argv[] = {"ip", "-batch", "-", NULL}, out[2048];
	int rc = inart_emu_cmd(NULL, argv, text, out, sizeof(out), CMD_TIMEOUT_MS, err);

	if (rc > 0) {
		char *nl = strchr(out, '\n');

		if (nl != NULL && nl[1] == '\0')
			*nl = '\0';
		return inart_err_set(err, -EIO, "ip: %s", out);
	}
	return rc;
}

/* The first line of file path (without its newline) in msg, "" if none. */
static void first_line(const char *path, char *msg, size_t size)
{
	FILE *f = fopen(path, "r");

	msg[0] = '\0';
	if (f != NULL) {
		if (fgets(msg, (int)size, f) == NULL)
			msg[0] = '\0';
		fclose(f);
	}
	msg[strcspn(msg, "\n")] = '\0';
}

/* Run every node's script: one shell per node, in parallel, each in its
 * namespace (output in the run directory's net-V.log), and wait for all
 * of them.  0, or -errno (err names the first node that failed). */
static int run_node_scripts(struct inart_emu_net *n, struct inart_err *err)
{
	const struct inart_topo *t = n->t;
	pid_t *pid = calloc((size_t)t->n_nodes + 1, sizeof(*pid));
	char path[128];
	int rc = 0;

	if (pid == NULL)
		return -ENOMEM;
	for (int v = 0; v < t->n_nodes; v++) {
		char *argv[] = {"sh", "-c", n->node_script[v], NULL};
		struct inart_emu_fds fds = {-1, -1, -1, 0};
		int fd;

		snprintf(path, sizeof(path), "%s/net-%d.log", n->dir, v);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		fds.out = fds.err = fd;
		pid[v] = inart_emu_spawn(n->ns[v], argv, &fds, err);
		if (fd >= 0)
			close(fd);
		if (pid[v] < 0) {
			rc = pid[v];
			pid[v] = 0;
			break;
		}
	}
	for (int v = 0; v < t->n_nodes; v++) {
		char msg[256];
		int st;

		if (pid[v] <= 0)
			continue;
		while (waitpid(pid[v], &st, 0) < 0 && errno == EINTR)
			;
		if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			snprintf(path, sizeof(path), "%s/net-%d.log", n->dir, v);
			first_line(path, msg, sizeof(msg));
			rc = inart_err_set(err, -EIO, "setting up node '%s' (namespace %s): %s",
					   t->nodes[v].id, n->ns[v], msg[0] ? msg : "failed");
		}
	}
	free(pid);
	return rc;
}

int inart_emu_net_up(struct inart_emu_net *n, struct inart_err *err)
{
	char path[128], own[32];
	int rc;

	mkdir(INART_EMU_RUN_DIR, 0755);
	if (mkdir(n->dir, 0700) < 0)
		return inart_err_set(err, -errno, "%s: %s", n->dir, strerror(errno));
	snprintf(own, sizeof(own), "%d\n", (int)getpid());
	snprintf(path, sizeof(path), "%s/owner", n->dir);
	write_file(path, own);
	snprintf(path, sizeof(path), "%s/deploy.json", n->dir);
	rc = write_file(path, n->deploy_json);
	if (rc < 0) {
		inart_err_set(err, rc, "%s: %s", path, strerror(-rc));
	} else {
		n->up = 1;
		rc = ip_batch(n->root_script, err);
		if (rc == 0)
			rc = run_node_scripts(n, err);
	}
	if (rc < 0)
		inart_emu_net_down(n);
	return rc;
}

int inart_emu_net_down(struct inart_emu_net *n)
{
	struct inart_sbuf b = {0};
	char *s, **names;
	int cnt, rc = 0;

	/* whatever exists with our prefix, even if up stopped half-way */
	cnt = inart_emu_leftovers(n->prefix, &names);
	for (int i = 0; names != NULL && i < cnt; i++)
		inart_sbuf_printf(&b, "netns del %s\n", names[i]);
	inart_emu_names_free(names, cnt);
	s = inart_sbuf_finish(&b);
	if (s != NULL && s[0] != '\0')
		rc = ip_batch(s, NULL);
	free(s);
	rm_dir(n->dir);
	n->up = 0;
	return rc;
}

int inart_emu_net_link_set(struct inart_emu_net *n, int e, int up, struct inart_err *err)
{
	const struct inart_topo *t = n->t;
	char *argv[] = {"ip",  "-n",	     n->ns[t->arcs[e].from], "link",
			"set", n->ifname[e], up ? "up" : "down",     NULL};
	char out[512];
	int rc = inart_emu_cmd(NULL, argv, NULL, out, sizeof(out), CMD_TIMEOUT_MS, err);

	if (rc > 0)
		return inart_err_set(err, -EIO, "ip link set %s %s: %s", n->ifname[e],
				     up ? "up" : "down", out);
	/* a host's route through the link went with it: the host's script
	   again (its "ip -batch" lines are idempotent with replace) */
	for (int k = 0; rc == 0 && up && k < 2; k++) {
		int v = k ? t->arcs[e].to : t->arcs[e].from, a = k ? e ^ 1 : e;
		char ipb[16], gw[16], mac[18], cmd[256];
		char *sh[] = {"sh", "-c", cmd, NULL};

		if (t->nodes[v].kind != INART_NODE_HOST)
			continue;
		inart_addr_fmt_ip(n->d->ip[v], ipb);
		inart_addr_fmt_ip(n->gw[v], gw);
		fmt_mac(n->d->port_mac[a ^ 1], mac);
		snprintf(cmd, sizeof(cmd),
			 "ip neigh replace %s lladdr %s dev %s nud permanent && "
			 "ip route replace 10.0.0.0/8 via %s dev %s onlink",
			 gw, mac, n->ifname[a], gw, n->ifname[a]);
		rc = inart_emu_cmd(n->ns[v], sh, NULL, out, sizeof(out), CMD_TIMEOUT_MS, err);
		if (rc > 0)
			rc =
			    inart_err_set(err, -EIO, "%s: routes after link up: %s", n->ns[v], out);
	}
	return rc;
}

#define MAX_PIDS 4096

/* Append the PIDs of the processes inside namespace ns to pids[*n]. */
static void ns_pids(const char *ns, pid_t *pids, int *n)
{
	char *argv[] = {"ip", "netns", "pids", (char *)ns, NULL}, out[8192], *p, *end;

	if (inart_emu_cmd(NULL, argv, NULL, out, sizeof(out), CMD_TIMEOUT_MS, NULL) != 0)
		return;
	for (p = out; *n < MAX_PIDS; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 1 && v != getpid())
			pids[(*n)++] = (pid_t)v;
	}
}

/* 1 if pid runs (exists and is not a zombie waiting for its parent). */
static int running(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Wait up to ms for the processes to be gone: 1 if they are. */
static int gone(const pid_t *pids, int n, int ms)
{
	for (int t = 0; t <= ms / 25; t++) {
		int alive = 0;

		for (int i = 0; i < n; i++)
			alive += running(pids[i]);
		if (!alive)
			return 1;
		usleep(25000);
	}
	return 0;
}

/* End (by PID) the processes: SIGTERM, up to 2 s, then SIGKILL, and up to
 * 10 s for those to be gone (80 switchd on xdp closing 544 AF_XDP sockets
 * and XDP links at once on a busy machine take seconds). */
static void kill_pids(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	if (gone(pids, n, 2000))
		return;
	for (int i = 0; i < n; i++)
		if (running(pids[i]))
			kill(pids[i], SIGKILL);
	gone(pids, n, 10000);
}

/* The owner PID recorded in a run directory is alive. */
static int owner_alive(const char *prefix)
{
	char path[128];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/%s/owner", INART_EMU_RUN_DIR, prefix);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 1 && pid != getpid() && kill(pid, 0) == 0;
}

/* The prefix of a namespace name "inart-emu-P-...", into p. */
static int ns_prefix(const char *name, char p[INART_EMU_PREFIX_MAX + 1])
{
	const char *s = name + strlen(INART_EMU_NS_PREFIX), *dash = strchr(s, '-');

	if (dash == NULL || dash - s > INART_EMU_PREFIX_MAX || dash == s)
		return -1;
	memcpy(p, s, (size_t)(dash - s));
	p[dash - s] = '\0';
	return inart_emu_prefix_ok(p) ? 0 : -1;
}

int inart_emu_down_prefix(const char *prefix, int force, int *skipped, struct inart_err *err)
{
	char **names = NULL, p[INART_EMU_PREFIX_MAX + 1], dir[400];
	struct inart_sbuf b = {0};
	int n, removed = 0, rc = 0, np = 0;
	pid_t *pids = calloc(MAX_PIDS, sizeof(*pids));
	char *s;
	DIR *d;
	struct dirent *e;

	if (skipped != NULL)
		*skipped = 0;
	if (prefix != NULL && !inart_emu_prefix_ok(prefix))
		return inart_err_set(err, -EINVAL,
				     "prefix '%s': 1 to %d lower-case letters or digits", prefix,
				     INART_EMU_PREFIX_MAX);
	n = inart_emu_leftovers(prefix, &names);
	for (int i = 0; names != NULL && i < n; i++) {
		if (ns_prefix(names[i], p) < 0)
			continue;
		if (prefix == NULL && !force && owner_alive(p)) {
			if (skipped != NULL)
				(*skipped)++;
			continue;
		}
		if (pids != NULL)
			ns_pids(names[i], pids, &np);
		inart_sbuf_printf(&b, "netns del %s\n", names[i]);
		removed++;
	}
	inart_emu_names_free(names, n);
	kill_pids(pids, np);
	free(pids);
	s = inart_sbuf_finish(&b);
	if (s != NULL && s[0] != '\0')
		rc = ip_batch(s, err);
	free(s);
	/* run directories (also those whose namespaces are gone) */
	d = opendir(INART_EMU_RUN_DIR);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (!inart_emu_prefix_ok(e->d_name) || (prefix && strcmp(e->d_name, prefix) != 0))
			continue;
		if (prefix == NULL && !force && owner_alive(e->d_name))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", INART_EMU_RUN_DIR, e->d_name);
		rm_dir(dir);
	}
	if (d != NULL)
		closedir(d);
	return rc < 0 ? rc : removed;
}
