/*
 * sim_bench: the simulated fabric as a packet-level simulator.  Not a test:
 * it prints numbers.
 *
 *   sim_bench [K [VALUES [LOSS]]]   (fat-tree k = 4, 100000 values, loss 0)
 *
 * Fat-tree(K) with 100 Gbit/s links, INA at every switch (4 trees each), one
 * job with half of the hosts as workers (every other host) and three PSs;
 * for each planner (inart, atp, switchml, byteps, ps) the plan is installed
 * on the simulated fabric and one all-reduce of VALUES float32 per worker
 * runs with per-link loss LOSS.  Printed per planner: the simulated
 * completion time, the evaluator's communication time for the same volume
 * (gradient = 4 * VALUES bytes: the load model's prediction), events
 * processed and simulator speed (events per CPU second).  Results are
 * checked against a reference sum (exact int32 sums) and a mismatch is
 * reported.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rng.h"
#include "cp/model/gen.h"
#include "cp/planner/planner.h"
#include "bridge/install.h"
#include "dp/quant.h"
#include "sim/sim.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 0 if every worker's result equals the reference bit for bit. */
static int check(const struct inart_sim *s, const struct inart_install *in, float **x, size_t n)
{
	float *res = malloc(n * sizeof(float)), *first = malloc(n * sizeof(float));
	int bad = 0;

	if (res == NULL || first == NULL) {
		free(res);
		free(first);
		return -1;
	}
	for (int k = 0; k < in->n_workers && !bad; k++) {
		if (inart_sim_result(s, k, res, n) < 0)
			bad = 1;
		else if (k == 0)
			memcpy(first, res, n * sizeof(float));
		else if (memcmp(first, res, n * sizeof(float)) != 0)
			bad = 1;
	}
	for (size_t i = 0; i < n && !bad; i++) {
		int sc;
		int64_t sum = 0;
		float want;

		if (inart_worker_value_scale(inart_sim_worker(s, 0), i, &sc) < 0)
			bad = 1;
		for (int k = 0; k < in->n_workers && !bad; k++) {
			int32_t q;

			if (inart_quant_value(x[k][i], sc, &q) < 0)
				bad = 1;
			sum += q;
		}
		inart_quant_decode64(&sum, 1, sc, &want);
		if (memcmp(&want, &first[i], sizeof(float)) != 0)
			bad = 1;
	}
	free(res);
	free(first);
	return bad;
}

int main(int argc, char **argv)
{
	const char *algos[] = {"inart", "atp", "switchml", "byteps", "ps"};
	int k = argc > 1 ? atoi(argv[1]) : 4;
	size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 100000;
	double loss = argc > 3 ? atof(argv[3]) : 0;
	struct inart_gen_opt go;
	struct inart_err err = {{0}};
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_deploy *d;
	int hosts, nw = 0, ps[3];
	int *workers;

	if (k < 2 || k % 2 || n == 0 || loss < 0 || loss >= 1) {
		fprintf(stderr, "usage: sim_bench [K (even) [VALUES [LOSS]]]\n");
		return 2;
	}
	inart_gen_opt_default(&go);
	go.trees = 4;
	t = inart_gen_fattree(k, &go, &err);
	if (t == NULL) {
		fprintf(stderr, "sim_bench: %s\n", err.msg);
		return 1;
	}
	hosts = k * k * k / 4;
	workers = malloc((size_t)hosts * sizeof(int));
	for (int h = 0; h < hosts; h += 2)
		workers[nw++] = h;
	ps[0] = 1;
	ps[1] = hosts / 2 + 1;
	ps[2] = hosts - 1;
	js = inart_jobs_create();
	if (inart_jobs_add(js, "bench", workers, nw, ps, 3, 4.0 * (double)n, NULL, &err) < 0 ||
	    inart_jobs_validate(js, t, &err) < 0) {
		fprintf(stderr, "sim_bench: %s\n", err.msg);
		return 1;
	}
	d = inart_deploy_auto(t);
	printf("fat-tree k=%d: %d hosts, %d workers, 3 PSs, %zu values per worker, loss %.2f%%\n",
	       k, hosts, nw, n, loss * 100);
	printf("%-9s %12s %12s %10s %12s %s\n", "planner", "sim time", "model time", "events",
	       "events/cpu-s", "result");
	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct inart_planner_opt po = {.size = sizeof(po)};
		struct inart_plan *p = NULL;
		struct inart_install *in = NULL;
		struct inart_sim_opt so;
		struct inart_sim *s;
		struct inart_sim_result r;
		struct inart_rng rng;
		struct inart_err why = {{0}};
		float **x;
		double c0, c1;
		int rc;

		inart_planner_opt_default(&po);
		if (inart_planner_run(algos[a], t, js, &po, &p, &err) < 0 ||
		    inart_install_build(t, js, p, d, NULL, &in, &err) < 0) {
			printf("%-9s failed: %s\n", algos[a], err.msg);
			inart_plan_destroy(p);
			continue;
		}
		inart_sim_opt_default(&so);
		so.loss = loss;
		s = inart_sim_create(t, d, &so);
		if (s == NULL || inart_sim_install(s, in, &why) < 0) {
			printf("%-9s sim failed: %s\n", algos[a], s ? why.msg : "create");
			inart_sim_destroy(s);
			inart_install_destroy(in);
			inart_plan_destroy(p);
			continue;
		}
		x = malloc((size_t)in->n_workers * sizeof(float *));
		inart_rng_seed(&rng, 1);
		for (int w = 0; w < in->n_workers; w++) {
			x[w] = malloc(n * sizeof(float));
			for (size_t i = 0; i < n; i++)
				x[w][i] = (float)(inart_rng_unit(&rng) * 2 - 1);
		}
		c0 = cpu_s();
		rc = inart_sim_allreduce(s, (const float *const *)x, n, 1, 100000000000ull, &r);
		c1 = cpu_s();
		printf("%-9s %9.3f us %9.3f us %10llu %12.0f %s\n", algos[a], r.time_s * 1e6,
		       p->comm_time_s * 1e6, (unsigned long long)r.events,
		       (double)r.events / (c1 - c0 > 0 ? c1 - c0 : 1e-9),
		       rc < 0		    ? "NOT DONE"
		       : check(s, in, x, n) ? "WRONG"
					    : "exact");
		for (int w = 0; w < in->n_workers; w++)
			free(x[w]);
		free(x);
		inart_sim_destroy(s);
		inart_install_destroy(in);
		inart_plan_destroy(p);
	}
	inart_deploy_destroy(d);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
	free(workers);
	return 0;
}
