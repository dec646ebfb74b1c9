/*
 * emu_cli: what the `inart emu` subcommands (cmd_emu_up.c, cmd_emu_run.c,
 * cmd_emu_compare.c, cmd_emu_down.c) share (emu_cli.h): option parsing, the
 * checks made before anything is built (root, input files, scales, machine
 * limits, leftovers of the same prefix), and the execution of plans on one
 * network with the report.  Calls none of them (cmd_emu.c dispatches).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge/install.h"
#include "cp/planner/planner.h"
#include "emu/scale.h"
#include "emu/schedule.h"
#include "emu/spawn.h"
#include "io/xsk.h"
#include "cli/emu_cli.h"
#include "common/sbuf.h"

/* --io auto: the switches shape their links (switchd --shape, so that
 * switchd's own auto can take xdp) where AF_XDP can be had here, else tbf on
 * every end as with ring; a->o.io_why says which and why. */
static void emu_io_auto(struct emu_args *a)
{
	static char why[200];
	char no[120];

	a->o.net.switch_shape = inart_xsk_usable(no, sizeof(no));
	if (a->o.net.switch_shape)
		snprintf(why, sizeof(why),
			 "AF_XDP usable here: the links leaving the switches shaped by switchd "
			 "--shape, not tbf, so that switchd takes xdp");
	else
		snprintf(why, sizeof(why),
			 "AF_XDP not usable here (%s): tbf on every link end, switchd on ring", no);
	a->o.io_why = why;
}

void emu_args_init(struct emu_args *a)
{
	memset(a, 0, sizeof(*a));
	inart_emu_opt_default(&a->o);
	snprintf(a->prefix, sizeof(a->prefix), "%u", (unsigned)getpid() % 1000000000u);
	a->mbps = 20;
	a->target_s = 1;
	a->iters = 5;
	a->fmt = INART_FMT_TABLE;
	a->out = "-";
	a->o.iter_timeout_s = 0; /* auto */
	a->o.net.window = 16;	 /* docs/emulator.md: the window and the shaped paths' BDP */
	a->pace = INART_INSTALL_PACE_DEFAULT; /* the installation's: docs/dataplane.md, Pacing */
	a->pace_lead_ms = 10; /* docs/emulator.md: pacing against the plan's schedule */
	emu_io_auto(a);	      /* --io auto, the default (issue 24) */
}

/* The options of issue 24 (the switches' back end, the size limit): 1 if c
 * was one of them. */
static int emu_opt_scale(const char *cmd, int c, const char *arg, struct emu_args *a)
{
	switch (c) {
	case EMU_OPT_IO:
		if (strcmp(arg, "auto") && strcmp(arg, "xdp") && strcmp(arg, "ring") &&
		    strcmp(arg, "mmsg"))
			cli_usage_error(cmd, "--io: auto, ring or mmsg (or xdp), not '%s'", arg);
		/* xdp: AF_XDP's transmit and the XDP program's redirects bypass a
		   qdisc, so the switches shape the links they send on themselves
		   (switchd --shape) and their ends get no tbf; auto does so too
		   where this machine has AF_XDP (switchd then takes xdp, its ports
		   unshaped, or else ring, shaping on it as well) */
		a->o.net.switch_shape = strcmp(arg, "xdp") == 0;
		a->o.io = arg;
		a->o.io_why = NULL;
		if (strcmp(arg, "auto") == 0)
			emu_io_auto(a);
		return 1;
	case EMU_OPT_AGG:
		if (strcmp(arg, "auto") && strcmp(arg, "user") && strcmp(arg, "kernel"))
			cli_usage_error(cmd, "--agg: auto, user or kernel, not '%s'", arg);
		a->o.agg = arg;
		return 1;
	case EMU_OPT_NO_SIZE_LIMIT:
		a->no_size_limit = 1;
		return 1;
	default:
		return 0;
	}
}

int emu_opt(const char *cmd, int c, const char *arg, struct emu_args *a)
{
	const struct {
		int code;
		const char *name;
		double min, max, *to;
	} num[] = {
	    {EMU_OPT_MBPS, "--mbps", 1e-6, 1e6, &a->mbps},
	    {EMU_OPT_RATE_SCALE, "--rate-scale", 1e-12, 1, &a->rate_scale},
	    {EMU_OPT_SIZE_SCALE, "--size-scale", 1e-12, 1e3, &a->size_scale},
	    {EMU_OPT_TARGET_S, "--target-s", 0.001, 3600, &a->target_s},
	    {EMU_OPT_LOSS, "--loss", 0, 0.5, &a->o.loss},
	    {EMU_OPT_ITER_TIMEOUT, "--iter-timeout", 0.1, 86400, &a->o.iter_timeout_s},
	    {EMU_OPT_QUEUE_MS, "--queue-ms", 0.1, 100000, &a->o.net.queue_ms},
	    {EMU_OPT_RETX_MS, "--retx-ms", 0.1, 3600e3, &a->o.net.retx_ms},
	    {EMU_OPT_FLUSH_MS, "--flush-ms", 0.1, 3600e3, &a->o.net.flush_ms},
	    {EMU_OPT_PACE, "--pace", 0, 100, &a->pace},
	    {EMU_OPT_PACE_LEAD, "--pace-lead", 0, 3600e3, &a->pace_lead_ms},
	};
	const struct {
		int code;
		const char **to;
	} str[] = {{'o', &a->out},
		   {EMU_OPT_PNG, &a->png},
		   {EMU_OPT_KEEP, &a->o.keep_dir},
		   {EMU_OPT_CONTROLLER_ARGS, &a->o.ctl_args},
		   {EMU_OPT_DYNAMICS_PNG, &a->dyn_png}};

	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		if (c == num[i].code) {
			*num[i].to = cli_double(cmd, num[i].name, arg, num[i].min, num[i].max);
			if (c == EMU_OPT_MBPS)
				a->rate_scale = 0; /* --mbps sets the rate scale */
			return 1;
		}
	for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++)
		if (c == str[i].code) {
			*str[i].to = arg;
			return 1;
		}
	switch (c) {
	case EMU_OPT_PREFIX:
		snprintf(a->prefix, sizeof(a->prefix), "%s", emu_prefix_arg(cmd, arg));
		return 1;
	case EMU_OPT_ITERS:
		a->iters = cli_int(cmd, "--iters", arg, 1, 100000);
		return 1;
	case 'f':
		a->fmt = cli_format(cmd, arg);
		return 1;
	case EMU_OPT_SEED:
		a->o.seed = cli_u64(cmd, "--seed", arg);
		return 1;
	case EMU_OPT_LINK_DOWN:
	case EMU_OPT_KILL_SWITCH:
		if (a->n_fault_args == 16)
			cli_usage_error(cmd, "at most 16 faults");
		a->fault_kind[a->n_fault_args] =
		    c == EMU_OPT_LINK_DOWN ? INART_EMU_FAULT_LINK : INART_EMU_FAULT_KILL;
		a->fault_arg[a->n_fault_args++] = arg;
		return 1;
	case EMU_OPT_NO_BACKGROUND:
		a->o.background = 0;
		return 1;
	case EMU_OPT_NO_AGG_LIMIT:
		a->o.agg_limit = 0;
		return 1;
	case EMU_OPT_WINDOW:
		a->o.net.window = cli_int(cmd, "--window", arg, 1, 4096);
		return 1;
	case EMU_OPT_BG_AT:
		if (a->n_bg_args == 32)
			cli_usage_error(cmd, "at most 32 --bg-at");
		a->bg_arg[a->n_bg_args++] = arg;
		return 1;
	case EMU_OPT_CONTROLLER:
		if (strcmp(arg, "off") == 0)
			a->controller = 0;
		else if (strcmp(arg, "on") == 0)
			a->controller = 1;
		else if (strcmp(arg, "both") == 0)
			a->controller = 2;
		else
			cli_usage_error(cmd, "--controller: on, off or both, not '%s'", arg);
		return 1;
	case 'q':
		a->quiet = 1;
		return 1;
	case 'a':
		free(a->algos);
		a->algos = cli_algos(cmd, arg);
		return 1;
	default:
		return emu_opt_scale(cmd, c, arg, a);
	}
}

void emu_parse(const char *cmd, int argc, char **argv, const char *help, int algos,
	       struct emu_args *a)
{
	static const struct option longopts[] = {EMU_LONGOPTS, {NULL, 0, NULL, 0}};
	int c;

	emu_args_init(a);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, EMU_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			exit(EXIT_OK);
		}
		if (c == 'a' && !algos)
			cli_usage_error(cmd, "--algos goes with 'emu compare'");
		if (!emu_opt(cmd, c, optarg, a))
			cli_getopt_error(cmd, c, argv);
	}
}

int emu_action(const char *cmd, int argc, char **argv, const char *help, int compare)
{
	static const char *const run_ops[] = {"TOPO", "JOBS", "PLAN", NULL};
	static const char *const cmp_ops[] = {"TOPO", "JOBS", NULL};
	struct emu_args a;

	emu_parse(cmd, argc, argv, help, compare, &a);
	cli_operands(cmd, argc, argv, compare ? cmp_ops : run_ops);
	return emu_execute(cmd, &a, argv[optind], argv[optind + 1],
			   compare ? NULL : argv[optind + 2]);
}

void emu_need_root(const char *cmd)
{
	if (geteuid() != 0)
		cli_failf("emu %s: needs root (network namespaces, veth pairs, tc, AF_PACKET); run "
			  "it as root or with sudo",
			  cmd);
}

void emu_check_limits(const struct emu_args *a, const struct inart_topo *t, double rate_scale)
{
	struct inart_err err = {{0}};
	struct inart_emu_limits lim;

	inart_emu_limits_default(&lim, (int)sysconf(_SC_NPROCESSORS_ONLN));
	if (a->no_size_limit)
		lim.max_nodes = lim.max_ports = INT_MAX;
	if (inart_emu_check(t, rate_scale, &lim, &err) < 0)
		cli_fail(&err);
}

const char *emu_prefix_arg(const char *cmd, const char *arg)
{
	if (!inart_emu_prefix_ok(arg))
		cli_usage_error(cmd, "--prefix: '%s' is not 1 to %d of [a-z0-9]", arg,
				INART_EMU_PREFIX_MAX);
	return arg;
}

/* The arc A->B of "A-B" (node ids may hold '-': every split is tried), or -1. */
static int find_arc(const struct inart_topo *t, char *what)
{
	int arc = -1;

	for (char *dash = strchr(what, '-'); dash != NULL && arc < 0;
	     dash = strchr(dash + 1, '-')) {
		int u, v;

		*dash = '\0';
		u = inart_topo_find(t, what);
		v = inart_topo_find(t, dash + 1);
		if (u >= 0 && v >= 0)
			arc = inart_topo_arc_between(t, u, v);
		*dash = '-';
	}
	return arc;
}

/* "A-B" as two hosts (the first '-' that splits it so). 0 or -1. */
static int find_hosts(const struct inart_topo *t, char *what, int *src, int *dst)
{
	int rc = -1;

	for (char *dash = strchr(what, '-'); dash != NULL && rc < 0; dash = strchr(dash + 1, '-')) {
		*dash = '\0';
		*src = inart_topo_find(t, what);
		*dst = inart_topo_find(t, dash + 1);
		if (*src >= 0 && *dst >= 0 && t->nodes[*src].kind == INART_NODE_HOST &&
		    t->nodes[*dst].kind == INART_NODE_HOST)
			rc = 0;
		*dash = '-';
	}
	return rc;
}

/* Faults "A-B@T+D" / "S@T+D" against the topology (exit 2 if malformed,
 * 1 if a node or link is unknown). */
static void resolve_faults(const char *cmd, struct emu_args *a, const struct inart_topo *t)
{
	struct inart_emu_bg_entry bg[32];
	struct inart_err err = {{0}};

	for (int i = 0; i < a->n_fault_args; i++) {
		struct inart_emu_fault *f = &a->faults[i];
		char what[128];
		double at, len;

		if (sscanf(a->fault_arg[i], "%127[^@]@%lf+%lf", what, &at, &len) != 3 || at < 0 ||
		    len < 0)
			cli_usage_error(cmd, "'%s': expected %s@T+D (seconds)", a->fault_arg[i],
					a->fault_kind[i] == INART_EMU_FAULT_LINK ? "A-B" : "S");
		f->kind = a->fault_kind[i];
		f->at_s = at;
		f->for_s = len;
		if (f->kind == INART_EMU_FAULT_KILL) {
			f->node = inart_topo_find(t, what);
			if (f->node < 0 || t->nodes[f->node].kind != INART_NODE_SWITCH)
				cli_failf("--kill-switch: '%s' is not a switch of the topology",
					  what);
			continue;
		}
		f->arc = find_arc(t, what);
		if (f->arc < 0)
			cli_failf("--link-down: '%s' is not a link of the topology (A-B)", what);
	}
	a->o.faults = a->faults;
	a->o.n_faults = a->n_fault_args;
	/* background changes "A-B@T=G": a link direction, else two hosts */
	for (int i = 0; i < a->n_bg_args; i++) {
		char what[128];
		double at, g;

		if (sscanf(a->bg_arg[i], "%127[^@]@%lf=%lf", what, &at, &g) != 3 || at < 0 || g < 0)
			cli_usage_error(cmd, "--bg-at '%s': expected A-B@T=G (seconds, Gbit/s)",
					a->bg_arg[i]);
		bg[i] =
		    (struct inart_emu_bg_entry){.arc = find_arc(t, what), .at_s = at, .gbps = g};
		a->bg_at[i] = at;
		if (bg[i].arc < 0 && find_hosts(t, what, &bg[i].src, &bg[i].dst) < 0)
			cli_failf("--bg-at: '%s' is neither a link nor two hosts of the topology "
				  "(A-B)",
				  what);
	}
	a->n_bg = inart_emu_schedule_resolve(t, bg, a->n_bg_args, a->bg,
					     (int)(sizeof(a->bg) / sizeof(a->bg[0])), &err);
	if (a->n_bg < 0)
		cli_failf("--bg-at: %s", err.msg);
	for (int i = 0; i < a->n_bg && !a->quiet; i++)
		fprintf(stderr, "inart emu: background %s->%s from %g s: %g Gbit/s\n",
			t->nodes[t->arcs[a->bg[i].arc].from].id,
			t->nodes[t->arcs[a->bg[i].arc].to].id, a->bg[i].at_s, a->bg[i].gbps);
	a->o.bg_changes = a->bg;
	a->o.n_bg_changes = a->n_bg;
}

static void on_progress(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "inart emu: %s\n", msg);
}

/* This program's directory + name (the inart-emu-worker next to inart). */
static char *sibling(const char *name)
{
	char self[PATH_MAX], *dir, *p;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	dir = dirname(self);
	p = malloc(strlen(dir) + strlen(name) + 2);
	if (p != NULL)
		sprintf(p, "%s/%s", dir, name);
	return p;
}

static double max_gbps(const struct inart_topo *t)
{
	double m = 0;

	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		m = t->arcs[e].gbps > m ? t->arcs[e].gbps : m;
	return m;
}

/* The workers' initial timeout for the scaled network (docs/emulator.md):
 * twice the time the slowest link needs to carry a full window of every
 * worker of every job (the most a queue can hold), at least the data
 * plane's 50 ms. */
static double emu_retx_ms(const struct inart_topo *t, const struct inart_jobs *js, int window,
			  double rate_scale)
{
	double slow = INFINITY, workers = 0, ms;

	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		slow = t->arcs[e].gbps < slow ? t->arcs[e].gbps : slow;
	for (int j = 0; j < js->n_jobs; j++)
		workers += js->jobs[j].n_workers;
	ms = 2 * window * workers * 1514 * 8 / (slow * 1e9 * rate_scale) * 1e3;
	return ms > 50 ? ms : 50;
}

/* Per-arc predicted bytes of a run: (push + pull) of the scaled instance,
 * times the header factor and the iterations. */
static double *arc_pred(const struct inart_topo *t, const struct inart_jobs *sjs,
			const struct inart_plan *p, double f, int iters)
{
	struct inart_evaluator *ev = inart_evaluator_create(t, sjs);
	struct inart_eval r;
	double *v = calloc((size_t)inart_topo_n_arcs(t) + 1, sizeof(*v));

	if (ev != NULL && v != NULL && inart_evaluator_run(ev, p, &r, NULL) == 0)
		for (int e = 0; e < inart_topo_n_arcs(t); e++)
			v[e] = (r.arc_push_gbit[e] + r.arc_pull_gbit[e]) * 1e9 / 8 * f * iters;
	inart_evaluator_destroy(ev);
	return v;
}

static double eval_time(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *p, const char *name)
{
	struct inart_err err = {{0}};
	struct inart_eval r;
	struct inart_evaluator *ev = cli_evaluate(t, js, p, name, &r, &err);
	double s;

	if (ev == NULL)
		cli_fail(&err);
	s = r.comm_time_s;
	inart_evaluator_destroy(ev);
	return s;
}

static void emit(const struct emu_args *a, const struct inart_emu_report *rep)
{
	char *text = a->fmt == INART_FMT_JSON  ? inart_emu_report_json(rep)
		     : a->fmt == INART_FMT_CSV ? inart_emu_report_csv(rep)
					       : inart_emu_report_table(rep);

	cli_write(a->out, text);
	free(text);
	if (a->png != NULL) {
		char data[PATH_MAX], *d = inart_emu_report_plot_data(rep), *g;
		char *argv[] = {"gnuplot", NULL};
		struct inart_err err = {{0}};
		char out[1024];
		int rc;

		snprintf(data, sizeof(data), "%s.dat", a->png);
		cli_write(data, d);
		g = inart_emu_report_gnuplot(rep, data, a->png);
		rc = inart_emu_cmd(NULL, argv, g, out, sizeof(out), 60000, &err);
		if (rc != 0)
			fprintf(stderr, "inart emu: gnuplot failed (%s): %s\n",
				rc < 0 ? err.msg : "exit status", out);
		else if (!a->quiet)
			fprintf(stderr, "inart emu: chart written to %s (data %s)\n", a->png, data);
		free(d);
		free(g);
	}
}

/* Issue 10: every run's per-iteration time (on packets) at its start time,
 * the controller's installs, and the chart (--dynamics-png). */
static void dynamics(const struct emu_args *a, const struct inart_emu_row *rows, int n)
{
	struct inart_sbuf d = {0}, g = {0};
	char data[PATH_MAX], *dt, *gt, *argv[] = {"gnuplot", NULL}, out[1024];
	struct inart_err err = {{0}};

	for (int i = 0; i < n; i++) {
		const struct inart_emu_result *r = rows[i].r;

		if (r == NULL)
			continue;
		fprintf(stderr, "inart emu: %s: per-iteration communication time on packets:\n",
			rows[i].algorithm);
		inart_sbuf_printf(&d, "# %s: start_s iteration_s\n", rows[i].algorithm);
		for (int k = 0; k < r->iters; k++) {
			if (!(r->iter_s[k] > 0))
				continue;
			fprintf(stderr, "  %3d at %7.3f s: %.3f s\n", k + 1, r->iter_t0_s[k],
				r->iter_s[k]);
			inart_sbuf_printf(&d, "%.6f %.6f\n", r->iter_t0_s[k], r->iter_s[k]);
		}
		inart_sbuf_puts(&d, "\n\n");
		if (a->controller && r->ctl_installs >= 0 &&
		    strcmp(rows[i].algorithm, "controller off"))
			fprintf(
			    stderr,
			    "inart emu: %s: controller installed %d plan(s), the first at %.3f s; "
			    "controller CPU %.1f%% of a core\n",
			    rows[i].algorithm, r->ctl_installs, r->ctl_first_install_s,
			    100 * r->ctl_cpu);
	}
	dt = inart_sbuf_finish(&d);
	if (a->dyn_png == NULL || dt == NULL) {
		free(dt);
		return;
	}
	snprintf(data, sizeof(data), "%s.dat", a->dyn_png);
	cli_write(data, dt);
	inart_sbuf_printf(&g,
			  "set terminal pngcairo size 1000,560\nset output '%s'\n"
			  "set xlabel 'time since the first iteration started (s)'\n"
			  "set ylabel 'communication time per iteration, on packets (s)'\n"
			  "set key top right\nset grid\nset logscale y\n",
			  a->dyn_png);
	for (int i = 0; i < a->n_bg_args; i++)
		inart_sbuf_printf(
		    &g,
		    "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb "
		    "'gray40'\nset label '%s' at %g, graph 0.03 rotate left font ',8'\n",
		    a->bg_at[i], a->bg_at[i], a->bg_arg[i], a->bg_at[i]);
	inart_sbuf_puts(&g, "plot ");
	for (int i = 0; i < n; i++)
		inart_sbuf_printf(&g, "%s'%s' index %d using 1:2 with linespoints title '%s'",
				  i ? ", " : "", data, i, rows[i].algorithm);
	inart_sbuf_puts(&g, "\n");
	gt = inart_sbuf_finish(&g);
	if (gt == NULL || inart_emu_cmd(NULL, argv, gt, out, sizeof(out), 60000, &err) != 0)
		fprintf(stderr, "inart emu: gnuplot failed: %s\n", gt ? out : "out of memory");
	else if (!a->quiet)
		fprintf(stderr, "inart emu: dynamics chart written to %s (data %s)\n", a->dyn_png,
			data);
	free(dt);
	free(gt);
}

/* One execution: the inputs, the plans and their rows, the scaled jobs. */
struct emu_exec {
	const char *cmd, *topo_path, *jobs_path, *plan_path;
	struct emu_args *a;
	struct inart_topo *t;
	struct inart_jobs *js, *sjs;
	int n; /* plans (rows) */
	struct inart_plan **plans;
	struct inart_emu_row *rows;
	long *values; /* per job, of the scaled instance */
	char *worker;
	double f;	      /* header factor */
	double best, slowest; /* model times of the plans */
	int cores;
	char io[128]; /* the switches' I/O back ends (inart_emu_switch_io) */
};

/* Load the inputs and fill in the network options: scales, timeouts, the
 * programs; fails (exit) on anything the machine cannot run. */
static void exec_setup(struct emu_exec *x)
{
	struct emu_args *a = x->a;
	emu_need_root(x->cmd);
	if (strcmp(x->topo_path, "-") == 0 || strcmp(x->jobs_path, "-") == 0 ||
	    (x->plan_path && strcmp(x->plan_path, "-") == 0))
		cli_usage_error(x->cmd, "files must be named (the workers read them too), not '-'");
	x->t = cli_load_topo(x->topo_path);
	x->js = cli_load_jobs(x->jobs_path, x->t);
	resolve_faults(x->cmd, a, x->t);
	if (a->rate_scale == 0)
		a->rate_scale = a->mbps / (max_gbps(x->t) * 1e3);
	a->o.net.rate_scale = a->rate_scale;
	a->o.net.pace_scale = a->pace * a->rate_scale;
	a->o.net.pace_lead_ms = a->pace_lead_ms;
	if (a->o.net.retx_ms == 0)
		a->o.net.retx_ms = emu_retx_ms(x->t, x->js, a->o.net.window, a->rate_scale);
	if (a->o.net.flush_ms == 0)
		a->o.net.flush_ms = a->o.net.retx_ms;
	emu_check_limits(a, x->t, a->rate_scale);
	if (inart_emu_leftovers(a->prefix, NULL) > 0)
		cli_failf("leftovers of an earlier run with prefix '%s' exist: remove them with "
			  "'inart emu down --prefix %s' or choose another --prefix",
			  a->prefix, a->prefix);
	x->worker = getenv("INART_EMU_WORKER") ? strdup(getenv("INART_EMU_WORKER"))
					       : sibling("inart-emu-worker");
	if (x->worker == NULL || access(x->worker, X_OK) != 0)
		cli_failf("the worker program %s is missing (build it: ninja -C build; or set "
			  "INART_EMU_WORKER)",
			  x->worker ? x->worker : "inart-emu-worker");
	a->o.worker = x->worker;
	a->o.inart = sibling("inart");
	a->o.topo_path = x->topo_path;
	a->o.jobs_path = x->jobs_path;
	a->o.net.prefix = a->prefix;
	if (!a->quiet)
		a->o.progress = on_progress;
}

/* The plans: given (twice: without and with the controller), or one per
 * algorithm (a planner that fails leaves its row "no plan"); their model
 * times. */
static void exec_plans(struct emu_exec *x, const char *const *algos)
{
	struct emu_args *a = x->a;
	struct inart_err err = {{0}};

	for (int i = 0; algos != NULL && algos[i]; i++)
		x->n++;
	if (x->plan_path)
		x->n = a->controller == 2 ? 2 : 1;
	else if (a->controller == 2)
		cli_usage_error(x->cmd, "--controller both goes with 'emu run' (one plan)");
	a->o.controller = a->controller == 1;
	x->plans = calloc((size_t)x->n + 1, sizeof(*x->plans));
	x->rows = calloc((size_t)x->n + 1, sizeof(*x->rows));
	x->values = calloc((size_t)x->js->n_jobs + 1, sizeof(*x->values));
	if (!x->plans || !x->rows || !x->values)
		cli_failf("out of memory");
	x->best = INFINITY;
	for (int i = 0; i < x->n; i++) {
		struct inart_emu_row *row = &x->rows[i];

		if (x->plan_path) {
			x->plans[i] = cli_load_plan(x->plan_path, x->t, x->js);
			row->algorithm = x->plans[i]->algorithm ? x->plans[i]->algorithm : "plan";
			if (a->controller == 2)
				row->algorithm = i == 0 ? "controller off" : "controller on";
		} else {
			struct inart_planner_opt po = {.size = sizeof(po)};

			inart_planner_opt_default(&po); /* ring jobs run too (dp/ring) */
			row->algorithm = algos[i];
			if (a->o.progress)
				fprintf(stderr, "inart emu: planning %s\n", algos[i]);
			if (inart_planner_run(algos[i], x->t, x->js, &po, &x->plans[i], &err) < 0 ||
			    x->plans[i] == NULL) {
				row->status = "no plan";
				x->plans[i] = NULL;
				continue;
			}
		}
		row->model_s =
		    eval_time(x->t, x->js, x->plans[i], x->plan_path ? x->plan_path : algos[i]);
		x->best = row->model_s < x->best ? row->model_s : x->best;
		x->slowest = row->model_s > x->slowest ? row->model_s : x->slowest;
	}
}

/* The scaled instance: message sizes, each plan's scale back to the
 * unscaled model and its per-arc prediction, the iteration timeout. */
static void exec_scale(struct emu_exec *x)
{
	struct emu_args *a = x->a;

	x->f = inart_emu_header_factor(x->js);
	if (a->size_scale == 0)
		a->size_scale = inart_emu_size_scale(x->best, a->target_s, a->rate_scale, x->f);
	inart_emu_values(x->js, a->size_scale, x->values);
	x->sjs = inart_emu_scaled_jobs(x->js, x->values);
	if (x->sjs == NULL)
		cli_failf("out of memory");
	for (int i = 0; i < x->n; i++) {
		if (x->plans[i] == NULL)
			continue;
		x->rows[i].to_unscaled =
		    x->rows[i].model_s /
		    (eval_time(x->t, x->sjs, x->plans[i], "scaled") / a->rate_scale);
		x->rows[i].arc_pred = arc_pred(x->t, x->sjs, x->plans[i], x->f, a->iters);
	}
	if (a->o.iter_timeout_s == 0) {
		double s = 10 * x->slowest * x->f * a->size_scale / a->rate_scale;

		a->o.iter_timeout_s = s > 20 ? s : 20;
	}
	if (a->o.progress)
		fprintf(stderr,
			"inart emu: rate scale %.4g (fastest link %.3g Mbit/s), size scale %.4g, "
			"header factor %.4f, %d iterations\n",
			a->rate_scale, max_gbps(x->t) * 1e3 * a->rate_scale, a->size_scale, x->f,
			a->iters);
}

/* Run plan i on the network (its file: the given one, or written into the
 * run's directory); fails (exit, network removed) on an emulator error.
 * 0, or EXIT_INVALID when the run did not finish or was not exact. */
static int exec_run(struct emu_exec *x, struct inart_emu *e, int i)
{
	struct emu_args *a = x->a;
	struct inart_emu_row *r = &x->rows[i];
	struct inart_err err = {{0}};
	char path[256];

	if (x->plan_path) {
		snprintf(path, sizeof(path), "%s", x->plan_path);
	} else {
		char *s = inart_plan_dump(x->plans[i], x->t, x->js);

		snprintf(path, sizeof(path), "%s/plan-%s.json", inart_emu_network(e)->dir,
			 r->algorithm);
		if (s == NULL || inart_file_write(path, s, &err) < 0) {
			free(s);
			inart_emu_stop(e);
			cli_fail(&err);
		}
		free(s);
	}
	if (a->o.progress)
		fprintf(stderr,
			"inart emu: running %s: predicted %.3f s per iteration on packets\n",
			r->algorithm, r->model_s * x->f / r->to_unscaled);
	if (a->controller == 2)
		inart_emu_set_controller(e, i == 1);
	inart_emu_set_prediction(e, r->model_s * x->f / r->to_unscaled);
	r->r = calloc(1, sizeof(*r->r));
	if (r->r == NULL || inart_emu_run_plan(e, path, x->values, a->iters, r->r, &err) < 0) {
		inart_emu_stop(e);
		cli_fail(&err);
	}
	if (a->o.progress) {
		fprintf(stderr, "inart emu: %s: %s", r->algorithm,
			!r->r->finished ? "FAILED"
			: r->r->exact	? "exact"
					: "WRONG");
		if (r->r->finished)
			fprintf(stderr, ", measured %.3f s (predicted %.3f s)%s",
				inart_emu_row_measured(r) / r->to_unscaled,
				r->model_s * x->f / r->to_unscaled,
				r->r->cpu_bound ? ", CPU-bound" : "");
		fprintf(stderr, "%s%s\n", r->r->why.msg[0] ? ": " : "", r->r->why.msg);
		if (r->r->kernel_switches > 0) { /* issue 25: what the kernel did */
			const uint64_t *k = r->r->kernel;

			fprintf(stderr,
				"inart emu: %s: kernel path on %d switches: %llu frames absorbed, "
				"%llu sent, %llu flushed, %llu to the shapers, %llu punted to "
				"user space (%llu entry, %llu label, %llu other), %llu lost on "
				"full rings\n",
				r->algorithm, r->r->kernel_switches,
				(unsigned long long)k[INART_EMU_K_ABSORBED],
				(unsigned long long)k[INART_EMU_K_SENT],
				(unsigned long long)k[INART_EMU_K_FLUSHED],
				(unsigned long long)k[INART_EMU_K_TO_SHAPER],
				(unsigned long long)k[INART_EMU_K_PUNTED],
				(unsigned long long)k[INART_EMU_K_P_ENTRY],
				(unsigned long long)k[INART_EMU_K_P_LABEL],
				(unsigned long long)(k[INART_EMU_K_PUNTED] -
						     k[INART_EMU_K_P_ENTRY] -
						     k[INART_EMU_K_P_LABEL]),
				(unsigned long long)k[INART_EMU_K_LOST]);
		}
	}
	return r->r->finished && r->r->exact ? EXIT_OK : EXIT_INVALID;
}

static void exec_report(const struct emu_exec *x)
{
	struct inart_emu_report rep;

	memset(&rep, 0, sizeof(rep));
	rep.t = x->t;
	rep.js = x->js;
	rep.rows = x->rows;
	rep.n_rows = x->n;
	rep.rate_scale = x->a->rate_scale;
	rep.size_scale = x->a->size_scale;
	rep.header_factor = x->f;
	rep.loss = x->a->o.loss;
	rep.values = x->values;
	rep.iters = x->a->iters;
	rep.cores = x->cores;
	rep.prefix = x->a->prefix;
	rep.switch_io = x->io;
	emit(x->a, &rep);
}

static void exec_free(struct emu_exec *x)
{
	for (int i = 0; i < x->n; i++) {
		inart_plan_destroy(x->plans[i]);
		inart_emu_result_free(x->rows[i].r);
		free(x->rows[i].r);
		free(x->rows[i].arc_pred);
	}
	free(x->plans);
	free(x->rows);
	free(x->values);
	free(x->worker);
	free((char *)x->a->o.inart);
	free(x->a->algos);
	inart_jobs_destroy(x->sjs);
	inart_jobs_destroy(x->js);
	inart_topo_destroy(x->t);
}

int emu_execute(const char *cmd, struct emu_args *a, const char *topo_path, const char *jobs_path,
		const char *plan_path)
{
	static const char *const def_algos[] = {"inart", "ps", "byteps", "switchml", "atp", NULL};
	struct emu_exec x = {.cmd = cmd,
			     .a = a,
			     .topo_path = topo_path,
			     .jobs_path = jobs_path,
			     .plan_path = plan_path,
			     .cores = (int)sysconf(_SC_NPROCESSORS_ONLN)};
	struct inart_err err = {{0}};
	struct inart_emu *e = NULL;
	int rc = EXIT_OK;

	exec_setup(&x);
	exec_plans(&x, plan_path ? NULL : (a->algos ? (const char *const *)a->algos : def_algos));
	exec_scale(&x);
	if (inart_emu_start(x.t, x.js, &a->o, &e, &err) < 0)
		cli_fail(&err);
	snprintf(x.io, sizeof(x.io), "%s", inart_emu_switch_io(e));
	for (int i = 0; i < x.n; i++)
		if (x.plans[i] != NULL && exec_run(&x, e, i) != EXIT_OK)
			rc = EXIT_INVALID;
	inart_emu_stop(e);
	if (a->o.progress)
		fprintf(stderr, "inart emu: network removed\n");
	if (a->n_bg_args > 0 || a->controller)
		dynamics(a, x.rows, x.n);
	exec_report(&x);
	exec_free(&x);
	return rc;
}
