/*
 * scenario: built-in scenarios (topology + jobs) used by `inart run`, the
 * benchmark and the tests, so that every figure can be reproduced by name.
 */
#ifndef INART_SCENARIO_H
#define INART_SCENARIO_H

#include <stdint.h>

#include "cp/model/jobs.h"

/* Build scenario `name` (see inart_scenario_names).  0 or -errno. */
int inart_scenario_build(const char *name, uint64_t seed, struct inart_topo **t,
			 struct inart_jobs **js, struct inart_err *err);

/* 1 if name is a scenario: one of inart_scenario_names, or "scarce-small/N"
 * (N = 0, 1, ...: instance N of the scarce family, drawn from (seed, N)). */
int inart_scenario_known(const char *name);

/* NULL-terminated list of names. */
extern const char *const inart_scenario_names[];

/* Scenario name's one-line description into buf (snprintf's contract: the
 * length it needs, so a result >= size was cut), or -EINVAL if name is no
 * scenario (nor the family's "scarce-small/N"). */
int inart_scenario_describe(const char *name, char *buf, size_t size);

/* Random jobs on a topology: n_jobs jobs, each with n_workers workers and
 * n_ps candidate PSs drawn (seeded) from the hosts without repetition across
 * jobs, gradient `bytes`.  Used by property tests and benchmarks. */
struct inart_jobs *inart_scenario_random_jobs(const struct inart_topo *t, int n_jobs, int n_workers,
					      int n_ps, double bytes, uint64_t seed,
					      struct inart_err *err);

#endif
