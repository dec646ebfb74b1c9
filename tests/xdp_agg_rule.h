/*
 * xdp_agg_rule: what tests/test_xdp_agg.c and fuzz/fuzz_xdp_agg.c share:
 * the differential rule between the XDP aggregation program
 * (bpf/xdp_agg.bpf.c, run with BPF_PROG_TEST_RUN) and the switch core, and
 * the harness pieces around it (one pinned CPU, per-CPU reads, the frames
 * queued on xa_tx, the ports' addresses).  Header only, static functions:
 * each harness is one executable.
 *
 * The rule, per frame, by the program's verdict (xa_last):
 *   SEND    core A sent exactly the program's frames: the first in place of
 *           the frame (XDP_TX when it leaves by the ingress port, else
 *           XDP_REDIRECT), the others queued on xa_tx, byte for byte, in
 *           A's order, on A's ports;
 *   DROP    A sent nothing, nothing queued;
 *   APPLIED A sent as many frames as the program counted (> 1), and the
 *           frame was passed up as it came;
 *   PUNT, KEPT  the frame passed up as it came, nothing queued, and core B
 *           (which sees only what the program passes up) sent A's frames.
 */
#ifndef INART_TESTS_XDP_AGG_RULE_H
#define INART_TESTS_XDP_AGG_RULE_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dp/switch.h"
#include "io/xdp_agg.h"

#define XA_RULE_MAXQ 16 /* queued frames kept per packet */

/* libbpf's messages: warnings only. */
static int xa_rule_quiet(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* Pin the process to the first CPU it may run on (the program's per-CPU
 * state is that CPU's).  That CPU, or -1. */
static int xa_rule_pin(void)
{
	cpu_set_t cs;

	CPU_ZERO(&cs);
	if (sched_getaffinity(0, sizeof(cs), &cs) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &cs)) {
				CPU_ZERO(&cs);
				CPU_SET(i, &cs);
				break;
			}
	if (sched_setaffinity(0, sizeof(cs), &cs) < 0)
		return -1;
	return sched_getcpu();
}

/* CPU cpu's value (sz bytes) of key in the per-CPU map fd: 0, or -1. */
static int xa_rule_percpu(int fd, uint32_t key, int cpu, void *val, size_t sz)
{
	static uint8_t buf[1 << 17];
	size_t stride = (sz + 7) & ~(size_t)7;
	int n = libbpf_num_possible_cpus();

	if (n <= 0 || cpu < 0 || cpu >= n || (size_t)n * stride > sizeof(buf) ||
	    bpf_map_lookup_elem(fd, &key, buf) < 0)
		return -1;
	memcpy(val, buf + (size_t)cpu * stride, sz);
	return 0;
}

/* The ports of the harnesses' switches: MAC 02:00:00:00:00:p, peer
 * 02:00:00:00:01:p, address 10.9.0.p except port 2 (none: aggregates
 * from it carry the first contributor's). */
static void xa_rule_ports(struct inart_sw_cfg *cfg, int n_ports)
{
	for (int p = 0; p < n_ports; p++) {
		uint8_t m[6] = {2, 0, 0, 0, 0, (uint8_t)p}, q[6] = {2, 0, 0, 0, 1, (uint8_t)p};

		memcpy(cfg->ports[p].mac, m, 6);
		memcpy(cfg->ports[p].peer_mac, q, 6);
		cfg->ports[p].ip = p == 2 ? 0 : 0x0a090000u + (uint32_t)p;
	}
}

/* The frames the program queued on xa_tx for one packet (n counts them
 * all, the first XA_RULE_MAXQ kept); ring_buffer__new's callback, with
 * the struct as its context. */
struct xa_rule_queue {
	struct inart_xa_txrec rec[XA_RULE_MAXQ];
	int n;
};

static int xa_rule_on_queued(void *ctx, void *d, size_t size)
{
	struct xa_rule_queue *q = ctx;

	if (size >= sizeof(q->rec[0]) && q->n < XA_RULE_MAXQ)
		memcpy(&q->rec[q->n], d, sizeof(q->rec[0]));
	q->n++;
	return 0;
}

static int xa_rule_same(const struct inart_frame *x, int nx, const struct inart_frame *y, int ny)
{
	if (nx != ny)
		return 0;
	for (int i = 0; i < nx; i++)
		if (x[i].port != y[i].port || x[i].len != y[i].len ||
		    memcmp(x[i].data, y[i].data, x[i].len) != 0)
			return 0;
	return 1;
}

/* 1: the verdict passes the frame up, so core B must see it (PUNT, KEPT). */
static int xa_rule_passed_up(uint32_t verdict)
{
	return verdict != INART_XA_SEND && verdict != INART_XA_DROP && verdict != INART_XA_APPLIED;
}

/* The rule above for one frame f (len bytes, from port in_port): o the
 * test run (its output in xo), last the program's xa_last, q what it
 * queued, fa/na core A's frames, fb/nb core B's (read only when
 * xa_rule_passed_up).  1 if the program's outcome is the core's. */
static int xa_rule_ok(const struct bpf_test_run_opts *o, const uint8_t *xo, const uint8_t *f,
		      uint32_t len, uint32_t in_port, const struct inart_xa_last *last,
		      const struct xa_rule_queue *q, const struct inart_frame *fa, int na,
		      const struct inart_frame *fb, int nb)
{
	int ok;

	switch (last->verdict) {
	case INART_XA_SEND:
		ok = na == (int)last->frames && q->n == na - 1 && q->n <= XA_RULE_MAXQ &&
		     o->retval == (last->out_port == in_port ? XDP_TX : XDP_REDIRECT) &&
		     fa[0].port == last->out_port && fa[0].len == o->data_size_out &&
		     memcmp(fa[0].data, xo, fa[0].len) == 0;
		for (int k = 0; ok && k < q->n; k++)
			ok = q->rec[k].port == fa[k + 1].port && q->rec[k].len == fa[k + 1].len &&
			     memcmp(q->rec[k].data, fa[k + 1].data, fa[k + 1].len) == 0;
		return ok;
	case INART_XA_DROP:
		return na == 0 && o->retval == XDP_DROP && q->n == 0;
	case INART_XA_APPLIED:
		return o->retval == XDP_PASS && na == (int)last->frames && na > 1 &&
		       o->data_size_out == len && memcmp(xo, f, len) == 0;
	default: /* PUNT, KEPT (the core replicates a kept result) */
		return o->retval == XDP_PASS && q->n == 0 && xa_rule_same(fa, na, fb, nb) &&
		       o->data_size_out == len && memcmp(xo, f, len) == 0;
	}
}

#endif
