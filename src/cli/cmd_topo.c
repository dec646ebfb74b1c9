/*
 * cmd_topo: `inart topo gen|check|describe` -- generate a topology with the
 * generators of gen.h, validate topology (and jobs) files, and summarize a
 * topology.  A thin shell over gen.h and formats.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cp/model/gen.h"
#include "cli/util.h"

const char cmd_topo_help[] =
    "usage: inart topo gen FAMILY [OPTIONS] [-o FILE]\n"
    "       inart topo check TOPO [JOBS]\n"
    "       inart topo describe TOPO\n"
    "\n"
    "gen: write a generated topology as JSON (docs/formats.md) to FILE (default stdout).\n"
    "  fattree   --k K                      k-ary fat-tree, k even: k^3/4 hosts (h0..),\n"
    "                                       edge e0.., aggregation a0.., core c0..\n"
    "  leafspine --spines S --leaves L --hosts H\n"
    "                                       H hosts (h0..) per leaf (l0..), spines s0..\n"
    "  bcube     --n N --k K                BCube(n, k): n^(k+1) hosts, level-i switches\n"
    "                                       s<i>_<n>\n"
    "  options:\n"
    "  --ina all|tor|none|random:FRACTION   INA-capable switches (default all)\n"
    "  --seed S                             seed for --ina random (default 1)\n"
    "  --agg-gbps G                         aggregation throughput of INA switches\n"
    "                                       (default 400)\n"
    "  --trees N                            tree budget of INA switches (default 8)\n"
    "  --host-gbps G                        host link capacity (default 100)\n"
    "  --fabric-gbps G                      switch-switch link capacity (default 100)\n"
    "  -o, --output FILE                    output file ('-' = stdout)\n"
    "\n"
    "check: parse and validate TOPO (and JOBS against it); prints a one-line summary.\n"
    "describe: node and link counts, capacities, INA switches and their budgets.\n"
    "\n"
    "Exit status: 0 valid, 1 invalid file (the message names file and line:column\n"
    "or id), 2 usage error.\n";

/* --ina all|tor|none|random:FRACTION */
static void ina_opt(const char *cmd, const char *arg, struct inart_gen_opt *o)
{
	if (strcmp(arg, "all") == 0) {
		o->ina = INART_INA_ALL;
	} else if (strcmp(arg, "tor") == 0) {
		o->ina = INART_INA_TOR;
	} else if (strcmp(arg, "none") == 0) {
		o->ina = INART_INA_NONE;
	} else if (strncmp(arg, "random:", 7) == 0) {
		o->ina = INART_INA_RANDOM;
		o->ina_fraction = cli_double(cmd, "--ina random", arg + 7, 0, 1);
	} else {
		cli_usage_error(cmd, "--ina: expected all, tor, none or random:FRACTION, got '%s'",
				arg);
	}
}

static int topo_gen(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"k", required_argument, NULL, 'k'},
	    {"n", required_argument, NULL, 'n'},
	    {"spines", required_argument, NULL, 'S'},
	    {"leaves", required_argument, NULL, 'L'},
	    {"hosts", required_argument, NULL, 'H'},
	    {"ina", required_argument, NULL, 'i'},
	    {"seed", required_argument, NULL, 's'},
	    {"agg-gbps", required_argument, NULL, 'a'},
	    {"trees", required_argument, NULL, 't'},
	    {"host-gbps", required_argument, NULL, 'h' + 256},
	    {"fabric-gbps", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "topo gen", *out = "-";
	struct inart_gen_opt o;
	struct inart_err err = {{0}};
	struct inart_topo *t = NULL;
	int k = -1, n = -1, spines = -1, leaves = -1, hosts = -1, c;
	const struct cli_num nums[] = {
	    {'k', "--k", 0, 1024, .i = &k},
	    {'n', "--n", 1, 1024, .i = &n},
	    {'S', "--spines", 1, 100000, .i = &spines},
	    {'L', "--leaves", 1, 100000, .i = &leaves},
	    {'H', "--hosts", 1, 100000, .i = &hosts},
	    {'t', "--trees", 0, 1000000, .i = &o.trees},
	    {'a', "--agg-gbps", 1e-9, 1e9, .d = &o.agg_gbps},
	    {'h' + 256, "--host-gbps", 1e-9, 1e9, .d = &o.host_gbps},
	    {'f', "--fabric-gbps", 1e-9, 1e9, .d = &o.fabric_gbps},
	};
	char *text;

	inart_gen_opt_default(&o);
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		if (cli_num_opt(cmd, c, optarg, nums, sizeof(nums) / sizeof(nums[0])))
			continue;
		if (c == 'i')
			ina_opt(cmd, optarg, &o);
		else if (c == 's')
			o.seed = cli_u64(cmd, "--seed", optarg);
		else
			cli_common_opt(cmd, cmd_topo_help, c, argv, &out);
	}
	if (optind >= argc)
		cli_usage_error(cmd, "missing FAMILY (fattree, leafspine or bcube)");
	if (optind + 1 < argc)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if (strcmp(argv[optind], "fattree") == 0) {
		if (k < 0)
			cli_usage_error(cmd, "fattree needs --k K");
		t = inart_gen_fattree(k, &o, &err);
	} else if (strcmp(argv[optind], "leafspine") == 0) {
		if (spines < 0 || leaves < 0 || hosts < 0)
			cli_usage_error(cmd, "leafspine needs --spines S --leaves L --hosts H");
		t = inart_gen_leafspine(spines, leaves, hosts, &o, &err);
	} else if (strcmp(argv[optind], "bcube") == 0) {
		if (n < 0 || k < 0)
			cli_usage_error(cmd, "bcube needs --n N --k K");
		t = inart_gen_bcube(n, k, &o, &err);
	} else {
		cli_usage_error(cmd, "unknown family '%s' (fattree, leafspine or bcube)",
				argv[optind]);
	}
	if (t == NULL)
		cli_fail(&err);
	text = inart_topo_dump(t);
	cli_write(out, text);
	free(text);
	inart_topo_destroy(t);
	return EXIT_OK;
}

struct topo_counts {
	int hosts, switches, ina, tree_budget;
	double agg_gbps;
	int bg_arcs;
};

static void count(const struct inart_topo *t, struct topo_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *nd = &t->nodes[v];

		if (nd->kind == INART_NODE_HOST) {
			c->hosts++;
			continue;
		}
		c->switches++;
		if (nd->ina) {
			c->ina++;
			c->tree_budget += nd->trees;
			c->agg_gbps += nd->agg_gbps;
		}
	}
	for (int e = 0; e < inart_topo_n_arcs(t); e++)
		c->bg_arcs += t->arcs[e].bg_gbps > 0;
}

/* Options: only --help.  Operands: TOPO and at most max_more others.
 * Returns the index of TOPO. */
static int simple_opts(const char *cmd, int argc, char **argv, int max_more)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		cli_common_opt(cmd, cmd_topo_help, c, argv, NULL);
	if (optind >= argc)
		cli_usage_error(cmd, "missing TOPO");
	if (argc - optind > 1 + max_more)
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1 + max_more]);
	return optind;
}

static int topo_check(int argc, char **argv)
{
	const char *cmd = "topo check";
	int i = simple_opts(cmd, argc, argv, 1), workers = 0, ps = 0;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct topo_counts c;

	t = cli_load_topo(argv[i]);
	count(t, &c);
	printf("%s: ok: %d nodes (%d hosts, %d switches, %d INA), %d links\n", argv[i], t->n_nodes,
	       c.hosts, c.switches, c.ina, t->n_links);
	if (argc - i == 2) {
		js = cli_load_jobs(argv[i + 1], t);
		for (int j = 0; j < js->n_jobs; j++) {
			workers += js->jobs[j].n_workers;
			ps += js->jobs[j].n_ps;
		}
		printf("%s: ok: %d jobs, %d workers, %d candidate PSs\n", argv[i + 1], js->n_jobs,
		       workers, ps);
		inart_jobs_destroy(js);
	}
	inart_topo_destroy(t);
	return EXIT_OK;
}

/* Distinct values with counts (small helper for describe). */
struct tally {
	int n;
	double key[16];
	int cnt[16];
	int other;
};

static void tally_add(struct tally *ta, double key)
{
	for (int i = 0; i < ta->n; i++) {
		if (ta->key[i] == key) {
			ta->cnt[i]++;
			return;
		}
	}
	if (ta->n < 16) {
		ta->key[ta->n] = key;
		ta->cnt[ta->n++] = 1;
	} else {
		ta->other++;
	}
}

static void tally_print(const char *what, const struct tally *ta, const char *unit)
{
	printf("  %s:", what);
	for (int i = 0; i < ta->n; i++)
		printf(" %dx %g%s", ta->cnt[i], ta->key[i], unit);
	if (ta->other)
		printf(" (+%d other)", ta->other);
	printf("\n");
}

static int topo_describe(int argc, char **argv)
{
	const char *cmd = "topo describe";
	int i = simple_opts(cmd, argc, argv, 0), max_deg = 0, listed = 0;
	struct tally host_cap = {0}, fab_cap = {0}, agg = {0}, trees = {0};
	struct inart_topo *t;
	struct topo_counts c;

	t = cli_load_topo(argv[i]);
	count(t, &c);
	for (int e = 0; e < inart_topo_n_arcs(t); e++) {
		const struct inart_arc *a = &t->arcs[e];
		int host_link = t->nodes[a->from].kind == INART_NODE_HOST ||
				t->nodes[a->to].kind == INART_NODE_HOST;

		tally_add(host_link ? &host_cap : &fab_cap, a->gbps);
	}
	for (int v = 0; v < t->n_nodes; v++) {
		int deg = t->out_off[v + 1] - t->out_off[v];

		if (deg > max_deg)
			max_deg = deg;
		if (t->nodes[v].ina) {
			tally_add(&agg, t->nodes[v].agg_gbps);
			tally_add(&trees, t->nodes[v].trees);
		}
	}
	printf("%s\n", argv[i]);
	printf("  nodes: %d (%d hosts, %d switches, %d INA-capable)\n", t->n_nodes, c.hosts,
	       c.switches, c.ina);
	printf("  links: %d (%d directed arcs, %d with background load), max degree %d\n",
	       t->n_links, inart_topo_n_arcs(t), c.bg_arcs, max_deg);
	if (host_cap.n)
		tally_print("host arcs", &host_cap, " Gbit/s");
	if (fab_cap.n)
		tally_print("fabric arcs", &fab_cap, " Gbit/s");
	if (c.ina) {
		tally_print("INA aggregation throughput", &agg, " Gbit/s");
		tally_print("INA tree budgets", &trees, "");
		printf("  total tree budget %d, total aggregation throughput %g Gbit/s\n",
		       c.tree_budget, c.agg_gbps);
		printf("  INA switches:");
		for (int v = 0; v < t->n_nodes; v++) {
			if (!t->nodes[v].ina)
				continue;
			if (listed == 32) {
				printf(" ... (%d more)", c.ina - listed);
				break;
			}
			printf(" %s", t->nodes[v].id);
			listed++;
		}
		printf("\n");
	} else {
		printf("  no INA-capable switch\n");
	}
	inart_topo_destroy(t);
	return EXIT_OK;
}

int cmd_topo(int argc, char **argv)
{
	if (argc < 2)
		cli_usage_error("topo", "missing action (gen, check or describe)");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cmd_topo_help, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "gen") == 0)
		return topo_gen(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return topo_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "describe") == 0)
		return topo_describe(argc - 1, argv + 1);
	cli_usage_error("topo", "unknown action '%s' (gen, check or describe)", argv[1]);
}
