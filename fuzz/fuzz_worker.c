/*
 * fuzz_worker: libFuzzer target for the worker core (dp/worker), which takes
 * results, NACKs, probe answers and scale notices from anyone on the network.
 *
 * A fresh worker (job 5, rank 1 of 3 workers, three trees sharing 30 values
 * 50/30/20 %, 4 values a packet, window 2, 3 slots, 1 ms initial timeout)
 * begins all-reduce 5 over a fixed buffer, one of whose values does not fit
 * the default scale (local overflow).  Each input is a sequence of records
 * [ctl][len_hi][len_lo][bytes]: ctl >> 2 advances the clock by
 * 2^min(ctl >> 2, 40) ns when non-zero; ctl bit 0 picks how the bytes are
 * read: 0 as a raw datagram, 1 as a compact description of a RESULT packet
 * for this worker (flags, tree, seq, scale, prev, bitmap, count, iter,
 * values; see synth()) so that deep states are reached without guessing the
 * job; ctl bit 1 skips the poll after the record.  A raw datagram comes from
 * its tree's PS (ip, port 47470); a synthesized one from there or, by one
 * bit, from a forger (another tree's PS, or the right host on another port).
 *
 * Oracle (sound by the accept rule of worker.h/docs/dataplane.md: a chunk
 * becomes DONE once, only from a complete clean result of the current
 * iteration with the chunk's exact count, at whatever scale it carries,
 * from the tree's PS address and port): a model takes the first such result
 * of every chunk, and
 * the worker's stored-result count and done flag must match the model after
 * every datagram.  A step notice (RESULT|STALE) from the PS, for the current
 * iteration, an existing chunk and this rank makes the all-reduce stale:
 * inart_worker_stale then names the highest step noticed and poll sends
 * nothing more; the model follows.  When done, the worker's result must be bit-identical to
 * the model's (value * 2^-scale rounded once to float).  Every datagram
 * polled must fit INART_DGRAM_MAX, decode, be a DATA of this worker's job,
 * iteration, rank-only bitmap, fan-in and tree, go to that tree's PS, have
 * seq below the tree's chunk count and below (lowest chunk without a
 * result) + window, never name a chunk with a result, carry slot seq % 3,
 * never raise a chunk's scale within the all-reduce, and be either a probe
 * (DATA|RETX|NACK, header only, the tree's label) or the chunk's exact
 * quantization round(x * 2^scale) (label 0 when RETX) or, exactly when that
 * does not fit int32, DATA|OVERFLOW with zeros and label 0; poll returns at
 * most max_out and nothing before inart_worker_next_deadline.  After the
 * input a correct PS answers every datagram the worker sends (the exact sum
 * of 3 workers holding the same buffer, or an OVERFLOW result when it does
 * not fit), jumping the clock to the worker's next deadline: the worker must
 * be done within 2000 polls (unless stale: then nothing more is sent), then
 * start all-reduce 6 and finish it the same way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/quant.h"
#include "dp/wire.h"
#include "dp/worker.h"

#define JOB 5u
#define NW 3
#define RANK 1
#define FULL 7u /* bitmap of ranks 0..NW-1 */
#define NT 3
#define VPP 4
#define WIN 2
#define SLOTS 3
#define NVAL 30
#define MAXCH 8 /* chunks of a tree at most (15 values / VPP) */
#define ITER0 5u
#define RETX_NS 1000000u
#define MAXOUT 8
#define FINISH_POLLS 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t labels[NT] = {11, 0, 13};
static const uint32_t ps_ips[NT] = {0x0a000101u, 0x0a000102u, 0x0a000103u};

struct model {
	uint32_t iter;
	size_t off[NT], len[NT];
	uint32_t n_chunks[NT];
	uint8_t done[NT][MAXCH];
	int8_t scale[NT][MAXCH]; /* last scale sent; 127: none yet */
	float res[NVAL];
	uint64_t results; /* chunk results stored over all all-reduces */
	size_t n_done, total;
	int stale;	     /* a step notice arrived for this all-reduce */
	uint32_t stale_step; /* the highest step named */
};

static float buf[NVAL];
static struct inart_dgram outv[MAXOUT];
static uint8_t outbuf[MAXOUT][INART_DGRAM_MAX];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_worker: %s\n", what);
	abort();
}

static struct inart_worker *make(void)
{
	struct inart_worker_cfg c;
	struct inart_worker *w;
	static const double shares[NT] = {0.5, 0.3, 0.2};

	memset(&c, 0, sizeof(c));
	c.job = JOB;
	c.rank = RANK;
	c.n_workers = NW;
	c.n_trees = NT;
	for (int t = 0; t < NT; t++) {
		c.trees[t].ps_ip = ps_ips[t];
		c.trees[t].label = labels[t];
		c.trees[t].share = shares[t];
	}
	c.values_per_packet = VPP;
	c.window = WIN;
	c.slots = SLOTS;
	c.retx_timeout_ns = RETX_NS;
	w = inart_worker_create(&c);
	if (w == NULL)
		die("create");
	return w;
}

static void model_begin(struct inart_worker *w, struct model *m, uint32_t iter)
{
	size_t end = 0;

	if (inart_worker_begin(w, buf, NVAL, iter) != 0)
		die("begin refused");
	m->iter = iter;
	m->n_done = m->total = 0;
	m->stale = 0;
	memset(m->done, 0, sizeof(m->done));
	memset(m->scale, 127, sizeof(m->scale));
	for (int t = 0; t < NT; t++) {
		if (inart_worker_tree_range(w, t, &m->off[t], &m->len[t], &m->n_chunks[t]) != 0)
			die("tree_range");
		if (m->off[t] != end || m->n_chunks[t] != (m->len[t] + VPP - 1) / VPP ||
		    m->n_chunks[t] > MAXCH)
			die("tree ranges do not cut the buffer into chunks");
		end += m->len[t];
		m->total += m->n_chunks[t];
	}
	if (end != NVAL)
		die("tree ranges do not cover the buffer");
}

static size_t clen(const struct model *m, int t, uint32_t seq)
{
	size_t lo = (size_t)seq * VPP;

	return m->len[t] - lo < VPP ? m->len[t] - lo : VPP;
}

static uint32_t base_of(const struct model *m, int t)
{
	uint32_t s = 0;

	while (s < m->n_chunks[t] && m->done[t][s])
		s++;
	return s;
}

/* The accept rule: 1 if the worker must store this datagram, sent from
 * src_ip:src_port, as a result. */
static int model_rx(struct model *m, const uint8_t *d, size_t len, uint32_t src_ip,
		    uint16_t src_port)
{
	struct inart_wire_hdr h;
	const uint8_t *pl;
	size_t off;

	if (inart_wire_decode(d, len, &h, &pl) != INART_WIRE_OK)
		return 0;
	if (!(h.flags & INART_F_RESULT) || h.job != JOB || h.fan_in != NW || h.bitmap_words != 1 ||
	    h.tree >= NT || src_ip != ps_ips[h.tree] || src_port != INART_WIRE_UDP_PORT ||
	    h.iter != m->iter || h.seq >= m->n_chunks[h.tree])
		return 0;
	if (h.flags & INART_F_STALE) {
		if (h.bitmap[0] >> RANK & 1) {
			if (!m->stale || (int32_t)(h.prev - m->stale_step) > 0)
				m->stale_step = h.prev;
			m->stale = 1;
		}
		return 0;
	}
	if ((h.flags & (INART_F_NACK | INART_F_OVERFLOW)) || m->done[h.tree][h.seq] ||
	    h.bitmap[0] != FULL || h.count != clen(m, h.tree, h.seq))
		return 0;
	off = m->off[h.tree] + (size_t)h.seq * VPP;
	for (int i = 0; i < h.count; i++) {
		int32_t q = (int32_t)inart_get_be32(pl + 4 * i);

		inart_quant_decode(&q, 1, h.scale_exp, &m->res[off + (size_t)i]);
	}
	m->done[h.tree][h.seq] = 1;
	m->n_done++;
	m->results++;
	return 1;
}

static void deliver(struct inart_worker *w, struct model *m, const uint8_t *d, size_t len,
		    uint32_t src_ip, uint16_t src_port, uint64_t now)
{
	struct inart_worker_stats st;
	uint32_t step;
	int take = model_rx(m, d, len, src_ip, src_port),
	    rc = inart_worker_rx(w, d, len, src_ip, src_port, now);

	if (take && rc != 0)
		die("a complete clean result was refused");
	inart_worker_stats(w, &st);
	if (st.results != m->results)
		die("results stored differ from the accept rule");
	if (inart_worker_done(w) != (m->n_done == m->total))
		die("done flag differs from the accept rule");
	if (inart_worker_stale(w, &step) != m->stale || (m->stale && step != m->stale_step))
		die("stale state differs from the step notices received");
}

/* Where a datagram of tree t's PS comes from: its address and port. */
static void deliver_ps(struct inart_worker *w, struct model *m, const uint8_t *d, size_t len,
		       uint64_t now)
{
	struct inart_wire_hdr h;
	const uint8_t *pl;
	int t = 0;

	if (inart_wire_decode(d, len, &h, &pl) == INART_WIRE_OK && h.tree < NT)
		t = h.tree;
	deliver(w, m, d, len, ps_ips[t], INART_WIRE_UDP_PORT, now);
}

/* Check the n datagrams just polled. */
static void check_out(struct model *m, int n, int max_out)
{
	if (n < 0 || n > max_out)
		die("bad output count");
	if (m->stale && n != 0)
		die("a stale all-reduce still sends");
	for (int i = 0; i < n; i++) {
		struct inart_wire_hdr h;
		const uint8_t *pl;
		int32_t q[VPP];
		int probe, rc, t;
		size_t cl;

		if (outv[i].len > INART_DGRAM_MAX)
			die("output datagram too long");
		if (inart_wire_decode(outv[i].data, outv[i].len, &h, &pl) != INART_WIRE_OK)
			die("output does not decode");
		if (!(h.flags & INART_F_DATA) ||
		    (h.flags & ~(INART_F_DATA | INART_F_RETX | INART_F_OVERFLOW | INART_F_NACK)))
			die("output is not a DATA packet");
		if (h.job != JOB || h.fan_in != NW || h.bitmap_words != 1 ||
		    h.bitmap[0] != 1u << RANK || h.iter != m->iter || h.tree >= NT)
			die("output header is not this worker's");
		t = h.tree;
		if (outv[i].peer_ip != ps_ips[t] || outv[i].peer_port != INART_WIRE_UDP_PORT)
			die("output not addressed to the tree's PS");
		if (h.seq >= m->n_chunks[t] || h.seq >= base_of(m, t) + WIN)
			die("output seq outside the tree's window");
		if (m->done[t][h.seq])
			die("output for a chunk whose result the worker holds");
		if (h.slot != h.seq % SLOTS)
			die("output slot is not seq % slots");
		if (h.scale_exp > m->scale[t][h.seq])
			die("chunk scale raised within an all-reduce");
		m->scale[t][h.seq] = h.scale_exp;
		probe = (h.flags & INART_F_NACK) != 0;
		if (probe) {
			if (h.flags != (INART_F_DATA | INART_F_RETX | INART_F_NACK) ||
			    h.count != 0 || h.label != labels[t])
				die("bad probe");
			continue;
		}
		cl = clen(m, t, h.seq);
		if (h.count != cl)
			die("output count is not the chunk's length");
		if (h.label != ((h.flags & (INART_F_RETX | INART_F_OVERFLOW)) ? 0 : labels[t]))
			die("output label");
		rc = inart_quant_encode(buf + m->off[t] + (size_t)h.seq * VPP, cl, h.scale_exp, q);
		if ((rc != 0) != ((h.flags & INART_F_OVERFLOW) != 0))
			die("OVERFLOW mark does not match whether the values fit");
		for (size_t k = 0; k < cl; k++) {
			int32_t v = (int32_t)inart_get_be32(pl + 4 * k);

			if (v != (rc != 0 ? 0 : q[k]))
				die("output values are not the chunk's quantization");
		}
	}
}

static int poll_check(struct inart_worker *w, struct model *m, uint64_t now, int max_out)
{
	uint64_t d = inart_worker_next_deadline(w);
	int n = inart_worker_poll(w, now, outv, max_out);

	if (n > 0 && now < d)
		die("poll sent before next_deadline");
	check_out(m, n, max_out);
	return n;
}

/* A RESULT for this worker from the record's bytes (missing bytes are 0):
 * b[0] flags besides RESULT, b[1] tree (% 4; 3: a tree it does not have;
 * bit 7: sent by a forger, *src the source), b[2]
 * seq (0..9, past every tree's chunks), b[3] scale (16 - b[3] % 24; from
 * 0xf0 on (int8)(b[3] << 4): -128..112 in steps of 16), b[4] prev, b[5] bitmap (0: all ranks, 1:
 * ours, 2: the others, else b[5] & 7), b[6] count (0: the chunk's; NACK: 0), b[7] iter (1: the one
 * before, 2: the next), b[8..] values (big-endian; then a pattern). 0 if the header cannot be
 * encoded. */
static size_t synth(const struct model *m, const uint8_t *d, size_t len, uint8_t *out,
		    uint32_t *src_ip, uint16_t *src_port)
{
	uint8_t b[8] = {0};
	struct inart_wire_hdr h;
	int32_t v[VPP + 8];
	size_t nb = len < 8 ? len : 8;

	memcpy(b, d, nb);
	memset(&h, 0, sizeof(h));
	h.flags =
	    (uint8_t)(INART_F_RESULT | (b[0] & (INART_F_RETX | INART_F_PARTIAL | INART_F_FALLBACK |
						INART_F_OVERFLOW | INART_F_NACK | INART_F_STALE)));
	h.bitmap_words = 1;
	h.scale_exp = (int8_t)(b[3] >= 0xf0 ? (int8_t)(b[3] << 4) : 16 - b[3] % 24);
	h.job = JOB;
	h.tree = (uint16_t)(b[1] % (NT + 1));
	*src_ip = ps_ips[h.tree % NT];
	*src_port = INART_WIRE_UDP_PORT;
	if (b[1] & 0x80) { /* a forger: another tree's PS, or the PS's host on another port */
		if (b[1] & 0x40)
			*src_port = INART_WIRE_UDP_PORT + 1;
		else
			*src_ip = ps_ips[(h.tree + 1) % NT];
	}
	h.fan_in = NW;
	h.iter = m->iter + (b[7] == 1 ? (uint32_t)-1 : b[7] == 2 ? 1u : 0u);
	h.seq = b[2] % (MAXCH + 2u);
	h.slot = (uint16_t)(h.seq % SLOTS);
	h.prev = b[4];
	h.bitmap[0] = b[5] == 0	      ? FULL
		      : b[5] == 1     ? 1u << RANK
		      : b[5] == 2     ? FULL & ~(1u << RANK)
		      : (b[5] & FULL) ? (b[5] & FULL)
				      : FULL;
	if (h.flags & INART_F_NACK)
		h.count = 0;
	else if (b[6] != 0)
		h.count = b[6] % (VPP + 8);
	else if (h.tree < NT && h.seq < m->n_chunks[h.tree])
		h.count = (uint16_t)clen(m, h.tree, h.seq);
	else
		h.count = VPP;
	for (int i = 0; i < h.count; i++) {
		size_t at = 8 + 4 * (size_t)i;

		v[i] = at + 4 <= len ? (int32_t)inart_get_be32(d + at)
				     : (int32_t)((h.seq * 31 + (uint32_t)i) * 40000u) - 70000;
	}
	return inart_wire_encode(&h, v, out, INART_DGRAM_MAX);
}

/* A correct PS's answer to datagram o of the worker: the exact sum of NW
 * workers holding buf (RETX if o is a probe), or an OVERFLOW result when it
 * does not fit int32 at o's scale. */
static void ps_answer(struct inart_worker *w, struct model *m, const struct inart_dgram *o,
		      uint64_t now)
{
	struct inart_wire_hdr h;
	const uint8_t *pl;
	int32_t q[VPP];
	uint8_t pkt[INART_DGRAM_MAX];
	size_t cl, n;
	int ovf;

	if (inart_wire_decode(o->data, o->len, &h, &pl) != INART_WIRE_OK)
		die("output does not decode");
	cl = clen(m, h.tree, h.seq);
	ovf =
	    inart_quant_encode(buf + m->off[h.tree] + (size_t)h.seq * VPP, cl, h.scale_exp, q) != 0;
	for (size_t k = 0; k < cl; k++) {
		int64_t s = (int64_t)q[k] * NW;

		if (s > INT32_MAX || s < -INT32_MAX)
			ovf = 1;
		q[k] = (int32_t)s;
	}
	if (ovf)
		memset(q, 0, sizeof(q));
	h.flags = (uint8_t)(INART_F_RESULT | ((h.flags & INART_F_NACK) ? INART_F_RETX : 0) |
			    (ovf ? INART_F_OVERFLOW : 0));
	h.label = 0;
	h.count = (uint16_t)cl;
	h.prev = 0;
	h.bitmap[0] = FULL;
	n = inart_wire_encode(&h, q, pkt, sizeof(pkt));
	if (n == 0)
		die("encode");
	deliver(w, m, pkt, n, ps_ips[h.tree], INART_WIRE_UDP_PORT, now);
}

/* Act as a correct PS until the all-reduce is done; check the result. */
static void finish(struct inart_worker *w, struct model *m, uint64_t *now)
{
	float got[NVAL];
	int scale;

	if (m->stale && !inart_worker_done(w)) {
		if (inart_worker_poll(w, *now + 1000000000ull, outv, MAXOUT) != 0 ||
		    inart_worker_next_deadline(w) != UINT64_MAX)
			die("a stale all-reduce still sends");
		return;
	}
	for (int round = 0; !inart_worker_done(w); round++) {
		uint64_t d = inart_worker_next_deadline(w);
		int n;

		if (round >= FINISH_POLLS)
			die("not done although a correct PS answered everything");
		if (d == UINT64_MAX)
			die("not done but nothing to wait for");
		if (d > *now)
			*now = d;
		n = poll_check(w, m, *now, MAXOUT);
		for (int i = 0; i < n; i++)
			ps_answer(w, m, &outv[i], *now);
		if (n == 0)
			*now += 1000;
	}
	if (inart_worker_poll(w, *now, outv, MAXOUT) != 0 ||
	    inart_worker_next_deadline(w) != UINT64_MAX)
		die("done but still sending");
	if (inart_worker_result(w, got, NVAL) != 0)
		die("done but no result");
	if (memcmp(got, m->res, sizeof(got)) != 0)
		die("result differs from the accepted result packets");
	for (size_t i = 0; i < NVAL; i++)
		if (inart_worker_value_scale(w, i, &scale) != 0)
			die("value_scale");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_worker *w;
	struct model m;
	uint8_t pkt[INART_DGRAM_MAX];
	uint64_t now = 1000;
	size_t off = 0;
	int rec = 0;

	for (int i = 0; i < MAXOUT; i++)
		outv[i].data = outbuf[i];
	for (int i = 0; i < NVAL; i++)
		buf[i] = (float)(i - 15) * 0.37f + (float)i / 7.0f;
	buf[5] = 40000.0f; /* 40000 * 2^16 > INT32_MAX: a local overflow */
	memset(&m, 0, sizeof(m));
	w = make();
	model_begin(w, &m, ITER0);
	poll_check(w, &m, now, MAXOUT);
	while (off + 3 <= size) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
		int sh = ctl >> 2;

		off += 3;
		if (len > size - off)
			len = size - off;
		if (sh)
			now += (uint64_t)1 << (sh < 40 ? sh : 40);
		if (ctl & 1) {
			uint32_t ip;
			uint16_t port;
			size_t n = synth(&m, data + off, len, pkt, &ip, &port);

			if (n > 0)
				deliver(w, &m, pkt, n, ip, port, now);
		} else {
			deliver_ps(w, &m, data + off, len, now);
		}
		if (!(ctl & 2))
			poll_check(w, &m, now, 1 + rec % MAXOUT);
		off += len;
		rec++;
	}
	finish(w, &m, &now);
	model_begin(w, &m, ITER0 + 1);
	finish(w, &m, &now);
	inart_worker_destroy(w);
	return 0;
}
