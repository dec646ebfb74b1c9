/*
 * exec: the ranks of a program in an emulated network's namespaces, with
 * torchrun's environment, supervised (see exec.h).  The environment goes
 * through `env NAME=VALUE... PROGRAM ARGS`: spawn's child execs with the
 * caller's environment, and a library must not change its process's.
 */
#include "emu/exec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bridge/deploy.h"
#include "emu/net.h"
#include "emu/spawn.h"

#define N_FIXED 13 /* the variables exec sets itself */

/* Where a status from waitpid goes: 0..255, 128 + signal. */
static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

/* argv of rank r: env, the fixed variables, the caller's, the program.
 * Strings in buf (N_FIXED slots of 160 bytes). */
static char **rank_argv(const struct inart_emu_exec_opt *o, int r, const char *master,
			char (*buf)[160])
{
	int n_env = 0, n_arg = 0, k = 0, port = o->master_port > 0 ? o->master_port : 29500;
	char **a;

	while (o->env && o->env[n_env])
		n_env++;
	while (o->argv[n_arg])
		n_arg++;
	a = calloc((size_t)(2 + N_FIXED + n_env + n_arg), sizeof(*a));
	if (a == NULL)
		return NULL;
	snprintf(buf[0], 160, "RANK=%d", r);
	snprintf(buf[1], 160, "WORLD_SIZE=%d", o->n_ranks);
	snprintf(buf[2], 160, "LOCAL_RANK=0");
	snprintf(buf[3], 160, "LOCAL_WORLD_SIZE=1");
	snprintf(buf[4], 160, "MASTER_ADDR=%s", master);
	snprintf(buf[5], 160, "MASTER_PORT=%d", port);
	/* a host's one link is its port 0: interface eP-p0 (net.c's names) */
	snprintf(buf[6], 160, "GLOO_SOCKET_IFNAME=e%s-p0", o->prefix);
	snprintf(buf[7], 160, "PET_NNODES=%d", o->n_ranks);
	snprintf(buf[8], 160, "PET_NODE_RANK=%d", r);
	snprintf(buf[9], 160, "PET_NPROC_PER_NODE=1");
	snprintf(buf[10], 160, "PET_MASTER_ADDR=%s", master);
	snprintf(buf[11], 160, "PET_MASTER_PORT=%d", port);
	snprintf(buf[12], 160, "INART_EMU_PREFIX=%s", o->prefix);
	a[k++] = "env";
	for (int i = 0; i < N_FIXED; i++)
		a[k++] = buf[i];
	for (int i = 0; i < n_env; i++)
		a[k++] = (char *)o->env[i];
	for (int i = 0; i < n_arg; i++)
		a[k++] = o->argv[i];
	a[k] = NULL;
	return a;
}

/* Start rank r; its PID or -errno with err. */
static pid_t start_rank(const struct inart_emu_exec_opt *o, int r, const char *master,
			struct inart_err *err)
{
	struct inart_emu_fds fds = {-1, -1, -1, 0};
	struct inart_err why = {{0}};
	char buf[N_FIXED][160], ns[160], path[512];
	char **argv = rank_argv(o, r, master, buf);
	int fd = -1;
	pid_t pid;

	if (argv == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	if (o->log_dir != NULL) {
		snprintf(path, sizeof(path), "%s/rank-%d.log", o->log_dir, r);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			int e = errno;

			free(argv);
			return inart_err_set(err, -e, "%s: %s", path, strerror(e));
		}
		fds.out = fds.err = fd;
	}
	snprintf(ns, sizeof(ns), "%s%s-%s", INART_EMU_NS_PREFIX, o->prefix, o->nodes[r]);
	pid = inart_emu_spawn(ns, argv, &fds, &why);
	if (pid < 0)
		inart_err_set(err, pid, "rank %d (node %s): %s", r, o->nodes[r], why.msg);
	if (fd >= 0)
		close(fd);
	free(argv);
	return pid;
}

/* Rank 0's address from the run's deployment file. */
static int master_addr(const struct inart_emu_exec_opt *o, char *out, size_t cap,
		       struct inart_err *err)
{
	struct inart_deploy_node *n = calloc(1, sizeof(*n));
	char path[256];
	uint32_t ip;
	int rc;

	if (n == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/%s/deploy.json", INART_EMU_RUN_DIR, o->prefix);
	rc = inart_deploy_node_load(path, o->nodes[0], n, err);
	if (rc == -ENOENT)
		inart_err_set(err, rc, "%s: no node '%s' (rank 0)", path, o->nodes[0]);
	if (rc == 0) {
		ip = htonl(n->ip);
		if (inet_ntop(AF_INET, &ip, out, (socklen_t)cap) == NULL)
			rc = inart_err_set(err, -EINVAL, "%s: bad address of '%s'", path,
					   o->nodes[0]);
	}
	free(n);
	return rc;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* End every rank still running (SIGTERM, SIGKILL 2 s later), marked stopped. */
static void stop_all(const struct inart_emu_exec_opt *o, pid_t *pid,
		     struct inart_emu_exec_rank *ranks)
{
	for (int r = 0; r < o->n_ranks; r++)
		if (pid[r] > 0)
			kill(pid[r], SIGTERM);
	for (int r = 0; r < o->n_ranks; r++) {
		int st;

		if (pid[r] <= 0)
			continue;
		st = inart_emu_kill(pid[r], 2000);
		ranks[r].status = st >= 0 ? exit_code(st) : 255;
		ranks[r].stopped = 1;
		pid[r] = 0;
	}
}

int inart_emu_exec(const struct inart_emu_exec_opt *o, struct inart_emu_exec_rank *ranks,
		   struct inart_err *err)
{
	uint64_t t0 = inart_emu_now_ns(), fail_at = 0;
	double grace = o->grace_s > 0 ? o->grace_s : 10.0;
	int rc = 0, left = 0, first_bad = -1, timed_out = 0;
	char master[INET_ADDRSTRLEN];
	pid_t *pid;

	if (o->n_ranks < 1 || o->argv == NULL || o->argv[0] == NULL)
		return inart_err_set(err, -EINVAL, "no ranks or no program");
	if (strchr(o->argv[0], '=') != NULL)
		return inart_err_set(err, -EINVAL, "program '%s': a name with '=' cannot be run",
				     o->argv[0]);
	if (!inart_emu_prefix_ok(o->prefix))
		return inart_err_set(err, -EINVAL, "bad prefix '%s'", o->prefix);
	if ((rc = master_addr(o, master, sizeof(master), err)) < 0)
		return rc;
	pid = calloc((size_t)o->n_ranks, sizeof(*pid));
	if (pid == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	for (int r = 0; r < o->n_ranks; r++) {
		ranks[r].status = -1;
		ranks[r].stopped = 0;
	}
	for (int r = 0; r < o->n_ranks; r++) {
		pid[r] = start_rank(o, r, master, err);
		if (pid[r] < 0) {
			rc = pid[r];
			pid[r] = 0;
			stop_all(o, pid, ranks);
			goto out;
		}
		left++;
	}
	while (left > 0) {
		uint64_t now = inart_emu_now_ns();

		for (int r = 0; r < o->n_ranks; r++) {
			int st;

			if (pid[r] <= 0 || !inart_emu_exited(pid[r], &st))
				continue;
			pid[r] = 0;
			left--;
			ranks[r].status = exit_code(st);
			if (ranks[r].status != 0 && first_bad < 0) {
				first_bad = r;
				fail_at = now;
			}
		}
		if (left == 0)
			break;
		if (o->timeout_s > 0 && (double)(now - t0) / 1e9 > o->timeout_s) {
			timed_out = 1;
			stop_all(o, pid, ranks);
			break;
		}
		if (first_bad >= 0 && (double)(now - fail_at) / 1e9 > grace) {
			stop_all(o, pid, ranks);
			break;
		}
		sleep_ms(20);
	}
	rc = 0;
	if (timed_out) {
		rc = 1;
		inart_err_set(err, -ETIMEDOUT, "timed out after %g s (ranks still running ended)",
			      o->timeout_s);
	}
	if (first_bad >= 0) {
		rc = 1;
		inart_err_set(err, -EIO, "rank %d (node %s) exited with status %d%s", first_bad,
			      o->nodes[first_bad], ranks[first_bad].status,
			      timed_out ? "; then the timeout ended the others" : "");
	}
out:
	free(pid);
	return rc;
}
