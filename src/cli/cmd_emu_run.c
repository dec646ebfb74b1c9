/*
 * cmd_emu_run: `inart emu run TOPO JOBS PLAN` -- one plan on the emulated
 * network (build, run, remove; emu_cli.h).
 */
#include "cli/emu_cli.h"

int cmd_emu_run(int argc, char **argv)
{
	return emu_action("emu run", argc, argv,
			  "usage: inart emu run TOPO JOBS PLAN [OPTIONS]\n\n"
			  "Build TOPO as an emulated network (root), install PLAN, run --iters\n"
			  "iterations of every job at once, remove the network and print measured\n"
			  "against predicted communication time (times of the unscaled instance),\n"
			  "per job, per link (JSON), with the CPU-bound flag.\n"
			  "\nOptions:\n" EMU_HELP_COMMON "\n" EMU_HELP_EXIT,
			  0);
}
