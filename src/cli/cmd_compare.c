/*
 * cmd_compare: `inart compare TOPO JOBS [--format F] [--algos a,b]` -- every
 * algorithm on one input through inart_compare_run, printed as a table, CSV
 * or JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/util.h"

const char cmd_compare_help[] =
    "usage: inart compare TOPO JOBS [--format table|csv|json] [--algos A,B,..] [OPTIONS]\n"
    "\n"
    "Run the algorithms (default: all, see 'inart plan --help') on one input and\n"
    "print, per algorithm: communication, push and pull time, the reduction versus\n"
    "the best baseline (ps, byteps, switchml, atp; marked '*'), the ratio to the LP\n"
    "lower bound (the 'lp' row), the planning time and a status (ok, or why the\n"
    "algorithm has no result, e.g. milp timed out).\n"
    "\n"
    "Options:\n"
    "  -f, --format F         table (default), csv or json\n"
    "  -a, --algos A,B,..     algorithms to run, in this order\n" CLI_PLANNER_HELP
    "  -o, --output FILE      output file ('-' = stdout)\n"
    "\n"
    "Exit status: 0 success (even if some algorithm has no result), 1 invalid\n"
    "input, 2 usage error.\n";

/* Shared with `inart run` (util.h): run, format and write. */
int cli_compare_print(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const struct cli_compare_out *o)
{
	struct inart_err err = {{0}};
	struct inart_compare cmp;
	char *text;

	if (inart_compare_run(t, js, opt, o->algos, &cmp, &err) < 0)
		cli_fail(&err);
	text = inart_compare_format(&cmp, o->fmt);
	cli_write(o->path, text);
	free(text);
	inart_compare_free(&cmp);
	return EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMPARE_LONGOPTS,
	    {"help", no_argument, NULL, 'h'},
	    CLI_PLANNER_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "compare";
	struct cli_compare_out co = CLI_COMPARE_OUT_INIT;
	struct inart_planner_opt opt = {.size = sizeof(opt)};
	struct inart_topo *t;
	struct inart_jobs *js;
	int c, rc;

	inart_planner_opt_default(&opt);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":f:a:o:h", longopts, NULL)) != -1) {
		if (cli_planner_opt(cmd, c, optarg, &opt) || cli_compare_opt(cmd, c, optarg, &co))
			continue;
		cli_common_opt(cmd, cmd_compare_help, c, argv, NULL);
	}
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", NULL});
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	rc = cli_compare_print(t, js, &opt, &co);
	free(co.algos);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return rc;
}
