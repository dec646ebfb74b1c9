/*
 * xdp_bench: the traffic and reference forwarding of bench/switchd_bench.sh,
 * XDP programs of bench/xdp_bench.bpf.c loaded with libbpf.
 *
 *   xdp_bench gen IFACE LOAD SECONDS [--sample] [--batch N] [--part K/N]
 *                 [--corrupt N] [--lose N]
 *   xdp_bench sink IFACE LOAD [--sample]
 *   xdp_bench redirect IN OUT
 *
 * gen: sends LOAD (plain | ina1 | ina8) out of IFACE for SECONDS with
 * BPF_PROG_RUN live frames (BPF_F_TEST_XDP_LIVE_FRAMES, N frames a batch,
 * default 64): the `gen` program rewrites each 1022-byte frame (slot, seq,
 * contributor, values, and the header fields a device may have changed)
 * from a per-CPU counter and returns XDP_TX, which sends it out of IFACE (a
 * veth: its peer needs an XDP program or GRO on).  Run it in the namespace
 * of IFACE and pinned to one CPU; one process per CPU for several, each with
 * its own --part K/N (chunks K, K + N, ...: the parts never share a chunk,
 * and all of a slot's chunks come from one part).  Prints "sent N pps X
 * seconds T" (frames the program emitted; a full veth ring drops some of
 * them: the sink counts what arrived; T the time it sent).  One BPF_PROG_RUN
 * call for the whole run, ended by SIGALRM.  --corrupt N: every N-th frame
 * carries one wrong value; --lose N: every N-th frame is dropped, not sent
 * (the sink's self-test, tests/bench_sink.sh).
 * sink: attaches `sink` to IFACE (native XDP) and counts the frames that
 * check (docs in the .bpf.c); prints "ready" once attached, one line
 * "frames F contribs C full U bad B other O bytes Y" (sums over CPUs) on each
 * SIGUSR1, and detaches on SIGTERM / SIGINT.
 * redirect: XDP_REDIRECT of everything IN receives to OUT through a DEVMAP
 * (OUT's peer needs an XDP program: the sink); detaches on SIGTERM / SIGINT.
 *
 * Frames: Ethernet 02:78:00:00:00:01 -> 02:78:00:00:00:02, IPv4
 * 10.78.0.1 -> 10.78.0.2 (DF, TTL 64, header checksum set), UDP 47470 with
 * an InArt DATA header (job 0, tree 0, label 1, fan-in 1 or 8, 235 values)
 * or, for plain, UDP to 47471 with the same payload.  --sample: the program
 * writes and checks 3 of the 235 values (first, middle, last) instead of
 * all of them.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "common/clock.h"
#include "xdp_bench.skel.h"

#define FRAME 1022
#define NVAL 235

struct sink_cnt {
	__u64 frames, contribs, full, bad, other, bytes;
};

/* The command line's options (main). */
struct opts {
	int full;	     /* 0: --sample */
	__u32 batch;	     /* --batch: live frames per batch */
	__u32 part, nparts;  /* --part K/N */
	__u32 corrupt, lose; /* --corrupt N, --lose N (the sink's self-test) */
};

static volatile sig_atomic_t stop, snap;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_snap(int sig)
{
	(void)sig;
	snap = 1;
}

/* The signals are blocked but in wait_signal(): none is missed between a
 * check of the flags and the wait. */
static sigset_t waitmask;

static void handle_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGUSR1);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_snap;
	sigaction(SIGUSR1, &sa, NULL);
}

static void wait_signal(void)
{
	sigsuspend(&waitmask);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: xdp_bench gen IFACE plain|ina1|ina8 SECONDS [--sample] [--batch N]\n"
		"                     [--part K/N] [--corrupt N] [--lose N]\n"
		"       xdp_bench sink IFACE plain|ina1|ina8 [--sample]\n"
		"       xdp_bench redirect IN OUT\n");
	return 2;
}

static int ifindex_of(const char *name)
{
	int i = (int)if_nametoindex(name);

	if (!i)
		fprintf(stderr, "xdp_bench: no interface %s: %s\n", name, strerror(errno));
	return i;
}

/* Load the skeleton with LOAD's configuration and only program `keep`. */
static void template(unsigned char *f, int fan, int plain);

/* The sink's masks (xdp_bench.bpf.c, cfg_mask): the bytes it tests, from
 * the template f. */
static void sink_masks(struct xdp_bench *s, const unsigned char *f)
{
	static const struct {
		int off;
		unsigned char bits;
	} tested[] = {{12, 0xff}, {13, 0xff}, {14, 0xff}, {23, 0xff}, {36, 0xff},
		      {37, 0xff}, {42, 0xff}, {43, 0x01}, {44, 0xff}, {52, 0xff},
		      {53, 0xff}, {68, 0xff}, {69, 0xff}, {74, 0xff}, {75, 0xff},
		      {76, 0xff}, {77, 0xff}, {78, 0xff}, {79, 0xff}};
	unsigned char mask[80] = {0};
	size_t i;

	for (i = 0; i < sizeof(tested) / sizeof(tested[0]); i++)
		mask[tested[i].off] = tested[i].bits;
	for (i = 0; i < 10; i++) {
		__u64 m, w;

		memcpy(&m, mask + 8 * i, 8);
		memcpy(&w, f + 8 * i, 8);
		s->rodata->cfg_mask[i] = m;
		s->rodata->cfg_want[i] = w & m;
	}
}

static struct xdp_bench *open_load(const char *load, const struct opts *o, const char *keep)
{
	unsigned char frame[FRAME];
	__u16 hw;
	struct xdp_bench *s;
	struct bpf_program *p;
	int err;

	if (strcmp(load, "plain") && strcmp(load, "ina1") && strcmp(load, "ina8")) {
		fprintf(stderr, "xdp_bench: load must be plain, ina1 or ina8 (got %s)\n", load);
		return NULL;
	}
	s = xdp_bench__open();
	if (!s) {
		fprintf(stderr, "xdp_bench: open: %s\n", strerror(errno));
		return NULL;
	}
	s->rodata->cfg_fan = strcmp(load, "ina8") ? 1 : 8;
	s->rodata->cfg_plain = !strcmp(load, "plain");
	s->rodata->cfg_full = (__u32)o->full;
	s->rodata->cfg_part = o->part;
	s->rodata->cfg_nparts = o->nparts;
	s->rodata->cfg_corrupt = o->corrupt;
	s->rodata->cfg_lose = o->lose;
	template(frame, s->rodata->cfg_fan, (int)s->rodata->cfg_plain);
	memcpy((void *)s->rodata->cfg_hdr, frame, 80);
	memcpy(&hw, frame + 80, 2);
	s->rodata->cfg_hdr[10] = hw;
	sink_masks(s, frame);
	bpf_object__for_each_program(p, s->obj)
	{
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), keep));
	}
	err = xdp_bench__load(s);
	if (err) {
		fprintf(stderr, "xdp_bench: load: %s\n", strerror(-err));
		xdp_bench__destroy(s);
		return NULL;
	}
	return s;
}

static unsigned short ip_csum(const unsigned char *h)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (unsigned long)((h[i] << 8) | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (unsigned short)~sum;
}

static void template(unsigned char *f, int fan, int plain)
{
	static const unsigned char dst[6] = {2, 0x78, 0, 0, 0, 2}, src[6] = {2, 0x78, 0, 0, 0, 1};
	unsigned char *ip = f + 14, *udp = f + 34, *ina = f + 42;
	int iplen = FRAME - 14, udplen = FRAME - 34, port = plain ? 47471 : 47470;
	unsigned short c;

	memset(f, 0, FRAME);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (unsigned char)(iplen >> 8);
	ip[3] = (unsigned char)iplen;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[13] = 78, ip[14] = 0, ip[15] = 1;
	ip[16] = 10, ip[17] = 78, ip[18] = 0, ip[19] = 2;
	c = ip_csum(ip);
	ip[10] = (unsigned char)(c >> 8);
	ip[11] = (unsigned char)c;
	udp[0] = (unsigned char)(port >> 8), udp[1] = (unsigned char)port;
	udp[2] = (unsigned char)(port >> 8), udp[3] = (unsigned char)port;
	udp[4] = (unsigned char)(udplen >> 8), udp[5] = (unsigned char)udplen;
	ina[0] = 1; /* version */
	ina[1] = 1; /* DATA */
	ina[2] = 1; /* one bitmap word */
	ina[11] = (unsigned char)fan;
	ina[15] = 1; /* label 1 */
	ina[26] = NVAL >> 8, ina[27] = NVAL & 0xff;
	ina[39] = 1;
}

/* SIGALRM ends a generator run: BPF_PROG_RUN returns EINTR at its next
 * batch.  The time is taken here, when sending stops. */
static volatile sig_atomic_t gen_done;
static double gen_t1;

static void on_alarm(int sig)
{
	(void)sig;
	if (!gen_done)
		gen_t1 = inart_now_s();
	gen_done = 1;
}

/* Frames the gen program emitted: its per-CPU counter, summed. */
static int gen_frames(struct xdp_bench *s, unsigned long long *sent)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u64 *v;
	__u32 key = 0;

	if (ncpu <= 0)
		return -1;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v || bpf_map_lookup_elem(bpf_map__fd(s->maps.gen_count), &key, v)) {
		fprintf(stderr, "xdp_bench: read the generator's counter: %s\n", strerror(errno));
		free(v);
		return -1;
	}
	*sent = 0;
	for (i = 0; i < ncpu; i++)
		*sent += v[i];
	free(v);
	return 0;
}

/* One BPF_PROG_RUN call for the whole run (repeat near 2^32, ended by
 * SIGALRM), not one per 64k frames: each call builds a page pool, copies the
 * template into each of its frames and on return destroys the pool, which
 * waits for an RCU grace period (synchronize_rcu in page_pool_destroy).  On a
 * busy 2-CPU machine that wait took most of the generator's time: 1.8-2.0
 * Mpps with 65536 frames a call. */
static int do_gen(const char *ifname, const char *load, double secs, const struct opts *op)
{
	static unsigned char frame[FRAME];
	struct xdp_bench *s = open_load(load, op, "gen");
	struct xdp_md ctx = {0};
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {0};
	double t0;
	unsigned long long sent = 0;
	int err = 0, rc = 1, e;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = FRAME, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 0xfffffff0u, .batch_size = op->batch,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	if (!s)
		return 1;
	ctx.data_end = FRAME;
	ctx.ingress_ifindex = (__u32)ifindex_of(ifname);
	if (!ctx.ingress_ifindex)
		goto out;
	template(frame, s->rodata->cfg_fan, (int)s->rodata->cfg_plain);
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: the run returns EINTR */
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	/* again every 10 ms: a signal that lands between the test of gen_done
	 * and the call's entry would otherwise leave the call running */
	it.it_interval.tv_usec = 10000;
	t0 = inart_now_s();
	setitimer(ITIMER_REAL, &it, NULL);
	while (!gen_done) {
		err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.gen), &o);
		if (err)
			break;
	}
	e = errno;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (err && !(e == EINTR && gen_done)) {
		fprintf(stderr, "xdp_bench: BPF_PROG_RUN live frames on %s: %s\n", ifname,
			strerror(e));
		goto out;
	}
	if (gen_frames(s, &sent))
		goto out;
	printf("sent %llu pps %.0f seconds %.6f\n", sent, (double)sent / (gen_t1 - t0),
	       gen_t1 - t0);
	rc = 0;
out:
	xdp_bench__destroy(s);
	return rc;
}

/* Attach prog to ifindex (native XDP), handle the signals, say "ready". */
static int attach_ready(int ifindex, const char *ifname, int prog, const char *what)
{
	int err = bpf_xdp_attach(ifindex, prog, XDP_FLAGS_DRV_MODE, NULL);

	if (err) {
		fprintf(stderr, "xdp_bench: attach %s to %s: %s\n", what, ifname, strerror(-err));
		return err;
	}
	handle_signals();
	printf("ready\n");
	fflush(stdout);
	return 0;
}

static int do_sink(const char *ifname, const char *load, const struct opts *op)
{
	struct xdp_bench *s = open_load(load, op, "sink");
	int ifindex = ifindex_of(ifname), ncpu = libbpf_num_possible_cpus(), i, rc = 1;
	struct sink_cnt *v = NULL;
	__u32 key = 0;

	if (!s || !ifindex || ncpu <= 0)
		goto out;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		goto out;
	if (attach_ready(ifindex, ifname, bpf_program__fd(s->progs.sink), "sink"))
		goto out;
	while (!stop) {
		struct sink_cnt t = {0};

		if (!snap)
			wait_signal();
		if (!snap)
			continue;
		snap = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(s->maps.sink_count), &key, v)) {
			fprintf(stderr, "xdp_bench: read counters: %s\n", strerror(errno));
			break;
		}
		for (i = 0; i < ncpu; i++) {
			t.frames += v[i].frames;
			t.contribs += v[i].contribs;
			t.full += v[i].full;
			t.bad += v[i].bad;
			t.other += v[i].other;
			t.bytes += v[i].bytes;
		}
		printf("frames %llu contribs %llu full %llu bad %llu other %llu bytes %llu\n",
		       (unsigned long long)t.frames, (unsigned long long)t.contribs,
		       (unsigned long long)t.full, (unsigned long long)t.bad,
		       (unsigned long long)t.other, (unsigned long long)t.bytes);
		fflush(stdout);
	}
	bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	rc = 0;
out:
	free(v);
	xdp_bench__destroy(s);
	return rc;
}

static int do_redirect(const char *in, const char *out, const struct opts *op)
{
	struct xdp_bench *s = open_load("plain", op, "redirect");
	int iin = ifindex_of(in), iout = ifindex_of(out), rc = 1;
	__u32 key = 0, val = (__u32)iout;

	if (!s || !iin || !iout)
		goto out;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.tx_port), &key, &val, 0)) {
		fprintf(stderr, "xdp_bench: devmap <- %s: %s\n", out, strerror(errno));
		goto out;
	}
	if (attach_ready(iin, in, bpf_program__fd(s->progs.redirect), "redirect"))
		goto out;
	while (!stop)
		wait_signal();
	bpf_xdp_detach(iin, XDP_FLAGS_DRV_MODE, NULL);
	rc = 0;
out:
	xdp_bench__destroy(s);
	return rc;
}

/* A count option's value: 1..max, else -1. */
static long count_arg(const char *v, long max)
{
	char *e;
	long n = strtol(v, &e, 10);

	return (*v && !*e && n >= 1 && n <= max) ? n : -1;
}

int main(int argc, char **argv)
{
	struct opts o = {.full = 1, .batch = 64, .part = 0, .nparts = 1};
	char *pos[5], *e;
	int n = 0, i;
	long v, w;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--sample")) {
			o.full = 0;
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && !val)
			return usage();
		if (!strcmp(a, "--batch") && (v = count_arg(val, 256)) > 0) {
			o.batch = (__u32)v;
		} else if (!strcmp(a, "--corrupt") && (v = count_arg(val, 1L << 30)) > 0) {
			o.corrupt = (__u32)v;
		} else if (!strcmp(a, "--lose") && (v = count_arg(val, 1L << 30)) > 0) {
			o.lose = (__u32)v;
		} else if (!strcmp(a, "--part")) {
			v = strtol(val, &e, 10);
			if (e == val || *e != '/')
				return usage();
			w = count_arg(e + 1, 64);
			if (w < 1 || v < 0 || v >= w)
				return usage();
			o.part = (__u32)v;
			o.nparts = (__u32)w;
		} else if (a[0] == '-' && a[1] == '-') {
			return usage();
		} else if (n < 4) {
			pos[n++] = argv[i];
			continue;
		} else {
			return usage();
		}
		i++;
	}
	if (n == 4 && !strcmp(pos[0], "gen"))
		return do_gen(pos[1], pos[2], atof(pos[3]), &o);
	if (n == 3 && !strcmp(pos[0], "sink"))
		return do_sink(pos[1], pos[2], &o);
	if (n == 3 && !strcmp(pos[0], "redirect"))
		return do_redirect(pos[1], pos[2], &o);
	return usage();
}
