/*
 * cmd_ctl: `inart ctl ACTION ...` -- the control-plane client of switchd and
 * ps.  `install` turns a plan into table batches (bridge/install) and sends
 * every switch its batch and every PS its trees over their control sockets,
 * after checking that every daemon is reachable and is the node it should
 * be (the transaction: daemon/installer); the other actions read or reset
 * one daemon's state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ctl.h"
#include "bridge/epoch.h"
#include "bridge/install.h"
#include "ctlproto/ctlsock.h"
#include "bridge/deploy.h"
#include "io/log.h"
#include "cli/util.h"
#include "daemon/installer.h"

const char cmd_ctl_help[] =
    "usage: inart ctl install TOPO JOBS PLAN (--deploy DEPLOY | --auto-deploy) [OPTIONS]\n"
    "       inart ctl stats PATH [--json] [--reset]\n"
    "       inart ctl show PATH [--json]\n"
    "       inart ctl reset-stats PATH\n"
    "       inart ctl lose-state PATH\n"
    "       inart ctl log-level PATH LEVEL\n"
    "       inart ctl send PATH JSON\n"
    "       inart ctl deploy TOPO [JOBS] [--ctl-dir DIR] [-o FILE]\n"
    "\n"
    "Talk to running 'inart switchd' and 'inart ps' daemons over their UNIX\n"
    "control sockets (PATH).  docs/programs.md describes the protocol.\n"
    "\n"
    "  install      build the tables of PLAN (label and route entries of every\n"
    "               switch, trees of every PS) for the deployment DEPLOY (addresses,\n"
    "               MACs, ports, control sockets; docs/programs.md) or the automatic\n"
    "               one (10.x.y.1 addresses, sockets DIR/<node>.sock) and put them\n"
    "               in service as one transaction under the installation's identity\n"
    "               (a digest of everything installed): every daemon must answer as\n"
    "               the right node, prepares its batch aside, and only when all\n"
    "               accepted do they commit; else every node is put back.  Nodes\n"
    "               that already hold the identity are left as they are (so the\n"
    "               same command is the recovery of a restarted daemon), PSs the\n"
    "               plan leaves out drop their trees.  Prints what each node held\n"
    "               before and holds now.\n"
    "  stats        counters of a switch (per port, per tree, drops by reason) or\n"
    "               of a PS; --reset zeroes them after printing\n"
    "  show         the tables of a switch, the trees of a PS\n"
    "  reset-stats  zero the counters\n"
    "  lose-state   make a switch forget its aggregation state (fault tests)\n"
    "  log-level    set a daemon's log level (error, warn, info, debug)\n"
    "  send         send one raw JSON request, print the reply\n"
    "  deploy       write the automatic deployment of TOPO as a file to edit\n"
    "               (PS nodes of JOBS get control sockets too)\n"
    "\n"
    "Options of install:\n"
    "  --deploy FILE       the deployment file\n"
    "  --auto-deploy       the automatic deployment\n"
    "  --ctl-dir DIR       control sockets of nodes the deployment gives none\n"
    "                      (default /run/inart)\n"
    "  --flush-ms X        switches flush partial aggregates after X ms (default: the\n"
    "                      deployment's \"dataplane\" settings, else 10)\n"
    "  --learn-macs        switches learn their neighbours' MACs from traffic\n"
    "                      instead of taking them from the deployment\n"
    "  --dry-run           print the requests (a line per node: socket, JSON that\n"
    "                      installs it at once), send nothing\n"
    "  --restart-jobs      the PSs forget their chunk state (a new run of every job:\n"
    "                      its workers number their steps from 1 again)\n"
    "  --only IDS          only these nodes (comma-separated switch and PS ids; e.g.\n"
    "                      a switch that restarted): the same transaction under the\n"
    "                      same identity, the other nodes are not contacted\n"
    "  --keep-core         switches keep their core and its aggregation state: no\n"
    "                      configuration is sent, the new tables go in on every\n"
    "                      shard at once (as the controller's epoch switches)\n"
    "\n"
    "Exit status: 0 success, 1 invalid input, unreachable or refusing daemon,\n"
    "2 usage error.\n";

int cli_ctl_call(const char *path, const struct inart_ctl_req *req, json_t **reply,
		 struct inart_err *err)
{
	return inart_installer_call(path, req, reply, err);
}

static json_t *call_or_fail(const char *path, const struct inart_ctl_req *req)
{
	struct inart_err why = {{0}};
	json_t *r;
	int rc = cli_ctl_call(path, req, &r, &why);

	if (rc < 0) {
		if (rc == -EPERM)
			cli_failf("%s: refused: %s", path, why.msg);
		cli_failf("%s", why.msg);
	}
	return r;
}

static uint64_t jget(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

/* Column width of a counter in the tree table: its name, at least 8. */
static int counter_width(const struct inart_ctl_counter *c)
{
	int n = (int)strlen(c->name);

	return n < 8 ? 8 : n;
}

/* Column c of a per-shard row named name in cols (stats' shard_columns), -1. */
static int column(json_t *cols, const char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach(cols, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return (int)i;
	}
	return -1;
}

static uint64_t row_get(json_t *row, int c)
{
	json_t *v = c < 0 ? NULL : json_array_get(row, (size_t)c);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

/* With several shards: a line each (frames, busy slots, aggregated and
 * emitted over its trees). */
static void print_sw_shards(json_t *r)
{
	json_t *shards = json_object_get(r, "shards"), *v, *t,
	       *cols = json_object_get(json_object_get(r, "shard_columns"), "trees");
	int ca = column(cols, "aggregated"), ce = column(cols, "emitted");
	size_t i, j;

	if (json_array_size(shards) < 2)
		return;
	json_array_foreach(shards, i, v)
	{
		uint64_t agg = 0, emitted = 0;

		json_array_foreach(json_object_get(v, "trees"), j, t)
		{
			agg += row_get(t, ca);
			emitted += row_get(t, ce);
		}
		printf("shard %-3" PRIu64 " rx %12" PRIu64 " tx %12" PRIu64 " slots busy %6" PRIu64
		       " aggregated %12" PRIu64 " emitted %12" PRIu64 "\n",
		       jget(v, "shard"), jget(v, "rx_frames"), jget(v, "tx_frames"),
		       jget(v, "slots_busy"), agg, emitted);
	}
}

static void print_sw_stats(json_t *r)
{
	json_t *ports = json_object_get(r, "ports"), *trees = json_object_get(r, "trees"),
	       *drops = json_object_get(r, "drops"), *v;
	const char *k;
	size_t i;

	printf("switch %s, up %.1f s\n", json_string_value(json_object_get(r, "name")),
	       json_real_value(json_object_get(r, "uptime_s")));
	printf("%-5s %-12s %12s %14s %8s %12s %14s %8s %8s\n", "port", "interface", "rx pkts",
	       "rx bytes", "rx drop", "tx pkts", "tx bytes", "tx drop", "blocked");
	json_array_foreach(ports, i, v)
	{
		json_t *nm = json_object_get(v, "name");

		/* rx drop: frames the kernel could not give switchd (ring full)
		   and frames too large for a buffer */
		printf("%-5" PRIu64 " %-12s %12" PRIu64 " %14" PRIu64 " %8" PRIu64 " %12" PRIu64
		       " %14" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
		       jget(v, "port"), json_is_string(nm) ? json_string_value(nm) : "-",
		       jget(v, "rx_pkts"), jget(v, "rx_bytes"),
		       jget(v, "sock_rx_kernel_drops") + jget(v, "sock_rx_trunc"),
		       jget(v, "tx_pkts"), jget(v, "tx_bytes"),
		       jget(v, "sock_tx_drops") + jget(v, "sock_tx_errors"),
		       jget(v, "sock_tx_blocked"));
	}
	printf("drops:");
	json_object_foreach(drops, k, v)
	{
		printf(" %s=%" PRIu64, k, json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0);
	}
	printf("\n");
	if (json_array_size(trees) > 0) {
		printf("%-6s %-5s", "job", "tree");
		for (int c = 0; c < inart_ctl_n_sw_tree_counters; c++)
			printf(" %*s", counter_width(&inart_ctl_sw_tree_counters[c]),
			       inart_ctl_sw_tree_counters[c].name);
		printf("\n");
	}
	json_array_foreach(trees, i, v)
	{
		printf("%-6" PRIu64 " %-5" PRIu64, jget(v, "job"), jget(v, "tree"));
		for (int c = 0; c < inart_ctl_n_sw_tree_counters; c++)
			printf(" %*" PRIu64, counter_width(&inart_ctl_sw_tree_counters[c]),
			       jget(v, inart_ctl_sw_tree_counters[c].name));
		printf("\n");
	}
	print_sw_shards(r);
}

static void print_ps_stats(json_t *r)
{
	json_t *ps = json_object_get(r, "ps"), *v;
	const char *k;

	printf("ps %s, up %.1f s, %" PRIu64 " trees\n",
	       json_string_value(json_object_get(r, "name")),
	       json_real_value(json_object_get(r, "uptime_s")), jget(r, "trees"));
	json_object_foreach(ps, k, v)
	{
		printf("  %-14s %" PRIu64 "\n", k,
		       json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0);
	}
	printf("  %-14s %" PRIu64 "\n", "send_blocked", jget(r, "send_blocked"));
}

int cli_ctl_print_stats(const char *path, int json)
{
	struct inart_ctl_req req = {.op = INART_CTL_STATS};
	json_t *r = call_or_fail(path, &req);
	const char *role = json_string_value(json_object_get(r, "role"));

	if (json)
		print_json(r);
	else if (role != NULL && strcmp(role, "switch") == 0)
		print_sw_stats(r);
	else
		print_ps_stats(r);
	json_decref(r);
	return EXIT_OK;
}

static void print_tables(json_t *r)
{
	json_t *labels = json_object_get(r, "labels"), *routes = json_object_get(r, "routes"), *v;
	size_t i;

	printf("%zu labels, %zu routes\n", json_array_size(labels), json_array_size(routes));
	json_array_foreach(labels, i, v)
	{
		const char *kind = json_string_value(json_object_get(v, "kind"));

		printf("label %-8" PRIu64 " job %-4" PRIu64 " tree %-3" PRIu64 " %-4s ",
		       jget(v, "label"), jget(v, "job"), jget(v, "tree"), kind ? kind : "?");
		if (kind != NULL && strcmp(kind, "up") == 0) {
			printf("-> port %" PRIu64 " label %" PRIu64, jget(v, "out_port"),
			       jget(v, "next_label"));
			if (json_is_true(json_object_get(v, "aggregate")))
				printf("  aggregate slots %" PRIu64 "+%" PRIu64,
				       jget(v, "slot_base"), jget(v, "n_slots"));
		} else {
			json_t *d;
			size_t k;

			printf("->");
			json_array_foreach(json_object_get(v, "down"), k, d)
			{
				json_t *ip = json_object_get(d, "dst_ip");

				printf(" port %" PRIu64 "/label %" PRIu64 "%s%s", jget(d, "port"),
				       jget(d, "label"), ip ? "/" : "",
				       ip ? json_string_value(ip) : "");
			}
		}
		printf("\n");
	}
	json_array_foreach(routes, i, v)
	{
		printf("route %-18s port %" PRIu64 "\n",
		       json_string_value(json_object_get(v, "prefix")), jget(v, "port"));
	}
}

static int act_simple(const char *cmd, int op, int argc, char **argv)
{
	struct inart_ctl_req req = {.op = op};
	int json = 0, reset = 0;
	const char *path = NULL, *level = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 &&
		    (op == INART_CTL_STATS || op == INART_CTL_SHOW))
			json = 1;
		else if (strcmp(argv[i], "--reset") == 0 && op == INART_CTL_STATS)
			reset = 1;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(cmd_ctl_help, stdout);
			exit(EXIT_OK);
		} else if (argv[i][0] == '-' && argv[i][1] != '\0')
			cli_usage_error(cmd, "%s: unknown option '%s'", argv[0], argv[i]);
		else if (path == NULL)
			path = argv[i];
		else if (op == INART_CTL_LOG_LEVEL && level == NULL)
			level = argv[i];
		else
			cli_usage_error(cmd, "%s: unexpected argument '%s'", argv[0], argv[i]);
	}
	if (path == NULL)
		cli_usage_error(cmd, "%s: missing PATH (a control socket)", argv[0]);
	if (op == INART_CTL_LOG_LEVEL) {
		if (level == NULL)
			cli_usage_error(cmd, "log-level: missing LEVEL");
		req.level = inart_log_parse_level(level);
		if (req.level < 0)
			cli_usage_error(cmd, "log-level: '%s' is not error, warn, info or debug",
					level);
	}
	if (op == INART_CTL_STATS) {
		cli_ctl_print_stats(path, json);
		if (reset) {
			req.op = INART_CTL_RESET_STATS;
			json_decref(call_or_fail(path, &req));
		}
		return EXIT_OK;
	}
	if (op == INART_CTL_SHOW) {
		struct inart_ctl_req info = {.op = INART_CTL_INFO};
		json_t *r = call_or_fail(path, &info);
		const char *role = json_string_value(json_object_get(r, "role"));
		int sw = role != NULL && strcmp(role, "switch") == 0;

		json_decref(r);
		req.op = sw ? INART_CTL_TABLES : INART_CTL_SHOW;
		r = call_or_fail(path, &req);
		if (json)
			print_json(r);
		else if (sw)
			print_tables(r);
		else {
			json_t *v;
			size_t i;

			printf("%zu trees\n", json_array_size(json_object_get(r, "trees")));
			json_array_foreach(json_object_get(r, "trees"), i, v)
			{
				printf("job %" PRIu64 " tree %" PRIu64 " fan_in %" PRIu64
				       ", %zu children\n",
				       jget(v, "job"), jget(v, "tree"), jget(v, "fan_in"),
				       json_array_size(json_object_get(v, "children")));
			}
		}
		json_decref(r);
		return EXIT_OK;
	}
	json_decref(call_or_fail(path, &req));
	return EXIT_OK;
}

static int act_send(const char *cmd, int argc, char **argv)
{
	struct inart_err err = {{0}};
	char *rep = NULL;
	size_t rlen;
	int rc;

	if (argc != 3)
		cli_usage_error(cmd, "send: expected PATH JSON");
	rc = inart_ctl_call(argv[1], argv[2], strlen(argv[2]), &rep, &rlen, CLI_CTL_TIMEOUT_MS,
			    &err);
	if (rc < 0)
		cli_fail(&err);
	printf("%s\n", rep);
	rc = strstr(rep, "\"ok\":true") != NULL ? EXIT_OK : EXIT_INVALID;
	free(rep);
	return rc;
}

static int act_deploy(const char *cmd, int argc, char **argv)
{
	const char *ctl_dir = "/run/inart", *out = "-", *files[2] = {NULL, NULL};
	struct inart_topo *t;
	struct inart_jobs *js = NULL;
	struct inart_deploy *d;
	unsigned char *is_ps;
	int nf = 0;
	char *s;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ctl-dir") == 0 && i + 1 < argc)
			ctl_dir = argv[++i];
		else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
			 i + 1 < argc)
			out = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			cli_usage_error(cmd, "deploy: unknown option or missing argument '%s'",
					argv[i]);
		else if (nf < 2)
			files[nf++] = argv[i];
		else
			cli_usage_error(cmd, "deploy: unexpected argument '%s'", argv[i]);
	}
	if (nf == 0)
		cli_usage_error(cmd, "deploy: missing TOPO");
	t = cli_load_topo(files[0]);
	if (files[1] != NULL)
		js = cli_load_jobs(files[1], t);
	d = inart_deploy_auto(t);
	if (d == NULL)
		cli_failf("automatic deployment: %s", strerror(errno));
	is_ps = inart_installer_ps_nodes(t, js);
	if (is_ps == NULL)
		cli_failf("out of memory");
	s = inart_deploy_dump(d, t, NULL, ctl_dir, is_ps);
	if (s == NULL)
		cli_failf("out of memory");
	cli_write(out, s);
	free(s);
	free(is_ps);
	inart_deploy_destroy(d);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return EXIT_OK;
}

struct install_args {
	struct cli_deploy_args d;
	const char *only;
	uint64_t flush_ns; /* --flush-ms, 0 if not given */
	int keep_core;	   /* --keep-core: tables only */
};

void cli_deploy_args_init(struct cli_deploy_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ctl_dir = "/run/inart";
}

void cli_deploy_rows(struct cli_deploy_args *a, struct cli_num *rows)
{
	const struct cli_num tab[CLI_DEPLOY_ROWS] = {
	    {CLI_OPT_DEPLOY, "--deploy", .s = &a->deploy},
	    {CLI_OPT_AUTO_DEPLOY, "--auto-deploy", .flag = &a->aut},
	    {CLI_OPT_CTL_DIR, "--ctl-dir", .s = &a->ctl_dir},
	    {CLI_OPT_LEARN, "--learn-macs", .flag = &a->learn},
	    {CLI_OPT_RESTART, "--restart-jobs", .flag = &a->restart},
	    {CLI_OPT_DRY, "--dry-run", .flag = &a->dry},
	};

	memcpy(rows, tab, sizeof(tab));
}

void cli_deploy_check(const char *cmd, const char *what, int argc, char **argv,
		      const struct cli_deploy_args *a)
{
	if (argc - optind < 3)
		cli_usage_error(cmd, "%sexpected TOPO JOBS PLAN", what);
	if (argc - optind > 3)
		cli_usage_error(cmd, "%sunexpected argument '%s'", what, argv[optind + 3]);
	if ((a->deploy == NULL) == !a->aut)
		cli_usage_error(cmd, "%sgive exactly one of --deploy FILE and --auto-deploy", what);
}

struct inart_deploy *cli_deploy_load(const struct cli_deploy_args *a, const struct inart_topo *t,
				     char ***ctl, struct inart_install_opt *opt)
{
	struct inart_err err = {{0}};
	struct inart_deploy *d =
	    inart_installer_deploy_load(a->aut ? NULL : a->deploy, t, ctl, opt, &err);

	if (d == NULL)
		cli_fail(&err);
	return d;
}

/* --only IDS: a mark per node of the topology (exit 1 on an unknown id). */
static unsigned char *only_nodes(const struct inart_topo *t, const char *arg)
{
	unsigned char *m = calloc((size_t)t->n_nodes + 1, 1);
	char *copy = strdup(arg), *save = NULL;

	if (m == NULL || copy == NULL)
		cli_failf("out of memory");
	for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
		int v = inart_topo_find(t, id);

		if (v < 0)
			cli_failf("--only: node '%s' is not in the topology", id);
		m[v] = 1;
	}
	free(copy);
	return m;
}

static void install_options(const char *cmd, int argc, char **argv, struct install_args *a)
{
	enum { O_FLUSH = 1, O_ONLY, O_KEEP };
	static const struct option longopts[] = {
	    {"flush-ms", required_argument, NULL, O_FLUSH},
	    {"only", required_argument, NULL, O_ONLY},
	    {"keep-core", no_argument, NULL, O_KEEP},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_num rows[CLI_DEPLOY_ROWS];
	int c;

	memset(a, 0, sizeof(*a));
	cli_deploy_args_init(&a->d);
	cli_deploy_rows(&a->d, rows);
	cli_getopt_reset();
	while ((c = cli_getopt_rows(cmd, argc, argv, ":h", longopts, rows, CLI_DEPLOY_ROWS)) !=
	       -1) {
		switch (c) {
		case 'h':
			fputs(cmd_ctl_help, stdout);
			exit(EXIT_OK);
		case O_FLUSH:
			a->flush_ns =
			    (uint64_t)(cli_double(cmd, "--flush-ms", optarg, 0.001, 3600e3) * 1e6);
			break;
		case O_ONLY:
			a->only = optarg;
			break;
		case O_KEEP:
			a->keep_core = 1;
			break;
		default:
			cli_getopt_error(cmd, c, argv);
		}
	}
	cli_deploy_check(cmd, "install: ", argc, argv, &a->d);
}

static int act_install(const char *cmd, int argc, char **argv)
{
	struct install_args a;
	struct inart_install_opt opt;
	struct inart_err err = {{0}};
	struct inart_installer_cfg ci = {0};
	struct inart_plan *p;
	struct inart_deploy *d;
	unsigned char *only = NULL;
	char **ctl = NULL, id[17];
	int64_t epoch;
	uint32_t from;
	int rc;

	install_options(cmd, argc, argv, &a);
	ci.t = cli_load_topo(argv[optind]);
	ci.js = cli_load_jobs(argv[optind + 1], ci.t);
	p = cli_load_plan(argv[optind + 2], ci.t, ci.js);
	if (a.only != NULL)
		only = only_nodes(ci.t, a.only);
	d = cli_deploy_load(&a.d, ci.t, &ctl, &opt);
	if (inart_epoch_load(argv[optind + 2], NULL, &epoch, &from, &err) < 0)
		cli_fail(&err);
	if (a.flush_ns > 0) /* the command line over the deployment */
		opt.flush_timeout_ns = a.flush_ns;
	ci.d = d;
	ci.ctl = ctl;
	ci.ctl_dir = a.d.ctl_dir;
	ci.opt = &opt;
	ci.only = only;
	ci.learn = a.d.learn;
	ci.restart = a.d.restart;
	ci.dry = a.d.dry;
	ci.tables_only = a.keep_core;
	ci.epoch = epoch;
	ci.warn = stderr;
	rc = inart_installer_run(&ci, p, stdout, id, NULL, &err);
	if (rc == -EIO) { /* the transaction failed: the table says where */
		fprintf(stderr, "inart ctl install: %s\n", err.msg);
	} else if (rc < 0 && id[0] == 0) { /* the plan did not build */
		inart_err_prefix(&err, argv[optind + 2]);
		fprintf(stderr, "inart: %s\n", err.msg);
	} else if (rc < 0) {
		fprintf(stderr, "inart: %s%s%s%s\n", a.only ? "--only " : "", a.only ? a.only : "",
			a.only ? ": " : "", err.msg);
	}
	free(only);
	inart_deploy_ctl_free(ctl, ci.t->n_nodes);
	inart_deploy_destroy(d);
	inart_plan_destroy(p);
	inart_jobs_destroy((struct inart_jobs *)ci.js);
	inart_topo_destroy((struct inart_topo *)ci.t);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}

int cmd_ctl(int argc, char **argv)
{
	const char *cmd = "ctl", *act;

	if (argc < 2)
		cli_usage_error(cmd, "missing ACTION (install, stats, show, reset-stats, "
				     "lose-state, log-level, send, deploy)");
	act = argv[1];
	if (strcmp(act, "--help") == 0 || strcmp(act, "-h") == 0) {
		fputs(cmd_ctl_help, stdout);
		return EXIT_OK;
	}
	if (strcmp(act, "install") == 0)
		return act_install(cmd, argc - 1, argv + 1);
	if (strcmp(act, "stats") == 0)
		return act_simple(cmd, INART_CTL_STATS, argc - 1, argv + 1);
	if (strcmp(act, "show") == 0)
		return act_simple(cmd, INART_CTL_SHOW, argc - 1, argv + 1);
	if (strcmp(act, "reset-stats") == 0)
		return act_simple(cmd, INART_CTL_RESET_STATS, argc - 1, argv + 1);
	if (strcmp(act, "lose-state") == 0)
		return act_simple(cmd, INART_CTL_LOSE_STATE, argc - 1, argv + 1);
	if (strcmp(act, "log-level") == 0)
		return act_simple(cmd, INART_CTL_LOG_LEVEL, argc - 1, argv + 1);
	if (strcmp(act, "send") == 0)
		return act_send(cmd, argc - 1, argv + 1);
	if (strcmp(act, "deploy") == 0)
		return act_deploy(cmd, argc - 1, argv + 1);
	cli_usage_error(cmd, "unknown action '%s'", act);
}
