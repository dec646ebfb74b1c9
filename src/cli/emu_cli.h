/*
 * emu_cli: what the `inart emu` subcommands share (emu_cli.c): the option
 * table and its parsing, the checks made before anything is built, and the
 * execution of a list of plans on one emulated network with the report.
 */
#ifndef INART_CLI_EMU_CLI_H
#define INART_CLI_EMU_CLI_H

#include "emu/report.h"
#include "emu/run.h"
#include "cli/util.h"

struct emu_args {
	struct inart_emu_opt o;
	char prefix[INART_EMU_PREFIX_MAX + 1];
	double mbps, rate_scale, size_scale, target_s;
	double pace;	     /* workers paced at pace x their plan rates (0: not paced) */
	double pace_lead_ms; /* ... at most this far ahead of the plan's rates (0: no bound) */
	int iters, quiet;
	enum inart_compare_format fmt;
	const char *out, *png;
	const char **algos;
	/* faults as given, resolved against the topology by emu_load */
	const char *fault_arg[16];
	int fault_kind[16], n_fault_args;
	struct inart_emu_fault faults[16];
	/* issue 10: background changes as given (--bg-at), resolved; the
	 * controller: 0 off, 1 on, 2 both (a run each); the dynamics chart */
	const char *bg_arg[32];
	double bg_at[32];
	int n_bg_args, n_bg;
	struct inart_emu_bg_change bg[256];
	int controller;
	const char *dyn_png;
	int no_size_limit; /* --no-size-limit: skip inart_emu_check's size limit */
};

/* The machine's limits for a run (inart_emu_check): the defaults for this
 * machine's cores, or without a size limit (--no-size-limit).  Exits 1 with
 * the message if t cannot be run at the rate scale. */
void emu_check_limits(const struct emu_args *a, const struct inart_topo *t, double rate_scale);

void emu_args_init(struct emu_args *a);

/* The actions (one file each). */
int cmd_emu_up(int argc, char **argv);
int cmd_emu_run(int argc, char **argv);
int cmd_emu_compare(int argc, char **argv);
int cmd_emu_exec(int argc, char **argv);
int cmd_emu_down(int argc, char **argv);

/* getopt codes of the long-only shared options (EMU_LONGOPTS; the values
 * as before, above every character); --prefix is also emu down's */
enum emu_opt_code {
	EMU_OPT_PREFIX = 3001,
	EMU_OPT_MBPS,
	EMU_OPT_RATE_SCALE,
	EMU_OPT_SIZE_SCALE,
	EMU_OPT_TARGET_S,
	EMU_OPT_ITERS,
	EMU_OPT_PNG,
	EMU_OPT_LOSS,
	EMU_OPT_SEED,
	EMU_OPT_LINK_DOWN,
	EMU_OPT_KILL_SWITCH,
	EMU_OPT_NO_BACKGROUND,
	EMU_OPT_NO_AGG_LIMIT,
	EMU_OPT_ITER_TIMEOUT,
	EMU_OPT_QUEUE_MS,
	EMU_OPT_WINDOW,
	EMU_OPT_RETX_MS,
	EMU_OPT_FLUSH_MS,
	EMU_OPT_KEEP,
	EMU_OPT_PACE,
	EMU_OPT_PACE_LEAD,
	EMU_OPT_BG_AT = 3030,
	EMU_OPT_CONTROLLER,
	EMU_OPT_CONTROLLER_ARGS,
	EMU_OPT_DYNAMICS_PNG,
	EMU_OPT_IO,
	EMU_OPT_NO_SIZE_LIMIT,
	EMU_OPT_AGG,
};
#define EMU_LONGOPTS                                                                               \
	{"prefix", required_argument, NULL, EMU_OPT_PREFIX},                                       \
	    {"mbps", required_argument, NULL, EMU_OPT_MBPS},                                       \
	    {"rate-scale", required_argument, NULL, EMU_OPT_RATE_SCALE},                           \
	    {"size-scale", required_argument, NULL, EMU_OPT_SIZE_SCALE},                           \
	    {"target-s", required_argument, NULL, EMU_OPT_TARGET_S},                               \
	    {"iters", required_argument, NULL, EMU_OPT_ITERS},                                     \
	    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},    \
	    {"png", required_argument, NULL, EMU_OPT_PNG},                                         \
	    {"loss", required_argument, NULL, EMU_OPT_LOSS},                                       \
	    {"seed", required_argument, NULL, EMU_OPT_SEED},                                       \
	    {"link-down", required_argument, NULL, EMU_OPT_LINK_DOWN},                             \
	    {"kill-switch", required_argument, NULL, EMU_OPT_KILL_SWITCH},                         \
	    {"no-background", no_argument, NULL, EMU_OPT_NO_BACKGROUND},                           \
	    {"no-agg-limit", no_argument, NULL, EMU_OPT_NO_AGG_LIMIT},                             \
	    {"iter-timeout", required_argument, NULL, EMU_OPT_ITER_TIMEOUT},                       \
	    {"queue-ms", required_argument, NULL, EMU_OPT_QUEUE_MS},                               \
	    {"quiet", no_argument, NULL, 'q'},                                                     \
	    {"window", required_argument, NULL, EMU_OPT_WINDOW},                                   \
	    {"retx-ms", required_argument, NULL, EMU_OPT_RETX_MS},                                 \
	    {"flush-ms", required_argument, NULL, EMU_OPT_FLUSH_MS},                               \
	    {"keep", required_argument, NULL, EMU_OPT_KEEP},                                       \
	    {"algos", required_argument, NULL, 'a'},                                               \
	    {"pace", required_argument, NULL, EMU_OPT_PACE},                                       \
	    {"pace-lead", required_argument, NULL, EMU_OPT_PACE_LEAD},                             \
	    {"bg-at", required_argument, NULL, EMU_OPT_BG_AT},                                     \
	    {"controller", required_argument, NULL, EMU_OPT_CONTROLLER},                           \
	    {"controller-args", required_argument, NULL, EMU_OPT_CONTROLLER_ARGS},                 \
	    {"dynamics-png", required_argument, NULL, EMU_OPT_DYNAMICS_PNG},                       \
	    {"io", required_argument, NULL, EMU_OPT_IO},                                           \
	    {"no-size-limit", no_argument, NULL, EMU_OPT_NO_SIZE_LIMIT},                           \
	    {"agg", required_argument, NULL, EMU_OPT_AGG},                                         \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

#define EMU_HELP_COMMON                                                                            \
	"  --prefix P         names of the run: namespaces inart-emu-P-*, interfaces eP-*,\n"      \
	"                     /run/inart-emu/P (1-9 of [a-z0-9]; default: the process id)\n"       \
	"  --mbps M           the fastest link runs at M Mbit/s (default 20); every\n"             \
	"                     capacity, background and agg_gbps scales alike\n"                    \
	"  --rate-scale R     or give the scale itself (emulated / modelled bit/s)\n"              \
	"  --target-s T       gradients scaled so the fastest plan's predicted iteration\n"        \
	"                     takes T s on packets (default 1)\n"                                  \
	"  --size-scale Z     or give the gradient scale itself\n"                                 \
	"  --iters N          iterations of every job (default 5)\n"                               \
	"  -f, --format F     table (default), csv or json\n"                                      \
	"  -o, --output FILE  write the result there ('-' = stdout)\n"                             \
	"  --png FILE         chart of measured vs predicted (gnuplot)\n"                          \
	"  --loss P           lose each frame on every link direction with probability P\n"        \
	"                     (switchd --rx-loss/--tx-loss; seeded by --seed S, default 1)\n"      \
	"  --link-down A-B@T+D  take link A-B down T s into the run, for D s (repeatable)\n"       \
	"  --kill-switch S@T+D  kill switchd S (SIGKILL) at T s, restart it D s later and\n"       \
	"                     install its tables again (repeatable)\n"                             \
	"  --no-background    no background traffic on links with background_gbps\n"               \
	"  --no-agg-limit     switches aggregate at line rate (ignore agg_gbps)\n"                 \
	"  --iter-timeout S   an iteration not done in S s fails the run (default: 10x its\n"      \
	"                     prediction, at least 20 s)\n"                                        \
	"  --queue-ms X       tbf queue of every interface in ms of its rate (default 200,\n"      \
	"                     at least 512 KB)\n"                                                  \
	"  --window N         chunks in flight per tree and slots per tree (the deployment's\n"    \
	"                     dataplane.slots_per_tree; default 16, see docs/emulator.md)\n"       \
	"  --retx-ms X        the workers' initial timeout (default: twice the time the\n"         \
	"                     slowest link takes for a window of every worker, >= 50 ms)\n"        \
	"  --flush-ms X       switches flush partial aggregates after X ms (default: as\n"         \
	"                     --retx-ms: it must exceed the skew between children)\n"              \
	"  --pace G           workers send every flow at G x its rate in the plan (the flow's\n"   \
	"                     share of the gradient in the plan's predicted time; default\n"       \
	"                     1.1, as installed; 0: not paced, only the window limits)\n"          \
	"  --pace-lead MS     ... but at most MS ahead of the plan's own rates since the\n"        \
	"                     all-reduce began (default 10; 0: no bound)\n"                        \
	"  --keep DIR         copy the run directory (daemon and worker logs, deployment,\n"       \
	"                     plans) to DIR before removing it\n"                                  \
	"  --bg-at A-B@T=G    from T s after the first iteration starts, link direction\n"         \
	"                     A->B carries G Gbit/s of background (model units, scaled;\n"         \
	"                     repeatable; docs/emulator.md); A and B two hosts: G more\n"          \
	"                     on every link direction of the shortest path from A to B\n"          \
	"  --controller M     run 'inart controller' beside each run: on, off (default) or\n"      \
	"                     both (the plan twice: off, then on)\n"                               \
	"  --controller-args S  more arguments for it (space-separated)\n"                         \
	"  --dynamics-png F   chart of every run's per-iteration time over time, with the\n"       \
	"                     background changes (gnuplot)\n"                                      \
	"  --io MODE          the switches' I/O back end, switchd --io MODE: auto (the\n"          \
	"                     default: switchd's choice), ring, mmsg or xdp (AF_XDP;\n"            \
	"                     the switches then shape the links they send on with\n"               \
	"                     switchd --shape instead of tbf, which AF_XDP bypasses);\n"           \
	"                     the one they run is said on stderr\n"                                \
	"  --agg WHERE        where the switches aggregate, switchd --agg WHERE: auto\n"           \
	"                     (the default: the kernel's XDP program where switchd can\n"          \
	"                     use it, which needs --io xdp and no --loss: kernel\n"               \
	"                     here where AF_XDP is usable, else user; its frames pass\n"        \
	"                     switchd's --shape), user or kernel; the one they run,\n"          \
	"                     and why not kernel, is said on stderr, the kernel's\n"            \
	"                     counters in the result\n"                                        \
	"  --no-size-limit    run a topology beyond the machine's size limit (40\n"                \
	"                     namespaces and 64 switch ports per core); each run's\n"              \
	"                     cpu_bound then says whether the machine kept up\n"                   \
	"  -q, --quiet        no progress on stderr\n"

#define EMU_SHORTOPTS ":f:o:a:qh"
#define EMU_HELP_EXIT                                                                              \
	"Exit status: 0 success, 1 invalid input or a failed run (not finished or not\n"           \
	"exact), 2 usage error.\n"

/* 1 if c was a shared option (handled), else 0. */
int emu_opt(const char *cmd, int c, const char *arg, struct emu_args *a);

/* Parse argv into a (after emu_args_init): --help prints help and exits 0,
 * --algos only where algos is allowed, other errors exit 2. */
void emu_parse(const char *cmd, int argc, char **argv, const char *help, int algos,
	       struct emu_args *a);

/* `emu run` (compare 0: TOPO JOBS PLAN) and `emu compare` (1: TOPO JOBS):
 * parse, check the operands, execute.  Exit status. */
int emu_action(const char *cmd, int argc, char **argv, const char *help, int compare);

/* Root, or exit 1 with a message. */
void emu_need_root(const char *cmd);

/* The argument of --prefix, checked (a usage error, exit 2, if it is not a
 * valid prefix). */
const char *emu_prefix_arg(const char *cmd, const char *arg);

/* Run every plan (paths[i], or planned by algorithm algos[i] when paths is
 * NULL) on one emulated network and print the report.  Exit status. */
int emu_execute(const char *cmd, struct emu_args *a, const char *topo_path, const char *jobs_path,
		const char *plan_path);

#endif
