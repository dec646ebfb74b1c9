/*
 * cmd_emu_up: `inart emu up TOPO [JOBS]` -- build the emulated network with
 * its daemons and leave it running (for experiments by hand with `inart ctl`
 * and workers); `inart emu down --prefix P` removes it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/scale.h"
#include "cli/emu_cli.h"

static const char help[] =
    "usage: inart emu up TOPO [JOBS] [OPTIONS]\n"
    "\n"
    "Build TOPO as an emulated network (root) with 'inart switchd' on every switch\n"
    "and 'inart ps' on every PS of JOBS, and leave it running (without background\n"
    "traffic, which needs the emulator's process); print the prefix,\n"
    "the deployment file (for 'inart ctl install --deploy' and workers) and the\n"
    "namespaces.  'inart emu down --prefix P' removes it.\n"
    "\n"
    "Options: --prefix P, --mbps M, --rate-scale R, --loss P, --seed S,\n"
    "--no-background, --no-agg-limit, --queue-ms X, --io MODE, --agg WHERE,\n"
    "--no-size-limit, -q\n"
    "(see 'inart emu run --help').\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or failure, 2 usage error.\n";

static void on_progress(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "inart emu: %s\n", msg);
}

int cmd_emu_up(int argc, char **argv)
{
	const char *cmd = "emu up";
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_emu *e;
	struct emu_args a;
	char self[4096];
	ssize_t n;
	double m = 0;

	emu_parse(cmd, argc, argv, help, 0, &a);
	if (argc - optind < 1 || argc - optind > 2)
		cli_usage_error(cmd, "expected TOPO [JOBS]");
	emu_need_root("up");
	t = cli_load_topo(argv[optind]);
	js = argc - optind == 2 ? cli_load_jobs(argv[optind + 1], t) : inart_jobs_create();
	for (int e2 = 0; e2 < inart_topo_n_arcs(t); e2++)
		m = t->arcs[e2].gbps > m ? t->arcs[e2].gbps : m;
	if (a.rate_scale == 0)
		a.rate_scale = a.mbps / (m * 1e3);
	a.o.net.rate_scale = a.rate_scale;
	a.o.net.prefix = a.prefix;
	emu_check_limits(&a, t, a.rate_scale);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		cli_failf("cannot find this program: /proc/self/exe");
	self[n] = '\0';
	a.o.inart = self;
	a.o.topo_path = argv[optind];
	a.o.detach = 1;
	if (!a.quiet)
		a.o.progress = on_progress;
	if (inart_emu_start(t, js, &a.o, &e, &err) < 0)
		cli_fail(&err);
	printf("prefix %s\ndeployment %s/deploy.json\nnamespaces %s%s-*\n", a.prefix,
	       inart_emu_network(e)->dir, INART_EMU_NS_PREFIX, a.prefix);
	printf("remove it with: inart emu down --prefix %s\n", a.prefix);
	fflush(stdout);
	inart_emu_detach(e);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	return EXIT_OK;
}
