/*
 * cmd_dot: `inart dot TOPO [JOBS PLAN] [-o FILE]` -- a Graphviz drawing of a
 * topology, or of a plan on it (link utilization and aggregation trees), by
 * inart_dot_render.  The plan is checked by the evaluator first.
 */
#include <stdlib.h>
#include <string.h>

#include "cp/model/dot.h"
#include "cli/util.h"

const char cmd_dot_help[] =
    "usage: inart dot TOPO [JOBS PLAN] [-o FILE]\n"
    "\n"
    "Write a Graphviz (DOT) drawing of TOPO: hosts as boxes, switches as ellipses\n"
    "(INA-capable ones filled).  With JOBS and PLAN, links are coloured (green to\n"
    "red) and thickened by utilization, (push + pull) / residual capacity relative\n"
    "to the most loaded link, and every (job, PS) aggregation tree is drawn on top\n"
    "in its own colour: tree paths solid and labelled job/PS, worker paths that\n"
    "end at an INA switch dashed.  Render with e.g. 'dot -Tsvg FILE > plan.svg'.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE      output file ('-' = stdout)\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or plan, 2 usage error.\n";

int cmd_dot(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "dot", *out = "-";
	struct inart_err err = {{0}};
	struct inart_evaluator *evr = NULL;
	struct inart_topo *t;
	struct inart_jobs *js = NULL;
	struct inart_plan *p = NULL;
	struct inart_eval ev;
	char *text;
	int c, n;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1)
		cli_common_opt(cmd, cmd_dot_help, c, argv, &out);
	n = argc - optind;
	if (n == 0)
		cli_usage_error(cmd, "missing TOPO");
	if (n == 2)
		cli_usage_error(cmd, "missing PLAN (JOBS and PLAN go together)");
	if (n > 3)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 3]);
	t = cli_load_topo(argv[optind]);
	if (n == 3) {
		js = cli_load_jobs(argv[optind + 1], t);
		p = cli_load_plan(argv[optind + 2], t, js);
		evr = cli_evaluate(t, js, p, argv[optind + 2], &ev, &err);
		if (evr == NULL)
			cli_fail(&err);
	}
	text = inart_dot_render(t, js, p, p ? &ev : NULL);
	cli_write(out, text);
	free(text);
	inart_evaluator_destroy(evr);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return EXIT_OK;
}
