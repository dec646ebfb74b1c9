/*
 * cmd_controller: `inart controller TOPO JOBS PLAN ...` -- the online
 * controller as a program (docs/controller.md): every period it polls the
 * switches' counters (ctl/poll), estimates the background per link
 * (ctl/estimate), decides (ctl/controller) and installs a new plan with the
 * `ctl install` transaction (cli_ctl_install); a failed install reverts
 * to the previous plan.  Decisions go to the log as JSON lines.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/file.h"
#include "ctlproto/ctlmsg.h"
#include "bridge/epoch.h"
#include "cp/model/formats.h"
#include "cli/ctl.h"
#include "ctl/controller.h"
#include "ctl/estimate.h"
#include "ctl/itertime.h"
#include "ctl/poll.h"
#include "ctlproto/ctlsock.h"
#include "cli/util.h"

const char cmd_controller_help[] =
    "usage: inart controller TOPO JOBS PLAN (--deploy DEPLOY | --auto-deploy) [OPTIONS]\n"
    "\n"
    "Run the online controller over the daemons of an installed PLAN: every\n"
    "period, read every switch's port counters over its control socket,\n"
    "estimate each directed link's background load (bytes minus the jobs' INA\n"
    "bytes, smoothed), re-evaluate PLAN under the measured loads, re-plan when\n"
    "the loads moved, and install a plan that is predicted faster by at least\n"
    "the threshold for the hold time (at most one switch per window) with the\n"
    "transaction of 'inart ctl install'.  A switch that does not answer keeps\n"
    "the plan (said on stderr and in the log).  docs/controller.md.\n"
    "\n"
    "Options:\n"
    "  --deploy FILE          the deployment file (control sockets, settings)\n"
    "  --auto-deploy          the automatic deployment\n"
    "  --ctl-dir DIR          sockets of nodes the deployment gives none (default\n"
    "                         /run/inart)\n"
    "  --period-ms N          counter period (default 100)\n"
    "  --tau-ms N             smoothing time constant of the loads (default 150)\n"
    "  --rate-scale R         wire Gbit/s per model Gbit/s (default 1; the emulator's\n"
    "                         rate scale on an emulated network)\n"
    "  --threshold F          predicted relative gain to switch (default 0.1)\n"
    "  --hold-ms N            the gain must last this long (default 200)\n"
    "  --window-s S           at most one switch per S seconds (default 5)\n"
    "  --replan-limit-ms N    the planner's time limit (default 200)\n"
    "  --replan-timeout-ms N  a re-plan slower than this is discarded (default 500)\n"
    "  --settle-ms N          switch only when no link's load moved by more than\n"
    "  --settle-frac F        F x its capacity over the last N ms (defaults 100,\n"
    "                         0.1; --settle-ms 0: do not wait)\n"
    "  --rise-ms N            a link whose load rose by more than F x its capacity\n"
    "                         within N ms is re-planned for at 95% of it (default\n"
    "                         500; 0: off)\n"
    "  --iter-window-s S      the jobs' iteration times (from the PSs' steps, in\n"
    "                         every decision record and at the end) average over\n"
    "                         S seconds (default 2)\n"
    "  --iter-period-ms N     ask the PSs for their steps every N ms (at most once a\n"
    "                         period; default 250; 0: every period)\n"
    "  --duration S           stop after S seconds (default: at SIGINT/SIGTERM)\n"
    "  --log FILE             decision records, one JSON object a line (default\n"
    "                         stdout)\n"
    "  --verbose              log every period's decision (default: changes,\n"
    "                         re-plans, holds and switches)\n"
    "  --plan-dir DIR         write every plan installed as DIR/plan-EPOCH.json\n"
    "  --dry-run              decide, install nothing\n"
    "  --restart-jobs         each install starts a new run of every job (as\n"
    "                         'ctl install --restart-jobs')\n"
    "  --learn-macs           as 'ctl install --learn-macs' (give it if PLAN was\n"
    "                         installed with it)\n"
    "\n"
    "Exit status: 0 stopped (duration or signal), 1 invalid input or setup failure,\n"
    "2 usage error.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct ctl_args {
	struct cli_deploy_args d;
	const char *log, *plan_dir;
	int verbose;
	double period_ms, tau_ms, scale, duration, iter_window_s, iter_period_ms;
	struct inart_ctl_opt o;
};

/* The options' getopt codes (their names: parse's rows). */
enum {
	O_PERIOD = 1,
	O_TAU,
	O_SCALE,
	O_THRESH,
	O_HOLD,
	O_WINDOW,
	O_RLIMIT,
	O_RTIMEOUT,
	O_DURATION,
	O_LOG,
	O_VERBOSE,
	O_PLANDIR,
	O_SETTLE,
	O_SETTLEF,
	O_ITERW,
	O_ITERP,
	O_RISE,
};
static void parse(int argc, char **argv, struct ctl_args *a)
{
	const char *cmd = "controller";
	double hold = 200, rlimit = 200, rtimeout = 500, settle = 100, rise = 500;
	const struct cli_num nums[] = {
	    {O_PERIOD, "--period-ms", 10, 60000, .d = &a->period_ms},
	    {O_TAU, "--tau-ms", 0, 600000, .d = &a->tau_ms},
	    {O_SCALE, "--rate-scale", 1e-9, 1e9, .d = &a->scale},
	    {O_THRESH, "--threshold", 1e-6, 1, .d = &a->o.threshold},
	    {O_HOLD, "--hold-ms", 0, 3600e3, .d = &hold},
	    {O_WINDOW, "--window-s", 0, 1e6, .d = &a->o.window_s},
	    {O_RLIMIT, "--replan-limit-ms", 0, 3600e3, .d = &rlimit},
	    {O_RTIMEOUT, "--replan-timeout-ms", 1, 3600e3, .d = &rtimeout},
	    {O_DURATION, "--duration", 0, 1e9, .d = &a->duration},
	    {O_SETTLE, "--settle-ms", 0, 3600e3, .d = &settle},
	    {O_RISE, "--rise-ms", 0, 3600e3, .d = &rise},
	    {O_SETTLEF, "--settle-frac", 0, 1, .d = &a->o.settle_frac},
	    {O_ITERW, "--iter-window-s", 0.01, 3600, .d = &a->iter_window_s},
	    {O_ITERP, "--iter-period-ms", 0, 3600e3, .d = &a->iter_period_ms},
	    {O_LOG, "--log", .s = &a->log},
	    {O_VERBOSE, "--verbose", .flag = &a->verbose},
	    {O_PLANDIR, "--plan-dir", .s = &a->plan_dir},
	};
	static const struct option help[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum { N_NUMS = sizeof(nums) / sizeof(nums[0]) };
	struct cli_num rows[N_NUMS + CLI_DEPLOY_ROWS];
	int c;

	memset(a, 0, sizeof(*a));
	inart_ctl_opt_default(&a->o);
	cli_deploy_args_init(&a->d);
	a->period_ms = 100;
	a->tau_ms = 150;
	a->iter_window_s = 2;
	a->iter_period_ms = 250;
	a->scale = 1;
	memcpy(rows, nums, sizeof(nums));
	cli_deploy_rows(&a->d, rows + N_NUMS);
	cli_getopt_reset();
	while ((c = cli_getopt_rows(cmd, argc, argv, ":h", help, rows, N_NUMS + CLI_DEPLOY_ROWS)) !=
	       -1) {
		switch (c) {
		case 'h':
			fputs(cmd_controller_help, stdout);
			exit(EXIT_OK);
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	cli_deploy_check(cmd, "", argc, argv, &a->d);
	a->o.hold_s = hold / 1e3;
	a->o.replan_limit_s = rlimit / 1e3;
	a->o.replan_timeout_s = rtimeout / 1e3;
	a->o.settle_s = settle / 1e3;
	a->o.rise_s = rise / 1e3;
}

static void sleep_until(double t)
{
	double d = t - inart_now_s();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* The process's CPU time (user + system) since it started. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Where the CPU goes (the summary line at exit): each phase's process CPU
 * time, summed over the run. */
enum { PH_COUNTERS, PH_PS, PH_DECIDE, PH_REPLAN, PH_LOG, PH_INSTALL, PH_N };
static const char *const phase_name[PH_N] = {"switch counters", "PS steps", "decisions",
					     "re-plans",	"log",	    "installs"};
struct cpu_acct {
	double s[PH_N];
	double mark; /* cpu_s() at the start of the phase running */
};

/* Charge the CPU since the last mark to phase ph; a new mark. */
static void charge(struct cpu_acct *a, int ph)
{
	double now = cpu_s();

	a->s[ph] += now - a->mark;
	a->mark = now;
}

/* The re-plan as the controller's (inart_ctl_replan_planner), its CPU
 * charged to PH_REPLAN (and taken out of PH_DECIDE, which calls it). */
struct timed_replan {
	struct cpu_acct *acct;
	const char *algorithm;
};

static int timed_replan(void *arg, const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *current, double limit_s, struct inart_plan **out,
			double *elapsed_s, struct inart_err *err)
{
	struct timed_replan *tr = arg;
	int rc;

	charge(tr->acct, PH_DECIDE);
	rc = inart_ctl_replan_planner((void *)tr->algorithm, t, js, current, limit_s, out,
				      elapsed_s, err);
	charge(tr->acct, PH_REPLAN);
	return rc;
}

struct run {
	struct ctl_args *a;
	struct cli_install ci;
	FILE *log;
	struct inart_controller *c;
	double t0;
	int installs, install_failures;
	/* epoch mode (the plan file has an epoch): the file the workers follow,
	 * its first epoch, the installations in service (old: until drained),
	 * the step of each job from which its workers use the new epoch */
	const char *plan_path;
	int64_t base_epoch;
	struct inart_install *cur_in, *old_in;
	struct inart_plan *cur_plan; /* cur_in's plan */
	uint64_t cur_epoch;
	int64_t *from; /* per job; 0: from the workers' next call */
	double drain_since;
	/* the jobs' iteration times (ctl/itertime): the PS nodes polled, per
	 * job its step this period and its seconds per iteration */
	struct inart_itertime *it;
	char *ps_node;
	struct inart_ctl_conn **ps_conn; /* per node: kept connection to a PS (or NULL) */
	int64_t *steps;
	double *iter, iter_last; /* iter_last: the last poll of the PSs */
	struct cpu_acct acct;
	struct timed_replan replan; /* charges the re-plans' CPU to acct */
};

static void log_line(struct run *r, const char *s)
{
	fputs(s, r->log);
	fputc('\n', r->log);
	fflush(r->log);
}

static void log_event(struct run *r, const char *event, uint64_t epoch, const char *id, int ok,
		      double dt, const char *reason)
{
	json_t *o = json_pack("{s:f, s:s, s:I, s:s, s:b, s:f, s:s}", "t", inart_now_s() - r->t0,
			      "event", event, "epoch", (json_int_t)epoch, "id", id, "ok", ok,
			      "install_s", dt, "reason", reason);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	if (s != NULL)
		log_line(r, s);
	free(s);
	json_decref(o);
}

/* The log's first line: t = 0 on CLOCK_MONOTONIC (inart_now_s), so that
 * the records' t can be lined up with other programs' clocks. */
static void log_start(struct run *r)
{
	char s[96];

	snprintf(s, sizeof(s), "{\"t\": 0, \"event\": \"start\", \"clock_s\": %.6f}", r->t0);
	log_line(r, s);
}

/* PS node v's kept control connection (made at the first use), or NULL. */
static struct inart_ctl_conn *ps_conn(struct run *r, int v)
{
	char *path = NULL;

	if (r->ps_conn[v] != NULL)
		return r->ps_conn[v];
	if (r->ci.ctl != NULL && r->ci.ctl[v] != NULL)
		path = strdup(r->ci.ctl[v]);
	else if (asprintf(&path, "%s/%s.sock", r->ci.ctl_dir, r->ci.t->nodes[v].id) < 0)
		path = NULL;
	if (path != NULL)
		r->ps_conn[v] = inart_ctl_conn_create(path);
	free(path);
	return r->ps_conn[v];
}

/* Merge PS node v's newest steps per job (its `stats` "steps", the epoch
 * bit of a job number cleared) into steps[j] (the largest wins).  A PS
 * that does not answer within timeout_ms adds nothing. */
static void node_steps(struct run *r, int v, int timeout_ms, int64_t *steps)
{
	static const char body[] = "{\"op\": \"stats\"}";
	struct inart_ctl_conn *conn = ps_conn(r, v);
	struct inart_err err = {{0}};
	char *text = NULL, why[256];
	json_t *rep = NULL, *e;
	size_t i, len;

	if (conn != NULL &&
	    inart_ctl_conn_call(conn, body, sizeof(body) - 1, &text, &len, timeout_ms, &err) == 0 &&
	    inart_ctl_reply_parse(text, len, &rep, why, sizeof(why)) == 0)
		json_array_foreach(json_object_get(rep, "steps"), i, e)
		{
			json_int_t job = json_integer_value(json_object_get(e, "job"));
			json_int_t st = json_integer_value(json_object_get(e, "step"));
			int j = (int)(job & ~(json_int_t)INART_EPOCH_JOB_BIT);

			if (j >= 0 && j < r->ci.js->n_jobs && st > steps[j])
				steps[j] = st;
		}
	json_decref(rep);
	free(text);
}

/* Each job's newest step at its PSs (steps[j], -1: unknown), from the
 * `stats` of the PSs of installation in. */
static void job_steps(struct run *r, const struct inart_install *in, int64_t *steps)
{
	for (int j = 0; j < r->ci.js->n_jobs; j++)
		steps[j] = -1;
	for (int k = 0; k < in->n_ps; k++)
		node_steps(r, in->ps[k].node, CLI_CTL_TIMEOUT_MS, steps);
}

/* Remember the PSs that plan p gives a share (they are polled for steps). */
static void mark_ps(struct run *r, const struct inart_plan *p)
{
	for (int j = 0; j < r->ci.js->n_jobs && j < p->n_jobs; j++)
		for (int k = 0; k < p->jobs[j].n_ps && k < r->ci.js->jobs[j].n_ps; k++)
			if (p->jobs[j].split[k] > 0)
				r->ps_node[r->ci.js->jobs[j].ps[k]] = 1;
}

/* The jobs' iteration times: every PS that a plan in service gave a share
 * (since the start) asked for its steps, each job's fed to the tracker at
 * the time of the replies (a PS slow to answer on a busy machine must not
 * date its step back to before the request). */
static void poll_iters(struct run *r, double now)
{
	int nj = r->ci.js->n_jobs;

	if (now - r->iter_last < r->a->iter_period_ms / 1e3)
		return;
	r->iter_last = now;

	for (int j = 0; j < nj; j++)
		r->steps[j] = -1;
	for (int v = 0; v < r->ci.t->n_nodes; v++)
		if (r->ps_node[v])
			node_steps(r, v, r->a->period_ms < 50 ? 50 : (int)r->a->period_ms,
				   r->steps);
	now = inart_now_s() - r->t0;
	for (int j = 0; j < nj; j++) {
		inart_itertime_feed(r->it, j, now, r->steps[j]);
		r->iter[j] = inart_itertime_get(r->it, j);
	}
}

/* The plan file the workers follow: p with "epoch": {"n", "from_step"}. */
static int write_plan(struct run *r, const struct inart_plan *p, uint64_t epoch,
		      struct inart_err *err)
{
	char *text = inart_plan_dump(p, r->ci.t, r->ci.js), *out = NULL;
	json_t *o = text ? json_loads(text, 0, NULL) : NULL, *fs = json_object();
	int rc = -ENOMEM;

	for (int j = 0; j < r->ci.js->n_jobs; j++)
		if (r->from[j] > 0)
			json_object_set_new(fs, r->ci.js->jobs[j].id, json_integer(r->from[j]));
	if (o != NULL) {
		json_object_set_new(
		    o, "epoch", json_pack("{s:I, s:o}", "n", (json_int_t)epoch, "from_step", fs));
		fs = NULL;
		out = json_dumps(o, JSON_INDENT(1));
	}
	rc = out != NULL ? inart_file_write(r->plan_path, out, err)
			 : inart_err_set(err, -ENOMEM, "out of memory");
	json_decref(fs);
	json_decref(o);
	free(out);
	free(text);
	return rc;
}

/* Epoch mode: the old epoch's tables go when every job's PS trees of the
 * new epoch reached its from_step (its workers moved; a job whose step was
 * unknown at the switch does not hold it back, but then not before 5 s),
 * or now (force). */
static void drain(struct run *r, int force)
{
	const struct inart_plan *p = r->cur_plan;
	uint64_t epoch = r->cur_epoch;
	struct inart_err err = {{0}};
	int64_t *steps;
	double t1 = inart_now_s();
	char id[17];
	int done = 1, rc;

	if (r->old_in == NULL)
		return;
	steps = calloc((size_t)r->ci.js->n_jobs + 1, sizeof(*steps));
	if (steps == NULL)
		return;
	if (!force) {
		int known = 0;

		job_steps(r, r->cur_in, steps);
		for (int j = 0; j < r->ci.js->n_jobs; j++)
			if (r->from[j] > 0) {
				known = 1;
				if (steps[j] < r->from[j])
					done = 0; /* its workers have not all moved */
			}
		if (!known && t1 - r->drain_since < 5.0)
			done = 0; /* no job was running: give late workers 5 s */
	}
	free(steps);
	if (!done)
		return;
	r->ci.epoch = (int64_t)epoch;
	r->ci.old = NULL;
	r->ci.tables_only = 1;
	rc = cli_ctl_install(&r->ci, p, stderr, id, NULL, &err);
	log_event(r, "drain", epoch, id, rc == 0, inart_now_s() - t1, rc == 0 ? "" : err.msg);
	if (rc == 0) {
		inart_install_destroy(r->old_in);
		r->old_in = NULL;
	}
}

/* Epoch mode: both epochs' tables, then the plan file with the step each
 * job moves at: its PSs' newest step (read after the install) + 2 + the
 * steps it runs in 0.2 s at the rate seen across the install (every worker
 * reads the file at the start of each call, so all have read it by then).
 * 0 or -errno. */
static int install_epoch(struct run *r, const struct inart_plan *p, uint64_t epoch, char id[17],
			 struct inart_err *err)
{
	struct inart_install *built = NULL;
	int nj = r->ci.js->n_jobs;
	int64_t *s1 = calloc((size_t)nj + 1, sizeof(*s1)),
		*s2 = calloc((size_t)nj + 1, sizeof(*s2));
	double t1, t2;
	int rc;

	if (s1 == NULL || s2 == NULL) {
		free(s1);
		free(s2);
		return inart_err_set(err, -ENOMEM, "out of memory");
	}
	t1 = inart_now_s();
	job_steps(r, r->cur_in, s1);
	r->ci.epoch = (int64_t)epoch;
	r->ci.old = r->cur_in;
	r->ci.tables_only = 1;
	rc = cli_ctl_install(&r->ci, p, stderr, id, &built, err);
	r->ci.old = NULL;
	if (rc == 0) {
		job_steps(r, r->cur_in, s2);
		t2 = inart_now_s();
		for (int j = 0; j < nj; j++) {
			double rate = s1[j] >= 0 && s2[j] > s1[j] && t2 > t1
					  ? (double)(s2[j] - s1[j]) / (t2 - t1)
					  : 0;

			r->from[j] = s2[j] >= 0 ? s2[j] + 2 + (int64_t)(rate * 0.2 + 0.999) : 0;
		}
		rc = write_plan(r, p, epoch, err);
		r->old_in = r->cur_in;
		r->cur_in = built;
		inart_plan_destroy(r->cur_plan);
		r->cur_plan = inart_plan_clone(p);
		r->cur_epoch = epoch;
		r->drain_since = inart_now_s();
	}
	free(s1);
	free(s2);
	return rc;
}

/* Install the controller's plan (its epoch e); a failure reverts.  One
 * record. */
static void install(struct run *r, uint64_t e)
{
	const struct inart_plan *p = inart_controller_plan(r->c);
	uint64_t epoch = r->base_epoch >= 0 ? (uint64_t)r->base_epoch + e : e;
	struct inart_err err = {{0}};
	double t1 = inart_now_s();
	char id[17] = "";
	int rc = 0;

	if (r->a->plan_dir != NULL) {
		char path[4096];
		char *text = inart_plan_dump(p, r->ci.t, r->ci.js);

		snprintf(path, sizeof(path), "%s/plan-%llu.json", r->a->plan_dir,
			 (unsigned long long)epoch);
		if (text == NULL || inart_file_write(path, text, &err) < 0)
			fprintf(stderr, "inart controller: warning: %s: %s\n", path,
				text == NULL ? "out of memory" : err.msg);
		free(text);
	}
	if (r->base_epoch >= 0 && r->old_in != NULL) {
		/* two epochs in service and a job not moved yet: no third */
		inart_controller_revert(r->c);
		log_event(r, "deferred", epoch, "", 0, 0,
			  "the previous epoch is still in use (a job has not moved yet)");
		return;
	}
	if (r->base_epoch >= 0)
		rc = install_epoch(r, p, epoch, id, &err);
	else
		rc = cli_ctl_install(&r->ci, p, stderr, id, NULL, &err);
	r->installs++;
	if (rc < 0) {
		r->install_failures++;
		inart_controller_revert(r->c);
		fprintf(stderr,
			"inart controller: installing epoch %llu failed (%s); back to the previous "
			"plan\n",
			(unsigned long long)epoch, err.msg);
	} else
		mark_ps(r, p);
	log_event(r, "install", epoch, id, rc == 0, inart_now_s() - t1, rc == 0 ? "" : err.msg);
}

/* The samples the estimator set aside, by cause (ctl/estimate.h). */
static void print_anomalies(const struct inart_estimator *e)
{
	struct inart_est_anomalies an;

	inart_estimator_anomalies(e, &an);
	fprintf(
	    stderr,
	    "inart controller: samples set aside: %llu switch restarts, %llu counters went back, "
	    "%llu jumps above 4x a link, %llu inconsistent (INA > total)\n",
	    (unsigned long long)an.restarts, (unsigned long long)an.went_back,
	    (unsigned long long)an.jumps, (unsigned long long)an.inconsistent);
}

static int loop(struct run *r, struct inart_poller *pl, struct inart_estimator *e,
		const struct inart_topo *t)
{
	double period = r->a->period_ms / 1e3, next = inart_now_s(), cpu0 = cpu_s();
	struct cpu_acct *acct = &r->acct;
	long replans, skipped;
	const char *last_why = NULL;
	int last_silent = -1, periods = 0;
	enum inart_ctl_action last_act = INART_CTL_KEEP;

	r->t0 = next;
	log_start(r);
	while (!stop && (r->a->duration <= 0 || inart_now_s() - r->t0 < r->a->duration)) {
		struct inart_ctl_decision d;
		struct inart_err err = {{0}};
		struct inart_sbuf b = {0};
		double now;
		int silent;
		char *s;

		acct->mark = cpu_s();
		inart_poller_round(pl, e, &err);
		charge(acct, PH_COUNTERS);
		now = inart_now_s();
		silent = inart_estimator_silent(e, now);
		if (silent != last_silent) {
			if (silent >= 0)
				fprintf(
				    stderr,
				    "inart controller: switch '%s' does not answer (%s); keeping "
				    "the plan\n",
				    t->nodes[silent].id, err.msg[0] ? err.msg : "no reply");
			else if (last_silent >= 0)
				fprintf(stderr, "inart controller: every switch answers again\n");
			last_silent = silent;
		}
		poll_iters(r, now - r->t0);
		charge(acct, PH_PS);
		if (inart_controller_decide(r->c, now - r->t0, inart_estimator_bg(e),
					    inart_estimator_ready(e), silent, &d) < 0)
			cli_failf("controller: cannot decide (out of memory)");
		charge(acct, PH_DECIDE);
		d.iter_s = r->iter;
		if (r->a->verbose || d.action != last_act || d.why != last_why || d.replanned ||
		    d.action != INART_CTL_KEEP) {
			inart_ctl_decision_json(&d, t, &b);
			s = inart_sbuf_finish(&b);
			if (s != NULL)
				log_line(r, s);
			free(s);
		}
		last_act = d.action;
		last_why = d.why;
		charge(acct, PH_LOG);
		if (d.action == INART_CTL_SWITCH && !r->a->d.dry)
			install(r, d.epoch);
		else
			drain(r, 0);
		charge(acct, PH_INSTALL);
		periods++;
		next += period;
		if (next < inart_now_s())
			next = inart_now_s(); /* late: no burst of periods to catch up */
		sleep_until(next);
	}
	fprintf(stderr,
		"inart controller: %d periods in %.1f s, %d switches, %d installs (%d failed), "
		"%lu counter requests failed (%lu connections), %llu counter resets, CPU %.3f s "
		"(%.1f%% of a core)\n",
		periods, inart_now_s() - r->t0, inart_controller_switches(r->c), r->installs,
		r->install_failures, inart_poller_failures(pl), inart_poller_connects(pl),
		(unsigned long long)inart_estimator_resets(e), cpu_s() - cpu0,
		100 * (cpu_s() - cpu0) / (inart_now_s() - r->t0));
	print_anomalies(e);
	fprintf(stderr, "inart controller: CPU by phase: startup %.3f s", cpu0);
	for (int ph = 0; ph < PH_N; ph++)
		fprintf(stderr, ", %s %.3f s", phase_name[ph], acct->s[ph]);
	replans = inart_controller_replans(r->c, &skipped);
	fprintf(stderr, " (%ld re-plans, %ld skipped: no load moved that matters)\n", replans,
		skipped);
	fputs("inart controller: iteration times (PS steps, last", stderr);
	fprintf(stderr, " %.1f s):", r->a->iter_window_s);
	for (int j = 0; j < r->ci.js->n_jobs; j++)
		if (isfinite(r->iter[j]))
			fprintf(stderr, " %s %.4f s", r->ci.js->jobs[j].id, r->iter[j]);
		else
			fprintf(stderr, " %s unknown", r->ci.js->jobs[j].id);
	fputc('\n', stderr);
	return EXIT_OK;
}

/* Epoch mode (the plan file carries an epoch; the workers follow it): the
 * installation in service and its plan.  Exits on an error. */
static void epoch_setup(struct run *r, const char *plan_path, const struct inart_plan *p)
{
	struct inart_err err = {{0}};
	uint32_t from0;

	if (inart_epoch_load(plan_path, NULL, &r->base_epoch, &from0, &err) < 0)
		cli_fail(&err);
	r->plan_path = plan_path;
	r->from = calloc((size_t)r->ci.js->n_jobs + 1, sizeof(*r->from));
	if (r->from == NULL)
		cli_failf("out of memory");
	if (r->base_epoch < 0)
		return;
	if (r->a->d.restart)
		cli_usage_error("controller", "--restart-jobs: not with a plan of an epoch (its "
					      "workers move to the next epoch)");
	r->ci.epoch = r->base_epoch;
	if (cli_ctl_build(&r->ci, p, &r->cur_in, &err) < 0)
		cli_fail(&err);
	r->cur_plan = inart_plan_clone(p);
	r->cur_epoch = (uint64_t)r->base_epoch;
	if (r->cur_plan == NULL)
		cli_failf("out of memory");
}

/* Every switch's control socket: the deployment's, else DIR/<id>.sock. */
static char **switch_paths(const struct inart_topo *t, char **ctl, const char *dir)
{
	char **paths = calloc((size_t)t->n_nodes + 1, sizeof(char *));

	if (paths == NULL)
		cli_failf("out of memory");
	for (int v = 0; v < t->n_nodes; v++) {
		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		if (ctl != NULL && ctl[v] != NULL)
			paths[v] = strdup(ctl[v]);
		else if (asprintf(&paths[v], "%s/%s.sock", dir, t->nodes[v].id) < 0)
			paths[v] = NULL;
		if (paths[v] == NULL)
			cli_failf("out of memory");
	}
	return paths;
}

int cmd_controller(int argc, char **argv)
{
	struct ctl_args a;
	struct run r = {0};
	struct inart_install_opt opt;
	struct inart_est_opt eo;
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	struct inart_estimator *e;
	struct inart_poller *pl;
	struct sigaction sa;
	char **ctl = NULL, **paths;
	int rc;

	parse(argc, argv, &a);
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	p = cli_load_plan(argv[optind + 2], t, js);
	d = cli_deploy_load(&a.d, t, &ctl, &opt);
	r.a = &a;
	r.ci = (struct cli_install){.t = t,
				    .js = js,
				    .d = d,
				    .ctl = ctl,
				    .ctl_dir = a.d.ctl_dir,
				    .opt = &opt,
				    .learn = a.d.learn,
				    .restart = a.d.restart,
				    .epoch = -1};
	epoch_setup(&r, argv[optind + 2], p);
	r.it = inart_itertime_create(js->n_jobs, a.iter_window_s);
	r.ps_node = calloc((size_t)t->n_nodes + 1, 1);
	r.ps_conn = calloc((size_t)t->n_nodes + 1, sizeof(*r.ps_conn));
	r.steps = calloc((size_t)js->n_jobs + 1, sizeof(*r.steps));
	r.iter = calloc((size_t)js->n_jobs + 1, sizeof(*r.iter));
	if (r.it == NULL || r.ps_node == NULL || r.ps_conn == NULL || r.steps == NULL ||
	    r.iter == NULL)
		cli_failf("out of memory");
	r.iter_last = -INFINITY;
	for (int j = 0; j < js->n_jobs; j++)
		r.iter[j] = NAN;
	mark_ps(&r, p);
	r.log = stdout;
	if (a.log != NULL && strcmp(a.log, "-") != 0) {
		r.log = fopen(a.log, "w");
		if (r.log == NULL)
			cli_failf("%s: %s", a.log, strerror(errno));
	}
	inart_est_opt_default(&eo);
	eo.tau_s = a.tau_ms / 1e3;
	eo.scale_bps = a.scale * 1e9;
	eo.stale_s = 3.5 * a.period_ms / 1e3;
	e = inart_estimator_create(t, &eo, d->port);
	r.replan = (struct timed_replan){.acct = &r.acct, .algorithm = a.o.algorithm};
	a.o.replan = timed_replan;
	a.o.replan_arg = &r.replan;
	r.c = inart_controller_create(t, js, p, &a.o, &err);
	if (e == NULL)
		cli_failf("controller: %s", strerror(errno));
	if (r.c == NULL)
		cli_fail(&err);
	paths = switch_paths(t, ctl, a.d.ctl_dir);
	pl = inart_poller_create(t, paths, a.period_ms < 50 ? 50 : (int)a.period_ms);
	if (pl == NULL)
		cli_failf("controller: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = loop(&r, pl, e, t);
	if (r.log != stdout)
		fclose(r.log);
	for (int v = 0; v < t->n_nodes; v++)
		free(paths[v]);
	free(paths);
	inart_poller_destroy(pl);
	inart_controller_destroy(r.c);
	inart_install_destroy(r.cur_in);
	inart_install_destroy(r.old_in);
	inart_plan_destroy(r.cur_plan);
	free(r.from);
	inart_itertime_destroy(r.it);
	free(r.ps_node);
	for (int v = 0; v < t->n_nodes; v++)
		inart_ctl_conn_destroy(r.ps_conn[v]);
	free(r.ps_conn);
	free(r.steps);
	free(r.iter);
	inart_estimator_destroy(e);
	inart_deploy_ctl_free(ctl, t->n_nodes);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return rc;
}
