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
	const char *cmd = "emu run";
	struct emu_args a;

	emu_parse(cmd, argc, argv, help, 0, &a);
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", "PLAN", NULL});
	return emu_execute(cmd, &a, argv[optind], argv[optind + 1], argv[optind + 2]);
}
