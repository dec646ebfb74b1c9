/*
 * ctld: the online controller daemon (`inart controller`,
 * docs/controller.md) as a function over a validated configuration.
 * Every period it polls the switches' counters (ctl/poll), estimates the
 * background per link (ctl/estimate), asks the PSs for their steps
 * (ctl/itertime), decides (ctl/controller) and installs a new plan with the
 * transaction of `inart ctl install` (daemon/installer); a failed install
 * reverts to the previous plan.  With a plan of an epoch it installs the
 * next epoch beside the one in service, rewrites the plan file the workers
 * follow and drains the old epoch once every job moved.  Decisions and
 * events go to the log as JSON lines, diagnostics to cfg->diag.
 *
 * It never exits: errors come back as -errno with err saying why.  It
 * returns when *cfg->stop is set (a signal handler of the caller's) or
 * after cfg->duration seconds.
 *
 * Ownership: the configuration is the caller's and is not changed; the
 * daemon owns everything it loads and opens, and frees it before it
 * returns.
 */
#ifndef INART_DAEMON_CTLD_H
#define INART_DAEMON_CTLD_H

#include <signal.h>
#include <stdio.h>

#include "ctl/controller.h"

/* The return of inart_ctld_run for options that do not go with the plan
 * given (a usage error: the program exits 2). */
#define INART_CTLD_EUSAGE (-EDOM)

struct inart_ctld_cfg {
	const char *topo, *jobs, *plan; /* the files: the plan installed now */
	const char *deploy;		/* the deployment file; NULL: the automatic one */
	const char *ctl_dir;		/* sockets of nodes the deployment gives none */
	int learn, restart, dry;	/* as `ctl install --learn-macs`, --restart-jobs;
					   dry: decide, install nothing */
	const char *log;		/* decision records; NULL or "-": out */
	const char *plan_dir;		/* NULL, or write every plan installed there */
	int verbose;			/* log every period's decision */
	double period_ms;		/* counter period, >= 10 */
	double tau_ms;			/* smoothing time constant of the loads */
	double scale;			/* wire Gbit/s per model Gbit/s */
	double duration;		/* seconds; <= 0: until *stop */
	double iter_window_s;		/* the iteration times average over this */
	double iter_period_ms;		/* ask the PSs for their steps this often */
	struct inart_ctl_opt o;		/* decisions (replan, replan_arg: the daemon's) */
	FILE *out;			/* the log by default (stdout) */
	FILE *diag;			/* messages, the install tables, the summary */
	volatile sig_atomic_t *stop;	/* set: the loop ends (NULL: never) */
};

/* The defaults of `inart controller`'s options (--help), no files, out
 * stdout, diag stderr, ctl_dir /run/inart. */
void inart_ctld_cfg_default(struct inart_ctld_cfg *cfg);

/* Run the controller until *cfg->stop or the duration: 0, or -errno with
 * err (nothing runs on a bad file, deployment or setup failure;
 * INART_CTLD_EUSAGE: an option that does not go with the plan). */
int inart_ctld_run(const struct inart_ctld_cfg *cfg, struct inart_err *err);

#endif
