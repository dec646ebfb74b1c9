/*
 * udp_flood: a non-InArt flood for the netns tests (tests/netns_cores.sh):
 *
 *   udp_flood SRC_IP DST_IP PORT SECONDS
 *
 * sends plain UDP datagrams of 982 bytes (1024-byte Ethernet frames) from
 * SRC_IP to DST_IP:PORT as fast as the socket takes them (sendmmsg, 64 per
 * call, no pacing) for SECONDS, and prints "sent N pps X".  A full socket
 * buffer (ENOBUFS, EAGAIN) is retried, not counted; an unreachable peer
 * (ECONNREFUSED from an ICMP error) is ignored.  Exit 2 on bad arguments,
 * 1 if the socket cannot be had.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define PAYLOAD 982 /* 1024 - 14 (Ethernet) - 20 (IPv4) - 8 (UDP) */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static unsigned char buf[BATCH][PAYLOAD];
	struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	unsigned long long sent = 0;
	double secs, t0, t;
	char *end;
	long port;
	int fd;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: udp_flood SRC_IP DST_IP PORT SECONDS\n");
		return 2;
	}
	port = strtol(argv[3], &end, 10);
	secs = strtod(argv[4], NULL);
	if (*end != '\0' || port < 1 || port > 65535 || !(secs > 0 && secs <= 600)) {
		fprintf(stderr, "udp_flood: bad PORT or SECONDS\n");
		return 2;
	}
	dst.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		fprintf(stderr, "udp_flood: socket: %s\n", strerror(errno));
		return 1;
	}
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++) {
		memset(buf[i], 0x5a, PAYLOAD);
		iov[i].iov_base = buf[i];
		iov[i].iov_len = PAYLOAD;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_s();
	do {
		int n;

		for (int i = 0; i < BATCH; i++)
			memcpy(buf[i], &sent, sizeof(sent)); /* a sequence number, for tcpdump */
		n = sendmmsg(fd, m, BATCH, 0);
		if (n > 0)
			sent += (unsigned long long)n;
		else if (n < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR &&
			 errno != ECONNREFUSED) {
			fprintf(stderr, "udp_flood: sendmmsg: %s\n", strerror(errno));
			close(fd);
			return 1;
		}
		t = now_s();
	} while (t - t0 < secs);
	printf("sent %llu pps %.0f\n", sent, (double)sent / (t - t0));
	close(fd);
	return 0;
}
