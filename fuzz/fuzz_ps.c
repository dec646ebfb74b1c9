/*
 * fuzz_ps: libFuzzer target for the parameter server core (dp/ps), which
 * takes datagrams from anyone on the network.
 *
 * Each input is a sequence of records [ctl][len_hi][len_lo][datagram]:
 * ctl & 3 picks the sender address (0..2: the workers 10.0.0.1-3, 3: a
 * stranger), ctl >> 2 advances the clock by 2^(ctl >> 2) ns when non-zero
 * (so the NACK timers, drains and the one-second restart rule are reached).
 * A fresh PS serves tree A (job 7, tree 1, fan-in 3, two children), which
 * the input drives freely (its sources: 10.0.0.1 as rank 0, 10.0.0.2 as
 * rank 1, 10.0.0.3 a switch of any rank; the stranger is none of them), and
 * tree B (job 9, tree 2, fan-in 2, any source), which the
 * input must not touch: before the input, rank 0's contribution to B's
 * chunk is absorbed; input datagrams of job 9 are skipped; after the input,
 * rank 1's contribution must complete the chunk with the exact sum.  (It
 * is a fresh DATA of B's current iteration: if the input advanced the clock
 * past the one-second restart rule, B starts afresh and rank 1 alone does
 * not complete it -- so the final check sends rank 0 again in that case.)
 * Checked: no crash or sanitizer report; every output
 * datagram fits INART_DGRAM_MAX, decodes, is a RESULT (or a NACK/notice)
 * of a served tree; the output count never exceeds max_out; a datagram
 * from the stranger, or a DATA of tree A from a worker that names ranks
 * other than its own, changes nothing (no output, nothing absorbed,
 * completed or sent, counted drop_source).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/ps.h"
#include "dp/wire.h"

#define NV 8
#define MAXOUT 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct inart_dgram outv[MAXOUT];
static uint8_t outbuf[MAXOUT][INART_DGRAM_MAX];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_ps: %s\n", what);
	abort();
}

static const struct inart_ps_source a_src[3] = {
    {0x0a000001u, 0}, {0x0a000002u, 1}, {0x0a000003u, INART_PS_ANY_RANK}};

static struct inart_ps *make(void)
{
	struct inart_ps *ps = inart_ps_create();
	struct inart_ps_tree_cfg *c = calloc(1, sizeof(*c));

	if (ps == NULL || c == NULL)
		die("out of memory");
	c->job = 7;
	c->tree = 1;
	c->fan_in = 3;
	c->max_chunks = 64;
	c->n_children = 2;
	c->children[0].ip = 0x0a000101u;
	c->children[0].label = 5;
	c->children[1].ip = 0x0a000003u;
	c->n_sources = 3;
	c->sources = a_src;
	if (inart_ps_tree_set(ps, c) != 0)
		die("tree A");
	memset(c, 0, sizeof(*c));
	c->job = 9;
	c->tree = 2;
	c->fan_in = 2;
	c->max_chunks = 16;
	c->n_children = 1;
	c->children[0].ip = 0x0a000201u;
	if (inart_ps_tree_set(ps, c) != 0)
		die("tree B");
	free(c);
	return ps;
}

static int32_t b_val(int r, int i)
{
	return (i + 1) * 100003 * (r + 1) - 7 * r; /* sums stay inside int32 */
}

/* Tree B's contribution of rank r to (iter 4, seq 2) at now. */
static int b_send(struct inart_ps *ps, int r, uint64_t now)
{
	struct inart_wire_hdr h;
	int32_t v[NV];
	uint8_t pl[512];
	size_t n;

	memset(&h, 0, sizeof(h));
	h.flags = INART_F_DATA;
	h.bitmap_words = 1;
	h.scale_exp = 16;
	h.job = 9;
	h.tree = 2;
	h.fan_in = 2;
	h.iter = 4;
	h.seq = 2;
	h.slot = 2;
	h.count = NV;
	h.bitmap[0] = 1ull << r;
	for (int i = 0; i < NV; i++)
		v[i] = b_val(r, i);
	n = inart_wire_encode(&h, v, pl, sizeof(pl));
	if (n == 0)
		die("encode");
	return inart_ps_rx(ps, pl, n, 0x0a000201u, 7000, now, outv, MAXOUT);
}

/* Check the outputs; returns how many were tree B's complete result. */
static int check_out(int n)
{
	int nb = 0;

	if (n < 0 || n > MAXOUT)
		die("bad output count");
	for (int i = 0; i < n; i++) {
		struct inart_wire_hdr h;
		const uint8_t *pl;

		if (outv[i].len > INART_DGRAM_MAX)
			die("output datagram too long");
		if (inart_wire_decode(outv[i].data, outv[i].len, &h, &pl) != INART_WIRE_OK)
			die("output does not decode");
		if (!(h.flags & INART_F_RESULT))
			die("output is not a RESULT");
		if (!((h.job == 7 && h.tree == 1) || (h.job == 9 && h.tree == 2)))
			die("output for a tree the PS does not serve");
		if (h.job != 9 || (h.flags & (INART_F_NACK | INART_F_OVERFLOW)))
			continue;
		if (h.iter != 4 || h.seq != 2 || h.count != NV || h.bitmap[0] != 3)
			die("tree B: wrong result header");
		for (int k = 0; k < NV; k++)
			if ((int32_t)inart_get_be32(pl + 4 * k) != b_val(0, k) + b_val(1, k))
				die("tree B's sums were disturbed");
		nb++;
	}
	return nb;
}

/* 1 if tree A must refuse d from src: the stranger, or a worker's DATA
 * naming ranks other than its own (as far as the bytes tell: job 7, tree 1,
 * one bitmap word at offset 32; see docs/wire.md). */
static int foreign_to_a(const uint8_t *d, size_t len, uint32_t src)
{
	uint64_t bm;

	if (len < 40 || inart_get_be32(d + 4) != 7 || inart_get_be16(d + 8) != 1)
		return 0;
	if (src == 0xc0a80001u)
		return 1;
	if (src == 0x0a000003u || d[2] != 1)
		return 0;
	bm = inart_get_be64(d + 32);
	return bm != 1ull << (src - 0x0a000001u);
}

static int is_job_b(const uint8_t *d, size_t len)
{
	/* job at offset 4, big-endian, whatever the rest says */
	return len >= 8 && d[4] == 0 && d[5] == 0 && d[6] == 0 && d[7] == 9;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_ps *ps;
	uint64_t now = 1000;
	size_t off = 0;
	int nb;

	for (int i = 0; i < MAXOUT; i++)
		outv[i].data = outbuf[i];
	ps = make();
	if (check_out(b_send(ps, 0, now)) != 0)
		die("tree B complete with one rank");
	while (off + 3 <= size) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
		uint32_t src = (ctl & 3) == 3 ? 0xc0a80001u : 0x0a000001u + (ctl & 3);

		off += 3;
		if (len > size - off)
			len = size - off;
		if (ctl >> 2)
			now += (uint64_t)1 << (ctl >> 2);
		if (!is_job_b(data + off, len)) {
			struct inart_ps_stats a, b;
			int n;

			inart_ps_stats(ps, &a);
			n = inart_ps_rx(ps, data + off, len, src, 5000, now, outv, MAXOUT);
			check_out(n);
			inart_ps_stats(ps, &b);
			if (foreign_to_a(data + off, len, src) &&
			    (n != 0 || b.absorbed != a.absorbed || b.completed != a.completed ||
			     b.results_sent != a.results_sent || b.probes != a.probes))
				die("a datagram from outside tree A's sources had an effect");
		}
		off += len;
	}
	nb = check_out(b_send(ps, 1, now));
	if (now - 1000 >= INART_PS_RESTART_IDLE_NS) {
		/* B was silent for a second: rank 1 restarted it */
		if (nb != 0)
			die("tree B completed across a restart");
		nb = check_out(b_send(ps, 0, now));
	}
	if (nb != 1)
		die("tree B did not complete exactly once");
	inart_ps_destroy(ps);
	return 0;
}
