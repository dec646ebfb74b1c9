/*
 * fanout: AF_PACKET fanout groups steered by a classic BPF program that
 * computes dp/shard's inart_shard_steer (see fanout.h).
 *
 * The program, with b the base offset, M[] the scratch words, A and X the
 * registers (every branch writes a word before reading it):
 *   A = ethertype; != 0x0800 -> 0
 *   A = P[b] & 15; < 5 -> 0; M[2] = 4 * A (the IPv4 header length)
 *   M[1] = mix(P[b+12], P[b+16]) % n                   (flow)
 *   P[b+9] != 17 or P[b+6] & 0x3fff -> M[1]
 *   X = M[2]; P[X+b+2] != INART_WIRE_UDP_PORT -> M[1]
 *   M[0] = mix(P[X+b+12], P[X+b+16]) % n                (job, tree)
 *   X = M[2]; return (M[0] + P[X+b+32]) % n             (slot)
 * where mix(a, c) = y ^ (y >> 16), y = (a * K1 ^ c) * K2 (dp/shard.h).
 */
#include "io/fanout.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_packet.h>

#include "dp/shard.h"
#include "dp/wire.h"

#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif

#define FANOUT_TYPE (PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_IGNORE_OUTGOING)

struct prog {
	struct sock_filter *f;
	int n, max;
};

static int put(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->n < p->max)
		p->f[p->n] = (struct sock_filter){code, jt, jf, k};
	return p->n++;
}

/* A = mix(A, X) with M[0] free for it: A = (A ^ X) * K2 (A was a * K1). */
static void mix_ax(struct prog *p)
{
	put(p, BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);
	put(p, BPF_ALU | BPF_MUL | BPF_K, 0, 0, INART_SHARD_K2);
	put(p, BPF_ST, 0, 0, 0);
	put(p, BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16);
	put(p, BPF_MISC | BPF_TAX, 0, 0, 0);
	put(p, BPF_LD | BPF_MEM, 0, 0, 0);
	put(p, BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);
}

/* Fix the jump at instruction `at` (jt: 1, jf: 0) to land on `to`. */
static void patch(struct prog *p, int at, int jt, int to)
{
	if (at < p->max && to - at - 1 >= 0 && to - at - 1 < 256) {
		if (jt)
			p->f[at].jt = (uint8_t)(to - at - 1);
		else
			p->f[at].jf = (uint8_t)(to - at - 1);
	}
}

int inart_fanout_prog(int n, int32_t base, struct sock_filter *out, int max)
{
	struct prog p = {out, 0, max};
	uint32_t b = (uint32_t)base;
	int j_eth, j_ihl, j_udp, j_frag, j_port, ret_flow;

	if (n < 1 || n > INART_SHARD_MAX || out == NULL)
		return -EINVAL;
	put(&p, BPF_LD | BPF_H | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL));
	j_eth = put(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0x0800);
	put(&p, BPF_LD | BPF_B | BPF_ABS, 0, 0, b);
	put(&p, BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x0f);
	j_ihl = put(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 0, 5);
	put(&p, BPF_ALU | BPF_LSH | BPF_K, 0, 0, 2);
	put(&p, BPF_ST, 0, 0, 2);
	/* flow: mix(source, destination) % n */
	put(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, b + 16);
	put(&p, BPF_MISC | BPF_TAX, 0, 0, 0);
	put(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, b + 12);
	put(&p, BPF_ALU | BPF_MUL | BPF_K, 0, 0, INART_SHARD_K1);
	mix_ax(&p);
	put(&p, BPF_ALU | BPF_MOD | BPF_K, 0, 0, (uint32_t)n);
	put(&p, BPF_ST, 0, 0, 1);
	/* UDP, not a fragment, to the InArt port */
	put(&p, BPF_LD | BPF_B | BPF_ABS, 0, 0, b + 9);
	j_udp = put(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 17);
	put(&p, BPF_LD | BPF_H | BPF_ABS, 0, 0, b + 6);
	j_frag = put(&p, BPF_JMP | BPF_JSET | BPF_K, 0, 0, 0x3fff);
	put(&p, BPF_LDX | BPF_MEM, 0, 0, 2);
	put(&p, BPF_LD | BPF_H | BPF_IND, 0, 0, b + 2);
	j_port = put(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, INART_WIRE_UDP_PORT);
	/* (mix(job, tree) % n + slot) % n */
	put(&p, BPF_LD | BPF_H | BPF_IND, 0, 0, b + 8 + INART_SHARD_INA_TREE);
	put(&p, BPF_ST, 0, 0, 3);
	put(&p, BPF_LD | BPF_W | BPF_IND, 0, 0, b + 8 + INART_SHARD_INA_JOB);
	put(&p, BPF_ALU | BPF_MUL | BPF_K, 0, 0, INART_SHARD_K1);
	put(&p, BPF_LDX | BPF_MEM, 0, 0, 3);
	mix_ax(&p);
	put(&p, BPF_ALU | BPF_MOD | BPF_K, 0, 0, (uint32_t)n);
	put(&p, BPF_ST, 0, 0, 0);
	put(&p, BPF_LDX | BPF_MEM, 0, 0, 2);
	put(&p, BPF_LD | BPF_H | BPF_IND, 0, 0, b + 8 + INART_SHARD_INA_SLOT);
	put(&p, BPF_MISC | BPF_TAX, 0, 0, 0);
	put(&p, BPF_LD | BPF_MEM, 0, 0, 0);
	put(&p, BPF_ALU | BPF_ADD | BPF_X, 0, 0, 0);
	put(&p, BPF_ALU | BPF_MOD | BPF_K, 0, 0, (uint32_t)n);
	put(&p, BPF_RET | BPF_A, 0, 0, 0);
	ret_flow = put(&p, BPF_LD | BPF_MEM, 0, 0, 1);
	put(&p, BPF_RET | BPF_A, 0, 0, 0);
	int ret0 = put(&p, BPF_RET | BPF_K, 0, 0, 0);

	if (p.n > max)
		return -EINVAL;
	patch(&p, j_eth, 0, ret0);
	patch(&p, j_ihl, 0, ret0);
	patch(&p, j_udp, 0, ret_flow);
	patch(&p, j_frag, 1, ret_flow);
	patch(&p, j_port, 0, ret_flow);
	return p.n;
}

int inart_fanout_join(int fd, const char *ifname, uint16_t *id, struct inart_err *err)
{
	int v = *id == 0 ? FANOUT_TYPE | PACKET_FANOUT_FLAG_UNIQUEID : FANOUT_TYPE;
	socklen_t len = sizeof(v);

	v = v << 16 | *id;
	if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &v, sizeof(v)) < 0)
		return inart_err_set(err, -errno, "%s: PACKET_FANOUT (classic BPF) refused: %s",
				     ifname, strerror(errno));
	if (*id == 0) {
		if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &v, &len) < 0)
			return inart_err_set(err, -errno, "%s: PACKET_FANOUT: %s", ifname,
					     strerror(errno));
		*id = (uint16_t)(v & 0xffff);
	}
	return 0;
}

int inart_fanout_steer(int fd, const char *ifname, int n, struct inart_err *err)
{
	struct sock_filter f[INART_FANOUT_PROG_MAX];
	int len = inart_fanout_prog(n, 0, f, INART_FANOUT_PROG_MAX);
	struct sock_fprog prog;

	if (len < 0)
		return inart_err_set(err, len, "%s: no steering program for %d shards", ifname, n);
	prog.len = (unsigned short)len;
	prog.filter = f;
	if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT_DATA, &prog, sizeof(prog)) < 0)
		return inart_err_set(err, -errno,
				     "%s: PACKET_FANOUT_DATA (the steering program): %s", ifname,
				     strerror(errno));
	return 0;
}
