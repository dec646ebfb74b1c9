/*
 * cmd_eval: `inart eval TOPO JOBS PLAN [--json]` -- check any plan file
 * (written by a planner, by hand or by another tool) with the evaluator and
 * report its times, the bottleneck, the most loaded links and the trees per
 * INA switch.  An invalid plan exits 1 with the evaluator's reason.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rank.h"
#include "cp/model/evaluate.h"
#include "cli/util.h"

const char cmd_eval_help[] =
    "usage: inart eval TOPO JOBS PLAN [--json] [--top N]\n"
    "\n"
    "Check PLAN (docs/formats.md) against TOPO and JOBS and compute its\n"
    "communication time with the evaluator (the single definition used by every\n"
    "algorithm): push, pull and communication time, the bottleneck link or INA\n"
    "switch, the most loaded links, trees and aggregation input per INA switch,\n"
    "and the push volume arriving at each PS.\n"
    "\n"
    "Options:\n"
    "  --json        machine-readable output\n"
    "  --top N       number of most loaded links to list (default 10)\n"
    "\n"
    "Exit status: 0 valid plan, 1 invalid input or plan (the reason names the\n"
    "job, nodes and rule broken), 2 usage error.\n";

static double arc_time(const struct inart_topo *t, const struct inart_eval *ev, int e)
{
	double res = inart_arc_residual(&t->arcs[e]);
	double load = ev->arc_push_gbit[e] + ev->arc_pull_gbit[e];

	if (load <= 0)
		return 0;
	return res > 0 ? load / res : INFINITY;
}

/* jansson refuses non-finite reals: map them to null. */
static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static char *eval_json(const struct inart_topo *t, const struct inart_plan *p,
		       const struct inart_eval *ev, const struct inart_rank *rank, int n_top)
{
	json_t *root = json_object(), *links = json_array(), *sw = json_array(), *ps = json_array(),
	       *bn = json_object();
	char *s;

	json_object_set_new(root, "valid", json_true());
	json_object_set_new(root, "algorithm", json_string(p->algorithm ? p->algorithm : ""));
	json_object_set_new(root, "comm_time_s", jreal(ev->comm_time_s));
	json_object_set_new(root, "push_time_s", jreal(ev->push_time_s));
	json_object_set_new(root, "pull_time_s", jreal(ev->pull_time_s));
	json_object_set_new(root, "lp_bound_s", jreal(p->lp_bound_s));
	if (ev->bottleneck_arc >= 0) {
		const struct inart_arc *a = &t->arcs[ev->bottleneck_arc];

		json_object_set_new(bn, "kind", json_string("link"));
		json_object_set_new(bn, "from", json_string(cli_node_id(t, a->from)));
		json_object_set_new(bn, "to", json_string(cli_node_id(t, a->to)));
	} else if (ev->bottleneck_node >= 0) {
		json_object_set_new(bn, "kind", json_string("switch"));
		json_object_set_new(bn, "id", json_string(cli_node_id(t, ev->bottleneck_node)));
	} else {
		json_object_set_new(bn, "kind", json_string("none"));
	}
	json_object_set_new(root, "bottleneck", bn);
	for (int i = 0; i < n_top; i++) {
		int e = rank[i].id;
		const struct inart_arc *a = &t->arcs[e];
		json_t *l = json_object();

		json_object_set_new(l, "from", json_string(cli_node_id(t, a->from)));
		json_object_set_new(l, "to", json_string(cli_node_id(t, a->to)));
		json_object_set_new(l, "push_gbit", json_real(ev->arc_push_gbit[e]));
		json_object_set_new(l, "pull_gbit", json_real(ev->arc_pull_gbit[e]));
		json_object_set_new(l, "residual_gbps", json_real(inart_arc_residual(a)));
		json_object_set_new(l, "time_s", jreal(rank[i].value));
		json_array_append_new(links, l);
	}
	json_object_set_new(root, "top_links", links);
	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *nd = &t->nodes[v];
		json_t *o;

		if (nd->ina && (ev->node_trees[v] > 0 || ev->node_agg_gbit[v] > 0)) {
			o = json_object();
			json_object_set_new(o, "id", json_string(nd->id));
			json_object_set_new(o, "trees", json_integer(ev->node_trees[v]));
			json_object_set_new(o, "budget", json_integer(nd->trees));
			json_object_set_new(o, "agg_gbit", json_real(ev->node_agg_gbit[v]));
			json_object_set_new(o, "agg_time_s",
					    json_real(ev->node_agg_gbit[v] / nd->agg_gbps));
			json_array_append_new(sw, o);
		}
		if (ev->node_ingress_gbit[v] > 0) {
			o = json_object();
			json_object_set_new(o, "id", json_string(nd->id));
			json_object_set_new(o, "ingress_gbit", json_real(ev->node_ingress_gbit[v]));
			json_array_append_new(ps, o);
		}
	}
	json_object_set_new(root, "switches", sw);
	json_object_set_new(root, "ps_ingress", ps);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(root);
	return s;
}

static void eval_text(const char *path, const struct inart_topo *t, const struct inart_plan *p,
		      const struct inart_eval *ev, const struct inart_rank *rank, int n_top)
{
	int shown = 0;

	printf("%s: valid plan", path);
	if (p->algorithm && p->algorithm[0])
		printf(" (algorithm %s)", p->algorithm);
	printf("\n");
	printf("communication time  %.6g ms\n", ev->comm_time_s * 1e3);
	printf("push time           %.6g ms\n", ev->push_time_s * 1e3);
	printf("pull time           %.6g ms\n", ev->pull_time_s * 1e3);
	if (!isnan(p->lp_bound_s) && p->lp_bound_s > 0)
		printf("LP bound (in file)  %.6g ms (ratio %.4f)\n", p->lp_bound_s * 1e3,
		       ev->comm_time_s / p->lp_bound_s);
	if (!isnan(p->comm_time_s) &&
	    fabs(p->comm_time_s - ev->comm_time_s) > 1e-9 * fmax(1.0, ev->comm_time_s))
		printf("note: the file states comm_time_s %.9g, the evaluator finds %.9g\n",
		       p->comm_time_s, ev->comm_time_s);
	if (ev->bottleneck_arc >= 0) {
		const struct inart_arc *a = &t->arcs[ev->bottleneck_arc];

		printf("bottleneck          link %s -> %s\n", cli_node_id(t, a->from),
		       cli_node_id(t, a->to));
	} else if (ev->bottleneck_node >= 0) {
		printf("bottleneck          aggregation at INA switch %s\n",
		       cli_node_id(t, ev->bottleneck_node));
	} else {
		printf("bottleneck          none (no traffic)\n");
	}
	if (n_top > 0) {
		printf("\nmost loaded links (time = (push + pull) / residual):\n");
		printf("  %-24s %12s %12s %10s %12s\n", "link", "push Gbit", "pull Gbit",
		       "res Gbit/s", "time ms");
		for (int i = 0; i < n_top; i++) {
			int e = rank[i].id;
			const struct inart_arc *a = &t->arcs[e];
			char name[256];

			snprintf(name, sizeof(name), "%s->%s", cli_node_id(t, a->from),
				 cli_node_id(t, a->to));
			printf("  %-24s %12.6g %12.6g %10.6g %12.6g\n", name, ev->arc_push_gbit[e],
			       ev->arc_pull_gbit[e], inart_arc_residual(a), rank[i].value * 1e3);
		}
	}
	for (int v = 0; v < t->n_nodes; v++) {
		const struct inart_node *nd = &t->nodes[v];
		char trees[32];

		if (!nd->ina || (ev->node_trees[v] == 0 && ev->node_agg_gbit[v] <= 0))
			continue;
		if (shown++ == 0) {
			printf("\nINA switches in use:\n");
			printf("  %-16s %8s %12s %12s\n", "switch", "trees", "agg Gbit", "agg ms");
		}
		snprintf(trees, sizeof(trees), "%d/%d", ev->node_trees[v], nd->trees);
		printf("  %-16s %8s %12.6g %12.6g\n", nd->id, trees, ev->node_agg_gbit[v],
		       ev->node_agg_gbit[v] / nd->agg_gbps * 1e3);
	}
	if (shown == 0)
		printf("\nno in-network aggregation\n");
	shown = 0;
	for (int v = 0; v < t->n_nodes; v++) {
		if (ev->node_ingress_gbit[v] <= 0)
			continue;
		if (shown++ == 0)
			printf("\nPS ingress (push Gbit arriving at the PS):\n");
		printf("  %-16s %12.6g\n", cli_node_id(t, v), ev->node_ingress_gbit[v]);
	}
}

int cmd_eval(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"top", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "eval";
	struct inart_err err = {{0}};
	struct inart_evaluator *evr;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_plan *p;
	struct inart_eval ev;
	struct inart_rank *rank; /* id: arc, value: its time (s) */
	int c, json = 0, top = 10, n_arcs, n_top = 0;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'n':
			top = cli_int(cmd, "--top", optarg, 0, 1000000);
			break;
		default:
			cli_common_opt(cmd, cmd_eval_help, c, argv, NULL);
		}
	}
	cli_operands(cmd, argc, argv, (const char *const[]){"TOPO", "JOBS", "PLAN", NULL});
	t = cli_load_topo(argv[optind]);
	js = cli_load_jobs(argv[optind + 1], t);
	p = cli_load_plan(argv[optind + 2], t, js);
	evr = cli_evaluate(t, js, p, argv[optind + 2], &ev, &err);
	if (evr == NULL) {
		if (json) {
			json_t *o = json_object();
			char *s;

			json_object_set_new(o, "valid", json_false());
			json_object_set_new(o, "reason", json_string(err.msg));
			s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			if (s)
				printf("%s\n", s);
			free(s);
			json_decref(o);
		}
		cli_fail(&err);
	}
	n_arcs = inart_topo_n_arcs(t);
	rank = malloc(sizeof(*rank) * (size_t)(n_arcs > 0 ? n_arcs : 1));
	if (rank == NULL)
		cli_failf("out of memory");
	for (int e = 0; e < n_arcs; e++) {
		if (ev.arc_push_gbit[e] + ev.arc_pull_gbit[e] <= 0)
			continue;
		rank[n_top].id = e;
		rank[n_top++].value = arc_time(t, &ev, e);
	}
	inart_rank_sort(rank, (size_t)n_top);
	if (n_top > top)
		n_top = top;
	if (json) {
		char *s = eval_json(t, p, &ev, rank, n_top);

		if (s == NULL)
			cli_failf("out of memory");
		printf("%s\n", s);
		free(s);
	} else {
		eval_text(argv[optind + 2], t, p, &ev, rank, n_top);
	}
	free(rank);
	inart_evaluator_destroy(evr);
	inart_plan_destroy(p);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return EXIT_OK;
}
