/*
 * jobs: the training jobs that share the network.
 *
 * A job has workers and candidate parameter servers (PSs), all hosts of the
 * topology (stored as node numbers), and a gradient size in bytes, given
 * directly or through a model name from the built-in table (4 bytes per
 * parameter).  Invariants after validation (inart_jobs_validate): ids are
 * unique, every job has >= 1 worker and >= 1 PS, workers and PSs are distinct
 * hosts, no host is both worker and PS of the same job, every worker reaches
 * every PS over links with residual capacity, and gradient_bytes > 0.
 *
 * Ownership: the jobs set owns every string and array in it.
 */
#ifndef INART_JOBS_H
#define INART_JOBS_H

#include "cp/model/graph.h"

struct inart_job {
	char *id;
	int n_workers;
	int *workers; /* node numbers */
	int n_ps;
	int *ps;               /* node numbers: candidate PSs */
	double gradient_bytes; /* > 0 */
	char *model;           /* model name or NULL */
};

struct inart_jobs {
	int n_jobs;
	struct inart_job *jobs;
	int cap_jobs; /* private */
};

struct inart_jobs *inart_jobs_create(void);
void inart_jobs_destroy(struct inart_jobs *js);

/* Append a job (the arrays are copied).  Returns the job number or -errno. */
int inart_jobs_add(struct inart_jobs *js, const char *id, const int *workers, int n_workers,
		   const int *ps, int n_ps, double gradient_bytes, const char *model,
		   struct inart_err *err);

/* Check the invariants above against a finalized topology. */
int inart_jobs_validate(const struct inart_jobs *js, const struct inart_topo *t,
			struct inart_err *err);

/* Index of a job by id, or -1. */
int inart_jobs_find(const struct inart_jobs *js, const char *id);

/* The (job, PS) pairs, numbered job by job (job j's i-th PS is pair
 * first[j] + i): their number; first, where not NULL, gets each job's first
 * pair (n_jobs entries). */
int inart_jobs_pairs(const struct inart_jobs *js, int *first);

/* Index of PS node p in job j's PS list, or -1. */
int inart_job_ps_index(const struct inart_job *j, int p);

/* Built-in model table: gradient bytes (4 bytes per parameter) or -1 for an
 * unknown name.  Names: resnet50, vgg16, alexnet, bert-base, gpt2-small. */
double inart_model_bytes(const char *name);

/* Name of the i-th model, NULL past the end (for help texts). */
const char *inart_model_name(int i, double *bytes);

/* Gradient size in Gbit (the unit of the load model). */
static inline double inart_job_gbit(const struct inart_job *j)
{
	return j->gradient_bytes * 8.0 / 1e9;
}

#endif
