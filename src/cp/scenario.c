/*
 * scenario: the built-in scenarios (see scenario.h).  Each is a generated
 * topology plus seeded random jobs; `seed` changes only the job placement
 * (and random INA placement where a scenario uses it), so that every figure
 * the benchmark prints can be reproduced with `inart run --scenario NAME
 * --seed S`.
 */
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rng.h"
#include "gen.h"

struct scenario {
	const char *name;
	const char *desc;
	int family; /* 0 fat-tree(a), 1 leaf-spine(a, b, c), 2 bcube(a, b) */
	int a, b, c;
	enum inart_ina_mode ina;
	double agg_gbps;
	int trees;
	double host_gbps, fabric_gbps;
	int n_jobs, n_workers, n_ps;
	const char *model;
	double background; /* fraction of fabric links' capacity used by others */
};

static const struct scenario scenarios[] = {
    {"default",
     "fat-tree k=4, 2 jobs (6 workers / 3 PS and 4 workers / 2 PS), INA on all switches "
     "with 2 trees each, 20% background on a third of the fabric links",
     0, 4, 0, 0, INART_INA_ALL, 200, 2, 100, 100, 2, 0, 0, "resnet50", 0.2},
    {"scarce",
     "fat-tree k=8, 4 jobs of 16 workers and 4 PS, INA only at ToRs with 1 tree and "
     "100 Gbit/s of aggregation each (not enough for every worker)",
     0, 8, 0, 0, INART_INA_TOR, 100, 1, 100, 100, 4, 16, 4, "vgg16", 0},
    {"fattree4", "fat-tree k=4, 1 job of 8 workers and 4 PS, INA everywhere, 4 trees", 0, 4, 0, 0,
     INART_INA_ALL, 400, 4, 100, 100, 1, 8, 4, "resnet50", 0},
    {"fattree8", "fat-tree k=8, 2 jobs of 32 workers and 4 PS, INA everywhere, 4 trees", 0, 8, 0, 0,
     INART_INA_ALL, 400, 4, 100, 100, 2, 32, 4, "bert-base", 0},
    {"fattree16", "fat-tree k=16 (1024 hosts), 1 job of 256 workers and 8 PS, INA everywhere", 0,
     16, 0, 0, INART_INA_ALL, 400, 8, 100, 100, 1, 256, 8, "gpt2-small", 0},
    {"fattree32", "fat-tree k=32 (8192 hosts), 1 job of 1024 workers and 16 PS, INA everywhere", 0,
     32, 0, 0, INART_INA_ALL, 400, 8, 100, 100, 1, 1024, 16, "gpt2-small", 0},
    {"leafspine",
     "leaf-spine 4 spines x 8 leaves x 8 hosts, 2 jobs of 16 workers and 4 PS, "
     "INA on a random half of the switches",
     1, 4, 8, 8, INART_INA_RANDOM, 400, 4, 100, 100, 2, 16, 4, "resnet50", 0.1},
    {"bcube",
     "BCube(4, 1) (16 hosts, hosts relay), 1 job of 8 workers and 4 PS, INA on "
     "level-0 switches",
     2, 4, 1, 0, INART_INA_TOR, 400, 2, 100, 100, 1, 8, 4, "alexnet", 0},
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

const char *const inart_scenario_names[] = {
    "default",	 "scarce",    "fattree4", "fattree8", "fattree16",
    "fattree32", "leafspine", "bcube",	  NULL,
};

static const struct scenario *find(const char *name)
{
	for (size_t i = 0; i < N_SCENARIOS; i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	return NULL;
}

const char *inart_scenario_describe(const char *name)
{
	const struct scenario *s = find(name);

	return s ? s->desc : NULL;
}

struct inart_jobs *inart_scenario_random_jobs(const struct inart_topo *t, int n_jobs, int n_workers,
					      int n_ps, double bytes, uint64_t seed,
					      struct inart_err *err)
{
	struct inart_jobs *js = NULL;
	struct inart_rng rng;
	int *hosts = NULL, n_hosts = 0, need = n_jobs * (n_workers + n_ps);
	char id[32];

	if (n_jobs < 1 || n_workers < 1 || n_ps < 1) {
		inart_err_set(err, -EINVAL, "random jobs: counts must be >= 1");
		errno = EINVAL;
		return NULL;
	}
	hosts = malloc(sizeof(int) * (size_t)(t->n_nodes + 1));
	js = inart_jobs_create();
	if (hosts == NULL || js == NULL) {
		inart_err_set(err, -ENOMEM, "out of memory");
		errno = ENOMEM;
		goto fail;
	}
	for (int v = 0; v < t->n_nodes; v++)
		if (t->nodes[v].kind == INART_NODE_HOST)
			hosts[n_hosts++] = v;
	if (need > n_hosts) {
		inart_err_set(err, -EINVAL, "random jobs: %d hosts needed, the topology has %d",
			      need, n_hosts);
		errno = EINVAL;
		goto fail;
	}
	inart_rng_seed(&rng, seed);
	for (int i = 0; i < need; i++) { /* partial Fisher-Yates */
		int k = i + (int)inart_rng_below(&rng, (uint64_t)(n_hosts - i));
		int tmp = hosts[i];

		hosts[i] = hosts[k];
		hosts[k] = tmp;
	}
	for (int j = 0; j < n_jobs; j++) {
		int *w = hosts + j * (n_workers + n_ps);
		int rc;

		snprintf(id, sizeof(id), "j%d", j);
		rc = inart_jobs_add(js, id, w, n_workers, w + n_workers, n_ps, bytes, NULL, err);
		if (rc < 0) {
			errno = -rc;
			goto fail;
		}
	}
	free(hosts);
	return js;
fail:
	free(hosts);
	inart_jobs_destroy(js);
	return NULL;
}

/* Put background load on every third fabric (switch-switch) link. */
static void add_background(struct inart_topo *t, double frac)
{
	int k = 0;

	for (int l = 0; l < t->n_links; l++) {
		struct inart_arc *ab = &t->arcs[2 * l], *ba = &t->arcs[2 * l + 1];

		if (t->nodes[ab->from].kind != INART_NODE_SWITCH ||
		    t->nodes[ab->to].kind != INART_NODE_SWITCH)
			continue;
		if (k++ % 3 != 0)
			continue;
		ab->bg_gbps = frac * ab->gbps;
		ba->bg_gbps = frac * ba->gbps;
	}
}

/* The "default" scenario's jobs have different sizes. */
static struct inart_jobs *default_jobs(const struct inart_topo *t, uint64_t seed,
				       struct inart_err *err)
{
	struct inart_jobs *a = inart_scenario_random_jobs(t, 1, 10, 5, 1, seed, err);
	struct inart_jobs *js = NULL;
	double bytes = inart_model_bytes("resnet50");
	const struct inart_job *s;

	if (a == NULL)
		return NULL;
	s = &a->jobs[0];
	js = inart_jobs_create();
	if (js == NULL ||
	    inart_jobs_add(js, "j0", s->workers, 6, s->ps, 3, bytes, "resnet50", err) < 0 ||
	    inart_jobs_add(js, "j1", s->workers + 6, 4, s->ps + 3, 2, inart_model_bytes("vgg16"),
			   "vgg16", err) < 0) {
		inart_jobs_destroy(js);
		js = NULL;
		errno = ENOMEM;
	}
	inart_jobs_destroy(a);
	return js;
}

int inart_scenario_build(const char *name, uint64_t seed, struct inart_topo **tp,
			 struct inart_jobs **jsp, struct inart_err *err)
{
	const struct scenario *s = find(name);
	struct inart_gen_opt o;
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	int rc = 0;

	if (s == NULL)
		return inart_err_set(err, -EINVAL, "unknown scenario '%s'", name);
	inart_gen_opt_default(&o);
	o.ina = s->ina;
	o.ina_fraction = 0.5;
	o.seed = seed;
	o.agg_gbps = s->agg_gbps;
	o.trees = s->trees;
	o.host_gbps = s->host_gbps;
	o.fabric_gbps = s->fabric_gbps;
	if (s->family == 0)
		t = inart_gen_fattree(s->a, &o, err);
	else if (s->family == 1)
		t = inart_gen_leafspine(s->a, s->b, s->c, &o, err);
	else
		t = inart_gen_bcube(s->a, s->b, &o, err);
	if (t == NULL) {
		rc = -errno;
		goto out;
	}
	if (s->background > 0)
		add_background(t, s->background);
	if (strcmp(s->name, "default") == 0) {
		js = default_jobs(t, seed, err);
	} else {
		js = inart_scenario_random_jobs(t, s->n_jobs, s->n_workers, s->n_ps,
						inart_model_bytes(s->model), seed, err);
		for (int j = 0; js != NULL && j < js->n_jobs; j++)
			js->jobs[j].model = strdup(s->model);
	}
	if (js == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto out;
	}
	rc = inart_jobs_validate(js, t, err);
out:
	if (rc < 0) {
		inart_topo_destroy(t);
		inart_jobs_destroy(js);
		return rc;
	}
	*tp = t;
	*jsp = js;
	return 0;
}
