/* Tests of shard: steering (seeded random headers: the shard depends on
 * (job, tree, slot) only, a tree's slots spread evenly, every truncation of
 * a frame read without a byte past its end -- the frame ends at a guard
 * page), the sharded core against one core on the same seeded traffic of
 * several trees landing on different shards (the same aggregates, exact
 * sums, counters summed), an install that fails on one shard (injected)
 * leaving every shard as it was, a commit flipping all and a rollback
 * bringing all back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/rng.h"
#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/shard.h"
#include "dp/switch.h"
#include "dp/wire.h"

#define NP 6	  /* ports 0..3: workers; 4: the PS side; 5: unused */
#define NW 4	  /* contributors per tree */
#define NTREES 3  /* trees of job 1 */
#define NSLOTS 16 /* slots per tree */
#define NV 24	  /* values per chunk */
#define MAXOUT 16
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct inart_sw_cfg mk_cfg(void)
{
	struct inart_sw_cfg c;

	memset(&c, 0, sizeof(c));
	c.n_ports = NP;
	for (int p = 0; p < NP; p++) {
		c.ports[p].mac[0] = 2;
		c.ports[p].mac[5] = (uint8_t)p;
		c.ports[p].ip = IP(10, 255, 0, p + 1);
	}
	c.pool_slots = NTREES * NSLOTS;
	c.max_values = NV;
	c.flush_timeout_ns = 1000000;
	return c;
}

/* Aggregating UP entries of trees 0..n_trees-1 (label 100 + t, slots
 * [t * NSLOTS, (t + 1) * NSLOTS)), a route to the PS. */
static struct inart_sw_update mk_update(int n_trees)
{
	static struct inart_label_entry e[NTREES];
	static uint64_t expected = (1u << NW) - 1;
	static struct inart_route rt = {IP(10, 0, 9, 0), 24, 4};
	struct inart_sw_update u;

	memset(e, 0, sizeof(e));
	for (int t = 0; t < n_trees; t++) {
		e[t].label = 100 + (uint32_t)t;
		e[t].kind = INART_LABEL_UP;
		e[t].job = 1;
		e[t].tree = (uint16_t)t;
		e[t].out_port = 4;
		e[t].next_label = 200 + (uint32_t)t;
		e[t].aggregate = 1;
		e[t].slot_base = (uint16_t)(t * NSLOTS);
		e[t].n_slots = NSLOTS;
		e[t].bitmap_words = 1;
		e[t].expected = &expected;
	}
	memset(&u, 0, sizeof(u));
	u.replace = 1;
	u.n_labels = n_trees;
	u.labels = e;
	u.n_routes = 1;
	u.routes = &rt;
	return u;
}

/* Worker `rank`'s contribution to chunk seq of tree t: value i = f(...). */
static int32_t value_of(int t, uint32_t seq, int rank, int i)
{
	return (int32_t)((t + 1) * 100000 + (int)seq * 1000 + rank * 10 + i) * (rank % 2 ? -1 : 1);
}

static size_t contribution(uint8_t *f, int t, uint32_t seq, int rank)
{
	struct inart_wire_hdr h;
	int32_t v[NV];
	uint8_t pl[1600], mac[6] = {2, 0, 0, 0, 0x42, (uint8_t)rank};

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = INART_F_DATA;
	h.bitmap_words = 1;
	h.scale_exp = 16;
	h.job = 1;
	h.tree = (uint16_t)t;
	h.fan_in = NW;
	h.label = 100 + (uint32_t)t;
	h.iter = 1;
	h.seq = seq;
	h.slot = (uint16_t)(seq % NSLOTS);
	h.count = NV;
	h.bitmap[0] = 1ull << rank;
	for (int i = 0; i < NV; i++)
		v[i] = value_of(t, seq, rank, i);
	size_t n = inart_wire_encode(&h, v, pl, sizeof(pl));

	assert_true(n > 0);
	return inart_pkt_build_udp(f, INART_FRAME_MAX, mac, mac, IP(10, 0, 1, 1 + rank),
				   IP(10, 0, 9, 1), 40000, INART_WIRE_UDP_PORT, pl, n);
}

/* ---- steering ---- */

/* A random InArt frame of (job, tree, slot) with random everything else
 * (addresses, IPv4 options, flags, label, seq, values). */
static size_t random_ina(struct inart_rng *r, uint8_t *f, uint32_t job, uint16_t tree,
			 uint16_t slot)
{
	struct inart_wire_hdr h;
	int32_t v[64];
	uint8_t pl[1600], mac[6] = {2, 1, 2, 3, 4, 5};
	int count = (int)(inart_rng_next(r) % 64), opt = (int)(inart_rng_next(r) % 11);
	size_t n, len;

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = inart_rng_next(r) % 2 ? INART_F_DATA : INART_F_RESULT;
	h.bitmap_words = 1;
	h.job = job;
	h.tree = tree;
	h.fan_in = 64;
	h.label = (uint32_t)inart_rng_next(r);
	h.iter = (uint32_t)inart_rng_next(r);
	h.seq = (uint32_t)inart_rng_next(r);
	h.slot = slot;
	h.count = (uint16_t)count;
	h.bitmap[0] = inart_rng_next(r) | 1;
	for (int i = 0; i < count; i++)
		v[i] = (int32_t)inart_rng_next(r);
	n = inart_wire_encode(&h, v, pl, sizeof(pl));
	assert_true(n > 0);
	len = inart_pkt_build_udp(f, INART_FRAME_MAX, mac, mac, (uint32_t)inart_rng_next(r),
				  (uint32_t)inart_rng_next(r), (uint16_t)inart_rng_next(r),
				  INART_WIRE_UDP_PORT, pl, n);
	assert_true(len > 0);
	if (opt > 0) { /* IPv4 options: opt words after the 20-byte header */
		memmove(f + 34 + 4 * opt, f + 34, len - 34);
		memset(f + 34, 1, 4 * (size_t)opt); /* NOPs */
		f[14] = (uint8_t)(0x40 | (5 + opt));
		len += 4 * (size_t)opt;
	}
	return len;
}

static void test_steer_property(void **state)
{
	static uint8_t f[INART_FRAME_MAX], g[INART_FRAME_MAX];
	struct inart_rng r;

	(void)state;
	inart_rng_seed(&r, 24);
	for (int it = 0; it < 20000; it++) {
		uint32_t job = (uint32_t)inart_rng_next(&r);
		uint16_t tree = (uint16_t)inart_rng_next(&r), slot = (uint16_t)inart_rng_next(&r);
		int n = 1 + (int)(inart_rng_next(&r) % INART_SHARD_MAX);
		size_t a = random_ina(&r, f, job, tree, slot),
		       b = random_ina(&r, g, job, tree, slot);
		int k = inart_shard_steer(f, a, n);

		assert_int_equal(k, inart_shard_of_slot(job, tree, slot, n));
		assert_int_equal(inart_shard_steer(g, b, n), k); /* same slot, same shard */
		assert_true(k >= 0 && k < n);
		assert_int_equal(inart_shard_steer(f, a, 1), 0);
	}
}

static void test_steer_spread(void **state)
{
	(void)state;
	/* a tree's window of W slots: W / n on each shard */
	for (int n = 1; n <= 8; n++)
		for (uint16_t tree = 0; tree < 50; tree++) {
			int cnt[8] = {0};

			for (uint16_t s = 0; s < 64 * 105; s++)
				cnt[inart_shard_of_slot(7, tree, s, n)]++;
			for (int k = 0; k < n; k++)
				assert_int_equal(cnt[k], 64 * 105 / n);
		}
	/* trees spread too: the shards of slot 0 of 1000 trees, 2 shards */
	int c0 = 0;

	for (uint16_t tree = 0; tree < 1000; tree++)
		c0 += inart_shard_of_slot(3, tree, 0, 2) == 0;
	assert_true(c0 > 400 && c0 < 600);
}

static void test_steer_other(void **state)
{
	uint8_t f[INART_FRAME_MAX], pl[100] = {0}, mac[6] = {2, 0, 0, 0, 0, 1};
	size_t n;

	(void)state;
	/* plain UDP: by addresses, whatever the ports */
	n = inart_pkt_build_udp(f, sizeof(f), mac, mac, IP(10, 0, 0, 1), IP(10, 0, 0, 2), 5, 6, pl,
				sizeof(pl));
	for (int k = 2; k <= 5; k++) {
		int s = inart_shard_steer(f, n, k);

		assert_int_equal(
		    s, (int)(inart_shard_mix(IP(10, 0, 0, 1), IP(10, 0, 0, 2)) % (uint32_t)k));
		inart_put_be16(f + 36, 999);
		assert_int_equal(inart_shard_steer(f, n, k), s);
		inart_put_be16(f + 36, 6);
	}
	/* ARP and other ethertypes: shard 0 */
	f[12] = 0x08;
	f[13] = 0x06;
	assert_int_equal(inart_shard_steer(f, n, 4), 0);
	assert_int_equal(inart_shard_steer(NULL, 0, 4), 0);
}

/* Every prefix of random frames (InArt or not) steered from a buffer that
 * ends at a PROT_NONE page: a read past the end would fault. */
static void test_steer_truncated(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0),
		*end;
	static uint8_t f[INART_FRAME_MAX];
	struct inart_rng r;

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	end = m + pg;
	inart_rng_seed(&r, 2424);
	for (int it = 0; it < 300; it++) {
		size_t len = random_ina(&r, f, (uint32_t)inart_rng_next(&r),
					(uint16_t)inart_rng_next(&r), (uint16_t)inart_rng_next(&r));

		if (it % 3 == 1) /* garbage in the headers too */
			for (int i = 12; i < 80; i++)
				if (inart_rng_next(&r) % 4 == 0)
					f[i] = (uint8_t)inart_rng_next(&r);
		for (size_t l = 0; l <= len && l <= (size_t)pg; l++) {
			int k;

			memcpy(end - l, f, l);
			k = inart_shard_steer(end - l, l, 3);
			assert_true(k >= 0 && k < 3);
			if (l < len && l < 14 + 20)
				assert_int_equal(k, 0);
		}
	}
	munmap(m, 2 * (size_t)pg);
}

/* ---- the sharded core against one core ---- */

struct agg {
	uint16_t tree;
	uint32_t seq;
	int32_t v[NV];
};

static int agg_cmp(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	return x->tree != y->tree ? x->tree - y->tree : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The aggregates among out[0..n) (appended to a[*na]). */
static void collect(const struct inart_frame *out, int n, struct agg *a, int *na)
{
	for (int i = 0; i < n; i++) {
		struct inart_pkt_info pi;
		struct inart_wire_hdr h;
		const uint8_t *pl;

		assert_int_equal(inart_pkt_parse(out[i].data, out[i].len, &pi), 0);
		assert_int_equal(
		    inart_wire_decode(out[i].data + pi.l4_payload_off, pi.l4_payload_len, &h, &pl),
		    INART_WIRE_OK);
		assert_int_equal(out[i].port, 4);
		assert_int_equal(h.flags & (INART_F_PARTIAL | INART_F_FALLBACK), 0);
		assert_int_equal(h.bitmap[0], (1u << NW) - 1);
		assert_int_equal(h.label, 200 + h.tree);
		a[*na].tree = h.tree;
		a[*na].seq = h.seq;
		for (int k = 0; k < NV; k++)
			a[*na].v[k] = (int32_t)inart_get_be32(pl + 4 * k);
		(*na)++;
	}
}

#define NCHUNK 48 /* per tree: three rounds of the slots */

/* Seeded traffic: every tree's NCHUNK chunks, NW contributions each, in a
 * random order within each round of NSLOTS chunks; through sh. */
static int run_traffic(struct inart_shards *sh, uint64_t seed, struct agg *a)
{
	static uint8_t frames[NTREES * NSLOTS * NW][INART_FRAME_MAX];
	static uint8_t outbuf[MAXOUT][INART_FRAME_MAX];
	struct inart_frame out[MAXOUT];
	size_t len[NTREES * NSLOTS * NW];
	int order[NTREES * NSLOTS * NW], na = 0, nf = NTREES * NSLOTS * NW;
	struct inart_rng r;

	for (int i = 0; i < MAXOUT; i++)
		out[i].data = outbuf[i];
	inart_rng_seed(&r, seed);
	for (int round = 0; round < NCHUNK / NSLOTS; round++) {
		int i = 0;

		for (int t = 0; t < NTREES; t++)
			for (int s = 0; s < NSLOTS; s++)
				for (int w = 0; w < NW; w++, i++) {
					len[i] = contribution(frames[i], t,
							      (uint32_t)(round * NSLOTS + s), w);
					order[i] = i;
				}
		/* a random order that keeps each rank's chunks in order per tree
		 * (one path, in order): shuffle, then sort each (tree, rank)'s
		 * positions back into seq order */
		for (i = nf - 1; i > 0; i--) {
			int j = (int)(inart_rng_next(&r) % (uint64_t)(i + 1)), x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		for (int t = 0; t < NTREES; t++)
			for (int w = 0; w < NW; w++) {
				int pos[NSLOTS], np = 0;

				for (i = 0; i < nf; i++)
					if (order[i] / (NSLOTS * NW) == t && order[i] % NW == w)
						pos[np++] = i;
				for (int s = 0; s < np; s++)
					order[pos[s]] = t * NSLOTS * NW + s * NW + w;
			}
		for (i = 0; i < nf; i++) {
			struct inart_frame in = {frames[order[i]], (uint16_t)len[order[i]],
						 (uint16_t)(order[i] % NW)};
			int n = inart_shards_rx(sh, &in, 1000 + (uint64_t)i, out, MAXOUT);

			collect(out, n, a, &na);
		}
	}
	qsort(a, (size_t)na, sizeof(*a), agg_cmp);
	return na;
}

static struct inart_shards *mk_shards(int n)
{
	struct inart_sw_cfg cfg = mk_cfg();
	struct inart_sw_update u = mk_update(NTREES);
	struct inart_shards *sh = inart_shards_create(&cfg, n);
	struct inart_err why = {{0}};

	assert_non_null(sh);
	assert_int_equal(inart_shards_n(sh), n);
	assert_int_equal(inart_shards_apply(sh, &u, &why), 0);
	return sh;
}

static void test_trees_on_shards_exact(void **state)
{
	static struct agg ref[NTREES * NCHUNK + 1], got[NTREES * NCHUNK + 1];
	struct inart_shards *one = mk_shards(1);
	int nref = run_traffic(one, 7, ref);

	(void)state;
	assert_int_equal(nref, NTREES * NCHUNK);
	/* the sums, exactly */
	for (int i = 0; i < nref; i++)
		for (int k = 0; k < NV; k++) {
			int64_t want = 0;

			for (int w = 0; w < NW; w++)
				want += value_of(ref[i].tree, ref[i].seq, w, k);
			assert_int_equal(ref[i].v[k], (int32_t)want);
		}
	/* slot 0 of the trees lands on different shards with 2 (so does every
	 * other slot: they go round the shards) */
	int seen[2] = {0};

	for (int t = 0; t < NTREES; t++)
		seen[inart_shard_of_slot(1, (uint16_t)t, 0, 2)]++;
	assert_true(seen[0] > 0 && seen[1] > 0);
	for (int n = 2; n <= 4; n++) {
		struct inart_shards *sh = mk_shards(n);
		uint64_t d1[INART_DROP_N], dn[INART_DROP_N], dsum[INART_DROP_N] = {0};
		struct inart_sw_port_stats p1[NP], pn[NP], psum[NP];
		struct inart_sw_tree_stats t1[NTREES], tn[NTREES], tsum[NTREES];

		assert_int_equal(run_traffic(sh, 7, got), nref);
		assert_memory_equal(got, ref, (size_t)nref * sizeof(*ref));
		/* counters: per shard, summed when read, the same as one core's */
		assert_int_equal(inart_shards_stats(one, d1, p1, t1, NTREES), NTREES);
		assert_int_equal(inart_shards_stats(sh, dn, pn, tn, NTREES), NTREES);
		memset(psum, 0, sizeof(psum));
		memset(tsum, 0, sizeof(tsum));
		for (int k = 0; k < n; k++) {
			uint64_t d[INART_DROP_N];
			struct inart_sw_port_stats p[NP];
			struct inart_sw_tree_stats t[NTREES];

			assert_int_equal(
			    inart_switch_stats(inart_shards_core(sh, k), d, p, t, NTREES), NTREES);
			assert_true(t[0].aggregated + t[1].aggregated + t[2].aggregated > 0);
			assert_true(t[0].aggregated < NCHUNK * NW); /* shared out */
			for (int i = 0; i < INART_DROP_N; i++)
				dsum[i] += d[i];
			for (int i = 0; i < NP; i++) {
				psum[i].rx_pkts += p[i].rx_pkts;
				psum[i].tx_bytes += p[i].tx_bytes;
			}
			for (int i = 0; i < NTREES; i++) {
				tsum[i].aggregated += t[i].aggregated;
				tsum[i].emitted += t[i].emitted;
			}
		}
		assert_memory_equal(dn, dsum, sizeof(dn));
		assert_memory_equal(dn, d1, sizeof(dn));
		assert_memory_equal(pn, p1, sizeof(pn));
		for (int i = 0; i < NP; i++) {
			assert_int_equal(pn[i].rx_pkts, psum[i].rx_pkts);
			assert_int_equal(pn[i].tx_bytes, psum[i].tx_bytes);
		}
		for (int i = 0; i < NTREES; i++) {
			assert_int_equal(tn[i].aggregated, tsum[i].aggregated);
			assert_int_equal(tn[i].emitted, tsum[i].emitted);
			assert_int_equal(tn[i].aggregated, NCHUNK * NW);
			assert_int_equal(tn[i].emitted, NCHUNK);
			assert_memory_equal(&tn[i], &t1[i], sizeof(tn[i]));
		}
		inart_shards_destroy(sh);
	}
	inart_shards_destroy(one);
}

/* ---- the install transaction ---- */

static void test_install_rolls_back_on_all(void **state)
{
	struct inart_shards *sh = mk_shards(3);
	const struct inart_sw_tables *before[3];
	struct inart_shard_tables *t = NULL, *old;
	struct inart_sw_update u = mk_update(2); /* replace: trees 0 and 1 only */
	struct inart_err why = {{0}};

	(void)state;
	assert_int_equal(inart_shards_epoch(sh), 1);
	for (int k = 0; k < 3; k++)
		before[k] = inart_switch_tables(inart_shards_core(sh, k));
	/* prepare fails on the last shard: nothing changes anywhere */
	inart_shards_fail_next_build(sh, 2, ENOMEM);
	assert_int_equal(inart_shards_tables_build(sh, &u, &t, &why), -ENOMEM);
	assert_null(t);
	assert_non_null(strstr(why.msg, "shard 2"));
	assert_int_equal(inart_shards_epoch(sh), 1);
	for (int k = 0; k < 3; k++) {
		assert_ptr_equal(inart_switch_tables(inart_shards_core(sh, k)), before[k]);
		assert_int_equal(inart_switch_get_labels(inart_shards_core(sh, k), NULL, 0),
				 NTREES);
	}
	/* the old tables still aggregate every tree on every shard */
	{
		static struct agg a[NTREES * NCHUNK + 1];

		assert_int_equal(run_traffic(sh, 9, a), NTREES * NCHUNK);
	}
	/* a failure on the first shard too */
	inart_shards_fail_next_build(sh, 0, EINVAL);
	assert_int_equal(inart_shards_tables_build(sh, &u, &t, &why), -EINVAL);
	assert_null(strstr(why.msg, "shard"));
	/* an invalid update fails on shard 0 with the core's reason */
	{
		struct inart_sw_update bad = u;
		struct inart_route r = {0, 33, 0};

		bad.n_routes = 1;
		bad.routes = &r;
		assert_int_equal(inart_shards_tables_build(sh, &bad, &t, &why),
				 -EINVAL);
		assert_non_null(strstr(why.msg, "length > 32"));
	}
	/* injected once only: the next prepare succeeds; the commit flips all */
	assert_int_equal(inart_shards_tables_build(sh, &u, &t, &why), 0);
	assert_int_equal(inart_sw_tables_labels(inart_shard_tables_first(t), NULL, 0), 2);
	old = inart_shards_tables_swap(sh, t);
	assert_ptr_equal(old, t); /* the same container, now holding the old sets */
	assert_int_equal(inart_shards_epoch(sh), 2);
	for (int k = 0; k < 3; k++)
		assert_int_equal(inart_switch_get_labels(inart_shards_core(sh, k), NULL, 0), 2);
	assert_ptr_equal(inart_shard_tables_first(old), before[0]);
	/* rollback: all back */
	old = inart_shards_tables_swap(sh, old);
	for (int k = 0; k < 3; k++) {
		assert_ptr_equal(inart_switch_tables(inart_shards_core(sh, k)), before[k]);
		assert_int_equal(inart_switch_get_labels(inart_shards_core(sh, k), NULL, 0),
				 NTREES);
	}
	inart_shard_tables_destroy(old);
	inart_shards_destroy(sh);
}

/* What each shard holds (the daemon's per-shard info): the same digest on
 * every shard, the slots of its regions; a refused install changes neither
 * epoch nor digest anywhere; a commit moves every shard on together; the
 * digest follows the entries, not their order or the counters. */
static void test_shard_info(void **state)
{
	struct inart_shards *sh = mk_shards(2), *other;
	struct inart_shard_info a[2], b[2], c;
	struct inart_sw_update u = mk_update(2);
	struct inart_err why = {{0}};
	static struct agg got[NTREES * NCHUNK + 1];

	(void)state;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(inart_shards_info(sh, k, &a[k]), 0);
		assert_int_equal(a[k].epoch, 1);
		assert_int_equal(a[k].labels, NTREES);
		assert_int_equal(a[k].routes, 1);
		assert_int_equal(a[k].trees, NTREES);
		assert_int_equal(a[k].pool_slots, NTREES * NSLOTS);
		assert_int_equal(a[k].slots_assigned, NTREES * NSLOTS);
		assert_true(a[k].table_bytes > 0);
	}
	assert_true(a[0].digest == a[1].digest && a[0].digest != 0);
	assert_int_equal(inart_shards_info(sh, 2, &c), -EINVAL);
	assert_int_equal(inart_shards_info(sh, -1, &c), -EINVAL);
	/* traffic changes counters and slots, not the digest */
	assert_int_equal(run_traffic(sh, 3, got), NTREES * NCHUNK);
	assert_int_equal(inart_shards_info(sh, 1, &c), 0);
	assert_true(c.digest == a[1].digest);
	/* the same entries given in another order: the same digest */
	{
		struct inart_sw_update r = mk_update(NTREES);
		struct inart_label_entry rev[NTREES];
		struct inart_sw_cfg cfg = mk_cfg();

		for (int i = 0; i < NTREES; i++)
			rev[i] = r.labels[NTREES - 1 - i];
		r.labels = rev;
		other = inart_shards_create(&cfg, 1);
		assert_non_null(other);
		assert_int_equal(inart_shards_apply(other, &r, &why), 0);
		assert_int_equal(inart_shards_info(other, 0, &c), 0);
		assert_true(c.digest == a[0].digest);
		inart_shards_destroy(other);
	}
	/* refused on shard 1: nothing moves */
	inart_shards_fail_next_build(sh, 1, ENOSPC);
	assert_int_equal(inart_shards_apply(sh, &u, &why), -ENOSPC);
	assert_non_null(strstr(why.msg, "shard 1: injected failure"));
	for (int k = 0; k < 2; k++) {
		assert_int_equal(inart_shards_info(sh, k, &b[k]), 0);
		assert_int_equal(b[k].epoch, 1);
		assert_true(b[k].digest == a[k].digest);
	}
	/* then in on both */
	assert_int_equal(inart_shards_apply(sh, &u, &why), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(inart_shards_info(sh, k, &b[k]), 0);
		assert_int_equal(b[k].epoch, 2);
		assert_int_equal(b[k].labels, 2);
		assert_int_equal(b[k].slots_assigned, 2 * NSLOTS);
		assert_true(b[k].digest != a[k].digest);
	}
	assert_true(b[0].digest == b[1].digest);
	inart_shards_destroy(sh);
}

static void test_create_bounds(void **state)
{
	struct inart_sw_cfg cfg = mk_cfg();

	(void)state;
	errno = 0;
	assert_null(inart_shards_create(&cfg, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(inart_shards_create(&cfg, INART_SHARD_MAX + 1));
	cfg.n_ports = 0;
	assert_null(inart_shards_create(&cfg, 2));
	inart_shards_destroy(NULL);
	inart_shard_tables_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_steer_property),
	    cmocka_unit_test(test_steer_spread),
	    cmocka_unit_test(test_steer_other),
	    cmocka_unit_test(test_steer_truncated),
	    cmocka_unit_test(test_trees_on_shards_exact),
	    cmocka_unit_test(test_install_rolls_back_on_all),
	    cmocka_unit_test(test_shard_info),
	    cmocka_unit_test(test_create_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
