/*
 * cmd_emu_compare: `inart emu compare TOPO JOBS` -- every algorithm's plan
 * on the same emulated network, one after the other (emu_cli.h).
 */
#include "cli/emu_cli.h"

static const char help[] =
    "usage: inart emu compare TOPO JOBS [--algos A,B,..] [OPTIONS]\n"
    "\n"
    "Plan JOBS on TOPO with every algorithm (default inart,ps,byteps,switchml,atp),\n"
    "build the emulated network once (root), run each plan on it in turn, remove\n"
    "it, and print per algorithm the predicted and measured communication time\n"
    "(unscaled instance), their ratio, InArt's reduction against each baseline,\n"
    "exactness, the CPU-bound flag and the targets (PASS/MISS).\n"
    "\n"
    "Options:\n"
    "  -a, --algos A,B,.. algorithms, in this order\n" EMU_HELP_COMMON "\n" EMU_HELP_EXIT;

int cmd_emu_compare(int argc, char **argv)
{
	return emu_action("emu compare", argc, argv, help, 1);
}
