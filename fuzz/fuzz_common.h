/*
 * fuzz_common: shared pieces of the libFuzzer targets: the fixed small
 * topology and jobs that the jobs and plan targets parse against (the same
 * network as tests/data/tiny_topo.json), and the round-trip check every
 * target applies to an input that parses: dump, parse the dump, dump again;
 * both dumps must be identical and every step must succeed.
 */
#ifndef INART_FUZZ_COMMON_H
#define INART_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp/model/formats.h"

static const char fuzz_topo_text[] =
    "{\"nodes\": [{\"id\": \"h0\", \"kind\": \"host\"}, {\"id\": \"h1\", \"kind\": \"host\"},"
    " {\"id\": \"h2\", \"kind\": \"host\"}, {\"id\": \"h3\", \"kind\": \"host\"},"
    " {\"id\": \"h4\", \"kind\": \"host\"},"
    " {\"id\": \"e0\", \"kind\": \"switch\", \"ina\": {\"agg_gbps\": 400, \"trees\": 8}},"
    " {\"id\": \"e1\", \"kind\": \"switch\"},"
    " {\"id\": \"c0\", \"kind\": \"switch\", \"ina\": {\"agg_gbps\": 150, \"trees\": 0}}],"
    " \"links\": [{\"a\": \"h0\", \"b\": \"e0\", \"gbps\": 10},"
    " {\"a\": \"h1\", \"b\": \"e0\", \"gbps\": 10, \"background_gbps\": 2.5},"
    " {\"a\": \"h2\", \"b\": \"e1\", \"gbps\": 10},"
    " {\"a\": \"h3\", \"b\": \"e1\", \"ab_gbps\": 10, \"ba_gbps\": 25},"
    " {\"a\": \"h4\", \"b\": \"e1\", \"gbps\": 10, \"background_gbps\": 10},"
    " {\"a\": \"e0\", \"b\": \"c0\", \"gbps\": 40},"
    " {\"a\": \"e1\", \"b\": \"c0\", \"gbps\": 40}]}";

static const char fuzz_jobs_text[] =
    "{\"jobs\": [{\"id\": \"j0\", \"workers\": [\"h0\", \"h1\"], \"ps\": [\"h2\", \"h3\"],"
    " \"model\": \"resnet50\"},"
    " {\"id\": \"j1\", \"workers\": [\"h2\"], \"ps\": [\"h0\"], \"gradient_bytes\": 1000000}]}";

static inline void fuzz_die(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz: %s\n--- first\n%s\n--- second\n%s\n", what, a ? a : "(null)",
		b ? b : "(null)");
	abort();
}

static inline struct inart_topo *fuzz_topo(void)
{
	static struct inart_topo *t;
	struct inart_err err = {{0}};

	if (t == NULL) {
		t = inart_topo_parse(fuzz_topo_text, strlen(fuzz_topo_text), "fixed", &err);
		if (t == NULL)
			fuzz_die("fixed topology rejected", err.msg, NULL);
	}
	return t;
}

static inline struct inart_jobs *fuzz_jobs(void)
{
	static struct inart_jobs *js;
	struct inart_err err = {{0}};

	if (js == NULL) {
		js = inart_jobs_parse(fuzz_jobs_text, strlen(fuzz_jobs_text), "fixed", fuzz_topo(),
				      &err);
		if (js == NULL)
			fuzz_die("fixed jobs rejected", err.msg, NULL);
	}
	return js;
}

/* A rejected input must come with a message naming the input. */
static inline void fuzz_check_error(const struct inart_err *err)
{
	if (strncmp(err->msg, "input", 5) != 0 || strchr(err->msg, '\n') != NULL)
		fuzz_die("error message does not name the input or is not one line", err->msg,
			 NULL);
}

#endif
