/*
 * chaos_worker: a worker for the chaos test (tests/chaos.sh), on the public
 * worker API (include/inart/worker.h) only.
 *
 *   chaos_worker TOPO JOBS PLAN DEPLOY JOB RANK --workers W [-n VALUES]
 *                [--timeout-ms T] [--seconds S] [--pause-ms P] [--job-seed J]
 *                [--stamps FILE]
 *
 * Rank RANK of job JOB runs all-reduces for S seconds (P ms apart), doing
 * what the API says after each error: -ETIMEDOUT,
 * call again (the same step, the same values); -ESTALE, inart_ctx_resync
 * and go on with the step the data plane named; -EIO, wait 100 ms and call
 * again.  Value i of step k at rank r is a multiple of 1/16 that depends on
 * (J, r, i, k), so every worker knows the exact sum of any step: every call
 * that returns 0 is checked bit for bit against the sum of *its* step.  A
 * call that does not return within its timeout plus 1 s is a hang.
 *
 * --stamps FILE appends "REALTIME STEP" for every call that returned 0
 * (bench/recovery_bench.sh times recoveries with it).
 *
 * Prints one line: "rank R: ok N wrong W timeouts T stale S errors E hung H
 * max_call_ms M step K last_ok_s_ago A" (A: seconds from the last call that
 * returned 0 to the end); exit status 0 if nothing was wrong and nothing
 * hung (progress is judged by the caller), 1 otherwise, 2 usage.
 */
#include <errno.h>
#include <inart/worker.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static float value(long seed, int rank, size_t i, uint32_t step)
{
	uint64_t x = (uint64_t)seed * 1000003u + (uint64_t)rank * 7919u + i * 31u + step * 104729u;

	return (float)((int)(x % 97) - 48) / 16.0f;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
	fprintf(stderr, "usage: chaos_worker TOPO JOBS PLAN DEPLOY JOB RANK --workers W [-n N]\n"
			"                    [--timeout-ms T] [--seconds S] [--pause-ms P]\n"
			"                    [--job-seed J] [--stamps FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *pos[6];
	long n = 1000, pause_ms = 0, timeout_ms = 2000, workers = 0, seconds = 60, seed = 1;
	long ok = 0, wrong = 0, timeouts = 0, stale = 0, errors = 0, hung = 0;
	double max_call = 0, t_end, last_ok;
	FILE *stamps = NULL;
	struct inart_err err = {{0}};
	struct inart_ctx *c;
	int npos = 0, rank;
	uint32_t step = 0;
	float *buf;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = atol(argv[++i]);
		else if (strcmp(argv[i], "--pause-ms") == 0 && i + 1 < argc)
			pause_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
			timeout_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			workers = atol(argv[++i]);
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atol(argv[++i]);
		else if (strcmp(argv[i], "--job-seed") == 0 && i + 1 < argc)
			seed = atol(argv[++i]);
		else if (strcmp(argv[i], "--stamps") == 0 && i + 1 < argc) {
			stamps = fopen(argv[++i], "a");
			if (stamps == NULL) {
				perror(argv[i]);
				return 2;
			}
		} else if (argv[i][0] == '-' || npos == 6)
			usage();
		else
			pos[npos++] = argv[i];
	}
	if (npos != 6 || n < 1 || pause_ms < 0 || timeout_ms < 1 || workers < 1 || seconds < 1)
		usage();
	rank = atoi(pos[5]);
	c = inart_ctx_create(pos[0], pos[1], pos[2], pos[3], pos[4], rank, &err);
	if (c == NULL) {
		fprintf(stderr, "chaos_worker: %s\n", err.msg);
		return 1;
	}
	buf = malloc((size_t)n * sizeof(*buf));
	if (buf == NULL)
		return 1;
	last_ok = now_s();
	t_end = last_ok + (double)seconds;
	while (now_s() < t_end) {
		double t0, dt;
		int rc;

		inart_ctx_step(c, &step, NULL);
		for (long i = 0; i < n; i++)
			buf[i] = value(seed, rank, (size_t)i, step);
		t0 = now_s();
		rc = inart_allreduce(c, buf, (size_t)n, (int)timeout_ms);
		dt = now_s() - t0;
		if (dt > max_call)
			max_call = dt;
		if (dt > (double)timeout_ms / 1e3 + 1.0) {
			hung++;
			fprintf(stderr, "rank %d step %u: the call took %.3f s (timeout %ld ms)\n",
				rank, step, dt, timeout_ms);
		}
		if (rc == -ETIMEDOUT) {
			timeouts++;
			continue;
		}
		if (rc == -ESTALE) {
			uint32_t job_step = 0;

			stale++;
			inart_ctx_step(c, NULL, &job_step);
			fprintf(stderr, "rank %d step %u: stale, the job is at step %u\n", rank,
				step, job_step);
			inart_ctx_resync(c);
			continue;
		}
		if (rc < 0) {
			errors++;
			fprintf(stderr, "rank %d step %u: %s\n", rank, step, strerror(-rc));
			usleep(100000);
			continue;
		}
		ok++;
		last_ok = now_s();
		if (stamps != NULL) {
			struct timespec rt;

			clock_gettime(CLOCK_REALTIME, &rt);
			fprintf(stamps, "%ld.%09ld %u\n", (long)rt.tv_sec, rt.tv_nsec, step);
			fflush(stamps);
		}
		if (pause_ms > 0)
			usleep((useconds_t)pause_ms * 1000);
		for (long i = 0; i < n; i++) {
			float want = 0;

			for (int r = 0; r < workers; r++)
				want += value(seed, r, (size_t)i, step);
			if (buf[i] != want) {
				if (wrong < 5)
					fprintf(stderr,
						"rank %d step %u: value %ld is %.9g, the sum of "
						"step %u "
						"is %.9g\n",
						rank, step, i, buf[i], step, want);
				wrong++;
				break;
			}
		}
	}
	inart_ctx_step(c, &step, NULL);
	printf("rank %d: ok %ld wrong %ld timeouts %ld stale %ld errors %ld hung %ld max_call_ms "
	       "%.0f step %u last_ok_s_ago %.1f\n",
	       rank, ok, wrong, timeouts, stale, errors, hung, max_call * 1e3, step,
	       now_s() - last_ok);
	fflush(stdout);
	if (stamps != NULL)
		fclose(stamps);
	free(buf);
	inart_ctx_destroy(c);
	return wrong || hung ? 1 : 0;
}
