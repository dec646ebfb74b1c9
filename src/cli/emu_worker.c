/*
 * emu_worker: the worker program of `inart emu` -- one worker of one job,
 * on the public API only (include/inart/inart.h), driven by the emulator
 * through its standard streams so that every job's iterations start
 * together:
 *
 *   inart-emu-worker TOPO JOBS PLAN DEPLOY JOB RANK VALUES WORKERS ITERS TIMEOUT_MS
 *
 *   out: ready K                      buffer of iteration K filled
 *   in:  go K START_NS                start at CLOCK_MONOTONIC START_NS
 *   out: done K T0_NS T1_NS RC        inart_allreduce from T0 to T1, its return
 *   out: check K exact|wrong N        every value against the exact sum
 *   out: stats SENT RETX PROBES NACKS TIMEOUTS   at the end (inart_ctx_stats)
 *   out: error MESSAGE                and exit 1
 *
 * A failed inart_allreduce ends the worker's run (the emulator reports the
 * first error): it is never called again for the step.  The message names
 * the cause: -ESTALE with the step the worker was at and the step the PS
 * named (a PS lost its state or the job moved on: the emulator's runs have
 * no way to resynchronise the job, so the run fails instead of looping),
 * -EINVAL with the values asked for (more than the job's gradient in the
 * jobs file), -ETIMEDOUT with the timeout.
 *
 * Every rank fills value i of iteration k with a multiple of 1/16 that
 * depends on (rank, i, k), so that the sum of WORKERS ranks is exact in the
 * int32 fixed point and known to every worker; the check is bit for bit.
 * The check and the filling happen outside the timed interval.
 */
#include <errno.h>
#include <inart/inart.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Value i of iteration k of rank: ((7 rank + 3 i + 11 k) mod 101 - 50) / 16,
 * which depends on (i, k) only through d = (3 i + 11 k) mod 101. */
static float value_at(long rank, long d)
{
	return (float)((int)((rank * 7 + d) % 101) - 50) / 16.0f;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* The "error" line of a failed all-reduce. */
static void report(const struct inart_ctx *c, int rc, long rank, long k, long n, long timeout_ms)
{
	uint32_t step = 0, job_step = 0;

	printf("error rank %ld iteration %ld: ", rank, k);
	if (rc == -ESTALE) {
		inart_ctx_step(c, &step, &job_step);
		printf("-ESTALE: step %u cannot complete for this worker (the PS named step %u; "
		       "a PS lost its state or the job moved on)\n",
		       step, job_step);
	} else if (rc == -EINVAL) {
		printf("-EINVAL: %ld values refused (more than the job's gradient in the jobs "
		       "file, or a value not finite)\n",
		       n);
	} else if (rc == -ETIMEDOUT) {
		printf("-ETIMEDOUT: not complete within %ld ms\n", timeout_ms);
	} else {
		printf("%s\n", strerror(-rc));
	}
}

/* d of value 0 of iteration k, and of value i + 1 from value i's: no
 * division per value. */
static long first_d(long k)
{
	return (11 * k) % 101;
}

static long next_d(long d)
{
	d += 3;
	return d >= 101 ? d - 101 : d;
}

static void fill(float *buf, long n, long rank, long k)
{
	float v[101];

	for (long d = 0; d < 101; d++)
		v[d] = value_at(rank, d);
	for (long i = 0, d = first_d(k); i < n; i++, d = next_d(d))
		buf[i] = v[d];
}

/* Values of buf that are not the exact sum of `workers` ranks' values of
 * iteration k.  The sum depends on i only through d (above): 101 sums,
 * each added in rank order as the values would be, so the check costs one
 * comparison per value, not one sum of `workers` values (which, in the
 * k=8 fat-tree's 28 workers, took a fifth of the run's CPU while the other
 * job still ran). */
static long count_wrong(const float *buf, long n, long workers, long k)
{
	float want[101];
	long wrong = 0;

	for (long d = 0; d < 101; d++) {
		want[d] = 0;
		for (long r = 0; r < workers; r++)
			want[d] += value_at(r, d);
	}
	for (long i = 0, d = first_d(k); i < n; i++, d = next_d(d))
		wrong += buf[i] != want[d];
	return wrong;
}

int main(int argc, char **argv)
{
	struct inart_err err = {{0}};
	struct inart_ctx_stats st = {.size = sizeof(st)};
	struct inart_ctx *c;
	long rank, n, workers, iters, timeout_ms;
	float *buf;
	char line[256];

	if (argc != 11) {
		fprintf(stderr, "usage: inart-emu-worker TOPO JOBS PLAN DEPLOY JOB RANK VALUES "
				"WORKERS ITERS TIMEOUT_MS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rank = atol(argv[6]);
	n = atol(argv[7]);
	workers = atol(argv[8]);
	iters = atol(argv[9]);
	timeout_ms = atol(argv[10]);
	if (rank < 0 || n < 1 || workers < 1 || iters < 1 || timeout_ms < 1) {
		printf("error bad arguments\n");
		return 2;
	}
	c = inart_ctx_create(argv[1], argv[2], argv[3], argv[4], argv[5], (int)rank, &err);
	buf = malloc((size_t)n * sizeof(*buf));
	if (c == NULL || buf == NULL) {
		printf("error %s\n", c == NULL ? err.msg : "out of memory");
		return 1;
	}
	for (long k = 0; k < iters; k++) {
		unsigned long long start, t0, t1;
		long wrong, kk;
		int rc;

		fill(buf, n, rank, k);
		printf("ready %ld\n", k);
		if (fgets(line, sizeof(line), stdin) == NULL ||
		    sscanf(line, "go %ld %llu", &kk, &start) != 2 || kk != k)
			break; /* the emulator stopped the run */
		while ((t0 = now_ns()) < start) {
			struct timespec ts = {(time_t)(start / 1000000000ull),
					      (long)(start % 1000000000ull)};

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
		rc = inart_allreduce(c, buf, (size_t)n, (int)timeout_ms);
		t1 = now_ns();
		printf("done %ld %llu %llu %d\n", k, t0, t1, rc);
		if (rc < 0) {
			report(c, rc, rank, k, n, timeout_ms);
			break;
		}
		wrong = count_wrong(buf, n, workers, k);
		printf("check %ld %s %ld\n", k, wrong ? "wrong" : "exact", wrong);
	}
	if (inart_ctx_stats(c, &st) == 0)
		printf("stats %llu %llu %llu %llu %llu\n", (unsigned long long)st.sent,
		       (unsigned long long)st.retransmitted, (unsigned long long)st.probes,
		       (unsigned long long)st.nacks, (unsigned long long)st.timeouts);
	free(buf);
	inart_ctx_destroy(c);
	return 0;
}
