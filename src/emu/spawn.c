/*
 * spawn: children in namespaces, commands with captured output, stop by PID
 * (see spawn.h).  The child reports a failure before exec (setns, dup2,
 * execvp) through a close-on-exec pipe: the parent reads either EOF (the
 * exec happened) or an errno and a message.
 */
#include "emu/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t inart_emu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* In the child: report errno and a message on fd, then _exit(127). */
static _Noreturn void child_fail(int fd, const char *what, const char *arg)
{
	char msg[300];
	int e = errno, n;

	n = snprintf(msg, sizeof(msg), "%d %s '%s': %s", e, what, arg, strerror(e));
	if (n > 0 && write(fd, msg, (size_t)n) < 0)
		_exit(126);
	_exit(127);
}

/* In the child: close every descriptor above 2 except keep. */
static void close_others(int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int dfd = d ? dirfd(d) : -1;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != keep && fd != dfd)
			close(fd);
	}
	closedir(d);
}

pid_t inart_emu_spawn(const char *netns, char *const argv[], const struct inart_emu_fds *fds,
		      struct inart_err *err)
{
	int p[2], in = fds ? fds->in : -1, out = fds ? fds->out : -1, er = fds ? fds->err : -1,
		  detach = fds ? fds->detach : 0;
	char msg[300];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return inart_err_set(err, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return inart_err_set(err, -e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		int nul;

		close(p[0]);
		if (detach) {
			setsid();
		} else {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(127); /* the emulator died before the line above */
		}
		signal(SIGPIPE, SIG_DFL);
		if (netns != NULL) {
			char path[300];
			int fd;

			snprintf(path, sizeof(path), "/run/netns/%s", netns);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
				child_fail(p[1], "namespace", netns);
			close(fd);
		}
		nul = open("/dev/null", O_RDWR);
		if ((in >= 0 ? dup2(in, 0) : dup2(nul, 0)) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
		    (er >= 0 && dup2(er, 2) < 0))
			child_fail(p[1], "redirect", argv[0]);
		close_others(p[1]);
		execvp(argv[0], argv);
		child_fail(p[1], "exec", argv[0]);
	}
	close(p[1]);
	do
		n = read(p[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n > 0) {
		int e = atoi(msg);
		char *sp;

		msg[n] = '\0';
		sp = strchr(msg, ' ');
		waitpid(pid, NULL, 0);
		return inart_err_set(err, -(e > 0 ? e : EIO), "%s", sp ? sp + 1 : msg);
	}
	return pid;
}

int inart_emu_cmd(const char *netns, char *const argv[], const char *input, char *out,
		  size_t out_cap, int timeout_ms, struct inart_err *err)
{
	int ip[2] = {-1, -1}, op[2] = {-1, -1}, status, rc;
	size_t got = 0, in_len = input ? strlen(input) : 0, in_off = 0;
	uint64_t deadline = inart_emu_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct inart_emu_fds fds = {-1, -1, -1, 0};
	char sink[512];
	pid_t pid;

	if (out != NULL && out_cap > 0)
		out[0] = '\0';
	if ((input != NULL && pipe2(ip, O_CLOEXEC) < 0) || pipe2(op, O_CLOEXEC) < 0) {
		rc = inart_err_set(err, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	fds.in = ip[0];
	fds.out = fds.err = op[1];
	pid = inart_emu_spawn(netns, argv, &fds, err);
	if (pid < 0) {
		rc = pid;
		goto out;
	}
	close(op[1]);
	op[1] = -1;
	if (ip[0] >= 0) {
		close(ip[0]);
		ip[0] = -1;
		fcntl(ip[1], F_SETFL, O_NONBLOCK);
	}
	for (;;) {
		struct pollfd pf[2] = {{op[0], POLLIN, 0}, {ip[1], POLLOUT, 0}};
		uint64_t now = inart_emu_now_ns();
		ssize_t n;

		if (now >= deadline) {
			inart_emu_kill(pid, 100);
			rc = inart_err_set(err, -ETIMEDOUT, "%s: no answer within %d ms", argv[0],
					   timeout_ms);
			goto out;
		}
		if (poll(pf, ip[1] >= 0 ? 2 : 1, (int)((deadline - now) / 1000000 + 1)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ip[1] >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = write(ip[1], input + in_off, in_len - in_off);
			if (n > 0)
				in_off += (size_t)n;
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				in_off = in_len;
			if (in_off == in_len) {
				close(ip[1]);
				ip[1] = -1;
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (out != NULL && got + 1 < out_cap)
				n = read(op[0], out + got, out_cap - 1 - got);
			else
				n = read(op[0], sink, sizeof(sink));
			if (n == 0)
				break;
			if (n > 0 && out != NULL && got + 1 < out_cap) {
				got += (size_t)n;
				out[got] = '\0';
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	for (int i = 0; i < 2; i++) {
		if (ip[i] >= 0)
			close(ip[i]);
		if (op[i] >= 0)
			close(op[i]);
	}
	return rc;
}

int inart_emu_exited(pid_t pid, int *status)
{
	int st;
	pid_t r = waitpid(pid, &st, WNOHANG);

	if (r == pid) {
		if (status != NULL)
			*status = st;
		return 1;
	}
	return r < 0 && errno == ECHILD;
}

int inart_emu_kill(pid_t pid, int grace_ms)
{
	uint64_t end;
	int st;

	if (pid <= 0)
		return -EINVAL;
	if (kill(pid, SIGTERM) < 0 && errno == ESRCH)
		return waitpid(pid, &st, WNOHANG) == pid ? st : -ECHILD;
	end = inart_emu_now_ns() + (uint64_t)grace_ms * 1000000ull;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -errno;
		if (inart_emu_now_ns() >= end)
			break;
		usleep(5000);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return st;
}

int64_t inart_emu_cpu_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: skip past the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2 ||
	    hz <= 0)
		return -EIO;
	return (int64_t)((ut + st) * (1000000000ull / (unsigned long long)hz));
}
