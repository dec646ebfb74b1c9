/*
 * live_probe: whether this kernel runs an XDP program with live frames
 * (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES), which the bench's XDP
 * generator (bench/xdp_bench gen) and the kernel aggregation path's flush
 * ticks (io/xagg) need.  Loads a two-instruction XDP program (XDP_DROP) and
 * runs it once on a zeroed 64-byte frame in the calling namespace.
 *
 * Exit 0: it ran; 1: refused or no BPF here, with one line on stdout naming
 * the kernel's answer (tests/skip.sh: live_frames_refused).  Some kernels
 * refuse it even to root: seen here on a 6.18.44 guest (EPERM).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	const struct bpf_insn prog[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	unsigned char frame[64] = {0};
	int fd, rc = 1;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = 1, .batch_size = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "live_probe", "GPL", prog, 2, NULL);
	if (fd < 0) {
		printf("loading an XDP program: %s\n", strerror(-fd));
		return 1;
	}
	if (bpf_prog_test_run_opts(fd, &o) < 0)
		printf("this kernel refuses BPF_PROG_RUN with live frames: %s\n", strerror(errno));
	else
		rc = 0;
	close(fd);
	return rc;
}
