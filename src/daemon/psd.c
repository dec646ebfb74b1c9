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
 * Shards (--cores N, UDP only): N cores, one per pinned packet thread,
 * each with its own socket of one SO_REUSEPORT group the kernel steers by
 * dp/shard (io/udp's inart_udp_open_shards: the datagrams of a chunk's slot
 * always reach the same thread), its own output queue and counters; every
 * core holds every tree.  Worker 0 is the daemon's thread and runs the
 * control commands, each while workers 1..N-1 are parked (woken through an
 * eventfd, waiting on a condition variable at a batch boundary), so an
 * install swaps every shard's core together and stats sum the shards.
 *
 * Threads: the packet threads own the cores in service (worker k: core k)
 * and the counters' baselines; the control thread owns the configurations,
 * the transaction state and every core not in service.
 */
#include "daemon/psd.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/slab.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlthread.h"
#include "daemon/nodecfg.h"
#include "ctlproto/txn.h"
#include "dp/addr.h"
#include "dp/ps.h"
#include "dp/shard.h"
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
	struct inart_ps *core[INART_SHARD_MAX]; /* one per shard, the same trees */
	int n_cores;
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
	const char *io;	       /* "udp", "xdp" or "frames" */
	struct inart_xsk *xsk; /* with xdp: its counters (read by the control thread) */
	int n;		       /* shards (--cores) */
	struct inart_ps *ps[INART_SHARD_MAX]; /* in service (changed by commands only) */
	struct inart_ctlthread *ctl;	      /* the control thread */
	/* control thread */
	struct ps_obj *cur; /* the configurations in service (its cores are ps) */
	struct inart_txn txn;
	/* packet threads: shard k's */
	struct inart_ps_stats base[INART_SHARD_MAX];
	uint64_t start_ns, send_blocked[INART_SHARD_MAX], base_send_blocked[INART_SHARD_MAX];
	/* workers 1..n-1 (worker 0 is the daemon's thread) */
	struct ps_worker *w[INART_SHARD_MAX];
	atomic_int park, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int parked, alive;
};

static void obj_free(struct ps_obj *o)
{
	if (o == NULL)
		return;
	for (int k = 0; k < o->n_cores; k++)
		inart_ps_destroy(o->core[k]);
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
				int replace, int64_t del_job, uint16_t del_tree, int n,
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
	for (; o->n_cores < n; o->n_cores++)
		if ((o->core[o->n_cores] = inart_ps_create()) == NULL)
			goto oom;
	for (int i = 0; i < o->n_trees; i++) {
		struct inart_ps_tree_cfg *c = &o->trees[i];

		memcpy(o->srcs + k, c->sources, c->n_sources * sizeof(*o->srcs));
		c->sources = c->n_sources ? o->srcs + k : NULL;
		k += c->n_sources;
		for (int j = 0; j < n; j++) {
			rc = inart_ps_tree_set(o->core[j], c);
			if (rc < 0) {
				inart_err_set(err, 0, "trees: job %u tree %u refused: %s", c->job,
					      c->tree, strerror(-rc));
				obj_free(o);
				return NULL;
			}
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
	struct inart_ps *out[INART_SHARD_MAX];
};

/* Put in's cores in service (every shard's, the workers parked), with the
 * chunk state of the trees that stay; restart the trees in->reset names
 * (all of them: reset). */
static void cmd_swap(void *arg)
{
	struct swap_cmd *c = arg;

	for (int k = 0; k < c->s->n; k++) {
		inart_ps_carry(c->in->core[k], c->s->ps[k], 0);
		if (c->in->reset)
			inart_ps_lose_state(c->in->core[k]);
		c->out[k] = c->s->ps[k];
		c->s->ps[k] = c->in->core[k];
	}
}

struct stats_cmd {
	struct ps_state *s;
	struct inart_ps_stats st;
	uint64_t send_blocked, shard_rx[INART_SHARD_MAX];
	int64_t *steps; /* per tree of s->cur: its newest step, -1: none (room: the caller's) */
};

/* a->counter += b->counter for every PS counter */
static void stats_add(struct inart_ps_stats *a, const struct inart_ps_stats *b)
{
	for (int i = 0; i < inart_ctl_n_ps_counters; i++) {
		uint64_t x, y;

		memcpy(&x, (char *)a + inart_ctl_ps_counters[i].off, sizeof(x));
		memcpy(&y, (const char *)b + inart_ctl_ps_counters[i].off, sizeof(y));
		x += y;
		memcpy((char *)a + inart_ctl_ps_counters[i].off, &x, sizeof(x));
	}
}

/* The counters since the last reset, summed over the shards; each tree's
 * newest step (the highest of the shards). */
static void cmd_stats(void *arg)
{
	struct stats_cmd *c = arg;
	struct ps_state *s = c->s;

	for (int i = 0; c->steps != NULL && i < s->cur->n_trees; i++)
		c->steps[i] = -1;
	for (int k = 0; k < s->n; k++) {
		struct inart_ps_stats st;

		inart_ps_stats(s->ps[k], &st);
		inart_ctl_counters_sub(&st, &s->base[k], inart_ctl_ps_counters,
				       inart_ctl_n_ps_counters);
		stats_add(&c->st, &st);
		c->shard_rx[k] = st.rx;
		c->send_blocked += s->send_blocked[k] - s->base_send_blocked[k];
		for (int i = 0; c->steps != NULL && i < s->cur->n_trees; i++) {
			uint32_t step;

			if (inart_ps_tree_step(s->ps[k], s->cur->trees[i].job,
					       s->cur->trees[i].tree, &step) == 0 &&
			    (int64_t)step > c->steps[i])
				c->steps[i] = step;
		}
	}
}

static void cmd_reset_stats(void *arg)
{
	struct ps_state *s = arg;

	for (int k = 0; k < s->n; k++) {
		inart_ps_stats(s->ps[k], &s->base[k]);
		s->base_send_blocked[k] = s->send_blocked[k];
	}
}

/* ---- the control thread ---- */

static void *obj_swap(void *ctx, void *obj)
{
	struct ps_state *s = ctx;
	struct ps_obj *in = obj, *old = s->cur;
	struct swap_cmd c = {s, in, {NULL}};

	inart_ctlthread_call(s->ctl, cmd_swap, &c);
	in->reset = 0;
	for (int k = 0; k < s->n; k++)
		old->core[k] = c.out[k];
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
	if (s->n > 1) {
		json_t *a = json_array();

		for (int k = 0; k < s->n; k++)
			json_array_append_new(a, json_integer((json_int_t)c.shard_rx[k]));
		json_object_set_new(o, "shard_rx", a);
	}
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
			      del ? (int64_t)rq->job : -1, rq->tree, s->n, err);
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

static size_t tree_bytes(const struct ps_obj *o)
{
	size_t b = 0;

	for (int k = 0; k < o->n_cores; k++)
		b += inart_ps_bytes(o->core[k]);
	return b;
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
		json_object_set_new(*data, "cores", json_integer(s->n));
		json_object_set_new(*data, "tree_bytes",
				    json_integer((json_int_t)tree_bytes(s->cur)));
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

static void outq_flush(uint64_t *blocked, struct ps_io *u, struct outq *q)
{
	if (q->head < q->used || io_pending(u) > 0)
		q->head += io_send(u, q->d + q->head, q->used - q->head);
	if (q->head == q->used) {
		q->head = q->used = 0;
		return;
	}
	(*blocked)++;
	for (int j = q->head; j < q->used; j++) { /* compact, swapping buffers */
		uint8_t *tmp = q->d[j - q->head].data;

		q->d[j - q->head] = q->d[j];
		q->d[j].data = tmp;
	}
	q->used -= q->head;
	q->head = 0;
}

/* Wait until one more datagram's worth of output fits. */
static void outq_room(uint64_t *blocked, struct ps_io *u, struct outq *q)
{
	while (OUT_CAP - q->used < OUT_ROOM && !inart_daemon_stop) {
		struct pollfd w = {io_fd(u), POLLOUT, 0};

		outq_flush(blocked, u, q);
		if (OUT_CAP - q->used < OUT_ROOM)
			poll(&w, 1, 10);
	}
}

/* The output queue with its buffers, in one block. */
struct outq_block {
	struct outq q;
	uint8_t bufs[OUT_CAP][INART_DGRAM_MAX];
};

/* A worker of --cores N (k >= 1): its socket, its eventfd (park, stop). */
struct ps_worker {
	struct ps_state *s;
	int k, cpu, batch, wake, started;
	pthread_t th;
	struct ps_io io;
};

/* Workers 1..n-1 stop at a batch boundary until unpark (called by worker
 * 0, the daemon's thread, around every control command). */
static void park_others(struct ps_state *s)
{
	uint64_t one = 1;

	if (s->n < 2)
		return;
	atomic_store(&s->park, 1);
	for (int k = 1; k < s->n; k++)
		if (s->w[k] != NULL)
			(void)!write(s->w[k]->wake, &one, sizeof(one));
	pthread_mutex_lock(&s->mu);
	while (s->parked < s->alive)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

static void unpark(struct ps_state *s)
{
	if (s->n < 2)
		return;
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->park, 0);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void park_here(struct ps_state *s)
{
	pthread_mutex_lock(&s->mu);
	s->parked++;
	pthread_cond_broadcast(&s->cv);
	while (atomic_load(&s->park) && !atomic_load(&s->stop))
		pthread_cond_wait(&s->cv, &s->mu);
	s->parked--;
	pthread_mutex_unlock(&s->mu);
}

/* Received datagrams through shard k's core, its output sent. */
static void rx_rounds(struct ps_state *s, int k, struct ps_io *u, struct outq *q,
		      struct inart_dgram *in, int batch)
{
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
			outq_room(&s->send_blocked[k], u, q);
			q->used +=
			    inart_ps_rx(s->ps[k], in[i].data, in[i].len, in[i].peer_ip,
					in[i].peer_port, now, q->d + q->used, OUT_CAP - q->used);
		}
		outq_flush(&s->send_blocked[k], u, q);
	}
}

/* Shard k's packet loop on u until a stop: worker 0 also serves the
 * control thread's commands (the others parked), worker k >= 1 parks when
 * asked (its eventfd wake). */
static int run(struct ps_state *s, int k, struct ps_io *u, int batch, int wake)
{
	struct outq_block *ob = calloc(1, sizeof(*ob));
	struct inart_dgram in[1024];
	int rc = 0;
	struct pollfd pfd[2];

	if (ob == NULL)
		return -ENOMEM;
	for (int i = 0; i < OUT_CAP; i++)
		ob->q.d[i].data = ob->bufs[i];
	pfd[0].fd = io_fd(u);
	pfd[1].fd = k == 0 ? inart_ctlthread_fd(s->ctl) : wake;
	pfd[1].events = POLLIN;
	while (!inart_daemon_stop && !atomic_load(&s->stop)) {
		int out = ob->q.used > 0 || io_pending(u) > 0, r;

		pfd[0].events = POLLIN | (out ? POLLOUT : 0);
		r = poll(pfd, 2, out ? 1 : 1000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			inart_log_error("poll: %s", strerror(errno));
			break;
		}
		outq_flush(&s->send_blocked[k], u, &ob->q);
		rx_rounds(s, k, u, &ob->q, in, batch);
		if (k == 0 && (pfd[1].revents & POLLIN)) {
			/* a command of the control thread: between two batches */
			park_others(s);
			inart_ctlthread_run(s->ctl);
			unpark(s);
		}
		if (k > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t v;

			(void)!read(wake, &v, sizeof(v));
		}
		if (k > 0 && atomic_load(&s->park))
			park_here(s);
	}
	free(ob);
	return rc;
}

static void *worker_main(void *arg)
{
	struct ps_worker *w = arg;
	struct ps_state *s = w->s;
	int rc = run(s, w->k, &w->io, w->batch, w->wake);

	if (rc < 0)
		inart_log_error("worker %d: %s", w->k, strerror(-rc));
	pthread_mutex_lock(&s->mu);
	s->alive--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Workers 1..n-1 on socks[1..n) (theirs from then on), pinned to the
 * allowed CPUs in order (the daemon's thread to the first).  0 or -errno
 * with err. */
static int workers_start(struct ps_state *s, struct inart_udp **socks, int batch,
			 struct inart_err *err)
{
	sigset_t all, old;
	int cpus[CPU_SETSIZE], nc = inart_daemon_cpus(cpus, err), rc = 0;

	if (nc < 0)
		return nc;
	if (nc < s->n)
		inart_log_warn("--cores %d: only %d CPUs allowed, workers share them", s->n, nc);
	sigfillset(&all); /* signals go to worker 0 (the daemon's thread) */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int k = 1; k < s->n && rc == 0; k++) {
		struct ps_worker *w = calloc(1, sizeof(*w));
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (w == NULL || efd < 0) {
			rc = inart_err_set(err, -ENOMEM, "worker %d: %s", k, strerror(errno));
			if (efd >= 0)
				close(efd);
			free(w);
			break;
		}
		w->s = s;
		w->k = k;
		w->cpu = cpus[k % nc];
		w->batch = batch;
		w->wake = efd;
		w->io.u = socks[k];
		socks[k] = NULL;
		s->w[k] = w;
		rc = -pthread_create(&w->th, NULL, worker_main, w);
		if (rc < 0) {
			inart_err_set(err, rc, "worker %d: %s", k, strerror(-rc));
			break;
		}
		w->started = 1;
		pthread_mutex_lock(&s->mu);
		s->alive++;
		pthread_mutex_unlock(&s->mu);
		inart_daemon_pin(w->th, w->cpu);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	inart_daemon_pin(pthread_self(), cpus[0]);
	if (rc == 0)
		inart_log_info("%d workers, one shard each, pinned from CPU %d; UDP sockets "
			       "steered by shard (SO_REUSEPORT, classic BPF)",
			       s->n, cpus[0]);
	return rc;
}

/* Stop and join the workers, close their sockets. */
static void workers_stop(struct ps_state *s)
{
	uint64_t one = 1;

	pthread_mutex_lock(&s->mu);
	atomic_store(&s->stop, 1);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (int k = 1; k < s->n; k++) {
		struct ps_worker *w = s->w[k];

		if (w == NULL)
			continue;
		(void)!write(w->wake, &one, sizeof(one));
		if (w->started)
			pthread_join(w->th, NULL);
		inart_udp_close(w->io.u);
		close(w->wake);
		free(w);
		s->w[k] = NULL;
	}
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
	if (rc == 0 && (c->cores < 0 || c->cores > INART_SHARD_MAX))
		return inart_err_set(err, -EINVAL, "--cores %d: 1..%d", c->cores, INART_SHARD_MAX);
	if (rc == 0 && c->cores > 1 && (c->port != NULL || c->io == INART_PSD_IO_XDP))
		return inart_err_set(err, -EINVAL,
				     "--cores %d: several cores run on UDP sockets only (not with "
				     "%s)",
				     c->cores, c->port != NULL ? "--port" : "--io xdp");
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
static int io_open(struct ps_io *io, const struct inart_psd_cfg *c, struct inart_udp **socks,
		   struct inart_err *err)
{
	struct inart_ethudp_cfg ec = {
	    .port = c->port, .ip = c->bind_ip, .udp_port = INART_WIRE_UDP_PORT};
	struct inart_err xe = {{0}};
	int rc;

	if (c->cores > 1) { /* UDP only (inart_psd_cfg_check) */
		if (c->io == INART_PSD_IO_AUTO)
			inart_log_info(
			    "--io auto: udp (xdp not used: --cores %d runs on a group of "
			    "UDP sockets)",
			    c->cores);
		rc = inart_udp_open_shards(c->bind_ip, INART_WIRE_UDP_PORT, c->dm.batch, c->cores,
					   socks, err);
		io->u = socks[0];
		socks[0] = NULL;
		return rc;
	}
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
	struct inart_udp *socks[INART_SHARD_MAX] = {NULL};
	char ip[16];
	int rc = inart_psd_cfg_check(c, err);

	if (rc < 0)
		return rc;
	inart_log_init("inart-ps", c->dm.level);
	st.name = c->dm.name;
	st.ip = c->bind_ip;
	st.n = c->cores > 1 ? c->cores : 1;
	pthread_mutex_init(&st.mu, NULL);
	pthread_cond_init(&st.cv, NULL);
	st.cur = obj_build(NULL, NULL, 1, -1, 0, st.n, err);
	if (st.cur == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < st.n; k++)
		st.ps[k] = st.cur->core[k];
	st.txn.ctx = &st;
	st.txn.swap = obj_swap;
	st.txn.destroy = obj_destroy;
	rc = io_open(&io, c, socks, err);
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
	rc = inart_daemon_drop(&c->dm, inart_xsk_prog_fd(io.xsk), err);
	if (rc < 0 || (rc = inart_ctlthread_serve(st.ctl, err)) < 0 ||
	    (st.n > 1 && (rc = workers_start(&st, socks, c->dm.batch, err)) < 0))
		goto out;
	inart_addr_fmt_ip(st.ip, ip);
	inart_log_info("PS %s up on %s:%d%s%s, control socket %s", st.name ? st.name : "", ip,
		       INART_WIRE_UDP_PORT, c->port ? ", frames on " : "", c->port ? c->port : "",
		       c->dm.ctl);
	rc = run(&st, 0, &io, c->dm.batch, -1);
	if (rc < 0)
		inart_err_set(err, rc, "poll: %s", strerror(-rc));
	inart_log_info("stopping");
out:
	workers_stop(&st);
	for (int k = 0; k < st.n; k++)
		inart_udp_close(socks[k]);
	inart_ctlthread_stop(st.ctl);
	inart_txn_free(&st.txn);
	inart_udp_close(io.u);
	inart_ethudp_close(io.e);
	inart_xsk_close(io.xsk); /* detaches the program */
	obj_free(st.cur);
	return rc < 0 ? rc : 0;
}
