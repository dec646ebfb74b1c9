/*
 * udp_gen: traffic generator and sink for bench/switchd_bench.sh.
 *
 *   udp_gen send SRC_IP DST_IP SECONDS [FRAME_BYTES [PPS]]
 *   udp_gen sink BIND_IP SECONDS [FRAME_BYTES]
 *
 * send: InArt DATA packets (valid INA headers, job 0, tree 0, label 1,
 * fan-in 1, contributor 0, seq counting up, slot = seq % 64, values a
 * function of seq: value(seq, k)) from SRC_IP to DST_IP:47470, in sendmmsg
 * batches of 64, for SECONDS; PPS > 0 paces the offered load (0: as fast
 * as possible).  The UDP payload is sized so that the Ethernet frame is
 * FRAME_BYTES (default 1024).  Prints "sent N pps X".
 * sink: receive on BIND_IP:47470 with recvmmsg for SECONDS and check every
 * datagram: it must decode (inart_wire_decode), be a DATA packet of job 0,
 * tree 0, fan-in 1 from contributor 0 alone, carry the value count of
 * FRAME_BYTES frames and exactly value(seq, k) -- what a forwarder passes on
 * and what an aggregation point with fan-in 1 emits.  Prints "received N
 * valid V invalid I pps X" (pps of valid datagrams over SECONDS): the
 * benchmark counts packets the application got intact, not frames an
 * interface saw.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dp/bytes.h"
#include "dp/dgram.h"
#include "dp/pkt.h"
#include "dp/wire.h"

#define BATCH 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The value k of chunk seq (what the sender puts, the sink expects). */
static int32_t value(uint32_t seq, int k)
{
	return (int32_t)(seq * 2654435761u ^ (uint32_t)k * 40503u);
}

/* INA values in a frame of `frame` bytes; 0 if out of range. */
static int frame_values(int frame)
{
	int count = (int)((frame - INART_PKT_UDP_HLEN - (int)inart_wire_hdr_len(1)) / 4);

	return count >= 1 && count <= inart_wire_max_values(1) ? count : 0;
}

static int open_udp(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;

	if (fd < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(ip);
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	return fd;
}

static int do_send(const char *src, const char *dst, double secs, int frame, double pps)
{
	static uint8_t buf[BATCH][INART_DGRAM_MAX];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(INART_WIRE_UDP_PORT)};
	struct inart_wire_hdr h;
	int fd = open_udp(src, INART_WIRE_UDP_PORT), count;
	size_t hl = inart_wire_hdr_len(1), len;
	uint64_t sent = 0, seq = 0;
	double t0, end, t;

	if (inet_pton(AF_INET, dst, &to.sin_addr) != 1)
		return 2;
	count = frame_values(frame);
	if (count == 0) {
		fprintf(stderr, "udp_gen: frame size %d out of range\n", frame);
		return 2;
	}
	len = hl + 4 * (size_t)count;
	memset(&h, 0, sizeof(h));
	h.flags = INART_F_DATA;
	h.bitmap_words = 1;
	h.scale_exp = 16;
	h.fan_in = 1;
	h.label = 1;
	h.iter = 1;
	h.count = (uint16_t)count;
	h.bitmap[0] = 1;
	for (int i = 0; i < BATCH; i++) {
		memset(buf[i], 0, sizeof(buf[i]));
		iov[i].iov_base = buf[i];
		iov[i].iov_len = len;
		memset(&msg[i], 0, sizeof(msg[i]));
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = &to;
		msg[i].msg_hdr.msg_namelen = sizeof(to);
	}
	t0 = now_s();
	end = t0 + secs;
	while ((t = now_s()) < end) {
		int n;

		if (pps > 0 && (double)sent > (t - t0) * pps) {
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
			continue;
		}
		for (int i = 0; i < BATCH; i++) {
			h.seq = (uint32_t)(seq + (uint64_t)i);
			h.slot = (uint16_t)(h.seq % 64);
			inart_wire_encode_hdr(&h, buf[i], sizeof(buf[i]));
			for (int k = 0; k < count; k++)
				inart_put_be32(buf[i] + hl + 4 * (size_t)k,
					       (uint32_t)value(h.seq, k));
		}
		n = sendmmsg(fd, msg, BATCH, 0);
		if (n < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)
				continue;
			perror("sendmmsg");
			return 1;
		}
		sent += (uint64_t)n;
		seq += (uint64_t)n;
	}
	t = now_s() - t0;
	printf("sent %llu pps %.0f\n", (unsigned long long)sent, (double)sent / t);
	return 0;
}

/* A datagram as the sender made it (after a forwarder or an aggregation
 * point with fan-in 1)? */
static int valid(const uint8_t *d, size_t len, int count)
{
	struct inart_wire_hdr h;
	const uint8_t *v;

	if (inart_wire_decode(d, len, &h, &v) != INART_WIRE_OK ||
	    (h.flags & (INART_F_DATA | INART_F_RESULT | INART_F_NACK)) != INART_F_DATA ||
	    h.job != 0 || h.tree != 0 || h.fan_in != 1 || h.bitmap_words != 1 || h.bitmap[0] != 1 ||
	    h.count != count)
		return 0;
	for (int k = 0; k < count; k++)
		if ((int32_t)inart_get_be32(v + 4 * (size_t)k) != value(h.seq, k))
			return 0;
	return 1;
}

static int do_sink(const char *ip, double secs, int frame)
{
	static uint8_t buf[BATCH][2048];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	int fd = open_udp(ip, INART_WIRE_UDP_PORT), count = frame_values(frame);
	uint64_t got = 0, ok = 0;
	double t0 = now_s(), end = t0 + secs, t;

	if (count == 0) {
		fprintf(stderr, "udp_gen: frame size %d out of range\n", frame);
		return 2;
	}

	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		memset(&msg[i], 0, sizeof(msg[i]));
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	while ((t = now_s()) < end) {
		struct pollfd p = {fd, POLLIN, 0};
		int n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recvmmsg(fd, msg, BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++)
			ok += (uint64_t)valid(buf[i], msg[i].msg_len, count);
		if (n > 0)
			got += (uint64_t)n;
	}
	printf("received %llu valid %llu invalid %llu pps %.0f\n", (unsigned long long)got,
	       (unsigned long long)ok, (unsigned long long)(got - ok), (double)ok / (t - t0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "send") == 0)
		return do_send(argv[2], argv[3], atof(argv[4]), argc > 5 ? atoi(argv[5]) : 1024,
			       argc > 6 ? atof(argv[6]) : 0);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "sink") == 0)
		return do_sink(argv[2], atof(argv[3]), argc > 4 ? atoi(argv[4]) : 1024);
	fprintf(stderr, "usage: udp_gen send SRC_IP DST_IP SECONDS [FRAME_BYTES [PPS]]\n"
			"       udp_gen sink BIND_IP SECONDS [FRAME_BYTES]\n");
	return 2;
}
