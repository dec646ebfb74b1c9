/*
 * switchd_io: switchd's ports and back end (switchd_io.h).
 *
 * --io auto tries xdp first, unless a port's root qdisc shapes or schedules
 * (AF_XDP copy-mode transmit and XDP redirects bypass it: `inart emu`'s tbf
 * links would not hold); then io/afpacket's auto (ring, then mmsg).  With
 * --io auto the XDP program forwards plain IPv4 in the kernel only out of
 * ports that are not veths (a veth's peer must run XDP or have GRO on to
 * take a redirected frame, which switchd cannot see from its namespace);
 * --io xdp forwards out of every port.  With a gate (emulated loss,
 * aggregation limit) nothing is forwarded in the kernel.
 */
#include "daemon/switchd_io.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/switchd.h"
#include "io/log.h"
#include "io/xagg.h"
#include "io/xdp_agg.h"
#include "io/xsk.h"

/* Why auto should not take xdp on these ports ("" if nothing). */
static void shaped_ports(const struct sw_state *s, char *why, size_t n)
{
	for (int i = 0; i < s->n_ports; i++) {
		char kind[32];

		if (inart_xsk_shaped(s->ifnames[i], kind, sizeof(kind)) == 1) {
			snprintf(why, n, "%s has a %s qdisc, which AF_XDP bypasses", s->ifnames[i],
				 kind);
			return;
		}
	}
}

static int open_xdp(struct sw_state *s, const struct inart_afp_opt *afo, int batch, int gated,
		    struct inart_err *err)
{
	struct inart_xsk_opt xo = {batch, afo->rx_frames, afo->tx_frames, s->cores};

	s->xsk = inart_xsk_open(s->ifnames, s->n_ports, &xo, err);
	if (s->xsk == NULL)
		return -errno;
	s->xdp_fwd = 0;
	for (int i = 0; i < s->n_ports; i++) {
		s->ports[i] = (struct inart_port){NULL, s->xsk, i};
		if (!gated && s->shaper[i] == NULL && /* --shape: not past the shaper */
		    (afo->mode == INART_AFP_XDP || !inart_xsk_is_veth(s->xsk, i)))
			s->xdp_fwd |= 1ull << i;
	}
	return 0;
}

static int open_afp(struct sw_state *s, const struct inart_afp_opt *afo, struct inart_err *err)
{
	for (int i = 0; i < s->n_ports; i++) {
		s->ports[i].afp = inart_afp_open(s->ifnames[i], afo, err);
		if (s->ports[i].afp == NULL)
			return -errno;
		if (afo->mode == INART_AFP_AUTO &&
		    inart_afp_mode(s->ports[i].afp) != INART_AFP_RING)
			inart_log_warn("%s: the kernel refused PACKET_MMAP rings; using "
				       "recvmmsg/sendmmsg",
				       s->ifnames[i]);
	}
	return 0;
}

int inart_switchd_io_open(struct sw_state *s, const struct inart_afp_opt *afo_in, int batch,
			  int gated, struct inart_err *err)
{
	struct inart_afp_opt afo = *afo_in;
	struct inart_err xe = {{0}};
	char why[sizeof(xe.msg)] = "";
	int rc;

	if (afo.mode == INART_AFP_XDP || afo.mode == INART_AFP_AUTO) {
		if (afo.mode == INART_AFP_AUTO)
			shaped_ports(s, why, sizeof(why));
		if (why[0] == '\0') {
			rc = open_xdp(s, &afo, batch, gated, afo.mode == INART_AFP_XDP ? err : &xe);
			if (rc == 0) {
				inart_log_info(
				    "--io %s: xdp (%s; plain IPv4 forwarded in the kernel "
				    "out of %d of %d ports)",
				    inart_afp_mode_name(afo.mode), inart_xsk_describe(s->xsk),
				    __builtin_popcountll(s->xdp_fwd), s->n_ports);
				return 0;
			}
			if (afo.mode == INART_AFP_XDP)
				return rc;
			snprintf(why, sizeof(why), "%s", xe.msg);
		}
	}
	rc = open_afp(s, &afo, err);
	if (rc == 0 && afo_in->mode == INART_AFP_AUTO)
		inart_log_info("--io auto: %s (xdp not used: %s)",
			       inart_afp_mode_name(inart_afp_mode(s->ports[0].afp)), why);
	return rc;
}

void inart_switchd_io_close(struct sw_state *s)
{
	for (int i = 0; i < s->n_ports; i++) {
		inart_afp_close(s->ports[i].afp);
		s->ports[i].afp = NULL;
	}
	inart_xsk_close(s->xsk); /* detaches the program */
	s->xsk = NULL;
}

const char *inart_switchd_io_name(const struct sw_state *s)
{
	return inart_afp_mode_name(inart_port_mode(&s->ports[0]));
}

static void sync_port(struct sw_state *s, int i)
{
	int rc = inart_xsk_sync_port(s->xsk, i, s->xdp_mac[i],
				     s->xdp_peer_known[i] ? s->xdp_peer[i] : NULL,
				     s->xdp_peer_ip[i], (int)(s->xdp_fwd >> i & 1));

	if (rc < 0)
		inart_log_warn("%s: XDP port map: %s", s->ifnames[i], strerror(-rc));
}

void inart_switchd_io_sync(void *arg)
{
	struct sw_state *s = arg;
	struct inart_err err = {{0}};
	uint32_t ips[INART_SW_MAX_PORTS];
	struct inart_route *r;
	int nr, rc;

	if (s->xsk == NULL)
		return;
	for (int i = 0; i < s->n_ports; i++) {
		ips[i] = s->cfg.ports[i].ip;
		memcpy(s->xdp_mac[i], s->cfg.ports[i].mac, 6);
		s->xdp_peer_ip[i] = s->cfg.ports[i].peer_ip;
		s->xdp_peer_known[i] =
		    inart_switch_peer_mac(inart_shards_core(s->sh, 0), i, s->xdp_peer[i]) == 0;
		sync_port(s, i);
	}
	rc = inart_xsk_sync_own_ips(s->xsk, ips, s->n_ports);
	if (rc < 0)
		inart_log_warn("XDP own addresses: %s", strerror(-rc));
	nr = inart_switch_get_routes(inart_shards_core(s->sh, 0), NULL, 0);
	r = calloc((size_t)nr + 1, sizeof(*r));
	if (r == NULL) {
		inart_log_warn("XDP routes: out of memory");
		return;
	}
	nr = inart_switch_get_routes(inart_shards_core(s->sh, 0), r, nr);
	if (inart_xsk_sync_routes(s->xsk, r, nr, &err) < 0)
		inart_log_warn("%s", err.msg);
	free(r);
}

void inart_switchd_io_peers(struct sw_state *s)
{
	if (s->xsk == NULL)
		return;
	for (int i = 0; i < s->n_ports; i++) {
		uint8_t m[6];
		int known = inart_switch_peer_mac(inart_shards_core(s->sh, 0), i, m) == 0;

		if (known == s->xdp_peer_known[i] && (!known || memcmp(m, s->xdp_peer[i], 6) == 0))
			continue;
		s->xdp_peer_known[i] = (uint8_t)known;
		memcpy(s->xdp_peer[i], m, 6);
		sync_port(s, i);
		if (known && s->xagg != NULL && inart_xagg_peer(s->xagg, i, m) < 0)
			inart_log_warn("%s: the aggregation program's port map", s->ifnames[i]);
	}
}

void inart_switchd_io_port_stats(const struct sw_state *s, struct inart_sw_port_stats *ports)
{
	uint64_t c[INART_XDP_N_CTRS], ap[INART_XA_N_PCTRS];

	if (s->xagg != NULL && inart_xagg_counters(s->xagg, NULL, ap) == 0)
		for (int i = 0; i < s->n_ports; i++) { /* handled by the aggregation program */
			ports[i].rx_pkts += ap[4 * i + INART_XDP_P_RX];
			ports[i].rx_bytes += ap[4 * i + INART_XDP_P_RX_BYTES];
			ports[i].rx_ina_bytes += ap[4 * i + INART_XDP_P_RX_BYTES];
			ports[i].tx_pkts += ap[4 * i + INART_XDP_P_TX];
			ports[i].tx_bytes += ap[4 * i + INART_XDP_P_TX_BYTES];
			ports[i].tx_ina_bytes += ap[4 * i + INART_XDP_P_TX_BYTES];
		}
	if (s->xsk == NULL || inart_xsk_counters(s->xsk, c) < 0)
		return;
	for (int i = 0; i < s->n_ports; i++) {
		const uint64_t *p = &c[INART_XDP_CTR_N + 4 * i];

		ports[i].rx_pkts += p[INART_XDP_P_RX];
		ports[i].rx_bytes += p[INART_XDP_P_RX_BYTES];
		ports[i].tx_pkts += p[INART_XDP_P_TX];
		ports[i].tx_bytes += p[INART_XDP_P_TX_BYTES];
	}
}

/* The kernel aggregation program's counters, since start. */
static json_t *agg_json(const struct sw_state *s)
{
	static const char *const names[INART_XA_CTR_N] = {
	    [INART_XA_C_SENT] = "sent",	       [INART_XA_C_QUEUED] = "queued",
	    [INART_XA_C_DROPPED] = "dropped",  [INART_XA_C_RING_FULL] = "ring_full",
	    [INART_XA_C_FLUSHED] = "flushed",  [INART_XA_C_KEPT] = "kept",
	    [INART_XA_P_FRAME] = "punt_frame", [INART_XA_P_WIRE] = "punt_wire",
	    [INART_XA_P_PORT] = "punt_port",   [INART_XA_P_LABEL] = "punt_label",
	    [INART_XA_P_ENTRY] = "punt_entry", [INART_XA_P_CHECK] = "punt_check",
	    [INART_XA_C_SHAPED] = "to_shaper", [INART_XA_C_TX_FULL] = "to_shaper_lost"};
	uint64_t c[INART_XA_CTR_N], ticks;
	json_t *o = json_object();
	int e;

	if (inart_xagg_counters(s->xagg, c, NULL) < 0)
		return o;
	json_object_set_new(o, "cpus", json_integer(inart_xagg_n_cpus(s->xagg)));
	for (int k = 0; k < INART_XA_CTR_N; k++)
		json_object_set_new(o, names[k], json_integer((json_int_t)c[k]));
	ticks = inart_xagg_tick_errors(s->xagg, &e);
	json_object_set_new(o, "tick_errors", json_integer((json_int_t)ticks));
	if (ticks > 0)
		json_object_set_new(o, "tick_error", json_string(strerror(e)));
	return o;
}

json_t *inart_switchd_io_json(const struct sw_state *s)
{
	static const char *const names[INART_XDP_CTR_N] = {
	    [INART_XDP_FWD] = "fwd",	     [INART_XDP_FWD_BYTES] = "fwd_bytes",
	    [INART_XDP_USER] = "user",	     [INART_XDP_INA] = "ina",
	    [INART_XDP_PASS] = "pass",	     [INART_XDP_ABORT] = "abort",
	    [INART_XDP_AGG] = "agg_steered", [INART_XDP_AGG_LOCAL] = "agg_local"};
	uint64_t c[INART_XDP_N_CTRS];
	json_t *o;

	if (s->xsk == NULL || inart_xsk_counters(s->xsk, c) < 0)
		return NULL;
	o = json_object();
	json_object_set_new(o, "mode", json_string(inart_xsk_describe(s->xsk)));
	json_object_set_new(o, "fwd_ports", json_integer((json_int_t)s->xdp_fwd));
	for (int k = 0; k < INART_XDP_CTR_N; k++)
		json_object_set_new(o, names[k], json_integer((json_int_t)c[k]));
	if (s->xagg != NULL)
		json_object_set_new(o, "agg_kernel", agg_json(s));
	json_object_set_new(o, "agg_where", json_string(s->xagg != NULL ? "kernel" : "user"));
	return o;
}

/* ---- --agg ---- */

/* xdp_switch's steering: the aggregation CPUs, whether any label is the
 * kernel's.  0 or -errno (errno set). */
static int agg_steer(struct sw_state *s)
{
	int cpus[INART_XDP_MAX_CPUS], n, rc;

	if (s->xsk == NULL || s->xagg == NULL)
		return 0;
	n = inart_xagg_cpus(s->xagg, cpus, INART_XDP_MAX_CPUS);
	rc = inart_xsk_agg_steer(s->xsk, n, cpus, inart_xagg_any(s->xagg));
	if (rc < 0)
		errno = -rc;
	return rc;
}

int inart_switchd_io_agg_open(struct sw_state *s, int mode, int gated, struct inart_err *err)
{
	struct inart_err xe = {{0}};
	struct inart_xagg_opt o = {s->n_ports, NULL, -1, -1, (uint32_t)s->cfg.pool_slots, 0};
	uint32_t ifx[INART_SW_MAX_PORTS];
	char why[sizeof(xe.msg)] = "";
	const char *name = mode == INART_SWD_AGG_KERNEL ? "kernel" : "auto";

	if (mode == INART_SWD_AGG_USER)
		return 0;
	if (s->xsk == NULL)
		snprintf(why, sizeof(why), "the kernel path needs --io xdp (the back end is %s)",
			 inart_switchd_io_name(s));
	else if (gated) /* (--agg-mbps alone: the kernel's gate, inart_switchd_io_agg_gate) */
		snprintf(why, sizeof(why), "--rx-loss or --tx-loss: the gate must see every frame");
	else if (s->cores > 1) /* the frames it punts go to one core (core0) */
		snprintf(why, sizeof(why),
			 "--cores %d: the kernel path feeds one core (its CPUs aggregate)",
			 s->cores);
	if (why[0] == '\0') {
		for (int i = 0; i < s->n_ports; i++)
			ifx[i] = if_nametoindex(s->ifnames[i]);
		o.ifindex = ifx;
		o.cpumap_fd = inart_xsk_agg_map_fd(s->xsk);
		o.prog_array_fd = inart_xsk_agg_prog_fd(s->xsk);
		for (int i = 0; i < s->n_ports; i++) /* --shape: through xa_tx, not past it */
			if (s->shaper[i] != NULL)
				o.shaped |= 1ull << i;
		s->xagg = inart_xagg_open(&o, &xe);
		if (s->xagg == NULL)
			snprintf(why, sizeof(why), "%s", xe.msg);
	}
	if (s->xagg != NULL) {
		int rc;

		inart_switchd_io_agg_sync(s, &s->cfg, inart_shards_core(s->sh, 0));
		rc = agg_steer(s);
		if (rc < 0) {
			snprintf(why, sizeof(why), "steering to the CPUs: %s", strerror(-rc));
			inart_switchd_io_agg_close(s);
		}
	}
	if (s->xagg == NULL) {
		if (mode == INART_SWD_AGG_KERNEL)
			return inart_err_set(err, -EOPNOTSUPP, "--agg kernel: %s", why);
		inart_log_info("--agg auto: user (the kernel's aggregation not used: %s)", why);
		return 0;
	}
	s->xagg_tick_ns = s->cfg.flush_timeout_ns > 0 ? s->cfg.flush_timeout_ns : 1000000;
	if (inart_xagg_ticker_start(s->xagg, s->xagg_tick_ns) < 0) {
		inart_switchd_io_agg_close(s);
		return inart_err_set(err, -EAGAIN, "--agg %s: the ticker's thread", name);
	}
	{
		int cpus[INART_XDP_MAX_CPUS],
		    n = inart_xagg_cpus(s->xagg, cpus, INART_XDP_MAX_CPUS);
		char list[4 * INART_XDP_MAX_CPUS] = "";

		for (int i = 0, at = 0; i < n && at < (int)sizeof(list) - 5; i++)
			at += snprintf(list + at, sizeof(list) - (size_t)at, "%s%d", i ? "," : "",
				       cpus[i]);
		inart_log_info("--agg %s: kernel (xdp_agg on CPUs %s, InArt steered to them by "
			       "(job, tree, slot); the rest in user space%s)",
			       name, list,
			       s->n_shaped ? "; what it builds for a shaped port goes through "
					     "the shaper"
					   : "");
	}
	return 0;
}

void inart_switchd_io_agg_close(struct sw_state *s)
{
	if (s->xsk != NULL && s->xagg != NULL)
		inart_xsk_agg_steer(s->xsk, 0, NULL, 0);
	inart_xagg_close(s->xagg);
	s->xagg = NULL;
}

void inart_switchd_io_agg_sync(struct sw_state *s, const struct inart_sw_cfg *cfg,
			       const struct inart_switch *core)
{
	struct inart_err err = {{0}};

	if (s->xagg == NULL)
		return;
	if (inart_xagg_sync(s->xagg, cfg, core, &err) < 0)
		inart_log_warn("%s", err.msg);
	if (agg_steer(s) < 0) /* (after the tables: whether anything is the kernel's) */
		inart_log_warn("--agg kernel: steering: %s", strerror(errno));
	if (cfg->flush_timeout_ns > 0) {
		s->xagg_tick_ns = cfg->flush_timeout_ns;
		inart_xagg_ticker_period(s->xagg, s->xagg_tick_ns);
	}
}

void inart_switchd_io_agg_trees(const struct sw_state *s, struct inart_sw_tree_stats *t, int n,
				uint64_t *drops)
{
	if (s->xagg != NULL)
		inart_xagg_add_trees(s->xagg, t, n,
				     drops != NULL ? &drops[INART_DROP_DUPLICATE] : NULL);
}

int inart_switchd_io_agg_gate(struct sw_state *s, const struct inart_gate_cfg *gc,
			      struct inart_err *err)
{
	int rc;

	if (s->xagg == NULL || !(gc->agg_bytes_per_s > 0))
		return 0;
	rc = inart_xagg_gate_open(s->xagg, gc->agg_bytes_per_s, gc->agg_burst, gc->queue_frames);
	if (rc < 0)
		return inart_err_set(err, rc, "--agg-mbps on the kernel path: %s", strerror(-rc));
	inart_log_info("--agg-mbps %.6g: charged in the kernel (xdp_agg's token bucket; frames "
		       "that wait are held here and sent back at their time)",
		       gc->agg_bytes_per_s * 8 / 1e6);
	return 0;
}

void inart_switchd_io_agg_gate_stats(const struct sw_state *s, struct inart_gate_stats *st)
{
	if (s->xagg != NULL)
		inart_xagg_gate_add_stats(s->xagg, st);
}
