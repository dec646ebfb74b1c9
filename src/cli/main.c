/*
 * main: the `inart` program, git-style.  A table maps each subcommand to its
 * function, one-line summary and help text; every subcommand parses its own
 * options.  Exit codes: 0 success, 1 invalid input or plan, 2 usage error.
 */
#include <stdio.h>
#include <string.h>

#include "cli/util.h"

#ifndef INART_VERSION
#define INART_VERSION "0.1.0"
#endif

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *help;
};

static const struct subcommand commands[] = {
    {"topo", cmd_topo, "generate, check or describe a topology", cmd_topo_help},
    {"plan", cmd_plan, "plan in-network aggregation with one algorithm", cmd_plan_help},
    {"eval", cmd_eval, "check a plan file and report its communication time", cmd_eval_help},
    {"compare", cmd_compare, "run every algorithm on one input, side by side", cmd_compare_help},
    {"dot", cmd_dot, "draw a topology (and a plan) with Graphviz", cmd_dot_help},
    {"run", cmd_run, "compare all algorithms on a built-in scenario", cmd_run_help},
    {"switchd", cmd_switchd, "run the software INA switch on network interfaces", cmd_switchd_help},
    {"ps", cmd_ps, "run a parameter server over UDP", cmd_ps_help},
    {"ctl", cmd_ctl, "install a plan on switches and PSs; read their counters", cmd_ctl_help},
    {"emu", cmd_emu, "emulated network: plans measured on packets beside the model", cmd_emu_help},
    {"controller", cmd_controller, "measure the network, re-plan and switch plans online",
     cmd_controller_help},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct subcommand *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int cli_help(const char *cmd, FILE *f)
{
	const struct subcommand *c = find(cmd);

	if (c == NULL)
		return -1;
	cli_put_help(c->help, f);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: inart [--help] [--version] COMMAND [ARGS]\n\n"
		   "InArt plans in-network aggregation for distributed training with several\n"
		   "parameter servers: it splits each job's gradient among PSs and picks, for\n"
		   "every worker->PS flow, a route and the switch where flows are merged.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'inart help COMMAND' or 'inart COMMAND --help' describes a command.\n"
		   "Exit status: 0 success, 1 invalid input or plan, 2 usage error.\n");
}

int main(int argc, char **argv)
{
	const struct subcommand *c;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("inart %s\n", INART_VERSION);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc == 2) {
			usage(stdout);
			return EXIT_OK;
		}
		if (argc > 3) {
			fprintf(stderr, "inart help: too many arguments\n");
			return EXIT_USAGE;
		}
		if (cli_help(argv[2], stdout) < 0) {
			fprintf(stderr, "inart help: unknown command '%s'\nTry 'inart --help'.\n",
				argv[2]);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "inart: unknown option '%s'\nTry 'inart --help'.\n", argv[1]);
		return EXIT_USAGE;
	}
	c = find(argv[1]);
	if (c == NULL) {
		fprintf(stderr, "inart: unknown command '%s'\nTry 'inart --help'.\n", argv[1]);
		return EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
