/*
 * bg: the background traffic sender (see bg.h).  The child enters each
 * flow's namespace to open its AF_PACKET socket (a socket stays in the
 * namespace it was created in), returns to its own, then paces all flows
 * from one loop: the flow whose next frame is due earliest is served,
 * clock_nanosleep in between.  A flow more than 100 ms late starts afresh
 * (no burst to catch up).
 */
#include "emu/bg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/spawn.h"

#define BG_FRAME 1514
#define SILENT_NS 10000000ull /* a silent flow looks at its schedule every 10 ms */

static volatile sig_atomic_t bg_stop, bg_mark, bg_unmark;

static void on_term(int sig)
{
	(void)sig;
	bg_stop = 1;
}

static void on_mark(int sig)
{
	if (sig == SIGUSR2)
		bg_unmark = 1;
	else
		bg_mark = 1;
}

/* Flow f's rate at time now (ns), with the mark at t0 (0: none). */
static double rate_at(const struct inart_emu_bg_flow *f, uint64_t t0, uint64_t now)
{
	double bps = f->bps;

	for (int i = 0; t0 != 0 && i < f->n_steps; i++)
		if (now >= t0 + (uint64_t)(f->steps[i].at_s * 1e9))
			bps = f->steps[i].bps;
	return bps;
}

/* The interval between frames at bps; 0 means silent. */
static uint64_t interval_of(double bps)
{
	uint64_t iv;

	if (!(bps > 0))
		return 0;
	iv = (uint64_t)(BG_FRAME * 8 / bps * 1e9);
	return iv ? iv : 1;
}

static int open_in(const char *netns, const char *ifname, int home)
{
	char path[300];
	struct sockaddr_ll sll;
	int nfd, fd = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	nfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nfd < 0 || setns(nfd, CLONE_NEWNET) < 0)
		goto out;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = 0; /* send only */
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (fd >= 0 &&
	    (sll.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)) {
		close(fd);
		fd = -1;
	}
out:
	if (nfd >= 0)
		close(nfd);
	if (setns(home, CLONE_NEWNET) < 0 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static _Noreturn void bg_main(const struct inart_emu_bg_flow *f, int n, int out_fd)
{
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int *fd = calloc((size_t)n + 1, sizeof(*fd));
	uint64_t *next = calloc((size_t)n + 1, sizeof(*next)), *frames, *interval, t0 = 0;
	uint8_t(*frame)[BG_FRAME] = calloc((size_t)n + 1, sizeof(*frame));
	struct sigaction sa;
	FILE *out;

	frames = calloc((size_t)n + 1, sizeof(*frames));
	interval = calloc((size_t)n + 1, sizeof(*interval));
	if (home < 0 || !fd || !next || !frame || !frames || !interval)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_mark;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < n; i++) {
		uint16_t et = htons(INART_EMU_BG_ETHERTYPE);

		fd[i] = open_in(f[i].netns, f[i].ifname, home);
		if (fd[i] < 0)
			_exit(1);
		memcpy(frame[i], f[i].dst_mac, 6);
		memcpy(frame[i] + 6, f[i].src_mac, 6);
		memcpy(frame[i] + 12, &et, 2);
		interval[i] = interval_of(f[i].bps);
		next[i] = inart_emu_now_ns() +
			  (interval[i] ? interval[i] : SILENT_NS) * (uint64_t)i / (uint64_t)n;
	}
	while (!bg_stop) {
		int k = 0;
		uint64_t now = inart_emu_now_ns();

		if (bg_mark) { /* a run starts: its schedule from now */
			bg_mark = 0;
			t0 = now;
		}
		if (bg_unmark) { /* a run ended: the base rates until the next */
			bg_unmark = 0;
			t0 = 0;
		}
		for (int i = 0; i < n; i++) {
			uint64_t iv = interval_of(rate_at(&f[i], t0, now));

			if (iv != interval[i]) { /* a new rate from now */
				interval[i] = iv;
				next[i] = now;
			}
		}
		for (int i = 1; i < n; i++)
			if (next[i] < next[k])
				k = i;
		if (next[k] > now) {
			struct timespec ts = {(time_t)(next[k] / 1000000000ull),
					      (long)(next[k] % 1000000000ull)};

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			continue;
		}
		if (interval[k] == 0) { /* silent: look again later */
			next[k] = now + SILENT_NS;
			continue;
		}
		if (send(fd[k], frame[k], BG_FRAME, MSG_DONTWAIT) == BG_FRAME)
			frames[k]++;
		next[k] += interval[k];
		if (next[k] + 100000000ull < now)
			next[k] = now + interval[k];
	}
	out = fdopen(out_fd, "w");
	for (int i = 0; out != NULL && i < n; i++)
		fprintf(out, "%d %llu %llu\n", f[i].arc, (unsigned long long)frames[i],
			(unsigned long long)frames[i] * BG_FRAME);
	if (out != NULL)
		fclose(out);
	_exit(0);
}

pid_t inart_emu_bg_start(const struct inart_emu_bg_flow *f, int n, int out_fd,
			 struct inart_err *err)
{
	pid_t pid;

	if (n <= 0)
		return inart_err_set(err, -EINVAL, "no background flow");
	pid = fork();
	if (pid < 0)
		return inart_err_set(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		bg_main(f, n, out_fd);
	}
	return pid;
}
