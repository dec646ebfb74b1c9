/*
 * cmd_emu_run: `inart emu run TOPO JOBS PLAN` -- one plan on the emulated
 * network (build, run, remove; emu_cli.h).
 */
#include "emu_cli.h"

static const char help[] =
    "usage: inart emu run TOPO JOBS PLAN [OPTIONS]\n"
    "\n"
    "Build TOPO as an emulated network (root), install PLAN, run --iters\n"
    "iterations of every job at once, remove the network and print measured\n"
    "against predicted communication time (times of the unscaled instance), per\n"
    "job, per link (JSON), with the CPU-bound flag.\n"
    "\n"
    "Options:\n" EMU_HELP_COMMON "\n"
    "Exit status: 0 success, 1 invalid input or a failed run (not finished or not\n"
    "exact), 2 usage error.\n";

int cmd_emu_run(int argc, char **argv)
{
	static const struct option longopts[] = {EMU_LONGOPTS, {NULL, 0, NULL, 0}};
	const char *cmd = "emu run";
	struct emu_args a;
	int c;

	emu_args_init(&a);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, EMU_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			return EXIT_OK;
		}
		if (c == 'a')
			cli_usage_error(cmd, "--algos goes with 'emu compare'");
		if (!emu_opt(cmd, c, optarg, &a))
			cli_getopt_error(cmd, c, argv);
	}
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", "PLAN", NULL});
	return emu_execute(cmd, &a, argv[optind], argv[optind + 1], argv[optind + 2]);
}
