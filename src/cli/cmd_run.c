/*
 * cmd_run: `inart run [--scenario NAME]` -- the main job: build a built-in
 * scenario (scenario.h) and print the comparison of all algorithms on it.
 * --write DIR also saves the scenario's topo.json and jobs.json, so that it
 * can be fed to the other subcommands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cp/model/scenario.h"
#include "cli/util.h"

const char cmd_run_help[] =
    "usage: inart run [--scenario NAME] [--format table|csv|json] [--algos A,B,..]\n"
    "                 [--write DIR] [--list] [OPTIONS]\n"
    "\n"
    "Build a built-in scenario (a generated topology and seeded jobs) and compare\n"
    "all algorithms on it, as 'inart compare' does.  Without --scenario the\n"
    "'default' scenario is used.\n"
    "\n"
    "Options:\n"
    "  -s, --scenario NAME    scenario to build (--list shows them)\n"
    "  -l, --list             list the scenarios and exit\n"
    "  -w, --write DIR        also write DIR/topo.json and DIR/jobs.json\n"
    "                         (with --no-compare, only write them)\n"
    "      --no-compare       do not run the algorithms\n"
    "  -f, --format F         table (default), csv or json\n"
    "  -a, --algos A,B,..     algorithms to run, in this order\n" CLI_PLANNER_HELP
    "                         (the seed also places the scenario's jobs)\n"
    "  -o, --output FILE      output file ('-' = stdout)\n"
    "\n"
    "Exit status: 0 success, 1 failure to build the scenario or write files,\n"
    "2 usage error (e.g. unknown scenario).\n";

static void write_scenario(const char *dir, const struct inart_topo *t, const struct inart_jobs *js)
{
	size_t n = strlen(dir) + 16;
	char *path = malloc(n);
	char *text;

	if (path == NULL)
		cli_failf("out of memory");
	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		cli_failf("%s: %s", dir, strerror(errno));
	snprintf(path, n, "%s/topo.json", dir);
	text = inart_topo_dump(t);
	cli_write(path, text);
	free(text);
	snprintf(path, n, "%s/jobs.json", dir);
	text = inart_jobs_dump(js, t);
	cli_write(path, text);
	free(text);
	free(path);
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"scenario", required_argument, NULL, 's'},
	    {"list", no_argument, NULL, 'l'},
	    {"write", required_argument, NULL, 'w'},
	    {"no-compare", no_argument, NULL, 'n'},
	    CLI_COMPARE_LONGOPTS,
	    {"help", no_argument, NULL, 'h'},
	    CLI_PLANNER_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "run", *scenario = "default", *dir = NULL;
	struct cli_compare_out co = CLI_COMPARE_OUT_INIT;
	struct inart_planner_opt opt = {.size = sizeof(opt)};
	struct inart_err err = {{0}};
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	int c, rc = EXIT_OK, list = 0, compare = 1;
	char desc[512];

	inart_planner_opt_default(&opt);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":s:lw:f:a:o:h", longopts, NULL)) != -1) {
		if (cli_planner_opt(cmd, c, optarg, &opt) || cli_compare_opt(cmd, c, optarg, &co))
			continue;
		switch (c) {
		case 's':
			scenario = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'w':
			dir = optarg;
			break;
		case 'n':
			compare = 0;
			break;
		default:
			cli_common_opt(cmd, cmd_run_help, c, argv, NULL);
		}
	}
	if (optind < argc)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (list) {
		for (int i = 0; inart_scenario_names[i]; i++) {
			inart_scenario_describe(inart_scenario_names[i], desc, sizeof(desc));
			printf("%-16s %s\n", inart_scenario_names[i], desc);
		}
		free(co.algos);
		return EXIT_OK;
	}
	if (!inart_scenario_known(scenario))
		cli_usage_error(cmd, "unknown scenario '%s' (see 'inart run --list')", scenario);
	if (inart_scenario_build(scenario, opt.seed, &t, &js, &err) < 0)
		cli_fail(&err);
	if (dir)
		write_scenario(dir, t, js);
	if (compare) {
		inart_scenario_describe(scenario, desc, sizeof(desc));
		fprintf(stderr, "inart run: scenario %s: %s\n", scenario, desc);
		rc = cli_compare_print(t, js, &opt, &co);
	}
	free(co.algos);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return rc;
}
