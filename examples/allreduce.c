/*
 * allreduce: an example worker on the public worker API (include/inart/worker.h,
 * libinart_worker).
 *
 *   allreduce TOPO JOBS PLAN JOB RANK [--deploy FILE] [-n VALUES]
 *             [--iters K] [--timeout-ms T] [--workers W] [-v]
 *
 * Worker RANK of job JOB sums a buffer with the job's other workers, K
 * times.  Every rank fills value i of iteration k with a multiple of 1/16
 * that depends on (rank, i, k), so the exact sum is known to every worker
 * (given --workers W, the job's worker count): the program checks the
 * result bit for bit (the values are exact in the int32 fixed point) and
 * exits 1 on any difference.  -v also ends each iteration's line with the
 * time it ended on CLOCK_MONOTONIC (", at T s": to line it up with other
 * programs' logs, e.g. `inart controller`'s start record) and prints the
 * context's counters (inart_ctx_stats: resends, probes, NACKs...) to stderr
 * at the end.
 * tests/netns.sh runs it in network namespaces.
 */
#include <errno.h>
#include <inart/worker.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static float value(int rank, size_t i, int iter)
{
	return (float)((int)((rank * 7 + i * 3 + (size_t)iter * 11) % 101) - 50) / 16.0f;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
	fprintf(stderr, "usage: allreduce TOPO JOBS PLAN JOB RANK [--deploy FILE] [-n VALUES]\n"
			"                 [--iters K] [--timeout-ms T] [--workers W] [-v]\n");
	exit(2);
}

/* The context's counters, one line on stderr. */
static void print_counters(const struct inart_ctx *c, const char *rank)
{
	struct inart_ctx_stats st = {.size = sizeof(st)};

	if (inart_ctx_stats(c, &st) < 0)
		return;
	fprintf(stderr,
		"rank %s counters: allreduces %" PRIu64 " timeouts %" PRIu64 " sent %" PRIu64
		" retransmitted %" PRIu64 " retx_asked %" PRIu64 " probes %" PRIu64
		" nacks %" PRIu64 " chain_gaps %" PRIu64 " results %" PRIu64 " duplicates %" PRIu64
		" rescales %" PRIu64 " local_overflows %" PRIu64 " dropped %" PRIu64
		" stale %" PRIu64 " step_notices %" PRIu64 " foreign %" PRIu64 " stalls %" PRIu64
		" epochs %" PRIu64 "\n",
		rank, st.allreduces, st.timeouts, st.sent, st.retransmitted, st.retx_asked,
		st.probes, st.nacks, st.chain_gaps, st.results, st.duplicates, st.rescales,
		st.local_overflows, st.dropped, st.stale, st.step_notices, st.foreign, st.stalls,
		st.epochs);
}

int main(int argc, char **argv)
{
	const char *pos[5], *deploy = NULL;
	long n = 10000, iters = 3, timeout_ms = 10000, workers = 0;
	int npos = 0, bad = 0, verbose = 0;
	struct inart_err err = {{0}};
	struct inart_ctx *c;
	float *buf;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--deploy") == 0 && i + 1 < argc)
			deploy = argv[++i];
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = atol(argv[++i]);
		else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
			timeout_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			workers = atol(argv[++i]);
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			verbose = 1;
		else if (argv[i][0] == '-' || npos == 5)
			usage();
		else
			pos[npos++] = argv[i];
	}
	if (npos != 5 || n < 1 || iters < 1 || timeout_ms < 1 || workers < 0)
		usage();
	c = inart_ctx_create(pos[0], pos[1], pos[2], deploy, pos[3], atoi(pos[4]), &err);
	if (c == NULL) {
		fprintf(stderr, "allreduce: %s\n", err.msg);
		return 1;
	}
	buf = malloc((size_t)n * sizeof(*buf));
	if (buf == NULL)
		return 1;
	for (int k = 0; k < iters; k++) {
		long wrong = 0;
		double t0, dt;
		int rc;

		for (long i = 0; i < n; i++)
			buf[i] = value(atoi(pos[4]), (size_t)i, k);
		t0 = now_s();
		rc = inart_allreduce(c, buf, (size_t)n, (int)timeout_ms);
		dt = now_s() - t0;
		if (rc < 0) {
			fprintf(stderr, "allreduce: rank %s iteration %d: %s\n", pos[4], k,
				strerror(-rc));
			bad = 1;
			break;
		}
		for (long i = 0; workers > 0 && i < n; i++) {
			float want = 0;

			for (int r = 0; r < workers; r++)
				want += value(r, (size_t)i, k);
			if (buf[i] != want) {
				if (wrong++ < 3)
					fprintf(stderr,
						"rank %s iter %d: value %ld is %.9g, want %.9g\n",
						pos[4], k, i, buf[i], want);
			}
		}
		printf("rank %s iter %d: %ld values in %.3f ms, %s", pos[4], k, n, dt * 1e3,
		       workers == 0 ? "not checked"
		       : wrong	    ? "WRONG"
				    : "exact");
		if (verbose)
			printf(", at %.6f s", t0 + dt);
		putchar('\n');
		if (wrong)
			bad = 1;
	}
	if (verbose)
		print_counters(c, pos[4]);
	free(buf);
	inart_ctx_destroy(c);
	return bad;
}
