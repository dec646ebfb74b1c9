/*
 * cmd_emu_exec: `inart emu exec TOPO JOBS --prefix P -- PROGRAM [ARGS]` --
 * run PROGRAM as the ranks of a job in the worker namespaces of a network
 * `inart emu up` left running (emu/exec.h: the environment, the
 * supervision).  Options and operands only; the work is the library's.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "emu/exec.h"
#include "emu/net.h"
#include "cli/emu_cli.h"

static const char help[] =
    "usage: inart emu exec TOPO JOBS --prefix P [OPTIONS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Run PROGRAM once per rank of a job of JOBS, rank r in the namespace of the\n"
    "job's worker r, in the network 'inart emu up TOPO JOBS --prefix P' left\n"
    "running (root); wait for every rank.  Each rank gets torchrun's variables\n"
    "(RANK, WORLD_SIZE, LOCAL_RANK=0, LOCAL_WORLD_SIZE=1, MASTER_ADDR = rank 0's\n"
    "address, MASTER_PORT, GLOO_SOCKET_IFNAME = the host's interface), torchrun's\n"
    "own options as PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE=1,\n"
    "PET_MASTER_ADDR, PET_MASTER_PORT (PROGRAM may be 'python3 -m\n"
    "torch.distributed.run train.py': one agent per namespace), and what the\n"
    "backend \"inart\" reads: INART_TOPO, INART_JOBS, INART_DEPLOY (the run's\n"
    "deployment), INART_JOB, INART_WORKERS, INART_PLAN (with --plan), and\n"
    "INART_EMU_PREFIX.  The plan must be installed first ('inart ctl install\n"
    "TOPO JOBS PLAN --deploy /run/inart-emu/P/deploy.json').\n"
    "When a rank fails the others get --grace seconds, then SIGTERM and, 2 s\n"
    "later, SIGKILL; the same at --timeout.\n"
    "\n"
    "Options:\n"
    "  --prefix P         the run (required)\n"
    "  --job J            the job (default: the jobs file's only job)\n"
    "  --workers A,B,..   the worker of each rank (default: the job's workers in\n"
    "                     order; fewer ranks than workers is allowed)\n"
    "  --plan FILE        INART_PLAN for the ranks\n"
    "  --master-port N    MASTER_PORT (default 29500)\n"
    "  --timeout S        end every rank after S s (default: no limit)\n"
    "  --grace S          after a rank failed, the others' time to end (default 10)\n"
    "  --log-dir DIR      rank r's output to DIR/rank-R.log (default: this terminal)\n"
    "\n"
    "Exit status: 0 every rank exited 0, 1 a rank failed (the first is named) or\n"
    "the ranks could not be started, 2 usage error.\n";

enum {
	OPT_X_JOB = 4001,
	OPT_X_WORKERS,
	OPT_X_PLAN,
	OPT_X_PORT,
	OPT_X_TIMEOUT,
	OPT_X_GRACE,
	OPT_X_LOG_DIR,
};

/* An absolute path for the ranks' environment (it survives a program that
 * changes its working directory). */
static char *abs_path(const char *p)
{
	char *r = realpath(p, NULL);

	if (r == NULL)
		cli_failf("%s: %s", p, strerror(errno));
	return r;
}

/* The rank's worker ids: the list given, or the job's workers. */
static int rank_nodes(const char *cmd, const struct inart_topo *t, const struct inart_job *job,
		      char *list, const char **nodes, int cap)
{
	int n = 0;

	if (list == NULL) {
		for (int i = 0; i < job->n_workers && i < cap; i++)
			nodes[n++] = t->nodes[job->workers[i]].id;
		return n;
	}
	for (char *s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
		int found = 0;

		for (int i = 0; i < job->n_workers; i++)
			found |= strcmp(t->nodes[job->workers[i]].id, s) == 0;
		if (!found)
			cli_usage_error(cmd, "--workers: '%s' is not a worker of job '%s'", s,
					job->id);
		if (n == cap)
			cli_usage_error(cmd, "--workers: more than %d", cap);
		nodes[n++] = s;
	}
	if (n == 0)
		cli_usage_error(cmd, "--workers: empty list");
	return n;
}

/* The job the ranks run: --job, or the jobs file's only one (dies otherwise). */
static const struct inart_job *pick_job(const struct inart_jobs *js, const char *job_id,
					const char *jobs_path)
{
	const struct inart_job *job = NULL;

	for (int j = 0; j < js->n_jobs; j++)
		if (job_id == NULL ? js->n_jobs == 1 : strcmp(js->jobs[j].id, job_id) == 0)
			job = &js->jobs[j];
	if (job == NULL && job_id != NULL)
		cli_failf("%s: no job '%s'", jobs_path, job_id);
	if (job == NULL)
		cli_failf("%s: %d jobs: give --job", jobs_path, js->n_jobs);
	return job;
}

/* The backend's variables for every rank: env_s holds the text, env the
 * NULL-terminated list (INART_PLAN only with a plan). */
static void fill_env(char env_s[7][PATH_MAX + 32], const char *env[8], const char *topo_abs,
		     const char *jobs_abs, const char *plan_abs, const char *prefix,
		     const char *job_id, const char *list)
{
	snprintf(env_s[0], sizeof(env_s[0]), "INART_TOPO=%s", topo_abs);
	snprintf(env_s[1], sizeof(env_s[1]), "INART_JOBS=%s", jobs_abs);
	snprintf(env_s[2], sizeof(env_s[2]), "INART_DEPLOY=%s/%s/deploy.json", INART_EMU_RUN_DIR,
		 prefix);
	snprintf(env_s[3], sizeof(env_s[3]), "INART_JOB=%s", job_id);
	snprintf(env_s[4], sizeof(env_s[4]), "INART_WORKERS=%.*s", PATH_MAX, list);
	snprintf(env_s[5], sizeof(env_s[5]), "INART_PLAN=%s", plan_abs ? plan_abs : "");
	for (int i = 0; i < 5; i++)
		env[i] = env_s[i];
	env[5] = plan_abs ? env_s[5] : NULL;
	env[6] = NULL;
}

/* A failed run: the first failure, then every rank's exit. */
static void report_ranks(const struct inart_err *err, const struct inart_emu_exec_rank *ranks,
			 const char *const *nodes, int n)
{
	fprintf(stderr, "inart emu exec: %s\n", err->msg);
	for (int r = 0; r < n; r++)
		fprintf(stderr, "inart emu exec: rank %d (%s): %s %d%s\n", r, nodes[r],
			ranks[r].status > 128 ? "signal" : "exit",
			ranks[r].status > 128 ? ranks[r].status - 128 : ranks[r].status,
			ranks[r].stopped ? " (ended by emu exec)" : "");
}

/* The options into o (master port, timeout, grace, log dir, prefix) and
 * the rest; returns the index of "--" (usage errors exit 2), -1 after --help. */
static int parse_args(int argc, char **argv, struct inart_emu_exec_opt *o, const char **job_id,
		      const char **plan, char **workers)
{
	const char *cmd = "emu exec";
	int c, dash = -1;
	const struct option longopts[] = {
	    {"prefix", required_argument, NULL, EMU_OPT_PREFIX},
	    {"job", required_argument, NULL, OPT_X_JOB},
	    {"workers", required_argument, NULL, OPT_X_WORKERS},
	    {"plan", required_argument, NULL, OPT_X_PLAN},
	    {"master-port", required_argument, NULL, OPT_X_PORT},
	    {"timeout", required_argument, NULL, OPT_X_TIMEOUT},
	    {"grace", required_argument, NULL, OPT_X_GRACE},
	    {"log-dir", required_argument, NULL, OPT_X_LOG_DIR},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	cli_getopt_reset();
	while ((c = getopt_long(dash < 0 ? argc : dash, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			return -1;
		case EMU_OPT_PREFIX:
			o->prefix = emu_prefix_arg(cmd, optarg);
			break;
		case OPT_X_JOB:
			*job_id = optarg;
			break;
		case OPT_X_WORKERS:
			*workers = optarg;
			break;
		case OPT_X_PLAN:
			*plan = optarg;
			break;
		case OPT_X_PORT:
			o->master_port = cli_int(cmd, "--master-port", optarg, 1, 65535);
			break;
		case OPT_X_TIMEOUT:
			o->timeout_s = cli_double(cmd, "--timeout", optarg, 0.001, 1e7);
			break;
		case OPT_X_GRACE:
			o->grace_s = cli_double(cmd, "--grace", optarg, 0.001, 1e5);
			break;
		case OPT_X_LOG_DIR:
			o->log_dir = optarg;
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	if (dash < 0 || dash + 1 >= argc)
		cli_usage_error(cmd, "missing '-- PROGRAM [ARGS...]'");
	if ((dash < 0 ? argc : dash) - optind != 2)
		cli_usage_error(cmd, "expected TOPO JOBS before '--'");
	if (o->prefix == NULL)
		cli_usage_error(cmd, "missing --prefix P (of 'inart emu up')");
	return dash;
}

int cmd_emu_exec(int argc, char **argv)
{
	const char *cmd = "emu exec", *job_id = NULL, *plan = NULL, *nodes[256];
	char *workers = NULL, *topo_abs, *jobs_abs, *plan_abs = NULL, list[4096] = "";
	char env_s[7][PATH_MAX + 32];
	const char *env[8];
	struct inart_emu_exec_opt o = {0};
	struct inart_emu_exec_rank ranks[256];
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	const struct inart_job *job = NULL;
	int dash, n, rc;
	o.master_port = 29500;
	o.grace_s = 10;
	dash = parse_args(argc, argv, &o, &job_id, &plan, &workers);
	if (dash < 0)
		return EXIT_OK;
	emu_need_root("exec");
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	job = pick_job(js, job_id, argv[optind + 1]);
	n = rank_nodes(cmd, t, job, workers, nodes, 256);
	for (int r = 0; r < n; r++) /* INART_WORKERS: the ranks' nodes, comma-separated */
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", r ? "," : "",
			 nodes[r]);
	topo_abs = abs_path(argv[optind]);
	jobs_abs = abs_path(argv[optind + 1]);
	if (plan != NULL)
		plan_abs = abs_path(plan);
	fill_env(env_s, env, topo_abs, jobs_abs, plan_abs, o.prefix, job->id, list);
	o.nodes = nodes;
	o.n_ranks = n;
	o.argv = argv + dash + 1;
	o.env = env;
	rc = inart_emu_exec(&o, ranks, &err);
	if (rc == 1)
		report_ranks(&err, ranks, nodes, n);
	free(topo_abs);
	free(jobs_abs);
	free(plan_abs);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	if (rc < 0)
		cli_fail(&err);
	return rc == 0 ? EXIT_OK : EXIT_INVALID;
}
