/*
 * cmd_compare: `inart compare TOPO JOBS [--format F] [--algos a,b]` -- every
 * algorithm on one input through inart_compare_run, printed as a table, CSV
 * or JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"

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

/* Shared with `inart run`: run, format and write. */
int cli_compare_print(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const char *const *algos,
		      enum inart_compare_format fmt, const char *out);

int cli_compare_print(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const char *const *algos,
		      enum inart_compare_format fmt, const char *out)
{
	struct inart_err err = {{0}};
	struct inart_compare cmp;
	char *text;

	if (inart_compare_run(t, js, opt, algos, &cmp, &err) < 0)
		cli_fail(&err);
	text = inart_compare_format(&cmp, fmt);
	cli_write(out, text);
	free(text);
	inart_compare_free(&cmp);
	return EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"algos", required_argument, NULL, 'a'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    CLI_PLANNER_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "compare", *out = "-";
	enum inart_compare_format fmt = INART_FMT_TABLE;
	struct inart_planner_opt opt;
	const char **algos = NULL;
	struct inart_topo *t;
	struct inart_jobs *js;
	int c, rc;

	inart_planner_opt_default(&opt);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":f:a:o:h", longopts, NULL)) != -1) {
		if (cli_planner_opt(cmd, c, optarg, &opt))
			continue;
		switch (c) {
		case 'h':
			fputs(cmd_compare_help, stdout);
			return EXIT_OK;
		case 'f':
			fmt = cli_format(cmd, optarg);
			break;
		case 'a':
			free(algos);
			algos = cli_algos(cmd, optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", NULL});
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	rc = cli_compare_print(t, js, &opt, algos, fmt, out);
	free(algos);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return rc;
}
