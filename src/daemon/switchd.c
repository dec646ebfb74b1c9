/*
 * switchd: the switch daemon (switchd.h) -- the software INA switch on real
 * interfaces (or, INART_AFP_UDP, on loopback UDP sockets carrying the same
 * frames: tests).  The sans-I/O switch core (dp/switch) runs over one AF_PACKET
 * socket per interface (port i = the i-th --port), in the packet thread:
 * poll() on the packet sockets and the control mailbox, with a timeout from
 * inart_switch_next_deadline for partial-aggregate flushes.  Frames are
 * received and sent in batches; nothing is allocated per frame.
 *
 * Control requests (ctlproto/ctlmsg) are served by a control thread of their own
 * (ctlproto/ctlthread; what each request does is daemon/switchd_ctl.c): it parses a
 * request, builds what it installs aside (a new core for an install with a
 * configuration, else a new table set from the tables in service:
 * inart_switch_tables_build) and has the packet thread
 * put it in service with one command (a pointer swap) between two batches,
 * so a large install never stalls forwarding.  Installs are transactions
 * (ctlproto/txn: prepare, commit, abort, rollback under an install identity).
 * Counters are the core's and the sockets', reported since the last
 * reset_stats (a baseline kept here, read and written by commands in the
 * packet thread); the core's counters only grow.
 *
 * Emulation (inart emu): a gate (dp/gate: seeded loss, aggregation-rate
 * limit) stands between the sockets and the core, in the packet thread.  Its
 * set of aggregating labels belongs to the tables: the control thread builds
 * it with them, cmd_swap exchanges both in one command, and the set that
 * goes out of service leaves with the tables it belonged to (kept for a
 * rollback, freed by the control thread).
 *
 * Threads: the packet thread owns the core's mutable state, the gate, the
 * sockets and the baselines; the control thread owns the configuration copy, the
 * transaction state and every object not in service.  The control thread
 * reads the core only where the packet thread never writes (the tables in
 * service, which change only through its own commands).
 */
#include "daemon/switchd.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "ctlproto/ctlthread.h"
#include "daemon/nodecfg.h"
#include "daemon/switchd_ctl.h"
#include "daemon/switchd_workers.h"
#include "daemon/switchd_io.h"
#include "daemon/switchd_shape.h"
#include "dp/pkt.h"
#include "io/log.h"
#include "io/xagg.h"

#define RX_ROUNDS 8

/* The core of this thread: shard 0 (the only one with --cores 1). */
static struct inart_switch *core0(struct sw_state *s)
{
	return inart_shards_core(s->sh, 0);
}

static void emit(struct sw_state *s, int n)
{
	uint64_t now = s->n_shaped ? inart_now_ns() : 0;

	for (int i = 0; i < n; i++) {
		const struct inart_frame *f = &s->out[i];

		if (f->port < s->n_ports && !(s->gate && inart_gate_tx_drop(s->gate, f->port)) &&
		    !(s->n_shaped && inart_switchd_shape_tx(s, f->port, f->data, f->len, now)))
			inart_port_queue(&s->ports[f->port], f->data, f->len);
	}
}

/* Held contributions the aggregation limit lets through now go to the core. */
static void gate_release(struct sw_state *s, uint64_t now)
{
	struct inart_frame in;
	int n = 0;

	while (inart_gate_next(s->gate, now, &in)) {
		emit(s, inart_switch_rx(core0(s), &in, now, s->out, OUT_MAX));
		if (++n % s->batch == 0)
			for (int k = 0; k < s->n_ports; k++)
				if (inart_port_pending(&s->ports[k]))
					inart_port_flush(&s->ports[k]);
	}
}

/* Receive until the ready sockets are drained (bounded: RX_ROUNDS), each
 * frame through the gate (if any) and the core, the outputs sent. */
static void rx_rounds(struct sw_state *s, const struct pollfd *pfd, int batch)
{
	uint8_t *data[1024];
	uint16_t len[1024];
	int np = s->n_ports;

	for (int round = 0; round < RX_ROUNDS; round++) {
		int got = 0;

		for (int i = 0; i < np; i++) {
			uint64_t now;
			int n;

			if (round == 0 && !(pfd[i].revents & POLLIN))
				continue;
			n = inart_port_recv(&s->ports[i], data, len, batch);
			if (n < 0) {
				inart_log_error("%s: receive: %s", s->ifnames[i], strerror(-n));
				continue;
			}
			if (n == 0)
				continue;
			got += n;
			now = inart_now_ns();
			for (int k = 0; k < n; k++) {
				struct inart_frame in = {data[k], len[k], (uint16_t)i};

				if (s->gate != NULL &&
				    inart_gate_rx(s->gate, &in, now) != INART_GATE_PASS)
					continue;
				emit(s, inart_switch_rx(core0(s), &in, now, s->out, OUT_MAX));
			}
			for (int k = 0; k < np; k++)
				if (inart_port_pending(&s->ports[k]) >= batch)
					inart_port_flush(&s->ports[k]);
		}
		for (int k = 0; k < np; k++)
			if (inart_port_pending(&s->ports[k]))
				inart_port_flush(&s->ports[k]);
		if (got == 0)
			break;
	}
}

/* --agg kernel: a frame the program handed up (up: for the core, received
 * on port; else: to send on port as it is, through the port's shaper if
 * it has one: the program queues every frame for a shaped port here). */
static void agg_frame(void *ctx, int up, uint32_t port, const uint8_t *data, uint32_t len)
{
	struct sw_state *s = ctx;
	uint8_t buf[INART_FRAME_MAX];
	struct inart_frame in = {buf, (uint16_t)len, (uint16_t)port};

	if (!up) {
		if (!(s->n_shaped &&
		      inart_switchd_shape_tx(s, (int)port, data, (uint16_t)len, inart_now_ns())))
			inart_port_queue(&s->ports[port], data, len);
		return;
	}
	memcpy(buf, data, len); /* (the ring's pages are read-only here) */
	emit(s, inart_switch_rx(core0(s), &in, inart_now_ns(), s->out, OUT_MAX));
}

/* --agg kernel: the frames waiting in the program's rings (its ticks run
 * in xagg's ticker thread). */
static void agg_rounds(struct sw_state *s)
{
	int n, e;

	if (s->xagg == NULL)
		return;
	n = inart_xagg_drain(s->xagg, agg_frame, s);
	if (n < 0)
		inart_log_error("--agg kernel: draining: %s", strerror(-n));
	if (!s->xagg_tick_warned && inart_xagg_tick_errors(s->xagg, &e) > 0) {
		inart_log_error("--agg kernel: the kernel's flush ticks fail (%s): its slots' "
				"timeouts do not run (stats: xdp.agg_kernel.tick_errors; "
				"docs/threat-model.md)",
				strerror(e));
		s->xagg_tick_warned = 1;
	}
}

/* Timers: frames the gate holds back, the core's flushes; then every
 * pending frame is sent. */
static void timers(struct sw_state *s)
{
	uint64_t now = inart_now_ns();

	agg_rounds(s);
	if (s->xagg != NULL) {
		int rc = inart_xagg_gate_release(s->xagg, now);

		if (rc < 0)
			inart_log_error("--agg-mbps: a held frame not sent back: %s",
					strerror(-rc));
	}
	if (s->gate != NULL)
		gate_release(s, now);
	if (s->n_shaped)
		inart_switchd_shape_release(s, now);
	inart_switchd_io_peers(s);
	if (inart_switch_next_deadline(core0(s)) <= now) {
		int n;

		while ((n = inart_switch_tick(core0(s), now, s->out, OUT_MAX)) > 0) {
			emit(s, n);
			for (int k = 0; k < s->n_ports; k++)
				inart_port_flush(&s->ports[k]);
			if (n < OUT_MAX)
				break;
		}
	}
	for (int k = 0; k < s->n_ports; k++)
		if (inart_port_pending(&s->ports[k]))
			inart_port_flush(&s->ports[k]);
}

/* How long poll may wait (ns): until the next deadline of the core, the
 * gate or a shaper, at most 1 s, 1 ms while a port has frames the device
 * pushed back. */
static int64_t poll_timeout(struct sw_state *s, struct pollfd *pfd)
{
	uint64_t now = inart_now_ns(), dl = inart_switch_next_deadline(core0(s));
	int64_t timeout = 1000000000;
	int pending = 0;

	if (s->gate != NULL && inart_gate_deadline(s->gate, now) < dl)
		dl = inart_gate_deadline(s->gate, now);
	if (s->xagg != NULL && inart_xagg_gate_deadline(s->xagg) < dl)
		dl = inart_xagg_gate_deadline(s->xagg); /* the kernel's held frames */
	if (s->n_shaped && inart_switchd_shape_deadline(s) < dl)
		dl = inart_switchd_shape_deadline(s);
	if (dl != UINT64_MAX)
		timeout = dl <= now ? 0 : dl - now > 1000000000 ? 1000000000 : (int64_t)(dl - now);
	for (int i = 0; i < s->n_ports; i++) {
		int p = inart_port_pending(&s->ports[i]);

		pfd[i].events = POLLIN | (p ? POLLOUT : 0);
		pending += p;
	}
	if (pending && timeout > 1000000)
		timeout = 1000000; /* a device that pushed back may not signal POLLOUT */
	return timeout;
}

static int run(struct sw_state *s, int batch)
{
	struct pollfd pfd[INART_SW_MAX_PORTS + 2];
	int np = s->n_ports;

	for (int i = 0; i < np; i++)
		pfd[i].fd = inart_port_fd(&s->ports[i]);
	pfd[np].fd = inart_ctlthread_fd(s->ctl);
	pfd[np].events = POLLIN;
	pfd[np + 1].fd = s->xagg != NULL ? inart_xagg_fd(s->xagg) : -1; /* its rings */
	pfd[np + 1].events = POLLIN;
	s->batch = batch;
	while (!inart_daemon_stop) {
		int64_t ns = poll_timeout(s, pfd);
		struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
		int r = ppoll(pfd, (nfds_t)np + 2, &ts, NULL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			inart_log_error("poll: %s", strerror(errno));
			return -errno;
		}
		/* a socket error (the interface went down) is reported once and
		   cleared: poll() would return POLLERR for ever */
		for (int i = 0; i < np; i++)
			if (pfd[i].revents & POLLERR) {
				int e = inart_port_clear_error(&s->ports[i]);

				if (e != 0)
					inart_log_warn("%s: %s", s->ifnames[i], strerror(e));
			}
		rx_rounds(s, pfd, batch);
		timers(s);
		/* a command of the control thread: between two batches */
		if (pfd[np].revents & POLLIN)
			inart_switchd_workers_ctl(s); /* the other workers parked */
	}
	return 0;
}

void inart_switchd_cfg_init(struct inart_switchd_cfg *c)
{
	memset(c, 0, sizeof(*c));
	inart_daemon_cfg_init(&c->dm);
	inart_afp_opt_default(&c->afo);
	c->pool_slots = 4096;
	c->flush_ms = 10;
	c->cores = 1;
	c->agg = INART_SWD_AGG_USER; /* the kernel path by --agg kernel|auto (issue 25) */
	c->gc.tx_loss_ports = UINT64_MAX;
	c->gc.seed = 1;
}

/* --cores: in range; several need AF_PACKET fanout or AF_XDP queues, and no
 * aggregation-rate limit (seeded loss: a gate per worker). */
static int cores_check(const struct inart_switchd_cfg *c, struct inart_err *err)
{
	if (c->cores < 1 || c->cores > INART_SHARD_MAX)
		return inart_err_set(err, -EINVAL, "--cores %d not in 1..%d", c->cores,
				     INART_SHARD_MAX);
	for (int i = 0; i < INART_SW_MAX_PORTS && c->cores > 1; i++)
		if (c->shape[i].rate_bps > 0)
			return inart_err_set(err, -EINVAL, "--shape needs --cores 1");
	if (c->cores > 1 && (c->afo.mode == INART_AFP_UDP || c->gc.agg_bytes_per_s > 0))
		return inart_err_set(err, -EINVAL,
				     "--cores %d: several cores need --io xdp, ring, mmsg or auto "
				     "and no --agg-mbps",
				     c->cores);
	return 0;
}

int inart_switchd_cfg_check(const struct inart_switchd_cfg *c, struct inart_err *err)
{
	int rc = inart_daemon_cfg_check(&c->dm, err);

	if (rc < 0)
		return rc;
	if (c->dm.name == NULL || c->dm.name[0] == '\0')
		return inart_err_set(err, -EINVAL, "--name ID is required");
	if (c->n_ports < 1 || c->n_ports > INART_SW_MAX_PORTS)
		return inart_err_set(err, -EINVAL, "--port: %d interfaces (1..%d)", c->n_ports,
				     INART_SW_MAX_PORTS);
	if (c->pool_slots < 1 || c->pool_slots > 1 << 24 || !(c->flush_ms >= 0.001) ||
	    c->flush_ms > 3600e3)
		return inart_err_set(err, -EINVAL, "--pool-slots or --flush-ms out of range");
	if (c->afo.mode < INART_AFP_AUTO || c->afo.mode > INART_AFP_XDP || c->afo.rx_frames < 64 ||
	    c->afo.rx_frames > 65536)
		return inart_err_set(err, -EINVAL, "--io or --ring-frames out of range");
	rc = cores_check(c, err);
	if (rc < 0)
		return rc;
	for (int i = 0; i < c->n_ports; i++) {
		for (int j = 0; j < i; j++)
			if (strcmp(c->ports[i], c->ports[j]) == 0)
				return inart_err_set(err, -EINVAL,
						     "--port: interface '%s' given twice",
						     c->ports[i]);
		rc = inart_afp_check_name(c->ports[i], c->afo.mode, err);
		if (rc < 0)
			return rc;
	}
	if (c->dm.deployment != NULL) /* --deployment: its entry agrees */
		return inart_nodecfg_check_switch(&c->dm, c->ports, c->n_ports, c->afo.mode, err);
	return 0;
}

/* Open the ports (their MACs into the core's config), the core and the
 * gate (if any).  0 or -errno with err. */
static int switchd_open(struct sw_state *s, const struct inart_switchd_cfg *c,
			struct inart_err *err)
{
	struct inart_afp_opt afo = c->afo;
	struct inart_err r = {{0}};
	int rc;

	memset(&s->cfg, 0, sizeof(s->cfg));
	s->cfg.n_ports = s->n_ports;
	s->cfg.pool_slots = c->pool_slots;
	s->cfg.flush_timeout_ns = (uint64_t)(c->flush_ms * 1e6);
	afo.batch = c->dm.batch;
	afo.tx_queue = 4 * c->dm.batch + OUT_MAX;
	if (afo.tx_frames < afo.tx_queue)
		afo.tx_frames = afo.tx_queue;
	rc = inart_switchd_shape_open(s, c->shape, err); /* before xdp: its ports */
	if (rc < 0)
		return rc;
	rc = inart_switchd_io_open(s, &afo, c->dm.batch, c->gated, err);
	if (rc < 0)
		return rc;
	for (int i = 0; i < s->n_ports; i++) {
		inart_port_mac(&s->ports[i], s->cfg.ports[i].mac);
		memcpy(s->macs[i], s->cfg.ports[i].mac, 6);
	}
	if (inart_switch_cfg_check(&s->cfg, &r) < 0)
		return inart_err_set(err, -EINVAL, "switch core: %s", r.msg);
	s->sh = inart_shards_create(&s->cfg, s->cores);
	if (s->sh == NULL)
		return inart_err_set(err, -errno, "switch core: %s", strerror(errno));
	inart_switchd_io_sync(s); /* xdp: the program's maps */
	/* --agg: --agg-mbps alone is charged in the kernel on its path (h25g) */
	rc = inart_switchd_io_agg_open(s, c->agg,
				       c->gated && (c->gc.rx_loss > 0 || c->gc.tx_loss > 0), err);
	if (rc < 0)
		return rc;
	rc = inart_switchd_io_agg_gate(s, &c->gc, err);
	if (rc < 0)
		return rc;
	rc = inart_switchd_workers_open(s, &afo, err);
	if (rc < 0)
		return rc;
	if (c->gated) {
		struct inart_gate_cfg gc = c->gc;

		gc.n_ports = s->n_ports;
		s->gate = inart_gate_create(&gc, inart_now_ns());
		if (s->gate == NULL)
			return inart_err_set(err, -errno, "loss / aggregation limit: %s",
					     strerror(errno));
		rc = inart_switchd_workers_gates(s, &gc, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The state with its output buffers, in one block. */
struct sw_block {
	struct sw_state st;
	uint8_t outbuf[OUT_MAX][INART_FRAME_MAX];
};

int inart_switchd_run(const struct inart_switchd_cfg *c, struct inart_err *err)
{
	struct sw_block *b;
	struct sw_state *s;
	struct inart_daemon_role role = {.role = "switch", .other = "PS", .op = inart_switchd_op};
	int rc = inart_switchd_cfg_check(c, err);

	if (rc < 0)
		return rc;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	s = &b->st;
	role.ctx = s;
	s->name = c->dm.name;
	s->n_ports = c->n_ports;
	s->cores = c->cores;
	s->test_faults = c->test_faults;
	for (int i = 0; i < c->n_ports; i++)
		s->ifnames[i] = c->ports[i];
	for (int i = 0; i < OUT_MAX; i++)
		s->out[i].data = b->outbuf[i];
	inart_log_init("inart-switchd", c->dm.level);
	rc = switchd_open(s, c, err);
	if (rc < 0)
		goto out;
	s->start_ns = inart_now_ns();
	s->txn.ctx = s;
	s->txn.swap = inart_switchd_obj_swap;
	s->txn.destroy = inart_switchd_obj_destroy;
	s->ctl = inart_daemon_open(&c->dm, &role, err);
	if (s->ctl == NULL) {
		rc = -errno;
		goto out;
	}
	rc = inart_daemon_drop(&c->dm, inart_xsk_prog_fd(s->xsk), err);
	if (rc < 0 || (rc = inart_ctlthread_serve(s->ctl, err)) < 0 ||
	    (rc = inart_switchd_workers_start(s, err)) < 0)
		goto out;
	inart_log_info("switch '%s' up: %d ports (%s), control socket %s", s->name, s->n_ports,
		       inart_switchd_io_name(s), c->dm.ctl);
	rc = run(s, c->dm.batch);
	if (rc < 0)
		inart_err_set(err, rc, "poll: %s", strerror(-rc));
	inart_log_info("stopping");
out:
	inart_ctlthread_stop(s->ctl);
	inart_txn_free(&s->txn);
	inart_switchd_workers_close(s);
	inart_shards_destroy(s->sh);
	inart_gate_destroy(s->gate);
	inart_switchd_io_agg_close(s);
	inart_switchd_io_close(s);
	inart_switchd_shape_close(s);
	inart_switchd_ctl_free(s);
	free(b);
	return rc < 0 ? rc : 0;
}
