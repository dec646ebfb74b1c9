/*
 * cmd_emu: `inart emu ACTION` -- the emulated network (docs/emulator.md).
 * Dispatches to up, run, compare, down (one file each, over what they share
 * in emu_cli.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli/emu_cli.h"

const char cmd_emu_help[] =
    "usage: inart emu up TOPO [JOBS] [OPTIONS]\n"
    "       inart emu run TOPO JOBS PLAN [OPTIONS]\n"
    "       inart emu compare TOPO JOBS [--algos A,B,..] [OPTIONS]\n"
    "       inart emu exec TOPO JOBS --prefix P [OPTIONS] -- PROGRAM [ARGS...]\n"
    "       inart emu down [--prefix P] [--force]\n"
    "\n"
    "Emulate the network of TOPO on this machine (root): one network namespace per\n"
    "host and switch, veth pairs shaped with tbf at each link's capacity times a\n"
    "rate scale, 'inart switchd' on every switch, 'inart ps' on every PS, plans\n"
    "installed with 'inart ctl install', and worker processes running all-reduces\n"
    "of every job at once through the public worker API.  'run' measures one plan,\n"
    "'compare' every algorithm's plan (default inart,ps,byteps,switchml,atp), side\n"
    "by side with the evaluator's prediction; both build the network, run, and\n"
    "remove it.  'up' builds it and leaves it running, 'exec' runs a program as\n"
    "the ranks of a job in its worker namespaces (torchrun's environment), 'down'\n"
    "removes a run's leftovers (default: of every run whose emulator is gone).\n"
    "'inart emu ACTION --help' lists the options; docs/emulator.md explains the\n"
    "scales, the header factor and the CPU-bound flag.\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or a failed run (not finished or\n"
    "not exact), 2 usage error.\n";

int cmd_emu(int argc, char **argv)
{
	const char *act;

	if (argc < 2)
		cli_usage_error("emu", "missing ACTION (up, run, compare, exec, down)");
	act = argv[1];
	if (strcmp(act, "--help") == 0 || strcmp(act, "-h") == 0) {
		fputs(cmd_emu_help, stdout);
		return EXIT_OK;
	}
	if (strcmp(act, "up") == 0)
		return cmd_emu_up(argc - 1, argv + 1);
	if (strcmp(act, "run") == 0)
		return cmd_emu_run(argc - 1, argv + 1);
	if (strcmp(act, "compare") == 0)
		return cmd_emu_compare(argc - 1, argv + 1);
	if (strcmp(act, "exec") == 0)
		return cmd_emu_exec(argc - 1, argv + 1);
	if (strcmp(act, "down") == 0)
		return cmd_emu_down(argc - 1, argv + 1);
	cli_usage_error("emu", "unknown action '%s' (up, run, compare, exec, down)", act);
}
