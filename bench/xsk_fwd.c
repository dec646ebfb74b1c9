/*
 * xsk_fwd: a bare AF_XDP forwarder for bench/switchd_bench.sh (mode
 * xsk-fwd): the user-space limit of the veth path, no processing at all.
 *
 *   xsk_fwd IN OUT
 *
 * One UMEM (4096 frames of 2 KB) shared by two copy-mode sockets (veth
 * refuses zero-copy): an rx socket on IN queue 0 (the `xsk` program of
 * bench/xdp_bench.bpf.c steers every frame of IN to it through an XSKMAP)
 * and a tx socket on OUT queue 0.  A received descriptor goes unchanged to
 * OUT's tx ring (no copy), its completion back to IN's fill ring; batches of
 * 64, busy polling (the forwarder owns its core) but for a poll() when it
 * has nothing to do, sendto() to kick copy-mode tx whenever frames are in
 * flight.  Prints "ready" once attached; on SIGTERM / SIGINT
 * detaches, prints "rx N tx M" and the rx socket's drop counters
 * (XDP_STATISTICS) and exits.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <xdp/xsk.h>

#include "xdp_bench.skel.h"

#define NFRAMES 4096
#define FSIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define BATCH 64

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct xsk_ring_prod fill, fill_out, tx;
	struct xsk_ring_cons comp, comp_out, rx;
	struct xsk_umem *umem = NULL;
	struct xsk_socket *xrx = NULL, *xtx = NULL;
	struct xdp_bench *s = NULL;
	struct sigaction sa = {.sa_handler = on_stop};
	unsigned long long nrx = 0, ntx = 0, pending = 0;
	void *area = MAP_FAILED;
	int iin, iout, err, fd, attached = 0, rc = 1;
	__u32 i, idx, key = 0;
	size_t len = (size_t)NFRAMES * FSIZE;

	if (argc != 3) {
		fprintf(stderr, "usage: xsk_fwd IN OUT\n");
		return 2;
	}
	iin = (int)if_nametoindex(argv[1]);
	iout = (int)if_nametoindex(argv[2]);
	if (!iin || !iout) {
		fprintf(stderr, "xsk_fwd: no interface %s\n", iin ? argv[2] : argv[1]);
		return 1;
	}
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("xsk_fwd: mmap");
		goto out;
	}
	/* IN's fill/completion rings are the umem's own; OUT gets its own */
	err = xsk_umem__create(&umem, area, len, &fill, &comp, NULL);
	if (err) {
		fprintf(stderr, "xsk_fwd: umem: %s\n", strerror(-err));
		goto out;
	}
	{
		struct xsk_socket_config c = {.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
					      .tx_size = 0,
					      .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					      .bind_flags = XDP_COPY};

		err =
		    xsk_socket__create_shared(&xrx, argv[1], 0, umem, &rx, NULL, &fill, &comp, &c);
		if (err) {
			fprintf(stderr, "xsk_fwd: rx socket on %s: %s\n", argv[1], strerror(-err));
			goto out;
		}
		c.rx_size = 0;
		c.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS;
		err = xsk_socket__create_shared(&xtx, argv[2], 0, umem, NULL, &tx, &fill_out,
						&comp_out, &c);
		if (err) {
			fprintf(stderr, "xsk_fwd: tx socket on %s: %s\n", argv[2], strerror(-err));
			goto out;
		}
	}
	s = xdp_bench__open();
	if (!s || xdp_bench__load(s)) {
		fprintf(stderr, "xsk_fwd: load the xsk program: %s\n", strerror(errno));
		goto out;
	}
	fd = xsk_socket__fd(xrx);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.xsks), &key, &fd, 0)) {
		fprintf(stderr, "xsk_fwd: xskmap: %s\n", strerror(errno));
		goto out;
	}
	err = bpf_xdp_attach(iin, bpf_program__fd(s->progs.xsk), XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "xsk_fwd: attach to %s: %s\n", argv[1], strerror(-err));
		goto out;
	}
	attached = 1;
	/* every frame but a tx ring's worth starts in IN's fill ring */
	if (xsk_ring_prod__reserve(&fill, XSK_RING_PROD__DEFAULT_NUM_DESCS, &idx) !=
	    XSK_RING_PROD__DEFAULT_NUM_DESCS) {
		fprintf(stderr, "xsk_fwd: fill ring\n");
		goto out;
	}
	for (i = 0; i < XSK_RING_PROD__DEFAULT_NUM_DESCS; i++)
		*xsk_ring_prod__fill_addr(&fill, idx + i) = (__u64)i * FSIZE;
	xsk_ring_prod__submit(&fill, XSK_RING_PROD__DEFAULT_NUM_DESCS);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		__u32 n, got, ti = 0, ci, fi = 0;

		/* completions of OUT back to IN's fill ring */
		n = xsk_ring_cons__peek(&comp_out, BATCH, &ci);
		if (n) {
			while (xsk_ring_prod__reserve(&fill, n, &fi) != n && !stop)
				;
			for (i = 0; i < n; i++)
				*xsk_ring_prod__fill_addr(&fill, fi + i) =
				    *xsk_ring_cons__comp_addr(&comp_out, ci + i);
			xsk_ring_prod__submit(&fill, n);
			xsk_ring_cons__release(&comp_out, n);
			pending -= n;
		}
		/* copy-mode tx sends only in sendto(), at most 32 frames a call:
		 * kick while anything is in flight, not only after a receive */
		if (pending)
			sendto(xsk_socket__fd(xtx), NULL, 0, MSG_DONTWAIT, NULL, 0);
		got = xsk_ring_cons__peek(&rx, BATCH, &idx);
		if (!got) {
			/* nothing to do: sleep until rx has frames (1 ms at most),
			 * so that the softirq of this CPU (the veth receive of what
			 * it sent: their completions) is not starved by the spin */
			if (!n) {
				struct pollfd p = {.fd = xsk_socket__fd(xrx), .events = POLLIN};

				poll(&p, 1, 1);
			}
			continue;
		}
		while (xsk_ring_prod__reserve(&tx, got, &ti) != got && !stop)
			sendto(xsk_socket__fd(xtx), NULL, 0, MSG_DONTWAIT, NULL, 0);
		for (i = 0; i < got; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, idx + i);
			struct xdp_desc *t = xsk_ring_prod__tx_desc(&tx, ti + i);

			t->addr = d->addr;
			t->len = d->len;
			t->options = 0;
		}
		xsk_ring_prod__submit(&tx, got);
		xsk_ring_cons__release(&rx, got);
		nrx += got;
		ntx += got;
		pending += got;
	}
	{
		struct xdp_statistics st = {0};
		socklen_t sl = sizeof(st);

		getsockopt(xsk_socket__fd(xrx), SOL_XDP, XDP_STATISTICS, &st, &sl);
		printf("rx %llu tx %llu rx_dropped %llu rx_ring_full %llu fill_empty %llu\n", nrx,
		       ntx, (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_ring_full,
		       (unsigned long long)st.rx_fill_ring_empty_descs);
	}
	rc = 0;
out:
	if (attached)
		bpf_xdp_detach(iin, XDP_FLAGS_DRV_MODE, NULL);
	xsk_socket__delete(xtx);
	xsk_socket__delete(xrx);
	xsk_umem__delete(umem);
	xdp_bench__destroy(s);
	if (area != MAP_FAILED)
		munmap(area, len);
	return rc;
}
