/*
 * worker_api: the public worker API (include/inart/worker.h): a context runs
 * the sans-I/O worker core (dp/worker) over a UDP socket (io/udp).
 *
 * inart_ctx_create rebuilds the installation (bridge/install) from the files
 * `inart ctl install` used, so the worker's labels, shares, window and
 * slots match what the switches and PSs were given, and keeps only this
 * worker's configuration.  inart_allreduce drives the core: feed every
 * received result to inart_worker_rx first, then send what inart_worker_poll
 * emits (its timers see the results that arrived while we waited; waiting
 * for the socket when it pushes back: a datagram the core emitted is never
 * dropped here), sleep in poll() until the next datagram or the core's next
 * deadline.  The context's step (the wire's iteration number) moves on only
 * when a call returns 0; after any failure the core is recreated (an
 * all-reduce in progress cannot be abandoned otherwise) and the next call
 * runs the same step again, unless the caller moves it (set_step, resync
 * after a step notice: -ESTALE).
 *
 * Counters (inart_ctx_stats): the context's own (all-reduces, timeouts) plus
 * the worker core's, mapped field by field through worker_counters; the
 * counters of cores dropped after a timeout are kept in acc, so the totals
 * run from inart_ctx_create.
 *
 * Ring jobs (the plan runs the job as a ring all-reduce: no PS, no INA): the
 * context runs the ring core (dp/ring) instead, over a UDP socket on
 * INART_WIRE_RING_PORT (ring_create, ring_allreduce, ring_counters: a local
 * dispatch, nothing else changes).  Its core is kept across a failed call
 * (a timeout goes on waiting for the same step: its neighbours hold what it
 * acknowledged), ring contexts do not follow plan epochs, and destroying
 * one lingers until its predecessor is quiet (ring_linger).
 *
 * Ownership: the context owns its core, socket and buffers.
 */
#include "inart/worker.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "cp/model/load.h"
#include "bridge/epoch.h"
#include "bridge/install.h"
#include "dp/quant.h"
#include "dp/ring.h"
#include "dp/worker.h"
#include "bridge/deploy.h"
#include "io/udp.h"

#define CTX_BATCH 64
#define CTX_OUT 256

/* Where each counter of the worker core goes in the public struct. */
#define WC(f)                                                                                      \
	{                                                                                          \
		offsetof(struct inart_worker_stats, f), offsetof(struct inart_ctx_stats, f)        \
	}
static const struct {
	size_t core, pub;
} worker_counters[] = {
    WC(sent),	    WC(retransmitted), WC(retx_asked), WC(probes),   WC(nacks),
    WC(chain_gaps), WC(results),       WC(duplicates), WC(rescales), WC(local_overflows),
    WC(dropped),    WC(step_notices),  WC(foreign),    WC(stalls),
};
#undef WC
#define N_WORKER_COUNTERS ((int)(sizeof(worker_counters) / sizeof(worker_counters[0])))

struct inart_ctx {
	struct inart_worker_cfg cfg;
	struct inart_worker *w;
	struct inart_ring *ring; /* a ring job's core (then w is NULL) */
	struct inart_ring_cfg ring_cfg;
	struct inart_ctx_stats acc; /* own counters + those of dropped cores */
	struct inart_udp *u;
	uint32_t step;	   /* the step the next call runs (>= 1) */
	uint32_t job_step; /* named by the last step notice, 0: none */
	size_t max_n;	   /* the job's gradient size in values */
	/* plan epochs (docs/controller.md): the files, the plan file's identity
	 * when last read, the epoch in use and one learnt but not yet in use */
	char *topo, *jobs, *plan, *deploy, *job_id;
	int rank;
	struct stat plan_st;
	uint32_t epoch;
	int pending;
	uint32_t pending_epoch, pending_from;
	struct inart_worker_cfg pending_cfg;
	struct inart_dgram out[CTX_OUT];
	uint8_t bufs[CTX_OUT][INART_DGRAM_MAX];
	/* the trees of the last call that timed out (inart_ctx_trees) */
	uint16_t n_timed;			    /* 0: none since the last call that completed */
	uint8_t tree_state[INART_WORKER_MAX_TREES]; /* INART_CTX_TREE_* */
	struct inart_worker_tree timed[INART_WORKER_MAX_TREES];
};

/* What a context needs of the installation built from the files: this
 * worker's configuration (in the plan's epoch), its node's address, the
 * job's gradient size in values, the plan's epoch (0 when it has none). */
struct built {
	struct inart_worker_cfg cfg;
	struct inart_ring_cfg ring; /* ring.size > 0: a ring job */
	uint32_t ip;
	size_t max_n;
	uint32_t epoch, from_step;
};

static int build(const char *topo, const char *jobs, const char *plan, const char *deploy,
		 const char *job_id, int rank, struct built *b, struct inart_err *err)
{
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_plan *p = NULL;
	struct inart_deploy *d = NULL;
	struct inart_install *in = NULL;
	struct inart_install_opt opt;
	int64_t epoch = -1;
	int rc = 0, j, k;

	if ((t = inart_topo_load(topo, err)) == NULL ||
	    (js = inart_jobs_load(jobs, t, err)) == NULL ||
	    (p = inart_plan_load(plan, t, js, err)) == NULL) {
		rc = -(errno ? errno : EINVAL);
		goto out;
	}
	d = deploy ? inart_deploy_load(deploy, t, NULL, err) : inart_deploy_auto(t);
	if (d == NULL) {
		rc = -(errno ? errno : EINVAL);
		if (deploy == NULL)
			inart_err_set(err, rc, "automatic deployment: %s", strerror(-rc));
		goto out;
	}
	j = inart_jobs_find(js, job_id);
	if (j < 0) {
		rc = inart_err_set(err, -ENOENT, "%s: no job '%s'", jobs, job_id);
		goto out;
	}
	if (rank >= js->jobs[j].n_workers) {
		rc = inart_err_set(err, -EINVAL, "job '%s' has %d workers, rank %d is not one",
				   job_id, js->jobs[j].n_workers, rank);
		goto out;
	}
	inart_install_opt_default(&opt);
	if (deploy != NULL && (rc = inart_deploy_dataplane_load(deploy, &opt, err)) < 0)
		goto out;
	if ((rc = inart_epoch_load(plan, job_id, &epoch, &b->from_step, err)) < 0 ||
	    (rc = inart_install_build(t, js, p, d, &opt, &in, err)) < 0 ||
	    (epoch >= 0 && (rc = inart_epoch_apply(in, (uint32_t)epoch, err)) < 0))
		goto out;
	b->epoch = epoch >= 0 ? (uint32_t)epoch : 0;
	for (k = 0; k < in->n_workers; k++)
		if (in->workers[k].job == j && in->workers[k].cfg.rank == rank)
			break;
	if (k == in->n_workers) {
		rc = inart_err_set(err, -ENOENT, "job '%s' rank %d: not in the installation",
				   job_id, rank);
		goto out;
	}
	b->cfg = in->workers[k].cfg;
	b->ring = in->workers[k].ring;
	b->max_n = (size_t)((js->jobs[j].gradient_bytes + 3) / 4);
	b->ip = d->ip[in->workers[k].node];
out:
	inart_install_destroy(in);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return rc;
}

static char *dup_or_null(const char *s, int *fail)
{
	char *d = s ? strdup(s) : NULL;

	if (s != NULL && d == NULL)
		*fail = 1;
	return d;
}

/* Sleep until a datagram arrives or until `until` (at most 1 s; to the
 * microsecond: a paced tree's next packet is due a frame time later, often
 * a few ms or less on a scaled network).  0 or -EIO. */
static int wait_socket(struct inart_ctx *c, uint64_t until, uint64_t now)
{
	struct pollfd p = {inart_udp_fd(c->u), POLLIN, 0};
	uint64_t wait_ns = until <= now ? 0 : until - now;
	struct timespec ts;

	if (wait_ns > 1000000000ull)
		wait_ns = 1000000000ull;
	ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
	ts.tv_nsec = (long)(wait_ns % 1000000000ull);
	return ppoll(&p, 1, &ts, NULL) < 0 && errno != EINTR ? -EIO : 0;
}

/* The end of a call that got its result (rc 0): the next step. */
static int step_done(struct inart_ctx *c, int rc)
{
	if (rc == 0) {
		c->n_timed = 0;
		c->acc.allreduces++;
		c->step++;
		c->job_step = 0;
	}
	return rc;
}

/* ---- ring jobs (dp/ring) ---- */

static int ring_create(struct inart_ctx *c, const struct built *b, struct inart_err *err)
{
	c->ring_cfg = b->ring;
	c->ring = inart_ring_create(&b->ring);
	if (c->ring == NULL)
		return inart_err_set(err, -(errno ? errno : EINVAL),
				     "job '%s' rank %d: ring configuration refused", c->job_id,
				     c->rank);
	c->u = inart_udp_open(b->ip, INART_WIRE_RING_PORT, CTX_BATCH, err);
	if (c->u == NULL)
		return -(errno ? errno : EIO);
	for (int i = 0; i < CTX_OUT; i++)
		c->out[i].data = c->bufs[i];
	return 0;
}

static int send_all(struct inart_ctx *c, int n, uint64_t deadline);

/* Send all the core (the ring, or the tree worker) has to send at now, in
 * batches of CTX_OUT.  0, or -ETIMEDOUT (a send found no room by the
 * deadline). */
static int send_due(struct inart_ctx *c, uint64_t now, uint64_t deadline)
{
	int k;

	do {
		k = c->ring != NULL ? inart_ring_poll(c->ring, now, c->out, CTX_OUT)
				    : inart_worker_poll(c->w, now, c->out, CTX_OUT);
		if (k > 0 && send_all(c, k, deadline) < 0)
			return -ETIMEDOUT;
	} while (k == CTX_OUT);
	return 0;
}

/* Feed the ring core every datagram waiting on the socket; *at = when the
 * last batch was read (unchanged if none came).  0, or -EIO. */
static int ring_rx_pending(struct inart_ctx *c, uint64_t *at)
{
	struct inart_dgram in[CTX_BATCH];
	int k;

	while ((k = inart_udp_recv(c->u, in, CTX_BATCH)) > 0) {
		*at = inart_now_ns();
		for (int i = 0; i < k; i++)
			inart_ring_rx(c->ring, in[i].data, in[i].len, in[i].peer_ip,
				      in[i].peer_port, *at);
	}
	return k < 0 ? -EIO : 0;
}

/* inart_allreduce of a ring job.  A call that fails keeps the core: the
 * next call of the same step and size goes on with it (it acknowledged
 * messages its neighbours will not send again); another step starts anew. */
static int ring_allreduce(struct inart_ctx *c, float *buf, size_t n, uint64_t deadline)
{
	uint32_t iter;
	size_t cur_n;
	int rc, k;

	if (!inart_quant_finite(buf, n))
		return -EINVAL; /* (so that begin's -EINVAL below is the step's) */
	if (!inart_ring_running(c->ring, &iter, &cur_n) || iter != c->step || cur_n != n) {
		rc = inart_ring_running(c->ring, NULL, NULL)
			 ? -EBUSY
			 : inart_ring_begin(c->ring, buf, n, c->step);
		if (rc == -EBUSY || rc == -EINVAL) {
			/* the caller moved the step (set_step, or back): a new core */
			struct inart_ring *r = inart_ring_create(&c->ring_cfg);

			if (r == NULL)
				return -ENOMEM;
			inart_ring_destroy(c->ring);
			c->ring = r;
			rc = inart_ring_begin(c->ring, buf, n, c->step);
		}
		if (rc < 0)
			return rc; /* nothing sent: the same step next time */
	}
	while (!inart_ring_done(c->ring)) {
		uint64_t now = inart_now_ns(), next;

		if (ring_rx_pending(c, &now) < 0)
			return -EIO;
		if (send_due(c, inart_now_ns(), deadline) < 0)
			goto timeout;
		if (inart_ring_done(c->ring))
			break;
		now = inart_now_ns();
		if (now >= deadline)
			goto timeout;
		next = inart_ring_next_deadline(c->ring);
		if (wait_socket(c, next > deadline ? deadline : next, now) < 0)
			return -EIO;
	}
	/* the last ACKs (DONE) go now: the predecessor waits for them */
	k = inart_ring_poll(c->ring, inart_now_ns(), c->out, CTX_OUT);
	if (k > 0)
		send_all(c, k, deadline);
	return step_done(c, inart_ring_result(c->ring, buf, n));
timeout:
	c->acc.timeouts++;
	return -ETIMEDOUT;
}

/* Before a ring context goes: answer the predecessor's retransmissions of
 * the last step (its final ACK|DONE may have been lost, and it waits for
 * it) until nothing came for 2 initial timeouts, at most 1 s. */
static void ring_linger(struct inart_ctx *c)
{
	uint64_t quiet = 2 * (c->ring_cfg.retx_timeout_ns ? c->ring_cfg.retx_timeout_ns
							  : INART_RING_DEFAULT_RETX_NS),
		 start = inart_now_ns(), last = start, now = start;
	int k;

	while (now - last < quiet && now - start < 1000000000ull) {
		(void)ring_rx_pending(c, &last); /* (a socket error: the wait ends it) */
		now = inart_now_ns();
		k = inart_ring_poll(c->ring, now, c->out, CTX_OUT);
		if (k > 0)
			send_all(c, k, now + quiet);
		if (wait_socket(c, last + quiet, now) < 0)
			break;
		now = inart_now_ns();
	}
}

/* st += the ring core's counters, under the public names that fit. */
static void ring_counters(struct inart_ctx_stats *st, const struct inart_ring *r)
{
	struct inart_ring_stats rs;

	memset(&rs, 0, sizeof(rs));
	inart_ring_stats(r, &rs);
	st->sent += rs.sent;
	st->retransmitted += rs.retransmitted;
	st->results += rs.received;
	st->duplicates += rs.duplicates + rs.stale;
	st->dropped += rs.dropped;
	st->foreign += rs.foreign;
	st->stalls += rs.stalls;
}

struct inart_ctx *inart_ctx_create(const char *topo, const char *jobs, const char *plan,
				   const char *deploy, const char *job_id, int rank,
				   struct inart_err *err)
{
	struct inart_ctx *c = NULL;
	struct built b;
	int rc = 0, nomem = 0;

	if (topo == NULL || jobs == NULL || plan == NULL || job_id == NULL || rank < 0) {
		rc = inart_err_set(err, -EINVAL,
				   "inart_ctx_create: missing file or job, or rank < 0");
		goto out;
	}
	memset(&b, 0, sizeof(b));
	if ((rc = build(topo, jobs, plan, deploy, job_id, rank, &b, err)) < 0)
		goto out;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	c->topo = dup_or_null(topo, &nomem);
	c->jobs = dup_or_null(jobs, &nomem);
	c->plan = dup_or_null(plan, &nomem);
	c->deploy = dup_or_null(deploy, &nomem);
	c->job_id = dup_or_null(job_id, &nomem);
	if (nomem) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	c->rank = rank;
	stat(plan, &c->plan_st);
	c->epoch = b.epoch;
	c->cfg = b.cfg;
	c->step = 1;
	c->max_n = b.max_n;
	if (b.ring.size > 0) {
		rc = ring_create(c, &b, err);
		goto out;
	}
	c->w = inart_worker_create(&c->cfg);
	if (c->w == NULL) {
		rc = inart_err_set(err, -(errno ? errno : EINVAL),
				   "job '%s' rank %d: worker configuration refused", job_id, rank);
		goto out;
	}
	c->u = inart_udp_open(b.ip, INART_WIRE_UDP_PORT, CTX_BATCH, err);
	if (c->u == NULL) {
		rc = -(errno ? errno : EIO);
		goto out;
	}
	for (int i = 0; i < CTX_OUT; i++)
		c->out[i].data = c->bufs[i];
out:
	if (rc < 0) {
		inart_ctx_destroy(c);
		return inart_null_errno(-rc);
	}
	return c;
}

static void add_core_counters(struct inart_ctx_stats *st, const struct inart_worker *w);

/* At an all-reduce boundary: if the plan file changed and names a newer
 * epoch, build this worker's configuration in it (kept pending); a pending
 * epoch whose from_step the context reached is put in use (a new core; the
 * step goes on).  A plan that does not build leaves everything as it is
 * (it is read again when it changes). */
static void follow_plan(struct inart_ctx *c)
{
	struct stat st;
	struct built b;

	if (stat(c->plan, &st) == 0 &&
	    (st.st_ino != c->plan_st.st_ino || st.st_size != c->plan_st.st_size ||
	     st.st_mtim.tv_sec != c->plan_st.st_mtim.tv_sec ||
	     st.st_mtim.tv_nsec != c->plan_st.st_mtim.tv_nsec)) {
		c->plan_st = st;
		memset(&b, 0, sizeof(b));
		if (build(c->topo, c->jobs, c->plan, c->deploy, c->job_id, c->rank, &b, NULL) ==
			0 &&
		    b.epoch > c->epoch && b.max_n == c->max_n) {
			c->pending = 1;
			c->pending_cfg = b.cfg;
			c->pending_epoch = b.epoch;
			c->pending_from = b.from_step;
		}
	}
	if (c->pending && c->step >= c->pending_from) {
		struct inart_worker *w = inart_worker_create(&c->pending_cfg);

		if (w != NULL) {
			add_core_counters(&c->acc, c->w);
			inart_worker_destroy(c->w);
			c->w = w;
			c->cfg = c->pending_cfg;
			c->epoch = c->pending_epoch;
			c->acc.epochs++;
		}
		c->pending = 0;
	}
}

void inart_ctx_destroy(struct inart_ctx *c)
{
	if (c == NULL)
		return;
	inart_worker_destroy(c->w);
	if (c->ring != NULL && c->u != NULL && inart_ring_done(c->ring))
		ring_linger(c);
	inart_ring_destroy(c->ring);
	inart_udp_close(c->u);
	free(c->topo);
	free(c->jobs);
	free(c->plan);
	free(c->deploy);
	free(c->job_id);
	free(c);
}

/* Send out[0..n), waiting for room until the deadline.  0 or -ETIMEDOUT. */
static int send_all(struct inart_ctx *c, int n, uint64_t deadline)
{
	int off = 0;

	while (off < n) {
		struct pollfd p = {inart_udp_fd(c->u), POLLOUT, 0};
		uint64_t now;

		off += inart_udp_send(c->u, c->out + off, n - off);
		if (off == n)
			break;
		now = inart_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		poll(&p, 1, 1);
	}
	return 0;
}

/* st += the counters of core w (its struct inart_worker_stats). */
static void add_core_counters(struct inart_ctx_stats *st, const struct inart_worker *w)
{
	struct inart_worker_stats ws;

	inart_worker_stats(w, &ws);
	for (int i = 0; i < N_WORKER_COUNTERS; i++) {
		uint64_t a, b;

		memcpy(&a, (char *)st + worker_counters[i].pub, sizeof(a));
		memcpy(&b, (char *)&ws + worker_counters[i].core, sizeof(b));
		a += b;
		memcpy((char *)st + worker_counters[i].pub, &a, sizeof(a));
	}
}

/* Before a timed-out call drops its core: what each of its trees did
 * (inart_ctx_trees). */
static void note_trees(struct inart_ctx *c)
{
	uint64_t now = inart_now_ns();
	int k;

	c->n_timed = c->cfg.n_trees;
	memcpy(c->timed, c->cfg.trees, sizeof(c->timed));
	for (uint16_t t = 0; t < c->n_timed; t++) {
		k = inart_worker_tree_state(c->w, t, now);
		c->tree_state[t] =
		    (uint8_t)(k == INART_WORKER_TREE_SILENT	? INART_CTX_TREE_SILENT
			      : k == INART_WORKER_TREE_ANSWERED ? INART_CTX_TREE_ANSWERED
								: INART_CTX_TREE_IDLE);
	}
}

static void reset_core(struct inart_ctx *c)
{
	struct inart_worker *w = inart_worker_create(&c->cfg);

	if (w != NULL) {
		add_core_counters(&c->acc, c->w);
		inart_worker_destroy(c->w);
		c->w = w;
	}
}

int inart_ctx_stats(const struct inart_ctx *c, struct inart_ctx_stats *st)
{
	struct inart_ctx_stats all;
	const size_t head = offsetof(struct inart_ctx_stats, allreduces);
	size_t n;

	if (c == NULL || st == NULL || st->size < head)
		return -EINVAL;
	all = c->acc;
	if (c->ring != NULL)
		ring_counters(&all, c->ring);
	else
		add_core_counters(&all, c->w);
	n = st->size < sizeof(all) ? st->size : sizeof(all);
	memcpy((char *)st + head, (const char *)&all + head, n - head);
	st->size = (uint32_t)n;
	return 0;
}

int inart_ctx_step(const struct inart_ctx *c, uint32_t *step, uint32_t *job_step)
{
	if (c == NULL)
		return -EINVAL;
	if (step != NULL)
		*step = c->step;
	if (job_step != NULL)
		*job_step = c->job_step;
	return 0;
}

int inart_ctx_set_step(struct inart_ctx *c, uint32_t step)
{
	if (c == NULL || step == 0)
		return -EINVAL;
	c->step = step;
	return 0;
}

int inart_ctx_resync(struct inart_ctx *c)
{
	if (c == NULL)
		return -EINVAL;
	if (c->job_step == 0)
		return -EAGAIN;
	c->step = c->job_step;
	return 0;
}

int inart_allreduce(struct inart_ctx *c, float *buf, size_t n, int timeout_ms)
{
	struct inart_dgram in[CTX_BATCH];
	uint64_t deadline;
	uint32_t target;
	int rc;

	if (c == NULL || (buf == NULL && n > 0) || n > c->max_n)
		return -EINVAL;
	if (n == 0)
		return 0;
	deadline = inart_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
	if (c->ring != NULL)
		return ring_allreduce(c, buf, n, deadline);
	follow_plan(c);
	rc = inart_worker_begin(c->w, buf, n, c->step);
	if (rc < 0)
		return rc; /* nothing sent: the same step next time */
	while (!inart_worker_done(c->w)) {
		uint64_t now = inart_now_ns(), next;
		int k;

		/* what arrived first, then the core's timers: after a wait (or
		 * the process not being scheduled) the results in the socket must
		 * not look lost to timers that expired meanwhile */
		while ((k = inart_udp_recv(c->u, in, CTX_BATCH)) > 0) {
			now = inart_now_ns();
			for (int i = 0; i < k; i++)
				inart_worker_rx(c->w, in[i].data, in[i].len, in[i].peer_ip,
						in[i].peer_port, now);
		}
		if (k < 0) {
			reset_core(c);
			return -EIO;
		}
		if (inart_worker_stale(c->w, &target)) {
			c->job_step = target;
			reset_core(c);
			c->acc.stale++;
			return -ESTALE;
		}
		if (inart_worker_done(c->w))
			break;
		if (send_due(c, inart_now_ns(), deadline) < 0)
			goto timeout;
		now = inart_now_ns();
		if (now >= deadline)
			goto timeout;
		next = inart_worker_next_deadline(c->w);
		if (wait_socket(c, next > deadline ? deadline : next, now) < 0) {
			reset_core(c);
			return -EIO;
		}
	}
	return step_done(c, inart_worker_result(c->w, buf, n));
timeout:
	note_trees(c);
	reset_core(c);
	c->acc.timeouts++;
	return -ETIMEDOUT;
}

int inart_ctx_trees(const struct inart_ctx *c, struct inart_ctx_tree *out, int max)
{
	if (c == NULL || (out == NULL && max > 0))
		return -EINVAL;
	for (int t = 0; t < c->n_timed && t < max; t++)
		out[t] = (struct inart_ctx_tree){.ps_ip = c->timed[t].ps_ip,
						 .label = c->timed[t].label,
						 .state = c->tree_state[t]};
	return c->n_timed;
}
