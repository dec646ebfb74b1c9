/*
 * cmd_plan: `inart plan TOPO JOBS --algo NAME -o PLAN` -- run one algorithm
 * through inart_planner_run and write the plan as JSON; a one-line summary
 * goes to stderr.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp/planner/planner.h"
#include "cli/util.h"

const char cmd_plan_help[] =
    "usage: inart plan TOPO JOBS --algo NAME [OPTIONS] [-o PLAN]\n"
    "\n"
    "Plan the jobs of JOBS on topology TOPO with one algorithm and write the plan\n"
    "as JSON (docs/formats.md) to PLAN (default stdout).  A one-line summary goes\n"
    "to stderr: communication time, the best proven lower bound with its source\n"
    "(lp, cbc, lp-partial) and the gap to it, milp's status (optimal or\n"
    "time limit), the baseline whose routes the guard kept if it did, planning\n"
    "time.  With --progress, or when stderr is a terminal for runs longer than a\n"
    "second, the progress (elapsed time, stage, best time, best bound, gap) goes\n"
    "to stderr too.  When --time-limit is too short for the search's first plan,\n"
    "a notice says so at once, with the time it needs by estimate.\n"
    "\n"
    "Algorithms:\n" CLI_HELP_ALGORITHMS "\n"
    "Options:\n"
    "  -a, --algo NAME        algorithm (default inart)\n" CLI_PLANNER_HELP
    "  --progress             print the progress on stderr (default: when stderr is\n"
    "                         a terminal, after the first second)\n"
    "  -o, --output PLAN      output file ('-' = stdout)\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or no plan (e.g. milp timed out),\n"
    "2 usage error.\n";

/* What the progress hook prints: the time limit (for the notice) and
 * whether every report goes out (--progress) or those after a second
 * (stderr a terminal) or none. */
struct plan_progress {
	double time_limit_s;
	int all, tty;
};

/* The planner reports stages, improvements and, while it improves, at
 * least every second; and once, when the time limit is too short. */
static void progress(const struct inart_planner_progress *pr, void *arg)
{
	const struct plan_progress *pp = arg;

	if (pr->need_s > 0) {
		fprintf(stderr,
			"inart plan: --time-limit %g is too short for the search here: its first "
			"plan needs about %.1f s (raise --time-limit to %.0f or more); returning "
			"the best plan found within the limit (a baseline's if none)\n",
			pp->time_limit_s, pr->need_s, ceil(pr->need_s * 1.2));
		return;
	}
	if (!pp->all && !(pp->tty && pr->elapsed_s >= 1.0))
		return;
	if (isnan(pr->best_s)) { /* a stage before the first plan */
		fprintf(stderr, "inart plan: %6.1f s: no plan yet [%s]\n", pr->elapsed_s,
			pr->step ? pr->step : "");
		return;
	}
	fprintf(stderr, "inart plan: %6.1f s: best %.6g ms", pr->elapsed_s, pr->best_s * 1e3);
	if (pr->bound_s > 0)
		fprintf(stderr, ", bound %.6g ms (%s), gap %.2f%%", pr->bound_s * 1e3,
			pr->bound_source ? pr->bound_source : "?",
			100.0 * (pr->best_s / pr->bound_s - 1));
	fprintf(stderr, " [%s]\n", pr->step ? pr->step : "");
}

/* The one-line summary on stderr: times, bounds (with their source and the
 * gap), milp's status, the guard's replacement, planning time. */
static void summary(const char *algo, const struct inart_plan *p)
{
	fprintf(stderr, "inart plan: %s: comm %.6g ms (push %.6g ms, pull %.6g ms)", algo,
		p->comm_time_s * 1e3, p->push_time_s * 1e3, p->pull_time_s * 1e3);
	if (p->milp_status != INART_MILP_NONE)
		fprintf(stderr, ", %s",
			p->milp_status == INART_MILP_OPTIMAL ? "optimal" : "time limit");
	if (p->best_bound_s > 0 && !(p->ring_bound_s < p->best_bound_s))
		fprintf(stderr, ", best bound %.6g ms (%s, gap %.2f%%)", p->best_bound_s * 1e3,
			inart_bound_source_name(p->bound_source),
			100.0 * (p->comm_time_s / p->best_bound_s - 1));
	else if (p->ring_bound_s > 0) /* plans with ring jobs bound the search lower */
		fprintf(stderr,
			", best bound %.6g ms (with ring jobs; %.6g ms without, %s; gap %.2f%%)",
			p->ring_bound_s * 1e3, p->best_bound_s * 1e3,
			inart_bound_source_name(p->bound_source),
			100.0 * (p->comm_time_s / p->ring_bound_s - 1));
	if (inart_plan_has_ring(p) && strcmp(algo, "ring") != 0)
		fprintf(stderr, ", ring all-reduce jobs (--no-ring: none)");
	if (!isnan(p->lp_bound_s) && p->lp_bound_s > 0 &&
	    !(fabs(p->lp_bound_s - p->best_bound_s) <= 1e-9 * p->lp_bound_s))
		fprintf(stderr, ", LP bound %.6g ms (x%.4f)", p->lp_bound_s * 1e3,
			p->comm_time_s / p->lp_bound_s);
	if (p->origin != NULL)
		fprintf(stderr, ", routes of '%s' (the baseline guard replaced the search's plan)",
			p->origin);
	fprintf(stderr, ", planned in %.3f s\n", p->plan_time_s);
}

int cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"algo", required_argument, NULL, 'a'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    CLI_PLANNER_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "plan", *algo = "inart", *out = "-";
	struct inart_planner_opt opt = {.size = sizeof(opt)};
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p = NULL;
	struct plan_progress pp = {0, 0, isatty(STDERR_FILENO)};
	char *text;
	int c, rc;

	inart_planner_opt_default(&opt);
	opt.progress = progress;
	opt.progress_arg = &pp;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":a:o:h", longopts, NULL)) != -1) {
		if (cli_planner_opt(cmd, c, optarg, &opt))
			continue;
		if (c == 'a')
			algo = optarg;
		else if (c == OPT_PROGRESS)
			pp.all = 1;
		else
			cli_common_opt(cmd, cmd_plan_help, c, argv, &out);
	}
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", NULL});
	if (!inart_algorithm_known(algo))
		cli_usage_error(cmd, "unknown algorithm '%s'", algo);
	pp.time_limit_s = opt.time_limit_s;
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	rc = inart_planner_run(algo, t, js, &opt, &p, &err);
	if (rc < 0) {
		if (err.msg[0] == '\0')
			inart_err_set(&err, rc, "%s: %s", algo, strerror(-rc));
		cli_fail(&err);
	}
	text = inart_plan_dump(p, t, js);
	cli_write(out, text);
	free(text);
	summary(algo, p);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return EXIT_OK;
}
