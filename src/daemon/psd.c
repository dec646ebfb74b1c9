/*
 * psd: the parameter server daemon (`inart ps`, psd.h).  The sans-I/O PS core
 * (dp/ps) runs over one UDP socket bound to IP:47470, in the packet thread:
 * poll() on the socket and the control mailbox; datagrams are received and
 * sent in batches (recvmmsg/sendmmsg) from preallocated buffers.  When the
 * socket pushes back, input is not read until the pending results are out
 * (the kernel's receive buffer holds it meanwhile).
 *
 * Control requests are served by a control thread (ctlproto/ctlthread): a `trees`
 * request builds a new core with every tree the PS will hold (all checked
 * and all chunk records allocated there, off the packet path); the packet
 * thread puts it in service with one command, which moves the chunk state
 * of the trees that stay (inart_ps_carry) and restarts those asked to
 * (reset).  Installs are transactions (ctlproto/txn).  Also tree_del, show,
 * stats, reset_stats, log_level, info.
 *
 * Transport: a UDP socket (io/udp), or, with a port in the configuration,
 * the same datagrams as Ethernet frames on it (io/ethudp: the PS as a host
 * on a switchd's --io udp port, for tests without privilege), or (--io
 * xdp) the same frames on an AF_XDP socket of the interface holding the
 * PS's address (io/xsk's host set under io/ethudp; its XDP program passes
 * all but the PS's InArt datagrams to the kernel: ARP, ICMP, control TCP
 * work as before; the next hop of what the PS sends is the source MAC of
 * the last datagram received, as io/ethudp does: a PS behind one switch
 * port or router).  All behind the io_* functions below; the packet loop is
 * the same.  --io auto: xdp unless it cannot be had or the interface's
 * root qdisc shapes (AF_XDP bypasses it), else udp, said in one log line.
 *
 * Threads: the packet thread owns the core in service and the counters'
 * baseline; the control thread owns the configurations, the transaction
 * state and every core not in service.
 */
#include "daemon/psd.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/slab.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlthread.h"
#include "daemon/nodecfg.h"
#include "ctlproto/txn.h"
#include "dp/addr.h"
#include "dp/ps.h"
#include "dp/wire.h"
#include "io/ethudp.h"
#include "io/log.h"
#include "io/udp.h"
#include "io/xsk.h"

#define OUT_CAP 2048
#define OUT_ROOM (INART_PS_MAX_CHILDREN + 1) /* most datagrams one rx can emit */

/* A PS state: a core and the configurations of its trees (deep copies:
 * each tree's sources in srcs), the arrays in one block with it (room for
 * cap trees and cap_srcs sources, obj_lay_out). */
struct ps_obj {
	struct inart_ps *core;
	struct inart_ps_tree_cfg *trees;
	int n_trees, cap;
	struct inart_ps_source *srcs;
	size_t cap_srcs;
	/* the trees to restart when it goes in service (a copy of the request's) */
	int reset;
};

struct ps_state {
	const char *name;
	uint32_t ip;
	const char *io;		     /* "udp", "xdp" or "frames" */
	struct inart_xsk *xsk;	     /* with xdp: its counters (read by the control thread) */
	struct inart_ps *ps;	     /* in service (changed by commands only) */
	struct inart_ctlthread *ctl; /* the control thread */
	/* control thread */
	struct ps_obj *cur; /* the configurations in service (its core is ps) */
	struct inart_txn txn;
	/* packet thread */
	struct inart_ps_stats base;
	uint64_t start_ns, send_blocked, base_send_blocked;
};

static void obj_free(struct ps_obj *o)
{
	if (o == NULL)
		return;
	inart_ps_destroy(o->core);
	free(o); /* and its arrays */
}

static void obj_lay_out(void *obj, struct inart_slab *s)
{
	struct ps_obj *o = obj;

	o->trees = inart_slab_take(s, (size_t)o->cap, sizeof(*o->trees));
	o->srcs = inart_slab_take(s, o->cap_srcs, sizeof(*o->srcs));
}

static int find_tree(const struct inart_ps_tree_cfg *t, int n, uint32_t job, uint16_t tree)
{
	for (int i = 0; i < n; i++)
		if (t[i].job == job && t[i].tree == tree)
			return i;
	return -1;
}

/* A new state: the trees of `from` (unless replace; without the tree `del`
 * if del_job >= 0) then those of rq (replacing the same (job, tree)), each
 * set in a new core.  NULL with err. */
static struct ps_obj *obj_build(const struct ps_obj *from, const struct inart_ctl_req *rq,
				int replace, int64_t del_job, uint16_t del_tree,
				struct inart_err *err)
{
	struct ps_obj *o, proto = {0};
	size_t k = 0;
	int rc;

	/* room for every tree of from and rq (some may be left out) */
	for (int i = 0; !replace && from != NULL && i < from->n_trees; i++)
		proto.cap_srcs += from->trees[i].n_sources;
	for (int i = 0; rq != NULL && i < rq->n_trees; i++)
		proto.cap_srcs += rq->trees[i].n_sources;
	proto.cap = (replace || from == NULL ? 0 : from->n_trees) + (rq ? rq->n_trees : 0);
	o = inart_slab_new(&proto, sizeof(proto), obj_lay_out);
	if (o == NULL)
		goto oom;
	for (int i = 0; !replace && from != NULL && i < from->n_trees; i++) {
		const struct inart_ps_tree_cfg *c = &from->trees[i];

		if ((del_job >= 0 && c->job == (uint32_t)del_job && c->tree == del_tree) ||
		    (rq != NULL && find_tree(rq->trees, rq->n_trees, c->job, c->tree) >= 0))
			continue;
		o->trees[o->n_trees++] = *c;
	}
	for (int i = 0; rq != NULL && i < rq->n_trees; i++)
		o->trees[o->n_trees++] = rq->trees[i];
	o->core = inart_ps_create();
	if (o->core == NULL)
		goto oom;
	for (int i = 0; i < o->n_trees; i++) {
		struct inart_ps_tree_cfg *c = &o->trees[i];

		memcpy(o->srcs + k, c->sources, c->n_sources * sizeof(*o->srcs));
		c->sources = c->n_sources ? o->srcs + k : NULL;
		k += c->n_sources;
		rc = inart_ps_tree_set(o->core, c);
		if (rc < 0) {
			inart_err_set(err, 0, "trees: job %u tree %u refused: %s", c->job, c->tree,
				      strerror(-rc));
			obj_free(o);
			return NULL;
		}
	}
	return o;
oom:
	inart_err_set(err, 0, "out of memory");
	obj_free(o);
	return NULL;
}

/* ---- commands (run in the packet thread) ---- */

struct swap_cmd {
	struct ps_state *s;
	struct ps_obj *in;
	struct inart_ps *out;
};

/* Put in->core in service, with the chunk state of the trees that stay;
 * restart the trees in->reset names (all of them: reset). */
static void cmd_swap(void *arg)
{
	struct swap_cmd *c = arg;

	inart_ps_carry(c->in->core, c->s->ps, 0);
	if (c->in->reset)
		inart_ps_lose_state(c->in->core);
	c->out = c->s->ps;
	c->s->ps = c->in->core;
}

struct stats_cmd {
	struct ps_state *s;
	struct inart_ps_stats st;
	uint64_t send_blocked;
	int64_t *steps; /* per tree of s->cur: its newest step, -1: none (room: the caller's) */
};

static void cmd_stats(void *arg)
{
	struct stats_cmd *c = arg;

	inart_ps_stats(c->s->ps, &c->st);
	for (int i = 0; c->steps != NULL && i < c->s->cur->n_trees; i++) {
		uint32_t st;

		c->steps[i] = inart_ps_tree_step(c->s->ps, c->s->cur->trees[i].job,
						 c->s->cur->trees[i].tree, &st) == 0
				  ? (int64_t)st
				  : -1;
	}
	inart_ctl_counters_sub(&c->st, &c->s->base, inart_ctl_ps_counters, inart_ctl_n_ps_counters);
	c->send_blocked = c->s->send_blocked - c->s->base_send_blocked;
}

static void cmd_reset_stats(void *arg)
{
	struct ps_state *s = arg;

	inart_ps_stats(s->ps, &s->base);
	s->base_send_blocked = s->send_blocked;
}

/* ---- the control thread ---- */

static void *obj_swap(void *ctx, void *obj)
{
	struct ps_state *s = ctx;
	struct ps_obj *in = obj, *old = s->cur;
	struct swap_cmd c = {s, in, NULL};

	inart_ctlthread_call(s->ctl, cmd_swap, &c);
	in->reset = 0;
	old->core = c.out;
	s->cur = in;
	return old;
}

static void obj_destroy(void *ctx, void *obj)
{
	(void)ctx;
	obj_free(obj);
}

static json_t *stats_json(struct ps_state *s)
{
	struct stats_cmd c = {.s = s};
	json_t *o, *steps = json_array();
	uint64_t xc[INART_XDP_N_CTRS];

	c.steps = calloc((size_t)s->cur->n_trees + 1, sizeof(*c.steps));
	inart_ctlthread_call(s->ctl, cmd_stats, &c);
	for (int i = 0; c.steps != NULL && i < s->cur->n_trees; i++)
		if (c.steps[i] >= 0)
			json_array_append_new(steps, json_pack("{s:I, s:i, s:I}", "job",
							       (json_int_t)s->cur->trees[i].job,
							       "tree", (int)s->cur->trees[i].tree,
							       "step", (json_int_t)c.steps[i]));
	free(c.steps);
	o = json_object();
	json_object_set_new(o, "role", json_string("ps"));
	json_object_set_new(o, "name", json_string(s->name ? s->name : ""));
	json_object_set_new(o, "uptime_s", json_real((double)(inart_now_ns() - s->start_ns) / 1e9));
	json_object_set_new(o, "trees", json_integer(s->cur->n_trees));
	json_object_set_new(o, "ps", inart_ctl_ps_stats_json(&c.st));
	json_object_set_new(o, "send_blocked", json_integer((json_int_t)c.send_blocked));
	json_object_set_new(o, "steps", steps);
	if (s->xsk != NULL && inart_xsk_counters(s->xsk, xc) == 0)
		json_object_set_new(
		    o, "xdp",
		    json_pack("{s:s, s:I, s:I, s:I}", "mode", inart_xsk_describe(s->xsk), "ina",
			      (json_int_t)xc[INART_XDP_INA], "pass", (json_int_t)xc[INART_XDP_PASS],
			      "missed", (json_int_t)xc[INART_XDP_ABORT]));
	return o;
}

/* trees / tree_del: build the new state, then prepare it or put it in
 * service now. */
static int do_trees(struct ps_state *s, struct inart_ctl_req *rq, json_t **data,
		    struct inart_err *err)
{
	int del = rq->op == INART_CTL_TREE_DEL;
	int unchanged = rq->prepare && !rq->reset && inart_txn_unchanged(&s->txn, rq->install_id);
	struct ps_obj *o = NULL;

	if (del && find_tree(s->cur->trees, s->cur->n_trees, rq->job, rq->tree) < 0) {
		inart_err_set(err, 0, "no tree (job %u, tree %u)", rq->job, rq->tree);
		return -ENOENT;
	}
	if (!unchanged) {
		o = obj_build(s->cur, del ? NULL : rq, !del && rq->replace,
			      del ? (int64_t)rq->job : -1, rq->tree, err);
		if (o == NULL)
			return -EINVAL;
		o->reset = !del && rq->reset;
	}
	*data = json_object();
	if (rq->prepare) {
		/* built from the trees in service unless they are all replaced */
		inart_txn_prepare(&s->txn, rq->install_id, o, o != NULL && !rq->replace);
		json_object_set_new(*data, "prepared", json_string(rq->install_id));
		json_object_set_new(*data, "unchanged", json_boolean(unchanged));
		return 0;
	}
	inart_txn_install(&s->txn, del ? s->txn.id : rq->install_id, o);
	json_object_set_new(*data, "installed", json_string(s->txn.id));
	return 0;
}

/* One control request for this PS (inart_daemon_serve does the rest). */
static int ps_op(void *ctx, struct inart_ctl_req *rq, json_t **data, struct inart_err *err)
{
	struct ps_state *s = ctx;
	char ip[16];
	int rc = 0;

	if (inart_txn_is_op(rq->op))
		return inart_txn_request(&s->txn, rq->op, rq->install_id, data, NULL, err);
	switch (rq->op) {
	case INART_CTL_INFO:
		*data = json_object();
		inart_addr_fmt_ip(s->ip, ip);
		json_object_set_new(*data, "role", json_string("ps"));
		json_object_set_new(*data, "name", json_string(s->name ? s->name : ""));
		json_object_set_new(*data, "bind", json_string(ip));
		json_object_set_new(*data, "io", json_string(s->io));
		json_object_set_new(*data, "trees", json_integer(s->cur->n_trees));
		json_object_set_new(
		    *data, "ctl_auth_failures",
		    json_integer((json_int_t)inart_ctlthread_auth_failures(s->ctl)));
		json_object_set_new(*data, "tree_bytes",
				    json_integer((json_int_t)inart_ps_bytes(s->cur->core)));
		inart_txn_json(&s->txn, *data);
		break;
	case INART_CTL_TREES:
	case INART_CTL_TREE_DEL:
		rc = do_trees(s, rq, data, err);
		if (rc == 0)
			inart_log_info("%s %d trees%s%s (%d in service)",
				       rq->prepare ? "prepared" : "configured", rq->n_trees,
				       rq->replace ? " (replace)" : "", rq->reset ? " (reset)" : "",
				       s->cur->n_trees);
		break;
	case INART_CTL_SHOW:
		*data = json_object();
		json_object_set_new(*data, "trees",
				    inart_ctl_ps_trees_json(s->cur->trees, s->cur->n_trees));
		break;
	case INART_CTL_STATS:
		*data = stats_json(s);
		break;
	case INART_CTL_RESET_STATS:
		inart_ctlthread_call(s->ctl, cmd_reset_stats, s);
		break;
	default:
		rc = -EOPNOTSUPP; /* the other daemon's (inart_daemon_serve says so) */
		break;
	}
	return rc;
}

/* The PS's datagrams: a UDP socket or frames on a port (one of the two;
 * frames on AF_XDP: e over xsk). */
struct ps_io {
	struct inart_udp *u;
	struct inart_ethudp *e;
	struct inart_xsk *xsk;
};

static int io_fd(const struct ps_io *io)
{
	return io->e != NULL ? inart_ethudp_fd(io->e) : inart_udp_fd(io->u);
}

static int io_recv(struct ps_io *io, struct inart_dgram *in, int max)
{
	return io->e != NULL ? inart_ethudp_recv(io->e, in, max) : inart_udp_recv(io->u, in, max);
}

/* How many of d[0..n) were taken; frames the device pushed back are sent
 * again by the next call (n 0 included). */
static int io_send(struct ps_io *io, const struct inart_dgram *d, int n)
{
	return io->e != NULL ? inart_ethudp_send(io->e, d, n) : inart_udp_send(io->u, d, n);
}

/* Output taken but not sent yet (frames only). */
static int io_pending(const struct ps_io *io)
{
	return io->e != NULL ? inart_ethudp_pending(io->e) : 0;
}

/* Datagrams emitted by the core and not sent yet: d[head..used). */
struct outq {
	struct inart_dgram d[OUT_CAP];
	int head, used;
};

static void outq_flush(struct ps_state *s, struct ps_io *u, struct outq *q)
{
	if (q->head < q->used || io_pending(u) > 0)
		q->head += io_send(u, q->d + q->head, q->used - q->head);
	if (q->head == q->used) {
		q->head = q->used = 0;
		return;
	}
	s->send_blocked++;
	for (int j = q->head; j < q->used; j++) { /* compact, swapping buffers */
		uint8_t *tmp = q->d[j - q->head].data;

		q->d[j - q->head] = q->d[j];
		q->d[j].data = tmp;
	}
	q->used -= q->head;
	q->head = 0;
}

/* Wait until one more datagram's worth of output fits. */
static void outq_room(struct ps_state *s, struct ps_io *u, struct outq *q)
{
	while (OUT_CAP - q->used < OUT_ROOM && !inart_daemon_stop) {
		struct pollfd w = {io_fd(u), POLLOUT, 0};

		outq_flush(s, u, q);
		if (OUT_CAP - q->used < OUT_ROOM)
			poll(&w, 1, 10);
	}
}

/* The output queue with its buffers, in one block. */
struct outq_block {
	struct outq q;
	uint8_t bufs[OUT_CAP][INART_DGRAM_MAX];
};

static int run(struct ps_state *s, struct ps_io *u, int batch)
{
	struct outq_block *ob = calloc(1, sizeof(*ob));
	struct inart_dgram in[1024];
	int rc = 0;
	struct pollfd pfd[2];

	if (ob == NULL)
		return -ENOMEM;
#define q (ob->q)
	for (int i = 0; i < OUT_CAP; i++)
		q.d[i].data = ob->bufs[i];
	pfd[0].fd = io_fd(u);
	pfd[1].fd = inart_ctlthread_fd(s->ctl);
	pfd[1].events = POLLIN;
	while (!inart_daemon_stop) {
		int r;

		int out = q.used > 0 || io_pending(u) > 0;

		pfd[0].events = POLLIN | (out ? POLLOUT : 0);
		r = poll(pfd, 2, out ? 1 : 1000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			inart_log_error("poll: %s", strerror(errno));
			break;
		}
		outq_flush(s, u, &q);
		for (int round = 0; round < 8 && !inart_daemon_stop; round++) {
			int n = io_recv(u, in, batch);
			uint64_t now;

			if (n <= 0) {
				if (n < 0)
					inart_log_error("receive: %s", strerror(-n));
				break;
			}
			now = inart_now_ns();
			for (int i = 0; i < n; i++) {
				outq_room(s, u, &q);
				q.used += inart_ps_rx(s->ps, in[i].data, in[i].len, in[i].peer_ip,
						      in[i].peer_port, now, q.d + q.used,
						      OUT_CAP - q.used);
			}
			outq_flush(s, u, &q);
		}
		/* a command of the control thread: between two batches */
		if (pfd[1].revents & POLLIN)
			inart_ctlthread_run(s->ctl);
	}
#undef q
	free(ob);
	return rc;
}

int inart_psd_cfg_check(const struct inart_psd_cfg *c, struct inart_err *err)
{
	int rc = inart_daemon_cfg_check(&c->dm, err);

	if (rc == 0 && c->dm.deployment != NULL) /* --deployment: its entry agrees */
		rc = inart_nodecfg_check_ps(&c->dm, c->bind_ip, err);
	if (rc == 0 && c->port != NULL && c->io != INART_PSD_IO_UDP)
		return inart_err_set(err, -EINVAL, "--io %s: not with frames on a port (--port)",
				     inart_psd_io_name(c->io));
	if (rc == 0 && c->io == INART_PSD_IO_XDP && c->bind_ip == 0)
		return inart_err_set(err, -EINVAL, "--io xdp: needs the PS's address (--bind IP)");
	if (rc < 0 || c->port == NULL)
		return rc;
	if (c->bind_ip == 0)
		return inart_err_set(err, -EINVAL, "--bind IP is required with frames (--port)");
	return inart_afp_check_name(c->port, c->port_mode, err);
}

const char *inart_psd_io_name(enum inart_psd_io io)
{
	return io == INART_PSD_IO_XDP ? "xdp" : io == INART_PSD_IO_AUTO ? "auto" : "udp";
}

int inart_psd_io_parse(const char *s, enum inart_psd_io *io)
{
	for (int k = INART_PSD_IO_UDP; k <= INART_PSD_IO_AUTO; k++)
		if (strcmp(s, inart_psd_io_name((enum inart_psd_io)k)) == 0) {
			*io = (enum inart_psd_io)k;
			return 0;
		}
	return -EINVAL;
}

/* io/xsk's port 0 as io/ethudp's device */
static int xsk_recv0(void *x, uint8_t **data, uint16_t *len, int max)
{
	return inart_xsk_recv(x, 0, data, len, max);
}

static int xsk_queue0(void *x, const uint8_t *frame, size_t len)
{
	return inart_xsk_queue(x, 0, frame, len);
}

static int xsk_pending0(const void *x)
{
	return inart_xsk_pending(x, 0);
}

static int xsk_flush0(void *x)
{
	return inart_xsk_flush(x, 0);
}

/* AF_XDP on the interface holding the PS's address (auto: refused where
 * its qdisc shapes).  0 or -errno with err saying why not. */
static int open_xdp(struct ps_io *io, const struct inart_psd_cfg *c, struct inart_ethudp_cfg *ec,
		    struct inart_err *err)
{
	struct inart_xsk_opt xo = {c->dm.batch, 4096, OUT_CAP, 1};
	struct inart_ethudp_dev d = {
	    .recv = xsk_recv0, .queue = xsk_queue0, .pending = xsk_pending0, .flush = xsk_flush0};
	char ifname[IF_NAMESIZE] = "", ip[16], kind[32];
	int rc;

	inart_addr_fmt_ip(c->bind_ip, ip);
	if (!inart_xsk_built())
		return inart_err_set(err, -EOPNOTSUPP,
				     "this inart was built without libxdp/libbpf (scripts/deps.sh "
				     "installs them; then meson setup --reconfigure)");
	rc = inart_xsk_ifname_of(c->bind_ip, ifname, sizeof(ifname));
	if (rc == -EOPNOTSUPP)
		return inart_err_set(err, rc,
				     "%s is on the loopback interface %s (AF_XDP needs a "
				     "network device)",
				     ip, ifname);
	if (rc < 0)
		return inart_err_set(err, rc, "%s is not an address of this host's interfaces (%s)",
				     ip, strerror(-rc));
	if (c->io == INART_PSD_IO_AUTO && inart_xsk_shaped(ifname, kind, sizeof(kind)) == 1)
		return inart_err_set(err, -EOPNOTSUPP, "%s has a %s qdisc, which AF_XDP bypasses",
				     ifname, kind);
	io->xsk = inart_xsk_open_host(ifname, c->bind_ip, INART_WIRE_UDP_PORT, &xo, err);
	if (io->xsk == NULL)
		return -errno;
	d.ctx = io->xsk;
	d.fd = inart_xsk_fd(io->xsk, 0);
	inart_xsk_mac(io->xsk, 0, d.mac);
	ec->port = ifname;
	ec->afo.batch = c->dm.batch;
	ec->afo.tx_queue = OUT_CAP;
	io->e = inart_ethudp_open_dev(&d, ec, err);
	ec->port = NULL;
	if (io->e == NULL)
		return -errno;
	inart_log_info("--io %s: xdp (%s on %s)", inart_psd_io_name(c->io),
		       inart_xsk_describe(io->xsk), ifname);
	return 0;
}

/* The PS's socket, or its port (frames). */
static int io_open(struct ps_io *io, const struct inart_psd_cfg *c, struct inart_err *err)
{
	struct inart_ethudp_cfg ec = {
	    .port = c->port, .ip = c->bind_ip, .udp_port = INART_WIRE_UDP_PORT};
	struct inart_err xe = {{0}};
	int rc;

	if (c->port == NULL && c->io != INART_PSD_IO_UDP) {
		rc = open_xdp(io, c, &ec, c->io == INART_PSD_IO_XDP ? err : &xe);
		if (rc == 0 || c->io == INART_PSD_IO_XDP) {
			if (rc < 0 && strncmp(err->msg, "--io", 4) != 0) {
				char m[sizeof(err->msg)];

				snprintf(m, sizeof(m), "%s", err->msg);
				inart_err_set(err, rc, "--io xdp: %s", m);
			}
			return rc;
		}
		inart_ethudp_close(io->e);
		inart_xsk_close(io->xsk);
		io->e = NULL;
		io->xsk = NULL;
		inart_log_info("--io auto: udp (xdp not used: %s)", xe.msg);
	}
	if (c->port == NULL) {
		io->u = inart_udp_open(c->bind_ip, INART_WIRE_UDP_PORT, c->dm.batch, err);
		return io->u != NULL ? 0 : -errno;
	}
	inart_afp_opt_default(&ec.afo);
	ec.afo.mode = c->port_mode;
	ec.afo.batch = c->dm.batch;
	ec.afo.tx_queue = OUT_CAP;
	ec.afo.tx_frames = OUT_CAP;
	io->e = inart_ethudp_open(&ec, err);
	return io->e != NULL ? 0 : -errno;
}

int inart_psd_run(const struct inart_psd_cfg *c, struct inart_err *err)
{
	struct ps_state st = {0};
	struct inart_daemon_role role = {.role = "PS", .other = "switch", .op = ps_op, .ctx = &st};
	struct ps_io io = {NULL, NULL, NULL};
	char ip[16];
	int rc = inart_psd_cfg_check(c, err);

	if (rc < 0)
		return rc;
	inart_log_init("inart-ps", c->dm.level);
	st.name = c->dm.name;
	st.ip = c->bind_ip;
	st.cur = calloc(1, sizeof(*st.cur));
	if (st.cur == NULL || (st.cur->core = inart_ps_create()) == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	st.ps = st.cur->core;
	st.txn.ctx = &st;
	st.txn.swap = obj_swap;
	st.txn.destroy = obj_destroy;
	rc = io_open(&io, c, err);
	if (rc < 0)
		goto out;
	st.io = io.xsk != NULL ? "xdp" : io.e != NULL ? "frames" : "udp";
	st.xsk = io.xsk;
	st.start_ns = inart_now_ns();
	st.ctl = inart_daemon_open(&c->dm, &role, err);
	if (st.ctl == NULL) {
		rc = -errno;
		goto out;
	}
	rc = inart_daemon_drop(&c->dm, err);
	if (rc < 0 || (rc = inart_ctlthread_serve(st.ctl, err)) < 0)
		goto out;
	inart_addr_fmt_ip(st.ip, ip);
	inart_log_info("PS %s up on %s:%d%s%s, control socket %s", st.name ? st.name : "", ip,
		       INART_WIRE_UDP_PORT, c->port ? ", frames on " : "", c->port ? c->port : "",
		       c->dm.ctl);
	rc = run(&st, &io, c->dm.batch);
	if (rc < 0)
		inart_err_set(err, rc, "poll: %s", strerror(-rc));
	inart_log_info("stopping");
out:
	inart_ctlthread_stop(st.ctl);
	inart_txn_free(&st.txn);
	inart_udp_close(io.u);
	inart_ethudp_close(io.e);
	inart_xsk_close(io.xsk); /* detaches the program */
	obj_free(st.cur);
	return rc < 0 ? rc : 0;
}
