/* Tests of io/fanout: the classic BPF steering program, run by the kernel,
 * picks the shard dp/shard's inart_shard_steer picks.  The program runs as
 * an SO_ATTACH_REUSEPORT_CBPF program over N UDP sockets bound to the InArt
 * port on loopback (the same program with loads from the network header,
 * SKF_NET_OFF) in a network namespace of the test's own (root, or an
 * unprivileged user namespace); every datagram must arrive at the socket
 * of its shard: random (job, tree, slot), IPv4 options, payloads too short
 * for the INA fields (shard 0).  The program also has to pass the kernel's
 * checker for every shard count. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/bytes.h"
#include "dp/shard.h"
#include "dp/wire.h"
#include "io/fanout.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/* A network namespace of our own with loopback up. */
static int own_netns(void **state)
{
	struct ifreq ifr;
	int fd;

	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		/* not root: a user namespace first (the same test, no privilege) */
		uid_t uid = getuid();
		gid_t gid = getgid();
		char m[64];

		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
			fprintf(stderr, "unshare: %s\n", strerror(errno));
			return -1;
		}
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			(void)!write(fd, "deny", 4);
			close(fd);
		}
		snprintf(m, sizeof(m), "0 %u 1", (unsigned)uid);
		fd = open("/proc/self/uid_map", O_WRONLY);
		if (fd < 0 || write(fd, m, strlen(m)) < 0)
			return -1;
		close(fd);
		snprintf(m, sizeof(m), "0 %u 1", (unsigned)gid);
		fd = open("/proc/self/gid_map", O_WRONLY);
		if (fd < 0 || write(fd, m, strlen(m)) < 0)
			return -1;
		close(fd);
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -1;
	close(fd);
	return 0;
}

static void test_prog_shape(void **state)
{
	struct sock_filter f[INART_FANOUT_PROG_MAX];

	(void)state;
	assert_int_equal(inart_fanout_prog(0, 0, f, INART_FANOUT_PROG_MAX), -EINVAL);
	assert_int_equal(inart_fanout_prog(INART_SHARD_MAX + 1, 0, f, INART_FANOUT_PROG_MAX),
			 -EINVAL);
	assert_int_equal(inart_fanout_prog(2, 0, f, 3), -EINVAL);
	for (int n = 1; n <= INART_SHARD_MAX; n++) {
		int len = inart_fanout_prog(n, 0, f, INART_FANOUT_PROG_MAX);

		assert_true(len > 10 && len <= INART_FANOUT_PROG_MAX);
		assert_int_equal(f[len - 1].code, BPF_RET | BPF_K); /* the "0" exit */
	}
}

#define NS 3

static void test_kernel_steers_as_shard(void **state)
{
	struct sock_filter f[INART_FANOUT_PROG_MAX];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(INART_WIRE_UDP_PORT)};
	int fd[NS], tx, one = 1, len;
	struct inart_rng r;

	(void)state;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int k = 0; k < NS; k++) {
		fd[k] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		assert_true(fd[k] >= 0);
		assert_int_equal(setsockopt(fd[k], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		assert_int_equal(bind(fd[k], (struct sockaddr *)&a, sizeof(a)), 0);
	}
	len = inart_fanout_prog(NS, SKF_NET_OFF, f, INART_FANOUT_PROG_MAX);
	assert_true(len > 0);
	{
		struct sock_fprog p = {(unsigned short)len, f};

		assert_int_equal(
		    setsockopt(fd[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &p, sizeof(p)), 0);
	}
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(tx >= 0);
	inart_rng_seed(&r, 4242);
	for (int it = 0; it < 600; it++) {
		uint8_t pl[64], frame[14 + 60 + 8 + 64], got[128];
		int plen = it % 10 == 9 ? (int)(inart_rng_next(&r) % INART_SHARD_INA_NEED) : 40,
		    opt = it % 4 == 3 ? 4 : 0, want, hits = 0;

		for (int i = 0; i < (int)sizeof(pl); i++)
			pl[i] = (uint8_t)inart_rng_next(&r);
		/* IPv4 options (NOP NOP NOP EOL) on some: the IHL path */
		if (opt) {
			uint8_t o[4] = {1, 1, 1, 0};

			assert_int_equal(setsockopt(tx, IPPROTO_IP, IP_OPTIONS, o, sizeof(o)), 0);
		} else {
			assert_int_equal(setsockopt(tx, IPPROTO_IP, IP_OPTIONS, NULL, 0), 0);
		}
		assert_int_equal(sendto(tx, pl, (size_t)plen, 0, (struct sockaddr *)&a, sizeof(a)),
				 plen);
		/* the frame as an interface would show it: Ethernet, IPv4, UDP */
		memset(frame, 0, sizeof(frame));
		inart_put_be16(frame + 12, 0x0800);
		frame[14] = (uint8_t)(0x45 + opt / 4);
		frame[14 + 9] = 17;
		inart_put_be32(frame + 14 + 12, INADDR_LOOPBACK);
		inart_put_be32(frame + 14 + 16, INADDR_LOOPBACK);
		inart_put_be16(frame + 14 + 20 + opt + 2, INART_WIRE_UDP_PORT);
		memcpy(frame + 14 + 20 + opt + 8, pl, (size_t)plen);
		want = inart_shard_steer(frame, 14 + 20 + (size_t)opt + 8 + (size_t)plen, NS);
		if (plen < INART_SHARD_INA_NEED)
			assert_int_equal(want, 0);
		for (int k = 0; k < NS; k++) {
			struct pollfd p = {fd[k], POLLIN, 0};
			ssize_t n;

			if (poll(&p, 1, k == want ? 1000 : 0) <= 0)
				continue;
			n = recv(fd[k], got, sizeof(got), 0);
			if (n < 0)
				continue;
			assert_int_equal(k, want);
			assert_int_equal(n, plen);
			hits++;
		}
		if (hits != 1)
			fail_msg("datagram %d (payload %d, options %d): expected on socket %d, %d "
				 "received",
				 it, plen, opt, want, hits);
	}
	for (int k = 0; k < NS; k++)
		close(fd[k]);
	close(tx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prog_shape),
	    cmocka_unit_test_setup(test_kernel_steers_as_shard, own_netns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
