/*
 * run: an emulation and the runs of plans on it (see run.h): starting and
 * stopping the daemons, the background and the janitor, installing plans,
 * the workers and their protocol, faults, controllers.  What a run measures
 * (CPU, drops, counters, the CPU-bound verdict) is in measure.c; the state
 * both share in run_impl.h.
 *
 * Worker protocol (src/cli/emu_worker.c): "ready K" -> "go K START_NS" ->
 * "done K T0 T1 RC", "check K exact|wrong N"; EOF on its input ends it
 * after a last "stats ..." line.  The emulator sends "go K" to every worker
 * of every job at once when all are ready, START 30 ms ahead so that all
 * are waiting.
 */
#include "emu/run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/bg.h"
#include "common/file.h"
#include "common/sbuf.h"
#include "common/slab.h"
#include "cp/model/formats.h"
#include "emu/scale.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlsock.h"
#include "emu/spawn.h"
#include "emu/run_impl.h"

#define READY_WAIT_MS 30000

void inart_emu_opt_default(struct inart_emu_opt *o)
{
	memset(o, 0, sizeof(*o));
	inart_emu_net_opt_default(&o->net);
	o->seed = 1;
	o->agg_limit = 1;
	o->background = 1;
	o->iter_timeout_s = 60;
}

const struct inart_emu_net *inart_emu_network(const struct inart_emu *e)
{
	return e->net;
}

void inart_emu_result_free(struct inart_emu_result *r)
{
	if (r == NULL)
		return;
	free(r->block); /* every array (result_lay_out) */
	memset(r, 0, sizeof(*r));
}

/* --- workers ------------------------------------------------------------ */

/* Read what a worker printed and act on complete lines.  Returns -1 at EOF. */
static int worker_read(struct worker *w)
{
	ssize_t n = read(w->out, w->buf + w->len, sizeof(w->buf) - 1 - w->len);
	char *l, *nl;

	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	w->len += (size_t)n;
	w->buf[w->len] = '\0';
	for (l = w->buf; (nl = strchr(l, '\n')) != NULL; l = nl + 1) {
		long k;
		unsigned long long a, b, s[5];
		int rc;
		char what[16];

		*nl = '\0';
		if (sscanf(l, "ready %ld", &k) == 1) {
			w->ready = (int)k;
		} else if (sscanf(l, "done %ld %llu %llu %d", &k, &a, &b, &rc) == 4) {
			w->done = (int)k;
			w->t0 = a;
			w->t1 = b;
			if (rc < 0) {
				w->failed = 1;
				snprintf(w->err, sizeof(w->err), "%s", strerror(-rc));
			}
		} else if (sscanf(l, "check %ld %15s %d", &k, what, &rc) == 3) {
			w->checked = (int)k;
			w->wrong += strcmp(what, "exact") != 0 ? (rc > 0 ? rc : 1) : 0;
		} else if (sscanf(l, "stats %llu %llu %llu %llu %llu", &s[0], &s[1], &s[2], &s[3],
				  &s[4]) == 5) {
			for (int i = 0; i < 5; i++)
				w->stats[i] = s[i];
		} else if (strncmp(l, "error ", 6) == 0) {
			w->failed = 1;
			snprintf(w->err, sizeof(w->err), "%s", l + 6);
		}
	}
	w->len = strlen(l);
	memmove(w->buf, l, w->len + 1);
	return 0;
}

/* Poll every worker's output for up to ms milliseconds. */
static void workers_poll(struct worker *w, int n, int ms)
{
	struct pollfd *pf = calloc((size_t)n + 1, sizeof(*pf));

	if (pf == NULL) {
		usleep((useconds_t)ms * 1000);
		return;
	}
	for (int i = 0; i < n; i++) {
		pf[i].fd = w[i].out;
		pf[i].events = POLLIN;
	}
	if (poll(pf, (nfds_t)n, ms) > 0)
		for (int i = 0; i < n; i++)
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
				if (worker_read(&w[i]) < 0) {
					if (w[i].out >= 0)
						close(w[i].out);
					w[i].out = -1;
					pf[i].fd = -1;
				}
	free(pf);
}

/* `inart ctl install` of plan_path on the network; its output in out.  Its
 * exit status, or -errno.  only NULL: every node, and a new run of every job
 * (--restart-jobs: the PSs forget the previous run's chunk state, the new
 * workers number their steps from 1); else one node's id (a restarted
 * switch: the same transaction on it alone, the jobs go on). */
static int install(struct inart_emu *e, const char *plan_path, const char *only, char *out,
		   size_t cap, struct inart_err *err)
{
	char dep[160];
	char *argv[] = {(char *)e->o.inart,
			"ctl",
			"install",
			(char *)e->o.topo_path,
			e->jobs_run,
			(char *)plan_path,
			"--deploy",
			dep,
			only ? "--only" : "--restart-jobs",
			(char *)only,
			NULL};

	snprintf(dep, sizeof(dep), "%s/deploy.json", e->net->dir);
	return inart_emu_cmd(NULL, argv, NULL, out, cap, 30000, err);
}

/* --- the controller (issue 10) ------------------------------------------- */

/* The plan as the controller's epoch plan (plan_path + "epoch": {"n": 0})
 * at out: the controller rewrites it with every new plan, the workers
 * follow it.  0 or -errno. */
static int epoch_plan(struct inart_emu *e, const char *plan_path, char *out, size_t cap,
		      struct inart_err *err)
{
	json_error_t je;
	json_t *o = json_load_file(plan_path, 0, &je);
	char *text;
	int rc;

	if (o == NULL)
		return inart_err_set(err, -EINVAL, "%s: %s", plan_path, je.text);
	json_object_set_new(o, "epoch", json_pack("{s:i}", "n", 0));
	text = json_dumps(o, JSON_INDENT(1));
	json_decref(o);
	snprintf(out, cap, "%s/plan-epoch-%d.json", e->net->dir, e->runs);
	rc = text ? inart_file_write(out, text, err) : inart_err_set(err, -ENOMEM, "out of memory");
	free(text);
	return rc;
}

/* `inart controller` on the run's files, in the emulator's namespace (the
 * control sockets are files of the run directory); its decisions in
 * controller-N.log, its messages in controller-N.err.  PID or -errno. */
static pid_t start_controller(struct inart_emu *e, const char *plan, struct inart_err *err)
{
	char dep[160], scale[32], logp[160], name[64], *argv[48], *extra = NULL, *save = NULL;
	struct inart_emu_fds fds = {-1, -1, -1, 0};
	int n = 0, fd;
	pid_t pid;

	snprintf(dep, sizeof(dep), "%s/deploy.json", e->net->dir);
	snprintf(scale, sizeof(scale), "%.9g", e->o.net.rate_scale);
	snprintf(logp, sizeof(logp), "%s/controller-%d.log", e->net->dir, e->runs);
	snprintf(name, sizeof(name), "controller-%d", e->runs);
	argv[n++] = (char *)e->o.inart;
	argv[n++] = "controller";
	argv[n++] = (char *)e->o.topo_path;
	argv[n++] = e->jobs_run;
	argv[n++] = (char *)plan;
	argv[n++] = "--deploy";
	argv[n++] = dep;
	argv[n++] = "--rate-scale";
	argv[n++] = scale;
	argv[n++] = "--log";
	argv[n++] = logp;
	if (e->o.ctl_args != NULL && (extra = strdup(e->o.ctl_args)) != NULL)
		for (char *a = strtok_r(extra, " ", &save); a && n < 46;
		     a = strtok_r(NULL, " ", &save))
			argv[n++] = a;
	argv[n] = NULL;
	fd = inart_emu_log_fd(e, name);
	fds.err = fd;
	pid = inart_emu_spawn(NULL, argv, &fds, err);
	if (fd >= 0)
		close(fd);
	free(extra);
	return pid;
}

/* After the run: the controller's installs (from its log) and CPU. */
static void controller_result(struct inart_emu *e, pid_t pid, uint64_t spawn_ns, uint64_t run_t0,
			      struct inart_emu_result *r)
{
	char logp[160], line[4096];
	int64_t cpu = inart_emu_cpu_ns(pid);
	uint64_t now = inart_emu_now_ns();
	double origin_ns = (double)spawn_ns; /* the log's t = 0 */
	FILE *f;

	if (cpu > 0 && now > spawn_ns)
		r->ctl_cpu = (double)cpu / (double)(now - spawn_ns);
	inart_emu_kill(pid, 3000);
	snprintf(logp, sizeof(logp), "%s/controller-%d.log", e->net->dir, e->runs);
	f = fopen(logp, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		json_t *o = json_loads(line, 0, NULL);
		const char *ev = json_string_value(json_object_get(o, "event"));
		double t = json_number_value(json_object_get(o, "t"));

		if (ev != NULL && strcmp(ev, "start") == 0) {
			/* the log's t = 0 on CLOCK_MONOTONIC, the clock of
			 * inart_emu_now_ns(): better than the spawn time */
			double c = json_number_value(json_object_get(o, "clock_s"));

			if (c > 0)
				origin_ns = c * 1e9;
		} else if (ev != NULL && strcmp(ev, "install") == 0 &&
			   json_is_true(json_object_get(o, "ok"))) {
			r->ctl_installs++;
			if (r->ctl_first_install_s < 0 && run_t0 > 0)
				r->ctl_first_install_s =
				    (origin_ns + t * 1e9 - (double)run_t0) / 1e9;
		}
		json_decref(o);
	}
	if (f != NULL)
		fclose(f);
}

/* --- faults --------------------------------------------------------------- */

static void link_fault(struct inart_emu *e, const struct inart_emu_fault *f, int up, double t_s)
{
	const struct inart_topo *t = e->t;

	inart_emu_progress(e, "fault: link %s-%s %s at %.2f s", t->nodes[t->arcs[f->arc].from].id,
			   t->nodes[t->arcs[f->arc].to].id, up ? "up again" : "down", t_s);
	inart_emu_net_link_set(e->net, f->arc, up, NULL);
}

static void fault_step(struct inart_emu *e, double t_s, const char *plan_path, int finish)
{
	for (int i = 0; i < e->o.n_faults; i++) {
		struct inart_emu_fault *f = &e->o.faults[i];
		const struct inart_topo *t = e->t;
		struct inart_err err = {{0}};

		if (!f->done && !finish && t_s >= f->at_s) {
			f->done = 1;
			if (f->kind == INART_EMU_FAULT_LINK) {
				link_fault(e, f, 0, t_s);
			} else {
				inart_emu_progress(
				    e, "fault: switchd of %s killed (SIGKILL) at %.2f s",
				    t->nodes[f->node].id, t_s);
				if (e->pid[f->node] > 0) {
					kill(e->pid[f->node], SIGKILL);
					waitpid(e->pid[f->node], NULL, 0);
					e->pid[f->node] = 0;
				}
			}
		}
		if (f->done && !f->undone && (finish || t_s >= f->at_s + f->for_s)) {
			f->undone = 1;
			if (f->kind == INART_EMU_FAULT_LINK) {
				link_fault(e, f, 1, t_s);
			} else {
				char out[1024];
				int v = f->node, rc;

				unlink(e->ctl[v]); /* the killed daemon's: wait for the new one */
				e->pid[v] = inart_emu_start_daemon(e, v, 0, &err);
				if (e->pid[v] < 0)
					e->pid[v] = 0;
				rc = e->pid[v] > 0 ? inart_emu_wait_daemons(e, &v, 1, &err) : -1;
				if (rc == 0)
					rc = install(e, plan_path, t->nodes[v].id, out, sizeof(out),
						     &err);
				inart_emu_progress(
				    e, "fault: switchd of %s restarted at %.2f s, tables %s",
				    t->nodes[v].id, t_s,
				    rc == 0 ? "installed again" : "NOT installed");
			}
		}
	}
}

/* --- measurements ------------------------------------------------------------ */

/* The jobs file of a run: the jobs with the gradient sizes the workers
 * all-reduce (values[j] floats), in the run directory.  The install sizes
 * the PSs' chunk records from it, and a worker refuses more values than its
 * job's gradient (-EINVAL): so install and workers read this one, not the
 * unscaled file.  0 or -errno with err. */
static int write_jobs(struct inart_emu *e, const long *values, struct inart_err *err)
{
	struct inart_jobs *sj = inart_emu_scaled_jobs(e->js, values);
	char *s = sj ? inart_jobs_dump(sj, e->t) : NULL;
	int rc;

	snprintf(e->jobs_run, sizeof(e->jobs_run), "%s/jobs-run.json", e->net->dir);
	rc = s == NULL ? inart_err_set(err, -ENOMEM, "out of memory")
		       : inart_file_write(e->jobs_run, s, err);
	free(s);
	inart_jobs_destroy(sj);
	return rc;
}

static int spawn_workers(struct inart_emu *e, const char *plan_path, const long *values, int iters,
			 struct worker *w, int *nw, struct inart_err *err)
{
	const struct inart_jobs *js = e->js;
	char dep[160];

	snprintf(dep, sizeof(dep), "%s/deploy.json", e->net->dir);
	*nw = 0;
	for (int j = 0; j < js->n_jobs; j++)
		for (int r = 0; r < js->jobs[j].n_workers; r++) {
			struct worker *x = &w[(*nw)++];
			int in[2], out[2], fd;
			char rank[16], nval[32], nwk[16], nit[16], tmo[32], name[96];
			char *argv[] = {(char *)e->o.worker,
					(char *)e->o.topo_path,
					e->jobs_run,
					(char *)plan_path,
					dep,
					js->jobs[j].id,
					rank,
					nval,
					nwk,
					nit,
					tmo,
					NULL};
			struct inart_emu_fds fds = {-1, -1, -1, 0};

			x->job = j;
			x->rank = r;
			x->in = x->out = -1;
			x->ready = x->done = x->checked = -1;
			snprintf(rank, sizeof(rank), "%d", r);
			snprintf(nval, sizeof(nval), "%ld", values[j]);
			snprintf(nwk, sizeof(nwk), "%d", js->jobs[j].n_workers);
			snprintf(nit, sizeof(nit), "%d", iters);
			snprintf(tmo, sizeof(tmo), "%.0f", e->o.iter_timeout_s * 1000);
			if (pipe2(in, O_CLOEXEC) < 0)
				return -errno;
			if (pipe2(out, O_CLOEXEC) < 0) {
				close(in[0]);
				close(in[1]);
				return -errno;
			}
			snprintf(name, sizeof(name), "worker-%s-%d", js->jobs[j].id, r);
			fd = inart_emu_log_fd(e, name);
			fds.in = in[0];
			fds.out = out[1];
			fds.err = fd;
			x->pid =
			    inart_emu_spawn(e->net->ns[js->jobs[j].workers[r]], argv, &fds, err);
			close(in[0]);
			close(out[1]);
			if (fd >= 0)
				close(fd);
			x->in = in[1];
			x->out = out[0];
			fcntl(x->out, F_SETFL, O_NONBLOCK);
			if (x->pid < 0) {
				x->pid = 0;
				return -EIO;
			}
		}
	return 0;
}

static void end_workers(struct worker *w, int nw)
{
	uint64_t end = inart_emu_now_ns() + 5000000000ull;

	for (int i = 0; i < nw; i++)
		if (w[i].in >= 0) {
			close(w[i].in);
			w[i].in = -1;
		}
	/* their last lines (stats), then their exit */
	for (int alive = 1; alive && inart_emu_now_ns() < end;) {
		alive = 0;
		workers_poll(w, nw, 20);
		for (int i = 0; i < nw; i++)
			if (w[i].pid > 0 && !inart_emu_exited(w[i].pid, NULL))
				alive = 1;
			else if (w[i].pid > 0)
				w[i].pid = -w[i].pid; /* reaped; keep it non-zero */
	}
	for (int i = 0; i < nw; i++) {
		if (w[i].pid > 0)
			inart_emu_kill(w[i].pid, 500);
		w[i].pid = 0;
		if (w[i].out >= 0)
			close(w[i].out);
		w[i].out = -1;
	}
}

/* Wait until every worker reached state k of field (ready/done+checked), or
 * a worker failed, or the deadline.  1 reached, 0 failure (err set). */
static int wait_all(struct inart_emu *e, struct worker *w, int nw, int k, int want_done,
		    uint64_t deadline, uint64_t run_t0, const char *plan_path,
		    struct inart_err *err)
{
	for (;;) {
		int all = 1;

		for (int i = 0; i < nw; i++) {
			if (w[i].failed) {
				inart_err_set(err, 0, "job %s rank %d: %s",
					      e->js->jobs[w[i].job].id, w[i].rank, w[i].err);
				return 0;
			}
			if (w[i].out < 0 && (want_done ? w[i].checked : w[i].ready) < k) {
				inart_err_set(err, 0, "job %s rank %d: the worker ended early",
					      e->js->jobs[w[i].job].id, w[i].rank);
				return 0;
			}
			if ((want_done ? w[i].checked : w[i].ready) < k)
				all = 0;
		}
		if (all)
			return 1;
		if (inart_emu_now_ns() > deadline) {
			struct inart_sbuf b = {0};
			char *s;
			int n = 0;

			for (int i = 0; i < nw; i++)
				if ((want_done ? w[i].checked : w[i].ready) < k && n++ < 6)
					inart_sbuf_printf(&b, "%s%s/%d", n > 1 ? ", " : "",
							  e->js->jobs[w[i].job].id, w[i].rank);
			s = inart_sbuf_finish(&b);
			inart_err_set(
			    err, 0,
			    "iteration %d %s within %.0f s (stalled; workers %s): the run "
			    "was stopped",
			    k, want_done ? "did not finish" : "did not start", e->o.iter_timeout_s,
			    s ? s : "?");
			free(s);
			return 0;
		}
		if (run_t0 > 0)
			fault_step(e, ((double)inart_emu_now_ns() - (double)run_t0) / 1e9,
				   plan_path, 0);
		workers_poll(w, nw, 10);
	}
}

/* The result's arrays, one block (the +1s: no zero-size array). */
static void result_lay_out(void *obj, struct inart_slab *s)
{
	struct inart_emu_result *r = obj;
	size_t iters = (size_t)r->iters, arcs = (size_t)r->n_arcs + 1;

	r->iter_s = inart_slab_take(s, iters + 1, sizeof(*r->iter_s));
	r->iter_t0_s = inart_slab_take(s, iters + 1, sizeof(*r->iter_t0_s));
	r->job_iter_s = inart_slab_take(s, iters * (size_t)r->n_jobs + 1, sizeof(*r->job_iter_s));
	r->arc_bytes = inart_slab_take(s, arcs, sizeof(*r->arc_bytes));
	r->arc_known = inart_slab_take(s, arcs, sizeof(*r->arc_known));
	r->arc_qdrops = inart_slab_take(s, arcs, sizeof(*r->arc_qdrops));
}

static int result_alloc(struct inart_emu_result *r, int iters, int n_jobs, int n_arcs)
{
	memset(r, 0, sizeof(*r));
	r->iters = iters;
	r->n_jobs = n_jobs;
	r->n_arcs = n_arcs;
	r->ctl_first_install_s = -1;
	r->block = inart_slab_block(r, result_lay_out);
	return r->block != NULL ? 0 : -ENOMEM;
}

/* Iteration k: wait for every worker to be ready (k > 0), start them all at
 * once, wait for their results; times into r.  1 done, 0 failed (r->why). */
static int run_iteration(struct inart_emu *e, struct worker *w, int nw, int k, int iters,
			 const char *plan_path, struct run_meas *m, struct inart_emu_result *r)
{
	const struct inart_jobs *js = e->js;
	uint64_t start = inart_emu_now_ns() + GO_AHEAD_NS, last = 0, first = UINT64_MAX;
	char go[64];
	int n = snprintf(go, sizeof(go), "go %d %llu\n", k, (unsigned long long)start);

	if (k > 0 && !wait_all(e, w, nw, k, 0, inart_emu_now_ns() + READY_WAIT_MS * 1000000ull,
			       m->run_t0, plan_path, &r->why))
		return 0;
	if (m->run_t0 == 0) {
		m->run_t0 = start;
		if (e->bg_pid > 0) /* the background's schedule starts now */
			kill(e->bg_pid, SIGUSR1);
	}
	r->iter_t0_s[k] = (double)(start - m->run_t0) / 1e9;
	inart_emu_meas_iter(e, w, nw, m, 0);
	for (int i = 0; i < nw; i++)
		if (write(w[i].in, go, (size_t)n) != n) {
			inart_err_set(&r->why, -EIO, "job %s rank %d: cannot start it",
				      js->jobs[w[i].job].id, w[i].rank);
			return 0;
		}
	if (!wait_all(e, w, nw, k, 1, start + (uint64_t)(e->o.iter_timeout_s * 1e9) + 2000000000ull,
		      m->run_t0, plan_path, &r->why))
		return 0;
	inart_emu_meas_iter(e, w, nw, m, 1);
	for (int j = 0; j < js->n_jobs; j++) {
		uint64_t a = UINT64_MAX, b = 0;

		for (int i = 0; i < nw; i++)
			if (w[i].job == j) {
				a = w[i].t0 < a ? w[i].t0 : a;
				b = w[i].t1 > b ? w[i].t1 : b;
			}
		r->job_iter_s[j * iters + k] = (double)(b - a) / 1e9;
		last = b > last ? b : last;
	}
	for (int i = 0; i < nw; i++)
		first = w[i].t0 < first ? w[i].t0 : first;
	r->iter_s[k] = (double)(last - first) / 1e9;
	m->run_t1 = last;
	inart_emu_progress(e, "  iteration %d: %.3f s%s", k + 1, r->iter_s[k],
			   w[0].wrong ? " (WRONG results)" : "");
	return 1;
}

/* Exactness and the workers' recovery counters into r. */
static void collect_workers(struct inart_emu *e, const struct worker *w, int nw,
			    struct inart_emu_result *r)
{
	r->exact = r->finished;
	for (int i = 0; i < nw; i++) {
		if (w[i].wrong > 0 && r->exact) {
			r->exact = 0;
			inart_err_set(&r->why, -EIO, "job %s rank %d: %d values WRONG",
				      e->js->jobs[w[i].job].id, w[i].rank, w[i].wrong);
		}
		r->retransmitted += w[i].stats[1];
		r->probes += w[i].stats[2];
		r->nacks += w[i].stats[3];
		r->timeouts += w[i].stats[4];
	}
}

/* Install the plan (the controller's plan file when a controller runs, then
 * start it), and spawn the workers.  0 or negative errno (err set). */
static int run_setup(struct inart_emu *e, const char **plan_path, const long *values, int iters,
		     struct worker *w, int *nw, char *ctl_plan, size_t ctl_cap, pid_t *ctl_pid,
		     uint64_t *ctl_spawn, struct inart_err *err)
{
	char out[2048] = "";
	int rc;

	if (e->o.controller) { /* the workers follow the controller's plan file */
		if ((rc = epoch_plan(e, *plan_path, ctl_plan, ctl_cap, err)) < 0)
			return rc;
		*plan_path = ctl_plan;
	}
	rc = write_jobs(e, values, err);
	if (rc == 0)
		rc = install(e, *plan_path, NULL, out, sizeof(out), err);
	if (rc != 0) {
		out[strcspn(out, "\n")] = '\0';
		return rc > 0 ? inart_err_set(err, -EIO, "inart ctl install: %s", out) : rc;
	}
	if (e->o.controller) {
		*ctl_spawn = inart_emu_now_ns();
		*ctl_pid = start_controller(e, *plan_path, err);
		if (*ctl_pid < 0) {
			rc = *ctl_pid;
			*ctl_pid = 0;
			return rc;
		}
	}
	return spawn_workers(e, *plan_path, values, iters, w, nw, err);
}

int inart_emu_run_plan(struct inart_emu *e, const char *plan_path, const long *values, int iters,
		       struct inart_emu_result *r, struct inart_err *err)
{
	const struct inart_jobs *js = e->js;
	int nw_max = 0, nw = 0, rc, na = inart_topo_n_arcs(e->t);
	struct worker *w = NULL;
	struct run_meas m = {0};
	uint64_t ctl_spawn = 0;
	char ctl_plan[256];
	pid_t ctl_pid = 0;

	for (int i = 0; i < e->o.n_faults; i++)
		e->o.faults[i].done = e->o.faults[i].undone = 0;
	if ((rc = result_alloc(r, iters, js->n_jobs, na)) < 0)
		return rc;
	for (int j = 0; j < js->n_jobs; j++)
		nw_max += js->jobs[j].n_workers;
	w = calloc((size_t)nw_max + 1, sizeof(*w));
	m.cpu0 = calloc((size_t)e->t->n_nodes + 1, sizeof(*m.cpu0));
	m.cpu1 = calloc((size_t)e->t->n_nodes + 1, sizeof(*m.cpu1));
	m.qd0 = calloc((size_t)na + 1, sizeof(*m.qd0));
	if (w == NULL || m.cpu0 == NULL || m.cpu1 == NULL || m.qd0 == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	inart_emu_wait_quiet(e);
	e->runs++;
	rc = run_setup(e, &plan_path, values, iters, w, &nw, ctl_plan, sizeof(ctl_plan), &ctl_pid,
		       &ctl_spawn, err);
	if (rc < 0)
		goto out;
	if (wait_all(e, w, nw, 0, 0, inart_emu_now_ns() + READY_WAIT_MS * 1000000ull, 0, plan_path,
		     &r->why)) {
		inart_emu_meas_start(e, w, nw, &m);
		r->finished = 1;
		for (int k = 0; k < iters && r->finished; k++)
			r->finished = run_iteration(e, w, nw, k, iters, plan_path, &m, r);
	}
	if (m.run_t0 > 0)
		inart_emu_meas_end(e, w, nw, &m, r);
	fault_step(e, 1e9, plan_path, 1);
	if (m.run_t0 > 0 && e->bg_pid > 0) /* the schedule ends with the run */
		kill(e->bg_pid, SIGUSR2);
	end_workers(w, nw);
	if (ctl_pid > 0) {
		controller_result(e, ctl_pid, ctl_spawn, m.run_t0, r);
		ctl_pid = 0;
	}
	collect_workers(e, w, nw, r);
	rc = 0;
out:
	if (ctl_pid > 0)
		inart_emu_kill(ctl_pid, 3000);
	if (w != NULL)
		end_workers(w, nw);
	free(w);
	free(m.cpu0);
	free(m.cpu1);
	free(m.qd0);
	if (rc < 0)
		inart_emu_result_free(r);
	return rc;
}
