/*
 * run: an emulation and the runs of plans on it (see run.h).
 *
 * Worker protocol (src/cli/emu_worker.c): "ready K" -> "go K START_NS" ->
 * "done K T0 T1 RC", "check K exact|wrong N"; EOF on its input ends it
 * after a last "stats ..." line.  The emulator sends "go K" to every worker
 * of every job at once when all are ready, START 30 ms ahead so that all
 * are waiting.
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bg.h"
#include "common/file.h"
#include "common/sbuf.h"
#include "cp/formats.h"
#include "scale.h"
#include "bridge/ctlmsg.h"
#include "io/ctlsock.h"
#include "spawn.h"

#define DAEMON_WAIT_MS 10000
#define READY_WAIT_MS 30000
#define GO_AHEAD_NS 30000000ull
#define CTL_MS 10000
#define QUIET_WAIT_MS 30000 /* wait_quiet: at most */
#define QUIET_LOOK_MS 50

struct inart_emu {
	const struct inart_topo *t;
	const struct inart_jobs *js;
	struct inart_emu_opt o;
	struct inart_emu_net *net;
	pid_t janitor;
	int janitor_fd;
	pid_t *pid; /* per node: its daemon (switchd or ps), 0 if none */
	unsigned char *is_ps;
	pid_t bg_pid;
	int bg_fd; /* read end of the background report */
	struct inart_emu_bg_flow *flows;
	int n_flows;
	char (*ctl)[128];   /* per node: control socket path */
	char jobs_run[128]; /* the jobs file of the current run (sizes as run) */
	int runs;	    /* plans run so far (names the controller's logs) */
};

void inart_emu_opt_default(struct inart_emu_opt *o)
{
	memset(o, 0, sizeof(*o));
	inart_emu_net_opt_default(&o->net);
	o->seed = 1;
	o->agg_limit = 1;
	o->background = 1;
	o->iter_timeout_s = 60;
}

static void progress(const struct inart_emu *e, const char *fmt, ...) INART_PRINTF(2, 3);
static void progress(const struct inart_emu *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (e->o.progress == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->o.progress(e->o.progress_ctx, msg);
}

const struct inart_emu_net *inart_emu_network(const struct inart_emu *e)
{
	return e->net;
}

void inart_emu_result_free(struct inart_emu_result *r)
{
	if (r == NULL)
		return;
	free(r->iter_s);
	free(r->iter_t0_s);
	free(r->job_iter_s);
	free(r->arc_bytes);
	free(r->arc_known);
	free(r->arc_qdrops);
	memset(r, 0, sizeof(*r));
}

/* --- janitor ------------------------------------------------------------ */

/* A process that waits for the emulator to end: if it ends without saying
 * "done" (a crash, SIGKILL), it removes the run's leftovers. */
static int janitor_start(struct inart_emu *e, struct inart_err *err)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return inart_err_set(err, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return inart_err_set(err, -errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char buf[8] = "";
		ssize_t n;

		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		close(p[1]);
		do
			n = read(p[0], buf, sizeof(buf) - 1);
		while (n < 0 && errno == EINTR);
		if (n > 0 && strncmp(buf, "done", 4) == 0)
			_exit(0);
		inart_emu_down_prefix(e->net->prefix, 1, NULL, NULL);
		_exit(0);
	}
	close(p[0]);
	e->janitor = pid;
	e->janitor_fd = p[1];
	return 0;
}

static void janitor_dismiss(struct inart_emu *e)
{
	if (e->janitor <= 0)
		return;
	if (write(e->janitor_fd, "done", 4) < 0) {
		/* it is gone already */
	}
	close(e->janitor_fd);
	waitpid(e->janitor, NULL, 0);
	e->janitor = 0;
}

/* --- daemons -------------------------------------------------------------- */

static int log_fd(const struct inart_emu *e, const char *name)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s.log", e->net->dir, name);
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

/* The last line of a daemon's log, for messages. */
static void log_tail(const struct inart_emu *e, const char *name, char *out, size_t cap)
{
	char path[400], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s.log", e->net->dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		snprintf(out, cap, "%s", line);
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* argv[a], argv[a + 1] = key, value; the next index. */
static int arg2(char **argv, int a, const char *key, const char *value)
{
	argv[a] = (char *)key;
	argv[a + 1] = (char *)value;
	return a + 2;
}

static pid_t start_daemon(struct inart_emu *e, int v, int detach, struct inart_err *err)
{
	const struct inart_topo *t = e->t;
	const char *id = t->nodes[v].id;
	struct inart_sbuf ports = {0}, txp = {0};
	char *argv[32], *pl = NULL, *tl = NULL, agg[32], rx[32], seed[32], ipb[16];
	struct inart_emu_fds fds = {-1, -1, -1, detach};
	int a = 0, fd;
	pid_t pid;

	argv[a++] = (char *)e->o.inart;
	argv[a++] = t->nodes[v].kind == INART_NODE_SWITCH ? "switchd" : "ps";
	a = arg2(argv, a, "--name", id);
	if (t->nodes[v].kind == INART_NODE_SWITCH) {
		for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
			int arc = t->arc_out[k];

			inart_sbuf_printf(&ports, "%s%s", k > t->out_off[v] ? "," : "",
					  e->net->ifname[arc]);
			if (t->nodes[t->arcs[arc].to].kind == INART_NODE_HOST)
				inart_sbuf_printf(&txp, "%s%d", txp.len ? "," : "",
						  k - t->out_off[v]);
		}
		pl = inart_sbuf_finish(&ports);
		tl = inart_sbuf_finish(&txp);
		a = arg2(argv, a, "--port", pl);
		a = arg2(argv, a, "--ring-frames", "1024");
		if (e->o.agg_limit && t->nodes[v].ina) {
			snprintf(agg, sizeof(agg), "%.6g",
				 t->nodes[v].agg_gbps * 1e3 * e->o.net.rate_scale);
			a = arg2(argv, a, "--agg-mbps", agg);
		}
		if (e->o.loss > 0) {
			snprintf(rx, sizeof(rx), "%.9g", e->o.loss);
			snprintf(seed, sizeof(seed), "%llu",
				 (unsigned long long)(e->o.seed * 1000003ull + (uint64_t)v));
			a = arg2(argv, a, "--rx-loss", rx);
			a = arg2(argv, a, "--loss-seed", seed);
			if (tl != NULL && tl[0] != '\0') {
				a = arg2(argv, a, "--tx-loss", rx);
				a = arg2(argv, a, "--tx-loss-ports", tl);
			}
		}
	} else {
		inart_ctl_fmt_ip(e->net->d->ip[v], ipb);
		a = arg2(argv, a, "--bind", ipb);
	}
	a = arg2(argv, a, "--ctl", e->ctl[v]);
	a = arg2(argv, a, "--log-level", "warn");
	argv[a] = NULL;
	fd = log_fd(e, id);
	fds.err = fd;
	pid = inart_emu_spawn(e->net->ns[v], argv, &fds, err);
	if (fd >= 0)
		close(fd);
	free(pl);
	free(tl);
	return pid;
}

/* Wait for the control sockets of the daemons in want[] (node numbers). */
static int wait_daemons(struct inart_emu *e, const int *want, int n, struct inart_err *err)
{
	uint64_t end = inart_emu_now_ns() + DAEMON_WAIT_MS * 1000000ull;

	for (int i = 0; i < n; i++) {
		int v = want[i];
		struct stat st;

		while (stat(e->ctl[v], &st) < 0) {
			int status;
			char tail[600];

			if (inart_emu_exited(e->pid[v], &status)) {
				e->pid[v] = 0;
				log_tail(e, e->t->nodes[v].id, tail, sizeof(tail));
				return inart_err_set(err, -EIO, "the daemon of '%s' exited: %s",
						     e->t->nodes[v].id, tail);
			}
			if (inart_emu_now_ns() > end)
				return inart_err_set(err, -ETIMEDOUT,
						     "the daemon of '%s' did not open %s within "
						     "%d s",
						     e->t->nodes[v].id, e->ctl[v],
						     DAEMON_WAIT_MS / 1000);
			usleep(10000);
		}
	}
	return 0;
}

static int start_daemons(struct inart_emu *e, int detach, struct inart_err *err)
{
	const struct inart_topo *t = e->t;
	int *want = calloc((size_t)t->n_nodes + 1, sizeof(*want)), n = 0, rc = 0;

	if (want == NULL)
		return -ENOMEM;
	for (int v = 0; v < t->n_nodes && rc == 0; v++) {
		if (t->nodes[v].kind != INART_NODE_SWITCH && !e->is_ps[v])
			continue;
		e->pid[v] = start_daemon(e, v, detach, err);
		if (e->pid[v] < 0) {
			rc = e->pid[v];
			e->pid[v] = 0;
		}
		want[n++] = v;
	}
	if (rc == 0)
		rc = wait_daemons(e, want, n, err);
	free(want);
	return rc;
}

static int start_background(struct inart_emu *e, struct inart_err *err)
{
	const struct inart_topo *t = e->t;
	int na = inart_topo_n_arcs(t), p[2];

	e->flows = calloc((size_t)na + 1, sizeof(*e->flows));
	if (e->flows == NULL)
		return -ENOMEM;
	for (int a = 0; a < na; a++) {
		const struct inart_arc *arc = &t->arcs[a];
		struct inart_emu_bg_flow *f = &e->flows[e->n_flows];
		int u = arc->from, w = arc->to;

		int n_steps = 0;

		for (int i = 0; i < e->o.n_bg_changes; i++)
			n_steps += e->o.bg_changes[i].arc == a;
		if (!(arc->bg_gbps > 0) && n_steps == 0)
			continue;
		if (n_steps > 0) { /* its schedule, in time order */
			struct inart_emu_bg_step *st = calloc((size_t)n_steps, sizeof(*st));
			int m = 0;

			if (st == NULL)
				return -ENOMEM;
			for (int i = 0; i < e->o.n_bg_changes; i++)
				if (e->o.bg_changes[i].arc == a) {
					int k = m++;

					while (k > 0 && st[k - 1].at_s > e->o.bg_changes[i].at_s) {
						st[k] = st[k - 1];
						k--;
					}
					st[k].at_s = e->o.bg_changes[i].at_s;
					st[k].bps =
					    e->o.bg_changes[i].gbps * 1e9 * e->o.net.rate_scale;
				}
			f->steps = st;
			f->n_steps = n_steps;
		}
		f->arc = a;
		f->netns = e->net->ns[u];
		f->ifname = e->net->ifname[a];
		memcpy(f->src_mac,
		       t->nodes[u].kind == INART_NODE_HOST ? e->net->d->mac[u]
							   : e->net->d->port_mac[a],
		       6);
		memcpy(f->dst_mac,
		       t->nodes[w].kind == INART_NODE_HOST ? e->net->d->mac[w]
							   : e->net->d->port_mac[a ^ 1],
		       6);
		f->bps = arc->bg_gbps * 1e9 * e->o.net.rate_scale;
		e->n_flows++;
	}
	if (e->n_flows == 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	e->bg_pid = inart_emu_bg_start(e->flows, e->n_flows, p[1], err);
	close(p[1]);
	if (e->bg_pid < 0) {
		close(p[0]);
		return e->bg_pid;
	}
	e->bg_fd = p[0];
	progress(e, "background traffic on %d link directions", e->n_flows);
	return 0;
}

/* Dismiss the janitor and free e (processes and network as they are). */
static void emu_free(struct inart_emu *e)
{
	janitor_dismiss(e);
	inart_emu_net_destroy(e->net);
	for (int i = 0; e->flows != NULL && i < e->n_flows; i++)
		free((void *)e->flows[i].steps);
	free(e->flows);
	free(e->pid);
	free(e->is_ps);
	free(e->ctl);
	free(e);
}

int inart_emu_start(const struct inart_topo *t, const struct inart_jobs *js,
		    const struct inart_emu_opt *o, struct inart_emu **out, struct inart_err *err)
{
	struct inart_emu *e = calloc(1, sizeof(*e));
	struct inart_emu_net_opt no = o->net;
	uint64_t t0 = inart_emu_now_ns();
	int rc;

	*out = NULL;
	if (e == NULL)
		return -ENOMEM;
	e->t = t;
	e->js = js;
	e->o = *o;
	e->bg_fd = -1;
	e->janitor_fd = -1;
	e->pid = calloc((size_t)t->n_nodes + 1, sizeof(*e->pid));
	e->is_ps = calloc((size_t)t->n_nodes + 1, 1);
	e->ctl = calloc((size_t)t->n_nodes + 1, sizeof(*e->ctl));
	if (e->pid == NULL || e->is_ps == NULL || e->ctl == NULL) {
		emu_free(e);
		return -ENOMEM;
	}
	for (int j = 0; j < js->n_jobs; j++)
		for (int k = 0; k < js->jobs[j].n_ps; k++)
			e->is_ps[js->jobs[j].ps[k]] = 1;
	no.is_ps = e->is_ps;
	if (inart_emu_leftovers(no.prefix, NULL) > 0) {
		rc = inart_err_set(
		    err, -EEXIST,
		    "leftovers of an earlier run with prefix '%s' exist (namespaces "
		    "%s%s-*, or %s/%s): remove them with 'inart emu down --prefix %s' "
		    "or choose another --prefix",
		    no.prefix ? no.prefix : "", INART_EMU_NS_PREFIX, no.prefix ? no.prefix : "",
		    INART_EMU_RUN_DIR, no.prefix ? no.prefix : "", no.prefix ? no.prefix : "");
		goto fail_early;
	}
	rc = inart_emu_net_create(t, &no, &e->net, err);
	if (rc < 0)
		goto fail_early;
	for (int v = 0; v < t->n_nodes; v++)
		snprintf(e->ctl[v], sizeof(e->ctl[v]), "%s/%s.sock", e->net->dir,
			 strrchr(e->net->ns[v], '-') + 1);
	if ((rc = janitor_start(e, err)) < 0)
		goto fail_early;
	progress(e, "building %d namespaces, %d veth pairs (prefix %s)", t->n_nodes, t->n_links,
		 e->net->prefix);
	if ((rc = inart_emu_net_up(e->net, err)) < 0)
		goto fail;
	progress(e, "network up in %.2f s; starting switchd and ps daemons",
		 (double)(inart_emu_now_ns() - t0) / 1e9);
	if ((rc = start_daemons(e, o->detach, err)) < 0)
		goto fail;
	if (o->background && !o->detach && (rc = start_background(e, err)) < 0)
		goto fail;
	progress(e, "emulation ready in %.2f s", (double)(inart_emu_now_ns() - t0) / 1e9);
	*out = e;
	return 0;
fail:
	inart_emu_stop(e);
	return rc;
fail_early:
	emu_free(e);
	return rc;
}

static void stop_background(struct inart_emu *e, double *bg_bytes)
{
	char buf[8192];
	ssize_t n, got = 0;

	if (e->bg_pid <= 0)
		return;
	inart_emu_kill(e->bg_pid, 2000);
	e->bg_pid = 0;
	while ((n = read(e->bg_fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got > 0 ? got : 0] = '\0';
	for (char *l = buf; bg_bytes != NULL && *l;) {
		int arc;
		unsigned long long fr, by;

		if (sscanf(l, "%d %llu %llu", &arc, &fr, &by) == 3 && arc >= 0 &&
		    arc < inart_topo_n_arcs(e->t))
			bg_bytes[arc] = (double)by;
		l += strcspn(l, "\n");
		if (*l)
			l++;
	}
	close(e->bg_fd);
	e->bg_fd = -1;
}

void inart_emu_set_controller(struct inart_emu *e, int on)
{
	e->o.controller = on;
}

void inart_emu_stop(struct inart_emu *e)
{
	if (e == NULL)
		return;
	stop_background(e, NULL);
	for (int v = 0; v < e->t->n_nodes; v++)
		if (e->pid[v] > 0)
			inart_emu_kill(e->pid[v], 2000);
	if (e->o.keep_dir != NULL && e->net != NULL) {
		char src[128], *argv[] = {"cp", "-r", src, (char *)e->o.keep_dir, NULL};

		snprintf(src, sizeof(src), "%s/.", e->net->dir);
		mkdir(e->o.keep_dir, 0755);
		inart_emu_cmd(NULL, argv, NULL, NULL, 0, 30000, NULL);
	}
	if (e->net != NULL)
		inart_emu_net_down(e->net);
	emu_free(e);
}

void inart_emu_detach(struct inart_emu *e)
{
	if (e == NULL)
		return;
	stop_background(e, NULL);
	emu_free(e);
}

/* --- control sockets ------------------------------------------------------- */

static json_t *ctl_req(const char *path, const char *body, struct inart_err *err)
{
	char *rep = NULL;
	size_t rlen;
	json_t *r = NULL;

	if (inart_ctl_call(path, body, strlen(body), &rep, &rlen, CTL_MS, err) == 0)
		r = json_loadb(rep, rlen, 0, NULL);
	free(rep);
	if (r != NULL && !json_is_true(json_object_get(r, "ok"))) {
		json_decref(r);
		r = NULL;
	}
	return r;
}

static uint64_t jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

/* --- workers ------------------------------------------------------------ */

struct worker {
	pid_t pid;
	int in, out, job, rank;
	char buf[1024];
	size_t len;
	int ready, done, checked, failed; /* last iteration of each, -1 none */
	uint64_t t0, t1;
	int wrong;
	uint64_t stats[5];
	char err[256];
};

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
	fd = log_fd(e, name);
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
	FILE *f;

	if (cpu > 0 && now > spawn_ns)
		r->ctl_cpu = (double)cpu / (double)(now - spawn_ns);
	inart_emu_kill(pid, 3000);
	snprintf(logp, sizeof(logp), "%s/controller-%d.log", e->net->dir, e->runs);
	f = fopen(logp, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		json_t *o;
		double t;

		if (strstr(line, "\"event\":\"install\"") == NULL ||
		    strstr(line, "\"ok\":true") == NULL || (o = json_loads(line, 0, NULL)) == NULL)
			continue;
		t = json_number_value(json_object_get(o, "t"));
		json_decref(o);
		r->ctl_installs++;
		if (r->ctl_first_install_s < 0 && run_t0 > 0)
			r->ctl_first_install_s =
			    ((double)spawn_ns + t * 1e9 - (double)run_t0) / 1e9;
	}
	if (f != NULL)
		fclose(f);
}

/* --- faults --------------------------------------------------------------- */

static void link_fault(struct inart_emu *e, const struct inart_emu_fault *f, int up, double t_s)
{
	const struct inart_topo *t = e->t;

	progress(e, "fault: link %s-%s %s at %.2f s", t->nodes[t->arcs[f->arc].from].id,
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
				progress(e, "fault: switchd of %s killed (SIGKILL) at %.2f s",
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
				e->pid[v] = start_daemon(e, v, 0, &err);
				if (e->pid[v] < 0)
					e->pid[v] = 0;
				rc = e->pid[v] > 0 ? wait_daemons(e, &v, 1, &err) : -1;
				if (rc == 0)
					rc = install(e, plan_path, t->nodes[v].id, out, sizeof(out),
						     &err);
				progress(e, "fault: switchd of %s restarted at %.2f s, tables %s",
					 t->nodes[v].id, t_s,
					 rc == 0 ? "installed again" : "NOT installed");
			}
		}
	}
}

/* --- measurements ------------------------------------------------------------ */

/* Busy and total jiffies of the machine (/proc/stat, first line). */
static void cpu_stat(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4];
	}
	fclose(f);
}

/* The queueing disciplines of node v with their counters (`tc -s -j qdisc
 * show` in its namespace): a JSON array (new reference), NULL if unread. */
static json_t *qdiscs(struct inart_emu *e, int v)
{
	char *argv[] = {"tc", "-n", e->net->ns[v], "-s", "-j", "qdisc", "show", NULL};
	static char out[65536];

	if (inart_emu_cmd(NULL, argv, NULL, out, sizeof(out), 10000, NULL) != 0)
		return NULL;
	return json_loads(out, 0, NULL);
}

/* Drops counted by every queueing discipline of the network; per arc into
 * per_arc (may be NULL). */
static uint64_t qdisc_drops(struct inart_emu *e, uint64_t *per_arc)
{
	const struct inart_topo *t = e->t;
	uint64_t sum = 0;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *r = qdiscs(e, v), *q;
		size_t i;

		json_array_foreach(r, i, q)
		{
			const char *dev = json_string_value(json_object_get(q, "dev"));

			sum += jint(q, "drops");
			for (int k = t->out_off[v]; per_arc && dev && k < t->out_off[v + 1]; k++)
				if (strcmp(dev, e->net->ifname[t->arc_out[k]]) == 0)
					per_arc[t->arc_out[k]] += jint(q, "drops");
		}
		json_decref(r);
	}
	return sum;
}

/* The largest queue (frames) of any queueing discipline of the network; -1
 * if none could be read. */
static int qdisc_max_qlen(struct inart_emu *e)
{
	int m = -1;

	for (int v = 0; v < e->t->n_nodes; v++) {
		json_t *r = qdiscs(e, v), *q;
		size_t i;

		json_array_foreach(r, i, q)
		{
			int n = (int)jint(q, "qlen");

			m = n > m ? n : m;
		}
		json_decref(r);
	}
	return m;
}

/* Before a plan is installed: wait until the previous run's packets have
 * left the network -- twice the switches' partial-flush time (slots of the
 * last chunks flush their partial aggregates), then (up to QUIET_WAIT_MS)
 * until every qdisc holds at most one frame (the background's) in two looks
 * QUIET_LOOK_MS apart.  Resends and probes
 * of a run that ended in a recovery storm can sit for seconds in the
 * shaped queues; a PS whose trees were just reset takes the step of the
 * first packet it sees, so one of them arriving after the install would make
 * the new run's workers (steps from 1 again) stale. */
static void wait_quiet(struct inart_emu *e)
{
	uint64_t t0 = inart_emu_now_ns(), end = t0 + QUIET_WAIT_MS * 1000000ull;
	int quiet = 0, q = 0;
	double flush_ms = e->o.net.flush_ms > 0 ? e->o.net.flush_ms : 10;

	usleep((useconds_t)(2 * flush_ms * 1000));
	while (quiet < 2 && inart_emu_now_ns() < end) {
		q = qdisc_max_qlen(e);
		quiet = q <= 1 ? quiet + 1 : 0;
		if (quiet < 2)
			usleep(QUIET_LOOK_MS * 1000);
	}
	if (quiet < 2)
		progress(e,
			 "the network is not quiet after %.1f s (a queue holds %d frames): "
			 "installing anyway",
			 QUIET_WAIT_MS / 1e3, q);
	else if (inart_emu_now_ns() - t0 > 1000000000ull)
		progress(e, "waited %.1f s for the previous run's packets to leave the network",
			 (double)(inart_emu_now_ns() - t0) / 1e9);
}

/* UDP receive and send buffer errors of every host (its namespace's
 * /proc/net/snmp), summed. */
static void udp_errors(struct inart_emu *e, uint64_t *rcv, uint64_t *snd)
{
	*rcv = *snd = 0;
	for (int v = 0; v < e->t->n_nodes; v++) {
		char *argv[] = {"cat", "/proc/net/snmp", NULL}, out[8192], *l, *names = NULL;

		if (e->t->nodes[v].kind != INART_NODE_HOST ||
		    inart_emu_cmd(e->net->ns[v], argv, NULL, out, sizeof(out), 10000, NULL) != 0)
			continue;
		for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
			char *sn, *sv, *pn, *pv;

			if (strncmp(l, "Udp: ", 5) != 0)
				continue;
			if (names == NULL) {
				names = l;
				continue;
			}
			/* walk the names and values lines together */
			pn = strtok_r(names + 5, " ", &sn);
			pv = strtok_r(l + 5, " ", &sv);
			for (; pn && pv;
			     pn = strtok_r(NULL, " ", &sn), pv = strtok_r(NULL, " ", &sv)) {
				if (strcmp(pn, "RcvbufErrors") == 0)
					*rcv += strtoull(pv, NULL, 10);
				if (strcmp(pn, "SndbufErrors") == 0)
					*snd += strtoull(pv, NULL, 10);
			}
			break;
		}
	}
}

/* CPU time of every process of the run (daemons, background, workers). */
static void cpu_times(struct inart_emu *e, const struct worker *w, int nw, int64_t *per_node,
		      int64_t *all)
{
	*all = 0;
	for (int v = 0; v < e->t->n_nodes; v++) {
		int64_t c = e->pid[v] > 0 ? inart_emu_cpu_ns(e->pid[v]) : 0;

		per_node[v] = c > 0 ? c : 0;
		*all += per_node[v];
	}
	if (e->bg_pid > 0 && inart_emu_cpu_ns(e->bg_pid) > 0)
		*all += inart_emu_cpu_ns(e->bg_pid);
	for (int i = 0; i < nw; i++)
		if (w[i].pid > 0 && inart_emu_cpu_ns(w[i].pid) > 0)
			*all += inart_emu_cpu_ns(w[i].pid);
}

/* Switch and PS counters after the run: bytes per arc, drops. */
static void read_counters(struct inart_emu *e, struct inart_emu_result *r)
{
	const struct inart_topo *t = e->t;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *s, *ports, *p;
		size_t i;

		if (e->pid[v] > 0 && t->nodes[v].kind != INART_NODE_SWITCH) {
			s = ctl_req(e->ctl[v], "{\"op\": \"stats\"}", NULL);
			p = json_object_get(s, "ps");
			r->ps_absorbed += jint(p, "absorbed");
			r->ps_nacks += jint(p, "nacks");
			r->ps_replaced += jint(p, "replaced");
			r->ps_duplicates += jint(p, "duplicates");
			r->ps_probes += jint(p, "probes");
			json_decref(s);
			continue;
		}
		if (t->nodes[v].kind != INART_NODE_SWITCH || e->pid[v] <= 0)
			continue;
		s = ctl_req(e->ctl[v], "{\"op\": \"stats\"}", NULL);
		if (s == NULL)
			continue;
		ports = json_object_get(s, "ports");
		json_array_foreach(ports, i, p)
		{
			int k = (int)i, a, b;

			if (k >= t->out_off[v + 1] - t->out_off[v])
				break;
			a = t->arc_out[t->out_off[v] + k]; /* leaving v on port k */
			b = a ^ 1;			   /* arriving at v on port k */
			r->arc_bytes[a] = (double)jint(p, "tx_bytes");
			r->arc_known[a] = 1;
			if (t->nodes[t->arcs[b].from].kind == INART_NODE_HOST &&
			    !(t->arcs[b].bg_gbps > 0)) {
				/* a host's uplink: only the switch counts it (not when
				   background frames share it: they are counted too) */
				r->arc_bytes[b] = (double)jint(p, "rx_bytes");
				r->arc_known[b] = 1;
			}
			r->ring_drops += jint(p, "sock_rx_kernel_drops");
			r->sock_tx_drops += jint(p, "sock_tx_drops");
		}
		r->out_full += jint(json_object_get(s, "drops"), "out_full");
		json_array_foreach(json_object_get(s, "trees"), i, p)
		{
			r->sw_aggregated += jint(p, "aggregated");
			r->sw_emitted += jint(p, "emitted");
			r->sw_partial += jint(p, "partial");
			r->sw_early += jint(p, "early");
			r->sw_fallback += jint(p, "fallback");
			r->sw_repaired += jint(p, "repaired");
		}
		p = json_object_get(s, "gate");
		if (p != NULL) {
			json_t *x;

			r->agg_dropped += jint(p, "agg_dropped");
			json_array_foreach(json_object_get(p, "rx_lost"), i, x)
			{
				r->lost += (uint64_t)json_integer_value(x);
			}
			json_array_foreach(json_object_get(p, "tx_lost"), i, x)
			{
				r->lost += (uint64_t)json_integer_value(x);
			}
		}
		json_decref(s);
	}
}

static void reset_counters(struct inart_emu *e)
{
	for (int v = 0; v < e->t->n_nodes; v++)
		if (e->pid[v] > 0)
			json_decref(ctl_req(e->ctl[v], "{\"op\": \"reset_stats\"}", NULL));
}

/* --- a run ------------------------------------------------------------------ */

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
			fd = log_fd(e, name);
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
 * a worker failed, or the deadline.  1 reached, 0 failure (why set). */
static int wait_all(struct inart_emu *e, struct worker *w, int nw, int k, int want_done,
		    uint64_t deadline, uint64_t run_t0, const char *plan_path, char *why,
		    size_t why_len)
{
	for (;;) {
		int all = 1;

		for (int i = 0; i < nw; i++) {
			if (w[i].failed) {
				snprintf(why, why_len, "job %s rank %d: %s",
					 e->js->jobs[w[i].job].id, w[i].rank, w[i].err);
				return 0;
			}
			if (w[i].out < 0 && (want_done ? w[i].checked : w[i].ready) < k) {
				snprintf(why, why_len, "job %s rank %d: the worker ended early",
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
			snprintf(why, why_len,
				 "iteration %d %s within %.0f s (stalled; workers %s): the run "
				 "was stopped",
				 k, want_done ? "did not finish" : "did not start",
				 e->o.iter_timeout_s, s ? s : "?");
			free(s);
			return 0;
		}
		if (run_t0 > 0)
			fault_step(e, ((double)inart_emu_now_ns() - (double)run_t0) / 1e9,
				   plan_path, 0);
		workers_poll(w, nw, 10);
	}
}

static int result_alloc(struct inart_emu_result *r, int iters, int n_jobs, int n_arcs)
{
	memset(r, 0, sizeof(*r));
	r->iters = iters;
	r->n_jobs = n_jobs;
	r->n_arcs = n_arcs;
	r->iter_s = calloc((size_t)iters + 1, sizeof(double));
	r->iter_t0_s = calloc((size_t)iters + 1, sizeof(double));
	r->ctl_first_install_s = -1;
	r->job_iter_s = calloc((size_t)iters * (size_t)n_jobs + 1, sizeof(double));
	r->arc_bytes = calloc((size_t)n_arcs + 1, sizeof(double));
	r->arc_known = calloc((size_t)n_arcs + 1, sizeof(int));
	r->arc_qdrops = calloc((size_t)n_arcs + 1, sizeof(uint64_t));
	if (!r->iter_s || !r->iter_t0_s || !r->job_iter_s || !r->arc_bytes || !r->arc_known ||
	    !r->arc_qdrops) {
		inart_emu_result_free(r);
		return -ENOMEM;
	}
	return 0;
}

/* CPU-bound verdict from the figures of r (see docs/emulator.md). */
static void cpu_verdict(struct inart_emu_result *r, int cores)
{
	struct inart_sbuf b = {0};
	char *s;

	if (r->switchd_cpu_max >= 0.85)
		inart_sbuf_printf(&b, "switchd %s used %.0f%% of a core; ", r->switchd_cpu_node,
				  100 * r->switchd_cpu_max);
	if (r->cpu_total >= 0.85 * cores)
		inart_sbuf_printf(&b, "the run's processes used %.2f of %d cores; ", r->cpu_total,
				  cores);
	if (r->host_busy >= 0.95)
		inart_sbuf_printf(&b, "the machine was %.0f%% busy; ", 100 * r->host_busy);
	if (r->ring_drops > 0)
		inart_sbuf_printf(&b, "%llu frames dropped at switchd's receive rings; ",
				  (unsigned long long)r->ring_drops);
	if (r->udp_rcvbuf_errors > 0)
		inart_sbuf_printf(&b,
				  "%llu datagrams dropped at full UDP receive buffers of hosts; ",
				  (unsigned long long)r->udp_rcvbuf_errors);
	if (r->sock_tx_drops + r->out_full > 0)
		inart_sbuf_printf(&b, "%llu frames dropped at switchd's transmit queues; ",
				  (unsigned long long)(r->sock_tx_drops + r->out_full));
	s = inart_sbuf_finish(&b);
	r->cpu_bound = s != NULL && s[0] != '\0';
	snprintf(r->cpu_why, sizeof(r->cpu_why), "%s", s ? s : "");
	if (r->cpu_bound && strlen(r->cpu_why) >= 2)
		r->cpu_why[strlen(r->cpu_why) - 2] = '\0';
	free(s);
}

/* What a run measures from its start (counters at the first iteration,
 * CPU times at its start and end) and its workers. */
struct run_meas {
	int64_t *cpu0, *cpu1, all0, all1;
	uint64_t *qd0, ur0, us0, busy0, tot0, q0;
	uint64_t run_t0, run_t1; /* first iteration's start, last result */
};

/* Counters and CPU times before the first iteration. */
static void meas_start(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m)
{
	m->q0 = qdisc_drops(e, m->qd0);
	udp_errors(e, &m->ur0, &m->us0);
	reset_counters(e);
	cpu_times(e, w, nw, m->cpu0, &m->all0);
	cpu_stat(&m->busy0, &m->tot0);
}

/* After the iterations (or a failed one): wall time, CPU use, drops and
 * the CPU-bound verdict into r. */
static void meas_end(struct inart_emu *e, struct worker *w, int nw, struct run_meas *m,
		     struct inart_emu_result *r)
{
	const struct inart_topo *t = e->t;
	int na = inart_topo_n_arcs(t), cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t now = inart_emu_now_ns(), busy1, tot1, q1;
	double wall;

	if (m->run_t1 == 0)
		m->run_t1 = now;
	r->wall_s = (double)(m->run_t1 - m->run_t0) / 1e9;
	cpu_times(e, w, nw, m->cpu1, &m->all1);
	cpu_stat(&busy1, &tot1);
	wall = (double)(now - m->run_t0 + GO_AHEAD_NS) / 1e9;
	for (int v = 0; v < t->n_nodes; v++) {
		int64_t node_ns = m->cpu1[v] - m->cpu0[v];

		if (t->nodes[v].kind == INART_NODE_SWITCH &&
		    (double)node_ns / 1e9 / wall > r->switchd_cpu_max) {
			r->switchd_cpu_max = (double)node_ns / 1e9 / wall;
			snprintf(r->switchd_cpu_node, sizeof(r->switchd_cpu_node), "%s",
				 t->nodes[v].id);
		}
	}
	r->cpu_total = (double)(m->all1 - m->all0) / 1e9 / wall;
	r->host_busy = tot1 > m->tot0 ? (double)(busy1 - m->busy0) / (double)(tot1 - m->tot0) : 0;
	read_counters(e, r);
	q1 = qdisc_drops(e, r->arc_qdrops);
	r->qdisc_drops = q1 > m->q0 ? q1 - m->q0 : 0;
	udp_errors(e, &r->udp_rcvbuf_errors, &r->udp_sndbuf_errors);
	r->udp_rcvbuf_errors -= m->ur0 < r->udp_rcvbuf_errors ? m->ur0 : r->udp_rcvbuf_errors;
	r->udp_sndbuf_errors -= m->us0 < r->udp_sndbuf_errors ? m->us0 : r->udp_sndbuf_errors;
	for (int a = 0; a < na; a++)
		r->arc_qdrops[a] -= r->arc_qdrops[a] >= m->qd0[a] ? m->qd0[a] : r->arc_qdrops[a];
	cpu_verdict(r, cores > 0 ? cores : 1);
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
			       m->run_t0, plan_path, r->why, sizeof(r->why)))
		return 0;
	if (m->run_t0 == 0) {
		m->run_t0 = start;
		if (e->bg_pid > 0) /* the background's schedule starts now */
			kill(e->bg_pid, SIGUSR1);
	}
	r->iter_t0_s[k] = (double)(start - m->run_t0) / 1e9;
	for (int i = 0; i < nw; i++)
		if (write(w[i].in, go, (size_t)n) != n) {
			snprintf(r->why, sizeof(r->why), "job %s rank %d: cannot start it",
				 js->jobs[w[i].job].id, w[i].rank);
			return 0;
		}
	if (!wait_all(e, w, nw, k, 1, start + (uint64_t)(e->o.iter_timeout_s * 1e9) + 2000000000ull,
		      m->run_t0, plan_path, r->why, sizeof(r->why)))
		return 0;
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
	progress(e, "  iteration %d: %.3f s%s", k + 1, r->iter_s[k],
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
			snprintf(r->why, sizeof(r->why), "job %s rank %d: %d values WRONG",
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
	wait_quiet(e);
	e->runs++;
	rc = run_setup(e, &plan_path, values, iters, w, &nw, ctl_plan, sizeof(ctl_plan), &ctl_pid,
		       &ctl_spawn, err);
	if (rc < 0)
		goto out;
	if (wait_all(e, w, nw, 0, 0, inart_emu_now_ns() + READY_WAIT_MS * 1000000ull, 0, plan_path,
		     r->why, sizeof(r->why))) {
		meas_start(e, w, nw, &m);
		r->finished = 1;
		for (int k = 0; k < iters && r->finished; k++)
			r->finished = run_iteration(e, w, nw, k, iters, plan_path, &m, r);
	}
	if (m.run_t0 > 0)
		meas_end(e, w, nw, &m, r);
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
