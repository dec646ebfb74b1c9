/*
 * ctld: the controller daemon's loop (daemon/ctld.h; docs/controller.md):
 * the files and the deployment loaded, every period a counter round, the
 * PSs' steps, a decision, an install or a drain, the records logged; at
 * the end a summary on diag.
 */
#include "daemon/ctld.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bridge/epoch.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/file.h"
#include "common/sbuf.h"
#include "cp/model/formats.h"
#include "ctl/controller.h"
#include "ctl/estimate.h"
#include "ctl/itertime.h"
#include "ctl/poll.h"
#include "ctlproto/ctlclient.h"
#include "ctlproto/ctlmsg.h"
#include "daemon/installer.h"

void inart_ctld_cfg_default(struct inart_ctld_cfg *cfg)
{
	*cfg = (struct inart_ctld_cfg){.ctl_dir = "/run/inart",
				       .period_ms = 100,
				       .tau_ms = 150,
				       .scale = 1,
				       .iter_window_s = 2,
				       .iter_period_ms = 250,
				       .out = stdout,
				       .diag = stderr};
	inart_ctl_opt_default(&cfg->o);
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
	const struct inart_ctld_cfg *a;
	struct inart_ctl_opt o; /* a->o with the timed re-plan */
	struct inart_installer_cfg ci;
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
	path = inart_installer_ctl_path(r->ci.ctl, r->ci.ctl_dir, r->ci.t, v);
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
	struct inart_err why = {{0}};
	char *text = NULL;
	json_t *rep = NULL, *e;
	size_t i, len;

	if (conn != NULL &&
	    inart_ctl_conn_call(conn, body, sizeof(body) - 1, &text, &len, timeout_ms, &err) == 0 &&
	    inart_ctl_reply_parse(text, len, &rep, &why) == 0)
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
		node_steps(r, in->ps[k].node, INART_INSTALLER_TIMEOUT_MS, steps);
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
	rc = inart_installer_run(&r->ci, p, r->a->diag, id, NULL, &err);
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
	rc = inart_installer_run(&r->ci, p, r->a->diag, id, &built, err);
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
			fprintf(r->a->diag, "inart controller: warning: %s: %s\n", path,
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
		rc = inart_installer_run(&r->ci, p, r->a->diag, id, NULL, &err);
	r->installs++;
	if (rc < 0) {
		r->install_failures++;
		inart_controller_revert(r->c);
		fprintf(r->a->diag,
			"inart controller: installing epoch %llu failed (%s); back to the previous "
			"plan\n",
			(unsigned long long)epoch, err.msg);
	} else
		mark_ps(r, p);
	log_event(r, "install", epoch, id, rc == 0, inart_now_s() - t1, rc == 0 ? "" : err.msg);
}

/* The samples the estimator set aside, by cause (ctl/estimate.h). */
static void print_anomalies(FILE *diag, const struct inart_estimator *e)
{
	struct inart_est_anomalies an;

	inart_estimator_anomalies(e, &an);
	fprintf(
	    diag,
	    "inart controller: samples set aside: %llu switch restarts, %llu counters went back, "
	    "%llu jumps above 4x a link, %llu inconsistent (INA > total)\n",
	    (unsigned long long)an.restarts, (unsigned long long)an.went_back,
	    (unsigned long long)an.jumps, (unsigned long long)an.inconsistent);
}

static int loop(struct run *r, struct inart_poller *pl, struct inart_estimator *e,
		const struct inart_topo *t, struct inart_err *ret)
{
	double period = r->a->period_ms / 1e3, next = inart_now_s(), cpu0 = cpu_s();
	struct cpu_acct *acct = &r->acct;
	long replans, skipped;
	const char *last_why = NULL;
	int last_silent = -1, periods = 0;
	enum inart_ctl_action last_act = INART_CTL_KEEP;

	r->t0 = next;
	log_start(r);
	while (!(r->a->stop != NULL && *r->a->stop) &&
	       (r->a->duration <= 0 || inart_now_s() - r->t0 < r->a->duration)) {
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
				    r->a->diag,
				    "inart controller: switch '%s' does not answer (%s); keeping "
				    "the plan\n",
				    t->nodes[silent].id, err.msg[0] ? err.msg : "no reply");
			else if (last_silent >= 0)
				fprintf(r->a->diag,
					"inart controller: every switch answers again\n");
			last_silent = silent;
		}
		poll_iters(r, now - r->t0);
		charge(acct, PH_PS);
		if (inart_controller_decide(r->c, now - r->t0, inart_estimator_bg(e),
					    inart_estimator_ready(e), silent, &d) < 0)
			return inart_err_set(ret, -ENOMEM,
					     "controller: cannot decide (out of memory)");
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
		if (d.action == INART_CTL_SWITCH && !r->a->dry)
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
	fprintf(r->a->diag,
		"inart controller: %d periods in %.1f s, %d switches, %d installs (%d failed), "
		"%lu counter requests failed (%lu connections), %llu counter resets, CPU %.3f s "
		"(%.1f%% of a core)\n",
		periods, inart_now_s() - r->t0, inart_controller_switches(r->c), r->installs,
		r->install_failures, inart_poller_failures(pl), inart_poller_connects(pl),
		(unsigned long long)inart_estimator_resets(e), cpu_s() - cpu0,
		100 * (cpu_s() - cpu0) / (inart_now_s() - r->t0));
	print_anomalies(r->a->diag, e);
	fprintf(r->a->diag, "inart controller: CPU by phase: startup %.3f s", cpu0);
	for (int ph = 0; ph < PH_N; ph++)
		fprintf(r->a->diag, ", %s %.3f s", phase_name[ph], acct->s[ph]);
	replans = inart_controller_replans(r->c, &skipped);
	fprintf(r->a->diag, " (%ld re-plans, %ld skipped: no load moved that matters)\n", replans,
		skipped);
	fputs("inart controller: iteration times (PS steps, last", r->a->diag);
	fprintf(r->a->diag, " %.1f s):", r->a->iter_window_s);
	for (int j = 0; j < r->ci.js->n_jobs; j++)
		if (isfinite(r->iter[j]))
			fprintf(r->a->diag, " %s %.4f s", r->ci.js->jobs[j].id, r->iter[j]);
		else
			fprintf(r->a->diag, " %s unknown", r->ci.js->jobs[j].id);
	fputc('\n', r->a->diag);
	return 0;
}

/* Epoch mode (the plan file carries an epoch; the workers follow it): the
 * installation in service and its plan.  0 or -errno with err. */
static int epoch_setup(struct run *r, const char *plan_path, const struct inart_plan *p,
		       struct inart_err *err)
{
	uint32_t from0;
	int rc;

	if ((rc = inart_epoch_load(plan_path, NULL, &r->base_epoch, &from0, err)) < 0)
		return rc;
	r->plan_path = plan_path;
	r->from = calloc((size_t)r->ci.js->n_jobs + 1, sizeof(*r->from));
	if (r->from == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	if (r->base_epoch < 0)
		return 0;
	if (r->a->restart)
		return inart_err_set(err, INART_CTLD_EUSAGE,
				     "--restart-jobs: not with a plan of an epoch (its "
				     "workers move to the next epoch)");
	r->ci.epoch = r->base_epoch;
	if ((rc = inart_installer_build(&r->ci, p, &r->cur_in, err)) < 0)
		return rc;
	r->cur_plan = inart_plan_clone(p);
	r->cur_epoch = (uint64_t)r->base_epoch;
	if (r->cur_plan == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Every switch's control socket: the deployment's, else DIR/<id>.sock
 * (NULL for the other nodes); NULL + errno. */
static char **switch_paths(const struct inart_topo *t, char **ctl, const char *dir)
{
	char **paths = calloc((size_t)t->n_nodes + 1, sizeof(char *));

	for (int v = 0; paths != NULL && v < t->n_nodes; v++) {
		if (t->nodes[v].kind != INART_NODE_SWITCH)
			continue;
		paths[v] = inart_installer_ctl_path(ctl, dir, t, v);
		if (paths[v] == NULL) {
			for (int u = 0; u < v; u++)
				free(paths[u]);
			free(paths);
			return inart_null_errno(ENOMEM);
		}
	}
	return paths;
}

/* What a run loads and opens (all NULL-safe to free). */
struct held {
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_deploy *d;
	char **ctl, **paths;
	struct inart_install_opt opt;
	struct inart_estimator *e;
	struct inart_poller *pl;
};

static void run_free(struct run *r, struct held *h)
{
	int n = h->t != NULL ? h->t->n_nodes : 0;

	if (r->log != NULL && r->log != r->a->out)
		fclose(r->log);
	for (int v = 0; h->paths != NULL && v < n; v++)
		free(h->paths[v]);
	free(h->paths);
	inart_poller_destroy(h->pl);
	inart_controller_destroy(r->c);
	inart_install_destroy(r->cur_in);
	inart_install_destroy(r->old_in);
	inart_plan_destroy(r->cur_plan);
	free(r->from);
	inart_itertime_destroy(r->it);
	free(r->ps_node);
	for (int v = 0; r->ps_conn != NULL && v < n; v++)
		inart_ctl_conn_destroy(r->ps_conn[v]);
	free(r->ps_conn);
	free(r->steps);
	free(r->iter);
	inart_estimator_destroy(h->e);
	inart_deploy_ctl_free(h->ctl, n);
	inart_deploy_destroy(h->d);
	inart_plan_destroy(h->p);
	inart_jobs_destroy(h->js);
	inart_topo_destroy(h->t);
}

/* Load the files, the deployment, the estimator, the controller and the
 * poller into r and h.  0 or -errno with err. */
static int setup(struct run *r, struct held *h, struct inart_err *err)
{
	const struct inart_ctld_cfg *a = r->a;
	struct inart_est_opt eo;
	int rc, e_errno;

	if ((h->t = inart_topo_load(a->topo, err)) == NULL ||
	    (h->js = inart_jobs_load(a->jobs, h->t, err)) == NULL ||
	    (h->p = inart_plan_load(a->plan, h->t, h->js, err)) == NULL ||
	    (h->d = inart_installer_deploy_load(a->deploy, h->t, &h->ctl, &h->opt, err)) == NULL)
		return -EINVAL;
	r->ci = (struct inart_installer_cfg){.t = h->t,
					     .js = h->js,
					     .d = h->d,
					     .ctl = h->ctl,
					     .ctl_dir = a->ctl_dir,
					     .opt = &h->opt,
					     .learn = a->learn,
					     .restart = a->restart,
					     .epoch = -1,
					     .warn = a->diag};
	if ((rc = epoch_setup(r, a->plan, h->p, err)) < 0)
		return rc;
	r->it = inart_itertime_create(h->js->n_jobs, a->iter_window_s);
	r->ps_node = calloc((size_t)h->t->n_nodes + 1, 1);
	r->ps_conn = calloc((size_t)h->t->n_nodes + 1, sizeof(*r->ps_conn));
	r->steps = calloc((size_t)h->js->n_jobs + 1, sizeof(*r->steps));
	r->iter = calloc((size_t)h->js->n_jobs + 1, sizeof(*r->iter));
	if (r->it == NULL || r->ps_node == NULL || r->ps_conn == NULL || r->steps == NULL ||
	    r->iter == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	r->iter_last = -INFINITY;
	for (int j = 0; j < h->js->n_jobs; j++)
		r->iter[j] = NAN;
	mark_ps(r, h->p);
	r->log = a->out;
	if (a->log != NULL && strcmp(a->log, "-") != 0) {
		r->log = fopen(a->log, "w");
		if (r->log == NULL)
			return inart_err_set(err, -errno, "%s: %s", a->log, strerror(errno));
	}
	inart_est_opt_default(&eo);
	eo.tau_s = a->tau_ms / 1e3;
	eo.scale_bps = a->scale * 1e9;
	eo.stale_s = 3.5 * a->period_ms / 1e3;
	h->e = inart_estimator_create(h->t, &eo, h->d->port);
	e_errno = errno;
	r->replan = (struct timed_replan){.acct = &r->acct, .algorithm = a->o.algorithm};
	r->o = a->o;
	r->o.replan = timed_replan;
	r->o.replan_arg = &r->replan;
	r->c = inart_controller_create(h->t, h->js, h->p, &r->o, err);
	if (h->e == NULL)
		return inart_err_set(err, -e_errno, "controller: %s", strerror(e_errno));
	if (r->c == NULL)
		return -EINVAL;
	h->paths = switch_paths(h->t, h->ctl, a->ctl_dir);
	if (h->paths == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	h->pl = inart_poller_create(h->t, h->paths, a->period_ms < 50 ? 50 : (int)a->period_ms);
	if (h->pl == NULL)
		return inart_err_set(err, -errno, "controller: %s", strerror(errno));
	return 0;
}

int inart_ctld_run(const struct inart_ctld_cfg *cfg, struct inart_err *err)
{
	struct run r = {0};
	struct held h = {0};
	int rc;

	if (cfg->topo == NULL || cfg->jobs == NULL || cfg->plan == NULL || cfg->ctl_dir == NULL ||
	    cfg->out == NULL || cfg->diag == NULL || !(cfg->period_ms >= 10))
		return inart_err_set(err, -EINVAL, "controller: incomplete configuration");
	r.a = cfg;
	rc = setup(&r, &h, err);
	if (rc == 0)
		rc = loop(&r, h.pl, h.e, h.t, err);
	run_free(&r, &h);
	return rc;
}
