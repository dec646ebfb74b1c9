/*
 * scenario: the built-in scenarios (see scenario.h).  Each is a generated
 * topology plus seeded random jobs; `seed` changes only the job placement
 * (and random INA placement where a scenario uses it), so that every figure
 * the benchmark prints can be reproduced with `inart run --scenario NAME
 * --seed S`.
 */
#include "cp/model/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "cp/model/gen.h"

enum topo_family { FAT_TREE, LEAF_SPINE, BCUBE };

/* A built-in scenario, a line each: the topology (fat-tree k=a; leaf-spine a
 * spines x b leaves x c hosts; BCube(a, b)); where INA is, with the aggregation
 * throughput (Gbit/s) and trees of an INA switch; n jobs
 * of w workers and p PSs (n = 0: the "default" scenario's jobs of
 * different sizes, default_sizes) training model; and the fraction of a third of
 * the fabric links' capacity that background traffic takes.  Links are the
 * generator's (100 Gbit/s).  describe() writes the description from these. */
struct scenario {
	const char *name;
	enum topo_family family;
	int a, b, c;
	enum inart_ina_mode ina;
	int agg_gbps, trees;
	int n, w, p;
	const char *model;
	double background;
};

static const struct scenario scenarios[] = {
    {"default", FAT_TREE, 4, 0, 0, INART_INA_ALL, 200, 2, 0, 0, 0, NULL, 0.2},
    {"scarce", FAT_TREE, 8, 0, 0, INART_INA_TOR, 100, 1, 4, 16, 4, "vgg16", 0},
    {"fattree4", FAT_TREE, 4, 0, 0, INART_INA_ALL, 400, 4, 1, 8, 4, "resnet50", 0},
    {"fattree8", FAT_TREE, 8, 0, 0, INART_INA_ALL, 400, 4, 2, 32, 4, "bert-base", 0},
    {"fattree16", FAT_TREE, 16, 0, 0, INART_INA_ALL, 400, 8, 1, 256, 8, "gpt2-small", 0},
    {"fattree32", FAT_TREE, 32, 0, 0, INART_INA_ALL, 400, 8, 1, 1024, 16, "gpt2-small", 0},
    {"leafspine", LEAF_SPINE, 4, 8, 8, INART_INA_RANDOM, 400, 4, 2, 16, 4, "resnet50", 0.1},
    {"bcube", BCUBE, 4, 1, 0, INART_INA_TOR, 400, 2, 1, 8, 4, "alexnet", 0},
};
#define RANDOM_INA_FRACTION 0.5

/* The "default" scenario's jobs (n = 0 in its row), of different sizes. */
static const struct {
	int w, p;
	const char *model;
} default_sizes[] = {{6, 3, "resnet50"}, {4, 2, "vgg16"}};
#define N_DEFAULT_JOBS (sizeof(default_sizes) / sizeof(default_sizes[0]))

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

#define FAMILY_PREFIX "scarce-small/"
#define FAMILY_DESC                                                                                \
	"instance N of the scarce family: a small oversubscribed leaf-spine (2-3 spines, 3-5 "     \
	"leaves, 2-4 hosts each), INA only at leaves with 1-2 trees, 2-3 jobs whose PSs are "      \
	"packed in 1-2 racks behind thin uplinks"

const char *const inart_scenario_names[] = {
    "default",	 "scarce",    "fattree4", "fattree8",	    "fattree16",
    "fattree32", "leafspine", "bcube",	  "scarce-small/N", NULL,
};

static const struct scenario *find(const char *name)
{
	for (size_t i = 0; i < N_SCENARIOS; i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	return NULL;
}

/* "scarce-small/N" with N a non-negative decimal integer: *index = N. */
static int family_index(const char *name, int *index)
{
	const char *p = name + strlen(FAMILY_PREFIX);
	char *end;
	long v;

	if (strncmp(name, FAMILY_PREFIX, strlen(FAMILY_PREFIX)) != 0 || *p < '0' || *p > '9')
		return 0;
	v = strtol(p, &end, 10);
	if (*end != '\0' || v > 1000000)
		return 0;
	*index = (int)v;
	return 1;
}

int inart_scenario_known(const char *name)
{
	int i;

	return find(name) != NULL || family_index(name, &i);
}

static int describe(const struct scenario *s, char *buf, size_t size)
{
	static const char *const ina[] = {
	    [INART_INA_ALL] = "on every switch",
	    [INART_INA_TOR] = "only at ToRs",
	    [INART_INA_RANDOM] = "on a random half of the switches",
	    [INART_INA_NONE] = "nowhere",
	};
	const char *where = ina[s->ina];
	char topo[64], jobs[128], bg[64] = "";
	int bcube_hosts = s->a; /* n^(k+1) */

	if (s->family == FAT_TREE) {
		snprintf(topo, sizeof(topo), "fat-tree k=%d (%d hosts)", s->a,
			 s->a * s->a * s->a / 4);
	} else if (s->family == LEAF_SPINE) {
		snprintf(topo, sizeof(topo), "leaf-spine %d spines x %d leaves x %d hosts", s->a,
			 s->b, s->c);
	} else {
		for (int l = 0; l < s->b; l++)
			bcube_hosts *= s->a;
		snprintf(topo, sizeof(topo), "BCube(%d, %d) (%d hosts, hosts relay)", s->a, s->b,
			 bcube_hosts);
	}
	if (s->n == 0) {
		int len = snprintf(jobs, sizeof(jobs), "%d jobs (", (int)N_DEFAULT_JOBS);

		for (size_t j = 0; j < N_DEFAULT_JOBS && len < (int)sizeof(jobs); j++)
			len += snprintf(jobs + len, sizeof(jobs) - (size_t)len,
					"%s%d workers / %d PS %s%s", j ? ", " : "",
					default_sizes[j].w, default_sizes[j].p,
					j ? "" : "training ", default_sizes[j].model);
		if (len < (int)sizeof(jobs) - 1)
			strcpy(jobs + len, ")");
	} else
		snprintf(jobs, sizeof(jobs), "%d job%s of %d workers and %d PS training %s", s->n,
			 s->n > 1 ? "s" : "", s->w, s->p, s->model);
	if (s->background > 0)
		snprintf(bg, sizeof(bg), ", %g%% background on a third of the fabric links",
			 100 * s->background);
	if (s->family == BCUBE && s->ina == INART_INA_TOR)
		where = "on level-0 switches";
	return snprintf(buf, size, "%s, %s, INA %s, %d tree%s and %d Gbit/s of aggregation each%s",
			topo, jobs, where, s->trees, s->trees > 1 ? "s" : "", s->agg_gbps, bg);
}

int inart_scenario_describe(const char *name, char *buf, size_t size)
{
	const struct scenario *s = find(name);
	int i;

	if (s == NULL && (family_index(name, &i) || strcmp(name, FAMILY_PREFIX "N") == 0))
		return snprintf(buf, size, "%s", FAMILY_DESC);
	return s ? describe(s, buf, size) : -EINVAL;
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

/* The "default" scenario's jobs (default_sizes): the hosts of one random job
 * as large as all of them together, dealt out in order. */
static struct inart_jobs *default_jobs(const struct inart_topo *t, uint64_t seed,
				       struct inart_err *err)
{
	int w = 0, p = 0;
	struct inart_jobs *a, *js = NULL;
	const struct inart_job *s;

	for (size_t j = 0; j < N_DEFAULT_JOBS; j++) {
		w += default_sizes[j].w;
		p += default_sizes[j].p;
	}
	a = inart_scenario_random_jobs(t, 1, w, p, 1, seed, err);
	if (a == NULL)
		return NULL;
	s = &a->jobs[0];
	js = inart_jobs_create();
	w = p = 0;
	for (size_t j = 0; js != NULL && j < N_DEFAULT_JOBS; j++) {
		char id[16];

		snprintf(id, sizeof(id), "j%zu", j);
		if (inart_jobs_add(js, id, s->workers + w, default_sizes[j].w, s->ps + p,
				   default_sizes[j].p, inart_model_bytes(default_sizes[j].model),
				   default_sizes[j].model, err) < 0) {
			inart_jobs_destroy(js);
			js = NULL;
		}
		w += default_sizes[j].w;
		p += default_sizes[j].p;
	}
	if (js == NULL)
		errno = ENOMEM;
	inart_jobs_destroy(a);
	return js;
}

/*
 * The scarce family (issue 11): instance `index` of small oversubscribed
 * leaf-spines where INA is scarce and jobs compete for it.  Every parameter is
 * drawn from a generator seeded by (seed, index): 2-3 spines, 3-5 leaves of
 * 2-4 hosts, 100 Gbit/s host links, 25-50 Gbit/s leaf uplinks, INA at the
 * leaves only with 1-2 trees and 100-400 Gbit/s, 2-3 jobs of 2-4 workers
 * (any rack but the PS racks) with 2 candidate PSs each, all PSs packed in
 * the first 1-2 leaves, whose uplinks are a further 2-4x thinner.  Sized so
 * that CBC proves the optimum in about a second.
 */
struct family {
	int spines, leaves, hpl, ps_leaves, n_jobs, n_workers[3];
};

static void family_draw(struct inart_rng *r, struct family *f, struct inart_gen_opt *o)
{
	static const double agg[] = {100, 200, 400};
	static const double fabric[] = {25, 40, 50};

	f->spines = 2 + (int)inart_rng_below(r, 2);
	f->leaves = 3 + (int)inart_rng_below(r, 3);
	f->hpl = 2 + (int)inart_rng_below(r, 3);
	f->n_jobs = 2 + (int)inart_rng_below(r, 2);
	/* 2 PSs per job: the PS racks must hold 2 * n_jobs hosts. */
	f->ps_leaves = (2 * f->n_jobs + f->hpl - 1) / f->hpl;
	if (f->ps_leaves < 2 && inart_rng_below(r, 2))
		f->ps_leaves = 2;
	if (f->ps_leaves > f->leaves - 2)
		f->leaves = f->ps_leaves + 2;
	for (int j = 0; j < 3; j++)
		f->n_workers[j] = j < f->n_jobs ? 2 + (int)inart_rng_below(r, 3) : 0;
	/* Room for the workers outside the PS racks: more leaves (up to 6),
	 * else fewer workers (at least 2 per job). */
	for (int j = 0;;) {
		int need = f->n_workers[0] + f->n_workers[1] + f->n_workers[2];

		if ((f->leaves - f->ps_leaves) * f->hpl >= need)
			break;
		if (f->leaves < 6)
			f->leaves++;
		else if (f->n_workers[j % 3] > 2)
			f->n_workers[j++ % 3]--;
		else
			j++;
	}
	inart_gen_opt_default(o);
	o->ina = INART_INA_TOR;
	o->trees = 1 + (int)inart_rng_below(r, 2);
	o->agg_gbps = agg[inart_rng_below(r, 3)];
	o->host_gbps = 100;
	o->fabric_gbps = fabric[inart_rng_below(r, 3)];
}

/* Thin the uplinks of the first ps_leaves leaves by a factor 2-4. */
static void family_thin(struct inart_topo *t, const struct family *f, struct inart_rng *r)
{
	int n_host = f->leaves * f->hpl;
	double div = 2 + (double)inart_rng_below(r, 3);

	for (int l = 0; l < t->n_links; l++) {
		struct inart_arc *a = &t->arcs[2 * l];

		if (a->from >= n_host && a->from < n_host + f->ps_leaves && a->to >= n_host) {
			a->gbps /= div;
			t->arcs[2 * l + 1].gbps /= div;
		}
	}
}

/* Draw n distinct hosts from pool[0..*n_pool) (removing them). */
static void family_take(struct inart_rng *r, int *pool, int *n_pool, int *out, int n)
{
	for (int i = 0; i < n; i++) {
		int k = (int)inart_rng_below(r, (uint64_t)*n_pool);

		out[i] = pool[k];
		pool[k] = pool[--*n_pool];
	}
}

static struct inart_jobs *family_jobs(const struct family *f, struct inart_rng *r,
				      struct inart_err *err)
{
	int n_ps_hosts = f->ps_leaves * f->hpl, n_host = f->leaves * f->hpl;
	int ps_pool[32], w_pool[32], n_ps = n_ps_hosts, n_w = n_host - n_ps_hosts;
	struct inart_jobs *js = inart_jobs_create();
	static const char *const models[] = {"resnet50", "vgg16", "bert-base"};

	for (int h = 0; h < n_host; h++) {
		if (h < n_ps_hosts)
			ps_pool[h] = h;
		else
			w_pool[h - n_ps_hosts] = h;
	}
	for (int j = 0; js != NULL && j < f->n_jobs; j++) {
		int w[4], p[2], nw = f->n_workers[j] < n_w ? f->n_workers[j] : n_w;
		const char *m = models[inart_rng_below(r, 3)];
		char id[8];

		family_take(r, ps_pool, &n_ps, p, 2);
		family_take(r, w_pool, &n_w, w, nw);
		snprintf(id, sizeof(id), "j%d", j);
		if (nw < 1 ||
		    inart_jobs_add(js, id, w, nw, p, 2, inart_model_bytes(m), m, err) < 0) {
			inart_jobs_destroy(js);
			js = NULL;
		}
	}
	if (js == NULL && err != NULL && err->msg[0] == '\0')
		inart_err_set(err, -ENOMEM, "scarce family: cannot place the jobs");
	return js;
}

static int family_build(int index, uint64_t seed, struct inart_topo **tp, struct inart_jobs **jsp,
			struct inart_err *err)
{
	struct inart_rng r;
	struct family f;
	struct inart_gen_opt o;
	uint64_t s = inart_hash2(seed, (uint64_t)index);

	inart_rng_seed(&r, s);
	family_draw(&r, &f, &o);
	*tp = inart_gen_leafspine(f.spines, f.leaves, f.hpl, &o, err);
	if (*tp == NULL)
		return -errno;
	family_thin(*tp, &f, &r);
	*jsp = family_jobs(&f, &r, err);
	if (*jsp == NULL)
		return -EINVAL;
	return 0;
}

int inart_scenario_build(const char *name, uint64_t seed, struct inart_topo **tp,
			 struct inart_jobs **jsp, struct inart_err *err)
{
	const struct scenario *s = find(name);
	struct inart_gen_opt o;
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	int rc = 0;

	int index;

	if (s == NULL && family_index(name, &index)) {
		rc = family_build(index, seed, &t, &js, err);
		if (rc == 0)
			rc = inart_jobs_validate(js, t, err);
		goto out;
	}
	if (s == NULL)
		return inart_err_set(err, -EINVAL, "unknown scenario '%s'", name);
	inart_gen_opt_default(&o);
	o.ina = s->ina;
	o.ina_fraction = RANDOM_INA_FRACTION;
	o.seed = seed;
	o.agg_gbps = s->agg_gbps;
	o.trees = s->trees;
	if (s->family == FAT_TREE)
		t = inart_gen_fattree(s->a, &o, err);
	else if (s->family == LEAF_SPINE)
		t = inart_gen_leafspine(s->a, s->b, s->c, &o, err);
	else
		t = inart_gen_bcube(s->a, s->b, &o, err);
	if (t == NULL) {
		rc = -errno;
		goto out;
	}
	if (s->background > 0)
		add_background(t, s->background);
	if (s->n == 0) {
		js = default_jobs(t, seed, err);
	} else {
		js = inart_scenario_random_jobs(t, s->n, s->w, s->p, inart_model_bytes(s->model),
						seed, err);
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
