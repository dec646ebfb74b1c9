/*
 * xagg: the kernel aggregation path's loader and its state protocol with the
 * user-space core (xagg.h).  Memory: the skeleton, the ring buffers' manager,
 * the tree keys (stable indices into xa_trees: a tree keeps its counters
 * across installs), a scratch array for per-CPU reads; allocated at open and
 * at sync (never per packet).
 */
#include "io/xagg.h"

#include <errno.h>

#ifndef INART_HAVE_XDP

struct inart_xagg *inart_xagg_open(const struct inart_xagg_opt *o, struct inart_err *err)
{
	inart_err_set(err, -EOPNOTSUPP, "--agg kernel: this inart was built without libbpf");
	return inart_null_errno(EOPNOTSUPP);
}

void inart_xagg_close(struct inart_xagg *x)
{
}

int inart_xagg_n_cpus(const struct inart_xagg *x)
{
	return 0;
}

int inart_xagg_cpus(const struct inart_xagg *x, int *cpus, int max)
{
	return 0;
}

int inart_xagg_any(const struct inart_xagg *x)
{
	return 0;
}

int inart_xagg_sync(struct inart_xagg *x, const struct inart_sw_cfg *cfg,
		    const struct inart_switch *sw, struct inart_err *err)
{
	return -EOPNOTSUPP;
}

int inart_xagg_lose(struct inart_xagg *x)
{
	return 0;
}

int inart_xagg_reset(struct inart_xagg *x)
{
	return -EOPNOTSUPP;
}

int inart_xagg_fd(const struct inart_xagg *x)
{
	return -1;
}

int inart_xagg_peer(struct inart_xagg *x, int p, const uint8_t mac[6])
{
	return -EOPNOTSUPP;
}

int inart_xagg_drain(struct inart_xagg *x, inart_xagg_frame_fn fn, void *ctx)
{
	return 0;
}

int inart_xagg_tick(struct inart_xagg *x)
{
	return 0;
}

int inart_xagg_ticker_start(struct inart_xagg *x, uint64_t period_ns)
{
	return -EOPNOTSUPP;
}

void inart_xagg_ticker_period(struct inart_xagg *x, uint64_t period_ns)
{
}

uint64_t inart_xagg_tick_errors(const struct inart_xagg *x, int *last_errno)
{
	if (last_errno != NULL)
		*last_errno = 0;
	return 0;
}

int inart_xagg_counters(const struct inart_xagg *x, uint64_t *c, uint64_t *p)
{
	return -EOPNOTSUPP;
}

void inart_xagg_add_trees(const struct inart_xagg *x, struct inart_sw_tree_stats *t, int n,
			  uint64_t *dup)
{
}

int inart_xagg_gate_open(struct inart_xagg *x, double bytes_per_s, double burst, int cap)
{
	return -EOPNOTSUPP;
}

int inart_xagg_gate_release(struct inart_xagg *x, uint64_t now_ns)
{
	return 0;
}

uint64_t inart_xagg_gate_deadline(const struct inart_xagg *x)
{
	return UINT64_MAX;
}

void inart_xagg_gate_add_stats(const struct inart_xagg *x, struct inart_gate_stats *st)
{
}

#else

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "dp/gate.h"
#include "io/xdp_agg.h"
#include "io/xdp_agg_maps.h"
#include <xdp_agg.skel.h> /* generated: bpftool gen skeleton (meson.build) */

#define CAP_RANKS 65536u /* progress records (8 bytes per CPU each) */
#define CAP_TREES 4096u
#define KICKS_MAX 64 /* tick frames per CPU per period at most */

struct inart_xagg {
	struct xdp_agg *skel;
	struct ring_buffer *rb;
	int n_cpus, n_possible, n_ports;
	int cpu[INART_XA_MAX_CPUS]; /* the aggregation CPUs (CPUMAP keys) */
	int n_kernel;		    /* entries the last sync gave the program */
	uint32_t slots;
	uint32_t ifindex[INART_SW_MAX_PORTS];
	uint64_t *tree_keys; /* job << 16 | tree, index = xa_trees' */
	int n_trees;
	inart_xagg_frame_fn fn; /* during drain */
	void *fn_ctx;
	struct tag {
		struct inart_xagg *x;
		int up; /* 1: xa_rx, 0: xa_tx */
	} tag_rx, tag_tx;
	uint8_t kick[INART_XA_FRAME_MAX];
	uint64_t *pcpu;	     /* n_possible u64s (per-CPU counter reads) */
	uint64_t *tick_pcpu; /* the same for the ticks (the ticker's thread) */
	pthread_t ticker;
	int ticker_on;
	atomic_int ticker_stop;
	_Atomic uint64_t tick_ns;
	_Atomic uint64_t tick_errors;	       /* failed ticks (the ticker's thread) */
	atomic_int tick_errno;		       /* the last one's errno */
	uint64_t lost_seen;		       /* xa_last.lost summed at the last lose */
	uint32_t kick_n[INART_XA_MAX_CPUS];    /* tick frames per CPU last period */
	uint64_t kick_seen[INART_XA_MAX_CPUS]; /* its flush count then */
	struct xgate *gate;		       /* --agg-mbps (h25g): NULL without */
};

static int quiet(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return 0;
}

static int on_frame(void *ctx, void *data, size_t size)
{
	const struct tag *tag = ctx;
	struct inart_xagg *x = tag->x;
	const struct inart_xa_txrec *r = data;

	if (size < offsetof(struct inart_xa_txrec, data) || r->len > INART_XA_FRAME_MAX ||
	    r->len > size - offsetof(struct inart_xa_txrec, data) ||
	    r->port >= (uint32_t)x->n_ports || x->fn == NULL)
		return 0; /* cannot happen: the program writes them */
	x->fn(x->fn_ctx, tag->up, r->port, r->data, r->len);
	return 0;
}

void inart_xagg_close(struct inart_xagg *x)
{
	if (x == NULL)
		return;
	if (x->ticker_on) {
		atomic_store(&x->ticker_stop, 1);
		pthread_join(x->ticker, NULL);
	}
	ring_buffer__free(x->rb);
	free(x->gate);
	xdp_agg__destroy(x->skel);
	free(x->tree_keys);
	free(x->pcpu);
	free(x->tick_pcpu);
	free(x);
}

/* (h25e) xa_shaped from opt.shaped: before any CPU runs the program. */
static int put_shaped(struct inart_xagg *x, uint64_t shaped, struct inart_err *err)
{
	int fd = bpf_map__fd(x->skel->maps.xa_shaped);

	for (uint32_t p = 0; p < (uint32_t)x->n_ports && p < INART_XA_MAX_PORTS; p++) {
		uint32_t on = (uint32_t)(shaped >> p & 1);

		if (bpf_map_update_elem(fd, &p, &on, BPF_ANY) < 0)
			return inart_err_set(err, -errno, "--agg kernel: xa_shaped %u: %s", p,
					     strerror(errno));
	}
	return 0;
}

static int put_cpus(struct inart_xagg *x, int cpumap_fd, struct inart_err *err)
{
	int prog = bpf_program__fd(x->skel->progs.xdp_agg_cpu);

	for (int k = 0; k < x->n_cpus; k++) {
		struct bpf_cpumap_val v = {.qsize = 2048};
		uint32_t key = (uint32_t)x->cpu[k];

		v.bpf_prog.fd = prog;
		if (bpf_map_update_elem(cpumap_fd, &key, &v, BPF_ANY) < 0)
			return inart_err_set(err, -errno, "--agg kernel: CPUMAP entry %d: %s",
					     x->cpu[k], strerror(errno));
	}
	return 0;
}

/* The CPUMAP's kernel threads ("cpumap/CPU/map:ID", created with its
 * entries) get the calling thread's niceness: they do the packet thread's
 * work (a switchd run at nice -20 on a busy machine would otherwise
 * aggregate at nice 0, behind every build).  The number reniced. */
static int renice_threads(int cpumap_fd)
{
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info);
	int nice, n = 0;
	struct dirent *d;
	DIR *dir;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if ((nice == -1 && errno != 0) || bpf_obj_get_info_by_fd(cpumap_fd, &info, &len) < 0)
		return 0;
	dir = opendir("/proc");
	if (dir == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		char path[64], comm[64], want[64];
		int id, cpu, pid = atoi(d->d_name);
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    sscanf(comm, "cpumap/%d/map:%d", &cpu, &id) == 2 && id == (int)info.id) {
			snprintf(want, sizeof(want), "cpumap/%d/map:%d\n", cpu, id);
			if (strcmp(comm, want) == 0 &&
			    setpriority(PRIO_PROCESS, (id_t)pid, nice) == 0)
				n++;
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* The aggregation CPUs: those of the calling thread's affinity that are
 * online and fit the CPUMAP, else every online one below its size. */
static void pick_cpus(struct inart_xagg *x)
{
	long on = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	x->n_cpus = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < INART_XA_MAX_CPUS && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set) && c < on)
				x->cpu[x->n_cpus++] = c;
	if (x->n_cpus == 0)
		for (int c = 0; c < INART_XA_MAX_CPUS && c < (on < 1 ? 1 : on); c++)
			x->cpu[x->n_cpus++] = c;
}

struct inart_xagg *inart_xagg_open(const struct inart_xagg_opt *o, struct inart_err *err)
{
	struct inart_xagg *x = calloc(1, sizeof(*x));
	struct inart_xa_cfg xc = {0};
	uint32_t zero = 0;
	int rc, dev;

	if (x == NULL)
		return NULL;
	x->n_possible = libbpf_num_possible_cpus();
	pick_cpus(x);
	x->n_ports = o->n_ports;
	x->slots = o->slots > 0 ? o->slots : 1;
	x->tag_rx = (struct tag){x, 1};
	x->tag_tx = (struct tag){x, 0};
	memcpy(x->ifindex, o->ifindex, sizeof(uint32_t) * (size_t)o->n_ports);
	x->pcpu = calloc((size_t)(x->n_possible > 0 ? x->n_possible : 1), sizeof(uint64_t) * 8);
	x->tick_pcpu =
	    calloc((size_t)(x->n_possible > 0 ? x->n_possible : 1), sizeof(uint64_t) * 8);
	if (x->pcpu == NULL || x->tick_pcpu == NULL || x->n_possible <= 0) {
		rc = inart_err_set(err, -ENOMEM, "--agg kernel: out of memory");
		goto fail;
	}
	libbpf_set_print(quiet);
	x->skel = xdp_agg__open();
	if (x->skel == NULL) {
		rc = inart_err_set(err, -errno, "--agg kernel: opening the program: %s",
				   strerror(errno));
		goto fail;
	}
	/* the test-run entries are the differential test's, not switchd's */
	bpf_program__set_autoload(x->skel->progs.xdp_agg, false);
	bpf_program__set_autoload(x->skel->progs.xdp_agg_tick, false);
	if (bpf_map__set_max_entries(x->skel->maps.xa_slots, x->slots) < 0 ||
	    bpf_map__set_max_entries(x->skel->maps.xa_progress, CAP_RANKS) < 0 ||
	    bpf_map__set_max_entries(x->skel->maps.xa_trees, CAP_TREES) < 0 ||
	    bpf_map__set_max_entries(x->skel->maps.xa_tx, INART_XA_TX_RING) < 0 ||
	    bpf_map__reuse_fd(x->skel->maps.xa_cpus, o->cpumap_fd) < 0) {
		rc = inart_err_set(err, -EINVAL, "--agg kernel: sizing the maps");
		goto fail;
	}
	rc = xdp_agg__load(x->skel);
	if (rc < 0) {
		rc = inart_err_set(err, rc < 0 ? rc : -EINVAL,
				   "--agg kernel: the kernel refused the program: %s",
				   strerror(-rc));
		goto fail;
	}
	xc.n_ranks = CAP_RANKS;
	xc.n_slots = x->slots;
	if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.xa_cfg), &zero, &xc, BPF_ANY) < 0) {
		rc = inart_err_set(err, -errno, "--agg kernel: xa_cfg: %s", strerror(errno));
		goto fail;
	}
	x->rb = ring_buffer__new(bpf_map__fd(x->skel->maps.xa_rx), on_frame, &x->tag_rx, NULL);
	if (x->rb == NULL ||
	    ring_buffer__add(x->rb, bpf_map__fd(x->skel->maps.xa_tx), on_frame, &x->tag_tx) < 0) {
		rc = inart_err_set(err, -errno, "--agg kernel: the ring buffers: %s",
				   strerror(errno));
		goto fail;
	}
	rc = put_shaped(x, o->shaped, err);
	if (rc < 0)
		goto fail;
	rc = put_cpus(x, o->cpumap_fd, err);
	if (rc < 0)
		goto fail;
	renice_threads(o->cpumap_fd); /* (best effort: their default is nice 0) */
	dev = bpf_program__fd(x->skel->progs.xdp_agg_dev);
	if (o->prog_array_fd >= 0 &&
	    bpf_map_update_elem(o->prog_array_fd, &zero, &dev, BPF_ANY) < 0) {
		rc = inart_err_set(err, -errno, "--agg kernel: the receiving CPU's program: %s",
				   strerror(errno));
		goto fail;
	}
	/* one tick now: the slots' timeouts run only through live-frame test
	   runs (BPF_F_TEST_XDP_LIVE_FRAMES), which some kernels refuse even to
	   root (seen here: a 6.18.44 guest booted with lockdown=confidentiality
	   answered EPERM; the cause is not known); without them
	   a slot that misses a contribution would never flush */
	rc = inart_xagg_tick(x);
	if (rc < 0) {
		rc = inart_err_set(err, rc,
				   "--agg kernel: this kernel refuses BPF_PROG_RUN with live "
				   "frames (%s), which the slots' timeouts need",
				   strerror(-rc));
		goto fail;
	}
	return x;
fail:
	inart_xagg_close(x);
	return inart_null_errno(-rc);
}

int inart_xagg_n_cpus(const struct inart_xagg *x)
{
	return x->n_cpus;
}

int inart_xagg_cpus(const struct inart_xagg *x, int *cpus, int max)
{
	int n = x->n_cpus < max ? x->n_cpus : max;

	memcpy(cpus, x->cpu, sizeof(int) * (size_t)(n > 0 ? n : 0));
	return n;
}

int inart_xagg_any(const struct inart_xagg *x)
{
	return x->n_kernel > 0;
}

static int cfg_get(struct inart_xagg *x, struct inart_xa_cfg *c)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.xa_cfg), &zero, c) < 0 ? -errno : 0;
}

static int cfg_put(struct inart_xagg *x, const struct inart_xa_cfg *c)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(x->skel->maps.xa_cfg), &zero, c, BPF_ANY) < 0
		   ? -errno
		   : 0;
}

/* New trees of sw get the next indices of xa_trees (never reused). */
static int add_tree_keys(struct inart_xagg *x, const struct inart_switch *sw)
{
	int n = inart_switch_stats(sw, NULL, NULL, NULL, 0);
	struct inart_sw_tree_stats *ts = calloc((size_t)(n > 0 ? n : 1), sizeof(*ts));
	uint64_t *k;

	if (ts == NULL)
		return -ENOMEM;
	n = inart_switch_stats(sw, NULL, NULL, ts, n);
	k = realloc(x->tree_keys, sizeof(*k) * (size_t)(x->n_trees + n + 1));
	if (k == NULL) {
		free(ts);
		return -ENOMEM;
	}
	x->tree_keys = k;
	for (int i = 0; i < n; i++) {
		uint64_t key = (uint64_t)ts[i].job << 16 | ts[i].tree;
		int j = 0;

		while (j < x->n_trees && k[j] != key)
			j++;
		if (j == x->n_trees && x->n_trees < (int)CAP_TREES)
			k[x->n_trees++] = key;
	}
	free(ts);
	return 0;
}

int inart_xagg_sync(struct inart_xagg *x, const struct inart_sw_cfg *cfg,
		    const struct inart_switch *sw, struct inart_err *err)
{
	struct inart_xdp_agg_fds fds = {
	    bpf_map__fd(x->skel->maps.xa_cfg),	   bpf_map__fd(x->skel->maps.xa_ports),
	    bpf_map__fd(x->skel->maps.xa_ifports), bpf_map__fd(x->skel->maps.xa_devs),
	    bpf_map__fd(x->skel->maps.xa_labels),  bpf_map__fd(x->skel->maps.xa_ingress)};
	struct inart_xdp_agg_fill_opt fo;
	struct inart_xa_cfg c;
	int rc = add_tree_keys(x, sw);

	if (rc < 0)
		return inart_err_set(err, rc, "--agg kernel: tree keys: %s", strerror(-rc));
	fo = (struct inart_xdp_agg_fill_opt){x->slots,	   CAP_RANKS - 1, CAP_TREES,
					     x->tree_keys, x->n_trees,	  &x->n_kernel};
	rc = inart_xdp_agg_maps_fill_opt(&fds, &fo, cfg, sw, x->ifindex, err);
	if (rc < 0)
		return rc;
	/* the generation after the tables: each CPU then frees the slots whose
	   entry went and forgets rank progress (records moved) */
	rc = cfg_get(x, &c);
	if (rc == 0) {
		c.gen++;
		c.n_ranks = CAP_RANKS;
		c.n_slots = x->slots; /* the map's: slots beyond belong to the core */
		rc = cfg_put(x, &c);
	}
	if (rc < 0)
		return inart_err_set(err, rc, "--agg kernel: xa_cfg: %s", strerror(-rc));
	return 0;
}

int inart_xagg_lose(struct inart_xagg *x)
{
	struct inart_xa_last *v = calloc((size_t)x->n_possible, sizeof(*v));
	uint64_t lost = 0;
	uint32_t zero = 0;
	int busy;

	/* each CPU frees its own slots when it next runs and counts them
	   there: what they freed since the last call, not a scan of every
	   slot on every CPU (megabytes copied per request, in the packet
	   thread, while lose_state requests come back to back) */
	if (v != NULL && bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.xa_last), &zero, v) == 0)
		for (int j = 0; j < x->n_possible; j++)
			lost += v[j].lost;
	free(v);
	busy = (int)(lost - x->lost_seen);
	x->lost_seen = lost;
	inart_xagg_reset(x);
	return busy;
}

int inart_xagg_reset(struct inart_xagg *x)
{
	struct inart_xa_cfg c;
	int rc = cfg_get(x, &c);

	if (rc == 0) {
		c.lose_gen++;
		rc = cfg_put(x, &c);
	}
	return rc;
}

int inart_xagg_fd(const struct inart_xagg *x)
{
	return ring_buffer__epoll_fd(x->rb);
}

int inart_xagg_peer(struct inart_xagg *x, int p, const uint8_t mac[6])
{
	int fd = bpf_map__fd(x->skel->maps.xa_ports);
	struct inart_xa_port v;
	uint32_t key = (uint32_t)p;

	if (bpf_map_lookup_elem(fd, &key, &v) < 0)
		return -errno;
	if (v.peer_fixed || memcmp(v.peer_mac, mac, 6) == 0)
		return 0; /* a configured peer MAC is the core's too */
	memcpy(v.peer_mac, mac, 6);
	return bpf_map_update_elem(fd, &key, &v, BPF_ANY) < 0 ? -errno : 0;
}

int inart_xagg_drain(struct inart_xagg *x, inart_xagg_frame_fn fn, void *ctx)
{
	int n;

	x->fn = fn;
	x->fn_ctx = ctx;
	n = ring_buffer__consume(x->rb);
	x->fn = NULL;
	return n;
}

/* The per-CPU values of key k of the u64 array fd, summed; cpu >= 0: that
 * CPU's only. */
static uint64_t sum_in(const struct inart_xagg *x, uint64_t *buf, int fd, uint32_t k, int cpu)
{
	uint64_t s = 0;

	if (bpf_map_lookup_elem(fd, &k, buf) < 0)
		return 0;
	for (int j = 0; j < x->n_possible; j++)
		if (cpu < 0 || cpu == j)
			s += buf[j];
	return s;
}

static uint64_t sum_u64(const struct inart_xagg *x, int fd, uint32_t k, int cpu)
{
	return sum_in(x, x->pcpu, fd, k, cpu);
}

int inart_xagg_tick(struct inart_xagg *x)
{
	int fd = bpf_map__fd(x->skel->maps.xa_ctrs),
	    prog = bpf_program__fd(x->skel->progs.xdp_agg_kick);
	int total = 0;

	for (int k = 0; k < x->n_cpus; k++) {
		uint32_t cpu = (uint32_t)x->cpu[k];
		uint64_t now = sum_in(x, x->tick_pcpu, fd, INART_XA_C_FLUSHED, (int)cpu);
		uint64_t got = now - x->kick_seen[k];
		/* one frame per run: a run of more (repeat > 1) puts the program
		   into the kernel's XDP dispatcher and takes it out again, two RCU
		   grace periods (130 ms a run on this busy machine) under the
		   dispatcher's mutex, which every other XDP test run of the
		   machine then waits for (h25k) */
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = x->kick,
			    .data_size_in = sizeof(x->kick), .repeat = 1, .batch_size = 1,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		/* the previous period's frames have been run by now (the CPUMAP's
		   thread runs them after this returns): as many flushes as frames
		   sent, there may be more: twice as many frames, else one */
		total += (int)got;
		x->kick_n[k] = x->kick_n[k] > 0 && got >= x->kick_n[k] && x->kick_n[k] < KICKS_MAX
				   ? 2 * x->kick_n[k]
				   : 1;
		x->kick_seen[k] = now;
		memcpy(x->kick + INART_XA_KICK_CPU_OFF, &cpu, sizeof(cpu));
		for (uint32_t i = 0; i < x->kick_n[k]; i++)
			if (bpf_prog_test_run_opts(prog, &o) < 0)
				return -errno;
	}
	return total;
}

static void *ticker_main(void *arg)
{
	struct inart_xagg *x = arg;

	while (!atomic_load(&x->ticker_stop)) {
		uint64_t ns = atomic_load(&x->tick_ns);
		struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

		nanosleep(&ts, NULL);
		if (!atomic_load(&x->ticker_stop)) {
			int rc = inart_xagg_tick(x); /* an error: counted, the next
							period tries again */

			if (rc < 0) {
				atomic_store(&x->tick_errno, -rc);
				atomic_fetch_add(&x->tick_errors, 1);
			}
		}
	}
	return NULL;
}

int inart_xagg_ticker_start(struct inart_xagg *x, uint64_t period_ns)
{
	int rc;

	if (x->ticker_on)
		return 0;
	inart_xagg_ticker_period(x, period_ns);
	atomic_store(&x->ticker_stop, 0);
	rc = pthread_create(&x->ticker, NULL, ticker_main, x);
	if (rc != 0)
		return -rc;
	x->ticker_on = 1;
	return 0;
}

void inart_xagg_ticker_period(struct inart_xagg *x, uint64_t period_ns)
{
	atomic_store(&x->tick_ns, period_ns > 0 ? period_ns : 1000000);
}

uint64_t inart_xagg_tick_errors(const struct inart_xagg *x, int *last_errno)
{
	struct inart_xagg *w = (struct inart_xagg *)x; /* (atomic loads only) */
	uint64_t n = atomic_load(&w->tick_errors);

	if (last_errno != NULL)
		*last_errno = n > 0 ? atomic_load(&w->tick_errno) : 0;
	return n;
}

int inart_xagg_counters(const struct inart_xagg *x, uint64_t *c, uint64_t *p)
{
	for (uint32_t k = 0; c != NULL && k < INART_XA_CTR_N; k++)
		c[k] = sum_u64(x, bpf_map__fd(x->skel->maps.xa_ctrs), k, -1);
	for (uint32_t k = 0; p != NULL && k < INART_XA_N_PCTRS; k++)
		p[k] = k < 4u * (uint32_t)x->n_ports
			   ? sum_u64(x, bpf_map__fd(x->skel->maps.xa_pctrs), k, -1)
			   : 0;
	return 0;
}

void inart_xagg_add_trees(const struct inart_xagg *x, struct inart_sw_tree_stats *t, int n,
			  uint64_t *dup)
{
	struct inart_xa_tree *v = calloc((size_t)x->n_possible, sizeof(*v));

	for (int i = 0; v != NULL && i < n; i++) {
		uint64_t key = (uint64_t)t[i].job << 16 | t[i].tree;
		uint32_t idx = 0;

		while ((int)idx < x->n_trees && x->tree_keys[idx] != key)
			idx++;
		if ((int)idx == x->n_trees ||
		    bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.xa_trees), &idx, v) < 0)
			continue;
		for (int j = 0; j < x->n_possible; j++) {
			t[i].aggregated += v[j].aggregated;
			t[i].emitted += v[j].emitted;
			t[i].partial += v[j].partial;
			t[i].early += v[j].early;
			t[i].fallback += v[j].fallback;
			t[i].duplicates += v[j].duplicates;
			t[i].overflows += v[j].overflows;
			if (dup != NULL)
				*dup += v[j].duplicates;
		}
	}
	free(v);
}

/* ---- --agg-mbps (h25g) ---- */

/* The frames the kernel's gate held, oldest first: [head, head + n) modulo
 * cap, in one block with its injection buffer. */
struct xgate {
	struct inart_xagg *x;
	uint64_t nonce;
	uint64_t lost; /* not sent back (FIFO full, a refused test run) */
	int cap, head, n;
	uint8_t buf[sizeof(struct inart_xa_paid) + INART_XA_FRAME_MAX];
	struct inart_xa_heldrec q[];
};

static int on_held(void *ctx, void *data, size_t size)
{
	struct xgate *g = ctx;
	const struct inart_xa_heldrec *r = data;

	if (size < sizeof(*r) || r->len < 14 || r->len > INART_XA_FRAME_MAX ||
	    r->port >= (uint32_t)g->x->n_ports)
		return 0;     /* cannot happen: the program writes them */
	if (g->n == g->cap) { /* cannot happen: the program keeps cap */
		g->lost++;
		return 0;
	}
	memcpy(&g->q[(g->head + g->n) % g->cap], r, sizeof(*r));
	g->n++;
	return 0;
}

int inart_xagg_gate_open(struct inart_xagg *x, double bytes_per_s, double burst, int cap)
{
	struct inart_xa_gate *v = NULL;
	uint32_t zero = 0;
	struct xgate *g;
	int rc = 0;

	if (!(bytes_per_s >= 1 && bytes_per_s < 1e13) || !(burst >= 0 && burst < 1e9) || cap < 0 ||
	    cap > INART_XA_GATE_RING)
		return -EINVAL;
	if (x->gate != NULL)
		return -EBUSY;
	if (cap == 0)
		cap = 1024; /* dp/gate's */
	if (burst == 0)
		burst = 16.0 * INART_XA_FRAME_MAX;
	g = calloc(1, sizeof(*g) + sizeof(g->q[0]) * (size_t)cap);
	v = calloc(1, sizeof(*v));
	if (g == NULL || v == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	g->x = x;
	g->cap = cap;
	if (getrandom(&g->nonce, sizeof(g->nonce), 0) != sizeof(g->nonce) || g->nonce == 0)
		g->nonce = inart_now_ns() * 0x9E3779B97F4A7C15ull | 1; /* (getrandom refused) */
	v->cap = (uint32_t)cap;
	v->rate = (uint64_t)bytes_per_s;
	v->burst = (int64_t)(burst * 1e9);
	v->tokens = v->burst; /* a full bucket, as tbucket_init */
	v->last_ns = inart_now_ns();
	v->nonce = g->nonce;
	if (ring_buffer__add(x->rb, bpf_map__fd(x->skel->maps.xa_held), on_held, g) < 0) {
		rc = -errno;
		goto out;
	}
	x->gate = g; /* (before the bucket: a frame held from now on finds it) */
	g = NULL;
	if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.xa_gate), &zero, v, BPF_ANY) < 0)
		rc = -errno;
out:
	free(g);
	free(v);
	return rc;
}

int inart_xagg_gate_release(struct inart_xagg *x, uint64_t now_ns)
{
	struct xgate *g = x->gate;
	int prog, n = 0;

	if (g == NULL)
		return 0;
	prog = bpf_program__fd(x->skel->progs.xdp_agg_inject);
	while (g->n > 0 && g->q[g->head].release_ns <= now_ns) {
		const struct inart_xa_heldrec *r = &g->q[g->head];
		struct inart_xa_paid m = {INART_XA_GATE_PAID, r->cpu, r->port, 0, g->nonce};
		struct xdp_md md = {.data = sizeof(m), .data_end = sizeof(m) + r->len};
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = g->buf,
			    .data_size_in = (uint32_t)sizeof(m) + r->len, .ctx_in = &md,
			    .ctx_size_in = sizeof(md), .repeat = 1, .batch_size = 1,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		memcpy(g->buf, &m, sizeof(m));
		memcpy(g->buf + sizeof(m), r->data, r->len);
		g->head = (g->head + 1) % g->cap;
		g->n--;
		if (bpf_prog_test_run_opts(prog, &o) < 0) {
			g->lost++;
			return -errno;
		}
		n++;
	}
	return n;
}

uint64_t inart_xagg_gate_deadline(const struct inart_xagg *x)
{
	const struct xgate *g = x->gate;

	return g == NULL || g->n == 0 ? UINT64_MAX : g->q[g->head].release_ns;
}

void inart_xagg_gate_add_stats(const struct inart_xagg *x, struct inart_gate_stats *st)
{
	struct inart_xa_gate *v;
	uint32_t zero = 0;

	if (x->gate == NULL || (v = malloc(sizeof(*v))) == NULL)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.xa_gate), &zero, v) == 0) {
		st->agg_frames += v->agg_frames;
		st->agg_bytes += v->agg_bytes;
		st->agg_held += v->agg_held;
		st->agg_dropped += v->agg_dropped + v->held_lost + x->gate->lost;
	}
	free(v);
}

#endif
