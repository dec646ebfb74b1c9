/*
 * emulation: an emulated network's life (see run.h): the network up
 * (net.c), a switchd on every switch and a ps on every PS host, the
 * janitor that removes everything if the emulator dies, the background
 * traffic, and the orderly stop (or a detach that leaves it running for
 * `inart emu down`).  Runs of plans on it are in run.c; the state both
 * share in run_impl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/bg.h"
#include "ctlproto/ctlclient.h"
#include "ctlproto/ctlmsg.h"
#include "common/sbuf.h"
#include "emu/run_impl.h"
#include "emu/spawn.h"

/* Waiting for the daemons' control sockets: 10 s, and 250 ms more per
 * daemon beyond 40 (they start at once and share the machine's cores: 80
 * switchd on 2 busy cores, each 30-50 ms of CPU to start on xdp) */
#define DAEMON_WAIT_MS 10000
#define DAEMON_WAIT_EACH_MS 250
#define DAEMON_WAIT_FREE 40
#define CTL_MS 10000 /* a request to a daemon: at most */
/* ... and 1.5 s more per daemon when the switches may load the kernel's
 * aggregation program (--agg auto or kernel, h25g): the verifier's pass over
 * it (113k instructions) took 10-11 s for 20 switchd starting at once on
 * this machine's 2 busy cores */
#define DAEMON_WAIT_AGG_MS 1500

void inart_emu_progress(const struct inart_emu *e, const char *fmt, ...)
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

json_t *inart_emu_ctl_req(const char *path, const char *body, struct inart_err *err)
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

int inart_emu_log_fd(const struct inart_emu *e, const char *name)
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
		if (strncmp(line, "Try '", 5) != 0) /* a usage error's hint: the line before */
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

pid_t inart_emu_start_daemon(struct inart_emu *e, int v, int detach, struct inart_err *err)
{
	const struct inart_topo *t = e->t;
	const char *id = t->nodes[v].id;
	struct inart_sbuf ports = {0}, txp = {0};
	char *argv[32 + 2 * INART_SW_MAX_PORTS], *pl = NULL, *tl = NULL, agg[32], rx[32], seed[32],
						 ipb[16];
	char shape[INART_SW_MAX_PORTS][64];
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
		for (int k = t->out_off[v]; e->net->switch_shape && k < t->out_off[v + 1] &&
					    k - t->out_off[v] < INART_SW_MAX_PORTS;
		     k++) {
			inart_emu_net_shape_arg(e->net, t->arc_out[k], shape[k - t->out_off[v]],
						sizeof(shape[0]));
			a = arg2(argv, a, "--shape", shape[k - t->out_off[v]]);
		}
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
		inart_addr_fmt_ip(e->net->d->ip[v], ipb);
		a = arg2(argv, a, "--bind", ipb);
	}
	if (t->nodes[v].kind == INART_NODE_SWITCH) {
		a = arg2(argv, a, "--io", e->o.io ? e->o.io : "auto");
		a = arg2(argv, a, "--agg", e->o.agg ? e->o.agg : "auto"); /* issue 25 */
	}
	a = arg2(argv, a, "--ctl", e->ctl[v]);
	/* switchd at info: its few lines (start, back end and why, installs,
	   counter resets) say why --io auto did not take xdp */
	a = arg2(argv, a, "--log-level", t->nodes[v].kind == INART_NODE_SWITCH ? "info" : "warn");
	argv[a] = NULL;
	fd = inart_emu_log_fd(e, id);
	fds.err = fd;
	pid = inart_emu_spawn(e->net->ns[v], argv, &fds, err);
	if (fd >= 0)
		close(fd);
	free(pl);
	free(tl);
	return pid;
}

/* Wait for the control sockets of the daemons in want[] (node numbers). */
int inart_emu_wait_daemons(struct inart_emu *e, const int *want, int n, struct inart_err *err)
{
	int wait_ms =
	    DAEMON_WAIT_MS +
	    (n > DAEMON_WAIT_FREE ? (n - DAEMON_WAIT_FREE) : 0) * DAEMON_WAIT_EACH_MS +
	    (e->o.agg == NULL || strcmp(e->o.agg, "user") != 0 ? n * DAEMON_WAIT_AGG_MS : 0);
	uint64_t end = inart_emu_now_ns() + (uint64_t)wait_ms * 1000000ull;

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
						     "%.1f s (%d daemons starting)",
						     e->t->nodes[v].id, e->ctl[v], wait_ms / 1000.0,
						     n);
			usleep(10000);
		}
	}
	return 0;
}

/* Why switchd's --io auto did not take xdp, from the first switch log that
 * says ("--io auto: ring (xdp not used: ...)"; key "--io auto: "), else
 * where to look; the same for --agg auto (key "--agg auto: user"). */
static void auto_why(const struct inart_emu *e, const char *key, char *why, size_t cap)
{
	snprintf(why, cap, "'inart switchd %s' says why",
		 strncmp(key, "--io", 4) == 0 ? "--io xdp" : "--agg kernel");
	for (int v = 0; v < e->t->n_nodes; v++) {
		char path[400], line[512], *p = NULL;
		FILE *f;

		if (e->t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s.log", e->net->dir, e->t->nodes[v].id);
		f = fopen(path, "r");
		while (f != NULL && p == NULL && fgets(line, sizeof(line), f) != NULL)
			p = strstr(line, key);
		if (f != NULL)
			fclose(f);
		if (p != NULL) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(why, cap, "%s says: %s", e->t->nodes[v].id, p);
			return;
		}
	}
}

/* The I/O back end each switch daemon runs (its `info`), tallied into e->io
 * and said in a progress line, with a fallback from xdp named as one. */
static void switch_io(struct inart_emu *e)
{
	const struct inart_topo *t = e->t;
	const char *asked = e->o.io ? e->o.io : "auto";
	char name[8][16];
	int count[8] = {0}, kinds = 0, n = 0, xdp = 0, kernel = 0;
	size_t off = 0;

	for (int v = 0; v < t->n_nodes; v++) {
		json_t *r;
		const char *io;
		int k;

		if (t->nodes[v].kind != INART_NODE_SWITCH || e->pid[v] <= 0)
			continue;
		r = inart_emu_ctl_req(e->ctl[v], "{\"op\": \"info\"}", NULL);
		io = json_string_value(json_object_get(r, "io"));
		if (io == NULL)
			io = "unknown";
		for (k = 0; k < kinds && strcmp(name[k], io) != 0; k++)
			;
		if (k == kinds && kinds < 8)
			snprintf(name[kinds++], sizeof(name[0]), "%s", io);
		if (k < kinds)
			count[k]++;
		xdp += strcmp(io, "xdp") == 0;
		kernel += json_is_string(json_object_get(r, "agg")) &&
			  strcmp(json_string_value(json_object_get(r, "agg")), "kernel") == 0;
		n++;
		json_decref(r);
	}
	e->io[0] = '\0';
	for (int k = 0; k < kinds && off < sizeof(e->io); k++) {
		int w = kinds == 1 ? snprintf(e->io + off, sizeof(e->io) - off, "%s", name[k])
				   : snprintf(e->io + off, sizeof(e->io) - off, "%s%s x%d",
					      k ? ", " : "", name[k], count[k]);

		off += w > 0 ? (size_t)w : 0;
	}
	if (n == 0)
		return;
	if (strcmp(asked, "auto") == 0 && xdp < n) {
		char why[300];

		auto_why(e, "--io auto: ", why, sizeof(why));
		inart_emu_progress(e,
				   "switchd I/O: %s on %d switches (--io auto: xdp not taken on %d "
				   "of them, fell back; %s; %s)",
				   e->io, n, n - xdp, why,
				   e->o.io_why ? e->o.io_why : "tbf on every link end");
	} else if (strcmp(asked, "auto") == 0 && e->o.io_why != NULL)
		inart_emu_progress(e, "switchd I/O: %s on %d switches (--io auto: %s)", e->io, n,
				   e->o.io_why);
	else
		inart_emu_progress(e, "switchd I/O: %s on %d switches (--io %s)", e->io, n, asked);
	/* issue 25: where they aggregate (the kernel's path needs --io xdp and
	   no gate: switchd says why not in its log, and so does this line) */
	if (kernel < n && (e->o.agg == NULL || strcmp(e->o.agg, "auto") == 0)) {
		char why[300];

		auto_why(e, "--agg auto: user", why, sizeof(why));
		inart_emu_progress(e,
				   "switchd aggregation: kernel on %d, user on %d switches (--agg "
				   "auto: the kernel's XDP program where switchd can use it; %s)",
				   kernel, n - kernel, why);
	} else
		inart_emu_progress(
		    e, "switchd aggregation: kernel on %d, user on %d switches (--agg %s)", kernel,
		    n - kernel, e->o.agg ? e->o.agg : "auto");
}

const char *inart_emu_switch_io(const struct inart_emu *e)
{
	return e->io;
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
		e->pid[v] = inart_emu_start_daemon(e, v, detach, err);
		if (e->pid[v] < 0) {
			rc = e->pid[v];
			e->pid[v] = 0;
		}
		want[n++] = v;
	}
	if (rc == 0)
		rc = inart_emu_wait_daemons(e, want, n, err);
	if (rc == 0)
		switch_io(e);
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
	inart_emu_progress(e, "background traffic on %d link directions", e->n_flows);
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
	inart_emu_progress(e, "building %d namespaces, %d veth pairs (prefix %s)", t->n_nodes,
			   t->n_links, e->net->prefix);
	if ((rc = inart_emu_net_up(e->net, err)) < 0)
		goto fail;
	inart_emu_progress(e, "network up in %.2f s; starting switchd and ps daemons",
			   (double)(inart_emu_now_ns() - t0) / 1e9);
	if ((rc = start_daemons(e, o->detach, err)) < 0)
		goto fail;
	if (o->background && !o->detach && (rc = start_background(e, err)) < 0)
		goto fail;
	inart_emu_progress(e, "emulation ready in %.2f s", (double)(inart_emu_now_ns() - t0) / 1e9);
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

void inart_emu_set_prediction(struct inart_emu *e, double iter_s)
{
	e->predicted_iter_s = iter_s > 0 ? iter_s : 0;
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
