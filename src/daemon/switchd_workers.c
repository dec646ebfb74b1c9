/*
 * switchd_workers: the worker threads of `inart switchd --cores N` (see
 * switchd_workers.h).
 *
 * Invariants: worker k (1..N-1) alone touches its sockets, its output
 * frames and shard k's mutable state, except while it is parked (then
 * worker 0 runs a control command that may read or swap any shard's state
 * and read the sockets' counters); s->sh changes only while all are
 * parked.  `alive` counts the workers that run their loop (a worker that
 * failed leaves it, so that parking never waits for it).
 * Ownership: s->wk and everything under it.
 */
#include "daemon/switchd_workers.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "daemon/frame.h"
#include "io/fanout.h"
#include "io/log.h"

#define W_ROUNDS 8 /* receive rounds per wake-up, as daemon/switchd's */

struct worker {
	struct sw_workers *wk;
	struct sw_state *s;
	int k, cpu, wake; /* wake: an eventfd (park, stop) */
	pthread_t th;
	struct inart_gate *gate; /* --rx-loss / --tx-loss: this worker's own, own seed */
	struct inart_port ports[INART_SW_MAX_PORTS]; /* AF_PACKET, or set k of s->xsk */
	struct inart_frame out[OUT_MAX];
	uint8_t outbuf[OUT_MAX][INART_FRAME_MAX];
};

struct sw_workers {
	int n, batch, started;
	atomic_int park, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int parked, alive;
	struct worker *w[INART_SHARD_MAX]; /* 1..n-1 */
};

/* ---- a worker's loop ---- */

static void park_here(struct sw_workers *wk)
{
	pthread_mutex_lock(&wk->mu);
	wk->parked++;
	pthread_cond_broadcast(&wk->cv);
	while (atomic_load(&wk->park) && !atomic_load(&wk->stop))
		pthread_cond_wait(&wk->cv, &wk->mu);
	wk->parked--;
	pthread_mutex_unlock(&wk->mu);
}

static void flush_all(struct worker *w, int min)
{
	for (int i = 0; i < w->s->n_ports; i++)
		if (inart_port_pending(&w->ports[i]) > min)
			inart_port_flush(&w->ports[i]);
}

static void send_out(struct worker *w, int n)
{
	for (int i = 0; i < n; i++)
		if (w->out[i].port < w->s->n_ports &&
		    !(w->gate && inart_gate_tx_drop(w->gate, w->out[i].port)))
			inart_port_queue(&w->ports[w->out[i].port], w->out[i].data, w->out[i].len);
}

/* Drain the ready sockets (at most W_ROUNDS rounds) through the shard. */
static void w_rx(struct worker *w, struct inart_switch *sw, const struct pollfd *pfd)
{
	uint8_t *data[1024];
	uint16_t len[1024];

	for (int round = 0, got = 1; round < W_ROUNDS && got; round++) {
		got = 0;
		for (int i = 0; i < w->s->n_ports; i++) {
			int n = round == 0 && !(pfd[i].revents & POLLIN)
				    ? 0
				    : inart_port_recv(&w->ports[i], data, len, w->wk->batch);
			uint64_t now = inart_now_ns();

			for (int j = 0; j < n; j++) {
				struct inart_frame in = {data[j], len[j], (uint16_t)i};

				if (w->gate != NULL &&
				    inart_gate_rx(w->gate, &in, now) != INART_GATE_PASS)
					continue;
				send_out(w, inart_switch_rx(sw, &in, now, w->out, OUT_MAX));
			}
			got += n > 0 ? n : 0;
			flush_all(w, w->wk->batch - 1);
		}
		flush_all(w, 0);
	}
}

/* The shard's partial-aggregate flushes that are due. */
static void w_tick(struct worker *w, struct inart_switch *sw)
{
	uint64_t now = inart_now_ns();
	int n;

	while (inart_switch_next_deadline(sw) <= now &&
	       (n = inart_switch_tick(sw, now, w->out, OUT_MAX)) > 0) {
		send_out(w, n);
		flush_all(w, 0);
		if (n < OUT_MAX)
			break;
	}
}

static int w_timeout(struct worker *w, struct inart_switch *sw, struct pollfd *pfd)
{
	uint64_t now = inart_now_ns(), dl = inart_switch_next_deadline(sw);
	int t = dl == UINT64_MAX ? 1000 : dl <= now ? 0 : (int)((dl - now + 999999) / 1000000);

	for (int i = 0; i < w->s->n_ports; i++) {
		int p = inart_port_pending(&w->ports[i]);

		pfd[i].events = POLLIN | (p ? POLLOUT : 0);
		if (p && t > 1)
			t = 1; /* a device that pushed back may not signal POLLOUT */
	}
	return t > 1000 ? 1000 : t;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sw_workers *wk = w->wk;
	struct pollfd pfd[INART_SW_MAX_PORTS + 1];
	int np = w->s->n_ports;

	for (int i = 0; i < np; i++)
		pfd[i].fd = inart_port_fd(&w->ports[i]);
	pfd[np].fd = w->wake;
	pfd[np].events = POLLIN;
	while (!atomic_load_explicit(&wk->stop, memory_order_relaxed) && !inart_daemon_stop) {
		struct inart_switch *sw;
		int r;

		if (atomic_load_explicit(&wk->park, memory_order_relaxed))
			park_here(wk);
		sw = inart_shards_core(w->s->sh, w->k);
		r = poll(pfd, (nfds_t)np + 1, w_timeout(w, sw, pfd));
		if (r < 0 && errno != EINTR) {
			inart_log_error("worker %d: poll: %s", w->k, strerror(errno));
			break;
		}
		if (r <= 0)
			pfd[np].revents = 0;
		if (pfd[np].revents & POLLIN) {
			uint64_t x;

			(void)!read(w->wake, &x, sizeof(x));
		}
		for (int i = 0; i < np; i++)
			if (r > 0 && (pfd[i].revents & POLLERR))
				inart_port_clear_error(&w->ports[i]);
		if (r > 0)
			w_rx(w, sw, pfd);
		w_tick(w, sw);
	}
	pthread_mutex_lock(&wk->mu);
	wk->alive--;
	pthread_cond_broadcast(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
	return NULL;
}

/* ---- setting up ---- */

static void wake(struct sw_workers *wk)
{
	uint64_t one = 1;

	for (int k = 1; k < wk->n; k++)
		(void)!write(wk->w[k]->wake, &one, sizeof(one));
}

/* Frames the sockets of port i received before their group steered them:
 * dropped (they reached every socket). */
static void drain(struct sw_state *s, int i)
{
	uint8_t *data[64];
	uint16_t len[64];

	while (inart_afp_recv(s->ports[i].afp, data, len, 64) > 0)
		;
	for (int k = 1; k < s->wk->n; k++)
		while (inart_port_recv(&s->wk->w[k]->ports[i], data, len, 64) > 0)
			;
}

/* --io xdp: worker k's ports are set k of the AF_XDP sets (a socket on
 * queue k of every port; io/xsk hands each frame to its shard's set). */
static int xsk_ports(struct sw_state *s)
{
	for (int k = 1; k < s->wk->n; k++)
		for (int i = 0; i < s->n_ports; i++)
			s->wk->w[k]->ports[i] =
			    (struct inart_port){NULL, inart_xsk_set(s->xsk, k), i};
	return 0;
}

int inart_switchd_workers_open(struct sw_state *s, const struct inart_afp_opt *afo,
			       struct inart_err *err)
{
	struct sw_workers *wk;
	int rc;

	if (s->cores <= 1)
		return 0;
	wk = calloc(1, sizeof(*wk));
	if (wk == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	s->wk = wk;
	wk->n = s->cores;
	wk->batch = afo->batch;
	pthread_mutex_init(&wk->mu, NULL);
	pthread_cond_init(&wk->cv, NULL);
	for (int k = 1; k < wk->n; k++) {
		struct worker *w = calloc(1, sizeof(*w));

		if (w == NULL)
			return inart_err_set(err, -ENOMEM, "out of memory");
		wk->w[k] = w;
		w->wk = wk;
		w->s = s;
		w->k = k;
		for (int i = 0; i < OUT_MAX; i++)
			w->out[i].data = w->outbuf[i];
		w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->wake < 0)
			return inart_err_set(err, -errno, "eventfd: %s", strerror(errno));
	}
	if (s->xsk != NULL)
		return xsk_ports(s);
	for (int i = 0; i < s->n_ports; i++) {
		uint16_t id = 0;

		rc = inart_fanout_join(inart_afp_fd(s->ports[i].afp), s->ifnames[i], &id, err);
		for (int k = 1; rc == 0 && k < wk->n; k++) {
			wk->w[k]->ports[i].afp = inart_afp_open(s->ifnames[i], afo, err);
			rc = wk->w[k]->ports[i].afp == NULL
				 ? -errno
				 : inart_fanout_join(inart_afp_fd(wk->w[k]->ports[i].afp),
						     s->ifnames[i], &id, err);
		}
		if (rc == 0)
			rc = inart_fanout_steer(inart_afp_fd(s->ports[i].afp), s->ifnames[i], wk->n,
						err);
		if (rc < 0)
			return rc;
		drain(s, i);
	}
	return 0;
}

int inart_switchd_workers_start(struct sw_state *s, struct inart_err *err)
{
	struct sw_workers *wk = s->wk;
	sigset_t all, old;
	int cpus[CPU_SETSIZE], nc;

	if (wk == NULL)
		return 0;
	nc = inart_daemon_cpus(cpus, err);
	if (nc < 0)
		return nc;
	if (nc < wk->n)
		inart_log_warn("--cores %d: only %d CPUs allowed, workers share them", wk->n, nc);
	/* signals go to worker 0 (the daemon's thread) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int k = 1; k < wk->n; k++) {
		struct worker *w = wk->w[k];
		int rc;

		w->cpu = cpus[k % nc];
		rc = pthread_create(&w->th, NULL, worker_main, w);
		if (rc != 0) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return inart_err_set(err, -rc, "worker %d: %s", k, strerror(rc));
		}
		pthread_mutex_lock(&wk->mu);
		wk->started = k;
		wk->alive++;
		pthread_mutex_unlock(&wk->mu);
		inart_daemon_pin(w->th, w->cpu);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	inart_daemon_pin(pthread_self(), cpus[0]);
	inart_log_info("%d workers, one shard each, pinned from CPU %d; %s", wk->n, cpus[0],
		       s->xsk != NULL ? "an AF_XDP socket per queue, frames handed to their "
					"shard's worker (docs/dataplane.md)"
				      : "fanout by shard (classic BPF, docs/dataplane.md)");
	return 0;
}

int inart_switchd_workers_gates(struct sw_state *s, const struct inart_gate_cfg *gc,
				struct inart_err *err)
{
	for (int k = 1; s->wk != NULL && k < s->wk->n; k++) {
		struct inart_gate_cfg c = *gc;

		/* worker k's own stream: a lossy frame is decided without a
		 * lock (--agg-mbps, one bucket, is refused at N cores by
		 * inart_switchd_cfg_check) */
		c.seed = gc->seed + (uint64_t)k * 0x9e3779b97f4a7c15ull;
		s->wk->w[k]->gate = inart_gate_create(&c, inart_now_ns());
		if (s->wk->w[k]->gate == NULL)
			return inart_err_set(err, -errno, "worker %d: loss: %s", k,
					     strerror(errno));
	}
	return 0;
}

void inart_switchd_gate_stats(struct sw_state *s, struct inart_gate_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (s->gate == NULL)
		return;
	inart_gate_stats(s->gate, st);
	for (int k = 1; s->wk != NULL && k < s->wk->n; k++) {
		struct inart_gate_stats x;

		if (s->wk->w[k] == NULL || s->wk->w[k]->gate == NULL)
			continue;
		inart_gate_stats(s->wk->w[k]->gate, &x);
		for (int i = 0; i < INART_SW_MAX_PORTS; i++) {
			st->rx_lost[i] += x.rx_lost[i];
			st->tx_lost[i] += x.tx_lost[i];
		}
		st->agg_frames += x.agg_frames;
		st->agg_bytes += x.agg_bytes;
		st->agg_held += x.agg_held;
		st->agg_dropped += x.agg_dropped;
	}
}

/* ---- the daemon's thread ---- */

void inart_switchd_workers_ctl(struct sw_state *s)
{
	struct sw_workers *wk = s->wk;

	if (wk == NULL || wk->started == 0) {
		inart_ctlthread_run(s->ctl);
		return;
	}
	pthread_mutex_lock(&wk->mu);
	atomic_store(&wk->park, 1);
	wake(wk);
	while (wk->parked < wk->alive)
		pthread_cond_wait(&wk->cv, &wk->mu);
	inart_ctlthread_run(s->ctl); /* every shard stands still */
	atomic_store(&wk->park, 0);
	pthread_cond_broadcast(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
}

static void stats_add(struct inart_afp_stats *a, const struct inart_afp_stats *b)
{
	a->rx += b->rx;
	a->rx_bytes += b->rx_bytes;
	a->rx_trunc += b->rx_trunc;
	a->rx_calls += b->rx_calls;
	a->rx_kernel_drops += b->rx_kernel_drops;
	a->tx += b->tx;
	a->tx_bytes += b->tx_bytes;
	a->tx_calls += b->tx_calls;
	a->tx_blocked += b->tx_blocked;
	a->tx_drops += b->tx_drops;
	a->tx_errors += b->tx_errors;
}

void inart_switchd_port_stats(struct sw_state *s, int i, struct inart_afp_stats *st)
{
	inart_port_stats(&s->ports[i], st);
	for (int k = 1; s->wk != NULL && k < s->wk->n; k++) {
		struct inart_afp_stats x;

		if (s->wk->w[k] == NULL ||
		    (s->wk->w[k]->ports[i].afp == NULL && s->wk->w[k]->ports[i].xsk == NULL))
			continue;
		inart_port_stats(&s->wk->w[k]->ports[i], &x);
		stats_add(st, &x);
	}
}

void inart_switchd_workers_close(struct sw_state *s)
{
	struct sw_workers *wk = s->wk;

	if (wk == NULL)
		return;
	pthread_mutex_lock(&wk->mu);
	atomic_store(&wk->stop, 1);
	pthread_cond_broadcast(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
	for (int k = 1; k < wk->n && wk->w[k] != NULL; k++) {
		uint64_t one = 1;

		if (wk->w[k]->wake >= 0)
			(void)!write(wk->w[k]->wake, &one, sizeof(one));
	}
	for (int k = 1; k <= wk->started; k++)
		pthread_join(wk->w[k]->th, NULL);
	for (int k = 1; k < wk->n; k++) {
		struct worker *w = wk->w[k];

		if (w == NULL)
			continue;
		for (int i = 0; i < s->n_ports; i++)
			inart_afp_close(w->ports[i].afp); /* an AF_XDP set is s->xsk's */
		if (w->wake > 0)
			close(w->wake);
		inart_gate_destroy(w->gate);
		free(w);
	}
	pthread_mutex_destroy(&wk->mu);
	pthread_cond_destroy(&wk->cv);
	free(wk);
	s->wk = NULL;
}
