/*
 * util: helpers shared by the `inart` subcommands (see util.h).  Usage errors
 * exit 2, invalid input exits 1 with the library's message; nothing here
 * knows about algorithms.
 */
#include "cli/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cp/planner/planner.h"
#include "io/log.h"

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "inart %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'inart %s --help'.\n", cmd);
	exit(EXIT_USAGE);
}

void cli_fail(const struct inart_err *err)
{
	fprintf(stderr, "inart: %s\n", err->msg[0] ? err->msg : "unknown error");
	exit(EXIT_INVALID);
}

void cli_failf(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "inart: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_INVALID);
}

void cli_getopt_reset(void)
{
	optind = 0; /* glibc: full re-initialization */
	opterr = 0;
}

void cli_getopt_error(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		cli_usage_error(cmd, "option '%s' requires an argument", arg);
	if (optopt != 0 && strncmp(arg, "--", 2) != 0)
		cli_usage_error(cmd, "unknown option '-%c'", optopt);
	cli_usage_error(cmd, "unknown option '%s'", arg);
}

void cli_put_help(const char *help, FILE *f)
{
	const char *m = strstr(help, CLI_HELP_ALGORITHMS);

	if (m == NULL) {
		fputs(help, f);
		return;
	}
	fwrite(help, 1, (size_t)(m - help), f);
	for (int i = 0; inart_algorithms[i] != NULL; i++)
		if (inart_algorithm_summary(i) != NULL)
			fprintf(f, "  %-11s %s\n", inart_algorithms[i], inart_algorithm_summary(i));
	fputs(m + strlen(CLI_HELP_ALGORITHMS), f);
}

void cli_common_opt(const char *cmd, const char *help, int c, char **argv, const char **out)
{
	if (c == 'o' && out != NULL) {
		*out = optarg;
		return;
	}
	if (c == 'h') {
		cli_put_help(help, stdout);
		exit(EXIT_OK);
	}
	cli_getopt_error(cmd, c, argv);
}

void cli_operands(const char *cmd, int argc, char **argv, const char *const *names)
{
	int n = 0, have = argc - optind;
	char missing[256] = "";
	size_t len = 0;

	while (names[n] != NULL)
		n++;
	if (have > n)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + n]);
	if (have == n)
		return;
	for (int i = have; i < n && len < sizeof(missing); i++)
		len += (size_t)snprintf(missing + len, sizeof(missing) - len, "%s%s",
					i == have    ? ""
					: i == n - 1 ? " and "
						     : ", ",
					names[i]);
	cli_usage_error(cmd, "missing %s", missing);
}

int cli_int(const char *cmd, const char *opt, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0')
		cli_usage_error(cmd, "%s: '%s' is not an integer", opt, arg);
	if (v < min || v > max)
		cli_usage_error(cmd, "%s: %ld is out of range [%ld, %ld]", opt, v, min, max);
	return (int)v;
}

int cli_num_opt(const char *cmd, int c, const char *arg, const struct cli_num *tab, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct cli_num *o = &tab[k];

		if (o->c != c)
			continue;
		if (o->i != NULL)
			*o->i = cli_int(cmd, o->name, arg, (long)o->min, (long)o->max);
		else if (o->d != NULL)
			*o->d = cli_double(cmd, o->name, arg, o->min, o->max);
		else if (o->s != NULL)
			*o->s = arg;
		else
			*o->flag = 1;
		return 1;
	}
	return 0;
}

int cli_getopt_rows(const char *cmd, int argc, char **argv, const char *shortopts,
		    const struct option *own, const struct cli_num *tab, size_t n)
{
	struct option lo[CLI_MAX_LONGOPTS + 1];
	size_t k = 0;
	int c;

	for (; own[k].name != NULL; k++) {
		assert(k < CLI_MAX_LONGOPTS);
		lo[k] = own[k];
	}
	for (size_t r = 0; r < n; r++, k++) {
		assert(k < CLI_MAX_LONGOPTS);
		lo[k] = (struct option){
		    tab[r].name + 2, tab[r].flag ? no_argument : required_argument, NULL, tab[r].c};
	}
	lo[k] = (struct option){NULL, 0, NULL, 0};
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		size_t r = 0;

		while (r < n && tab[r].c != c)
			r++;
		if (r == n || (!tab[r].i && !tab[r].d && !tab[r].s && !tab[r].flag))
			return c;
		cli_num_opt(cmd, c, optarg, &tab[r], 1);
	}
	return -1;
}

uint64_t cli_u64(const char *cmd, const char *opt, const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (arg[0] == '-' || arg[0] == '\0')
		cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, arg);
	v = strtoull(arg, &end, 0);
	if (errno != 0 || *end != '\0')
		cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, arg);
	return (uint64_t)v;
}

uint64_t cli_port_mask(const char *cmd, const char *opt, const char *arg, int max)
{
	uint64_t m = 0;
	char *end;
	const char *p = arg;

	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v >= max || v >= 64 || (*end != ',' && *end != '\0'))
			cli_usage_error(cmd, "%s: '%s' is not a list of port numbers", opt, arg);
		m |= 1ull << v;
		if (*end == '\0')
			return m;
		p = end + 1;
	}
}

double cli_double(const char *cmd, const char *opt, const char *arg, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !isfinite(v))
		cli_usage_error(cmd, "%s: '%s' is not a number", opt, arg);
	if (v < min || v > max)
		cli_usage_error(cmd, "%s: %g is out of range [%g, %g]", opt, v, min, max);
	return v;
}

int cli_planner_opt(const char *cmd, int c, const char *arg, struct inart_planner_opt *o)
{
	const struct cli_num nums[] = {
	    {OPT_K_PATHS, "--k-paths", 1, 64, .i = &o->k_paths},
	    {OPT_DETOURS, "--detours", -1, 64, .i = &o->detours},
	    {OPT_TRIALS, "--trials", 1, 100000, .i = &o->trials},
	    {OPT_ROUNDS, "--rounds", 1, 1000, .i = &o->max_rounds},
	    {OPT_MILP_TIME, "--milp-time-limit", 0, 1e7, .d = &o->milp_time_limit_s},
	    {OPT_TIME_LIMIT, "--time-limit", 0, 1e7, .d = &o->time_limit_s},
	    {OPT_NO_GUARD, "--no-baseline-guard", .flag = &o->no_baseline_guard},
	    {OPT_NO_RING, "--no-ring", .flag = &o->no_ring},
	};

	if (cli_num_opt(cmd, c, arg, nums, sizeof(nums) / sizeof(nums[0])))
		return 1;
	if (c != OPT_SEED)
		return 0;
	o->seed = cli_u64(cmd, "--seed", arg);
	return 1;
}

enum inart_compare_format cli_format(const char *cmd, const char *arg)
{
	if (strcmp(arg, "table") == 0)
		return INART_FMT_TABLE;
	if (strcmp(arg, "csv") == 0)
		return INART_FMT_CSV;
	if (strcmp(arg, "json") == 0)
		return INART_FMT_JSON;
	cli_usage_error(cmd, "--format: expected table, csv or json, got '%s'", arg);
}

const char **cli_algos(const char *cmd, const char *arg)
{
	size_t n = 1, len = strlen(arg);
	const char **v;
	char *copy, *s;
	int k = 0;

	for (const char *p = arg; *p; p++)
		n += *p == ',';
	/* One block: the pointer array followed by a copy of the string. */
	v = malloc((n + 1) * sizeof(*v) + len + 1);
	if (v == NULL)
		cli_failf("out of memory");
	copy = (char *)(v + n + 1);
	memcpy(copy, arg, len + 1);
	for (s = copy;;) {
		char *comma = strchr(s, ',');

		if (comma)
			*comma = '\0';
		if (*s == '\0')
			cli_usage_error(cmd, "--algos: empty algorithm name in '%s'", arg);
		if (!inart_algorithm_known(s))
			cli_usage_error(
			    cmd, "--algos: unknown algorithm '%s' (see 'inart plan --help')", s);
		v[k++] = s;
		if (!comma)
			break;
		s = comma + 1;
	}
	v[k] = NULL;
	return v;
}

int cli_compare_opt(const char *cmd, int c, const char *arg, struct cli_compare_out *o)
{
	switch (c) {
	case 'f':
		o->fmt = cli_format(cmd, arg);
		return 1;
	case 'a':
		free(o->algos);
		o->algos = cli_algos(cmd, arg);
		return 1;
	case 'o':
		o->path = arg;
		return 1;
	default:
		return 0;
	}
}

struct inart_topo *cli_load_topo(const char *path)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_load(path, &err);

	if (t == NULL)
		cli_fail(&err);
	return t;
}

struct inart_jobs *cli_load_jobs(const char *path, const struct inart_topo *t)
{
	struct inart_err err = {{0}};
	struct inart_jobs *js = inart_jobs_load(path, t, &err);

	if (js == NULL)
		cli_fail(&err);
	return js;
}

struct inart_plan *cli_load_plan(const char *path, const struct inart_topo *t,
				 const struct inart_jobs *js)
{
	struct inart_err err = {{0}};
	struct inart_plan *p = inart_plan_load(path, t, js, &err);

	if (p == NULL)
		cli_fail(&err);
	return p;
}

struct inart_evaluator *cli_evaluate(const struct inart_topo *t, const struct inart_jobs *js,
				     const struct inart_plan *p, const char *plan_path,
				     struct inart_eval *ev, struct inart_err *err)
{
	struct inart_evaluator *evr = inart_evaluator_create(t, js);

	if (evr == NULL)
		cli_failf("out of memory");
	if (inart_evaluator_run(evr, p, ev, err) < 0) {
		inart_err_prefix(err, plan_path);
		inart_evaluator_destroy(evr);
		return NULL;
	}
	return evr;
}

void cli_write(const char *path, const char *text)
{
	struct inart_err err = {{0}};

	if (text == NULL)
		cli_failf("%s: %s", path, strerror(errno));
	if (inart_file_write(path, text, &err) < 0)
		cli_fail(&err);
}

const char *cli_node_id(const struct inart_topo *t, int v)
{
	if (v < 0 || v >= t->n_nodes)
		return "?";
	return t->nodes[v].id;
}

int cli_log_level(const char *cmd, const char *arg)
{
	int level = inart_log_parse_level(arg);

	if (level < 0)
		cli_usage_error(cmd, "--log-level: '%s' is not error, warn, info or debug", arg);
	return level;
}
