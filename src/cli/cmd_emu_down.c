/*
 * cmd_emu_down: `inart emu down [--prefix P] [--force]` -- remove what
 * emulator runs left behind: processes inside their namespaces (by PID),
 * the namespaces inart-emu-P-*, the run directories /run/inart-emu/P.
 * Only inart-emu names are ever touched.
 */
#include <getopt.h>

#include "emu/net.h"
#include "cli/emu_cli.h"

static const char help[] =
    "usage: inart emu down [--prefix P] [--force]\n"
    "\n"
    "Remove the namespaces (inart-emu-P-*), their processes (ended by PID) and the\n"
    "run directory (/run/inart-emu/P) of the emulator run with prefix P, e.g. one\n"
    "left by 'inart emu up' or by an emulator that crashed.  Without --prefix:\n"
    "of every run whose emulator process is gone (--force: also of live ones).\n"
    "\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

int cmd_emu_down(int argc, char **argv)
{
	const char *cmd = "emu down", *prefix = NULL;
	struct inart_err err = {{0}};
	int c, force = 0, skipped = 0, n;
	const struct option longopts[] = {
	    {"prefix", required_argument, NULL, EMU_OPT_PREFIX},
	    {"force", no_argument, &force, 1},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			return EXIT_OK;
		case 0: /* --force (getopt set it) */
			break;
		case EMU_OPT_PREFIX:
			prefix = emu_prefix_arg(cmd, optarg);
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	cli_operands(cmd, argc, argv, (const char *const[]){NULL});
	emu_need_root("down");
	n = inart_emu_down_prefix(prefix, force, &skipped, &err);
	if (n < 0)
		cli_fail(&err);
	printf("removed %d namespaces%s", n, prefix ? "" : " of finished runs");
	if (skipped > 0)
		printf(", left %d of runs still alive (--force removes them)", skipped);
	printf("\n");
	return EXIT_OK;
}
