/*
 * cmd_controller: `inart controller TOPO JOBS PLAN ...` -- the online
 * controller as a program (docs/controller.md): its options parsed into
 * the daemon's configuration, the loop run by daemon/ctld (counters,
 * estimates, decisions, installs with the `ctl install` transaction of
 * daemon/installer) until SIGINT, SIGTERM or --duration.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ctl.h"
#include "cli/util.h"
#include "daemon/ctld.h"

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
	struct inart_ctld_cfg c;
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
	    {O_PERIOD, "--period-ms", 10, 60000, .d = &a->c.period_ms},
	    {O_TAU, "--tau-ms", 0, 600000, .d = &a->c.tau_ms},
	    {O_SCALE, "--rate-scale", 1e-9, 1e9, .d = &a->c.scale},
	    {O_THRESH, "--threshold", 1e-6, 1, .d = &a->c.o.threshold},
	    {O_HOLD, "--hold-ms", 0, 3600e3, .d = &hold},
	    {O_WINDOW, "--window-s", 0, 1e6, .d = &a->c.o.window_s},
	    {O_RLIMIT, "--replan-limit-ms", 0, 3600e3, .d = &rlimit},
	    {O_RTIMEOUT, "--replan-timeout-ms", 1, 3600e3, .d = &rtimeout},
	    {O_DURATION, "--duration", 0, 1e9, .d = &a->c.duration},
	    {O_SETTLE, "--settle-ms", 0, 3600e3, .d = &settle},
	    {O_RISE, "--rise-ms", 0, 3600e3, .d = &rise},
	    {O_SETTLEF, "--settle-frac", 0, 1, .d = &a->c.o.settle_frac},
	    {O_ITERW, "--iter-window-s", 0.01, 3600, .d = &a->c.iter_window_s},
	    {O_ITERP, "--iter-period-ms", 0, 3600e3, .d = &a->c.iter_period_ms},
	    {O_LOG, "--log", .s = &a->c.log},
	    {O_VERBOSE, "--verbose", .flag = &a->c.verbose},
	    {O_PLANDIR, "--plan-dir", .s = &a->c.plan_dir},
	};
	static const struct option help[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum { N_NUMS = sizeof(nums) / sizeof(nums[0]) };
	struct cli_num rows[N_NUMS + CLI_DEPLOY_ROWS];
	int c;

	memset(a, 0, sizeof(*a));
	inart_ctld_cfg_default(&a->c);
	cli_deploy_args_init(&a->d);
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
	a->c.o.hold_s = hold / 1e3;
	a->c.o.replan_limit_s = rlimit / 1e3;
	a->c.o.replan_timeout_s = rtimeout / 1e3;
	a->c.o.settle_s = settle / 1e3;
	a->c.o.rise_s = rise / 1e3;
}

int cmd_controller(int argc, char **argv)
{
	struct ctl_args a;
	struct inart_err err = {{0}};
	struct sigaction sa;
	int rc;

	parse(argc, argv, &a);
	a.c.topo = argv[optind];
	a.c.jobs = argv[optind + 1];
	a.c.plan = argv[optind + 2];
	a.c.deploy = a.d.aut ? NULL : a.d.deploy;
	a.c.ctl_dir = a.d.ctl_dir;
	a.c.learn = a.d.learn;
	a.c.restart = a.d.restart;
	a.c.dry = a.d.dry;
	a.c.stop = &stop;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = inart_ctld_run(&a.c, &err);
	if (rc == INART_CTLD_EUSAGE)
		cli_usage_error("controller", "%s", err.msg);
	if (rc < 0)
		cli_fail(&err);
	return EXIT_OK;
}
