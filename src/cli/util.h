/*
 * util: what the `inart` subcommands share -- exit codes, usage errors,
 * number parsing, the planner options common to plan/compare/run, the
 * output options of compare/run, loading input files and writing output.
 * The program (not the library) decides to print and exit, so these helpers
 * may call exit().
 */
#ifndef INART_CLI_UTIL_H
#define INART_CLI_UTIL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "inart/inart.h"
#include "common/err.h"
#include "cp/planner/compare.h"
#include "cp/model/evaluate.h"
#include "common/file.h"
#include "cp/model/formats.h"
#include "cp/model/load.h"

enum {
	EXIT_OK = 0,
	EXIT_INVALID = 1, /* invalid input file or plan */
	EXIT_USAGE = 2,	  /* bad command line */
};

/* Subcommands: argv[0] is the subcommand name. */
int cmd_topo(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_switchd(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_emu(int argc, char **argv);
int cmd_controller(int argc, char **argv);

/* Help texts of the subcommands (defined next to each one). */
extern const char cmd_topo_help[], cmd_plan_help[], cmd_eval_help[], cmd_compare_help[],
    cmd_dot_help[], cmd_run_help[], cmd_switchd_help[], cmd_ps_help[], cmd_ctl_help[],
    cmd_emu_help[], cmd_controller_help[];

/* A line of a help text that stands for the list of the algorithms with
 * their summaries (cp/planner/planner.c's registry). */
#define CLI_HELP_ALGORITHMS "@ALGORITHMS@\n"

/* Print a help text to f, CLI_HELP_ALGORITHMS expanded. */
void cli_put_help(const char *help, FILE *f);

/* Print the help text of a subcommand to f (0, or -1 if unknown). */
int cli_help(const char *cmd, FILE *f);

/* "inart CMD: message" + a hint to the subcommand's --help, exit 2. */
_Noreturn void cli_usage_error(const char *cmd, const char *fmt, ...) INART_PRINTF(2, 3);
/* "inart: message" on stderr, exit 1. */
_Noreturn void cli_fail(const struct inart_err *err);
_Noreturn void cli_failf(const char *fmt, ...) INART_PRINTF(1, 2);

/* Reset getopt for a fresh parse (every subcommand parses its own argv). */
void cli_getopt_reset(void);
/* Report a getopt error ('?' or ':') for cmd and exit 2. */
_Noreturn void cli_getopt_error(const char *cmd, int c, char **argv);
/* The default: of a subcommand's option switch, for the options every
 * subcommand treats alike: -o/--output sets *out (when out is not NULL),
 * -h/--help prints help and exits 0, anything else is a getopt error
 * (exit 2). */
void cli_common_opt(const char *cmd, const char *help, int c, char **argv, const char **out);

/* The operands after the options (argv[optind..]): exactly the ones named
 * in names (NULL-terminated, e.g. TOPO, JOBS); otherwise a usage error,
 * "missing TOPO and JOBS" or "unexpected argument 'X'". */
void cli_operands(const char *cmd, int argc, char **argv, const char *const *names);

/* Numbers from option arguments; a malformed or out-of-range value is a
 * usage error naming the option. */
int cli_int(const char *cmd, const char *opt, const char *arg, long min, long max);
uint64_t cli_u64(const char *cmd, const char *opt, const char *arg);
double cli_double(const char *cmd, const char *opt, const char *arg, double min, double max);
/* A comma-separated list of numbers 0..max-1 (max <= 64) as a bit each. */
uint64_t cli_port_mask(const char *cmd, const char *opt, const char *arg, int max);
/* Options by table: the getopt code, the name in messages, the range, and
 * the variable it sets: an int (i) or a double (d) parsed from the argument
 * within the range, a string (s) set to the argument itself, or a flag
 * (flag) set to 1.  Exactly one variable per row. */
struct cli_num {
	int c;
	const char *name;
	double min, max;
	int *i;
	double *d;
	const char **s;
	int *flag;
};
/* If c is the code of one of tab[0..n), set its variable from arg (numbers
 * with cli_int or cli_double) and return 1; else 0. */
int cli_num_opt(const char *cmd, int c, const char *arg, const struct cli_num *tab, size_t n);
/* getopt_long (after cli_getopt_reset) with shortopts over the command's own
 * long options (own, NULL-terminated) and the rows tab[0..n), whose long
 * options are built from them (the name without "--"; an argument unless
 * the row is a flag; own and rows together at most CLI_MAX_LONGOPTS): a
 * row's option sets its variable here (cli_num_opt) and the next is read;
 * a row without a variable and anything else is returned as getopt_long
 * returns it (-1 at the end). */
enum { CLI_MAX_LONGOPTS = 64 };
int cli_getopt_rows(const char *cmd, int argc, char **argv, const char *shortopts,
		    const struct option *own, const struct cli_num *tab, size_t n);
/* A --log-level argument (error, warn, info, debug); a usage error otherwise. */
int cli_log_level(const char *cmd, const char *arg);

/* Planner options shared by plan, compare and run.  CLI_PLANNER_LONGOPTS
 * goes into a struct option array; cli_planner_opt() handles the codes and
 * returns 1 if c was one of them. */
enum {
	OPT_SEED = 1000,
	OPT_K_PATHS,
	OPT_DETOURS,
	OPT_TRIALS,
	OPT_ROUNDS,
	OPT_MILP_TIME,
	OPT_NO_GUARD,
	OPT_NO_RING,
	OPT_TIME_LIMIT,
	OPT_FORMAT,
	OPT_ALGOS,
	OPT_PROGRESS,
};
#define CLI_PLANNER_LONGOPTS                                                                       \
	{"seed", required_argument, NULL, OPT_SEED},                                               \
	    {"k-paths", required_argument, NULL, OPT_K_PATHS},                                     \
	    {"detours", required_argument, NULL, OPT_DETOURS},                                     \
	    {"trials", required_argument, NULL, OPT_TRIALS},                                       \
	    {"rounds", required_argument, NULL, OPT_ROUNDS},                                       \
	    {"milp-time-limit", required_argument, NULL, OPT_MILP_TIME},                           \
	    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},                               \
	    {"no-ring", no_argument, NULL, OPT_NO_RING},                                           \
	{                                                                                          \
		"no-baseline-guard", no_argument, NULL, OPT_NO_GUARD                               \
	}
#define CLI_PLANNER_HELP                                                                           \
	"  --seed S               random seed (default 1)\n"                                       \
	"  --k-paths K            candidate paths per worker->PS flow (default: 8 below\n"         \
	"                         512 nodes, else 4)\n"                                            \
	"  --detours N            also N paths per flow to each INA switch off its\n"              \
	"                         shortest paths but closer to the PS (a third leaf),\n"           \
	"                         and 4 paths per tree; up to 512 worker-PS pairs;\n"              \
	"                         0: none; -1 (default): auto, 2 paths for workers\n"              \
	"                         in racks without INA while they add at most half\n"              \
	"                         the flows' own candidate paths\n"                                \
	"  --trials N             randomized-rounding trials (default 32)\n"                       \
	"  --rounds R             phase-1/phase-2 iterations at most (default 4)\n"                \
	"  --time-limit S         inart: keep improving the plan for S seconds from the\n"         \
	"                         start, or until it is within 1% of its best bound\n"             \
	"                         (default 4; 0: no improvement phase)\n"                          \
	"  --milp-time-limit S    CBC time limit in seconds for milp (default 30)\n"               \
	"  --no-baseline-guard    do not fall back to a better baseline plan\n"                    \
	"  --no-ring              inart: every job through PSs (no ring all-reduce jobs:\n"        \
	"                         plans the data plane can install)\n"
int cli_planner_opt(const char *cmd, int c, const char *arg, struct inart_planner_opt *o);

/* --format table|csv|json */
enum inart_compare_format cli_format(const char *cmd, const char *arg);
/* --algos a,b,c: a NULL-terminated array (free() it; strings point into a
 * copy freed with it).  Unknown names are usage errors. */
const char **cli_algos(const char *cmd, const char *arg);

/* Output options shared by compare and run: -f/--format, -a/--algos and
 * -o/--output (short options "f:a:o:").  cli_compare_opt handles them like
 * cli_planner_opt; cli_compare_print (cmd_compare.c) runs the algorithms,
 * formats and writes; free(algos) at the end. */
struct cli_compare_out {
	enum inart_compare_format fmt;
	const char **algos; /* NULL: all */
	const char *path;   /* "-" = stdout */
};
#define CLI_COMPARE_OUT_INIT                                                                       \
	{                                                                                          \
		INART_FMT_TABLE, NULL, "-"                                                         \
	}
#define CLI_COMPARE_LONGOPTS                                                                       \
	{"format", required_argument, NULL, 'f'}, {"algos", required_argument, NULL, 'a'},         \
	{                                                                                          \
		"output", required_argument, NULL, 'o'                                             \
	}
int cli_compare_opt(const char *cmd, int c, const char *arg, struct cli_compare_out *o);
int cli_compare_print(const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *opt, const struct cli_compare_out *o);

/* Load input files; on error print "inart: <message>" and exit 1. */
struct inart_topo *cli_load_topo(const char *path);
struct inart_jobs *cli_load_jobs(const char *path, const struct inart_topo *t);
struct inart_plan *cli_load_plan(const char *path, const struct inart_topo *t,
				 const struct inart_jobs *js);
/* Check plan p (read from plan_path) with a new evaluator, results in *ev.
 * Returns the evaluator (*ev points into it; inart_evaluator_destroy it), or
 * NULL if the plan is invalid, with the reason in err prefixed by plan_path.
 * Out of memory exits 1. */
struct inart_evaluator *cli_evaluate(const struct inart_topo *t, const struct inart_jobs *js,
				     const struct inart_plan *p, const char *plan_path,
				     struct inart_eval *ev, struct inart_err *err);
/* Write text to path ("-" = stdout), exit 1 on failure. */
void cli_write(const char *path, const char *text);

/* Node id for a node number. */
const char *cli_node_id(const struct inart_topo *t, int v);

#endif
