/* jobs: see jobs.h. */
#include "cp/model/jobs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "cp/model/paths.h"

static const struct {
	const char *name;
	double params;
} models[] = {
	{"resnet50", 25.6e6}, {"vgg16", 138.4e6},    {"alexnet", 61.1e6},
	{"bert-base", 110e6}, {"gpt2-small", 124e6},
};

double inart_model_bytes(const char *name)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (strcmp(models[i].name, name) == 0)
			return 4.0 * models[i].params;
	return -1;
}

const char *inart_model_name(int i, double *bytes)
{
	if (i < 0 || (size_t)i >= sizeof(models) / sizeof(models[0]))
		return NULL;
	if (bytes)
		*bytes = 4.0 * models[i].params;
	return models[i].name;
}

struct inart_jobs *inart_jobs_create(void)
{
	return calloc(1, sizeof(struct inart_jobs));
}

static void job_free(struct inart_job *j)
{
	free(j->id);
	free(j->workers);
	free(j->ps);
	free(j->model);
}

void inart_jobs_destroy(struct inart_jobs *js)
{
	if (js == NULL)
		return;
	for (int i = 0; i < js->n_jobs; i++)
		job_free(&js->jobs[i]);
	free(js->jobs);
	free(js);
}

static int *dup_ints(const int *a, int n)
{
	int *r = malloc(sizeof(*r) * (size_t)(n > 0 ? n : 1));

	if (r != NULL && n > 0)
		memcpy(r, a, sizeof(*r) * (size_t)n);
	return r;
}

int inart_jobs_add(struct inart_jobs *js, const char *id, const int *workers, int n_workers,
		   const int *ps, int n_ps, double gradient_bytes, const char *model,
		   struct inart_err *err)
{
	struct inart_job j = {0};

	if (id == NULL || id[0] == '\0')
		return inart_err_set(err, -EINVAL, "job with an empty id");
	if (inart_jobs_find(js, id) >= 0)
		return inart_err_set(err, -EEXIST, "duplicate job id '%s'", id);
	if (inart_grow((void **)&js->jobs, &js->cap_jobs, js->n_jobs, sizeof(*js->jobs), 8) < 0)
		return inart_err_set(err, -ENOMEM, "out of memory");
	j.id = strdup(id);
	j.workers = dup_ints(workers, n_workers);
	j.ps = dup_ints(ps, n_ps);
	j.model = model ? strdup(model) : NULL;
	if (j.id == NULL || j.workers == NULL || j.ps == NULL || (model && j.model == NULL)) {
		job_free(&j);
		return inart_err_set(err, -ENOMEM, "out of memory");
	}
	j.n_workers = n_workers;
	j.n_ps = n_ps;
	j.gradient_bytes = gradient_bytes;
	js->jobs[js->n_jobs] = j;
	return js->n_jobs++;
}

int inart_jobs_find(const struct inart_jobs *js, const char *id)
{
	for (int i = 0; i < js->n_jobs; i++)
		if (strcmp(js->jobs[i].id, id) == 0)
			return i;
	return -1;
}

int inart_jobs_pairs(const struct inart_jobs *js, int *first)
{
	int n = 0;

	for (int j = 0; j < js->n_jobs; j++) {
		if (first != NULL)
			first[j] = n;
		n += js->jobs[j].n_ps;
	}
	return n;
}

int inart_job_ps_index(const struct inart_job *j, int p)
{
	for (int i = 0; i < j->n_ps; i++)
		if (j->ps[i] == p)
			return i;
	return -1;
}

/* Checks of one job that need no path search. */
static int check_job(const struct inart_job *j, const struct inart_topo *t, char *role,
		     struct inart_err *err)
{
	if (j->n_workers < 1)
		return inart_err_set(err, -EINVAL, "job '%s': no workers", j->id);
	if (j->n_ps < 1)
		return inart_err_set(err, -EINVAL, "job '%s': no PS", j->id);
	if (!(j->gradient_bytes > 0) || !isfinite(j->gradient_bytes))
		return inart_err_set(err, -EINVAL, "job '%s': gradient size must be > 0 bytes",
				     j->id);
	for (int k = 0; k < j->n_workers + j->n_ps; k++) {
		int is_ps = k >= j->n_workers;
		int v = is_ps ? j->ps[k - j->n_workers] : j->workers[k];
		const char *what = is_ps ? "PS" : "worker";

		if (v < 0 || v >= t->n_nodes)
			return inart_err_set(err, -EINVAL, "job '%s': unknown %s node", j->id,
					     what);
		if (t->nodes[v].kind != INART_NODE_HOST)
			return inart_err_set(err, -EINVAL, "job '%s': %s '%s' is not a host",
					     j->id, what, t->nodes[v].id);
		if (role[v] != 0)
			return inart_err_set(err, -EINVAL,
					     "job '%s': host '%s' is listed twice (%s and %s)",
					     j->id, t->nodes[v].id,
					     role[v] == 'w' ? "worker" : "PS", what);
		role[v] = is_ps ? 'p' : 'w';
	}
	return 0;
}

int inart_jobs_validate(const struct inart_jobs *js, const struct inart_topo *t,
			struct inart_err *err)
{
	char *role = calloc((size_t)t->n_nodes + 1, 1);
	struct inart_paths *paths = inart_paths_create(t);
	int rc = 0;

	if (role == NULL || paths == NULL) {
		rc = inart_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (js->n_jobs < 1) {
		rc = inart_err_set(err, -EINVAL, "no jobs");
		goto out;
	}
	for (int i = 0; i < js->n_jobs && rc == 0; i++) {
		const struct inart_job *j = &js->jobs[i];

		rc = check_job(j, t, role, err);
		/* Clear the marks of this job (node numbers may be bad when
		 * check_job failed: only in-range ones were marked). */
		for (int k = 0; k < j->n_workers; k++)
			if (j->workers[k] >= 0 && j->workers[k] < t->n_nodes)
				role[j->workers[k]] = 0;
		for (int k = 0; k < j->n_ps; k++)
			if (j->ps[k] >= 0 && j->ps[k] < t->n_nodes)
				role[j->ps[k]] = 0;
		for (int p = 0; rc == 0 && p < j->n_ps; p++) {
			const int *dist = inart_paths_dist_to(paths, j->ps[p]);

			if (dist == NULL) {
				rc = inart_err_set(err, -ENOMEM, "out of memory");
				break;
			}
			for (int k = 0; k < j->n_workers; k++) {
				if (dist[j->workers[k]] < 0) {
					rc = inart_err_set(
						err, -EINVAL,
						"job '%s': worker '%s' cannot reach PS '%s'", j->id,
						t->nodes[j->workers[k]].id, t->nodes[j->ps[p]].id);
					break;
				}
			}
		}
	}
out:
	free(role);
	inart_paths_destroy(paths);
	return rc;
}
